r"""``ils-newton``: MPM and BMPM by a safeguarded Newton search over one scalar weight.

The fixed point of Lanckriet's iterative least squares (seed 004 eq. 3.29) found by
Newton's method on the weight of :math:`c\,\Sigma_x + (1-c)\Sigma_y`, one Cholesky
factorisation per step; kinds ``"socp.mpm"`` and ``"socp.bmpm"``. It stops when the
relative stationarity :math:`|g(c)| \le` ``tol`` and hands singular or infeasible
programs to ``dinkelbach``; the reduction and the stopping rule are in the Notes of
:func:`solve_ils_newton`.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kinds, registry
from .._utils.linalg import cholesky_solve
from .._utils.threads import one_blas_thread
from ..contracts.minimax import KernelScatter
from ..exceptions import OptionError
from ..program import Program
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._options import check_array
from ._warm import fractional_w

__all__ = ["TERMINATION_MESSAGES", "solve_ils_newton"]

TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: |g(c)| <= tol (stationarity on the weight curve)",
    {4: "bracket shrunk to floating-point width before |g(c)| <= tol"})

STATUS_MAP: dict[int, Status] = status_table({4: Status.OPTIMAL_INACCURATE})

#: Relative size of the smallest Cholesky pivot of Sx + Sy (squared, against the
#: largest diagonal entry) below which the program is not the regular case.
_PIVOT_RTOL = 1e-13

#: Longest Newton step in the log-odds t accepted inside the bracket (longer: the
#: reweighting map or bisection). BMPM optima lie near c = 1 (t ~ 2.5 at c = 0.92).
_MAX_STEP = 2.0

#: Relative residual of the iterative solves with M(c) for w(c) (g is then accurate to
#: about this, relative) and for its derivative, which only steers the Newton step: a
#: relative error e of g' leaves e |g| in the next |g| beside Newton's own O(g^2), so
#: its solve stops at _DERIVATIVE_GAIN |g| within these bounds.
_SOLVE_RTOL = 1e-13
#: Far from the root an evaluation only steers the next Newton step: its solve stops at
#: _FAR_GAIN g^2 (g the current point's; the next |g| is about a tenth of g^2 with
#: Newton's step, less with the curvature-corrected one of _newton_step, so g there is
#: kept well below it) within (_SOLVE_RTOL, _FAR_RTOL), and a point is evaluated again
#: at _SOLVE_RTOL before its g is used when |g| is within _FAR_MARGIN times that
#: tolerance.
_FAR_GAIN = 1e-5
_FAR_RTOL = 1e-6
_FAR_MARGIN = 100.0
_DERIVATIVE_RTOL = (1e-10, 1e-5)
_DERIVATIVE_GAIN = 1e-3
#: |g| of the previous point below which its derivative enters the curvature of the next
#: Newton step (:func:`_newton_step`); larger: g saturates and the quotient misleads.
_CURVATURE_G = 0.1
#: Points of the restricted program whose optimal weight starts a kernel program's
#: search (:func:`_coarse_weight`; at most a quarter of the points, at least 64).
_COARSE_SIZE = 256


class _Curve:
    r"""The weight curve :math:`w(c)` of a fractional program and :math:`g` along it."""

    def __init__(self, d: np.ndarray, Sx: np.ndarray, Sy: np.ndarray,
                 a: tuple[float, float], b: tuple[float, float]) -> None:
        self.d, self.Sx, self.Sy, self.a, self.b = d, Sx, Sy, a, b

    def dot(self, a: np.ndarray, b: np.ndarray) -> float:
        """The inner product of the program's coordinates."""
        return float(a @ b)

    def sx_mv(self, w: np.ndarray) -> np.ndarray:
        r""":math:`\Sigma_x w`."""
        return self.Sx @ w

    def sy_mv(self, w: np.ndarray) -> np.ndarray:
        r""":math:`\Sigma_y w`."""
        return self.Sy @ w

    def sigma_sqs(self, w: np.ndarray) -> tuple[float, float]:
        r""":math:`(w^\top\Sigma_xw, w^\top\Sigma_yw)`."""
        return self.dot(w, self.sx_mv(w)), self.dot(w, self.sy_mv(w))

    def solve(self, c: float, L: np.ndarray, b: np.ndarray, rtol: float = _SOLVE_RTOL,
              tangent_of: np.ndarray | None = None) -> np.ndarray:
        r""":math:`M(c)^{-1}b` with the factor ``L`` of :meth:`factor` (direct: ``rtol``
        and ``tangent_of``, ``b`` being :math:`(\Sigma_x - \Sigma_y)M(c)^{-1}` times
        that right-hand side, are for the iterative solves of :class:`_ScatterCurve`)."""
        return cholesky_solve((L, True), b)

    def solve_products(self, c: float, L: np.ndarray, b: np.ndarray,
                       rtol: float = _SOLVE_RTOL
                       ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        r""":math:`x = M(c)^{-1}b` and, where the solve has them anyway,
        :math:`\Sigma_x x`, :math:`\Sigma_y x` (else ``None``)."""
        return self.solve(c, L, b, rtol=rtol), None, None

    def factor(self, c: float) -> np.ndarray | None:
        """Lower Cholesky factor of :math:`M(c)`, ``None`` if not numerically definite."""
        M = c * self.Sx + (1.0 - c) * self.Sy
        try:
            with one_blas_thread():
                L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            return None
        piv = np.diag(L)
        if not np.all(piv * piv > _PIVOT_RTOL * float(np.max(np.diag(M)))):
            return None
        return L

    def evaluate(self, c: float, derivative: bool = True,
                 rtol: float = _SOLVE_RTOL) -> dict | None:
        r"""``w``, :math:`\sigma`'s, :math:`N`, :math:`D`, :math:`g` and :math:`g'` at ``c``
        (``w`` to the relative residual ``rtol`` of an iterative solve)."""
        L = self.factor(c)
        if L is None:
            return None
        (ax, ay), (bx, by) = self.a, self.b
        wu, Sxwu, Sywu = self.solve_products(c, L, self.d, rtol)
        q = self.dot(self.d, wu)
        if not q > 0:
            return None
        w = wu / q
        if Sxwu is None or Sywu is None:
            Sxw, Syw = self.sx_mv(w), self.sy_mv(w)
            sxx, syy = self.dot(w, Sxw), self.dot(w, Syw)
        else:
            Sxw, Syw = Sxwu / q, Sywu / q
            sxx, syy = self.dot(wu, Sxwu) / (q * q), self.dot(wu, Sywu) / (q * q)
        sx = math.sqrt(max(sxx, 0.0))
        sy = math.sqrt(max(syy, 0.0))
        N = 1.0 - ax * sx - ay * sy
        D = bx * sx + by * sy
        A, B = ax * D + bx * N, ay * D + by * N
        num = A * (1.0 - c) * sy - B * c * sx
        den = A * (1.0 - c) * sy + B * c * sx
        out = {"c": c, "w": w, "sx": sx, "sy": sy, "N": N, "D": D,
               "g": num / den if den > 0 else math.nan, "dg": math.nan, "rtol": rtol,
               "_parts": (L, q, Sxw, Syw, A, B, num, den)}
        if derivative:
            self.add_derivative(out)
        return out

    def add_derivative(self, out: dict) -> dict:
        r"""Set ``out["dg"]``, :math:`g'(c)` (one more solve with :math:`M(c)`), if not yet."""
        parts = out.pop("_parts", None)
        if parts is None:
            return out
        L, q, Sxw, Syw, A, B, num, den = parts
        c, sx, sy = out["c"], out["sx"], out["sy"]
        (ax, ay), (bx, by) = self.a, self.b
        if den > 0 and sx > 0 and sy > 0:
            # w_u' = -M^{-1}(Sx - Sy) w_u; w = w_u/q, so w' = (w_u' - w dq)/q
            # (Sx - Sy) wu; g' only steers the Newton step (g itself is evaluated to
            # full accuracy), so its solve stops at a looser relative residual
            lo_, hi_ = _DERIVATIVE_RTOL
            rtol = min(max(_DERIVATIVE_GAIN * abs(float(out["g"])), lo_), hi_)
            # (inner products of the solve's own result: a GramScatter keeps its K X)
            xs = self.solve(c, L, q * (Sxw - Syw), rtol=rtol, tangent_of=self.d)  # -w_u'
            dd = -self.dot(self.d, xs)
            # w' = (w_u' - w d^T w_u') / q and w^T Sigma w = sigma^2
            dsx = (-self.dot(xs, Sxw) - dd * sx * sx) / (q * sx)
            dsy = (-self.dot(xs, Syw) - dd * sy * sy) / (q * sy)
            dN, dD = -ax * dsx - ay * dsy, bx * dsx + by * dsy
            dA, dB = ax * dD + bx * dN, ay * dD + by * dN
            dnum = (dA * (1 - c) * sy - A * sy + A * (1 - c) * dsy
                    - dB * c * sx - B * sx - B * c * dsx)
            dden = (dA * (1 - c) * sy - A * sy + A * (1 - c) * dsy
                    + dB * c * sx + B * sx + B * c * dsx)
            out["dg"] = (dnum * den - num * dden) / (den * den)
        return out


class _ScatterCurve(_Curve):
    r"""The weight curve of a kernel program whose covariances are held by their centred
    rows (:class:`~conicml.contracts.minimax.KernelScatter`): solves with :math:`M(c)` by
    the Woodbury identity through a block factor of the class-centred Gram matrix plus
    the weight's shifts (conjugate gradients for the shift held at an earlier weight)."""

    def __init__(self, d: np.ndarray, scatter: KernelScatter, a: tuple[float, float],
                 b: tuple[float, float]) -> None:
        self.d, self.scatter, self.a, self.b = d, scatter, a, b

    def dot(self, a: np.ndarray, b: np.ndarray) -> float:
        with one_blas_thread():  # (a product with K for a GramScatter)
            return self.scatter.dot(a, b)

    def sx_mv(self, w: np.ndarray) -> np.ndarray:
        with one_blas_thread():
            return self.scatter.sigma_x(w)

    def sy_mv(self, w: np.ndarray) -> np.ndarray:
        with one_blas_thread():
            return self.scatter.sigma_y(w)

    def sigma_sqs(self, w: np.ndarray) -> tuple[float, float]:
        # a GramScatter forms both from one product with K
        if hasattr(self.scatter, "sigma_sqs"):
            return self.scatter.sigma_sqs(w)
        return super().sigma_sqs(w)

    def factor(self, c: float) -> float | None:
        # the solve factors (or reuses a factor) itself; M(c) is definite on (0, 1)
        return c if 0.0 < c < 1.0 else None

    def evaluate(self, c: float, derivative: bool = True,
                 rtol: float = _SOLVE_RTOL) -> dict | None:
        try:
            return super().evaluate(c, derivative, rtol)
        except np.linalg.LinAlgError:
            # a block factor not numerically definite (a ridge at rounding level of the
            # Gram matrix): treated as a point where M(c) is not definite
            return None

    def solve(self, c: float, L: object, b: np.ndarray, rtol: float = _SOLVE_RTOL,
              tangent_of: np.ndarray | None = None) -> np.ndarray:
        with one_blas_thread():  # matrix-vector products: one thread (see factor)
            return self.scatter.solve(c, b, rtol=rtol, tangent_of=tangent_of)

    def solve_products(self, c: float, L: object, b: np.ndarray,
                       rtol: float = _SOLVE_RTOL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # the solve's residual check forms Sigma_x x and Sigma_y x: kept, not redone
        with one_blas_thread():
            return self.scatter.solve(c, b, rtol=rtol, products=True)


def _delegate(program: Program, reason: str, options: dict) -> Solution:
    # through the registry: a solver module imports no other solver module
    sol = registry.get("dinkelbach", kind=program.kind).function(program, **options)
    return Solution(status=sol.status, solver="ils-newton", objective=sol.objective,
                    values=sol.values, iterations=sol.iterations, setup_time=sol.setup_time,
                    solve_time=sol.solve_time, residuals=sol.residuals,
                    message=f"{reason}: delegated to dinkelbach ({sol.message})",
                    history=sol.history, extras={**sol.extras, "delegated": "dinkelbach"})


def _start_weight(curve: _Curve, x0: np.ndarray) -> float:
    """The reweighting fixed-point weight of a warm start ``x0`` (0.5 if it has none)."""
    d = curve.d
    if not curve.dot(d, x0) > 0:
        raise OptionError(f"x0 must be a vector of length {d.size} with x0 @ d > 0")
    w0 = x0 / curve.dot(d, x0)
    sxx, syy = curve.sigma_sqs(w0)
    sx0, sy0 = math.sqrt(max(sxx, 0.0)), math.sqrt(max(syy, 0.0))
    (ax, ay), (bx, by) = curve.a, curve.b
    N0, D0 = 1 - ax * sx0 - ay * sy0, bx * sx0 + by * sy0
    A0, B0 = ax * D0 + bx * N0, ay * D0 + by * N0
    if A0 >= 0 and B0 >= 0 and A0 * sy0 + B0 * sx0 > 0:
        return min(max(A0 * sy0 / (A0 * sy0 + B0 * sx0), 1e-6), 1 - 1e-6)
    return 0.5


def _logit(c: float) -> float:
    return math.log(c / (1.0 - c))


def _newton_step(cur: dict, prev: dict | None) -> float:
    r"""The step in the log-odds :math:`t` from ``cur``: Newton's
    :math:`\delta = -g/g_t`, corrected by the curvature of :math:`g` when the previous
    point (``prev``, with its derivative) is near the root (:math:`|g| <`
    ``_CURVATURE_G``) and farther from ``cur`` than Newton's step: with
    :math:`g_{tt}` the difference quotient of the two derivatives, the root of the
    quadratic model :math:`g + g_t\delta + \tfrac12 g_{tt}\delta^2` next to Newton's
    (:math:`\delta = -g/(g_t + \tfrac12 g_{tt}\delta_N)`, convergence of order
    :math:`1 + \sqrt2` instead of 2), taken only while the correction is below a tenth."""
    c, g = cur["c"], cur["g"]
    dg = cur["dg"] * c * (1.0 - c)
    if not (math.isfinite(dg) and dg != 0):
        return math.nan
    step = -g / dg
    if prev is not None and math.isfinite(prev.get("dg", math.nan)) and \
            abs(prev["g"]) < _CURVATURE_G:
        cp = prev["c"]
        dt = _logit(c) - _logit(cp)
        if dt != 0 and abs(step) < abs(dt):
            dgp = prev["dg"] * cp * (1.0 - cp)
            corr = 0.5 * (dg - dgp) / dt * step / dg
            if abs(corr) < 0.1:
                step /= 1.0 + corr
    return step


def _coarse_weight(scatter: KernelScatter, a_b: tuple) -> float | None:
    r"""The optimal weight of the program restricted to :data:`_COARSE_SIZE` of its
    points, at most a quarter of them, and three dense Krylov vectors
    (:meth:`~conicml.contracts.minimax.GramScatter.galerkin`: dense matrices of that
    order, the same search to :math:`|g| \le 10^{-6}`); ``None`` below 64 such points,
    without a restriction, or when its search fails (no point with :math:`N > 0`, a
    bracket shrunk away)."""
    size = min(_COARSE_SIZE, scatter.G.shape[0] // 4)
    sub = scatter.galerkin(size) if hasattr(scatter, "galerkin") and size >= 64 else None
    if sub is None:
        return None
    coarse = _Curve(*sub, *a_b)
    cur, prev, lo, hi = coarse.evaluate(0.5, derivative=False), None, 0.0, 1.0
    for _ in range(30):
        if cur is None or not cur["N"] > 0 or not math.isfinite(cur["g"]):
            return None
        if abs(cur["g"]) <= 1e-6:
            return float(cur["c"])
        if cur["g"] > 0:
            lo = max(lo, cur["c"])
        else:
            hi = min(hi, cur["c"])
        nxt, lo, hi = _next_point(coarse, cur, lo, hi, prev)
        prev, cur = cur, nxt
    return None


def _interpolated_slope(cur: dict, prev: dict | None, tol: float) -> bool:
    r"""Set ``cur["dg"]`` from the quadratic in :math:`t` through ``prev``'s :math:`g`
    and :math:`g_t` and ``cur``'s :math:`g` instead of a derivative solve, when the
    Newton step with it is expected to land at :math:`|g| \le` ``tol``/2: with
    :math:`h` the step from ``prev`` in :math:`t`, the slope's relative error is
    :math:`O(h^2)` (the cubic term; at most :math:`0.1h^2` on the weight curves of the
    tests and benchmarks, taken as :math:`h^2`) plus the values' errors (about their
    solves' ``rtol``) over :math:`|h g_t|`, and the next :math:`|g|` is :math:`|g|` times
    it. Returns whether it did (else the derivative is solved for). The next point is
    evaluated at full accuracy either way, and a step that falls short is followed by
    another with the solved derivative."""
    if prev is None or not math.isfinite(prev.get("dg", math.nan)) or \
            abs(prev["g"]) >= _CURVATURE_G:
        return False
    c, cp = cur["c"], prev["c"]
    h = _logit(c) - _logit(cp)
    slope_p = prev["dg"] * cp * (1.0 - cp)
    if h == 0 or not slope_p < 0:  # g decreases along the curve near its root
        return False
    slope = 2.0 * (cur["g"] - prev["g"]) / h - slope_p
    if not slope < 0:
        return False
    err = h * h + 2.0 * (cur["rtol"] + prev["rtol"]) / abs(h * slope)
    if abs(cur["g"]) * err > 0.5 * tol:
        return False
    cur.pop("_parts", None)
    cur["dg"] = slope / (c * (1.0 - c))
    cur["interpolated"] = True
    return True


def _next_point(curve: _Curve, cur: dict, lo: float, hi: float,
                prev: dict | None = None, tol: float = 0.0
                ) -> tuple[dict | None, float, float]:
    """The safeguarded step from ``cur`` inside the bracket ``(lo, hi)`` (Notes of
    :func:`solve_ils_newton`; ``prev`` the point before, for :func:`_newton_step`): the
    evaluated next point (``None`` when the bracket has shrunk to floating-point width)
    and the bracket it leaves. With ``tol`` > 0 the slope at ``cur`` may be interpolated
    (:func:`_interpolated_slope`) instead of solved for."""
    if not (tol > 0 and _interpolated_slope(cur, prev, tol)):
        curve.add_derivative(cur)
    c, g = cur["c"], cur["g"]
    # Newton in the log-odds t = log(c / (1 - c)) (dg/dt = c(1 - c) dg/dc): optima
    # near c = 0 or 1 (BMPM) are reached without bisecting towards the end
    step = _newton_step(cur, prev)
    cn = 1.0 / (1.0 + math.exp(-max(min(math.log(c / (1.0 - c)) + step, 700.0), -700.0))) \
        if math.isfinite(step) else math.nan
    if not (math.isfinite(step) and abs(step) <= _MAX_STEP and lo < cn < hi):
        # far from the root g saturates at +-1 and Newton overshoots: take the
        # reweighting (ILS) fixed-point map c <- A sy / (A sy + B sx) instead, else bisect
        (ax, ay), (bx, by) = curve.a, curve.b
        A_, B_ = ax * cur["D"] + bx * cur["N"], ay * cur["D"] + by * cur["N"]
        den = A_ * cur["sy"] + B_ * cur["sx"]
        ct = A_ * cur["sy"] / den if den > 0 else math.nan
        if math.isfinite(ct) and lo < ct < hi:
            cn = ct
        elif not (math.isfinite(cn) and lo < cn < hi):
            cn = 0.5 * (lo + hi)
    rtol = min(max(_FAR_GAIN * g * g, _SOLVE_RTOL), _FAR_RTOL)
    nxt = curve.evaluate(cn, derivative=False, rtol=rtol)
    while nxt is None or not nxt["N"] > 0 or not math.isfinite(nxt["g"]):
        # outside the positive arc (or M(c) not definite next to an end): the
        # optimum lies between the current point and this one
        if cn > c:
            hi = cn
        else:
            lo = cn
        cn = 0.5 * (c + cn)
        if abs(cn - c) <= 4 * np.finfo(float).eps * max(c, 1e-300):
            nxt = None
            break
        nxt = curve.evaluate(cn, derivative=False, rtol=rtol)
    if nxt is not None and nxt["rtol"] > _SOLVE_RTOL and \
            abs(nxt["g"]) <= _FAR_MARGIN * nxt["rtol"]:
        # near the root: g to full accuracy before its sign and size are used
        nxt = curve.evaluate(cn, derivative=False) or nxt
    return nxt, lo, hi


@register("ils-newton", kinds=[kinds.BMPM, kinds.MPM],
          description="Newton search on the weight of iterative least squares, one Cholesky "
                      "per step (MPM, BMPM; kernel default)",
          certify_tol=1e-6, warm_start=fractional_w)
def solve_ils_newton(
    program: Program,
    *,
    tol: float = 1e-11,
    max_iter: int = 60,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: np.ndarray | None = None,
) -> Solution:
    r"""Safeguarded Newton search over the weight :math:`c` of the ILS fixed point.

    Parameters
    ----------
    program : Program
        Kind ``"socp.mpm"`` or ``"socp.bmpm"``.
    tol : float, default=1e-11
        Stop when :math:`|g(c)| \le` ``tol`` (Notes).
    max_iter : int, default=60
        Largest number of Cholesky factorisations (Newton or bisection steps).
    time_limit : float, optional
        Wall-clock limit in seconds (checked after every step).
    verbose : bool, default=False
        Print one line per step.
    callback : callable, optional
        ``callback(IntermediateResult)`` after every step (objective :math:`r(w(c))`,
        residual :math:`|g(c)|`); raise ``StopIteration`` to stop (USER_LIMIT).
    x0 : ndarray, optional
        Initial :math:`w` (:math:`w^\top d > 0`).

    Returns
    -------
    Solution
        ``values = {"v"}`` (the SOCP point), ``objective`` :math:`= 1/\kappa^*`,
        ``iterations`` = Cholesky factorisations, ``extras["c"]`` the final weight,
        ``extras["kappa"]``.

    Notes
    -----
    Solves the fractional program shared by the kinds ``"socp.mpm"`` and
    ``"socp.bmpm"`` (see :mod:`conicml.formulations.minimax`)

    .. math::

        \kappa^* = \max_{w^\top d = 1} r(w) = \frac{N(w)}{D(w)}
        = \frac{1 - a_x\sigma_x(w) - a_y\sigma_y(w)}{b_x\sigma_x(w) + b_y\sigma_y(w)}

    with one Cholesky factorisation per iteration and a handful of iterations; built
    for the kernel machines (Theorem 9), whose covariances are dense
    :math:`n \times n` matrices.

    **The one-dimensional reduction** (derived here; it is the fixed point of
    Lanckriet's iterative least squares, seed 004 eq. 3.29). Stationarity of
    :math:`r` on :math:`w^\top d = 1` reads

    .. math::

        \Big(\frac{A}{\sigma_x}\Sigma_x + \frac{B}{\sigma_y}\Sigma_y\Big) w \parallel d,
        \qquad A = a_xD + b_xN,\quad B = a_yD + b_yN,

    so every optimum lies on the curve
    :math:`w(c) = M(c)^{-1}d / (d^\top M(c)^{-1}d)`, :math:`M(c) = c\,\Sigma_x + (1-c)\Sigma_y`,
    :math:`c \in [0, 1]` (the minimisers of :math:`c\sigma_x^2 + (1-c)\sigma_y^2`: the Pareto
    curve of :math:`(\sigma_x, \sigma_y)`, convex). Along it :math:`\sigma_x` decreases,
    :math:`\sigma_y` increases, and

    .. math::

        \operatorname{sign}\frac{dr(w(c))}{dc} = \operatorname{sign} g(c),\qquad
        g(c) = \frac{A(1-c)\sigma_y - Bc\,\sigma_x}{A(1-c)\sigma_y + Bc\,\sigma_x} \in [-1, 1],

    zero exactly at the fixed point of the reweighting (:math:`c = A\sigma_y/(A\sigma_y +
    B\sigma_x)`). Where :math:`r \ge 0` the super-level sets of :math:`r` are half-planes
    :math:`(a_x + \lambda b_x)\sigma_x + (a_y + \lambda b_y)\sigma_y \le 1` with non-negative
    coefficients, which cut the convex curve in one arc: :math:`r` is unimodal on the arc
    where it is positive and :math:`g` has one root there, the global optimum (the
    fractional program is pseudo-concave). The solver finds it by Newton's method on
    :math:`g` in the log-odds :math:`t = \log(c/(1-c))` (the derivative from one more pair
    of triangular solves with the same Cholesky factor, :math:`w'(c) = -M^{-1}(\Sigma_x -
    \Sigma_y)w`; next to the root, where the quadratic through the previous point's
    value and derivative and this value gives it well enough for the last step, from
    that: :func:`_interpolated_slope`), safeguarded by a bracket that every evaluation
    shrinks (the sign of :math:`g`; a point with :math:`N \le 0` lies outside the
    positive arc, on the far side of the optimum from a positive point). Far from the
    root :math:`g` saturates at :math:`\pm 1` and Newton overshoots; a step longer than 2
    in :math:`t` is replaced by the reweighting map itself, :math:`c \leftarrow
    A\sigma_y/(A\sigma_y + B\sigma_x)` (one step of Lanckriet's iterative least squares),
    and by bisection if that leaves the bracket.

    **Cost.** One :math:`n^3/3` Cholesky of :math:`M(c)` per iteration, typically 4–7
    iterations from :math:`c = \tfrac12` (the Fisher direction). ``dinkelbach`` diagonalises
    both covariances simultaneously once (two eigendecompositions, about :math:`20n^3`) and
    then iterates in :math:`O(n)`; at :math:`n = 1000` the few Cholesky factorisations cost a
    fraction of that one diagonalisation (``benchmarks/kernel_fit_speed.py``), which is why
    this is the kernel estimators' default route. The covariances are read from the
    program's ``Sx``/``Sy`` when present (else :math:`R^\top R`). A kernel program with a
    ``"scatter"`` (:class:`~conicml.contracts.minimax.KernelScatter`) forms neither: each
    solve with :math:`M(c)` goes by the Woodbury identity through the class-centred Gram
    matrix, factored in two class blocks: the shift of the class of larger weight held,
    the other one exact at every weight through a Schur complement of that class's order,
    and conjugate gradients absorbing the held shift's change (typically one block
    factorisation in all, MPM and BMPM); the search then starts at the reweighting weight
    of :math:`w = d` (products only) instead of :math:`\tfrac12`. A program in dual
    coefficients (:class:`~conicml.contracts.minimax.GramScatter`) runs the same steps on
    representatives with the inner product of :math:`K`: no factorisation of :math:`K`;
    its search starts at the optimal weight of the program restricted to
    :math:`\min(256, n/4)` of the points and the first Krylov vectors :math:`e`,
    :math:`\Sigma_xe`, :math:`\Sigma_ye` (from 256 points on; a Galerkin restriction,
    dense of that order, formed in :math:`O(256^2n)`), close to the optimum's, so that
    the block factor made there serves the later weights with few conjugate-gradient
    steps.

    **Scope.** The regular case: :math:`\Sigma_x + \Sigma_y` numerically positive definite
    (always so for the kernel machines, whose ridge is mandatory) and :math:`\kappa^* > 0`.
    Any other program (singular covariances, :math:`\kappa^* = \infty`, an infeasible BMPM,
    a non-positive ratio at every point tried) is handed to ``dinkelbach``, which handles
    those cases; the solution's message and ``extras["delegated"]`` say so.

    **Stopping criterion.** :math:`|g(c)| \le \texttt{tol}` (a relative stationarity
    measure of the fractional program), or the bracket shrunk to floating-point width.
    **Certificate**: the solver reports the margin row and :math:`|g|`;
    :func:`conicml.solve` recomputes the program's own certificate (the KKT residuals of
    the perspective SOCP, :func:`conicml.certificates.margin.fractional_certificate`)
    at the returned point.

    **Warm start:** ``x0`` is an initial :math:`w` (any scale, :math:`w^\top d > 0`); the
    search starts at its reweighting fixed-point weight.
    """
    driver = Driver("ils-newton", tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback)
    delegate_opts = {"time_limit": time_limit, "verbose": verbose, "callback": callback,
                     "x0": x0}
    data = program.data
    d = np.asarray(data["d"], dtype=float)
    Sx = data.get("Sx")
    Sy = data.get("Sy")
    scatter = data.get("scatter")
    a_b = (tuple(float(v) for v in data["a"]), tuple(float(v) for v in data["b"]))
    if isinstance(scatter, KernelScatter) and (Sx is None or Sy is None):
        # a program in dual coefficients (GramScatter): the curve works on the
        # representative of d, with K's inner product (d itself is K d_rep); no product
        # with K kept from an earlier call (they are matched by identity)
        if hasattr(scatter, "forget"):
            scatter.forget()
        curve: _Curve = _ScatterCurve(getattr(scatter, "d_rep", d), scatter, *a_b)
    else:
        if Sx is None or Sy is None:
            Rx, Ry = np.asarray(data["Rx"], dtype=float), np.asarray(data["Ry"], dtype=float)
            Sx, Sy = Rx.T @ Rx, Ry.T @ Ry
        curve = _Curve(d, np.asarray(Sx, dtype=float), np.asarray(Sy, dtype=float), *a_b)
    if x0 is not None:
        c = _start_weight(curve, check_array("ils-newton", "x0", x0, d.shape))
    elif isinstance(curve, _ScatterCurve):
        # kernel programs (one block factorisation of order n, at the first weight, and
        # conjugate gradients slower the farther the later weights from it): the optimum
        # of the program restricted to a subset of the points, else the reweighting
        # weight of w = d (products alone; nearer the BMPM optima, c -> 1, than 1/2)
        c = _coarse_weight(scatter, a_b)
        if c is None:
            c = _start_weight(curve, curve.d)
    else:
        c = 0.5
    setup_time = driver.elapsed
    driver.start()
    first = curve.evaluate(c, derivative=False)
    if first is None:
        return _delegate(program, "Sigma_x + Sigma_y is not numerically positive definite "
                         "(not the regular case)", delegate_opts)
    if not first["N"] > 0:
        # kappa* <= 0 (infeasible BMPM) or a point outside the positive arc: try the
        # ends' neighbourhoods once before handing the program on
        first = None
        for c_try in (1e-3, 1.0 - 1e-3):
            e = curve.evaluate(c_try, derivative=False)
            if e is not None and e["N"] > 0 and math.isfinite(e["g"]):
                first = e
                break
        if first is None:
            return _delegate(program, "no point with N(w) > 0 found on the weight curve "
                             "(kappa* <= 0 or not the regular case)", delegate_opts)
    lo, hi = 0.0, 1.0
    cur, prev = first, None
    history: list[tuple[int, float, float]] = []
    reason: int = Reason.MAX_ITER
    best = first
    k = 0
    for k in range(1, max_iter + 1):
        c, g = cur["c"], cur["g"]
        if not cur["D"] > 1e-12 * (cur["sx"] + cur["sy"]):
            # a direction with zero denominator on the curve: kappa* is (numerically)
            # infinite, which dinkelbach detects and certifies
            return _delegate(program, "D(w) ~ 0 on the weight curve (kappa* numerically "
                             "infinite)", delegate_opts)
        lam_ = cur["N"] / cur["D"]
        history.append((k, lam_, abs(g)))
        if cur["N"] > 0 and (best["N"] <= 0 or lam_ >= best["N"] / best["D"]):
            best = cur
        if verbose:
            print(f"  ils-newton {k:3d}: c={c:.15g}  kappa={lam_:.15g}  |g|={abs(g):.3e}")
        if driver.converged(abs(g)):
            reason = Reason.CONVERGED
            break
        # shrink the bracket: g > 0 -> the optimum lies at larger c
        if g > 0:
            lo = max(lo, c)
        else:
            hi = min(hi, c)
        if driver.notify(k, abs(g), objective=lam_):
            reason = Reason.CALLBACK
            break
        if driver.out_of_time():
            reason = Reason.TIME_LIMIT
            break
        if hi - lo <= 4 * np.finfo(float).eps * max(hi, 1e-300):
            reason = 4
            break
        if k == max_iter:
            break
        nxt, lo, hi = _next_point(curve, cur, lo, hi, prev, tol)
        if nxt is None:
            reason = 4
            break
        prev, cur = cur, nxt
    last = cur if cur["N"] > 0 else best
    w = last["w"]
    solve_time = driver.elapsed
    status = STATUS_MAP[reason]
    sx, sy = last["sx"], last["sy"]  # of this w (evaluate)
    (ax, ay), (bx, by) = curve.a, curve.b
    N, D = 1 - ax * sx - ay * sy, bx * sx + by * sy
    kappa = N / D if D > 0 else math.inf
    v = w / N
    objective = 1.0 / kappa
    # the solver's own report (conicml.solve recomputes the program's certificate,
    # fractional_certificate, beside it): the margin row of the perspective point and
    # the stationarity |g(c)| on the weight curve; no gap estimate of its own
    row = curve.dot(curve.d, v) - ax * sx / N - ay * sy / N
    return Solution(
        status=status, solver="ils-newton", objective=objective, values={"v": v},
        iterations=len(history), setup_time=setup_time, solve_time=solve_time,
        residuals=Residuals(primal=abs(row - 1.0), dual=abs(float(cur["g"])), gap=math.nan,
                            source="solver"),
        message=TERMINATION_MESSAGES[int(reason)], history=tuple(history),
        extras={"c": float(cur["c"]), "kappa": kappa, "g": float(cur["g"])},
    )
