"""The linear SVM fitted from Dask row blocks is the in-memory one (extra ``distributed``).

References: the same program solved in memory by ``clarabel`` (a generic backend) and by
``dcd`` at tol 1e-8 (the specialized solver); the Dask fit is accepted only through its own
block-wise certificate, checked here against those independent optima by weak duality.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from conicml.estimators.svm import SVMClassifier
from conicml.exceptions import ProgramError
from conicml.solution import Status

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client(inproc_client):
    return inproc_client


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, d = 1_200, 4
    X = rng.normal(size=(n, d)) * [1.0, 2.0, 0.5, 1.0]
    score = X @ np.array([1.0, -0.5, 2.0, 0.0]) + 0.8 + 0.7 * rng.normal(size=n)
    y = np.where(score > 0, 7, 3)  # labels other than +-1: classes_[1] = 7 is positive
    return X, y


def _primal(X, y, w, b, C=1.0):
    s = np.where(y == 7, 1.0, -1.0)
    return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - s * (X @ w + b)).sum()


@pytest.fixture(scope="module")
def optimum(data):
    X, y = data
    ref = {}
    for solver, opts in (("clarabel", None), ("dcd", {"tol": 1e-8})):
        m = SVMClassifier(C=1.0, solver=solver, solver_options=opts).fit(X, y)
        ref[solver] = _primal(X, y, m.coef_[0], m.intercept_[0])
    assert ref["dcd"] == pytest.approx(ref["clarabel"], rel=1e-6)
    return min(ref.values())


def test_dask_fit_is_certified_and_matches_the_in_memory_optimum(client, data, optimum):
    X, y = data
    tol = 1e-2
    Xd, yd = da.from_array(X, chunks=(400, 2)), da.from_array(y, chunks=400)
    m = SVMClassifier(C=1.0, solver="dcd",
                      solver_options={"tol": tol, "max_iter": 400}).fit(Xd, yd)
    assert isinstance(m.coef_, np.ndarray) and m.coef_.shape == (1, 4)
    assert m.classes_.tolist() == [3, 7]
    sol = m.solution_
    assert sol.status is Status.OPTIMAL and sol.residuals.gap <= tol
    assert sol.extras["blocks"] == 3
    # the reported primal value is the returned (w, b)'s, recomputed here in memory
    P = _primal(X, y, m.coef_[0], m.intercept_[0])
    assert P == pytest.approx(sol.extras["primal_objective"], rel=1e-9)
    # weak duality: D <= optimum <= P, and the certified gap bounds P's excess
    assert sol.extras["dual_objective"] <= optimum * (1 + 1e-9)
    assert optimum <= P * (1 + 1e-9)
    assert P - optimum <= tol * P
    ref = SVMClassifier(C=1.0, solver="clarabel").fit(X, y)
    assert abs(m.score(X, y) - ref.score(X, y)) <= 0.01


def test_predict_on_dask_returns_dask(client, data):
    X, y = data
    Xd = da.from_array(X, chunks=(300, 4))
    m = SVMClassifier(C=1.0, solver="dcd", solver_options={"tol": 5e-2}).fit(
        Xd, da.from_array(y, chunks=300))
    pred = m.predict(Xd)
    dec = m.decision_function(Xd)
    assert isinstance(pred, da.Array) and isinstance(dec, da.Array)
    np.testing.assert_array_equal(pred.compute(), m.predict(X))
    np.testing.assert_allclose(dec.compute(), m.decision_function(X), rtol=1e-12, atol=1e-12)
    # an in-memory fit predicts on Dask input too
    ref = SVMClassifier(C=1.0, solver="dcd").fit(X, y)
    np.testing.assert_array_equal(ref.predict(Xd).compute(), ref.predict(X))
    # refitting the same estimator on Dask replaces the in-memory model entirely
    ref.set_params(solver_options={"tol": 5e-2}).fit(Xd, da.from_array(y, chunks=300))
    assert not hasattr(ref, "support_vectors_")
    np.testing.assert_allclose(ref.decision_function(X),
                               X @ ref.coef_[0] + ref.intercept_[0], rtol=1e-12)


def test_round_limit_is_reported_not_certified(client, data):
    X, y = data
    m = SVMClassifier(C=1.0, solver="dcd", solver_options={"tol": 1e-9, "max_iter": 2})
    with pytest.warns(ConvergenceWarning, match="relative gap"):
        m.fit(da.from_array(X, chunks=400), da.from_array(y, chunks=400))
    assert m.solution_.status is Status.USER_LIMIT
    assert m.solution_.residuals.gap > 1e-9


def test_rounds_run_on_the_shared_driver(client, data):
    # the callback sees every round's certified gap and best point and can stop the
    # rounds; a time limit stops them too: both are limits, not convergence
    X, y = data
    Xd, yd = da.from_array(X, chunks=400), da.from_array(y, chunks=400)
    seen = []

    def stop_after_two(result):
        seen.append((result.iteration, result.residual, set(result.values)))
        if result.iteration == 2:
            raise StopIteration

    m = SVMClassifier(C=1.0, solver="dcd", solver_options={
        "tol": 1e-12, "local_epochs": 2, "callback": stop_after_two})
    with pytest.warns(ConvergenceWarning, match="callback"):
        m.fit(Xd, yd)
    assert [k for k, _, _ in seen] == [1, 2] and seen[0][2] == {"w", "b"}
    assert m.solution_.status is Status.USER_LIMIT and m.solution_.iterations == 2
    # the gap of the returned point is the last certificate's (one more pass certifies the
    # last round's local steps), never above the callback's
    assert m.solution_.residuals.gap <= seen[-1][1]
    m = SVMClassifier(C=1.0, solver="dcd", solver_options={"tol": 1e-12,
                                                           "time_limit": 1e-3})
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        m.fit(Xd, yd)
    assert m.solution_.status is Status.USER_LIMIT and m.solution_.iterations >= 1


def test_bad_dask_input_is_refused(client, data):
    X, y = data
    Xd, yd = da.from_array(X, chunks=400), da.from_array(y, chunks=400)
    with pytest.raises(ProgramError, match="solver='dcd'"):
        SVMClassifier(kernel="rbf", solver="dcd").fit(Xd, yd)
    Xn = X.copy()
    Xn[5, 1] = np.nan
    with pytest.raises(ProgramError, match="NaN"):
        SVMClassifier(solver="dcd").fit(da.from_array(Xn, chunks=400), yd)
    with pytest.raises(ProgramError, match="two classes"):
        SVMClassifier(solver="dcd").fit(Xd, da.from_array(np.full(len(y), 3), chunks=400))
    with pytest.raises(ProgramError, match="shape mismatch"):
        SVMClassifier(solver="dcd").fit(Xd, da.from_array(y[:-1], chunks=400))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SVMClassifier(solver="dcd", class_weight="balanced",
                      solver_options={"tol": 5e-2}).fit(Xd, yd)


def test_local_steps_numpy_and_numba_agree():
    # the same SplitMix64 shuffles through both loops: the same multipliers and direction
    pytest.importorskip("numba")
    from conicml.estimators import _dask_linear as dl

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = np.where(rng.random(200) < 0.4, 1, -1).astype(np.int8)
    c = np.where(y > 0, 2.0, 1.0)
    w = rng.normal(size=3)
    f_np, f_nb = np.zeros(200, np.float32), np.zeros(200, np.float32)
    # 40 passes: two calls of each kernel, the second resuming the first's state
    r_np = dl.local_ascent(X, y, 2.0, 1.0, f_np, w.copy(), 0.3, 1.0, 0.5, 3.0, 40, 1e-3, 7,
                           "numpy")
    r_nb = dl.local_ascent(X, y, 2.0, 1.0, f_nb, w.copy(), 0.3, 1.0, 0.5, 3.0, 40, 1e-3, 7,
                           "numba")
    assert r_np["passes"] == r_nb["passes"] and r_np["visits"] == r_nb["visits"] > 0
    np.testing.assert_allclose(f_nb, f_np, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(r_nb["dw"], r_np["dw"], rtol=1e-9, atol=1e-10)
    assert r_nb["dsy"] == pytest.approx(r_np["dsy"], rel=1e-9, abs=1e-10)
    # the steps are taken to the stored float32 values: the direction is exactly that of
    # the stored multipliers (alpha = c * frac), up to float64 round-off
    alpha = c * f_np.astype(np.float64)
    assert np.all((alpha >= 0) & (alpha <= c)) and np.any(alpha > 0) and np.any(alpha == c)
    np.testing.assert_allclose(r_np["dw"], X.T @ (alpha * y), rtol=1e-10, atol=1e-12)
    assert r_np["dsy"] == pytest.approx(float(y @ alpha), abs=1e-10)
    assert r_np["dpos"] == pytest.approx(alpha[y > 0].sum(), abs=1e-10)
    assert r_np["dneg"] == pytest.approx(alpha[y < 0].sum(), abs=1e-10)


def test_local_steps_solve_the_block_subproblem():
    # with shrinking and early stop the local loop still reaches the
    # subproblem's optimum: its KKT conditions (projected gradients ~ 0) checked here
    # from the returned (stored float32) multipliers
    from conicml.estimators import _dask_linear as dl

    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=150) > 0, 1, -1).astype(np.int8)
    c = np.ones(150)
    w, lin, rho, sy, sigma = np.zeros(3), 0.1, 1.0, 0.0, 2.0
    f = np.zeros(150, np.float32)
    r = dl.local_ascent(X, y, 1.0, 1.0, f, w.copy(), lin, rho, sy, sigma, 5000, 1e-5, 3,
                        "numpy")
    assert r["passes"] < 5000  # stopped by the spread test, not the pass cap
    a = c * f.astype(np.float64)
    G = y * (X @ (w + sigma * r["dw"]) + lin + rho * (sy + sigma * r["dsy"])) - 1.0
    pg = np.where(a <= 0, np.minimum(G, 0), np.where(a >= c, np.maximum(G, 0), G))
    assert np.max(pg) - np.min(pg) <= 1e-5


def test_shrinking_keeps_the_same_share_of_rows_active_whatever_the_block_size():
    # the shrinking thresholds are capped by the root mean square of a pass's projected
    # gradients (an average over the rows), so the row visits per row of a local solve
    # do not grow with the block's rows; LIBLINEAR's extremes (spread = inf) measured
    # 30.1 -> 35.6 visits per row from 4 000 to 32 000 rows of this problem
    pytest.importorskip("numba")
    from conicml.estimators import _dask_linear as dl

    per_row = []
    for n in (4_000, 32_000):
        rng = np.random.default_rng(5)
        X = rng.normal(size=(n, 5))
        score = X @ np.array([1.0, -1.0, 0.5, 0.0, 2.0]) + rng.normal(size=n)
        y = np.where(score > 0, 1, -1).astype(np.int8)
        f = np.zeros(n, np.float32)
        r = dl.local_ascent(X, y, 1.0, 1.0, f, np.zeros(5), 0.0, 1.0, 0.0, 2.0, 100, 1e-3,
                            3, "numba")
        assert r["passes"] == 100  # the pass cap: the same work budget at both sizes
        per_row.append(r["visits"] / n)
    assert per_row[1] == pytest.approx(per_row[0], rel=0.1)


def test_block_state_is_float32_fractions():
    # the multipliers kept on the workers between rounds: 4 bytes per row and point,
    # exactly 0 or 1 at the bounds
    from conicml.estimators import _dask_linear as dl

    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=500) > 0, 5, 2)
    state, out = dl._block_round(
        X, y, None, 0.0, 5, 2.0, 1.0, np.zeros(3), np.zeros(2), 0.0, 1.0, 0.0, 1.0, 50,
        1e-3, 0, "numpy")
    a0, a1 = state
    assert a0.dtype == a1.dtype == np.float32 and not a0.any()
    assert np.all((a1 >= 0) & (a1 <= 1)) and np.any(a1 == 1.0)
    s = np.where(y == 5, 1.0, -1.0)
    np.testing.assert_allclose(out["dw"], X.T @ (a1 * np.where(s > 0, 2.0, 1.0) * s),
                               rtol=1e-10, atol=1e-12)


def test_certificate_dual_is_that_of_the_stored_point():
    # the dual bound the client forms from a block's class sums is the dual value of the
    # stored multipliers (float32 fractions times the costs, in float64) made feasible by
    # scaling the heavier class, recomputed here in memory from the closed form
    # D(s a) = s 1'a - s^2/2 |X'(a y)|^2 at the best s in [0, 1]
    from conicml.estimators import _dask_linear as dl

    rng = np.random.default_rng(4)
    n, d = 70_000, 5  # more than one chunk of the certificate's sums
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.3, 1, -1).astype(np.int8)
    f = rng.random(n).astype(np.float32)
    f[rng.random(n) < 0.4] = 0.0
    f[rng.random(n) < 0.2] = 1.0
    out = dl._certificate_terms(X, y, 2.0, 0.5, f, rng.normal(size=d), np.zeros(3))
    D = dl.feasible_dual(out["mass"][:1], out["vec"][:1])
    a = np.where(y > 0, 2.0, 0.5) * f.astype(np.float64)
    m_pos, m_neg = a[y > 0].sum(), a[y < 0].sum()
    a = a * np.where(y > 0, min(1.0, m_neg / m_pos), min(1.0, m_pos / m_neg))
    assert float(y @ a) == pytest.approx(0.0, abs=1e-9 * a.sum())
    S, q = a.sum(), float(np.sum((X.T @ (a * y)) ** 2))
    s = min(1.0, S / q)
    assert D == pytest.approx(s * S - 0.5 * s * s * q, rel=1e-12)
