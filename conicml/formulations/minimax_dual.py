r"""The geometric dual of the parametric BMPM/MPM sub-problem (seed 004 eqs. 3.30–3.36).

Kind ``"socp.bmpm.geometric_dual"``: the smallest radius at which the two class
ellipsoids touch, :math:`1/P(\lambda)` of Dinkelbach's sub-problem (the thesis prints
:math:`\Sigma^{-1/2}` for :math:`\Sigma^{1/2}` in 3.30 and 3.34). The derivation, the
decode and the certificate are in the Notes of :func:`geometric_dual`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils.validation import plain
from ..exceptions import ProgramError
from ..kinds import BMPM, BMPM_GEOMETRIC_DUAL, MPM
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution

__all__ = ["geometric_dual"]


def _build(data: Mapping[str, Any]) -> ConicForm:
    d, Rx, Ry = data["d"], data["Rx"], data["Ry"]
    cx, cy = data["cx"], data["cy"]
    ell = cp.Variable(name="ell")
    u = cp.Variable(Rx.shape[0], name="u")
    v = cp.Variable(Ry.shape[0], name="v")
    constraints = {
        "touch": cx * (Rx.T @ u) + cy * (Ry.T @ v) == d,  # x - cx Rx^T u = y + cy Ry^T v
        "ball_x": cp.norm(u, 2) <= ell,
        "ball_y": cp.norm(v, 2) <= ell,
    }
    problem = cp.Problem(cp.Minimize(ell), list(constraints.values()))
    return ConicForm(problem, {"ell": ell, "u": u, "v": v}, constraints)


def _primal_direction(data: Mapping[str, Any], u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A w with R_x w parallel to u (or R_y w to v when c_x = 0), w^T d = 1."""
    R, target = (data["Rx"], u) if data["cx"] > 0 else (data["Ry"], v)
    w = np.linalg.lstsq(R, target, rcond=None)[0]
    s = float(data["d"] @ w)
    return w / s if s != 0 else w


def _upper(data: Mapping[str, Any], w: np.ndarray) -> float:
    return float(data["cx"] * np.linalg.norm(data["Rx"] @ w)
                 + data["cy"] * np.linalg.norm(data["Ry"] @ w))


def _decode(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    ell = float(solution.values["ell"])
    u = np.asarray(solution.values["u"], dtype=float)
    v = np.asarray(solution.values["v"], dtype=float)
    w = _primal_direction(data, u, v)
    return {"ell": ell, "P": 1.0 / ell if ell > 0 else np.inf,
            "touch": data["mx"] - data["cx"] * (data["Rx"].T @ u),
            "w": w, "P_upper": _upper(data, w), "lam": data["lam"]}


def _certify(data: Mapping[str, Any], solution: Solution) -> Residuals:
    ell = float(solution.values["ell"])
    u = np.asarray(solution.values["u"], dtype=float)
    v = np.asarray(solution.values["v"], dtype=float)
    d = data["d"]
    eq = np.linalg.norm(data["cx"] * (data["Rx"].T @ u) + data["cy"] * (data["Ry"].T @ v) - d)
    balls = max(float(np.linalg.norm(u)) - ell, float(np.linalg.norm(v)) - ell, 0.0)
    primal = max(float(eq) / float(np.linalg.norm(d)), balls / max(ell, 1e-300))
    U = _upper(data, _primal_direction(data, u, v))
    gap = abs(U - 1.0 / ell) / U if ell > 0 and U > 0 else np.inf
    return Residuals(primal=primal, dual=np.nan, gap=gap, source="recomputed")


def geometric_dual(program: Program, lam: float) -> Program:
    r"""The ellipsoid-touching SOCP (3.31) of an MPM/BMPM program at parameter ``lam``.

    Parameters
    ----------
    program : Program
        A program of kind ``"socp.bmpm"`` or ``"socp.mpm"``
        (:func:`conicml.formulations.minimax.bmpm` / ``mpm``, linear or kernel).
    lam : float
        The parameter :math:`\lambda > 0` of Dinkelbach's sub-problem
        (:math:`\lambda = \kappa(\alpha^*)` gives :math:`\ell^* = 1`).

    Returns
    -------
    Program
        Kind ``"socp.bmpm.geometric_dual"``; objective :math:`\ell^* = 1/P(\lambda)`.
        ``decode`` gives ``ell``, ``P``, ``touch`` (the touching point, linear
        case), ``w`` (a primal direction, :math:`w^\top d = 1`) and ``P_upper``
        (the primal value at ``w``, :math:`\ge P(\lambda)`).

    Raises
    ------
    ProgramError
        Another kind, or ``lam`` not a positive finite number.

    Notes
    -----
    Dinkelbach's parametric method for BMPM (Sec. 3.2.6; ``dinkelbach``) solves at
    each :math:`\lambda`

    .. math::

        P(\lambda) = \min_{w^\top d = 1}\ c_x\sigma_x(w) + c_y\sigma_y(w),
        \qquad c_x = a_x + \lambda b_x,\ c_y = a_y + \lambda b_y,

    (for BMPM :math:`c_x = \lambda + \nu_x`, :math:`c_y = \kappa(\beta_0) + \nu_y`;
    for MPM :math:`c_x = c_y = \lambda`), and the optimum :math:`\lambda^* = \kappa(\alpha^*)`
    is the root of :math:`P(\lambda) = 1`. Writing each norm as a maximum over the
    unit ball and exchanging min and max gives the thesis's dual (3.30)
    :math:`P(\lambda) = \max\{\tau : \tau d = c_xR_x^\top u + c_yR_y^\top v,\
    \|u\|,\|v\| \le 1\}` — the thesis prints :math:`\Sigma^{-1/2}` for
    :math:`\Sigma^{1/2}` (erratum, also in 3.34) — and, with :math:`\ell = 1/\tau`, the
    SOCP (3.31), kind ``"socp.bmpm.geometric_dual"``:

    .. math::

        \frac{1}{P(\lambda)} = \min_{\ell, u, v}\ \ell
        \quad\text{s.t.}\quad \bar x - c_xR_x^\top u = \bar y + c_yR_y^\top v,\
        \|u\|_2 \le \ell,\ \|v\|_2 \le \ell,

    (:math:`\Sigma = R^\top R`; the sign of :math:`v` is immaterial): the smallest
    :math:`\ell` at which the ellipsoids
    :math:`\{\bar x + c_x\Sigma_x^{1/2}u : \|u\| \le \ell\}` and
    :math:`\{\bar y + c_y\Sigma_y^{1/2}v : \|v\| \le \ell\}` touch (3.32)–(3.34). At
    :math:`\lambda = \kappa(\alpha^*)` (3.35)–(3.36) :math:`\ell^* = 1`: the
    :math:`y`-ellipsoid has Mahalanobis radius :math:`\kappa(\beta_0) + \nu_y` and the
    :math:`x`-ellipsoid touches it at radius :math:`\kappa(\alpha^*) + \nu_x`.

    **Decode:** ``P`` :math:`= 1/\ell`, the touching point
    ``touch`` :math:`= \bar x - c_xR_x^\top u`, and a primal direction :math:`w`
    with :math:`R_xw \parallel u` (least squares), normalised to :math:`w^\top d = 1`.
    **Certificate:** primal = the equality residual over :math:`\|d\|` and the ball
    violations over :math:`\ell`; gap = :math:`(U - 1/\ell)/U` with
    :math:`U = c_x\sigma_x(w) + c_y\sigma_y(w) \ge P(\lambda)` at the decoded
    :math:`w` (weak duality).
    """
    if getattr(program, "kind", None) not in (BMPM, MPM):
        raise ProgramError(
            f"geometric_dual takes a 'socp.bmpm' or 'socp.mpm' program, got "
            f"{getattr(program, 'kind', None)!r}")
    try:
        lam = float(lam)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"lam must be a positive number, got {plain(lam)!r}") from exc
    if not (np.isfinite(lam) and lam > 0):
        raise ProgramError(f"lam must be a positive finite number, got {lam!r}")
    src = program.data
    (ax, ay), (bx, by) = src["a"], src["b"]
    cx, cy = ax + lam * bx, ay + lam * by
    if not (cx > 0 or cy > 0):
        raise ProgramError("both ellipsoid scales are zero: P(lambda) = 0")
    data = {"kind": BMPM_GEOMETRIC_DUAL, "d": np.asarray(src["d"], dtype=float),
            "Rx": np.asarray(src["Rx"], dtype=float), "Ry": np.asarray(src["Ry"], dtype=float),
            "mx": np.asarray(src["mx"], dtype=float), "my": np.asarray(src["my"], dtype=float),
            "cx": float(cx), "cy": float(cy), "lam": lam, "family": src.get("family")}
    return Program(BMPM_GEOMETRIC_DUAL, data, build=_build, decode=_decode, certify=_certify,
                   default_solver="clarabel",
                   description=f"{src.get('family', 'bmpm').upper()} geometric dual (3.31) at "
                   f"lambda={lam:g}")
