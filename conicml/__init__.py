"""conicml: machine-learning learners as declarative conic programs.

Data flows one way: data -> formulation -> program -> solver -> solution -> model::

    import conicml as cm
    prog = cm.formulations.svm.soft_margin(X, y, C=1.0, kernel="rbf", form="dual")
    sol = cm.solve(prog, solver="smo")        # or "clarabel", "ecos", "scs", "osqp"
    model = prog.decode(sol)                  # {"dual_coef": ..., "b": ..., ...}
    print(cm.compare(prog))                   # every solver for this kind, one table
"""

from . import datasets, formulations, metrics, solvers
from .comparison import Comparison, ComparisonRow, compare
from .exceptions import (
    ConicMLError,
    ConicMLWarning,
    NotFittedStatusError,
    OptionError,
    ProgramError,
    SolverError,
    SolverNotFoundError,
)
from .kernels import Kernel, make_kernel
from .moments import ClassMoments, ClusterMoments
from .paths import solve_path
from .program import ConicForm, Program
from .solution import Residuals, Solution, Status
from .solving import solve

__version__ = "0.1.0"

# a child process of a recorded reproduction lists the code it runs (conicml reproduce
# --record; nothing happens unless the recording process asked for it)
from ._utils.code_sampler import sample_if_asked as _sample_if_asked  # noqa: E402

_sample_if_asked()

__all__ = [
    "ClassMoments",
    "ClusterMoments",
    "Comparison",
    "ComparisonRow",
    "ConicForm",
    "ConicMLError",
    "ConicMLWarning",
    "Kernel",
    "NotFittedStatusError",
    "OptionError",
    "Program",
    "ProgramError",
    "Residuals",
    "Solution",
    "SolverError",
    "SolverNotFoundError",
    "Status",
    "compare",
    "datasets",
    "formulations",
    "make_kernel",
    "metrics",
    "solve",
    "solve_path",
    "solvers",
]
