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

import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._utils.gaussian_exp import exp_nonpositive
from .._utils.threads import (
    blas_thread_count,
    for_row_blocks,
    one_blas_thread,
    usable_cpus,
)
from .._utils.validation import check_positive, check_X_y
from ..exceptions import ProgramError

__all__ = [
    "DENSE_HESSIAN_MAX",
    "FeatureScaledSVM",
    "FeatureScalingObjective",
    "fs_kernel",
    "projected_hessian_label",
    "second_order",
    "smoothed_hinge",
    "small_blas",
    "support_mask",
]

#: Rows of a block of the kernel matrices and of their products (:func:`for_row_blocks`):
#: a block's product is still in cache when its exponential is taken.
ROW_BLOCK = 256

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


def fs_kernel(A: np.ndarray, B: np.ndarray, z: np.ndarray,
              out: np.ndarray | None = None, workers: int = 1) -> np.ndarray:
    r"""The feature-scaled Gaussian kernel (7.17): :math:`\exp(-\sum_l z_l^2(a_l - b_l)^2)`.

    ``out``: a C-contiguous float64 array of shape (len(A), len(B)) to write it in.
    ``workers``: threads for its row blocks (:func:`conicml._utils.threads.for_row_blocks`;
    the same numbers for any count when BLAS runs on one thread)."""
    Az, Bz = A * z, B * z
    # -|a - b|^2 = 2 a'b - |a|^2 - |b|^2 as one product, [2a, -|a|^2, -1] [b, 1, |b|^2]',
    # in the output array (no n x m temporaries: fresh arrays of that size cost more in
    # page faults than the product); the exponential block by block, while the block's
    # product is still in cache
    left = np.hstack([2.0 * Az, -(Az**2).sum(1)[:, None], -np.ones((Az.shape[0], 1))])
    right = np.hstack([Bz, np.ones((Bz.shape[0], 1)), (Bz**2).sum(1)[:, None]]).T
    if out is None:
        out = np.empty((A.shape[0], B.shape[0]))

    def rows(start: int, stop: int) -> None:
        block = out[start:stop]
        np.matmul(left[start:stop], right, out=block)
        exp_nonpositive(block)  # exp(min(., 0)): the expansion's rounding clipped

    for_row_blocks(rows, A.shape[0], workers, ROW_BLOCK)
    return out


def _matmul_rows(A: np.ndarray, B: np.ndarray, workers: int,
                 rows: np.ndarray | None = None) -> np.ndarray:
    """``A[rows] @ B`` (``B`` a matrix or a vector) by row blocks on ``workers`` threads,
    each block gathered and multiplied in turn (the same numbers as one product)."""
    if workers <= 1 and rows is None:
        return A @ B
    n_rows = A.shape[0] if rows is None else rows.size
    out = np.empty((n_rows,) + B.shape[1:])

    def block(start: int, stop: int) -> None:
        part = A[start:stop] if rows is None else A[rows[start:stop]]
        np.matmul(part, B, out=out[start:stop])

    for_row_blocks(block, n_rows, workers, ROW_BLOCK)
    return out


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
        #: Threads for the row blocks of the kernel matrices and of the derivatives'
        #: products with them (set by :func:`small_blas` for a solve).
        self.workers = 1
        self._Dt: np.ndarray | None = None
        self._centred: np.ndarray | None = None
        self._last_kernel: tuple[bytes, np.ndarray] | None = None
        self._last_columns: tuple[bytes, np.ndarray] | None = None
        self._last_label: tuple[bytes, Any] | None = None
        self._last_product: tuple[bytes, np.ndarray] | None = None

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
        buf = None
        if self._last_kernel is not None:
            old = self._last_kernel[1]
            self._last_kernel = None
            # the previous matrix's memory is written over only when nothing else holds
            # it (no caller's reference, no view): a fresh n x n array costs its page
            # faults again, more than the product at large n
            if sys.getrefcount(old) <= 2:
                old.setflags(write=True)
                buf = old
            del old
        K = fs_kernel(self._Xc, self._Xc, z, out=buf, workers=self.workers)
        K.setflags(write=False)
        self._last_kernel = (key, K)
        return K

    def kernel_columns(self, z: np.ndarray, cols: np.ndarray) -> np.ndarray:
        r"""The columns ``cols`` of :math:`K_z`, shape (n, len(cols)).

        What the z-blocks need: with :math:`(\beta, b)` fixed, :math:`f = K_z\beta + b`
        reads only the columns of the nonzero :math:`\beta_j` (the support vectors of the
        SVM block). Taken from the kept :math:`K_z` when it is at this ``z``; the last
        block is kept with its ``z`` and ``cols`` as well."""
        z = np.asarray(z, float)
        cols = np.asarray(cols, dtype=np.intp)
        if cols.size == self.n and np.array_equal(cols, np.arange(self.n)):
            return self.kernel(z)  # every column (at the starting scales): no gathered copy
        if self._last_kernel is not None and self._last_kernel[0] == z.tobytes():
            return self._last_kernel[1][:, cols]
        key = z.tobytes() + cols.tobytes()
        if self._last_columns is not None and self._last_columns[0] == key:
            return self._last_columns[1]
        buf = None
        if self._last_columns is not None:
            old = self._last_columns[1]
            self._last_columns = None
            # written over only when nothing else holds it (as in kernel)
            if old.shape == (self.n, cols.size) and sys.getrefcount(old) <= 2:
                old.setflags(write=True)
                buf = old
            del old
        Kc = fs_kernel(self._Xc, self._Xc[cols], z, out=buf, workers=self.workers)
        Kc.setflags(write=False)
        self._last_columns = (key, Kc)
        return Kc

    def _product(self, z: np.ndarray, beta: np.ndarray, K: np.ndarray,
                 cols: np.ndarray) -> np.ndarray:
        r""":math:`K_z\beta` from the columns ``K`` of the nonzero :math:`\beta_j`, kept with
        its ``z`` and :math:`\beta`: a trust region evaluates an accepted point twice (its
        value, then its derivatives)."""
        key = z.tobytes() + beta.tobytes()
        if self._last_product is not None and self._last_product[0] == key:
            return self._last_product[1]
        Kb = _matmul_rows(K, beta[cols], self.workers)
        Kb.setflags(write=False)
        self._last_product = (key, Kb)
        return Kb

    def _kernel_matvec(self, z: np.ndarray, v: np.ndarray) -> np.ndarray:
        """:math:`K_z v` from the kept :math:`K_z`, else from the columns of the nonzero
        :math:`v_j`."""
        if self._last_kernel is not None and self._last_kernel[0] == z.tobytes():
            return self._last_kernel[1] @ v
        nz = np.flatnonzero(v)
        return fs_kernel(self._Xc, self._Xc[nz], z, workers=self.workers) @ v[nz]

    @property
    def _Xc(self) -> np.ndarray:
        """The centred inputs (the differences :math:`x_i - x_j` do not change, and the
        expanded sums below cancel less than on data far from the origin)."""
        if self._centred is None:
            self._centred = self.X - self.X.mean(axis=0)
        return self._centred

    def _kz(self, K: np.ndarray, z: np.ndarray, v: np.ndarray,
            cols: np.ndarray | None = None, rows: np.ndarray | None = None) -> np.ndarray:
        r"""Columns :math:`(\partial_{z_l}K)v`, shape (n, d).

        :math:`(\partial_{z_l}K)_{ij} = -2z_l(x_{il} - x_{jl})^2K_{ij}`; with
        :math:`M = K\operatorname{diag}(v)`, :math:`\sum_j M_{ij}(x_{il} - x_{jl})^2 =
        x_{il}^2(M\mathbf 1)_i - 2x_{il}(MX)_{il} + (MX^{\circ 2})_{il}`: three
        products with the n x n matrix, :math:`O(n^2d)`. With ``cols``, ``K`` holds only
        those columns of :math:`K_z` and ``v`` is zero outside them: :math:`O(n\,|cols|\,d)`;
        with ``rows``, only those rows of the result (``K`` has every row).
        """
        A = self._Xc
        d = A.shape[1]
        Ac = A if cols is None else A[cols]
        if rows is not None:
            A = A[rows]
        vc = (v if cols is None else v[cols])[:, None]
        # M 1, M X, M X^2 as one product of K with diag(v) [1, X, X^2]
        P = _matmul_rows(K, np.hstack([vc, vc * Ac, vc * (Ac * Ac)]), self.workers, rows)
        rows, MA, MA2 = P[:, :1], P[:, 1:d + 1], P[:, d + 1:]
        return -2.0 * z[None, :] * (A * A * rows - 2.0 * A * MA + MA2)

    def _kzz(self, K: np.ndarray, z: np.ndarray, u: np.ndarray, v: np.ndarray,
             cols: np.ndarray | None = None) -> np.ndarray:
        r""":math:`u^\top(\partial^2_{z_lz_m}K)v`, shape (d, d).

        :math:`\partial^2_{z_lz_m}K_{ij} = (4z_lz_mD_{ijl}D_{ijm} -
        2\delta_{lm}D_{ijl})K_{ij}`, :math:`D_{ijl} = (x_{il} - x_{jl})^2`. With
        :math:`W = K\circ uv^\top`, :math:`s_l = \sum_{ij}W_{ij}D_{ijl}` and
        :math:`S_{lm} = \sum_{ij}W_{ij}D_{ijl}D_{ijm}` are expanded in powers of
        :math:`x_{il}, x_{jl}` into products of W with :math:`X`, :math:`X^{\circ 2}` and
        the pairwise products :math:`x_{il}x_{im}` (:math:`O(n^2d^2)` time, :math:`O(n^2 +
        nd^2)` memory) instead of the n x n x d tensor :math:`D`. Only the rows of the
        nonzero :math:`u_i` and the columns of the nonzero :math:`v_j` of W enter (with
        ``cols``, ``K`` holds only those columns of :math:`K_z`).
        """
        A = self._Xc
        d = A.shape[1]
        cols = np.arange(A.shape[0]) if cols is None else np.asarray(cols, dtype=np.intp)
        rsel = np.flatnonzero(u)
        csel = np.flatnonzero(v[cols])
        Ar, Ac = A[rsel], A[cols[csel]]
        Ar2, Ac2 = Ar * Ar, Ac * Ac
        ur, vc = u[rsel][:, None], v[cols[csel]][:, None]
        if csel.size < cols.size:
            KRS = K[np.ix_(rsel, csel)]
        else:  # no gathered copy of rows (or of the whole matrix) that are all there
            KRS = K if rsel.size == K.shape[0] else K[rsel]
        il, im = np.triu_indices(d)
        # W = diag(u) K diag(v) is never formed: its products with the column data
        # [1, X, X^2, x_l x_m] and the row data [1, X] are two products with K
        H = np.empty((csel.size, 1 + 2 * d + il.size))
        H[:, :1] = vc
        np.multiply(vc, Ac, out=H[:, 1:d + 1])
        np.multiply(vc, Ac2, out=H[:, d + 1:2 * d + 1])
        pairs = H[:, 2 * d + 1:]
        start = 0
        for k in range(d):  # the pairs (k, m >= k) in the order of triu_indices
            np.multiply(Ac[:, k:k + 1], Ac[:, k:], out=pairs[:, start:start + d - k])
            start += d - k
        pairs *= vc
        right = ur * _matmul_rows(KRS, H, self.workers)
        left = vc * _matmul_rows(KRS.T, np.hstack([ur, ur * Ar]), self.workers)
        r, WA, WA2, WP = (right[:, 0], right[:, 1:d + 1], right[:, d + 1:2 * d + 1],
                          right[:, 2 * d + 1:])
        c, WtA = left[:, 0], left[:, 1:]
        # s_l = sum_ij W_ij (a_il^2 - 2 a_il a_jl + a_jl^2), rows i, columns j
        s = Ar2.T @ r + Ac2.T @ c - 2.0 * np.einsum("il,il->l", Ar, WA)
        # S_lm: the nine terms of (a_i^2 - 2 a_i a_j + a_j^2)(b_i^2 - 2 b_i b_j + b_j^2)
        AWA, AWtA = Ar * WA, Ac * WtA
        S = Ar2.T @ (r[:, None] * Ar2) + Ac2.T @ (c[:, None] * Ac2)
        S -= 2.0 * (Ar2.T @ AWA + AWA.T @ Ar2 + AWtA.T @ Ac2 + Ac2.T @ AWtA)
        T = Ar2.T @ WA2
        S += T + T.T
        # x_il x_im, one column per pair l <= m
        cross = np.einsum("ip,ip->p", Ar[:, il] * Ar[:, im], WP)
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
        lazy_hessian: bool = False,
    ) -> tuple[float, np.ndarray | None, Any]:
        r"""Value, gradient and Hessian over the variable blocks ``wrt``.

        ``margin="kernel"``: the margin term :math:`\bar\beta^\top K_z\bar\beta/(2\lambda^2)`
        (:math:`\Omega` at :math:`\lambda = 1`, :math:`\bar\Omega`);
        ``margin="unit"``: :math:`1/(2\lambda^2)` (:math:`\Psi`). Blocks are ordered
        ``beta`` (n), ``b`` (1), ``z`` (d), ``lam`` (1). ``lazy_hessian``: the Hessian
        as a function of no argument that computes it (a trust region that stops at this
        point never needs it); it must be called before :math:`K_z` at another ``z`` is
        asked for, or it recomputes the kernel.
        """
        beta = np.asarray(beta, float)
        z = np.asarray(z, float)
        lam = float(lam)
        y, C, mu, eps = self.y, self.C, self.mu, self.eps
        kern = margin == "kernel"
        if "beta" in wrt and order == 2:
            cols = None
            K = self.kernel(z)
            Kb = K @ beta
            Mk = float(beta @ Kb) if kern else 1.0
        else:
            # f = K_z beta + b and beta' K_z beta read only the columns of the nonzero
            # beta_j (the support vectors), and so do the gradient and the z- and
            # lam-derivatives below (K_z a, for the gradient in beta, the columns of the
            # nonzero a_i): no n x n matrix
            cols = np.flatnonzero(beta)
            K = self.kernel_columns(z, cols)
            Kb = self._product(z, beta, K, cols)
            Mk = float(beta[cols] @ Kb[cols]) if kern else 1.0
        f = Kb + b
        t = y * f / lam
        value = Mk / (2 * lam**2) + C * float(np.sum(smoothed_hinge(t, eps))) + mu * float(z.sum())
        if order == 0:
            return value, None, None
        l1 = smoothed_hinge(t, eps, 1)
        a = C * y * l1 / lam
        qg = a + beta / (2 * lam**2) if kern else a
        if "beta" in wrt:
            KB = self._kz(K, z, beta, cols)  # df/dz, (n, d)
        else:
            # without the beta blocks, df/dz enters only through rows where a, w, e (all
            # zero where t_i >= 1) or, with the kernel margin, beta are nonzero
            rows = np.flatnonzero(qg if kern else a)
            if rows.size == self.n:
                KB = self._kz(K, z, beta, cols)
            else:
                KB = np.zeros((self.n, self.d))
                KB[rows] = self._kz(K, z, beta, cols, rows)
        grads = {
            "beta": ((Kb / lam**2 if kern else 0.0)
                     + (K @ a if cols is None else self._kernel_matvec(z, a)))
            if "beta" in wrt else None,
            "b": np.array([a.sum()]),
            "z": qg @ KB + mu,
            "lam": np.array([-Mk / lam**3 - float(np.sum(C * l1 * t)) / lam]),
        }
        grad = np.concatenate([np.atleast_1d(grads[k]) * np.ones(self._size(k)) for k in wrt])
        if order == 1:
            return value, grad, None
        del K  # the thunk below reads K_z from the kept matrix or block, not a reference

        def hessian() -> np.ndarray:
            K = self.kernel(z) if cols is None else self.kernel_columns(z, cols)
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
                blocks["beta", "z"] = (((KB / lam**2) if kern else 0.0)
                                       + self._kz(K, z, a, cols) + K @ (w[:, None] * KB))
                col = ((-2 * Kb / lam**3) if kern else 0.0) + K @ e
                blocks["beta", "lam"] = col[:, None]
            blocks["b", "b"] = np.array([[w.sum()]])
            blocks["b", "z"] = (w @ KB)[None, :]
            blocks["b", "lam"] = np.array([[e.sum()]])
            blocks["z", "z"] = self._kzz(K, z, qg, beta, cols) + KB.T @ (w[:, None] * KB)
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
            return 0.5 * (hess + hess.T)

        return value, grad, (hessian if lazy_hessian else hessian())

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


@contextlib.contextmanager
def small_blas(obj: FeatureScalingObjective) -> Iterator[None]:
    """BLAS on one thread for the method's dense products, at every size, and the row
    blocks of the large ones on threads of their own.

    The products with the n x n kernel matrix have the d features as their other
    dimension (memory-bound), small matrices pay the thread start-up, and OpenBLAS's
    pool was slower at n = 2 000 as well when other processes held the cores. The
    kernel blocks (product and exponential) and the derivatives' products with them are
    split by rows instead (``obj.workers``: as many threads as BLAS had outside, at most
    the CPUs of the process), each block one single-thread BLAS call: the same numbers
    as on one thread."""
    workers = max(1, min(blas_thread_count(), usable_cpus()))
    obj.workers = workers
    try:
        with one_blas_thread():
            yield
    finally:
        obj.workers = 1


def support_mask(z: np.ndarray, threshold: float = 0.01) -> np.ndarray:
    """Features with :math:`z_l > 0.01\\max_k z_k` (the thesis's zero threshold)."""
    z = np.asarray(z, float)
    top = float(np.max(z, initial=0.0))
    return z > threshold * top if top > 0 else np.zeros(z.shape, bool)


#: Largest order :math:`n + 1 + d` of the Hessian of :math:`\Omega` whose eigenvalues are
#: computed at every point (dense, :math:`O((n + d)^3)`). Above it they are computed only
#: at points that pass the first-order condition (``skip_above`` of :func:`second_order`).
DENSE_HESSIAN_MAX = 3000


def _first_order(obj: FeatureScalingObjective, g: np.ndarray, free: np.ndarray) -> float:
    """The projected gradient: free entries, and the negative ones of the active z_l."""
    return max(float(np.max(np.abs(g[free]), initial=0.0)),
               float(np.max(-g[~free], initial=0.0)))


def second_order(obj: FeatureScalingObjective, beta: np.ndarray, b: float, z: np.ndarray,
                 *, skip_above: float | None = None
                 ) -> tuple[float, np.ndarray, np.ndarray | None, np.ndarray]:
    r"""``(Omega, gradient, eigenvalues of the projected Hessian, free mask)`` at a point.

    The free variables are :math:`\beta`, :math:`b` and the :math:`z_l` of
    :func:`support_mask`. The eigenvalues cost :math:`O((n + d)^3)`: when the Hessian's
    order exceeds :data:`DENSE_HESSIAN_MAX` and the projected gradient exceeds
    ``skip_above`` (the point fails the first-order condition, which decides the caller's
    answer), they are not computed and ``None`` is returned in their place. The last
    result is kept on ``obj`` with its point (the certificate and ``decode`` both read it).
    """
    beta, z = np.asarray(beta, float), np.asarray(z, float)
    key = beta.tobytes() + np.float64(b).tobytes() + z.tobytes()
    free = np.concatenate([np.ones(obj.n + 1, bool), support_mask(z)])
    if obj._last_label is not None and obj._last_label[0] == key:
        value, g, eig, _ = obj._last_label[1]
    else:
        with small_blas(obj):
            value, g, _ = obj.omega(beta, b, z, order=1)
        eig = None
    dense = obj.n + 1 + obj.d <= DENSE_HESSIAN_MAX
    if eig is None and (dense or skip_above is None or _first_order(obj, g, free) <= skip_above):
        with small_blas(obj):
            _, _, H = obj.omega(beta, b, z)
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
    ``vmin`` is NaN (not computed) at a point that is not stationary when the Hessian's
    order :math:`n + 1 + d` exceeds :data:`DENSE_HESSIAN_MAX`.
    """
    value, g, eig, free = second_order(obj, beta, b, z, skip_above=stationarity_tol)
    stat = _first_order(obj, g, free)
    if not stat <= stationarity_tol:
        vmin = math.nan if eig is None else float(eig[0])
        return vmin, "not stationary", float(value), stat
    vmin = float(eig[0])
    label = "minimum" if vmin >= -1e-6 * max(1.0, float(np.max(np.abs(eig)))) else "saddle"
    return vmin, label, float(value), stat
