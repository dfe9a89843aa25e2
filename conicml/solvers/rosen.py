r"""``rosen``: Rosen gradient projection for the BMPM (and MPM) fractional program.

Rosen 1960 as in seed 004 Sec. 3.2.5 (errata S004-A1) on kinds ``"socp.bmpm"`` and
``"socp.mpm"``, from the moments alone: the reference implementation of the thesis's
method, verified against the generic backends (``dinkelbach`` and Clarabel are the faster
routes). It stops when the ratio changes by at most ``tol`` relative on three
consecutive iterations or the projected step is below ``tol``; the algorithm and the
certificate are in the Notes of :func:`solve_rosen`.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kinds
from ..exceptions import OptionError
from ..program import Program
from ..registry import register
from ..solution import Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._fractional import (
    INFINITE_KAPPA_MESSAGE,
    NEAR_INFINITE_KAPPA_MESSAGE,
    FractionalProgram,
    finish,
)
from ._options import check_array

__all__ = ["TERMINATION_MESSAGES", "solve_rosen"]

TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: relative change of r(w) <= tol on 3 consecutive iterations", {
        4: "infeasible: max N(w) <= 0, so kappa* <= 0 (beta0 >= beta0_max for BMPM)",
        5: INFINITE_KAPPA_MESSAGE,
        6: "converged: projected gradient ||P grad r|| ||w|| <= tol",
        7: "line search failed: no ascent along the projected gradient (numerical limit)",
        8: NEAR_INFINITE_KAPPA_MESSAGE,
    })

STATUS_MAP: dict[int, Status] = status_table({
    4: Status.INFEASIBLE, 5: Status.OPTIMAL, 6: Status.OPTIMAL,
    7: Status.OPTIMAL_INACCURATE, 8: Status.OPTIMAL_INACCURATE})


def _value_grad(fp: FractionalProgram, w: np.ndarray) -> tuple[float, np.ndarray]:
    Sxw, Syw = fp.Sx @ w, fp.Sy @ w
    sx = math.sqrt(max(float(w @ Sxw), 0.0))
    sy = math.sqrt(max(float(w @ Syw), 0.0))
    (ax, ay), (bx, by) = fp.a, fp.b
    gx = Sxw / sx if sx > 0 else np.zeros_like(w)
    gy = Syw / sy if sy > 0 else np.zeros_like(w)
    num = 1.0 - ax * sx - ay * sy
    den = bx * sx + by * sy
    gnum = -ax * gx - ay * gy
    gden = bx * gx + by * gy
    return num / den, (gnum * den - num * gden) / (den * den)


@register("rosen", kinds=[kinds.BMPM, kinds.MPM],
          description="Rosen gradient projection for the BMPM/MPM fractional program",
          certify_tol=1e-4)  # default tol 1e-12; ~1e-6 ill-conditioned
def solve_rosen(
    program: Program,
    *,
    tol: float = 1e-12,
    max_iter: int = 20_000,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: np.ndarray | None = None,
) -> Solution:
    r"""Rosen gradient projection for the (robust) BMPM / MPM fractional program.

    Parameters
    ----------
    program : Program
        Kind ``"socp.bmpm"`` or ``"socp.mpm"``.
    tol : float, default=1e-12
        Relative change of :math:`r` (see Notes).
    max_iter : int, default=20000
    time_limit : float, optional
    verbose : bool, default=False
        One line every 100 iterations.
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (``objective`` is the ratio
        :math:`r(w_k)`, ``values["w"]``);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    x0 : ndarray, optional
        Initial :math:`w`.

    Returns
    -------
    Solution
        ``values = {"v"}``, ``objective`` :math:`= 1/r(w)`, ``iterations``,
        ``extras["inner_solves"]`` (least-squares steps of the start and the
        certificate), ``extras["line_search_evals"]``.

    Notes
    -----
    Solves the ratio of the kinds ``"socp.bmpm"`` / ``"socp.mpm"`` (module
    :mod:`conicml.formulations.minimax`)

    .. math::

        \kappa^* = \max_{w^\top d = 1} r(w) = \frac{1 - a_x\sigma_x(w) - a_y\sigma_y(w)}
                                                   {b_x\sigma_x(w) + b_y\sigma_y(w)}

    (BMPM: eqs. 3.13–3.14; pseudo-concave by Theorem 3, so the local maximum the
    method finds is global) directly from the moments, without a conic solver.

    **Algorithm** (seed 004 Sec. 3.2.5 / errata S004-A1; Rosen 1960, Bertsekas,
    *Nonlinear Programming*, §2.3). The only constraint is the equality
    :math:`w^\top d = 1`, so Rosen's method is projected gradient ascent on an
    affine set: with :math:`P = I - dd^\top/d^\top d`,

    .. math::

        \nabla r = \frac{\nabla N\, D - N\,\nabla D}{D^2},\quad
        \nabla\sigma_x = \Sigma_x w/\sigma_x,\qquad
        s_k = P\nabla r(w_k),\qquad w_{k+1} = w_k + t_k s_k,

    with a Barzilai–Borwein trial step :math:`t = |\Delta w^\top\Delta w /
    \Delta w^\top\Delta s|` (the thesis gives no step rule) and Armijo
    backtracking :math:`r(w + ts) \ge r(w) + 10^{-4} t\|s\|^2`. The start is the
    Fisher direction :math:`(\Sigma_x + \Sigma_y)^{-1}d`, or — if the numerator is
    not positive there — the maximiser of the numerator (one least-squares solve);
    if even that has :math:`N \le 0`, :math:`\kappa^* \le 0` and the program is
    reported INFEASIBLE (BMPM: :math:`\beta_0 \ge \beta_{0m}`, decode gives α = 0).

    **Stopping criterion** (:math:`\|P\nabla r\|` stalls far above
    machine precision): :math:`|r_{k+1} - r_k| \le \texttt{tol}\,(1 + |r_k|)` on
    three consecutive iterations, or :math:`\|s_k\|\,\|w_k\| \le \texttt{tol}`.

    **Certificate:** as for ``dinkelbach`` (one iterative-least-squares solve of
    the parametric problem at the returned :math:`\lambda = r(w)`):
    ``Residuals.dual`` :math:`= |P(\kappa_\alpha) - 1|`, ``Residuals.gap`` a
    certified upper bound on :math:`\kappa^* - r(w)`. Objective :math:`1/r(w)`.

    **Warm-start:** ``x0`` is an initial :math:`w` with :math:`w^\top d > 0`.
    """
    driver = Driver("rosen", tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback,
                    legacy=lambda r: (r.iteration, r.objective, r.values["w"]))
    fp = FractionalProgram(program.data)
    d = fp.d
    dd = float(d @ d)
    setup_time = driver.elapsed
    driver.start()
    inner = 0
    history: list[tuple[int, float, float]] = []

    def done(w: np.ndarray | None, reason: int, k: int, evals: int) -> Solution:
        return finish("rosen", fp, w, int(reason), k, inner, setup_time,
                      driver.elapsed, history, TERMINATION_MESSAGES, STATUS_MAP,
                      {"line_search_evals": evals})

    if fp.infinite_ratio():  # exact test on the eigendecomposition (one O(n^3) step)
        return done(fp.infinite_direction(), 5, 0, 0)
    if x0 is not None:
        w = check_array("rosen", "x0", x0, d.shape)
        if not float(d @ w) > 0:
            raise OptionError(f"x0 must be a vector of length {d.size} with x0 @ d > 0")
    else:
        w = np.linalg.lstsq(fp.Sx + fp.Sy, d, rcond=None)[0]
    w = w / float(d @ w)
    num, _ = fp.parts(w)
    if num <= 0:  # maximise the numerator: min a_x sx + a_y sy (one least-squares solve)
        V, _, _ = fp.basis()
        z, P, its = fp.min_weighted(fp.a[0], fp.a[1])
        inner += its
        if 1.0 - P <= 0:
            return done(None, 4, 0, 0)
        w = V @ z
        w = w / float(d @ w)
    # the iteration runs in the coordinates z of the simultaneous diagonalisation,
    # w = V z with V^T (Sigma_x + Sigma_y) V = I: the same gradient projection in the
    # metric of Sigma_x + Sigma_y (a preconditioner). In the raw coordinates the ratio's
    # Hessian inherits the covariances' condition number and the steps stall far from
    # the optimum, which the change-of-r rule would read as convergence
    V, _, _ = fp.basis()
    w_user = w
    w = fp.to_z(w)  # z; d^T w = dt^T z (V^T (Sx + Sy) projects on the covariances' range)
    d = V.T @ fp.d
    dd = float(d @ d)
    w = w / float(d @ w) if float(d @ w) > 0 else d / dd
    if not fp.ratio(V @ w) >= fp.ratio(w_user) - 1e-12 * (1.0 + abs(fp.ratio(w_user))):
        w = d / dd

    def _value_grad_z(z: np.ndarray) -> tuple[float, np.ndarray]:
        val, grad = _value_grad(fp, V @ z)
        return val, V.T @ grad

    r, g = _value_grad_z(w)
    s = g - d * (float(d @ g) / dd)
    t = 1.0 / max(float(np.linalg.norm(s)), 1e-300) * 1e-2 * float(np.linalg.norm(w))
    small = 0
    evals = 0
    reason: int = Reason.MAX_ITER
    k = 0
    for k in range(1, max_iter + 1):
        if float(np.linalg.norm(s)) * float(np.linalg.norm(w)) <= tol:
            reason = 6
            break
        ss = float(s @ s)
        accepted = False
        for _ in range(60):
            wn = w + t * s
            wn = wn / float(d @ wn)  # stays on the affine set; guards round-off
            rn, gn = _value_grad_z(wn)
            evals += 1
            if rn >= r + 1e-4 * t * ss:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            reason = 7
            break
        _, den = fp.parts(V @ wn)
        if den <= 1e-10 * float(np.linalg.norm(wn)):  # ||z|| = sqrt(w'(Sx + Sy)w)
            w, r = wn, rn
            reason = 8  # D(w) ~ 0 at w'd = 1: kappa* is infinite (zero-variance direction)
            break
        sn = gn - d * (float(d @ gn) / dd)
        dw, ds = wn - w, sn - s
        change = abs(rn - r)
        w, r, s = wn, rn, sn
        history.append((k, r, float(np.linalg.norm(s))))
        denom = float(dw @ ds)
        t = abs(float(dw @ dw) / denom) if denom != 0 else 2.0 * t
        if verbose and k % 100 == 0:
            print(f"  rosen {k:6d}: r={r:.15g}  |Pg|={np.linalg.norm(s):.3e}  t={t:.3e}")
        small = small + 1 if change <= tol * (1.0 + abs(r)) else 0
        if small >= 3:
            reason = Reason.CONVERGED
            break
        if driver.listening and driver.notify(k, objective=r, values={"w": V @ w}):
            reason = Reason.CALLBACK
            break
        if driver.out_of_time():
            reason = Reason.TIME_LIMIT
            break
    if r <= 0 and reason != 8:
        return done(None, 4, k, evals)
    return done(V @ w, reason, k, evals)
