"""Metrics of the reproduced theses (each topic in a private module, re-exported here)."""

from ._cost import (
    prediction_operations,
    relative_complexity,
    relative_cost,
    relative_error,
)

__all__ = [
    "prediction_operations",
    "relative_complexity",
    "relative_cost",
    "relative_error",
]
