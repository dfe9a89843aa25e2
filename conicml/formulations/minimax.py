r"""Minimax probability machines: MPM, BMPM and MEMPM (seed 004, Huang 2004, ch. 3 and 5).

Notation (errata S004-P1): the positive class (label ``+1``) is the thesis's
class :math:`x` with moments :math:`(\bar x, \Sigma_x)`, the negative class is
:math:`y`; :math:`d = \bar x - \bar y`, :math:`\sigma_x(w) = \sqrt{w^\top\Sigma_x w}`.
Plug-in moments use the biased :math:`1/N` covariances (errata S004-P5).
The thesis (ch. 3) classifies :math:`z` as :math:`x` iff :math:`w^\top z \ge t`; here
:math:`w^\top z + b \ge 0`, so every decode returns :math:`b = -t`. The worst-case
accuracy maps are in the Notes of :func:`kappa_from_accuracy`, the one SOCP of the family
(MPM, BMPM, robust, kernel) in those of :func:`mpm`, MEMPM in those of :func:`mempm`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from typing import Any

import cvxpy as cp
import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import ndtr, ndtri

from .. import kinds
from .._utils.deprecation import ridge_pair
from .._utils.linalg import inverse_quadratic
from .._utils.scaling import feature_scales, relative_ridge_diagonal
from .._utils.threads import one_blas_thread
from .._utils.validation import check_positive, check_X_y
from ..certificates.conic import rel, residuals
from ..certificates.margin import fractional_certificate, gram_fractional_certificate
from ..contracts.minimax import GramScatter, KernelScatter, MEMPMData, RidgeStack, kernel_products
from ..exceptions import ProgramError
from ..kernels import KERNELS, Kernel, make_kernel, psd_factor
from ..moments import ClassMoments, as_class_moments, takes_X_y
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution, Status

__all__ = [
    "BOUNDS",
    "accuracy_from_kappa",
    "bmpm",
    "decision_values",
    "hyperplane",
    "kappa_from_accuracy",
    "inner_bmpm",
    "mempm",
    "mempm_model",
    "mempm_value",
    "mpm",
    "ratio",
]

BOUNDS = ("chebyshev", "gaussian")
#: The coordinates of a kernel program (see :func:`mpm`, Kernels).
COORDINATES = ("features", "coefficients")

#: Kernel programs: eigenvalues of the Gram matrix below this fraction of the
#: largest are dropped from the empirical feature map (:func:`_base_data`).
_GRAM_RTOL = 1e-10

#: MEMPM: from kappa(beta) = (1 - _END_RTOL) kappa_max on, F is evaluated at the
#: analytic end point instead of by a BMPM solve (see :func:`mempm`).
_END_RTOL = 1e-3


# --------------------------------------------------------------------------------------
# the two kappa maps (errata S004-P3)
# --------------------------------------------------------------------------------------
def kappa_from_accuracy(p: float, bound: str = "chebyshev") -> float:
    r"""Return :math:`\kappa(p)`: :math:`\sqrt{p/(1-p)}` (Chebyshev) or :math:`\Phi^{-1}(p)`.

    Notes
    -----
    **Worst-case accuracy.** By Marshall–Olkin and Lemma 2 (errata S004-P3),
    :math:`\inf_{x\sim(\bar x,\Sigma_x)}\Pr\{w^\top x \ge t\} \ge \alpha` iff
    :math:`w^\top\bar x - t \ge \kappa(\alpha)\,\sigma_x(w)`, with the *Chebyshev*
    map :math:`\kappa(\alpha) = \sqrt{\alpha/(1-\alpha)}`, :math:`\alpha = \kappa^2/(1+\kappa^2)`,
    or, for Gaussian classes (eq. 3.24), the *Gaussian* map
    :math:`\kappa = \Phi^{-1}(\alpha)`, :math:`\alpha = \Phi(\kappa)`; the latter is
    only used for :math:`\alpha, \beta \ge \tfrac12` (errata S004-P3: below ½ the
    numerator is convex and the fractional program is no longer pseudo-concave).
    """
    if bound == "chebyshev":
        return math.inf if p >= 1.0 else math.sqrt(max(p, 0.0) / (1.0 - p))
    return float(ndtri(p))


def accuracy_from_kappa(kappa: float, bound: str = "chebyshev") -> float:
    r"""Return :math:`g(\kappa) = \kappa^2/(1+\kappa^2)` (0 if κ ≤ 0) or :math:`\Phi(\kappa)`."""
    if bound == "chebyshev":
        if kappa <= 0:
            return 0.0
        if math.isinf(kappa):
            return 1.0
        return kappa * kappa / (1.0 + kappa * kappa)
    return float(ndtr(kappa))


def _check_bound(bound: object) -> str:
    if bound not in BOUNDS:
        raise ProgramError(f"bound must be 'chebyshev' or 'gaussian', got {bound!r}")
    return str(bound)


def _check_nonneg(value: object, name: str) -> float:
    return check_positive(value, name, allow_zero=True)


def _split_ridge(ridge: object) -> tuple[float, float]:
    """``ridge`` as the pair (positive class, negative class): a float is used for both."""
    if isinstance(ridge, (tuple, list, np.ndarray)):
        if len(ridge) != 2:
            raise ProgramError(f"ridge must be a float or a pair (positive, negative), got "
                               f"{ridge!r}")
        return _check_nonneg(ridge[0], "ridge[0]"), _check_nonneg(ridge[1], "ridge[1]")
    r = _check_nonneg(ridge, "ridge")
    return r, r


# --------------------------------------------------------------------------------------
# the moment data shared by the family: d, R_x, R_y (R^T R = Sigma), projected means
# --------------------------------------------------------------------------------------
def _gram_feature_map(K: np.ndarray, rtol: float = _GRAM_RTOL) -> tuple[np.ndarray, np.ndarray]:
    r"""An empirical feature map ``(Phi, T)`` of a Gram matrix: :math:`K = \Phi\Phi^\top`,
    :math:`KT = \Phi`, :math:`T^\top K T = I` (so :math:`w = Tu` gives :math:`Kw = \Phi u`,
    :math:`w^\top K w = \|u\|^2`).

    Cholesky :math:`K = LL^\top` (:math:`\Phi = L`, :math:`T = L^{-\top}`) when every
    pivot satisfies :math:`L_{ii}^2 > \texttt{rtol}\cdot\max_i K_{ii}` (:math:`K`
    numerically nonsingular); else the
    eigen-factor :math:`\Phi = U\Lambda^{1/2}`, :math:`T = U\Lambda^{-1/2}` over the
    eigenvalues above ``rtol`` (default ``_GRAM_RTOL``) times the largest (after
    :func:`conicml.kernels.psd_factor`'s check that :math:`K` is PSD). Both are exact factors of
    :math:`K` (the eigen one up to the dropped spectrum) and give the same program up
    to an orthogonal change of :math:`u`: the same quadratic forms and the same dual
    coefficients. Why Cholesky first: it costs :math:`n^3/3` flops against about
    :math:`9n^3` for the eigendecomposition with vectors, and the RBF Gram spectrum of
    typical data hardly decays, so truncation would not shrink the program anyway. The
    factorisations run on one BLAS thread (:func:`conicml._utils.threads.one_blas_thread`).
    """
    with one_blas_thread():
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            L = None
        piv = np.diag(L) if L is not None else None
        scale = max(float(np.max(np.diag(K), initial=0.0)), np.finfo(float).tiny)
        if piv is not None and bool(np.all(piv * piv > rtol * scale)):
            return L, _InverseTransposeFactor(L)
        # psd_factor also rejects a clearly indefinite (precomputed) Gram matrix
        Phi = psd_factor(K, "eigen", rtol=rtol)
    return Phi, Phi / np.sum(Phi * Phi, axis=0)  # U lam^1/2 / lam = U lam^-1/2


class _InverseTransposeFactor:
    r""":math:`T = L^{-\top}` of a lower-triangular :math:`L`, applied by triangular solves.

    Only products with :math:`T` are ever needed (the dual coefficients :math:`w = Tu`),
    so the explicit inverse (another :math:`n^3/3` flops) is never formed;
    ``np.asarray(T)`` forms it on request.
    """

    __array_ufunc__ = None  # ``ndarray @ T`` defers to __rmatmul__

    def __init__(self, L: np.ndarray, perm: np.ndarray | None = None) -> None:
        self.L = L
        self.perm = perm  # row i of L^-T is row perm[i] of T (K was permuted by perm)
        self.shape = L.shape

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        # T u = L^-T u, rows put back in the original order
        out = solve_triangular(self.L, np.asarray(other, dtype=float), lower=True,
                               trans="T", check_finite=False)
        if self.perm is None:
            return out
        back = np.empty_like(out)
        back[self.perm] = out
        return back

    def __rmatmul__(self, other: np.ndarray) -> np.ndarray:
        # A T = A[:, perm] L^-T = (L^-1 A[:, perm]^T)^T
        other = np.asarray(other, dtype=float)
        if self.perm is not None:
            other = other[..., self.perm]
        return solve_triangular(self.L, other.T, lower=True, check_finite=False).T

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self @ np.eye(self.shape[0])
        return out if dtype is None else out.astype(dtype)


def _permute_rows(T: Any, perm: np.ndarray) -> Any:
    """``T`` with its row ``i`` moved to row ``perm[i]`` (undoes ``K[perm][:, perm]``)."""
    if isinstance(T, _InverseTransposeFactor):
        return _InverseTransposeFactor(T.L, perm)
    out = np.empty_like(T)
    out[perm] = T
    return out


def _factor_T(S: np.ndarray) -> np.ndarray:
    """A matrix ``R`` with ``R.T @ R == S`` (rows: the retained spectrum)."""
    return psd_factor(S, "auto").T


def _base_data(
    data: ClassMoments | tuple,
    *,
    nu_x: float,
    nu_y: float,
    ridge: float | tuple[float, float],
    relative_ridge: float = 0.0,
    kernel: str,
    gamma: float | str,
    degree: int,
    coef0: float,
    coordinates: str = "features",
) -> dict[str, Any]:
    if coordinates not in COORDINATES:
        raise ProgramError(f"coordinates must be one of {', '.join(COORDINATES)}, got "
                           f"{coordinates!r}")
    nu_x = _check_nonneg(nu_x, "nu_x")
    nu_y = _check_nonneg(nu_y, "nu_y")
    rho_x, rho_y = _split_ridge(ridge)
    relative_ridge = _check_nonneg(relative_ridge, "relative_ridge")
    scale = None
    scatter = None
    if kernel == "linear":
        mom = as_class_moments(data)
        n = mom.dim
        Sx = mom.cov_pos + rho_x * np.eye(n)
        Sy = mom.cov_neg + rho_y * np.eye(n)
        mx, my = mom.mean_pos, mom.mean_neg
        if relative_ridge > 0:
            # r diag(v) moves with the covariances under x -> Dx (scale-invariant)
            diag = relative_ridge_diagonal(_feature_variances(mom), relative_ridge)
            Sx[np.diag_indices(n)] += diag
            Sy[np.diag_indices(n)] += diag
        # the family is affine-invariant: solve in equilibrated coordinates x / scale
        # (exact powers of two) and map w back in decode, so that no feature's units
        # decide which directions psd_factor's relative cut-off keeps
        scale = feature_scales(np.sqrt(0.5 * (np.diag(Sx) + np.diag(Sy))),
                               np.maximum(np.abs(mx), np.abs(my)))
        Sx, Sy = Sx / np.outer(scale, scale), Sy / np.outer(scale, scale)
        mx, my = mx / scale, my / scale
        Rx, Ry = _factor_T(Sx), _factor_T(Sy)
        kern, X = None, None
        n_pos, n_neg = mom.n_pos, mom.n_neg
    else:
        if isinstance(data, ClassMoments) or not (isinstance(data, tuple) and len(data) == 2):
            raise ProgramError(
                f"kernel={kernel!r} needs the training data (X, y), not moments: the kernel "
                "model is written over the training points (Theorem 9)"
            )
        X, y = check_X_y(*data)
        if kernel not in KERNELS:
            raise ProgramError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNELS)}")
        if relative_ridge > 0:
            raise ProgramError(
                f"relative_ridge applies to kernel='linear' only (got kernel={kernel!r}); "
                "a kernel program takes the rho*K regulariser of Theorem 9 as ridge > 0"
            )
        if rho_x <= 0 or rho_y <= 0:
            raise ProgramError(
                f"kernel={kernel!r} needs ridge > 0 for both classes (got {rho_x:g}, "
                f"{rho_y:g}): without the rho*K regulariser of Theorem 9 the plug-in kernel "
                "covariances are rank-deficient and the program is unbounded; try ridge=1e-3"
            )
        kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
        pos, neg = y > 0, y < 0
        n_pos, n_neg = int(pos.sum()), int(neg.sum())
        # the Gram matrix of the points ordered positive class first (a symmetric
        # permutation, undone in coef_map): a Cholesky factor's positive rows then vanish
        # beyond column n_pos, so Sigma_x's scatter lives in its leading block
        perm = np.argsort(~pos, kind="stable")
        if kern.name == "precomputed":  # X is the Gram matrix (symmetrised here)
            K = X[np.ix_(perm, perm)]
            K = 0.5 * (K + K.T)
        else:  # the kernel of the permuted points (symmetric by construction)
            K = kern.gram(X[perm])
        if coordinates == "coefficients":
            return {"moments": None, "nu_x": nu_x, "nu_y": nu_y, "rho_x": rho_x,
                    "rho_y": rho_y, "relative_ridge": relative_ridge, "kernel": kern, "X": X,
                    "n_pos": n_pos, "n_neg": n_neg, "feature_scale": None,
                    **_coefficient_data(K, perm, n_pos, rho_x, rho_y,
                                        nonnegative=kern.name == "rbf")}
        # Theorem 9 in the coordinates of an empirical feature map: any factor
        # K = Phi Phi^T (Phi of full column rank r) with coefficients w = T u,
        # K T = Phi and T^T K T = I gives K w = Phi u and w^T K w = ||u||^2, so
        # k~x - k~y, K~x w and rho w^T K w become Phi's class means, centred rows and
        # rho ||u||^2: the kernel program is the linear one on Phi with
        # Sigma + rho I, well conditioned, whereas the n x n form in w has a whole
        # optimal face (the null directions of K) on which interior-point solvers
        # failed (Clarabel solver_error from n ~ 250 on). _gram_feature_map takes
        # the Cholesky factor when K is numerically nonsingular (n^3/3 flops, about
        # 1/20 of an eigendecomposition) and the eigen-factor otherwise.
        Phi, coef_map = _gram_feature_map(K)
        coef_map = _permute_rows(coef_map, perm)
        # the rows of Phi are in the order perm: the positive class is Phi[:n_pos]
        mx, my = Phi[:n_pos].mean(axis=0), Phi[n_pos:].mean(axis=0)  # k~x, k~y (3.4.2)
        # Sigma = K~^T K~ / N + rho I in u (Theorem 9). With the Cholesky factor
        # (lower triangular) the positive rows and mx vanish beyond column n_pos.
        r = Phi.shape[1]
        cholesky_map = isinstance(coef_map, _InverseTransposeFactor)
        lead = n_pos if cholesky_map else r
        # R = [C / sqrt(N); sqrt(rho) I] satisfies R^T R = Sigma exactly, with no
        # factorisation of Sigma (the norms ||R u|| = sigma(u) are all the program uses);
        # held without its identity block (RidgeStack), formed only for a generic backend
        Cx = np.zeros((n_pos, r))
        Cx[:, :lead] = Phi[:n_pos, :lead] - mx[:lead]
        Cx[:, :lead] *= 1.0 / math.sqrt(n_pos)
        Cy = Phi[n_pos:] - my
        Cy *= 1.0 / math.sqrt(n_neg)
        Rx, Ry = RidgeStack(Cx, rho_x), RidgeStack(Cy, rho_y)
        if cholesky_map:
            # Phi Phi^T = K: the Gram matrix of the scaled centred rows is K double-centred
            # per class block, in O(n^2) (in place: K is not needed any more); solvers and
            # the certificate work through it (Woodbury) and never form the n x n
            # covariances (two n^3 products)
            scatter = KernelScatter(Cx, Cy, rho_x, rho_y, _class_centred_gram(K, n_pos),
                                    lead=lead)
            Sx = Sy = None
        else:
            cov_x = np.zeros((r, r))
            cov_x[:lead, :lead] = Cx[:, :lead].T @ Cx[:, :lead]
            cov_y = Cy.T @ Cy
            cov_x[np.diag_indices_from(cov_x)] += rho_x
            cov_y[np.diag_indices_from(cov_y)] += rho_y
            Sx, Sy, scatter = cov_x, cov_y, None
        mom = None
    d = mx - my
    if not np.any(np.abs(d) > 1e-12 * max(1.0, float(np.abs(mx).max()))):
        raise ProgramError(
            "the two class means coincide (x_mean == y_mean): the minimax machines need "
            "distinct means (eq. 3.18 divides by w^T(x_mean - y_mean))"
        )
    return {
        "moments": mom, "d": d, "Rx": Rx, "Ry": Ry, "mx": mx, "my": my,
        "nu_x": nu_x, "nu_y": nu_y, "rho_x": rho_x, "rho_y": rho_y,
        "relative_ridge": relative_ridge,
        "kernel": kern, "X": X, "n_pos": n_pos, "n_neg": n_neg, "feature_scale": scale,
        "coef_map": None if kern is None else coef_map,
        # the covariances Rx^T Rx, Ry^T Ry themselves (up to the spectrum psd_factor
        # drops): solvers that factor a combination of them (ils-newton) read these
        # instead of multiplying the factors back
        "Sx": Sx, "Sy": Sy,
        # kernel programs with a Cholesky feature map: the covariances by their centred
        # rows (conicml.contracts.minimax.KernelScatter); Sx, Sy are then None
        "scatter": scatter if kern is not None else None,
    }


def _coefficient_data(K: np.ndarray, perm: np.ndarray, n_x: int, rho_x: float,
                      rho_y: float, nonnegative: bool = False) -> dict[str, Any]:
    r"""The kernel program's data in dual coefficients :math:`z` (points in the order of
    ``K``, the positive class first), :math:`u = \Phi^\top z` for any factor
    :math:`K = \Phi\Phi^\top`: :math:`d = K e` with :math:`e = 1_x/N_x - 1_y/N_y`,
    :math:`\bar x = K1_x/N_x`, :math:`\bar y = K1_y/N_y` (Theorem 9's
    :math:`\tilde k_x, \tilde k_y`) and the covariances by a
    :class:`~conicml.contracts.minimax.GramScatter`; a factor :math:`\Phi` is formed
    only for a consumer that asks for the dense matrices (:class:`_CoefficientStack`,
    the generic backends' form). ``nonnegative``: every entry of :math:`K` is
    :math:`\ge 0` (an RBF kernel), so the class sums give its absolute row sums."""
    n = K.shape[0]
    n_y = n - n_x
    E = np.zeros((n, 2))
    E[:n_x, 0] = 1.0 / n_x
    E[n_x:, 1] = 1.0 / n_y
    with one_blas_thread():
        KE = kernel_products(K, E)
    mx, my = KE[:, 0], KE[:, 1]
    e = E[:, 0] - E[:, 1]
    d = mx - my
    # |d_u|^2 = e^T K e against |mx_u|^2 = 1_x^T K 1_x / N_x^2
    if not float(e @ d) > 1e-24 * max(1.0, float(E[:, 0] @ mx)):
        raise ProgramError(
            "the two class means coincide (x_mean == y_mean): the minimax machines need "
            "distinct means (eq. 3.18 divides by w^T(x_mean - y_mean))"
        )
    G = _class_centred_gram(K, n_x, out=np.empty_like(K), means=KE)
    # K 1 = N_x mx + N_y my: the absolute row sums of a non-negative K (Gershgorin)
    row_sums = n_x * mx + n_y * my if nonnegative else None
    scatter = GramScatter(K, n_x, rho_x, rho_y, G, e, kd=d, row_sums=row_sums)
    fmap = _LazyFeatureMap(K)
    return {"d": d, "mx": mx, "my": my, "Rx": _CoefficientStack(scatter, 0, fmap),
            "Ry": _CoefficientStack(scatter, 1, fmap), "coef_map": _Permutation(perm),
            "Sx": None, "Sy": None, "scatter": scatter, "coordinates": "coefficients",
            "feature_map": fmap}


class _LazyFeatureMap:
    """:func:`_gram_feature_map` of ``K``, formed on first request and kept."""

    def __init__(self, K: np.ndarray) -> None:
        self.K = K
        self._map: tuple[np.ndarray, Any] | None = None

    def get(self) -> tuple[np.ndarray, Any]:
        r"""``(Phi, T)`` with :math:`K = \Phi\Phi^\top`, :math:`KT = \Phi`."""
        if self._map is None:
            self._map = _gram_feature_map(self.K)
        return self._map


class _CoefficientStack:
    r""":math:`R` with :math:`\|Rz\| = \sigma(z)` in dual coefficients:
    :math:`[J_aK_{a,:};\ \sqrt{\rho_a}\,\Phi^\top]` (the class's centred kernel rows
    over :math:`\sqrt{N_a}` and the ridge), :math:`R^\top R = \Sigma_a` of Theorem 9.
    :meth:`norm` needs no factor of :math:`K`; the dense matrix (``np.asarray``, products)
    forms :math:`\Phi` once, for the consumers that need it."""

    __array_ufunc__ = None

    def __init__(self, scatter: GramScatter, a: int, fmap: _LazyFeatureMap) -> None:
        self.scatter, self.a, self.fmap = scatter, a, fmap
        self._dense: np.ndarray | None = None
        self.ndim = 2

    def norm(self, z: np.ndarray) -> float:
        r""":math:`\sigma_a(z) = \|Rz\|`."""
        return math.sqrt(max(self.scatter.sigma_sqs(np.asarray(z, dtype=float))[self.a], 0.0))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._dense is None:
            sc = self.scatter
            blk = sc._blocks_xy[self.a]
            rows = sc._centre(sc.K[blk], self.a, 1)
            Phi, _ = self.fmap.get()
            rho = (sc.rho_x, sc.rho_y)[self.a]
            self._dense = np.vstack([rows, math.sqrt(rho) * Phi.T])
        return self._dense if dtype is None else self._dense.astype(dtype)

    @property
    def shape(self) -> tuple[int, int]:
        return np.asarray(self).shape

    def __matmul__(self, other: Any) -> np.ndarray:
        return np.asarray(self) @ np.asarray(other)

    def __rmatmul__(self, other: Any) -> np.ndarray:
        return np.asarray(other) @ np.asarray(self)

    @property
    def T(self) -> np.ndarray:  # noqa: N802
        return np.asarray(self).T


class _Permutation:
    """The dual coefficients in the original order from those in the order ``perm``."""

    __array_ufunc__ = None

    def __init__(self, perm: np.ndarray) -> None:
        self.perm = perm
        self.shape = (perm.size, perm.size)

    def __matmul__(self, other: Any) -> np.ndarray:
        other = np.asarray(other, dtype=float)
        out = np.empty_like(other)
        out[self.perm] = other
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self @ np.eye(self.perm.size)
        return out if dtype is None else out.astype(dtype)


def _class_centred_gram(K: np.ndarray, n_x: int, out: np.ndarray | None = None,
                        means: np.ndarray | None = None) -> np.ndarray:
    r""":math:`G = CC^\top` for the rows :math:`C` of ``Rx[:n_x]`` and ``Ry[:n_y]`` from
    :math:`K = \Phi\Phi^\top` (classes in blocks, the positive first): each block
    :math:`K_{ab}` double-centred (row means over class :math:`b`, column means over
    class :math:`a`) and divided by :math:`\sqrt{N_aN_b}`; :math:`O(n^2)`, into ``out``
    (default: in place, ``K`` overwritten). ``means``: the class means of ``K``'s rows,
    :math:`[K1_x/N_x,\ K1_y/N_y]`, if already formed. The rows go in slices that stay in
    cache through the three passes."""
    n = K.shape[0]
    blocks = (slice(0, n_x), slice(n_x, n))
    if means is None:
        means = np.stack([K[:, b].mean(axis=1) for b in blocks], axis=1)  # row i, class b
    G = K if out is None else out
    sizes = (n_x, n - n_x)

    for ia, a in enumerate(blocks):
        for ib, b in enumerate(blocks):
            total = float(means[a, ib].mean())
            u = means[a, ib] - total
            v = means[b, ia][None, :]
            scale = 1.0 / math.sqrt(sizes[ia] * sizes[ib])
            for i in range(a.start, a.stop, 64):
                j = min(i + 64, a.stop)
                g = G[i:j, b]
                np.subtract(K[i:j, b], u[i - a.start:j - a.start, None], out=g)
                g -= v
                g *= scale
    return G


def _feature_variances(mom: ClassMoments) -> np.ndarray:
    r"""Per-feature variances of the pooled data from the class moments:
    :math:`v = \pi_x\operatorname{diag}\Sigma_x + \pi_y\operatorname{diag}\Sigma_y +
    \pi_x\pi_y d^2` (within plus between classes; the variances of the training inputs for
    plug-in :math:`1/N` moments), :math:`\pi_x = N_x/N`, or ½ without sample sizes."""
    prior = mom.prior_pos
    px = 0.5 if prior is None else prior
    d = mom.mean_pos - mom.mean_neg
    return px * np.diag(mom.cov_pos) + (1 - px) * np.diag(mom.cov_neg) + px * (1 - px) * d * d


def _kappa_max(base: Mapping[str, Any]) -> float:
    r""":math:`\kappa(\beta_{0m}) = \sqrt{d^\top\Sigma_y^{-1}d} - \nu_y` (3.44, S004-D2).

    By a Cholesky factor of :math:`\Sigma_y` when it is numerically definite (kernel
    programs, whose ridge is mandatory: :math:`n^3/3` flops), else from the SVD of
    :math:`R_y` (:func:`conicml._utils.linalg.inverse_quadratic`, which also detects
    :math:`d` outside the range), which costs several times the Cholesky factorisation.
    """
    scatter = base.get("scatter")
    if scatter is not None:
        # (GramScatter: the solve takes the representative of d; d itself is K d_rep)
        x = scatter.solve_y(getattr(scatter, "d_rep", base["d"]))
        return math.sqrt(max(float(base["d"] @ x), 0.0)) - base["nu_y"]
    Sy = base.get("Sy")
    L = _definite_cholesky(Sy) if Sy is not None else None
    if L is not None:
        z = solve_triangular(L, base["d"], lower=True, check_finite=False)
        return math.sqrt(float(z @ z)) - base["nu_y"]
    return math.sqrt(inverse_quadratic(np.asarray(base["Ry"]), base["d"])) - base["nu_y"]


def _definite_cholesky(S: np.ndarray, rtol: float = 1e-12) -> np.ndarray | None:
    r"""Lower Cholesky factor of a symmetric ``S`` whose squared pivots all exceed ``rtol``
    times its largest diagonal entry (numerically definite), else ``None``; one BLAS
    thread (see :func:`_gram_feature_map`)."""
    with one_blas_thread():
        try:
            L = np.linalg.cholesky(S)
        except np.linalg.LinAlgError:
            return None
    piv = np.diag(L)
    if not np.all(piv * piv > rtol * max(float(np.max(np.diag(S))), np.finfo(float).tiny)):
        return None
    return L


# --------------------------------------------------------------------------------------
# the shared SOCP (Charnes-Cooper form) and its decoding
# --------------------------------------------------------------------------------------
def _build_fractional(data: Mapping[str, Any]) -> ConicForm:
    d, Rx, Ry = data["d"], np.asarray(data["Rx"]), np.asarray(data["Ry"])
    v = cp.Variable(d.size, name="v")
    ax = cp.Parameter(nonneg=True, name="a_x", value=data["a"][0])
    ay = cp.Parameter(nonneg=True, name="a_y", value=data["a"][1])
    sx, sy = cp.norm(Rx @ v, 2), cp.norm(Ry @ v, 2)
    bx, by = data["b"]
    objective = bx * sx + by * sy if by else sx  # b = (1, 1) MPM, (1, 0) BMPM
    margin = d @ v - ax * sx - ay * sy >= 1
    problem = cp.Problem(cp.Minimize(objective), [margin])
    return ConicForm(problem, {"v": v}, {"margin": margin}, {"a_x": ax, "a_y": ay})


def _sigmas(data: Mapping[str, Any], w: np.ndarray) -> tuple[float, float]:
    r""":math:`(\|R_xw\|, \|R_yw\|)` (a program in dual coefficients: from one product
    with :math:`K`, no dense form)."""
    if data.get("coordinates") == "coefficients":
        sxx, syy = data["scatter"].sigma_sqs(np.asarray(w, dtype=float))
        return math.sqrt(max(sxx, 0.0)), math.sqrt(max(syy, 0.0))
    return float(np.linalg.norm(data["Rx"] @ w)), float(np.linalg.norm(data["Ry"] @ w))


def _build_coefficients(data: Mapping[str, Any]) -> ConicForm:
    r"""The cvxpy form of a program in dual coefficients: the same SOCP written in the
    feature-map coordinates :math:`u = \Phi^\top z` of :func:`_gram_feature_map` (well
    conditioned for interior-point solvers, whereas the form in :math:`z` carries the
    conditioning of :math:`K`), its ``"v"`` the coefficients :math:`z = Tu`."""
    Phi, T = data["feature_map"].get()
    n_x, r = data["n_pos"], Phi.shape[1]
    blocks = []
    for rows, rho in ((Phi[:n_x], data["rho_x"]), (Phi[n_x:], data["rho_y"])):
        C = (rows - rows.mean(axis=0)) / math.sqrt(rows.shape[0])
        blocks.append(np.vstack([C, math.sqrt(rho) * np.eye(r)]))
    form = _build_fractional({"d": Phi.T @ data["scatter"].d_rep, "Rx": blocks[0],
                              "Ry": blocks[1], "a": data["a"], "b": data["b"]})
    u = form.variables["v"]
    return ConicForm(form.problem, {"v": np.asarray(T) @ u}, form.constraints,
                     form.parameters)


def ratio(data: Mapping[str, Any], w: np.ndarray) -> float:
    r"""The fractional objective at :math:`w` normalised to :math:`w^\top d = 1`.

    :math:`(1 - a_x\sigma_x - a_y\sigma_y)/(b_x\sigma_x + b_y\sigma_y)`.
    """
    w = np.asarray(w, dtype=float)
    dw = float(data["d"] @ w)
    # the norms are homogeneous: those of w itself (a value the certificate at the same
    # point has formed), scaled
    sx, sy = (s / abs(dw) for s in _sigmas(data, w))
    (ax, ay), (bx, by) = data["a"], data["b"]
    den = bx * sx + by * sy
    num = 1.0 - ax * sx - ay * sy
    return math.inf if den <= 0 else num / den


def hyperplane(data: Mapping[str, Any], w: np.ndarray, kappa_alpha: float,
               kappa_beta: float) -> tuple[np.ndarray, float, float]:
    r"""Normalise :math:`w` to :math:`w^\top d = 1` and return :math:`(w, b, |t_x - t_y|)`.

    :math:`b = -t` with :math:`t` the average of the two sides of eq. 3.23,
    :math:`t_x = w^\top\bar x - (\kappa_\alpha + \nu_x)\sigma_x` and
    :math:`t_y = w^\top\bar y + (\kappa_\beta + \nu_y)\sigma_y`.
    """
    w = np.asarray(w, dtype=float)
    dw = float(data["d"] @ w)
    sx, sy = (s / abs(dw) for s in _sigmas(data, w))  # homogeneous (see ratio)
    w = w / dw
    px, py = float(w @ data["mx"]), float(w @ data["my"])
    # a zero-variance side carries no kappa term (kappa may be infinite there)
    tx = px - (kappa_alpha + data["nu_x"]) * sx if sx > 0 else px
    ty = py + (kappa_beta + data["nu_y"]) * sy if sy > 0 else py
    if not math.isfinite(tx) and not math.isfinite(ty):
        tx = ty = 0.5 * (px + py)
    elif not math.isfinite(tx):
        tx = ty
    elif not math.isfinite(ty):
        ty = tx
    return w, -0.5 * (tx + ty), abs(tx - ty)


def _model(data: Mapping[str, Any], w: np.ndarray, kappa_alpha: float,
           kappa_beta: float, alpha: float, beta: float) -> dict:
    w, b, mismatch = hyperplane(data, w, kappa_alpha, kappa_beta)
    model: dict[str, Any] = {
        "b": float(b), "alpha": float(alpha), "beta": float(beta),
        "kappa_alpha": float(kappa_alpha), "kappa_beta": float(kappa_beta),
        "b_mismatch": float(mismatch), "feasible": True,
    }
    if data["kernel"] is None:
        # internal coordinates x / feature_scale -> the user's features
        scale = data.get("feature_scale")
        model["w"] = w if scale is None else w / scale
    else:  # w holds the feature-map coordinates u; the model, the coefficients T u
        model["dual_coef"] = data["coef_map"] @ w
        model["v"] = w
    return model


def _infeasible_model(data: Mapping[str, Any], solution: Solution) -> dict:
    floor = accuracy_from_kappa(0.0, data["bound"])
    return {
        "feasible": False, "alpha": floor, "beta": float(data.get("beta0", floor)),
        "kappa_alpha": 0.0 if data["bound"] == "chebyshev" else -math.inf,
        "kappa_beta": float(data["kappa0"]),
        "message": (
            f"beta0 = {data.get('beta0', math.nan):.6g} is not attainable: the largest "
            f"feasible beta0 is beta0_max = {data['beta0_max']:.6g} (eq. 3.44); the "
            "worst-case accuracy of the positive class is alpha = "
            f"{floor:g} ({solution.solver}: {solution.status.value})"
        ),
    }


def _decode_fractional(data: Mapping[str, Any], solution: Solution) -> dict:
    if solution.status in (Status.INFEASIBLE, Status.INFEASIBLE_INACCURATE) and \
            data["family"] == "bmpm":
        return _infeasible_model(data, solution)
    require_solution(solution, data["kind"])
    if "w" in solution.values:
        w = np.asarray(solution.values["w"], dtype=float)
    else:
        w = np.asarray(solution.values["v"], dtype=float)
    if not float(data["d"] @ w) > 0:
        raise ProgramError(
            f"solver {solution.solver!r} returned a point with w^T d <= 0; cannot normalise"
        )
    kappa = ratio(data, w)
    bound = data["bound"]
    if data["family"] == "mpm":
        acc = accuracy_from_kappa(kappa, bound)
        model = _model(data, w, kappa, kappa, acc, acc)
    else:
        model = _model(data, w, kappa, data["kappa0"], accuracy_from_kappa(kappa, bound),
                       data["beta0"])
    model["kappa"] = float(kappa)
    return model


def _certify_fractional(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the MPM/BMPM perspective SOCP at the returned :math:`v`, in O(data).

    No cvxpy problem is built: the KKT conditions of
    :math:`\min b_x\|R_xv\| + b_y\|R_yv\|` s.t. :math:`d^\top v - a_x\|R_xv\| -
    a_y\|R_yv\| \ge 1` (the fractional program of eqs. 3.13–3.14 / 3.40 / 4.8 after
    the Charnes–Cooper change, errata S004-D1) are checked with the multiplier in
    closed form, :math:`\lambda = P/(d^\top v - a_x\sigma_x - a_y\sigma_y)` (its value
    :math:`1/\kappa^*` at the optimum), and, where a norm's argument vanishes, an
    explicit subgradient fit with its dual-norm check
    (:func:`conicml.certificates.margin.fractional_certificate`).
    """
    v = solution.values.get("v")
    if v is None:
        return residuals(math.inf)
    v = np.asarray(v, dtype=float).ravel()
    if v.shape != data["d"].shape or not np.all(np.isfinite(v)):
        return residuals(math.inf)
    # kernel programs: their covariances (exactly Rx^T Rx, Ry^T Ry: Cholesky factors)
    # spare the certificate two n^3 products R^T R
    if data.get("coordinates") == "coefficients":
        return gram_fractional_certificate(data["scatter"], data["a"], data["b"], v,
                                           float(solution.objective))
    S = (data.get("Sx"), data.get("Sy")) if data.get("kernel") is not None else (None, None)
    return fractional_certificate(data["d"], data["Rx"], data["Ry"], data["a"], data["b"], v,
                                  float(solution.objective), *S, scatter=data.get("scatter"))


def _family_program(base: dict, family: str, a: tuple[float, float], b: tuple[float, float],
                    bound: str, description: str, **extra: Any) -> Program:
    kind = {"mpm": kinds.MPM, "bmpm": kinds.BMPM}[family]
    data = {**base, "family": family, "kind": kind, "a": (float(a[0]), float(a[1])),
            "b": b, "bound": bound, **extra}
    build = _build_coefficients if data.get("coordinates") == "coefficients" \
        else _build_fractional
    return Program(kind, data, build=build, decode=_decode_fractional,
                   certify=_certify_fractional,
                   default_solver="clarabel", description=description)


# --------------------------------------------------------------------------------------
# public formulations
# --------------------------------------------------------------------------------------
_KERNEL_DOC = """
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        Non-linear kernels need ``data = (X, y)`` and ``ridge > 0``.
    gamma, degree, coef0
        Kernel hyper-parameters (:func:`conicml.make_kernel`)."""


def _fill_doc(**parts: str) -> Any:
    """Decorator replacing ``<NAME>`` in a docstring by ``parts[NAME]``.

    A docstring written as ``\"\"\"...\"\"\" + SHARED`` is an expression, not
    a docstring, and leaves ``__doc__`` None; this keeps the docstring a literal
    and fills the shared parts in after the definition.
    """

    def fill(obj: Any) -> Any:
        doc = obj.__doc__
        for name, text in parts.items():
            doc = doc.replace(f"<{name}>", text)
        obj.__doc__ = doc
        return obj

    return fill


@_fill_doc(KERNEL_DOC=_KERNEL_DOC)
@ridge_pair
@takes_X_y
def mpm(
    data: ClassMoments | tuple,
    *,
    nu_x: float = 0.0,
    nu_y: float | None = None,
    ridge: float | tuple[float, float] = 0.0,
    relative_ridge: float = 0.0,
    bound: str = "chebyshev",
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    coordinates: str = "features",
) -> Program:
    r"""Minimax probability machine (Lanckriet et al. 2002; seed 004 eq. 4.8).

    .. math::

        \kappa^* = \max_{w^\top d = 1}
        \frac{1 - \nu_x\sigma_x(w) - \nu_y\sigma_y(w)}{\sigma_x(w) + \sigma_y(w)},
        \qquad \alpha^* = \beta^* = g(\kappa^*),

    solved as the SOCP in the Notes below (kind ``"socp.mpm"``, objective
    :math:`1/\kappa^*`). Robust version (Sec. 3.3): mean radii
    :math:`\nu_x, \nu_y` (``nu_y`` defaults to ``nu_x``; they may differ, note
    §2.1 [D]) and covariance radii :math:`\Sigma \to \Sigma + \rho I`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or ClassMoments
        The data (plug-in 1/N moments), or the class moments themselves (then no ``y``).
    y : array-like of shape (n_samples,), default=None
        Labels exactly +1/-1 (with ``X`` an array).
    nu_x, nu_y : float, default=0
        Robust mean radii (>= 0).
    ridge : float or (float, float), default=0
        The covariance ridge :math:`\rho` (glossary): :math:`\Sigma \to \Sigma + \rho I`
        (linear; the robust covariance radius of Sec. 3.3) or the :math:`\rho K`
        regulariser of Theorem 9 (kernel; must be > 0). A pair gives
        :math:`(\rho_x, \rho_y)` for the positive and negative class. The old keywords
        ``rho_x``/``rho_y`` still work for one release (``FutureWarning``). An
        absolute :math:`\rho I` is in the units of the features: it breaks the scale
        invariance of the model (use ``relative_ridge`` for that).
    relative_ridge : float, default=0
        A ridge relative to each feature's scale (linear kernel only):
        :math:`\Sigma \to \Sigma + \rho I + r\,\mathrm{diag}(v)` for both classes, with
        :math:`r` = ``relative_ridge`` and :math:`v_j` the variance of feature :math:`j`
        over the training inputs (from the moments:
        :math:`\pi_x\Sigma_{x,jj} + \pi_y\Sigma_{y,jj} + \pi_x\pi_y d_j^2`, with
        :math:`\pi_x = N_x/N`, or ½ for moments without sample sizes; a constant feature
        takes the mean of the other variances). Under a rescaling :math:`x \mapsto Dx`
        (:math:`D` positive diagonal) :math:`\Sigma + r\,\mathrm{diag}(v) \mapsto
        D(\Sigma + r\,\mathrm{diag}(v))D` and :math:`d \mapsto Dd`, so
        :math:`w \mapsto D^{-1}w` and the decision values are unchanged: the model stays
        scale-invariant. The estimators' default is :math:`r = 10^{-6}`.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        Map from κ to the reported accuracy (the hyperplane does not depend on it).<KERNEL_DOC>
    coordinates : {"features", "coefficients"}, default="features"
        A non-linear kernel's program variables (Notes, Kernels): the feature-map
        coordinates :math:`u`, or the dual coefficients themselves (no factorisation of
        :math:`K`; the ``ils-newton`` route of the kernel estimators).

    Returns
    -------
    Program
        Kind ``"socp.mpm"``; ``decode`` gives ``w`` (or ``dual_coef``), ``b``
        (positive iff :math:`w^\top x + b \ge 0`), ``alpha``, ``beta``,
        ``kappa``, ``b_mismatch``.

    Notes
    -----
    **One fractional program for the whole family.** After eliminating the
    threshold and normalising :math:`w^\top d = 1` (eqs. 3.18–3.20), MPM (eq. 4.8,
    Lanckriet et al. 2002), robust MPM (with :math:`\nu_x \ne \nu_y`) and
    (robust) BMPM (eqs. 3.13–3.14, 3.40) all maximise a concave–convex ratio

    .. math::

        \kappa^* = \max_{w^\top d = 1}\ \frac{1 - a_x\sigma_x(w) - a_y\sigma_y(w)}
                                             {b_x\sigma_x(w) + b_y\sigma_y(w)},

    * MPM: :math:`a = (\nu_x, \nu_y)`, :math:`b = (1, 1)`,
      :math:`\kappa^* = \kappa(\alpha) = \kappa(\beta)`;
    * BMPM at :math:`\beta_0`: :math:`a = (\nu_x, \kappa(\beta_0) + \nu_y)`, :math:`b = (1, 0)`,
      :math:`\kappa^* = \kappa(\alpha)` (eq. 3.14; robust: eq. 3.40 with
      :math:`-\nu_x` moved into the numerator),

    with :math:`\Sigma \to \Sigma^0 + \rho I` in the robust versions (Sec. 3.3).
    The Charnes–Cooper / perspective change of variables :math:`v = w\,s`,
    :math:`s = 1/(1 - a_x\sigma_x - a_y\sigma_y)` (errata S004-D1) turns it into
    the single SOCP

    .. math::

        \frac{1}{\kappa^*} = \min_v\ b_x\|R_x v\|_2 + b_y\|R_y v\|_2
        \quad\text{s.t.}\quad d^\top v - a_x\|R_x v\|_2 - a_y\|R_y v\|_2 \ge 1,

    with :math:`R^\top R = \Sigma`; :math:`w^* = v^*/(d^\top v^*)`. For MPM without
    robustness this is exactly Lanckriet's :math:`1/\kappa^* = \min \sigma_x +
    \sigma_y` s.t. :math:`w^\top d = 1`. The SOCP is **infeasible** exactly when
    :math:`\kappa^* \le 0`, i.e. for BMPM when :math:`\beta_0 \ge \beta_{0m}`
    (eq. 3.44): the solver's INFEASIBLE status is the "α = 0" answer, and decode
    reports ``alpha = 0`` (Gaussian: ½), ``feasible = False``.

    **Objective of the kinds** ``"socp.mpm"`` **and** ``"socp.bmpm"`` (the same for
    every solver): the optimal value :math:`1/\kappa^*` of the SOCP above. The
    specialized solvers ``rosen`` and ``dinkelbach`` solve the ratio directly and
    report :math:`1/\kappa^*` too.

    **Intercept** (eq. 3.23, with :math:`w^*` for the thesis's :math:`a^*`):
    :math:`t^* = w^\top\bar x - (\kappa_\alpha + \nu_x)\sigma_x = w^\top\bar y +
    (\kappa_\beta + \nu_y)\sigma_y`; both sides are computed and averaged, and
    their difference is returned as ``"b_mismatch"`` (zero at the optimum, Lemma 4).

    **Largest feasible** :math:`\beta_0` (eq. 3.44, closed form errata S004-D2):
    :math:`\kappa(\beta_{0m}) = \sqrt{d^\top\Sigma_y^{-1}d}` (robust:
    :math:`\sqrt{d^\top\Sigma_y'^{-1}d} - \nu_y`).

    **Kernels** (Sec. 3.4, Corollary 8, Theorem 9). :math:`w` becomes the
    coefficient vector on the training points (original sample order, not
    "x first"; the formulas are order-free), :math:`d = \tilde k_x - \tilde k_y`
    with :math:`\tilde k_x = \frac1{N_x}\sum_{i\in x} K_{i,:}`, and
    :math:`\Sigma_x = \frac1{N_x}\tilde K_x^\top\tilde K_x + \rho_x K`,
    :math:`\tilde K_x = K_x - \mathbf 1\tilde k_x^\top`. The program is written in the
    coordinates :math:`u` of the empirical feature map :math:`\Phi = U\Lambda^{1/2}`
    (:math:`K = U\Lambda U^\top` over the eigenvalues above ``_GRAM_RTOL`` times
    the largest), :math:`w = U\Lambda^{-1/2}u`: then :math:`Kw = \Phi u` and
    :math:`w^\top Kw = \|u\|^2`, so it is the linear program on :math:`\Phi` with
    :math:`\Sigma + \rho I` (well conditioned; the solvers' vectors and the
    ``"v"`` entry of a kernel model are :math:`u`, ``"dual_coef"`` is :math:`w`). With
    ``coordinates="coefficients"`` the variables are the dual coefficients :math:`z`
    themselves (training points ordered positive class first, ``"dual_coef"`` in the
    original order): :math:`d = Ke`, the covariances by
    :class:`~conicml.contracts.minimax.GramScatter` (products with :math:`K` and the
    class-centred Gram matrix only), the same program under :math:`u = \Phi^\top z`; a
    factor :math:`\Phi` is formed only for a solver that needs the dense matrices (the
    generic backends solve the form in :math:`u` and map back). The regulariser
    :math:`\rho_x K` (the robust replacement of Theorem 9) is **mandatory** for a
    non-linear kernel: without it the within-class scatter spans at most
    :math:`N - 2` directions and the problem is unbounded (errata S004-§5.3), so
    ``ridge > 0`` is required. Decision:
    :math:`f(z) = \sum_i w_i K(z, z_i) + b` (positive iff :math:`f \ge 0`).
    """
    bound = _check_bound(bound)
    nu_y = nu_x if nu_y is None else nu_y
    base = _base_data(data, nu_x=nu_x, nu_y=nu_y, ridge=ridge,
                      relative_ridge=relative_ridge, kernel=kernel,
                      gamma=gamma, degree=degree, coef0=coef0, coordinates=coordinates)
    robust = base["nu_x"] or base["nu_y"] or base["rho_x"] or base["rho_y"] or \
        base["relative_ridge"]
    desc = f"{'robust ' if robust else ''}MPM ({kernel} kernel)"
    return _family_program(base, "mpm", (base["nu_x"], base["nu_y"]), (1.0, 1.0), bound, desc,
                           beta0_max=math.nan, kappa0=math.nan)


@_fill_doc(KERNEL_DOC=_KERNEL_DOC)
@ridge_pair
@takes_X_y
def bmpm(
    data: ClassMoments | tuple,
    beta0: float,
    *,
    nu_x: float = 0.0,
    nu_y: float | None = None,
    ridge: float | tuple[float, float] = 0.0,
    relative_ridge: float = 0.0,
    bound: str = "chebyshev",
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    coordinates: str = "features",
) -> Program:
    r"""Biased minimax probability machine (seed 004 eqs. 3.5–3.14, 3.40, Theorem 9).

    .. math::

        \kappa(\alpha^*) = \max_{w^\top d = 1}
        \frac{1 - (\kappa(\beta_0) + \nu_y)\sigma_y(w)}{\sigma_x(w)} - \nu_x

    (the fractional program 3.13–3.14; robust: 3.40), solved as the
    perspective SOCP in the Notes of :func:`mpm`, kind ``"socp.bmpm"`` (objective
    :math:`1/\kappa(\alpha^*)`), also accepted by ``rosen`` and
    ``dinkelbach``. :math:`\beta_0 \in [0, \beta_{0m})` with
    :math:`\kappa(\beta_{0m}) = \sqrt{d^\top\Sigma_y^{-1}d} - \nu_y` (eq. 3.44);
    a larger :math:`\beta_0` is not an error: the solvers return INFEASIBLE and
    ``decode`` gives ``alpha = 0`` (Gaussian: ½), ``feasible = False`` and a
    message naming :math:`\beta_{0m}` (``program.data["beta0_max"]``).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or ClassMoments
        The data (plug-in 1/N moments), or the class moments themselves (then no ``y``).
    y : array-like of shape (n_samples,), default=None
        Labels exactly +1/-1 (with ``X`` an array).
    beta0 : float
        Required worst-case accuracy of the negative class, in [0, 1)
        (Gaussian bound: [0.5, 1)).
    nu_x, nu_y, ridge, relative_ridge, bound
        As in :func:`mpm`.<KERNEL_DOC>
    coordinates : {"features", "coefficients"}, default="features"
        As in :func:`mpm`.

    Returns
    -------
    Program
        ``decode`` gives ``w``/``dual_coef``, ``b``, ``alpha``, ``beta`` (= β0),
        ``kappa_alpha``, ``kappa_beta``, ``feasible``.
    """
    bound = _check_bound(bound)
    try:
        beta0 = float(beta0)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"beta0 must be a number in [0, 1), got {beta0!r}") from exc
    lo = 0.5 if bound == "gaussian" else 0.0
    if not lo <= beta0 < 1.0:
        raise ProgramError(
            f"beta0 must lie in [{lo:g}, 1) for the {bound} bound, got {beta0!r}"
            + (" (the Gaussian bound is restricted to accuracies >= 1/2)" if lo else "")
        )
    nu_y = nu_x if nu_y is None else nu_y
    base = _base_data(data, nu_x=nu_x, nu_y=nu_y, ridge=ridge,
                      relative_ridge=relative_ridge, kernel=kernel,
                      gamma=gamma, degree=degree, coef0=coef0, coordinates=coordinates)
    return _bmpm_program(base, beta0, bound)


def _bmpm_program(base: dict, beta0: float, bound: str) -> Program:
    """BMPM program on already-validated moment data (used by MEMPM's inner solves)."""
    kappa0 = kappa_from_accuracy(beta0, bound)
    kmax = _kappa_max(base)
    beta0_max = accuracy_from_kappa(kmax, bound)
    desc = f"BMPM (beta0={beta0:g}, {bound}, {'linear' if base['kernel'] is None else 'kernel'})"
    return _family_program(base, "bmpm", (base["nu_x"], kappa0 + base["nu_y"]), (1.0, 0.0),
                           bound, desc, beta0=beta0, kappa0=kappa0, beta0_max=beta0_max)


@_fill_doc(KERNEL_DOC=_KERNEL_DOC)
@ridge_pair
@takes_X_y
def mempm(
    data: ClassMoments | tuple,
    theta: float | None = None,
    bound: str = "chebyshev",
    *,
    costs: tuple[float, float] | None = None,
    nu_x: float = 0.0,
    nu_y: float | None = None,
    ridge: float | tuple[float, float] = 0.0,
    relative_ridge: float = 0.0,
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
) -> Program:
    r"""Minimum-error minimax probability machine (seed 004 eqs. 3.2–3.4, 3.21–3.26, 3.40).

    .. math::

        \max_{\beta \in [\beta_{lo}, \beta_{0m}]}\ F(\beta) = \theta\,\alpha^*(\beta)
        + (1-\theta)\beta, \qquad \alpha^*(\beta) = \text{BMPM}(\beta_0 = \beta),

    a sequential program (kind ``"sequential.mempm"``, no single conic form;
    objective :math:`F(\beta^*)`), solved by ``quadratic-interpolation`` (note
    A4): a 1-D line search over β with one BMPM solve per step. The problem is
    nonconvex in general (Sec. 3.7); the line search finds a local maximum,
    bracketing the domain ends. Close to :math:`\beta_{0m}`, from
    :math:`\kappa(\beta) = (1 - 10^{-3})\,\kappa(\beta_{0m})` on
    (``data["beta_stop"]``), :math:`F` is evaluated at the analytic end point
    (:math:`\alpha` at its floor, :math:`w = \Sigma_y^{-1}d`) rather than by a
    BMPM solve: the BMPM program degenerates there (interior-point solvers fail),
    and :math:`\alpha^*(\beta)` is below about :math:`10^{-6}` on that stretch.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or ClassMoments
        The data (plug-in 1/N moments), or the class moments themselves (then no ``y``).
    y : array-like of shape (n_samples,), default=None
        Labels exactly +1/-1 (with ``X`` an array).
    theta : float in [0, 1], optional
        Weight of the positive class's accuracy. ``None``: the prior
        :math:`N_x/N` (needs sample sizes, i.e. ``X, y`` or moments with
        ``n_pos``/``n_neg``); ``0.5`` is the MS criterion :math:`\alpha + \beta`
        (Sec. 5.4) up to a factor 2.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        Chebyshev (distribution-free) or Gaussian :math:`\kappa = \Phi^{-1}(\cdot)`
        (eqs. 3.25–3.26; restricted to :math:`\alpha, \beta \ge \tfrac12`).
    costs : (C_FN, C_FP), optional
        Misclassification costs of a positive and of a negative point
        (Sec. 5.5, Kx/Ky corrected per errata S004-P9): the objective is
        :math:`K_x\alpha + K_y\beta` with :math:`K_x = C_{FN}N_x`,
        :math:`K_y = C_{FP}N_y`, i.e. :math:`\theta = K_x/(K_x+K_y)`
        (exclusive with ``theta``).
    nu_x, nu_y, ridge, relative_ridge
        Robust radii (Sec. 3.3, eq. 3.40) / kernel regulariser, as in :func:`mpm`.<KERNEL_DOC>

    Returns
    -------
    Program
        ``decode`` gives ``w``/``dual_coef``, ``b``, ``alpha``, ``beta``,
        ``objective`` (:math:`\theta\alpha + (1-\theta)\beta`), ``theta``.

    Notes
    -----
    **MEMPM** (eqs. 3.2–3.4, 3.21–3.22): maximise :math:`\theta\alpha + (1-\theta)\beta`.
    For fixed :math:`\beta` the inner problem is BMPM with :math:`\beta_0 = \beta`,
    so MEMPM is the 1-D problem :math:`F(\beta) = \theta\,\alpha^*(\beta) +
    (1-\theta)\beta` on :math:`[\beta_{lo}, \beta_{0m}]` (kind
    ``"sequential.mempm"``, solved by ``quadratic-interpolation``; objective
    :math:`F(\beta^*)`), with :math:`\beta_{lo} = 0` (Chebyshev) or ½ (Gaussian)
    and :math:`F(\beta_{0m}) = \theta\alpha_{\min} + (1-\theta)\beta_{0m}` (errata S004-P7
    item 7: α is clipped at 0, eq. 3.40's :math:`\max(\cdot, 0)`; the domain ends at
    :math:`\beta_{0m}`, as in the thesis, because beyond it only the trivial
    :math:`\alpha = 0` hyperplanes remain). Cost-sensitive weights (Sec. 5.5,
    corrected per errata S004-P9): :math:`K_x = C_{FN} N_x`,
    :math:`K_y = C_{FP} N_y`, :math:`\theta = K_x/(K_x + K_y)`; the MS criterion
    (Sec. 5.4) is :math:`\theta = \tfrac12`.
    """
    bound = _check_bound(bound)
    nu_y = nu_x if nu_y is None else nu_y
    base = _base_data(data, nu_x=nu_x, nu_y=nu_y, ridge=ridge,
                      relative_ridge=relative_ridge, kernel=kernel,
                      gamma=gamma, degree=degree, coef0=coef0)
    weights = None
    if costs is not None:
        if theta is not None:
            raise ProgramError("give either theta or costs=(C_FN, C_FP), not both")
        try:
            c_fn, c_fp = costs
        except (TypeError, ValueError) as exc:
            raise ProgramError(f"costs must be a pair (C_FN, C_FP), got {costs!r}") from exc
        c_fn, c_fp = check_positive(c_fn, "costs[0] (C_FN)"), check_positive(c_fp, "costs[1]")
        if base["n_pos"] is None or base["n_neg"] is None:
            raise ProgramError(
                "costs need the class sizes: pass (X, y) or moments with n_pos/n_neg"
            )
        weights = (c_fn * base["n_pos"], c_fp * base["n_neg"])  # Kx, Ky (corrected)
        theta = weights[0] / (weights[0] + weights[1])
    elif theta is None:
        if base["n_pos"] is None or base["n_neg"] is None:
            raise ProgramError(
                "theta=None uses the prior N_x/N, but the moments carry no sample sizes; "
                "pass theta explicitly (0.5 for the MS criterion) or moments with n_pos/n_neg"
            )
        theta = base["n_pos"] / (base["n_pos"] + base["n_neg"])
    else:
        theta = check_positive(theta, "theta", allow_zero=True)
        if theta > 1:
            raise ProgramError(f"theta must lie in [0, 1], got {theta!r}")
    kmax = _kappa_max(base)
    beta_end = accuracy_from_kappa(kmax, bound)
    # The end of the domain is treated analytically from beta_stop on: as
    # kappa(beta) -> kappa_max the BMPM feasible set degenerates to the ray of
    # Sigma_y^-1 d, the Charnes-Cooper solution diverges and interior-point solvers
    # fail (or return alpha ~ 1e-32); alpha*(beta) vanishes quadratically in
    # kappa_max - kappa(beta) (about 1e-6 at beta_stop), so on [beta_stop, beta0m]
    # the search uses alpha = its floor and w = Sigma_y^-1 d (the exact end point).
    beta_stop = accuracy_from_kappa(kmax * (1.0 - _END_RTOL), bound)
    beta_lo = 0.5 if bound == "gaussian" else 0.0
    if beta_end <= beta_lo:
        raise ProgramError(
            f"the largest attainable beta0 ({beta_end:.4g}) is below {beta_lo:g}: the "
            "Gaussian MEMPM needs alpha, beta >= 1/2; use bound='chebyshev'"
        )
    data_ = {**base, "family": "mempm", "kind": kinds.MEMPM, "theta": float(theta),
             "bound": bound, "beta_lo": beta_lo, "beta_end": beta_end, "kappa_max": kmax,
             "beta_stop": beta_stop,
             "weights": weights}
    data_["mempm"] = MEMPMData(
        theta=float(theta), beta_lo=beta_lo, beta_end=beta_end,
        alpha_floor=accuracy_from_kappa(0.0, bound), endpoint_w=_endpoint_w(data_),
        make_inner=partial(inner_bmpm, data_), make_model=partial(mempm_model, data_),
        bound=bound, beta_stop=beta_stop)
    return Program(kinds.MEMPM, data_, build=None, decode=_decode_mempm,
                   certify=_certify_mempm,
                   default_solver="quadratic-interpolation",
                   description=f"MEMPM (theta={theta:.4g}, {bound}, {kernel} kernel)")


def mempm_value(data: Mapping[str, Any], beta: float, alpha: float) -> float:
    r""":math:`F = \theta\alpha + (1-\theta)\beta`."""
    return data["theta"] * alpha + (1.0 - data["theta"]) * beta


def inner_bmpm(data: Mapping[str, Any], beta: float, previous: Program | None = None
               ) -> Program:
    r"""The BMPM program at ``beta0 = beta`` on the moments of a MEMPM or BMPM program.

    Given the ``previous`` inner program, the new one re-uses its compiled
    cvxpy problem (DPP): only the parameter :math:`a_y = \kappa(\beta) + \nu_y`
    changes between two values of β.
    """
    keep = ("moments", "d", "Rx", "Ry", "mx", "my", "nu_x", "nu_y", "rho_x", "rho_y",
            "relative_ridge", "kernel", "X", "n_pos", "n_neg", "feature_scale", "coef_map",
            "Sx", "Sy", "scatter", "coordinates", "feature_map")
    keep = tuple(k for k in keep if k in data)
    prog = _bmpm_program({k: data[k] for k in keep}, float(beta), data["bound"])
    if previous is not None and previous.is_built:
        prog = Program(prog.kind, prog.data,
                       build=partial(_reuse_form, previous.form),
                       certify=_certify_fractional, decode=_decode_fractional,
                       default_solver=prog.default_solver,
                       description=prog.description)
    return prog


def _reuse_form(form: ConicForm, data: Mapping[str, Any]) -> ConicForm:
    form.parameters["a_y"].value = data["a"][1]
    return form


def _endpoint_w(data: Mapping[str, Any]) -> np.ndarray:
    r""":math:`w \propto \Sigma_y^{-1} d` (the only hyperplane at :math:`\beta = \beta_{0m}`)."""
    Ry, d = np.asarray(data["Ry"]), data["d"]
    w = np.linalg.lstsq(Ry.T @ Ry, d, rcond=None)[0]
    return w / float(d @ w)


def mempm_model(data: Mapping[str, Any], beta: float, w: np.ndarray) -> dict:
    r"""MEMPM model at :math:`(\beta, w)`; :math:`\kappa_\alpha` by eq. 3.21, clipped (3.40)."""
    bound = data["bound"]
    w = np.asarray(w, dtype=float)
    w = w / float(data["d"] @ w)
    kb = kappa_from_accuracy(beta, bound)
    sx, sy = _sigmas(data, w)
    ka = (1.0 - (kb + data["nu_y"]) * sy) / sx - data["nu_x"] if sx > 0 else math.inf
    ka = max(ka, 0.0)
    alpha = accuracy_from_kappa(ka, bound)
    model = _model(data, w, ka, kb, alpha, beta)
    model["objective"] = mempm_value(data, beta, alpha)
    model["theta"] = float(data["theta"])
    if data["weights"] is not None:
        model["cost_objective"] = data["weights"][0] * alpha + data["weights"][1] * beta
    return model


def _certify_mempm(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""conicml's certificate of a MEMPM point :math:`(\beta, w)` (``Program.certify``).

    ``primal``: :math:`\beta` outside :math:`[\beta_{lo}, \beta_{0m}]`;
    ``dual``: the KKT certificate of :math:`w` as the optimum of the inner
    BMPM at :math:`\beta_0 = \beta` (:func:`_certify_fractional` on its perspective
    SOCP, in O(data)); ``gap``: that certificate's complementarity and
    the disagreement between the reported objective and
    :math:`F(\beta) = \theta\alpha + (1-\theta)\beta` recomputed at
    :math:`(\beta, w)`. From ``beta_stop`` on (the analytic end of the domain) ``dual``
    is the relative distance of :math:`w` to :math:`\Sigma_y^{-1}d` instead. The 1-D
    search over :math:`\beta` is *not* certified globally here (the problem is
    nonconvex in :math:`\beta`, Sec. 3.7).
    """
    beta = float(np.asarray(solution.values.get("beta", np.nan)))
    w = np.asarray(solution.values.get("w", np.nan), dtype=float)
    if not math.isfinite(beta) or w.shape != data["d"].shape or not np.all(np.isfinite(w)):
        return residuals(math.inf)
    if not float(data["d"] @ w) > 0:
        return residuals(math.inf)
    lo, hi = data["beta_lo"], data["beta_end"]
    primal = max(0.0, lo - beta, beta - hi)
    F = mempm_model(data, beta, w)["objective"]
    claim = rel(float(solution.objective) - F, F)
    stop = data.get("beta_stop")
    if stop is not None and beta >= stop:
        # the analytic end of the domain (see mempm): alpha at its floor and the only
        # hyperplane w ~ Sigma_y^-1 d (eq. 3.44); checked as the distance to it
        w_end = data["mempm"].endpoint_w
        wn = w / float(data["d"] @ w)
        dist = float(np.linalg.norm(wn - w_end)) / max(float(np.linalg.norm(w_end)), 1e-300)
        return residuals(primal, dist, claim)
    inner = inner_bmpm(data, min(max(beta, lo), hi))
    wn = w / float(data["d"] @ w)
    ax, ay = inner.data["a"]
    sx, sy = _sigmas(data, wn)
    num = 1.0 - ax * sx - ay * sy
    if not (num > 0 and math.isfinite(num)):  # alpha = 0 (beta at the end of the domain)
        return residuals(primal, math.nan, claim)
    res = fractional_certificate(inner.data["d"], inner.data["Rx"], inner.data["Ry"],
                                 inner.data["a"], inner.data["b"], wn / num, None)
    gap = max(res.gap, claim) if math.isfinite(res.gap) else claim
    return residuals(max(primal, res.primal), res.dual, gap)


def _decode_mempm(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, kinds.MEMPM)
    return mempm_model(data, float(solution.values["beta"]), solution.values["w"])


def decision_values(data: Mapping[str, Any], model: Mapping[str, Any],
                    X_new: np.ndarray) -> np.ndarray:
    """Decision values :math:`f(z) = w^\\top z + b` (kernel: :math:`\\sum_i w_i K(z, z_i) + b`)."""
    if "w" in model:
        return np.asarray(X_new, dtype=float) @ model["w"] + model["b"]
    kern: Kernel = data["kernel"]
    if kern.name == "precomputed":
        return np.asarray(X_new, dtype=float) @ model["dual_coef"] + model["b"]
    return kern(np.asarray(X_new, dtype=float), data["X"]) @ model["dual_coef"] + model["b"]
