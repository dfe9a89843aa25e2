r"""``dinkelbach``: the parametric method with iterative least squares for MPM and BMPM.

Dinkelbach 1967 with Lanckriet's iterative least squares (seed 004 Sec. 3.2.6,
eqs. 3.28–3.29, errata S004-A2) on kinds ``"socp.mpm"`` and ``"socp.bmpm"``, from the
moments alone (one :math:`O(n^3)` simultaneous diagonalisation, then :math:`O(n)`
steps). It stops when :math:`F(\lambda_k) = 1 - P_{\lambda_k}(w_{k+1}) \le` ``tol``;
the algorithm and the certificate (shared with ``rosen``) are in the Notes of
:func:`solve_dinkelbach`.
"""

from __future__ import annotations

import numpy as np

from .. import kinds
from ..exceptions import OptionError, SolverError
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
from ._warm import fractional_w

__all__ = ["TERMINATION_MESSAGES", "solve_dinkelbach"]

TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: F(lambda) = 1 - P(lambda) <= tol", {
        Reason.MAX_ITER: "maximum number of outer iterations reached (max_iter)",
        4: "infeasible: max N(w) <= 0, so kappa* <= 0 (beta0 >= beta0_max for BMPM)",
        5: INFINITE_KAPPA_MESSAGE,
        6: "stalled: lambda stopped increasing before F(lambda) <= tol (inner accuracy limit)",
        7: NEAR_INFINITE_KAPPA_MESSAGE,
    })

STATUS_MAP: dict[int, Status] = status_table({
    4: Status.INFEASIBLE, 5: Status.OPTIMAL, 6: Status.OPTIMAL_INACCURATE,
    7: Status.OPTIMAL_INACCURATE})

@register("dinkelbach", kinds=[kinds.BMPM, kinds.MPM],
          description="Dinkelbach parametric method + iterative least squares (MPM, BMPM)",
          warm_start=fractional_w,
          certify_tol=1e-4)  # default tol 1e-10; ~1e-6 ill-conditioned
def solve_dinkelbach(
    program: Program,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    inner_tol: float = 1e-13,
    inner_max_iter: int = 10_000,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: np.ndarray | None = None,
) -> Solution:
    r"""Parametric (Dinkelbach) method with iterative least squares for MPM / BMPM.

    Parameters
    ----------
    program : Program
        Kind ``"socp.mpm"`` or ``"socp.bmpm"``.
    tol : float, default=1e-10
        Outer stop: :math:`F(\lambda) = 1 - P_\lambda(w) \le \texttt{tol}`.
    max_iter : int, default=100
        Outer iterations.
    inner_tol : float, default=1e-13
        Least-squares stop :math:`\|\Delta w\| \le \texttt{inner\_tol}\|w\|`.
    inner_max_iter : int, default=10000
        Least-squares iterations per outer step.
    time_limit : float, optional
    verbose : bool, default=False
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (``objective`` is
        :math:`\lambda_k`, ``residual`` :math:`F(\lambda_k)`);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).
    x0 : ndarray, optional
        Initial :math:`w`.

    Returns
    -------
    Solution
        ``values = {"v"}`` (the SOCP point), ``objective`` :math:`= 1/\kappa^*`,
        ``iterations`` = outer steps, ``extras["inner_solves"]`` = least-squares
        steps, certificate in ``residuals`` (Notes).

    Notes
    -----
    Solves the fractional program shared by the kinds ``"socp.mpm"`` and
    ``"socp.bmpm"`` (see :mod:`conicml.formulations.minimax`)

    .. math::

        \kappa^* = \max_{w^\top d = 1} r(w) = \frac{N(w)}{D(w)}
        = \frac{1 - a_x\sigma_x(w) - a_y\sigma_y(w)}{b_x\sigma_x(w) + b_y\sigma_y(w)}

    directly from the moments in ``program.data``, without a conic solver.

    **Algorithm** (seed 004 Sec. 3.2.6, eqs. 3.28–3.29, errata S004-A2; Dinkelbach 1967).
    Starting from :math:`\lambda_0 = \max(r(w_0), 0)`, repeat

    1. :math:`w_{k+1} = \arg\min_{w^\top d = 1} P_{\lambda_k}(w)`,
       :math:`P_\lambda(w) = (a_x + \lambda b_x)\sigma_x(w) + (a_y + \lambda b_y)\sigma_y(w)`
       (eq. 3.28; for MPM, :math:`\lambda = \kappa_0 = 1`, this is Lanckriet's
       problem);
    2. :math:`\lambda_{k+1} = r(w_{k+1})`,

    which converges superlinearly to :math:`\kappa^*`. Step 1 is solved by
    **iterative least squares** (eq. 3.29: :math:`\min_{\eta,\xi>0} \eta +
    c_x^2\sigma_x^2/\eta + \xi + c_y^2\sigma_y^2/\xi` with alternating updates),
    i.e. the reweighted problem

    .. math::

        w \leftarrow \arg\min_{w^\top d = 1} w^\top G w,\quad
        G = \frac{c_x}{\sigma_x(w)}\Sigma_x + \frac{c_y}{\sigma_y(w)}\Sigma_y,
        \qquad w = G^{-1}d / (d^\top G^{-1} d),

    a majorise–minimise scheme that decreases :math:`P_\lambda` monotonically.
    Implementation detail (not in the thesis): :math:`\Sigma_x` and
    :math:`\Sigma_y` are diagonalised simultaneously once
    (:math:`V^\top(\Sigma_x+\Sigma_y)V = I`, :math:`V^\top\Sigma_xV = \Lambda`), after
    which every least-squares step is an :math:`O(n)` diagonal solve; the whole
    method costs one :math:`O(n^3)` eigendecomposition.

    **Stopping criterion.** Outer: :math:`F(\lambda_k) = 1 - P_{\lambda_k}(w_{k+1})
    \le \texttt{tol}` (:math:`F(\lambda) = \max_w N - \lambda D \ge 0`, zero exactly
    at :math:`\lambda = \kappa^*`). Inner: :math:`\|w_{new} - w\| \le
    \texttt{inner\_tol}\,\|w\|`. If :math:`F(0) \le 0` then :math:`\kappa^* \le 0`:
    for BMPM :math:`\beta_0 \ge \beta_{0m}`, reported as INFEASIBLE (decode: α = 0).

    **Certificate** (also used by ``rosen``): at the returned :math:`\lambda = r(w)`
    one more least-squares solve gives :math:`P(\lambda) = \min_{w^\top d=1}
    P_\lambda(w)`; ``Residuals.dual`` :math:`= |P(\kappa_\alpha) - 1|` (zero at the
    optimum, errata S004-A3: :math:`\ell^* = 1`), ``Residuals.gap``
    :math:`= (1 - P(\lambda))/D_{lb} \ge \kappa^* - \lambda` with
    :math:`D_{lb} = b_x/\sqrt{d^\top\Sigma_x^{-1}d} + b_y/\sqrt{d^\top\Sigma_y^{-1}d}
    \le \min_{w^\top d = 1} D(w)` (a certified bound on the error in κ), and
    ``Residuals.primal`` :math:`= |w^\top d - 1|`. The objective is :math:`1/\lambda`,
    the SOCP's optimal value.

    **Warm-start:** ``x0`` is an initial :math:`w` (any scale, :math:`w^\top d > 0`).
    """
    driver = Driver("dinkelbach", tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback,
                    legacy=lambda r: (r.iteration, r.objective, r.residual))
    fp = FractionalProgram(program.data)
    V, _, dt = fp.basis()
    setup_time = driver.elapsed
    driver.start()
    history: list[tuple[int, float, float]] = []
    if fp.infinite_ratio():
        return finish("dinkelbach", fp, fp.infinite_direction(), 5, 0, 0, setup_time,
                      driver.elapsed, history, TERMINATION_MESSAGES, STATUS_MAP)
    if x0 is not None:
        x0 = check_array("dinkelbach", "x0", x0, fp.d.shape)
        if not float(fp.d @ x0) > 0:
            raise OptionError(f"x0 must be a vector of length {fp.d.size} with x0 @ d > 0")
        z = fp.to_z(x0)
    else:
        z = dt / float(dt @ dt)
    lam_ = max(fp.ratio(V @ z), 0.0)
    inner = 0
    reason: int = Reason.MAX_ITER
    w = None
    for k in range(1, max_iter + 1):
        z, P, its = fp.min_weighted(fp.a[0] + lam_ * fp.b[0], fp.a[1] + lam_ * fp.b[1], z,
                                    tol=inner_tol, max_iter=inner_max_iter)
        inner += its
        F = 1.0 - P
        w = V @ z
        if lam_ == 0.0 and F <= 0.0:
            reason = 4
            break
        lam_new = fp.ratio(w)
        history.append((k, lam_new, F))
        if fp.parts(w)[1] <= 1e-10 * float(np.linalg.norm(z)):
            reason = 7  # D(w) ~ 0 at w'd = 1: kappa* is infinite (zero-variance direction)
            break
        if verbose:
            print(f"  dinkelbach {k:3d}: lambda={lam_new:.15g}  F={F:.3e}  ils={its}")
        if driver.converged(F):
            reason = Reason.CONVERGED
            break
        if driver.notify(k, F, objective=lam_new):
            reason = Reason.CALLBACK
            break
        if driver.out_of_time():
            reason = Reason.TIME_LIMIT
            break
        if lam_new <= lam_:  # no progress possible at this inner accuracy
            reason = 6
            break
        lam_ = lam_new
    if w is None:
        raise SolverError("dinkelbach made no iteration")
    return finish("dinkelbach", fp, w, int(reason), len(history), inner, setup_time,
                  driver.elapsed, history, TERMINATION_MESSAGES, STATUS_MAP)
