r"""The trust-region subproblem (Tayal 2014, eq. 7.9) as a conic program.

.. math::

    \min_s\; q(s) = g^\top s + \tfrac12 s^\top H s
    \quad\text{s.t.}\quad \|D s\|_2 \le \Delta,

with :math:`H` symmetric and possibly indefinite and :math:`D = \operatorname{diag}(d)`,
:math:`d > 0` (the affine scaling of the Coleman–Li bound-constrained trust region,
section 7.3.1; :math:`d = \mathbf 1` gives the plain ball of (7.9)). The two kinds, the
dual and the certificate are in the Notes of :func:`trust_region_subproblem`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils.validation import check_matrix
from ..contracts.trust_region import TRSData, trs_objective
from ..exceptions import ProgramError
from ..kernels import psd_factor
from ..kinds import TRS, TRS_CONVEX
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution

__all__ = ["trust_region_subproblem", "trs_point"]

FORMS = ("auto", "sdp", "socp")


def _check(H: Any, g: Any, delta: Any, scaling: Any) -> TRSData:
    try:
        if isinstance(g, (str, bytes)) or hasattr(g, "nnz"):
            raise TypeError(f"got {type(g).__name__}")
        g = np.asarray(g, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"g must be a dense numeric vector: {exc}") from exc
    if g.ndim != 1 or g.size == 0:
        raise ProgramError(f"g must be a non-empty vector, got shape {g.shape}")
    n = g.size
    H = check_matrix(H, "H")
    if H.shape != (n, n):
        raise ProgramError(f"H must have shape ({n}, {n}) to match g, got {H.shape}")
    if not (np.all(np.isfinite(H)) and np.all(np.isfinite(g))):
        raise ProgramError("H and g must be finite (no NaN or inf)")
    asym = float(np.max(np.abs(H - H.T), initial=0.0))
    if asym > 1e-10 * max(1.0, float(np.max(np.abs(H), initial=0.0))):
        raise ProgramError(f"H must be symmetric (max |H - H^T| = {asym:.3g})")
    H = 0.5 * (H + H.T)
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating, np.integer)):
        raise ProgramError(f"delta (the trust-region radius) must be a number, got {delta!r}")
    delta = float(delta)
    if not (math.isfinite(delta) and delta > 0):
        raise ProgramError(f"delta (the trust-region radius) must be positive and finite, "
                           f"got {delta!r}")
    if scaling is None:
        d = np.ones(n)
    else:
        d = np.asarray(scaling, dtype=float)
        if d.shape != (n,):
            raise ProgramError(f"scaling must be a vector of shape ({n},), got {d.shape}")
        if not (np.all(np.isfinite(d)) and np.all(d > 0)):
            raise ProgramError("scaling must hold positive finite numbers (D = diag(scaling))")
    return TRSData(H=H, g=g, d=d, delta=delta)


def _build_sdp(data: Mapping[str, Any]) -> ConicForm:
    trs: TRSData = data["trs"]
    n = trs.n
    M = cp.Variable((n + 1, n + 1), PSD=True, name="M")
    s = cp.Variable(n, name="s")
    X = M[:n, :n]
    objective = 0.5 * cp.sum(cp.multiply(trs.H, X)) + trs.g @ s
    constraints = {
        "corner": M[n, n] == 1,
        "link": M[:n, n] == s,
        "radius": cp.sum(cp.multiply(trs.d**2, cp.diag(X))) <= trs.delta**2,
    }
    problem = cp.Problem(cp.Minimize(objective), list(constraints.values()))
    return ConicForm(problem, {"M": M, "s": s}, constraints)


def _build_socp(data: Mapping[str, Any]) -> ConicForm:
    trs: TRSData = data["trs"]
    L = data["factor"]
    s = cp.Variable(trs.n, name="s")
    objective = trs.g @ s + 0.5 * cp.sum_squares(L.T @ s)
    constraints = {"radius": cp.norm(cp.multiply(trs.d, s), 2) <= trs.delta}
    problem = cp.Problem(cp.Minimize(objective), list(constraints.values()))
    return ConicForm(problem, {"s": s}, constraints)


def trs_point(data: Mapping[str, Any], solution: Solution) -> np.ndarray:
    """The solution's step :math:`s`, moved to the boundary in the hard case (SDP route).

    Used by the decode and the certificate alike, so both judge the same point.
    """
    trs: TRSData = data["trs"]
    s = np.asarray(solution.values["s"], dtype=float).ravel()
    M = solution.values.get("M")
    if M is None:
        return s
    n = trs.n
    M = np.asarray(M, dtype=float)
    norm = float(np.linalg.norm(trs.d * s))
    if norm >= trs.delta * (1 - 1e-6):
        return s
    R = M[:n, :n] - np.outer(s, s)
    w, V = np.linalg.eigh(0.5 * (R + R.T))
    if w[-1] <= 1e-9 * max(1.0, float(np.trace(M[:n, :n]))):
        return s  # X = ss^T: a rank-one relaxation, s is the answer
    v = V[:, -1]
    # ||D(s + tau v)||^2 = delta^2: a tau^2 + 2 b tau + c = 0 with a > 0 > c
    a = float(np.sum((trs.d * v) ** 2))
    b = float(np.sum(trs.d**2 * s * v))
    c = norm**2 - trs.delta**2
    root = math.sqrt(max(b * b - a * c, 0.0))
    candidates = [s + ((-b + root) / a) * v, s + ((-b - root) / a) * v]
    values = [trs_objective(trs.H, trs.g, p) for p in candidates]
    best = candidates[int(np.argmin(values))]
    return best if min(values) <= trs_objective(trs.H, trs.g, s) else s


def _decode(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    trs: TRSData = data["trs"]
    s = trs_point(data, solution)
    return {"s": s, "objective": trs_objective(trs.H, trs.g, s),
            "on_boundary": bool(np.linalg.norm(trs.d * s) >= trs.delta * (1 - 1e-6))}


def _certify(data: Mapping[str, Any], solution: Solution) -> Residuals:
    trs: TRSData = data["trs"]
    Hs, gs = trs.scaled()
    u = trs.d * trs_point(data, solution)
    delta = trs.delta
    nu2 = float(u @ u)
    Hu = Hs @ u
    r0 = Hu + gs
    nu = max(0.0, -float(u @ r0) / nu2) if nu2 > 0 else 0.0
    eig, Q = data["eigenvalues"], data["eigenvectors"]
    lam1 = float(eig[0])
    hnorm = float(max(abs(eig[0]), abs(eig[-1])))
    lin, quad = float(gs @ u), 0.5 * float(u @ Hu)
    q = lin + quad
    # the objective's resolution: the size of the terms summed in q(u), and never below
    # the round-off of q anywhere in the region (eps times its largest possible terms)
    tau = max(abs(q) + abs(lin) + abs(quad),
              np.finfo(float).eps * (float(np.linalg.norm(gs)) * delta + hnorm * delta**2),
              1e-300)
    primal = max(0.0, math.sqrt(nu2) - delta) / delta
    # dual feasibility of the multiplier: H + nu I >= 0 (objective units: a deficit e
    # costs at most 2 e Delta^2 over the ball)
    curvature = 2.0 * delta**2 * max(0.0, -lam1 - nu) / tau
    # Two rigorous bounds on q(u) - q*, the smaller one is the gap:
    # (a) first order: with r = (H + nu I)u + g and H + nu I >= 0 the Lagrangian is
    #     convex, so for any feasible u', q(u') >= q(u) - nu(Delta^2 - |u|^2)/2
    #     - 2 Delta |r| (minus 2 e Delta^2 for a curvature deficit e);
    # (b) the dual function (Notes of trust_region_subproblem) at
    #     nu' = max(nu, -lam_1, 0): q* >= d(nu').
    stat = float(np.linalg.norm(r0 + nu * u))
    bound_a = (nu * max(0.0, delta**2 - nu2) / 2.0 + 2.0 * delta * stat
               + 2.0 * delta**2 * max(0.0, -lam1 - nu))
    nu_d = max(nu, -lam1, 0.0)
    c = Q.T @ gs
    # the computed eigenvalues are known to about eps ||H|| (eigh): each is lowered by
    # 64 eps ||H||, which only lowers d (a conservative bound; the solver under test may
    # use the same decomposition), and one within that of -nu counts as zero
    shifted = eig + nu_d - 64.0 * np.finfo(float).eps * hnorm
    null = shifted <= 0.0
    if np.all(np.abs(c[null]) <= 1e-12 * max(float(np.linalg.norm(gs)), 1e-300)):
        d_val = (-0.5 * float(np.sum(c[~null] ** 2 / shifted[~null]))
                 - 0.5 * nu_d * delta**2)
        bound_b = q - d_val
    else:
        bound_b = math.inf
    gap = max(0.0, min(bound_a, bound_b)) / tau
    # a point outside the ball can be below q*: by at most nu (|u|^2 - Delta^2)/2 (the
    # Lagrangian at nu), so that the gap bounds |q(u) - q*|
    gap += nu * max(0.0, nu2 - delta**2) / (2.0 * tau)
    # the reported objective must be the point's (the SDP route reports the relaxation's
    # value, which equals q only at a rank-one solution): the gap bounds |reported - q*|
    reported = float(solution.objective)
    gap += abs(reported - q) / tau if math.isfinite(reported) else math.inf
    return Residuals(primal=primal, dual=curvature, gap=gap, source="recomputed")


def trust_region_subproblem(
    H: Any,
    g: Any,
    delta: float,
    *,
    scaling: Any = None,
    form: str = "auto",
) -> Program:
    r"""The trust-region subproblem :math:`\min g^\top s + \frac12 s^\top Hs`,
    :math:`\|Ds\| \le \Delta` (eq. 7.9) as a program.

    Parameters
    ----------
    H : array-like of shape (n, n)
        Symmetric, possibly indefinite.
    g : array-like of shape (n,)
    delta : float
        Trust-region radius :math:`\Delta > 0`.
    scaling : array-like of shape (n,), optional
        Positive diagonal :math:`d` of :math:`D` (default: ones).
    form : {"auto", "sdp", "socp"}, default="auto"
        ``"sdp"``: kind ``sdp.trs`` (any :math:`H`; Clarabel, SCS, ``more-sorensen``);
        ``"socp"``: kind ``socp.trs.convex`` (needs :math:`H \succeq 0`; Clarabel, ECOS,
        SCS, ``more-sorensen``); ``"auto"``: ``socp`` when
        :math:`\lambda_{\min}(H) \ge -10^{-12}\|H\|`, else ``sdp``.

    Returns
    -------
    Program
        ``decode`` gives ``{"s", "objective", "on_boundary"}``. The default solver
        is ``more-sorensen``.

    Raises
    ------
    ProgramError
        Shape mismatch, NaN/inf, non-symmetric ``H``, ``delta <= 0``, a
        non-positive scaling, ``form="socp"`` with an indefinite ``H``.

    Notes
    -----
    Two kinds (:mod:`conicml.kinds`):

    * ``sdp.trs`` (any symmetric :math:`H`): the Shor relaxation, exact by the S-lemma
      (the problem has one quadratic constraint and a Slater point, hence no duality
      gap; section 7.3.1 and Fortin & Wolkowicz 2004)

      .. math::

          \min_{s, X}\; \tfrac12\langle H, X\rangle + g^\top s
          \quad\text{s.t.}\quad \langle D^2, X\rangle \le \Delta^2,\quad
          \begin{bmatrix} X & s \\ s^\top & 1\end{bmatrix} \succeq 0 .

      The generic route needs a PSD cone: Clarabel and SCS (ECOS is not offered).
      In the *hard case* the relaxation's optimal :math:`X` may have rank two and
      its :math:`s` lie inside the ball; the decode then moves :math:`s` along the
      leading eigenvector :math:`v` of :math:`X - ss^\top` to the boundary,
      :math:`s + \tau v` with :math:`\|D(s+\tau v)\| = \Delta` (the root that gives
      the smaller :math:`q`), which is a rank-one optimal point of the relaxation.
      Accuracy: :math:`q` is flat to second order along the sphere near :math:`s^*`, so
      an interior-point solve that meets its gap tolerance returns :math:`s` to about
      the square root of it (~1e-5 at Clarabel's defaults) while its objective agrees to
      ~1e-9; the recomputed certificate below then usually reports the generic route
      ``OPTIMAL_INACCURATE`` at the default ``certify_tol`` of 1e-6.
    * ``socp.trs.convex`` (:math:`H \succeq 0` only): :math:`\min g^\top s +
      \tfrac12\|L^\top s\|^2` with :math:`H = LL^\top`, :math:`\|Ds\| \le \Delta`; an
      SOCP that ECOS takes as well.

    The dual, for general :math:`\Delta` (the thesis prints it for :math:`\Delta = 1`
    without the factors 1/2; erratum: the standard form is)

    .. math::

        \max_{\nu \ge 0,\ H + \nu D^2 \succeq 0}\;
        -\tfrac12 g^\top (H + \nu D^2)^{\dagger} g - \tfrac12 \nu \Delta^2 .

    **Certificate** (recomputed from the data, in :math:`u = Ds`, :math:`\hat H =
    D^{-1}HD^{-1}`, :math:`\hat g = D^{-1}g`), in units of the objective: with the
    multiplier estimate :math:`\nu = \max(0, -u^\top(\hat Hu + \hat g)/\|u\|^2)` and
    :math:`\tau = |q(u)| + |\hat g^\top u| + \tfrac12|u^\top\hat Hu|` (the size of the
    terms of :math:`q`, at least :math:`\epsilon(\|\hat g\|\Delta + \|\hat H\|\Delta^2)`),
    ``primal`` :math:`= \max(0, \|u\| - \Delta)/\Delta`, ``dual`` :math:`=
    2\Delta^2\max(0, -\lambda_{\min}(\hat H) - \nu)/\tau` (Moré & Sorensen's
    :math:`\hat H + \nu I \succeq 0`) and ``gap`` = the smaller of two bounds on
    :math:`q(u) - q^*`, divided by :math:`\tau`: the first-order one
    :math:`\nu(\Delta^2 - \|u\|^2)/2 + 2\Delta\|(\hat H+\nu I)u+\hat g\| +
    2\Delta^2\max(0, -\lambda_{\min} - \nu)` (the Lagrangian is convex when
    :math:`\hat H + \nu I \succeq 0`) and :math:`q(u)` minus the dual function above at
    :math:`\max(\nu, -\lambda_{\min}, 0)` with every eigenvalue lowered by
    :math:`64\epsilon\|\hat H\|` (their accuracy); plus
    :math:`\nu(\|u\|^2 - \Delta^2)_+/2` for a point outside the ball (which may lie below
    :math:`q^*`) and the distance of the reported objective
    from :math:`q(u)`, so that the gap bounds :math:`|\text{reported} - q^*|/\tau`.
    Relative to :math:`\|\hat H\|\Delta^2` instead of :math:`\tau` a nearly singular
    :math:`H` (eigenvalues 0 … 5.6e8) would let a point with a 100 % error in :math:`q`
    pass.
    """
    if form not in FORMS:
        raise ProgramError(f"form must be one of {FORMS}, got {form!r}")
    trs = _check(H, g, delta, scaling)
    eig, vecs = np.linalg.eigh(trs.scaled()[0])
    psd = eig[0] >= -1e-12 * max(1.0, float(np.max(np.abs(eig))))
    if form == "socp" and not psd:
        raise ProgramError(
            f"form='socp' needs a positive semidefinite H (lambda_min = {eig[0]:.3g}); "
            "use form='sdp' for an indefinite H"
        )
    convex = form == "socp" or (form == "auto" and psd)
    kind = TRS_CONVEX if convex else TRS
    data: dict[str, Any] = {"trs": trs, "kind": kind, "eigenvalues": eig,
                            "eigenvectors": vecs}
    if convex:
        data["factor"] = psd_factor(trs.H, "eigen") if trs.n else trs.H
    return Program(
        kind,
        data,
        build=_build_socp if convex else _build_sdp,
        decode=_decode,
        certify=_certify,
        default_solver="more-sorensen",
        description=f"trust-region subproblem (n={trs.n}, Delta={trs.delta:g}, "
                    f"{'convex SOCP' if convex else 'SDP relaxation'})",
    )
