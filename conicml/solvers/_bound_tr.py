r"""Coleman–Li affine-scaling reflective trust region for :math:`\min F(x)`, :math:`x_B \ge 0`.

Used by every feature-scaling optimiser (Tayal 2014, section 7.3.1, FULL-FS and the
FS blocks of Algorithms 1–3); Coleman & Li (1996), "An interior trust region approach
for nonlinear minimization subject to bounds", SIAM J. Optim. 6:418–445. It stops when
the scaled gradient :math:`\|\,|v|\circ g\|_\infty \le` ``tol``; the scaling, the step and
the other stopping rules are in the Notes of :func:`bound_trust_region`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._callback import IntermediateResult, notify
from ._secular import secular_trs

__all__ = ["TRResult", "bound_trust_region"]

Fun = Callable[[np.ndarray, int], tuple[float, Any, Any]]


@dataclass
class TRResult:
    """Outcome of :func:`bound_trust_region`."""

    x: np.ndarray
    f: float
    grad: np.ndarray
    hess: np.ndarray | None
    iterations: int
    converged: bool
    message: str
    optimality: float
    history: list = field(default_factory=list)


def _max_step(x: np.ndarray, p: np.ndarray, bounded: np.ndarray) -> float:
    """Largest t with x + t p >= 0 on the bounded coordinates (inf if none is hit)."""
    hit = bounded & (p < 0)
    if not np.any(hit):
        return math.inf
    return float(np.min(x[hit] / -p[hit]))


def bound_trust_region(
    fun: Fun,
    x0: np.ndarray,
    bounded: np.ndarray,
    *,
    tol: float = 1e-6,
    max_iter: int = 200,
    delta0: float = 1.0,
    time_limit: float | None = None,
    callback: Any = None,
    stop_at_rounding: bool = False,
) -> TRResult:
    """Minimise ``fun`` subject to ``x[bounded] >= 0`` from a strictly feasible ``x0``.

    ``fun(x, order)`` returns ``(value, grad, hess)`` (``grad``/``hess`` may be
    ``None`` below the order asked; ``hess`` may be a function of no argument that
    returns it, called only when a step is to be taken from ``x``; the result's ``hess``
    is then ``None`` if it never was).

    Notes
    -----
    For the lower bounds :math:`x_i \\ge 0`, :math:`i \\in B` (the other variables free),
    with :math:`g = \\nabla F(x)`: :math:`|v_i| = x_i` if :math:`i \\in B` and
    :math:`g_i \\ge 0`, else :math:`|v_i| = 1`; first-order optimality is
    :math:`\\|\\,|v|\\circ g\\|_\\infty = 0`. With :math:`D = \\operatorname{diag}(|v|^{1/2})`
    each iteration solves the trust-region subproblem *exactly* (``secular_trs``, the
    ``more-sorensen`` core, full eigendecomposition as in the thesis)

    .. math::

        \\min_{\\hat s}\\; \\hat g^\\top\\hat s + \\tfrac12\\hat s^\\top\\hat M\\hat s,\\quad
        \\|\\hat s\\| \\le \\Delta,\\qquad \\hat g = Dg,\\
        \\hat M = DHD + \\operatorname{diag}(g\\circ J^v),

    (:math:`J^v_{ii} = 1` where :math:`|v_i| = x_i`, else 0), takes :math:`s = D\\hat s`
    and keeps the iterate strictly feasible: a step that crosses a bound is replaced by
    the best (in the model) of the step truncated at :math:`\\theta` times the distance to
    the bound (:math:`\\theta = \\max(0.95, 1 - \\|\\hat g\\|)`), the step reflected at the
    first bound it meets, and the truncated scaled Cauchy step. The ratio
    :math:`\\rho = (F(x+s) - F(x) + \\frac12\\hat s^\\top\\operatorname{diag}(g\\circ J^v)\\hat s)
    / \\psi(\\hat s)` drives the radius (shrink by 4 below 0.25, double above 0.75 on the
    boundary; accept above 0.1).

    Stops when :math:`\\|\\,|v|\\circ g\\|_\\infty \\le \\texttt{tol}` (converged), when an
    accepted step changes :math:`F` by less than :math:`10^{-14}(1+|F|)` three times in
    a row (converged: stalled at machine precision), with ``stop_at_rounding`` when the
    model's decrease :math:`-\\psi(\\hat s)` is at most :math:`10^{-14}(1+|F|)` (converged:
    no decrease left that :math:`F`'s rounding would show; no trial point is evaluated),
    when :math:`\\Delta` falls below
    :math:`10^{-12}` (stall), at ``max_iter`` or ``time_limit``.
    """
    start = time.perf_counter()
    x = np.array(x0, dtype=float)
    bounded = np.asarray(bounded, bool)
    x[bounded] = np.maximum(x[bounded], 1e-10)
    f, g, H = fun(x, 2)
    delta = float(delta0)
    history: list = []
    small = 0
    message = f"max_iter={max_iter} iterations reached"
    converged = False
    it = 0
    opt = math.inf
    while True:
        at_lower = bounded & (g >= 0)
        absv = np.where(at_lower, x, 1.0)
        opt = float(np.max(np.abs(absv * g), initial=0.0))
        if opt <= tol:
            converged, message = True, f"scaled gradient {opt:.2g} <= tol"
            break
        if it >= max_iter:
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            message = f"time_limit={time_limit:g}s reached"
            break
        it += 1
        if callable(H):
            H = H()
        Dv = np.sqrt(absv)
        gh = Dv * g
        cv = np.where(at_lower, g, 0.0)  # diag(g * J^v) >= 0
        Mh = Dv[:, None] * H * Dv[None, :] + np.diag(cv)
        Mh = 0.5 * (Mh + Mh.T)

        def model(sh: np.ndarray) -> float:
            return float(gh @ sh + 0.5 * sh @ (Mh @ sh))

        sh, _ = secular_trs(Mh, gh, delta)
        s = Dv * sh
        theta = max(0.95, 1.0 - float(np.linalg.norm(gh)))
        tb = _max_step(x, s, bounded)
        cands: list[np.ndarray] = []
        if tb > 1.0:
            cands.append(s)
        else:
            cands.append(theta * tb * s)
            # reflection at the first bound met
            p1 = tb * s
            xb = x + p1
            hit = bounded & (s < 0) & (np.abs(xb) <= 1e-12 * np.maximum(1.0, np.abs(x)))
            r = s.copy()
            r[hit] = -r[hit]
            xb[hit] = 0.0
            tr = _max_step(xb, r, bounded & ~hit)
            tau = min(1.0 - tb, theta * tr)
            if tau > 0:
                cands.append(p1 + tau * r)
        # scaled Cauchy step along -gh
        gnorm = float(np.linalg.norm(gh))
        if gnorm > 0:
            dh = -gh / gnorm
            curv = float(dh @ Mh @ dh)
            tc = delta if curv <= 0 else min(delta, gnorm / curv)
            sc = Dv * (tc * dh)
            tbc = _max_step(x, sc, bounded)
            cands.append(sc if tbc > 1.0 else theta * tbc * sc)
        vals = [model(c / Dv) for c in cands]
        k = int(np.argmin(vals))
        s, pred = cands[k], vals[k]
        if stop_at_rounding and -pred <= 1e-14 * (1 + abs(f)):
            converged = True
            message = f"model decrease {-pred:.1g} below the rounding of F"
            break
        sh = s / Dv
        xn = x + s
        if bounded.any():
            xn[bounded] = np.maximum(xn[bounded], 1e-300)
        fn = fun(xn, 0)[0]
        actual = fn - f + 0.5 * float(sh @ (cv * sh))
        rho = actual / pred if pred < 0 else -math.inf
        shn = float(np.linalg.norm(sh))
        if not math.isfinite(fn) or rho < 0.25:
            delta = 0.25 * min(delta, shn if shn > 0 else delta)
        elif rho > 0.75 and shn >= 0.8 * delta:
            delta = 2.0 * delta
        accepted = math.isfinite(fn) and rho > 0.1
        if accepted:
            small = small + 1 if abs(fn - f) <= 1e-14 * (1 + abs(f)) else 0
            x = xn
            f, g, H = fun(x, 2)
        history.append({"f": f, "delta": delta, "rho": rho, "optimality": opt})
        if notify(callback, IntermediateResult(iteration=it, objective=f, residual=opt,
                                               elapsed=time.perf_counter() - start,
                                               extras={"delta": delta, "rho": rho})):
            message = "stopped by the callback"
            break
        if small >= 3:
            converged, message = True, "F no longer changes (machine precision)"
            break
        if delta < 1e-12:
            message = f"trust region collapsed (Delta={delta:.1g}): stall"
            break
    return TRResult(x=x, f=f, grad=g, hess=None if callable(H) else H, iterations=it,
                    converged=converged,
                    message=message, optimality=opt, history=history)
