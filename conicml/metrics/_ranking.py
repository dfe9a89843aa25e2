r"""Ranking metrics of seed 000: AUC (3.2) and the multi-level MAUC (ch. 6), in O(m log m).

* :func:`auc` (3.2): :math:`\frac1{m_+m_-}\sum_{i:+}\sum_{j:-}\mathbb I[f(x_i)\ge f(x_j)]`.
  The thesis counts a tie as a correctly ordered pair (``ties="thesis"``, the
  default). :func:`sklearn.metrics.roc_auc_score` counts a tie as one half
  (``ties="half"`` reproduces it exactly) and the RankRC paper's eq. (2) counts
  it as zero (``ties="strict"``). Without ties the three agree.
* :func:`mauc` (ch. 6): :math:`\frac1{\sum_{r<s}m_rm_s}\sum_r\sum_{i:y_i=r}
  \sum_{j:y_j<y_i}\mathbb I[f(x_i) > f(x_j)]`, **strict** :math:`>` as printed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["auc", "mauc"]

_TIES = ("thesis", "half", "strict")


def _scores(y_true: Any, y_score: Any) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true)
    s = np.asarray(y_score, dtype=float)
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(f"y_true and y_score must be 1-D, got shapes {y.shape} and {s.shape}")
    if y.shape != s.shape:
        raise ValueError(f"shape mismatch: y_true has {y.size} entries, y_score {s.size}")
    if not np.all(np.isfinite(s)):
        raise ValueError("y_score contains NaN or infinite values")
    return y, s


def _ordered_pairs(upper: np.ndarray, lower: np.ndarray) -> tuple[int, int]:
    """(#pairs with upper > lower, #ties) by sorting ``lower``."""
    lo = np.sort(lower)
    left = np.searchsorted(lo, upper, side="left")
    right = np.searchsorted(lo, upper, side="right")
    return int(left.sum()), int((right - left).sum())


def auc(y_true: Any, y_score: Any, *, pos_label: Any = None, ties: str = "thesis") -> float:
    """Area under the ROC curve as the fraction of correctly ordered (positive, negative) pairs.

    Parameters
    ----------
    y_true : array of shape (m,)
        Two classes; the positive (rare) class is ``pos_label``, by default the
        larger label (``+1`` for +1/-1 labels).
    y_score : array of shape (m,)
        Ranking scores (higher = more likely positive).
    pos_label : optional
    ties : {"thesis", "half", "strict"}, default="thesis"
        Weight of a tied pair: 1 (thesis eq. 3.2, ``>=``), 1/2 (``roc_auc_score``)
        or 0 (paper eq. 2, ``>``).

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        Shape mismatch, NaN/inf scores, not exactly two classes, unknown ``ties``.
    """
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}, got {ties!r}")
    y, s = _scores(y_true, y_score)
    classes = np.unique(y)
    if pos_label is None:
        if classes.size != 2:
            raise ValueError(f"auc needs exactly two classes in y_true, got {classes.size}")
        pos_label = classes[1]
    pos = y == pos_label
    if pos.all() or not pos.any():
        raise ValueError("auc needs both classes in y_true (m_+ > 0 and m_- > 0)")
    greater, tied = _ordered_pairs(s[pos], s[~pos])
    weight = {"thesis": 1.0, "half": 0.5, "strict": 0.0}[ties]
    return (greater + weight * tied) / (int(pos.sum()) * int((~pos).sum()))


def mauc(y_true: Any, y_score: Any) -> float:
    """Multi-level AUC (ch. 6): fraction of pairs of different levels ranked strictly right.

    Parameters
    ----------
    y_true : array of shape (m,)
        Ordinal levels (any sortable values, at least two distinct).
    y_score : array of shape (m,)

    Returns
    -------
    float in [0, 1]; ties count 0 (strict ``>``, as printed).
    """
    y, s = _scores(y_true, y_score)
    levels = np.unique(y)
    if levels.size < 2:
        raise ValueError("mauc needs at least two distinct levels in y_true")
    good = 0
    total = 0
    for r in levels[1:]:
        upper = s[y == r]
        lower = s[y < r]
        greater, _ = _ordered_pairs(upper, lower)
        good += greater
        total += upper.size * lower.size
    return good / total
