"""The solver's own residuals (``Solution.residuals`` holds conicml's recomputation).

:func:`conicml.solve` replaces ``residuals`` by the program's certificate
(``source="recomputed"``) and keeps what the solver reported in
``extras["solver_residuals"]``; tests of a solver's own stopping measure read it
from there (a solver function called directly has only its own).
"""

from __future__ import annotations

import conicml as cm


def own(solution: cm.Solution) -> cm.Residuals:
    """The residuals the solver itself reported."""
    return solution.extras.get("solver_residuals", solution.residuals)
