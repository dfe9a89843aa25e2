r"""Compiled inner loop of ``smo`` (optional: needs ``numba``, the ``numba`` extra).

Why compiled (issue 14, profile in ``benchmarks/results/suite.md``): after the O(n n_SV)
certificate, an ``smo`` solve is its SMO loop, and the NumPy loop pays ~15 array
calls and the Python interpreter per two-variable update, ~100 us per iteration even
on a shrunk active set of a few hundred variables, where LIBSVM spends ~1-5 us. At
C = 100 (thousands of iterations) that alone was 2-3x LIBSVM's whole fit. The loop below
is the same algorithm as the NumPy path in :mod:`conicml.solvers.smo` (WSS2 selection,
the clipped two-variable update, the gradient update, the :math:`\bar G` bookkeeping),
written over the active index set with the Gram columns held in a 2-D array
(``store[slot]`` is column ``col_of[slot]``); it returns to Python when it needs a
column that is not stored, when the active set has converged, or after ``max_steps``
updates (shrinking, the stall test, limits, reports and the callback stay in Python).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._smo_pair import TAU as _TAU
from ._smo_pair import clip_pair

__all__ = ["CONVERGED", "NEED_COLUMN", "STEPS_DONE", "gather_matvec", "run"]

CONVERGED, NEED_COLUMN, STEPS_DONE = 0, 1, 2
_clip_pair = njit(cache=True, nogil=True, inline="always")(clip_pair)


@njit(cache=True, nogil=True)
def run(alpha, F, y, c, QD, Gb, is_up, is_low, act, n_act, store, slot_of, stamp, clock,
        tol, max_steps, track_gbar, out_i, out_f):  # pragma: no cover - compiled
    """Up to ``max_steps`` SMO updates on ``act[:n_act]``; see the module docstring.

    As in the NumPy loop, the stopping test comes first: a converged active set
    returns CONVERGED even with ``max_steps = 0``.

    ``out_i[0]``: the column needed (NEED_COLUMN); ``out_i[1]``: updates done;
    ``out_f[0]``: the last maximal violation m - M on the active set. ``is_up`` /
    ``is_low`` (uint8) are the memberships of :math:`I_{up}` / :math:`I_{low}`, kept
    up to date here for the two updated variables (LIBSVM's ``alpha_status``).
    """
    steps = 0
    out_f[0] = np.inf
    full = n_act == F.shape[0]  # no variable shrunk: act is the identity
    while True:
        # -- i: the maximal violating index (largest F over I_up), and M over I_low
        Gmax = -np.inf
        Gmin = np.inf
        i = -1
        for p in range(n_act):
            t = act[p]
            f = F[t]
            if is_up[t] and f > Gmax:
                Gmax = f
                i = t
            if is_low[t] and f < Gmin:
                Gmin = f
        viol = Gmax - Gmin
        out_f[0] = viol
        if not viol > tol:
            out_i[1] = steps
            return CONVERGED
        if steps >= max_steps:
            out_i[1] = steps
            return STEPS_DONE
        si_slot = slot_of[i]
        if si_slot < 0:
            out_i[0] = i
            out_i[1] = steps
            return NEED_COLUMN
        clock[0] += 1
        stamp[si_slot] = clock[0]
        Ki = store[si_slot]
        # -- j: second-order selection (WSS2) over I_low with F_t < Gmax
        best = -np.inf
        j = -1
        QDi = QD[i]
        for p in range(n_act):
            t = act[p]
            b = Gmax - F[t]
            if b > 0 and is_low[t]:
                quad = QDi + QD[t] - 2.0 * Ki[t]
                if quad <= 0:
                    quad = _TAU
                g = b * b / quad
                if g > best:
                    best = g
                    j = t
        sj_slot = slot_of[j]
        if sj_slot < 0:
            out_i[0] = j
            out_i[1] = steps
            return NEED_COLUMN
        clock[0] += 1
        stamp[sj_slot] = clock[0]
        Kj = store[sj_slot]
        # -- the two-variable update with clipping (LIBSVM's Solver::Solve)
        yi = y[i]
        yj = y[j]
        Ci = c[i]
        Cj = c[j]
        ai_old = alpha[i]
        aj_old = alpha[j]
        Gi = -yi * F[i]
        Gj = -yj * F[j]
        ai, aj = _clip_pair(ai_old, aj_old, yi, yj, Gi, Gj, QDi + QD[j] - 2.0 * Ki[j], Ci, Cj)
        alpha[i] = ai
        alpha[j] = aj
        if yi > 0:
            is_up[i] = ai < Ci
            is_low[i] = ai > 0
        else:
            is_up[i] = ai > 0
            is_low[i] = ai < Ci
        if yj > 0:
            is_up[j] = aj < Cj
            is_low[j] = aj > 0
        else:
            is_up[j] = aj > 0
            is_low[j] = aj < Cj
        si = yi * (ai - ai_old)
        sj = yj * (aj - aj_old)
        if si != 0.0 or sj != 0.0:
            if full:  # contiguous: the compiler vectorises this loop
                for t in range(n_act):
                    F[t] -= si * Ki[t] + sj * Kj[t]
            else:
                for p in range(n_act):
                    t = act[p]
                    F[t] -= si * Ki[t] + sj * Kj[t]
        if track_gbar:
            if (ai_old >= Ci) != (ai >= Ci):
                s = Ci * yi if ai >= Ci else -Ci * yi
                for t in range(F.shape[0]):
                    Gb[t] += s * Ki[t]
            if (aj_old >= Cj) != (aj >= Cj):
                s = Cj * yj if aj >= Cj else -Cj * yj
                for t in range(F.shape[0]):
                    Gb[t] += s * Kj[t]
        steps += 1


@njit(cache=True, nogil=True)
def gather_matvec(store, slots, coef, out):  # pragma: no cover - compiled
    """``out += store[slots].T @ coef`` without copying the stored columns."""
    n = out.shape[0]
    for k in range(slots.shape[0]):
        a = coef[k]
        if a == 0.0:
            continue
        col = store[slots[k]]
        for t in range(n):
            out[t] += a * col[t]
