"""The kernel products of the SVM dual's certificate, decoder and training decision values.

Reference: the Gram matrix written out here with NumPy (independent of
``conicml.kernels`` and of the blocked products under test), to round-off.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from conicml.contracts import kernel_columns
from conicml.estimators import SVMClassifier
from conicml.formulations import svm
from conicml.kernels import Kernel


def _rbf(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d2)


def _data(n: int = 300, d: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("kernel", [Kernel("rbf", gamma=0.3), Kernel("poly", gamma=0.5,
                                                                      degree=2, coef0=1.0)])
@pytest.mark.parametrize("block", [8, 2**16])
def test_cross_matvec_is_the_dense_product(kernel, block, monkeypatch):
    monkeypatch.setattr(svm, "PRODUCT_BLOCK", block)  # many blocks and one block
    rng = np.random.default_rng(1)
    A, B, w = rng.normal(size=(53, 3)), rng.normal(size=(17, 3)), rng.normal(size=17)
    dense = (_rbf(A, B, 0.3) if kernel.name == "rbf"
             else (0.5 * A @ B.T + 1.0) ** 2)
    assert_allclose(svm._cross_matvec(kernel, A, B, w), dense @ w, rtol=1e-12, atol=1e-12)
    assert_allclose(svm._cross_matvec(kernel, A, B[:0], w[:0]), np.zeros(53))


def test_kept_product_is_exact_and_follows_the_data():
    X, y = _data()
    data = {"X": X, "kernel": Kernel("rbf", gamma=0.25)}
    K = _rbf(X, X, 0.25)
    rng = np.random.default_rng(2)
    v = np.where(rng.random(X.shape[0]) < 0.4, rng.normal(size=X.shape[0]), 0.0)
    assert_allclose(svm._kernel_matvec(data, v), K @ v, rtol=1e-12, atol=1e-12)
    # a few entries dropped: corrected from the kept product, the same numbers
    w = v.copy()
    w[np.flatnonzero(v)[:3]] = 0.0
    assert_allclose(svm._kernel_matvec(data, w), K @ w, rtol=1e-12, atol=1e-11)
    # X changed in place (same object): no longer the store's inputs, recomputed
    X[:5] += 1.0
    K2 = _rbf(X, X, 0.25)
    assert_allclose(svm._kernel_matvec(data, w), K2 @ w, rtol=1e-12, atol=1e-12)
    # another kernel width on the same X: recomputed
    data2 = {"X": X, "kernel": Kernel("rbf", gamma=0.5)}
    assert_allclose(svm._kernel_matvec(data2, w), _rbf(X, X, 0.5) @ w, rtol=1e-12,
                    atol=1e-12)


@pytest.mark.parametrize("budget_columns", [1000, 40])
def test_stored_columns_give_the_dense_product_along_a_path(budget_columns, monkeypatch):
    # the certificate's column store: dual points sharing support vectors (a path over
    # C) read each kernel column once; within the memory bound or beyond it (columns
    # evaluated without being kept), the product is the dense Gram matrix's
    X, y = _data(n=200)
    monkeypatch.setattr(kernel_columns, "KEEP_BYTES", budget_columns * 8 * X.shape[0])
    monkeypatch.setattr(kernel_columns._LOCAL, "ref", None, raising=False)
    kernel = Kernel("rbf", gamma=0.3)
    data = {"X": X, "kernel": kernel}
    K = _rbf(X, X, 0.3)
    rng = np.random.default_rng(3)
    support = rng.random(X.shape[0]) < 0.5
    seen = np.zeros(X.shape[0], dtype=bool)
    for scale in (0.1, 0.3, 1.0, 3.0):  # overlapping supports, new values each time
        support ^= rng.random(X.shape[0]) < 0.1
        seen |= support
        v = np.where(support, scale * rng.random(X.shape[0]) * y, 0.0)
        assert_allclose(svm._kernel_matvec(data, v), K @ v, rtol=1e-12, atol=1e-12)
    # every column evaluated once and kept, up to the bound
    assert kernel_columns.columns_for(kernel, X).used == min(budget_columns, int(seen.sum()))
    # another data set replaces the store
    X2 = X + 0.5
    v = np.where(support, y, 0.0)
    assert_allclose(svm._kernel_matvec({"X": X2, "kernel": kernel}, v), _rbf(X2, X2, 0.3) @ v,
                    rtol=1e-12, atol=1e-12)


def test_each_thread_has_its_own_column_store():
    # folds fitted in threads (joblib's threading backend) certify other data sets at
    # the same time: a store shared between them could mix one set's slots with
    # another's columns; each thread's products are the dense ones
    from concurrent.futures import ThreadPoolExecutor

    kernel = Kernel("rbf", gamma=0.3)
    sets = [_data(n=150, seed=s)[0] for s in range(4)]

    def run(X):
        v = np.where(np.arange(X.shape[0]) % 3 == 0, 1.0, 0.0)
        for _ in range(3):
            g = svm._kernel_matvec({"X": X, "kernel": kernel}, v)
            v = v * 1.5
        return g, _rbf(X, X, 0.3) @ (v / 1.5), kernel_columns.columns_for(kernel, X)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, sets))
    for g, ref, _ in results:
        assert_allclose(g, ref, rtol=1e-12, atol=1e-12)
    here = kernel_columns._current()
    assert all(r[2] is not here for r in results)  # the stores kept alive


def test_estimator_training_decision_and_bias_match_the_dense_gram():
    """SVMClassifier(solver='smo'): the decoded bias and the decision values on the
    training points (served by the kept product) against the dense Gram matrix and an
    SVC fit (LIBSVM) at the same tolerance."""
    from sklearn.svm import SVC

    X, y = _data(n=400, seed=3)
    clf = SVMClassifier(kernel="rbf", gamma=0.2, C=2.0, solver="smo",
                           solver_options={"tol": 1e-6}).fit(X, y)
    K = _rbf(X, X, 0.2)
    dual = np.zeros(X.shape[0])
    dual[clf.support_] = clf.dual_coef_[0]
    f_train = clf.decision_function(X)
    assert_allclose(f_train, K @ dual + clf.intercept_[0], rtol=1e-10, atol=1e-10)
    # a copy of X (not the training object) takes the blocked cross product
    assert_allclose(clf.decision_function(X.copy() + 0.0), f_train, rtol=1e-12, atol=1e-12)
    svc = SVC(kernel="rbf", gamma=0.2, C=2.0, tol=1e-6).fit(X, y)
    assert_allclose(f_train, svc.decision_function(X), atol=1e-4)


def test_decision_values_on_sparse_new_points():
    """A sparse X_new for a kernel model takes the kernel's own (sparse-aware) product:
    the dense product's values."""
    sp = pytest.importorskip("scipy.sparse")
    X, y = _data(n=150, seed=4)
    prog = svm.soft_margin(X, y, C=1.0, kernel="rbf", gamma=0.3, form="dual")
    from conicml.solving import solve

    model = prog.decode(solve(prog, "smo"))
    Z = np.where(np.abs(X[:20]) > 0.5, X[:20], 0.0)
    assert_allclose(svm.decision_values(prog.data, model, sp.csr_matrix(Z)),
                    svm.decision_values(prog.data, model, Z), rtol=1e-12, atol=1e-12)
