r"""``bisection``: separable M4 by bisection over SOCP feasibility checks.

Kind ``"quasiconvex.m4"`` (:func:`conicml.formulations.m4.m4` with ``C=None``), seed 004
Sec. 4.1.1 (errata S004-A5). It stops when the bracket
:math:`\rho_{hi} - \rho_{lo} \le \texttt{tol}\cdot\max(1, \rho_{hi})`; the objective is the
best certified ratio, never the midpoint. The algorithm and the certificate are in the
Notes of :func:`solve_bisection`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import kinds
from ..program import Program
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._m4_inner import InnerSolver, _InnerFailure, point
from ._options import check_scalar

__all__ = ["STATUS_MAP", "TERMINATION_MESSAGES", "solve_bisection"]

#: Stop reason -> message.
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: bracket width rho_hi - rho_lo <= tol * max(1, rho_hi)", {
        4: "an inner SOCP solve failed",
        5: "not separable: the check at rho = 0 is negative (use a soft margin: set C)",
        6: "unbounded: sigma_x + sigma_y = 0 on w^T d = 1, the covariances are singular "
           "(raise reg)",
    })

#: Stop reason -> Status; a non-converged result is returned, never raised.
STATUS_MAP: dict[int, Status] = status_table({
    4: Status.SOLVER_ERROR, 5: Status.INFEASIBLE, 6: Status.UNBOUNDED})

def _print_header() -> None:
    print(f"{'iter':>5} {'rho':>14} {'F(rho)':>12} {'ratio':>14} {'rho_lo':>14} {'rho_hi':>14}")


@register("bisection", kinds=[kinds.M4_SEPARABLE],
          description="separable M4: bisection on rho over DPP SOCP feasibility checks",
          certify_tol=1e-4)  # point from an interior-point inner solve
def solve_bisection(
    program: Program,
    *,
    tol: float = 1e-7,
    max_iter: int = 100,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: float | None = None,
    inner: str = "clarabel",
    inner_options: Mapping[str, Any] | None = None,
    rebuild: bool = False,
) -> Solution:
    r"""Separable M4 by bisection on :math:`\rho`.

    Parameters
    ----------
    program : Program
        Kind ``"quasiconvex.m4"`` (:func:`conicml.formulations.m4.m4` with ``C=None``).
    tol : float, default=1e-7
        Relative bracket tolerance.
    max_iter : int, default=100
        Largest number of bisection steps (checks after the ρ = 0 check).
    time_limit : float, optional
        Seconds; the best certified point so far is returned with USER_LIMIT.
    verbose : bool, default=False
        Print one line per check.
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (``residual`` is the bracket
        width, ``extras`` holds ``rho``, ``F``, ``rho_lo``, ``rho_hi``);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    x0 : float, optional
        Warm start: a guess of :math:`\rho^*`.
    inner : {"clarabel", "ecos", "scs", "auto"}, default="clarabel"
        Generic backend of the inner SOCPs (``"auto"``: clarabel).
    inner_options : dict, optional
        Options of that backend (:func:`conicml.solve`: ``eps_abs``, ...).
    rebuild : bool, default=False
        Rebuild and recompile the inner problem at each step instead of
        re-solving the compiled DPP problem.

    Returns
    -------
    Solution
        ``values = {"w", "b", "rho"}``, ``objective`` = certified ρ.

    Notes
    -----
    **Algorithm** ("divide and conquer", seed 004 Sec. 4.1.1, errata S004-A5; Boyd &
    Vandenberghe, *Convex Optimization*, §4.2.5, bisection for quasi-convex
    problems). Keep a bracket :math:`\rho_{lo} \le \rho^* \le \rho_{hi}` and test
    the midpoint with the corrected Theorem 13 check of
    :mod:`conicml.formulations.m4` (scales :math:`t_x = t_y = 1`):

    .. math::

        F(\rho) = \max_{w^\top d = 1,\, b}\ \min\Big\{
          \min_i w^\top x_i + b - \rho\,\sigma_x(w),\
          \min_j -(w^\top y_j + b) - \rho\,\sigma_y(w)\Big\},

    feasible iff :math:`F(\rho) \ge 0` (the thesis's strict :math:`\eta^* > 0`
    relaxed to :math:`\ge`, errata S004-A5). Initial bracket: :math:`\rho_{lo} = 0`,
    whose check also decides separability (INFEASIBLE if :math:`F(0) < 0`), and
    :math:`\rho_{hi} = \kappa^*_{MPM}`, one extra SOCP (averaging the M4
    constraints gives MPM's (4.8), so :math:`\rho^* \le \kappa^*_{MPM}`). After
    every check the returned point's own ratio
    :math:`r(w, b) = \min_k \text{num}_k/\text{den}_k` (recomputed exactly) raises
    :math:`\rho_{lo}` if larger; the objective is the best such **certified**
    ratio, never the midpoint.

    The inner check is the program's DPP problem (``program.problem``, with the
    ``cp.Parameter`` ``rho``): it is compiled once and re-solved by the backend
    ``inner`` through :func:`conicml.solve`. ``rebuild=True`` instead builds and
    compiles a fresh parameter-free problem at every step (for the speed
    benchmark).

    **Stopping criterion:** :math:`\rho_{hi} - \rho_{lo} \le \texttt{tol}\cdot
    \max(1, \rho_{hi})`, i.e. :math:`\lceil\log_2(\kappa^*_{MPM}/\texttt{tol})\rceil`
    checks at most (about 23 at the default), where :math:`\rho_{lo}` is the
    largest ρ whose check was non-negative. The certified ratio of the returned
    point can trail :math:`\rho_{lo}` by the inner solver's accuracy (about
    :math:`10^{-9}` with Clarabel's defaults); the gap reports it.

    **Certificate:** ``Residuals(primal=`` :math:`|w^\top d - 1|` of the returned
    inner point ``, dual=`` :math:`|F|` at the last check, whose ρ normally lies in
    the final bracket (:math:`F(\rho^*) = 0`) ``, gap=`` final bracket width
    :math:`\rho_{hi} - r_{best}` ``)``; ``extras`` holds ``bracket``,
    ``kappa_mpm``, ``inner_solves`` (MPM bound and the ρ = 0 check included),
    ``inner_time`` and ``inner_times`` (per solve).

    **Warm-start:** ``x0`` is a guess of :math:`\rho^*`; the first two checks are
    at :math:`x_0(1 \mp 10^{-3})`, so a good guess closes the bracket to
    :math:`2\cdot 10^{-3} x_0` at once.
    """
    driver = Driver("bisection", tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback,
                    legacy=lambda r: (r.iteration, dict(r.extras)))
    x0 = check_scalar("bisection", "x0", x0, low=0.0)
    data = program.data
    solver = InnerSolver(program, inner, inner_options, rebuild)
    if not rebuild:
        _ = program.form  # build once (compiled on the first solve)
    setup_time = driver.elapsed  # the time limit counts from the start, setup included
    history: list[tuple[float, float, float, float, float]] = []
    best: dict[str, Any] = {"w": None, "b": 0.0, "r": -math.inf, "F": math.nan,
                            "primal": math.nan}
    lo, hi, kappa, reason, failure = 0.0, math.inf, math.nan, 0, None
    if verbose:
        _print_header()

    def run(rho: float, k: int) -> float:
        sol = solver.check(rho)
        w, b = point(sol)
        F = float(sol.values["eta"])
        r = data["m4"].certified_rho(w, b)
        if r > best["r"] or best["w"] is None:
            best.update(w=w, b=b, r=r)
        best["F"] = F  # |F| of the last check, inside the final bracket: -> 0 at rho*
        if r >= best["r"]:
            best["primal"] = abs(float(data["d"] @ w) - 1.0)
        history.append((rho, F, r, lo, hi))
        if verbose:
            print(f"{k:>5} {rho:>14.10f} {F:>12.3e} {r:>14.10f} {lo:>14.10f} {hi:>14.10f}")
        return F

    k = 0
    try:
        kappa, _ = solver.kappa_mpm()
        if math.isinf(kappa):
            reason = 6
        else:
            hi = kappa * (1.0 + 1e-12)
            if run(0.0, 0) < 0 and best["r"] < 0:
                reason = 5
            else:
                lo = max(0.0, best["r"])
                trials = [] if x0 is None else [x0 * (1 - 1e-3), x0 * (1 + 1e-3)]
                while hi - lo > tol * max(1.0, hi):
                    limit = driver.limit(k)
                    if limit is not None:
                        reason = int(limit)
                        break
                    k += 1
                    trial = trials.pop(0) if trials else math.nan
                    mid = trial if lo < trial < hi else 0.5 * (lo + hi)
                    F = run(mid, k)
                    if F >= 0:
                        lo = max(lo, mid, best["r"])
                    else:
                        hi = mid
                        lo = max(lo, best["r"])
                    if best["r"] > hi:  # an inexact check: trust the certified ratio
                        hi = best["r"]
                    if driver.notify(k, hi - lo, objective=best["r"], extras={
                            "rho": mid, "F": F, "rho_lo": lo, "rho_hi": hi}):
                        reason = int(Reason.CALLBACK)
                        break
    except _InnerFailure as exc:
        reason, failure = 4, exc.solution
    solve_time = driver.elapsed - setup_time
    message = TERMINATION_MESSAGES[reason]
    if failure is not None:
        message += f" ({inner}: {failure.message})"
    extras = {"inner": solver.inner, "inner_solves": solver.solves, "inner_time": solver.time,
              "inner_times": tuple(solver.times), "kappa_mpm": kappa,
              "bracket": (best["r"], hi), "rebuild": rebuild}
    if best["w"] is None or reason in (5, 6):
        return Solution(status=STATUS_MAP[reason], solver="bisection", iterations=k,
                        setup_time=setup_time, solve_time=solve_time,
                        residuals=Residuals(source="solver"), message=message,
                        history=tuple(history), extras=extras)
    return Solution(
        status=STATUS_MAP[reason],
        solver="bisection",
        objective=best["r"],
        values={"w": best["w"], "b": np.array(best["b"]), "rho": np.array(best["r"])},
        iterations=k,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=best["primal"], dual=abs(best["F"]), gap=hi - best["r"],
                            source="solver"),
        message=message,
        history=tuple(history),
        extras=extras,
    )
