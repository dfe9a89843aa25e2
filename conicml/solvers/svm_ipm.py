r"""``svm-ipm``: an interior-point method for the SVM dual with a low-rank :math:`Q`.

For the linear kernel :math:`Q = ZZ^\top` with :math:`Z = \mathrm{diag}(y)X` of rank
:math:`d \ll n`. Each Newton system :math:`(D + ZZ^\top)\Delta = r` (:math:`D` diagonal)
is solved by the Sherman-Morrison-Woodbury formula with one :math:`d\times d` Cholesky
factor, in :math:`O(nd^2)` (Ferris & Munson, SIAM J. Optim. 13, 2002; Gertz & Wright,
ACM TOMS 29, 2003, their SVM module). The number of iterations barely depends on C,
where SMO and coordinate descent need more updates the larger C is on overlapping
classes. The algorithm and its stopping rule are in the Notes of :func:`solve_svm_ipm`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import scipy.linalg

from .. import kinds
from .._utils.threads import one_blas_thread
from ..certificates.kkt import bias_from_kkt
from ..exceptions import OptionError, SolverError
from ..kernels import psd_factor
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._options import check_common
from ._svm_data import check_svm_arrays

__all__ = ["solve_svm_ipm"]

#: Fraction of the largest feasible step taken (keeps the iterates interior).
_STEP = 0.99


def _data(program: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Z, y, c)`` of a soft-margin SVM dual: :math:`Z = \\mathrm{diag}(y)X` (linear
    kernel) or :math:`\\mathrm{diag}(y)L` with the kernel factor :math:`K = LL^\\top`."""
    if program.kind != kinds.SVM_DUAL:
        raise SolverError(f"svm-ipm: accepts programs of kind {kinds.SVM_DUAL!r}, "
                          f"got {program.kind!r}")
    data = program.data
    for key in ("X", "y", "c", "kernel"):
        if key not in data:
            raise SolverError(f"svm-ipm: program data has no {key!r}")
    c = np.asarray(data["c"], dtype=np.float64)
    if data.get("hard", False) or np.any(np.isinf(c)):
        raise SolverError("svm-ipm: needs finite costs (soft margin); for the hard margin "
                          "use a generic solver such as 'clarabel'")
    X = data["X"]
    if hasattr(X, "toarray"):
        X = X.toarray()
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(data["y"], dtype=np.float64)
    check_svm_arrays("svm-ipm", X, y, c)
    if getattr(data["kernel"], "name", None) != "linear":
        # a kernel SVM on the rows of a factor K = L L' (O(n^3): for kernels, use smo)
        X = psd_factor(data["kernel"].gram(X), data.get("factor", "auto"))
    return y[:, None] * X, y, c


class _Newton:
    r"""Solves :math:`(D + ZZ^\top)\Delta\alpha + y\,\Delta b = r`,
    :math:`y^\top\Delta\alpha = t` by Sherman-Morrison-Woodbury with one factor of
    :math:`I + Z^\top D^{-1}Z`, and the bias by the Schur complement of the border."""

    def __init__(self, Z: np.ndarray, y: np.ndarray, D: np.ndarray) -> None:
        self.Z, self.Dinv = Z, 1.0 / D
        S = Z.T @ (self.Dinv[:, None] * Z)
        S[np.diag_indices_from(S)] += 1.0
        self.factor = scipy.linalg.cho_factor(S, lower=True, check_finite=False)
        self.My = self.apply(y)
        self.yMy = float(y @ self.My)

    def apply(self, v: np.ndarray) -> np.ndarray:
        """:math:`(D + ZZ^\\top)^{-1}v`."""
        u = self.Dinv * v
        z = scipy.linalg.cho_solve(self.factor, self.Z.T @ u, check_finite=False)
        return u - self.Dinv * (self.Z @ z)

    def solve(self, y: np.ndarray, r: np.ndarray, t: float) -> tuple[np.ndarray, float]:
        Mr = self.apply(r)
        db = (float(y @ Mr) - t) / self.yMy
        return Mr - db * self.My, db


def _gap(Z: np.ndarray, y: np.ndarray, c: np.ndarray, alpha: np.ndarray, accuracy: float
         ) -> tuple[np.ndarray, float, float, float, float]:
    r"""``(alpha, b, P, D, gap)`` as the program's certificate reads the point: the bias
    from the KKT conditions, :math:`P - D` relative to :math:`\max(1, |P|)`."""
    a = np.clip(alpha, 0.0, c)
    u = Z.T @ a  # w (linear kernel)
    g = y * (Z @ u)  # K (a o y)
    b = bias_from_kkt(a, y, c, y - g, accuracy)  # the score -y_i G_i = y_i - g_i
    quad = float(u @ u)
    P = 0.5 * quad + float(c @ np.maximum(0.0, 1.0 - y * (g + b)))
    D = float(a.sum()) - 0.5 * quad
    return a, b, P, D, max(P - D, 0.0) / max(1.0, abs(P))


@register("svm-ipm", kinds=[kinds.SVM_DUAL], specialized=True, requires=("numpy",),
          compare_options={"tol": 1e-9}, certify_tol=1e-3)
def solve_svm_ipm(program, *, tol: float = 1e-6, max_iter: int = 100,
                  time_limit: float | None = None, verbose: bool = False) -> Solution:
    r"""Primal-dual interior-point method for the SVM dual, :math:`O(nd^2)` per iteration.

    Parameters
    ----------
    program : Program
        A soft-margin SVM dual, kind ``"qp.svm.dual"``
        (:func:`conicml.formulations.svm.soft_margin` with ``form="dual"``; per-sample
        costs :math:`c_i`). With ``kernel="linear"`` the work is :math:`O(nd^2)` per
        iteration; another kernel is solved on the rows of its factor :math:`K = LL^\top`
        (:math:`O(n^3)`: for kernels, ``smo`` is the solver of choice).
    tol : float, default=1e-6
        Stop when the relative duality gap :math:`(P - D)/\max(1, |P|)` of the point, as
        the program's certificate computes it, is :math:`\le` ``tol``.
    max_iter : int, default=100
        Largest number of interior-point iterations.
    time_limit : float, optional
        Wall-clock limit in seconds (checked every iteration).
    verbose : bool, default=False
        Print one line per iteration.

    Returns
    -------
    Solution
        ``values["alpha"]``, ``objective`` the dual value
        :math:`\mathbf 1^\top\alpha - \tfrac12\alpha^\top Q\alpha`; ``extras`` holds ``b``,
        ``primal_objective``, ``dual_objective`` and ``mu`` (the last complementarity);
        ``OPTIMAL`` when the gap is :math:`\le` ``tol``, ``USER_LIMIT`` at ``max_iter`` /
        ``time_limit``, ``NUMERICAL_ERROR`` when a Newton system cannot be factored.

    Notes
    -----
    The dual :math:`\min_\alpha \tfrac12\alpha^\top Q\alpha - \mathbf 1^\top\alpha` over
    :math:`y^\top\alpha = 0`, :math:`0 \le \alpha \le c` has the KKT conditions

    .. math::

        Q\alpha - \mathbf 1 + b\,y - \xi + \eta = 0,\quad y^\top\alpha = 0,\quad
        \alpha\circ\xi = 0,\quad (c - \alpha)\circ\eta = 0,\quad \xi, \eta \ge 0,

    with :math:`b` the bias and :math:`\eta_i` the slack of sample :math:`i`. Mehrotra's
    predictor-corrector method (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
    Alg. 16.4, here for the bounded QP) perturbs the complementarity to :math:`\sigma\mu`;
    eliminating :math:`\Delta\xi, \Delta\eta` leaves
    :math:`(Q + D)\Delta\alpha + y\Delta b = r`, :math:`y^\top\Delta\alpha = -y^\top\alpha`
    with :math:`D = \xi/\alpha + \eta/(c - \alpha)`, solved with one factor of
    :math:`I + Z^\top D^{-1}Z` per iteration for the predictor and the corrector. The
    start :math:`\alpha = c/2` with :math:`\xi, \eta` from the sign of the gradient plus one
    is interior with a zero dual residual. Each iterate is read as the certificate reads it
    (clipped to the box, the bias from the KKT conditions of its free multipliers) and the
    method stops at the first whose relative gap is :math:`\le` ``tol``.
    """
    with one_blas_thread():
        return _solve(program, tol, max_iter, time_limit, verbose)


def _solve(program: Any, tol: float, max_iter: int, time_limit: float | None,
           verbose: bool) -> Solution:
    """The body of :func:`solve_svm_ipm`."""
    t0 = time.perf_counter()
    check_common("svm-ipm", tol, max_iter, time_limit)
    if not isinstance(verbose, (bool, np.bool_)):
        raise OptionError(f"svm-ipm: verbose must be True or False, got {verbose!r}")
    Z, y, c = _data(program)
    n = y.size
    alpha = 0.5 * c
    s = c - alpha
    grad = Z @ (Z.T @ alpha) - 1.0
    xi, eta, b = np.maximum(grad, 0.0) + 1.0, np.maximum(-grad, 0.0) + 1.0, 0.0
    setup_time = time.perf_counter() - t0
    t_solve = time.perf_counter()
    status, message, it = None, "", 0
    best = _gap(Z, y, c, alpha, 0.0)
    while status is None:
        if best[-1] <= tol:
            status, message = Status.OPTIMAL, f"relative gap {best[-1]:.3g} <= tol {tol:g}"
            break
        if it >= max_iter:
            status, message = Status.USER_LIMIT, f"max_iter = {max_iter} iterations reached"
            break
        if time_limit is not None and time.perf_counter() - t_solve >= time_limit:
            status, message = Status.USER_LIMIT, f"time_limit = {time_limit:g} s reached"
            break
        it += 1
        r_d = grad + b * y - xi + eta
        r_p = float(y @ alpha)
        mu = (float(alpha @ xi) + float(s @ eta)) / (2 * n)
        try:
            newton = _Newton(Z, y, xi / alpha + eta / s)
        except (np.linalg.LinAlgError, ValueError, FloatingPointError):
            status, message = Status.NUMERICAL_ERROR, "singular Newton system"
            break

        def direction(t1, t2):
            da, db = newton.solve(y, -r_d + t1 / alpha - t2 / s, -r_p)
            return da, db, (t1 - xi * da) / alpha, (t2 + eta * da) / s

        da, db, dxi, deta = direction(-alpha * xi, -s * eta)
        step = _step_length(alpha, s, xi, eta, da, dxi, deta)
        mu_aff = (float((alpha + step * da) @ (xi + step * dxi))
                  + float((s - step * da) @ (eta + step * deta))) / (2 * n)
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        da, db, dxi, deta = direction(sigma * mu - alpha * xi - da * dxi,
                                      sigma * mu - s * eta + da * deta)
        step = _STEP * _step_length(alpha, s, xi, eta, da, dxi, deta, 1.0 / _STEP)
        alpha, s = alpha + step * da, s - step * da
        s = np.maximum(s, np.finfo(float).tiny)  # round-off in c - alpha near the bound
        xi, eta, b = xi + step * dxi, eta + step * deta, b + step * db
        grad = Z @ (Z.T @ alpha) - 1.0
        accuracy = abs(float(y @ alpha))
        cand = _gap(Z, y, c, alpha, accuracy)
        if cand[-1] < best[-1]:
            best = cand
        if verbose:
            print(f"svm-ipm: {it:3d}  mu {mu:.3e}  sigma {sigma:.2e}  step {step:.3f}  "
                  f"y'alpha {r_p: .2e}  gap {cand[-1]:.3e}")
    a, b_cert, P, D, gap = best
    if status is not Status.OPTIMAL:
        message += f"; relative gap {gap:.3g} > tol {tol:g}"
    extras = {"b": b_cert, "primal_objective": P, "dual_objective": D,
              "mu": (float(alpha @ xi) + float(s @ eta)) / (2 * n) if n else 0.0}
    return Solution(status=status, solver="svm-ipm", objective=D, values={"alpha": a},
                    iterations=it, setup_time=setup_time,
                    solve_time=time.perf_counter() - t_solve,
                    residuals=Residuals(primal=abs(float(y @ a)) / float(c.max()), dual=gap,
                                        gap=gap, source="solver"),
                    message=message, extras=extras)


def _step_length(alpha, s, xi, eta, da, dxi, deta, cap: float = 1.0) -> float:
    """Largest step in ``[0, cap]`` keeping ``alpha, c - alpha, xi, eta`` nonnegative."""
    step = cap
    for v, dv in ((alpha, da), (s, -da), (xi, dxi), (eta, deta)):
        neg = dv < 0
        if neg.any():
            step = min(step, float(np.min(-v[neg] / dv[neg])))
    return max(step, 0.0) if math.isfinite(step) else 0.0
