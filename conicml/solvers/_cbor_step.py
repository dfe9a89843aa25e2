r"""The closed-form step A4 of ``cbor-smo`` (seed 003 ch. 5, (5.6)) and the pair move,
shared by its NumPy loops and its compiled loops
(:mod:`conicml.solvers._cbor_numba` compiles these same functions), so that neither
imports the other.
"""

from __future__ import annotations

import math

__all__ = ["move_pair", "step"]


def step(A: float, B: float, Cq: float, e: float, ub: float) -> float:
    r"""Minimiser of :math:`\sqrt{A\delta^2 + 2B\delta + C} - e\delta` on [0, ub] (A4)."""
    if A <= 0.0 or e * e >= A:
        # the square root's slope is below sqrt(A) <= |e|: monotone, go to the end
        # that decreases the objective (e > 0: right end; e < 0: left end)
        return ub if e > 0 else 0.0
    h = max(A * Cq - B * B, 0.0)  # >= 0 for a PSD quadratic; clamp round-off
    delta = (e * math.sqrt(h / (A - e * e)) - B) / A
    return min(max(delta, 0.0), ub)


def move_pair(x, low, up, sig, lv: int, uv: int, delta: float) -> None:  # noqa: ANN001
    r"""Move ``delta`` between variables ``lv`` and ``uv`` (signs ``sig``), in place.

    Each moved variable is snapped to its box :math:`[0, 1]` within 1e-15 and its
    membership of the bound sets is updated: ``low`` (it may still move down in the
    signed direction) and ``up`` (it may still move up).
    """
    x[lv] += sig[lv] * delta
    x[uv] -= sig[uv] * delta
    for var in (lv, uv):
        if x[var] < 1e-15:
            x[var] = 0.0
        elif x[var] > 1.0 - 1e-15:
            x[var] = 1.0
        if sig[var] > 0:
            low[var] = x[var] < 1.0
            up[var] = x[var] > 0.0
        else:
            low[var] = x[var] > 0.0
            up[var] = x[var] < 1.0
