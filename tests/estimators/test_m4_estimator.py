"""M4Classifier: scikit-learn contract, attributes, the C=None error, solver switching."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import M4Classifier
from conicml.exceptions import NotFittedStatusError
from conicml.formulations import m4

T2_X = np.array([(1, 0), (3, 0.5), (5, -0.5), (2, 1), (4, -1), (6, 0),
                 (-1, 0), (-1.3, 0.4), (-1.2, -0.4), (-1.6, 0.1), (-1.4, -0.2), (-1.1, 0.3)],
                dtype=float)
T2_LABELS = np.array(["x"] * 6 + ["a"] * 6)  # "x" > "a": classes_[1] = "x" is positive


# The common checks draw overlapping classes, which the separable M4 (C=None, the
# default) rejects by design with an error naming C; the contract is therefore checked
# on a soft margin. (The kernel path shares every line of the estimator except
# _decision, which test_rbf_and_precomputed covers; an RBF contract run takes minutes.)
@parametrize_with_checks([M4Classifier(C=0.05, solver_options={"tol": 1e-5})])
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_separable_attributes_and_convention():
    est = M4Classifier(C=None, ridge=0.0).fit(T2_X, T2_LABELS)
    assert list(est.classes_) == ["a", "x"]
    # [N] note §5.4 T2: rho = 1.0870085, w = (0.2102804, 0.0700935), b = 0.1603824
    assert est.rho_ == pytest.approx(1.0870085, abs=1e-6)
    np.testing.assert_allclose(est.coef_[0], [0.2102804, 0.0700935], atol=1e-6)
    assert est.intercept_[0] == pytest.approx(0.1603824, abs=1e-6)
    np.testing.assert_array_equal(est.support_, [0, 6, 11])
    f = T2_X @ est.coef_[0] + est.intercept_[0]
    np.testing.assert_allclose(est.decision_function(T2_X), f)
    np.testing.assert_array_equal(est.predict(T2_X), T2_LABELS)
    assert est.solution_.solver == "dinkelbach-gfp" and est.n_iter_ == est.solution_.iterations
    clone = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(clone.predict(T2_X), est.predict(T2_X))


@pytest.mark.parametrize("solver", ["bisection", "dinkelbach-gfp"])
@pytest.mark.parametrize("inner", ["clarabel", "ecos"])
def test_swapping_solver_is_one_word(solver, inner):
    est = M4Classifier(C=None, ridge=0.0, solver=solver, inner=inner).fit(T2_X, T2_LABELS)
    assert est.solution_.solver == solver and est.solution_.extras["inner"] == inner
    assert est.rho_ == pytest.approx(1.0870085, abs=1e-6)


def test_not_separable_error_names_C():
    X, y = cm.datasets.twonorm(200, dim=2, random_state=0)
    with pytest.raises(NotFittedStatusError, match="set C to a positive number"):
        M4Classifier(C=None).fit(X, y)
    assert M4Classifier(C=0.01).fit(X, y).score(X, y) > 0.9


def test_soft_margin_matches_program():
    X, y = cm.datasets.twonorm(100, dim=4, random_state=2)
    est = M4Classifier(C=0.02, ridge=0.0).fit(X, y)
    prog = m4.m4(X, y, C=0.02)
    model = prog.decode(cm.solve(prog, "envelope-newton"))
    assert est.solution_.solver == "envelope-newton"
    assert est.rho_ == pytest.approx(model["rho"], rel=1e-9)
    np.testing.assert_allclose(est.coef_[0], model["w"], atol=1e-9)


def test_reduction_one_is_mpm_classifier():
    mpm_est = pytest.importorskip("conicml.estimators").MPMClassifier
    X, y = cm.datasets.twonorm(100, dim=4, random_state=1)
    est = M4Classifier(C=1.0, reduction=1.0, ridge=0.0).fit(X, y)
    ref = mpm_est(ridge=0.0).fit(X, y)
    np.testing.assert_allclose(est.coef_[0], ref.coef_[0], atol=1e-4)
    assert est.intercept_[0] == pytest.approx(ref.intercept_[0], abs=1e-4)
    assert (est.predict(X) == ref.predict(X)).mean() == 1.0


def test_rbf_and_precomputed():
    X, y = cm.datasets.twonorm(40, dim=3, random_state=4)
    opts = {"tol": 1e-5}
    est = M4Classifier(C=0.05, kernel="rbf", gamma=0.3, inner="ecos",
                       solver_options=opts).fit(X, y)
    assert est.dual_coef_.shape == (1, 40)
    assert est.score(X, y) > 0.9
    K = np.exp(-0.3 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    pre = M4Classifier(C=0.05, kernel="precomputed", inner="ecos",
                       solver_options=opts).fit(K, y)
    np.testing.assert_allclose(pre.decision_function(K), est.decision_function(X), atol=1e-5)


def test_bad_solver_for_kind():
    # solve() reports it (estimators do not re-check the registry)
    with pytest.raises(cm.SolverError, match="'bisection' does not accept .*'sequential.m4'"):
        M4Classifier(C=1.0, solver="bisection").fit(T2_X, T2_LABELS)
