r"""The closed-form step A4 of ``cbor-smo`` (seed 003 ch. 5, (5.6)), shared by its NumPy
loops and its compiled linear loop (:mod:`conicml.solvers._cbor_numba` compiles this
same function), so that neither imports the other.
"""

from __future__ import annotations

import math

__all__ = ["step"]


def step(A: float, B: float, Cq: float, e: float, ub: float) -> float:
    r"""Minimiser of :math:`\sqrt{A\delta^2 + 2B\delta + C} - e\delta` on [0, ub] (A4)."""
    if A <= 0.0 or e * e >= A:
        # the square root's slope is below sqrt(A) <= |e|: monotone, go to the end
        # that decreases the objective (e > 0: right end; e < 0: left end)
        return ub if e > 0 else 0.0
    h = max(A * Cq - B * B, 0.0)  # >= 0 for a PSD quadratic; clamp round-off
    delta = (e * math.sqrt(h / (A - e * e)) - B) / A
    return min(max(delta, 0.0), ub)
