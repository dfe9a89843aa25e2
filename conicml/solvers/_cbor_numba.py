r"""Compiled loops of ``cbor-smo`` (optional: need ``numba``, the ``numba`` extra).

Why compiled: a CBOR dual takes thousands of pair updates (more with the smoothing
continuation on a rank-deficient :math:`K`), and the NumPy loop of
:mod:`conicml.solvers.cbor_smo` pays ~40 array calls and the interpreter per update,
although the update itself is :math:`O(d)` (linear path) or :math:`O(k)` (kernel path).
:func:`run` is the NumPy loop with ``method="linear"``, :func:`run_kernel` the one with
``method="kernel"`` (its kernel columns held by the caller); each runs one smoothing stage
and returns to Python when the stage has converged, when the pair admits no step, at the
kink :math:`\rho = 0`, after ``max_steps`` updates, or (kernel path) for a kernel column it
does not hold (stages, the exact re-check, limits, reports and the callback stay in Python).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._cbor_step import move_pair as _move_pair
from ._cbor_step import step as _step

__all__ = ["CONVERGED", "KINK", "NEED_COLUMN", "NO_STEP", "STEPS_DONE", "run", "run_kernel"]

CONVERGED, STEPS_DONE, NO_STEP, KINK, NEED_COLUMN = 0, 1, 2, 3, 4
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


@njit(cache=True, nogil=True)
def _tied_blocks(D, b_low, b_up, blk, lo, hi):  # pragma: no cover - compiled
    """Blocks of tied thresholds (:math:`D_t > 0` ties ``t`` and ``t + 1``) and their running
    bounds (5.4)-(5.5), as ``_ordinal_wss.tie_blocks``; returns the most violated threshold
    (the first of equals) and its violation :math:`B_{low} - B_{up}`."""
    n_thr = b_low.size
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
    return worst, violation


@njit(cache=True, nogil=True, error_model="numpy")
def _stage(D, b_low, b_up, blk, lo, hi, eps, rho, tol, gmax, steps, max_steps,
           out_f):  # pragma: no cover - compiled
    """The worst tied block and the loop's stop: ``CONVERGED`` when its violation meets the
    stage's tolerance (the smoothing stage's ``max(tol, 1e-2 (eps / max(rho, eps))^2
    gmax)``, ``tol`` unsmoothed), ``KINK`` at the unsmoothed kink rho = 0, ``STEPS_DONE``
    after ``max_steps`` updates, else -1 (go on); ``out_f`` gets (violation, rho, stage
    tolerance)."""
    worst, violation = _tied_blocks(D, b_low, b_up, blk, lo, hi)
    stage_tol = tol
    if eps != 0.0:
        ratio = eps / max(rho, eps)
        stage_tol = max(tol, 1e-2 * ratio * ratio * gmax)
    out_f[0] = violation
    out_f[1] = rho
    out_f[2] = stage_tol
    if violation <= stage_tol:
        return worst, CONVERGED
    if eps == 0.0 and rho == 0.0:
        return worst, KINK
    if steps >= max_steps:
        return worst, STEPS_DONE
    return worst, -1


@njit(cache=True, nogil=True)
def _lower_threshold(b_low, blk, worst):  # pragma: no cover - compiled
    """The threshold of a block up to the worst one with the largest B_low (-1: none)."""
    tb = -1
    best = -np.inf
    for t in range(b_low.shape[0]):
        if blk[t] <= blk[worst] and b_low[t] > best:
            best = b_low[t]
            tb = t
    return tb


@njit(cache=True, nogil=True, error_model="numpy")
def _scores_pass(s, scale, x, low, up, cl, sig, dsig, starts, ends, F, D, b_low, b_up, il,
                 iu):  # pragma: no cover - compiled
    r"""One pass over the variables at the scores ``s``: the KKT values
    :math:`F_i = W s_{c(i)} / \rho_\epsilon + \sigma_i d_{c(i)}` (``scale`` is
    :math:`W / \rho_\epsilon`), the partial sums :math:`D_t = \sum_{t(x) \le t} \sigma_x x`
    as one running sum (as the NumPy loop's cumsum), and per threshold the extreme bounds
    (5.3) with the variables attaining them; returns the largest :math:`|g|`."""
    gmax = 0.0
    acc = 0.0
    for t in range(starts.size):
        b_low[t] = -np.inf
        b_up[t] = np.inf
        il[t] = -1
        iu[t] = -1
        for i in range(starts[t], ends[t]):
            acc += sig[i] * x[i]
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
        D[t] = acc
    return gmax


@njit(cache=True, nogil=True)
def _first_order_partner(b_up, iu, blk, worst):  # pragma: no cover - compiled
    """The variable attaining the smallest B_up over the blocks from the worst one on
    (-1: none)."""
    tb = -1
    best = np.inf
    for t in range(b_up.shape[0]):
        if blk[t] >= blk[worst] and b_up[t] < best:
            best = b_up[t]
            tb = t
    return iu[tb] if tb >= 0 else -1


@njit(cache=True, nogil=True)
def _pair_bound(x, sig, thr, D, lv, uv):  # pragma: no cover - compiled
    """The largest step of the pair (l, u) the box and the partial sums allow."""
    ub = (1.0 - x[lv]) if sig[lv] > 0 else x[lv]
    ub = min(ub, x[uv] if sig[uv] > 0 else 1.0 - x[uv])
    for t in range(thr[uv] - 1, thr[lv] - 1):  # D_t decreases for t_u <= t < t_l (a tied block)
        ub = min(ub, D[t])
    return ub


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
        s = np.dot(M, z)  # scores (Kv)_j = mu_j^T z for all j, O(kd), BLAS gemv
        rho = math.sqrt(max(np.dot(z, z), 0.0))
        rho_eff = math.sqrt(rho * rho + eps * eps)
        q = rho_eff * rho_eff  # as the NumPy loop rounds it
        scale = W / rho_eff if rho_eff > 0.0 else 0.0
        gmax = _scores_pass(s, scale, x, low, up, cl, sig, dsig, starts, ends, F, D, b_low,
                            b_up, il, iu)
        worst, code = _stage(D, b_low, b_up, blk, lo, hi, eps, rho, tol, gmax, steps,
                             max_steps, out_f)
        if code >= 0:
            return code, steps
        tb = _lower_threshold(b_low, blk, worst)  # l attains B_low there
        lv = il[tb]
        jl = cl[lv]
        uv = -1
        if second_order:
            # u: the largest second-order decrease among the partners violating with l
            cross_l = np.dot(M, M[jl])  # column jl of K = M M^T, BLAS gemv
            Fl = F[lv]
            bl = blk[thr[lv] - 1]
            best = -1.0
            q15 = q**1.5  # 0 when q underflows: no curvature, every score 0
            for i in range(nv):
                if not up[i] or not F[i] < Fl or blk[thr[i] - 1] < bl:
                    continue
                jc = cl[i]
                if q15 > 0.0:
                    a_c = diag[jl] - 2.0 * cross_l[jc] + diag[jc]
                    b_c = s[jc] - s[jl]
                    curv = W * (a_c * q - b_c * b_c) / q15
                    if not curv > 1e-12:
                        curv = 1e-12
                    score = (F[i] - Fl) ** 2 / curv
                else:
                    score = 0.0
                if score > best:
                    best = score
                    uv = i
        else:
            uv = _first_order_partner(b_up, iu, blk, worst)
        if uv < 0:
            return NO_STEP, steps
        ju = cl[uv]
        ub = _pair_bound(x, sig, thr, D, lv, uv)
        diff = M[jl] - M[ju]
        a = np.dot(diff, diff)
        b = s[ju] - s[jl]
        e = sig[lv] * d[jl] - sig[uv] * d[ju]
        delta = _step_nb(W2 * a, W2 * b, W2 * rho_eff * rho_eff, e, max(ub, 0.0))
        if not delta > 0.0:
            return NO_STEP, steps
        _move_pair_nb(x, low, up, sig, lv, uv, delta)  # snap to the box, update the sets
        if jl != ju:
            v[jl] -= delta
            v[ju] += delta
            for c in range(dim):
                z[c] += delta * (M[ju, c] - M[jl, c])
        steps += 1


@njit(cache=True, nogil=True, error_model="numpy")
def _column(C, slot_of, stamp, clock, j):  # pragma: no cover - compiled
    """Slot of kernel column ``j`` marked most recently used, or -1 if it is not held."""
    slot = slot_of[j]
    if slot >= 0:
        clock[0] += 1
        stamp[slot] = clock[0]
    return slot


@njit(cache=True, nogil=True, error_model="numpy")
def _partner(C, sl, Kv, F, up, cl, thr, blk, starts, diag, jl, lv, W, q):  # pragma: no cover
    r"""The second-order partner of ``lv`` (-1: none), as ``cbor_smo._Loop.pair``: among the
    variables with :math:`F_u < F_l` whose block is at or after that of :math:`l`, the largest
    :math:`(F_u - F_l)^2 / \phi''(0)` (the first of equals), with
    :math:`\phi''(0) = W(aq - b^2)/q^{3/2}` floored at 1e-12, and :math:`+\infty` (score 0)
    when :math:`q^{3/2}` underflows."""
    Fl = F[lv]
    bl = blk[thr[lv] - 1]
    q15 = q**1.5
    best = -np.inf
    uv = -1
    # blocks grow with the threshold and the variables are sorted by it: the partners
    # whose block is at or after that of l are those from the first such threshold on
    t0 = thr[lv] - 1
    while t0 > 0 and blk[t0 - 1] >= bl:
        t0 -= 1
    for i in range(starts[t0], F.size):
        if not up[i] or not F[i] < Fl:
            continue
        jc = cl[i]
        if q15 > 0.0:
            a_c = diag[jl] - 2.0 * C[sl, jc] + diag[jc]
            b_c = Kv[jc] - Kv[jl]
            curv = W * (a_c * q - b_c * b_c) / q15
            if not curv > 1e-12:
                curv = 1e-12
        else:
            curv = np.inf
        score = (F[i] - Fl) ** 2 / curv
        if score > best:
            best = score
            uv = i
    return uv


@njit(cache=True, nogil=True, error_model="numpy")  # IEEE division, as in NumPy
def run_kernel(Kv, C, slot_of, stamp, clock, v, x, low, up, cl, sig, thr, dsig, d, diag,
               starts, ends, W, eps, tol, second_order, max_steps, out_f,
               out_i):  # pragma: no cover - compiled
    r"""The kernel path: up to ``max_steps`` pair updates at smoothing ``eps``.

    Returns ``(code, steps)``; ``out_f`` as in :func:`run`. ``Kv`` (the scores, kept
    incrementally as in the NumPy loop), ``v``, ``x``, ``low``, ``up`` are updated in place.
    Kernel columns come from the caller's slots: ``C[slot_of[j]]`` is column ``j`` of
    :math:`K` (``slot_of[j] = -1``: not held), ``stamp``/``clock`` record their last use.
    A missing column ends the call with ``NEED_COLUMN`` and ``out_i[0] = j`` before anything
    moves; the caller computes it and calls again, which re-evaluates the same point.

    Notes
    -----
    The NumPy kernel loop of :mod:`conicml.solvers.cbor_smo` step for step: the KKT test (5.3)
    over tied blocks on :math:`g = W\,Kv/\sqrt{\rho^2 + \epsilon^2}`, :math:`\rho^2 = v^\top
    Kv`, the pair (the variable attaining :math:`B_{low}` at the most violated threshold,
    the partner by either working-set rule), the bound :math:`ub` and the step A4 ((5.6),
    :func:`conicml.solvers._cbor_step.step`, compiled from the same function), then
    :math:`Kv \mathrel{+}= \delta(K_{:u} - K_{:l})`. Ties go to the first index, as
    ``argmax`` does; the columns are used (and marked) in the NumPy loop's order.
    """
    k = Kv.size
    nv = x.size
    n_thr = starts.size
    s, F, D, b_low, b_up, il, iu, blk, lo, hi = _work_arrays(k, nv, n_thr)
    steps = 0
    while True:
        rho2 = 0.0  # v^T Kv summed in order, as the NumPy loop (cumsum), not by BLAS
        for j in range(k):
            rho2 += v[j] * Kv[j]
        rho = math.sqrt(max(rho2, 0.0))
        rho_eff = math.sqrt(rho * rho + eps * eps)
        scale = W / rho_eff if rho_eff > 0.0 else 0.0
        gmax = _scores_pass(Kv, scale, x, low, up, cl, sig, dsig, starts, ends, F, D, b_low,
                            b_up, il, iu)
        worst, code = _stage(D, b_low, b_up, blk, lo, hi, eps, rho, tol, gmax, steps,
                             max_steps, out_f)
        if code >= 0:
            return code, steps
        tb = _lower_threshold(b_low, blk, worst)
        if tb < 0:
            return NO_STEP, steps
        lv = il[tb]
        jl = cl[lv]
        sl = _column(C, slot_of, stamp, clock, jl)
        if sl < 0:
            out_i[0] = jl
            return NEED_COLUMN, steps
        q = rho_eff * rho_eff
        if second_order:
            uv = _partner(C, sl, Kv, F, up, cl, thr, blk, starts, diag, jl, lv, W, q)
        else:
            uv = _first_order_partner(b_up, iu, blk, worst)
        if uv < 0:
            return NO_STEP, steps
        ju = cl[uv]
        su = _column(C, slot_of, stamp, clock, ju)
        if su < 0:
            out_i[0] = ju
            return NEED_COLUMN, steps
        ub = _pair_bound(x, sig, thr, D, lv, uv)
        a = diag[jl] - 2.0 * C[sl, ju] + diag[ju]
        b = Kv[ju] - Kv[jl]
        e = sig[lv] * d[jl] - sig[uv] * d[ju]
        W2 = W * W
        delta = _step_nb(W2 * a, W2 * b, W2 * rho_eff * rho_eff, e, max(ub, 0.0))
        if not delta > 0.0:
            return NO_STEP, steps
        _move_pair_nb(x, low, up, sig, lv, uv, delta)  # snap to the box, update the sets
        if jl != ju:
            v[jl] -= delta
            v[ju] += delta
            for i in range(k):
                Kv[i] += delta * (C[su, i] - C[sl, i])
            _column(C, slot_of, stamp, clock, ju)  # last used: u, then l (the NumPy order)
            _column(C, slot_of, stamp, clock, jl)
        steps += 1
