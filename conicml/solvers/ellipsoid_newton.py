r"""``ellipsoid-newton``: the ellipsoid distance by Newton's method on its two multipliers.

Accepts the specified-rates programs (kinds ``"socp.chance.rates.primal"`` and
``"...dual"``, linear and kernel; seed 003 ch. 2), whose dual (2.13) is the distance
between :math:`B_\pm = \{z : (z-\mu_\pm)^\top\Sigma_\pm^{-1}(z-\mu_\pm) \le \kappa_\pm^2\}`.
Beside ``lin-han`` (the thesis's method, one matrix–vector product per step but many
steps when :math:`\Sigma` is ill-conditioned) it solves the same program with a
handful of factorisations.

**Algorithm.** The Lagrangian of :math:`\min \tfrac12\|z_+ - z_-\|^2` over the two
ellipsoids, minimised over :math:`z_\pm` for multipliers :math:`\lambda_\pm > 0`, gives
:math:`r = z_+ - z_-` from one linear system and the concave dual function

.. math::

    M(\lambda) = I + \Sigma_+/\lambda_+ + \Sigma_-/\lambda_-,\qquad M r = d = \mu_+ - \mu_-,
    \qquad z_+ = \mu_+ - \Sigma_+ r/\lambda_+,\quad z_- = \mu_- + \Sigma_- r/\lambda_-,

.. math::

    g(\lambda) = \tfrac12 d^\top M^{-1} d - \tfrac12(\lambda_+\kappa_+^2 + \lambda_-\kappa_-^2),
    \qquad \partial g/\partial\lambda_\pm = \tfrac12(r^\top\Sigma_\pm r/\lambda_\pm^2
    - \kappa_\pm^2),

whose Hessian, with :math:`s_\pm = \Sigma_\pm r/\lambda_\pm^2`, is
:math:`H_{\pm\pm} = s_\pm^\top M^{-1}s_\pm - r^\top\Sigma_\pm r/\lambda_\pm^3`,
:math:`H_{+-} = s_+^\top M^{-1}s_-`. Damped Newton ascent on the two multipliers
(backtracking on :math:`g`, steps kept inside :math:`\lambda > 0`), one Cholesky
factorisation of :math:`M` per evaluation: :math:`O(n^3/3)` per step, no inverse of
:math:`\Sigma_\pm` (singular covariances are fine). :math:`\Sigma_\pm = C_\pm C_\pm^\top`
from the program's factors (the ellipsoids its cones and its certificate use; they
differ from ``cov_*`` where the factorisation dropped a spectrum). A class with
:math:`\kappa = 0` is its mean (its term leaves :math:`M`). Near the maximum :math:`g`
is flat to rounding (its change is quadratic in the multipliers' error), so where
Armijo's predicted increase is below :math:`g`'s rounding a step is accepted when it
shrinks the stationarity :math:`|r^\top\Sigma_\pm r/\lambda_\pm^2 - \kappa_\pm^2|`
instead. BLAS runs on one thread (:mod:`conicml._threads`).

**Certificate and stopping criterion.** Feasible pairs :math:`z_\pm \in B_\pm` give
:math:`2/\|z_+ - z_-\|^2 \le \tfrac12\|w^*\|^2`: the Lagrangian points
:math:`z_\pm = \mu_\pm \mp \Sigma_\pm r/\lambda_\pm` pulled onto their ellipsoids, the
tangent points along :math:`e = r/\|r\|` (:math:`r = z_+ - z_-`), and, when the solver
would stop uncertified, the pairs fitted by least squares in the balls (one side or both:
a flat ellipsoid whose nearest point is interior has :math:`\lambda \to 0`, where
:math:`\Sigma r/\lambda` is round-off and the tangent point undetermined). The returned
hyperplane :math:`w = 2e/s(e)` along the best direction is primal feasible, and its
value :math:`2/s(e)^2` is the upper end. The solver stops when

.. math::

    \text{upper} - \text{lower} \le \texttt{tol}\cdot\text{upper}

(``Residuals.gap`` is that difference, ``dual`` the relative gap itself: the bracket
certifies the point even before the multipliers have converged). For the dual kind the
returned pair is judged by its own direction's bracket, as its certificate judges it.
No decrease of the gap by 0.1 % and no rise of :math:`g` above its rounding for 8 steps
stops the solver as stalled (``OPTIMAL_INACCURATE`` with the gap reached: badly scaled
features raise the bracket's rounding floor above a small ``tol``). Intersecting
ellipsoids (infeasible rates) drive :math:`\lambda \to 0` and the feasible pair together:
reported ``INFEASIBLE`` once their distance falls below :math:`10^{-10}\|d\|`.

**Warm-start:** ``x0 = (lambda_pos, lambda_neg)``, e.g. ``extras["multipliers"]`` of a
previous run on a nearby program.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.linalg.lapack import dpotrf as _potrf
from scipy.linalg.lapack import dpotrs as _potrs

from .. import kinds
from .._threads import single_blas_thread
from ..exceptions import OptionError
from ..registry import register
from ..solution import Solution, Status
from ._callback import Callback, IntermediateResult, stopper
from ._ellipsoid_distance import (
    RATES_KINDS,
    check_rates_program,
    program_covariances,
    rates_solution,
)
from ._options import check_common

__all__ = ["TERMINATION_MESSAGES", "solve_ellipsoid_newton"]

TERMINATION_MESSAGES: dict[int, str] = {
    0: "converged: certified relative gap (upper - lower) / upper <= tol",
    1: "maximum number of iterations reached (max_iter)",
    2: "time limit reached (time_limit)",
    3: "stopped by the callback",
    4: "the ellipsoids intersect: the specified rates are infeasible",
    5: "stalled: the certified gap stopped decreasing (rounding floor of the bracket)",
}

_EPS = float(np.finfo(float).eps)


def _norm(v: np.ndarray) -> float:
    """Euclidean norm of a vector (``np.linalg.norm`` without its call overhead)."""
    return math.sqrt(float(v @ v))
#: Armijo's test is replaced by the gradient test once the predicted increase of g is
#: below this multiple of its rounding (``_Dual.value_scale``).
_FLAT = 1e3 * _EPS
#: Steps without a 0.1 % decrease of the best certified gap before stopping (stall).
_STALL = 8

STATUS_MAP: dict[int, Status] = {0: Status.OPTIMAL, 1: Status.USER_LIMIT,
                                 2: Status.USER_LIMIT, 3: Status.USER_LIMIT,
                                 4: Status.INFEASIBLE, 5: Status.OPTIMAL_INACCURATE}


class _Dual:
    """Evaluates :math:`g`, its gradient and Hessian at the multipliers (module docstring)."""

    def __init__(self, data: Any, pair_kind: bool = False) -> None:
        self.mu = (np.asarray(data["mean_pos"], float), np.asarray(data["mean_neg"], float))
        self.S = program_covariances(data)  # C C^T: the program's own ellipsoids
        self.C = (np.asarray(data["C_pos"], float), np.asarray(data["C_neg"], float))
        self.pair_kind = pair_kind  # the dual kind: the returned pair is the answer
        self.kappa = (float(data["kappa_pos"]), float(data["kappa_neg"]))
        self.active = tuple(k > 0 for k in self.kappa)  # kappa = 0: the class is a point
        self.d = self.mu[0] - self.mu[1]
        self.n = self.d.size

    def evaluate(self, lam: np.ndarray, derivatives: bool = True) -> dict[str, Any]:
        M = np.eye(self.n)
        for i in (0, 1):
            if self.active[i]:
                M += self.S[i] / lam[i]
        # LAPACK potrf/potrs directly (scipy's cho_factor/cho_solve wrappers cost more
        # than the factorisation itself at the campaign's sizes, d <= 5)
        L, info = _potrf(M, lower=1, clean=0, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"M(lambda) is not positive definite (potrf {info})")
        r = _potrs(L, self.d, lower=1)[0]
        Sr = [self.S[i] @ r if self.active[i] else np.zeros(self.n) for i in (0, 1)]
        q = np.array([float(r @ Sr[i]) / lam[i] ** 2 if self.active[i] else 0.0
                      for i in (0, 1)])
        kap2 = np.array([k * k for k in self.kappa])
        value = 0.5 * float(self.d @ r) - 0.5 * float(
            sum(lam[i] * kap2[i] for i in (0, 1) if self.active[i]))
        out = {"r": r, "Sr": Sr, "q": q, "value": value,
               "grad": np.where(self.active, 0.5 * (q - kap2), 0.0)}
        if derivatives:
            s = [Sr[i] / lam[i] ** 2 for i in (0, 1)]
            sol = _potrs(L, np.column_stack(s), lower=1)[0]
            Ms = [sol[:, 0], sol[:, 1]]
            H = np.zeros((2, 2))
            for i in (0, 1):
                if not self.active[i]:
                    H[i, i] = -1.0  # a fixed coordinate: no step along it
                    continue
                H[i, i] = float(s[i] @ Ms[i]) - float(r @ Sr[i]) / lam[i] ** 3
                for j in (0, 1):
                    if j != i and self.active[j]:
                        H[i, j] = float(s[i] @ Ms[j])
            out["hess"] = 0.5 * (H + H.T)
        return out

    def value_scale(self, lam: np.ndarray) -> float:
        """The magnitude of the terms of :math:`g` (its rounding is ``eps`` times this)."""
        return float(self.d @ self.d) + sum(float(lam[i]) * self.kappa[i] ** 2
                                            for i in (0, 1) if self.active[i])

    def stationarity(self, ev: dict[str, Any]) -> float:
        r"""Largest :math:`|q_\pm - \kappa_\pm^2| / \kappa_\pm^2` (0 at the optimum)."""
        return max((abs(ev["q"][i] - self.kappa[i] ** 2) / self.kappa[i] ** 2
                    for i in (0, 1) if self.active[i]), default=0.0)

    def points(self, lam: np.ndarray, ev: dict[str, Any]) -> list[tuple[np.ndarray, ...]]:
        """The pulled pair ``(z_pos, z_neg, u_pos, u_neg)``: feasible, onto the ellipsoids."""
        z, u = [], []
        for i, sign in ((0, -1.0), (1, 1.0)):
            if not self.active[i]:
                z.append(self.mu[i].copy())
                u.append(np.zeros(self.C[i].shape[1]))
                continue
            offset = ev["Sr"][i] / lam[i]  # Sigma r / lambda
            q = ev["q"][i]
            shrink = min(1.0, self.kappa[i] / math.sqrt(q)) if q > 0 else 1.0
            z.append(self.mu[i] + sign * shrink * offset)
            # u = C^T r * shrink / (kappa lambda): z = mu -+ kappa C u
            u.append((self.C[i].T @ ev["r"]) * (shrink / (self.kappa[i] * lam[i])))
        return [(z[0], z[1], u[0], u[1])]

    def tangent(self, e: np.ndarray, Ce: list[np.ndarray], fit: bool
                ) -> list[tuple[np.ndarray, ...]]:
        r"""Feasible pairs along the direction ``e`` (``Ce`` holds :math:`C_\pm^\top e`).

        The tangent points :math:`z_\pm = \mu_\pm \mp \kappa_\pm C_\pm
        C_\pm^\top e/\|C_\pm^\top e\|` (the optimal pair once ``e`` is the optimal
        direction). The pulled pair of :meth:`points` divides :math:`\Sigma r` by
        :math:`\lambda`, which is round-off when a multiplier tends to 0 (a flat
        ellipsoid whose nearest point is inside its relative interior, e.g. a factor of
        low rank); these pairs do not. With ``fit``, also the pairs where one side is
        instead fitted, by least squares in its ball, to :math:`z_+ - z_- = \delta e`
        with :math:`\delta = s(e)` (a kink :math:`C^\top e = 0` leaves the tangent
        point undetermined).
        """
        z, u = [], []
        for i, sign in ((0, -1.0), (1, 1.0)):
            norm = _norm(Ce[i])
            if not self.active[i] or not norm > 0:
                z.append(self.mu[i].copy())
                u.append(np.zeros(self.C[i].shape[1]))
                continue
            u.append(Ce[i] / norm)
            z.append(self.mu[i] + sign * self.kappa[i] * (self.C[i] @ u[i]))
        pairs = [(z[0], z[1], u[0], u[1])]
        if fit:
            sep = float(e @ self.d) - sum(self.kappa[i] * _norm(Ce[i])
                                          for i in (0, 1))
            step = max(sep, 0.0) * e
            for i, sign in ((0, -1.0), (1, 1.0)):
                if not self.active[i]:
                    continue
                # z_i = mu_i + sign kappa C u_i  with  z_pos - z_neg = step
                target = (z[1] + step if i == 0 else z[0] - step) - self.mu[i]
                ui = np.linalg.lstsq(sign * self.kappa[i] * self.C[i], target, rcond=None)[0]
                ui = ui / max(1.0, _norm(ui))
                zi = self.mu[i] + sign * self.kappa[i] * (self.C[i] @ ui)
                pairs.append((zi, z[1], ui, u[1]) if i == 0 else (z[0], zi, u[0], ui))
            if all(self.active):  # both sides at once (both flat along e: two kinks)
                A = np.hstack([self.kappa[0] * self.C[0], self.kappa[1] * self.C[1]])
                uu = np.linalg.lstsq(A, self.d - step, rcond=None)[0]
                up, un = np.split(uu, [self.C[0].shape[1]])
                up = up / max(1.0, _norm(up))
                un = un / max(1.0, _norm(un))
                pairs.append((self.mu[0] - self.kappa[0] * (self.C[0] @ up),
                              self.mu[1] + self.kappa[1] * (self.C[1] @ un), up, un))
        return pairs

    def bracket(self, lam: np.ndarray, ev: dict[str, Any], fit: bool = False
                ) -> dict[str, Any]:
        r"""Bounds on :math:`\tfrac12\|w^*\|^2` at ``lam`` and the pair and direction giving them.

        Lower: :math:`2/\|z_+ - z_-\|^2` over feasible pairs (:meth:`points`,
        :meth:`tangent`). Upper: :math:`2/s(e)^2` over the directions :math:`r/\|r\|`
        (:math:`r = z_+ - z_-` at the Lagrangian minimiser) and that of the best pair,
        and :math:`1/g(\lambda)` (module docstring).
        """
        r = ev["r"]
        rn = _norm(r)
        dirs = [r / rn] if rn > 0 else []
        Ce = {}
        pairs = self.points(lam, ev)
        if dirs:
            Ce[0] = [self.C[i].T @ dirs[0] for i in (0, 1)]
            pairs += self.tangent(dirs[0], Ce[0], fit)
        dists = [_norm(zp - zn) for zp, zn, _, _ in pairs]
        if self.pair_kind:
            # the dual kind returns the pair: it is judged by its own direction's
            # separation (the certificate's bracket (D - s(e)^2)/D), so pick by that
            own = []
            for (zp, zn, _, _), dist in zip(pairs, dists):
                e = (zp - zn) / dist if dist > 0 else None
                sep = -math.inf if e is None else float(e @ self.d) - sum(
                    self.kappa[i] * _norm(self.C[i].T @ e) for i in (0, 1))
                own.append(1.0 - max(sep, 0.0) ** 2 / dist**2 if dist > 0 else math.inf)
            best = int(np.argmin(own))
            dist = dists[best]
            lower = 2.0 / dist**2 if dist > 0 else math.inf
            return {"dist": dist, "pair": pairs[best], "lower": lower, "direction": None,
                    "upper": lower / (1.0 - own[best]) if own[best] < 1.0 else math.inf}
        best = int(np.argmin(dists))
        dist = dists[best]
        out = {"dist": dist, "pair": pairs[best], "lower": 2.0 / dist**2 if dist > 0 else math.inf}
        if dist > 0:
            dirs.append((pairs[best][0] - pairs[best][1]) / dist)
            Ce[len(dirs) - 1] = [self.C[i].T @ dirs[-1] for i in (0, 1)]
        # the primal kind returns w = 2e/s(e): its value 2/s(e)^2 is the upper end (the
        # dual value's 1/g(lambda) bounds the optimum, not the returned point)
        upper, direction = math.inf, None
        for k, e in enumerate(dirs):
            sep = float(e @ self.d) - sum(self.kappa[i] * _norm(Ce[k][i])
                                          for i in (0, 1))
            if sep > 0 and 2.0 / sep**2 <= upper:
                upper, direction = 2.0 / sep**2, e
        out["upper"], out["direction"] = upper, direction
        return out


@register("ellipsoid-newton", kinds=list(RATES_KINDS),
          description="ellipsoid distance by Newton on its two multipliers (specified rates)")
def solve_ellipsoid_newton(
    program,
    *,
    tol: float = 1e-10,
    max_iter: int = 200,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: tuple[float, float] | None = None,
) -> Solution:
    r"""Specified-rates classifier by Newton's method on the ellipsoid distance's dual.

    Parameters
    ----------
    program : Program
        Kind ``"socp.chance.rates.primal"`` or ``"socp.chance.rates.dual"``
        (:func:`conicml.formulations.specified_rates.specified_rates`).
    tol : float, default=1e-10
        Relative certified gap at which to stop (module docstring).
    max_iter : int, default=200
        Newton steps.
    time_limit : float, optional
        Seconds; the last point is returned with ``USER_LIMIT``.
    verbose : bool, default=False
        Print one line per step.
    callback : callable, optional
        ``callback(intermediate_result)`` after every step (``objective`` is the
        dual value :math:`g(\lambda)`, ``residual`` the relative gap, ``values``
        holds ``multipliers``); raising :class:`StopIteration` stops the solver.
    x0 : (float, float), optional
        Initial multipliers :math:`(\lambda_+, \lambda_-)`.

    Returns
    -------
    Solution
        As ``lin-han``: ``objective`` :math:`\tfrac12\|w\|^2` (primal kind) or the
        squared distance (dual kind); ``extras`` holds ``multipliers``, ``z_pos``,
        ``z_neg``, ``distance``, ``lower_bound``, ``upper_bound``, ``stop_reason``.
    """
    t0 = time.perf_counter()
    check_common("ellipsoid-newton", tol, max_iter, time_limit)
    stop = stopper("ellipsoid-newton", callback)
    data = check_rates_program(program, "ellipsoid-newton")
    with single_blas_thread(np.asarray(data["mean_pos"]).size):
        return _newton(program, data, t0=t0, stop=stop, tol=tol, max_iter=max_iter,
                       time_limit=time_limit, verbose=verbose, x0=x0)


def _newton(program: Any, data: Any, *, t0: float, stop: Any, tol: float, max_iter: int,
            time_limit: float | None, verbose: bool, x0: Any) -> Solution:
    """The Newton iteration of :func:`solve_ellipsoid_newton` (options checked)."""
    dual = _Dual(data, pair_kind=program.kind == kinds.RATES_DUAL)
    if x0 is None:
        # r ~ d when the ellipsoids are small: lambda = sqrt(d^T Sigma d) / kappa
        lam = np.array([math.sqrt(max(float(dual.d @ dual.S[i] @ dual.d), 1e-300))
                        / dual.kappa[i] if dual.active[i] else 1.0 for i in (0, 1)])
    else:
        lam = np.asarray(x0, dtype=float).reshape(-1)
        if lam.shape != (2,) or not np.all(np.isfinite(lam)) or np.any(lam <= 0):
            raise OptionError("ellipsoid-newton: x0 must be two positive finite multipliers "
                              f"(lambda_pos, lambda_neg), got {x0!r}")
    d_norm = _norm(dual.d)
    setup_time = time.perf_counter() - t0
    t1 = time.perf_counter()
    ev = dual.evaluate(lam)
    code, k, rel_gap = 1, 0, math.inf
    best_gap, best_value, since_best = math.inf, -math.inf, 0
    if verbose:
        print(f"{'iter':>5} {'g(lambda)':>16} {'lower':>16} {'upper':>16} {'rel. gap':>10}")
    while True:
        br = dual.bracket(lam, ev)
        if br["dist"] <= 1e-10 * d_norm:
            code = 4
            break
        lower, upper = br["lower"], br["upper"]
        rel_gap = (upper - lower) / upper if math.isfinite(upper) else math.inf
        if verbose:
            print(f"{k:>5} {ev['value']:>16.10g} {lower:>16.10g} {upper:>16.10g} "
                  f"{rel_gap:>10.2e}")
        if stop is not None and stop(IntermediateResult(
                iteration=k, objective=ev["value"], residual=rel_gap,
                elapsed=time.perf_counter() - t1, values={"multipliers": lam.copy()})):
            code = 3
            break
        if rel_gap <= tol:
            code = 0
            break
        # progress: the certified gap shrinks, or g still rises above its rounding
        # (infeasible rates: lambda -> 0, the gap stays infinite while g climbs to 0)
        if rel_gap < best_gap * (1.0 - 1e-3) or \
                ev["value"] > best_value + _FLAT * dual.value_scale(lam):
            best_gap, best_value, since_best = min(rel_gap, best_gap), ev["value"], 0
        else:
            since_best += 1
            if since_best >= _STALL:
                code = 5
                break
        if k >= max_iter:
            code = 1
            break
        if time_limit is not None and time.perf_counter() - t1 > time_limit:
            code = 2
            break
        # damped Newton ascent (g is concave in lambda), inside lambda > 0
        H, grad = ev["hess"], ev["grad"]
        try:
            step = -np.linalg.solve(H - 1e-14 * abs(np.trace(H)) * np.eye(2), grad)
        except np.linalg.LinAlgError:
            step = grad
        if float(step @ grad) <= 0:  # not an ascent direction (rounding): gradient step
            step = grad * (1.0 / max(abs(np.trace(H)), 1e-300))
        t = 1.0
        neg = step < 0
        if np.any(neg):
            t = min(1.0, 0.9 * float(np.min(-lam[neg] / step[neg])))
        improved = False
        for _ in range(60):
            trial = lam + t * step
            ev_trial = dual.evaluate(trial)
            if ev_trial["value"] >= ev["value"] + 1e-4 * t * float(step @ grad):
                improved = True
                break
            # near the maximum g is flat to rounding (its change is quadratic in the
            # multipliers' error, below eps * |g| once that error is ~sqrt(eps)), so
            # Armijo's test on g reads noise: there, a step that shrinks the gradient
            # (the stationarity q_pm = kappa_pm^2 it is solving) is accepted instead
            if (t * float(step @ grad) <= _FLAT * dual.value_scale(lam)
                    and dual.stationarity(ev_trial) < dual.stationarity(ev)):
                improved = True
                break
            t *= 0.5
        k += 1
        if not improved or np.all(np.abs(trial - lam) <= 4 * _EPS * np.abs(lam)):
            code = 5  # no step moves the multipliers: the bracket is at its rounding floor
            lam, ev = trial, ev_trial
            break
        lam, ev = trial, ev_trial
    solve_time = time.perf_counter() - t1
    extras = {"stop_reason": code, "multipliers": lam.copy(), "relative_gap": rel_gap}
    if code == 4:
        message = (f"{TERMINATION_MESSAGES[4]} (error_pos={data.get('eta_pos', math.nan):g}, "
                   f"error_neg={data.get('eta_neg', math.nan):g}); raise error_pos or error_neg")
        return Solution(status=Status.INFEASIBLE, solver="ellipsoid-newton", iterations=k,
                        setup_time=setup_time, solve_time=solve_time, message=message,
                        extras=extras)
    if code != 3:
        # the last multipliers (a stalled line search moved them), and where the cheap
        # pairs did not certify, the fitted pairs too (a least-squares solve per side)
        br = dual.bracket(lam, ev, fit=code != 0)
        if code != 0 and br["dist"] > 1e-10 * d_norm and math.isfinite(br["upper"]):
            rel_gap = (br["upper"] - br["lower"]) / br["upper"]
            if rel_gap <= tol:
                code = 0
        extras["relative_gap"] = rel_gap
    zp, zn, u_pos, u_neg = br["pair"]
    residual = rel_gap  # the optimality measure: the certified relative gap
    message = TERMINATION_MESSAGES[code]
    if code in (1, 2, 5):
        message += (f"; certified relative gap {rel_gap:.2g} > tol {tol:.2g} (badly scaled "
                    "features or flat ellipsoids raise the bracket's rounding floor)")
    if verbose:
        print(f"ellipsoid-newton: {message}")
    return rates_solution(
        program, data, solver="ellipsoid-newton", status=STATUS_MAP[code],
        message=message, z_pos=zp, z_neg=zn, u_pos=u_pos, u_neg=u_neg,
        dual_residual=residual, direction=br["direction"],
        iterations=k, setup_time=setup_time,
        solve_time=solve_time, extras=extras)
