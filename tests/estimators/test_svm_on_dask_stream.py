"""The linear SVM on Dask data that are regenerated chunk by chunk every round (not persisted).

References: the same program solved in memory by ``clarabel`` (a generic backend) and by
``dcd`` at tol 1e-8 (the specialized solver); the streamed fit is accepted only through its
own block-wise certificate, checked here against those optima by weak duality.
"""

import numpy as np
import pytest

from conicml.estimators.svm import SVMClassifier
from conicml.exceptions import OptionError
from conicml.solution import Status

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

N, D, CHUNK = 2_400, 4, 300
W = np.array([1.0, -0.5, 2.0, 0.0])


@pytest.fixture(scope="module")
def client(inproc_client):
    return inproc_client


def _lazy():
    """X and labels generated from a seed, chunk by chunk (nothing materialised)."""
    rng = da.random.default_rng(5)
    X = rng.standard_normal((N, D), chunks=(CHUNK, D))
    noise = rng.standard_normal(N, chunks=CHUNK)
    return X, da.where(X @ W + 0.5 + 0.7 * noise > 0, 1, 0)


def _primal(X, y, w, b, C=1.0):
    s = np.where(y == 1, 1.0, -1.0)
    return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - s * (X @ w + b)).sum()


@pytest.fixture(scope="module")
def data_and_optimum():
    Xl, yl = _lazy()
    X, y = Xl.compute(scheduler="sync"), yl.compute(scheduler="sync")
    ref = {}
    for solver, opts in (("clarabel", None), ("dcd", {"tol": 1e-8})):
        m = SVMClassifier(C=1.0, solver=solver, solver_options=opts).fit(X, y)
        ref[solver] = _primal(X, y, m.coef_[0], m.intercept_[0])
    assert ref["dcd"] == pytest.approx(ref["clarabel"], rel=1e-6)
    return X, y, min(ref.values())


@pytest.mark.parametrize("working_rows", [None, 200])
def test_streamed_fit_is_certified_against_the_in_memory_optimum(client, data_and_optimum,
                                                                 working_rows):
    X, y, optimum = data_and_optimum
    tol = 1e-2
    Xl, yl = _lazy()
    m = SVMClassifier(C=1.0, solver="dcd", solver_options={
        "tol": tol, "max_iter": 300, "working_rows": working_rows}).fit(Xl, yl)
    sol = m.solution_
    assert sol.extras["stream"] is True
    assert sol.extras["blocks"] == 2  # one group of chunks per worker thread
    # a cap of 200 rows per group (of 1 200) bounds the working set, which is then
    # solved and emptied of its settled rows whenever it fills during a streamed pass
    assert 0 < sol.extras["working_rows"] <= (2 * 200 if working_rows else N)
    assert (sol.extras["working_set_solves"] > 0) == bool(working_rows)
    assert sol.status is Status.OPTIMAL and sol.residuals.gap <= tol
    P = _primal(X, y, m.coef_[0], m.intercept_[0])
    assert P == pytest.approx(sol.extras["primal_objective"], rel=1e-9)
    assert sol.extras["dual_objective"] <= optimum * (1 + 1e-9)
    assert optimum <= P * (1 + 1e-9)
    assert P - optimum <= tol * P


def test_a_small_working_set_does_not_multiply_the_rounds(client):
    # a working set of 50 rows per group of 1 200 (chunks of 300) is solved and emptied
    # of its settled rows whenever it fills, so a round serves every candidate: at most
    # two rounds more than with every candidate kept (filled once per round and the rest
    # of the candidates left to the next round, it took 11 rounds against 3 here)
    rounds = {}
    for working_rows in (None, 50):
        Xl, yl = _lazy()
        sol = SVMClassifier(C=1.0, solver="dcd", solver_options={
            "tol": 1e-2, "max_iter": 300, "working_rows": working_rows}).fit(Xl, yl).solution_
        assert sol.status is Status.OPTIMAL and sol.residuals.gap <= 1e-2
        rounds[working_rows] = sol.iterations
        assert (sol.extras["working_set_solves"] > 0) == bool(working_rows)
    assert rounds[50] <= rounds[None] + 2


def test_persisted_input_is_fitted_in_place(client):
    Xl, yl = _lazy()
    Xp = Xl.persist()
    distributed.wait(Xp)
    yp = yl.persist()
    m = SVMClassifier(C=1.0, solver="dcd", solver_options={"tol": 5e-2}).fit(Xp, yp)
    assert m.solution_.extras["stream"] is False
    assert m.solution_.extras["blocks"] == N // CHUNK  # one CoCoA+ block per chunk
    with pytest.raises(OptionError, match="stream=True"):
        SVMClassifier(solver="dcd", solver_options={"stream": True}).fit(Xp, yp)
    with pytest.raises(OptionError, match="working_rows"):
        SVMClassifier(solver="dcd", solver_options={"working_rows": 0}).fit(Xl, yl)


def test_working_set_keeps_the_best_scored_rows_within_its_cap():
    from conicml.estimators._dask_stream import _WorkingSet

    rng = np.random.default_rng(1)
    ws = _WorkingSet(50, 3)
    rows, scores = [], []
    for lo in range(0, 400, 40):  # ten chunks of 40 candidates through a buffer of 50
        X = rng.normal(size=(40, 3))
        score = rng.exponential(size=40)
        score[:3] = np.inf  # free multipliers are always kept first
        ws.add(X, np.sign(X[:, 0]).astype(np.int8), np.arange(lo, lo + 40), score)
        rows.append(X)
        scores.append(score)
    Xk, yk, ids = ws.arrays()
    best = np.sort(np.argsort(-np.concatenate(scores), kind="stable")[:50])
    assert ids.size == 50 and np.array_equal(np.sort(ids), best)
    np.testing.assert_array_equal(Xk, np.concatenate(rows)[ids])  # rows match their ids
    assert np.array_equal(yk, np.sign(Xk[:, 0]).astype(np.int8))


def _offered(cap, n_rows, settle_every):
    """Rows 0..n_rows-1 offered to a working set of ``cap`` rows; each solve settles the
    kept rows whose id is a multiple of ``settle_every`` (0: none)."""
    from conicml.estimators._dask_stream import _offer, _WorkingSet

    ws, seen = _WorkingSet(cap, 2), []

    def solve():
        _, _, ids = ws.arrays()
        seen.append(ids.copy())
        keep = np.flatnonzero(ids % settle_every != 0 if settle_every else ids >= 0)
        for arr in (ws.X, ws.y, ws.ids, ws.score):
            arr[:keep.size] = arr[keep]
        ws.size = keep.size
        return 3  # passes

    ids = np.arange(n_rows)
    X = np.column_stack([ids, -ids]).astype(float)
    score = np.linspace(2.0, 1.0, n_rows)  # the earlier rows score higher
    made = _offer(ws, X, np.ones(n_rows, np.int8), ids, score, solve)
    return ws, seen, made


def test_a_full_working_set_is_solved_and_its_settled_rows_make_room():
    # every row settles: 100 candidates through a set of 30 -> solved when full, 3 times,
    # each time on the next 30 rows; the last 10 stay for the round's final passes
    ws, seen, made = _offered(30, 100, 1)
    assert made == (3, 9)
    assert [s.tolist() for s in seen] == [list(range(k, k + 30)) for k in (0, 30, 60)]
    assert ws.arrays()[2].tolist() == list(range(90, 100))
    # half the rows settle: room for 15, then 22 rows stay (more than half the set)
    # after the second solve, and the rest compete by score (the earlier rows win)
    ws, seen, made = _offered(30, 100, 2)
    assert made == (2, 6)
    kept = np.sort(ws.arrays()[2])
    assert kept.size == 30 and kept.max() < 60  # the best-scored of the rest
    assert kept[kept >= 45].size == 8  # 22 kept from the solves, 8 of the rest
