r"""``simplex-smo``: active-set Newton + pairwise (SMO) steps for the QPFS simplex QP.

The program (kind ``qp.qpfs.simplex``, contract :class:`~conicml.contracts.qpfs.SimplexQP`) is

.. math::

    \min_w\ f(w) = \tfrac12 w^\top P w + c^\top w
    \quad\text{s.t.}\quad w \ge 0,\ \mathbf 1^\top w = 1,
    \qquad P = (1-\alpha) L L^\top,\ c = -\alpha F .

It stops at a relative maximal KKT violation :math:`\le` ``tol``; the pairwise step, the
low-rank active-set phase, the stopping rule, certificate, start and exits are set out
in the Notes of :func:`solve_simplex_smo`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from scipy.linalg.lapack import dposv as _posv

from ..contracts.qpfs import SimplexQP
from ..exceptions import OptionError
from ..kinds import QPFS
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._driver import Driver, Reason, message_table, status_table
from ._report import IterationReport
from ._warm import simplex_w

__all__ = ["TERMINATION_MESSAGES", "solve_simplex_smo"]

_TAU = 1e-12

#: Stop reason -> message (the fields: viol, tol, max_iter, time_limit, window).
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "KKT violation {viol:.2e} <= tol {tol:g}",
    {Reason.MAX_ITER: "max_iter={max_iter} reached",
     Reason.TIME_LIMIT: "time_limit={time_limit:g}s reached",
     Reason.STALLED: "stalled: no decrease of the objective over {window} iterations "
                     "(KKT violation {viol:.2e})",
     5: "KKT violation {viol:.2e} at the round-off level of the gradient"},
)
ROUNDOFF = 5  # the violation is below the round-off of the gradient: certificate decides

#: Stop reason -> Status.
STATUS_MAP: dict[int, Status] = status_table({ROUNDOFF: Status.OPTIMAL})


class _Report(IterationReport):
    COLUMN_NAMES = ["iter", "objective", "KKT viol.", "i", "j", "step"]
    COLUMN_WIDTHS = [9, 16, 11, 7, 7, 11]
    ITERATION_FORMATS = ["^9d", "^+16.9e", "^11.2e", "^7d", "^7d", "^11.2e"]


class _Columns:
    """LRU cache of the columns P[:, i] = (1 - alpha) L L_i^T."""

    def __init__(self, L: np.ndarray, coef: float, cache_mb: float) -> None:
        self.L, self.coef = L, coef
        self.capacity = max(2, int(cache_mb * 2**20 // max(8 * L.shape[0], 1)))
        self.cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self.computed = 0

    def __call__(self, i: int) -> np.ndarray:
        col = self.cache.get(i)
        if col is not None:
            self.cache.move_to_end(i)
            return col
        col = self.coef * (self.L @ self.L[i])
        self.computed += 1
        self.cache[i] = col
        if len(self.cache) > self.capacity:
            self.cache.popitem(last=False)
        return col


def _face_direction(Ls: np.ndarray, g: np.ndarray, coef: float) -> tuple[np.ndarray, bool]:
    r"""Newton direction of the QP restricted to the face of the support S.

    Minimises :math:`\tfrac12 d^\top H d + g^\top d` over :math:`\mathbf 1^\top d = 0`
    with :math:`H = (1-\alpha) L_S L_S^\top` (``coef`` = 1 - alpha), in the orthonormal
    basis Z of :math:`\mathbf 1^\perp`. :math:`Z^\top H Z` is PSD of rank at most k;
    when the reduced gradient has a component along its null space the QP is unbounded
    along that zero-curvature direction, and the steepest descent within the null space
    is returned with ``curved=False`` (its step is limited by the bounds only).
    Otherwise the minimum-norm Newton step (``curved=True``, unit step optimal).
    """
    s = g.shape[0]
    if s == 1:
        return np.zeros(1), True
    # Z = columns 2..s of the Householder reflection H = I - 2uu^T/u^Tu, u = 1/sqrt(s) - e_1,
    # which maps e_1 to 1/sqrt(s): Z^T x = (Hx)[1:], Z p = H [0; p]
    u = np.full(s, 1.0 / np.sqrt(s))
    u[0] -= 1.0
    two_over = 2.0 / float(u @ u)
    B = (Ls - np.outer(u, two_over * (u @ Ls)))[1:]
    b = (g - (two_over * float(u @ g)) * u)[1:]
    H = coef * (B @ B.T)
    if s - 1 <= Ls.shape[1]:
        # Fast path: the reduced Hessian is generically positive definite when the
        # face has at most k + 1 features. A Cholesky factor (LAPACK posv) whose
        # pivots are all above 1e-5 of the largest gives the Newton step directly (a
        # tenth of an eigh's cost); a near-singular one takes the eigen-decomposition
        # below, which finds the null space. The outer loop re-checks every step
        # against the exact gradient.
        R, p, info = _posv(H, b, lower=1)
        if info == 0:
            piv = np.diagonal(R)
            if float(piv.min()) ** 2 > 1e-10 * float(piv.max()) ** 2:
                x = np.concatenate(([0.0], -p))
                return x - (two_over * float(u @ x)) * u, True
    lam, V = np.linalg.eigh(H)
    keep = lam > max(float(lam[-1]), 0.0) * 1e-12 + 1e-300
    if keep.all():
        p, curved = -(V @ ((V.T @ b) / lam)), True
    else:
        b_null = V[:, ~keep].T @ b
        if np.linalg.norm(b_null) > 1e-10 * max(float(np.linalg.norm(b)), 1e-300):
            p, curved = -(V[:, ~keep] @ b_null), False
        else:
            Vk = V[:, keep]
            p, curved = -(Vk @ ((Vk.T @ b) / lam[keep])), True
    x = np.concatenate(([0.0], p))
    return x - (two_over * float(u @ x)) * u, curved


class _Loop:
    """The point ``w`` on the simplex, its gradient tools and the two phases."""

    def __init__(self, qp: SimplexQP, w: np.ndarray, driver: Driver) -> None:
        self.qp, self.w, self.driver = qp, w, driver
        self.L, self.F, self.alpha = qp.factor, qp.relevance, float(qp.alpha)
        self.coef = coef = 1.0 - self.alpha
        self.c = -self.alpha * self.F
        self.d = coef * qp.diag()
        # round-off of the gradient entries G_i = (1-alpha) L_i^T v + c_i, v = L^T w:
        # about eps (1-alpha) ||L_i|| sum_j ||L_j|| w_j + eps alpha F_i. Below a few
        # hundred times that (over the support and the entering coordinate) a violation
        # is noise and the recomputed certificate decides.
        self.row_norms = np.sqrt(self.d / coef) if coef > 0 else np.zeros(w.size)
        self.it, self.viol, self.handover = 0, np.inf, ""

    def exact_gradient(self, w: np.ndarray) -> np.ndarray:
        return self.coef * (self.L @ (self.L.T @ w)) + self.c

    def resolution(self, G: np.ndarray, w: np.ndarray, g_min: float) -> float:
        # SimplexQP.resolution from the gradient at hand: G^T w - c^T w = (1-alpha)||L^T w||^2
        cw = float(self.c @ w)
        r = abs(float(G @ w) - cw) + abs(cw) + abs(g_min)
        return r if r > 0 else 1.0

    def floor(self, w: np.ndarray, idx: np.ndarray) -> float:
        reach = float(self.row_norms @ w) * float(self.row_norms[idx].max(initial=0.0))
        return 256.0 * np.finfo(float).eps * (self.coef * reach
                                              + self.alpha * float(np.abs(self.F).max()))

    def notify(self, extras: dict[str, Any]) -> bool:
        return self.driver.notify(self.it, self.viol, {"w": self.w.copy()}, extras=extras)

    def face_step(self, G: np.ndarray, support: np.ndarray, i_min: int, r: float,
                  last_full: bool, max_support: int) -> tuple[float, bool] | None:
        """One Newton step on the face (of the support, plus the entering coordinate
        once the face is solved); None hands over to SMO (``handover`` says why)."""
        w, G_S = self.w, G[support]
        S = support
        if (float(G_S.max()) - float(G_S.min())) / r <= 0.5 * self.driver.tol or last_full:
            if w[i_min] > 0:
                # the face is not solved to tol after a full Newton step: round-off
                self.handover = "face solve inaccurate"
                return None
            S = np.append(support, i_min)
        if S.size > max_support:
            self.handover = f"support > max_support={max_support}"
            return None
        G_S = G[S] if S is not support else G_S
        step_dir, curved = _face_direction(self.L[S], G_S, self.coef)
        wS = w[S]
        neg = step_dir < 0
        ratios = np.full(S.size, np.inf)
        ratios[neg] = wS[neg] / -step_dir[neg]
        t_max = float(ratios.min())
        t = min(1.0 if curved else np.inf, t_max)
        if not np.isfinite(t) or t <= 0.0:
            self.handover = "no feasible face step"
            return None
        w_new = wS + t * step_dir
        last_full = t < t_max
        if not last_full:
            w_new[int(np.argmin(ratios))] = 0.0
        w_new[w_new < 0] = 0.0
        w[S] = w_new
        w /= w.sum()
        return t, last_full

    def active_set(self, max_support: int) -> int | None:
        """Phase 1: primal active-set method with Newton steps on the faces; a stop
        reason, or None to hand over to SMO."""
        driver, w, tol = self.driver, self.w, self.driver.tol
        last_full = False
        as_cap = 20 * (self.L.shape[1] + 2) + 100
        while True:
            G = self.exact_gradient(w)
            support = np.flatnonzero(w)
            i_min = int(G.argmin())
            G_S_max = float(G[support].max())
            r = self.resolution(G, w, float(G[i_min]))
            self.viol = (G_S_max - float(G[i_min])) / r
            if self.viol <= tol:
                return int(Reason.CONVERGED)
            if G_S_max - float(G[i_min]) <= self.floor(w, np.append(support, i_min)):
                return ROUNDOFF
            if self.it >= as_cap:
                # face steps that do not settle (round-off in the face solves when one
                # feature's row is many orders larger than the others): SMO from here
                self.handover = f"no convergence in {as_cap} face steps"
                return None
            if self.it >= driver.max_iter:
                return int(Reason.MAX_ITER)
            if driver.out_of_time():
                return int(Reason.TIME_LIMIT)
            step = self.face_step(G, support, i_min, r, last_full, max_support)
            if step is None:
                return None
            t, last_full = step
            self.it += 1
            if driver.report is not None:
                driver.row(self.it, self.qp.objective(w), self.viol, i_min, -1, t)
            if driver.listening and self.notify({"support": int(np.count_nonzero(w)),
                                                 "step": t}):
                return int(Reason.CALLBACK)

    def smo(self, cols: _Columns) -> int:
        """Phase 2: SMO, pairwise steps with second-order selection; the gradient is
        recomputed every ``refresh`` steps, when the stall rule is checked."""
        driver, w, d, tol = self.driver, self.w, self.d, self.driver.tol
        G = self.exact_gradient(w)
        refresh = max(w.size, 100)
        f_ref = self.qp.objective(w)
        stalled_cycles = 0
        while True:
            i = int(np.argmin(G))
            pos = w > 0
            gmax = float(G[pos].max())
            self.viol = (gmax - G[i]) / self.resolution(G, w, float(G[i]))
            if self.viol <= tol:
                return int(Reason.CONVERGED)
            if self.it % refresh == 0 and gmax - G[i] <= self.floor(
                    w, np.append(np.flatnonzero(pos), i)):
                return ROUNDOFF  # the gradient is exact (just recomputed): round-off
            if self.it >= driver.max_iter:
                return int(Reason.MAX_ITER)
            if driver.out_of_time():
                return int(Reason.TIME_LIMIT)
            col_i = cols(i)
            b = G - G[i]
            a = d[i] + d - 2.0 * col_i
            a = np.where(a > _TAU, a, _TAU)
            score = np.where(pos & (b > 0), b * b / a, -1.0)
            j = int(np.argmax(score))
            t = min(b[j] / a[j], w[j])
            col_j = cols(j)
            if t >= w[j]:
                t = w[j]
                w[i] += t
                w[j] = 0.0
            else:
                w[i] += t
                w[j] -= t
            G += t * (col_i - col_j)
            self.it += 1
            if self.it % refresh == 0:
                G = self.exact_gradient(w)
                f_now = self.qp.objective(w)
                if f_ref - f_now <= 1e-15 * self.resolution(G, w, float(G.min())):
                    stalled_cycles += 1
                    if stalled_cycles >= 20:
                        self.stall_window = 20 * refresh
                        return int(Reason.STALLED)
                else:
                    stalled_cycles = 0
                f_ref = f_now
            if driver.report is not None and (self.it % max(1, refresh // 10) == 0
                                              or self.it == 1):
                driver.row(self.it, self.qp.objective(w), self.viol, i, j, t)
            if driver.listening and self.notify({"i": i, "j": j, "step": t}):
                return int(Reason.CALLBACK)


@register("simplex-smo", kinds=[QPFS], compare_options={"tol": 1e-10}, certify_tol=1e-6,
          warm_start=simplex_w)
def solve_simplex_smo(
    program: Any,
    *,
    tol: float = 1e-9,
    max_iter: int | None = None,
    time_limit: float | None = None,
    cache_size: float = 100.0,
    method: str = "auto",
    max_support: int = 400,
    x0: np.ndarray | None = None,
    verbose: bool = False,
    callback: Any = None,
) -> Solution:
    r"""Active-set Newton on the faces, then SMO (pairwise coordinate descent) on the simplex.

    Parameters
    ----------
    program : Program
        A ``qp.qpfs.simplex`` program (``program.data["qp"]`` is a ``SimplexQP``).
    tol : float, default=1e-9
        Stop when the relative KKT violation is at most ``tol`` (Notes).
    max_iter : int, optional
        Default ``max(10000, 50 M)``.
    time_limit : float, optional
        Seconds.
    cache_size : float, default=100
        MB of cached columns of P.
    method : {"auto", "active-set", "smo"}, default="auto"
        ``"smo"``: pairwise steps only. ``"active-set"``: the face-Newton active-set
        phase first (Notes), SMO only as its fallback. ``"auto"``: the
        active-set phase when the factor has rank ``k <= 200`` (its faces then hold at
        most about k + 1 features), SMO otherwise.
    max_support : int, default=400
        The active-set phase hands over to SMO when the support grows beyond this
        (its per-step cost grows as the cube of the support).
    x0 : ndarray of shape (M,), optional
        A feasible start (``w >= 0``, ``sum(w) = 1`` to 1e-9).
    verbose : bool, default=False
    callback : callable, optional
        ``callback(IntermediateResult)`` every iteration; ``StopIteration`` stops.

    Notes
    -----
    Like the SVM dual it has one equality constraint, so the smallest step that keeps
    feasibility moves weight between two coordinates: :math:`w_i \mathrel{+}= t`,
    :math:`w_j \mathrel{-}= t`. With :math:`G = \nabla f(w) = Pw + c`, the KKT conditions
    of the simplex are: some :math:`\nu` has :math:`G_i \ge \nu` for all i, with equality
    where :math:`w_i > 0`. Each iteration

    * picks :math:`i = \arg\min_t G_t` (any coordinate may grow) and, among the
      coordinates that may shrink (:math:`w_j > 0`) with :math:`b_j = G_j - G_i > 0`,
      :math:`j = \arg\max b_j^2 / \bar a_{ij}` with :math:`a_{ij} = P_{ii} + P_{jj} - 2P_{ij}`
      and :math:`\bar a = \max(a, \tau)`, :math:`\tau = 10^{-12}` — the second-order
      working-set selection of Fan, Chen & Lin (2005, JMLR 6) specialised to the simplex;
    * takes the exact minimiser along the pair, :math:`t = \min(b_j/\bar a_{ij}, w_j)`
      (a zero-curvature pair moves all of :math:`w_j`);
    * updates :math:`G \mathrel{+}= t(P_{:i} - P_{:j})`.

    **Active-set phase (low rank).** With :math:`Q = LL^\top` of rank k the gradient is
    :math:`G = (1-\alpha) L v + c` with :math:`v = L^\top w \in \mathbb R^k`; on the
    optimal support all :math:`G_i` equal one :math:`\nu`, which generically allows at most
    k + 1 features there. Pairwise steps converge slowly on such problems (about one sweep
    per support element and many more at small alpha: 1000+ iterations at M = 1000, k = 20).
    For ``k <= 200`` (``method="auto"``) the solver therefore first runs a primal
    active-set method: on the face of the current support S it takes the Newton step of
    the QP restricted to :math:`\{w_S : \mathbf 1^\top w_S = 1\}` (eigen-decomposition
    of the :math:`(|S|-1)`-dimensional reduced Hessian :math:`Z^\top L_S L_S^\top Z`,
    minimum-norm step; along a zero-curvature direction the steepest descent in the null
    space), cut back by the ratio test (the blocking feature leaves S); after a full step
    the feature with the smallest gradient entry joins S. Each step costs
    :math:`O(Mk + |S|^2 k + |S|^3)`, and the exact gradient is recomputed from the factor
    every step. It hands over to the SMO loop below (from its current point) if the
    support exceeds ``max_support`` or a face solve is not accurate to ``tol``.

    **SMO loop.** Columns :math:`P_{:i} = (1-\alpha) L L_i^\top` are computed from the factor,
    :math:`O(Mk)` each, and kept in an LRU cache of ``cache_size`` MB; the diagonal is
    :math:`(1-\alpha)\|L_i\|^2`. The M × M matrix is never formed. Every
    ``max(M, 100)`` iterations the gradient is recomputed from :math:`L^\top w` to stop
    round-off drift.

    **Stopping.** Every coordinate enters the test, on the support or off it: with
    :math:`r` = :meth:`SimplexQP.resolution` (the size of :math:`G^\top w` and
    :math:`\min_t G_t`, in units of the objective) the loop stops when the maximal KKT violation

    .. math::

        \Big(\max_{j:\,w_j>0} G_j - \min_t G_t\Big) / r \le \texttt{tol}.

    (Relative to :meth:`SimplexQP.scale`, the largest gradient entry anywhere on the simplex,
    a large factor whose optimum nearly cancels :math:`L^\top w` would let a point optimal
    only on a restricted support pass.) When the violation is below
    256 times the round-off of the gradient entries involved,
    :math:`\epsilon((1-\alpha)\max_i\|L_i\|\sum_j\|L_j\|w_j + \alpha\|F\|_\infty)` (i over the
    support and the entering coordinate), the loop stops as well and conicml's recomputed
    certificate decides. The active-set phase hands over to SMO after
    :math:`20(k+2)+100` face steps (face solves that do not settle: one feature's row many
    orders of magnitude larger than the others).

    **Certificate** (recomputed by the contract): primal = simplex violation (0 up to
    round-off: every step keeps :math:`\mathbf 1^\top w` fixed), dual = largest
    complementarity product, gap = Frank–Wolfe gap :math:`(G^\top w - \min G)/r
    \ge (f(w) - f^*)/r`.

    **Start.** ``x0`` (a point of the simplex) or the best vertex
    :math:`e_{\arg\min_i f(e_i)}`; QPFS solutions are sparse, so starting at a vertex
    needs about as many iterations as the support has elements.

    **Exits.** ``OPTIMAL`` at the tolerance; ``USER_LIMIT`` on ``max_iter`` (default
    ``max(10000, 50 M)``), ``time_limit``, a stall (no decrease of f larger than
    :math:`10^{-15} r` over 20 consecutive gradient refreshes) or the callback.

    """
    name = "simplex-smo"
    qp: SimplexQP = program.data["qp"]
    m = qp.n_features
    driver = Driver(name, tol=tol, max_iter=max(10_000, 50 * m) if max_iter is None else max_iter,
                    time_limit=time_limit, messages=TERMINATION_MESSAGES, statuses=STATUS_MAP,
                    allow_zero=True, callback=callback, report=_Report if verbose else None)
    if not (isinstance(cache_size, (int, float)) and cache_size > 0):
        raise OptionError(f"{name}: cache_size must be a positive number of MB, got "
                          f"{cache_size!r}")
    driver.start()
    if method not in ("auto", "active-set", "smo"):
        raise OptionError(f"{name}: method must be 'auto', 'active-set' or 'smo', got "
                          f"{method!r}")
    if not (isinstance(max_support, (int, np.integer)) and max_support >= 2):
        raise OptionError(f"{name}: max_support must be an integer >= 2, got {max_support!r}")
    if x0 is not None:
        w = np.array(x0, dtype=float).ravel()
        if w.shape != (m,) or not np.all(np.isfinite(w)):
            raise OptionError(f"{name}: x0 must be a finite vector of length {m}")
        if w.min() < -1e-12 or abs(w.sum() - 1.0) > 1e-9:
            raise OptionError(f"{name}: x0 must lie on the simplex (w >= 0, sum(w) = 1)")
        w = np.maximum(w, 0.0)
        w /= w.sum()
    else:
        w = np.zeros(m)
        alpha = float(qp.alpha)
        w[int(np.argmin(0.5 * ((1.0 - alpha) * qp.diag()) + -alpha * qp.relevance))] = 1.0
    loop = _Loop(qp, w, driver)
    use_active_set = method == "active-set" or (method == "auto" and loop.L.shape[1] <= 200)
    reason = loop.active_set(max_support) if use_active_set else None
    cols = _Columns(loop.L, loop.coef, cache_size)
    if reason is None:
        reason = loop.smo(cols)
    status, message = driver.finish(reason, viol=loop.viol, tol=driver.tol,
                                    max_iter=driver.max_iter, time_limit=time_limit,
                                    window=getattr(loop, "stall_window", 0))
    primal, dual, gap = qp.certificate(w)
    handover = loop.handover
    return Solution(
        status=status, solver=name, objective=qp.objective(w), values={"w": w},
        iterations=loop.it, solve_time=driver.elapsed,
        residuals=Residuals(primal=primal, dual=dual, gap=gap, source="solver"),
        message=message + (f" (active-set handed over to SMO: {handover})" if handover else ""),
        extras={"kkt_violation": float(loop.viol), "columns_computed": cols.computed,
                "method": "active-set" if use_active_set and not handover else
                ("active-set, then smo" if use_active_set else "smo")},
    )
