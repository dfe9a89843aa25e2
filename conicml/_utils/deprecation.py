"""Renamed public keywords: the old spelling works for one release, with a ``FutureWarning``.

The vocabulary of ``docs/glossary.md`` gave some concepts new names: the
covariance ridge is ``ridge`` everywhere, the CBC / CBOR probability of the right side
is ``confidence`` and the specified-rates error-rate bounds are ``error_pos`` /
``error_neg``. Functions take the old keyword through :func:`renamed_keywords`;
scikit-learn estimators keep the old name as an ``__init__`` parameter whose default
is :data:`DEPRECATED` and read it through :func:`renamed_param` in ``fit``.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["DEPRECATED", "renamed_keywords", "renamed_param", "ridge_pair"]

F = TypeVar("F", bound=Callable[..., Any])

#: Default of a deprecated estimator parameter: "not given".
DEPRECATED = "deprecated"


def _warn(owner: str, old: str, new: str, stacklevel: int) -> None:
    warnings.warn(
        f"{owner}: the keyword {old!r} was renamed {new!r} (docs/glossary.md); the old "
        "spelling will be removed in the next release",
        FutureWarning,
        stacklevel=stacklevel,
    )


def renamed_keywords(**renames: str) -> Callable[[F], F]:
    """Decorator: accept ``old=value`` for each ``old=new`` pair, as ``new=value``.

    Giving both spellings is a :class:`TypeError`; the old one emits a
    :class:`FutureWarning` that names the new one.
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {old!r} (deprecated) and "
                                        f"{new!r}; give only {new!r}")
                    _warn(f"{fn.__name__}()", old, new, stacklevel=3)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        wrapper.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def ridge_pair(fn: F) -> F:
    """Decorator of the minimax programs: ``rho_x=`` / ``rho_y=`` become ``ridge=(x, y)``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "rho_x" in kwargs or "rho_y" in kwargs:
            if "ridge" in kwargs:
                raise TypeError(f"{fn.__name__}() got both 'rho_x'/'rho_y' (deprecated) and "
                                "'ridge'; give only 'ridge'")
            _warn(f"{fn.__name__}()", "rho_x/rho_y", "ridge", stacklevel=3)
            rho_x = kwargs.pop("rho_x", 0.0)
            rho_y = kwargs.pop("rho_y", None)
            kwargs["ridge"] = rho_x if rho_y is None else (rho_x, rho_y)
        return fn(*args, **kwargs)

    wrapper.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def renamed_param(estimator: Any, old: str, new: str) -> Any:
    """The value of estimator parameter ``new``, or of the deprecated ``old`` if it was set."""
    value_old = getattr(estimator, old)
    if isinstance(value_old, str) and value_old == DEPRECATED:
        return getattr(estimator, new)
    _warn(type(estimator).__name__, old, new, stacklevel=4)
    return value_old
