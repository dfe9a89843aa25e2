r"""``dinkelbach``: the parametric method with iterative least squares for MPM and BMPM.

Solves the fractional program shared by the kinds ``"socp.mpm"`` and
``"socp.bmpm"`` (see :mod:`conicml.formulations.minimax`)

.. math::

    \kappa^* = \max_{w^\top d = 1} r(w) = \frac{N(w)}{D(w)}
    = \frac{1 - a_x\sigma_x(w) - a_y\sigma_y(w)}{b_x\sigma_x(w) + b_y\sigma_y(w)}

directly from the moments in ``program.data``, without a conic solver.

**Algorithm** (seed 004 Sec. 3.2.6, eqs. 3.28–3.29, note A2; Dinkelbach 1967).
Starting from :math:`\lambda_0 = \max(r(w_0), 0)`, repeat

1. :math:`w_{k+1} = \arg\min_{w^\top d = 1} P_{\lambda_k}(w)`,
   :math:`P_\lambda(w) = (a_x + \lambda b_x)\sigma_x(w) + (a_y + \lambda b_y)\sigma_y(w)`
   (eq. 3.28; for MPM, :math:`\lambda = \kappa_0 = 1`, this is Lanckriet's
   problem);
2. :math:`\lambda_{k+1} = r(w_{k+1})`,

which converges superlinearly to :math:`\kappa^*`. Step 1 is solved by
**iterative least squares** (eq. 3.29: :math:`\min_{\eta,\xi>0} \eta +
c_x^2\sigma_x^2/\eta + \xi + c_y^2\sigma_y^2/\xi` with alternating updates),
i.e. the reweighted problem

.. math::

    w \leftarrow \arg\min_{w^\top d = 1} w^\top G w,\quad
    G = \frac{c_x}{\sigma_x(w)}\Sigma_x + \frac{c_y}{\sigma_y(w)}\Sigma_y,
    \qquad w = G^{-1}d / (d^\top G^{-1} d),

a majorise–minimise scheme that decreases :math:`P_\lambda` monotonically.
Implementation detail (not in the thesis): :math:`\Sigma_x` and
:math:`\Sigma_y` are diagonalised simultaneously once
(:math:`V^\top(\Sigma_x+\Sigma_y)V = I`, :math:`V^\top\Sigma_xV = \Lambda`), after
which every least-squares step is an :math:`O(n)` diagonal solve; the whole
method costs one :math:`O(n^3)` eigendecomposition.

**Stopping criterion.** Outer: :math:`F(\lambda_k) = 1 - P_{\lambda_k}(w_{k+1})
\le \texttt{tol}` (:math:`F(\lambda) = \max_w N - \lambda D \ge 0`, zero exactly
at :math:`\lambda = \kappa^*`). Inner: :math:`\|w_{new} - w\| \le
\texttt{inner\_tol}\,\|w\|`. If :math:`F(0) \le 0` then :math:`\kappa^* \le 0`:
for BMPM :math:`\beta_0 \ge \beta_{0m}`, reported as INFEASIBLE (decode: α = 0).

**Certificate** (also used by ``rosen``): at the returned :math:`\lambda = r(w)`
one more least-squares solve gives :math:`P(\lambda) = \min_{w^\top d=1}
P_\lambda(w)`; ``Residuals.dual`` :math:`= |P(\kappa_\alpha) - 1|` (zero at the
optimum, note A3: :math:`\ell^* = 1`), ``Residuals.gap``
:math:`= (1 - P(\lambda))/D_{lb} \ge \kappa^* - \lambda` with
:math:`D_{lb} = b_x/\sqrt{d^\top\Sigma_x^{-1}d} + b_y/\sqrt{d^\top\Sigma_y^{-1}d}
\le \min_{w^\top d = 1} D(w)` (a certified bound on the error in κ), and
``Residuals.primal`` :math:`= |w^\top d - 1|`. The objective is :math:`1/\lambda`,
the SOCP's optimal value.

**Warm-start:** ``x0`` is an initial :math:`w` (any scale, :math:`w^\top d > 0`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..exceptions import OptionError, SolverError
from ..program import Program
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._options import check_array, check_common

__all__ = ["TERMINATION_MESSAGES", "FractionalProgram", "solve_dinkelbach"]

TERMINATION_MESSAGES: dict[int, str] = {
    0: "converged: F(lambda) = 1 - P(lambda) <= tol",
    1: "maximum number of outer iterations reached (max_iter)",
    2: "time limit reached (time_limit)",
    3: "stopped by the callback",
    4: "infeasible: max N(w) <= 0, so kappa* <= 0 (beta0 >= beta0_max for BMPM)",
    5: "unbounded: the mean difference has a component of zero variance (kappa* = inf); "
       "add a ridge (rho_x, rho_y > 0)",
    6: "stalled: lambda stopped increasing before F(lambda) <= tol (inner accuracy limit)",
}

STATUS_MAP: dict[int, Status] = {0: Status.OPTIMAL, 1: Status.USER_LIMIT, 2: Status.USER_LIMIT,
                                 3: Status.USER_LIMIT, 4: Status.INFEASIBLE,
                                 5: Status.UNBOUNDED, 6: Status.OPTIMAL_INACCURATE}

_TINY = 1e-300


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
    start = time.perf_counter()
    cert = fp.certificate(w)
    cert_time = time.perf_counter() - start
    kappa = cert["kappa"]
    return Solution(
        status=status, solver=name,
        objective=1.0 / kappa if kappa > 0 else math.inf,
        values=fp.solution_values(w),
        iterations=iterations, setup_time=setup_time, solve_time=solve_time,
        residuals=Residuals(primal=abs(float(fp.d @ w) - 1.0), dual=cert["P_minus_1"],
                            gap=cert["gap"], source="solver"),
        message=messages[reason], history=tuple(history),
        extras={"inner_solves": inner + cert["ils_iterations"], "kappa": kappa,
                "P": cert["P"], "certificate_time": cert_time, **(extras or {})},
    )


@register("dinkelbach", kinds=["socp.bmpm", "socp.mpm"],
          description="Dinkelbach parametric method + iterative least squares (MPM, BMPM)",
          certify_tol=1e-5)  # default tol 1e-10; ~1e-6 ill-conditioned
def solve_dinkelbach(
    program: Program,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    inner_tol: float = 1e-13,
    inner_max_iter: int = 10_000,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callable[[int, float, float], Any] | None = None,
    x0: np.ndarray | None = None,
) -> Solution:
    r"""Parametric (Dinkelbach) method with iterative least squares for MPM / BMPM.

    Parameters
    ----------
    program : Program
        Kind ``"socp.mpm"`` or ``"socp.bmpm"``.
    tol : float, default=1e-10
        Outer stop: :math:`F(\lambda) = 1 - P_\lambda(w) \le \texttt{tol}`.
    max_iter : int, default=100
        Outer iterations.
    inner_tol : float, default=1e-13
        Least-squares stop :math:`\|\Delta w\| \le \texttt{inner\_tol}\|w\|`.
    inner_max_iter : int, default=10000
        Least-squares iterations per outer step.
    time_limit : float, optional
    verbose : bool, default=False
    callback : callable, optional
        ``callback(k, lambda, F)``; returning ``True`` stops.
    x0 : ndarray, optional
        Initial :math:`w`.

    Returns
    -------
    Solution
        ``values = {"v"}`` (the SOCP point), ``objective`` :math:`= 1/\kappa^*`,
        ``iterations`` = outer steps, ``extras["inner_solves"]`` = least-squares
        steps, certificate in ``residuals`` (module docstring).
    """
    check_common("dinkelbach", tol, max_iter, time_limit)
    start = time.perf_counter()
    fp = FractionalProgram(program.data)
    V, _, dt = fp.basis()
    setup_time = time.perf_counter() - start
    start = time.perf_counter()
    history: list[tuple[int, float, float]] = []
    if fp.infinite_ratio():
        return finish("dinkelbach", fp, None, 5, 0, 0, setup_time,
                      time.perf_counter() - start, history, TERMINATION_MESSAGES, STATUS_MAP)
    if x0 is not None:
        x0 = check_array("dinkelbach", "x0", x0, fp.d.shape)
        if not float(fp.d @ x0) > 0:
            raise OptionError(f"x0 must be a vector of length {fp.d.size} with x0 @ d > 0")
        z = fp.to_z(x0)
    else:
        z = dt / float(dt @ dt)
    lam_ = max(fp.ratio(V @ z), 0.0)
    inner = 0
    reason = 1
    w = None
    for k in range(1, max_iter + 1):
        z, P, its = fp.min_weighted(fp.a[0] + lam_ * fp.b[0], fp.a[1] + lam_ * fp.b[1], z,
                                    tol=inner_tol, max_iter=inner_max_iter)
        inner += its
        F = 1.0 - P
        w = V @ z
        if lam_ == 0.0 and F <= 0.0:
            reason = 4
            break
        lam_new = fp.ratio(w)
        history.append((k, lam_new, F))
        if fp.parts(w)[1] <= 1e-10 * float(np.linalg.norm(z)):
            reason = 5  # D(w) ~ 0 at w'd = 1: kappa* is infinite (zero-variance direction)
            break
        if verbose:
            print(f"  dinkelbach {k:3d}: lambda={lam_new:.15g}  F={F:.3e}  ils={its}")
        if F <= tol:
            reason = 0
            break
        if callback is not None and callback(k, lam_new, F):
            reason = 3
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            reason = 2
            break
        if lam_new <= lam_:  # no progress possible at this inner accuracy
            reason = 6
            break
        lam_ = lam_new
    if w is None:
        raise SolverError("dinkelbach made no iteration")
    return finish("dinkelbach", fp, w, reason, len(history), inner, setup_time,
                  time.perf_counter() - start, history, TERMINATION_MESSAGES, STATUS_MAP)
