r"""Ordinal regression with chance constraints: SVOR (4.1)/(4.2) and CBOR-SOCP (4.3)-(5.1).

Seed 003, chapters 4–5 and App. C. :func:`svor` is the baseline support vector
ordinal regression with implicit constraints (kinds ``"socp.chance.svor"`` and
``"qp.chance.svor"``); :func:`cbor` the cluster-based ordinal regressor
CBOR-SOCP (kinds ``"socp.chance.cbor.primal|dual"``; the dual is also solved by
the specialized ``cbor-smo``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .. import kinds
from .._utils.deprecation import renamed_keywords
from .._utils.validation import check_positive
from ..certificates.chance import (
    SLACK_FLOOR,
    best_scale,
    bracket,
    claimed_gap,
    dual_of,
    missing,
    row_violation,
    values_of,
)
from ..certificates.conic import conic_certificate, residuals
from ..certificates.kkt import free_tolerance, solver_accuracy
from ..exceptions import ProgramError
from ..kernels import Kernel, make_kernel, psd_factor
from ..moments import ClusterMoments
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution
from .cbc import cbc_kappa

__all__: list[str] = []

# Ordinal regression -- baseline SVOR (4.1)/(4.2) and CBOR-SOCP (4.3)-(4.5),
# (5.1) (ch. 4-5, App. C; errata S003-F3, S003-F4, S003-P12..P14). Solved by the generic
# backends and, for the dual kind "socp.chance.cbor.dual", by the specialized cbor-smo.
#
# Convention (whole package): hyperplane i is  w.x + b_i = 0  with  b_i = -theta_i,  where
# theta_1 <= ... <= theta_{r-1} are the thesis's thresholds ("w^T x - b_i" in the thesis,
# i.e. thesis b_i = theta_i = -b_i here).  Rank of x = 1 + #{i : g(x) > theta_i}
# (errata S003-P13; the thesis's "argmax indicator" (4.6) is misprinted), g(x) = w.phi(x).

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
    :math:`\sqrt{2(1 - e^{-\zeta(\kappa\sigma_j)^2})}` (rbf, eq. 4.4; errata S003-P14)."""
    if kern.name == "linear":
        return kappa * sigmas
    return np.sqrt(2.0 * (1.0 - np.exp(-kern.gamma * (kappa * sigmas) ** 2)))


def _ordinal_selectors(ranks: np.ndarray, r: int) -> dict[str, np.ndarray]:
    """Index sets and partial-sum matrices shared by the programs (errata S003-P12)."""
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
    Thresholds are not unique at the optimum (errata S003-F4), so every decode uses this
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
        # non-unique at the optimum (errata S003-F4): nested, so `compare` does not compare them
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


def _score_variable(data: Mapping[str, Any]) -> tuple[cp.Variable, Any, dict]:
    """``(w, scores, variables)`` of an ordinal primal: ``w`` itself for the linear kernel,
    else the coordinates ``v`` of w in the factor K = L L^T (scores L v)."""
    if data["kernel"].name == "linear":
        w = cp.Variable(data["means"].shape[1], name="w")
        return w, data["means"] @ w, {"w": w}
    L = _ordinal_factor(data)
    v = cp.Variable(L.shape[1], name="v")
    return v, L @ v, {"v": v}


def _build_ordinal_primal(data: Mapping[str, Any]) -> ConicForm:
    """(4.3) (linear) / (4.4) (rbf, through a factor K = L L^T): LP + one SOC."""
    sel, r, W, d = data["selectors"], data["r"], data["W"], data["d"]
    ranks = data["ranks"]
    k = ranks.size
    theta = cp.Variable(r - 1, name="thresholds")
    w, scores, variables = _score_variable(data)
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


def _ordinal_dual_variables(data: Mapping[str, Any], upper: float
                            ) -> tuple[cp.Variable, cp.Variable, dict]:
    """``(alpha, alpha*, constraints)`` shared by the duals (4.5) and of (4.1): the box
    [0, ``upper``] and the partial sums (App. C)."""
    sel = data["selectors"]
    k = data["ranks"].size
    alpha = cp.Variable(k, name="alpha")
    alpha_star = cp.Variable(k, name="alpha_star")
    D = sel["S"] @ alpha - sel["S_star"] @ alpha_star  # s_i - s*_i: multiplier of the order
    constraints = {
        "alpha_nonneg": alpha >= 0,
        "alpha_upper": alpha <= upper * sel["alpha_upper"],  # alpha_r = 0 (b_r = +inf)
        "alpha_star_nonneg": alpha_star >= 0,
        "alpha_star_upper": alpha_star <= upper * sel["alpha_star_upper"],  # alpha*_1 = 0
        "balance": D[-1] == 0,  # s*_{r-1} = s_{r-1}
    }
    if data["r"] > 2:
        constraints["partial"] = D[:-1] >= 0  # s*_i <= s_i (direction verified, errata S003-F4)
    return alpha, alpha_star, constraints


def _build_ordinal_dual(data: Mapping[str, Any]) -> ConicForm:
    """(4.5): max d^T(alpha + alpha*) - W ||R^T(alpha* - alpha)||, box, partial sums."""
    W, d = data["W"], data["d"]
    R = _ordinal_factor(data)
    alpha, alpha_star, constraints = _ordinal_dual_variables(data, 1.0)
    objective = d @ (alpha + alpha_star) - W * cp.norm(R.T @ (alpha_star - alpha), 2)
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha, "alpha_star": alpha_star}, constraints)


def _ordinal_kernel_scores(data: Mapping[str, Any], coef: np.ndarray) -> np.ndarray:
    """K @ coef: by the program's Gram matrix when it holds one (an SVOR dual built with
    ``gram``), else without forming K for the linear kernel, in blocks otherwise."""
    gram = getattr(data.get("svor"), "gram", None)
    if gram is not None:
        return gram @ coef
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



def _clipped_pair(solution: Solution, upper: np.ndarray, upper_star: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The returned (alpha, alpha*) projected on their boxes [0, upper], [0, upper*]."""
    alpha = np.clip(np.asarray(solution.values["alpha"], dtype=float), 0.0, upper)
    alpha_star = np.clip(np.asarray(solution.values["alpha_star"], dtype=float), 0.0,
                         upper_star)
    return alpha, alpha_star


def _box_violation(solution: Solution, upper: np.ndarray, upper_star: np.ndarray) -> float:
    """Largest violation of 0 <= alpha <= upper, 0 <= alpha* <= upper* by the raw point."""
    raw_a = np.asarray(solution.values["alpha"], dtype=float)
    raw_s = np.asarray(solution.values["alpha_star"], dtype=float)
    return max(float(np.max(-raw_a)), float(np.max(raw_a - upper)),
               float(np.max(-raw_s)), float(np.max(raw_s - upper_star)), 0.0)


def _svor_objectives(alpha: np.ndarray, alpha_star: np.ndarray, quad: float, C: float,
                     loss: float) -> tuple[float, float, float]:
    """SVOR's primal 1/2 v'Kv + C loss, its dual sum(alpha + alpha*) - 1/2 v'Kv (Chu &
    Keerthi, the duals of (4.1)) and their relative gap."""
    primal = 0.5 * quad + C * loss
    dual = float(alpha.sum() + alpha_star.sum()) - 0.5 * quad
    return primal, dual, (primal - dual) / max(abs(primal), abs(dual), 1e-300)


def _ordinal_dual_point(data: Mapping[str, Any], solution: Solution, upper: np.ndarray,
                        upper_star: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(alpha, alpha*, v, Kv)`` of an ordinal dual: the returned multipliers projected on
    their boxes, the expansion ``v = alpha* - alpha`` (summed over the thresholds for the
    implicit SVOR's (m, r-1) multipliers) and its scores ``K v``."""
    alpha, alpha_star = _clipped_pair(solution, upper, upper_star)
    v = alpha_star - alpha
    if v.ndim == 2:
        v = v.sum(axis=1)
    return alpha, alpha_star, v, _ordinal_kernel_scores(data, v)


def _decode_svor_c_dual(data: Mapping[str, Any], solution: Solution, upper: np.ndarray,
                        upper_star: np.ndarray, model_of: Callable[..., dict]) -> dict:
    """The model of a C-form SVOR dual (explicit (4.1) or implicit thresholds).

    ``model_of(data, scores, w=, dual_coef=, extra=)`` sets the thresholds and the loss;
    the objectives are the primal and dual values of :func:`_svor_objectives`.
    """
    require_solution(solution, data["kind"])
    alpha, alpha_star, v, Kv = _ordinal_dual_point(data, solution, upper, upper_star)
    # w = sum_j v_j phi(x_j), v = alpha* - alpha  (stationarity of the C-form in w)
    w = data["means"].T @ v if data["kernel"].name == "linear" else None
    model = model_of(data, Kv, w=w, dual_coef=v,
                     extra={"alpha": alpha, "alpha_star": alpha_star})
    model["primal_objective"], model["dual_objective"], _ = _svor_objectives(
        alpha, alpha_star, float(v @ Kv), data["C"], model["loss"])
    return model


def _certify_svor_c_dual(data: Mapping[str, Any], solution: Solution, upper: np.ndarray,
                         upper_star: np.ndarray,
                         balance: Callable[[np.ndarray, np.ndarray], float],
                         kkt_and_loss: Callable[..., tuple[float, float]]) -> Residuals:
    """Certificate of a C-form SVOR dual: box and equality violations (/C), complementarity
    at the optimal thresholds, relative P - D.

    ``balance(alpha, alpha*)`` is the largest violation, by the raw point, of the dual's
    equalities and partial sums; ``kkt_and_loss(alpha, alpha*, v, Kv)`` gives the
    complementarity and the primal loss at the projected point's optimal thresholds.
    """
    C = data["C"]
    raw_a = np.asarray(solution.values["alpha"], dtype=float)
    raw_s = np.asarray(solution.values["alpha_star"], dtype=float)
    if raw_a.shape != np.shape(upper) or raw_s.shape != np.shape(upper_star):
        raise ProgramError(f"{data['kind']}: alpha and alpha_star must have shape "
                           f"{np.shape(upper)}, got {raw_a.shape} and {raw_s.shape}")
    box = _box_violation(solution, upper, upper_star)
    primal = max(box / C, balance(raw_a, raw_s) / (C * raw_a.shape[0]))
    alpha, alpha_star, v, Kv = _ordinal_dual_point(data, solution, upper, upper_star)
    kkt, loss = kkt_and_loss(alpha, alpha_star, v, Kv)
    _, _, gap = _svor_objectives(alpha, alpha_star, float(v @ Kv), C, loss)
    return Residuals(primal=primal, dual=kkt, gap=gap, source="recomputed")


def _decode_ordinal_dual(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    sel = data["selectors"]
    alpha, alpha_star, v, Kv = _ordinal_dual_point(data, solution, sel["alpha_upper"],
                                                   sel["alpha_star_upper"])
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


# -- certificates: a primal/dual bracket in O(k^2), no cvxpy problem ---------------------
# The W-forms (4.2)/(4.3)/(4.4) have the dual (4.5)
#     max d^T(alpha + alpha*) - W ||sum_j (alpha*_j - alpha_j) phi(mu_j)||
# (d = 1 + r W for CBOR, d = 1 for SVOR), the C-form (4.1) the dual
#     max 1^T(alpha + alpha*) - 1/2 ||sum_j (alpha*_j - alpha_j) phi(x_j)||^2,
# both over 0 <= alpha, alpha* <= U (alpha = 0 at rank r, alpha* = 0 at rank 1) and the
# partial sums s*_i <= s_i (i <= r-2), s*_{r-1} = s_{r-1} (App. C, errata S003-F4).
def _ordinal_sel(data: Mapping[str, Any]) -> dict[str, np.ndarray]:
    return data["selectors"] if "selectors" in data else _ordinal_selectors(data["ranks"],
                                                                            data["r"])


def _ordinal_upper(data: Mapping[str, Any]) -> float:
    """Box bound U of the multipliers: 1 for the W-forms, C for (4.1)."""
    return float(data["C"]) if data.get("C") is not None else 1.0


def _ordinal_dual_feasibility(data: Mapping[str, Any], alpha: np.ndarray,
                              alpha_star: np.ndarray) -> float:
    """Relative violation of the box and partial-sum constraints of (4.5)."""
    sel, U = _ordinal_sel(data), _ordinal_upper(data)
    box = max(float(np.max(np.maximum(-alpha, alpha - U * sel["alpha_upper"]), initial=0.0)),
              float(np.max(np.maximum(-alpha_star, alpha_star - U * sel["alpha_star_upper"]),
                           initial=0.0))) / U
    sa, ss = sel["S"] @ alpha, sel["S_star"] @ alpha_star
    viol = np.concatenate([ss[:-1] - sa[:-1], [abs(sa[-1] - ss[-1])]])
    return max(box, row_violation(viol, np.maximum(sa, ss), max(U, float(np.max(sa)))))


def _ordinal_dual_value(data: Mapping[str, Any], alpha: np.ndarray, alpha_star: np.ndarray,
                        Kv: np.ndarray) -> float:
    """Value of the dual (4.5) (W-forms) or of the dual of (4.1) at a point."""
    v = alpha_star - alpha
    quad = max(float(v @ Kv), 0.0)
    if data.get("C") is not None:
        return float(np.sum(alpha + alpha_star)) - 0.5 * quad
    return float(data["d"] @ (alpha + alpha_star)) - float(data["W"]) * math.sqrt(quad)


def _ordinal_upper_bound(data: Mapping[str, Any], scores: np.ndarray, norm: float) -> float:
    r"""Objective at the best feasible point with scores ``scores`` and :math:`\|w\| =` ``norm``.

    Slacks recomputed, thresholds the exact minimisers for these scores
    (:func:`_ordinal_thresholds`): a feasible point, hence an upper bound on the optimum
    (``norm`` :math:`\le W` for the W-forms).
    """
    ranks, r, d = data["ranks"], data["r"], data["d"]
    theta = _ordinal_thresholds(scores, d, ranks, r)
    xi, xi_star = _ordinal_slacks(scores, d, ranks, r, theta)
    loss = float(xi.sum() + xi_star.sum())
    if data.get("C") is not None:
        return 0.5 * norm * norm + float(data["C"]) * loss
    return loss


def _ordinal_apex_bound(data: Mapping[str, Any], alpha: np.ndarray, alpha_star: np.ndarray,
                        accuracy: float) -> float:
    r"""W-form at (or near) the cone apex :math:`\rho = 0`, where (5.2) does not determine
    :math:`w`: the margin equalities of the free multipliers,
    :math:`w^\top\phi(\mu_j) - \theta_i = -d_j` (free :math:`\alpha_j`) and
    :math:`= d_j` on :math:`\theta_{i-1}` (free :math:`\alpha^*_j`), are solved by least
    squares for :math:`(w = \sum_l c_l\phi(\mu_l), \theta)`, :math:`w` is scaled into
    :math:`\|w\| \le W` and the bound of :func:`_ordinal_upper_bound` is taken there."""
    sel, ranks, r, d, W = _ordinal_sel(data), data["ranks"], data["r"], data["d"], data["W"]
    tol = free_tolerance(np.concatenate([alpha, alpha_star]), accuracy)
    fa = np.flatnonzero((alpha > tol) & (alpha < sel["alpha_upper"] - tol))
    fs = np.flatnonzero((alpha_star > tol) & (alpha_star < sel["alpha_star_upper"] - tol))
    if fa.size + fs.size == 0:
        return math.inf
    K = data["kernel"].gram(data["means"])
    E = np.zeros((fa.size + fs.size, r - 1))
    E[np.arange(fa.size), ranks[fa] - 1] = -1.0
    E[fa.size + np.arange(fs.size), ranks[fs] - 2] = -1.0
    A = np.hstack([np.vstack([K[fa], K[fs]]), E])
    sol = np.linalg.lstsq(A, np.concatenate([-d[fa], d[fs]]), rcond=None)[0]
    g = K @ sol[:K.shape[0]]
    wn = math.sqrt(max(float(sol[:K.shape[0]] @ g), 0.0))
    return _ordinal_upper_bound(data, g * min(1.0, W / wn) if wn > 0 else g, min(wn, W))


def _certify_ordinal_dual(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the CBOR dual (4.5) from :math:`(\alpha, \alpha^*)` in :math:`O(k^2)`.

    * ``primal``: violation of the box and partial-sum constraints of (4.5);
    * ``dual`` (optimality measure): the bracket :math:`(P - D)/\max(|P|, |D|,
      \text{SLACK\_FLOOR})` between the dual value :math:`D` and the value :math:`P`
      of the primal point it implies, :math:`w = (W/\rho)\sum_j(\alpha^*_j -
      \alpha_j)\phi(\mu_j)` (eq. 5.2) with optimal thresholds and slacks
      (:func:`_ordinal_upper_bound`), minimised over the length :math:`\|w\| \le W`
      along that direction (:func:`~conicml.certificates.chance.best_scale`); at the cone
      apex :math:`\rho = 0` (where the dual does not determine :math:`w`) :math:`w` is
      fitted from the
      margin equalities (:func:`_ordinal_apex_bound`), never "not checked";
    * ``gap``: the bracket and the mismatch between the reported objective and
      :math:`D`.
    """
    got = values_of(solution, "alpha", "alpha_star")
    k = data["ranks"].size
    if got is None or got[0].shape != (k,) or got[1].shape != (k,):
        return missing()
    primal = _ordinal_dual_feasibility(data, *got)
    sel = _ordinal_sel(data)
    a, a_s, v, Kv = _ordinal_dual_point(data, solution, sel["alpha_upper"],
                                        sel["alpha_star_upper"])
    D = _ordinal_dual_value(data, a, a_s, Kv)
    rho = math.sqrt(max(float(v @ Kv), 0.0))
    W = float(data["W"])
    P = _ordinal_upper_bound(data, (W / rho) * Kv, W) if rho > 0 else math.inf
    if rho > 0 and bracket(P, D, SLACK_FLOOR) > 1e-9:  # the length of w along Kv / rho
        unit = Kv / rho
        P = best_scale(lambda s: _ordinal_upper_bound(data, s * unit, s), W, W)
    if bracket(P, D, SLACK_FLOOR) > 1e-9:
        P = min(P, _ordinal_apex_bound(data, a, a_s, solver_accuracy(solution)))
    dual = bracket(P, D, SLACK_FLOOR)
    return residuals(primal, dual, max(dual, claimed_gap(solution, D, SLACK_FLOOR)))


def _ordinal_multipliers(data: Mapping[str, Any], solution: Solution
                         ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(alpha, alpha_star)`` from the multipliers of the margin rows, or ``None``."""
    ranks, r = data["ranks"], data["r"]
    alpha, alpha_star = np.zeros(ranks.size), np.zeros(ranks.size)
    if data["kind"] in (kinds.CBOR_PRIMAL, kinds.CBOR_DUAL):
        sel = _ordinal_sel(data)
        parts = [("upper", sel["upper_rows"], alpha), ("lower", sel["lower_rows"], alpha_star)]
    else:  # SVOR: one row block per rank
        parts = [(f"upper_{i}", np.flatnonzero(ranks == i), alpha) for i in range(1, r)]
        parts += [(f"lower_{i}", np.flatnonzero(ranks == i), alpha_star) for i in range(2, r + 1)]
    for name, rows, target in parts:
        lam = dual_of(solution, name)
        if lam is None or lam.size != rows.size:
            return None
        target[rows] = lam
    return alpha, alpha_star


def _certify_ordinal_primal(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the primals (4.1), (4.2), (4.3)/(4.4) at :math:`(w, \theta, \xi, \xi^*)`.

    * ``primal``: violation of the margin rows, :math:`\xi, \xi^* \ge 0`, the order
      of the thresholds and :math:`\|w\| \le W`, each relative to its own terms;
    * ``dual``: the violation, by the multipliers of the margin rows (from the
      solution: a candidate certificate whose value is recomputed), of the box and
      partial-sum constraints of the dual (4.5) / of (4.1)'s dual;
    * ``gap``: the bracket between the larger of the point's own value and the
      value of the point made feasible (:math:`w`
      scaled into the ball, optimal thresholds and slacks,
      :func:`_ordinal_upper_bound`) and the dual value of the multipliers, judged
      against at least ``SLACK_FLOOR`` for the slack-sum objectives; and the mismatch
      between the reported objective and the point's own value.

    Without multipliers the generic KKT certificate of the cvxpy problem is used.
    """
    build = _build_svor_primal if data["kind"] in (kinds.SVOR_SOCP, kinds.SVOR_QP) \
        else _build_ordinal_primal
    mult = _ordinal_multipliers(data, solution)
    if mult is None:
        return conic_certificate(data, solution, build=build)
    linear = data["kernel"].name == "linear"
    got = values_of(solution, "w" if linear else "v", "thresholds")
    ranks, r, d = data["ranks"], data["r"], data["d"]
    if got is None or got[1].shape != (r - 1,):
        return missing()
    w, theta = got
    g = data["means"] @ w if linear else _ordinal_factor(data) @ w
    slacks = values_of(solution, "xi", "xi_star")
    if slacks is None or slacks[0].shape != ranks.shape or slacks[1].shape != ranks.shape:
        slacks = list(_ordinal_slacks(g, d, ranks, r, theta))
    xi, xi_star = slacks
    ua, ls = np.flatnonzero(ranks < r), np.flatnonzero(ranks > 1)
    wn = float(np.linalg.norm(w))
    viol = [g[ua] - theta[ranks[ua] - 1] + d[ua] - xi[ua],
            theta[ranks[ls] - 2] - g[ls] + d[ls] - xi_star[ls], -xi, -xi_star]
    scale = [np.maximum.reduce([np.abs(g[ua]), np.abs(theta[ranks[ua] - 1]), d[ua],
                                np.abs(xi[ua])]),
             np.maximum.reduce([np.abs(g[ls]), np.abs(theta[ranks[ls] - 2]), d[ls],
                                np.abs(xi_star[ls])]), np.abs(xi), np.abs(xi_star)]
    if r > 2:
        viol.append(theta[:-1] - theta[1:])
        scale.append(np.maximum(np.abs(theta[:-1]), np.abs(theta[1:])))
    loss = float(xi.sum() + xi_star.sum())
    if data.get("C") is None:
        W = float(data["W"])
        viol.append(np.array([wn - W]))
        scale.append(np.array([max(wn, W)]))
        value, floor = loss, SLACK_FLOOR
        P = _ordinal_upper_bound(data, g * min(1.0, W / wn) if wn > 0 else g, min(wn, W))
    else:
        value, floor = 0.5 * wn * wn + float(data["C"]) * loss, 0.0
        P = _ordinal_upper_bound(data, g, wn)
    primal = row_violation(np.concatenate(viol), np.concatenate(scale))
    alpha, alpha_star = mult
    dual_res = _ordinal_dual_feasibility(data, alpha, alpha_star)
    sel, U = _ordinal_sel(data), _ordinal_upper(data)
    a = np.clip(alpha, 0.0, U * sel["alpha_upper"])
    a_s = np.clip(alpha_star, 0.0, U * sel["alpha_star_upper"])
    D = _ordinal_dual_value(data, a, a_s, _ordinal_kernel_scores(data, a_s - a))
    # the point's own value, not only the repaired one: a feasible point whose slacks
    # or thresholds are worse than the repair is not optimal (the repair is not returned)
    gap = max(bracket(max(value, P), D, floor), claimed_gap(solution, value, floor))
    return residuals(primal, dual_res, gap)


def _ordinal_program(data: dict, description: str) -> Program:
    primal = data["form"] == "primal"
    return Program(
        data["kind"],
        data,
        build=_build_ordinal_primal if primal else _build_ordinal_dual,
        certify=_certify_ordinal_primal if primal else _certify_ordinal_dual,
        decode=_decode_ordinal_primal if primal else _decode_ordinal_dual,
        default_solver="clarabel",
        description=description,
    )


@renamed_keywords(eta="accuracy")
def cbor(
    clusters: ClusterMoments,
    *,
    W: float = 1.0,
    accuracy: float = 0.5,
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
    for rank 1 (App. C; the partial-sum direction verified in errata S003-F4).

    Parameters
    ----------
    clusters : ClusterMoments
        Cluster means, radii (in the clusters' own ``sigma`` convention), counts
        and labels = ranks 1..r (all present, r >= 2).
    W : float, default=1.0
        Bound on :math:`\|w\|` (:math:`2/W` lower-bounds the margin).
    accuracy : float, default=0.5
        Probability level :math:`\eta` of the chance constraints, in (0, 1): a lower
        bound on the probability of the right side (old keyword ``eta``, deprecated).
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
        Labels not the ranks 1..r, W <= 0, accuracy outside (0, 1), unknown kernel,
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
    eta = accuracy
    kappa = cbc_kappa(eta, bound)  # kappa = sqrt(eta / (1 - eta)) as in (3.4), (4.3)
    means = clusters.means
    ranks, r = _ordinal_ranks(clusters.labels, means.shape[0], "clusters.labels")
    kern = make_kernel(kernel, means, gamma=gamma)
    radii = _ordinal_radii(kern, kappa, clusters.sigmas)
    data = {
        "kind": kinds.CBOR_PRIMAL if form == "primal" else kinds.CBOR_DUAL,
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
        f"accuracy={float(eta):g}, {form})")


def _build_svor_primal(data: Mapping[str, Any]) -> ConicForm:
    """Chu & Keerthi's explicit-threshold SVOR, one pair of constraints per point."""
    y, r = data["ranks"], data["r"]
    theta = cp.Variable(r - 1, name="thresholds")
    w, f, variables = _score_variable(data)
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


def _svor_primal_point(data: Mapping[str, Any], solution: Solution) -> tuple[np.ndarray, dict]:
    """Training scores of a primal SVOR point (explicit or implicit thresholds) and the
    keywords of the model builders: ``w`` (linear) or the kernel ``dual_coef``, the solver's
    thresholds as ``extra``."""
    require_solution(solution, data["kind"])
    extra = {"thresholds_solver": np.asarray(solution.values["thresholds"])}
    if data["kernel"].name == "linear":
        w = np.asarray(solution.values["w"], dtype=float)
        return data["means"] @ w, {"w": w, "dual_coef": None, "extra": extra}
    v = np.asarray(solution.values["v"], dtype=float)
    L = _ordinal_factor(data)
    dual_coef = np.linalg.lstsq(L.T, v, rcond=None)[0]
    return L @ v, {"w": None, "dual_coef": dual_coef, "extra": extra}


def _decode_svor(data: Mapping[str, Any], solution: Solution) -> dict:
    scores, parts = _svor_primal_point(data, solution)
    return _ordinal_model(data, scores, **parts)


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
    :math:`\le`, errata S003-P12). The two are equivalent: the (4.1) solution for
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
    from .._utils.validation import check_matrix

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
    kind = kinds.SVOR_SOCP if W is not None else kinds.SVOR_QP
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
                   certify=_certify_ordinal_primal,
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
    r"""Ranks :math:`1 + \#\{i : g(x) > \theta_i\}` (errata S003-P13)."""
    g = ordinal_scores(data, model, X_new)
    return 1 + (g[:, None] > model["thresholds"][None, :]).sum(axis=1)


ORDINAL_KINDS = (kinds.CBOR_PRIMAL, kinds.CBOR_DUAL, kinds.SVOR_SOCP, kinds.SVOR_QP)

__all__ += ["ORDINAL_KINDS", "cbor", "ordinal_predict", "ordinal_scores", "svor"]

