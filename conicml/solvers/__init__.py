"""Solvers: the generic cvxpy backends and the specialized solvers.

Every module in this package registers its solver(s) in :mod:`conicml.registry`
when imported; all of them are imported here, the generic backends first (the
registry's order is the order of preference), then the specialized solvers in
alphabetical order of module name. ``available(kind)`` lists the installed
solvers that accept a program kind.

To add a solver, write ``conicml/solvers/<name>.py`` with a function decorated
by :func:`register` (see ``docs/architecture.md``); nothing else to edit.
"""

import importlib
import pkgutil

from ..registry import available, entries, get, register
from . import cvxpy_backends  # noqa: F401  (generic backends first)
from ._callback import IntermediateResult, Recorder

# the iterative driver, shared with the loops that run outside this package (the Dask
# rounds of conicml.estimators._dask_linear and _dask_pegasos)
from ._driver import Driver, Reason, message_table

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if not _module.startswith("_"):
        importlib.import_module(f"{__name__}.{_module}")

__all__ = ["Driver", "IntermediateResult", "Reason", "Recorder", "available", "entries", "get",
           "message_table", "register"]
