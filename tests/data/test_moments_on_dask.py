"""Moments of Dask arrays on a local cluster agree with NumPy (optional extra ``distributed``).

References: the NumPy path on the same data (class moments, to 1e-10 relative), and exact
identities any clustering satisfies (counts add up; the count-weighted cluster means are
the class mean; within + between variance is the class's total variance).
"""

import numpy as np
import pytest

import conicml as cm

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, d = 2_003, 4
    X = rng.normal(size=(n, d)) * [1.0, 1e3, 1e-3, 5.0] + [1e4, 0.0, -2.0, 3.0]
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    order = np.argsort(y, kind="stable")  # sorted labels: some blocks hold one class only
    return X[order], y[order]


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("chunks", [(500,), ((1000, 3, 700, 300),)])
def test_class_moments_match_numpy(client, data, chunks):
    X, y = data
    ref = cm.ClassMoments.from_data(X, y)
    Xd = da.from_array(X, chunks=(chunks[0], 2))  # uneven rows, split columns
    got = cm.ClassMoments.from_data(Xd, da.from_array(y, chunks=chunks[0]))
    assert (got.n_pos, got.n_neg) == (ref.n_pos, ref.n_neg)
    for name in ("mean_pos", "mean_neg", "cov_pos", "cov_neg"):
        assert _rel(getattr(got, name), getattr(ref, name)) <= 1e-10, name


def _check_identities(mom, X, y, d):
    for label in (-1.0, 1.0):
        sel = mom.labels == label
        rows = X[y == label]
        N, mu, s2 = mom.counts[sel], mom.means[sel], mom.sigmas[sel] ** 2
        assert N.sum() == rows.shape[0]
        mean = rows.mean(axis=0)
        np.testing.assert_allclose(N @ mu / N.sum(), mean, rtol=1e-10, atol=1e-9)
        total = np.sum((rows - mean) ** 2) / rows.shape[0]
        between = np.sum(N * np.sum((mu - mean) ** 2, axis=1)) / N.sum()
        within = np.sum(N * s2) / N.sum()
        assert within + between == pytest.approx(total, rel=1e-8)


@pytest.mark.parametrize("clustering, n_clusters", [("birch", 5), ("birch", None),
                                                    ("kmeans", 4)])
def test_cluster_moments_satisfy_the_exact_identities(client, data, clustering, n_clusters):
    X, y = data
    Z = X[:, [0, 3]] - [1e4, 3.0]  # BIRCH's threshold is absolute: a moderate scale
    mom = cm.ClusterMoments.from_data(da.from_array(Z, chunks=(600, 2)),
                                      da.from_array(y, chunks=600),
                                      clustering=clustering, n_clusters=n_clusters,
                                      threshold=2.0, random_state=0)
    _check_identities(mom, Z, y, 2)
    if n_clusters is not None:
        assert np.sum(mom.labels == 1.0) <= n_clusters


@pytest.mark.parametrize("clustering", ["birch", "kmeans"])
def test_one_cluster_per_class_is_the_class_itself(client, data, clustering):
    X, y = data
    mom = cm.ClusterMoments.from_data(da.from_array(X, chunks=(700, 4)), y,
                                      clustering=clustering, n_clusters=1, threshold=1e9)
    ref = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=1)
    order = np.argsort(mom.labels)
    ref_order = np.argsort(ref.labels)
    np.testing.assert_allclose(mom.means[order], ref.means[ref_order], rtol=1e-10)
    np.testing.assert_allclose(mom.sigmas[order], ref.sigmas[ref_order], rtol=1e-8)


def test_a_cbc_fit_from_dask_moments(client, data):
    X, y = data
    Z = (X - X.mean(0)) / X.std(0)
    mom = cm.ClusterMoments.from_data(da.from_array(Z, chunks=(500, 4)),
                                      da.from_array(y, chunks=500), clustering="kmeans",
                                      n_clusters=5, random_state=0)
    prog = cm.formulations.cbc.cbc(mom, C=1.0, accuracy=0.5, form="dual")
    sol = cm.solve(prog, "clarabel")
    assert sol.status is cm.Status.OPTIMAL


def test_nan_gives_the_numpy_error(client, data):
    X, y = data
    X = X.copy()
    X[1500, 2] = np.nan
    with pytest.raises(cm.ProgramError, match="NaN or infinite"):
        cm.ClassMoments.from_data(X, y)
    with pytest.raises(cm.ProgramError, match="NaN or infinite"):
        cm.ClassMoments.from_data(da.from_array(X, chunks=(400, 4)), y)
    with pytest.raises(cm.ProgramError, match="NaN or infinite"):
        cm.ClusterMoments.from_data(da.from_array(X, chunks=(400, 4)), y,
                                    clustering="kmeans", n_clusters=2)
    with pytest.raises(cm.ProgramError, match="bring the whole Dask array"):
        cm.ClusterMoments.from_data(da.from_array(X, chunks=(400, 4)), y, clustering="none")


@pytest.fixture(scope="module")
def blobs():
    # four well-separated blobs per class (centres 10 apart, unit spread): k-means with
    # k = 4 must find them, whatever the seeding sample
    rng = np.random.default_rng(1)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
    X = np.concatenate([c + rng.normal(size=(500, 2)) for c in centres] * 2)
    y = np.r_[np.ones(2000), -np.ones(2000)]
    return X, y, centres


def _kmeans_passes(caplog):
    (record,) = [r for r in caplog.records if hasattr(r, "passes")]
    return record


def test_streamed_kmeans_finds_separated_blobs_and_stops_early(client, blobs, caplog):
    import conicml.moments.distributed as dist

    X, y, centres = blobs
    with caplog.at_level("INFO", logger="conicml.moments.distributed"):
        mom = cm.ClusterMoments.from_data(da.from_array(X, chunks=(700, 2)),
                                          da.from_array(y, chunks=700),
                                          clustering="kmeans", n_clusters=4, random_state=0)
    record = _kmeans_passes(caplog)
    assert record.stopped == "converged" and record.passes <= 4 < 1 + dist.MAX_PASSES
    _check_identities(mom, X, y, 2)
    for label in (-1.0, 1.0):
        found = mom.means[mom.labels == label]
        # each true centre has a found mean within 0.2 (500 points: s.e. of a mean ~0.05)
        gaps = np.linalg.norm(found[:, None, :] - centres[None], axis=2).min(axis=0)
        assert np.all(gaps < 0.2), gaps
        np.testing.assert_array_equal(np.sort(mom.counts[mom.labels == label]), [500] * 4)


def test_the_pass_cap_still_returns_exact_moments_of_a_partition(client, data, caplog,
                                                                 monkeypatch):
    import conicml.moments.distributed as dist

    monkeypatch.setattr(dist, "MAX_PASSES", 1)
    X, y = data
    Z = X[:, [0, 3]] - [1e4, 3.0]
    with caplog.at_level("INFO", logger="conicml.moments.distributed"):
        mom = cm.ClusterMoments.from_data(da.from_array(Z, chunks=(600, 2)),
                                          da.from_array(y, chunks=600),
                                          clustering="kmeans", n_clusters=6, random_state=0)
    record = _kmeans_passes(caplog)
    assert record.passes == 2 and record.stopped == "pass cap (1)"
    _check_identities(mom, Z, y, 2)


def test_compiled_kmeans_sums_equal_the_numpy_sums():
    # the compiled Lloyd-pass sums against the NumPy branch on the same block: same
    # nearest centres (counts equal), sums equal to rounding; a label absent from the
    # block gives zeros in both; a float32 block is read as float64 by both
    pytest.importorskip("numba")
    from conicml.moments.distributed import _block_kmeans_sums

    rng = np.random.default_rng(4)
    X = rng.normal(size=(3_001, 3)) * [1.0, 4.0, 0.5] + [2.0, -1.0, 0.0]
    y = np.where(rng.random(3_001) < 0.4, 1.0, -1.0)
    centers = {1.0: rng.normal(size=(4, 3)), -1.0: rng.normal(size=(3, 3)),
               7.0: rng.normal(size=(2, 3))}
    for Xb in (X, X.astype(np.float32)):
        ref = _block_kmeans_sums(Xb, y, centers, "numpy")
        got = _block_kmeans_sums(Xb, y, centers, "numba")
        assert set(got) == set(ref)
        for label, (N, LS, S) in ref.items():
            np.testing.assert_array_equal(got[label][0], N)
            np.testing.assert_allclose(got[label][1], LS, rtol=1e-12, atol=1e-9)
            np.testing.assert_allclose(got[label][2], S, rtol=1e-12, atol=1e-9)
    assert not np.any(ref[7.0][0]) and not np.any(got[7.0][1])


def test_block_sample_draws_distinct_rows_of_each_label():
    from conicml.moments.distributed import _block_sample

    rng = np.random.default_rng(5)
    X = rng.normal(size=(500, 2))
    y = np.where(np.arange(500) < 40, 1.0, -1.0)
    out = _block_sample(X, y, 30, seed=0)
    for label, rows in out.items():
        members = X[y == label]
        # every sampled row is a row of its label, none twice, in the block's order
        pos = [int(np.flatnonzero((members == r).all(axis=1))[0]) for r in rows]
        assert len(pos) == 30 and pos == sorted(set(pos))
    again = _block_sample(X, y, 30, seed=0)
    np.testing.assert_array_equal(again[1.0], out[1.0])


def test_streamed_kmeans_engines_give_the_same_clusters(client, blobs, monkeypatch):
    # the same fit with the compiled or the NumPy Lloyd-pass sums (the engine pinned on
    # the client and sent to the workers): the same partition (counts), the same moments
    # to rounding
    pytest.importorskip("numba")
    X, y, _ = blobs
    Xd, yd = da.from_array(X, chunks=(900, 2)), da.from_array(y, chunks=900)
    monkeypatch.setenv("CONICML_ENGINE", "numba")
    got = cm.ClusterMoments.from_data(Xd, yd, clustering="kmeans", n_clusters=3,
                                      random_state=0)
    monkeypatch.setenv("CONICML_ENGINE", "numpy")
    ref = cm.ClusterMoments.from_data(Xd, yd, clustering="kmeans", n_clusters=3,
                                      random_state=0)
    np.testing.assert_array_equal(got.counts, ref.counts)
    np.testing.assert_allclose(got.means, ref.means, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.sigmas, ref.sigmas, rtol=1e-10)
