"""``m4-line-search``: deprecated name of the soft-margin M4 line searches (removed in 0.3).

The same algorithm was registered twice (``m4-line-search`` and
``quadratic-interpolation``, with different defaults); each algorithm now has
one name: ``quadratic-interpolation`` (the thesis's search, the old default
``method``) and ``brent`` (the old ``method="brent"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import kinds
from ..program import Program
from ..registry import register
from ..solution import Solution
from ._callback import Callback
from ._m4_search import solve_soft_m4

__all__ = ["solve_m4_line_search"]


@register("m4-line-search", kinds=[kinds.M4_SOFT],
          deprecated="use 'quadratic-interpolation' (or 'brent' for method='brent')",
          description="deprecated: 'quadratic-interpolation' or 'brent'")
def solve_m4_line_search(
    program: Program,
    *,
    tol: float = 1e-8,
    max_iter: int = 60,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: float | None = None,
    inner: str = "clarabel",
    inner_options: Mapping[str, Any] | None = None,
    method: str = "quadratic-interpolation",
) -> Solution:
    """Deprecated: ``quadratic-interpolation`` or ``brent`` under the old name."""
    return solve_soft_m4(program, solver="m4-line-search", method=method, tol=tol,
                         max_iter=max_iter, time_limit=time_limit, verbose=verbose,
                         callback=callback, x0=x0, inner=inner, inner_options=inner_options)
