r"""Kernel Fisher discriminant (KFDA) and kernel QPFS (KQPFS) — seed 001 ch. 4.

Labels are exactly +1 / -1; the kernel is any of :mod:`conicml.kernels`
(``rbf`` is :math:`\exp(-\gamma\|x - x'\|^2)`). The QP forms are there to verify the
closed forms with the generic backends; on badly scaled data (e.g. a linear kernel of raw
features with entries ~1e4) they stop at their iteration limit, while the closed forms do
not care: standardise X for the QP. The programs and Proposition 4.1 are in the Notes of
:func:`kfda` and :func:`kqpfs`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils.validation import check_positive, check_X_y
from ..contracts.kfda import KernelFisher
from ..exceptions import ProgramError
from ..kernels import make_kernel
from ..kinds import KFDA, KQPFS
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution

__all__ = ["kfda", "kqpfs"]


def _data(X: Any, y: Any, mu: float, kernel: str, gamma: Any, degree: int,
          coef0: float) -> dict:
    X, y = check_X_y(X, y)
    mu = check_positive(mu, "mu")
    kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
    gram = X.copy() if kern.name == "precomputed" else kern.gram(X)
    fisher = KernelFisher(gram, y, mu)
    m_pos, m_neg = fisher.class_means()
    # d = m+ - m- (4.15): with d = 0 the constraint d'alpha = 2 has no solution
    if not np.max(np.abs(m_pos - m_neg)) > 1e-14 * max(1.0, float(np.abs(gram).max())):
        raise ProgramError(
            "the two classes have the same mean in the kernel's feature space "
            "(d = m+ - m- = 0; e.g. every row of X is the same): no discriminant direction "
            "exists; check X (constant features?) or the kernel")
    return {"X": X, "y": y, "mu": mu, "kernel": kern, "fisher": fisher}


def _build_kfda(data: Mapping[str, Any]) -> ConicForm:
    f: KernelFisher = data["fisher"]
    n = f.y.size
    alpha, b, xi = cp.Variable(n, name="alpha"), cp.Variable(name="b"), cp.Variable(n, name="xi")
    pos = f.positive.astype(float)
    constraints = {"fit": f.gram @ alpha + b - xi == f.y,
                   "mean_pos": pos @ xi == 0, "mean_neg": (1.0 - pos) @ xi == 0}
    objective = cp.sum_squares(xi) + f.mu * cp.sum_squares(alpha)
    return ConicForm(cp.Problem(cp.Minimize(objective), list(constraints.values())),
                     {"alpha": alpha, "b": b, "xi": xi}, constraints)


def _decode_kfda(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, KFDA)
    return {"alpha": np.asarray(solution.values["alpha"], dtype=float),
            "b": float(np.asarray(solution.values["b"]).ravel()[0])}


def _stationarity(f: KernelFisher, alpha: np.ndarray) -> float:
    """Relative residual of 2 W_mu alpha = lambda d (lambda by least squares)."""
    m_pos, m_neg = f.class_means()
    d = m_pos - m_neg
    g = 2.0 * f.within_apply(alpha)
    lam = float(d @ g) / float(d @ d)
    scale = max(float(np.abs(g).max()), abs(lam) * float(np.abs(d).max()), 1e-300)
    return float(np.abs(g - lam * d).max()) / scale


def _certify_kfda(data: Mapping[str, Any], solution: Solution) -> Residuals:
    f: KernelFisher = data["fisher"]
    alpha = np.asarray(solution.values["alpha"], dtype=float)
    b = float(np.asarray(solution.values["b"]).ravel()[0])
    xi = np.asarray(solution.values["xi"], dtype=float)
    Ka = f.gram @ alpha
    scale = 1.0 + float(np.abs(Ka).max())
    fit = float(np.abs(Ka + b - xi - f.y).max())
    means = max(abs(float(xi[f.positive].sum())), abs(float(xi[~f.positive].sum()))) / f.y.size
    return Residuals(primal=max(fit, means) / scale, dual=_stationarity(f, alpha),
                     source="recomputed")


def _build_kqpfs(data: Mapping[str, Any]) -> ConicForm:
    f: KernelFisher = data["fisher"]
    CK, Cy = f.centred_gram(), f.y - f.y.mean()
    alpha = cp.Variable(f.y.size, name="alpha")
    objective = (0.5 * cp.sum_squares(CK @ alpha - Cy) + 0.5 * f.mu * cp.sum_squares(alpha)
                 - 0.5 * float(Cy @ Cy))
    return ConicForm(cp.Problem(cp.Minimize(objective)), {"alpha": alpha})


def _decode_kqpfs(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, KQPFS)
    return {"alpha": np.asarray(solution.values["alpha"], dtype=float)}


def _certify_kqpfs(data: Mapping[str, Any], solution: Solution) -> Residuals:
    f: KernelFisher = data["fisher"]
    alpha = np.asarray(solution.values["alpha"], dtype=float)
    CK = f.centred_gram()
    lhs = CK.T @ (CK @ alpha) + f.mu * alpha
    rhs = CK.T @ f.y
    scale = max(float(np.abs(lhs).max()), float(np.abs(rhs).max()), 1e-300)
    # the reported objective must be the point's: G ranges over [-|Cy|^2/2, 0] (G(0) = 0)
    Cy = f.y - f.y.mean()
    reported = float(solution.objective)
    gap = (abs(reported - f.kqpfs_objective(alpha)) / max(0.5 * float(Cy @ Cy), 1e-300)
           if math.isfinite(reported) else math.inf)
    return Residuals(primal=0.0, dual=float(np.abs(lhs - rhs).max()) / scale, gap=gap,
                     source="recomputed")


def kfda(X: Any, y: Any, mu: float = 1e-3, *, kernel: str = "rbf",
         gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0) -> Program:
    r"""KFDA as the QP (4.15)–(4.17), kind ``qp.kfda``.

    Parameters
    ----------
    X : ndarray of shape (N, M)
        Training inputs (the (N, N) Gram matrix for ``kernel="precomputed"``).
    y : ndarray of shape (N,)
        Labels +1 / -1, both present.
    mu : float, default=1e-3
        :math:`\mu_W > 0`, the ridge on :math:`\|\alpha\|^2`.
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma, degree, coef0
        Kernel hyper-parameters (:func:`conicml.make_kernel`).

    Returns
    -------
    Program
        ``decode`` gives ``{"alpha", "b"}`` with :math:`d^\top\alpha = 2`; the projection
        of x is :math:`\sum_i\alpha_i k(x_i, x)`. Default solver ``kfda-closed-form``.

    Raises
    ------
    ProgramError
        Shape mismatch, NaN/inf, labels not ±1, a single class, mu <= 0, bad kernel,
        class means equal in feature space (:math:`d = 0`).

    Notes
    -----
    **KFDA as a QP** (Mika, Rätsch & Müller 2001; eqs. 4.15–4.17), kind ``qp.kfda``:

    .. math::

        \min_{\alpha, b, \xi}\ \|\xi\|^2 + \mu\|\alpha\|^2
        \quad\text{s.t.}\quad K\alpha + \mathbf 1 b = y + \xi,\quad
        \mathbf 1_+^\top\xi = 0,\ \mathbf 1_-^\top\xi = 0 .

    The two class constraints fix :math:`d^\top\alpha = 2` (:math:`d = m_+ - m_-`) and
    :math:`b = -(m_+ + m_-)^\top\alpha/2`, and give :math:`\|\xi\|^2 = \alpha^\top W\alpha`,
    so the optimum is :math:`\alpha = 2W_\mu^{-1}d/(d^\top W_\mu^{-1}d)` — the closed-form
    KFDA of Algorithm 3 rescaled, which the specialized solver ``kfda-closed-form``
    computes. Its certificate: constraint residuals (primal) and the stationarity of the
    reduced problem, :math:`2W_\mu\alpha = \lambda d` (dual).
    """
    data = _data(X, y, mu, kernel, gamma, degree, coef0)
    return Program(KFDA, data, build=_build_kfda, decode=_decode_kfda,
                   default_solver="kfda-closed-form", certify=_certify_kfda,
                   description=f"KFDA QP ({kernel} kernel, mu={data['mu']:g})")


def kqpfs(X: Any, y: Any, mu: float = 1e-3, *, kernel: str = "rbf",
          gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0) -> Program:
    r"""KQPFS (4.7), kind ``qp.kqpfs``: :math:`\min_\alpha G_\mu(\alpha)`, unconstrained.

    Parameters are those of :func:`kfda` (``mu`` is :math:`\mu_Q`).

    Returns
    -------
    Program
        ``decode`` gives ``{"alpha"}`` (scale not fixed: compare directions).
        Default solver ``kqpfs-cholesky``.

    Notes
    -----
    **KQPFS** (eqs. 4.6–4.8), kind ``qp.kqpfs``: the unconstrained strongly convex QP

    .. math::

        \min_\alpha\ G_\mu(\alpha) = \tfrac12\alpha^\top K C K\alpha - y^\top C K\alpha
        + \tfrac{\mu}2\|\alpha\|^2
        = \tfrac12\|CK\alpha - Cy\|^2 + \tfrac\mu2\|\alpha\|^2 - \tfrac12\|Cy\|^2,

    :math:`C = I - \mathbf 1\mathbf 1^\top/N`: ridge regression of the centred labels on the
    centred kernel columns (the cvxpy form uses this sum of squares, no PSD check). Its
    specialized solver ``kqpfs-cholesky`` is the linear solve (4.8)
    :math:`(Q_K + \mu I)\alpha = F_K`.

    **Proposition 4.1** (corrected): with :math:`\mu_W = \mu_Q`, the KFDA and KQPFS
    directions are equal *up to a positive scale* — :math:`Q_K = W + \tfrac{N_+N_-}{N}dd^\top`,
    :math:`F_K = \tfrac{2N_+N_-}{N}d` and Sherman–Morrison give
    :math:`(W_\mu + c\,dd^\top)^{-1}d \parallel W_\mu^{-1}d` (erratum: the thesis states
    equality of the optimal solutions and has typos in 4.18 and 4.20).
    """
    data = _data(X, y, mu, kernel, gamma, degree, coef0)
    return Program(KQPFS, data, build=_build_kqpfs, decode=_decode_kqpfs,
                   default_solver="kqpfs-cholesky", certify=_certify_kqpfs,
                   description=f"KQPFS ({kernel} kernel, mu={data['mu']:g})")
