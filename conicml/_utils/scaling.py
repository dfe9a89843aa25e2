r"""Feature equilibration shared by the affine-invariant formulations.

A formulation whose model is invariant to a rescaling of the features (MPM,
BMPM, MEMPM, M4; the LSVR objective) solves the program in *internal*
coordinates :math:`\tilde x = x / s` (elementwise) and maps the weights back,
:math:`w = \tilde w / s`, in ``decode``: :math:`\tilde w^\top\tilde x =
w^\top x`, so the decision values, intercept and every scale-free quantity
(accuracies, margins, objective) are unchanged, while the conic solvers, the
specialized solvers and the eigenvalue cut-offs of
:func:`conicml.kernels.psd_factor` see columns of unit order instead of spreads
of :math:`10^{\pm 16}` (which made interior-point solvers return wrong
"optimal" points and cut real directions out of covariance factors).

The scales are powers of two, so the change of coordinates is exact in
floating point, and they are 1 for a column whose spread already lies in
:math:`[10^{-2}, 10^{2}]`, so well-scaled data are solved exactly as given.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EQUILIBRATE_RANGE", "feature_scales"]

#: Columns whose spread lies in this range are left as they are.
EQUILIBRATE_RANGE = (1e-2, 1e2)


def feature_scales(spread: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    """Power-of-two column scales :math:`s_j` from a per-column spread (std, |mean gap|).

    A zero or non-finite spread uses ``fallback`` (another magnitude of the
    column, e.g. its largest absolute entry), then 1.
    """
    spread = np.asarray(spread, dtype=float).copy()
    if fallback is not None:
        fallback = np.asarray(fallback, dtype=float)
        bad = ~(np.isfinite(spread) & (spread > 0))
        spread[bad] = fallback[bad]
    ok = np.isfinite(spread) & (spread > 0)
    lo, hi = EQUILIBRATE_RANGE
    scales = np.ones(spread.shape)
    move = ok & ((spread < lo) | (spread > hi))
    scales[move] = np.exp2(np.round(np.log2(spread[move])))
    return scales
