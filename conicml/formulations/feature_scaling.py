r"""Embedded feature selection for the Gaussian-kernel SVM (Tayal 2014, chapter 7).

A non-negative feature-scaling vector :math:`z \in \mathbb R^d_{\ge 0}` enters the
feature-scaled Gaussian kernel (7.17)

.. math::

    k(Zx, Zx') = \exp\Big(-\sum_{l=1}^d z_l^2 (x_l - x'_l)^2\Big),\qquad
    Z = \operatorname{diag}(z),

and is learned jointly with the SVM under the penalty :math:`\mu\|z\|_1 = \mu\mathbf 1^\top z`
(linear because :math:`z \ge 0`; no non-smooth absolute value is added, so the
trust-region methods see a smooth function).
With :math:`f = K_z\beta + b\mathbf 1` and the smoothed hinge :math:`\ell = \ell_\epsilon`,
:math:`\epsilon = 1/2` (7.8):

* :math:`\Omega(\beta, b, z) = \tfrac12\beta^\top K_z\beta + C\sum_i\ell(y_if_i)
  + \mu\mathbf 1^\top z` (7.7), over :math:`(\beta, b, z)`, :math:`z \ge 0`;
* :math:`\bar\Omega(\bar\beta, \bar b, z, \lambda) = \frac{1}{2\lambda^2}\bar\beta^\top
  K_z\bar\beta + C\sum_i\ell(y_if_i/\lambda) + \mu\mathbf 1^\top z` (7.14),
  :math:`\lambda` being the
  *functional margin* (not a regulariser); invariant under
  :math:`(\bar\beta, \bar b, \lambda) \to t(\bar\beta, \bar b, \lambda)`;
* :math:`\Psi(z, \lambda) = \frac{1}{2\lambda^2} + C\sum_i\ell(y_if_i/\lambda)
  + \mu\mathbf 1^\top z` (7.15), :math:`(\bar\beta, \bar b)` fixed.

:class:`FeatureScalingObjective` evaluates the three with exact gradients and
Hessians. With :math:`D^{(l)}_{ij} = (x_{il} - x_{jl})^2`, :math:`t_i = y_if_i/\lambda`,
:math:`a = Cy\circ\ell'(t)/\lambda`, :math:`w = C\ell''(t)/\lambda^2`,
:math:`e = -Cy\circ(\ell''(t)t + \ell'(t))/\lambda^2` and

.. math::

    \partial_{z_l} K = -2z_l D^{(l)}\circ K,\qquad
    \partial^2_{z_lz_m} K = 4z_lz_m D^{(l)}\circ D^{(m)}\circ K - 2\delta_{lm}D^{(l)}\circ K,

the derivatives follow by the chain rule through :math:`f` (written out in
:meth:`FeatureScalingObjective.evaluate`; the tests check them against finite
differences). The full Hessian of :math:`\Omega` has size :math:`n + 1 + d`
(section 7.4: the projected Hessian decides minimum vs saddle).

**The SVM block.** At fixed :math:`z` the minimiser of :math:`\Omega` over
:math:`(\beta, b)` is a standard SVM [derived]: the conjugate of
:math:`C\ell_\epsilon` is the hinge's plus :math:`\epsilon\alpha^2/C`, so the dual is
the SVM dual (F4) with the Gram matrix :math:`K_z + (2\epsilon/C)I`, and
:math:`\beta = y\circ\alpha`, :math:`b` its KKT bias. :func:`svm_block` solves it
with :func:`conicml.formulations.svm.soft_margin` (``kernel="precomputed"``), so
any registered SVM solver serves it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._utils.validation import check_positive, check_X_y
from ..exceptions import ProgramError
from ..solving import solve
from . import svm

__all__ = [
    "FeatureScalingObjective",
    "fs_kernel",
    "smoothed_hinge",
    "svm_block",
]

#: Largest pairwise-difference tensor (n * n * d doubles) the exact Hessian builds.
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

    # -- pieces --------------------------------------------------------------------------
    @property
    def diffs(self) -> np.ndarray:
        r"""The tensor :math:`D_{ijl} = (x_{il} - x_{jl})^2`, shape (n, n, d) (built once)."""
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
        """:math:`K_z` on the training set."""
        return np.exp(-np.einsum("ijl,l->ij", self.diffs, np.asarray(z, float) ** 2))

    def _kz(self, K: np.ndarray, z: np.ndarray, v: np.ndarray) -> np.ndarray:
        r"""Columns :math:`(\partial_{z_l}K)v`, shape (n, d)."""
        return -2.0 * z[None, :] * np.einsum("ijl,ij->il", self.diffs, K * v[None, :])

    def _kzz(self, K: np.ndarray, z: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        r""":math:`u^\top(\partial^2_{z_lz_m}K)v`, shape (d, d)."""
        W = (K * np.outer(u, v)).ravel()
        D2 = self.diffs.reshape(-1, self.d)
        S = D2.T @ (W[:, None] * D2)
        s = W @ D2
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


def svm_block(X: np.ndarray, y: np.ndarray, z: np.ndarray, C: float, *, eps: float = 0.5,
              solver: str = "smo", solver_options: dict | None = None,
              K: np.ndarray | None = None) -> tuple[np.ndarray, float, Any]:
    r"""The exact minimiser of :math:`\Omega(\cdot, \cdot, z)` over :math:`(\beta, b)`.

    Solves the SVM dual with the precomputed Gram matrix :math:`K_z + (2\epsilon/C) I`
    (see the module docstring) by ``solver`` (any solver of kind ``qp.svm.dual``).

    Returns
    -------
    beta, b, solution
    """
    if K is None:
        K = fs_kernel(X, X, z)
    G = K + (2 * eps / C) * np.eye(K.shape[0])
    program = svm.soft_margin(G, y, C, kernel="precomputed", form="dual")
    solution = solve(program, solver, **dict(solver_options or {}))
    model = program.decode(solution)
    return np.asarray(model["dual_coef"], float), float(model["b"]), solution
