r"""``cbor-smo``: SMO-like solver for the single-cone CBOR dual (kind ``"socp.chance.cbor.dual"``).

**Problem.** The dual (4.5) of clustering-based ordinal regression, written as the
minimisation (5.1) of seed 003 (J. Saketha Nath, PhD thesis, IISc 2007, ch. 5;
ICML 2007 "CBOR-Iter"):

.. math::

    \min_{\alpha,\alpha^*}\ F = W\sqrt{v^\top K v} - d^\top(\alpha + \alpha^*),
    \quad v = \alpha^* - \alpha,
    \quad\text{s.t.}\quad 0 \le \alpha,\alpha^* \le 1,\
    D_i := s_i - s_i^* \ge 0\ (i \le r-2),\ D_{r-1} = 0,

with :math:`\alpha_j \equiv 0` for rank-:math:`r` clusters and
:math:`\alpha^*_j \equiv 0` for rank-1 clusters. The reported objective is the
maximum of (4.5), :math:`-F`, which equals the primal optimal total slack (the
same meaning as for the generic backends on the same program).

It stops at a maximal KKT violation :math:`\le` ``tol`` (OPTIMAL only when the recomputed
certificate passes); optimality, iteration, working set, linear path, smoothing
continuation, start and certificate are set out in the Notes of :func:`solve_cbor_smo`.
"""

from __future__ import annotations

import math
import time
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import kinds
from ..exceptions import OptionError, SolverError
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._cbor_step import move_pair
from ._cbor_step import step as _step
from ._driver import Driver, Reason, message_table, status_table
from ._options import check_array, check_cache_size, check_common, load_engine
from ._ordinal_wss import (
    midpoint_thresholds,
    partner_mask,
    pick_low,
    segment_bounds,
    tie_blocks,
)
from ._report import IterationReport
from ._warm import cbor_pair

__all__ = ["TERMINATION_MESSAGES", "solve_cbor_smo"]

#: Stop reason -> message.
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: maximal KKT violation max_i(B_low^i - B_up^i) <= tol",
    {Reason.STALLED: "no progress: the maximal violating pair admits no step (numerical stall)",
     5: ("rho -> 0: the dual optimum lies at the kink rho = ||alpha* - alpha||_K = 0, where "
         "the pair updates have no gradient and the dual does not determine w (the "
         "bound ||w|| <= W is inactive); use a generic solver on form='primal'")},
)
KINK = 5  # the stop at the kink rho = 0

#: Stop reason -> Status; a non-converged result is returned, never raised.
STATUS_MAP: dict[int, Status] = status_table({KINK: Status.USER_LIMIT})

KIND = kinds.CBOR_DUAL
_OLD_SELECTION = {"wss2": "second-order", "mvp": "max-violating"}  # names before 0.2


class _Columns:
    """LRU cache of kernel columns ``K[:, j]`` between the cluster centres.

    Linear and rbf columns are computed directly with numpy (one
    :math:`O(kd)` product each), without scikit-learn's per-call validation.
    """

    def __init__(self, kernel: Any, means: np.ndarray, cache_size: float) -> None:
        self.kernel = kernel
        self.means = means
        k = means.shape[0]
        self.capacity = max(2, int(cache_size * 2**20 // (8 * k)))
        self._cols: OrderedDict[int, np.ndarray] = OrderedDict()
        self.computed = 0
        self.sqnorms = np.einsum("ij,ij->i", means, means)

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``K[rows][:, cols]``."""
        cross = self.means[rows] @ self.means[cols].T
        if self.kernel.name == "linear":
            return cross
        dist2 = self.sqnorms[rows][:, None] + self.sqnorms[cols][None, :] - 2.0 * cross
        return np.exp(-self.kernel.gamma * np.maximum(dist2, 0.0))

    def compute(self, j: int) -> np.ndarray:
        """Column ``K[:, j]`` (counted in ``computed``), not cached here."""
        cross = self.means @ self.means[j]
        self.computed += 1
        if self.kernel.name == "linear":
            return cross
        dist2 = self.sqnorms + self.sqnorms[j] - 2.0 * cross
        return np.exp(-self.kernel.gamma * np.maximum(dist2, 0.0))

    def get(self, j: int) -> np.ndarray:
        col = self._cols.get(j)
        if col is not None:
            self._cols.move_to_end(j)
            return col
        col = self.compute(j)
        self._cols[j] = col
        if len(self._cols) > self.capacity:
            self._cols.popitem(last=False)
        return col

    def diagonal(self) -> np.ndarray:
        if self.kernel.name == "linear":
            return self.sqnorms.copy()
        return np.ones(self.means.shape[0])

    def matvec(self, v: np.ndarray) -> np.ndarray:
        if self.kernel.name == "linear":
            return self.means @ (self.means.T @ v)
        support = np.flatnonzero(v)
        out = np.zeros(self.means.shape[0])
        everything = np.arange(self.means.shape[0])
        for start in range(0, support.size, 512):
            idx = support[start:start + 512]
            out += self.block(everything, idx) @ v[idx]
        return out


class _ColumnSlots:
    r"""The kernel columns of the compiled kernel loop, in one array it can index.

    ``C[slot_of[j]]`` is column ``j`` (``slot_of[j] = -1``: not held), computed by
    :meth:`_Columns.compute` (the NumPy loop's columns, the same numbers). Memory rule: the
    NumPy loop's, ``cache_size`` MB of columns: ``min(k, cache_size / (8k))`` slots, i.e. the
    whole Gram matrix of the centres, filled as its columns are first used, up to
    :math:`k \approx 5100` clusters at the default 200 MB, and beyond that the least
    recently used column out first (``stamp``: last use, marked by the loop in the NumPy
    loop's order, so both keep and compute the same columns).
    """

    def __init__(self, cols: _Columns) -> None:
        k = cols.means.shape[0]
        n_slots = min(k, cols.capacity)
        self.cols = cols
        self.C = np.empty((n_slots, k))
        self.slot_of = np.full(k, -1, dtype=np.int64)
        self.col_of = np.full(n_slots, -1, dtype=np.int64)
        self.stamp = np.zeros(n_slots, dtype=np.int64)
        self.clock = np.zeros(1, dtype=np.int64)
        self.filled = 0

    def fill(self, j: int) -> None:
        """Compute column ``j`` into a free slot or the least recently used one."""
        if self.filled < self.col_of.size:
            slot = self.filled
            self.filled += 1
        else:
            slot = int(np.argmin(self.stamp))
            self.slot_of[self.col_of[slot]] = -1
        self.C[slot] = self.cols.compute(j)
        self.slot_of[j], self.col_of[slot] = slot, j
        self.clock[0] += 1
        self.stamp[slot] = self.clock[0]


class _KernelScores:
    """The kernel path: :math:`Kv` kept for all clusters, updated with two cached columns."""

    method = "kernel"

    def __init__(self, cols: _Columns, v: np.ndarray) -> None:
        self.cols = cols
        self.reset(v)

    def reset(self, v: np.ndarray) -> None:
        self.Kv = self.cols.matvec(v)

    def scores(self) -> np.ndarray:
        return self.Kv

    def rho2(self, v: np.ndarray) -> float:
        # summed in order (cumsum), as the compiled kernel loop sums it: no BLAS in the
        # loop's arithmetic, so both loops take the same pairs on any BLAS
        return float(np.cumsum(v * self.Kv)[-1])

    def row(self, j: int, idx: np.ndarray) -> np.ndarray:
        return self.cols.get(j)[idx]

    def curvature(self, jl: int, ju: int, diag: np.ndarray) -> float:
        return float(diag[jl] - 2.0 * self.cols.get(jl)[ju] + diag[ju])

    def move(self, jl: int, ju: int, delta: float) -> None:
        self.Kv += delta * (self.cols.get(ju) - self.cols.get(jl))


class _LinearScores:
    r"""The linear path: the primal direction :math:`z = \sum_j v_j\mu_j = M^\top v` kept
    explicitly (:math:`\rho u` of the KKT conditions (C.2); :math:`w = (W/\rho) z`,
    (4.6)/(5.2)), so a pair update costs :math:`O(d)` and a score
    :math:`(Kv)_j = \mu_j^\top z` is :math:`O(d)` on demand (the idea of LIBLINEAR's dual
    coordinate descent, Hsieh et al. 2008) instead of kernel columns of length :math:`k`.
    """

    method = "linear"

    def __init__(self, means: np.ndarray, v: np.ndarray) -> None:
        self.means = means
        self.reset(v)

    def reset(self, v: np.ndarray) -> None:
        self.z = self.means.T @ v

    def scores(self) -> np.ndarray:
        return self.means @ self.z

    def rho2(self, v: np.ndarray) -> float:
        return float(self.z @ self.z)

    def row(self, j: int, idx: np.ndarray) -> np.ndarray:
        return self.means[idx] @ self.means[j]

    def curvature(self, jl: int, ju: int, diag: np.ndarray) -> float:
        diff = self.means[jl] - self.means[ju]
        return float(diff @ diff)

    def move(self, jl: int, ju: int, delta: float) -> None:
        self.z += delta * (self.means[ju] - self.means[jl])


class _Report(IterationReport):
    """Fixed-width iteration table (the layout of scipy's trust-constr report)."""

    COLUMN_NAMES = ["iter", "violation", "dual obj", "rho", "kernel cols", "time [s]"]
    COLUMN_WIDTHS = [10, 12, 16, 12, 12, 10]
    ITERATION_FORMATS = ["^10", "^12.3e", "^16.9g", "^12.4e", "^12", "^10.3f"]


def _check_options(tol: Any, max_iter: Any, time_limit: Any, cache_size: Any,
                   k: int) -> int:
    if max_iter is None:
        max_iter = max(1_000_000, 1000 * k)
    check_common("cbor-smo", tol, max_iter, time_limit, allow_zero=True)
    check_cache_size("cbor-smo", cache_size)
    return int(max_iter)


def _resolve_method(method: Any, kernel: Any) -> bool:
    """Whether to take the linear path (``method`` checked; ``"auto"``: linear kernel)."""
    if method not in ("auto", "kernel", "linear"):
        raise OptionError(f"cbor-smo: method must be 'auto', 'kernel' or 'linear', got {method!r}")
    is_linear = getattr(kernel, "name", None) == "linear"
    if method == "linear" and not is_linear:
        raise OptionError(
            f"cbor-smo: method='linear' needs the linear kernel (the primal direction z = "
            f"sum_j v_j mu_j lives in input space), got kernel {getattr(kernel, 'name', kernel)!r}"
            "; use method='auto' or 'kernel'")
    return is_linear and method != "kernel"


def _resolve_engine(engine: Any) -> Any:
    """The compiled module (:mod:`conicml.solvers._cbor_numba`), or ``None`` for NumPy."""
    return load_engine("cbor-smo", engine, "_cbor_numba")


def _program_data(program: Any) -> Mapping[str, Any]:
    if getattr(program, "kind", None) != KIND:
        raise SolverError(
            f"solver 'cbor-smo' accepts programs of kind {KIND!r}, got "
            f"{getattr(program, 'kind', None)!r}; build one with "
            "conicml.formulations.ordinal.cbor(..., form='dual')")
    data = program.data
    missing = [key for key in ("means", "ranks", "r", "W", "d", "kernel") if key not in data]
    if missing:
        raise SolverError(f"cbor-smo: program data lacks {', '.join(map(repr, missing))}")
    return data


def _initial_point(cols: _Columns, diag: np.ndarray, ranks: np.ndarray, r: int,
                   d: np.ndarray, W: float, per_rank: int | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """One pair alpha_j = alpha*_l = 1, j of rank i, l of rank i + 1 (any i).

    Such a pair leaves every partial sum D unchanged (both variables sit at
    threshold i), so it is feasible; among all of them the pair with the best
    dual value d_j + d_l - W ||phi(mu_j) - phi(mu_l)|| is taken (the nearest
    pair across adjacent ranks), which keeps the first steps away from the
    kink rho = 0 of the objective. Pairs of equal centres (duplicate clusters
    under adjacent ranks) would start at that kink, so a pair of distinct
    centres is preferred whenever one exists. ``per_rank``: search only that many
    clusters of each rank (evenly spaced in the program's order; the linear path's
    start, which would otherwise cost O(k^2 d), more than its loop at k in the
    thousands); ``None``: all pairs (the kernel path).
    """
    k = ranks.size
    alpha, alpha_star = np.zeros(k), np.zeros(k)
    pair = (0, 0)
    tiny = 1e-12 * max(1.0, float(np.max(diag, initial=1.0)))
    best = (-np.inf, -np.inf)  # (tier: 0 distinct centres, -1 equal ones; dual value)
    def members(rank: int) -> np.ndarray:
        idx = np.flatnonzero(ranks == rank)
        if per_rank is not None and idx.size > per_rank:
            idx = idx[np.linspace(0, idx.size - 1, per_rank).astype(np.int64)]
        return idx

    for i in range(1, r):
        lo, hi = members(i), members(i + 1)
        for start in range(0, lo.size, 256):
            rows = lo[start:start + 256]
            dist2 = diag[rows][:, None] - 2.0 * cols.block(rows, hi) + diag[hi][None, :]
            value = d[rows][:, None] + d[hi][None, :] - W * np.sqrt(np.maximum(dist2, 0.0))
            # a pair of equal centres starts at the kink rho = 0 itself (no gradient, no
            # smoothing scale): pairs of distinct centres come first (tier 0 before -1)
            distinct = dist2 > tiny
            tier = 0.0 if distinct.any() else -1.0
            masked = np.where(distinct, value, -np.inf) if tier == 0.0 else value
            a, b = np.unravel_index(int(np.argmax(masked)), value.shape)
            score = (tier, float(value[a, b]))
            if score > best:
                best, pair = score, (int(rows[a]), int(hi[b]))
    alpha[pair[0]] = 1.0
    alpha_star[pair[1]] = 1.0
    return alpha, alpha_star


def _check_x0(x0: Any, ranks: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        first, second = x0
    except (TypeError, ValueError) as exc:
        raise OptionError("cbor-smo: x0 must be a pair (alpha, alpha_star)") from exc
    k = ranks.size
    alpha = check_array("cbor-smo", "x0[0] (alpha)", first, (k,))
    alpha_star = check_array("cbor-smo", "x0[1] (alpha_star)", second, (k,))
    ua, us = (ranks < r).astype(float), (ranks > 1).astype(float)
    box = max(np.max(-alpha), np.max(alpha - ua), np.max(-alpha_star),
              np.max(alpha_star - us), 0.0)
    D = np.array([alpha[ranks <= i].sum() - alpha_star[ranks <= i + 1].sum()
                  for i in range(1, r)])
    viol = max(box, abs(D[-1]), float(np.max(-D[:-1], initial=0.0)))
    if not np.isfinite(viol) or viol > 1e-9 * max(1.0, float(k)):
        raise OptionError(
            f"cbor-smo: x0 is not feasible (violation {viol:.3g}); it must satisfy the box "
            "0 <= alpha, alpha* <= 1 (alpha = 0 at rank r, alpha* = 0 at rank 1) and the "
            "partial sums s*_i <= s_i, s*_{r-1} = s_{r-1}")
    return np.clip(alpha, 0.0, ua), np.clip(alpha_star, 0.0, us)


class _Layout:
    """The variables of (4.5) sorted by threshold ``t`` (segments of equal ``t`` for
    ``reduceat``): cluster ``cl``, sign ``sig`` (+1: alpha, -1: alpha*), value ``x``, and
    the bound sets ``low`` (can move by +sigma, bounds theta_t below) and ``up``."""

    def __init__(self, ranks: np.ndarray, r: int, d: np.ndarray, alpha: np.ndarray,
                 alpha_star: np.ndarray) -> None:
        self.k, self.n_thr = ranks.size, r - 1
        self.ia, self.is_ = ia, is_ = np.flatnonzero(ranks < r), np.flatnonzero(ranks > 1)
        cl = np.concatenate([ia, is_])
        sig = np.concatenate([np.ones(ia.size), -np.ones(is_.size)])
        thr = np.concatenate([ranks[ia], ranks[is_] - 1])
        order = np.argsort(thr, kind="stable")
        self.cl, self.sig, self.thr = cl, sig, thr = cl[order], sig[order], thr[order]
        self.is_alpha = is_alpha = sig > 0
        self.x = x = np.where(is_alpha, alpha[cl], alpha_star[cl])
        self.starts = np.searchsorted(thr, np.arange(1, r))
        self.ends = np.append(self.starts[1:], thr.size)
        self.dsig = d[cl] * sig
        # updated for the two moved variables only
        self.low = np.where(is_alpha, x < 1.0, x > 0.0)
        self.up = np.where(is_alpha, x > 0.0, x < 1.0)

    def exact_v(self) -> np.ndarray:
        """v = alpha* - alpha recomputed from x (the incremental v drifts, and x snaps
        to the box while v does not: a v of round-off size with x = 0 made the scores
        g = W Kv / rho pure noise, and "converged" at a point whose exact check fails)."""
        out = np.zeros(self.k)
        np.add.at(out, self.cl, -self.sig * self.x)
        return out

    def partial_sums(self) -> np.ndarray:
        r""":math:`D_t = \sum_{t(x) \le t}\sigma_x x`, summed in order (``cumsum``: the same
        numbers as the compiled loops' running sum; ``reduceat`` sums pairwise)."""
        running = np.cumsum(self.sig * self.x)
        return np.where(self.ends > 0, running[self.ends - 1], 0.0)

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha, alpha_star)`` of the current ``x``."""
        alpha, alpha_star = np.zeros(self.k), np.zeros(self.k)
        alpha[self.cl[self.is_alpha]] = self.x[self.is_alpha]
        alpha_star[self.cl[~self.is_alpha]] = self.x[~self.is_alpha]
        return alpha, alpha_star

    def kkt(self, Kv: np.ndarray, rho: float, D: np.ndarray, W: float) -> tuple:
        """Scores ``g``, the bound scores and the tied threshold blocks (5.3)."""
        g = (W / rho) * Kv if rho > 0 else np.zeros(self.k)  # rho: the (smoothed) norm
        F = g[self.cl]
        F += self.dsig
        Flow = np.where(self.low, F, -np.inf)
        Fup = np.where(self.up, F, np.inf)
        b_low, b_up, _, _ = segment_bounds(Flow, Fup, self.thr, self.n_thr)
        # blocks of tied thresholds (D_i > 0 ties i and i+1), shared with smo-or
        blk, B_low, B_up = tie_blocks(b_low, b_up, D, 1e-12)
        return g, Flow, Fup, b_low, b_up, blk, B_low, B_up


_AGAIN = -1  # evaluate the KKT conditions again (after a refresh or a new stage)


class _Loop:
    """The pair updates of CBOR-Iter with the smoothing continuation, one stage after the
    other; the compiled loops (``fast``) run a stage's updates in chunks."""

    def __init__(self, data: Mapping[str, Any], lay: _Layout, op: Any, v: np.ndarray,
                 cols: _Columns, diag: np.ndarray, driver: Driver, fast: Any,
                 second_order: bool, smoothing: bool, setup_time: float) -> None:
        self.lay, self.op, self.v, self.cols, self.diag = lay, op, v, cols, diag
        self.d, self.W, self.means = np.asarray(data["d"], dtype=float), float(data["W"]), \
            np.ascontiguousarray(np.asarray(data["means"], dtype=float))
        self.driver, self.fast, self.second_order = driver, fast, second_order
        self.setup_time = setup_time
        self.n_iter, self.refreshed, self.stages = 0, True, 0
        # smoothing continuation: ||v||_K -> sqrt(||v||_K^2 + eps^2), eps -> 0 (docstring)
        self.eps = self.eps0 = math.sqrt(max(op.rho2(v), 0.0)) if smoothing else 0.0
        self.report_every = max(100, lay.k)
        # the compiled chunk: 1 with a callback, which then sees every iteration as in
        # the NumPy loop
        self.chunk = (1 if driver.listening else self.report_every
                      if driver.report is not None else 2000)
        self.out_f = np.zeros(3)
        self.out_i = np.zeros(1, dtype=np.int64)
        self.slots = _ColumnSlots(cols) if fast is not None and op.method == "kernel" else None

    def refresh(self) -> None:
        self.v = self.lay.exact_v()
        self.op.reset(self.v)
        self.refreshed = True

    def report(self) -> None:
        dual = float(np.dot(self.d[self.lay.cl], self.lay.x) - self.W * self.rho)
        self.driver.row(self.n_iter, self.violation, dual, self.rho, self.cols.computed,
                        self.driver.elapsed + self.setup_time)

    def notify(self) -> bool:
        alpha, alpha_star = self.lay.split()
        return self.driver.notify(self.n_iter, self.violation,
                                  {"alpha": alpha, "alpha_star": alpha_star})

    def run_compiled(self) -> bool:
        """One chunk of the compiled stage; True if the stage has converged."""
        lay, driver = self.lay, self.driver
        cap = max(0, min(self.chunk, driver.max_iter - self.n_iter))
        if driver.out_of_time():
            cap = 0
        if self.slots is None:
            self.code, self.done = self.fast.run(
                self.means, self.op.z, self.v, lay.x, lay.low, lay.up, lay.cl, lay.sig,
                lay.thr, lay.dsig, self.d, self.diag, lay.starts, lay.ends, self.W, self.eps,
                driver.tol, self.second_order, cap, self.out_f)
        else:
            self.code, self.done = self.run_kernel(cap)
        self.violation, self.rho, _ = (float(out) for out in self.out_f)
        if self.done:
            self.n_iter += self.done
            self.refreshed = False
        if driver.report is not None:
            self.report()
        return self.code == self.fast.CONVERGED

    def run_kernel(self, cap: int) -> tuple[int, int]:
        """The compiled kernel loop for up to ``cap`` updates, computing the kernel columns it
        asks for (a request comes before anything moves; the call after it resumes)."""
        lay, slots, fast, done = self.lay, self.slots, self.fast, 0
        while True:
            code, steps = fast.run_kernel(
                self.op.Kv, slots.C, slots.slot_of, slots.stamp, slots.clock, self.v, lay.x,
                lay.low, lay.up, lay.cl, lay.sig, lay.thr, lay.dsig, self.d, self.diag,
                lay.starts, lay.ends, self.W, self.eps, self.driver.tol, self.second_order,
                cap - done, self.out_f, self.out_i)
            done += steps
            if code != fast.NEED_COLUMN:
                return code, done
            slots.fill(int(self.out_i[0]))

    def evaluate(self) -> bool:
        """The KKT conditions at the current point (NumPy); True if the stage converged."""
        self.D = self.lay.partial_sums()
        self.Kv = self.op.scores()  # linear path: M z, O(kd) in one product
        self.rho = math.sqrt(max(self.op.rho2(self.v), 0.0))
        self.rho_eff = math.sqrt(self.rho * self.rho + self.eps * self.eps)
        self.sel = self.lay.kkt(self.Kv, self.rho_eff, self.D, self.W)
        g, B_low, B_up = self.sel[0], self.sel[6], self.sel[7]
        gaps = B_low - B_up
        self.worst = int(np.argmax(gaps))
        self.violation = float(gaps[self.worst])
        if self.driver.report is not None and self.n_iter % self.report_every == 0:
            self.report()
        # a smoothed stage is solved only as far as its own bias (eps/rho)^2 max|g|
        stage_tol = self.driver.tol if self.eps == 0.0 else max(
            self.driver.tol, 1e-2 * (self.eps / max(self.rho, self.eps)) ** 2
            * float(np.max(np.abs(g), initial=0.0)))
        return self.violation <= stage_tol

    def stage_converged(self) -> int:
        """Refresh and re-check, stop (CONVERGED, or KINK at rho -> 0), or the next stage."""
        if not self.refreshed:
            self.refresh()  # remove drift, then re-check on exact scores
            return _AGAIN
        if self.eps == 0.0:
            return int(Reason.CONVERGED)
        # stage solved: shrink the smoothing (to 0 once it is negligible against rho)
        self.stages += 1
        if self.eps <= 1e-9 * self.eps0 and not self.eps <= 1e-3 * self.rho:
            # rho went to 0 with the smoothing: the exact problem's optimum is at the
            # kink rho = 0, where the exact stage has no gradient to follow
            return KINK
        self.eps = 0.0 if self.eps <= 1e-3 * self.rho else 0.1 * self.eps
        return _AGAIN

    def pair(self) -> tuple[int, int]:
        """The pair (positions in the layout): l attains B_low at the worst threshold, u
        attains B_up there (max-violating) or maximises the second-order decrease."""
        lay, op, diag = self.lay, self.op, self.diag
        g, Flow, Fup, b_low, b_up, blk, B_low, B_up = self.sel
        lv = pick_low(blk, self.worst, b_low, Flow, lay.starts, lay.ends)
        if not self.second_order:
            cand_up = np.flatnonzero(blk >= blk[self.worst])
            ku = int(cand_up[np.argmin(b_up[cand_up])])
            return lv, int(lay.starts[ku] + np.argmin(Fup[lay.starts[ku]:lay.ends[ku]]))
        # u maximises the second-order decrease (F_l - F_u)^2 / (2 phi''(0)) among the
        # upper-bound variables that violate with l and can pair with it (threshold
        # block >= that of l), Fan, Chen & Lin (2005) WSS2 adapted
        jl = int(lay.cl[lv])
        slope = Fup - Flow[lv]
        cand = np.flatnonzero(partner_mask(Fup, float(Flow[lv]), lay.thr, int(lay.thr[lv]),
                                           blk, True))
        cu = lay.cl[cand]
        q = self.rho_eff * self.rho_eff
        a_c = diag[jl] - 2.0 * op.row(jl, cu) + diag[cu]
        b_c = self.Kv[cu] - self.Kv[jl]
        q15 = q**1.5  # 0 when q underflows (rho -> 0 on a low-rank K): no curvature
        curv = self.W * (a_c * q - b_c * b_c) / q15 if q15 > 0 else np.full(cu.size, np.inf)
        curv = np.where(curv > 1e-12, curv, 1e-12)
        return lv, int(cand[np.argmax(slope[cand] ** 2 / curv)])

    def step(self) -> bool:
        """One pair update (NumPy); False if the pair admits no step."""
        lay, x, sig, d = self.lay, self.lay.x, self.lay.sig, self.d
        lv, uv = self.pair()
        jl, ju = int(lay.cl[lv]), int(lay.cl[uv])
        ub = (1.0 - x[lv]) if sig[lv] > 0 else x[lv]
        ub = min(ub, x[uv] if sig[uv] > 0 else 1.0 - x[uv])
        tl, tu = int(lay.thr[lv]), int(lay.thr[uv])
        if tl > tu:  # D_i decreases for t_u <= i < t_l (inside a tied block)
            ub = min(ub, float(np.min(self.D[tu - 1:tl - 1])))
        a = self.op.curvature(jl, ju, self.diag)
        b = self.Kv[ju] - self.Kv[jl]
        e = sig[lv] * d[jl] - sig[uv] * d[ju]
        W2 = self.W * self.W
        delta = _step(W2 * a, W2 * b, W2 * self.rho_eff * self.rho_eff, e, max(ub, 0.0))
        if not delta > 0.0:
            return False
        move_pair(x, lay.low, lay.up, sig, lv, uv, delta)  # snap to the box, bound sets
        if jl != ju:
            self.v[jl] -= delta
            self.v[ju] += delta
            self.op.move(jl, ju, delta)
        return True

    def run(self) -> int:
        driver, fast = self.driver, self.fast
        while True:
            converged = self.run_compiled() if fast is not None else self.evaluate()
            if converged:
                reason = self.stage_converged()
                if reason == _AGAIN:
                    continue
                return reason
            if self.eps == 0.0 and self.rho == 0.0:
                return KINK  # at the kink: the exact scores are undefined
            reason = driver.limit(self.n_iter)
            if reason is not None:
                return int(reason)
            moved = self.code != fast.NO_STEP if fast is not None else self.step()
            if not moved:
                if not self.refreshed:
                    self.refresh()
                    continue
                return int(Reason.STALLED)
            if fast is None:
                self.n_iter += 1
                self.refreshed = False
            if driver.listening and (fast is None or self.done) and self.notify():
                return int(Reason.CALLBACK)


@register("cbor-smo", kinds=[KIND], specialized=True, requires=("numpy",),
          warm_start=cbor_pair,
          certify_tol=1e-4)  # default tol on the KKT violation; recomputed stationarity ~1e-9
def solve_cbor_smo(
    program,
    *,
    tol: float = 1e-6,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    cache_size: float = 200.0,
    x0: tuple[np.ndarray, np.ndarray] | None = None,
    smoothing: bool = True,
    selection: str = "second-order",
    method: str = "auto",
    engine: str = "auto",
    callback: Callback | None = None,
) -> Solution:
    r"""CBOR-Iter: maximal-violating-pair coordinate descent for the CBOR dual (5.1).

    Parameters
    ----------
    program : Program
        Kind ``"socp.chance.cbor.dual"`` (:func:`conicml.formulations.ordinal.cbor`
        with ``form="dual"``).
    tol : float, default=1e-6
        Stop when :math:`\max_i(B^i_{low} - B^i_{up}) \le \texttt{tol}`.
    max_iter : int, optional
        Maximal number of pair updates; default :math:`\max(10^6, 1000k)`.
    time_limit : float, optional
        Wall-clock limit in seconds.
    verbose : bool, default=False
        Print a table every :math:`\max(100, k)` iterations.
    cache_size : float, default=200.0
        Memory bound of the kernel-column cache, in MB.
    x0 : (alpha, alpha_star), optional
        Feasible warm start (raises :class:`OptionError` if infeasible).
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (``values`` holds ``alpha``
        and ``alpha_star``, ``residual`` the largest KKT violation);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    selection : {"second-order", "max-violating"}, default="second-order"
        Working-set rule (Notes); the same names as ``cbc-smo``
        (``"wss2"`` / ``"mvp"`` are deprecated spellings).
    smoothing : bool, default=True
        Use the smoothing continuation of the Notes (``False``: plain
        pair updates on the non-smooth objective).
    method : {"auto", "kernel", "linear"}, default="auto"
        ``"kernel"``: scores :math:`Kv` kept for all clusters and updated with cached
        kernel columns (length :math:`k`); ``"linear"`` (linear kernel only): the
        primal direction :math:`z = \sum_j v_j\mu_j` kept explicitly (module
        docstring, "Linear path"), :math:`O(d)` per pair update; ``"auto"``: linear
        for the linear kernel, kernel otherwise. The path taken is ``extras["method"]``.
    engine : {"auto", "numba", "numpy"}, default="auto"
        Loop of either path: compiled (:mod:`conicml.solvers._cbor_numba`, the same
        algorithm, the same pairs) or NumPy; ``"auto"``: compiled when numba can be
        imported (the environment variable ``CONICML_ENGINE`` overrides ``"auto"``).
        Reported as ``extras["engine"]``.

    Returns
    -------
    Solution
        ``objective`` = the maximum of (4.5) (= primal total slack);
        ``values`` ``alpha``, ``alpha_star``; ``extras``: ``kkt_violation``,
        ``thresholds`` (the solver's own), ``primal_objective``, ``rho``,
        ``kernel_columns``, ``stop_reason``.

    Notes
    -----
    **Optimality (5.3)–(5.5).** With scores :math:`g_j = W (Kv)_j/\rho`,
    :math:`\rho = \sqrt{v^\top K v}`, give each variable :math:`x` a threshold
    :math:`t(x)` (:math:`\alpha_j`: its rank; :math:`\alpha^*_j`: its rank - 1), a
    sign :math:`\sigma_x` (+1 for :math:`\alpha`, -1 for :math:`\alpha^*`) and
    :math:`F_x = g_j + \sigma_x d_j`, so that :math:`\partial F/\partial x = -\sigma_x F_x`.
    Variables that can move by :math:`+\sigma_x` (:math:`\alpha < 1`,
    :math:`\alpha^* > 0`) bound :math:`\theta_{t(x)}` below by :math:`F_x`; those
    that can move by :math:`-\sigma_x` bound it above. :math:`b^i_{low}, b^i_{up}`
    are the extreme bounds at threshold :math:`i`. Thresholds :math:`i, i+1` are
    *tied* when :math:`D_i > 0` (then :math:`\theta_i = \theta_{i+1}`). With
    blocks of consecutive tied thresholds,

    .. math::

        B^i_{low} = \max\{b^k_{low} : \mathrm{blk}(k) \le \mathrm{blk}(i)\},\quad
        B^i_{up} = \min\{b^k_{up} : \mathrm{blk}(k) \ge \mathrm{blk}(i)\},

    and :math:`(\alpha, \alpha^*)` is optimal iff :math:`B^i_{low} \le B^i_{up}`
    for all :math:`i`. This generalises (5.4)/(5.5), which handle ties of two
    thresholds only (errata S003-F4).

    **Iteration (A2).** Take :math:`I = \arg\max_i (B^i_{low} - B^i_{up})` (the
    thesis's "argmax" read as the most violated threshold), the variable
    :math:`l` attaining :math:`B^I_{low}` and :math:`u` attaining
    :math:`B^I_{up}`. Move :math:`x_l \mathrel{+}= \sigma_l\delta`,
    :math:`x_u \mathrel{-}= \sigma_u\delta` — the four cases of the thesis
    (:math:`\alpha\alpha`, :math:`\alpha^*\alpha^*`: one up one down;
    :math:`\alpha\alpha^*`, :math:`\alpha^*\alpha`: both the same way) in one
    rule. Then :math:`v` changes by :math:`\delta(e_{u} - e_{l})` and :math:`D_i`
    by :math:`+\delta` for :math:`t(l) \le i < t(u)` or by :math:`-\delta` for
    :math:`t(u) \le i < t(l)` (possible only inside a tied block), so
    :math:`D_{r-1}` is unchanged. :math:`\delta \in [0, ub]`, :math:`ub` the
    tightest bound from the boxes and from those :math:`D_i \ge 0` that decrease,
    minimises exactly the convex 1-D function (5.6)
    :math:`\sqrt{a\delta^2 + 2b\delta + c} - e\delta` with
    :math:`a = W^2(K_{ll} - 2K_{lu} + K_{uu})`, :math:`b = W^2((Kv)_u - (Kv)_l)`,
    :math:`c = W^2 v^\top K v`, :math:`e = \sigma_l d_l - \sigma_u d_u`, by the
    closed form A4 (clipped to :math:`[0, ub]`). :math:`Kv` is updated with two
    kernel columns (an LRU cache of ``cache_size`` MB: the whole Gram matrix of the
    centres, filled as its columns are first used, up to :math:`k \approx 5100` at the
    default). With ``engine="numba"`` these updates run compiled
    (:func:`conicml.solvers._cbor_numba.run_kernel`) on the same columns, computed by the
    same NumPy code when first needed and held in one array under the same memory rule.

    **Working set.** ``selection="max-violating"`` is the thesis's rule above (both
    variables from the maximal violating pair). ``selection="second-order"`` (default)
    keeps :math:`l` and picks :math:`u` among all variables that violate with
    :math:`l` and may pair with it by the largest second-order decrease
    :math:`(F_l - F_u)^2 / \phi_u''(0)`, the rule of Fan, Chen & Lin (2005, JMLR
    6:1889) adapted to (5.6).

    **Linear path** (``method="linear"``, the default for the linear kernel). The scores
    need :math:`Kv` only through :math:`z = \sum_j v_j\mu_j = M^\top v` (:math:`\rho u` in the
    KKT conditions (C.2), :math:`w = (W/\rho)z` in (4.6)/(5.2), :math:`\rho = \|z\|`):
    :math:`(Kv)_j = \mu_j^\top z`. The linear path keeps :math:`z` (length :math:`d`)
    instead of :math:`Kv` and kernel columns (length :math:`k`): a pair update is
    :math:`z \mathrel{+}= \delta(\mu_u - \mu_l)`, :math:`O(d)`; a score, the curvature
    :math:`a = W^2\|\mu_l - \mu_u\|^2` and :math:`b = W^2\mu_u^\top z - W^2\mu_l^\top z` are
    :math:`O(d)` on demand (LIBLINEAR's dual coordinate descent idea, Hsieh et al., ICML
    2008); the working-set test recomputes all scores from :math:`z` (:math:`O(kd)`, no
    drift to remove). Same rules, stages, stopping test and certificate as the kernel
    path. Its loop runs compiled when numba can be imported (``engine``; module
    :mod:`conicml.solvers._cbor_numba`), which is where its speed comes from
    (``benchmarks/cbor_linear.py``).

    **Smoothing continuation (a departure from the thesis).** The objective is
    not differentiable where :math:`\rho = 0`, and with a rank-deficient
    :math:`K` (linear kernel, more clusters than dimensions) the whole subspace
    :math:`Kv = 0` is such a kink: plain pair updates drift into it and stall far
    from the optimum (measured: dual value 26.3 vs 119.4 on a 200-cluster,
    20-dimensional instance), because no two-variable move escapes a cone. The
    solver therefore minimises :math:`W\sqrt{v^\top K v + \epsilon^2} -
    d^\top(\alpha + \alpha^*)` — the same algorithm with :math:`c + W^2\epsilon^2`
    in (5.6) and :math:`g = W Kv/\sqrt{\rho^2 + \epsilon^2}` — starting from
    :math:`\epsilon = \rho_0`, solving each stage to
    :math:`\max(\texttt{tol}, 10^{-2}(\epsilon/\rho)^2\max|g|)` (its own bias),
    then :math:`\epsilon \leftarrow \epsilon/10`, and :math:`\epsilon = 0` once
    :math:`\epsilon \le 10^{-3}\rho`; the last stage is the exact problem with
    the exact stopping rule. ``smoothing=False`` runs the thesis's algorithm as
    is. When the optimum itself has :math:`\rho = 0` (the bound
    :math:`\|w\| \le W` inactive; the dual then does not determine :math:`w`),
    the exact stage stalls and the solver returns ``USER_LIMIT`` saying so.

    **Start.** The thesis asks for "non-trivial, feasible values":
    :math:`\alpha_j = \alpha^*_l = 1` for a cluster :math:`j` of rank :math:`i`
    and :math:`l` of rank :math:`i + 1` (both variables sit at threshold
    :math:`i`, so every :math:`D` is unchanged), the pair with the best dual value
    :math:`d_j + d_l - W\|\phi(\mu_j) - \phi(\mu_l)\|`.

    **Stopping criterion.** :math:`\max_i (B^i_{low} - B^i_{up}) \le \texttt{tol}`
    (the maximal KKT violation, in units of the score :math:`g`), checked after
    recomputing :math:`Kv` from scratch. Certificate:
    ``Residuals(primal = max(|D_{r-1}|, max(-D_i)), dual = max KKT violation,
    gap = |P - D|)``, :math:`D` the dual value and :math:`P` the primal total slack
    at :math:`w = W\sum_j v_j\phi(\mu_j)/\rho` and ordered thresholds
    :math:`\theta_i` (the midpoints of :math:`[B_{low}, B_{up}]`, made monotone);
    weak duality makes :math:`P - D \ge 0` a bound on the suboptimality.
    ``OPTIMAL`` is returned only when this certificate, recomputed from scratch
    (:math:`v` rebuilt from the variables, not the incremental copy), passes:
    violation :math:`\le` ``tol`` and :math:`P - D \le k\,\texttt{tol}\max(1, |D|)`;
    otherwise ``OPTIMAL_INACCURATE`` with the failing numbers.

    **Warm-start:** supported: ``x0 = (alpha, alpha_star)``, two feasible arrays of
    length ``k`` (clusters in the program's order).

    """
    t0 = time.perf_counter()
    data = _program_data(program)
    means = np.asarray(data["means"], dtype=float)
    ranks = np.asarray(data["ranks"], dtype=np.int64)
    r, W = int(data["r"]), float(data["W"])
    d = np.asarray(data["d"], dtype=float)
    k = ranks.size
    driver = Driver("cbor-smo", tol=tol, max_iter=_check_options(tol, max_iter, time_limit,
                                                                  cache_size, k),
                    time_limit=time_limit, messages=TERMINATION_MESSAGES,
                    statuses=STATUS_MAP, allow_zero=True, callback=callback,
                    legacy=lambda r: (r.iteration, r.values["alpha"], r.values["alpha_star"],
                                      r.residual),
                    report=_Report if verbose else None)
    if selection in _OLD_SELECTION:  # the names before 0.2, one release more
        warnings.warn(f"cbor-smo: selection={selection!r} is deprecated and will be removed in "
                      f"0.3; use {_OLD_SELECTION[selection]!r} (the name cbc-smo uses)",
                      FutureWarning, stacklevel=3)
        selection = _OLD_SELECTION[selection]
    if selection not in ("second-order", "max-violating"):
        raise OptionError("cbor-smo: selection must be 'second-order' or 'max-violating', "
                          f"got {selection!r}")
    linear = _resolve_method(method, data["kernel"])
    fast = _resolve_engine(engine)
    cols = _Columns(data["kernel"], means, float(cache_size))
    diag = cols.diagonal()
    if x0 is None:
        alpha, alpha_star = _initial_point(cols, diag, ranks, r, d, W,
                                           per_rank=512 if linear else None)
    else:
        alpha, alpha_star = _check_x0(x0, ranks, r)
    lay = _Layout(ranks, r, d, alpha, alpha_star)
    v = alpha_star - alpha
    op = _LinearScores(means, v) if linear else _KernelScores(cols, v)
    setup_time = time.perf_counter() - t0
    loop = _Loop(data, lay, op, v, cols, diag, driver, fast, selection == "second-order",
                 smoothing, setup_time)
    driver.start()
    reason = loop.run()
    return _solution(loop, reason, ranks, setup_time, driver.elapsed)


def _solution(loop: _Loop, reason: int, ranks: np.ndarray, setup_time: float,
              solve_time: float) -> Solution:
    """The Solution: the solver's thresholds and certificate recomputed from scratch; an
    OPTIMAL whose recomputed check fails is not certified."""
    lay, op, d, W, k, tol = loop.lay, loop.op, loop.d, loop.W, loop.lay.k, loop.driver.tol
    alpha, alpha_star = lay.split()
    v = alpha_star - alpha
    if not loop.refreshed:
        op.reset(v)
    Kv = op.scores()
    rho = math.sqrt(max(op.rho2(v), 0.0))
    D = lay.partial_sums()
    g, Flow, Fup, b_low, b_up, blk, B_low, B_up = lay.kkt(Kv, rho, D, W)
    violation = max(float(np.max(B_low - B_up)), 0.0)
    # the solver's thresholds: midpoints of [B_low, B_up], made monotone
    theta = midpoint_thresholds(B_low, B_up)
    dual_obj = float(d @ (alpha + alpha_star) - W * rho)
    ia, is_ = lay.ia, lay.is_
    xi = np.maximum(0.0, g[ia] + d[ia] - theta[ranks[ia] - 1]).sum()
    xi_star = np.maximum(0.0, theta[ranks[is_] - 2] - g[is_] + d[is_]).sum()
    primal_obj = float(xi + xi_star)
    feas = max(abs(float(D[-1])), float(np.max(-D[:-1], initial=0.0)), 0.0)
    status, message = loop.driver.finish(reason)
    gap = abs(primal_obj - dual_obj)
    gap_tol = max(1.0, abs(dual_obj)) * k * tol + 1e-9
    if reason == Reason.CONVERGED and not (violation <= tol and gap <= gap_tol):
        # never OPTIMAL when the solver's own certificate, recomputed from scratch, fails
        status = Status.OPTIMAL_INACCURATE
        message = (f"not certified: the final check recomputed from scratch gives KKT "
                   f"violation {violation:.3g} (tol {tol:.3g}) and primal - dual gap "
                   f"{gap:.3g} (allowed {gap_tol:.3g})")
    if reason not in (Reason.CONVERGED, KINK) and rho <= 1e-9 * max(
            1.0, float(np.abs(v).sum())) * math.sqrt(float(np.max(loop.diag, initial=1.0))):
        message += (" (rho -> 0: the bound ||w|| <= W is inactive at the optimum, so the dual"
                    " does not determine w; use a generic solver on form='primal' or a "
                    "smaller W)")
    if loop.driver.report is not None:
        print(f"\ncbor-smo: {message}")
        print(f"cbor-smo: dual objective {dual_obj:.10g}, primal - dual gap "
              f"{primal_obj - dual_obj:.3e}, {loop.n_iter} iterations")
    return Solution(
        status=status,
        solver="cbor-smo",
        objective=dual_obj,
        values={"alpha": alpha, "alpha_star": alpha_star},
        iterations=loop.n_iter,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=feas, dual=violation, gap=gap,
                            source="solver"),
        message=f"cbor-smo: {message}",
        extras={
            "kkt_violation": violation,
            "thresholds": theta,
            "primal_objective": primal_obj,  # P >= optimum >= objective (weak duality)
            "rho": rho,
            "kernel_columns": loop.cols.computed,
            "method": op.method,
            "engine": "numpy" if loop.fast is None else "numba",
            "stop_reason": reason,
            "smoothing_stages": loop.stages,
        },
    )
