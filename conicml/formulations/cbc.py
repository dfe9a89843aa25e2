r"""Cluster-based chance-constrained classification, CBC-SOCP (seed 003 ch. 3, 6, App. B).

Each class is summarised by clusters; every cluster :math:`j` is a sphere
:math:`B(\mu_j, r_j)` that must lie on its side of the hyperplane with
probability :math:`\eta` (Theorem 3.1). :func:`cbc` builds CBC-SOCP (3.7) and its
dual (3.11) (kinds ``"socp.chance.cbc[.hard].primal|dual"``), :func:`cbc_w` the
W-form (B.1) and its kernel dual (B.2) (``"socp.chance.cbc_w.primal|dual"``), and
:func:`cbc_radii` the robust radii RCBC1/RCBC2 of chapter 6. The duals are also
solved by the specialized ``cbc-smo``.

Package convention: :math:`f(x) = w^\top\phi(x) + b`, positive iff
:math:`f(x) \ge 0`; the thesis's threshold is :math:`-b` here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np
from scipy import optimize, stats

from .. import kinds
from .._utils.deprecation import renamed_keywords
from .._utils.validation import check_positive
from ..certificates.chance import (
    SLACK_FLOOR,
    best_offset,
    best_scale,
    bracket,
    claimed_gap,
    dual_of,
    missing,
    row_violation,
    values_of,
)
from ..certificates.conic import PRIMAL_FLOOR, conic_certificate, residuals
from ..certificates.kkt import bias_from_kkt, solver_accuracy
from ..contracts.cbc import CBCDualData
from ..exceptions import ProgramError
from ..kernels import Kernel, make_kernel, psd_factor
from ..moments import ClusterMoments
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution

__all__: list[str] = []

# Cluster-based classification, CBC-SOCP (ch. 3), its W-form and kernel dual
# (App. B) and robust CBC (ch. 6); errata S003-F2, S003-P7..P15, S003-A5.
#
# Convention: decision f(x) = w.phi(x) + b, positive iff f(x) >= 0. The thesis writes
# w.x - b, so every thesis b equals -b here; the constraints below are written directly in
# the package convention, y_j (w.mu_j + b) >= ...
#
# Cluster-based classifiers (seed 003 ch. 3, ch. 6, App. B).
#
# Every cluster :math:`j` of one class is modelled as :math:`X_j \sim (\mu_j,
# \sigma_j^2 I)` with label :math:`y_j`; its chance constraint
# :math:`P(y_j(w^\top X_j + b) \ge 1 - \xi_j) \ge \eta` is implied by the
# second-order cone constraint (eq. 3.4, Theorem 3.1)
#
# .. math::
#
#     y_j(w^\top\mu_j + b) \ge 1 - \xi_j + r_j\|w\|_2, \qquad r_j = \kappa\sigma_j,
#
# with :math:`\kappa = \sqrt{\eta/(1-\eta)}` (``bound="chebyshev"``) or
# :math:`\Phi^{-1}(\eta)` (``bound="gaussian"``, Gaussian clusters, ch. 6). The
# radius :math:`r_j` of the sphere :math:`B(\mu_j, r_j)` is what every program
# below depends on; the robust variants only change it.
#
# **CBC-SOCP (3.7)**, kind ``"socp.chance.cbc.primal"``:
#
# .. math::
#
#     \min_{w,b,\xi,t}\ \tfrac12 t^2 + C\sum_j \xi_j \quad\text{s.t.}\quad
#     y_j(w^\top\mu_j + b) \ge 1 - \xi_j + r_j t,\ \xi_j \ge 0,\ \|w\|_2 \le t.
#
# **Its dual (3.11)**, kind ``"socp.chance.cbc.dual"``, written as a maximisation so
# that primal and dual report the same optimal value:
#
# .. math::
#
#     \max_{\alpha,\lambda}\ \sum_j\alpha_j - \tfrac12(\lambda - r^\top\alpha)^2
#     \quad\text{s.t.}\quad \Big\|\sum_j\alpha_jy_j\mu_j\Big\|_2 \le \lambda,\
#     y^\top\alpha = 0,\ 0 \le \alpha_j \le C.
#
# ``C=None`` gives the hard-margin variant (3.13) (kinds
# ``"socp.chance.cbc.hard.primal|dual"``; no :math:`\xi`, no upper bound on
# :math:`\alpha`), infeasible when the spheres cannot be separated.
#
# **W-form (B.1)**, kind ``"socp.chance.cbc_w.primal"``: :math:`\|w\| \le W` is fixed,
#
# .. math::
#
#     \min_{w,b,\xi}\ \sum_j\xi_j \quad\text{s.t.}\quad
#     y_j(w^\top\mu_j + b) \ge 1 - \xi_j + r_jW,\ \xi_j \ge 0,\ \|w\|_2 \le W,
#
# and **its dual (B.2)**, kind ``"socp.chance.cbc_w.dual"`` (again as a maximisation):
#
# .. math::
#
#     \max_\alpha\ d^\top\alpha - W\sqrt{\alpha^\top Q\alpha}\quad\text{s.t.}\quad
#     0 \le \alpha \le 1,\ y^\top\alpha = 0,\qquad
#     Q_{ij} = y_iy_jk(\mu_i,\mu_j),\ d_j = 1 + r_jW
#
# (the thesis prints :math:`d_j = 1 + \kappa\sigma_jW`, correct only for the
# linear kernel; errata S003-P14).
#
# **Kernels** (``"linear"``, ``"rbf"``): only the cluster *means* are mapped,
# :math:`\mu_j \to \phi(\mu_j)`, and for the Gaussian kernel
# :math:`k(x,z) = \exp(-\gamma\|x-z\|^2)` the sphere radius becomes
# :math:`r_j = \sqrt{2(1 - \exp(-\gamma r_j^2))}` (App. B; errata S003-P14),
# since :math:`\|x-\mu\|\le r \Rightarrow \|\phi(x)-\phi(\mu)\|\le` that value.
# The primal is written over the span of the means through a factor
# :math:`K = LL^\top` (:func:`conicml.kernels.psd_factor`), as in
# :mod:`conicml.formulations.svm`.
#
# **Decoding** (every kind, from :math:`\alpha` alone; errata S003-F2,
# [derived, verified]): with :math:`v = \sum_j\alpha_jy_j\phi(\mu_j)`,
#
# * C-form: :math:`\lambda = \max(\|v\|, r^\top\alpha)`, :math:`t = \lambda -
#   r^\top\alpha`, :math:`w = (t/\lambda)v`;
# * W-form: :math:`t = W`, :math:`w = (W/\|v\|)v` (eq. B.3 with the labels, the
#   corrected form of the thesis's :math:`Q_x`);
# * :math:`b` from the KKT conditions (3.12)/(B.4): with :math:`G_j = y_jw^\top\phi(\mu_j)
#   - 1 - r_jt` (the gradient of the minimised dual),
#   :math:`b = -y_jG_j` on every free :math:`0 < \alpha_j < U`, else the midpoint of
#   the interval the bound multipliers allow (as for the SVM).
#
# ``decode`` returns ``w`` (linear kernel), ``b``, ``alpha``, ``dual_coef``
# (:math:`f(x) = \sum_j \text{dual\_coef}_j k(\mu_j, x) + b`), ``support``,
# ``xi``, ``t`` (:math:`\|w\|`), ``radii`` and ``primal_objective``.
#
# **Robust CBC (ch. 6)**: :func:`cbc_radii` with ``robust="R1"`` replaces
# :math:`\kappa\sigma_j` by :math:`p_j(\sqrt c) + \kappa r_j(\sqrt c)` (Theorem 6.1,
# eq. 6.7: Hotelling's :math:`T^2` ball for the mean and Cochran's
# :math:`\chi^2` interval for the variance, each at confidence :math:`\sqrt c`,
# unbiased estimates, needs :math:`m_j > n`); ``robust="R2"`` by
# :math:`\kappa\sigma_j^* + g_j^*\hat\sigma_j` (Theorem 6.2, eq. 6.15, the joint
# asymptotic confidence set of the MLEs, with :math:`\sigma_j^{*2}` the root of the
# cubic (6.20), see :func:`sigma_star`). Both use the per-dimension variance
# (errata S003-P7, S003-P8) whatever the clusters' ``sigma`` convention.

__all__ += [
    "CBC_KINDS",
    "cbc",
    "cbc_decision_values",
    "cbc_kappa",
    "cbc_model_from_alpha",
    "cbc_radii",
    "cbc_w",
    "hotelling_radius",
    "r1_radii",
    "r2_radii",
    "sigma_star",
    "variance_bounds",
]

CBC_KINDS = (kinds.CBC_PRIMAL, kinds.CBC_DUAL, kinds.CBC_HARD_PRIMAL, kinds.CBC_HARD_DUAL,
             kinds.CBC_W_PRIMAL, kinds.CBC_W_DUAL)
CBC_FORMS = ("primal", "dual")
CBC_BOUNDS = ("chebyshev", "gaussian")
CBC_KERNELS = ("linear", "rbf")
CBC_ROBUST = (None, "R1", "R2")


@renamed_keywords(eta="accuracy")
def cbc_kappa(accuracy: float, bound: str = "chebyshev") -> float:
    r"""Multiplier :math:`\kappa` of the chance constraint at accuracy level ``accuracy``.

    ``accuracy`` is the thesis's :math:`\eta` (eq. 3.2), a lower bound on the
    probability of the right side (old keyword ``eta``, deprecated).

    ``"chebyshev"``: :math:`\sqrt{\eta/(1-\eta)}` (eq. 3.4, any distribution);
    ``"gaussian"``: :math:`\Phi^{-1}(\eta)` (Gaussian clusters, ch. 6), which
    needs :math:`\eta \ge 1/2` (a negative :math:`\kappa` would make the
    constraint non-convex; errata S003-P1, S003-P11).
    """
    eta = accuracy
    if isinstance(eta, bool) or not isinstance(eta, (int, float, np.floating, np.integer)):
        raise ProgramError(f"accuracy must be a number in (0, 1), got {eta!r}")
    eta = float(eta)
    if not 0.0 < eta < 1.0:
        raise ProgramError(f"accuracy must lie in (0, 1) (a lower bound on the probability "
                           f"of the right side), got {eta!r}")
    if bound == "chebyshev":
        return float(np.sqrt(eta / (1.0 - eta)))
    if bound == "gaussian":
        if eta < 0.5:
            raise ProgramError(
                f"bound='gaussian' needs accuracy >= 0.5 (Phi^-1(accuracy) < 0 would make the "
                f"cone constraint non-convex), got accuracy={eta!r}; raise accuracy or use "
                "bound='chebyshev'"
            )
        return float(stats.norm.ppf(eta))
    raise ProgramError(f"bound must be one of {CBC_BOUNDS}, got {bound!r}")


# -- robust radii (ch. 6) ----------------------------------------------------------------
def hotelling_radius(m: np.ndarray, var_unbiased: np.ndarray, n: int,
                     confidence: float) -> np.ndarray:
    r"""Radius :math:`p_j(c)` of the mean's confidence ball, eq. (6.3).

    :math:`p_j^2 = \frac{(m_j-1)n}{(m_j-n)m_j}\hat\sigma_j^2 F_{n,m_j-n}(c)`
    with the unbiased per-dimension variance :math:`\hat\sigma_j^2`; needs
    :math:`m_j > n`.
    """
    m = np.asarray(m, dtype=float)
    if np.any(m <= n):
        raise ProgramError(
            f"robust='R1' (Hotelling's T^2) needs more points than dimensions in every "
            f"cluster (m_j > n = {n}); smallest cluster has {int(m.min())}: use larger "
            "clusters (larger BIRCH threshold / fewer clusters) or robust='R2'"
        )
    f = stats.f.ppf(confidence, n, m - n)
    return np.sqrt((m - 1.0) * n / ((m - n) * m) * np.asarray(var_unbiased) * f)


def variance_bounds(m: np.ndarray, var_unbiased: np.ndarray,
                    confidence: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Cochran's interval :math:`(q_j^2(c), r_j^2(c))` for :math:`\sigma_j^2`, eq. (6.4).

    :math:`(m_j-1)\hat\sigma_j^2/\sigma_j^2 \sim \chi^2_{m_j-1}`, so
    :math:`q_j^2 = (m_j-1)\hat\sigma_j^2/\chi^2_{m_j-1}(1-(1-c)/2)` and
    :math:`r_j^2 = (m_j-1)\hat\sigma_j^2/\chi^2_{m_j-1}((1-c)/2)`. Returns the
    variances :math:`(q_j^2, r_j^2)`.
    """
    m = np.asarray(m, dtype=float)
    v = np.asarray(var_unbiased, dtype=float)
    alpha = (1.0 - confidence) / 2.0
    return ((m - 1.0) * v / stats.chi2.ppf(1.0 - alpha, m - 1.0),
            (m - 1.0) * v / stats.chi2.ppf(alpha, m - 1.0))


def sigma_star(m: float, n: int, var_hat: float, kappa: float, f: float) -> float:
    r"""Root :math:`z^* = \sigma^{*2} > \hat\sigma^2` of the cubic (6.20) (Theorem 6.2).

    .. math::

        2mn^2z^3 + mn\hat\sigma^2(\kappa^2 - 4n)z^2 + 2mn\hat\sigma^4(n-\kappa^2)z
        + \kappa^2\hat\sigma^6(nm - 2f) = 0,

    solved by bracketed root finding (:func:`scipy.optimize.brentq`) on its
    monotone form :math:`nm(2nz + \kappa^2\hat\sigma^2)(z-\hat\sigma^2)^2 =
    2\kappa^2\hat\sigma^6f`, which has exactly one root in
    :math:`(\hat\sigma^2, \hat\sigma^2(1 + \sqrt{2f/(nm)})]` (errata S003-A5;
    Claim 1, with the corrected :math:`p(\hat\sigma^2) = -2\kappa^2\hat\sigma^6f`).
    Returns :math:`z^*` (a variance); :math:`\hat\sigma^2` if :math:`\kappa = 0`
    or :math:`\hat\sigma = 0`.
    """
    s2 = float(var_hat)
    if s2 <= 0.0 or kappa == 0.0:
        return s2

    def p(z: float) -> float:
        return n * m * (2.0 * n * z + kappa**2 * s2) * (z - s2) ** 2 - 2.0 * kappa**2 * s2**3 * f

    lo, hi = s2, s2 * (1.0 + np.sqrt(2.0 * f / (n * m)))
    while p(hi) < 0.0:  # the bracket is proven; this only guards against round-off
        hi *= 1.0 + 1e-9
    return float(optimize.brentq(p, lo, hi, xtol=1e-15 * hi, rtol=4 * np.finfo(float).eps))


def r1_radii(m: np.ndarray, var_unbiased: np.ndarray, n: int, kappa: float,
             confidence: float) -> np.ndarray:
    r"""RCBC1 radii :math:`p_j(\sqrt c) + \kappa\,r_j(\sqrt c)` (Theorem 6.1, eq. 6.7)."""
    c = np.sqrt(confidence)
    _, r2 = variance_bounds(m, var_unbiased, c)
    return hotelling_radius(m, var_unbiased, n, c) + kappa * np.sqrt(r2)


def r2_radii(m: np.ndarray, var_mle: np.ndarray, n: int, kappa: float,
             confidence: float) -> np.ndarray:
    r"""RCBC2 radii :math:`\kappa\sigma_j^* + g_j^*\hat\sigma_j` (Theorem 6.2, eq. 6.15).

    :math:`g^* = \sqrt{2nf\sigma^{*2}/(m(2n\sigma^{*2} + \kappa^2\hat\sigma^2))}`,
    :math:`f = \chi^2_{n+1}(c)`, MLE per-dimension variances :math:`\hat\sigma_j^2`.
    A cluster with :math:`\hat\sigma_j = 0` (a single point) gets radius 0: the
    asymptotic set degenerates there.
    """
    f = float(stats.chi2.ppf(confidence, n + 1))
    m = np.asarray(m, dtype=float)
    var_mle = np.asarray(var_mle, dtype=float)
    out = np.zeros(m.shape)
    for j in range(m.size):
        s2 = var_mle[j]
        if s2 <= 0.0:
            continue
        z = sigma_star(m[j], n, s2, kappa, f)
        g = np.sqrt(2.0 * n * f * z / (m[j] * (2.0 * n * z + kappa**2 * s2)))
        out[j] = kappa * np.sqrt(z) + g * np.sqrt(s2)
    return out


@renamed_keywords(eta="accuracy")
def cbc_radii(clusters: ClusterMoments, accuracy: float, *, bound: str = "chebyshev",
              robust: str | None = None, confidence: float = 0.9) -> np.ndarray:
    r"""Input-space sphere radii of every cluster.

    ``robust=None``: :math:`\kappa\sigma_j` in the clusters' own ``sigma``
    convention (ch. 3: ``"trace"``). ``"R1"`` / ``"R2"``: the ch. 6 radii from
    the per-dimension variance (MLE :math:`\hat\sigma_j^2`, unbiased
    :math:`\frac{m_j}{m_j-1}\hat\sigma_j^2` for R1), at confidence ``confidence``
    :math:`= c = 1-\delta` (the thesis's "δ = 0.9" means c = 0.9; errata S003-P9).
    """
    kappa = cbc_kappa(accuracy, bound)
    if robust is None:
        return kappa * clusters.sigmas
    if robust not in ("R1", "R2"):
        raise ProgramError(f"robust must be None, 'R1' or 'R2', got {robust!r}")
    if isinstance(confidence, bool) or not 0.0 < float(confidence) < 1.0:
        raise ProgramError(f"confidence must lie in (0, 1), got {confidence!r}")
    n = clusters.dim
    var = clusters.sigmas**2
    if clusters.sigma == "trace":
        var = var / n  # per-dimension MLE variance (errata S003-P7)
    m = clusters.counts.astype(float)
    if robust == "R2":
        return r2_radii(m, var, n, kappa, float(confidence))
    if np.any(m < 2):
        raise ProgramError("robust='R1' needs at least 2 points per cluster")
    return r1_radii(m, var * m / (m - 1.0), n, kappa, float(confidence))


# -- programs -----------------------------------------------------------------------------
def _cbc_data(clusters: Any, eta: float, bound: str, kernel: str, gamma: float | str,
              robust: str | None, confidence: float, form: str, factor: str) -> dict:
    if not isinstance(clusters, ClusterMoments):
        raise ProgramError(
            "clusters must be a conicml.ClusterMoments (e.g. ClusterMoments.from_data(X, y)), "
            f"got {type(clusters).__name__}"
        )
    y = clusters.labels
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ProgramError(
            f"cluster labels must be +1/-1, got {np.unique(y)[:10].tolist()}; "
            "cluster each class of a binary problem separately"
        )
    if np.unique(y).size < 2:
        raise ProgramError("clusters of both classes (+1 and -1) are needed")
    if form not in CBC_FORMS:
        raise ProgramError(f"form must be 'primal' or 'dual', got {form!r}")
    if kernel not in CBC_KERNELS:
        raise ProgramError(
            f"cluster-based programs support kernel 'linear' or 'rbf' (the sphere radius "
            f"needs k(x, x) constant), got {kernel!r}"
        )
    if factor not in ("auto", "cholesky", "eigen"):
        raise ProgramError(f"factor must be 'auto', 'cholesky' or 'eigen', got {factor!r}")
    radii_in = cbc_radii(clusters, eta, bound=bound, robust=robust, confidence=confidence)
    kern = make_kernel(kernel, clusters.means, gamma=gamma)
    if kern.name == "rbf":
        # ||x - mu|| <= r  =>  ||phi(x) - phi(mu)|| <= sqrt(2 (1 - exp(-gamma r^2)))  (App. B)
        radii = np.sqrt(2.0 * (1.0 - np.exp(-kern.gamma * radii_in**2)))
    else:
        radii = radii_in
    return {"means": clusters.means, "y": y, "radii": radii, "input_radii": radii_in,
            "kappa": cbc_kappa(eta, bound), "eta": float(eta), "bound": bound,
            "robust": robust, "confidence": confidence, "kernel": kern, "form": form,
            "factor": factor, "counts": clusters.counts}


def _cluster_costs(y: np.ndarray, C: float | None, class_weight: object) -> np.ndarray | None:
    """Per-cluster slack costs ``C * class_weight[y_j]`` (``None``: all equal to ``C``)."""
    if class_weight is None:
        return None
    if C is None:
        raise ProgramError("class_weight needs a finite C (the hard margin has no slack)")
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ProgramError(f"class_weight must be None, 'balanced' or a dict "
                               f"{{+1: w, -1: w}}, got {class_weight!r}")
        k_pos, k_neg = float(np.sum(y > 0)), float(np.sum(y < 0))
        weights = {1.0: y.size / (2.0 * k_pos), -1.0: y.size / (2.0 * k_neg)}
    elif isinstance(class_weight, Mapping):
        extra = set(map(float, class_weight)) - {1.0, -1.0}
        if extra:
            raise ProgramError(f"class_weight keys must be +1 and -1, got {sorted(extra)}")
        weights = {1.0: 1.0, -1.0: 1.0}
        for label, value in class_weight.items():
            weights[float(label)] = check_positive(value, f"class_weight[{label!r}]")
    else:
        raise ProgramError(f"class_weight must be None, 'balanced' or a dict {{+1: w, -1: w}}, "
                           f"got {class_weight!r}")
    return C * np.where(y > 0, weights[1.0], weights[-1.0])


def _cbc_factor(data: Mapping[str, Any]) -> np.ndarray:
    kern: Kernel = data["kernel"]
    if kern.name == "linear":
        return data["means"]
    return psd_factor(kern.gram(data["means"]), data["factor"])


def cbc_kernel_matvec(data: Mapping[str, Any], coef: np.ndarray) -> np.ndarray:
    """:math:`K c` over the cluster means (:meth:`CBCDualData.kernel_matvec`)."""
    return data["cbc"].kernel_matvec(coef)


def _build_cbc_primal(data: Mapping[str, Any]) -> ConicForm:
    y, r, C = data["y"], data["radii"], data["C"]
    b = cp.Variable(name="b")
    t = cp.Variable(name="t")
    if data["kernel"].name == "linear":
        w = cp.Variable(data["means"].shape[1], name="w")
        f = data["means"] @ w + b
        variables = {"w": w, "b": b, "t": t}
    else:
        L = _cbc_factor(data)
        w = cp.Variable(L.shape[1], name="v")
        f = L @ w + b
        variables = {"v": w, "b": b, "t": t}
    cone = cp.norm(w, 2) <= t  # (3.7)
    if data["hard"]:
        margin = cp.multiply(y, f) >= 1 + r * t  # (3.13) with mu_j (thesis typo x_j)
        objective = 0.5 * cp.square(t)
        constraints = {"margin": margin, "cone": cone}
    else:
        xi = cp.Variable(y.size, name="xi")
        margin = cp.multiply(y, f) >= 1 - xi + r * t  # (3.7)
        costs = C if data.get("costs") is None else data["costs"]
        objective = 0.5 * cp.square(t) + cp.sum(cp.multiply(costs, xi))
        constraints = {"margin": margin, "xi_nonneg": xi >= 0, "cone": cone}
        variables["xi"] = xi
    problem = cp.Problem(cp.Minimize(objective), list(constraints.values()))
    return ConicForm(problem, variables, constraints)


def _build_cbc_dual(data: Mapping[str, Any]) -> ConicForm:
    y, r = data["y"], data["radii"]
    L = _cbc_factor(data)
    alpha = cp.Variable(y.size, name="alpha")
    lam = cp.Variable(name="lam")
    # (3.11), maximised: sum(alpha) - 1/2 (lambda - kappa sigma^T alpha)^2
    objective = cp.sum(alpha) - 0.5 * cp.square(lam - r @ alpha)
    constraints = {"cone": cp.norm(L.T @ cp.multiply(y, alpha), 2) <= lam,
                   "alpha_nonneg": alpha >= 0, "balance": y @ alpha == 0}
    if not data["hard"]:
        constraints["alpha_upper"] = alpha <= (data["C"] if data.get("costs") is None
                                               else data["costs"])
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha, "lam": lam}, constraints)


def _build_cbc_w_primal(data: Mapping[str, Any]) -> ConicForm:
    y, r, W = data["y"], data["radii"], data["W"]
    b = cp.Variable(name="b")
    xi = cp.Variable(y.size, name="xi")
    if data["kernel"].name == "linear":
        w = cp.Variable(data["means"].shape[1], name="w")
        f = data["means"] @ w + b
        variables = {"w": w, "b": b, "xi": xi}
    else:
        L = _cbc_factor(data)
        w = cp.Variable(L.shape[1], name="v")
        f = L @ w + b
        variables = {"v": w, "b": b, "xi": xi}
    constraints = {
        "margin": cp.multiply(y, f) >= 1 - xi + r * W,  # (B.1)
        "xi_nonneg": xi >= 0,
        "cone": cp.norm(w, 2) <= W,
    }
    costs = 1.0 if data.get("costs") is None else data["costs"]
    problem = cp.Problem(cp.Minimize(cp.sum(cp.multiply(costs, xi))),
                         list(constraints.values()))
    return ConicForm(problem, variables, constraints)


def _build_cbc_w_dual(data: Mapping[str, Any]) -> ConicForm:
    y, W = data["y"], data["W"]
    L = _cbc_factor(data)
    alpha = cp.Variable(y.size, name="alpha")
    d = 1.0 + data["radii"] * W  # d_j = 1 + r_j W (erratum: not kappa sigma_j W for rbf)
    objective = d @ alpha - W * cp.norm(L.T @ cp.multiply(y, alpha), 2)  # -(B.2)
    upper = 1.0 if data.get("costs") is None else data["costs"]
    constraints = {"alpha_nonneg": alpha >= 0, "alpha_upper": alpha <= upper,
                   "balance": y @ alpha == 0}
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha}, constraints)


def cbc_upper(data: Mapping[str, Any]) -> float:
    """Upper bound :math:`U` of the dual box: ``C`` (C-form), 1 (W-form), inf (hard)."""
    return data["cbc"].upper


def cbc_scale(data: Mapping[str, Any], alpha: np.ndarray,
              p: np.ndarray) -> tuple[float, float, float]:
    r"""``(scale, t, vnorm)`` with :math:`w = \text{scale}\cdot v` (:meth:`CBCDualData.scale`)."""
    return data["cbc"].scale(alpha, p)


def cbc_bias(alpha: np.ndarray, y: np.ndarray, upper: float, score: np.ndarray,
             accuracy: float = 0.0) -> float:
    r"""Bias from the KKT conditions: mean of ``score`` :math:`= -y_jG_j` over free
    :math:`\alpha_j`, else the midpoint of the interval the bounds allow
    (:func:`conicml.certificates.kkt.bias_from_kkt`, shared with the SVM)."""
    return bias_from_kkt(alpha, y, upper, score, accuracy)


def cbc_model_from_alpha(data: Mapping[str, Any], alpha: np.ndarray, *,
                         b: float | None = None, accuracy: float = 0.0) -> dict:
    """Decode ``alpha`` of any CBC kind into the model (:meth:`CBCDualData.model_from_alpha`)."""
    return data["cbc"].model_from_alpha(alpha, b=b, accuracy=accuracy)


def _decode_cbc_dual(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    return cbc_model_from_alpha(data, solution.values["alpha"],
                                accuracy=solver_accuracy(solution))


def _decode_cbc_primal(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    if "margin" not in solution.duals:
        raise ProgramError(
            f"solver {solution.solver!r} returned no multipliers for the margin constraints; "
            "the primal decode needs them for the dual coefficients"
        )
    alpha = np.maximum(np.asarray(solution.duals["margin"], dtype=float), 0.0)
    model = cbc_model_from_alpha(data, alpha, b=float(solution.values["b"]))
    if "w" in solution.values:  # linear kernel: (w, b) straight from the primal point
        w = np.asarray(solution.values["w"], dtype=float)
        t = float(data["W"]) if "W" in data else float(np.linalg.norm(w))
        xi = np.maximum(0.0, 1.0 + data["radii"] * t
                        - data["y"] * (data["means"] @ w + model["b"]))
        model.update(w=w, t=t, xi=xi)
        if "W" in data:
            model["primal_objective"] = float(np.sum(data["cbc"].upper * xi))
        else:
            model["primal_objective"] = 0.5 * t * t + (
                0.0 if data["hard"] else float(np.sum(data["cbc"].upper * xi)))
    return model


# -- certificates: a primal/dual bracket in O(k^2), no cvxpy problem ---------------------
def _cbc_upper_bound(cbc: CBCDualData, g: np.ndarray, t: float) -> float:
    r"""Objective of (3.7)/(3.13)/(B.1) at the best feasible point with scores ``g``.

    ``g`` are :math:`w^\top\phi(\mu_j)` of a hyperplane with :math:`\|w\| = t`
    (:math:`t \le W` for the W-form). The slacks are recomputed and the offset is
    the exact minimiser of :math:`\sum_j\xi_j(b)`
    (:func:`~conicml.certificates.chance.best_offset`), so the value is attained by a
    feasible point: an upper bound on the optimum.
    Hard margin (3.13): the constraints :math:`y_j(w^\top\phi(\mu_j) + b) - r_jt \ge 1`
    are homogeneous in :math:`(w, b)`, so with the best margin
    :math:`m = \max_b\min_j [y_j(g_j + b) - r_jt]` the point :math:`(w, b)/m` is
    feasible with value :math:`t^2/(2m^2)` (:math:`+\infty` if :math:`m \le 0`).
    """
    y, r = cbc.y, cbc.radii
    if cbc.W is not None:  # (B.1): sum_j c_j xi_j with ||w|| <= W (c_j = 1 unweighted)
        return best_offset(1.0 + r * float(cbc.W) - y * g, y, cbc.upper)[1]
    if cbc.hard:
        m = 0.5 * (float(np.min((g - r * t)[y > 0])) + float(np.min((-g - r * t)[y < 0])))
        return 0.5 * t * t / (m * m) if m > 0 else math.inf
    # (3.7): 1/2 t^2 + sum_j C_j xi_j (C_j = C unweighted)
    return 0.5 * t * t + best_offset(1.0 + r * t - y * g, y, cbc.upper)[1]


def _cbc_dual_value(cbc: CBCDualData, alpha: np.ndarray, p: np.ndarray,
                    lam: float | None = None) -> float:
    r"""Value of the dual (3.11) / (B.2) at ``alpha`` (``p`` :math:`= K(\alpha\circ y)`).

    (B.2): :math:`d^\top\alpha - W\|v\|`, :math:`d_j = 1 + r_jW`; (3.11):
    :math:`\mathbf 1^\top\alpha - \tfrac12(\lambda - r^\top\alpha)^2` at the given
    :math:`\lambda` (feasible when :math:`\lambda \ge \|v\|`), by default the optimal
    :math:`\lambda = \max(\|v\|, r^\top\alpha)`.
    """
    vnorm = math.sqrt(max(float((alpha * cbc.y) @ p), 0.0))
    if cbc.W is not None:
        W = float(cbc.W)
        return float((1.0 + cbc.radii * W) @ alpha) - W * vnorm
    ra = float(cbc.radii @ alpha)
    lam = max(vnorm, ra) if lam is None else lam
    return float(alpha.sum()) - 0.5 * (lam - ra) ** 2


def _cbc_dual_feasibility(cbc: CBCDualData, alpha: np.ndarray) -> float:
    r"""Relative violation of :math:`0 \le \alpha \le U`, :math:`y^\top\alpha = 0`."""
    U = cbc.upper  # a scalar, or the per-cluster costs with class weights
    top = float(np.max(U))
    scale = top if math.isfinite(top) else max(float(np.max(np.abs(alpha), initial=0.0)),
                                               1e-300)
    box = float(np.max(np.maximum(-alpha, alpha - U), initial=0.0)) / scale
    y = cbc.y
    terms = max(float(alpha[y > 0].sum()), float(alpha[y < 0].sum()), PRIMAL_FLOOR * scale)
    return max(box, 0.0, abs(float(y @ alpha)) / terms)


def _cbc_apex_bound(cbc: CBCDualData, alpha: np.ndarray, accuracy: float) -> float:
    r"""W-form at (or near) the cone apex :math:`v = 0`, where :math:`w = Wv/\|v\|` is
    undetermined: the best feasible point along the directions of
    :meth:`CBCDualData.apex_candidates` (the margin equalities of the free multipliers
    ((B.4)) fitted by least squares, :math:`v`, the difference of the class means), each at
    its best length :math:`\le W` — an upper bound of (B.1), as every such point is
    feasible."""
    values = [cbc.best_length(g)[2] for _, _, g in cbc.apex_candidates(alpha, accuracy)]
    return min(values, default=math.inf)


def _slack_floor(cbc: CBCDualData) -> float:
    """Absolute floor of the bracket: the W-form's objective is a sum of slacks."""
    return SLACK_FLOOR if cbc.W is not None else 0.0


def _certify_cbc_dual(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the CBC duals (3.11), (3.13), (B.2) from :math:`\alpha` in :math:`O(k^2)`.

    * ``primal``: violation of :math:`0 \le \alpha \le U`, :math:`y^\top\alpha = 0`
      (and of the cone :math:`\|v\| \le \lambda` when :math:`\lambda` is returned);
    * ``dual`` (optimality measure): the relative bracket :math:`(P - D)/\max(|P|, |D|)`
      between the dual value :math:`D` at the point and the primal value :math:`P` of
      the primal point it implies (seed 003 (3.12)/(B.3): :math:`w = (t/\lambda)v`,
      :math:`t = \lambda - r^\top\alpha`, resp. :math:`w = Wv/\|v\|`), made feasible
      by :func:`_cbc_upper_bound` and minimised over the length of :math:`w` along that
      direction (:func:`~conicml.certificates.chance.best_scale`: an interior-point
      :math:`\alpha` fixes the direction accurately, not :math:`t`); by weak duality
      :math:`D \le \text{opt} \le P`. At the
      cone apex :math:`v = 0` the C-form implies :math:`t = 0`, :math:`w = 0`
      analytically; the W-form's :math:`w` is fitted from the margin equalities
      (:func:`_cbc_apex_bound`). The W-form's bracket is judged against at least
      ``SLACK_FLOOR`` (its objective is a sum of slacks, 0 for separable spheres);
    * ``gap``: the bracket and the mismatch between the reported objective and
      :math:`D`.
    """
    got = values_of(solution, "alpha")
    if got is None or got[0].shape != data["y"].shape:
        return missing()
    cbc: CBCDualData = data["cbc"]
    U = cbc.upper
    primal = _cbc_dual_feasibility(cbc, got[0])
    a = np.clip(got[0], 0.0, U)
    p = cbc.kernel_matvec(a * cbc.y)
    vnorm = math.sqrt(max(float((a * cbc.y) @ p), 0.0))
    lam = None
    if cbc.W is None and "lam" in solution.values:
        lam_arr = values_of(solution, "lam")
        if lam_arr is None:
            return missing()
        lam = float(lam_arr[0][0])
        primal = max(primal, row_violation([vnorm - lam], [max(vnorm, abs(lam))]))
    value = _cbc_dual_value(cbc, a, p, lam)
    D = _cbc_dual_value(cbc, a, p, None if lam is None else max(lam, vnorm))
    scale, t, _ = cbc.scale(a, p)
    P = _cbc_upper_bound(cbc, scale * p, t)
    floor = _slack_floor(cbc)
    if vnorm > 0 and not cbc.hard and bracket(P, D, floor) > 1e-9:
        # the direction of v from an interior-point alpha is accurate, its length t is not
        unit = p / vnorm  # scores of v / ||v||
        if cbc.W is not None:
            P = best_scale(lambda s: _cbc_upper_bound(cbc, s * unit, float(cbc.W)),
                           float(cbc.W), float(cbc.W))
        elif math.isfinite(P):
            P = best_scale(lambda s: _cbc_upper_bound(cbc, s * unit, s), t,
                           max(t, math.sqrt(2.0 * P)))
    if cbc.W is not None and bracket(P, D, floor) > 1e-9:
        P = min(P, _cbc_apex_bound(cbc, a, solver_accuracy(solution)))
    dual = bracket(P, D, floor)
    return residuals(primal, dual, max(dual, claimed_gap(solution, value, floor)))


def _certify_cbc_primal(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the CBC primals (3.7), (3.13) and (B.1) at :math:`(w, b, t, \xi)`.

    * ``primal``: violation of the margin rows, :math:`\xi \ge 0` and the cone
      :math:`\|w\| \le t` (:math:`\le W`), each relative to its own terms;
    * ``dual``: the multipliers :math:`\alpha` of the margin rows (from the
      solution; any :math:`\alpha` is a *candidate* certificate, whose value is
      recomputed, never trusted) violate :math:`0 \le \alpha \le U`,
      :math:`y^\top\alpha = 0` by this much (the dual (3.11)/(B.2) feasibility);
    * ``gap``: the bracket :math:`(P - D)/\max(|P|, |D|)` between the larger of the
      point's own value and the value of the point made feasible (:math:`t = \|w\|`,
      optimal slacks and offset, :func:`_cbc_upper_bound`) and the dual value
      :math:`D(\alpha)`, and the
      mismatch between the reported objective and the point's own value.

    A solution without multipliers (no solver of these kinds returns none today)
    falls back to the generic KKT certificate on the program's cvxpy problem.
    """
    alpha = dual_of(solution, "margin")
    build = _build_cbc_w_primal if data.get("W") is not None else _build_cbc_primal
    if alpha is None or alpha.shape != data["y"].shape:
        return conic_certificate(data, solution, build=build)
    cbc: CBCDualData = data["cbc"]
    linear = data["kernel"].name == "linear"
    got = values_of(solution, "w" if linear else "v", "b")
    if got is None:
        return missing()
    w, b = got[0], float(got[1][0])
    g = data["means"] @ w if linear else _cbc_factor(data) @ w
    y, r = cbc.y, cbc.radii
    wn = float(np.linalg.norm(w))
    if cbc.W is not None:
        t = float(cbc.W)
    else:
        t_arr = values_of(solution, "t")
        t = float(t_arr[0][0]) if t_arr is not None else wn
    xi_arr = None if cbc.hard else values_of(solution, "xi")
    xi = np.zeros(y.size) if cbc.hard else (
        xi_arr[0] if xi_arr is not None and xi_arr[0].shape == y.shape
        else np.maximum(0.0, 1.0 + r * t - y * (g + b)))
    margin = y * (g + b)
    viol = np.concatenate([1.0 - xi + r * t - margin, -xi, [wn - t]])
    scale = np.concatenate([np.maximum.reduce([np.ones(y.size), np.abs(xi), r * t,
                                               np.abs(g), np.full(y.size, abs(b))]),
                            np.abs(xi), [max(wn, abs(t))]])
    primal = row_violation(viol, scale)
    if cbc.W is not None:
        value = float(np.sum(cbc.upper * xi))
        P = _cbc_upper_bound(cbc, g * min(1.0, t / wn) if wn > 0 else g, t)
    else:
        value = 0.5 * t * t + (0.0 if cbc.hard else float(np.sum(cbc.upper * xi)))
        P = _cbc_upper_bound(cbc, g, wn)
    dual_res = _cbc_dual_feasibility(cbc, alpha)
    a = np.clip(alpha, 0.0, cbc.upper)
    D = _cbc_dual_value(cbc, a, cbc.kernel_matvec(a * y))
    floor = _slack_floor(cbc)
    # the point's own value, not only the repaired one: a feasible point whose slacks
    # or offset are worse than the repair is not optimal (the repair is not returned)
    gap = max(bracket(max(value, P), D, floor), claimed_gap(solution, value, floor))
    return residuals(primal, dual_res, gap)


def _cbc_program(data: dict, build, decode, description: str) -> Program:
    data["cbc"] = CBCDualData(means=data["means"], y=data["y"], radii=data["radii"],
                              kernel=data["kernel"], C=data.get("C"), W=data.get("W"),
                              costs=data.get("costs"))
    certify = _certify_cbc_primal if data["form"] == "primal" else _certify_cbc_dual
    return Program(data["kind"], data, build=build, decode=decode, certify=certify,
                   default_solver="clarabel", description=description)


@renamed_keywords(eta="accuracy")
def cbc(
    clusters: ClusterMoments,
    C: float | None = 1.0,
    accuracy: float = 0.5,
    *,
    bound: str = "chebyshev",
    kernel: str = "linear",
    gamma: float | str = "scale",
    robust: str | None = None,
    confidence: float = 0.9,
    form: str = "primal",
    factor: str = "auto",
    class_weight: Mapping[float, float] | str | None = None,
) -> Program:
    r"""CBC-SOCP (3.7) or its dual (3.11): the C-parametrised cluster classifier.

    Parameters
    ----------
    clusters : ClusterMoments
        Cluster means, radii :math:`\sigma_j`, counts and labels (+1/-1), e.g.
        from :meth:`conicml.ClusterMoments.from_data`.
    C : float or None, default=1.0
        Cost of a unit of slack (> 0); ``None`` for the hard-margin variant (3.13).
    accuracy : float, default=0.5
        Lower bound :math:`\eta \in (0, 1)` on the probability that a cluster's
        points fall on the right side (eq. 3.2). Old keyword ``eta``, deprecated.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        How :math:`\kappa` follows from :math:`\eta` (:func:`cbc_kappa`).
    kernel : {"linear", "rbf"}, default="linear"
    gamma : float or {"scale", "auto"}, default="scale"
        Width of the Gaussian kernel (resolved against the cluster means).
    robust : {None, "R1", "R2"}, default=None
        Robust radii of ch. 6 (:func:`cbc_radii`).
    confidence : float, default=0.9
        Confidence :math:`c = 1 - \delta` of the robust sets.
    form : {"primal", "dual"}, default="primal"
        Kind ``"socp.chance.cbc.primal"`` or ``"socp.chance.cbc.dual"`` (``.hard.`` for
        ``C=None``); the dual is also solved by the specialized ``cbc-smo``.
    factor : {"auto", "cholesky", "eigen"}, default="auto"
        Gram-matrix factor for the rbf kernel (:func:`conicml.kernels.psd_factor`).
    class_weight : dict {+1: w, -1: w}, "balanced" or None, default=None
        Per-class multipliers of ``C`` (scikit-learn's meaning, counted in clusters):
        cluster :math:`j` costs :math:`C_j = C\,c_{y_j}` per unit of slack, and the
        dual box becomes :math:`0 \le \alpha_j \le C_j`. ``"balanced"``:
        :math:`c_\pm = k / (2k_\pm)` with :math:`k_\pm` the clusters of each class,
        so both classes carry the same total cost. ``None`` is the thesis's (3.7).
        Not an extension of the thesis: without it, (3.7) on heavily imbalanced data
        is often solved by :math:`w = 0` (all minority clusters on the wrong side
        cost less than any hyperplane), whatever ``C``.

    Returns
    -------
    Program
        Objective: the optimal value of (3.7), :math:`\frac12\|w\|^2 + \sum_j C_j\xi_j`,
        for both forms. ``decode`` as in the module docstring.
    """
    data = _cbc_data(clusters, accuracy, bound, kernel, gamma, robust, confidence, form, factor)
    data["hard"] = C is None
    data["C"] = None if C is None else check_positive(C, "C")
    data["costs"] = _cluster_costs(data["y"], data["C"], class_weight)
    data["kind"] = {(False, "primal"): kinds.CBC_PRIMAL, (False, "dual"): kinds.CBC_DUAL,
                    (True, "primal"): kinds.CBC_HARD_PRIMAL,
                    (True, "dual"): kinds.CBC_HARD_DUAL}[C is None, form]
    build, decode = ((_build_cbc_primal, _decode_cbc_primal) if form == "primal"
                     else (_build_cbc_dual, _decode_cbc_dual))
    cdesc = "hard margin" if C is None else f"C={data['C']:g}"
    if class_weight is not None:
        cdesc += f", class_weight={class_weight!r}"
    return _cbc_program(data, build, decode,
                        f"CBC-SOCP ({kernel} kernel, {cdesc}, accuracy={accuracy:g}, {form})")


@renamed_keywords(eta="accuracy")
def cbc_w(
    clusters: ClusterMoments,
    W: float = 1.0,
    accuracy: float = 0.5,
    *,
    bound: str = "chebyshev",
    kernel: str = "linear",
    gamma: float | str = "scale",
    robust: str | None = None,
    confidence: float = 0.9,
    form: str = "primal",
    factor: str = "auto",
    class_weight: Mapping[float, float] | str | None = None,
) -> Program:
    r"""W-parametrised CBC (B.1) or its (kernel) dual (B.2).

    ``W`` (> 0) bounds :math:`\|w\|_2`, so :math:`2/W` bounds the margin from
    below; no mapping between ``C`` and ``W`` exists (errata S003-P10). Kinds
    ``"socp.chance.cbc_w.primal"`` / ``"socp.chance.cbc_w.dual"``; the dual is also solved
    by ``cbc-smo`` (the thesis's CBC-Iter). Objective of both forms: the
    optimal :math:`\sum_j\xi_j` of (B.1) (= minus the minimum of (B.2)); with
    ``class_weight``, :math:`\sum_j c_{y_j}\xi_j` and the dual box
    :math:`0 \le \alpha_j \le c_{y_j}`. Other parameters as in :func:`cbc`.
    """
    data = _cbc_data(clusters, accuracy, bound, kernel, gamma, robust, confidence, form, factor)
    data["W"] = check_positive(W, "W")
    data["costs"] = _cluster_costs(data["y"], 1.0, class_weight)
    data["hard"] = False
    data["kind"] = kinds.CBC_W_PRIMAL if form == "primal" else kinds.CBC_W_DUAL
    build, decode = ((_build_cbc_w_primal, _decode_cbc_primal) if form == "primal"
                     else (_build_cbc_w_dual, _decode_cbc_dual))
    return _cbc_program(data, build, decode,
                        f"CBC-SOCP W-form ({kernel} kernel, W={data['W']:g}, "
                        f"accuracy={accuracy:g}, {form})")


def cbc_decision_values(data: Mapping[str, Any], model: Mapping[str, Any],
                        X_new: np.ndarray) -> np.ndarray:
    r""":math:`f(x) = w^\top x + b` (linear) or :math:`\sum_j c_jk(\mu_j, x) + b`."""
    if "w" in model:
        return X_new @ model["w"] + model["b"]
    sv = model["support"]
    if sv.size == 0:  # alpha = 0: a constant decision
        return np.full(X_new.shape[0], float(model["b"]))
    return data["kernel"](X_new, data["means"][sv]) @ model["dual_coef"][sv] + model["b"]


