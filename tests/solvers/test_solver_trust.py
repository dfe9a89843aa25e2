"""Certified answers of the specialized solvers are right answers: the QPFS simplex
certificate checks KKT on every coordinate relative to the objective, smo-or stops on
stalls, the nearly singular TRS is judged at the objective's resolution, kqpfs-cholesky
reports its point's objective."""

import warnings

import numpy as np
import pytest

import conicml as cm
from conicml.formulations.qpfs import simplex_qp

from tolerances import obj_rtol


def _large_factor_qp(seed=0, k=10, alpha=0.9):
    # factor entries up to ~3e4: the gradient's largest entry on the simplex is ~1e9
    # while the optimum's objective is ~1 (the optimum nearly cancels L^T w)
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(33, k)) * 1e4
    F = np.abs(rng.normal(size=33))
    return simplex_qp(L, F, alpha)


def test_simplex_smo_reaches_the_optimum_with_a_large_factor():
    prog = _large_factor_qp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = cm.solve(prog, "simplex-smo")
        refs = [cm.solve(prog, name) for name in ("clarabel", "ecos")]
    assert sol.status is cm.Status.OPTIMAL, sol.message
    # independent interior-point solves. Clarabel's point is certified; ECOS's objective
    # agrees but its point is not (gradients on its support differ by ~5e-3 of the
    # objective: the Frank-Wolfe bound is loose on this stiff QP), so only its value is used
    assert refs[0].status is cm.Status.OPTIMAL, refs[0].message
    for ref in refs:
        assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(ref.solver))
    # not above the references beyond their accuracy (the old stop was 1.1 % above)
    assert sol.objective <= min(r.objective for r in refs) + 1e-6 * abs(sol.objective)


def _restricted_optimum(prog):
    """The optimum of the QP restricted to the support of the full optimum minus the
    feature with the largest weight, embedded in R^M: KKT holds on its own support, not
    off it."""
    qp = prog.data["qp"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = cm.solve(prog, "clarabel").values["w"]
    keep = np.setdiff1d(np.arange(qp.n_features), [int(np.argmax(full))])
    sub = simplex_qp(qp.factor[keep], qp.relevance[keep], qp.alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sub_sol = cm.solve(sub, "clarabel")
    assert sub_sol.status is cm.Status.OPTIMAL
    w = np.zeros(qp.n_features)
    w[keep] = sub_sol.values["w"]
    return np.maximum(w, 0.0) / np.maximum(w, 0.0).sum(), int(np.argmax(full))


def test_simplex_certificate_rejects_a_point_optimal_on_a_restricted_support():
    prog = _large_factor_qp()
    qp = prog.data["qp"]
    w, dropped = _restricted_optimum(prog)
    g = qp.gradient(w)
    on = w > 1e-9 * w.max()
    # the point is (nearly) stationary on its support, but the dropped feature's gradient
    # lies far below the multiplier: KKT fails off the support only
    nu = float(np.median(g[on]))
    assert g[dropped] < nu - 1e-2 * abs(nu)
    # the former scale (largest gradient entry on the simplex, ~1e9) called this gap 1e-9
    old_gap = float(w @ (g - g.min())) / qp.scale()
    assert old_gap < 1e-6
    primal, dual, gap = qp.certificate(w)
    assert gap > 1e-3 and dual > 1e-4
    certified = cm.solving._certified(prog, cm.Solution(
        status=cm.Status.OPTIMAL, solver="test", objective=qp.objective(w), values={"w": w}),
        1e-6)
    assert certified.status is cm.Status.OPTIMAL_INACCURATE
    assert "gap residual" in certified.message


def test_simplex_smo_leaves_a_restricted_optimum():
    # started at the restricted optimum, the solver must bring in the off-support feature
    prog = _large_factor_qp()
    w, dropped = _restricted_optimum(prog)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = cm.solve(prog, "simplex-smo", x0=w)
        ref = cm.solve(prog, "clarabel")
    assert sol.status is cm.Status.OPTIMAL
    assert sol.values["w"][dropped] > 0
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol("clarabel"))


def _ordinal_data(seed, m, dim, r, noise=0.5):
    """Seeded latent-linear ordinal data: equal-frequency ranks of w.x + noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, dim))
    s = X @ rng.normal(size=dim) + noise * rng.normal(size=m)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, r + 1)[1:-1])) + 1
    return X, y


def _svor_scaled(seed, ranks, C=1000.0):
    # 42 points, 2 features, the first x1e3, RBF with gamma="scale": the kernel is
    # nearly a function of the first feature and its columns nearly coincide
    from conicml.formulations.svor_implicit import svorim_dual

    X, y = _ordinal_data(seed, 42, 2, ranks)
    X[:, 0] *= 1e3
    return svorim_dual(X, y, C=C, kernel="rbf")


@pytest.mark.slow
def test_smo_or_leaves_a_shrinking_zigzag():
    # with shrinking, two variables traded the same step back and forth at a constant
    # violation 0.202 (150 000 pair steps, to the time limit); the no-progress rule
    # brings every variable back and the solve converges
    prog = _svor_scaled(5, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = cm.solve(prog, "smo-or", time_limit=120.0)
        refs = [cm.solve(prog, name) for name in ("clarabel", "ecos")]
    assert sol.status is cm.Status.OPTIMAL, sol.message
    assert sol.extras["unshrink_events"] >= 1
    for ref in refs:  # independent interior-point solves; smo-or runs at tol 1e-3
        if ref.status is cm.Status.OPTIMAL:
            assert sol.objective == pytest.approx(ref.objective, rel=1e-4)
    assert refs[0].status is cm.Status.OPTIMAL


@pytest.mark.slow
def test_smo_or_stops_without_progress_with_a_named_status():
    prog = _svor_scaled(3, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = cm.solve(prog, "smo-or", time_limit=120.0)
        ref = cm.solve(prog, "clarabel")
    window = max(1000, 10 * 42)  # the solver's no-progress window, m = 42 points
    if sol.status is cm.Status.OPTIMAL:  # reaching the optimum is the better outcome
        assert sol.objective == pytest.approx(ref.objective, rel=1e-4)
        return
    assert sol.status is cm.Status.USER_LIMIT
    assert sol.extras["stop_reason"] == 5
    assert "no progress" in sol.message and "KKT violation" in sol.message
    # two no-progress periods of 20 windows after the last improvement, not max_iter
    assert sol.iterations < 1_000_000 and sol.iterations <= 200 * window
    assert sol.objective <= ref.objective * (1 + 1e-6)  # a dual value: below the optimum


def _trs_closed_form(lam, c, delta):
    """Closed form of min c'u + u'diag(lam)u/2, |u| <= delta, lam >= 0 diagonal with
    c_1 != 0 on the zero eigenvalue: u_i = -c_i/(lam_i + nu), nu > 0 the root of
    |u(nu)| = delta (Moré & Sorensen 1983), found by bisection."""
    lo, hi = 0.0, float(np.linalg.norm(c)) / delta + 1.0
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.linalg.norm(c / (lam + mid)) > delta else (lo, mid)
    u = -c / (lam + hi)
    return u, float(c @ u + 0.5 * u @ (lam * u))


# nearly singular convex TRS: eigenvalues 0 ... 5.6e8, objective ~ -1.5e-3
_LAM = np.array([0.0, 1e-3, 1.0, 5.6e8])
_C = np.array([1.5e-3, 2e-4, -3e-4, 2.0])
_DELTA = 1.0


@pytest.mark.parametrize("form", ["socp", "sdp"])
def test_more_sorensen_on_a_nearly_singular_trs_matches_the_closed_form(form):
    from conicml.formulations.trust_region import trust_region_subproblem

    u_star, q_star = _trs_closed_form(_LAM, _C, _DELTA)
    prog = trust_region_subproblem(np.diag(_LAM), _C, _DELTA, form=form)
    sol = cm.solve(prog, "more-sorensen")
    assert sol.status is cm.Status.OPTIMAL
    # a diagonal H: the eigendecomposition is exact, the secular root to 1e-12
    assert sol.objective == pytest.approx(q_star, rel=1e-9)
    assert sol.residuals.gap <= 1e-9


def test_trs_certificate_rejects_wrong_points_the_old_scale_accepted():
    from conicml.formulations.trust_region import trust_region_subproblem

    u_star, q_star = _trs_closed_form(_LAM, _C, _DELTA)
    prog = trust_region_subproblem(np.diag(_LAM), _C, _DELTA, form="socp")
    # (a) the optimum with its null-space component halved: in the ball, q 0.3 % .. 100 %
    # off; (b) the optimum moved along the sphere by 10 % of the radius
    wrong = u_star.copy()
    wrong[0] *= 0.5
    turned = u_star + 0.1 * np.array([0.0, 1.0, 0.0, 0.0])
    turned *= _DELTA / np.linalg.norm(turned)
    for point in (wrong, turned):
        q = float(_C @ point + 0.5 * point @ (_LAM * point))
        assert q - q_star > 3e-3 * abs(q_star)
        # the former scale: stationarity |(H + nu I)u + g| / (|g| + |H| Delta) ~ 1e-12
        nu = max(0.0, -float(point @ (_LAM * point + _C)) / float(point @ point))
        old = np.linalg.norm(_LAM * point + _C + nu * point) / (
            np.linalg.norm(_C) + _LAM.max() * _DELTA)
        assert old < 1e-6
        claimed = cm.Solution(status=cm.Status.OPTIMAL, solver="test", objective=q,
                              values={"s": point})
        res = prog.certify(claimed)
        # the gap bounds (q - q*)/tau and is not below it
        assert res.gap > 1e-3
        certified = cm.solving._certified(prog, claimed, 5e-4)
        assert certified.status is cm.Status.OPTIMAL_INACCURATE
        assert "gap residual" in certified.message
    # a reported objective that is not the point's fails as well
    lie = cm.Solution(status=cm.Status.OPTIMAL, solver="test", objective=2 * q_star,
                      values={"s": u_star})
    assert prog.certify(lie).gap > 0.1  # |q*| / tau, tau = |q| + |g.u| + |u.Hu|/2


def test_generic_trs_answers_are_within_their_certificates():
    from conicml.formulations.trust_region import trust_region_subproblem

    _, q_star = _trs_closed_form(_LAM, _C, _DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for form in ("socp", "sdp"):
            prog = trust_region_subproblem(np.diag(_LAM), _C, _DELTA, form=form)
            for name in cm.solvers.available(prog.kind):
                sol = cm.solve(prog, name)
                if sol.status is not cm.Status.OPTIMAL or sol.residuals.primal > 1e-12:
                    continue  # only certified, feasible answers promise anything
                from conicml.formulations.trust_region import trs_point

                u = trs_point(prog.data, sol)
                lin, quad = float(_C @ u), 0.5 * float(u @ (_LAM * u))
                tau = abs(lin + quad) + abs(lin) + abs(quad)
                assert abs(sol.objective - q_star) <= 1.001 * sol.residuals.gap * tau \
                    + 1e-12 * abs(q_star), (form, name, sol.objective, q_star)


def _ill_conditioned_kqpfs():
    # a feature x1e3 and mu = 1e-10 under a cubic kernel: alpha and Q_K are large, and
    # 0.5 a'(Q_K + mu I)a - F'a loses ~2e-4 of the value (-0.652) to round-off
    from conicml.formulations.kfda import kqpfs

    rng = np.random.default_rng(39)
    X = rng.normal(size=(60, 2))
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    X[:, 0] *= 1e3
    return kqpfs(X, y, 1.1e-10, kernel="poly")


def test_kqpfs_cholesky_reports_its_points_objective():
    prog = _ill_conditioned_kqpfs()
    sol = cm.solve(prog, "kqpfs-cholesky")
    assert sol.status is cm.Status.OPTIMAL, sol.message
    # the program's own objective (the cvxpy expression the generic backends minimise),
    # evaluated at the returned point
    prog.variables["alpha"].value = sol.values["alpha"]
    value = float(prog.problem.objective.value)
    assert sol.objective == pytest.approx(value, rel=1e-12, abs=1e-14)
    assert sol.residuals.gap <= 1e-12


def test_kqpfs_certificate_rejects_an_objective_that_is_not_the_points():
    prog = _ill_conditioned_kqpfs()
    sol = cm.solve(prog, "kqpfs-cholesky")
    f = prog.data["fisher"]
    A, F = f.kqpfs_system()
    a = sol.values["alpha"]
    # the former report, 0.5 a'Aa - F'a: ~5e-6 of |Cy|^2/2 away from the point's value,
    # 500 times kqpfs-cholesky's certify_tol
    former = float(0.5 * a @ (A @ a) - F @ a)
    claimed = cm.Solution(status=cm.Status.OPTIMAL, solver="test", objective=former,
                          values={"alpha": a})
    res = prog.certify(claimed)
    assert res.gap > 1e-7
    assert cm.solving._certified(prog, claimed, 1e-8).status is cm.Status.OPTIMAL_INACCURATE


def test_rank_tr_reaches_the_optimum_with_a_feature_scaled_by_1e8():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "campaign"))
    import campaign_instances

    prog, runs, _ = campaign_instances.instance("ranking", 851)
    # a linear kernel with one feature x1e8: K_RR is singular to working precision and
    # rank-tr's trust region stalled 0.18 % above the optimum at relative gradient 3e-7
    ref = cm.solve(prog, "clarabel")
    sol = cm.solve(prog, "rank-tr", tol=1e-9, time_limit=20.0)
    assert ref.status is cm.Status.OPTIMAL
    # the reference is certified; an OPTIMAL rank-tr point must agree with it to 1e-5
    assert not (sol.status is cm.Status.OPTIMAL
                and sol.objective > ref.objective * (1 + 1e-5))
    # and rank-tr reaches it: Newton steps from its stalled end point close the gap
    assert sol.status is cm.Status.OPTIMAL
    assert sol.objective == pytest.approx(ref.objective, rel=1e-5)
