"""Cross-solver tests for the minimax family: rosen, dinkelbach, quadratic-interpolation.

Every solver registered for ``socp.bmpm`` / ``socp.mpm`` (the generic conic backends and
the two specialized fractional-programming solvers) must agree with Clarabel and ECOS on
random instances (dimensions 2-50, well- and ill-conditioned covariances); the reference
values are thus from independent solvers. The line search is checked on functions with
known maximisers and against a dense beta-grid for MEMPM.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from solver_report import own

import conicml as cm
from conicml.formulations import minimax as mm
from conicml.solvers._line_search import line_search

from tolerances import obj_rtol, sol_atol

SPECIALIZED = ["rosen", "dinkelbach"]


def rand_cov(rng: np.random.Generator, n: int, cond: float) -> np.ndarray:
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (Q * np.logspace(0, math.log10(cond), n)) @ Q.T


def instance(seed: int, n: int, cond: float) -> cm.ClassMoments:
    rng = np.random.default_rng(seed)
    return cm.ClassMoments(rng.standard_normal(n), rand_cov(rng, n, cond),
                           rng.standard_normal(n), rand_cov(rng, n, math.sqrt(cond)))


CASES = [(0, 2, 10.0), (1, 5, 1e4), (2, 20, 100.0), (3, 50, 1e3), (4, 50, 1e6)]
CASE_IDS = [f"n{n}-cond{c:g}" for _, n, c in CASES]


def _beta0(mom: cm.ClassMoments, frac: float) -> float:
    return frac * mm.bmpm(mom, 0.0).data["beta0_max"]


@pytest.mark.parametrize("solver", cm.solvers.available("socp.bmpm"))
@pytest.mark.parametrize("seed, n, cond", CASES, ids=CASE_IDS)
def test_bmpm_agrees_with_interior_point_backends(solver, seed, n, cond):
    mom = instance(seed, n, cond)
    prog = mm.bmpm(mom, _beta0(mom, 0.6))
    refs = {name: cm.solve(prog, name) for name in ("clarabel", "ecos")}
    sol = cm.solve(prog, solver)
    assert sol.ok, sol.message
    model = prog.decode(sol)
    for ref in refs.values():
        assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(solver))
        ref_model = prog.decode(ref)
        assert model["alpha"] == pytest.approx(ref_model["alpha"],
                                               abs=10 * obj_rtol(solver))
        scale = max(1.0, float(np.abs(ref_model["w"]).max()))
        # w is determined only to ~sqrt(objective accuracy) (flat optimum)
        np.testing.assert_allclose(model["w"], ref_model["w"], atol=sol_atol(solver) * scale
                                   * (10 if cond >= 1e6 else 1))


@pytest.mark.parametrize("solver", cm.solvers.available("socp.mpm"))
@pytest.mark.parametrize("seed, n, cond", CASES, ids=CASE_IDS)
def test_mpm_agrees_with_interior_point_backends(solver, seed, n, cond):
    prog = mm.mpm(instance(seed, n, cond))
    ref = cm.solve(prog, "clarabel")
    sol = cm.solve(prog, solver)
    assert sol.ok, sol.message
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(solver))
    assert prog.decode(sol)["kappa"] == pytest.approx(prog.decode(ref)["kappa"],
                                                      rel=obj_rtol(solver))


@pytest.mark.parametrize("solver", SPECIALIZED)
@pytest.mark.parametrize("seed, n, cond", CASES, ids=CASE_IDS)
def test_fractional_certificate(solver, seed, n, cond):
    mom = instance(seed, n, cond)
    prog = mm.bmpm(mom, _beta0(mom, 0.3))
    sol = cm.solve(prog, solver)
    assert sol.status is cm.Status.OPTIMAL
    ref = prog.decode(cm.solve(prog, "clarabel"))["kappa_alpha"]
    kappa = sol.extras["kappa"]
    # |P(kappa) - 1| small, and the certified gap really bounds kappa* - kappa
    assert own(sol).dual < 1e-7
    assert 0 <= own(sol).gap < 1e-6
    assert ref - kappa <= own(sol).gap + 1e-8 * ref
    assert own(sol).primal < 1e-12  # w'd = 1
    assert sol.extras["inner_solves"] >= 1
    assert sol.iterations >= 1


def test_compare_puts_all_bmpm_solvers_side_by_side():
    mom = instance(11, 10, 100.0)
    prog = mm.bmpm(mom, _beta0(mom, 0.5))
    names = ["clarabel", "ecos", "scs", "rosen", "dinkelbach"]
    comp = cm.compare(prog, names, rtol={n: obj_rtol(n) for n in names})
    assert comp.agree, str(comp)
    assert {r.solver for r in comp.rows} == set(names)


def test_dinkelbach_outer_iterations_are_few():
    # the parametric method converges superlinearly (Sec. 3.2.6): a handful of steps
    mom = instance(5, 30, 1e4)
    sol = cm.solve(mm.bmpm(mom, _beta0(mom, 0.5)), "dinkelbach")
    assert sol.iterations <= 8
    assert sol.extras["inner_solves"] >= sol.iterations


@pytest.mark.parametrize("solver", SPECIALIZED)
def test_iteration_limit_is_user_limit_not_exception(solver):
    mom = instance(6, 20, 1e5)
    prog = mm.bmpm(mom, _beta0(mom, 0.5))
    sol = cm.solve(prog, solver, max_iter=1, tol=1e-15)
    assert sol.status in (cm.Status.USER_LIMIT, cm.Status.OPTIMAL)
    if solver == "rosen":
        assert sol.status is cm.Status.USER_LIMIT
        assert "max_iter" in sol.message


@pytest.mark.parametrize("solver", SPECIALIZED)
def test_warm_start_from_optimum(solver):
    mom = instance(7, 10, 1e3)
    prog = mm.bmpm(mom, _beta0(mom, 0.5))
    w = prog.decode(cm.solve(prog, "dinkelbach"))["w"]
    sol = cm.solve(prog, solver, x0=w)
    assert sol.iterations <= 5
    with pytest.raises(cm.OptionError, match="x0"):
        cm.solve(prog, solver, x0=-w)


@pytest.mark.parametrize("solver", SPECIALIZED)
def test_unknown_and_bad_options(solver):
    prog = mm.mpm(instance(0, 2, 10.0))
    with pytest.raises(cm.OptionError):
        cm.solve(prog, solver, eps_abs=1e-3)
    with pytest.raises(cm.OptionError, match="tol"):
        cm.solve(prog, solver, tol=-1.0)


def test_robust_bmpm_solvers_agree():
    mom = instance(8, 6, 100.0)
    prog = mm.bmpm(mom, 0.2, nu_x=0.1, nu_y=0.3, ridge=(0.05, 0.1))
    comp = cm.compare(prog, ["clarabel", "ecos", "rosen", "dinkelbach"], rtol=1e-6)
    # rosen stops here at its numerical limit ("no ascent along the projected gradient")
    # and, by its own rule (issue 11), says OPTIMAL_INACCURATE; its objective still agrees
    # to 3e-9, and the certified solvers agree
    certified = [row for row in comp.rows if row.solver != "rosen"]
    assert all(row.agree for row in certified), str(comp)
    assert comp.row("rosen").obj_rel_diff <= 1e-6, str(comp)


# ---------------------------------------------------------------------------- line search
def test_line_search_interior_maximum():
    x, fx, n, hist = line_search(lambda x: -(x - 0.3) ** 2 + math.sin(3 * x) * 0.01, 0, 1,
                                 tol=1e-10)
    ref = max(np.linspace(0.25, 0.35, 200001), key=lambda x: -(x - 0.3) ** 2
              + math.sin(3 * x) * 0.01)
    assert x == pytest.approx(ref, abs=1e-6)
    assert n == len(hist) <= 40
    assert max(h[1] for h in hist) == fx


def test_line_search_quadratic_is_exact_in_one_step():
    # the parabola through three points of a quadratic is the quadratic itself
    x, _, n, _ = line_search(lambda x: -(x - 0.7) ** 2, 0, 1, tol=1e-6)
    assert x == pytest.approx(0.7, abs=1e-9)
    assert n <= 8


@pytest.mark.parametrize("peak, lo, hi", [(0.0, 0.0, 2.0), (2.0, 0.0, 2.0)])
def test_line_search_maximum_at_domain_end(peak, lo, hi):
    x, fx, n, _ = line_search(lambda x: -abs(x - peak), lo, hi, tol=1e-9)
    assert x == peak and fx == 0.0
    assert n <= 40


def test_line_search_minimize_and_flat():
    x, fx, _, _ = line_search(lambda x: (x - 2.0) ** 2 + 1, 0, 5, tol=1e-9, maximize=False)
    assert x == pytest.approx(2.0, abs=1e-6) and fx == pytest.approx(1.0)
    x, fx, n, _ = line_search(lambda x: 1.0, 0, 1, tol=1e-6)  # flat: stalls gracefully
    assert fx == 1.0 and n <= 100


def test_line_search_max_iter_and_bad_input():
    res = line_search(lambda x: -(x - 0.123) ** 2 + 0.1 * abs(x - 0.5), 0, 1, tol=1e-14,
                      max_iter=5)
    assert res.n_evals == 5
    with pytest.raises(cm.OptionError):
        line_search(lambda x: x, 1, 0)
    with pytest.raises(cm.OptionError):
        line_search(lambda x: x, 0, 1, max_iter=2)


# ---------------------------------------------------------------------------- MEMPM
@pytest.mark.parametrize("inner", ["clarabel", "ecos", "dinkelbach", "rosen"])
def test_mempm_inner_solvers_agree(inner):
    X, y = cm.datasets.twonorm(n=80, dim=3, random_state=4)
    prog = mm.mempm(X, y, theta=0.5)
    sol = cm.solve(prog, "quadratic-interpolation", inner=inner)
    ref = cm.solve(prog, "quadratic-interpolation", inner="dinkelbach")
    assert sol.status is cm.Status.OPTIMAL
    assert sol.objective == pytest.approx(ref.objective, abs=1e-7)
    # one BMPM solve per evaluation of F, except at beta0m where F is analytic
    assert sol.extras["inner_solves"] == sol.iterations - 1
    # gap: the certified global bound max F - F(beta*) (issue 11); the local bracket too
    assert sol.extras["certified"] and sol.residuals.gap <= 1e-6
    assert sol.extras["bracket_width"] <= 1e-8


def test_mempm_matches_dense_beta_grid():
    # an independent check of the line search: F on a dense grid of BMPM solves
    X, y = cm.datasets.twonorm(n=60, dim=3, random_state=9)
    X[y < 0] *= 1.7  # make the classes differ in spread so MEMPM != MPM
    prog = mm.mempm(X, y)
    sol = cm.solve(prog, "quadratic-interpolation", inner="dinkelbach")
    grid = np.linspace(0, prog.data["beta_end"], 201)[:-1]
    vals = []
    for beta in grid:
        p = mm.inner_bmpm(prog.data, beta)
        vals.append(mm.mempm_value(prog.data, beta, p.decode(cm.solve(p, "dinkelbach"))["alpha"]))
    assert sol.objective >= max(vals) - 1e-9
    assert sol.objective - max(vals) < 1e-3  # grid step ~5e-3 in beta, F is smooth
    assert sol.iterations <= 40


def test_mempm_solver_limits():
    prog = mm.mempm(mm.bmpm(instance(0, 2, 10.0), 0.0).data["moments"], theta=0.5)
    sol = cm.solve(prog, "quadratic-interpolation", max_iter=4)
    assert sol.status is cm.Status.USER_LIMIT and sol.iterations == 4
    assert "max_iter" in sol.message
    stop = cm.solve(prog, "quadratic-interpolation", callback=_stop_after(1))
    assert stop.status is cm.Status.USER_LIMIT and stop.iterations == 1
    with pytest.raises(cm.SolverError):
        cm.solve(prog, "clarabel")  # a sequential program has no single conic form
    with pytest.raises(cm.SolverError):
        cm.solve(prog, "quadratic-interpolation", inner="smo")


@pytest.mark.parametrize("solver", SPECIALIZED)
def test_zero_variance_direction_is_an_attained_optimum_not_a_hang(solver):
    # Sigma_x is singular along d: kappa(alpha) = +inf for small beta0 (alpha -> 1); the
    # program's objective 1/kappa* = 0 is attained, so the status is OPTIMAL (issue 11:
    # the specialized solvers said UNBOUNDED where the generic backends found the optimum)
    mom = cm.ClassMoments(np.array([1.0, 0.0]), np.diag([0.0, 1.0]),
                          np.zeros(2), np.eye(2))
    prog = mm.bmpm(mom, 0.1)
    sol = cm.solve(prog, solver)
    assert sol.status is cm.Status.OPTIMAL
    assert sol.objective == 0.0
    assert "ridge" in sol.message
    model = prog.decode(sol)
    assert model["alpha"] == 1.0 and model["kappa"] == math.inf
    # the SOCP reports 1/kappa ~ 0 too
    assert cm.solve(prog, "clarabel").objective < 1e-6


def test_line_search_terminates_on_plateaus():
    # piecewise-constant f: parabola steps land on cached points; must not loop forever
    x, fx, n, _ = line_search(lambda x: -abs(round(x, 2) - 0.37), 0, 1, tol=1e-13,
                              max_iter=60)
    assert fx == pytest.approx(0.0) and n <= 60


def test_mempm_inner_failures_are_reported():
    X, y = cm.datasets.twonorm(n=60, dim=3, random_state=5)
    prog = mm.mempm(X, y, theta=0.5)
    # rosen stopped after one step returns USER_LIMIT: every inner solve "fails"
    sol = cm.solve(prog, "quadratic-interpolation", inner="rosen",
                   inner_options={"max_iter": 1, "tol": 1e-15}, max_failures=2)
    assert sol.status is cm.Status.SOLVER_ERROR
    assert "too many inner BMPM solves failed" in sol.message
    assert "rosen" in sol.message and sol.extras["inner_failures"] == 3
    with pytest.raises(cm.OptionError, match="max_failures"):
        cm.solve(prog, "quadratic-interpolation", max_failures=-1)


def _stop_after(n):
    """A callback in the one signature: raise StopIteration after iteration ``n``."""
    def callback(result):
        if result.iteration >= n:
            raise StopIteration
    return callback
