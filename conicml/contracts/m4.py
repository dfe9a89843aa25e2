r"""The contract of the M4 kinds (``quasiconvex.m4``, ``sequential.m4``): :class:`M4Data`.

Built by :func:`conicml.formulations.m4.m4` into ``program.data["m4"]`` and
read by the M4 solvers (``bisection``, ``dinkelbach-gfp``, the line searches).
It holds the (kernel-factored) samples and the class covariance factors, and
computes what the solvers need: the fixed-ρ SOCPs of Theorem 13 (seed 004,
corrected check, eqs. 4.2–4.3 with the scales :math:`t_x, t_y`), the MPM bound
:math:`\kappa^*_{MPM}` (4.8) on :math:`\rho^*`, the certified margin ratio of a
point and the soft-margin penalty (4.10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from .._utils.threads import one_blas_thread
from ..program import ConicForm

__all__ = ["INNER_BACKENDS", "M4Data"]


#: The backends of the fixed-rho SOCPs (the ``inner`` option of the M4 searches and of
#: :class:`~conicml.estimators.M4Classifier`). ``"m4-ipm"``: the structured interior-point
#: method of the soft slack SOCP (a solve that breaks down is redone by clarabel, counted in
#: ``fallbacks``); ``"auto"``: it for the soft margin, ``"clarabel"`` for the separable check.
INNER_BACKENDS = ("auto", "clarabel", "ecos", "scs", "m4-ipm")


def _ratio(num: np.ndarray, den: float) -> np.ndarray:
    num = np.asarray(num, dtype=float)
    if den > 0:
        return num / den
    return np.where(num > 0, np.inf, np.where(num < 0, -np.inf, 0.0))


@dataclass(frozen=True, eq=False)
class M4Data:
    r"""Samples and moments of an M4 program, in the space the program works in.

    Attributes
    ----------
    Z : ndarray of shape (n, p)
        Samples (the inputs, or the rows of a factor of the kernel matrix).
    y : ndarray of shape (n,)
        Labels :math:`\pm 1`.
    kept : ndarray of bool, shape (n,)
        Samples kept by the reduction (4.36) (all of them without one).
    R_pos, R_neg : ndarray
        Factors with :math:`\Sigma_\pm = R_\pm^\top R_\pm`, so
        :math:`\sigma_\pm(w) = \|R_\pm w\|`.
    d : ndarray of shape (p,)
        Difference of the class means; every point is normalised to
        :math:`w^\top d = 1`.
    C : float or None
        Soft-margin weight; ``None`` for the separable (hard) M4.
    reduction : float or None
        Threshold :math:`\nu` of the reduced M4 (4.36), ``None`` without one.
    n_removed : int
        Samples removed by the reduction (the weight of the global slack).
    """

    Z: np.ndarray
    y: np.ndarray
    kept: np.ndarray
    R_pos: np.ndarray
    R_neg: np.ndarray
    d: np.ndarray
    C: float | None
    reduction: float | None
    n_removed: int

    @property
    def hard(self) -> bool:
        """Whether this is the separable M4 (no slacks)."""
        return self.C is None

    def strictly_separable(self) -> bool:
        r"""Whether the slack SOCP is certified to have :math:`h(\rho) = 0` next to
        :math:`\rho = 0`, in closed form (then :math:`G(0) = 0` and :math:`G'(0^+) = 1`).

        Checked for the kernel programs whose rows are a nonsingular square lower
        triangular :math:`Z = L` (every point kept): the function values :math:`f = Lw`
        are then free and :math:`d^\top w = a^\top f` with :math:`a = L^{-\top}d`. If some
        :math:`a_ky_k > 0`, a point :math:`f = y\circ v` (:math:`v > 0`, large where
        :math:`a_ky_k > 0`) has :math:`a^\top f = 1` and every margin row positive, so for
        :math:`\rho` small enough every row, and the global row of a reduction, holds with
        zero slack. ``False`` means "not shown", not "not separable"."""
        Z, y = self.Z, self.y
        if self.hard or not np.all(self.kept) or Z.ndim != 2 or Z.shape[0] != Z.shape[1]:
            return False
        piv = np.diag(Z)
        if not (np.all(piv > 0) and not np.any(np.triu(Z, 1))):
            return False
        if not np.all(piv > 1e-12 * float(np.max(piv))):
            return False
        from scipy.linalg import solve_triangular

        a = solve_triangular(Z, self.d, trans="T", lower=True, check_finite=False)
        return bool(np.all(np.isfinite(a)) and np.max(a * y) > 0)

    # -- the inner SOCPs ----------------------------------------------------------------
    def inner_problem(self, rho: float | None = None) -> ConicForm:
        r"""The fixed-ρ SOCP: the feasibility check (hard) or the slack problem (soft).

        ``rho=None``: ``rho`` (and, for the separable check, ``scale_pos`` /
        ``scale_neg``) are ``cp.Parameter`` s, so the problem is DPP and compiled
        once. A float ``rho`` builds a parameter-free problem with constant
        scales 1.
        """
        Z, y, kept = self.Z, self.y, self.kept
        p = Z.shape[1]
        w = cp.Variable(p, name="w")
        b = cp.Variable(name="b")
        s_pos = cp.Variable(name="s_pos", nonneg=True)
        s_neg = cp.Variable(name="s_neg", nonneg=True)
        parameters: dict[str, cp.Parameter] = {}
        if rho is None:
            r = cp.Parameter(nonneg=True, name="rho", value=0.0)
            parameters["rho"] = r
        else:
            r = float(rho)
        Zp = Z[kept & (y > 0)]
        Zn = Z[kept & (y < 0)]
        reduced = self.reduction is not None
        constraints: dict[str, cp.Constraint] = {
            "cone_pos": cp.norm(self.R_pos @ w, 2) <= s_pos,
            "cone_neg": cp.norm(self.R_neg @ w, 2) <= s_neg,
            "normalisation": self.d @ w == 1,
        }
        variables: dict[str, cp.Variable] = {"w": w, "b": b, "s_pos": s_pos, "s_neg": s_neg}
        if self.hard:
            eta = cp.Variable(name="eta")
            variables["eta"] = eta
            if rho is None:
                t_pos = cp.Parameter(pos=True, name="scale_pos", value=1.0)
                t_neg = cp.Parameter(pos=True, name="scale_neg", value=1.0)
                parameters.update(scale_pos=t_pos, scale_neg=t_neg)
            else:
                t_pos = t_neg = 1.0
            if Zp.shape[0]:
                constraints["margin_pos"] = Zp @ w + b - r * s_pos >= t_pos * eta
            if Zn.shape[0]:
                constraints["margin_neg"] = -(Zn @ w + b) - r * s_neg >= t_neg * eta
            if reduced:
                constraints["global"] = 1 - r * (s_pos + s_neg) >= (t_pos + t_neg) * eta
            objective = cp.Maximize(eta)
        else:
            total = 0
            if Zp.shape[0]:
                xi_pos = cp.Variable(Zp.shape[0], name="xi_pos", nonneg=True)
                constraints["margin_pos"] = Zp @ w + b - r * s_pos + xi_pos >= 0
                variables["xi_pos"] = xi_pos
                total = total + cp.sum(xi_pos)
            if Zn.shape[0]:
                xi_neg = cp.Variable(Zn.shape[0], name="xi_neg", nonneg=True)
                constraints["margin_neg"] = -(Zn @ w + b) - r * s_neg + xi_neg >= 0
                variables["xi_neg"] = xi_neg
                total = total + cp.sum(xi_neg)
            if reduced:
                xi_m = cp.Variable(name="xi_global", nonneg=True)
                constraints["global"] = 1 - r * (s_pos + s_neg) + xi_m >= 0
                variables["xi_global"] = xi_m
                total = total + self.n_removed * xi_m
            objective = cp.Minimize(total)
        problem = cp.Problem(objective, list(constraints.values()))
        return ConicForm(problem, variables, constraints, parameters)

    def mpm_bound_problem(self) -> ConicForm:
        r"""Lanckriet's MPM SOCP :math:`1/\kappa^* = \min_{w^\top d = 1} \sigma_x + \sigma_y`.

        Its value bounds the M4 margin: :math:`\rho^* \le \kappa^*_{MPM}`
        (averaging (4.2)–(4.3) gives (4.8)), the upper end of the bisection
        bracket and of the soft-margin line search.
        """
        w = cp.Variable(self.Z.shape[1], name="w")
        s_pos = cp.Variable(name="s_pos", nonneg=True)
        s_neg = cp.Variable(name="s_neg", nonneg=True)
        constraints = {
            "cone_pos": cp.norm(self.R_pos @ w, 2) <= s_pos,
            "cone_neg": cp.norm(self.R_neg @ w, 2) <= s_neg,
            "normalisation": self.d @ w == 1,
        }
        problem = cp.Problem(cp.Minimize(s_pos + s_neg), list(constraints.values()))
        return ConicForm(problem, {"w": w, "s_pos": s_pos, "s_neg": s_neg}, constraints)

    # -- margins and the certified objective ----------------------------------------------
    def sigmas(self, w: np.ndarray) -> tuple[float, float]:
        r""":math:`(\sigma_x(w), \sigma_y(w)) = (\|R_+ w\|, \|R_- w\|)` (one BLAS thread:
        matrix-vector products, for which waking a thread pool costs more)."""
        with one_blas_thread():
            return (float(np.linalg.norm(self.R_pos @ w)),
                    float(np.linalg.norm(self.R_neg @ w)))

    def margins(self, w: np.ndarray, b: float) -> np.ndarray:
        r"""Signed Mahalanobis margins :math:`y_i(w^\top z_i + b)/\sigma_{y_i}(w)`.

        Invariant to a positive rescaling of :math:`(w, b)`.
        """
        Z, y = self.Z, self.y
        s_pos, s_neg = self.sigmas(w)
        f = Z @ w + b
        out = np.empty(y.size)
        out[y > 0] = _ratio(f[y > 0], s_pos)
        out[y < 0] = _ratio(-f[y < 0], s_neg)
        return out

    def certified_rho(self, w: np.ndarray, b: float) -> float:
        r"""The separable M4 objective at :math:`(w, b)`: the smallest ratio.

        The minimum over the kept points' margins and, with a reduction, the
        global ratio :math:`w^\top d/(\sigma_x + \sigma_y)` (eq. 4.36). Any
        :math:`(w, b)` gives a lower bound on :math:`\rho^*`.
        """
        w = np.asarray(w, dtype=float)
        vals = [float(np.min(self.margins(w, b)[self.kept]))] if np.any(self.kept) else []
        if self.reduction is not None:
            s_pos, s_neg = self.sigmas(w)
            vals.append(float(_ratio(np.array(float(self.d @ w)), s_pos + s_neg)))
        return min(vals) if vals else math.inf

    def slack_total(self, w: np.ndarray, b: float, rho: float) -> float:
        r"""The soft-margin penalty :math:`\sum_k\xi_k + (N-r)\xi_m` at :math:`(w, b)`, ``rho``.

        Evaluated with the optimal slacks for that point,
        :math:`\xi_i = \max(0, \rho\sigma_{y_i} - y_i f(z_i))` and
        :math:`\xi_m = \max(0, \rho(\sigma_x+\sigma_y) - w^\top d)`.
        """
        s_pos, s_neg = self.sigmas(w)
        with one_blas_thread():
            f = self.y * (self.Z @ w + b)
        sig = np.where(self.y > 0, s_pos, s_neg)
        total = float(np.sum(np.maximum(0.0, rho * sig - f)[self.kept]))
        if self.reduction is not None:
            total += self.n_removed * max(0.0, rho * (s_pos + s_neg) - float(self.d @ w))
        return total
