r"""Compiled linear path of ``cbor-smo`` (optional: needs ``numba``, the ``numba`` extra).

Why compiled: on a linear CBOR dual the iteration count is in the thousands (the
smoothing continuation on a rank-deficient :math:`K`), and the NumPy loop of
:mod:`conicml.solvers.cbor_smo` pays ~40 array calls and the interpreter per pair update,
whatever the path: the :math:`O(d)` pair update of the linear path only pays off when the
loop around it costs nothing. This is the same algorithm as the NumPy loop with
``method="linear"`` (Notes of :func:`run`), for one smoothing stage. It returns to Python
when the stage has converged, when the pair admits no step, at the kink :math:`\rho = 0`,
or after ``max_steps`` updates (stages, the exact re-check, limits, reports and the
callback stay in Python).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._cbor_step import move_pair as _move_pair
from ._cbor_step import step as _step

__all__ = ["CONVERGED", "KINK", "NO_STEP", "STEPS_DONE", "run"]

CONVERGED, STEPS_DONE, NO_STEP, KINK = 0, 1, 2, 3
_step_nb = njit(cache=True, nogil=True, inline="always", error_model="numpy")(_step)
_move_pair_nb = njit(cache=True, nogil=True, inline="always")(_move_pair)


@njit(cache=True, nogil=True)
def _work_arrays(k, nv, n_thr):  # pragma: no cover - compiled
    """The loop's work arrays: scores (k), KKT values (nv), and per threshold the partial
    sums, the extreme bounds and the variables attaining them, the tied blocks and the
    blocks' running bounds."""
    return (np.empty(k), np.empty(nv), np.empty(n_thr), np.empty(n_thr), np.empty(n_thr),
            np.empty(n_thr, dtype=np.int64), np.empty(n_thr, dtype=np.int64),
            np.empty(n_thr, dtype=np.int64), np.empty(n_thr), np.empty(n_thr))


@njit(cache=True, nogil=True, error_model="numpy")  # IEEE division, as in NumPy
def run(M, z, v, x, low, up, cl, sig, thr, dsig, d, diag, starts, ends, W, eps, tol,
        second_order, max_steps, out_f):  # pragma: no cover - compiled
    r"""Up to ``max_steps`` pair updates at smoothing ``eps``; returns ``(code, steps)``.

    ``out_f``: ``[violation, rho, stage_tol]`` of the last KKT test. ``x``, ``low``,
    ``up`` (uint8), ``v`` and ``z`` are updated in place.

    Notes
    -----
    The threshold KKT test
    (5.3) with tied blocks, the working-set rules, the bound :math:`ub` from the box and the
    partial sums, the closed-form step A4 (:func:`conicml.solvers._cbor_step.step`, compiled
    from the same function), the update :math:`z \mathrel{+}= \delta(\mu_u - \mu_l)` — run
    for one smoothing stage (fixed :math:`\epsilon`). Every score :math:`\mu_j^\top z` is
    recomputed from :math:`z` in each iteration (:math:`O(kd)`, one BLAS product, no drift),
    and so is the row :math:`M\mu_l` the second-order partner scan needs; the partial sums
    :math:`D` from :math:`x`.
    """
    k, dim = M.shape
    nv = x.size
    n_thr = starts.size
    s, F, D, b_low, b_up, il, iu, blk, lo, hi = _work_arrays(k, nv, n_thr)
    W2 = W * W
    steps = 0
    while True:
        # partial sums D_t = sum_{t(x) <= t} sigma_x x
        acc = 0.0
        for t in range(n_thr):
            for i in range(starts[t], ends[t]):
                acc += sig[i] * x[i]
            D[t] = acc
        # scores (Kv)_j = mu_j^T z for all j, O(kd)
        rho2 = 0.0
        for c in range(dim):
            rho2 += z[c] * z[c]
        s = np.dot(M, z)  # BLAS gemv
        rho = math.sqrt(max(rho2, 0.0))
        q = rho * rho + eps * eps
        rho_eff = math.sqrt(q)
        scale = W / rho_eff if rho_eff > 0.0 else 0.0
        gmax = 0.0
        # per-threshold extreme bounds (5.3) and the variables attaining them
        for t in range(n_thr):
            b_low[t] = -np.inf
            b_up[t] = np.inf
            il[t] = -1
            iu[t] = -1
            for i in range(starts[t], ends[t]):
                g = scale * s[cl[i]]
                if abs(g) > gmax:
                    gmax = abs(g)
                f = g + dsig[i]
                F[i] = f
                if low[i] and f > b_low[t]:
                    b_low[t] = f
                    il[t] = i
                if up[i] and f < b_up[t]:
                    b_up[t] = f
                    iu[t] = i
        # blocks of tied thresholds (D_t > 0 ties t and t + 1), running max / min
        blk[0] = 0
        for t in range(1, n_thr):
            blk[t] = blk[t - 1] + (1 if D[t - 1] <= 1e-12 else 0)
        nb = blk[n_thr - 1] + 1
        for b in range(nb):
            lo[b] = -np.inf
            hi[b] = np.inf
        for t in range(n_thr):
            if b_low[t] > lo[blk[t]]:
                lo[blk[t]] = b_low[t]
            if b_up[t] < hi[blk[t]]:
                hi[blk[t]] = b_up[t]
        for b in range(1, nb):
            if lo[b - 1] > lo[b]:
                lo[b] = lo[b - 1]
        for b in range(nb - 2, -1, -1):
            if hi[b + 1] < hi[b]:
                hi[b] = hi[b + 1]
        worst = 0
        violation = -np.inf
        for t in range(n_thr):
            gap = lo[blk[t]] - hi[blk[t]]
            if gap > violation:
                violation = gap
                worst = t
        if eps == 0.0:
            stage_tol = tol
        else:
            ratio = eps / max(rho, eps)
            stage_tol = max(tol, 1e-2 * ratio * ratio * gmax)
        out_f[0] = violation
        out_f[1] = rho
        out_f[2] = stage_tol
        if violation <= stage_tol:
            return CONVERGED, steps
        if eps == 0.0 and rho == 0.0:
            return KINK, steps
        if steps >= max_steps:
            return STEPS_DONE, steps
        # l attains B_low at the worst threshold
        tb = -1
        best = -np.inf
        for t in range(n_thr):
            if blk[t] <= blk[worst] and b_low[t] > best:
                best = b_low[t]
                tb = t
        lv = il[tb]
        jl = cl[lv]
        uv = -1
        if second_order:
            # u: the largest second-order decrease among the partners violating with l
            cross_l = np.dot(M, M[jl])  # column jl of K = M M^T, BLAS gemv
            Fl = F[lv]
            bl = blk[thr[lv] - 1]
            best = -1.0
            q15 = q ** 1.5  # 0 also when q underflows
            wq = W / q15 if q15 > 0.0 else 0.0  # loop invariant
            for i in range(nv):
                if not up[i] or not F[i] < Fl or blk[thr[i] - 1] < bl:
                    continue
                jc = cl[i]
                a_c = diag[jl] - 2.0 * cross_l[jc] + diag[jc]
                b_c = s[jc] - s[jl]
                if q > 0.0:
                    curv = wq * (a_c * q - b_c * b_c)
                    if not curv > 1e-12:
                        curv = 1e-12
                    score = (F[i] - Fl) ** 2 / curv
                else:
                    score = 0.0
                if score > best:
                    best = score
                    uv = i
        else:
            tb = -1
            best = np.inf
            for t in range(n_thr):
                if blk[t] >= blk[worst] and b_up[t] < best:
                    best = b_up[t]
                    tb = t
            uv = iu[tb]
        if uv < 0:
            return NO_STEP, steps
        ju = cl[uv]
        ub = (1.0 - x[lv]) if sig[lv] > 0 else x[lv]
        ub = min(ub, x[uv] if sig[uv] > 0 else 1.0 - x[uv])
        tl, tu = thr[lv], thr[uv]
        for t in range(tu - 1, tl - 1):  # D_t decreases for t_u <= t < t_l (a tied block)
            ub = min(ub, D[t])
        a = 0.0
        for c in range(dim):
            diff = M[jl, c] - M[ju, c]
            a += diff * diff
        b = s[ju] - s[jl]
        e = sig[lv] * d[jl] - sig[uv] * d[ju]
        delta = _step_nb(W2 * a, W2 * b, W2 * q, e, max(ub, 0.0))
        if not delta > 0.0:
            return NO_STEP, steps
        _move_pair_nb(x, low, up, sig, lv, uv, delta)  # snap to the box, update the sets
        if jl != ju:
            v[jl] -= delta
            v[ju] += delta
            for c in range(dim):
                z[c] += delta * (M[ju, c] - M[jl, c])
        steps += 1
