r"""``rank-newton``: linearised RankRC / RankSVM by truncated Newton (kind ``socp.rank.smoothed``).

The linearisation route of Tayal 2014 (§3.5.1–3.5.2; Chapelle & Keerthi 2010): explicit
eigen-features of :math:`K_{\mathcal R\mathcal R}`, then the linear RankSVM by CG Newton
steps. It stops when the relative gradient in :math:`w` is at most ``tol``; the features,
the step and the stopping rule are in the Notes of :func:`solve_rank_newton`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..contracts.ranking_ops import (
    EIG_RTOL,
    ROUNDING_TOL,
    LinearizedRanking,
    _contract,
    _fallback,
    _start,
    relative_gradient,
)
from ..exceptions import OptionError
from ..kinds import RANK_SMOOTHED
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import IntermediateResult, check_callback, notify
from ._options import check_common
from ._report import IterationReport
from ._warm import rank_beta

__all__ = ["solve_rank_newton"]

MESSAGES = {
    0: "converged: relative gradient <= tol",
    1: "maximum number of iterations reached (max_iter)",
    2: "time limit reached (time_limit)",
    3: "stopped by the callback",
    4: "stalled: the line search found no decrease before the relative gradient reached tol",
    5: "converged to rounding: the Newton decrement is below 1e-15 |F| "
       "(relative gradient <= 1e-5 but above tol)",
}


class _Report(IterationReport):
    COLUMN_NAMES = ["iter", "objective", "rel. grad", "step", "CG", "time [s]"]
    COLUMN_WIDTHS = [7, 17, 11, 9, 5, 10]
    ITERATION_FORMATS = ["^7", "^17.10e", "^11.3e", "^9.3g", "^5", "^10.3f"]


@register("rank-newton", kinds=[RANK_SMOOTHED], compare_options={"tol": 1e-9},
          certify_tol=1e-5, warm_start=rank_beta)
def solve_rank_newton(
    program: Any,
    *,
    tol: float = 1e-8,
    max_iter: int | None = 200,
    cg_max_iter: int = 200,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Any = None,
    x0: Any = None,
    eig_rtol: float = EIG_RTOL,
    linearization: LinearizedRanking | None = None,
    x0_fallback: tuple[Any, float] | None = None,
) -> Solution:
    """Linearised RankRC (eigen-features of K_RR) solved by truncated Newton with line search.

    Parameters
    ----------
    program : Program of kind ``socp.rank.smoothed``.
    tol : float, default=1e-8
        Relative gradient at which the run stops.
    max_iter : int, default=200
        Newton iterations.
    cg_max_iter : int, default=200
        CG steps per Newton iteration.
    time_limit : float, optional
    verbose : bool, default=False
    callback : callable, optional
    x0 : ndarray of shape (n_basis,), optional
        Warm start :math:`\\beta`.
    eig_rtol : float, default=1e-13
        Relative eigenvalue cut-off of the linearisation.
    linearization : LinearizedRanking, optional
        The linearisation of this program's kernel arrays with this ``eig_rtol``, at any
        λ (:meth:`LinearizedRanking.fits` must hold): a λ path computes it once and its
        warm start passes it on.
    x0_fallback : (ndarray of shape (n_basis,), float), optional
        A second start :math:`\\beta` and its objective at this λ, taken when :math:`F`
        at ``x0`` is not below it (as in ``rank-tr``).

    Notes
    -----
    The linearisation route of the thesis (§3.5.1, (3.16)–(3.17); paper (14)–(15)):
    factor :math:`K_{\\mathcal R\\mathcal R} = U\\Lambda U^\\top`, drop the eigenvalues
    below ``eig_rtol`` :math:`\\lambda_{\\max}`, form the explicit features
    :math:`\\tilde X = K_{\\bullet\\mathcal R}U\\Lambda^{\\dagger1/2}` (erratum: the
    printed text has :math:`\\Lambda^{1/2}`) and solve the *linear* RankSVM

    .. math::

        \\min_w\\ \\frac1N\\sum_{(i,j):\\,\\ell_i>\\ell_j}
        \\ell_\\epsilon\\big((\\tilde x_i-\\tilde x_j)^\\top w\\big)
        + \\frac\\lambda2\\|w\\|^2,\\qquad \\beta = U\\Lambda^{\\dagger1/2}w,

    by truncated Newton (thesis §3.5.2, Chapelle & Keerthi 2010): CG on
    :math:`(\\lambda I + \\tilde X^\\top H_p\\tilde X/N)s = -g` (Hessian products by
    sorting, :mod:`conicml.contracts.ranking_ops`; at most ``cg_max_iter`` steps,
    relative residual :math:`\\min(0.1,\\sqrt{\\|g\\|_{rel}})`) and an Armijo
    backtracking line search. The Hessian in :math:`w` is bounded below by
    :math:`\\lambda I`, so no trust region is needed. Costs: :math:`O(|\\mathcal R|^3 +
    m|\\mathcal R|^2)` for the features, then :math:`O(m|\\mathcal R| + m\\log m)` per
    Hessian product. It reaches the same optimum as ``rank-tr`` (Proposition 8:
    subset = Nyström = linearised) by an independent route.

    **Stopping.** Relative gradient in :math:`w`,
    :math:`\\|g\\|/\\max(\\|\\tilde X^\\top\\nabla L/N\\|, \\lambda\\|w\\|, 10^{-3}\\|\\tilde
    X^\\top\\nabla L(0)/N\\|) \\le` ``tol``; the program's certificate recomputes the same
    measure in :math:`\\beta` (the :math:`K^{-1}` metric). A line
    search that cannot decrease the objective -> ``USER_LIMIT`` ("stalled"), as are
    ``max_iter``, ``time_limit`` and the callback. **Warm start:** ``x0`` is a
    :math:`\\beta`, mapped to :math:`w = \\Lambda^{1/2}U^\\top\\beta`.
    """
    t0 = time.perf_counter()
    if max_iter is None:
        max_iter = 200
    check_common("rank-newton", tol, max_iter, time_limit)
    check_callback("rank-newton", callback)
    if not (isinstance(cg_max_iter, (int, np.integer)) and cg_max_iter >= 1):
        raise OptionError(f"rank-newton: cg_max_iter must be an integer >= 1, got {cg_max_iter!r}")
    if not (isinstance(eig_rtol, float) and 0 < eig_rtol < 1):
        raise OptionError(f"rank-newton: eig_rtol must be a float in (0, 1), got {eig_rtol!r}")
    rank = _contract(program)
    beta0 = _start(rank, x0, "rank-newton")
    fallback = _fallback(rank, x0_fallback, "rank-newton")
    if linearization is None:
        problem = LinearizedRanking(rank, eig_rtol)
    elif isinstance(linearization, LinearizedRanking) and linearization.fits(rank, eig_rtol):
        problem = linearization.at_lambda(rank.lam)
    else:
        raise OptionError("rank-newton: linearization must be the LinearizedRanking of this "
                          "program's kernel arrays with the same eig_rtol (from a program of "
                          f"the same path), got {type(linearization).__name__}")
    T, Xt, lam, n = problem.T, problem.Xt, problem.lam, problem.n
    evaluate = problem.evaluate
    w = problem.to_w(beta0)  # = Λ^{1/2} U^T β
    setup_time = time.perf_counter() - t0
    t_solve = time.perf_counter()

    g_scale = evaluate(np.zeros_like(w))[3]  # |X~^T grad L(0)| / N, the scale of the loss
    f, g, st, gl, gr = evaluate(w)
    if fallback is not None and not f < fallback[1]:  # the second start instead
        w = problem.to_w(fallback[0])
        f, g, st, gl, gr = evaluate(w)
    rel = relative_gradient(float(np.linalg.norm(g)), gl, gr, g_scale)
    k = 0
    code = 0
    cg_total = 0
    if verbose:
        print(f"rank-newton: m = {rank.n_samples}, features = {Xt.shape[1]}, N = {n} pairs, "
              f"lam = {lam:g}, tol = {tol:g}")
        _Report.print_header()
    while True:
        if rel <= tol:
            code = 0
            break
        if k >= max_iter:
            code = 1
            break
        if time_limit is not None and time.perf_counter() - t_solve > time_limit:
            code = 2
            break
        # -- CG on (lam I + Xt^T H_p Xt / N) s = -g, relative residual min(0.1, sqrt(rel))
        forcing = min(0.1, math.sqrt(rel)) * float(np.linalg.norm(g))
        s, its = problem.newton_direction(g, st, forcing, cg_max_iter)
        cg_total += its
        if -0.5 * float(g @ s) <= 1e-15 * max(abs(f), np.finfo(float).tiny):
            code = 5 if rel <= ROUNDING_TOL else 4
            break
        # -- Armijo backtracking
        t, trial = problem.line_search(w, f, g, s)
        k += 1
        if trial is None:
            code = 4
            break
        w = w + t * s
        f, g, st, gl, gr = trial
        rel = relative_gradient(float(np.linalg.norm(g)), gl, gr, g_scale)
        if verbose:
            _Report.print_iteration(k, f, rel, t, its, time.perf_counter() - t_solve)
        if notify(callback, IntermediateResult(
                iteration=k, objective=f, residual=rel, elapsed=time.perf_counter() - t_solve,
                values={"beta": T @ w, "w": w}, extras={"step": t, "cg_iterations": its})):
            code = 3
            break
    beta = T @ w
    solve_time = time.perf_counter() - t_solve
    if verbose:
        print(f"rank-newton: {MESSAGES[code]}; objective {f:.12g}, relative gradient {rel:.3e}")
    return Solution(
        status=Status.OPTIMAL if code in (0, 5) else Status.USER_LIMIT,
        solver="rank-newton",
        objective=f,
        values={"beta": beta, "w": w},
        iterations=k,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=0.0, dual=rel, source="solver"),
        message=MESSAGES[code] + ("" if code == 0 else f" (relative gradient {rel:.3g})"),
        extras={"cg_iterations": cg_total, "n_features": int(Xt.shape[1]), "n_pairs": n,
                "eig_rtol": eig_rtol},
    )
