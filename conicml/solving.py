"""``solve``: one entry point for every solver in the registry."""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

from . import registry
from ._utils.deprecation import translate_keywords
from .exceptions import OptionError, ProgramError, SolverError
from .program import Program
from .solution import Solution, Status
from .solvers._options import check_options

__all__ = ["COMMON_OPTIONS", "solve"]

#: Options with one meaning across solvers (a solver may accept a subset).
#:
#: * ``eps_abs`` / ``eps_rel``: absolute / relative tolerance on the residuals
#:   and gap, :math:`r \le \epsilon_{abs} + \epsilon_{rel}\,\max(\|\cdot\|)`;
#:   ``None`` keeps the backend's own default (never silently overridden);
#: * ``tol``: the stopping tolerance of an iterative specialized solver, on the
#:   error its solve function defines (its ``tol`` parameter and Notes);
#: * ``max_iter``: iteration cap; ``time_limit``: seconds; ``verbose``: log.
COMMON_OPTIONS = ("eps_abs", "eps_rel", "tol", "max_iter", "time_limit", "verbose")


def solve(program: Program, solver: str | None = None, *, certify_tol: float | None = None,
          **options: Any) -> Solution:
    """Solve a program with a registered solver.

    Parameters
    ----------
    program : Program
        The program, from a formulation in :mod:`conicml.formulations`.
    solver : str, optional
        Registry name (case-insensitive), e.g. ``"clarabel"``, ``"ecos"``,
        ``"scs"``, ``"osqp"``, ``"smo"``. ``None`` uses
        ``program.default_solver`` (documented by each formulation and
        recorded in ``Solution.solver``).
    certify_tol : float, optional
        Largest recomputed relative residual with which ``OPTIMAL`` stands;
        defaults to the solver's registered ``certify_tol``. Programs that
        certify (:meth:`Program.certify`) get their residuals recomputed by
        conicml; an ``OPTIMAL`` point that fails the check is reported as
        ``OPTIMAL_INACCURATE`` with the failing number in the message.
    **options
        Keyword options of that solver (see :data:`COMMON_OPTIONS` and the
        solver's docstring). Unknown options raise :class:`OptionError`.

    Returns
    -------
    Solution
        The result; infeasible or unbounded programs are returned with that
        status rather than raised.

    Raises
    ------
    ProgramError
        ``program`` is not a :class:`Program`.
    SolverNotFoundError
        Unknown or uninstalled solver name.
    SolverError
        The solver does not accept ``program.kind``.
    OptionError
        An option the solver does not know, an option value the solver's
        declaration refuses (:func:`conicml.solvers._options.check_options`), or a
        ``certify_tol`` that is not a positive finite number.
    """
    if not isinstance(program, Program):
        raise ProgramError(f"solve expects a conicml Program (from a formulation in "
                           f"conicml.formulations), got {type(program).__name__}")
    if certify_tol is not None and not (
        isinstance(certify_tol, numbers.Real) and not isinstance(certify_tol, bool)
        and math.isfinite(certify_tol) and certify_tol > 0
    ):
        raise OptionError(f"certify_tol must be a positive finite number (the largest "
                          f"recomputed residual an OPTIMAL may keep), got {certify_tol!r}")
    name = program.default_solver if solver is None else solver
    entry = registry.get(name, kind=program.kind)
    renamed = getattr(entry.function, "__renamed_keywords__", None)
    if renamed:  # a renamed option: the old spelling for one release, with a FutureWarning
        options = translate_keywords(f"solver {entry.name!r}", renamed, dict(options))
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        raise OptionError(
            f"solver {entry.name!r} does not accept option(s) {', '.join(unknown)}; "
            f"its options are: {', '.join(entry.options) or 'none'}"
        )
    check_options(entry.name, entry.function, options)
    solution = entry.function(program, **options)
    if not isinstance(solution, Solution):
        raise SolverError(
            f"solver {entry.name!r} returned {type(solution).__name__}, not a Solution"
        )
    solution = _certified(program, solution,
                          entry.certify_tol if certify_tol is None else certify_tol)
    # a generic backend knows nothing of the learner: the program explains its status
    # (a specialized solver reads the structured data and words its own message)
    if (solution.status is not Status.OPTIMAL and program.explain is not None
            and not entry.specialized):
        hint = program.explain(program.data, solution.status)
        if hint and hint not in solution.message:
            message = f"{solution.message}; {hint}" if solution.message else hint
            solution = dataclasses.replace(solution, message=message)
    return solution


def _certified(program: Program, solution: Solution, tol: float) -> Solution:
    """Replace the residuals by the program's own recomputation; demote a failed OPTIMAL.

    A solver's own non-optimal status is never promoted: some certificates are local
    (MEMPM's checks the inner BMPM at the returned β, not the search over β).
    """
    residuals = program.certify(solution)
    if residuals is None:
        return solution
    # the solver's own report stays available beside conicml's recomputation
    extras = {**solution.extras, "solver_residuals": solution.residuals}
    solution = dataclasses.replace(solution, residuals=residuals, extras=extras)
    if solution.status is not Status.OPTIMAL:
        return solution
    failing = [(name, value) for name, value in
               (("primal", residuals.primal), ("dual", residuals.dual), ("gap", residuals.gap))
               if not (value <= tol) and value == value]  # nan means "not checked"
    if not failing:
        return solution
    detail = ", ".join(f"{name} residual {value:.3g}" for name, value in failing)
    message = (f"not certified: conicml recomputed {detail} > certify_tol {tol:.1g}"
               + (f"; {solution.message}" if solution.message else ""))
    return dataclasses.replace(solution, status=Status.OPTIMAL_INACCURATE, message=message)
