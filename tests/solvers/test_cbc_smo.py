"""The specialized ``cbc-smo`` solver (CBC-Iter, seed 003 App. B; note A3, A4).

References: the 1-D closed form (B.5)/A4 against brute-force minimisation; the
note's test 9 (W = 1, kappa = 1: 2.1523340597 in 4 iterations with the corrected
pair sign); and, on random instances, the interior-point backends ecos and
clarabel on the same program (objective) and on the primal program (decoded
w, b).
"""

import math

import numpy as np
import pytest
from scipy import optimize
from solver_report import own

import conicml as cm
from conicml.exceptions import OptionError
from conicml.formulations import cbc
from conicml.moments import ClusterMoments
from conicml.solvers.cbc_smo import line_search_311, line_search_b2

from tolerances import obj_rtol, sol_atol

KINDS = ["socp.chance.cbc.dual", "socp.chance.cbc_w.dual"]
MU7 = np.array([[2, 0], [0, 2], [1.5, 1.5], [-2, 0], [0, -2], [0.5, 0.2]], dtype=float)
SIG7 = np.array([0.5, 0.5, 0.3, 0.5, 0.5, 0.4])
Y7 = np.array([1, 1, 1, -1, -1, -1], dtype=float)


def _phi_b2(d, a, b, c, e):
    return math.sqrt(max(a * d * d + 2 * b * d + c, 0.0)) - e * d


def _brute(fun, lb, ub):
    # dense grid, then a bounded refinement around the best grid point
    grid = np.linspace(lb, ub, 2001)
    vals = np.array([fun(d) for d in grid])
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(fun, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12})
    return min(vals[i], res.fun)


# ---- test 12: the 1-D closed form A4 versus brute force ------------------------------------

def test_line_search_b2_random():
    rng = np.random.default_rng(12)
    for _ in range(150):
        u, v = rng.normal(size=2), rng.normal(size=2)  # q(d) = ||u + d v||^2 is PSD
        a, b, c = v @ v, u @ v, u @ u
        e = rng.normal() * 2.0 * math.sqrt(a)
        lb, ub = sorted(rng.normal(size=2) * 3)
        d = line_search_b2(a, b, c, e, lb, ub)
        assert lb <= d <= ub
        best = _brute(lambda x: _phi_b2(x, a, b, c, e), lb, ub)
        assert _phi_b2(d, a, b, c, e) <= best + 1e-9


@pytest.mark.parametrize("a, b, c, e, lb, ub, expected", [
    (0.0, 0.0, 4.0, 1.0, -1.0, 2.0, 2.0),  # a = 0: linear, e > 0 -> ub
    (0.0, 0.0, 4.0, -1.0, -1.0, 2.0, -1.0),  # a = 0, e < 0 -> lb
    (0.0, 0.0, 4.0, 0.0, -1.0, 2.0, -1.0),  # a = 0, e = 0: flat, no move (lb)
    (4.0, 1.0, 1.0, 2.0, -3.0, 5.0, 5.0),  # e = sqrt(a): slope never positive -> ub
    (4.0, 1.0, 1.0, -2.0, -3.0, 5.0, -3.0),  # e = -sqrt(a) -> lb
    (1.0, 2.0, 5.0, 0.5, 0.7, 0.7, 0.7),  # lb = ub
    (1.0, -2.0, 4.0, 0.0, -5.0, 5.0, 2.0),  # ac = b^2: minimum of |d - 2| at -b/a = 2
    (2.0, 0.0, 2.0, 1.0, -5.0, 5.0, 1.0),  # interior: (e sqrt((ac-b^2)/(a-e^2)) - b)/a = 1
])
def test_line_search_b2_edge_cases(a, b, c, e, lb, ub, expected):
    # expected values from the case table of note A4 (last row: sqrt(4/1) / 2 = 1)
    assert line_search_b2(a, b, c, e, lb, ub) == pytest.approx(expected, abs=1e-12)


def test_line_search_311_random():
    rng = np.random.default_rng(311)
    for _ in range(100):
        u, v = rng.normal(size=3), rng.normal(size=3)
        a, bq, c = v @ v, u @ v, u @ u
        rho0, rho1 = abs(rng.normal()), rng.normal() * 0.5
        e = float(rng.choice([-2.0, 0.0, 2.0]))
        ub = abs(rng.normal()) * 3

        def phi(d):
            q = max(a * d * d + 2 * bq * d + c, 0.0)
            return 0.5 * max(0.0, math.sqrt(q) - rho0 - rho1 * d) ** 2 - e * d

        d = line_search_311(a, bq, c, rho0, rho1, e, ub)
        assert 0.0 <= d <= ub
        assert phi(d) <= _brute(phi, 0.0, ub) + 1e-9


def test_line_search_311_unbounded():
    # phi = -2 d for every d >= 0 (h <= 0 throughout): unbounded on [0, inf)
    assert line_search_311(1.0, 0.0, 0.0, 5.0, 1.0, 2.0, math.inf) == math.inf
    # a finite minimiser with ub = inf: phi = 1/2 d^2 - 2 d (rho = 0, q = d^2) -> d = 2
    assert line_search_311(1.0, 0.0, 0.0, 0.0, 0.0, 2.0, math.inf) == pytest.approx(2.0)


# ---- test 9: the note's example, corrected sign --------------------------------------------

def test_note_example_four_iterations():
    # note §5.3 test 9 / A3: W = 1, kappa = 1, start alpha = 0.5 on clusters 1 and 4:
    # dual value -2.1523340597 (= primal sum xi), w = (0.7071068, 0.7071068),
    # b_thesis = 0.0857864, in 4 iterations (with the thesis's sign it stalls at 0.5)
    clusters = ClusterMoments(MU7, SIG7, np.full(6, 10), Y7)
    prog = cbc.cbc_w(clusters, 1.0, 0.5, form="dual")
    x0 = np.array([0.5, 0, 0, 0.5, 0, 0])
    sol = cm.solve(prog, "cbc-smo", x0=x0, selection="max-violating")  # the thesis's rule
    assert sol.status is cm.Status.OPTIMAL
    assert sol.iterations == 4
    assert sol.objective == pytest.approx(2.1523340597, rel=1e-9)
    model = prog.decode(sol)
    np.testing.assert_allclose(model["w"], [0.7071068, 0.7071068], atol=1e-7)
    assert model["b"] == pytest.approx(-0.0857864, abs=1e-7)
    assert abs(float(Y7 @ sol.values["alpha"])) < 1e-15  # y^T alpha = 0 kept exactly
    assert own(sol).dual <= 1e-6 and abs(own(sol).gap) < 1e-10


# ---- random instances against ecos and clarabel --------------------------------------------

def _random_clusters(k, n, seed, shift=1.0):
    # overlapping classes: the class means are 2 * shift apart whatever n is
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(k, n))
    y = np.where(rng.random(k) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    means += shift / np.sqrt(n) * y[:, None]
    return ClusterMoments(means, 0.5 * rng.random(k), np.full(k, 5), y)


def _programs(clusters, form, kernel="linear"):
    return {
        "socp.chance.cbc": cbc.cbc(clusters, 1.0, 0.7, form=form, kernel=kernel, gamma=0.2),
        "socp.chance.cbc_w": cbc.cbc_w(clusters, 0.5, 0.7, form=form, kernel=kernel, gamma=0.2),
    }


@pytest.mark.parametrize("family", ["socp.chance.cbc", "socp.chance.cbc_w"])
@pytest.mark.parametrize("k, n, seed, kernel", [
    (30, 3, 0, "linear"), (200, 10, 1, "linear"), (500, 50, 2, "linear"),
    (500, 2, 3, "linear"), (120, 5, 4, "rbf"),
])
def test_random_against_generic(family, k, n, seed, kernel):
    clusters = _random_clusters(k, n, seed)
    dual = _programs(clusters, "dual", kernel)[family]
    primal = _programs(clusters, "primal", kernel)[family]
    smo = cm.solve(dual, "cbc-smo")
    assert smo.status is cm.Status.OPTIMAL, smo.message
    # certificate: KKT violation below tol, y^T alpha = 0, primal-dual gap of the decoded model
    assert own(smo).dual <= 1e-6
    assert own(smo).primal <= 1e-12
    assert abs(own(smo).gap) <= 1e-5 * max(1.0, abs(smo.objective))
    assert smo.iterations > 0 and own(smo).dual == max(smo.extras["kkt_violation"], 0)
    model = dual.decode(smo)
    for solver in ("ecos", "clarabel"):
        ref = cm.solve(dual, solver)
        assert smo.objective == pytest.approx(ref.objective, rel=obj_rtol("cbc-smo"))
        # the decoded model attains the optimal primal value (3.7)/(B.1)
        assert model["primal_objective"] == pytest.approx(ref.objective, rel=1e-6)
        # reference (w, b): the primal point for the linear kernel; for rbf the kernel
        # primal is written over a truncated factor of K (psd_factor), so the dual decode
        # of the same backend is the sharper reference there
        ref_prog = primal if kernel == "linear" else dual
        ref_model = ref_prog.decode(cm.solve(ref_prog, solver))
        scale = max(1.0, float(np.max(np.abs(ref_model["dual_coef"]))))
        np.testing.assert_allclose(model["dual_coef"], ref_model["dual_coef"],
                                   atol=sol_atol(solver) * scale * 10)
        if kernel == "linear":
            np.testing.assert_allclose(model["w"], ref_model["w"], atol=sol_atol(solver))
        upper = 1.0  # the box is [0, C] = [0, 1] and [0, 1] in the W-form
        alpha = model["alpha"]
        if np.any((alpha > 1e-6) & (alpha < upper - 1e-6)):
            # b is unique only with a free alpha (else any b in the KKT interval is optimal,
            # which the primal-objective check above already certifies)
            assert model["b"] == pytest.approx(ref_model["b"], abs=sol_atol(solver))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("solver", cm.solvers.available("socp.chance.cbc.dual"))
def test_registry_solvers_agree(kind, solver):
    # every solver registered for the kind (generic or specialized) on one instance
    clusters = _random_clusters(40, 4, 7)
    prog = _programs(clusters, "dual")[kind.rsplit(".", 1)[0]]
    if solver not in cm.solvers.available(kind):
        pytest.skip(f"{solver} does not accept {kind}")
    ref = cm.solve(prog, "clarabel").objective
    assert cm.solve(prog, solver).objective == pytest.approx(ref, rel=obj_rtol(solver))


def test_compare_puts_cbc_smo_beside_backends():
    prog = cbc.cbc(_random_clusters(60, 3, 8), 1.0, 0.7, form="dual")
    assert "cbc-smo" in cm.solvers.available(prog.kind)
    report = cm.compare(prog, ["cbc-smo", "ecos", "clarabel"])
    assert report.agree


def test_hard_margin_and_unbounded():
    # note §5.3 test 8 through the specialized solver: 1/2 ||w||^2 = a^2 with
    # a = 1 / (2 - 0.5 sqrt 2)
    clusters = ClusterMoments(np.array([[2, 0], [0, 2], [-2, 0], [0, -2]], dtype=float),
                              np.full(4, 0.5), np.ones(4), np.array([1, 1, -1, -1.0]))
    sol = cm.solve(cbc.cbc(clusters, None, 0.5, form="dual"), "cbc-smo", tol=1e-10)
    a = 1.0 / (2.0 - 0.5 * np.sqrt(2.0))
    assert sol.objective == pytest.approx(a * a, rel=1e-9)
    overlap = ClusterMoments(np.array([[0.0, 0.0], [1.0, 0.0]]), np.ones(2), np.ones(2),
                             np.array([1.0, -1.0]))
    sol = cm.solve(cbc.cbc(overlap, None, 0.5, form="dual"), "cbc-smo")
    assert sol.status is cm.Status.UNBOUNDED


def test_separable_w_form_is_flagged():
    # W-form with spheres separable at ||w|| <= W: optimum 0 at v = 0, where alpha does not
    # determine the hyperplane; the solver says so instead of returning a wrong model
    clusters = ClusterMoments(np.array([[3.0, 0], [-3.0, 0]]), np.zeros(2), np.ones(2),
                              np.array([1.0, -1.0]))
    prog = cbc.cbc_w(clusters, 5.0, 0.5, form="dual")
    sol = cm.solve(prog, "cbc-smo")
    assert sol.objective == pytest.approx(cm.solve(prog, "ecos").objective, abs=1e-8)
    assert sol.objective == pytest.approx(0.0, abs=1e-8)


def test_warm_start_limits_and_options():
    prog = cbc.cbc(_random_clusters(80, 4, 9), 1.0, 0.7, form="dual")
    sol = cm.solve(prog, "cbc-smo", tol=1e-9)
    again = cm.solve(prog, "cbc-smo", tol=1e-6, x0=sol.values["alpha"])
    assert again.iterations == 0 and again.objective == pytest.approx(sol.objective, rel=1e-12)
    limited = cm.solve(prog, "cbc-smo", max_iter=3)
    assert limited.status is cm.Status.USER_LIMIT and limited.iterations == 3
    assert cm.solve(prog, "cbc-smo", time_limit=1e-12).status is cm.Status.USER_LIMIT
    stopped = cm.solve(prog, "cbc-smo", callback=_stop_after(5))
    assert stopped.status is cm.Status.USER_LIMIT and stopped.iterations == 5
    # Gram columns on demand (cache far too small for the full matrix): same answer
    tiny = cm.solve(prog, "cbc-smo", tol=1e-9, cache_size=0.001)
    assert tiny.objective == pytest.approx(sol.objective, rel=1e-12)
    with pytest.raises(OptionError):
        cm.solve(prog, "cbc-smo", tol=0.0)
    with pytest.raises(OptionError):
        cm.solve(prog, "cbc-smo", x0=np.ones(80))
    with pytest.raises(OptionError):
        cm.solve(prog, "cbc-smo", eps_abs=1e-3)
    with pytest.raises(OptionError):
        cm.solve(prog, "cbc-smo", selection="random")
    # both working-set rules reach the same optimum
    wss1 = cm.solve(prog, "cbc-smo", tol=1e-9, selection="max-violating")
    assert wss1.objective == pytest.approx(sol.objective, rel=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["socp.chance.cbc", "socp.chance.cbc_w"])
def test_large_random_against_generic(family):
    clusters = _random_clusters(2000, 10, 10)
    prog = _programs(clusters, "dual")[family]
    smo = cm.solve(prog, "cbc-smo")
    for solver in ("ecos", "clarabel"):
        assert smo.objective == pytest.approx(cm.solve(prog, solver).objective, rel=1e-6)


def _stop_after(n):
    """A callback in the one signature: raise StopIteration after iteration ``n``."""
    def callback(result):
        if result.iteration >= n:
            raise StopIteration
    return callback
