"""Baseline selectors of seed 001 ch. 3 (CFS, alpha-investing, RFE-SVM) against independent
computations: CFS's best-first search against an exhaustive search of the merit (2.9),
the streamwise t-test p-values against scipy's regression, RFE-SVM's elimination against
one done by hand with the same SVM."""

import itertools

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_iris
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from conicml._utils import similarity as sim
from conicml.estimators import (
    AlphaInvestingSelector,
    CFSSelector,
    RFESVMSelector,
    SVMClassifier,
)
from conicml.estimators.selection_baselines import cfs_merit


@parametrize_with_checks([CFSSelector(),
                          RFESVMSelector(estimator=LinearSVC(dual=True, max_iter=20_000,
                                                              random_state=0))])
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    # features 0-2 informative, 3 a near copy of 0 (redundant), 4-9 noise
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    informative = y[:, None] + 0.8 * rng.normal(size=(n, 3))
    X = np.column_stack([informative, informative[:, 0] + 0.05 * rng.normal(size=n),
                         rng.normal(size=(n, 6))])
    return X, y


def test_cfs_merit_closed_form():
    # (2.9): two features of relevance 0.5 and mutual correlation 0.2:
    # 2 * 0.5 / sqrt(2 + 2 * 0.2) = 1 / sqrt(2.4)
    rel = np.array([0.5, 0.5, 0.1])
    red = np.array([[1.0, 0.2, 0.0], [0.2, 1.0, 0.3], [0.0, 0.3, 1.0]])
    assert cfs_merit(rel, red, [0, 1]) == pytest.approx(1 / np.sqrt(2.4))
    assert cfs_merit(rel, red, [0]) == pytest.approx(0.5)
    assert cfs_merit(rel, red, []) == 0.0


def test_cfs_best_first_finds_the_exhaustive_optimum(data):
    X, y = data
    X = X[:, :7]  # 127 subsets: exhaustive search is the independent reference
    rel = sim.correlation_relevance(X, y)
    red = sim.correlation_rows(X)
    best = max((cfs_merit(rel, red, s), s) for k in range(1, 8)
               for s in itertools.combinations(range(7), k))
    sel = CFSSelector(max_backtracks=50).fit(X, y)
    assert set(sel.get_support(indices=True)) == set(best[1])
    assert sel.n_features_to_select_ == len(best[1])
    # the redundant copy of feature 0 is not kept beside it
    assert not {0, 3} <= set(sel.get_support(indices=True))


def test_cfs_fixed_size_and_ranking_is_a_permutation(data):
    X, y = data
    sel = CFSSelector(n_features_to_select=5).fit(X, y)
    assert sel.transform(X).shape == (X.shape[0], 5)
    assert sorted(sel.ranking_) == list(range(1, X.shape[1] + 1))


def test_alpha_investing_p_values_are_the_regression_t_tests(data):
    X, y = data
    sel = AlphaInvestingSelector().fit(X, y)
    t = np.where(y == 1, 1.0, -1.0)
    # the first feature is tested against the intercept-only model: simple regression
    assert sel.pvalues_[0] == pytest.approx(stats.linregress(X[:, 0], t).pvalue, rel=1e-8)
    # a later feature: the t-test of its coefficient in the least-squares fit on the
    # intercept, the features accepted before it and itself (computed here with lstsq)
    j = 5
    prior = [a for a in sel.accepted_ if a < j]
    A = np.column_stack([np.ones(len(t)), X[:, prior], X[:, j]])
    coef, *_ = np.linalg.lstsq(A, t, rcond=None)
    resid = t - A @ coef
    dof = len(t) - A.shape[1]
    cov = resid @ resid / dof * np.linalg.inv(A.T @ A)
    p = 2 * stats.t.sf(abs(coef[-1] / np.sqrt(cov[-1, -1])), dof)
    assert sel.pvalues_[j] == pytest.approx(p, rel=1e-6)


def test_alpha_investing_accepts_the_informative_features():
    rng = np.random.default_rng(1)
    n = 400
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, 60))
    X[:, [7, 20, 41]] += y[:, None]  # informative features arrive late in the stream
    sel = AlphaInvestingSelector().fit(X, y)
    assert {7, 20, 41} <= set(sel.accepted_)
    assert len(sel.accepted_) <= 8  # few of the 57 noise features
    assert set(sel.get_support(indices=True)) == set(sel.accepted_)


def test_alpha_investing_refuses_multiclass():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="binary"):
        AlphaInvestingSelector().fit(X, y)


def test_rfe_svm_eliminates_the_smallest_squared_weight_first(data):
    X, y = data
    X = X[:, [0, 1, 4, 5]]
    sel = RFESVMSelector(n_features_to_select=2).fit(X, y)
    # by hand: retrain the same SVM, drop the smallest w_j^2, until one feature is left
    left, eliminated = [0, 1, 2, 3], []
    while len(left) > 1:
        w = SVMClassifier(C=1.0).fit(X[:, left], y).coef_.ravel()
        eliminated.append(left.pop(int(np.argmin(w**2))))
    expected_order = [*left, *eliminated[::-1]]
    assert list(sel.order_) == expected_order
    assert set(sel.get_support(indices=True)) == {0, 1}  # the informative pair


# iris versicolor-vs-rest is not linearly separable in any direction: that binary SVM
# learns w = 0 and says so (a ConvergenceWarning); the other two carry the ranking
@pytest.mark.filterwarnings("ignore:SVMClassifier learnt a constant score")
def test_rfe_svm_multiclass_and_halving_in_a_pipeline():
    X, y = load_iris(return_X_y=True)
    sel = RFESVMSelector(n_features_to_select=2, step=0.5)
    model = make_pipeline(sel, LinearSVC(dual=True)).fit(X, y)
    assert model[0].transform(X).shape == (150, 2)
    assert set(model[0].get_support(indices=True)) <= {0, 1, 2, 3}
    assert model.score(X, y) > 0.9
