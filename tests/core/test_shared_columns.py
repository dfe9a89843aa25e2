"""The kernel-column store shared by smo's warm start and the SVM dual's certificate.

References: the certificate of the same point computed with a fresh store, and from a
Gram matrix written out here with NumPy (a precomputed-kernel program, which reads no
column store); products against that Gram matrix, to round-off.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from numpy.testing import assert_allclose

import conicml as cm
from conicml.contracts import kernel_columns
from conicml.contracts.kernel_columns import KernelColumns, columns_for
from conicml.formulations import svm
from conicml.kernels import Kernel
from conicml.solution import Status
from conicml.solvers._warm import smo_alpha

CS = [0.1, 0.3, 1.0, 3.0, 10.0]


def _rbf(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.5, 1.0, -1.0)
    return X, y


def _forget() -> None:
    """No store and no kept product in this thread: the next certificate starts afresh."""
    kernel_columns._LOCAL.ref = None
    svm._LAST_PRODUCT = None


def _numbers(res) -> list[float]:
    return [res.primal, res.dual, res.gap]


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_path_certificates_with_the_shared_store_equal_fresh_and_dense_ones(
        engine, monkeypatch):
    # along a warm path the certificate reads the columns the warm start evaluated; each
    # value's certificate is the one computed with no store, and the one of the dense Gram
    # matrix (CONICML_ENGINE=numpy: smo's NumPy loop and the predictor's NumPy status step)
    if engine == "numba":
        pytest.importorskip("numba")
    monkeypatch.setenv("CONICML_ENGINE", engine)
    _forget()
    X, y = cm.datasets.ringnorm(200, random_state=0)  # the predictor settles on ringnorm
    X = (X - X.mean(0)) / X.std(0)
    gamma = 0.05

    def build(C):
        return svm.soft_margin(X, y, C, kernel="rbf", gamma=gamma, form="dual")

    sols = cm.solve_path(build, CS, "smo", tol=1e-6)
    cold = cm.solve_path(build, CS, "smo", tol=1e-6, warm_start=False)
    assert sum("x0_products" in s.extras["path"]["warm_start"] for s in sols) >= 2
    assert columns_for(Kernel("rbf", gamma=gamma), X).used > 0  # filled along the path
    K = _rbf(X, X, gamma)
    for C, sol, ref in zip(CS, sols, cold):
        assert sol.status is Status.OPTIMAL
        assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
        _forget()
        fresh = build(C).certify(sol)
        dense = svm.soft_margin(K, y, C, kernel="precomputed", form="dual").certify(sol)
        # the same numbers from the same alpha, the products' round-off apart
        assert_allclose(_numbers(sol.residuals), _numbers(fresh), rtol=1e-8, atol=1e-11)
        assert_allclose(_numbers(sol.residuals), _numbers(dense), rtol=1e-8, atol=1e-11)


@pytest.mark.parametrize("copy_bytes", [kernel_columns.COPY_BYTES, 0])
def test_a_store_is_found_only_for_equal_inputs_and_kernel(copy_bytes, monkeypatch):
    # inputs recognised by a private copy, or (too large to copy) by a digest
    monkeypatch.setattr(kernel_columns, "COPY_BYTES", copy_bytes)
    _forget()
    X, _ = _data(120, seed=1)
    kernel = Kernel("rbf", gamma=0.3)
    store = columns_for(kernel, X)
    store.ensure(np.arange(0, 120, 3))
    assert columns_for(kernel, X.copy()) is store  # equal values: the same columns
    assert columns_for(Kernel("rbf", gamma=0.5), X) is not store  # another width
    store = columns_for(kernel, X)
    store.ensure(np.arange(10))
    assert columns_for(Kernel("poly", gamma=0.3), X) is not store  # another kernel
    store = columns_for(kernel, X)
    store.ensure(np.arange(10))
    X[3, 1] += 1e-3  # changed in place: the same object, other values
    fresh = columns_for(kernel, X)
    assert fresh is not store and fresh.used == 0
    v = np.zeros(120)
    v[:10] = 1.0
    assert_allclose(fresh.matvec(v, np.arange(10)), _rbf(X, X, 0.3) @ v, rtol=1e-12,
                    atol=1e-12)


def test_the_warm_start_never_reads_the_columns_of_other_inputs():
    # a start for a program on other inputs of the same shape (same labels): its products
    # K(x0 y) and K_B(c_B y_B) are those of the new inputs' Gram matrix, although the
    # previous program's columns are in this thread's store and in the path's workspace
    _forget()
    X, y = _data(150, seed=2)
    gamma = 0.25
    old = svm.soft_margin(X, y, 1.0, kernel="rbf", gamma=gamma, form="dual")
    sol = cm.solve(old, "smo", tol=1e-8)
    workspace: dict = {}
    smo_alpha(sol, old, svm.soft_margin(X, y, 2.0, kernel="rbf", gamma=gamma, form="dual"),
              workspace=workspace)
    assert workspace["smo_columns"] is columns_for(Kernel("rbf", gamma=gamma), X)
    for X2, gamma2 in ((X + 0.05, gamma), (X, 0.4)):
        new = svm.soft_margin(X2, y, 2.0, kernel="rbf", gamma=gamma2, form="dual")
        start = smo_alpha(sol, old, new, workspace=workspace)
        assert "x0_products" in start
        x0, (Kv, Kb) = start["x0"], start["x0_products"]
        K2 = _rbf(X2, X2, gamma2)
        bounded = x0 >= new.data["c"]
        assert_allclose(Kv, K2 @ (x0 * y), rtol=1e-10, atol=1e-10)
        assert_allclose(Kb, K2[:, bounded] @ (new.data["c"][bounded] * y[bounded]),
                        rtol=1e-10, atol=1e-10)


def test_a_store_past_the_kept_size_lives_as_long_as_its_path(monkeypatch):
    # a warm start may grow the store past KEEP_BYTES (every column of its free set): the
    # thread then holds it weakly, the path's workspace keeps it, and it goes with the path
    X, y = _data(150, seed=3)
    monkeypatch.setattr(kernel_columns, "KEEP_BYTES", 8 * 8 * X.shape[0])  # 8 columns
    _forget()

    def build(C):
        return svm.soft_margin(X, y, C, kernel="rbf", gamma=0.3, form="dual")

    sols = cm.solve_path(build, CS, "smo", tol=1e-6)
    cold = cm.solve_path(build, CS, "smo", tol=1e-6, warm_start=False)
    for sol, ref in zip(sols, cold):
        assert sol.status is Status.OPTIMAL
        assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    del sols, cold
    gc.collect()
    store = kernel_columns._current()
    assert store is None or store.nbytes <= kernel_columns.KEEP_BYTES


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_store_products_blocks_and_front_are_the_gram_matrix(engine, monkeypatch):
    # the predictor's operations on the store: products over stored columns (read where
    # they are stored: compiled, or NumPy's gathered copy), blocks K[rows][:, idx], the
    # columns moved to the front (a view), the certificate's product beyond the kept size
    if engine == "numba":
        pytest.importorskip("numba")
    monkeypatch.setenv("CONICML_ENGINE", engine)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, 3))
    kernel = Kernel("rbf", gamma=0.4)
    K = _rbf(X, X, 0.4)
    store = KernelColumns(kernel, X)
    for idx in (np.arange(20, 50), np.array([3, 60, 21, 88]), np.arange(0, 90, 4),
                np.array([7])):
        coef = rng.normal(size=idx.size)
        assert_allclose(store.product(idx, coef), K[:, idx] @ coef, rtol=1e-12, atol=1e-12)
        rows = rng.choice(90, 11, replace=False)
        assert_allclose(store.block(rows, idx), K[np.ix_(rows, idx)], rtol=1e-12,
                        atol=1e-12)
        store.prepare(idx)  # evaluated; under the NumPy engine at the front as well
        assert np.all(store.slot[idx] >= 0)
        if engine == "numpy":
            assert sorted(store.col[:idx.size]) == sorted(idx)
        assert_allclose(store.product(idx, coef), K[:, idx] @ coef, rtol=1e-12, atol=1e-12)
        KF, order = store.front(idx)
        assert sorted(order) == sorted(idx)
        assert_allclose(KF, K[:, order], rtol=1e-12, atol=1e-12)
        # after the move: the same products and blocks
        assert_allclose(store.product(idx, coef), K[:, idx] @ coef, rtol=1e-12, atol=1e-12)
        assert_allclose(store.block(idx, idx), K[np.ix_(idx, idx)], rtol=1e-12, atol=1e-12)
    v = np.where(rng.random(90) < 0.5, rng.normal(size=90), 0.0)
    assert_allclose(store.matvec(v, np.flatnonzero(v)), K @ v, rtol=1e-12, atol=1e-12)
