r"""Compiled pair steps of ``smo-or`` (numba; the NumPy loop is the fallback).

Why compiled: the NumPy loop of :mod:`conicml.solvers.smo_or` pays ~25 array calls
per pair update (the scores, the threshold bounds, the tied blocks, the partner
scan), ~250 us per update at m = 4 000, while the work is O(n_v) flops; at C = 1000
on noisy levels a solve takes ~10^5 updates. :func:`run` is the same iteration as
``_Loop.state`` + ``_Loop.step`` (the same selection, the same clipped step, the same
updates in the same order) over the active arrays, with the Gram columns held in the
store of ``smo-or``'s column cache (``store[slot_of[j]]`` is the whole column of
point ``j``; ``rows`` are the active points). It returns to Python at the
iterations where the NumPy loop decides something else (convergence, the unshrinking
test, a pair that cannot move: the NumPy iteration redoes them), at ``limit``
(reports, shrinking, the no-progress rule, the iteration cap and the clock stay in
Python), and when it needs a column that is not stored.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .smo_or import TAU as _TAU

__all__ = ["CHECKPOINT", "HAND_BACK", "NEED_COLUMN", "run"]

CHECKPOINT, HAND_BACK, NEED_COLUMN = 0, 1, 2


@njit(cache=True, nogil=True)
def _bounds(a_x, a_sig, a_thr, a_lp, low, up, ga, E, starts, ends, coupled, tie,
            F_low, F_up, b_low, b_up, D, blk, B_low, B_up, lo, hi):  # pragma: no cover
    """``_Loop.state``: F_low / F_up of the variables, the per-threshold bounds, the
    tied blocks (coupled) and B_low / B_up; returns the worst threshold and its
    violation."""
    n_thr = E.shape[0]
    for i in range(a_x.shape[0]):
        f = ga[a_lp[i]] + a_sig[i]
        F_low[i] = f if low[i] else -np.inf
        F_up[i] = f if up[i] else np.inf
    for t in range(n_thr):
        bl, bu = -np.inf, np.inf
        for i in range(starts[t], ends[t]):
            bl = F_low[i] if F_low[i] > bl else bl
            bu = F_up[i] if F_up[i] < bu else bu
        b_low[t], b_up[t] = bl, bu
    if coupled:
        acc = 0.0
        for t in range(n_thr):
            acc += E[t]
            D[t] = acc
        blk[0] = 0
        for t in range(1, n_thr):
            blk[t] = blk[t - 1] + (1 if D[t - 1] <= tie else 0)
        nb = blk[n_thr - 1] + 1
        for b in range(nb):
            lo[b], hi[b] = -np.inf, np.inf
        for t in range(n_thr):
            b = blk[t]
            lo[b] = b_low[t] if b_low[t] > lo[b] else lo[b]
            hi[b] = b_up[t] if b_up[t] < hi[b] else hi[b]
        for b in range(1, nb):
            lo[b] = lo[b - 1] if lo[b - 1] > lo[b] else lo[b]
        for b in range(nb - 2, -1, -1):
            hi[b] = hi[b + 1] if hi[b + 1] < hi[b] else hi[b]
        for t in range(n_thr):
            B_low[t], B_up[t] = lo[blk[t]], hi[blk[t]]
    else:
        for t in range(n_thr):
            blk[t] = t
            B_low[t], B_up[t] = b_low[t], b_up[t]
    worst, violation = 0, B_low[0] - B_up[0]
    for t in range(1, n_thr):
        gap = B_low[t] - B_up[t]
        if gap > violation:  # the first maximiser, as argmax (no NaN here)
            worst, violation = t, gap
    return worst, violation


@njit(cache=True, nogil=True)
def _pick_low(blk, worst, b_low, F_low, starts, ends):  # pragma: no cover - compiled
    """``_ordinal_wss.pick_low``: the variable attaining B_low at ``worst``."""
    k, best = -1, -np.inf
    for t in range(b_low.shape[0]):
        if blk[t] <= blk[worst] and (k < 0 or b_low[t] > best):
            k, best = t, b_low[t]
    lv, top = starts[k], F_low[starts[k]]
    for i in range(starts[k] + 1, ends[k]):
        if F_low[i] > top:
            lv, top = i, F_low[i]
    return lv


@njit(cache=True, nogil=True)
def run(a_x, a_sig, a_thr, a_lp, a_cl, low, up, ga, rows, E, v, diag, store, slot_of,
        stamp, clock, starts, ends, C, tie, tol, coupled, n_iter, limit, near_check,
        best):  # pragma: no cover - compiled
    """Pair steps from iteration ``n_iter`` until ``limit`` or a hand-back.

    Updates the arrays in place (``best = [best violation, its iteration]``); returns
    ``(code, n_iter, column needed)``: :data:`CHECKPOINT` at ``limit``,
    :data:`HAND_BACK` at an iteration the NumPy loop must run (nothing changed in it),
    :data:`NEED_COLUMN` with the point whose column is missing.
    """
    nva, n_thr = a_x.shape[0], E.shape[0]
    F_low, F_up = np.empty(nva), np.empty(nva)
    b_low, b_up, D, B_low, B_up = (np.empty(n_thr), np.empty(n_thr), np.empty(n_thr),
                                   np.empty(n_thr), np.empty(n_thr))
    lo, hi = np.empty(n_thr), np.empty(n_thr)
    blk = np.empty(n_thr, dtype=np.int64)
    while True:
        if n_iter >= limit:
            return CHECKPOINT, n_iter, -1
        worst, violation = _bounds(a_x, a_sig, a_thr, a_lp, low, up, ga, E, starts, ends,
                                   coupled, tie, F_low, F_up, b_low, b_up, D, blk, B_low,
                                   B_up, lo, hi)
        if violation <= tol or not np.isfinite(violation):
            return HAND_BACK, n_iter, -1
        if near_check and violation <= 10.0 * tol:
            return HAND_BACK, n_iter, -1
        if violation < 0.999 * best[0]:
            best[0], best[1] = violation, n_iter
        lv = _pick_low(blk, worst, b_low, F_low, starts, ends)
        jl = a_cl[lv]
        sl = slot_of[jl]
        if sl < 0:
            return NEED_COLUMN, n_iter, jl
        tl = a_thr[lv]
        fl = F_low[lv]
        # the partner: WSS2's second-order gain among the variables that may pair
        uv, top = -1, -np.inf
        blk_l, dl = blk[tl - 1], diag[jl]
        # the variables that may pair are one run of the threshold-sorted arrays: those of
        # threshold tl, or (coupled) of every threshold from tl's tied block on (blk is
        # non-decreasing), so the scan reads only that run
        if coupled:
            t0 = tl
            while t0 > 1 and blk[t0 - 2] >= blk_l:
                t0 -= 1
            i_lo, i_hi = starts[t0 - 1], nva
        else:
            i_lo, i_hi = starts[tl - 1], ends[tl - 1]
        for i in range(i_lo, i_hi):  # the first maximiser over the variables that may pair
            d = F_up[i] - fl
            if not d < 0.0:  # most variables are skipped here: a branch beats a blend
                continue
            j = a_cl[i]
            a_c = dl - 2.0 * store[sl, j] + diag[j]
            score = d * d / (a_c if a_c > _TAU else _TAU)
            if score > top:
                uv, top = i, score
        if uv < 0:
            return HAND_BACK, n_iter, -1
        ju = a_cl[uv]
        su = slot_of[ju]
        if su < 0:
            return NEED_COLUMN, n_iter, ju
        stamp[sl] = clock[0]
        stamp[su] = clock[0] + 1
        clock[0] += 2
        ub = (C - a_x[lv]) if a_sig[lv] > 0 else a_x[lv]
        other = a_x[uv] if a_sig[uv] > 0 else C - a_x[uv]
        ub = other if other < ub else ub
        tu = a_thr[uv]
        if coupled and tl > tu:
            for t in range(tu - 1, tl - 1):
                ub = D[t] if D[t] < ub else ub
        ub = ub if ub > 0.0 else 0.0
        a = diag[jl] - 2.0 * store[sl, ju] + diag[ju] if jl != ju else 0.0
        gain = fl - F_up[uv]
        if a <= _TAU:
            delta = ub
        else:
            delta = gain / a
            delta = ub if ub < delta else delta
        if not delta > 0.0:
            return HAND_BACK, n_iter, -1
        a_x[lv] += a_sig[lv] * delta
        a_x[uv] -= a_sig[uv] * delta
        E[tl - 1] += delta
        E[tu - 1] -= delta
        for var in (lv, uv):
            if a_x[var] < 1e-15 * C:
                a_x[var] = 0.0
            elif a_x[var] > C * (1.0 - 1e-15):
                a_x[var] = C
            if a_sig[var] > 0:
                low[var], up[var] = a_x[var] < C, a_x[var] > 0.0
            else:
                low[var], up[var] = a_x[var] > 0.0, a_x[var] < C
        if jl != ju:
            v[jl] -= delta
            v[ju] += delta
            if ga.shape[0] == store.shape[1]:
                for r in range(ga.shape[0]):
                    ga[r] += delta * (store[su, r] - store[sl, r])
            else:  # a shrunk problem: the active rows of the whole columns
                for r in range(ga.shape[0]):
                    q = rows[r]
                    ga[r] += delta * (store[su, q] - store[sl, q])
        n_iter += 1
