r"""Feature similarities and relevances shared by QPFS and the mRMR / MaxRel selectors.

Seed 001 §2.2.1 and §3.2 (Rodríguez Luján 2012): the absolute correlation (eq. 2.6)
with Hall's relevance (:func:`correlation_rows`, :func:`correlation_relevance`), and the
mutual information (eq. 2.8) after the mRMR discretisation (:func:`discretize`,
:func:`mutual_info_rows`).

**Constant features** (zero variance): correlation is undefined (0/0). They are
reported by :func:`constant_features`; the formulations drop them from the program
(their weight is 0, relevance 0, ranked last).

Everything works on row blocks so that a Nyström caller can ask for ``Q[I, :]``
only, never forming the M x M matrix.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "constant_features",
    "correlation_relevance",
    "correlation_rows",
    "discretize",
    "mutual_info_relevance",
    "mutual_info_rows",
    "one_hot",
    "similarity_rows",
]


def constant_features(X: np.ndarray) -> np.ndarray:
    """Boolean mask of the features with zero variance (up to round-off)."""
    span = X.max(axis=0) - X.min(axis=0)
    scale = np.maximum(np.abs(X).max(axis=0), 1.0)
    return span <= 1e-12 * scale


def _standardize(X: np.ndarray) -> np.ndarray:
    Xc = X - X.mean(axis=0)
    norms = np.sqrt(np.einsum("ij,ij->j", Xc, Xc))
    norms[norms == 0] = 1.0
    return Xc / norms


def correlation_rows(X: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    r"""Rows ``rows`` of :math:`Q = |\hat\rho|` (eq. 2.6), shape (len(rows), M)."""
    Z = _standardize(X)
    Zr = Z if rows is None else Z[:, rows]
    return np.abs(Zr.T @ Z)


def correlation_relevance(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    r"""Hall's prior-weighted one-vs-rest relevance.

    :math:`F_i = \sum_k \hat P_k|\hat\rho(X_i,1[Y=k])|`.
    """
    Z = _standardize(X)
    classes, counts = np.unique(y, return_counts=True)
    priors = counts / counts.sum()
    F = np.zeros(X.shape[1])
    for k, p in zip(classes, priors):
        t = (y == k).astype(float)
        t -= t.mean()
        nt = np.linalg.norm(t)
        F += p * np.abs(Z.T @ (t / nt))
    return F


def discretize(X: np.ndarray, bins: int = 5, width: float = 2.0) -> np.ndarray:
    r"""Integer codes in ``0..bins-1``: equal segments over :math:`\mu\pm\text{width}\,\sigma`.

    Out-of-range values go to the end bins; a constant feature gets the middle bin.

    Notes
    -----
    The mRMR discretisation: each feature is cut
    into an *odd* number ``bins`` of equal segments covering :math:`\mu \pm s\sigma`
    (``width`` = s); values beyond the range fall into the end bins. The thesis states
    neither n nor s; the defaults ``bins=5, width=2`` were chosen because they bring the
    ARR row of Table 3.4 closest (``conicml reproduce rodriguez_lujan_tables_3_4_3_6``).
    """
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    lo = mu - width * sd
    step = np.where(sd > 0, 2.0 * width * sd / bins, 1.0)
    codes = np.floor((X - lo) / step)
    codes = np.clip(codes, 0, bins - 1).astype(np.int64)
    codes[:, sd == 0] = bins // 2
    return codes


def _entropy_from_counts(counts: np.ndarray, n: int, axis: tuple[int, ...]) -> np.ndarray:
    p = counts / n
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p > 0, p * np.log(p), 0.0)
    return -t.sum(axis=axis)


def one_hot(codes: np.ndarray, bins: int) -> np.ndarray:
    """The (N, M * bins) indicator matrix of the codes (reusable across calls)."""
    n, m = codes.shape
    D = np.zeros((n, m * bins))
    D[np.arange(n)[:, None], np.arange(m)[None, :] * bins + codes] = 1.0
    return D


def mutual_info_rows(codes: np.ndarray, bins: int, rows: np.ndarray | None = None,
                     *, block: int = 64, onehot: np.ndarray | None = None) -> np.ndarray:
    r"""Rows of :math:`Q_{ij} = I(X_i; X_j) = H(X_i) + H(X_j) - H(X_i, X_j)` (eq. 2.8).

    Joint counts come from products of one-hot blocks (``block`` features at a time).
    MI is in nats (the log base changes neither rankings nor :math:`\hat\alpha`).
    The diagonal is :math:`q_{ii} = I(X_i;X_i) = H(X_i)`.
    """
    n, m = codes.shape
    rows = np.arange(m) if rows is None else np.asarray(rows)
    if rows.size <= 8:  # a few rows (greedy mRMR): counts by bincount, O(N M) per row
        offsets = (np.arange(m) * bins * bins)[None, :]
        marg = np.stack([np.bincount(codes[:, j], minlength=bins) for j in range(m)]) \
            if m <= 64 else (np.arange(bins)[None, :, None] == codes.T[:, None, :]).sum(-1)
        H = _entropy_from_counts(marg, n, (1,))
        out = np.empty((rows.size, m))
        for r, i in enumerate(rows):
            joint = np.bincount((codes[:, i][:, None] * bins + codes + offsets).ravel(),
                                minlength=m * bins * bins).reshape(m, bins, bins)
            out[r] = H[i] + H - _entropy_from_counts(joint, n, (1, 2))
        return np.maximum(out, 0.0)
    D = one_hot(codes, bins) if onehot is None else onehot
    marg = D.sum(axis=0).reshape(m, bins)
    H = _entropy_from_counts(marg, n, (1,))
    out = np.empty((rows.size, m))
    for start in range(0, rows.size, block):
        r = rows[start:start + block]
        cols = (r[:, None] * bins + np.arange(bins)[None, :]).ravel()
        joint = (D[:, cols].T @ D).reshape(r.size, bins, m, bins)
        Hj = _entropy_from_counts(joint, n, (1, 3))
        out[start:start + r.size] = H[r][:, None] + H[None, :] - Hj
    return np.maximum(out, 0.0)


def mutual_info_relevance(codes: np.ndarray, y: np.ndarray) -> np.ndarray:
    r""":math:`F_i = I(X_i; Y)` with the class taken as is (discrete)."""
    n, m = codes.shape
    _, yc = np.unique(y, return_inverse=True)
    ncls = int(yc.max()) + 1
    bins = int(codes.max()) + 1
    F = np.empty(m)
    Hy = _entropy_from_counts(np.bincount(yc, minlength=ncls), n, (0,))
    for j in range(m):
        joint = np.bincount(codes[:, j] * ncls + yc, minlength=bins * ncls).reshape(bins, ncls)
        Hx = _entropy_from_counts(joint.sum(axis=1), n, (0,))
        F[j] = Hx + Hy - _entropy_from_counts(joint, n, (0, 1))
    return np.maximum(F, 0.0)


def similarity_rows(X: np.ndarray, similarity: str, rows: np.ndarray | None,
                    codes: np.ndarray | None, bins: int) -> np.ndarray:
    """Rows of Q for either similarity."""
    if similarity == "correlation":
        return correlation_rows(X, rows)
    return mutual_info_rows(codes, bins, rows)
