r"""SVOR with *implicit* threshold constraints (Chu & Keerthi 2005/2007, "SVORIM").

Every threshold is constrained by every point (seed 003's baseline, eq. 4.1, uses the
*explicit* constraints of :mod:`conicml.formulations.svor_dual`). Kinds
``"qp.chance.svor.implicit"`` and ``"qp.chance.svor.implicit.dual"``; the program is in
the Notes of :func:`svorim`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils.validation import check_matrix, check_positive
from ..certificates.conic import certify_with
from ..contracts.svor import SVORIMDualData, layout_complementarity
from ..exceptions import ProgramError
from ..kernels import make_kernel
from ..kinds import SVORIM_QP, SVORIM_QP_DUAL
from ..program import ConicForm, Program
from ..solution import Residuals, Solution
from .ordinal import (
    _certify_svor_c_dual,
    _decode_svor_c_dual,
    _ordinal_factor,
    _score_variable,
    _svor_primal_point,
)
from .svor_dual import _PROGRAMS, check_gram, check_ranks

__all__ = ["implicit_thresholds", "svorim", "svorim_dual"]


def implicit_thresholds(scores: np.ndarray, ranks: np.ndarray, r: int) -> np.ndarray:
    r"""Optimal thresholds of the implicit-constraint SVOR for fixed scores (midpoint rule).

    For fixed :math:`g_p` the primal separates over thresholds:
    :math:`\theta_j` minimises
    :math:`h_j(\theta) = \sum_{\mathrm{rank}\le j}(g_p + 1 - \theta)_+
    + \sum_{\mathrm{rank} > j}(\theta - g_p + 1)_+`, whose slope
    :math:`-\#\{\text{upper breakpoints} > \theta\} + \#\{\text{lower} < \theta\}`
    vanishes between the :math:`a`-th and :math:`(a+1)`-th smallest breakpoint,
    :math:`a = \#\{\mathrm{rank} \le j\}`; the midpoint of that interval makes
    :math:`\theta_j` unique. The running maximum is applied afterwards; it is
    a no-op at an optimum (Chu & Keerthi 2005, 2007: the optimal thresholds
    are ordered) and keeps the prediction rule well defined elsewhere.
    """
    theta = np.empty(r - 1)
    for j in range(1, r):
        below = ranks <= j
        z = np.sort(np.concatenate([scores[below] + 1.0, scores[~below] - 1.0]))
        a = int(below.sum())
        theta[j - 1] = 0.5 * (z[a - 1] + z[a])
    return np.maximum.accumulate(theta)


def _signs(ranks: np.ndarray, r: int) -> np.ndarray:
    """``y[p, j-1]`` = -1 for rank(p) <= j, +1 above."""
    return np.where(ranks[:, None] <= np.arange(1, r)[None, :], -1.0, 1.0)


def _implicit_model(data: Mapping[str, Any], scores: np.ndarray, *, w: np.ndarray | None,
                    dual_coef: np.ndarray | None, extra: Mapping[str, Any]) -> dict:
    ranks, r = data["ranks"], data["r"]
    theta = implicit_thresholds(scores, ranks, r)
    Y = _signs(ranks, r)
    xi = np.maximum(0.0, 1.0 - Y * (scores[:, None] - theta[None, :]))
    model: dict[str, Any] = {
        "b": -theta,  # package convention: hyperplane j is w.x + b_j = 0
        "thresholds": theta,
        "scores": scores,
        "xi": xi,  # (m, r-1): slack of point p at threshold j
        "loss": float(xi.sum()),
        "dual": dict(extra, dual_coef=dual_coef),
    }
    if w is not None:
        model["w"] = w
    return model


def _data(kind: str, X: Any, y: Any, C: Any, kernel: str, gamma: Any, degree: int,
          coef0: float, factor: str, who: str, gram: Any = None) -> dict:
    X = check_matrix(X)
    ranks, r = check_ranks(y, X.shape[0])
    C = check_positive(C, "C")
    if kernel == "precomputed":
        raise ProgramError(f"{who} does not take a precomputed kernel; pass the inputs X")
    if factor not in ("auto", "cholesky", "eigen"):
        raise ProgramError(f"factor must be 'auto', 'cholesky' or 'eigen', got {factor!r}")
    kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
    return {
        "kind": kind,
        "means": X,
        "ranks": ranks,
        "r": r,
        "C": float(C),
        "kernel": kern,
        "d": np.ones(X.shape[0]),
        "factor": factor,
        "svor": SVORIMDualData(X=X, ranks=ranks, r=r, C=float(C), kernel=kern,
                               gram=check_gram(gram, X, kern)),
    }


# -- primal ----------------------------------------------------------------------------

def _build_svorim(data: Mapping[str, Any]) -> ConicForm:
    """min 1/2||w||^2 + C sum xi  s.t.  y_pj (f_p - theta_j) >= 1 - xi_pj, xi >= 0."""
    ranks, r, C = data["ranks"], data["r"], data["C"]
    m = ranks.size
    theta = cp.Variable(r - 1, name="thresholds")
    w, f, variables = _score_variable(data)
    xi = cp.Variable((m, r - 1), name="xi")
    Y = _signs(ranks, r)
    margin = (cp.reshape(f, (m, 1), order="F") @ np.ones((1, r - 1))
              - np.ones((m, 1)) @ cp.reshape(theta, (1, r - 1), order="F"))
    constraints = {
        "margin": cp.multiply(Y, margin) >= 1 - xi,
        "xi_nonneg": xi >= 0,
    }
    variables.update({"thresholds": theta, "xi": xi})
    objective = cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi))
    return ConicForm(cp.Problem(objective, list(constraints.values())), variables,
                     constraints)


def _decode_svorim(data: Mapping[str, Any], solution: Solution) -> dict:
    scores, parts = _svor_primal_point(data, solution)
    return _implicit_model(data, scores, **parts)


def svorim(
    X: np.ndarray,
    y: np.ndarray,
    *,
    C: float = 1.0,
    kernel: str = "rbf",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    factor: str = "auto",
) -> Program:
    r"""Primal SVOR with implicit constraints (Chu & Keerthi 2005, 2007): kind ``SVORIM_QP``.

    .. math::

        \min_{w,\theta,\xi}\ \tfrac12\|w\|^2 + C\sum_{j=1}^{r-1}\sum_p \xi^j_p
        \ \text{s.t.}\ y^j_p(w^\top\phi(x_p) - \theta_j) \ge 1 - \xi^j_p,\ \xi \ge 0,

    :math:`y^j_p = -1` if :math:`\mathrm{rank}(p) \le j`, else :math:`+1`.
    Kernels enter through a factor of the Gram matrix. Generic backends only
    (``smo-or`` solves :func:`svorim_dual`).

    Parameters
    ----------
    X : ndarray of shape (m, n)
    y : ndarray of shape (m,)
        Integer ranks 1..r, every rank present (r >= 2).
    C : float, default=1.0
        Cost of slack, > 0.
    kernel : {"linear", "rbf", "poly"}, default="rbf"
    gamma, degree, coef0
        Kernel parameters, as in :func:`conicml.make_kernel`.
    factor : {"auto", "cholesky", "eigen"}, default="auto"

    Returns
    -------
    Program
        ``decode`` gives ``w`` (linear), ``scores``, ``thresholds`` (the
        midpoint rule of :func:`implicit_thresholds`), ``b`` = :math:`-\theta`,
        ``xi`` of shape (m, r-1), ``loss``.

    Raises
    ------
    ProgramError
        (a ``ValueError``) bad ranks (see
        :func:`conicml.formulations.svor_dual.check_ranks`), C <= 0, NaN in X.

    Notes
    -----
    Seed 003's baseline (§4.1.1, eq. 4.1) is Chu & Keerthi's SVOR with *explicit*
    constraints: a point of rank :math:`i` constrains only thresholds
    :math:`i - 1` and :math:`i` (:mod:`conicml.formulations.svor_dual`). Their
    second formulation (ICML 2005; Neural Computation 19:792, 2007)
    constrains every threshold :math:`j` with *all* points — those of rank
    :math:`\le j` must score below :math:`\theta_j - 1`, those of rank
    :math:`> j` above :math:`\theta_j + 1` — so a point far on the wrong side of
    several thresholds pays at each of them:

    .. math::

        \min_{w,\theta,\xi}\ \tfrac12\|w\|^2 + C\sum_{j=1}^{r-1}\sum_{p=1}^m \xi^j_p
        \ \text{s.t.}\ y^j_p\,(w^\top\phi(x_p) - \theta_j) \ge 1 - \xi^j_p,\ \xi \ge 0,

    with :math:`y^j_p = -1` for :math:`\mathrm{rank}(p) \le j` and :math:`+1`
    otherwise. The ordering :math:`\theta_1 \le \dots \le \theta_{r-1}` is not
    imposed; it holds at every optimum (Chu & Keerthi 2005, 2007 prove that both
    of their formulations order the thresholds at the optimum). The problem is
    :math:`r - 1` binary SVMs sharing :math:`w`, which is why the dual has one
    equality per threshold.

    Kinds ``"qp.chance.svor.implicit"`` (the primal, generic backends) and
    ``"qp.chance.svor.implicit.dual"`` (the dual, generic backends and
    ``smo-or``). Both decode to the same model entries as the explicit SVOR.
    """
    data = _data(SVORIM_QP, X, y, C, kernel, gamma, degree, coef0, factor, "svorim")
    return Program(SVORIM_QP, data, build=_build_svorim, decode=_decode_svorim,
                   certify=certify_with(_build_svorim), default_solver="clarabel",
                   description=f"SVOR implicit constraints ({kernel} kernel, "
                   f"{data['ranks'].size} points, {data['r']} ranks, C={data['C']:g})")


# -- dual ------------------------------------------------------------------------------

def _build_svorim_dual(data: Mapping[str, Any]) -> ConicForm:
    r"""max 1'(a + a*) - 1/2||R'v||^2, v = rowsum(a* - a), box, one equality per threshold."""
    con: SVORIMDualData = data["svor"]
    C, r = data["C"], data["r"]
    m = data["ranks"].size
    below, above = con.masks()
    R = _ordinal_factor(data)
    alpha = cp.Variable((m, r - 1), name="alpha")
    alpha_star = cp.Variable((m, r - 1), name="alpha_star")
    v = cp.sum(alpha_star - alpha, axis=1)
    constraints = {
        "alpha_nonneg": alpha >= 0,
        "alpha_upper": alpha <= C * below.astype(float),  # alpha^j_p = 0 above rank j
        "alpha_star_nonneg": alpha_star >= 0,
        "alpha_star_upper": alpha_star <= C * above.astype(float),
        # sum_p alpha^j_p = sum_p alpha*^j_p: the multiplier of theta_j, one per threshold
        "balance": cp.sum(alpha, axis=0) == cp.sum(alpha_star, axis=0),
    }
    objective = cp.sum(alpha + alpha_star) - 0.5 * cp.sum_squares(R.T @ v)
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha, "alpha_star": alpha_star}, constraints)


def _bounds(data: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds of (alpha, alpha*): C below / above each threshold, 0 elsewhere."""
    below, above = data["svor"].masks()
    return data["C"] * below, data["C"] * above


def _decode_svorim_dual(data: Mapping[str, Any], solution: Solution) -> dict:
    return _decode_svor_c_dual(data, solution, *_bounds(data), _implicit_model)


def _certify_svorim_dual(data: Mapping[str, Any], solution: Solution) -> Residuals:
    """Box and per-threshold balance (/C), complementarity at the optimal thresholds, P - D."""
    con: SVORIMDualData = data["svor"]

    def balance(raw_a: np.ndarray, raw_s: np.ndarray) -> float:
        # sum_p alpha^j_p = sum_p alpha*^j_p, one equality per threshold
        return float(np.max(np.abs(raw_a.sum(axis=0) - raw_s.sum(axis=0))))

    def kkt_and_loss(alpha, alpha_star, v, Kv) -> tuple[float, float]:
        theta = implicit_thresholds(Kv, data["ranks"], data["r"])
        point, sign, thr = con.layout()
        kkt = layout_complementarity(point, sign, thr, con.pack(alpha, alpha_star), Kv, theta,
                                     data["C"])
        Y = _signs(data["ranks"], data["r"])
        return kkt, float(np.maximum(0.0, 1.0 - Y * (Kv[:, None] - theta[None, :])).sum())

    return _certify_svor_c_dual(data, solution, *_bounds(data), balance, kkt_and_loss)


def svorim_dual(
    X: np.ndarray,
    y: np.ndarray,
    *,
    C: float = 1.0,
    kernel: str = "rbf",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    factor: str = "auto",
    gram: np.ndarray | None = None,
) -> Program:
    r"""Dual SVOR with implicit constraints (Chu & Keerthi 2005, 2007): kind ``SVORIM_QP_DUAL``.

    With :math:`v_p = \sum_j(\alpha^{*j}_p - \alpha^j_p)`,

    .. math::

        \max_{\alpha,\alpha^*}\ \sum_{j,p}(\alpha^j_p + \alpha^{*j}_p) - \tfrac12 v^\top K v
        \ \text{s.t.}\ 0 \le \alpha^j_p \le C\,[\mathrm{rank}(p)\le j],\
        0 \le \alpha^{*j}_p \le C\,[\mathrm{rank}(p) > j],\
        \sum_p \alpha^j_p = \sum_p \alpha^{*j}_p\ (j = 1..r-1).

    The model is :math:`g(x) = \sum_p v_p k(x_p, x)`, rank
    :math:`1 + \#\{j : g(x) > \theta_j\}`.

    Parameters
    ----------
    X : ndarray of shape (m, n)
    y : ndarray of shape (m,)
        Integer ranks 1..r, every rank present (r >= 2).
    C : float, default=1.0
        Cost of slack, > 0.
    kernel : {"linear", "rbf", "poly"}, default="rbf"
    gamma, degree, coef0
        Kernel parameters, as in :func:`conicml.make_kernel`.
    factor : {"auto", "cholesky", "eigen"}, default="auto"
        Factor of the Gram matrix for the generic backends.
    gram : ndarray of shape (m, m), optional
        The Gram matrix of ``X``, as in :func:`~conicml.formulations.svor_dual.svor_dual`.

    Returns
    -------
    Program
        Variables ``alpha``, ``alpha_star`` of shape (m, r-1) (column
        :math:`j-1` is threshold :math:`j`); objective the dual maximum (= the
        primal optimum of :func:`svorim`). ``data["svor"]`` is the
        :class:`~conicml.contracts.svor.SVORIMDualData` contract. ``decode``
        gives ``w`` (linear), ``scores``, ``thresholds`` (:func:`implicit_thresholds`),
        ``b``, ``xi``, ``loss``, ``primal_objective``, ``dual_objective``. The
        certificate (O(m^2) kernel work, no compiled problem) is the box/balance
        violation over :math:`C`, the largest complementarity residual at those
        thresholds and the relative gap :math:`(P - D)/|P|`.

    Raises
    ------
    ProgramError
        (a ``ValueError``) bad ranks, C <= 0, NaN in X, a precomputed kernel.
    """
    data = _data(SVORIM_QP_DUAL, X, y, C, kernel, gamma, degree, coef0, factor,
                 "svorim_dual", gram)
    return _svorim_program(data)


def _svorim_program(data: dict) -> Program:
    return Program(SVORIM_QP_DUAL, data, build=_build_svorim_dual,
                   decode=_decode_svorim_dual, certify=_certify_svorim_dual,
                   default_solver="smo-or",
                   description=f"SVOR implicit-constraint dual ({data['kernel'].name} "
                   f"kernel, {data['ranks'].size} points, {data['r']} ranks, "
                   f"C={data['C']:g})")


_PROGRAMS[SVORIM_QP_DUAL] = _svorim_program  # svor_dual.with_cost takes these too
