"""pegasos / weighted-pegasos: agreement with every solver of the linear SVM primal, honest
certificate, the C <-> lambda map, limits and bad input."""

import math

import numpy as np
import pytest

import conicml as cm
from conicml.exceptions import OptionError, SolverError
from conicml.formulations import svm
from conicml.kinds import SVM_PRIMAL
from conicml.solvers.pegasos import exact_bias

from tolerances import obj_rtol, sol_atol

PEGASOS = ("pegasos", "weighted-pegasos")


@pytest.fixture(scope="module")
def twonorm():
    return cm.datasets.twonorm(120, dim=5, random_state=7)


def _reference(prog):
    # independent interior-point solve at tight tolerances
    return cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10)


def _opts(name):
    # the stochastic solvers run at their defaults (certified gap 1e-3) with a fixed seed;
    # osqp as in tests/formulations/test_svm.py
    # dcd at tol 1e-8 on its relative duality gap (tolerances.py row "dcd")
    return {"random_state": 0} if name in PEGASOS else (
        {"max_iter": 200_000} if name == "osqp" else {"tol": 1e-8} if name == "dcd" else {})


def _registered():
    names = cm.solvers.available(SVM_PRIMAL)
    assert set(PEGASOS) <= set(names)
    return names


# ---- every solver of the primal kind agrees with the reference ----------------------------

@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("solver", _registered())
def test_every_primal_solver_agrees_on_random_instances(solver, kernel, twonorm):
    X, y = twonorm
    prog = svm.soft_margin(X, y, C=0.7, kernel=kernel, form="primal",
                           class_weight={1: 2.0, -1: 1.0})
    ref = _reference(prog)
    sol = cm.solve(prog, solver, **_opts(solver))
    assert sol.ok, sol.message
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(solver))
    ref_model, model = prog.decode(ref), prog.decode(sol)
    for key in ("dual_coef", "b") + (("w",) if kernel == "linear" else ()):
        scale = max(1.0, np.max(np.abs(ref_model[key])))
        np.testing.assert_allclose(model[key], ref_model[key], atol=sol_atol(solver) * scale,
                                   err_msg=f"{solver} {key}")


@pytest.mark.parametrize("solver", _registered())
def test_every_primal_solver_finds_the_closed_form(solver):
    # structured instance with a closed form: the four points of test_svm's hard-margin case;
    # with C = 10 >= max alpha the soft margin equals the hard margin: w = (1, 0), b = -1,
    # objective 1/2, alpha = (1/4, 1/4, 1/2, 0)
    X = np.array([[2.0, 1.0], [2.0, 3.0], [0.0, 2.0], [-2.0, 0.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    prog = svm.soft_margin(X, y, C=10.0, form="primal")
    sol = cm.solve(prog, solver, **_opts(solver))
    assert sol.ok, sol.message
    model = prog.decode(sol)
    assert sol.objective == pytest.approx(0.5, rel=obj_rtol(solver))
    if solver in PEGASOS:
        # certified: ||w - w*|| <= sqrt(2 (P - D)) (P is 1-strongly convex in w)
        gap_abs = sol.residuals.gap * sol.objective
        assert np.linalg.norm(model["w"] - [1.0, 0.0]) <= math.sqrt(2 * gap_abs)
        atol = 0.1
    else:
        atol = 1e-4
        np.testing.assert_allclose(model["w"], [1.0, 0.0], atol=atol)
    assert model["b"] == pytest.approx(-1.0, abs=atol)
    np.testing.assert_allclose(model["alpha"], [0.25, 0.25, 0.5, 0.0], atol=atol)


# issue 11: the SVM primal's certificate is the implied dual point's gap (formerly a
# strict xfail: the generic NNLS refit read this first-order point as non-stationary)
def test_compare_includes_pegasos_at_its_stated_tolerance():
    X, y = cm.datasets.twonorm(60, dim=3, random_state=2)
    prog = svm.soft_margin(X, y, C=0.5, form="primal")
    result = cm.compare(prog, ["clarabel", "ecos", *PEGASOS], rtol=1e-6,
                        options={n: {"random_state": 1, **cm.solvers.get(n).compare_options}
                                 for n in PEGASOS})
    assert result.agree, str(result)
    for name in PEGASOS:  # held to the registered, looser tolerance (compare_rtol)
        assert result.row(name).rtol == cm.solvers.get(name).compare_rtol == 1e-4


# ---- the certificate and the lambda map ---------------------------------------------------

@pytest.mark.parametrize("name", PEGASOS)
def test_certificate_is_an_upper_bound_on_the_suboptimality(name, twonorm):
    X, y = twonorm
    prog = svm.soft_margin(X, y, C=2.0, form="primal", class_weight="balanced")
    p_star = _reference(prog).objective
    w_star = prog.decode(_reference(prog))["w"]
    for T in (2_000, 8_000):
        sol = cm.solve(prog, name, max_iter=T, tol=1e-12, random_state=3)
        P, D = sol.extras["primal_objective"], sol.extras["dual_objective"]
        assert P == pytest.approx(sol.objective)
        # weak duality: D <= P* <= P (up to the reference's own accuracy)
        assert D <= p_star * (1 + 1e-8) and P >= p_star * (1 - 1e-8)
        assert sol.residuals.gap == pytest.approx((P - D) / P)
        assert sol.residuals.gap >= (P - p_star) / P - 1e-8
        # strong convexity of P in w (modulus 1): ||w - w*||^2 <= 2 (P - P*) <= 2 (P - D)
        w = np.asarray(sol.values["w"])
        assert np.linalg.norm(w - w_star) <= math.sqrt(2 * (P - D)) + 1e-6
        # the implied dual point is feasible
        alpha = np.asarray(sol.duals["margin"])
        c = prog.data["c"]
        assert np.all(alpha >= 0) and np.all(alpha <= c + 1e-12)
        assert abs(float(y @ alpha)) <= 1e-9 * c.sum()


def test_lambda_map_and_projection_radius(twonorm):
    X, y = twonorm
    C = 0.3
    prog = svm.soft_margin(X, y, C=C, form="primal")
    sol = cm.solve(prog, "pegasos", random_state=0)
    lam = sol.extras["lam"]
    assert lam == pytest.approx(1.0 / (C * y.size), rel=1e-12)  # C = 1/(lambda N) (F12)
    # Pegasos' ball ||w|| <= 1/sqrt(lambda) contains the optimum (Lemma C.1 analogue)
    w_star = prog.decode(_reference(prog))["w"]
    assert np.linalg.norm(w_star) <= 1 / math.sqrt(lam)
    assert np.linalg.norm(sol.values["w"]) <= sol.extras["radius"] * (1 + 1e-12)


def test_weights_53_map_to_per_sample_costs():
    # H-LSVM's node objective (C.1) with the weights (5.3): c_i = nu_i / (lambda_t N);
    # the solver's lambda is then N * lambda_t (P-H3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    y = np.where(np.arange(90) < 70, 1.0, -1.0)
    n_pos, n_neg, lam_t = 70, 20, 1e-3
    nu = np.where(y > 0, 1 / (2 * n_pos), 1 / (2 * n_neg))
    C = 1.0 / (lam_t * 90)
    prog = svm.soft_margin(X, y, C=C, form="primal",
                           class_weight={1: 1 / (2 * n_pos), -1: 1 / (2 * n_neg)})
    np.testing.assert_allclose(prog.data["c"], nu / (lam_t * 90))
    sol = cm.solve(prog, "weighted-pegasos", random_state=0, max_iter=200)
    assert sol.extras["lam"] == pytest.approx(90 * lam_t)


def test_exact_bias_matches_a_brute_force_search():
    rng = np.random.default_rng(5)
    f = rng.normal(size=41)
    y = np.where(rng.random(41) < 0.4, 1.0, -1.0)
    c = rng.uniform(0.5, 2.0, size=41)

    def loss(b):
        return float(c @ np.maximum(0.0, 1 - y * (f + b)))

    b = exact_bias(f, y, c)
    grid = np.linspace(-5, 5, 200_001)
    best = min(loss(g) for g in grid[::50])
    assert loss(b) <= best + 1e-12
    assert loss(b) <= min(loss(b - 1e-6), loss(b + 1e-6)) + 1e-12


# ---- limits, callback, reproducibility ----------------------------------------------------

def test_T_reached_is_user_limit_with_a_point(twonorm):
    X, y = twonorm
    prog = svm.soft_margin(X, y, C=1.0, form="primal")
    sol = cm.solve(prog, "weighted-pegasos", max_iter=50, tol=1e-9, random_state=0)
    assert sol.status is cm.Status.USER_LIMIT
    assert "max_iter = T = 50" in sol.message
    assert np.isfinite(sol.residuals.gap) and sol.iterations == 50
    prog.decode(sol)  # a USER_LIMIT point decodes


def test_callback_and_time_limit_stop(twonorm):
    X, y = twonorm
    prog = svm.soft_margin(X, y, C=1.0, form="primal")
    seen = []

    def stop(result):
        seen.append(result.residual)
        raise StopIteration

    sol = cm.solve(prog, "pegasos", callback=stop, tol=1e-12, random_state=0)
    assert sol.status is cm.Status.USER_LIMIT and "callback" in sol.message and len(seen) == 1
    sol = cm.solve(prog, "pegasos", time_limit=1e-3, tol=1e-12, random_state=0)
    assert sol.status is cm.Status.USER_LIMIT and "time_limit" in sol.message


def test_eps_peg_stop_and_random_state(twonorm):
    X, y = twonorm
    prog = svm.soft_margin(X, y, C=1.0, form="primal")
    sol = cm.solve(prog, "weighted-pegasos", step_tol=1e-2, tol=1e-12, random_state=0)
    assert sol.status is cm.Status.OPTIMAL_INACCURATE and "step_tol" in sol.message
    # the spelling of the last release: same run, with a FutureWarning naming step_tol
    with pytest.warns(FutureWarning, match="renamed 'step_tol'"):
        old = cm.solve(prog, "weighted-pegasos", eps=1e-2, tol=1e-12, random_state=0)
    np.testing.assert_array_equal(old.values["w"], sol.values["w"])
    with pytest.raises(TypeError, match="give only 'step_tol'"):
        cm.solve(prog, "weighted-pegasos", eps=1e-2, step_tol=1e-2)
    a = cm.solve(prog, "weighted-pegasos", max_iter=3000, random_state=4)
    b = cm.solve(prog, "weighted-pegasos", max_iter=3000, random_state=4)
    np.testing.assert_array_equal(a.values["w"], b.values["w"])


# ---- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("opts,message", [
    ({"batch_size": 0}, "batch_size"),
    ({"batch_size": 121}, "batch_size"),
    ({"bias": "none"}, "bias"),
    ({"tau": -1.0}, "tau"),
    ({"step_tol": -1.0}, "step_tol"),
    ({"tol": 0.0}, "tol"),
    ({"max_iter": 0}, "max_iter"),
    ({"average": "yes"}, "average"),
    ({"x0": np.zeros(3)}, "x0"),
    ({"step_offset": -1}, "step_offset"),
    ({"step_offset": 2.5}, "step_offset"),
    ({"step_offset": "big"}, "step_offset"),
])
@pytest.mark.parametrize("name", PEGASOS)
def test_bad_options_raise_option_error(name, opts, message, twonorm):
    X, y = twonorm
    prog = svm.soft_margin(X, y, form="primal")
    with pytest.raises(OptionError, match=message):
        cm.solve(prog, name, **opts)


@pytest.mark.parametrize("name", PEGASOS)
def test_unsuitable_programs_raise_solver_error(name, twonorm):
    X, y = twonorm
    with pytest.raises(SolverError, match="accepts qp.svm.primal"):
        cm.solve(svm.soft_margin(X, y, form="dual"), name)
    with pytest.raises(SolverError, match="accepts qp.svm.primal"):
        cm.solve(svm.hard_margin(X, y), name)


# ---- engines, sampling, the certificate's dual bound (issue 9, speed) -----------------------

def test_numpy_and_numba_engines_take_the_same_steps(twonorm):
    pytest.importorskip("numba")
    X, y = twonorm
    prog = svm.soft_margin(X, y, C=1.0, form="primal", class_weight={1: 2.0, -1: 1.0})
    for name in PEGASOS:
        for opts in ({"batch_size": 1, "step_tol": 1e-3}, {"batch_size": 16}):
            runs = [cm.solve(prog, name, engine=e, max_iter=5000, tol=1e-12, random_state=2,
                             bias="sgd", **opts) for e in ("numpy", "numba")]
            assert runs[0].iterations == runs[1].iterations
            np.testing.assert_allclose(runs[0].values["w"], runs[1].values["w"], rtol=1e-9,
                                       atol=1e-9)
            assert runs[1].extras["engine"] == "numba"
        # bias="exact" puts a sample exactly on the margin (b is one of its breakpoints), so
        # a rounding difference of the two dot products can flip that sample's margin test:
        # the runs then agree to their certificates, not to the last bit
        runs = [cm.solve(prog, name, engine=e, max_iter=20_000, random_state=2, bias="exact")
                for e in ("numpy", "numba")]
        p0, p1 = runs[0].objective, runs[1].objective
        assert abs(p0 - p1) <= max(r.objective - r.extras["dual_objective"] for r in runs) + 1e-12


def test_engine_numba_without_numba_is_a_clear_error(twonorm, monkeypatch):
    from conicml._utils import engines as _options

    # numba unimportable, as the one engine resolver would find it
    monkeypatch.setattr(_options, "_NUMBA_IMPORT_ERROR", ["ImportError: simulated"])
    monkeypatch.delenv(_options.ENGINE_ENV, raising=False)
    X, y = twonorm
    prog = svm.soft_margin(X, y, form="primal")
    with pytest.raises(OptionError, match="numba"):
        cm.solve(prog, "pegasos", engine="numba")
    sol = cm.solve(prog, "pegasos", engine="auto", random_state=0)  # falls back to NumPy
    assert sol.extras["engine"] == "numpy" and sol.ok


def test_exact_bias_equal_costs_selection_matches_the_sorted_search():
    # the O(N) selection path (equal costs) against the general sorted path (costs perturbed
    # by 1e-13, which moves the minimiser by nothing measurable)
    rng = np.random.default_rng(8)
    for n_pos in (1, 7, 20, 39, 40):
        f = rng.normal(size=40)
        y = np.where(np.arange(40) < n_pos, 1.0, -1.0)
        c = np.full(40, 0.7)
        c_pert = c * (1 + 1e-13 * rng.random(40))

        def loss(b):
            return float(c @ np.maximum(0.0, 1 - y * (f + b)))

        b_fast, b_sort = exact_bias(f, y, c), exact_bias(f, y, c_pert)
        assert loss(b_fast) == pytest.approx(loss(b_sort), rel=1e-12, abs=1e-12)
        assert loss(b_fast) <= min(loss(b_fast - 1e-6), loss(b_fast + 1e-6)) + 1e-12


def test_pegasos_draws_samples_with_probability_proportional_to_cost():
    from conicml.solvers.pegasos import _Sampler

    c = np.array([1.0] * 6 + [3.0] * 4)  # groups: 6 x 1 and 4 x 3 -> p = 1/18 and 3/18
    draws = _Sampler(np.random.default_rng(0), 10, 4, c).take(50_000).ravel()
    freq = np.bincount(draws, minlength=10) / draws.size
    expected = c / c.sum()
    # 200 000 draws: the standard error of each frequency is below 1e-3
    np.testing.assert_allclose(freq, expected, atol=5e-3)


def test_certificate_dual_bound_is_tight():
    # the dual point the certificate builds (proximal Newton steps from the sub-gradient's
    # alpha) reaches the optimum: D within 1e-6 of an independent interior-point P*
    X, y = cm.datasets.twonorm(400, dim=4, random_state=11)
    prog = svm.soft_margin(X, y, C=0.5, form="primal")
    p_star = _reference(prog).objective
    sol = cm.solve(prog, "pegasos", max_iter=3000, tol=1e-12, random_state=0)
    D = sol.extras["dual_objective"]
    assert D <= p_star * (1 + 1e-9)
    assert D == pytest.approx(p_star, rel=1e-6)


def test_certificate_dual_bound_on_badly_scaled_features():
    # features on scales 1e-2 .. 1e3 (as unscaled real data): the Newton steps of the
    # certificate still reach the dual optimum from the optimal primal point (an exact line
    # search over the breakpoints, no fixed step range)
    from conicml.solvers.pegasos import implied_dual

    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 6)) * np.array([1e-2, 1e-1, 1.0, 10.0, 1e2, 1e3])
    y = np.where(X[:, 2] + X[:, 3] / 10 + 0.5 * rng.normal(size=150) > 0, 1.0, -1.0)
    prog = svm.soft_margin(X, y, C=50.0, form="primal", class_weight="balanced")
    ref = _reference(prog)
    w, b = np.asarray(ref.values["w"]), float(ref.values["b"])
    margin = y * (X @ w + b)
    alpha, D, _ = implied_dual(X, y, prog.data["c"], w, margin)
    assert D <= ref.objective * (1 + 1e-8)
    assert D == pytest.approx(ref.objective, rel=1e-6)
    assert abs(float(y @ alpha)) <= 1e-9 * prog.data["c"].sum()


def test_step_offset_auto_and_given(twonorm):
    X, y = twonorm
    prog = svm.soft_margin(X, y, C=0.5, form="primal")
    sol = cm.solve(prog, "pegasos", tol=1e-2, batch_size=16, random_state=0)
    # "auto": t0 = floor(mean ||x||^2 / (lambda k)) with lambda = 1 / sum c (Notes)
    lam = 1.0 / (0.5 * y.size)
    expected = math.floor(float(np.mean(np.einsum("ij,ij->i", X, X))) / (lam * 16))
    assert sol.extras["step_offset"] == expected
    assert cm.solve(prog, "weighted-pegasos", tol=1e-2,
                    random_state=0).extras["step_offset"] == 0  # the thesis's Alg. 5
    given = cm.solve(prog, "pegasos", tol=1e-2, step_offset=7, random_state=0)
    assert given.extras["step_offset"] == 7
    # whatever the offset, the point is certified against the program's own data
    for s in (sol, given):
        assert s.residuals.source == "recomputed" and s.residuals.gap <= 1e-2
