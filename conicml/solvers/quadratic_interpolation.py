r"""``quadratic-interpolation``: the thesis's line search, for MEMPM over β and soft M4 over ρ.

The 1-D search is :func:`conicml.solvers._line_search.line_search` (seed 004
Sec. 3.2.4, Fig. 3.2: parabola through a three-point pattern, with both domain
ends evaluated and golden-section safeguards). It converges to a *local*
maximum (for MEMPM a global certificate then bounds the rest). It stops when the relative bracket
width is at most ``tol``; the two kinds, the certificate and the stopping rule are in
the Notes of :func:`solve_quadratic_interpolation`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from .. import kinds
from ..exceptions import OptionError
from ..program import Program
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._line_search import StopSearch, line_search
from ._m4_inner import InnerMemo
from ._m4_search import solve_soft_m4
from ._options import check_scalar
from ._warm import m4_rho

__all__ = ["TERMINATION_MESSAGES", "solve_quadratic_interpolation"]

#: Stop reason -> message; 0 is convergence, every other reason is a user limit.
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: bracket width x3 - x1 <= tol", {
        Reason.MAX_ITER: "maximum number of function evaluations reached (max_iter)",
        4: "too many inner BMPM solves failed (max_failures)",
    })

STATUS_MAP: dict[int, Status] = status_table({4: Status.SOLVER_ERROR})


def _accuracy(kappa: np.ndarray, bound: str) -> np.ndarray:
    r"""Accuracy of a (clipped) kappa: :math:`\kappa^2/(1+\kappa^2)` or :math:`\Phi(\kappa)`."""
    kappa = np.maximum(kappa, 0.0)
    if bound == "chebyshev":
        with np.errstate(invalid="ignore"):
            out = kappa * kappa / (1.0 + kappa * kappa)
        return np.where(np.isinf(kappa), 1.0, out)
    return ndtr(kappa)


def _kappa(p: float, bound: str) -> float:
    r""":math:`\kappa(p)`: :math:`\sqrt{p/(1-p)}` (Chebyshev) or :math:`\Phi^{-1}(p)`."""
    if bound == "chebyshev":
        return math.inf if p >= 1.0 else math.sqrt(max(p, 0.0) / (1.0 - p))
    return float(ndtri(p))


def _upper_bound(mempm: Any, alphas: Mapping[float, float],
                 pieces: int = 2048) -> tuple[float, float]:
    r"""A certified upper bound on :math:`\max_\beta F(\beta)` from evaluated points.

    In :math:`t = \kappa(\beta)`, :math:`g(t) = \max(\kappa_\alpha, 0)` is
    :math:`\max_w (1 - (t + \nu_y)\sigma_y(w))/\sigma_x(w) - \nu_x` clipped at 0: a
    maximum of affine functions of :math:`t`, hence **convex** (and non-increasing).
    Between two evaluated points :math:`g` lies below its chord, so on a piece
    :math:`[s_j, s_{j+1}]` of that interval
    :math:`F \le \theta A(\mathrm{chord}(s_j)) + (1-\theta)B(s_{j+1})`, with
    :math:`A, B` the increasing maps from :math:`\kappa` to accuracy. Returns the
    largest such bound and the :math:`\beta` where it is attained (the next point to
    evaluate). ``alphas`` maps evaluated :math:`\beta` to :math:`\alpha^*(\beta)`; each
    :math:`g` is raised by :math:`10^{-9}(1 + g)` for the inner solver's accuracy.
    """
    bound, theta = mempm.bound, float(mempm.theta)
    floor = mempm.alpha_floor
    pts = sorted((b, a) for b, a in alphas.items() if math.isfinite(a))
    t = np.array([_kappa(b, bound) for b, _ in pts])
    g = np.array([_kappa(a, bound) if a > floor else 0.0 for _, a in pts])
    g = np.maximum(g, 0.0) * (1.0 + 1e-9) + 1e-9
    ok = np.flatnonzero(t[1:] > t[:-1])
    if ok.size == 0:
        return -math.inf, math.nan
    t0, t1, g0, g1 = t[ok], t[ok + 1], g[ok], g[ok + 1]
    frac = np.linspace(0.0, 1.0, pieces + 1)[None, :]
    with np.errstate(invalid="ignore"):
        s_ = t0[:, None] + frac * (t1 - t0)[:, None]
        chord = g0[:, None] + (g1 - g0)[:, None] * frac
    chord = np.where(np.isinf(g0)[:, None] | np.isinf(g1)[:, None], np.inf, chord)
    u = theta * _accuracy(chord[:, :-1], bound) + (1.0 - theta) * _accuracy(s_[:, 1:], bound)
    i, j = np.unravel_index(int(np.argmax(u)), u.shape)
    beta = float(_accuracy(np.array(0.5 * float(s_[i, j] + s_[i, j + 1])), bound))
    return float(u[i, j]), beta


def _check_options(x0: Any, gap_tol: Any, max_certify: Any, max_failures: Any) -> Any:
    """Check the MEMPM search's own options; return ``x0`` checked."""
    x0 = check_scalar("quadratic-interpolation", "x0", x0)
    if not (isinstance(gap_tol, (int, float)) and math.isfinite(gap_tol) and gap_tol > 0):
        raise OptionError(f"gap_tol must be positive and finite, got {gap_tol!r}")
    if isinstance(max_certify, bool) or not isinstance(max_certify, (int, np.integer)) \
            or max_certify < 0:
        raise OptionError(f"max_certify must be a non-negative integer, got {max_certify!r}")
    if int(max_failures) != max_failures or max_failures < 0:
        raise OptionError(f"max_failures must be a non-negative integer, got {max_failures!r}")
    return x0


def _certify_globally(mempm: Any, evals: dict, F: Callable[[float], float], gap_tol: float,
                      max_certify: int, lo: float, hi: float) -> tuple[float, bool, int]:
    """The global certificate over :math:`\\beta` (Notes of
    :func:`solve_quadratic_interpolation`): evaluate ``F`` where the convexity bound of
    :func:`_upper_bound` exceeds the best value by more than ``gap_tol``, at most
    ``max_certify`` times. Returns ``(upper bound, certified, extra evaluations)``."""
    upper, extra_evals = math.nan, 0
    try:
        for _ in range(max_certify + 1):
            alphas = {b: a for b, (a, _, _) in evals.items()}
            upper, beta_next = _upper_bound(mempm, alphas)
            best = max(mempm.value(b, a) for b, a in alphas.items())
            if upper <= best + gap_tol:
                return upper, True, extra_evals
            if extra_evals >= max_certify or not math.isfinite(beta_next) \
                    or beta_next in evals:
                break
            extra_evals += 1
            F(min(max(beta_next, lo), hi))
    except StopSearch:
        pass
    return upper, False, extra_evals


@register("quadratic-interpolation", kinds=[kinds.MEMPM, kinds.M4_SOFT],
          description="1-D quadratic-interpolation search: MEMPM over beta, soft M4 over rho",
          warm_start=m4_rho,
          certify_tol=1e-4)  # point from an interior-point inner solve
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
    gap_tol: float = 1e-6,
    max_certify: int = 200,
    inner_memo: InnerMemo | None = None,
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
    gap_tol : float, default=1e-6
        Global certificate: ``OPTIMAL`` only when the convexity upper bound on
        :math:`\max_\beta F` (Notes) is within ``gap_tol`` of the
        returned :math:`F` (up to the inner solver's accuracy); otherwise
        ``OPTIMAL_INACCURATE`` with the bound in the message.
    max_certify : int, default=200
        Extra BMPM solves the certificate may spend refining the bound (at the
        β where it is largest, so they also find a better maximum when the local
        search stopped at a local one).
    inner_memo : InnerMemo, optional
        Soft M4 only: the fixed-ρ solutions of a search at another C on the same factors
        (:func:`conicml.solvers._m4_search.solve_soft_m4`).

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
    solve at :math:`\beta^*` ``, gap=`` the certified bound on
    :math:`\max F - F(\beta^*)` ``)``.

    **Global certificate** (the line search alone is local and would return ``OPTIMAL`` at
    local maxima). In :math:`t = \kappa(\beta)` the inner optimum
    :math:`\kappa_\alpha(t) = \max_w (1 - (t+\nu_y)\sigma_y(w))/\sigma_x(w) - \nu_x` is a
    maximum of affine functions of :math:`t`, hence convex: between two evaluated
    points it lies below the chord, which bounds :math:`F` above on every interval.
    After the line search, BMPM solves are added where that bound is largest
    until it is within ``gap_tol`` of the best :math:`F` (the result is then a
    certified global maximum) or ``max_certify`` solves are spent (then
    ``OPTIMAL_INACCURATE``).

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
    from ..solving import solve  # late import: solving imports the registry

    if program.kind == kinds.M4_SOFT:
        return solve_soft_m4(
            program, solver="quadratic-interpolation", method="quadratic-interpolation",
            tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose,
            callback=callback, x0=x0, inner=inner, inner_options=inner_options,
            inner_memo=inner_memo)
    if inner_memo is not None:
        raise OptionError("quadratic-interpolation: inner_memo is an option of the soft-margin "
                          "M4 search (kind 'sequential.m4') only")

    data = program.data
    mempm = data["mempm"]
    inner_options = dict(inner_options or {})
    if not isinstance(inner, str):
        raise OptionError(f"inner must be a solver name, got {inner!r}")
    driver = Driver("quadratic-interpolation", tol=tol, max_iter=max_iter,
                    time_limit=time_limit, messages=TERMINATION_MESSAGES, statuses=STATUS_MAP,
                    callback=callback,
                    legacy=lambda r: (float(r.values["beta"]), r.objective))
    x0 = _check_options(x0, gap_tol, max_certify, max_failures)
    driver.start()
    lo, hi = mempm.beta_lo, mempm.beta_end
    if x0 is not None and not lo <= x0 <= hi:
        raise OptionError(f"quadratic-interpolation: x0 must lie in the beta domain "
                          f"[{lo:.6g}, {hi:.6g}], got {x0!r}")
    analytic_from = hi if mempm.beta_stop is None else mempm.beta_stop
    floor = mempm.alpha_floor
    w_end = mempm.endpoint_w
    evals: dict[float, tuple[float, np.ndarray, Solution | None]] = {}
    state: dict[str, Any] = {"reason": 0, "program": None, "failures": []}
    inner_iters = [0]

    def F(beta: float) -> float:
        if driver.out_of_time():
            state["reason"] = int(Reason.TIME_LIMIT)
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
                # the program's internal coordinates (the decoded model["w"] is mapped
                # back to the user's feature scale; mempm_model expects internal ones)
                w = np.asarray(sol.values["w"] if "w" in sol.values else sol.values["v"],
                               dtype=float)
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
        if driver.listening and driver.notify(
                len(evals), objective=value,
                values={"beta": np.array(beta), "w": np.asarray(w, dtype=float)}):
            state["reason"] = int(Reason.CALLBACK)
            raise StopSearch(3)
        return value

    res = line_search(F, lo, hi, tol=tol, max_iter=max_iter, maximize=True, x0=x0)
    # global certificate over beta (a local search can stop at a local maximum): refine
    # where the convexity bound of
    # _upper_bound exceeds the best value by more than gap_tol
    upper, certified, extra_evals = math.nan, False, 0
    if state["reason"] == 0 and evals:
        upper, certified, extra_evals = _certify_globally(mempm, evals, F, gap_tol,
                                                          max_certify, lo, hi)
    reason = state["reason"]
    message = TERMINATION_MESSAGES[reason]
    failures = state["failures"]
    if failures:
        message += (f"; {len(failures)} inner BMPM solve(s) failed and were treated as "
                    f"F = -inf (first at beta = {failures[0][0]:.6g}: {inner}: "
                    f"{failures[0][1].message})")
    if not evals:
        return Solution(status=STATUS_MAP[reason], solver="quadratic-interpolation",
                        solve_time=driver.elapsed, message=message)
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
    best_value = float(mempm.value(beta, alpha))
    global_gap = upper - best_value if math.isfinite(upper) else math.nan
    if status is Status.OPTIMAL and not certified:
        status = Status.OPTIMAL_INACCURATE
        message = (f"not certified globally: the convexity bound over beta allows "
                   f"F <= {upper:.8g}, {global_gap:.3g} above the best F = {best_value:.8g} "
                   f"(gap_tol {gap_tol:g}) after {extra_evals} extra BMPM solves "
                   f"(max_certify); {message}")
    return Solution(
        status=status,
        solver="quadratic-interpolation",
        objective=float(mempm.value(beta, alpha)),
        values={"beta": np.array(beta), "w": np.asarray(w, dtype=float)},
        iterations=len(evals),
        solve_time=driver.elapsed,
        residuals=Residuals(
            primal=model["b_mismatch"],
            dual=sol.residuals.max() if sol is not None else 0.0,
            gap=global_gap if math.isfinite(global_gap) else width,
            source="solver",
        ),
        message=message,
        history=tuple((b, mempm.value(b, a)) for b, (a, _, _) in evals.items()),
        extras={"inner": inner, "inner_solves": sum(s is not None for _, _, s in evals.values()),
                "inner_iterations": inner_iters[0], "alpha": alpha,
                "at_domain_end": bool(beta >= hi), "inner_failures": len(failures),
                "upper_bound": upper, "certified": certified,
                "certify_solves": extra_evals, "bracket_width": width},
    )
