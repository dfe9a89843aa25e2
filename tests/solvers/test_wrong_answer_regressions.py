"""Regression tests of issue 11 ("no silent wrong answers"), part B.

Each test reproduces an instance of the issue verbatim, then a family around it.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import conicml as cm
from conicml.exceptions import ProgramError
from conicml.formulations import ordinal


def issue_data():
    """The issue's two-class instance (20 points, 3 features)."""
    r = np.random.default_rng(0)
    X = np.r_[r.normal(1, 1, (10, 3)), r.normal(-1, 1, (10, 3))]
    y = np.r_[np.ones(10), -np.ones(10)]
    return X, y


# -- item 9: ClusterMoments.from_sums with SS < ||LS||^2 / N -----------------------------

def test_from_sums_refuses_inconsistent_square_sums():
    with pytest.raises(ProgramError, match=r"square_sums\[0\].*smaller"):
        cm.ClusterMoments.from_sums([2], [[1.0, 1.0]], [0.5], [1])
    # the second cluster is the bad one: the message names it
    with pytest.raises(ProgramError, match=r"square_sums\[1\]"):
        cm.ClusterMoments.from_sums([2, 2], [[1.0, 1.0], [2.0, 0.0]], [5.0, 1.0], [1, 2])


@pytest.mark.parametrize("scale", [1e-8, 1.0, 1e8])
def test_from_sums_tolerates_round_off(scale):
    """A zero- or tiny-radius cluster far from the origin: SS/N - ||mu||^2 is round-off."""
    rng = np.random.default_rng(1)
    X = (1e3 + 1e-9 * rng.normal(size=(7, 3))) * scale
    mom = cm.ClusterMoments.from_sums([7], X.sum(0)[None], [np.sum(X * X)], [1])
    # sigma^2 = mean ||x - mu||^2, computed centred (exact to round-off of the spread)
    ref = np.sqrt(np.mean(np.sum((X - X.mean(0)) ** 2, axis=1)))
    assert mom.sigmas[0] <= max(ref, 1e-5 * 1e3 * scale)
    # and exact sums of real clusters give the centred radius
    Y = rng.normal(size=(9, 3)) * scale
    mom = cm.ClusterMoments.from_sums([9], Y.sum(0)[None], [np.sum(Y * Y)], [1])
    assert_allclose(mom.sigmas[0], np.sqrt(np.mean(np.sum((Y - Y.mean(0)) ** 2, axis=1))),
                    rtol=1e-10)


# -- item 4: cbor-smo at a dual optimum with rho = 0 -------------------------------------

def cbor_issue_program():
    r = np.random.default_rng(0)
    y = np.repeat([1.0, 2, 3], 10)
    X = np.round((r.normal(0, 0.7, (30, 2)) + 2 * y[:, None]) * 10)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=2,
                                           random_state=0)
    return ordinal.cbor(clusters)


def test_cbor_smo_never_optimal_when_its_certificate_fails():
    prog = cbor_issue_program()
    sol = cm.solve(prog, "cbor-smo")
    ref = cm.solve(prog, "clarabel")
    assert ref.status is cm.Status.OPTIMAL  # independent solver: optimum 0 (separable)
    if sol.status is cm.Status.OPTIMAL:
        # then it must be right and its own (solver-side) certificate must hold
        assert_allclose(sol.objective, ref.objective, atol=1e-6)
        assert sol.extras["kkt_violation"] <= 1e-6
    else:
        assert sol.status is cm.Status.USER_LIMIT
        assert "rho -> 0" in sol.message and "form='primal'" in sol.message


@pytest.mark.parametrize("seed", range(4))
def test_cbor_smo_optimal_implies_own_certificate(seed):
    """Separable ordinal clusters with W = 1 (the issue's regime): OPTIMAL -> certified."""
    r = np.random.default_rng(seed)
    y = np.repeat([1.0, 2, 3], 10)
    X = np.round((r.normal(0, 0.7, (30, 2)) + 2 * y[:, None]) * 10)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=2,
                                           random_state=seed)
    prog = ordinal.cbor(clusters)
    sol = cm.solve(prog, "cbor-smo")
    if sol.status is cm.Status.OPTIMAL:
        assert sol.extras["kkt_violation"] <= 1e-6
        ref = cm.solve(prog, "clarabel")
        assert_allclose(sol.objective, ref.objective, rtol=1e-5, atol=1e-6)
    else:
        assert sol.message


# -- item 2 / rule "Scale": affine-invariant models under feature scalings -----------------

SCALES = [1e-8, 1e-4, 1e4, 1e8]


def scaled(X, j, factor):
    Xs = X.copy()
    Xs[:, j] *= factor
    return Xs


def mpm_alpha(X, y, solver):
    from conicml.formulations import minimax as mm

    prog = mm.mpm(X, y)
    sol = cm.solve(prog, solver)
    assert sol.status is cm.Status.OPTIMAL, (solver, sol.message)
    model = prog.decode(sol)
    f = mm.decision_values(prog.data, model, X)
    return model["alpha"], f


@pytest.mark.parametrize("solver", ["clarabel", "ecos", "rosen", "dinkelbach"])
def test_mpm_invariant_to_feature_scaling(solver):
    """MPM is affine-invariant: alpha and the decision values do not depend on units.

    Reference: the same solver on the unscaled data (the issue's instance gave alpha = 1
    with 0.60 accuracy at x1e8 for Clarabel/ECOS, UNBOUNDED for rosen/dinkelbach).
    """
    X, y = issue_data()
    alpha0, f0 = mpm_alpha(X, y, solver)
    for j in range(X.shape[1]):
        for factor in SCALES:
            alpha, f = mpm_alpha(scaled(X, j, factor), y, solver)
            assert alpha == pytest.approx(alpha0, abs=1e-6), (j, factor)
            # w is determined only to ~sqrt(the solver's accuracy) (a flat optimum)
            assert_allclose(f, f0, atol=1e-4 * max(1.0, np.abs(f0).max()))


def test_mpm_family_invariance_on_random_instances():
    from conicml.formulations import minimax as mm

    rng = np.random.default_rng(3)
    for _ in range(3):
        d = int(rng.integers(2, 5))
        X = np.r_[rng.normal(0.8, 1, (15, d)), rng.normal(-0.8, 1, (12, d))]
        y = np.r_[np.ones(15), -np.ones(12)]
        ref_b = cm.solve(mm.bmpm(X, y, 0.4), "clarabel").objective
        ref_m = cm.solve(mm.mempm(X, y, theta=0.5), "quadratic-interpolation").objective
        s = 10.0 ** rng.uniform(-8, 8, d)
        Xs = X * s
        got_b = cm.solve(mm.bmpm(Xs, y, 0.4), "clarabel").objective
        got_m = cm.solve(mm.mempm(Xs, y, theta=0.5), "quadratic-interpolation").objective
        # BMPM objective 1/kappa and MEMPM objective (an accuracy) are scale-free
        assert got_b == pytest.approx(ref_b, rel=1e-6)
        assert got_m == pytest.approx(ref_m, abs=1e-6)


@pytest.mark.parametrize("solver", ["bisection", "dinkelbach-gfp"])
def test_m4_invariant_to_feature_scaling(solver):
    from conicml.formulations import m4

    X, y = issue_data()
    X = X + 2.0 * y[:, None]  # separable
    ref = m4.m4(X, y)
    rho0 = ref.decode(cm.solve(ref, solver))["rho"]
    for j in range(3):
        for factor in SCALES:
            prog = m4.m4(scaled(X, j, factor), y)
            sol = cm.solve(prog, solver)
            assert sol.status is cm.Status.OPTIMAL, sol.message
            model = prog.decode(sol)
            assert model["rho"] == pytest.approx(rho0, rel=1e-6)
            # the decoded w is in the user's units: the margins it gives are rho's
            f = m4.decision_values(prog.data, model, scaled(X, j, factor))
            assert np.all(np.sign(f) == y)


# -- item 5: dinkelbach-gfp with d >= n_pos ------------------------------------------------

@pytest.mark.parametrize("d,seed", [(6, 4), (6, 5), (10, 7), (10, 0)])
def test_dinkelbach_gfp_with_singular_class_covariance(d, seed):
    """d >= n_pos: the scaled check is ill-posed where sigma_x(w_k) ~ 0 (issue: OPTIMAL at
    rho 10.6 vs bisection 30.6). Reference: bisection (an independent method), and the
    certified ratio of the returned point."""
    from conicml.formulations import m4

    r = np.random.default_rng(seed)
    X = np.r_[r.normal(1, 1, (4, d)), r.normal(-1, 1, (12, d))]
    y = np.r_[np.ones(4), -np.ones(12)]
    X[:, 0] *= 10.0 ** r.integers(-8, 9)
    prog = m4.m4(X, y)
    ref = cm.solve(prog, "bisection")
    sol = cm.solve(prog, "dinkelbach-gfp")
    assert ref.status is cm.Status.OPTIMAL
    if sol.status is cm.Status.OPTIMAL:
        assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
        w, b = sol.values["w"], float(sol.values["b"])
        assert m4.certified_rho(prog.data, w, b) == pytest.approx(ref.objective, rel=1e-6)
    else:
        assert sol.status is cm.Status.USER_LIMIT and "not certified" in sol.message


# -- item 6: rosen / dinkelbach on MPM and BMPM ------------------------------------------

def random_minimax(seed, kind):
    from conicml.formulations import minimax as mm

    r = np.random.default_rng(seed)
    d = int(r.integers(2, 8))
    npos, nneg = int(r.integers(3, 15)), int(r.integers(3, 15))
    sep = r.uniform(0, 2)
    X = np.r_[r.normal(sep, 1, (npos, d)), r.normal(-sep, 1, (nneg, d))]
    X = X @ np.diag(10.0 ** r.uniform(-3, 3, d))
    y = np.r_[np.ones(npos), -np.ones(nneg)]
    if kind == "mpm":
        return mm.mpm(X, y)
    return mm.bmpm(X, y, beta0=float(r.uniform(0.05, 0.95)))


# seeds of the generator above where rosen stopped OPTIMAL 0.5-4 % above Clarabel
# (29, 32, 53, 71, 78) or said UNBOUNDED where Clarabel found the optimum 1/kappa* ~ 0
# (BMPM 85, 91, 102, 113, 143), before the fix
@pytest.mark.parametrize("kind,seed", [("mpm", s) for s in (29, 32, 53, 71, 78)]
                         + [("bmpm", s) for s in (85, 91, 102, 113, 143)])
@pytest.mark.parametrize("solver", ["rosen", "dinkelbach"])
def test_fractional_solvers_optimal_means_right(kind, seed, solver):
    prog = random_minimax(seed, kind)
    ref = cm.solve(prog, "clarabel")
    sol = cm.solve(prog, solver)
    assert ref.status is cm.Status.OPTIMAL  # Clarabel: an independent solver
    assert sol.status in (cm.Status.OPTIMAL, cm.Status.OPTIMAL_INACCURATE), sol.message
    if sol.status is cm.Status.OPTIMAL:
        # objective 1/kappa*: relative agreement, absolute near 0 (kappa* = inf)
        assert sol.objective == pytest.approx(ref.objective, rel=1e-5, abs=1e-7)


# -- item 7: quadratic-interpolation's certificate over beta -----------------------------

def random_mempm(seed):
    from conicml.formulations import minimax as mm

    r = np.random.default_rng(seed)
    d = int(r.integers(2, 6))
    npos, nneg = int(r.integers(5, 30)), int(r.integers(5, 30))
    sep = r.uniform(0.0, 1.5)
    A = r.normal(size=(d, d)) * 10.0 ** r.uniform(-2, 2, d)
    Xp = r.normal(sep, 1, (npos, d)) @ A
    Xn = r.normal(-sep, 1, (nneg, d))
    X = np.r_[Xp, Xn @ r.normal(size=(d, d))]
    y = np.r_[np.ones(npos), -np.ones(nneg)]
    bound = "gaussian" if r.uniform() < 0.3 else "chebyshev"
    return mm.mempm(X, y, theta=float(r.uniform(0.05, 0.95)), bound=bound,
                    nu_x=float(r.choice([0, 0.1])))


# seeds where the local search alone stops at a local maximum (0.5068 vs 0.5768, ...)
@pytest.mark.parametrize("seed", [132, 136, 144])
def test_mempm_optimal_is_global_over_beta(seed):
    from conicml.formulations import minimax as mm

    prog = random_mempm(seed)
    local = cm.solve(prog, "quadratic-interpolation", max_certify=0)
    sol = cm.solve(prog, "quadratic-interpolation")
    # without the certificate's extra solves the local maximum is not called OPTIMAL
    assert local.status is not cm.Status.OPTIMAL
    assert "not certified globally" in local.message
    assert sol.status is cm.Status.OPTIMAL and sol.extras["certified"]
    assert sol.objective > local.objective + 1e-3
    # reference: a 41-point beta grid of Clarabel-solved BMPMs never beats OPTIMAL
    grid = np.linspace(prog.data["beta_lo"], prog.data["beta_end"], 41)
    best = mm.mempm_value(prog.data, grid[-1], 0.0)
    for beta in grid[:-1]:
        inner = mm.inner_bmpm(prog.data, beta)
        res = cm.solve(inner, "clarabel")
        if res.ok:
            best = max(best, mm.mempm_value(prog.data, beta, inner.decode(res)["alpha"]))
    assert sol.objective >= best - 1e-6


# -- item 3: LSVR objective under feature scaling ------------------------------------------

def lsvr_data():
    r = np.random.default_rng(0)
    X = r.normal(size=(30, 3))
    return X, X @ [1.0, -2.0, 0.5] + 0.3 * r.normal(size=30)


@pytest.mark.parametrize("solver", ["clarabel", "ecos", "scs"])
def test_lsvr_objective_invariant_to_feature_scaling(solver):
    """One feature x1e-8 made ECOS/SCS stop OPTIMAL at 5.23 where the value is 1.91.

    Reference: Clarabel on the unscaled data; the objective (1/N sum sigma_i + C sum xi)
    and the fitted values do not depend on the features' units.
    """
    from conicml.formulations import lsvr

    X, y = lsvr_data()
    ref_prog = lsvr.lsvr(X, y, epsilon=0.2, C=1.0, k=2)
    ref = cm.solve(ref_prog, "clarabel")
    ref_fit = ref_prog.decode(ref)["fitted"]
    rtol = 1e-6 if solver != "scs" else 1e-4  # SCS: first-order accuracy (tolerances.py)
    for j in range(3):
        for factor in SCALES:
            Xs = scaled(X, j, factor)
            prog = lsvr.lsvr(Xs, y, epsilon=0.2, C=1.0, k=2)
            sol = cm.solve(prog, solver)
            assert sol.status in (cm.Status.OPTIMAL, cm.Status.OPTIMAL_INACCURATE)
            assert sol.objective == pytest.approx(ref.objective, rel=rtol), (j, factor)
            model = prog.decode(sol)
            assert_allclose(lsvr.predict(prog.data, model, Xs), ref_fit,
                            atol=1e3 * rtol * np.abs(y).max())


def test_lsvr_from_covariances_invariant_to_feature_scaling():
    from conicml.formulations import lsvr

    X, y = lsvr_data()
    cov = np.cov(X.T)
    ref = cm.solve(lsvr.lsvr_from_covariances(X, y, 0.2, 1.0, cov), "ecos").objective
    s = np.array([1e-8, 1.0, 1e8])
    prog = lsvr.lsvr_from_covariances(X * s, y, 0.2, 1.0, cov * np.outer(s, s))
    assert cm.solve(prog, "ecos").objective == pytest.approx(ref, rel=1e-6)


# -- item 1: SVM at X[:, 0] *= 1e8 ---------------------------------------------------------

def svm_accuracy(prog, sol, X, y):
    from conicml.formulations import svm

    model = prog.decode(sol)
    return float(np.mean(np.sign(svm.decision_values(prog.data, model, X)) == y)), model


@pytest.mark.parametrize("solver", ["clarabel", "scs", "osqp"])
def test_svm_dual_decode_is_scale_robust(solver):
    """Dual decode at one feature x1e8 gave b = 3.85 (-0.19) and accuracy 0.35 with OPTIMAL.

    Reference: the primal form solved by Clarabel on the same data (w, b directly).
    """
    from conicml.formulations import svm

    if solver not in cm.solvers.available("qp.svm.dual"):
        pytest.skip(f"{solver} not installed")
    X, y = issue_data()
    X[:, 0] *= 1e8
    with pytest.warns(cm.exceptions.ConicMLWarning, match="column 0"):
        primal = svm.soft_margin(X, y, form="primal")
    ref = primal.decode(cm.solve(primal, "clarabel"))
    with pytest.warns(cm.exceptions.ConicMLWarning, match="standardize the features"):
        prog = svm.soft_margin(X, y, form="dual")
    sol = cm.solve(prog, solver)
    assert sol.ok
    acc, model = svm_accuracy(prog, sol, X, y)
    tol = 1e-5 if solver == "clarabel" else 1e-3
    assert model["b"] == pytest.approx(ref["b"], abs=tol)
    f_ref = X @ ref["w"] + ref["b"]
    assert_allclose(svm.decision_values(prog.data, model, X), f_ref, atol=10 * tol)
    assert acc == pytest.approx(0.95)


@pytest.mark.parametrize("factor", [1e-8, 1e-4, 1.0, 1e4, 1e8])
def test_svm_dual_and_primal_agree_at_every_feature_scale(factor):
    """A scaled family: the dual decode's decision values match the primal's (Clarabel)."""
    from conicml.formulations import svm

    X, y = issue_data()
    X[:, 1] *= factor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cm.exceptions.ConicMLWarning)  # at 1e8 (tested above)
        p = svm.soft_margin(X, y, form="primal")
        d = svm.soft_margin(X, y, form="dual")
    mp, md = p.decode(cm.solve(p, "clarabel")), d.decode(cm.solve(d, "clarabel"))
    fp = svm.decision_values(p.data, mp, X)
    fd = svm.decision_values(d.data, md, X)
    assert_allclose(fd, fp, atol=1e-4 * max(1.0, np.abs(fp).max()))


def test_svm_bias_threshold_is_relative_to_C():
    """With C = 1e-6 every multiplier sat below an absolute 1e-6 floor: no support vectors."""
    from conicml.formulations import svm

    X, y = issue_data()
    prog = svm.soft_margin(X, y, C=1e-6, form="dual")
    model = prog.decode(cm.solve(prog, "clarabel"))
    # at C -> 0 every point is a bounded SV (alpha_i = C, independent: y^T alpha = 0 as
    # the classes are balanced) -- closed form
    assert model["support"].size == 20
    assert_allclose(model["alpha"], 1e-6, rtol=1e-4)


def test_smo_stops_quickly_when_it_cannot_progress():
    """SMO at X[:, 0] *= 1e8 ran for minutes; now a stall ends it with USER_LIMIT."""
    import time

    from conicml.formulations import svm

    X, y = issue_data()
    X[:, 0] *= 1e8
    with pytest.warns(cm.exceptions.ConicMLWarning):
        prog = svm.soft_margin(X, y, form="dual")
    start = time.perf_counter()
    sol = cm.solve(prog, "smo")
    assert time.perf_counter() - start < 30.0  # generous: shared machine
    assert sol.status is cm.Status.USER_LIMIT
    assert "stalled" in sol.message and "standardize" in sol.message


def test_smo_default_max_iter_is_bounded():
    from conicml.solvers import smo

    assert smo._check_options(1e-3, None, None, 200.0, 20) == 100_000
    assert smo._check_options(1e-3, None, None, 200.0, 10_000) == 10_000_000


# -- item 8: C beyond double precision -------------------------------------------------------

def test_huge_C_warns_and_explains():
    from conicml.exceptions import ConicMLWarning
    from conicml.formulations import svm

    X, y = issue_data()
    with pytest.warns(ConicMLWarning, match=r"C = 1e\+12.*beyond.*use C <="):
        primal = svm.soft_margin(X, y, C=1e12)
    sol = cm.solve(primal, "clarabel")
    if sol.status is not cm.Status.OPTIMAL:
        assert "always feasible and bounded" in sol.message and "use C <=" in sol.message
    with pytest.warns(ConicMLWarning):
        dual = svm.soft_margin(X, y, C=1e12, form="dual")
    smo_sol = cm.solve(dual, "smo")
    # SMO's dual value is right, but its gap is C-sized: never OPTIMAL
    assert smo_sol.status is not cm.Status.OPTIMAL
    assert "not certified" in smo_sol.message
    # below the limit, nothing is said
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConicMLWarning)
        svm.soft_margin(X, y, C=1e6)


def test_svm_estimator_issue_instance():
    """The issue's exact call: SVMClassifier().fit(X, y).score(X, y) was 0.35 (OPTIMAL)."""
    from conicml.estimators import SVMClassifier

    X, y = issue_data()
    X[:, 0] *= 1e8
    with pytest.warns(cm.exceptions.ConicMLWarning):
        dual = SVMClassifier().fit(X, y)
    with pytest.warns(cm.exceptions.ConicMLWarning):
        primal = SVMClassifier(form="primal").fit(X, y)
    # reference: the primal form (w, b straight from the solver), 0.95 in the issue
    assert primal.score(X, y) == pytest.approx(0.95)
    assert dual.score(X, y) == pytest.approx(primal.score(X, y))
    assert dual.intercept_[0] == pytest.approx(primal.intercept_[0], abs=1e-5)
