"""Generic conic backends through cvxpy: ``clarabel``, ``ecos``, ``scs``, ``osqp``.

Algorithms: Clarabel (interior point, homogeneous embedding; Goulart & Chen
2024), ECOS (interior point; Domahidi, Chu & Boyd 2013), SCS (ADMM on the
homogeneous self-dual embedding; O'Donoghue et al. 2016), OSQP (ADMM for QPs;
Stellato et al. 2020). OSQP accepts QP kinds only; a second-order cone in a
program makes cvxpy reject it, which is reported as a :class:`SolverError`.

Common options (one meaning for all four; ``None`` keeps the backend default):

================  ============  =========  ================  ============
common            clarabel      ecos       scs               osqp
================  ============  =========  ================  ============
``eps_abs``       tol_gap_abs,  abstol,    eps_abs           eps_abs
                  tol_feas      feastol
``eps_rel``       tol_gap_rel   reltol     eps_rel           eps_rel
``max_iter``      max_iter      max_iters  max_iters         max_iter
``time_limit``    time_limit    --         time_limit_secs   time_limit
================  ============  =========  ================  ============

Native settings go in ``solver_options`` (a dict passed verbatim).

**Warm-start:** ``warm_start=True`` forwards cvxpy's warm start (SCS, OSQP);
the interior-point backends ignore it. ``parameters_from``: :func:`reuse_parameters`.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils.validation import plain
from ..exceptions import OptionError, ProgramError, SolverError
from ..program import Program
from ..registry import register
from ..solution import Residuals, Solution, Status

__all__ = ["STATUS_MAP", "reuse_parameters", "solve_with_cvxpy"]

#: cvxpy status string -> conicml Status (the values coincide by design).
STATUS_MAP: dict[str, Status] = {
    cp.OPTIMAL: Status.OPTIMAL,
    cp.OPTIMAL_INACCURATE: Status.OPTIMAL_INACCURATE,
    cp.INFEASIBLE: Status.INFEASIBLE,
    cp.INFEASIBLE_INACCURATE: Status.INFEASIBLE_INACCURATE,
    cp.UNBOUNDED: Status.UNBOUNDED,
    cp.UNBOUNDED_INACCURATE: Status.UNBOUNDED_INACCURATE,
    cp.USER_LIMIT: Status.USER_LIMIT,
    cp.SOLVER_ERROR: Status.SOLVER_ERROR,
}

# common option -> native setting name(s), per backend
_OPTION_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "clarabel": {
        "eps_abs": ("tol_gap_abs", "tol_feas"),
        "eps_rel": ("tol_gap_rel",),
        "max_iter": ("max_iter",),
        "time_limit": ("time_limit",),
    },
    "ecos": {
        "eps_abs": ("abstol", "feastol"),
        "eps_rel": ("reltol",),
        "max_iter": ("max_iters",),
    },
    "scs": {
        "eps_abs": ("eps_abs",),
        "eps_rel": ("eps_rel",),
        "max_iter": ("max_iters",),
        "time_limit": ("time_limit_secs",),
    },
    "osqp": {
        "eps_abs": ("eps_abs",),
        "eps_rel": ("eps_rel",),
        "max_iter": ("max_iter",),
        "time_limit": ("time_limit",),
    },
}

_CVXPY_NAMES = {"clarabel": cp.CLARABEL, "ecos": cp.ECOS, "scs": cp.SCS, "osqp": cp.OSQP}


def _backend_certificate(name: str, raw: Any) -> tuple[float, float, int | None]:
    """(dual residual, gap, iterations) from a backend's raw output."""
    nan = math.nan
    try:
        if name == "clarabel":
            gap = abs(raw.obj_val - raw.obj_val_dual)
            return float(raw.r_dual), float(gap), int(raw.iterations)
        if name == "ecos":
            info = raw["info"]
            return float(info["dres"]), abs(float(info["gap"])), int(info["iter"])
        if name == "scs":
            info = raw["info"]
            return float(info["res_dual"]), abs(float(info["gap"])), int(info["iter"])
        if name == "osqp":
            info = raw.info
            gap = getattr(info, "duality_gap", nan)
            return float(info.dual_res), abs(float(gap)), int(info.iter)
    except (AttributeError, KeyError, TypeError, ValueError):
        pass
    return nan, nan, None


def _backend_info(name: str, raw: Any) -> dict[str, Any]:
    """The backend's own report as a plain (picklable) dict, without the iterates."""
    if name == "clarabel":
        keys = ("status", "iterations", "obj_val", "obj_val_dual", "r_prim", "r_dual",
                "solve_time")
        return {k: (str(getattr(raw, k)) if k == "status" else getattr(raw, k, None))
                for k in keys}
    if name in ("ecos", "scs") and isinstance(raw, dict):
        return dict(raw.get("info", {}))
    if name == "osqp" and hasattr(raw, "info"):
        return {k: getattr(raw.info, k) for k in dir(raw.info)
                if not k.startswith("_") and isinstance(getattr(raw.info, k), (int, float, str))}
    return {}


def _dual_array(value: Any) -> np.ndarray:
    """A constraint's dual as one array; a cone's list of parts ``[t, x]`` is concatenated."""
    if isinstance(value, (list, tuple)):
        return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in value])
    return np.array(value, dtype=float)


def _primal_violation(problem: cp.Problem) -> float:
    worst = 0.0
    for constraint in problem.constraints:
        try:
            viol = constraint.violation()
        except (ValueError, TypeError):
            return math.nan
        if viol is None:
            return math.nan
        worst = max(worst, float(np.max(np.atleast_1d(viol), initial=0.0)))
    return worst


def _native_options(name: str, common: Mapping[str, Any]) -> dict[str, Any]:
    native: dict[str, Any] = {}
    table = _OPTION_NAMES[name]
    for key, value in common.items():
        if value is None:
            continue
        if key not in table:
            raise OptionError(f"solver {name!r} has no {key!r} setting")
        if key in ("eps_abs", "eps_rel", "time_limit") and not (
            isinstance(value, (int, float)) and value > 0
        ):
            raise OptionError(f"{key} must be a positive number, got {plain(value)!r}")
        if key == "max_iter" and not (isinstance(value, (int, np.integer)) and value > 0):
            raise OptionError(f"max_iter must be a positive integer, got {plain(value)!r}")
        for native_key in table[key]:
            native[native_key] = value
    return native


def solve_with_cvxpy(
    program: Program,
    name: str,
    *,
    eps_abs: float | None = None,
    eps_rel: float | None = None,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    warm_start: bool = False,
    solver_options: Mapping[str, Any] | None = None,
    parameters_from: Program | None = None,
) -> Solution:
    """Solve ``program.problem`` with the cvxpy backend ``name``.

    See the module docstring for the options and Notes for the steps. Returns a
    :class:`Solution` whose ``values`` / ``duals`` are keyed by the program's variable
    and constraint names.

    Notes
    -----
    One adapter serves the four backends (style guide, convention 1). Each call

    0. with ``parameters_from``, adopts that program's cvxpy problem when only
       parameter values differ (``extras["problem_reused"]``; the refusal's reason
       in ``extras["problem_reuse_refused"]``);
    1. compiles the program's cvxpy problem for the backend
       (:meth:`cvxpy.Problem.get_problem_data`, which reuses cvxpy's DPP cache on
       re-solves, so a parametrised program is compiled once);
    2. runs the backend on the compiled data, keeping its raw output so that the
       backend's own residuals and gap reach :class:`~conicml.Residuals`;
    3. unpacks primal values (by variable name) and dual values (by constraint
       name), recomputes the primal residual
       :math:`\\max_i \\mathrm{violation}(c_i)` in the user's own program, and maps
       the status through ``STATUS_MAP``.
    """
    common = {"eps_abs": eps_abs, "eps_rel": eps_rel, "max_iter": max_iter,
              "time_limit": time_limit}
    opts = _native_options(name, common)
    if solver_options:
        clash = sorted(set(solver_options) & set(opts))
        if clash:
            raise OptionError(
                f"{', '.join(clash)} set both through a common option and solver_options"
            )
        opts.update(solver_options)
    reuse: dict[str, Any] = {}
    if parameters_from is not None:
        if not isinstance(parameters_from, Program):
            raise OptionError("parameters_from must be a conicml Program, got "
                              f"{type(parameters_from).__name__}")
        refused = program.adopt_problem(parameters_from)
        reuse = ({"problem_reused": True} if refused is None else
                 {"problem_reused": False, "problem_reuse_refused": refused})
    problem = program.problem
    cvxpy_name = _CVXPY_NAMES[name]
    start = time.perf_counter()
    try:
        data, chain, inverse = problem.get_problem_data(
            cvxpy_name, False, False, False, verbose, None, dict(opts)
        )
    except cp.error.DCPError as exc:
        raise ProgramError(f"the program is not DCP: {exc}") from exc
    except cp.error.SolverError as exc:
        raise SolverError(f"{name} cannot take this program: {exc}") from exc
    setup_time = time.perf_counter() - start
    start = time.perf_counter()
    try:
        raw = chain.solve_via_data(problem, data, warm_start, verbose, dict(opts))
    except cp.error.SolverError as exc:
        return Solution(status=Status.SOLVER_ERROR, solver=name, setup_time=setup_time,
                        solve_time=time.perf_counter() - start, message=str(exc))
    except (TypeError, ValueError, AttributeError) as exc:  # rejected native settings
        raise OptionError(f"{name} rejected the options {sorted(opts)}: {exc}") from exc
    solve_time = time.perf_counter() - start
    try:
        with warnings.catch_warnings():  # cvxpy's "may be inaccurate": the status says it
            warnings.simplefilter("ignore", UserWarning)
            problem.unpack_results(raw, chain, inverse)
    except cp.error.SolverError as exc:
        return Solution(status=Status.SOLVER_ERROR, solver=name, setup_time=setup_time,
                        solve_time=solve_time, message=str(exc))
    status = STATUS_MAP.get(problem.status, Status.SOLVER_ERROR)
    dual_res, gap, iters = _backend_certificate(name, raw)
    if iters is None:
        iters = problem.solver_stats.num_iters or 0
    values: dict[str, np.ndarray] = {}
    duals: dict[str, np.ndarray] = {}
    if status.has_solution:
        values = {k: np.array(v.value, dtype=float) for k, v in program.variables.items()}
        duals = {
            k: _dual_array(c.dual_value)
            for k, c in program.constraints.items()
            if c.dual_value is not None
        }
        primal = _primal_violation(problem)
        objective = float(problem.value)
    else:
        primal = math.nan
        objective = float(problem.value) if problem.value is not None else math.nan
    return Solution(
        status=status,
        solver=name,
        objective=objective,
        values=values,
        duals=duals,
        iterations=int(iters),
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=primal, dual=dual_res, gap=gap, source="mixed"),
        message=f"{name}: {problem.status}",
        extras={"backend_info": _backend_info(name, raw), "cvxpy_status": problem.status,
                **reuse},
    )


def _make_backend(name: str) -> Callable[..., Solution]:
    def backend(
        program: Program,
        *,
        eps_abs: float | None = None,
        eps_rel: float | None = None,
        max_iter: int | None = None,
        time_limit: float | None = None,
        verbose: bool = False,
        warm_start: bool = False,
        solver_options: Mapping[str, Any] | None = None,
        parameters_from: Program | None = None,
    ) -> Solution:
        return solve_with_cvxpy(
            program, name, eps_abs=eps_abs, eps_rel=eps_rel, max_iter=max_iter,
            time_limit=time_limit, verbose=verbose, warm_start=warm_start,
            solver_options=solver_options, parameters_from=parameters_from,
        )

    backend.__name__ = f"solve_{name}"
    backend.__qualname__ = backend.__name__
    backend.__doc__ = f"Generic backend: {name} through cvxpy (options in the module docstring)."
    return backend


def reuse_parameters(previous: Solution, old: Program | None, new: Program) -> dict[str, Any]:
    """Warm start of the generic backends along a path: re-use ``old``'s compiled problem.

    The backends' option ``parameters_from=old``: when ``new`` differs from ``old`` only
    in the values of its declared ``cp.Parameter`` (:meth:`Program.adopt_problem`), its
    solve re-uses ``old``'s cvxpy problem, whose compilation cvxpy keeps (DPP), instead of
    compiling a new one; otherwise ``new`` is compiled as usual. Offered when ``new``
    declares parameters (``Program.parameter_keys``) and is not built yet, and ``old``'s
    problem is built. ``previous`` is not needed: an interior-point method has no use
    for a starting point.
    """
    if old is None or not getattr(new, "parameter_keys", None) or new.is_built \
            or not old.is_built:
        return {}
    return {"parameters_from": old}


# certify_tol (conicml's recomputed residuals, conicml/certificates/conic.py): an interior-point
# point is accurate to ~1e-8 in the objective but only to ~sqrt of that in flat directions,
# so the stationarity of the original (non-conic) form recomputed at the point reads up to
# ~1.6e-4 on accurate solves (robust BMPM, specified rates): 5e-4. The first-order methods
# stop at eps ~1e-4..1e-5 on their own scaled residuals: 5e-3.
solve_clarabel = register("clarabel", kinds=["qp.*", "socp.*", "sdp.*"],
                          specialized=False, warm_start=reuse_parameters,
                          requires=("clarabel",), certify_tol=5e-4,
                          description="Clarabel interior point (QP, SOCP) via cvxpy")(
    _make_backend("clarabel"))
solve_ecos = register("ecos", kinds=["qp.*", "socp.*"], specialized=False, requires=("ecos",),
                      certify_tol=5e-4, warm_start=reuse_parameters,
                      description="ECOS interior point (SOCP) via cvxpy")(_make_backend("ecos"))
solve_scs = register("scs", kinds=["qp.*", "socp.*", "sdp.*"], specialized=False,
                     requires=("scs",), warm_start=reuse_parameters,
                     description="SCS first-order splitting (QP, SOCP) via cvxpy",
                     compare_rtol=1e-3, certify_tol=5e-3)(
    _make_backend("scs"))
solve_osqp = register("osqp", kinds=["qp.*"], specialized=False, requires=("osqp",),
                      warm_start=reuse_parameters,
                      description="OSQP first-order ADMM (QP only) via cvxpy",
                      compare_options={"max_iter": 100_000}, compare_rtol=1e-4,
                      certify_tol=5e-3)(
    _make_backend("osqp"))
