"""Kernel MPM/BMPM written in dual coefficients (``coordinates="coefficients"``).

The same program as the feature-map form under :math:`u = \\Phi^\\top z`: the references
are the feature-map program solved by ``ils-newton`` (the current solver), Clarabel and
ECOS (generic backends, on both forms), and the identities of the Woodbury solves
against :class:`~conicml.contracts.minimax.KernelScatter` through the Cholesky factor of
:math:`K` (:math:`u = L^\\top z`). No timing is asserted (``benchmarks/kernel_fit_speed.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

import conicml as cm
from conicml.certificates.margin import gram_fractional_certificate
from conicml.contracts.minimax import GramScatter
from conicml.estimators import BMPMClassifier, MPMClassifier
from conicml.exceptions import ProgramError
from conicml.formulations import minimax as mm

# (seed, n, data set, kernel, ridge): poly is the homogeneous cubic in 5 dimensions, whose
# Gram matrix has rank 35 < n (the representatives z are then not unique: decision values
# and objectives are compared, not coefficients); ridge pairs give unequal shifts
CASES = [(0, 60, "twonorm", "rbf", 1e-3), (1, 90, "ringnorm", "rbf", (1e-2, 1e-3)),
         (2, 70, "twonorm", "poly", 1e-3), (9, 120, "ringnorm", "rbf", 1e-3)]
IDS = [f"{k}-{kern}-n{n}" for _, n, k, kern, _ in CASES]


def _data(seed, n, kind):
    return getattr(cm.datasets, kind)(n, dim=5, random_state=seed)


def _programs(family, X, y, kernel, ridge):
    kw = dict(ridge=ridge, kernel=kernel)
    if family == "mpm":
        return mm.mpm(X, y, **kw), mm.mpm(X, y, coordinates="coefficients", **kw)
    beta0 = 0.5 * mm.bmpm(X, y, 0.0, **kw).data["beta0_max"]
    return (mm.bmpm(X, y, beta0, **kw),
            mm.bmpm(X, y, beta0, coordinates="coefficients", **kw))


@pytest.mark.parametrize("family", ["mpm", "bmpm"])
@pytest.mark.parametrize("seed, n, kind, kernel, ridge", CASES, ids=IDS)
def test_coefficient_program_gives_the_feature_program_model(family, seed, n, kind, kernel,
                                                              ridge):
    X, y = _data(seed, n, kind)
    feat, coef = _programs(family, X, y, kernel, ridge)
    assert coef.data["coordinates"] == "coefficients"
    assert coef.data["beta0_max"] == pytest.approx(feat.data["beta0_max"], rel=1e-10,
                                                   nan_ok=True)
    ref = cm.solve(feat, "ils-newton")
    sol = cm.solve(coef, "ils-newton")
    for s in (ref, sol):
        assert s.status is cm.Status.OPTIMAL, s.message
        assert "delegated" not in s.extras
    assert sol.residuals.source == "recomputed" and sol.residuals.max() <= 1e-9
    # both stop at |g(c)| <= 1e-11 on the same weight curve
    assert sol.objective == pytest.approx(ref.objective, rel=1e-10)
    m_ref, m = feat.decode(ref), coef.decode(sol)
    for key in ("alpha", "beta", "kappa"):
        assert m[key] == pytest.approx(m_ref[key], rel=1e-10)
    Xt, _ = _data(seed + 100, 50, kind)
    f_ref = mm.decision_values(feat.data, m_ref, Xt)
    f = mm.decision_values(coef.data, m, Xt)
    np.testing.assert_allclose(f, f_ref, atol=1e-7 * max(1.0, float(np.abs(f_ref).max())))
    assert m["b"] == pytest.approx(m_ref["b"], abs=1e-7 * max(1.0, abs(m_ref["b"])))
    if kernel == "rbf":  # K nonsingular: the coefficients themselves are unique
        scale = float(np.abs(m_ref["dual_coef"]).max())
        np.testing.assert_allclose(m["dual_coef"], m_ref["dual_coef"], atol=1e-7 * scale)


@pytest.mark.parametrize("family", ["mpm", "bmpm"])
@pytest.mark.parametrize("seed, n, kind, kernel, ridge", CASES[:3], ids=IDS[:3])
def test_coefficient_program_agrees_with_clarabel_and_ecos(family, seed, n, kind, kernel,
                                                           ridge):
    X, y = _data(seed, n, kind)
    feat, coef = _programs(family, X, y, kernel, ridge)
    sol = cm.solve(coef, "ils-newton")
    m = coef.decode(sol)
    Xt, _ = _data(seed + 100, 50, kind)
    f = mm.decision_values(coef.data, m, Xt)
    for name in ("clarabel", "ecos"):
        for prog in (coef, feat):  # the coefficient program's own cvxpy form, and the other
            ref = cm.solve(prog, name)
            assert ref.status is cm.Status.OPTIMAL, ref.message
            # interior-point accuracy ~1e-8 in the objective; the flat kernel optimum
            # (ridge 1e-3) leaves the point itself accurate to ~3e-4
            assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
            m_ref = prog.decode(ref)
            for key in ("alpha", "beta"):
                assert m[key] == pytest.approx(m_ref[key], rel=1e-6)
            f_ref = mm.decision_values(prog.data, m_ref, Xt)
            np.testing.assert_allclose(f, f_ref,
                                       atol=1e-3 * max(1.0, float(np.abs(f_ref).max())))


def test_gram_scatter_is_kernel_scatter_under_the_cholesky_map():
    """Every operation on representatives z maps to KernelScatter's on u = L^T z."""
    X, y = _data(3, 150, "twonorm")
    feat = mm.bmpm(X, y, 0.3, kernel="rbf", ridge=(1e-3, 3e-3))
    D = feat.data
    L, sc = D["coef_map"].L, D["scatter"]
    K = L @ L.T
    n_x, n = D["n_pos"], K.shape[0]
    e = np.r_[np.full(n_x, 1.0 / n_x), np.full(n - n_x, -1.0 / (n - n_x))]
    gs = GramScatter(K, n_x, D["rho_x"], D["rho_y"], mm._class_centred_gram(K.copy(), n_x), e)
    np.testing.assert_allclose(L.T @ e, D["d"], atol=1e-13)
    Z = np.random.default_rng(0).normal(size=(n, 3))
    U = L.T @ Z
    np.testing.assert_allclose(L.T @ gs.sigma_x(Z), sc.sigma_x(U), atol=1e-12)
    np.testing.assert_allclose(L.T @ gs.sigma_y(Z), sc.sigma_y(U), atol=1e-12)
    np.testing.assert_allclose(gs.inner_matrix(Z, Z), U.T @ U, rtol=1e-12)
    for c in (0.2, 0.55, 0.9):  # both factor orders (held x for c >= 1/2, else y)
        a, b = gs.solve(c, Z), sc.solve(c, U)
        np.testing.assert_allclose(L.T @ a, b, atol=1e-10 * float(np.abs(b).max()))
    b = sc.solve_y(D["d"])
    np.testing.assert_allclose(L.T @ gs.solve_y(e), b, atol=1e-10 * float(np.abs(b).max()))
    # the solve with d_rep itself reads the kept K d_rep: the same as with a copy of it
    for c in (0.3, 0.8):
        b = sc.solve(c, D["d"])
        for z in (gs.solve(c, gs.d_rep), gs.solve(c, gs.d_rep.copy())):
            np.testing.assert_allclose(L.T @ z, b, atol=1e-10 * float(np.abs(b).max()))


def test_gram_certificate_rejects_points_off_the_optimum():
    X, y = _data(4, 80, "twonorm")
    _, coef = _programs("bmpm", X, y, "rbf", 1e-3)
    sol = cm.solve(coef, "ils-newton")
    v = np.asarray(sol.values["v"])
    args = (coef.data["scatter"], coef.data["a"], coef.data["b"])
    ok = gram_fractional_certificate(*args, v, sol.objective)
    assert ok.max() <= 1e-9
    # the margin row violated by 1 %: primal ~1e-2
    assert gram_fractional_certificate(*args, 0.99 * v, None).primal > 1e-3
    # the same array changed in place is certified afresh (no product with K kept from
    # the first call)
    u = v.copy()
    assert gram_fractional_certificate(*args, u, None).max() <= 1e-9
    u *= 0.99
    assert gram_fractional_certificate(*args, u, None).primal > 1e-3
    # another direction (rescaled onto the row): not stationary
    w = v + 0.05 * np.abs(v).max() * np.random.default_rng(1).normal(size=v.size)
    res = gram_fractional_certificate(*args, w / mm.ratio(coef.data, w), None)
    assert max(res.dual, res.gap) > 1e-6


def test_estimators_use_coefficients_on_the_ils_newton_route():
    X, y = _data(5, 80, "ringnorm")
    for cls in (MPMClassifier, BMPMClassifier):
        auto = cls(kernel="rbf").fit(X, y)
        assert auto.program_.data["coordinates"] == "coefficients"
        other = cls(kernel="rbf", solver="dinkelbach").fit(X, y)
        assert "coordinates" not in other.program_.data  # the feature-map program
        f, f_ref = auto.decision_function(X), other.decision_function(X)
        np.testing.assert_allclose(f, f_ref, atol=1e-7 * max(1.0, float(np.abs(f_ref).max())))
        assert auto.alpha_ == pytest.approx(other.alpha_, rel=1e-9)
    # a kernel not positive semi-definite by construction keeps the feature map (whose
    # factorisation reports an indefinite Gram matrix), as does another solver
    assert MPMClassifier(kernel="poly", coef0=-1.0)._coordinates() == "features"
    assert MPMClassifier(kernel="rbf", solver="clarabel")._coordinates() == "features"


def test_unknown_coordinates_are_refused():
    X, y = _data(0, 40, "twonorm")
    with pytest.raises(ProgramError, match="coordinates must be one of"):
        mm.mpm(X, y, kernel="rbf", ridge=1e-3, coordinates="dual")


@pytest.mark.parametrize("n, n_x", [(60, 25), (700, 300)])
def test_class_centred_gram_is_j_k_j(n, n_x):
    # G = J K J with J the per-class centring over sqrt(N_a), formed densely here
    rng = np.random.default_rng(5)
    A = rng.standard_normal((n, 4))
    K = A @ A.T
    J = np.zeros((n, n))
    for blk in (slice(0, n_x), slice(n_x, n)):
        m = blk.stop - blk.start
        J[blk, blk] = (np.eye(m) - 1.0 / m) / np.sqrt(m)
    ref = J @ K @ J
    E = np.zeros((n, 2))
    E[:n_x, 0], E[n_x:, 1] = 1.0 / n_x, 1.0 / (n - n_x)
    scale = np.abs(ref).max()
    for G in (mm._class_centred_gram(K, n_x, out=np.empty_like(K)),
              mm._class_centred_gram(K, n_x, out=np.empty_like(K), means=K @ E),
              mm._class_centred_gram(K.copy(), n_x)):
        assert np.abs(G - ref).max() <= 1e-12 * scale


@pytest.mark.parametrize("c", [0.3, 0.8])
def test_kept_solves_predict_the_next_weights_solution(c):
    """The first iterate of a solve along the weight curve (``_start``): a kept solution
    S(c) = D_c C X(c) of H(c) S = C B (closed form, from the Woodbury identity) carried
    to c' by D_c' D_c^-1 is first-order accurate, and with the tangent solve's
    X_t = M^-1 (Sigma_x - Sigma_y) X = -X'(c) second-order (Taylor's theorem), as with
    the secant through a second kept solution at c - h instead (error O(h * 2h)): the
    errors against the solution at c' = c + h itself fall as h, h^2 and h^2."""
    X, y = _data(6, 120, "ringnorm")
    _, coef = _programs("bmpm", X, y, "rbf", (2e-3, 1e-3))
    sc = coef.data["scatter"]
    e = sc.d_rep
    Xc = sc.solve(c, e)
    entry = sc._recent[0]
    T, S = entry[1], entry[2]
    D = np.r_[np.full(sc.n_x, c), np.full(e.size - sc.n_x, 1.0 - c)]
    np.testing.assert_allclose(S, D * sc._c(Xc[:, None])[:, 0], rtol=0,
                               atol=1e-10 * np.abs(S).max())
    Sx, Sy = sc.sigmas(Xc[:, None])
    sc.solve(c, (Sx - Sy)[:, 0], tangent_of=e)
    assert entry[4] is not None  # the tangent is attached to the solve with e

    def errors(h):
        exact = sc.solve(c + h, e, rtol=1e-14)
        Dh = np.r_[np.full(sc.n_x, c + h), np.full(e.size - sc.n_x, 1.0 - c - h)]
        ref = Dh * sc._c(exact[:, None])[:, 0]
        sc._recent = [entry]
        second = sc._start(c + h, T[:, None])[:, 0]
        sc._recent = [[*entry[:4], None]]
        first = sc._start(c + h, T[:, None])[:, 0]
        sc.solve(c - h, e, rtol=1e-14)
        sc._recent = [[*entry[:4], None], [*sc._recent[0][:4], None]]
        secant = sc._start(c + h, T[:, None])[:, 0]
        scale = np.linalg.norm(ref)
        return [np.linalg.norm(v - ref) / scale for v in (first, second, secant)]

    (f1, s1, q1), (f2, s2, q2) = errors(1e-2), errors(1e-3)
    assert 5 < f1 / f2 < 20  # first order
    assert 50 < s1 / s2 < 200  # second order
    assert 50 < q1 / q2 < 200  # second order (the secant)
    assert s2 < 1e-2 * f2 and q2 < 1e-2 * f2


@pytest.mark.parametrize("family, ridge, above", [("bmpm", 1e-3, True),
                                                  ("mpm", (1e-3, 1e-2), True),
                                                  ("mpm", (1e-2, 1e-3), False)])
def test_gram_certificate_equals_the_dense_feature_certificate(family, ridge, above):
    # the certificate in dual coefficients (two solves with M(c'), with the Lagrangian's
    # gradient and g_x - g_y; M(c')^-1 d and M(c')^-1 g_x, g_y from alpha M(c')v = lambda d
    # - gradient and M(c')v = c' g_x + (1 - c') g_y) against the dense one of
    # the feature program at u = L^T z (K = L L^T), at the optimum and off it, with the
    # solver's kept solutions as first iterates and without; the ridges put the weight
    # c' on both sides of 1/2
    from conicml.certificates.margin import fractional_certificate

    X, y = _data(7, 110, "twonorm")
    feat, coef = _programs(family, X, y, "rbf", ridge)
    D = feat.data
    L = D["coef_map"].L
    sol = cm.solve(coef, "ils-newton")
    assert (sol.extras["c"] > 0.5) is above
    z = np.asarray(sol.values["v"])
    Rx, Ry = np.asarray(D["Rx"]), np.asarray(D["Ry"])
    Sx, Sy = Rx.T @ Rx, Ry.T @ Ry
    for point in (z, z * (1 + 1e-3 * np.random.default_rng(3).normal(size=z.size))):
        sc = coef.data["scatter"]
        gram = gram_fractional_certificate(sc, coef.data["a"], coef.data["b"], point, None)
        sc._recent = []
        cold = gram_fractional_certificate(sc, coef.data["a"], coef.data["b"], point, None)
        assert cold.dual == pytest.approx(gram.dual, rel=1e-6, abs=1e-14)
        u = L.T @ point
        dense = fractional_certificate(D["d"], Rx, Ry, D["a"], D["b"], u, None, Sx, Sy)
        assert gram.primal == pytest.approx(dense.primal, rel=1e-8, abs=1e-14)
        assert gram.gap == pytest.approx(dense.gap, rel=1e-8, abs=1e-14)
        assert gram.dual == pytest.approx(dense.dual, rel=1e-5, abs=1e-14)
    assert dense.dual > 1e-10  # the perturbed point is visibly not optimal


@pytest.mark.parametrize("family", ["mpm", "bmpm"])
def test_certificate_solve_with_d_from_the_point(family):
    # the closed form behind the certificate's third solve: with p = b + lambda a,
    # alpha = p_x/s_x + p_y/s_y, c' = (p_x/s_x)/alpha and e = lambda d - (p_x/s_x) g_x -
    # (p_y/s_y) g_y (g = Sigma v), alpha M(c')v = lambda d - e, so M(c')^-1 d =
    # (alpha v + M(c')^-1 e)/lambda at any v with lambda > 0 (an identity of the
    # definitions; both sides by Woodbury solves, at the optimum and off it)
    X, y = _data(5, 120, "ringnorm")
    _, coef = _programs(family, X, y, "rbf", (1e-3, 2e-3))
    sc = coef.data["scatter"]
    (ax, ay), (bx, by) = coef.data["a"], coef.data["b"]
    z = np.asarray(cm.solve(coef, "ils-newton").values["v"])
    for point in (z, z * (1 + 1e-2 * np.random.default_rng(6).normal(size=z.size))):
        sc.forget()
        gx, gy = sc.sigmas(point)
        sx, sy = np.sqrt(sc.dot(point, gx)), np.sqrt(sc.dot(point, gy))
        lam = (bx * sx + by * sy) / (sc.dot(sc.d_rep, point) - ax * sx - ay * sy)
        px, py = bx + lam * ax, by + lam * ay
        alpha = px / sx + py / sy
        c = (px / sx) / alpha
        e = lam * sc.d_rep - px * gx / sx - py * gy / sy
        ref = sc.solve(c, sc.d_rep.copy())
        got = (alpha * point + sc.solve(c, e)) / lam
        np.testing.assert_allclose(got, ref, atol=1e-10 * float(np.abs(ref).max()))


def test_gershgorin_bound_of_a_nonnegative_gram_from_its_class_sums():
    # an RBF Gram matrix has no negative entry: its absolute row sums are K 1 = N_x mx +
    # N_y my (the class means the program forms anyway), whose largest bounds
    # lambda_max(K) (Gershgorin); a polynomial Gram matrix gets the pass over |K| instead
    X, y = _data(3, 140, "twonorm")
    sc = mm.mpm(X, y, ridge=1e-3, kernel="rbf", coordinates="coefficients").data["scatter"]
    K = sc.K
    assert np.all(K >= 0)
    direct = float(np.abs(K).sum(axis=1).max())
    assert sc._kmax == pytest.approx(direct, rel=1e-12) and sc._kmax >= direct
    assert sc._kmax >= float(np.linalg.eigvalsh(K)[-1])
    poly = mm.mpm(X, y, ridge=1e-3, kernel="poly", coordinates="coefficients").data["scatter"]
    assert poly._kmax is None  # formed on first use by the pass over |K|
    poly._residual_norms(np.ones((poly.K.shape[0], 1)), np.zeros(1))
    assert poly._kmax == pytest.approx(float(np.abs(poly.K).sum(axis=1).max()), rel=1e-12)


def test_gram_scatter_keeps_products_of_a_solves_vectors_once():
    # a single-column solve keeps K b (its right-hand side) and K x (its result, from the
    # acceptance check) by identity, each vector once (references: the products with K)
    X, y = _data(2, 90, "twonorm")
    sc = mm.bmpm(X, y, 0.3, ridge=1e-3, kernel="rbf", coordinates="coefficients").data[
        "scatter"]
    rng = np.random.default_rng(5)
    b = rng.normal(size=sc.K.shape[0])
    x = sc.solve(0.7, b)
    np.testing.assert_allclose(sc._kept(b), sc.K @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sc._kept(x), sc.K @ x, rtol=1e-10, atol=1e-12)
    for _ in range(3):
        np.testing.assert_allclose(sc.k_product(x), sc.K @ x, rtol=1e-10, atol=1e-12)
    ids = [id(v) for v, _ in sc._kcache]
    assert len(ids) == len(set(ids)) and ids[0] == id(x)
    sc.forget()
    assert sc._kept(x) is None


def test_decode_after_the_certificate_reads_its_norms(monkeypatch):
    # the norms are homogeneous (ratio and hyperplane scale those of w itself): the decode
    # at the certified point reads the certificate's kept value (no product with K), and
    # equals the ratio at a multiple of the point (closed form, up to rounding)
    X, y = _data(8, 100, "ringnorm")
    _, coef = _programs("bmpm", X, y, "rbf", 1e-3)
    sol = cm.solve(coef, "ils-newton")  # certified: conicml.solve ran the certificate
    sc = coef.data["scatter"]
    calls = []
    monkeypatch.setattr(sc, "kmul", lambda V: calls.append(1) or sc.K @ V)
    model = coef.decode(sol)
    assert not calls
    z = np.asarray(sol.values["v"])
    assert mm.ratio(coef.data, 3.0 * z) == pytest.approx(model["kappa"], rel=1e-13)
    assert calls  # a new point: its product with K
    assert model["kappa"] == pytest.approx(1.0 / sol.objective, rel=1e-12)


def test_residual_norm_bounds_of_a_residual_on_one_class():
    # the K-norm of a residual on the negative class's rows (and rounding on the others)
    # is bounded by its block's norm plus sqrt(lambda_max) times the rest (triangle
    # inequality); the bound is returned only where it settles the comparison, else the
    # exact norm (references: r^T K r)
    X, y = _data(4, 120, "ringnorm")
    sc = mm.bmpm(X, y, 0.3, ridge=1e-3, kernel="rbf", coordinates="coefficients").data[
        "scatter"]
    n_x = sc.n_x
    rng = np.random.default_rng(8)
    R = rng.normal(size=(sc.K.shape[0], 2))
    R[:n_x] *= 1e-18
    exact = np.sqrt(np.einsum("ij,ij->j", R, sc.K @ R))
    assert np.all(np.sqrt(sc._kmax) * np.linalg.norm(R, axis=0) > 1.001 * exact)
    bound = sc._residual_norms(R, 1.001 * exact)  # settled by the block bound
    assert np.all(bound >= exact * (1 - 1e-12)) and np.all(bound <= 1.001 * exact)
    np.testing.assert_allclose(sc._residual_norms(R, 0.999 * exact), exact, rtol=1e-12)
    R[:n_x] = rng.normal(size=(n_x, 2))  # both classes: the exact norm
    exact = np.sqrt(np.einsum("ij,ij->j", R, sc.K @ R))
    np.testing.assert_allclose(sc._residual_norms(R, exact), exact, rtol=1e-12)


def test_gram_scatter_sigmas_kept_by_value():
    # sigma_sqs keeps its last result for an argument equal in value (a copy is compared,
    # so an array changed in place is computed afresh); references from one product with K
    X, y = _data(2, 90, "ringnorm")
    sc = mm.mpm(X, y, ridge=1e-3, kernel="rbf", coordinates="coefficients").data["scatter"]
    z = np.random.default_rng(4).normal(size=sc.K.shape[0])

    def reference(v):
        kv = sc.K @ v
        out = []
        for a, blk in enumerate(sc._blocks_xy):
            c = kv[blk] - kv[blk].mean()
            out.append(c @ c / c.size + (sc.rho_x, sc.rho_y)[a] * (v @ kv))
        return out

    first = sc.sigma_sqs(z)
    assert sc.sigma_sqs(z.copy()) == first
    np.testing.assert_allclose(first, reference(z), rtol=1e-12)
    z[:5] *= 2.0
    np.testing.assert_allclose(sc.sigma_sqs(z), reference(z), rtol=1e-12)
    assert sc.sigma_sqs(z) != first


def test_galerkin_restriction_and_the_coarse_start(monkeypatch):
    # the restriction to every k-th point and the dense columns e, J_a^2 K e (each column
    # scaled): sigma_a^2(B beta) = beta^T Q_a beta and d^T (B beta) = d_r^T beta (closed
    # forms, against sigma_sqs on z = B beta); the search
    # started at the restricted program's optimal weight ends where the default start's
    # does (the same weight curve, |g| <= 1e-11 both)
    from conicml.solvers import ils_newton

    X, y = _data(11, 300, "ringnorm")
    for family in ("mpm", "bmpm"):
        _, coef = _programs(family, X, y, "rbf", (2e-3, 1e-3))
        sc = coef.data["scatter"]
        assert sc.galerkin(76) is None  # not below a quarter of n
        d_r, Qx, Qy = sc.galerkin(50)
        idx, V, scale = sc.galerkin_basis
        np.testing.assert_array_equal(idx, np.arange(0, 300, 6))
        n_x = coef.data["n_pos"]
        np.testing.assert_array_equal(V[:, 0], sc.d_rep)
        for col, rows in ((1, slice(0, n_x)), (2, slice(n_x, 300))):
            kd = (sc.K @ sc.d_rep)[rows]  # J_a^2 K e on class a's rows, zero elsewhere
            np.testing.assert_allclose(V[rows, col], (kd - kd.mean()) / kd.size, rtol=1e-12)
            assert not np.any(np.delete(V[:, col], np.arange(300)[rows]))
        beta = np.random.default_rng(2).normal(size=idx.size + 3)
        z = np.zeros(300)
        z[idx] = beta[:idx.size] * scale[:idx.size]
        z += V @ (beta[idx.size:] * scale[idx.size:])
        sxx, syy = sc.sigma_sqs(z)
        assert beta @ Qx @ beta == pytest.approx(sxx, rel=1e-12)
        assert beta @ Qy @ beta == pytest.approx(syy, rel=1e-12)
        assert d_r @ beta == pytest.approx(coef.data["d"] @ z, rel=1e-12)
        monkeypatch.setattr(ils_newton, "_COARSE_SIZE", 70)  # 60 points (every 5th)
        coarse = cm.solve(coef, "ils-newton")
        start = ils_newton._coarse_weight(sc, (coef.data["a"], coef.data["b"]))
        monkeypatch.setattr(ils_newton, "_COARSE_SIZE", 63)  # below 64 points: none
        assert ils_newton._coarse_weight(sc, (coef.data["a"], coef.data["b"])) is None
        default = cm.solve(coef, "ils-newton")
        for sol in (coarse, default):
            assert sol.status is cm.Status.OPTIMAL and abs(sol.extras["g"]) <= 1e-11
        assert start is not None and abs(start - coarse.extras["c"]) < 0.1
        assert coarse.objective == pytest.approx(default.objective, rel=1e-10)
        assert coarse.extras["c"] == pytest.approx(default.extras["c"], rel=1e-9)


@pytest.mark.parametrize("k", [1, 3, 6])
def test_triangular_solves_by_columns_and_blocks(k):
    # both paths of the block factor's triangular solves against scipy's solve_triangular,
    # and its triangular products L^T B against the dense product
    from scipy.linalg import solve_triangular

    from conicml.contracts.minimax import _trm, _trs

    rng = np.random.default_rng(k)
    L = np.asfortranarray(np.tril(rng.normal(size=(50, 50))) + 10 * np.eye(50))
    B = rng.normal(size=(50, k))
    for trans in (False, True):
        ref = solve_triangular(L, B, lower=True, trans="T" if trans else "N")
        np.testing.assert_allclose(_trs(L, B, trans), ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_trm(L, B), L.T @ B, rtol=1e-12, atol=1e-12)
    L[7, 7] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        _trs(L, B, False)


@pytest.mark.parametrize("k", [1, 2, 4, 5])
def test_kernel_products_by_columns_and_blocks(k):
    # both paths of the products with K (by columns up to four, else one matrix product)
    # against the matrix product itself, and a vector
    from conicml.contracts.minimax import kernel_products

    rng = np.random.default_rng(k)
    A = rng.normal(size=(40, 40))
    K = A @ A.T
    V = rng.normal(size=(40, k))
    np.testing.assert_allclose(kernel_products(K, V), K @ V, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(kernel_products(K, V[:, 0]), K @ V[:, 0], rtol=1e-13,
                               atol=1e-12)
