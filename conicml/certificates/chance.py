r"""Shared pieces of the kind-specific certificates of the chance-constrained kinds.

Seed 003 (chapters 2–5, App. B–C): the specified-rates, CBC, CBOR and SVOR
programs are certified by a **primal/dual bracket** computed from the returned
point and the Program's data alone, in :math:`O(\text{data})` (no cvxpy problem
is built, no multiplier is refitted):

* a *dual-feasible* point gives a lower bound :math:`D` on the optimum of the
  minimised primal (weak duality), a *primal-feasible* point an upper bound
  :math:`P`; :math:`(P - D)/\text{scale} \le \text{tol}` certifies both;
* a dual kind's point implies a primal point in closed form (the decoding
  formulas of the thesis), repaired to be feasible (slacks recomputed, the
  offset / thresholds chosen optimally for the implied scores), so :math:`P` is a
  true upper bound; a primal kind's point is repaired the same way and its
  multipliers (from the solution, or recovered in closed form) give :math:`D`.

The functions here are pure numpy on arrays; the kind-specific certificates
live with their formulations (:mod:`conicml.formulations.specified_rates`,
:mod:`~conicml.formulations.cbc`, :mod:`~conicml.formulations.ordinal`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
from scipy.optimize import minimize_scalar

from ..solution import Residuals, Solution
from .conic import PRIMAL_FLOOR, rel, residuals

__all__ = ["SLACK_FLOOR", "best_offset", "best_scale", "bracket", "claimed_gap", "missing",
           "row_violation", "values_of"]

#: Objectives that are a sum of slacks (CBC W-form, CBOR, SVOR-W) are measured in
#: units of the margin, which the programs normalise to 1: a bracket below this
#: absolute size (1e-3 of one margin) is judged against it, so that an optimum at
#: :math:`\sum\xi = 0` (separable data) is not read as a relative gap of 1.
SLACK_FLOOR = 1e-3

_TINY = np.finfo(float).tiny


def values_of(solution: Solution, *names: str) -> list[np.ndarray] | None:
    """The named values as finite float arrays, or ``None`` if one is missing / not finite."""
    out = []
    for name in names:
        if name not in solution.values:
            return None
        arr = np.atleast_1d(np.asarray(solution.values[name], dtype=float))
        if not np.all(np.isfinite(arr)):
            return None
        out.append(arr)
    return out


def missing() -> Residuals:
    """The residuals of a solution without a (finite) point: nothing to certify."""
    return residuals(math.inf, math.nan, math.nan)


def row_violation(viol: np.ndarray, scale: np.ndarray, global_scale: float | None = None
                  ) -> float:
    """Largest ``viol_i / scale_i``, each scale floored at ``PRIMAL_FLOOR`` of the largest.

    ``scale_i`` is the magnitude of the terms of row ``i`` (house rule of
    :mod:`conicml.certificates.conic`); ``global_scale`` overrides the largest term.
    """
    viol = np.maximum(np.asarray(viol, dtype=float), 0.0)
    if viol.size == 0:
        return 0.0
    scale = np.abs(np.asarray(scale, dtype=float))
    top = float(np.max(scale, initial=0.0)) if global_scale is None else float(global_scale)
    den = np.maximum(scale, max(PRIMAL_FLOOR * top, _TINY))
    return float(np.max(viol / den))


def best_offset(c: np.ndarray, y: np.ndarray,
                weights: np.ndarray | float = 1.0) -> tuple[float, float]:
    r"""Exact minimiser of :math:`h(b) = \sum_j u_j(c_j - y_jb)_+` over the offset :math:`b`.

    ``y`` holds :math:`\pm 1` with both signs present, ``weights`` :math:`u_j > 0`
    (per-cluster slack costs). :math:`h` is convex and piecewise linear with
    breakpoints :math:`y_jc_j`; its right slope :math:`-\sum_{y_j = 1, c_j > b} u_j +
    \sum_{y_j = -1, -c_j \le b} u_j` is non-decreasing, and the first breakpoint where
    it is :math:`\ge 0` is a minimiser (:math:`O(k\log k)`). Returns ``(b, h(b))``.
    """
    u = np.broadcast_to(np.asarray(weights, dtype=float), c.shape)
    pos, neg = y > 0, y < 0
    if not (np.any(pos) and np.any(neg)):  # one class: h is monotone, its infimum is 0
        return (math.inf if np.any(pos) else -math.inf), 0.0
    op, on = np.argsort(c[pos]), np.argsort(-c[neg])
    bp, up = c[pos][op], u[pos][op]  # positives' breakpoints b = c_j, ascending
    bn, un = -c[neg][on], u[neg][on]  # negatives' breakpoints b = -c_j, ascending
    cum_p = np.concatenate([[0.0], np.cumsum(up)])
    cum_n = np.concatenate([[0.0], np.cumsum(un)])
    cand = np.sort(np.concatenate([bp, bn]))
    slope = -(cum_p[-1] - cum_p[np.searchsorted(bp, cand, side="right")]) \
        + cum_n[np.searchsorted(bn, cand, side="right")]
    b = float(cand[int(np.argmax(slope >= 0))])
    return b, float(np.sum(u * np.maximum(c - y * b, 0.0)))


def bracket(upper: float, lower: float, floor: float = 0.0) -> float:
    r"""Relative primal/dual gap :math:`(P - D)_+ / \max(|P|, |D|, \text{floor})`."""
    if not (math.isfinite(upper) and math.isfinite(lower)):
        return math.inf
    return rel(max(upper - lower, 0.0), upper, lower, floor)


def claimed_gap(solution: Solution, value: float, *scales: float) -> float:
    """Relative mismatch between the reported objective and the point's own ``value``."""
    claimed = float(solution.objective)
    if not math.isfinite(claimed):
        return math.inf
    return rel(claimed - value, value, *scales)


def dual_of(solution: Solution, name: str) -> np.ndarray | None:
    """A constraint's multipliers from the solution (``None`` if absent or not finite)."""
    duals: Mapping = solution.duals or {}
    if name not in duals or duals[name] is None:
        return None
    arr = np.atleast_1d(np.asarray(duals[name], dtype=float)).ravel()
    return arr if np.all(np.isfinite(arr)) else None


def best_scale(value: Callable[[float], float], start: float, hi: float) -> float:
    r""":math:`\min_{0 \le s \le hi}` of a convex 1-D upper bound, from ``value(start)``.

    The primal points a dual point implies lie on a ray :math:`w = s\,\hat w`
    (:math:`\hat w` the direction of :math:`\sum_j\alpha_jy_j\phi(\mu_j)`); the direction
    of an interior-point :math:`\alpha` is accurate where its length
    (:math:`t = \lambda - r^\top\alpha`, a difference of nearly equal numbers) is not, so
    the bound is minimised over the length (bounded Brent, relative tolerance 1e-10).
    Every value is attained by a feasible point, so the minimum is still an upper bound.
    """
    best = value(start)
    if not (hi > 0 and math.isfinite(hi)):
        return best
    res = minimize_scalar(value, bounds=(0.0, hi), method="bounded",
                          options={"xatol": 1e-10 * hi, "maxiter": 200})
    return min(best, float(res.fun), value(hi))
