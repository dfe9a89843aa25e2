r"""Maximum-margin classifier with specified false-negative / false-positive rates.

Seed 003 (J. Saketha Nath, IISc 2007), chapter 2: each class is known by its first two
moments and its chance constraint becomes a second-order cone (Notes of
:func:`specified_rates`). :func:`specified_rates` builds the SOCP (2.5) (kind
``"socp.chance.rates.primal"``) or its ellipsoid-distance dual (2.13)
(``"socp.chance.rates.dual"``), also solved by the specialized ``lin-han`` solver.

Package convention: the decision function is :math:`f(x) = w^\top x + b`,
positive class (label ``+1``, the thesis's class 1) iff :math:`f(x) \ge 0`.
The thesis writes :math:`w^\top x - b`, so its threshold is :math:`-b` here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np
from scipy.stats import norm

from .. import kinds
from .._utils.deprecation import renamed_keywords
from .._utils.validation import check_positive, check_X_y
from ..certificates.chance import bracket, claimed_gap, missing, row_violation, values_of
from ..certificates.conic import residuals
from ..exceptions import ProgramError, SolverError
from ..kernels import Kernel, make_kernel, psd_factor
from ..moments import ClassMoments, as_class_moments, takes_X_y
from ..program import ConicForm, Program
from ..solution import Residuals, Solution, Status

__all__ = [
    "RATES_KINDS",
    "rate_kappa",
    "rates_decision_values",
    "specified_rates",
]

# Maximum-margin classifier with specified FN / FP rates (ch. 2; errata S003-F1)
#
# Math (thesis eqs. 2.1-2.5, 2.13-2.21; errata S003-F1, S003-P1..P5).
#
# Chance-constrained program (2.1), eta_1 = eta_pos bounds the error on POSITIVES
# (false negatives) and eta_2 = eta_neg the error on NEGATIVES (false positives) --
# errata S003-P2: one sentence of Sec. 2.2 swaps the words, the math is followed here:
#
#     min 1/2 ||w||^2  s.t.  Prob(X1 on the negative side) <= eta_pos,
#                            Prob(X2 on the positive side) <= eta_neg.
#
# Theorem 2.1 with e = 1 - eta_i gives the ch.-2 kappa convention (errata S003-P1)
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
RATES_KINDS = (kinds.RATES_PRIMAL, kinds.RATES_DUAL)
_RATES_FORMS = ("primal", "dual")
_BOUNDS = ("chebyshev", "gaussian")
_RATES_TOUCH = 1e-10  # relative squared distance below which the ellipsoids touch/overlap


@renamed_keywords(eta="error")
def rate_kappa(error: float, bound: str = "chebyshev", *, name: str = "error") -> float:
    r"""The cone multiplier :math:`\kappa` of a class whose error rate is at most ``error``.

    Chapter-2 convention (errata S003-P1): ``error`` (the thesis's :math:`\eta`) is the
    largest allowed probability of falling on the wrong side, i.e. Theorem 2.1 with
    :math:`e = 1 - \eta`:

    .. math::

        \kappa_{\text{chebyshev}} = \sqrt{\frac{1-\eta}{\eta}}, \qquad
        \kappa_{\text{gaussian}} = \Phi^{-1}(1 - \eta).

    Parameters
    ----------
    error : float
        Error rate in :math:`(0, 1]` (``"gaussian"``: in :math:`(0, 1/2]`); the old
        keyword ``eta`` is deprecated.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        Distribution-free (Chebyshev–Cantelli) or normal moments.
    name : str, default="error"
        Parameter name used in error messages.

    Raises
    ------
    ProgramError
        ``error`` outside its range (the Gaussian :math:`\kappa` is negative for
        :math:`\eta > 1/2` and makes the constraint non-convex), or an unknown
        ``bound``.
    """
    if bound not in _BOUNDS:
        raise ProgramError(f"bound must be 'chebyshev' or 'gaussian', got {bound!r}")
    eta = check_positive(error, name)
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
    kappa_pos = rate_kappa(eta_pos, bound, name="error_pos")
    kappa_neg = rate_kappa(eta_neg, bound, name="error_neg")
    epsilon = check_positive(epsilon, "ridge", allow_zero=True)
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
            # any factor Sigma = C C^T (errata S003-P3: ||C^T w||, never ||C w||)
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
        # centring identity (errata S003-F1): w^T Sigma_i w = ||m_i^{-1/2} P_i L_i v||^2 with
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
    return (f"no hyperplane meets the specified rates error_pos={data['eta_pos']:g}, "
            f"error_neg={data['eta_neg']:g} (kappa_pos={data['kappa_pos']:.6g}, "
            f"kappa_neg={data['kappa_neg']:.6g}, bound={data['bound']!r}): the two "
            "class ellipsoids overlap, so the program is infeasible; raise error_pos or error_neg")


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


# -- certificates: the ellipsoid-distance bracket, O(d^2), no cvxpy problem ---------------
#: A tangent bracket above this is re-tried with the fitted tangent points (kinks).
_RATES_REFIT = 1e-7


def _fit_ball(A: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Least-squares ``u`` of ``A u = rhs``, scaled into the unit ball (a feasible point)."""
    u = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return u / max(1.0, float(np.linalg.norm(u)))


def _rates_pairs(data: Mapping[str, Any], w: np.ndarray, fit: bool
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    r"""Feasible pairs :math:`z_\pm \in B_\pm` (2.13) implied by the hyperplane ``w``.

    First the tangent points of the supporting hyperplanes of normal :math:`w`
    (the minimiser of :math:`w^\top z` over :math:`B_+`, the maximiser over
    :math:`B_-`), :math:`z_\pm = \mu_\pm \mp \kappa_\pm C_\pm C_\pm^\top w /
    \|C_\pm^\top w\|`: the optimal pair when ``w`` is optimal ((2.14)–(2.16)). At a
    kink :math:`C_\pm^\top w = 0` (the ellipsoid is flat along :math:`w`) every point
    of :math:`B_\pm` is tangent and the direction of :math:`C_\pm^\top w` is round-off;
    with ``fit`` the pairs where one side, or both at once, are instead fitted by least
    squares in their balls to the optimality condition (2.14) :math:`z_+ - z_- =
    2w/\|w\|^2` are added (still feasible points, so every bound stays valid).
    """
    mp, mn = data["mean_pos"], data["mean_neg"]
    kp, kn = float(data["kappa_pos"]), float(data["kappa_neg"])
    Cp, Cn = data["C_pos"], data["C_neg"]
    ap, an = Cp.T @ w, Cn.T @ w
    sp, sn = float(np.linalg.norm(ap)), float(np.linalg.norm(an))
    z_pos = mp - kp * (Cp @ (ap / sp)) if sp > 0 else mp
    z_neg = mn + kn * (Cn @ (an / sn)) if sn > 0 else mn
    pairs = [(z_pos, z_neg)]
    if fit:
        step = 2.0 * w / float(w @ w)  # (2.14): z_pos - z_neg at the optimum
        if kp > 0:
            pairs.append((mp - kp * (Cp @ _fit_ball(kp * Cp, mp - z_neg - step)), z_neg))
        if kn > 0:
            pairs.append((z_pos, mn + kn * (Cn @ _fit_ball(kn * Cn, z_pos - step - mn))))
        if kp > 0 and kn > 0:  # both sides at kinks (two flat ellipsoids): fit them jointly
            A = np.hstack([kp * Cp, kn * Cn])
            uu = np.linalg.lstsq(A, mp - mn - step, rcond=None)[0]
            up, un = np.split(uu, [Cp.shape[1]])
            up = up / max(1.0, float(np.linalg.norm(up)))
            un = un / max(1.0, float(np.linalg.norm(un)))
            pairs.append((mp - kp * (Cp @ up), mn + kn * (Cn @ un)))
    return pairs


def _certify_rates_primal(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the SOCP (2.5) at :math:`(w, b)`, from its dual (2.13).

    * ``primal``: the violation of the two cone constraints of (2.5), each relative
      to the magnitude of its terms;
    * ``dual`` (the optimality measure): the bracket :math:`(P - D)/P` between
      :math:`P = \tfrac12\|w\|^2` and the lower bound :math:`D = 2/\|z_+ - z_-\|^2`
      that any feasible pair gives, here the tangent points of ``w``
      (:func:`_rates_pairs`) — weak duality of (2.5) and (2.13): the
      Lagrangian dual of (2.5) is :math:`\max_{z_\pm\in B_\pm} 2/\|z_+ - z_-\|^2`
      (the stationarity :math:`w = 2(z_+ - z_-)/\|z_+ - z_-\|^2` of (2.14) is not
      used: it reads ~ the square root of the gap and would demote accurate points);
    * ``gap``: the same bracket and the mismatch between the reported objective
      and :math:`P`.
    """
    got = values_of(solution, "w" if data["kernel"] is None else "v", "b")
    if got is None:
        return missing()
    w, b = got[0], float(got[1][0])
    mp, mn = data["mean_pos"], data["mean_neg"]
    kp, kn = float(data["kappa_pos"]), float(data["kappa_neg"])
    sp = float(np.linalg.norm(data["C_pos"].T @ w))
    sn = float(np.linalg.norm(data["C_neg"].T @ w))
    gp, gn = float(w @ mp), float(w @ mn)
    # (2.5): w.mu_pos + b - 1 >= kappa_pos ||C_pos^T w||, -b - w.mu_neg - 1 >= kappa_neg ...
    viol = np.array([kp * sp - (gp + b - 1.0), kn * sn - (-b - gn - 1.0)])
    scale = np.array([max(abs(gp), abs(b), 1.0, kp * sp), max(abs(gn), abs(b), 1.0, kn * sn)])
    primal = row_violation(viol, scale)
    P = 0.5 * float(w @ w)
    if not P > 0:  # w = 0 meets neither constraint
        return residuals(primal, math.inf, math.inf)
    dual = math.inf
    for fit in (False, True):
        for z_pos, z_neg in _rates_pairs(data, w, fit):
            dist2 = float(np.sum((z_pos - z_neg) ** 2))
            if dist2 > 0:  # else the ellipsoids touch: no hyperplane, no finite optimum
                dual = min(dual, bracket(P, 2.0 / dist2))
        if dual <= _RATES_REFIT:
            break
    return residuals(primal, dual, max(dual, claimed_gap(solution, P)))


def _certify_rates_dual(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the ellipsoid distance (2.13) at :math:`(u_+, u_-)`.

    * ``primal``: :math:`\max(\|u_\pm\| - 1)_+` (the balls of (2.13));
    * ``dual`` and ``gap``: the bracket :math:`(D - s(e)_+^2)/D` between the
      squared distance :math:`D = \|z_+ - z_-\|^2` of the (ball-projected) pair and
      the support-function lower bound :math:`\delta^* \ge s(e) = e^\top(\mu_+ -
      \mu_-) - \kappa_+\|C_+^\top e\| - \kappa_-\|C_-^\top e\|` along
      :math:`e = (z_+ - z_-)/\|z_+ - z_-\|` (every hyperplane of normal :math:`e`
      separating the ellipsoids bounds their distance below; equality at the
      optimum, (2.14)); ``gap`` also holds the mismatch between the reported
      objective and the point's :math:`D`. Where no direction separates the
      ellipsoids (:math:`s(e) \le 0`, or :math:`D = 0`) the bracket is 1: the
      classifier (2.5) is infeasible and its dual form is never certified there
      (the kind stands for (2.5), whose optimum :math:`2/\delta^{*2}` is then
      infinite; ``decode`` raises, the specialized solvers say ``INFEASIBLE``).
    """
    got = values_of(solution, "u_pos", "u_neg")
    if got is None:
        return missing()
    u_pos, u_neg = got
    norms = (float(np.linalg.norm(u_pos)), float(np.linalg.norm(u_neg)))
    primal = max(0.0, norms[0] - 1.0, norms[1] - 1.0)
    z_pos, z_neg = rates_points(data, u_pos, u_neg)
    value = float(np.sum((z_pos - z_neg) ** 2))  # the objective at the returned point
    z_pos, z_neg = rates_points(data, u_pos / max(1.0, norms[0]), u_neg / max(1.0, norms[1]))
    diff = z_pos - z_neg
    D = float(diff @ diff)
    Cp, Cn = data["C_pos"], data["C_neg"]
    kp, kn = float(data["kappa_pos"]), float(data["kappa_neg"])
    dmu = data["mean_pos"] - data["mean_neg"]
    gap = 1.0
    if D > 0:
        e = diff / math.sqrt(D)
        s = float(e @ dmu) - kp * float(np.linalg.norm(Cp.T @ e)) \
            - kn * float(np.linalg.norm(Cn.T @ e))
        gap = bracket(D, max(s, 0.0) ** 2)
    return residuals(primal, gap, max(gap, claimed_gap(solution, value)))


@renamed_keywords(eta_pos="error_pos", eta_neg="error_neg", epsilon="ridge")
@takes_X_y
def specified_rates(
    data: ClassMoments | tuple,
    error_pos: float,
    error_neg: float,
    *,
    kernel: str = "linear",
    bound: str = "chebyshev",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    ridge: float = 0.0,
    form: str = "primal",
    factor: str = "auto",
    cone: str = "centred",
) -> Program:
    r"""Maximum-margin classifier with specified false-negative / false-positive rates.

    Thesis ch. 2 (eqs. 2.1–2.5): the hyperplane of largest margin such that a
    positive point (moments :math:`\mu_+, \Sigma_+`) falls on the negative
    side with probability at most ``error_pos`` and a negative point on the
    positive side with probability at most ``error_neg``, for *every*
    distribution with those moments (``bound="chebyshev"``) or for Gaussian
    classes (``bound="gaussian"``). With :math:`\kappa_\pm` from
    :func:`rate_kappa` and :math:`\Sigma_\pm + \epsilon I = C_\pm C_\pm^\top`
    (:math:`\epsilon` = ``ridge``),
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
    X : array-like of shape (n_samples, n_features), or ClassMoments
        Training data (moments then use the biased :math:`1/m` covariance), or the
        moments of the two classes (then no ``y``). Kernels other than ``"linear"`` need
        the data.
    y : array-like of shape (n_samples,), default=None
        Labels exactly ``+1``/``-1`` (with ``X`` an array).
    error_pos : float
        Largest error rate on the positive class (false negatives),
        :math:`\eta_1` of the thesis, in :math:`(0, 1]`. (Old keyword: ``eta_pos``,
        deprecated.)
    error_neg : float
        Largest error rate on the negative class (false positives),
        :math:`\eta_2`, in :math:`(0, 1]`. (Old keyword: ``eta_neg``, deprecated.)
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        ``"rbf"`` is the thesis's Gaussian kernel :math:`\exp(-\zeta\|x-x'\|^2)`
        with :math:`\zeta` = ``gamma``.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        How rates become :math:`\kappa` (:func:`rate_kappa`).
    gamma, degree, coef0
        Kernel hyper-parameters (:func:`conicml.make_kernel`).
    ridge : float, default=0.0
        The covariance ridge :math:`\epsilon \ge 0` (glossary; old keyword ``epsilon``,
        deprecated) added to both covariances
        (:math:`\Sigma_\pm + \epsilon I`, or :math:`H_\pm + \epsilon I` in
        the kernel case, as the thesis's experiments do). The specialized
        ``lin-han`` solver needs positive definite covariances, hence
        :math:`\epsilon > 0` for kernels (:math:`H_\pm` is always singular,
        errata S003-P5) and for singular :math:`\Sigma_\pm`; every solver solves the
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
        ``ridge``, unknown kernel / bound / form.

    Notes
    -----
    Seed 003 (J. Saketha Nath, *Learning Algorithms using Chance-Constrained
    Programs*, IISc 2007), chapter 2. Every class is known only through its first
    two moments, and a chance constraint
    :math:`\operatorname{Prob}(\text{correct side}) \ge e` is replaced by its
    distribution-free Chebyshev–Cantelli equivalent (Theorem 2.1, eq. 2.2)

    .. math::

        c^\top\mu - d \ge \kappa \sqrt{c^\top \Sigma c}
        \;\Longrightarrow\; \operatorname{Prob}(c^\top X \ge d) \ge e,
        \qquad \kappa = \sqrt{e / (1 - e)}

    (:math:`\kappa = \Phi^{-1}(e)` if :math:`X` is Gaussian), a second-order cone.
    """
    if isinstance(kernel, str) and kernel == "precomputed" and isinstance(data, ClassMoments):
        raise ProgramError("kernel='precomputed' needs (K, y), not ClassMoments")
    if not isinstance(kernel, str):
        raise ProgramError(f"unknown kernel {kernel!r}")
    prepared = _rates_data(data, error_pos, error_neg, kernel, bound, gamma, degree, coef0,
                           ridge, form, factor, cone)
    primal = form == "primal"
    return Program(
        RATES_KINDS[0] if primal else RATES_KINDS[1],
        prepared,
        build=_build_rates_primal if primal else _build_rates_dual,
        certify=_certify_rates_primal if primal else _certify_rates_dual,
        decode=_decode_rates_primal if primal else _decode_rates_dual,
        default_solver="clarabel",
        description=(f"chance-constrained classifier, specified rates error_pos={error_pos:g}, "
                     f"error_neg={error_neg:g} ({kernel} kernel, {bound}, {form})"),
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


