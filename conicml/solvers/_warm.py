r"""Warm starts along a hyper-parameter path (:func:`conicml.solve_path`).

Each function is registered with its solver (``register(..., warm_start=...)``) and maps
``(previous, old, new)`` — the solution of program ``old`` and the next program ``new``
of the same learner on the same data — to the solver's warm-start options, or to ``{}``
(a cold start) when ``previous`` does not fit ``new`` (other data, labels or basis).
Every returned start is feasible for ``new``: the solver's own feasibility check of
``x0`` never fails on it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg

from .. import kinds
from ..contracts.kernel_columns import RESERVE_BYTES, columns_for
from ..contracts.ranking_ops import (
    EIG_RTOL,
    EXACT_MAX_BASIS,
    LinearizedRanking,
    WhitenedFeatures,
    objective,
    shared_parts,
)

__all__ = [
    "cbc_alpha",
    "cbor_pair",
    "dcd_alpha",
    "ellipsoid_multipliers",
    "fractional_w",
    "m4_rho",
    "pegasos_wb",
    "rank_beta",
    "simplex_w",
    "smo_alpha",
    "svor_pair",
]


def _same(a: Any, b: Any) -> bool:
    """Whether two data arrays are the same (the same object, or equal values)."""
    if a is b:
        return True
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _balanced_box_start(alpha: np.ndarray, y: np.ndarray, u_old: np.ndarray,
                        u_new: np.ndarray) -> np.ndarray | None:
    r"""Alpha seeding for a box :math:`[0, u]` with :math:`y^\top\alpha = 0`.

    The bounded and free sets are kept (DeCoste & Wagstaff's seeding, KDD 2000, applied to
    the bounded variables only): a variable at its old bound :math:`u^{old}_i` moves to
    the new bound :math:`u^{new}_i`, a free one keeps its value (clipped to the new box), a
    zero stays zero. Scaling every variable by :math:`u^{new}/u^{old}` instead throws the
    free variables away from an optimum that, once no variable is bounded, does not depend
    on the box at all (separable in feature space: the kept start is optimal). Moving the
    bounds breaks :math:`y^\top\alpha = 0` by :math:`\sum_{bounded} y_i (u^{new}_i -
    u^{old}_i)`; the class with the larger sum gives the excess back from its free
    variables (scaled down together), or from all its variables if they do not hold it.
    An infinite box (hard margin) keeps :math:`\alpha` as it is.
    """
    alpha = np.asarray(alpha, dtype=float)
    if alpha.shape != y.shape or not np.all(np.isfinite(alpha)):
        return None
    bounded = np.isfinite(u_old) & (alpha >= u_old * (1.0 - 1e-12)) & (alpha > 0)
    x0 = np.where(bounded & np.isfinite(u_new), u_new, np.minimum(alpha, u_new))
    pos = y > 0
    s_pos, s_neg = float(x0[pos].sum()), float(x0[~pos].sum())
    # a round-off imbalance is left alone: rescaling by 1 - 1e-16 would move every
    # bounded variable off its bound (free to SMO: hundreds of extra updates)
    scale = float(np.sum(np.where(np.isfinite(u_new), u_new, x0)))
    excess = abs(s_pos - s_neg)
    if excess > 1e-12 * max(1.0, scale):
        side = pos if s_pos > s_neg else ~pos
        free = side & ~bounded & (x0 > 0)
        held = float(x0[free].sum())
        if held > excess:
            x0[free] *= 1.0 - excess / held
        else:
            x0[side] *= min(s_pos, s_neg) / max(s_pos, s_neg)
    return np.clip(x0, 0.0, u_new)


#: Largest free set whose KKT system :func:`_active_set_alpha` solves (a dense solve of
#: this order costs about what the SMO updates it saves).
PREDICTOR_MAX_FREE = 1000
PREDICTOR_ROUNDS = 10


class _GramColumns:
    """A precomputed Gram matrix read in place, with the interface of
    :class:`~conicml.contracts.kernel_columns.KernelColumns` the predictor uses: nothing
    is copied but the block a round reads, nothing is kept."""

    def __init__(self, kernel: Any, K: np.ndarray) -> None:
        self.kernel, self.X = kernel, K
        self.n = K.shape[0]
        self.nbytes = 0

    def prepare(self, idx: np.ndarray) -> None:
        """Every column is there."""

    def block(self, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """``K[rows][:, idx]`` (a copy)."""
        return self.X[np.ix_(rows, idx)]

    def product(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``K[:, idx] @ coef``."""
        if idx.size == 0:
            return np.zeros(self.n)
        if 2 * idx.size > self.n:
            full = np.zeros(self.n)
            full[idx] = coef
            return self.X @ full
        return self.X[:, idx] @ coef


def _columns_of(kernel: Any, X: np.ndarray, kept: Any) -> Any:
    """The predictor's kernel columns: a precomputed Gram matrix in place (``kept`` when it
    reads the same matrix), else this thread's store of the kernel columns of ``X``, the
    one the SVM certificate reads (:func:`~conicml.contracts.kernel_columns.columns_for`:
    equal inputs and kernel, or a new store)."""
    if getattr(kernel, "name", None) != "precomputed":
        return columns_for(kernel, X)
    if isinstance(kept, _GramColumns) and kept.X is X and kept.kernel == kernel:
        return kept
    return _GramColumns(kernel, X)


def _active_set_alpha(alpha: np.ndarray, y: np.ndarray, u_old: np.ndarray,
                      u_new: np.ndarray, columns: Any,
                      held: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                      factor: _FreeFactor | None = None,
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                 np.ndarray] | None:
    r"""The SVM dual's optimum at the new costs predicted from the previous active set.

    Between two values of C at which no variable changes status (zero, free, at its
    bound), the free :math:`\alpha_F` and the offset :math:`b` solve the linear KKT system

    .. math::

        Q_{FF}\alpha_F + y_F b = 1 - Q_{FB} u_B, \qquad y_F^\top\alpha_F = -y_B^\top u_B

    (margin 1 at every free vector, balance), so :math:`\alpha` is piecewise linear in C
    (the SVM regularization path, Hastie, Rosset, Tibshirani & Zhu, JMLR 5, 2004). From
    the previous statuses, the system is solved at the new costs; a free variable that
    leaves :math:`[0, u_i]` goes to that bound, a zero one with margin
    :math:`y_if_i < 1` or a bounded one with margin :math:`> 1` becomes free, and the
    system is solved again (a primal-dual active-set iteration), at most
    ``PREDICTOR_ROUNDS`` times (each status update compiled, :func:`_step_numpy` its
    NumPy twin). Margins are compared with LIBSVM's tolerance 1e-3; the
    SMO run that follows certifies the point either way.

    ``held = (bounded, u, g)``: the previous prediction's bounded set, its costs and
    :math:`g = K_{:,B}(u_B\circ y_B)` (:func:`_bound_product`), from which the product
    at the new statuses and costs is updated with the columns whose status differs.

    Returns ``(alpha, free, g_B, bounded, p)`` once the statuses settle with every free
    variable inside its box (:math:`g_B = K_{:,B}(u_B\circ y_B)` at the new costs, kept
    up to date from the variables whose status changes, the mask of the bounded set and
    :math:`p = K_{:,F}(\alpha_F\circ y_F)`; the columns are read where the store holds
    them, never moved nor copied), else ``None`` (the
    caller seeds as before). ``factor``: the free sets' factor kept along the path
    (:class:`_FreeFactor`), updated from one round to the next.
    """
    if not np.all(np.isfinite(u_new)):
        return None
    scale = np.where(np.isfinite(u_old), u_old, 1.0)
    status = np.where(alpha <= 1e-12 * scale, 0, np.where(alpha >= u_old * (1 - 1e-12), 2, 1))
    g_bound = _bound_product(status == 2, u_new, y, columns, held)
    free, bound = np.flatnonzero(status == 1), np.flatnonzero(status == 2)
    bal = -float(y[bound] @ u_new[bound])
    compiled = _step_engine()
    step = _step_numpy if compiled is None else compiled.active_set_step
    for _ in range(PREDICTOR_ROUNDS):
        if free.size > PREDICTOR_MAX_FREE or free.size == 0:
            return None
        columns.prepare(free)
        yf = y[free]
        rhs = 1.0 - yf * g_bound[free]
        sol = (_kkt_solve(yf, columns.block(free, free), rhs, bal) if factor is None
               else factor.solve(free, rhs, bal))
        if sol is None:
            return None
        a_free, b = sol
        p_free = columns.product(free, a_free * yf)  # K_F (alpha_F o y_F)
        new, changed, free_next, enter, leave, bal = step(
            status, free, a_free, u_new, y, g_bound, p_free, b, MARGIN_TOL)
        if not changed:
            a = np.zeros(y.size)
            bounded = status == 2
            a[bounded] = u_new[bounded]
            a[free] = a_free
            return a, free, g_bound, bounded, p_free
        # g_B follows the variables entering and leaving the bound
        moved = np.concatenate([enter, leave])
        if moved.size:
            sign = np.concatenate([np.ones(enter.size), -np.ones(leave.size)])
            g_bound = g_bound + columns.product(moved, sign * u_new[moved] * y[moved])
        status, free = new, free_next
    return None


#: LIBSVM's tolerance on the margins :math:`y_if_i` against 1 in the status updates.
MARGIN_TOL = 1e-3


def _step_engine() -> Any:
    """The compiled status update (:mod:`._smo_numba`), or ``None`` for the NumPy twin."""
    from ._options import load_engine

    return load_engine("smo", "auto", "_smo_numba")


def _step_numpy(status: np.ndarray, free: np.ndarray, a_free: np.ndarray, u: np.ndarray,
                y: np.ndarray, g: np.ndarray, p: np.ndarray, b: float, tol: float
                ) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, float]:
    r"""One status update of :func:`_active_set_alpha` with the margins
    :math:`y_i(g_i + p_i + b)`: a free variable outside :math:`[0, u_i]` goes to that
    bound, a zero one with margin :math:`< 1 - tol` or a bounded one with margin
    :math:`> 1 + tol` becomes free. Returns ``(new, changed, free, enter, leave, bal)``
    (see :func:`conicml.solvers._smo_numba.active_set_step`, its compiled twin)."""
    margin = y * (g + p + b)
    new = status.copy()
    new[free[a_free < 0]] = 0
    new[free[a_free > u[free]]] = 2
    new[(status == 0) & (margin < 1 - tol)] = 1
    new[(status == 2) & (margin > 1 + tol)] = 1
    changed = int(np.count_nonzero(new != status))
    bound = np.flatnonzero(new == 2)
    enter = np.flatnonzero((new == 2) & (status != 2))
    leave = np.flatnonzero((status == 2) & (new != 2))
    return (new, changed, np.flatnonzero(new == 1), enter, leave,
            -float(y[bound] @ u[bound]))


def _kkt_solve(yf: np.ndarray, KFF: np.ndarray, r: np.ndarray, s: float,
               Q: np.ndarray | None = None, factor: Any = None
               ) -> tuple[np.ndarray, float] | None:
    r"""The free variables' KKT system :math:`Q a + y b = r`, :math:`y^\top a = s` with
    :math:`Q = (y y^\top)\circ K_{FF}`.

    By the Schur complement on :math:`Q` (positive definite for the RBF kernel on
    distinct points): with :math:`Q = LL^\top` (a Cholesky factor, a third of the work
    of an LU factorisation of the bordered system),
    :math:`b = (y^\top Q^{-1} r - s)/(y^\top Q^{-1} y)` and :math:`a = Q^{-1}(r - y b)`.
    A semidefinite :math:`Q` (duplicated points, a linear kernel) takes the bordered
    system's LU factorisation; ``None`` when that is singular too. ``Q`` and its
    ``factor`` (:func:`scipy.linalg.cho_factor`, or ``False`` when it failed) when the
    caller has them.
    """
    if Q is None:
        Q = (yf[:, None] * yf[None, :]) * KFF
    try:
        if factor is False:
            raise np.linalg.LinAlgError("no Cholesky factor")
        if factor is None:
            factor = scipy.linalg.cho_factor(Q, lower=True, check_finite=False)
        both = scipy.linalg.cho_solve(factor, np.column_stack([r, yf]), check_finite=False)
        qy = float(yf @ both[:, 1])
        # a pivot lost to rounding shows as a non-positive y'Q^{-1}y or a non-finite one
        if qy > 0 and np.all(np.isfinite(both)):
            b = (float(yf @ both[:, 0]) - s) / qy
            return both[:, 0] - b * both[:, 1], b
    except np.linalg.LinAlgError:
        pass
    m = yf.size
    A = np.empty((m + 1, m + 1))
    A[:m, :m] = Q
    A[:m, m] = yf
    A[m, :m] = yf
    A[m, m] = 0.0
    try:
        sol = np.linalg.solve(A, np.append(r, s))
    except np.linalg.LinAlgError:
        return None
    return (sol[:m], float(sol[m])) if np.all(np.isfinite(sol)) else None


#: Changes of the free set (variables in and out) against the factored one above which
#: :class:`_FreeFactor` factors the current set afresh: its bordered solve reads the factor
#: once per changed variable (:math:`m^2` each), a fresh factor costs :math:`m^3/3` and more.
FACTOR_REFRESH = 0.25


class _FreeFactor:
    r"""The KKT system of :func:`_kkt_solve` on a free set :math:`F`, from the Cholesky
    factor of :math:`Q_0 = Q_{F_0F_0}` of a nearby free set :math:`F_0`.

    :math:`Q_{FF}` does not depend on the costs, and from one round (and one value of C)
    to the next the free set changes by a few variables: with the added set
    :math:`A = F\setminus F_0` and the dropped set :math:`D = F_0\setminus F`, the system
    on :math:`F` is the one on :math:`F_0\cup A` with :math:`\alpha_D = 0` imposed by
    multipliers :math:`\mu` (the rows of :math:`D` are then free):

    .. math::

        \begin{bmatrix} Q_0 & B \\ B^\top & C \end{bmatrix}
        \begin{bmatrix} a_0 \\ z \end{bmatrix} = \begin{bmatrix} r_0 \\ t \end{bmatrix},
        \quad B = [Q_{F_0A},\ y_0,\ E_D], \quad
        C = \begin{bmatrix} Q_{AA} & y_A & 0 \\ y_A^\top & 0 & 0 \\ 0 & 0 & 0
        \end{bmatrix}, \quad z = (a_A, b, \mu), \quad t = (r_A, s, 0),

    solved by the Schur complement :math:`S = C - B^\top Q_0^{-1}B` (order
    :math:`|A| + |D| + 1`; the block-LU active-set update of Gill, Murray, Saunders &
    Wright, 1990): :math:`Sz = t - B^\top Q_0^{-1}r_0`, :math:`a_0 = Q_0^{-1}(r_0 - Bz)`.
    The set is factored afresh (:func:`_kkt_solve`) when the changes exceed
    ``FACTOR_REFRESH`` of it, or when the bordered solve fails. The columns of
    :math:`L^{-1}B` (:math:`Q_0 = LL^\top`) do not depend on the right-hand side: each is
    computed once per factor (``V``, for :math:`y_0`, each added variable and each dropped
    one), so a round solves :math:`L` only for :math:`r_0` and the variables new to
    :math:`A` or :math:`D`.
    """

    def __init__(self, columns: Any, y: np.ndarray) -> None:
        self.columns, self.y = columns, y
        self.base: np.ndarray | None = None  # F_0
        self.pos = np.full(y.size, -1, dtype=np.int64)  # position in F_0, or -1
        self.factor: Any = None
        self.refactors = 0
        self.updates = 0
        # L^{-1} B column by column: V[:, 0] = L^{-1} y_0, V[:, added[j]] for an added
        # variable j, V[:, dropped[p]] for the dropped position p of F_0 (-1: not yet)
        self.V = np.empty((0, 0), order="F")
        self.used = 0
        self.added = np.full(y.size, -1, dtype=np.int64)
        self.dropped = np.empty(0, dtype=np.int64)

    def _refactor(self, free: np.ndarray, r: np.ndarray, s: float
                  ) -> tuple[np.ndarray, float] | None:
        yf = self.y[free]
        Q = self.columns.block(free, free)  # a copy: Q = (y y^T) o K_FF in place
        Q *= yf[:, None]
        Q *= yf[None, :]
        self.refactors += 1
        if self.base is not None:
            self.pos[self.base] = -1
        self.base, self.factor = None, None
        try:
            factor = scipy.linalg.cho_factor(Q, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            factor = False
        if factor is not False and np.all(np.isfinite(factor[0])):
            self.base, self.factor = free.copy(), factor
            self.pos[free] = np.arange(free.size)
            self._reset_columns(yf)
        return _kkt_solve(yf, Q, r, s, Q=Q, factor=factor)

    def _reset_columns(self, y0: np.ndarray) -> None:
        """A new factor: no column of :math:`L^{-1}B` but :math:`L^{-1}y_0`."""
        m0 = y0.size
        self.V = np.empty((m0, max(16, m0 // 4)), order="F")
        self.V[:, 0] = scipy.linalg.lapack.dtrtrs(self.factor[0], y0, lower=1)[0]
        self.used = 1
        self.added[:] = -1
        self.dropped = np.full(m0, -1, dtype=np.int64)

    def _columns(self, A: np.ndarray, dropped: np.ndarray) -> bool:
        """Compute the columns of :math:`L^{-1}B` of ``A`` (added variables) and
        ``dropped`` (positions in F_0) not yet in ``V``; ``False`` if the solve fails."""
        new_a = A[self.added[A] < 0]
        new_d = dropped[self.dropped[dropped] < 0]
        k = new_a.size + new_d.size
        if not k:
            return True
        base = self.base
        M = np.zeros((base.size, k), order="F")
        M[:, :new_a.size] = (self.y[base][:, None] * self.y[new_a][None, :]) * (
            self.columns.block(base, new_a))  # Q_{F_0 A}
        M[new_d, new_a.size + np.arange(new_d.size)] = 1.0  # E_D
        W, info = scipy.linalg.lapack.dtrtrs(self.factor[0], M, lower=1)
        if info != 0:
            return False
        if self.used + k > self.V.shape[1]:
            grown = np.empty((base.size, 2 * (self.used + k)), order="F")
            grown[:, :self.used] = self.V[:, :self.used]
            self.V = grown
        self.V[:, self.used:self.used + k] = W
        self.added[new_a] = self.used + np.arange(new_a.size)
        self.dropped[new_d] = self.used + new_a.size + np.arange(new_d.size)
        self.used += k
        return True

    def solve(self, free: np.ndarray, r: np.ndarray, s: float
              ) -> tuple[np.ndarray, float] | None:
        """The system on ``free`` (right-hand side ``r`` on ``free``)."""
        base = self.base
        if base is None:
            return self._refactor(free, r, s)
        at = self.pos[free]
        added = np.flatnonzero(at < 0)  # positions in free
        kept = np.zeros(base.size, dtype=bool)
        kept[at[at >= 0]] = True
        dropped = np.flatnonzero(~kept)  # positions in F_0
        k = added.size + dropped.size
        if k > FACTOR_REFRESH * max(base.size, free.size):
            return self._refactor(free, r, s)
        A = free[added]
        ya = self.y[A]
        na = added.size
        # with Q_0 = L L^T and V_B = L^{-1}B, v_r = L^{-1}r_0: B^T Q_0^{-1} B = V_B^T V_B
        # and B^T Q_0^{-1} r_0 = V_B^T v_r
        if not self._columns(A, dropped):
            return self._refactor(free, r, s)
        VB = self.V[:, np.concatenate([self.added[A], [0], self.dropped[dropped]])]
        inside = at >= 0
        r0 = np.zeros(base.size)
        r0[at[inside]] = r[inside]
        vr, info = scipy.linalg.lapack.dtrtrs(self.factor[0], r0, lower=1)
        if info != 0:
            return self._refactor(free, r, s)
        S = -(VB.T @ VB)
        S[:na, :na] += (ya[:, None] * ya[None, :]) * self.columns.block(A, A)
        S[:na, na] += ya
        S[na, :na] += ya
        t = -(VB.T @ vr)
        t[:na] += r[added]
        t[na] += s
        self.updates += 1
        try:
            z = np.linalg.solve(S, t)
        except np.linalg.LinAlgError:
            return self._refactor(free, r, s)
        a0, info = scipy.linalg.lapack.dtrtrs(self.factor[0], vr - VB @ z, lower=1, trans=1)
        a = np.empty(free.size)
        a[inside] = a0[at[inside]]
        a[added] = z[:na]
        if info != 0 or not (np.all(np.isfinite(a)) and np.isfinite(z[na])):
            return self._refactor(free, r, s)
        return a, float(z[na])


#: Largest relative spread of the ratios of the new to the old costs on a bounded set
#: with which :func:`_bound_product` scales the held product: rounding, e.g.
#: :math:`(C' w_+)/(C w_+)` and :math:`(C' w_-)/(C w_-)` of two class weights.
RATIO_RTOL = 4 * np.finfo(float).eps


def _bound_product(bounded: np.ndarray, u: np.ndarray, y: np.ndarray, columns: Any,
                   held: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> np.ndarray:
    r""":math:`g = K_{:,B}(u_B\circ y_B)`, from the held product of a neighbouring value.

    With ``held = (B', u', g')``, :math:`g' = K_{:,B'}(u'_{B'}\circ y_{B'})` and the
    ratio :math:`r = u_i/u'_i` the same on :math:`B\cap B'` (a path over C scales every
    cost by :math:`C/C'`), :math:`g = r g' + K_{:,B\setminus B'}(u\circ y) -
    K_{:,B'\setminus B}(r u'\circ y)`: only the columns whose status differs are read.
    Each step adds the rounding of one product over those columns to that of
    :math:`r g'` (relative :math:`\le` ``RATIO_RTOL`` for the ratio taken as one), so
    after :math:`k` steps the error is at most about :math:`k` times that of a product
    computed afresh (:math:`|B|\epsilon\,\max_i u_i` per entry, the kernel values being
    at most 1 for the RBF kernel), far below smo's tolerance.
    """
    if held is not None:
        b_old, u_old, g_old = held
        both = bounded & b_old
        ratio = u[both] / u_old[both] if both.any() else np.ones(1)
        r = float(np.median(ratio))
        if (np.all(np.isfinite(ratio)) and r > 0
                and np.all(np.abs(ratio - r) <= RATIO_RTOL * r)):
            enter = np.flatnonzero(bounded & ~b_old)
            leave = np.flatnonzero(b_old & ~bounded)
            moved = np.concatenate([enter, leave])
            coef = np.concatenate([u[enter] * y[enter], -r * u_old[leave] * y[leave]])
            return r * g_old + columns.product(moved, coef)
    idx = np.flatnonzero(bounded)
    return columns.product(idx, u[idx] * y[idx])


#: Largest kernel-column store (bytes) a path keeps from one warm start to the next.
PATH_COLUMNS_BYTES = RESERVE_BYTES


def smo_alpha(previous: Any, old: Any, new: Any,
              workspace: dict[str, Any] | None = None) -> dict[str, Any]:
    r"""``smo`` (SVM dual): the previous alpha carried to the new costs.

    The active-set prediction of :func:`_active_set_alpha` when it settles (then smo
    only verifies it, or finishes it in a few updates), with smo's initial products
    :math:`K(x_0\circ y)` and :math:`K_{:,B}(c_B\circ y_B)` from the columns the
    prediction used (``x0_products``); otherwise the previous alpha with its bounded
    variables moved to the new costs (:func:`_balanced_box_start`). The kernel columns
    are this thread's store of the program's kernel and inputs, the one the SVM dual's
    certificate reads (:func:`_columns_of`): a column evaluated here is not evaluated
    again by the certificate, nor by the next value's prediction. Along a path
    (``workspace``) the store is held from one value to the next (up to
    ``PATH_COLUMNS_BYTES``), and so are the free sets' factor and the last start's
    bounded product, updated to the next value's costs and statuses by
    :func:`_bound_product`.
    """
    alpha = previous.values.get("alpha")
    if alpha is None or not (_same(old.data["y"], new.data["y"])
                             and np.shape(old.data["X"]) == np.shape(new.data["X"])):
        return {}
    y = np.asarray(new.data["y"], dtype=float)
    u_old = np.asarray(old.data["c"], dtype=float)
    u_new = np.asarray(new.data["c"], dtype=float)
    kernel = new.data.get("kernel")
    a = np.asarray(alpha, dtype=float)
    X = np.asarray(new.data["X"])
    if (a.shape == y.shape and np.all(np.isfinite(a)) and X.ndim == 2
            and callable(getattr(kernel, "columns", None))):
        held, factor = None, None
        kept = None if workspace is None else workspace.get("smo_columns")
        columns = _columns_of(kernel, X, kept)
        if kept is not None and kept is columns:
            bound = workspace.get("smo_bound")
            # the held product: of these columns, these labels, the old costs
            if (bound is not None and bound[0] is columns and _same(bound[1], y)
                    and _same(bound[3], u_old)):
                held = bound[2:]
            factor = workspace.get("smo_factor")
            # the held factor: of these columns and these labels
            if factor is not None and not (factor.columns is columns
                                           and _same(factor.y, y)):
                factor = None
        if factor is None:
            factor = _FreeFactor(columns, y)
        pred = _active_set_alpha(a, y, u_old, u_new, columns, held, factor)
        if workspace is not None:
            keep = columns.nbytes <= PATH_COLUMNS_BYTES
            workspace["smo_columns"] = columns if keep else None
            workspace["smo_factor"] = factor if keep else None
            workspace["smo_bound"] = None
        if pred is not None:
            point, free, g_bound, bounded, p_free = pred
            # the round-off of the solve, in the box and the balance (only free
            # variables move: the bounded ones are at u_new exactly, the others at 0)
            x0 = point.copy()
            x0[free] = np.clip(point[free], 0.0, u_new[free])
            if abs(float(y @ x0)) > 1e-12 * max(1.0, float(u_new.sum())):
                x0 = _balanced_box_start(x0, y, u_new, u_new)
                fixed = np.ones(y.size, dtype=bool)
                fixed[free] = False
                # the products hold while only free variables moved (the balance gives
                # the excess back from them unless they do not hold it)
                if x0 is not None and not np.array_equal(x0[fixed], point[fixed]):
                    x0 = None
            if x0 is not None:
                xf = x0[free]
                top = xf >= u_new[free]  # free variables that landed on their bound
                Kb = g_bound + columns.product(free[top], u_new[free][top] * y[free][top])
                # the last round's product when the free values did not move
                same = np.array_equal(xf, point[free])
                Kv = g_bound + (p_free if same else columns.product(free, xf * y[free]))
                if workspace is not None and keep:
                    bounded = bounded.copy()
                    bounded[free[top]] = True
                    workspace["smo_bound"] = (columns, y, bounded, u_new, Kb)
                return {"x0": x0, "x0_products": (Kv, Kb)}
    x0 = _balanced_box_start(alpha, y, u_old, u_new)
    return {} if x0 is None else {"x0": x0}


def cbc_alpha(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    """``cbc-smo`` (CBC duals): the previous alpha, bounded variables moved to the new box."""
    alpha = previous.values.get("alpha")
    if alpha is None or not (_same(old.data["y"], new.data["y"])
                             and _same(old.data["radii"], new.data["radii"])):
        return {}
    y = np.asarray(new.data["y"], dtype=float)
    u_old = np.broadcast_to(np.asarray(old.data["cbc"].upper, dtype=float), y.shape)
    u_new = np.broadcast_to(np.asarray(new.data["cbc"].upper, dtype=float), y.shape)
    x0 = _balanced_box_start(alpha, y, u_old, u_new)
    return {} if x0 is None else {"x0": x0}


def svor_pair(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``smo-or`` (SVOR duals): the previous :math:`(\alpha, \alpha^*)` scaled by the best
    factor :math:`r \in [0, C_{new}/C_{old}]`.

    The box is :math:`[0, C]` and every other constraint is homogeneous (partial sums or
    per-threshold balances), so :math:`r x` is feasible for any such :math:`r`. Along the
    ray the dual is :math:`D(rx) = rS - \frac12 r^2 Q`, :math:`S = \sum x`,
    :math:`Q = v^\top Kv = 2(S - D(x))` read from the previous objective (no kernel
    product), maximal at :math:`r = S/Q`, clipped to the interval. A previous point with
    no variable at :math:`C_{old}` keeps :math:`r = 1`: it satisfies the same KKT
    conditions at any :math:`C_{new} \ge C_{old}` (the upper bounds are inactive), so
    past the hard-margin point of the path the next value needs no update.
    """
    a, s = previous.values.get("alpha"), previous.values.get("alpha_star")
    con_old, con_new = old.data.get("svor"), new.data.get("svor")
    if (a is None or s is None or con_old is None or con_new is None
            or type(con_old) is not type(con_new)
            or not (_same(con_old.ranks, con_new.ranks)
                    and np.shape(con_old.X) == np.shape(con_new.X))):
        return {}
    a, s = np.asarray(a, dtype=float), np.asarray(s, dtype=float)
    c_old, c_new = float(con_old.C), float(con_new.C)
    ratio = c_new / c_old
    total = float(a.sum() + s.sum())
    quad = 2.0 * (total - float(previous.objective))
    if ratio >= 1.0 and float(max(a.max(initial=0.0), s.max(initial=0.0))) < c_old:
        r = 1.0
    elif quad > 0.0 and math.isfinite(quad):
        r = min(max(total / quad, 0.0), ratio)
    else:
        r = ratio
    return {"x0": (np.clip(a * r, 0.0, c_new), np.clip(s * r, 0.0, c_new))}


def cbor_pair(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``cbor-smo``: the previous :math:`(\alpha, \alpha^*)` (its box :math:`[0, 1]` and
    partial sums do not depend on the hyper-parameters)."""
    a, s = previous.values.get("alpha"), previous.values.get("alpha_star")
    if a is None or s is None or not (_same(old.data["ranks"], new.data["ranks"])
                                      and int(old.data["r"]) == int(new.data["r"])):
        return {}
    return {"x0": (np.asarray(a, dtype=float), np.asarray(s, dtype=float))}


def _at_new_lambda(previous: Any, rank_old: Any, rank_new: Any, beta: np.ndarray) -> float:
    r""":math:`F_{\lambda'}(\beta)` from the previous value's :math:`F_\lambda(\beta)`: only
    the regulariser changes, :math:`F_{\lambda'} = F_\lambda + \frac{\lambda'-\lambda}2
    \beta^\top K_{\mathcal R\mathcal R}\beta` (no product with :math:`K_{\bullet\mathcal
    R}`, no sort); evaluated afresh when the previous objective is not finite."""
    f = float(previous.objective)
    if not math.isfinite(f):
        return objective(rank_new, beta)
    return f + 0.5 * (float(rank_new.lam) - float(rank_old.lam)) * float(
        beta @ (rank_new.KRR @ beta))


#: A path's ``rank-tr`` solves above :data:`EXACT_MAX_BASIS` get
#: :class:`~conicml.contracts.ranking_ops.WhitenedFeatures` once its values took at least
#: ``n_basis / WHITEN_AFTER`` Hessian products together: forming them (m n_basis^2 flops,
#: one triangular solve with m right-hand sides) costs about that many products' passes
#: over the kernel columns (measured at m = 4 000, n_basis = 2 031: 1.6 s against 21 ms
#: saved per CG step, under load). Counting the whole path's products, not the last
#: value's, is the rent-or-buy rule: the path never pays more than twice the better of
#: forming them at its start and never forming them, and the smaller λ that follow need
#: more products.
WHITEN_AFTER = 64

#: Hessian products of a ``rank-tr`` solve, in units of one PCG run that would switch it
#: to the exact direction (``n_basis / 16``), from which the next λ of a path starts exact:
#: two such runs, ``n_basis / 8`` products, cost about one explicit Hessian, which the
#: exact mode forms once and keeps as its CG preconditioner for the next values.
EXACT_HANDOVER = 2


def rank_beta(previous: Any, old: Any, new: Any,
              workspace: dict[str, Any] | None = None) -> dict[str, Any]:
    r"""``rank-tr`` / ``rank-newton``: the previous :math:`\beta` (same basis), any λ.

    Along a path (``workspace``), two more things. The start is the better (lower objective
    at the new λ) of the previous :math:`\beta` and the secant through the last two
    solutions extrapolated in :math:`\log\lambda` (:math:`\beta(\lambda)` is smooth
    in :math:`\log\lambda`; on a geometric grid the secant carries the last change
    forward): the secant as ``x0`` and the previous :math:`\beta` with its objective at
    the new λ as ``x0_fallback``, which the solver takes when :math:`F` at the secant is
    not lower. And the eigen-coordinates of :math:`K_{\mathcal R\mathcal R}`
    (:class:`~conicml.contracts.ranking_ops.LinearizedRanking`, independent of λ) are
    computed once and passed on (``linearization``): to ``rank-newton`` always, to
    ``rank-tr`` once a solve of the path has needed its exact Newton direction.
    """
    beta = previous.values.get("beta")
    rank_old, rank_new = old.data.get("rank"), new.data.get("rank")
    if (beta is None or rank_old is None or rank_new is None
            or not _same(old.data.get("basis"), new.data.get("basis"))
            or np.shape(rank_old.KR) != np.shape(rank_new.KR)
            or np.shape(beta) != (rank_new.n_basis,)):
        return {}
    beta = np.asarray(beta, dtype=float)
    if workspace is None:
        return {"x0": beta}
    out: dict[str, Any] = {"x0": beta}
    held = workspace.get("rank_previous")
    same_data = rank_old.KR is rank_new.KR and rank_old.KRR is rank_new.KRR
    if (same_data and previous.extras.get("quadratic_pairs") == 0
            and np.all(np.isfinite(beta))):
        # every pair in the loss's linear piece at the previous optimum: there F is
        # c + g^T beta + lambda/2 beta^T K_RR beta with g independent of beta, so the
        # optimum is -K_RR^{-1} g / lambda (eq. 3.15 with no quadratic pair) and scaling
        # by lambda/lambda' keeps the gradient, hence the certificate, unchanged: exact
        # while the scaled margins stay linear, checked by the solver's first evaluation
        at_new = _at_new_lambda(previous, rank_old, rank_new, beta)
        scaled = beta * (float(rank_old.lam) / float(rank_new.lam))
        if math.isfinite(at_new):
            out = {"x0": scaled, "x0_fallback": (beta, at_new)}
    elif (held is not None and same_data and held[0] is rank_new.KR
            and held[1] != rank_old.lam and np.all(np.isfinite(beta))):
        lam_a, beta_a = held[1], held[2]
        step = (math.log(rank_new.lam) - math.log(rank_old.lam)) / (
            math.log(rank_old.lam) - math.log(lam_a))
        secant = beta + step * (beta - beta_a)
        at_new = _at_new_lambda(previous, rank_old, rank_new, beta)
        if np.all(np.isfinite(secant)) and math.isfinite(at_new):
            # the solver evaluates F at the secant (its start) and takes the previous β
            # instead when that is not lower: one evaluation, not two
            out = {"x0": secant, "x0_fallback": (beta, at_new)}
    workspace["rank_previous"] = (rank_new.KR, float(rank_old.lam), beta) if same_data else None
    if same_data and previous.solver == "rank-tr" and rank_new.n_basis > EXACT_MAX_BASIS:
        products = workspace["rank_products"] = (workspace.get("rank_products", 0)
                                                 + previous.extras.get("hessian_products", 0))
        white = _whitened(workspace, rank_new, products)
        if white is not None:
            out["whitened"] = white
    if previous.solver == "rank-newton":
        eig_rtol, wanted = previous.extras.get("eig_rtol"), True
    else:
        # the exact direction from the start: once a value needed it, or once the previous
        # value's Hessian products cost as much as an explicit Hessian (a smaller λ takes
        # more CG steps; rank-tr would switch after a PCG run of n_basis / 16 products,
        # having paid for them and for its own eigen-coordinates)
        eig_rtol = EIG_RTOL
        wanted = rank_new.n_basis <= EXACT_MAX_BASIS and (
            previous.extras.get("exact_directions", 0) > 0
            or previous.extras.get("hessian_products", 0)
            >= EXACT_HANDOVER * rank_new.n_basis / 16)
    if eig_rtol is None or not same_data:
        return out
    lin = workspace.get("rank_linearization")
    if lin is None or not lin.fits(rank_new, eig_rtol):
        lin = LinearizedRanking(rank_new, eig_rtol) if wanted else None
        workspace["rank_linearization"] = lin
    if lin is not None and wanted:
        out["linearization"] = lin
    return out


def _whitened(workspace: dict[str, Any], rank: Any, products: int) -> Any:
    """The path's :class:`~conicml.contracts.ranking_ops.WhitenedFeatures` of ``rank``,
    formed once the path's values took ``n_basis / WHITEN_AFTER`` Hessian products (and
    the Cholesky factor of K_RR needed no jitter of its own); ``None`` before."""
    white = workspace.get("rank_whitened")
    if white is not None and white.fits(rank):
        return white
    if products * WHITEN_AFTER < rank.n_basis or not shared_parts(rank).metric().exact:
        return None
    white = workspace["rank_whitened"] = WhitenedFeatures(rank)
    return white


def dcd_alpha(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``dcd`` (linear SVM, either loss): the previous multipliers and bias.

    The multipliers are ``values["alpha"]`` (dual kinds) or ``duals["margin"]`` (primal
    kinds). For the L1 loss the bounded ones move to the new costs and the balance
    :math:`y^\top\alpha = 0` is restored (:func:`_balanced_box_start`); the L2 loss has
    no upper bound, so they are kept. The bias starts the multiplier of the balance.
    """
    alpha = previous.values.get("alpha", previous.duals.get("margin"))
    b = previous.extras.get("b", previous.values.get("b"))
    if (alpha is None or not _same(old.data["y"], new.data["y"])
            or np.shape(old.data["X"]) != np.shape(new.data["X"])
            or old.data.get("kernel") != new.data.get("kernel")):
        return {}
    y = np.asarray(new.data["y"], dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    if new.kind in (kinds.SVM_L2_DUAL, kinds.SVM_L2_PRIMAL):
        x0 = alpha if alpha.shape == y.shape and np.all(np.isfinite(alpha)) else None
    else:
        x0 = _balanced_box_start(alpha, y, np.asarray(old.data["c"], dtype=float),
                                 np.asarray(new.data["c"], dtype=float))
    if x0 is None:
        return {}
    start: dict[str, Any] = {"x0": x0}
    if b is not None and np.isfinite(float(np.asarray(b))):
        start["b0"] = float(np.asarray(b))
    return start


def pegasos_wb(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    """``pegasos`` / ``weighted-pegasos``: the previous ``(w, b)`` (or ``(v, b)``).

    The solver projects ``w`` onto its ball of radius :math:`1/\\sqrt\\lambda` of the
    new costs, so any ``w`` is a valid start.
    """
    w = previous.values.get("w", previous.values.get("v"))
    b = previous.values.get("b")
    if (w is None or b is None or not _same(old.data["y"], new.data["y"])
            or np.shape(old.data["X"]) != np.shape(new.data["X"])
            or old.data.get("kernel") != new.data.get("kernel")):
        return {}
    return {"x0": np.concatenate([np.asarray(w, dtype=float).reshape(-1),
                                  [float(np.asarray(b))]])}


def simplex_w(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``simplex-smo`` (QPFS): the previous point of the simplex, feasible at every α."""
    w = previous.values.get("w")
    qp_old, qp_new = old.data.get("qp"), new.data.get("qp")
    if w is None or qp_old is None or qp_new is None \
            or qp_old.n_features != qp_new.n_features:
        return {}
    w = np.clip(np.asarray(w, dtype=float).ravel(), 0.0, None)
    total = float(w.sum())
    return {"x0": w / total} if total > 0 else {}


def ellipsoid_multipliers(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``ellipsoid-newton``: the previous multipliers :math:`(\lambda_+, \lambda_-)`.

    Any non-negative pair is a valid start; the rates move the ellipsoids' sizes, not
    their shapes, so the previous optimum is near the next.
    """
    lam = previous.extras.get("multipliers")
    if lam is None:
        return {}
    lam = np.asarray(lam, dtype=float).reshape(-1)
    if lam.shape != (2,) or not np.all(np.isfinite(lam)) or np.any(lam < 0):
        return {}
    return {"x0": (float(lam[0]), float(lam[1]))}



def fractional_w(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``ils-newton`` / ``dinkelbach`` (MPM, BMPM): the previous point :math:`w` (the SOCP's
    ``v``, any scale) when :math:`w^\top d > 0` for the new program (same features).

    Along :math:`\beta_0` or the ridge only the rates and covariances move, so the previous
    hyperplane is a valid start whose ratio is near the new optimum.
    """
    v = previous.values.get("v")
    d = new.data.get("d")
    if v is None or d is None:
        return {}
    v, d = np.asarray(v, dtype=float).reshape(-1), np.asarray(d, dtype=float).reshape(-1)
    if v.shape != d.shape or not np.all(np.isfinite(v)) or not float(d @ v) > 0:
        return {}
    return {"x0": v}


def m4_rho(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""The soft-M4 searches over :math:`\rho` (``quadratic-interpolation``,
    ``envelope-newton``; ``brent`` ignores ``x0``): the previous :math:`\rho^*` as the
    first middle point, and the previous search's fixed-ρ solutions (``inner_memo``).

    The search interval :math:`[0, \kappa^*_{MPM}]` does not depend on C, and a middle
    point outside it is ignored by the search, so any previous :math:`\rho^*` is valid.
    Neither do the slack SOCPs :math:`h(\rho)` nor :math:`\kappa^*_{MPM}`: along a path
    over C on the same factors (:func:`conicml.formulations.m4.with_cost`) a search reads
    the values of :math:`\rho` an earlier one solved (the domain ends, most often) from the
    memo; the search reads a memo only if the program has its very factors
    (:class:`conicml.solvers._m4_inner.InnerMemo`). Other kinds (MEMPM's search over β)
    start cold.
    """
    rho = previous.values.get("rho")
    if rho is None or new.kind != old.kind or "m4" not in new.data:
        return {}
    rho = float(np.asarray(rho))
    start: dict[str, Any] = {"x0": rho} if np.isfinite(rho) and rho > 0 else {}
    memo = previous.extras.get("inner_memo")
    if memo is not None:
        start["inner_memo"] = memo
    return start
