r"""Feature equilibration shared by the affine-invariant formulations.

A formulation whose model is invariant to a rescaling of the features (MPM,
BMPM, MEMPM, M4; the LSVR objective) solves the program in *internal*
coordinates :math:`\tilde x = x / s` (elementwise, :func:`feature_scales`) and maps the
weights back, :math:`w = \tilde w / s`, in ``decode``.

The invariance needs a ridge that moves with the features
(:func:`relative_ridge_diagonal`); models that depend on the units warn about badly
scaled input (:func:`warn_if_badly_scaled`).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import ConicMLWarning

__all__ = ["EQUILIBRATE_RANGE", "SPREAD_RATIO_LIMIT", "feature_scales", "relative_ridge_diagonal",
           "warn_if_badly_scaled"]

#: Columns whose spread lies in this range are left as they are.
EQUILIBRATE_RANGE = (1e-2, 1e2)


def feature_scales(spread: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    r"""Power-of-two column scales :math:`s_j` from a per-column spread (std, |mean gap|).

    A zero or non-finite spread uses ``fallback`` (another magnitude of the
    column, e.g. its largest absolute entry), then 1.

    Notes
    -----
    With :math:`\tilde x = x / s` and :math:`w = \tilde w / s`, :math:`\tilde w^\top\tilde x =
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


def relative_ridge_diagonal(variances: np.ndarray, relative_ridge: float) -> np.ndarray:
    r"""The diagonal :math:`r\,v` of the relative covariance ridge :math:`r\,\mathrm{diag}(v)`.

    :math:`v_j` is the variance of feature :math:`j` over the training inputs. Under a
    rescaling :math:`x \mapsto Dx` (:math:`D` diagonal, positive) :math:`v \mapsto D^2 v`, so
    :math:`\Sigma + r\,\mathrm{diag}(v) \mapsto D(\Sigma + r\,\mathrm{diag}(v))D`: the
    ridge moves with the covariances and a scale-invariant model stays invariant. A
    constant feature (:math:`v_j = 0`) gets the mean of the other variances (1 if every
    feature is constant): it carries no information, its weight is 0 at the optimum
    whatever its ridge, and a positive ridge keeps the covariances definite.
    """
    v = np.asarray(variances, dtype=float)
    positive = v > 0
    fill = float(np.mean(v[positive])) if np.any(positive) else 1.0
    return relative_ridge * np.where(positive, v, fill)


#: Features whose standard deviations differ by more than this factor make the models
#: that depend on the units (kernels, an L2 penalty on w) warn (:func:`warn_if_badly_scaled`).
SPREAD_RATIO_LIMIT = 1e4


def _column_std(X: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """Column standard deviations in row chunks: O(chunk x columns) extra memory, not a
    centred copy of ``X`` (the cluster estimators fit data far larger than their model)."""
    mean = X.mean(axis=0)
    ss = np.zeros(X.shape[1])
    for start in range(0, X.shape[0], chunk):
        part = X[start:start + chunk] - mean
        ss += np.einsum("ij,ij->j", part, part)
    return np.sqrt(ss / X.shape[0])


def warn_if_badly_scaled(X: np.ndarray, model: str, why: str, *, stacklevel: int = 3) -> None:
    """Warn (:class:`~conicml.ConicMLWarning`) when the features of ``X`` have spreads
    (standard deviations) more than :data:`SPREAD_RATIO_LIMIT` apart.

    For the models whose fit depends on the units of the features (``why`` says how:
    an RBF distance, an L2 penalty on :math:`w`, ...) the largest feature then decides
    the model alone; the message names the two extreme columns and the remedy.
    Constant columns are ignored.
    """
    if hasattr(X, "nnz") and hasattr(X, "multiply"):  # scipy.sparse: moments, no dense copy
        if len(X.shape) != 2 or X.shape[0] < 2 or X.shape[1] < 2:
            return
        X = X.tocsr()
        n, d = X.shape
        mean = np.bincount(X.indices, weights=X.data, minlength=d) / n
        sq = np.bincount(X.indices, weights=X.data * X.data, minlength=d) / n
        std = np.sqrt(np.maximum(sq - mean**2, 0.0))
    else:
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 2:
            return
        std = _column_std(X)
    spread = np.flatnonzero(np.isfinite(std) & (std > 0))
    if spread.size < 2:
        return
    hi = int(spread[np.argmax(std[spread])])
    lo = int(spread[np.argmin(std[spread])])
    ratio = float(std[hi] / std[lo])
    if ratio > SPREAD_RATIO_LIMIT:
        warnings.warn(
            f"badly scaled input for {model}: feature spreads differ by a factor "
            f"{ratio:.3g} > {SPREAD_RATIO_LIMIT:.0e} (column {hi}: std {std[hi]:.3g}, column "
            f"{lo}: std {std[lo]:.3g}); {model} depends on the units of the features "
            f"({why}), so the largest ones decide it: standardize X (e.g. "
            "sklearn.preprocessing.StandardScaler in a pipeline)",
            ConicMLWarning, stacklevel=stacklevel)
