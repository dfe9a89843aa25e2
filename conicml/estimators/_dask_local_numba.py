"""The compiled local solve of the distributed ``dcd`` (needs ``numba``).

The same loop as :func:`conicml.estimators._dask_linear._local_numpy` (its docstring
has the algorithm); compiled once and cached on disk, so a new worker process loads it
instead of compiling it.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from .._utils.shrinking import shrink_or_project

__all__ = ["local"]


@njit(cache=True, nogil=True)
def _draw(state, m):  # pragma: no cover - compiled
    """SplitMix64: the next state and a draw in ``[0, m)``."""
    state = state + uint64(0x9E3779B97F4A7C15)
    z = (state ^ (state >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return state, int((z ^ (z >> uint64(31))) % uint64(m))


@njit(cache=True, nogil=True)
def local(X, y, c_pos, c_neg, frac, u, dw, index, fstate, istate, rstate, passes, eps,
          lin, rho, sy, sigma, spread):  # pragma: no cover - compiled
    n, d = X.shape
    dsy, pg_max_old, pg_min_old = fstate[0], fstate[1], fstate[2]
    dpos, dneg, visits = fstate[3], fstate[4], fstate[5]
    active = istate[0]
    state = rstate[0]
    done = 0
    while done < passes:
        done += 1
        for s in range(active - 1, 0, -1):
            state, k = _draw(state, s + 1)
            tmp = index[s]
            index[s] = index[k]
            index[k] = tmp
        pg_max, pg_min = -np.inf, np.inf
        ssq, cnt = 0.0, 0
        visits += active
        s = 0
        while s < active:
            i = index[s]
            yi = 1.0 if y[i] > 0 else -1.0
            ci = c_pos if y[i] > 0 else c_neg
            f = 0.0
            for j in range(d):
                f += X[i, j] * u[j]
            G = yi * (f + lin + rho * (sy + sigma * dsy)) - 1.0
            a = np.float64(frac[i]) * ci
            shrink, pg = shrink_or_project(a, ci, G, pg_max_old, pg_min_old)
            if shrink:
                active -= 1
                tmp = index[s]
                index[s] = index[active]
                index[active] = tmp
                continue
            pg_max = max(pg_max, pg)
            pg_min = min(pg_min, pg)
            if pg != 0.0:
                ssq += pg * pg
                cnt += 1
                sq = 0.0
                for j in range(d):
                    sq += X[i, j] * X[i, j]
                new = min(max(a - G / (sigma * (sq + rho)), 0.0), ci)
                stored = np.float32(new / ci)
                frac[i] = stored
                step = np.float64(stored) * ci - a
                if yi > 0.0:
                    dpos += step
                else:
                    dneg += step
                dd = step * yi
                for j in range(d):
                    dw[j] += dd * X[i, j]
                    u[j] += sigma * dd * X[i, j]
                dsy += dd
            s += 1
        if pg_max - pg_min <= eps:
            if active == n:
                istate[1] = 1
                break
            active = n  # converged on the active rows: every row once more
            pg_max_old, pg_min_old = np.inf, -np.inf
            continue
        # the next pass's shrinking thresholds: the extremes capped by the spread
        # (root mean square) of the pass's nonzero projected gradients
        r = spread * np.sqrt(ssq / cnt) if cnt > 0 else np.inf
        pg_max_old = min(pg_max, r) if pg_max > 0.0 else np.inf
        pg_min_old = max(pg_min, -r) if pg_min < 0.0 else -np.inf
    fstate[0], fstate[1], fstate[2], fstate[3], fstate[4] = (dsy, pg_max_old, pg_min_old,
                                                              dpos, dneg)
    fstate[5] = visits
    istate[0] = active
    rstate[0] = state
    return done
