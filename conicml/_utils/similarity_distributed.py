r"""QPFS similarity and relevance of a Dask array from per-block sufficient statistics.

Only :math:`M\times M` and :math:`M`-sized statistics travel to the client (never a row).

Two passes over the blocks (Notes of :func:`qpfs_statistics`): moments for both
similarities, then, for the mutual information, joint histograms on global bins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import ProgramError
from . import progress as _progress
from .similarity import _entropy_from_counts

__all__ = ["qpfs_statistics"]

#: Rows one-hot encoded at a time inside a block (bounds the worker's scratch memory).
ROWS_PER_STEP = 8192


def _check(Xb: np.ndarray) -> np.ndarray:
    Xb = np.asarray(Xb, dtype=float)
    if not np.all(np.isfinite(Xb)):
        bad = int(Xb.size - np.count_nonzero(np.isfinite(Xb)))
        raise ProgramError(f"X contains {bad} NaN or infinite value(s) (in one Dask block)")
    return Xb


def _pass1(Xb: np.ndarray, yb: np.ndarray) -> dict:
    Xb = _check(Xb)
    yb = np.asarray(yb)
    if yb.dtype.kind in "fc" and not np.all(np.isfinite(yb)):
        raise ProgramError("y contains NaN or infinite values (in one Dask block)")
    n = Xb.shape[0]
    if n == 0:
        return {"n": 0, "classes": {}}
    mean = Xb.mean(axis=0)
    Xc = Xb - mean
    classes = {}
    for label in np.unique(yb):
        rows = Xb[yb == label]
        classes[label.item()] = (rows.shape[0], rows.mean(axis=0))
    return {"n": n, "mean": mean, "M": Xc.T @ Xc, "min": Xb.min(axis=0),
            "max": Xb.max(axis=0), "absmax": np.abs(Xb).max(axis=0), "classes": classes}


def _chan(a: tuple, b: tuple, with_scatter: bool) -> tuple:
    na, ma = a[0], a[1]
    nb, mb = b[0], b[1]
    n = na + nb
    delta = mb - ma
    mean = ma + delta * (nb / n)
    if not with_scatter:
        return n, mean
    return n, mean, a[2] + b[2] + np.outer(delta, delta) * (na * nb / n)


def _merge1(*parts: dict) -> dict:
    out: dict = {"n": 0, "classes": {}}
    for p in parts:
        if p["n"] == 0:
            continue
        if out["n"] == 0:
            out = {k: v for k, v in p.items() if k != "classes"} | {"classes": dict(p["classes"])}
            continue
        out["n"], out["mean"], out["M"] = _chan((out["n"], out["mean"], out["M"]),
                                                (p["n"], p["mean"], p["M"]), True)
        out["min"] = np.minimum(out["min"], p["min"])
        out["max"] = np.maximum(out["max"], p["max"])
        out["absmax"] = np.maximum(out["absmax"], p["absmax"])
        for label, stats in p["classes"].items():
            cur = out["classes"].get(label)
            out["classes"][label] = stats if cur is None else _chan(cur, stats, False)
    return out


def _pass2(Xb: np.ndarray, yb: np.ndarray, active: np.ndarray, lo: np.ndarray,
           step: np.ndarray, sd_zero: np.ndarray, bins: int, labels: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Joint counts of every (feature, bin) pair and of every (feature, bin) with the class."""
    Xb = _check(Xb)[:, active]
    yc = np.searchsorted(labels, np.asarray(yb))
    a = active.size
    joint = np.zeros((a * bins, a * bins))
    with_y = np.zeros((a * bins, labels.size))
    offsets = np.arange(a) * bins
    for start in range(0, Xb.shape[0], ROWS_PER_STEP):
        # the same arithmetic as similarity.discretize, with the global lo and step
        codes = np.floor((Xb[start:start + ROWS_PER_STEP] - lo) / step)
        codes = np.clip(codes, 0, bins - 1).astype(np.int64)
        codes[:, sd_zero] = bins // 2
        r = codes.shape[0]
        D = np.zeros((r, a * bins))
        D[np.arange(r)[:, None], offsets[None, :] + codes] = 1.0
        joint += D.T @ D
        Y = np.zeros((r, labels.size))
        Y[np.arange(r), yc[start:start + r]] = 1.0
        with_y += D.T @ Y
    return joint, with_y


def _sum2(*parts: tuple) -> tuple:
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def _tree(parts: list, merge: Any) -> Any:
    import dask

    while len(parts) > 1:  # a tree reduction: each task merges at most 8 partials
        parts = [dask.delayed(merge)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    return parts[0]


def qpfs_statistics(X: Any, y: Any, similarity: str, bins: int = 3, width: float = 3.0
                    ) -> dict[str, Any]:
    r"""Similarity, relevance and constant-feature mask of a Dask array, on the workers.

    Returns ``{"constant": (M,) bool, "Q": (a, a) raw similarity of the a active
    features (diagonal as computed: 1 for correlation, :math:`H(X_i)` for MI),
    "relevance": (a,), "n": N, "classes": labels}``; the same quantities as
    :func:`conicml.formulations.qpfs.qpfs` derives from an in-memory ``X``.

    Notes
    -----
    * **Pass 1** (both similarities): per block the count, mean and centred scatter
      (merged by Chan, Golub & LeVeque's pairwise update, as the CBC moments), the
      column minimum, maximum and largest magnitude (the constant-feature test of
      :func:`~conicml._utils.similarity.constant_features`), and per class its count
      and mean. Absolute correlation :math:`|\hat\rho_{ij}| = |M_{ij}|/\sqrt{M_{ii}M_{jj}}`
      (eq. 2.6) and Hall's relevance follow exactly: with :math:`t = 1[Y=k] - \hat P_k`,
      :math:`\sum_j (x_{ji}-\bar x_i)t_j = n_k(\bar x_{k,i}-\bar x_i)` and
      :math:`\|t\|^2 = n_k(1-\hat P_k)`.
    * **Pass 2** (mutual information): the bin edges of the mRMR discretisation
      (:func:`~conicml._utils.similarity.discretize`: ``bins`` equal segments over
      :math:`\mu\pm\text{width}\,\sigma`, population :math:`\sigma`) are global, from pass 1;
      each block returns its joint histograms of every feature pair (one-hot products,
      :math:`(M\,\text{bins})^2` counts) and of every feature with the class. The entropies
      (eq. 2.8) are taken on the client from the summed integer counts, as in memory.
    """
    import dask

    from ..moments.distributed import row_blocks

    Xd, yd, _ = row_blocks(X, y)
    with _progress.dask_progress("QPFS statistics"):
        s = _tree([dask.delayed(_pass1)(xb, yb) for xb, yb in zip(Xd, yd)], _merge1).compute()
    n = int(s["n"])
    if n < 2:
        raise ProgramError(f"QPFS needs at least 2 samples, got {n}")
    labels = np.array(sorted(s["classes"]))
    if labels.size < 2:
        raise ProgramError("y contains a single class; feature relevance needs two or more")
    span = s["max"] - s["min"]
    constant = span <= 1e-12 * np.maximum(s["absmax"], 1.0)
    active = np.flatnonzero(~constant)
    if active.size == 0:
        raise ProgramError("every feature of X is constant: nothing to select")
    M = s["M"][np.ix_(active, active)]
    mean = s["mean"][active]
    counts = np.array([s["classes"][k][0] for k in labels], dtype=float)
    priors = counts / n
    if similarity == "correlation":
        norms = np.sqrt(np.diag(M))
        Q = np.abs(M / np.outer(norms, norms))
        F = np.zeros(active.size)
        for (nk, mk), p in zip((s["classes"][k] for k in labels), priors):
            F += p * np.abs(nk * (mk[active] - mean)) / (norms * np.sqrt(nk * (1.0 - p)))
        return {"constant": constant, "Q": Q, "relevance": F, "n": n, "classes": labels}
    sd = np.sqrt(np.maximum(np.diag(M) / n, 0.0))
    lo = mean - width * sd
    step = np.where(sd > 0, 2.0 * width * sd / bins, 1.0)
    parts = [dask.delayed(_pass2)(xb, yb, active, lo, step, sd == 0, bins, labels)
             for xb, yb in zip(Xd, yd)]
    with _progress.dask_progress("QPFS joint histograms"):
        joint, with_y = _tree(parts, _sum2).compute()
    a = active.size
    joint = joint.reshape(a, bins, a, bins)
    marg = np.einsum("ibib->ib", joint)
    H = _entropy_from_counts(marg, n, (1,))
    Q = np.maximum(H[:, None] + H[None, :] - _entropy_from_counts(joint, n, (1, 3)), 0.0)
    with_y = with_y.reshape(a, bins, labels.size)
    Hy = _entropy_from_counts(counts, n, (0,))
    F = np.maximum(H + Hy - _entropy_from_counts(with_y, n, (1, 2)), 0.0)
    return {"constant": constant, "Q": Q, "relevance": F, "n": n, "classes": labels}
