"""Solvers: the generic cvxpy backends and the specialized solvers.

Every module here registers its solver(s) in :mod:`conicml.registry` on import;
``available(kind)`` lists the installed solvers that accept a program kind.
To add a solver, write ``conicml/solvers/<name>.py`` with a function decorated
by :func:`register`, and import the module below.
"""

from ..registry import available, entries, get, register
from . import cvxpy_backends  # noqa: F401  (registration on import)

__all__ = ["available", "entries", "get", "register"]
