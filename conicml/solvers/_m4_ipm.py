r"""A structured primal-dual interior-point method for the soft M4's fixed-ρ slack SOCP.

CVXOPT's ``coneqp`` path-following method (Vandenberghe 2010) written for the inner
problem of the soft-margin M4 line searches (seed 004 eqs. 4.16–4.18 at fixed
:math:`\rho`), one dense Cholesky of order :math:`p + 3` per step. Its residuals only
steer it: the point is certified by the program's own certificate. The problem, the
algorithm and the stopping rule are in the Notes of :class:`SlackIPM`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, solve_triangular
from scipy.linalg.blas import dgemm
from scipy.linalg.lapack import dpotri, dtrtrs

from .._utils.linalg import cholesky_solve
from .._utils.threads import one_blas_thread

__all__ = ["SlackIPM", "SlackIPMResult"]

# fraction of the step to the boundary (CVXOPT's 0.99 ran ~15 % more steps on the kernel
# M4's slack SOCPs: the iterates kept too close to the cones' boundaries)
_STEP = 0.95
_REFINE_BELOW = 1e-3  # relative residual below which Newton systems are refined
_WARM_SAVE = 1e-1  # relative residual of the iterate saved as a warm start
_WARM_NEAR = 0.05  # relative distance in rho up to which a saved iterate is used
_WARM_ACCEPT = 1e-5  # a warm run ending above this residual is redone cold


@dataclass
class SlackIPMResult:
    """Outcome of :meth:`SlackIPM.solve`."""

    w: np.ndarray
    b: float
    objective: float
    duals: dict[str, np.ndarray]
    iterations: int
    converged: bool
    residual: float
    message: str


def _soc_dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Jordan product :math:`u \\circ v = (u^\\top v, u_0v_1 + v_0u_1)`."""
    out = np.empty_like(u)
    out[0] = u @ v
    out[1:] = u[0] * v[1:] + v[0] * u[1:]
    return out


def _soc_div(lam: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Solve :math:`\\lambda \\circ x = r` for :math:`x` (``lam`` interior)."""
    det = lam[0] ** 2 - lam[1:] @ lam[1:]
    x0 = (lam[0] * r[0] - lam[1:] @ r[1:]) / det
    out = np.empty_like(r)
    out[0] = x0
    out[1:] = (r[1:] - x0 * lam[1:]) / lam[0]
    return out


def _soc_step(u: np.ndarray, du: np.ndarray) -> float:
    """Largest :math:`\\alpha` with :math:`u + \\alpha\\,du` in the cone (``inf`` if any)."""
    a = du[0] ** 2 - du[1:] @ du[1:]
    b = u[0] * du[0] - u[1:] @ du[1:]
    c = max(u[0] ** 2 - u[1:] @ u[1:], 0.0)
    # (u0 + t du0)^2 - ||u1 + t du1||^2 = a t^2 + 2 b t + c >= 0 and u0 + t du0 >= 0
    t = math.inf
    if du[0] < 0:
        t = -u[0] / du[0]
    if a == 0:
        if b < 0:
            t = min(t, -c / (2 * b))
        return t
    disc = b * b - a * c
    if disc < 0:
        return t
    sq = math.sqrt(disc)
    roots = [(-b - sq) / a, (-b + sq) / a]
    pos = [r for r in roots if r > 0]
    if a < 0:  # the quadratic is positive between its roots: the larger root bounds t
        return min(t, max(roots)) if max(roots) > 0 else 0.0
    # a > 0: positive outside the roots; the cone is left at the first positive root when
    # the vertex lies ahead (b < 0)
    if b < 0 and pos:
        return min(t, min(pos))
    return t


def _lp_step(u: np.ndarray, du: np.ndarray) -> float:
    r"""Largest :math:`\alpha` with :math:`u + \alpha\,du \ge 0` (``u > 0``; ``inf`` if any):
    :math:`-1/\min_k(du_k/u_k)` when that minimum is negative."""
    t = float(np.min(du / u))
    return -1.0 / t if t < 0 else math.inf


class _SocScaling:
    """NT scaling of one second-order cone: :math:`W = \\eta(2vv^\\top - J)`."""

    def __init__(self, s: np.ndarray, z: np.ndarray) -> None:
        ns = math.sqrt(max(s[0] ** 2 - s[1:] @ s[1:], 1e-300))
        nz = math.sqrt(max(z[0] ** 2 - z[1:] @ z[1:], 1e-300))
        sb, zb = s / ns, z / nz
        gamma = math.sqrt(max(0.5 * (1.0 + sb @ zb), 1e-300))
        wb = sb.copy()
        wb[0] += zb[0]
        wb[1:] -= zb[1:]
        wb /= 2.0 * gamma  # the NT scaling point, wbar' J wbar = 1
        # W = eta (2 v v' - J) with v = (wbar + e) / sqrt(2 (wbar_0 + 1)) (CVXOPT's form)
        v = wb.copy()
        v[0] += 1.0
        v /= math.sqrt(2.0 * (wb[0] + 1.0))
        self.w = v
        self.eta = math.sqrt(ns / nz)
        self.v = v.copy()
        self.v[1:] *= -1.0  # J v
        self.vv = float(v @ v)  # |v|^2 = |Jv|^2

    def apply(self, u: np.ndarray) -> np.ndarray:
        """:math:`W u = \\eta(2v(v^\\top u) - Ju)`."""
        out = 2.0 * (self.w @ u) * self.w
        out[0] -= u[0]
        out[1:] += u[1:]
        return self.eta * out

    def apply_inv(self, u: np.ndarray) -> np.ndarray:
        """:math:`W^{-1}u = \\eta^{-1}(2Jv(v^\\top Ju) - Ju)`."""
        out = 2.0 * (self.v @ u) * self.v
        out[0] -= u[0]
        out[1:] += u[1:]
        return out / self.eta

    def apply2(self, u: np.ndarray) -> np.ndarray:
        """:math:`W^2u = \\eta^2(u + 4|v|^2(v^\\top u)v - 2(Jv^\\top u)v - 2(v^\\top u)Jv)`
        (:math:`(2vv^\\top - J)^2` expanded, :math:`J^2 = I`)."""
        w, a = self.w, self.v
        wu, au = float(w @ u), float(a @ u)
        return (self.eta ** 2) * (u + (4.0 * self.vv * wu - 2.0 * au) * w - 2.0 * wu * a)

    def apply_inv2(self, u: np.ndarray) -> np.ndarray:
        """:math:`W^{-2}u`, the same expansion with :math:`Jv` for :math:`v`."""
        w, a = self.w, self.v
        wu, au = float(w @ u), float(a @ u)
        return (u + (4.0 * self.vv * au - 2.0 * wu) * a - 2.0 * au * w) / (self.eta ** 2)


class _KernelCones:
    r"""The cone factors of a kernel program in the coordinates :math:`f = Lw`, by their
    structure.

    With :math:`Z = L` (the Cholesky factor of the Gram matrix, every point kept) a class's
    centred rows map to :math:`(Z_c - 1\bar z^\top)L^{-1} = J_c` (the rows of the identity
    of that class, centred) and the ridge :math:`\rho I` to :math:`\rho K^{-1}`, so
    :math:`\Sigma_c` in :math:`f` is :math:`J_c^\top J_c/n_c + \rho L^{-\top}L^{-1}`: the
    factor :math:`[J_c/\sqrt{n_c};\ \sqrt{\rho}\,L^{-1}]` has the same :math:`R^\top R`
    (all a second-order cone reads: the same problem and central path), and its products
    cost one triangular solve shared by both classes instead of two dense products with
    :math:`R L^{-1}`. :meth:`fit` accepts it only where it reproduces the given factors'
    norms to 1e-10 on random vectors (any other ridge, e.g. a relative one, keeps them).
    """

    def __init__(self, L: np.ndarray, pos: np.ndarray, reg: tuple[float, float]) -> None:
        self.L = np.asfortranarray(L)
        self.masks = (pos, ~pos)
        self.sizes = (int(pos.sum()), int((~pos).sum()))
        self.roots = (math.sqrt(reg[0]), math.sqrt(reg[1]))

    @classmethod
    def fit(cls, L: np.ndarray, pos: np.ndarray, Rp: np.ndarray,
            Rn: np.ndarray) -> _KernelCones | None:
        """The structured factors if they match the program's ``Rp``, ``Rn`` (in the
        coordinates w, so that :math:`R L^{-1}` is the factor in f), else None."""
        if not (np.any(pos) and np.any(~pos)):
            return None
        rng = np.random.default_rng(0)
        V = rng.standard_normal((L.shape[0], 3))
        with one_blas_thread():
            T = solve_triangular(L, V, lower=True, check_finite=False)  # L^-1 V
            regs = []
            for R, mask in ((Rp, pos), (Rn, ~pos)):
                full = np.sum((R @ T) ** 2, axis=0)  # |R L^-1 V|^2
                Vc = V[mask] - V[mask].mean(axis=0)
                cent = np.sum(Vc ** 2, axis=0) / int(mask.sum())
                ridge = np.sum(T ** 2, axis=0)
                reg = (full[0] - cent[0]) / ridge[0]
                fitted = cent + reg * ridge
                if not (reg >= 0 and np.all(np.abs(fitted - full) <= 1e-10 * full)):
                    return None
                regs.append(float(reg))
        return cls(L, pos, (regs[0], regs[1]))

    def kinv(self) -> np.ndarray:
        r""":math:`K^{-1}` (both triangles) from the factor :math:`L` (LAPACK ``potri``)."""
        Kinv, info = dpotri(self.L, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"singular Gram factor (LAPACK info {info})")
        Kinv = np.tril(Kinv)
        Kinv += np.tril(Kinv, -1).T
        return Kinv

    def factors(self) -> tuple[_KernelFactor, _KernelFactor]:
        """The two factors as operators (products and shapes for SlackIPM)."""
        return _KernelFactor(self, 0), _KernelFactor(self, 1)

    def _lower(self, v: np.ndarray, trans: int) -> np.ndarray:
        return dtrtrs(self.L, v, lower=1, trans=trans)[0]

    def apply(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`(R_+w, R_-w)` with one triangular solve."""
        t = self._lower(w, 0)
        out = []
        for k in (0, 1):
            wk = w[self.masks[k]]
            out.append(np.concatenate([(wk - wk.mean()) / math.sqrt(self.sizes[k]),
                                       self.roots[k] * t]))
        return out[0], out[1]

    def adjoint(self, up: np.ndarray, un: np.ndarray) -> np.ndarray:
        r""":math:`R_+^\top u_+ + R_-^\top u_-` with one triangular solve."""
        tail = np.zeros(self.L.shape[0])
        out = np.zeros(self.L.shape[0])
        for k, u in ((0, up), (1, un)):
            n_k = self.sizes[k]
            head = u[:n_k]
            out[self.masks[k]] += (head - head.mean()) / math.sqrt(n_k)
            tail += self.roots[k] * u[n_k:]
        return out + self._lower(tail, 1)


class _KernelFactor:
    """One class's factor of :class:`_KernelCones` (``R @ w``, ``R.T @ u``, ``shape``)."""

    def __init__(self, cones: _KernelCones, k: int) -> None:
        self.cones, self.k = cones, k
        n = cones.L.shape[0]
        self.shape = (cones.sizes[k] + n, n)

    def __matmul__(self, w: np.ndarray) -> np.ndarray:
        return self.cones.apply(w)[self.k]

    @property
    def T(self) -> _KernelFactorT:  # noqa: N802
        return _KernelFactorT(self)


class _KernelFactorT:
    def __init__(self, factor: _KernelFactor) -> None:
        self.factor = factor

    def __matmul__(self, u: np.ndarray) -> np.ndarray:
        c, k = self.factor.cones, self.factor.k
        zero = np.zeros(c.sizes[1 - k] + c.L.shape[0])
        return c.adjoint(u, zero) if k == 0 else c.adjoint(zero, u)


class SlackIPM:
    r"""The fixed-ρ slack SOCP of a soft M4 program, solved by a structured IPM.

    Parameters
    ----------
    m4 : M4Data
        The program's contract (``program.data["m4"]``), soft margin.

    Notes
    -----
    The inner problem of the soft-margin M4 line searches (seed 004, eqs. 4.16–4.18 at a
    fixed :math:`\rho`, :meth:`conicml.contracts.m4.M4Data.inner_problem`):

    .. math::

        h(\rho) = \min_{w, b, s_x, s_y, \xi}\ \sum_k\xi_k\ (+ (N-r)\,\xi_m)\quad\text{s.t.}\quad
        y_k(z_k^\top w + b) - \rho s_{y_k} + \xi_k \ge 0,\ \xi \ge 0,\
        \|R_x w\| \le s_x,\ \|R_y w\| \le s_y,\ d^\top w = 1

    (reduced, eq. 4.36: also :math:`1 - \rho(s_x + s_y) + \xi_m \ge 0`, :math:`\xi_m \ge 0`).

    **Algorithm.** The infeasible-start primal-dual path-following method with
    Nesterov–Todd scaling and Mehrotra's predictor-corrector of CVXOPT's ``coneqp``
    (L. Vandenberghe, *The CVXOPT linear and quadratic cone program solvers*, 2010, Secs. 1–3),
    written for this one problem so that its Newton systems are solved by dense LAPACK:
    the slacks :math:`\xi` enter diagonally and are eliminated, each margin row contributes
    :math:`D_k z_kz_k^\top` (``Z^T diag(D) Z``, one matrix product) and each cone's NT
    scaling :math:`W^{-2} = \eta^{-2}(I + 4\|\bar w\|^2Jv\,(Jv)^\top - \dots)` contributes
    :math:`\eta^{-2}\Sigma_\pm` plus rank-two terms, so one step costs one product
    :math:`Z^\top DZ` and one Cholesky factorisation of order :math:`p + 3`, instead of a
    sparse factorisation of the whole ~4n-order KKT system by a generic solver. The
    equality :math:`d^\top w = 1` is handled by a Schur complement.
    Kernel programs (every point kept, :math:`Z = L` the lower Cholesky factor of the Gram
    matrix) are solved in the coordinates :math:`f = Lw` (the function values at the
    training points): the margin rows become diagonal, :math:`R_\pm` becomes
    :math:`R_\pm L^{-1}` (computed once), and a step needs no product at all, only the
    Cholesky factorisation. The start is Mehrotra's heuristic per cone
    (:meth:`SlackIPM._mehrotra_start`).

    **Warm start along ρ.** The line searches solve the problem at a sequence of ρ that
    contracts onto ρ*. Each solve saves its first iterate with relative residual below
    ``_WARM_SAVE`` (an interior point near the central path, whose products
    :math:`s\circ z` are still balanced, unlike those of the final iterate, which sit
    on the boundary); a later solve at a ρ within the relative distance ``_WARM_NEAR``
    of a saved one starts from the nearest such iterate (the infeasible-start method
    absorbs the change of the margin rows, :math:`-\Delta\rho\, s_{y_k}`), and is
    redone from the cold start if it ends above ``_WARM_ACCEPT``. Newton systems are
    refined (below) only once the relative residual is under ``_REFINE_BELOW``.

    **Stopping:** relative primal and dual residuals and the relative gap
    :math:`s^\top z/\max(1, |\text{objective}|)` below ``tol`` (default ``1e-8``, as
    Clarabel's), or ``max_iter`` steps, or a residual 100 times above the best one (the
    normal equations losing accuracy near the optimum; each Newton system gets two steps of
    iterative refinement on the full KKT system) or, below ``1e-5``, no new best residual
    in two steps, or in one step once the relative gap is below ``tol`` (then only the
    gap would shrink further);
    the best iterate is returned, with
    ``converged`` false unless its residual is below ``tol``. The returned multipliers of the
    margin rows are :math:`\lambda_k \in [0, 1]` (the envelope slope of the outer search,
    :func:`conicml.solvers._m4_search.envelope_slope`). The point is certified afterwards
    by the program's recomputed certificate (:func:`conicml.certificates.margin.
    m4_fixed_rho_certificate`), never by these residuals.
    """

    def __init__(self, m4) -> None:
        if m4.hard:
            raise ValueError("SlackIPM solves the soft-margin slack SOCP only")
        kept = m4.kept
        Z = np.ascontiguousarray(m4.Z[kept])
        self.y = m4.y[kept].astype(float)
        self.pos = self.y > 0
        self.Rp, self.Rn = m4.R_pos, m4.R_neg
        self.d = m4.d
        # kernel programs keep every point and Z = L, the Cholesky factor of the Gram
        # matrix: in the coordinates f = L w (the function values at the training points)
        # the margin rows are diagonal, so a step needs no Z^T D Z product
        self.L = None
        self._cones: _KernelCones | None = None
        if Z.shape[0] == Z.shape[1] and not np.any(np.triu(Z, 1)) and \
                np.all(np.diag(Z) > 0):
            self.L = Z
            # the cones only read R^T R: a kernel program's factors R L^-1 are replaced
            # by ones whose products cost a triangular solve (_KernelCones), when they fit
            self._cones = _KernelCones.fit(Z, self.pos, self.Rp, self.Rn)
            with one_blas_thread():
                if self._cones is None:
                    # R L^{-1} (its transpose solves L^T X = R^T)
                    self.Rp = solve_triangular(Z, self.Rp.T, trans="T", lower=True,
                                               check_finite=False).T
                    self.Rn = solve_triangular(Z, self.Rn.T, trans="T", lower=True,
                                               check_finite=False).T
                self.d = solve_triangular(Z, self.d, trans="T", lower=True,
                                          check_finite=False)  # L^{-T} d
        self.Z = None if self.L is not None else Z
        # the cones' Gram matrices R^T R: a kernel program's are rho_c K^-1 plus its
        # class structure (_KernelCones), so only K^-1 is kept and _factor adds the rest
        self.Sp = self.Sn = self._Kinv = None
        with one_blas_thread():
            if self._cones is not None:
                self._Kinv = self._cones.kinv()
            else:
                self.Sp = self.Rp.T @ self.Rp
                self.Sn = self.Rn.T @ self.Rn
        self.reduced = m4.reduction is not None
        self.weight_m = float(m4.n_removed)
        self.p = Z.shape[1]
        self.m = Z.shape[0]
        if self._cones is not None:
            self.Rp, self.Rn = self._cones.factors()
        self.qp, self.qn = self.Rp.shape[0], self.Rn.shape[0]
        self._warm: dict[float, tuple] = {}  # rho -> saved central iterate (x, y, s, z)
        self._buffers: tuple[np.ndarray, np.ndarray] | None = None  # of _factor
        # the margin row of point k is y_k (a_k' (w, b, -rho s_+, rho s_-)) with
        # a_k = (z_k, 1, [k in +], [k in -]) (y_k [k in c] = +-[k in c]): one product with
        # the stacked A = [Z 1 1_+ 1_-] gives every margin row, its adjoint every sum of a
        # step (Z'v, 1'v and the two class sums) at once
        self._classes = np.column_stack([np.ones(self.m), self.pos, ~self.pos]).astype(float)
        self._A = None if self.Z is None else np.ascontiguousarray(
            np.column_stack([self.Z, self._classes]))

    def _A_of(self, w: np.ndarray, c: np.ndarray) -> np.ndarray:
        r""":math:`A(w, c) = Zw + [1\ 1_+\ 1_-]\,c` for :math:`c` of length 3."""
        if self._A is None:
            return w + self._classes @ c
        return self._A @ np.concatenate([w, c])

    def _AT(self, v: np.ndarray) -> np.ndarray:
        r""":math:`A^\top v = (Z^\top v, 1^\top v, 1_+^\top v, 1_-^\top v)`."""
        if self._A is None:
            out = np.empty(self.p + 3)
            out[:self.p] = v
            out[self.p:] = v @ self._classes
            return out
        return v @ self._A

    def _margins(self, w, b, sp, sn, rho) -> np.ndarray:
        r""":math:`y_k(z_k^\top w + b) - \rho s_{y_k}` for every kept point."""
        return self.y * self._A_of(w, np.array([b, -rho * sp, rho * sn]))

    # -- the operator G (inequalities G x + s = h, s in K) and its adjoint -------------------
    # x = (w, b, sp, sn, xi, xim); s = (margin m, xi >= 0 m, [global, xim >= 0], soc+, soc-)
    def _G(self, w, b, sp, sn, xi, xim, rho, margins=None):
        m = self.m
        lp = np.empty(2 * m + (2 if self.reduced else 0))
        if margins is None:
            margins = self._margins(w, b, sp, sn, rho)
        np.add(margins, xi, out=lp[:m])
        np.negative(lp[:m], out=lp[:m])
        np.negative(xi, out=lp[m:2 * m])
        if self.reduced:
            lp[2 * m] = rho * (sp + sn) - xim
            lp[2 * m + 1] = -xim
        if self._cones is not None:
            rp, rn = self._cones.apply(w)
        else:
            rp, rn = self.Rp @ w, self.Rn @ w
        socp = -np.concatenate([[sp], rp])
        socn = -np.concatenate([[sn], rn])
        return lp, socp, socn

    def _GT(self, zl, zp, zn, rho, extra=None):
        r""":math:`G^\top z`; with ``extra`` (length m), the adjoint of the margin rows at
        ``zl[:m] + extra`` instead (the eliminated slacks' share, :meth:`_solve_once`)."""
        m, p = self.m, self.p
        zm, zx = zl[:m], zl[m:2 * m]
        t = self._AT(self.y * (zm if extra is None else zm + extra))
        if self._cones is not None:
            gw = -t[:p] - self._cones.adjoint(zp[1:], zn[1:])
        else:
            gw = -t[:p] - self.Rp.T @ zp[1:] - self.Rn.T @ zn[1:]
        gb = -float(t[p])
        gsp = rho * float(t[p + 1]) - zp[0]  # y = 1 on the positive class
        gsn = -rho * float(t[p + 2]) - zn[0]  # y = -1 on the negative class
        gxi = -zm - zx
        gxim = 0.0
        if self.reduced:
            zg, zgx = zl[2 * m], zl[2 * m + 1]
            gsp += rho * zg
            gsn += rho * zg
            gxim = -zg - zgx
        return gw, gb, gsp, gsn, gxi, gxim

    def _h(self):
        h = np.zeros(2 * self.m + (2 if self.reduced else 0))
        if self.reduced:
            h[2 * self.m] = 1.0
        return h

    # -- one Newton system ------------------------------------------------------------------
    def _factor(self, dl, scp, scn, rho):
        """Factor the reduced normal matrix for LP weights ``dl`` (= z/s) and cone scalings."""
        m, p = self.m, self.p
        Dm, Dx = dl[:m], dl[m:2 * m]
        Dsum = Dm + Dx
        Deff = Dm * Dx / Dsum  # the slack xi eliminated
        n_u = p + 3
        # only the upper triangle is assembled: the Cholesky factorisation reads no other.
        # Into buffers kept from step to step (the last factor is not needed once the next
        # is formed): a fresh order-n matrix costs its page faults every step
        if self._buffers is None or self._buffers[0].shape != (n_u, n_u):
            self._buffers = (np.empty((n_u, n_u)),
                             None if self._Kinv is not None else np.empty((p, p)))
        H, tmp = self._buffers
        Hw = H[:p, :p]
        e2p, e2n = 1.0 / scp.eta ** 2, 1.0 / scn.eta ** 2
        # the cones' e2p S_+ + e2n S_- ...
        U = np.zeros((n_u, 4 if self._Kinv is None else 6))
        Cm = np.zeros((U.shape[1], U.shape[1]))
        diag = Deff if self._A is None else None
        if self._Kinv is not None:
            # ... with S_c = rho_c K^-1 + (diag(1_c) - 1_c 1_c^T / n_c) / n_c
            # (_KernelCones): one scaled copy of K^-1, a diagonal, and the two class
            # blocks as rank-one terms of the update U C U^T below
            (rp, rn), (n_p, n_n) = self._cones.roots, self._cones.sizes
            np.multiply(self._Kinv, e2p * rp * rp + e2n * rn * rn, out=Hw)
            diag = Deff + np.where(self.pos, e2p / n_p, e2n / n_n)
            U[:p, 4], U[:p, 5] = self.pos, ~self.pos
            Cm[4, 4], Cm[5, 5] = -e2p / (n_p * n_p), -e2n / (n_n * n_n)
        else:
            np.multiply(self.Sp, e2p, out=Hw)
            np.multiply(self.Sn, e2n, out=tmp)
            Hw += tmp
        # the margin rows: sum_k Deff_k g_k g_k' with g_k = y_k S a_k (the rows of A, and
        # S = diag(1, .., 1, 1, -rho, rho) on (w, b, s_+, s_-)), so S (A' Deff A) S
        scale = np.array([1.0, -rho, rho])
        if self._A is None:  # f-coordinates: Z = I, the margin rows are diagonal
            Hw[np.diag_indices(p)] += diag
            DC = self._classes * Deff[:, None]
            H[:p, p:] = DC * scale
            H[p:, p:] = (self._classes.T @ DC) * np.outer(scale, scale)
        else:
            As = self._A * np.sqrt(Deff)[:, None]
            K = As.T @ As
            sv = np.concatenate([np.ones(p), scale])
            K *= np.outer(sv, sv)
            Hw += K[:p, :p]
            H[:p, p:] = K[:p, p:]
            H[p:, p:] = K[p:, p:]
        H[p + 1, p + 1] += e2p
        H[p + 2, p + 2] += e2n
        self._Dg = 0.0
        if self.reduced:
            Dg, Dgx = dl[2 * m], dl[2 * m + 1]
            self._Dg = Dg * Dgx / (Dg + Dgx)
            H[p + 1, p + 1] += rho ** 2 * self._Dg
            H[p + 2, p + 2] += rho ** 2 * self._Dg
            H[p + 1, p + 2] += rho ** 2 * self._Dg
        # cones: M' W^-2 M with M x = (s_c, R w): eta^-2 (M'M + 4|v|^2 q_v q_v'
        # - 2 q_v q_w' - 2 q_w q_v'), the rank-two part as one product U C U'
        for k, (sc, R, j, e2) in enumerate(((scp, self.Rp, p + 1, e2p),
                                            (scn, self.Rn, p + 2, e2n))):
            v, wb = sc.v, sc.w
            U[:p, 2 * k], U[j, 2 * k] = R.T @ v[1:], v[0]
            U[:p, 2 * k + 1], U[j, 2 * k + 1] = R.T @ wb[1:], wb[0]
            Cm[2 * k:2 * k + 2, 2 * k:2 * k + 2] = e2 * np.array([[4.0 * (wb @ wb), -2.0],
                                                                  [-2.0, 0.0]])
        # H += U C U^T in place (on the Fortran-ordered view H^T; U C U^T is symmetric)
        Ht = dgemm(1.0, U @ Cm, U, beta=1.0, c=H.T, trans_b=1, overwrite_c=1)
        if not np.shares_memory(Ht, H):  # (a copy: never with a contiguous H)
            H[...] = Ht.T
        scale = max(1.0, float(np.max(np.abs(np.diag(H)))))
        H[np.diag_indices(n_u)] += 1e-13 * scale
        # the upper triangle of H is the lower one of H^T, a Fortran-ordered view: LAPACK
        # factors it in place (no copy of the order-n matrix)
        self._H = cho_factor(H.T, lower=True, overwrite_a=True, check_finite=False)
        self._Dm, self._Dsum = Dm, Dsum  # what _solve_once reads of the slacks' weights
        a = np.zeros(n_u)
        a[:p] = self.d
        self._Ha = cholesky_solve(self._H, a)
        self._aHa = float(a @ self._Ha)

    def _solve(self, bx, by, bz, dl, scp, scn, rho, refine: int = 2):
        """Solve [0 A' G'; A 0 0; G 0 -W'W] (dx, dy, dz) = (bx, by, bz).

        The normal equations lose accuracy as the scalings grow extreme near the optimum;
        ``refine`` steps of iterative refinement on the full system restore it.
        """
        dx, dy, dz = self._solve_once(bx, by, bz, dl, scp, scn, rho)
        nl = dl.size
        for _ in range(refine):
            gt = self._GT(dz[:nl], dz[nl:nl + 1 + self.qp], dz[nl + 1 + self.qp:], rho)
            r1 = [bi - gi for bi, gi in zip(bx, gt, strict=True)]
            r1[0] = r1[0] - dy * self.d
            r2 = by - float(self.d @ dx[0])
            Gl, Gp, Gn = self._G(*dx, rho)
            dzl, dzp, dzn = dz[:nl], dz[nl:nl + 1 + self.qp], dz[nl + 1 + self.qp:]
            r3 = bz - np.concatenate([Gl - dzl / dl, Gp - scp.apply2(dzp),
                                      Gn - scn.apply2(dzn)])
            ex, ey, ez = self._solve_once(tuple(r1), r2, r3, dl, scp, scn, rho)
            dx = tuple(xi + ei for xi, ei in zip(dx, ex, strict=True))
            dy, dz = dy + ey, dz + ez
        return dx, dy, dz

    def _solve_once(self, bx, by, bz, dl, scp, scn, rho):
        m, p = self.m, self.p
        nl = dl.size
        bl, bp, bn = bz[:nl], bz[nl:nl + 1 + self.qp], bz[nl + 1 + self.qp:]
        bw, bb, bsp, bsn, bxi, bxim = bx
        # r = bx + G' W^-2 bz, with xi eliminated: H_xixi = Dm + Dx (diagonal), coupled to
        # the margin rows by Dm, so t = r_xi / (Dm + Dx) enters r_u through the margin rows'
        # adjoint at Dm t, taken in the same product as G' (_GT's extra)
        zl = dl * bl
        zp = scp.apply_inv2(bp)
        zn = scn.apply_inv2(bn)
        Dm = self._Dm
        rxi = bxi - zl[:m] - zl[m:2 * m]
        t = rxi / self._Dsum
        gw, gb, gsp, gsn, _, gxim = self._GT(zl, zp, zn, rho, extra=Dm * t)
        ru = np.empty(p + 3)
        ru[:p] = bw + gw
        ru[p] = bb + gb
        ru[p + 1] = bsp + gsp
        ru[p + 2] = bsn + gsn
        rxim = bxim + gxim
        if self.reduced:
            Dg, Dgx = dl[2 * m], dl[2 * m + 1]
            tg = rxim / (Dg + Dgx)
            ru[p + 1] += rho * Dg * tg
            ru[p + 2] += rho * Dg * tg
        # H du + a dy = ru, a' du = by
        Hr = cholesky_solve(self._H, ru)
        dy = (float(self.d @ Hr[:p]) - by) / self._aHa
        du = Hr - self._Ha * dy
        dw, db, dsp, dsn = du[:p], du[p], du[p + 1], du[p + 2]
        # back out xi: (Dm + Dx) dxi = rxi + Dm g_k'du, g_k'du = -(y(z'dw + db) - rho sig)
        mrow = self._margins(dw, db, dsp, dsn, rho)
        dxi = (rxi - Dm * mrow) / self._Dsum
        dxim = 0.0
        if self.reduced:
            Dg, Dgx = dl[2 * m], dl[2 * m + 1]
            dxim = (rxim + Dg * rho * (dsp + dsn)) / (Dg + Dgx)
        dx = (dw, db, dsp, dsn, dxi, dxim)
        Gl, Gp, Gn = self._G(*dx, rho, margins=mrow)
        dzl = dl * (Gl - bl)
        dzp = scp.apply_inv2(Gp - bp)
        dzn = scn.apply_inv2(Gn - bn)
        return dx, dy, np.concatenate([dzl, dzp, dzn])

    # -- the iteration -----------------------------------------------------------------------
    def solve(self, rho: float, *, tol: float = 1e-8, max_iter: int = 100,
              warm_start: bool = True) -> SlackIPMResult:
        """Solve the slack SOCP at ``rho`` (Notes of :class:`SlackIPM`).

        With ``warm_start`` the iteration starts from the saved central iterate of the
        nearest ρ solved before (Notes); a warm run that does not reach
        ``_WARM_ACCEPT`` is redone from the cold start. On one BLAS thread
        (:mod:`conicml._utils.threads`): waking a thread pool for a Cholesky
        factorisation of order ~150 costs more than the factorisation.
        """
        rho = float(rho)
        with one_blas_thread(), np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            near = min(self._warm, key=lambda r: abs(r - rho), default=None)
            if warm_start and near is not None and \
                    abs(near - rho) <= _WARM_NEAR * max(abs(rho), abs(near)):
                warm = self._run(rho, tol, max_iter, self._warm[near])
                if warm.converged or warm.residual <= _WARM_ACCEPT:
                    return warm
                res = self._run(rho, tol, max_iter)
                res.iterations += warm.iterations  # every step taken counts
                return res
            return self._run(rho, tol, max_iter)

    def _run(self, rho: float, tol: float, max_iter: int,
             start: tuple | None = None) -> SlackIPMResult:
        rho = float(rho)
        m, p = self.m, self.p
        nl = 2 * m + (2 if self.reduced else 0)
        cones = [(nl, 1 + self.qp), (nl + 1 + self.qp, 1 + self.qn)]
        h = np.concatenate([self._h(), np.zeros(2 + self.qp + self.qn)])
        nu = nl + 2  # degree of the cone
        cx = (np.zeros(p), 0.0, 0.0, 0.0, np.ones(m), self.weight_m)

        def split(v):
            return v[:nl], v[cones[0][0]:cones[0][0] + cones[0][1]], v[cones[1][0]:]

        def G_of(x):
            return np.concatenate(self._G(*x, rho))

        def GT_of(z):
            zl, zp, zn = split(z)
            return self._GT(zl, zp, zn, rho)

        def add(x, dx, a):
            return tuple(xi + a * di for xi, di in zip(x, dx, strict=True))

        def xnorm(x):
            return math.sqrt(sum(float(np.sum(np.square(v))) for v in x))

        if start is not None:  # a saved central iterate of a nearby rho
            x, y, s, z = start
            s, z = s.copy(), z.copy()
        else:
            x, y, s, z = self._cold_start(rho, h, cx, nl, cones, G_of)
        saved = False
        cnorm = max(1.0, xnorm(cx))
        hnorm = max(1.0, float(np.linalg.norm(h)))
        converged, it, res = False, 0, math.inf
        best: tuple | None = None
        best_it = 0
        message = "maximum number of interior-point steps reached (max_iter)"
        for it in range(1, max_iter + 1):  # noqa: B007
            gw = GT_of(z)
            rx = tuple(gi + ci for gi, ci in zip(gw, cx, strict=True))
            rx = (rx[0] + y * self.d, *rx[1:])
            ry = float(self.d @ x[0]) - 1.0
            rz = s + G_of(x) - h
            gap = float(s @ z)
            pobj = float(np.sum(x[4])) + self.weight_m * float(x[5])
            res = max(xnorm(rx) / cnorm, abs(ry), float(np.linalg.norm(rz)) / hnorm,
                      gap / max(1.0, abs(pobj)))
            if not math.isfinite(res):
                message = "the iteration broke down (non-finite residuals)"
                break
            if not saved and res <= _WARM_SAVE:
                # a central iterate of this rho: the start of later solves at nearby rho
                # (its products s o z still balanced, unlike those of the final iterate)
                self._warm[rho] = (x, y, s.copy(), z.copy())
                saved = True
            if best is None or res < best[0]:
                best = (res, x, y, s.copy(), z.copy())
                best_it = it
            if res <= tol:
                converged = True
                message = "converged: relative residuals and gap <= tol"
                break
            # the normal equations lost accuracy (extreme scalings near the optimum): stop
            # and return the best iterate; once the gap is below tol a step that did not
            # lower the residuals only shrinks the gap further, so the end game stops there
            if res > 100.0 * best[0] or (best[0] <= 1e-5 and (
                    it - best_it >= 2
                    or (it > best_it and gap / max(1.0, abs(pobj)) <= tol))):
                message = (f"stalled at relative residual {best[0]:.1e} (> tol) as the "
                           "Newton systems lost accuracy")
                break
            mu = gap / nu
            # scalings
            sl, zl_ = s[:nl], z[:nl]
            dl = zl_ / sl
            lam_l = np.sqrt(sl * zl_)
            scp = _SocScaling(*[v[cones[0][0]:cones[0][0] + cones[0][1]] for v in (s, z)])
            scn = _SocScaling(*[v[cones[1][0]:] for v in (s, z)])
            lam_p = scp.apply(z[cones[0][0]:cones[0][0] + cones[0][1]])
            lam_n = scn.apply(z[cones[1][0]:])
            try:
                self._factor(dl, scp, scn, rho)
            except (np.linalg.LinAlgError, ValueError, ZeroDivisionError):
                message = "the Newton system is singular"
                break
            if not self._aHa > 0:
                message = "the Newton system is singular"
                break

            # far from the optimum the scalings are moderate and the normal equations
            # accurate enough: iterative refinement only near it
            refine = 2 if res <= _REFINE_BELOW else 0

            def direction(rs_l, rs_p, rs_n, scp=scp, scn=scn, lam_l=lam_l, lam_p=lam_p,
                          lam_n=lam_n, dl=dl, rx=rx, ry=ry, rz=rz, refine=refine):
                # lambda o (W dz + W^-T ds) = rs  ->  bz = -rz - W' (lambda \ rs)
                ql = rs_l / lam_l
                qp = _soc_div(lam_p, rs_p)
                qn = _soc_div(lam_n, rs_n)
                wl = np.sqrt(sl / zl_)
                bz = -rz - np.concatenate([wl * ql, scp.apply(qp), scn.apply(qn)])
                dx, dy, dz = self._solve(tuple(-r for r in rx), -ry, bz, dl, scp, scn, rho,
                                         refine=refine)
                # ds = W' (lambda \ rs - W dz)
                dzl, dzp, dzn = split(dz)
                ds = np.concatenate([wl * (ql - wl * dzl), scp.apply(qp - scp.apply(dzp)),
                                     scn.apply(qn - scn.apply(dzn))])
                return dx, dy, dz, ds

            def max_step(ds, dz):
                a = math.inf
                for u, du in ((s, ds), (z, dz)):
                    a = min(a, _lp_step(u[:nl], du[:nl]))
                    for start, size in cones:
                        a = min(a, _soc_step(u[start:start + size], du[start:start + size]))
                return a

            # predictor
            rs_l, rs_p, rs_n = -lam_l * lam_l, -_soc_dot(lam_p, lam_p), -_soc_dot(lam_n, lam_n)
            dxa, dya, dza, dsa = direction(rs_l, rs_p, rs_n)
            alpha = min(1.0, max_step(dsa, dza))
            sigma = (1.0 - alpha) ** 3
            # corrector: rs = -lam o lam - (W^-T dsa) o (W dza) + sigma mu e
            wl = np.sqrt(sl / zl_)
            dsl_, dsp_, dsn_ = split(dsa)
            dzl_, dzp_, dzn_ = split(dza)
            ea = np.zeros(1 + self.qp)
            ea[0] = 1.0
            en = np.zeros(1 + self.qn)
            en[0] = 1.0
            rs_l = rs_l - (dsl_ / wl) * (dzl_ * wl) + sigma * mu
            rs_p = rs_p - _soc_dot(scp.apply_inv(dsp_), scp.apply(dzp_)) + sigma * mu * ea
            rs_n = rs_n - _soc_dot(scn.apply_inv(dsn_), scn.apply(dzn_)) + sigma * mu * en
            dx, dy, dz, ds = direction(rs_l, rs_p, rs_n)
            alpha = min(1.0, _STEP * max_step(ds, dz))
            x = add(x, dx, alpha)
            y = y + alpha * dy
            s = s + alpha * ds
            z = z + alpha * dz
        if best is not None and not converged:
            res, x, y, s, z = best
        return self._result(x, z, nl, it, converged, res, message)

    def _cold_start(self, rho: float, h: np.ndarray, cx: tuple, nl: int, cones,
                    G_of) -> tuple:
        """The starting point of a cold solve (coneqp's: the KKT system with W = I),
        shifted and balanced by :meth:`_mehrotra_start`."""
        ident = _SocScaling(np.r_[1.0, np.zeros(self.qp)], np.r_[1.0, np.zeros(self.qp)])
        identn = _SocScaling(np.r_[1.0, np.zeros(self.qn)], np.r_[1.0, np.zeros(self.qn)])
        ones = np.ones(nl)
        self._factor(ones, ident, identn, rho)
        zero_x = (np.zeros(self.p), 0.0, 0.0, 0.0, np.zeros(self.m), 0.0)
        # primal: min ||G x - h|| s.t. d'w = 1; dual: min ||z|| s.t. G'z + A'y + c = 0
        x, _, _ = self._solve(zero_x, 1.0, h, ones, ident, identn, rho)
        s = h - G_of(x)
        _, y, z = self._solve(tuple(-c for c in cx), 0.0, np.zeros(h.size), ones, ident,
                              identn, rho)
        s, z = self._mehrotra_start(s, z, nl, cones)
        return x, y, s, z

    def _result(self, x: tuple, z: np.ndarray, nl: int, iterations: int, converged: bool,
                residual: float, message: str) -> SlackIPMResult:
        """Decode an iterate: w in the original coordinates, b, the margin multipliers."""
        m = self.m
        w, b = x[0], float(x[1])
        if self.L is not None:  # f = L w
            w = solve_triangular(self.L, w, lower=True, check_finite=False)
        zl = z[:nl]
        duals: dict[str, np.ndarray] = {"margin_pos": zl[:m][self.pos],
                                         "margin_neg": zl[:m][~self.pos]}
        if self.reduced:
            duals["global"] = np.array(zl[2 * m])
        objective = float(np.sum(x[4])) + self.weight_m * float(x[5])
        return SlackIPMResult(w=w, b=b, objective=objective, duals=duals,
                              iterations=iterations, converged=converged, residual=residual,
                              message=message)

    @staticmethod
    def _mehrotra_start(s: np.ndarray, z: np.ndarray, nl: int, cones
                        ) -> tuple[np.ndarray, np.ndarray]:
        """Mehrotra's starting-point heuristic, per cone: shift into the interior, balance.

        (Mehrotra 1992, *SIAM J. Optim.* 2(4), Sec. 7; with the cone's identity
        :math:`e` and its smallest "eigenvalue" :math:`u_0 - \\|u_1\\|` for the SOCs.) The
        coneqp start (a shift by :math:`1 + t`) left the first steps short (step lengths
        0.03-0.3 over ~15 steps at n = 500); this one centres the products
        :math:`s \\circ z`.
        """
        e = np.zeros(s.size)
        e[:nl] = 1.0
        for start, _ in cones:
            e[start] = 1.0

        def lowest(u):
            vals = [float(np.min(u[:nl]))] if nl else []
            vals += [float(u[st] - np.linalg.norm(u[st + 1:st + sz])) for st, sz in cones]
            return min(vals)
        s = s + max(-1.5 * lowest(s), 0.0) * e
        z = z + max(-1.5 * lowest(z), 0.0) * e
        sz = float(s @ z)
        if sz <= 0:  # degenerate start (e.g. s = z = 0): the identity
            s, z = s + e, z + e
            sz = float(s @ z)
        s_new = s + 0.5 * sz / float(e @ z) * e
        z_new = z + 0.5 * sz / float(e @ s) * e
        for u in (s_new, z_new):
            low = lowest(u)
            if not low > 0:
                u += (1e-8 - low) * e
        return s_new, z_new
