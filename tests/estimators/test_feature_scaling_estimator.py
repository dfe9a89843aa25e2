"""FeatureScalingSVC: scikit-learn contract (classifier and selector), attributes, errors."""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from conicml.datasets import ndcc_like
from conicml.estimators import FeatureScalingSVC


@parametrize_with_checks([
    FeatureScalingSVC(),
    FeatureScalingSVC(solver="fs-full", max_iter=30),
])
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.mark.slow  # ~70 s: check_classifiers_train runs GMKL's line search three times
@parametrize_with_checks([FeatureScalingSVC(solver="fs-gmkl", max_iter=10)])
def test_sklearn_contract_gmkl(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    X, y = ndcc_like(150, n_informative=4, n_probes=5, random_state=1)
    return X, np.where(y > 0, "yes", "no")  # string classes on purpose


def test_attributes_and_selector(data):
    X, y = data
    est = make_pipeline(StandardScaler(), FeatureScalingSVC(C=1.0, mu=10.0)).fit(X, y)
    fs = est[-1]
    assert fs.z_.shape == (9,) and np.all(fs.z_ >= 0)
    np.testing.assert_array_equal(fs.support_, fs.z_ > 0.01 * fs.z_.max())
    np.testing.assert_array_equal(fs.get_support(), fs.support_)
    assert set(np.flatnonzero(fs.support_)) <= {0, 1, 2, 3}  # probes dropped
    assert fs.ranking_[np.argmax(fs.z_)] == 1
    assert sorted(fs.ranking_) == list(range(1, 10))
    assert fs.dual_coef_.shape == (1, 150) and fs.intercept_.shape == (1,)
    assert fs.label_ in ("minimum", "saddle", "not stationary") and fs.n_iter_ >= 1
    assert (est.predict(X) == y).mean() > 0.8
    # as a selector in front of another classifier
    pipe = make_pipeline(StandardScaler(), FeatureScalingSVC(C=1.0, mu=10.0), SVC()).fit(X, y)
    assert pipe[1].transform(pipe[0].transform(X)).shape == (150, fs.support_.sum())
    assert pipe.score(X, y) > 0.8


def test_inner_solver_is_one_word(data):
    X, y = data
    X = StandardScaler().fit_transform(X)
    a = FeatureScalingSVC(solver="fs-simple-ao", C=1.0, mu=3.0, max_iter=3).fit(X, y)
    b = FeatureScalingSVC(solver="fs-simple-ao", C=1.0, mu=3.0, max_iter=3,
                          inner="clarabel").fit(X, y)
    np.testing.assert_allclose(a.z_, b.z_, atol=1e-3)


def test_method_and_svm_solver_are_the_old_spellings(data):
    # method / svm_solver were renamed solver / inner (docs/glossary.md): the old spellings
    # (method also positionally, with its old values) fit the same model for one release,
    # with a FutureWarning; an old and a new spelling together is a TypeError
    X, y = data
    X = StandardScaler().fit_transform(X)
    kw = {"C": 1.0, "mu": 3.0, "max_iter": 3}
    new = FeatureScalingSVC(solver="fs-simple-ao", inner="clarabel", **kw).fit(X, y)
    with pytest.warns(FutureWarning, match="renamed 'solver'"):
        old = FeatureScalingSVC("simple-ao", inner="clarabel", **kw).fit(X, y)
    np.testing.assert_array_equal(old.z_, new.z_)
    with pytest.warns(FutureWarning, match="renamed 'inner'"):
        old = FeatureScalingSVC(solver="fs-simple-ao", svm_solver="clarabel", **kw).fit(X, y)
    np.testing.assert_array_equal(old.z_, new.z_)
    assert {"method", "svm_solver"} <= set(FeatureScalingSVC().get_params())
    with pytest.raises(TypeError, match="give only 'solver'"):
        FeatureScalingSVC("ao1", solver="fs-simple-ao").fit(X, y)
    with pytest.raises(TypeError, match="give only 'inner'"):
        FeatureScalingSVC(svm_solver="smo", inner="clarabel").fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"mu": -1.0}, "mu"),
        ({"C": 0.0}, "C"),
        ({"C": -2.0}, "C"),
        ({"kernel": "linear"}, "feature-scaled Gaussian kernel"),
        ({"solver": "newton"}, "solver"),
        ({"method": "newton"}, "method"),
        ({"tol": 0.0}, "tol"),
    ],
)
def test_bad_parameters(params, match):
    X = np.random.default_rng(0).standard_normal((20, 3))
    y = np.array([0, 1] * 10)
    with pytest.raises(ValueError, match=match):
        FeatureScalingSVC(**params).fit(X, y)


def test_bad_data():
    X = np.random.default_rng(0).standard_normal((20, 3))
    y = np.array([0, 1] * 10)
    Xn = X.copy()
    Xn[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity|NaN"):
        FeatureScalingSVC().fit(Xn, y)
    with pytest.raises(ValueError, match="one class"):
        FeatureScalingSVC().fit(X, np.zeros(20))
