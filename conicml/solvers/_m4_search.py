r"""Soft-margin (and reduced) M4 by a line search over ρ: the driver of two solvers.

``quadratic-interpolation`` and ``brent`` register it for the kind; they differ
only in the 1-D search (:mod:`conicml.solvers._line_search`).

Kind ``"sequential.m4"`` (:func:`conicml.formulations.m4.m4` with a ``C``), seed 004
Sec. 4.1.3 (errata S004-A6). :math:`G(\rho) = \rho - C\,h(\rho)` need not be concave, so
the result is a local maximum. It stops when the ρ bracket is below
:math:`\texttt{tol}\cdot\max(1, \kappa^*_{MPM})`; the algorithm and the certificate are in
the Notes of :func:`solve_soft_m4`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..exceptions import OptionError
from ..program import Program
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._line_search import METHODS, maximize
from ._m4_inner import InnerMemo, InnerSolver, _InnerFailure, point
from ._options import check_scalar
from ._slope_search import NoSlope, maximize_with_slope

#: The 1-D searches of :func:`solve_soft_m4`: those on values and the one with slopes.
SEARCHES = (*METHODS, "envelope-newton")

__all__ = ["SEARCHES", "STATUS_MAP", "TERMINATION_MESSAGES", "envelope_slope", "solve_soft_m4"]

TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: rho bracket width <= tol * max(1, kappa_mpm)", {
        Reason.MAX_ITER: "maximum number of SOCP solves reached (max_iter)",
        4: "an inner SOCP solve failed",
        6: "unbounded: sigma_x + sigma_y = 0 on w^T d = 1, the covariances are singular "
           "(raise reg)",
    })

STATUS_MAP: dict[int, Status] = status_table({4: Status.SOLVER_ERROR, 6: Status.UNBOUNDED})


class _Stop(Exception):
    pass


def envelope_slope(m4: Any, sol: Solution, w: np.ndarray) -> float:
    r""":math:`h'(\rho)` by the envelope theorem from the inner slack SOCP's multipliers.

    The Lagrangian of :math:`h(\rho) = \min\sum\xi` s.t.
    :math:`y_kf_k - \rho s_{y_k} + \xi_k \ge 0` (multipliers :math:`\lambda_k \in [0,1]`)
    and, reduced, :math:`1 - \rho(s_x + s_y) + \xi_m \ge 0` (:math:`\lambda_m`) depends on
    :math:`\rho` only through :math:`+\rho\sum_k\lambda_ks_{y_k}` (+
    :math:`\rho\lambda_m(s_x+s_y)`), so
    :math:`h'(\rho) = \Lambda_x\sigma_x(w) + \Lambda_y\sigma_y(w) + \lambda_m(\sigma_x+\sigma_y)`
    (:math:`\Lambda` a class's multiplier sum; :math:`\Lambda_x = \Lambda_y` by
    stationarity in :math:`b`), where the multipliers are unique; ``nan`` when the backend
    returned none. ``w`` is normalised (:math:`w^\top d = 1`, as the SOCP's).
    """
    s_pos, s_neg = m4.sigmas(w)
    total = 0.0
    for name, sigma in (("margin_pos", s_pos), ("margin_neg", s_neg),
                        ("global", s_pos + s_neg)):
        if name == "global" and m4.reduction is None:
            continue
        if name != "global" and not np.any(m4.kept & ((m4.y > 0) == (name == "margin_pos"))):
            continue
        lam = sol.duals.get(name)
        if lam is None:
            return math.nan
        total += float(np.sum(lam)) * sigma
    return total


def solve_soft_m4(
    program: Program,
    *,
    solver: str,
    method: str,
    tol: float = 1e-8,
    max_iter: int = 60,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: float | None = None,
    inner: str = "clarabel",
    inner_options: Mapping[str, Any] | None = None,
    inner_memo: InnerMemo | None = None,
) -> Solution:
    r"""Soft-margin M4 by a line search over ρ.

    Parameters
    ----------
    program : Program
        Kind ``"sequential.m4"`` (:func:`conicml.formulations.m4.m4` with ``C``).
    solver : str
        Registry name reported in the solution and in messages.
    method : {"quadratic-interpolation", "brent", "envelope-newton"}
        The 1-D search; ``"envelope-newton"``: the safeguarded secant on
        :math:`G'(\rho) = 1 - C\,h'(\rho)` with :math:`h'` from the inner multipliers
        (:func:`envelope_slope`, :mod:`conicml.solvers._slope_search`).
    tol : float, default=1e-8
        Relative tolerance on the final ρ bracket: width
        :math:`\le \texttt{tol}\cdot\max(1, \kappa^*_{MPM})`.
    max_iter : int, default=60
        Largest number of slack SOCPs (evaluations of :math:`G`).
    time_limit : float, optional
        Seconds; the best point so far is returned with USER_LIMIT.
    verbose : bool, default=False
        Print one line per evaluation.
    callback : callable, optional
        ``callback(intermediate_result)`` after each evaluation (``objective`` is
        :math:`G(\rho)`, ``values`` holds ``w``, ``b``, ``rho``); raise
        ``StopIteration`` to stop.
    x0 : float, optional
        Initial middle point of the pattern.
    inner : {"clarabel", "ecos", "scs", "m4-ipm", "auto"}, default="clarabel"
        Backend of the inner SOCPs: a generic one, or ``"m4-ipm"``, the structured
        interior-point method of the slack SOCP (:mod:`conicml.solvers._m4_ipm`; the
        MPM bound then by ``ils-newton``); ``"auto"`` is ``"m4-ipm"``.
    inner_options : dict, optional
        Options of that backend.
    inner_memo : InnerMemo, optional
        The ``extras["inner_memo"]`` of a search on a program with the same factors at
        another C (:func:`conicml.formulations.m4.with_cost`): its fixed-ρ solutions and
        MPM bound, which do not depend on C, are read instead of solved again
        (:class:`~conicml.solvers._m4_inner.InnerMemo`; a memo of other factors, backend
        or options is not read). A path over C passes it on (:func:`conicml.solve_path`).

    Returns
    -------
    Solution
        ``values = {"w", "b", "rho"}``, ``objective`` :math:`= G(\rho^*)`;
        ``extras["inner_memo"]`` the memo this search read and filled,
        ``extras["inner_reused"]`` the solutions it read from it.

    Notes
    -----
    **Algorithm** (seed 004 Sec. 4.1.3, errata S004-A6). Maximise

    .. math::

        G(\rho) = \rho - C\,h(\rho),\qquad
        h(\rho) = \min_{w^\top d = 1,\, b,\, \xi \ge 0}\ \sum_k\xi_k\ (+ (N-r)\,\xi_m)

    over :math:`\rho \in [0, \kappa^*_{MPM}]` (the domain is discussed in
    :mod:`conicml.formulations.m4`), where each :math:`h(\rho)` is the program's
    fixed-ρ slack SOCP (DPP, ``cp.Parameter`` ``rho``, compiled once and re-solved
    by the backend ``inner``). The 1-D search (option ``method``) is the
    thesis's quadratic-interpolation line search,
    :func:`conicml.solvers.quadratic_interpolation.line_search` (both domain ends
    evaluated, parabola steps with golden-section safeguards, errata S004-A4),
    or ``"brent"``: both ends, then Brent's bounded method (parabolic
    interpolation safeguarded by golden-section steps; Brent 1973, *Algorithms
    for Minimization without Derivatives*, ch. 5) via
    :func:`scipy.optimize.minimize_scalar`. :math:`G` need not be concave
    (errata S004-A6), so the result is a local maximum of :math:`G`; the thesis claims
    convergence "to the global optimum if suitable starting points are assigned".

    **Stopping criterion:** final ρ bracket (Brent: interval of uncertainty)
    below :math:`\texttt{tol}\cdot\max(1, \kappa^*_{MPM})` (absolute, in ρ),
    or ``max_iter`` SOCP solves.

    **Objective** (kind ``"sequential.m4"``): :math:`G(\rho^*) = \rho^* -
    C\sum\xi` with the slacks recomputed exactly at the returned :math:`(w, b)`
    (:func:`conicml.formulations.m4.slack_total`).

    **Certificate:** ``Residuals(primal=`` :math:`|w^\top d - 1|` ``, dual=`` the
    largest residual of the inner solve at :math:`\rho^*` ``, gap=`` final
    bracket width ``)``; ``extras["inner_solves"]`` counts the SOCPs (the MPM
    bound included), ``extras["ipm_steps"]`` the interior-point steps of ``m4-ipm``.

    **Warm-start:** ``x0`` is the initial middle point of the pattern; ``inner_memo``
    the fixed-ρ solutions of a search at another C.
    """
    driver = Driver(solver, tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback,
                    legacy=lambda r: (float(r.values["rho"]), r.objective))
    x0 = check_scalar(solver, "x0", x0, low=0.0)
    if inner_memo is not None and not isinstance(inner_memo, InnerMemo):
        raise OptionError(f"{solver}: inner_memo must be the extras['inner_memo'] of an "
                          f"earlier search, got {type(inner_memo).__name__}")
    if method not in SEARCHES:
        raise OptionError(f"{solver}: method must be one of {', '.join(SEARCHES)}, "
                          f"got {method!r}")
    if max_iter < 3:
        raise OptionError(f"{solver}: max_iter must be at least 3 (both ends and a midpoint), "
                          f"got {max_iter!r}")
    data = program.data
    C = float(data["C"])
    checker = InnerSolver(program, inner, inner_options, rebuild=False, memo=inner_memo)
    _ = program.form
    setup_time = driver.elapsed  # the time limit counts from the start, setup included
    evals: dict[float, tuple[np.ndarray, float, float, Solution]] = {}
    state: dict[str, Any] = {"reason": 0, "failure": None}
    kappa = math.nan

    slopes: dict[float, float] = {}

    def G(rho: float) -> float:
        if driver.out_of_time():
            state["reason"] = int(Reason.TIME_LIMIT)
            raise _Stop
        sol = checker.check(rho)
        w, b = point(sol)
        w, b = w / float(data["d"] @ w), b / float(data["d"] @ w)
        slack = data["m4"].slack_total(w, b, rho)
        value = rho - C * slack
        evals[rho] = (w, b, value, sol)
        if method == "envelope-newton":  # the value-only searches need no slope
            # h is non-decreasing in rho >= 0 (every row tightens), so a point with zero
            # recomputed slack certifies h = 0 on [0, rho]: G = rho there and no local
            # maximum lies to the left; its left slope is exactly 1 (the multipliers of an
            # interior-point solve are noisy at the kink where h leaves 0)
            slopes[rho] = (1.0 if slack == 0.0
                           else 1.0 - C * envelope_slope(data["m4"], sol, w))
        if verbose:
            print(f"  {solver}: rho={rho:.10f} G={value:.10f} "
                  f"G'={slopes.get(rho, math.nan):.3e} h={sol.objective:.6e}")
        if driver.listening and driver.notify(
                len(evals), objective=value,
                values={"w": w, "b": np.array(b), "rho": np.array(rho)}):
            state["reason"] = int(Reason.CALLBACK)
            raise _Stop
        return value

    bracket, converged = (math.nan, math.nan), False
    try:
        kappa, _ = checker.kappa_mpm()
        if math.isinf(kappa):
            state["reason"] = 6
        else:
            try:
                if method == "envelope-newton":
                    separable = data["m4"].strictly_separable()
                    try:
                        # G(0) = -C h(0) <= 0: a local maximum at kappa with G >= 0 needs
                        # no evaluation at 0
                        *_, bracket, converged = maximize_with_slope(
                            lambda r: (G(r), slopes[r]), 0.0, kappa,
                            tol=tol * max(1.0, kappa), max_iter=max_iter, x0=x0,
                            lo_bound=0.0,
                            # a slack certified zero next to 0: G(0) = 0, G'(0+) = 1
                            # without a solve
                            lo_known=(0.0, 1.0) if separable else None,
                            # with both ends' values and slopes known, the first interior
                            # point from their cubic (kernel programs)
                            first="hermite" if separable else "tangent",
                            # a zero slack certifies G = rho up to that point
                            lo_piece=True,
                            # G <= rho <= kappa: values closer than this are inner-solve
                            # noise (the slope decides): near a flat maximum the inner
                            # solves' values differ by ~1e-12 and would overrule the slopes
                            value_tol=1e-9 * max(1.0, kappa))
                    except NoSlope:  # no multipliers from the inner backend: on values
                        method = "quadratic-interpolation"
                        *_, bracket, converged = maximize(
                            G, 0.0, kappa, tol=tol * max(1.0, kappa),
                            max_iter=max(3, max_iter - len(evals)), x0=x0, method=method)
                else:
                    *_, bracket, converged = maximize(
                        G, 0.0, kappa, tol=tol * max(1.0, kappa), max_iter=max_iter, x0=x0,
                        method=method)
            except _Stop:
                pass
    except _InnerFailure as exc:
        state["reason"], state["failure"] = 4, exc.solution
    reason = state["reason"]
    solve_time = driver.elapsed - setup_time
    message = TERMINATION_MESSAGES[reason]
    if state["failure"] is not None:
        message += f" ({checker.inner}: {state['failure'].message})"
    width = bracket[1] - bracket[0]
    if reason == 0 and not converged:
        reason = 1
        message = TERMINATION_MESSAGES[reason]
    extras = {"inner": checker.inner, "inner_fallbacks": checker.fallbacks,
              "ipm_steps": checker.ipm_steps,
              "inner_solves": checker.solves, "inner_time": checker.time,
              "inner_memo": checker.memo, "inner_reused": checker.reused,
              "kappa_mpm": kappa, "bracket": bracket, "method": method}
    if not evals or reason == 6:
        return Solution(status=STATUS_MAP[reason], solver=solver,
                        setup_time=setup_time, solve_time=solve_time, message=message,
                        extras=extras)
    rho = max(evals, key=lambda r: evals[r][2])
    w, b, value, sol = evals[rho]
    extras["at_domain_end"] = bool(rho >= kappa or rho <= 0.0)
    return Solution(
        status=STATUS_MAP[reason],
        solver=solver,
        objective=value,
        values={"w": w, "b": np.array(b), "rho": np.array(rho)},
        iterations=len(evals),
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=abs(float(data["d"] @ np.asarray(sol.values["w"])) - 1.0),
                            dual=sol.residuals.max(), gap=width, source="solver"),
        message=message,
        history=tuple((r, evals[r][2]) for r in evals),
        extras=extras,
    )
