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
        pos = self.positive
        return self.gram[:, pos].mean(axis=1), self.gram[:, ~pos].mean(axis=1)

    def within_scatter(self) -> np.ndarray:
        r""":math:`W_\mu` (Algorithm 3, step 2), :math:`O(N^2 N_+ + N^2 N_-)`."""
        # the columns of both classes in one array, each block centred in place, and
        # W = Kc Kc^T + mu I by one symmetric product (one copy of K instead of four, no
        # dense identity), threaded as KQPFS's (CK)^T CK so that the two solvers' times
        # compare the algorithms, not the BLAS threads
        pos = self.positive
        order = np.argsort(~pos, kind="stable")
        n_pos = int(pos.sum())
        Kc = self.gram[:, order]
        for block in (slice(0, n_pos), slice(n_pos, Kc.shape[1])):
            Kc[:, block] -= Kc[:, block].mean(axis=1, keepdims=True)
        W = Kc @ Kc.T
        W[np.diag_indices_from(W)] += self.mu
        return W

    def within_apply(self, alpha: np.ndarray) -> np.ndarray:
        r""":math:`W_\mu\alpha` in :math:`O(N^2)` (no N × N product formed)."""
        out = self.mu * alpha
        for mask in (self.positive, ~self.positive):
            Kc = self.gram[:, mask] - self.gram[:, mask].mean(axis=1, keepdims=True)
            out = out + Kc @ (Kc.T @ alpha)
        return out

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
