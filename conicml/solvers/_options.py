"""One check of the options every iterative solver shares (style guide, convention 5).

``tol`` is a positive finite number, ``max_iter`` an integer and ``time_limit``
a number of seconds or ``None``, with the same meaning in every solver. Solvers
that can return a certified point without iterating (warm start at the optimum:
``smo``, ``lin-han``, ``cbor-smo``, ``cbc-smo``) accept ``max_iter=0`` and
``time_limit=0`` (``allow_zero=True``); the others need at least one step.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from ..exceptions import OptionError

__all__ = ["check_common"]


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
