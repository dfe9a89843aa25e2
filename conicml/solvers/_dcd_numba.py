r"""Compiled epochs of ``dcd`` (needs ``numba``; :mod:`conicml.solvers.dcd` has the NumPy twin).

The same algorithm as :func:`conicml.solvers.dcd._epochs_numpy`: Hsieh et al. (ICML 2008)
Algorithm 3, dual coordinate descent over a randomly permuted active set with shrinking,
one coordinate at a time, over dense rows or CSR rows. Returns to Python after
``max_epochs`` passes or when the projected-gradient spread falls below ``eps`` on the
whole set (limits, the bias update and the certificate stay in Python).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["epochs"]


@njit(cache=True, nogil=True, inline="always")
def _row_dot(sparse, X, data, indices, indptr, i, w):  # pragma: no cover - compiled
    s = 0.0
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * w[indices[p]]
    else:
        for j in range(X.shape[1]):
            s += X[i, j] * w[j]
    return s


@njit(cache=True, nogil=True, inline="always")
def _row_axpy(sparse, X, data, indices, indptr, i, a, w):  # pragma: no cover - compiled
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            w[indices[p]] += a * data[p]
    else:
        for j in range(X.shape[1]):
            w[j] += a * X[i, j]


@njit(cache=True, nogil=True)
def epochs(sparse, X, data, indices, indptr, y, U, QD, alpha, w, index, state, lin,
           rho, eps, max_epochs, seed):  # pragma: no cover - compiled
    """Up to ``max_epochs`` passes; ``state`` = [active_size, PGmax_old, PGmin_old, sy].

    The gradient of coordinate ``i`` is :math:`G_i = y_i(w^\\top x_i + \\lambda + \\rho s) - 1`
    with :math:`s = y^\\top\\alpha` (``lin`` is :math:`\\lambda`).
    Returns (epochs run, last spread PGmax - PGmin, converged flag).
    """
    np.random.seed(seed)  # noqa: NPY002 - numba implements the legacy API only
    n = y.shape[0]
    active = int(state[0])
    PGmax_old, PGmin_old, sy = state[1], state[2], state[3]
    spread = np.inf
    done = 0
    converged = False
    for _ in range(max_epochs):
        done += 1
        for k in range(active - 1):  # Fisher-Yates shuffle of the active set
            j = k + np.random.randint(0, active - k)  # noqa: NPY002
            index[k], index[j] = index[j], index[k]
        PGmax, PGmin = -np.inf, np.inf
        s = 0
        while s < active:
            i = index[s]
            yi = y[i]
            G = yi * (_row_dot(sparse, X, data, indices, indptr, i, w) + lin + rho * sy) - 1.0
            PG = 0.0
            if alpha[i] == 0.0:
                if G > PGmax_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if G < 0.0:
                    PG = G
            elif alpha[i] == U[i]:
                if G < PGmin_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if G > 0.0:
                    PG = G
            else:
                PG = G
            PGmax = max(PGmax, PG)
            PGmin = min(PGmin, PG)
            if abs(PG) > 1e-12:
                old = alpha[i]
                new = min(max(old - G / QD[i], 0.0), U[i])
                d = (new - old) * yi
                alpha[i] = new
                _row_axpy(sparse, X, data, indices, indptr, i, d, w)
                sy += d
            s += 1
        spread = PGmax - PGmin
        if spread <= eps:
            if active == n:
                converged = True
                break
            active = n  # converged on the shrunk set: check everything once more
            PGmax_old, PGmin_old = np.inf, -np.inf
            continue
        PGmax_old = PGmax if PGmax > 0.0 else np.inf
        PGmin_old = PGmin if PGmin < 0.0 else -np.inf
    state[0], state[1], state[2], state[3] = active, PGmax_old, PGmin_old, sy
    return done, spread, converged
