r"""Contracts of the kernel Fisher discriminant kinds (:data:`conicml.kinds.KFDA`, ``KQPFS``).

Both hold the Gram matrix :math:`K` of the training points, the labels
:math:`y\in\{-1,+1\}^N` and the ridge :math:`\mu`, and know the matrices of seed 001
ch. 4 (with :math:`m_\pm = K\mathbf 1_\pm/N_\pm` the class-mean kernel columns,
:math:`d = m_+ - m_-`, and :math:`C = I - \mathbf 1\mathbf 1^\top/N`):

* :math:`W_\mu = \sum_\pm K_\pm(I - \tfrac1{N_\pm}\mathbf 1\mathbf 1^\top)K_\pm^\top + \mu I`
  (the regularised within-class scatter, eq. 4.3 / Algorithm 3);
* :math:`Q_K + \mu I = KCK + \mu I` and :math:`F_K = KCy` (eqs. 4.6–4.8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["KernelFisher"]


@dataclass(frozen=True, eq=False)
class KernelFisher:
    """Gram matrix, labels and ridge of a kernel Fisher / KQPFS program.

    Attributes
    ----------
    gram : ndarray of shape (N, N)
    y : ndarray of shape (N,)
        Exactly +1 / -1, both present.
    mu : float
        :math:`\\mu_W = \\mu_Q > 0`.
    """

    gram: np.ndarray
    y: np.ndarray
    mu: float

    @property
    def positive(self) -> np.ndarray:
        """Boolean mask of the positive class."""
        return self.y > 0

    def class_means(self) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`(m_+, m_-)`, the mean kernel column of each class (:math:`B_\pm` of 4.3)."""
        # K 1_pm / N_pm by two matrix-vector products over the contiguous K (a boolean
        # column selection copies N x N_pm entries with strided reads)
        pos = self.positive.astype(float)
        return (self.gram @ (pos / pos.sum()),
                self.gram @ ((1.0 - pos) / (pos.size - pos.sum())))

    def within_scatter(self) -> np.ndarray:
        r""":math:`W_\mu` (Algorithm 3, step 2), :math:`O(N^2 N_+ + N^2 N_-)`."""
        # Kc = K with each column centred by its class's mean column, then W = Kc Kc^T + mu I
        # by one symmetric product (the product does not depend on the order of the
        # columns), threaded as KQPFS's (CK)^T CK so that the two solvers' times compare
        # the algorithms, not the BLAS threads
        m_pos, m_neg = self.class_means()
        Kc = self.gram - np.where(self.positive, m_pos[:, None], m_neg[:, None])
        W = Kc @ Kc.T
        W[np.diag_indices_from(W)] += self.mu
        return W

    def within_apply(self, alpha: np.ndarray) -> np.ndarray:
        r""":math:`W_\mu\alpha` in :math:`O(N^2)` (no N × N product formed).

        With :math:`K_\pm^c = K_\pm - m_\pm\mathbf 1^\top`:
        :math:`\sum_\pm K_\pm^c K_\pm^{c\top}\alpha = Kv - m_+\mathbf 1_+^\top v -
        m_-\mathbf 1_-^\top v`, where :math:`v = K^\top\alpha - (m_+^\top\alpha)\mathbf 1_+
        - (m_-^\top\alpha)\mathbf 1_-` (two products with K, no copy of it)."""
        alpha = np.asarray(alpha, dtype=float)
        pos = self.positive
        m_pos, m_neg = self.class_means()
        v = self.gram.T @ alpha - np.where(pos, m_pos @ alpha, m_neg @ alpha)
        return (self.mu * alpha + self.gram @ v - m_pos * v[pos].sum()
                - m_neg * v[~pos].sum())

    def centred_gram(self) -> np.ndarray:
        """:math:`CK` (columns of K centred over the samples)."""
        return self.gram - self.gram.mean(axis=0)

    def kqpfs_objective(self, alpha: np.ndarray) -> float:
        r""":math:`G_\mu(\alpha) = \tfrac12\|CK\alpha - Cy\|^2 + \tfrac12\mu\|\alpha\|^2
        - \tfrac12\|Cy\|^2` (4.7), the program's own form.

        Equal to :math:`\tfrac12\alpha^\top(Q_K + \mu I)\alpha - F_K^\top\alpha`, but
        without forming :math:`Q_K = (CK)^\top CK`, whose round-off
        (:math:`\epsilon\|CK\|^2\|\alpha\|^2`) swamps the value when :math:`\mu` is small
        and :math:`\alpha` large."""
        alpha = np.asarray(alpha, dtype=float)
        Cy = self.y - self.y.mean()
        r = self.centred_gram() @ alpha - Cy
        return float(0.5 * (r @ r) + 0.5 * self.mu * (alpha @ alpha) - 0.5 * (Cy @ Cy))

    def kqpfs_system(self) -> tuple[np.ndarray, np.ndarray]:
        r"""(:math:`Q_K + \mu I`, :math:`F_K`) of eq. (4.8): :math:`Q_K = (CK)^\top CK`,
        :math:`F_K = (CK)^\top y`."""
        CK = self.centred_gram()
        A = CK.T @ CK
        A[np.diag_indices_from(A)] += self.mu
        return A, CK.T @ self.y
