r"""Accuracy/complexity trade-off metrics of seed 001, ch. 5–6 (eqs. 5.8–5.9, §6.2).

They place a cheap classifier between two baselines: the linear SVM (cheapest,
usually least accurate) and the non-linear SVM (most accurate, most costly).
"""

from __future__ import annotations

import numpy as np

__all__ = ["prediction_operations", "relative_complexity", "relative_cost",
           "relative_error"]


def _finite(value, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def _out(arr: np.ndarray):
    return float(arr) if arr.ndim == 0 else arr


def relative_error(error, linear_error, nonlinear_error):
    r"""RE (5.8): :math:`(e_{LSVM} - e)/(e_{LSVM} - e_{SVM})`.

    Parameters
    ----------
    error : float or array-like
        Error of the classifier under study (any unit, e.g. percent).
    linear_error, nonlinear_error : float or array-like
        Errors of the linear and of the non-linear (kernel) SVM, same unit.

    Raises
    ------
    ValueError
        Non-finite input, or equal baseline errors (RE undefined).

    Notes
    -----
    .. math::

        RE = \frac{e_{LSVM} - e}{e_{LSVM} - e_{SVM}} \quad (5.8)

    RE = 1 means "as accurate as the non-linear SVM", RE = 0 "as the linear SVM";
    RE > 1 or < 0 happen (Covtype: 2.41).
    """
    e = _finite(error, "error")
    el = _finite(linear_error, "linear_error")
    en = _finite(nonlinear_error, "nonlinear_error")
    if np.any(el == en):
        raise ValueError("linear_error equals nonlinear_error: RE is undefined")
    return _out((el - e) / (el - en))


def relative_complexity(n_hyperplanes, n_support_vectors):
    r"""RC (5.9): :math:`(\mathrm{Hyp} - 1)/(n_{SV} - 1)`.

    ``n_hyperplanes`` is the mean number of hyperplanes evaluated per test
    sample (Table 5.4's "Hyp"); ``n_support_vectors`` the kernel SVM's
    :math:`n_{SV}` (> 1).

    Notes
    -----
    .. math::

        RC = \frac{\mathrm{Hyp} - 1}{n_{SV} - 1} \quad (5.9)

    RC = 0 means one hyperplane (the linear SVM's cost), RC = 1 the kernel SVM's cost.
    """
    hyp = _finite(n_hyperplanes, "n_hyperplanes")
    nsv = _finite(n_support_vectors, "n_support_vectors")
    if np.any(hyp < 0):
        raise ValueError(f"n_hyperplanes must be >= 0, got {n_hyperplanes!r}")
    if np.any(nsv <= 1):
        raise ValueError(f"n_support_vectors must be > 1, got {n_support_vectors!r}")
    return _out((hyp - 1.0) / (nsv - 1.0))


def relative_cost(value, linear_value, nonlinear_value):
    r"""RCC / RCT / RTT (§6.2): :math:`(v - v_{LSVM})/(v_{NLSVM} - v_{LSVM})`.

    ``value`` is an operation count (:func:`prediction_operations`), a
    per-sample classification time or a training time; the baselines are those
    of the linear and the non-linear SVM on *all* features.

    Notes
    -----
    For chapter 6, the same normalisation as RE and RC of any cost :math:`v` (operation
    counts for RCC, classification or training times for RCT and RTT) between the
    two baselines:

    .. math::

        R(v) = \frac{v - v_{LSVM}}{v_{NLSVM} - v_{LSVM}} .
    """
    v = _finite(value, "value")
    vl = _finite(linear_value, "linear_value")
    vn = _finite(nonlinear_value, "nonlinear_value")
    if np.any(vl == vn):
        raise ValueError("linear_value equals nonlinear_value: the relative cost is undefined")
    return _out((v - vl) / (vn - vl))


def prediction_operations(model: str, n_features, count=1.0):
    r"""Operations to classify one sample, as counted for RCC (§6.2, pitfall P-H7).

    ``model="linear"``: :math:`M`; ``"kernel"``: :math:`n_{SV} M` (``count`` is
    :math:`n_{SV}`, one operation per kernel evaluation, :math:`n_K = 1`);
    ``"hlsvm"``: :math:`\mathrm{Hyp}\,M` (``count`` is the mean number of
    hyperplanes evaluated).
    """
    m = _finite(n_features, "n_features")
    c = _finite(count, "count")
    if model == "linear":
        return _out(m * 1.0)
    if model in ("kernel", "hlsvm"):
        return _out(c * m)
    raise ValueError(f"model must be 'linear', 'kernel' or 'hlsvm', got {model!r}")
