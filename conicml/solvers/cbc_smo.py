r"""``cbc-smo``: SMO-like pair updates for the single-cone CBC duals (seed 003, App. B).

Kinds ``"socp.chance.cbc_w.dual"`` (B.2), ``"socp.chance.cbc.dual"`` (3.11) and
``"socp.chance.cbc.hard.dual"``. Both duals are, after eliminating the cone
multiplier, the minimisation of a convex function of :math:`\alpha` alone over
:math:`\{0 \le \alpha \le U,\ y^\top\alpha = 0\}` (:math:`U = 1`, :math:`C` or
:math:`\infty`), with :math:`v = \sum_j\alpha_jy_j\phi(\mu_j)`:

.. math::

    \text{(B.2)}\quad f(\alpha) = W\|v\|_2 - d^\top\alpha, \qquad
    \text{(3.11)}\quad f(\alpha) = \tfrac12\max(0, \|v\|_2 - r^\top\alpha)^2
    - \mathbf 1^\top\alpha,

the second because the optimal cone multiplier of (3.11) is
:math:`\lambda = \max(\|v\|, r^\top\alpha)`. The reported objective is
:math:`-f(\alpha)`, the optimal value of the primal (B.1) / (3.7), as for the
generic backends on the same program.

It stops at a maximal KKT violation :math:`m(\alpha) - M(\alpha) \le` ``tol``; the
algorithm, stopping rule, certificate and start are set out in the Notes of
:func:`solve_cbc_smo`.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import optimize

from .. import kinds
from ..exceptions import OptionError, SolverError
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._options import check_array, check_cache_size
from ._warm import cbc_alpha

__all__ = ["TERMINATION_MESSAGES", "line_search_311", "line_search_b2", "solve_cbc_smo"]

#: Stop reason -> message; 0 is convergence.
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: maximal KKT violation m(alpha) - M(alpha) <= tol",
    {Reason.STALLED: "stalled: the maximal violating pair admits no improving step "
                     "(round-off or v = 0)",
     5: "dual unbounded: the spheres cannot be separated (hard margin infeasible)",
     6: "stalled: the objective did not increase over the last max(1000, 10 k) pair steps "
        "(round-off)",
     7: "no progress: the maximal KKT violation has not decreased over the last "
        "20 max(1000, 10 k) pair steps"},
)
UNBOUNDED, FLAT, NO_PROGRESS = 5, 6, 7  # the solver's own stop reasons

STATUS_MAP: dict[int, Status] = status_table({
    Reason.STALLED: Status.OPTIMAL_INACCURATE, UNBOUNDED: Status.UNBOUNDED,
    FLAT: Status.OPTIMAL_INACCURATE, NO_PROGRESS: Status.USER_LIMIT})

KINDS = (kinds.CBC_W_DUAL, kinds.CBC_DUAL, kinds.CBC_HARD_DUAL)
TAU = 1e-12  # curvature used when the exact one is <= 0 (LIBSVM's TAU)


def _clip(x: float, lb: float, ub: float) -> float:
    return max(lb, min(ub, x))


def line_search_b2(a: float, b: float, c: float, e: float, lb: float, ub: float) -> float:
    r"""Exact minimiser of :math:`\sqrt{a\Delta^2 + 2b\Delta + c} - e\Delta` on :math:`[lb, ub]`.

    The closed form of seed 003 eq. (B.5) , for a PSD quadratic
    (:math:`a \ge 0`, :math:`ac \ge b^2`):

    .. math::

        \Delta = \begin{cases}
        ub & e \ge \sqrt a \\
        lb & e \le -\sqrt a \\
        \big[(e\sqrt{(ac - b^2)/(a - e^2)} - b)/a\big]_{lb}^{ub} & \text{otherwise}
        \end{cases}

    (:math:`[x]_{lb}^{ub} = \max(lb, \min(ub, x))`; with :math:`ac = b^2` the
    last case is :math:`[-b/a]`). With :math:`a = 0` the function is linear
    (then :math:`b = 0`): ``ub`` if :math:`e > 0`, ``lb`` if :math:`e < 0`, and
    ``lb`` (no move) if :math:`e = 0`. Infinite bounds are allowed when the
    minimiser is finite.
    """
    if lb > ub:
        raise ValueError(f"empty interval [{lb}, {ub}]")
    if a <= 0.0:
        return ub if e > 0 else lb
    sa = math.sqrt(a)
    if e >= sa:
        return ub
    if e <= -sa:
        return lb
    disc = max(a * c - b * b, 0.0)
    return _clip((e * math.sqrt(disc / (a - e * e)) - b) / a, lb, ub)


def line_search_311(a: float, bq: float, c: float, rho0: float, rho1: float, e: float,
                    ub: float) -> float:
    r"""Exact minimiser on :math:`[0, ub]` of the (3.11) pair function.

    :math:`\varphi(\delta) = \tfrac12\max(0, \sqrt{a\delta^2 + 2b_q\delta + c}
    - \rho_0 - \rho_1\delta)^2 - e\delta` is convex and :math:`C^1`; its
    derivative is monotone, so the minimiser is 0, ``ub``, or the root of
    :math:`\varphi'` found by :func:`scipy.optimize.brentq`. Returns ``inf``
    if ``ub`` is infinite and :math:`\varphi' < 0` everywhere (unbounded).
    """

    def dphi(d: float) -> float:
        q = max(a * d * d + 2.0 * bq * d + c, 0.0)
        s = math.sqrt(q)
        h = s - rho0 - rho1 * d
        if h <= 0.0:
            return -e
        dh = ((a * d + bq) / s if s > 0 else math.sqrt(a)) - rho1
        return h * dh - e

    if dphi(0.0) >= 0.0:
        return 0.0
    hi = ub
    if not math.isfinite(ub):
        hi = 1.0
        while dphi(hi) < 0.0:
            hi *= 2.0
            if hi > 1e15:
                return math.inf
    elif dphi(ub) <= 0.0:
        return ub
    return optimize.brentq(dphi, 0.0, hi, xtol=1e-15 * max(hi, 1e-300), rtol=1e-15)


class _Gram:
    """Gram matrix of the cluster means: full when it fits, else columns on demand."""

    def __init__(self, data: Mapping[str, Any], cache_size: float) -> None:
        self.M = data["means"]
        self.kernel = data["kernel"]
        k = self.M.shape[0]
        self.full = None
        self.columns = 0
        self._cache: dict[int, np.ndarray] = {}
        self._capacity = max(2, int(cache_size * 2**20 // (8 * k)))
        if k * k * 8 <= cache_size * 2**20:
            self.full = self.kernel(self.M, self.M)
            self.columns = k
        if self.kernel.name == "linear":
            self.diag = np.einsum("ij,ij->i", self.M, self.M)
        else:
            self.diag = self.kernel.diagonal(self.M)

    def column(self, i: int) -> np.ndarray:
        if self.full is not None:
            return self.full[:, i]
        col = self._cache.get(i)
        if col is None:
            col = self.kernel(self.M, self.M[i:i + 1])[:, 0]
            self.columns += 1
            if len(self._cache) >= self._capacity:
                self._cache.pop(next(iter(self._cache)))
            self._cache[i] = col
        return col


def _dual_value(data: Mapping[str, Any], alpha: np.ndarray, p: np.ndarray) -> float:
    """:math:`-f(\\alpha)`: the (maximised) dual objective of the kind."""
    vnorm = math.sqrt(max(float((alpha * data["y"]) @ p), 0.0))
    r = data["radii"]
    if "W" in data:
        return float((1.0 + r * data["W"]) @ alpha) - data["W"] * vnorm
    return float(alpha.sum()) - 0.5 * max(0.0, vnorm - float(r @ alpha)) ** 2


class _Loop:
    """CBC-Iter's state: ``alpha``, ``p = K(alpha * y)`` and the smoothing stage ``eps``
    of the W-form (continuation on :math:`W\\sqrt{\\|v\\|^2 + \\epsilon^2}`)."""

    def __init__(self, data: Mapping[str, Any], gram: _Gram, alpha: np.ndarray,
                 U: np.ndarray, driver: Driver, second_order: bool, verbose: bool) -> None:
        self.data, self.gram, self.alpha, self.U, self.driver = data, gram, alpha, U, driver
        self.y = y = np.asarray(data["y"], dtype=float)
        self.r = np.asarray(data["radii"], dtype=float)
        self.k = y.size
        self.wform = "W" in data
        if self.wform:
            self.W = float(data["W"])
            self.dvec = 1.0 + self.r * self.W
        self.p = data["cbc"].kernel_matvec(alpha * y)
        self.pos, self.neg = y > 0, y < 0
        self.second_order, self.verbose = second_order, verbose
        self.it, self.viol = 0, math.inf
        # stall window: pair steps that no longer move the objective at round-off
        # (features of very different scales) would otherwise run to max_iter
        self.window = max(1000, 10 * self.k)

    def stage_value(self, eps: float) -> float:  # the objective this stage maximises
        alpha, p = self.alpha, self.p
        if self.wform:
            v2 = max(float((alpha * self.y) @ p), 0.0)
            return float(self.dvec @ alpha) - self.W * math.sqrt(v2 + eps * eps)
        return _dual_value(self.data, alpha, p)

    def scores(self, eps: float) -> tuple:
        """``s = -y G``, the index sets I_up / I_low, and the scale terms of the step."""
        alpha, y, U = self.alpha, self.y, self.U
        if self.wform:
            vnorm = math.sqrt(max(float((alpha * y) @ self.p), 0.0))
            sm = math.sqrt(vnorm * vnorm + eps * eps)
            scale, t = (self.W / sm if sm > 0 else 0.0), self.W
        else:
            scale, t, vnorm = self.data["cbc"].scale(alpha, self.p)
        s = -scale * self.p + y * (1.0 + self.r * t)  # -y_j G_j
        below, above = alpha < U, alpha > 0
        up = (self.pos & below) | (self.neg & above)
        low = (self.pos & above) | (self.neg & below)
        return s, up, low, vnorm

    def partner(self, i: int, Ki: np.ndarray, s: np.ndarray, s_up_i: float,
                low: np.ndarray, vnorm: float, eps: float) -> int:
        """WSS2 (Fan, Chen & Lin 2005) with the exact curvature of the stage's objective."""
        gram, alpha, y, r, k = self.gram, self.alpha, self.y, self.r, self.k
        cand = low & (s < s_up_i)
        bq_t = self.p[i] - self.p  # (phi_i - phi_t)^T v
        a_t = np.maximum(gram.diag[i] + gram.diag - 2.0 * Ki, 0.0)
        if self.wform:
            W = self.W
            cs = vnorm * vnorm + eps * eps
            cs15 = cs**1.5  # 0 also when cs underflows (at the apex v = 0)
            curv = W * (a_t * cs - bq_t * bq_t) / cs15 if cs15 > 0 else np.zeros(k)
        else:
            h = vnorm - float(r @ alpha)
            if h > 0 and vnorm > 0:
                dh = bq_t / vnorm - (y[i] * r[i] - y * r)
                curv = dh * dh + h * (a_t - bq_t * bq_t / (vnorm * vnorm)) / vnorm
            else:
                curv = np.zeros(k)
        curv = np.where(curv > TAU, curv, TAU)
        gain = np.where(cand, -((s_up_i - s) ** 2) / curv, np.inf)
        return int(np.argmin(gain))

    def step(self, i: int, j: int, Ki: np.ndarray, vnorm: float, eps: float) -> int | None:
        """The exact line search along the pair and the move; a stop reason if none."""
        alpha, y, U, gram = self.alpha, self.y, self.U, self.gram
        # step bounds: alpha_i += y_i delta, alpha_j -= y_j delta
        ub_i = (U[i] - alpha[i]) if y[i] > 0 else alpha[i]
        ub_j = alpha[j] if y[j] > 0 else (U[j] - alpha[j])
        ub = min(ub_i, ub_j)
        Kj = gram.column(j)
        a = max(gram.diag[i] + gram.diag[j] - 2.0 * Ki[j], 0.0)
        bq = float(self.p[i] - self.p[j])
        c = vnorm * vnorm
        if self.wform:  # (B.5) with the corrected pair sign, closed form A4
            e = y[i] * self.dvec[i] - y[j] * self.dvec[j]
            W2 = self.W * self.W
            delta = line_search_b2(W2 * a, W2 * bq, W2 * (c + eps * eps), e, 0.0, ub)
        else:
            rho0 = float(self.r @ alpha)
            rho1 = y[i] * self.r[i] - y[j] * self.r[j]
            delta = line_search_311(a, bq, c, rho0, rho1, y[i] - y[j], ub)
            if not math.isfinite(delta):
                return UNBOUNDED
        if delta <= 0.0:
            return int(Reason.STALLED)
        alpha[i] += y[i] * delta
        alpha[j] -= y[j] * delta
        if delta == ub:  # land exactly on the bound that limited the step
            if ub_i <= ub_j:
                alpha[i] = U[i] if y[i] > 0 else 0.0
            if ub_j <= ub_i:
                alpha[j] = 0.0 if y[j] > 0 else U[j]
        np.clip(alpha, 0.0, U, out=alpha)
        self.p += delta * (Ki - Kj)
        return None

    def stage(self, eps: float, stage_tol: float) -> int:
        """Pair updates at smoothing ``eps`` until ``m - M <= stage_tol`` or a stop."""
        driver, data, y = self.driver, self.data, self.y
        last_value = self.stage_value(eps)
        best_viol, best_it = math.inf, self.it
        while True:
            s, up, low, vnorm = self.scores(eps)
            s_up = np.where(up, s, -np.inf)
            s_low = np.where(low, s, np.inf)
            i = int(np.argmax(s_up))
            j = int(np.argmin(s_low))
            self.viol = viol = float(s_up[i] - s_low[j])
            if viol < 0.999 * best_viol:
                best_viol, best_it = viol, self.it
            if viol <= stage_tol:
                p_exact = data["cbc"].kernel_matvec(self.alpha * y)  # re-check on a fresh p
                drift = np.max(np.abs(p_exact - self.p))
                if drift <= 1e-12 * max(1.0, float(np.abs(self.p).max())):
                    return int(Reason.CONVERGED)
                self.p = p_exact
                continue
            reason = driver.limit(self.it)
            if reason is not None:
                return int(reason)
            Ki = self.gram.column(i)
            if self.second_order:
                j = self.partner(i, Ki, s, float(s_up[i]), low, vnorm, eps)
            reason = self.step(i, j, Ki, vnorm, eps)
            if reason is not None:
                return reason
            self.it += 1
            if self.it % self.window == 0:
                if self.it - best_it >= 20 * self.window:  # zig-zag: violation stays
                    return NO_PROGRESS
                value = self.stage_value(eps)
                if value - last_value <= 1e-14 * max(1.0, abs(value)):
                    # a smoothing stage: go to the next
                    return FLAT if eps == 0.0 else int(Reason.CONVERGED)
                last_value = value
            if self.verbose and self.it % max(1000, self.k) == 0:
                print(f"cbc-smo: eps {eps:.1e}  iter {self.it:>9d}  m - M = {viol:.3e}")
            if driver.listening and driver.notify(self.it, viol,
                                                  {"alpha": self.alpha.copy()}):
                return int(Reason.CALLBACK)

    def run(self, fresh_start: bool) -> int:
        """The stages: eps0 10^-2s, s = 0..4, then 0 (one exact stage from a warm start).

        (B.2) is not differentiable at v = 0 and pair updates can crawl along that kink
        (seen on random overlapping instances); continuation on W sqrt(||v||^2 + eps^2),
        eps -> 0, keeps the A4 closed form (c -> c + eps^2) and ends with eps = 0 exactly.
        """
        stages = [0.0]
        if self.wform and fresh_start:
            eps0 = float(np.sqrt(max(float(self.gram.diag.max()), 1e-300)))
            stages = [eps0 * 10.0**-s for s in range(0, 9, 2)] + [0.0]
        tol = self.driver.tol
        for eps in stages:
            reason = self.stage(eps, tol if eps == 0.0 else max(tol, 1e-3 * eps / eps0))
            if reason != Reason.CONVERGED:
                return reason
        return reason


CERTIFY_TOL = 1e-4  # conicml's recomputed residuals (default tol 1e-6 on the KKT violation)


@register("cbc-smo", kinds=KINDS, description="SMO-like pair updates for the CBC duals "
          "(3.11)/(B.2) (CBC-Iter, corrected sign)",
          certify_tol=CERTIFY_TOL, warm_start=cbc_alpha)
def solve_cbc_smo(
    program,
    *,
    tol: float = 1e-6,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    cache_size: float = 200.0,
    x0: np.ndarray | None = None,
    callback: Callback | None = None,
    selection: str = "second-order",
) -> Solution:
    r"""CBC-Iter: pair updates with exact line search.

    Parameters
    ----------
    program : Program
        A program of kind ``"socp.chance.cbc_w.dual"``, ``"socp.chance.cbc.dual"`` or
        ``"socp.chance.cbc.hard.dual"`` (from :func:`cbc_w` / :func:`cbc` with
        ``form="dual"``).
    tol : float, default=1e-6
        Stop when :math:`m(\alpha) - M(\alpha) \le \texttt{tol}` (Notes).
    max_iter : int, optional
        Maximal number of pair updates; ``None`` means :math:`\max(10^6, 100k)`.
    time_limit : float, optional
        Wall-clock limit in seconds.
    verbose : bool, default=False
        Print the violation every :math:`\max(1000, k)` iterations and a summary.
    cache_size : float, default=200.0
        MB for the Gram matrix of the cluster means (formed in full if it fits).
    x0 : ndarray of shape (k,), optional
        Feasible warm start :math:`\alpha` (:math:`0\le\alpha\le U`,
        :math:`y^\top\alpha = 0` up to :math:`10^{-9}`).
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (``values["alpha"]``,
        ``residual`` the KKT violation :math:`m - M`);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    selection : {"second-order", "max-violating"}, default="second-order"
        Working-set selection: the thesis's maximal violating pair, or the
        second-order rule of Fan, Chen & Lin (2005) (Notes), which
        avoids the slow zig-zag tail of the former at small ``tol``.

    Returns
    -------
    Solution
        ``values = {"alpha"}`` (plus ``"lam"`` for (3.11)); see Notes.

    Notes
    -----
    **Algorithm** (CBC-Iter, seed 003 App. B; errata S003-A3). Gradient
    :math:`G_j = y_jg_j - 1 - r_jt` with :math:`g = w^\top\phi(\mu_\cdot)` and
    :math:`t = \|w\|` of the decoded model (:math:`t = W` for B.2). As in LIBSVM,
    with scores :math:`s_j = -y_jG_j` (the KKT table (B.4): :math:`s_j = -F_j` in
    the thesis's notation, :math:`F_j = g_j - y_j(1 + r_jW)`),

    .. math::

        I_{up} = \{y_j = 1, \alpha_j < U\} \cup \{y_j = -1, \alpha_j > 0\},\quad
        I_{low} = \{y_j = 1, \alpha_j > 0\} \cup \{y_j = -1, \alpha_j < U\},

    the maximal violating pair :math:`i = \arg\max_{I_{up}} s`,
    :math:`j = \arg\min_{I_{low}} s` (``selection="max-violating"``, the thesis's
    rule) or, by default, the second-order pair of Fan, Chen & Lin (2005, JMLR 6)
    (``selection="second-order"``: the same :math:`i`, and
    :math:`j = \arg\min\{-(s_i - s_t)^2/\bar a_{it} : t \in I_{low}, s_t < s_i\}`
    with :math:`\bar a_{it}` the exact second derivative of :math:`f` along the pair
    direction at the current point, or :math:`10^{-12}` if not positive) is moved
    along :math:`\alpha_i \mathrel{+}= y_i\delta`, :math:`\alpha_j \mathrel{-}= y_j\delta`,
    :math:`\delta \in [0, \delta_{max}]`. In the thesis's variables
    (:math:`\alpha_l \mathrel{+}= \Delta`, :math:`\alpha_m \mathrel{+}= s\Delta`)
    this is the **corrected** pair sign :math:`s = -y_ly_m` (the thesis's App. B
    states the reverse, which violates :math:`y^\top\alpha = 0`; errata
    S003-P15). The step is an exact line search of the 1-D convex function:

    * (B.2): :math:`\min_{lb\le\Delta\le ub}\sqrt{a\Delta^2 + 2b\Delta + c} - e\Delta`
      with :math:`a = W^2\|\phi_i - \phi_j\|^2`, :math:`b = W^2(\phi_i-\phi_j)^\top v`,
      :math:`c = W^2\|v\|^2`, :math:`e = y_id_i - y_jd_j`, solved in closed form by
      :func:`line_search_b2` (eq. B.5);
    * (3.11): :math:`\min \tfrac12\max(0, \sqrt{q(\delta)} - r^\top\alpha(\delta))^2 - e\delta`,
      convex and :math:`C^1`, solved by Brent's method on its derivative
      (:func:`line_search_311`).

    The vector :math:`p = K(\alpha\circ y)` is updated with two Gram columns per
    step (the full Gram matrix of the cluster means is formed once when it fits
    in ``cache_size`` MB, else columns are computed on demand).

    **Stopping criterion**: the maximal KKT violation

    .. math::

        m(\alpha) - M(\alpha) = \max_{I_{up}} s - \min_{I_{low}} s \le \texttt{tol}

    (equivalently :math:`b_{low} \le b_{up} + \texttt{tol}` of the thesis), checked
    again on a freshly recomputed :math:`p` before stopping. The offset is the
    package's :math:`b = -b_{thesis}`: the mean of :math:`s_j` over the free
    :math:`\alpha_j`, else the midpoint of :math:`[M, m]`.

    **Certificate**: ``Residuals(primal=max(|y^T alpha|, box violation),
    dual=max(m - M, 0), gap=P - D)`` with :math:`D = -f(\alpha)` and :math:`P` the
    primal objective (3.7)/(B.1) at the decoded :math:`(w, b)`; ``extras`` holds
    ``kkt_violation``, ``stop_reason`` and ``kernel_columns``.

    **Start and warm-start**: ``x0`` (feasible :math:`\alpha`) if given; else
    :math:`\alpha = 0` for (3.11) (:math:`f` is differentiable there) and, for
    (B.2), where :math:`\|v\|` is not differentiable at :math:`v = 0`, the thesis's
    start: :math:`\alpha = 1/2` on the first positive and the first negative
    cluster.

    """
    t_setup = time.perf_counter()
    if program.kind not in KINDS:
        raise SolverError(f"cbc-smo solves kinds {KINDS}, got {program.kind!r}")
    data = program.data
    y = np.asarray(data["y"], dtype=float)
    k = y.size
    if max_iter is None:
        max_iter = max(10**6, 100 * k)
    driver = Driver("cbc-smo", tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, allow_zero=True,
                    callback=callback,
                    legacy=lambda r: (r.iteration, r.values["alpha"], r.residual))
    check_cache_size("cbc-smo", cache_size)
    if selection not in ("second-order", "max-violating"):
        raise OptionError(
            f"selection must be 'second-order' or 'max-violating', got {selection!r}")
    # the dual box per cluster: C, C_j (class weights), 1 (W-form) or inf (hard margin)
    U = np.broadcast_to(np.asarray(data["cbc"].upper, dtype=float), (k,))
    gram = _Gram(data, cache_size)
    if x0 is not None:
        alpha = check_array("cbc-smo", "x0", x0, (k,))
        if (np.any(alpha < -1e-12) or np.any(alpha > U + 1e-12)
                or abs(float(y @ alpha)) > 1e-9 * max(1.0, float(np.abs(alpha).sum()))):
            raise OptionError("x0 is infeasible: need 0 <= alpha <= U and y^T alpha = 0")
        alpha = np.clip(alpha, 0.0, U)
    else:
        alpha = np.zeros(k)
        if "W" in data:  # thesis start: one positive and one negative cluster at 1/2
            i, j = np.flatnonzero(y > 0)[0], np.flatnonzero(y < 0)[0]
            alpha[i] = alpha[j] = min(0.5, U[i], U[j])  # inside a weighted box too
    loop = _Loop(data, gram, alpha, U, driver, selection == "second-order", verbose)
    setup_time = time.perf_counter() - t_setup
    driver.start()
    reason = loop.run(fresh_start=x0 is None)
    return _solution(program, loop, reason, setup_time, driver.elapsed)


def _solution(program: Any, loop: _Loop, reason: int, setup_time: float,
              solve_time: float) -> Solution:
    """The decoded model and the solver's certificate; a stall at round-off is OPTIMAL
    only if conicml's recomputed residuals certify the point."""
    data, alpha, y, it, viol = loop.data, loop.alpha, loop.y, loop.it, loop.viol
    status, message = loop.driver.finish(reason)
    if reason == UNBOUNDED:
        return Solution(status=status, solver="cbc-smo", objective=math.inf, iterations=it,
                        setup_time=setup_time, solve_time=solve_time,
                        residuals=Residuals(source="solver"), message=message,
                        extras={"stop_reason": reason, "kkt_violation": viol})
    p = data["cbc"].kernel_matvec(alpha * y)
    model = data["cbc"].model_from_alpha(alpha)
    dual = _dual_value(data, alpha, p)
    values = {"alpha": alpha.copy()}
    if not loop.wform:
        values["lam"] = np.array(max(math.sqrt(max(float((alpha * y) @ p), 0.0)),
                                     float(loop.r @ alpha)))
    feas = max(abs(float(y @ alpha)), float(np.max(-alpha, initial=0.0)),
               float(np.max(alpha - loop.U, initial=0.0)))
    residuals = Residuals(primal=feas, dual=max(viol, 0.0),
                          gap=model["primal_objective"] - dual, source="solver")
    if reason in (Reason.MAX_ITER, Reason.TIME_LIMIT, NO_PROGRESS):
        message += f"; KKT violation {viol:.2e} > tol {loop.driver.tol:g}"
    if status is Status.OPTIMAL and residuals.gap > 1e-3 * max(1.0, abs(dual)):
        # the dual optimum sits at v = 0 (the W-form with separable spheres): alpha is
        # optimal but does not determine the hyperplane, so the decoded model is not
        status = Status.OPTIMAL_INACCURATE
        message += ("; but the decoded (w, b) is not primal optimal (v = 0 at the optimum: "
                    "the spheres are separable with ||w|| <= W; lower W or solve the primal)")
    solution = Solution(
        status=status, solver="cbc-smo", objective=dual, values=values, iterations=it,
        setup_time=setup_time, solve_time=solve_time, residuals=residuals,
        message=message,
        extras={"stop_reason": reason, "kkt_violation": viol,
                "kernel_columns": loop.gram.columns, "b": model["b"]},
    )
    if reason in (Reason.STALLED, FLAT):
        # A stall at round-off (typically at the W-form's apex v = 0, where the pair
        # steps vanish) says nothing about the point itself: it is OPTIMAL if conicml's
        # recomputed residuals certify it, and stays OPTIMAL_INACCURATE otherwise.
        recomputed = program.certify(solution)
        if recomputed is not None and recomputed.max() <= CERTIFY_TOL:
            solution = dataclasses.replace(
                solution, status=Status.OPTIMAL,
                message=(f"{message}; the point is certified by conicml's recomputed "
                         f"residuals (largest {recomputed.max():.1e})"))
    if loop.verbose:
        print(f"cbc-smo: {solution.message} after {it} iterations; "
              f"objective {dual:.10g}, gap {residuals.gap:.3e}")
    return solution
