"""Robust CBC (seed 003 ch. 6; note F5, A5, §5.3 tests 14-16).

Expected numbers: the note's §5.3 test 14 (Theorem 6.2, verified there by direct
NLP minimisation of (6.16); re-checked here with scipy's SLSQP), test 15 (the R1/R2
radius table) and Table 6.1 of the thesis (Monte Carlo, reduced run count).
"""


import numpy as np
import pytest
from scipy import optimize, stats

import conicml as cm
from conicml.formulations import cbc
from conicml.moments import ClusterMoments

KAPPA_09 = stats.norm.ppf(0.9)  # 1.2815516, the Gaussian kappa of ch. 6


# ---- test 14: Theorem 6.2 and its cubic (6.20) ---------------------------------------------

def _cubic(z, m, n, s2, kappa, f):
    # (6.20) exactly as printed in the thesis
    return (2 * m * n**2 * z**3 + m * n * s2 * (kappa**2 - 4 * n) * z**2
            + 2 * m * n * s2**2 * (n - kappa**2) * z + kappa**2 * s2**3 * (n * m - 2 * f))


def test_theorem_6_2_values():
    # note §5.3 test 14: n = 3, m = 50, sigma_hat^2 = 1.7, kappa = 1.2, f = chi2_4(0.9)
    m, n, s2, kappa = 50, 3, 1.7, 1.2
    f = stats.chi2.ppf(0.9, n + 1)
    assert f == pytest.approx(7.779440, abs=1e-6)
    z = cbc.sigma_star(m, n, s2, kappa, f)
    assert z == pytest.approx(1.92877778, abs=1e-8)
    assert abs(_cubic(z, m, n, s2, kappa, f)) < 1e-9 * m * n**2 * z**3
    g = np.sqrt(2 * n * f * z / (m * (2 * n * z + kappa**2 * s2)))
    assert g == pytest.approx(0.35836168, abs=1e-8)
    # uniqueness (Claim 1, corrected p(s2) = -2 kappa^2 s2^3 f): one real root above s2
    roots = np.roots([2 * m * n**2, m * n * s2 * (kappa**2 - 4 * n),
                      2 * m * n * s2**2 * (n - kappa**2), kappa**2 * s2**3 * (n * m - 2 * f)])
    real = roots[np.abs(roots.imag) < 1e-9].real
    assert np.sum(real > s2) == 1
    assert _cubic(s2, m, n, s2, kappa, f) == pytest.approx(-2 * kappa**2 * s2**3 * f)


def test_theorem_6_2_minimum_by_nlp():
    # min over the joint set V <= f of y w.mu - kappa sigma ||w|| (6.16) equals
    # y w.mu_hat - (kappa sigma* + g* sigma_hat) ||w||; note value -3.0565743 for
    # w = (0.3, -1.1, 0.5), y = 1, mu_hat = (1, 2, 3); re-derived here with SLSQP
    m, n, s2, kappa = 50, 3, 1.7, 1.2
    f = stats.chi2.ppf(0.9, n + 1)
    w, mu_hat = np.array([0.3, -1.1, 0.5]), np.array([1.0, 2.0, 3.0])
    radius = cbc.r2_radii(np.array([m]), np.array([s2]), n, kappa, 0.9)[0]
    closed = w @ mu_hat - radius * np.linalg.norm(w)
    assert closed == pytest.approx(-3.0565743, abs=1e-7)

    def objective(v):
        return w @ v[:3] - kappa * np.sqrt(v[3]) * np.linalg.norm(w)

    def slack(v):  # f - V(mu, sigma^2), (6.12)-(6.13)
        d = v[:3] - mu_hat
        return f - (m / s2 * d @ d + n * m / (2 * s2**2) * (v[3] - s2) ** 2)

    res = optimize.minimize(objective, np.r_[mu_hat, s2], method="SLSQP",
                            constraints=[{"type": "ineq", "fun": slack}],
                            bounds=[(None, None)] * 3 + [(1e-6, None)],
                            options={"ftol": 1e-14, "maxiter": 500})
    assert res.fun == pytest.approx(closed, abs=1e-6)


def test_theorem_6_2_kappa_zero_limit():
    # kappa -> 0: sigma* = sigma_hat and g* = sqrt(f / m) (note §5.3 test 14)
    m, n, s2 = 80, 4, 2.5
    f = stats.chi2.ppf(0.9, n + 1)
    assert cbc.sigma_star(m, n, s2, 0.0, f) == s2
    z = cbc.sigma_star(m, n, s2, 1e-6, f)
    assert z == pytest.approx(s2, rel=1e-6)  # z - s2 = O(kappa)
    radius = cbc.r2_radii(np.array([m]), np.array([s2]), n, 0.0, 0.9)[0]
    assert radius == pytest.approx(np.sqrt(f / m) * np.sqrt(s2), rel=1e-12)


# ---- test 15: the R1 / R2 radius table ------------------------------------------------------

@pytest.mark.parametrize("c, r1, sigma_star, g_star, r2", [
    # note §5.3 test 15: m = 100, n = 2, sigma_hat^2 = 1, kappa = Phi^-1(0.9)
    (0.9, 1.7361569, 1.0625980, 0.2141105, 1.5758847),
    (0.5, 1.5471386, 1.0395721, 0.1309413, 1.4632065),
    (0.1, 1.4119394, 1.0201280, 0.0647334, 1.3720801),
])
def test_radius_table(c, r1, sigma_star, g_star, r2):
    m, n = np.array([100.0]), 2
    assert cbc.r1_radii(m, np.array([1.0]), n, KAPPA_09, c)[0] == pytest.approx(r1, abs=1e-7)
    f = stats.chi2.ppf(c, n + 1)
    z = cbc.sigma_star(100, n, 1.0, KAPPA_09, f)
    assert np.sqrt(z) == pytest.approx(sigma_star, abs=1e-7)
    g = np.sqrt(2 * n * f * z / (100 * (2 * n * z + KAPPA_09**2)))
    assert g == pytest.approx(g_star, abs=1e-7)
    assert cbc.r2_radii(m, np.array([1.0]), n, KAPPA_09, c)[0] == pytest.approx(r2, abs=1e-7)
    assert r1 > r2 > KAPPA_09  # R1 > R2 > kappa sigma_hat (note §5.3 test 15)


def test_radius_table_components():
    # note §5.3 test 15 at c = 0.9: p(sqrt c) = 0.2487094, r(sqrt c) = 1.1606615,
    # q(sqrt c) = 0.8786439, f = chi2_3(0.9) = 6.2513886
    sc = np.sqrt(0.9)
    m, v = np.array([100.0]), np.array([1.0])
    assert cbc.hotelling_radius(m, v, 2, sc)[0] == pytest.approx(0.2487094, abs=1e-7)
    q2, r2 = cbc.variance_bounds(m, v, sc)
    assert np.sqrt(r2[0]) == pytest.approx(1.1606615, abs=1e-7)
    assert np.sqrt(q2[0]) == pytest.approx(0.8786439, abs=1e-7)
    assert stats.chi2.ppf(0.9, 3) == pytest.approx(6.2513886, abs=1e-7)


def test_cbc_radii_conventions():
    # the robust radii use the per-dimension variance whatever the stored convention (P7):
    # a "trace" sigma^2 = n * 1 must give the same radii as "per-dimension" sigma^2 = 1
    means = np.array([[0.0, 0.0], [3.0, 0.0]])
    trace = ClusterMoments(means, np.sqrt([2.0, 2.0]), [100, 100], [1, -1], sigma="trace")
    perdim = ClusterMoments(means, [1.0, 1.0], [100, 100], [1, -1], sigma="per-dimension")
    for robust in ("R1", "R2"):
        a = cbc.cbc_radii(trace, 0.9, bound="gaussian", robust=robust)
        b = cbc.cbc_radii(perdim, 0.9, bound="gaussian", robust=robust)
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # R2 at m = 100, per-dimension MLE variance 1: the table value 1.5758847
    r2 = cbc.cbc_radii(perdim, 0.9, bound="gaussian", robust="R2", confidence=0.9)
    np.testing.assert_allclose(r2, 1.5758847, atol=1e-7)
    # R1 uses the unbiased variance m/(m-1) * MLE: radius scales by sqrt(100/99)
    r1 = cbc.cbc_radii(perdim, 0.9, bound="gaussian", robust="R1", confidence=0.9)
    np.testing.assert_allclose(r1, 1.7361569 * np.sqrt(100 / 99), atol=1e-6)
    # a single-point cluster has sigma_hat = 0 and an R2 radius of 0
    single = ClusterMoments(means, [0.0, 1.0], [1, 100], [1, -1], sigma="per-dimension")
    assert cbc.cbc_radii(single, 0.9, bound="gaussian", robust="R2")[0] == 0.0


# ---- RCBC programs: same SOCP, larger spheres -----------------------------------------------

def test_robust_objective_ordering():
    # Table 6.3 pattern: RCBC2's objective is higher than CBC's (tighter constraints) and
    # the gap shrinks as the confidence 1 - delta decreases; RCBC1 is the most pessimistic
    rng = np.random.default_rng(5)
    means = np.r_[rng.normal(size=(4, 2)) + 2.0, rng.normal(size=(4, 2)) - 2.0]
    clusters = ClusterMoments(means, 0.3 + 0.2 * rng.random(8), np.full(8, 40),
                              [1, 1, 1, 1, -1, -1, -1, -1], sigma="per-dimension")
    obj = {}
    for robust, c in [(None, 0.9), ("R2", 0.9), ("R2", 0.5), ("R2", 0.1), ("R1", 0.9)]:
        prog = cbc.cbc(clusters, 1.0, 0.9, bound="gaussian", robust=robust, confidence=c)
        obj[robust, c] = cm.solve(prog, "clarabel").objective
        smo = cm.solve(cbc.cbc(clusters, 1.0, 0.9, bound="gaussian", robust=robust,
                                  confidence=c, form="dual"), "cbc-smo")
        assert smo.objective == pytest.approx(obj[robust, c], rel=1e-6)
    assert obj["R1", 0.9] > obj["R2", 0.9] > obj["R2", 0.5] > obj["R2", 0.1] > obj[None, 0.9]


# ---- test 16: Table 6.1 (reduced Monte Carlo) -----------------------------------------------

def _monte_carlo():
    from conicml.reproductions import saketha_table_6_1

    return saketha_table_6_1


def test_table_6_1_reduced():
    # 4000 runs at eta = 0.9 (the thesis: 20 000). Thesis e_eta: E 0.10302, T 0.09999,
    # R1 0.04257, R2 0.06020; p_eta %: E 52.93, T 50.41, R1 0.00, R2 1.25. The standard
    # error of e_eta at 4000 runs is ~3e-4 (E-SOC), so +-0.002 is a 6-sigma band.
    mc = _monte_carlo()
    errors = mc.simulate(0.9, 4000, seed=1)
    e = {k: mc.summary(v, 0.9) for k, v in errors.items()}
    assert e["T-SOC"][0] == pytest.approx(0.09999, abs=0.002)
    assert e["E-SOC"][0] == pytest.approx(0.10302, abs=0.002)
    assert e["R2-SOC"][0] == pytest.approx(0.06020, abs=0.002)
    assert e["R1-SOC"][0] == pytest.approx(0.04257, abs=0.002)
    # p_eta as a fraction of the runs (the thesis prints percent)
    assert 100 * e["E-SOC"][2] == pytest.approx(52.93, abs=3.0)
    assert 100 * e["R2-SOC"][2] == pytest.approx(1.25, abs=0.8)
    assert 100 * e["R1-SOC"][2] < 0.3


@pytest.mark.slow
def test_table_6_1_full():
    # the full 20 000-run study at every eta of Table 6.1: e_eta within +-0.002
    mc = _monte_carlo()
    for eta, row in mc.THESIS.items():
        errors = mc.simulate(eta, 20_000, seed=2)
        for name, (e_thesis, _, _) in row.items():
            assert mc.summary(errors[name], eta)[0] == pytest.approx(e_thesis, abs=0.002)
