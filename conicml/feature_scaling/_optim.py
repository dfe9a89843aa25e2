r"""The feature-scaling optimisers of Tayal 2014, chapter 7.

All minimise the embedded feature-selection problem (7.4) in its smooth form
:math:`\Omega` (7.7) or its functional-margin forms (7.14)/(7.15), from
:math:`z^0 = \mathbf 1` (F37):

* ``"simple-ao"`` — Algorithm 1 (two-block Gauss–Seidel): the SVM block, then
  :math:`z \leftarrow \arg\min_{z\ge0}\Omega(\beta^k, b^k, z)`; stop when
  :math:`\|z^{k+1} - z^k\|_\infty < \texttt{tol}`. Can stop at saddle points
  (Table 7.1).
* ``"ao1"`` — Margin AO-I, Algorithm 2: the SVM block (:math:`\lambda = 1`), then
  :math:`(z, \lambda) \leftarrow
  \arg\min_{z, \lambda\ge0}\bar\Omega(\bar\beta^k, \bar b^k, z, \lambda)`
  from :math:`(z^k, 1)`; same stopping rule.
* ``"ao2"`` — Margin AO-II, Algorithm 3: the SVM block, then
  :math:`(z, \lambda) \leftarrow \arg\min\Psi(z, \lambda)` (7.15) from
  :math:`(z^k, 1/\sqrt{\bar\beta^\top K_{z^k}\bar\beta})` (the thesis's
  initialisation, which matches only the margin term; a heuristic); stop when the
  selected support :math:`\{l : z_l > 0.01\max_k z_k\}` no longer changes (the
  thesis's ":math:`\|z^{k+1} - z^k\|_0 = 0`" with its 1 % zero threshold) *and*
  :math:`\|z^{k+1} - z^k\|_\infty < \texttt{tol}` (``ao2_stop="change"``, the
  default: the support alone can repeat after one step while :math:`z` still moves);
  ``ao2_stop="support"`` is the thesis's rule alone.
* ``"full"`` — FULL-FS: the Coleman–Li reflective trust region on :math:`\Omega` over
  all of :math:`(\beta, b, z)` (:math:`O((n+d)^3)` per iteration).
* ``"gmkl"`` — GMKL (Varma & Babu 2009; F31, A10): projected gradient with Armijo
  backtracking on :math:`F(z) + \mu\mathbf 1^\top z`, :math:`F(z)` the (hinge) SVM
  dual value with kernel :math:`K_z`, gradient by Danskin's theorem
  :math:`\partial F/\partial z_l = -\tfrac12(\alpha\circ y)^\top(\partial_{z_l}K)(\alpha\circ y)`.

The SVM block is :func:`conicml.formulations.feature_scaling.svm_block` (any
registered solver of kind ``qp.svm.dual``); the non-convex blocks use
:func:`~conicml.feature_scaling._bound_tr.bound_trust_region`.

**Minimum, saddle or not stationary** (Table 7.1). At termination :math:`(\beta, b)` is
refitted by the SVM block at the final :math:`z` (for FULL-FS the final iterate is kept)
and the gradient and Hessian of :math:`\Omega` are projected on the free variables —
:math:`\beta`, :math:`b` and the :math:`z_l` above the 1 % rule (the full Hessian has
size n + 1 + d). Minimum and saddle are kinds of *stationary* points: when the
projected gradient (``stationarity``: the largest entry on the free variables, or the
largest negative one on an active :math:`z_l`) exceeds
:math:`100\,\texttt{tol}\max(1, C, \mu)` the point is labelled ``"not stationary"``,
whatever its curvature. Otherwise the smallest eigenvalue ``vmin`` of the projected
Hessian decides: ``"minimum"`` when :math:`v_{\min} \ge -10^{-6}\max(1, \|H\|)`, else
``"saddle"``. Margin AO-II's fixed points are in general *not* stationary for
:math:`\Omega`: its block minimises :math:`\Psi` (7.15), which holds
:math:`\|f\|_{\mathcal H} = 1` and so drops the :math:`z`-dependence of the margin
term :math:`\frac12\bar\beta^\top K_z\bar\beta` that :math:`\partial\Omega/\partial z`
contains; its label is then ``"not stationary"`` (the thesis reports only ``vmin``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ..exceptions import ProgramError
from ..formulations import svm as svm_formulation
from ..formulations.feature_scaling import FeatureScalingObjective, svm_block
from ..registry import get as get_solver
from ..solution import Status
from ..solvers._callback import IntermediateResult, notify
from ..solving import solve
from ._bound_tr import bound_trust_region

__all__ = ["METHODS", "FSResult", "fit_feature_scaling", "gmkl_objective",
           "projected_hessian_label", "support_mask"]

METHODS = ("ao2", "ao1", "simple-ao", "full", "gmkl")


@dataclass
class FSResult:
    """Outcome of :func:`fit_feature_scaling`."""

    method: str
    z: np.ndarray
    beta: np.ndarray
    b: float
    objective: float
    iterations: int
    inner_iterations: int
    converged: bool
    message: str
    vmin: float
    label: str
    stationarity: float
    time: float
    history: list = field(default_factory=list)


def support_mask(z: np.ndarray, threshold: float = 0.01) -> np.ndarray:
    """Features with :math:`z_l > 0.01\\max_k z_k` (the thesis's zero threshold)."""
    z = np.asarray(z, float)
    top = float(np.max(z, initial=0.0))
    return z > threshold * top if top > 0 else np.zeros(z.shape, bool)


def projected_hessian_label(obj: FeatureScalingObjective, beta: np.ndarray, b: float,
                            z: np.ndarray, stationarity_tol: float = 1e-2
                            ) -> tuple[float, str, float, float]:
    """``(vmin, label, Omega, stationarity)`` at :math:`(\beta, b, z)`.

    ``vmin``: smallest eigenvalue of the Hessian of Omega projected on the free
    variables; ``stationarity``: the largest gradient entry on the free variables
    and the largest negative gradient entry on the active :math:`z_l`. ``label``:
    ``"not stationary"`` when ``stationarity > stationarity_tol``, else ``"minimum"``
    or ``"saddle"`` by the sign of ``vmin`` (module docstring).
    """
    value, g, H = obj.omega(beta, b, z)
    free = np.concatenate([np.ones(obj.n + 1, bool), support_mask(z)])
    Hp = H[np.ix_(free, free)]
    eig = np.linalg.eigvalsh(Hp)
    vmin = float(eig[0])
    label = "minimum" if vmin >= -1e-6 * max(1.0, float(np.max(np.abs(eig)))) else "saddle"
    stat = max(float(np.max(np.abs(g[free]), initial=0.0)),
               float(np.max(-g[~free], initial=0.0)))
    if not stat <= stationarity_tol:
        label = "not stationary"
    return vmin, label, float(value), stat


def _svm(obj, z, solver, options):
    beta, b, sol = svm_block(obj.X, obj.y, z, obj.C, eps=obj.eps, solver=solver,
                             solver_options=options, K=obj.kernel(z))
    if not sol.status.has_solution and sol.status is not Status.USER_LIMIT:
        raise ProgramError(f"the SVM block failed with status {sol.status.value!r} "
                           f"({sol.message})")
    return beta, b


def gmkl_objective(obj: FeatureScalingObjective, z: np.ndarray, solver: str = "smo",
                   options: dict | None = None, alpha0: np.ndarray | None = None):
    r"""GMKL's :math:`F(z) + \mu\mathbf 1^\top z` (7.5)–(7.6) and its Danskin gradient.

    Returns ``(value, grad, alpha, K)``: the hinge SVM dual at :math:`K_z`, solved by
    ``solver`` (warm-started from ``alpha0`` when the solver takes ``x0``).
    """
    y, C, mu = obj.y, obj.C, obj.mu
    K = obj.kernel(z)
    prog = svm_formulation.soft_margin(K, y, C, kernel="precomputed", form="dual")
    opts = dict(options or {})
    if alpha0 is not None and "x0" in get_solver(solver).options:
        opts["x0"] = alpha0
    sol = solve(prog, solver, **opts)
    alpha = np.clip(np.asarray(sol.values["alpha"], float), 0, C)
    c = alpha * y
    value = float(alpha.sum() - 0.5 * c @ K @ c) + mu * float(np.sum(z))
    grad = -0.5 * (c @ obj._kz(K, np.asarray(z, float), c)) + mu
    return value, grad, alpha, K


def _gmkl(obj, z0, *, tol, max_iter, time_limit, solver, options, callback, start):
    """Projected gradient with Armijo on F(z) + mu 1'z (Danskin gradient)."""
    y = obj.y

    def F(z, alpha0=None):
        value, grad, alpha, K = gmkl_objective(obj, z, solver, options, alpha0)
        return value, alpha, alpha * y, K, grad

    z = np.array(z0, float)
    val, alpha, _, _, grad = F(z)
    step = 1.0
    history, it, converged = [], 0, False
    message = f"max_iter={max_iter} outer iterations reached"
    inner = 0
    while it < max_iter:
        pg = float(np.max(np.abs(z - np.maximum(0.0, z - grad))))
        if pg <= tol:
            converged, message = True, f"projected gradient {pg:.2g} <= tol"
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            message = f"time_limit={time_limit:g}s reached"
            break
        it += 1
        t = min(step * 2.0, 1e6)
        while True:
            zn = np.maximum(0.0, z - t * grad)
            vn, an, _, _, gn = F(zn, alpha)
            inner += 1
            if vn <= val + 1e-4 * float(grad @ (zn - z)) or t < 1e-12:
                break
            t *= 0.5
        if t < 1e-12:
            message = "Armijo step collapsed (stall)"
            break
        change = val - vn
        z, val, alpha, grad, step = zn, vn, an, gn, t
        history.append({"objective": val, "step": t, "pg": pg})
        if notify(callback, IntermediateResult(iteration=it, objective=val, residual=pg,
                                               elapsed=time.perf_counter() - start,
                                               values={"z": z})):
            message = "stopped by the callback"
            break
        if change <= 1e-10 * max(1.0, abs(val)):
            converged, message = True, "objective no longer decreases"
            break
    return z, it, inner, converged, message, history


#: Default iteration caps: outer AO iterations, GMKL gradient steps, FULL-FS TR steps. The
#: two-block AO methods converge linearly, at rates close to 1 once the support settles
#: (on ndcc_like, 10 informative features, 5-20 probes, C = 1, mu = 4: 37-83 iterations
#: to ||z^(k+1) - z^k||_inf < 1e-4); AO-II takes 13-17 with ao2_stop="change".
DEFAULT_MAX_ITER = {"ao2": 100, "ao1": 500, "simple-ao": 500, "gmkl": 100, "full": 300}


def fit_feature_scaling(*args: Any, **kwargs: Any) -> FSResult:
    """Fit one of :data:`METHODS` (see :func:`_fit`); BLAS runs single-threaded for
    the small dense matrices of the method (n + d <= 1000), where thread start-up and
    contention cost more than they give."""
    X = args[0] if args else kwargs["X"]
    n_total = int(np.shape(X)[0]) + int(np.shape(X)[1]) if np.ndim(X) == 2 else 0
    if n_total <= 1000:
        with threadpool_limits(limits=1, user_api="blas"):
            return _fit(*args, **kwargs)
    return _fit(*args, **kwargs)


def _fit(
    X: np.ndarray,
    y: np.ndarray,
    *,
    method: str = "ao2",
    C: float = 1.0,
    mu: float = 1.0,
    tol: float = 1e-4,
    max_iter: int | None = None,
    inner_max_iter: int = 100,
    svm_solver: str = "smo",
    svm_options: dict | None = None,
    time_limit: float | None = None,
    callback: Any = None,
    z0: np.ndarray | None = None,
    normalize: bool = True,
    ao2_stop: str = "change",
) -> FSResult:
    r"""Fit one of :data:`METHODS` on ``(X, y)`` (labels +1/-1); see the module docstring.

    ``tol`` is the stopping tolerance of the outer loop (``simple-ao``, ``ao1``:
    :math:`\\|z^{k+1}-z^k\\|_\\infty`; ``gmkl``: projected gradient; ``full``: the
    scaled gradient); the non-convex blocks run to ``tol * 1e-2`` in the scaled
    gradient within ``inner_max_iter`` trust-region iterations. ``max_iter``
    bounds the outer iterations (``full``: the trust-region iterations; default
    :data:`DEFAULT_MAX_ITER`). ``normalize`` (``ao2`` only): scale the SVM block's
    :math:`(\bar\beta, \bar b)` to :math:`\|f\|_{\mathcal H} = 1` before the FS-II block
    (``False``: the thesis's literal initialisation, which matches only the margin
    term of the objective). ``ao2_stop`` (``ao2`` only): ``"change"`` (default) stops
    when the support is unchanged and :math:`\|z^{k+1}-z^k\|_\infty < \texttt{tol}`,
    ``"support"`` on the unchanged support alone (the thesis's rule).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if ao2_stop not in ("change", "support"):
        raise ValueError(f"ao2_stop must be 'change' or 'support', got {ao2_stop!r}")
    start = time.perf_counter()
    if max_iter is None:
        max_iter = DEFAULT_MAX_ITER[method]
    obj = FeatureScalingObjective(X, y, C, mu)
    d = obj.d
    z = np.ones(d) if z0 is None else np.array(z0, float)
    options = dict(svm_options or {})
    if svm_solver == "smo":
        options.setdefault("tol", 1e-6)
    history: list = []
    inner = 0
    converged = False
    message = f"max_iter={max_iter} outer iterations reached"
    it = 0
    inner_tol = tol * 1e-2

    def remaining():
        return None if time_limit is None else max(time_limit - (time.perf_counter() - start),
                                                   1e-3)

    if method == "gmkl":
        z, it, inner, converged, message, history = _gmkl(
            obj, z, tol=tol, max_iter=max_iter, time_limit=time_limit, solver=svm_solver,
            options=options, callback=callback, start=start)
        beta, b = _svm(obj, z, svm_solver, options)
    elif method == "full":
        beta, b = _svm(obj, z, svm_solver, options)
        n = obj.n
        x0 = np.concatenate([beta, [b], z])
        bounded = np.concatenate([np.zeros(n + 1, bool), np.ones(d, bool)])

        def fun(x, order):
            return obj.omega(x[:n], x[n], x[n + 1:], order=order)

        res = bound_trust_region(fun, x0, bounded, tol=tol, max_iter=max_iter,
                                 time_limit=time_limit, callback=callback)
        beta, b, z = res.x[:n], float(res.x[n]), res.x[n + 1:]
        it, inner, converged, message = res.iterations, res.iterations, res.converged, \
            res.message
        history = res.history
    else:
        beta, b = _svm(obj, z, svm_solver, options)
        while it < max_iter:
            if time_limit is not None and time.perf_counter() - start > time_limit:
                message = f"time_limit={time_limit:g}s reached"
                break
            it += 1
            if method == "simple-ao":
                def fun(x, order, beta=beta, b=b):
                    return obj.evaluate(beta, b, x, 1.0, margin="kernel", wrt=("z",),
                                        order=order)
                x0, bounded = z, np.ones(d, bool)
            else:
                margin = "kernel" if method == "ao1" else "unit"
                if method == "ao1":
                    lam0 = 1.0
                else:
                    # Algorithm 3: lam0 = 1/sqrt(beta' K beta) "to match the initial
                    # objective". With (beta, b) scaled to ||f||_H = 1, as (7.16) has it,
                    # the whole of Psi(z^k, lam0) equals Omega-bar(beta, b, z^k, 1), not
                    # only its margin term (7.13 is invariant under this scaling).
                    margin_term = float(beta @ obj.kernel(z) @ beta)
                    if not margin_term > 0:
                        # lam0 = 1/sqrt(0): Psi has no scale to start from
                        raise ProgramError(
                            f"feature scaling (AO-II): the SVM at the current scales learns "
                            f"a constant decision function (beta' K_z beta = {margin_term:.3g},"
                            f" {int(support_mask(z).sum())} of {d} features selected, outer "
                            f"iteration {it}); X has no varying feature left to scale: drop "
                            f"constant features, standardise X, or lower mu")
                    norm = math.sqrt(margin_term)
                    lam0 = 1.0 / norm
                    if normalize:
                        beta, b = beta / norm, b / norm

                def fun(x, order, beta=beta, b=b, margin=margin):
                    return obj.evaluate(beta, b, x[:d], x[d], margin=margin,
                                        wrt=("z", "lam"), order=order)
                x0, bounded = np.concatenate([z, [lam0]]), np.ones(d + 1, bool)
            res = bound_trust_region(fun, x0, bounded, tol=inner_tol, max_iter=inner_max_iter,
                                     time_limit=remaining())
            inner += res.iterations
            z_new = res.x[:d]
            crit = float(np.max(np.abs(z_new - z)))
            if method == "ao2":
                same = bool(np.array_equal(support_mask(z_new), support_mask(z)))
                done = same and (ao2_stop == "support" or crit < tol)
            else:
                done = crit < tol
            z = z_new
            beta, b = _svm(obj, z, svm_solver, options)
            history.append({"iteration": it, "criterion": crit, "fs_block": res.message,
                            "n_selected": int(support_mask(z).sum()),
                            "omega": obj.omega(beta, b, z, order=0)[0]})
            if notify(callback, IntermediateResult(
                    iteration=it, residual=crit, elapsed=time.perf_counter() - start,
                    values={"z": z})):
                message = "stopped by the callback"
                break
            if done:
                converged = True
                message = ("the selected support did not change" if method == "ao2"
                           and ao2_stop == "support" else
                           f"||z^(k+1) - z^k||_inf = {crit:.2g} < tol" + (
                               " and the selected support did not change"
                               if method == "ao2" else ""))
                break
    # 100 tol in the units of the gradient's terms (C l'(.) and mu): the AO methods stop
    # on ||z^(k+1) - z^k|| < tol, which at a linear rate close to 1 leaves a gradient
    # some 10-100 times larger
    vmin, label, value, stat = projected_hessian_label(
        obj, beta, b, z, stationarity_tol=100.0 * tol * max(1.0, C, mu))
    return FSResult(method=method, z=z, beta=beta, b=float(b), objective=value,
                    iterations=it, inner_iterations=inner, converged=converged,
                    message=message, vmin=vmin, label=label, stationarity=stat,
                    time=time.perf_counter() - start, history=history)
