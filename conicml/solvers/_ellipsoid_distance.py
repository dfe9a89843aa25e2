r"""The specified-rates programs as a distance between two ellipsoids (shared by the solvers).

Kinds ``"socp.chance.rates.primal"`` / ``"...dual"`` (seed 003 ch. 2, dual (2.13)): a
feasible pair of points of the two ellipsoids gives a primal-feasible hyperplane and a
certified bracket on :math:`\tfrac12\|w^*\|^2`; :func:`rates_solution` builds the
:class:`~conicml.Solution` of either kind from it (its Notes give the bracket).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import kinds
from ..exceptions import SolverError
from ..solution import Residuals, Solution, Status

__all__ = ["RATES_KINDS", "check_rates_program", "program_covariances", "rates_solution",
           "separation"]

RATES_KINDS = (kinds.RATES_PRIMAL, kinds.RATES_DUAL)
_KEYS = ("mean_pos", "mean_neg", "cov_pos", "cov_neg", "kappa_pos", "kappa_neg",
         "C_pos", "C_neg")


def check_rates_program(program: Any, solver: str) -> Mapping[str, Any]:
    """The program's data, after checking its kind and keys (:class:`SolverError` if not)."""
    kind = getattr(program, "kind", None)
    if kind not in RATES_KINDS:
        raise SolverError(
            f"{solver} accepts programs of kind {', '.join(RATES_KINDS)}; got {kind!r}")
    data = getattr(program, "data", None)
    missing = [k for k in _KEYS if not isinstance(data, Mapping) or k not in data]
    if missing:
        raise SolverError(f"{solver}: program data lacks {', '.join(map(repr, missing))}")
    return data


def program_covariances(data: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\Sigma_\pm = C_\pm C_\pm^\top`: the shapes of the program's ellipsoids.

    The program is defined by the factors ``C_pos``, ``C_neg`` (its cvxpy cones and its
    certificate use them), not by ``cov_pos``, ``cov_neg``: the two differ where the
    factorisation dropped a spectrum below its relative cut-off
    (:func:`conicml.kernels.psd_factor`, e.g. one feature scaled by 1e8), and a solver
    reading ``cov_*`` would then solve another program than the one it is certified on.
    Where ``cov_*`` is :math:`CC^\top` by construction it is used as is (an
    :math:`O(n^3)` product saved): a square factor from ``factor="auto"`` or
    ``"eigen"`` (an exact Cholesky factor, or an eigen-factor that dropped nothing) and
    the kernel programs' centred cones (:math:`C = [D, \sqrt{\epsilon}I]`,
    ``cov`` :math:`= DD^\top + \epsilon I`).
    """
    out = []
    for ckey, skey in (("C_pos", "cov_pos"), ("C_neg", "cov_neg")):
        C = np.asarray(data[ckey], dtype=float)
        exact = ((C.shape[0] == C.shape[1] and data.get("factor", "auto") != "cholesky")
                 or (data.get("kernel") is not None and data.get("cone") == "centred"))
        S = np.asarray(data[skey], dtype=float) if exact else C @ C.T
        out.append(0.5 * (S + S.T))
    return out[0], out[1]


def separation(data: Mapping[str, Any], e: np.ndarray) -> float:
    r""":math:`s(e) = \min_{B_+} e^\top z - \max_{B_-} e^\top z` (support functions)."""
    return float(e @ (data["mean_pos"] - data["mean_neg"])
                 - data["kappa_pos"] * float(np.linalg.norm(data["C_pos"].T @ e))
                 - data["kappa_neg"] * float(np.linalg.norm(data["C_neg"].T @ e)))


def rates_solution(program: Any, data: Mapping[str, Any], *, solver: str, status: Status,
                   message: str, z_pos: np.ndarray, z_neg: np.ndarray,
                   u_pos: np.ndarray, u_neg: np.ndarray, dual_residual: float,
                   extra_upper: float = math.inf, direction: np.ndarray | None = None,
                   iterations: int, setup_time: float, solve_time: float,
                   extras: Mapping[str, Any]) -> Solution:
    r"""The :class:`Solution` of either rates kind from a feasible pair ``z_pos``, ``z_neg``.

    ``u_pos``, ``u_neg`` are the dual variables of that pair; ``extra_upper`` is any
    further upper bound on :math:`\tfrac12\|w^*\|^2` the solver has (e.g. a
    Lagrangian dual value); ``direction`` a unit normal for the hyperplane if the
    solver has a better one than that of the pair. ``Residuals(primal=`` constraint
    violation of the returned point ``, dual=`` ``dual_residual`` ``, gap=`` upper minus
    lower bound on :math:`\tfrac12\|w^*\|^2` ``)``.

    Notes
    -----
    Kinds ``"socp.chance.rates.primal"`` / ``"...dual"`` (seed 003 ch. 2): the dual (2.13)
    is the squared distance between

    .. math::

        B_\pm = \{\mu_\pm \mp \kappa_\pm C_\pm u : \|u\| \le 1\},\qquad
        \Sigma_\pm = C_\pm C_\pm^\top,

    and the primal optimum is :math:`\tfrac12\|w^*\|^2 = 2/\delta^{*2}`. Given a feasible
    pair :math:`z_\pm \in B_\pm` (an upper bound :math:`\|z_+ - z_-\|` on the distance
    :math:`\delta^*`), :func:`rates_solution` builds the hyperplane along
    :math:`e = (z_+ - z_-)/\|z_+ - z_-\|` scaled to be *primal feasible*,
    :math:`w = 2e/s(e)` with the support-function separation

    .. math::

        s(e) = e^\top(\mu_+ - \mu_-) - \kappa_+\sqrt{e^\top\Sigma_+e}
               - \kappa_-\sqrt{e^\top\Sigma_-e},

    so :math:`2/\|z_+ - z_-\|^2 \le \tfrac12\|w^*\|^2 \le 2/s(e)^2` certifies the point,
    and fills the :class:`~conicml.Solution` of either kind exactly as every solver of the
    kind must (``values`` ``w``/``v``, ``b`` for the primal; ``u_pos``, ``u_neg`` for the
    dual, :math:`z_\pm = \mu_\pm \mp \kappa_\pm C_\pm u_\pm`).
    """
    mu_p, mu_n = data["mean_pos"], data["mean_neg"]
    kp, kn = float(data["kappa_pos"]), float(data["kappa_neg"])
    diff = z_pos - z_neg
    dist = float(np.linalg.norm(diff))
    e = diff / dist if direction is None else np.asarray(direction, dtype=float)
    lower = 2.0 / dist**2  # from the feasible pair: delta* <= dist
    s = separation(data, e)
    if s > 0:
        w = (2.0 / s) * e  # the direction (2.14), scaled to be primal feasible
        upper = min(2.0 / s**2, extra_upper)
    else:  # far from the optimum the direction may not separate: use (2.14) itself
        w = 2.0 * diff / dist**2
        upper = extra_upper
    sp = float(np.linalg.norm(data["C_pos"].T @ w))
    sn = float(np.linalg.norm(data["C_neg"].T @ w))
    # package convention f = w.x + b (b = -b_thesis); (2.16) from both tangent conditions
    b = 0.5 * ((1.0 + kp * sp - w @ mu_p) - (1.0 + kn * sn + w @ mu_n))
    primal_viol = max(0.0, kp * sp - (w @ mu_p + b - 1.0), kn * sn - (-b - w @ mu_n - 1.0))
    extras = {**extras, "z_pos": z_pos, "z_neg": z_neg, "distance": dist,
              "lower_bound": lower, "upper_bound": upper}
    if program.kind == kinds.RATES_DUAL:
        values = {"u_pos": u_pos, "u_neg": u_neg}
        objective = dist**2
        primal_res = max(0.0, float(np.linalg.norm(u_pos)) - 1.0,
                         float(np.linalg.norm(u_neg)) - 1.0)
    else:
        values = {("w" if data.get("kernel") is None else "v"): w, "b": np.array(b)}
        objective = 0.5 * float(w @ w)
        primal_res = primal_viol
    return Solution(
        status=status, solver=solver, objective=float(objective), values=values,
        iterations=iterations, setup_time=setup_time, solve_time=solve_time,
        residuals=Residuals(primal=float(primal_res), dual=float(dual_residual),
                            gap=float(upper - lower), source="solver"),
        message=message, extras=extras,
    )
