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

from .._utils.shrinking import shrink_or_project
from ._prefetch import prefetch_csr_row, prefetch_dense_row

__all__ = ["epochs"]

#: Rows fetched ahead of the one being updated (:mod:`conicml.solvers._prefetch`): far
#: enough ahead for a miss to complete during the work on the rows between, near enough
#: for the fetched lines to be still in cache when their row comes.
PREFETCH_AHEAD = 4


@njit(cache=True, nogil=True, inline="always")
def _prefetch_row(sparse, X, data, indices, indptr, i):  # pragma: no cover - compiled
    if sparse:
        prefetch_csr_row(data, indices, indptr, i)
    else:
        prefetch_dense_row(X, i)


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
def epochs(sparse, X, data, indices, indptr, y, U, Dii, QD, xmu, mumu, alpha, w, index,
           state, lin, rho, eps, max_epochs, seed):  # pragma: no cover - compiled
    """Up to ``max_epochs`` passes; ``state`` = [active_size, PGmax_old, PGmin_old, sy, wmu].

    Coordinate descent on the rows :math:`x_i - \\mu` (centred implicitly: ``w`` is
    :math:`u = X^\\top(\\alpha\\circ y)`, ``xmu`` :math:`= X\\mu`, ``mumu``
    :math:`= \\mu^\\top\\mu`, ``wmu`` :math:`= u^\\top\\mu`; :math:`\\mu = 0`: no
    centring). The centred weight is :math:`u - s\\mu` and the gradient of coordinate
    ``i`` is :math:`G_i = y_i(u^\\top x_i - s\\,x_i^\\top\\mu - u^\\top\\mu
    + s\\,\\mu^\\top\\mu + \\lambda + \\rho s) - 1 + D_{ii}\\alpha_i` with
    :math:`s = y^\\top\\alpha` (``lin`` is :math:`\\lambda`; :math:`D_{ii} = 0` and the
    bound :math:`U_i = c_i` for the L1 loss, :math:`D_{ii} = 1/(2c_i)` and
    :math:`U_i = \\infty` for the L2 loss). Returns (epochs run, last spread
    PGmax - PGmin, converged flag).
    """
    # xorshift64* (Vigna 2016) for the shuffles: a tenth of the time of numba's
    # Mersenne-Twister randint, which was ~10 % of an epoch on short sparse rows
    rs = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
    if rs == np.uint64(0):  # the one state xorshift never leaves
        rs = np.uint64(1)
    n = y.shape[0]
    active = int(state[0])
    PGmax_old, PGmin_old, sy, wmu = state[1], state[2], state[3], state[4]
    spread = np.inf
    done = 0
    converged = False
    for _ in range(max_epochs):
        done += 1
        for k in range(active - 1):  # Fisher-Yates shuffle of the active set
            rs ^= rs >> np.uint64(12)
            rs ^= rs << np.uint64(25)
            rs ^= rs >> np.uint64(27)
            r = (rs * np.uint64(0x2545F4914F6CDD1D)) >> np.uint64(11)  # 53 random bits
            j = k + np.int64(r % np.uint64(active - k))
            index[k], index[j] = index[j], index[k]
        PGmax, PGmin = -np.inf, np.inf
        s = 0
        while s < active:
            if s + PREFETCH_AHEAD < active:
                _prefetch_row(sparse, X, data, indices, indptr, index[s + PREFETCH_AHEAD])
            i = index[s]
            yi = y[i]
            f = (_row_dot(sparse, X, data, indices, indptr, i, w) - sy * xmu[i] - wmu
                 + sy * mumu)
            G = yi * (f + lin + rho * sy) - 1.0 + Dii[i] * alpha[i]
            shrink, PG = shrink_or_project(alpha[i], U[i], G, PGmax_old, PGmin_old)
            if shrink:
                active -= 1
                index[s], index[active] = index[active], index[s]
                continue
            PGmax = max(PGmax, PG)
            PGmin = min(PGmin, PG)
            if abs(PG) > 1e-12:
                old = alpha[i]
                new = min(max(old - G / QD[i], 0.0), U[i])
                d = (new - old) * yi
                alpha[i] = new
                _row_axpy(sparse, X, data, indices, indptr, i, d, w)
                wmu += d * xmu[i]
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
    state[0], state[1], state[2], state[3], state[4] = active, PGmax_old, PGmin_old, sy, wmu
    return done, spread, converged
