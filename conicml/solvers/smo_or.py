r"""``smo-or``: SMO for the dual SVOR (kind ``"qp.chance.svor.dual"``), the thesis's "SMO-OR".

**Problem.** The dual of Chu & Keerthi's support vector ordinal regression
with explicit threshold constraints (ICML 2005; seed 003 eq. 4.1, the
baseline of chapters 4–5), as a minimisation:

.. math::

    \min_{\alpha,\alpha^*}\ \tfrac12 v^\top K v - \textstyle\sum(\alpha + \alpha^*),
    \quad v = \alpha^* - \alpha,
    \quad 0 \le \alpha,\alpha^* \le C,\ D_i := s_i - s^*_i \ge 0\ (i \le r-2),\
    D_{r-1} = 0.

The reported objective is the dual maximum (minus the above), the optimum of
(4.1) — the generic backends report the same number on the same program.

**Optimality** (Chu & Keerthi 2005, §3; seed 003 (5.3)–(5.5) with margin
:math:`d = 1`). With :math:`g = Kv`, each variable :math:`x` has a threshold
:math:`t(x)` (:math:`\alpha`: its rank; :math:`\alpha^*`: its rank - 1), a sign
:math:`\sigma_x` (+1 for :math:`\alpha`, -1 for :math:`\alpha^*`) and
:math:`F_x = g_{p(x)} + \sigma_x`; a variable that can move by
:math:`+\sigma_x` bounds :math:`\theta_{t(x)}` below by :math:`F_x`, one that
can move by :math:`-\sigma_x` bounds it above; thresholds :math:`i, i+1` are
tied when :math:`D_i > 0`. The point is optimal iff, over blocks of tied
thresholds, :math:`B^i_{low} \le B^i_{up}` (the running max / min of the
bounds; :meth:`conicml.contracts.svor.SVORDualData.violation`).

**Iteration.** The maximal violating pair: :math:`l` attains
:math:`B^I_{low}` at the most violated threshold :math:`I`; :math:`u` is the
upper-bound variable, among those that may pair with :math:`l` (threshold
block :math:`\ge` that of :math:`l`) and violate with it, with the largest
second-order decrease :math:`(F_l - F_u)^2/a_{lu}` (WSS2 of Fan, Chen & Lin
2005, JMLR 6:1889, as in LIBSVM). The move :math:`x_l \mathrel{+}= \sigma_l\delta`,
:math:`x_u \mathrel{-}= \sigma_u\delta` keeps :math:`D_{r-1}` and changes
:math:`v` by :math:`\delta(e_u - e_l)`; the objective changes by
:math:`\delta(F_u - F_l) + \tfrac12 a_{lu}\delta^2`,
:math:`a_{lu} = K_{ll} - 2K_{lu} + K_{uu}`, so
:math:`\delta = \min(ub, (F_l - F_u)/a_{lu})` (:math:`ub` when
:math:`a_{lu} \le 10^{-12}`), :math:`ub` the tightest bound from the two boxes
and, when :math:`t(u) < t(l)` (inside a tied block), from the decreasing
:math:`D_i`. :math:`g` is updated with two kernel columns from an LRU cache.
Chu & Keerthi's SMO uses the maximal violating pair; the second-order choice
of the partner is LIBSVM's refinement. No shrinking.

**Start:** :math:`\alpha = \alpha^* = 0` (feasible; violation 2), or ``x0``.

**Stopping criterion.** :math:`\max_i (B^i_{low} - B^i_{up}) \le \texttt{tol}`
(score units; the margin is 1), checked after recomputing :math:`g = Kv` from
scratch. Certificate ``Residuals(primal = max(box, partial sums)/C, dual = the
maximal KKT violation, gap = (P - D)/|P|)``, :math:`P` the primal (4.1) at
:math:`w = \sum_j v_j\phi(x_j)` and its optimal thresholds for that :math:`w`
(weak duality: :math:`P \ge` optimum :math:`\ge D`).
:func:`conicml.solve` recomputes it from the program (the same quantities).

**Warm-start:** supported: ``x0 = (alpha, alpha_star)`` feasible.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from typing import Any

import numpy as np

from ..exceptions import OptionError, SolverError
from ..kinds import SVOR_QP_DUAL
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import IntermediateResult, check_callback, notify
from ._options import check_common
from ._report import IterationReport

__all__ = ["TERMINATION_MESSAGES", "solve_smo_or"]

#: Stop reason -> message.
TERMINATION_MESSAGES: dict[int, str] = {
    0: "converged: maximal KKT violation max_i(B_low^i - B_up^i) <= tol",
    1: "maximum number of iterations reached (max_iter)",
    2: "time limit reached (time_limit)",
    3: "stopped by the callback",
    4: "stalled: the maximal violating pair admits no step (numerical stall)",
}

STATUS_MAP: dict[int, Status] = {0: Status.OPTIMAL, 1: Status.USER_LIMIT,
                                 2: Status.USER_LIMIT, 3: Status.USER_LIMIT,
                                 4: Status.USER_LIMIT}
TAU = 1e-12


class _Report(IterationReport):
    COLUMN_NAMES = ["iter", "violation", "dual obj", "kernel cols", "time [s]"]
    COLUMN_WIDTHS = [10, 12, 16, 12, 10]
    ITERATION_FORMATS = ["^10", "^12.3e", "^16.9g", "^12", "^10.3f"]


class _Columns:
    """LRU cache of Gram columns ``K[:, j]``."""

    def __init__(self, kernel: Any, X: np.ndarray, cache_size: float) -> None:
        self.kernel, self.X, self.n = kernel, X, X.shape[0]
        self.capacity = max(2, int(cache_size * 2**20 // (8 * max(self.n, 1))))
        self._cols: OrderedDict[int, np.ndarray] = OrderedDict()
        self.computed = 0

    def get(self, j: int) -> np.ndarray:
        col = self._cols.get(j)
        if col is not None:
            self._cols.move_to_end(j)
            return col
        col = np.ascontiguousarray(
            np.asarray(self.kernel.columns(self.X, np.array([j])), dtype=float)[:, 0])
        self.computed += 1
        self._cols[j] = col
        if len(self._cols) > self.capacity:
            self._cols.popitem(last=False)
        return col

    def matvec(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.n)
        idx = np.flatnonzero(v)
        step = max(1, (32 * 2**20) // (8 * max(self.n, 1)))
        for s in range(0, idx.size, step):
            block = idx[s:s + step]
            out += np.asarray(self.kernel.columns(self.X, block), dtype=float) @ v[block]
        return out


def _contract(program: Any):
    if getattr(program, "kind", None) != SVOR_QP_DUAL:
        raise SolverError(
            f"solver 'smo-or' accepts programs of kind {SVOR_QP_DUAL!r}, got "
            f"{getattr(program, 'kind', None)!r}; build one with "
            "conicml.formulations.svor_dual.svor_dual(X, y, C=...)")
    data = getattr(program, "data", {})
    if "svor" not in data:
        raise SolverError("smo-or: program data lacks the 'svor' contract (SVORDualData)")
    return data["svor"]


def _check_x0(x0: Any, ranks: np.ndarray, r: int, C: float) -> tuple[np.ndarray, np.ndarray]:
    try:
        alpha, alpha_star = (np.array(a, dtype=float, copy=True) for a in x0)
    except (TypeError, ValueError) as exc:
        raise OptionError("smo-or: x0 must be a pair (alpha, alpha_star)") from exc
    m = ranks.size
    if alpha.shape != (m,) or alpha_star.shape != (m,):
        raise OptionError(f"smo-or: x0 arrays must have shape ({m},)")
    ua, us = C * (ranks < r), C * (ranks > 1)
    box = max(np.max(-alpha), np.max(alpha - ua), np.max(-alpha_star),
              np.max(alpha_star - us), 0.0)
    D = np.array([alpha[ranks <= i].sum() - alpha_star[ranks <= i + 1].sum()
                  for i in range(1, r)])
    viol = max(box, abs(D[-1]), float(np.max(-D[:-1], initial=0.0)))
    if not np.isfinite(viol) or viol > 1e-9 * C * max(1.0, float(m)):
        raise OptionError(
            f"smo-or: x0 is not feasible (violation {viol:.3g}); it must satisfy the box "
            "0 <= alpha, alpha* <= C (alpha = 0 at rank r, alpha* = 0 at rank 1) and the "
            "partial sums s*_i <= s_i, s*_{r-1} = s_{r-1}")
    return np.clip(alpha, 0.0, ua), np.clip(alpha_star, 0.0, us)


def _blocks(b_low: np.ndarray, b_up: np.ndarray, D: np.ndarray, tie: float):
    n_thr = b_low.size
    blk = np.zeros(n_thr, dtype=np.int64)
    for i in range(1, n_thr):
        blk[i] = blk[i - 1] + (0 if D[i - 1] > tie else 1)
    nb = int(blk[-1]) + 1
    lo, hi = np.full(nb, -np.inf), np.full(nb, np.inf)
    np.maximum.at(lo, blk, b_low)
    np.minimum.at(hi, blk, b_up)
    lo = np.maximum.accumulate(lo)
    hi = np.minimum.accumulate(hi[::-1])[::-1]
    return blk, lo[blk], hi[blk]


@register("smo-or", kinds=[SVOR_QP_DUAL], specialized=True, requires=("numpy",),
          compare_options={"tol": 1e-7}, certify_tol=1e-3)
def solve_smo_or(
    program,
    *,
    tol: float = 1e-3,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    cache_size: float = 200.0,
    x0: tuple[np.ndarray, np.ndarray] | None = None,
    callback: Any = None,
) -> Solution:
    r"""SMO-OR: maximal-violating-pair SMO for the SVOR dual (Chu & Keerthi 2005).

    Parameters
    ----------
    program : Program
        Kind ``"qp.chance.svor.dual"``
        (:func:`conicml.formulations.svor_dual.svor_dual`).
    tol : float, default=1e-3
        Stop when :math:`\max_i(B^i_{low} - B^i_{up}) \le \texttt{tol}` (LIBSVM's
        default accuracy; the registry certifies ``OPTIMAL`` at ``1e-3``).
    max_iter : int, optional
        Maximal number of pair updates; default :math:`\max(10^6, 100m)`.
    time_limit : float, optional
        Wall-clock limit in seconds.
    verbose : bool, default=False
        Print a table every :math:`\max(1000, m)` iterations.
    cache_size : float, default=200.0
        Memory bound of the kernel-column cache, in MB.
    x0 : (alpha, alpha_star), optional
        Feasible warm start (raises :class:`OptionError` if infeasible).
    callback : callable, optional
        ``callback(IntermediateResult)`` after every iteration (``values``:
        ``alpha``, ``alpha_star``; ``residual``: the maximal violation);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).

    Returns
    -------
    Solution
        ``objective`` = the dual maximum (= optimum of (4.1)); ``values``
        ``alpha``, ``alpha_star``; ``extras``: ``kkt_violation``,
        ``primal_objective``, ``thresholds`` (midpoints of
        :math:`[B_{low}, B_{up}]`, made monotone), ``kernel_columns``,
        ``stop_reason``.
    """
    t0 = time.perf_counter()
    con = _contract(program)
    X = np.asarray(con.X)
    ranks = np.asarray(con.ranks, dtype=np.int64)
    r, C = int(con.r), float(con.C)
    m = ranks.size
    if max_iter is None:
        max_iter = max(1_000_000, 100 * m)
    check_common("smo-or", tol, max_iter, time_limit, allow_zero=True)
    check_callback("smo-or", callback)
    if not (isinstance(cache_size, (int, float)) and math.isfinite(cache_size)
            and cache_size > 0):
        raise OptionError(f"smo-or: cache_size (MB) must be positive, got {cache_size!r}")
    tol = float(tol)
    if x0 is None:
        alpha, alpha_star = np.zeros(m), np.zeros(m)
    else:
        alpha, alpha_star = _check_x0(x0, ranks, r, C)

    cl, sig, thr = con.layout()
    is_alpha = sig > 0
    x = np.where(is_alpha, alpha[cl], alpha_star[cl])
    starts = np.searchsorted(thr, np.arange(1, r))
    ends = np.append(starts[1:], thr.size)
    cols = _Columns(con.kernel, X, float(cache_size))
    diag = np.asarray(con.kernel.diagonal(X), dtype=float).reshape(-1)
    v = alpha_star - alpha
    g = cols.matvec(v)
    low = np.where(is_alpha, x < C, x > 0.0)
    up = np.where(is_alpha, x > 0.0, x < C)
    tie = 1e-12 * C
    setup_time = time.perf_counter() - t0

    def partial_sums() -> np.ndarray:
        return np.cumsum(np.add.reduceat(sig * x, starts))

    def state():
        F = g[cl] + sig
        Flow = np.where(low, F, -np.inf)
        Fup = np.where(up, F, np.inf)
        b_low = np.maximum.reduceat(Flow, starts)
        b_up = np.minimum.reduceat(Fup, starts)
        D = partial_sums()
        blk, B_low, B_up = _blocks(b_low, b_up, D, tie)
        return Flow, Fup, b_low, D, blk, B_low, B_up

    def dual_value() -> float:
        return float(x.sum()) - 0.5 * float(v @ g)

    n_iter, reason = 0, -1
    refreshed = True
    every = max(1000, m)
    if verbose:
        print(f"smo-or: m = {m}, r = {r}, C = {C:g}, tol = {tol:g}")
        _Report.print_header()
    while True:
        Flow, Fup, b_low, D, blk, B_low, B_up = state()
        gaps = B_low - B_up
        worst = int(np.argmax(gaps))
        violation = float(gaps[worst])
        if verbose and n_iter % every == 0:
            _Report.print_iteration(n_iter, violation, dual_value(), cols.computed,
                                    time.perf_counter() - t0)
        if violation <= tol:
            if not refreshed:
                g = cols.matvec(v)  # remove drift, then re-check
                refreshed = True
                continue
            reason = 0
            break
        if n_iter >= max_iter:
            reason = 1
            break
        if time_limit is not None and time.perf_counter() - t0 - setup_time > time_limit:
            reason = 2
            break
        cand_low = np.flatnonzero(blk <= blk[worst])
        kl = int(cand_low[np.argmax(b_low[cand_low])])
        lv = int(starts[kl] + np.argmax(Flow[starts[kl]:ends[kl]]))
        jl = int(cl[lv])
        Kl = cols.get(jl)
        slope = Fup - Flow[lv]
        cand = np.flatnonzero((slope < 0) & (blk[thr - 1] >= blk[thr[lv] - 1]))
        cu = cl[cand]
        a_c = diag[jl] - 2.0 * Kl[cu] + diag[cu]
        a_c = np.where(a_c > TAU, a_c, TAU)
        uv = int(cand[np.argmax(slope[cand] ** 2 / a_c)])
        ju = int(cl[uv])
        ub = (C - x[lv]) if sig[lv] > 0 else x[lv]
        ub = min(ub, x[uv] if sig[uv] > 0 else C - x[uv])
        tl, tu = int(thr[lv]), int(thr[uv])
        if tl > tu:  # D_i decreases for t_u <= i < t_l (inside a tied block)
            ub = min(ub, float(np.min(D[tu - 1:tl - 1])))
        ub = max(ub, 0.0)
        Ku = cols.get(ju)
        a = diag[jl] - 2.0 * Kl[ju] + diag[ju] if jl != ju else 0.0
        gain = Flow[lv] - Fup[uv]
        delta = ub if a <= TAU else min(ub, gain / a)
        if not delta > 0.0:
            if not refreshed:
                g = cols.matvec(v)
                refreshed = True
                continue
            reason = 4
            break
        x[lv] += sig[lv] * delta
        x[uv] -= sig[uv] * delta
        for var in (lv, uv):  # snap to the box, update the bound sets
            if x[var] < 1e-15 * C:
                x[var] = 0.0
            elif x[var] > C * (1.0 - 1e-15):
                x[var] = C
            low[var] = x[var] < C if sig[var] > 0 else x[var] > 0.0
            up[var] = x[var] > 0.0 if sig[var] > 0 else x[var] < C
        if jl != ju:
            v[jl] -= delta
            v[ju] += delta
            g += delta * (Ku - Kl)
        n_iter += 1
        refreshed = False
        if callback is not None:
            a_now, s_now = np.zeros(m), np.zeros(m)
            a_now[cl[is_alpha]] = x[is_alpha]
            s_now[cl[~is_alpha]] = x[~is_alpha]
            info = IntermediateResult(
                iteration=n_iter, objective=dual_value(), residual=violation,
                elapsed=time.perf_counter() - t0,
                values={"alpha": a_now, "alpha_star": s_now}, extras={"pair": (jl, ju)})
            if notify(callback, info):
                reason = 3
                break
    solve_time = time.perf_counter() - t0 - setup_time

    alpha, alpha_star = np.zeros(m), np.zeros(m)
    alpha[cl[is_alpha]] = x[is_alpha]
    alpha_star[cl[~is_alpha]] = x[~is_alpha]
    v = alpha_star - alpha
    if not refreshed:
        g = cols.matvec(v)
    Flow, Fup, b_low, D, blk, B_low, B_up = state()
    violation = max(float(np.max(B_low - B_up)), 0.0)
    lo = np.where(np.isfinite(B_low), B_low, B_up)
    hi = np.where(np.isfinite(B_up), B_up, B_low)
    theta = np.maximum.accumulate(0.5 * (lo + hi))
    dual_obj = dual_value()
    ia, is_ = np.flatnonzero(ranks < r), np.flatnonzero(ranks > 1)
    loss = (np.maximum(0.0, g[ia] + 1.0 - theta[ranks[ia] - 1]).sum()
            + np.maximum(0.0, theta[ranks[is_] - 2] - g[is_] + 1.0).sum())
    primal_obj = 0.5 * float(v @ g) + C * float(loss)
    feas = max(abs(float(D[-1])), float(np.max(-D[:-1], initial=0.0)), 0.0) / (C * m)
    gap = (primal_obj - dual_obj) / max(abs(primal_obj), abs(dual_obj), 1e-300)
    message = TERMINATION_MESSAGES[reason]
    if verbose:
        print(f"\nsmo-or: {message}")
        print(f"smo-or: dual objective {dual_obj:.10g}, relative gap {gap:.3e}, "
              f"{n_iter} iterations, {cols.computed} kernel columns")
    return Solution(
        status=STATUS_MAP[reason],
        solver="smo-or",
        objective=dual_obj,
        values={"alpha": alpha, "alpha_star": alpha_star},
        iterations=n_iter,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=feas, dual=violation, gap=gap, source="solver"),
        message=f"smo-or: {message}",
        extras={
            "kkt_violation": violation,
            "thresholds": theta,
            "primal_objective": primal_obj,
            "kernel_columns": cols.computed,
            "stop_reason": reason,
        },
    )
