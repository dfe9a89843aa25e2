r"""The contract of the CBC dual kinds (``socp.chance.cbc[.hard|_w].dual``): :class:`CBCDualData`.

Built by :func:`conicml.formulations.cbc.cbc` / :func:`~conicml.formulations.cbc.cbc_w`
into ``program.data["cbc"]`` and read by ``cbc-smo``. Every cluster :math:`j` is
a sphere :math:`B(\phi(\mu_j), r_j)` with label :math:`y_j`; the duals (3.11)
(C-form, hard margin (3.13) with :math:`C = \infty`) and (B.2) (W-form) are
decoded from :math:`\alpha` alone (seed 003 ch. 3, App. B): with
:math:`v = \sum_j\alpha_jy_j\phi(\mu_j)`,

* C-form: :math:`\lambda = \max(\|v\|, r^\top\alpha)`, :math:`t = \lambda - r^\top\alpha`,
  :math:`w = (t/\lambda)v`;
* W-form: :math:`t = W`, :math:`w = (W/\|v\|)v` (eq. B.3 with the labels);
* :math:`b` from the KKT conditions (3.12)/(B.4) (:func:`conicml._kkt.bias_from_kkt`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._kkt import bias_from_kkt, free_tolerance
from ..kernels import Kernel

__all__ = ["CBCDualData"]

_BLOCK = 2048  # rows of the kernel matrix formed at once


@dataclass(frozen=True, eq=False)
class CBCDualData:
    r"""Cluster means, labels and sphere radii of a CBC program, with its parametrisation.

    Attributes
    ----------
    means : ndarray of shape (k, n)
        Cluster means :math:`\mu_j` (in input space).
    y : ndarray of shape (k,)
        Cluster labels :math:`\pm 1`.
    radii : ndarray of shape (k,)
        Sphere radii :math:`r_j` in the kernel's feature space.
    kernel : Kernel
        The kernel (``linear`` or ``rbf``).
    C : float or None
        Slack cost of the C-form (3.7); ``None`` for the hard margin or the W-form.
    W : float or None
        Bound :math:`\|w\| \le W` of the W-form (B.1); ``None`` for the C-form.
    costs : ndarray of shape (k,) or None
        Per-cluster slack costs :math:`C_j` with class weights (C-form:
        :math:`C\sum_j \xi_j` becomes :math:`\sum_j C_j\xi_j`; W-form: :math:`\sum_j
        c_j\xi_j`) and so the dual box :math:`0 \le \alpha_j \le C_j`; ``None``: every
        cluster costs ``C`` (or 1 in the W-form).
    """

    means: np.ndarray
    y: np.ndarray
    radii: np.ndarray
    kernel: Kernel
    C: float | None = None
    W: float | None = None
    costs: np.ndarray | None = None

    @property
    def hard(self) -> bool:
        """Whether this is the hard-margin C-form (3.13)."""
        return self.C is None and self.W is None

    @property
    def upper(self) -> float | np.ndarray:
        """Upper bound :math:`U` of the dual box: ``C`` (C-form; the per-cluster ``costs``
        with class weights), 1 (W-form), inf (hard)."""
        if self.W is not None:
            return 1.0 if self.costs is None else self.costs
        if self.C is None:
            return np.inf
        return float(self.C) if self.costs is None else self.costs

    def kernel_matvec(self, coef: np.ndarray) -> np.ndarray:
        """:math:`K c` over the cluster means, without forming more than a block of :math:`K`."""
        M = self.means
        if self.kernel.name == "linear":
            return M @ (M.T @ coef)
        out = np.empty(M.shape[0])
        for s in range(0, M.shape[0], _BLOCK):
            out[s:s + _BLOCK] = self.kernel(M[s:s + _BLOCK], M) @ coef
        return out

    def scale(self, alpha: np.ndarray, p: np.ndarray) -> tuple[float, float, float]:
        r"""``(scale, t, vnorm)`` with :math:`w = \text{scale}\cdot v` and :math:`t = \|w\|`.

        ``p`` is :math:`K(\alpha\circ y)`, so :math:`\|v\|^2 = (\alpha\circ y)^\top p`.
        """
        vnorm = float(np.sqrt(max(float((alpha * self.y) @ p), 0.0)))
        if self.W is not None:
            W = float(self.W)
            return (W / vnorm if vnorm > 0 else 0.0), W, vnorm
        lam = max(vnorm, float(self.radii @ alpha))
        t = lam - float(self.radii @ alpha)
        return (t / lam if lam > 0 else 0.0), t, vnorm

    def model_from_alpha(self, alpha: np.ndarray, *, b: float | None = None,
                         accuracy: float = 0.0) -> dict:
        """Decode ``alpha`` into the model (see the module docstring).

        Returns ``alpha`` (clipped to the box), ``dual_coef``
        (:math:`f(x) = \\sum_j c_jk(\\mu_j, x) + b`), ``support``, ``b``, ``xi``,
        ``t``, ``radii``, ``primal_objective`` and, for the linear kernel, ``w``.
        """
        y, r, upper = self.y, self.radii, self.upper
        alpha = np.clip(np.asarray(alpha, dtype=float), 0.0, upper)
        p = self.kernel_matvec(alpha * y)
        scale, t, _ = self.scale(alpha, p)
        g = scale * p  # w^T phi(mu_j)
        if b is None:
            b = bias_from_kkt(alpha, y, upper, -g + y * (1.0 + r * t), accuracy)  # -y_j G_j
        xi = np.maximum(0.0, 1.0 + r * t - y * (g + b))
        if self.W is not None:
            primal = float(np.sum(upper * xi))
        elif self.hard:
            primal = 0.5 * t * t
        else:
            primal = 0.5 * t * t + float(np.sum(upper * xi))
        model = {"alpha": alpha, "dual_coef": scale * alpha * y,
                 "support": np.flatnonzero(alpha > free_tolerance(alpha)), "b": float(b),
                 "xi": xi, "t": float(t), "radii": r, "primal_objective": primal}
        if self.kernel.name == "linear":
            model["w"] = self.means.T @ model["dual_coef"]
        return model
