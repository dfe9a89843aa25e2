"""pandas in and out: every estimator keeps the column names it was fitted on, and the
selectors return DataFrames under ``set_output(transform="pandas")`` as scikit-learn's
selectors do."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import conicml as cm
from conicml import estimators

pd = pytest.importorskip("pandas")

ESTIMATORS = [name for name in estimators.__all__ if isinstance(getattr(estimators, name), type)]
SELECTORS = ["QPFSSelector", "MRMRSelector", "MaxRelSelector", "ReliefFSelector",
             "FeatureScalingSVC"]
COLUMNS = ["alpha", "beta", "gamma", "delta", "epsilon"]


def _frame():
    X, y = make_classification(60, 5, n_informative=3, n_redundant=0, random_state=0)
    return pd.DataFrame(X, columns=COLUMNS), y


def _target(name, X, y):
    if name == "LSVRRegressor":
        return X.to_numpy() @ np.array([1.0, -0.5, 0.2, 0.0, 0.0])
    if "Ordinal" in name:  # three ordered levels of the first feature
        return np.digitize(X["alpha"].to_numpy(), [-0.5, 0.5])
    return y


def test_every_public_estimator_is_covered():
    assert set(SELECTORS) <= set(ESTIMATORS)
    assert len(ESTIMATORS) >= 20


@pytest.mark.parametrize("name", ESTIMATORS)
def test_feature_names_in_from_a_dataframe(name):
    X, y = _frame()
    est = getattr(estimators, name)()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of default fits: not the point
        est.fit(X, _target(name, X, y))
    np.testing.assert_array_equal(est.feature_names_in_, COLUMNS)
    assert est.n_features_in_ == 5
    method = next(m for m in ("predict", "transform") if hasattr(est, m))
    renamed = X.rename(columns={"alpha": "other"})
    # scikit-learn's check: columns that differ from the fitted ones are an error
    with pytest.raises(ValueError, match="feature names"):
        getattr(est, method)(renamed)


@pytest.mark.parametrize("name", SELECTORS)
def test_selectors_speak_pandas(name):
    X, y = _frame()
    est = getattr(estimators, name)(**({} if name == "FeatureScalingSVC"
                                       else {"n_features_to_select": 2}))
    est.set_output(transform="pandas")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = est.fit(X, y).transform(X)
    kept = list(np.asarray(COLUMNS)[est.get_support()])
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == kept and list(est.get_feature_names_out()) == kept
    np.testing.assert_array_equal(out.to_numpy(), X[kept].to_numpy())
    assert out.index.equals(X.index)
    # without input names: scikit-learn's x0, x1, ... convention
    plain = clone(est).set_output(transform="default")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain.fit(X.to_numpy(), y)
    assert list(plain.get_feature_names_out()) == [
        f"x{i}" for i in np.flatnonzero(plain.get_support())]


def test_selector_in_a_pandas_pipeline_keeps_names():
    X, y = _frame()
    pipe = make_pipeline(StandardScaler(), estimators.MaxRelSelector(n_features_to_select=3))
    pipe.set_output(transform="pandas")
    out = pipe.fit(X, y).transform(X)
    assert list(out.columns) == list(pipe.get_feature_names_out())
    assert set(out.columns) <= set(COLUMNS) and out.shape == (60, 3)


def test_fit_from_moments_forgets_earlier_column_names():
    # a refit from moments (no columns) must not keep the names of an earlier DataFrame fit
    X, y = _frame()
    ccp = estimators.ChanceConstrainedClassifier(error_pos=0.9, error_neg=0.9).fit(X, y)
    assert hasattr(ccp, "feature_names_in_")
    ccp.fit_moments(cm.ClassMoments.from_data(X.to_numpy(), np.where(y == 1, 1, -1)))
    assert not hasattr(ccp, "feature_names_in_")
    ccp.predict(X.to_numpy())  # plain arrays: no feature-name warning, no error
