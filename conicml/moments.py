r"""Moment summaries as first-class inputs: :class:`ClassMoments`, :class:`ClusterMoments`.

Moment-based learners (MPM, BMPM, MEMPM, the chance-constrained classifiers)
depend on the data only through class means and covariances; the cluster-based
learners (CBC-SOCP, CBOR-SOCP) only through per-cluster means, radii and
counts. Formulations take these objects, so a model can be formulated from
population moments, from a stream, or from a distributed reduction.

Plug-in estimates use the biased :math:`1/N` normalisation (seed 004 note P5;
seed 003 §3.3), not numpy's ``ddof=1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_matrix, check_X_y
from .exceptions import ProgramError

__all__ = ["ClassMoments", "ClusterMoments", "as_class_moments"]


def _check_cov(cov: object, d: int, name: str) -> np.ndarray:
    cov = check_matrix(cov, name)
    if cov.shape != (d, d):
        raise ProgramError(f"{name} must have shape ({d}, {d}), got {cov.shape}")
    scale = max(1.0, float(np.abs(cov).max()))
    if not np.allclose(cov, cov.T, atol=1e-10 * scale, rtol=0):
        raise ProgramError(f"{name} must be symmetric")
    lam_min = float(np.linalg.eigvalsh(0.5 * (cov + cov.T))[0])
    if lam_min < -1e-10 * scale:
        raise ProgramError(f"{name} must be positive semi-definite (eigenvalue {lam_min:.3g})")
    return 0.5 * (cov + cov.T)


@dataclass(frozen=True)
class ClassMoments:
    r"""Means and covariances of the two classes of a binary problem.

    The positive class (label +1) plays the role of the thesis's class
    :math:`x` (seed 004), the negative class (label -1) that of class :math:`y`.

    Parameters
    ----------
    mean_pos, cov_pos : ndarray of shape (d,), (d, d)
        :math:`\bar x, \Sigma_x` of the positive class.
    mean_neg, cov_neg : ndarray of shape (d,), (d, d)
        :math:`\bar y, \Sigma_y` of the negative class.
    n_pos, n_neg : int, optional
        Sample sizes the moments were estimated from (``None`` for population
        moments); used for the prior :math:`\theta = N_x / N` and by robust
        variants.
    """

    mean_pos: np.ndarray
    cov_pos: np.ndarray
    mean_neg: np.ndarray
    cov_neg: np.ndarray
    n_pos: int | None = None
    n_neg: int | None = None

    def __post_init__(self) -> None:  # noqa: D105
        mp = check_matrix(np.atleast_1d(self.mean_pos)[None, :], "mean_pos")[0]
        mn = check_matrix(np.atleast_1d(self.mean_neg)[None, :], "mean_neg")[0]
        if mp.shape != mn.shape:
            raise ProgramError(
                f"mean_pos and mean_neg differ in dimension: {mp.shape[0]} vs {mn.shape[0]}"
            )
        d = mp.shape[0]
        object.__setattr__(self, "mean_pos", mp)
        object.__setattr__(self, "mean_neg", mn)
        object.__setattr__(self, "cov_pos", _check_cov(self.cov_pos, d, "cov_pos"))
        object.__setattr__(self, "cov_neg", _check_cov(self.cov_neg, d, "cov_neg"))
        for name in ("n_pos", "n_neg"):
            n = getattr(self, name)
            if n is not None and (int(n) != n or n < 1):
                raise ProgramError(f"{name} must be a positive integer or None, got {n!r}")

    @property
    def dim(self) -> int:
        """Dimension :math:`d` of the inputs."""
        return self.mean_pos.shape[0]

    @property
    def prior_pos(self) -> float | None:
        r"""Prior of the positive class :math:`\theta = N_x / N` (``None`` if unknown)."""
        if self.n_pos is None or self.n_neg is None:
            return None
        return self.n_pos / (self.n_pos + self.n_neg)

    @classmethod
    def from_data(cls, X: np.ndarray, y: np.ndarray) -> ClassMoments:
        r"""Plug-in moments with :math:`1/N` covariances from labelled data (y in {-1, +1})."""
        X, y = check_X_y(X, y)
        Xp, Xn = X[y > 0], X[y < 0]
        return cls(
            mean_pos=Xp.mean(axis=0),
            cov_pos=np.cov(Xp, rowvar=False, bias=True).reshape(X.shape[1], X.shape[1]),
            mean_neg=Xn.mean(axis=0),
            cov_neg=np.cov(Xn, rowvar=False, bias=True).reshape(X.shape[1], X.shape[1]),
            n_pos=int(Xp.shape[0]),
            n_neg=int(Xn.shape[0]),
        )


def as_class_moments(data: ClassMoments | tuple) -> ClassMoments:
    """Accept either a :class:`ClassMoments` or an ``(X, y)`` pair."""
    if isinstance(data, ClassMoments):
        return data
    if isinstance(data, tuple) and len(data) == 2:
        return ClassMoments.from_data(*data)
    raise ProgramError(
        "expected a ClassMoments or an (X, y) tuple, got " + type(data).__name__
    )


SIGMA_CONVENTIONS = ("trace", "per-dimension")


@dataclass(frozen=True)
class ClusterMoments:
    r"""Per-cluster statistics: means, spherical radii, counts, labels.

    Each cluster :math:`j` is modelled as :math:`X_j \sim (\mu_j, \sigma_j^2 I)`
    (seed 003 ch. 3). Clusters are formed within one class (or one rank), so
    each carries a single label.

    Parameters
    ----------
    means : ndarray of shape (k, d)
    sigmas : ndarray of shape (k,)
        Radii :math:`\sigma_j \ge 0` in the convention named by ``sigma``.
    counts : ndarray of shape (k,)
        Number of points :math:`m_j \ge 1` in each cluster.
    labels : ndarray of shape (k,)
        +1/-1 for classification, ranks 1..r for ordinal regression.
    sigma : {"trace", "per-dimension"}, default="trace"
        Convention of ``sigmas`` (seed 003 note pitfall P7): ``"trace"`` is
        ch. 3's :math:`\sigma_j^2 = \frac1{m_j}\sum\|x-\mu_j\|^2` (total
        variance); ``"per-dimension"`` is that divided by :math:`d` (ch. 6),
        the variance per coordinate under :math:`\Sigma_j = \sigma_j^2 I`.
    """

    means: np.ndarray
    sigmas: np.ndarray
    counts: np.ndarray
    labels: np.ndarray
    sigma: str = "trace"

    def __post_init__(self) -> None:  # noqa: D105
        means = check_matrix(self.means, "means")
        k = means.shape[0]
        sigmas = np.asarray(self.sigmas, dtype=float).reshape(-1)
        counts = np.asarray(self.counts, dtype=float).reshape(-1)
        labels = np.asarray(self.labels, dtype=float).reshape(-1)
        for name, arr in (("sigmas", sigmas), ("counts", counts), ("labels", labels)):
            if arr.shape != (k,):
                raise ProgramError(f"{name} must have one entry per cluster ({k}), got {arr.size}")
            if not np.all(np.isfinite(arr)):
                raise ProgramError(f"{name} contains NaN or infinite values")
        if np.any(sigmas < 0):
            raise ProgramError("sigmas must be >= 0")
        if np.any(counts < 1) or np.any(counts != np.round(counts)):
            raise ProgramError("counts must be positive integers")
        if self.sigma not in SIGMA_CONVENTIONS:
            raise ProgramError(f"sigma must be one of {SIGMA_CONVENTIONS}, got {self.sigma!r}")
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "sigmas", sigmas)
        object.__setattr__(self, "counts", counts.astype(np.int64))
        object.__setattr__(self, "labels", labels)

    @property
    def n_clusters(self) -> int:
        """Number of clusters :math:`k`."""
        return self.means.shape[0]

    @property
    def dim(self) -> int:
        """Dimension :math:`d`."""
        return self.means.shape[1]

    @classmethod
    def from_sums(cls, counts: np.ndarray, linear_sums: np.ndarray, square_sums: np.ndarray,
                  labels: np.ndarray, *, sigma: str = "trace") -> ClusterMoments:
        r"""Moments from one-pass sums (BIRCH's clustering feature :math:`(N, LS, SS)`).

        :math:`\mu_j = LS_j/N_j`, :math:`\sigma_j^2 = SS_j/N_j - \|\mu_j\|^2`
        (``"trace"``), divided by :math:`d` for ``"per-dimension"``.
        ``square_sums`` are the scalar sums :math:`\sum \|x\|^2`.
        """
        counts = np.asarray(counts, dtype=float)
        ls = check_matrix(linear_sums, "linear_sums")
        ss = np.asarray(square_sums, dtype=float)
        if counts.shape != (ls.shape[0],) or ss.shape != (ls.shape[0],):
            raise ProgramError("counts, linear_sums and square_sums must agree in length")
        if np.any(counts < 1):
            raise ProgramError("every cluster must hold at least one point")
        means = ls / counts[:, None]
        var = np.maximum(ss / counts - np.einsum("ij,ij->i", means, means), 0.0)
        if sigma == "per-dimension":
            var = var / ls.shape[1]
        return cls(means, np.sqrt(var), counts, labels, sigma=sigma)

    @classmethod
    def from_data(
        cls,
        X: np.ndarray,
        y: np.ndarray,
        *,
        clustering: str = "birch",
        n_clusters: int | None = None,
        threshold: float | None = None,
        sigma: str = "trace",
        random_state: int | None = 0,
    ) -> ClusterMoments:
        """Cluster each label's points separately and summarise each cluster.

        Parameters
        ----------
        X : ndarray of shape (n, d)
        y : ndarray of shape (n,)
            Labels (+1/-1, or ranks); each label is clustered on its own.
        clustering : {"birch", "kmeans", "none"}, default="birch"
            scikit-learn's :class:`~sklearn.cluster.Birch` (one pass; with
            ``threshold``, and ``n_clusters`` per label if given),
            :class:`~sklearn.cluster.KMeans` (``n_clusters`` per label), or
            ``"none"``: every point its own cluster (:math:`\\sigma_j = 0`).
        n_clusters : int, optional
            Clusters per label (required for ``"kmeans"``).
        threshold : float, optional
            BIRCH radius threshold (scikit-learn default 0.5).
        sigma : {"trace", "per-dimension"}
        random_state : int, optional
            Seed for k-means.
        """
        X = check_matrix(X)
        y = np.asarray(y, dtype=float)
        if y.shape != (X.shape[0],):
            raise ProgramError(f"shape mismatch: X has {X.shape[0]} rows, y has {y.size} labels")
        if not np.all(np.isfinite(y)):
            raise ProgramError("y contains NaN or infinite values")
        if clustering not in ("birch", "kmeans", "none"):
            raise ProgramError(
                f"clustering must be 'birch', 'kmeans' or 'none', got {clustering!r}"
            )
        if clustering == "kmeans" and n_clusters is None:
            raise ProgramError("clustering='kmeans' needs n_clusters")
        counts, sums, squares, labels = [], [], [], []
        for label in np.unique(y):
            Xl = X[y == label]
            if clustering == "none":
                assign = np.arange(Xl.shape[0])
            elif clustering == "kmeans":
                from sklearn.cluster import KMeans

                k = min(int(n_clusters), Xl.shape[0])
                assign = KMeans(k, n_init=3, random_state=random_state).fit_predict(Xl)
            else:
                from sklearn.cluster import Birch

                k = None if n_clusters is None else min(int(n_clusters), Xl.shape[0])
                kwargs = {} if threshold is None else {"threshold": float(threshold)}
                assign = Birch(n_clusters=k, **kwargs).fit_predict(Xl)
            for a in np.unique(assign):
                members = Xl[assign == a]
                counts.append(members.shape[0])
                sums.append(members.sum(axis=0))
                squares.append(float(np.einsum("ij,ij->", members, members)))
                labels.append(label)
        return cls.from_sums(np.array(counts), np.array(sums), np.array(squares),
                             np.array(labels), sigma=sigma)
