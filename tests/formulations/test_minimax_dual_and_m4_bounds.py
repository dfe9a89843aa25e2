"""Seed 004 pieces completed by issue 15: the BMPM geometric dual (3.31), Theorem 15's
M4 error bound (4.35) and the M4-MEMPM link (4.30)-(4.34).

Numbers: an anisotropic 6+6 toy "T2" (values computed independently with cvxpy/Clarabel:
kappa_alpha(0.8) = 2.693767; d_x = 2.628683, d_y = 2.257678, bound term 0.145217,
m/N = 0.25; MEMPM objective 0.899028), the Fig. 3.4 population moments "T1" (MPM
kappa = 4/3, threshold 1/3, closed form), Dinkelbach's own P(lambda) (an independent
least-squares method), and closed forms.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import norm

import conicml as cm
from conicml.formulations import m4, minimax
from conicml.formulations.m4_bound import m4_error_bound, worst_case_error
from conicml.formulations.minimax_dual import geometric_dual
from conicml.kinds import BMPM_GEOMETRIC_DUAL
from conicml.solvers.dinkelbach import FractionalProgram

X_T2 = np.array([(1, 0), (3, 0.5), (5, -0.5), (2, 1), (4, -1), (6, 0)], float)
Y_T2 = np.array([(-1, 0), (-1.3, 0.4), (-1.2, -0.4), (-1.6, 0.1), (-1.4, -0.2), (-1.1, 0.3)])
Z_T2 = np.vstack([X_T2, Y_T2])
y_T2 = np.r_[np.ones(6), -np.ones(6)]

BACKENDS = cm.solvers.available(BMPM_GEOMETRIC_DUAL)


# -- (3.31): the geometric dual --------------------------------------------------------
@pytest.mark.parametrize("solver", BACKENDS)
def test_geometric_dual_is_one_at_the_bmpm_optimum(solver):
    """(3.35)-(3.36): at lambda = kappa(alpha*) the ellipsoids touch at ell* = 1 (T4)."""
    prog = minimax.bmpm(Z_T2, y_T2, 0.8)
    ref = cm.solve(prog, "dinkelbach")
    kappa = prog.decode(ref)["kappa_alpha"]
    assert_allclose(kappa, 2.693767, atol=1e-6)  # T2 toy (independent cvxpy value)
    dual = geometric_dual(prog, kappa)
    sol = cm.solve(dual, solver)
    assert sol.ok, sol.message
    tol = 1e-6 if solver != "scs" else 1e-4
    assert_allclose(sol.objective, 1.0, atol=tol)
    assert_allclose(ref.extras["P"], 1.0, atol=1e-9)  # Dinkelbach's own certificate
    model = dual.decode(sol)
    # the decoded direction is the BMPM hyperplane's (w normalised to w^T d = 1)
    assert_allclose(model["w"], prog.decode(ref)["w"] / (prog.decode(ref)["w"] @ prog.data["d"]),
                    atol=1e2 * tol)


@pytest.mark.parametrize("lam", [0.3, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("family", ["bmpm", "mpm"])
def test_geometric_dual_matches_dinkelbachs_P(family, lam):
    """1/ell*(lambda) = P(lambda) of Dinkelbach's least-squares inner solve, for every lambda;
    P is non-decreasing and concave in lambda (a min of linear functions)."""
    prog = minimax.bmpm(Z_T2, y_T2, 0.5) if family == "bmpm" else minimax.mpm(Z_T2, y_T2)
    fp = FractionalProgram(prog.data)
    dual = geometric_dual(prog, lam)
    P_ls = fp.min_weighted(dual.data["cx"], dual.data["cy"], None)[1]
    for solver in ("clarabel", "ecos"):
        sol = cm.solve(dual, solver)
        assert sol.status is cm.Status.OPTIMAL, sol.message
        assert_allclose(1.0 / sol.objective, P_ls, rtol=1e-7)
        assert sol.residuals.gap <= 1e-6
        assert dual.decode(sol)["P_upper"] >= P_ls * (1 - 1e-9)  # weak duality


def test_geometric_dual_P_is_concave_nondecreasing_with_root_at_kappa():
    prog = minimax.bmpm(Z_T2, y_T2, 0.9)
    lams = np.linspace(0.5, 5.0, 7)
    P = np.array([1.0 / cm.solve(geometric_dual(prog, lam), "clarabel").objective
                  for lam in lams])
    assert np.all(np.diff(P) >= -1e-9)
    assert np.all(np.diff(P, 2) <= 1e-7)
    kappa = prog.decode(cm.solve(prog, "clarabel"))["kappa_alpha"]
    assert_allclose(kappa, 2.535844, atol=1e-5)  # T2 toy, beta0 = 0.9 (independent cvxpy value)
    root = np.interp(1.0, P, lams)  # P is increasing: invert by interpolation (coarse)
    assert abs(root - kappa) < 0.1


def test_mpm_population_ellipsoids_touch_at_four_thirds():
    """Fig. 3.4 population moments (T1): MPM kappa = 4/3, so ell*(4/3) = 1."""
    mom = cm.ClassMoments(np.array([3.0, 0.0]), np.diag([4.0, 1.0]),
                          np.array([-1.0, 0.0]), np.diag([1.0, 5.0]))
    prog = minimax.mpm(mom)
    sol = cm.solve(geometric_dual(prog, 4.0 / 3.0), "clarabel")
    assert_allclose(sol.objective, 1.0, atol=1e-7)
    touch = geometric_dual(prog, 4.0 / 3.0).decode(sol)["touch"]
    assert_allclose(touch, [1.0 / 3.0, 0.0], atol=1e-6)  # the MPM threshold z1 = 1/3


def test_geometric_dual_bad_input():
    prog = minimax.bmpm(Z_T2, y_T2, 0.5)
    with pytest.raises(ValueError, match="lam"):
        geometric_dual(prog, -1.0)
    with pytest.raises(ValueError, match="socp.bmpm"):
        geometric_dual(m4.m4(Z_T2, y_T2), 1.0)


# -- Theorem 15 (4.35) ------------------------------------------------------------------
def test_theorem_15_terms_on_t2():
    prog = m4.m4(Z_T2, y_T2)
    model = prog.decode(cm.solve(prog, "bisection"))
    out = m4_error_bound(prog.data, model)
    assert_allclose([out["dx"], out["dy"], out["chebyshev"], out["loo"]],
                    [2.628683, 2.257678, 0.145217, 0.25], atol=2e-6)
    assert out["bound"] == min(out["chebyshev"], out["loo"])


def gaussian_problem(rng, n_per=15):
    dim = 2
    mx, my = rng.normal(size=dim) + 2.0, rng.normal(size=dim) - 2.0
    A, B = rng.normal(size=(dim, dim)) * 0.6, rng.normal(size=(dim, dim)) * 0.6
    Sx, Sy = A @ A.T + 0.1 * np.eye(dim), B @ B.T + 0.1 * np.eye(dim)
    X = rng.multivariate_normal(mx, Sx, n_per)
    Y = rng.multivariate_normal(my, Sy, n_per)
    return (mx, Sx, my, Sy), np.vstack([X, Y]), np.r_[np.ones(n_per), -np.ones(n_per)]


def true_error(mom, w, b, theta):
    mx, Sx, my, Sy = mom
    ex = norm.cdf(-(w @ mx + b) / np.sqrt(w @ Sx @ w))
    ey = norm.cdf((w @ my + b) / np.sqrt(w @ Sy @ w))
    return theta * ex + (1 - theta) * ey


def test_theorem_15_bound_holds_on_random_instances():
    """Property: on random Gaussian problems solved exactly (bisection), (i) the worst-case
    term with the population moments bounds the true error of the M4 hyperplane for every
    instance (Marshall-Olkin is a bound for every distribution with those moments); (ii)
    the mean of the plug-in bound min(m/N, term) over the instances bounds the mean true
    error (the theorem's expectation, estimated over 15 training sets)."""
    rng = np.random.default_rng(15)
    errors, bounds = [], []
    done = 0
    while done < 15:
        mom, Z, y = gaussian_problem(rng)
        prog = m4.m4(Z, y)
        sol = cm.solve(prog, "bisection")
        if sol.status is not cm.Status.OPTIMAL:
            continue  # not separable: Theorem 15 is about the separable M4
        model = prog.decode(sol)
        err = true_error(mom, model["w"], model["b"], 0.5)
        pop = m4_error_bound(prog.data, model, moments=mom)
        assert err <= pop["chebyshev"] + 1e-12
        errors.append(err)
        bounds.append(m4_error_bound(prog.data, model)["bound"])
        done += 1
    assert np.mean(errors) <= np.mean(bounds)


def test_theorem_15_loo_term_lemma_14():
    """Lemma 14 (the m/N term): with fixed covariances, removing a non-support vector leaves
    the M4 solution unchanged, so the leave-one-out errors number at most m."""
    rng = np.random.default_rng(3)
    _, Z, y = gaussian_problem(rng, n_per=6)
    cov = (np.cov(Z[y > 0].T, bias=True), np.cov(Z[y < 0].T, bias=True))
    prog = m4.m4(Z, y, covariances=cov)
    model = prog.decode(cm.solve(prog, "bisection"))
    loo_errors = 0
    for i in range(y.size):
        keep = np.arange(y.size) != i
        sub = m4.m4(Z[keep], y[keep], covariances=cov)
        sm = sub.decode(cm.solve(sub, "bisection"))
        if i not in model["support"]:
            assert_allclose(sm["rho"], model["rho"], rtol=1e-5)
        loo_errors += int(np.sign(Z[i] @ sm["w"] + sm["b"]) != y[i])
    assert loo_errors <= len(model["support"])


def test_worst_case_error_limits():
    assert worst_case_error(0.0, 0.0, 0.3) == 1.0
    assert worst_case_error(-1.0, 2.0, 0.5) == pytest.approx(0.5 + 0.5 / 5)
    assert worst_case_error(np.inf, np.inf, 0.5) == 0.0


# -- the M4-MEMPM link (4.30)-(4.34) ----------------------------------------------------
def test_link_4_30_sum_of_precise_slacks():
    """(4.30): for the precise slacks (4.19)-(4.22), xi_k = (rho - margin_k)_+, the total is
    at least N rho - (N_x d_x - N_y (w^T ybar + b)/sigma_y), with equality when every point
    violates rho (the averaging that links M4 to MEMPM)."""
    rng = np.random.default_rng(0)
    prog = m4.m4(Z_T2, y_T2, C=1.0)
    data = prog.data
    Nx, Ny = 6, 6
    for _ in range(20):
        w, b = rng.normal(size=2), rng.normal()
        if w @ data["d"] <= 0:
            w = -w
        marg = m4.margins(data, w, b)
        sx = np.linalg.norm(data["R_pos"] @ w)
        sy = np.linalg.norm(data["R_neg"] @ w)
        tx = (w @ Z_T2[:6].mean(0) + b) / sx  # (w^T xbar + b)/sigma_x
        ty = -(w @ Z_T2[6:].mean(0) + b) / sy  # -(w^T ybar + b)/sigma_y
        for rho in (0.5, 2.0, 50.0):
            xi = np.maximum(rho - marg, 0.0)
            lower = (Nx + Ny) * rho - (Nx * tx + Ny * ty)
            assert xi.sum() >= lower - 1e-9
            if np.all(marg < rho):
                assert_allclose(xi.sum(), lower, rtol=1e-10)


def test_link_4_32_to_mempm_same_constraints_different_objective():
    """(4.32)-(4.34) and MEMPM share the constraint set {(t, s) : (w^T xbar + b)/sigma_x >= t,
    -(w^T ybar + b)/sigma_y >= s, w^T d = 1}; its frontier is t*(s) = BMPM's kappa_alpha at
    kappa(beta0) = s. MEMPM maximises theta g(t) + (1 - theta) g(s), g(k) = k^2/(1+k^2):
    over a grid of s it reproduces the quadratic-interpolation MEMPM optimum (0.899028 on
    T2); the linear objective theta t + (1 - theta) s of (4.32) is not bounded on it
    (the thesis's implicit constraints t, s >= A are what keeps (4.32) finite)."""
    theta = 0.5
    betas = np.linspace(0.0, 0.998, 100)
    s = np.sqrt(betas / (1 - betas))
    t = np.array([minimax.bmpm(Z_T2, y_T2, beta).decode(
        cm.solve(minimax.bmpm(Z_T2, y_T2, beta), "clarabel"))["kappa_alpha"] for beta in betas])
    # the frontier is tight: at the BMPM hyperplane both constraints hold with equality
    prog = minimax.bmpm(Z_T2, y_T2, betas[27])
    model = prog.decode(cm.solve(prog, "clarabel"))
    w, b = model["w"], model["b"]
    Sx = np.cov(X_T2.T, bias=True)
    Sy = np.cov(Y_T2.T, bias=True)
    assert_allclose((w @ X_T2.mean(0) + b) / np.sqrt(w @ Sx @ w), t[27], rtol=1e-6)
    assert_allclose(-(w @ Y_T2.mean(0) + b) / np.sqrt(w @ Sy @ w), s[27], rtol=1e-6)
    g = lambda k: k * k / (1 + k * k)  # noqa: E731
    F = theta * g(np.maximum(t, 0)) + (1 - theta) * g(s)
    mem = minimax.mempm(Z_T2, y_T2, theta=theta)
    opt = mem.decode(cm.solve(mem, "quadratic-interpolation"))["objective"]
    assert_allclose(opt, 0.899028, atol=1e-5)  # T2 toy (independent cvxpy value)
    assert F.max() <= opt + 1e-6  # the line search found the maximum of the frontier
    assert F.max() >= opt - 2e-3  # and the grid gets close to it
    # the linear objective of (4.32) grows without bound as s -> kappa(beta0m) (t stays >= 0
    # on the frontier until beta0m): its maximum is at the end of the grid, MEMPM's inside
    linear = theta * t + (1 - theta) * s
    assert int(np.argmax(linear)) == betas.size - 1
    assert int(np.argmax(F)) < betas.size - 1
