r"""``quadratic-interpolation``: the thesis's 1-D line search, and MEMPM by sequential BMPM.

**Line search** (:func:`line_search`; seed 004 Sec. 3.2.4, Fig. 3.2, note A4;
Bertsekas, *Nonlinear Programming*, §1.8). A three-point pattern
:math:`x_1 < x_2 < x_3` with :math:`f_2 \ge \max(f_1, f_3)` (maximisation) is
updated with the vertex of the interpolating parabola

.. math::

    x_{new} = x_2 - \frac12\,
    \frac{(x_2-x_1)^2(f_2-f_3) - (x_2-x_3)^2(f_2-f_1)}
         {(x_2-x_1)(f_2-f_3) - (x_2-x_3)(f_2-f_1)},

and the new pattern is :math:`x_{new}` plus two old points (the note's rule).
Safeguards the thesis leaves out (note §6 item 17): the function is first
evaluated at **both domain ends**; if the pattern condition fails, the search
shrinks toward the better end (so a maximum *at* an end, e.g. MEMPM on Pima
where the optimum is :math:`\beta = \beta_{0m}`, is found); a **golden-section
step** into the larger sub-interval replaces the parabola step when the
denominator vanishes, the vertex falls outside :math:`(x_1, x_3)`, or the
bracket has not shrunk below 0.7 of its width two steps earlier; once the
vertex falls within ``tol``/2 of :math:`x_2` the points :math:`x_2 \pm`
``tol``/2 are probed, which collapses the bracket. The search converges to a *local* maximum.

**Stopping criterion:** bracket width :math:`x_3 - x_1 \le \texttt{tol}`
(absolute), or ``max_iter`` function evaluations. The best evaluated point
(ends included) is returned.

**MEMPM** (kind ``"sequential.mempm"``, :func:`solve_quadratic_interpolation`):
the line search maximises :math:`F(\beta) = \theta\,\alpha^*(\beta) +
(1-\theta)\beta` over :math:`[\beta_{lo}, \beta_{0m}]`, where each evaluation
solves the BMPM program :math:`\beta_0 = \beta` with the solver named by
``inner`` (any solver accepting ``"socp.bmpm"``: ``clarabel``, ``ecos``,
``scs``, ``rosen``, ``dinkelbach``). At :math:`\beta_{0m}` (and wherever the
inner BMPM is infeasible) :math:`\alpha` is clipped to its floor (eq. 3.40)
and :math:`w \propto \Sigma_y^{-1}d`. The thesis reports 5–15 BMPM solves
per MEMPM (Sec. 3.8). Certificate: ``Residuals(primal=`` mismatch of the two
intercept formulas (Lemma 4) ``, dual=`` largest residual of the inner BMPM
solve at :math:`\beta^*` ``, gap=`` final bracket width ``)``.

**Warm-start:** ``x0`` is the initial middle point :math:`\beta_2` of the pattern.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from ..exceptions import OptionError
from ..formulations import minimax as mm
from ..program import Program
from ..registry import register
from ..solution import Residuals, Solution, Status

__all__ = ["GOLDEN", "TERMINATION_MESSAGES", "LineSearchResult", "line_search",
           "solve_quadratic_interpolation"]

GOLDEN = (3.0 - math.sqrt(5.0)) / 2.0  # 0.381966...

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


class LineSearchResult(NamedTuple):
    """Result of :func:`line_search`; unpacks as ``x, fun, n_evals, history``.

    ``history`` holds one ``(x, f(x), x1, x3)`` record per evaluation, with the
    bracket :math:`[x_1, x_3]` known after it.
    """

    x: float
    fun: float
    n_evals: int
    history: tuple[tuple[float, float, float, float], ...]

    @property
    def bracket(self) -> tuple[float, float]:
        """Final bracket :math:`(x_1, x_3)`."""
        return (self.history[-1][2], self.history[-1][3]) if self.history else (math.nan,) * 2


class _Stop(Exception):
    """Raised by an objective to end the search early (reason code in ``args[0]``)."""


def line_search(
    f: Callable[[float], float],
    lo: float,
    hi: float,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
    maximize: bool = True,
    x0: float | None = None,
) -> LineSearchResult:
    r"""Maximise (or minimise) a 1-D function on :math:`[lo, hi]` by quadratic interpolation.

    See the module docstring for the pattern update and the safeguards.

    Parameters
    ----------
    f : callable
        ``f(x) -> float``, defined on the closed interval (both ends are
        evaluated). ``nan`` is treated as :math:`-\infty` (maximisation).
        ``f`` may raise any exception to abort; it propagates.
    lo, hi : float
        Domain, ``lo < hi``.
    tol : float, default=1e-8
        Absolute tolerance on the final bracket width.
    max_iter : int, default=100
        Largest number of evaluations of ``f`` (ends included), at least 3.
    maximize : bool, default=True
        Maximise ``f``; ``False`` minimises it.
    x0 : float, optional
        Initial middle point of the pattern (default: the midpoint).

    Returns
    -------
    LineSearchResult
        ``(x, fun, n_evals, history)``: the best evaluated point and value
        (in ``f``'s own sign), the number of evaluations, and the records.
    """
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise OptionError(f"line_search needs finite lo < hi, got [{lo}, {hi}]")
    if not tol > 0:
        raise OptionError(f"tol must be positive, got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 3:
        raise OptionError(f"max_iter must be an integer >= 3, got {max_iter!r}")
    sign = 1.0 if maximize else -1.0
    history: list[tuple[float, float, float, float]] = []
    cache: dict[float, float] = {}
    bracket = [lo, hi]

    def g(x: float) -> float:
        if x in cache:
            return cache[x]
        if len(history) >= max_iter:
            raise _Stop(1)
        val = float(f(x))
        cache[x] = -math.inf if math.isnan(val) else sign * val
        history.append((x, val, bracket[0], bracket[1]))
        return cache[x]

    def result() -> LineSearchResult:
        if history:  # record the final bracket on the last entry
            x, val, _, _ = history[-1]
            history[-1] = (x, val, bracket[0], bracket[1])
        if not cache:
            return LineSearchResult(math.nan, math.nan, 0, ())
        best = max(cache, key=lambda x: cache[x])
        return LineSearchResult(best, sign * cache[best], len(history), tuple(history))

    try:
        x1, x3 = lo, hi
        g1, g3 = g(x1), g(x3)
        x2 = 0.5 * (lo + hi) if x0 is None or not lo < x0 < hi else float(x0)
        g2 = g(x2)
        # establish the pattern g2 >= max(g1, g3), shrinking toward the better end
        while g2 < max(g1, g3) and x3 - x1 > tol:
            if g1 > g3:
                x3, g3 = x2, g2
                x2 = x1 + 0.2 * (x3 - x1)
            else:
                x1, g1 = x2, g2
                x2 = x3 - 0.2 * (x3 - x1)
            bracket[:] = [x1, x3]
            g2 = g(x2)
        widths = [2.0 * (x3 - x1), 2.0 * (x3 - x1)]  # the first step may use the parabola
        while x3 - x1 > tol:
            bracket[:] = [x1, x3]
            num = (x2 - x1) ** 2 * (g2 - g3) - (x2 - x3) ** 2 * (g2 - g1)
            den = (x2 - x1) * (g2 - g3) - (x2 - x3) * (g2 - g1)
            xn = x2 - 0.5 * num / den if den != 0 else math.nan
            if math.isfinite(xn) and x1 < xn < x3 and abs(xn - x2) < 0.5 * tol:
                # the parabola has converged onto x2: probe x2 +- tol/2 on the wider side
                # (the next step probes the other one), which collapses the bracket
                xn = x2 + 0.5 * tol if x3 - x2 >= x2 - x1 else x2 - 0.5 * tol
            elif not (math.isfinite(xn) and x1 < xn < x3) or widths[-2] * 0.7 < x3 - x1:
                # no usable vertex, or the bracket shrinks too slowly: golden-section step
                xn = x2 + GOLDEN * (x3 - x2) if x3 - x2 >= x2 - x1 else x2 - GOLDEN * (x2 - x1)
            if xn in cache or not x1 < xn < x3:  # no new information: golden step
                xn = x2 + GOLDEN * (x3 - x2) if x3 - x2 >= x2 - x1 else x2 - GOLDEN * (x2 - x1)
                if xn in cache or not x1 < xn < x3:
                    break  # the bracket cannot be split further in floating point
            gn = g(xn)
            if xn > x2:
                if gn >= g2:
                    x1, g1, x2, g2 = x2, g2, xn, gn
                else:
                    x3, g3 = xn, gn
            else:
                if gn >= g2:
                    x3, g3, x2, g2 = x2, g2, xn, gn
                else:
                    x1, g1 = xn, gn
            widths.append(x3 - x1)
            widths.pop(0)
        bracket[:] = [x1, x3]
    except _Stop:
        pass
    return result()


def _endpoint_w(data: Mapping[str, Any]) -> np.ndarray:
    r""":math:`w \propto \Sigma_y^{-1} d` (the only hyperplane at :math:`\beta = \beta_{0m}`)."""
    Ry, d = data["Ry"], data["d"]
    w = np.linalg.lstsq(Ry.T @ Ry, d, rcond=None)[0]
    return w / float(d @ w)


@register("quadratic-interpolation", kinds=["sequential.mempm", "sequential.m4"],
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
    callback: Callable[[float, float], Any] | None = None,
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
        ``callback(beta, F)`` after each evaluation; returning ``True`` stops.
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
    runs over :math:`\rho` through
    :func:`conicml.solvers.m4_line_search.solve_m4_line_search` with
    ``method="quadratic-interpolation"``; ``tol`` is then the *relative*
    tolerance on the :math:`\rho` bracket and ``max_failures`` does not apply.
    """
    from ..solving import solve  # late import: solving imports the registry

    if program.kind == "sequential.m4":
        from .m4_line_search import solve_m4_line_search

        solution = solve_m4_line_search(
            program, tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose,
            callback=callback, x0=x0, inner=inner, inner_options=inner_options,
            method="quadratic-interpolation")
        return dataclasses.replace(solution, solver="quadratic-interpolation")

    data = program.data
    inner_options = dict(inner_options or {})
    if not isinstance(inner, str):
        raise OptionError(f"inner must be a solver name, got {inner!r}")
    if time_limit is not None and not time_limit > 0:
        raise OptionError(f"time_limit must be positive, got {time_limit!r}")
    if int(max_failures) != max_failures or max_failures < 0:
        raise OptionError(f"max_failures must be a non-negative integer, got {max_failures!r}")
    start = time.perf_counter()
    lo, hi = float(data["beta_lo"]), float(data["beta_end"])
    stop = float(data.get("beta_stop", hi))  # analytic end point from here on
    floor = mm.accuracy_from_kappa(0.0, data["bound"])
    w_end = _endpoint_w(data)
    evals: dict[float, tuple[float, np.ndarray, Solution | None]] = {}
    state: dict[str, Any] = {"reason": 0, "program": None, "failures": []}
    inner_iters = [0]

    def F(beta: float) -> float:
        if time_limit is not None and time.perf_counter() - start > time_limit:
            state["reason"] = 2
            raise _Stop(2)
        sol = None
        if beta >= stop:
            alpha, w = floor, w_end
        else:
            prog = mm.inner_bmpm(data, beta)
            prev = state["program"]
            if prev is not None and prev._form is not None:
                # reuse the compiled cvxpy problem (DPP): only the parameter a_y changes
                prog._form = prev._form
                prog._form.parameters["a_y"].value = prog.data["a"][1]
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
                    raise _Stop(4)
                return -math.inf
        value = mm.mempm_value(data, beta, alpha)
        evals[beta] = (alpha, w, sol)
        if verbose:
            print(f"  quadratic-interpolation: beta={beta:.10f} alpha={alpha:.8f} F={value:.10f}")
        if callback is not None and callback(beta, value):
            state["reason"] = 3
            raise _Stop(3)
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
    beta = max(evals, key=lambda b: (mm.mempm_value(data, b, evals[b][0]), -abs(b - res.x)))
    alpha, w, sol = evals[beta]
    model = mm.mempm_model(data, beta, w)
    status = STATUS_MAP[reason]
    if failures and status is Status.OPTIMAL:
        status = Status.OPTIMAL_INACCURATE
    return Solution(
        status=status,
        solver="quadratic-interpolation",
        objective=float(mm.mempm_value(data, beta, alpha)),
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
        history=tuple((b, mm.mempm_value(data, b, a)) for b, (a, _, _) in evals.items()),
        extras={"inner": inner, "inner_solves": sum(s is not None for _, _, s in evals.values()),
                "inner_iterations": inner_iters[0], "alpha": alpha,
                "at_domain_end": bool(beta >= hi), "inner_failures": len(failures)},
    )
