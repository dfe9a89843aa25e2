r"""``pegasos`` and ``weighted-pegasos``: stochastic sub-gradient solvers of the SVM primal.

Pegasos (seed 001 Alg. 2) and Weighted-Pegasos (Alg. 5) for kind ``"qp.svm.primal"``.
They stop on a certified relative duality gap :math:`(P - D)/P \le` ``tol``; the
iteration, the map from ``C`` to :math:`\lambda` and the certificate are in the Notes of
:func:`solve_pegasos`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .._utils.deprecation import renamed_keywords
from .._utils.threads import one_blas_thread
from ..exceptions import OptionError, SolverError
from ..kernels import psd_factor
from ..kinds import SVM_PRIMAL
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._driver import Driver, Reason, message_table, status_table
from ._options import check_common, resolve_engine
from ._svm_data import check_svm_arrays
from ._warm import pegasos_wb

__all__ = ["exact_bias", "implied_dual", "solve_pegasos", "solve_weighted_pegasos"]

#: Stop reason -> message (``detail``: the certified gap and the iterations done).
_EPS_STOP = 5
TERMINATION_MESSAGES: dict[int, str] = message_table("converged: {detail}", {
    Reason.MAX_ITER: "max_iter = T = {T} reached; {detail}",
    Reason.TIME_LIMIT: "time_limit = {time_limit} s reached; {detail}",
    Reason.CALLBACK: "stopped by the callback; {detail}",
    Reason.STALLED: ("stalled: the gap did not improve by 1% over {stall_checks} checks; "
                     "{detail}; raise batch_size or lower tol"),
    _EPS_STOP: "stopped by ||w_t - w_(t-1)|| <= step_tol = {eps:g} (Alg. 5) with {detail}",
})
#: Stop reason -> Status: a stall or the eps test (Alg. 5) without the gap is inaccurate.
STATUS_MAP: dict[int, Status] = status_table({Reason.STALLED: Status.OPTIMAL_INACCURATE,
                                              _EPS_STOP: Status.OPTIMAL_INACCURATE})

#: Smoothing widths beta of the certificate's proximal steps (continuation; Notes of
#: ``solve_pegasos``).
_BETAS = (1e-1, 1e-2, 1e-3, 1e-4)
#: Samples nearest the margin on which the certificate's proximal step acts.
_MAX_FREE = 20_000
#: Largest number of iterations the NumPy engine runs between two time-limit checks.
_NUMPY_CHUNK = 256
#: ... and the numba engine.
_NUMBA_CHUNK = 1 << 16


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
    check_svm_arrays(name, X, y, c)
    if np.any(np.isinf(c)) or data.get("hard", False):
        raise SolverError(
            f"{name}: infinite costs (hard margin) are not accepted: Pegasos needs the hinge "
            "loss with a finite C; use a generic solver such as 'clarabel'"
        )
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
    if c.size and np.all(c == c[0]):
        # equal costs: the crossing is at a known rank, found by selection in O(N)
        n_pos = int(np.count_nonzero(y > 0))
        j = max(n_pos - 1, 0)  # g_j = c (j + 1 - n_pos) first reaches 0 at j = n_pos - 1
        if n_pos == 0:
            return float(np.min(bp))
        if j + 1 < bp.size:
            part = np.partition(bp, (j, j + 1))
            return 0.5 * float(part[j] + part[j + 1])  # g_j = 0 exactly: the flat piece
        return float(np.max(bp))
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


def _dual_value(Z: np.ndarray, y: np.ndarray, c: np.ndarray,
                alpha: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """Make alpha exactly feasible (box, balance, best scale); return (alpha, D(alpha), u)."""
    alpha = np.clip(alpha, 0.0, c)
    sp, sn = float(alpha[y > 0].sum()), float(alpha[y < 0].sum())
    if sp > sn:  # exact balance y^T alpha = 0 by scaling down the heavier class
        alpha[y > 0] *= sn / sp
    elif sn > sp:
        alpha[y < 0] *= sp / sn
    u = Z.T @ (alpha * y)
    s1, s2 = float(alpha.sum()), float(u @ u)
    s = 1.0 if s2 <= s1 else s1 / s2  # argmax over [0, 1] of s s1 - s^2 s2 / 2
    if s < 1.0:
        alpha *= s
        u *= s
    return alpha, s * s1 - 0.5 * s * s * s2, u


def _line_root(f0: float, q: np.ndarray, s: np.ndarray, mu: np.ndarray, lo: np.ndarray,
               hi: np.ndarray, pp: float) -> float:
    """The zero on t >= 0 of the non-increasing, piecewise-linear directional derivative
    f(t) = f0 - t pp - sum_i s_i (clip((q_i + t s_i)/mu_i, lo_i, hi_i) - clip(q_i/mu_i, ...)).

    Exact and scale-free: sample i is unclipped for t between its two crossings
    (lo_i mu_i - q_i)/s_i and (hi_i mu_i - q_i)/s_i, where it adds s_i^2/mu_i to the rate
    at which f falls; one sort of the crossings gives f on every linear piece.
    """
    if f0 <= 0.0:
        return 0.0
    moving = s != 0.0
    qm, sm, mum = q[moving], s[moving], mu[moving]
    ta = (lo[moving] * mum - qm) / sm
    tb = (hi[moving] * mum - qm) / sm
    t_in, t_out = np.minimum(ta, tb), np.maximum(ta, tb)
    weight = sm * sm / mum
    rate0 = pp + float(weight[(t_in < 0.0) & (t_out > 0.0)].sum())
    times = np.concatenate([t_in, t_out])
    change = np.concatenate([weight, -weight])
    keep = times > 0.0
    times, change = times[keep], change[keep]
    order = np.argsort(times, kind="stable")
    times, change = times[order], change[order]
    starts = np.concatenate([[0.0], times])
    rates = rate0 + np.concatenate([[0.0], np.cumsum(change)])
    # f at the start of each piece: f0 minus the integral of the rate over the pieces before
    drops = rates[:-1] * np.diff(starts)
    f_start = f0 - np.concatenate([[0.0], np.cumsum(drops)])
    j = int(np.argmax(f_start <= 0.0)) if np.any(f_start <= 0.0) else starts.size
    k = j - 1  # the zero lies in piece k, which starts at starts[k] with f_start[k] > 0
    rate = rates[k]
    if rate <= 0.0:
        return float(starts[j]) if j < starts.size else float(starts[k])
    t = float(starts[k] + f_start[k] / rate)
    return min(t, float(starts[j])) if j < starts.size else t


def _prox_newton(A: np.ndarray, r: np.ndarray, ell: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray, mu: np.ndarray, v: np.ndarray, reg: np.ndarray,
                 max_steps: int = 30) -> tuple[np.ndarray, np.ndarray]:
    r"""Solve :math:`\min_{lo\le\delta\le hi} \tfrac12\|r - A^\top\delta\|^2 - \ell^\top\delta
    + \tfrac12\sum\mu_i\delta_i^2` through its concave dual in :math:`v` (warm start ``v``).

    ``A`` has one row :math:`a_i` per sample; :math:`\delta(v) = \mathrm{clip}((Av + \ell)/\mu)`
    and the dual gradient is :math:`r - Rv - A^\top\delta(v)` with :math:`R = \mathrm{diag}`
    (``reg``): a zero in ``reg`` makes that row of :math:`A^\top\delta = r` a hard constraint
    (its :math:`v` is the multiplier). Newton directions with the generalised Hessian
    :math:`R + A_F^\top\mathrm{diag}(1/\mu_F)A_F` (:math:`F` the unclipped samples) and an
    exact line search (:func:`_line_root`: the directional derivative is non-increasing and
    piecewise linear, its pieces found by one sort).
    Returns ``(delta, v)``.
    """
    tol = 1e-9 * max(1.0, float(np.linalg.norm(r)))
    R = np.diag(reg + 1e-12)
    for _ in range(max_steps):
        q = A @ v + ell
        delta = np.clip(q / mu, lo, hi)
        grad = r - reg * v - A.T @ delta
        if float(np.linalg.norm(grad)) <= tol:
            break
        free = (q > lo * mu) & (q < hi * mu)
        AF = A[free]
        H = R + (AF.T / mu[free]) @ AF
        try:
            p = np.linalg.solve(H, grad)
        except np.linalg.LinAlgError:
            p = np.linalg.lstsq(H, grad, rcond=None)[0]
        if not float(p @ grad) > 0.0:  # rounding on a badly scaled H: plain gradient ascent
            p = grad
        # the derivative of the dual along v + t p is p^T grad at t = 0 and falls as t grows
        t = _line_root(float(p @ grad), q, A @ p, mu, lo, hi, float(p @ (reg * p)))
        if t * float(np.linalg.norm(p)) <= 1e-14 * max(1.0, float(np.linalg.norm(v))):
            break
        v = v + t * p
    return np.clip((A @ v + ell) / mu, lo, hi), v


def implied_dual(Z: np.ndarray, y: np.ndarray, c: np.ndarray, w: np.ndarray,
                 margin: np.ndarray) -> tuple[np.ndarray, float, float]:
    r"""A dual-feasible :math:`\alpha` implied by the primal point (Notes of ``solve_pegasos``).

    Returns ``(alpha, dual_value, stationarity)`` with the largest dual value
    found, where ``stationarity`` is :math:`\|w - Z^\top(\alpha\circ y)\|/\max(1, \|w\|)`.
    """
    alpha, dual, u, _ = _implied_dual(Z, y, c, w, margin, None)
    return alpha, dual, float(np.linalg.norm(w - u)) / max(1.0, float(np.linalg.norm(w)))


def _implied_dual(Z: np.ndarray, y: np.ndarray, c: np.ndarray, w: np.ndarray,
                  margin: np.ndarray, v0: np.ndarray | None
                  ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """(alpha, D(alpha), Z^T(alpha y), v); ``v0`` warm-starts the Newton steps at the
    smallest width only (no continuation)."""
    n, d = Z.shape
    alpha_h = np.where(margin < 1.0, c, 0.0)
    best = _dual_value(Z, y, c, alpha_h)
    if n <= _MAX_FREE:
        free = np.arange(n)
    else:
        free = np.argpartition(np.abs(margin - 1.0), _MAX_FREE)[:_MAX_FREE]
    yF, cF = y[free], c[free]
    A = np.empty((free.size, d + 1))
    np.multiply(Z[free], yF[:, None], out=A[:, :d])
    A[:, d] = yF  # the balance y^T alpha = 0, a hard constraint (reg 0 below)
    reg = np.ones(d + 1)
    reg[d] = 0.0
    u_h = Z.T @ (alpha_h * y)
    r = np.concatenate([w - u_h, [-float(y @ alpha_h)]])
    ell = 1.0 - margin[free]
    lo, hi = -alpha_h[free], cF - alpha_h[free]
    v = np.zeros(d + 1) if v0 is None else v0.copy()
    for beta in (_BETAS if v0 is None else _BETAS[-1:]):  # continuation: warm-starts the next
        delta, v = _prox_newton(A, r, ell, lo, hi, beta / cF, v, reg)
        alpha = alpha_h.copy()
        alpha[free] += delta
        cand = _dual_value(Z, y, c, alpha)
        if cand[1] > best[1]:
            best = cand
    return best[0], best[1], best[2], v


# ---- the iterations ---------------------------------------------------------------------

_NUMBA_KERNEL: Callable | None = None


def _steps_numpy(Z: np.ndarray, y: np.ndarray, gy: np.ndarray, idx: np.ndarray,
                 w: np.ndarray, w_avg: np.ndarray, t0: int, offset: float, lam: float,
                 radius: float, tau: float, sgd_bias: bool, average: bool, eps: float,
                 bb: np.ndarray) -> int:
    r"""Run the steps of the rows of ``idx`` from t0 + 1 (in place); return the steps done.

    The step of iteration ``t`` is :math:`1/(\lambda(t + t_0))` with ``offset``
    :math:`t_0` (0: Alg. 2 as printed). ``bb`` holds (b, b_avg). Stops early (after the
    step) when ||w_t - w_(t-1)|| <= eps > 0.
    """
    k = idx.shape[1]
    b, b_avg = float(bb[0]), float(bb[1])
    w_prev = np.empty_like(w) if eps > 0 else None
    done = 0
    for j in range(idx.shape[0]):
        t = t0 + j + 1
        rows = idx[j]
        eta_k = 1.0 / (lam * (t + offset) * k)
        if w_prev is not None:
            w_prev[:] = w
        if k == 1:
            i = int(rows[0])
            zi = Z[i]
            active = y[i] * (float(zi @ w) + b) < 1.0
            w *= 1.0 - 1.0 / (t + offset)  # 1 - eta_t lambda
            if active:
                w += (eta_k * gy[i]) * zi
                if sgd_bias:
                    b += tau * eta_k * gy[i]
        else:
            ZA = Z[rows]
            coef = gy[rows] * (y[rows] * (ZA @ w + b) < 1.0)  # g_i y_i on A_t^+, else 0
            w *= 1.0 - 1.0 / (t + offset)
            w += eta_k * (coef @ ZA)
            if sgd_bias:
                b += tau * eta_k * float(coef.sum())
        nw = math.sqrt(float(w @ w))
        if nw > radius:  # projection onto the ball ||w|| <= 1/sqrt(lambda)
            w *= radius / nw
        if average:  # polynomial-decay averaging (Shamir & Zhang 2013, eta = 3)
            rho = 4.0 / (t + 3.0)
            w_avg *= 1.0 - rho
            w_avg += rho * w
            b_avg += rho * (b - b_avg)
        done = j + 1
        if w_prev is not None and t > 1:
            w_prev -= w
            if math.sqrt(float(w_prev @ w_prev)) <= eps:
                break
    bb[0], bb[1] = b, b_avg
    return done


def _numba_kernel() -> Callable:
    """The compiled twin of :func:`_steps_numpy` (built once, on first use)."""
    global _NUMBA_KERNEL
    if _NUMBA_KERNEL is None:
        import numba

        from ._prefetch import prefetch_dense_row

        @numba.njit(cache=True, nogil=True)
        def steps(Z, y, gy, idx, w, w_avg, t0, offset, lam, radius, tau, sgd_bias, average,
                  eps, bb):  # pragma: no cover - compiled
            n_steps, k = idx.shape
            d = w.shape[0]
            b, b_avg = bb[0], bb[1]
            g = np.empty(d)
            wold = np.empty(d)
            done = 0
            for j in range(n_steps):
                t = t0 + j + 1
                eta_k = 1.0 / (lam * (t + offset) * k)
                g[:] = 0.0
                gb = 0.0
                if j + 1 < n_steps:  # the next mini-batch's rows: random, cache misses
                    for r in range(k):
                        prefetch_dense_row(Z, idx[j + 1, r])
                for r in range(k):
                    i = idx[j, r]
                    f = b
                    for q in range(d):
                        f += Z[i, q] * w[q]
                    if y[i] * f < 1.0:
                        for q in range(d):
                            g[q] += gy[i] * Z[i, q]
                        gb += gy[i]
                if eps > 0:
                    wold[:] = w
                shrink = 1.0 - 1.0 / (t + offset)
                nw2 = 0.0
                for q in range(d):
                    w[q] = shrink * w[q] + eta_k * g[q]
                    nw2 += w[q] * w[q]
                if sgd_bias:
                    b += tau * eta_k * gb
                nw = math.sqrt(nw2)
                if nw > radius:
                    s = radius / nw
                    for q in range(d):
                        w[q] *= s
                if average:
                    rho = 4.0 / (t + 3.0)
                    for q in range(d):
                        w_avg[q] += rho * (w[q] - w_avg[q])
                    b_avg += rho * (b - b_avg)
                done = j + 1
                if eps > 0 and t > 1:
                    diff2 = 0.0
                    for q in range(d):
                        diff2 += (w[q] - wold[q]) ** 2
                    if math.sqrt(diff2) <= eps:
                        break
            bb[0] = b
            bb[1] = b_avg
            return done

        _NUMBA_KERNEL = steps
    return _NUMBA_KERNEL


class _Sampler:
    """i.i.d. mini-batches, drawn in blocks: uniform, or with probabilities proportional to p.

    Costs usually take a few values (C times a class weight): then a draw picks the group
    by its total weight and a sample uniformly inside it (the same law as one
    inverse-CDF draw over all N samples, at O(1) per draw).
    """

    def __init__(self, rng: np.random.Generator, n: int, k: int, p: np.ndarray | None) -> None:
        self.rng, self.n, self.k = rng, n, k
        self.groups: list[np.ndarray] | None = None
        self.cdf = None
        if p is not None:
            values, inverse = np.unique(p, return_inverse=True)
            if values.size > 1 and values.size <= 64:
                self.groups = [np.flatnonzero(inverse == g) for g in range(values.size)]
                mass = np.array([values[g] * grp.size for g, grp in enumerate(self.groups)])
                self.group_cdf = np.cumsum(mass / mass.sum())
            elif values.size > 64:
                self.cdf = np.cumsum(p / p.sum())
        self.block = max(1, 8192 // k)
        self.buf = np.empty((0, k), dtype=np.intp)
        self.pos = 0

    def _refill(self) -> None:
        size = self.block * self.k
        if self.groups is not None:
            g = np.searchsorted(self.group_cdf, self.rng.random(size) * self.group_cdf[-1],
                                side="right")
            np.minimum(g, len(self.groups) - 1, out=g)
            u = self.rng.random(size)
            idx = np.empty(size, dtype=np.intp)
            for gi, members in enumerate(self.groups):
                sel = g == gi
                pick = (u[sel] * members.size).astype(np.intp)
                np.minimum(pick, members.size - 1, out=pick)
                idx[sel] = members[pick]
        elif self.cdf is not None:
            idx = np.searchsorted(self.cdf, self.rng.random(size) * self.cdf[-1], side="right")
            np.minimum(idx, self.n - 1, out=idx)
        else:
            idx = self.rng.integers(0, self.n, size=size)
        self.buf = idx.astype(np.intp).reshape(self.block, self.k)
        self.pos = 0

    def take(self, m: int) -> np.ndarray:
        """The next ``m`` mini-batches, shape (m, k)."""
        parts, need = [], m
        while need > 0:
            if self.pos >= self.buf.shape[0]:
                self._refill()
            part = self.buf[self.pos:self.pos + need]
            self.pos += part.shape[0]
            need -= part.shape[0]
            parts.append(part)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _check_options(name: str, tol: Any, max_iter: Any, time_limit: Any, batch_size: Any,
                   eps: Any, bias: Any, tau: Any, check_every: Any, stall_checks: Any,
                   average: Any, engine: Any, n: int) -> str:
    check_common(name, tol, max_iter, time_limit)
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or not 1 <= batch_size <= n:
        raise OptionError(
            f"{name}: batch_size must be an integer in [1, N] = [1, {n}], got {batch_size!r}"
        )
    if eps is not None and not (isinstance(eps, (int, float)) and math.isfinite(eps)
                                and eps >= 0):
        raise OptionError(f"{name}: step_tol must be a finite number >= 0 or None, "
                          f"got {eps!r}")
    if bias not in ("sgd", "exact"):
        raise OptionError(f"{name}: bias must be 'sgd' or 'exact', got {bias!r}")
    if not (isinstance(tau, (int, float)) and math.isfinite(tau) and tau >= 0):
        raise OptionError(f"{name}: tau must be a finite number >= 0, got {tau!r}")
    for label, val in (("check_every", check_every), ("stall_checks", stall_checks)):
        if val is not None and (isinstance(val, bool) or not isinstance(val, (int, np.integer))
                                or val < 1):
            raise OptionError(f"{name}: {label} must be a positive integer or None, got {val!r}")
    if not isinstance(average, (bool, np.bool_)):
        raise OptionError(f"{name}: average must be True or False, got {average!r}")
    return resolve_engine(name, engine)


class _Schedule:
    """Iterations at which the certificate is computed (fixed or geometric; solvers' Notes)."""

    def __init__(self, first: int, fixed: bool) -> None:
        self.interval, self.fixed = first, fixed
        self.next = first

    def advance(self) -> None:
        if not self.fixed:
            self.interval = int(math.ceil(1.25 * self.interval))
        self.next += self.interval


def _start_point(x0: np.ndarray | None, d: int, radius: float,
                 name: str) -> tuple[np.ndarray, float]:
    """The first iterate :math:`(w, b)`: ``x0`` projected onto the ball, or zero."""
    if x0 is None:
        return np.zeros(d), 0.0
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    if x0.shape != (d + 1,) or not np.all(np.isfinite(x0)):
        raise OptionError(f"{name}: x0 must be a finite vector (w, b) of length {d + 1}")
    w, b = x0[:d].copy(), float(x0[d])
    nw = float(np.linalg.norm(w))
    if nw > radius:
        w *= radius / nw
    return w, b


class _Certifier:
    """The certificate of the Notes of ``solve_pegasos``, with the best dual point kept.

    :math:`D` is a lower bound on :math:`P^*` whatever point it came from, so it is
    recomputed (the Newton steps, the costly part) only at every fourth check, at the end,
    or when :math:`P - D_{best}` has halved while the last recomputation still raised
    :math:`D` noticeably.
    """

    def __init__(self, Z: np.ndarray, y: np.ndarray, c: np.ndarray, tol: float,
                 average: bool, exact_b: bool) -> None:
        self.Z, self.y, self.c, self.tol = Z, y, c, tol
        self.average, self.exact_b = average, exact_b
        self.D, self.alpha, self.u, self.v = -math.inf, None, None, None
        self.excess, self.skipped, self.gain = math.inf, 0, math.inf

    def __call__(self, w: np.ndarray, w_avg: np.ndarray, bb: np.ndarray,
                 final: bool) -> tuple[float, float, float, Any, float, np.ndarray, float]:
        """The better (lower P) of the last and the averaged iterate, certified:
        ``(P, D, gap, alpha, stationarity, w, b)``."""
        Z, y, c, tol = self.Z, self.y, self.c, self.tol
        if self.exact_b:
            bb[0] = exact_bias(Z @ w, y, c)
            if self.average:
                bb[1] = exact_bias(Z @ w_avg, y, c)
        candidates = [(w, float(bb[0]))] + ([(w_avg, float(bb[1]))] if self.average else [])
        scored = [(_primal(Z, y, c, cw, cb), cw, cb) for cw, cb in candidates]
        (p_val, margin), cw, cb = min(scored, key=lambda item: item[0][0])
        excess = p_val - self.D
        self.skipped += 1
        if self.alpha is None or (excess > tol * p_val and (
                final or self.skipped > 3 or (excess <= 0.5 * self.excess
                                              and self.gain > 0.1 * tol * p_val))):
            a_val, d_val, u_val, self.v = _implied_dual(Z, y, c, cw, margin, self.v)
            self.gain = d_val - self.D
            if d_val > self.D:
                self.D, self.alpha, self.u = d_val, a_val, u_val
            self.excess, self.skipped = p_val - self.D, 0
        gap = max(p_val - self.D, 0.0) / max(p_val, 1e-300)
        stat = float(np.linalg.norm(cw - self.u)) / max(1.0, float(np.linalg.norm(cw)))
        return p_val, self.D, gap, self.alpha, stat, cw.copy(), float(cb)


def _run(program: Any, name: str, weighted: bool, **options: Any) -> Solution:
    """The body of the solvers, on one BLAS thread: its products are thin (``Z w`` once a
    pass for the exact bias, ``Z^T`` products in the certificate), and idle BLAS threads
    spinning between them cost CPU time without shortening them."""
    with one_blas_thread():
        return _run_body(program, name, weighted, **options)


def _run_body(program: Any, name: str, weighted: bool, *, tol: float, max_iter: int | None,
         time_limit: float | None, verbose: bool, callback: Callable | None,
         x0: np.ndarray | None, batch_size: int | None, eps: float | None, bias: str,
         tau: float, random_state: Any, check_every: int | None, stall_checks: int,
         average: bool, engine: str, step_offset: int | str) -> Solution:
    t_setup = time.perf_counter()
    if not (isinstance(step_offset, str) and step_offset == "auto") and (
            isinstance(step_offset, bool) or not isinstance(step_offset, (int, np.integer))
            or step_offset < 0):
        raise OptionError(f"{name}: step_offset must be 'auto' or an integer >= 0, "
                          f"got {step_offset!r}")
    Z, y, c, linear = _features(program, name)
    n, d = Z.shape
    if batch_size is None:
        batch_size = min(n, 32)
    engine = _check_options(name, tol, max_iter, time_limit, batch_size, eps, bias, tau,
                            check_every, stall_checks, average, engine, n)
    T = 100_000 if max_iter is None else int(max_iter)
    driver = Driver(name, tol=tol, max_iter=T, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback)
    k = int(batch_size)
    use_numba = engine == "numba"
    steps = _numba_kernel() if use_numba else _steps_numpy
    chunk = _NUMBA_CHUNK if use_numba else _NUMPY_CHUNK
    lam = 1.0 / float(c.sum())  # lambda = 1 / sum_i c_i  (= 1/(C N) for uniform costs)
    s = lam * n * c  # per-sample loss weights of the lambda-form, mean 1
    radius = 1.0 / math.sqrt(lam)
    schedule = _Schedule(int(check_every) if check_every is not None
                         else max(1000, -(-n // k)), check_every is not None)
    rng = np.random.default_rng(random_state)
    sampler = _Sampler(rng, n, k, p=None if weighted else c)
    gy = (s * y) if weighted else y.copy()  # g_i y_i
    w, b = _start_point(x0, d, radius, name)
    w_avg = w.copy()
    bb = np.array([b, b])  # (b, b_avg), updated in place by the engines
    sgd_bias = bias == "sgd"
    eps_val = float(eps) if eps is not None else 0.0
    per_pass = max(10, n // k)  # exact bias: once a pass
    if step_offset == "auto":
        # the first step makes a per-sample update of margin ~1 on a row of mean norm:
        # eta_0 / k * mean ||z||^2 = 1 with eta_0 = 1 / (lambda t_0)
        offset = float(math.floor(float(np.einsum("ij,ij->", Z, Z)) / n / (lam * k)))
    else:
        offset = float(step_offset)
    setup_time = time.perf_counter() - t_setup

    driver.start()
    best_gap, since_best = math.inf, 0
    code: int = Reason.MAX_ITER
    t, gap, alpha, stat, dual, primal = 0, math.inf, None, math.nan, -math.inf, math.inf
    history = []
    if verbose:
        print(f"{name}: N = {n}, d = {d}, lambda = {lam:.3e}, k = {k}, T = {T}, bias = {bias}, "
              f"engine = {'numba' if use_numba else 'numpy'}")
        print(f"{'iter':>10} {'primal':>14} {'dual':>14} {'rel. gap':>10} {'time s':>8}")
    out_w, out_b = w, b

    certify = _Certifier(Z, y, c, tol, average, bias == "exact")

    def certificate(final: bool = False) -> None:
        nonlocal gap, alpha, stat, dual, primal, out_w, out_b
        primal, dual, gap, alpha, stat, out_w, out_b = certify(w, w_avg, bb, final)

    while True:
        if t >= T:
            code = Reason.MAX_ITER
            break
        stop_at = min(T, schedule.next, t + chunk)
        if bias == "exact":
            stop_at = min(stop_at, (t // per_pass + 1) * per_pass)
        m = stop_at - t
        done = int(steps(Z, y, gy, sampler.take(m), w, w_avg, t, offset, lam, radius, tau,
                         sgd_bias, average, eps_val, bb))
        t += done
        if done < m:
            code = _EPS_STOP
            break
        if bias == "exact" and t % per_pass == 0:  # inner minimisation over b, once a pass
            bb[0] = exact_bias(Z @ w, y, c)
        if t >= schedule.next:
            schedule.advance()
            certificate()
            history.append((t, primal, dual, gap))
            if verbose:
                print(f"{t:>10} {primal:>14.7e} {dual:>14.7e} {gap:>10.2e} "
                      f"{driver.elapsed:>8.2f}")
            if driver.converged(gap):
                code = Reason.CONVERGED
                break
            if gap < 0.99 * best_gap:
                best_gap, since_best = gap, 0
            else:
                since_best += 1
                if since_best >= stall_checks:
                    code = Reason.STALLED
                    break
            if driver.listening and driver.notify(
                    t, gap, objective=primal, values={"w": out_w.copy(), "b": out_b},
                    extras={"dual": dual}):
                code = Reason.CALLBACK
                break
        if driver.out_of_time():
            code = Reason.TIME_LIMIT
            break
    certificate(final=True)
    solve_time = driver.elapsed
    assert alpha is not None
    detail = f"relative duality gap {gap:.2e} (tol {tol:g}) after {t} iterations"
    # a run that meets tol at its last certificate converged, whatever stopped it
    status, message = driver.finish(Reason.CONVERGED if driver.converged(gap) else code,
                                    detail=detail, T=T, eps=eps, stall_checks=stall_checks,
                                    time_limit=time_limit)
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
                "batch_size": k, "bias": bias, "radius": radius,
                "engine": "numba" if use_numba else "numpy", "step_offset": offset},
    )


_COMMON_DOC = r"""
    Parameters
    ----------
    program : Program
        A program of kind ``"qp.svm.primal"`` (soft margin, finite costs).
    tol : float, default=1e-3
        Stop when the certified relative duality gap :math:`(P - D)/P` is
        :math:`\le` ``tol`` (checked every ``check_every`` iterations).
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
        default :math:`\min(N, 32)` (a NumPy step costs about the same for
        :math:`k = 1` and :math:`k = 32`).
    step_tol : float or None, default=None
        :math:`\varepsilon_{PEG}`: stop when :math:`\|w_t - w_{t-1}\| \le` ``step_tol``
        (Alg. 5; the thesis uses 1e-4). ``None`` disables the test.
    bias : {"exact", "sgd"}
        How :math:`b` is learned (see Notes).
    tau : float, default=1.0
        :math:`\tau`, the scale of the bias step of ``bias="sgd"`` (not reported
        in the thesis, P-H2).
    random_state : int, Generator or None
        Seed of the mini-batch draws.
    check_every : int, optional
        Iterations between certificates; by default the geometric schedule
        of the Notes (first after one pass, at least 1 000
        iterations, then each interval 25 % longer).
    stall_checks : int, default=10
        Checks without a 1 % improvement of the best gap before the solver
        reports a stall (with the default geometric schedule, ten checks span
        about 9x the iterations done before them).
    average : bool, default=True
        Also keep the polynomial-decay average of the iterates (Shamir & Zhang,
        ICML 2013, with :math:`\eta = 3`) and return whichever of the last
        iterate and the average has the smaller primal value. ``False``
        returns the last iterate, as Alg. 2 and Alg. 5 print.
    engine : {"auto", "numpy", "numba"}, default="auto"
        Where the iterations run: NumPy, or the compiled numba loop
        (``"auto"``: numba when it can be imported, unless the environment
        variable ``CONICML_ENGINE`` says otherwise). Same batches, same steps.
    step_offset : int or "auto"
        :math:`t_0` of the step :math:`\eta_t = 1/(\lambda(t + t_0))` (Bottou's offset;
        the projection and the averaging are unchanged). 0 is Alg. 2 / Alg. 5 as printed,
        whose first steps of :math:`1/\lambda` throw :math:`w` to the ball's rim when
        :math:`\lambda` is small; ``"auto"``: :math:`t_0 = \lfloor\overline{\|z\|^2}/
        (\lambda k)\rfloor`, the offset at which one sample's share of the first step,
        :math:`\eta_{t_0}/k`, moves the margin of a row of mean squared norm by 1.
        Default ``"auto"`` for ``pegasos``, 0 for ``weighted-pegasos`` (H-LSVM's node
        solver as the thesis runs it). The certificate does not depend on it. Reported
        as ``extras["step_offset"]``.

    Returns
    -------
    Solution
        ``objective`` is the primal value :math:`P(w, b)` of the returned point;
        ``values`` hold ``w`` (``v`` for a non-linear kernel), ``b`` and ``xi``;
        ``duals["margin"]`` the implied dual point; ``extras["lam"]`` the
        :math:`\lambda` of the map in Notes and ``extras["dual_objective"]`` the
        lower bound :math:`D`.

    Notes
    -----
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

    **Stopping.** The solver computes its certificate (below) every
    ``check_every`` iterations if that is given; by default at a geometric
    schedule, first after one pass over the data (at least 1 000 iterations), then
    each interval 25 % longer than the last, so that the certificate (which costs
    more than a pass) stays a small part of the run. It stops with ``OPTIMAL``
    when the relative gap is :math:`\le` ``tol``. It also stops, as Alg. 5 does,
    when :math:`\|w_t - w_{t-1}\| \le` ``step_tol`` (:math:`\varepsilon_{PEG}`;
    ``OPTIMAL`` if the gap then passes ``tol``, ``OPTIMAL_INACCURATE`` otherwise),
    when the best gap has not improved by 1 % over ``stall_checks`` consecutive
    checks (stall: ``OPTIMAL_INACCURATE``), and at ``max_iter`` (:math:`T`),
    ``time_limit`` or a callback's :class:`StopIteration` (``USER_LIMIT`` unless
    the final gap passes ``tol``).

    **Engines.** The iterations run in NumPy (one vectorised mini-batch step per
    Python iteration, no per-step allocation besides the batch gather) or, with
    ``engine="numba"``, in a compiled loop over a block of pre-drawn mini-batches;
    ``"auto"`` takes numba when it can be imported (see ``CONICML_ENGINE``).
    Both draw the same batches from the same ``random_state`` and compute the same
    steps (they agree to rounding).

    **Certificate.** At a point :math:`(w, b)` with margins
    :math:`m_i = y_i(w^\top z_i + b)`, every dual-feasible :math:`\alpha`
    (:math:`0 \le \alpha \le c`, :math:`y^\top\alpha = 0`) gives the lower bound
    :math:`D(\alpha) = \sum\alpha_i - \tfrac12\|Z^\top(\alpha\circ y)\|^2 \le P^*`
    (seed 001 eq. 2.27), and

    .. math::

        P(w, b) - D(\alpha) = \tfrac12\|w - Z^\top(\alpha\circ y)\|^2
            - \sum_i \alpha_i (1 - m_i) + \sum_i c_i [1 - m_i]_+ ,

    so the best :math:`\alpha` for the point is the dual optimum itself. The solver
    starts from the sub-gradient's :math:`\alpha^h_i = c_i[m_i < 1]` and, on the
    (at most 20 000) samples nearest the margin, takes the proximal step
    :math:`\min_\delta\ \tfrac12\|r - A\delta\|^2 - \ell^\top\delta +
    \sum_i \frac{\beta}{2c_i}\delta_i^2` over the box
    :math:`-\alpha^h \le \delta \le c - \alpha^h` and :math:`y^\top(\alpha^h + \delta) = 0`
    (:math:`A` the columns :math:`y_iz_i`, :math:`r` the residual of
    :math:`\alpha^h`, :math:`\ell_i = 1 - m_i`) through its
    :math:`(d+1)`-dimensional concave dual, solved by a semismooth Newton method
    with an exact line search (each step one :math:`(d+1)\times(d+1)` system),
    for :math:`\beta = 10^{-1}, \dots, 10^{-4}`
    (continuation). Each candidate is clipped to the box, balanced exactly
    (:math:`y^\top\alpha = 0`, scaling down the heavier class) and scaled by the
    best :math:`s\in[0,1]` (:math:`D(s\alpha)` is a concave quadratic in
    :math:`s`); the largest :math:`D` is kept. Whatever the Newton steps do, the
    bound is valid: :math:`D` is evaluated exactly at a feasible point. The
    residuals are: ``primal = 0`` (the point is feasible: :math:`\xi_i` is the
    hinge), ``dual`` = the relative stationarity residual
    :math:`\|w - Z^\top(\alpha\circ y)\|/\max(1,\|w\|)` and ``gap`` =
    :math:`(P - D)/P` (``source="solver"``): an honest relative duality gap, never
    smaller than the true relative suboptimality :math:`(P - P^*)/P` of the point;
    by strong convexity it also bounds :math:`\|w - w^*\| \le \sqrt{2(P - D)}`.
    ``duals["margin"]`` is that :math:`\alpha`, so the formulation's decode gives
    ``dual_coef`` and the support.
"""


_NOT_BY_DEFAULT = ("a stochastic first-order method: its agreement is statistical (a seeded point "
                   "within its tol, certified by the relative duality gap of the implied dual "
                   "point) and a run to compare's tolerance for it (1e-4) takes ~10^5 "
                   "iterations; tests/solvers/test_pegasos.py compares it at its stated "
                   "tolerance")


def _make_solver(name: str, weighted: bool, default_bias: str, default_offset: int | str,
                 summary: str) -> Callable:
    """The registered function of one of the two variants (they differ only in sampling)."""

    def solver(
        program: Any,
        *,
        tol: float = 1e-3,
        max_iter: int | None = None,
        time_limit: float | None = None,
        verbose: bool = False,
        callback: Callable | None = None,
        x0: np.ndarray | None = None,
        batch_size: int | None = None,
        step_tol: float | None = None,
        bias: str = default_bias,
        tau: float = 1.0,
        random_state: Any = None,
        check_every: int | None = None,
        stall_checks: int = 10,
        average: bool = True,
        engine: str = "auto",
        step_offset: int | str = default_offset,
    ) -> Solution:
        return _run(program, name, weighted, tol=tol, max_iter=max_iter,
                    time_limit=time_limit, verbose=verbose, callback=callback, x0=x0,
                    batch_size=batch_size, eps=step_tol, bias=bias, tau=tau,
                    random_state=random_state, check_every=check_every,
                    stall_checks=stall_checks, average=average, engine=engine,
                    step_offset=step_offset)

    solver.__name__ = solver.__qualname__ = "solve_" + name.replace("-", "_")
    solver.__doc__ = summary + "\n" + _COMMON_DOC
    return renamed_keywords(eps="step_tol")(solver)


solve_pegasos = register(
    "pegasos", kinds=[SVM_PRIMAL], specialized=True, requires=("numpy", "scipy"),
    compare_by_default=_NOT_BY_DEFAULT,
    compare_options={"tol": 1e-4, "batch_size": 8, "max_iter": 400_000},
    compare_rtol=1e-4, certify_tol=1e-3, warm_start=pegasos_wb,
)(_make_solver("pegasos", False, "exact", "auto",
               "Pegasos (seed 001 Alg. 2): samples drawn with probability c_i / sum c, "
               "unweighted steps."))

solve_weighted_pegasos = register(
    "weighted-pegasos", kinds=[SVM_PRIMAL], specialized=True, requires=("numpy", "scipy"),
    compare_by_default=_NOT_BY_DEFAULT,
    compare_options={"tol": 1e-4, "batch_size": 8, "max_iter": 400_000, "bias": "exact"},
    compare_rtol=1e-4, certify_tol=1e-3, warm_start=pegasos_wb,
)(_make_solver("weighted-pegasos", True, "sgd", 0,
               "Weighted-Pegasos (seed 001 Alg. 5): uniform draws, steps weighted by "
               "s_i = lambda N c_i."))
