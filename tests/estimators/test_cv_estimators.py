"""``*CV`` estimators: the same folds, scores and best value as ``GridSearchCV`` over the base
estimator, from warm-started paths."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning, NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import (
    BMPMClassifier,
    BMPMClassifierCV,
    ChanceConstrainedClassifier,
    ChanceConstrainedClassifierCV,
    M4Classifier,
    M4ClassifierCV,
    QPFSSelector,
    RankRCClassifier,
    RankRCClassifierCV,
    SVMClassifier,
    SVMClassifierCV,
    SVOrdinalRegressor,
    SVOrdinalRegressorCV,
)
from conicml.estimators.cv import _QPFSAlphaSearch


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.5 * rng.normal(size=n) > 0.5, "a", "b")
    return X, y


CV = StratifiedKFold(4, shuffle=True, random_state=0)


def _expected_failures(estimator):
    if isinstance(estimator, BMPMClassifierCV):
        # as BMPMClassifier(beta0=0.0) in test_minimax_estimators: the common checks' classes
        # overlap so much (beta0_max ~ 0.07) that only beta0 near 0 is attainable on every
        # data set, and a BMPM requiring nothing of classes_[0] sets its threshold near that
        # class's mean, misclassifying about half of it by design (eq. 3.23)
        return {"check_classifiers_train": "BMPM with beta0 near 0 fails the 0.83 "
                "training-accuracy bar by design (eq. 3.23)"}
    return {}


@parametrize_with_checks(
    [SVMClassifierCV(Cs=[0.1, 1.0], cv=3), SVMClassifierCV(Cs=[0.1, 1.0], cv=3, kernel="rbf"),
     RankRCClassifierCV(lams=[0.01, 1.0], cv=3), BMPMClassifierCV(beta0s=[0.0, 0.05], cv=3),
     M4ClassifierCV(Cs=[0.01, 1.0], cv=3),
     ChanceConstrainedClassifierCV(rates=[(1.0, 1.0), (0.9, 0.9)], cv=3),
     SVOrdinalRegressorCV(Cs=[0.1, 1.0], cv=3),
     QPFSSelector(alpha="cv", alphas=[0.2, 0.8], cv=3, similarity="correlation")],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kernel, solver", [("linear", "auto"), ("linear", "smo"),
                                            ("rbf", "auto")])
def test_svm_cv_matches_grid_search(kernel, solver):
    # the reference: GridSearchCV over SVMClassifier solving each C cold by smo, on the same
    # folds ("auto": svm-ipm for the linear kernel, smo's path for the RBF one)
    X, y = _data()
    Cs = [0.01, 0.1, 1.0, 10.0]
    opts = {"tol": 1e-6}
    est = SVMClassifierCV(Cs, cv=CV, kernel=kernel, solver=solver,
                          solver_options=opts).fit(X, y)
    assert est.best_estimator_.solution_.solver == (
        "svm-ipm" if (kernel, solver) == ("linear", "auto") else "smo")
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



def test_rankrc_cv_scores_its_fold_models_together_as_roc_auc_score_would():
    # scoring=None scores a fold's models together (mid-rank AUC of one stacked product);
    # on integer features with a linear kernel the decision values tie, which
    # roc_auc_score (scoring="roc_auc", model by model) counts one half: the same scores
    rng = np.random.default_rng(5)
    n = 150
    y = np.where(rng.random(n) < 0.2, 1, 0)
    X = rng.integers(0, 3, size=(n, 2)).astype(float) + y[:, None]
    lams = [1e-3, 1e-1, 10.0]
    together = RankRCClassifierCV(lams, cv=CV, kernel="linear", refit=False).fit(X, y)
    one_by_one = RankRCClassifierCV(lams, cv=CV, kernel="linear", refit=False,
                                    scoring="roc_auc").fit(X, y)
    for k in range(CV.get_n_splits()):
        np.testing.assert_allclose(together.cv_results_[f"split{k}_test_score"],
                                   one_by_one.cv_results_[f"split{k}_test_score"], atol=1e-12)


def test_rankrc_cv_fold_models_predict_as_the_base_estimator():
    # the fold model's threshold (computed when predict asks) is RankRCClassifier's
    rng = np.random.default_rng(6)
    y = np.where(rng.random(120) < 0.2, 1, 0)
    X = rng.normal(size=(120, 2)) + y[:, None]
    est = RankRCClassifierCV([1e-2, 1.0], cv=CV).fit(X, y)
    train, test = next(CV.split(X, y))
    y_pm = np.where(y == 1, 1.0, -1.0)
    models, _, X_test = est._fold_path(X, y_pm, train, test, est._grid())
    for lam, model in zip(est._grid(), models):
        base = RankRCClassifier(lam).fit(X[train], y[train])
        assert model.shift == pytest.approx(-base.threshold_, abs=1e-6)
        np.testing.assert_array_equal(model.predict(X_test), base.predict(X[test]))


@pytest.mark.parametrize("basis", ["rare", "random"])
def test_rankrc_cv_refit_from_the_folds_is_the_cold_fit(basis):
    # the rare basis refit starts from the folds' mean coefficients; the optimum is the
    # cold RankRCClassifier's (certified, objective equal to its tolerance) in fewer
    # iterations; a random basis is refitted cold, as GridSearchCV does
    rng = np.random.default_rng(7)
    n = 400
    y = np.where(rng.random(n) < 0.1, 1, 0)
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None]
    lam = 2.0 ** -8
    est = RankRCClassifierCV([lam], cv=CV, basis=basis, random_state=0).fit(X, y)
    cold = RankRCClassifier(lam, basis=basis, random_state=0).fit(X, y)
    warm = est.best_estimator_
    assert warm.solution_.status is cm.Status.OPTIMAL and warm.solution_.residuals.gap <= 1e-5
    np.testing.assert_array_equal(warm.basis_, cold.basis_)
    assert warm.model_["objective"] == pytest.approx(cold.model_["objective"], rel=1e-9)
    assert warm.get_params() == cold.get_params() and not hasattr(warm, "_x0")
    if basis == "rare":
        assert warm.solution_.iterations < cold.solution_.iterations
    else:
        np.testing.assert_allclose(warm.dual_coef_, cold.dual_coef_, rtol=1e-12)


def test_rankrc_cv_refit_takes_exact_directions_where_every_fold_did():
    # where every fold's rank-tr solve at the best lambda took exact Newton directions,
    # the refit takes them from its start (a hint below solver_options, which win); the
    # optimum is the cold RankRCClassifier's and clarabel's (an independent solve)
    rng = np.random.default_rng(7)
    n = 400
    y = np.where(rng.random(n) < 0.1, 1, 0)
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None]
    lam = 2.0 ** -14
    est = RankRCClassifierCV([lam], cv=CV).fit(X, y)
    train, test = next(CV.split(X, y))
    models, _, _ = est._fold_path(X, np.where(y == 1, 1.0, -1.0), train, test, est._grid())
    assert models[0].exact  # the folds took exact directions
    warm, cold = est.best_estimator_, RankRCClassifier(lam).fit(X, y)
    assert warm.solution_.extras["exact_directions"] > 0
    assert warm.solution_.extras["hessian_products"] == 0  # no trust-region iteration
    assert warm.solution_.status is cm.Status.OPTIMAL and warm.solution_.residuals.gap <= 1e-5
    assert warm.model_["objective"] == pytest.approx(cold.model_["objective"], rel=1e-9)
    assert warm.get_params() == cold.get_params() and not hasattr(warm, "_hints")
    pytest.importorskip("clarabel")
    generic = warm.program_.decode(cm.solve(warm.program_, "clarabel", eps_abs=1e-10,
                                            eps_rel=1e-10))["objective"]
    assert warm.model_["objective"] == pytest.approx(generic, rel=1e-6)  # clarabel's accuracy
    # a direction given in solver_options wins: "auto" starts with trust-region steps
    given = RankRCClassifierCV([lam], cv=CV, solver_options={"direction": "auto"}).fit(X, y)
    assert given.best_estimator_.solution_.extras["hessian_products"] > 0


def test_rankrc_cv_takes_eps_as_the_old_spelling_of_smoothing():
    # eps was renamed smoothing (docs/glossary.md): the same search, with a FutureWarning
    rng = np.random.default_rng(4)
    y = np.where(rng.random(60) < 0.2, 1, 0)
    X = rng.normal(size=(60, 2)) + y[:, None]
    new = RankRCClassifierCV([1e-2, 1.0], cv=CV, smoothing=0.3).fit(X, y)
    with pytest.warns(FutureWarning, match="renamed 'smoothing'"):
        old = RankRCClassifierCV([1e-2, 1.0], cv=CV, eps=0.3).fit(X, y)
    np.testing.assert_array_equal(old.cv_results_["mean_test_score"],
                                  new.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(old.dual_coef_, new.dual_coef_)
    with pytest.raises(TypeError, match="give only 'smoothing'"):
        RankRCClassifierCV([1e-2], cv=CV, eps=0.3, smoothing=0.2).fit(X, y)

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


def _same_as_grid_search(est, gs, atol=1e-12):
    """Equal mean scores (nan where GridSearchCV's fit failed), ranks and best value."""
    np.testing.assert_allclose(est.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=atol)
    np.testing.assert_array_equal(est.cv_results_["rank_test_score"],
                                  gs.cv_results_["rank_test_score"])
    assert est.best_params_ == gs.best_params_
    assert est.best_score_ == pytest.approx(gs.best_score_, abs=atol)
    assert est.cv_results_["params"] == gs.cv_results_["params"]


@pytest.mark.parametrize("solver", ["ils-newton", "clarabel"])
def test_bmpm_cv_matches_grid_search_and_scores_infeasible_beta0_nan(solver):
    # the reference: GridSearchCV over BMPMClassifier, each beta0 cold; 0.95 lies above
    # beta0_max (eq. 3.44) on every fold: BMPMClassifier.fit raises there, scored nan
    X, y = _data(seed=6)
    beta0s = [0.1, 0.4, 0.6, 0.8, 0.95]
    with pytest.warns(FitFailedWarning, match=r"beta0=0.95 is not attainable"):
        est = BMPMClassifierCV(beta0s, cv=CV, solver=solver).fit(X, y)
    with pytest.warns(FitFailedWarning):
        gs = GridSearchCV(BMPMClassifier(solver=solver), {"beta0": beta0s}, cv=CV).fit(X, y)
    assert np.isnan(est.cv_results_["mean_test_score"][-1])
    _same_as_grid_search(est, gs)
    assert est.beta0_ == gs.best_params_["beta0"]
    np.testing.assert_array_equal(est.predict(X), gs.predict(X))


def test_m4_cv_matches_grid_search():
    # the soft-M4 search along C starts from the previous rho*; GridSearchCV solves cold
    X, y = _data(n=120, seed=8)
    Cs = [0.003, 0.03, 0.3]
    est = M4ClassifierCV(Cs, cv=CV).fit(X, y)
    gs = GridSearchCV(M4Classifier(), {"C": Cs}, cv=CV).fit(X, y)
    _same_as_grid_search(est, gs)
    np.testing.assert_array_equal(est.predict(X), gs.predict(X))


@pytest.mark.parametrize("solver", ["clarabel", "ellipsoid-newton"])
def test_chance_constrained_cv_matches_grid_search(solver):
    # rate pairs as GridSearchCV's list of grids; (0.05, 0.05) is infeasible (the class
    # ellipsoids overlap) on every fold: ChanceConstrainedClassifier.fit raises, scored nan
    X, y = _data(seed=9)
    rates = [(0.9, 0.9), (0.6, 0.8), (0.8, 0.5), (0.05, 0.05)]
    grid = [{"error_pos": [a], "error_neg": [b]} for a, b in rates]
    with pytest.warns(FitFailedWarning, match="error_pos=0.05, error_neg=0.05"):
        est = ChanceConstrainedClassifierCV(rates, cv=CV, solver=solver).fit(X, y)
    with pytest.warns(FitFailedWarning):
        gs = GridSearchCV(ChanceConstrainedClassifier(solver=solver), grid, cv=CV).fit(X, y)
    assert np.isnan(est.cv_results_["mean_test_score"][-1])
    _same_as_grid_search(est, gs)
    assert est.rates_ == (gs.best_params_["error_pos"], gs.best_params_["error_neg"])
    with pytest.raises(ValueError, match="rates must be pairs"):
        ChanceConstrainedClassifierCV([0.1, 0.2]).fit(X, y)


def test_svor_cv_matches_grid_search():
    # smo-or along C from (alpha, alpha*) at its best scaling; GridSearchCV cold
    rng = np.random.default_rng(10)
    X = rng.normal(size=(150, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.4 * rng.normal(size=150), [-0.5, 0.8])
    Cs = [0.03, 0.3, 3.0]
    opts = {"tol": 1e-6}
    est = SVOrdinalRegressorCV(Cs, cv=CV, solver_options=opts).fit(X, y)
    gs = GridSearchCV(SVOrdinalRegressor(solver_options=opts), {"C": Cs}, cv=CV).fit(X, y)
    _same_as_grid_search(est, gs)
    np.testing.assert_array_equal(est.predict(X), gs.predict(X))
    assert est.score(X, y) == pytest.approx(gs.score(X, y))


def test_progress_bar_counts_every_fold_and_value(monkeypatch):
    # a bar over the (fold, value) grid, silent unless wanted (a terminal)
    tqdm = pytest.importorskip("tqdm")
    from conicml._utils import progress

    seen = {}

    class Bar(tqdm.tqdm):
        def close(self):
            seen["n"], seen["total"] = self.n, self.total
            super().close()

    monkeypatch.setattr(progress, "_tqdm", lambda: Bar)
    monkeypatch.setattr(progress, "_stderr_is_terminal", lambda: True)
    monkeypatch.delenv("CONICML_PROGRESS", raising=False)
    X, y = _data(n=90, seed=11)
    SVMClassifierCV([0.1, 1.0, 10.0], cv=3).fit(X, y)
    assert seen == {"n": 9, "total": 9}


@pytest.mark.parametrize("estimator", [None, KNeighborsClassifier(3)])
def test_qpfs_alpha_by_cv_matches_grid_search_over_a_pipeline(estimator):
    # the reference: GridSearchCV over Pipeline(QPFSSelector(alpha=a), estimator)
    rng = np.random.default_rng(12)
    y = np.repeat([0, 1, 2], 40)
    X = rng.normal(size=(120, 7))
    X[:, 1] += y
    X[:, 4] = X[:, 1] + 0.3 * rng.normal(size=120)  # redundant with feature 1
    X[:, 5] += 0.6 * (y == 2)
    alphas = [0.0, 0.3, 0.6, 1.0]
    sel = QPFSSelector(2, alpha="cv", alphas=alphas, cv=CV, estimator=estimator).fit(X, y)
    pipe = Pipeline([("qpfs", QPFSSelector(2)),
                     ("estimator", SVC(kernel="linear") if estimator is None else estimator)])
    gs = GridSearchCV(pipe, {"qpfs__alpha": alphas}, cv=CV).fit(X, y)
    np.testing.assert_allclose(sel.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=1e-12)
    assert sel.alpha_ == gs.best_params_["qpfs__alpha"] == sel.best_params_["alpha"]
    # the selection is QPFSSelector's at the chosen alpha, refitted on all the data
    ref = QPFSSelector(2, alpha=sel.alpha_).fit(X, y)
    np.testing.assert_array_equal(sel.get_support(), ref.get_support())
    np.testing.assert_array_equal(sel.get_support(), gs.best_estimator_["qpfs"].get_support())


def test_fold_paths_are_warm_started():
    # every solve after the first along a fold's grid starts from the previous solution
    X, y = _data(n=120, seed=13)
    classes = np.unique(y)
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    train, test = np.arange(0, 90), np.arange(90, 120)
    cases = [(BMPMClassifierCV([0.2, 0.4, 0.6], solver="ils-newton"), y_pm),
             (BMPMClassifierCV([0.2, 0.4, 0.6], solver="dinkelbach"), y_pm),
             (M4ClassifierCV([0.003, 0.03, 0.3]), y_pm),
             (ChanceConstrainedClassifierCV([(0.9, 0.9), (0.8, 0.8), (0.7, 0.7)],
                                            solver="ellipsoid-newton"), y_pm),
             (SVOrdinalRegressorCV([0.1, 1.0, 10.0]), y)]
    for est, y_enc in cases:
        est.classes_ = classes
        models, _, _ = est._fold_path(X, y_enc, train, test, est._grid())
        starts = [m.solution_.extras["path"]["warm_start"] for m in models]
        # the soft-M4 searches also pass on their fixed-rho solutions (C-independent)
        later = ("inner_memo", "x0") if isinstance(est, M4ClassifierCV) else ("x0",)
        assert starts[0] == () and starts[1:] == [later, later], (est, starts)
    sel = QPFSSelector(2, alpha="cv")
    search = _QPFSAlphaSearch(sel)
    models, _, _ = search._fold_path(X, y, train, test, np.array([0.2, 0.5, 0.8]))
    starts = [m["qpfs"].solution_.extras["path"]["warm_start"] for m in models]
    assert starts == [(), ("x0",), ("x0",)]


def test_fold_gram_is_column_major_and_equals_sklearns():
    # the fold's Gram matrix (computed in place, column-major for smo's in-place columns)
    # against sklearn's rbf_kernel, and the certificate's product over the support
    # vectors' columns against the dense product
    from conicml.estimators.cv import _column_major_gram
    from conicml.formulations.svm import _gram_matvec
    from conicml.kernels import make_kernel

    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 5))
    kern = make_kernel("rbf", X, gamma=0.3)
    K = _column_major_gram(kern, X)
    assert K.flags.f_contiguous
    np.testing.assert_allclose(K, rbf_kernel(X, X, gamma=0.3), rtol=1e-12, atol=1e-14)
    v = np.zeros(150)
    v[rng.choice(150, 20, replace=False)] = rng.normal(size=20)  # a sparse dual point
    np.testing.assert_allclose(_gram_matvec(K, v), np.asarray(K) @ v, rtol=1e-12,
                               atol=1e-13)


def test_svm_cv_smo_reaches_large_C_on_a_low_rank_kernel():
    # linear kernel on overlapping classes at C = 1e4: the refit on 300 rows needs ~3.5e5
    # smo updates, over smo's default cap of 1000 n (3e5); the search raises the cap to
    # LIBSVM's (1e7), so the path and the refit converge without a ConvergenceWarning
    X, y = cm.datasets.twonorm(300, dim=5, random_state=0)
    cv = [(np.arange(200), np.arange(200, 300))]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = SVMClassifierCV(Cs=[1e4], cv=cv, solver="smo").fit(X, y)
    assert est.best_estimator_.solution_.status.value == "optimal"
    assert np.isfinite(est.cv_results_["mean_test_score"][0])
    # an explicit cap is the user's
    assert SVMClassifierCV(solver="smo", solver_options={"max_iter": 5}
                           )._solver_options() == {"max_iter": 5}


def test_svm_cv_linear_default_matches_libsvm_over_a_wide_grid():
    # the default (solver="auto": svm-ipm for the linear kernel) against an independent
    # solver, LIBSVM (GridSearchCV(SVC(kernel="linear"))) at a tight tol, on the default grid
    # 1e-3 .. 1e3 where smo and LIBSVM need updates growing with C: the same scores, the
    # same best C, no warning, every solution certified
    X, y = cm.datasets.twonorm(400, dim=5, random_state=1)
    Cs = np.logspace(-3, 3, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = SVMClassifierCV(Cs, cv=CV).fit(X, y)
    gs = GridSearchCV(SVC(kernel="linear", tol=1e-6), {"C": list(Cs)}, cv=CV).fit(X, y)
    np.testing.assert_allclose(est.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=1e-12)
    assert est.best_params_ == gs.best_params_
    sol = est.best_estimator_.solution_
    assert sol.solver == "svm-ipm" and sol.status.value == "optimal"
    assert sol.residuals.source == "recomputed"
    np.testing.assert_array_equal(est.predict(X), gs.predict(X))
    # many features: smo on the Gram matrix (svm-ipm's iterations cost O(n d^2))
    wide = SVMClassifierCV()
    wide.n_features_in_ = 1001
    assert wide._solver() == "smo" and SVMClassifierCV(kernel="rbf")._solver() == "smo"
