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
* :math:`b` from the KKT conditions (3.12)/(B.4) (:func:`conicml.certificates.kkt.bias_from_kkt`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from ..certificates.chance import best_offset
from ..certificates.kkt import bias_from_kkt, free_tolerance
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
        scale, t, vnorm = self.scale(alpha, p)
        g = scale * p  # w^T phi(mu_j)
        given_b = b is not None
        if b is None:
            b = bias_from_kkt(alpha, y, upper, -g + y * (1.0 + r * t), accuracy)  # -y_j G_j
        xi = np.maximum(0.0, 1.0 + r * t - y * (g + b))
        coef = scale * alpha * y
        decoded = "kkt"
        if self.W is not None:
            primal = float(np.sum(upper * xi))
            dual = float((1.0 + r * float(self.W)) @ alpha) - float(self.W) * vnorm
            if not given_b and primal - dual > 1e-9 * max(1.0, abs(dual)):
                # (B.3) leaves w undetermined at (or near) the cone apex v = 0 (the spheres
                # are separable within ||w|| <= W, optimum 0): take the best feasible
                # hyperplane among the candidates of apex_candidates instead
                for name, c, g_unit in self.apex_candidates(alpha, accuracy):
                    length, bc, value = self.best_length(g_unit)
                    if value < primal - 1e-12 * max(1.0, abs(primal)):
                        primal, coef, b, decoded = value, length * c, bc, name
                        g = length * g_unit
                        xi = np.maximum(0.0, 1.0 + r * t - y * (g + b))
        elif self.hard:
            primal = 0.5 * t * t
        else:
            primal = 0.5 * t * t + float(np.sum(upper * xi))
        model = {"alpha": alpha, "dual_coef": coef,
                 "support": np.flatnonzero(alpha > free_tolerance(alpha)), "b": float(b),
                 "xi": xi, "t": float(t), "radii": r, "primal_objective": primal,
                 "decoded_by": decoded}
        if self.kernel.name == "linear":
            model["w"] = self.means.T @ model["dual_coef"]
        return model

    def best_length(self, g_unit: np.ndarray) -> tuple[float, float, float]:
        r"""W-form: the best point :math:`(s\hat w, b)`, :math:`0 \le s \le W`, on a direction.

        ``g_unit`` are the scores :math:`\hat w^\top\phi(\mu_j)` of a unit-norm
        :math:`\hat w`. Every :math:`\|w\| \le W` is feasible in (B.1), whose margins
        carry the constant :math:`r_jW`, so the objective :math:`h(s) = \min_b\sum_j
        u_j(1 + r_jW - y_j(sg_j + b))_+` (convex in s; the offset exact by
        :func:`~conicml.certificates.chance.best_offset`) is minimised over the length by
        bounded Brent. Returns ``(s, b, h(s))``.
        """
        W = float(self.W)
        d = 1.0 + self.radii * W

        def h(s: float) -> float:
            return best_offset(d - self.y * (s * g_unit), self.y, self.upper)[1]

        res = minimize_scalar(h, bounds=(0.0, W), method="bounded",
                              options={"xatol": 1e-10 * W, "maxiter": 200})
        length = min((W, float(res.x)), key=h)
        b, value = best_offset(d - self.y * (length * g_unit), self.y, self.upper)
        return length, b, value

    def apex_candidates(self, alpha: np.ndarray,
                        accuracy: float = 0.0) -> list[tuple[str, np.ndarray, np.ndarray]]:
        r"""W-form hyperplanes to try where :math:`w = Wv/\|v\|` (B.3) is undetermined.

        At the cone apex :math:`v = 0` every :math:`w` with :math:`\|w\| \le W` that
        satisfies the margin conditions is optimal, and :math:`v/\|v\|` from a point
        near the apex is round-off. Returned as ``(name, c, g)``: coefficients :math:`c`
        of a unit-norm :math:`w = \sum_l c_l\phi(\mu_l)` and its scores
        :math:`g = Kc` on the cluster means; the length is chosen by :meth:`best_length`:

        * ``"margin-fit"``: the margin equalities :math:`w^\top\phi(\mu_j) + b =
          y_j(1 + r_jW)` of the free multipliers ((B.4)) solved by least squares;
        * ``"v-direction"``: :math:`v/\|v\|` itself (with the best offset, not (B.4)'s);
        * ``"mean-difference"``: the difference of the class means of the cluster
          centres, :math:`c_j = y_j/k_{y_j}`.
        """
        W = float(self.W)
        y = self.y
        out: list[tuple[str, np.ndarray]] = []  # directions, normalised below
        tol = free_tolerance(alpha, accuracy)
        free = (alpha > tol) & (alpha < self.upper - tol)
        if np.any(free):
            K = self.kernel(self.means, self.means)
            A = np.hstack([K[free], np.ones((int(free.sum()), 1))])
            sol = np.linalg.lstsq(A, y[free] * (1.0 + self.radii[free] * W), rcond=None)[0]
            out.append(("margin-fit", sol[:-1]))
        out.append(("v-direction", alpha * y))
        out.append(("mean-difference", np.where(y > 0, 1.0 / max(np.sum(y > 0), 1),
                                                -1.0 / max(np.sum(y < 0), 1))))
        scaled = []
        for name, c in out:
            g = self.kernel_matvec(c)
            norm = float(np.sqrt(max(float(c @ g), 0.0)))
            if norm > 0 and np.isfinite(norm):
                scaled.append((name, c / norm, g / norm))
        return scaled
