r"""The contract of the MEMPM kind (``sequential.mempm``): :class:`MEMPMData`.

Built by :func:`conicml.formulations.minimax.mempm` into ``program.data["mempm"]``
and read by the line search over β (``quadratic-interpolation``). MEMPM (seed
004 eqs. 3.2–3.4) maximises :math:`F(\beta) = \theta\,\alpha^*(\beta) +
(1-\theta)\beta` over :math:`[\beta_{lo}, \beta_{0m}]`, one BMPM program per
evaluation; the contract builds those programs and evaluates :math:`F`, so the
solver needs nothing of the formulation module.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dsyrk, dtrmv, dtrsv, strsv
from scipy.linalg.lapack import dpotrf, dtrtrs, spotrf

from .._utils.threads import one_blas_thread
from ..program import Program

__all__ = ["GramScatter", "KernelScatter", "MEMPMData", "RidgeStack", "kernel_products"]


@dataclass(frozen=True, eq=False)
class MEMPMData:
    r"""What a solver of the MEMPM kind needs.

    Attributes
    ----------
    theta : float
        Weight of the positive class's accuracy in :math:`F`.
    beta_lo, beta_end : float
        The search interval: 0 (½ for the Gaussian bound) and the largest
        attainable :math:`\beta_{0m}` (eq. 3.44).
    alpha_floor : float
        :math:`\alpha` where the inner BMPM is infeasible (eq. 3.40: 0, or ½
        for the Gaussian bound).
    endpoint_w : ndarray
        :math:`w \propto \Sigma_y^{-1}d`, normalised to :math:`w^\top d = 1`:
        the only hyperplane at :math:`\beta = \beta_{0m}`.
    make_inner : callable
        ``make_inner(beta, previous) -> Program``: the BMPM program at
        :math:`\beta_0 = \beta` (kind ``"socp.bmpm"``); given the previous inner
        program, it re-uses its compiled cvxpy problem (DPP: only the
        parameter :math:`a_y` changes).
    make_model : callable
        ``make_model(beta, w) -> dict``: the MEMPM model at :math:`(\beta, w)`
        (:math:`\kappa_\alpha` by eq. 3.21, clipped by 3.40).
    bound : {"chebyshev", "gaussian"}
        The map between :math:`\kappa` and an accuracy (the global certificate
        over β of ``quadratic-interpolation`` works in :math:`\kappa`).
    beta_stop : float, optional
        From this β on the solver uses the analytic end point
        (``alpha_floor``, ``endpoint_w``) instead of a BMPM solve: next to
        :math:`\beta_{0m}` the BMPM program degenerates (interior-point
        solvers fail) while :math:`\alpha^*(\beta)` is negligible. ``None``:
        ``beta_end``.
    The vectors ``w`` (``endpoint_w``, ``make_model``'s argument, the inner
    programs' solutions) are in the program's coordinates: for kernels, the
    feature-map coordinates, the ``"v"`` entry of a decoded model.
    """

    theta: float
    beta_lo: float
    beta_end: float
    alpha_floor: float
    endpoint_w: np.ndarray
    make_inner: Callable[[float, Program | None], Program]
    make_model: Callable[[float, np.ndarray], dict]
    bound: str = "chebyshev"
    beta_stop: float | None = None

    def value(self, beta: float, alpha: float) -> float:
        r""":math:`F = \theta\alpha + (1-\theta)\beta`."""
        return self.theta * alpha + (1.0 - self.theta) * beta

    def inner_bmpm(self, beta: float, previous: Program | None = None) -> Program:
        """The inner BMPM program at ``beta0 = beta`` (see ``make_inner``)."""
        return self.make_inner(float(beta), previous)

    def model(self, beta: float, w: np.ndarray) -> dict:
        """The MEMPM model at ``(beta, w)`` (see ``make_model``)."""
        return self.make_model(float(beta), np.asarray(w, dtype=float))


def _euclid(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Column-wise inner products of ``A`` and ``B``."""
    return np.einsum("ij,ij->j", A, B)


def _pcg(matvec: Callable[[np.ndarray], np.ndarray],
         precond: Callable[[np.ndarray], np.ndarray], B: np.ndarray, X: np.ndarray,
         rtol: float, max_iter: int, target: np.ndarray | None = None,
         inner: Callable[[np.ndarray, np.ndarray], np.ndarray] = _euclid
         ) -> tuple[np.ndarray, bool]:
    """Preconditioned conjugate gradients on the columns of ``B`` (an operator self-adjoint
    and positive definite in the inner product ``inner``, column-wise), from ``X``; returns
    ``(X, converged)``, converged when every column's residual is at most ``rtol`` times
    its right-hand side's norm (or at most ``target``, per column, when given)."""
    def norms(V: np.ndarray) -> np.ndarray:
        return np.sqrt(np.maximum(inner(V, V), 0.0))

    R = B - matvec(X)
    if target is None:
        target = rtol * norms(B)
    if np.all(norms(R) <= target):
        return X, True
    Z = precond(R)
    P = Z.copy()
    rz = inner(R, Z)
    for _ in range(max_iter):
        AP = matvec(P)
        pap = inner(P, AP)
        alpha = np.divide(rz, pap, out=np.zeros_like(rz), where=pap > 0)
        X = X + alpha * P
        R = R - alpha * AP
        if np.all(norms(R) <= target):
            return X, True
        Z = precond(R)
        rz_new = inner(R, Z)
        beta = np.divide(rz_new, rz, out=np.zeros_like(rz), where=rz > 0)
        P = Z + beta * P
        rz = rz_new
    return X, bool(np.all(norms(B - matvec(X)) <= target))


#: Relative change of the free shift up to which a solve reuses a factored Schur
#: complement (conjugate gradients then absorb the change, a spread of at most 1.1: at
#: most ~9 steps to 1e-13; the few more steps of the solves after a start that missed
#: the optimum's shift by 3-9 % cost less than a factorisation of one class's order).
_FREE_NEAR = 0.1


class _BlockFactor:
    r"""A Cholesky factor of :math:`P = \operatorname{diag}(s_0 I_f, t I_v) + G` in two
    class blocks, the shift :math:`s_0` of block ``f`` held and :math:`t` of block ``v``
    free.

    With :math:`L_f L_f^\top = s_0 I + G_{ff}`, :math:`Z = L_f^{-1}G_{fv}` and the Schur
    complement :math:`S_0 = G_{vv} - Z^\top Z`,

    .. math::

        P = \begin{pmatrix} L_f & 0 \\ Z^\top & L_S \end{pmatrix}
            \begin{pmatrix} L_f^\top & Z \\ 0 & L_S^\top \end{pmatrix},\qquad
        L_S L_S^\top = S_0 + tI,

    so a new :math:`t` costs one factorisation of order :math:`n_v` (an eighth of one of
    order :math:`n` for two equal classes) and the rest is kept. The factor at the first
    free shift ``t0`` is one Cholesky factorisation of order :math:`n` (:math:`L_f`,
    :math:`Z^\top` and :math:`L_S` are its blocks; LAPACK's blocked factorisation runs
    faster than its three steps), whose triangular solves at ``t0`` read it whole;
    :math:`L_f`, :math:`Z` and :math:`S_0` are formed when a second free shift asks for
    them. Vectors are in the original order (class ``x`` first)."""

    def __init__(self, G: np.ndarray, f: slice, v: slice, s0: float, t0: float) -> None:
        self.f, self.v, self.s0 = f, v, float(s0)
        self.G = G
        n_f = f.stop - f.start
        n = n_f + v.stop - v.start
        # P in the order (f, v), Fortran order, its lower triangle (all that LAPACK reads)
        # from row-wise copies of G's blocks (G is symmetric up to rounding of the
        # centring: A[i, j] = G[j, i] as in a copy of the blocks' transposes)
        A = np.empty((n, n), order="F")
        At = A.T  # C-ordered: At[j, i] = A[i, j]
        At[:n_f, :n_f] = G[f, f]
        At[:n_f, n_f:] = G[f, v]
        At[n_f:, n_f:] = G[v, v]
        idx = np.arange(n)
        A[idx[:n_f], idx[:n_f]] += self.s0
        A[idx[n_f:], idx[n_f:]] += float(t0)
        #: the factor of order n at the free shift t0, in the order (f, v)
        self.L, self.t0, self.n_f = _potrf(A), float(t0), n_f
        self._lf: np.ndarray | None = None  # L_f and Z^T, copied out on first need
        self._zt: np.ndarray | None = None
        #: S_0 = G_vv - Z^T Z, its lower triangle (formed on first need)
        self.S0: np.ndarray | None = None
        self._ls: dict[float, np.ndarray] = {}  # t -> L_S, the last few besides t0

    def shifts(self) -> list[float]:
        """The free shifts with a factored Schur complement."""
        return [self.t0, *self._ls]

    def _parts(self) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`L_f` and :math:`Z^\top` (blocks of the factor of order n)."""
        if self._lf is None:
            n_f = self.n_f
            self._lf = np.array(self.L[:n_f, :n_f], order="F")
            self._zt = np.array(self.L[n_f:, :n_f], order="F")
        return self._lf, self._zt

    def schur(self, t: float) -> np.ndarray:
        r""":math:`L_S` at ``t`` (kept for the last four values besides ``t0``)."""
        if t == self.t0:
            return np.array(self.L[self.n_f:, self.n_f:], order="F")
        L = self._ls.get(t)
        if L is None:
            if self.S0 is None:
                v = self.v
                self.S0 = dsyrk(-1.0, self._parts()[1], beta=1.0,
                                c=np.array(self.G[v, v].T, order="F"), trans=0, lower=1,
                                overwrite_c=1)
            A = self.S0.copy(order="F")
            A[np.diag_indices_from(A)] += t
            L = _potrf(A)
            self._ls = {**dict(list(self._ls.items())[-3:]), t: L}
        return L

    def _full(self, T: np.ndarray, op: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``op`` (with the factor of order n) on ``T`` taken to the order (f, v) and back."""
        if self.f.start == 0:
            return op(T)
        Y = op(np.concatenate([T[self.f], T[self.v]]))
        return np.concatenate([Y[self.n_f:], Y[:self.n_f]])

    def lower(self, t: float, T: np.ndarray) -> np.ndarray:
        r""":math:`L^{-1}T`."""
        if t == self.t0:
            return self._full(T, lambda V: _trs(self.L, V, False))
        f, v = self.f, self.v
        Lf, Zt = self._parts()
        Y = np.empty_like(T)
        Y[f] = _trs(Lf, T[f], False)
        Y[v] = _trs(self.schur(t), T[v] - Zt @ Y[f], False)
        return Y

    def upper(self, t: float, Y: np.ndarray) -> np.ndarray:
        r""":math:`L^{-\top}Y`."""
        if t == self.t0:
            return self._full(Y, lambda V: _trs(self.L, V, True))
        f, v = self.f, self.v
        Lf, Zt = self._parts()
        X = np.empty_like(Y)
        X[v] = _trs(self.schur(t), Y[v], True)
        X[f] = _trs(Lf, Y[f] - Zt.T @ X[v], True)
        return X

    def upper_times(self, t: float, S: np.ndarray) -> np.ndarray:
        r""":math:`L^\top S`."""
        if t == self.t0:
            return self._full(S, lambda V: _trm(self.L, V))
        f, v = self.f, self.v
        Lf, Zt = self._parts()
        Y = np.empty_like(S)
        Y[f] = _trm(Lf, S[f]) + Zt.T @ S[v]
        Y[v] = _trm(self.schur(t), S[v])
        return Y


def _trm(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    r""":math:`L^\top B` for a lower triangular Fortran-ordered ``L``, by columns (BLAS-2
    dtrmv: the triangle alone, half the entries of a dense product)."""
    X = np.empty_like(B)
    for j in range(B.shape[1]):
        X[:, j] = dtrmv(L, B[:, j], lower=1, trans=1)
    return X


def _potrf(A: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of the Fortran-ordered ``A`` (lower triangle read), in place;
    ``LinAlgError`` if ``A`` is not numerically positive definite."""
    L, info = dpotrf(A, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"Cholesky factorisation failed (LAPACK info {info})")
    return L


#: Right-hand sides up to which a triangular solve goes column by column (BLAS-2 dtrsv:
#: OpenBLAS's dtrsm / dtrtrs on a few columns of order 1000 take about twice as long).
_TRSV_COLUMNS = 4


def _trs(L: np.ndarray, B: np.ndarray, transpose: bool) -> np.ndarray:
    r""":math:`L^{-1}B` (:math:`L^{-\top}B` if ``transpose``) for a lower triangular
    Fortran-ordered ``L`` by BLAS/LAPACK directly (scipy's wrapper checks cost as much as
    the solve of order 1000)."""
    if B.ndim == 2 and 1 < B.shape[1] <= _TRSV_COLUMNS:
        if not np.all(np.diagonal(L)):
            raise np.linalg.LinAlgError("singular triangular factor (a zero pivot)")
        X = np.empty_like(B)
        for j in range(B.shape[1]):
            X[:, j] = dtrsv(L, B[:, j], lower=1, trans=1 if transpose else 0)
        return X
    X, info = dtrtrs(L, B, lower=1, trans=1 if transpose else 0)
    if info != 0:
        raise np.linalg.LinAlgError(f"singular triangular factor (LAPACK info {info})")
    return X


#: Condition-number bound of :math:`\rho I + A` up to which :class:`_ShiftedSolver`
#: factors in single precision (each refinement step then gains at least ~3 digits).
_SINGLE_KAPPA = 1e3


class _ShiftedSolver:
    r"""Solves with :math:`\rho I + A` (``A`` symmetric positive semidefinite, a view of a
    diagonal block of ``G``) to the accuracy of a double-precision Cholesky solve.

    When :math:`(\rho + \lambda)/\rho \le` :data:`_SINGLE_KAPPA` (``lam`` a bound on
    :math:`\lambda_{\max}(A)`), by a single-precision Cholesky factor (half the time
    of a double one, BLAS-3) and iterative refinement in double precision: each step,
    one product with ``A`` and two triangular solves, contracts the error by about
    :math:`\kappa\epsilon_{single}` (Wilkinson/Moler; the residual is recomputed in
    double precision, so the refined solution is as accurate as a double-precision
    solve's). Refinement stops at a residual of :math:`4\epsilon(\rho + \lambda)
    \|s\|` (a backward-stable solve's); a step that fails to gain a factor 10, or a
    failed single-precision factorisation, gives the double-precision factor.
    """

    def __init__(self, A: np.ndarray, rho: float, lam: float) -> None:
        self.A, self.rho, self.lam = A, float(rho), float(lam)
        self.L32: np.ndarray | None = None
        self.L64: np.ndarray | None = None
        if (self.rho + self.lam) <= _SINGLE_KAPPA * self.rho:
            # (the block's transpose in Fortran order is a row-wise copy: its lower
            # triangle, all that LAPACK reads, is that of the block up to rounding)
            A32 = np.array(A.T, dtype=np.float32, order="F")
            A32[np.diag_indices_from(A32)] += np.float32(self.rho)
            L, info = spotrf(A32, lower=1, clean=1, overwrite_a=1)
            if info == 0 and np.all(np.diagonal(L) > 0):
                self.L32 = L
        if self.L32 is None:
            self._double()

    def _double(self) -> None:
        A = np.array(self.A.T, order="F")
        A[np.diag_indices_from(A)] += self.rho
        self.L64 = _potrf(A)

    def solve(self, T: np.ndarray) -> np.ndarray:
        r""":math:`(\rho I + A)^{-1}T`."""
        if self.L32 is not None:
            S = np.empty_like(T)
            for j in range(T.shape[1]):
                s = self._refined(T[:, j])
                if s is None:
                    break
                S[:, j] = s
            else:
                return S
            self.L32 = None
            self._double()
        return _trs(self.L64, _trs(self.L64, T, False), True)

    def _single(self, r: np.ndarray) -> np.ndarray:
        z = strsv(self.L32, r.astype(np.float32), lower=1, trans=0)
        return strsv(self.L32, z, lower=1, trans=1, overwrite_x=1).astype(float)

    def _refined(self, t: np.ndarray) -> np.ndarray | None:
        s = self._single(t)
        floor = 4.0 * np.finfo(float).eps * (self.rho + self.lam)
        last = math.inf
        for _ in range(8):
            r = t - (self.A @ s + self.rho * s)
            rn = float(np.linalg.norm(r))
            if rn <= floor * float(np.linalg.norm(s)):
                return s
            if rn > 0.1 * last:
                return None
            last = rn
            s = s + self._single(r)
        return None


#: Columns up to which a product with an n x n matrix goes column by column (BLAS-2
#: dgemv reads the matrix once per column; OpenBLAS's dgemm packs it first, which on one
#: thread took 1.3-1.6 times as long for 2-4 columns of order 2000).
_GEMV_COLUMNS = 4


def kernel_products(K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """:math:`KV` for a square ``K``, column by column for two to four columns."""
    if V.ndim == 2 and 1 < V.shape[1] <= _GEMV_COLUMNS:
        out = np.empty((K.shape[0], V.shape[1]))
        for j in range(V.shape[1]):
            out[:, j] = K @ V[:, j]
        return out
    return K @ V


class KernelScatter:
    r"""The class covariances of a kernel MPM/BMPM program held by their centred rows.

    In the feature-map coordinates :math:`u` of :func:`conicml.formulations.minimax.mpm`
    (Theorem 9), :math:`\Sigma_x = C_x^\top C_x + \rho_x I` and
    :math:`\Sigma_y = C_y^\top C_y + \rho_y I` with :math:`C_x, C_y` the class-centred
    rows of the feature map over :math:`\sqrt{N_x}`, :math:`\sqrt{N_y}` (the first rows
    of ``Rx``, ``Ry``); neither covariance is ever formed (each would be an
    :math:`n^3` product). Solves with :math:`M(c) = c\Sigma_x + (1-c)\Sigma_y
    = \mu I + C^\top D_c C` (:math:`C = [C_x; C_y]`, :math:`D_c = \operatorname{diag}(cI,
    (1-c)I)`, :math:`\mu = c\rho_x + (1-c)\rho_y`) go by the Woodbury identity

    .. math::

        M(c)^{-1} = \mu^{-1}\big(I - C^\top(\mu D_c^{-1} + G)^{-1}C\big),\qquad G = CC^\top,

    where :math:`G` is the per-class double-centred Gram matrix over
    :math:`\sqrt{N_aN_b}` (``G``, formed from :math:`K` in :math:`O(n^2)`).
    :math:`H(c) = \mu D_c^{-1} + G` is :math:`G` plus the shift :math:`s_x(c) = \mu/c` on
    the positive block and :math:`s_y(c) = \mu/(1-c)` on the negative one. It is factored
    in two blocks (:class:`_BlockFactor`): the shift of the class of larger weight,
    which moves least with :math:`c`, held at its value :math:`s_0` at the weight of the
    factorisation, the other one exact at every weight by a factorisation of order
    :math:`n_v` of a Schur complement. At a weight whose held shift is within a factor
    ``near`` of :math:`s_0` the system in :math:`H(c)` (which differs from the factored
    one by a multiple of the identity on one block) is solved by conjugate gradients in
    the coordinates of that factor (:meth:`solve`); the result is accepted only at a
    relative residual of ``rtol`` of :math:`M(c)` itself.

    Parameters
    ----------
    Cx, Cy : ndarray
        :math:`C_x` (``n_x`` rows) and :math:`C_y` (``n_y`` rows), ``r`` columns.
    rho_x, rho_y : float
        The ridges (> 0).
    G : ndarray of shape (n_x + n_y, n_x + n_y)
        :math:`CC^\top`.
    lead : int, optional
        :math:`C_x` is zero beyond its first ``lead`` columns (a Cholesky feature map
        with the positive class first); ``None``: all ``r``.
    """

    def __init__(self, Cx: np.ndarray, Cy: np.ndarray, rho_x: float, rho_y: float,
                 G: np.ndarray, lead: int | None = None) -> None:
        self.Cx, self.Cy = Cx, Cy
        self.rho_x, self.rho_y = float(rho_x), float(rho_y)
        self.G = G
        self.n_x = Cx.shape[0]
        self.lead = Cx.shape[1] if lead is None else int(lead)
        self._factor: tuple[bool, _BlockFactor] | None = None  # (x held?, factor)
        self._cfro: float | None = None
        self._glam: float | None = None  # the bound on lambda_max(G) of _c_norm
        #: the last single-column solves H(c) S = T (original coordinates), each as
        #: [c, T, S, B, dS]: B the right-hand side given to :meth:`solve`, dS the solution
        #: of its tangent solve at the same c (None until one is made)
        self._recent: list[list] = []
        self._solve_y: tuple[np.ndarray, np.ndarray] | None = None
        #: number of block factorisations (of order n in all), of Schur-complement
        #: factorisations (order of one class) and of conjugate-gradient solves so far
        self.factorisations = 0
        self.schur_factorisations = 0
        self.cg_solves = 0

    # ---- products ----------------------------------------------------------------------
    def _cx(self, V: np.ndarray) -> np.ndarray:
        return self.Cx[:, :self.lead] @ V[:self.lead]

    def _cxt(self, Z: np.ndarray, r: int) -> np.ndarray:
        out = np.zeros((r,) + Z.shape[1:])
        out[:self.lead] = self.Cx[:, :self.lead].T @ Z
        return out

    def sigma_x(self, V: np.ndarray) -> np.ndarray:
        r""":math:`\Sigma_x V`."""
        return self._cxt(self._cx(V), V.shape[0]) + self.rho_x * V

    def _cy(self, V: np.ndarray) -> np.ndarray:
        return self.Cy @ V

    def _cyt(self, Z: np.ndarray) -> np.ndarray:
        return self.Cy.T @ Z

    def sigma_y(self, V: np.ndarray) -> np.ndarray:
        r""":math:`\Sigma_y V`."""
        return self._cyt(self._cy(V)) + self.rho_y * V

    def sigmas(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`(\Sigma_x V, \Sigma_y V)`."""
        return self.sigma_x(V), self.sigma_y(V)

    def m_matvec(self, c: float, V: np.ndarray) -> np.ndarray:
        """:math:`M(c)V`."""
        SxV, SyV = self.sigmas(V)
        return c * SxV + (1.0 - c) * SyV

    # the inner product of the coordinates (Euclidean here; see GramScatter)
    def inner(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        r"""Column-wise inner products :math:`a_j^\top b_j`."""
        return _euclid(A, B)

    def dot(self, a: np.ndarray, b: np.ndarray) -> float:
        """The inner product of two vectors."""
        return float(a @ b)

    def norms(self, V: np.ndarray) -> np.ndarray:
        """Column-wise norms."""
        return np.linalg.norm(V, axis=0)

    def inner_matrix(self, U: np.ndarray, V: np.ndarray) -> np.ndarray:
        r"""The matrix of inner products :math:`U^\top V`."""
        return U.T @ V

    def _c_and_norms(self, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`CB` and the norms of ``B``'s columns."""
        return self._c(B), self.norms(B)

    def _residual_norms(self, R: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Column norms of ``R``, or upper bounds of them where those are below ``target``
        (only compared with it)."""
        return self.norms(R)

    def _remember(self, x: np.ndarray) -> None:
        """Keep what the last products computed of a solve's result (see GramScatter)."""

    # ---- solves ------------------------------------------------------------------------
    def _mu(self, c: float) -> float:
        return c * self.rho_x + (1.0 - c) * self.rho_y

    def _shifts(self, c: float) -> tuple[float, float]:
        r""":math:`(s_x(c), s_y(c)) = (\mu/c, \mu/(1-c))`."""
        mu = self._mu(c)
        return mu / c, mu / (1.0 - c)

    def _blocks(self, hold_x: bool) -> tuple[slice, slice]:
        n = self.G.shape[0]
        x, y = slice(0, self.n_x), slice(self.n_x, n)
        return (x, y) if hold_x else (y, x)

    def _held(self, hold_x: bool, c: float) -> tuple[float, float]:
        """The shift of the held block and that of the free block at ``c``."""
        sx, sy = self._shifts(c)
        return (sx, sy) if hold_x else (sy, sx)

    def factor(self, c: float) -> _BlockFactor:
        r"""Factor :math:`H(c)` (0 < c < 1) in blocks and keep it; the shift held is that
        of the class of larger weight (:math:`s_x` for :math:`c \ge \tfrac12`)."""
        hold_x = c >= 0.5
        s0, t0 = self._held(hold_x, c)
        with one_blas_thread():
            F = _BlockFactor(self.G, *self._blocks(hold_x), s0, t0)
        self._factor = (hold_x, F)
        self.factorisations += 1
        return F

    def _operator(self, c: float) -> tuple[_BlockFactor, float, np.ndarray | None]:
        r"""The current factor, the free shift :math:`t_0` it is used at and the diagonal
        :math:`H(c) - P` (``None`` if zero) for a solve at ``c``: :math:`t_0` the free
        shift of an earlier weight when within :data:`_FREE_NEAR` of that at ``c`` (the
        last Newton steps and the certificate move the weight by ~1e-6: no new
        factorisation of the Schur complement), else that at ``c`` (factored here)."""
        hold_x, F = self._factor
        s, t = self._held(hold_x, c)
        t0 = min(F.shifts(), key=lambda u: abs(math.log(t / u)))
        if abs(t / t0 - 1.0) > _FREE_NEAR:
            t0 = t
        if t0 not in F.shifts():
            self.schur_factorisations += 1
            F.schur(t0)
        if s == F.s0 and t == t0:
            return F, t0, None
        delta = np.empty((self.G.shape[0], 1))
        delta[F.f] = s - F.s0
        delta[F.v] = t - t0
        return F, t0, delta

    def held_spread(self, c: float) -> float:
        r"""The condition-number bound of the current factor's system at ``c`` against
        :math:`H(c)`: the ratio of the held shift at ``c`` to :math:`s_0` or its inverse
        (:math:`H(c) - P` is that shift's change on one block and :math:`P \succeq s_0 I`
        there), ``inf`` without a factor."""
        if self._factor is None:
            return math.inf
        hold_x, F = self._factor
        s, _ = self._held(hold_x, c)
        return max(s / F.s0, F.s0 / s)

    @staticmethod
    def spread(c: float, c0: float) -> float:
        r"""A bound on the condition number of :math:`M(c_0)^{-1}M(c)`:
        :math:`\max(c/c_0, (1-c)/(1-c_0)) / \min(\cdot)` (both covariances are positive
        definite, so :math:`M(c)` lies between those multiples of :math:`M(c_0)`)."""
        r1, r2 = c / c0, (1.0 - c) / (1.0 - c0)
        return max(r1, r2) / min(r1, r2)

    def _c(self, V: np.ndarray) -> np.ndarray:
        """:math:`CV`, :math:`C = [C_x; C_y]`."""
        return np.concatenate([self._cx(V), self.Cy @ V], axis=0)

    def _ct(self, Z: np.ndarray, r: int) -> np.ndarray:
        r""":math:`C^\top Z`."""
        return self._cxt(Z[:self.n_x], r) + self.Cy.T @ Z[self.n_x:]

    def _c_norm(self) -> float:
        r"""A bound on :math:`\|C^\top\|_2 = \lambda_{\max}(G)^{1/2}`: the square root of
        the largest absolute row sum of :math:`G` (Gershgorin; rows in blocks, no
        temporary of the size of :math:`G`), at most :math:`\sqrt{\operatorname{tr} G}`."""
        if self._cfro is None:
            G = self.G
            bound = 0.0
            for i in range(0, G.shape[0], 256):
                bound = max(bound, float(np.abs(G[i:i + 256]).sum(axis=1).max()))
            self._glam = min(bound, max(float(np.trace(G)), 0.0))
            self._cfro = math.sqrt(self._glam)
        return self._cfro

    def _start(self, c: float, T: np.ndarray) -> np.ndarray | None:
        r"""A first iterate :math:`S` for :math:`H(c)S = T`: for one right-hand side
        within an angle of 1e-2 of one solved before at a weight within a spread of 1.5
        of ``c`` (along the weight curve the same right-hand side recurs at ever closer
        weights, and the derivative's moves slowly), that solution carried to ``c`` and
        scaled to it, the nearest such; else ``None`` (start at 0).

        The solution is :math:`S(c) = D_cCX(c)` with :math:`X(c) = M(c)^{-1}B`
        (:math:`CM^{-1} = D_c^{-1}H^{-1}C` by the Woodbury identity), so the explicit
        factor :math:`D_c` is carried exactly and :math:`U(c) = D_c^{-1}S(c) = CX(c)` is
        extrapolated: with the tangent solve of that entry (:math:`X_t = M^{-1}(\Sigma_x -
        \Sigma_y)X = -X'(c)`, :math:`S_t = D_cCX_t`) to first order,
        :math:`S(c') \approx D_{c'}D_c^{-1}(S - (c' - c)S_t)`; without one, by the
        secant through the next nearest such solution at another weight :math:`c_q`
        (:math:`U(c') \approx U + (c' - c)(U - U_q)/(c - c_q)`, error
        :math:`O(|c' - c|\,|c' - c_q|)`), else as it is (error :math:`O(|c' - c|)`)."""
        if T.shape[1] != 1 or not self._recent:
            return None
        t = T[:, 0]
        tt = float(t @ t)
        near = []  # (spread, weight, U scaled to t, tangent of U or None)
        for cp, tp, sp, _, dsp in self._recent:
            tpt = float(tp @ t)
            cos2 = tpt * tpt / max(tt * float(tp @ tp), np.finfo(float).tiny)
            if cos2 > 1.0 - 1e-4 and self.spread(c, cp) < 1.5:
                scale = tpt / float(tp @ tp)
                u = sp * scale
                u[:self.n_x] /= cp
                u[self.n_x:] /= 1.0 - cp
                du = None
                if dsp is not None:
                    du = -dsp * scale
                    du[:self.n_x] /= cp
                    du[self.n_x:] /= 1.0 - cp
                near.append((self.spread(c, cp), cp, u, du))
        if not near:
            return None
        near.sort(key=lambda entry: entry[0])
        _, cp, u, du = near[0]
        if du is None:
            other = [q for q in near[1:] if q[1] != cp]
            if other:
                _, cq, uq, _ = other[0]
                du = (u - uq) / (cp - cq)
        s = u if du is None else u + (c - cp) * du
        s[:self.n_x] *= c
        s[self.n_x:] *= 1.0 - c
        return s[:, None]

    def _keep(self, c: float, T: np.ndarray, S: np.ndarray, B: np.ndarray,
              tangent_of: np.ndarray | None) -> None:
        """Keep a single-column solve for the starts of later ones (:meth:`_start`); a
        tangent solve (``tangent_of`` the right-hand side of an earlier solve at ``c``)
        is also attached to that solve."""
        if tangent_of is not None:
            for entry in self._recent:
                if entry[0] == c and entry[3] is tangent_of:
                    entry[4] = S
                    break
        self._recent = ([[c, T, S, B, None]] + self._recent)[:4]

    def _apply_inverse(self, c: float, V: np.ndarray) -> np.ndarray:
        r"""The Woodbury form of :math:`M(c)^{-1}V` with the current factor's :math:`P` in
        place of :math:`H(c)`: :math:`(V - C^\top P^{-1}CV)/\mu` (exact when ``c`` is the
        factor's weight; a preconditioner of :math:`M(c)` next to it)."""
        F, t, _ = self._operator(c)
        S = F.upper(t, F.lower(t, self._c(V)))
        return (V - self._ct(S, V.shape[0])) / self._mu(c)

    def solve(self, c: float, B: np.ndarray, near: float = 1.5, rtol: float = 1e-13,
              max_iter: int = 40, products: bool = False,
              tangent_of: np.ndarray | None = None
              ) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
        r""":math:`M(c)^{-1}B` (``B`` a vector or the columns of a matrix).

        By the Woodbury identity, :math:`M(c)^{-1}B = \mu^{-1}(B - C^\top S)` with
        :math:`H(c)S = CB`, :math:`H(c) = \mu D_c^{-1} + G` (order :math:`n`). With the
        current block factor (:class:`_BlockFactor`) at the free shift of ``c``, the
        factored :math:`P` differs from :math:`H(c)` by :math:`\delta I` on the held
        block (:math:`\delta` the change of the held shift): when the held shift is
        within a factor ``near`` of :math:`s_0` (:meth:`held_spread`, a bound on the
        condition number) the system is solved by conjugate gradients on
        :math:`L^{-1}H(c)L^{-\top}` (a step: one product with :math:`\delta` on a block
        and two block triangular solves), else with a new factor at ``c``. The residual
        of :math:`M(c)` follows from that of :math:`H(c)`: :math:`M(c)X - B = \mu^{-1}
        C^\top D_c(CB - H(c)S)`, so the iteration stops when :math:`\|C\|_F\|D_c r\|/\mu`
        is at most ``rtol`` times :math:`\|B\|`; the result is accepted only when the
        residual of :math:`M(c)` itself, recomputed, is at most ``rtol`` (else conjugate
        gradients on :math:`M(c)` refine it). With ``products``, returns
        ``(X, Sigma_x X, Sigma_y X)`` (the products of that check). ``tangent_of``: ``B``
        is :math:`(\Sigma_x - \Sigma_y)X_0` for the result :math:`X_0` of an earlier
        single-column solve at the same ``c`` with the right-hand side ``tangent_of``
        (the same object), so that the result is :math:`-X_0'(c)`; kept for the first
        iterates of later solves (:meth:`_start`), which it does not change otherwise."""
        vec = B.ndim == 1
        B2 = B[:, None] if vec else B
        r = B2.shape[0]
        mu = self._mu(c)
        dmax = max(c, 1.0 - c)
        # the H(c) residual that bounds the M(c) residual by rtol * ||B||
        with one_blas_thread():  # matrix-vector products: waking threads costs more
            T, bnorm = self._c_and_norms(B2)
        h_target = rtol * bnorm * mu / (dmax * max(self._c_norm(), np.finfo(float).tiny))
        with one_blas_thread():

            def attempt(steps: int) -> tuple[np.ndarray, bool]:
                # H(c) = L L^T + Delta (Delta diagonal, constant on each class block):
                # conjugate gradients on L^-1 H(c) L^-T y = L^-1 C B, s = L^-T y; the
                # residual of H(c) is L times that of y
                F, t, delta = self._operator(c)

                def a_matvec(Y: np.ndarray) -> np.ndarray:
                    if delta is None:
                        return Y
                    return Y + F.lower(t, delta * F.upper(t, Y))

                Ty = F.lower(t, T)
                S0 = self._start(c, T)
                Y0 = Ty if S0 is None else F.upper_times(t, S0)
                # ||L||_2^2 = lambda_max(P) <= lambda_max(G) + the largest shift (the
                # residual of H(c) is at most ||L||_2 times that of y)
                l_norm = math.sqrt(max(self._glam + max(F.s0, t), np.finfo(float).tiny))
                Y, ok = _pcg(a_matvec, lambda V: V, Ty, Y0, rtol, steps,
                             target=h_target / l_norm)
                S = F.upper(t, Y)
                if ok and Y.shape[1] == 1:
                    self._keep(c, T[:, 0], S[:, 0], B, tangent_of)
                return (B2 - self._ct(S, r)) / mu, ok

            self._c_norm()
            X, ok = None, False
            if self.held_spread(c) <= near:
                X, ok = attempt(max_iter)
            if not ok:
                self.factor(c)
                X, ok = attempt(5)
            else:
                self.cg_solves += 1
            # accept on the recomputed residual of M(c) (the Woodbury form subtracts two
            # terms of the size of B); else refine on M(c) with the same factor
            target = rtol * bnorm
            SxX, SyX = self.sigmas(X)
            if np.any(self._residual_norms(B2 - c * SxX - (1.0 - c) * SyX, target) > target):
                X, _ = _pcg(lambda V: self.m_matvec(c, V),
                            lambda V: self._apply_inverse(c, V), B2, X, rtol, 5,
                            inner=self.inner)
                if products:
                    SxX, SyX = self.sigmas(X)
        out = X[:, 0] if vec else X
        self._remember(out)
        if products:
            return (out, SxX[:, 0], SyX[:, 0]) if vec else (out, SxX, SyX)
        return out

    def solve_y(self, b: np.ndarray) -> np.ndarray:
        r""":math:`\Sigma_y^{-1}b` by the Woodbury identity on the negative class alone (one
        Cholesky factorisation of :math:`\rho_yI + C_yC_y^\top`, order :math:`n_y`, single
        precision and refined where well conditioned: :class:`_ShiftedSolver`), refined
        by conjugate gradients on :math:`\Sigma_y`; the last right-hand side's solution is
        kept (a BMPM program and its :math:`\beta_{0m}` ask for the same one)."""
        if self._solve_y is not None and np.array_equal(self._solve_y[0], b):
            return self._solve_y[1].copy()
        n_x = self.n_x
        self._c_norm()  # (the bound on lambda_max(G), also that of its diagonal blocks)
        with one_blas_thread():
            shifted = _ShiftedSolver(self.G[n_x:, n_x:], self.rho_y, self._glam)
        self.factorisations += 1

        def inverse(V: np.ndarray) -> np.ndarray:
            Z = shifted.solve(self._cy(V))
            return (V - self._cyt(Z)) / self.rho_y

        B2 = b[:, None]
        with one_blas_thread():
            # accepted on its recomputed residual (at most 1e-13 of b, through the bound of
            # _residual_norms where that settles it), else refined
            X = inverse(B2)
            target = 1e-13 * self._c_and_norms(B2)[1]
            if np.any(self._residual_norms(B2 - self.sigma_y(X), target) > target):
                X, _ = _pcg(self.sigma_y, inverse, B2, X, 1e-13, 5, inner=self.inner)
        self._solve_y = (np.array(b, copy=True), X[:, 0].copy())
        return X[:, 0]

    def weight_of(self, px: float, py: float) -> float:
        r"""The weight :math:`c` with :math:`p_x\Sigma_x + p_y\Sigma_y \propto M(c)`."""
        return px / (px + py)


class GramScatter(KernelScatter):
    r"""The class covariances of a kernel MPM/BMPM program written in dual coefficients.

    :class:`KernelScatter` works in feature-map coordinates :math:`u` (a factor
    :math:`K = \Phi\Phi^\top`, :math:`C = J\Phi` with :math:`J` the per-class centring
    over :math:`\sqrt{N_a}`). Every vector there has a representative :math:`z` with
    :math:`u = \Phi^\top z` (the dual coefficients, Theorem 9: :math:`Cu = JKz`,
    :math:`C^\top y = \Phi^\top Jy`, :math:`u_1^\top u_2 = z_1^\top Kz_2`), so the same
    formulas hold with :math:`C \to JK`, :math:`C^\top \to J` and the inner product of
    :math:`K`: :math:`\Sigma_x u` has the representative :math:`J_x^2(Kz) + \rho_xz`, and
    the Woodbury solve :math:`M(c)^{-1}B = \mu^{-1}(B - C^\top S)`, :math:`H(c)S = CB`,
    needs only :math:`G = JKJ` and products with :math:`K`. No factor of :math:`K` is
    formed. Every method takes and returns representatives; inner products, norms and
    conjugate gradients on :math:`M(c)` are those of :math:`K`.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The Gram matrix, the ``n_x`` positive points first (kept, not copied).
    n_x : int
    rho_x, rho_y : float
        The ridges (> 0).
    G : ndarray of shape (n, n)
        :math:`JKJ` (the class-centred Gram matrix).
    d_rep : ndarray of shape (n,)
        The representative of the mean difference: :math:`e = 1_x/N_x - 1_y/N_y`.
    kd : ndarray of shape (n,), optional
        :math:`Ke` if already formed.
    row_sums : ndarray of shape (n,), optional
        :math:`K1` when every entry of :math:`K` is non-negative (an RBF kernel): then
        also the absolute row sums, whose largest is Gershgorin's bound on
        :math:`\lambda_{\max}(K)` (else that bound is formed by a pass over :math:`K`
        on first use).
    """

    def __init__(self, K: np.ndarray, n_x: int, rho_x: float, rho_y: float, G: np.ndarray,
                 d_rep: np.ndarray, kd: np.ndarray | None = None,
                 row_sums: np.ndarray | None = None) -> None:
        n = K.shape[0]
        super().__init__(np.empty((n_x, 0)), np.empty((n - n_x, 0)), rho_x, rho_y, G, lead=0)
        self.K = K
        self.d_rep = d_rep
        # K d_rep: the mean difference in the program's coordinates (given, or formed)
        self._kd = self.kmul(d_rep) if kd is None else kd
        self._kcache: list[tuple[np.ndarray, np.ndarray]] = []
        self._last_kv: tuple[np.ndarray, np.ndarray] | None = None
        # Gershgorin's bound on lambda_max(K): from the row sums of a non-negative K,
        # raised by the rounding bound of a sum of n non-negative terms (n eps, relative)
        self._kmax: float | None = None if row_sums is None else \
            float(np.max(row_sums)) * (1.0 + 4.0 * n * np.finfo(float).eps)
        self._last_sqs: tuple[np.ndarray, tuple[float, float]] | None = None
        self._galerkin: tuple[int, tuple] | None = None  # (size, galerkin(size))
        #: the restriction's basis (points, dense columns V, column scales) of galerkin
        self.galerkin_basis: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._blocks_xy = (slice(0, n_x), slice(n_x, n))
        self.sizes = (n_x, n - n_x)

    def kmul(self, V: np.ndarray) -> np.ndarray:
        """:math:`KV` (callers limit BLAS to one thread around their loops)."""
        return kernel_products(self.K, V)

    def _centre(self, V: np.ndarray, a: int, power: int) -> np.ndarray:
        r""":math:`J_a^{power}V` on the rows of class ``a`` (``V`` holds only those rows)."""
        out = V - V.mean(axis=0)
        return out / (self.sizes[a] ** (0.5 * power))

    def _j(self, V: np.ndarray, power: int = 1) -> np.ndarray:
        out = np.empty_like(V)
        for a, blk in enumerate(self._blocks_xy):
            out[blk] = self._centre(V[blk], a, power)
        return out

    def _c(self, V: np.ndarray) -> np.ndarray:
        return self._j(self.kmul(V))

    def _ct(self, Z: np.ndarray, r: int) -> np.ndarray:
        return self._j(Z)

    def _cy(self, V: np.ndarray) -> np.ndarray:
        y = self._blocks_xy[1]
        with one_blas_thread():
            return self._centre(self.K[y] @ V, 1, 1)

    def _cyt(self, Z: np.ndarray) -> np.ndarray:
        out = np.zeros((self.K.shape[0],) + Z.shape[1:])
        out[self._blocks_xy[1]] = self._centre(Z, 1, 1)
        return out

    def _sigma(self, KV: np.ndarray, V: np.ndarray, a: int) -> np.ndarray:
        blk = self._blocks_xy[a]
        out = (self.rho_x, self.rho_y)[a] * V
        out[blk] += self._centre(KV[blk], a, 2)
        return out

    def sigma_x(self, V: np.ndarray) -> np.ndarray:
        return self._sigma(self.kmul(V), V, 0)

    def sigma_y(self, V: np.ndarray) -> np.ndarray:
        # only the negative class's rows of K V enter
        blk = self._blocks_xy[1]
        out = self.rho_y * V
        out[blk] += self._centre(self.K[blk] @ V, 1, 2)
        return out

    def sigmas(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        KV = self._kept(V)
        if KV is None:
            KV = self.kmul(V)
        self._last_kv = (V, KV)
        return self._sigma(KV, V, 0), self._sigma(KV, V, 1)

    def _remember(self, x: np.ndarray) -> None:
        # the solve's acceptance check formed K X: kept for the inner products of its
        # result (the weight curve's sigma's and derivative)
        last = self._last_kv
        if last is None or x.ndim != 1 or last[0].ndim != 2 or last[0].shape[1] != 1 or \
                not np.shares_memory(x, last[0]):
            return
        self._keep_kv(x, last[1][:, 0])

    def _c_and_norms(self, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # the weight curve solves with the mean difference's representative at every
        # weight: K d_rep is kept (matched by identity, as the other kept products)
        d = self.d_rep
        same = B.base is d and B.shape == (d.size, 1) and B.strides[0] == d.strides[0] \
            and B.__array_interface__["data"][0] == d.__array_interface__["data"][0]
        KB = self._kd[:, None] if same else self.kmul(B)
        b = B.base
        if not same and B.shape[1] == 1 and isinstance(b, np.ndarray) and b.shape == (
                B.shape[0],) and np.shares_memory(b, B) and B.strides[0] == b.strides[0]:
            # a single right-hand side given as a vector (B its column view): K b kept for
            # the caller's inner products with it
            self._keep_kv(b, KB[:, 0])
        return self._j(KB), np.sqrt(np.maximum(_euclid(B, KB), 0.0))

    def _residual_norms(self, R: np.ndarray, target: np.ndarray) -> np.ndarray:
        # sqrt(lambda_max(K)) |r| bounds the norm of K; the exact one where that does not
        # settle the comparison
        if self._kmax is None:
            K = self.K
            self._kmax = max(float(np.abs(K[i:i + 256]).sum(axis=1).max())
                             for i in range(0, K.shape[0], 256))
        root = math.sqrt(self._kmax)
        bound = root * np.linalg.norm(R, axis=0)
        if np.all(bound <= target):
            return bound
        # a residual on one class's rows up to a part that the bound settles (Sigma_y's
        # solves leave rounding on the other rows): the norm of K's block on those rows
        # plus that bound of the rest (the triangle inequality over the two blocks)
        for a, blk in enumerate(self._blocks_xy):
            rest = self._blocks_xy[1 - a]
            small = root * np.linalg.norm(R[rest], axis=0)
            if np.all(small <= 1e-2 * target):
                Ra = R[blk]
                part = np.sqrt(np.maximum(_euclid(Ra, self.K[blk, blk] @ Ra), 0.0))
                if np.all(part + small <= target):
                    return part + small
                break
        return self.norms(R)

    def remember(self, v: np.ndarray, kv: np.ndarray) -> None:
        """Keep :math:`Kv` (formed by the caller) for the inner products with ``v``."""
        self._keep_kv(v, kv)

    def _keep_kv(self, v: np.ndarray, kv: np.ndarray) -> None:
        # the last six vectors, by identity (the certificate's decrement pairs the point,
        # the row's gradient, the Lagrangian's and the solutions with the last two); one
        # entry per vector, the last used first
        self._kcache = [(v, kv)] + [e for e in self._kcache if e[0] is not v][:5]

    def k_product(self, v: np.ndarray) -> np.ndarray:
        """:math:`Kv`: the kept product for ``v`` (matched by identity; a solve keeps that
        of its result, formed by its acceptance check), else formed and kept (the vectors
        whose inner products come in pairs: the weight vector against both covariances'
        products)."""
        kv = self._kept(v)
        if kv is None:
            kv = self.kmul(v)
        if kv is not self._kd:
            self._keep_kv(v, kv)
        return kv

    def _kept(self, v: np.ndarray) -> np.ndarray | None:
        """A kept :math:`Kv` (matched by identity), else ``None``."""
        for obj, kv in self._kcache:
            if obj is v:
                return kv
        if v is self.d_rep:
            return self._kd
        last = self._last_kv
        return last[1] if last is not None and last[0] is v else None

    def sigma_sqs(self, z: np.ndarray) -> tuple[float, float]:
        r""":math:`(\sigma_x^2, \sigma_y^2)`, :math:`\sigma_a^2 = \|J_a(Kz)_a\|^2 +
        \rho_a z^\top Kz`, from one product with :math:`K`; the last argument equal in
        value reads the last result (a decode asks twice for the same normalised
        point)."""
        last = self._last_sqs
        if last is not None and np.array_equal(last[0], z):
            return last[1]
        kz = self._kept(z)  # (a kept product, matched by identity)
        if kz is None:
            with one_blas_thread():
                kz = self.kmul(z)
        zkz = float(z @ kz)
        out = []
        for a, blk in enumerate(self._blocks_xy):
            cz = self._centre(kz[blk], a, 1)
            out.append(float(cz @ cz) + (self.rho_x, self.rho_y)[a] * zkz)
        self._last_sqs = (np.array(z, copy=True), (out[0], out[1]))
        return out[0], out[1]

    def galerkin(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        r"""The program restricted to a subspace of representatives: those supported on
        ``size`` points (every :math:`\lceil n/\text{size}\rceil`-th, so both classes in
        proportion) and three dense vectors, :math:`e` and :math:`J_a^2Ke` on class
        :math:`a`'s rows (so :math:`\Sigma_ae`: the first Krylov vectors of the weight
        curve's systems, :math:`w(c) = M(c)^{-1}d`). With :math:`z = B\beta` (:math:`B`
        those columns, each scaled to unit diagonal of :math:`Q_x + Q_y`), the mean
        difference :math:`B^\top Ke` and the covariances :math:`Q_a = (J_a(KB)_a)^\top
        (J_a(KB)_a) + \rho_aB^\top KB`, i.e. :math:`\sigma_a^2(B\beta) =
        \beta^\top Q_a\beta` (a Galerkin restriction, :math:`O(n\,\text{size}^2)` and
        one product with :math:`K`: the rows of :math:`K` at those points, kept: the
        arrays are read-only; :math:`B` is ``self.galerkin_basis``); ``None`` when
        ``size`` is above a quarter of :math:`n` (the restriction would cost about what
        the program does)."""
        n = self.K.shape[0]
        if not 0 < 4 * size <= n:
            return None
        if self._galerkin is not None and self._galerkin[0] == size:
            return self._galerkin[1]  # (read only: MEMPM's inner programs share K)
        idx = np.arange(0, n, -(-n // size))
        m = idx.size
        rows = self.K[idx]  # E^T K, contiguous rows (K is symmetric)
        # the dense columns V = [e, J_x^2 K e, J_y^2 K e] and K V (K e is kept)
        V, KV = np.zeros((n, 3)), np.empty((n, 3))
        V[:, 0], KV[:, 0] = self.d_rep, self._kd
        Q = []
        with one_blas_thread():
            for a, blk in enumerate(self._blocks_xy):
                V[blk, 1 + a] = self._centre(self._kd[blk], a, 2)
                KV[:, 1 + a] = self.K[:, blk] @ V[blk, 1 + a]
            gram = np.empty((m + 3, m + 3))  # B^T K B
            gram[:m, :m] = rows[:, idx]
            gram[:m, m:] = KV[idx]
            gram[m:, :m] = KV[idx].T
            gram[m:, m:] = V.T @ KV
            for a, blk in enumerate(self._blocks_xy):
                C = self._centre(np.hstack([rows[:, blk].T, KV[blk]]), a, 1)  # J_a (KB)_a
                Q.append(C.T @ C + (self.rho_x, self.rho_y)[a] * gram)
        scale = 1.0 / np.sqrt(np.diag(Q[0]) + np.diag(Q[1]))
        out = (np.concatenate([self._kd[idx], V.T @ self._kd]) * scale,
               Q[0] * np.outer(scale, scale), Q[1] * np.outer(scale, scale))
        for arr in out:
            arr.flags.writeable = False
        self.galerkin_basis = (idx, V, scale)
        self._galerkin = (size, out)
        return out

    def forget(self) -> None:
        """Drop the kept products with :math:`K` (they are matched by identity: a solve or
        a certificate starts and ends with none, so no array changed in place since is
        ever read through them)."""
        self._kcache = []
        self._last_kv = None

    def inner(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return _euclid(A, self.kmul(B))

    def inner_matrix(self, U: np.ndarray, V: np.ndarray) -> np.ndarray:
        return U.T @ self.kmul(V)

    def dot(self, a: np.ndarray, b: np.ndarray) -> float:
        if a is self.d_rep:  # K d_rep is kept (K's inner product is symmetric)
            return float(self._kd @ b)
        for obj, kv in self._kcache:
            if obj is a:
                return float(kv @ b)
        return float(a @ self.k_product(b))

    def norms(self, V: np.ndarray) -> np.ndarray:
        return np.sqrt(np.maximum(self.inner(V, V), 0.0))


class RidgeStack:
    r"""The matrix :math:`R = [C; \sqrt\rho\,I]` (so :math:`R^\top R = C^\top C + \rho I`)
    without its identity block: products :math:`Rv`, :math:`R^\top r` in
    :math:`O(\text{size of } C)`; ``np.asarray(R)`` forms the dense matrix (once, kept)
    for a consumer that needs it (a generic conic backend).

    Parameters
    ----------
    C : ndarray of shape (m, r)
    rho : float
        The ridge (>= 0).
    """

    __array_ufunc__ = None  # ``ndarray @ R`` defers to __rmatmul__

    def __init__(self, C: np.ndarray, rho: float) -> None:
        self.C, self.rho = C, float(rho)
        self.shape = (C.shape[0] + C.shape[1], C.shape[1])
        self.ndim = 2
        self._dense: np.ndarray | None = None

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        if self._dense is None:
            m, r = self.C.shape
            dense = np.zeros(self.shape)
            dense[:m] = self.C
            dense[np.arange(m, m + r), np.arange(r)] = np.sqrt(self.rho)
            self._dense = dense
        return self._dense if dtype is None else self._dense.astype(dtype)

    def __matmul__(self, other: object) -> np.ndarray:
        if isinstance(other, (RidgeStack, _RidgeStackT)):
            return np.asarray(self) @ np.asarray(other)
        V = np.asarray(other, dtype=float)
        with one_blas_thread():  # a matrix-vector product: waking threads costs more
            CV = self.C @ V
        return np.concatenate([CV, np.sqrt(self.rho) * V], axis=0)

    def __rmatmul__(self, other: object) -> np.ndarray:
        return np.asarray(other) @ np.asarray(self)

    @property
    def T(self) -> _RidgeStackT:  # noqa: N802
        return _RidgeStackT(self)

    def frobenius(self) -> float:
        r""":math:`\|R\|_F`."""
        return float(np.sqrt(np.sum(self.C * self.C) + self.rho * self.C.shape[1]))


class _RidgeStackT:
    """The transpose of a :class:`RidgeStack`."""

    __array_ufunc__ = None

    def __init__(self, R: RidgeStack) -> None:
        self.R = R
        self.shape = (R.shape[1], R.shape[0])
        self.ndim = 2

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return np.asarray(self.R, dtype=dtype).T

    def __matmul__(self, other: object) -> np.ndarray:
        if isinstance(other, (RidgeStack, _RidgeStackT)):
            return np.asarray(self) @ np.asarray(other)
        V = np.asarray(other, dtype=float)
        m = self.R.C.shape[0]
        with one_blas_thread():
            CtV = self.R.C.T @ V[:m]
        return CtV + np.sqrt(self.R.rho) * V[m:]

    def __rmatmul__(self, other: object) -> np.ndarray:
        return np.asarray(other) @ np.asarray(self)

    @property
    def T(self) -> RidgeStack:  # noqa: N802
        return self.R
