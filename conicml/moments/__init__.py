r"""Moment summaries as first-class inputs: :class:`ClassMoments`, :class:`ClusterMoments`.

Moment-based learners (MPM, BMPM, MEMPM, the chance-constrained classifiers)
depend on the data only through class means and covariances; the cluster-based
learners (CBC-SOCP, CBOR-SOCP) only through per-cluster means, radii and
counts. Formulations take these objects, so a model can be formulated from
population moments, from a stream, or from a distributed reduction.

Plug-in estimates use the biased :math:`1/N` normalisation (errata S004-P5;
seed 003 §3.3), not numpy's ``ddof=1``.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from .._utils.threads import one_blas_thread
from .._utils.validation import check_matrix, check_X_y
from ..exceptions import ProgramError
from .distributed import is_dask_input

__all__ = ["ClassMoments", "ClusterMoments", "as_class_moments", "takes_X_y"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: Up to this many features the plug-in covariances run on one BLAS thread.
_ONE_THREAD_MAX_D = 256


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
        r"""Plug-in moments with :math:`1/N` covariances from labelled data (y in {-1, +1}).

        ``X`` may be a ``dask.array`` (optional extra ``distributed``): the moments
        are then reduced blockwise on the workers with Chan's pairwise merge, and
        nothing but the moments reaches the client (:mod:`conicml.moments.distributed`).
        """
        if is_dask_input(X):
            from .distributed import class_moments

            return cls(**class_moments(X, y))
        X, y = check_X_y(X, y)
        Xp, Xn = X[y > 0], X[y < 0]
        d = X.shape[1]
        # The covariances' products are n x d by d x n with d small: OpenBLAS's thread pool
        # costs more than their arithmetic (10x on 2 cores when other processes run)
        with one_blas_thread() if d <= _ONE_THREAD_MAX_D else contextlib.nullcontext():
            cov_pos = np.cov(Xp, rowvar=False, bias=True).reshape(d, d)
            cov_neg = np.cov(Xn, rowvar=False, bias=True).reshape(d, d)
        return cls(
            mean_pos=Xp.mean(axis=0),
            cov_pos=cov_pos,
            mean_neg=Xn.mean(axis=0),
            cov_neg=cov_neg,
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


def takes_X_y(fn: _F) -> _F:
    """Expose a program builder ``fn(data, ...)`` of class moments as ``fn(X, y, ...)``.

    The one way in of every moment-based formulation: ``fn(X, y, ...)`` with the data and
    its labels, or ``fn(moments, ...)`` with a :class:`ClassMoments` (then ``y`` is not
    given: a scalar in its place is the builder's next parameter, so
    ``bmpm(moments, 0.9)`` still means ``beta0 = 0.9``). The tuple ``fn((X, y), ...)`` of
    the previous release still works, with a ``FutureWarning``.
    """
    params = list(inspect.signature(fn).parameters.values())
    # y shows its default None unless a required positional parameter follows it
    required_after = any(q.default is inspect.Parameter.empty and q.kind in (
        q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD) for q in params[1:])
    y_default = inspect.Parameter.empty if required_after else None
    xy = [inspect.Parameter("X", inspect.Parameter.POSITIONAL_OR_KEYWORD),
          inspect.Parameter("y", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=y_default)]
    signature = inspect.signature(fn).replace(parameters=xy + params[1:])

    @functools.wraps(fn)
    def wrapper(X: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        if "data" in kwargs:  # the keyword of the previous release
            if X is not None:
                raise TypeError(f"{fn.__name__}() got both X and data (deprecated); give X")
            warnings.warn(f"{fn.__name__}(data=...) is deprecated: pass X (and y)",
                          FutureWarning, stacklevel=2)
            X = kwargs.pop("data")
        if X is None:
            raise TypeError(f"{fn.__name__}() missing the data X (or class moments)")
        scalar_y = y is not None and np.ndim(y) == 0
        if isinstance(X, ClassMoments) or (isinstance(X, tuple) and len(X) == 2):
            if y is not None and not scalar_y:
                raise ProgramError(f"{fn.__name__}() takes X and y, or class moments alone; "
                                   f"got {type(X).__name__} and labels")
            if isinstance(X, tuple):
                warnings.warn(f"{fn.__name__}((X, y), ...) is deprecated: pass "
                              f"{fn.__name__}(X, y, ...) (the tuple form will be removed in "
                              "the next release)", FutureWarning, stacklevel=2)
            args = (y, *args) if scalar_y else args
            return fn(X, *args, **kwargs)
        if y is None:
            raise ProgramError(f"{fn.__name__}() needs the labels y beside X (or a "
                               "ClassMoments as its first argument)")
        return fn((X, y), *args, **kwargs)

    wrapper.__signature__ = signature  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


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
        Convention of ``sigmas`` (errata S003-P7): ``"trace"`` is
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
        if not (np.all(np.isfinite(counts)) and np.all(np.isfinite(ss))):
            raise ProgramError("counts and square_sums must be finite (no NaN or inf)")
        means = ls / counts[:, None]
        mean_sq = np.einsum("ij,ij->i", means, means)
        var = ss / counts - mean_sq
        # SS/N - ||LS/N||^2 is a difference of two O(SS/N) numbers: round-off of a few
        # ulps of SS/N may make it slightly negative (a zero-radius cluster), anything
        # beyond that is not a sum of squares of the points LS sums (SS < ||LS||^2 / N
        # violates Cauchy-Schwarz) and is refused instead of silently clipped to 0
        slack = 1e3 * np.finfo(float).eps * np.maximum(np.abs(ss) / counts, mean_sq)
        bad = np.flatnonzero(var < -slack)
        if bad.size:
            j = int(bad[0])
            raise ProgramError(
                f"square_sums[{j}] = {ss[j]:.6g} is smaller than ||linear_sums[{j}]||^2 / "
                f"counts[{j}] = {mean_sq[j] * counts[j]:.6g}: these are not the sums of one "
                "set of points (SS >= ||LS||^2/N); pass square_sums as the scalar sums "
                "sum ||x||^2 over each cluster"
            )
        var = np.maximum(var, 0.0)
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
        chunk_size: int = 65536,
        branching_factor: int = 50,
    ) -> ClusterMoments:
        r"""Cluster each label's points separately and summarise each cluster.

        The data are read in row chunks of ``chunk_size`` (fancy-indexed
        copies of at most that many rows), so no second copy of ``X`` is ever
        held: the cluster-based learners train in memory proportional to the
        clustering, not to the data (seed 003 §3.2: "the training data does
        not need to be kept in memory").

        Parameters
        ----------
        X : ndarray of shape (n, d)
        y : ndarray of shape (n,)
            Labels (+1/-1, or ranks); each label is clustered on its own.
            Labels that are not numbers (strings, say) are mapped as the
            estimators map them: two classes to -1 and +1 in sorted order
            (``classes_[1]`` is +1), more to the ranks 1..r in sorted order.
        clustering : {"birch", "kmeans", "none"}, default="birch"
            ``"birch"``: scikit-learn's :class:`~sklearn.cluster.Birch`, fed
            chunk by chunk with ``partial_fit`` (one pass); the moments are the
            clustering features :math:`(N, LS, SS)` of the CF-tree's leaf
            subclusters (the thesis's route, §3.2), accumulated on data shifted
            by the label's first-chunk mean to avoid cancellation in
            :math:`SS/N - \|LS/N\|^2`; with ``n_clusters``, BIRCH's global
            step (agglomerative clustering of the subcluster centroids) merges
            the features, which are additive.
            ``"kmeans"``: :class:`~sklearn.cluster.KMeans` (``n_init=3``) when
            a label has at most ``chunk_size`` rows, else a streamed Lloyd
            iteration (seeded by ``KMeans(n_init=3)`` on a sample of
            :math:`\max(50k, 2000)` rows; at most 100 passes, stop when the
            squared centre shift is at most :math:`10^{-4}` times the mean
            feature variance, scikit-learn's ``tol``), then one pass for the
            moments about the final centres.
            ``"none"``: every point its own cluster (:math:`\sigma_j = 0`).
        n_clusters : int or dict, optional
            Clusters per label (required for ``"kmeans"``); a dict
            ``{label: k}`` gives each label its own number. A label with at
            most ``k`` points keeps every point as its own cluster.
        threshold : float, optional
            BIRCH radius threshold (scikit-learn default 0.5).
        sigma : {"trace", "per-dimension"}
        random_state : int, optional
            Seed for k-means.
        chunk_size : int, default=65536
            Rows read at once.
        branching_factor : int, default=50
            BIRCH's branching factor.

        Notes
        -----
        ``X`` (and ``y``) may be ``dask.array`` s (optional extra
        ``distributed``): BIRCH runs per block and the additive clustering
        features are merged on the client; k-means is a streamed Lloyd
        iteration whose passes run on the workers (:mod:`conicml.moments.distributed`).
        Only per-cluster statistics reach the client.
        """
        _check_cluster_options(clustering, n_clusters, threshold, sigma)
        if is_dask_input(X):
            return cls._from_dask(X, y, clustering=clustering, n_clusters=n_clusters,
                                  threshold=threshold, sigma=sigma, random_state=random_state,
                                  branching_factor=branching_factor)
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise ProgramError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
        if not np.issubdtype(X.dtype, np.number):
            raise ProgramError(f"X must be numeric, got dtype {X.dtype}")
        y = _numeric_labels(y)
        if y.shape != (X.shape[0],):
            raise ProgramError(f"shape mismatch: X has {X.shape[0]} rows, y has {y.size} labels")
        if not np.all(np.isfinite(y)):
            raise ProgramError("y contains NaN or infinite values")
        chunk_size = max(1, int(chunk_size))
        per_label = n_clusters if isinstance(n_clusters, Mapping) else None
        counts, means, variances, labels = [], [], [], []
        for label in np.unique(y):
            idx = np.flatnonzero(y == label)
            if per_label is not None:
                if label not in per_label:
                    raise ProgramError(f"n_clusters has no entry for label {label!r}")
                n_clusters = per_label[label]
            if clustering == "none" or (n_clusters is not None and n_clusters >= idx.size):
                # at least one cluster per point asked: every point its own cluster
                Xl = np.asarray(X[idx], dtype=float)
                _check_finite(Xl)
                n_l, mu_l, var_l = np.ones(idx.size), Xl, np.zeros(idx.size)
            elif clustering == "birch":
                n_l, mu_l, var_l = _birch_moments(X, idx, n_clusters, threshold,
                                                  branching_factor, chunk_size)
            else:
                n_l, mu_l, var_l = _kmeans_moments(X, idx, int(n_clusters), random_state,
                                                   chunk_size)
            counts.append(n_l)
            means.append(mu_l)
            variances.append(var_l)
            labels.append(np.full(n_l.size, label))
        var = np.maximum(np.concatenate(variances), 0.0)
        if sigma == "per-dimension":
            var = var / X.shape[1]
        return cls(np.concatenate(means), np.sqrt(var), np.concatenate(counts),
                   np.concatenate(labels), sigma=sigma)


    @classmethod
    def _from_dask(cls, X: Any, y: Any, *, clustering: str, n_clusters: int | None,
                   threshold: float | None, sigma: str, random_state: int | None,
                   branching_factor: int) -> ClusterMoments:
        from .distributed import cluster_moments

        if isinstance(n_clusters, Mapping):
            raise ProgramError("n_clusters per label (a dict) is not supported for dask "
                               "arrays; give one number of clusters per label")
        counts, means, var, labels = cluster_moments(
            X, y, clustering=clustering, n_clusters=n_clusters, threshold=threshold,
            random_state=random_state, branching_factor=branching_factor)
        var = np.maximum(var, 0.0)
        if sigma == "per-dimension":
            var = var / X.shape[1]
        return cls(means, np.sqrt(var), counts, labels, sigma=sigma)


def _numeric_labels(y: Any) -> np.ndarray:
    """Labels as floats; non-numeric classes mapped as the estimators map them.

    Two classes become -1/+1 (the larger one +1, as the binary estimators'
    ``classes_[1]``), more become the ranks 1..r in sorted order (the ordinal ones).
    """
    arr = np.asarray(y)
    if arr.dtype.kind in "biuf":
        return arr.astype(float)
    if arr.ndim != 1:
        raise ProgramError(f"y must be 1-D, got shape {arr.shape}")
    try:
        classes, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:  # mixed types that do not sort
        raise ProgramError(f"y must hold labels of one sortable type: {exc}") from exc
    if classes.size == 2:
        return np.where(codes == 1, 1.0, -1.0)
    return codes.astype(float) + 1.0


def _check_cluster_options(clustering: str, n_clusters: int | Mapping | None,
                           threshold: float | None, sigma: str) -> None:
    """The option checks of :meth:`ClusterMoments.from_data` (NumPy and Dask inputs)."""
    if clustering not in ("birch", "kmeans", "none"):
        raise ProgramError(
            f"clustering must be 'birch', 'kmeans' or 'none', got {clustering!r}"
        )
    if clustering == "kmeans" and n_clusters is None:
        raise ProgramError("clustering='kmeans' needs n_clusters")
    per_label = n_clusters.values() if isinstance(n_clusters, Mapping) else [n_clusters]
    for k in per_label:
        if k is not None and (int(k) != k or k < 1):
            raise ProgramError(f"n_clusters must be a positive integer, got {k!r}")
    if threshold is not None and not (np.isfinite(threshold) and threshold > 0):
        raise ProgramError(f"threshold must be positive, got {threshold!r}")
    if sigma not in SIGMA_CONVENTIONS:
        raise ProgramError(f"sigma must be one of {SIGMA_CONVENTIONS}, got {sigma!r}")


# -- streamed clustering for ClusterMoments.from_data --------------------------------------
def _check_finite(chunk: np.ndarray) -> None:
    if not np.all(np.isfinite(chunk)):
        raise ProgramError("X contains NaN or infinite values")


def _chunks(X: np.ndarray, idx: np.ndarray, chunk_size: int):
    for start in range(0, idx.size, chunk_size):
        chunk = np.asarray(X[idx[start:start + chunk_size]], dtype=float)
        _check_finite(chunk)
        yield chunk


def _birch_moments(X, idx, n_clusters, threshold, branching_factor, chunk_size):
    """(counts, means, trace variances) from BIRCH's clustering features, one pass."""
    from sklearn.cluster import Birch

    kwargs = {"branching_factor": int(branching_factor)}
    if threshold is not None:
        kwargs["threshold"] = float(threshold)
    birch = Birch(n_clusters=None, **kwargs)
    shift = None
    for chunk in _chunks(X, idx, chunk_size):
        if shift is None:
            shift = chunk.mean(axis=0)
        birch.partial_fit(chunk - shift)
    subclusters = [sc for leaf in birch._get_leaves() for sc in leaf.subclusters_]
    N = np.array([sc.n_samples_ for sc in subclusters], dtype=float)
    LS = np.array([sc.linear_sum_ for sc in subclusters], dtype=float)
    SS = np.array([sc.squared_sum_ for sc in subclusters], dtype=float)
    if n_clusters is not None and int(n_clusters) < N.size:
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        birch.set_params(n_clusters=int(n_clusters))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            birch.partial_fit()  # global step only: agglomerative on the centroids
        lab = np.unique(birch.subcluster_labels_, return_inverse=True)[1]
        k = int(lab.max()) + 1
        N = np.bincount(lab, weights=N, minlength=k)
        LS = np.stack([np.bincount(lab, weights=LS[:, c], minlength=k)
                       for c in range(LS.shape[1])], axis=1)
        SS = np.bincount(lab, weights=SS, minlength=k)
    mu = LS / N[:, None]
    var = SS / N - np.einsum("ij,ij->i", mu, mu)
    return N, mu + shift, var


def _assign(chunk: np.ndarray, centers: np.ndarray, c2: np.ndarray) -> np.ndarray:
    """Nearest centre of every row (squared distances up to the row's own norm)."""
    if chunk.shape[1] > 16:
        return np.argmin(c2[None, :] - 2.0 * chunk @ centers.T, axis=1)
    # few features: column-wise outer products avoid a thin, badly threaded BLAS call
    d = np.empty((chunk.shape[0], centers.shape[0]))
    d[:] = c2
    for c in range(chunk.shape[1]):
        d -= 2.0 * np.multiply.outer(chunk[:, c], centers[:, c])
    return np.argmin(d, axis=1)


def _centered_sums(X, idx, centers, chunk_size):
    k, d = centers.shape
    N = np.zeros(k)
    LS = np.zeros((k, d))
    S = np.zeros(k)
    c2 = np.einsum("ij,ij->i", centers, centers)
    for chunk in _chunks(X, idx, chunk_size):
        a = _assign(chunk, centers, c2)
        N += np.bincount(a, minlength=k)
        for c in range(d):
            LS[:, c] += np.bincount(a, weights=chunk[:, c], minlength=k)
        chunk -= centers[a]  # the chunk is our own copy
        S += np.bincount(a, weights=np.einsum("ij,ij->i", chunk, chunk), minlength=k)
    return N, LS, S


def _kmeans_moments(X, idx, n_clusters, random_state, chunk_size):
    """(counts, means, trace variances) of k-means clusters, streamed over chunks."""
    from sklearn.cluster import KMeans

    k = min(n_clusters, idx.size)
    if idx.size <= chunk_size:
        Xl = np.asarray(X[idx], dtype=float)
        _check_finite(Xl)
        centers = KMeans(k, n_init=3, random_state=random_state).fit(Xl).cluster_centers_
    else:
        rng = np.random.default_rng(random_state)
        sample_idx = np.sort(rng.choice(idx, size=min(idx.size, max(50 * k, 2000)),
                                        replace=False))
        sample = np.asarray(X[sample_idx], dtype=float)
        _check_finite(sample)
        # seeding: k-means (n_init=3, k-means++) on the sample, then Lloyd on all rows
        centers = KMeans(k, n_init=3, random_state=random_state).fit(sample).cluster_centers_
        tol = 1e-4 * float(np.mean(sample.var(axis=0)))  # scikit-learn's KMeans tol
        for _ in range(100):
            N, LS, _ = _centered_sums(X, idx, centers, chunk_size)
            new = np.where(N[:, None] > 0, LS / np.maximum(N, 1.0)[:, None], centers)
            shift = float(np.sum((new - centers) ** 2))
            centers = new
            if shift <= tol:
                break
    N, LS, S = _centered_sums(X, idx, centers, chunk_size)
    keep = N > 0
    N, LS, S, centers = N[keep], LS[keep], S[keep], centers[keep]
    mu = LS / N[:, None]
    dc = mu - centers
    return N, mu, S / N - np.einsum("ij,ij->i", dc, dc)
