"""dcd: dual coordinate descent (Hsieh et al., ICML 2008) with the exact bias.

Reference values come from the generic backends clarabel and ecos on the same program;
tolerances are the rows "dcd" of tolerances.py (dcd run at tol = 1e-8 on its relative
duality gap).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from svm_instances import overlapping as _overlapping
from svm_instances import structured as _structured

import conicml as cm
from conicml._utils import engines as _options
from conicml.estimators import SVMClassifier
from conicml.exceptions import OptionError, ProgramError, SolverError
from conicml.formulations import svm
from conicml.program import Program
from conicml.solution import Status
from conicml.solvers.dcd import solve_dcd

from tolerances import obj_rtol, sol_atol

TOL = 1e-8
GENERIC = ("clarabel", "ecos")
ENGINES = ["numpy"] + (["numba"] if _options.numba_available() else [])


def _with(prog, **data):
    """``prog`` with some data replaced (Program.data is read-only)."""
    return Program(prog.kind, {**prog.data, **data}, build=prog._build, decode=prog._decode,
                   certify=prog._certify, default_solver=prog.default_solver,
                   description=prog.description, explain=prog.explain, unique=prog._unique)


def _check_against_generic(prog, sol):
    assert sol.status is Status.OPTIMAL, sol.message
    assert sol.residuals.source == "recomputed" and sol.residuals.gap <= 1e-6
    model = prog.decode(sol)
    for name in GENERIC:
        ref = cm.solve(prog, name)
        assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol("dcd"))
        ref_model = prog.decode(ref)
        for key in ("w", "b"):
            scale = max(1.0, float(np.max(np.abs(ref_model[key]))))
            np.testing.assert_allclose(model[key], ref_model[key],
                                       atol=sol_atol("dcd") * scale, err_msg=f"{name} {key}")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("form", ["dual", "primal"])
@pytest.mark.parametrize("make", [_overlapping, _structured])
def test_agrees_with_clarabel_and_ecos(make, form, engine):
    X, y = make()
    prog = svm.soft_margin(X, y, C=0.5, form=form)
    sol = cm.solve(prog, "dcd", tol=TOL, engine=engine)
    assert sol.extras["engine"] == engine
    _check_against_generic(prog, sol)


@pytest.mark.parametrize("engine", ENGINES)
def test_class_and_sample_weights(engine):
    X, y = _overlapping(seed=3)
    prog = svm.soft_margin(X, y, C=0.3, class_weight={1: 3.0, -1: 0.5}, form="dual")
    _check_against_generic(prog, cm.solve(prog, "dcd", tol=TOL, engine=engine))
    # per-sample upper bounds c_i: the program's own costs, read by every solver
    prog = _with(prog, c=prog.data["c"] * np.linspace(0.2, 2.0, y.size))
    _check_against_generic(prog, cm.solve(prog, "dcd", tol=TOL, engine=engine))


@pytest.mark.parametrize("engine", ENGINES)
def test_sparse_input_gives_the_dense_solution(engine):
    rng = np.random.default_rng(5)
    X = sp.random(200, 40, density=0.1, random_state=5, format="csr") * 3.0
    y = np.where(np.asarray(X @ rng.normal(size=40)).ravel() + 0.1 > 0, 1.0, -1.0)
    dense = svm.soft_margin(X.toarray(), y, C=1.0, form="dual")
    sparse = _with(dense, X=X)  # the formulation stores dense X; the solver reads CSR too
    sol = solve_dcd(sparse, tol=TOL, engine=engine)
    assert sol.extras["sparse"] and sol.status is Status.OPTIMAL
    ref = solve_dcd(dense, tol=TOL, engine=engine)
    assert not ref.extras["sparse"]
    # the dense program's certificate of the point found on the sparse rows
    res = dense.certify(sol)
    assert res.primal <= 1e-12 and res.gap <= 1e-6
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    _check_against_generic(dense, cm.solve(dense, "dcd", tol=TOL, engine=engine))


def test_engines_agree():
    pytest.importorskip("numba")
    X, y = _overlapping(400, 10, seed=7)
    prog = svm.soft_margin(X, y, C=0.1, form="dual")
    a, b = (cm.solve(prog, "dcd", tol=1e-7, engine=e) for e in ("numpy", "numba"))
    assert a.ok and b.ok
    assert a.objective == pytest.approx(b.objective, rel=2e-7)  # both within the gap


def test_certificate_is_recomputed_and_a_loose_stop_is_not_optimal():
    X, y = _overlapping(300, 5, seed=2)
    prog = svm.soft_margin(X, y, C=5.0, form="dual")
    sol = cm.solve(prog, "dcd")  # default tol 1e-3 on the relative gap
    assert sol.status is Status.OPTIMAL and sol.residuals.source == "recomputed"
    assert sol.residuals.gap <= 1e-3 and sol.residuals.primal <= 1e-12  # y'alpha = 0
    capped = cm.solve(prog, "dcd", tol=1e-12, max_iter=3)
    assert capped.status is Status.USER_LIMIT and "max_iter" in capped.message
    assert capped.residuals.gap > 1e-12
    timed = cm.solve(prog, "dcd", tol=1e-12, time_limit=1e-9)
    assert timed.status is Status.USER_LIMIT and "time_limit" in timed.message


def test_the_bias_is_exact_not_regularised():
    # LIBLINEAR (LinearSVC, hinge, dual) regularises b through its augmented feature:
    # evaluated in the exact-bias program its point lies above the optimum that
    # clarabel finds and dcd reaches; on data far from the origin the difference is large
    from sklearn.svm import LinearSVC

    X, y = _overlapping(200, 4, seed=4)
    X = X + 3.0  # the optimal bias is far from 0
    prog = svm.soft_margin(X, y, C=1.0, form="primal")
    ref = cm.solve(prog, "clarabel")
    sol = cm.solve(prog, "dcd", tol=1e-7)
    assert sol.ok and sol.objective == pytest.approx(ref.objective, rel=obj_rtol("dcd"))
    assert sol.extras["multiplier"] != 0.0  # the bias came from multiplier updates
    lib = LinearSVC(C=1.0, loss="hinge", dual=True, tol=1e-8, max_iter=100_000).fit(X, y)
    w, b = lib.coef_.ravel(), lib.intercept_[0]
    p_lib = 0.5 * w @ w + np.maximum(0.0, 1.0 - y * (X @ w + b)).sum()
    assert p_lib > ref.objective * (1 + 1e-4)


def test_svm_classifier_uses_dcd():
    X, y = _overlapping(seed=6)
    est = SVMClassifier(kernel="linear", C=0.5, solver="dcd",
                        solver_options={"tol": TOL}).fit(X, y)
    ref = SVMClassifier(kernel="linear", C=0.5, solver="clarabel").fit(X, y)
    assert est.solution_.solver == "dcd" and est.solution_.ok
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-4 * max(1, np.abs(ref.coef_).max()))
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.99


def test_bad_input_and_options():
    X, y = _overlapping(40, 3)
    prog = svm.soft_margin(X, y, C=1.0, form="dual")
    with pytest.raises(OptionError, match="tol"):
        cm.solve(prog, "dcd", tol=-1)
    with pytest.raises(OptionError, match="rho"):
        cm.solve(prog, "dcd", rho=0.0)
    with pytest.raises(OptionError, match="engine"):
        cm.solve(prog, "dcd", engine="gpu")
    with pytest.raises(SolverError, match="does not accept"):
        cm.solve(svm.hard_margin(X, y, form="dual"), "dcd")
    with pytest.raises(ProgramError, match="NaN"):
        solve_dcd(_with(prog, X=np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X)))
    with pytest.raises(ProgramError, match="single class"):
        solve_dcd(_with(prog, y=np.ones_like(y)))
    with pytest.raises(ProgramError, match="shape"):
        solve_dcd(_with(prog, c=prog.data["c"][:-1]))
    with pytest.raises(SolverError, match="finite costs"):
        solve_dcd(_with(prog, c=np.full(y.size, np.inf)))


# ---- warm starts along a path of costs (conicml.solve_path) ----------------------------

@pytest.mark.parametrize("form", ["dual", "primal"])
@pytest.mark.parametrize("make", [_overlapping, _structured])
def test_cost_path_warm_started_equals_cold_and_generic(make, form):
    # every warm-started value is the cold dcd solution and the generic backends' (the
    # references: clarabel and ecos on the same program)
    X, y = make()
    base = svm.soft_margin(X, y, C=1.0, form=form)
    Cs = [0.05, 0.3, 2.0, 10.0]
    warm = cm.solve_path(lambda C: svm.with_cost(base, C), Cs, "dcd", tol=TOL)
    cold = cm.solve_path(lambda C: svm.with_cost(base, C), Cs, "dcd", tol=TOL,
                         warm_start=False)
    assert [s.extras["path"]["warm_start"] for s in warm][1:] == [("b0", "x0")] * 3
    for C, w_sol, c_sol in zip(Cs, warm, cold):
        assert w_sol.objective == pytest.approx(c_sol.objective, rel=obj_rtol("dcd"))
        _check_against_generic(svm.with_cost(base, C), w_sol)


def test_cost_path_squared_hinge_warm_started():
    # the L2 loss has no upper bound: the previous alpha is kept as the start; each value
    # against cold dcd and clarabel / ecos
    from conicml.formulations.svm_l2 import squared_hinge as l2_program
    X, y = _overlapping()
    Cs = [0.05, 0.5, 5.0]
    warm = cm.solve_path(lambda C: l2_program(X, y, C=C), Cs, "dcd", tol=TOL)
    for C, sol in zip(Cs, warm):
        prog = l2_program(X, y, C=C)
        assert sol.status is Status.OPTIMAL, sol.message
        for ref in (cm.solve(prog, "dcd", tol=TOL), *(cm.solve(prog, g) for g in GENERIC)):
            assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol("dcd"))
    assert warm[1].extras["path"]["warm_start"] == ("b0", "x0")


def test_warm_start_options_are_checked():
    X, y = _overlapping()
    prog = svm.soft_margin(X, y, C=0.5, form="dual")
    with pytest.raises(OptionError, match="x0"):
        cm.solve(prog, "dcd", x0=np.ones(3))
    with pytest.raises(OptionError, match="x0"):
        cm.solve(prog, "dcd", x0=np.full(len(y), np.nan))
    with pytest.raises(OptionError, match="b0"):
        cm.solve(prog, "dcd", b0=0.5)
    with pytest.raises(OptionError, match="b0"):
        cm.solve(prog, "dcd", x0=np.zeros(len(y)), b0=np.inf)
    # an out-of-box start is clipped to [0, c]: the answer is still the optimum
    sol = cm.solve(prog, "dcd", tol=TOL, x0=np.full(len(y), 7.0), b0=3.0)
    _check_against_generic(prog, sol)
