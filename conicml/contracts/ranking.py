r"""Contract of the ranking kinds (``qp.rank.hinge``, ``socp.rank.smoothed``).

A ranking program (:mod:`conicml.formulations.ranking`) is fully described by
the kernel columns of its basis, the ordinal level of every training sample and
the hyper-parameters:

.. math::

    F(\beta) = \frac1N \sum_{(i,j):\,\ell_i > \ell_j} \ell_\epsilon\big(p_i - p_j\big)
    + \frac\lambda2 \beta^\top K_{\mathcal R\mathcal R}\beta,
    \qquad p = K_{\bullet\mathcal R}\beta,

with :math:`N = \sum_{r<s} m_r m_s` the number of pairs (thesis (3.14)/(3.15),
(3.7) for :math:`\mathcal R` = all samples, (6.1)/(6.2) for more than two
levels). The pairs are never listed: solvers evaluate the pairwise part by
sorting (:mod:`conicml.contracts.ranking_ops`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RankingData"]


@dataclass(frozen=True)
class RankingData:
    """Everything a ranking solver needs, and nothing of the formulation.

    Attributes
    ----------
    KR : ndarray of shape (m, r)
        Kernel columns of the basis, :math:`K_{\\bullet\\mathcal R}`.
    KRR : ndarray of shape (r, r)
        Kernel block of the basis, :math:`K_{\\mathcal R\\mathcal R}` (symmetric PSD).
    levels : ndarray of int, shape (m,)
        Ordinal level of every sample, ``0 .. n_levels-1``; a pair is every
        :math:`(i, j)` with ``levels[i] > levels[j]`` (biclass: 1 = rare/positive,
        0 = negative).
    lam : float
        Regularisation :math:`\\lambda > 0` (mean-loss form).
    eps : float
        Smoothing of :math:`\\ell_\\epsilon`; ``0.0`` means the hinge.
    n_pairs : int
        :math:`N = \\sum_{r<s} m_r m_s`.
    """

    KR: np.ndarray
    KRR: np.ndarray
    levels: np.ndarray
    lam: float
    eps: float
    n_pairs: int

    @property
    def n_samples(self) -> int:
        """Number of training samples m."""
        return int(self.KR.shape[0])

    @property
    def n_basis(self) -> int:
        """Size of the basis, the number of basis samples."""
        return int(self.KR.shape[1])
