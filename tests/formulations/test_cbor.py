"""CBOR-SOCP (seed 003 eqs. 4.3-4.5) and the baseline SVOR (4.1)/(4.2): formulations."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import conicml as cm
from conicml.exceptions import ProgramError
from conicml.formulations import ordinal

from tolerances import obj_rtol, sol_atol

PRIMAL, DUAL = "socp.chance.cbor.primal", "socp.chance.cbor.dual"


def note_clusters():
    """Seed-003 note §5.3 test 10: r = 3, 7 clusters (rank, mean, sigma)."""
    means = np.array([(-2, 0), (-1.5, 1), (0, 0), (-0.2, 0.5), (2, 0), (1.0, -0.5),
                      (1.5, 0.2)], dtype=float)
    sigmas = np.array([0.3, 0.4, 0.3, 0.2, 0.3, 0.5, 0.2])
    ranks = np.array([1, 1, 2, 2, 3, 3, 2])
    return cm.ClusterMoments(means, sigmas, np.ones(7), ranks)


def ordinal_points(seed, m=60, dim=3, r=4, sep=2.0):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(1, r + 1), rng.integers(1, r + 1, m - r)])
    u = rng.normal(size=dim)
    X = rng.normal(size=(m, dim)) + sep * np.outer(y - (r + 1) / 2, u / np.linalg.norm(u))
    return X, y


# note §5.3 test 10 [verified in the note by an independent primal/dual solve]:
# W = 1.5, kappa = 1 (eta = 0.5, Chebyshev), optimum sum(xi + xi*) = 4.3291313,
# w = (1.45, -0.384057) with ||w|| = W, thresholds (-1.45, 1.45)
NOTE_OBJECTIVE = 4.3291313
NOTE_W = np.array([1.45, -0.384057])


@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("solver", cm.solvers.available(PRIMAL))
def test_note_example_objective_and_model(form, solver):
    prog = ordinal.cbor(note_clusters(), W=1.5, accuracy=0.5, form=form)
    if solver not in cm.solvers.available(prog.kind):
        pytest.skip(f"{solver} does not take {prog.kind}")
    sol = cm.solve(prog, solver)
    assert sol.status is cm.Status.OPTIMAL
    # the note gives 8 significant digits; scs is looser (tolerances.py)
    assert_allclose(sol.objective, NOTE_OBJECTIVE, rtol=max(obj_rtol(solver), 2e-8))
    model = prog.decode(sol)
    atol = sol_atol(solver) if form == "primal" else 10 * sol_atol(solver)
    assert_allclose(model["w"], NOTE_W, atol=atol)
    assert_allclose(np.linalg.norm(model["w"]), 1.5, atol=atol)  # ||w|| = W at the optimum
    # canonical thresholds: the midpoints of the optimal intervals, here (-W.., W..)
    assert_allclose(model["thresholds"], [-1.45, 1.45], atol=atol)
    assert_allclose(model["b"], -model["thresholds"])  # package convention b = -theta
    assert_allclose(model["loss"], NOTE_OBJECTIVE, rtol=1e-5)


def test_primal_equals_dual_and_reversed_partial_sums_break_weak_duality():
    """(4.5) with s* <= s reproduces the primal; the reversed direction overshoots (note F4)."""
    clusters = note_clusters()
    p = cm.solve(ordinal.cbor(clusters, W=1.5, accuracy=0.5, form="primal"), "clarabel").objective
    dual_prog = ordinal.cbor(clusters, W=1.5, accuracy=0.5, form="dual")
    d = cm.solve(dual_prog, "clarabel").objective
    assert_allclose(d, p, rtol=1e-7)
    # reverse the inequality: the dual value exceeds the primal (8.1159 in the note)
    form = dual_prog.form
    alpha, alpha_star = form.variables["alpha"], form.variables["alpha_star"]
    sel = dual_prog.data["selectors"]
    D = sel["S"] @ alpha - sel["S_star"] @ alpha_star
    cons = [c for name, c in form.constraints.items() if name != "partial"] + [D[:-1] <= 0]
    import cvxpy as cp

    reversed_value = cp.Problem(form.problem.objective, cons).solve(solver="CLARABEL")
    assert reversed_value > p + 1.0
    assert_allclose(reversed_value, 8.1159, atol=1e-4)


@pytest.mark.parametrize("solver", ["clarabel", "ecos"])
def test_cbor_with_point_clusters_is_the_baseline_svor(solver):
    """Note §5.3 test 11: sigma = 0 and every point a cluster makes (4.3) the SVOR (4.2)."""
    X, y = ordinal_points(0, m=50, dim=3, r=4)
    svor = ordinal.svor(X, y, W=1.0)  # ||w|| = W at the optimum (W = 2 leaves it inactive)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="none")
    assert np.all(clusters.sigmas == 0)
    base = cm.solve(svor, solver)
    base_model = svor.decode(base)
    for form in ("primal", "dual"):
        prog = ordinal.cbor(clusters, W=1.0, accuracy=0.7, form=form)  # irrelevant at sigma = 0
        sol = cm.solve(prog, solver)
        assert_allclose(sol.objective, base.objective, rtol=obj_rtol(solver))
        model = prog.decode(sol)
        assert_allclose(model["w"], base_model["w"], atol=10 * sol_atol(solver))
        assert_allclose(model["thresholds"], base_model["thresholds"], atol=10 * sol_atol(solver))
    # the same through cbor-smo on the dual
    smo = cm.solve(ordinal.cbor(clusters, W=1.0, accuracy=0.7, form="dual"), "cbor-smo", tol=1e-7)
    assert_allclose(smo.objective, base.objective, rtol=1e-6)


def test_svor_qp_form_solves_the_socp_form_at_W_equal_norm_w():
    """(4.1) with C and (4.2) with W = ||w_C|| have the same solution (thesis §4.1.1)."""
    X, y = ordinal_points(1, m=40, dim=2, r=3, sep=1.5)
    qp = ordinal.svor(X, y, C=0.7)
    assert qp.kind == "qp.chance.svor"
    model_c = qp.decode(cm.solve(qp, "clarabel"))
    W = float(np.linalg.norm(model_c["w"]))
    socp = ordinal.svor(X, y, W=W)
    sol = cm.solve(socp, "clarabel")
    model_w = socp.decode(sol)
    assert_allclose(model_w["w"], model_c["w"], atol=1e-5)
    assert_allclose(sol.objective, model_c["loss"], rtol=1e-6)
    assert_allclose(model_w["thresholds"], model_c["thresholds"], atol=1e-5)


def test_rbf_primal_and_dual_agree_and_use_the_kernel_radius():
    X, y = ordinal_points(2, m=90, dim=2, r=3, sep=1.5)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=6)
    primal = ordinal.cbor(clusters, W=3.0, accuracy=0.8, kernel="rbf", gamma=0.5, form="primal")
    dual = ordinal.cbor(clusters, W=3.0, accuracy=0.8, kernel="rbf", gamma=0.5, form="dual")
    kappa = 2.0  # sqrt(0.8 / 0.2), note §5.3 test 1
    radii = np.sqrt(2 * (1 - np.exp(-0.5 * (kappa * clusters.sigmas) ** 2)))  # eq. 4.4
    assert_allclose(dual.data["d"], 1 + 3.0 * radii)
    sp, sd = cm.solve(primal, "clarabel"), cm.solve(dual, "clarabel")
    assert_allclose(sp.objective, sd.objective, rtol=1e-6)
    mp, md = primal.decode(sp), dual.decode(sd)
    assert "w" not in mp and "w" not in md
    assert_allclose(mp["scores"], md["scores"], atol=1e-3)
    # g(mu_j) = sum_l dual_coef_l k(mu_l, mu_j) reproduces the scores
    K = dual.data["kernel"](clusters.means, clusters.means)
    assert_allclose(K @ md["dual"]["dual_coef"], md["scores"], atol=1e-8)
    assert_allclose(K @ mp["dual"]["dual_coef"], mp["scores"], atol=1e-6)


def test_canonical_thresholds_are_optimal_ordered_and_unique():
    """For fixed scores the thresholds minimise the slack; ties merge (PAVA)."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        r = int(rng.integers(2, 6))
        ranks = np.concatenate([np.arange(1, r + 1), rng.integers(1, r + 1, 25)])
        scores = rng.normal(size=ranks.size) * 2 + 0.3 * ranks * rng.uniform(-1, 1)
        d = 1 + rng.uniform(0, 1, ranks.size)
        theta = ordinal._ordinal_thresholds(scores, d, ranks, r)
        assert np.all(np.diff(theta) >= -1e-12)
        xi, xs = ordinal._ordinal_slacks(scores, d, ranks, r, theta)
        best = xi.sum() + xs.sum()
        # an independent LP over the ordered thresholds gives the same optimal slack
        import cvxpy as cp

        t = cp.Variable(r - 1)
        loss = 0
        for i in range(1, r):
            loss += cp.sum(cp.pos(scores[ranks == i] + d[ranks == i] - t[i - 1]))
            loss += cp.sum(cp.pos(t[i - 1] - scores[ranks == i + 1] + d[ranks == i + 1]))
        cons = [t[1:] >= t[:-1]] if r > 2 else []
        lp = cp.Problem(cp.Minimize(loss), cons).solve(solver="CLARABEL")
        assert_allclose(best, lp, rtol=1e-7, atol=1e-7)


def test_prediction_rule_counts_thresholds_below_the_score():
    """rank = 1 + #{i : g(x) > theta_i} (note P13)."""
    X, y = ordinal_points(3, m=60, dim=2, r=4, sep=3.0)
    prog = ordinal.svor(X, y, W=3.0)
    model = prog.decode(cm.solve(prog, "clarabel"))
    pred = ordinal.ordinal_predict(prog.data, model, X)
    manual = 1 + (X @ model["w"] > model["thresholds"][:, None]).sum(axis=0)
    assert np.array_equal(pred, manual)
    assert np.mean(pred == y) > 0.9  # well separated ranks


def test_kinds_and_pickling():
    import pickle

    clusters = note_clusters()
    assert ordinal.cbor(clusters, form="primal").kind == PRIMAL
    prog = ordinal.cbor(clusters, W=1.5)
    assert prog.kind == DUAL and "cbor-smo" in cm.solvers.available(DUAL)
    assert "cbor-smo" not in cm.solvers.available(PRIMAL)
    again = pickle.loads(pickle.dumps(prog))
    assert_allclose(cm.solve(again, "ecos").objective, NOTE_OBJECTIVE, rtol=1e-6)
    assert ordinal.svor(*ordinal_points(0), W=1.0).kind == "socp.chance.svor"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"W": 0.0}, "W must be > 0"),
        ({"accuracy": 1.0}, r"accuracy must lie in \(0, 1\)"),
        ({"accuracy": 0.3, "bound": "gaussian"}, "needs accuracy >= 0.5"),
        ({"kernel": "poly"}, "kernel='linear' or 'rbf'"),
        ({"form": "both"}, "form must be"),
        ({"bound": "markov"}, "bound must be"),
    ],
)
def test_bad_hyper_parameters_raise(kwargs, match):
    with pytest.raises(ProgramError, match=match):
        ordinal.cbor(note_clusters(), **kwargs)


def test_bad_ranks_raise():
    c = note_clusters()
    with pytest.raises(ProgramError, match="ranks 1..r"):
        ordinal.cbor(cm.ClusterMoments(c.means, c.sigmas, c.counts, c.labels + 1))
    with pytest.raises(ProgramError, match="ranks 1..r"):
        ordinal.cbor(cm.ClusterMoments(c.means, c.sigmas, c.counts, np.ones(7)))
    with pytest.raises(ProgramError, match="integer ranks"):
        ordinal.cbor(cm.ClusterMoments(c.means, c.sigmas, c.counts, c.labels + 0.5))
    with pytest.raises(ProgramError, match="ClusterMoments"):
        ordinal.cbor(c.means)
    X, y = ordinal_points(0)
    with pytest.raises(ProgramError, match="exactly one of W"):
        ordinal.svor(X, y)
    with pytest.raises(ProgramError, match="exactly one of W"):
        ordinal.svor(X, y, W=1.0, C=1.0)
    with pytest.raises(ProgramError, match="shape mismatch"):
        ordinal.svor(X, y[:-1], W=1.0)
    with pytest.raises(ProgramError, match="NaN"):
        ordinal.svor(np.where(X > 2, np.nan, X), y, W=1.0)
