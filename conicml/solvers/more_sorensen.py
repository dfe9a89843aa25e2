r"""``more-sorensen``: exact trust-region subproblem by the secular equation.

Kinds ``sdp.trs`` and ``socp.trs.convex`` (:mod:`conicml.formulations.trust_region`):

.. math::

    \min_s\; g^\top s + \tfrac12 s^\top H s \quad\text{s.t.}\quad \|Ds\|_2 \le \Delta .

**Algorithm** (Moré & Sorensen 1983, "Computing a trust region step", SIAM J.
Sci. Stat. Comput. 4:553–572; Nocedal & Wright 2006, section 4.3, on an
eigendecomposition as in Tayal 2014, section 7.3.1). In :math:`u = Ds` the
problem has :math:`\hat H = D^{-1}HD^{-1} = Q\Lambda Q^\top` and :math:`\hat g =
D^{-1}g`, :math:`c = Q^\top\hat g`. A point :math:`u^*` is a global minimiser iff
for some :math:`\nu \ge 0`: :math:`(\hat H + \nu I)u^* = -\hat g`,
:math:`\hat H + \nu I \succeq 0`, :math:`\nu(\Delta - \|u^*\|) = 0`. With
:math:`u(\nu) = -\sum_i c_i q_i/(\lambda_i + \nu)`:

1. *interior*: if :math:`\lambda_1 > 0` and :math:`\|u(0)\| \le \Delta`, then
   :math:`\nu = 0` (the Newton step);
2. *hard case*: if :math:`c_i = 0` on the eigenspace of :math:`\lambda_1` and
   :math:`\|p\| \le \Delta` for :math:`p = -\sum_{\lambda_i > \lambda_1} c_i q_i /
   (\lambda_i - \lambda_1)`, then :math:`\nu = -\lambda_1` and :math:`u^* = p +
   \tau q_1`, :math:`\tau = (\Delta^2 - \|p\|^2)^{1/2}` (when :math:`\lambda_1 \ge 0`
   the interior point :math:`p` is already optimal);
3. otherwise the root :math:`\nu > \max(0, -\lambda_1)` of the secular equation
   :math:`\phi(\nu) = 1/\|u(\nu)\| - 1/\Delta = 0` (concave and increasing),
   by Newton's method safeguarded by bisection on the bracket
   :math:`[\max(0,-\lambda_1),\ \|\hat g\|/\Delta - \lambda_1]`.

Each evaluation of :math:`\phi` costs :math:`O(n)` after the
:math:`O(n^3)` eigendecomposition. The eigenspace of :math:`\lambda_1` is
:math:`\{i : \lambda_i - \lambda_1 \le 10^{-12}\max(1, \|\hat H\|)\}` and a
component counts as zero when :math:`|c_i| \le 10^{-12}\max(1, \|\hat g\|)`.

**Stopping:** :math:`|\,\|u\| - \Delta| \le \texttt{tol}\,\Delta` (default
:math:`10^{-12}`); a bracket that no longer shrinks (stall) or ``max_iter``
Newton steps end with ``USER_LIMIT`` and the best point unless the point
already meets :math:`10^3\,\texttt{tol}`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..contracts.trust_region import TRSData
from ..exceptions import ProgramError
from ..kinds import TRS, TRS_CONVEX
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import IntermediateResult, check_callback, notify
from ._options import check_common

__all__ = ["secular_trs", "solve_more_sorensen"]


def secular_trs(
    H: np.ndarray,
    g: np.ndarray,
    delta: float,
    *,
    tol: float = 1e-12,
    max_iter: int = 100,
    eig: tuple[np.ndarray, np.ndarray] | None = None,
    time_limit: float | None = None,
    callback: Any = None,
) -> tuple[np.ndarray, dict]:
    r"""Global minimiser of :math:`g^\top u + \frac12 u^\top Hu`, :math:`\|u\| \le \Delta`.

    The unscaled core of the solver (no validation; ``H`` symmetric). ``eig``
    may pass a precomputed ``numpy.linalg.eigh(H)``.

    Returns
    -------
    u : ndarray
    info : dict
        ``nu`` (multiplier), ``case`` ("interior", "hard", "boundary"),
        ``iterations``, ``converged``, ``residual`` (:math:`|\|u\|-\Delta|/\Delta`,
        0 for the interior and hard cases), ``lambda_min``, ``message``.
    """
    start = time.perf_counter()
    lam, Q = np.linalg.eigh(H) if eig is None else eig
    c = Q.T @ g
    hscale = max(1.0, float(np.max(np.abs(lam), initial=0.0)))
    gscale = max(1.0, float(np.linalg.norm(g)))
    lam1 = float(lam[0])
    info: dict[str, Any] = {"lambda_min": lam1, "iterations": 0, "converged": True,
                            "residual": 0.0, "message": ""}

    def unorm(nu: float) -> float:
        return float(np.sqrt(np.sum((c / (lam + nu)) ** 2)))

    # 1. interior Newton step
    if lam1 > 1e-12 * hscale and unorm(0.0) <= delta:
        info.update(nu=0.0, case="interior", message="interior Newton step")
        return -Q @ (c / lam), info
    nu_low = max(0.0, -lam1)
    in_space = lam - lam1 <= 1e-12 * hscale
    # 2. hard case (also the singular PSD case with g orthogonal to the null space)
    if np.all(np.abs(c[in_space]) <= 1e-12 * gscale):
        denom = lam[~in_space] + nu_low
        coef = np.zeros_like(c)
        coef[~in_space] = -c[~in_space] / denom
        p = Q @ coef
        pn = float(np.linalg.norm(p))
        if pn <= delta:
            if lam1 >= -1e-12 * hscale:
                info.update(nu=0.0, case="interior",
                            message="interior step (singular H, g orthogonal to its null space)")
                return p, info
            tau = math.sqrt(max(delta**2 - pn**2, 0.0))
            info.update(nu=nu_low, case="hard", message="hard case: p + tau q_1")
            return p + tau * Q[:, 0], info
    # 3. secular equation, safeguarded Newton on phi(nu) = 1/||u(nu)|| - 1/delta
    lo, hi = nu_low, max(nu_low, float(np.linalg.norm(g)) / delta - lam1)
    if unorm(hi) > delta:  # round-off at the upper bound: widen it
        hi = hi * 2 + 1.0
    nu = hi
    if lo > 0 or lam1 > 0:
        probe = lo + 1e-8 * max(1.0, hi - lo) if lam1 <= 0 else lo
        if math.isfinite(unorm(probe)) and unorm(probe) > delta:
            lo = probe if lam1 <= 0 else lo
    best = (math.inf, hi)
    it = 0
    message = ""
    converged = False
    while it < max_iter:
        it += 1
        shifted = lam + nu
        norm = float(np.sqrt(np.sum((c / shifted) ** 2)))
        res = abs(norm - delta) / delta
        if res < best[0]:
            best = (res, nu)
        if notify(callback, IntermediateResult(iteration=it, residual=res,
                                               elapsed=time.perf_counter() - start,
                                               extras={"nu": nu, "bracket": (lo, hi)})):
            message = "stopped by the callback"
            break
        if res <= tol:
            converged = True
            break
        if norm > delta:
            lo = nu
        else:
            hi = nu
        if hi - lo <= 4 * np.finfo(float).eps * max(1.0, abs(hi)):
            message = "the bracket on nu no longer shrinks (stall)"
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            message = f"time_limit={time_limit:g}s reached"
            break
        dphi = float(np.sum(c**2 / shifted**3)) / norm**3
        step = (1.0 / norm - 1.0 / delta) / dphi if dphi > 0 and math.isfinite(dphi) else math.nan
        cand = nu - step
        nu = cand if (math.isfinite(cand) and lo < cand < hi) else 0.5 * (lo + hi)
    else:
        message = f"max_iter={max_iter} Newton steps reached"
    res, nu = best
    if converged or res <= 1e3 * tol:
        u = -Q @ (c / (lam + nu))
        info.update(nu=nu, case="boundary", iterations=it, converged=True, residual=res,
                    message=message or "secular equation solved")
        return u, info
    # near hard case (Moré & Sorensen 1983, section 3): the root is closer to -lam_1 than
    # round-off resolves; from the inner end of the bracket, ||u(hi)|| <= delta, move along
    # q_1 to the boundary. (H + hi I)(u + tau q_1) + g = tau (lam_1 + hi) q_1, so the
    # stationarity residual of the corrected point is |tau| (lam_1 + hi).
    nu = hi
    u = -Q @ (c / (lam + nu))
    un = float(np.linalg.norm(u))
    q1 = Q[:, 0]
    b = float(u @ q1)
    root = math.sqrt(max(b * b + delta**2 - un**2, 0.0))
    taus = (-b + root, -b - root)  # ||u + tau q_1|| = delta
    vals = [float(g @ (u + t * q1) + 0.5 * (u + t * q1) @ (H @ (u + t * q1))) for t in taus]
    tau = taus[int(np.argmin(vals))]
    u = u + tau * q1
    stat = abs(tau) * (lam1 + nu) / (float(np.linalg.norm(g)) + hscale * delta)
    ok = stat <= 1e3 * tol
    info.update(nu=nu, case="near-hard", iterations=it, converged=ok, residual=stat,
                message=(message + "; " if message else "")
                + f"near hard case: boundary reached along q_1 (stationarity {stat:.2g})")
    return u, info


@register("more-sorensen", kinds=[TRS, TRS_CONVEX], specialized=True, requires=("numpy",),
          description="Moré–Sorensen secular-equation TRS solver (eigendecomposition, hard case)")
def solve_more_sorensen(
    program: Any,
    *,
    tol: float = 1e-12,
    max_iter: int = 100,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Any = None,
) -> Solution:
    """Exact trust-region subproblem by the secular equation (see module docstring).

    Parameters
    ----------
    program : Program
        Of kind ``sdp.trs`` or ``socp.trs.convex``; reads ``data["trs"]``
        (:class:`~conicml.contracts.trust_region.TRSData`).
    tol : float, default=1e-12
        Relative accuracy of :math:`\\|Ds\\| = \\Delta` on the boundary.
    max_iter : int, default=100
        Safeguarded Newton steps on the secular equation.
    time_limit : float, optional
    verbose : bool, default=False
    callback : callable, optional
        ``callback(IntermediateResult)`` after each Newton step.
    """
    check_common("more-sorensen", tol, max_iter, time_limit)
    check_callback("more-sorensen", callback)
    trs = program.data.get("trs")
    if not isinstance(trs, TRSData):
        raise ProgramError("more-sorensen needs program.data['trs'] (a TRSData)")
    start = time.perf_counter()
    Hs, gs = trs.scaled()
    u, info = secular_trs(Hs, gs, trs.delta, tol=tol, max_iter=max_iter,
                          time_limit=time_limit, callback=callback)
    s = u / trs.d
    objective = float(gs @ u + 0.5 * u @ (Hs @ u))
    status = Status.OPTIMAL if info["converged"] else Status.USER_LIMIT
    if verbose:
        print(f"more-sorensen: {info['case']} case, nu={info['nu']:.6g}, "
              f"{info['iterations']} Newton steps, q={objective:.10g}")
    return Solution(
        status=status,
        solver="more-sorensen",
        objective=objective,
        values={"s": s},
        iterations=int(info["iterations"]),
        solve_time=time.perf_counter() - start,
        residuals=Residuals(primal=max(0.0, float(np.linalg.norm(u)) - trs.delta) / trs.delta,
                            dual=math.nan, gap=math.nan, source="solver"),
        message=f"more-sorensen: {info['message']}",
        extras={"nu": info["nu"], "case": info["case"], "lambda_min": info["lambda_min"]},
    )
