"""``cbor-smo`` (CBOR-Iter, seed 003 ch. 5 / note A2) against the generic backends."""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose
from ordinal_clusters import random_clusters
from solver_report import own

import conicml as cm
from conicml.exceptions import OptionError, SolverError
from conicml.formulations import ordinal
from conicml.solvers import cbor_smo

from tolerances import obj_rtol

DUAL = "socp.chance.cbor.dual"
SMO_TOL = 1e-7  # KKT violation the tests run cbor-smo at (tolerances.py row)


# (seed, clusters, dimension, ranks, kernel): dimensions up to 50, clusters up to 500
INSTANCES = [
    (0, 30, 2, 3, "linear"),
    (1, 100, 5, 4, "linear"),
    (3, 500, 50, 5, "linear"),
    (4, 100, 5, 4, "rbf"),
    (5, 300, 10, 3, "rbf"),
    (6, 500, 50, 6, "rbf"),
]
SLOW_INSTANCES = [(2, 200, 20, 5, "linear")]  # ~35k pair updates (the low-rank K case)


def make_program(seed, k, dim, r, kernel, form="dual"):
    return ordinal.cbor(random_clusters(seed, k, dim, r), W=4.0, accuracy=0.6, kernel=kernel,
                  gamma=0.1, form=form)


_CACHE: dict = {}


def smo_solution(instance):
    if instance not in _CACHE:
        prog = make_program(*instance)
        _CACHE[instance] = (prog, cm.solve(prog, "cbor-smo", tol=SMO_TOL))
    return _CACHE[instance]


def primal_reference(instance):
    """The decoded model of the primal (4.3)/(4.4) by clarabel (it determines w)."""
    key = ("primal", instance)
    if key not in _CACHE:
        primal = make_program(*instance, form="primal")
        _CACHE[key] = primal.decode(cm.solve(primal, "clarabel"))
    return _CACHE[key]


def check_against(instance, solver):
    prog, smo = smo_solution(instance)
    assert smo.status is cm.Status.OPTIMAL, smo.message
    # certificate: KKT violation <= tol, exact feasibility, small non-negative gap
    assert own(smo).dual <= SMO_TOL
    assert smo.extras["kkt_violation"] == own(smo).dual
    assert own(smo).primal <= 1e-9
    assert own(smo).gap <= 1e-6 * max(1.0, smo.objective)
    # weak duality: the primal slack at the decoded (w, theta) bounds the dual value
    assert smo.extras["primal_objective"] >= smo.objective - 1e-9 * max(1.0, smo.objective)
    assert smo.iterations > 0
    other = cm.solve(prog, solver)
    assert other.ok
    assert_allclose(smo.objective, other.objective, rtol=obj_rtol(solver))
    # decoded models: cbor-smo's and the backend's dual decode against the primal's
    ref = primal_reference(instance)
    scale = max(1.0, np.abs(ref["scores"]).max())
    for model, atol in ((prog.decode(smo), 1e-4), (prog.decode(other), 1e-3)):
        assert_allclose(model["scores"], ref["scores"], atol=atol * scale)
        assert_allclose(model["thresholds"], ref["thresholds"], atol=atol * scale)
        if "w" in ref:
            assert_allclose(model["w"], ref["w"], atol=atol * max(1.0, np.abs(ref["w"]).max()))


GENERIC = [s for s in cm.solvers.available(DUAL) if s != "cbor-smo"]


@pytest.mark.parametrize("solver", [s for s in GENERIC if s != "scs"])
@pytest.mark.parametrize("instance", INSTANCES, ids=lambda t: "-".join(map(str, t)))
def test_agrees_with_generic_backends_on_random_instances(instance, solver):
    check_against(instance, solver)


@pytest.mark.slow
@pytest.mark.parametrize("solver", GENERIC)
@pytest.mark.parametrize("instance", SLOW_INSTANCES + INSTANCES[:2],
                         ids=lambda t: "-".join(map(str, t)))
def test_agrees_on_slow_instances_and_with_scs(instance, solver):
    check_against(instance, solver)


def test_compare_puts_it_beside_the_interior_point_backends():
    prog = make_program(*INSTANCES[3])
    table = cm.compare(prog, ["clarabel", "ecos", "cbor-smo"], rtol=1e-6,
                       options={"cbor-smo": {"tol": SMO_TOL}})
    assert table.agree, str(table)


def test_note_example_converges_in_few_iterations_to_the_thesis_optimum():
    """Note §5.3 test 10 [verified]: optimum 4.3291313, w = (1.45, -0.384057)."""
    means = np.array([(-2, 0), (-1.5, 1), (0, 0), (-0.2, 0.5), (2, 0), (1.0, -0.5),
                      (1.5, 0.2)], dtype=float)
    clusters = cm.ClusterMoments(means, [.3, .4, .3, .2, .3, .5, .2], np.ones(7),
                                 [1, 1, 2, 2, 3, 3, 2])
    prog = ordinal.cbor(clusters, W=1.5, accuracy=0.5)
    sol = cm.solve(prog, "cbor-smo", tol=1e-10)
    assert sol.status is cm.Status.OPTIMAL
    assert sol.iterations <= 20  # 6 measured
    assert_allclose(sol.objective, 4.3291313, rtol=2e-8)
    model = prog.decode(sol)
    assert_allclose(model["w"], [1.45, -0.384057], atol=1e-6)
    assert_allclose(sol.extras["thresholds"], [-1.45, 1.45], atol=1e-6)
    assert own(sol).gap <= 1e-9


@pytest.mark.parametrize("selection", ["max-violating", "second-order"])
def test_both_working_set_rules_and_no_smoothing_reach_the_optimum(selection):
    prog = make_program(*INSTANCES[1])
    ref = cm.solve(prog, "clarabel").objective
    sol = cm.solve(prog, "cbor-smo", tol=SMO_TOL, selection=selection)
    assert_allclose(sol.objective, ref, rtol=1e-6)


def test_smoothing_escapes_the_kink_that_traps_plain_pair_updates():
    """Without smoothing the pair updates drift to rho -> 0 (low-rank K) and stall."""
    prog = make_program(*INSTANCES[0])
    plain = cm.solve(prog, "cbor-smo", tol=SMO_TOL, smoothing=False, max_iter=20000)
    smooth = cm.solve(prog, "cbor-smo", tol=SMO_TOL)
    ref = cm.solve(prog, "clarabel").objective
    assert smooth.ok and abs(smooth.objective - ref) <= 1e-6 * ref
    if plain.ok:  # if it happens to converge, it converged to the optimum
        assert_allclose(plain.objective, ref, rtol=1e-6)
    else:
        assert plain.status is cm.Status.USER_LIMIT


def test_warm_start_at_the_optimum_stops_immediately():
    prog, smo = smo_solution(INSTANCES[3])
    x0 = (smo.values["alpha"], smo.values["alpha_star"])
    again = cm.solve(prog, "cbor-smo", tol=SMO_TOL, x0=x0, smoothing=False)
    assert again.status is cm.Status.OPTIMAL
    assert again.iterations == 0
    assert_allclose(again.objective, smo.objective, rtol=1e-12)


def test_limits_return_user_limit_and_options_are_checked():
    prog = make_program(*INSTANCES[1])
    capped = cm.solve(prog, "cbor-smo", max_iter=3)
    assert capped.status is cm.Status.USER_LIMIT and capped.iterations == 3
    assert capped.extras["stop_reason"] == 1
    assert own(capped).primal <= 1e-12  # iterates stay feasible
    timed = cm.solve(prog, "cbor-smo", time_limit=1e-12)
    assert timed.status is cm.Status.USER_LIMIT and timed.extras["stop_reason"] == 2
    stopped = cm.solve(prog, "cbor-smo", callback=_stop_after(2))
    assert stopped.status is cm.Status.USER_LIMIT and stopped.iterations == 2
    assert stopped.message.startswith("cbor-smo: stopped by the callback")
    for bad in ({"tol": 0.0}, {"max_iter": -1}, {"time_limit": -1.0}, {"selection": "x"},
                {"cache_size": 0}):
        with pytest.raises(OptionError):
            cm.solve(prog, "cbor-smo", **bad)
    k = prog.data["ranks"].size
    with pytest.raises(OptionError, match="not feasible"):
        cm.solve(prog, "cbor-smo", x0=(np.ones(k), np.zeros(k)))
    with pytest.raises(SolverError, match="does not accept"):
        cm.solve(make_program(*INSTANCES[1], form="primal"), "cbor-smo")


def test_rho_zero_instance_is_reported_not_hidden():
    """W so large that ||w|| <= W is inactive: the dual optimum has rho = 0 (note A2)."""
    clusters = random_clusters(7, 40, 2, 3, sep=6.0)
    prog = ordinal.cbor(clusters, W=50.0, accuracy=0.6)
    sol = cm.solve(prog, "cbor-smo", tol=SMO_TOL, max_iter=50000)
    ref = cm.solve(prog, "clarabel")
    if sol.ok:  # then it is right
        assert_allclose(sol.objective, ref.objective, rtol=1e-6, atol=1e-8)
    else:
        assert sol.status is cm.Status.USER_LIMIT
        assert "rho -> 0" in sol.message


def test_closed_form_step_matches_brute_force():
    """Note §5.3 test 12: the 1-D minimiser A4 against a fine grid, incl. edge cases."""
    rng = np.random.default_rng(0)
    cases = []
    for _ in range(300):
        P = rng.normal(size=(2, 2))
        G = P @ P.T  # PSD quadratic in (1, delta)
        cases.append((G[1, 1], G[0, 1], G[0, 0], rng.normal() * 2, rng.uniform(0, 2)))
    cases += [(0.0, 0.0, 1.0, 0.5, 1.0), (0.0, 0.0, 1.0, -0.5, 1.0),  # a = 0: linear
              (4.0, 0.0, 1.0, 2.0, 1.0), (4.0, 0.0, 1.0, -2.0, 1.0),  # e = +-sqrt(a)
              (1.0, 1.0, 1.0, 0.3, 2.0),  # ac = b^2
              (2.0, -0.5, 1.0, 0.7, 0.0)]  # lb = ub
    grid = np.linspace(0, 1, 20001)
    for A, B, C, e, ub in cases:
        delta = cbor_smo._step(A, B, C, e, ub)
        assert 0.0 <= delta <= ub
        xs = grid * ub
        f = np.sqrt(np.maximum(A * xs**2 + 2 * B * xs + C, 0)) - e * xs
        fd = np.sqrt(max(A * delta**2 + 2 * B * delta + C, 0)) - e * delta
        assert fd <= f.min() + 1e-7


def test_registry_kind_and_termination_messages():
    entry = cm.solvers.get("cbor-smo")
    assert entry.specialized and entry.accepts(DUAL)
    assert "cbor-smo" in cm.solvers.available(DUAL)
    assert set(cbor_smo.TERMINATION_MESSAGES) == set(cbor_smo.STATUS_MAP)
    assert {"tol", "max_iter", "time_limit", "verbose", "callback", "x0"} <= set(entry.options)


def test_iterates_stay_feasible():
    prog = make_program(*INSTANCES[3])
    r = prog.data["r"]
    ranks = prog.data["ranks"]
    seen = []

    def record(result):
        seen.append((result.values["alpha"], result.values["alpha_star"]))
        if result.iteration >= 200:
            raise StopIteration

    cm.solve(prog, "cbor-smo", callback=record)
    for alpha, alpha_star in itertools.islice(seen, 0, None, 20):
        assert np.all(alpha >= 0) and np.all(alpha <= 1) and np.all(alpha[ranks == r] == 0)
        assert np.all(alpha_star >= 0) and np.all(alpha_star[ranks == 1] == 0)
        D = [alpha[ranks <= i].sum() - alpha_star[ranks <= i + 1].sum() for i in range(1, r)]
        assert min(D[:-1]) >= -1e-12 and abs(D[-1]) <= 1e-12


def test_verbose_prints_an_iteration_table_and_a_summary(capsys):
    prog = make_program(*INSTANCES[0])
    cm.solve(prog, "cbor-smo", verbose=True)
    out = capsys.readouterr().out
    assert "violation" in out and "kernel cols" in out
    assert "cbor-smo: converged" in out and "primal - dual gap" in out


def _stop_after(n):
    """A callback in the one signature: raise StopIteration after iteration ``n``."""
    def callback(result):
        if result.iteration >= n:
            raise StopIteration
    return callback


def test_old_selection_names_are_deprecated_spellings():
    # one vocabulary with cbc-smo (issue 12): "wss2"/"mvp" still work for one release
    prog = make_program(3, 30, 2, 3, "linear")
    with pytest.warns(FutureWarning, match="second-order"):
        old = cm.solve(prog, "cbor-smo", selection="wss2")
    assert old.objective == pytest.approx(cm.solve(prog, "cbor-smo").objective, rel=1e-12)
