"""Core contract: registry, solve, Solution, Program, compare, errors."""

import pickle

import numpy as np
import pytest
from solver_report import own

import conicml as cm
from conicml.exceptions import OptionError, ProgramError, SolverError, SolverNotFoundError
from conicml.registry import register


@pytest.fixture(scope="module")
def small_program():
    X, y = cm.datasets.twonorm(40, dim=3, random_state=3)
    return cm.formulations.svm.soft_margin(X, y, C=1.0, form="dual")


def test_generic_backends_are_registered_in_order_of_preference():
    names = cm.solvers.available()
    assert names[:4] == ["clarabel", "ecos", "scs", "osqp"]
    assert not cm.solvers.get("clarabel").specialized
    assert cm.solvers.get("smo").specialized


def test_available_filters_by_kind():
    assert "smo" in cm.solvers.available("qp.svm.dual")
    assert "smo" not in cm.solvers.available("qp.svm.primal")
    assert "osqp" not in cm.solvers.available("socp.anything")


def test_unknown_solver_lists_registered_ones(small_program):
    with pytest.raises(SolverNotFoundError, match="registered solvers: clarabel"):
        cm.solve(small_program, "gurobi-typo")
    with pytest.raises(ValueError):  # SolverNotFoundError is a ValueError
        cm.solve(small_program, "nope")


def test_solver_names_are_case_insensitive(small_program):
    assert cm.solve(small_program, "CLARABEL").solver == "clarabel"


def test_wrong_kind_lists_solvers_that_accept_it():
    X, y = cm.datasets.twonorm(30, dim=2, random_state=1)
    prog = cm.formulations.svm.soft_margin(X, y, form="primal")
    with pytest.raises(SolverError, match="solvers for this kind: clarabel, ecos, scs, osqp"):
        cm.solve(prog, "smo")


def test_unknown_option_raises(small_program):
    with pytest.raises(OptionError, match="does not accept option"):
        cm.solve(small_program, "clarabel", tolerance=1e-3)
    with pytest.raises(OptionError, match="eps_abs must be a positive"):
        cm.solve(small_program, "ecos", eps_abs=-1.0)
    with pytest.raises(OptionError, match="has no 'time_limit'"):
        cm.solve(small_program, "ecos", time_limit=10.0)


def test_solution_is_frozen_and_complete(small_program):
    sol = cm.solve(small_program, "clarabel")
    assert sol.status is cm.Status.OPTIMAL and sol.ok
    assert set(sol.values) == {"alpha"}
    assert sol.iterations > 0 and sol.solve_time > 0 and sol.total_time >= sol.solve_time
    # the certificate is always filled: primal recomputed, dual and gap from the backend
    assert own(sol).primal < 1e-7 and own(sol).dual < 1e-6 and own(sol).gap < 1e-6
    with pytest.raises(AttributeError):
        sol.objective = 0.0
    with pytest.raises(TypeError):
        sol.values["alpha"] = None


def test_default_solver_is_the_programs_documented_default(small_program):
    assert small_program.default_solver == "clarabel"
    assert cm.solve(small_program).solver == "clarabel"


def test_program_and_solution_pickle(small_program):
    sol = cm.solve(small_program, "ecos")
    prog2 = pickle.loads(pickle.dumps(small_program))
    sol2 = pickle.loads(pickle.dumps(sol))
    np.testing.assert_array_equal(sol2.values["alpha"], sol.values["alpha"])
    assert prog2.decode(sol2)["b"] == pytest.approx(small_program.decode(sol)["b"])
    assert prog2.problem is not None  # rebuilt lazily after unpickling


def test_problem_is_built_once(small_program):
    assert small_program.problem is small_program.problem


def test_compare_table_and_agreement(small_program):
    result = cm.compare(small_program, ["clarabel", "ecos", "smo"],
                        options={"smo": {"tol": 1e-9}})
    assert result.reference == "clarabel"
    assert [r.solver for r in result.rows] == ["clarabel", "ecos", "smo"]
    assert result.agree
    text = str(result)
    assert "all agree" in text and "max|d b|" in text
    md = result.to_markdown()
    assert md.count("\n") == 4 and md.startswith("| solver")


def test_compare_detects_disagreement(small_program):
    # an iteration cap of 2 cannot reach the optimum: the row must not agree
    result = cm.compare(small_program, ["clarabel", ("ecos-2it", "ecos", {"max_iter": 2})])
    assert not result.agree
    assert not result.row("ecos-2it").agree


def test_a_new_solver_registers_like_a_builtin(small_program):
    @register("test-clarabel-copy", kinds=["qp.svm.dual"])
    def copy(program, *, tol: float = 1e-8):
        """Clarabel under another name (test only)."""
        sol = cm.solve(program, "clarabel")
        return cm.Solution(status=sol.status, solver="test-clarabel-copy",
                           objective=sol.objective, values=sol.values,
                           residuals=sol.residuals)

    try:
        assert "test-clarabel-copy" in cm.solvers.available("qp.svm.dual")
        assert cm.compare(small_program, ["clarabel", "test-clarabel-copy"]).agree
        with pytest.raises(OptionError):
            cm.solve(small_program, "test-clarabel-copy", max_iter=3)
    finally:
        from conicml import registry

        registry._REGISTRY.pop("test-clarabel-copy")


def test_register_rejects_bad_names():
    with pytest.raises(ValueError, match="lowercase"):
        register("Bad", kinds=["qp.*"])
    with pytest.raises(ValueError, match="at least one"):
        register("bad", kinds=[])


def test_exception_hierarchy():
    assert issubclass(ProgramError, ValueError) and issubclass(ProgramError, cm.ConicMLError)
    assert issubclass(OptionError, ValueError)
    assert issubclass(SolverError, RuntimeError)


def test_psd_factor_reproduces_the_matrix():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 5))
    K = A @ A.T  # rank 5: PSD-singular, Cholesky fails, eigen-factor is exact
    from conicml.kernels import psd_factor

    L = psd_factor(K)
    assert L.shape[1] == 5
    np.testing.assert_allclose(L @ L.T, K, atol=1e-10)
    with pytest.raises(ProgramError, match="not positive semi-definite"):
        psd_factor(-K - np.eye(30))
    with pytest.raises(ProgramError, match="symmetric"):
        psd_factor(A[:5, :5] + np.triu(np.ones((5, 5))))


def test_compare_agrees_on_infeasibility():
    # x = 0, 1, 2 with labels +, -, +: not separable, so every solver must say so
    X = np.array([[0.0], [1.0], [2.0]])
    y = np.array([1.0, -1.0, 1.0])
    prog = cm.formulations.svm.hard_margin(X, y, form="primal")
    result = cm.compare(prog, ["clarabel", "ecos", "osqp"])
    assert result.agree, str(result)
    assert {r.status for r in result.rows} <= {"infeasible", "infeasible_inaccurate"}


def test_bias_decode_tolerates_first_order_accuracy():
    # SCS stops ~1e-5 from the box: with a fixed 1e-6 "free" threshold, bounded
    # clusters were counted as free and b came out 0.95 off (measured); the
    # threshold now grows with the solver's own constraint violation
    X, y = cm.datasets.load("breast_cancer")
    X = (X - X.mean(0)) / X.std(0)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=20)
    prog = cm.formulations.cbc.cbc(clusters, C=1.0, accuracy=0.5, form="dual")
    ref = prog.decode(cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10))
    sol = cm.solve(prog, "scs")
    assert own(sol).primal > 1e-6  # the regime this test is about
    assert prog.decode(sol)["b"] == pytest.approx(ref["b"], abs=1e-3)


@pytest.mark.parametrize("kwargs,message", [
    ({"tol": 0.0}, "tol must be a positive finite"),
    ({"tol": float("inf")}, "tol must be a positive finite"),
    ({"tol": True}, "tol must be a positive finite"),
    ({"max_iter": 0}, "max_iter must be an integer >= 1"),
    ({"max_iter": 2.5}, "max_iter must be an integer"),
    ({"time_limit": 0.0}, "time_limit must be a positive number"),
    ({"time_limit": float("nan")}, "time_limit must be a positive number"),
])
def test_common_iterative_options_have_one_meaning(kwargs, message):
    from conicml.solvers._options import check_common

    args = {"tol": 1e-6, "max_iter": 10, "time_limit": None, **kwargs}
    with pytest.raises(OptionError, match=message):
        check_common("x", args["tol"], args["max_iter"], args["time_limit"])


def test_zero_iterations_allowed_only_where_a_warm_start_can_certify():
    from conicml.solvers._options import check_common

    check_common("x", 1e-6, 0, None, allow_zero=True)  # no error
    # time_limit=0 is refused by every solver (max_iter=0 is the way to ask for the start)
    with pytest.raises(OptionError, match="x: time_limit must be a positive"):
        check_common("x", 1e-6, 0, 0.0, allow_zero=True)
    X, y = cm.datasets.twonorm(30, dim=2, random_state=2)
    prog = cm.formulations.svm.soft_margin(X, y, form="dual")
    with pytest.raises(OptionError, match="smo: tol"):
        cm.solve(prog, "smo", tol=-1.0)


def test_deprecated_chance_module_still_works_with_a_future_warning():
    # conicml.formulations.chance was split into specified_rates / cbc / ordinal;
    # the old spelling works for one release (issue 12) and names the new module
    from conicml.formulations import cbc, ordinal, specified_rates

    with pytest.warns(FutureWarning, match=r"use conicml\.formulations\.cbc\.cbc"):
        assert cm.formulations.chance.cbc is cbc.cbc
    with pytest.warns(FutureWarning, match="formulations.ordinal.cbor"):
        assert cm.formulations.chance.cbor is ordinal.cbor
    with pytest.warns(FutureWarning, match="formulations.specified_rates"):
        assert cm.formulations.chance.specified_rates is specified_rates.specified_rates
    with pytest.raises(AttributeError):
        cm.formulations.chance.no_such_name  # noqa: B018


def test_legacy_callback_signatures_still_work_with_a_future_warning():
    # one callback signature (issue 12): callback(intermediate_result), StopIteration stops;
    # the old positional signatures keep working for one release and say how to migrate
    X, y = cm.datasets.twonorm(60, dim=3, random_state=1)
    prog = cm.formulations.svm.soft_margin(X, y, C=1.0, kernel="rbf", form="dual")
    with pytest.warns(FutureWarning, match=r"callback\(intermediate_result\)"):
        old = cm.solve(prog, "smo", callback=lambda k, alpha, viol: k >= 3)
    seen = []

    def new(result):
        seen.append(result)
        if result.iteration >= 3:
            raise StopIteration

    fresh = cm.solve(prog, "smo", callback=new)
    assert old.status is fresh.status is cm.Status.USER_LIMIT
    assert old.iterations == fresh.iterations == 3
    assert [r.iteration for r in seen] == [1, 2, 3]
    assert seen[-1].values["alpha"].shape == (60,) and seen[-1].residual > 0
    with pytest.raises(cm.OptionError, match="callable"):
        cm.solve(prog, "smo", callback=3)


def test_progress_is_off_without_a_terminal_and_on_request(monkeypatch):
    from conicml._utils.progress import progress

    items = [1, 2, 3]
    assert progress(items, "x", enable=False) is items
    monkeypatch.setenv("CONICML_PROGRESS", "0")
    assert progress(items, "x") is items  # switched off by the environment
    pytest.importorskip("tqdm")
    bar = progress(items, "x", enable=True)
    assert bar is not items and list(bar) == items
