"""Metrics of the reproduced theses (each topic in a private module, re-exported here).

* ranking (seeds 000, 002): :func:`auc` (eq. 3.2, ties as in the thesis) and :func:`mauc`;
* real-time classification (seed 001 ch. 5): :func:`relative_error` (5.8),
  :func:`relative_complexity` (5.9), :func:`relative_cost`, :func:`prediction_operations`.
"""

from ._cost import (
    prediction_operations,
    relative_complexity,
    relative_cost,
    relative_error,
)
from ._ranking import auc, mauc

__all__ = [
    "auc",
    "mauc",
    "prediction_operations",
    "relative_complexity",
    "relative_cost",
    "relative_error",
]
