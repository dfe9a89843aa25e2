"""The fixed-ρ SOCPs of the M4 kinds, solved by a generic backend.

Shared by ``bisection``, ``dinkelbach-gfp`` and the line searches over ρ; it
reads the program's :class:`~conicml.contracts.m4.M4Data` (``data["m4"]``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exceptions import OptionError
from ..program import ConicForm, Program
from ..solution import Solution

__all__ = ["INNER_BACKENDS", "InnerSolver", "point"]

INNER_BACKENDS = ("clarabel", "ecos", "scs")


class _InnerFailure(Exception):
    def __init__(self, solution: Solution) -> None:
        super().__init__(solution.message)
        self.solution = solution


def _no_decode(data: Mapping[str, Any], solution: Solution) -> dict:  # pragma: no cover
    return dict(solution.values)


@dataclass
class InnerSolver:
    """Solves the fixed-ρ SOCPs of an M4 program with a generic backend.

    Shared by ``bisection``, ``dinkelbach-gfp`` and the line searches over ρ. With
    ``rebuild=False`` one compiled DPP problem (the program's own ``form``) is
    re-solved after setting its parameters; with ``rebuild=True`` a fresh
    parameter-free problem is built and compiled for every call.
    """

    program: Program
    inner: str = "clarabel"
    inner_options: Mapping[str, Any] | None = None
    rebuild: bool = False
    solves: int = 0
    time: float = 0.0
    times: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.inner not in INNER_BACKENDS:
            raise OptionError(
                f"inner must be one of {', '.join(INNER_BACKENDS)}, got {self.inner!r}"
            )
        self.inner_options = dict(self.inner_options or {})

    def _solve(self, form: ConicForm, kind: str) -> Solution:
        from ..solving import solve  # late import: solving imports the registry

        prog = Program(kind, self.program.data, build=lambda _data: form, decode=_no_decode)
        start = time.perf_counter()
        sol = solve(prog, self.inner, **self.inner_options)
        elapsed = time.perf_counter() - start
        self.time += elapsed
        self.times.append(elapsed)
        self.solves += 1
        if not sol.ok:
            raise _InnerFailure(sol)
        return sol

    def check(self, rho: float, scale_pos: float = 1.0, scale_neg: float = 1.0) -> Solution:
        """Solve the fixed-ρ SOCP (feasibility check or slack problem) at ``rho``."""
        data = self.program.data
        if self.rebuild:
            if scale_pos != 1.0 or scale_neg != 1.0:
                raise OptionError("rebuild=True supports unit scales only")
            form = data["m4"].inner_problem(rho)
        else:
            form = self.program.form
            form.parameters["rho"].value = float(rho)
            if "scale_pos" in form.parameters:
                form.parameters["scale_pos"].value = float(scale_pos)
                form.parameters["scale_neg"].value = float(scale_neg)
        kind = "socp.m4.check" if data["hard"] else "socp.m4.slack"
        return self._solve(form, kind)

    def kappa_mpm(self) -> tuple[float, np.ndarray]:
        r""":math:`\kappa^*_{MPM} = 1/\min(\sigma_x+\sigma_y)` and its :math:`w` (``inf`` if 0)."""
        sol = self._solve(self.program.data["m4"].mpm_bound_problem(), "socp.m4.mpm")
        w = np.asarray(sol.values["w"], dtype=float)
        s_pos, s_neg = self.program.data["m4"].sigmas(w / float(self.program.data["d"] @ w))
        total = s_pos + s_neg
        scale = max(1.0, float(np.max(np.abs(w))))
        return (math.inf if total <= 1e-12 * scale else 1.0 / total), w


def point(sol: Solution) -> tuple[np.ndarray, float]:
    """``(w, b)`` of an inner solution (``b = 0.0`` if no finite value fixes it)."""
    w = np.asarray(sol.values["w"], dtype=float)
    b = sol.values.get("b")
    b = float(b) if b is not None and np.ndim(b) == 0 and np.isfinite(b) else 0.0
    return w, b


