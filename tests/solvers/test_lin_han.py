"""``lin-han`` (Lin-Han ellipsoid distance, seed 003 A1) against the generic backends.

Reference values: the generic interior-point backends (clarabel, ecos; scs looser)
solving the same program, the closed forms of the seed-003 note §5.3 and the
solver's own certificate (angles, bracket [D_k, P_k] on the optimum).
"""

import numpy as np
import pytest
from solver_report import own

import conicml as cm
from conicml.exceptions import OptionError, SolverError
from conicml.formulations import specified_rates as sr
from conicml.solvers import lin_han

from tolerances import obj_rtol, sol_atol

PRIMAL, DUAL = sr.RATES_KINDS


def _random_instance(d, seed):
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(d, d)), rng.normal(size=(d, d))
    cov1 = A @ A.T / d + 0.1 * np.eye(d)
    cov2 = B @ B.T / d + 0.1 * np.eye(d)
    mu1 = rng.normal(size=d)
    mu1 *= 6.0 / np.linalg.norm(mu1)
    mu2 = -0.2 * mu1 + 0.3 * rng.normal(size=d)
    return cm.ClassMoments(mu1, cov1, mu2, cov2)


def test_registered_for_both_kinds():
    assert "lin-han" in cm.solvers.available(PRIMAL)
    assert "lin-han" in cm.solvers.available(DUAL)
    assert cm.solvers.get("lin-han").specialized


# ---- agreement with the generic backends on random instances (d up to 50) ----------------

@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("d, seed", [(2, 0), (5, 1), (10, 2), (20, 3), (50, 4)])
def test_random_agreement(d, seed, form):
    prog = sr.specified_rates(_random_instance(d, seed), 0.3, 0.4, form=form)
    cmp = cm.compare(prog, ["clarabel", "ecos", "scs", "lin-han"],
                     rtol={s: obj_rtol(s) for s in ("clarabel", "ecos", "scs", "lin-han")},
                     vtol={s: sol_atol(s) for s in ("clarabel", "ecos", "scs", "lin-han")})
    # lin-han's row (objective rtol 1e-6, every decoded entry incl. z_pos/z_neg of the dual)
    # against clarabel; ecos's dual z can be 1e-4 off (the boundary point is determined only
    # to the square root of the objective accuracy), so ecos is checked on w, b below.
    assert cmp.row("lin-han").agree, str(cmp)
    # lin-han against both interior-point backends directly (objective rtol 1e-6)
    lh = cmp.solutions["lin-han"]
    for ref in ("clarabel", "ecos"):
        sol = cmp.solutions[ref]
        assert lh.objective == pytest.approx(sol.objective, rel=1e-6)
        m_lh, m_ref = prog.decode(lh), prog.decode(sol)
        scale = max(1.0, np.abs(m_ref["w"]).max())
        np.testing.assert_allclose(m_lh["w"], m_ref["w"], atol=sol_atol(ref) * scale)
        assert m_lh["b"] == pytest.approx(m_ref["b"], abs=sol_atol(ref) * max(1, abs(m_ref["b"])))
    # certificate: converged angle, feasible point, bracket [D, P] of width ~ round-off
    assert lh.status is cm.Status.OPTIMAL
    assert lh.iterations > 0
    assert own(lh).dual <= 1e-10  # max(theta_pos, theta_neg) <= tol
    assert own(lh).primal <= 1e-10
    lo, hi = lh.extras["lower_bound"], lh.extras["upper_bound"]
    assert own(lh).gap == pytest.approx(hi - lo)
    assert -1e-12 * hi <= own(lh).gap <= 1e-9 * hi
    # the bracket contains the interior-point optimum (to its accuracy)
    p_ref = cm.solve(sr.specified_rates(_random_instance(d, seed), 0.3, 0.4), "clarabel")
    assert lo * (1 - 1e-7) <= p_ref.objective <= hi * (1 + 1e-7)


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_kernel_agreement(form):
    X, y = cm.datasets.twonorm(120, dim=2, random_state=5)
    prog = sr.specified_rates(X, y, 0.3, 0.3, kernel="rbf", gamma=1.0, ridge=1e-2,
                                  form=form)
    sols = {s: cm.solve(prog, s) for s in ("clarabel", "ecos", "lin-han")}
    lh = sols["lin-han"]
    assert lh.status is cm.Status.OPTIMAL and own(lh).dual <= 1e-10
    f_lh = sr.rates_decision_values(prog.data, prog.decode(lh), X)
    for ref in ("clarabel", "ecos"):
        assert lh.objective == pytest.approx(sols[ref].objective, rel=obj_rtol(ref))
        if form == "primal":  # the dual decode amplifies z errors by 1/d^2 (see rates tests)
            f_ref = sr.rates_decision_values(prog.data, prog.decode(sols[ref]), X)
            np.testing.assert_allclose(f_lh, f_ref, atol=sol_atol(ref) * np.abs(f_ref).max())


# ---- structured instances (note §5.3 and A1 table) ----------------------------------------

def test_ellipse_example_in_one_step():
    # note A1: "A1 returns this in one step": the centres' segment is already normal
    m = cm.ClassMoments(np.array([3.0, 0.0]), np.diag([4.0, 1.0]), np.array([-3.0, 0.0]),
                        np.eye(2))
    sol = cm.solve(sr.specified_rates(m, 0.5, 0.5), "lin-han")
    assert sol.iterations == 0
    np.testing.assert_allclose(sol.extras["z_pos"], [1.0, 0.0], atol=1e-14)
    np.testing.assert_allclose(sol.extras["z_neg"], [-2.0, 0.0], atol=1e-14)
    assert sol.extras["distance"] == pytest.approx(3.0, rel=1e-14)


def test_general_example_certificate():
    # note A1 table: kappa = (1, 1): distance 2.1171770582, z1 = (0.7497945, 1.1144631),
    # z2 = (-0.4675509, -0.6177346); the note needed 26 iterations to theta < 1e-10
    m = cm.ClassMoments(np.array([2.0, 2.0]), np.array([[2.0, 0.8], [0.8, 1.0]]),
                        np.array([-1.0, -1.0]), np.array([[1.0, -0.3], [-0.3, 0.5]]))
    sol = cm.solve(sr.specified_rates(m, 0.5, 0.5), "lin-han", tol=1e-10)
    assert sol.extras["distance"] == pytest.approx(2.1171770582, abs=1e-10)
    np.testing.assert_allclose(sol.extras["z_pos"], [0.7497945, 1.1144631], atol=1e-7)
    np.testing.assert_allclose(sol.extras["z_neg"], [-0.4675509, -0.6177346], atol=1e-7)
    assert max(sol.extras["theta_pos"], sol.extras["theta_neg"]) <= 1e-10
    assert 10 <= sol.iterations <= 60  # 34 here (angle measured as 2 sin(theta/2))


def test_point_classes():
    # kappa = 0 on both sides (eta = 1): the "ellipsoids" are the means, w = 2(mu1-mu2)/D^2
    mu1, mu2 = np.array([1.0, 2.0]), np.array([-1.0, 0.0])
    m = cm.ClassMoments(mu1, np.eye(2), mu2, 2 * np.eye(2))
    sol = cm.solve(sr.specified_rates(m, 1.0, 1.0), "lin-han")
    prog = sr.specified_rates(m, 1.0, 1.0)
    w = prog.decode(sol)["w"]
    np.testing.assert_allclose(w, 2 * (mu1 - mu2) / 8.0, atol=1e-14)
    assert sol.iterations == 0


def test_point_and_ellipsoid():
    # kappa_pos = 0, sphere of radius kappa*sigma on the negative side: closed form
    mu1, mu2 = np.array([4.0, 0.0, 0.0]), np.zeros(3)
    m = cm.ClassMoments(mu1, np.eye(3), mu2, 0.25 * np.eye(3))
    prog = sr.specified_rates(m, 1.0, 0.5)  # kappa_neg = 1, radius 0.5
    sol = cm.solve(prog, "lin-han")
    assert sol.extras["distance"] == pytest.approx(3.5, rel=1e-12)
    ref = cm.solve(prog, "clarabel")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-7)


# ---- infeasibility (note §5.3 item 5) -----------------------------------------------------

@pytest.mark.parametrize("form", ["primal", "dual"])
def test_infeasible_overlap(form):
    m = cm.ClassMoments(np.zeros(2), np.eye(2), np.array([1.0, 0.0]), np.eye(2))
    prog = sr.specified_rates(m, 0.5, 0.5, form=form)
    sol = cm.solve(prog, "lin-han")
    assert sol.status is cm.Status.INFEASIBLE
    # the note: t1 = 1 > t2 = 0 on the first segment
    assert sol.extras["t_pos"] == pytest.approx(1.0) and sol.extras["t_neg"] == pytest.approx(0.0)
    assert "error_pos=0.5" in sol.message and "error_neg=0.5" in sol.message
    with pytest.raises(SolverError, match="error_pos=0.5"):
        prog.decode(sol)


def test_infeasible_detected_later():
    # disjoint centres but overlapping ellipsoids: the overlap shows up on the first segment
    m = cm.ClassMoments(np.zeros(2), np.diag([9.0, 0.1]), np.array([2.0, 1.0]),
                        np.diag([0.1, 9.0]))
    prog = sr.specified_rates(m, 0.5, 0.5)
    assert cm.solve(prog, "clarabel").status is cm.Status.INFEASIBLE
    sol = cm.solve(prog, "lin-han")
    assert sol.status is cm.Status.INFEASIBLE
    assert sol.extras["t_pos"] >= sol.extras["t_neg"]


# ---- options, limits, warm start ----------------------------------------------------------

@pytest.fixture(scope="module")
def prog50():
    return sr.specified_rates(_random_instance(50, 9), 0.3, 0.4)


def test_max_iter_returns_user_limit(prog50):
    sol = cm.solve(prog50, "lin-han", max_iter=3)
    assert sol.status is cm.Status.USER_LIMIT
    assert sol.iterations == 3
    assert "max_iter" in sol.message
    # still a certified bracket around the optimum
    ref = cm.solve(prog50, "clarabel").objective
    assert sol.extras["lower_bound"] <= ref * (1 + 1e-7)
    assert sol.extras["upper_bound"] >= ref * (1 - 1e-7) or sol.extras["upper_bound"] == np.inf


def test_time_limit_and_callback(prog50):
    sol = cm.solve(prog50, "lin-han", time_limit=1e-12)
    assert sol.status is cm.Status.USER_LIMIT and "time" in sol.message
    seen = []

    def stop_at_five(result):
        seen.append(result.residual)
        if result.iteration >= 5:
            raise StopIteration

    sol = cm.solve(prog50, "lin-han", callback=stop_at_five)
    assert sol.status is cm.Status.USER_LIMIT and sol.iterations == 5 and len(seen) == 6
    assert sol.extras["stop_reason"] == 3


def test_warm_start(prog50):
    cold = cm.solve(prog50, "lin-han")
    warm = cm.solve(prog50, "lin-han", x0=(cold.extras["z_pos"], cold.extras["z_neg"]))
    assert warm.status is cm.Status.OPTIMAL
    assert warm.iterations < cold.iterations
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)
    with pytest.raises(OptionError, match="outside"):
        cm.solve(prog50, "lin-han", x0=(cold.extras["z_neg"], cold.extras["z_pos"]))


@pytest.mark.parametrize("options", [{"tol": 0.0}, {"tol": -1}, {"max_iter": -1},
                                     {"max_iter": 2.5}, {"time_limit": -1.0},
                                     {"x0": np.zeros(3)}, {"warm_start": True}])
def test_bad_options(prog50, options):
    with pytest.raises(OptionError):
        cm.solve(prog50, "lin-han", **options)


def test_singular_covariance_needs_epsilon():
    X, y = cm.datasets.twonorm(40, dim=2, random_state=1)
    prog = sr.specified_rates(X, y, 0.5, 0.5, kernel="rbf")  # H_i singular (note P5)
    with pytest.raises(SolverError, match="ridge > 0"):
        cm.solve(prog, "lin-han")


def test_wrong_kind():
    X = np.array([[1.0, 0.0], [-1.0, 0.0]])
    prog = cm.formulations.svm.soft_margin(X, np.array([1.0, -1.0]))
    with pytest.raises(SolverError):
        cm.solve(prog, "lin-han")


def test_verbose(prog50, capsys):
    cm.solve(prog50, "lin-han", verbose=True)
    out = capsys.readouterr().out
    assert "theta_pos" in out and "converged" in out


def test_termination_messages_cover_status_map():
    assert set(lin_han.TERMINATION_MESSAGES) == set(lin_han.STATUS_MAP)


def test_inner_ball_radius_is_delta_times_gradient():
    # note A1 / erratum: the ball centred at c = z - delta grad q(z) with delta =
    # lambda_min(Sigma)/2 has radius delta ||grad q(z)|| (not delta) and lies inside B
    rng = np.random.default_rng(11)
    A = rng.normal(size=(4, 4))
    cov, mu, kappa = A @ A.T + 0.2 * np.eye(4), rng.normal(size=4), 1.3
    E = lin_han._Ellipsoid(mu, cov, kappa, "test")
    delta = E.lam_min / 2
    for _ in range(20):
        u = rng.normal(size=4)
        z = mu + kappa * np.linalg.cholesky(cov) @ (u / np.linalg.norm(u))  # on the boundary
        assert E.q(z) == pytest.approx(0.0, abs=1e-10)
        grad = 2 * E.S @ (z - mu)
        c, radius = z - delta * grad, delta * np.linalg.norm(grad)
        dirs = rng.normal(size=(200, 4))
        pts = c + radius * dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
        assert max(E.q(p) for p in pts) <= 1e-9
        assert np.linalg.norm(c - z) == pytest.approx(radius)  # the ball touches B at z


def test_dual_values_are_unit_vectors():
    # at the optimum both constraints ||u|| <= 1 of (2.13) are active (Sigma > 0)
    prog = sr.specified_rates(_random_instance(6, 5), 0.3, 0.4, form="dual")
    sol = cm.solve(prog, "lin-han")
    for key in ("u_pos", "u_neg"):
        assert np.linalg.norm(sol.values[key]) == pytest.approx(1.0, abs=1e-9)
    model = prog.decode(sol)
    np.testing.assert_allclose(model["z_pos"], sol.extras["z_pos"], atol=1e-9)
