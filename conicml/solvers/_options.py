"""One check of the options every iterative solver shares (style guide, convention 5).

``tol`` is a positive finite number, ``max_iter`` an integer and ``time_limit``
a positive number of seconds or ``None``, with the same meaning in every solver.
Solvers that can return a certified point without iterating (warm start at the
optimum: ``smo``, ``lin-han``, ``cbor-smo``, ``cbc-smo``) accept ``max_iter=0``
(``allow_zero=True``); the others need at least one step. ``time_limit=0`` is
refused everywhere: ``max_iter=0`` says "do not iterate".

:func:`check_options` is the declarative check :func:`conicml.solve` runs on
every call before the solver sees its options: by annotation (an option
declared ``bool`` takes ``True`` or ``False``) and by name for the options
several solvers share (``time_limit``, ``x0``, ``random_state``, ``inner_tol``,
``inner_max_iter``), so each rule lives here once.
"""

from __future__ import annotations

import functools
import importlib
import math
import numbers
from typing import Any

from .._utils.engines import ENGINE_ENV, numba_available, numba_import_error, resolve_engine
from .._utils.validation import plain
from ..exceptions import OptionError

__all__ = ["ENGINE_ENV", "check_array", "check_cache_size", "check_common", "check_options",
           "check_random_state", "check_scalar", "check_start", "check_time_limit",
           "load_engine", "numba_available", "numba_import_error", "resolve_engine"]


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_common(solver: str, tol: Any, max_iter: Any, time_limit: Any, *,
                 allow_zero: bool = False) -> None:
    """Raise :class:`OptionError` unless ``tol``, ``max_iter``, ``time_limit`` are valid.

    ``max_iter=None`` is accepted (the solver resolves its own default).
    """
    if not (_is_real(tol) and math.isfinite(tol) and tol > 0):
        raise OptionError(f"{solver}: tol must be a positive finite number, got {_show(tol)}")
    low = 0 if allow_zero else 1
    if max_iter is not None and not (
        isinstance(max_iter, numbers.Integral) and not isinstance(max_iter, bool)
        and max_iter >= low
    ):
        raise OptionError(f"{solver}: max_iter must be an integer >= {low}, "
                          f"got {_show(max_iter)}")
    check_time_limit(solver, time_limit)


def check_time_limit(solver: str, time_limit: Any) -> None:
    """Raise :class:`OptionError` unless ``time_limit`` is ``None`` or a positive number.

    One rule for every solver, generic or specialized: ``0`` is refused (a solve that
    may not take any time cannot return a point; ``max_iter=0`` asks for the start).
    """
    if time_limit is not None and not (
        _is_real(time_limit) and not math.isnan(time_limit) and time_limit > 0
    ):
        raise OptionError(f"{solver}: time_limit must be a positive number of seconds or "
                          f"None, got {_show(time_limit)}")


def _show(value: Any) -> str:
    """``repr`` of a user's value: NumPy scalars as plain numbers (``1.0``), long ones by type."""
    text = repr(plain(value))
    return text if len(text) <= 60 else type(value).__name__


def check_start(solver: str, x0: Any) -> None:
    """Raise :class:`OptionError` unless ``x0`` is ``None`` or finite numbers.

    A start is a number, an array or a tuple of arrays (``(alpha, alpha_star)``);
    its shape is the solver's to check, against its program.
    """
    import numpy as np

    if x0 is None:
        return
    parts = list(x0) if isinstance(x0, (tuple, list)) and any(
        isinstance(p, (tuple, list)) or np.ndim(p) > 0 for p in x0) else [x0]
    for part in parts:
        arr = np.asarray(part) if not isinstance(part, (str, bytes)) else None
        ok = arr is not None and arr.dtype.kind in "biuf"
        if arr is not None and arr.dtype.kind == "O":
            try:
                arr, ok = arr.astype(float), True
            except (TypeError, ValueError):
                ok = False
        if not ok:
            raise OptionError(f"{solver}: x0 must be a number or an array of numbers "
                              f"(the start point), got {_show(x0)}")
        if not np.all(np.isfinite(arr)):
            raise OptionError(f"{solver}: x0 contains NaN or infinite entries")


def check_random_state(solver: str, random_state: Any) -> None:
    """Raise :class:`OptionError` unless NumPy's ``default_rng`` accepts ``random_state``.

    ``None``, a non-negative integer, a :class:`numpy.random.Generator`,
    ``BitGenerator`` or ``SeedSequence``: the seeds the stochastic solvers draw from.
    """
    import numpy as np

    try:
        np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{solver}: random_state must be None, a non-negative integer or a "
                          f"numpy.random.Generator, got {_show(random_state)}") from exc


def _check_bool(solver: str, name: str, value: Any) -> None:
    import numpy as np

    if not isinstance(value, (bool, np.bool_)):
        raise OptionError(f"{solver}: {name} must be True or False, got {_show(value)}")


def _check_positive(solver: str, name: str, value: Any) -> None:
    if not (_is_real(value) and math.isfinite(value) and value > 0):
        raise OptionError(f"{solver}: {name} must be a positive finite number, "
                          f"got {_show(value)}")


def _check_count(solver: str, name: str, value: Any) -> None:
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1):
        raise OptionError(f"{solver}: {name} must be an integer >= 1, got {_show(value)}")


#: Checks of the options several solvers share, by option name.
_BY_NAME = {
    "time_limit": lambda solver, name, value: check_time_limit(solver, value),
    "x0": lambda solver, name, value: check_start(solver, value),
    "random_state": lambda solver, name, value: check_random_state(solver, value),
    "inner_tol": _check_positive,
    "inner_max_iter": _check_count,
}


def check_options(solver: str, function: Any, options: dict[str, Any]) -> None:
    """Check ``options`` against the declaration of ``function`` (a registered solver).

    An option annotated ``bool`` must be ``True`` or ``False`` (``shrinking="x"`` would
    otherwise be truthy); the shared options of :data:`_BY_NAME` get their one rule.
    Solver-specific values (``engine``, ``method``, shapes against the program) stay
    with the solver.
    """
    flags = _bool_options(function)
    for name, value in options.items():
        if name in flags:
            _check_bool(solver, name, value)
        check = _BY_NAME.get(name)
        if check is not None:
            check(solver, name, value)


@functools.lru_cache(maxsize=256)
def _bool_options(function: Any) -> frozenset[str]:
    """The parameters of ``function`` annotated ``bool``, inspected once per function."""
    import inspect

    return frozenset(name for name, p in inspect.signature(function).parameters.items()
                     if p.annotation in ("bool", bool))


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
