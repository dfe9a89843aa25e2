r"""Chance-constrained classifiers as second-order cone programs (seed 003).

The family of J. Saketha Nath's thesis *Learning Algorithms using
Chance-Constrained Programs* (IISc, 2007): every class (or cluster) is known
only through its first two moments, and a chance constraint
:math:`\operatorname{Prob}(\text{correct side}) \ge e` is replaced by its
distribution-free Chebyshev–Cantelli equivalent (Theorem 2.1, eq. 2.2)

.. math::

    c^\top\mu - d \ge \kappa \sqrt{c^\top \Sigma c}
    \;\Longrightarrow\; \operatorname{Prob}(c^\top X \ge d) \ge e,
    \qquad \kappa = \sqrt{e / (1 - e)}

(:math:`\kappa = \Phi^{-1}(e)` if :math:`X` is Gaussian), a second-order cone.

Package convention: the decision function is :math:`f(x) = w^\top x + b`,
positive class (label ``+1``, the thesis's class 1) iff :math:`f(x) \ge 0`.
The thesis writes :math:`w^\top x - b`, so its threshold is :math:`-b` here;
every conversion is marked in a comment.

The module is organised in sections, one per learner (each section is
self-contained: its data checks, ``_build_*`` / ``_decode_*`` functions and
public constructor):

* **Specified error rates** (ch. 2, note F1): :func:`specified_rates`, kinds
  ``"socp.chance.rates.primal"`` / ``"socp.chance.rates.dual"``; also solved
  by the specialized ``lin-han`` ellipsoid-distance solver.
* **Cluster-based classification** (ch. 3, 6, App. B; note F2, F5): :func:`cbc`
  (CBC-SOCP (3.7) / dual (3.11), kinds ``"socp.chance.cbc[.hard].primal|dual"``),
  :func:`cbc_w` (the W-form (B.1) / kernel dual (B.2), kinds
  ``"socp.chance.cbc_w.primal|dual"``), robust radii RCBC1/RCBC2 (:func:`cbc_radii`);
  the duals are also solved by the specialized ``cbc-smo``.
* further sections (ordinal regression) follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np
from scipy import optimize, stats
from scipy.stats import norm

from .._kkt import bias_from_kkt, free_tolerance, solver_accuracy
from .._validation import check_positive, check_X_y
from ..exceptions import ProgramError, SolverError
from ..kernels import Kernel, make_kernel, psd_factor
from ..moments import ClassMoments, ClusterMoments, as_class_moments
from ..program import ConicForm, Program, require_solution
from ..solution import Solution, Status

__all__ = [
    "RATES_KINDS",
    "rate_kappa",
    "rates_decision_values",
    "specified_rates",
]

# =====================================================================================
# Section 1: maximum-margin classifier with specified FN / FP rates (ch. 2, note F1)
# =====================================================================================
#
# Math (thesis eqs. 2.1-2.5, 2.13-2.21; seed-003 note F1, pitfalls P1-P5).
#
# Chance-constrained program (2.1), eta_1 = eta_pos bounds the error on POSITIVES
# (false negatives) and eta_2 = eta_neg the error on NEGATIVES (false positives) --
# note P2: one sentence of Sec. 2.2 swaps the words, the math is followed here:
#
#     min 1/2 ||w||^2  s.t.  Prob(X1 on the negative side) <= eta_pos,
#                            Prob(X2 on the positive side) <= eta_neg.
#
# Theorem 2.1 with e = 1 - eta_i gives the ch.-2 kappa convention (note P1)
#     kappa_i = sqrt((1 - eta_i) / eta_i)          (Chebyshev-Cantelli)
#     kappa_i = Phi^{-1}(1 - eta_i)                 (Gaussian; needs eta_i <= 1/2)
# and, with the normalisation of (2.3) and Sigma_i = C_i C_i^T, the SOCP (2.5),
# written in the package convention (thesis threshold b_t = -b):
#     min 1/2 ||w||^2
#     s.t.  w^T mu_pos + b - 1 >= kappa_pos ||C_pos^T w||
#           -b - w^T mu_neg - 1 >= kappa_neg ||C_neg^T w||.
# Its dual (2.13) is the squared distance between the ellipsoids
#     B_i = {mu_i - kappa_i C_i u : ||u|| <= 1},
# with recovery (2.14)/(2.16)  w = 2 (z_pos - z_neg) / ||z_pos - z_neg||^2,
# b_t = w^T z_pos - 1 = w^T z_neg + 1. Strong duality: 1/2 ||w*||^2 = 2 / d*^2.

#: Program kinds of the specified-rates classifier (primal SOCP 2.5, dual 2.13).
RATES_KINDS = ("socp.chance.rates.primal", "socp.chance.rates.dual")
_RATES_FORMS = ("primal", "dual")
_BOUNDS = ("chebyshev", "gaussian")
_RATES_TOUCH = 1e-10  # relative squared distance below which the ellipsoids touch/overlap


def rate_kappa(eta: float, bound: str = "chebyshev", *, name: str = "eta") -> float:
    r"""The cone multiplier :math:`\kappa` of a class whose error rate is at most ``eta``.

    Chapter-2 convention (seed-003 note P1): ``eta`` is the largest allowed
    probability of falling on the wrong side, i.e. Theorem 2.1 with
    :math:`e = 1 - \eta`:

    .. math::

        \kappa_{\text{chebyshev}} = \sqrt{\frac{1-\eta}{\eta}}, \qquad
        \kappa_{\text{gaussian}} = \Phi^{-1}(1 - \eta).

    Parameters
    ----------
    eta : float
        Error rate in :math:`(0, 1]` (``"gaussian"``: in :math:`(0, 1/2]`).
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        Distribution-free (Chebyshev–Cantelli) or normal moments.
    name : str, default="eta"
        Parameter name used in error messages.

    Raises
    ------
    ProgramError
        ``eta`` outside its range (the Gaussian :math:`\kappa` is negative for
        :math:`\eta > 1/2` and makes the constraint non-convex), or an unknown
        ``bound``.
    """
    if bound not in _BOUNDS:
        raise ProgramError(f"bound must be 'chebyshev' or 'gaussian', got {bound!r}")
    eta = check_positive(eta, name)
    if eta > 1.0:
        raise ProgramError(f"{name} is an error rate and must lie in (0, 1], got {eta!r}")
    if bound == "chebyshev":
        return float(np.sqrt((1.0 - eta) / eta))
    if eta > 0.5:
        raise ProgramError(
            f"bound='gaussian' needs {name} <= 0.5 (kappa = Phi^-1(1 - {name}) would be "
            f"negative and the cone constraint non-convex), got {eta!r}; use "
            "bound='chebyshev' or a smaller rate"
        )
    return float(norm.ppf(1.0 - eta))


def _rates_data(data: Any, eta_pos: float, eta_neg: float, kernel: str, bound: str,
                gamma: float | str, degree: int, coef0: float, epsilon: float, form: str,
                factor: str, cone: str) -> dict:
    """Validate the inputs and compute the moments in the (linear or kernel) feature space."""
    if form not in _RATES_FORMS:
        raise ProgramError(f"form must be 'primal' or 'dual', got {form!r}")
    if cone not in ("centred", "factor"):
        raise ProgramError(f"cone must be 'centred' or 'factor', got {cone!r}")
    if factor not in ("auto", "cholesky", "eigen"):
        raise ProgramError(f"factor must be 'auto', 'cholesky' or 'eigen', got {factor!r}")
    kappa_pos = rate_kappa(eta_pos, bound, name="eta_pos")
    kappa_neg = rate_kappa(eta_neg, bound, name="eta_neg")
    epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
    out: dict[str, Any] = {
        "eta_pos": float(eta_pos), "eta_neg": float(eta_neg), "bound": bound,
        "kappa_pos": kappa_pos, "kappa_neg": kappa_neg, "epsilon": epsilon, "form": form,
        "factor": factor, "cone": cone,
    }
    if kernel == "linear":
        moments = as_class_moments(data)
        d = moments.dim
        eye = np.eye(d)
        cov_pos = moments.cov_pos + epsilon * eye
        cov_neg = moments.cov_neg + epsilon * eye
        out.update(
            kernel=None, X=None, L=None,
            mean_pos=moments.mean_pos, mean_neg=moments.mean_neg,
            cov_pos=cov_pos, cov_neg=cov_neg,
            # any factor Sigma = C C^T (note P3: ||C^T w||, never ||C w||)
            C_pos=psd_factor(cov_pos, factor), C_neg=psd_factor(cov_neg, factor),
        )
        return out
    # ---- kernel case (2.17)-(2.21): work in the empirical feature space K = L L^T -------
    if isinstance(data, ClassMoments):
        raise ProgramError(
            f"kernel={kernel!r} needs the training points: pass (X, y) instead of ClassMoments"
        )
    if not (isinstance(data, tuple) and len(data) == 2):
        raise ProgramError(
            "expected a ClassMoments or an (X, y) tuple, got " + type(data).__name__
        )
    X, y = check_X_y(*data)
    kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
    L = psd_factor(kern.gram(X), factor)  # K = L L^T; row j of L is the image of x_j
    r = L.shape[1]
    stats = {}
    for label, key in ((1.0, "pos"), (-1.0, "neg")):
        Li = L[y == label]
        mi = Li.shape[0]
        centred = Li - Li.mean(axis=0)
        # centring identity (note F1 hint): w^T Sigma_i w = ||m_i^{-1/2} P_i L_i v||^2 with
        # P_i = I - ee^T/m_i idempotent, so the cone needs no factorisation of G_i / H_i.
        D = centred.T / np.sqrt(mi)  # H_i = D D^T (biased 1/m_i covariance, P4)
        H = D @ D.T + epsilon * np.eye(r)
        if cone == "factor":
            C = psd_factor(H, factor)  # r columns: a smaller, better-conditioned cone
        else:
            C = np.hstack([D, np.sqrt(epsilon) * np.eye(r)]) if epsilon > 0 else D
        stats[key] = (Li.mean(axis=0), H, C)
    out.update(
        kernel=kern, X=X, y=y, L=L,
        mean_pos=stats["pos"][0], cov_pos=stats["pos"][1], C_pos=stats["pos"][2],
        mean_neg=stats["neg"][0], cov_neg=stats["neg"][1], C_neg=stats["neg"][2],
    )
    return out


def _build_rates_primal(data: Mapping[str, Any]) -> ConicForm:
    """SOCP (2.5) (linear) / (2.19) (kernel, in the coordinates v = L^T s)."""
    name = "w" if data["kernel"] is None else "v"
    w = cp.Variable(data["mean_pos"].shape[0], name=name)
    b = cp.Variable(name="b")  # package convention: b = -b_thesis
    kp, kn = data["kappa_pos"], data["kappa_neg"]
    # (2.5): w^T mu_1 - b_t >= 1 + k1 ||C1^T w||, b_t - w^T mu_2 >= 1 + k2 ||C2^T w||, b_t = -b
    constraints = {
        "pos": kp * cp.norm(data["C_pos"].T @ w, 2) <= data["mean_pos"] @ w + b - 1.0,
        "neg": kn * cp.norm(data["C_neg"].T @ w, 2) <= -b - data["mean_neg"] @ w - 1.0,
    }
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), list(constraints.values()))
    return ConicForm(problem, {name: w, "b": b}, constraints)


def _build_rates_dual(data: Mapping[str, Any]) -> ConicForm:
    """Distance between two ellipsoids (2.13) / (2.20)."""
    u_pos = cp.Variable(data["C_pos"].shape[1], name="u_pos")
    u_neg = cp.Variable(data["C_neg"].shape[1], name="u_neg")
    z_pos = data["mean_pos"] - data["kappa_pos"] * (data["C_pos"] @ u_pos)
    z_neg = data["mean_neg"] + data["kappa_neg"] * (data["C_neg"] @ u_neg)
    constraints = {"u_pos_ball": cp.norm(u_pos, 2) <= 1.0,
                   "u_neg_ball": cp.norm(u_neg, 2) <= 1.0}
    problem = cp.Problem(cp.Minimize(cp.sum_squares(z_pos - z_neg)), list(constraints.values()))
    return ConicForm(problem, {"u_pos": u_pos, "u_neg": u_neg}, constraints)


_RATES_INFEASIBLE = (Status.INFEASIBLE, Status.INFEASIBLE_INACCURATE,
                     Status.UNBOUNDED, Status.UNBOUNDED_INACCURATE)


def _rates_explain(data: Mapping[str, Any], status: Status) -> str:
    """Program.explain: the reading of an infeasible status, added to every solver's message."""
    if status not in _RATES_INFEASIBLE:
        return ""
    return (f"no hyperplane meets the specified rates eta_pos={data['eta_pos']:g}, "
            f"eta_neg={data['eta_neg']:g} (kappa_pos={data['kappa_pos']:.6g}, "
            f"kappa_neg={data['kappa_neg']:.6g}, bound={data['bound']!r}): the two "
            "class ellipsoids overlap, so the program is infeasible; raise eta_pos or eta_neg")


def _rates_require(data: Mapping[str, Any], solution: Solution, kind: str) -> None:
    if solution.ok:
        return
    if solution.status in _RATES_INFEASIBLE:
        raise SolverError(f"{_rates_explain(data, solution.status)} "
                          f"(solver {solution.solver!r}: {solution.message})")
    raise SolverError(
        f"cannot decode a solution with status {solution.status.value!r} from solver "
        f"{solution.solver!r} for a program of kind {kind!r}: {solution.message}"
    )


def _rates_model(data: Mapping[str, Any], w: np.ndarray, b: float) -> dict:
    """The decoded model from (w, b) in the feature space (package convention)."""
    model: dict[str, Any] = {
        "b": float(b),
        "margin": float(2.0 / max(np.linalg.norm(w), np.finfo(float).tiny)),
        "kappa_pos": data["kappa_pos"],
        "kappa_neg": data["kappa_neg"],
    }
    if data["kernel"] is None:
        model["w"] = w
    else:
        # w = sum_j s_j phi(x_j) with L^T s = v (2.21); min-norm s (exact on the span of L)
        model["v"] = w
        model["dual_coef"] = np.linalg.lstsq(data["L"].T, w, rcond=None)[0]
    return model


def _decode_rates_primal(data: Mapping[str, Any], solution: Solution) -> dict:
    _rates_require(data, solution, RATES_KINDS[0])
    name = "w" if data["kernel"] is None else "v"
    return _rates_model(data, np.asarray(solution.values[name], dtype=float),
                        float(solution.values["b"]))


def rates_points(data: Mapping[str, Any], u_pos: np.ndarray, u_neg: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The ellipsoid points :math:`z_\\pm = \\mu_\\pm \\mp \\kappa_\\pm C_\\pm u_\\pm` (2.13)."""
    z_pos = data["mean_pos"] - data["kappa_pos"] * (data["C_pos"] @ u_pos)
    z_neg = data["mean_neg"] + data["kappa_neg"] * (data["C_neg"] @ u_neg)
    return z_pos, z_neg


def _decode_rates_dual(data: Mapping[str, Any], solution: Solution) -> dict:
    _rates_require(data, solution, RATES_KINDS[1])
    z_pos, z_neg = rates_points(data, np.asarray(solution.values["u_pos"], dtype=float),
                                np.asarray(solution.values["u_neg"], dtype=float))
    diff = z_pos - z_neg
    dist2 = float(diff @ diff)
    scale = 1.0 + float(np.sum((data["mean_pos"] - data["mean_neg"]) ** 2))
    if dist2 <= _RATES_TOUCH * scale:
        # a generic solver reports the dual of an infeasible primal as OPTIMAL with
        # distance 0 (the ellipsoids overlap): no hyperplane exists.
        _rates_require(data, Solution(status=Status.INFEASIBLE, solver=solution.solver,
                                      message=f"ellipsoid distance^2 = {dist2:.3g}"),
                       RATES_KINDS[1])
    w = 2.0 * diff / dist2  # (2.14)
    # (2.16): b_t = w^T z_pos - 1 = w^T z_neg + 1; the mean of the two is used (equal at
    # the optimum, more robust for inexact points); package convention b = -b_t
    b_t = 0.5 * (w @ z_pos - 1.0 + w @ z_neg + 1.0)
    model = _rates_model(data, w, -b_t)
    model["z_pos"], model["z_neg"] = z_pos, z_neg
    return model


def specified_rates(
    data: ClassMoments | tuple,
    eta_pos: float,
    eta_neg: float,
    *,
    kernel: str = "linear",
    bound: str = "chebyshev",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    epsilon: float = 0.0,
    form: str = "primal",
    factor: str = "auto",
    cone: str = "centred",
) -> Program:
    r"""Maximum-margin classifier with specified false-negative / false-positive rates.

    Thesis ch. 2 (eqs. 2.1–2.5): the hyperplane of largest margin such that a
    positive point (moments :math:`\mu_+, \Sigma_+`) falls on the negative
    side with probability at most ``eta_pos`` and a negative point on the
    positive side with probability at most ``eta_neg``, for *every*
    distribution with those moments (``bound="chebyshev"``) or for Gaussian
    classes (``bound="gaussian"``). With :math:`\kappa_\pm` from
    :func:`rate_kappa` and :math:`\Sigma_\pm + \epsilon I = C_\pm C_\pm^\top`,
    in the package convention :math:`f(x) = w^\top x + b` (thesis:
    :math:`b_{thesis} = -b`):

    .. math::

        \min_{w,b}\ \tfrac12\|w\|_2^2 \quad\text{s.t.}\quad
        w^\top\mu_+ + b - 1 \ge \kappa_+\|C_+^\top w\|_2,\quad
        -b - w^\top\mu_- - 1 \ge \kappa_-\|C_-^\top w\|_2.
        \tag{2.5}

    ``form="dual"`` gives the equivalent distance between the ellipsoids
    :math:`B_\pm = \{\mu_\pm \mp \kappa_\pm C_\pm u : \|u\|_2 \le 1\}` (2.13),

    .. math::

        \min_{u_+, u_-}\ \|z_+ - z_-\|_2^2,\quad
        z_\pm = \mu_\pm \mp \kappa_\pm C_\pm u_\pm,\ \|u_\pm\|_2 \le 1,

    decoded by (2.14)/(2.16): :math:`w = 2(z_+ - z_-)/\|z_+ - z_-\|^2`,
    :math:`b = -(w^\top z_+ - 1)`. Strong duality:
    :math:`\tfrac12\|w^*\|^2 = 2/d^{*2}` with :math:`d^*` the distance.

    **Kernel** (2.17)–(2.21): with the Gram matrix :math:`K = LL^\top` of the
    training points (:func:`conicml.kernels.psd_factor`), row :math:`j` of
    :math:`L` represents :math:`\phi(x_j)` and the program is (2.5) for the
    rows of :math:`L`: :math:`w = \sum_j s_j\phi(x_j)` is represented by
    :math:`v = L^\top s` (the thesis's (2.18) with its :math:`L` transposed),
    :math:`h_\pm` are the class means of the rows and the covariances
    :math:`H_\pm = D_\pm D_\pm^\top` (biased :math:`1/m_\pm`) enter through the
    centring identity :math:`v^\top H_\pm v = \|m_\pm^{-1/2} P_\pm L_\pm v\|^2`,
    :math:`P = I - ee^\top/m` (no factorisation of :math:`G_\pm`). The
    decision function is :math:`f(x) = \sum_j s_j k(x_j, x) + b` (2.21).

    **Feasibility.** The rates are attainable iff the ellipsoids are disjoint;
    otherwise every solver returns an infeasible status (the SOCP is
    infeasible, the dual has optimum 0) and ``decode`` raises a
    :class:`~conicml.SolverError` naming the rates (Table 2.1's "×").

    Parameters
    ----------
    data : ClassMoments or tuple (X, y)
        Moments of the two classes, or training data with labels exactly
        ``+1``/``-1`` (moments then use the biased :math:`1/m` covariance).
        Kernels other than ``"linear"`` need ``(X, y)``.
    eta_pos : float
        Largest error rate on the positive class (false negatives),
        :math:`\eta_1` of the thesis, in :math:`(0, 1]`.
    eta_neg : float
        Largest error rate on the negative class (false positives),
        :math:`\eta_2`, in :math:`(0, 1]`.
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        ``"rbf"`` is the thesis's Gaussian kernel :math:`\exp(-\zeta\|x-x'\|^2)`
        with :math:`\zeta` = ``gamma``.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        How rates become :math:`\kappa` (:func:`rate_kappa`).
    gamma, degree, coef0
        Kernel hyper-parameters (:func:`conicml.make_kernel`).
    epsilon : float, default=0.0
        Ridge :math:`\epsilon \ge 0` added to both covariances
        (:math:`\Sigma_\pm + \epsilon I`, or :math:`H_\pm + \epsilon I` in
        the kernel case, as the thesis's experiments do). The specialized
        ``lin-han`` solver needs positive definite covariances, hence
        :math:`\epsilon > 0` for kernels (:math:`H_\pm` is always singular,
        note P5) and for singular :math:`\Sigma_\pm`; every solver solves the
        same regularised program.
    form : {"primal", "dual"}, default="primal"
        Program kind ``"socp.chance.rates.primal"`` (objective
        :math:`\tfrac12\|w\|^2`) or ``"socp.chance.rates.dual"`` (objective
        :math:`\|z_+ - z_-\|^2`, the squared distance). Both kinds are
        solved by the generic SOCP backends and by ``lin-han``.
    factor : {"auto", "cholesky", "eigen"}, default="auto"
        Factorisation of the covariances (linear) or of :math:`K` (kernel).
    cone : {"centred", "factor"}, default="centred"
        Kernel case only: how :math:`\sqrt{v^\top (H_\pm + \epsilon I) v}` enters
        the cone. ``"centred"``: :math:`\|[m^{-1/2}P L_\pm v;\ \sqrt\epsilon v]\|`
        (the centring identity, no factorisation; cone dimension
        :math:`1 + m_\pm + r`); ``"factor"``: a factor of :math:`H_\pm + \epsilon I`
        (cone dimension :math:`1 + r`, an extra :math:`O(r^3)`), which the
        interior-point backends solve faster and more reliably when
        :math:`\epsilon > 0`. Same program, same optimum.

    Returns
    -------
    Program
        ``decode`` returns ``{"w", "b"}`` (linear) or ``{"v", "dual_coef",
        "b"}`` (kernel), plus ``"margin"`` :math:`= 2/\|w\|`,
        ``"kappa_pos"``, ``"kappa_neg"`` (and ``"z_pos"``, ``"z_neg"`` for the
        dual form).

    Raises
    ------
    ProgramError
        Bad data (shape, NaN, labels, single class), rates outside
        :math:`(0, 1]` (or :math:`(0, 1/2]` for the Gaussian bound), negative
        ``epsilon``, unknown kernel / bound / form.
    """
    if isinstance(kernel, str) and kernel == "precomputed" and isinstance(data, ClassMoments):
        raise ProgramError("kernel='precomputed' needs (K, y), not ClassMoments")
    if not isinstance(kernel, str):
        raise ProgramError(f"unknown kernel {kernel!r}")
    prepared = _rates_data(data, eta_pos, eta_neg, kernel, bound, gamma, degree, coef0,
                           epsilon, form, factor, cone)
    primal = form == "primal"
    return Program(
        RATES_KINDS[0] if primal else RATES_KINDS[1],
        prepared,
        build=_build_rates_primal if primal else _build_rates_dual,
        decode=_decode_rates_primal if primal else _decode_rates_dual,
        default_solver="clarabel",
        description=(f"chance-constrained classifier, specified rates eta_pos={eta_pos:g}, "
                     f"eta_neg={eta_neg:g} ({kernel} kernel, {bound}, {form})"),
        explain=_rates_explain,
    )


def rates_decision_values(data: Mapping[str, Any], model: Mapping[str, Any],
                          X_new: np.ndarray) -> np.ndarray:
    """Decision values :math:`f(x) = w^\\top x + b` (linear) or
    :math:`\\sum_j s_j k(x_j, x) + b` (kernel, 2.21) of a decoded model.

    ``data`` is ``program.data``; for a precomputed kernel ``X_new`` holds the
    kernel values against the training samples.
    """
    X_new = np.asarray(X_new, dtype=float)
    if data["kernel"] is None:
        return X_new @ model["w"] + model["b"]
    kern: Kernel = data["kernel"]
    return kern(X_new, data["X"]) @ model["dual_coef"] + model["b"]


# ============================ end of section 1 (specified rates) ============================


# =====================================================================================
# Section 2: cluster-based classification, CBC-SOCP (ch. 3), its W-form and kernel dual
# (App. B) and robust CBC (ch. 6); seed-003 note F2, F2-W/F2-K, F5, A5, P6-P11, P14-P18.
# Owner: the cbc helper. Specialized solver: conicml/solvers/cbc_smo.py ("cbc-smo").
# =====================================================================================
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
# linear kernel; seed-003 note erratum).
#
# **Kernels** (``"linear"``, ``"rbf"``): only the cluster *means* are mapped,
# :math:`\mu_j \to \phi(\mu_j)`, and for the Gaussian kernel
# :math:`k(x,z) = \exp(-\gamma\|x-z\|^2)` the sphere radius becomes
# :math:`r_j = \sqrt{2(1 - \exp(-\gamma r_j^2))}` (App. B; seed-003 note P14),
# since :math:`\|x-\mu\|\le r \Rightarrow \|\phi(x)-\phi(\mu)\|\le` that value.
# The primal is written over the span of the means through a factor
# :math:`K = LL^\top` (:func:`conicml.kernels.psd_factor`), as in
# :mod:`conicml.formulations.svm`.
#
# **Decoding** (every kind, from :math:`\alpha` alone; seed-003 note §2 F2,
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
# (seed-003 note P7/P8) whatever the clusters' ``sigma`` convention.

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

CBC_KINDS = ("socp.chance.cbc.primal", "socp.chance.cbc.dual", "socp.chance.cbc.hard.primal",
             "socp.chance.cbc.hard.dual", "socp.chance.cbc_w.primal", "socp.chance.cbc_w.dual")
CBC_FORMS = ("primal", "dual")
CBC_BOUNDS = ("chebyshev", "gaussian")
CBC_KERNELS = ("linear", "rbf")
CBC_ROBUST = (None, "R1", "R2")
_CBC_BLOCK = 2048  # rows of the kernel matrix formed at once


def cbc_kappa(eta: float, bound: str = "chebyshev") -> float:
    r"""Multiplier :math:`\kappa` of the chance constraint at accuracy level ``eta``.

    ``"chebyshev"``: :math:`\sqrt{\eta/(1-\eta)}` (eq. 3.4, any distribution);
    ``"gaussian"``: :math:`\Phi^{-1}(\eta)` (Gaussian clusters, ch. 6), which
    needs :math:`\eta \ge 1/2` (a negative :math:`\kappa` would make the
    constraint non-convex; seed-003 note P1/P11).
    """
    if isinstance(eta, bool) or not isinstance(eta, (int, float, np.floating, np.integer)):
        raise ProgramError(f"eta must be a number in (0, 1), got {eta!r}")
    eta = float(eta)
    if not 0.0 < eta < 1.0:
        raise ProgramError(f"eta must lie in (0, 1) (a lower bound on accuracy), got {eta!r}")
    if bound == "chebyshev":
        return float(np.sqrt(eta / (1.0 - eta)))
    if bound == "gaussian":
        if eta < 0.5:
            raise ProgramError(
                f"bound='gaussian' needs eta >= 0.5 (Phi^-1(eta) < 0 would make the cone "
                f"constraint non-convex), got eta={eta!r}; raise eta or use bound='chebyshev'"
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
    :math:`(\hat\sigma^2, \hat\sigma^2(1 + \sqrt{2f/(nm)})]` (seed-003 note A5;
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


def cbc_radii(clusters: ClusterMoments, eta: float, *, bound: str = "chebyshev",
              robust: str | None = None, confidence: float = 0.9) -> np.ndarray:
    r"""Input-space sphere radii of every cluster.

    ``robust=None``: :math:`\kappa\sigma_j` in the clusters' own ``sigma``
    convention (ch. 3: ``"trace"``). ``"R1"`` / ``"R2"``: the ch. 6 radii from
    the per-dimension variance (MLE :math:`\hat\sigma_j^2`, unbiased
    :math:`\frac{m_j}{m_j-1}\hat\sigma_j^2` for R1), at confidence ``confidence``
    :math:`= c = 1-\delta` (the thesis's "δ = 0.9" means c = 0.9; note P9).
    """
    kappa = cbc_kappa(eta, bound)
    if robust is None:
        return kappa * clusters.sigmas
    if robust not in ("R1", "R2"):
        raise ProgramError(f"robust must be None, 'R1' or 'R2', got {robust!r}")
    if isinstance(confidence, bool) or not 0.0 < float(confidence) < 1.0:
        raise ProgramError(f"confidence must lie in (0, 1), got {confidence!r}")
    n = clusters.dim
    var = clusters.sigmas**2
    if clusters.sigma == "trace":
        var = var / n  # per-dimension MLE variance (note P7)
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


def _cbc_factor(data: Mapping[str, Any]) -> np.ndarray:
    kern: Kernel = data["kernel"]
    if kern.name == "linear":
        return data["means"]
    return psd_factor(kern.gram(data["means"]), data["factor"])


def cbc_kernel_matvec(data: Mapping[str, Any], coef: np.ndarray) -> np.ndarray:
    """:math:`K c` over the cluster means, without forming more than a block of :math:`K`."""
    M = data["means"]
    kern: Kernel = data["kernel"]
    if kern.name == "linear":
        return M @ (M.T @ coef)
    out = np.empty(M.shape[0])
    for s in range(0, M.shape[0], _CBC_BLOCK):
        out[s:s + _CBC_BLOCK] = kern(M[s:s + _CBC_BLOCK], M) @ coef
    return out


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
        objective = 0.5 * cp.square(t) + C * cp.sum(xi)
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
        constraints["alpha_upper"] = alpha <= data["C"]
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
    problem = cp.Problem(cp.Minimize(cp.sum(xi)), list(constraints.values()))
    return ConicForm(problem, variables, constraints)


def _build_cbc_w_dual(data: Mapping[str, Any]) -> ConicForm:
    y, W = data["y"], data["W"]
    L = _cbc_factor(data)
    alpha = cp.Variable(y.size, name="alpha")
    d = 1.0 + data["radii"] * W  # d_j = 1 + r_j W (erratum: not kappa sigma_j W for rbf)
    objective = d @ alpha - W * cp.norm(L.T @ cp.multiply(y, alpha), 2)  # -(B.2)
    constraints = {"alpha_nonneg": alpha >= 0, "alpha_upper": alpha <= 1,
                   "balance": y @ alpha == 0}
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha}, constraints)


def cbc_upper(data: Mapping[str, Any]) -> float:
    """Upper bound :math:`U` of the dual box: ``C`` (C-form), 1 (W-form), inf (hard)."""
    if "W" in data:
        return 1.0
    return np.inf if data["hard"] else float(data["C"])


def cbc_scale(data: Mapping[str, Any], alpha: np.ndarray,
              p: np.ndarray) -> tuple[float, float, float]:
    r"""``(scale, t, vnorm)`` with :math:`w = \text{scale}\cdot v`, :math:`t = \|w\|` bound.

    ``p`` is :math:`K(\alpha\circ y)`, so :math:`\|v\|^2 = (\alpha\circ y)^\top p`.
    """
    vnorm = float(np.sqrt(max(float((alpha * data["y"]) @ p), 0.0)))
    if "W" in data:
        W = float(data["W"])
        return (W / vnorm if vnorm > 0 else 0.0), W, vnorm
    lam = max(vnorm, float(data["radii"] @ alpha))
    t = lam - float(data["radii"] @ alpha)
    return (t / lam if lam > 0 else 0.0), t, vnorm


def cbc_bias(alpha: np.ndarray, y: np.ndarray, upper: float, score: np.ndarray,
             accuracy: float = 0.0) -> float:
    r"""Bias from the KKT conditions: mean of ``score`` :math:`= -y_jG_j` over free
    :math:`\alpha_j`, else the midpoint of the interval the bounds allow
    (:func:`conicml._kkt.bias_from_kkt`, shared with the SVM)."""
    return bias_from_kkt(alpha, y, upper, score, accuracy)


def cbc_model_from_alpha(data: Mapping[str, Any], alpha: np.ndarray, *,
                         b: float | None = None, accuracy: float = 0.0) -> dict:
    """Decode ``alpha`` of any CBC kind into the model (see the module docstring)."""
    y, r = data["y"], data["radii"]
    upper = cbc_upper(data)
    alpha = np.clip(np.asarray(alpha, dtype=float), 0.0, upper)
    p = cbc_kernel_matvec(data, alpha * y)
    scale, t, _ = cbc_scale(data, alpha, p)
    g = scale * p  # w^T phi(mu_j)
    if b is None:
        b = cbc_bias(alpha, y, upper, -g + y * (1.0 + r * t), accuracy)  # -y_j G_j
    xi = np.maximum(0.0, 1.0 + r * t - y * (g + b))
    if "W" in data:
        primal = float(xi.sum())
    elif data["hard"]:
        primal = 0.5 * t * t
    else:
        primal = 0.5 * t * t + float(data["C"]) * float(xi.sum())
    model = {"alpha": alpha, "dual_coef": scale * alpha * y,
             "support": np.flatnonzero(alpha > free_tolerance(alpha)), "b": float(b),
             "xi": xi, "t": float(t), "radii": r, "primal_objective": primal}
    if data["kernel"].name == "linear":
        model["w"] = data["means"].T @ model["dual_coef"]
    return model


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
            model["primal_objective"] = float(xi.sum())
        else:
            model["primal_objective"] = 0.5 * t * t + (
                0.0 if data["hard"] else float(data["C"]) * float(xi.sum()))
    return model


def _cbc_program(data: dict, build, decode, description: str) -> Program:
    return Program(data["kind"], data, build=build, decode=decode,
                   default_solver="clarabel", description=description)


def cbc(
    clusters: ClusterMoments,
    C: float | None = 1.0,
    eta: float = 0.5,
    *,
    bound: str = "chebyshev",
    kernel: str = "linear",
    gamma: float | str = "scale",
    robust: str | None = None,
    confidence: float = 0.9,
    form: str = "primal",
    factor: str = "auto",
) -> Program:
    r"""CBC-SOCP (3.7) or its dual (3.11): the C-parametrised cluster classifier.

    Parameters
    ----------
    clusters : ClusterMoments
        Cluster means, radii :math:`\sigma_j`, counts and labels (+1/-1), e.g.
        from :meth:`conicml.ClusterMoments.from_data`.
    C : float or None, default=1.0
        Cost of a unit of slack (> 0); ``None`` for the hard-margin variant (3.13).
    eta : float, default=0.5
        Lower bound :math:`\eta \in (0, 1)` on the probability that a cluster's
        points fall on the right side (eq. 3.2).
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

    Returns
    -------
    Program
        Objective: the optimal value of (3.7), :math:`\frac12\|w\|^2 + C\sum\xi`,
        for both forms. ``decode`` as in the module docstring.
    """
    data = _cbc_data(clusters, eta, bound, kernel, gamma, robust, confidence, form, factor)
    data["hard"] = C is None
    data["C"] = None if C is None else check_positive(C, "C")
    data["kind"] = f"socp.chance.cbc{'.hard' if C is None else ''}.{form}"
    build, decode = ((_build_cbc_primal, _decode_cbc_primal) if form == "primal"
                     else (_build_cbc_dual, _decode_cbc_dual))
    cdesc = "hard margin" if C is None else f"C={data['C']:g}"
    return _cbc_program(data, build, decode,
                        f"CBC-SOCP ({kernel} kernel, {cdesc}, eta={eta:g}, {form})")


def cbc_w(
    clusters: ClusterMoments,
    W: float = 1.0,
    eta: float = 0.5,
    *,
    bound: str = "chebyshev",
    kernel: str = "linear",
    gamma: float | str = "scale",
    robust: str | None = None,
    confidence: float = 0.9,
    form: str = "primal",
    factor: str = "auto",
) -> Program:
    r"""W-parametrised CBC (B.1) or its (kernel) dual (B.2).

    ``W`` (> 0) bounds :math:`\|w\|_2`, so :math:`2/W` bounds the margin from
    below; no mapping between ``C`` and ``W`` exists (note P10). Kinds
    ``"socp.chance.cbc_w.primal"`` / ``"socp.chance.cbc_w.dual"``; the dual is also solved
    by ``cbc-smo`` (the thesis's CBC-Iter). Objective of both forms: the
    optimal :math:`\sum_j\xi_j` of (B.1) (= minus the minimum of (B.2)).
    Other parameters as in :func:`cbc`.
    """
    data = _cbc_data(clusters, eta, bound, kernel, gamma, robust, confidence, form, factor)
    data["W"] = check_positive(W, "W")
    data["hard"] = False
    data["kind"] = f"socp.chance.cbc_w.{form}"
    build, decode = ((_build_cbc_w_primal, _decode_cbc_primal) if form == "primal"
                     else (_build_cbc_w_dual, _decode_cbc_dual))
    return _cbc_program(data, build, decode,
                        f"CBC-SOCP W-form ({kernel} kernel, W={data['W']:g}, eta={eta:g}, {form})")


def cbc_decision_values(data: Mapping[str, Any], model: Mapping[str, Any],
                        X_new: np.ndarray) -> np.ndarray:
    r""":math:`f(x) = w^\top x + b` (linear) or :math:`\sum_j c_jk(\mu_j, x) + b`."""
    if "w" in model:
        return X_new @ model["w"] + model["b"]
    sv = model["support"]
    if sv.size == 0:  # alpha = 0: a constant decision
        return np.full(X_new.shape[0], float(model["b"]))
    return data["kernel"](X_new, data["means"][sv]) @ model["dual_coef"][sv] + model["b"]


# =====================================================================================
# Section 3: ordinal regression -- baseline SVOR (4.1)/(4.2) and CBOR-SOCP (4.3)-(4.5),
# (5.1) (ch. 4-5, App. C; seed-003 note F3, F4, A2, P12-P14). Solved by the generic
# backends and, for the dual kind "socp.chance.cbor.dual", by the specialized cbor-smo.
# =====================================================================================
#
# Convention (whole package): hyperplane i is  w.x + b_i = 0  with  b_i = -theta_i,  where
# theta_1 <= ... <= theta_{r-1} are the thesis's thresholds ("w^T x - b_i" in the thesis,
# i.e. thesis b_i = theta_i = -b_i here).  Rank of x = 1 + #{i : g(x) > theta_i}
# (note P13; the thesis's "argmax indicator" (4.6) is misprinted), g(x) = w.phi(x).

_ORDINAL_KERNELS = ("linear", "rbf")
_ORDINAL_FORMS = ("primal", "dual")


def _ordinal_ranks(labels: object, n: int, name: str = "y") -> tuple[np.ndarray, int]:
    """Ranks as an int vector with every rank 1..r present (r >= 2)."""
    try:
        arr = np.asarray(labels, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"{name} must hold integer ranks 1..r: {exc}") from exc
    if arr.shape != (n,):
        raise ProgramError(f"shape mismatch: {n} inputs but {arr.size} ranks in {name}")
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise ProgramError(f"{name} must hold integer ranks 1..r (no NaN, no fractions)")
    ranks = arr.astype(np.int64)
    present = np.unique(ranks)
    r = int(present[-1]) if present.size else 0
    if present.size < 2 or present[0] != 1 or not np.array_equal(present, np.arange(1, r + 1)):
        raise ProgramError(
            f"ordinal regression needs the ranks 1..r (r >= 2) all present in {name}, got "
            f"{present[:10].tolist()}; map your ordered classes to 1, 2, ..., r first"
        )
    return ranks, r


def _ordinal_radii(kern: Kernel, kappa: float, sigmas: np.ndarray) -> np.ndarray:
    r"""Feature-space radii: :math:`\kappa\sigma_j` (linear) or
    :math:`\sqrt{2(1 - e^{-\zeta(\kappa\sigma_j)^2})}` (rbf, eq. 4.4; note P14)."""
    if kern.name == "linear":
        return kappa * sigmas
    return np.sqrt(2.0 * (1.0 - np.exp(-kern.gamma * (kappa * sigmas) ** 2)))


def _ordinal_selectors(ranks: np.ndarray, r: int) -> dict[str, np.ndarray]:
    """Index sets and partial-sum matrices shared by the programs (note P12)."""
    k = ranks.size
    upper_rows = np.flatnonzero(ranks < r)  # alpha: w.phi - theta_rank <= -d (rank < r)
    lower_rows = np.flatnonzero(ranks > 1)  # alpha*: w.phi - theta_{rank-1} >= d (rank > 1)
    thr = np.arange(1, r)[:, None]
    # s_i = sum_{rank <= i} alpha, s*_i = sum_{2 <= rank <= i+1} alpha*   (App. C, corrected)
    S = (ranks[None, :] <= thr).astype(float)
    S_star = (ranks[None, :] <= thr + 1).astype(float)
    return {
        "upper_rows": upper_rows,
        "lower_rows": lower_rows,
        "alpha_upper": (ranks < r).astype(float),
        "alpha_star_upper": (ranks > 1).astype(float),
        "S": S,
        "S_star": S_star,
        "n": k,
    }


def _ordinal_thresholds(scores: np.ndarray, margins: np.ndarray, ranks: np.ndarray,
                          r: int) -> np.ndarray:
    r"""The optimal thresholds for fixed scores, made unique (midpoint rule).

    For fixed :math:`g_j = w^\top\phi(\mu_j)` the primal (4.2)/(4.3) separates into
    :math:`\min_{\theta_1\le\dots\le\theta_{r-1}} \sum_i h_i(\theta_i)`,
    :math:`h_i(\theta) = \sum_{\mathrm{rank}\ i}(g_j + d_j - \theta)_+
    + \sum_{\mathrm{rank}\ i+1}(\theta - g_j + d_j)_+`. Each :math:`h_i` (and each
    sum over a block of tied thresholds) is minimised on an interval between two
    order statistics of its breakpoints; the pool-adjacent-violators algorithm on
    the interval midpoints returns an optimal, ordered, unique :math:`\theta`
    (where the intervals of merged blocks overlap, the merged minimiser is their
    intersection, optimal for each; otherwise the usual PAVA argument applies).
    Thresholds are not unique at the optimum (note F4), so every decode uses this
    rule and solvers can be compared on them.
    """
    up = [scores[ranks == i] + margins[ranks == i] for i in range(1, r)]
    lo = [scores[ranks == i + 1] - margins[ranks == i + 1] for i in range(1, r)]

    def block_midpoint(members: list[int]) -> float:
        a = np.concatenate([up[i] for i in members])
        c = np.concatenate([lo[i] for i in members])
        z = np.sort(np.concatenate([a, c]))
        # slope of the block sum is -|a| + #(breakpoints passed): zero on [z_(|a|), z_(|a|+1)]
        return 0.5 * (z[a.size - 1] + z[a.size])

    blocks: list[list[int]] = []
    values: list[float] = []
    for i in range(r - 1):
        blocks.append([i])
        values.append(block_midpoint([i]))
        while len(blocks) > 1 and values[-2] > values[-1]:
            merged = blocks[-2] + blocks[-1]
            blocks[-2:] = [merged]
            values[-2:] = [block_midpoint(merged)]
    theta = np.empty(r - 1)
    for members, value in zip(blocks, values):
        theta[members] = value
    return theta


def _ordinal_slacks(scores: np.ndarray, margins: np.ndarray, ranks: np.ndarray, r: int,
                    theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """xi = (g + d - theta_rank)_+ (rank < r), xi* = (theta_{rank-1} - g + d)_+ (rank > 1)."""
    xi = np.zeros(ranks.size)
    xi_star = np.zeros(ranks.size)
    a = ranks < r
    xi[a] = np.maximum(0.0, scores[a] + margins[a] - theta[ranks[a] - 1])
    s = ranks > 1
    xi_star[s] = np.maximum(0.0, theta[ranks[s] - 2] - scores[s] + margins[s])
    return xi, xi_star


def _ordinal_model(data: Mapping[str, Any], scores: np.ndarray, *, w: np.ndarray | None,
                   dual_coef: np.ndarray | None, extra: Mapping[str, Any]) -> dict:
    ranks, r, margins = data["ranks"], data["r"], data["d"]
    theta = _ordinal_thresholds(scores, margins, ranks, r)
    xi, xi_star = _ordinal_slacks(scores, margins, ranks, r, theta)
    model: dict[str, Any] = {
        # package convention: hyperplane i is w.x + b_i = 0, b_i = -theta_i (thesis b_i)
        "b": -theta,
        "thresholds": theta,
        "scores": scores,
        "xi": xi,
        "xi_star": xi_star,
        "loss": float(xi.sum() + xi_star.sum()),
        # non-unique at the optimum (note F4): nested, so `compare` does not compare them
        "dual": dict(extra, dual_coef=dual_coef),
    }
    if w is not None:
        model["w"] = w
    return model


def _ordinal_factor(data: Mapping[str, Any]) -> np.ndarray:
    """R with K = R R^T for the kernel between the centres (the centres for linear)."""
    kern: Kernel = data["kernel"]
    if kern.name == "linear":
        return data["means"]
    return psd_factor(kern.gram(data["means"]), data["factor"])


def _build_ordinal_primal(data: Mapping[str, Any]) -> ConicForm:
    """(4.3) (linear) / (4.4) (rbf, through a factor K = L L^T): LP + one SOC."""
    sel, r, W, d = data["selectors"], data["r"], data["W"], data["d"]
    ranks = data["ranks"]
    k = ranks.size
    theta = cp.Variable(r - 1, name="thresholds")
    if data["kernel"].name == "linear":
        w = cp.Variable(data["means"].shape[1], name="w")
        scores = data["means"] @ w
        variables = {"w": w}
    else:
        L = _ordinal_factor(data)
        w = cp.Variable(L.shape[1], name="v")
        scores = L @ w
        variables = {"v": w}
    xi = cp.Variable(k, name="xi")
    xi_star = cp.Variable(k, name="xi_star")
    ua, ls = sel["upper_rows"], sel["lower_rows"]
    constraints = {
        # w.phi(mu) - theta_i <= -1 + xi - r W   (4.3), rank < r
        "upper": scores[ua] - theta[ranks[ua] - 1] <= -d[ua] + xi[ua],
        # w.phi(mu) - theta_{i-1} >= 1 - xi* + r W   (4.3), rank > 1
        "lower": scores[ls] - theta[ranks[ls] - 2] >= d[ls] - xi_star[ls],
        "xi_nonneg": xi >= 0,
        "xi_star_nonneg": xi_star >= 0,
        "norm": cp.norm(w, 2) <= W,
    }
    if r > 2:
        constraints["order"] = theta[1:] - theta[:-1] >= 0  # strict > relaxed to >= (P12)
    variables.update({"thresholds": theta, "xi": xi, "xi_star": xi_star})
    problem = cp.Problem(cp.Minimize(cp.sum(xi) + cp.sum(xi_star)), list(constraints.values()))
    return ConicForm(problem, variables, constraints)


def _build_ordinal_dual(data: Mapping[str, Any]) -> ConicForm:
    """(4.5): max d^T(alpha + alpha*) - W ||R^T(alpha* - alpha)||, box, partial sums."""
    sel, W, d = data["selectors"], data["W"], data["d"]
    R = _ordinal_factor(data)
    k = data["ranks"].size
    alpha = cp.Variable(k, name="alpha")
    alpha_star = cp.Variable(k, name="alpha_star")
    D = sel["S"] @ alpha - sel["S_star"] @ alpha_star  # s_i - s*_i = gamma_{i+1} >= 0
    constraints = {
        "alpha_nonneg": alpha >= 0,
        "alpha_upper": alpha <= sel["alpha_upper"],  # alpha_r = 0 (b_r = +inf)
        "alpha_star_nonneg": alpha_star >= 0,
        "alpha_star_upper": alpha_star <= sel["alpha_star_upper"],  # alpha*_1 = 0
        "balance": D[-1] == 0,  # s*_{r-1} = s_{r-1}
    }
    if data["r"] > 2:
        constraints["partial"] = D[:-1] >= 0  # s*_i <= s_i (direction verified, note F4)
    objective = d @ (alpha + alpha_star) - W * cp.norm(R.T @ (alpha_star - alpha), 2)
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha, "alpha_star": alpha_star}, constraints)


def _ordinal_kernel_scores(data: Mapping[str, Any], coef: np.ndarray) -> np.ndarray:
    """K @ coef without forming K for the linear kernel."""
    kern: Kernel = data["kernel"]
    means = data["means"]
    if kern.name == "linear":
        return means @ (means.T @ coef)
    support = np.flatnonzero(coef)
    out = np.zeros(means.shape[0])
    for start in range(0, support.size, 512):
        idx = support[start:start + 512]
        out += kern(means, means[idx]) @ coef[idx]
    return out


def _decode_ordinal_dual(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    sel = data["selectors"]
    alpha = np.clip(np.asarray(solution.values["alpha"], dtype=float), 0.0, sel["alpha_upper"])
    alpha_star = np.clip(np.asarray(solution.values["alpha_star"], dtype=float), 0.0,
                         sel["alpha_star_upper"])
    v = alpha_star - alpha
    Kv = _ordinal_kernel_scores(data, v)
    rho = float(np.sqrt(max(v @ Kv, 0.0)))
    # w = (W / rho) sum_j (alpha*_j - alpha_j) phi(mu_j)   (eq. 5.2; C.2 with rho > 0)
    # rho below round-off of ||sum_j v_j phi(mu_j)|| <= sum|v_j| max||phi||: w undetermined
    phi_max = float(np.sqrt(np.max(data["kernel"].diagonal(data["means"]))))
    scale = data["W"] / rho if rho > 1e-7 * np.abs(v).sum() * phi_max else 0.0
    dual_coef = scale * v
    scores = scale * Kv
    w = data["means"].T @ dual_coef if data["kernel"].name == "linear" else None
    return _ordinal_model(data, scores, w=w, dual_coef=dual_coef,
                          extra={"alpha": alpha, "alpha_star": alpha_star, "rho": rho})


def _decode_ordinal_primal(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    extra: dict[str, Any] = {"thresholds_solver": np.asarray(solution.values["thresholds"])}
    for key, name in (("upper", "alpha"), ("lower", "alpha_star")):
        if key in solution.duals:
            full = np.zeros(data["ranks"].size)
            rows = data["selectors"]["upper_rows" if key == "upper" else "lower_rows"]
            full[rows] = np.maximum(np.asarray(solution.duals[key], dtype=float), 0.0)
            extra[name] = full
    if data["kernel"].name == "linear":
        w = np.asarray(solution.values["w"], dtype=float)
        return _ordinal_model(data, data["means"] @ w, w=w, dual_coef=None, extra=extra)
    v = np.asarray(solution.values["v"], dtype=float)
    L = _ordinal_factor(data)
    # w = Phi^T c with L^T c = v (K = Phi Phi^T = L L^T): minimum-norm c
    dual_coef = np.linalg.lstsq(L.T, v, rcond=None)[0]
    return _ordinal_model(data, L @ v, w=None, dual_coef=dual_coef, extra=extra)


def _ordinal_program(data: dict, description: str) -> Program:
    primal = data["form"] == "primal"
    return Program(
        data["kind"],
        data,
        build=_build_ordinal_primal if primal else _build_ordinal_dual,
        decode=_decode_ordinal_primal if primal else _decode_ordinal_dual,
        default_solver="clarabel",
        description=description,
    )


def cbor(
    clusters: ClusterMoments,
    *,
    W: float = 1.0,
    eta: float = 0.5,
    kernel: str = "linear",
    gamma: float | str = "scale",
    bound: str = "chebyshev",
    form: str = "dual",
    factor: str = "auto",
) -> Program:
    r"""CBOR-SOCP: clustering-based ordinal regression (seed 003 eqs. 4.3–4.5, 5.1).

    Each cluster :math:`j` of rank :math:`i` is a sphere of centre :math:`\mu_j`
    and radius :math:`\kappa\sigma_j` (:math:`\kappa = \sqrt{\eta/(1-\eta)}`,
    Chebyshev; or :math:`\Phi^{-1}(\eta)`), which must lie between the
    hyperplanes of thresholds :math:`\theta_{i-1}` and :math:`\theta_i` with
    margin 1 (up to slacks), under :math:`\|w\| \le W`:

    .. math::

        \min_{w,\theta,\xi,\xi^*} \sum_j (\xi_j + \xi_j^*)
        \ \text{s.t.}\ w^\top\mu_j - \theta_{i} \le -1 + \xi_j - \kappa\sigma_jW,\
        w^\top\mu_j - \theta_{i-1} \ge 1 - \xi^*_j + \kappa\sigma_jW,\
        \xi, \xi^* \ge 0,\ \|w\|_2 \le W,\ \theta_{i-1} \le \theta_i.  \quad (4.3)

    With ``kernel="rbf"`` (:math:`k(x,z) = e^{-\zeta\|x-z\|^2}`, :math:`\zeta` =
    ``gamma``) :math:`\mu_j \to \phi(\mu_j)` and :math:`\kappa\sigma_j \to
    r_j = \sqrt{2(1 - e^{-\zeta(\kappa\sigma_j)^2})}` (4.4). The dual (4.5) is

    .. math::

        \max_{\alpha,\alpha^*}\ d^\top(\alpha + \alpha^*)
            - W\sqrt{(\alpha^*-\alpha)^\top K(\alpha^*-\alpha)}
        \ \text{s.t.}\ 0 \le \alpha, \alpha^* \le 1,\ s^*_i \le s_i\ (i \le r-2),\
        s^*_{r-1} = s_{r-1},

    :math:`d_j = 1 + r_jW`, :math:`K_{jl} = k(\mu_j, \mu_l)`,
    :math:`s_i = \sum_{\mathrm{rank}\le i}\alpha`,
    :math:`s^*_i = \sum_{2\le\mathrm{rank}\le i+1}\alpha^*`, with
    :math:`\alpha_j \equiv 0` for rank :math:`r` and :math:`\alpha^*_j \equiv 0`
    for rank 1 (App. C; the partial-sum direction verified in note F4).

    Parameters
    ----------
    clusters : ClusterMoments
        Cluster means, radii (in the clusters' own ``sigma`` convention), counts
        and labels = ranks 1..r (all present, r >= 2).
    W : float, default=1.0
        Bound on :math:`\|w\|` (:math:`2/W` lower-bounds the margin).
    eta : float, default=0.5
        Probability level of the chance constraints, in (0, 1).
    kernel : {"linear", "rbf"}, default="linear"
        The radius map of (4.4) holds for the Gaussian kernel only.
    gamma : float or {"scale", "auto"}, default="scale"
        :math:`\zeta` of the rbf kernel (resolved against the cluster means).
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        :math:`\kappa = \sqrt{\eta/(1-\eta)}` or :math:`\Phi^{-1}(\eta)`.
    form : {"primal", "dual"}, default="dual"
        Kind ``"socp.chance.cbor.primal"`` (4.3)/(4.4) or ``"socp.chance.cbor.dual"`` (4.5),
        the latter also accepted by the specialized ``cbor-smo`` solver.
    factor : {"auto", "cholesky", "eigen"}, default="auto"
        Factor of the Gram matrix of the centres for the rbf kernel.

    Returns
    -------
    Program
        Objective (both forms, every solver): the optimal total slack
        :math:`\sum_j \xi_j + \xi^*_j` (= the dual maximum). ``decode`` gives
        ``w`` (linear), ``thresholds`` :math:`\theta` (ordered), ``b`` =
        :math:`-\theta` (package convention: hyperplane :math:`i` is
        :math:`w^\top x + b_i = 0`), ``scores`` :math:`g(\mu_j)`, the slacks
        ``xi``/``xi_star`` and ``loss`` recomputed at those thresholds, and under
        ``"dual"`` the non-unique multipliers ``alpha``, ``alpha_star``, ``rho``
        and ``dual_coef`` (:math:`g(x) = \sum_j` ``dual_coef``:math:`_j
        k(\mu_j, x)`). Predicted rank: :math:`1 + \#\{i : g(x) > \theta_i\}`.
        The dual determines :math:`w = W\sum_j v_j\phi(\mu_j)/\rho` only when
        :math:`\rho > 0`, i.e. when :math:`\|w\| \le W` is active at the
        optimum; otherwise (W large for the data) the primal is an LP whose
        :math:`w` need not be unique and the dual decode returns
        :math:`w = 0`: use ``form="primal"``.

    Raises
    ------
    ProgramError
        Labels not the ranks 1..r, W <= 0, eta outside (0, 1), unknown kernel,
        bound or form.
    """
    if not isinstance(clusters, ClusterMoments):
        raise ProgramError(
            f"cbor expects a ClusterMoments, got {type(clusters).__name__}; build one with "
            "ClusterMoments.from_data(X, ranks, clustering=...)"
        )
    W = check_positive(W, "W")
    if form not in _ORDINAL_FORMS:
        raise ProgramError(f"form must be 'primal' or 'dual', got {form!r}")
    if kernel not in _ORDINAL_KERNELS:
        raise ProgramError(
            f"cbor supports kernel='linear' or 'rbf' (the radius map (4.4) needs k(x,x) = 1), "
            f"got {kernel!r}"
        )
    if factor not in ("auto", "cholesky", "eigen"):
        raise ProgramError(f"factor must be 'auto', 'cholesky' or 'eigen', got {factor!r}")
    kappa = cbc_kappa(eta, bound)  # kappa = sqrt(eta / (1 - eta)) as in (3.4), (4.3)
    means = clusters.means
    ranks, r = _ordinal_ranks(clusters.labels, means.shape[0], "clusters.labels")
    kern = make_kernel(kernel, means, gamma=gamma)
    radii = _ordinal_radii(kern, kappa, clusters.sigmas)
    data = {
        "kind": f"socp.chance.cbor.{form}",
        "clusters": clusters,
        "means": means,
        "ranks": ranks,
        "r": r,
        "W": W,
        "eta": float(eta),
        "kappa": kappa,
        "kernel": kern,
        "radii": radii,
        "d": 1.0 + radii * W,
        "form": form,
        "factor": factor,
        "selectors": _ordinal_selectors(ranks, r),
    }
    return _ordinal_program(
        data, f"CBOR-SOCP ({kernel} kernel, {means.shape[0]} clusters, {r} ranks, W={W:g}, "
        f"eta={float(eta):g}, {form})")


def _build_svor_primal(data: Mapping[str, Any]) -> ConicForm:
    """Chu & Keerthi's explicit-threshold SVOR, one pair of constraints per point."""
    X, y, r = data["means"], data["ranks"], data["r"]
    theta = cp.Variable(r - 1, name="thresholds")
    if data["kernel"].name == "linear":
        w = cp.Variable(X.shape[1], name="w")
        f = X @ w
        variables = {"w": w}
    else:
        L = _ordinal_factor(data)
        w = cp.Variable(L.shape[1], name="v")
        f = L @ w
        variables = {"v": w}
    xi = cp.Variable(y.size, name="xi")
    xi_star = cp.Variable(y.size, name="xi_star")
    upper, lower = [], []
    for i in range(1, r + 1):
        rows = np.flatnonzero(y == i)
        if i < r:  # w.x - b_i <= -1 + xi   (4.1)
            upper.append(f[rows] - theta[i - 1] <= -1 + xi[rows])
        if i > 1:  # w.x - b_{i-1} >= 1 - xi*   (4.1)
            lower.append(f[rows] - theta[i - 2] >= 1 - xi_star[rows])
    constraints: dict[str, Any] = {f"upper_{i + 1}": c for i, c in enumerate(upper)}
    constraints.update({f"lower_{i + 2}": c for i, c in enumerate(lower)})
    constraints.update({"xi_nonneg": xi >= 0, "xi_star_nonneg": xi_star >= 0})
    if r > 2:
        constraints["order"] = theta[1:] - theta[:-1] >= 0
    loss = cp.sum(xi) + cp.sum(xi_star)
    if data["C"] is None:  # (4.2): min sum(xi + xi*) s.t. ||w|| <= W
        constraints["norm"] = cp.norm(w, 2) <= data["W"]
        objective = cp.Minimize(loss)
    else:  # (4.1): min 1/2 ||w||^2 + C sum(xi + xi*)
        objective = cp.Minimize(0.5 * cp.sum_squares(w) + data["C"] * loss)
    variables.update({"thresholds": theta, "xi": xi, "xi_star": xi_star})
    return ConicForm(cp.Problem(objective, list(constraints.values())), variables, constraints)


def _decode_svor(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    extra = {"thresholds_solver": np.asarray(solution.values["thresholds"])}
    if data["kernel"].name == "linear":
        w = np.asarray(solution.values["w"], dtype=float)
        return _ordinal_model(data, data["means"] @ w, w=w, dual_coef=None, extra=extra)
    v = np.asarray(solution.values["v"], dtype=float)
    L = _ordinal_factor(data)
    dual_coef = np.linalg.lstsq(L.T, v, rcond=None)[0]
    return _ordinal_model(data, L @ v, w=None, dual_coef=dual_coef, extra=extra)


def svor(
    X: np.ndarray,
    y: np.ndarray,
    *,
    W: float | None = None,
    C: float | None = None,
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    factor: str = "auto",
) -> Program:
    r"""Baseline SVOR with explicit thresholds (Chu & Keerthi 2005; seed 003 eqs. 4.1, 4.2).

    Exactly one of ``W`` and ``C``:

    * ``W`` (kind ``"socp.chance.svor"``, eq. 4.2, the thesis's baseline):
      :math:`\min \sum_{i,j}(\xi_i^j + \xi_i^{*j})` s.t. :math:`\|w\|_2 \le W`;
    * ``C`` (kind ``"qp.chance.svor"``, eq. 4.1):
      :math:`\min \tfrac12\|w\|^2 + C\sum_{i,j}(\xi_i^j + \xi_i^{*j})`;

    both under :math:`w^\top x_i^j - \theta_i \le -1 + \xi_i^j`,
    :math:`w^\top x_i^j - \theta_{i-1} \ge 1 - \xi_i^{*j}`, :math:`\xi,\xi^* \ge 0`,
    :math:`\theta_{i-1} \le \theta_i` (the strict order of (4.1) relaxed to
    :math:`\le`, note P12). The two are equivalent: the (4.1) solution for
    ``C`` solves (4.2) with :math:`W = \|w_C\|`. Kernels enter through a factor
    of the Gram matrix (:func:`conicml.kernels.psd_factor`).

    Parameters
    ----------
    X : ndarray of shape (m, n)
    y : ndarray of shape (m,)
        Integer ranks 1..r, all present (r >= 2).
    W, C : float
        Exactly one, > 0.
    kernel : {"linear", "rbf", "poly"}, default="linear"
    gamma, degree, coef0
        Kernel parameters, as in :func:`conicml.make_kernel`.
    factor : {"auto", "cholesky", "eigen"}, default="auto"

    Returns
    -------
    Program
        The objective is the program's own ((4.2): total slack; (4.1):
        :math:`\tfrac12\|w\|^2 + C\sum\xi`). ``decode`` gives the same entries as
        :func:`cbor` (``w``, ``thresholds``, ``b`` = :math:`-\theta`, ``scores``,
        ``xi``, ``xi_star``, ``loss``) with the points as centres.
    """
    from .._validation import check_matrix

    X = check_matrix(X)
    ranks, r = _ordinal_ranks(y, X.shape[0])
    if (W is None) == (C is None):
        raise ProgramError("give exactly one of W (SOCP form 4.2) and C (QP form 4.1)")
    if W is not None:
        W = check_positive(W, "W")
    else:
        C = check_positive(C, "C")
    if kernel == "precomputed":
        raise ProgramError("svor does not take a precomputed kernel; pass the inputs X")
    if factor not in ("auto", "cholesky", "eigen"):
        raise ProgramError(f"factor must be 'auto', 'cholesky' or 'eigen', got {factor!r}")
    kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
    kind = "socp.chance.svor" if W is not None else "qp.chance.svor"
    data = {
        "kind": kind,
        "means": X,
        "ranks": ranks,
        "r": r,
        "W": W,
        "C": C,
        "kernel": kern,
        "d": np.ones(X.shape[0]),
        "factor": factor,
    }
    label = f"W={W:g}" if W is not None else f"C={C:g}"
    return Program(kind, data, build=_build_svor_primal, decode=_decode_svor,
                   default_solver="clarabel",
                   description=f"SVOR ({kernel} kernel, {X.shape[0]} points, {r} ranks, {label})")


def ordinal_scores(data: Mapping[str, Any], model: Mapping[str, Any],
                   X_new: np.ndarray) -> np.ndarray:
    r"""Latent scores :math:`g(x) = w^\top\phi(x)` of a decoded CBOR/SVOR model."""
    if "w" in model:
        return X_new @ model["w"]
    return data["kernel"](X_new, data["means"]) @ model["dual"]["dual_coef"]


def ordinal_predict(data: Mapping[str, Any], model: Mapping[str, Any],
                    X_new: np.ndarray) -> np.ndarray:
    r"""Ranks :math:`1 + \#\{i : g(x) > \theta_i\}` (note P13; the thesis's (4.6) misprints it)."""
    g = ordinal_scores(data, model, X_new)
    return 1 + (g[:, None] > model["thresholds"][None, :]).sum(axis=1)


ORDINAL_KINDS = ("socp.chance.cbor.primal", "socp.chance.cbor.dual", "socp.chance.svor",
                 "qp.chance.svor")

__all__ += ["ORDINAL_KINDS", "cbor", "ordinal_predict", "ordinal_scores", "svor"]

# ============================ end of section 3 (ordinal regression) ============================
