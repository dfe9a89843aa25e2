"""A seeded, class-aware row subsample of a binary data set."""

from __future__ import annotations

import numpy as np

from .._utils.deprecation import renamed_keywords

__all__ = ["subsample"]


@renamed_keywords(seed="random_state")
def subsample(X: np.ndarray, y: np.ndarray, n: int, *, n_minority: int | None = None,
              random_state: int | np.random.Generator | None = 0
              ) -> tuple[np.ndarray, np.ndarray]:
    """At most ``n`` rows of ``(X, y)``, keeping enough of the minority class.

    The minority class keeps ``min(its size, n // 2, max(n_minority, its share of n))``
    rows and the rest are drawn from the other rows, both without replacement; rows keep
    their original order. Data with at most ``n`` rows are returned as they are.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Two classes.
    n : int
        Rows to keep.
    n_minority : int, optional
        Least number of minority rows (default ``n // 4``).
    random_state : int, numpy.random.Generator or None, default=0
        Seed of the draw (``seed`` before this release, still accepted with a
        ``FutureWarning``).

    Returns
    -------
    X_sub, y_sub : ndarray
    """
    y = np.asarray(y)
    if y.size <= n:
        return X, y
    rng = np.random.default_rng(random_state)
    labels, counts = np.unique(y, return_counts=True)
    minority = labels[np.argmin(counts)]
    idx_min, idx_maj = np.flatnonzero(y == minority), np.flatnonzero(y != minority)
    least = n // 4 if n_minority is None else int(n_minority)
    k_min = min(idx_min.size, n // 2, max(least, round(n * idx_min.size / y.size)))
    keep = np.sort(np.concatenate([rng.choice(idx_min, k_min, replace=False),
                                   rng.choice(idx_maj, n - k_min, replace=False)]))
    return X[keep], y[keep]
