r"""``pegasos`` and ``weighted-pegasos``: stochastic sub-gradient solvers of the linear SVM primal.

Both accept the soft-margin SVM primal (kind ``"qp.svm.primal"``, seed 001
eqs. 2.19–2.21) with per-sample costs :math:`c_i > 0` (``C`` times a class
weight),

.. math::

    P(w, b) = \tfrac12\|w\|_2^2 + \sum_{i=1}^N c_i\,[1 - y_i(w^\top z_i + b)]_+ ,

where :math:`z_i = x_i` for the linear kernel, and the rows of the kernel
factor :math:`L` (:func:`conicml.kernels.psd_factor`, the same factor the
formulation uses) otherwise, so that a non-linear kernel's primal over the
span of the data is solved too (:math:`v` instead of :math:`w`).

**The λ-form and the map from C.** Pegasos (seed 001, eqs. 2.33–2.35,
Alg. 2) and Weighted-Pegasos (eq. 5.4, Alg. 5) minimise

.. math::

    F(w, b) = \tfrac{\lambda}2\|w\|^2 + \frac1N\sum_i s_i\,[1 - y_i(w^\top z_i + b)]_+
    = \lambda\,P(w, b),
    \qquad \lambda = \frac{1}{\sum_i c_i},\quad s_i = \lambda N c_i ,

so the mean of the :math:`s_i` is one. With uniform costs :math:`c_i = C`
this is the thesis's map :math:`\lambda = 1/(CN)` with :math:`s_i = 1`
(pitfall P-S2). With the class-balancing weights (5.3) of H-LSVM,
:math:`\nu_i = 1/(2N^\pm)` and :math:`\sum\nu_i = 1`, the thesis objective
:math:`\tfrac{\lambda_t}2\|w\|^2 + \frac1N\sum\nu_i[\cdot]_+` (C.1) is the
program with :math:`c_i = \nu_i/(\lambda_t N)`; then :math:`\lambda = N\lambda_t`
and :math:`s_i = N\nu_i` (pitfall P-H3), and the projection radius
:math:`1/\sqrt{\lambda} = 1/\sqrt{N\lambda_t}` is that of Lemma C.1 (erratum:
the lemma is printed as :math:`\|w\|^2 \le 1/\sqrt{N\lambda}`; it is
:math:`\|w^*\| \le 1/\sqrt{N\lambda}`).

**Iteration** (Alg. 2 / Alg. 5). For :math:`t = 1, 2, \dots`: draw a mini-batch
:math:`A_t` of ``batch_size`` :math:`k` indices i.i.d.; with
:math:`A_t^+ = \{i \in A_t : y_i(w_t^\top z_i + b_t) < 1\}` (the margin test
*with* the bias, erratum P-H2: Alg. 5 prints it without :math:`b`),
:math:`\eta_t = 1/(\lambda t)`,

.. math::

    w_{t+\frac12} = (1 - \eta_t\lambda)w_t + \frac{\eta_t}{k}\sum_{i\in A_t^+} g_i y_i z_i,
    \qquad
    w_{t+1} = \min\Bigl\{1, \frac{1/\sqrt\lambda}{\|w_{t+\frac12}\|}\Bigr\} w_{t+\frac12}.

``weighted-pegasos`` (Alg. 5) draws :math:`A_t` uniformly and weights the
sub-gradient, :math:`g_i = s_i`; ``pegasos`` (Alg. 2) draws sample :math:`i`
with probability :math:`c_i/\sum c` and does not weight it, :math:`g_i = 1`
(both are unbiased sub-gradients of :math:`F`; with uniform costs they are the
same algorithm). The subgradient uses :math:`1/k` (erratum: eq. 2.36 prints
:math:`1/|A_t^+|`).

With ``average=True`` the solver also keeps the polynomial-decay average of
the iterates (Shamir & Zhang, ICML 2013) and returns whichever of the last
iterate and the average has the smaller certified gap.

**Bias** (``bias=``). ``"sgd"``: the SGD heuristic of Bottou used by H-LSVM,
:math:`b_{t+1} = b_t + \tau\frac{\eta_t}{k}\sum_{A_t^+} g_i y_i` (Alg. 5,
step 6); ``"exact"``: the inner minimisation over :math:`b` (the thesis's third
option), done exactly on the full sample once every ``check_every`` iterations
and at the end: :math:`b = \arg\min_b \sum_i c_i[1 - y_i(w^\top z_i + b)]_+`,
a one-dimensional piecewise-linear problem solved by sorting its breakpoints.

**Stopping.** Every ``check_every`` iterations (default: one pass over the
data, at least 1 000 iterations) the solver computes its certificate (below)
and stops with ``OPTIMAL`` when the relative gap is :math:`\le` ``tol``. It
also stops, as Alg. 5 does, when :math:`\|w_t - w_{t-1}\| \le` ``eps``
(:math:`\varepsilon_{PEG}`; ``OPTIMAL`` if the gap then passes ``tol``,
``OPTIMAL_INACCURATE`` otherwise), when the best gap has not improved by 1 %
over ``stall_checks`` consecutive checks (stall: ``OPTIMAL_INACCURATE``), and
at ``max_iter`` (:math:`T`), ``time_limit`` or a callback's
:class:`StopIteration` (``USER_LIMIT`` unless the final gap passes ``tol``).

**Certificate.** At a point :math:`(w, b)` the solver builds the dual point it
implies: :math:`\alpha_i = c_i` where :math:`y_if_i < 1 - \beta`,
:math:`\alpha_i = 0` where :math:`y_if_i > 1 + \beta`, and, on the band
:math:`|y_if_i - 1| \le \beta`, the bounded least-squares fit of
:math:`w = \sum_i\alpha_iy_iz_i`, :math:`\sum_i y_i\alpha_i = 0`
(:func:`scipy.optimize.lsq_linear`); the class with the larger
:math:`\sum\alpha` is then scaled down so that :math:`y^\top\alpha = 0`
holds exactly. Any such :math:`\alpha` is dual feasible, so its dual value
:math:`D(\alpha) = \sum\alpha_i - \tfrac12\|Z^\top(\alpha\circ y)\|^2` is a
lower bound on the optimum (seed 001 eq. 2.27); the best over a few bands
:math:`\beta` is kept (bands holding more than :math:`\max(200, 20(d+1))`
points are skipped, to bound the cost). The residuals are: ``primal = 0`` (the point is
feasible: :math:`\xi_i` is the hinge), ``dual`` = the relative stationarity
residual :math:`\|w - Z^\top(\alpha\circ y)\|/\max(1,\|w\|)` and ``gap`` =
:math:`(P - D)/P` (``source="solver"``): an honest relative duality gap, never
smaller than the true relative suboptimality :math:`(P - P^*)/P` of the point;
by strong convexity it also bounds :math:`\|w - w^*\| \le \sqrt{2(P - D)}`.
``duals["margin"]`` is that :math:`\alpha`, so the formulation's decode gives
``dual_coef`` and the support.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import lsq_linear

from ..exceptions import OptionError, ProgramError, SolverError
from ..kernels import psd_factor
from ..kinds import SVM_PRIMAL
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import IntermediateResult, check_callback, notify
from ._options import check_common

__all__ = ["exact_bias", "implied_dual", "solve_pegasos", "solve_weighted_pegasos"]

#: Bands beta of the implied-dual construction (see the module docstring).
_BANDS = (0.0, 1e-3, 1e-2, 0.1)


def _features(program: Any, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(Z, y, c, linear) from the program's data (never from a formulation module)."""
    if program.kind != SVM_PRIMAL:
        raise SolverError(f"{name}: accepts programs of kind {SVM_PRIMAL!r}, got {program.kind!r}")
    data = program.data
    for key in ("X", "y", "c", "kernel"):
        if key not in data:
            raise SolverError(f"{name}: program data has no {key!r}")
    kernel = data["kernel"]
    X = np.asarray(data["X"], dtype=float)
    y = np.asarray(data["y"], dtype=float)
    c = np.asarray(data["c"], dtype=float)
    if X.ndim != 2:
        raise ProgramError(f"{name}: X must be 2-D, got shape {X.shape}")
    n = X.shape[0]
    if y.shape != (n,) or c.shape != (n,):
        raise ProgramError(
            f"{name}: y and c must have shape ({n},) to match X, got {y.shape} and {c.shape}"
        )
    if not np.all(np.isfinite(X)):
        raise ProgramError(f"{name}: X contains NaN or infinite values")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ProgramError(f"{name}: labels y must be exactly +1.0 or -1.0")
    if not (np.any(y > 0) and np.any(y < 0)):
        raise ProgramError(f"{name}: y contains a single class; the SVM needs both +1 and -1")
    if np.any(np.isinf(c)) or data.get("hard", False):
        raise SolverError(
            f"{name}: infinite costs (hard margin) are not accepted: Pegasos needs the hinge "
            "loss with a finite C; use a generic solver such as 'clarabel'"
        )
    if np.any(np.isnan(c)) or np.any(c <= 0):
        raise ProgramError(f"{name}: costs c must be positive (no NaN, no zeros)")
    linear = getattr(kernel, "name", None) == "linear"
    Z = X if linear else psd_factor(kernel.gram(X), data.get("factor", "auto"))
    return np.ascontiguousarray(Z), y, c, linear


def exact_bias(f: np.ndarray, y: np.ndarray, c: np.ndarray) -> float:
    r"""The exact minimiser :math:`\arg\min_b \sum_i c_i[1 - y_i(f_i + b)]_+`.

    The derivative in :math:`b` is :math:`-\sum_{y_i=+1} c_i + \sum_{\beta_i < b} c_i`
    with breakpoints :math:`\beta_i = y_i - f_i`; it is non-decreasing, and the
    minimiser is where it crosses zero (the midpoint of the flat piece if it
    vanishes on an interval).
    """
    bp = y - f
    order = np.argsort(bp, kind="stable")
    bp = bp[order]
    g = -float(c[y > 0].sum()) + np.cumsum(c[order])  # derivative just right of bp[j]
    j = int(np.searchsorted(g, 0.0, side="left"))
    if j >= bp.size:
        return float(bp[-1])
    scale = float(c.sum())
    if abs(g[j]) <= 1e-12 * scale and j + 1 < bp.size:
        return 0.5 * float(bp[j] + bp[j + 1])
    return float(bp[j])


def _primal(Z: np.ndarray, y: np.ndarray, c: np.ndarray, w: np.ndarray,
            b: float) -> tuple[float, np.ndarray]:
    margin = y * (Z @ w + b)
    return 0.5 * float(w @ w) + float(c @ np.maximum(0.0, 1.0 - margin)), margin


def implied_dual(Z: np.ndarray, y: np.ndarray, c: np.ndarray, w: np.ndarray,
                 margin: np.ndarray) -> tuple[np.ndarray, float, float]:
    r"""A dual-feasible :math:`\alpha` implied by the primal point; see the module docstring.

    Returns ``(alpha, dual_value, stationarity)`` with the largest dual value
    over the bands, where ``stationarity`` is
    :math:`\|w - Z^\top(\alpha\circ y)\|/\max(1, \|w\|)`.
    """
    best: tuple[np.ndarray, float, float] | None = None
    wnorm = max(1.0, float(np.linalg.norm(w)))
    eq_weight = 10.0 * max(1.0, float(np.max(np.abs(Z))))
    seen: set[tuple[int, int]] = set()
    # bounded least squares costs O(|band| (d+1)^2): wide bands of large problems are skipped
    # (beta = 0 is always kept, so the bound is always computed)
    max_free = max(200, 20 * (Z.shape[1] + 1))
    for beta in _BANDS:
        bound = margin < 1.0 - beta
        free = np.flatnonzero(np.abs(margin - 1.0) <= beta)
        key = (int(np.count_nonzero(bound)), int(free.size))
        if key in seen or free.size > max_free:
            continue  # same sets as a smaller band, or a band too wide to be worth a fit
        seen.add(key)
        alpha = np.where(bound, c, 0.0)
        if free.size:
            r = w - Z.T @ (alpha * y)
            eq = -float(y @ alpha)
            A = np.vstack([(Z[free] * y[free, None]).T, eq_weight * y[free][None, :]])
            rhs = np.concatenate([r, [eq_weight * eq]])
            ub = c[free]
            res = lsq_linear(A, rhs, bounds=(np.zeros(free.size), ub), method="bvls")
            alpha[free] = np.clip(res.x, 0.0, ub)
        # exact balance y^T alpha = 0 by scaling down the heavier class (stays in the box)
        sp, sn = float(alpha[y > 0].sum()), float(alpha[y < 0].sum())
        if sp > sn:
            alpha[y > 0] *= sn / sp
        elif sn > sp:
            alpha[y < 0] *= sp / sn
        u = Z.T @ (alpha * y)
        dual = float(alpha.sum()) - 0.5 * float(u @ u)
        stat = float(np.linalg.norm(w - u)) / wnorm
        if best is None or dual > best[1]:
            best = (alpha, dual, stat)
    assert best is not None
    return best


class _Sampler:
    """i.i.d. mini-batches, drawn in blocks (uniform, or with probabilities p)."""

    def __init__(self, rng: np.random.Generator, n: int, k: int, p: np.ndarray | None) -> None:
        self.rng, self.n, self.k = rng, n, k
        self.cdf = None if p is None else np.cumsum(p / p.sum())
        self.block = max(1, 8192 // k)
        self.buf = np.empty((0, k), dtype=np.intp)
        self.pos = 0

    def next(self) -> np.ndarray:
        if self.pos >= self.buf.shape[0]:
            size = self.block * self.k
            if self.cdf is None:
                idx = self.rng.integers(0, self.n, size=size)
            else:
                idx = np.searchsorted(self.cdf, self.rng.random(size) * self.cdf[-1],
                                      side="right")
                np.minimum(idx, self.n - 1, out=idx)
            self.buf = idx.reshape(self.block, self.k)
            self.pos = 0
        row = self.buf[self.pos]
        self.pos += 1
        return row


def _check_options(name: str, tol: Any, max_iter: Any, time_limit: Any, batch_size: Any,
                   eps: Any, bias: Any, tau: Any, check_every: Any, stall_checks: Any,
                   n: int) -> None:
    check_common(name, tol, max_iter, time_limit)
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or not 1 <= batch_size <= n:
        raise OptionError(
            f"{name}: batch_size must be an integer in [1, N] = [1, {n}], got {batch_size!r}"
        )
    if eps is not None and not (isinstance(eps, (int, float)) and math.isfinite(eps)
                                and eps >= 0):
        raise OptionError(f"{name}: eps must be a finite number >= 0 or None, got {eps!r}")
    if bias not in ("sgd", "exact"):
        raise OptionError(f"{name}: bias must be 'sgd' or 'exact', got {bias!r}")
    if not (isinstance(tau, (int, float)) and math.isfinite(tau) and tau >= 0):
        raise OptionError(f"{name}: tau must be a finite number >= 0, got {tau!r}")
    for label, val in (("check_every", check_every), ("stall_checks", stall_checks)):
        if val is not None and (isinstance(val, bool) or not isinstance(val, (int, np.integer))
                                or val < 1):
            raise OptionError(f"{name}: {label} must be a positive integer or None, got {val!r}")


def _run(program: Any, name: str, weighted: bool, *, tol: float, max_iter: int | None,
         time_limit: float | None, verbose: bool, callback: Callable | None,
         x0: np.ndarray | None, batch_size: int, eps: float | None, bias: str, tau: float,
         random_state: Any, check_every: int | None, stall_checks: int,
         average: bool) -> Solution:
    t_setup = time.perf_counter()
    Z, y, c, linear = _features(program, name)
    n, d = Z.shape
    if batch_size is None:
        batch_size = min(n, 32)
    _check_options(name, tol, max_iter, time_limit, batch_size, eps, bias, tau, check_every,
                   stall_checks, n)
    check_callback(name, callback)
    k = int(batch_size)
    if not isinstance(average, (bool, np.bool_)):
        raise OptionError(f"{name}: average must be True or False, got {average!r}")
    T = 100_000 if max_iter is None else int(max_iter)
    lam = 1.0 / float(c.sum())  # lambda = 1 / sum_i c_i  (= 1/(C N) for uniform costs)
    s = lam * n * c  # per-sample loss weights of the lambda-form, mean 1
    radius = 1.0 / math.sqrt(lam)
    every = int(check_every) if check_every is not None else max(1000, -(-n // k))
    rng = np.random.default_rng(random_state)
    sampler = _Sampler(rng, n, k, p=None if weighted else c)
    gain = s if weighted else np.ones(n)
    gy = gain * y
    if x0 is not None:
        x0 = np.asarray(x0, dtype=float).reshape(-1)
        if x0.shape != (d + 1,) or not np.all(np.isfinite(x0)):
            raise OptionError(f"{name}: x0 must be a finite vector (w, b) of length {d + 1}")
        w, b = x0[:d].copy(), float(x0[d])
        nw = float(np.linalg.norm(w))
        if nw > radius:
            w *= radius / nw
    else:
        w, b = np.zeros(d), 0.0
    setup_time = time.perf_counter() - t_setup

    t0 = time.perf_counter()
    best_gap, since_best = math.inf, 0
    code, t, gap, alpha, stat, dual, primal = "limit", 0, math.inf, None, math.nan, -math.inf, \
        math.inf
    history = []
    if verbose:
        print(f"{name}: N = {n}, d = {d}, lambda = {lam:.3e}, k = {k}, T = {T}, bias = {bias}")
        print(f"{'iter':>10} {'primal':>14} {'dual':>14} {'rel. gap':>10} {'time s':>8}")

    w_avg, b_avg = w.copy(), b
    out_w, out_b = w, b
    per_pass = max(10, n // k)

    def certificate() -> None:
        """Certify the last iterate and (if averaging) the averaged one; keep the better."""
        nonlocal b, gap, alpha, stat, dual, primal, out_w, out_b, b_avg
        if bias == "exact":
            b = exact_bias(Z @ w, y, c)
        candidates = [(w, b)]
        if average:
            if bias == "exact":
                b_avg = exact_bias(Z @ w_avg, y, c)
            candidates.append((w_avg, b_avg))
        gap = math.inf
        for cw, cb in candidates:
            p_val, margin = _primal(Z, y, c, cw, cb)
            a_val, d_val, s_val = implied_dual(Z, y, c, cw, margin)
            g_val = max(p_val - d_val, 0.0) / max(p_val, 1e-300)
            if g_val < gap:
                gap, primal, alpha, dual, stat = g_val, p_val, a_val, d_val, s_val
                out_w, out_b = cw.copy(), float(cb)

    use_eps = eps is not None and eps > 0
    while True:
        if t >= T:
            code = "limit"
            break
        t += 1
        idx = sampler.next()
        eta = 1.0 / (lam * t)
        if use_eps:
            w_prev = w.copy()
        shrink = 1.0 - 1.0 / t  # 1 - eta_t * lambda
        if k == 1:
            i = int(idx[0])
            zi = Z[i]
            active = y[i] * (float(zi @ w) + b) < 1.0
            w *= shrink
            if active:
                step = eta * gy[i]
                w += step * zi
                if bias == "sgd":
                    b += tau * step
        else:
            ZA = Z[idx]
            active = y[idx] * (ZA @ w + b) < 1.0
            w *= shrink
            if active.any():
                coef = gy[idx][active]
                w += (eta / k) * (coef @ ZA[active])
                if bias == "sgd":
                    b += tau * (eta / k) * float(coef.sum())
        nw = math.sqrt(float(w @ w))
        if nw > radius:  # projection onto the ball ||w|| <= 1/sqrt(lambda)
            w *= radius / nw
        if average:  # polynomial-decay averaging (Shamir & Zhang 2013, eta = 3)
            rho_avg = 4.0 / (t + 3.0)
            w_avg *= 1.0 - rho_avg
            w_avg += rho_avg * w
            b_avg += rho_avg * (b - b_avg)
        if bias == "exact" and t % per_pass == 0:  # inner minimisation over b, once a pass
            b = exact_bias(Z @ w, y, c)
        if use_eps and t > 1 and float(np.linalg.norm(w - w_prev)) <= eps:
            code = "eps"
            break
        if t % every == 0:
            certificate()
            history.append((t, primal, dual, gap))
            if verbose:
                print(f"{t:>10} {primal:>14.7e} {dual:>14.7e} {gap:>10.2e} "
                      f"{time.perf_counter() - t0:>8.2f}")
            if gap <= tol:
                code = "gap"
                break
            if gap < 0.99 * best_gap:
                best_gap, since_best = gap, 0
            else:
                since_best += 1
                if since_best >= stall_checks:
                    code = "stall"
                    break
            if notify(callback, IntermediateResult(
                    iteration=t, objective=primal, residual=gap,
                    elapsed=time.perf_counter() - t0,
                    values={"w": out_w.copy(), "b": out_b}, extras={"dual": dual})):
                code = "callback"
                break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            code = "time"
            break
    certificate()
    solve_time = time.perf_counter() - t0
    assert alpha is not None
    converged = gap <= tol
    detail = f"relative duality gap {gap:.2e} (tol {tol:g}) after {t} iterations"
    if code == "gap" or (converged and code in ("limit", "time", "callback", "eps", "stall")):
        status, message = Status.OPTIMAL, f"converged: {detail}"
    elif code == "eps":
        status = Status.OPTIMAL_INACCURATE
        message = f"stopped by ||w_t - w_(t-1)|| <= eps = {eps:g} (Alg. 5) with {detail}"
    elif code == "stall":
        status = Status.OPTIMAL_INACCURATE
        message = (f"stalled: the gap did not improve by 1% over {stall_checks} checks; "
                   f"{detail}; raise batch_size or lower tol")
    else:
        status = Status.USER_LIMIT
        reason = {"limit": f"max_iter = T = {T} reached",
                  "time": f"time_limit = {time_limit} s reached",
                  "callback": "stopped by the callback"}[code]
        message = f"{reason}; {detail}"
    if verbose:
        print(f"{name}: {message}")
    w, b = out_w, out_b
    margin = y * (Z @ w + b)
    xi = np.maximum(0.0, 1.0 - margin)
    values = {"w" if linear else "v": w.copy(), "b": np.asarray(b), "xi": xi}
    return Solution(
        status=status,
        solver=name,
        objective=primal,
        values=values,
        duals={"margin": alpha, "xi_nonneg": c - alpha},
        iterations=t,
        setup_time=setup_time,
        solve_time=solve_time,
        residuals=Residuals(primal=0.0, dual=stat, gap=gap, source="solver"),
        message=message,
        history=tuple(history),
        extras={"lam": lam, "dual_objective": dual, "primal_objective": primal,
                "batch_size": k, "bias": bias, "radius": radius},
    )


_COMMON_DOC = """
    Parameters
    ----------
    program : Program
        A program of kind ``"qp.svm.primal"`` (soft margin, finite costs).
    tol : float, default=1e-3
        Stop when the certified relative duality gap :math:`(P - D)/P` is
        :math:`\\le` ``tol`` (checked every ``check_every`` iterations).
    max_iter : int, optional
        :math:`T`, the number of stochastic steps (default 100 000).
    time_limit : float, optional
        Wall-clock limit in seconds.
    verbose : bool, default=False
        Print the certificate at every check.
    callback : callable, optional
        ``callback(IntermediateResult)`` at every check; :class:`StopIteration`
        stops the solver (``USER_LIMIT``).
    x0 : ndarray of shape (d + 1,), optional
        Warm start :math:`(w, b)` (projected onto the ball).
    batch_size : int, optional
        :math:`k`, the mini-batch size, in [1, N] (thesis: not reported, P-H2);
        default :math:`\\min(N, 32)` (a NumPy step costs about the same for
        :math:`k = 1` and :math:`k = 32`).
    eps : float or None, default=None
        :math:`\\varepsilon_{PEG}`: stop when :math:`\\|w_t - w_{t-1}\\| \\le` ``eps``
        (Alg. 5; the thesis uses 1e-4). ``None`` disables the test.
    bias : {"exact", "sgd"}
        How :math:`b` is learned (see the module docstring).
    tau : float, default=1.0
        :math:`\\tau`, the scale of the bias step of ``bias="sgd"`` (not reported
        in the thesis, P-H2).
    random_state : int, Generator or None
        Seed of the mini-batch draws.
    check_every : int, optional
        Iterations between certificates (default: one pass over the data, at
        least 1 000).
    stall_checks : int, default=50
        Checks without a 1 % improvement of the best gap before the solver
        reports a stall.
    average : bool, default=True
        Also keep the polynomial-decay average of the iterates (Shamir & Zhang,
        ICML 2013, with :math:`\\eta = 3`) and return whichever of the last
        iterate and the average has the smaller certified gap. ``False``
        returns the last iterate, as Alg. 2 and Alg. 5 print.

    Returns
    -------
    Solution
        ``objective`` is the primal value :math:`P(w, b)` of the returned point;
        ``values`` hold ``w`` (``v`` for a non-linear kernel), ``b`` and ``xi``;
        ``duals["margin"]`` the implied dual point; ``extras["lam"]`` the
        :math:`\\lambda` of the map above and ``extras["dual_objective"]`` the
        lower bound :math:`D`.
"""


_NOT_BY_DEFAULT = ("a stochastic first-order method: its agreement is statistical (a seeded point "
                   "within its tol, certified by the relative duality gap of the implied dual "
                   "point, issue 11) and a run to compare_rtol takes ~10^5 iterations; "
                   "tests/test_pegasos.py compares it at its stated tolerance")

@register("pegasos", kinds=[SVM_PRIMAL], specialized=True, requires=("numpy", "scipy"),
          compare_by_default=_NOT_BY_DEFAULT,
          compare_options={"tol": 1e-4, "batch_size": 8, "max_iter": 400_000},
          compare_rtol=1e-4, certify_tol=1e-3)
def solve_pegasos(
    program: Any,
    *,
    tol: float = 1e-3,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callable | None = None,
    x0: np.ndarray | None = None,
    batch_size: int | None = None,
    eps: float | None = None,
    bias: str = "exact",
    tau: float = 1.0,
    random_state: Any = None,
    check_every: int | None = None,
    stall_checks: int = 50,
    average: bool = True,
) -> Solution:
    """Pegasos (seed 001 Alg. 2): samples drawn with probability c_i / sum c, unweighted steps."""
    return _run(program, "pegasos", False, tol=tol, max_iter=max_iter, time_limit=time_limit,
                verbose=verbose, callback=callback, x0=x0, batch_size=batch_size, eps=eps,
                bias=bias, tau=tau, random_state=random_state, check_every=check_every,
                stall_checks=stall_checks, average=average)


@register("weighted-pegasos", kinds=[SVM_PRIMAL], specialized=True,
          requires=("numpy", "scipy"), compare_by_default=_NOT_BY_DEFAULT,
          compare_options={"tol": 1e-4, "batch_size": 8, "max_iter": 400_000, "bias": "exact"},
          compare_rtol=1e-4, certify_tol=1e-3)
def solve_weighted_pegasos(
    program: Any,
    *,
    tol: float = 1e-3,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callable | None = None,
    x0: np.ndarray | None = None,
    batch_size: int | None = None,
    eps: float | None = None,
    bias: str = "sgd",
    tau: float = 1.0,
    random_state: Any = None,
    check_every: int | None = None,
    stall_checks: int = 50,
    average: bool = True,
) -> Solution:
    """Weighted-Pegasos (seed 001 Alg. 5): uniform draws, steps weighted by s_i = lambda N c_i."""
    return _run(program, "weighted-pegasos", True, tol=tol, max_iter=max_iter,
                time_limit=time_limit, verbose=verbose, callback=callback, x0=x0,
                batch_size=batch_size, eps=eps, bias=bias, tau=tau,
                random_state=random_state, check_every=check_every,
                stall_checks=stall_checks, average=average)


solve_pegasos.__doc__ = (solve_pegasos.__doc__ or "") + "\n" + _COMMON_DOC
solve_weighted_pegasos.__doc__ = (solve_weighted_pegasos.__doc__ or "") + "\n" + _COMMON_DOC
