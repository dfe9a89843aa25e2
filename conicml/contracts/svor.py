r"""The contract of the dual SVOR kind ``"qp.chance.svor.dual"``: :class:`SVORDualData`.

Built by :func:`conicml.formulations.svor_dual.svor_dual` into
``program.data["svor"]`` and read by ``smo-or`` (and nothing else: the generic
backends use the program's cvxpy problem). It holds the training points, their
integer ranks :math:`1..r`, the cost :math:`C` and the kernel, and lays the
dual variables out the way a pair-update solver needs them.

Variables (seed 003 eq. 4.1, Chu & Keerthi 2005 "explicit constraints"): every
point of rank :math:`i < r` has a multiplier :math:`\alpha` of its constraint
on threshold :math:`i`; every point of rank :math:`i > 1` has a multiplier
:math:`\alpha^*` of its constraint on threshold :math:`i - 1`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SVORDualData", "SVORIMDualData", "layout_complementarity"]


@dataclass(frozen=True, eq=False)
class SVORDualData:
    r"""Points, ranks, cost and kernel of a dual SVOR program.

    Attributes
    ----------
    X : ndarray of shape (m, n)
        Training points.
    ranks : ndarray of int, shape (m,)
        Ranks :math:`1..r`, every rank present.
    r : int
        Number of ranks (:math:`\ge 2`).
    C : float
        Cost of a unit of slack (:math:`0 \le \alpha, \alpha^* \le C`).
    kernel : conicml.Kernel
        Gives Gram columns and the diagonal.
    gram : ndarray of shape (m, m) or None
        The kernel's Gram matrix of ``X`` when the caller computed it (a path over
        :math:`C` on one data set computes it once); ``smo-or`` then reads its columns
        instead of computing them.
    """

    X: np.ndarray
    ranks: np.ndarray
    r: int
    C: float
    kernel: object
    gram: np.ndarray | None = None

    def layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""The dual variables sorted by threshold: ``(point, sign, threshold)``.

        ``sign`` is :math:`\sigma = +1` for an :math:`\alpha` and :math:`-1` for an
        :math:`\alpha^*`; ``threshold`` is :math:`t \in 1..r-1`. The partial sums
        of the constraints are :math:`D_i = \sum_{t(x) \le i} \sigma_x x`.
        """
        ia = np.flatnonzero(self.ranks < self.r)
        is_ = np.flatnonzero(self.ranks > 1)
        point = np.concatenate([ia, is_])
        sign = np.concatenate([np.ones(ia.size), -np.ones(is_.size)])
        thr = np.concatenate([self.ranks[ia], self.ranks[is_] - 1])
        order = np.argsort(thr, kind="stable")
        return point[order], sign[order], thr[order]

    #: Thresholds are coupled through the partial sums (ties when :math:`D_i > 0`).
    coupled = True

    def pack(self, alpha: np.ndarray, alpha_star: np.ndarray) -> np.ndarray:
        """The variables in :meth:`layout` order from ``(alpha, alpha_star)`` of shape (m,)."""
        point, sign, _ = self.layout()
        return np.where(sign > 0, np.asarray(alpha, float)[point],
                        np.asarray(alpha_star, float)[point])

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Inverse of :meth:`pack`: ``(alpha, alpha_star)``, each of shape (m,)."""
        point, sign, _ = self.layout()
        m = self.ranks.size
        alpha, alpha_star = np.zeros(m), np.zeros(m)
        alpha[point[sign > 0]] = x[sign > 0]
        alpha_star[point[sign < 0]] = x[sign < 0]
        return alpha, alpha_star

    def violation(self, alpha: np.ndarray, alpha_star: np.ndarray, scores: np.ndarray, *,
                  snap: float = 0.0) -> float:
        r"""Maximal KKT violation :math:`\max_i (B^i_{low} - B^i_{up})_+` (score units).

        With :math:`F_x = g_{p(x)} + \sigma_x` (:math:`g = Kv`,
        :math:`v = \alpha^* - \alpha`), a variable that can move by
        :math:`+\sigma_x` (:math:`\alpha < C`, :math:`\alpha^* > 0`) bounds the
        threshold :math:`\theta_{t(x)}` below by :math:`F_x`, one that can move
        by :math:`-\sigma_x` bounds it above (the primal complementarity of
        (4.1)); thresholds :math:`i, i+1` are tied when :math:`D_i > 0`
        (:math:`\theta_i = \theta_{i+1}`). The point is optimal iff, over blocks
        of tied thresholds, the running maximum of the lower bounds never
        exceeds the running minimum of the upper bounds (Chu & Keerthi 2005;
        seed 003 (5.3)–(5.5) with ties of any length). Variables within
        ``snap`` of a bound count as at the bound (for interior-point points).
        """
        point, sign, thr = self.layout()
        x = np.where(sign > 0, alpha[point], alpha_star[point])
        C = self.C
        at0, atC = x <= snap, x >= C - snap
        low = np.where(sign > 0, ~atC, ~at0)
        up = np.where(sign > 0, ~at0, ~atC)
        F = scores[point] + sign
        n_thr = self.r - 1
        starts = np.searchsorted(thr, np.arange(1, self.r))
        b_low = np.maximum.reduceat(np.where(low, F, -np.inf), starts)
        b_up = np.minimum.reduceat(np.where(up, F, np.inf), starts)
        D = np.cumsum(np.add.reduceat(sign * x, starts))
        return float(max(_block_gaps(b_low, b_up, D, snap * x.size + 1e-12 * C)[0], 0.0)) \
            if n_thr else 0.0


def _block_gaps(b_low: np.ndarray, b_up: np.ndarray, D: np.ndarray,
                tie_tol: float) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """``(max gap, block of each threshold, B_low, B_up)`` for ties ``D_i > tie_tol``."""
    n_thr = b_low.size
    blk = np.zeros(n_thr, dtype=np.int64)
    for i in range(1, n_thr):
        blk[i] = blk[i - 1] + (0 if D[i - 1] > tie_tol else 1)
    nb = int(blk[-1]) + 1
    blk_low = np.full(nb, -np.inf)
    blk_up = np.full(nb, np.inf)
    np.maximum.at(blk_low, blk, b_low)
    np.minimum.at(blk_up, blk, b_up)
    blk_low = np.maximum.accumulate(blk_low)
    blk_up = np.minimum.accumulate(blk_up[::-1])[::-1]
    B_low, B_up = blk_low[blk], blk_up[blk]
    gaps = B_low - B_up
    return float(np.max(gaps)), blk, B_low, B_up


def complementarity(data: SVORDualData, alpha: np.ndarray, alpha_star: np.ndarray,
                    scores: np.ndarray, theta: np.ndarray) -> float:
    r"""Largest relative complementarity residual of a dual point at thresholds ``theta``.

    For each variable, with :math:`F_x = g_{p(x)} + \sigma_x` and its threshold
    :math:`\theta_{t(x)}`, the stationarity of (4.1) asks :math:`x = 0` where
    :math:`\sigma_x(F_x - \theta) < 0`, :math:`x = C` where it is :math:`> 0`;
    the residual is :math:`\max(\tfrac{x}{C}(\sigma_x(\theta - F_x))_+,
    \tfrac{C - x}{C}(\sigma_x(F_x - \theta))_+)` (score units weighted by the
    distance to the bound the sign asks for), and for the ordering
    :math:`\theta_i \le \theta_{i+1}` it is
    :math:`\tfrac{D_i}{Cm}(\theta_{i+1} - \theta_i)`. Unlike
    :meth:`SVORDualData.violation` it is continuous in the point, so an
    interior-point answer (a few :math:`10^{-9}C` inside the box) reads
    as nearly optimal when it is.
    """
    point, sign, thr = data.layout()
    x = np.where(sign > 0, alpha[point], alpha_star[point])
    C = data.C
    s = sign * (scores[point] + sign - theta[thr - 1])
    res = np.maximum((x / C) * np.maximum(-s, 0.0), ((C - x) / C) * np.maximum(s, 0.0))
    worst = float(np.max(res, initial=0.0))
    if theta.size > 1:
        starts = np.searchsorted(thr, np.arange(1, data.r))
        D = np.cumsum(np.add.reduceat(sign * x, starts))[:-1]
        worst = max(worst, float(np.max(np.maximum(D, 0.0) / (C * x.size)
                                        * np.diff(theta))))
    return worst


@dataclass(frozen=True, eq=False)
class SVORIMDualData:
    r"""Points, ranks, cost and kernel of a dual SVOR program with *implicit* constraints.

    Chu & Keerthi (ICML 2005; Neural Computation 19:792, 2007; "SVORIM")
    constrain every threshold :math:`j` with *all* points: those of rank
    :math:`\le j` lie below :math:`\theta_j - 1`, those of rank :math:`> j`
    above :math:`\theta_j + 1`, each with its own slack. Point :math:`p` has a
    multiplier :math:`\alpha^j_p` (rank :math:`\le j`) or
    :math:`\alpha^{*j}_p` (rank :math:`> j`) at every threshold
    :math:`j = 1..r-1`; ``alpha`` and ``alpha_star`` are arrays of shape
    :math:`(m, r-1)` whose column :math:`j-1` holds threshold :math:`j`
    (entries that do not exist are 0). The thresholds are decoupled: one
    equality :math:`\sum_p \alpha^j_p = \sum_p \alpha^{*j}_p` per threshold,
    and the ordering :math:`\theta_1 \le \dots \le \theta_{r-1}` holds at
    every optimum without being imposed (Chu & Keerthi 2005, 2007 prove that
    both of their formulations order the thresholds at the optimum).

    Attributes
    ----------
    X : ndarray of shape (m, n)
    ranks : ndarray of int, shape (m,)
        Ranks :math:`1..r`, every rank present.
    r : int
    C : float
        Cost of a unit of slack (box :math:`[0, C]`).
    kernel : conicml.Kernel
    gram : ndarray of shape (m, m) or None
        As in :class:`SVORDualData`.
    """

    X: np.ndarray
    ranks: np.ndarray
    r: int
    C: float
    kernel: object
    gram: np.ndarray | None = None

    #: Every threshold has its own equality: no ties, pairs within one threshold.
    coupled = False

    def masks(self) -> tuple[np.ndarray, np.ndarray]:
        """Boolean ``(m, r-1)`` masks of the existing ``alpha`` / ``alpha_star`` entries."""
        j = np.arange(1, self.r)[None, :]
        below = self.ranks[:, None] <= j
        return below, ~below

    def layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""All :math:`m(r-1)` variables sorted by threshold: ``(point, sign, threshold)``.

        ``sign`` is +1 for :math:`\alpha^j_p` (rank :math:`\le j`) and -1 for
        :math:`\alpha^{*j}_p`; within a threshold, points in index order.
        """
        m, n_thr = self.ranks.size, self.r - 1
        point = np.tile(np.arange(m), n_thr)
        thr = np.repeat(np.arange(1, self.r), m)
        sign = np.where(self.ranks[point] <= thr, 1.0, -1.0)
        return point, sign, thr

    def pack(self, alpha: np.ndarray, alpha_star: np.ndarray) -> np.ndarray:
        """The variables in :meth:`layout` order from ``(alpha, alpha_star)`` of shape (m, r-1)."""
        below, _ = self.masks()
        return np.where(below, alpha, alpha_star).T.reshape(-1).astype(float)

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Inverse of :meth:`pack`: ``(alpha, alpha_star)``, each of shape (m, r-1)."""
        below, _ = self.masks()
        full = np.asarray(x, dtype=float).reshape(self.r - 1, self.ranks.size).T
        return np.where(below, full, 0.0), np.where(below, 0.0, full)


def layout_complementarity(point: np.ndarray, sign: np.ndarray, thr: np.ndarray,
                           x: np.ndarray, scores: np.ndarray, theta: np.ndarray,
                           C: float) -> float:
    r"""Largest relative complementarity residual of the variables ``x`` (layout order).

    As :func:`complementarity` without the ordering term, for any layout
    (used by the implicit-constraint program, whose thresholds are decoupled).
    """
    s = sign * (scores[point] + sign - theta[thr - 1])
    res = np.maximum((x / C) * np.maximum(-s, 0.0), ((C - x) / C) * np.maximum(s, 0.0))
    return float(np.max(res, initial=0.0))
