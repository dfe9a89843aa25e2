r"""The L2-loss (squared hinge) linear SVM as a conic program, dense or sparse ``X``.

Hsieh, Chang, Lin, Keerthi and Sundararajan (ICML 2008), the L2-loss SVM with an
unregularised bias, per-sample costs :math:`c_i = C\,\omega_{y_i}s_i` (class weights
:math:`\omega`, sample weights :math:`s`); the programs and their certificate are in the
Notes of :func:`squared_hinge`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .. import kinds
from .._utils.validation import check_positive, check_X_y
from ..certificates.squared_hinge import (
    balanced,
    dual_value,
    primal_value,
    squared_hinge_bias,
)
from ..exceptions import ProgramError
from ..kernels import Kernel
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution
from .svm import _check_sparse_X_y, _is_sparse, _per_sample_costs, _sample_weight

__all__ = ["squared_hinge"]


def _build_primal(data: Mapping[str, Any]) -> ConicForm:
    X, y, c = data["X"], data["y"], data["c"]
    w = cp.Variable(X.shape[1], name="w")
    b = cp.Variable(name="b")
    xi = cp.Variable(y.size, name="xi")
    margin = cp.multiply(y, X @ w + b) >= 1 - xi
    objective = 0.5 * cp.sum_squares(w) + cp.sum(cp.multiply(c, cp.square(xi)))
    problem = cp.Problem(cp.Minimize(objective), [margin])
    return ConicForm(problem, {"w": w, "b": b, "xi": xi}, {"margin": margin})


def _build_dual(data: Mapping[str, Any]) -> ConicForm:
    X, y, c = data["X"], data["y"], data["c"]
    alpha = cp.Variable(y.size, name="alpha")
    objective = (cp.sum(alpha) - 0.5 * cp.sum_squares(X.T @ cp.multiply(y, alpha))
                 - cp.sum(cp.multiply(0.25 / c, cp.square(alpha))))
    constraints = {"alpha_nonneg": alpha >= 0, "balance": y @ alpha == 0}
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha}, constraints)


def _f(X: Any, w: np.ndarray) -> np.ndarray:
    return np.asarray(X @ w).ravel()


def _wa(X: Any, alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(X.T @ (alpha * y)).ravel()


def _certify_dual(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the dual from :math:`\alpha` alone, in :math:`O(\mathrm{nnz}(X))`.

    ``primal``: the largest violation of :math:`\alpha \ge 0`, :math:`y^\top\alpha = 0`
    relative to :math:`\max(1, \max\alpha)`; ``dual`` and ``gap``: the relative duality
    gap :math:`(P - D)/\max(1, |P|)` between the dual value :math:`D` of the point made
    feasible (:func:`~conicml.certificates.squared_hinge.balanced`) and the primal value
    :math:`P` of :math:`w = X^\top(\alpha\circ y)` with its best bias, and the mismatch of
    the reported objective with :math:`D`.
    """
    X, y, c = data["X"], data["y"], data["c"]
    try:
        alpha = np.asarray(solution.values["alpha"], dtype=float).ravel()
    except (KeyError, TypeError, ValueError):
        return Residuals(primal=math.inf, dual=math.nan, gap=math.nan, source="recomputed")
    if alpha.shape != y.shape or not np.all(np.isfinite(alpha)):
        return Residuals(primal=math.inf, dual=math.nan, gap=math.nan, source="recomputed")
    scale = max(1.0, float(np.max(np.abs(alpha))))
    primal = max(abs(float(y @ alpha)), float(np.max(-alpha, initial=0.0))) / scale
    a = balanced(alpha, y)
    w = _wa(X, a, y)
    f = _f(X, w)
    D = dual_value(a, w, c)
    P = primal_value(w, f, squared_hinge_bias(f, y, c), y, c)
    gap = max(P - D, 0.0) / max(1.0, abs(P))
    claimed = float(solution.objective)
    gap = max(gap, abs(claimed - D) / max(1.0, abs(D)) if claimed == claimed else math.inf)
    return Residuals(primal=primal, dual=gap, gap=gap, source="recomputed")


def _certify_primal(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the primal from :math:`(w, b, \xi)`, in :math:`O(\mathrm{nnz}(X))`.

    The loss is smooth, so the point's margins :math:`m_i = y_i(w^\top x_i + b)` fix its
    dual point, :math:`\alpha_i = 2c_i[1 - m_i]_+` (stationarity in :math:`\xi`); it and the
    solver's margin multipliers, if any, made dual feasible, are the candidates for the
    lower bound :math:`D`. ``primal``: the largest violation of a margin row, relative;
    ``dual``: :math:`\tfrac12\|w - X^\top(\alpha\circ y)\|^2/\max(1, P)` (stationarity in
    :math:`w`); ``gap``: :math:`(P - D)/\max(1, |P|)` of the point's value
    :math:`P = \tfrac12\|w\|^2 + \sum_i c_i\xi_i^2` and the mismatch of the reported
    objective.
    """
    X, y, c = data["X"], data["y"], data["c"]
    values = solution.values
    try:
        w = np.asarray(values["w"], dtype=float).ravel()
        b = float(np.asarray(values["b"], dtype=float))
        xi = np.asarray(values["xi"], dtype=float).ravel()
    except (KeyError, TypeError, ValueError):
        return Residuals(primal=math.inf, dual=math.nan, gap=math.nan, source="recomputed")
    if (w.shape != (X.shape[1],) or xi.shape != y.shape
            or not (np.all(np.isfinite(w)) and math.isfinite(b) and np.all(np.isfinite(xi)))):
        return Residuals(primal=math.inf, dual=math.nan, gap=math.nan, source="recomputed")
    margin = y * (_f(X, w) + b)
    viol = np.maximum(0.0, 1.0 - xi - margin) / np.maximum.reduce(
        [np.ones_like(margin), np.abs(margin), np.abs(xi)])
    primal = float(np.max(viol, initial=0.0))
    P = 0.5 * float(w @ w) + float(c @ (xi * xi))
    scale = max(1.0, abs(P))
    candidates = [2.0 * c * np.maximum(0.0, 1.0 - margin)]
    m = solution.duals.get("margin")
    if m is not None:
        m = np.asarray(m, dtype=float).ravel()
        if m.shape == y.shape and np.all(np.isfinite(m)):
            candidates.append(m)
    best = (math.inf, math.inf)
    for alpha in candidates:
        a = balanced(alpha, y)
        u = _wa(X, a, y)
        dw = w - u
        cand = (0.5 * float(dw @ dw) / scale, max(P - dual_value(a, u, c), 0.0) / scale)
        if max(cand) < max(best):
            best = cand
    dual, gap = best
    claimed = float(solution.objective)
    gap = max(gap, abs(claimed - P) / scale) if math.isfinite(claimed) else math.inf
    return Residuals(primal=primal, dual=dual, gap=gap, source="recomputed")


def _model(data: Mapping[str, Any], alpha: np.ndarray, w: np.ndarray | None,
           b: float | None) -> dict:
    X, y, c = data["X"], data["y"], data["c"]
    alpha = np.maximum(alpha, 0.0)
    if w is None:
        w = _wa(X, alpha, y)
    if b is None:
        b = squared_hinge_bias(_f(X, w), y, c)
    dual_coef = alpha * y
    support = np.flatnonzero(alpha > 1e-12 * max(1.0, float(alpha.max(initial=0.0))))
    return {"alpha": alpha, "dual_coef": dual_coef, "support": support, "b": float(b),
            "w": w}


def _decode_dual(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, kinds.SVM_L2_DUAL)
    return _model(data, np.asarray(solution.values["alpha"], dtype=float).ravel(), None, None)


def _decode_primal(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, kinds.SVM_L2_PRIMAL)
    w = np.asarray(solution.values["w"], dtype=float).ravel()
    b = float(np.asarray(solution.values["b"], dtype=float))
    y, c = data["y"], data["c"]
    if "margin" in solution.duals:
        alpha = np.asarray(solution.duals["margin"], dtype=float).ravel()
    else:  # stationarity in xi: alpha_i = 2 c_i xi_i
        alpha = 2.0 * c * np.maximum(0.0, 1.0 - y * (_f(data["X"], w) + b))
    return _model(data, alpha, w, b)


def _unique(data: Mapping[str, Any], model: Mapping[str, Any]) -> dict:
    """:math:`w` and the training decision values are unique (strictly convex in both)."""
    return {"w": model["w"], "f_train": _f(data["X"], model["w"]) + model["b"]}


def squared_hinge(
    X: Any,
    y: np.ndarray,
    C: float = 1.0,
    *,
    class_weight: Mapping[float, float] | str | None = None,
    sample_weight: np.ndarray | None = None,
    form: str = "primal",
) -> Program:
    r"""The L2-loss (squared hinge) linear SVM, kinds ``qp.svm.l2.primal|dual``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Training inputs (a sparse matrix is kept sparse, as CSR).
    y : ndarray of shape (n_samples,)
        Labels, exactly +1 or -1, both present.
    C : float, default=1.0
        Cost of a unit of squared slack (> 0).
    class_weight : dict {+1: w, -1: w} or "balanced", optional
        Per-class cost multipliers, as in :func:`conicml.formulations.svm.soft_margin`.
    sample_weight : ndarray of shape (n_samples,), optional
        Positive per-sample cost multipliers :math:`s_i`.
    form : {"primal", "dual"}, default="primal"

    Returns
    -------
    Program
        ``decode`` gives ``{"w", "b", "alpha", "dual_coef", "support"}``.

    Raises
    ------
    ProgramError
        Shape mismatch, NaN/inf, labels not in {-1, +1}, a single class, C <= 0,
        non-positive sample weights, unknown form.

    Notes
    -----
    With :math:`c_i = C\,\omega_{y_i}s_i`:

    .. math::

        \min_{w,b,\xi}\ \tfrac12\|w\|^2 + \sum_i c_i\xi_i^2
        \quad\text{s.t.}\quad y_i(w^\top x_i + b) \ge 1 - \xi_i

    (no :math:`\xi \ge 0`: a negative slack only costs), and its dual (Hsieh et al. 2008,
    eq. 4 with :math:`D_{ii} = 1/(2c_i)` and :math:`U = \infty`, plus :math:`y^\top\alpha
    = 0` from the unregularised bias)

    .. math::

        \max_\alpha\ \mathbf 1^\top\alpha - \tfrac12\|X^\top(\alpha\circ y)\|^2
        - \sum_i\frac{\alpha_i^2}{4c_i}
        \quad\text{s.t.}\quad \alpha \ge 0,\ y^\top\alpha = 0,

    with :math:`w = X^\top(\alpha\circ y)`, :math:`\alpha_i = 2c_i\xi_i`. The
    certificates are the relative duality gap of the returned point in
    :math:`O(\mathrm{nnz}(X))` (:mod:`conicml.certificates.squared_hinge`); decoding a
    dual point takes the exact minimiser of the primal over :math:`b` for :math:`w`.
    """
    if form not in ("primal", "dual"):
        raise ProgramError(f"form must be 'primal' or 'dual', got {form!r}")
    if C is None:
        raise ProgramError("C must be a positive number (the L2-loss SVM has no hard margin)")
    X, y = _check_sparse_X_y(X, y, "linear") if _is_sparse(X) else check_X_y(X, y)
    C = check_positive(C, "C")
    c, weights = _per_sample_costs(y, C, class_weight)
    s = _sample_weight(sample_weight, y.size)
    c = c * s
    data = {"X": X, "y": y, "c": c, "C": C, "class_weight": weights, "sample_weight": s,
            "kernel": Kernel("linear"), "hard": False, "form": form, "loss": "squared_hinge"}
    kind = kinds.SVM_L2_PRIMAL if form == "primal" else kinds.SVM_L2_DUAL
    return Program(
        kind,
        data,
        build=_build_primal if form == "primal" else _build_dual,
        certify=_certify_primal if form == "primal" else _certify_dual,
        decode=_decode_primal if form == "primal" else _decode_dual,
        default_solver="clarabel",
        description=f"L2-loss linear SVM (squared hinge, C={C:g}, {form})",
        unique=_unique,
    )
