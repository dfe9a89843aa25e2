"""``*CV`` estimators: the same folds, scores and best value as ``GridSearchCV`` over the base
estimator, from warm-started paths."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import FitFailedWarning, NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from conicml.estimators import (
    RankRCClassifier,
    RankRCClassifierCV,
    SVMClassifier,
    SVMClassifierCV,
)


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.5 * rng.normal(size=n) > 0.5, "a", "b")
    return X, y


CV = StratifiedKFold(4, shuffle=True, random_state=0)


@parametrize_with_checks(
    [SVMClassifierCV(Cs=[0.1, 1.0], cv=3), SVMClassifierCV(Cs=[0.1, 1.0], cv=3, kernel="rbf"),
     RankRCClassifierCV(lams=[0.01, 1.0], cv=3)],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_svm_cv_matches_grid_search(kernel):
    # the reference: GridSearchCV over SVMClassifier solving each C cold, on the same folds
    X, y = _data()
    Cs = [0.01, 0.1, 1.0, 10.0]
    opts = {"tol": 1e-6}
    est = SVMClassifierCV(Cs, cv=CV, kernel=kernel, solver_options=opts).fit(X, y)
    gs = GridSearchCV(SVMClassifier(kernel=kernel, form="dual", solver="smo",
                                    solver_options=opts), {"C": Cs}, cv=CV).fit(X, y)
    assert set(est.cv_results_) == set(gs.cv_results_)
    assert est.best_params_ == gs.best_params_
    assert est.best_score_ == pytest.approx(gs.best_score_, abs=1e-12)
    np.testing.assert_allclose(est.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=1e-12)
    np.testing.assert_array_equal(est.cv_results_["rank_test_score"],
                                  gs.cv_results_["rank_test_score"])
    assert est.C_ == gs.best_params_["C"] and est.n_splits_ == 4
    np.testing.assert_array_equal(est.predict(X), gs.predict(X))


def test_svm_cv_with_a_scorer_and_a_generic_backend():
    # roc_auc through decision_function; clarabel solves every C cold, smo along the path
    X, y = _data(n=100, seed=1)
    Cs = [0.03, 0.3, 3.0]
    smo = SVMClassifierCV(Cs, cv=CV, kernel="rbf", scoring="roc_auc",
                          solver_options={"tol": 1e-6}).fit(X, y)
    ipm = SVMClassifierCV(Cs, cv=CV, kernel="rbf", scoring="roc_auc", solver="clarabel").fit(X, y)
    gs = GridSearchCV(SVMClassifier(kernel="rbf", form="dual"), {"C": Cs}, cv=CV,
                      scoring="roc_auc").fit(X, y)
    for est in (smo, ipm):
        assert est.best_params_ == gs.best_params_
        np.testing.assert_allclose(est.cv_results_["mean_test_score"],
                                   gs.cv_results_["mean_test_score"], atol=1e-4)


def test_precomputed_kernel_equals_the_named_kernel():
    X, y = _data(seed=2)
    Cs = [0.1, 1.0, 10.0]
    named = SVMClassifierCV(Cs, cv=CV, kernel="rbf", gamma=0.25,
                            solver_options={"tol": 1e-6}).fit(X, y)
    pre = SVMClassifierCV(Cs, cv=CV, kernel="precomputed",
                          solver_options={"tol": 1e-6}).fit(rbf_kernel(X, gamma=0.25), y)
    assert pre.best_params_ == named.best_params_
    np.testing.assert_allclose(pre.cv_results_["mean_test_score"],
                               named.cv_results_["mean_test_score"], atol=1e-12)
    np.testing.assert_array_equal(pre.predict(rbf_kernel(X, gamma=0.25)), named.predict(X))


def test_rankrc_cv_matches_grid_search():
    rng = np.random.default_rng(3)
    n = 240
    y = np.where(rng.random(n) < 0.12, 1, 0)
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None]
    lams = 2.0 ** np.arange(-20, 11, 4)
    est = RankRCClassifierCV(lams, cv=CV).fit(X, y)
    gs = GridSearchCV(RankRCClassifier(), {"lam": list(lams)}, cv=CV).fit(X, y)
    # ROC AUC of scores equal to the solvers' tolerance (rank-tr stops at 1e-8)
    np.testing.assert_allclose(est.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=1e-6)
    assert est.best_params_["lam"] == gs.best_params_["lam"]
    assert est.best_score_ == pytest.approx(gs.best_score_, abs=1e-6)
    assert est.score(X, y) == pytest.approx(gs.score(X, y), abs=1e-6)


def test_refit_false_chooses_but_does_not_predict():
    X, y = _data(seed=4)
    est = SVMClassifierCV([0.1, 1.0], cv=3, refit=False).fit(X, y)
    assert est.best_params_["C"] in (0.1, 1.0)
    assert not hasattr(est, "best_estimator_")
    with pytest.raises(NotFittedError, match="refit=False"):
        est.predict(X)


def test_a_fold_without_one_class_is_scored_nan_with_a_warning():
    # GridSearchCV's error_score=np.nan: the fold's base fit raises (one class)
    X, y = _data(seed=5)
    order = np.argsort(y, kind="stable")
    n_a = int(np.sum(y == "a"))
    bad = (order[:n_a], order[n_a:])  # trains on "a" only
    good = next(iter(StratifiedKFold(3).split(X, y)))
    with pytest.warns(FitFailedWarning, match="fits failed"):
        est = SVMClassifierCV([0.1, 1.0], cv=[good, bad]).fit(X, y)
    assert np.all(np.isnan(est.cv_results_["split1_test_score"]))
    assert np.all(np.isfinite(est.cv_results_["split0_test_score"]))
    with pytest.raises(ValueError, match="Cs must be positive"):
        SVMClassifierCV([0.0, 1.0]).fit(X, y)


def test_integer_grids():
    # LogisticRegressionCV's convention: an int is the number of log-spaced values
    np.testing.assert_allclose(SVMClassifierCV(Cs=3)._grid(), [1e-3, 1.0, 1e3])
    np.testing.assert_allclose(RankRCClassifierCV(lams=16)._grid(),
                               2.0 ** np.arange(-20, 11, 2))  # the thesis's grid
