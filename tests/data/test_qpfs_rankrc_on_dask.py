"""QPFS and RankRC fitted on Dask arrays agree with the in-memory fits (extra ``distributed``).

References: the in-memory code on the same data, an independent path (the similarity
functions of ``conicml._utils.similarity`` and ``PairwiseLoss`` over all pairs).
Tolerances: the QPFS statistics differ from the in-memory ones by round-off only (Chan's
merge against one centring), so weights agree to 1e-8; the RankRC fits are both
certified at relative gradient 1e-8 on a problem of condition ~1e3, so the coefficients
agree to 1e-5 relative.
"""

import numpy as np
import pytest

from conicml.contracts import ranking_distributed as rd
from conicml.contracts.ranking_ops import PairwiseLoss, gradient_parts
from conicml.estimators.feature_selection import QPFSSelector
from conicml.estimators.ranking import RankRCClassifier
from conicml.exceptions import ProgramError
from conicml.formulations.ranking import rankrc
from conicml.solving import solve

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


# ------------------------------------------------------------------------------ QPFS
@pytest.fixture(scope="module")
def fs_data():
    rng = np.random.default_rng(0)
    n = 2_501
    y = np.sort(rng.integers(0, 3, n))  # sorted: some blocks hold one class only
    X = rng.normal(size=(n, 7)) * [1, 1e3, 1e-3, 5, 1, 1, 1] + [1e4, 0, -2, 3, 0, 0, 0]
    X[:, 1] += 800 * y
    X[:, 4] = 1e-3 * X[:, 1] + rng.normal(size=n)  # redundant with feature 1
    X[:, 5] += 0.5 * y
    X[:, 6] = 2.5  # constant: ranked last
    return X, y


@pytest.mark.parametrize("similarity", ["mi", "correlation"])
@pytest.mark.parametrize("nystrom", [None, 0.6])
def test_qpfs_on_dask_matches_memory(client, fs_data, similarity, nystrom):
    X, y = fs_data
    kw = {"similarity": similarity, "nystrom": nystrom, "random_state": 3}
    ref = QPFSSelector(3, **kw).fit(X, y)
    got = QPFSSelector(3, **kw).fit(da.from_array(X, chunks=((1000, 3, 700, 798), 4)),
                                    da.from_array(y, chunks=600))
    np.testing.assert_array_equal(got.ranking_, ref.ranking_)
    np.testing.assert_array_equal(got.support_, ref.support_)
    np.testing.assert_allclose(got.scores_, ref.scores_, atol=1e-8)
    assert abs(got.alpha_ - ref.alpha_) < 1e-10
    assert got.ranking_[6] == 7  # the constant feature
    for key in ("q_bar", "f_bar"):
        assert abs(got.program_.data[key] - ref.program_.data[key]) < 1e-10


def test_qpfs_transform_of_dask_is_dask(client, fs_data):
    X, y = fs_data
    sel = QPFSSelector(2, similarity="correlation").fit(da.from_array(X, chunks=800), y)
    Xt = sel.transform(da.from_array(X, chunks=800))
    assert isinstance(Xt, da.Array)
    np.testing.assert_array_equal(Xt.compute(), sel.transform(X))


def test_qpfs_on_dask_bad_input(client, fs_data):
    X, y = fs_data
    Xn = X.copy()
    Xn[5, 2] = np.nan
    with pytest.raises(ProgramError, match="NaN"):
        QPFSSelector(2).fit(da.from_array(Xn, chunks=800), y)
    with pytest.raises(ProgramError, match="single class"):
        QPFSSelector(2).fit(da.from_array(X, chunks=800), np.zeros(len(y)))
    with pytest.raises(ProgramError, match="shape mismatch"):
        QPFSSelector(2).fit(da.from_array(X, chunks=800), y[:-1])


# ---------------------------------------------------------------------------- RankRC
@pytest.fixture(scope="module")
def rank_data():
    rng = np.random.default_rng(1)
    n = 3_000
    y = np.where(rng.random(n) < 0.02, 1, 0)
    X = rng.normal(size=(n, 3))
    X[y == 1] += [1.0, -0.5, 0.5]
    X[:, 2] += 0.3 * X[:, 0] ** 2
    return X, y


def test_block_sums_equal_the_pairwise_loss_over_all_pairs(rank_data):
    # numpy only: blocks of negatives, summed, against PairwiseLoss on every pair
    X, y = rank_data
    prog = rankrc(X, np.where(y > 0, 1, -1), 0.01, smoothing=0.1)
    rank, kern = prog.data["rank"], prog.data["kernel"]
    R = prog.data["basis"]
    XR = X[R]
    beta = np.random.default_rng(2).normal(size=R.size) * 0.3
    s = np.random.default_rng(3).normal(size=R.size)
    Kpp = rank.KR[R]
    a, ua = Kpp @ beta, Kpp @ s
    neg = np.flatnonzero(y == 0)
    splits = np.array_split(neg, 4)
    L = sum(rd.block_gradient(X[b], XR, kern, beta, a, 0.1)[0] for b in splits)
    ga = sum(rd.block_gradient(X[b], XR, kern, beta, a, 0.1)[1] for b in splits)
    kg = sum(rd.block_gradient(X[b], XR, kern, beta, a, 0.1)[2] for b in splits)
    va = sum(rd.block_hess_vec(X[b], XR, kern, beta, a, ua, s, 0.1)[0] for b in splits)
    kv = sum(rd.block_hess_vec(X[b], XR, kern, beta, a, ua, s, 0.1)[1] for b in splits)
    parts = [rd.block_hessian(X[b], XR, kern, beta, a, 0.1) for b in splits]
    ca, S, G = (sum(p[i] for p in parts) for i in (3, 4, 5))
    H = ((Kpp.T * ca) @ Kpp + G - Kpp.T @ S - S.T @ Kpp) / 0.2

    fn = PairwiseLoss(rank.levels, 0.1)
    L_ref, gp, st = fn.evaluate(rank.KR @ beta)
    hv_ref = rank.KR.T @ fn.hess_vec(st, rank.KR @ s)
    assert abs(L - L_ref) <= 1e-9 * L_ref
    np.testing.assert_allclose(Kpp.T @ ga + kg, rank.KR.T @ gp, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(Kpp.T @ va + kv, hv_ref, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(H @ s, hv_ref, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(parts[0][1], rd.block_gradient(X[splits[0]], XR, kern, beta,
                                                              a, 0.1)[1])


def test_dask_ranking_loss_matches_gradient_parts(client, rank_data):
    X, y = rank_data
    prog = rankrc(X, np.where(y > 0, 1, -1), 0.01, smoothing=0.1)
    rank = prog.data["rank"]
    R = prog.data["basis"]
    info = rd.scan(da.from_array(X, chunks=700), da.from_array(y, chunks=700))
    XR, idx = rd.gather_rows(info["X_blocks"], info["y_blocks"], info["offsets"], 1)
    np.testing.assert_array_equal(idx, R)
    loss = rd.DaskRankingLoss(info["X_blocks"], info["y_blocks"], 1, XR,
                              prog.data["kernel"], 0.1, rank.n_pairs)
    beta = np.random.default_rng(4).normal(size=R.size) * 0.3
    val, g = loss.gradient(beta)
    F_ref, gl_ref, _ = gradient_parts(rank, beta)
    assert abs(val + 0.5 * rank.lam * beta @ rank.KRR @ beta - F_ref) <= 1e-9 * F_ref
    np.testing.assert_allclose(g, gl_ref, rtol=1e-8, atol=1e-10)


def test_rankrc_on_dask_matches_memory(client, rank_data):
    X, y = rank_data
    opts = {"tol": 1e-8}
    ref = RankRCClassifier(lam=0.01, solver_options=opts).fit(X, y)
    got = RankRCClassifier(lam=0.01, solver_options=opts).fit(
        da.from_array(X, chunks=(900, 3)), da.from_array(y, chunks=900))
    assert got.solution_.status.value == "optimal"
    assert got.solution_.residuals.dual <= 1e-8
    np.testing.assert_array_equal(got.basis_, ref.basis_)
    np.testing.assert_array_equal(got.classes_, ref.classes_)
    b_ref, b_got = ref.dual_coef_[0], got.dual_coef_[0]
    assert np.max(np.abs(b_got - b_ref)) <= 1e-5 * np.max(np.abs(b_ref))
    assert abs(got.threshold_ - ref.threshold_) <= 1e-5 * abs(ref.threshold_)
    Xd = da.from_array(X, chunks=1000)
    dec = got.decision_function(Xd)
    assert isinstance(dec, da.Array)
    np.testing.assert_allclose(dec.compute(), ref.decision_function(X), atol=1e-5)
    pred = got.predict(Xd)
    assert isinstance(pred, da.Array)
    # labels can differ only where the score is within round-off of the threshold
    agree = pred.compute() == ref.predict(X)
    assert np.all(agree | (np.abs(ref.decision_function(X)) < 1e-5))


def test_rankrc_on_dask_subsampled_hessian_reaches_the_same_optimum(client, rank_data):
    # the gradient and certificate stay exact: a worse Hessian costs passes, not accuracy
    X, y = rank_data
    ref = RankRCClassifier(lam=0.01, solver_options={"tol": 1e-8}).fit(X, y)
    got = RankRCClassifier(lam=0.01, solver_options={"tol": 1e-8, "hessian_fraction": 0.25}
                           ).fit(da.from_array(X, chunks=900), da.from_array(y, chunks=900))
    assert got.solution_.residuals.dual <= 1e-8
    b_ref = ref.dual_coef_[0]
    assert np.max(np.abs(got.dual_coef_[0] - b_ref)) <= 1e-5 * np.max(np.abs(b_ref))


def test_rankrc_on_dask_with_a_sampled_rare_basis_solves_that_program(client, rank_data):
    # basis_size: a seeded sample of the rare class as the basis, every pair in the loss;
    # the reference is the same program (rankrc with that basis) solved in memory by
    # rank-tr (itself checked against the generic backends in tests/solvers)
    X, y = rank_data
    opts = {"tol": 1e-8, "basis_size": 20}
    Xd, yd = da.from_array(X, chunks=(900, 3)), da.from_array(y, chunks=900)
    got = RankRCClassifier(lam=0.01, random_state=3, solver_options=opts).fit(Xd, yd)
    rare = np.flatnonzero(y == 1)
    assert rare.size > 20 and got.basis_.size == 20 and np.isin(got.basis_, rare).all()
    assert np.all(np.diff(got.basis_) > 0)  # data order
    assert got.solution_.status.value == "optimal" and got.solution_.extras["n_rare"] == rare.size
    again = RankRCClassifier(lam=0.01, random_state=3, solver_options=opts).fit(Xd, yd)
    np.testing.assert_array_equal(again.basis_, got.basis_)  # seeded
    prog = rankrc(X, np.where(y > 0, 1, -1), 0.01, smoothing=0.1, basis=got.basis_)
    ref = solve(prog, solver="rank-tr", tol=1e-10)
    b_ref = prog.decode(ref)["beta"]
    assert np.max(np.abs(got.dual_coef_[0] - b_ref)) <= 1e-5 * np.max(np.abs(b_ref))
    np.testing.assert_array_equal(got.basis_vectors_, X[got.basis_])
    scores = got.decision_function(X) + got.threshold_
    ref_scores = got.kernel_(X, X[got.basis_]) @ b_ref
    assert np.max(np.abs(scores - ref_scores)) <= 1e-5 * np.max(np.abs(ref_scores))
    with pytest.raises(ProgramError, match="basis_size"):
        RankRCClassifier(solver_options={"basis_size": 0}).fit(Xd, yd)


def test_rankrc_on_dask_refuses_what_it_cannot_do(client, rank_data):
    X, y = rank_data
    Xd = da.from_array(X, chunks=1000)
    with pytest.raises(ProgramError, match="two classes"):
        RankRCClassifier().fit(Xd, np.zeros(len(y)))
    with pytest.raises(ProgramError, match="smoothed"):
        RankRCClassifier(loss="hinge").fit(Xd, y)
    with pytest.raises(ProgramError, match="solver_options"):
        RankRCClassifier(solver_options={"cg_max_iter": 3}).fit(Xd, y)
