"""LSVRRegressor: scikit-learn contract and agreement with the formulation."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import LSVRRegressor
from conicml.formulations import lsvr


def _data(n=41, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X @ np.array([1.5, -0.5]) + 0.2 + 0.3 * rng.normal(size=n)
    return X, y


# No expected failures: the linear default and an RBF / nearest-neighbour variant pass
# every regressor check of scikit-learn 1.9 (pandas-based checks skip without pandas).
@parametrize_with_checks(
    [LSVRRegressor(), LSVRRegressor(kernel="rbf", neighborhood="nearest", epsilon=0.5)],
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_matches_the_formulation():
    X, y = _data()
    est = LSVRRegressor(epsilon=0.3, C=0.05, k=2).fit(X, y)
    prog = lsvr.lsvr(X, y, 0.3, 0.05, 2)
    model = prog.decode(cm.solve(prog, "clarabel"))
    np.testing.assert_allclose(est.coef_, model["w"], atol=1e-10)
    np.testing.assert_allclose(est.intercept_, [model["b"]], atol=1e-10)
    np.testing.assert_allclose(est.predict(X), model["fitted"], atol=1e-10)
    np.testing.assert_allclose(est.tube_, 0.3 * model["t"], atol=1e-12)
    assert est.program_.kind == "socp.lsvr"
    assert est.solution_.ok and est.n_iter_ == est.solution_.iterations > 0


@pytest.mark.parametrize("solver", cm.solvers.available("socp.lsvr"))
def test_every_registered_solver_fits(solver):
    X, y = _data()
    ref = LSVRRegressor(epsilon=0.3, C=0.05).fit(X, y)
    est = LSVRRegressor(epsilon=0.3, C=0.05, solver=solver).fit(X, y)
    atol = 2e-2 if solver == "scs" else 1e-4  # tests/tolerances.py SOL_ATOL rows
    np.testing.assert_allclose(est.predict(X), ref.predict(X), atol=atol)


def test_kernel_model_predicts_its_training_fit():
    X, y = _data()
    est = LSVRRegressor(epsilon=0.5, C=1.0, kernel="rbf", gamma=0.5, factor_rtol=1e-6)
    est.fit(X, y)
    model = est.program_.decode(est.solution_)
    np.testing.assert_allclose(est.predict(X), model["fitted"], atol=1e-6)
    assert est.dual_coef_.shape == (X.shape[0],)
    assert not hasattr(est, "coef_")
    # the same model from the precomputed Gram matrix
    K = est.program_.data["kernel"].gram(X)
    pre = LSVRRegressor(epsilon=0.5, C=1.0, kernel="precomputed", factor_rtol=1e-6).fit(K, y)
    np.testing.assert_allclose(pre.predict(K), est.predict(X), atol=1e-5)


def test_index_windows_follow_row_order_nearest_windows_do_not():
    # documented behaviour: neighborhood="index" uses the order of the training rows
    X, y = _data()
    perm = np.random.default_rng(1).permutation(X.shape[0])
    a = LSVRRegressor(epsilon=0.3, C=0.05).fit(X, y)
    b = LSVRRegressor(epsilon=0.3, C=0.05).fit(X[perm], y[perm])
    assert np.max(np.abs(a.coef_ - b.coef_)) > 1e-3
    c = LSVRRegressor(epsilon=0.3, C=0.05, neighborhood="nearest").fit(X, y)
    d = LSVRRegressor(epsilon=0.3, C=0.05, neighborhood="nearest").fit(X[perm], y[perm])
    np.testing.assert_allclose(c.coef_, d.coef_, atol=1e-6)


def test_bad_settings_raise_clear_errors():
    X, y = _data(n=6)
    with pytest.raises(ValueError, match="n_samples=6"):
        LSVRRegressor(k=3).fit(X, y)
    with pytest.raises(cm.SolverError, match="does not accept programs of kind 'socp.lsvr'"):
        LSVRRegressor(solver="osqp").fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        LSVRRegressor(epsilon=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="'k' parameter"):
        LSVRRegressor(k=0).fit(X, y)


def test_clone_keeps_parameters():
    est = LSVRRegressor(epsilon=0.2, C=3.0, k=1, kernel="rbf", gamma=2.0,
                        solver="ecos", solver_options={"eps_abs": 1e-9})
    assert clone(est).get_params() == est.get_params()
