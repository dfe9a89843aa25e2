"""``solve_path``: warm-started hyper-parameter paths give the cold solves' certified answers."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest

import conicml as cm
from conicml import registry
from conicml.exceptions import OptionError
from conicml.formulations import svm
from conicml.kernels import make_kernel
from conicml.paths import path_order
from conicml.solution import Solution, Status


def _svm_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.5, 1.0, -1.0)
    return X, y


CS = [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]


def test_path_order():
    values = [1.0, 0.1, 10.0, 0.1]
    assert path_order(values, "ascending") == [1, 3, 0, 2]
    assert path_order(values, "descending") == [2, 0, 3, 1]
    assert path_order(values, "given") == [0, 1, 2, 3]
    assert path_order(values, lambda v: -v) == [2, 0, 1, 3]
    with pytest.raises(OptionError, match="order must be one of"):
        path_order(values, "largest-first")


def test_smo_path_matches_cold_solves_and_saves_iterations():
    X, y = _svm_data(300)

    def build(C):
        return svm.soft_margin(X, y, C, kernel="rbf", form="dual")

    values = CS[::-1]  # returned in the order given, solved ascending
    warm = cm.solve_path(build, values, "smo")
    cold = cm.solve_path(build, values, "smo", warm_start=False)
    tol = registry.get("smo").certify_tol
    for C, w, c in zip(values, warm, cold):
        assert w.status is Status.OPTIMAL and c.status is Status.OPTIMAL
        assert w.residuals.source == "recomputed"  # certified as conicml.solve certifies
        assert w.objective == pytest.approx(c.objective, rel=tol)
        assert ("x0" in w.extras["path"]["warm_start"]) == (C != min(CS))
        assert c.extras["path"]["warm_start"] == ()
    # the seeded alpha saves updates along the path (DeCoste-Wagstaff's point)
    assert sum(w.iterations for w in warm) < sum(c.iterations for c in cold)


@pytest.mark.parametrize("backend", ["clarabel", "ecos"])
def test_smo_path_objectives_equal_a_generic_backend(backend):
    # an independent solver: each value of the warm smo path against a cold interior point
    X, y = _svm_data(60, seed=1)

    def build(C):
        return svm.soft_margin(X, y, C, kernel="rbf", form="dual")

    warm = cm.solve_path(build, CS, "smo", tol=1e-6)
    ref = cm.solve_path(build, CS, backend)
    for w, r in zip(warm, ref):
        assert w.status is Status.OPTIMAL and r.status is Status.OPTIMAL
        assert w.objective == pytest.approx(r.objective, rel=1e-5)


def test_smo_warm_start_with_changed_class_weights_is_feasible():
    from conicml.solvers._warm import smo_alpha as warm_start_alpha

    X, y = _svm_data(80, seed=2)
    old = svm.soft_margin(X, y, 1.0, kernel="rbf", form="dual")
    new = svm.soft_margin(X, y, 1.0, kernel="rbf", form="dual", class_weight={1: 3.0, -1: 0.5})
    x0 = warm_start_alpha(cm.solve(old, "smo"), old, new)["x0"]
    c = np.asarray(new.data["c"])
    assert np.all(x0 >= 0) and np.all(x0 <= c)
    assert abs(float(y @ x0)) <= 1e-9 * c.sum()
    assert cm.solve(new, "smo", x0=x0).status is Status.OPTIMAL
    # other labels: nothing to start from
    other = svm.soft_margin(X, -y, 1.0, kernel="rbf", form="dual")
    assert warm_start_alpha(cm.solve(old, "smo"), old, other) == {}


@pytest.mark.parametrize("kernel", ["rbf", "precomputed"])
def test_smo_active_set_warm_start_is_the_next_optimum(kernel):
    # the active-set prediction (the SVM regularization path's linear KKT system) lands on
    # the next value's optimum: its dual objective equals a tight cold solve's (an
    # independent run from alpha = 0), and the products handed to smo equal K(x0 y) and
    # K(c_B y_B) recomputed from sklearn's Gram matrix
    from sklearn.metrics.pairwise import rbf_kernel

    from conicml.solvers._warm import smo_alpha as warm_start_alpha

    X, y = _svm_data(200, seed=4)
    K = rbf_kernel(X, X, gamma=0.25)

    def build(C):
        if kernel == "rbf":
            return svm.soft_margin(X, y, C, kernel="rbf", gamma=0.25, form="dual")
        return svm.soft_margin(K, y, C, kernel="precomputed", form="dual")

    old, new = build(3.0), build(6.0)
    start = warm_start_alpha(cm.solve(old, "smo", tol=1e-8), old, new)
    x0 = start["x0"]
    c = np.asarray(new.data["c"])
    assert np.all(x0 >= 0) and np.all(x0 <= c) and abs(float(y @ x0)) <= 1e-9 * c.sum()
    Kv, Kb = start["x0_products"]
    np.testing.assert_allclose(Kv, K @ (x0 * y), atol=1e-10)
    np.testing.assert_allclose(Kb, K @ np.where(x0 >= c, c * y, 0.0), atol=1e-10)
    cold = cm.solve(new, "smo", tol=1e-8)
    dual = float(x0.sum() - 0.5 * (x0 * y) @ K @ (x0 * y))
    assert dual == pytest.approx(cold.objective, rel=1e-7)
    warm = cm.solve(new, "smo", **start)
    assert warm.status is Status.OPTIMAL and warm.iterations < cold.iterations / 10
    with pytest.raises(OptionError, match="x0_products"):
        cm.solve(new, "smo", x0_products=start["x0_products"])


@pytest.mark.parametrize("definite", [True, False])
def test_smo_predictor_kkt_system_is_the_bordered_solve(definite):
    # the free variables' KKT system [Q y; y' 0][a; b] = [r; s] by the Cholesky factor of
    # Q and its Schur complement, or (Q not positive definite: an indefinite
    # "precomputed" kernel) by LU of the bordered matrix: numpy's dense solve of the
    # bordered system is the reference
    from conicml.solvers._warm import _kkt_solve

    rng = np.random.default_rng(5)
    m = 12
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    B = rng.normal(size=(m, m))
    K = B @ B.T + m * np.eye(m) if definite else B + B.T
    r, s = rng.normal(size=m), 0.3
    a, b = _kkt_solve(y, K, r, s)
    A = np.block([[np.outer(y, y) * K, y[:, None]], [y[None, :], np.zeros((1, 1))]])
    ref = np.linalg.solve(A, np.append(r, s))
    np.testing.assert_allclose(np.append(a, b), ref, rtol=1e-8, atol=1e-10)


def test_smo_predictor_factor_update_is_the_bordered_solve():
    # the free sets' factor carried from one round to the next (variables added, dropped,
    # both, none; and a change large enough to factor afresh): each solve against numpy's
    # dense solve of the bordered KKT system [Q y; y' 0][a; b] = [r; s] on that free set
    from conicml.contracts.kernel_columns import KernelColumns
    from conicml.solvers._warm import _FreeFactor

    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 5))
    y = np.where(rng.random(120) < 0.5, 1.0, -1.0)
    kernel = make_kernel("rbf", X, gamma=0.3)
    K = kernel.gram(X)
    columns = KernelColumns(kernel, X)
    factor = _FreeFactor(columns, y)
    base = rng.choice(120, 40, replace=False)
    outside = np.setdiff1d(np.arange(120), base)
    big = np.concatenate([base, outside[:30]])
    # after the large change, small ones against the new factor (its columns of
    # L^{-1}B computed afresh): a variable dropped, then variables added that were added
    # to the old factor too, then the dropped one back
    sets = [base, np.concatenate([base, outside[:3]]), base[5:],
            np.concatenate([base[2:], outside[40:44]]), base, big, big[1:],
            np.concatenate([big[1:], outside[40:42]]), np.concatenate([big, outside[40:42]])]
    for free in sets:
        r, s = rng.normal(size=free.size), float(rng.normal())
        a, b = factor.solve(free, r, s)
        yf = y[free]
        A = np.block([[np.outer(yf, yf) * K[np.ix_(free, free)], yf[:, None]],
                      [yf[None, :], np.zeros((1, 1))]])
        ref = np.linalg.solve(A, np.append(r, s))
        np.testing.assert_allclose(np.append(a, b), ref, rtol=1e-8, atol=1e-8)
    assert factor.updates == 7 and factor.refactors == 2  # the first set and big


def test_the_compiled_status_update_is_its_numpy_twin():
    # the predictor's status update, compiled and NumPy (the NumPy twin is the
    # reference: the same margins, the same comparisons), on statuses of every kind
    pytest.importorskip("numba")
    from conicml.solvers._smo_numba import active_set_step
    from conicml.solvers._warm import MARGIN_TOL, _step_numpy

    rng = np.random.default_rng(11)
    n = 300
    for _ in range(5):
        status = rng.integers(0, 3, size=n)
        free = np.flatnonzero(status == 1)
        u = rng.uniform(0.5, 2.0, size=n)
        a_free = rng.uniform(-0.5, 2.5, size=free.size)
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        g, p = rng.normal(size=n), rng.normal(size=n)
        b = float(rng.normal())
        got = active_set_step(status, free, a_free, u, y, g, p, b, MARGIN_TOL)
        ref = _step_numpy(status, free, a_free, u, y, g, p, b, MARGIN_TOL)
        assert got[1] == ref[1] > 0
        for x, r in zip(got[:1] + got[2:5], ref[:1] + ref[2:5]):
            np.testing.assert_array_equal(x, r)
        # the balance: one sum in another order
        assert got[5] == pytest.approx(ref[5], rel=1e-12, abs=1e-12 * n)


@pytest.mark.parametrize("backend", ["clarabel", "ecos"])
def test_a_weighted_smo_path_equals_cold_smo_and_a_generic_backend(backend):
    # class and sample weights (per-variable costs): each value of the warm smo path
    # against a cold smo solve and a cold interior point (independent solvers)
    X, y = _svm_data(80, seed=3)
    weights = {"class_weight": {1: 2.5, -1: 0.8}, "sample_weight": np.linspace(0.5, 1.5, 80)}

    def build(C):
        return svm.soft_margin(X, y, C, kernel="rbf", form="dual", **weights)

    warm = cm.solve_path(build, CS, "smo", tol=1e-6)
    cold = cm.solve_path(build, CS, "smo", tol=1e-6, warm_start=False)
    ref = cm.solve_path(build, CS, backend)
    for w, c, r in zip(warm, cold, ref):
        assert w.status is Status.OPTIMAL and r.status is Status.OPTIMAL
        assert w.objective == pytest.approx(c.objective, rel=1e-6)
        assert w.objective == pytest.approx(r.objective, rel=1e-5)
    assert sum(w.iterations for w in warm[1:]) < sum(c.iterations for c in cold[1:])


@pytest.mark.parametrize("weights", [{}, {"class_weight": {1: 3.0, -1: 0.7},
                                         "sample_weight": np.linspace(0.5, 2.0, 200)}])
def test_smo_warm_starts_share_kernel_columns_along_a_path(weights):
    # the path's workspace keeps the warm start's kernel columns from one value to the
    # next (same inputs, same kernel), and the bounded product K_B(c_B y_B), carried to
    # the next costs by their ratio (one per class and sample weight, equal up to
    # rounding) plus the columns whose status differs; and the free set's Cholesky factor,
    # updated by its bordered Schur complement rather than computed afresh. The starts
    # are those computed afresh, to the rounding of the same KKT system solved two ways
    # (about cond(Q_FF) eps, cond(Q_FF) <= 2e3 here: 1e-10 relative); the products
    # K(x0 y) then differ by at most sum |dx0| (RBF values <= 1)
    from conicml.solvers._warm import smo_alpha as warm_start_alpha

    X, y = _svm_data(200, seed=4)
    progs = [svm.soft_margin(X, y, C, kernel="rbf", gamma=0.25, form="dual", **weights)
             for C in (3.0, 6.0, 12.0, 24.0)]
    sols = [cm.solve(p, "smo", tol=1e-8) for p in progs]
    workspace: dict = {}
    for k in range(3):
        shared = warm_start_alpha(sols[k], progs[k], progs[k + 1], workspace=workspace)
        fresh = warm_start_alpha(sols[k], progs[k], progs[k + 1])
        np.testing.assert_allclose(shared["x0"], fresh["x0"], rtol=1e-10, atol=1e-12)
        bound = 1e-10 * float(np.sum(np.abs(fresh["x0"]))) + 1e-12
        for a, b in zip(shared["x0_products"], fresh["x0_products"]):
            np.testing.assert_allclose(a, b, rtol=0, atol=bound)
        if k == 0:
            held = workspace["smo_columns"]
        assert workspace["smo_bound"] is not None
    assert workspace["smo_columns"] is held
    # other inputs: the held columns are not used
    other = svm.soft_margin(X + 1.0, y, 6.0, kernel="rbf", gamma=0.25, form="dual")
    warm_start_alpha(sols[0], progs[0], other, workspace=workspace)
    assert workspace["smo_columns"] is not held


def test_path_reports_a_failed_value_and_goes_on_cold(monkeypatch):
    # a solver that fails on one value: the path keeps that status, the next value is cold
    smo = registry.get("smo")

    def flaky(program, *, x0=None, x0_products=None):
        if program.data["C"] == 1.0:
            return Solution(status=Status.INFEASIBLE, solver="flaky", message="test value")
        return smo.function(program, x0=x0, x0_products=x0_products)

    monkeypatch.setitem(registry._REGISTRY, "flaky",
                        dataclasses.replace(smo, name="flaky", function=flaky))
    X, y = _svm_data(100, seed=3)
    sols = cm.solve_path(lambda C: svm.soft_margin(X, y, C, kernel="rbf", form="dual"),
                         [0.1, 1.0, 3.0, 10.0], "flaky")
    assert [s.status for s in sols] == [Status.OPTIMAL, Status.INFEASIBLE, Status.OPTIMAL,
                                        Status.OPTIMAL]
    assert [("x0" in s.extras["path"]["warm_start"]) for s in sols] == [False, True, False,
                                                                         True]


def test_path_refuses_a_warm_start_option_of_its_own():
    X, y = _svm_data(40)
    with pytest.raises(OptionError, match="supplies x0"):
        cm.solve_path(lambda C: svm.soft_margin(X, y, C, form="dual"), [0.1, 1.0], "smo",
                      x0=np.zeros(40))
    with pytest.raises(TypeError, match="not a conicml Program"):
        cm.solve_path(lambda C: None, [1.0], "smo")


# ---- every solver with a registered warm start: a warm path equals the cold solves ------

def _two_class(n=120, d=3, seed=0, shift=1.0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    X = rng.normal(size=(n, d)) + shift * y[:, None] / np.sqrt(d)
    return X, y


def _ordinal(seed=1, m=120, dim=3, r=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, dim))
    s = X @ rng.normal(size=dim) + 0.5 * rng.normal(size=m)
    return X, np.digitize(s, np.quantile(s, np.linspace(0, 1, r + 1)[1:-1])) + 1


def _case(solver):
    """(build, values, order, options) of a seeded path for ``solver``."""
    if solver == "smo":
        X, y = _two_class()
        return (lambda C: svm.soft_margin(X, y, C, kernel="rbf", form="dual"),
                [0.1, 1.0, 10.0], "ascending", {})
    if solver == "dcd":
        X, y = _two_class(n=200, d=4)
        return (lambda C: svm.soft_margin(X, y, C, form="dual"), [0.1, 1.0, 10.0],
                "ascending", {"tol": 1e-6})
    if solver in ("pegasos", "weighted-pegasos"):
        X, y = _two_class(n=200, d=4)
        return (lambda C: svm.soft_margin(X, y, C, form="primal"), [0.1, 0.3, 1.0],
                "ascending", {"tol": 1e-4, "random_state": 0})
    if solver in ("rank-tr", "rank-newton"):
        from conicml.formulations import ranking

        X, y = _two_class(n=150, d=3, seed=4)
        return (lambda lam: ranking.rankrc(X, y, lam, kernel="rbf", gamma=0.5),
                [1e-3, 1e-2, 1e-1], "descending", {})
    if solver == "smo-or":
        from conicml.formulations.svor_dual import svor_dual

        X, y = _ordinal()
        return (lambda C: svor_dual(X, y, C=C, kernel="rbf", gamma=0.3), [0.1, 1.0, 10.0],
                "ascending", {"tol": 1e-6})
    if solver == "cbor-smo":
        from conicml.formulations import ordinal

        rng = np.random.default_rng(2)
        r, k, dim = 4, 60, 3
        ranks = np.concatenate([np.arange(1, r + 1), rng.integers(1, r + 1, k - r)])
        u = rng.normal(size=dim)
        means = rng.normal(size=(k, dim)) + 3.0 * np.outer(ranks - (r + 1) / 2,
                                                            u / np.linalg.norm(u))
        clusters = cm.ClusterMoments(means, rng.uniform(0, 0.5, k), np.ones(k), ranks)
        return (lambda eta: ordinal.cbor(clusters, W=4.0, accuracy=eta, form="dual"),
                [0.5, 0.6, 0.7], "ascending", {"tol": 1e-7})
    if solver == "cbc-smo":
        from conicml.formulations import cbc

        rng = np.random.default_rng(8)
        k, dim = 50, 3
        y = np.where(rng.random(k) < 0.5, 1.0, -1.0)
        y[:2] = [1.0, -1.0]
        means = rng.normal(size=(k, dim)) + y[:, None] / np.sqrt(dim)
        clusters = cm.ClusterMoments(means, 0.5 * rng.random(k), np.full(k, 5), y)
        return (lambda C: cbc.cbc(clusters, C, 0.7, form="dual"), [0.1, 1.0, 10.0],
                "ascending", {})
    if solver == "simplex-smo":
        from conicml.formulations import qpfs

        rng = np.random.default_rng(5)
        L = rng.normal(size=(15, 15)) / 4
        F = rng.random(15)
        return (lambda a: qpfs.simplex_qp(L, F, a), [0.2, 0.5, 0.8], "ascending", {})
    if solver == "ellipsoid-newton":
        from conicml.formulations import specified_rates as sr

        X, y = _two_class(n=200, d=4, shift=3.0)
        return (lambda eta: sr.specified_rates(X, y, eta, eta, ridge=1e-8),
                [0.1, 0.2, 0.3], "ascending", {})
    if solver in ("ils-newton", "dinkelbach"):
        from conicml.formulations import minimax as mm

        X, y = _two_class(n=200, d=4, shift=2.0)
        beta0_max = mm.bmpm(X, y, 0.0).data["beta0_max"]
        return (lambda frac: mm.bmpm(X, y, frac * beta0_max), [0.2, 0.4, 0.6],
                "ascending", {})
    if solver in ("quadratic-interpolation", "envelope-newton"):
        from conicml.formulations import m4

        X, y = _two_class(n=50, d=3, shift=1.5, seed=6)
        return (lambda C: m4.m4(X, y, C), [0.05, 0.1, 0.2], "ascending", {})
    raise AssertionError(solver)


WARM_SOLVERS = ["smo", "dcd", "pegasos", "weighted-pegasos", "rank-tr", "rank-newton", "smo-or",
                "cbor-smo", "cbc-smo", "simplex-smo", "ellipsoid-newton", "ils-newton",
                "dinkelbach", "quadratic-interpolation", "envelope-newton"]


#: the generic backends: their path re-uses the compiled cvxpy problem (tested below)
REUSE_SOLVERS = ["clarabel", "ecos", "scs", "osqp"]


def test_every_registered_warm_start_is_tested():
    registered = {e.name for e in registry.entries() if e.warm_start is not None}
    assert registered == set(WARM_SOLVERS) | set(REUSE_SOLVERS)


@pytest.mark.parametrize("solver", WARM_SOLVERS)
def test_warm_path_equals_cold_solves(solver):
    build, values, order, options = _case(solver)
    warm = cm.solve_path(build, values, solver, order=order, **options)
    cold = cm.solve_path(build, values, solver, order=order, warm_start=False, **options)
    tol = registry.get(solver).certify_tol  # the certificate's own tolerance
    for w, c in zip(warm, cold):
        assert w.status is Status.OPTIMAL, w.message
        assert c.status is Status.OPTIMAL, c.message
        assert w.objective == pytest.approx(c.objective, rel=tol, abs=tol)
    started = [w.extras["path"]["warm_start"] for w in warm]
    assert sorted("x0" in s for s in started) == [False, True, True]


def test_an_svor_path_past_its_hard_margin_point_needs_no_update():
    # gamma = 3 separates the ordinal instance: at C = 1000 no variable is at its bound
    # (largest 112), so that point satisfies the KKT conditions at every larger C (the
    # upper bounds are inactive) and smo-or confirms it from the warm start (svor_pair
    # keeps r = 1); the start scaled by C_new / C_old = 10 is far from it
    from conicml.formulations.svor_dual import svor_dual

    X, y = _ordinal()
    build = lambda C: svor_dual(X, y, C=C, kernel="rbf", gamma=3.0)  # noqa: E731
    first, second = cm.solve_path(build, [1e3, 1e4], "smo-or", tol=1e-6)
    assert max(first.values["alpha"].max(), first.values["alpha_star"].max()) < 1e3
    assert second.status is Status.OPTIMAL and second.extras["path"]["warm_start"] == ("x0",)
    assert second.iterations == 0
    cold = cm.solve(build(1e4), "smo-or", tol=1e-6)
    assert second.objective == pytest.approx(cold.objective, rel=1e-3)  # smo-or's certify_tol
    scaled = cm.solve(build(1e4), "smo-or", tol=1e-6,
                      x0=(10 * first.values["alpha"], 10 * first.values["alpha_star"]))
    assert scaled.iterations > 100


def test_the_svor_warm_start_is_the_best_scaling_of_the_previous_point():
    # below the hard-margin point: D(r x) = r S - r^2 Q / 2 along the ray, maximal at the
    # factor svor_pair picks (S / Q within [0, C_new / C_old]), so the start's dual value
    # is at least that of the unscaled and of the fully scaled point
    from conicml.formulations.svor_dual import svor_dual
    from conicml.solvers._warm import svor_pair

    X, y = _ordinal()
    old, new = (svor_dual(X, y, C=C, kernel="rbf", gamma=0.3) for C in (1.0, 10.0))
    previous = cm.solve(old, "smo-or", tol=1e-6)
    a, s = previous.values["alpha"], previous.values["alpha_star"]
    start = svor_pair(previous, old, new)["x0"]
    con = new.data["svor"]

    def dual(x0):
        x = con.pack(*x0)
        cl, sig, _ = con.layout()
        v = np.bincount(cl, weights=-sig * x, minlength=X.shape[0])
        return float(x.sum()) - 0.5 * float(v @ con.kernel.gram(X) @ v)

    assert dual(start) >= max(dual((a, s)), dual((10 * a, 10 * s))) - 1e-9 * abs(dual(start))
    assert cm.solve(new, "smo-or", tol=1e-6, x0=start).status is Status.OPTIMAL


def test_a_bmpm_path_across_an_infeasible_beta0_reports_it_and_goes_on_cold():
    # beta0 >= beta0_max (seed 004 eq. 3.44) is infeasible: that value's status says so
    from conicml.formulations import minimax as mm

    X, y = _two_class(n=200, d=4, shift=2.0)
    beta0_max = mm.bmpm(X, y, 0.0).data["beta0_max"]
    fracs = [0.3, 0.6, 1.2, 0.9]  # solved in the given order: 1.2 infeasible, then 0.9 cold
    sols = cm.solve_path(lambda f: mm.bmpm(X, y, min(f * beta0_max, 0.999)), fracs,
                         "ils-newton", order="given")
    assert [s.status for s in sols] == [Status.OPTIMAL, Status.OPTIMAL, Status.INFEASIBLE,
                                        Status.OPTIMAL]
    assert [s.extras["path"]["warm_start"] for s in sols] == [(), ("x0",), ("x0",), ()]


def test_with_cost_is_soft_margin_at_another_C():
    # the path's cheap rebuild: the same data and solution as the full formulation
    X, y = _svm_data(60, seed=6)
    first = svm.soft_margin(X, y, 0.5, kernel="rbf", form="dual", class_weight={1: 2.0})
    other, ref = svm.with_cost(first, 3.0), svm.soft_margin(X, y, 3.0, kernel="rbf",
                                                           form="dual", class_weight={1: 2.0})
    for key in ("c", "C", "cost_scale"):
        np.testing.assert_allclose(other.data[key], ref.data[key], rtol=1e-15)
    assert other.kind == ref.kind and other.description == ref.description
    assert cm.solve(other, "smo").objective == pytest.approx(cm.solve(ref, "smo").objective,
                                                              rel=1e-12)
    with pytest.raises(cm.ProgramError, match="soft-margin"):
        svm.with_cost(svm.hard_margin(X, y, form="dual"), 1.0)


def test_with_cost_warns_at_a_badly_scaled_C_as_soft_margin_does():
    X, y = _svm_data(40, seed=7)
    X = X * 1e3  # max_i K(x_i, x_i) ~ 1e7: C = 1e3 passes COST_SCALE_LIMIT = 1e9
    first = svm.soft_margin(X, y, 1e-3, form="dual")
    with pytest.warns(cm.ConicMLWarning, match="badly scaled SVM"):
        far = svm.with_cost(first, 1e3)
    assert far.data["C"] == 1e3


@pytest.mark.parametrize("solver", ["rank-tr", "rank-newton"])
def test_a_rank_path_extrapolates_and_shares_the_eigen_coordinates(solver):
    # one program's kernel arrays along a lambda path (as RankRCClassifierCV builds it):
    # the warm start is never worse than the previous beta, the eigen-coordinates are
    # computed once and passed on, and every value is the cold solve's certified optimum
    from conicml.contracts.ranking_ops import objective
    from conicml.formulations import ranking

    X, y = _two_class(n=160, d=3, seed=4)
    first = ranking.rankrc(X, y, 1.0, kernel="rbf", gamma=0.5)
    lams = 2.0 ** np.arange(0, -21, -4)

    def build(lam):
        return ranking.with_lambda(first, lam)

    warm = cm.solve_path(build, lams, solver, order="descending")
    cold = cm.solve_path(build, lams, solver, order="descending", warm_start=False)
    for w, c in zip(warm, cold):
        assert w.status is Status.OPTIMAL and c.status is Status.OPTIMAL, (w.message, c.message)
        assert w.objective == pytest.approx(c.objective, rel=1e-9)
    started = [w.extras["path"]["warm_start"] for w in warm]
    assert started[0] == ()
    if solver == "rank-newton":  # it always works in the eigen-coordinates
        assert all("linearization" in s for s in started[1:])
    else:  # after a value that needed the exact direction, or as many Hessian products
        # as EXACT_HANDOVER PCG runs that would switch rank-tr to it
        from conicml.solvers._warm import EXACT_HANDOVER

        r = first.data["rank"].n_basis
        order = np.argsort(-lams)
        needed = [w.extras["exact_directions"] > 0 for w in warm]
        assert any(needed[:-1])
        for prev, k in zip(order[:-1], order[1:]):
            handover = (warm[prev].extras["exact_directions"] > 0
                        or warm[prev].extras["hessian_products"] >= EXACT_HANDOVER * r / 16)
            assert ("linearization" in started[k]) == handover
    # the start is the better of the previous beta and the secant in log lambda
    from conicml.solvers._warm import rank_beta

    if solver == "rank-tr":  # the handover by Hessian products alone
        lot = dataclasses.replace(warm[0], extras={**warm[0].extras, "exact_directions": 0,
                                                   "hessian_products": EXACT_HANDOVER * r})
        few = dataclasses.replace(lot, extras={**lot.extras, "hessian_products": 1})
        assert "linearization" in rank_beta(lot, build(lams[0]), build(lams[1]), workspace={})
        assert "linearization" not in rank_beta(few, build(lams[0]), build(lams[1]),
                                                workspace={})

    workspace: dict = {}
    rank_beta(warm[0], build(lams[0]), build(lams[1]), workspace=workspace)
    offered = rank_beta(warm[1], build(lams[1]), build(lams[2]), workspace=workspace)
    new = build(lams[2]).data["rank"]
    prev = warm[1].values["beta"]
    # the secant as x0, the previous beta as the fallback with its objective at the new
    # lambda (the previous objective plus the change of the regulariser, closed form)
    beta_fb, f_fb = offered["x0_fallback"]
    assert np.array_equal(beta_fb, prev) and not np.array_equal(offered["x0"], prev)
    assert f_fb == pytest.approx(objective(new, prev), rel=1e-10)


def test_a_rank_path_starts_exactly_where_every_pair_is_linear():
    # at a large lambda every pair sits in the loss's linear piece, F is then
    # c + g^T beta + lambda/2 beta^T K_RR beta and its optimum is proportional to 1/lambda:
    # the scaled previous beta is the next optimum (zero iterations, certified), equal to
    # the cold rank-tr solve and to clarabel (an independent interior-point solve)
    from conicml.contracts.ranking_ops import gap_bound
    from conicml.formulations import ranking
    from conicml.solvers._warm import rank_beta

    X, y = _two_class(n=60, d=3, seed=6)
    first = ranking.rankrc(X, y, 1.0, kernel="rbf", gamma=0.5)
    lams = [4.0, 1.0]

    def build(lam):
        return ranking.with_lambda(first, lam)

    warm = cm.solve_path(build, lams, "rank-tr", order="descending")
    assert warm[0].extras["quadratic_pairs"] == 0  # every pair linear at lambda = 4
    assert warm[1].extras["quadratic_pairs"] == 0  # and still at lambda = 1
    offered = rank_beta(warm[0], build(4.0), build(1.0), workspace={})
    np.testing.assert_allclose(offered["x0"], 4.0 * warm[0].values["beta"], rtol=1e-15)
    new = build(1.0)
    sol = warm[1]
    assert sol.status is Status.OPTIMAL and sol.iterations == 0, sol.message
    assert gap_bound(new.data["rank"], sol.values["beta"]) <= 1e-5  # the registered certify_tol
    cold = cm.solve(new, "rank-tr")
    assert cold.status is Status.OPTIMAL and cold.iterations > 0
    f = new.decode(sol)["objective"]
    assert f == pytest.approx(new.decode(cold)["objective"], rel=1e-9)
    pytest.importorskip("clarabel")
    generic = new.decode(cm.solve(new, "clarabel", eps_abs=1e-10, eps_rel=1e-10))["objective"]
    assert f == pytest.approx(generic, rel=1e-6)  # clarabel's own accuracy
    # where the previous optimum has a quadratic pair, the secant start stays
    mixed = dataclasses.replace(warm[0], extras={**warm[0].extras, "quadratic_pairs": 3})
    assert "x0" in rank_beta(mixed, build(4.0), build(1.0), workspace={})
    assert not np.allclose(rank_beta(mixed, build(4.0), build(1.0))["x0"],
                           4.0 * warm[0].values["beta"])


def test_a_rank_path_forms_the_hessian_anew_far_from_the_kept_one():
    # the exact mode preconditions its CG by the loss Hessian kept with the
    # eigen-coordinates; one kept at a lambda REFERENCE_SPAN times larger (or smaller) is
    # not used: the first direction forms the Hessian anew. Either way the answer is the
    # cold solve's certified optimum, and clarabel's (an independent interior-point solve)
    from conicml.contracts.ranking_ops import LinearizedRanking
    from conicml.formulations import ranking
    from conicml.solvers.rank_tr import REFERENCE_SPAN

    X, y = _two_class(n=60, d=3, seed=8)
    first = ranking.rankrc(X, y, 1.0, kernel="rbf", gamma=0.5)
    lin = LinearizedRanking(first.data["rank"])
    cm.solve(first, "rank-tr", direction="exact", linearization=lin)
    assert lin.reference_lambda() == 1.0 and lin.reference_curvature() is not None
    for lam, anew in [(0.5, False), (1.0 / REFERENCE_SPAN, True), (REFERENCE_SPAN, True)]:
        kept = lin.reference_curvature()
        program = ranking.with_lambda(first, lam)
        sol = cm.solve(program, "rank-tr", direction="exact", linearization=lin)
        cold = cm.solve(program, "rank-tr")
        assert sol.status is Status.OPTIMAL and cold.status is Status.OPTIMAL, sol.message
        assert sol.objective == pytest.approx(cold.objective, rel=1e-9)
        formed = lin.reference_curvature() is not kept
        assert formed == anew and (sol.extras["explicit_hessians"] >= 1) == anew
        if anew:
            assert lin.reference_lambda() == lam
        lin.keep_curvature(kept)  # back to the Hessian kept at lambda = 1
    pytest.importorskip("clarabel")
    generic = program.decode(cm.solve(program, "clarabel", eps_abs=1e-10, eps_rel=1e-10))
    assert sol.objective == pytest.approx(generic["objective"], rel=1e-6)  # clarabel's accuracy


@pytest.mark.parametrize("solver, options", [("rank-tr", {}), ("rank-tr", {"direction": "exact"}),
                                             ("rank-newton", {})])
def test_a_rank_solve_starts_from_the_better_of_x0_and_its_fallback(solver, options):
    # the solve evaluates F at x0 and takes x0_fallback when that is not lower: the run
    # is then the run from the fallback itself (same iterations, same objective)
    from conicml.contracts.ranking_ops import objective
    from conicml.formulations import ranking

    X, y = _two_class(n=120, d=3, seed=5)
    program = ranking.rankrc(X, y, 1e-2, kernel="rbf", gamma=0.5)
    rank = program.data["rank"]
    near = cm.solve(ranking.with_lambda(program, 2e-2), solver).values["beta"]
    far = 5.0 * near  # F(far) > F(near) at this lambda
    f_near, f_far = objective(rank, near), objective(rank, far)
    assert f_far > f_near
    for x0, fallback, start in [(far, (near, f_near), near), (near, (far, f_far), near),
                                (near, (far, 0.5 * f_near), far)]:
        sol = cm.solve(program, solver, x0=x0, x0_fallback=fallback, **options)
        ref = cm.solve(program, solver, x0=start, **options)
        assert sol.status is Status.OPTIMAL
        assert sol.iterations == ref.iterations
        assert sol.objective == pytest.approx(ref.objective, rel=1e-12)
    for bad in ["abc", (near, math.nan), (near[:-1], f_near), (near,)]:
        with pytest.raises(OptionError, match="x0_fallback"):
            cm.solve(program, solver, x0=far, x0_fallback=bad)


# ---- generic backends: a path over the SVM's C re-uses the compiled cvxpy problem -------

@pytest.mark.parametrize("solver", ["clarabel", "ecos"])
@pytest.mark.parametrize("form, kernel", [("primal", "linear"), ("dual", "rbf")])
def test_a_generic_path_reuses_the_compiled_problem_and_equals_cold_solves(solver, form,
                                                                           kernel):
    pytest.importorskip(solver)
    X, y = _two_class(n=80, d=3)
    first = svm.soft_margin(X, y, 0.1, kernel=kernel, form=form, class_weight="balanced")
    values = [0.1, 1.0, 10.0]
    warm = cm.solve_path(lambda C: svm.with_cost(first, C), values, solver)
    # the reference: each value built from scratch and solved cold
    cold = [cm.solve(svm.soft_margin(X, y, C, kernel=kernel, form=form,
                                     class_weight="balanced"), solver) for C in values]
    tol = registry.get(solver).certify_tol  # the certificate's own tolerance
    for w, c in zip(warm, cold):
        assert w.status is Status.OPTIMAL, w.message
        assert c.status is Status.OPTIMAL, c.message
        # certified from the program of its own value (the residuals are recomputed)
        assert w.residuals.source == "recomputed"
        assert max(w.residuals.primal, w.residuals.dual, w.residuals.gap) <= tol
        assert w.objective == pytest.approx(c.objective, rel=tol, abs=tol)
    assert [w.extras.get("problem_reused") for w in warm] == [None, True, True]
    assert [w.extras["path"]["warm_start"] for w in warm] == [(), ("parameters_from",),
                                                             ("parameters_from",)]
    assert not first.is_built  # the user's program was never touched


def test_a_structure_mismatch_falls_back_to_a_fresh_problem():
    pytest.importorskip("clarabel")
    X, y = _two_class(n=80, d=3)
    X2 = X.copy()
    X2[0, 0] += 1.0  # another data set at the second value: the structure differs

    def build(C):
        return svm.soft_margin(X if C < 1 else X2, y, C, form="primal")

    warm = cm.solve_path(build, [0.1, 1.0], "clarabel")
    assert warm[1].extras["problem_reused"] is False
    assert "'X'" in warm[1].extras["problem_reuse_refused"]
    cold = cm.solve(build(1.0), "clarabel")
    assert warm[1].status is Status.OPTIMAL
    assert warm[1].objective == pytest.approx(cold.objective, rel=5e-4)
    # another form (dual after primal) is another learner: offered, refused, compiled anew
    mixed = cm.solve_path(lambda C: svm.soft_margin(X, y, C, form="primal" if C < 1
                                                    else "dual"), [0.1, 1.0], "clarabel")
    assert mixed[1].extras["problem_reused"] is False


def test_adopt_problem_moves_the_problem_and_refuses_what_differs():
    X, y = _two_class(n=40, d=3)
    old = svm.soft_margin(X, y, 1.0, form="dual")
    new = svm.with_cost(old, 3.0)
    assert new.adopt_problem(old) == "the other program's problem is not built"
    problem = old.problem
    assert svm.hard_margin(X, y, form="dual").adopt_problem(old) == (
        "the program declares no parameters")
    assert new.adopt_problem(old) is None
    assert new.problem is problem and not old.is_built
    np.testing.assert_array_equal(new.parameters["c"].value, new.data["c"])
    # the old program rebuilds its own problem at its own costs
    np.testing.assert_array_equal(old.parameters["c"].value, old.data["c"])
    assert old.problem is not problem
    other = svm.soft_margin(X, -y, 1.0, form="dual")
    assert other.adopt_problem(old) == "its data 'y' differs"
    assert not other.is_built
    # a pickled program keeps its declaration (its problem is rebuilt, never pickled)
    copy = pickle.loads(pickle.dumps(new))
    assert copy.parameter_keys == {"c": "c"} and not copy.is_built
    assert copy.adopt_problem(new) is None
