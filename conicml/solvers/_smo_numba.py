r"""Compiled inner loop of ``smo`` (optional: needs ``numba``, the ``numba`` extra).

Why compiled (profile: ``benchmarks/smo_profile.py``): after the O(n n_SV)
certificate, an ``smo`` solve is its SMO loop, and the NumPy loop pays ~15 array
calls and the Python interpreter per two-variable update, ~100 us per iteration even
on a shrunk active set of a few hundred variables, where LIBSVM spends ~1-5 us. At
C = 100 (thousands of iterations) that alone was 2-3x LIBSVM's whole fit. The loop below
is the same algorithm as the NumPy path in :mod:`conicml.solvers.smo` (WSS2 selection,
the clipped two-variable update, the gradient update, the :math:`\bar G` bookkeeping),
written over contiguous copies of the working set's arrays with the Gram columns held
in a 2-D array (``store[slot]`` is the column of ``col_of[slot]``, restricted to the
cache's basis); it returns to Python when it needs a column that is not stored, when
the working set has converged, or after ``max_steps`` updates (shrinking, the stall
test, limits, reports and the callback stay in Python).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._smo_pair import TAU as _TAU
from ._smo_pair import clip_pair

__all__ = ["CONVERGED", "NEED_COLUMN", "STEPS_DONE", "active_set_step", "compact",
           "gather_matvec", "run"]

CONVERGED, NEED_COLUMN, STEPS_DONE = 0, 1, 2
_clip_pair = njit(cache=True, nogil=True, inline="always")(clip_pair)

# The scans below are reductions the compiler vectorises once it may assume no NaN and
# no signed zero (``nnan``, ``nsz``; no reassociation, so every value is the exact one
# of the plain loop); each index is then the first one reaching the extreme, as in a
# scan with strict comparisons (the selection of the NumPy loop, ``argmax``).
_SCAN = {"nnan", "nsz"}


@njit(cache=True, nogil=True, fastmath=_SCAN)
def _extremes(F, is_up, is_low):  # pragma: no cover - compiled
    """m = max of F over I_up, M = min of F over I_low (-inf / inf when empty)."""
    Gmax = -np.inf
    Gmin = np.inf
    for t in range(F.shape[0]):
        f = F[t]
        u = f if is_up[t] else -np.inf
        lo = f if is_low[t] else np.inf
        Gmax = u if u > Gmax else Gmax
        Gmin = lo if lo < Gmin else Gmin
    return Gmax, Gmin


@njit(cache=True, nogil=True, fastmath=_SCAN)
def _update(F, Ki, Kj, si, sj, colpos, use_colpos, is_up, is_low):  # pragma: no cover
    """F -= si K_i + sj K_j, and the next iteration's extremes (:func:`_extremes`) in the
    same pass."""
    Gmax = -np.inf
    Gmin = np.inf
    if use_colpos:
        for t in range(F.shape[0]):
            q = colpos[t]
            f = F[t] - (si * Ki[q] + sj * Kj[q])
            F[t] = f
            u = f if is_up[t] else -np.inf
            lo = f if is_low[t] else np.inf
            Gmax = u if u > Gmax else Gmax
            Gmin = lo if lo < Gmin else Gmin
    else:
        for t in range(F.shape[0]):
            f = F[t] - (si * Ki[t] + sj * Kj[t])
            F[t] = f
            u = f if is_up[t] else -np.inf
            lo = f if is_low[t] else np.inf
            Gmax = u if u > Gmax else Gmax
            Gmin = lo if lo < Gmin else Gmin
    return Gmax, Gmin


@njit(cache=True, nogil=True)
def _first_up(F, is_up, Gmax):  # pragma: no cover - compiled
    """The first index of I_up where F reaches Gmax."""
    for t in range(F.shape[0]):
        if is_up[t] and F[t] == Gmax:
            return t
    return -1


@njit(cache=True, nogil=True, fastmath=_SCAN)
def _gains(F, is_low, QD, QDi, Ki, colpos, use_colpos, Gmax, gain):  # pragma: no cover
    """WSS2's gains b^2 / a over I_low with b = Gmax - F > 0 (-inf elsewhere) into
    ``gain``; returns the largest."""
    best = -np.inf
    m = F.shape[0]
    if use_colpos:
        for t in range(m):
            b = Gmax - F[t]
            quad = QDi + QD[t] - 2.0 * Ki[colpos[t]]
            quad = quad if quad > 0 else _TAU
            g = b * b / quad
            g = g if (b > 0) & (is_low[t] != 0) else -np.inf
            gain[t] = g
            best = g if g > best else best
    else:
        for t in range(m):
            b = Gmax - F[t]
            quad = QDi + QD[t] - 2.0 * Ki[t]
            quad = quad if quad > 0 else _TAU
            g = b * b / quad
            g = g if (b > 0) & (is_low[t] != 0) else -np.inf
            gain[t] = g
            best = g if g > best else best
    return best


@njit(cache=True, nogil=True)
def _first_at(gain, best):  # pragma: no cover - compiled
    for t in range(gain.shape[0]):
        if gain[t] == best:
            return t
    return -1


@njit(cache=True, nogil=True)
def run(alpha, F, y, c, QD, Gb, is_up, is_low, colpos, use_colpos, store, slot_of, stamp,
        clock, tol, max_steps, track_gbar, out_i, out_f, resume,
        resume_f):  # pragma: no cover - compiled
    """Up to ``max_steps`` SMO updates on the contiguous working set; see the module docstring.

    Every array is of the working set's length ``m`` and in its order (LIBSVM's active
    set, kept at the front by ``swap_index``; here the caller gathers it). The stored
    Gram columns are restricted to the cache's basis, a superset of the working set:
    working position ``t`` is entry ``colpos[t]`` of a column and ``slot_of[colpos[t]]``
    its column's slot. Without ``use_colpos`` the basis is the working set
    (``colpos[t] = t``): no index array, and a column costs ``m`` floats, not ``n``.
    ``Gb`` (length ``n``) is updated only with ``track_gbar`` (the working set is then
    the full set).

    As in the NumPy loop, the stopping test comes first: a converged working set returns
    CONVERGED even with ``max_steps = 0``. ``out_i[0]``: the working position whose
    column is needed (NEED_COLUMN); ``out_i[1]``: updates done; ``out_f[0]``: the last
    maximal violation m - M on the working set. ``is_up`` / ``is_low`` (uint8) are the
    memberships of :math:`I_{up}` / :math:`I_{low}`, kept up to date here for the two
    updated variables (LIBSVM's ``alpha_status``).

    A NEED_COLUMN return saves the selection made so far in ``resume`` (phase 1: ``i``;
    phase 2: ``i`` and ``j``) and ``resume_f`` (m and M); a call with ``resume[0] > 0``
    goes on from there instead of scanning the working set again (the caller resets it
    whenever it changes anything but the stored columns). Without it, an iteration
    needing two new columns scanned the working set five times instead of two.
    """
    steps = 0
    out_f[0] = np.inf
    m = F.shape[0]
    gain = np.empty(m)
    phase = resume[0]
    resume[0] = 0
    scanned = False  # the extremes of the current F are known (from the last update)
    Gmax = -np.inf
    Gmin = np.inf
    while True:
        if phase > 0:
            i = resume[1]
            Gmax = resume_f[0]
            Gmin = resume_f[1]
            out_f[0] = Gmax - Gmin
        else:
            # -- i: the maximal violating index (largest F over I_up), and M over I_low
            if not scanned:
                Gmax, Gmin = _extremes(F, is_up, is_low)
            scanned = False
            viol = Gmax - Gmin
            out_f[0] = viol
            if not viol > tol:
                out_i[1] = steps
                return CONVERGED
            if steps >= max_steps:
                out_i[1] = steps
                return STEPS_DONE
            i = _first_up(F, is_up, Gmax)
        ci = colpos[i] if use_colpos else i
        si_slot = slot_of[ci]
        if si_slot < 0:
            resume[0] = 1
            resume[1] = i
            resume_f[0] = Gmax
            resume_f[1] = Gmin
            out_i[0] = ci
            out_i[1] = steps
            return NEED_COLUMN
        clock[0] += 1
        stamp[si_slot] = clock[0]
        Ki = store[si_slot]
        # -- j: second-order selection (WSS2) over I_low with F_t < Gmax
        QDi = QD[i]
        if phase == 2:
            j = resume[2]
        else:
            best = _gains(F, is_low, QD, QDi, Ki, colpos, use_colpos, Gmax, gain)
            j = _first_at(gain, best)
        cj = colpos[j] if use_colpos else j
        sj_slot = slot_of[cj]
        if sj_slot < 0:
            resume[0] = 2
            resume[1] = i
            resume[2] = j
            resume_f[0] = Gmax
            resume_f[1] = Gmin
            out_i[0] = cj
            out_i[1] = steps
            return NEED_COLUMN
        phase = 0
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
        ai, aj = _clip_pair(ai_old, aj_old, yi, yj, Gi, Gj, QDi + QD[j] - 2.0 * Ki[cj], Ci, Cj)
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
            Gmax, Gmin = _update(F, Ki, Kj, si, sj, colpos, use_colpos, is_up, is_low)
            scanned = True
        if track_gbar:
            if (ai_old >= Ci) != (ai >= Ci):
                s = Ci * yi if ai >= Ci else -Ci * yi
                for t in range(m):
                    Gb[t] += s * Ki[t]
            if (aj_old >= Cj) != (aj >= Cj):
                s = Cj * yj if aj >= Cj else -Cj * yj
                for t in range(m):
                    Gb[t] += s * Kj[t]
        steps += 1


@njit(cache=True, nogil=True)
def compact(buf, rows, m_old, m_new, keep, tmp):  # pragma: no cover - compiled
    """Restrict stored columns to a smaller working set, in place in the flat ``buf``.

    Row ``rows[k]`` of the old store (``buf[r*m_old:(r+1)*m_old]``, ``rows`` increasing)
    becomes row ``k`` of the new one (``buf[k*m_new:(k+1)*m_new]``), keeping the entries
    ``keep``. Since ``k <= rows[k]`` and ``m_new <= m_old``, a new row ends before the
    next old row begins, and the old row itself is read through ``tmp`` first.
    """
    for k in range(rows.shape[0]):
        base = rows[k] * m_old
        for q in range(m_new):
            tmp[q] = buf[base + keep[q]]
        dst = k * m_new
        for q in range(m_new):
            buf[dst + q] = tmp[q]


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


@njit(cache=True, nogil=True)
def active_set_step(status, free, a_free, u, y, g, p, b, tol):  # pragma: no cover
    r"""One status update of the warm start's active-set prediction (the twin of
    :func:`conicml.solvers._warm._step_numpy`, one pass instead of ~15 array calls).

    ``status`` (0 zero, 1 free, 2 bounded) is left as it is; returns ``(new, changed,
    free, enter, leave, bal)``: the new statuses, how many changed, the new free set,
    the variables entering and leaving the bound (increasing) and
    :math:`-\sum_{new = 2} y_i u_i`.
    """
    n = status.shape[0]
    new = status.copy()
    for j in range(free.shape[0]):
        i = free[j]
        if a_free[j] < 0:
            new[i] = 0
        elif a_free[j] > u[i]:
            new[i] = 2
    nxt = np.empty(n, dtype=np.int64)
    enter = np.empty(n, dtype=np.int64)
    leave = np.empty(n, dtype=np.int64)
    changed, n_free, n_enter, n_leave, bal = 0, 0, 0, 0, 0.0
    for i in range(n):
        s = status[i]
        if s != 1:
            margin = y[i] * (g[i] + p[i] + b)
            if s == 0 and margin < 1 - tol:
                new[i] = 1
            elif s == 2 and margin > 1 + tol:
                new[i] = 1
        t = new[i]
        if t != s:
            changed += 1
        if t == 1:
            nxt[n_free] = i
            n_free += 1
        elif t == 2:
            bal -= y[i] * u[i]
            if s != 2:
                enter[n_enter] = i
                n_enter += 1
        if s == 2 and t != 2:
            leave[n_leave] = i
            n_leave += 1
    return new, changed, nxt[:n_free], enter[:n_enter], leave[:n_leave], bal
