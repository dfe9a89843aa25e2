r"""Local Support Vector Regression (LSVR) as a single SOCP (seed 004, ch. 6).

Regression, not classification: data :math:`(x_i, y_i) \in \mathbb R^d \times
\mathbb R`, :math:`i = 1..N`, prediction :math:`f(x) = w^\top x + b` (eq. 6.1;
kernel version :math:`f(x) = \sum_j \mu_j k(x_j, x) + b`, the thesis's ``+ b``).
The program built is the SOCP relaxation (6.13)–(6.15) of the reverse-convex model
(6.2)–(6.3); every solver reports that relaxed value, exact when :math:`NC\epsilon \le 1`.
The model, the local covariances, the cone forms and the kernel program are in the
Notes of :func:`lsvr`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from numbers import Integral
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from scipy.optimize import lsq_linear

from .. import kinds
from .._utils.scaling import feature_scales
from .._utils.threads import one_blas_thread
from .._utils.validation import check_matrix, check_positive
from ..certificates.chance import missing, values_of
from ..certificates.conic import ACTIVE_RTOL, PRIMAL_FLOOR, conic_certificate, rel, residuals
from ..exceptions import ProgramError
from ..kernels import Kernel, make_kernel, psd_factor
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution

__all__ = [
    "local_factors",
    "local_windows",
    "lsvr",
    "lsvr_from_covariances",
    "predict",
]

NEIGHBORHOODS = ("index", "nearest")
KIND = kinds.LSVR
KERNEL_KIND = kinds.LSVR_KERNEL


# -- validation ----------------------------------------------------------------------
def _check_targets(y: object, n_samples: int) -> np.ndarray:
    try:
        arr = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"y must hold real-valued regression targets: {exc}") from exc
    if arr.ndim != 1:
        raise ProgramError(
            f"y must be 1-D (one real target per sample), got shape {arr.shape}"
        )
    if arr.shape[0] != n_samples:
        raise ProgramError(
            f"shape mismatch: X has {n_samples} rows but y has {arr.shape[0]} targets"
        )
    if not np.all(np.isfinite(arr)):
        raise ProgramError("y contains NaN or infinite values")
    return arr


def _check_window(k: object, n_samples: int) -> int:
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise ProgramError(f"k (window half-width) must be a positive integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise ProgramError(f"k (window half-width) must be >= 1, got {k}")
    if 2 * k + 1 > n_samples:
        raise ProgramError(
            f"k={k} needs windows of 2k+1={2 * k + 1} points but there are only "
            f"{n_samples} samples; use k <= {(n_samples - 1) // 2}"
        )
    return k


def _check_eps_C(epsilon: object, C: object) -> tuple[float, float]:
    eps = check_positive(epsilon, "epsilon", allow_zero=True)
    return eps, check_positive(C, "C")


# -- local neighbourhoods ------------------------------------------------------------
def local_windows(n_samples: int, k: int, *, neighborhood: str = "index",
                  X: np.ndarray | None = None, kernel: Kernel | None = None) -> np.ndarray:
    r"""Indices of the :math:`2k+1` points of every local window.

    Parameters
    ----------
    n_samples : int
        Number of points :math:`N` (must be at least :math:`2k+1`).
    k : int
        Window half-width (thesis: :math:`k`; 2k neighbours per point).
    neighborhood : {"index", "nearest"}, default="index"
        ``"index"``: :math:`\{i-k..i+k\}` clamped into :math:`\{0..N-1\}` (see
        the Notes of :func:`lsvr` for the boundary rule). ``"nearest"``: the point
        and its 2k nearest neighbours (needs ``X``).
    X : ndarray of shape (n_samples, n_features), optional
        Inputs for ``"nearest"`` (the Gram matrix if ``kernel`` is precomputed).
    kernel : Kernel, optional
        For ``kernel.name == "precomputed"``, distances are the kernel-induced
        :math:`K_{ii} + K_{jj} - 2K_{ij}`.

    Returns
    -------
    ndarray of shape (n_samples, 2k+1), dtype int
        Row ``i`` lists the window of point ``i`` in increasing order.
    """
    m = 2 * k + 1
    if neighborhood == "index":
        start = np.clip(np.arange(n_samples) - k, 0, n_samples - m)
        return start[:, None] + np.arange(m)[None, :]
    if neighborhood != "nearest":
        raise ProgramError(
            f"neighborhood must be one of {', '.join(NEIGHBORHOODS)}, got {neighborhood!r}"
        )
    if X is None:
        raise ProgramError("neighborhood='nearest' needs the inputs X")
    if kernel is not None and kernel.name == "precomputed":
        diag = np.diag(X)
        dist = diag[:, None] + diag[None, :] - 2.0 * X
    else:
        sq = np.einsum("ij,ij->i", X, X)
        dist = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    dist = np.maximum(dist, 0.0)
    np.fill_diagonal(dist, -1.0)  # the point itself always belongs to its window
    order = np.argsort(dist, axis=1, kind="stable")[:, :m]
    return np.sort(order, axis=1)


def local_factors(Z: np.ndarray, windows: np.ndarray) -> np.ndarray:
    r"""Stacked factors :math:`R_i` with :math:`R_i^\top R_i = \Sigma_i`.

    :math:`R_i = m^{-1/2}(Z_{W_i} - \mathbf 1\bar z_i^\top)` (the 1/m-normalised
    local covariance of section 6.1.2). When the feature dimension ``q`` is
    below the window size ``m``, :math:`R_i` is replaced by the triangular
    factor of its QR decomposition (same :math:`\|R_i w\|`, smaller cones).

    Returns
    -------
    ndarray of shape (n_samples, min(m, q), q)
    """
    m = windows.shape[1]
    blocks = Z[windows]  # (N, m, q)
    R = (blocks - blocks.mean(axis=1, keepdims=True)) / np.sqrt(m)
    if Z.shape[1] < m:
        R = np.linalg.qr(R, mode="r")
    return np.ascontiguousarray(R)


def _eigenbasis(K: np.ndarray, rtol: float) -> dict[str, np.ndarray]:
    r"""Well-conditioned features for the kernel form.

    ``basis`` :math:`U_r` and ``eigenvalues`` :math:`\lambda_r` keep the eigenpairs
    of ``K`` with :math:`\lambda > \texttt{rtol}\,\lambda_{\max}` (the threshold of
    :func:`conicml.kernels.psd_factor`). ``features`` is an orthonormal basis of
    the centred span :math:`(I - \mathbf 1\mathbf 1^\top/N)\,U_r`, dropping
    directions that are within :math:`10^{-8}` of the constant vector: together
    with :math:`b` it spans the same fitted values
    :math:`\{U_r a + \beta\mathbf 1\}`, but :math:`b` stays identifiable when an
    RBF eigenbasis almost contains the constant vector.
    """
    F = psd_factor(K, "eigen", rtol=rtol)  # U_r Lambda_r^{1/2}; validates symmetry / PSD
    lam = np.einsum("ij,ij->j", F, F)
    if not np.any(lam > 0):
        raise ProgramError("the Gram matrix is zero: the kernel LSVR has no features")
    U = F / np.sqrt(lam)
    Uc, sv, _ = np.linalg.svd(U - U.mean(axis=0), full_matrices=False)
    keep = sv > 1e-8
    if not np.any(keep):
        raise ProgramError(
            "the kernel only represents constant functions on these inputs (its Gram "
            "matrix is constant up to factor_rtol); use another kernel or gamma"
        )
    V = Uc[:, keep]
    # orthonormal complement of span(V) (it contains the constant vector): g = V v
    # <=> complement^T g = 0, the sparse-friendly way the kernel program states it
    Q = np.linalg.qr(V, mode="complete")[0]
    return {"features": V, "complement": Q[:, V.shape[1]:], "basis": U, "eigenvalues": lam}


def _factors_from_covariances(covariances: object, n_samples: int,
                              n_features: int) -> np.ndarray:
    try:
        S = np.asarray(covariances, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"covariances must be a numeric array: {exc}") from exc
    if S.shape == (n_features, n_features):
        S = np.broadcast_to(S, (n_samples, n_features, n_features))
    if S.shape != (n_samples, n_features, n_features):
        raise ProgramError(
            f"covariances must have shape ({n_features}, {n_features}) (one shared matrix, "
            f"eq. 6.4) or ({n_samples}, {n_features}, {n_features}) (one per sample), "
            f"got {S.shape}"
        )
    if not np.all(np.isfinite(S)):
        raise ProgramError("covariances contain NaN or infinite values")
    factors = np.zeros((n_samples, n_features, n_features))
    for i in range(n_samples):
        L = psd_factor(S[i], "eigen")  # L L^T = S_i, so ||L^T w|| = sqrt(w^T S_i w)
        factors[i, : L.shape[1], :] = L.T
    return factors


# -- the conic program ---------------------------------------------------------------
def _dense_is_smaller(shape: tuple[int, int], m: int,
                      complement: np.ndarray | None) -> bool:
    """Whether dense factor cones have fewer nonzeros than the window (g) form.

    Dense: ``N min(m, q) q`` cone entries. Window form: ``N m^2`` cone entries plus
    the ``"features"`` constraint, ``N q`` (primal ``g = X w``) or ``N (N - q)``
    (kernel: the complement of span V).
    """
    n, q = shape
    dense = n * min(m, q) * q
    link = n * q if complement is None else complement.size
    return dense <= n * m * m + link


def _window_centering(windows: np.ndarray, n: int) -> sp.csr_matrix:
    r"""Sparse :math:`(Nm \times N)` matrix whose rows :math:`im..im+m-1` map
    :math:`g` to :math:`m^{-1/2}(g_{W_i} - \bar g_{W_i})`."""
    n_win, m = windows.shape
    rows = np.repeat(np.arange(n_win * m), m)
    cols = np.repeat(windows, m, axis=0).ravel()
    vals = np.tile(np.eye(m) - 1.0 / m, (n_win, 1)).ravel() / np.sqrt(m)
    return sp.csr_matrix((vals, (rows, cols)), shape=(n_win * m, n))


def _build(data: Mapping[str, Any]) -> ConicForm:
    Z, y, R = data["features"], data["y"], data["factors"]
    eps, C = data["epsilon"], data["C"]
    n, q = Z.shape
    name = "w" if data["kind"] == KIND else "v"
    w = cp.Variable(q, name=name)
    b = cp.Variable(name="b")
    t = cp.Variable(n, name="t")
    xi = cp.Variable(n, name="xi")
    xi_star = cp.Variable(n, name="xi_star")
    variables = {name: w, "b": b, "t": t, "xi": xi, "xi_star": xi_star}
    constraints: dict[str, cp.Constraint] = {}
    if R is not None:
        # dense factors: column i of `local` is R_i w (row i*p + j of the stack is R_i[j])
        p = R.shape[1]
        f = Z @ w + b
        local = cp.reshape(R.reshape(n * p, q) @ w, (p, n), order="F")
    else:
        # windows of the fitted values g = Z w: R_i w = m^{-1/2}(g_{W_i} - mean), so
        # the cones are sparse (m^2 entries each) instead of m x q dense blocks
        m = data["windows"].shape[1]
        g = cp.Variable(n, name="g")
        variables["g"] = g
        if data["kind"] == KIND:
            constraints["features"] = g == Z @ w
        else:
            # kernel form: g in span(V) stated by its complement (g = V v, v = V^T g);
            # with a full-rank Gram matrix this is the single row sum(g) = 0
            del variables[name]
            constraints["features"] = data["complement"].T @ g == 0
        f = g + b
        local = cp.reshape(_window_centering(data["windows"], n) @ g, (m, n), order="F")
    constraints.update({
        "upper": y - f <= eps * t + xi,  # (6.14), relaxed: sigma_i(w) -> t_i
        "lower": f - y <= eps * t + xi_star,
        "local": cp.norm(local, 2, axis=0) <= t,  # (6.15): ||R_i w|| <= t_i
        "xi_nonneg": xi >= 0,
        "xi_star_nonneg": xi_star >= 0,
    })
    objective = cp.sum(t) / n + C * cp.sum(xi + xi_star)  # (6.13)
    problem = cp.Problem(cp.Minimize(objective), list(constraints.values()))
    return ConicForm(problem, variables, constraints)


def _local_std(data: Mapping[str, Any], coef: np.ndarray, g: np.ndarray) -> np.ndarray:
    """sigma_i(w) = sqrt(w^T Sigma_i w), from the factors or from windows of g = Z w."""
    if data["factors"] is not None:
        return np.linalg.norm(data["factors"] @ coef, axis=1)
    return g[data["windows"]].std(axis=1)


def _relaxed_value(sigma: np.ndarray, abs_res: np.ndarray, eps: float, C: float) -> float:
    r"""Relaxed objective at fixed :math:`(w, b)`, minimised over :math:`t, \xi, \xi^*`.

    Per point, :math:`\min_{t \ge \sigma_i} t/N + C(|r_i| - \epsilon t)_+` is
    convex piecewise linear in :math:`t` with its kink at :math:`|r_i|/\epsilon`,
    so the minimum is at :math:`t = \sigma_i` or :math:`t = \max(\sigma_i,
    |r_i|/\epsilon)`. The value is that of a feasible point, hence an upper bound
    on the relaxed optimum that does not depend on how tightly the solver
    pushed :math:`t` onto its bound.
    """
    n = sigma.size
    at_sigma = sigma / n + C * np.maximum(abs_res - eps * sigma, 0.0)
    if eps == 0.0:
        return float(np.sum(at_sigma))
    t_kink = np.maximum(sigma, abs_res / eps)
    return float(np.sum(np.minimum(at_sigma, t_kink / n)))


def _support_tolerance(y: np.ndarray) -> float:
    # interior-point points sit ~1e-8 inside their constraints; 1e-6 of the target
    # scale separates "on the tube" from "strictly inside" robustly.
    return 1e-6 * max(1.0, float(np.max(np.abs(y), initial=0.0)))


def _decode(data: Mapping[str, Any], solution: Solution) -> dict:
    kind = data["kind"]
    require_solution(solution, kind)
    Z, y = data["features"], data["y"]
    eps, C = data["epsilon"], data["C"]
    n = y.size
    if kind == KIND or "v" in solution.values:
        coef = np.asarray(solution.values["w" if kind == KIND else "v"], dtype=float)
    else:  # kernel program in the g-form: v = V^T g
        coef = Z.T @ np.asarray(solution.values["g"], dtype=float)
    b = float(solution.values["b"])
    t = np.asarray(solution.values["t"], dtype=float)
    g = Z @ coef
    fitted = g + b
    residual = y - fitted
    local_std = _local_std(data, coef, g)
    original = float(np.sum(local_std) / n
                     + C * np.sum(np.maximum(np.abs(residual) - eps * local_std, 0.0)))
    tube = eps * t
    model: dict[str, Any] = {
        "b": b,
        "t": t,
        "xi": np.asarray(solution.values["xi"], dtype=float),
        "xi_star": np.asarray(solution.values["xi_star"], dtype=float),
        "fitted": fitted,
        "residual": residual,
        "local_std": local_std,
        "tube": tube,
        "support": np.flatnonzero(np.abs(residual) >= tube - _support_tolerance(y)),
        "objective_relaxed": _relaxed_value(local_std, np.abs(residual), eps, C),
        "objective_original": original,
        "relaxation_exact": bool(n * C * eps <= 1.0),
    }
    if kind == KIND:
        scale = data.get("feature_scale")  # internal coordinates -> the user's features
        model["w"] = coef if scale is None else coef / scale
    else:
        # split the fitted values into K mu + b with K mu = U_r a (minimum-norm [a; b]);
        # mu = U_r Lambda_r^{-1} a is the minimum-norm solution of K mu = U_r a
        U = data["basis"]
        ab = np.linalg.lstsq(np.column_stack([U, np.ones(n)]), fitted, rcond=1e-10)[0]
        mu = U @ (ab[:-1] / data["eigenvalues"])
        model["b"] = float(ab[-1])
        model["v"] = coef
        model["dual_coef"] = mu
        if data["kernel"].name == "linear":
            model["w"] = data["X"].T @ mu
    return model


def _window_adjoint(windows: np.ndarray, unit: np.ndarray, vec: np.ndarray,
                    n: int) -> np.ndarray:
    r""":math:`\sum_i v_i P_i^\top u_i` for centred unit vectors :math:`u_i` of the windows
    (:math:`P_i` the centring map of :func:`_window_centering`; :math:`P_i^\top u_i =
    m^{-1/2}` times :math:`u_i` scattered onto the window, as :math:`u_i` is centred)."""
    out = np.zeros(n)
    np.add.at(out, windows, (vec[:, None] * unit) / np.sqrt(windows.shape[1]))
    return out


@dataclasses.dataclass
class _Multipliers:
    """A relaxed LSVR point's KKT multipliers, recovered from the program's structure.

    What :func:`_certify` measured of the point (its primal blocks, the unit vectors of its
    cone arguments) and the recovery of the multipliers on its nearly active rows.
    """

    data: Mapping[str, Any]
    F: np.ndarray
    n: int
    eps: float
    C: float
    unit: np.ndarray
    win: np.ndarray | None  # the windows (window form) ...
    m: int | None
    Gfull: np.ndarray | None  # ... or the cone rows' gradients G_i = R_i^T u_i
    blocks_primal: dict
    block_den: dict
    floor: float
    resid_up: np.ndarray
    resid_lo: np.ndarray
    cone: np.ndarray
    xi: np.ndarray
    xs: np.ndarray
    f: float
    fterms: float
    xnorm: float
    reported: float

    @property
    def window_form(self) -> bool:
        return self.Gfull is None

    @property
    def primal_kind(self) -> bool:
        return self.data["kind"] == KIND

    def Gt(self, vec: np.ndarray) -> np.ndarray:
        """sum_i vec_i G_i (the features' part of the cone rows' gradients)."""
        F, n, win, unit = self.F, self.n, self.win, self.unit
        if self.window_form:
            return F.T @ _window_adjoint(win, unit, vec, n)
        return self.Gfull.T @ vec

    def G_rows(self, idx: np.ndarray) -> np.ndarray:
        """The rows ``idx`` of G (the cone rows' gradients in the features)."""
        F, win, unit = self.F, self.win, self.unit
        if self.window_form:
            return np.einsum("km,kmq->kq", unit[idx], F[win[idx]]) / np.sqrt(self.m)
        return self.Gfull[idx]

    # stationarity in (features, b) with lambda = 1/N - eps (alpha + alpha*):
    # -(F + eps G)^T alpha + (F - eps G)^T alpha* + G^T 1/N = 0,  -1^T alpha + 1^T alpha* = 0
    def stationarity(self, al: np.ndarray, als: np.ndarray) -> np.ndarray:
        """The stationarity residual in (features, b) at the multipliers (al, als)."""
        F, n, eps, Gt = self.F, self.n, self.eps, self.Gt
        lam = 1.0 / n - eps * (al + als)
        return np.r_[-F.T @ (al - als) + Gt(lam), -np.sum(al) + np.sum(als)]

    def recover(self, tol: float) -> tuple[float, float]:
        """(dual, gap) of the multipliers recovered on the rows active within ``tol``."""
        data, F, n, eps, C = self.data, self.F, self.n, self.eps, self.C
        window_form, primal_kind, win, unit = (self.window_form, self.primal_kind,
                                               self.win, self.unit)
        blocks_primal, block_den, floor = self.blocks_primal, self.block_den, self.floor
        resid_up, resid_lo, cone = self.resid_up, self.resid_lo, self.cone
        xi, xs, f, fterms = self.xi, self.xs, self.f, self.fterms
        xnorm, reported = self.xnorm, self.reported
        stationarity, G_rows, Gt = self.stationarity, self.G_rows, self.Gt
        active = {name: (viol >= -tol * block_den[name])
                  for name, (viol, _, _) in blocks_primal.items() if name != "features"}
        cap = C if eps == 0.0 else min(C, 1.0 / (n * eps))
        # alpha (upper) and alpha* (lower): 0 off the active rows, C with a positive slack
        alpha = np.where(active["upper"] & ~active["xi_nonneg"], C, 0.0)
        alpha_s = np.where(active["lower"] & ~active["xi_star_nonneg"], C, 0.0)
        free_a = active["upper"] & active["xi_nonneg"]
        free_s = active["lower"] & active["xi_star_nonneg"]
        if eps > 0.0:  # an inactive cone has lambda = 0: eps (alpha + alpha*) = 1/N
            off = ~active["local"]
            one_a, one_s = off & free_a & ~free_s, off & free_s & ~free_a
            alpha[one_a] = np.clip(1.0 / (n * eps) - alpha_s[one_a], 0.0, C)
            alpha_s[one_s] = np.clip(1.0 / (n * eps) - alpha[one_s], 0.0, C)
            free_a &= ~one_a
            free_s &= ~one_s
        ia, is_ = np.flatnonzero(free_a), np.flatnonzero(free_s)
        if ia.size or is_.size:
            base = stationarity(alpha, alpha_s)  # the fixed multipliers (free ones at 0)
            Ga, Gs = G_rows(ia), G_rows(is_)
            A = np.hstack([np.vstack([-(F[ia] + eps * Ga).T, -np.ones((1, ia.size))]),
                           np.vstack([(F[is_] - eps * Gs).T, np.ones((1, is_.size))])])
            # lambda >= 0 as a bound where only one side is free (both: checked below)
            both = free_a & free_s
            ub_a = np.where(both[ia], cap, np.minimum(
                C, (1.0 / n - eps * alpha_s[ia]) / eps if eps > 0 else C))
            ub_s = np.where(both[is_], cap, np.minimum(
                C, (1.0 / n - eps * alpha[is_]) / eps if eps > 0 else C))
            ub = np.maximum(np.r_[ub_a, ub_s], 0.0)
            with one_blas_thread():  # small dense least squares: threads only contend
                fit = lsq_linear(A, -base, bounds=(np.zeros(ub.size), ub + 1e-300),
                                 method="bvls")
            alpha[ia] = np.clip(fit.x[:ia.size], 0.0, ub_a)
            alpha_s[is_] = np.clip(fit.x[ia.size:], 0.0, ub_s)
        lam = 1.0 / n - eps * (alpha + alpha_s)
        beta, beta_s = C - alpha, C - alpha_s
        resid = stationarity(alpha, alpha_s)
        # the Lagrangian's terms: the objective's gradient and every block's J^T multiplier
        delta = alpha - alpha_s
        g_lam = Gt(lam)
        terms = [max(1.0 / n, C),
                 float(np.max(np.abs(F.T @ alpha), initial=0.0)), float(np.sum(alpha)),
                 float(np.max(np.abs(F.T @ alpha_s), initial=0.0)), float(np.sum(alpha_s)),
                 float(np.max(np.abs(g_lam), initial=0.0)),
                 float(np.max(np.abs(lam), initial=0.0)),
                 float(np.max(np.abs(beta), initial=0.0)),
                 float(np.max(np.abs(beta_s), initial=0.0))]
        den = max(max(terms), abs(f) / xnorm if xnorm > 0 else 0.0)
        dual = rel(float(np.max(np.abs(resid), initial=0.0)), den)
        for lam_block in (alpha, alpha_s, lam, beta, beta_s):
            dual = max(dual, rel(float(np.max(-lam_block, initial=0.0)),
                                 float(np.max(np.abs(lam_block), initial=0.0))))
        comp = float(np.sum(np.abs(alpha * resid_up)) + np.sum(np.abs(alpha_s * resid_lo))
                     + np.sum(np.abs(lam * cone)) + np.sum(np.abs(beta * xi))
                     + np.sum(np.abs(beta_s * xs)))
        size = abs(f)
        for name, mult in (("upper", alpha), ("lower", alpha_s), ("local", lam),
                           ("xi_nonneg", beta), ("xi_star_nonneg", beta_s)):
            size += float(np.sum(np.abs(mult) * np.maximum(blocks_primal[name][1], floor)))
        if window_form:  # the "features" rows' multiplier, fixed by the stationarity in g
            nu = delta - _window_adjoint(win, unit, lam, n)
            if not primal_kind:
                nu = data["complement"].T @ nu
            size += float(np.sum(np.abs(nu) * np.maximum(blocks_primal["features"][1], floor)))
        obj_gap = rel(reported - f, abs(f), max(size, fterms)) if math.isfinite(reported) \
            else math.inf
        return dual, max(rel(comp, size), obj_gap)


def _certify(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""KKT certificate of a relaxed LSVR point from the program's structure, in O(N(m + q)).

    The same three numbers as the generic certificate
    (:func:`conicml.certificates.conic.conic_certificate`) on the program's cvxpy problem,
    with the multipliers recovered by the structure of (6.13)–(6.15) instead of one dense
    least-squares fit over every constraint. With :math:`\alpha_i, \alpha_i^*` the
    multipliers of the two tube rows, :math:`\lambda_i` of the cone
    :math:`\|a_i\| \le t_i` (:math:`a_i = R_iw`, or the centred window of :math:`g`),
    :math:`\beta_i, \beta_i^*` of :math:`\xi_i, \xi_i^* \ge 0`, the stationarity in
    :math:`t_i, \xi_i, \xi_i^*` fixes :math:`\lambda_i = 1/N - \epsilon(\alpha_i +
    \alpha_i^*)`, :math:`\beta_i = C - \alpha_i`, :math:`\beta_i^* = C - \alpha_i^*`
    (exactly), and the one in :math:`g` fixes the multiplier of the ``"features"`` rows.
    What remains is the stationarity in the features and in :math:`b`,

    .. math::

        -F^\top\delta + \sum_i \lambda_i G_i = 0, \qquad \mathbf 1^\top\delta = 0,
        \qquad \delta = \alpha - \alpha^*,\ G_i = \nabla_w\|a_i\| ,

    :math:`q + 1` equations. Complementarity fixes most multipliers (a tube row that is
    not nearly active has :math:`\alpha_i = 0`; a positive slack, :math:`\alpha_i = C`;
    a cone that is not nearly active, :math:`\lambda_i = 0`); the others are fitted by a
    bounded least-squares problem over :math:`q + 1` rows (``lsq_linear``'s BVLS, an
    exact active-set method) with :math:`0 \le \alpha_i \le C` and
    :math:`\lambda_i \ge 0`. ``dual`` is the remaining stationarity residual relative
    to its terms plus any sign violation; ``gap`` the complementarity of all recovered
    multipliers relative to the Lagrangian's terms, and the mismatch between the
    reported and the recomputed objective. "Nearly active" is the generic certificate's
    ``ACTIVE_RTOL`` of a row's scale, or ten times it (an interior-point point leaves small
    multipliers just outside the first set); the better of the two recoveries is
    reported, as every residual of either is measured. A cone whose argument vanishes (a
    kink, where the multiplier is a subgradient) is left to the generic certificate.
    """
    window_form = data["factors"] is None
    primal_kind = data["kind"] == KIND
    names = ["b", "t", "xi", "xi_star"]
    if primal_kind or not window_form:
        names.append("w" if primal_kind else "v")
    if window_form:
        names.append("g")
    got = values_of(solution, *names)
    n = data["y"].size
    if got is None:
        return missing()
    vals = dict(zip(names, got, strict=True))
    F, y = data["features"], data["y"]
    q = F.shape[1]
    b_arr, t, xi, xs = vals["b"], vals["t"], vals["xi"], vals["xi_star"]
    coef = vals.get("w", vals.get("v"))
    if (b_arr.size != 1 or t.size != n or xi.size != n or xs.size != n
            or (coef is not None and coef.size != q)
            or (window_form and vals["g"].size != n)):
        return missing()
    b = float(b_arr[0])
    eps, C = float(data["epsilon"]), float(data["C"])

    # cone arguments a_i, their norms and unit vectors; G_i = grad_w ||a_i|| = R_i^T u_i
    win = m = Gfull = None  # the windows (window form) or the gradients G (factors)
    if window_form:
        g = vals["g"]
        win = data["windows"]
        m = win.shape[1]
        blocks = g[win]
        a = (blocks - blocks.mean(axis=1, keepdims=True)) / np.sqrt(m)  # (N, m)
        f_lin, f_terms = g, np.abs(g)
    else:
        R = data["factors"]  # (N, p, q)
        a = np.einsum("npq,q->np", R, coef)
        f_lin = F @ coef
        f_terms = np.abs(F) @ np.abs(coef)
    c = np.linalg.norm(a, axis=1)
    fitted = f_lin + b
    resid_up = y - fitted - eps * t - xi  # "upper" <= 0
    resid_lo = fitted - y - eps * t - xs  # "lower" <= 0
    cone = c - t  # "local" <= 0
    row_terms = f_terms + abs(b) + eps * np.abs(t)
    blocks_primal = {
        "upper": (resid_up, np.maximum.reduce([np.abs(y - fitted), np.abs(eps * t + xi),
                                                row_terms + np.abs(xi)]), False),
        "lower": (resid_lo, np.maximum.reduce([np.abs(fitted - y), np.abs(eps * t + xs),
                                                row_terms + np.abs(xs)]), False),
        "xi_nonneg": (-xi, np.abs(xi), False),
        "xi_star_nonneg": (-xs, np.abs(xs), False),
    }
    if window_form:
        # |grad ||a_i|| |^T |g| = sum_j |u_ij| |g_{W_ij}| / sqrt(m) (u is centred)
        with np.errstate(invalid="ignore", divide="ignore"):
            unit = np.where(c[:, None] > 0, a / c[:, None], 0.0)
        cone_terms = np.sum(np.abs(unit) * np.abs(g[win]), axis=1) / np.sqrt(m) + np.abs(t)
        if primal_kind:
            zw = F @ coef
            link = g - zw
            link_scale = np.maximum.reduce([np.abs(g), np.abs(zw),
                                            np.abs(g) + np.abs(F) @ np.abs(coef)])
        else:
            Q = data["complement"]
            link = Q.T @ g
            link_scale = np.maximum(np.abs(link), np.abs(Q.T) @ np.abs(g))
        blocks_primal["features"] = (link, link_scale, True)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            unit = np.where(c[:, None] > 0, a / c[:, None], 0.0)
        Gfull = np.einsum("np,npq->nq", unit, R)
        cone_terms = np.abs(Gfull) @ np.abs(coef) + np.abs(t)
    blocks_primal["local"] = (cone, np.maximum.reduce([c, np.abs(t), cone_terms]), False)
    global_scale = max(max(float(np.max(s, initial=0.0)) for _, s, _ in blocks_primal.values()),
                       np.finfo(float).tiny)
    floor = PRIMAL_FLOOR * global_scale
    primal = 0.0
    block_den = {}
    for name, (viol, scale, eq) in blocks_primal.items():
        v = np.abs(viol) if eq else np.maximum(viol, 0.0)
        block_den[name] = max(float(np.max(scale, initial=0.0)), floor)
        primal = max(primal, float(np.max(v, initial=0.0)) / block_den[name])

    # a vanishing cone argument is a kink: its multiplier is a subgradient, not fitted here
    if np.any(c <= 1e-7 * global_scale):
        return conic_certificate(data, solution, build=_build)

    reported = float(solution.objective)
    f = float(np.sum(t) / n + C * np.sum(xi + xs))
    fterms = float(np.sum(np.abs(t)) / n + C * np.sum(np.abs(xi) + np.abs(xs)))
    parts = [t, xi, xs, b_arr] + ([coef] if coef is not None else []) + (
        [vals["g"]] if window_form else [])
    xnorm = max(float(np.max(np.abs(p), initial=0.0)) for p in parts)

    multipliers = _Multipliers(data, F, n, eps, C, unit, win, m, Gfull, blocks_primal,
                               block_den, floor, resid_up, resid_lo, cone, xi, xs, f, fterms,
                               xnorm, reported)

    # the rows "nearly active" within ACTIVE_RTOL of their scale (the generic certificate's
    # rule) and within ten times that: an interior-point point leaves small multipliers on
    # rows just outside the first set; any recovered multipliers certify the point, as
    # every residual of theirs is measured, so the better of the two candidates is kept
    dual, gap = multipliers.recover(ACTIVE_RTOL)
    if max(dual, gap) > 1e-9:
        dual2, gap2 = multipliers.recover(10.0 * ACTIVE_RTOL)
        if max(dual2, gap2) < max(dual, gap):
            dual, gap = dual2, gap2
    return residuals(primal, dual, gap)


def _program(data: dict, description: str) -> Program:
    return Program(data["kind"], data, build=_build, decode=_decode,
                   certify=_certify,
                   default_solver="clarabel", description=description)


def lsvr(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float = 0.0,
    C: float = 1.0,
    k: int = 2,
    *,
    neighborhood: str = "index",
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    form: str | None = None,
    factor_rtol: float = 1e-12,
) -> Program:
    r"""Relaxed Local Support Vector Regression, eqs. (6.13)–(6.15) / Theorem 19.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training inputs, in the order that defines ``neighborhood="index"``
        windows (time order for a series); for ``kernel="precomputed"`` the
        (n, n) Gram matrix.
    y : ndarray of shape (n_samples,)
        Real-valued targets.
    epsilon : float, default=0.0
        Tube factor :math:`\epsilon \ge 0` (local tube half-width
        :math:`\epsilon t_i`).
    C : float, default=1.0
        Cost of a unit of slack (> 0). Irrelevant when :math:`NC\epsilon > 1`.
    k : int, default=2
        Window half-width: local covariances over :math:`2k+1` points
        (:math:`1 \le k \le (N-1)/2`; the thesis uses :math:`k = 2`).
    neighborhood : {"index", "nearest"}, default="index"
        How windows are formed (Notes; boundary windows are clamped).
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        Kernel of the kernel LSVR (Theorem 19); parameters as in
        :class:`sklearn.svm.SVR` (the thesis's RBF :math:`e^{-\beta\|u-v\|^2}`
        is ``gamma=beta``).
    gamma, degree, coef0
        Kernel hyper-parameters.
    form : {"primal", "kernel"}, optional
        ``"primal"`` (kind ``"socp.lsvr"``, variable ``w``; linear kernel
        only) or ``"kernel"`` (kind ``"socp.lsvr.kernel"``). Default:
        ``"primal"`` for the linear kernel, ``"kernel"`` otherwise.
    factor_rtol : float, default=1e-12
        Relative eigenvalue threshold of the Gram matrix's eigen-decomposition
        (kernel form): eigenvalues below ``factor_rtol`` times the largest are
        dropped (numerical rank). The default keeps the
        model as written; a larger value (e.g. 1e-4) restricts the fitted
        values to the leading eigen-directions of :math:`K`, a spectral
        regulariser that is *not* in the thesis (see Notes).

    Returns
    -------
    Program
        Objective: the relaxed value :math:`\frac1N\sum t_i + C\sum(\xi_i+\xi_i^*)`.
        ``decode`` gives ``"w"`` (primal form, and kernel form with the linear
        kernel), ``"b"`` (:math:`f(x) = w^\top x + b`), or for the kernel form
        ``"dual_coef"`` :math:`\mu` (:math:`f(x) = \sum_j\mu_j k(x_j, x) + b`)
        and ``"v"``; plus ``"t"``, ``"xi"``, ``"xi_star"``, ``"fitted"``,
        ``"residual"``, ``"local_std"`` :math:`\sigma_i(w)`, ``"tube"``
        :math:`\epsilon t_i`, ``"support"`` (points on or outside their local
        tube), ``"objective_relaxed"`` (the relaxed objective at the returned
        :math:`(w, b)` with :math:`t, \xi, \xi^*` set optimally: an upper bound on
        the relaxed optimum), ``"objective_original"`` (eq. 6.2 at the returned
        :math:`(w, b)`; the relaxed optimum is a lower bound on the original one)
        and ``"relaxation_exact"``
        (:math:`NC\epsilon \le 1`). Use :func:`predict` for new inputs.

    Raises
    ------
    ProgramError
        Non-finite or mis-shaped X / y, epsilon < 0, C <= 0, k not a positive
        integer or 2k+1 > n_samples, unknown neighborhood / kernel / form.

    Notes
    -----
    Off-sample predictions of the kernel LSVR are ill-posed for a strictly
    positive definite kernel: the objective depends on :math:`\mu` only
    through the fitted values :math:`K\mu` at the training points, nothing
    penalises the RKHS norm :math:`\mu^\top K\mu`, so the model is "choose
    fitted values, then kernel-interpolate them". Measured with conicml
    (``benchmarks/lsvr_study.py``): on the thesis's sinc set (N = 50,
    RBF ``gamma=1``, C = 100, ε = 0.2) the training MSE against the noise-free
    sinc stays between 1.6e-4 and 3.2e-4 for ``factor_rtol`` from 1e-12 to 1e-4, while the
    median :math:`\max|\mu|` falls from 2e8 to 4 and the MSE on a 601-point
    grid from 4e-3 to 2e-4; on a 4-input time series (N = 296, RBF) the test
    MSE is ~1e4 at ``factor_rtol=1e-12`` and comparable to SVR's at 1e-2.

    **Model (eqs. 6.2–6.3).** With a local covariance :math:`\Sigma_i` per point
    and :math:`\sigma_i(w) = \sqrt{w^\top\Sigma_i w}` (the local volatility of
    :math:`f` around :math:`x_i`),

    .. math::

        \min_{w,b,\xi,\xi^*}\ \frac1N\sum_i \sigma_i(w) + C\sum_i(\xi_i + \xi_i^*)
        \quad\text{s.t.}\quad |y_i - f(x_i)| \le \epsilon\,\sigma_i(w) + \text{slack},

    a tube whose half-width :math:`\epsilon\sigma_i(w)` varies from point to point.
    The constraints are reverse-convex, so the thesis solves the **relaxation**
    of eqs. (6.13)–(6.15), in which :math:`\sigma_i(w)` is replaced by an upper
    bound :math:`t_i` (section 6.4; this is what this module builds, kind
    ``"socp.lsvr"``):

    .. math::

        \min_{w,b,t,\xi,\xi^*}\ \frac1N\sum_i t_i + C\sum_i(\xi_i + \xi_i^*)
        \quad\text{s.t.}\quad
        \begin{aligned}[t]
          & y_i - (w^\top x_i + b) \le \epsilon t_i + \xi_i, \\
          & (w^\top x_i + b) - y_i \le \epsilon t_i + \xi_i^*, \\
          & \|R_i w\|_2 \le t_i, \qquad \xi_i,\ \xi_i^* \ge 0,
        \end{aligned}

    with :math:`R_i^\top R_i = \Sigma_i` (``t_i >= 0`` is implied by the cone).
    The program's objective — the same for every solver — is this relaxed value.

    **Local covariances (section 6.1.2).** :math:`\Sigma_i` is the 1/m-normalised
    covariance of the :math:`m = 2k+1` points of a window :math:`W_i` around
    :math:`x_i` (the point and "the 2k data points closest to it"), so
    :math:`R_i = m^{-1/2}(X_{W_i} - \mathbf 1\bar x_i^\top)`. Windows
    (``neighborhood``):

    * ``"index"`` (default; the thesis's time series): :math:`W_i = \{i-k..i+k\}`.
      *Boundary rule* (the thesis leaves it open, errata S004-L1): the window is
      **clamped** to :math:`\{s..s+2k\}` with :math:`s = \min(\max(i-k, 0), N-2k-1)`,
      i.e. the :math:`2k` points closest to :math:`i` in index distance (ties to the
      inner side). Every window therefore has exactly :math:`2k+1` points, the
      normalisation :math:`1/(2k+1)` of Theorem 19 holds for every :math:`i`, and
      :math:`N \ge 2k+1` is required.
    * ``"nearest"``: the point and its :math:`2k` nearest neighbours in Euclidean
      distance of the inputs (kernel-induced distance for ``kernel="precomputed"``),
      ties broken by index — for unordered data such as the thesis's sinc set.

    **Cone forms.** The cones use dense, QR-compressed factors
    (:func:`local_factors`) when that has fewer nonzeros (always when the feature
    dimension :math:`q` is below :math:`m`). Otherwise an auxiliary variable
    :math:`g` (the fitted values minus :math:`b`; constraint ``"features"``:
    :math:`g = Xw`, or for the kernel form :math:`g \in \operatorname{span}V`) is
    introduced and each cone takes the centred window
    :math:`m^{-1/2}(g_{W_i} - \bar g_{W_i})` directly — :math:`m^2` nonzeros per
    cone instead of :math:`mq`, which keeps a full-rank kernel program
    (:math:`q` close to :math:`N`) fast. Same optimum, same objective.

    **Facts the tests check** (derived for conicml, [D]):

    * Fixing :math:`(w, b)` and minimising over :math:`t_i \ge \sigma_i`, the
      per-point cost :math:`t_i/N + C(|r_i| - \epsilon t_i)_+` has slope
      :math:`1/N - C\epsilon` below :math:`|r_i|/\epsilon`. Hence for
      :math:`NC\epsilon \le 1` the relaxation is **exact** at every :math:`(w, b)`
      (:math:`t_i = \sigma_i(w)`; the original eq.-6.2 problem is then convex and
      has the same optimum). For :math:`NC\epsilon > 1` all slacks vanish,
      :math:`t_i = \max(\sigma_i, |r_i|/\epsilon)` (above :math:`\sigma_i` at every
      point outside its own tube) and the solution **does not depend on C**
      (errata S004-L2; the thesis's sinc runs, N = 50, C = 100, ε ≥ 0.2, are there).
      ``decode`` reports both objectives and ``"relaxation_exact"``.
    * :math:`\Sigma_i = 0` for all :math:`i`: least-absolute-deviation regression,
      value :math:`\min(C, 1/(N\epsilon))\sum_i|r_i|`.
    * :math:`\Sigma_i = I` (eqs. 6.5–6.6): the "ℓ1-norm SVR" of Lemma 18 with the
      tube :math:`\epsilon\|w\|`. If :math:`(w_2, b_2)` is the standard ε-SVR
      solution (:math:`\tfrac12\|w\|^2 + C_2\sum(|r_i| - \epsilon_1)_+`, e.g.
      :class:`sklearn.svm.SVR`) with dual coefficients :math:`\beta_i`, then by the
      KKT conditions it solves the relaxed LSVR with :math:`\Sigma_i = I`,
      :math:`\epsilon = \epsilon_1/\|w_2\|` and
      :math:`C = 1/(\|w_2\|/C_2 + \epsilon_1 S/\|w_2\|)`,
      :math:`S = \sum_i|\beta_i|/C_2`, provided :math:`NC\epsilon \le 1`.
      With :math:`\epsilon_1 = 0` this is :math:`\min\|w\| + C\sum|r_i|`.
      (Vanishing covariances do *not* give the ε-SVR; the identity covariance does.)

    **Kernel LSVR (eqs. 6.16–6.18, Theorem 19).** The optimal feature-space
    weight lies in the span of the mapped data, :math:`w = \sum_j\mu_j\varphi(x_j)`,
    so :math:`w^\top\varphi(x_i) = (K\mu)_i` and :math:`w^\top\Sigma_i^\varphi w =
    \|L_i\mu\|^2` with :math:`L_i = m^{-1/2}(K_{W_i,:} - \mathbf 1 l_i^\top)`,
    :math:`l_i = ` the mean of the rows :math:`K_{W_i,:}` (the thesis's printed
    :math:`l_i` is garbled; errata S004-§2.11). Both depend on :math:`\mu` only
    through the fitted values :math:`g = K\mu`: :math:`L_i\mu` is the centred
    window :math:`m^{-1/2}(g_{W_i} - \bar g_{W_i})`. With the eigen-decomposition
    :math:`K \approx U_r\Lambda_rU_r^\top` (eigenvalues above ``factor_rtol``
    times the largest), the fitted values :math:`g + b\mathbf 1` range over
    :math:`\operatorname{span}\{U_r, \mathbf 1\}`, which this module writes as
    :math:`Vv + b\mathbf 1` with :math:`V` an orthonormal basis of the centred
    :math:`U_r` (:func:`_eigenbasis`). The kernel program is then the linear
    program above on the features :math:`V` (kind ``"socp.lsvr.kernel"``,
    variable ``v`` instead of ``w``; in the window form only :math:`g` is a
    variable, constrained to :math:`\operatorname{span}V` by its orthogonal
    complement, and ``decode`` reports :math:`v = V^\top g`): an exact
    reparametrisation (up to directions within 1e-8 of the constant vector) that
    removes the rank degeneracy of the coefficient space which makes
    interior-point solvers fail (errata S004-§5.3), keeps the data well scaled and
    :math:`b` identifiable. ``decode`` splits the fitted values into
    :math:`U_ra + b\mathbf 1` (minimum-norm least squares) and returns
    :math:`\mu = U_r\Lambda_r^{-1}a` as ``"dual_coef"`` and that :math:`b`.

    *Consequence* [D]: for a strictly positive definite kernel of full numerical
    rank the kernel LSVR's fit at the training points does not depend on the
    kernel at all (any :math:`g \in \mathbb R^N` is reachable); the kernel only
    enters through the numerical rank and through off-sample prediction, which
    interpolates :math:`g` with :math:`\mu = K^{-1}g` (see above).

    Hyperplane convention: :math:`f(x) = w^\top x + b` as in the thesis (ch. 6
    already writes ``+ b``; no sign conversion needed).
    """
    X = check_matrix(X, min_rows=3)
    y = _check_targets(y, X.shape[0])
    eps, C = _check_eps_C(epsilon, C)
    k = _check_window(k, X.shape[0])
    kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
    if form is None:
        form = "primal" if kern.name == "linear" else "kernel"
    if form not in ("primal", "kernel"):
        raise ProgramError(f"form must be 'primal' or 'kernel', got {form!r}")
    if form == "primal" and kern.name != "linear":
        raise ProgramError(
            f"form='primal' needs the linear kernel (got kernel={kern.name!r}); "
            "use form='kernel'"
        )
    factor_rtol = check_positive(factor_rtol, "factor_rtol")
    if factor_rtol >= 1.0:
        raise ProgramError(f"factor_rtol must be < 1, got {factor_rtol!r}")
    windows = local_windows(X.shape[0], k, neighborhood=neighborhood, X=X, kernel=kern)
    eig = {"basis": None, "eigenvalues": None, "complement": None}
    scale = None
    if form == "primal":
        # the objective is invariant to the units of the features: solve in equilibrated
        # coordinates X / scale (exact powers of two) and map w back in decode: with one
        # feature at 1e-8 the backends would otherwise stop "optimal" far from the optimum
        scale = feature_scales(X.std(axis=0), np.abs(X).max(axis=0))
        features = X / scale
    else:
        eig = _eigenbasis(kern.gram(X), factor_rtol)
        features = eig.pop("features")
    data = {
        "kind": KIND if form == "primal" else KERNEL_KIND,
        "X": X, "y": y, "epsilon": eps, "C": C, "k": k, "neighborhood": neighborhood,
        "kernel": kern, "form": form, "factor_rtol": factor_rtol, "windows": windows,
        "features": features, **eig, "feature_scale": scale,
        "factors": local_factors(features, windows) if _dense_is_smaller(
            features.shape, windows.shape[1], eig["complement"]) else None,
    }
    desc = f"LSVR ({kern.name} kernel, epsilon={eps:g}, C={C:g}, k={k}, {neighborhood})"
    return _program(data, desc)


def lsvr_from_covariances(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    C: float,
    covariances: np.ndarray,
) -> Program:
    r"""Relaxed linear LSVR with user-given covariances :math:`\Sigma_i` (kind ``"socp.lsvr"``).

    The special cases of section 6.2: one shared matrix (eq. 6.4), the identity
    (eqs. 6.5–6.6, Lemma 18) or per-sample matrices from any estimator.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    epsilon : float
        Tube factor (>= 0).
    C : float
        Slack cost (> 0).
    covariances : ndarray of shape (n_features, n_features) or (n_samples, n_features, n_features)
        Symmetric positive semi-definite matrices (factored by
        :func:`conicml.kernels.psd_factor`).

    Returns
    -------
    Program
        As :func:`lsvr` with ``form="primal"``.
    """
    X = check_matrix(X)
    y = _check_targets(y, X.shape[0])
    eps, C = _check_eps_C(epsilon, C)
    scale = feature_scales(X.std(axis=0), np.abs(X).max(axis=0))
    cov = np.asarray(covariances, dtype=float)
    if cov.ndim >= 2 and cov.shape[-2:] == (X.shape[1], X.shape[1]):
        cov = cov / np.outer(scale, scale)  # the covariances of X / scale
    data = {
        "kind": KIND, "X": X, "y": y, "epsilon": eps, "C": C, "k": None,
        "neighborhood": None, "kernel": Kernel("linear"), "form": "primal",
        "windows": None, "features": X / scale, "feature_scale": scale,
        "factors": _factors_from_covariances(cov, X.shape[0], X.shape[1]),
    }
    return _program(data, f"LSVR (given covariances, epsilon={eps:g}, C={C:g})")


def predict(data: Mapping[str, Any], model: Mapping[str, Any], X_new: np.ndarray) -> np.ndarray:
    r"""Predictions :math:`f(x)` of a decoded LSVR model at new inputs.

    ``data`` is ``program.data``; ``X_new`` has shape (m, n_features) (for a
    precomputed kernel: kernel values against all training samples, (m, n)).
    """
    X_new = np.asarray(X_new, dtype=float)
    if "w" in model:
        return X_new @ model["w"] + model["b"]
    kern: Kernel = data["kernel"]
    return kern(X_new, data["X"]) @ model["dual_coef"] + model["b"]
