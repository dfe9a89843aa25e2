"""Every Dask-enabled fit takes a ``dask.dataframe`` as it takes a dask array (extra
``distributed`` with ``dask[dataframe]``).

References: the same fit on the dask arrays of the same row blocks (the DataFrame's
partitions): the conversion runs on the workers and must change nothing but the column
names, which become ``feature_names_in_``; the arrays' fits are checked against the
in-memory learners and generic backends in the other Dask test modules.
"""

import numpy as np
import pytest

from conicml import ClassMoments, ClusterMoments
from conicml.estimators import HLSVMClassifier, QPFSSelector, RankRCClassifier
from conicml.estimators.svm import SVMClassifier
from conicml.exceptions import ProgramError

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")

NAMES = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def client(inproc_client):
    return inproc_client


@pytest.fixture(scope="module")
def frames():
    rng = np.random.default_rng(0)
    n = 900
    X = rng.normal(size=(n, 4)) * [1.0, 2.0, 0.5, 1.0]
    y = np.where(X @ [1.0, -0.5, 2.0, 0.0] + 0.8 + 0.7 * rng.normal(size=n) > 0, 7, 3)
    df = dd.from_pandas(pd.DataFrame(X, columns=NAMES), npartitions=3)
    ys = dd.from_pandas(pd.Series(y, name="label"), npartitions=3)
    sizes = tuple(int(s) for s in df.map_partitions(len).compute())
    assert sum(sizes) == n and len(sizes) == 3
    # the reference: dask arrays of the same row blocks
    Xd, yd = da.from_array(X, chunks=(sizes, 4)), da.from_array(y, chunks=(sizes,))
    return df, ys, Xd, yd


def _same_linear(a, b):
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("solver", ["dcd", "pegasos"])
def test_linear_svm_fits_a_dataframe(client, frames, solver):
    df, ys, Xd, yd = frames
    opts = {"tol": 5e-2, "max_iter": 60}
    got = SVMClassifier(solver=solver, solver_options=opts).fit(df, ys)
    ref = SVMClassifier(solver=solver, solver_options=opts).fit(Xd, yd)
    _same_linear(got, ref)
    assert got.feature_names_in_.tolist() == NAMES and got.n_features_in_ == 4
    assert got.classes_.tolist() == [3, 7]
    assert not hasattr(ref, "feature_names_in_")
    # a refit on arrays forgets the names of the DataFrame fit
    got.fit(Xd, yd)
    assert not hasattr(got, "feature_names_in_")


def test_hlsvm_fits_a_dataframe(client, frames):
    df, ys, Xd, yd = frames
    kw = dict(pruning_fraction=0.2, random_state=0, node_solver_options={"tol": 5e-2})
    got = HLSVMClassifier(**kw).fit(df, ys)
    ref = HLSVMClassifier(**kw).fit(Xd, yd)
    _same_linear(got, ref)
    assert got.feature_names_in_.tolist() == NAMES
    assert got.n_hyperplanes_ == ref.n_hyperplanes_


def test_qpfs_and_rankrc_fit_a_dataframe(client, frames):
    df, ys, Xd, yd = frames
    got = QPFSSelector(2, similarity="correlation").fit(df, ys)
    ref = QPFSSelector(2, similarity="correlation").fit(Xd, yd)
    np.testing.assert_array_equal(got.get_support(), ref.get_support())
    assert got.feature_names_in_.tolist() == NAMES
    # RankRC's kernel basis is the rare class: a rare label (about 3 %) keeps it small
    rare = (df["a"] + df["c"] > 2.5).astype(int)
    rare_d = (Xd[:, 0] + Xd[:, 2] > 2.5).astype(int)
    got = RankRCClassifier(lam=0.01).fit(df, rare)
    ref = RankRCClassifier(lam=0.01).fit(Xd, rare_d)
    np.testing.assert_allclose(got.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
    assert got.feature_names_in_.tolist() == NAMES


def test_moments_from_a_dataframe(client, frames):
    df, ys, Xd, yd = frames
    signed_df = ys.map(lambda v: 1.0 if v == 7 else -1.0, meta=("label", float))
    signed = da.where(yd == 7, 1.0, -1.0)
    got, ref = ClassMoments.from_data(df, signed_df), ClassMoments.from_data(Xd, signed)
    np.testing.assert_allclose(got.mean_pos, ref.mean_pos, rtol=1e-12)
    np.testing.assert_allclose(got.cov_neg, ref.cov_neg, rtol=1e-12)
    got = ClusterMoments.from_data(df, signed_df, clustering="kmeans", n_clusters=2,
                                   random_state=0)
    ref = ClusterMoments.from_data(Xd, signed, clustering="kmeans", n_clusters=2,
                                   random_state=0)
    np.testing.assert_allclose(got.counts, ref.counts)


def test_labels_as_a_one_column_dataframe(client, frames):
    df, ys, Xd, yd = frames
    opts = {"tol": 5e-2, "max_iter": 60}
    got = SVMClassifier(solver="dcd", solver_options=opts).fit(df, ys.to_frame())
    _same_linear(got, SVMClassifier(solver="dcd", solver_options=opts).fit(Xd, yd))
    two = dd.concat([ys, ys.rename("other")], axis=1)
    with pytest.raises(ProgramError, match="one column of labels"):
        SVMClassifier(solver="dcd", solver_options=opts).fit(df, two)
