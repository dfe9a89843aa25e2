"""Metrics of the reproduced theses (each topic in a private module, re-exported here).

* ranking (seeds 000, 002): :func:`auc` (eq. 3.2, ties as in the thesis) and :func:`mauc`;
* subset-basis bounds (seed 000 ch. 4): :func:`projected_map_bound` (Thm 6 / Cor 7),
  :func:`rare_first_bound_curve` (Fig 4.1), :func:`nystrom_svm_bound` (Thm 9),
  :func:`kernel_perturbation_bound` (Thm 10), :func:`nystrom_residual_norm`;
* real-time classification (seed 001 ch. 5): :func:`relative_error` (5.8),
  :func:`relative_complexity` (5.9), :func:`relative_cost`, :func:`prediction_operations`.
"""

from ._bounds import (
    kernel_perturbation_bound,
    nystrom_residual_norm,
    nystrom_svm_bound,
    projected_map_bound,
    rare_first_bound_curve,
)
from ._cost import (
    prediction_operations,
    relative_complexity,
    relative_cost,
    relative_error,
)
from ._ranking import auc, mauc

__all__ = [
    "auc",
    "kernel_perturbation_bound",
    "mauc",
    "nystrom_residual_norm",
    "nystrom_svm_bound",
    "prediction_operations",
    "projected_map_bound",
    "rare_first_bound_curve",
    "relative_complexity",
    "relative_cost",
    "relative_error",
]
