r"""``smo``: sequential minimal optimization for the SVM dual (kind ``"qp.svm.dual"``).

The program is the soft-margin SVM dual with per-sample costs :math:`c_i > 0`

.. math::

    \max_{\alpha}\; e^\top\alpha - \tfrac12 \alpha^\top Q \alpha
    \quad\text{s.t.}\quad 0 \le \alpha_i \le c_i,\; y^\top\alpha = 0,
    \qquad Q_{ij} = y_i y_j K_{ij},

solved, as LIBSVM does, as the minimisation of
:math:`f(\alpha) = \tfrac12\alpha^\top Q\alpha - e^\top\alpha` with gradient
:math:`G = \nabla f(\alpha) = Q\alpha - e`.

**Algorithm.** SMO (Platt 1998) with the second-order working-set selection
*WSS2* of Fan, Chen & Lin (2005), "Working set selection using second order
information for training support vector machines", JMLR 6:1889-1918, exactly
as in LIBSVM (Chang & Lin 2011, ACM TIST 2(3), Sec. 4.1, and ``Solver`` in
``svm.cpp``). With

.. math::

    I_{up} = \{t : \alpha_t < c_t, y_t = 1 \text{ or } \alpha_t > 0, y_t = -1\},\quad
    I_{low} = \{t : \alpha_t < c_t, y_t = -1 \text{ or } \alpha_t > 0, y_t = 1\},

each iteration picks

.. math::

    i \in \arg\max_{t \in I_{up}} -y_t G_t, \qquad
    j \in \arg\min_{t \in I_{low},\, -y_t G_t < -y_i G_i}
        -\frac{b_{it}^2}{\bar a_{it}},\quad
    b_{it} = -y_i G_i + y_t G_t,\;
    \bar a_{it} = \begin{cases} a_{it} & a_{it} > 0 \\ \tau & \text{else}\end{cases},

with :math:`a_{it} = K_{ii} + K_{tt} - 2K_{it}` and :math:`\tau = 10^{-12}`,
solves the two-variable subproblem in closed form, clips it to the box while
keeping :math:`y^\top\alpha` fixed, and updates :math:`G` with two Gram columns.

**Stopping criterion.** With :math:`m(\alpha) = \max_{t\in I_{up}} -y_t G_t`
and :math:`M(\alpha) = \min_{t\in I_{low}} -y_t G_t`, the loop stops when the
maximal KKT violation satisfies

.. math::

    m(\alpha) - M(\alpha) \le \texttt{tol}

on the full index set (LIBSVM's ``-e``, default :math:`10^{-3}`). The
returned certificate is ``Residuals(primal=max(|y^T alpha|, box violation),
dual=max(m - M, 0), gap=P - D)``, where :math:`D` is the dual objective and
:math:`P = \tfrac12\alpha^\top Q\alpha + \sum_i c_i\max(0, 1 - y_i f(x_i))`
is the primal objective at the :math:`(w, b)` implied by :math:`\alpha`.

**Offset.** The decision function is :math:`f(x) = \sum_j \alpha_j y_j
K(x_j, x) + b`, so :math:`b = -\rho` of LIBSVM: the average of
:math:`-y_t G_t` over the free variables, or the midpoint of the feasible
interval when no variable is free.

**Kernel columns.** Gram columns come from ``kernel.columns`` through an LRU
cache holding at most ``cache_size`` MB, and at least two columns: in the NumPy loop
an :class:`collections.OrderedDict` of full columns; in the compiled loop one array
whose columns cover every variable while the cache has room, and only the working
(active) set once the cache is full and shrinking has at least halved it — LIBSVM's
columns of the active length, so that :math:`n / m` times more of them fit. The
compiled loop stores the columns in float32 at LIBSVM's tolerances (``column_dtype``,
LIBSVM's ``Qfloat``) and accumulates the gradient in float64: twice as many columns fit,
so that the gradient can be rebuilt from stored columns instead of fresh kernel values
at each reconstruction. A stored value's rounding
(:math:`2^{-24}` relative) enters :math:`G_t` once per column, as
:math:`\sum_j \alpha_j y_j \delta K_{tj}`, not once per update, and the returned point
is certified by the program's own float64 certificate.

**Shrinking.** LIBSVM's heuristic (``do_shrinking``/``be_shrunk``): every
:math:`\min(n, 1000)` iterations, bounded variables that cannot take part in a
violating pair (their score lies beyond :math:`m` or :math:`M`) leave the
active set; the first time :math:`m - M \le 10\,\texttt{tol}` on the active
set, the gradient is reconstructed and the full set becomes active again; when
the shrunk problem converges, the gradient is reconstructed from
:math:`\bar G_k = \sum_{\alpha_t = c_t} c_t Q_{kt}` and the stopping
criterion is re-checked on the full set, so the returned :math:`\alpha`
always meets the criterion on every variable. Departures from LIBSVM: after an
un-shrink, :math:`m` and :math:`M` are recomputed on the full set before shrinking
again (LIBSVM reuses the active-set values), which shrinks no more than LIBSVM does;
polishing (below) does not un-shrink early a second time; and the compiled loop,
after the re-check on the full set fails, shrinks at once instead of after one
iteration on every variable. While the compiled loop's columns cover only the working
set, :math:`\bar G` is not updated per step but from the variables whose bound status
changed, at the next reconstruction.

**Polishing** (``gap_tol``, default :math:`9\cdot10^{-4}`). The stop on
:math:`m - M` is absolute, so with large costs (C = 100) a point at
:math:`m - M \le 10^{-3}` can keep a relative primal - dual gap of 2e-3..1e-2 and fail
the program's certificate (``certify_tol`` 1e-3). After convergence the loop evaluates
the number that certificate will recompute — the relative gap
:math:`\max(P - D, 0)/\max(1, |P|)` with the certificate's bias rule — from
:math:`G` in :math:`O(n)` (no kernel value: :math:`K(\alpha\circ y) = y - F`); only
while it exceeds ``gap_tol`` does the loop go on at ``tol / 10`` (at most three times),
so a point that is already certified stops at LIBSVM's criterion and the returned
OPTIMAL is a certified one. The default keeps 10 % of ``certify_tol`` for the
round-off of the incrementally updated gradient. ``gap_tol=None`` is LIBSVM's stop.
While polishing, the stop targets the certificate's own number: every
:math:`\min(n, 1000)/4` iterations the gap is estimated from the working set's gradient
(the working set's terms of :math:`P - D`, a sum of nonnegative per-variable terms; the
shrunk variables' are taken as zero, which is what shrinking assumes); once
it meets ``gap_tol`` the gradient is completed and the point is returned if
:math:`m - M \le \texttt{tol}` on every variable and the complete gap meets ``gap_tol``
(else the loop goes on, shrunk again). A shrunk set converged at the current tolerance
whose estimate exceeds :math:`2\,\texttt{gap\_tol}` goes on at ``tol / 10`` without the
full re-check, which saves a gradient reconstruction.

**Engines.** The loop runs compiled (:mod:`conicml.solvers._smo_numba`) when numba
can be imported, else in NumPy; both are the same algorithm
and are tested against each other. The compiled loop works on contiguous copies of
the working set's arrays (LIBSVM keeps its active set at the front by swapping) and
returns to Python only for a missing column, a converged working set or every
:math:`\min(n, 1000)` iterations (shrinking, limits, reports). Why: the NumPy loop
pays ~15 array calls and the interpreter per two-variable update, which dominates a
solve once the certificate's Gram product is cut to the support vectors
(``benchmarks/smo_profile.py``). The solver runs on one BLAS thread (as LIBSVM):
its products are one Gram column at a time.

**Warm-start:** supported. ``x0`` is a feasible :math:`\alpha`
(:math:`0 \le \alpha \le c` and :math:`y^\top\alpha = 0` up to
:math:`10^{-9}\max(1, \sum_i c_i)`); the gradient is rebuilt from it (or taken from
``x0_products``), so an optimal ``x0`` stops after 0 iterations. Along a C path
(:func:`conicml.solve_path`) the previous active set predicts the next :math:`\alpha`
(:func:`conicml.solvers._warm.smo_alpha`).
"""

from __future__ import annotations

import functools
import math
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import kinds
from .._utils.threads import one_blas_thread
from ..certificates.kkt import bias_from_kkt
from ..exceptions import OptionError, ProgramError, SolverError
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback, IntermediateResult, stopper
from ._options import check_cache_size, check_common, load_engine
from ._report import IterationReport
from ._smo_pair import TAU as _PAIR_TAU
from ._smo_pair import clip_pair
from ._warm import smo_alpha

__all__ = ["TERMINATION_MESSAGES", "solve_smo"]

#: Stop reason -> message; 0 is convergence, every other reason is a user limit.
TERMINATION_MESSAGES: dict[int, str] = {
    0: "converged: maximal KKT violation m(alpha) - M(alpha) <= tol on all variables",
    1: "maximum number of iterations reached (max_iter)",
    2: "time limit reached (time_limit)",
    3: "stopped by the callback",
    4: ("stalled: alpha moved by less than 1e-6 of max(c) in the last {window} iterations "
        "while the maximal KKT violation m - M = {viol:.3g} > tol: pairwise updates make "
        "no progress on this kernel matrix (ill-conditioned, e.g. features on very "
        "different scales: standardize X, or use a generic solver such as 'clarabel')"),
}

#: Stop reason -> Status; a non-converged result is returned, never raised.
STATUS_MAP: dict[int, Status] = {
    0: Status.OPTIMAL,
    1: Status.USER_LIMIT,
    2: Status.USER_LIMIT,
    3: Status.USER_LIMIT,
    4: Status.USER_LIMIT,
}

TAU = _PAIR_TAU  # curvature used when a_ij <= 0 (LIBSVM's TAU; one constant with clip_pair)
POLISH_SKIP = 2.0  # polishing without a full re-check when the gap estimate exceeds 2 gap_tol
GAP_RTOL = 1e-2  # largest relative primal - dual gap with which a converged run is OPTIMAL
FLOAT32_MIN_TOL = 1e-5  # column_dtype="auto": float32 columns from this tol up
_BLOCK_BYTES = 32 * 2**20  # largest block of Gram columns computed at once


class _ColumnCache:
    """LRU cache of full Gram columns ``K[:, i]`` (original sample order)."""

    def __init__(self, kernel: Any, X: np.ndarray, n: int, cache_size: float) -> None:
        self.kernel = kernel
        self.X = X
        self.n = n
        self.capacity = max(2, min(n, int(cache_size * 2**20 // (8 * n))))
        self.block = max(1, min(self.capacity, _BLOCK_BYTES // (8 * n)))
        self._cols: OrderedDict[int, np.ndarray] = OrderedDict()
        self.computed = 0  # Gram columns computed (of the working set's length)
        self.values = 0  # kernel values computed
        self.hits = 0
        # squared norms of the rows, computed once: an RBF column is then one
        # matrix-vector product and one exp (kernel.columns recomputes them per call)
        self._sq = (np.einsum("ij,ij->i", X, X)
                    if getattr(kernel, "name", None) == "rbf" and X.ndim == 2 else None)

    def _compute(self, idx: np.ndarray) -> np.ndarray:
        if self._sq is not None and len(idx) == 1:
            i = int(idx[0])
            dist = self._sq + (self._sq[i] - 2.0 * (self.X @ self.X[i]))
            np.maximum(dist, 0.0, out=dist)
            dist *= -float(self.kernel.gamma)
            self.computed += 1
            self.values += self.n
            return np.exp(dist, out=dist)[:, None]
        if self._sq is not None:  # a block of RBF columns in place from the row norms
            block = self._rbf_block(self.X, self._sq, idx)
            self.computed += len(idx)
            self.values += block.size
            return block
        block = np.asarray(self.kernel.columns(self.X, idx), dtype=float)
        if block.shape != (self.n, len(idx)):
            raise SolverError(
                f"kernel.columns returned shape {block.shape}, expected {(self.n, len(idx))}"
            )
        self.computed += len(idx)
        self.values += block.size
        return block

    def _rbf_block(self, Xr: np.ndarray, sqr: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """RBF values between the rows ``Xr`` (squared norms ``sqr``) and the columns
        ``cols`` (original indices), in place (kernel.columns recomputes the norms and
        allocates four temporaries per block, which the gradient reconstruction's
        columns would pay each time)."""
        block = Xr @ self.X[cols].T
        block *= -2.0
        block += sqr[:, None]
        block += self._sq[cols][None, :]
        np.maximum(block, 0.0, out=block)
        block *= -float(self.kernel.gamma)
        return np.exp(block, out=block)

    def _store(self, i: int, col: np.ndarray) -> None:
        self._cols[i] = col
        if len(self._cols) > self.capacity:
            self._cols.popitem(last=False)

    def _compute_and_store(self, i: int) -> np.ndarray:
        """Compute the full column ``i``, store it and return it (a cache miss)."""
        col = np.ascontiguousarray(self._compute(np.array([i]))[:, 0])
        self._store(i, col)
        return col

    def _add_computed(self, out: np.ndarray, idx: np.ndarray, pos: np.ndarray,
                      coef: np.ndarray) -> None:
        """``out += K[:, idx[pos]] @ coef[pos]`` for missed columns, computed a block at a
        time and stored."""
        for start in range(0, len(pos), self.block):
            part = pos[start:start + self.block]
            block = self._compute(idx[part])
            out += block @ coef[part]
            for k, p in enumerate(part):
                self._store(int(idx[p]), np.ascontiguousarray(block[:, k]))

    def get(self, i: int) -> np.ndarray:
        """Column ``i`` (a cached array: do not modify it)."""
        col = self._cols.get(i)
        if col is not None:
            self.hits += 1
            self._cols.move_to_end(i)
            return col
        return self._compute_and_store(i)

    def matvec(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``K[:, idx] @ coef`` for ``coef`` of shape (len(idx),) or (len(idx), k)."""
        out = np.zeros((self.n,) + coef.shape[1:])
        if len(idx) == 0:
            return out
        cached = np.array([int(i) in self._cols for i in idx], dtype=bool)
        hit_pos = np.flatnonzero(cached)
        for start in range(0, len(hit_pos), self.block):
            pos = hit_pos[start:start + self.block]
            cols = [self._cols[int(idx[p])] for p in pos]
            for p in pos:
                self._cols.move_to_end(int(idx[p]))
            out += np.stack(cols, axis=1) @ coef[pos]
            self.hits += len(pos)
        self._add_computed(out, idx, np.flatnonzero(~cached), coef)
        return out


class _StoreCache(_ColumnCache):
    """The column cache of the compiled loop: Gram columns of the working set, in one array.

    The working set is ``basis`` (original indices, increasing; ``None``: all ``n``
    variables), of size ``m``. ``store[slot_of[p]]`` is the Gram column of working
    position ``p`` restricted to the working set, ``m`` floats (``slot_of[p] = -1``:
    not stored). The store is a view of one flat buffer of the cache's memory, so a
    shrunk working set holds ``n / m`` times more columns (LIBSVM's cache of columns
    of the active length, ``Cache::swap_index``): :meth:`rebasis` gathers the stored
    columns in place when the working set shrinks and completes the recently used ones
    when variables return.
    The compiled loop stamps a slot with a clock each time it uses it and the least
    recently used slot is the one replaced (LRU, as :class:`_ColumnCache`).
    """

    def __init__(self, kernel: Any, X: np.ndarray, n: int, cache_size: float,
                 dtype: Any = np.float64) -> None:
        super().__init__(kernel, X, n, cache_size)
        self.dtype = np.dtype(dtype)
        # the memory bound, in stored values (float32: twice as many columns, LIBSVM's Qfloat)
        self.capacity = max(2, min(n, int(cache_size * 2**20 // (self.dtype.itemsize * n))))
        self.floats = self.capacity * n
        self.buf = np.empty(self.floats, dtype=self.dtype)  # pages are touched only when used
        self.clock = np.zeros(1, dtype=np.int64)  # column uses inside the compiled loop
        self.gather: Any = None  # compiled out += store[slots].T @ coef (set by the caller)
        self.compact: Any = None  # compiled in-place gather of stored rows (set by the caller)
        self.min_length = n  # shortest stored columns so far
        self.borrowed = False  # the store is the program's own Gram matrix (borrow)
        self.reset_full()

    def borrow(self) -> None:
        """Make a precomputed float64 Gram matrix in column-major order the store itself:
        its transpose's rows are its columns, so every column is present and none is
        computed or copied (a path over C solves on one Gram matrix). The working set's
        columns are then never gathered (``rebasis`` keeps the full basis)."""
        self.store = self.X.T
        self.cap = self.used = self.n
        self.slot_of = np.arange(self.n, dtype=np.int64)
        self.col_of = np.arange(self.n, dtype=np.int64)
        self.stamp = np.zeros(self.n, dtype=np.int64)
        self.borrowed = True

    def _layout(self, m: int) -> None:
        self.m = m
        self.cap = max(2, min(m, self.floats // m))
        self.store = self.buf[:self.cap * m].reshape(self.cap, m)
        self.slot_of = np.full(m, -1, dtype=np.int64)
        self.col_of = np.full(self.cap, -1, dtype=np.int64)
        self.stamp = np.zeros(self.cap, dtype=np.int64)

    def reset_full(self) -> None:
        """Every variable in the working set; the stored columns are dropped."""
        self.basis: np.ndarray | None = None
        self.Xb = self.sqb = None
        self.used = 0
        self._layout(self.n)

    def cross(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Kernel values ``K[rows][:, cols]`` (original indices), counted."""
        if self.kernel.name == "precomputed":
            block = np.asarray(self.X[np.ix_(rows, cols)], dtype=float)
        elif self._sq is not None:  # RBF in place from the cached row norms
            block = self._rbf_block(self.X[rows], self._sq[rows], cols)
        else:
            block = np.asarray(self.kernel(self.X[rows], self.X[cols]), dtype=float)
        self.values += block.size
        return block

    def rebasis(self, new: np.ndarray | None, recent: int) -> None:
        """Make ``new`` (original indices, increasing; ``None``: all) the working set.

        A smaller working set inside the old one (shrinking) gathers every stored column
        in place. Otherwise (variables return, after the gradient reconstruction) the
        columns used in the last ``recent`` clock ticks whose variable stays in the
        working set are kept, at most as many as fit, and completed with their rows for
        the returning variables (LIBSVM completes a cached column when it is next asked
        for, ``Cache::get_data``); the others are dropped. A borrowed store keeps every
        variable.
        """
        if self.borrowed:
            return
        old = np.arange(self.n) if self.basis is None else self.basis
        new_idx = np.arange(self.n) if new is None else new
        where = np.full(self.n, -1, dtype=np.int64)
        where[old] = np.arange(old.size)
        pos_old = where[new_idx]  # each new member's position in the old working set
        if new_idx.size == old.size and np.all(pos_old >= 0):
            return  # the same set
        if new_idx.size < old.size and np.all(pos_old >= 0):
            self._shrink_in_place(pos_old)
            return
        slot_new = np.full(self.n, -1, dtype=np.int64)
        slot_new[new_idx] = np.arange(new_idx.size)
        live = np.flatnonzero(self.stamp[:self.used] > self.clock[0] - recent)
        orig = old[self.col_of[live]]
        stays = slot_new[orig] >= 0
        live, orig = live[stays], orig[stays]
        cap_new = max(2, min(new_idx.size, self.floats // new_idx.size))
        order = np.argsort(-self.stamp[live], kind="stable")[:cap_new]
        live, orig = live[order], orig[order]
        kept = self.store[live].copy()
        stamps = self.stamp[live].copy()
        have = np.flatnonzero(pos_old >= 0)
        back = np.flatnonzero(pos_old < 0)
        if new is None:
            self.reset_full()
        else:
            self._set_basis(new)
        L = live.size
        if L:
            self.store[np.ix_(np.arange(L), have)] = kept[:, pos_old[have]]
            step = max(1, _BLOCK_BYTES // (8 * max(1, back.size)))
            for start in range(0, L, step):
                ks = np.arange(start, min(start + step, L))
                self.store[np.ix_(ks, back)] = self.cross(new_idx[back], orig[ks]).T
        self.used = L
        cols = slot_new[orig]
        self.col_of[:L] = cols
        self.stamp[:L] = stamps
        self.slot_of[cols] = np.arange(L)

    def _set_basis(self, basis: np.ndarray) -> None:
        self.basis = basis
        self.min_length = min(self.min_length, basis.size)
        self.used = 0
        self._layout(basis.size)
        if self.kernel.name == "precomputed":
            self.Xb = None
        else:
            self.Xb = np.ascontiguousarray(self.X[basis])
            self.sqb = None if self._sq is None else self._sq[basis]

    def _shrink_in_place(self, keep: np.ndarray) -> None:
        """Restrict the working set to its positions ``keep`` (increasing)."""
        m_old = self.m
        newpos = np.full(m_old, -1, dtype=np.int64)
        newpos[keep] = np.arange(keep.size)
        old_cols = self.col_of[:self.used]
        rows = np.flatnonzero(newpos[old_cols] >= 0)
        stamps = self.stamp[rows].copy()
        cols = newpos[old_cols[rows]]
        self.compact(self.buf, rows, m_old, keep.size, np.ascontiguousarray(keep, np.int64),
                     np.empty(keep.size, dtype=self.dtype))
        self._set_basis(keep if self.basis is None else self.basis[keep])
        self.used = rows.size  # the new capacity is at least the old one: every row fits
        self.col_of[:self.used] = cols
        self.stamp[:self.used] = stamps
        self.slot_of[cols] = np.arange(self.used)

    def _column(self, p: int) -> np.ndarray:
        """Gram column of working position ``p`` on the working set."""
        if self.basis is None:
            return self._compute(np.array([p]))[:, 0]
        self.computed += 1
        self.values += self.m
        i = int(self.basis[p])
        if self.kernel.name == "precomputed":
            return np.asarray(self.X[self.basis, i], dtype=float)
        if self.sqb is not None:
            dist = self.sqb + (self.sqb[p] - 2.0 * (self.Xb @ self.Xb[p]))
            np.maximum(dist, 0.0, out=dist)
            dist *= -float(self.kernel.gamma)
            return np.exp(dist, out=dist)
        return np.asarray(self.kernel.columns(self.Xb, np.array([p])), dtype=float)[:, 0]

    def _store(self, p: int, col: np.ndarray) -> None:
        if self.used < self.cap:
            slot = self.used
            self.used += 1
        else:
            slot = int(np.argmin(self.stamp))
            self.slot_of[self.col_of[slot]] = -1
        self.store[slot] = col
        self.col_of[slot] = p
        self.slot_of[p] = slot
        self.stamp[slot] = self.clock[0]

    def fetch(self, p: int) -> None:
        """Compute the column of working position ``p`` and store it."""
        self._store(p, self._column(p))

    def get(self, i: int) -> np.ndarray:
        if self.basis is not None:
            raise SolverError("smo: full Gram columns asked while the working set is shrunk")
        slot = int(self.slot_of[i])
        if slot >= 0:
            self.hits += 1
            return self.store[slot]
        return self._compute_and_store(i)

    def matvec(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        out = np.zeros((self.n,) + coef.shape[1:])
        if len(idx) == 0:
            return out
        if self.basis is not None:  # the stored columns are partial: compute all
            for start in range(0, len(idx), self.block):
                pos = np.arange(start, min(start + self.block, len(idx)))
                out += self._compute(idx[pos]) @ coef[pos]
            return out
        slots = self.slot_of[idx]
        hit = np.flatnonzero(slots >= 0)
        if hit.size:
            if self.gather is not None and coef.ndim == 1:
                self.gather(self.store, np.ascontiguousarray(slots[hit]),
                            np.ascontiguousarray(coef[hit], dtype=float), out)
            else:
                out += self.store[slots[hit]].T @ coef[hit]
            self.hits += hit.size
        self._add_computed(out, idx, np.flatnonzero(slots < 0), coef)
        return out


def _one_blas_thread(function: Any) -> Any:
    """Run ``function`` on one BLAS thread, as LIBSVM runs.

    The loop's products are thin (one Gram column at a time): waking a BLAS thread pool
    for each costs more than the product. The limit
    uses the process's one cached controller (:func:`conicml._utils.threads.blas_controller`).
    """

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with one_blas_thread():
            return function(*args, **kwargs)

    return wrapper


def _terms(alpha: np.ndarray, F: np.ndarray, y: np.ndarray, c: np.ndarray,
           pos: np.ndarray) -> tuple[float, float, float, float]:
    """Offset ``b``, dual and primal objectives and their relative gap from ``F = -y G``."""
    yG = -F  # y_t * G_t
    at_up, at_low = alpha >= c, alpha <= 0
    free = ~at_up & ~at_low
    if free.any():
        rho = float(yG[free].mean())
    else:
        ub_set = (at_up & ~pos) | (at_low & pos)
        lb_set = (at_up & pos) | (at_low & ~pos)
        ub = float(yG[ub_set].min()) if ub_set.any() else math.inf
        lb = float(yG[lb_set].max()) if lb_set.any() else -math.inf
        if math.isfinite(ub) and math.isfinite(lb):
            rho = 0.5 * (ub + lb)
        else:
            rho = ub if math.isfinite(ub) else (lb if math.isfinite(lb) else 0.0)
    b = -rho
    G = -y * F
    quad_form = float(alpha @ (G + 1.0))  # alpha^T Q alpha
    dual_obj = float(alpha.sum()) - 0.5 * quad_form
    hinge = np.maximum(0.0, y * (F - b))  # 1 - y_i f(x_i) = y_i (F_i - b)
    primal_obj = 0.5 * quad_form + float(c @ hinge)
    rel_gap = (primal_obj - dual_obj) / max(1.0, abs(primal_obj), abs(dual_obj))
    return b, dual_obj, primal_obj, rel_gap


def _certificate_gap(alpha: np.ndarray, F: np.ndarray, y: np.ndarray, c: np.ndarray,
                     accuracy: float) -> float:
    r"""The relative gap conicml's certificate of the SVM dual will recompute, from ``F``.

    The program's certificate (``formulations/svm.py``, ``_certify_dual``) evaluates
    :math:`g = K(\alpha\circ y)` afresh and reports
    :math:`\max(P - D, 0)/\max(1, |P|)` with the bias of
    :func:`conicml.certificates.kkt.bias_from_kkt`. The loop's ``F = -y G`` gives the same
    :math:`g = y - F` in :math:`O(n)` (no kernel value), so this is the same number up
    to the round-off of the incrementally updated gradient; the polishing decision is
    taken on it (a rule of its own could polish a point the certificate already
    accepts).
    """
    a = np.clip(alpha, 0.0, c)
    g = y - F
    v = a * y
    b = bias_from_kkt(a, y, c, F, accuracy)
    quad = float(v @ g)
    P = 0.5 * quad + float(c @ np.maximum(0.0, 1.0 - y * (g + b)))
    D = float(a.sum()) - 0.5 * quad
    return max(P - D, 0.0) / max(1.0, abs(P))


def _working_gap(alpha: np.ndarray, F: np.ndarray, y: np.ndarray, c: np.ndarray,
                 accuracy: float, active: np.ndarray) -> float:
    r"""The certificate's relative gap (:func:`_certificate_gap`) on a shrunk working set.

    With :math:`s_i = y_i(F_i - b)`, :math:`P - D = \sum_i [c_i\max(0, s_i) -
    \alpha_i s_i] - b\,y^\top\alpha`, a sum of nonnegative terms; the shrunk variables'
    terms are taken as zero, which is what shrinking assumes (they left the working set
    because they could not violate; their stored ``F`` is stale, and counting it made
    the estimate ~10x too large on mammography C = 100). A trigger only: every decision
    to stop is verified on the complete gradient.
    """
    a = np.clip(alpha, 0.0, c)
    b = bias_from_kkt(a, y, c, F, accuracy)
    s = y * (F - b)
    hinge = np.maximum(0.0, s)
    terms = c[active] * hinge[active] - a[active] * s[active]
    P = 0.5 * float(a @ (1.0 - y * F)) + float(c @ hinge)
    return max(float(terms.sum()) - b * float(y @ a), 0.0) / max(1.0, abs(P))


class _Report(IterationReport):
    """Fixed-width iteration table (the layout of scipy's trust-constr report)."""

    COLUMN_NAMES = ["iter", "active", "m - M", "n_SV", "kernel cols", "cache hits", "time [s]"]
    COLUMN_WIDTHS = [10, 8, 11, 8, 12, 12, 10]
    ITERATION_FORMATS = ["^10", "^8", "^11.3e", "^8", "^12", "^12", "^10.3f"]

    @classmethod
    def print_footer(cls, message: str, objective: float, gap: float) -> None:
        print()
        print(f"smo: {message}")
        print(f"smo: dual objective {objective:.10g}, primal - dual gap {gap:.3e}")


def _check_options(tol: float, max_iter: int | None, time_limit: float | None,
                   cache_size: float, n: int) -> int:
    if max_iter is None:
        # bounds a hopeless small run to seconds (LIBSVM's 1e7 can take minutes)
        max_iter = max(100_000, 1000 * n)
    check_common("smo", tol, max_iter, time_limit, allow_zero=True)
    check_cache_size("smo", cache_size)
    return int(max_iter)


def _check_data(program: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    kind = getattr(program, "kind", None)
    if kind != kinds.SVM_DUAL:
        raise SolverError(f"solver 'smo' accepts programs of kind 'qp.svm.dual', got {kind!r}")
    data = getattr(program, "data", None)
    if not isinstance(data, Mapping):
        raise SolverError("smo: the program has no data mapping")
    missing = [key for key in ("X", "y", "c", "kernel") if key not in data]
    if missing:
        raise SolverError(
            f"smo: program data lacks {', '.join(map(repr, missing))}; a 'qp.svm.dual' "
            "program carries 'X', 'y', 'c' and 'kernel'"
        )
    kernel = data["kernel"]
    if not (callable(getattr(kernel, "columns", None))
            and callable(getattr(kernel, "diagonal", None))):
        raise SolverError(
            f"smo: data['kernel'] must be a conicml.kernels.Kernel, got {type(kernel).__name__}"
        )
    X = np.asarray(data["X"])
    y = np.asarray(data["y"], dtype=float)
    c = np.asarray(data["c"], dtype=float)
    if X.ndim != 2:
        raise ProgramError(f"smo: X must be 2-D, got shape {X.shape}")
    n = X.shape[0]
    if y.shape != (n,) or c.shape != (n,):
        raise ProgramError(
            f"smo: y and c must have shape ({n},) to match X, got {y.shape} and {c.shape}"
        )
    if n < 2:
        raise ProgramError(f"smo: needs at least two samples, got {n}")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ProgramError("smo: labels y must be exactly +1.0 or -1.0")
    if not (np.any(y > 0) and np.any(y < 0)):
        raise ProgramError("smo: y contains a single class; the SVM dual needs both +1 and -1")
    if np.any(np.isnan(c)) or np.any(c <= 0):
        raise ProgramError("smo: costs c must be positive (no NaN, no zeros)")
    if np.any(np.isinf(c)):
        raise SolverError(
            "smo: infinite costs c (hard margin) are not accepted: SMO needs a bounded box "
            "0 <= alpha <= c; use a finite C (e.g. 1e6) or a generic solver such as 'clarabel'"
        )
    return X, y, c, kernel


def _check_x0(x0: Any, y: np.ndarray, c: np.ndarray) -> np.ndarray:
    alpha = np.array(x0, dtype=float, copy=True)
    n = y.shape[0]
    if alpha.shape != (n,):
        raise OptionError(f"smo: x0 must have shape ({n},), got {alpha.shape}")
    if not np.all(np.isfinite(alpha)):
        raise OptionError("smo: x0 contains NaN or infinite entries")
    feas_tol = 1e-9 * max(1.0, float(c.sum()))
    box = float(max(np.max(-alpha), np.max(alpha - c), 0.0))
    eq = abs(float(y @ alpha))
    if box > feas_tol or eq > feas_tol:
        raise OptionError(
            f"smo: x0 is not feasible (box violation {box:.3g}, |y^T x0| = {eq:.3g}, "
            f"tolerance {feas_tol:.3g}); a warm start must satisfy 0 <= x0 <= c and y^T x0 = 0"
        )
    return np.clip(alpha, 0.0, c)


@register("smo", kinds=[kinds.SVM_DUAL], specialized=True, requires=("numpy",),
          compare_options={"tol": 1e-8}, warm_start=smo_alpha,
          certify_tol=1e-3)  # default tol 1e-3 on the KKT violation m - M (LIBSVM's)
@_one_blas_thread
def solve_smo(
    program,
    *,
    tol: float = 1e-3,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    shrinking: bool = True,
    cache_size: float = 200.0,
    x0: np.ndarray | None = None,
    x0_products: tuple[np.ndarray, np.ndarray] | None = None,
    callback: Callback | None = None,
    gap_tol: float | None = 9e-4,
    engine: str = "auto",
    column_dtype: str = "auto",
) -> Solution:
    r"""SMO with second-order working-set selection (LIBSVM) for the SVM dual.

    Parameters
    ----------
    program : Program
        A program of kind ``"qp.svm.dual"`` whose ``data`` holds ``X``
        (``(n, d)`` inputs, or the ``(n, n)`` Gram matrix for a precomputed
        kernel), ``y`` (labels in :math:`\{-1, +1\}`), ``c`` (finite
        per-sample costs :math:`c_i > 0`) and ``kernel``.
    tol : float, default=1e-3
        Stop when :math:`m(\alpha) - M(\alpha) \le \texttt{tol}` on every
        variable (the maximal KKT violation; LIBSVM's ``-e``).
    max_iter : int, optional
        Maximal number of two-variable updates; ``None`` means
        :math:`\max(10^5, 1000 n)` (LIBSVM's :math:`10^7` let a hopeless run of
        20 points go on for minutes). Independently, a run whose :math:`\alpha`
        moves by less than :math:`10^{-6}\max c` in
        :math:`\max(10^4, 100 n)` iterations while :math:`m - M > \texttt{tol}` stops
        as stalled (``USER_LIMIT``, the reason in the message).
    time_limit : float, optional
        Wall-clock limit in seconds for the iterations.
    verbose : bool, default=False
        Print a table every :math:`\min(n, 1000)` iterations and a summary.
    shrinking : bool, default=True
        Use LIBSVM's shrinking heuristic (see the module docstring).
    cache_size : float, default=200.0
        Memory bound of the Gram-column cache, in MB.
    x0 : ndarray of shape (n,), optional
        Feasible warm start :math:`\alpha`; raises :class:`OptionError` if
        infeasible.
    x0_products : (ndarray, ndarray), optional
        :math:`(K(x_0\circ y), K_{:,B}(c_B\circ y_B))` with :math:`B = \{i : x_{0,i}
        \ge c_i\}`, from the program's kernel, when the caller has them (a path's warm
        start computed them from the columns it holds): the initial gradient is then
        not recomputed. Only with ``x0``; the returned point is certified by the
        program either way.
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (a copy of :math:`\alpha` in
        ``values["alpha"]``, ``residual`` :math:`m - M` on the active set);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    gap_tol : float or None, default=9e-4
        Polishing target. When the loop has converged at ``tol``, the relative gap that
        the program's certificate will recompute, :math:`\max(P - D, 0)/\max(1, |P|)`
        (the certificate's bias rule), is evaluated from the gradient in :math:`O(n)`;
        only if it exceeds ``gap_tol`` (at C = 100 the absolute ``tol`` on
        :math:`m - M` can leave gaps of 2e-3..1e-2) does the loop go on at ``tol / 10``,
        up to three times (``tol / 1000``), so that the returned point passes the
        certificate (``certify_tol`` 1e-3 for smo; the default keeps 10 % of it for the
        round-off of the incrementally updated gradient); while it does, it returns as
        soon as the gap meets ``gap_tol`` with :math:`m - M \le \texttt{tol}` on every
        variable (checked periodically, see the module docstring). ``None`` stops at ``tol`` as
        LIBSVM does. ``extras["polish_tol"]`` is the last ``tol`` used and
        ``extras["certificate_gap_estimate"]`` the gap at the last decision (NaN when
        none was taken).
    engine : {"auto", "numba", "numpy"}, default="auto"
        ``"numba"``: the compiled loop of :mod:`conicml.solvers._smo_numba`;
        ``"numpy"``: the NumPy loop; ``"auto"``: numba when it can be imported
        (the environment variable ``CONICML_ENGINE`` overrides ``"auto"``). Both
        run the same algorithm (tested against each other); the first compiled
        solve in a process loads the compiled code (about a second the very first
        time, while numba caches it on disk).

    column_dtype : {"auto", "float32", "float64"}, default="auto"
        Storage of the compiled loop's cached Gram columns (the NumPy loop stores
        float64). ``"float32"`` is LIBSVM's ``Qfloat``: twice as many columns fit in
        ``cache_size``, and the gradient is still accumulated in float64 (a column's
        rounding, :math:`2^{-24}` relative, enters :math:`G` once per column and
        variable, not once per update). ``"auto"``: float32 when ``tol`` :math:`\ge
        10^{-5}` (LIBSVM's regime), float64 for tighter tolerances, and float64 with no
        column stored at all when the program's precomputed Gram matrix is float64 in
        column-major order (its columns are read in place). The returned point is
        certified by the program's certificate, recomputed in float64.

    Returns
    -------
    Solution
        ``objective`` is the dual maximum :math:`e^\top\alpha -
        \tfrac12\alpha^\top Q\alpha`; ``values["alpha"]``; ``extras`` holds
        ``b``, ``kkt_violation``, ``kernel_evaluations`` (Gram columns
        computed: of ``n`` kernel values, or of the working set's length in the
        compiled loop while shrunk), ``kernel_values`` (kernel values computed),
        ``cache_hits`` and
        ``min_active_size`` (smallest active set reached by shrinking).
        Non-converged runs return :attr:`Status.USER_LIMIT`.
    """
    t_setup = time.perf_counter()
    X, y, c, kernel = _check_data(program)
    n = y.shape[0]
    max_iter = _check_options(tol, max_iter, time_limit, cache_size, n)
    tol = float(tol)
    if gap_tol is not None and not (isinstance(gap_tol, (int, float)) and gap_tol > 0
                                    and math.isfinite(gap_tol)):
        raise OptionError(f"smo: gap_tol must be None or positive and finite, got {gap_tol!r}")
    nb = load_engine("smo", engine, "_smo_numba")
    if column_dtype not in ("auto", "float32", "float64"):
        raise OptionError("smo: column_dtype must be 'auto', 'float32' or 'float64', "
                          f"got {column_dtype!r}")
    # a column-major float64 Gram matrix is its own column store (_StoreCache.borrow)
    borrow = (nb is not None and column_dtype != "float32"
              and getattr(kernel, "name", None) == "precomputed"
              and X.dtype == np.float64 and X.T.flags.c_contiguous)
    if column_dtype == "auto":
        column_dtype = "float32" if tol >= FLOAT32_MIN_TOL and not borrow else "float64"
    alpha = np.zeros(n) if x0 is None else _check_x0(x0, y, c)

    cache = (_StoreCache(kernel, X, n, cache_size, dtype=column_dtype) if nb is not None
             else _ColumnCache(kernel, X, n, cache_size))
    if nb is not None:
        cache.gather = nb.gather_matvec
        cache.compact = nb.compact
        if borrow:
            cache.borrow()
    QD = np.asarray(kernel.diagonal(X), dtype=float).reshape(-1)
    if QD.shape != (n,) or not np.all(np.isfinite(QD)):
        raise SolverError("smo: kernel.diagonal(X) must be a finite vector of length n")
    pos = y > 0

    # F = -y * G is LIBSVM's -y_t grad_t; Gb = y * Gbar with Gbar = sum_{alpha_t = c_t} c_t Q_t.
    F = y.copy()
    Gb = np.zeros(n)
    nz = np.flatnonzero(alpha > 0)
    if x0_products is not None:
        Kv, Kb = (np.asarray(v, dtype=float) for v in x0_products)
        if x0 is None or Kv.shape != (n,) or Kb.shape != (n,) or not (
                np.all(np.isfinite(Kv)) and np.all(np.isfinite(Kb))):
            raise OptionError("smo: x0_products must be two finite vectors of length "
                              f"{n} and come with x0")
        F -= Kv
        Gb = Kb
    elif nz.size:
        coef = np.column_stack([alpha[nz] * y[nz], np.where(alpha[nz] >= c[nz], c[nz] * y[nz], 0)])
        prod = cache.matvec(nz, coef)
        F -= prod[:, 0]
        Gb = prod[:, 1]
    setup_time = time.perf_counter() - t_setup

    # ---- the SMO loop ------------------------------------------------------------------
    stop = stopper("smo", callback,
                   legacy=lambda r: (r.iteration, r.values["alpha"], r.residual))
    t_solve = time.perf_counter()
    act: np.ndarray | None = None  # active indices (None: all variables active)
    min_active = n
    unshrunk = False

    def masks(a: np.ndarray, cc: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        below, above = a < cc, a > 0
        return np.where(p, below, above), np.where(p, above, below)

    def working_set(sub: np.ndarray | None):
        """Working arrays of the active set (views of the full arrays when all active)."""
        if sub is None:
            w_up, w_low = masks(alpha, c, pos)
            return alpha, F, y, c, QD, w_up, w_low
        wa = alpha[sub]
        w_up, w_low = masks(wa, c[sub], pos[sub])
        return wa, F[sub], y[sub], c[sub], QD[sub], w_up, w_low

    def sync(sub: np.ndarray | None, wa: np.ndarray, wF: np.ndarray) -> None:
        if sub is not None:
            alpha[sub] = wa
            F[sub] = wF

    def reconstruct(sub: np.ndarray | None) -> None:
        """Rebuild F outside the active set from Gbar and the free variables."""
        if sub is None:
            return
        inactive = np.ones(n, dtype=bool)
        inactive[sub] = False
        free = np.flatnonzero((alpha > 0) & (alpha < c))
        v = cache.matvec(free, alpha[free] * y[free])
        F[inactive] = y[inactive] - Gb[inactive] - v[inactive]

    def column(i_full: int, sub: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        col = cache.get(i_full)
        return col, (col if sub is None else col[sub])

    wa, wF, wy, wc, wQD, up, low = working_set(act)
    report = _Report if verbose else None
    if report is not None:
        print(f"smo: n = {n}, tol = {tol:g}, shrinking = {shrinking}, "
              f"cache = {cache.capacity} columns")
        report.print_header()
    period = min(n, 1000)
    counter = period + 1
    k = 0
    code = 0
    viol = math.inf
    # stall detection: the net movement of alpha over a window of iterations
    stall_window = max(10_000, 100 * n)
    stall_step = 1e-6 * float(np.max(c))
    window_start, alpha_window = 0, alpha.copy()
    # polishing (gap_tol): after convergence at tol_cur, go on at tol_cur / 10 while the
    # relative primal - dual gap exceeds gap_tol, down to tol / 1000
    tol_cur = tol
    cert_gap = math.nan  # the certificate's gap estimate at the last polishing decision
    polish_floor = tol * 1.0001e-3

    # While polishing, the certificate's gap is estimated every polish_every iterations
    # from the working set's terms (_working_gap; the shrunk variables' taken as zero, as
    # shrinking assumes): the loop stops on the certificate's own number as soon as it is
    # reached (verified on every variable), not at the next tol_cur / 10.
    polishing = False
    polish_every = max(1, period // 4)

    def box_violation() -> float:
        return max(float(np.max(-alpha)), float(np.max(alpha - c)), abs(float(y @ alpha)), 0.0)

    def gap_estimate() -> float:
        """The certificate's relative gap from alpha and F (both synced, F complete)."""
        return _certificate_gap(alpha, F, y, c, box_violation())

    def polish_more() -> bool:
        """After convergence at tol_cur with F complete: go on (at tol_cur / 10)?"""
        nonlocal tol_cur, cert_gap, polishing
        if gap_tol is None:
            return False
        cert_gap = gap_estimate()
        if cert_gap <= gap_tol or tol_cur <= polish_floor:
            return False
        tol_cur /= 10.0
        polishing = True
        return True

    def polish_unverified(active: np.ndarray) -> bool:
        """Converged at tol (the first level) on a shrunk set: go on at tol / 10 without
        the full re-check when the working set's estimate already exceeds
        POLISH_SKIP * gap_tol (the re-check, a gradient reconstruction, would only
        confirm it; the final one verifies every variable)."""
        nonlocal tol_cur, cert_gap, polishing
        if gap_tol is None or polishing:
            return False
        est = _working_gap(alpha, F, y, c, box_violation(), active)
        if not est > POLISH_SKIP * gap_tol:
            return False
        cert_gap = est
        tol_cur /= 10.0
        polishing = True
        return True

    def polish_done() -> bool:
        """F complete: does the point meet tol on every variable and gap_tol?"""
        nonlocal cert_gap, viol
        up_all, low_all = masks(alpha, c, pos)
        full = float(np.where(up_all, F, -np.inf).max() - np.where(low_all, F, np.inf).min())
        viol = full  # the violation on every variable, reported if the point is returned
        if full > tol:
            return False
        cert_gap = gap_estimate()
        return cert_gap <= gap_tol

    if nb is not None:
        # the compiled loop (see _smo_numba): the same iterations on a contiguous working
        # set (LIBSVM's active set at the front), Python between chunks. work: the working
        # set's original indices (None: all); w*: the working arrays, views of the full
        # ones while work is None, gathered copies otherwise (see wsync). The cache's
        # columns cover cache.basis, a superset of work: every variable while the cache
        # has room (then the gradient reconstruction reuses the stored full columns), the
        # working set itself once it is full (then n / m times more columns fit).
        out_i = np.zeros(2, dtype=np.int64)
        out_f = np.zeros(1)
        resume = np.zeros(3, dtype=np.int64)  # a selection interrupted by a missing column
        resume_f = np.zeros(2)
        until_boundary = period
        recent = 2 * period  # clock ticks (column uses) within which a column is kept
        gb_upper = alpha >= c  # the bounds Gb reflects (tracked only while work is None)
        work: np.ndarray | None = None
        no_pos = np.zeros(0, dtype=np.int64)

        def working() -> tuple[Any, ...]:
            """The working arrays of ``work`` (after wsync of the previous ones)."""
            if work is None:
                up_, low_ = masks(alpha, c, pos)
                return (alpha, F, y, c, QD, up_.astype(np.uint8), low_.astype(np.uint8),
                        no_pos, False)
            wa_, wc_ = alpha[work], c[work]
            up_, low_ = masks(wa_, wc_, pos[work])
            if cache.basis is None:
                colpos, use = work, True
            elif cache.basis.size == work.size:
                colpos, use = no_pos, False
            else:
                where = np.full(n, -1, dtype=np.int64)
                where[cache.basis] = np.arange(cache.basis.size)
                colpos, use = where[work], True
            return (wa_, F[work], y[work], wc_, QD[work], up_.astype(np.uint8),
                    low_.astype(np.uint8), np.ascontiguousarray(colpos), use)

        def wsync() -> None:
            if work is not None:
                alpha[work] = wa
                F[work] = wF

        def reconstruct_full() -> None:
            """F on every variable (LIBSVM's reconstruct_gradient); the working set stays."""
            nonlocal gb_upper
            if work is None:
                return
            wsync()
            # Gbar: the variables whose upper-bound status changed while it was not tracked
            upper = alpha >= c
            moved = np.flatnonzero(upper != gb_upper)
            if moved.size:
                Gb[:] += cache.matvec(moved, np.where(upper[moved], c[moved] * y[moved],
                                                      -c[moved] * y[moved]))
            gb_upper = upper
            inactive = np.ones(n, dtype=bool)
            inactive[work] = False
            rows = np.flatnonzero(inactive)
            free = np.flatnonzero((alpha > 0) & (alpha < c))
            coef = alpha[free] * y[free]
            v = np.zeros(rows.size)
            if cache.basis is None:  # full stored columns: the stored ones are used
                slots = cache.slot_of[free]
                hit = slots >= 0
                if hit.any():
                    full = np.zeros(n)
                    cache.gather(cache.store, np.ascontiguousarray(slots[hit]),
                                 np.ascontiguousarray(coef[hit]), full)
                    cache.hits += int(hit.sum())
                    v += full[rows]
                    free, coef = free[~hit], coef[~hit]
            # the others: only the inactive rows of their columns, not stored (LIBSVM's
            # reconstruct_gradient; full columns cost n / (n - m) times more values and
            # would evict the working set's columns)
            step = max(1, _BLOCK_BYTES // (8 * max(1, rows.size)))
            for start in range(0, free.size, step):
                v += cache.cross(rows, free[start:start + step]) @ coef[start:start + step]
            F[rows] = y[rows] - Gb[rows] - v

        def set_work(new: np.ndarray | None) -> None:
            """Make ``new`` the working set (F must be current on it)."""
            nonlocal work, gb_upper, min_active
            wsync()
            if work is None and new is not None:
                gb_upper = alpha >= c  # Gb is exact here and untracked from now on
            if new is None:
                if cache.basis is not None:
                    cache.rebasis(None, recent)
            elif cache.basis is not None:
                inside = np.zeros(n, dtype=bool)
                inside[cache.basis] = True
                if not inside[new].all():
                    cache.rebasis(new, recent)
            work = new
            if (work is not None and cache.used >= cache.cap
                    and 2 * work.size <= (n if cache.basis is None else cache.basis.size)):
                cache.rebasis(work, recent)  # the cache is full: columns of the working set
            min_active = min(min_active, n if work is None else work.size)

        def shrink_mask(Fv: np.ndarray, f_up: np.ndarray, f_low: np.ndarray) -> np.ndarray:
            Fu = np.where(f_up, Fv, -np.inf).max()
            Fl = np.where(f_low, Fv, np.inf).min()
            return (f_up & ~f_low & (Fv < Fl)) | (f_low & ~f_up & (Fv > Fu))

        def reshrink_full() -> None:
            """After reconstruct_full: shrink the full set at once (LIBSVM's do_shrinking
            after an un-shrink)."""
            up_all, low_all = masks(alpha, c, pos)
            shrink = shrink_mask(F, up_all, low_all)
            set_work(None if not shrink.any() or shrink.all() else np.flatnonzero(~shrink))

        wa, wF, wy, wc, wQD, flag_up, flag_low, colpos, use_colpos = working()
        until_check = polish_every
        while True:
            steps = 1 if stop is not None else min(until_boundary, max_iter - k)
            if polishing:
                steps = min(steps, until_check)
            r = nb.run(wa, wF, wy, wc, wQD, Gb, flag_up, flag_low, colpos, use_colpos,
                       cache.store, cache.slot_of, cache.stamp, cache.clock, tol_cur, steps,
                       shrinking and work is None, out_i, out_f, resume, resume_f)
            if r != nb.NEED_COLUMN or stop is not None:
                resume[0] = 0  # the next call scans afresh
            done = int(out_i[1])
            k += done
            until_boundary -= done
            until_check -= done
            viol = float(out_f[0])
            if stop is not None and done:
                wsync()
                if stop(IntermediateResult(iteration=k, residual=viol,
                                           elapsed=time.perf_counter() - t_solve,
                                           values={"alpha": alpha.copy()})):
                    code = 3
                    break
            if r == nb.CONVERGED:
                if work is not None:
                    wsync()
                    if polish_unverified(work):
                        until_check = polish_every
                        continue
                if work is not None:
                    # converged on the active set: re-check on every variable
                    reconstruct_full()
                    up_all, low_all = masks(alpha, c, pos)
                    viol = float(np.where(up_all, F, -np.inf).max()
                                 - np.where(low_all, F, np.inf).min())
                if not viol > tol_cur:
                    if not polish_more():
                        code = 0
                        work = None  # F is complete: nothing to reconstruct below
                        break
                    # polishing goes on at tol_cur / 10 from a just reconstructed gradient:
                    # no second early un-shrink (each costs n_free * (n - m) kernel values)
                # go on, shrunk at once (LIBSVM goes on with every variable active and
                # shrinks after one iteration; this skips that one full-length iteration)
                if shrinking:
                    reshrink_full()
                    wa, wF, wy, wc, wQD, flag_up, flag_low, colpos, use_colpos = working()
                until_boundary = period
                continue
            if r == nb.NEED_COLUMN:
                cache.fetch(int(out_i[0]))
            if k >= max_iter:
                code = 1
                break
            if time_limit is not None and time.perf_counter() - t_solve > time_limit:
                code = 2
                break
            if polishing and until_check <= 0:
                until_check = polish_every
                wsync()
                est = (gap_estimate() if work is None
                       else _working_gap(alpha, F, y, c, box_violation(), work))
                if est <= gap_tol:
                    # the certificate's gap reached on the working set: verify on all
                    resume[0] = 0
                    reconstruct_full()
                    if polish_done():
                        code = 0
                        work = None
                        break
                    if shrinking:
                        reshrink_full()
                        wa, wF, wy, wc, wQD, flag_up, flag_low, colpos, use_colpos = working()
                    until_boundary = period
                    continue
            if until_boundary > 0:
                continue
            resume[0] = 0  # the working set may change below: select afresh
            until_boundary = period
            if shrinking:
                f_up, f_low = flag_up.astype(bool), flag_low.astype(bool)
                Fu = np.where(f_up, wF, -np.inf).max()
                Fl = np.where(f_low, wF, np.inf).min()
                if not unshrunk and Fu - Fl <= 10 * tol_cur:
                    # LIBSVM's do_shrinking: reconstruct, then shrink the full set at once
                    unshrunk = True
                    reconstruct_full()
                    reshrink_full()
                    wa, wF, wy, wc, wQD, flag_up, flag_low, colpos, use_colpos = working()
                else:
                    shrink = shrink_mask(wF, f_up, f_low)
                    if shrink.any() and not shrink.all():
                        set_work(np.flatnonzero(~shrink) if work is None else work[~shrink])
                        wa, wF, wy, wc, wQD, flag_up, flag_low, colpos, use_colpos = working()
            if k - window_start >= stall_window:
                wsync()
                moved = float(np.max(np.abs(alpha - alpha_window)))
                if moved <= stall_step and viol > tol_cur:
                    code = 4
                    break
                window_start, alpha_window = k, alpha.copy()
            if report is not None:
                wsync()
                report.print_iteration(k, n if work is None else work.size, viol,
                                       int(np.count_nonzero(alpha)), cache.computed,
                                       int(cache.clock[0]), time.perf_counter() - t_solve)
        if work is not None:  # stopped while shrunk
            reconstruct_full()
        cache.hits += max(int(cache.clock[0]) - cache.computed, 0)  # uses of stored columns
    else:
        check_counter = polish_every
        while True:
            if polishing:
                check_counter -= 1
                if check_counter == 0:
                    check_counter = polish_every
                    sync(act, wa, wF)
                    est = (gap_estimate() if act is None
                           else _working_gap(alpha, F, y, c, box_violation(), act))
                    if est <= gap_tol:
                        # the certificate's gap reached on the working set: verify on all
                        reconstruct(act)
                        act = None
                        wa, wF, wy, wc, wQD, up, low = working_set(act)
                        if polish_done():
                            code = 0
                            break
                        counter = 1  # shrink at once
            counter -= 1
            if counter == 0:
                counter = period
                if shrinking:
                    Fu = np.where(up, wF, -np.inf).max()
                    Fl = np.where(low, wF, np.inf).min()
                    if not unshrunk and Fu - Fl <= 10 * tol_cur:
                        unshrunk = True
                        sync(act, wa, wF)
                        reconstruct(act)
                        act = None
                        wa, wF, wy, wc, wQD, up, low = working_set(act)
                        Fu = np.where(up, wF, -np.inf).max()
                        Fl = np.where(low, wF, np.inf).min()
                    shrink = (up & ~low & (wF < Fl)) | (low & ~up & (wF > Fu))
                    if shrink.any() and not shrink.all():
                        sync(act, wa, wF)
                        keep = np.flatnonzero(~shrink)
                        act = keep if act is None else act[keep]
                        min_active = min(min_active, act.size)
                        wa, wF, wy, wc, wQD, up, low = working_set(act)
                if k - window_start >= stall_window:
                    sync(act, wa, wF)
                    moved = float(np.max(np.abs(alpha - alpha_window)))
                    if moved <= stall_step and viol > tol_cur:
                        code = 4
                        break
                    window_start, alpha_window = k, alpha.copy()
                if report is not None:
                    report.print_iteration(k, n if act is None else act.size, viol,
                                           int(np.count_nonzero(wa)), cache.computed, cache.hits,
                                           time.perf_counter() - t_solve)

            # -- working-set selection (WSS2) --
            Fu_arr = np.where(up, wF, -np.inf)
            i = int(Fu_arr.argmax())
            Gmax = float(Fu_arr[i])
            Fl_arr = np.where(low, wF, np.inf)
            viol = Gmax - float(Fl_arr.min())
            if not viol > tol_cur and act is not None:
                sync(act, wa, wF)
                if polish_unverified(act):  # go on at tol / 10 on the active set
                    check_counter = polish_every
            if not viol > tol_cur:
                # converged on the active set: un-shrink and re-check on every variable
                if act is not None:
                    sync(act, wa, wF)
                    reconstruct(act)
                    act = None
                    wa, wF, wy, wc, wQD, up, low = working_set(act)
                    Fu_arr = np.where(up, wF, -np.inf)
                    i = int(Fu_arr.argmax())
                    Gmax = float(Fu_arr[i])
                    Fl_arr = np.where(low, wF, np.inf)
                    viol = Gmax - float(Fl_arr.min())
                if not viol > tol_cur:
                    if not polish_more():
                        code = 0
                        break
                    # polishing goes on at tol_cur / 10, without a second early un-shrink
                counter = 1  # shrink at the next iteration
            if k >= max_iter:
                code = 1
                break
            if time_limit is not None and time.perf_counter() - t_solve > time_limit:
                code = 2
                break
            i_full = i if act is None else int(act[i])
            col_i, Ki = column(i_full, act)
            gain = Gmax - Fl_arr
            np.maximum(gain, 0.0, out=gain)
            np.square(gain, out=gain)
            quad = wQD - 2.0 * Ki
            quad += wQD[i]
            quad[quad <= 0] = TAU
            gain /= quad
            j = int(gain.argmax())
            j_full = j if act is None else int(act[j])
            col_j, Kj = column(j_full, act)

            # -- two-variable update with clipping (LIBSVM's Solver::Solve) --
            yi, yj = float(wy[i]), float(wy[j])
            Ci, Cj = float(wc[i]), float(wc[j])
            ai_old, aj_old = float(wa[i]), float(wa[j])
            Gi, Gj = -yi * float(wF[i]), -yj * float(wF[j])
            ai, aj = clip_pair(ai_old, aj_old, yi, yj, Gi, Gj,
                               float(wQD[i]) + float(wQD[j]) - 2.0 * float(Ki[j]), Ci, Cj)
            wa[i] = ai
            wa[j] = aj
            si, sj = yi * (ai - ai_old), yj * (aj - aj_old)
            if si != 0.0:
                wF -= si * Ki
            if sj != 0.0:
                wF -= sj * Kj
            for t, a_new, a_old, Ct, yt, col in ((i, ai, ai_old, Ci, yi, col_i),
                                                 (j, aj, aj_old, Cj, yj, col_j)):
                up[t] = a_new < Ct if yt > 0 else a_new > 0
                low[t] = a_new > 0 if yt > 0 else a_new < Ct
                if shrinking and (a_old >= Ct) != (a_new >= Ct):
                    Gb += (Ct * yt if a_new >= Ct else -Ct * yt) * col
            k += 1
            if stop is not None:
                sync(act, wa, wF)
                if stop(IntermediateResult(iteration=k, residual=viol,
                                           elapsed=time.perf_counter() - t_solve,
                                           values={"alpha": alpha.copy()})):
                    code = 3
                    break

        sync(act, wa, wF)
        if act is not None:  # stopped by a limit while shrunk
            reconstruct(act)
            act = None
    up, low = masks(alpha, c, pos)
    if code != 0:
        viol = float(np.where(up, F, -np.inf).max() - np.where(low, F, np.inf).min())
    kkt = max(viol, 0.0) if math.isfinite(viol) else 0.0

    # ---- offset, objectives and certificate --------------------------------------------
    b, dual_obj, primal_obj, rel_gap = _terms(alpha, F, y, c, pos)
    primal_res = max(abs(float(y @ alpha)), float(np.max(-alpha)), float(np.max(alpha - c)), 0.0)
    solve_time = time.perf_counter() - t_solve
    message = TERMINATION_MESSAGES[code].format(window=stall_window, viol=kkt)
    status = STATUS_MAP[code]
    if status is Status.OPTIMAL and not rel_gap <= GAP_RTOL:
        # never OPTIMAL when its own certificate fails (at C = 1e12 the absolute tol on
        # m - M allows a slack cost ~ sum(c) * tol, a huge gap)
        status = Status.OPTIMAL_INACCURATE
        message = (f"not certified: primal - dual gap {primal_obj - dual_obj:.3g} (relative "
                   f"{rel_gap:.3g} > {GAP_RTOL:g}) at m - M = {kkt:.3g} <= tol; the KKT "
                   f"tolerance is absolute while the costs reach {float(np.max(c)):.3g}: "
                   "lower tol or C; " + message)
    if report is not None:
        report.print_iteration(k, n, kkt, int(np.count_nonzero(alpha)), cache.computed,
                               cache.hits, solve_time)
        report.print_footer(message, dual_obj, primal_obj - dual_obj)
    return Solution(
        status=status,
        solver="smo",
        objective=dual_obj,
        values={"alpha": alpha},
        iterations=k,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=primal_res, dual=kkt, gap=primal_obj - dual_obj,
                            source="solver"),
        message=message,
        extras={
            "b": b,
            "kkt_violation": kkt,
            "kernel_evaluations": cache.computed,
            "kernel_values": cache.values,
            "min_column_length": getattr(cache, "min_length", n),
            "cache_hits": cache.hits,
            "min_active_size": min_active,
            "primal_objective": primal_obj,
            "polish_tol": tol_cur,
            "certificate_gap_estimate": cert_gap,
            "engine": "numpy" if nb is None else "numba",
            "column_dtype": "float64" if nb is None else str(cache.dtype),
        },
    )
