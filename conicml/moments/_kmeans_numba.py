"""The compiled Lloyd-pass sums of the streamed k-means on Dask (needs ``numba``).

The same arithmetic as the NumPy branch of
:func:`conicml.moments.distributed._block_kmeans_sums` (nearest centre by
:math:`\\|c\\|^2 - 2 c^\\top x`, first minimum on ties; count, linear sum and squared
deviation about the assigned centre, summed in row order) in one loop over the rows,
without the ``(k, n)`` distance table or copies of the rows; compiled once and cached on
disk, so a new worker process loads it instead of compiling it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["kmeans_sums"]


@njit(cache=True, nogil=True)
def kmeans_sums(X, y, label, C, N, LS, S):  # pragma: no cover - compiled
    """Add the rows ``X[y == label]`` to ``(N, LS, S)`` of their nearest centres ``C``."""
    n, d = X.shape
    k = C.shape[0]
    cc = np.empty(k)
    for j in range(k):
        s = 0.0
        for t in range(d):
            s += C[j, t] * C[j, t]
        cc[j] = s
    for i in range(n):
        if y[i] != label:
            continue
        best = np.inf
        a = 0
        for j in range(k):
            dot = 0.0
            for t in range(d):
                dot += C[j, t] * X[i, t]
            dist = -2.0 * dot + cc[j]
            if dist < best:
                best = dist
                a = j
        N[a] += 1.0
        s = 0.0
        for t in range(d):
            LS[a, t] += X[i, t]
            dev = X[i, t] - C[a, t]
            s += dev * dev
        S[a] += s
