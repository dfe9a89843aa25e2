"""M4 solvers: ``bisection``, ``dinkelbach-gfp``, ``m4-line-search`` against generic backends.

The M4 kinds have no single conic form, so the generic backends (clarabel, ecos; scs
looser) enter in three ways: (1) as the reference on the special cases that *are* a
single program (the QP (4.9) with equal covariances, the hard-margin SVM); (2) as the
inner backend (``inner=``), whose variants must agree with each other; (3) as an
independent check of the certificate: at the returned rho* the fixed-rho check solved by
the backend directly is >= 0 just below rho* and < 0 just above.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from solver_report import own

import conicml as cm
from conicml.exceptions import OptionError
from conicml.formulations import m4

from tolerances import obj_rtol, sol_atol

SEPARABLE = m4.KIND_SEPARABLE
SOFT = m4.KIND_SOFT

T2_X = np.array([(1, 0), (3, 0.5), (5, -0.5), (2, 1), (4, -1), (6, 0),
                 (-1, 0), (-1.3, 0.4), (-1.2, -0.4), (-1.6, 0.1), (-1.4, -0.2), (-1.1, 0.3)],
                dtype=float)
T2_Y = np.r_[np.ones(6), -np.ones(6)]


def separable_gaussians(seed: int, n: int = 40, dim: int = 3):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(dim, dim))
    B = rng.normal(size=(dim, dim)) * 0.5
    X = np.vstack([rng.normal(size=(n, dim)) @ A + 6.0, rng.normal(size=(n + 5, dim)) @ B - 2.0])
    return X, np.r_[np.ones(n), -np.ones(n + 5)]


INSTANCES = {
    "t2": (T2_X, T2_Y),
    "gauss0": separable_gaussians(0),
    "gauss1": separable_gaussians(1, n=60, dim=5),
}


def check_value(form, rho, backend):
    """F(rho) of the fixed-rho check, solved directly by a generic backend (rebuilt)."""
    problem = form(rho).problem
    problem.solve(solver=backend.upper())
    return problem.value


def test_registry():
    assert {"bisection", "dinkelbach-gfp"} <= set(cm.solvers.available(SEPARABLE))
    assert {"quadratic-interpolation", "brent"} <= set(cm.solvers.available(SOFT))
    # the generic backends cannot take a quasi-convex / sequential program
    assert "clarabel" not in cm.solvers.available(SEPARABLE)
    assert "clarabel" not in cm.solvers.available(SOFT)


# ---- separable: every registered solver -----------------------------------------------

@pytest.mark.parametrize("solver", cm.solvers.available(SEPARABLE))
@pytest.mark.parametrize("name", list(INSTANCES))
def test_separable_certificate_checked_by_generic_backends(solver, name):
    X, y = INSTANCES[name]
    prog = m4.m4(X, y)
    sol = cm.solve(prog, solver)
    assert sol.status is cm.Status.OPTIMAL, sol.message
    model = prog.decode(sol)
    rho = sol.objective
    # the objective is the certified ratio of the returned point
    assert rho == pytest.approx(m4.certified_rho(prog.data, model["w"], model["b"]), rel=1e-9)
    assert rho == pytest.approx(model["rho"], rel=1e-12)
    # certificate: iterations, inner solves, residuals, gap
    assert sol.iterations >= 1
    assert sol.extras["inner_solves"] >= sol.iterations
    assert 0 <= own(sol).gap <= 1e-6 * max(1, rho)
    assert own(sol).primal <= 1e-7
    form = lambda r: m4.inner_problem(prog.data, rho=r)  # noqa: E731
    for backend in ("clarabel", "ecos"):
        assert check_value(form, rho * (1 - 1e-4), backend) > 0
        assert check_value(form, rho * (1 + 1e-4), backend) < 0


@pytest.mark.parametrize("solver", cm.solvers.available(SEPARABLE))
@pytest.mark.parametrize("seed", [0, 1])
def test_separable_equal_covariances_against_qp(solver, seed):
    # the QP (4.9) is a single program: clarabel and ecos are the references
    X, y = separable_gaussians(seed)
    S = np.cov(X[y > 0], rowvar=False, bias=True)
    prog = m4.m4(X, y, covariances=(S, S))
    model = prog.decode(cm.solve(prog, solver))
    qp = m4.m4_shared_covariance(X, y, S)
    for backend in ("clarabel", "ecos", "scs"):
        ref = qp.decode(cm.solve(qp, backend))
        rtol = max(obj_rtol(solver), obj_rtol(backend))
        atol = max(sol_atol(solver), sol_atol(backend))
        assert model["rho"] == pytest.approx(ref["rho"], rel=rtol)
        scale = max(1.0, float(np.abs(ref["w"]).max()))
        np.testing.assert_allclose(model["w"], ref["w"], atol=atol * scale)


@pytest.mark.parametrize("name", list(INSTANCES))
def test_default_separable_route_against_generic_backends(name):
    # the default of kind quasiconvex.m4 is dinkelbach-gfp: its certified rho against
    # bisection over two generic inner backends, and the fixed-rho check solved by
    # clarabel and ecos directly on either side of it
    X, y = INSTANCES[name]
    prog = m4.m4(X, y)
    assert prog.default_solver == "dinkelbach-gfp"
    sol = cm.solve(prog)
    assert sol.solver == "dinkelbach-gfp" and sol.status is cm.Status.OPTIMAL, sol.message
    assert "delegated" not in sol.extras
    for inner in ("clarabel", "ecos"):
        ref = cm.solve(prog, "bisection", inner=inner)
        # bisection's relative bracket 1e-7; ecos's inner checks are looser (1e-6)
        assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    form = lambda r: m4.inner_problem(prog.data, rho=r)  # noqa: E731
    for backend in ("clarabel", "ecos"):
        assert check_value(form, sol.objective * (1 - 1e-4), backend) > 0
        assert check_value(form, sol.objective * (1 + 1e-4), backend) < 0


def test_dinkelbach_gfp_hands_an_uncertified_run_to_bisection(monkeypatch):
    # an inner failure in the middle of the iteration (the third check here, injected):
    # the default hands the program to bisection, which certifies it; fallback=None
    # returns the failure as such
    from conicml.solvers import _m4_inner

    prog = m4.m4(*INSTANCES["gauss0"])
    ref = cm.solve(prog, "bisection")
    real = _m4_inner.InnerSolver.check
    calls = {"n": 0}

    def failing_once(self, rho, *scales):
        calls["n"] += 1
        if calls["n"] == 3:
            raise _m4_inner._InnerFailure(cm.Solution(status=cm.Status.SOLVER_ERROR,
                                                      solver="clarabel",
                                                      message="injected failure"))
        return real(self, rho, *scales)

    monkeypatch.setattr(_m4_inner.InnerSolver, "check", failing_once)
    sol = cm.solve(prog, "dinkelbach-gfp")
    assert sol.status is cm.Status.OPTIMAL, sol.message
    assert sol.extras["delegated"] == "bisection" and "handed to bisection" in sol.message
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    calls["n"] = 0
    raw = cm.solve(prog, "dinkelbach-gfp", fallback=None)
    assert raw.status is cm.Status.SOLVER_ERROR and "injected failure" in raw.message
    with pytest.raises(cm.SolverError, match="solvers for this kind"):
        cm.solve(prog, "dinkelbach-gfp", fallback="smo")


@pytest.mark.parametrize("name", list(INSTANCES))
def test_compare_bisection_variants_and_dinkelbach(name):
    X, y = INSTANCES[name]
    prog = m4.m4(X, y)
    variants = [("bisection/clarabel", "bisection", {"inner": "clarabel"}),
                ("bisection/ecos", "bisection", {"inner": "ecos"}),
                ("bisection/scs", "bisection", {"inner": "scs"}),
                ("bisection/rebuild", "bisection", {"rebuild": True}),
                ("dinkelbach-gfp", "dinkelbach-gfp", {}),
                ("dinkelbach-gfp/plain", "dinkelbach-gfp", {"scaled": False})]
    # the SCS inner solves are accurate to ~1e-5: its certified ratio is exact for its
    # point, so only the point's optimality is looser
    rtol = {"bisection/scs": 1e-4, "bisection/ecos": 1e-6, "dinkelbach-gfp/plain": 1e-6}
    comp = cm.compare(prog, variants, reference="bisection/clarabel", rtol=rtol,
                      vtol={"bisection/scs": 5e-2})
    assert comp.agree, str(comp)
    assert comp.row("dinkelbach-gfp").iterations < comp.row("bisection/clarabel").iterations


def test_bisection_reuses_the_compiled_problem():
    prog = m4.m4(T2_X, T2_Y)
    form = prog.form
    assert prog.problem.is_dpp()
    sol = cm.solve(prog, "bisection")
    assert prog.form is form  # re-solved, not rebuilt
    assert sol.extras["rebuild"] is False
    # ceil(log2(kappa / tol)) steps at most (kappa = 2.597, tol = 1e-7): 25
    assert sol.iterations <= math.ceil(math.log2(2.5969469 / 1e-7))
    reb = cm.solve(prog, "bisection", rebuild=True)
    assert reb.objective == pytest.approx(sol.objective, rel=1e-9)


def test_bisection_warm_start_and_limits():
    prog = m4.m4(T2_X, T2_Y)
    cold = cm.solve(prog, "bisection")
    warm = cm.solve(prog, "bisection", x0=1.0870085)
    assert warm.iterations < cold.iterations
    assert warm.objective == pytest.approx(cold.objective, rel=1e-7)
    capped = cm.solve(prog, "bisection", max_iter=3)
    assert capped.status is cm.Status.USER_LIMIT
    assert own(capped).gap > 1e-3
    assert capped.objective <= cold.objective + 1e-9  # still a certified lower bound
    stopped = cm.solve(prog, "bisection", callback=_stop_after(2))
    assert stopped.status is cm.Status.USER_LIMIT and stopped.iterations == 2


def test_dinkelbach_upper_bound_certificate():
    prog = m4.m4(T2_X, T2_Y)
    sol = cm.solve(prog, "dinkelbach-gfp")
    # [N] rho* = 1.0870085 lies in [objective, rho_upper]
    assert sol.objective <= 1.0870085 + 1e-7 <= sol.extras["rho_upper"] + 2e-7
    assert own(sol).dual >= -1e-9  # F(rho_k) >= 0 up to the inner accuracy
    from_above = cm.solve(prog, "dinkelbach-gfp", x0=2.0)
    assert from_above.objective == pytest.approx(sol.objective, rel=1e-7)


def test_options_are_checked():
    prog = m4.m4(T2_X, T2_Y)
    with pytest.raises(OptionError):
        cm.solve(prog, "bisection", inner="osqp")
    with pytest.raises(OptionError):
        cm.solve(prog, "bisection", tol=0)
    with pytest.raises(OptionError):
        cm.solve(prog, "dinkelbach-gfp", warm=True)


def test_unbounded_without_reg():
    # [C] more features than points: a direction with sigma_x = sigma_y = 0 separates the
    # means, so rho* = inf (the kernel pitfall of note §5.3 in its linear form)
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(4, 10)) + 3, rng.normal(size=(4, 10)) - 3])
    y = np.r_[np.ones(4), -np.ones(4)]
    for solver in ("bisection", "dinkelbach-gfp"):
        assert cm.solve(m4.m4(X, y), solver).status is cm.Status.UNBOUNDED
    assert cm.solve(m4.m4(X, y, ridge=1e-2), "bisection").status is cm.Status.OPTIMAL


# ---- soft margin ------------------------------------------------------------------------

@pytest.mark.parametrize("solver", cm.solvers.available(SOFT))
@pytest.mark.parametrize("inner", ["clarabel", "ecos"])
def test_soft_margin_inner_backends_agree(solver, inner):
    X, y = cm.datasets.twonorm(60, dim=3, random_state=5)
    prog = m4.m4(X, y, C=0.1)
    ref = cm.solve(prog, solver)
    sol = cm.solve(prog, solver, inner=inner)
    assert sol.status is cm.Status.OPTIMAL
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(solver))
    # the gap is the final rho bracket; envelope-newton stops at a domain end whose slope
    # G' points out of the domain (a local maximum) without a bracket: width 0
    if solver == "envelope-newton" and sol.extras["at_domain_end"]:
        assert own(sol).gap == 0.0
    else:
        assert 0 < own(sol).gap <= 1e-6
    assert sol.extras["inner_solves"] == sol.iterations + 1  # + the MPM bound


@pytest.mark.parametrize("solver", cm.solvers.available(SOFT))
def test_soft_margin_reduction_one_ends_at_kappa(solver):
    prog = m4.m4(T2_X, T2_Y, C=1.0, reduction=1.0)
    sol = cm.solve(prog, solver)
    assert sol.extras["at_domain_end"]
    assert sol.values["rho"] == pytest.approx(sol.extras["kappa_mpm"], rel=1e-12)


@pytest.mark.parametrize("C, reduction", [(100.0, None), (1.0, None), (1.0, 1.0)])
def test_soft_margin_line_search_methods_agree(C, reduction):
    # quadratic interpolation (default) vs Brent's method: the same local maximum of G
    prog = m4.m4(T2_X, T2_Y, C, reduction=reduction)
    qi = cm.solve(prog, "quadratic-interpolation")
    brent = cm.solve(prog, "brent")
    assert qi.status is brent.status is cm.Status.OPTIMAL
    assert qi.extras["method"] == "quadratic-interpolation"
    assert brent.extras["method"] == "brent"
    assert qi.objective == pytest.approx(brent.objective, rel=obj_rtol("brent"))


def test_m4_line_search_is_a_deprecated_name_of_the_two_searches():
    # one name per algorithm (issue 12): the old name still works for one release
    prog = m4.m4(T2_X, T2_Y, 1.0)
    assert "m4-line-search" not in cm.solvers.available(SOFT)
    with pytest.warns(FutureWarning, match="quadratic-interpolation"):
        old = cm.solve(prog, "m4-line-search", method="brent")
    new = cm.solve(prog, "brent")
    assert old.objective == pytest.approx(new.objective, rel=1e-12)
    with pytest.warns(FutureWarning), pytest.raises(OptionError):
        cm.solve(prog, "m4-line-search", method="golden")


def test_kernel_program_bisection_and_dinkelbach_agree():
    # Theorem 17 through the empirical kernel map: the same quasi-convex program kind
    X, y = cm.datasets.twonorm(50, dim=4, random_state=6)
    prog = m4.m4(X, y, kernel="rbf", gamma=0.5, ridge=1e-2)
    comp = cm.compare(prog, ["bisection", ("bisection/ecos", "bisection", {"inner": "ecos"}),
                             "dinkelbach-gfp"], reference="bisection", rtol=1e-6)
    assert comp.agree, str(comp)
    model = prog.decode(comp.solutions["bisection"])
    assert model["dual_coef"].shape == (50,)


def _stop_after(n):
    """A callback in the one signature: raise StopIteration after iteration ``n``."""
    def callback(result):
        if result.iteration >= n:
            raise StopIteration
    return callback


# ---- the memo of fixed-rho solutions along C ---------------------------------------------

@pytest.mark.parametrize("solver", ["envelope-newton", "quadratic-interpolation"])
def test_a_path_over_C_reads_the_fixed_rho_solutions_of_earlier_searches(solver):
    # h(rho) and kappa*_MPM do not depend on C (seed 004 eqs. 4.16-4.18): along a path on
    # one set of factors (with_cost) the later searches read the rho already solved, and
    # every value is the cold search's to the solver's certificate tolerance
    X, y = cm.datasets.twonorm(150, dim=4, random_state=2)
    first = m4.m4(X, y, C=0.01)
    Cs = [0.01, 0.1, 1.0, 10.0]
    warm = cm.solve_path(lambda C: m4.with_cost(first, C), Cs, solver)
    cold = [cm.solve(m4.with_cost(first, C), solver) for C in Cs]
    tol = cm.registry.get(solver).certify_tol
    for w, c in zip(warm, cold):
        assert w.status is c.status is cm.Status.OPTIMAL
        # OPTIMAL by conicml's recomputed certificate of the returned point, memo or not
        assert w.residuals.source == "recomputed" and w.residuals.max() <= tol
        assert w.objective == pytest.approx(c.objective, rel=tol, abs=tol)
    assert warm[0].extras["inner_reused"] == 0
    assert all(s.extras["inner_reused"] >= 1 for s in warm[1:])  # kappa*_MPM at least
    assert sum(s.extras["inner_solves"] for s in warm) < \
        sum(s.extras["inner_solves"] for s in cold)
    memo = warm[-1].extras["inner_memo"]
    assert memo is warm[0].extras["inner_memo"]  # one memo along the path
    rho = float(warm[2].values["rho"])  # a value solved at C = 1: the same solution object
    assert memo.solutions[rho].values["w"] is not None


def test_a_memo_is_read_only_by_a_program_with_its_factors():
    import pickle

    from conicml.solvers._m4_inner import InnerMemo

    X, y = cm.datasets.twonorm(120, dim=3, random_state=4)
    prog = m4.m4(X, y, C=0.1)
    memo = cm.solve(prog, "envelope-newton").extras["inner_memo"]
    assert isinstance(memo, InnerMemo) and memo.solutions
    again = cm.solve(m4.with_cost(prog, 1.0), "envelope-newton", inner_memo=memo)
    assert again.extras["inner_reused"] >= 1 and again.extras["inner_memo"] is memo
    # the same data built again (other arrays), another inner backend, a pickled memo:
    # not read (a fresh memo), and the answer is the cold one
    other = m4.m4(X, y, C=1.0)
    for options, used in (({}, memo), ({"inner": "clarabel"}, memo),
                          ({}, pickle.loads(pickle.dumps(memo)))):
        sol = cm.solve(other, "envelope-newton", inner_memo=used, **options)
        assert sol.extras["inner_reused"] == 0 and sol.extras["inner_memo"] is not used
        assert sol.objective == pytest.approx(again.objective, rel=obj_rtol("envelope-newton"))
    with pytest.raises(OptionError, match="inner_memo"):
        cm.solve(prog, "envelope-newton", inner_memo={})
    from conicml.formulations import minimax

    with pytest.raises(OptionError, match="inner_memo"):  # MEMPM's search has no memo
        cm.solve(minimax.mempm(X, y), "quadratic-interpolation", inner_memo=memo)
