r"""``smo-or``: SMO for the dual SVOR, the thesis's "SMO-OR", explicit and implicit constraints.

Kinds ``"qp.chance.svor.dual"`` (explicit thresholds, seed 003 eq. 4.1) and
``"qp.chance.svor.implicit.dual"`` (implicit constraints, Chu & Keerthi 2005, 2007,
:mod:`conicml.formulations.svor_implicit`). The explicit variant is described
first; the implicit one differs only where said below.

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

It stops at a maximal KKT violation :math:`\le` ``tol``; optimality, iteration, implicit
constraints, shrinking, start and certificate: the Notes of :func:`solve_smo_or`.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np

from ..exceptions import OptionError, SolverError
from ..kinds import SVOR_QP_DUAL, SVORIM_QP_DUAL
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._driver import Driver, Reason, message_table, status_table
from ._options import check_cache_size, load_engine
from ._ordinal_wss import (
    midpoint_thresholds,
    partner_mask,
    pick_low,
    segment_bounds,
    violation_blocks,
)
from ._report import IterationReport
from ._warm import svor_pair

__all__ = ["TERMINATION_MESSAGES", "solve_smo_or"]

#: Stop reason -> message.
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: maximal KKT violation max_i(B_low^i - B_up^i) <= tol",
    {Reason.STALLED: "stalled: the maximal violating pair admits no step (numerical stall)",
     5: "no progress: the maximal KKT violation has not decreased over the last "
        "20 max(1000, 10 m) pair steps"},
)
NO_PROGRESS = 5  # the no-progress rule (below) fired twice

STATUS_MAP: dict[int, Status] = status_table({NO_PROGRESS: Status.USER_LIMIT})
TAU = 1e-12
KINDS = (SVOR_QP_DUAL, SVORIM_QP_DUAL)


class _Report(IterationReport):
    COLUMN_NAMES = ["iter", "violation", "dual obj", "active", "kernel cols", "time [s]"]
    COLUMN_WIDTHS = [10, 12, 16, 10, 12, 10]
    ITERATION_FORMATS = ["^10", "^12.3e", "^16.9g", "^10", "^12", "^10.3f"]


class _Columns:
    """Cache of whole Gram columns ``K[:, j]``, least recently used out:
    ``store[slot_of[j]]`` is the column of point ``j`` (``-1``: not stored), ``stamp``
    the last use of each slot (a store the compiled loop reads as well). Columns are
    kept whole while shrinking sets points aside, so a shrink or an unshrink moves no
    column (the loop reads the active rows through its row indices)."""

    def __init__(self, kernel: Any, X: np.ndarray, cache_size: float,
                 gram: np.ndarray | None = None) -> None:
        self.kernel, self.X, self.n = kernel, X, X.shape[0]
        self.computed = 0
        self.clock = np.zeros(1, dtype=np.int64)
        if gram is not None:  # the program's Gram matrix: every column stored, none computed
            # row j of the symmetric matrix is column j: a C-ordered store either way
            self.store = gram.T if gram.flags.f_contiguous else np.ascontiguousarray(gram)
            self.slot_of = np.arange(self.n, dtype=np.int64)
            self.col_of = self.slot_of.copy()
            self.stamp = np.zeros(self.n, dtype=np.int64)
            self.free, self.whole = 0, True
            return
        self.whole = False
        self.sq = np.einsum("ij,ij->i", X, X)
        # never more slots than points: a column per point at most
        capacity = min(self.n, max(2, int(float(cache_size) * 2**20 / 8.0 // self.n)))
        self.store = np.empty((capacity, self.n))
        self.col_of = np.full(capacity, -1, dtype=np.int64)
        self.stamp = np.zeros(capacity, dtype=np.int64)
        self.slot_of = np.full(self.n, -1, dtype=np.int64)
        self.free = capacity  # slots [capacity - free, capacity) never used yet

    def get(self, j: int) -> np.ndarray:
        slot = int(self.slot_of[j])
        if slot < 0:
            col = self.kernel.columns(self.X, np.array([j]), sq=self.sq)
            if self.free:
                slot = self.col_of.size - self.free
                self.free -= 1
            else:
                slot = int(np.argmin(self.stamp))
                self.slot_of[self.col_of[slot]] = -1
            self.store[slot] = col[:, 0]
            self.col_of[slot], self.slot_of[j] = j, slot
            self.computed += 1
        self.stamp[slot] = self.clock[0]
        self.clock[0] += 1
        return self.store[slot]

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """:math:`Kv`: the stored columns' part by one product with the store, the others
        computed in blocks (not stored)."""
        if self.whole:
            return self.store @ v
        idx = np.flatnonzero(v)
        stored = self.slot_of[idx] >= 0
        used = self.col_of.size - self.free
        weights = np.zeros(used)
        weights[self.slot_of[idx[stored]]] = v[idx[stored]]
        out = weights @ self.store[:used]
        idx = idx[~stored]
        step = max(1, (32 * 2**20) // (8 * max(self.n, 1)))
        for s in range(0, idx.size, step):
            block = idx[s:s + step]
            out += np.asarray(self.kernel.columns(self.X, block), dtype=float) @ v[block]
        return out


def _contract(program: Any):
    kind = getattr(program, "kind", None)
    if kind not in KINDS:
        raise SolverError(
            f"solver 'smo-or' accepts programs of kind {SVOR_QP_DUAL!r} or "
            f"{SVORIM_QP_DUAL!r}, got {kind!r}; build one with "
            "conicml.formulations.svor_dual.svor_dual(X, y, C=...) (explicit thresholds) or "
            "conicml.formulations.svor_implicit.svorim_dual(X, y, C=...) (implicit)")
    data = getattr(program, "data", {})
    if "svor" not in data:
        raise SolverError("smo-or: program data lacks the 'svor' contract "
                          "(SVORDualData / SVORIMDualData)")
    return data["svor"]


def _equalities(sig: np.ndarray, thr: np.ndarray, x: np.ndarray, n_thr: int) -> np.ndarray:
    """Per-threshold sums E_t = sum_{t(x) = t} sigma_x x (length r - 1)."""
    return np.bincount(thr - 1, weights=sig * x, minlength=n_thr)


def _infeasibility(E: np.ndarray, coupled: bool) -> float:
    if coupled:  # D_i >= 0 (i < r-1), D_{r-1} = 0
        D = np.cumsum(E)
        return max(abs(float(D[-1])), float(np.max(-D[:-1], initial=0.0)), 0.0)
    return float(np.max(np.abs(E)))  # one equality per threshold


def _check_x0(x0: Any, con: Any, C: float, m: int) -> np.ndarray:
    try:
        alpha, alpha_star = (np.array(a, dtype=float, copy=True) for a in x0)
    except (TypeError, ValueError) as exc:
        raise OptionError("smo-or: x0 must be a pair (alpha, alpha_star)") from exc
    shape = (m,) if con.coupled else (m, con.r - 1)
    if alpha.shape != shape or alpha_star.shape != shape:
        raise OptionError(f"smo-or: x0 arrays must have shape {shape}")
    x = con.pack(alpha, alpha_star)
    a2, s2 = con.unpack(x)
    _, sig, thr = con.layout()
    viol = max(float(np.max(np.abs(a2 - alpha))), float(np.max(np.abs(s2 - alpha_star))),
               float(np.max(-x)), float(np.max(x - C)),
               _infeasibility(_equalities(sig, thr, x, con.r - 1), con.coupled))
    if not np.isfinite(viol) or viol > 1e-9 * C * max(1.0, float(m)):
        rule = ("partial sums s*_i <= s_i, s*_{r-1} = s_{r-1}" if con.coupled
                else "per-threshold balance sum_p alpha^j_p = sum_p alpha*^j_p")
        raise OptionError(
            f"smo-or: x0 is not feasible (violation {viol:.3g}); it must satisfy the box "
            f"0 <= alpha, alpha* <= C (entries that do not exist at 0) and the {rule}")
    return np.clip(x, 0.0, C)


class _Loop:
    """SMO-OR's state: the point ``x``, ``v`` and ``g = K v``, and the active problem
    (every variable until shrinking sets some aside; arrays sorted by threshold; points
    are local indices into ``rows``)."""

    def __init__(self, con: Any, x: np.ndarray, cols: _Columns, diag: np.ndarray,
                 driver: Driver, shrinking: bool, setup_time: float, nb: Any = None) -> None:
        self.con, self.x, self.cols, self.diag, self.driver = con, x, cols, diag, driver
        self.nb = nb  # the compiled pair steps (_smo_or_numba), or None
        self.coupled, self.r, self.C = bool(con.coupled), int(con.r), float(con.C)
        self.m = m = np.asarray(con.ranks).size
        self.n_thr = self.r - 1
        self.cl, self.sig, self.thr = cl, sig, thr = con.layout()
        self.nv = nv = cl.size
        self.shrinking, self.setup_time = shrinking, setup_time
        self.v = np.bincount(cl, weights=-sig * x, minlength=m)
        self.g = cols.matvec(self.v)
        self.tie = 1e-12 * self.C
        self.act, self.rows = np.arange(nv), np.arange(m)
        self.E = _equalities(sig, thr, x, self.n_thr)  # per-threshold sums, kept per move
        self.a_cl, self.a_sig, self.a_thr, self.a_lp = cl, sig, thr, cl.copy()
        self.a_x = x.copy()
        self.low = np.where(sig > 0, x < self.C, x > 0.0)
        self.up = np.where(sig > 0, x > 0.0, x < self.C)
        self.ga = self.g.copy()
        self.n_iter, self.refreshed, self.unshrunk_near = 0, True, False
        self.shrink_events = self.unshrink_events = 0
        self.min_active = nv

    def activate(self, new_act: np.ndarray) -> None:
        """Make ``new_act`` the active problem (its points: ``rows``)."""
        C, x = self.C, self.x
        x[self.act] = self.a_x
        self.g[self.rows] = self.ga
        self.act = new_act
        self.rows = np.unique(self.cl[new_act])
        self.a_cl, self.a_sig, self.a_thr = self.cl[new_act], self.sig[new_act], \
            self.thr[new_act]
        self.a_lp = np.searchsorted(self.rows, self.a_cl)
        self.a_x = a_x = x[new_act].copy()
        self.low = np.where(self.a_sig > 0, a_x < C, a_x > 0.0)
        self.up = np.where(self.a_sig > 0, a_x > 0.0, a_x < C)
        self.E = _equalities(self.sig, self.thr, x, self.n_thr)  # exact again (no drift)
        self.ga = self.g[self.rows].copy()

    def unshrink(self) -> None:
        """Every variable back in, g = K v recomputed on all points (also removes drift)."""
        self.x[self.act] = self.a_x
        self.act = np.arange(self.nv)
        self.a_x = self.x.copy()
        self.rows = np.arange(self.m)
        self.v = np.bincount(self.cl, weights=-self.sig * self.x, minlength=self.m)
        self.g = self.cols.matvec(self.v)
        self.ga = self.g.copy()
        self.activate(self.act)

    def state(self) -> tuple:
        F = self.ga[self.a_lp] + self.a_sig
        Flow = np.where(self.low, F, -np.inf)
        Fup = np.where(self.up, F, np.inf)
        b_low, b_up, starts, ends = segment_bounds(Flow, Fup, self.a_thr, self.n_thr)
        D = np.cumsum(self.E) if self.coupled else None
        blk, B_low, B_up = violation_blocks(b_low, b_up, D, self.tie)
        return F, Flow, Fup, b_low, starts, ends, D, blk, B_low, B_up

    def dual_value(self) -> float:
        self.x[self.act] = self.a_x
        return (float(self.x.sum()) - 0.5 * float(self.v @ self.g) if self.act.size == self.nv
                else float("nan"))

    def pair(self, Flow, Fup, b_low, starts, ends, blk, worst) -> tuple[int, int, np.ndarray]:
        """l attains B_low at the worst threshold (and its column); u maximises the
        second-order gain among its partners (-1: none, impossible at a positive
        violation)."""
        lv = pick_low(blk, worst, b_low, Flow, starts, ends)
        jl = int(self.a_cl[lv])
        Kl = self.cols.get(jl)
        cand = np.flatnonzero(partner_mask(Fup, float(Flow[lv]), self.a_thr,
                                           int(self.a_thr[lv]), blk, self.coupled))
        if cand.size == 0:
            return lv, -1, Kl
        a_c = self.diag[jl] - 2.0 * Kl[self.a_cl[cand]] + self.diag[self.a_cl[cand]]
        a_c = np.where(a_c > TAU, a_c, TAU)
        return lv, int(cand[np.argmax((Fup[cand] - Flow[lv]) ** 2 / a_c)]), Kl

    def step(self, sel: tuple, worst: int) -> tuple[bool, int, int]:
        """One pair update; (moved, jl, ju)."""
        F, Flow, Fup, b_low, starts, ends, D, blk, B_low, B_up = sel
        a_x, a_sig, a_thr, C = self.a_x, self.a_sig, self.a_thr, self.C
        lv, uv, Kl = self.pair(Flow, Fup, b_low, starts, ends, blk, worst)
        jl, tl = int(self.a_cl[lv]), int(a_thr[lv])
        if uv < 0:
            return False, jl, -1
        ju = int(self.a_cl[uv])
        ub = (C - a_x[lv]) if a_sig[lv] > 0 else a_x[lv]
        ub = min(ub, a_x[uv] if a_sig[uv] > 0 else C - a_x[uv])
        tu = int(a_thr[uv])
        if self.coupled and tl > tu:  # D_i decreases for t_u <= i < t_l (a tied block)
            ub = min(ub, float(np.min(D[tu - 1:tl - 1])))
        ub = max(ub, 0.0)
        Ku = self.cols.get(ju)
        a = self.diag[jl] - 2.0 * Kl[ju] + self.diag[ju] if jl != ju else 0.0
        gain = Flow[lv] - Fup[uv]
        delta = ub if a <= TAU else min(ub, gain / a)
        if not delta > 0.0:
            return False, jl, ju
        a_x[lv] += a_sig[lv] * delta
        a_x[uv] -= a_sig[uv] * delta
        self.E[tl - 1] += delta  # sigma_l^2 delta at t(l), -sigma_u^2 delta at t(u)
        self.E[tu - 1] -= delta
        for var in (lv, uv):  # snap to the box, update the bound sets
            if a_x[var] < 1e-15 * C:
                a_x[var] = 0.0
            elif a_x[var] > C * (1.0 - 1e-15):
                a_x[var] = C
            self.low[var] = a_x[var] < C if a_sig[var] > 0 else a_x[var] > 0.0
            self.up[var] = a_x[var] > 0.0 if a_sig[var] > 0 else a_x[var] < C
        if jl != ju:
            self.v[jl] -= delta
            self.v[ju] += delta
            rows = self.rows
            self.ga += delta * ((Ku - Kl) if rows.size == self.m else (Ku[rows] - Kl[rows]))
        return True, jl, ju

    def _checkpoint(self, every: int, window: int, shrink_every: int) -> int:
        """The next iteration the NumPy loop runs itself: a report, the no-progress and
        shrinking tests, the iteration cap, and every 1 000 steps the clock."""
        n = self.n_iter
        periods = [1000, window] + [shrink_every] * self.shrinking + \
            [every] * (self.driver.report is not None)
        return min([-(-n // k) * k for k in periods] + [self.driver.max_iter])

    def _compiled(self, limit: int, best: np.ndarray) -> tuple[int, int]:
        """Compiled pair steps up to ``limit`` (:func:`conicml.solvers._smo_or_numba.run`)."""
        starts = np.searchsorted(self.a_thr, np.arange(1, self.n_thr + 1))
        ends = np.append(starts[1:], self.a_thr.size)
        cols = self.cols
        near = self.shrinking and not self.unshrunk_near and self.act.size < self.nv
        code, n_iter, need = self.nb.run(
            self.a_x, self.a_sig, self.a_thr, self.a_lp, self.a_cl, self.low, self.up,
            self.ga, self.rows, self.E, self.v, self.diag, cols.store, cols.slot_of,
            cols.stamp, cols.clock, starts, ends, self.C, self.tie, self.driver.tol, self.coupled,
            self.n_iter, limit, near, best)
        if n_iter > self.n_iter:
            self.n_iter, self.refreshed = n_iter, False
        return code, need

    def notify(self, violation: float, jl: int, ju: int) -> bool:
        self.x[self.act] = self.a_x
        a_now, s_now = self.con.unpack(self.x)
        return self.driver.notify(self.n_iter, violation, {"alpha": a_now, "alpha_star": s_now},
                                  extras={"pair": (jl, ju)})

    def run(self) -> int:
        driver, nv, tol = self.driver, self.nv, self.driver.tol
        every = max(1000, self.m)
        shrink_every = min(self.m, 1000)
        # no-progress rule (as cbc-smo's): pairs that zig-zag without lowering the maximal
        # violation (steps at round-off on nearly equal kernel columns) would otherwise run
        # to max_iter. The first time it fires on a shrunk problem every variable re-enters
        # and shrinking is switched off (the set-aside variables are often the way out);
        # the second time the solver stops with the violation in the message.
        window = max(1000, 10 * self.m)
        best_violation, best_iter = math.inf, 0
        while True:
            if self.nb is not None and not driver.listening:
                limit = self._checkpoint(every, window, shrink_every)
                if self.n_iter < limit:
                    best = np.array([best_violation, best_iter], dtype=float)
                    code, need = self._compiled(limit, best)
                    best_violation, best_iter = float(best[0]), int(best[1])
                    if code == self.nb.NEED_COLUMN:
                        self.cols.get(need)
                        # the clock here too: with columns that do not stay in the cache
                        # (large m) a burst to the next checkpoint is ~1 000 column fetches
                        if driver.out_of_time():
                            return int(Reason.TIME_LIMIT)
                        continue
            sel = self.state()
            F, B_low, B_up = sel[0], sel[8], sel[9]
            gaps = B_low - B_up
            worst = int(np.argmax(gaps))
            violation = float(gaps[worst])
            n_iter = self.n_iter
            if driver.report is not None and n_iter % every == 0:
                driver.row(n_iter, violation, self.dual_value(), self.act.size,
                           self.cols.computed, driver.elapsed + self.setup_time)
            if violation < 0.999 * best_violation:
                best_violation, best_iter = violation, n_iter
            if violation <= tol or not np.isfinite(violation):
                if not self.refreshed or self.act.size < nv:
                    self.unshrink()  # check on the whole problem with exact scores
                    self.unshrink_events += self.act.size < nv
                    self.refreshed = True
                    continue
                return int(Reason.CONVERGED)
            if (self.shrinking and not self.unshrunk_near and violation <= 10.0 * tol
                    and self.act.size < nv):
                self.unshrunk_near = True  # LIBSVM: one full gradient near the end
                self.unshrink()
                self.unshrink_events += 1
                continue
            if n_iter >= driver.max_iter:
                return int(Reason.MAX_ITER)
            if n_iter and n_iter % window == 0 and n_iter - best_iter >= 20 * window:
                if self.shrinking or self.act.size < nv:
                    self.shrinking = False
                    self.unshrink()
                    self.unshrink_events += 1
                    self.refreshed = True
                    best_violation, best_iter = math.inf, n_iter
                    continue
                return NO_PROGRESS
            if driver.out_of_time():
                return int(Reason.TIME_LIMIT)
            if self.shrinking and n_iter and n_iter % shrink_every == 0:
                t_idx = self.a_thr - 1
                low, up = self.low, self.up
                drop = ((low & ~up & (F < B_up[t_idx])) | (up & ~low & (F > B_low[t_idx])))
                if np.count_nonzero(drop) > 0.05 * self.act.size:
                    self.activate(self.act[~drop])
                    self.shrink_events += 1
                    self.min_active = min(self.min_active, self.act.size)
                    continue
            moved, jl, ju = self.step(sel, worst)
            if not moved:
                if not self.refreshed or self.act.size < nv:
                    self.unshrink_events += self.act.size < nv
                    self.unshrink()
                    self.refreshed = True
                    continue
                return int(Reason.STALLED)
            self.n_iter += 1
            self.refreshed = False
            if driver.listening and self.notify(violation, jl, ju):
                return int(Reason.CALLBACK)


@register("smo-or", kinds=list(KINDS), specialized=True, requires=("numpy",),
          compare_options={"tol": 1e-7}, certify_tol=1e-3, warm_start=svor_pair)
def solve_smo_or(
    program,
    *,
    tol: float = 1e-3,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    cache_size: float = 200.0,
    shrinking: bool = True,
    x0: tuple[np.ndarray, np.ndarray] | None = None,
    callback: Any = None,
    gap_tol: float | None = 9e-4,
    engine: str = "auto",
) -> Solution:
    r"""SMO-OR: maximal-violating-pair SMO for the SVOR duals (Chu & Keerthi 2005, 2007).

    Parameters
    ----------
    program : Program
        Kind ``"qp.chance.svor.dual"``
        (:func:`conicml.formulations.svor_dual.svor_dual`, explicit thresholds)
        or ``"qp.chance.svor.implicit.dual"``
        (:func:`conicml.formulations.svor_implicit.svorim_dual`).
    tol : float, default=1e-3
        Stop when :math:`\max_i(B^i_{low} - B^i_{up}) \le \texttt{tol}` (LIBSVM's
        default accuracy; the registry certifies ``OPTIMAL`` at ``1e-3``).
    max_iter : int, optional
        Maximal number of pair updates; default :math:`\max(10^6, 100\,n_v)`,
        :math:`n_v` the number of dual variables.
    time_limit : float, optional
        Wall-clock limit in seconds.
    verbose : bool, default=False
        Print a table every :math:`\max(1000, m)` iterations.
    cache_size : float, default=200.0
        Memory bound of the kernel-column cache, in MB.
    shrinking : bool, default=True
        Set aside variables at bounds that cannot join a violating pair (see
        Notes); the result is certified on the whole problem
        either way.
    x0 : (alpha, alpha_star), optional
        Feasible warm start, shapes as the program's variables (raises
        :class:`OptionError` if infeasible).
    callback : callable, optional
        ``callback(IntermediateResult)`` after every iteration (``values``:
        ``alpha``, ``alpha_star``; ``residual``: the maximal violation on the
        active set); raising :class:`StopIteration` stops the solver
        (``USER_LIMIT``).
    gap_tol : float or None, default=9e-4
        Polishing, as ``smo``'s: the stop on the absolute violation ``tol`` says
        little about the relative primal-dual gap once :math:`C` is large (at
        :math:`C = 100` a converged point can sit at a gap of 1e-2); while the
        converged point's gap exceeds ``gap_tol``, the run goes on from it at
        ``tol / 10`` (at most three times). ``None``: stop at ``tol`` alone.
    engine : {"auto", "numba", "numpy"}, default="auto"
        ``"numba"``: the pair steps of :mod:`conicml.solvers._smo_or_numba`;
        ``"numpy"``: the NumPy loop; ``"auto"``: numba when it can be imported (the
        environment variable ``CONICML_ENGINE`` overrides ``"auto"``). The same
        algorithm either way (tested against each other); with a ``callback`` every
        step runs in the NumPy loop.

    Returns
    -------
    Solution
        ``objective`` = the dual maximum (= the primal optimum); ``values``
        ``alpha``, ``alpha_star``; ``extras``: ``kkt_violation``,
        ``primal_objective``, ``thresholds`` (midpoints of
        :math:`[B_{low}, B_{up}]`, made monotone), ``kernel_columns``,
        ``shrink_events``, ``unshrink_events``, ``min_active`` (smallest
        active-set size), ``stop_reason``.

    Notes
    -----
    **Optimality** (Chu & Keerthi 2005; seed 003 (5.3)–(5.5) with margin
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
    of the partner is LIBSVM's refinement. The threshold-block selection is shared
    with ``cbor-smo`` (:mod:`conicml.solvers._ordinal_wss`).

    **Implicit constraints.** Every point has a variable at every threshold
    (:math:`m(r-1)` of them, :class:`conicml.contracts.svor.SVORIMDualData`); each
    threshold :math:`j` has its own equality
    :math:`\sum_p \alpha^j_p = \sum_p \alpha^{*j}_p`, so there are no ties: the test
    is :math:`\max_j (b^j_{low} - b^j_{up}) \le \texttt{tol}` and the pair lies in
    the most violated threshold (Chu & Keerthi adapt SMO to both formulations; here it works
    threshold by threshold on the maximal violating pair). The thresholds are
    the midpoints of :math:`[b^j_{low}, b^j_{up}]`.

    **Shrinking** (``shrinking=True``, LIBSVM's heuristic, Chang & Lin 2011
    §5.1, adapted to threshold blocks): every :math:`\min(m, 1000)` iterations a
    variable at a bound whose :math:`F_x` lies on the non-violating side of its
    block's bound (:math:`F_x < B_{up}` when it can only bound from below,
    :math:`F_x > B_{low}` when only from above) is set aside; kernel columns are then
    computed and :math:`g` updated only on the points that still have an active
    variable. When the violation first falls below :math:`10\,\texttt{tol}`, and
    again before declaring convergence, :math:`g = Kv` is recomputed on all points
    and every variable re-enters, so the stopping test is always on the whole
    problem.

    **No progress.** Every :math:`\max(1000, 10m)` pair steps the solver checks that
    the maximal violation fell below 0.999 of its best within the last 20 such windows.
    When it did not (pairs that trade the same step back and forth: nearly equal kernel
    columns, e.g. one feature scaled by 1e3 under an RBF kernel), the set-aside variables
    re-enter and shrinking is switched off; a second such period ends the solve,
    ``USER_LIMIT`` with the violation in the message. The iteration cap
    :math:`\max(10^6, 100\,n_v)` then only bounds runs that still make progress.

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
    if gap_tol is not None and not (isinstance(gap_tol, (int, float)) and gap_tol > 0
                                    and math.isfinite(gap_tol)):
        raise OptionError(f"smo-or: gap_tol must be None or positive and finite, "
                          f"got {gap_tol!r}")
    nb = load_engine("smo-or", engine, "_smo_or_numba")
    options = dict(max_iter=max_iter, time_limit=time_limit, verbose=verbose,
                   cache_size=cache_size, shrinking=shrinking, callback=callback, nb=nb)
    solution = _solve_once(program, tol=tol, x0=x0, **options)
    iterations, solve_time, rounds = solution.iterations, solution.solve_time, 0
    while (gap_tol is not None and rounds < 3 and solution.status is Status.OPTIMAL
           and solution.residuals.gap > gap_tol):
        rounds += 1
        if max_iter is not None:
            options["max_iter"] = max(max_iter - iterations, 0)
        if time_limit is not None:
            options["time_limit"] = max(time_limit - solution.setup_time - solve_time, 1e-3)
        solution = _solve_once(program, tol=tol / 10 ** rounds,
                               x0=(solution.values["alpha"], solution.values["alpha_star"]),
                               **options)
        iterations += solution.iterations
        solve_time += solution.setup_time + solution.solve_time
    if rounds:
        solution = dataclasses.replace(
            solution, iterations=iterations, solve_time=solve_time,
            extras={**solution.extras, "polish_rounds": rounds})
    return solution


def _solve_once(program: Any, *, tol: float, max_iter: int | None, time_limit: float | None,
                verbose: bool, cache_size: float, shrinking: bool, x0: Any,
                callback: Any, nb: Any) -> Solution:
    """One run of the SMO-OR loop at ``tol`` from ``x0``."""
    t0 = time.perf_counter()
    con = _contract(program)
    X = np.asarray(con.X)
    C = float(con.C)
    m = np.asarray(con.ranks).size
    nv = con.layout()[0].size
    if max_iter is None:
        max_iter = max(1_000_000, 100 * nv)
    driver = Driver("smo-or", tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, allow_zero=True,
                    callback=callback, report=_Report if verbose else None)
    check_cache_size("smo-or", cache_size)
    if not isinstance(shrinking, (bool, np.bool_)):
        raise OptionError(f"smo-or: shrinking must be True or False, got {shrinking!r}")
    x = np.zeros(nv) if x0 is None else _check_x0(x0, con, C, m)
    gram = getattr(con, "gram", None)
    cols = _Columns(con.kernel, X, float(cache_size), gram)
    diag = (np.diagonal(gram).copy() if gram is not None else
            np.asarray(con.kernel.diagonal(X), dtype=float).reshape(-1))
    loop = _Loop(con, x, cols, diag, driver, shrinking, 0.0, nb)
    loop.setup_time = setup_time = time.perf_counter() - t0
    driver.start(f"smo-or: m = {m}, r = {loop.r}, C = {C:g}, tol = {driver.tol:g}, "
                 f"{'explicit' if loop.coupled else 'implicit'} constraints, {nv} variables")
    reason = loop.run()
    return _solution(loop, reason, setup_time, driver.elapsed)


def _solution(loop: _Loop, reason: int, setup_time: float, solve_time: float) -> Solution:
    """The Solution on the whole problem with exact scores: thresholds (midpoints of
    [B_low, B_up], made monotone), objectives and the solver's certificate."""
    if loop.act.size < loop.nv or not loop.refreshed:
        loop.unshrink()
    x, v, g, cl, sig, thr, C, m = (loop.x, loop.v, loop.g, loop.cl, loop.sig, loop.thr,
                                   loop.C, loop.m)
    B_low, B_up = loop.state()[8:]
    violation = max(float(np.max(B_low - B_up)), 0.0)
    theta = midpoint_thresholds(B_low, B_up)
    dual_obj = float(x.sum()) - 0.5 * float(v @ g)
    loss = float(np.maximum(0.0, sig * (g[cl] + sig - theta[thr - 1])).sum())
    primal_obj = 0.5 * float(v @ g) + C * loss
    feas = _infeasibility(_equalities(sig, thr, x, loop.n_thr), loop.coupled) / (C * m)
    gap = (primal_obj - dual_obj) / max(abs(primal_obj), abs(dual_obj), 1e-300)
    alpha, alpha_star = loop.con.unpack(x)
    status, message = loop.driver.finish(reason)
    if reason in (Reason.MAX_ITER, Reason.TIME_LIMIT, NO_PROGRESS):
        message += f"; KKT violation {violation:.2e} > tol {loop.driver.tol:g}"
    if loop.driver.report is not None:
        print(f"\nsmo-or: {message}")
        print(f"smo-or: dual objective {dual_obj:.10g}, relative gap {gap:.3e}, "
              f"{loop.n_iter} iterations, {loop.cols.computed} kernel columns")
    return Solution(
        status=status,
        solver="smo-or",
        objective=dual_obj,
        values={"alpha": alpha, "alpha_star": alpha_star},
        iterations=loop.n_iter,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=feas, dual=violation, gap=gap, source="solver"),
        message=f"smo-or: {message}",
        extras={
            "kkt_violation": violation,
            "thresholds": theta,
            "primal_objective": primal_obj,
            "kernel_columns": loop.cols.computed,
            "shrink_events": loop.shrink_events,
            "unshrink_events": loop.unshrink_events,
            "min_active": loop.min_active,
            "stop_reason": reason,
            "engine": "numpy" if loop.nb is None else "numba",
        },
    )
