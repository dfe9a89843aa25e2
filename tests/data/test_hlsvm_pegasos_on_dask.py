"""H-LSVM and Pegasos fitted from Dask row blocks give the in-memory models (extra
``distributed``).

References: H-LSVM, the same estimator fitted in memory (node solver ``dcd``) on the same
rows (``pruning_fraction=0``: the growing set is every row), whose nodes are certified to the same
tolerance; Pegasos, the optimum of the same program from ``clarabel`` (a generic
backend), against which the block-wise certificate is checked by weak duality.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from conicml.estimators import HLSVMClassifier
from conicml.estimators.svm import SVMClassifier
from conicml.exceptions import OptionError, ProgramError
from conicml.solution import Status

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def stripes():
    # class 2 on x1 in [-6, -2] and [2, 3], class 5 on [-1.5, 1.5]: two splits
    # with wide gaps, so the tree does not depend on the node solver's last digits
    rng = np.random.default_rng(0)
    n = 600
    u = rng.random(n)
    x1 = np.where(u < 0.4, rng.uniform(-6, -2, n),
                  np.where(u < 0.55, rng.uniform(2, 3, n), rng.uniform(-1.5, 1.5, n)))
    X = np.column_stack([x1, rng.normal(size=n)])
    y = np.where(u < 0.55, 2, 5)
    return X, y


def _leaves(m):
    t = m.tree_
    return sorted((int(p), int(q)) for p, q in zip(t.n_pos[t.is_leaf], t.n_neg[t.is_leaf]))


def _same_tree(m, ref, X, atol, moved=0):
    # ``moved``: rows within the node solvers' tolerance of a split may change sides
    assert m.n_hyperplanes_ == ref.n_hyperplanes_ >= 2
    diff = sum(abs(a - c) + abs(b - d) for (a, b), (c, d) in zip(_leaves(m), _leaves(ref)))
    assert diff <= 2 * moved
    assert np.count_nonzero(m.predict(X) != ref.predict(X)) <= moved
    # the hyperplanes in the same order up to the tree's numbering: match by the bias
    a, b = np.argsort(m.intercept_), np.argsort(ref.intercept_)
    np.testing.assert_allclose(m.coef_[a], ref.coef_[b], atol=atol)
    np.testing.assert_allclose(m.intercept_[a], ref.intercept_[b], atol=atol)


def test_hlsvm_on_dask_root_on_the_workers(client, stripes, monkeypatch):
    from conicml.estimators import _dask_hlsvm

    X, y = stripes
    kw = dict(pruning_fraction=0.0, delta=0.05, node_solver="dcd", random_state=0,
              node_solver_options={"tol": 1e-2})
    ref = HLSVMClassifier(**kw).fit(X, y)
    # the root's SVM trained on the workers, the smaller nodes gathered to the client
    monkeypatch.setattr(_dask_hlsvm, "GATHER_MAX_ROWS", 400)
    Xd, yd = da.from_array(X, chunks=(200, 2)), da.from_array(y, chunks=200)
    m = HLSVMClassifier(**kw).fit(Xd, yd)
    assert m.node_solvers_["dcd-dask"] == 1 and m.n_hyperplanes_ >= 2
    assert "user_limit" not in m.node_statuses_
    assert isinstance(m.coef_, np.ndarray) and m.classes_.tolist() == [2, 5]
    assert m.score(X, y) >= 0.99
    # the root (node 0) is certified to tol 1e-2 by another algorithm (CoCoA+ on the
    # blocks against dcd in memory): the same hyperplane within that accuracy; the
    # children, trained on rows that may change sides, are compared at tol 1e-3 (slow)
    np.testing.assert_allclose(m.tree_.weights[0], ref.tree_.weights[0],
                               atol=0.1 * np.abs(ref.tree_.weights[0]).max())
    assert m.tree_.bias[0] == pytest.approx(ref.tree_.bias[0], abs=0.1)


@pytest.mark.slow
def test_hlsvm_on_dask_is_the_in_memory_tree(client, stripes, monkeypatch):
    from conicml.estimators import _dask_hlsvm

    X, y = stripes
    # tol 1e-3: at 1e-2 two certified roots may differ enough to move the rows of a
    # child and with them the child's own split
    kw = dict(pruning_fraction=0.0, delta=0.05, node_solver="dcd", random_state=0,
              node_solver_options={"tol": 1e-3})
    ref = HLSVMClassifier(**kw).fit(X, y)
    monkeypatch.setattr(_dask_hlsvm, "GATHER_MAX_ROWS", 400)
    Xd, yd = da.from_array(X, chunks=(200, 2)), da.from_array(y, chunks=200)
    m = HLSVMClassifier(**kw).fit(Xd, yd)
    assert m.node_solvers_ == {"dcd-dask": 1, "dcd": sum(ref.node_solvers_.values()) - 1}
    assert "user_limit" not in m.node_statuses_
    # rows within the roots' tolerance of the split may change sides, and with them the
    # mean path length by 1/600 per level
    _same_tree(m, ref, X, atol=0.05 * np.abs(ref.coef_).max(), moved=3)
    assert m.mean_hyperplanes_ == pytest.approx(
        ref.mean_hyperplanes_, abs=3 * ref.max_hyperplanes_ / len(X))
    assert m.max_hyperplanes_ == ref.max_hyperplanes_


@pytest.mark.slow
def test_hlsvm_on_dask_every_node_on_the_workers(client, stripes, monkeypatch):
    from conicml.estimators import _dask_hlsvm

    X, y = stripes
    kw = dict(pruning_fraction=0.0, delta=0.05, node_solver="dcd", random_state=0,
              node_solver_options={"tol": 1e-3})
    ref = HLSVMClassifier(**kw).fit(X, y)
    monkeypatch.setattr(_dask_hlsvm, "GATHER_MAX_ROWS", 0)
    m = HLSVMClassifier(**kw).fit(da.from_array(X, chunks=(200, 2)),
                                  da.from_array(y, chunks=200))
    assert m.node_solvers_ == {"dcd-dask": 3} and m.node_statuses_ == {"optimal": 3}
    _same_tree(m, ref, X, atol=0.02 * np.abs(ref.coef_).max(), moved=3)


def test_hlsvm_on_dask_prunes_and_predicts_on_dask(client, stripes):
    X, y = stripes
    Xd, yd = da.from_array(X, chunks=(150, 2)), da.from_array(y, chunks=150)
    m = HLSVMClassifier(pruning_fraction=0.2, delta=0.05, random_state=1).fit(Xd, yd)
    grown = m.tree_.n_pos[0] + m.tree_.n_neg[0]
    assert 0.7 * len(y) < grown < 0.9 * len(y)  # each row held out with probability 0.2
    # the kept subtree is the smallest with the fewest held-out errors
    errors = [e for _, _, e in m.pruning_path_]
    assert len(errors) >= 2
    assert m.n_leaves_ == [k for _, k, e in m.pruning_path_ if e == min(errors)][-1]
    assert m.score(X, y) >= 0.98
    for method, dtype in (("predict", y.dtype), ("decision_function", float),
                          ("apply", np.intp), ("hyperplanes_evaluated", np.intp)):
        out = getattr(m, method)(Xd)
        assert isinstance(out, da.Array)
        np.testing.assert_array_equal(out.compute(), getattr(m, method)(X))
    proba = m.predict_proba(Xd)
    assert isinstance(proba, da.Array) and proba.shape == (len(y), 2)
    np.testing.assert_allclose(proba.compute(), m.predict_proba(X))


def test_hlsvm_on_dask_refuses_bad_input(client, stripes):
    X, y = stripes
    Xd, yd = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
    with pytest.raises(ProgramError, match="node_solver"):
        HLSVMClassifier(node_solver="clarabel").fit(Xd, yd)
    with pytest.raises(OptionError, match="node_solver_options"):
        HLSVMClassifier(node_solver_options={"T": 5}).fit(Xd, yd)
    with pytest.raises(OptionError, match="in place"):  # the streamed mode is dcd's only
        HLSVMClassifier(node_solver_options={"working_rows": 1000}).fit(Xd, yd)
    with pytest.raises(ProgramError, match="two classes"):
        HLSVMClassifier().fit(Xd, da.from_array(np.full(len(y), 2), chunks=200))
    with pytest.raises(ProgramError, match="shape mismatch"):
        HLSVMClassifier().fit(Xd, da.from_array(y[:-1], chunks=200))
    Xn = X.copy()
    Xn[7, 0] = np.nan
    with pytest.raises(ProgramError, match="NaN"):
        HLSVMClassifier().fit(da.from_array(Xn, chunks=200), yd)


@pytest.fixture(scope="module")
def linear():
    rng = np.random.default_rng(0)
    n, d = 1_200, 4
    X = rng.normal(size=(n, d)) * [1.0, 2.0, 0.5, 1.0]
    score = X @ np.array([1.0, -0.5, 2.0, 0.0]) + 0.8 + 0.7 * rng.normal(size=n)
    return X, np.where(score > 0, 7, 3)


def _primal(X, y, w, b, C=1.0):
    s = np.where(y == 7, 1.0, -1.0)
    return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - s * (X @ w + b)).sum()


def test_pegasos_on_dask_is_certified_against_clarabel(client, linear):
    X, y = linear
    ref = SVMClassifier(C=1.0, solver="clarabel").fit(X, y)
    optimum = _primal(X, y, ref.coef_[0], ref.intercept_[0])
    tol = 5e-2
    m = SVMClassifier(C=1.0, solver="pegasos",
                      solver_options={"tol": tol, "max_iter": 150}).fit(
        da.from_array(X, chunks=(400, 2)), da.from_array(y, chunks=400))
    sol = m.solution_
    assert sol.status is Status.OPTIMAL and sol.residuals.gap <= tol
    assert isinstance(m.coef_, np.ndarray) and m.coef_.shape == (1, 4)
    P = _primal(X, y, m.coef_[0], m.intercept_[0])
    assert P == pytest.approx(sol.extras["primal_objective"], rel=1e-9)
    # weak duality against the independent optimum
    assert sol.extras["dual_objective"] <= optimum * (1 + 1e-6) <= P * (1 + 1e-6)
    assert P - optimum <= tol * P
    assert abs(m.score(X, y) - ref.score(X, y)) <= 0.01
    assert isinstance(m.predict(da.from_array(X, chunks=300)), da.Array)


def test_pegasos_on_dask_limits_and_options(client, linear):
    X, y = linear
    Xd, yd = da.from_array(X, chunks=400), da.from_array(y, chunks=400)
    m = SVMClassifier(solver="pegasos", solver_options={"tol": 1e-9, "max_iter": 2})
    with pytest.warns(ConvergenceWarning, match="relative gap"):
        m.fit(Xd, yd)
    assert m.solution_.status is Status.USER_LIMIT and m.solution_.residuals.gap > 1e-9
    # the rounds run on the shared driver: a callback sees each certified gap and stops
    seen = []

    def stop(result):
        seen.append(result.residual)
        if result.iteration == 2:  # the first round certifies the start w = 0
            raise StopIteration

    m = SVMClassifier(solver="pegasos", solver_options={"tol": 1e-9, "callback": stop})
    with pytest.warns(ConvergenceWarning, match="callback"):
        m.fit(Xd, yd)
    assert len(seen) == 2 and m.solution_.iterations == 2
    assert m.solution_.residuals.gap == seen[-1]
    with pytest.raises(OptionError, match="eps"):
        SVMClassifier(solver="pegasos", solver_options={"eps": 1e-3}).fit(Xd, yd)
    with pytest.raises(OptionError, match="batch_size"):
        SVMClassifier(solver="pegasos", solver_options={"batch_size": 0}).fit(Xd, yd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        SVMClassifier(solver="pegasos", class_weight="balanced",
                      solver_options={"max_iter": 3}).fit(Xd, yd)


def test_pegasos_on_dask_step_offset_makes_progress(client, linear):
    # Bottou's offset t0 of eta_t = 1/(lambda (t + t0)), "auto" as the in-memory pegasos:
    # floor(mean ||x||^2 / (lambda k)) with lambda = 1/sum c (closed form, C = 1)
    X, y = linear
    Xd, yd = da.from_array(X, chunks=400), da.from_array(y, chunks=400)
    ref = SVMClassifier(C=1.0, solver="clarabel").fit(X, y)
    optimum = _primal(X, y, ref.coef_[0], ref.intercept_[0])
    fits = {}
    for offset in ("auto", 0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits[offset] = SVMClassifier(C=1.0, solver="pegasos", solver_options={
                "tol": 1e-9, "max_iter": 3, "local_steps": 20, "step_offset": offset,
            }).fit(Xd, yd).solution_
    assert fits["auto"].extras["step_offset"] == np.floor(
        np.mean(np.sum(X**2, axis=1)) * len(y) / 64)
    assert fits[0].extras["step_offset"] == 0
    # both honest: the certified primal values bound the clarabel optimum from above
    P = {k: s.extras["primal_objective"] for k, s in fits.items()}
    assert min(P.values()) >= optimum * (1 - 1e-9)
    # the steps of 1/lambda of Alg. 2 as printed throw w to the ball's rim: the offset
    # schedule is closer to the optimum after the same three rounds
    assert P["auto"] - optimum < 0.5 * (P[0] - optimum)
    with pytest.raises(OptionError, match="step_offset"):
        SVMClassifier(solver="pegasos", solver_options={"step_offset": -1}).fit(Xd, yd)
