r"""Contract of the feature-scaled Gaussian-kernel SVM (Tayal 2014, chapter 7).

:class:`FeatureScalingObjective` evaluates :math:`\Omega` (7.7), :math:`\bar\Omega` (7.14)
and :math:`\Psi` (7.15) with exact gradients and Hessians (the formulas are in
:mod:`conicml.formulations.feature_scaling`); :class:`FeatureScaledSVM` is what a
program of kind ``nonconvex.fs.svm`` carries and the ``fs-*`` solvers read: the
objective, the starting scales and how to build the convex SVM block at a Gram matrix.
:func:`projected_hessian_label` gives the first- and second-order numbers of a point
(section 7.4), shared by the program's certificate and the solvers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._utils.threads import one_blas_thread
from .._utils.validation import check_positive, check_X_y
from ..exceptions import ProgramError

__all__ = [
    "FeatureScaledSVM",
    "FeatureScalingObjective",
    "fs_kernel",
    "projected_hessian_label",
    "second_order",
    "smoothed_hinge",
    "small_blas",
    "support_mask",
]

#: Largest pairwise-difference tensor (n * n * d doubles) that ``diffs`` builds (the
#: derivatives never build it).
MAX_TENSOR_BYTES = 600e6


def smoothed_hinge(t: np.ndarray, eps: float = 0.5, order: int = 0) -> np.ndarray:
    r"""The smoothed hinge :math:`\ell_\epsilon` (7.8) or its derivative of ``order`` 1, 2.

    .. math::

        \ell_\epsilon(t) = \begin{cases} 1 - \epsilon - t & t < 1 - 2\epsilon\\
        (1-t)^2/(4\epsilon) & 1 - 2\epsilon \le t < 1\\ 0 & t \ge 1\end{cases}
    """
    t = np.asarray(t, dtype=float)
    lin = t < 1 - 2 * eps
    quad = (~lin) & (t < 1)
    out = np.zeros_like(t)
    if order == 0:
        out[lin] = 1 - eps - t[lin]
        out[quad] = (1 - t[quad]) ** 2 / (4 * eps)
    elif order == 1:
        out[lin] = -1.0
        out[quad] = -(1 - t[quad]) / (2 * eps)
    elif order == 2:
        out[quad] = 1.0 / (2 * eps)
    else:
        raise ValueError(f"order must be 0, 1 or 2, got {order!r}")
    return out


def fs_kernel(A: np.ndarray, B: np.ndarray, z: np.ndarray) -> np.ndarray:
    r"""The feature-scaled Gaussian kernel (7.17): :math:`\exp(-\sum_l z_l^2(a_l - b_l)^2)`."""
    Az, Bz = A * z, B * z
    sq = (Az**2).sum(1)[:, None] + (Bz**2).sum(1)[None, :] - 2.0 * Az @ Bz.T
    return np.exp(-np.maximum(sq, 0.0))


class FeatureScalingObjective:
    r"""The objectives :math:`\Omega` (7.7), :math:`\bar\Omega` (7.14), :math:`\Psi` (7.15).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels exactly +1 / -1, both present.
    C : float
        Loss weight (> 0).
    mu : float
        :math:`\ell_1` weight on :math:`z` (>= 0).
    eps : float, default=0.5
        Smoothing of the hinge; chapter 7 uses 0.5.
    """

    def __init__(self, X: Any, y: Any, C: float, mu: float, eps: float = 0.5) -> None:
        X, y = check_X_y(X, y)
        self.X, self.y = X, y
        self.C = check_positive(C, "C")
        self.mu = check_positive(mu, "mu", allow_zero=True)
        self.eps = check_positive(eps, "eps")
        if self.eps > 1.0:
            raise ProgramError(f"eps must be in (0, 1], got {eps!r}")
        self.n, self.d = X.shape
        self._Dt: np.ndarray | None = None
        self._centred: np.ndarray | None = None
        self._last_kernel: tuple[bytes, np.ndarray] | None = None
        self._last_label: tuple[bytes, Any] | None = None

    # -- pieces --------------------------------------------------------------------------
    @property
    def diffs(self) -> np.ndarray:
        r"""The tensor :math:`D_{ijl} = (x_{il} - x_{jl})^2`, shape (n, n, d) (built once).

        Not used by the derivatives (they are formed from products of n x n matrices with
        the data); kept for inspection at small n."""
        if self._Dt is None:
            size = self.n * self.n * self.d * 8
            if size > MAX_TENSOR_BYTES:
                raise ProgramError(
                    f"the exact derivatives need an n*n*d tensor of {size / 1e6:.0f} MB "
                    f"(n={self.n}, d={self.d}); above {MAX_TENSOR_BYTES / 1e6:.0f} MB: "
                    "subsample the training set"
                )
            X = self.X
            self._Dt = (X[:, None, :] - X[None, :, :]) ** 2
        return self._Dt

    def kernel(self, z: np.ndarray) -> np.ndarray:
        """:math:`K_z` on the training set (from inner products: no n x n x d tensor).

        The last matrix is kept (read-only) with its ``z``: the methods ask for the same
        scales several times in a row (the trust region's last point, then the SVM block
        and the next block's start)."""
        z = np.asarray(z, float)
        key = z.tobytes()
        if self._last_kernel is not None and self._last_kernel[0] == key:
            return self._last_kernel[1]
        K = fs_kernel(self._Xc, self._Xc, z)
        K.setflags(write=False)
        self._last_kernel = (key, K)
        return K

    @property
    def _Xc(self) -> np.ndarray:
        """The centred inputs (the differences :math:`x_i - x_j` do not change, and the
        expanded sums below cancel less than on data far from the origin)."""
        if self._centred is None:
            self._centred = self.X - self.X.mean(axis=0)
        return self._centred

    def _kz(self, K: np.ndarray, z: np.ndarray, v: np.ndarray) -> np.ndarray:
        r"""Columns :math:`(\partial_{z_l}K)v`, shape (n, d).

        :math:`(\partial_{z_l}K)_{ij} = -2z_l(x_{il} - x_{jl})^2K_{ij}`; with
        :math:`M = K\operatorname{diag}(v)`, :math:`\sum_j M_{ij}(x_{il} - x_{jl})^2 =
        x_{il}^2(M\mathbf 1)_i - 2x_{il}(MX)_{il} + (MX^{\circ 2})_{il}`: three
        products with the n x n matrix, :math:`O(n^2d)`.
        """
        A = self._Xc
        M = K * v[None, :]
        rows = M.sum(axis=1)
        MA = M @ A
        MA2 = M @ (A * A)
        return -2.0 * z[None, :] * (A * A * rows[:, None] - 2.0 * A * MA + MA2)

    def _kzz(self, K: np.ndarray, z: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        r""":math:`u^\top(\partial^2_{z_lz_m}K)v`, shape (d, d).

        :math:`\partial^2_{z_lz_m}K_{ij} = (4z_lz_mD_{ijl}D_{ijm} -
        2\delta_{lm}D_{ijl})K_{ij}`, :math:`D_{ijl} = (x_{il} - x_{jl})^2`. With
        :math:`W = K\circ uv^\top`, :math:`s_l = \sum_{ij}W_{ij}D_{ijl}` and
        :math:`S_{lm} = \sum_{ij}W_{ij}D_{ijl}D_{ijm}` are expanded in powers of
        :math:`x_{il}, x_{jl}` into products of W with :math:`X`, :math:`X^{\circ 2}` and
        the pairwise products :math:`x_{il}x_{im}` (:math:`O(n^2d^2)` time, :math:`O(n^2 +
        nd^2)` memory) instead of the n x n x d tensor :math:`D`.
        """
        A = self._Xc
        A2 = A * A
        W = K * np.outer(u, v)
        r, c = W.sum(axis=1), W.sum(axis=0)
        WA, WtA, WA2 = W @ A, W.T @ A, W @ A2
        # s_l = sum_ij W_ij (a_il^2 - 2 a_il a_jl + a_jl^2)
        s = A2.T @ r + A2.T @ c - 2.0 * np.einsum("il,il->l", A, WA)
        # S_lm: the nine terms of (a_i^2 - 2 a_i a_j + a_j^2)(b_i^2 - 2 b_i b_j + b_j^2)
        AWA, AWtA = A * WA, A * WtA
        S = A2.T @ ((r + c)[:, None] * A2)
        S -= 2.0 * (A2.T @ AWA + AWA.T @ A2 + AWtA.T @ A2 + A2.T @ AWtA)
        T = A2.T @ WA2
        S += T + T.T
        d = A.shape[1]
        il, im = np.triu_indices(d)
        P = A[:, il] * A[:, im]  # x_il x_im, one column per pair l <= m
        cross = np.einsum("ip,ip->p", P, W @ P)
        T5 = np.zeros((d, d))
        T5[il, im] = cross
        T5[im, il] = cross
        S += 4.0 * T5
        return 4.0 * np.outer(z, z) * S - 2.0 * np.diag(s)

    # -- the one evaluation ----------------------------------------------------------------
    def evaluate(
        self,
        beta: np.ndarray,
        b: float,
        z: np.ndarray,
        lam: float = 1.0,
        *,
        margin: str = "kernel",
        wrt: tuple[str, ...] = ("beta", "b", "z", "lam"),
        order: int = 2,
    ) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        r"""Value, gradient and Hessian over the variable blocks ``wrt``.

        ``margin="kernel"``: the margin term :math:`\bar\beta^\top K_z\bar\beta/(2\lambda^2)`
        (:math:`\Omega` at :math:`\lambda = 1`, :math:`\bar\Omega`);
        ``margin="unit"``: :math:`1/(2\lambda^2)` (:math:`\Psi`). Blocks are ordered
        ``beta`` (n), ``b`` (1), ``z`` (d), ``lam`` (1).
        """
        beta = np.asarray(beta, float)
        z = np.asarray(z, float)
        lam = float(lam)
        y, C, mu, eps = self.y, self.C, self.mu, self.eps
        K = self.kernel(z)
        Kb = K @ beta
        f = Kb + b
        t = y * f / lam
        kern = margin == "kernel"
        Mk = float(beta @ Kb) if kern else 1.0
        value = Mk / (2 * lam**2) + C * float(np.sum(smoothed_hinge(t, eps))) + mu * float(z.sum())
        if order == 0:
            return value, None, None
        l1 = smoothed_hinge(t, eps, 1)
        a = C * y * l1 / lam
        KB = self._kz(K, z, beta)  # df/dz, (n, d)
        qg = a + beta / (2 * lam**2) if kern else a
        grads = {
            "beta": (Kb / lam**2 if kern else 0.0) + K @ a,
            "b": np.array([a.sum()]),
            "z": qg @ KB + mu,
            "lam": np.array([-Mk / lam**3 - float(np.sum(C * l1 * t)) / lam]),
        }
        grad = np.concatenate([np.atleast_1d(grads[k]) * np.ones(self._size(k)) for k in wrt])
        if order == 1:
            return value, grad, None
        l2 = smoothed_hinge(t, eps, 2)
        w = C * l2 / lam**2
        e = -C * y * (l2 * t + l1) / lam**2
        llam = float(np.sum(C * (l2 * t**2 + 2 * l1 * t))) / lam**2
        blocks: dict[tuple[str, str], np.ndarray] = {}
        need = set(wrt)
        if "beta" in need:
            KwK = K @ (w[:, None] * K)
            blocks["beta", "beta"] = (K / lam**2 if kern else 0.0) + KwK
            blocks["beta", "b"] = (K @ w)[:, None]
            blocks["beta", "z"] = (((KB / lam**2) if kern else 0.0) + self._kz(K, z, a)
                                   + K @ (w[:, None] * KB))
            col = ((-2 * Kb / lam**3) if kern else 0.0) + K @ e
            blocks["beta", "lam"] = col[:, None]
        blocks["b", "b"] = np.array([[w.sum()]])
        blocks["b", "z"] = (w @ KB)[None, :]
        blocks["b", "lam"] = np.array([[e.sum()]])
        blocks["z", "z"] = self._kzz(K, z, qg, beta) + KB.T @ (w[:, None] * KB)
        zl = e @ KB - ((beta @ KB) / lam**3 if kern else 0.0)
        blocks["z", "lam"] = np.asarray(zl)[:, None]
        blocks["lam", "lam"] = np.array([[3 * Mk / lam**4 + llam]])
        rows = []
        for r in wrt:
            row = []
            for c in wrt:
                if (r, c) in blocks:
                    row.append(blocks[r, c])
                else:
                    row.append(blocks[c, r].T)
            rows.append(np.hstack(row))
        hess = np.vstack(rows)
        return value, grad, 0.5 * (hess + hess.T)

    def _size(self, block: str) -> int:
        return {"beta": self.n, "b": 1, "z": self.d, "lam": 1}[block]

    # -- the three objectives ---------------------------------------------------------------
    def omega(self, beta: np.ndarray, b: float, z: np.ndarray, order: int = 2):
        r""":math:`\Omega` (7.7) over :math:`x = (\beta, b, z)`."""
        return self.evaluate(beta, b, z, 1.0, margin="kernel", wrt=("beta", "b", "z"),
                             order=order)

    def omega_bar(self, beta: np.ndarray, b: float, z: np.ndarray, lam: float,
                  order: int = 2, wrt: tuple[str, ...] = ("beta", "b", "z", "lam")):
        r""":math:`\bar\Omega` (7.14) over ``wrt`` (default: all of
        :math:`(\bar\beta, \bar b, z, \lambda)`)."""
        return self.evaluate(beta, b, z, lam, margin="kernel", wrt=wrt, order=order)

    def psi(self, z: np.ndarray, lam: float, beta: np.ndarray, b: float, order: int = 2):
        r""":math:`\Psi` (7.15) over :math:`(z, \lambda)` at fixed :math:`(\bar\beta, \bar b)`."""
        return self.evaluate(beta, b, z, lam, margin="unit", wrt=("z", "lam"), order=order)


@dataclass(frozen=True)
class FeatureScaledSVM:
    r"""The data of a ``nonconvex.fs.svm`` program.

    Attributes
    ----------
    objective : FeatureScalingObjective
        :math:`\Omega`, :math:`\bar\Omega`, :math:`\Psi` on the training set.
    z0 : ndarray of shape (d,)
        The starting scales (the thesis starts at :math:`\mathbf 1`, F37).
    svm_dual : callable
        ``svm_dual(G) -> Program``: the SVM dual (kind ``qp.svm.dual``) with the
        precomputed Gram matrix ``G`` and the program's labels and ``C``; its decode
        gives ``dual_coef`` (:math:`\beta = y\circ\alpha`) and ``b``. The smoothed-hinge
        block uses :math:`G = K_z + (2\epsilon/C)I`, GMKL the hinge's :math:`G = K_z`.
    """

    objective: FeatureScalingObjective
    z0: np.ndarray
    svm_dual: Callable[[np.ndarray], Any]


def small_blas(obj: FeatureScalingObjective) -> Any:
    """BLAS on one thread for the method's dense products, at every size: the products
    with the n x n kernel matrix have the d features as their other dimension (memory-
    bound), and small matrices pay the thread start-up; OpenBLAS's thread pool was
    slower at n = 2 000 as well when other processes held the cores. ``obj`` is kept
    for the callers' signature."""
    del obj
    return one_blas_thread()


def support_mask(z: np.ndarray, threshold: float = 0.01) -> np.ndarray:
    """Features with :math:`z_l > 0.01\\max_k z_k` (the thesis's zero threshold)."""
    z = np.asarray(z, float)
    top = float(np.max(z, initial=0.0))
    return z > threshold * top if top > 0 else np.zeros(z.shape, bool)


def second_order(obj: FeatureScalingObjective, beta: np.ndarray, b: float, z: np.ndarray
                 ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """``(Omega, gradient, eigenvalues of the projected Hessian, free mask)`` at a point.

    The free variables are :math:`\\beta`, :math:`b` and the :math:`z_l` of
    :func:`support_mask`. The last result is kept on ``obj`` with its point (the
    certificate and ``decode`` both read it; the eigenvalues cost :math:`O((n + d)^3)`).
    """
    beta, z = np.asarray(beta, float), np.asarray(z, float)
    key = beta.tobytes() + np.float64(b).tobytes() + z.tobytes()
    if obj._last_label is not None and obj._last_label[0] == key:
        return obj._last_label[1]
    with small_blas(obj):
        value, g, H = obj.omega(beta, b, z)
    free = np.concatenate([np.ones(obj.n + 1, bool), support_mask(z)])
    # the symmetric eigensolver on one BLAS thread at every size: its tridiagonal
    # reduction is memory-bound, and OpenBLAS's thread pool made it 5-40x slower when
    # other processes hold the cores
    with one_blas_thread():
        eig = np.linalg.eigvalsh(H[np.ix_(free, free)])
    out = (float(value), g, eig, free)
    obj._last_label = (key, out)
    return out


def projected_hessian_label(obj: FeatureScalingObjective, beta: np.ndarray, b: float,
                            z: np.ndarray, stationarity_tol: float = 1e-2
                            ) -> tuple[float, str, float, float]:
    """``(vmin, label, Omega, stationarity)`` at :math:`(\\beta, b, z)` (section 7.4).

    ``vmin``: smallest eigenvalue of the Hessian of :math:`\\Omega` projected on the
    free variables (:math:`\\beta`, :math:`b` and the :math:`z_l` of
    :func:`support_mask`); ``stationarity``: the largest gradient entry on the free
    variables and the largest negative gradient entry on the active :math:`z_l` (the
    first-order condition of :math:`\\min\\Omega` over :math:`z \\ge 0`). ``label``:
    ``"not stationary"`` when ``stationarity > stationarity_tol``, else ``"minimum"``
    when :math:`v_{\\min} \\ge -10^{-6}\\max(1, \\|H\\|)` or ``"saddle"`` (Table 7.1).
    """
    value, g, eig, free = second_order(obj, beta, b, z)
    vmin = float(eig[0])
    label = "minimum" if vmin >= -1e-6 * max(1.0, float(np.max(np.abs(eig)))) else "saddle"
    stat = max(float(np.max(np.abs(g[free]), initial=0.0)),
               float(np.max(-g[~free], initial=0.0)))
    if not stat <= stationarity_tol:
        label = "not stationary"
    return vmin, label, float(value), stat
