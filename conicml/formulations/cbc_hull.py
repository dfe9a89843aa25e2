r"""The hard-margin CBC (3.13) as the distance between two convex hulls of spheres.

Seed 003 §3.3, kind ``"socp.chance.cbc.hard.hull"``; solved by the generic backends and
``cbc-hull-smo``. Its certificate is the weak-duality gap :math:`(\delta - s(u))/\delta`
of the decoded direction; the program, the duality and the decode are in the Notes of
:func:`cbc_hull`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils.deprecation import renamed_keywords
from ..contracts.cbc_hull import CBCHullData
from ..kinds import CBC_HULL_DUAL
from ..moments import ClusterMoments
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution
from .cbc import _cbc_data, _cbc_factor, cbc

__all__ = ["cbc_hull", "hull_separation"]


def _coords(data: Mapping[str, Any]) -> np.ndarray:
    return data["means"] if data["kernel"].name == "linear" else _cbc_factor(data)


def hull_separation(Z: np.ndarray, y: np.ndarray, radii: np.ndarray,
                    u: np.ndarray) -> tuple[float, float, float]:
    r"""``(s, A, B)``: separation :math:`s(u) = A - B` of the spheres along unit ``u``,
    :math:`A = \min_+(u^\top\mu_j - r_j)`, :math:`B = \max_-(u^\top\mu_j + r_j)`."""
    proj = Z @ u
    A = float(np.min(proj[y > 0] - radii[y > 0]))
    B = float(np.max(proj[y < 0] + radii[y < 0]))
    return A - B, A, B


def _build_hull(data: Mapping[str, Any]) -> ConicForm:
    Z, y, r = _coords(data), data["y"], data["radii"]
    k, n = Z.shape
    alpha = cp.Variable(k, name="alpha")
    V = cp.Variable((k, n), name="V")
    z = Z.T @ cp.multiply(y, alpha) - V.T @ r
    constraints = {
        "balls": cp.SOC(alpha, V, axis=1),  # ||V_j|| <= alpha_j
        "pos_sum": cp.sum(alpha[y > 0]) == 1,
        "neg_sum": cp.sum(alpha[y < 0]) == 1,
        "alpha_nonneg": alpha >= 0,
    }
    problem = cp.Problem(cp.Minimize(cp.norm(z, 2)), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha, "V": V}, constraints)


def _hull_point(data: Mapping[str, Any], solution: Solution) -> tuple[np.ndarray, float]:
    Z, y, r = _coords(data), data["y"], data["radii"]
    alpha = np.asarray(solution.values["alpha"], dtype=float)
    V = np.asarray(solution.values["V"], dtype=float)
    z = Z.T @ (y * alpha) - V.T @ r
    return z, float(np.linalg.norm(z))


def _decode_hull(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    Z, y, r = _coords(data), data["y"], data["radii"]
    z, delta = _hull_point(data, solution)
    u = z / delta if delta > 0 else z
    s, A, B = hull_separation(Z, y, r, u)
    scale = 2.0 / s if s > 0 else np.nan  # w = 2u / s(u): margin 2/||w|| = s(u)
    w = scale * u
    b = -0.5 * scale * (A + B)
    model: dict[str, Any] = {
        "alpha": np.asarray(solution.values["alpha"], dtype=float),
        "distance": delta,
        "margin": s,
        "b": float(b),
        "scores": Z @ w,
        "primal_objective": 0.5 * float(w @ w),
        "radii": r,
    }
    if data["kernel"].name == "linear":
        model["w"] = w
    else:
        model["dual_coef"] = np.linalg.lstsq(Z.T, w, rcond=None)[0]
    return model


def _certify_hull(data: Mapping[str, Any], solution: Solution) -> Residuals:
    Z, y, r = _coords(data), data["y"], data["radii"]
    alpha = np.asarray(solution.values["alpha"], dtype=float)
    V = np.asarray(solution.values["V"], dtype=float)
    scale = max(1.0, float(np.max(np.linalg.norm(Z, axis=1))))
    viol = max(float(np.max(np.linalg.norm(V, axis=1) - alpha)), float(np.max(-alpha)),
               abs(float(alpha[y > 0].sum()) - 1.0), abs(float(alpha[y < 0].sum()) - 1.0), 0.0)
    z, delta = _hull_point(data, solution)
    if not delta > 0:
        return Residuals(primal=viol, dual=np.nan, gap=np.inf, source="recomputed")
    s, _, _ = hull_separation(Z, y, r, z / delta)
    # the primal residual is scale-free: V and alpha live on the scale of the data
    return Residuals(primal=viol, dual=np.nan, gap=abs(delta - s) / max(delta, 1e-300 * scale),
                     source="recomputed")


@renamed_keywords(eta="accuracy")
def cbc_hull(
    clusters: ClusterMoments,
    accuracy: float = 0.5,
    *,
    bound: str = "chebyshev",
    kernel: str = "linear",
    gamma: float | str = "scale",
    robust: str | None = None,
    confidence: float = 0.9,
    factor: str = "auto",
) -> Program:
    r"""The hard-margin CBC (3.13) as the distance between two convex hulls of spheres.

    Kind ``"socp.chance.cbc.hard.hull"`` (see the Notes for the
    program, its weak duality with (3.13) and the decode). Parameters as in
    :func:`conicml.formulations.cbc.cbc` (no ``C``: hard margin).

    Returns
    -------
    Program
        Objective: the distance :math:`\delta` between the hulls (the margin of
        (3.13); its optimal value is :math:`2/\delta^2`). ``decode`` gives
        ``w`` (linear) or ``dual_coef`` (rbf, over the cluster means), ``b``,
        ``margin``, ``distance``, ``scores`` and ``primal_objective``.
        ``data["cbc_hull"]`` is the :class:`~conicml.contracts.cbc_hull.CBCHullData`
        contract (with the hard (3.11) dual of the same clusters for ``cbc-smo``).
        Overlapping hulls (inseparable spheres) give distance 0: the backends
        then report an optimum with :math:`\delta = 0` and the decode has
        ``margin <= 0`` and ``w = nan``.

    Notes
    -----
    Seed 003 §3.3 states that the dual of the hard-margin CBC

    .. math::

        \min_{w,b}\ \tfrac12\|w\|^2 \quad\text{s.t.}\quad
        y_j(w^\top\mu_j + b) \ge 1 + r_j\|w\|_2 \qquad (3.13)

    (the thesis prints :math:`x_j` for :math:`\mu_j`; :math:`r_j = \kappa\sigma_j`)
    is the distance between the convex hull of the positive spheres
    :math:`B(\mu_j, r_j)` and that of the negative ones, without writing it out.
    As a conic program (kind ``"socp.chance.cbc.hard.hull"``):

    .. math::

        \min_{\alpha, V}\ \Big\|\sum_j y_j\alpha_j\mu_j - \sum_j r_jV_j\Big\|_2
        \quad\text{s.t.}\quad \|V_j\|_2 \le \alpha_j,\
        \sum_{y_j = +1}\alpha_j = 1,\ \sum_{y_j = -1}\alpha_j = 1,\ \alpha \ge 0,

    where :math:`p = \sum_{+}(\alpha_j\mu_j - r_jV_j)` is a point of the positive
    hull (:math:`V_j = \alpha_ju_j`, :math:`\|u_j\|\le 1`) and
    :math:`q = \sum_{-}(\alpha_j\mu_j + r_jV_j)` one of the negative hull (the
    sign of :math:`V_j` is immaterial, the unit ball being symmetric), so the
    objective is :math:`\delta = \|p - q\|`.

    **Duality** (weak, elementary): for any unit :math:`u`, the spheres are
    separated along :math:`u` by :math:`s(u) = \min_{+}(u^\top\mu_j - r_j) -
    \max_{-}(u^\top\mu_j + r_j) \le u^\top(p - q) \le \delta`, and the margin of
    (3.13) is :math:`2/\|w\| = \max_u s(u)`; at the optimum :math:`s(u^*) = \delta`
    with :math:`u^* = (p - q)/\delta`, so :math:`w = 2u^*/\delta`, and the optimal
    value of (3.13) is :math:`2/\delta^2`.

    **Decode.** From the hull point, :math:`u = (p - q)/\|p - q\|`, the margin
    :math:`s(u)` (recomputed, so the returned :math:`(w, b)` is feasible for
    (3.13) whenever :math:`s(u) > 0`), :math:`w = 2u/s(u)`,
    :math:`b = -\tfrac12(\min_+(w^\top\mu_j - r_j\|w\|) + \max_-(w^\top\mu_j + r_j\|w\|))`
    (package convention :math:`f(x) = w^\top x + b`), ``primal_objective``
    :math:`= \tfrac12\|w\|^2`. **Certificate:** primal = the violation of the
    constraints (relative to the data scale), gap :math:`= (\delta - s(u))/\delta`
    (weak duality: :math:`\ge 0`, zero exactly at the optimum). The objective
    :math:`\|z\|` is flat to first order across :math:`z`, so interior-point
    backends fix :math:`\delta` to their tolerance but the direction :math:`u`
    (hence the decoded :math:`(w, b)`) only to about its square root (measured
    :math:`10^{-4}` relative); ``cbc-hull-smo`` returns the exact direction.

    With ``kernel="rbf"`` the hulls live in the span of :math:`\phi(\mu_j)`,
    written in the coordinates of a factor :math:`K = LL^\top` (rows of :math:`L`
    for :math:`\mu_j`, radii mapped as in App. B).

    Solvers: the generic backends, and ``cbc-hull-smo`` — ``cbc-smo`` on the
    hard (3.11) dual of the same clusters (``data["cbc_hull"].hard_dual``) with
    its :math:`\alpha` mapped onto the hull (:math:`\alpha_j / \sum_{+}\alpha`,
    :math:`V_j = \alpha_j u`).
    """
    data = _cbc_data(clusters, accuracy, bound, kernel, gamma, robust, confidence, "dual",
                     factor)
    data["hard"] = True
    data["C"] = None
    hard_dual = cbc(clusters, C=None, accuracy=accuracy, bound=bound, kernel=kernel, gamma=gamma,
                    robust=robust, confidence=confidence, form="dual", factor=factor)
    data["kind"] = CBC_HULL_DUAL
    data["cbc_hull"] = CBCHullData(coords=_coords(data), y=data["y"], radii=data["radii"],
                                   hard_dual=hard_dual)
    return Program(CBC_HULL_DUAL, data, build=_build_hull, decode=_decode_hull,
                   certify=_certify_hull, default_solver="clarabel",
                   description=f"CBC hard margin as hull-of-spheres distance ({kernel} kernel, "
                   f"accuracy={accuracy:g})")
