"""KKT helpers shared by the single-equality box-constrained duals (SVM, CBC)."""

from __future__ import annotations

import numpy as np

__all__ = ["bias_from_kkt", "free_tolerance", "solver_accuracy"]


def solver_accuracy(solution) -> float:
    """How far a dual point may sit from its box: its primal residual (the dual
    program's own constraint violation); 0 for exact-bound solvers such as SMO."""
    primal = solution.residuals.primal
    return float(primal) if np.isfinite(primal) else 0.0


def free_tolerance(alpha: np.ndarray, accuracy: float = 0.0) -> float:
    """Distance to a bound under which a multiplier counts as *at* the bound.

    Interior-point solutions sit ~1e-9 relative inside the bounds, so 1e-6 of
    the largest multiplier separates "at a bound" from "free" (relative at every
    scale of C). A first-order
    solver (SCS) stops ~1e-5 away: a multiplier within ten times the solver's
    own constraint violation (:func:`solver_accuracy`) of a bound cannot be
    told apart from the bound either, so the tolerance grows to that (capped
    at 1e-3 of the scale).
    """
    # relative to the multipliers' own scale (not to max(1, .)): with C = 1e-6 every
    # multiplier is <= 1e-6 and an absolute floor of 1e-6 would call them all "at 0"
    scale = float(np.max(np.abs(alpha), initial=0.0))
    if not scale > 0:
        scale = 1.0
    accuracy = float(accuracy) if np.isfinite(accuracy) else 0.0
    return max(1e-6 * scale, min(10.0 * accuracy, 1e-3 * scale))


def bias_from_kkt(alpha: np.ndarray, y: np.ndarray, upper: np.ndarray | float,
                  score: np.ndarray, accuracy: float = 0.0) -> float:
    r"""Bias :math:`b` of a dual with :math:`0 \le \alpha \le u`, :math:`y^\top\alpha = 0`.

    ``score`` is :math:`r_i = -y_i G_i` (:math:`G` the gradient of the
    minimised dual). Every free multiplier (:math:`0 < \alpha_i < u_i`) has
    :math:`b = r_i`, and :math:`b` is their average (seed 001 eq. 2.29 with the
    correction of pitfall P-S1: bounded multipliers do not satisfy the margin
    equality). Without free multipliers the KKT conditions only bound
    :math:`b` — below by :math:`r_i` on
    :math:`\{y_i=+1,\alpha_i=0\}\cup\{y_i=-1,\alpha_i=u_i\}`, above on the other
    two sets — and the midpoint of that interval is returned, as in LIBSVM.
    ``accuracy`` is the solver's reported accuracy (see :func:`free_tolerance`).
    """
    tol = free_tolerance(alpha, accuracy)
    at_lower = alpha <= tol
    at_upper = alpha >= upper - tol
    free = ~at_lower & ~at_upper
    if np.any(free):
        return float(np.mean(score[free]))
    lower_set = ((y > 0) & at_lower) | ((y < 0) & at_upper)
    upper_set = ((y > 0) & at_upper) | ((y < 0) & at_lower)
    lo = np.max(score[lower_set]) if np.any(lower_set) else -np.inf
    hi = np.min(score[upper_set]) if np.any(upper_set) else np.inf
    if np.isfinite(lo) and np.isfinite(hi):
        return float(0.5 * (lo + hi))
    return float(lo if np.isfinite(lo) else hi if np.isfinite(hi) else 0.0)
