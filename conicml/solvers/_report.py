"""Fixed-width iteration tables for ``verbose=True`` (the layout of scipy's
``_trustregion_constr/report.py``): a solver subclasses :class:`IterationReport`
and declares its columns as data."""

from __future__ import annotations

from typing import Any

__all__ = ["IterationReport"]


class IterationReport:
    """Base of the per-solver iteration tables; subclasses set the three lists."""

    COLUMN_NAMES: list[str] = []
    COLUMN_WIDTHS: list[int] = []
    ITERATION_FORMATS: list[str] = []

    @classmethod
    def print_header(cls) -> None:
        """Print the column names and a rule."""
        names = [f"{name:^{width}}" for name, width in zip(cls.COLUMN_NAMES, cls.COLUMN_WIDTHS)]
        print("|" + "|".join(names) + "|")
        print("|" + "|".join("-" * width for width in cls.COLUMN_WIDTHS) + "|")

    @classmethod
    def print_iteration(cls, *values: Any) -> None:
        """Print one row, formatting each value with its column's format."""
        cells = [f"{value:{fmt}}" for value, fmt in zip(values, cls.ITERATION_FORMATS)]
        print("|" + "|".join(cells) + "|")
