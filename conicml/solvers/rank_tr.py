r"""``rank-tr``: subspace trust-region Newton for smoothed RankSVM / RankRC.

Kind ``socp.rank.smoothed``.

Minimises the smoothed ranking objective of the contract
:class:`~conicml.contracts.ranking.RankingData`,

.. math::

    F(\beta) = \frac1N\sum_{(i,j):\,\ell_i>\ell_j}\ell_\epsilon(p_i - p_j)
    + \frac\lambda2\beta^\top K_{\mathcal R\mathcal R}\beta,\qquad p = K_{\bullet\mathcal R}\beta,

(thesis (3.15), (3.21); (6.2) for several levels) matrix-free: the loss, the
gradient :math:`g = \frac1N K_{\bullet\mathcal R}^\top\nabla L(p) + \lambda
K_{\mathcal R\mathcal R}\beta` and the generalized Hessian products (3.22, with
the transposes restored) are evaluated by sorting in
:math:`O(m\log m + m|\mathcal R|)` (:mod:`conicml.contracts.ranking_ops`); the
pairs are never formed, memory is :math:`O(m|\mathcal R|)`.

It stops at a relative gradient ``tol`` (or at the rounding level) and the program
certifies the answer by its gap bound; the algorithm, its exact-direction mode, the
stopping rule, the end game and the warm start are in the Notes of :func:`solve_rank_tr`.
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np
from scipy.linalg import cho_factor
from scipy.optimize import brentq

from .._utils.linalg import cholesky_solve
from .._utils.threads import one_blas_thread
from ..contracts.ranking_ops import (
    EXACT_MAX_BASIS,
    ROUNDING_TOL,
    KernelMetric,
    LinearizedRanking,
    PairwiseLoss,
    WhitenedFeatures,
    _contract,
    _fallback,
    _start,
    gap_bound,
    gradient_parts,
    point_parts,
    relative_gradient,
    shared_parts,
)
from ..exceptions import OptionError
from ..kinds import RANK_SMOOTHED
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import IntermediateResult, check_callback, notify
from ._options import check_common
from ._report import IterationReport
from ._warm import rank_beta

__all__ = ["solve_rank_tr", "trust_region_2d"]

MESSAGES = {
    0: "converged: relative gradient <= tol",
    1: "maximum number of iterations reached (max_iter)",
    2: "time limit reached (time_limit)",
    3: "stopped by the callback",
    4: "stalled: trust-region radius collapsed before the relative gradient reached tol",
    5: "stalled: no decrease of the objective in 30 iterations",
    6: "converged to rounding: no further decrease is possible in floating point "
       "(relative gradient <= 1e-5 but above tol)",
    7: "converged: Newton steps from the end point closed the objective gap",
    8: "stalled: no Newton step in the eigen-coordinates before the relative gradient "
       "reached tol",
}

#: Objective gap (relative, :func:`~conicml.contracts.ranking_ops.gap_bound`) above which
#: the end point gets Newton steps: well below the registered ``certify_tol`` of 1e-5.
POLISH_GAP = 1e-7

#: A loss Hessian kept with the eigen-coordinates preconditions the exact mode's CG at a
#: smaller λ of a path only while that λ is within this factor of the one it was formed
#: at: the quadratic pairs move with λ (the Hessian is formed anew instead).
REFERENCE_SPAN = 32.0

_SWITCH = -1  # internal: the trust-region loop hands over to the exact Newton steps

class _Report(IterationReport):
    COLUMN_NAMES = ["iter", "objective", "rel. grad", "radius", "CG", "ratio", "time [s]"]
    COLUMN_WIDTHS = [7, 17, 11, 11, 5, 9, 10]
    ITERATION_FORMATS = ["^7", "^17.10e", "^11.3e", "^11.3e", "^5", "^9.3f", "^10.3f"]


def trust_region_2d(H: np.ndarray, g: np.ndarray, radius: float) -> np.ndarray:
    r"""Exact minimiser of :math:`g^\top a + \frac12 a^\top H a` over :math:`\|a\| \le \Delta`.

    For the small (1x1 or 2x2) symmetric ``H`` of the subspace step: the
    (pseudo-)Newton point if it lies inside, else the boundary point
    :math:`a(\mu) = -(H + \mu I)^{-1}g` with :math:`\|a(\mu)\| = \Delta`
    found by Brent's method on the secular equation.
    """
    theta, W = np.linalg.eigh(0.5 * (H + H.T))
    gt = W.T @ g
    scale = max(float(np.max(np.abs(theta))), 1e-300)
    pos = theta > 1e-12 * scale
    if np.all(theta > -1e-12 * scale):
        a_t = np.where(pos, -gt / np.where(pos, theta, 1.0), 0.0)
        flat_ok = np.abs(gt) <= 1e-14 * np.linalg.norm(g) + 1e-300
        if np.linalg.norm(a_t) <= radius and np.all(pos | flat_ok):
            return W @ a_t
    lo = max(0.0, -float(theta.min()))

    def phi(mu: float) -> float:
        return float(np.linalg.norm(gt / (theta + mu))) - radius

    lo_eval = lo + 1e-14 * scale + 1e-300
    if phi(lo_eval) <= 0:  # hard case (a direction of zero/negative curvature orthogonal to g)
        a_t = -gt / (theta + lo_eval)
        k = int(np.argmin(theta))
        extra = math.sqrt(max(radius**2 - float(a_t @ a_t), 0.0))
        a_t[k] += extra
        return W @ a_t
    hi = lo + float(np.linalg.norm(g)) / radius + scale
    while phi(hi) > 0:
        hi *= 2.0
    mu = brentq(phi, lo_eval, hi, xtol=1e-14 * hi, rtol=1e-12, maxiter=200)
    return W @ (-gt / (theta + mu))


@register("rank-tr", kinds=[RANK_SMOOTHED], compare_options={"tol": 1e-9},
          certify_tol=1e-5, warm_start=rank_beta)
def solve_rank_tr(
    program: Any,
    *,
    tol: float = 1e-8,
    max_iter: int | None = 300,
    cg_max_iter: int = 25,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Any = None,
    x0: Any = None,
    preconditioner: str = "kernel",
    direction: str = "auto",
    linearization: LinearizedRanking | None = None,
    x0_fallback: tuple[Any, float] | None = None,
    whitened: WhitenedFeatures | None = None,
) -> Solution:
    r"""Subspace trust-region Newton (subspace of g and a PCG direction), matrix-free by sorting.

    Parameters
    ----------
    program : Program of kind ``socp.rank.smoothed``.
    tol : float, default=1e-8
        Relative gradient at which the run stops (see Notes).
    max_iter : int, default=300
    cg_max_iter : int, default=25
        PCG steps per iteration (the thesis' 25).
    time_limit : float, optional
        Seconds.
    verbose : bool, default=False
    callback : callable, optional
        ``callback(IntermediateResult)``; ``StopIteration`` stops -> ``USER_LIMIT``.
    x0 : ndarray of shape (n_basis,), optional
        Warm start :math:`\beta`.
    preconditioner : {"kernel", "diagonal"}, default="kernel"
        PCG preconditioner (see Notes).
    direction : {"auto", "cg", "exact"}, default="auto"
        The Newton direction: by PCG (``"cg"``, the thesis'), exact in the
        eigen-coordinates (``"exact"``), or PCG until one runs to ``cg_max_iter`` steps and
        exact from then on when the basis has at most :data:`EXACT_MAX_BASIS` samples
        (``"auto"``; exact from the start when ``linearization`` is given; see Notes).
    linearization : LinearizedRanking, optional
        The eigen-coordinates of this program's :math:`K_{\mathcal R\mathcal R}` (any
        λ; :meth:`LinearizedRanking.fits` must hold), computed once for a λ path and passed
        by its warm start; otherwise computed when the exact direction is first needed.
    x0_fallback : (ndarray of shape (n_basis,), float), optional
        A second start :math:`\beta` and its objective at this λ: the solve starts from
        it when :math:`F` at ``x0`` is not below that objective (a λ path's warm start
        offers an extrapolated ``x0`` and the previous :math:`\beta` this way, and
        :math:`F` at ``x0`` is evaluated once, by the solve).
    whitened : WhitenedFeatures, optional
        This program's basis features in the coordinates of the Cholesky factor of
        :math:`K_{\mathcal R\mathcal R}` (any λ), formed once for a λ path and passed by
        its warm start: the ``"kernel"`` PCG runs as plain CG on them (see Notes).

    Notes
    -----
    **Algorithm** (thesis A1 / paper §5.2: the subspace trust region of Branch,
    Coleman & Li 1999). Each iteration

    1. computes an approximate Newton direction :math:`s_N` by preconditioned CG on
       :math:`Hs = -g` (at most ``cg_max_iter`` = 25 steps, relative residual
       :math:`\min(0.1, \sqrt{\|g\|_{rel}})`, stopped on non-positive curvature),
       with one of two preconditioners. ``"diagonal"`` (the thesis' choice, whose
       formula it does not give):
       :math:`D = \frac1{2\epsilon N}(K_{\bullet\mathcal R}^{\circ2})^\top c_{\mathcal Q}
       + \lambda\operatorname{diag}K_{\mathcal R\mathcal R}`, where
       :math:`c_{\mathcal Q}` counts each sample's pairs in the quadratic piece
       (the diagonal of :math:`A^\top I^{\mathcal Q}A` without its cross terms).
       ``"kernel"`` (default): :math:`M = K_{\mathcal R\mathcal R}` (the program's,
       jittered; one Cholesky, :math:`O(|\mathcal R|^3)`). Since
       :math:`K_{\bullet\mathcal R} = \tilde X\Lambda^{1/2}U^\top`,
       :math:`M^{-1/2}HM^{-1/2} \approx \lambda I + \tilde X^\top H_p\tilde X/N`, which
       removes the ill-conditioning of :math:`K_{\mathcal R\mathcal R}`; with the
       diagonal one the 25 CG steps stall on Gaussian kernels (measured: 209
       iterations against about 15 on a 200-point RankRC, and no convergence in 300 on the
       RankSVM of the same data);
    2. solves the trust-region problem exactly on the 2-D subspace
       :math:`\operatorname{span}\{g, s_N\}` (eigen-decomposition of the projected
       2x2 Hessian and a secular equation), two Hessian products;
    3. accepts the step on decrease and updates the radius by the standard rules
       (:math:`\rho \ge 3/4` and a step at the boundary: :math:`\Delta \leftarrow 2\Delta`;
       :math:`\rho \le 1/4`: :math:`\Delta \leftarrow \|s\|/4`). The first radius is
       the length of the first Newton step. A rejected step (:math:`\rho < 10^{-4}`) is
       first backtracked (Armijo, halving; Nocedal & Yuan 1998) since the generalized
       Hessian does not see the kinks of :math:`\ell_\epsilon`; the radius then
       becomes the accepted length (measured: 14 iterations instead of more than 300 on a
       10-point RankSVM whose pairs all start in the linear piece).

    With ``whitened`` (:class:`~conicml.contracts.ranking_ops.WhitenedFeatures`
    :math:`X_L = K_{\bullet\mathcal R}L^{-\top}`, :math:`K_{\mathcal R\mathcal R} =
    LL^\top`) the ``"kernel"`` PCG runs as plain CG in :math:`z = L^\top\beta` on
    :math:`X_L^\top H_pX_L/N + \lambda I`, the same iterates in exact arithmetic, its
    residual measured in the :math:`K^{-1}` metric (:math:`\|r_z\| = \|r\|_{K^{-1}}`,
    the metric of the stopping rule): two passes over an :math:`m\times|\mathcal R|`
    matrix per step instead of five.

    **Exact direction** (``direction="auto"``, the default). At small :math:`\lambda` the
    Newton systems are too ill-conditioned for 25 PCG steps and the iterations creep. Once a
    PCG run costs about as much as forming the Hessian (:math:`|\mathcal R|/16` steps, capped
    at ``cg_max_iter``) and the basis has at most :data:`EXACT_MAX_BASIS` samples, the solve
    moves to the eigen-coordinates :math:`w = \Lambda^{1/2}U^\top\beta` of the linearised
    problem (3.17) and takes Newton steps on the Hessian
    :math:`\lambda I + \tilde X^\top H_p\tilde X/N` (bounded below by :math:`\lambda I`)
    with an Armijo search, as ``rank-newton`` does; :math:`\beta` is
    computed in :math:`w` because :math:`K_{\bullet\mathcal R}\beta` loses digits to
    cancellation there. The first step forms the Hessian explicitly, in
    :math:`O(m|\mathcal R|^2)`, and factors it; the next ones solve their Newton systems by
    CG on Hessian products (:math:`O(m|\mathcal R|)` each) preconditioned by that factor,
    and form the Hessian again only when CG has not converged in :math:`|\mathcal R|/8`
    steps (a truncated Newton method). The factor's Hessian is kept with the
    eigen-coordinates, so along a λ path (``linearization``) the next value starts with it
    as its preconditioner (at the new λ) and usually forms none; one formed at a λ
    :data:`REFERENCE_SPAN` times away or more is not used (the quadratic pairs have moved:
    CG on it would run to its cap first), and the first direction forms it anew. A stop
    at the rounding level (a promised decrease below :math:`m\epsilon_{\rm mach}|F|`,
    which a sum over :math:`m` samples cannot resolve, at a relative gradient
    :math:`\le 10^{-5}`) ends either mode, decided in the exact mode on a bound of the
    exact decrement (the CG decrement plus :math:`\|r\|^2/(2\lambda)`, on which CG also
    ends once it decides the stop); above that relative gradient the exact mode takes
    the full Newton step instead when it lowers the gradient's norm and leaves :math:`F`
    within the rounding level (a decrease :math:`F` cannot resolve, a gradient a Newton
    step still divides); a rejected trust-region step reuses its direction.

    **Stopping.** The relative gradient in the :math:`K_{\mathcal R\mathcal R}^{-1}`
    metric, :math:`\|g\|_{K^{-1}} / \max(\|g_{\rm loss}\|_{K^{-1}}, \|\lambda
    K_{\mathcal R\mathcal R}\beta\|_{K^{-1}}, 10^{-3}\|g_{\rm loss}(0)\|_{K^{-1}}) \le`
    ``tol``; or, when the decrease promised by the Newton step is below
    :math:`10^{-15}|F|` or the radius collapses (rounding level), a relative gradient
    :math:`\le 10^{-5}`. Stall: a radius below :math:`10^{-15}(1+\|\beta\|)` or 30
    iterations without decrease -> ``USER_LIMIT`` with the reason, as are ``max_iter``,
    ``time_limit`` and the callback. **End game:** a small relative gradient does not
    bound the objective where the loss is far more curved than :math:`\lambda K` (one
    feature on a much larger scale): when the program's gap bound
    (:func:`~conicml.contracts.ranking_ops.gap_bound`) of the end point exceeds
    :data:`POLISH_GAP`, Newton steps on the linearised problem (3.17) follow, and their
    point is kept if it lowers :math:`F` and closes the gap. The program certifies the
    answer by that gap bound (registered ``certify_tol`` 1e-5).

    **Warm start:** ``x0`` is a :math:`\beta` (of the same basis); see
    :func:`conicml.estimators.ranking.ranking_path` for the warm-started λ path.
    """
    # one BLAS thread: the iteration is a sequence of matrix-vector products and two
    # Cholesky factorisations of order n_basis, for which waking OpenBLAS's thread pool
    # costs more than the arithmetic when the cores are shared
    with one_blas_thread():
        return _solve_rank_tr(program, tol=tol, max_iter=max_iter, cg_max_iter=cg_max_iter,
                              time_limit=time_limit, verbose=verbose, callback=callback,
                              x0=x0, preconditioner=preconditioner, direction=direction,
                              linearization=linearization, x0_fallback=x0_fallback,
                              whitened=whitened)


def _solve_rank_tr(program: Any, *, tol: float, max_iter: int | None, cg_max_iter: int,
                   time_limit: float | None, verbose: bool, callback: Any, x0: Any,
                   preconditioner: str, direction: str,
                   linearization: LinearizedRanking | None, x0_fallback: Any,
                   whitened: WhitenedFeatures | None = None) -> Solution:
    t0 = time.perf_counter()
    max_iter = _check_options(tol, max_iter, time_limit, callback, cg_max_iter,
                              preconditioner, direction)
    rank = _contract(program)
    beta = _start(rank, x0, "rank-tr")
    fallback = _fallback(rank, x0_fallback, "rank-tr")
    linearization = _check_linearization(rank, linearization)
    whitened = _check_whitened(rank, whitened)
    KR, KRR, lam = rank.KR, rank.KRR, rank.lam
    shared = shared_parts(rank)  # the same along a λ path: built and factored once
    loss_fn = shared.loss
    n = loss_fn.n_pairs
    metric = shared.metric()  # the stopping measure, and the "kernel" preconditioner
    # the PCG's preconditioner at a sort state of the loss (or plain CG on the whitened
    # features)
    precond = (functools.partial(_diagonal, KR * KR, loss_fn, rank.eps * n, lam * np.diag(KRR))
               if preconditioner == "diagonal" else
               whitened if whitened is not None else (lambda state: metric.solve))
    setup_time = time.perf_counter() - t0
    t_solve = time.perf_counter()
    cg_total = exact_count = explicit = exact_cg = 0
    # a path passes the eigen-coordinates once a larger λ has needed the exact direction:
    # then this (smaller) λ needs it from the start
    exact = direction == "exact" or (direction == "auto" and linearization is not None
                                     and rank.n_basis <= EXACT_MAX_BASIS)
    cached = None  # the direction and its subspace at the current point (kept on rejection)
    stall = ""
    # F sums over the m samples: a change below m eps |F| is not measurable
    rounding = rank.n_samples * float(np.finfo(float).eps)

    space = _BetaSpace(rank, loss_fn)
    value_at, gradient_at = space.value_at, space.gradient_at
    f_zero, g_zero = shared.zero(rank)
    g_scale = metric.norm(g_zero)

    relgrad = functools.partial(_relgrad, metric, lam, g_scale)

    radius = ratio = math.nan
    k = no_decrease = code = cg_its = 0
    if verbose:
        _header(rank, tol)
    if exact:  # -- on in the eigen-coordinates w = Λ^{1/2} U^T β, which evaluate the start
        code = _SWITCH
    else:
        # each point evaluated afresh from the data (point_parts: p = K_R beta, not a sum
        # of steps): the certificate finds the returned point's evaluation, not repeats it
        f, gl, gr, _, st, p_cur, kb_cur = point_parts(rank, beta, loss_fn)
        if fallback is not None and not f < fallback[1]:
            beta = fallback[0]
            f, gl, gr, _, st, p_cur, kb_cur = point_parts(rank, beta, loss_fn)
        g = gl + gr
        rel = relgrad(g, gl, gr, beta)
    while code != _SWITCH:
        code = _limit(rel, tol, k, max_iter, time_limit, t_solve)
        if code is not None:
            break
        cg_its = 0
        if exact:  # -- on in the eigen-coordinates
            code = _SWITCH
            break
        if cached is None:  # a new point: a new direction (a rejected step keeps both)
            s, Hs_acc, cg_its, hess_at = _cg_direction(space, st, g, rel, precond,
                                                       cg_max_iter)
            cg_total += cg_its
            # a PCG run as costly as the explicit Hessian (about n_basis / 16 products):
            # the exact direction from now on
            exact = exact or (direction == "auto" and rank.n_basis <= EXACT_MAX_BASIS
                              and cg_its >= min(cg_max_iter, max(4, rank.n_basis // 16)))
            if -0.5 * float(g @ s) <= 1e-15 * max(abs(f), np.finfo(float).tiny):
                code = 6 if rel <= ROUNDING_TOL else 4
                break
            # -- 2-D subspace span{s, g}
            cached = _subspace(hess_at, g, s, Hs_acc)
        step, pred, radius = _subspace_step(cached, radius)
        snorm = float(np.linalg.norm(step))
        trial = beta + step
        f_new, gl_new, gr_new, gp_new, st_new, p_new, kb_new = point_parts(rank, trial, loss_fn)
        q_step, k_step = p_new - p_cur, kb_new - kb_cur
        t_acc = 1.0
        actual = f_new - f
        ratio = actual / pred if pred < 0 else -math.inf
        if ratio <= 0.25 and rel <= ROUNDING_TOL and -pred <= rounding * abs(f):
            k += 1  # a model that promises less than F can resolve: no step can be seen
            code = 6
            break
        if ratio >= 0.75 and snorm >= 0.9 * radius:
            radius = 2.0 * radius
        elif ratio <= 0.25:
            radius = min(radius, snorm) / 4.0
            # the generalized Hessian misses the kinks of the loss: before shrinking
            # blindly, backtrack along the step (Nocedal & Yuan 1998)
            slope = float(g @ step)
            if ratio < 1e-4 and slope < 0:
                found = _backtrack(lambda t: value_at(beta + t * step, p_cur + t * q_step,
                                                      kb_cur + t * k_step), f, slope)
                if found is not None:
                    t_acc, (f_new, gp_new, st_new) = found
                    step = t_acc * step
                    radius = max(radius, float(np.linalg.norm(step)))
                    ratio = (f_new - f) / (t_acc * slope)
        if f_new < f or (f_new <= f and ratio > 0):
            if t_acc == 1.0:
                beta, p_cur, kb_cur, gl, gr = trial, p_new, kb_new, gl_new, gr_new
                g = gl + gr
            else:  # a backtracked step: its scores afresh
                beta = beta + step
                p_cur, kb_cur = KR @ beta, KRR @ beta
                g, gl, gr = gradient_at(gp_new, kb_cur)
            f, st = f_new, st_new
            rel = relgrad(g, gl, gr, beta)
            no_decrease = 0
            cached = None
        else:
            no_decrease += 1
        k += 1
        if verbose:
            _Report.print_iteration(k, f, rel, radius, cg_its, ratio,
                                    time.perf_counter() - t_solve)
        if notify(callback, IntermediateResult(
                iteration=k, objective=f, residual=rel, elapsed=time.perf_counter() - t_solve,
                values={"beta": beta}, extras={"radius": radius, "cg_iterations": cg_its})):
            code = 3
            break
        if rel > tol and radius < 1e-15 * (1.0 + float(np.linalg.norm(beta))):
            code = 6 if rel <= ROUNDING_TOL else 4
            break
        if no_decrease >= 30:
            code = 6 if rel <= ROUNDING_TOL else 5
            break
    if code == _SWITCH:
        lin_point = _LinPoint(linearization or LinearizedRanking(rank), beta, g_scale,
                              fallback if k == 0 else None)
        k, code = lin_point.run(tol=tol, max_iter=max_iter, k=k, time_limit=time_limit,
                                t_solve=t_solve, rounding=rounding, verbose=verbose,
                                callback=callback)
        beta, f, rel, stall, g_norm, (exact_count, explicit, exact_cg), st = _exact_end(lin_point)
    else:
        g_norm = metric.norm(g)
    # the end point's own first term of the gap bound decides whether to polish
    estimate = g_norm**2 / (2.0 * lam) / max(f, 1e-3 * f_zero, np.finfo(float).tiny)
    polished = _end_game(rank, metric, beta, f, estimate) if code in (0, 4, 5, 6, 8) else None
    if polished is not None:
        beta, f, g, gl, gr = polished
        rel, code = relgrad(g, gl, gr, beta), 7
    return _solution(beta, f, rel, code, stall, k, verbose, setup_time, t_solve,
                     {"cg_iterations": cg_total, "hessian_products": space.products,
                      "radius": radius, "exact_directions": exact_count,
                      "explicit_hessians": explicit, "exact_cg_iterations": exact_cg,
                      "n_pairs": n, "quadratic_pairs": _quadratic_pairs(loss_fn, st, polished),
                      "whitened": isinstance(precond, WhitenedFeatures)})


class _BetaSpace:
    """The objective, its gradient and the Hessian products in :math:`\\beta` (the
    trust-region iterations), counting the products."""

    def __init__(self, rank: Any, loss_fn: PairwiseLoss) -> None:
        self.rank, self.loss, self.n, self.products = rank, loss_fn, loss_fn.n_pairs, 0

    def value_at(self, b: np.ndarray, p: np.ndarray, kb: np.ndarray) -> tuple:
        """F, the loss gradient in p and the sort state, from p = KR b and kb = KRR b (no
        product with KR)."""
        L, gp, st = self.loss.evaluate(p)
        return L / self.n + 0.5 * self.rank.lam * float(b @ kb), gp, st

    def gradient_at(self, gp: np.ndarray, kb: np.ndarray) -> tuple:
        gl, gr = self.rank.KR.T @ gp / self.n, self.rank.lam * kb
        return gl + gr, gl, gr

    def hess(self, st: list, s: np.ndarray) -> np.ndarray:
        self.products += 1
        KR = self.rank.KR
        return (KR.T @ self.loss.hess_vec(st, KR @ s) / self.n
                + self.rank.lam * (self.rank.KRR @ s))


def _exact_end(lin_point: _LinPoint) -> tuple:
    """β, F, the relative gradient, the stall note, |g| in the kernel metric (every
    eigenvalue kept, so the Euclidean norm in the eigen-coordinates), the step counts
    (Newton steps, explicit Hessians, CG iterations) and the loss's pair state of a run in
    the eigen-coordinates."""
    return (lin_point.beta(), lin_point.f, lin_point.rel, lin_point.stall,
            float(np.linalg.norm(lin_point.g)),
            (lin_point.steps, lin_point.hessians, lin_point.cg), lin_point.state)


def _quadratic_pairs(loss_fn: PairwiseLoss, state: list, polished: Any) -> int | None:
    """The pairs in the loss's quadratic piece at the returned point (``None`` after a
    polish, whose state is not kept). None of them means :math:`F` is quadratic in
    :math:`\\beta` there, so a path's next λ can start exactly from the scaled β."""
    return None if polished is not None else int(loss_fn.quadratic_counts(state).sum()) // 2


def _solution(beta: np.ndarray, f: float, rel: float, code: int, stall: str, k: int,
              verbose: bool, setup_time: float, t_solve: float, extras: dict) -> Solution:
    solve_time = time.perf_counter() - t_solve
    if verbose:
        print(f"rank-tr: {MESSAGES[code]}; objective {f:.12g}, relative gradient {rel:.3e}")
    return Solution(
        status=Status.OPTIMAL if code in (0, 6, 7) else Status.USER_LIMIT,
        solver="rank-tr",
        objective=f,
        values={"beta": beta},
        iterations=k,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=0.0, dual=rel, source="solver"),
        message=MESSAGES[code] + (f" ({stall})" if stall else "")
        + ("" if code in (0, 7) else f" (relative gradient {rel:.3g})"),
        extras=extras,
    )


def _limit(rel: float, tol: float, k: int, max_iter: int, time_limit: float | None,
           t_solve: float) -> int | None:
    """The code of MESSAGES that ends the run before iteration ``k + 1``, or ``None``."""
    if rel <= tol:
        return 0
    if k >= max_iter:
        return 1
    if time_limit is not None and time.perf_counter() - t_solve > time_limit:
        return 2
    return None


def _header(rank: Any, tol: float) -> None:
    print(f"rank-tr: m = {rank.n_samples}, |R| = {rank.n_basis}, N = {rank.n_pairs} pairs, "
          f"lam = {rank.lam:g}, eps = {rank.eps:g}, tol = {tol:g}")
    _Report.print_header()


def _divide(diag: np.ndarray, v: np.ndarray) -> np.ndarray:
    return v / diag


def _diagonal(KR2: np.ndarray, loss: PairwiseLoss, eps_n: float, reg: np.ndarray,
              state: list):
    """The ``"diagonal"`` preconditioner (Notes of :func:`solve_rank_tr`) at the loss's
    sort state, as ``v -> D^{-1} v``."""
    diag = KR2.T @ loss.quadratic_counts(state) / (2.0 * eps_n) + reg
    diag = np.maximum(diag, 1e-12 * max(float(diag.max()), np.finfo(float).tiny))
    return functools.partial(_divide, diag)


def _check_linearization(rank: Any, linearization: Any) -> LinearizedRanking | None:
    """The given eigen-coordinates at this program's λ; ``OptionError`` if not this program's."""
    if linearization is None:
        return None
    if not (isinstance(linearization, LinearizedRanking) and linearization.fits(rank)):
        raise OptionError("rank-tr: linearization must be the LinearizedRanking of this "
                          "program's kernel arrays (LinearizedRanking(rank) of a program "
                          f"of the same path), got {type(linearization).__name__}")
    return linearization.at_lambda(rank.lam)


def _check_whitened(rank: Any, whitened: Any) -> WhitenedFeatures | None:
    """The given whitened features; ``OptionError`` if not this program's."""
    if whitened is not None and not (isinstance(whitened, WhitenedFeatures)
                                     and whitened.fits(rank)):
        raise OptionError("rank-tr: whitened must be the WhitenedFeatures of this program's "
                          "kernel arrays (WhitenedFeatures(rank) of a program of the same "
                          f"path), got {type(whitened).__name__}")
    return whitened


def _check_options(tol: Any, max_iter: Any, time_limit: Any, callback: Any,
                   cg_max_iter: Any, preconditioner: Any, direction: Any) -> int:
    """Raise :class:`OptionError` on a bad option; return ``max_iter`` resolved."""
    if max_iter is None:
        max_iter = 300
    check_common("rank-tr", tol, max_iter, time_limit)
    check_callback("rank-tr", callback)
    if not (isinstance(cg_max_iter, (int, np.integer)) and cg_max_iter >= 1):
        raise OptionError(f"rank-tr: cg_max_iter must be an integer >= 1, got {cg_max_iter!r}")
    if preconditioner not in ("kernel", "diagonal"):
        raise OptionError(f"rank-tr: preconditioner must be 'kernel' or 'diagonal', "
                          f"got {preconditioner!r}")
    if direction not in ("auto", "cg", "exact"):
        raise OptionError(f"rank-tr: direction must be 'auto', 'cg' or 'exact', "
                          f"got {direction!r}")
    return max_iter


def _end_game(rank: Any, metric: KernelMetric, beta: np.ndarray, f: float, estimate: float):
    r"""Newton steps on the linearised problem from an end point whose gap bound is open.

    A trust region in the :math:`K` metric can stall where the loss is far more curved
    than :math:`\lambda K_{\mathcal R\mathcal R}` (a feature on a much larger scale): the
    relative gradient is small and the objective still above the optimum. Returns
    ``(beta, F, g, g_loss, g_reg)`` at a point whose gap bound is below
    :data:`POLISH_GAP`, or ``None`` (the end point is kept). ``estimate``: the first term
    of the gap bound from the solver's own gradient; well below :data:`POLISH_GAP`, the
    bound is not recomputed here (the program's certificate recomputes it).
    """
    if estimate <= 0.1 * POLISH_GAP or gap_bound(rank, beta, metric) <= POLISH_GAP:
        return None
    lin = LinearizedRanking(rank, eig_rtol=float(np.finfo(float).eps))
    w0 = lin.to_w(beta)
    w, value, _ = lin.polish(w0)
    candidate = lin.to_beta(w)
    if not (value <= lin.evaluate(w0)[0] and gap_bound(rank, candidate, metric) <= POLISH_GAP):
        return None
    # the objective is the one evaluated in the eigen-coordinates: K_R U U^T beta keeps a
    # feature on a much larger scale apart, where K_R beta loses digits to cancellation
    _, gl, gr = gradient_parts(rank, candidate)
    return candidate, value, gl + gr, gl, gr


def _relgrad(metric: KernelMetric, lam: float, g_scale: float, g: np.ndarray,
             gl: np.ndarray, gr: np.ndarray, beta: np.ndarray) -> float:
    """The relative gradient of the stopping rule at ``beta`` (gradient ``g = gl + gr``)."""
    # one solve for the three K^{-1} norms: gr = lam K_RR beta, so K^{-1} gr = lam beta and
    # K^{-1} gl = K^{-1} g - lam beta (up to the metric's fallback jitter, which moves only
    # the denominator of the relative gradient)
    u, lb = metric.solve(g), lam * beta
    return relative_gradient(math.sqrt(max(float(g @ u), 0.0)),
                             math.sqrt(max(float(gl @ (u - lb)), 0.0)),
                             math.sqrt(max(float(gr @ lb), 0.0)), g_scale)


def _cg_direction(space: _BetaSpace, state: list, g: np.ndarray, rel: float, precond: Any,
                  cg_max_iter: int) -> tuple[np.ndarray, np.ndarray, int, Any]:
    """``(s, H s, CG steps, v -> H v)``: PCG on H s = -g to the relative residual
    min(0.1, sqrt(rel)); ``precond(state)`` the preconditioner at the loss's sort state,
    or :class:`WhitenedFeatures` (plain CG on them). The last item is the Hessian product
    in beta at this state (the trust region's 2-D subspace needs one more)."""
    if isinstance(precond, WhitenedFeatures):
        return _whitened_cg(precond, space, state, g, rel, cg_max_iter)
    forcing = min(0.1, math.sqrt(rel)) * float(np.linalg.norm(g))
    hess = functools.partial(space.hess, state)
    s, Hs, its, _ = _pcg(hess, g, precond(state), forcing, cg_max_iter)
    return s, Hs, its, hess


#: Gather the rows of the whitened features that have a pair in the loss's quadratic
#: piece when at most this fraction of the rows has one (the copy costs about one pass
#: over those rows; a CG run makes two passes per product)
ACTIVE_ROWS_FRACTION = 0.6


def _whitened_cg(whitened: WhitenedFeatures, space: _BetaSpace, state: list, g: np.ndarray,
                 rel: float, cg_max_iter: int) -> tuple[np.ndarray, np.ndarray, int, Any]:
    r"""The ``"kernel"`` PCG direction as plain CG in z = L^T beta (``WhitenedFeatures``):
    ``(s, H s, CG steps, v -> H v)`` in beta, to the residual min(0.1, sqrt(rel))
    |g|_{K^{-1}}.

    The generalized Hessian :math:`H_p = \frac1{2\epsilon}P^\top I^{\mathcal Q}P` is zero
    on the rows with no pair in the quadratic piece (both ends of a quadratic pair are
    counted), so a product reads only the other rows of :math:`X_L`:
    :math:`X_L^\top H_pX_Lv = X_A^\top H_{AA}X_Av`. At a small λ few pairs sit in the
    piece (a fifth of the rows at the smallest λ of the thesis's grid on twonorm), and the
    rows ``A`` are copied once for the run. The product in beta is :math:`L(\cdot)L^\top`
    of the one in z (``lift``): :math:`\lambda K_{\mathcal R\mathcal R} = \lambda
    LL^\top`.
    """
    X, loss, lam, m = whitened.X, space.loss, space.rank.lam, space.rank.n_samples
    gz = whitened.to_z(g)
    rows = np.flatnonzero(loss.quadratic_counts(state))
    if rows.size <= ACTIVE_ROWS_FRACTION * m:
        XA, full = X[rows], np.zeros(m)

        def scores(v: np.ndarray) -> np.ndarray:
            full[rows] = XA @ v
            return full

        def hess_z(v: np.ndarray) -> np.ndarray:
            space.products += 1
            return XA.T @ loss.hess_vec(state, scores(v))[rows] / space.n + lam * v
    else:
        def hess_z(v: np.ndarray) -> np.ndarray:
            space.products += 1
            return X.T @ loss.hess_vec(state, X @ v) / space.n + lam * v

    forcing = min(0.1, math.sqrt(rel)) * float(np.linalg.norm(gz))
    sz, Hsz, its, _ = _pcg(hess_z, gz, np.copy, forcing, cg_max_iter)
    return (whitened.to_beta(sz), whitened.lift(Hsz), its,
            lambda v: whitened.lift(hess_z(whitened.lift_t(v))))


def _pcg(hess, g: np.ndarray, precond, forcing: float, cg_max_iter: int,
         decided: Any = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Preconditioned CG on ``H s = -g`` to ``|r| <= forcing``, stopped on non-positive
    curvature (then the first direction if no step was taken), or once
    ``decided(s, |r|)`` holds after a step.

    Returns ``(s, H s accumulated from the CG products, CG steps, |r|)``.
    """
    s = np.zeros_like(g)
    Hs = np.zeros_like(g)
    r = -g.copy()
    z = precond(r)
    d = z.copy()
    rz = float(r @ z)
    its = 0
    rnorm = float(np.linalg.norm(r))
    for _ in range(cg_max_iter):
        Hd = hess(d)
        curv = float(d @ Hd)
        if curv <= 1e-300 * max(1.0, float(d @ d)):
            if its == 0:
                s, Hs = d.copy(), Hd
            break
        alpha = rz / curv
        s += alpha * d
        Hs += alpha * Hd
        r -= alpha * Hd
        its += 1
        rnorm = float(np.linalg.norm(r))
        if rnorm <= forcing or (decided is not None and decided(s, rnorm)):
            break
        z = precond(r)
        rz_new = float(r @ z)
        d = z + (rz_new / rz) * d
        rz = rz_new
    return s, Hs, its, rnorm


class _LinPoint:
    r"""The iterate of the exact Newton mode: :math:`w` of the linearised problem (3.17).

    Its Hessian :math:`\lambda I + \tilde X^\top H_p\tilde X/N` is formed explicitly
    (:meth:`LinearizedRanking.hessian`) and factored, or its Newton system is solved by
    conjugate gradients preconditioned by the factor of a Hessian formed before (see
    :meth:`_direction`); every quantity is evaluated in
    :math:`w` (scores :math:`\tilde Xw`), where :math:`\beta = Tw` would lose digits to
    cancellation in :math:`K_{\bullet\mathcal R}\beta` (the Newton direction in
    :math:`\beta`, :math:`T H_w^{-1}T^\top g`, has components of order
    :math:`1/(\lambda\lambda_{\min}(K_{\mathcal R\mathcal R}))`). With every
    eigenvalue kept, :math:`\|\nabla_w F\| = \|\nabla_\beta F\|_{K^{-1}}`: the
    relative gradient is the one of the trust-region iterations.
    """

    def __init__(self, lin: LinearizedRanking, beta: np.ndarray, g_scale: float,
                 fallback: tuple[np.ndarray, float] | None = None) -> None:
        self.lin, self.w, self.g_scale, self.t = lin, lin.to_w(beta), g_scale, math.nan
        self.steps, self.stall = 0, ""
        self.hessians = self.cg = 0  # explicit Hessians formed; preconditioned CG steps
        # the Cholesky factor of λI + A for a loss Hessian A formed before (at an earlier
        # point of this solve or at another λ of the path): the CG preconditioner
        self.precond: Any = None
        reference = lin.reference_curvature()
        if reference is not None:
            span = lin.reference_lambda() / lin.lam
            if max(span, 1.0 / span) >= REFERENCE_SPAN:  # kept too far along the path
                reference = None  # formed anew by the first direction
        if reference is not None:
            try:
                self.precond = cho_factor(reference + lin.lam * np.eye(reference.shape[0]),
                                          lower=True, check_finite=False)
            except np.linalg.LinAlgError:
                self.precond = None
        # CG steps cost two products with the m x r features X~ each, the explicit Hessian
        # O(m r^2) (PairwiseLoss.hessian_form): a CG run past r / 8 steps costs about as
        # much, and the Hessian is formed instead
        self.cg_max = max(4, self.w.size // 8)
        self._set(lin.evaluate(self.w))
        if fallback is not None and not self.f < fallback[1]:  # the second start instead
            self.w = lin.to_w(fallback[0])
            self._set(lin.evaluate(self.w))

    def run(self, *, tol: float, max_iter: int, k: int, time_limit: float | None,
            t_solve: float, rounding: float, verbose: bool, callback: Any) -> tuple[int, int]:
        """Newton steps until a stop; ``(iterations, code of MESSAGES)``."""
        while True:
            code = _limit(self.rel, tol, k, max_iter, time_limit, t_solve)
            if code is not None:
                return k, code
            self.stall = self.newton_step(rounding) or ""
            k += 1
            if self.stall:
                return k, 6 if self.rel <= ROUNDING_TOL else 8
            self.steps += 1
            elapsed = time.perf_counter() - t_solve
            if verbose:
                _Report.print_iteration(k, self.f, self.rel, math.nan, 0, self.t, elapsed)
            if notify(callback, IntermediateResult(
                    iteration=k, objective=self.f, residual=self.rel, elapsed=elapsed,
                    values={"beta": self.beta()}, extras={"step": self.t})):
                return k, 3

    def _set(self, state: tuple) -> None:
        self.f, self.g, self.state, gl, gr = state
        self.rel = relative_gradient(float(np.linalg.norm(self.g)), gl, gr, self.g_scale)

    def beta(self) -> np.ndarray:
        return self.lin.to_beta(self.w)

    def _direction(self, forcing: float | None = None, explicit: bool = False,
                   level: float | None = None) -> tuple[np.ndarray, float]:
        r"""The Newton direction :math:`s \approx -H^{-1}g` at the current point and a bound
        on its decrement's error: ``(s, slack)`` with :math:`-\frac12 g^\top s \le
        \frac12 g^\top H^{-1}g \le -\frac12 g^\top s + {\rm slack}`.

        Truncated Newton first (unless ``explicit``), when a Hessian formed before is at
        hand: preconditioned CG on the Hessian products to ``forcing``, by default
        :math:`\|r\| \le \min(0.1, \|g\|_{rel})\|g\|` (an inexact Newton method with a
        forcing term of the order of the gradient keeps Newton's quadratic convergence:
        Dembo, Eisenstat & Steihaug 1982), at most ``cg_max`` steps. CG from zero
        minimises the quadratic model over its Krylov space, so its decrement is a lower
        bound, short of the exact one by
        :math:`\frac12 r^\top H^{-1}r \le \|r\|^2 / (2\lambda)` (:math:`H \succeq
        \lambda I`): the slack. CG also ends once that bound puts the exact decrement at
        or below ``level`` (the rounding level of :meth:`newton_step`, which then takes
        no step: further CG steps could not change that). Otherwise, or when CG has not
        converged in ``cg_max`` steps, the Hessian is formed, factored and kept (for this
        solve's next steps and the next λ of a path); the slack is then 0.
        """
        g = self.g
        if self.precond is not None and not explicit:
            if forcing is None:
                forcing = min(0.1, self.rel) * float(np.linalg.norm(g))
            lam = self.lin.lam

            def unmeasurable(s: np.ndarray, rnorm: float) -> bool:
                return -0.5 * float(g @ s) + rnorm**2 / (2.0 * lam) <= level

            s, _, its, residual = _pcg(
                lambda v: self.lin.hess_vec(self.state, v), g,
                functools.partial(cholesky_solve, self.precond), forcing, self.cg_max,
                None if level is None else unmeasurable)
            self.cg += its
            if ((residual <= forcing or (level is not None and unmeasurable(s, residual)))
                    and float(g @ s) < 0.0):
                return s, residual**2 / (2.0 * lam)
        A = self.lin.loss_hessian(self.state)
        self.hessians += 1
        try:
            factor = cho_factor(A + self.lin.lam * np.eye(A.shape[0]), lower=True,
                                check_finite=False)
        except np.linalg.LinAlgError:  # round-off: the gradient direction instead
            return -g, 0.0
        self.precond = factor
        self.lin.keep_curvature(A)
        return -cholesky_solve(factor, g), 0.0

    def newton_step(self, rounding: float) -> str | None:
        """One damped Newton step; ``None`` on success, else why no step was taken
        (a Newton decrement below ``rounding |F|`` is not measurable).

        A CG direction whose decrement is at the rounding level but whose slack leaves
        the exact one possibly above it is computed again, to a slack of a tenth of that
        level. One that would still stop the run above ``ROUNDING_TOL`` (a stall) is taken
        as a full step if that lowers the gradient's norm without raising :math:`F` above
        the level (:meth:`_flat_step`), else replaced by the direction of the explicit
        Hessian, which is taken the same way or ends the run."""
        level = rounding * abs(self.f)
        s, slack = self._direction(level=level)
        decrement = -0.5 * float(self.g @ s)
        if not decrement > level and decrement + slack > level:
            s, slack = self._direction(forcing=math.sqrt(0.2 * self.lin.lam * level),
                                       level=level)
            decrement = -0.5 * float(self.g @ s)
        if not decrement > level and self.rel > ROUNDING_TOL:
            # a stall above ROUNDING_TOL: F cannot see the step, its gradient can
            if self._flat_step(s, level):
                return None
            if slack > 0.0:  # decided on the exact direction, as without CG
                s, slack = self._direction(explicit=True)
                decrement = -0.5 * float(self.g @ s)
                if not decrement > level and self._flat_step(s, level):
                    return None
        if not decrement > level:
            return "the Newton decrement is at the rounding level of F"
        t, trial = self.lin.line_search(self.w, self.f, self.g, s)
        if trial is None:  # a direction spoiled by round-off: the gradient one
            s = -self.g
            t, trial = self.lin.line_search(self.w, self.f, self.g, s)
        if trial is None:
            return "the line search found no decrease"
        self.w, self.t = self.w + t * s, t
        self._set(trial)
        return None


    def _flat_step(self, s: np.ndarray, level: float) -> bool:
        r"""The full Newton step ``s`` where its decrement is below the rounding level
        of :math:`F` (``level``): taken when it lowers the gradient's norm and leaves
        :math:`F` within ``level`` of its value (no decrease of :math:`F` can be seen
        there, a Newton step still divides the gradient). Whether it was taken."""
        trial = self.lin.evaluate(self.w + s)
        if not (trial[0] <= self.f + level
                and float(np.linalg.norm(trial[1])) < float(np.linalg.norm(self.g))):
            return False
        self.w, self.t = self.w + s, 1.0
        self._set(trial)
        return True


def _subspace(hess, g: np.ndarray, s: np.ndarray, Hs: np.ndarray) -> tuple:
    """The 2-D subspace ``span{s, g}``: ``(Z, Z^T H Z, Z^T g, |s|, |g|)``."""
    gnorm = float(np.linalg.norm(g))
    sn = float(np.linalg.norm(s))
    cols = [s / sn] if sn > 0 else []
    v2 = g.copy()
    for c in cols:
        v2 -= c * float(c @ v2)
    if float(np.linalg.norm(v2)) > 1e-8 * gnorm:
        cols.append(v2 / float(np.linalg.norm(v2)))
    Z = np.stack(cols, axis=1)
    # H (s / |s|) is known from CG; only the gradient direction needs a product
    HZ = np.stack([Hs / sn if (j == 0 and sn > 0) else hess(Z[:, j])
                   for j in range(Z.shape[1])], axis=1)
    return Z, Z.T @ HZ, Z.T @ g, sn, gnorm


def _subspace_step(subspace: tuple, radius: float) -> tuple[np.ndarray, float, float]:
    """The trust-region step on the subspace of :func:`_subspace`:
    ``(step, predicted change, radius)``.

    The first radius (``nan``) is the length of the first Newton step.
    """
    Z, H2, g2, sn, gnorm = subspace
    if not math.isfinite(radius):
        radius = sn if sn > 0 else gnorm
    a = trust_region_2d(H2, g2, radius)
    return Z @ a, float(g2 @ a + 0.5 * a @ (H2 @ a)), radius


def _backtrack(value_at, f: float, slope: float):
    """Armijo halving from ``t = 1/2``: ``(t, value_at(t))`` or ``None`` after 30 halvings."""
    t = 0.5
    for _ in range(30):
        trial = value_at(t)
        if trial[0] <= f + 1e-4 * t * slope:
            return t, trial
        t *= 0.5
    return None
