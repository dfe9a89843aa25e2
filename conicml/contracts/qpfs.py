r"""Contracts of the QPFS kinds (:data:`conicml.kinds.QPFS`, ``QPFS_RESTRICTED``).

:class:`SimplexQP` is everything a solver of the simplex QP (seed 001 eq. 3.4)

.. math::

    \min_{w}\ g(w) = \tfrac12(1-\alpha)\,\|L^\top w\|_2^2 - \alpha F^\top w
    \quad\text{s.t.}\quad w \ge 0,\ \mathbf 1^\top w = 1

needs: the factor :math:`L` (``Q \approx L L^\top``, :math:`M \times k`), the
relevance :math:`F` and the trade-off :math:`\alpha`. It also computes the
recomputed certificate shared by every solver of the kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["RestrictedQP", "SimplexQP"]


@dataclass(frozen=True, eq=False)
class SimplexQP:
    """The simplex QP of QPFS through a factor of its (clipped) similarity matrix.

    Attributes
    ----------
    factor : ndarray of shape (M, k)
        :math:`L` with :math:`\\tilde Q = L L^\\top` (eigenvalue-clipped, possibly
        low rank or a Nyström factor); the M x M matrix is never needed.
    relevance : ndarray of shape (M,)
        :math:`F \\ge 0`.
    alpha : float
        Trade-off in [0, 1] (1 = relevance only).
    """

    factor: np.ndarray
    relevance: np.ndarray
    alpha: float

    @property
    def n_features(self) -> int:
        """M, the number of (active) features."""
        return int(self.relevance.shape[0])

    def diag(self) -> np.ndarray:
        r""":math:`\tilde Q_{ii} = \|L_i\|^2` (computed once; read-only)."""
        return self._diag

    @cached_property
    def _diag(self) -> np.ndarray:
        d = np.einsum("ij,ij->i", self.factor, self.factor)
        d.flags.writeable = False
        return d

    def gradient(self, w: np.ndarray) -> np.ndarray:
        r""":math:`\nabla g(w) = (1-\alpha) L L^\top w - \alpha F`."""
        quad = self.factor @ (self.factor.T @ w)
        return (1.0 - self.alpha) * quad - self.alpha * self.relevance

    def objective(self, w: np.ndarray) -> float:
        """:math:`g(w)`."""
        v = self.factor.T @ w
        return float(0.5 * (1.0 - self.alpha) * v @ v - self.alpha * self.relevance @ w)

    def scale(self) -> float:
        r"""Scale of the gradient entries on the simplex:
        :math:`(1-\alpha)\max_i \tilde Q_{ii} + \alpha\|F\|_\infty` (never 0)."""
        d = self.diag()
        s = (1.0 - self.alpha) * float(d.max(initial=0.0)) \
            + self.alpha * float(np.abs(self.relevance).max(initial=0.0))
        return s if s > 0 else 1.0

    def resolution(self, w: np.ndarray, g: np.ndarray | None = None) -> float:
        r"""Size of the numbers whose differences the KKT conditions at ``w`` compare.

        With :math:`G = \nabla g(w)` the Frank–Wolfe gap is the difference of
        :math:`G^\top w = (1-\alpha)\|L^\top w\|^2 - \alpha F^\top w` and
        :math:`\min_j G_j`; this returns
        :math:`(1-\alpha)\|L^\top w\|^2 + \alpha |F^\top w| + |\min_j G_j|`, in units of
        the objective. Relative to it a gap says how many digits of :math:`g(w)` are
        right. (:meth:`scale`, the largest gradient entry anywhere on the simplex, can
        exceed it by many orders of magnitude when the factor is large and the optimum
        nearly cancels it: a gap of 1e-9 of that scale may be 50 % of the objective.)
        """
        w = np.asarray(w, dtype=float)
        if g is None:
            g = self.gradient(w)
        v = self.factor.T @ w
        r = ((1.0 - self.alpha) * float(v @ v) + self.alpha * abs(float(self.relevance @ w))
             + abs(float(g.min(initial=0.0))))
        return r if r > 0 else 1.0

    def certificate(self, w: np.ndarray) -> tuple[float, float, float]:
        r"""Relative (primal, dual, gap) of a point, recomputed from the data.

        Every coordinate is checked, on and off the support: with
        :math:`\nu = \min_j G_j` (the multiplier of :math:`\mathbf 1^\top w = 1`) and
        :math:`\lambda = G - \nu\mathbf 1 \ge 0` (those of :math:`w \ge 0`) stationarity
        holds exactly, so the KKT conditions reduce to complementarity
        :math:`w_i\lambda_i = 0`, i.e. :math:`G_i = \nu` on the support and
        :math:`G_i \ge \nu` off it. With :math:`r` = :meth:`resolution`:

        * primal: :math:`\max(|\mathbf 1^\top w - 1|, \max_i (-w_i)_+)`;
        * dual: the largest complementarity product :math:`\max_i w_i^+\lambda_i / r`;
        * gap: the Frank–Wolfe gap :math:`(G^\top w - \min_j G_j)/r
          = \sum_i w_i^+\lambda_i / r`, an upper bound on :math:`(g(w) - g^*)/r` for a
          feasible :math:`w` (convexity). A point optimal only on a restricted support
          (some feature off it has :math:`G_i < \nu`) has a gap of the order of
          :math:`\nu - \min_j G_j` relative to the objective, and fails.
        """
        w = np.asarray(w, dtype=float)
        if w.shape != self.relevance.shape or not np.all(np.isfinite(w)):
            return math.inf, math.inf, math.inf
        primal = max(abs(float(w.sum()) - 1.0), float(np.maximum(-w, 0.0).max(initial=0.0)))
        g = self.gradient(w)
        r = self.resolution(w, g)
        wp = np.maximum(w, 0.0)
        excess = (g - float(g.min())) / r
        dual = float((wp * excess).max(initial=0.0))
        gap = max(float(wp @ excess), 0.0)
        return primal, dual, gap


@dataclass(frozen=True, eq=False)
class RestrictedQP:
    r"""The thesis's reduced QPFS (seed 001 eq. 3.9), a *restriction* of (3.4).

    .. math::

        \min_z\ \tfrac12(1-\alpha) z^\top\Gamma z - \alpha F^\top U z
        \quad\text{s.t.}\quad U z \ge 0,\ \mathbf 1^\top U z = 1,\qquad w = Uz.

    Attributes
    ----------
    basis : ndarray of shape (M, k)
        :math:`U` with orthonormal columns (kept eigenvectors).
    eigenvalues : ndarray of shape (k,)
        :math:`\Gamma` (all > 0).
    relevance : ndarray of shape (M,)
    alpha : float
    """

    basis: np.ndarray
    eigenvalues: np.ndarray
    relevance: np.ndarray
    alpha: float

    def objective(self, z: np.ndarray) -> float:
        """The objective of (3.9) at ``z``."""
        return float(0.5 * (1.0 - self.alpha) * z @ (self.eigenvalues * z)
                     - self.alpha * self.relevance @ (self.basis @ z))
