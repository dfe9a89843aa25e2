"""Exceptions and warnings owned by conicml.

Every native exception raised by a backend is re-raised as one of these with
``from exc``, so that users never have to catch a third-party type. Each class
also subclasses the matching built-in, so ``except ValueError`` keeps working.

.. code-block:: text

    ConicMLError
    ├── ProgramError (ValueError)        bad data or hyper-parameters
    ├── OptionError (ValueError)         unknown or invalid solver option
    ├── SolverNotFoundError (ValueError) unknown or uninstalled solver name
    ├── SolverError (RuntimeError)       solver cannot take the program, or failed
    └── NotFittedStatusError (RuntimeError)  estimator fit ended without a model
"""

from __future__ import annotations

__all__ = [
    "ConicMLError",
    "ConicMLWarning",
    "NotFittedStatusError",
    "OptionError",
    "ProgramError",
    "SolverError",
    "SolverNotFoundError",
]


class ConicMLError(Exception):
    """Base class of every exception raised by conicml."""


class ProgramError(ConicMLError, ValueError):
    """The data or hyper-parameters cannot define the program.

    Raised for shape mismatches, NaN or infinite entries, a single class,
    labels outside {-1, +1}, non-positive costs, unknown kernels, and so on.
    """


class OptionError(ConicMLError, ValueError):
    """A solver option is unknown to the chosen solver or has a bad value."""


class SolverNotFoundError(ConicMLError, ValueError):
    """No solver is registered under the given name (or it is not installed)."""


class SolverError(ConicMLError, RuntimeError):
    """A solver cannot accept the program kind, or failed while solving."""


class NotFittedStatusError(ConicMLError, RuntimeError):
    """An estimator's program ended infeasible, unbounded or failed.

    The message names the cause and the hyper-parameter to change.
    """


class ConicMLWarning(UserWarning):
    """Base class of the warnings emitted by conicml."""
