"""Renamed public keywords: the old spelling works for one release, with a ``FutureWarning``.

The vocabulary of ``docs/glossary.md`` gave some concepts new names: the
covariance ridge is ``ridge`` everywhere, the CBC / CBOR probability of the right side
is ``accuracy`` and the specified-rates error-rate bounds are ``error_pos`` /
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

__all__ = ["DEPRECATED", "renamed_keywords", "renamed_param", "ridge_pair", "translate_keywords"]

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


def translate_keywords(owner: str, renames: dict[str, str], kwargs: dict[str, Any],
                       stacklevel: int = 4) -> dict[str, Any]:
    """``kwargs`` with each deprecated ``old`` key of ``renames`` moved to its ``new`` key.

    Giving both spellings is a :class:`TypeError`; the old one emits a
    :class:`FutureWarning` that names the new one. ``owner`` names the callee in both.
    """
    for old, new in renames.items():
        if old in kwargs:
            if new in kwargs:
                raise TypeError(f"{owner} got both {old!r} (deprecated) and {new!r}; "
                                f"give only {new!r}")
            _warn(owner, old, new, stacklevel=stacklevel)
            kwargs[new] = kwargs.pop(old)
    return kwargs


def renamed_keywords(**renames: str) -> Callable[[F], F]:
    """Decorator: accept ``old=value`` for each ``old=new`` pair, as ``new=value``.

    Giving both spellings is a :class:`TypeError`; the old one emits a
    :class:`FutureWarning` that names the new one. The map is kept on the wrapper as
    ``__renamed_keywords__`` (:func:`conicml.solve` reads it for a registered solver's
    renamed options).
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            translate_keywords(f"{fn.__name__}()", renames, kwargs)
            return fn(*args, **kwargs)

        wrapper.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        wrapper.__renamed_keywords__ = dict(renames)  # type: ignore[attr-defined]
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
    """The value of estimator parameter ``new``, or of the deprecated ``old`` if it was set.

    Setting ``old`` together with a ``new`` that differs from its default is a
    :class:`TypeError` (both spellings given); ``old`` alone emits a
    :class:`FutureWarning` naming ``new``.
    """
    value_old = getattr(estimator, old)
    if isinstance(value_old, str) and value_old == DEPRECATED:
        return getattr(estimator, new)
    default = inspect.signature(type(estimator).__init__).parameters[new].default
    value_new = getattr(estimator, new)
    if not _same(value_new, default):
        raise TypeError(f"{type(estimator).__name__} got both {old!r}={value_old!r} "
                        f"(deprecated) and {new!r}={value_new!r}; give only {new!r}")
    _warn(type(estimator).__name__, old, new, stacklevel=4)
    return value_old


def _same(a: Any, b: Any) -> bool:
    """``a is b`` or an equal plain value (a parameter left at its default)."""
    if a is b:
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # an array or another object without a plain truth value
        return False
