r"""Threshold-block working-set selection shared by ``smo-or`` and ``cbor-smo``.

Both solvers work on ordinal duals whose variables are laid out by threshold:
variable :math:`x` has a threshold :math:`t(x) \in 1..r-1`, a sign
:math:`\sigma_x` (+1 for an :math:`\alpha`, -1 for an :math:`\alpha^*`) and a
value :math:`F_x` (the score plus its margin term) at which it pins its
threshold. A variable that can move by :math:`+\sigma_x` bounds
:math:`\theta_{t(x)}` below by :math:`F_x`, one that can move by
:math:`-\sigma_x` bounds it above (seed 003 (5.3), corrected indices).

* **Coupled** thresholds (explicit constraints, the CBOR dual (4.5) and the
  SVOR dual of (4.1)): the test runs over blocks of tied thresholds
  (:func:`tie_blocks`);
* **Decoupled** thresholds (implicit constraints, Chu & Keerthi 2005, 2007):
  every threshold has its own equality, its own test and pairs within it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["midpoint_thresholds", "partner_mask", "pick_low", "segment_bounds",
           "tie_blocks", "violation_blocks"]


def segment_bounds(Flow: np.ndarray, Fup: np.ndarray, thr: np.ndarray,
                   n_thr: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-threshold ``(b_low, b_up, starts, ends)`` of variables sorted by ``thr``.

    Thresholds with no variable get ``-inf`` / ``+inf`` (an empty segment, as
    after shrinking).
    """
    starts = np.searchsorted(thr, np.arange(1, n_thr + 1))
    ends = np.append(starts[1:], thr.size)
    b_low = np.full(n_thr, -np.inf)
    b_up = np.full(n_thr, np.inf)
    ne = starts < ends
    if np.any(ne):
        # empty segments have zero width, so the non-empty starts delimit exactly
        b_low[ne] = np.maximum.reduceat(Flow, starts[ne])
        b_up[ne] = np.minimum.reduceat(Fup, starts[ne])
    return b_low, b_up, starts, ends


def tie_blocks(b_low: np.ndarray, b_up: np.ndarray, D: np.ndarray,
               tie: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``(block of each threshold, B_low, B_up)`` for coupled thresholds.

    Thresholds ``i`` and ``i + 1`` share a block when ``D_i > tie``;
    ``B_low`` is the running maximum of the blocks' lower bounds, ``B_up`` the
    running minimum (from the right) of their upper bounds.

    Notes
    -----
    The partial sums :math:`D_i = \sum_{t(x)\le i}\sigma_x x`
    tie thresholds :math:`i, i+1` when :math:`D_i > 0`; the optimality test runs
    over blocks of tied thresholds with the running maximum of the lower bounds
    and the running minimum of the upper bounds (seed 003 (5.4)–(5.5), Chu &
    Keerthi 2005); a pair may cross thresholds when the partner's block is at
    or after the first variable's.
    """
    n_thr = b_low.size
    blk = np.zeros(n_thr, dtype=np.int64)
    if n_thr > 1:
        blk[1:] = np.cumsum(D[:n_thr - 1] <= tie)
    nb = int(blk[-1]) + 1
    lo, hi = np.full(nb, -np.inf), np.full(nb, np.inf)
    np.maximum.at(lo, blk, b_low)
    np.minimum.at(hi, blk, b_up)
    lo = np.maximum.accumulate(lo)
    hi = np.minimum.accumulate(hi[::-1])[::-1]
    return blk, lo[blk], hi[blk]


def violation_blocks(b_low: np.ndarray, b_up: np.ndarray, D: np.ndarray | None,
                     tie: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tie_blocks` when ``D`` is given (coupled), else one block per threshold."""
    if D is None:
        return np.arange(b_low.size), b_low, b_up
    return tie_blocks(b_low, b_up, D, tie)


def pick_low(blk: np.ndarray, worst: int, b_low: np.ndarray, Flow: np.ndarray,
             starts: np.ndarray, ends: np.ndarray) -> int:
    """Index of the variable attaining ``B_low`` at threshold ``worst`` (the first of the pair)."""
    cand = np.flatnonzero(blk <= blk[worst])
    k = int(cand[np.argmax(b_low[cand])])
    return int(starts[k] + np.argmax(Flow[starts[k]:ends[k]]))


def partner_mask(Fup: np.ndarray, F_l: float, thr: np.ndarray, t_l: int,
                 blk: np.ndarray, coupled: bool) -> np.ndarray:
    """Variables that violate with the first variable (``F_u < F_l``) and may pair with it.

    Coupled: threshold block at or after that of ``t_l`` (the move raises the
    partial sums in between, or lowers them inside a tied block); decoupled:
    the same threshold (each threshold keeps its own equality).
    """
    if coupled:
        return (Fup < F_l) & (blk[thr - 1] >= blk[t_l - 1])
    return (Fup < F_l) & (thr == t_l)


def midpoint_thresholds(B_low: np.ndarray, B_up: np.ndarray) -> np.ndarray:
    """Midpoints of ``[B_low, B_up]`` (an infinite end replaced by the other), made monotone."""
    lo = np.where(np.isfinite(B_low), B_low, B_up)
    hi = np.where(np.isfinite(B_up), B_up, B_low)
    mid = 0.5 * (lo + hi)
    mid = np.where(np.isfinite(mid), mid, 0.0)
    return np.maximum.accumulate(mid)
