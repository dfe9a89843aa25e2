"""Unit tests of the ``smo`` solver (:mod:`conicml.solvers.smo`) on the SVM dual.

References, each independent of the solver under test:

* ``sklearn.svm.SVC`` (LIBSVM, the same algorithm) run at ``tol=1e-6``;
* the same dual solved by cvxpy + Clarabel (written inline below);
* a closed form: two points :math:`x = \\pm 1`, :math:`y = \\pm 1`, linear kernel,
  :math:`C` large, where :math:`\\alpha = (1/2, 1/2)`, :math:`w = 1`, :math:`b = 0`
  and the dual optimum is :math:`1/2`.

Tolerances come from ``tests/tolerances.py`` (row ``"smo"``): objectives to
``obj_rtol("smo")`` relative, dual coefficients, offsets and decision values to
``sol_atol("smo")`` times :math:`\\max(1, C)`.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.svm import SVC
from solver_report import own

from conicml.exceptions import OptionError, ProgramError, SolverError
from conicml.kernels import Kernel
from conicml.program import Program
from conicml.registry import get
from conicml.solution import Status
from conicml.solvers.smo import TERMINATION_MESSAGES, solve_smo

from tolerances import obj_rtol, sol_atol

TIGHT = 1e-6  # SMO and SVC stopping tolerance in the agreement tests


def _program(X, y, c, kernel) -> Program:
    data = {"X": X, "y": np.asarray(y, dtype=float), "c": np.asarray(c, dtype=float),
            "kernel": kernel}
    return Program("qp.svm.dual", data, build=None, decode=lambda data, sol: {})


def _data(n: int, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping classes (so the optimum has free and bounded support vectors)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n)
    return X, np.where(score > 0, 1.0, -1.0)


def _gram(kernel_name: str, X: np.ndarray, gamma: float = 0.3) -> np.ndarray:
    """Gram matrix computed here, independently of conicml.kernels."""
    if kernel_name == "linear":
        return X @ X.T
    sq = np.sum(X**2, axis=1)
    return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0))


def _dual_objective(K, y, alpha) -> float:
    ay = alpha * y
    return float(alpha.sum() - 0.5 * ay @ K @ ay)


def _svc_dual_coef(svc: SVC, n: int) -> np.ndarray:
    """SVC's alpha_i y_i as a full length-n vector."""
    ay = np.zeros(n)
    ay[svc.support_] = svc.dual_coef_[0]
    return ay


def _check_svc_agreement(sol, svc, K, y, scale, svc_input=None) -> None:
    """Dual coefficients, offset, decision values and objective against a fitted SVC."""
    n = y.shape[0]
    atol = sol_atol("smo") * scale
    alpha = sol.values["alpha"]
    b = sol.extras["b"]
    ay_ref = _svc_dual_coef(svc, n)
    assert_allclose(alpha * y, ay_ref, rtol=0, atol=atol)
    assert_allclose(b, svc.intercept_[0], rtol=0, atol=atol)
    reference = svc.decision_function(K if svc_input is None else svc_input)
    assert_allclose(K @ (alpha * y) + b, reference, rtol=0, atol=atol)
    ref_obj = _dual_objective(K, y, np.abs(ay_ref))
    assert_allclose(sol.objective, ref_obj, rtol=obj_rtol("smo"))
    assert own(sol).dual <= TIGHT


# -- agreement with LIBSVM (sklearn.svm.SVC) -------------------------------------------


@pytest.mark.parametrize("shrinking", [True, False], ids=["shrinking", "no-shrinking"])
@pytest.mark.parametrize(("kernel_name", "C", "n"), [("linear", 1.0, 150), ("rbf", 10.0, 120)])
def test_agrees_with_svc_precomputed(kernel_name, C, n, shrinking):
    X, y = _data(n, seed=1)
    K = _gram(kernel_name, X)
    c = np.full(n, C)
    sol = solve_smo(_program(K, y, c, Kernel("precomputed")), tol=TIGHT, shrinking=shrinking)
    svc = SVC(C=C, kernel="precomputed", tol=TIGHT, shrinking=shrinking).fit(K, y)
    assert sol.status == Status.OPTIMAL
    assert sol.solver == "smo"
    _check_svc_agreement(sol, svc, K, y, max(1.0, C))
    # the same algorithm: iteration counts agree up to tie-breaking and shrinking order
    assert 0.5 * svc.n_iter_[0] <= sol.iterations <= 2.0 * svc.n_iter_[0]


@pytest.mark.parametrize("shrinking", [True, False], ids=["shrinking", "no-shrinking"])
def test_agrees_with_svc_rbf_kernel_columns(shrinking):
    """The kernel evaluated column by column (not precomputed) gives the same answer."""
    n, C, gamma = 160, 2.0, 0.3
    X, y = _data(n, seed=2)
    sol = solve_smo(_program(X, y, np.full(n, C), Kernel("rbf", gamma=gamma)), tol=TIGHT,
                    shrinking=shrinking)
    svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=TIGHT, shrinking=shrinking).fit(X, y)
    assert sol.status == Status.OPTIMAL
    _check_svc_agreement(sol, svc, _gram("rbf", X, gamma), y, max(1.0, C), svc_input=X)
    assert 0 < sol.extras["kernel_evaluations"] <= n
    assert sol.extras["cache_hits"] > 0


def test_per_sample_costs_match_class_weight():
    n, C = 140, 1.5
    weights = {1.0: 3.0, -1.0: 0.5}
    X, y = _data(n, seed=3)
    K = _gram("rbf", X)
    c = C * np.where(y > 0, weights[1.0], weights[-1.0])
    sol = solve_smo(_program(K, y, c, Kernel("precomputed")), tol=TIGHT)
    svc = SVC(C=C, kernel="precomputed", tol=TIGHT, class_weight=weights).fit(K, y)
    assert sol.status == Status.OPTIMAL
    alpha = sol.values["alpha"]
    assert np.any((alpha == c) & (y > 0)) and np.any((alpha == c) & (y < 0))  # both bounds bind
    _check_svc_agreement(sol, svc, K, y, max(1.0, float(c.max())))


# -- agreement with an independent conic solve -------------------------------------------


def _clarabel_dual(K, y, c) -> float:
    lam, U = np.linalg.eigh(K)
    keep = lam > 1e-12 * lam[-1]
    L = U[:, keep] * np.sqrt(lam[keep])
    a = cp.Variable(len(y))
    objective = cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, a)))
    problem = cp.Problem(objective, [a >= 0, a <= c, y @ a == 0])
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == cp.OPTIMAL
    return float(problem.value)


@pytest.mark.parametrize(("kernel_name", "C"), [("linear", 1.0), ("rbf", 5.0)])
def test_agrees_with_clarabel(kernel_name, C):
    n = 100
    X, y = _data(n, seed=4)
    K = _gram(kernel_name, X)
    c = np.full(n, C)
    sol = solve_smo(_program(K, y, c, Kernel("precomputed")), tol=1e-8)
    ref = _clarabel_dual(K, y, c)
    assert sol.status == Status.OPTIMAL
    assert_allclose(sol.objective, ref, rtol=obj_rtol("smo"))
    assert_allclose(sol.objective, _dual_objective(K, y, sol.values["alpha"]), rtol=1e-12)
    # weak duality and a small gap at the returned (w, b)
    assert -1e-9 <= own(sol).gap <= obj_rtol("smo") * max(1.0, abs(ref))


def _imbalanced(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping classes with about one positive in five (the negative class larger)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n)
    return X, np.where(score > np.quantile(score, 0.8), 1.0, -1.0)


@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_larger_negative_class_agrees_with_svc_clarabel_and_ecos(engine):
    """The loop runs on -y when the negative class is the larger (_orient): the same
    alpha and the offset of the program's own y, against LIBSVM, Clarabel and ECOS."""
    if engine == "numba":
        pytest.importorskip("numba")
    from conicml.solvers.smo import _orient

    n, C, gamma = 120, 3.0, 0.4
    X, y = _imbalanced(n, seed=11)
    assert _orient(y) and not _orient(-y)
    K = _gram("rbf", X, gamma)
    c = np.full(n, C)
    sol = solve_smo(_program(X, y, c, Kernel("rbf", gamma=gamma)), tol=TIGHT, engine=engine)
    assert sol.status == Status.OPTIMAL
    svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=TIGHT).fit(X, y)
    _check_svc_agreement(sol, svc, K, y, C, svc_input=X)
    # the mirrored program (larger class positive, no flip): the same alpha, offset -b
    mirror = solve_smo(_program(X, -y, c, Kernel("rbf", gamma=gamma)), tol=TIGHT,
                       engine=engine)
    assert_allclose(mirror.values["alpha"], sol.values["alpha"], rtol=0, atol=sol_atol("smo") * C)
    assert_allclose(mirror.extras["b"], -sol.extras["b"], rtol=0, atol=sol_atol("smo") * C)
    # two generic backends on the same dual (cvxpy, written inline)
    lam, U = np.linalg.eigh(K)
    keep = lam > 1e-12 * lam[-1]
    L = U[:, keep] * np.sqrt(lam[keep])
    for backend in (cp.CLARABEL, cp.ECOS):
        a = cp.Variable(n)
        objective = cp.sum(a) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, a))
        problem = cp.Problem(cp.Maximize(objective), [a >= 0, a <= c, y @ a == 0])
        problem.solve(solver=backend)
        assert problem.status == cp.OPTIMAL
        assert_allclose(sol.objective, problem.value, rtol=obj_rtol("smo"))


def test_warm_start_products_with_the_larger_negative_class():
    """x0_products are products with the program's y; the flipped loop negates them: the
    resumed run is the run that computes them itself."""
    n, C, gamma = 120, 3.0, 0.4
    X, y = _imbalanced(n, seed=12)
    K = _gram("rbf", X, gamma)
    c = np.full(n, C)
    prog = _program(K, y, c, Kernel("precomputed"))
    partial = solve_smo(prog, tol=1e-6, max_iter=40)
    x0 = partial.values["alpha"]
    bound = x0 >= c
    products = (K @ (x0 * y), K[:, bound] @ (c[bound] * y[bound]))
    given = solve_smo(prog, tol=1e-6, x0=x0, x0_products=products)
    computed = solve_smo(prog, tol=1e-6, x0=x0)
    assert given.status == computed.status == Status.OPTIMAL
    # the given products and smo's own agree to rounding, not bitwise (BLAS summation order
    # differs by engine and CPU), so a near-tie in the working-set choice may go the other
    # way: the two runs are the same run up to a few updates and the same point at smo's
    # tolerance, not the same iterate sequence
    assert abs(given.iterations - computed.iterations) <= 3
    assert_allclose(given.objective, computed.objective, rtol=obj_rtol("smo"))
    assert_allclose(given.values["alpha"], computed.values["alpha"], rtol=0,
                    atol=sol_atol("smo") * C)
    assert_allclose(given.extras["b"], computed.extras["b"], rtol=0, atol=sol_atol("smo") * C)


# -- closed form ---------------------------------------------------------------------------


def test_closed_form_two_points():
    X = np.array([[1.0], [-1.0]])
    y = np.array([1.0, -1.0])
    sol = solve_smo(_program(X, y, [100.0, 100.0], Kernel("linear")), tol=1e-10)
    alpha = sol.values["alpha"]
    assert sol.status == Status.OPTIMAL
    assert_allclose(alpha, [0.5, 0.5], atol=1e-12)
    assert_allclose(X.T @ (alpha * y), [1.0], atol=1e-12)  # w
    assert_allclose(sol.extras["b"], 0.0, atol=1e-12)
    assert_allclose(sol.objective, 0.5, atol=1e-12)
    assert_allclose(own(sol).gap, 0.0, atol=1e-12)
    assert sol.iterations == 1


# -- certificate, limits, warm start -------------------------------------------------------


@pytest.fixture(scope="module")
def rbf_problem():
    n = 150
    X, y = _data(n, seed=5)
    return _program(X, y, np.full(n, 4.0), Kernel("rbf", gamma=0.5))


def test_certificate_at_convergence(rbf_problem):
    tol = 1e-3
    sol = solve_smo(rbf_problem, tol=tol)
    y, c = rbf_problem.data["y"], rbf_problem.data["c"]
    alpha = sol.values["alpha"]
    assert sol.status == Status.OPTIMAL
    assert sol.message == TERMINATION_MESSAGES[0]
    assert own(sol).dual <= tol
    assert sol.extras["kkt_violation"] == own(sol).dual
    assert own(sol).primal <= 1e-12
    assert own(sol).primal >= abs(float(y @ alpha))
    assert np.all(alpha >= 0) and np.all(alpha <= c)
    assert own(sol).gap >= -1e-9
    assert own(sol).source == "solver"
    K = _gram("rbf", rbf_problem.data["X"], gamma=0.5)
    # the objective comes from the incrementally updated gradient: float32 stored
    # columns (LIBSVM's Qfloat, the compiled loop at tol >= 1e-5) round each Gram value
    # to 2^-24 relative, so the reported value is exact to ~1e-8 instead of ~1e-12
    rtol = 1e-10 if sol.extras["column_dtype"] == "float64" else 1e-7
    assert_allclose(sol.objective, _dual_objective(K, y, alpha), rtol=rtol)
    exact = solve_smo(rbf_problem, tol=tol, column_dtype="float64")
    assert_allclose(exact.objective, _dual_objective(K, y, exact.values["alpha"]), rtol=1e-10)


def test_max_iter_gives_user_limit(rbf_problem):
    sol = solve_smo(rbf_problem, max_iter=1)
    assert sol.status == Status.USER_LIMIT
    assert sol.message == TERMINATION_MESSAGES[1]
    assert sol.iterations == 1
    assert own(sol).dual > 1e-3
    assert np.count_nonzero(sol.values["alpha"]) == 2  # one two-variable step from 0


def test_time_limit_and_callback_give_user_limit(rbf_problem):
    sol = solve_smo(rbf_problem, time_limit=1e-12)
    assert sol.status == Status.USER_LIMIT
    assert sol.message == TERMINATION_MESSAGES[2]
    seen = []

    def callback(result):
        seen.append((result.iteration, result.values["alpha"].shape, result.residual))
        if result.iteration >= 5:
            raise StopIteration

    sol = solve_smo(rbf_problem, callback=callback)
    assert sol.status == Status.USER_LIMIT
    assert sol.message == TERMINATION_MESSAGES[3]
    assert sol.iterations == 5
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5]


def test_warm_start_from_optimum(rbf_problem):
    cold = solve_smo(rbf_problem, tol=1e-6)
    warm = solve_smo(rbf_problem, tol=1e-6, x0=cold.values["alpha"])
    assert warm.status == Status.OPTIMAL
    assert warm.iterations <= 1
    assert_allclose(warm.objective, cold.objective, rtol=1e-12)
    assert_allclose(warm.extras["b"], cold.extras["b"], atol=1e-10)
    # a feasible but non-optimal warm start also converges to the same optimum
    partial = solve_smo(rbf_problem, tol=1e-6, max_iter=50)
    resumed = solve_smo(rbf_problem, tol=1e-6, x0=partial.values["alpha"])
    assert resumed.status == Status.OPTIMAL
    assert_allclose(resumed.objective, cold.objective, rtol=1e-9)


def test_shrinking_is_exercised_and_exact():
    n, C = 200, 1.0
    X, y = _data(n, seed=6)
    prog = _program(X, y, np.full(n, C), Kernel("linear"))
    shrunk = solve_smo(prog, tol=1e-6, shrinking=True)
    plain = solve_smo(prog, tol=1e-6, shrinking=False)
    assert shrunk.extras["min_active_size"] < n  # shrinking happened
    assert plain.extras["min_active_size"] == n
    assert own(shrunk).dual <= 1e-6  # re-checked on the full set
    assert_allclose(shrunk.objective, plain.objective, rtol=1e-9)
    assert_allclose(shrunk.values["alpha"], plain.values["alpha"], atol=1e-5 * C)


def test_tiny_cache_gives_the_same_solution(rbf_problem):
    n = rbf_problem.data["y"].shape[0]
    big = solve_smo(rbf_problem, tol=1e-6)
    tiny = solve_smo(rbf_problem, tol=1e-6, cache_size=3 * 8 * n / 2**20)  # 3 columns
    assert tiny.extras["kernel_evaluations"] > big.extras["kernel_evaluations"]
    assert_allclose(tiny.values["alpha"], big.values["alpha"], rtol=0, atol=1e-12)
    assert tiny.iterations == big.iterations


def test_verbose_prints_a_table(rbf_problem, capsys):
    solve_smo(rbf_problem, verbose=True)
    out = capsys.readouterr().out
    assert "|   iter   |" in out and "m - M" in out
    assert TERMINATION_MESSAGES[0] in out


# -- validation ----------------------------------------------------------------------------


def test_infinite_cost_raises():
    X, y = _data(20, seed=7)
    with pytest.raises(SolverError, match="hard margin"):
        solve_smo(_program(X, y, np.full(20, np.inf), Kernel("linear")))


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"c": np.zeros(20)}, ProgramError),
        ({"y": np.r_[np.ones(19), 0.0]}, ProgramError),
        ({"y": np.ones(20)}, ProgramError),
        ({"c": np.ones(19)}, ProgramError),
        ({"kernel": "rbf"}, SolverError),
    ],
    ids=["zero-cost", "bad-label", "one-class", "shape", "kernel-type"],
)
def test_bad_data_raises(change, error):
    X, y = _data(20, seed=7)
    data = {"X": X, "y": y, "c": np.ones(20), "kernel": Kernel("linear"), **change}
    with pytest.raises(error):
        solve_smo(Program("qp.svm.dual", data, build=None, decode=lambda data, sol: {}))


def test_missing_key_and_wrong_kind_raise():
    X, y = _data(20, seed=7)
    prog = Program("qp.svm.dual", {"X": X, "y": y, "kernel": Kernel("linear")}, build=None,
                   decode=lambda data, sol: {})
    with pytest.raises(SolverError, match="'c'"):
        solve_smo(prog)
    other = Program("socp.mpm", {"X": X, "y": y, "c": np.ones(20), "kernel": Kernel("linear")},
                    build=None, decode=lambda data, sol: {})
    with pytest.raises(SolverError, match="qp.svm.dual"):
        solve_smo(other)


@pytest.mark.parametrize(
    "options",
    [{"tol": 0.0}, {"tol": float("nan")}, {"max_iter": -1}, {"max_iter": 2.5},
     {"time_limit": -1.0}, {"cache_size": 0.0},
     {"x0": np.full(20, -1.0)}, {"x0": np.full(20, 2.0)}, {"x0": np.ones(3)}],
    ids=["tol0", "tolnan", "maxiter-neg", "maxiter-float", "time-neg", "cache0",
         "x0-below", "x0-above", "x0-shape"],
)
def test_bad_options_raise(options):
    X, y = _data(20, seed=7)
    with pytest.raises(OptionError):
        solve_smo(_program(X, y, np.ones(20), Kernel("linear")), **options)


def test_infeasible_equality_in_x0_raises():
    X, y = _data(20, seed=7)
    x0 = np.where(y > 0, 0.5, 0.0)  # in the box, but y^T x0 != 0
    with pytest.raises(OptionError, match="not feasible"):
        solve_smo(_program(X, y, np.ones(20), Kernel("linear")), x0=x0)


def test_registered():
    entry = get("smo", kind="qp.svm.dual")
    assert entry.function is solve_smo
    assert entry.specialized
    assert set(entry.options) == {"tol", "max_iter", "time_limit", "verbose", "shrinking",
                                  "cache_size", "x0", "x0_products", "callback", "gap_tol",
                                  "engine", "column_dtype"}
