"""``m4-ipm`` (issue 14): the structured interior-point method of the soft M4's fixed-rho
slack SOCP, against the generic backends clarabel and ecos (scs looser) on random and
structured instances -- linear and kernel, separable and not, with and without the
reduction (4.36) -- and inside the line searches (the same G(rho*), rho*, (w, b)).

Numbers come from the generic backends solving the same SOCP
(:meth:`conicml.contracts.m4.M4Data.inner_problem`), and from a dense assembly of the
Newton system for the structured linear algebra.
"""

from __future__ import annotations

import numpy as np
import pytest

import conicml as cm
from conicml.certificates.margin import m4_fixed_rho_certificate
from conicml.estimators import M4Classifier
from conicml.exceptions import OptionError
from conicml.formulations import m4
from conicml.solvers._m4_inner import InnerSolver, point
from conicml.solvers._m4_ipm import SlackIPM, _SocScaling

from tolerances import obj_rtol, sol_atol

T2_X = np.array([(1, 0), (3, 0.5), (5, -0.5), (2, 1), (4, -1), (6, 0),
                 (-1, 0), (-1.3, 0.4), (-1.2, -0.4), (-1.6, 0.1), (-1.4, -0.2), (-1.1, 0.3)],
                dtype=float)
T2_Y = np.r_[np.ones(6), -np.ones(6)]


def _overlapping(seed, n_pos=25, n_neg=30):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n_pos, 2)) @ np.array([[1.5, 0.3], [0.0, 0.6]]) + 0.8,
                   rng.normal(size=(n_neg, 2)) * 0.9 - 0.5])
    return X, np.r_[np.ones(n_pos), -np.ones(n_neg)]


CASES = {
    "T2 separable": lambda: m4.m4(T2_X, T2_Y, 1.0),
    "overlapping": lambda: m4.m4(*_overlapping(0), 0.05),
    "overlapping reduced": lambda: m4.m4(*_overlapping(2), 0.05, reduction=0.4),
    "twonorm 5-d": lambda: m4.m4(*cm.datasets.twonorm(70, dim=5, random_state=4), 0.1),
    "twonorm rbf": lambda: m4.m4(*cm.datasets.twonorm(60, dim=4, random_state=7), 1.0,
                                 kernel="rbf", ridge=1e-3),
    "ringnorm rbf": lambda: m4.m4(*cm.datasets.ringnorm(60, dim=4, random_state=8), 0.2,
                                  kernel="rbf", ridge=1e-3),
    "twonorm rbf reduced": lambda: m4.m4(*cm.datasets.twonorm(50, dim=4, random_state=9), 0.02,
                                         kernel="rbf", ridge=1e-2, reduction=0.6),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fixed_rho_agrees_with_generic_backends(name):
    prog = CASES[name]()
    data = prog.data
    mdata = data["m4"]
    ipm = SlackIPM(mdata)
    kappa, _ = InnerSolver(prog, "clarabel").kappa_mpm()
    for frac in (0.2, 0.6, 0.95):
        rho = frac * kappa
        res = ipm.solve(rho)
        assert res.residual <= 1e-5, res.message
        w = res.w / float(data["d"] @ res.w)
        b = res.b / float(data["d"] @ res.w)
        # the program's recomputed KKT certificate of the SOCP at rho
        cert = m4_fixed_rho_certificate(
            data["Z"], data["y"], data["kept"], data["R_pos"], data["R_neg"], data["d"], rho,
            w, b, hard=False, n_removed=data["n_removed"] if data["reduction"] is not None
            else None)
        assert cert.max() <= 1e-6, (rho, cert)
        h = mdata.slack_total(w, b, rho)
        for backend in ("clarabel", "ecos"):
            ref = InnerSolver(prog, backend).check(rho)
            # the optimal value h(rho) (independent solver); the slacks recomputed at w, b
            assert h == pytest.approx(ref.objective, rel=1e-6, abs=1e-7), backend
            if ref.objective > 1e-3:  # a unique optimum: the point and the multipliers
                wr, br = point(ref)
                np.testing.assert_allclose(w, wr / float(data["d"] @ wr),
                                           atol=sol_atol(backend) * max(1.0, np.abs(w).max()))
                for key in ("margin_pos", "margin_neg"):
                    assert float(np.sum(res.duals[key])) == pytest.approx(
                        float(np.sum(ref.duals[key])), rel=1e-4, abs=1e-6)


def test_scs_agrees_loosely():
    prog = CASES["twonorm 5-d"]()
    kappa, _ = InnerSolver(prog, "clarabel").kappa_mpm()
    res = SlackIPM(prog.data["m4"]).solve(0.6 * kappa)
    ref = InnerSolver(prog, "scs").check(0.6 * kappa)
    assert res.objective == pytest.approx(ref.objective, rel=obj_rtol("scs"))


def test_newton_system_matches_dense_assembly():
    # the structured solve of [0 A' G'; A 0 0; G 0 -W'W] against numpy on the assembled
    # matrix, with random NT scalings, with and without the global row of the reduction
    rng = np.random.default_rng(0)
    for reduction in (None, 0.3):
        X, y = cm.datasets.twonorm(14, dim=3, random_state=3)
        ipm = SlackIPM(m4.m4(X, y, 0.5, reduction=reduction).data["m4"])
        rho, m, p = 0.7, ipm.m, ipm.p
        nx, nl = p + 4 + m, 2 * m + (2 if ipm.reduced else 0)

        def unpack(v):
            return (v[:p], v[p], v[p + 1], v[p + 2], v[p + 3:p + 3 + m], v[p + 3 + m])

        def pack(x):
            return np.concatenate([x[0], [x[1], x[2], x[3]], x[4], [x[5]]])
        G = np.array([np.concatenate(ipm._G(*unpack(e), rho)) for e in np.eye(nx)]).T
        z = rng.normal(size=G.shape[0])
        gt = ipm._GT(z[:nl], z[nl:nl + 1 + ipm.qp], z[nl + 1 + ipm.qp:], rho)
        np.testing.assert_allclose(pack(gt), G.T @ z, atol=1e-12)

        def rsoc(q):
            v = rng.normal(size=q + 1)
            v[0] = np.linalg.norm(v[1:]) + 0.5
            return v
        dl = rng.uniform(0.1, 3.0, nl)
        sp, zp, sn, zn = rsoc(ipm.qp), rsoc(ipm.qp), rsoc(ipm.qn), rsoc(ipm.qn)
        scp, scn = _SocScaling(sp, zp), _SocScaling(sn, zn)
        Wp = np.array([scp.apply(e) for e in np.eye(ipm.qp + 1)]).T
        Wn = np.array([scn.apply(e) for e in np.eye(ipm.qn + 1)]).T
        # Nesterov-Todd: W z = W^-1 s
        np.testing.assert_allclose(Wp @ zp, np.linalg.solve(Wp, sp), atol=1e-12)
        WW = np.zeros((G.shape[0], G.shape[0]))
        WW[:nl, :nl] = np.diag(1.0 / dl)
        WW[nl:nl + ipm.qp + 1, nl:nl + ipm.qp + 1] = Wp @ Wp
        WW[nl + ipm.qp + 1:, nl + ipm.qp + 1:] = Wn @ Wn
        A = np.zeros((1, nx))
        A[0, :p] = ipm.d
        K = np.block([[np.zeros((nx, nx)), A.T, G.T],
                      [A, np.zeros((1, 1)), np.zeros((1, G.shape[0]))],
                      [G, np.zeros((G.shape[0], 1)), -WW]])
        keep = np.ones(K.shape[0], dtype=bool)
        if not ipm.reduced:
            keep[nx - 1] = False  # xi_m does not exist
        bx = rng.normal(size=nx)
        bx[nx - 1] = bx[nx - 1] if ipm.reduced else 0.0
        by, bz = float(rng.normal()), rng.normal(size=G.shape[0])
        ref = np.zeros(K.shape[0])
        ref[keep] = np.linalg.solve(K[np.ix_(keep, keep)], np.r_[bx, by, bz][keep])
        ipm._factor(dl, scp, scn, rho)
        dx, dy, dz = ipm._solve(unpack(bx), by, bz, dl, scp, scn, rho)
        np.testing.assert_allclose(pack(dx)[keep[:nx]], ref[:nx][keep[:nx]], atol=1e-9)
        assert dy == pytest.approx(ref[nx], abs=1e-9)
        np.testing.assert_allclose(dz, ref[nx + 1:], atol=1e-9)


@pytest.mark.parametrize("name", ["overlapping", "overlapping reduced", "twonorm rbf",
                                  "ringnorm rbf"])
def test_line_searches_over_m4_ipm_agree_with_clarabel(name):
    prog = CASES[name]()
    ref = cm.solve(prog, "quadratic-interpolation", inner="clarabel")
    for solver in ("envelope-newton", "quadratic-interpolation"):
        sol = cm.solve(prog, solver, inner="m4-ipm")
        assert sol.status is cm.Status.OPTIMAL, sol.message
        assert sol.extras["inner"] == "m4-ipm"
        assert sol.residuals.source == "recomputed" and sol.residuals.max() <= 1e-6
        assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol("envelope-newton"),
                                              abs=1e-8)
        a, b_ = prog.decode(sol), prog.decode(ref)
        assert a["rho"] == pytest.approx(b_["rho"], rel=1e-4)
        key = "w" if "w" in a else "v"
        np.testing.assert_allclose(a[key], b_[key], atol=sol_atol("envelope-newton"))


def test_default_route_is_envelope_newton_over_m4_ipm():
    X, y = cm.datasets.twonorm(120, dim=5, random_state=1)
    est = M4Classifier(kernel="rbf").fit(X[:60], y[:60])
    assert est.solution_.solver == "envelope-newton"
    assert est.solution_.extras["inner"] == "m4-ipm"
    ref = M4Classifier(kernel="rbf", solver="quadratic-interpolation",
                       inner="clarabel").fit(X[:60], y[:60])
    assert est.solution_.objective == pytest.approx(ref.solution_.objective, rel=1e-6)
    np.testing.assert_array_equal(est.predict(X[60:]), ref.predict(X[60:]))
    # the separable M4 keeps a generic backend under inner="auto"
    sep = M4Classifier(C=None, kernel="rbf", gamma=0.5, ridge=1e-2).fit(X[:60], y[:60])
    assert sep.solution_.extras["inner"] == "clarabel"


def test_bad_options():
    soft = m4.m4(T2_X, T2_Y, 1.0)
    with pytest.raises(OptionError, match="tol, max_iter, warm_start"):
        cm.solve(soft, "envelope-newton", inner="m4-ipm", inner_options={"eps": 1e-3})
    with pytest.raises(OptionError, match="soft-margin"):
        cm.solve(m4.m4(T2_X, T2_Y), "bisection", inner="m4-ipm")
    with pytest.raises(ValueError, match="soft-margin"):
        SlackIPM(m4.m4(T2_X, T2_Y).data["m4"])


def test_broken_down_ipm_solves_fall_back_to_clarabel():
    # an IPM capped at 2 steps cannot converge: every fixed-rho solve is redone by
    # clarabel, counted, and the result is the clarabel route's
    prog = CASES["overlapping"]()
    sol = cm.solve(prog, "envelope-newton", inner="m4-ipm", inner_options={"max_iter": 2})
    ref = cm.solve(prog, "envelope-newton", inner="clarabel")
    assert sol.status is cm.Status.OPTIMAL
    assert sol.extras["inner_fallbacks"] == sol.iterations
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)


def test_warm_start_along_rho_agrees_with_generic_backends():
    # a solve at a rho near one solved before starts from that solve's saved central
    # iterate: fewer steps, and the same h(rho) as clarabel and ecos (independent solvers)
    prog = CASES["twonorm rbf"]()
    data, mdata = prog.data, prog.data["m4"]
    kappa, _ = InnerSolver(prog, "clarabel").kappa_mpm()
    rho0, rho1 = 0.6 * kappa, 0.6 * kappa * (1 + 1e-3)
    warm = SlackIPM(mdata)
    warm.solve(rho0)
    assert warm._warm  # the central iterate of rho0 was saved
    res = warm.solve(rho1)
    cold = SlackIPM(mdata).solve(rho1)
    assert res.iterations < cold.iterations
    w, b = res.w / float(data["d"] @ res.w), res.b / float(data["d"] @ res.w)
    cert = m4_fixed_rho_certificate(data["Z"], data["y"], data["kept"], data["R_pos"],
                                    data["R_neg"], data["d"], rho1, w, b, hard=False,
                                    n_removed=None)
    assert cert.max() <= 1e-6, cert
    for backend in ("clarabel", "ecos"):
        ref = InnerSolver(prog, backend).check(rho1)
        assert mdata.slack_total(w, b, rho1) == pytest.approx(ref.objective, rel=1e-6,
                                                              abs=1e-7), backend
    # a far rho (beyond _WARM_NEAR) starts cold: the same iterates as a fresh IPM
    far = warm.solve(0.2 * kappa)
    assert far.iterations == SlackIPM(mdata).solve(0.2 * kappa).iterations
    # warm_start=False is the cold start
    assert warm.solve(rho1, warm_start=False).iterations == cold.iterations


def test_rejected_warm_start_is_redone_cold(monkeypatch):
    # a warm run ending above _WARM_ACCEPT is discarded and the solve restarts cold
    import conicml.solvers._m4_ipm as ipm_module

    prog = CASES["ringnorm rbf"]()
    kappa, _ = InnerSolver(prog, "clarabel").kappa_mpm()
    ipm = SlackIPM(prog.data["m4"])
    ipm.solve(0.5 * kappa)
    monkeypatch.setattr(ipm_module, "_WARM_ACCEPT", -1.0)  # reject every unconverged warm run
    monkeypatch.setattr(ipm_module, "_WARM_SAVE", 0.0)
    res = ipm.solve(0.5 * kappa * (1 + 1e-3), tol=1e-30, max_iter=40)
    cold = SlackIPM(prog.data["m4"]).solve(0.5 * kappa * (1 + 1e-3), tol=1e-30, max_iter=40)
    assert res.objective == cold.objective
    np.testing.assert_array_equal(res.w, cold.w)
    assert res.iterations > cold.iterations  # the discarded warm steps are counted


def test_line_search_warm_and_cold_agree():
    # envelope-newton over m4-ipm with and without the warm start: the same G(rho*)
    prog = CASES["ringnorm rbf"]()
    warm = cm.solve(prog, "envelope-newton", inner="m4-ipm")
    cold = cm.solve(prog, "envelope-newton", inner="m4-ipm",
                    inner_options={"warm_start": False})
    assert warm.status is cm.Status.OPTIMAL and cold.status is cm.Status.OPTIMAL
    assert warm.objective == pytest.approx(cold.objective, rel=obj_rtol("envelope-newton"),
                                           abs=1e-8)
    assert warm.extras["ipm_steps"] < cold.extras["ipm_steps"]


# ---- kernel cone factors by their structure ---------------------------------------------

def _dense_factors(ipm, data):
    from scipy.linalg import solve_triangular

    return [solve_triangular(ipm.L, R.T, trans="T", lower=True).T
            for R in (data.R_pos, data.R_neg)]


def test_kernel_cone_factors_have_the_dense_factors_gram():
    X, y = cm.datasets.twonorm(70, dim=4, random_state=5)
    prog = m4.m4(X, y, "auto", kernel="rbf", ridge=(1e-2))
    ipm = SlackIPM(prog.data["m4"])
    assert ipm._cones is not None  # Z = L, every point kept, a scalar ridge
    Rp, Rn = _dense_factors(ipm, prog.data["m4"])
    rng = np.random.default_rng(0)
    w = rng.normal(size=ipm.p)
    ap, an = ipm._cones.apply(w)
    # the same norms (all a cone reads) and adjoints consistent with the products
    assert np.linalg.norm(ap) == pytest.approx(np.linalg.norm(Rp @ w), rel=1e-12)
    assert np.linalg.norm(an) == pytest.approx(np.linalg.norm(Rn @ w), rel=1e-12)
    up, un = rng.normal(size=ipm.qp), rng.normal(size=ipm.qn)
    lhs = float(ap @ up + an @ un)
    assert lhs == pytest.approx(float(w @ ipm._cones.adjoint(up, un)), rel=1e-12)
    np.testing.assert_allclose(ipm.Rp.T @ up, ipm._cones.adjoint(up, 0 * un), atol=1e-12)
    # the Gram matrices R_c^T R_c = rho_c K^-1 + (diag(1_c) - 1_c 1_c^T / n_c) / n_c (the
    # closed form the Newton matrix is assembled from), as the dense factors' own
    cones, Kinv = ipm._cones, ipm._cones.kinv()
    grams = []
    for root, mask, n_c in zip(cones.roots, cones.masks, cones.sizes, strict=True):
        c = mask.astype(float)
        grams.append(root**2 * Kinv + (np.diag(c) - np.outer(c, c) / n_c) / n_c)
    for S, R in zip(grams, (Rp, Rn), strict=True):
        ref = R.T @ R
        np.testing.assert_allclose(S, ref, atol=1e-10 * float(np.abs(ref).max()))
    # factors that are not of that form (a ridge that is no multiple of I) are kept
    data = prog.data["m4"]
    fit = type(ipm._cones).fit
    assert fit(ipm.L, ipm.pos, data.R_pos, data.R_neg) is not None
    scaled = data.R_pos * np.r_[np.ones(ipm.p - 1), 2.0]
    assert fit(ipm.L, ipm.pos, scaled, data.R_neg) is None


def test_kernel_cone_factors_give_the_dense_factors_solution():
    X, y = cm.datasets.ringnorm(80, dim=4, random_state=6)
    prog = m4.m4(X, y, "auto", kernel="rbf", ridge=1e-3)
    rho = 0.5 * InnerSolver(prog, "m4-ipm").kappa_mpm()[0]
    fast = SlackIPM(prog.data["m4"])
    dense = SlackIPM(prog.data["m4"])
    dense._cones = None
    dense.Rp, dense.Rn = _dense_factors(dense, prog.data["m4"])
    dense.qp, dense.qn = dense.Rp.shape[0], dense.Rn.shape[0]
    dense.Sp, dense.Sn = dense.Rp.T @ dense.Rp, dense.Rn.T @ dense.Rn
    dense._Kinv = None
    # one Newton matrix: K^-1 and the class structure assembled (fast) against the dense
    # Gram matrices R^T R (dense); the cones' NT scalings at s = a e, z = b e (each in
    # its own cone, of different orders) are eta^2 I with eta^2 = a / b, which weighs
    # the two classes' Gram matrices differently
    rng = np.random.default_rng(1)
    dl = rng.uniform(0.5, 2.0, 2 * fast.m + (2 if fast.reduced else 0))
    for ipm in (fast, dense):
        scalings = [_SocScaling(np.r_[a, np.zeros(q)], np.r_[b, np.zeros(q)])
                    for q, a, b in ((ipm.qp, 3.0, 0.5), (ipm.qn, 0.2, 1.5))]
        ipm._factor(dl, *scalings, rho)
    Lf, Ld = np.tril(fast._H[0]), np.tril(dense._H[0])
    np.testing.assert_allclose(Lf, Ld, atol=1e-9 * float(np.abs(Ld).max()))
    a, b = fast.solve(rho, warm_start=False), dense.solve(rho, warm_start=False)
    assert a.converged and b.converged
    # the same problem and central path (only R^T R enters the cones)
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-10)
    np.testing.assert_allclose(a.w, b.w, atol=1e-6 * max(1.0, float(np.abs(b.w).max())))
    # and the generic backend's fixed-rho SOCP
    ref = InnerSolver(prog, "clarabel").check(rho)
    assert a.objective == pytest.approx(ref.objective, rel=obj_rtol("clarabel"), abs=1e-7)
