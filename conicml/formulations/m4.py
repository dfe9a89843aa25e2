r"""The Maxi-Min Margin Machine M4 (seed 004, Huang 2004, ch. 4).

Convention: the positive class (label ``+1``) is the thesis's class :math:`x`,
the negative class is :math:`y`; the decision function is
:math:`f(z) = w^\top z + b` and :math:`z` is positive iff :math:`f(z) \ge 0`
(ch. 4 uses this convention itself, unlike ch. 3). Moments are the plug-in
estimates with :math:`1/N` covariances (errata S004-P5). The separable, soft-margin,
reduced and kernel programs, their kinds and what ``decode`` returns are in the Notes
of :func:`m4`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from functools import partial
from typing import Any

import cvxpy as cp
import numpy as np
from scipy.linalg import cho_solve

from .. import kinds
from .._utils.deprecation import renamed_keywords
from .._utils.scaling import feature_scales, relative_ridge_diagonal
from .._utils.validation import check_matrix, check_positive, check_X_y
from ..certificates.conic import rel, residuals
from ..certificates.margin import m4_fixed_rho_certificate, margin_qp_certificate
from ..contracts.m4 import M4Data
from ..exceptions import ProgramError
from ..kernels import Kernel, make_kernel, psd_factor
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution
from .minimax import _definite_cholesky, _gram_feature_map

__all__ = [
    "AUTO_NU",
    "KIND_SEPARABLE",
    "KIND_SOFT",
    "auto_C",
    "certified_rho",
    "decision_values",
    "inner_problem",
    "m4",
    "m4_shared_covariance",
    "margins",
    "mpm_bound_problem",
    "reduction_scores",
    "with_cost",
]

KIND_SEPARABLE = kinds.M4_SEPARABLE
KIND_SOFT = kinds.M4_SOFT


# --------------------------------------------------------------------------------------
# data preparation
# --------------------------------------------------------------------------------------
def _cov_factor(Zc: np.ndarray, reg: float | np.ndarray, triangular: bool = False
                ) -> np.ndarray:
    r"""``R`` with :math:`R^\top R = Z_c^\top Z_c / n + \mathrm{diag}(\mathrm{reg})` and few rows.

    ``Zc`` are the centred rows of one class. With more rows than columns the
    covariance is formed and factored (eigen, exact up to ``1e-12`` of its
    spectrum; ``triangular=True``: Cholesky when numerically definite); otherwise the
    scaled centred rows (plus :math:`\sqrt{reg}\,I`) are the factor.
    """
    n, p = Zc.shape
    reg = np.broadcast_to(np.asarray(reg, dtype=float), (p,))
    if n + (p if np.any(reg > 0) else 0) > p:
        S = Zc.T @ Zc / n + np.diag(reg)
        S = 0.5 * (S + S.T)
        # kernel programs (triangular=True): a triangular factor when S is numerically
        # definite (always, with the mandatory ridge): half the nonzeros of the
        # eigen-factor in the inner SOCPs' cones, n^3/3 flops. Linear programs
        # keep the eigen-factor (their results are unchanged)
        L = _definite_cholesky(S) if triangular else None
        if L is not None:
            return L.T
        return psd_factor(S, "eigen").T
    R = Zc / math.sqrt(n)
    return np.vstack([R, np.diag(np.sqrt(reg))]) if np.any(reg > 0) else R


def _sym_factor(S: np.ndarray, p: int, name: str, reg: float | np.ndarray = 0.0,
                scale: np.ndarray | None = None) -> np.ndarray:
    S = check_matrix(S, name)
    if S.shape != (p, p):
        raise ProgramError(f"{name} must have shape ({p}, {p}), got {S.shape}")
    if not np.allclose(S, S.T, atol=1e-10 * max(1.0, float(np.abs(S).max()))):
        raise ProgramError(f"{name} must be symmetric")
    S = 0.5 * (S + S.T) + np.diag(np.broadcast_to(np.asarray(reg, dtype=float), (p,)))
    if scale is not None:  # the covariance of x / scale
        S = S / np.outer(scale, scale)
    return psd_factor(S, "eigen").T


def reduction_scores(Z: np.ndarray, y: np.ndarray, R_pos: np.ndarray,
                     R_neg: np.ndarray) -> np.ndarray:
    r""":math:`\nu_i = d_i^2/(1 + d_i^2)` of the reduction rule (Sec. 4.3).

    :math:`d_i^2 = (z_i - \bar z_c)^\top\Sigma_c^{+}(z_i - \bar z_c)` with
    :math:`\Sigma_c = R_c^\top R_c` the covariance of the point's own class
    (pseudo-inverse if singular).
    """
    nu = np.empty(y.size)
    for label, R in ((1.0, R_pos), (-1.0, R_neg)):
        mask = y == label
        Zc = Z[mask] - Z[mask].mean(axis=0)
        Sinv = np.linalg.pinv(R.T @ R, hermitian=True)
        d2 = np.einsum("ij,jk,ik->i", Zc, Sinv, Zc)
        nu[mask] = d2 / (1.0 + d2)
    return nu


#: Fraction of the training points that ``C="auto"`` lets inside the margin.
AUTO_NU = 0.5


def auto_C(d: np.ndarray, R_pos: np.ndarray, R_neg: np.ndarray, n: int,
           nu: float = AUTO_NU) -> float:
    r"""A data-scaled soft-margin :math:`C` letting about ``nu * n`` points inside the margin.

    By the slope argument in the Notes of :func:`m4` about :math:`1/(C\sigma)`
    points lie inside the margin at the optimum, :math:`\sigma` a class's
    :math:`\sigma(w)` at :math:`w^\top d = 1`. With :math:`\bar\sigma =
    (\sigma_x + \sigma_y)/2` at the Fisher direction
    :math:`w \propto (\Sigma_x + \Sigma_y)^{-1}d` (a cheap stand-in for the
    optimal :math:`w`), :math:`C = 1/(\nu\,n\,\bar\sigma)` -- the analogue of
    the ν-SVM's :math:`\nu`; derived here, not in the thesis.
    """
    S = R_pos.T @ R_pos + R_neg.T @ R_neg
    L = _definite_cholesky(0.5 * (S + S.T))
    if L is not None:  # the usual case (a ridge): n^3/3 instead of an SVD
        w = cho_solve((L, True), d, check_finite=False)
    else:
        w = np.linalg.lstsq(S, d, rcond=None)[0]
    w = w / float(d @ w)
    sigma = 0.5 * (float(np.linalg.norm(R_pos @ w)) + float(np.linalg.norm(R_neg @ w)))
    if not sigma > 0:  # zero within-class spread along d: any C fits, take one per point
        return 1.0 / n
    return 1.0 / (nu * n * sigma)


def _prepare(X, y, C, kernel, gamma, degree, coef0, reg, reduction, covariances,
             factor_rtol, relative_ridge=0.0) -> dict[str, Any]:
    X, y = check_X_y(X, y)
    if isinstance(C, str):
        if C != "auto":
            raise ProgramError(f"C must be a positive number, None or 'auto', got {C!r}")
    elif C is not None:
        C = check_positive(C, "C")
    reg = check_positive(reg, "ridge", allow_zero=True)
    relative_ridge = check_positive(relative_ridge, "relative_ridge", allow_zero=True)
    factor_rtol = check_positive(factor_rtol, "factor_rtol")
    if reduction is not None:
        reduction = check_positive(reduction, "reduction", allow_zero=True)
        if reduction > 1.0:
            raise ProgramError(
                f"reduction (the threshold nu of eq. 4.36) must lie in [0, 1], got {reduction!r}"
            )
    kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
    scale = None
    reg_int: float | np.ndarray = reg
    if kern.name == "linear":
        # the ridge diag(reg_user): reg I plus the relative ridge r diag(var X), which
        # moves with the covariances under x -> Dx and keeps the model scale-invariant
        reg_user = reg + (relative_ridge_diagonal(X.var(axis=0), relative_ridge)
                          if relative_ridge > 0 else np.zeros(X.shape[1]))
        # M4 (reg = 0) is affine-invariant: solve in equilibrated coordinates X / scale
        # (exact powers of two) and map w back in decode; the ridge diag(reg_user) of the
        # user's coordinates is diag(reg_user / scale^2) in the internal ones
        scale = feature_scales(X.std(axis=0), np.abs(X).max(axis=0))
        Z, eta_map = X / scale, None
        reg_int = reg_user / scale**2
    else:
        if relative_ridge > 0:
            raise ProgramError(
                f"relative_ridge applies to kernel='linear' only (got kernel={kernel!r}); "
                "a kernel program takes the ridge*K regulariser of Corollary 16 as ridge > 0"
            )
        if reg <= 0:
            raise ProgramError(
                f"kernel={kernel!r} needs ridge > 0: without the ridge*K regulariser of "
                "Corollary 16 the plug-in kernel covariances are rank-deficient and the "
                "margin is unbounded (rho* = inf); try ridge=1e-3"
            )
        if covariances is not None:
            raise ProgramError("covariances can only be given with kernel='linear'")
        K = kern.gram(X)
        # the feature map of the MPM family: the Cholesky factor of K when
        # every squared pivot exceeds factor_rtol times max K_ii (a lower-triangular Z:
        # half the nonzeros of the eigen-factor in every margin row of the inner SOCPs,
        # n^3/3 flops instead of an eigendecomposition), else the eigen-factor over the
        # eigenvalues above factor_rtol times the largest; eta = eta_map v either way
        Z, eta_map = _gram_feature_map(0.5 * (K + K.T), rtol=factor_rtol)
    pos, neg = y > 0, y < 0
    n_pos, n_neg = int(pos.sum()), int(neg.sum())
    mean_pos, mean_neg = Z[pos].mean(axis=0), Z[neg].mean(axis=0)
    d = mean_pos - mean_neg
    if not np.any(np.abs(d) > 1e-12 * max(1.0, float(np.abs(Z).max()))):
        raise ProgramError(
            "the two class means coincide: M4's normalisation w^T(x_mean - y_mean) = 1 "
            "(errata S004-A5) needs distinct means"
        )
    p = Z.shape[1]
    if covariances is None:
        R_pos = _cov_factor(Z[pos] - mean_pos, reg_int, triangular=eta_map is not None)
        R_neg = _cov_factor(Z[neg] - mean_neg, reg_int, triangular=eta_map is not None)
    else:
        if not (isinstance(covariances, (tuple, list)) and len(covariances) == 2):
            raise ProgramError("covariances must be a pair (cov_pos, cov_neg)")
        R_pos = _sym_factor(covariances[0], p, "cov_pos", reg_user, scale)
        R_neg = _sym_factor(covariances[1], p, "cov_neg", reg_user, scale)
    c_auto = C == "auto"
    if c_auto:
        C = auto_C(d, R_pos, R_neg, y.size)
    if reduction is None:
        kept = np.ones(y.size, dtype=bool)
        scores = None
    else:
        scores = reduction_scores(Z, y, R_pos, R_neg)
        kept = scores >= reduction
    m4_data = M4Data(Z=Z, y=y, kept=kept, R_pos=R_pos, R_neg=R_neg, d=d, C=C,
                     reduction=reduction, n_removed=int(y.size - kept.sum()))
    return {
        "m4": m4_data,
        "X": X, "y": y, "C": C, "C_auto": c_auto, "kernel": kern, "Z": Z, "eta_map": eta_map,
        "reg": reg, "relative_ridge": relative_ridge,
        "reduction": reduction, "scores": scores, "kept": kept,
        "n_removed": int(y.size - kept.sum()),
        "mean_pos": mean_pos, "mean_neg": mean_neg, "d": d, "R_pos": R_pos, "R_neg": R_neg,
        "n_pos": n_pos, "n_neg": n_neg, "hard": C is None, "feature_scale": scale,
        "kind": KIND_SEPARABLE if C is None else KIND_SOFT,
    }


# --------------------------------------------------------------------------------------
# the inner SOCPs and the certified objective live on the contract (conicml.contracts.m4),
# which the solvers read; these module-level names keep the functional spelling
# --------------------------------------------------------------------------------------
def inner_problem(data: Mapping[str, Any], rho: float | None = None) -> ConicForm:
    r"""The fixed-ρ SOCP of the program's kind (:meth:`M4Data.inner_problem`).

    ``rho=None`` (the program's ``build``): DPP with ``cp.Parameter`` s, compiled
    once; a float ``rho`` builds a parameter-free problem with unit scales.
    """
    return data["m4"].inner_problem(rho)


def mpm_bound_problem(data: Mapping[str, Any]) -> ConicForm:
    r"""Lanckriet's MPM SOCP bounding :math:`\rho^*` (:meth:`M4Data.mpm_bound_problem`)."""
    return data["m4"].mpm_bound_problem()


def _sigmas(data: Mapping[str, Any], w: np.ndarray) -> tuple[float, float]:
    return data["m4"].sigmas(w)


def margins(data: Mapping[str, Any], w: np.ndarray, b: float) -> np.ndarray:
    r"""Signed Mahalanobis margins of every sample (:meth:`M4Data.margins`)."""
    return data["m4"].margins(w, b)


def certified_rho(data: Mapping[str, Any], w: np.ndarray, b: float) -> float:
    r"""The separable M4 objective at :math:`(w, b)` (:meth:`M4Data.certified_rho`)."""
    return data["m4"].certified_rho(w, b)


def slack_total(data: Mapping[str, Any], w: np.ndarray, b: float, rho: float) -> float:
    r"""The soft-margin penalty at :math:`(w, b)`, ``rho`` (:meth:`M4Data.slack_total`)."""
    return data["m4"].slack_total(w, b, rho)


# --------------------------------------------------------------------------------------
# decoding
# --------------------------------------------------------------------------------------
def _intercept(data: Mapping[str, Any], w: np.ndarray, b: float, s_pos: float,
               s_neg: float, rho: float) -> float:
    """Fix ``b`` where no kept row of one class (or of both) determines it."""
    Z, y, kept = data["Z"], data["y"], data["kept"]
    has_pos = bool(np.any(kept & (y > 0)))
    has_neg = bool(np.any(kept & (y < 0)))
    if has_pos and has_neg and math.isfinite(b):
        return b
    # the MPM intercept: equal Mahalanobis distances of the two means
    tot = s_pos + s_neg
    mx, my = float(w @ data["mean_pos"]), float(w @ data["mean_neg"])
    b_mpm = -(s_neg * mx + s_pos * my) / tot if tot > 0 else -0.5 * (mx + my)
    if not math.isfinite(b) or (not has_pos and not has_neg):
        return b_mpm
    # one class only: b may move freely away from it; stay as close to b_mpm as the
    # kept rows of that class allow without increasing their violation
    f = Z @ w
    if has_pos:
        lo = float(np.max((rho * s_pos - f)[kept & (y > 0)]))
        return max(b_mpm, min(lo, b))
    hi = float(np.min((-rho * s_neg - f)[kept & (y < 0)]))
    return min(b_mpm, max(hi, b))


def _decode(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    w = np.asarray(solution.values["w"], dtype=float)
    b_raw = solution.values.get("b")
    b = float(b_raw) if b_raw is not None and np.ndim(b_raw) == 0 else math.nan
    scale = float(data["d"] @ w)
    if not scale > 0:
        raise ProgramError(
            f"solver {solution.solver!r} returned w with w^T(x_mean - y_mean) = {scale:.3g} "
            "<= 0; cannot normalise"
        )
    w = w / scale
    b = b / scale
    s_pos, s_neg = _sigmas(data, w)
    rho = float(solution.values["rho"])
    b = _intercept(data, w, b, s_pos, s_neg, rho)
    marg = margins(data, w, b)
    tol = 1e-6 * max(1.0, abs(rho))
    model: dict[str, Any] = {
        "b": float(b),
        "rho": rho,
        "margins": marg,
        "support": np.flatnonzero(data["kept"] & (marg <= rho + tol)),
        "sigma_pos": s_pos,
        "sigma_neg": s_neg,
        "kept": data["kept"].copy(),
    }
    if data["eta_map"] is None:
        scale = data.get("feature_scale")  # internal coordinates -> the user's features
        model["w"] = w if scale is None else w / scale
    else:
        model["v"] = w
        model["dual_coef"] = data["eta_map"] @ w
    if not data["hard"]:
        model["slack"] = slack_total(data, w, b, rho)
    return model


def _certify(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""conicml's certificate of a separable or soft M4 point (``Program.certify``).

    The returned :math:`(w, b)` (normalised to :math:`w^\top d = 1`) is checked
    as a point of the fixed-:math:`\rho` SOCP in the Notes of :func:`m4`, with
    every auxiliary variable recomputed from it (:math:`s = \sigma(w)`, the
    optimal slacks; separable: :math:`\eta` = the smallest row), by the KKT
    conditions of that SOCP with multipliers fitted in O(data) and the cone's kink
    (a singular class covariance) checked by a subgradient with its dual-norm bound
    (:func:`conicml.certificates.margin.m4_fixed_rho_certificate`; no cvxpy problem
    is built):

    * separable: :math:`\rho` is recomputed as :func:`certified_rho` (a lower
      bound on :math:`\rho^*`); the point is optimal iff :math:`\eta = 0` is
      the optimum of :math:`F(\rho)`, i.e. iff the KKT conditions of the SOCP
      at that :math:`\rho` hold (:math:`F(\rho) = 0` exactly at
      :math:`\rho^*`), which catches a :math:`\rho` below the optimum whatever
      the solver claims;
    * soft: the inner slack SOCP at the returned :math:`\rho` is certified; the
      outer 1-D search over :math:`\rho` is checked for consistency only
      (``gap`` includes :math:`|G_{reported} - (\rho - C\,h)|`, relative),
      not for global optimality in :math:`\rho`.
    """
    w = np.asarray(solution.values.get("w", np.nan), dtype=float)
    b_raw = solution.values.get("b")
    rho_raw = solution.values.get("rho")
    if b_raw is None or rho_raw is None or w.shape != (data["Z"].shape[1],):
        return residuals(math.inf)
    scale = float(data["d"] @ w)
    if not scale > 0 or not np.all(np.isfinite(w)):
        return residuals(math.inf)
    w, b = w / scale, float(b_raw) / scale
    Z, y, kept = data["Z"], data["y"], data["kept"]
    if data["hard"]:
        rho = certified_rho(data, w, b)
        if not math.isfinite(rho):
            return residuals(0.0, math.nan, rel(float(solution.objective) - rho, 1.0))
        if rho <= 0:  # no positive margin: the point does not separate the kept rows
            return residuals(1.0, math.nan, math.nan)
        claim = rel(float(solution.objective) - rho, rho)
    else:
        rho = float(np.asarray(rho_raw))
        G = rho - data["C"] * slack_total(data, w, b, rho)
        claim = rel(float(solution.objective) - G, G, rho)
    res = m4_fixed_rho_certificate(
        Z, y, kept, data["R_pos"], data["R_neg"], data["d"], rho, w, b, hard=data["hard"],
        n_removed=data["n_removed"] if data["reduction"] is not None else None)
    gap = max(res.gap, claim) if math.isfinite(res.gap) else claim
    return residuals(res.primal, res.dual, gap)


def _description(data: Mapping[str, Any]) -> str:
    kern = data["kernel"].name
    parts = [f"{kern} kernel"]
    if data["C"] is not None:
        parts.append(f"C={data['C']:g}")
    if data["reduction"] is not None:
        parts.append(f"reduction nu={data['reduction']:g} ({data['n_removed']} removed)")
    head = "separable M4" if data["hard"] else "soft-margin M4"
    return f"{head} ({', '.join(parts)})"


@renamed_keywords(reg="ridge")
def m4(
    X: np.ndarray,
    y: np.ndarray,
    C: float | None = None,
    *,
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    ridge: float = 0.0,
    reduction: float | None = None,
    covariances: tuple[np.ndarray, np.ndarray] | None = None,
    factor_rtol: float = 1e-10,
    relative_ridge: float = 0.0,
) -> Program:
    r"""Maxi-Min Margin Machine (Huang 2004, ch. 4) as a sequential conic program.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training inputs; for ``kernel="precomputed"`` the (n, n) Gram matrix.
    y : ndarray of shape (n_samples,)
        Labels, exactly +1 (the thesis's class x) or -1, both present.
    C : float, "auto" or None, default=None
        ``"auto"``: a soft margin with the data-scaled :func:`auto_C`.
        ``None``: separable M4 (eqs. 4.1–4.5), kind ``"quasiconvex.m4"``,
        solved by ``dinkelbach-gfp`` (default) or ``bisection``; INFEASIBLE when the data
        are not linearly separable (in feature space). A positive float: soft
        margin (eqs. 4.16–4.18), kind ``"sequential.m4"``, in the units fixed by
        :math:`w^\top(\bar x - \bar y) = 1` (Notes).
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        Theorem 17 via the empirical kernel map (Notes).
    gamma, degree, coef0
        Kernel hyper-parameters (:func:`conicml.make_kernel`).
    ridge : float, default=0.0
        The covariance ridge (glossary): :math:`\Sigma + \mathrm{ridge}\,I` (linear) or
        :math:`+\mathrm{ridge}\,K` (kernel, Corollary 16; must be > 0 there). The old
        keyword ``reg`` works for one release (``FutureWarning``). An absolute
        :math:`\mathrm{ridge}\,I` is in the units of the features: it breaks the scale
        invariance of the linear model (use ``relative_ridge`` for that).
    reduction : float in [0, 1] or None, default=None
        Threshold :math:`\nu` of the reduction rule with the global MPM
        constraint (4.36); ``1`` removes every point (M4 becomes MPM).
    covariances : (cov_pos, cov_neg), optional
        Replace the plug-in covariances (linear kernel only), e.g. ``(I, I)``
        for the SVM special case.
    factor_rtol : float, default=1e-10
        Eigenvalues of :math:`K` below ``factor_rtol``·max are dropped from
        the empirical kernel map.
    relative_ridge : float, default=0.0
        A ridge relative to each feature's scale (linear kernel only):
        :math:`\Sigma \to \Sigma + \mathrm{ridge}\,I + r\,\mathrm{diag}(v)` for both
        classes (and for given ``covariances``), :math:`r` = ``relative_ridge``,
        :math:`v_j` the variance of column :math:`j` of ``X`` (a constant column takes
        the mean of the others). Under :math:`x \mapsto Dx` (:math:`D` positive diagonal)
        :math:`\Sigma + r\,\mathrm{diag}(v) \mapsto D(\Sigma + r\,\mathrm{diag}(v))D`, so
        :math:`w \mapsto D^{-1}w` and the decision values are unchanged: the model stays
        scale-invariant. The estimator's default is :math:`r = 10^{-6}`.

    Returns
    -------
    Program
        ``decode`` gives ``{"w" | "v", "dual_coef", "b", "rho", "margins",
        "support", "sigma_pos", "sigma_neg", "kept"}`` (+ ``"slack"`` for soft
        margins); positive iff :math:`w^\top x + b \ge 0`.

    Raises
    ------
    ProgramError
        Shape mismatch, NaN/inf, labels not ±1, one class, C <= 0, ridge < 0,
        ridge = 0 or relative_ridge > 0 with a non-linear kernel, reduction outside
        [0, 1], equal class means, unknown kernel.

    Notes
    -----
    Notation: :math:`d = \bar x - \bar y`,
    :math:`\sigma_x(w) = \sqrt{w^\top\Sigma_x w} = \|R_x w\|_2` with
    :math:`R_x^\top R_x = \Sigma_x` (and likewise for :math:`y`).

    **Separable M4** (eqs. 4.1–4.5): maximise the smallest class-specific
    Mahalanobis margin,

    .. math::

        \rho^* = \max_{w \ne 0, b}\ \min\Big\{
            \min_i \frac{w^\top x_i + b}{\sigma_x(w)},\
            \min_j \frac{-(w^\top y_j + b)}{\sigma_y(w)} \Big\},

    a generalised fractional (quasi-convex) program: for fixed :math:`\rho` the
    constraints are second-order cones. The check of Theorem 13 is ill-posed as
    printed (errata S004-P6: the sign of :math:`\tau` is flipped and a
    normalisation is missing); the corrected check (errata S004-A5) is the SOCP

    .. math::

        F(\rho) = \max_{w, b, \eta, s_x, s_y}\ \eta \quad\text{s.t.}\quad
        w^\top x_i + b - \rho s_x \ge t_x\eta,\quad
        -(w^\top y_j + b) - \rho s_y \ge t_y\eta,\quad
        \|R_x w\| \le s_x,\ \|R_y w\| \le s_y,\quad w^\top d = 1,

    with scales :math:`t_x = t_y = 1` for bisection (``dinkelbach-gfp`` sets them
    to the denominators of its previous iterate). The two epigraph variables
    :math:`s_x, s_y` replace the :math:`N` cones of Sec. 4.3 by two (for
    :math:`\rho \ge 0` the margin rows only tighten with :math:`s`, so
    :math:`s = \sigma(w)` at the optimum). The normalisation loses nothing
    (averaging the rows gives :math:`w^\top d \ge \rho(\sigma_x+\sigma_y) > 0`)
    and bounds :math:`\eta \le 1/(t_x+t_y)`. :math:`F` is convex and
    non-increasing, :math:`F(\rho^*) = 0`, and :math:`\rho` is feasible iff
    :math:`F(\rho) \ge 0`. Averaging the rows gives the MPM constraint (4.8), so
    :math:`\rho^* \le \kappa^*_{MPM}` (errata S004-D3): :math:`[0, \kappa^*_{MPM}]` is
    a valid bracket, and :math:`\rho = 0` is feasible iff the data are linearly
    separable (else the status is INFEASIBLE).

    Kind ``"quasiconvex.m4"``: ``build`` returns this inner problem with
    ``cp.Parameter`` s ``rho``, ``scale_pos``, ``scale_neg`` (DPP: compiled once,
    re-solved by the specialized solvers ``bisection`` and ``dinkelbach-gfp``);
    the generic backends do not accept the kind. **Objective** (every solver):
    :math:`\rho` of the returned hyperplane, recomputed from it (a certified
    lower bound on :math:`\rho^*`).

    **Soft margin** (eqs. 4.16–4.18, the bracket of (4.18) corrected, slack index
    :math:`y_{k-N_x}`):

    .. math::

        \max_{\rho, w, b, \xi}\ \rho - C\sum_k \xi_k \quad\text{s.t.}\quad
        w^\top x_i + b \ge \rho\,\sigma_x(w) - \xi_i,\quad
        -(w^\top y_j + b) \ge \rho\,\sigma_y(w) - \xi_{N_x+j},\quad \xi \ge 0,\quad
        w^\top d = 1.

    For fixed :math:`\rho` the slack problem :math:`h(\rho) = \min\sum_k\xi_k` is
    one SOCP (same epigraph trick); the outer problem maximises
    :math:`G(\rho) = \rho - C\,h(\rho)` by a 1-D line search (errata S004-A6). The
    normalisation :math:`w^\top d = 1` is required (otherwise the fixed-ρ SOCP
    collapses to :math:`w = b = \xi = 0`) and fixes the units of :math:`C`: a slack
    of 1 is the whole mean gap :math:`w^\top(\bar x - \bar y)`. The thesis states
    no range for :math:`\rho`; we search :math:`[0, \kappa^*_{MPM}]`: beyond
    :math:`\kappa^*_{MPM}` even the class means violate the margin, and
    :math:`G` grows without bound there as soon as
    :math:`C(N_x\sigma_x(w) + N_y\sigma_y(w)) < 1` for some :math:`w` with
    :math:`w^\top d = 1`. Reading of :math:`C` (derived here, not in the thesis): for a
    fixed :math:`w` the slope of :math:`G` in :math:`\rho` is
    :math:`1 - C\sum_{k\,\text{inside}}\sigma_{y_k}(w)`, so at the optimum about
    :math:`1/(C\sigma)` points lie inside the margin, as in a ν-SVM: a small :math:`C`
    returns :math:`\rho = \kappa^*_{MPM}` (an MPM-like hyperplane), a :math:`C` so
    large that fewer points than the training errors may lie inside returns
    :math:`\rho = 0` (the minimum-total-violation hyperplane), and interior solutions
    lie in between. Kind ``"sequential.m4"`` (``build``
    returns the fixed-ρ slack SOCP with the parameter ``rho``); **objective**
    :math:`G(\rho^*)`.

    **Reduction** (Sec. 4.3, eq. 4.36): keep a training point iff
    :math:`\nu_i = d_i^2/(1+d_i^2) \ge \nu` (:math:`d_i` its Mahalanobis distance
    to its own class mean under its class covariance); the moments still use every
    point, and the global MPM constraint
    :math:`w^\top(\bar x - \bar y) \ge \rho(\sigma_x+\sigma_y) - \xi_m` with
    weight :math:`(N - r)\,\xi_m` in the objective is added (with
    :math:`w^\top d = 1` its left side is 1). With :math:`\nu = 1` every point is
    removed and M4 is MPM (ρ = κ*_MPM, the MPM hyperplane; the intercept, which no
    remaining row fixes, is then the MPM one, :math:`b = -(\sigma_y w^\top\bar x +
    \sigma_x w^\top\bar y)/(\sigma_x + \sigma_y)`).

    **Kernel M4** (Sec. 4.4, Corollary 16, Theorem 17): with :math:`\gamma =
    \sum_i \eta_i\phi(z_i)`, the Theorem 17 program in :math:`\eta` is exactly the
    linear M4 on the empirical kernel map: with :math:`K = U_r\Lambda_r U_r^\top`
    (eigenvalues above ``factor_rtol``·max, :func:`conicml.kernels.psd_factor`)
    and features :math:`L = U_r\Lambda_r^{1/2}` (rows = training points),
    :math:`\eta = U_r\Lambda_r^{-1/2} v` gives :math:`K\eta = Lv` and
    :math:`\frac1{N_x}\eta^\top\tilde K_x^\top\tilde K_x\eta = v^\top\operatorname{Cov}(L_x)v`.
    This reparameterisation also avoids the rank-deficient coefficient space on
    which Clarabel fails (errata S004-§5.3). The covariance ridge ``ridge`` adds
    :math:`\mathrm{ridge}\cdot K` to both kernel covariances (the :math:`\rho K` of
    Corollary 16; :math:`\mathrm{ridge}\cdot I` in :math:`v`) and is **mandatory**
    for non-linear kernels: without it some direction has
    :math:`\sigma_x = \sigma_y = 0` and separates every point, so
    :math:`\rho^* = \infty` (errata S004-§5.3). Linear kernel:
    :math:`\Sigma + \mathrm{ridge}\,I`, or the scale-invariant
    :math:`\Sigma + r\,\mathrm{diag}(\operatorname{Var}X)` of ``relative_ridge``.
    Decision: :math:`f(z) = \sum_i \eta_i K(z, z_i) + b` (**+b**, Theorem 17).

    **Special cases** (tested): :math:`\Sigma_x = \Sigma_y = I` is the
    hard-margin SVM (same ρ = geometric margin and direction);
    :math:`\Sigma_x = \Sigma_y = \Sigma` is the QP (4.9)–(4.11),
    :func:`m4_shared_covariance`; :math:`\rho^*_{M4} \le \kappa^*_{MPM}`.

    **Decode** (every kind): ``"w"`` (linear; normalised to :math:`w^\top d = 1`),
    ``"b"``, ``"rho"``, ``"margins"`` (every sample's signed Mahalanobis margin
    :math:`y_i f(z_i)/\sigma_{y_i}(w)`), ``"support"`` (indices of kept points
    whose margin is within ``1e-6·max(1, ρ)`` of ρ or below), ``"sigma_pos"``,
    ``"sigma_neg"``, ``"kept"``; kernels add ``"dual_coef"`` (:math:`\eta`) and
    ``"v"``; soft margins add ``"slack"`` (:math:`\sum_k\xi_k + (N-r)\xi_m` at
    the returned point).
    """
    data = _prepare(X, y, C, kernel, gamma, degree, coef0, ridge, reduction, covariances,
                    factor_rtol, relative_ridge)
    return _m4_program(data)


def _m4_program(data: dict) -> Program:
    # soft margin: the secant on G' with envelope slopes needs ~3x fewer fixed-rho SOCPs
    # than the quadratic interpolation on values, for the same local maximum; hard
    # margin: the Dinkelbach GFP iteration converges superlinearly (about 6 SOCPs against
    # bisection's 10-17) and hands a program it cannot certify to bisection
    default = "dinkelbach-gfp" if data["hard"] else "envelope-newton"
    return Program(data["kind"], data, build=partial(inner_problem, rho=None),
                   certify=_certify, decode=_decode, default_solver=default,
                   description=_description(data))


def with_cost(program: Program, C: float) -> Program:
    """The same soft-margin M4 program (covariance factors, kernel map, reduction) at
    another C.

    For a path over C (:func:`conicml.solve_path`): the inputs are not validated again and
    the class covariance factors (or the empirical kernel map) are not computed again;
    only the slack weight of (4.16) changes.

    Raises
    ------
    ProgramError
        ``program`` is not a soft-margin program of :func:`m4`, or C <= 0.
    """
    data = dict(getattr(program, "data", {}))
    if data.get("kind") != KIND_SOFT or not isinstance(data.get("m4"), M4Data):
        raise ProgramError(f"with_cost needs a soft-margin M4 program from m4(), got "
                           f"{program!r}")
    C = check_positive(C, "C")
    data.update(m4=dataclasses.replace(data["m4"], C=C), C=C, C_auto=False)
    return _m4_program(data)


# --------------------------------------------------------------------------------------
# the equal-covariance special case: the QP (4.9)-(4.11)
# --------------------------------------------------------------------------------------
def _build_shared(data: Mapping[str, Any]) -> ConicForm:
    X, y, R = data["X"], data["y"], data["R"]
    w = cp.Variable(X.shape[1], name="w")
    b = cp.Variable(name="b")
    margin = cp.multiply(y, X @ w + b) >= 1
    problem = cp.Problem(cp.Minimize(cp.sum_squares(R @ w)), [margin])
    return ConicForm(problem, {"w": w, "b": b}, {"margin": margin})


def _decode_shared(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, kinds.M4_SHARED)
    w = np.asarray(solution.values["w"], dtype=float)
    b = float(solution.values["b"])
    sigma = float(np.linalg.norm(data["R"] @ w))
    rho = 1.0 / sigma if sigma > 0 else math.inf  # rho* = 1/sqrt(w^T Sigma w), eq. 4.11
    scale = float(data["d"] @ w)
    w, b = w / scale, b / scale
    f = data["y"] * (data["X"] @ w + b)
    s = sigma / scale
    marg = f / s if s > 0 else np.full(f.shape, math.inf)
    return {"w": w, "b": b, "rho": rho, "margins": marg,
            "support": np.flatnonzero(marg <= rho + 1e-6 * max(1.0, rho))}


def _certify_shared(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the QP (4.9)–(4.11) at :math:`(w, b)`, in O(data).

    No cvxpy problem is built. The Lagrangian of :math:`\min\|Rw\|^2` s.t.
    :math:`y_i(w^\top z_i + b) \ge 1` gives :math:`2\Sigma w = Z^\top(\alpha\circ y)`,
    :math:`y^\top\alpha = 0`, :math:`\alpha \ge 0`; the dual point implied by the
    margins (a bounded least-squares fit on the points at margin 1, balanced) has the
    dual value :math:`D(\alpha) = 1^\top\alpha - w_\alpha^\top\Sigma w_\alpha` with
    :math:`2\Sigma w_\alpha = Z^\top(\alpha\circ y)`, a lower bound on the optimum:
    ``gap`` is :math:`(P - D)/P`, ``dual`` its stationarity part
    :math:`\|R(w - w_\alpha)\|^2/P`, ``primal`` the largest relative margin violation
    (:func:`conicml.certificates.margin.margin_qp_certificate`).
    """
    try:
        w = np.asarray(solution.values["w"], dtype=float).ravel()
        b = float(np.asarray(solution.values["b"], dtype=float))
    except (KeyError, TypeError, ValueError):
        return residuals(math.inf)
    X, y, R = data["X"], data["y"], data["R"]
    if w.shape != (X.shape[1],) or not (np.all(np.isfinite(w)) and math.isfinite(b)):
        return residuals(math.inf)
    res, _ = margin_qp_certificate(X, y, np.full(y.size, np.inf), w, b, None,
                                   float(solution.objective), R=R)
    return res


def m4_shared_covariance(X: np.ndarray, y: np.ndarray,
                         cov: np.ndarray | None = None) -> Program:
    r"""M4 with one covariance for both classes: the QP (4.9)–(4.11).

    .. math::

        \min_{w, b}\ w^\top\Sigma w \quad\text{s.t.}\quad
        y_i(w^\top z_i + b) \ge 1, \qquad \rho^* = 1/\sqrt{w^{*\top}\Sigma w^*},

    kind ``"qp.m4.shared"`` (generic backends; objective :math:`w^\top\Sigma w`).
    ``cov=None`` uses :math:`\Sigma = I`, the hard-margin SVM (Sec. 4.1.2).
    ``decode`` gives ``"w"``, ``"b"`` normalised to :math:`w^\top d = 1`,
    ``"rho"``, ``"margins"``, ``"support"``. Infeasible on non-separable data.
    """
    X, y = check_X_y(X, y)
    p = X.shape[1]
    R = np.eye(p) if cov is None else _sym_factor(cov, p, "cov")
    d = X[y > 0].mean(axis=0) - X[y < 0].mean(axis=0)
    data = {"X": X, "y": y, "R": R, "d": d}
    return Program(kinds.M4_SHARED, data, build=_build_shared, decode=_decode_shared,
                   certify=_certify_shared,
                   default_solver="clarabel",
                   description="M4 with a shared covariance (QP 4.9)")


def decision_values(data: Mapping[str, Any], model: Mapping[str, Any],
                    X_new: np.ndarray) -> np.ndarray:
    r"""Decision values :math:`f(z) = w^\top z + b` or :math:`\sum_i\eta_iK(z, z_i) + b`.

    ``data`` is ``program.data``; for a precomputed kernel ``X_new`` holds the
    kernel values against all training samples, shape (m, n).
    """
    X_new = np.asarray(X_new, dtype=float)
    if "w" in model:
        return X_new @ model["w"] + model["b"]
    kern: Kernel = data["kernel"]
    K = kern(X_new, data["X"])
    return K @ model["dual_coef"] + model["b"]
