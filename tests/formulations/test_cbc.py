"""Cluster-based classification CBC-SOCP (seed 003 ch. 3, App. B; note F2, F2-W/F2-K).

Expected numbers come from the seed-003 note §5.3 (tests 1, 6-9, with the note's
SLSQP-verified values), from closed forms derived in comments, or from an
independent solver (the soft-margin SVM program of ``conicml.formulations.svm``).

Sign convention: the thesis writes w.x - b_thesis; conicml uses w.x + b, so
b = -b_thesis everywhere below.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import ClusterSOCPClassifier
from conicml.exceptions import ProgramError
from conicml.formulations import cbc, svm
from conicml.moments import ClusterMoments

from tolerances import obj_rtol, sol_atol

# note §5.3 test 7: three positive and three negative clusters
MU7 = np.array([[2, 0], [0, 2], [1.5, 1.5], [-2, 0], [0, -2], [0.5, 0.2]], dtype=float)
SIG7 = np.array([0.5, 0.5, 0.3, 0.5, 0.5, 0.4])
Y7 = np.array([1, 1, 1, -1, -1, -1], dtype=float)
ETA_KAPPA1 = 0.5  # Chebyshev kappa = sqrt(eta/(1-eta)) = 1
ETA_KAPPA2 = 0.8  # kappa = 2


def _clusters7():
    return ClusterMoments(MU7, SIG7, np.full(6, 10), Y7)


def _solvers(kind):
    return [s for s in cm.solvers.available(kind)]


# ---- test 1: kappa ------------------------------------------------------------------------

@pytest.mark.parametrize("eta, kappa", [
    # ch. 3/6 Chebyshev form sqrt(eta/(1-eta)), note §5.3 item 1
    (0.9, 3.0), (0.8, 2.0), (0.7, 1.527525), (0.6, 1.224745), (0.52, 1.040833), (0.5, 1.0),
])
def test_kappa_chebyshev(eta, kappa):
    assert cbc.cbc_kappa(eta) == pytest.approx(kappa, abs=1e-6)


@pytest.mark.parametrize("eta, kappa", [
    # Phi^{-1}(eta), note §5.3 item 1
    (0.9, 1.281552), (0.8, 0.841621), (0.7, 0.524401), (0.6, 0.253347),
])
def test_kappa_gaussian(eta, kappa):
    assert cbc.cbc_kappa(eta, "gaussian") == pytest.approx(kappa, abs=1e-6)


@pytest.mark.parametrize("eta, bound", [(0.0, "chebyshev"), (1.0, "chebyshev"),
                                        (0.4, "gaussian"), (0.7, "student"), (True, "chebyshev")])
def test_kappa_rejects(eta, bound):
    with pytest.raises(ProgramError):
        cbc.cbc_kappa(eta, bound)


# ---- test 7: the deterministic CBC example (3.7) = (3.11) ---------------------------------

CASES7 = [
    # (eta, C, objective, w1 (= w2), b = -b_thesis), note §5.3 test 7 (SLSQP primal = dual)
    (ETA_KAPPA1, 10.0, 20.387798, 0.77346, 0.0),
    (ETA_KAPPA1, 0.5, 1.573266, 0.65325, -0.15542),
    (ETA_KAPPA2, 1.0, 4.587938, 0.73066, -0.57199),
]


@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("eta, C, objective, w1, b", CASES7)
def test_note_example_all_solvers(form, eta, C, objective, w1, b):
    prog = cbc.cbc(_clusters7(), C, eta, form=form)
    assert prog.kind == f"socp.chance.cbc.{form}"
    for solver in _solvers(prog.kind):
        sol = cm.solve(prog, solver)
        assert sol.ok, solver
        # the note's values have 6-7 significant digits
        assert sol.objective == pytest.approx(objective, rel=max(obj_rtol(solver), 1e-6)), solver
        if solver == "scs":
            continue  # first-order accuracy: the free-alpha test behind b is not reliable
        model = prog.decode(sol)
        atol = max(sol_atol(solver), 2e-5)
        np.testing.assert_allclose(model["w"], [w1, w1], atol=atol, err_msg=solver)
        assert model["b"] == pytest.approx(b, abs=atol), solver
        # decoded model is primal optimal: its (3.7) objective equals the optimum
        assert model["primal_objective"] == pytest.approx(objective, rel=1e-4), solver


def test_note_example_slacks():
    # note §5.3 test 7: xi = (0,0,0,0,0,1.979) at kappa=1, C=10, and
    # (0.3108, 0.3108, 0, 0, 0, 1.6714) at C=0.5
    for C, xi in [(10.0, [0, 0, 0, 0, 0, 1.979]), (0.5, [0.3108, 0.3108, 0, 0, 0, 1.6714])]:
        prog = cbc.cbc(_clusters7(), C, ETA_KAPPA1)
        model = prog.decode(cm.solve(prog, "ecos"))
        np.testing.assert_allclose(model["xi"], xi, atol=1e-3)


def test_dual_recovery_w_equals_t_over_lambda_v():
    # w = (t / lambda) sum_j alpha_j y_j mu_j (note F2, primal recovery), lambda from the dual
    prog = cbc.cbc(_clusters7(), 0.5, ETA_KAPPA1, form="dual")
    sol = cm.solve(prog, "clarabel")
    alpha, lam = sol.values["alpha"], float(sol.values["lam"])
    v = MU7.T @ (alpha * Y7)
    t = lam - SIG7 @ alpha  # kappa = 1
    np.testing.assert_allclose(t / lam * v, [0.65325, 0.65325], atol=2e-5)


# ---- test 8: hard-margin spheres ------------------------------------------------------------

@pytest.mark.parametrize("form", ["primal", "dual"])
def test_hard_margin_spheres(form):
    # note §5.3 test 8: w = a(1,1), a = 1/(2 - 0.5 sqrt 2), b = 0, margin 2 sqrt 2 - 1
    clusters = ClusterMoments(np.array([[2, 0], [0, 2], [-2, 0], [0, -2]], dtype=float),
                              np.full(4, 0.5), np.ones(4), np.array([1, 1, -1, -1.0]))
    prog = cbc.cbc(clusters, None, ETA_KAPPA1, form=form)
    assert prog.kind == f"socp.chance.cbc.hard.{form}"
    a = 1.0 / (2.0 - 0.5 * np.sqrt(2.0))
    for solver in _solvers(prog.kind):
        if solver == "scs":
            continue  # first-order accuracy; the interior-point backends certify the number
        sol = cm.solve(prog, solver)
        model = prog.decode(sol)
        assert sol.objective == pytest.approx(0.5 * 2 * a * a, rel=1e-6), solver
        np.testing.assert_allclose(model["w"], [a, a], atol=sol_atol(solver), err_msg=solver)
        assert abs(model["b"]) < sol_atol(solver)
        # margin 2/||w|| from the optimal value 1/2 ||w||^2 (certified to obj_rtol)
        margin = 2.0 / np.sqrt(2.0 * sol.objective)
        assert margin == pytest.approx(2 * np.sqrt(2) - 1, rel=obj_rtol(solver))


def test_hard_margin_overlap_is_infeasible():
    # two overlapping unit spheres of opposite labels: no separating hyperplane
    clusters = ClusterMoments(np.array([[0.0, 0.0], [1.0, 0.0]]), np.ones(2), np.ones(2),
                              np.array([1.0, -1.0]))
    sol = cm.solve(cbc.cbc(clusters, None, ETA_KAPPA1), "clarabel")
    assert sol.status in (cm.Status.INFEASIBLE, cm.Status.INFEASIBLE_INACCURATE)


# ---- test 6: CBC = soft-margin SVM when sigma = 0, one point per cluster -------------------

@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_reduces_to_svm(C):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.7 * rng.normal(size=60) > 0, 1.0, -1.0)
    clusters = ClusterMoments.from_data(X, y, clustering="none")
    assert clusters.n_clusters == 60 and np.all(clusters.sigmas == 0)
    ref_prog = svm.soft_margin(X, y, C=C, form="primal")  # independent program
    ref = ref_prog.decode(cm.solve(ref_prog, "clarabel"))
    ref_obj = cm.solve(ref_prog, "clarabel").objective
    runs = [("primal", "clarabel", {}), ("primal", "ecos", {}), ("dual", "clarabel", {}),
            ("dual", "ecos", {})]
    if C <= 1.0:  # rank-3 linear kernel with C = 10: SMO's slow tail (as LIBSVM's), ~2e5 it.
        runs.append(("dual", "cbc-smo", {"tol": 1e-8}))
    for form, solver, options in runs:
        prog = cbc.cbc(clusters, C, 0.9, form=form)
        sol = cm.solve(prog, solver, **options)
        model = prog.decode(sol)
        assert sol.objective == pytest.approx(ref_obj, rel=1e-6)
        np.testing.assert_allclose(model["w"], ref["w"], atol=1e-4)
        # b of an interior-point *dual* comes from its ~1e-8-accurate free alphas (as for
        # the SVM's own dual); the primal forms and cbc-smo give it to 1e-5
        b_atol = 1e-3 if form == "dual" and solver != "cbc-smo" else 1e-5
        assert model["b"] == pytest.approx(ref["b"], abs=b_atol), (form, solver)


# ---- test 9: the W-form (B.1) and its dual (B.2) --------------------------------------------

@pytest.mark.parametrize("form", ["primal", "dual"])
def test_w_form_note_example(form):
    # note §5.3 test 9: W = 1, kappa = 1: sum xi = 2.1523340597, w = (0.7071068, 0.7071068),
    # b_thesis = 0.0857864, the (B.2) minimum is -2.1523340597
    prog = cbc.cbc_w(_clusters7(), 1.0, ETA_KAPPA1, form=form)
    assert prog.kind == f"socp.chance.cbc_w.{form}"
    for solver in _solvers(prog.kind):
        sol = cm.solve(prog, solver)
        assert sol.objective == pytest.approx(2.1523340597, rel=obj_rtol(solver)), solver
        if solver == "scs":
            continue
        model = prog.decode(sol)
        np.testing.assert_allclose(model["w"], [0.7071068, 0.7071068], atol=5e-5)
        assert model["b"] == pytest.approx(-0.0857864, abs=5e-5)
        assert model["t"] == 1.0


def test_rbf_radius_and_forms_agree():
    # App. B: ||x - mu|| <= r => ||phi(x) - phi(mu)|| <= sqrt(2 (1 - exp(-gamma r^2)))
    gamma = 0.3
    prog = cbc.cbc_w(_clusters7(), 2.0, ETA_KAPPA1, kernel="rbf", gamma=gamma)
    np.testing.assert_allclose(prog.data["radii"],
                               np.sqrt(2 * (1 - np.exp(-gamma * SIG7**2))), rtol=1e-12)
    # worst case of the bound, checked directly: a point at distance r from mu
    x, mu = np.array([0.5, 0.0]), np.zeros(2)
    dist = np.sqrt(2 - 2 * np.exp(-gamma * np.sum((x - mu) ** 2)))
    assert dist == pytest.approx(np.sqrt(2 * (1 - np.exp(-gamma * 0.25))))
    obj = {}
    for form in ("primal", "dual"):
        p = cbc.cbc_w(_clusters7(), 2.0, ETA_KAPPA1, kernel="rbf", gamma=gamma, form=form)
        sol = cm.solve(p, "ecos")
        obj[form] = sol.objective
        model = p.decode(sol)
        f = cbc.cbc_decision_values(p.data, model, MU7)
        # on the cluster means the decision value agrees with the slacks of (B.1)
        xi = np.maximum(0, 1 + p.data["radii"] * 2.0 - Y7 * f)
        np.testing.assert_allclose(xi, model["xi"], atol=1e-5)
    assert obj["primal"] == pytest.approx(obj["dual"], rel=1e-6)
    cprimal = cm.solve(cbc.cbc(_clusters7(), 1.0, 0.5, kernel="rbf", gamma=gamma), "ecos")
    cdual = cm.solve(cbc.cbc(_clusters7(), 1.0, 0.5, kernel="rbf", gamma=gamma,
                                form="dual"), "ecos")
    assert cprimal.objective == pytest.approx(cdual.objective, rel=1e-6)


# ---- bad input -------------------------------------------------------------------------------

def test_bad_input():
    c7 = _clusters7()
    with pytest.raises(ProgramError, match="ClusterMoments"):
        cbc.cbc((MU7, Y7))
    with pytest.raises(ProgramError, match="labels"):
        cbc.cbc(ClusterMoments(MU7, SIG7, np.ones(6), np.array([1, 2, 1, 2, 1, 2.0])))
    with pytest.raises(ProgramError, match="both classes"):
        cbc.cbc(ClusterMoments(MU7, SIG7, np.ones(6), np.ones(6)))
    with pytest.raises(ProgramError, match="C"):
        cbc.cbc(c7, C=0.0)
    with pytest.raises(ProgramError, match="W"):
        cbc.cbc_w(c7, W=-1.0)
    with pytest.raises(ProgramError, match="accuracy"):
        cbc.cbc(c7, 1.0, 1.2)
    with pytest.raises(ProgramError, match="kernel"):
        cbc.cbc(c7, kernel="poly")
    with pytest.raises(ProgramError, match="form"):
        cbc.cbc(c7, form="both")
    with pytest.raises(ProgramError, match="robust"):
        cbc.cbc(c7, robust="R3")
    with pytest.raises(ProgramError, match="m_j > n"):
        cbc.cbc(ClusterMoments(MU7, SIG7, np.full(6, 2), Y7), robust="R1")
    with pytest.raises(ProgramError, match="sigma"):
        ClusterMoments(MU7, SIG7, np.ones(6), Y7, sigma="diag")


# ---- ClusterMoments.from_data (streamed) ---------------------------------------------------

def _two_blobs(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(n, 3)) + 100.0 + 2.0 * y[:, None]  # far from 0: cancellation test
    return X, y


@pytest.mark.parametrize("clustering", ["birch", "kmeans"])
def test_cluster_moments_single_cluster_exact(clustering):
    # one cluster per class: the moments are the class mean and total variance (biased 1/m),
    # computed here directly with numpy
    X, y = _two_blobs()
    cl = ClusterMoments.from_data(X, y, clustering=clustering, n_clusters=1, chunk_size=700)
    for label in (-1.0, 1.0):
        Xl = X[y == label]
        j = np.flatnonzero(cl.labels == label)
        assert j.size == 1 and cl.counts[j[0]] == Xl.shape[0]
        np.testing.assert_allclose(cl.means[j[0]], Xl.mean(axis=0), rtol=1e-12)
        var = np.sum((Xl - Xl.mean(axis=0)) ** 2, axis=1).mean()
        assert cl.sigmas[j[0]] ** 2 == pytest.approx(var, rel=1e-9)
    pd = ClusterMoments.from_data(X, y, clustering=clustering, n_clusters=1,
                                  sigma="per-dimension", chunk_size=700)
    np.testing.assert_allclose(pd.sigmas**2 * 3, cl.sigmas**2, rtol=1e-12)


def test_cluster_moments_chunking_invariant():
    X, y = _two_blobs(2000)
    a = ClusterMoments.from_data(X, y, clustering="birch", threshold=0.8, chunk_size=100000)
    b = ClusterMoments.from_data(X, y, clustering="birch", threshold=0.8, chunk_size=100000)
    np.testing.assert_array_equal(a.means, b.means)  # deterministic
    # every point is counted once, and the pooled mean is the class mean
    for cl in (a, ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=4,
                                           chunk_size=300)):
        assert cl.counts.sum() == X.shape[0]
        for label in (-1.0, 1.0):
            m = cl.labels == label
            pooled = (cl.means[m] * cl.counts[m, None]).sum(axis=0) / cl.counts[m].sum()
            np.testing.assert_allclose(pooled, X[y == label].mean(axis=0), rtol=1e-12)


def test_streamed_kmeans_moments_match_assignment():
    # the streamed path (class larger than chunk_size): check its moments against a
    # direct numpy computation from the nearest-centre assignment
    X, y = _two_blobs(4000, seed=3)
    cl = ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=3, chunk_size=500)
    assert cl.n_clusters == 6
    for label in (-1.0, 1.0):
        Xl = X[y == label]
        mus = cl.means[cl.labels == label]
        a = np.argmin(((Xl[:, None, :] - mus[None]) ** 2).sum(-1), axis=1)
        for k in range(mus.shape[0]):
            members = Xl[a == k]
            # Lloyd's fixed point (to scikit-learn's tol): each mean is close to the mean
            # of its nearest-centre members
            np.testing.assert_allclose(members.mean(axis=0), mus[k], atol=0.05)


def test_fit_memory_is_bounded():
    # the estimator never copies X: the peak of new allocations during fit is O(rows)
    # (labels, per-class row indices: ~4 vectors of 8 bytes per row) plus a few 2000-row
    # chunks (0.32 MB each), far below the 8 MB of X (50 000 x 20) itself
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50_000, 20))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 2.0 * y  # separated classes
    # per-dimension radii: in 20 dimensions the trace radius is sqrt(20) times larger (P7)
    est = ClusterSOCPClassifier(clustering="kmeans", n_clusters=3, chunk_size=2000,
                                sigma="per-dimension")
    est.fit(X[:200], y[:200])  # first call: imports (Python objects count in tracemalloc)
    tracemalloc.start()
    est.fit(X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.3 * X.nbytes, peak
    assert est.score(X, y) > 0.95


# ---- estimator -----------------------------------------------------------------------------

@parametrize_with_checks(
    [ClusterSOCPClassifier(),
     ClusterSOCPClassifier(W=2.0, kernel="rbf", solver="cbc-smo")],
    # no check is expected to fail: with the default eta = 0.5 (kappa = 1) every check
    # passes with the interior-point and the specialized solver
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_estimator_matches_formulation_and_exposes_clusters():
    X, y = _two_blobs(1500, seed=2)
    labels = np.where(y > 0, "spam", "ham")  # "spam" > "ham": classes_[1] is positive
    est = ClusterSOCPClassifier(2.0, accuracy=0.7, threshold=1.0).fit(X, labels)
    # the estimator's defaults: per-dimension radii, class_weight="balanced"
    clusters = ClusterMoments.from_data(X, y, threshold=1.0, sigma="per-dimension")
    prog = cbc.cbc(clusters, 2.0, 0.7, class_weight="balanced")
    model = prog.decode(cm.solve(prog, "clarabel"))
    np.testing.assert_allclose(est.coef_[0], model["w"], atol=1e-6)
    assert est.intercept_[0] == pytest.approx(model["b"], abs=1e-6)
    assert est.n_clusters_ == clusters.n_clusters == est.cluster_centers_.shape[0]
    np.testing.assert_allclose(est.radii_, cbc.cbc_kappa(0.7) * clusters.sigmas)
    assert set(est.predict(X)) <= {"spam", "ham"}
    assert est.score(X, labels) > 0.95
    # the specialized solver gives the same model
    smo = ClusterSOCPClassifier(2.0, accuracy=0.7, threshold=1.0, solver="cbc-smo",
                                solver_options={"tol": 1e-9}).fit(X, labels)
    assert smo.program_.kind == "socp.chance.cbc.dual"
    np.testing.assert_allclose(smo.coef_[0], model["w"], atol=1e-5)
    # the data sit near 100 (ill-conditioned Gram matrix of the means): ecos and clarabel
    # themselves agree on b only to ~1e-6 relative
    assert smo.intercept_[0] == pytest.approx(model["b"], rel=3e-6)
    assert smo.model_["primal_objective"] == pytest.approx(
        cm.solve(prog, "clarabel").objective, rel=1e-8)


def test_estimator_fit_clusters_and_errors():
    est = ClusterSOCPClassifier(W=1.0, accuracy=0.5, solver="cbc-smo").fit_clusters(_clusters7())
    np.testing.assert_allclose(est.coef_[0], [0.7071068, 0.7071068], atol=1e-6)
    assert est.intercept_[0] == pytest.approx(-0.0857864, abs=1e-6)  # note test 9
    assert est.solution_.objective == pytest.approx(2.1523340597, rel=1e-9)
    with pytest.raises(cm.SolverError, match="'cbc-smo' does not accept"):
        ClusterSOCPClassifier(solver="cbc-smo", form="primal").fit_clusters(_clusters7())
    with pytest.raises(ProgramError):
        ClusterSOCPClassifier(accuracy=0.3, bound="gaussian").fit_clusters(_clusters7())


def test_gaussian_bound_matches_phi():
    # kappa = Phi^{-1}(eta) enters the radii
    est = ClusterSOCPClassifier(accuracy=0.9, bound="gaussian").fit_clusters(_clusters7())
    np.testing.assert_allclose(est.radii_, norm.ppf(0.9) * SIG7, rtol=1e-12)


def test_estimator_robust_kmeans_pipeline():
    # k-means clusters + RCBC2 radii + cbc-smo, against the same program on clarabel
    X, y = _two_blobs(1200, seed=4)
    est = ClusterSOCPClassifier(clustering="kmeans", n_clusters=4, robust="R2",
                                bound="gaussian", accuracy=0.6, sigma="per-dimension",
                                solver="cbc-smo").fit(X, y)
    assert est.n_clusters_ == 8 and est.score(X, y) > 0.95
    prog = cbc.cbc(est.clusters_, 1.0, 0.6, bound="gaussian", robust="R2")
    assert est.solution_.objective == pytest.approx(cm.solve(prog, "clarabel").objective,
                                                    rel=1e-6)
    np.testing.assert_allclose(est.radii_, cbc.cbc_radii(est.clusters_, 0.6,
                                                            bound="gaussian", robust="R2"))


def test_accuracy_is_the_new_name_of_eta_and_C_W_are_exclusive():
    # issue 12: CBC's eta (a probability of the right side) is ``accuracy``; the old
    # keyword warns for one release and builds the same program (objectives from
    # Clarabel on both); the estimator takes C or W, never both.
    c7 = _clusters7()
    new = cm.solve(cbc.cbc(c7, 1.0, accuracy=0.7), "clarabel").objective
    with pytest.warns(FutureWarning, match="renamed 'accuracy'"):
        old = cm.solve(cbc.cbc(c7, 1.0, eta=0.7), "clarabel").objective
    assert old == pytest.approx(new, rel=1e-9)
    with pytest.warns(FutureWarning, match="renamed 'accuracy'"):
        dep = ClusterSOCPClassifier(eta=0.7).fit_clusters(c7)
    ref = ClusterSOCPClassifier(accuracy=0.7).fit_clusters(c7)
    np.testing.assert_allclose(dep.coef_, ref.coef_, rtol=1e-8)
    with pytest.raises(ValueError, match="give C or W, not both"):
        ClusterSOCPClassifier(C=2.0, W=1.0).fit_clusters(c7)


def _imbalanced_clusters(seed=0, k_pos=4, k_neg=24, dim=3):
    """Random spheres: a few positive clusters inside the spread of many negative ones."""
    rng = np.random.default_rng(seed)
    means = np.r_[rng.normal(0.6, 1.0, (k_pos, dim)), rng.normal(0.0, 1.0, (k_neg, dim))]
    sigmas = rng.uniform(0.05, 0.4, k_pos + k_neg)
    labels = np.r_[np.ones(k_pos), -np.ones(k_neg)]
    return ClusterMoments(means, sigmas, np.full(k_pos + k_neg, 5.0), labels)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("class_weight", ["balanced", {1: 3.0, -1: 0.5}])
@pytest.mark.parametrize("wform", [False, True])
def test_class_weighted_cbc_solvers_agree(seed, class_weight, wform):
    # per-cluster costs C_j (issue 12's default fix): the weighted dual solved by cbc-smo
    # agrees with Clarabel and ECOS on the same program, and with Clarabel on the primal
    # (strong duality of (3.7)/(3.11) and (B.1)/(B.2) with the box 0 <= alpha_j <= C_j).
    clusters = _imbalanced_clusters(seed)
    make = ((lambda form: cbc.cbc_w(clusters, 1.5, 0.6, class_weight=class_weight, form=form))
            if wform else
            (lambda form: cbc.cbc(clusters, 2.0, 0.6, class_weight=class_weight, form=form)))
    dual, primal = make("dual"), make("primal")
    ref = cm.solve(primal, "clarabel")
    assert ref.status is cm.Status.OPTIMAL
    for solver in ("clarabel", "ecos", "cbc-smo"):
        sol = cm.solve(dual, solver)
        # OPTIMAL means certified: conicml recomputed the residuals of the weighted program
        assert sol.status is cm.Status.OPTIMAL, (solver, sol.message)
        assert sol.residuals.source == "recomputed"
        assert sol.objective == pytest.approx(ref.objective, rel=max(obj_rtol(solver), 1e-5))
        alpha = dual.decode(sol)["alpha"]
        assert np.all(alpha <= dual.data["cbc"].upper + 1e-8)


def test_class_weight_balanced_costs_and_bad_values():
    # "balanced": c_+ = k / (2 k_+), c_- = k / (2 k_-) (scikit-learn's rule, in clusters),
    # so both classes carry the same total cost C * k / 2
    clusters = _imbalanced_clusters(0, k_pos=4, k_neg=24)
    costs = cbc.cbc(clusters, 2.0, class_weight="balanced").data["costs"]
    y = clusters.labels
    np.testing.assert_allclose(costs[y > 0], 2.0 * 28 / 8)
    np.testing.assert_allclose(costs[y < 0], 2.0 * 28 / 48)
    assert costs[y > 0].sum() == pytest.approx(costs[y < 0].sum())
    with pytest.raises(ProgramError, match="class_weight"):
        cbc.cbc(clusters, 1.0, class_weight="equal")
    with pytest.raises(ProgramError, match="keys must be"):
        cbc.cbc(clusters, 1.0, class_weight={2: 1.0})
    with pytest.raises(ProgramError, match="finite C"):
        cbc.cbc(clusters, None, class_weight="balanced")


def test_default_estimator_is_not_constant_on_imbalanced_data():
    # the thesis's unweighted (3.7) learns w = 0 when the few positive clusters sit inside
    # the negatives' spread (the constant-score warning says so); the default
    # class_weight="balanced" learns a hyperplane that ranks the positives first
    rng = np.random.default_rng(3)
    X = np.r_[rng.normal(0.8, 1.0, (30, 3)), rng.normal(0.0, 1.0, (600, 3))]
    y = np.r_[np.ones(30), -np.ones(600)]
    with pytest.warns(cm.exceptions.ConvergenceWarning if hasattr(cm.exceptions,
                      "ConvergenceWarning") else Warning, match="constant score"):
        ClusterSOCPClassifier(class_weight=None).fit(X, y)
    est = ClusterSOCPClassifier().fit(X, y)
    assert np.abs(est.coef_).max() > 1e-3
    from sklearn.metrics import roc_auc_score
    assert roc_auc_score(y, est.decision_function(X)) > 0.65


def test_default_estimator_learns_twonorm_in_20_dimensions():
    # twonorm (means +-2/sqrt(20) per coordinate, unit covariance) is nearly linearly
    # separable (Bayes accuracy ~ Phi(2) = 0.977). Clusters of ~10 points in d = 20 have a
    # total (trace) variance ~ d times the per-projection one: the trace spheres (kappa=1)
    # are about as wide as the distance between the class means, overlap, and (3.7) is
    # solved by w = 0. The default per-dimension radius (the spherical model of (3.2))
    # learns the hyperplane.
    from sklearn.preprocessing import StandardScaler
    X, y = cm.datasets.twonorm(1000, dim=20, random_state=0)
    X = StandardScaler().fit_transform(X)
    with pytest.warns(Warning, match="constant score"):
        trace = ClusterSOCPClassifier(sigma="trace").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = ClusterSOCPClassifier().fit(X, y)
    assert est.score(X, y) > 0.95
    # the same clusters, radii sqrt(d) apart
    np.testing.assert_allclose(trace.radii_, np.sqrt(20) * est.radii_, rtol=1e-10)


def _w_form_instance(separation, seed):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(separation, 1.0, (40, 2)), rng.normal(-separation, 1.0, (40, 2))]
    y = np.r_[np.ones(40), -np.ones(40)]
    moments = ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=3,
                                       random_state=0)
    return moments, cbc.cbc_w(moments, 2.0, 0.6, form="dual")


@pytest.mark.parametrize("separation", [6.0, 1.0])  # apex (optimum 0) / overlapping spheres
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_w_form_decoded_model_attains_the_optimum(separation, seed):
    # issue 11: at (or near) the cone apex v = 0, w = W v/||v|| (B.3) is undetermined and
    # used to decode a hyperplane with slack where none is needed (ECOS, certified OPTIMAL,
    # decoded sum of slacks 134 at an optimum of 0 on a campaign instance). The decoded
    # model of every solver must attain the optimum of (B.1), solved independently by
    # Clarabel on the primal form, with a feasible (w, b): ||w|| <= W and the slacks its
    # own margins imply
    moments, prog = _w_form_instance(separation, seed)
    ref = cm.solve(cbc.cbc_w(moments, 2.0, 0.6, form="primal"), "clarabel")
    assert ref.status is cm.Status.OPTIMAL
    data = prog.data["cbc"]
    for name in _solvers(prog.kind):
        sol = cm.solve(prog, name)
        assert sol.status is cm.Status.OPTIMAL, (name, sol.message)
        model = prog.decode(sol)
        g = data.kernel_matvec(model["dual_coef"])
        w_norm = np.sqrt(model["dual_coef"] @ g)
        assert w_norm <= 2.0 * (1 + 1e-9)
        xi = np.maximum(0.0, 1.0 + data.radii * 2.0 - data.y * (g + model["b"]))
        assert np.sum(xi) == pytest.approx(model["primal_objective"], rel=1e-9, abs=1e-12)
        # each solver at its stated objective tolerance (tests/tolerances.py; SCS 1e-3)
        rtol = max(1e-5, obj_rtol(name))
        assert model["primal_objective"] == pytest.approx(ref.objective, rel=rtol, abs=1e-6), \
            (name, model["decoded_by"])
