"""Numbers read from the cells of markdown tables (reproductions, their figures)."""

from __future__ import annotations

import re

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def number(cell: str) -> float | None:
    """The first number of a table cell (``None`` if it has none)."""
    m = _NUMBER.search(cell.replace("−", "-").replace(",", ""))
    return float(m.group()) if m else None
