r"""Kernels and PSD factors shared by every formulation.

A kernel program never hands a dense Gram quadratic form to a conic backend:
the Gram matrix enters through a factor :math:`K \approx L L^\top`, so that
:math:`\alpha^\top K \alpha = \|L^\top \alpha\|_2^2` is a second-order cone for
ECOS / SCS / Clarabel (and a sum of squares for OSQP). See :func:`psd_factor`.

Kernels in scikit-learn's parametrisation, so results can be checked against
``sklearn.svm.SVC`` (:func:`make_kernel`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from ._utils.validation import plain
from .exceptions import ProgramError

__all__ = ["KERNELS", "Kernel", "make_kernel", "psd_factor"]

KERNELS = ("linear", "rbf", "poly", "precomputed")


@dataclass(frozen=True)
class Kernel:
    """A kernel function with resolved hyper-parameters.

    Attributes
    ----------
    name : {"linear", "rbf", "poly", "precomputed"}
    gamma : float
        Width of ``rbf`` and scale of ``poly`` (already resolved, never "scale").
    degree : int
        Degree of ``poly``.
    coef0 : float
        Constant of ``poly``.
    """

    name: str = "linear"
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0

    def __call__(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Kernel matrix between the rows of ``A`` and the rows of ``B``.

        For ``precomputed``, ``A`` already holds kernel values against the
        training samples and ``B`` is ignored except for its length check.
        """
        if self.name == "linear":
            return linear_kernel(A, B)
        if self.name == "rbf":
            return rbf_kernel(A, B, gamma=self.gamma)
        if self.name == "poly":
            return polynomial_kernel(A, B, degree=self.degree, gamma=self.gamma,
                                     coef0=self.coef0)
        if A.shape[1] != B.shape[0]:
            raise ProgramError(
                f"precomputed kernel: expected {B.shape[0]} columns (one per training "
                f"sample), got {A.shape[1]}"
            )
        return np.asarray(A, dtype=float)

    def gram(self, X: np.ndarray) -> np.ndarray:
        """Gram matrix of the training samples ``X``."""
        return self(X, X)

    def columns(self, X: np.ndarray, idx: np.ndarray, sq: np.ndarray | None = None
                ) -> np.ndarray:
        """Columns ``idx`` of the Gram matrix of ``X``, shape ``(n, len(idx))``.

        ``sq``: the squared row norms of ``X`` (RBF), when the caller keeps them for many
        calls; computed here otherwise."""
        if self.name == "precomputed":
            return np.asarray(X[:, idx], dtype=float)
        # plain numpy (no input re-validation): SMO asks for columns one at a time
        cross = X @ X[idx].T
        if self.name == "linear":
            return cross
        if self.name == "poly":
            return (self.gamma * cross + self.coef0) ** self.degree
        sq = np.einsum("ij,ij->i", X, X) if sq is None else sq
        dist = np.maximum(sq[:, None] + sq[idx][None, :] - 2.0 * cross, 0.0)
        return np.exp(-self.gamma * dist)

    def diagonal(self, X: np.ndarray) -> np.ndarray:
        """Diagonal of the Gram matrix of ``X`` without forming the matrix."""
        if self.name == "linear":
            return np.einsum("ij,ij->i", X, X)
        if self.name == "rbf":
            return np.ones(X.shape[0])
        if self.name == "poly":
            return (self.gamma * np.einsum("ij,ij->i", X, X) + self.coef0) ** self.degree
        return np.asarray(np.diag(X), dtype=float).copy()


def make_kernel(
    kernel: str,
    X: np.ndarray,
    *,
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
) -> Kernel:
    r"""Resolve a kernel name and hyper-parameters against training data.

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly", "precomputed"}
    X : ndarray of shape (n_samples, n_features)
        Training data, used to resolve ``gamma="scale"``, which is
        :math:`1 / (d \cdot \operatorname{Var}(X))` as in scikit-learn, and
        ``"auto"``, which is :math:`1/d`.
    gamma, degree, coef0
        Kernel hyper-parameters.

    Raises
    ------
    ProgramError
        Unknown kernel name, non-positive gamma, bad degree, or a
        precomputed Gram matrix that is not square.

    Notes
    -----
    * ``linear``:  :math:`k(x, z) = x^\top z`
    * ``rbf``:     :math:`k(x, z) = \exp(-\gamma \|x - z\|^2)`; seed 001 writes
      :math:`\exp(-\|x-z\|^2 / 2\sigma^2)`, i.e. :math:`\gamma = 1/(2\sigma^2)`
    * ``poly``:    :math:`k(x, z) = (\gamma\, x^\top z + c_0)^d`
    * ``precomputed``: ``X`` is the Gram matrix itself (rows: samples, columns:
      training samples).
    """
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ProgramError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNELS)}")
    if kernel == "precomputed":
        if X.ndim != 2 or X.shape[0] != X.shape[1]:
            raise ProgramError(
                f"kernel='precomputed' needs a square Gram matrix, got shape {X.shape}"
            )
        return Kernel("precomputed")
    if isinstance(gamma, str):
        if gamma == "scale":
            var = float(X.var())
            gamma_value = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        elif gamma == "auto":
            gamma_value = 1.0 / X.shape[1]
        else:
            raise ProgramError(f"gamma must be 'scale', 'auto' or a positive float, "
                               f"got {plain(gamma)!r}")
    else:
        gamma_value = float(gamma)
        if not np.isfinite(gamma_value) or gamma_value <= 0:
            raise ProgramError(f"gamma must be positive and finite, got {plain(gamma)!r}")
    if int(degree) != degree or degree < 1:
        raise ProgramError(f"degree must be a positive integer, got {degree!r}")
    if not np.isfinite(coef0):
        raise ProgramError(f"coef0 must be finite, got {coef0!r}")
    return Kernel(kernel, gamma=gamma_value, degree=int(degree), coef0=float(coef0))


def psd_factor(K: np.ndarray, method: str = "auto", *, rtol: float = 1e-12) -> np.ndarray:
    r"""A factor :math:`L` with :math:`K \approx L L^\top` for a symmetric PSD ``K``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semi-definite matrix (a Gram or covariance matrix).
    method : {"auto", "cholesky", "eigen"}, default="auto"
        ``"cholesky"``: Cholesky of :math:`K + \delta I` with the jitter
        :math:`\delta = \texttt{rtol}\cdot\operatorname{tr}K/n` (relative: the same at
        every scale of ``K``)
        (fast; perturbs the problem by :math:`\delta\|\alpha\|^2`).
        ``"eigen"``: :math:`L = U_r \Lambda_r^{1/2}` over the eigenvalues
        :math:`\lambda_i > \texttt{rtol}\cdot\lambda_{\max}` (exact up to the
        dropped spectrum; also handles PSD-singular matrices; :math:`L` has
        ``r`` columns). ``"auto"`` tries an un-jittered Cholesky and falls back
        to ``"eigen"`` if ``K`` is numerically singular.
    rtol : float, default=1e-12
        Relative threshold (see above).

    Returns
    -------
    ndarray of shape (n, r)

    Raises
    ------
    ProgramError
        If ``K`` is not square, not symmetric, or has a clearly negative
        eigenvalue (below :math:`-10^{-8}\max(\lambda_{\max}, \max|K_{ij}|)`).
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ProgramError(f"expected a square matrix, got shape {K.shape}")
    # every threshold below is relative to the matrix's own magnitude (an absolute floor
    # of 1 would make a covariance of features at 1e-8 look "numerically singular" and
    # hide asymmetry / negative eigenvalues of tiny matrices)
    scale = float(np.abs(K).max(initial=0.0))
    if not (scale > 0 and np.isfinite(scale)):
        if not np.all(np.isfinite(K)):
            raise ProgramError("expected a finite matrix (NaN or inf entries)")
        scale = 1.0
    if not np.allclose(K, K.T, atol=1e-10 * scale, rtol=0):
        raise ProgramError("expected a symmetric matrix (Gram/covariance is not symmetric)")
    K = 0.5 * (K + K.T)
    if method == "auto":
        try:
            L = np.linalg.cholesky(K)
            if np.all(np.diag(L) > np.sqrt(rtol * scale)):
                return L
        except np.linalg.LinAlgError:
            pass
        method = "eigen"
    if method == "cholesky":
        n = K.shape[0]
        mean_diag = float(np.trace(K)) / max(n, 1)
        delta = rtol * (mean_diag if mean_diag > 0 else scale)
        try:
            return np.linalg.cholesky(K + delta * np.eye(n))
        except np.linalg.LinAlgError as exc:
            raise ProgramError(
                "Cholesky failed even with jitter: the matrix is not positive semi-definite"
            ) from exc
    if method != "eigen":
        raise ProgramError(f"unknown factor method {method!r}; use 'auto', 'cholesky' or 'eigen'")
    lam, U = np.linalg.eigh(K)
    lam_max = max(float(lam[-1]), 0.0)
    if lam[0] < -1e-8 * max(lam_max, scale):
        raise ProgramError(
            f"matrix is not positive semi-definite (smallest eigenvalue {lam[0]:.3g})"
        )
    keep = lam > rtol * max(lam_max, np.finfo(float).tiny)
    if not np.any(keep):
        return np.zeros((K.shape[0], 1))
    return U[:, keep] * np.sqrt(lam[keep])
