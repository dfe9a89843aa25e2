r"""``smo``: sequential minimal optimization for the SVM dual (kind ``"qp.svm.dual"``).

The program is the soft-margin SVM dual with per-sample costs :math:`c_i > 0`

.. math::

    \max_{\alpha}\; e^\top\alpha - \tfrac12 \alpha^\top Q \alpha
    \quad\text{s.t.}\quad 0 \le \alpha_i \le c_i,\; y^\top\alpha = 0,
    \qquad Q_{ij} = y_i y_j K_{ij},

solved, as LIBSVM does, as the minimisation of
:math:`f(\alpha) = \tfrac12\alpha^\top Q\alpha - e^\top\alpha` with gradient
:math:`G = \nabla f(\alpha) = Q\alpha - e`.

It stops, as LIBSVM, at a maximal KKT violation :math:`m(\alpha) - M(\alpha) \le`
``tol`` and polishes while the certificate's relative gap exceeds ``gap_tol``; the
algorithm, orientation, offset, kernel columns, shrinking, polishing, engines and warm
start are set out in the Notes of :func:`solve_smo`.
"""


from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .. import kinds
from .._utils.threads import one_blas_thread
from ..certificates.kkt import bias_from_kkt
from ..exceptions import OptionError, SolverError
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, Stall, message_table, status_table
from ._options import check_cache_size, check_common, load_engine
from ._report import IterationReport
from ._smo_cache import BLOCK_BYTES, ColumnCache, StoreCache
from ._smo_pair import TAU as _PAIR_TAU
from ._smo_pair import clip_pair
from ._svm_data import check_svm_arrays
from ._warm import smo_alpha

__all__ = ["TERMINATION_MESSAGES", "solve_smo"]

#: Stop reason -> message; 0 is convergence, every other reason is a user limit.
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: maximal KKT violation m(alpha) - M(alpha) <= tol on all variables",
    {Reason.STALLED: (
        "stalled: alpha moved by less than 1e-6 of max(c) in the last {window} iterations "
        "while the maximal KKT violation m - M = {viol:.3g} > tol: pairwise updates make "
        "no progress on this kernel matrix (ill-conditioned, e.g. features on very "
        "different scales: standardize X, or use a generic solver such as 'clarabel')")},
)

#: Stop reason -> Status; a non-converged result is returned, never raised.
STATUS_MAP: dict[int, Status] = status_table()

TAU = _PAIR_TAU  # curvature used when a_ij <= 0 (LIBSVM's TAU; one constant with clip_pair)
POLISH_SKIP = 2.0  # polishing without a full re-check when the gap estimate exceeds 2 gap_tol
GAP_RTOL = 1e-2  # largest relative primal - dual gap with which a converged run is OPTIMAL
FLOAT32_MIN_TOL = 1e-5  # column_dtype="auto": float32 columns from this tol up


def _terms(alpha: np.ndarray, F: np.ndarray, y: np.ndarray, c: np.ndarray,
           pos: np.ndarray) -> tuple[float, float, float, float]:
    """Offset ``b``, dual and primal objectives and their relative gap from ``F = -y G``."""
    yG = -F  # y_t * G_t
    at_up, at_low = alpha >= c, alpha <= 0
    free = ~at_up & ~at_low
    if free.any():
        rho = float(yG[free].mean())
    else:
        ub_set = (at_up & ~pos) | (at_low & pos)
        lb_set = (at_up & pos) | (at_low & ~pos)
        ub = float(yG[ub_set].min()) if ub_set.any() else math.inf
        lb = float(yG[lb_set].max()) if lb_set.any() else -math.inf
        if math.isfinite(ub) and math.isfinite(lb):
            rho = 0.5 * (ub + lb)
        else:
            rho = ub if math.isfinite(ub) else (lb if math.isfinite(lb) else 0.0)
    b = -rho
    G = -y * F
    quad_form = float(alpha @ (G + 1.0))  # alpha^T Q alpha
    dual_obj = float(alpha.sum()) - 0.5 * quad_form
    hinge = np.maximum(0.0, y * (F - b))  # 1 - y_i f(x_i) = y_i (F_i - b)
    primal_obj = 0.5 * quad_form + float(c @ hinge)
    rel_gap = (primal_obj - dual_obj) / max(1.0, abs(primal_obj), abs(dual_obj))
    return b, dual_obj, primal_obj, rel_gap


def _certificate_gap(alpha: np.ndarray, F: np.ndarray, y: np.ndarray, c: np.ndarray,
                     accuracy: float) -> float:
    r"""The relative gap conicml's certificate of the SVM dual will recompute, from ``F``.

    The program's certificate (``formulations/svm.py``, ``_certify_dual``) evaluates
    :math:`g = K(\alpha\circ y)` afresh and reports
    :math:`\max(P - D, 0)/\max(1, |P|)` with the bias of
    :func:`conicml.certificates.kkt.bias_from_kkt`. The loop's ``F = -y G`` gives the same
    :math:`g = y - F` in :math:`O(n)` (no kernel value), so this is the same number up
    to the round-off of the incrementally updated gradient; the polishing decision is
    taken on it (a rule of its own could polish a point the certificate already
    accepts).
    """
    a = np.clip(alpha, 0.0, c)
    g = y - F
    v = a * y
    b = bias_from_kkt(a, y, c, F, accuracy)
    quad = float(v @ g)
    P = 0.5 * quad + float(c @ np.maximum(0.0, 1.0 - y * (g + b)))
    D = float(a.sum()) - 0.5 * quad
    return max(P - D, 0.0) / max(1.0, abs(P))


def _working_gap(alpha: np.ndarray, F: np.ndarray, y: np.ndarray, c: np.ndarray,
                 accuracy: float, active: np.ndarray) -> float:
    r"""The certificate's relative gap (:func:`_certificate_gap`) on a shrunk working set.

    With :math:`s_i = y_i(F_i - b)`, :math:`P - D = \sum_i [c_i\max(0, s_i) -
    \alpha_i s_i] - b\,y^\top\alpha`, a sum of nonnegative terms; the shrunk variables'
    terms are taken as zero, which is what shrinking assumes (they left the working set
    because they could not violate; their stored ``F`` is stale, and counting it made
    the estimate ~10x too large on mammography C = 100). A trigger only: every decision
    to stop is verified on the complete gradient.
    """
    a = np.clip(alpha, 0.0, c)
    b = bias_from_kkt(a, y, c, F, accuracy)
    s = y * (F - b)
    hinge = np.maximum(0.0, s)
    terms = c[active] * hinge[active] - a[active] * s[active]
    P = 0.5 * float(a @ (1.0 - y * F)) + float(c @ hinge)
    return max(float(terms.sum()) - b * float(y @ a), 0.0) / max(1.0, abs(P))


class _Report(IterationReport):
    """Fixed-width iteration table (the layout of scipy's trust-constr report)."""

    COLUMN_NAMES = ["iter", "active", "m - M", "n_SV", "kernel cols", "cache hits", "time [s]"]
    COLUMN_WIDTHS = [10, 8, 11, 8, 12, 12, 10]
    ITERATION_FORMATS = ["^10", "^8", "^11.3e", "^8", "^12", "^12", "^10.3f"]

    @classmethod
    def print_footer(cls, message: str, objective: float, gap: float) -> None:
        print()
        print(f"smo: {message}")
        print(f"smo: dual objective {objective:.10g}, primal - dual gap {gap:.3e}")


def _check_options(tol: float, max_iter: int | None, time_limit: float | None,
                   cache_size: float, n: int) -> int:
    if max_iter is None:
        # bounds a hopeless small run to seconds (LIBSVM's 1e7 can take minutes)
        max_iter = max(100_000, 1000 * n)
    check_common("smo", tol, max_iter, time_limit, allow_zero=True)
    check_cache_size("smo", cache_size)
    return int(max_iter)


def _check_data(program: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    kind = getattr(program, "kind", None)
    if kind != kinds.SVM_DUAL:
        raise SolverError(f"solver 'smo' accepts programs of kind 'qp.svm.dual', got {kind!r}")
    data = getattr(program, "data", None)
    if not isinstance(data, Mapping):
        raise SolverError("smo: the program has no data mapping")
    missing = [key for key in ("X", "y", "c", "kernel") if key not in data]
    if missing:
        raise SolverError(
            f"smo: program data lacks {', '.join(map(repr, missing))}; a 'qp.svm.dual' "
            "program carries 'X', 'y', 'c' and 'kernel'"
        )
    kernel = data["kernel"]
    if not (callable(getattr(kernel, "columns", None))
            and callable(getattr(kernel, "diagonal", None))):
        raise SolverError(
            f"smo: data['kernel'] must be a conicml.kernels.Kernel, got {type(kernel).__name__}"
        )
    X = np.asarray(data["X"])
    y = np.asarray(data["y"], dtype=float)
    c = np.asarray(data["c"], dtype=float)
    check_svm_arrays("smo", X, y, c)  # two classes: at least two samples
    if np.any(np.isinf(c)):
        raise SolverError(
            "smo: infinite costs c (hard margin) are not accepted: SMO needs a bounded box "
            "0 <= alpha <= c; use a finite C (e.g. 1e6) or a generic solver such as 'clarabel'"
        )
    return X, y, c, kernel


def _orient(y: np.ndarray) -> bool:
    r"""Run the loop on :math:`-y` (True) when the negative class is the larger one.

    The dual is invariant under :math:`y \to -y` (same :math:`Q`, same :math:`\alpha`,
    offset :math:`-b`), but WSS2 is not: :math:`i` is the first-order maximiser over
    :math:`I_{up}` and :math:`j` the second-order choice in :math:`I_{low}`, and at
    :math:`\alpha = 0` these are the classes +1 and -1. With the larger class as +1
    the loop takes fewer iterations on imbalanced data (abalone7, mammography), as
    LIBSVM does under scikit-learn, which maps the smaller label (there the majority)
    to LIBSVM's +1; on balanced data the choice is neutral.
    """
    return int(np.count_nonzero(y < 0)) > int(np.count_nonzero(y > 0))


def _check_x0(x0: Any, y: np.ndarray, c: np.ndarray) -> np.ndarray:
    alpha = np.array(x0, dtype=float, copy=True)
    n = y.shape[0]
    if alpha.shape != (n,):
        raise OptionError(f"smo: x0 must have shape ({n},), got {alpha.shape}")
    if not np.all(np.isfinite(alpha)):
        raise OptionError("smo: x0 contains NaN or infinite entries")
    feas_tol = 1e-9 * max(1.0, float(c.sum()))
    box = float(max(np.max(-alpha), np.max(alpha - c), 0.0))
    eq = abs(float(y @ alpha))
    if box > feas_tol or eq > feas_tol:
        raise OptionError(
            f"smo: x0 is not feasible (box violation {box:.3g}, |y^T x0| = {eq:.3g}, "
            f"tolerance {feas_tol:.3g}); a warm start must satisfy 0 <= x0 <= c and y^T x0 = 0"
        )
    return np.clip(alpha, 0.0, c)



def _masks(a: np.ndarray, cc: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``I_up`` and ``I_low`` of ``a`` (box ``[0, cc]``, ``p``: the positive labels)."""
    below, above = a < cc, a > 0
    return np.where(p, below, above), np.where(p, above, below)


def _violation(F: np.ndarray, up: np.ndarray, low: np.ndarray) -> float:
    """``m - M``: the maximal KKT violation on the variables of ``F``."""
    return float(np.where(up, F, -np.inf).max() - np.where(low, F, np.inf).min())


def _shrink_mask(Fv: np.ndarray, f_up: np.ndarray, f_low: np.ndarray) -> np.ndarray:
    """LIBSVM's ``be_shrunk``: bounded variables that cannot join a violating pair."""
    Fu = np.where(f_up, Fv, -np.inf).max()
    Fl = np.where(f_low, Fv, np.inf).min()
    return (f_up & ~f_low & (Fv < Fl)) | (f_low & ~f_up & (Fv > Fu))


class _State:
    """One solve's iterate (``alpha``, ``F = -y G``, ``Gb = y Gbar``), its cache and its
    polishing rule; ``driver.tol`` is the current tolerance (lowered by polishing)."""

    def __init__(self, y: np.ndarray, c: np.ndarray, QD: np.ndarray, cache: Any,
                 alpha: np.ndarray, gap_tol: float | None, driver: Driver,
                 products: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.y, self.c, self.QD, self.cache, self.alpha = y, c, QD, cache, alpha
        self.n = n = y.shape[0]
        self.pos = y > 0
        self.gap_tol, self.driver = gap_tol, driver
        self.tol = driver.tol  # the tolerance asked for; driver.tol is the current one
        # F = -y * G is LIBSVM's -y_t grad_t; Gb = y * Gbar, Gbar = sum_{alpha_t = c_t} c_t Q_t
        self.F, self.Gb = y.copy(), np.zeros(n)
        nz = np.flatnonzero(alpha > 0)
        if products is not None:  # K(alpha y) and K_B(c_B y_B), given (x0_products)
            self.F -= products[0]
            self.Gb = products[1].copy()
        elif nz.size:
            coef = np.column_stack([alpha[nz] * y[nz],
                                    np.where(alpha[nz] >= c[nz], c[nz] * y[nz], 0)])
            prod = cache.matvec(nz, coef)
            self.F -= prod[:, 0]
            self.Gb = prod[:, 1]
        self.k, self.viol, self.min_active, self.unshrunk = 0, math.inf, n, False
        self.period = min(n, 1000)
        # polishing (gap_tol): after convergence at driver.tol, go on at driver.tol / 10
        # while the relative primal - dual gap exceeds gap_tol, down to tol / 1000; while
        # it does, the certificate's gap is estimated every polish_every iterations from
        # the working set's terms (_working_gap) and the loop stops as soon as it is met
        self.cert_gap = math.nan  # the certificate's gap estimate at the last decision
        self.polish_floor = self.tol * 1.0001e-3
        self.polishing = False
        self.polish_every = max(1, self.period // 4)

    def start(self) -> None:
        """Open the stall window (the net movement of alpha) at the start of the loop."""
        self.stall = Stall(max(10_000, 100 * self.n), 1e-6 * float(np.max(self.c)), self.alpha)

    def full_violation(self) -> float:
        """``m - M`` on every variable (``F`` complete)."""
        return _violation(self.F, *_masks(self.alpha, self.c, self.pos))

    def box_violation(self) -> float:
        a, c = self.alpha, self.c
        return max(float(np.max(-a)), float(np.max(a - c)), abs(float(self.y @ a)), 0.0)

    def gap_estimate(self) -> float:
        """The certificate's relative gap from alpha and F (both synced, F complete)."""
        return _certificate_gap(self.alpha, self.F, self.y, self.c, self.box_violation())

    def working_gap(self, active: np.ndarray) -> float:
        return _working_gap(self.alpha, self.F, self.y, self.c, self.box_violation(), active)

    def polish_more(self) -> bool:
        """After convergence at driver.tol with F complete: go on (at driver.tol / 10)?"""
        if self.gap_tol is None:
            return False
        self.cert_gap = self.gap_estimate()
        if self.cert_gap <= self.gap_tol or self.driver.tol <= self.polish_floor:
            return False
        self.driver.tol /= 10.0
        self.polishing = True
        return True

    def polish_unverified(self, active: np.ndarray) -> bool:
        """Converged at tol (the first level) on a shrunk set: go on at tol / 10 without
        the full re-check when the working set's estimate already exceeds
        POLISH_SKIP * gap_tol (the re-check, a gradient reconstruction, would only
        confirm it; the final one verifies every variable)."""
        if self.gap_tol is None or self.polishing:
            return False
        est = self.working_gap(active)
        if not est > POLISH_SKIP * self.gap_tol:
            return False
        self.cert_gap = est
        self.driver.tol /= 10.0
        self.polishing = True
        return True

    def polish_done(self) -> bool:
        """F complete: does the point meet tol on every variable and gap_tol?

        ``viol`` becomes the violation on every variable (reported if the point is returned).
        """
        self.viol = self.full_violation()
        if self.viol > self.tol:
            return False
        self.cert_gap = self.gap_estimate()
        return self.cert_gap <= self.gap_tol

    def stalled(self, sync: Callable[[], None]) -> bool:
        """At a period's end: has alpha stopped moving while ``m - M > driver.tol``?"""
        if not self.stall.due(self.k):
            return False
        sync()
        return self.stall.stalled(self.k, self.alpha, self.viol, self.driver.tol)

    def notify(self) -> bool:
        """The callback after iteration ``k`` (alpha synced); True if it asked to stop."""
        return self.driver.notify(self.k, self.viol, {"alpha": self.alpha.copy()})


class _NumpyLoop:
    """The NumPy loop: LIBSVM's ``Solver::Solve`` on the active set ``act`` (None: all)."""

    def __init__(self, st: _State, shrinking: bool) -> None:
        self.st, self.shrinking = st, shrinking
        self.set_active(None)

    def set_active(self, act: np.ndarray | None) -> None:
        """Working arrays of the active set (views of the full arrays when all active)."""
        st = self.st
        self.act = act
        if act is None:
            self.wa, self.wF, self.wy, self.wc, self.wQD = st.alpha, st.F, st.y, st.c, st.QD
        else:
            self.wa, self.wF, self.wy = st.alpha[act], st.F[act], st.y[act]
            self.wc, self.wQD = st.c[act], st.QD[act]
        self.up, self.low = _masks(self.wa, self.wc, st.pos if act is None else st.pos[act])

    def sync(self) -> None:
        if self.act is not None:
            self.st.alpha[self.act] = self.wa
            self.st.F[self.act] = self.wF

    def unshrink(self) -> None:
        """Rebuild F outside the active set from Gbar and the free variables; all active."""
        st = self.st
        self.sync()
        if self.act is not None:
            inactive = np.ones(st.n, dtype=bool)
            inactive[self.act] = False
            free = np.flatnonzero((st.alpha > 0) & (st.alpha < st.c))
            v = st.cache.matvec(free, st.alpha[free] * st.y[free])
            st.F[inactive] = st.y[inactive] - st.Gb[inactive] - v[inactive]
        self.set_active(None)

    finish = unshrink  # after the loop: F on every variable

    def periodic(self) -> int | None:
        """Every ``period`` iterations: shrink (or un-shrink), the stall check, the report."""
        st = self.st
        if self.shrinking:
            Fu = np.where(self.up, self.wF, -np.inf).max()
            Fl = np.where(self.low, self.wF, np.inf).min()
            if not st.unshrunk and Fu - Fl <= 10 * st.driver.tol:
                st.unshrunk = True
                self.unshrink()
            shrink = _shrink_mask(self.wF, self.up, self.low)
            if shrink.any() and not shrink.all():
                self.sync()
                keep = np.flatnonzero(~shrink)
                self.set_active(keep if self.act is None else self.act[keep])
                st.min_active = min(st.min_active, self.act.size)
        if st.stalled(self.sync):
            return int(Reason.STALLED)
        if st.driver.report is not None:
            st.driver.row(st.k, st.n if self.act is None else self.act.size, st.viol,
                          int(np.count_nonzero(self.wa)), st.cache.computed, st.cache.hits,
                          st.driver.elapsed)
        return None

    def select(self) -> tuple[int, float, np.ndarray]:
        """WSS2's ``i``, ``m = max_{I_up} -y G`` and ``-y G`` on ``I_low``; sets viol."""
        Fu_arr = np.where(self.up, self.wF, -np.inf)
        i = int(Fu_arr.argmax())
        Gmax = float(Fu_arr[i])
        Fl_arr = np.where(self.low, self.wF, np.inf)
        self.st.viol = Gmax - float(Fl_arr.min())
        return i, Gmax, Fl_arr

    def column(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        col = self.st.cache.get(i if self.act is None else int(self.act[i]))
        return col, (col if self.act is None else col[self.act])

    def pair_step(self, i: int, Gmax: float, Fl_arr: np.ndarray) -> None:
        """WSS2's ``j`` and the clipped two-variable update (LIBSVM's Solver::Solve)."""
        wa, wF, wy, wc, wQD, up, low = (self.wa, self.wF, self.wy, self.wc, self.wQD,
                                        self.up, self.low)
        col_i, Ki = self.column(i)
        gain = Gmax - Fl_arr
        np.maximum(gain, 0.0, out=gain)
        np.square(gain, out=gain)
        quad = wQD - 2.0 * Ki
        quad += wQD[i]
        quad[quad <= 0] = TAU
        gain /= quad
        j = int(gain.argmax())
        col_j, Kj = self.column(j)
        yi, yj = float(wy[i]), float(wy[j])
        Ci, Cj = float(wc[i]), float(wc[j])
        ai_old, aj_old = float(wa[i]), float(wa[j])
        Gi, Gj = -yi * float(wF[i]), -yj * float(wF[j])
        ai, aj = clip_pair(ai_old, aj_old, yi, yj, Gi, Gj,
                           float(wQD[i]) + float(wQD[j]) - 2.0 * float(Ki[j]), Ci, Cj)
        wa[i] = ai
        wa[j] = aj
        si, sj = yi * (ai - ai_old), yj * (aj - aj_old)
        if si != 0.0:
            wF -= si * Ki
        if sj != 0.0:
            wF -= sj * Kj
        for t, a_new, a_old, Ct, yt, col in ((i, ai, ai_old, Ci, yi, col_i),
                                             (j, aj, aj_old, Cj, yj, col_j)):
            up[t] = a_new < Ct if yt > 0 else a_new > 0
            low[t] = a_new > 0 if yt > 0 else a_new < Ct
            if self.shrinking and (a_old >= Ct) != (a_new >= Ct):
                self.st.Gb += (Ct * yt if a_new >= Ct else -Ct * yt) * col

    def polish_check(self) -> bool | None:
        """While polishing: the working set's gap estimate; once it meets gap_tol, verify
        on every variable. None: not met; True: the point is returned; False: go on."""
        st = self.st
        self.sync()
        est = st.gap_estimate() if self.act is None else st.working_gap(self.act)
        if not est <= st.gap_tol:
            return None
        self.unshrink()
        return st.polish_done()

    def converged(self) -> tuple[bool, int, float, np.ndarray]:
        """``m - M <= driver.tol`` on the active set: polish or re-check on every
        variable. Returns (stop, i, Gmax, Fl_arr) of the selection to go on with."""
        st = self.st
        if self.act is not None:
            self.sync()
            if st.polish_unverified(self.act):  # go on at tol / 10 on the active set
                self.check_counter = st.polish_every
        if not st.viol > st.driver.tol:
            if self.act is not None:  # un-shrink and re-check on every variable
                self.unshrink()
                self.i, self.Gmax, self.Fl_arr = self.select()
            if not st.viol > st.driver.tol and not st.polish_more():
                return True
            # polishing goes on at driver.tol / 10, without a second early un-shrink
            self.counter = 1  # shrink at the next iteration
        return False

    def run(self) -> int:
        st, driver = self.st, self.st.driver
        self.counter, self.check_counter = st.period + 1, st.polish_every
        while True:
            if st.polishing:
                self.check_counter -= 1
                if self.check_counter == 0:
                    self.check_counter = st.polish_every
                    verdict = self.polish_check()
                    if verdict:
                        return int(Reason.CONVERGED)
                    if verdict is not None:
                        self.counter = 1  # shrink at once
            self.counter -= 1
            if self.counter == 0:
                self.counter = st.period
                code = self.periodic()
                if code is not None:
                    return code
            self.i, self.Gmax, self.Fl_arr = self.select()
            if not st.viol > driver.tol and self.converged():
                return int(Reason.CONVERGED)
            code = driver.limit(st.k)
            if code is not None:
                return int(code)
            self.pair_step(self.i, self.Gmax, self.Fl_arr)
            st.k += 1
            if driver.listening:
                self.sync()
                if st.notify():
                    return int(Reason.CALLBACK)


_AGAIN = -1  # a step of the compiled loop's driver: go on with the next chunk
_CALLBACK = -2  # a chunk after which the callback asked to stop


class _CompiledLoop:
    """The compiled loop (:mod:`._smo_numba`): the same iterations on a contiguous working
    set (LIBSVM's active set at the front), Python between chunks.

    ``work``: the working set's original indices (None: all); ``arrays``: the working
    arrays, views of the full ones while ``work`` is None, gathered copies otherwise (see
    :meth:`wsync`). The cache's columns cover ``cache.basis``, a superset of ``work``:
    every variable until shrinking has cut the working set by a fifth, then the working
    set as gathered at the last such cut (see :meth:`set_work`).
    """

    def __init__(self, st: _State, shrinking: bool, nb: Any) -> None:
        self.st, self.shrinking, self.nb = st, shrinking, nb
        self.out_i = np.zeros(2, dtype=np.int64)
        self.out_f = np.zeros(1)
        self.resume = np.zeros(3, dtype=np.int64)  # a selection interrupted by a column
        self.resume_f = np.zeros(2)
        self.until_boundary = st.period
        self.recent = 2 * st.period  # clock ticks (column uses) within which a column is kept
        self.gb_upper = st.alpha >= st.c  # the bounds Gb reflects (tracked while work is None)
        self.work: np.ndarray | None = None
        self.no_pos = np.zeros(0, dtype=np.int64)
        self.arrays = self.working()

    def working(self) -> tuple[Any, ...]:
        """The working arrays of ``work`` (after wsync of the previous ones)."""
        st, work, cache = self.st, self.work, self.st.cache
        if work is None:
            up_, low_ = _masks(st.alpha, st.c, st.pos)
            return (st.alpha, st.F, st.y, st.c, st.QD, up_.astype(np.uint8),
                    low_.astype(np.uint8), self.no_pos, False)
        wa_, wc_ = st.alpha[work], st.c[work]
        up_, low_ = _masks(wa_, wc_, st.pos[work])
        if cache.basis is None:
            colpos, use = work, True
        elif cache.basis.size == work.size:
            colpos, use = self.no_pos, False
        else:
            where = np.full(st.n, -1, dtype=np.int64)
            where[cache.basis] = np.arange(cache.basis.size)
            colpos, use = where[work], True
        return (wa_, st.F[work], st.y[work], wc_, st.QD[work], up_.astype(np.uint8),
                low_.astype(np.uint8), np.ascontiguousarray(colpos), use)

    def wsync(self) -> None:
        if self.work is not None:
            self.st.alpha[self.work] = self.arrays[0]
            self.st.F[self.work] = self.arrays[1]

    def reconstruct_full(self) -> None:
        """F on every variable (LIBSVM's reconstruct_gradient); the working set stays."""
        st, cache, work = self.st, self.st.cache, self.work
        if work is None:
            return
        self.wsync()
        alpha, c, y, F = st.alpha, st.c, st.y, st.F
        # Gbar: the variables whose upper-bound status changed while it was not tracked
        upper = alpha >= c
        moved = np.flatnonzero(upper != self.gb_upper)
        if moved.size:
            st.Gb[:] += cache.matvec(moved, np.where(upper[moved], c[moved] * y[moved],
                                                     -c[moved] * y[moved]))
        self.gb_upper = upper
        inactive = np.ones(st.n, dtype=bool)
        inactive[work] = False
        rows = np.flatnonzero(inactive)
        free = np.flatnonzero((alpha > 0) & (alpha < c))
        coef = alpha[free] * y[free]
        v = np.zeros(rows.size)
        if cache.basis is None:  # full stored columns: the stored ones are used
            slots = cache.slot_of[free]
            hit = slots >= 0
            if hit.any():
                full = np.zeros(st.n)
                cache.gather(cache.store, np.ascontiguousarray(slots[hit]),
                             np.ascontiguousarray(coef[hit]), full)
                cache.hits += int(hit.sum())
                v += full[rows]
                free, coef = free[~hit], coef[~hit]
        # the others: only the inactive rows of their columns, not stored (LIBSVM's
        # reconstruct_gradient; full columns cost n / (n - m) times more values and
        # would evict the working set's columns)
        step = max(1, BLOCK_BYTES // (8 * max(1, rows.size)))
        for start in range(0, free.size, step):
            v += cache.cross(rows, free[start:start + step]) @ coef[start:start + step]
        F[rows] = y[rows] - st.Gb[rows] - v

    def set_work(self, new: np.ndarray | None) -> None:
        """Make ``new`` the working set (F must be current on it) and gather its arrays."""
        st, cache, n = self.st, self.st.cache, self.st.n
        self.wsync()
        if self.work is None and new is not None:
            self.gb_upper = st.alpha >= st.c  # Gb is exact here and untracked from now on
        if new is None:
            if cache.basis is not None:
                cache.rebasis(None, self.recent)
        elif cache.basis is not None:
            inside = np.zeros(n, dtype=bool)
            inside[cache.basis] = True
            if not inside[new].all():
                cache.rebasis(new, self.recent)
        self.work = work = new
        if (work is not None
                and 5 * work.size <= 4 * (n if cache.basis is None else cache.basis.size)):
            # columns of the working set (contiguous, no index array in the loop) once
            # shrinking has cut it by a fifth since the last gather
            cache.rebasis(work, self.recent)
        st.min_active = min(st.min_active, n if work is None else work.size)
        self.arrays = self.working()

    def reshrink_full(self) -> None:
        """After reconstruct_full: shrink the full set at once (LIBSVM's do_shrinking
        after an un-shrink); the working set stays as it is without shrinking."""
        if not self.shrinking:
            return
        st = self.st
        shrink = _shrink_mask(st.F, *_masks(st.alpha, st.c, st.pos))
        self.set_work(None if not shrink.any() or shrink.all() else np.flatnonzero(~shrink))

    def chunk(self) -> int:
        """Run the compiled loop up to the next event; returns its return code."""
        st, driver, nb = self.st, self.st.driver, self.nb
        steps = 1 if driver.listening else min(self.until_boundary, driver.max_iter - st.k)
        if st.polishing:
            steps = min(steps, self.until_check)
        cache = st.cache
        r = nb.run(*self.arrays[:5], st.Gb, *self.arrays[5:], cache.store, cache.slot_of,
                   cache.stamp, cache.clock, driver.tol, steps,
                   self.shrinking and self.work is None, self.out_i, self.out_f, self.resume,
                   self.resume_f)
        if r != nb.NEED_COLUMN or driver.listening:
            self.resume[0] = 0  # the next call scans afresh
        done = int(self.out_i[1])
        st.k += done
        self.until_boundary -= done
        self.until_check -= done
        st.viol = float(self.out_f[0])
        if driver.listening and done:
            self.wsync()
            if st.notify():
                return _CALLBACK
        return r

    def converged(self) -> int:
        """The working set converged: polish, re-check on every variable, or go on."""
        st = self.st
        if self.work is not None:
            self.wsync()
            if st.polish_unverified(self.work):
                self.until_check = st.polish_every
                return _AGAIN
            # converged on the active set: re-check on every variable
            self.reconstruct_full()
            st.viol = st.full_violation()
        if not st.viol > st.driver.tol:
            if not st.polish_more():
                self.work = None  # F is complete: nothing to reconstruct in finish
                return int(Reason.CONVERGED)
            # polishing goes on at driver.tol / 10 from a just reconstructed gradient:
            # no second early un-shrink (each costs n_free * (n - m) kernel values)
        # go on, shrunk at once (LIBSVM goes on with every variable active and shrinks
        # after one iteration; this skips that one full-length iteration)
        self.reshrink_full()
        self.until_boundary = self.st.period
        return _AGAIN

    def polish_check(self) -> int | None:
        """While polishing: the working set's gap estimate; once it meets gap_tol, verify
        on every variable (CONVERGED, or _AGAIN shrunk again; None: not met)."""
        st = self.st
        self.until_check = st.polish_every
        self.wsync()
        est = st.gap_estimate() if self.work is None else st.working_gap(self.work)
        if not est <= st.gap_tol:
            return None
        self.resume[0] = 0
        self.reconstruct_full()
        if st.polish_done():
            self.work = None  # F is complete: nothing to reconstruct in finish
            return int(Reason.CONVERGED)
        self.reshrink_full()
        self.until_boundary = st.period
        return _AGAIN

    def boundary(self) -> int | None:
        """Every ``period`` iterations: shrink (or un-shrink), the stall check, the report."""
        st = self.st
        self.resume[0] = 0  # the working set may change below: select afresh
        self.until_boundary = st.period
        if self.shrinking:
            wF, f_up, f_low = self.arrays[1], self.arrays[5].astype(bool), \
                self.arrays[6].astype(bool)
            Fu = np.where(f_up, wF, -np.inf).max()
            Fl = np.where(f_low, wF, np.inf).min()
            if not st.unshrunk and Fu - Fl <= 10 * st.driver.tol:
                # LIBSVM's do_shrinking: reconstruct, then shrink the full set at once
                st.unshrunk = True
                self.reconstruct_full()
                self.reshrink_full()
            else:
                shrink = _shrink_mask(wF, f_up, f_low)
                if shrink.any() and not shrink.all():
                    work = self.work
                    self.set_work(np.flatnonzero(~shrink) if work is None else work[~shrink])
        if st.stalled(self.wsync):
            return int(Reason.STALLED)
        if st.driver.report is not None:
            self.wsync()
            st.driver.row(st.k, st.n if self.work is None else self.work.size, st.viol,
                          int(np.count_nonzero(st.alpha)), st.cache.computed,
                          int(st.cache.clock[0]), st.driver.elapsed)
        return None

    def run(self) -> int:
        st, driver, nb = self.st, self.st.driver, self.nb
        self.until_check = st.polish_every
        while True:
            r = self.chunk()
            if r == _CALLBACK:
                return int(Reason.CALLBACK)
            if r == nb.CONVERGED:
                code = self.converged()
                if code == _AGAIN:
                    continue
                return code
            if r == nb.NEED_COLUMN:
                st.cache.fetch(int(self.out_i[0]))
            code = driver.limit(st.k)
            if code is not None:
                return int(code)
            if st.polishing and self.until_check <= 0:
                code = self.polish_check()
                if code == _AGAIN:
                    continue
                if code is not None:
                    return code
            if self.until_boundary > 0:
                continue
            code = self.boundary()
            if code is not None:
                return code

    def finish(self) -> None:
        """F on every variable (if stopped while shrunk); the uses of stored columns."""
        if self.work is not None:
            self.reconstruct_full()
        cache = self.st.cache
        cache.hits += max(int(cache.clock[0]) - cache.computed, 0)


def _solution(st: _State, code: int, setup_time: float, engine: str,
              flipped: bool = False) -> Solution:
    """The Solution of a stopped loop: offset, objectives, the solver's certificate; an
    OPTIMAL whose relative gap exceeds GAP_RTOL is not certified (driver.finish).
    ``flipped``: the loop ran on ``-y`` (:func:`_orient`), whose offset is ``-b``."""
    alpha, F, y, c, cache, driver = st.alpha, st.F, st.y, st.c, st.cache, st.driver
    if code != Reason.CONVERGED:
        st.viol = st.full_violation()
    kkt = max(st.viol, 0.0) if math.isfinite(st.viol) else 0.0
    b, dual_obj, primal_obj, rel_gap = _terms(alpha, F, y, c, st.pos)
    primal_res = max(abs(float(y @ alpha)), float(np.max(-alpha)), float(np.max(alpha - c)), 0.0)
    solve_time = driver.elapsed
    # never OPTIMAL when its own certificate fails (at C = 1e12 the absolute tol on
    # m - M allows a slack cost ~ sum(c) * tol, a huge gap)
    status, message = driver.finish(
        code, certified=rel_gap <= GAP_RTOL, window=st.stall.window, viol=kkt,
        why=(f"primal - dual gap {primal_obj - dual_obj:.3g} (relative {rel_gap:.3g} > "
             f"{GAP_RTOL:g}) at m - M = {kkt:.3g} <= tol; the KKT tolerance is absolute "
             f"while the costs reach {float(np.max(c)):.3g}: lower tol or C"))
    if driver.report is not None:
        driver.row(st.k, st.n, kkt, int(np.count_nonzero(alpha)), cache.computed, cache.hits,
                   solve_time)
        driver.report.print_footer(message, dual_obj, primal_obj - dual_obj)
    return Solution(
        status=status,
        solver="smo",
        objective=dual_obj,
        values={"alpha": alpha},
        iterations=st.k,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=primal_res, dual=kkt, gap=primal_obj - dual_obj,
                            source="solver"),
        message=message,
        extras={
            "b": -b if flipped else b,
            "kkt_violation": kkt,
            "kernel_evaluations": cache.computed,
            "kernel_values": cache.values,
            "min_column_length": getattr(cache, "min_length", st.n),
            "cache_hits": cache.hits,
            "min_active_size": st.min_active,
            "primal_objective": primal_obj,
            "polish_tol": driver.tol,
            "certificate_gap_estimate": st.cert_gap,
            "engine": engine,
            "column_dtype": "float64" if engine == "numpy" else str(cache.dtype),
        },
    )


@register("smo", kinds=[kinds.SVM_DUAL], specialized=True, requires=("numpy",),
          compare_options={"tol": 1e-8}, warm_start=smo_alpha,
          certify_tol=1e-3)  # default tol 1e-3 on the KKT violation m - M (LIBSVM's)
def solve_smo(
    program,
    *,
    tol: float = 1e-3,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    shrinking: bool = True,
    cache_size: float = 200.0,
    x0: np.ndarray | None = None,
    x0_products: tuple[np.ndarray, np.ndarray] | None = None,
    callback: Callback | None = None,
    gap_tol: float | None = 9e-4,
    engine: str = "auto",
    column_dtype: str = "auto",
) -> Solution:
    r"""SMO with second-order working-set selection (LIBSVM) for the SVM dual.

    Parameters
    ----------
    program : Program
        A program of kind ``"qp.svm.dual"`` whose ``data`` holds ``X``
        (``(n, d)`` inputs, or the ``(n, n)`` Gram matrix for a precomputed
        kernel), ``y`` (labels in :math:`\{-1, +1\}`), ``c`` (finite
        per-sample costs :math:`c_i > 0`) and ``kernel``.
    tol : float, default=1e-3
        Stop when :math:`m(\alpha) - M(\alpha) \le \texttt{tol}` on every
        variable (the maximal KKT violation; LIBSVM's ``-e``).
    max_iter : int, optional
        Maximal number of two-variable updates; ``None`` means
        :math:`\max(10^5, 1000 n)` (LIBSVM's :math:`10^7` let a hopeless run of
        20 points go on for minutes). Independently, a run whose :math:`\alpha`
        moves by less than :math:`10^{-6}\max c` in
        :math:`\max(10^4, 100 n)` iterations while :math:`m - M > \texttt{tol}` stops
        as stalled (``USER_LIMIT``, the reason in the message).
    time_limit : float, optional
        Wall-clock limit in seconds for the iterations.
    verbose : bool, default=False
        Print a table every :math:`\min(n, 1000)` iterations and a summary.
    shrinking : bool, default=True
        Use LIBSVM's shrinking heuristic (see Notes).
    cache_size : float, default=200.0
        Memory bound of the Gram-column cache, in MB.
    x0 : ndarray of shape (n,), optional
        Feasible warm start :math:`\alpha`; raises :class:`OptionError` if
        infeasible.
    x0_products : (ndarray, ndarray), optional
        :math:`(K(x_0\circ y), K_{:,B}(c_B\circ y_B))` with :math:`B = \{i : x_{0,i}
        \ge c_i\}`, from the program's kernel, when the caller has them (a path's warm
        start computed them from the columns it holds): the initial gradient is then
        not recomputed. Only with ``x0``; the returned point is certified by the
        program either way.
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (a copy of :math:`\alpha` in
        ``values["alpha"]``, ``residual`` :math:`m - M` on the active set);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    gap_tol : float or None, default=9e-4
        Polishing target. When the loop has converged at ``tol``, the relative gap that
        the program's certificate will recompute, :math:`\max(P - D, 0)/\max(1, |P|)`
        (the certificate's bias rule), is evaluated from the gradient in :math:`O(n)`;
        only if it exceeds ``gap_tol`` (at C = 100 the absolute ``tol`` on
        :math:`m - M` can leave gaps of 2e-3..1e-2) does the loop go on at ``tol / 10``,
        up to three times (``tol / 1000``), so that the returned point passes the
        certificate (``certify_tol`` 1e-3 for smo; the default keeps 10 % of it for the
        round-off of the incrementally updated gradient); while it does, it returns as
        soon as the gap meets ``gap_tol`` with :math:`m - M \le \texttt{tol}` on every
        variable (checked periodically, see Notes). ``None`` stops at ``tol`` as
        LIBSVM does. ``extras["polish_tol"]`` is the last ``tol`` used and
        ``extras["certificate_gap_estimate"]`` the gap at the last decision (NaN when
        none was taken).
    engine : {"auto", "numba", "numpy"}, default="auto"
        ``"numba"``: the compiled loop of :mod:`conicml.solvers._smo_numba`;
        ``"numpy"``: the NumPy loop; ``"auto"``: numba when it can be imported
        (the environment variable ``CONICML_ENGINE`` overrides ``"auto"``). Both
        run the same algorithm (tested against each other); the first compiled
        solve in a process loads the compiled code (about a second the very first
        time, while numba caches it on disk).

    column_dtype : {"auto", "float32", "float64"}, default="auto"
        Storage of the compiled loop's cached Gram columns (the NumPy loop stores
        float64). ``"float32"`` is LIBSVM's ``Qfloat``: twice as many columns fit in
        ``cache_size``, and the gradient is still accumulated in float64 (a column's
        rounding, :math:`2^{-24}` relative, enters :math:`G` once per column and
        variable, not once per update). ``"auto"``: float32 when ``tol`` :math:`\ge
        10^{-5}` (LIBSVM's regime), float64 for tighter tolerances, and float64 with no
        column stored at all when the program's precomputed Gram matrix is float64 in
        column-major order (its columns are read in place). The returned point is
        certified by the program's certificate, recomputed in float64.

    Returns
    -------
    Solution
        ``objective`` is the dual maximum :math:`e^\top\alpha -
        \tfrac12\alpha^\top Q\alpha`; ``values["alpha"]``; ``extras`` holds
        ``b``, ``kkt_violation``, ``kernel_evaluations`` (Gram columns
        computed: of ``n`` kernel values, or of the working set's length in the
        compiled loop while shrunk), ``kernel_values`` (kernel values computed),
        ``cache_hits`` and
        ``min_active_size`` (smallest active set reached by shrinking).
        Non-converged runs return :attr:`Status.USER_LIMIT`.

    Notes
    -----
    **Algorithm.** SMO (Platt 1998) with the second-order working-set selection
    *WSS2* of Fan, Chen & Lin (2005), "Working set selection using second order
    information for training support vector machines", JMLR 6:1889-1918, exactly
    as in LIBSVM (Chang & Lin 2011, ACM TIST 2(3), Sec. 4.1, and ``Solver`` in
    ``svm.cpp``). With

    .. math::

        I_{up} = \{t : \alpha_t < c_t, y_t = 1 \text{ or } \alpha_t > 0, y_t = -1\},\quad
        I_{low} = \{t : \alpha_t < c_t, y_t = -1 \text{ or } \alpha_t > 0, y_t = 1\},

    each iteration picks

    .. math::

        i \in \arg\max_{t \in I_{up}} -y_t G_t, \qquad
        j \in \arg\min_{t \in I_{low},\, -y_t G_t < -y_i G_i}
            -\frac{b_{it}^2}{\bar a_{it}},\quad
        b_{it} = -y_i G_i + y_t G_t,\;
        \bar a_{it} = \begin{cases} a_{it} & a_{it} > 0 \\ \tau & \text{else}\end{cases},

    with :math:`a_{it} = K_{ii} + K_{tt} - 2K_{it}` and :math:`\tau = 10^{-12}`,
    solves the two-variable subproblem in closed form, clips it to the box while
    keeping :math:`y^\top\alpha` fixed, and updates :math:`G` with two Gram columns.

    **Stopping criterion.** With :math:`m(\alpha) = \max_{t\in I_{up}} -y_t G_t`
    and :math:`M(\alpha) = \min_{t\in I_{low}} -y_t G_t`, the loop stops when the
    maximal KKT violation satisfies

    .. math::

        m(\alpha) - M(\alpha) \le \texttt{tol}

    on the full index set (LIBSVM's ``-e``, default :math:`10^{-3}`). The
    returned certificate is ``Residuals(primal=max(|y^T alpha|, box violation),
    dual=max(m - M, 0), gap=P - D)``, where :math:`D` is the dual objective and
    :math:`P = \tfrac12\alpha^\top Q\alpha + \sum_i c_i\max(0, 1 - y_i f(x_i))`
    is the primal objective at the :math:`(w, b)` implied by :math:`\alpha`.

    **Orientation.** When the negative class is the larger, the loop runs on :math:`-y`
    (the same dual and :math:`\alpha`, offset :math:`-b`, mapped back): WSS2 is not
    symmetric in the labels, and with the larger class as +1 it takes fewer iterations on
    imbalanced data (abalone7, mammography; LIBSVM too, see :func:`_orient`).

    **Offset.** The decision function is :math:`f(x) = \sum_j \alpha_j y_j
    K(x_j, x) + b`, so :math:`b = -\rho` of LIBSVM: the average of
    :math:`-y_t G_t` over the free variables, or the midpoint of the feasible
    interval when no variable is free.

    **Kernel columns.** Gram columns come from ``kernel.columns`` through an LRU
    cache holding at most ``cache_size`` MB, and at least two columns: in the NumPy loop
    an :class:`collections.OrderedDict` of full columns; in the compiled loop one array
    whose columns cover every variable until shrinking has cut the working (active) set by
    a fifth, and then only the working set (gathered again at each further cut by a fifth)
    — LIBSVM's columns of the active length: the loop reads them contiguously (no index
    array), :math:`n / m` times more of them fit, and a new one costs :math:`m` kernel
    values. The
    compiled loop stores the columns in float32 at LIBSVM's tolerances (``column_dtype``,
    LIBSVM's ``Qfloat``) and accumulates the gradient in float64: twice as many columns fit,
    so that the gradient can be rebuilt from stored columns instead of fresh kernel values
    at each reconstruction. A stored value's rounding
    (:math:`2^{-24}` relative) enters :math:`G_t` once per column, as
    :math:`\sum_j \alpha_j y_j \delta K_{tj}`, not once per update, and the returned point
    is certified by the program's own float64 certificate.

    **Shrinking.** LIBSVM's heuristic (``do_shrinking``/``be_shrunk``): every
    :math:`\min(n, 1000)` iterations, bounded variables that cannot take part in a
    violating pair (their score lies beyond :math:`m` or :math:`M`) leave the
    active set; the first time :math:`m - M \le 10\,\texttt{tol}` on the active
    set, the gradient is reconstructed and the full set becomes active again; when
    the shrunk problem converges, the gradient is reconstructed from
    :math:`\bar G_k = \sum_{\alpha_t = c_t} c_t Q_{kt}` and the stopping
    criterion is re-checked on the full set, so the returned :math:`\alpha`
    always meets the criterion on every variable. Departures from LIBSVM: after an
    un-shrink, :math:`m` and :math:`M` are recomputed on the full set before shrinking
    again (LIBSVM reuses the active-set values), which shrinks no more than LIBSVM does;
    polishing (below) does not un-shrink early a second time; and the compiled loop,
    after the re-check on the full set fails, shrinks at once instead of after one
    iteration on every variable. While the compiled loop's columns cover only the working
    set, :math:`\bar G` is not updated per step but from the variables whose bound status
    changed, at the next reconstruction.

    **Polishing** (``gap_tol``, default :math:`9\cdot10^{-4}`). The stop on
    :math:`m - M` is absolute, so with large costs (C = 100) a point at
    :math:`m - M \le 10^{-3}` can keep a relative primal - dual gap of 2e-3..1e-2 and fail
    the program's certificate (``certify_tol`` 1e-3). After convergence the loop evaluates
    the number that certificate will recompute — the relative gap
    :math:`\max(P - D, 0)/\max(1, |P|)` with the certificate's bias rule — from
    :math:`G` in :math:`O(n)` (no kernel value: :math:`K(\alpha\circ y) = y - F`); only
    while it exceeds ``gap_tol`` does the loop go on at ``tol / 10`` (at most three times),
    so a point that is already certified stops at LIBSVM's criterion and the returned
    OPTIMAL is a certified one. The default keeps 10 % of ``certify_tol`` for the
    round-off of the incrementally updated gradient. ``gap_tol=None`` is LIBSVM's stop.
    While polishing, the stop targets the certificate's own number: every
    :math:`\min(n, 1000)/4` iterations the gap is estimated from the working set's gradient
    (the working set's terms of :math:`P - D`, a sum of nonnegative per-variable terms; the
    shrunk variables' are taken as zero, which is what shrinking assumes); once
    it meets ``gap_tol`` the gradient is completed and the point is returned if
    :math:`m - M \le \texttt{tol}` on every variable and the complete gap meets ``gap_tol``
    (else the loop goes on, shrunk again). A shrunk set converged at the current tolerance
    whose estimate exceeds :math:`2\,\texttt{gap\_tol}` goes on at ``tol / 10`` without the
    full re-check, which saves a gradient reconstruction.

    **Engines.** The loop runs compiled (:mod:`conicml.solvers._smo_numba`) when numba
    can be imported, else in NumPy; both are the same algorithm
    and are tested against each other. The compiled loop works on contiguous copies of
    the working set's arrays (LIBSVM keeps its active set at the front by swapping) and
    returns to Python only for a missing column, a converged working set or every
    :math:`\min(n, 1000)` iterations (shrinking, limits, reports). Why: the NumPy loop
    pays ~15 array calls and the interpreter per two-variable update, which dominates a
    solve once the certificate's Gram product is cut to the support vectors
    (``benchmarks/smo_profile.py``). The solver runs on one BLAS thread (as LIBSVM):
    its products are one Gram column at a time.

    **Warm-start:** supported. ``x0`` is a feasible :math:`\alpha`
    (:math:`0 \le \alpha \le c` and :math:`y^\top\alpha = 0` up to
    :math:`10^{-9}\max(1, \sum_i c_i)`); the gradient is rebuilt from it (or taken from
    ``x0_products``), so an optimal ``x0`` stops after 0 iterations. Along a C path
    (:func:`conicml.solve_path`) the previous active set predicts the next :math:`\alpha`
    (:func:`conicml.solvers._warm.smo_alpha`).

    """
    t_setup = time.perf_counter()
    X, y, c, kernel = _check_data(program)
    n = y.shape[0]
    flipped = _orient(y)
    if flipped:
        y = -y
    max_iter = _check_options(tol, max_iter, time_limit, cache_size, n)
    tol = float(tol)
    if gap_tol is not None and not (isinstance(gap_tol, (int, float)) and gap_tol > 0
                                    and math.isfinite(gap_tol)):
        raise OptionError(f"smo: gap_tol must be None or positive and finite, got {gap_tol!r}")
    nb = load_engine("smo", engine, "_smo_numba")
    if column_dtype not in ("auto", "float32", "float64"):
        raise OptionError("smo: column_dtype must be 'auto', 'float32' or 'float64', "
                          f"got {column_dtype!r}")
    # a column-major float64 Gram matrix is its own column store (StoreCache.borrow)
    borrow = (nb is not None and column_dtype != "float32"
              and getattr(kernel, "name", None) == "precomputed"
              and X.dtype == np.float64 and X.T.flags.c_contiguous)
    if column_dtype == "auto":
        column_dtype = "float32" if tol >= FLOAT32_MIN_TOL and not borrow else "float64"
    products = None
    if x0_products is not None:
        products = tuple(np.asarray(v, dtype=float) for v in x0_products)
        if flipped:  # both are products with y: K(x0 y), K_B(c_B y_B)
            products = tuple(-v for v in products)
        if x0 is None or len(products) != 2 or any(
                v.shape != (n,) or not np.all(np.isfinite(v)) for v in products):
            raise OptionError("smo: x0_products must be two finite vectors of length "
                              f"{n} and come with x0")
    # one BLAS thread, as LIBSVM: the loop's products are one Gram column at a time, and
    # waking a thread pool for each costs more than the product
    with one_blas_thread():
        alpha = np.zeros(n) if x0 is None else _check_x0(x0, y, c)
        cache = (StoreCache(kernel, X, n, cache_size, dtype=column_dtype) if nb is not None
                 else ColumnCache(kernel, X, n, cache_size))
        if nb is not None:
            cache.gather = nb.gather_matvec
            cache.compact = nb.compact
            if borrow:
                cache.borrow()
        QD = np.asarray(kernel.diagonal(X), dtype=float).reshape(-1)
        if QD.shape != (n,) or not np.all(np.isfinite(QD)):
            raise SolverError("smo: kernel.diagonal(X) must be a finite vector of length n")
        driver = Driver("smo", tol=tol, max_iter=max_iter, time_limit=time_limit,
                        messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, allow_zero=True,
                        callback=callback,
                        legacy=lambda r: (r.iteration, r.values["alpha"], r.residual),
                        report=_Report if verbose else None)
        st = _State(y, c, QD, cache, alpha, gap_tol, driver, products)
        setup_time = time.perf_counter() - t_setup
        driver.start(f"smo: n = {n}, tol = {tol:g}, shrinking = {shrinking}, "
                     f"cache = {cache.capacity} columns")
        st.start()
        loop = _NumpyLoop(st, shrinking) if nb is None else _CompiledLoop(st, shrinking, nb)
        code = loop.run()
        loop.finish()
        return _solution(st, code, setup_time, "numpy" if nb is None else "numba", flipped)
