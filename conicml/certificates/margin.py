r"""Kind-specific certificates in O(data), written from each kind's optimality conditions.

The generic certificate (:func:`conicml.certificates.conic.certify_with`) builds the
cvxpy problem and refits multipliers by NNLS after every solve: it costs more
than the fast specialized solvers, cannot check a point where a norm in the
objective is not differentiable, and reads first-order points as non-stationary.
The functions here compute the same three relative numbers
(:class:`~conicml.Residuals` with ``source="recomputed"``) from the returned
point and the program's data with closed-form multipliers:

* :func:`margin_qp_certificate`: the margin QPs (the SVM primal, seed 001 eqs.
  2.17–2.21, and M4 with a shared covariance, seed 004 eqs. 4.9–4.11), by the dual
  point implied by the margins (:func:`implied_alpha`) and the duality gap it proves;
* :func:`fractional_certificate`: the perspective SOCP of MPM/BMPM (seed 004
  eqs. 3.13–3.14, 3.40, 4.8), by its KKT multiplier in closed form.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
from scipy.linalg import cho_solve, get_lapack_funcs
from scipy.optimize import lsq_linear

from .._utils.threads import one_blas_thread
from ..solution import Residuals

__all__ = ["KINK_RTOL", "fractional_certificate", "gram_fractional_certificate",
           "implied_alpha", "m4_fixed_rho_certificate", "hess_norm", "margin_qp_certificate",
           "newton_decrement"]

#: A norm :math:`\|Ax\|` counts as at its kink when :math:`\|Ax\| \le` this fraction of
#: :math:`\|A\|_F\|x\|` (its argument vanishes relative to the size of its terms).
KINK_RTOL = 1e-7

#: Bands :math:`\beta` of the implied dual point: points with margin within
#: :math:`\beta` of 1 get a fitted multiplier (see :func:`implied_alpha`).
BANDS = (0.0, 1e-7, 1e-5, 1e-3, 1e-2, 0.1)
#: The bands in the order the M4 certificate tries them, the likeliest to certify an
#: interior-point point first, and the value below which it stops trying (the result is
#: the best band tried, so stopping early only skips work and may report a slightly larger
#: number, still far below every certify_tol: the bands 0 and 0.1 cost an SVD least
#: squares of order ~2n and a trust-region least squares over ~n/2 columns for no better
#: value)
M4_BAND_ORDER = (1e-5, 1e-3, 1e-7, 1e-2, 0.0, 0.1)
M4_EARLY_EXIT = 1e-8

#: Smallest scale of a margin QP's objective, as a fraction of the size of its terms
#: :math:`(\|R\|\,\|w\|)^2` (:func:`margin_qp_certificate`).
QP_FLOOR = 1e-3

#: Smallest scale of :math:`P = 1/\kappa` in the fractional certificate's gap, as a
#: fraction of the margin row's right-hand side 1 (:func:`fractional_certificate`).
FRACTIONAL_FLOOR = 1e-3

_TINY = np.finfo(float).tiny


def _ratio(num: float, *scales: float) -> float:
    den = max([abs(float(s)) for s in scales if math.isfinite(s)] + [_TINY])
    return abs(float(num)) / den


def _recomputed(primal: float, dual: float, gap: float) -> Residuals:
    return Residuals(primal=float(primal), dual=float(dual), gap=float(gap),
                     source="recomputed")


def hess_norm(R: np.ndarray, w: np.ndarray, s: float, S: np.ndarray | None = None
              ) -> np.ndarray:
    r""":math:`\nabla^2\|Rw\| = (R^\top R - gg^\top/s^2)/s`, :math:`g = R^\top Rw`
    (``S``: :math:`R^\top R` if the caller has it)."""
    if S is None:
        S = R.T @ R
    g = S @ w
    return S / s - np.outer(g, g) / s**3


def _solve_well_conditioned(K: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    r"""The solution of the symmetric system :math:`Kx = b` by :math:`LDL^\top`, or ``None``.

    ``None`` unless LAPACK's estimate of the reciprocal 1-norm condition number
    exceeds :math:`10\,m\cdot 10^{-13}` (:math:`m` the order): then the smallest singular
    value is above :math:`10^{-13}` of the largest, nothing is truncated by the
    least-squares solve with ``rcond=1e-13`` of :func:`newton_decrement`, and both give
    the same (unique) solution, at about a tenth of the cost of the SVD. Runs on one BLAS
    thread (see :func:`conicml.formulations.minimax._gram_feature_map`).
    """
    m = K.shape[0]
    sytrf, sytrs, sycon, sytrf_lwork = get_lapack_funcs(
        ("sytrf", "sytrs", "sycon", "sytrf_lwork"), (K,))
    with one_blas_thread():
        lwork, info = sytrf_lwork(m, lower=1)
        if info != 0:
            return None
        ldu, ipiv, info = sytrf(K, lower=1, lwork=max(int(lwork), m))
        if info != 0:
            return None
        rcond, info = sycon(ldu, ipiv, float(np.abs(K).sum(axis=0).max()), lower=1)
        if info != 0 or not rcond > 10.0 * m * 1e-13:
            return None
        x, info = sytrs(ldu, ipiv, rhs[:, None], lower=1)
    if info != 0 or not np.all(np.isfinite(x)):
        return None
    return x[:, 0]


def _solve_augmented(H: np.ndarray, A: np.ndarray, e: np.ndarray) -> np.ndarray | None:
    r"""The KKT solution :math:`(\delta, \mu)` of :func:`newton_decrement` by one Cholesky
    factorisation, or ``None``.

    On :math:`A^\top\delta = 0` the Hessian :math:`H` may be replaced by
    :math:`M = H + tAA^\top` (:math:`t > 0`) without changing :math:`\delta` or
    :math:`\mu`; when :math:`M` is numerically definite (a PSD :math:`H` whose null space
    :math:`A^\top` does not annihilate, e.g. the Hessian of a sum of norms, singular
    along the point itself), :math:`\mu = -(A^\top M^{-1}A)^{-1}A^\top M^{-1}e`,
    :math:`\delta = -M^{-1}(e + A\mu)`: a Cholesky factorisation (faster than the
    symmetric indefinite :math:`LDL^\top` of the bordered matrix). ``None`` when a pivot
    falls below :math:`10^{-11}` of the largest diagonal entry (the caller then solves the
    bordered system); the caller checks the residual either way.
    """
    scale = float(np.max(np.abs(np.diag(H)), initial=0.0))
    an = float(np.sum(A * A))
    if not (scale > 0 and an > 0 and np.all(np.isfinite(H))):
        return None
    t = scale / an
    M = H + t * (A @ A.T)
    with one_blas_thread():
        try:
            L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            return None
        piv = np.diag(L)
        if not np.all(piv * piv > 1e-11 * float(np.max(np.diag(M)))):
            return None
        Mi_e = cho_solve((L, True), e, check_finite=False)
        Mi_A = cho_solve((L, True), A, check_finite=False)
    G = A.T @ Mi_A
    try:
        mu = -np.linalg.solve(G, A.T @ Mi_e)
    except np.linalg.LinAlgError:
        return None
    delta = -(Mi_e + Mi_A @ mu)
    out = np.concatenate([delta, mu])
    return out if np.all(np.isfinite(out)) else None


def newton_decrement(H: np.ndarray, e: np.ndarray, A: np.ndarray) -> float:
    r"""Second-order estimate of the objective improvement a stationarity residual allows.

    :math:`\tfrac12\delta^\top H\delta` with :math:`\delta` the Newton step
    :math:`\min_\delta e^\top\delta + \tfrac12\delta^\top H\delta` s.t.
    :math:`A^\top\delta = 0` (the tangent space of the active constraints; the
    Lagrangian's Hessian :math:`H`): the squared Newton decrement, in the units of the
    objective. Interior-point points are accurate to ~1e-8 in the objective but only to
    ~the square root of that in flat directions, so a first-order stationarity residual
    reads ~1e-4..1e-2 on ill-conditioned data where this reads ~1e-8; a point that is
    really worse by ``r`` in the objective reads ~``r`` here. Directions in which
    :math:`H` is singular but :math:`e` is not zero give a large value (least squares).
    """
    q, k = H.shape[0], A.shape[1]
    rhs = np.concatenate([-e, np.zeros(k)])
    sol = _solve_augmented(H, A, e)
    if sol is not None:
        delta, mu = sol[:q], sol[q:]
        # the residual of the KKT system [H A; A^T 0] [delta; mu] = [-e; 0], by blocks
        res_vec = np.concatenate([H @ delta + A @ mu + e, A.T @ delta])
    else:
        K = np.block([[H, A], [A.T, np.zeros((k, k))]])
        sol = _solve_well_conditioned(K, rhs)
        if sol is None:
            sol = np.linalg.lstsq(K, rhs, rcond=1e-13)[0]
        delta = sol[:q]
        res_vec = K @ sol - rhs
    dec = -(float(e @ delta) + 0.5 * float(delta @ H @ delta))
    resid = float(np.linalg.norm(res_vec))
    if resid > 1e-6 * max(float(np.linalg.norm(e)), _TINY):
        return math.inf  # e has a component H cannot absorb: a first-order descent direction
    return max(dec, 0.0)


# --------------------------------------------------------------------------------------
# margin QPs: SVM primal (seed 001 eqs. 2.19-2.21, 2.27) and M4 shared covariance (4.9-4.11)
# --------------------------------------------------------------------------------------
def _stationary_w(u: np.ndarray, R: np.ndarray | None) -> tuple[np.ndarray, float]:
    r"""The minimiser :math:`w_\alpha` of :math:`\|Rw\|^2 - u^\top w` and its range residual.

    SVM (``R=None``, objective :math:`\tfrac12\|w\|^2`): :math:`w_\alpha = u`.
    Otherwise :math:`2R^\top R w = u`, solved by least squares; if :math:`u` is not in
    the range of :math:`R^\top` the dual function is :math:`-\infty` and the relative
    residual (returned) says so.
    """
    if R is None:
        return u, 0.0
    G = 2.0 * (R.T @ R)
    w = np.linalg.lstsq(G, u, rcond=None)[0]
    return w, _ratio(float(np.linalg.norm(G @ w - u)), float(np.linalg.norm(u)))


def implied_alpha(Z: np.ndarray, y: np.ndarray, c: np.ndarray, target: np.ndarray,
                  margin: np.ndarray) -> list[np.ndarray]:
    r"""Dual-feasible points :math:`\alpha` implied by a primal point's margins (as Pegasos
    builds it, seed 001 eq. 2.27).

    For each band :math:`\beta` (:data:`BANDS`): :math:`\alpha_i = c_i` where
    :math:`m_i = y_if_i < 1 - \beta` (the hinge is active; infinite costs give 0 and
    the point is caught as infeasible), :math:`\alpha_i = 0` where
    :math:`m_i > 1 + \beta`, and on the band the bounded least-squares fit of the
    stationarity :math:`Z^\top(\alpha\circ y) = ` ``target`` and
    :math:`y^\top\alpha = 0` (:func:`scipy.optimize.lsq_linear`, BVLS); the heavier
    class is then scaled down so that :math:`y^\top\alpha = 0` holds exactly. Each
    candidate lies in :math:`\{0 \le \alpha \le c,\ y^\top\alpha = 0\}`, so its dual
    value is a lower bound on the optimum whatever the band (weak duality). Bands
    holding more than :math:`\max(200, 20(q+1))` points are skipped (cost bound).
    """
    out: list[np.ndarray] = []
    seen: set[tuple[int, int]] = set()
    q = Z.shape[1]
    max_free = max(200, 20 * (q + 1))
    finite_c = np.where(np.isfinite(c), c, 0.0)
    for beta in BANDS:
        bound = margin < 1.0 - beta
        free = np.flatnonzero(np.abs(margin - 1.0) <= beta)
        key = (int(np.count_nonzero(bound)), int(free.size))
        if key in seen or free.size > max_free:
            continue
        seen.add(key)
        alpha = np.where(bound, finite_c, 0.0)
        if free.size:
            r = target - Z.T @ (alpha * y)
            A_f = (Z[free] * y[free, None]).T
            weight = 10.0 * max(float(np.max(np.abs(A_f), initial=0.0)), _TINY)
            A = np.vstack([A_f, weight * y[free][None, :]])
            rhs = np.concatenate([r, [-weight * float(y @ alpha)]])
            ub = c[free]
            if A.shape[0] >= 1 and np.all(np.isfinite(A)) and np.all(np.isfinite(rhs)):
                res = lsq_linear(A, rhs, bounds=(np.zeros(free.size), ub), method="bvls")
                alpha[free] = np.clip(res.x, 0.0, ub)
        s_pos, s_neg = float(alpha[y > 0].sum()), float(alpha[y < 0].sum())
        if s_pos > s_neg:
            alpha[y > 0] *= s_neg / s_pos
        elif s_neg > s_pos:
            alpha[y < 0] *= s_pos / s_neg
        out.append(alpha)
    return out


def margin_qp_certificate(Z: np.ndarray, y: np.ndarray, c: np.ndarray, w: np.ndarray,
                          b: float, xi: np.ndarray | None, claimed: float,
                          R: np.ndarray | None = None) -> tuple[Residuals, np.ndarray]:
    r"""Certificate of :math:`\min_{w,b,\xi} Q(w) + c^\top\xi` s.t. :math:`y_i(z_i^\top w + b)
    \ge 1 - \xi_i`, :math:`\xi \ge 0`, from the point :math:`(w, b, \xi)` alone.

    :math:`Q(w) = \tfrac12\|w\|^2` (``R=None``, the SVM primal, seed 001 eqs.
    2.19–2.21) or :math:`\|Rw\|^2` (M4 with a shared covariance, seed 004 eq. 4.9);
    hard margins have :math:`c = \infty` and ``xi=None``. With the implied dual point
    :math:`\alpha` (:func:`implied_alpha`), :math:`u = Z^\top(\alpha\circ y)` and
    :math:`w_\alpha = \arg\min_w Q(w) - u^\top w`, the Lagrangian dual value is
    :math:`D(\alpha) = 1^\top\alpha + Q(w_\alpha) - u^\top w_\alpha` (seed 001 eq.
    2.27 for the SVM) and, for a feasible point with value :math:`P`,

    .. math::

        P - D = Q(w - w_\alpha) + \sum_i \bigl[c_i\xi_i - \alpha_i(1 - m_i)\bigr]
        \;\ge\; 0,

    both terms non-negative (:math:`0 \le \alpha_i \le c_i`, :math:`\xi_i \ge
    (1 - m_i)_+`). Returned (all relative, scale-free):

    * ``primal``: the largest violation of a margin row, over :math:`\max(1, |m_i|,
      \xi_i)`, or of :math:`\xi \ge 0`, over :math:`\max(1, \max\xi)`;
    * ``dual``: the stationarity term :math:`Q(w - w_\alpha)/P` (and the relative
      range residual when :math:`u \notin \operatorname{range}R^\top`);
    * ``gap``: :math:`(P - D)/P` — a bound on the relative suboptimality of the
      point (weak duality) — and :math:`|P_{reported} - P|/P`.

    Every candidate (:math:`\alpha = 0`, whose :math:`D = 0` bounds the non-negative
    objective, and those of the bands) is a valid bound; the one with the smallest
    residuals is used and returned. Denominators are :math:`P`, floored at
    :data:`QP_FLOOR` :math:`(\|R\|\,\|w\|)^2` (an optimum at :math:`\|Rw\| = 0` for a
    singular shared covariance).
    """
    f = Z @ w + b
    margin = y * f
    hard = xi is None
    slack = np.zeros_like(margin) if hard else np.asarray(xi, dtype=float)
    viol = np.maximum(0.0, 1.0 - slack - margin) / np.maximum.reduce(
        [np.ones_like(margin), np.abs(margin), np.abs(slack)])
    primal = float(np.max(viol, initial=0.0))
    if not hard:
        primal = max(primal, _ratio(float(np.max(-slack, initial=0.0)),
                                    1.0, float(np.max(slack, initial=0.0))))
    Rw = w if R is None else R @ w
    quad = (0.5 if R is None else 1.0) * float(Rw @ Rw)
    cost = 0.0 if hard else float(c @ np.maximum(slack, 0.0))
    P = quad + cost
    target = w if R is None else 2.0 * (R.T @ (R @ w))
    # the objective's scale: P, floored at a fraction of the size of its terms
    # (||R|| ||w||)^2 for an optimum at Q = 0 (a singular shared covariance, rho* = inf)
    rnorm = 1.0 if R is None else float(np.linalg.norm(R, 2))
    scale = max(abs(P), QP_FLOOR * (rnorm * float(np.linalg.norm(w))) ** 2, _TINY)
    best: tuple[float, float, np.ndarray] | None = None
    # alpha = 0 is always a candidate: D(0) = 0 <= P* (the objective is non-negative)
    for alpha in [np.zeros_like(y), *implied_alpha(Z, y, c, target, margin)]:
        u = Z.T @ (alpha * y)
        w_a, range_res = _stationary_w(u, R)
        Rwa = w_a if R is None else R @ w_a
        q_a = (0.5 if R is None else 1.0) * float(Rwa @ Rwa)
        D = float(alpha.sum()) + q_a - float(u @ w_a)
        dw = w - w_a
        Rdw = dw if R is None else R @ dw
        stat = (0.5 if R is None else 1.0) * float(Rdw @ Rdw) / scale
        gap_c = max(P - D, 0.0) / scale
        # D is a bound only if u is in the range of R^T: its residual counts in both
        dual_c, gap_c = max(stat, range_res), max(gap_c, range_res)
        if best is None or max(dual_c, gap_c) < max(best[0], best[1]):
            best = (dual_c, gap_c, alpha)
    assert best is not None
    dual, gap, alpha = best
    if not math.isfinite(claimed):
        gap = math.inf
    else:
        gap = max(gap, abs(claimed - P) / scale)
    return _recomputed(primal, dual, gap), alpha


# --------------------------------------------------------------------------------------
# the perspective SOCP of MPM / BMPM (seed 004 eqs. 3.13-3.14, 3.40, 4.8)
# --------------------------------------------------------------------------------------
def _fractional_result(primal: float, P: float, lam: float, row: float, dec: float,
                       floor: float, claimed: float | None) -> Any:
    """The fractional certificate from the scatter decrement ``dec`` at ``lam = P / row``:
    dual residual ``dec / P``, gap from the normalisation row (and the claimed value)."""
    dual = dec / max(P, floor)
    gap = lam * abs(row - 1.0) / max(P, lam, floor)
    if claimed is not None:
        gap = math.inf if not math.isfinite(claimed) else max(
            gap, abs(claimed - P) / max(abs(P), floor))
    return _recomputed(primal, dual, gap)


def _scatter_decrement(scatter: Any, v: np.ndarray, e: np.ndarray, a: np.ndarray,
                       px: float, py: float, sx: float, sy: float,
                       g: tuple[np.ndarray, np.ndarray] | None = None,
                       row: tuple[np.ndarray, float, float, float] | None = None) -> float:
    r""":func:`newton_decrement` of the fractional program's Lagrangian when its covariances
    are a :class:`~conicml.contracts.minimax.KernelScatter` (never formed).

    The Hessian is :math:`H = \frac{p_x}{\sigma_x}\Sigma_x + \frac{p_y}{\sigma_y}\Sigma_y
    - \frac{p_x}{\sigma_x^3}g_xg_x^\top - \frac{p_y}{\sigma_y^3}g_yg_y^\top`
    (:math:`g = \Sigma v`), i.e. :math:`\alpha M(c')` plus rank two with
    :math:`\alpha = p_x/\sigma_x + p_y/\sigma_y`, :math:`c' = (p_x/\sigma_x)/\alpha`. As in
    :func:`_solve_augmented`, :math:`H + taa^\top` (:math:`a` the margin row's gradient)
    replaces :math:`H` on :math:`a^\top\delta = 0`; it is :math:`\alpha M(c')` plus
    :math:`UWU^\top` of rank three, inverted by the Woodbury identity over
    ``scatter.solve`` (:math:`M(c')^{-1}` on four vectors). The KKT residual of the step is
    then recomputed with :math:`H` itself (products only), as :func:`newton_decrement`
    does, and a residual above ``1e-6`` of :math:`\|e\|` gives ``inf``. Of the four
    solves three are made: :math:`M(c')v = c'g_x + (1-c')g_y` gives the fourth. With
    ``row = (d, a_x, a_y, lambda)``, :math:`a = d - (a_x/\sigma_x)g_x -
    (a_y/\sigma_y)g_y` and :math:`e = \lambda d - (p_x/\sigma_x)g_x -
    (p_y/\sigma_y)g_y` (the Lagrangian's gradient at ``v``), two are made, with
    :math:`e` and :math:`g_x - g_y`, one at a time: as :math:`\alpha M(c')v =
    (p_x/\sigma_x)g_x + (p_y/\sigma_y)g_y = \lambda d - e`, :math:`M(c')^{-1}d =
    (\alpha v + M(c')^{-1}e)/\lambda` (exact, from the point and the data), and the
    four solutions' inner products with :math:`U` come from the products with :math:`K`
    of :math:`v` and of the two solutions (their acceptance checks formed them; the
    step's residual with :math:`H` forms its own). The
    solve with :math:`g_x - g_y` recurs along the solver's weight curve (its
    derivative's), whose kept solutions start it
    (:meth:`~conicml.contracts.minimax.KernelScatter.solve` accepts only its recomputed
    residual).
    """
    dot = scatter.dot  # the coordinates' inner product (Euclidean, or K's: GramScatter)
    gx, gy = scatter.sigmas(v) if g is None else g  # (Sigma_x v, Sigma_y v)
    alpha = px / sx + py / sy
    c = (px / sx) / alpha

    def hess(x: np.ndarray) -> np.ndarray:
        Sx_, Sy_ = scatter.sigmas(x)
        return (px / sx * Sx_ + py / sy * Sy_
                - px / sx**3 * gx * dot(gx, x) - py / sy**3 * gy * dot(gy, x))

    aa = dot(a, a)
    if not (aa > 0 and alpha > 0 and 0.0 < c < 1.0):
        return math.inf
    t = dot(a, hess(a)) / (aa * aa) + alpha * scatter._mu(c) / aa
    cols, winv, inv_g = [a], [1.0 / t], []
    # (alpha M(c'))^-1 [e, U]; relative residual 1e-10: the decrement is then accurate
    # to about that (relative), and its step is checked against H below anyway. As
    # M(c')v = c'g_x + (1 - c')g_y, M(c')^-1 g of the class of the larger weight is
    # (v - w M(c')^-1 g_minor) / (1 - w), w <= 1/2 the smaller weight: three solves
    if row is None:
        minor = 1 if c >= 0.5 else 0
        w_minor = 1.0 - c if minor else c
        Zm = scatter.solve(c, np.column_stack([e, a, (gx, gy)[minor]]), rtol=1e-10)
        Z = [Zm[:, 0], Zm[:, 1]]
        g_inv = [Zm[:, 2], Zm[:, 2]]
        g_inv[1 - minor] = (v - w_minor * Zm[:, 2]) / (1.0 - w_minor)
    else:
        _, ax, ay, lam = row
        if not lam > 0:
            return math.inf
        y_diff = scatter.solve(c, gx - gy, rtol=1e-10)  # M^-1 g_x = v + (1 - c') y_diff
        z_e = scatter.solve(c, e, rtol=1e-10)

        def inverses(v_: np.ndarray, y_: np.ndarray, z_: np.ndarray) -> list[np.ndarray]:
            # [M^-1 e, M^-1 a, M^-1 g_x, M^-1 g_y] from M^-1 e, y_diff and v: M^-1 d from
            # alpha M v = lam d - e (the definitions of c', alpha and e), and M^-1 a =
            # M^-1 d - (a_x/s_x) M^-1 g_x - (a_y/s_y) M^-1 g_y; linear in the three, so
            # the same combination of their products with K gives K times these
            g_ = [v_ + (1.0 - c) * y_, v_ - c * y_]
            return [z_, (alpha * v_ + z_) / lam - ax / sx * g_[0] - ay / sy * g_[1], *g_]

        Z = inverses(v, y_diff, z_e)
        g_inv = Z[2:]
        # (the solves' acceptance checks formed K y_diff and K z_e, the caller K v)
        KZ = inverses(*(scatter.k_product(x) for x in (v, y_diff, z_e)))
    for p_, s_, g_, y_ in ((px, sx, gx, g_inv[0]), (py, sy, gy, g_inv[1])):
        if p_ != 0.0:
            cols.append(g_)
            winv.append(-(s_**3) / p_)
            inv_g.append(y_)
    U = np.stack(cols, axis=1)
    Y = np.column_stack([Z[0], Z[1], *inv_g]) / alpha
    if row is None:
        UtY = scatter.inner_matrix(U, Y)
    else:  # U^T K Y from the products with K of the three solutions (no new product)
        keep = [j for j, p_ in ((2, px), (3, py)) if p_ != 0.0]
        UtY = U.T @ (np.column_stack([KZ[0], KZ[1], *(KZ[j] for j in keep)]) / alpha)
    cap = np.diag(winv) + UtY[:, 1:]
    try:
        corr = np.linalg.solve(cap, UtY)
    except np.linalg.LinAlgError:
        return math.inf
    Mi = Y - Y[:, 1:] @ corr  # (H + t a a^T)^-1 [e, U]; column 1 is a
    Mi_e, Mi_a = Mi[:, 0], Mi[:, 1]
    den = dot(a, Mi_a)
    if not (den > 0 and np.all(np.isfinite(Mi))):
        return math.inf
    mu = -dot(a, Mi_e) / den
    delta = -(Mi_e + Mi_a * mu)
    Hd = hess(delta)
    r = Hd + a * mu + e
    res = math.hypot(math.sqrt(max(dot(r, r), 0.0)), dot(a, delta))
    if res > 1e-6 * max(math.sqrt(max(dot(e, e), 0.0)), _TINY):
        return math.inf
    return max(-(dot(e, delta) + 0.5 * dot(delta, Hd)), 0.0)


def fractional_certificate(d: np.ndarray, Rx: np.ndarray, Ry: np.ndarray,
                           a: tuple[float, float], b: tuple[float, float], v: np.ndarray,
                           claimed: float | None, Sx: np.ndarray | None = None,
                           Sy: np.ndarray | None = None, scatter: Any = None) -> Residuals:
    r"""Certificate of :math:`\min_v b_x\|R_xv\| + b_y\|R_yv\|` s.t.
    :math:`d^\top v - a_x\|R_xv\| - a_y\|R_yv\| \ge 1` at the point :math:`v`.

    This is the Charnes–Cooper form of the fractional program
    :math:`\max_{w^\top d = 1}(1 - a_x\sigma_x - a_y\sigma_y)/(b_x\sigma_x + b_y\sigma_y)`
    (seed 004 eqs. 3.13–3.14 for BMPM, 3.40 robust, 4.8 for MPM; errata S004-D1).
    Its Lagrangian :math:`p_x\|R_xv\| + p_y\|R_yv\| - \lambda d^\top v + \lambda`
    with :math:`p = b + \lambda a` gives the KKT conditions

    .. math::

        \lambda d = p_x R_x^\top u_x + p_y R_y^\top u_y,\quad
        \|u_x\|, \|u_y\| \le 1,\quad u_x = R_xv/\|R_xv\| \text{ if } R_xv \ne 0,
        \quad \lambda\,(d^\top v - a_x\sigma_x - a_y\sigma_y - 1) = 0,

    and, multiplying the first by :math:`v`, the multiplier in closed form
    :math:`\lambda = P / (d^\top v - a_x\sigma_x - a_y\sigma_y)` with
    :math:`P = b_x\sigma_x + b_y\sigma_y` (:math:`\lambda = P` at the optimum: strong
    duality, :math:`1/\kappa^*`). At a kink (:math:`\|R_xv\| \le` :data:`KINK_RTOL`
    :math:`\|R_x\|_F\|v\|`) :math:`u_x` is not determined: the subgradient
    :math:`z_x = p_xu_x` is fitted by least squares to the rest of the stationarity
    and the dual-norm condition :math:`\|z_x\| \le p_x` is checked — the point is
    *checked* there, never "not checked". Returned (relative, scale-free):

    * ``primal``: :math:`(1 - \text{row})_+ / \max(1, |d^\top v|, a_x\sigma_x + a_y\sigma_y)`;
    * ``dual``: :math:`\|\lambda d - p_xR_x^\top u_x - p_yR_y^\top u_y\|` over its largest
      term, plus the dual-norm violation :math:`(\|z\| - p)_+/p` at a kink;
    * ``gap``: the complementarity :math:`\lambda(\text{row} - 1)/\max(P, \lambda)`
      and the mismatch of the reported objective, :math:`|P_{rep} - P|/P`, each with
      the denominator floored at :data:`FRACTIONAL_FLOOR` (:math:`P = 1/\kappa` is
      dimensionless; at :math:`\kappa^* = \infty` the optima form a ray on which the
      row need not be tight).
    """
    v = np.asarray(v, dtype=float)
    (ax, ay), (bx, by) = a, b
    rx, ry = Rx @ v, Ry @ v
    sx, sy = float(np.linalg.norm(rx)), float(np.linalg.norm(ry))
    dv = float(d @ v)
    pen = ax * sx + ay * sy
    row = dv - pen
    P = bx * sx + by * sy
    primal = max(0.0, 1.0 - row) / max(1.0, abs(dv), pen)
    if not row > 0:  # not even the sign of the margin row: no multiplier
        return _recomputed(max(primal, math.inf if row != row else primal), math.inf, math.inf)
    lam = P / row
    px, py = bx + lam * ax, by + lam * ay
    vnorm = float(np.linalg.norm(v))
    resid = lam * d
    terms = [float(np.linalg.norm(resid))]
    kinked: list[tuple[np.ndarray, float]] = []
    for R, r, s, p in ((Rx, rx, sx, px), (Ry, ry, sy, py)):
        if p == 0.0:
            continue  # the norm does not enter the Lagrangian (b_y = 0 and lambda a_y = 0)
        fro = R.frobenius() if hasattr(R, "frobenius") else float(np.linalg.norm(R))
        if s <= KINK_RTOL * fro * vnorm:
            kinked.append((R, p))
            continue
        g = p * (R.T @ r) / s
        resid = resid - g
        terms.append(float(np.linalg.norm(g)))
    ball = 0.0
    if kinked:
        # fit the subgradients z (||z|| <= p each) of the kinked norms to the residual
        A = np.hstack([R.T for R, _ in kinked])
        z = np.linalg.lstsq(A, resid, rcond=None)[0]
        pos = 0
        for R, p in kinked:
            zk = z[pos:pos + R.shape[0]]
            pos += R.shape[0]
            zn = float(np.linalg.norm(zk))
            ball = max(ball, max(0.0, zn - p) / p)
            terms.append(p * float(np.linalg.norm(R, 2)))  # the size of the ball p R^T B
        resid = resid - A @ z
    # P = 1/kappa is dimensionless: an optimum at P ~ 0 (kappa* = inf, a whole ray of
    # optima on which the margin row need not be tight) is judged against the margin
    # row's "1", with FRACTIONAL_FLOOR of it as the smallest scale
    floor = FRACTIONAL_FLOOR * max(1.0, abs(dv))
    if kinked:  # first order: the residual over its terms and the dual-norm check
        dual = max(_ratio(float(np.linalg.norm(resid)), *terms), ball)
    else:
        # second order: the Newton decrement of the Lagrangian on the tangent space of
        # the margin row, relative to P (the objective units)
        if scatter is not None:
            grad_row = d.copy()
            for R, r, s, a_ in ((Rx, rx, sx, ax), (Ry, ry, sy, ay)):
                if a_ != 0.0 and s > 0:
                    grad_row -= a_ * (R.T @ r) / s
            with one_blas_thread():  # products with n x n blocks: one thread
                dec = _scatter_decrement(scatter, v, resid, grad_row, px, py, sx, sy)
            return _fractional_result(primal, P, lam, row, dec, floor, claimed)
        H = np.zeros((v.size, v.size))
        grad_row = d.copy()
        for R, r, s, p, a_, S in ((Rx, rx, sx, px, ax, Sx), (Ry, ry, sy, py, ay, Sy)):
            if p != 0.0:
                H += p * hess_norm(R, v, s, S)
            if a_ != 0.0 and s > 0:
                grad_row -= a_ * (R.T @ r) / s
        dec = newton_decrement(H, resid, grad_row[:, None])
        dual = dec / max(P, floor)
    gap = lam * abs(row - 1.0) / max(P, lam, floor)
    if claimed is not None:
        if not math.isfinite(claimed):
            gap = math.inf
        else:
            gap = max(gap, abs(claimed - P) / max(abs(P), floor))
    return _recomputed(primal, dual, gap)


def gram_fractional_certificate(scatter: Any, a: tuple[float, float],
                                b: tuple[float, float], v: np.ndarray,
                                claimed: float | None) -> Residuals:
    r""":func:`fractional_certificate` of a kernel program written in dual coefficients.

    The same KKT conditions, multiplier and three numbers, with the covariances held by a
    :class:`~conicml.contracts.minimax.GramScatter`: ``v`` and the mean difference
    ``scatter.d_rep`` are representatives of the feature-map vectors (:math:`u =
    \Phi^\top v`), every inner product is that of :math:`K`, and the dual residual is the
    Newton decrement of :func:`_scatter_decrement` (invariant under the change of
    coordinates). The ridges are positive, so neither norm is at its kink at
    :math:`v \ne 0`; a point where one is (:math:`\sigma = 0`) is not certified (``inf``).
    """
    scatter.forget()  # products kept by identity: none from before this call
    try:
        return _gram_fractional(scatter, a, b, np.asarray(v, dtype=float), claimed)
    finally:
        scatter.forget()


def _gram_fractional(scatter: Any, a: tuple[float, float], b: tuple[float, float],
                     v: np.ndarray, claimed: float | None) -> Residuals:
    (ax, ay), (bx, by) = a, b
    e = scatter.d_rep
    with one_blas_thread():
        gx, gy = scatter.sigmas(v)
        last = scatter._last_kv  # (v, K v) of the products just formed
        kv = last[1] if last is not None and last[0] is v else scatter.kmul(v)
        scatter.remember(v, kv)  # the inner products with v below (and the decrement's)
        # (sigma_sqs from the kept K v; it keeps its value for v: the decode's norms)
        sx, sy = (math.sqrt(max(s2, 0.0)) for s2 in scatter.sigma_sqs(v))
        dv = float(e @ kv)
    pen = ax * sx + ay * sy
    row = dv - pen
    P = bx * sx + by * sy
    primal = max(0.0, 1.0 - row) / max(1.0, abs(dv), pen)
    if not row > 0 or not (sx > 0 and sy > 0):
        return _recomputed(primal if row == row else math.inf, math.inf, math.inf)
    lam = P / row
    px, py = bx + lam * ax, by + lam * ay
    resid = lam * e - px * gx / sx - py * gy / sy
    grad_row = e - ax * gx / sx - ay * gy / sy
    with one_blas_thread():
        dec = _scatter_decrement(scatter, v, resid, grad_row, px, py, sx, sy, (gx, gy),
                                 (e, ax, ay, lam))
    floor = FRACTIONAL_FLOOR * max(1.0, abs(dv))
    return _fractional_result(primal, P, lam, row, dec, floor, claimed)


# --------------------------------------------------------------------------------------
# M4: the fixed-rho SOCP (seed 004 eqs. 4.1-4.5 / 4.16-4.18, errata S004-A5, S004-A6)
# --------------------------------------------------------------------------------------
def _m4_band_fit(ctx: SimpleNamespace, free: np.ndarray,
                 fixed: np.ndarray) -> tuple[float, float] | None:
    """``(dual, gap)`` of :func:`m4_fixed_rho_certificate` with the multipliers of the rows
    ``free`` fitted and those of ``fixed`` at their bound; ``None`` if the fit's system is
    not finite."""
    Z, w, d, rho, hard = ctx.Z, ctx.w, ctx.d, ctx.rho, ctx.hard
    rows, rscale, norm_row, eta, ub = ctx.rows, ctx.rscale, ctx.norm_row, ctx.eta, ctx.ub
    zk, bal, weight, sides, glob = ctx.zk, ctx.bal, ctx.weight, ctx.sides, ctx.glob
    s_pos, s_neg = ctx.s_pos, ctx.s_neg
    lam = np.where(fixed, ub, 0.0)
    kinked = [(R, mask) for R, kink, _, mask in sides if kink]
    # unknowns: lambda_free, nu, z of each kinked side
    blocks = [zk[:, free], -d[:, None]] + [-R.T for R, _ in kinked]
    A_w = np.hstack(blocks)
    n_z = sum(R.shape[0] for R, _ in kinked)
    A_b = np.concatenate([bal[free], [0.0], np.zeros(n_z)])[None, :]
    rhs_w = -(zk @ lam)
    rhs_b = [-float(bal @ lam)]
    A_list, rhs_list = [A_w, weight * A_b], [rhs_w, weight * np.array(rhs_b)]
    if hard:
        A_list.append(weight * np.concatenate([norm_row[free], [0.0], np.zeros(n_z)])[None, :])
        rhs_list.append(weight * np.array([1.0 - float(norm_row @ lam)]))
    A = np.vstack(A_list)
    rhs = np.concatenate(rhs_list)
    lo = np.concatenate([np.zeros(free.size), [-np.inf], np.full(n_z, -np.inf)])
    hi = np.concatenate([ub[free], [np.inf], np.full(n_z, np.inf)])
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(rhs))):
        return None
    # one BLAS thread: bvls calls LAPACK's least squares once per active-set step, and
    # waking a BLAS thread pool for each of these small solves costs more than the solve
    with one_blas_thread():
        sol = lsq_linear(A, rhs, bounds=(lo, hi),
                         method="bvls" if A.shape[1] < 400 else "trf")
    x = sol.x
    lam[free] = np.clip(x[:free.size], 0.0, ub[free])
    nu = float(x[free.size])
    zs = x[free.size + 1:]
    # residuals of the three equations with the fitted values
    contrib = zk * lam[None, :]
    res_w = contrib.sum(axis=1) - nu * d
    terms = [float(np.max(np.linalg.norm(contrib, axis=0), initial=0.0)),
             abs(nu) * float(np.linalg.norm(d))]
    ball = 0.0
    pos = 0
    for R, mask in kinked:
        z = zs[pos:pos + R.shape[0]]
        pos += R.shape[0]
        mu = rho * float(lam[mask | glob].sum())
        res_w = res_w - R.T @ z
        zn = float(np.linalg.norm(z))
        ball = max(ball, max(0.0, zn - mu) / max(mu, zn, _TINY) if zn > 0 else 0.0)
        terms.append(max(mu, zn) * float(np.linalg.norm(R, 2)))
    if hard:
        comp = float(np.sum(lam * np.abs(rows - norm_row * eta)))
        obj_scale = max(float(np.sum(lam * rscale)), _TINY)
    else:
        xi = np.maximum(-rows, 0.0)
        comp = float(np.sum(lam * np.maximum(rows, 0.0)) + np.sum((ub - lam) * xi))
        obj_scale = max(float(np.sum(lam * rscale) + np.sum(ub * xi)),
                        float(np.sum(ub * rscale)) * 1e-3, _TINY)
    gap = comp / obj_scale
    lam_size = max(float(lam.sum()), _TINY)
    if kinked:  # first order: the residual over its terms and the dual-norm check
        dual = _ratio(float(np.linalg.norm(res_w)), *terms)
        dual = max(dual, abs(float(bal @ lam)) / lam_size, ball)
        if hard:
            dual = max(dual, abs(float(norm_row @ lam) - 1.0))
    else:
        # second order (see newton_decrement): the Lagrangian's Hessian in (w, b, eta)
        # is rho (mu_x Hess sigma_x + mu_y Hess sigma_y) / rho in w and 0 elsewhere;
        # the tangent space is that of the rows with 0 < lambda < ub and w'd = 1, in
        # the (weighted) coordinates of the fit, whose residual is the gradient
        q = Z.shape[1]
        H = np.zeros((A.shape[0], A.shape[0]))
        for (R, _, _, mask), s_ in zip(sides, (s_pos, s_neg)):
            mu = rho * float(lam[mask | glob].sum())
            if mu > 0:
                H[:q, :q] += mu * hess_norm(R, w, s_)
        lam_fit = x[:free.size]
        inside = (lam_fit > 0) & (lam_fit < ub[free])
        A_t = np.hstack([A[:, :free.size][:, inside], A[:, free.size:free.size + 1]])
        e = A @ np.concatenate([lam_fit, x[free.size:]]) - rhs
        dual = newton_decrement(H, e, A_t) / obj_scale
    return dual, gap


def m4_fixed_rho_certificate(Z: np.ndarray, y: np.ndarray, kept: np.ndarray,
                             R_pos: np.ndarray, R_neg: np.ndarray, d: np.ndarray,
                             rho: float, w: np.ndarray, b: float, *, hard: bool,
                             n_removed: int | None) -> Residuals:
    r"""KKT certificate of :math:`(w, b)` (with :math:`w^\top d = 1`) for the fixed-ρ SOCP.

    Rows :math:`r_k = y_kf_k - \rho\sigma_{y_k}(w)` over the kept points and, with a
    reduction (eq. 4.36), the global row :math:`r_m = 1 - \rho(\sigma_x + \sigma_y)`.
    Separable (the check :math:`F(\rho) = \max\eta` s.t. :math:`r_k \ge \eta`, errata
    S004-A5): :math:`\eta = \min_k r_k`; soft (:math:`h(\rho) = \min\sum\xi_k +
    (N - r)\xi_m` s.t. :math:`r_k + \xi_k \ge 0`, eqs. 4.16–4.18): :math:`\xi = (-r)_+`.
    The multipliers :math:`\lambda \ge 0` of the rows (soft: :math:`\lambda_k \le 1`,
    :math:`\lambda_m \le N - r`, equal to the bound where :math:`\xi > 0`) and
    :math:`\nu` of :math:`w^\top d = 1` are fitted by bounded least squares
    (:func:`scipy.optimize.lsq_linear`) on the rows within a band of their bound to

    .. math::

        \sum_k\lambda_ky_kz_k - \mu_xR_x^\top u_x - \mu_yR_y^\top u_y - \nu d = 0,\quad
        \sum_k\lambda_ky_k = 0,\quad
        \Bigl[\textstyle\sum_k\lambda_k + 2\lambda_m = 1\Bigr]_{\text{separable}},

    with the cone multipliers :math:`\mu_x = \rho(\sum_{k\in x}\lambda_k + \lambda_m)`
    and :math:`u = Rw/\|Rw\|`; where :math:`\|Rw\|` vanishes (a singular class
    covariance: the kink of the cone) :math:`z = \mu u` is fitted freely and
    :math:`\|z\| \le \mu` is checked — the point is checked there, never "not
    checked". ``dual``: the relative residual of these equations plus the dual-norm
    violation; ``gap``: the complementarity :math:`\sum\lambda_k|r_k - \eta|`
    (soft: :math:`\sum\lambda_k(r_k)_+ + \sum(\bar\lambda_k - \lambda_k)\xi_k`) over
    :math:`\sum\lambda_k(|f_k| + \rho\sigma)`; ``primal`` is 0 (every auxiliary
    variable is recomputed from :math:`(w, b)`).
    """
    s_pos, s_neg = float(np.linalg.norm(R_pos @ w)), float(np.linalg.norm(R_neg @ w))
    f = Z @ w + b
    idx = np.flatnonzero(kept)
    yk = y[idx]
    sig = np.where(yk > 0, s_pos, s_neg)
    rows = yk * f[idx] - rho * sig
    # a row's scale is the size of its terms |w'z| + |b| + rho sigma (f = w'z + b cancels
    # at a support point when sigma = 0)
    rscale = np.abs(f[idx] - b) + abs(b) + rho * sig
    reduced = n_removed is not None
    if reduced:
        rows = np.append(rows, 1.0 - rho * (s_pos + s_neg))
        rscale = np.append(rscale, max(1.0, rho * (s_pos + s_neg)))
    n_rows = rows.size
    is_pos = np.append(yk > 0, False) if reduced else yk > 0
    is_neg = np.append(yk < 0, False) if reduced else yk < 0
    glob = np.zeros(n_rows, dtype=bool)
    if reduced:
        glob[-1] = True
    norm_row = np.where(glob, 2.0, 1.0)  # the global row reads r_m >= (t_x + t_y) eta
    if hard:
        eta = float(np.min(rows / norm_row)) if n_rows else 0.0
        ub = np.full(n_rows, np.inf)
    else:
        eta = 0.0
        ub = np.ones(n_rows)
        if reduced:
            ub[-1] = float(n_removed)
    wnorm = float(np.linalg.norm(w))
    sides = []
    for R, s, mask in ((R_pos, s_pos, is_pos), (R_neg, s_neg, is_neg)):
        kink = s <= KINK_RTOL * float(np.linalg.norm(R)) * wnorm
        g = None if kink else (R.T @ (R @ w)) / s
        sides.append((R, kink, g, mask))
    # columns of the w-stationarity for each row's lambda
    zk = np.zeros((Z.shape[1], n_rows))
    zk[:, :idx.size] = (Z[idx] * yk[:, None]).T
    for R, kink, g, mask in sides:
        if not kink:  # -mu R^T u = -rho (sum of the side's lambdas + lambda_m) g
            zk[:, mask | glob] -= rho * g[:, None]
    bal = np.append(yk, 0.0) if reduced else yk.copy()
    weight = 10.0 * max(float(np.max(np.abs(Z), initial=0.0)), _TINY)
    ctx = SimpleNamespace(Z=Z, w=w, d=d, rho=rho, hard=hard, rows=rows, rscale=rscale,
                          norm_row=norm_row, eta=eta, ub=ub, zk=zk, bal=bal, weight=weight,
                          sides=sides, glob=glob, s_pos=s_pos, s_neg=s_neg)
    best: tuple[float, float] | None = None
    seen: set[tuple[int, int]] = set()
    for beta in M4_BAND_ORDER:
        excess = (rows - norm_row * eta) / np.maximum(rscale, _TINY)
        fixed = (excess < -beta) if not hard else np.zeros(n_rows, dtype=bool)
        free = np.flatnonzero(np.abs(excess) <= beta) if not hard else \
            np.flatnonzero(excess <= beta)
        free = free[ub[free] > 0]  # a row of weight 0 (reduced M4, none removed): lambda = 0
        key = (int(np.count_nonzero(fixed)), int(free.size))
        if key in seen or free.size > max(200, 20 * (Z.shape[1] + 2)):
            continue
        seen.add(key)
        fit = _m4_band_fit(ctx, free, fixed)
        if fit is None:
            continue
        dual, gap = fit
        if best is None or max(dual, gap) < max(best):
            best = (dual, gap)
        if max(best) <= M4_EARLY_EXIT:
            break  # far below every certify_tol: another band could lower the number
            # reported, never change the verdict
    if best is None:
        return _recomputed(0.0, math.inf, math.inf)
    return _recomputed(0.0, best[0], best[1])
