"""MPM / BMPM / MEMPM formulations: thesis numbers, closed forms, input checks (seed 004).

Sources of the expected numbers are given next to each: "[T]" the thesis (Huang 2004),
"[N]" the seed-004 note's derived values (§5.4), "[C]" a closed form re-derived here.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from solver_report import own

import conicml as cm
from conicml.formulations import minimax as mm

from tolerances import obj_rtol, sol_atol

# Fig 3.4 synthetic, population moments (note §5.4 T1)
FIG34 = cm.ClassMoments(np.array([3.0, 0.0]), np.diag([4.0, 1.0]),
                        np.array([-1.0, 0.0]), np.diag([1.0, 5.0]))

# toy T2 of the note (6 + 6 points, plug-in 1/N moments)
T2_X = np.array([(1, 0), (3, 0.5), (5, -0.5), (2, 1), (4, -1), (6, 0),
                 (-1, 0), (-1.3, 0.4), (-1.2, -0.4), (-1.6, 0.1), (-1.4, -0.2), (-1.1, 0.3)],
                dtype=float)
T2_Y = np.r_[np.ones(6), -np.ones(6)]

CONIC = ["clarabel", "ecos", "scs"]


def threshold(model: dict) -> float:
    """z1 where the hyperplane crosses z2 = 0 (package convention w.z + b = 0)."""
    return -model["b"] / model["w"][0]


def g(k: float) -> float:
    return k * k / (1 + k * k)


# ---------------------------------------------------------------------------- MPM
@pytest.mark.parametrize("solver", cm.solvers.available("socp.mpm"))
def test_fig34_mpm_threshold(solver):
    prog = mm.mpm(FIG34)
    sol = cm.solve(prog, solver)
    assert sol.status is cm.Status.OPTIMAL
    model = prog.decode(sol)
    tol = 1e-3 if solver == "scs" else 1e-7
    # [T] Fig 3.4: MPM hyperplane z1 = 0.333; [N] kappa* = 4/3, alpha = 16/25
    assert threshold(model) == pytest.approx(1 / 3, abs=tol)
    assert model["kappa"] == pytest.approx(4 / 3, rel=tol)
    assert model["alpha"] == pytest.approx(0.64, rel=tol)
    assert model["beta"] == model["alpha"]
    assert sol.objective == pytest.approx(3 / 4, rel=obj_rtol(solver))  # objective 1/kappa
    assert model["b_mismatch"] < 1e-6


def test_t2_mpm_numbers():
    prog = mm.mpm(T2_X, T2_Y)
    model = prog.decode(cm.solve(prog, "dinkelbach"))
    # [N] T2: kappa* = 2.5969469, alpha = 0.8708700, w = (0.210567, 0.111031), t = -0.128534
    assert model["kappa"] == pytest.approx(2.5969469, abs=1e-7)
    assert model["alpha"] == pytest.approx(0.8708700, abs=1e-7)
    np.testing.assert_allclose(model["w"], [0.210567, 0.111031], atol=2e-6)
    assert model["b"] == pytest.approx(0.128534, abs=2e-5)  # package b = -t


def test_mpm_equal_covariance_closed_form():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 5))
    S = A @ A.T + np.eye(5)
    mx, my = rng.standard_normal(5), rng.standard_normal(5)
    prog = mm.mpm(cm.ClassMoments(mx, S, my, S))
    model = prog.decode(cm.solve(prog, "clarabel"))
    d = mx - my
    # [C] note T4: kappa = 1/2 sqrt(d' S^-1 d), w ∝ S^-1 d (Fisher)
    assert model["kappa"] == pytest.approx(0.5 * math.sqrt(d @ np.linalg.solve(S, d)), rel=1e-7)
    w = np.linalg.solve(S, d)
    np.testing.assert_allclose(model["w"], w / (w @ d), atol=1e-5)


def test_mpm_proportional_covariance_closed_form():
    S = np.array([[2.0, 0.3], [0.3, 1.0]])
    d = np.array([1.0, -2.0])
    prog = mm.mpm(cm.ClassMoments(d, 4 * S, np.zeros(2), 0.25 * S))
    kappa = prog.decode(cm.solve(prog, "ecos"))["kappa"]
    # [C] note §2.1: Sigma_x = cx S, Sigma_y = cy S -> sqrt(d'S^-1 d)/(sqrt(cx)+sqrt(cy))
    assert kappa == pytest.approx(math.sqrt(d @ np.linalg.solve(S, d)) / 2.5, rel=1e-7)


def test_twonorm_population():
    a = 2 / math.sqrt(20)
    mom = cm.ClassMoments(a * np.ones(20), np.eye(20), -a * np.ones(20), np.eye(20))
    model = mm.mpm(mom).decode(cm.solve(mm.mpm(mom), "clarabel"))
    # [N] twonorm population: kappa = 2, alpha = 0.8 (Table 3.1's 80.1 %)
    assert model["kappa"] == pytest.approx(2.0, rel=1e-8)
    assert model["alpha"] == pytest.approx(0.8, rel=1e-8)


def test_mpm_program_is_dpp_and_pickles():
    prog = mm.mpm(T2_X, T2_Y)
    assert prog.kind == "socp.mpm"
    assert prog.problem.is_dpp()
    clone = pickle.loads(pickle.dumps(prog))
    assert cm.solve(clone, "clarabel").objective == pytest.approx(
        cm.solve(prog, "clarabel").objective, rel=1e-9)


def test_mpm_from_data_uses_biased_moments():
    mom = cm.ClassMoments.from_data(T2_X, T2_Y)
    # [N] T2 moments: Sigma_x[0,0] = 2.916667 (1/N), not 3.5 (1/(N-1))
    assert mom.cov_pos[0, 0] == pytest.approx(2.916667, abs=1e-6)
    a = mm.mpm(mom).decode(cm.solve(mm.mpm(mom), "clarabel"))["kappa"]
    b = mm.mpm(T2_X, T2_Y).decode(cm.solve(mm.mpm(T2_X, T2_Y), "clarabel"))["kappa"]
    assert a == pytest.approx(b, rel=1e-9)


# ---------------------------------------------------------------------------- robust MPM
def test_robust_mpm_unequal_nu_matches_ratio_form():
    prog = mm.mpm(FIG34, nu_x=0.1, nu_y=0.5, ridge=(0.2, 0.3))
    model = prog.decode(cm.solve(prog, "clarabel"))
    # [C] optimal w is ∝ (1, 0) by symmetry: w = (1/4, 0) and
    # kappa = (1 - nu_x sx - nu_y sy)/(sx + sy) with sx = sqrt(4.2)/4, sy = sqrt(1.3)/4
    sx, sy = math.sqrt(4.2) / 4, math.sqrt(1.3) / 4
    assert model["kappa"] == pytest.approx((1 - 0.1 * sx - 0.5 * sy) / (sx + sy), rel=1e-7)
    # both intercept formulas (with kappa + nu) agree at the optimum
    assert model["b_mismatch"] < 1e-7


def test_robust_mpm_reduces_to_plain_when_radii_zero():
    a = cm.solve(mm.mpm(FIG34, nu_x=0, ridge=0), "clarabel").objective
    assert a == pytest.approx(0.75, rel=1e-7)


# ---------------------------------------------------------------------------- BMPM
# [N] note §5.4 T1 table: kappa(alpha*) = 2 - kappa(beta0)/2, threshold z1 = kappa(beta0) - 1
BMPM_TABLE = [  # beta0, kappa(alpha), alpha, threshold
    (0.0, 2.0, 0.8, -1.0),
    (0.25, 1.711325, 0.745459, -0.422650),
    (0.5, 1.5, 9 / 13, 0.0),
    (0.64, 4 / 3, 0.64, 1 / 3),
    (0.8, 1.0, 0.5, 1.0),
    (0.9, 0.5, 0.2, 2.0),
]


@pytest.mark.parametrize("solver", cm.solvers.available("socp.bmpm"))
@pytest.mark.parametrize("beta0, kappa_alpha, alpha, z1", BMPM_TABLE)
def test_fig34_bmpm_table(solver, beta0, kappa_alpha, alpha, z1):
    prog = mm.bmpm(FIG34, beta0)
    sol = cm.solve(prog, solver)
    assert sol.ok
    model = prog.decode(sol)
    tol = 2e-3 if solver == "scs" else 1e-6
    assert model["kappa_alpha"] == pytest.approx(kappa_alpha, abs=tol)
    assert model["alpha"] == pytest.approx(alpha, abs=tol)
    assert model["beta"] == beta0
    assert threshold(model) == pytest.approx(z1, abs=tol)


def test_bmpm_beta0_max_closed_form():
    # [N] beta0m = g(sqrt(d' Sy^-1 d)) = g(4) = 16/17 on Fig 3.4; 0.998292 on T2
    assert mm.bmpm(FIG34, 0.5).data["beta0_max"] == pytest.approx(16 / 17, rel=1e-12)
    assert mm.bmpm(T2_X, T2_Y, 0.5).data["beta0_max"] == pytest.approx(0.998292, abs=1e-6)


@pytest.mark.parametrize("solver", cm.solvers.available("socp.bmpm"))
def test_bmpm_infeasible_beta0_is_a_status_not_an_exception(solver):
    prog = mm.bmpm(FIG34, 0.95)  # > beta0m = 16/17
    sol = cm.solve(prog, solver)
    assert sol.status in (cm.Status.INFEASIBLE, cm.Status.INFEASIBLE_INACCURATE)
    model = prog.decode(sol)
    assert model["feasible"] is False
    assert model["alpha"] == 0.0
    assert "beta0_max = 0.941176" in model["message"]


def test_bmpm_beta0_zero_closed_form():
    prog = mm.bmpm(T2_X, T2_Y, 0.0)
    model = prog.decode(cm.solve(prog, "clarabel"))
    mom = cm.ClassMoments.from_data(T2_X, T2_Y)
    d = mom.mean_pos - mom.mean_neg
    # [C]/[N] beta0 = 0: kappa = sqrt(d' Sx^-1 d) = 3.105870, alpha = 0.906072, w ∝ Sx^-1 d
    assert model["kappa_alpha"] == pytest.approx(math.sqrt(d @ np.linalg.solve(mom.cov_pos, d)),
                                                 rel=1e-7)
    assert model["kappa_alpha"] == pytest.approx(3.105870, abs=1e-6)
    assert model["alpha"] == pytest.approx(0.906072, abs=1e-6)
    w = np.linalg.solve(mom.cov_pos, d)
    np.testing.assert_allclose(model["w"], w / (w @ d), atol=1e-5)


def test_min_norm_closed_form_via_bmpm():
    # [C] note T4: min ||A w|| s.t. w'd = 1 has value 1/sqrt(d'(A'A)^-1 d); this is the
    # BMPM objective (1/kappa) at beta0 = 0 with Sigma_x = A'A
    rng = np.random.default_rng(7)
    A = rng.standard_normal((4, 4))
    d = rng.standard_normal(4)
    prog = mm.bmpm(cm.ClassMoments(d, A.T @ A, np.zeros(4), np.eye(4)), 0.0)
    for solver in ("clarabel", "dinkelbach"):
        assert cm.solve(prog, solver).objective == pytest.approx(
            1 / math.sqrt(d @ np.linalg.solve(A.T @ A, d)), rel=1e-7)


def test_t2_bmpm_values():
    # [N] T2: kappa_alpha(0.5) = 2.879982, (0.8) = 2.693767 (alpha 0.878882), (0.9) = 2.535844
    for beta0, ka in ((0.5, 2.879982), (0.8, 2.693767), (0.9, 2.535844)):
        prog = mm.bmpm(T2_X, T2_Y, beta0)
        assert prog.decode(cm.solve(prog, "ecos"))["kappa_alpha"] == pytest.approx(ka, abs=2e-6)


def test_bmpm_at_mpm_alpha_gives_mpm():
    # [N] T4: BMPM with beta0 = alpha_MPM gives alpha = alpha_MPM and the MPM hyperplane
    mpm_model = mm.mpm(T2_X, T2_Y).decode(cm.solve(mm.mpm(T2_X, T2_Y), "dinkelbach"))
    prog = mm.bmpm(T2_X, T2_Y, mpm_model["alpha"])
    model = prog.decode(cm.solve(prog, "dinkelbach"))
    assert model["alpha"] == pytest.approx(mpm_model["alpha"], abs=1e-8)
    np.testing.assert_allclose(model["w"], mpm_model["w"], atol=1e-6)
    assert model["b"] == pytest.approx(mpm_model["b"], abs=1e-6)


def test_bmpm_alpha_strictly_decreasing_in_beta0():
    # [T] Lemma 10; [N] T2 curve alpha = f1(beta)
    betas = [0, 0.1248, 0.2496, 0.3744, 0.4991, 0.6239, 0.7487, 0.8735]
    expected = [.906072, .900924, .898198, .895503, .892430, .888485, .882562, .870454]
    alphas = []
    for beta in betas:
        prog = mm.bmpm(T2_X, T2_Y, beta)
        alphas.append(prog.decode(cm.solve(prog, "dinkelbach"))["alpha"])
    assert np.all(np.diff(alphas) < 0)
    np.testing.assert_allclose(alphas, expected, atol=2e-6)


def test_bmpm_dual_certificate_p_equals_one():
    # [N] A3: P(kappa_alpha*) = 1 at the BMPM optimum
    prog = mm.bmpm(T2_X, T2_Y, 0.8)
    sol = cm.solve(prog, "dinkelbach")
    assert sol.extras["P"] == pytest.approx(1.0, abs=1e-10)
    assert own(sol).dual < 1e-10


def test_gaussian_bmpm():
    prog = mm.bmpm(FIG34, 0.9, bound="gaussian")
    model = prog.decode(cm.solve(prog, "clarabel"))
    # [C] kappa_alpha = 2 - Phi^-1(0.9)/2 (same geometry as the table), alpha = Phi(kappa)
    from scipy.stats import norm
    ka = 2 - norm.ppf(0.9) / 2
    assert model["kappa_alpha"] == pytest.approx(ka, rel=1e-7)
    assert model["alpha"] == pytest.approx(norm.cdf(ka), rel=1e-7)
    with pytest.raises(cm.ProgramError, match="Gaussian"):
        mm.bmpm(FIG34, 0.3, bound="gaussian")


# ---------------------------------------------------------------------------- MEMPM
def test_fig34_mempm_chebyshev():
    prog = mm.mempm(FIG34, theta=0.5)
    assert prog.kind == "sequential.mempm"
    sol = cm.solve(prog, "quadratic-interpolation")
    assert sol.status is cm.Status.OPTIMAL
    model = prog.decode(sol)
    # [N] T1: alpha = 0.562834, beta = 0.749702, objective 0.656268, z1 = 0.730676
    assert sol.objective == pytest.approx(0.656268, abs=1e-6)
    assert model["alpha"] == pytest.approx(0.562834, abs=1e-6)
    assert model["beta"] == pytest.approx(0.749702, abs=1e-6)
    assert threshold(model) == pytest.approx(0.730676, abs=1e-6)
    assert model["b_mismatch"] < 1e-7  # Lemma 4: both intercepts agree


def test_fig34_mempm_gaussian_threshold():
    prog = mm.mempm(FIG34, theta=0.5, bound="gaussian")
    sol = cm.solve(prog, "quadratic-interpolation")
    model = prog.decode(sol)
    # [T] Fig 3.4: MEMPM hyperplane z1 = 0.660; [N] 0.659910, alpha 0.879009,
    # beta 0.951534, objective 0.915271
    assert threshold(model) == pytest.approx(0.659910, abs=1e-6)
    assert threshold(model) == pytest.approx(0.660, abs=5e-4)
    assert model["alpha"] == pytest.approx(0.879009, abs=1e-6)
    assert model["beta"] == pytest.approx(0.951534, abs=1e-6)
    assert sol.objective == pytest.approx(0.915271, abs=1e-6)


def test_t2_mempm_beats_mpm():
    prog = mm.mempm(T2_X, T2_Y, theta=0.5)
    model = prog.decode(cm.solve(prog))
    # [N] T2 MEMPM: beta 0.960245, alpha 0.837812, objective 0.899028 > MPM 0.870870
    assert model["objective"] == pytest.approx(0.899028, abs=1e-6)
    assert model["beta"] == pytest.approx(0.960245, abs=1e-5)
    np.testing.assert_allclose(model["w"], [0.210200, 0.058604], atol=2e-6)
    assert model["b"] == pytest.approx(0.044979, abs=2e-6)
    assert model["objective"] > 0.870870


def test_mempm_prior_theta_and_costs():
    prog = mm.mempm(T2_X[:9], T2_Y[:9])
    assert prog.data["theta"] == pytest.approx(6 / 9)
    # corrected Kx = C_FN Nx, Ky = C_FP Ny (note §6 item 9)
    prog = mm.mempm(T2_X[:9], T2_Y[:9], costs=(2.0, 1.0))
    assert prog.data["theta"] == pytest.approx(12 / 15)
    model = prog.decode(cm.solve(prog))
    assert model["cost_objective"] == pytest.approx(12 * model["alpha"] + 3 * model["beta"])
    with pytest.raises(cm.ProgramError, match="theta"):
        mm.mempm(FIG34)
    with pytest.raises(cm.ProgramError, match="not both"):
        mm.mempm(T2_X, T2_Y, theta=0.5, costs=(1, 1))


def test_mempm_optimum_at_domain_end():
    # alpha ~ 0 everywhere if theta is tiny: F increases in beta up to beta0m (note §6 item 17)
    prog = mm.mempm(FIG34, theta=0.01)
    sol = cm.solve(prog, "quadratic-interpolation")
    model = prog.decode(sol)
    assert sol.extras["at_domain_end"]
    assert model["beta"] == pytest.approx(16 / 17, rel=1e-12)
    assert model["alpha"] == pytest.approx(0.0, abs=1e-12)
    assert threshold(model) == pytest.approx(3.0, abs=1e-9)  # tangent at the x mean


# ---------------------------------------------------------------------------- kernels
def test_kernel_linear_gram_reproduces_linear_bmpm():
    # [N] T2 kernel consistency: a linear kernel reproduces the linear kappa_alpha
    K = T2_X @ T2_X.T
    prog = mm.bmpm(K, T2_Y, 0.8, kernel="precomputed", ridge=1e-10)
    for solver in ("clarabel", "dinkelbach"):
        model = prog.decode(cm.solve(prog, solver))
        assert model["kappa_alpha"] == pytest.approx(2.693767, abs=2e-6)
        f = mm.decision_values(prog.data, model, K)
        lin = mm.bmpm(T2_X, T2_Y, 0.8)
        lin_model = lin.decode(cm.solve(lin, "dinkelbach"))
        np.testing.assert_allclose(f, T2_X @ lin_model["w"] + lin_model["b"], atol=1e-4)


def test_rbf_kernel_needs_regulariser():
    with pytest.raises(cm.ProgramError, match="ridge > 0"):
        mm.mpm(T2_X, T2_Y, kernel="rbf")
    with pytest.raises(cm.ProgramError, match="needs the training data"):
        mm.mpm(FIG34, kernel="rbf", ridge=1e-3)


@pytest.mark.parametrize("solver", ["clarabel", "ecos", "dinkelbach", "rosen"])
def test_rbf_kernel_mpm_solvers_agree(solver):
    X, y = cm.datasets.twonorm(n=60, dim=4, random_state=2)
    prog = mm.mpm(X, y, kernel="rbf", gamma=0.05, ridge=0.01)
    ref = cm.solve(prog, "clarabel")
    sol = cm.solve(prog, solver)
    assert sol.objective == pytest.approx(ref.objective, rel=max(obj_rtol(solver), 1e-6))
    model = prog.decode(sol)
    f = mm.decision_values(prog.data, model, X)
    assert np.mean(np.sign(f) == y) > 0.9
    assert sol_atol(solver) > 0


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, match", [
    ({"nu_x": -1}, "nu_x"),
    ({"ridge": float("nan")}, "ridge"),
    ({"ridge": (0.1, -1.0)}, r"ridge\[1\]"),
    ({"ridge": (0.1, 0.2, 0.3)}, "pair"),
    ({"bound": "hoeffding"}, "bound"),
    ({"kernel": "sigmoid"}, "unknown kernel"),
])
def test_bad_hyperparameters(kwargs, match):
    with pytest.raises(cm.ProgramError, match=match):
        mm.mpm(T2_X, T2_Y, **kwargs)


def test_bad_data():
    with pytest.raises(cm.ProgramError, match="single class"):
        mm.mpm(T2_X, np.ones(12))
    with pytest.raises(cm.ProgramError, match="labels"):
        mm.mpm(T2_X, np.r_[np.zeros(6), np.ones(6)])
    with pytest.raises(cm.ProgramError, match="shape mismatch"):
        mm.mpm(T2_X, T2_Y[:5])
    bad = T2_X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(cm.ProgramError, match="NaN"):
        mm.mpm(bad, T2_Y)
    with pytest.raises(cm.ProgramError, match="means coincide"):
        mm.mpm(cm.ClassMoments(np.zeros(2), np.eye(2), np.zeros(2), np.eye(2)))
    for beta0 in (-0.1, 1.0, "x"):
        with pytest.raises(cm.ProgramError, match="beta0"):
            mm.bmpm(FIG34, beta0)
    with pytest.raises(cm.ProgramError, match="theta"):
        mm.mempm(FIG34, theta=1.5)


def test_kernel_mempm_inner_solvers_agree():
    X, y = cm.datasets.twonorm(n=50, dim=3, random_state=8)
    prog = mm.mempm(X, y, theta=0.5, kernel="rbf", gamma=0.3, ridge=0.05)
    a = cm.solve(prog, "quadratic-interpolation", inner="clarabel")
    b = cm.solve(prog, "quadratic-interpolation", inner="dinkelbach")
    assert a.ok and b.ok
    assert a.objective == pytest.approx(b.objective, abs=1e-6)  # independent inner solvers
    model = prog.decode(b)
    assert "dual_coef" in model and model["b_mismatch"] < 1e-6
    f = mm.decision_values(prog.data, model, X)
    assert np.mean(np.sign(f) == y) > 0.9


def test_robust_mempm_is_more_cautious():
    plain = cm.solve(mm.mempm(FIG34, theta=0.5), "quadratic-interpolation")
    zero = cm.solve(mm.mempm(FIG34, theta=0.5, nu_x=0.0, ridge=0.0), "quadratic-interpolation")
    robust_prog = mm.mempm(FIG34, theta=0.5, nu_x=0.1, nu_y=0.5, ridge=(0.2, 0.3))
    robust = cm.solve(robust_prog, "quadratic-interpolation")
    assert zero.objective == pytest.approx(plain.objective, abs=1e-12)
    # larger uncertainty sets can only lower the worst-case objective (eq. 3.40)
    assert robust.objective < plain.objective
    model = robust_prog.decode(robust)
    assert model["b_mismatch"] < 1e-7  # both robust intercept formulas agree


def test_deprecated_rho_x_rho_y_spelling_maps_to_ridge():
    # issue 12: the covariance ridge has one name; the old keywords warn for one release
    # and give the same program (objectives from Clarabel on both).
    new = cm.solve(mm.mpm(FIG34, ridge=(0.2, 0.3)), "clarabel").objective
    with pytest.warns(FutureWarning, match="renamed 'ridge'"):
        old = cm.solve(mm.mpm(FIG34, rho_x=0.2, rho_y=0.3), "clarabel").objective
    assert old == pytest.approx(new, rel=1e-9)
    with pytest.raises(TypeError, match="only 'ridge'"):
        mm.bmpm(FIG34, 0.5, rho_x=0.1, ridge=0.1)


# ------------------------------------------------------------------ one way in: X, y
def test_programs_take_X_y_or_class_moments_alike():
    # the same program from X, y, from its ClassMoments and (deprecated) from the tuple
    from conicml.moments import ClassMoments

    X, y = cm.datasets.twonorm(60, dim=3, random_state=2)
    moments = ClassMoments.from_data(X, y)
    ref = mm.bmpm(X, y, 0.6)
    for prog in (mm.bmpm(moments, 0.6), mm.bmpm(moments, beta0=0.6)):
        np.testing.assert_array_equal(prog.data["d"], ref.data["d"])
    with pytest.warns(FutureWarning, match=r"bmpm\(X, y, \.\.\.\)"):
        old = mm.bmpm((X, y), 0.6)
    np.testing.assert_array_equal(old.data["d"], ref.data["d"])
    with pytest.raises(cm.ProgramError, match="needs the labels y"):
        mm.mpm(X)
    with pytest.raises(cm.ProgramError, match="class moments alone"):
        mm.mpm(moments, y)


def test_kernel_program_with_a_precomputed_gram_matrix_is_the_rbf_program():
    # the kernel program reorders the points (positive class first) internally; a
    # precomputed Gram matrix must be permuted on both sides like the kernel's own. The
    # reference is the same program built from X with the RBF kernel (same K).
    X, y = cm.datasets.twonorm(70, dim=4, random_state=5)
    K = cm.make_kernel("rbf", X, gamma=0.3).gram(X)
    prog_rbf = mm.mpm(X, y, ridge=1e-2, kernel="rbf", gamma=0.3)
    prog_pre = mm.mpm(K, y, ridge=1e-2, kernel="precomputed")
    m_rbf = prog_rbf.decode(cm.solve(prog_rbf, "ils-newton"))
    m_pre = prog_pre.decode(cm.solve(prog_pre, "ils-newton"))
    assert m_pre["kappa_alpha"] == pytest.approx(m_rbf["kappa_alpha"], rel=1e-9)
    np.testing.assert_allclose(m_pre["dual_coef"], m_rbf["dual_coef"], rtol=1e-6,
                               atol=1e-8 * float(np.abs(m_rbf["dual_coef"]).max()))
    # and the dual coefficients are in the caller's sample order: K w + b separates
    f = K @ m_pre["dual_coef"] + m_pre["b"]
    assert np.mean(np.sign(f) == y) > 0.9
