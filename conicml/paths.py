"""``solve_path``: one learner over a grid of a hyper-parameter, each solve warm started.

Each solver declares in the registry (``register(..., warm_start=...)``) how a solution
at one hyper-parameter value starts it at the next; ``docs/paths.md`` lists them.
Every solution of a path goes through :func:`conicml.solve`, so it is certified exactly
as a cold solve is.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import registry
from .exceptions import OptionError
from .program import Program
from .solution import Solution
from .solving import solve

__all__ = ["ORDERS", "path_order", "solve_path"]

#: The orders :func:`solve_path` accepts.
ORDERS = ("ascending", "descending", "given")


def path_order(values: list[Any], order: str | Callable[[Any], Any]) -> list[int]:
    """Indices of ``values`` in the order in which a path solves them.

    ``"ascending"`` (smallest first: the most regularised end of a C grid),
    ``"descending"`` (largest first: the most regularised end of a lambda grid),
    ``"given"`` (as listed), or a callable ``key(value)`` sorted ascending.
    Ties keep the order of ``values`` (a stable sort).
    """
    if callable(order):
        key = order
    elif order == "given":
        return list(range(len(values)))
    elif order in ("ascending", "descending"):
        def key(value: Any) -> Any:
            return value
    else:
        raise OptionError(f"order must be one of {', '.join(ORDERS)} or a callable key, "
                          f"got {order!r}")
    try:
        idx = sorted(range(len(values)), key=lambda i: key(values[i]))
    except TypeError as exc:
        raise OptionError(
            f"the values of the path cannot be sorted ({exc}); pass order='given' or a "
            "callable key") from exc
    return idx[::-1] if order == "descending" else idx


@functools.cache
def _takes_workspace(warm_start: Callable[..., Any]) -> bool:
    """Whether a registered warm start takes the path's ``workspace`` (asked once each)."""
    return "workspace" in inspect.signature(warm_start).parameters


def solve_path(
    build: Callable[[Any], Program],
    values: Iterable[Any],
    solver: str | None = None,
    *,
    order: str | Callable[[Any], Any] = "ascending",
    warm_start: bool = True,
    certify_tol: float | None = None,
    **options: Any,
) -> list[Solution]:
    """Solve ``build(value)`` for every value, each solve warm started from the previous.

    Parameters
    ----------
    build : callable
        ``build(value) -> Program``, e.g.
        ``lambda C: conicml.formulations.svm.soft_margin(X, y, C, form="dual")``.
        Every program of a path is the same learner on the same data; only the
        hyper-parameter changes.
    values : iterable
        The hyper-parameter values (any objects ``build`` accepts).
    solver : str, optional
        Registry name; ``None`` uses each program's ``default_solver``.
    order : {"ascending", "descending", "given"} or callable, default="ascending"
        Order of the solves (see :func:`path_order`). Start at the most
        regularised end, where solutions are sparse and solves cheap:
        ``"ascending"`` for a cost C, ``"descending"`` for a ridge lambda.
    warm_start : bool, default=True
        ``False`` solves every value cold (the reference a warm path is
        checked against).
    certify_tol : float, optional
        As in :func:`conicml.solve`.
    **options
        Options of the solver for every solve (as in :func:`conicml.solve`);
        the warm-start options (e.g. ``x0``) are supplied by the path.

    Returns
    -------
    list of Solution
        In the order of ``values``. Each is what :func:`conicml.solve` returns
        (certified by the program's own recomputation), with
        ``extras["path"] = {"position": k, "warm_start": (option names,)}``:
        ``k`` the solve's place in the path, and the options that warm started
        it (empty for a cold solve). A value whose solve has no point
        (infeasible, solver error) keeps that status, and the next value is
        solved cold.

    Raises
    ------
    OptionError
        Unknown ``order``, or an option the path supplies itself given in
        ``options`` while ``warm_start=True``.
    """
    values = list(values)
    idx = path_order(values, order)
    workspace: dict[str, Any] = {}  # the warm starts' own state, for this path only
    solutions: list[Solution | None] = [None] * len(values)
    previous: Solution | None = None
    old: Program | None = None
    for position, i in enumerate(idx):
        t0 = time.perf_counter()
        program = build(values[i])
        if not isinstance(program, Program):
            raise TypeError(f"build({values[i]!r}) returned {type(program).__name__}, "
                            "not a conicml Program")
        build_time = time.perf_counter() - t0
        name = program.default_solver if solver is None else solver
        entry = registry.get(name, kind=program.kind)
        warm: Mapping[str, Any] = {}
        if warm_start and entry.warm_start is not None and previous is not None:
            extra = {"workspace": workspace} if _takes_workspace(entry.warm_start) else {}
            warm = dict(entry.warm_start(previous, old, program, **extra) or {})
            clash = sorted(set(warm) & set(options))
            if clash:
                raise OptionError(
                    f"solve_path supplies {', '.join(clash)} to {entry.name!r} as the warm "
                    "start; leave it out of the options, or pass warm_start=False")
        solution = solve(program, solver, certify_tol=certify_tol, **warm, **options)
        extras = {**solution.extras,
                  "path": {"position": position, "warm_start": tuple(sorted(warm)),
                           "build_time": build_time}}
        solution = dataclasses.replace(solution, extras=extras)
        solutions[i] = solution
        # an infeasible value or a failed solve leaves nothing to start from: next cold
        previous, old = (solution, program) if solution.ok else (None, None)
    return solutions  # type: ignore[return-value]
