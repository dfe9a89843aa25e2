"""Feature-scaling SVM at large n: what replaces the n x n work, checked against it.

The z-blocks read only the support vectors' kernel columns, the SVM block above
``SVM_BLOCK_FULL_MAX`` rows is solved by working sets, and above ``DENSE_HESSIAN_MAX``
the certificate skips the Hessian's eigenvalues at a point that fails the first-order
condition. Each is compared here with the whole-matrix computation it replaces, on
instances small enough for both (the thresholds lowered by ``monkeypatch``).
"""

import numpy as np
import pytest

import conicml as cm
from conicml.contracts import feature_scaling as contract
from conicml.datasets import twonorm
from conicml.formulations.feature_scaling import (
    FeatureScalingObjective,
    feature_scaled_svm,
    fs_kernel,
    svm_block_program,
)
from conicml.solvers import feature_scaling as fs_solvers


def _twonorm(n, d=6, seed=0):
    X, y = twonorm(n, dim=d, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


def _sparse_point(n, d, seed):
    rng = np.random.default_rng(seed)
    beta = rng.standard_normal(n)
    beta[rng.random(n) < 0.6] = 0.0  # support vectors only, as the SVM block gives
    return beta, 0.1, rng.uniform(0.3, 1.2, d), 0.8


@pytest.mark.parametrize("margin", ["kernel", "unit"])
@pytest.mark.parametrize("wrt", [("z", "lam"), ("b", "z"), ("z",)])
def test_blocks_on_support_vector_columns_equal_the_whole_matrix_evaluation(margin, wrt):
    # with beta fixed, f = K_z beta + b needs only the columns of the nonzero beta_j: the
    # value, gradient and Hessian over (b, z, lam) equal the sub-blocks of the evaluation
    # over all variables, which forms the whole K_z (same sums, up to rounding)
    X, y = _twonorm(40, d=5)
    obj = FeatureScalingObjective(X, y, C=2.0, mu=0.3)
    beta, b, z, lam = _sparse_point(40, 5, seed=1)
    v, g, H = obj.evaluate(beta, b, z, lam, margin=margin)
    offset = {"b": 40, "z": 41, "lam": 46}
    size = {"b": 1, "z": 5, "lam": 1}
    idx = np.concatenate([np.arange(offset[k], offset[k] + size[k]) for k in wrt])
    for order in (0, 1, 2):
        obj._last_kernel = obj._last_columns = None  # no kept K_z: the columns path
        vr, gr, Hr = obj.evaluate(beta, b, z, lam, margin=margin, wrt=wrt, order=order)
        assert vr == pytest.approx(v, rel=1e-13)
        if order >= 1:
            np.testing.assert_allclose(gr, g[idx], rtol=1e-11, atol=1e-12)
        if order == 2:
            np.testing.assert_allclose(Hr, H[np.ix_(idx, idx)], rtol=1e-10, atol=1e-11)
    # the gradient over all variables (order 1) from columns as well
    obj._last_kernel = obj._last_columns = None
    v1, g1, _ = obj.evaluate(beta, b, z, lam, margin=margin, order=1)
    assert v1 == pytest.approx(v, rel=1e-13)
    np.testing.assert_allclose(g1, g, rtol=1e-11, atol=1e-12)


def test_second_derivative_products_on_sparse_vectors_match_the_tensor_sums():
    # u'(d2_zz K)v reads only the rows of the nonzero u_i and columns of the nonzero v_j;
    # reference: the pairwise tensor D_ijl = (x_il - x_jl)^2 summed directly (7.17)
    X, y = _twonorm(30, d=4, seed=2)
    obj = FeatureScalingObjective(X, y, C=1.0, mu=0.1)
    rng = np.random.default_rng(5)
    z, u, v = rng.uniform(0.2, 1.0, 4), rng.standard_normal(30), rng.standard_normal(30)
    u[::3] = 0.0
    v[1::2] = 0.0
    D = obj.diffs
    K = np.exp(-np.einsum("ijl,l->ij", D, z**2))
    W = K * np.outer(u, v)
    ref = (4.0 * np.outer(z, z) * np.einsum("ij,ijl,ijm->lm", W, D, D)
           - 2.0 * np.diag(np.einsum("ij,ijl->l", W, D)))
    np.testing.assert_allclose(obj._kzz(K, z, u, v), ref, rtol=1e-9,
                               atol=1e-12 * np.abs(ref).max())
    cols = np.flatnonzero(v)
    np.testing.assert_allclose(obj._kzz(K[:, cols], z, u, v, cols), ref, rtol=1e-9,
                               atol=1e-12 * np.abs(ref).max())
    kz = -2.0 * z[None, :] * np.einsum("ijl,ij->il", D, K * v[None, :])
    np.testing.assert_allclose(obj._kz(K[:, cols], z, v, cols), kz, rtol=1e-9,
                               atol=1e-12 * np.abs(kz).max())


def test_kernel_memory_is_reused_only_when_nobody_holds_it():
    X, y = _twonorm(30, d=4)
    obj = FeatureScalingObjective(X, y, C=1.0, mu=0.1)
    held = obj.kernel(np.ones(4))
    copy = held.copy()
    obj.kernel(np.full(4, 0.5))
    np.testing.assert_array_equal(held, copy)  # a caller's matrix is never written over
    np.testing.assert_allclose(obj.kernel(np.full(4, 0.7)), fs_kernel(X, X, np.full(4, 0.7)),
                               rtol=1e-12)


def _record_block_sizes(monkeypatch):
    sizes = []
    solve_block = fs_solvers._Run._solve_block

    def recording(self, program):
        sizes.append(program.data["y"].size)
        return solve_block(self, program)

    monkeypatch.setattr(fs_solvers._Run, "_solve_block", recording)
    return sizes


@pytest.mark.parametrize("z", [np.ones(6), np.full(6, 0.3)])
def test_svm_block_by_working_sets_equals_the_whole_dual(monkeypatch, z):
    # the working-set block (subproblems checked on all rows by smo's rule) against the
    # whole dual solved by smo and by two generic backends (clarabel, ecos)
    X, y = _twonorm(240, d=6, seed=3)
    program = feature_scaled_svm(X, y, C=1.0, mu=1.0)
    fs = program.data["fs"]
    run = fs_solvers._Run(fs, "smo", {"tol": 1e-8}, None, None, 0.0)
    beta_full, b_full = run.svm(z)  # n <= SVM_BLOCK_FULL_MAX: the whole Gram matrix
    monkeypatch.setattr(fs_solvers, "SVM_BLOCK_FULL_MAX", 60)
    monkeypatch.setattr(fs_solvers, "_WS_FIRST_FULL_MAX", 60)
    sizes = _record_block_sizes(monkeypatch)
    ws = fs_solvers._Run(fs, "smo", {"tol": 1e-8}, None, None, 0.0)
    beta_ws, b_ws = ws.svm(z)  # the first block: from a random sample of 60 rows
    beta_ws2, b_ws2 = ws.svm(z * 1.05)  # the next: from the last support vectors
    assert sizes[0] == 60 and min(sizes) < 240  # subproblems, not the whole dual
    # smo's tol 1e-8 on the KKT violation: alpha and b to ~1e-6
    np.testing.assert_allclose(beta_ws, beta_full, atol=1e-6)
    assert b_ws == pytest.approx(b_full, abs=1e-6)
    for solver, opts in (("clarabel", {}), ("ecos", {})):
        block = svm_block_program(X, y, z, 1.0)
        model = block.decode(cm.solve(block, solver, **opts))
        # the generic backends' own accuracy (~1e-7 relative; ECOS ~1e-5 in alpha)
        np.testing.assert_allclose(beta_ws, model["dual_coef"], atol=1e-4)
    block = svm_block_program(X, y, z * 1.05, 1.0)
    model = block.decode(cm.solve(block, "clarabel"))
    np.testing.assert_allclose(beta_ws2, model["dual_coef"], atol=1e-4)
    assert b_ws2 == pytest.approx(model["b"], abs=1e-4)


def test_default_fit_with_working_sets_and_columns_matches_the_whole_matrix_fit(monkeypatch):
    # the same AO-II run with the SVM block on the whole Gram matrix (n <= the threshold)
    # and by working sets (threshold lowered): the same fixed point to the method's own
    # tolerance (||z^(k+1) - z^k||_inf < tol = 1e-4, the SVM block at smo's tol 1e-6)
    X, y = _twonorm(300, d=6, seed=4)
    program = feature_scaled_svm(X, y, C=1.0, mu=1.0)
    whole = cm.solve(program, "fs-ao2")
    monkeypatch.setattr(fs_solvers, "SVM_BLOCK_FULL_MAX", 80)
    monkeypatch.setattr(fs_solvers, "_WS_FIRST_FULL_MAX", 80)
    sizes = _record_block_sizes(monkeypatch)
    program2 = feature_scaled_svm(X, y, C=1.0, mu=1.0)
    ws = cm.solve(program2, "fs-ao2")
    assert sum(s < 300 for s in sizes) > len(sizes) // 2  # mostly subproblems
    assert whole.extras["converged"] and ws.extras["converged"]
    assert ws.objective == pytest.approx(whole.objective, rel=1e-5)
    np.testing.assert_allclose(ws.values["z"], whole.values["z"], atol=1e-3)
    m1, m2 = program.decode(whole), program2.decode(ws)
    f1 = fs_kernel(X, X, m1["z"]) @ m1["dual_coef"] + m1["b"]
    f2 = fs_kernel(X, X, m2["z"]) @ m2["dual_coef"] + m2["b"]
    np.testing.assert_allclose(f2, f1, atol=1e-3 * np.abs(f1).max())
    assert np.array_equal(m1["support"], m2["support"])


def test_certificate_skips_the_eigenvalues_only_where_the_gradient_already_fails(monkeypatch):
    # above DENSE_HESSIAN_MAX an AO-II fixed point (not stationary for Omega) gets no
    # eigenvalues: its gap is inf (not computed, counted as failing) and vmin NaN, its
    # status OPTIMAL_INACCURATE on the dual residual as before; a FULL-FS point that
    # passes the first-order condition still gets them (the same numbers as below the
    # threshold)
    X, y = _twonorm(60, d=4, seed=5)
    below = feature_scaled_svm(X, y, C=1.0, mu=1.0)
    ao2_below = cm.solve(below, "fs-ao2")
    full_below = cm.solve(below, "fs-full")
    monkeypatch.setattr(contract, "DENSE_HESSIAN_MAX", 10)
    above = feature_scaled_svm(X, y, C=1.0, mu=1.0)
    ao2 = cm.solve(above, "fs-ao2")
    assert ao2_below.residuals.dual > 1e-2  # the premise: AO-II's point is not stationary
    assert ao2.status is cm.Status.OPTIMAL_INACCURATE
    assert ao2.residuals.dual == pytest.approx(ao2_below.residuals.dual, rel=1e-9)
    assert ao2.residuals.gap == np.inf
    model = above.decode(ao2)
    assert model["label"] == "not stationary" and np.isnan(model["vmin"])
    full = cm.solve(above, "fs-full")
    assert full_below.residuals.dual <= 1e-3
    assert full.status is full_below.status
    assert full.residuals.gap == pytest.approx(full_below.residuals.gap, abs=1e-12)
    assert above.decode(full)["vmin"] == pytest.approx(below.decode(full_below)["vmin"],
                                                      rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("margin", ["kernel", "unit"])
def test_row_blocks_on_threads_give_the_one_thread_evaluation(monkeypatch, margin):
    # the kernel blocks and the derivatives' products split by rows over two threads
    # (blocks of 7 rows here, so that both threads work): the numbers of one thread,
    # each row block being the same single-thread BLAS call (rtol: rounding only)
    X, y = _twonorm(61, d=5, seed=4)
    beta, b, z, lam = _sparse_point(61, 5, seed=6)
    monkeypatch.setattr(contract, "ROW_BLOCK", 7)
    out = {}
    for workers in (1, 2):
        obj = FeatureScalingObjective(X, y, C=2.0, mu=0.3)
        obj.workers = workers
        out[workers] = [obj.evaluate(beta, b, z, lam, margin=margin, wrt=wrt)
                        for wrt in (("z", "lam"), ("beta", "b", "z", "lam"))]
        out[workers].append((obj.kernel(z), obj.kernel_columns(z * 0.9, np.arange(0, 61, 3))))
    for one, two in zip(out[1], out[2]):
        for a, c in zip(one, two):
            np.testing.assert_allclose(c, a, rtol=1e-12, atol=1e-14)


def test_solve_sets_the_row_workers_for_its_duration_only():
    # small_blas gives the objective as many row-block threads as BLAS had (at most the
    # CPUs of the process) for the solve, and one after it
    from conicml._utils.threads import blas_thread_count, usable_cpus

    X, y = _twonorm(30, d=4)
    obj = FeatureScalingObjective(X, y, C=1.0, mu=0.1)
    expected = max(1, min(blas_thread_count(), usable_cpus()))
    with contract.small_blas(obj):
        assert obj.workers == expected
        assert blas_thread_count() == 1  # BLAS itself on one thread inside
    assert obj.workers == 1
