"""M4 formulation: thesis/note numbers, the special cases of Sec. 4.1.2, kernels, reduction.

Sources of expected numbers: "[N]" the seed-004 note's derived values (§5.4 T2/T3,
checked there with cvxpy), "[C]" a closed form, "[I]" an independent solver (a generic
backend on a different program: the SVM QP, the QP (4.9), MPM).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import conicml as cm
from conicml.exceptions import ProgramError
from conicml.formulations import m4
from conicml.formulations import svm as svmf

# toy T2 of the note (anisotropic 6 + 6 points)
T2_X = np.array([(1, 0), (3, 0.5), (5, -0.5), (2, 1), (4, -1), (6, 0),
                 (-1, 0), (-1.3, 0.4), (-1.2, -0.4), (-1.6, 0.1), (-1.4, -0.2), (-1.1, 0.3)],
                dtype=float)
T2_Y = np.r_[np.ones(6), -np.ones(6)]
# toy T3 (near-isotropic 6 + 6 points)
T3_X = np.array([(2, 2), (3, 3), (2, 3.5), (3.5, 1), (4, 2.5), (1.5, 1.2),
                 (-1, -1), (0, -2), (-2, 0), (-1, 0.5), (0.5, -0.5), (-3, -1.5)], dtype=float)
T3_Y = T2_Y


def separable_gaussians(seed: int, n: int = 40, dim: int = 3):
    """Two anisotropic Gaussian classes far apart (linearly separable for these seeds)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(dim, dim))
    B = rng.normal(size=(dim, dim)) * 0.5
    Xp = rng.normal(size=(n, dim)) @ A + 6.0
    Xn = rng.normal(size=(n + 5, dim)) @ B - 2.0
    return np.vstack([Xp, Xn]), np.r_[np.ones(n), -np.ones(n + 5)]


def solve_model(prog, solver=None, **opts):
    sol = cm.solve(prog, solver, **opts)
    assert sol.status is cm.Status.OPTIMAL, sol.message
    return sol, prog.decode(sol)


# ---- thesis toy numbers -----------------------------------------------------------------

def test_t2_separable_numbers():
    # [N] note §5.4 T2: rho* = 1.0870085, w = (0.2102804, 0.0700935), b = 0.1603824,
    # support vectors x1, y1, y6; kappa_MPM = 2.5969469
    prog = m4.m4(T2_X, T2_Y)
    assert prog.kind == "quasiconvex.m4"
    sol, model = solve_model(prog, "bisection", tol=1e-9)
    assert sol.objective == pytest.approx(1.0870085, abs=2e-7)
    np.testing.assert_allclose(model["w"], [0.2102804, 0.0700935], atol=2e-7)
    assert model["b"] == pytest.approx(0.1603824, abs=2e-7)
    np.testing.assert_array_equal(model["support"], [0, 6, 11])
    assert sol.extras["kappa_mpm"] == pytest.approx(2.5969469, abs=1e-6)
    # the plane crosses z2 = 0 at z1 = -0.7627, nearer the compact class y
    assert -model["b"] / model["w"][0] == pytest.approx(-0.7627, abs=1e-4)
    # every training point is at least rho away, in its own class's metric
    assert np.min(model["margins"]) >= model["rho"] - 1e-7


def test_t3_separable_numbers():
    # [N] note §5.4 T3: rho = 1.0573352, w = (0.122324, 0.183486), b = -0.191420
    _, model = solve_model(m4.m4(T3_X, T3_Y), "dinkelbach-gfp")
    assert model["rho"] == pytest.approx(1.0573352, abs=1e-6)
    np.testing.assert_allclose(model["w"], [0.122324, 0.183486], atol=2e-6)
    assert model["b"] == pytest.approx(-0.191420, abs=2e-6)


# ---- special cases (Sec. 4.1.2) ---------------------------------------------------------

@pytest.mark.parametrize("X, y, margin", [(T2_X, T2_Y, 1.0), (T3_X, T3_Y, 0.9845928)])
def test_identity_covariances_is_hard_margin_svm(X, y, margin):
    # [I] hard-margin SVM (primal QP, clarabel); [N] margins 1.0 (T2) and 0.9845928 (T3)
    eye = np.eye(2)
    _, model = solve_model(m4.m4(X, y, covariances=(eye, eye)), "bisection", tol=1e-9)
    svm_prog = svmf.hard_margin(X, y)
    svm_model = svm_prog.decode(cm.solve(svm_prog, "clarabel"))
    w_svm, b_svm = svm_model["w"], svm_model["b"]
    assert model["rho"] == pytest.approx(1.0 / np.linalg.norm(w_svm), abs=1e-6)
    assert model["rho"] == pytest.approx(margin, abs=1e-6)
    scale = float(w_svm @ (X[y > 0].mean(0) - X[y < 0].mean(0)))
    np.testing.assert_allclose(model["w"], w_svm / scale, atol=1e-6)
    assert model["b"] == pytest.approx(b_svm / scale, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_equal_covariances_is_the_qp_4_9(seed):
    # [I] M4 with Sigma_x = Sigma_y = Sigma equals the QP (4.9) solved by clarabel and ecos
    X, y = separable_gaussians(seed)
    S = np.cov(X, rowvar=False, bias=True)
    _, model = solve_model(m4.m4(X, y, covariances=(S, S)), "bisection", tol=1e-9)
    qp = m4.m4_shared_covariance(X, y, S)
    for backend in ("clarabel", "ecos"):
        ref = qp.decode(cm.solve(qp, backend))
        assert model["rho"] == pytest.approx(ref["rho"], rel=1e-6)
        np.testing.assert_allclose(model["w"], ref["w"], atol=1e-5 * np.abs(ref["w"]).max())
        assert model["b"] == pytest.approx(ref["b"], abs=1e-5 * max(1, abs(ref["b"])))


def test_pooled_covariance_number():
    # [N] note §5.4 T2: pooled Sigma = (Sigma_x + Sigma_y)/2 gives rho = 0.8643065
    Sx = np.cov(T2_X[:6], rowvar=False, bias=True)
    Sy = np.cov(T2_X[6:], rowvar=False, bias=True)
    S = 0.5 * (Sx + Sy)
    qp = m4.m4_shared_covariance(T2_X, T2_Y, S)
    assert qp.decode(cm.solve(qp, "clarabel"))["rho"] == pytest.approx(0.8643065, abs=1e-6)
    _, model = solve_model(m4.m4(T2_X, T2_Y, covariances=(S, S)), "bisection", tol=1e-9)
    assert model["rho"] == pytest.approx(0.8643065, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_m4_margin_below_mpm_kappa(seed):
    # [I] rho*_M4 <= kappa*_MPM (averaging (4.2)-(4.3) gives (4.8)); MPM by clarabel
    mm = pytest.importorskip("conicml.formulations.minimax")
    X, y = separable_gaussians(seed)
    _, model = solve_model(m4.m4(X, y), "bisection")
    mpm = mm.mpm(X, y)
    kappa = mpm.decode(cm.solve(mpm, "clarabel"))["kappa"]
    assert 0 < model["rho"] <= kappa * (1 + 1e-7)


@pytest.mark.parametrize("C", [None, 1.0])
def test_reduction_one_is_mpm(C):
    # [I] threshold nu = 1 removes every point: M4 is MPM (Sec. 4.3 remark); MPM by clarabel
    mm = pytest.importorskip("conicml.formulations.minimax")
    prog = m4.m4(T2_X, T2_Y, C, reduction=1.0)
    assert prog.data["n_removed"] == 12
    _, model = solve_model(prog)
    mpm = mm.mpm(T2_X, T2_Y)
    ref = mpm.decode(cm.solve(mpm, "clarabel"))
    assert model["rho"] == pytest.approx(ref["kappa"], rel=1e-6)  # [N] 2.5969469
    assert model["rho"] == pytest.approx(2.5969469, abs=1e-6)
    # the MPM direction is flat near the optimum (sum of norms): 1e-4
    np.testing.assert_allclose(model["w"], ref["w"], atol=1e-4)
    assert model["b"] == pytest.approx(ref["b"], abs=1e-4)


def test_reduction_scores_t2():
    # [N] note §5.4 T2 reduction values nu_i
    prog = m4.m4(T2_X, T2_Y, reduction=0.0)
    expected = [.7296, .3767, .4871, .7092, .7231, .7296,
                .6487, .6445, .7231, .7452, .5383, .6210]
    np.testing.assert_allclose(prog.data["scores"], expected, atol=1e-4)
    assert prog.data["kept"].all()


def test_reduction_keeps_global_constraint_and_bounds():
    # [C] a reduced separable M4 drops constraints, so rho can only grow; it stays below
    # kappa_MPM because the global constraint (4.36) is kept
    full = solve_model(m4.m4(T2_X, T2_Y), "bisection")[1]["rho"]
    prog = m4.m4(T2_X, T2_Y, reduction=0.7)
    assert 0 < prog.data["n_removed"] < 12
    sol, model = solve_model(prog, "bisection")
    assert full - 1e-7 <= model["rho"] <= sol.extras["kappa_mpm"] + 1e-7


# ---- soft margin -------------------------------------------------------------------------

def test_soft_margin_large_C_is_separable():
    # [N] with a large C no slack is worth paying on separable data: rho = 1.0870085
    prog = m4.m4(T2_X, T2_Y, C=100.0)
    assert prog.kind == "sequential.m4"
    sol, model = solve_model(prog, "quadratic-interpolation")
    assert model["rho"] == pytest.approx(1.0870085, abs=1e-6)
    assert model["slack"] == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_allclose(model["w"], [0.2102804, 0.0700935], atol=1e-5)


def test_soft_margin_maximises_G_on_a_grid():
    # [I] G(rho) = rho - C h(rho) on a grid, each h by ecos on the slack SOCP: the line
    # search (clarabel inner) must reach at least the best grid value
    X, y = cm.datasets.twonorm(80, dim=4, random_state=3)
    prog = m4.m4(X, y, C=0.05)
    sol, model = solve_model(prog, "quadratic-interpolation")
    kappa = sol.extras["kappa_mpm"]
    grid = []
    for rho in np.linspace(0, kappa, 15):
        form = m4.inner_problem(prog.data, rho=rho)
        form.problem.solve(solver="ECOS")
        grid.append(rho - 0.05 * form.problem.value)
    assert sol.objective >= max(grid) - 1e-6
    # the objective is the exact G at the returned point
    assert sol.objective == pytest.approx(model["rho"] - 0.05 * model["slack"], abs=1e-9)


# ---- kernels -----------------------------------------------------------------------------

def test_linear_precomputed_kernel_matches_linear():
    # [C] with K = X X^T the empirical kernel map is a rotation of X: same rho, same f
    X, y = separable_gaussians(4, n=20)
    lin = solve_model(m4.m4(X, y, ridge=1e-3), "bisection", tol=1e-9)[1]
    kprog = m4.m4(X @ X.T, y, kernel="precomputed", ridge=1e-3)
    kmod = solve_model(kprog, "bisection", tol=1e-9)[1]
    assert kmod["rho"] == pytest.approx(lin["rho"], rel=1e-6)
    f_lin = X @ lin["w"] + lin["b"]
    f_ker = m4.decision_values(kprog.data, kmod, X @ X.T)
    np.testing.assert_allclose(f_ker, f_lin, atol=1e-5 * np.abs(f_lin).max())


def test_kernel_m4_reproduces_t2():
    # [N] note §5.4 T2: kernel M4 with K = Z Z^T reproduces rho = 1.0870085 after the
    # eigen-reparameterisation (reg -> 0 recovers the plug-in covariances)
    kprog = m4.m4(T2_X @ T2_X.T, T2_Y, kernel="precomputed", ridge=1e-12)
    assert kprog.data["Z"].shape == (12, 2)  # rank 2: the empirical map is 2-D
    _, model = solve_model(kprog, "bisection", tol=1e-9)
    assert model["rho"] == pytest.approx(1.0870085, abs=1e-6)
    np.testing.assert_array_equal(model["support"], [0, 6, 11])


def test_rbf_kernel_separates_training_data():
    # [C] an RBF Gram matrix is PD, so any labelling is separable in feature space
    X, y = cm.datasets.twonorm(60, dim=5, random_state=0)
    prog = m4.m4(X, y, kernel="rbf", gamma=0.5, ridge=1e-2)
    sol, model = solve_model(prog, "bisection")
    assert model["rho"] > 0
    f = m4.decision_values(prog.data, model, X)
    assert np.all(np.sign(f) == y)
    assert model["dual_coef"].shape == (60,)


def test_kernel_needs_reg():
    with pytest.raises(ProgramError, match="ridge > 0"):
        m4.m4(T2_X, T2_Y, kernel="rbf")


# ---- programs ------------------------------------------------------------------------------

@pytest.mark.parametrize("C", [None, 2.0])
def test_inner_problem_is_dpp_and_pickles(C):
    prog = m4.m4(T2_X, T2_Y, C, reduction=0.5)
    assert prog.problem.is_dpp()
    assert "rho" in prog.parameters
    clone = pickle.loads(pickle.dumps(prog))
    assert clone.problem.is_dpp()
    assert prog.default_solver == ("dinkelbach-gfp" if C is None else "envelope-newton")


def test_not_separable_is_infeasible_status():
    X, y = cm.datasets.twonorm(200, dim=2, random_state=0)  # overlapping classes in 2-D
    for solver in (None, "bisection", "dinkelbach-gfp"):  # None: the default route
        sol = cm.solve(m4.m4(X, y), solver)
        assert sol.status is cm.Status.INFEASIBLE
        assert "set C" in sol.message


@pytest.mark.parametrize("kwargs, match", [
    ({"C": -1.0}, "C must be"),
    ({"C": 0.0}, "C must be"),
    ({"ridge": -1.0}, "ridge must be"),
    ({"reduction": 1.5}, "reduction"),
    ({"kernel": "cubic"}, "unknown kernel"),
    ({"covariances": (np.eye(3), np.eye(3))}, "cov_pos must have shape"),
])
def test_bad_hyper_parameters(kwargs, match):
    with pytest.raises(ProgramError, match=match):
        m4.m4(T2_X, T2_Y, **kwargs)


def test_bad_data():
    with pytest.raises(ProgramError, match="labels"):
        m4.m4(T2_X, np.r_[np.ones(6), np.zeros(6)])
    with pytest.raises(ProgramError, match="single class"):
        m4.m4(T2_X, np.ones(12))
    with pytest.raises(ProgramError, match="shape mismatch"):
        m4.m4(T2_X, T2_Y[:5])
    bad = T2_X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ProgramError, match="NaN"):
        m4.m4(bad, T2_Y)
    same = np.vstack([T2_X[:6], T2_X[:6]])
    with pytest.raises(ProgramError, match="means coincide"):
        m4.m4(same, T2_Y)


def test_deprecated_reg_keyword_maps_to_ridge():
    # issue 12: M4's covariance regulariser is the package-wide ``ridge``; ``reg`` warns
    # for one release and builds the same program (objectives by bisection on both).
    new = cm.solve(m4.m4(T2_X, T2_Y, ridge=1e-3), "bisection").objective
    with pytest.warns(FutureWarning, match="renamed 'ridge'"):
        old = cm.solve(m4.m4(T2_X, T2_Y, reg=1e-3), "bisection").objective
    assert old == pytest.approx(new, rel=1e-9)
