r"""Seeded synthetic data sets of Breiman (1996), "Bias, variance and arcing classifiers".

Both problems are two-class Gaussian problems in :math:`\mathbb{R}^d` with equiprobable
classes. Labels are drawn first, then one standard normal matrix, both from
``numpy.random.default_rng(random_state)``, so a given ``(n, dim, random_state)`` always
yields the same sample and the global NumPy random state is never touched.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._utils.deprecation import renamed_keywords

__all__ = ["ringnorm", "twonorm"]


def _check_int(value: object, name: str, minimum: int) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= minimum``, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _draw(n: int, dim: int, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Draw equiprobable labels in {-1, +1} and an ``(n, dim)`` standard normal matrix."""
    n = _check_int(n, "n", 2)
    dim = _check_int(dim, "dim", 1)
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    Z = rng.standard_normal((n, dim))
    return Z, y


@renamed_keywords(seed="random_state")
def twonorm(n: int = 400, dim: int = 20,
            random_state: int | np.random.Generator | None = 0
            ) -> tuple[np.ndarray, np.ndarray]:
    r"""Sample Breiman's *twonorm* problem.

    Each class is a unit-covariance Gaussian; the two means are opposite points on the
    diagonal:

    .. math::

        P(y = +1) = P(y = -1) = \tfrac12, \qquad
        x \mid y \sim \mathcal{N}\!\left(y\,a\,\mathbf{1}_d,\; I_d\right), \qquad
        a = \frac{2}{\sqrt{d}},

    where :math:`\mathbf{1}_d` is the all-ones vector. The distance between the means is
    :math:`2a\sqrt{d} = 4` for every :math:`d`, so the Bayes error is
    :math:`\Phi(-2) \approx 2.3\%`, reached by the linear rule
    :math:`\operatorname{sign}(\mathbf{1}_d^\top x)`. Breiman uses :math:`d = 20`.

    Parameters
    ----------
    n : int, default=400
        Number of samples, at least 2. The class sizes are random (binomial), so a
        sample may, with probability :math:`2^{1-n}`, contain a single class.
    dim : int, default=20
        Dimension :math:`d`, at least 1.
    random_state : int, numpy.random.Generator or None, default=0
        Seed for :func:`numpy.random.default_rng`; ``None`` draws fresh entropy
        (``seed`` before this release, still accepted with a ``FutureWarning``).

    Returns
    -------
    X : numpy.ndarray of shape (n, dim), dtype float64
        Samples.
    y : numpy.ndarray of shape (n,), dtype float64
        Labels, exactly ``+1.0`` or ``-1.0``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer ``>= 2`` or ``dim`` is not an integer ``>= 1``.

    References
    ----------
    L. Breiman, "Bias, variance, and arcing classifiers", Technical Report 460, Statistics
    Department, University of California, Berkeley, 1996.
    """
    Z, y = _draw(n, dim, random_state)
    a = 2.0 / np.sqrt(Z.shape[1])
    X = Z + (a * y)[:, np.newaxis]
    return X, y


@renamed_keywords(seed="random_state")
def ringnorm(n: int = 400, dim: int = 20,
             random_state: int | np.random.Generator | None = 0
             ) -> tuple[np.ndarray, np.ndarray]:
    r"""Sample Breiman's *ringnorm* problem.

    One class is a wide centred Gaussian, the other a unit Gaussian with a small offset on
    the diagonal:

    .. math::

        P(y = +1) = P(y = -1) = \tfrac12, \qquad
        x \mid y = +1 \sim \mathcal{N}\!\left(\mathbf{0},\; 4 I_d\right), \qquad
        x \mid y = -1 \sim \mathcal{N}\!\left(a\,\mathbf{1}_d,\; I_d\right), \qquad
        a = \frac{1}{\sqrt{d}},

    where :math:`\mathbf{1}_d` is the all-ones vector. The Bayes boundary is quadratic (a
    sphere), so linear rules do poorly. Breiman uses :math:`d = 20`.

    Parameters
    ----------
    n : int, default=400
        Number of samples, at least 2. The class sizes are random (binomial), so a
        sample may, with probability :math:`2^{1-n}`, contain a single class.
    dim : int, default=20
        Dimension :math:`d`, at least 1.
    random_state : int, numpy.random.Generator or None, default=0
        Seed for :func:`numpy.random.default_rng`; ``None`` draws fresh entropy
        (``seed`` before this release, still accepted with a ``FutureWarning``).

    Returns
    -------
    X : numpy.ndarray of shape (n, dim), dtype float64
        Samples.
    y : numpy.ndarray of shape (n,), dtype float64
        Labels, exactly ``+1.0`` or ``-1.0``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer ``>= 2`` or ``dim`` is not an integer ``>= 1``.

    References
    ----------
    L. Breiman, "Bias, variance, and arcing classifiers", Technical Report 460, Statistics
    Department, University of California, Berkeley, 1996.
    """
    Z, y = _draw(n, dim, random_state)
    a = 1.0 / np.sqrt(Z.shape[1])
    X = np.where((y > 0)[:, np.newaxis], 2.0 * Z, Z + a)
    return X, y
