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
from scipy.linalg import cholesky, solve_triangular

from .._utils.threads import one_blas_thread
from ..program import Program

__all__ = ["KernelScatter", "MEMPMData", "RidgeStack"]


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


def _pcg(matvec: Callable[[np.ndarray], np.ndarray],
         precond: Callable[[np.ndarray], np.ndarray], B: np.ndarray, X: np.ndarray,
         rtol: float, max_iter: int,
         target: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Preconditioned conjugate gradients on the columns of ``B`` (an SPD operator), from
    ``X``; returns ``(X, converged)``, converged when every column's residual is at most
    ``rtol`` times its right-hand side's norm (or at most ``target``, per column, when
    given)."""
    R = B - matvec(X)
    if target is None:
        target = rtol * np.linalg.norm(B, axis=0)
    if np.all(np.linalg.norm(R, axis=0) <= target):
        return X, True
    Z = precond(R)
    P = Z.copy()
    rz = np.einsum("ij,ij->j", R, Z)
    for _ in range(max_iter):
        AP = matvec(P)
        pap = np.einsum("ij,ij->j", P, AP)
        alpha = np.divide(rz, pap, out=np.zeros_like(rz), where=pap > 0)
        X = X + alpha * P
        R = R - alpha * AP
        if np.all(np.linalg.norm(R, axis=0) <= target):
            return X, True
        Z = precond(R)
        rz_new = np.einsum("ij,ij->j", R, Z)
        beta = np.divide(rz_new, rz, out=np.zeros_like(rz), where=rz > 0)
        P = Z + beta * P
        rz = rz_new
    return X, bool(np.all(np.linalg.norm(B - matvec(X), axis=0) <= target))


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
    :math:`\sqrt{N_aN_b}` (``G``, formed from :math:`K` in :math:`O(n^2)`): one Cholesky
    factorisation of :math:`H(c) = \mu D_c^{-1} + G` per weight :math:`c`. A solve at a
    weight next to the last factored one (the factor's :math:`M(c_0)` within a factor
    ``near`` of :math:`M(c)` in the Loewner order) runs conjugate gradients on
    :math:`H(c)` in the coordinates of that factor instead of a new factorisation
    (:meth:`solve`); its result is accepted only at a relative residual of ``rtol`` of
    :math:`M(c)` itself.

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
        self._factor: tuple[float, np.ndarray] | None = None  # (c0, Cholesky factor)
        self._cfro: float | None = None
        #: (c, T_y, y) of the last single-column solves with the current factor
        self._recent: list[tuple[float, np.ndarray, np.ndarray]] = []
        #: number of Cholesky factorisations and of conjugate-gradient solves so far
        self.factorisations = 0
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

    def sigma_y(self, V: np.ndarray) -> np.ndarray:
        r""":math:`\Sigma_y V`."""
        return self.Cy.T @ (self.Cy @ V) + self.rho_y * V

    def m_matvec(self, c: float, V: np.ndarray) -> np.ndarray:
        """:math:`M(c)V`."""
        return c * self.sigma_x(V) + (1.0 - c) * self.sigma_y(V)

    # ---- solves ------------------------------------------------------------------------
    def _mu(self, c: float) -> float:
        return c * self.rho_x + (1.0 - c) * self.rho_y

    def _start(self, c: float, c0: float, Ty: np.ndarray) -> np.ndarray:
        r"""The first iterate of conjugate gradients on :math:`A(c)y = T_y` in the
        coordinates of the factor at ``c0``: :math:`T_y` itself (:math:`s = H(c_0)^{-1}T`),
        or, for one right-hand side nearly parallel to one solved before with this factor
        at a weight nearer ``c`` than ``c0``, that solution scaled to it (along the weight
        curve the same right-hand side recurs at ever closer weights)."""
        if Ty.shape[1] != 1 or not self._recent:
            return Ty
        t = Ty[:, 0]
        tt = float(t @ t)
        best, start = self.spread(c, c0), Ty
        for cp, tp, yp in self._recent:
            tpt = float(tp @ t)
            cos2 = tpt * tpt / max(tt * float(tp @ tp), np.finfo(float).tiny)
            if cos2 > 1.0 - 1e-10 and self.spread(c, cp) < best:
                best, start = self.spread(c, cp), (yp * (tpt / float(tp @ tp)))[:, None]
        return start

    def factor(self, c: float) -> np.ndarray:
        r"""Factor :math:`\mu D_c^{-1} + G` at ``c`` (0 < c < 1) and keep it."""
        mu = self._mu(c)
        A = self.G.copy()
        idx = np.arange(A.shape[0])
        A[idx[:self.n_x], idx[:self.n_x]] += mu / c
        A[idx[self.n_x:], idx[self.n_x:]] += mu / (1.0 - c)
        with one_blas_thread():
            L = cholesky(A, lower=True, overwrite_a=True, check_finite=False)
        self._factor = (float(c), L)
        self._recent = []  # solutions in the coordinates of the previous factor
        self.factorisations += 1
        return L

    def _apply_inverse(self, c0: float, L: np.ndarray, V: np.ndarray) -> np.ndarray:
        r""":math:`M(c_0)^{-1}V` by the Woodbury identity with the factor ``L``."""
        T = np.vstack([self._cx(V), self.Cy @ V])
        Z = solve_triangular(L, T, lower=True, check_finite=False)
        Z = solve_triangular(L, Z, lower=True, trans="T", check_finite=False)
        W = self._cxt(Z[:self.n_x], V.shape[0]) + self.Cy.T @ Z[self.n_x:]
        return (V - W) / self._mu(c0)

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

    def _shift(self, c: float) -> np.ndarray:
        r"""The diagonal of :math:`\mu D_c^{-1}` (as a column)."""
        mu = self._mu(c)
        out = np.empty((self.G.shape[0], 1))
        out[:self.n_x] = mu / c
        out[self.n_x:] = mu / (1.0 - c)
        return out

    def _c_norm(self) -> float:
        r""":math:`\|C\|_F = \sqrt{\operatorname{tr} G}`, a bound on :math:`\|C^\top\|_2`."""
        if self._cfro is None:
            self._cfro = math.sqrt(max(float(np.trace(self.G)), 0.0))
        return self._cfro

    def solve(self, c: float, B: np.ndarray, near: float = 2.0, rtol: float = 1e-13,
              max_iter: int = 40) -> np.ndarray:
        r""":math:`M(c)^{-1}B` (``B`` a vector or the columns of a matrix).

        By the Woodbury identity, :math:`M(c)^{-1}B = \mu^{-1}(B - C^\top S)` with
        :math:`H(c)S = CB`, :math:`H(c) = \mu D_c^{-1} + G` (order :math:`n`). The system
        in :math:`H(c)` is solved by conjugate gradients preconditioned by the last
        factor :math:`H(c_0)` when its weight is within ``near`` (:meth:`spread`;
        :math:`H(c) - H(c_0)` is diagonal, so a step costs one product with :math:`G`
        and two triangular solves), else with a new factor at ``c``. The residual of
        :math:`M(c)` follows from that of :math:`H(c)`: :math:`M(c)X - B = \mu^{-1}
        C^\top D_c(CB - H(c)S)`, so the iteration stops when :math:`\|C\|_F\|D_c r\|/\mu`
        is at most ``rtol`` times :math:`\|B\|`; the result is accepted only when the
        residual of :math:`M(c)` itself, recomputed, is at most ``rtol`` (else conjugate
        gradients on :math:`M(c)` refine it)."""
        vec = B.ndim == 1
        B2 = B[:, None] if vec else B
        r = B2.shape[0]
        bnorm = np.linalg.norm(B2, axis=0)
        mu = self._mu(c)
        dmax = max(c, 1.0 - c)
        # the H(c) residual that bounds the M(c) residual by rtol * ||B||
        h_target = rtol * bnorm * mu / (dmax * max(self._c_norm(), np.finfo(float).tiny))
        shift = self._shift(c)
        with one_blas_thread():  # matrix-vector products: waking threads costs more
            T = self._c(B2)

            def attempt(c0: float, L: np.ndarray, steps: int) -> tuple[np.ndarray, bool]:
                # H(c) = L L^T + Delta (Delta = H(c) - H(c0), diagonal): conjugate
                # gradients on L^-1 H(c) L^-T y = L^-1 C B, s = L^-T y, so that a step is
                # two triangular solves; the residual of H(c) is L times that of y
                delta = shift - self._shift(c0)

                def a_matvec(Y: np.ndarray) -> np.ndarray:
                    Z = solve_triangular(L, Y, lower=True, trans="T", check_finite=False)
                    return Y + solve_triangular(L, delta * Z, lower=True, check_finite=False)

                Ty = solve_triangular(L, T, lower=True, check_finite=False)
                l_norm = math.sqrt(max(float(np.trace(self.G)) + float(np.sum(
                    self._shift(c0))), np.finfo(float).tiny))
                Y, ok = _pcg(a_matvec, lambda V: V, Ty, self._start(c, c0, Ty), rtol, steps,
                             target=h_target / l_norm)
                if ok and Y.shape[1] == 1:
                    self._recent = ([(c, Ty[:, 0], Y[:, 0])] + self._recent)[:4]
                S = solve_triangular(L, Y, lower=True, trans="T", check_finite=False)
                return (B2 - self._ct(S, r)) / mu, ok

            X, ok = None, False
            if self._factor is not None and self.spread(c, self._factor[0]) <= near:
                X, ok = attempt(*self._factor, max_iter)
            if not ok:
                X, ok = attempt(c, self.factor(c), 5)
            else:
                self.cg_solves += 1
            # accept on the recomputed residual of M(c) (the Woodbury form subtracts two
            # terms of the size of B); else refine on M(c) with the same factor
            c0, L = self._factor
            target = rtol * bnorm
            if np.any(np.linalg.norm(B2 - self.m_matvec(c, X), axis=0) > target):
                X, _ = _pcg(lambda V: self.m_matvec(c, V),
                            lambda V: self._apply_inverse(c0, L, V), B2, X, rtol, 5)
        return X[:, 0] if vec else X

    def solve_y(self, b: np.ndarray) -> np.ndarray:
        r""":math:`\Sigma_y^{-1}b` by the Woodbury identity on the negative class alone (one
        Cholesky factorisation of :math:`\rho_yI + C_yC_y^\top`, order :math:`n_y`), refined
        by conjugate gradients on :math:`\Sigma_y`."""
        n_x = self.n_x
        A = self.G[n_x:, n_x:].copy()
        A[np.diag_indices_from(A)] += self.rho_y
        with one_blas_thread():
            L = cholesky(A, lower=True, overwrite_a=True, check_finite=False)
        self.factorisations += 1

        def inverse(V: np.ndarray) -> np.ndarray:
            Z = solve_triangular(L, self.Cy @ V, lower=True, check_finite=False)
            Z = solve_triangular(L, Z, lower=True, trans="T", check_finite=False)
            return (V - self.Cy.T @ Z) / self.rho_y

        B2 = b[:, None]
        with one_blas_thread():
            X, _ = _pcg(self.sigma_y, inverse, B2, inverse(B2), 1e-13, 5)
        return X[:, 0]

    def weight_of(self, px: float, py: float) -> float:
        r"""The weight :math:`c` with :math:`p_x\Sigma_x + p_y\Sigma_y \propto M(c)`."""
        return px / (px + py)


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
