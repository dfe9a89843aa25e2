r"""Direct solvers of the kernel Fisher kinds (seed 001 ch. 4): no iteration, one Cholesky.

``kfda-closed-form`` (kind ``qp.kfda``): Algorithm 3 of the thesis, rescaled to the QP
(4.15)–(4.17). ``kqpfs-cholesky`` (kind ``qp.kqpfs``): the linear solve (4.8) by Cholesky
(Algorithm 4).

Both report a residual certificate (the program's :meth:`~conicml.Program.certify`
recomputes it): the relative residual of the linear system solved.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.linalg as sla

from .._utils.threads import one_blas_thread
from ..contracts.kfda import KernelFisher
from ..kinds import KFDA, KQPFS
from ..registry import register
from ..solution import Residuals, Solution, Status

__all__ = ["solve_kfda_closed_form", "solve_kqpfs_cholesky"]


def _cholesky_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    # one BLAS thread: OpenBLAS's threaded Cholesky is several times slower than the
    # serial one when the cores are shared (as in the kernel minimax formulations)
    with one_blas_thread():
        return sla.cho_solve(sla.cho_factor(A, lower=True, check_finite=False), b,
                             check_finite=False)


def _relative_residual(A: np.ndarray, x: np.ndarray, b: np.ndarray) -> float:
    r = A @ x - b
    return float(np.abs(r).max()) / max(float(np.abs(b).max()), 1e-300)


@register("kfda-closed-form", kinds=[KFDA], certify_tol=1e-8)
def solve_kfda_closed_form(program: Any) -> Solution:
    r"""Closed-form KFDA (Algorithm 3) rescaled to the QP (4.15)-(4.17).

    Notes
    -----
    :math:`a = W_\mu^{-1} d` with :math:`W_\mu = \sum_\pm K_\pm(I - \tfrac1{N_\pm}\mathbf 1
    \mathbf 1^\top)K_\pm^\top + \mu I` and :math:`d = m_+ - m_-` (the text's
    :math:`W^{-1}(B_- - B_+)` has the opposite sign; Algorithm 3's sign is used), rescaled
    to the QP (4.15)–(4.17): :math:`\alpha = 2a/(d^\top a)`,
    :math:`b = -(m_+ + m_-)^\top\alpha/2`, :math:`\xi = K\alpha + b - y`. Objective
    :math:`\|\xi\|^2 + \mu\|\alpha\|^2`.
    """
    f: KernelFisher = program.data["fisher"]
    start = time.perf_counter()
    m_pos, m_neg = f.class_means()
    d = m_pos - m_neg
    W = f.within_scatter()
    try:
        a = _cholesky_solve(W, d)
    except (np.linalg.LinAlgError, ValueError) as exc:
        return Solution(status=Status.SOLVER_ERROR, solver="kfda-closed-form",
                        solve_time=time.perf_counter() - start,
                        message=f"Cholesky of W_mu failed ({exc}): raise mu")
    alpha = 2.0 * a / float(d @ a)
    b = -0.5 * float((m_pos + m_neg) @ alpha)
    xi = f.gram @ alpha + b - f.y
    objective = float(xi @ xi + f.mu * alpha @ alpha)
    return Solution(status=Status.OPTIMAL, solver="kfda-closed-form", objective=objective,
                    values={"alpha": alpha, "b": np.array(b), "xi": xi},
                    solve_time=time.perf_counter() - start,
                    residuals=Residuals(primal=0.0, dual=_relative_residual(W, a, d)),
                    message="closed form (Algorithm 3)")


@register("kqpfs-cholesky", kinds=[KQPFS], certify_tol=1e-8)
def solve_kqpfs_cholesky(program: Any) -> Solution:
    r"""KQPFS by the Cholesky solve of (4.8).

    Notes
    -----
    :math:`(Q_K + \mu I)\alpha = F_K`, :math:`Q_K = KCK`, :math:`F_K = KCy`, by Cholesky
    (Algorithm 4). Objective :math:`G_\mu(\alpha)`.
    """
    f: KernelFisher = program.data["fisher"]
    start = time.perf_counter()
    A, F = f.kqpfs_system()
    try:
        alpha = _cholesky_solve(A, F)
    except (np.linalg.LinAlgError, ValueError) as exc:
        return Solution(status=Status.SOLVER_ERROR, solver="kqpfs-cholesky",
                        solve_time=time.perf_counter() - start,
                        message=f"Cholesky of Q_K + mu I failed ({exc}): raise mu")
    # the point's value in the program's form (not 0.5 a'Aa - F'a, which loses digits)
    objective = f.kqpfs_objective(alpha)
    return Solution(status=Status.OPTIMAL, solver="kqpfs-cholesky", objective=objective,
                    values={"alpha": alpha}, solve_time=time.perf_counter() - start,
                    residuals=Residuals(primal=0.0, dual=_relative_residual(A, alpha, F)),
                    message="linear solve (4.8)")
