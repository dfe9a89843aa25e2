"""Input checks shared by every formulation: nothing is silently coerced."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..exceptions import ProgramError

__all__ = ["check_binary_labels", "check_bins", "check_classes", "check_matrix", "check_positive",
           "check_X_y", "plain"]


def plain(value: object) -> object:
    """``value`` with a NumPy scalar turned into Python's, so messages show ``1.0``."""
    return value.item() if isinstance(value, np.generic) else value


def check_matrix(X: object, name: str = "X", *, min_rows: int = 1) -> np.ndarray:
    """Return ``X`` as a finite 2-D float64 array or raise :class:`ProgramError`."""
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # scipy.sparse: densify on purpose
        raise ProgramError(f"{name} is a sparse matrix ({type(X).__name__}); it is "
                           f"needed dense: pass {name}.toarray()")
    if isinstance(X, (str, bytes)):
        raise ProgramError(f"{name} must be a numeric array, got the string {X!r}")
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"{name} must be a numeric array: {exc}") from exc
    if arr.ndim != 2:
        raise ProgramError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if arr.shape[0] < min_rows or arr.shape[1] < 1:
        raise ProgramError(
            f"{name} needs at least {min_rows} row(s) and 1 column, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ProgramError(f"{name} contains {bad} NaN or infinite value(s)")
    return arr


def check_binary_labels(y: object, n_samples: int, name: str = "y") -> np.ndarray:
    """Return labels as a float64 vector of exactly +1/-1 with both classes present."""
    try:
        arr = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"{name} must hold the labels +1 and -1: {exc}") from exc
    if arr.ndim != 1:
        raise ProgramError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n_samples:
        raise ProgramError(
            f"shape mismatch: X has {n_samples} rows but {name} has {arr.shape[0]} labels"
        )
    if not np.all(np.isfinite(arr)):
        raise ProgramError(f"{name} contains NaN or infinite values")
    values = np.unique(arr)
    if not np.all(np.isin(values, (-1.0, 1.0))):
        raise ProgramError(
            f"binary learner needs labels in {{-1, +1}}, got values {values[:10].tolist()}; "
            "map your classes to +1 (positive) and -1 (negative) first"
        )
    if values.size < 2:
        raise ProgramError(
            f"{name} contains a single class ({values[0]:+g}); both +1 and -1 are needed"
        )
    return arr


def check_X_y(X: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    """Validate a design matrix and binary labels together."""
    X = check_matrix(X)
    return X, check_binary_labels(y, X.shape[0])


def check_positive(value: object, name: str, *, allow_inf: bool = False,
                   allow_zero: bool = False) -> float:
    """Return ``value`` as a float > 0 (or >= 0), finite unless ``allow_inf``."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ProgramError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    shown = plain(value)
    if np.isnan(v) or (np.isinf(v) and not allow_inf):
        raise ProgramError(f"{name} must be finite, got {shown!r}")
    if v < 0 or (v == 0 and not allow_zero):
        raise ProgramError(f"{name} must be {'>=' if allow_zero else '>'} 0, got {shown!r}")
    return v


def check_classes(y: object, owner: str, *, binary: bool = False,
                  why: str = "") -> np.ndarray:
    """Return the distinct labels of ``y``: at least two, exactly two if ``binary``.

    ``owner`` (the estimator's name) and ``why`` (the reason a learner is binary) word the
    :class:`ProgramError` otherwise.
    """
    classes = np.unique(np.asarray(y))
    if classes.size < 2:
        raise ProgramError(f"{owner} needs at least two classes; y has one class only")
    if binary and classes.size != 2:
        reason = f" ({why})" if why else ""
        raise ProgramError(f"{owner} is for binary problems{reason}; y has {classes.size} "
                           "classes")
    return classes


def check_bins(bins: object) -> int:
    """Return the number of segments of the mRMR discretisation: an odd integer >= 3."""
    if isinstance(bins, bool) or not isinstance(bins, Integral) or bins < 3 or bins % 2 == 0:
        raise ProgramError(f"bins must be an odd integer >= 3, got {bins!r}")
    return int(bins)
