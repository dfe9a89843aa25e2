r"""A synthetic stand-in for the NDCC data of Tayal 2014, Tables 7.1–7.2.

The thesis uses Thompson's NDCC generator ("normally distributed clusters on
cubes"), which is not available offline. :func:`ndcc_like` builds data of the
same structure, written from its description: Gaussian clusters centred at
vertices of three concentric cubes in the space of the ``n_informative``
features, each cluster with its own random covariance and an uneven number of
points, opposite vertices :math:`\pm v` carrying opposite classes (so no single
feature separates the classes and the labels depend on the informative features
jointly), plus ``n_probes`` independent :math:`N(0, 1)` noise features ("probes").
It is *not* Thompson's generator: numbers obtained with it are comparable with
the thesis's pattern (which methods find the informative set, which end at
saddles), not with its values.
"""

from __future__ import annotations

import numpy as np

from .._utils.deprecation import renamed_keywords

__all__ = ["ndcc_like"]


@renamed_keywords(seed="random_state")
def ndcc_like(
    n_samples: int,
    *,
    n_informative: int = 20,
    n_probes: int = 100,
    n_pairs: int = 4,
    spread: float = 0.35,
    random_state: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``(X, y)``: informative features first, then the probes; labels +1/-1.

    Parameters
    ----------
    n_samples : int
    n_informative : int, default=20
    n_probes : int, default=100
        Noise features appended after the informative ones.
    n_pairs : int, default=4
        Vertex pairs :math:`\\pm v` per cube (three cubes, half-widths 1, 2, 3,
        scaled by :math:`1/\\sqrt{\\texttt{n\\_informative}}`).
    spread : float, default=0.35
        Scale of the random cluster covariances.
    random_state : int, numpy.random.Generator or None, optional
        Seed of :func:`numpy.random.default_rng` (``seed`` before this release, still
        accepted with a ``FutureWarning``).
    """
    if n_samples < 2 or n_informative < 1 or n_probes < 0 or n_pairs < 1:
        raise ValueError("n_samples >= 2, n_informative >= 1, n_probes >= 0, n_pairs >= 1")
    rng = np.random.default_rng(random_state)
    k = n_informative
    centres, labels = [], []
    for radius in (1.0, 2.0, 3.0):
        for _ in range(n_pairs):
            v = radius * rng.choice([-1.0, 1.0], size=k) / np.sqrt(k) * 2.0
            c = rng.choice([-1.0, 1.0])
            centres += [v, -v]
            labels += [c, -c]
    centres_arr = np.array(centres)
    weights = rng.dirichlet(np.full(len(centres), 2.0))  # uneven cluster sizes
    which = rng.choice(len(centres), size=n_samples, p=weights)
    X = np.empty((n_samples, k))
    for j in range(len(centres)):
        idx = np.flatnonzero(which == j)
        if idx.size == 0:
            continue
        A = rng.standard_normal((k, k)) * spread / np.sqrt(k)
        X[idx] = centres_arr[j] + rng.standard_normal((idx.size, k)) @ A.T
    y = np.array(labels)[which]
    if np.unique(y).size < 2:  # degenerate tiny draw: flip one label
        y[0] = -y[0]
    probes = rng.standard_normal((n_samples, n_probes))
    return np.hstack([X, probes]), y
