"""The two loops of ``smo`` (compiled with numba, pure NumPy) and its polishing phase.

References: the NumPy loop is the reference of the compiled one (the same algorithm,
issue 14); both are checked against Clarabel on the same program, and the polished point
against conicml's recomputed certificate (``Program.certify``, independent of the
solver's report). Tolerances: the ``"smo"`` row of ``tests/tolerances.py``.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose

import conicml as cm
from conicml.exceptions import OptionError
from conicml.solution import Status

from tolerances import obj_rtol, sol_atol


def _program(n: int = 300, C: float = 1.0, seed: int = 0):
    X, y = cm.datasets.twonorm(n, dim=20, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    return cm.formulations.svm.soft_margin(X, y, C=C, kernel="rbf", form="dual")


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_compiled_loop_matches_numpy_loop_and_clarabel(C, shrinking):
    pytest.importorskip("numba")
    prog = _program(300, C)
    options = {"tol": 1e-8, "shrinking": shrinking}
    fast = cm.solve(prog, "smo", engine="numba", **options)
    ref = cm.solve(prog, "smo", engine="numpy", **options)
    clarabel = cm.solve(prog, "clarabel")
    assert fast.extras["engine"] == "numba" and ref.extras["engine"] == "numpy"
    assert fast.status is Status.OPTIMAL and ref.status is Status.OPTIMAL
    assert_allclose(fast.objective, ref.objective, rtol=1e-10)
    assert_allclose(fast.values["alpha"], ref.values["alpha"], atol=1e-6 * C)
    assert_allclose(fast.objective, clarabel.objective, rtol=obj_rtol("smo"))
    # decision values: the engines agree far inside the registry tolerance (the
    # registry-wide test in test_svm.py holds both against the generic backends)
    X = prog.data["X"]
    f_fast = cm.formulations.svm.decision_values(prog.data, prog.decode(fast), X)
    f_ref = cm.formulations.svm.decision_values(prog.data, prog.decode(ref), X)
    assert_allclose(f_fast, f_ref, atol=1e-2 * sol_atol("smo") * max(1.0, C))


def test_compiled_loop_with_a_tiny_cache_and_a_warm_start():
    pytest.importorskip("numba")
    prog = _program(200, 10.0)
    ref = cm.solve(prog, "smo", engine="numpy", tol=1e-8)
    # a cache of two columns: every column is recomputed, the LRU slots are reused
    tiny = cm.solve(prog, "smo", engine="numba", tol=1e-8, cache_size=1e-6)
    assert tiny.status is Status.OPTIMAL
    assert_allclose(tiny.objective, ref.objective, rtol=1e-9)
    assert tiny.extras["kernel_evaluations"] > 200
    warm = cm.solve(prog, "smo", engine="numba", tol=1e-8, x0=ref.values["alpha"])
    assert warm.status is Status.OPTIMAL and warm.iterations <= 5


@pytest.mark.parametrize("cache_size", [60 * 400 * 8 / 2**20, 200.0], ids=["60-cols", "200MB"])
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_compiled_loop_with_columns_of_the_working_set(C, cache_size):
    # once shrinking has cut the working set by a fifth, the compiled loop keeps columns
    # of the working set's length only (LIBSVM's active-length columns), with a cache of
    # ~60 full columns for n = 400 and with one holding every column; the iterates are
    # the NumPy loop's (full columns)
    pytest.importorskip("numba")
    prog = _program(400, C, seed=1)
    ref = cm.solve(prog, "smo", engine="numpy", tol=1e-8)
    fast = cm.solve(prog, "smo", engine="numba", tol=1e-8, cache_size=cache_size)
    assert fast.status is Status.OPTIMAL
    assert fast.extras["min_column_length"] < 200
    assert_allclose(fast.objective, ref.objective, rtol=1e-10)
    assert_allclose(fast.values["alpha"], ref.values["alpha"], atol=1e-6 * C)
    # against an independent solver, too
    clarabel = cm.solve(prog, "clarabel")
    assert_allclose(fast.objective, clarabel.objective, rtol=obj_rtol("smo"))
    # a limit while shrunk returns the full alpha with its exact KKT violation
    capped = cm.solve(prog, "smo", engine="numba", tol=1e-8, cache_size=cache_size,
                      max_iter=fast.iterations - 5, gap_tol=None)
    assert capped.status is Status.USER_LIMIT
    K = prog.data["kernel"].gram(prog.data["X"])
    y, c, a = prog.data["y"], prog.data["c"], capped.values["alpha"]
    F = y - K @ (a * y)  # LIBSVM's -y G, recomputed from the Gram matrix
    up = np.where(y > 0, a < c, a > 0)
    low = np.where(y > 0, a > 0, a < c)
    assert_allclose(capped.extras["kkt_violation"], F[up].max() - F[low].min(),
                    rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kernel", ["poly", "precomputed"])
def test_working_set_columns_for_other_kernels(kernel):
    # the working-set columns of a polynomial kernel (kernel.columns on the working rows)
    # and of a precomputed Gram matrix (its sub-block): the NumPy loop's iterates
    pytest.importorskip("numba")
    X, y = cm.datasets.twonorm(400, dim=20, random_state=1)
    X = (X - X.mean(0)) / X.std(0)
    if kernel == "precomputed":
        from sklearn.metrics.pairwise import rbf_kernel
        X = rbf_kernel(X, X, gamma=1 / 20)
    prog = cm.formulations.svm.soft_margin(X, y, C=10.0, kernel=kernel, form="dual")
    if kernel == "precomputed":  # row-major: not borrowed as the store (see below)
        prog = cm.formulations.svm._program(
            {**prog.data, "X": np.ascontiguousarray(prog.data["X"])}, "row-major Gram")
    ref = cm.solve(prog, "smo", engine="numpy", tol=1e-8)
    fast = cm.solve(prog, "smo", engine="numba", tol=1e-8, cache_size=60 * 400 * 8 / 2**20)
    assert fast.status is Status.OPTIMAL and fast.extras["min_column_length"] < 200
    assert_allclose(fast.objective, ref.objective, rtol=1e-10)
    assert_allclose(fast.values["alpha"], ref.values["alpha"], atol=1e-8)


def test_compiled_loop_limits_and_callback():
    pytest.importorskip("numba")
    prog = _program(300, 100.0)
    capped = cm.solve(prog, "smo", engine="numba", max_iter=7, gap_tol=None)
    assert capped.status is Status.USER_LIMIT and capped.iterations == 7
    seen = []

    def stop_after_five(result):
        seen.append(result.iteration)
        if result.iteration >= 5:
            raise StopIteration

    stopped = cm.solve(prog, "smo", engine="numba", callback=stop_after_five)
    assert stopped.status is Status.USER_LIMIT
    assert seen == [1, 2, 3, 4, 5] and stopped.iterations == 5


def test_auto_engine_falls_back_without_numba(monkeypatch):
    # a None entry in sys.modules makes "from . import _smo_numba" raise ImportError
    monkeypatch.setitem(sys.modules, "conicml.solvers._smo_numba", None)
    monkeypatch.delattr(cm.solvers, "_smo_numba", raising=False)
    prog = _program(120)
    sol = cm.solve(prog, "smo")
    assert sol.status is Status.OPTIMAL and sol.extras["engine"] == "numpy"
    with pytest.raises(OptionError, match="numba"):
        cm.solve(prog, "smo", engine="numba")


# the compiled loop with float64 and with float32 (LIBSVM's Qfloat) stored columns
ENGINES = [pytest.param({"engine": "numpy"}, 1e-6, id="numpy"),
           pytest.param({"engine": "numba", "column_dtype": "float64"}, 1e-6, id="numba-f64"),
           pytest.param({"engine": "numba", "column_dtype": "float32"}, 1e-2, id="numba-f32")]


def _engine(options: dict) -> dict:
    if options["engine"] == "numba":
        pytest.importorskip("numba")
    return options


@pytest.mark.parametrize("engine, est_rtol", ENGINES)
def test_polishing_reaches_the_certificate_at_C_100(engine, est_rtol):
    engine = _engine(engine)
    prog = _program(300, 100.0)
    # LIBSVM's stop (tol 1e-3 on m - M, no polishing): the recomputed relative gap
    # (2e-2 here) fails certify_tol 1e-3, so solve demotes it
    plain = cm.solve(prog, "smo", **engine, gap_tol=None)
    assert plain.status is Status.OPTIMAL_INACCURATE
    assert plain.residuals.gap > 1e-3
    polished = cm.solve(prog, "smo", **engine)
    assert polished.status is Status.OPTIMAL
    assert polished.residuals.source == "recomputed" and polished.residuals.max() <= 1e-3
    assert polished.extras["polish_tol"] < 1e-3
    # polishing stopped on the certificate's own number, estimated from the gradient
    # (float32 columns: the gradient's round-off moves the estimate by ~3e-3 relative,
    # 6e-7 absolute here, far inside the 1e-4 that gap_tol 9e-4 keeps from certify_tol)
    assert polished.extras["certificate_gap_estimate"] <= 9e-4
    assert_allclose(polished.extras["certificate_gap_estimate"], polished.residuals.gap,
                    rtol=est_rtol)
    # and the polished point is the optimum (Clarabel, same program)
    clarabel = cm.solve(prog, "clarabel")
    assert_allclose(polished.objective, clarabel.objective, rtol=1e-3)


@pytest.mark.parametrize("engine, est_rtol", ENGINES)
def test_no_polishing_when_the_unpolished_point_is_already_certified(engine, est_rtol):
    engine = _engine(engine)
    # twonorm n = 300, C = 3, seed 3: LIBSVM's stop leaves a recomputed relative gap of
    # ~7e-4 (measured), inside certify_tol 1e-3 but above the former trigger 5e-4, which
    # polished it anyway (issue 14: mammography C = 100 took 3x its unpolished time)
    prog = _program(300, 3.0, seed=3)
    plain = cm.solve(prog, "smo", **engine, gap_tol=None)
    assert plain.status is Status.OPTIMAL  # certified by Program.certify
    assert 5e-4 < plain.residuals.gap <= 1e-3
    sol = cm.solve(prog, "smo", **engine)
    assert sol.status is Status.OPTIMAL and sol.extras["polish_tol"] == 1e-3
    assert sol.iterations == plain.iterations
    assert_allclose(sol.values["alpha"], plain.values["alpha"], rtol=0, atol=0)
    # the O(n) estimate from the gradient is the number the certificate recomputes
    # from the kernel (up to the round-off of the incremental gradient)
    assert_allclose(sol.extras["certificate_gap_estimate"], sol.residuals.gap, rtol=est_rtol)
    # a tighter target than the certificate's still polishes this point
    tight = cm.solve(prog, "smo", **engine, gap_tol=5e-4)
    assert tight.extras["polish_tol"] < 1e-3 and tight.iterations > plain.iterations
    assert tight.status is Status.OPTIMAL and tight.residuals.gap <= 5e-4


def test_polishing_is_not_run_when_the_gap_is_small():
    prog = _program(300, 1.0)
    sol = cm.solve(prog, "smo")
    assert sol.status is Status.OPTIMAL and sol.extras["polish_tol"] == 1e-3


@pytest.mark.parametrize("options", [{"engine": "fortran"}, {"gap_tol": -1.0},
                                     {"gap_tol": float("nan")}, {"gap_tol": "small"},
                                     {"column_dtype": "float16"}])
def test_bad_engine_and_gap_tol_raise(options):
    with pytest.raises(OptionError, match=next(iter(options))):
        cm.solve(_program(60), "smo", **options)


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_certificate_gram_product_over_the_support_only(kernel):
    # the certificate evaluates K[:, nz] v[nz] only; reference: the dense Gram matrix of
    # scikit-learn's pairwise kernels (independent of conicml.kernels)
    from sklearn.metrics.pairwise import pairwise_kernels

    X, y = cm.datasets.twonorm(150, dim=5, random_state=3)
    prog = cm.formulations.svm.soft_margin(X, y, C=1.0, kernel=kernel, form="dual")
    kern = prog.data["kernel"]
    params = {"gamma": kern.gamma} if kernel == "rbf" else (
        {"gamma": kern.gamma, "degree": kern.degree, "coef0": kern.coef0}
        if kernel == "poly" else {})
    K = pairwise_kernels(X, metric=kernel, **params)
    v = np.zeros(150)
    v[np.random.default_rng(0).choice(150, 20, replace=False)] = np.linspace(-1, 1, 20)
    got = cm.formulations.svm._kernel_matvec(prog.data, v)
    assert_allclose(got, K @ v, rtol=1e-10, atol=1e-10)
    assert_allclose(cm.formulations.svm._kernel_matvec(prog.data, np.zeros(150)), 0.0)


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_float32_columns_fit_twice_as_many_and_are_certified(C):
    # LIBSVM's Qfloat: float32 stored columns, float64 gradient. The memory bound holds
    # twice the columns; the point is certified by Program.certify (float64, from the
    # kernel) and is the float64-column optimum up to the columns' rounding
    pytest.importorskip("numba")
    from conicml.solvers._smo_cache import StoreCache

    prog = _program(400, C, seed=1)
    X, kernel = prog.data["X"], prog.data["kernel"]
    size = 60 * 400 * 8 / 2**20
    assert (StoreCache(kernel, X, 400, size, dtype=np.float32).capacity
            == 2 * StoreCache(kernel, X, 400, size, dtype=np.float64).capacity == 120)
    runs = {dt: cm.solve(prog, "smo", engine="numba", column_dtype=dt, cache_size=size)
            for dt in ("float32", "float64")}
    for dt, sol in runs.items():
        assert sol.extras["column_dtype"] == dt
        assert sol.status is Status.OPTIMAL and sol.residuals.source == "recomputed"
        assert sol.residuals.max() <= 1e-3
    assert_allclose(runs["float32"].objective, runs["float64"].objective, rtol=1e-6)
    clarabel = cm.solve(prog, "clarabel")
    assert_allclose(runs["float32"].objective, clarabel.objective, rtol=1e-3)
    # "auto": float32 at LIBSVM's tolerances, float64 for tight ones
    assert cm.solve(prog, "smo", engine="numba", tol=1e-3).extras["column_dtype"] == "float32"
    assert cm.solve(prog, "smo", engine="numba", tol=1e-8).extras["column_dtype"] == "float64"


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("engine, est_rtol", ENGINES)
def test_polishing_stops_on_the_certificate_gap_not_at_the_next_tol(engine, est_rtol,
                                                                    shrinking):
    # twonorm n = 300, C = 100: the gap is 2e-2 at tol 1e-3 and 2e-3 at 1e-4, so polishing
    # goes on at tol 1e-5; it stops as soon as the gap estimate (checked every
    # polish_every iterations, verified on every variable) meets gap_tol 9e-4, before
    # m - M reaches 1e-5 (measured: ~400 iterations against ~420 for a run to tol 1e-5)
    engine = _engine(engine)
    prog = _program(300, 100.0)
    sol = cm.solve(prog, "smo", **engine, shrinking=shrinking)
    assert sol.status is Status.OPTIMAL and sol.residuals.max() <= 1e-3
    assert sol.extras["polish_tol"] == pytest.approx(1e-5)
    assert 1e-5 < sol.extras["kkt_violation"] <= 1e-3
    assert sol.extras["certificate_gap_estimate"] <= 9e-4
    assert_allclose(sol.extras["certificate_gap_estimate"], sol.residuals.gap, rtol=est_rtol)
    full = cm.solve(prog, "smo", **engine, shrinking=shrinking, tol=1e-5, gap_tol=None)
    assert full.extras["kkt_violation"] <= 1e-5 and sol.iterations < full.iterations


def test_working_set_gap_is_the_certificate_gap_without_the_shrunk_terms():
    # _working_gap writes P - D as a sum of nonnegative per-variable terms
    # (c_i max(0, s_i) - alpha_i s_i, s_i = y_i (F_i - b)): over every variable it is the
    # certificate's gap (_certificate_gap, the closed form P - D of the certificate), and
    # leaving variables out can only lower it (their stale F is not counted)
    from conicml.solvers.smo import _certificate_gap, _working_gap

    prog = _program(300, 100.0)
    sol = cm.solve(prog, "smo", gap_tol=None, engine="numpy")
    y, c, a = prog.data["y"], prog.data["c"], sol.values["alpha"]
    K = prog.data["kernel"].gram(prog.data["X"])
    F = y - K @ (a * y)  # LIBSVM's -y G from the Gram matrix
    every = np.arange(300)
    full = _certificate_gap(a, F, y, c, 0.0)
    assert full > 1e-3  # an uncertified point: the terms are not all zero
    assert_allclose(_working_gap(a, F, y, c, 0.0, every), full, rtol=1e-9)
    assert_allclose(full, sol.residuals.gap, rtol=1e-6)  # and the certificate's number
    some = every[::2]
    assert _working_gap(a, F, y, c, 0.0, some) < full


def test_column_major_gram_is_borrowed_as_the_store():
    # soft_margin stores a precomputed Gram matrix column-major; the compiled loop then
    # reads its columns in place (no kernel value computed, no column copied, a cache too
    # small for one column does not matter) and reaches the NumPy loop's iterates and the
    # objective of the same problem with the RBF kernel (an independent column source)
    pytest.importorskip("numba")
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = cm.datasets.twonorm(400, dim=20, random_state=1)
    X = (X - X.mean(0)) / X.std(0)
    prog = cm.formulations.svm.soft_margin(rbf_kernel(X, X, gamma=1 / 20), y, C=10.0,
                                           kernel="precomputed", form="dual")
    assert prog.data["X"].flags.f_contiguous
    rbf = cm.formulations.svm.soft_margin(X, y, C=10.0, kernel="rbf", gamma=1 / 20,
                                          form="dual")
    ref = cm.solve(rbf, "smo", engine="numpy", tol=1e-8)
    fast = cm.solve(prog, "smo", engine="numba", tol=1e-8, cache_size=1e-3)
    assert fast.status is Status.OPTIMAL
    assert fast.extras["kernel_values"] == 0 and fast.extras["column_dtype"] == "float64"
    assert_allclose(fast.objective, ref.objective, rtol=1e-9)
    assert_allclose(fast.values["alpha"], ref.values["alpha"], atol=1e-6)
    # an explicit float32 store is honoured: columns are copied then
    f32 = cm.solve(prog, "smo", engine="numba", column_dtype="float32")
    assert f32.extras["column_dtype"] == "float32" and f32.extras["kernel_values"] > 0
