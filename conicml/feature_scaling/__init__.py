"""Feature-scaling optimisers for the Gaussian-kernel SVM (Tayal 2014, chapter 7).

See :mod:`conicml.feature_scaling._optim` for the algorithms and
:class:`conicml.estimators.FeatureScalingSVC` for the estimator.
"""

from ._bound_tr import TRResult, bound_trust_region
from ._optim import (
    METHODS,
    FSResult,
    fit_feature_scaling,
    gmkl_objective,
    projected_hessian_label,
    support_mask,
)

__all__ = [
    "METHODS",
    "FSResult",
    "TRResult",
    "bound_trust_region",
    "fit_feature_scaling",
    "gmkl_objective",
    "projected_hessian_label",
    "support_mask",
]
