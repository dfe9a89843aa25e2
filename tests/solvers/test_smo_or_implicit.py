"""SVOR with implicit constraints (Chu & Keerthi's SVORIM) and ``smo-or`` on it.

The program is the dual of the implicit-constraint SVOR, kind
``"qp.chance.svor.implicit.dual"``; references are the generic backends on the
same program (registry-parametrized), clarabel on the primal kind
``"qp.chance.svor.implicit"``, and, for two ranks, ``smo`` on the soft-margin
SVM (with r = 2 the implicit SVOR *is* the C-SVM with labels -1/+1).
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import conicml as cm
from conicml.exceptions import OptionError, SolverError
from conicml.formulations import svm
from conicml.formulations.svor_dual import svor_dual
from conicml.formulations.svor_implicit import implicit_thresholds, svorim, svorim_dual
from conicml.kinds import SVORIM_QP_DUAL

from tolerances import THRESHOLD_ATOL_FACTOR, obj_rtol, sol_atol

SMO_TOL = 1e-7  # KKT violation the tests run smo-or at (tolerances.py row "smo-or")


def ordinal_data(seed, m, dim, r, noise=0.5):
    """Seeded latent-linear ordinal data: equal-frequency ranks of w.x + noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, dim))
    s = X @ rng.normal(size=dim) + noise * rng.normal(size=m)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, r + 1)[1:-1])) + 1
    return X, y


def clustered_data(seed, per_rank, r, spread=0.4):
    """Structured: rank i is a tight blob around (i, i) on a line (separable up to spread)."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([np.array([i, i], float) + spread * rng.normal(size=(per_rank, 2))
                        for i in range(1, r + 1)])
    y = np.repeat(np.arange(1, r + 1), per_rank)
    return X, y


# (name, builder, kernel, C): random instances plus structured ones
INSTANCES = [
    ("lin-r4", lambda: ordinal_data(0, 70, 3, 4), "linear", 1.0),
    ("rbf-r5", lambda: ordinal_data(2, 120, 3, 5), "rbf", 1.0),
    ("rbf-r3-C10", lambda: ordinal_data(3, 150, 6, 3, noise=1.0), "rbf", 10.0),
    ("poly-r6", lambda: ordinal_data(4, 80, 2, 6), "poly", 0.5),
    ("blobs-r4", lambda: clustered_data(5, 15, 4), "linear", 100.0),  # near hard margin
    ("blobs-rbf-r3", lambda: clustered_data(6, 25, 3, spread=0.8), "rbf", 3.0),
]
IDS = [t[0] for t in INSTANCES]
_CACHE: dict = {}


def program(instance):
    name, make, kernel, C = instance
    X, y = make()
    return svorim_dual(X, y, C=C, kernel=kernel, gamma=0.3)


def smo(instance, **options):
    key = (instance[0], tuple(sorted(options.items())))
    if key not in _CACHE:
        prog = program(instance)
        _CACHE[key] = (prog, cm.solve(prog, "smo-or", tol=SMO_TOL, **options))
    return _CACHE[key]


OSQP_HARD = pytest.mark.xfail(
    strict=True, reason="osqp (ADMM) does not reach its tolerances at its default cap of "
    "1e4 iterations (nor in 2e5, measured) on the near-hard-margin linear instance "
    "(C = 100, rank-2 Gram matrix): a first-order backend's limit; clarabel/ecos/scs agree")
CASES = [pytest.param(solver, inst, id=f"{solver}-{inst[0]}",
                      marks=OSQP_HARD if (solver, inst[0]) == ("osqp", "blobs-r4") else ())
         for solver in cm.solvers.available(SVORIM_QP_DUAL) if solver != "smo-or"
         for inst in INSTANCES]


@pytest.mark.parametrize("solver, instance", CASES)
def test_smo_or_implicit_agrees_with_every_backend(instance, solver):
    prog, sol = smo(instance)
    assert sol.status is cm.Status.OPTIMAL, sol.message
    # the certificate recomputed by solve(): exact feasibility, KKT, relative gap
    assert sol.residuals.source == "recomputed"
    assert sol.residuals.primal <= 1e-12
    assert 0 <= sol.residuals.gap <= 1e-6
    assert sol.extras["kkt_violation"] <= SMO_TOL
    other = cm.solve(prog, solver)
    assert other.ok, other.message
    assert_allclose(sol.objective, other.objective, rtol=obj_rtol(solver),
                    atol=obj_rtol(solver))
    ours, theirs = prog.decode(sol), prog.decode(other)
    scale = max(1.0, float(np.abs(theirs["scores"]).max()))
    atol = max(sol_atol(solver), 1e-4) * scale * THRESHOLD_ATOL_FACTOR
    # decision values g(x_p) are unique (w is); thresholds by the midpoint rule
    assert_allclose(ours["scores"], theirs["scores"], atol=atol)
    assert_allclose(ours["thresholds"], theirs["thresholds"], atol=atol)
    assert_allclose(ours["loss"], theirs["loss"], rtol=1e-3, atol=1e-3 * scale)


@pytest.mark.parametrize("instance", [INSTANCES[i] for i in (0, 2, 4)],
                         ids=[IDS[i] for i in (0, 2, 4)])
def test_dual_model_solves_the_implicit_primal(instance):
    """Strong duality with the primal kind on clarabel; thresholds ordered (Chu & Keerthi
    2005, 2007: the implicit constraints order them at the optimum without imposing it)."""
    name, make, kernel, C = instance
    X, y = make()
    prog, sol = smo(instance)
    model = prog.decode(sol)
    primal = svorim(X, y, C=C, kernel=kernel, gamma=0.3)
    ref = cm.solve(primal, "clarabel")
    ref_model = primal.decode(ref)
    assert_allclose(sol.objective, ref.objective, rtol=1e-6)
    assert_allclose(model["primal_objective"], ref.objective, rtol=1e-6)
    scale = max(1.0, np.abs(ref_model["scores"]).max())
    assert_allclose(model["scores"], ref_model["scores"], atol=1e-4 * scale)
    if kernel == "linear":
        assert_allclose(model["w"], ref_model["w"], atol=1e-4 * scale)
    # the solver's own thresholds (midpoints of [b_low, b_up]) vs the primal's thresholds
    assert np.all(np.diff(ref.values["thresholds"]) >= -1e-6)
    assert_allclose(sol.extras["thresholds"], model["thresholds"], atol=1e-3 * scale)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_two_ranks_is_the_c_svm(kernel):
    """r = 2: one threshold, implicit = explicit = C-SVM with labels -1 (rank 1) / +1
    (rank 2), decision g(x) - theta = w.x + b. smo (an independent solver) on the SVM."""
    X, y = ordinal_data(7, 90, 3, 2, noise=1.0)
    C = 2.0
    prog = svorim_dual(X, y, C=C, kernel=kernel, gamma=0.3)
    sol = cm.solve(prog, "smo-or", tol=SMO_TOL)
    ref_prog = svm.soft_margin(X, np.where(y == 1, -1.0, 1.0), C, kernel=kernel, gamma=0.3,
                               form="dual")
    ref = cm.solve(ref_prog, "smo", tol=1e-8)
    assert_allclose(sol.objective, ref.objective, rtol=1e-6)
    model, ref_model = prog.decode(sol), ref_prog.decode(ref)
    expl = svor_dual(X, y, C=C, kernel=kernel, gamma=0.3)
    assert_allclose(cm.solve(expl, "smo-or", tol=SMO_TOL).objective, sol.objective, rtol=1e-8)
    f_ref = svm.decision_values(ref_prog.data, ref_model, X)
    assert_allclose(model["scores"] - model["thresholds"][0], f_ref, atol=1e-4)


def test_shrinking_changes_the_path_not_the_answer():
    """Same certified optimum with and without shrinking; shrinking does set variables
    aside on a problem of a few hundred points."""
    X, y = ordinal_data(11, 200, 4, 4, noise=0.7)
    for build in (svorim_dual, svor_dual):
        prog = build(X, y, C=3.0, kernel="rbf", gamma=0.3)
        on = cm.solve(prog, "smo-or", tol=1e-5, shrinking=True)
        off = cm.solve(prog, "smo-or", tol=1e-5, shrinking=False)
        assert on.status is off.status is cm.Status.OPTIMAL
        assert on.extras["shrink_events"] > 0 and on.extras["min_active"] < on.values[
            "alpha"].size * 2
        assert off.extras["shrink_events"] == 0
        assert_allclose(on.objective, off.objective, rtol=1e-7)
        assert_allclose(prog.decode(on)["scores"], prog.decode(off)["scores"], atol=1e-3)


def test_implicit_penalises_more_than_explicit():
    """Every explicit constraint is an implicit one (same w, theta), so the implicit optimum
    is >= the explicit one; equal at r = 2 (test above)."""
    X, y = ordinal_data(12, 100, 3, 5, noise=1.5)
    imp = cm.solve(svorim_dual(X, y, C=1.0, kernel="rbf", gamma=0.3), "smo-or", tol=SMO_TOL)
    exp = cm.solve(svor_dual(X, y, C=1.0, kernel="rbf", gamma=0.3), "smo-or", tol=SMO_TOL)
    assert imp.objective > exp.objective * (1 + 1e-6)


def test_threshold_rule_closed_form():
    """Scores -3, -1, 1, 3 with ranks 1, 1, 2, 2: breakpoints g+1 = {-2, 0}, g-1 = {0, 2},
    sorted (-2, 0, 0, 2), a = 2 -> theta = (0 + 0)/2 = 0."""
    theta = implicit_thresholds(np.array([-3.0, -1.0, 1.0, 3.0]), np.array([1, 1, 2, 2]), 2)
    assert_allclose(theta, [0.0])


def test_limits_callback_and_warm_start():
    inst = INSTANCES[1]
    prog = program(inst)
    capped = cm.solve(prog, "smo-or", max_iter=3)
    assert capped.status is cm.Status.USER_LIMIT and "max_iter" in capped.message
    seen = []

    def stop(result):
        seen.append(result.iteration)
        assert result.values["alpha"].shape == (120, 4)
        if result.iteration == 5:
            raise StopIteration

    cb = cm.solve(prog, "smo-or", callback=stop)
    assert cb.status is cm.Status.USER_LIMIT and "callback" in cb.message
    assert seen == [1, 2, 3, 4, 5]
    timed = cm.solve(prog, "smo-or", time_limit=1e-9, tol=1e-12)
    assert timed.status is cm.Status.USER_LIMIT and "time" in timed.message
    _, full = smo(inst)
    warm = cm.solve(prog, "smo-or", tol=1e-6,
                    x0=(full.values["alpha"], full.values["alpha_star"]))
    assert warm.iterations == 0 and warm.status is cm.Status.OPTIMAL
    bad = np.zeros((120, 4))
    bad[0, 3] = 1.0  # unbalanced threshold 4
    with pytest.raises(OptionError, match="not feasible"):
        cm.solve(prog, "smo-or", x0=(bad, np.zeros((120, 4))))
    with pytest.raises(OptionError, match="shape"):
        cm.solve(prog, "smo-or", x0=(np.zeros(120), np.zeros(120)))
    with pytest.raises(OptionError, match="shrinking"):
        cm.solve(prog, "smo-or", shrinking="yes")


def test_certificate_tracks_tol():
    prog = program(INSTANCES[1])
    loose = cm.solve(prog, "smo-or", tol=1e-1)
    tight = cm.solve(prog, "smo-or", tol=1e-8)
    assert loose.residuals.source == "recomputed" == tight.residuals.source
    assert tight.residuals.gap < loose.residuals.gap
    assert tight.residuals.gap <= 1e-7
    # a perturbed point is not certified: demoted by solve's recomputed certificate
    res = prog.certify(cm.Solution(status=cm.Status.OPTIMAL, solver="x", objective=0.0,
                                   values={"alpha": loose.values["alpha"] * 0.5,
                                           "alpha_star": loose.values["alpha_star"]}))
    assert res.primal > 1e-3


def test_wrong_kind_is_refused():
    X, y = ordinal_data(0, 30, 2, 3)
    with pytest.raises(SolverError, match="implicit"):
        cm.solve(svorim(X, y, C=1.0), "smo-or")


@pytest.mark.parametrize("build", [svorim, svorim_dual])
@pytest.mark.parametrize("y, match", [
    ([1, 2, 3, 3, 2, 1.5], "non-integer"),
    ([1, 2, 4, 4, 2, 1], "rank 3 has no points"),
    ([2, 3, 3, 2, 2, 3], "starting at 1"),
    ([1, 1, 1, 1, 1, 1], "at least two ranks"),
    (["a", "b", "c", "a", "b", "c"], "not numbers"),
    ([1, 2, 3], "shape mismatch"),
])
def test_bad_ranks_raise_value_error_naming_the_problem(build, y, match):
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match=match):
        build(X, y, C=1.0)


@pytest.mark.parametrize("build", [svorim, svorim_dual])
@pytest.mark.parametrize("C", [0.0, -1.0, np.nan, np.inf])
def test_non_positive_C_raises(build, C):
    X, y = ordinal_data(0, 20, 2, 3)
    with pytest.raises(ValueError, match="C"):
        build(X, y, C=C)
