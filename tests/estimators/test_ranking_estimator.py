"""Ranking estimators: scikit-learn contract, AUC, threshold rule, solvers, multi-level."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import RankRCClassifier, RankRCRanker, RankSVMClassifier
from conicml.formulations import ranking
from conicml.metrics import auc, mauc


@parametrize_with_checks([
    RankRCClassifier(),
    RankRCClassifier(basis="random", random_state=0, solver="rank-newton"),
    RankSVMClassifier(),
    # the ordinal ranker: every check passes (a regressor-like estimator whose
    # predict is the ranking score and whose score is MAUC); no expected failures
    RankRCRanker(),
])
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def abalone():
    X, y = cm.datasets.load("abalone7")
    X = (X - X.mean(0)) / X.std(0)
    rng = np.random.default_rng(0)
    idx = rng.choice(X.shape[0], 600, replace=False)
    return X[idx], np.where(y[idx] > 0, "rare", "common")


def test_fit_scores_and_threshold_rule(abalone):
    X, labels = abalone
    est = RankRCClassifier(lam=2 ** -6).fit(X, labels)
    assert list(est.classes_) == ["common", "rare"]
    scores = est.ranking_score(X)
    # the ranking score is the decoded program's training score; decision = score - threshold
    np.testing.assert_allclose(scores, est.program_.decode(est.solution_)["scores"], atol=1e-10)
    np.testing.assert_allclose(est.decision_function(X), scores - est.threshold_, atol=1e-12)
    # predict: the top m+ training scores are rare (no ties here)
    m_pos = int(np.sum(labels == "rare"))
    assert np.sum(est.predict(X) == "rare") == m_pos
    assert est.score(X, labels) == pytest.approx(auc(labels == "rare", scores, ties="half"))
    assert est.dual_coef_.shape == (1, m_pos) and est.basis_vectors_.shape == (m_pos, X.shape[1])


@pytest.mark.parametrize("solver", ["rank-newton", "clarabel"])
def test_swapping_the_solver_gives_the_same_scores(solver, abalone):
    X, labels = abalone
    X, labels = X[:250], labels[:250]
    ref = RankRCClassifier(lam=2 ** -4).fit(X, labels)
    est = RankRCClassifier(lam=2 ** -4, solver=solver).fit(X, labels)
    scale = np.abs(ref.decision_function(X)).max()
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X),
                               atol=1e-4 * scale)


def test_ranksvm_at_least_as_good_on_training_objective(abalone):
    X, labels = abalone
    X, labels = X[:200], labels[:200]
    rc = RankRCClassifier(lam=2 ** -4).fit(X, labels)
    svm = RankSVMClassifier(lam=2 ** -4).fit(X, labels)
    f_rc = rc.program_.decode(rc.solution_)["objective"]
    f_svm = svm.program_.decode(svm.solution_)["objective"]
    assert f_svm <= f_rc + 1e-12
    assert svm.basis_.size == 200


def test_multilevel_ranker_mauc():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.clip(np.round(X[:, 0] + 0.3 * rng.normal(size=200) + 1.5), 0, 3).astype(int)
    est = RankRCRanker(lam=2 ** -6).fit(X, y)
    s = est.decision_function(X)
    assert est.score(X, y) == pytest.approx(mauc(y, s))
    assert est.score(X, y) > 0.85  # the levels are a noisy monotone function of x_0
    # the basis is every sample above the lowest level (6.2)
    np.testing.assert_array_equal(est.basis_, np.flatnonzero(y > 0))
    prog = ranking.rankrc(X, y, 2 ** -6)
    np.testing.assert_allclose(s, prog.decode(cm.solve(prog, "rank-newton"))["scores"],
                               atol=1e-5 * np.abs(s).max())


def test_bad_parameters_raise():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.r_[np.ones(5), np.zeros(25)]
    with pytest.raises(ValueError, match="lam"):
        RankRCClassifier(lam=0.0).fit(X, y)
    with pytest.raises(ValueError, match="smoothing"):
        RankRCClassifier(smoothing=1.5).fit(X, y)
    with pytest.raises(ValueError, match="class"):
        RankRCClassifier().fit(X, np.ones(30))


@pytest.mark.parametrize("cls", [RankRCClassifier, RankSVMClassifier, RankRCRanker])
def test_eps_is_the_old_spelling_of_smoothing(cls):
    # ``eps`` was renamed ``smoothing`` (docs/glossary.md): the old spelling fits the same
    # model (same program, same solver) with a FutureWarning; both at once is a TypeError
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0.8).astype(int)
    new = cls(smoothing=0.3).fit(X, y)
    with pytest.warns(FutureWarning, match="renamed 'smoothing'"):
        old = cls(eps=0.3).fit(X, y)
    np.testing.assert_array_equal(old.dual_coef_, new.dual_coef_)
    assert "eps" in cls().get_params()
    with pytest.raises(TypeError, match="give only 'smoothing'"):
        cls(eps=0.3, smoothing=0.2).fit(X, y)


def test_rankrc_program_takes_eps_for_one_release():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 2)), np.r_[np.ones(6), -np.ones(24)]
    with pytest.warns(FutureWarning, match="renamed 'smoothing'"):
        old = ranking.rankrc(X, y, 0.1, eps=0.3)
    assert old.data["rank"].eps == ranking.rankrc(X, y, 0.1, smoothing=0.3).data["rank"].eps
    with pytest.raises(TypeError, match="give only 'smoothing'"):
        ranking.rankrc(X, y, 0.1, eps=0.3, smoothing=0.3)
