r"""The RankRC objective of a Dask array: a map-reduce of sorted partial sums over the negatives.

With the rare (positive) samples :math:`\mathcal R` gathered on the client and
:math:`a = K_{\mathcal R\mathcal R}\beta` their scores, every pair is one positive and
one negative, so the pairwise loss and its generalized derivatives are sums over the
negatives. A block :math:`b` of negatives with scores :math:`p_b = K_{b\mathcal R}\beta`
(its kernel columns computed on its worker) contributes, by the same sorting as
:class:`~conicml.contracts.ranking_ops.PairwiseLoss` on the positives and its own
negatives only,

* its loss :math:`L_b`, the loss gradient at the positives :math:`g_{a,b}`
  (:math:`m_+`) and :math:`K_{b\mathcal R}^\top g_{p_b}` (:math:`m_+`);
* for a direction :math:`s`, the Hessian product parts :math:`v_{a,b}` and
  :math:`K_{b\mathcal R}^\top v_{p_b}`.

The client sums them: :math:`\nabla_\beta L = \frac1N\big(K_{\mathcal R\mathcal R}^\top
\sum_b g_{a,b} + \sum_b K_{b\mathcal R}^\top g_{p_b}\big)`, likewise for the Hessian
product :math:`\frac1N K_{\bullet\mathcal R}^\top H_p K_{\bullet\mathcal R}s`
(thesis (3.21)–(3.22), transposes restored). Only :math:`m_+`-sized vectors travel;
each pass recomputes the :math:`n_b\times m_+` kernel block on the worker (nothing of
the size of the data is kept or sent).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import ProgramError
from ..kernels import Kernel
from .kernel_columns import rbf_cross
from .ranking_ops import PairwiseLoss

__all__ = ["DaskRankingLoss", "block_gradient", "block_hess_vec", "block_hessian", "gather_rows",
           "scan"]


def _negatives(Xb: np.ndarray, yb: np.ndarray, positive: Any) -> np.ndarray:
    Xb = np.asarray(Xb, dtype=float)
    if not np.all(np.isfinite(Xb)):
        bad = int(Xb.size - np.count_nonzero(np.isfinite(Xb)))
        raise ProgramError(f"X contains {bad} NaN or infinite value(s) (in one Dask block)")
    return Xb[np.asarray(yb) != positive]


def _kernel_columns(kernel: Kernel, X: np.ndarray, XR: np.ndarray) -> np.ndarray:
    r"""``kernel(X, XR)``; for ``rbf`` computed in place in one array,
    :math:`\exp(\min(2\gamma x^\top r - \gamma\|x\|^2 - \gamma\|r\|^2, 0))`, without the
    temporaries of the general kernel function (a block's columns are its largest array)."""
    if kernel.name != "rbf":
        return kernel(X, XR)
    return rbf_cross(X, XR, float(kernel.gamma))


def block_gradient(Xneg: np.ndarray, XR: np.ndarray, kernel: Kernel, beta: np.ndarray,
                   a: np.ndarray, eps: float) -> tuple[float, np.ndarray, np.ndarray]:
    r"""One block's ``(L_b, g_a, K_b^T g_b)``: its pairs with every positive (scores ``a``)."""
    m_pos = a.size
    if Xneg.shape[0] == 0:
        return 0.0, np.zeros(m_pos), np.zeros(XR.shape[0])
    Kb = _kernel_columns(kernel, Xneg, XR)
    levels = np.concatenate([np.ones(m_pos, dtype=np.int64),
                             np.zeros(Kb.shape[0], dtype=np.int64)])
    loss, grad, _ = PairwiseLoss(levels, eps).evaluate(np.concatenate([a, Kb @ beta]))
    return loss, grad[:m_pos], Kb.T @ grad[m_pos:]


def block_hess_vec(Xneg: np.ndarray, XR: np.ndarray, kernel: Kernel, beta: np.ndarray,
                   a: np.ndarray, ua: np.ndarray, s: np.ndarray, eps: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    r"""One block's Hessian product parts ``(v_a, K_b^T v_b)`` for the direction ``s``."""
    m_pos = a.size
    if Xneg.shape[0] == 0:
        return np.zeros(m_pos), np.zeros(XR.shape[0])
    Kb = _kernel_columns(kernel, Xneg, XR)
    levels = np.concatenate([np.ones(m_pos, dtype=np.int64),
                             np.zeros(Kb.shape[0], dtype=np.int64)])
    fn = PairwiseLoss(levels, eps)
    _, _, states = fn.evaluate(np.concatenate([a, Kb @ beta]))
    v = fn.hess_vec(states, np.concatenate([ua, Kb @ s]))
    return v[:m_pos], Kb.T @ v[m_pos:]


def block_hessian(Xneg: np.ndarray, XR: np.ndarray, kernel: Kernel, beta: np.ndarray,
                  a: np.ndarray, eps: float, fraction: float = 1.0) -> tuple:
    r"""One block's gradient parts and generalized-Hessian parts, from one sort.

    Returns ``(L_b, g_a, K_b^T g_b, c_a, S, G)``: with the quadratic pair set
    :math:`\mathcal Q_b` of the block, :math:`c_{a,i}` the number of its pairs at
    positive i, :math:`S_i = \sum_{j:(i,j)\in\mathcal Q_b}K_{j\mathcal R}` (sorted
    prefix sums) and :math:`G = \sum_j c_{b,j}K_{j\mathcal R}^\top K_{j\mathcal R}`;
    the client assembles :math:`K^\top P^\top I^{\mathcal Q}PK = K_{++}^\top
    \operatorname{diag}(c_a)K_{++} + G - K_{++}^\top S - S^\top K_{++}`, summed over
    the blocks, times :math:`1/(2\epsilon)`. ``fraction < 1`` forms :math:`G` (the
    :math:`O(n_b m_+^2)` term) from every ``round(1/fraction)``-th negative of the
    quadratic set only, weighted by the stride (a sub-sampled Hessian; the gradient
    stays exact).
    """
    m_pos, r = a.size, XR.shape[0]
    if Xneg.shape[0] == 0:
        return 0.0, np.zeros(m_pos), np.zeros(r), np.zeros(m_pos), np.zeros((m_pos, r)), \
            np.zeros((r, r))
    Kb = _kernel_columns(kernel, Xneg, XR)
    levels = np.concatenate([np.ones(m_pos, dtype=np.int64),
                             np.zeros(Kb.shape[0], dtype=np.int64)])
    loss, grad, states = PairwiseLoss(levels, eps).evaluate(np.concatenate([a, Kb @ beta]))
    st = states[0]
    S = np.zeros((m_pos, r))
    rows = st.k1 > st.k0
    if np.any(rows):
        # S_i at the positives with a quadratic window only, from prefix sums of the
        # sorted negatives at the windows' ends (the rows between consecutive ends summed
        # by reduceat): the rows outside every window are never copied or summed
        k0, k1 = st.k0[rows], st.k1[rows]
        start, end = int(k0.min()), int(k1.max())
        ends = np.unique(np.concatenate([k0, k1]))
        segments = np.add.reduceat(Kb[st.order_lo[start:end]], ends[:-1] - start, axis=0)
        cu = np.zeros((ends.size, r))
        np.cumsum(segments, axis=0, out=cu[1:])
        S[rows] = cu[np.searchsorted(ends, k1)] - cu[np.searchsorted(ends, k0)]
    cb = (st.kq - st.kl).astype(float)
    rows = np.flatnonzero(cb)
    stride = max(1, int(round(1.0 / fraction)))
    rows = rows[::stride]
    G = (Kb[rows] * (stride * cb[rows])[:, None]).T @ Kb[rows]
    return loss, grad[:m_pos], Kb.T @ grad[m_pos:], (st.k1 - st.k0).astype(float), S, G


def _block_hessian_task(Xb, yb, positive, XR, kernel, beta, a, eps, fraction):
    return block_hessian(_negatives(Xb, yb, positive), XR, kernel, beta, a, eps, fraction)


def _block_grad_task(Xb, yb, positive, XR, kernel, beta, a, eps):
    return block_gradient(_negatives(Xb, yb, positive), XR, kernel, beta, a, eps)


def _block_hv_task(Xb, yb, positive, XR, kernel, beta, a, ua, s, eps):
    return block_hess_vec(_negatives(Xb, yb, positive), XR, kernel, beta, a, ua, s, eps)


def _block_top_task(Xb, yb, positive, XR, kernel, beta, k):
    Xneg = _negatives(Xb, yb, positive)
    if Xneg.shape[0] == 0:
        return np.empty(0)
    scores = _kernel_columns(kernel, Xneg, XR) @ beta
    return np.sort(scores)[::-1][:k]


def _sum(*parts: tuple) -> tuple:
    return tuple(sum(p[i] for p in parts) for i in range(len(parts[0])))


def _top(*parts: np.ndarray, k: int) -> np.ndarray:
    return np.sort(np.concatenate(parts))[::-1][:k]


class DaskRankingLoss:
    r"""The RankRC loss (mean over the :math:`N = m_+m_-` pairs) of a Dask array.

    Parameters
    ----------
    X_blocks, y_blocks : lists of dask.delayed
        Row blocks of the data and labels (same chunks).
    positive : label value of the rare class.
    XR : ndarray of shape (r, d)
        The basis rows: the positive rows in data order, or a subset of them.
    kernel : Kernel
    eps : float
        Smoothing of the loss (> 0).
    n_pairs : int
        :math:`N = m_+ m_-`.
    XP : ndarray of shape (m_+, d), optional
        Every positive row, when the basis ``XR`` is a subset of them (default: ``XR``).
    """

    def __init__(self, X_blocks: list, y_blocks: list, positive: Any, XR: np.ndarray,
                 kernel: Kernel, eps: float, n_pairs: int,
                 XP: np.ndarray | None = None) -> None:
        self.X_blocks, self.y_blocks = X_blocks, y_blocks
        self.positive = positive
        self.XR = XR
        self.kernel = kernel
        self.eps = float(eps)
        self.n_pairs = int(n_pairs)
        # K_{+R} without jitter (m_+ x r): the positives' score rows over the basis
        self.Kpp = kernel(XR if XP is None else XP, XR)
        self.passes = 0

    def _reduce(self, parts: list, merge: Any) -> Any:
        import dask

        self.passes += 1
        while len(parts) > 1:  # a tree reduction: each task merges at most 8 partials
            parts = [dask.delayed(merge)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
        return parts[0].compute()

    def gradient(self, beta: np.ndarray) -> tuple[float, np.ndarray]:
        r"""``(L(β)/N, ∇_β L/N)``: one pass over the data."""
        import dask

        a = self.Kpp @ beta
        XR, kern, beta_d = dask.delayed(self.XR), dask.delayed(self.kernel), dask.delayed(beta)
        parts = [dask.delayed(_block_grad_task)(xb, yb, self.positive, XR, kern, beta_d, a,
                                                self.eps)
                 for xb, yb in zip(self.X_blocks, self.y_blocks)]
        loss, ga, kg = self._reduce(parts, _sum)
        return loss / self.n_pairs, (self.Kpp.T @ ga + kg) / self.n_pairs

    def gradient_hessian(self, beta: np.ndarray, fraction: float = 1.0
                         ) -> tuple[float, np.ndarray, np.ndarray]:
        r"""``(L/N, ∇_β L/N, ∇²_β L/N)`` (generalized Hessian, (3.22)): one pass.

        ``fraction`` as in :func:`block_hessian`.
        """
        import dask

        a = self.Kpp @ beta
        XR, kern, beta_d = dask.delayed(self.XR), dask.delayed(self.kernel), dask.delayed(beta)
        parts = [dask.delayed(_block_hessian_task)(xb, yb, self.positive, XR, kern, beta_d,
                                                   a, self.eps, fraction)
                 for xb, yb in zip(self.X_blocks, self.y_blocks)]
        loss, ga, kg, ca, S, G = self._reduce(parts, _sum)
        K = self.Kpp
        KS = K.T @ S
        H = ((K.T * ca) @ K + G - KS - KS.T) / (2.0 * self.eps)
        n = self.n_pairs
        return loss / n, (K.T @ ga + kg) / n, 0.5 * (H + H.T) / n

    def hess_vec(self, beta: np.ndarray, s: np.ndarray) -> np.ndarray:
        r""":math:`\frac1N K_{\bullet\mathcal R}^\top H_p K_{\bullet\mathcal R}s`: one pass."""
        import dask

        a, ua = self.Kpp @ beta, self.Kpp @ s
        XR, kern = dask.delayed(self.XR), dask.delayed(self.kernel)
        beta_d, s_d = dask.delayed(beta), dask.delayed(s)
        parts = [dask.delayed(_block_hv_task)(xb, yb, self.positive, XR, kern, beta_d, a, ua,
                                              s_d, self.eps)
                 for xb, yb in zip(self.X_blocks, self.y_blocks)]
        va, kv = self._reduce(parts, _sum)
        return (self.Kpp.T @ va + kv) / self.n_pairs

    def top_negative_scores(self, beta: np.ndarray, k: int) -> np.ndarray:
        """The ``k`` largest negative scores, descending (per-block tops merged)."""
        import dask

        XR, kern, beta_d = dask.delayed(self.XR), dask.delayed(self.kernel), dask.delayed(beta)
        parts = [dask.delayed(_block_top_task)(xb, yb, self.positive, XR, kern, beta_d, k)
                 for xb, yb in zip(self.X_blocks, self.y_blocks)]
        return self._reduce(parts, lambda *p: _top(*p, k=k))


# -- the setup passes ----------------------------------------------------------------------
def _scan_block(Xb: np.ndarray, yb: np.ndarray) -> dict:
    Xb = np.asarray(Xb, dtype=float)
    yb = np.asarray(yb)
    if not np.all(np.isfinite(Xb)):
        bad = int(Xb.size - np.count_nonzero(np.isfinite(Xb)))
        raise ProgramError(f"X contains {bad} NaN or infinite value(s) (in one Dask block)")
    if yb.dtype.kind in "fc" and not np.all(np.isfinite(yb)):
        raise ProgramError("y contains NaN or infinite values (in one Dask block)")
    labels, counts = np.unique(yb, return_counts=True)
    n = Xb.shape[0]
    if n == 0:
        return {"n": 0, "labels": {}}
    mean = Xb.mean(axis=0)
    return {"n": n, "mean": mean, "ss": ((Xb - mean) ** 2).sum(axis=0),
            "labels": dict(zip(labels.tolist(), counts.tolist()))}


def _merge_scan(*parts: dict) -> dict:
    out: dict = {"n": 0, "labels": {}}
    for p in parts:
        for k, c in p["labels"].items():
            out["labels"][k] = out["labels"].get(k, 0) + c
        if p["n"] == 0:
            continue
        if out["n"] == 0:
            out.update(n=p["n"], mean=p["mean"], ss=p["ss"])
            continue
        n = out["n"] + p["n"]
        delta = p["mean"] - out["mean"]  # Chan, Golub & LeVeque, diagonal only
        out["ss"] = out["ss"] + p["ss"] + delta ** 2 * (out["n"] * p["n"] / n)
        out["mean"] = out["mean"] + delta * (p["n"] / n)
        out["n"] = n
    return out


def _rows_block(Xb: np.ndarray, yb: np.ndarray, positive: Any, offset: int
                ) -> tuple[np.ndarray, np.ndarray]:
    mask = np.asarray(yb) == positive
    return np.asarray(Xb, dtype=float)[mask], offset + np.flatnonzero(mask)


def _concat(*parts: tuple) -> tuple:
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def scan(X: Any, y: Any) -> dict[str, Any]:
    """Blocks of ``X``/``y``, the label counts and per-feature means and variances: one pass."""
    import dask

    from ..moments.distributed import row_blocks

    Xd, yd, _ = row_blocks(X, y)
    parts = [dask.delayed(_scan_block)(xb, yb) for xb, yb in zip(Xd, yd)]
    while len(parts) > 1:
        parts = [dask.delayed(_merge_scan)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    stats = parts[0].compute()
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int)
    return {"X_blocks": Xd, "y_blocks": yd, "offsets": offsets, "n": int(stats["n"]),
            "labels": stats["labels"], "mean": stats.get("mean"),
            "var": None if stats["n"] == 0 else stats["ss"] / stats["n"]}


def gather_rows(X_blocks: list, y_blocks: list, offsets: np.ndarray, positive: Any
                ) -> tuple[np.ndarray, np.ndarray]:
    """The rows labelled ``positive`` and their global indices, in data order."""
    import dask

    parts = [dask.delayed(_rows_block)(xb, yb, positive, int(o))
             for xb, yb, o in zip(X_blocks, y_blocks, offsets)]
    while len(parts) > 1:  # contiguous groups: the data order is kept
        parts = [dask.delayed(_concat)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    return parts[0].compute()
