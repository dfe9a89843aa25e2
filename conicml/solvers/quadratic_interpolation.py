r"""``quadratic-interpolation``: the thesis's line search, for MEMPM over β and soft M4 over ρ.

The 1-D search is :func:`conicml.solvers._line_search.line_search` (seed 004
Sec. 3.2.4, Fig. 3.2: parabola through a three-point pattern, with both domain
ends evaluated and golden-section safeguards). It converges to a *local*
maximum.

**MEMPM** (kind ``"sequential.mempm"``): the search maximises
:math:`F(\beta) = \theta\,\alpha^*(\beta) + (1-\theta)\beta` over
:math:`[\beta_{lo}, \beta_{0m}]`, where each evaluation solves the BMPM program
:math:`\beta_0 = \beta` (built by the program's
:class:`~conicml.contracts.minimax.MEMPMData`) with the solver named by
``inner`` (any solver accepting ``"socp.bmpm"``: ``clarabel``, ``ecos``,
``scs``, ``rosen``, ``dinkelbach``). At :math:`\beta_{0m}` (and wherever the
inner BMPM is infeasible) :math:`\alpha` is clipped to its floor (eq. 3.40)
and :math:`w \propto \Sigma_y^{-1}d`. The thesis reports 5–15 BMPM solves per
MEMPM (Sec. 3.8). Certificate: ``Residuals(primal=`` mismatch of the two
intercept formulas (Lemma 4) ``, dual=`` largest residual of the inner BMPM
solve at :math:`\beta^*` ``, gap=`` final bracket width ``)``.

**Soft-margin M4** (kind ``"sequential.m4"``): the search maximises
:math:`G(\rho) = \rho - C h(\rho)` over :math:`[0, \kappa^*_{MPM}]`
(:mod:`conicml.solvers._m4_search`).

**Stopping criterion** (both kinds): relative bracket width
:math:`x_3 - x_1 \le \texttt{tol}\cdot\max(1, x_{hi})` (for MEMPM
:math:`x_{hi} = \beta_{0m} \le 1`, so the width is at most ``tol``), or
``max_iter`` function evaluations. The best evaluated point (ends included)
is returned.

**Warm-start:** ``x0`` is the initial middle point of the pattern.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import kinds
from ..exceptions import OptionError
from ..program import Program
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback, IntermediateResult, stopper
from ._line_search import StopSearch, line_search
from ._m4_search import solve_soft_m4

__all__ = ["TERMINATION_MESSAGES", "solve_quadratic_interpolation"]

#: Stop reason -> message; 0 is convergence, every other reason is a user limit.
TERMINATION_MESSAGES: dict[int, str] = {
    0: "converged: bracket width x3 - x1 <= tol",
    1: "maximum number of function evaluations reached (max_iter)",
    2: "time limit reached (time_limit)",
    3: "stopped by the callback",
    4: "too many inner BMPM solves failed (max_failures)",
}

STATUS_MAP: dict[int, Status] = {0: Status.OPTIMAL, 1: Status.USER_LIMIT,
                                 2: Status.USER_LIMIT, 3: Status.USER_LIMIT,
                                 4: Status.SOLVER_ERROR}


@register("quadratic-interpolation", kinds=[kinds.MEMPM, kinds.M4_SOFT],
          description="1-D quadratic-interpolation search: MEMPM over beta, soft M4 over rho")
def solve_quadratic_interpolation(
    program: Program,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
    inner: str = "clarabel",
    inner_options: Mapping[str, Any] | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: float | None = None,
    max_failures: int = 3,
) -> Solution:
    r"""MEMPM by sequential BMPM with the quadratic-interpolation line search over β.

    Parameters
    ----------
    program : Program
        Kind ``"sequential.mempm"`` (:func:`conicml.formulations.minimax.mempm`).
    tol : float, default=1e-8
        Absolute tolerance on the final β bracket.
    max_iter : int, default=100
        Largest number of BMPM solves (evaluations of :math:`F`).
    inner : str, default="clarabel"
        Solver of the inner BMPM programs (kind ``"socp.bmpm"``).
    inner_options : dict, optional
        Options for the inner solver.
    time_limit : float, optional
        Seconds; the best point so far is returned with USER_LIMIT.
    verbose : bool, default=False
        Print one line per evaluation.
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (``objective`` is
        :math:`F(\beta)` or :math:`G(\rho)`, ``values`` the evaluated point);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    x0 : float, optional
        Initial middle point of the pattern (default: the midpoint of the domain).
    max_failures : int, default=3
        Inner BMPM solves that may fail (e.g. an interior-point solver near
        :math:`\beta_{0m}`, where the feasible set degenerates to a ray) before the
        search stops with SOLVER_ERROR; a failed point counts as
        :math:`F = -\infty` and the result is then OPTIMAL_INACCURATE, with the
        failures named in the message and in ``extras["inner_failures"]``.

    Returns
    -------
    Solution
        ``values = {"beta", "w"}``, ``objective`` :math:`= F(\beta^*)`,
        ``iterations`` = BMPM solves, ``extras["inner_solves"]``.

    Notes
    -----
    For a soft-margin M4 program (kind ``"sequential.m4"``) the same search
    runs over :math:`\rho` (:func:`conicml.solvers._m4_search.solve_soft_m4`);
    ``max_failures`` does not apply there.
    """
    from ..solving import solve  # late import: solving imports the registry

    if program.kind == kinds.M4_SOFT:
        return solve_soft_m4(
            program, solver="quadratic-interpolation", method="quadratic-interpolation",
            tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose,
            callback=callback, x0=x0, inner=inner, inner_options=inner_options)

    stop = stopper("quadratic-interpolation", callback,
                   legacy=lambda r: (float(r.values["beta"]), r.objective))
    data = program.data
    mempm = data["mempm"]
    inner_options = dict(inner_options or {})
    if not isinstance(inner, str):
        raise OptionError(f"inner must be a solver name, got {inner!r}")
    if time_limit is not None and not time_limit > 0:
        raise OptionError(f"time_limit must be positive, got {time_limit!r}")
    if int(max_failures) != max_failures or max_failures < 0:
        raise OptionError(f"max_failures must be a non-negative integer, got {max_failures!r}")
    start = time.perf_counter()
    lo, hi = mempm.beta_lo, mempm.beta_end
    analytic_from = hi if mempm.beta_stop is None else mempm.beta_stop
    floor = mempm.alpha_floor
    w_end = mempm.endpoint_w
    evals: dict[float, tuple[float, np.ndarray, Solution | None]] = {}
    state: dict[str, Any] = {"reason": 0, "program": None, "failures": []}
    inner_iters = [0]

    def F(beta: float) -> float:
        if time_limit is not None and time.perf_counter() - start > time_limit:
            state["reason"] = 2
            raise StopSearch(2)
        sol = None
        if beta >= analytic_from:  # the analytic end point (contract: beta_stop)
            alpha, w = floor, w_end
        else:
            # re-uses the previous inner program's compiled problem (DPP)
            prog = mempm.inner_bmpm(beta, state["program"])
            sol = solve(prog, inner, **inner_options)
            state["program"] = prog
            inner_iters[0] += sol.iterations
            if sol.status in (Status.INFEASIBLE, Status.INFEASIBLE_INACCURATE):
                alpha, w = floor, w_end  # eq. 3.40: alpha clipped at its floor
            elif sol.ok:
                model = prog.decode(sol)
                alpha = model["alpha"]
                w = model["w"] if "w" in model else model["v"]  # program coordinates
            else:  # no information at this beta: -inf for the search, reported below
                state["failures"].append((beta, sol))
                if len(state["failures"]) > max_failures:
                    state["reason"] = 4
                    raise StopSearch(4)
                return -math.inf
        value = mempm.value(beta, alpha)
        evals[beta] = (alpha, w, sol)
        if verbose:
            print(f"  quadratic-interpolation: beta={beta:.10f} alpha={alpha:.8f} F={value:.10f}")
        if stop is not None and stop(IntermediateResult(
                iteration=len(evals), objective=value, elapsed=time.perf_counter() - start,
                values={"beta": np.array(beta), "w": np.asarray(w, dtype=float)})):
            state["reason"] = 3
            raise StopSearch(3)
        return value

    res = line_search(F, lo, hi, tol=tol, max_iter=max_iter, maximize=True, x0=x0)
    reason = state["reason"]
    message = TERMINATION_MESSAGES[reason]
    failures = state["failures"]
    if failures:
        message += (f"; {len(failures)} inner BMPM solve(s) failed and were treated as "
                    f"F = -inf (first at beta = {failures[0][0]:.6g}: {inner}: "
                    f"{failures[0][1].message})")
    if not evals:
        return Solution(status=STATUS_MAP[reason], solver="quadratic-interpolation",
                        solve_time=time.perf_counter() - start, message=message)
    width = res.bracket[1] - res.bracket[0] if res.history else math.nan
    if reason == 0 and not width <= tol:
        reason = 1
        message = TERMINATION_MESSAGES[reason]
    # the best evaluated beta (an evaluation stopped by the callback/time limit counts too)
    beta = max(evals, key=lambda b: (mempm.value(b, evals[b][0]), -abs(b - res.x)))
    alpha, w, sol = evals[beta]
    model = mempm.model(beta, w)
    status = STATUS_MAP[reason]
    if failures and status is Status.OPTIMAL:
        status = Status.OPTIMAL_INACCURATE
    return Solution(
        status=status,
        solver="quadratic-interpolation",
        objective=float(mempm.value(beta, alpha)),
        values={"beta": np.array(beta), "w": np.asarray(w, dtype=float)},
        iterations=len(evals),
        solve_time=time.perf_counter() - start,
        residuals=Residuals(
            primal=model["b_mismatch"],
            dual=sol.residuals.max() if sol is not None else 0.0,
            gap=width,
            source="solver",
        ),
        message=message,
        history=tuple((b, mempm.value(b, a)) for b, (a, _, _) in evals.items()),
        extras={"inner": inner, "inner_solves": sum(s is not None for _, _, s in evals.values()),
                "inner_iterations": inner_iters[0], "alpha": alpha,
                "at_domain_end": bool(beta >= hi), "inner_failures": len(failures)},
    )
