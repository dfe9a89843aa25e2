"""The one result type returned by every solver: :class:`Solution`.

Modelled on qpsolvers' ``Solution``, Clarabel's ``DefaultSolution`` and cvxpy's
``SolverStats``: the same fields for every solver, generic or specialized, and a
certificate (:class:`Residuals`) that is always filled.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = ["SOURCES", "Residuals", "Solution", "Status"]

#: The documented values of :attr:`Residuals.source`.
SOURCES = ("solver", "recomputed", "mixed")


class Status(str, enum.Enum):
    """Termination status; the values are cvxpy's status strings."""

    OPTIMAL = "optimal"
    OPTIMAL_INACCURATE = "optimal_inaccurate"
    INFEASIBLE = "infeasible"
    INFEASIBLE_INACCURATE = "infeasible_inaccurate"
    UNBOUNDED = "unbounded"
    UNBOUNDED_INACCURATE = "unbounded_inaccurate"
    USER_LIMIT = "user_limit"
    SOLVER_ERROR = "solver_error"

    def __str__(self) -> str:  # noqa: D105
        return self.value

    @property
    def has_solution(self) -> bool:
        """Whether the status carries a primal point (optimal, possibly inaccurate)."""
        return self in (Status.OPTIMAL, Status.OPTIMAL_INACCURATE)


@dataclass(frozen=True)
class Residuals:
    r"""Optimality certificate attached to every :class:`Solution`.

    Attributes
    ----------
    primal : float
        Largest primal constraint violation,
        :math:`\max_i \max(0, g_i(x)) \vee \max_j |h_j(x)|`, as reported by the
        solver or recomputed by conicml from the returned point.
    dual : float
        Dual residual (stationarity of the Lagrangian) or optimality measure.
    gap : float
        Duality gap / complementarity (or the solver's equivalent, such as a
        bisection bracket width).
    source : str
        Where the three numbers come from:

        * ``"recomputed"``: all three were recomputed by conicml from the
          program's own data at the returned point (:meth:`Program.certify`,
          :mod:`conicml.certificates.conic`), each *relative* (scale-free):
          ``primal`` the largest constraint violation divided by the size of
          that constraint's terms, ``dual`` the stationarity residual of the
          Lagrangian (multipliers refitted by conicml) divided by its largest
          term, ``gap`` the complementarity divided by the size of the
          Lagrangian's terms and the relative disagreement between the
          reported and the recomputed objective. :func:`conicml.solve` puts
          these in every solution of a program that certifies (every
          formulation of the package does) and keeps the solver's own
          numbers in ``Solution.extras["solver_residuals"]``. ``nan`` means
          "not checked" (e.g. a norm's kink in an objective);
        * ``"solver"``: the solver's own report, in the solver's own units
          (e.g. SMO's maximal KKT violation :math:`m(\alpha) - M(\alpha)`),
          as a solver function returns it when called directly;
        * ``"mixed"``: a generic backend's report completed by the backend
          adapter.
    """

    primal: float = math.nan
    dual: float = math.nan
    gap: float = math.nan
    source: str = "solver"

    def __post_init__(self) -> None:  # noqa: D105
        if self.source not in SOURCES:
            raise ValueError(f"Residuals.source must be one of {SOURCES}, got {self.source!r}")

    def max(self) -> float:
        """Largest of the three finite residuals (``nan`` if none is finite)."""
        vals = [v for v in (self.primal, self.dual, self.gap) if np.isfinite(v)]
        return max(vals) if vals else math.nan


def _freeze(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Solution:
    """Result of solving a :class:`~conicml.Program` with any registered solver.

    Attributes
    ----------
    status : Status
        Termination status.
    solver : str
        Registry name of the solver that produced the result.
    objective : float
        Optimal value in the program's own sense (``nan`` without a solution).
    values : Mapping[str, numpy.ndarray]
        Primal values, keyed by the names in ``Program.variables``.
    duals : Mapping[str, numpy.ndarray]
        Dual values, keyed by the names in ``Program.constraints``.
    iterations : int
        Iterations of the solver (outer iterations for sequential methods).
    setup_time : float
        Seconds spent compiling/setting up before the solver ran.
    solve_time : float
        Seconds inside the solver.
    residuals : Residuals
        Certificate; always filled.
    message : str
        Human-readable termination message.
    history : tuple
        Optional per-iteration records of iterative solvers.
    extras : Mapping[str, Any]
        Raw backend output and solver-specific quantities (inner solves, ...).
    """

    status: Status
    solver: str
    objective: float = math.nan
    values: Mapping[str, np.ndarray] = field(default_factory=dict)
    duals: Mapping[str, np.ndarray] = field(default_factory=dict)
    iterations: int = 0
    setup_time: float = 0.0
    solve_time: float = 0.0
    residuals: Residuals = field(default_factory=Residuals)
    message: str = ""
    history: tuple = ()
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:  # noqa: D105
        object.__setattr__(self, "status", Status(self.status))
        object.__setattr__(self, "values", _freeze(self.values))
        object.__setattr__(self, "duals", _freeze(self.duals))
        object.__setattr__(self, "extras", _freeze(self.extras))
        object.__setattr__(self, "history", tuple(self.history))

    def __getstate__(self) -> dict:  # MappingProxyType does not pickle
        return {k: (dict(v) if isinstance(v, MappingProxyType) else v)
                for k, v in self.__dict__.items()}

    def __setstate__(self, state: dict) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)
        self.__post_init__()

    @property
    def total_time(self) -> float:
        """Setup (compilation) time plus solve time, in seconds."""
        return self.setup_time + self.solve_time

    @property
    def ok(self) -> bool:
        """Whether the status carries a usable primal point."""
        return self.status.has_solution

    def __repr__(self) -> str:  # noqa: D105
        return (
            f"Solution(status={self.status.value!r}, solver={self.solver!r}, "
            f"objective={self.objective:.10g}, iterations={self.iterations}, "
            f"solve_time={self.solve_time:.3g}s, residuals=(primal={self.residuals.primal:.2e},"
            f" dual={self.residuals.dual:.2e}, gap={self.residuals.gap:.2e}))"
        )
