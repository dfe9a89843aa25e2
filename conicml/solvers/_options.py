"""One check of the options every iterative solver shares (style guide, convention 5).

``tol`` is a positive finite number, ``max_iter`` an integer and ``time_limit``
a number of seconds or ``None``, with the same meaning in every solver. Solvers
that can return a certified point without iterating (warm start at the optimum:
``smo``, ``lin-han``, ``cbor-smo``, ``cbc-smo``) accept ``max_iter=0`` and
``time_limit=0`` (``allow_zero=True``); the others need at least one step.
"""

from __future__ import annotations

import importlib
import math
import numbers
from typing import Any

from .._utils.engines import ENGINE_ENV, numba_available, numba_import_error, resolve_engine
from ..exceptions import OptionError

__all__ = ["ENGINE_ENV", "check_array", "check_cache_size", "check_common", "check_scalar",
           "load_engine", "numba_available", "numba_import_error", "resolve_engine"]


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_common(solver: str, tol: Any, max_iter: Any, time_limit: Any, *,
                 allow_zero: bool = False) -> None:
    """Raise :class:`OptionError` unless ``tol``, ``max_iter``, ``time_limit`` are valid.

    ``max_iter=None`` is accepted (the solver resolves its own default).
    """
    if not (_is_real(tol) and math.isfinite(tol) and tol > 0):
        raise OptionError(f"{solver}: tol must be a positive finite number, got {tol!r}")
    low = 0 if allow_zero else 1
    if max_iter is not None and not (
        isinstance(max_iter, numbers.Integral) and not isinstance(max_iter, bool)
        and max_iter >= low
    ):
        raise OptionError(f"{solver}: max_iter must be an integer >= {low}, got {max_iter!r}")
    if time_limit is not None and not (
        _is_real(time_limit) and not math.isnan(time_limit)
        and (time_limit > 0 or (allow_zero and time_limit == 0))
    ):
        kind = "non-negative" if allow_zero else "positive"
        raise OptionError(f"{solver}: time_limit must be a {kind} number, got {time_limit!r}")


def check_scalar(solver: str, name: str, value: Any, *, low: float | None = None,
                 high: float | None = None) -> float | None:
    """Raise :class:`OptionError` unless ``value`` is ``None`` or a finite real in [low, high].

    Used for scalar warm starts (``x0`` of ``bisection``, ``m4-line-search``,
    ``quadratic-interpolation``, ``dinkelbach-gfp``): a NaN or infinite start
    would otherwise propagate silently into the search.
    """
    if value is None:
        return None
    if not (_is_real(value) and math.isfinite(value)):
        raise OptionError(f"{solver}: {name} must be a finite number, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise OptionError(f"{solver}: {name} must lie in [{lo}, {hi}], got {value!r}")
    return float(value)


def check_array(solver: str, name: str, value: Any, shape: tuple[int, ...]) -> Any:
    """``value`` as a float array of ``shape``; :class:`OptionError` if not, or not finite."""
    import numpy as np

    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{solver}: {name} must be a numeric array of shape {shape}, "
                          f"got {type(value).__name__}") from exc
    if arr.shape != tuple(shape):
        raise OptionError(f"{solver}: {name} must have shape {tuple(shape)}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise OptionError(f"{solver}: {name} contains NaN or infinite entries")
    return arr


def check_cache_size(solver: str, cache_size: Any) -> float:
    """Raise :class:`OptionError` unless the kernel-cache size (MB) is positive and finite."""
    if not (_is_real(cache_size) and math.isfinite(cache_size) and cache_size > 0):
        raise OptionError(f"{solver}: cache_size (MB) must be positive and finite, "
                          f"got {cache_size!r}")
    return float(cache_size)


def load_engine(solver: str, engine: Any, module: str) -> Any:
    """The compiled loop ``conicml.solvers.<module>`` for ``engine``, or ``None`` for NumPy.

    ``engine`` is resolved by :func:`resolve_engine`.
    """
    if resolve_engine(solver, engine) == "numpy":
        return None
    try:
        return importlib.import_module(f".{module}", __package__)
    except ImportError as exc:  # the compiled module itself failed to load
        if engine == "numba":
            raise OptionError(
                f"{solver}: engine='numba' could not load its compiled loop ({exc}); "
                "engine='numpy' runs without it") from exc
        return None
