"""``smo-or`` (Chu & Keerthi's SMO for SVOR, seed 003's "SMO-OR") against the generic backends.

The program is the dual of the C-form SVOR (4.1), kind ``"qp.chance.svor.dual"``;
references are the interior-point backends on the same program and, for the
model, the primal (4.1) (``ordinal.svor(..., C=...)``) solved by clarabel.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import conicml as cm
from conicml.exceptions import OptionError, SolverError
from conicml.formulations import ordinal
from conicml.formulations.svor_dual import svor_dual
from conicml.kinds import SVOR_QP_DUAL

from tolerances import obj_rtol, sol_atol

SMO_TOL = 1e-7  # KKT violation the tests run smo-or at (tolerances.py row)


def ordinal_data(seed, m, dim, r, noise=0.5):
    """Seeded latent-linear ordinal data: equal-frequency ranks of w.x + noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, dim))
    s = X @ rng.normal(size=dim) + noise * rng.normal(size=m)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, r + 1)[1:-1])) + 1
    return X, y


# (seed, points, dimension, ranks, kernel, C): random instances plus structured ones
INSTANCES = [
    (0, 60, 2, 2, "linear", 1.0),
    (1, 120, 5, 4, "linear", 0.3),
    (2, 150, 3, 5, "rbf", 1.0),
    (3, 200, 8, 3, "rbf", 10.0),
    (4, 80, 2, 6, "poly", 0.5),
]

_CACHE: dict = {}


def program(instance):
    seed, m, dim, r, kernel, C = instance
    X, y = ordinal_data(seed, m, dim, r)
    return svor_dual(X, y, C=C, kernel=kernel, gamma=0.3)


def smo(instance):
    if instance not in _CACHE:
        prog = program(instance)
        _CACHE[instance] = (prog, cm.solve(prog, "smo-or", tol=SMO_TOL))
    return _CACHE[instance]


@pytest.mark.parametrize("instance", INSTANCES, ids=lambda t: f"{t[4]}-r{t[3]}-m{t[1]}")
@pytest.mark.parametrize("solver", [s for s in cm.solvers.available(SVOR_QP_DUAL)
                                    if s != "smo-or"])
def test_smo_or_agrees_with_every_backend(instance, solver):
    prog, sol = smo(instance)
    assert sol.status is cm.Status.OPTIMAL, sol.message
    # the solver's certificate: KKT violation <= tol, exact feasibility, tiny relative gap
    assert sol.residuals.dual <= SMO_TOL
    assert sol.residuals.primal <= 1e-12
    assert 0 <= sol.residuals.gap <= 1e-6
    other = cm.solve(prog, solver)
    assert other.ok, other.message
    assert_allclose(sol.objective, other.objective,
                    rtol=obj_rtol(solver), atol=obj_rtol(solver))
    ours, theirs = prog.decode(sol), prog.decode(other)
    # scores g(x_j) = sum v k(x, x_j) are unique (K v is, at a unique w); thresholds by
    # the program's midpoint rule
    scale = max(1.0, float(np.abs(theirs["scores"]).max()))
    atol = max(sol_atol(solver), 1e-4) * scale
    assert_allclose(ours["scores"], theirs["scores"], atol=atol * 10)
    assert_allclose(ours["loss"], theirs["loss"], rtol=1e-3, atol=1e-3 * scale)


@pytest.mark.parametrize("instance", INSTANCES[:2] + INSTANCES[3:4],
                         ids=lambda t: f"{t[4]}-r{t[3]}")
def test_smo_or_model_is_the_primal_4_1(instance):
    """The dual model (w = sum v phi(x), thresholds) solves the primal (4.1): same objective,
    same scores as clarabel on the primal kind."""
    seed, m, dim, r, kernel, C = instance
    X, y = ordinal_data(seed, m, dim, r)
    prog, sol = smo(instance)
    model = prog.decode(sol)
    primal = ordinal.svor(X, y, C=C, kernel=kernel, gamma=0.3)
    ref = cm.solve(primal, "clarabel")
    ref_model = primal.decode(ref)
    assert_allclose(sol.objective, ref.objective, rtol=1e-6)
    assert_allclose(model["primal_objective"], ref.objective, rtol=1e-6)
    assert_allclose(model["scores"], ref_model["scores"], atol=1e-4 * max(
        1.0, np.abs(ref_model["scores"]).max()))
    if kernel == "linear":
        assert_allclose(model["w"], ref_model["w"], atol=1e-4)
    # predictions of the two models agree on fresh points (ties at thresholds aside)
    Xt, _ = ordinal_data(seed + 100, 200, dim, r)
    pa = ordinal.ordinal_predict(prog.data, model, Xt)
    pb = ordinal.ordinal_predict(primal.data, ref_model, Xt)
    assert np.mean(pa == pb) > 0.97


def test_certificate_is_recomputed_and_tracks_tol():
    prog = program(INSTANCES[2])
    loose = cm.solve(prog, "smo-or", tol=1e-1)
    tight = cm.solve(prog, "smo-or", tol=1e-8)
    assert loose.residuals.source == "recomputed" == tight.residuals.source
    assert tight.residuals.gap < loose.residuals.gap
    assert tight.residuals.gap <= 1e-7
    assert loose.extras["kkt_violation"] <= 1e-1 < 2.0  # 2 = violation at alpha = 0
    assert tight.iterations > loose.iterations


def test_ranks_two_points_each_closed_form():
    """r = 2, one point per rank, linear kernel, large C: the hard-margin SVM of two points,
    margin 2/||w|| = |x2 - x1| (closed form), threshold at the midpoint."""
    X = np.array([[0.0, 0.0], [3.0, 4.0]])
    prog = svor_dual(X, [1, 2], C=1e3, kernel="linear")
    sol = cm.solve(prog, "smo-or", tol=1e-10)
    model = prog.decode(sol)
    assert_allclose(2.0 / np.linalg.norm(model["w"]), 5.0, rtol=1e-8)
    assert_allclose(model["thresholds"], [model["w"] @ X.mean(axis=0)], atol=1e-8)
    assert_allclose(sol.objective, 0.5 * np.linalg.norm(model["w"]) ** 2, rtol=1e-8)


def test_limits_callback_and_warm_start():
    prog = program(INSTANCES[2])
    capped = cm.solve(prog, "smo-or", max_iter=3)
    assert capped.status is cm.Status.USER_LIMIT and "max_iter" in capped.message
    seen = []

    def stop(result):
        seen.append(result.iteration)
        if result.iteration == 5:
            raise StopIteration

    cb = cm.solve(prog, "smo-or", callback=stop)
    assert cb.status is cm.Status.USER_LIMIT and "callback" in cb.message
    assert seen == [1, 2, 3, 4, 5]
    timed = cm.solve(prog, "smo-or", time_limit=1e-9, tol=1e-12)
    assert timed.status is cm.Status.USER_LIMIT
    full = cm.solve(prog, "smo-or", tol=1e-8)
    warm = cm.solve(prog, "smo-or", tol=1e-8,
                    x0=(full.values["alpha"], full.values["alpha_star"]))
    assert warm.iterations == 0 and warm.status is cm.Status.OPTIMAL
    with pytest.raises(OptionError, match="not feasible"):
        cm.solve(prog, "smo-or", x0=(np.ones(150), np.zeros(150)))
    for bad in ({"tol": 0}, {"max_iter": -1}, {"time_limit": -1.0}, {"callback": 3}):
        with pytest.raises(OptionError):
            cm.solve(prog, "smo-or", **bad)


def test_wrong_kind_is_refused():
    X, y = ordinal_data(0, 30, 2, 3)
    with pytest.raises(SolverError):
        cm.solve(ordinal.svor(X, y, C=1.0), "smo-or")


@pytest.mark.parametrize("y, match", [
    ([1, 2, 3, 3, 2, 1.5], "non-integer"),
    ([1, 2, 4, 4, 2, 1], "rank 3 has no points"),
    ([2, 3, 3, 2, 2, 3], "starting at 1"),
    ([1, 1, 1, 1, 1, 1], "at least two ranks"),
    (["a", "b", "c", "a", "b", "c"], "not numbers"),
    ([1, 2, np.nan, 1, 2, 3], "NaN"),
])
def test_bad_ranks_raise_value_error_naming_the_problem(y, match):
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match=match):
        svor_dual(X, y, C=1.0)


@pytest.mark.parametrize("C", [0.0, -1.0, np.nan])
def test_non_positive_C_raises(C):
    X, y = ordinal_data(0, 20, 2, 3)
    with pytest.raises(ValueError, match="C"):
        svor_dual(X, y, C=C)


def test_polishing_closes_the_gap_at_large_C():
    # at C = 100 the stop on the absolute violation (tol 1e-3) left converged points at a
    # relative primal-dual gap of ~1e-2, which conicml's certificate (certify_tol 1e-3)
    # demoted; polishing goes on at tol / 10 while the gap exceeds gap_tol
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 10))
    score = X @ rng.normal(size=10) + 0.5 * rng.normal(size=300)
    y = 1 + np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75]))
    prog = svor_dual(X, y, C=100.0, kernel="rbf")
    polished = cm.solve(prog, "smo-or")
    # OPTIMAL here is conicml's verdict: the residuals are recomputed from the program's
    # data and the gap is within smo-or's certify_tol (1e-3) and gap_tol
    assert polished.status is cm.Status.OPTIMAL
    assert polished.residuals.source == "recomputed"
    assert polished.residuals.gap <= 9e-4
    plain = cm.solve(prog, "smo-or", gap_tol=None)
    assert plain.residuals.gap >= polished.residuals.gap
    with pytest.raises(OptionError, match="gap_tol"):
        cm.solve(prog, "smo-or", gap_tol=-1.0)
