"""``SVOrdinalRegressor``: the scikit-learn contract and agreement with the programs."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import SVOrdinalRegressor
from conicml.formulations.svor_implicit import svorim

EXPECTED_FAILED_CHECKS = {
    "check_classifiers_train": (
        "the check fits 3 make_blobs clusters whose labels are not ordered along any "
        "direction; one linear latent score with ordered thresholds cannot separate them (an "
        "ordinal model, by design; the rbf estimators pass it)"
    ),
}


@parametrize_with_checks(
    [SVOrdinalRegressor(), SVOrdinalRegressor(variant="implicit"),
     SVOrdinalRegressor(kernel="linear")],
    expected_failed_checks=lambda est: (EXPECTED_FAILED_CHECKS if est.kernel == "linear"
                                        else {}),
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def ordinal_data(seed, m=200, dim=3, r=4, sep=2.0, labels=None):
    rng = np.random.default_rng(seed)
    ranks = rng.integers(1, r + 1, m)
    u = rng.normal(size=dim)
    X = rng.normal(size=(m, dim)) + sep * np.outer(ranks - (r + 1) / 2, u / np.linalg.norm(u))
    y = ranks if labels is None else np.asarray(labels)[ranks - 1]
    return X, y


@pytest.mark.parametrize("variant", ["explicit", "implicit"])
def test_linear_fit_attributes_and_prediction_rule(variant):
    X, y = ordinal_data(0, labels=["bad", "fair", "good", "great"])
    est = SVOrdinalRegressor(C=1.0, kernel="linear", variant=variant).fit(X, y)
    assert list(est.classes_) == ["bad", "fair", "good", "great"]
    assert est.coef_.shape == (3,)  # like scikit-learn's linear regressors
    assert est.thresholds_.shape == (3,) and np.all(np.diff(est.thresholds_) >= 0)
    assert_allclose(est.intercept_, -est.thresholds_)
    assert est.solution_.status is cm.Status.OPTIMAL and est.n_iter_ > 0
    assert est.model_["thresholds"] is not None  # program_.decode(solution_)
    kind = "qp.chance.svor.dual" if variant == "explicit" else "qp.chance.svor.implicit.dual"
    assert est.program_.kind == kind
    # w = sum_k dual_coef_k x_k (stationarity in w)
    assert_allclose(est.coef_, est.support_vectors_.T @ est.dual_coef_, atol=1e-10)
    g = est.latent_score(X)
    assert_allclose(g, X @ est.coef_)
    assert np.array_equal(est.predict(X), est.classes_[(g[:, None] > est.thresholds_).sum(1)])
    assert est.score(X, y) > 0.7  # well separated ranks; score = 1 - MZE


def test_implicit_estimator_matches_the_primal_on_clarabel():
    """solver='smo-or' (dual) vs the implicit primal program on clarabel (independent)."""
    X, y = ordinal_data(1, m=150, r=3)
    est = SVOrdinalRegressor(C=2.0, kernel="rbf", gamma=0.3, variant="implicit",
                             solver_options={"tol": 1e-7}).fit(X, y)
    primal = svorim(X, y, C=2.0, kernel="rbf", gamma=0.3)
    ref = cm.solve(primal, "clarabel")
    model = primal.decode(ref)
    assert_allclose(est.solution_.objective, ref.objective, rtol=1e-6)
    assert_allclose(est.latent_score(X), model["scores"], atol=1e-4)
    assert_allclose(est.thresholds_, model["thresholds"], atol=1e-4)


@pytest.mark.parametrize("variant", ["explicit", "implicit"])
def test_generic_solver_gives_the_same_model(variant):
    X, y = ordinal_data(2, m=100, r=4)
    a = SVOrdinalRegressor(C=1.0, variant=variant, gamma=0.5,
                           solver_options={"tol": 1e-7}).fit(X, y)
    b = SVOrdinalRegressor(C=1.0, variant=variant, gamma=0.5, solver="clarabel").fit(X, y)
    assert_allclose(a.solution_.objective, b.solution_.objective, rtol=1e-6)
    Xt, _ = ordinal_data(3, m=100, r=4)
    assert_allclose(a.latent_score(Xt), b.latent_score(Xt), atol=1e-3)
    assert np.mean(a.predict(Xt) == b.predict(Xt)) > 0.97


def test_bad_input():
    X, y = ordinal_data(4, m=40)
    with pytest.raises(ValueError, match="C"):
        SVOrdinalRegressor(C=0.0).fit(X, y)
    with pytest.raises(ValueError, match="variant"):
        SVOrdinalRegressor(variant="both").fit(X, y)
    with pytest.raises(ValueError, match="two ordered classes"):
        SVOrdinalRegressor().fit(X, np.ones(40))
    with pytest.raises(ValueError):
        SVOrdinalRegressor().fit(np.where(np.eye(40, 3) > 0, np.nan, X), y)
    with pytest.raises(ValueError, match="solver"):
        SVOrdinalRegressor(solver="no-such-solver").fit(X, y)


def test_user_limit_keeps_the_point_with_a_warning():
    from sklearn.exceptions import ConvergenceWarning
    X, y = ordinal_data(5, m=80)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est = SVOrdinalRegressor(solver_options={"max_iter": 2}).fit(X, y)
    assert est.solution_.status is cm.Status.USER_LIMIT
    assert est.predict(X).shape == (80,)
