"""One callback signature for every iterative solver (scipy's ``intermediate_result``).

A solver option ``callback`` is called once per iteration (or per outer
iteration of a sequential method) with an :class:`IntermediateResult`; raising
:class:`StopIteration` inside it stops the solver, which then returns its
current point with ``Status.USER_LIMIT`` and the message "stopped by the
callback", as :func:`scipy.optimize.minimize` does::

    def log(result):
        print(result.iteration, result.objective, result.residual)
        if result.elapsed > 10:
            raise StopIteration

    cm.solve(prog, "smo", callback=log)
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..exceptions import OptionError

__all__ = ["Callback", "IntermediateResult", "Recorder", "check_callback", "notify", "stopper"]


@dataclass(frozen=True)
class IntermediateResult:
    """The state of an iterative solver after one iteration.

    Attributes
    ----------
    iteration : int
        Iterations done so far (1 after the first).
    objective : float
        Current objective in the program's own sense (``nan`` if not tracked).
    residual : float
        The solver's stopping measure at this iteration (the quantity its
        stopping rule compares with ``tol``).
    elapsed : float
        Seconds since the solver started.
    values : Mapping[str, Any]
        Current iterate, keyed like ``Solution.values`` (may be a subset).
    extras : Mapping[str, Any]
        Solver-specific quantities (step size, bracket, working set, ...).
    """

    iteration: int
    objective: float = math.nan
    residual: float = math.nan
    elapsed: float = 0.0
    values: Mapping[str, Any] = field(default_factory=dict)
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:  # noqa: D105
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        object.__setattr__(self, "extras", MappingProxyType(dict(self.extras)))


Callback = Callable[[IntermediateResult], Any]


class Recorder:
    """A callback that keeps every :class:`IntermediateResult` (for plots and studies).

    ``max_iter`` stops the solver after that many iterations (``USER_LIMIT``).

    Examples
    --------
    >>> rec = Recorder()
    >>> sol = cm.solve(prog, "smo", callback=rec)        # doctest: +SKIP
    >>> cm.plot.plot_convergence(rec)                    # doctest: +SKIP
    """

    def __init__(self, max_iter: int | None = None) -> None:
        self.max_iter = max_iter
        self.results: list[IntermediateResult] = []

    def __call__(self, result: IntermediateResult) -> None:
        self.results.append(result)
        if self.max_iter is not None and len(self.results) >= self.max_iter:
            raise StopIteration

    def __len__(self) -> int:
        return len(self.results)


def check_callback(solver: str, callback: Any) -> None:
    """Raise :class:`OptionError` unless ``callback`` is ``None`` or callable."""
    if callback is not None and not callable(callback):
        raise OptionError(
            f"{solver}: callback must be callable as callback(intermediate_result), "
            f"got {type(callback).__name__}"
        )


def notify(callback: Callback | None, result: IntermediateResult) -> bool:
    """Call ``callback(result)``; return ``True`` if it asked to stop (``StopIteration``)."""
    if callback is None:
        return False
    try:
        callback(result)
    except StopIteration:
        return True
    return False


def _is_legacy(callback: Callable) -> bool:
    """Whether ``callback`` needs two or more positional arguments (the old signatures)."""
    try:
        params = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: the new form
        return False
    required = [p for p in params
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    return len(required) >= 2


def stopper(solver: str, callback: Any,
            legacy: Callable[[IntermediateResult], tuple] | None = None
            ) -> Callable[[IntermediateResult], bool] | None:
    """Check ``callback`` and return ``stop(result) -> bool`` (``None`` without a callback).

    ``legacy`` maps an :class:`IntermediateResult` to the positional arguments of
    the solver's signature before 0.2 (e.g. ``(k, alpha, violation)``): a
    callback that needs two or more positional arguments is called that way for
    one more release, with a :class:`FutureWarning`; there, returning ``True``
    also stops the solver, as it did.
    """
    check_callback(solver, callback)
    if callback is None:
        return None
    if legacy is not None and _is_legacy(callback):
        warnings.warn(
            f"{solver}: callback(k, ...) with several arguments is deprecated and will be "
            "removed in 0.3; write callback(intermediate_result) (conicml.solvers._callback."
            "IntermediateResult) and raise StopIteration to stop",
            FutureWarning, stacklevel=4)

        def stop_legacy(result: IntermediateResult) -> bool:
            try:
                return bool(callback(*legacy(result)))
            except StopIteration:
                return True

        return stop_legacy
    return lambda result: notify(callback, result)
