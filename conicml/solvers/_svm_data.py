"""One check of the arrays every binary SVM solver reads from its program's data.

``smo``, ``dcd``, ``svm-ipm`` and ``pegasos`` accept the same ``X``, ``y``, ``c``
of a soft-margin SVM (kinds ``qp.svm.dual`` and
``qp.svm.primal``); each keeps its own rule on infinite costs (the hard margin)
and its own reading of the kernel, and raises here, in one order, on arrays no
SVM accepts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import ProgramError

__all__ = ["check_svm_arrays"]


def check_svm_arrays(name: str, X: Any, y: np.ndarray, c: np.ndarray, *,
                     values: Any = None) -> None:
    """Raise :class:`~conicml.exceptions.ProgramError` unless the SVM arrays are valid.

    In this order: ``X`` 2-D; ``y`` and ``c`` one entry per row of ``X``; ``X`` finite
    (``values``: the stored entries of a sparse ``X``); labels exactly ``+1.0`` or
    ``-1.0`` of both classes; costs positive (``NaN`` and zero refused, ``inf`` left to
    the solver's hard-margin rule).

    Parameters
    ----------
    name : str
        The solver's registered name, which starts every message.
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y, c : ndarray of shape (n_samples,)
        Labels and per-sample costs, as float arrays.
    values : ndarray, optional
        The entries of ``X`` to test for finiteness (default: ``X`` itself).
    """
    if len(X.shape) != 2:
        raise ProgramError(f"{name}: X must be 2-D, got shape {X.shape}")
    n = X.shape[0]
    if y.shape != (n,) or c.shape != (n,):
        raise ProgramError(f"{name}: y and c must have shape ({n},) to match X, "
                           f"got {y.shape} and {c.shape}")
    if not np.all(np.isfinite(X if values is None else values)):
        raise ProgramError(f"{name}: X contains NaN or infinite values")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ProgramError(f"{name}: labels y must be exactly +1.0 or -1.0")
    if not (np.any(y > 0) and np.any(y < 0)):
        raise ProgramError(f"{name}: y contains a single class; the SVM needs both +1 and -1")
    if not np.all(c > 0):  # False for NaN
        raise ProgramError(f"{name}: costs c must be positive (no NaN, no zeros)")
