"""Specified-rates chance-constrained classifier (seed 003 ch. 2, note F1).

Expected numbers come from the seed-003 note §5.3 (closed forms and the
verified A1 table), from closed forms derived in comments, or from an
independent solver (stated next to each number).

Sign convention: the thesis (and the note) write the hyperplane as
w.x - b_thesis; conicml uses w.x + b, so b = -b_thesis everywhere below.
"""

import pickle
import re

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import ChanceConstrainedClassifier
from conicml.exceptions import NotFittedStatusError, ProgramError, SolverError
from conicml.formulations import specified_rates as sr

from tolerances import obj_rtol, sol_atol

PRIMAL, DUAL = sr.RATES_KINDS
GENERIC = ["clarabel", "ecos"]


def _eta(kappa):
    # inverse of the ch.-2 Chebyshev map kappa = sqrt((1 - eta) / eta)
    return 1.0 / (1.0 + kappa**2)


# ---- test 1: kappa tables (note §5.3 item 1) ---------------------------------------------

@pytest.mark.parametrize("eta, kappa", [
    # ch.-2 form kappa = sqrt((1 - eta)/eta), values from the note §5.3 item 1
    (0.1, 3.0), (0.3, 1.527525), (0.5, 1.0), (0.7, 0.654654), (0.9, 0.333333),
    (0.76, 0.561951), (0.085, 3.280961), (0.515, 0.970437), (1.0, 0.0),
])
def test_kappa_chebyshev(eta, kappa):
    assert sr.rate_kappa(eta) == pytest.approx(kappa, abs=1e-6)


@pytest.mark.parametrize("eta, kappa", [
    # Phi^{-1}(1 - eta): the note's Gaussian table Phi^{-1}(.9, .8, .7, .6)
    (0.1, 1.281552), (0.2, 0.841621), (0.3, 0.524401), (0.4, 0.253347), (0.5, 0.0),
])
def test_kappa_gaussian(eta, kappa):
    assert sr.rate_kappa(eta, "gaussian") == pytest.approx(kappa, abs=1e-6)


@pytest.mark.parametrize("eta, bound", [
    (0.0, "chebyshev"), (-0.1, "chebyshev"), (1.5, "chebyshev"), (np.nan, "chebyshev"),
    (0.6, "gaussian"),  # Phi^{-1}(0.4) < 0: reverse cone, rejected (note P1)
    (0.3, "student"),
])
def test_kappa_rejects(eta, bound):
    with pytest.raises(ProgramError):
        sr.rate_kappa(eta, bound)


# ---- test 2: spherical covariances, closed form (note §5.3 item 2) ------------------------

def _spherical_instance(seed, d=4):
    rng = np.random.default_rng(seed)
    mu1, mu2 = rng.normal(size=d) * 3, rng.normal(size=d) * 3
    D = np.linalg.norm(mu1 - mu2)
    s1, s2 = 0.2 * D * rng.uniform(0.2, 1), 0.2 * D * rng.uniform(0.2, 1)
    k1, k2 = rng.uniform(0.3, 2.0), rng.uniform(0.3, 2.0)
    moments = cm.ClassMoments(mu1, s1**2 * np.eye(d), mu2, s2**2 * np.eye(d))
    # closed form: e = (mu1-mu2)/D, z1 = mu1 - k1 s1 e, w = 2e/(D - k1 s1 - k2 s2),
    # b_thesis = w.z1 - 1 (feasible iff D > k1 s1 + k2 s2)
    assert D > k1 * s1 + k2 * s2
    e = (mu1 - mu2) / D
    w = 2 * e / (D - k1 * s1 - k2 * s2)
    b = -(w @ (mu1 - k1 * s1 * e) - 1.0)
    return moments, _eta(k1), _eta(k2), w, b


@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("solver", cm.solvers.available(PRIMAL))
@pytest.mark.parametrize("seed", [0, 1])
def test_spherical_closed_form(solver, form, seed):
    moments, eta1, eta2, w, b = _spherical_instance(seed)
    prog = sr.specified_rates(moments, eta1, eta2, form=form)
    sol = cm.solve(prog, solver)
    assert sol.ok, sol.message
    model = prog.decode(sol)
    scale = max(1.0, np.abs(w).max())
    np.testing.assert_allclose(model["w"], w, atol=sol_atol(solver) * scale)
    assert model["b"] == pytest.approx(b, abs=sol_atol(solver) * max(1.0, abs(b)))
    expected = 0.5 * w @ w if form == "primal" else (2.0 / np.linalg.norm(w)) ** 2
    assert sol.objective == pytest.approx(expected, rel=obj_rtol(solver))


@pytest.mark.parametrize("solver", GENERIC)
def test_zero_covariance_closed_form(solver):
    # Sigma = 0 (note §5.3 item 2): w = 2(mu1-mu2)/D^2, b_thesis = w.mu1 - 1
    mu1, mu2 = np.array([1.0, 2.0, 0.0]), np.array([-1.0, 0.5, 1.0])
    moments = cm.ClassMoments(mu1, np.zeros((3, 3)), mu2, np.zeros((3, 3)))
    prog = sr.specified_rates(moments, 0.2, 0.3)
    model = prog.decode(cm.solve(prog, solver))
    w = 2 * (mu1 - mu2) / np.sum((mu1 - mu2) ** 2)
    np.testing.assert_allclose(model["w"], w, atol=1e-6)
    assert model["b"] == pytest.approx(-(w @ mu1 - 1.0), abs=1e-6)


# ---- test 3: the ellipse example (note §5.3 item 3, A1 "verified numbers") ----------------

ELLIPSE = cm.ClassMoments(np.array([3.0, 0.0]), np.diag([4.0, 1.0]),
                          np.array([-3.0, 0.0]), np.eye(2))


@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("solver", cm.solvers.available(PRIMAL))
def test_ellipse_example(solver, form):
    # kappa = 1 <=> eta = 0.5. Note: distance 3, z1 = (1,0), z2 = (-2,0), w = (2/3, 0),
    # b = -1/3 in the THESIS convention (w.x - b); conicml's b = +1/3.
    prog = sr.specified_rates(ELLIPSE, 0.5, 0.5, form=form)
    sol = cm.solve(prog, solver)
    model = prog.decode(sol)
    atol = sol_atol(solver)
    np.testing.assert_allclose(model["w"], [2 / 3, 0.0], atol=atol)
    assert model["b"] == pytest.approx(1 / 3, abs=atol)
    assert model["margin"] == pytest.approx(3.0, rel=obj_rtol(solver))
    expected = 2 / 9 if form == "primal" else 9.0  # 1/2||w||^2 = 2/d^2; dual: d^2
    assert sol.objective == pytest.approx(expected, rel=obj_rtol(solver))
    if form == "dual":
        np.testing.assert_allclose(model["z_pos"], [1.0, 0.0], atol=10 * atol)
        np.testing.assert_allclose(model["z_neg"], [-2.0, 0.0], atol=10 * atol)


# ---- test 4: the general example (note A1 table, verified by SLSQP in the note) ----------

GENERAL = cm.ClassMoments(np.array([2.0, 2.0]), np.array([[2.0, 0.8], [0.8, 1.0]]),
                          np.array([-1.0, -1.0]), np.array([[1.0, -0.3], [-0.3, 0.5]]))


@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("solver", cm.solvers.available(PRIMAL))
@pytest.mark.parametrize("kappas, distance, w, b_thesis", [
    ((1.0, 1.0), 2.1171770582, [0.5431621, 0.7728818], 0.2686082),
    ((0.5, 1.5), 2.5314896601, [0.4722201, 0.6333917], 0.6355220),
])
def test_general_example(solver, form, kappas, distance, w, b_thesis):
    prog = sr.specified_rates(GENERAL, _eta(kappas[0]), _eta(kappas[1]), form=form)
    sol = cm.solve(prog, solver)
    model = prog.decode(sol)
    atol = max(sol_atol(solver), 1e-6)  # the note gives 7 digits
    np.testing.assert_allclose(model["w"], w, atol=atol)
    assert model["b"] == pytest.approx(-b_thesis, abs=atol)  # conicml b = -b_thesis
    assert model["margin"] == pytest.approx(distance, rel=obj_rtol(solver))


def test_primal_and_dual_values_are_related():
    # strong duality (2.12)-(2.13): primal 1/2||w||^2 = 2 / (dual distance^2)
    p = cm.solve(sr.specified_rates(GENERAL, 0.3, 0.4), "clarabel")
    d = cm.solve(sr.specified_rates(GENERAL, 0.3, 0.4, form="dual"), "clarabel")
    assert p.objective == pytest.approx(2.0 / d.objective, rel=1e-6)


# ---- test 5: infeasible rates (note §5.3 item 5) -------------------------------------------

OVERLAP = cm.ClassMoments(np.zeros(2), np.eye(2), np.array([1.0, 0.0]), np.eye(2))


@pytest.mark.parametrize("solver", cm.solvers.available(PRIMAL))
def test_infeasible_primal(solver):
    prog = sr.specified_rates(OVERLAP, 0.5, 0.5)  # unit balls 1 apart overlap
    sol = cm.solve(prog, solver)
    assert sol.status in (cm.Status.INFEASIBLE, cm.Status.INFEASIBLE_INACCURATE)
    with pytest.raises(SolverError, match="error_pos=0.5, error_neg=0.5"):
        prog.decode(sol)


@pytest.mark.parametrize("solver", GENERIC)
def test_infeasible_dual_is_distance_zero(solver):
    # the dual of an infeasible primal has optimum 0; decode reports the rates
    prog = sr.specified_rates(OVERLAP, 0.5, 0.5, form="dual")
    sol = cm.solve(prog, solver)
    assert sol.objective == pytest.approx(0.0, abs=1e-7)
    with pytest.raises(SolverError, match="error_pos=0.5"):
        prog.decode(sol)


def test_just_feasible_rates():
    # unit balls 3 apart: kappa = 1.4 each leaves a gap 0.2 -> feasible
    m = cm.ClassMoments(np.zeros(2), np.eye(2), np.array([3.0, 0.0]), np.eye(2))
    sol = cm.solve(sr.specified_rates(m, _eta(1.4), _eta(1.4)), "clarabel")
    assert sol.status is cm.Status.OPTIMAL
    sol = cm.solve(sr.specified_rates(m, _eta(1.6), _eta(1.6)), "clarabel")
    assert sol.status is cm.Status.INFEASIBLE


# ---- the chance constraints hold (Theorem 2.1; exact normal / Cantelli probabilities) -----

@pytest.mark.parametrize("bound", ["chebyshev", "gaussian"])
def test_rates_are_met(bound):
    eta_pos, eta_neg = 0.3, 0.4
    prog = sr.specified_rates(GENERAL, eta_pos, eta_neg, bound=bound)
    model = prog.decode(cm.solve(prog, "clarabel"))
    w, b = model["w"], model["b"]
    # margin of each class mean in standard deviations of w.X
    t_pos = (w @ GENERAL.mean_pos + b) / np.sqrt(w @ GENERAL.cov_pos @ w)
    t_neg = -(w @ GENERAL.mean_neg + b) / np.sqrt(w @ GENERAL.cov_neg @ w)
    if bound == "gaussian":  # exact error of a normal class: Phi(-t)
        err_pos, err_neg = norm.cdf(-t_pos), norm.cdf(-t_neg)
    else:  # Cantelli worst case over all distributions: 1/(1+t^2)
        err_pos, err_neg = 1 / (1 + t_pos**2), 1 / (1 + t_neg**2)
    assert err_pos <= eta_pos and err_neg <= eta_neg
    # both cones are active at the optimum (Sigma > 0, note F1): t = kappa + 1/sqrt(w'Sigma w)
    kp, kn = sr.rate_kappa(eta_pos, bound), sr.rate_kappa(eta_neg, bound)
    assert t_pos == pytest.approx(kp + 1 / np.sqrt(w @ GENERAL.cov_pos @ w), rel=1e-6)
    assert t_neg == pytest.approx(kn + 1 / np.sqrt(w @ GENERAL.cov_neg @ w), rel=1e-6)


def test_smaller_rate_moves_the_hyperplane():
    # Table 2.1 pattern: lowering eta_pos moves the threshold towards the negatives,
    # so the positive mean's normalised margin grows and the negative one's shrinks
    rows = []
    for eta_pos in (0.9, 0.5, 0.2):
        prog = sr.specified_rates(GENERAL, eta_pos, 0.3)
        m = prog.decode(cm.solve(prog, "clarabel"))
        w, b = m["w"], m["b"]
        rows.append(((w @ GENERAL.mean_pos + b) / np.sqrt(w @ GENERAL.cov_pos @ w),
                     -(w @ GENERAL.mean_neg + b) / np.sqrt(w @ GENERAL.cov_neg @ w)))
    rows = np.array(rows)
    assert np.all(np.diff(rows[:, 0]) > 0)


# ---- data input: (X, y), kernels -------------------------------------------------------

@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(3)
    X = np.r_[rng.normal(size=(40, 3)) + [4.0, 0, 0], rng.normal(size=(50, 3)) * 0.8]
    y = np.r_[np.ones(40), -np.ones(50)]
    return X, y


def test_data_equals_moments(blobs):
    X, y = blobs
    a = cm.solve(sr.specified_rates(X, y, 0.3, 0.3), "clarabel")
    b = cm.solve(sr.specified_rates(cm.ClassMoments.from_data(X, y), 0.3, 0.3), "clarabel")
    assert a.ok and b.ok
    assert a.objective == pytest.approx(b.objective, rel=1e-8)


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_kernel_solvers_agree(blobs, form):
    X, y = blobs
    prog = sr.specified_rates(X, y, 0.3, 0.3, kernel="rbf", gamma=0.3, ridge=1e-3,
                                  form=form)
    sols = {s: cm.solve(prog, s) for s in GENERIC}
    models = {s: prog.decode(sol) for s, sol in sols.items()}
    assert sols["ecos"].objective == pytest.approx(sols["clarabel"].objective,
                                                   rel=obj_rtol("ecos"))
    f = {s: sr.rates_decision_values(prog.data, m, X) for s, m in models.items()}
    # primal: decisions agree to the solvers' accuracy. dual: (2.14) divides by d^2
    # (here d^2 ~ 5e-3), so the interior-point z-accuracy ~1e-6 becomes ~1e-3 relative
    rel = sol_atol("ecos") if form == "primal" else 2e-3
    np.testing.assert_allclose(f["ecos"], f["clarabel"], atol=rel * np.abs(f["clarabel"]).max())
    assert np.mean(np.sign(f["clarabel"]) == y) > 0.9


def test_kernel_cone_forms_agree(blobs):
    # "centred" (centring identity, no factorisation) and "factor" are the same program
    X, y = blobs
    kw = dict(kernel="rbf", gamma=0.3, ridge=1e-3)
    a = cm.solve(sr.specified_rates(X, y, 0.3, 0.3, cone="centred", **kw), "clarabel")
    b = cm.solve(sr.specified_rates(X, y, 0.3, 0.3, cone="factor", **kw), "clarabel")
    assert a.objective == pytest.approx(b.objective, rel=obj_rtol("clarabel"))


def test_linear_kernel_through_rows_is_the_linear_program(blobs):
    # the kernel program with k = x.x' equals the linear one (same margin, same decisions)
    X, y = blobs
    lin = sr.specified_rates(X, y, 0.3, 0.3)
    ker = sr.specified_rates(X @ X.T, y, 0.3, 0.3, kernel="precomputed")
    ml, mk = lin.decode(cm.solve(lin, "clarabel")), ker.decode(cm.solve(ker, "clarabel"))
    assert mk["margin"] == pytest.approx(ml["margin"], rel=1e-6)
    f_lin = X @ ml["w"] + ml["b"]
    np.testing.assert_allclose(sr.rates_decision_values(ker.data, mk, X @ X.T), f_lin,
                               atol=sol_atol("clarabel") * np.abs(f_lin).max())


def test_program_pickles():
    prog = sr.specified_rates(GENERAL, 0.3, 0.3)
    clone = pickle.loads(pickle.dumps(prog))
    assert cm.solve(clone, "clarabel").objective == pytest.approx(
        cm.solve(prog, "clarabel").objective, rel=1e-9)


@pytest.mark.parametrize("kwargs, match", [
    ({"X": np.array([[1.0, np.nan], [0, 1]]), "y": np.array([1.0, -1]), "error_pos": .3,
      "error_neg": .3}, "NaN"),
    ({"X": np.ones((3, 2)), "y": np.ones(3), "error_pos": .3, "error_neg": .3}, "single class"),
    ({"X": np.ones((3, 2)), "y": np.array([0, 1, 0]), "error_pos": .3, "error_neg": .3},
     "labels"),
    ({"X": np.ones((3, 2)), "y": np.array([1, -1]), "error_pos": .3, "error_neg": .3},
     "shape mismatch"),
    ({"X": GENERAL, "error_pos": 0.0, "error_neg": .3}, "error_pos"),
    ({"X": GENERAL, "error_pos": .3, "error_neg": 2.0}, "error_neg"),
    ({"X": GENERAL, "error_pos": .3, "error_neg": .3, "kernel": "rbf"}, "needs the training"),
    ({"X": GENERAL, "error_pos": .3, "error_neg": .3, "kernel": "sigmoid"}, "kernel"),
    ({"X": GENERAL, "error_pos": .3, "error_neg": .3, "form": "both"}, "form"),
    ({"X": GENERAL, "error_pos": .3, "error_neg": .3, "cone": "sparse"}, "cone"),
    ({"X": GENERAL, "error_pos": .3, "error_neg": .3, "ridge": -1.0}, "ridge"),
    ({"X": GENERAL, "error_pos": .3, "error_neg": .3, "bound": "markov"}, "bound"),
    ({"X": GENERAL, "error_pos": .7, "error_neg": .3, "bound": "gaussian"}, "error_pos <= 0.5"),
    ({"X": [1, 2], "error_pos": .3, "error_neg": .3}, "ClassMoments"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ProgramError, match=match):
        sr.specified_rates(**kwargs)


# ---- estimator -----------------------------------------------------------------------------

@parametrize_with_checks(
    [ChanceConstrainedClassifier(),
     ChanceConstrainedClassifier(kernel="rbf", ridge=1e-3, solver="lin-han")],
    # no check is expected to fail: the default rates (1.0, i.e. kappa = 0) are feasible
    # whenever the class means differ, and every check passes with both solvers
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_estimator_matches_formulation(blobs):
    X, y = blobs
    labels = np.where(y > 0, "spam", "ham")  # "spam" > "ham": classes_[1] is positive
    est = ChanceConstrainedClassifier(0.2, 0.4).fit(X, labels)
    prog = sr.specified_rates(X, y, 0.2, 0.4)
    model = prog.decode(cm.solve(prog, "clarabel"))
    np.testing.assert_allclose(est.coef_[0], model["w"], atol=1e-6)
    assert est.intercept_[0] == pytest.approx(model["b"], abs=1e-6)
    assert est.kappa_pos_ == pytest.approx(2.0)  # sqrt(0.8/0.2)
    assert set(est.predict(X)) <= {"spam", "ham"}
    np.testing.assert_array_equal(est.predict(X) == "spam", est.decision_function(X) >= 0)


@pytest.mark.parametrize("solver, form", [("ecos", "primal"), ("lin-han", "primal"),
                                          ("lin-han", "dual"), ("clarabel", "dual")])
def test_estimator_solvers_agree(blobs, solver, form):
    X, y = blobs
    ref = ChanceConstrainedClassifier(0.2, 0.4).fit(X, y)
    est = ChanceConstrainedClassifier(0.2, 0.4, solver=solver, form=form).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-4)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=1e-4)


def test_estimator_kernel(blobs):
    X, y = blobs
    est = ChanceConstrainedClassifier(0.3, 0.3, kernel="rbf", gamma=0.3, ridge=1e-3,
                                      solver="lin-han").fit(X, y)
    ref = ChanceConstrainedClassifier(0.3, 0.3, kernel="rbf", gamma=0.3, ridge=1e-3).fit(X, y)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=1e-4)
    assert est.dual_coef_.shape == (1, X.shape[0])
    assert not hasattr(est, "coef_")


def test_estimator_infeasible_names_the_rates():
    X, y = cm.datasets.ringnorm(200, dim=2, random_state=0)  # concentric classes: means coincide
    for form in ("primal", "dual"):
        with pytest.raises(NotFittedStatusError, match="error_pos=0.1"):
            ChanceConstrainedClassifier(0.1, 0.3, form=form).fit(X, y)


def test_estimator_fit_moments():
    est = ChanceConstrainedClassifier(0.5, 0.5).fit_moments(ELLIPSE)
    np.testing.assert_allclose(est.coef_[0], [2 / 3, 0], atol=1e-6)
    assert est.intercept_[0] == pytest.approx(1 / 3, abs=1e-6)  # thesis b = -1/3
    np.testing.assert_array_equal(est.predict(np.array([[0.0, 0], [-1, 0]])), [1, -1])
    with pytest.raises(ProgramError):
        ChanceConstrainedClassifier(kernel="rbf").fit_moments(ELLIPSE)


def test_estimator_bad_solver(blobs):
    with pytest.raises(cm.SolverError, match="'osqp' does not accept"):
        ChanceConstrainedClassifier(solver="osqp").fit(*blobs)


def test_wdbc_table_2_1_pattern():
    # note §5.3 item 17 (thesis Table 2.1, L-SOCP rows): on WDBC (+ = malignant) with
    # eta_neg = 0.3, lowering eta_pos lowers the FN error and raises the FP error, every
    # error stays within its rate, and eta_pos = 0.1 (kappa = 3) is infeasible ("×")
    X, y = cm.datasets.load("breast_cancer")
    X = (X - X.mean(0)) / X.std(0)
    fn, fp = [], []
    for eta_pos in (0.9, 0.7, 0.5, 0.3):
        prog = sr.specified_rates(X, y, eta_pos, 0.3, ridge=1e-2)
        f = sr.rates_decision_values(prog.data, prog.decode(cm.solve(prog, "clarabel")), X)
        fn.append(np.mean(f[y > 0] < 0))
        fp.append(np.mean(f[y < 0] >= 0))
        assert fn[-1] <= eta_pos and fp[-1] <= 0.3
    assert np.all(np.diff(fn) < 0) and np.all(np.diff(fp) > 0)
    prog = sr.specified_rates(X, y, 0.1, 0.3, ridge=1e-2)
    assert cm.solve(prog, "clarabel").status is cm.Status.INFEASIBLE
    assert cm.solve(prog, "lin-han").status is cm.Status.INFEASIBLE


def test_deprecated_eta_and_epsilon_spellings_still_work():
    # issue 12: error-rate bounds are error_pos / error_neg and the covariance ridge is
    # ridge; the old keywords warn for one release and build the same program / model
    # (objectives and hyperplanes from Clarabel on both spellings).
    new = cm.solve(sr.specified_rates(GENERAL, error_pos=0.3, error_neg=0.4, ridge=1e-3),
                   "clarabel").objective
    with pytest.warns(FutureWarning) as record:
        old = cm.solve(sr.specified_rates(GENERAL, eta_pos=0.3, eta_neg=0.4, epsilon=1e-3),
                       "clarabel").objective
    assert old == pytest.approx(new, rel=1e-9)
    assert {str(w.message).split("'")[3] for w in record} == {"error_pos", "error_neg", "ridge"}
    X, y = cm.datasets.twonorm(n=60, dim=3, random_state=1)
    ref = ChanceConstrainedClassifier(error_pos=0.4, error_neg=0.4, ridge=1e-3).fit(X, y)
    with pytest.warns(FutureWarning, match="renamed"):
        dep = ChanceConstrainedClassifier(eta_pos=0.4, eta_neg=0.4, epsilon=1e-3).fit(X, y)
    np.testing.assert_allclose(dep.coef_, ref.coef_, rtol=1e-8)


@pytest.mark.parametrize("case", ["duplicated feature", "fewer samples than features"])
def test_lin_han_on_a_singular_linear_covariance_names_the_ridge(case):
    # a linear fit whose class covariance is singular (rank deficient, smallest eigenvalue
    # ~1e-16): the generic solver fits ridge=0; lin-han, which inverts Sigma, raises a
    # conicml error naming ridge, and the ridge it suggests makes it agree with clarabel
    # on the same regularised program (the independent reference)
    rng = np.random.default_rng(0)
    if case == "duplicated feature":
        X = np.r_[rng.normal(1.0, 1.0, (30, 4)), rng.normal(-1.0, 1.0, (40, 4))]
        X = np.c_[X, X[:, 0]]
        y = np.r_[np.ones(30), np.zeros(40)]
    else:
        X = np.r_[rng.normal(1.5, 1.0, (5, 6)), rng.normal(-1.5, 1.0, (40, 6))]
        y = np.r_[np.ones(5), np.zeros(40)]
    ChanceConstrainedClassifier(0.5, 0.5, solver="clarabel").fit(X, y)
    with pytest.raises(NotFittedStatusError, match=r"positive definite.*pass ridge > 0") as err:
        ChanceConstrainedClassifier(0.5, 0.5, solver="lin-han").fit(X, y)
    ridge = float(re.search(r"ridge=([0-9.e+-]+)", str(err.value)).group(1))
    fast = ChanceConstrainedClassifier(0.5, 0.5, solver="lin-han", ridge=ridge).fit(X, y)
    ref = ChanceConstrainedClassifier(0.5, 0.5, solver="clarabel", ridge=ridge).fit(X, y)
    assert fast.solution_.status is cm.Status.OPTIMAL
    np.testing.assert_allclose(fast.coef_, ref.coef_, atol=1e-4 * np.abs(ref.coef_).max())


def test_the_data_keyword_of_the_previous_release_still_works():
    X, y = cm.datasets.twonorm(40, dim=2, random_state=0)
    with pytest.warns(FutureWarning, match="data=.... is deprecated"):
        old = sr.specified_rates(data=(X, y), error_pos=0.3, error_neg=0.3)
    new = sr.specified_rates(X, y, 0.3, 0.3)
    np.testing.assert_array_equal(old.data["mean_pos"], new.data["mean_pos"])


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_estimator_fit_emits_no_deprecation_warning(kernel):
    # the estimator builds its program with the current X, y signature: a default fit
    # warns about nothing of its own (the old tuple form would raise a FutureWarning)
    import warnings

    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(1.0, 1.0, (40, 3)), rng.normal(-1.0, 1.0, (40, 3))]
    y = np.r_[np.ones(40), -np.ones(40)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("error", DeprecationWarning)
        ChanceConstrainedClassifier(kernel=kernel).fit(X, y)
