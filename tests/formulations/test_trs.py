"""Trust-region subproblem (Tayal 2014 eq. 7.9): more-sorensen vs the SDP / SOCP routes."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import conicml as cm
from conicml.exceptions import ProgramError, SolverError
from conicml.formulations.trust_region import trust_region_subproblem
from conicml.kinds import TRS, TRS_CONVEX
from conicml.solution import Status
from conicml.solvers.more_sorensen import secular_trs

from tolerances import obj_rtol, sol_atol


def _random_indefinite(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return (A + A.T) / 2, rng.standard_normal(n)


def _hard_case(n, seed, multiplicity=1, delta=2.0):
    # H = Q diag(lam) Q^T with lam_1 = -2 (repeated), g orthogonal to its eigenspace and
    # small, so that ||p|| < delta: the hard case (Moré & Sorensen 1983, section 4)
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam = np.concatenate([np.full(multiplicity, -2.0), rng.uniform(0.5, 3.0, n - multiplicity)])
    H = (Q * lam) @ Q.T
    c = rng.standard_normal(n) * 0.1
    c[:multiplicity] = 0.0
    return (H + H.T) / 2, Q @ c, delta


def _dual_value(H, g, delta):
    # independent route (note test 13): the 1-D Lagrangian dual, general-Delta form
    # max_{nu >= max(0, -lam_min)} -1/2 g'(H + nu I)^{-1} g - 1/2 nu Delta^2
    lam, Q = np.linalg.eigh(H)
    c = Q.T @ g
    low = max(0.0, -lam[0])

    def negdual(nu):
        return 0.5 * np.sum(c**2 / (lam + nu)) + 0.5 * nu * delta**2

    res = minimize_scalar(negdual, bounds=(low + 1e-12, low + 10 * np.abs(c).sum() / delta + 10),
                          method="bounded", options={"xatol": 1e-13})
    return -res.fun


INSTANCES = {
    "random6": lambda: (*_random_indefinite(6, 0), 0.7, None),
    "random12-scaled": lambda: (*_random_indefinite(12, 3), 1.3,
                                np.random.default_rng(5).uniform(0.5, 2.0, 12)),
    "interior-pd": lambda: (np.diag([3.0, 2.0, 5.0]), np.array([0.1, -0.2, 0.3]), 1.0, None),
    "hard": lambda: (*_hard_case(8, 1), None),
    "hard-double": lambda: (*_hard_case(8, 2, multiplicity=2), None),
}


@pytest.mark.parametrize("name", sorted(INSTANCES))
@pytest.mark.parametrize("solver", cm.solvers.available(TRS))
def test_sdp_route_agreement(name, solver):
    H, g, delta, d = INSTANCES[name]()
    prog = trust_region_subproblem(H, g, delta, scaling=d, form="sdp")
    assert prog.kind == TRS
    ref = cm.solve(prog, "more-sorensen")
    assert ref.status is Status.OPTIMAL  # certified by the recomputed KKT residuals
    # the SDP route's s is accurate to ~sqrt of the interior-point gap (q is flat to
    # second order along the sphere), hence tight tolerances for the comparison of s
    opts = {"eps_abs": 1e-9, "eps_rel": 1e-9} if solver == "clarabel" else {}
    sol = cm.solve(prog, solver, **opts)
    assert sol.status.has_solution
    tol = obj_rtol(solver)
    assert sol.objective == pytest.approx(ref.objective, rel=tol, abs=tol)
    decoded, expected = prog.decode(sol), prog.decode(ref)
    assert decoded["objective"] == pytest.approx(ref.objective, rel=obj_rtol(solver),
                                                 abs=obj_rtol(solver))
    if not name.startswith("hard"):  # the minimiser is unique outside the hard case
        np.testing.assert_allclose(decoded["s"], expected["s"], atol=sol_atol(solver))
    else:  # hard case: the decode moves the SDP point to the boundary
        dd = np.ones_like(g) if d is None else d
        assert np.linalg.norm(dd * decoded["s"]) == pytest.approx(delta, rel=1e-3)


@pytest.mark.parametrize("solver", cm.solvers.available(TRS_CONVEX))
def test_convex_socp_route_agreement(solver):
    rng = np.random.default_rng(11)
    A = rng.standard_normal((10, 7))
    H, g = A @ A.T / 7, rng.standard_normal(10) * 3  # PSD, rank 7: not strictly convex
    prog = trust_region_subproblem(H, g, 0.5)
    assert prog.kind == TRS_CONVEX
    ref = cm.solve(prog, "more-sorensen")
    sol = cm.solve(prog, solver)
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(solver))
    np.testing.assert_allclose(prog.decode(sol)["s"], prog.decode(ref)["s"],
                               atol=sol_atol(solver))


def test_solvers_offered():
    assert "ecos" not in cm.solvers.available(TRS)  # ECOS has no PSD cone
    assert {"clarabel", "scs", "more-sorensen"} <= set(cm.solvers.available(TRS))
    assert {"ecos", "clarabel", "more-sorensen"} <= set(cm.solvers.available(TRS_CONVEX))
    H, g = _random_indefinite(4, 0)
    with pytest.raises(SolverError, match="ecos"):
        cm.solve(trust_region_subproblem(H, g, 1.0), "ecos")


@pytest.mark.parametrize("seed", range(5))
def test_secular_equals_dual(seed):
    # strong duality (S-lemma): secular solution = the 1-D dual, computed independently
    H, g = _random_indefinite(6, seed)
    u, info = secular_trs(H, g, 0.7)
    assert info["case"] == "boundary"
    assert np.linalg.norm(u) == pytest.approx(0.7, rel=1e-10)
    assert g @ u + 0.5 * u @ H @ u == pytest.approx(_dual_value(H, g, 0.7), rel=1e-8)


def test_hard_case_closed_form():
    # H = diag(-1, 1), g = (0, 1): hard case, nu = 1, p = (0, -1/2),
    # s = (+-sqrt(Delta^2 - 1/4), -1/2) with Delta = 1: q = -1/2 - 1/2 (3/4 - 1/4)... computed:
    # q(s) = g's + s'Hs/2 = -1/2 + (-(3/4) + 1/4)/2 = -3/4
    H, g = np.diag([-1.0, 1.0]), np.array([0.0, 1.0])
    u, info = secular_trs(H, g, 1.0)
    assert info["case"] == "hard"
    assert info["nu"] == pytest.approx(1.0)
    assert abs(u[0]) == pytest.approx(np.sqrt(0.75))
    assert u[1] == pytest.approx(-0.5)
    assert g @ u + 0.5 * u @ H @ u == pytest.approx(-0.75)


def test_interior_closed_form():
    H, g = np.diag([2.0, 4.0]), np.array([1.0, -2.0])  # Newton step (-1/2, 1/2), norm 0.707
    sol = cm.solve(trust_region_subproblem(H, g, 1.0), "more-sorensen")
    np.testing.assert_allclose(sol.values["s"], [-0.5, 0.5], atol=1e-14)
    assert sol.extras["case"] == "interior"


def test_near_hard_case_agrees_with_sdp():
    # g almost orthogonal to q_1: the secular equation is stiff near nu = -lam_1
    H, g, delta = _hard_case(7, 4)
    lam, Q = np.linalg.eigh(H)
    g = g + 1e-7 * Q[:, 0]
    prog = trust_region_subproblem(H, g, delta)
    ref = cm.solve(prog, "more-sorensen")
    assert ref.status is Status.OPTIMAL
    assert ref.objective == pytest.approx(cm.solve(prog, "clarabel").objective, rel=1e-6)


def test_certificate_rejects_a_wrong_point():
    H, g = _random_indefinite(5, 7)
    prog = trust_region_subproblem(H, g, 0.7)
    sol = cm.solve(prog, "more-sorensen")
    bad = type(sol)(status=Status.OPTIMAL, solver="x", objective=0.0,
                    values={"s": -sol.values["s"]})
    res = prog.certify(bad)
    assert res.dual > 1e-3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"delta": 0.0}, "delta"),
        ({"delta": -1.0}, "delta"),
        ({"delta": np.inf}, "delta"),
        ({"g": np.array([1.0, np.nan, 0.0])}, "finite"),
        ({"g": np.ones(4)}, "shape"),
        ({"H": np.array([[1.0, 2.0, 0], [0.0, 1.0, 0], [0, 0, 1.0]])}, "symmetric"),
        ({"scaling": np.array([1.0, 0.0, 1.0])}, "scaling"),
        ({"H": -np.eye(3), "form": "socp"}, "semidefinite"),
        ({"form": "lp"}, "form"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"H": np.eye(3), "g": np.ones(3), "delta": 1.0}
    args.update(kwargs)
    with pytest.raises(ProgramError, match=match):
        trust_region_subproblem(**args)


def test_options_checked():
    prog = trust_region_subproblem(np.eye(2), np.ones(2), 0.1)
    with pytest.raises(cm.exceptions.OptionError):
        cm.solve(prog, "more-sorensen", tol=-1.0)


@pytest.mark.parametrize("solver", cm.solvers.available(TRS_CONVEX))
def test_linear_model_closed_form(solver):
    # H = 0: s = -Delta g / ||g||, q = -Delta ||g|| = -1.5
    prog = trust_region_subproblem(np.zeros((3, 3)), np.array([1.0, 2.0, 2.0]), 0.5)
    sol = cm.solve(prog, solver)
    assert sol.objective == pytest.approx(-1.5, rel=obj_rtol(solver))
    np.testing.assert_allclose(prog.decode(sol)["s"], [-1 / 6, -1 / 3, -1 / 3],
                               atol=sol_atol(solver))


def test_zero_gradient_negative_curvature():
    # g = 0, H = -I: any boundary point, q = -Delta^2 / 2 (hard case with p = 0)
    sol = cm.solve(trust_region_subproblem(-np.eye(3), np.zeros(3), 0.5), "more-sorensen")
    assert sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(-0.125)
    assert np.linalg.norm(sol.values["s"]) == pytest.approx(0.5)
