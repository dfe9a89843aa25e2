"""Kernel MPM/BMPM fast path (issue 14): the Cholesky feature map and ``ils-newton``.

Reference values come from independent solvers (Clarabel and ECOS on the same
program), from the former eigen feature map, and from closed forms
(:math:`d^\\top\\Sigma^{-1}d` by SVD); no timing is asserted here (speed lives in
``benchmarks/kernel_fit_speed.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from solver_report import own

import conicml as cm
from conicml._utils.linalg import inverse_quadratic
from conicml.certificates.margin import (
    _solve_well_conditioned,
    fractional_certificate,
    newton_decrement,
)
from conicml.estimators import BMPMClassifier, MPMClassifier
from conicml.formulations import minimax as mm

from tolerances import obj_rtol, sol_atol


def kernel_data(seed: int, n: int, kind: str = "twonorm"):
    X, y = getattr(cm.datasets, kind)(n, dim=5, random_state=seed)
    return X, y


# (9, 120, ringnorm): the BMPM search starts below c = 1/2 (the negative class's shift
# held) and ends near 0.78 (a new block factor, the positive class's shift held)
KERNEL_CASES = [(0, 60, "twonorm", "rbf"), (1, 80, "ringnorm", "rbf"),
                (2, 70, "twonorm", "poly"), (9, 120, "ringnorm", "rbf")]
KERNEL_IDS = [f"{k}-{kern}-n{n}" for _, n, k, kern in KERNEL_CASES]


# ------------------------------------------------------------------- the feature map
@pytest.mark.parametrize("seed, n, kind, kernel", KERNEL_CASES, ids=KERNEL_IDS)
def test_cholesky_feature_map_gives_the_eigen_quadratic_forms(seed, n, kind, kernel):
    """Both factors are feature maps of K: the same w-space quadratic forms to 1e-10."""
    X, y = kernel_data(seed, n, kind)
    K = cm.make_kernel(kernel, X, gamma="scale").gram(X)
    K = 0.5 * (K + K.T)
    Phi, T = mm._gram_feature_map(K)
    if kernel == "rbf":  # K nonsingular: the Cholesky factor (lower triangular, n x n)
        assert Phi.shape == (n, n)
        np.testing.assert_allclose(np.tril(Phi), Phi)
    else:  # homogeneous cubic in 5 dimensions: rank C(7, 3) = 35 < n, the eigen fallback
        assert Phi.shape == (n, math.comb(7, 3))
    # the former map: K = U diag(lam) U^T over lam > _GRAM_RTOL * max
    lam, U = np.linalg.eigh(K)
    keep = lam > mm._GRAM_RTOL * lam[-1]
    Phi_e, T_e = U[:, keep] * np.sqrt(lam[keep]), U[:, keep] / np.sqrt(lam[keep])
    scale = float(np.abs(K).max())
    for P, TT in ((Phi, T), (Phi_e, T_e)):
        np.testing.assert_allclose(P @ P.T, K, atol=1e-10 * scale)  # K = Phi Phi^T
        np.testing.assert_allclose(K @ TT, P, atol=1e-8 * scale)     # K T = Phi
    # the kernel covariance form of Theorem 9, w^T (K~x^T K~x / N + rho K) w, through the
    # program's data (w = T u, sigma_x = ||Rx u||) with either map
    rho = 1e-3
    pos = y > 0
    Kx = K[pos] - K[pos].mean(axis=0)
    Sw = Kx.T @ Kx / pos.sum() + rho * K
    prog = mm.mpm(X, y, ridge=rho, kernel=kernel, gamma="scale")
    rng = np.random.default_rng(seed)
    for _ in range(3):
        u = rng.standard_normal(Phi.shape[1])
        w = prog.data["coef_map"] @ u
        direct = float(w @ Sw @ w)
        via = float(np.linalg.norm(prog.data["Rx"] @ u) ** 2)
        assert via == pytest.approx(direct, rel=1e-10)
        # the same w written in the eigen coordinates u_e = Lambda^1/2 U^T w
        u_e = np.sqrt(lam[keep]) * (U[:, keep].T @ w)
        Ce = Phi_e[pos] - Phi_e[pos].mean(axis=0)
        Se = Ce.T @ Ce / pos.sum() + rho * np.eye(Ce.shape[1])
        assert float(u_e @ Se @ u_e) == pytest.approx(direct, rel=1e-10)


def test_singular_gram_falls_back_to_the_eigen_map():
    # duplicated points: K is singular, Cholesky's pivots vanish -> eigen factor of rank r
    X, y = kernel_data(3, 30)
    X = np.r_[X, X[:5]]
    K = cm.make_kernel("rbf", X).gram(X)
    Phi, T = mm._gram_feature_map(0.5 * (K + K.T))
    assert Phi.shape[1] < X.shape[0]
    np.testing.assert_allclose(Phi @ Phi.T, K, atol=1e-8)
    np.testing.assert_allclose(T.T @ K @ T, np.eye(Phi.shape[1]), atol=1e-6)


def test_kappa_max_by_cholesky_matches_svd():
    X, y = kernel_data(4, 60)
    prog = mm.bmpm(X, y, 0.1, ridge=1e-3, kernel="rbf")
    ref = math.sqrt(inverse_quadratic(prog.data["Ry"], prog.data["d"]))
    assert mm._kappa_max(prog.data) == pytest.approx(ref, rel=1e-9)


# ------------------------------------------------------------------ agreement
@pytest.mark.parametrize("family", ["mpm", "bmpm"])
@pytest.mark.parametrize("seed, n, kind, kernel", KERNEL_CASES, ids=KERNEL_IDS)
def test_ils_newton_agrees_with_clarabel_and_ecos_on_kernel_programs(family, seed, n, kind,
                                                                     kernel):
    X, y = kernel_data(seed, n, kind)
    if family == "mpm":
        prog = mm.mpm(X, y, ridge=1e-3, kernel=kernel)
    else:
        beta0 = 0.5 * mm.bmpm(X, y, 0.0, ridge=1e-3, kernel=kernel).data["beta0_max"]
        prog = mm.bmpm(X, y, beta0, ridge=1e-3, kernel=kernel)
    sol = cm.solve(prog, "ils-newton")
    assert sol.status is cm.Status.OPTIMAL, sol.message
    assert sol.residuals.source == "recomputed"
    assert "delegated" not in sol.extras
    model = prog.decode(sol)
    Xt, _ = kernel_data(seed + 100, 50, kind)
    f = mm.decision_values(prog.data, model, Xt)
    for ref_name in ("clarabel", "ecos"):
        ref = cm.solve(prog, ref_name)
        assert ref.ok, ref.message
        assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol("ils-newton"))
        ref_model = prog.decode(ref)
        scale = max(1.0, float(np.abs(ref_model["v"]).max()))
        # the kernel optimum is flat (ridge 1e-3): the interior-point points are
        # accurate to ~1e-8 in the objective but only to ~3e-4 in v (measured against
        # dinkelbach below), hence 10x the solution row, as for cond 1e6 elsewhere
        np.testing.assert_allclose(model["v"], ref_model["v"],
                                   atol=10 * sol_atol("ils-newton") * scale)
        f_ref = mm.decision_values(prog.data, ref_model, Xt)
        np.testing.assert_allclose(f, f_ref, atol=1e-3 * max(1.0, float(np.abs(f_ref).max())))
        # the decoded worst-case accuracies: alpha = kappa^2 / (1 + kappa^2) from the
        # objective (to the backends' objective accuracy), beta (BMPM: beta0 itself)
        for key in ("alpha", "beta"):
            assert model[key] == pytest.approx(ref_model[key], rel=obj_rtol("ils-newton"))
    # an independent specialized method with a certified gap (dinkelbach, tol 1e-10)
    # pins v far tighter than the backends can
    dk = cm.solve(prog, "dinkelbach")
    np.testing.assert_allclose(model["v"], prog.decode(dk)["v"], atol=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_ils_newton_matches_dinkelbach_on_robust_linear_moments(seed):
    # random moments with mean radii and unequal ridges (a != 0 in the ratio's numerator);
    # dinkelbach's certified gap bounds the error (independent method)
    rng = np.random.default_rng(seed)
    n = 12
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    mom = cm.ClassMoments(rng.standard_normal(n), A @ A.T / n, rng.standard_normal(n),
                          B @ B.T / n)
    for prog in (mm.mpm(mom, nu_x=0.1, nu_y=0.2, ridge=(0.01, 0.02)),
                 mm.bmpm(mom, 0.3, nu_x=0.05, ridge=0.01)):
        sol, ref = cm.solve(prog, "ils-newton"), cm.solve(prog, "dinkelbach")
        assert sol.status is cm.Status.OPTIMAL, sol.message
        assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
        assert own(sol).dual <= 1e-11  # |g(c)| at the default tol


# ------------------------------------------------------------ the solver's contract
def _prog(seed=0, n=40):
    X, y = kernel_data(seed, n)
    return mm.mpm(X, y, ridge=1e-3, kernel="rbf")


def test_limits_callback_and_warm_start():
    prog = _prog()
    sol = cm.solve(prog, "ils-newton", max_iter=1)
    assert sol.status is cm.Status.USER_LIMIT and "max_iter" in sol.message
    assert sol.values["v"].shape == prog.data["d"].shape

    def stop(result):
        raise StopIteration

    sol = cm.solve(prog, "ils-newton", callback=stop)
    assert sol.status is cm.Status.USER_LIMIT and "callback" in sol.message
    ref = cm.solve(prog, "ils-newton")
    warm = cm.solve(prog, "ils-newton", x0=ref.values["v"])
    assert warm.status is cm.Status.OPTIMAL and warm.iterations <= 2
    assert warm.objective == pytest.approx(ref.objective, rel=1e-12)
    with pytest.raises(cm.OptionError, match="x0"):
        cm.solve(prog, "ils-newton", x0=-ref.values["v"])
    with pytest.raises(cm.OptionError, match="tol"):
        cm.solve(prog, "ils-newton", tol=0.0)
    with pytest.raises(cm.OptionError):
        cm.solve(prog, "ils-newton", eps_abs=1e-3)


def test_irregular_programs_are_delegated_to_dinkelbach():
    # Sigma_x singular along d: kappa* = inf, the objective 0 attained (issue 11); not the
    # regular case of ils-newton, which hands it to dinkelbach and says so
    mom = cm.ClassMoments(np.array([1.0, 0.0]), np.diag([0.0, 1.0]), np.zeros(2), np.eye(2))
    prog = mm.bmpm(mom, 0.1)
    sol = cm.solve(prog, "ils-newton")
    assert sol.status is cm.Status.OPTIMAL and sol.objective == 0.0
    assert sol.extras["delegated"] == "dinkelbach" and "delegated" in sol.message
    # an infeasible BMPM (beta0 beyond beta0_max): INFEASIBLE, as dinkelbach says
    X, y = kernel_data(5, 40)
    hi = mm.bmpm(X, y, 0.0, ridge=1e-3, kernel="rbf").data["beta0_max"]
    prog = mm.bmpm(X, y, min(0.5 * (1 + hi), 0.999999), ridge=1e-3, kernel="rbf")
    sol = cm.solve(prog, "ils-newton")
    assert sol.status is cm.Status.INFEASIBLE
    assert prog.decode(sol)["feasible"] is False


# ------------------------------------------------------------ the certificate's solve
def test_ldl_solve_matches_lstsq_and_declines_singular_systems():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((30, 30))
    K = M + M.T
    b = rng.standard_normal(30)
    np.testing.assert_allclose(_solve_well_conditioned(K, b),
                               np.linalg.lstsq(K, b, rcond=1e-13)[0], rtol=1e-9, atol=1e-12)
    K[:, 0], K[0, :] = K[:, 1], K[1, :]
    assert _solve_well_conditioned(K, b) is None
    # newton_decrement: same value by either route on a regular KKT system
    H = M @ M.T + np.eye(30)
    A = rng.standard_normal((30, 1))
    e = rng.standard_normal(30)
    Kk = np.block([[H, A], [A.T, np.zeros((1, 1))]])
    sol = np.linalg.lstsq(Kk, np.r_[-e, 0.0], rcond=1e-13)[0][:30]
    ref = -(float(e @ sol) + 0.5 * float(sol @ H @ sol))
    assert newton_decrement(H, e, A) == pytest.approx(ref, rel=1e-9)


# ------------------------------------------------------------ estimators
def test_estimators_default_to_ils_newton_for_kernels_and_agree_with_clarabel():
    X, y = cm.datasets.twonorm(240, dim=5, random_state=9)
    Xtr, ytr, Xte = X[:120], y[:120], X[120:]
    for Est in (MPMClassifier, BMPMClassifier):
        est = Est(kernel="rbf").fit(Xtr, ytr)
        assert est.solution_.solver == "ils-newton"
        ref = Est(kernel="rbf", solver="clarabel").fit(Xtr, ytr)
        dv, dv_ref = est.decision_function(Xte), ref.decision_function(Xte)
        np.testing.assert_allclose(dv, dv_ref, atol=1e-4 * max(1.0, np.abs(dv_ref).max()))
        assert (est.predict(Xte) == ref.predict(Xte)).mean() >= 0.99
        lin = Est().fit(Xtr, ytr)
        assert lin.solution_.solver == "clarabel"  # linear default unchanged


def test_mempm_kernel_inner_auto_is_ils_newton_and_agrees_with_clarabel_inside():
    from conicml.estimators import MEMPMClassifier

    X, y = cm.datasets.twonorm(160, dim=5, random_state=10)
    est = MEMPMClassifier(kernel="rbf").fit(X[:80], y[:80])
    assert est.solution_.extras["inner"] == "ils-newton"
    ref = MEMPMClassifier(kernel="rbf", inner="clarabel").fit(X[:80], y[:80])
    assert est.solution_.objective == pytest.approx(ref.solution_.objective, rel=1e-6)
    assert (est.predict(X[80:]) == ref.predict(X[80:])).mean() >= 0.99
    assert MEMPMClassifier().fit(X[:80], y[:80]).solution_.extras["inner"] == "clarabel"


# --------------------------------------------- covariances held by their centred rows
def _dense_covariances(prog):
    Rx, Ry = np.asarray(prog.data["Rx"]), np.asarray(prog.data["Ry"])
    return Rx.T @ Rx, Ry.T @ Ry


def test_kernel_scatter_solves_match_dense_covariances():
    # the Woodbury solves (a new factor, and conjugate gradients next to it) against
    # dense solves with Sigma_x, Sigma_y formed from R (R^T R = Sigma by construction)
    X, y = kernel_data(6, 90)
    prog = mm.mpm(X, y, ridge=1e-3, kernel="rbf")
    sc = prog.data["scatter"]
    assert sc is not None and prog.data["Sx"] is None  # no n x n covariance formed
    Sx, Sy = _dense_covariances(prog)
    rng = np.random.default_rng(0)
    B = rng.normal(size=(Sx.shape[0], 3))
    np.testing.assert_allclose(sc.sigma_x(B), Sx @ B, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sc.sigma_y(B), Sy @ B, rtol=1e-10, atol=1e-12)
    # the block factor at 0.3 holds the negative class's shift; 0.31, 0.4: that shift
    # within a factor 1.5 of the held one, by conjugate gradients on H(c), with the
    # Schur complement of 0.3 (free shift within 10 %) and a new one; 0.9: a new factor
    # (the positive class's shift held); 0.9 + 1e-7: the Schur complement of 0.9 reused;
    # 0.8: a new Schur complement (those of 0.3 and 0.9 come with their factorisations of
    # order n: two Schur-complement factorisations, 0.4's and 0.8's)
    for c in (0.3, 0.31, 0.4, 0.9, 0.9 + 1e-7, 0.8):
        M = c * Sx + (1 - c) * Sy
        ref = np.linalg.solve(M, B)
        X = sc.solve(c, B)
        np.testing.assert_allclose(X, ref, rtol=1e-8, atol=1e-10 * np.abs(ref).max())
        # the solve's own acceptance test: the residual of M(c) itself
        assert np.all(np.linalg.norm(M @ X - B, axis=0)
                      <= 1e-12 * np.linalg.norm(B, axis=0))
    assert sc.factorisations == 2 and sc.cg_solves == 4 and sc.schur_factorisations == 2
    d = prog.data["d"]
    np.testing.assert_allclose(sc.solve_y(d), np.linalg.solve(Sy, d), rtol=1e-8)


@pytest.mark.parametrize("hold_x", [True, False])
def test_block_factor_is_a_cholesky_factor_of_the_shifted_gram(hold_x):
    # L L^T = diag(s0 I_f, t I_v) + G for the block factor (held shift s0 on block f,
    # free shift t on block v by a Schur complement), checked against dense solves
    from conicml.contracts.minimax import _BlockFactor

    rng = np.random.default_rng(4)
    n, n_x = 30, 12
    A = rng.normal(size=(n, 8))
    G = A @ A.T  # rank 8: the shifts alone make it definite
    x, y = slice(0, n_x), slice(n_x, n)
    f, v = (x, y) if hold_x else (y, x)
    s0 = 1e-2
    F = _BlockFactor(G, f, v, s0, 3e-3)
    B = rng.normal(size=(n, 3))
    for t in (3e-3, 0.5):
        P = G.copy()
        P[f, f] += s0 * np.eye(P[f, f].shape[0])
        P[v, v] += t * np.eye(P[v, v].shape[0])
        np.testing.assert_allclose(F.upper(t, F.lower(t, B)), np.linalg.solve(P, B),
                                   rtol=1e-9, atol=1e-9 * np.abs(np.linalg.solve(P, B)).max())
        np.testing.assert_allclose(F.upper_times(t, F.upper(t, B)), B, atol=1e-10)


@pytest.mark.parametrize("rho", [1e-2, 1e-7])
def test_shifted_solver_matches_a_double_precision_solve(rho):
    # (rho I + A)^-1 T: rho = 1e-2 (condition number ~ 50) by a single-precision factor
    # refined in double precision; rho = 1e-7 (~5e6) by the double-precision factor;
    # the reference is a dense double-precision solve (LAPACK, independent)
    from conicml.contracts.minimax import _ShiftedSolver

    rng = np.random.default_rng(5)
    F = rng.normal(size=(60, 40)) / 8.0
    A = F @ F.T
    lam = float(np.linalg.eigvalsh(A)[-1])
    S = _ShiftedSolver(A, rho, lam)
    assert (S.L32 is not None) == (rho == 1e-2)
    T = rng.normal(size=(60, 2))
    M = A + rho * np.eye(60)
    X = S.solve(T)
    ref = np.linalg.solve(M, T)
    # the refined solution's residual is that of a backward-stable solve (a few eps of
    # ||M|| ||x||), an accuracy single precision alone (eps ~ 6e-8) cannot reach
    res = np.linalg.norm(M @ X - T, axis=0)
    assert np.all(res <= 1e-14 * (lam + rho) * np.linalg.norm(X, axis=0))
    np.testing.assert_allclose(X, ref, rtol=1e-12 * (lam + rho) / rho)


def test_kernel_bmpm_factors_its_order_n_system_once():
    # the weight search of a kernel BMPM (start weight 0.78, optimum 0.97) with one
    # block factorisation: the later weights by Schur complements of one class's order
    # and conjugate gradients; the optimum that of dinkelbach (independent method)
    X, y = kernel_data(3, 200, "twonorm")
    beta0 = 0.5 * mm.bmpm(X, y, 0.0, ridge=1e-3, kernel="rbf").data["beta0_max"]
    prog = mm.bmpm(X, y, beta0, ridge=1e-3, kernel="rbf")
    sol = cm.solve(prog, "ils-newton")
    assert sol.status is cm.Status.OPTIMAL, sol.message
    sc = prog.data["scatter"]
    assert sc.factorisations == 2  # the block factor and Sigma_y's (beta0_max)
    assert sc.schur_factorisations >= 1 and sc.cg_solves >= 2
    dk = cm.solve(prog, "dinkelbach")
    assert sol.objective == pytest.approx(dk.objective, rel=1e-9)


def test_ridge_stack_products_match_the_dense_matrix():
    X, y = kernel_data(7, 40)
    R = mm.mpm(X, y, ridge=1e-2, kernel="rbf").data["Rx"]
    dense = np.asarray(R)
    assert dense.shape == R.shape
    np.testing.assert_allclose(dense.T @ dense, R.T @ R)
    v = np.random.default_rng(1).normal(size=R.shape[1])
    r = np.random.default_rng(2).normal(size=R.shape[0])
    np.testing.assert_allclose(R @ v, dense @ v)
    np.testing.assert_allclose(R.T @ r, dense.T @ r)
    assert math.isclose(R.frobenius(), float(np.linalg.norm(dense)), rel_tol=1e-12)


@pytest.mark.parametrize("family", ["mpm", "bmpm"])
def test_scatter_certificate_equals_the_dense_one(family):
    # the same certificate through the Woodbury operators as through dense covariances,
    # at the optimum and at a perturbed point (where the Newton decrement is not ~0)
    X, y = kernel_data(8, 70)
    prog = (mm.mpm(X, y, ridge=1e-3, kernel="rbf") if family == "mpm"
            else mm.bmpm(X, y, 0.3, ridge=1e-3, kernel="rbf"))
    sol = cm.solve(prog, solver="ils-newton")
    Sx, Sy = _dense_covariances(prog)
    data = prog.data
    v = np.asarray(sol.values["v"])
    v_off = v * (1 + 1e-3 * np.random.default_rng(3).normal(size=v.size))
    for point in (v, v_off):
        fast = fractional_certificate(data["d"], data["Rx"], data["Ry"], data["a"],
                                      data["b"], point, None, scatter=data["scatter"])
        dense = fractional_certificate(data["d"], np.asarray(data["Rx"]),
                                       np.asarray(data["Ry"]), data["a"], data["b"], point,
                                       None, Sx, Sy)
        assert fast.primal == pytest.approx(dense.primal, rel=1e-8, abs=1e-14)
        assert fast.gap == pytest.approx(dense.gap, rel=1e-8, abs=1e-14)
        assert fast.dual == pytest.approx(dense.dual, rel=1e-5, abs=1e-14)
    assert dense.dual > 1e-10  # the perturbed point is visibly not optimal


def test_curvature_corrected_newton_step_on_a_closed_form():
    # g(t) = tanh(t - 1) + 0.3 (t - 1)^2 (root t* = 1, g' = 1, g'' = 0.6 there). From
    # t = 1 + e, Newton's error is g''/(2g') e^2 (Taylor); with the curvature from the
    # derivatives at 1 + e and 1 + 3e the quadratic model's error is O(e^3): halving e
    # divides the first by 4 and the second by 8
    from conicml.solvers.ils_newton import _newton_step

    def point(t):
        c = 1.0 / (1.0 + np.exp(-t))
        g = np.tanh(t - 1.0) + 0.3 * (t - 1.0) ** 2
        dg_dt = 1.0 / np.cosh(t - 1.0) ** 2 + 0.6 * (t - 1.0)
        return {"c": c, "g": g, "dg": dg_dt / (c * (1.0 - c))}

    errs = []
    for e in (0.02, 0.01):
        cur = point(1.0 + e)
        newton = abs(e + _newton_step(cur, None))
        corrected = abs(e + _newton_step(cur, point(1.0 + 3 * e)))
        assert newton == pytest.approx(0.3 * e**2, rel=0.1)
        assert corrected < 0.2 * newton
        errs.append((newton, corrected))
    assert errs[0][0] / errs[1][0] == pytest.approx(4.0, rel=0.1)
    assert errs[0][1] / errs[1][1] == pytest.approx(8.0, rel=0.2)
    # far from the root (|g| of the previous point >= _CURVATURE_G): Newton's step
    cur = point(1.01)
    assert _newton_step(cur, point(1.5)) == _newton_step(cur, None)


def test_interpolated_slope_on_a_closed_form():
    # g(t) = -tanh(0.4 (t - 2)) + 0.05 (t - 2)^2 (decreasing through its root t* = 2, as the
    # weight curves do). The slope of the quadratic through (g, g_t) at t0 and g at t1 has
    # relative error O(h^2), h = t1 - t0 (Taylor: the cubic term), taken only when
    # |g(t1)| h^2 is below tol / 2; the Newton step with it then lands within that
    from conicml.solvers.ils_newton import _interpolated_slope, _newton_step

    def point(t, rtol=0.0):
        c = 1.0 / (1.0 + np.exp(-t))
        g = -np.tanh(0.4 * (t - 2.0)) + 0.05 * (t - 2.0) ** 2
        dg_dt = -0.4 / np.cosh(0.4 * (t - 2.0)) ** 2 + 0.1 * (t - 2.0)
        return {"c": c, "g": g, "dg": dg_dt / (c * (1.0 - c)), "rtol": rtol}

    tol = 1e-11
    for h in (1e-2, 3e-3):
        prev, exact = point(2.0 - h), point(2.0 + 1e-9)
        cur = {k: exact[k] for k in ("c", "g", "rtol")}
        assert _interpolated_slope(cur, prev, tol) and cur["interpolated"]
        assert abs(cur["dg"] / exact["dg"] - 1.0) <= h * h
        t1 = math.log(cur["c"] / (1.0 - cur["c"]))
        landed = point(t1 + _newton_step(cur, None))
        assert abs(landed["g"]) <= 0.5 * tol
    # refused: |g| h^2 above tol / 2, a previous point far from the root or without a
    # derivative, a value known only to a loose solve
    far = {k: point(2.05)[k] for k in ("c", "g", "rtol")}
    assert not _interpolated_slope(far, point(2.0 - 1e-2), tol) and "interpolated" not in far
    near = {k: point(2.0 + 1e-9)[k] for k in ("c", "g", "rtol")}
    assert not _interpolated_slope(dict(near), point(0.5), tol)
    assert not _interpolated_slope(dict(near), {**point(1.99), "dg": math.nan}, tol)
    assert not _interpolated_slope(dict(near, rtol=1e-4), point(2.0 - 1e-2), tol)
