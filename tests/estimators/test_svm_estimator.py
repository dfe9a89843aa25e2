"""SVMClassifier: scikit-learn contract, attributes, errors."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import SVMClassifier
from conicml.exceptions import NotFittedStatusError


@parametrize_with_checks([
    SVMClassifier(),
    SVMClassifier(kernel="rbf", form="primal", solver="ecos"),
    SVMClassifier(kernel="rbf", solver="smo"),
])
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    X, y = cm.datasets.load("breast_cancer")
    X = (X - X.mean(0)) / X.std(0)
    labels = np.where(y > 0, "malignant", "benign")  # string classes on purpose
    return X, labels


def test_fitted_attributes_match_svc(data):
    X, labels = data
    est = SVMClassifier(C=1.0, kernel="linear", solver="smo",
                        solver_options={"tol": 1e-8}).fit(X, labels)
    ref = SVC(C=1.0, kernel="linear", tol=1e-8).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, ref.classes_)
    assert est.coef_.shape == (1, X.shape[1]) and est.intercept_.shape == (1,)
    # LIBSVM at tol 1e-8 vs our SMO at tol 1e-8: same problem, two implementations
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=1e-5)
    assert (est.predict(X) == ref.predict(X)).mean() == 1.0
    assert isinstance(est.program_, cm.Program) and est.solution_.ok
    assert est.n_iter_ == est.solution_.iterations
    assert est.dual_coef_.shape == (1, est.support_.size)


@pytest.mark.parametrize("solver", ["clarabel", "ecos", "scs", "osqp", "smo"])
def test_swapping_the_solver_is_one_word(solver, data):
    X, labels = data
    est = SVMClassifier(C=1.0, kernel="rbf", solver=solver).fit(X, labels)
    ref = SVC(C=1.0, kernel="rbf").fit(X, labels)
    assert (est.predict(X) == ref.predict(X)).mean() > 0.99


def test_hard_margin_on_non_separable_data_says_use_soft_margin():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, 0, 1])
    for form in ("primal", "dual"):
        with pytest.raises(NotFittedStatusError, match="not linearly separable: use soft margin"):
            SVMClassifier(C=None, form=form).fit(X, y)


def test_hard_margin_separable():
    X = np.array([[2.0, 1.0], [2.0, 3.0], [0.0, 2.0], [-2.0, 0.0]])
    y = np.array([1, 1, 0, 0])
    est = SVMClassifier(C=None).fit(X, y)
    # closed form (see test_svm.py): w = (1, 0), b = -1
    np.testing.assert_allclose(est.coef_[0], [1.0, 0.0], atol=1e-5)
    np.testing.assert_allclose(est.intercept_, [-1.0], atol=1e-5)


def test_bad_parameters():
    X = np.random.default_rng(0).standard_normal((10, 2))
    y = np.array([0, 1] * 5)
    SVMClassifier(form="dual", solver="smo").fit(X, y)
    with pytest.raises(cm.SolverError, match="'smo' does not accept .*'qp.svm.primal'"):
        SVMClassifier(form="primal", solver="smo").fit(X, y)
    with pytest.raises(ValueError, match="C"):
        SVMClassifier(C=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="Only binary"):
        SVMClassifier().fit(np.vstack([X, X[:3]]), np.r_[y, [2, 2, 2]])
    with pytest.raises(ValueError, match="class_weight has labels"):
        SVMClassifier(class_weight={5: 1.0}).fit(X, y)


def test_pickle_roundtrip(data):
    X, labels = data
    est = SVMClassifier(kernel="rbf").fit(X[:100], labels[:100])
    est2 = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est2.decision_function(X), est.decision_function(X))


def _minority_inside_majority():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0.3, 1.0, (20, 3)), rng.normal(0.0, 1.0, (600, 3))]
    return X, np.r_[np.ones(20), -np.ones(600)]


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_constant_score_warns_and_names_the_remedy(C):
    # 20 positives whose mean lies inside the 600 negatives' reduced hull: w = 0 is the
    # exact optimum of the unweighted soft margin for every C (LIBSVM, an independent
    # solver, finds it too); the fit says so instead of returning a silent constant
    X, y = _minority_inside_majority()
    with pytest.warns(ConvergenceWarning, match="constant score.*class_weight='balanced'"):
        est = SVMClassifier(C=C).fit(X, y)
    assert np.abs(est.coef_).max() < 1e-6
    assert np.abs(SVC(kernel="linear", C=C).fit(X, y).coef_).max() < 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        balanced = SVMClassifier(C=C, class_weight="balanced").fit(X, y)
    assert roc_auc_score(y, balanced.decision_function(X)) > 0.65
