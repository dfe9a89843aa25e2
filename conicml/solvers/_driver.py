"""One driver for the iterative solvers: the stop rule, its messages as data, the callback
and iteration table, and the hand-off to the certificate (the shape of scipy's
``optimize/_trustregion.py`` and jaxopt's ``run``); each solver supplies its step."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from enum import IntEnum
from typing import Any

import numpy as np

from ..solution import Status
from ._callback import IntermediateResult, stopper
from ._options import check_common
from ._report import IterationReport

__all__ = ["Driver", "Reason", "Stall", "Stop", "message_table", "status_table"]


class Reason(IntEnum):
    """Why a loop stopped; solver-specific reasons take the integers from 5 on."""

    CONVERGED = 0
    MAX_ITER = 1
    TIME_LIMIT = 2
    CALLBACK = 3
    STALLED = 4


#: The messages every solver shares; a solver names its convergence and adds its own.
_COMMON = {
    Reason.MAX_ITER: "maximum number of iterations reached (max_iter)",
    Reason.TIME_LIMIT: "time limit reached (time_limit)",
    Reason.CALLBACK: "stopped by the callback",
}


def message_table(converged: str, more: Mapping[int, str] | None = None) -> dict[int, str]:
    """Reason -> message: ``converged`` for 0, the shared limits, then ``more``."""
    return {int(Reason.CONVERGED): converged, **{int(r): m for r, m in _COMMON.items()},
            **{int(r): m for r, m in (more or {}).items()}}


def status_table(more: Mapping[int, Status] | None = None) -> dict[int, Status]:
    """Reason -> Status: OPTIMAL for convergence, USER_LIMIT for any limit, then ``more``."""
    table = {int(r): Status.USER_LIMIT for r in Reason}
    table[int(Reason.CONVERGED)] = Status.OPTIMAL
    return {**table, **{int(r): s for r, s in (more or {}).items()}}


class Stop(Exception):  # noqa: N818 -- a control signal, like StopIteration
    """Raised by a step to end :meth:`Driver.run` with a solver-specific ``reason``."""

    def __init__(self, reason: int) -> None:
        super().__init__(reason)
        self.reason = int(reason)


class Stall:
    """No net progress over a window of iterations while not converged.

    Every ``window`` iterations the iterate is compared with the one at the start of the
    window: ``measure(anchor, x)`` (default: the largest absolute movement) at most
    ``step`` with the residual above ``tol`` is a stall; otherwise a new window starts.
    """

    def __init__(self, window: int, step: float, x: Any,
                 measure: Callable[[Any, Any], float] | None = None) -> None:
        self.window, self.step, self.start = int(window), float(step), 0
        self.anchor = np.copy(x)
        self.measure = measure or (lambda old, new: float(np.max(np.abs(new - old))))

    def due(self, k: int) -> bool:
        """Whether the window ending at iteration ``k`` is complete."""
        return k - self.start >= self.window

    def stalled(self, k: int, x: Any, residual: float, tol: float) -> bool:
        """At a due iteration: stalled, or start a new window at ``x``."""
        if self.measure(self.anchor, x) <= self.step and residual > tol:
            return True
        self.start, self.anchor = k, np.copy(x)
        return False


class Driver:
    """The stop rule of one solve: ``tol`` on the solver's residual, ``max_iter``,
    ``time_limit``, the callback (old signatures through ``legacy``), an optional
    :class:`Stall`, and the messages/statuses of ``messages``/``statuses``.

    Options are checked at construction (:func:`check_common`); the clock starts at
    :meth:`start`. ``tol`` may be lowered by the solver while it runs (polishing).
    """

    def __init__(self, solver: str, *, tol: float, max_iter: int, time_limit: float | None,
                 messages: Mapping[int, str], statuses: Mapping[int, Status] | None = None,
                 callback: Any = None, legacy: Callable[[IntermediateResult], tuple] | None = None,
                 report: type[IterationReport] | None = None, allow_zero: bool = False,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        check_common(solver, tol, max_iter, time_limit, allow_zero=allow_zero)
        self.solver, self.tol, self.max_iter = solver, float(tol), int(max_iter)
        self.time_limit = time_limit
        self.messages, self.statuses = messages, statuses or status_table()
        self.stop = stopper(solver, callback, legacy)
        self.report, self.clock = report, clock
        self.t0 = clock()

    def start(self, preamble: str | None = None) -> Driver:
        """Start the clock; with a report, print ``preamble`` and the table's header."""
        if self.report is not None:
            if preamble:
                print(preamble)
            self.report.print_header()
        self.t0 = self.clock()
        return self

    @property
    def elapsed(self) -> float:
        """Seconds since :meth:`start`."""
        return self.clock() - self.t0

    @property
    def listening(self) -> bool:
        """Whether a callback waits for each iteration (else the solver need not sync)."""
        return self.stop is not None

    def converged(self, residual: float) -> bool:
        """``residual <= tol`` (NaN never converges)."""
        return residual <= self.tol

    def limit(self, k: int) -> Reason | None:
        """MAX_ITER after ``max_iter`` iterations, TIME_LIMIT past ``time_limit``, else None."""
        if k >= self.max_iter:
            return Reason.MAX_ITER
        if self.out_of_time():
            return Reason.TIME_LIMIT
        return None

    def out_of_time(self) -> bool:
        """Whether more than ``time_limit`` seconds have passed since :meth:`start`."""
        return self.time_limit is not None and self.elapsed > self.time_limit

    def notify(self, k: int, residual: float = math.nan, values: Mapping[str, Any] | None = None,
               objective: float = math.nan, extras: Mapping[str, Any] | None = None) -> bool:
        """Call the callback after iteration ``k``; ``True`` if it asked to stop."""
        if self.stop is None:
            return False
        return self.stop(IntermediateResult(
            iteration=k, objective=objective, residual=residual, elapsed=self.elapsed,
            values=values or {}, extras=extras or {}))

    def row(self, *values: Any) -> None:
        """One row of the iteration table (nothing without a report)."""
        if self.report is not None:
            self.report.print_iteration(*values)

    def run(self, step: Callable[[int], float], residual: float,
            values: Callable[[], Mapping[str, Any]] = dict) -> tuple[int, int, float]:
        """jaxopt's ``run``: ``step(k)`` makes iteration ``k + 1`` and returns its residual.

        Stops when ``residual <= tol``, at a limit, when the callback asks, or when the step
        raises :class:`Stop`. Returns ``(reason, iterations, residual)``.
        """
        k = 0
        while True:
            if self.converged(residual):
                return int(Reason.CONVERGED), k, residual
            reason = self.limit(k)
            if reason is not None:
                return int(reason), k, residual
            try:
                residual = step(k)
            except Stop as stop:
                return stop.reason, k, residual
            k += 1
            if self.listening and self.notify(k, residual, values()):
                return int(Reason.CALLBACK), k, residual

    def finish(self, reason: int, *, certified: bool = True, why: str = "",
               **fields: Any) -> tuple[Status, str]:
        """The status and message of ``reason`` (``fields`` fill the message's slots).

        An OPTIMAL that the solver's own check of the certificate's number rejects
        (``certified=False``) becomes OPTIMAL_INACCURATE, the failing number in ``why``.
        """
        status = self.statuses[int(reason)]
        message = self.messages[int(reason)]
        message = message.format(**fields) if fields else message
        if status is Status.OPTIMAL and not certified:
            return Status.OPTIMAL_INACCURATE, f"not certified: {why}; {message}"
        return status, message
