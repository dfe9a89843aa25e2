r"""Moments of data that live on a Dask cluster (optional extra ``conicml[distributed]``).

The chance-constrained and minimax learners need only class or cluster moments,
so they scale by computing those where the data are: every block of a
``dask.array`` is reduced on its worker to a few small statistics, and only
those travel to the client (never a row of the data).

Blocks are the row chunks of ``X`` (columns are re-chunked to one block);
``y`` is re-chunked to match. A class absent from a block contributes nothing.
NaN or infinite values raise the same :class:`~conicml.ProgramError` as NumPy
inputs, from the worker that finds them. The merge rules are in the Notes of
:func:`class_moments` and :func:`cluster_moments`.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from .._utils import progress as _progress
from .._utils.engines import resolve_engine
from .._utils.threads import one_thread
from ..exceptions import ProgramError

__all__ = ["as_dask_arrays", "class_moments", "cluster_moments", "is_dask_array",
           "is_dask_dataframe", "is_dask_input"]

_log = logging.getLogger(__name__)

#: Streamed k-means: rows per cluster (at least :data:`SAMPLE_MIN`) of the seeding sample.
SAMPLE_PER_CLUSTER = 500
SAMPLE_MIN = 10_000
#: Streamed k-means: at most this many Lloyd passes over the data.
MAX_PASSES = 10
#: Streamed k-means: stop when a pass lowers the inertia by at most this fraction.
INERTIA_RTOL = 1e-3


def is_dask_array(x: Any) -> bool:
    """Whether ``x`` is a ``dask.array.Array`` (without importing dask when it is not)."""
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "to_delayed")


def is_dask_dataframe(x: Any) -> bool:
    """Whether ``x`` is a ``dask.dataframe`` DataFrame or Series (dask not imported else)."""
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "to_dask_array")


def is_dask_input(x: Any) -> bool:
    """Whether ``x`` is a Dask collection a distributed fit accepts (array or dataframe)."""
    return is_dask_array(x) or is_dask_dataframe(x)


def as_dask_arrays(X: Any, y: Any = None, est: Any = None) -> tuple[Any, Any]:
    """``(X, y)`` as dask arrays; ``est.feature_names_in_`` from a dask DataFrame ``X``.

    A DataFrame or Series becomes ``to_dask_array(lengths=True)``: the partitions are
    converted on the workers, and one pass counts their rows (the chunk sizes the row
    blocks need); nothing else is computed. With an estimator ``est``, its
    ``feature_names_in_`` is set as scikit-learn's (an object array) when every column
    name is a string, and removed otherwise; arrays pass through unchanged.
    """
    names = None
    if is_dask_dataframe(X):
        columns = list(getattr(X, "columns", []))
        if columns and all(isinstance(c, str) for c in columns):
            names = np.asarray(columns, dtype=object)
        X = X.to_dask_array(lengths=True)
    if y is not None and is_dask_dataframe(y):
        if getattr(y, "ndim", 1) == 2:  # a one-column DataFrame of labels
            if len(y.columns) != 1:
                raise ProgramError(f"y must be one column of labels, got a dask DataFrame "
                                   f"with {len(y.columns)} columns")
            y = y[y.columns[0]]
        y = y.to_dask_array(lengths=True)
    if est is not None:
        if names is not None:
            est.feature_names_in_ = names
        else:  # a name from an earlier fit must not answer for this one
            est.__dict__.pop("feature_names_in_", None)
    return X, y


def row_blocks(X: Any, y: Any) -> tuple[list, list, int]:
    """``(X, y)`` as lists of matching delayed row blocks (all columns in each), and d.

    ``X`` a 2-D dask array, ``y`` a dask array or array-like of its length; the shapes are
    checked (a :class:`~conicml.ProgramError` names a mismatch).
    """
    import dask.array as da

    X, y = as_dask_arrays(X, y)
    if X.ndim != 2:
        raise ProgramError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ProgramError("X has unknown chunk sizes; call X.compute_chunk_sizes() first")
    y = y if is_dask_array(y) else da.from_array(np.asarray(y))
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ProgramError(f"shape mismatch: X has {X.shape[0]} rows, y has shape {y.shape}")
    X = X.rechunk({1: -1})
    y = y.rechunk((X.chunks[0],))
    return list(X.to_delayed().ravel()), list(y.to_delayed().ravel()), int(X.shape[1])


def _check_block(Xb: np.ndarray, yb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    Xb = np.asarray(Xb, dtype=float)
    yb = np.asarray(yb, dtype=float)
    if not np.all(np.isfinite(Xb)):
        bad = int(Xb.size - np.count_nonzero(np.isfinite(Xb)))
        raise ProgramError(f"X contains {bad} NaN or infinite value(s) (in one Dask block)")
    if not np.all(np.isfinite(yb)):
        raise ProgramError("y contains NaN or infinite values")
    return Xb, yb


# -- class moments ---------------------------------------------------------------------
def _block_stats(Xb: np.ndarray, yb: np.ndarray) -> dict[float, tuple]:
    Xb, yb = _check_block(Xb, yb)
    out = {}
    for label in np.unique(yb):
        rows = Xb[yb == label]
        mean = rows.mean(axis=0)
        centred = rows - mean
        out[float(label)] = (rows.shape[0], mean, centred.T @ centred)
    return out


def _merge(a: tuple, b: tuple) -> tuple:
    (na, ma, Ma), (nb, mb, Mb) = a, b
    n = na + nb
    delta = mb - ma
    return n, ma + delta * (nb / n), Ma + Mb + np.outer(delta, delta) * (na * nb / n)


def _merge_stats(*parts: dict[float, tuple]) -> dict[float, tuple]:
    out: dict[float, tuple] = {}
    for part in parts:
        for label, stats in part.items():
            out[label] = stats if label not in out else _merge(out[label], stats)
    return out


def class_moments(X: Any, y: Any) -> dict[str, Any]:
    r"""Plug-in (:math:`1/N`) class means and covariances of a Dask array, on the workers.

    Returns the keyword arguments of :class:`conicml.ClassMoments` (labels must be
    :math:`\pm 1`). Partial statistics are merged in a binary tree of tasks.

    Notes
    -----
    Per block and per class the count
    :math:`n`, the mean :math:`\bar x` and the centred scatter
    :math:`M = \sum (x - \bar x)(x - \bar x)^\top`, merged pairwise with Chan,
    Golub & LeVeque's update (numerically stable, no :math:`\sum x x^\top -
    n\bar x\bar x^\top` cancellation):

    .. math::

        n = n_A + n_B,\quad \delta = \bar x_B - \bar x_A,\quad
        \bar x = \bar x_A + \delta\,n_B/n,\quad
        M = M_A + M_B + \delta\delta^\top n_An_B/n.
    """
    import dask

    Xd, yd, d = row_blocks(X, y)
    parts = [dask.delayed(_block_stats)(xb, yb) for xb, yb in zip(Xd, yd)]
    while len(parts) > 1:  # a tree reduction: each task merges at most 8 partials
        parts = [dask.delayed(_merge_stats)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    with _progress.dask_progress("class moments"):
        stats = parts[0].compute()
    labels = sorted(stats)
    if not set(labels) <= {-1.0, 1.0}:
        raise ProgramError(
            f"binary learner needs labels in {{-1, +1}}, got values {labels[:10]}; "
            "map your classes to +1 (positive) and -1 (negative) first"
        )
    if len(labels) < 2:
        raise ProgramError(
            f"y contains a single class ({labels[0]:+g}); both +1 and -1 are needed"
        )
    (n_pos, m_pos, M_pos), (n_neg, m_neg, M_neg) = stats[1.0], stats[-1.0]
    return {"mean_pos": m_pos, "cov_pos": (M_pos / n_pos).reshape(d, d),
            "mean_neg": m_neg, "cov_neg": (M_neg / n_neg).reshape(d, d),
            "n_pos": int(n_pos), "n_neg": int(n_neg)}


# -- cluster moments -------------------------------------------------------------------
def _block_birch(Xb: np.ndarray, yb: np.ndarray, threshold: float | None,
                 branching_factor: int) -> dict[float, tuple]:
    """Leaf clustering features (N, LS, SS about the block's label mean) per label."""
    from sklearn.cluster import Birch

    Xb, yb = _check_block(Xb, yb)
    out = {}
    for label in np.unique(yb):
        rows = Xb[yb == label]
        shift = rows.mean(axis=0)
        kwargs = {"branching_factor": int(branching_factor), "n_clusters": None}
        if threshold is not None:
            kwargs["threshold"] = float(threshold)
        birch = Birch(**kwargs).fit(rows - shift)
        subs = [sc for leaf in birch._get_leaves() for sc in leaf.subclusters_]
        N = np.array([sc.n_samples_ for sc in subs], dtype=float)
        LS = np.array([sc.linear_sum_ for sc in subs], dtype=float)
        SS = np.array([sc.squared_sum_ for sc in subs], dtype=float)
        # about the common origin: LS' = LS + N s, SS' = SS + 2 s.LS + N |s|^2, but kept as
        # means and centred variances (no cancellation): mu = LS/N + s, var = SS/N - |LS/N|^2
        mu = LS / N[:, None]
        out[float(label)] = (N, mu + shift, SS / N - np.einsum("ij,ij->i", mu, mu))
    return out


def _merge_features(N: np.ndarray, mu: np.ndarray, var: np.ndarray, n_clusters: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BIRCH's global step: agglomerate the centroids, merge (N, mean, variance) exactly."""
    from sklearn.cluster import AgglomerativeClustering

    if n_clusters >= N.size:
        return N, mu, var
    lab = AgglomerativeClustering(n_clusters=n_clusters).fit_predict(mu)
    k = int(lab.max()) + 1
    Nk = np.bincount(lab, weights=N, minlength=k)
    muk = np.stack([np.bincount(lab, weights=N * mu[:, c], minlength=k)
                    for c in range(mu.shape[1])], axis=1) / Nk[:, None]
    # total variance about the merged mean: within parts + between parts (exact)
    dev = np.einsum("ij,ij->i", mu - muk[lab], mu - muk[lab])
    vark = np.bincount(lab, weights=N * (var + dev), minlength=k) / Nk
    return Nk, muk, vark


def _block_kmeans_sums(Xb: np.ndarray, yb: np.ndarray, centers: dict[float, np.ndarray],
                       engine: str = "numpy") -> dict[float, tuple]:
    """Per label and centre: count, linear sum and squared distance sum about the centre.

    ``engine="numba"`` runs the same sums in one compiled loop over the rows
    (:mod:`conicml.moments._kmeans_numba`); ``"numpy"`` with array operations.
    """
    Xb, yb = _check_block(Xb, yb)
    out = {}
    if engine == "numba":
        from ._kmeans_numba import kmeans_sums

        Xc = np.ascontiguousarray(Xb)
        for label, C in centers.items():
            k = C.shape[0]
            N, LS, S = np.zeros(k), np.zeros_like(C), np.zeros(k)
            kmeans_sums(Xc, yb, float(label), np.ascontiguousarray(C, dtype=float), N, LS, S)
            out[label] = (N, LS, S)
        return out
    for label, C in centers.items():
        rows = Xb[yb == label]
        k = C.shape[0]
        if rows.shape[0] == 0:
            out[label] = (np.zeros(k), np.zeros_like(C), np.zeros(k))
            continue
        # |x - c|^2 - |x|^2 = |c|^2 - 2 c.x, laid out (k, n) so argmin runs on the long rows
        dist = C @ rows.T
        dist *= -2.0
        dist += np.einsum("ij,ij->i", C, C)[:, None]
        a = np.argmin(dist, axis=0)
        del dist
        N = np.bincount(a, minlength=k).astype(float)
        LS = np.stack([np.bincount(a, weights=rows[:, c], minlength=k)
                       for c in range(rows.shape[1])], axis=1)
        rows -= C[a]  # our own copy (boolean indexing); exact deviations, no cancellation
        S = np.bincount(a, weights=np.einsum("ij,ij->i", rows, rows), minlength=k)
        out[label] = (N, LS, S)
    return out


def _sum_sums(*parts: dict[float, tuple]) -> dict[float, tuple]:
    out: dict[float, tuple] = {}
    for part in parts:
        for label, (N, LS, S) in part.items():
            if label in out:
                N0, LS0, S0 = out[label]
                out[label] = (N0 + N, LS0 + LS, S0 + S)
            else:
                out[label] = (N.copy(), LS.copy(), S.copy())
    return out


def _block_sample(Xb: np.ndarray, yb: np.ndarray, per_block: int, seed: int
                  ) -> dict[float, np.ndarray]:
    Xb, yb = _check_block(Xb, yb)
    rng = np.random.default_rng(seed)
    out = {}
    for label in np.unique(yb):
        # the row numbers of the label, not a copy of its rows: only the sample is copied
        idx = np.flatnonzero(yb == label)
        take = rng.choice(idx.size, size=min(per_block, idx.size), replace=False)
        out[float(label)] = Xb[idx[np.sort(take)]]
    return out


def _tree(dask: Any, func: Any, parts: list) -> Any:
    while len(parts) > 1:
        parts = [dask.delayed(func)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    return parts[0]


def cluster_moments(X: Any, y: Any, *, clustering: str, n_clusters: int | None,
                    threshold: float | None, random_state: int | None,
                    branching_factor: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    np.ndarray]:
    """``(counts, means, trace variances, labels)`` of per-label clusters of a Dask array.

    Notes
    -----
    ``"birch"`` runs BIRCH on
    each block's rows of each label and returns the leaf clustering features
    :math:`(N, LS, SS)` (about a shift, as the in-memory path does), which are
    additive: the client concatenates them and, with ``n_clusters``, merges them
    by BIRCH's global step (agglomerative clustering of the centroids, features
    summed). ``"kmeans"`` is a streamed Lloyd iteration (there is no dask-ml
    dependency): one sampling pass gathers :data:`SAMPLE_PER_CLUSTER` rows per
    cluster (at least :data:`SAMPLE_MIN`) of each label, scikit-learn's
    ``KMeans(n_init=3)`` seeds the centres on that sample on the client, then
    every Lloyd pass sends the centres to the workers and brings back per-centre
    counts, sums and squared deviations (the seeding fit runs on one
    thread; the per-block sums run in one compiled loop over the rows when
    numba can be imported, ``CONICML_ENGINE=numpy`` on the client keeps them in
    NumPy: the same arithmetic). The iteration stops when the squared
    centre shift is at most :math:`10^{-4}` times the mean feature variance
    (scikit-learn's ``tol``), when a pass lowers the inertia by at most
    :data:`INERTIA_RTOL` of it, or after :data:`MAX_PASSES` passes. Each pass
    regenerates or re-reads every block (lazily generated data are never held
    whole), so the pass count is the cost; a sample-seeded start is already
    close to a local optimum, and the inertia test stops the slow drift that
    Lloyd shows on unimodal classes. The moments returned are exact for the
    partition of the last pass (its counts, means and centred variances, from
    the deviations about the centres of that pass), so no extra pass is spent on them. If the data
    fit in the workers' memory, ``X = X.persist()`` before the call makes every
    pass read memory instead of regenerating. ``"none"`` is refused
    (every point a cluster would bring the data to the client).
    """
    import dask
    from sklearn.cluster import KMeans

    Xd, yd, _ = row_blocks(X, y)
    if clustering == "none":
        raise ProgramError(
            "clustering='none' makes every point a cluster, which would bring the whole "
            "Dask array to the client; use 'birch' or 'kmeans'"
        )
    counts, means, variances, labels = [], [], [], []
    if clustering == "birch":
        parts = [dask.delayed(_block_birch)(xb, yb, threshold, branching_factor)
                 for xb, yb in zip(Xd, yd)]
        features: dict[float, list[tuple]] = {}
        with _progress.dask_progress("BIRCH on the blocks"):
            computed = dask.compute(*parts)
        for part in computed:
            for label, feat in part.items():
                features.setdefault(label, []).append(feat)
        for label in sorted(features):
            N = np.concatenate([f[0] for f in features[label]])
            mu = np.concatenate([f[1] for f in features[label]])
            var = np.concatenate([f[2] for f in features[label]])
            if n_clusters is not None:
                N, mu, var = _merge_features(N, mu, var, int(n_clusters))
            counts.append(N)
            means.append(mu)
            variances.append(var)
            labels.append(np.full(N.size, label))
        return (np.concatenate(counts), np.concatenate(means), np.concatenate(variances),
                np.concatenate(labels))
    # streamed k-means: seed on a sample gathered from the blocks, then Lloyd passes
    engine = resolve_engine("streamed k-means", "auto")  # decided here, sent to the workers
    k = int(n_clusters)
    seed = 0 if random_state is None else int(random_state)
    wanted = max(SAMPLE_PER_CLUSTER * k, SAMPLE_MIN)
    per_block = 2 * max(1, -(-wanted // len(Xd)))  # oversampled: classes vary by block
    samples: dict[float, list[np.ndarray]] = {}
    for part in dask.compute(*[dask.delayed(_block_sample)(xb, yb, per_block, seed + i)
                               for i, (xb, yb) in enumerate(zip(Xd, yd))]):
        for label, rows in part.items():
            samples.setdefault(label, []).append(rows)
    rng = np.random.default_rng(seed)
    centers, tols = {}, {}
    for label, rows in samples.items():
        sample = np.concatenate(rows)
        if sample.shape[0] > wanted:
            sample = sample[np.sort(rng.choice(sample.shape[0], size=wanted, replace=False))]
        kk = min(k, sample.shape[0])
        # one thread: on a shared machine OpenMP threads of a small fit oversubscribe the
        # cores
        with one_thread():
            centers[label] = KMeans(kk, n_init=3, random_state=seed).fit(
                sample).cluster_centers_
        tols[label] = 1e-4 * float(np.mean(sample.var(axis=0)))  # scikit-learn's KMeans tol
    # Lloyd passes over every row; the moments returned are those of the last pass's
    # partition (about the centres it assigned to), so no extra pass is needed for them
    previous: dict[float, float] = {}
    for passes in _progress.progress(range(1, MAX_PASSES + 1), "k-means passes"):
        sums = _tree(dask, _sum_sums, [
            dask.delayed(_block_kmeans_sums)(xb, yb, centers, engine)
            for xb, yb in zip(Xd, yd)]).compute()
        done = True
        inertia = {}
        new_centers = {}
        for label, (N, LS, S) in sums.items():
            C = centers[label]
            new = np.where(N[:, None] > 0, LS / np.maximum(N, 1.0)[:, None], C)
            inertia[label] = float(S.sum())
            shift = float(np.sum((new - C) ** 2))
            settled = label in previous and (
                previous[label] - inertia[label] <= INERTIA_RTOL * inertia[label])
            done &= shift <= tols[label] or settled
            new_centers[label] = new
        if done or passes == MAX_PASSES:
            break
        centers, previous = new_centers, inertia
    stopped = "converged" if done else f"pass cap ({MAX_PASSES})"
    _log.info("streamed k-means: %d Lloyd passes (+1 sampling pass), %s", passes, stopped,
              extra={"passes": passes + 1, "stopped": stopped, "inertia": inertia})
    for label in sorted(sums):
        N, LS, S = sums[label]
        keep = N > 0
        N, LS, S, C = N[keep], LS[keep], S[keep], centers[label][keep]
        mu = LS / N[:, None]
        dc = mu - C
        counts.append(N)
        means.append(mu)
        variances.append(S / N - np.einsum("ij,ij->i", dc, dc))
        labels.append(np.full(N.size, label))
    return (np.concatenate(counts), np.concatenate(means), np.concatenate(variances),
            np.concatenate(labels))
