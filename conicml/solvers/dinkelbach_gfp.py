r"""``dinkelbach-gfp``: separable M4 by the generalized-fractional Dinkelbach method.

The scaled Dinkelbach-type-2 method of Crouzeix, Ferland & Schaible 1985 (JOTA 47:35–49;
seed 004 ch. 4, errata S004-A5) on kind ``"quasiconvex.m4"``: one SOCP check per
iteration, re-solved by the backend ``inner``. It stops when the check's value
:math:`F_k`, or the rise of the certified ratio, falls below ``tol`` relative to
:math:`\max(1, \rho_k)`; the iteration, the stopping rule and the certificate are in the
Notes of :func:`solve_dinkelbach_gfp`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import kinds, registry
from .._utils.linalg import inverse_quadratic
from ..program import Program
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._m4_inner import InnerSolver, _InnerFailure, point
from ._options import check_scalar

__all__ = ["STATUS_MAP", "TERMINATION_MESSAGES", "solve_dinkelbach_gfp"]

#: Stop reason -> message.
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: F(rho_k) <= tol * max(1, rho_k) or rho stalled", {
        4: "an inner SOCP solve failed",
        5: "not separable: the check at rho = 0 is negative (use a soft margin: set C)",
        6: "unbounded: a direction with sigma = 0 separates the data (raise reg)",
        7: ("stalled: the ratio stopped rising while F(rho_k) is still large, with unit "
            "scales too (the inner solver's accuracy limits the iteration); rho is not "
            "certified"),
    })

#: Stop reason -> Status; a non-converged result is returned, never raised.
STATUS_MAP: dict[int, Status] = status_table({
    4: Status.SOLVER_ERROR, 5: Status.INFEASIBLE, 6: Status.UNBOUNDED, 7: Status.USER_LIMIT})


def _sigma_floor(R: np.ndarray, d: np.ndarray) -> float:
    r""":math:`\min_{w^\top d=1}\|Rw\| = (d^\top(R^\top R)^{+}d)^{-1/2}` (0 off the range)."""
    q = inverse_quadratic(R, d)
    return 0.0 if math.isinf(q) else (1.0 / math.sqrt(q) if q > 0 else math.inf)


def _rho_gap(data: Any, floors: tuple[float, float], used: tuple[float, float, float],
             F: float, r: float) -> float:
    """Upper bound on :math:`\\rho^* - r` from the last check (Notes of
    :func:`solve_dinkelbach_gfp`): :math:`F_k\\max_c g_c(w_k)/\\underline g_c`."""
    if not (math.isfinite(F) and F >= 0):
        return math.nan
    rho_used, t_pos, t_neg = used
    scales, floors_ = [t_pos, t_neg], list(floors)
    if data["reduction"] is not None:
        scales.append(t_pos + t_neg)
        floors_.append(floors[0] + floors[1])
    worst = max((s / f if f > 0 else math.inf) for s, f in zip(scales, floors_))
    return max(0.0, rho_used + F * worst - r)


def _delegate(program: Program, fallback: str, reason: str, iterations: int,
              inner: InnerSolver, options: dict) -> Solution:
    # through the registry: a solver module imports no other solver module
    sol = registry.get(fallback, kind=program.kind).function(program, **options)
    return Solution(status=sol.status, solver="dinkelbach-gfp", objective=sol.objective,
                    values=sol.values, iterations=iterations + sol.iterations,
                    setup_time=sol.setup_time, solve_time=sol.solve_time,
                    residuals=sol.residuals,
                    message=f"{reason}: handed to {fallback} ({sol.message})",
                    history=sol.history,
                    extras={**sol.extras, "delegated": fallback,
                            "inner_solves": inner.solves + sol.extras.get("inner_solves", 0)})


@register("dinkelbach-gfp", kinds=[kinds.M4_SEPARABLE],
          description="separable M4: generalized-fractional Dinkelbach (CFS type 2)",
          certify_tol=1e-4)  # point from an interior-point inner solve
def solve_dinkelbach_gfp(
    program: Program,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: float | None = None,
    inner: str = "clarabel",
    inner_options: Mapping[str, Any] | None = None,
    scaled: bool = True,
    fallback: str | None = "bisection",
) -> Solution:
    r"""Separable M4 by the Dinkelbach-type GFP iteration.

    Parameters
    ----------
    program : Program
        Kind ``"quasiconvex.m4"``.
    tol : float, default=1e-8
        Relative tolerance on :math:`F(\rho_k)` and on the ρ increment.
    max_iter : int, default=100
        Largest number of Dinkelbach iterations (after the initial check).
    time_limit : float, optional
        Seconds; the best point so far is returned with USER_LIMIT.
    verbose : bool, default=False
        Print one line per iteration.
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (``objective`` is
        :math:`\rho_k`, ``residual`` :math:`F`, ``extras`` holds ``rho`` and ``F``);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    x0 : float, optional
        Initial :math:`\rho_0`.
    inner : {"clarabel", "ecos", "scs", "auto"}, default="clarabel"
        Generic backend of the inner SOCPs (``"auto"``: clarabel).
    inner_options : dict, optional
        Options of that backend.
    scaled : bool, default=True
        Divide each row by :math:`g_c(w_k)` (CFS type 2, superlinear);
        ``False`` is the plain Dinkelbach GFP (linear convergence).
    fallback : str or None, default="bisection"
        Solver of the same kind that the program is handed to (with the time left)
        when the iteration ends without a certified ratio: a stall with a large
        :math:`F_k` (``USER_LIMIT``) or a failed inner solve. The solution then says
        so in its message and ``extras["delegated"]``. ``None``: return that result.

    Returns
    -------
    Solution
        ``values = {"w", "b", "rho"}``, ``objective`` = certified ρ.

    Notes
    -----
    Separable M4 (kind ``"quasiconvex.m4"``) is a generalized fractional program
    (GFP): on :math:`A = \{(w, b) : w^\top d = 1\}`

    .. math::

        \rho^* = \max_{(w,b)\in A}\ \min_k \frac{f_k(w, b)}{g_k(w)},\qquad
        f_i = w^\top x_i + b,\ g_i = \sigma_x(w);\quad
        f_j = -(w^\top y_j + b),\ g_j = \sigma_y(w)

    (plus :math:`f_m = w^\top d`, :math:`g_m = \sigma_x + \sigma_y` with a
    reduction, eq. 4.36), with :math:`f_k` affine and :math:`g_k` convex and
    positive.

    **Algorithm** (Crouzeix, Ferland & Schaible 1985, "An algorithm for
    generalized fractional programs", JOTA 47:35–49, the scaled "Dinkelbach-type-2"
    method; errata S004-A5). From :math:`(w_0, b_0)` = the maximiser of the
    ρ = 0 check, :math:`\rho_0 = r(w_0, b_0) = \min_k f_k/g_k`, iterate

    .. math::

        F_k = \max_{(w,b)\in A}\ \min_k \frac{f_k(w,b) - \rho_k\,g_k(w)}{g_k(w_k)},
        \qquad (w_{k+1}, b_{k+1}) = \arg\max,\qquad
        \rho_{k+1} = \max(\rho_k, r(w_{k+1}, b_{k+1})),

    each :math:`F_k` being the program's DPP check with ``rho`` :math:`= \rho_k`
    and the scales :math:`t_x = \sigma_x(w_k)`, :math:`t_y = \sigma_y(w_k)`, one
    SOCP re-solved by the backend ``inner``. :math:`F_k \ge 0` (the previous
    point gives 0), :math:`F_k = 0` iff :math:`\rho_k = \rho^*`, and the
    iteration converges superlinearly (CFS 1985, Thm. 4.1) — independent of
    the bisection bracket and of :math:`\kappa^*_{MPM}`.

    **Stopping criterion:** :math:`|F_k| \le \texttt{tol}\cdot\max(1, \rho_k)` or
    :math:`r(w_{k+1}, b_{k+1}) - \rho_k \le \texttt{tol}\cdot\max(1, \rho_k)` (no
    further increase: at the inner solver's accuracy, about :math:`10^{-8}` with
    Clarabel's defaults, the ratio stops rising before :math:`F_k` reaches 0)
    *with* :math:`F_k \le 100\,\texttt{tol}\max(1, \rho_k)`. With exact inner
    solves :math:`F_k > 0` implies a ratio above :math:`\rho_k`, so a stall with a
    larger :math:`F_k` is no convergence: it happens when a row scale
    :math:`\sigma_c(w_k)` is near 0 (a singular class covariance, :math:`d \ge
    N_+`), where the scaled check is ill-posed; the iteration then continues with
    unit scales (plain Dinkelbach GFP, linear convergence), and a stall there too
    ends in ``USER_LIMIT`` (the scaled rule alone can stop far below :math:`\rho^*`).

    **Certificate:** ``Residuals(primal=`` :math:`|w^\top d - 1|` ``, dual=``
    :math:`F_k` ``, gap=`` an upper bound on :math:`\rho^* - \rho_k` ``)``. The
    bound follows from evaluating :math:`F_k` at the optimum:
    :math:`F_k \ge (\rho^* - \rho_k)\min_c \underline g_c/g_c(w_k)`, with
    :math:`\underline g_c = \min_{w^\top d = 1}\sigma_c(w) = (d^\top\Sigma_c^{+}d)^{-1/2}`
    (closed form), so :math:`\rho^* - \rho_k \le F_k\max_c g_c(w_k)/\underline g_c`
    (``inf`` if a covariance is singular along :math:`d`).

    **Warm-start:** ``x0`` is an initial :math:`\rho_0` (any value: from above,
    :math:`F < 0` and the next ratio falls below :math:`\rho^*`); the first
    point still comes from one check.
    """
    driver = Driver("dinkelbach-gfp", tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback,
                    legacy=lambda r: (r.iteration, dict(r.extras)))
    x0 = check_scalar("dinkelbach-gfp", "x0", x0)
    if fallback is not None:  # a name that is not a solver of this kind: raised now
        registry.get(fallback, kind=program.kind)
    data = program.data
    solver = InnerSolver(program, inner, inner_options, rebuild=False)
    _ = program.form
    setup_time = driver.elapsed  # the time limit counts from the start, setup included
    floors = (_sigma_floor(data["R_pos"], data["d"]), _sigma_floor(data["R_neg"], data["d"]))
    history: list[tuple[float, float, float]] = []
    extras_note: list[str] = []
    reason, failure, k = 0, None, 0
    rho, F, w, b, r = math.nan, math.nan, None, 0.0, -math.inf
    used = (math.nan, 1.0, 1.0)  # (rho, t_x, t_y) of the last check
    if verbose:
        print(f"{'iter':>5} {'rho_k':>16} {'F(rho_k)':>12} {'ratio':>16}")
    # rho* = inf iff d leaves the range of Sigma_x + Sigma_y: then some w with
    # sigma_x = sigma_y = 0 and w^T d = 1 puts every point of a class at its mean
    if _sigma_floor(np.vstack([data["R_pos"], data["R_neg"]]), data["d"]) == 0.0:
        return Solution(status=STATUS_MAP[6], solver="dinkelbach-gfp",
                        setup_time=setup_time, solve_time=driver.elapsed,
                        message=TERMINATION_MESSAGES[6], extras={"inner": solver.inner,
                                                                 "inner_solves": 0})
    try:
        sol = solver.check(0.0)
        w, b = point(sol)
        F0 = float(sol.values["eta"])
        r = data["m4"].certified_rho(w, b)
        history.append((0.0, F0, r))
        if F0 < 0 and r < 0:
            reason = 5
        elif math.isinf(r):
            reason = 6
        else:
            rho = max(r, 0.0) if x0 is None else float(x0)
            use_scales = scaled
            while True:
                limit = driver.limit(k)
                if limit is not None:
                    reason = int(limit)
                    break
                s_pos, s_neg = data["m4"].sigmas(w / float(data["d"] @ w))
                if use_scales and min(s_pos, s_neg) <= 1e-14:
                    # a class with sigma(w_k) = 0 (d >= n_pos: a singular covariance) is
                    # no unboundedness (the other class still bounds rho); its row scale
                    # would be 0: continue with unit scales (plain Dinkelbach GFP)
                    use_scales = False
                    extras_note.append(f"unit scales from iteration {k + 1} (sigma(w_k) = 0)")
                k += 1
                sol = (solver.check(rho, s_pos, s_neg) if use_scales else solver.check(rho))
                F = float(sol.values["eta"])
                used = (rho, s_pos, s_neg) if use_scales else (rho, 1.0, 1.0)
                w_new, b_new = point(sol)
                r_new = data["m4"].certified_rho(w_new, b_new)
                history.append((rho, F, r_new))
                if verbose:
                    print(f"{k:>5} {rho:>16.12f} {F:>12.3e} {r_new:>16.12f}")
                if math.isinf(r_new):
                    reason = 6
                    break
                from_above = rho > r  # only with x0 > rho*: F < 0, the ratio drops
                if r_new > r:
                    w, b, r = w_new, b_new, r_new
                step = r_new - rho
                rho = r_new if from_above else max(rho, r_new)
                if driver.notify(k, F, objective=rho, extras={"rho": rho, "F": F}):
                    reason = int(Reason.CALLBACK)
                    break
                if abs(F) <= tol * max(1.0, rho):
                    break  # converged
                if not from_above and step <= tol * max(1.0, rho):
                    # no further increase. With exact inner solves F > 0 implies a ratio
                    # above rho_k, so a stall means the inner solver's accuracy: accepted
                    # only when F is at that accuracy (100 tol); with d >= n_pos a
                    # near-zero row scale sigma(w_k) makes the scaled check ill-posed and
                    # the ratio fell short of rho*
                    if F <= 100.0 * tol * max(1.0, rho):
                        break
                    if use_scales:
                        use_scales = False
                        extras_note.append(f"unit scales from iteration {k + 1} (stall at "
                                           f"F = {F:.3g})")
                        continue
                    reason = 7
                    break
    except _InnerFailure as exc:
        reason, failure = 4, exc.solution
    solve_time = driver.elapsed - setup_time
    if reason in (4, 7) and fallback is not None:
        left = None if time_limit is None else time_limit - driver.elapsed
        if left is None or left > 0:
            return _delegate(program, fallback, TERMINATION_MESSAGES[reason], k, solver,
                             {"time_limit": left, "verbose": verbose, "callback": callback,
                              "inner": inner, "inner_options": inner_options})
    message = TERMINATION_MESSAGES[reason]
    if failure is not None:
        message += f" ({inner}: {failure.message})"
    extras = {"inner": solver.inner, "inner_solves": solver.solves, "inner_time": solver.time,
              "inner_times": tuple(solver.times), "scaled": scaled,
              "fallbacks": tuple(extras_note)}
    if w is None or reason in (5, 6):
        return Solution(status=STATUS_MAP[reason], solver="dinkelbach-gfp", iterations=k,
                        setup_time=setup_time, solve_time=solve_time, message=message,
                        history=tuple(history), extras=extras)
    gap = _rho_gap(data, floors, used, F, r)
    extras["rho_upper"] = r + gap
    return Solution(
        status=STATUS_MAP[reason],
        solver="dinkelbach-gfp",
        objective=r,
        values={"w": w, "b": np.array(b), "rho": np.array(r)},
        iterations=k,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=abs(float(data["d"] @ w) - 1.0), dual=F, gap=gap,
                            source="solver"),
        message=message,
        history=tuple(history),
        extras=extras,
    )
