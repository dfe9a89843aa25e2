r"""The contract of the hull-of-spheres kind ``"socp.chance.cbc.hard.hull"``: :class:`CBCHullData`.

Built by :func:`conicml.formulations.cbc_hull.cbc_hull` into
``program.data["cbc_hull"]`` and read by ``cbc-hull-smo``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CBCHullData"]


@dataclass(frozen=True, eq=False)
class CBCHullData:
    r"""Sphere centres, labels and radii of a hull program, and its hard (3.11) dual.

    Attributes
    ----------
    coords : ndarray of shape (k, p)
        Centres :math:`\mu_j` (linear kernel) or the rows of a factor
        :math:`K = LL^\top` of the Gram matrix of the centres (rbf).
    y : ndarray of shape (k,)
        Labels :math:`\pm 1`.
    radii : ndarray of shape (k,)
        Sphere radii in the same space.
    hard_dual : Program
        The hard-margin dual (3.11) of the same spheres (kind
        ``"socp.chance.cbc.hard.dual"``), whose :math:`\alpha` maps onto the
        hull point: :math:`\alpha^{hull}_j = \alpha_j/\sum_{y=+1}\alpha`,
        :math:`V_j = \alpha^{hull}_j u`, :math:`u = v/\|v\|`,
        :math:`v = \sum_j\alpha_jy_j\mu_j`.
    """

    coords: np.ndarray
    y: np.ndarray
    radii: np.ndarray
    hard_dual: object

    def hull_point_from_hard_alpha(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha_hull, V)`` from an optimal :math:`\\alpha` of the hard dual (3.11)."""
        alpha = np.maximum(np.asarray(alpha, dtype=float), 0.0)
        total = float(alpha[self.y > 0].sum())
        if not total > 0:
            raise ValueError("the hard dual's alpha is zero on the positive class")
        a = alpha / total  # y^T alpha = 0: both classes sum to the same total
        v = self.coords.T @ (self.y * a)
        norm = float(np.linalg.norm(v))
        u = v / norm if norm > 0 else v
        return a, np.outer(a, u)
