r"""The fractional program of the MPM kinds, shared by ``dinkelbach`` and ``rosen``.

Kinds ``"socp.mpm"`` and ``"socp.bmpm"`` maximise the ratio (seed 004 Sec. 3.2; errata S004-A1..A3)

.. math::

    \kappa^* = \max_{w^\top d = 1}\ r(w) = \frac{N(w)}{D(w)} =
    \frac{1 - a_x\sigma_x(w) - a_y\sigma_y(w)}{b_x\sigma_x(w) + b_y\sigma_y(w)},

read from the program's data ``d``, ``Rx``, ``Ry`` (:math:`\Sigma = R^\top R`),
``a`` and ``b``. :class:`FractionalProgram` evaluates it, diagonalises the two
covariances simultaneously, and certifies a point by Dinkelbach's
:math:`P(\lambda)` (the optimality condition :math:`F(\lambda) = 1 - P(\lambda) = 0`);
:func:`finish` builds a solver's :class:`~conicml.Solution` with that certificate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..solution import Residuals, Solution, Status

__all__ = ["FractionalProgram", "finish"]

_TINY = 1e-300
#: Largest |P(lambda) - 1| and relative gap bound with which a returned OPTIMAL stands.
CERTIFY_TOL = 1e-6
#: kappa* = inf is no unboundedness of the program: its objective 1/kappa* = 0 is attained
#: (the generic backends say OPTIMAL with objective ~0), so it is reported as OPTIMAL with
#: this message, not as UNBOUNDED
INFINITE_KAPPA_MESSAGE = (
    "kappa* = inf: a hyperplane with zero variance of the positive class (and w^T d = 1) "
    "exists, so the objective 1/kappa* = 0 is attained (alpha = 1); add a ridge "
    "(ridge > 0) for a finite kappa")
NEAR_INFINITE_KAPPA_MESSAGE = (
    "kappa* numerically infinite: D(w) reached ~1e-10 of ||w|| along the iteration "
    "(objective 1/kappa* ~ 0, not certified); add a ridge (ridge > 0)")
#: The reason code every fractional solver uses for an attained kappa* = inf.
INFINITE_REASON = 5


class FractionalProgram:
    r"""The ratio :math:`r(w) = N(w)/D(w)` of a ``socp.mpm`` / ``socp.bmpm`` program.

    Holds :math:`\Sigma_x = R_x^\top R_x`, :math:`\Sigma_y`, :math:`d` and the
    coefficients :math:`a, b`; the simultaneous diagonalisation is computed
    on first use of :meth:`min_weighted`.
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.d = np.asarray(data["d"], dtype=float)
        self.Rx = np.asarray(data["Rx"], dtype=float)
        self.Ry = np.asarray(data["Ry"], dtype=float)
        self.Sx = self.Rx.T @ self.Rx
        self.Sy = self.Ry.T @ self.Ry
        self.a = tuple(float(v) for v in data["a"])
        self.b = tuple(float(v) for v in data["b"])
        self._basis: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.unbounded = False

    # -- values in the original coordinates -------------------------------------------
    def sigmas(self, w: np.ndarray) -> tuple[float, float]:
        r""":math:`(\sigma_x(w), \sigma_y(w))`."""
        return (math.sqrt(max(float(w @ self.Sx @ w), 0.0)),
                math.sqrt(max(float(w @ self.Sy @ w), 0.0)))

    def parts(self, w: np.ndarray) -> tuple[float, float]:
        r""":math:`(N(w), D(w))` at :math:`w` normalised to :math:`w^\top d = 1`."""
        w = w / float(self.d @ w)
        sx, sy = self.sigmas(w)
        return (1.0 - self.a[0] * sx - self.a[1] * sy, self.b[0] * sx + self.b[1] * sy)

    def ratio(self, w: np.ndarray) -> float:
        """:math:`r(w)`."""
        num, den = self.parts(w)
        return math.inf if den <= 0 else num / den

    # -- the simultaneous diagonalisation ------------------------------------------------
    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""``(V, lam, dt)``: :math:`V^\top(\Sigma_x+\Sigma_y)V = I`, :math:`V^\top\Sigma_xV =
        \operatorname{diag}(\lambda)`, :math:`\tilde d = V^\top d`."""
        if self._basis is None:
            S = self.Sx + self.Sy
            s, U = np.linalg.eigh(0.5 * (S + S.T))
            keep = s > 1e-13 * max(float(s[-1]), _TINY)
            T = U[:, keep] / np.sqrt(s[keep])
            resid = self.d - U[:, keep] @ (U[:, keep].T @ self.d)
            self.unbounded = bool(np.linalg.norm(resid) > 1e-9 * np.linalg.norm(self.d))
            M = T.T @ self.Sx @ T
            lam, Q = np.linalg.eigh(0.5 * (M + M.T))
            V = T @ Q
            self._basis = (V, np.clip(lam, 0.0, 1.0), V.T @ self.d)
        return self._basis

    def infinite_ratio(self) -> bool:
        r"""Whether :math:`\kappa^* = \infty`: :math:`d` leaves the range of the covariances,
        or (BMPM, :math:`b_y = 0`) a direction with :math:`\sigma_x = 0` reaches
        :math:`w^\top d = 1` with :math:`N(w) > 0`, i.e. :math:`\|\tilde d_0\| > a_y` where
        :math:`\tilde d_0` is the part of :math:`\tilde d` on the null space of
        :math:`\Sigma_x` (there :math:`\Sigma_y = I` in the diagonal basis)."""
        _, lam, dt = self.basis()
        if self.unbounded:
            return True
        if self.b[1] != 0:
            return False
        null = lam <= 1e-12
        nd = float(np.linalg.norm(dt[null]))
        return nd > 0 and 1.0 - self.a[1] / nd > 1e-12

    def infinite_direction(self) -> np.ndarray:
        r"""A :math:`w` with :math:`w^\top d = 1`, :math:`D(w) = 0`, :math:`N(w) > 0`.

        Valid when :meth:`infinite_ratio` is true: the part of :math:`d` outside the
        covariances' range (:math:`\sigma_x = \sigma_y = 0`, :math:`N = 1`), else (BMPM)
        the least-:math:`\sigma_y` point of the null space of :math:`\Sigma_x` in the
        diagonal basis (:math:`\sigma_y = 1/\|\tilde d_0\|`, :math:`N = 1 - a_y\sigma_y`).
        """
        V, lam, dt = self.basis()
        if self.unbounded:
            S = self.Sx + self.Sy
            s, U = np.linalg.eigh(0.5 * (S + S.T))
            keep = s > 1e-13 * max(float(s[-1]), _TINY)
            w = self.d - U[:, keep] @ (U[:, keep].T @ self.d)
        else:
            z = np.where(lam <= 1e-12, dt, 0.0)
            w = V @ z
        return w / float(self.d @ w)

    def to_z(self, w: np.ndarray) -> np.ndarray:
        r"""Coordinates :math:`z` with :math:`w = Vz` (projected on the covariances' range)."""
        V, _, _ = self.basis()
        return V.T @ ((self.Sx + self.Sy) @ w)

    def min_weighted(self, cx: float, cy: float, z0: np.ndarray | None = None, *,
                     tol: float = 1e-13, max_iter: int = 10_000) -> tuple[np.ndarray, float, int]:
        r"""Iterative least squares for :math:`\min_{w^\top d=1} c_x\sigma_x(w) + c_y\sigma_y(w)`.

        Returns ``(z, value, iterations)`` in the diagonal basis (:math:`w = Vz`).
        """
        _, lam, dt = self.basis()
        mu = 1.0 - lam
        if z0 is None:
            z = dt / float(dt @ dt)
        else:
            z = z0 / float(dt @ z0)

        def value(z: np.ndarray) -> tuple[float, float, float]:
            sx = math.sqrt(max(float(lam @ (z * z)), 0.0))
            sy = math.sqrt(max(float(mu @ (z * z)), 0.0))
            return cx * sx + cy * sy, sx, sy

        val, sx, sy = value(z)
        it = 0
        for it in range(1, max_iter + 1):
            # floors relative to ||z|| (sigma_x^2 + sigma_y^2 = ||z||^2 in this basis) keep
            # the weights finite on a zero-variance direction
            floor = 1e-14 * float(np.linalg.norm(z))
            g = cx * lam / max(sx, floor, _TINY) + cy * mu / max(sy, floor, _TINY)
            g = np.maximum(g, _TINY)
            zn = dt / g
            zn /= float(dt @ zn)
            valn, sxn, syn = value(zn)
            step = float(np.linalg.norm(zn - z))
            z, val, sx, sy = zn, valn, sxn, syn
            if step <= tol * float(np.linalg.norm(z)):
                break
        return z, val, it

    def d_lower(self) -> float:
        r""":math:`D_{lb} = b_x/\sqrt{d^\top\Sigma_x^{-1}d} + b_y/\sqrt{d^\top\Sigma_y^{-1}d}`."""
        _, lam, dt = self.basis()
        out = 0.0
        for coef, diag in ((self.b[0], lam), (self.b[1], 1.0 - lam)):
            if coef:
                with np.errstate(divide="ignore"):
                    q = float(np.sum(np.where(diag > 0, dt * dt / np.maximum(diag, _TINY),
                                              np.where(dt != 0, np.inf, 0.0))))
                out += coef / math.sqrt(q) if q > 0 else 0.0
        return out

    def certificate(self, w: np.ndarray, *, tol: float = 1e-13) -> dict[str, float]:
        r"""``P(lambda)``, ``|P - 1|`` and the gap bound at :math:`\lambda = r(w)`."""
        lam_ = self.ratio(w)
        if not math.isfinite(lam_) or lam_ < 0:
            return {"kappa": lam_, "P": math.nan, "P_minus_1": math.nan, "gap": math.nan,
                    "ils_iterations": 0}
        z0 = self.to_z(w)
        _, P, its = self.min_weighted(self.a[0] + lam_ * self.b[0],
                                      self.a[1] + lam_ * self.b[1], z0, tol=tol)
        dlb = self.d_lower()
        gap = max(1.0 - P, 0.0) / dlb if dlb > 0 else math.inf
        return {"kappa": lam_, "P": P, "P_minus_1": abs(P - 1.0), "gap": gap,
                "ils_iterations": its}

    def solution_values(self, w: np.ndarray) -> dict[str, np.ndarray]:
        r"""``{"v": w / N(w)}``: the point of the perspective SOCP (objective :math:`D/N`)."""
        w = w / float(self.d @ w)
        num, _ = self.parts(w)
        return {"v": w / num if num > 0 else w}


def finish(name: str, fp: FractionalProgram, w: np.ndarray | None, reason: int,
           iterations: int, inner: int, setup_time: float, solve_time: float,
           history: list, messages: Mapping[int, str], status_map: Mapping[int, Status],
           extras: Mapping[str, Any] | None = None) -> Solution:
    """Build the :class:`Solution` of a fractional-program solver, with its certificate."""
    status = status_map[reason]
    if w is None or not status.has_solution:
        return Solution(status=status, solver=name, iterations=iterations,
                        setup_time=setup_time, solve_time=solve_time,
                        residuals=Residuals(primal=math.nan, dual=math.nan, gap=math.nan),
                        message=messages[reason], history=tuple(history),
                        extras={"inner_solves": inner, **(extras or {})})
    w = w / float(fp.d @ w)
    if reason == INFINITE_REASON:  # kappa* = inf, attained exactly by infinite_direction()
        return Solution(
            status=status, solver=name, objective=0.0, values=fp.solution_values(w),
            iterations=iterations, setup_time=setup_time, solve_time=solve_time,
            residuals=Residuals(primal=abs(float(fp.d @ w) - 1.0), dual=0.0, gap=0.0,
                                source="solver"),
            message=messages[reason], history=tuple(history),
            extras={"inner_solves": inner, "kappa": math.inf, **(extras or {})})
    start = time.perf_counter()
    cert = fp.certificate(w)
    cert_time = time.perf_counter() - start
    kappa = cert["kappa"]
    message = messages[reason]
    if status is Status.OPTIMAL:
        # never OPTIMAL when the solver's own certificate fails: |P - 1| is the
        # optimality measure at lambda = r(w), gap the certified bound on kappa* - r(w)
        failing = []
        if not cert["P_minus_1"] <= CERTIFY_TOL:
            failing.append(f"|P(lambda) - 1| = {cert['P_minus_1']:.3g}")
        if math.isfinite(cert["gap"]) and not cert["gap"] <= CERTIFY_TOL * max(1.0, kappa):
            failing.append(f"gap bound {cert['gap']:.3g}")
        if failing:
            status = Status.OPTIMAL_INACCURATE
            message = (f"not certified: {', '.join(failing)} > {CERTIFY_TOL:g} at the "
                       f"returned point ({message})")
    return Solution(
        status=status, solver=name,
        objective=1.0 / kappa if kappa > 0 else math.inf,
        values=fp.solution_values(w),
        iterations=iterations, setup_time=setup_time, solve_time=solve_time,
        residuals=Residuals(primal=abs(float(fp.d @ w) - 1.0), dual=cert["P_minus_1"],
                            gap=cert["gap"], source="solver"),
        message=message, history=tuple(history),
        extras={"inner_solves": inner + cert["ils_iterations"], "kappa": kappa,
                "P": cert["P"], "certificate_time": cert_time, **(extras or {})},
    )
