r"""The secular-equation core of the Moré–Sorensen trust-region step.

Shared by ``more-sorensen`` (the registered TRS solver) and the bound-constrained trust
region of the feature-scaling solvers; the algorithm is described in
:mod:`conicml.solvers.more_sorensen` (Moré & Sorensen 1983; Nocedal & Wright 2006,
section 4.3).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ._callback import IntermediateResult, notify

__all__ = ["secular_trs"]

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
