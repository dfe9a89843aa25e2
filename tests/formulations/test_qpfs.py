"""QPFS (seed 001 ch. 3): closed forms, every solver of the kind agrees, alpha-hat of
Table 3.4, Nystrom (B.17), restricted (3.9) vs full, ranking rule, bad input."""

import numpy as np
import pytest

import conicml as cm
from conicml._utils import similarity as sim
from conicml.exceptions import OptionError, ProgramError
from conicml.formulations import qpfs
from conicml.kinds import QPFS, QPFS_RESTRICTED

from tolerances import obj_rtol, sol_atol


def _project_simplex(v):
    # closed form: Euclidean projection onto the simplex (sort-based, Held et al. 1974)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.nonzero(u - css / np.arange(1, v.size + 1) > 0)[0][-1]
    return np.maximum(v - css[k] / (k + 1), 0.0)


def _water_filling(q, a, alpha):
    # closed form for diagonal Q: w_i = max(0, (alpha a_i - nu) / ((1 - alpha) q_i)) with
    # nu set by bisection so that sum w = 1
    lo, hi = alpha * a.min() - 10.0, alpha * a.max()
    for _ in range(200):
        nu = 0.5 * (lo + hi)
        s = np.maximum(0.0, (alpha * a - nu) / ((1 - alpha) * q)).sum()
        lo, hi = (nu, hi) if s > 1 else (lo, nu)
    return np.maximum(0.0, (alpha * a - nu) / ((1 - alpha) * q))


SOLVERS = cm.solvers.available(QPFS)


def _solve(prog, solver):
    opts = {"osqp": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 100_000},
            "scs": {"eps_abs": 1e-7, "eps_rel": 1e-7}}.get(solver, {})
    return cm.solve(prog, solver, **opts)


def test_specialized_solver_is_registered_for_the_kind():
    assert "simplex-smo" in SOLVERS
    assert {"clarabel", "ecos", "osqp"} <= set(SOLVERS)


# ---- closed forms of the note (F15) -----------------------------------------------------

@pytest.mark.parametrize("solver", SOLVERS)
def test_identity_q_is_a_simplex_projection(solver):
    rng = np.random.default_rng(0)
    F, alpha = rng.uniform(0, 1, 12), 0.3
    prog = qpfs.simplex_qp(np.eye(12), F, alpha)
    expected = _project_simplex(alpha * F / (1 - alpha))
    w = prog.decode(_solve(prog, solver))["w"]
    np.testing.assert_allclose(w, expected, atol=10 * sol_atol(solver))


@pytest.mark.parametrize("solver", SOLVERS)
def test_diagonal_q_is_water_filling(solver):
    rng = np.random.default_rng(1)
    q, F, alpha = rng.uniform(0.5, 2.0, 15), rng.uniform(0, 1, 15), 0.6
    prog = qpfs.simplex_qp(np.diag(np.sqrt(q)), F, alpha)
    w = prog.decode(_solve(prog, solver))["w"]
    np.testing.assert_allclose(w, _water_filling(q, F, alpha), atol=10 * sol_atol(solver))


@pytest.mark.parametrize("solver", SOLVERS)
def test_alpha_one_is_the_vertex_at_argmax_relevance(solver):
    rng = np.random.default_rng(2)
    L, F = rng.normal(size=(10, 4)), rng.uniform(0, 1, 10)
    prog = qpfs.simplex_qp(L, F, 1.0)
    sol = _solve(prog, solver)
    model = prog.decode(sol)
    expected = np.zeros(10)
    expected[np.argmax(F)] = 1.0
    np.testing.assert_allclose(model["w"], expected, atol=10 * sol_atol(solver))
    assert sol.objective == pytest.approx(-F.max(), rel=obj_rtol(solver))
    # alpha = 1: the ranking is the MaxRel order (ties at w = 0 broken by relevance)
    np.testing.assert_array_equal(model["ranking"], np.argsort(-F))


@pytest.mark.parametrize("solver", SOLVERS)
def test_alpha_zero_identity_is_uniform(solver):
    prog = qpfs.simplex_qp(np.eye(8), np.linspace(0, 1, 8), 0.0)
    sol = _solve(prog, solver)
    np.testing.assert_allclose(prog.decode(sol)["w"], np.full(8, 1 / 8),
                               atol=10 * sol_atol(solver))
    assert sol.objective == pytest.approx(0.5 / 8, rel=obj_rtol(solver))


# ---- every registered solver agrees with the reference -----------------------------------

def _random_instance(m, k, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, k)) / np.sqrt(k), rng.uniform(0, 1, m)


@pytest.mark.parametrize("m,k,alpha", [(40, 5, 0.4), (60, 60, 0.5), (30, 2, 0.9),
                                       (50, 20, 0.1)])
@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_agrees_on_random_instances(solver, m, k, alpha):
    L, F = _random_instance(m, k, seed=m + k)
    prog = qpfs.simplex_qp(L, F, alpha)
    # reference: clarabel at tight tolerances (an independent interior-point solve)
    ref = cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10)
    sol = _solve(prog, solver)
    assert sol.ok, sol.message
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(solver), abs=1e-9)
    np.testing.assert_allclose(prog.decode(sol)["w"], prog.decode(ref)["w"],
                               atol=sol_atol(solver) * 10)
    assert sol.residuals.source == "recomputed"
    assert np.isfinite(sol.residuals.primal) and np.isfinite(sol.residuals.gap)


@pytest.fixture(scope="module")
def arr():
    X, y = cm.datasets.load("arrhythmia")
    return X, y


@pytest.mark.parametrize("similarity", ["correlation", "mi"])
@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_agrees_on_arrhythmia(solver, similarity, arr):
    X, y = arr
    prog = qpfs.qpfs(X[:, :120], y, similarity=similarity)
    ref = cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10)
    sol = _solve(prog, solver)
    assert sol.ok, sol.message
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(solver), abs=1e-9)
    top = prog.decode(ref)["ranking"][:10]
    # the top of the ranking (support of the solution) is solver-independent
    assert len(set(prog.decode(sol)["ranking"][:10]) & set(top)) >= 9


def test_simplex_smo_certificate_and_options():
    L, F = _random_instance(50, 10, seed=3)
    prog = qpfs.simplex_qp(L, F, 0.5)
    sol = cm.solve(prog, "simplex-smo", tol=1e-10)
    assert sol.status is cm.Status.OPTIMAL
    assert sol.residuals.gap <= 1e-9 and sol.residuals.primal <= 1e-12
    # warm start at the optimum: no iteration
    again = cm.solve(prog, "simplex-smo", tol=1e-8, x0=sol.values["w"])
    assert again.iterations == 0 and again.status is cm.Status.OPTIMAL
    # limits: USER_LIMIT with the last point and the reason
    short = cm.solve(prog, "simplex-smo", max_iter=1)
    assert short.status is cm.Status.USER_LIMIT and "max_iter" in short.message
    assert short.values["w"].sum() == pytest.approx(1.0)

    def stop(result):
        raise StopIteration

    stopped = cm.solve(prog, "simplex-smo", callback=stop)
    assert stopped.status is cm.Status.USER_LIMIT and "callback" in stopped.message
    with pytest.raises(OptionError, match="x0"):
        cm.solve(prog, "simplex-smo", x0=np.ones(50))
    with pytest.raises(OptionError, match="tol"):
        cm.solve(prog, "simplex-smo", tol=0.0)


def _degenerate_instance():
    # duplicated features (identical rows of L and F: singular faces, non-unique w) and
    # a zero row (a feature orthogonal to all): the face solves must take the
    # minimum-norm Newton step or the zero-curvature direction
    L, F = _random_instance(40, 4, seed=11)
    L = np.vstack([L, L[:5], np.zeros((1, 4))])
    F = np.r_[F, F[:5], 0.3]
    return L, F


@pytest.mark.parametrize("case", ["low-rank", "full-rank", "degenerate", "alpha-one"])
@pytest.mark.parametrize("method", ["active-set", "smo"])
def test_simplex_methods_agree_with_clarabel(method, case):
    L, F = {"low-rank": lambda: _random_instance(300, 8, seed=5),
            "full-rank": lambda: _random_instance(60, 60, seed=6),
            "degenerate": _degenerate_instance,
            "alpha-one": lambda: _random_instance(50, 5, seed=7)}[case]()
    alpha = 1.0 if case == "alpha-one" else 0.3
    prog = qpfs.simplex_qp(L, F, alpha)
    # reference: clarabel at tight tolerances (an independent interior-point solve)
    ref = cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10)
    sol = cm.solve(prog, "simplex-smo", method=method)
    assert sol.status is cm.Status.OPTIMAL, sol.message
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol("simplex-smo"),
                                          abs=1e-9)
    assert sol.residuals.gap <= 1e-8
    if case != "degenerate":  # the degenerate instance has a non-unique minimiser
        np.testing.assert_allclose(sol.values["w"], prog.decode(ref)["w"],
                                   atol=sol_atol("simplex-smo") * 10)


def test_active_set_needs_about_one_step_per_support_element():
    # rank k: generically at most k + 1 gradient entries can tie, so the optimal support
    # has <= k + 1 features and the active-set phase needs O(k) face steps, where the
    # pairwise method needs many sweeps (1000+ on this instance)
    L, F = _random_instance(1000, 20, seed=0)
    prog = qpfs.simplex_qp(L, F, 0.5)
    fast = cm.solve(prog, "simplex-smo", method="active-set")
    slow = cm.solve(prog, "simplex-smo", method="smo")
    support = int(np.count_nonzero(fast.values["w"]))
    assert support <= 21
    assert fast.iterations <= 3 * 21 < slow.iterations
    assert fast.extras["method"] == "active-set"
    assert fast.objective <= slow.objective + 1e-12


@pytest.mark.parametrize("s, k", [(6, 8), (9, 8), (12, 8)])
def test_face_step_is_the_equality_constrained_newton_step(s, k):
    # closed form: on a face with a positive-definite reduced Hessian (s - 1 <= k) the
    # step solves the KKT system [H 1; 1^T 0][d; nu] = [-g; 0] (the Cholesky fast path);
    # with s - 1 > k the reduced Hessian is singular and the eigen path must return a
    # zero-curvature descent direction (H d = 0, 1^T d = 0, g^T d < 0)
    from conicml.solvers.simplex_smo import _face_direction
    rng = np.random.default_rng(s)
    Ls, g, coef = rng.normal(size=(s, k)), rng.normal(size=s), 0.7
    d, curved = _face_direction(Ls, g, coef)
    H = coef * Ls @ Ls.T
    assert abs(d.sum()) <= 1e-12 * max(1.0, np.abs(d).max())
    if s - 1 <= k:
        kkt = np.block([[H, np.ones((s, 1))], [np.ones((1, s)), np.zeros((1, 1))]])
        ref = np.linalg.solve(kkt, np.r_[-g, 0.0])[:s]
        assert curved
        np.testing.assert_allclose(d, ref, rtol=1e-9, atol=1e-10)
    else:
        assert not curved
        assert np.linalg.norm(H @ d) <= 1e-9 * np.linalg.norm(d) * np.linalg.norm(H)
        assert g @ d < 0


def test_active_set_hands_over_to_smo_beyond_max_support():
    L, F = _random_instance(300, 30, seed=2)
    prog = qpfs.simplex_qp(L, F, 0.3)
    ref = cm.solve(prog, "simplex-smo", method="smo")
    sol = cm.solve(prog, "simplex-smo", method="active-set", max_support=4)
    assert sol.status is cm.Status.OPTIMAL
    assert "handed over to SMO" in sol.message and "max_support" in sol.message
    assert sol.extras["method"] == "active-set, then smo"
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9)
    with pytest.raises(OptionError, match="method"):
        cm.solve(prog, "simplex-smo", method="newton")
    with pytest.raises(OptionError, match="max_support"):
        cm.solve(prog, "simplex-smo", max_support=1)


# ---- alpha heuristic: Table 3.4 --------------------------------------------------------

@pytest.mark.parametrize("q_bar,f_bar,alpha_hat", [
    # (q-bar, f-bar, alpha-hat) as printed in Table 3.4 of the thesis
    (0.0889, 0.0958, 0.481), (0.267, 0.165, 0.618), (0.0106, 0.0152, 0.411),
    (0.0703, 0.253, 0.217), (0.0188, 0.0861, 0.179), (0.0284, 0.158, 0.152),
    (0.0346, 0.0187, 0.649), (0.0454, 0.0515, 0.469)])
def test_alpha_heuristic_reproduces_table_3_4(q_bar, f_bar, alpha_hat):
    assert qpfs.alpha_heuristic(q_bar, f_bar) == pytest.approx(alpha_hat, abs=5e-4)


def test_alpha_hat_on_arrhythmia(arr):
    X, y = arr
    # Table 3.4, ARR (cor): alpha-hat = 0.481 on 422 rows; our copy has 420 rows (data README)
    prog = qpfs.qpfs(X, y, similarity="correlation")
    assert prog.data["alpha_hat"] == pytest.approx(0.481, abs=0.005)
    # Table 3.4, ARR (MI): 0.411 with mRMR's 3-bin discretisation at mean +- sd and a zero
    # MI diagonal (the thesis states neither; with q_ii = H(X_i) we get 0.447)
    prog = qpfs.qpfs(X, y, similarity="mi", mi_diagonal="zero")
    assert prog.data["alpha_hat"] == pytest.approx(0.411, abs=0.005)


# ---- similarities ----------------------------------------------------------------------

def test_mi_sees_the_dependence_correlation_misses():
    # Fig 2.5: x = sin 2 pi t, z = cos 2 pi t, t ~ U(-1, 1): |corr| ~ 0, MI large
    rng = np.random.default_rng(0)
    t = rng.uniform(-1, 1, 2000)
    X = np.column_stack([np.sin(2 * np.pi * t), np.cos(2 * np.pi * t), rng.normal(size=2000)])
    corr = sim.correlation_rows(X)
    assert corr[0, 1] < 0.05
    codes = sim.discretize(X, 3, 3.0)
    mi = sim.mutual_info_rows(codes, 3)
    assert mi[0, 1] > 10 * mi[0, 2]
    np.testing.assert_allclose(mi, mi.T, atol=1e-12)
    # the few-rows path (bincount, used by greedy mRMR) equals the blocked one-hot path
    for rows in ([0], [1, 2], list(range(3))):
        np.testing.assert_allclose(sim.mutual_info_rows(codes, 3, np.array(rows)), mi[rows],
                                   atol=1e-12)


def test_multiclass_correlation_relevance_is_prior_weighted():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    X = np.column_stack([(y == 2) + 0.1 * rng.normal(size=300), rng.normal(size=300)])
    F = sim.correlation_relevance(X, y)
    priors = np.bincount(y) / 300
    expected = sum(p * abs(np.corrcoef(X[:, 0], y == k)[0, 1]) for k, p in enumerate(priors))
    assert F[0] == pytest.approx(expected, rel=1e-12)
    assert F[0] > 5 * F[1]


def test_constant_features_are_ranked_last_with_zero_weight(arr):
    X, y = arr
    prog = qpfs.qpfs(X, y, similarity="correlation")
    model = prog.decode(cm.solve(prog))
    constant = prog.data["constant"]
    assert constant.size == 20  # zero-variance columns of our ARR copy
    assert set(model["ranking"][-constant.size:]) == set(constant.tolist())
    assert np.all(model["w"][constant] == 0) and np.all(model["relevance"][constant] == 0)


def test_non_psd_similarity_is_clipped_and_recorded(arr):
    X, y = arr
    info = qpfs.qpfs(X[:, :80], y, similarity="correlation").data["eigen"]
    assert info["n_negative"] > 0 and info["min_eigenvalue"] < 0
    assert info["rank"] < 80 and "dropped" in info["rule"]


# ---- Nystrom ---------------------------------------------------------------------------

def test_nystrom_factor_is_orthonormal_and_exact_at_rank_k():
    # App. B: for a PSD Q of rank k and r = k independent sampled rows, (B.17) gives
    # V^T V = I and V Sigma V^T = Q exactly
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(30, 5))
    Q = Z @ Z.T
    idx = np.array([1, 4, 9, 16, 25])
    V, sig, L, _ = qpfs._nystrom_factor(Q[:, idx], idx, 1e-12)
    np.testing.assert_allclose(V.T @ V, np.eye(5), atol=1e-10)
    np.testing.assert_allclose((V * sig) @ V.T, Q, atol=1e-9)
    np.testing.assert_allclose(np.sort(sig), np.sort(np.linalg.eigvalsh(Q))[-5:], rtol=1e-9)


def test_nystrom_never_asks_for_the_full_matrix(arr, monkeypatch):
    X, y = arr
    seen = []
    original = sim.similarity_rows

    def spy(X, similarity, rows, codes, bins):
        seen.append(None if rows is None else len(rows))
        return original(X, similarity, rows, codes, bins)

    monkeypatch.setattr(sim, "similarity_rows", spy)
    prog = qpfs.qpfs(X, y, nystrom=0.1, random_state=0)
    assert seen == [prog.data["sampled"].size] and seen[0] <= 28
    # ceil(0.1 * 278) = 28 drawn; a constant feature needs no row
    # (3.11): q-bar is the mean of the r x M sampled block
    assert 0 < prog.data["alpha_hat"] < 1
    sol = cm.solve(prog, "simplex-smo")
    assert sol.status is cm.Status.OPTIMAL


def test_nystrom_with_p_one_is_exact_qpfs(arr):
    X, y = arr
    Xs = X[:, 100:140]
    exact = qpfs.qpfs(Xs, y, similarity="correlation", delta=1e-10)
    nys = qpfs.qpfs(Xs, y, similarity="correlation", nystrom=1.0, delta=1e-10, random_state=0)
    assert nys.data["alpha_hat"] == pytest.approx(exact.data["alpha_hat"], rel=1e-12)
    a, b = cm.solve(exact, "simplex-smo"), cm.solve(nys, "simplex-smo")
    # A = Q (indefinite): Nystrom with the clipped A^{-1/2} is C A^+ C^T on the kept range,
    # which equals the clipped Q; the optima agree
    assert b.objective == pytest.approx(a.objective, rel=1e-6)


# ---- restricted (3.9) vs full --------------------------------------------------------------

def test_restricted_is_a_restriction_of_full():
    # the note's counter-example to Theorem 3.1 for (3.9): M = 12, an exactly rank-4 PSD Q
    # with nonnegative entries, alpha = 0.5: the full optimum is below the restricted one
    rng = np.random.default_rng(11)
    Z = rng.uniform(0, 1, size=(12, 4))
    F = rng.uniform(0, 1, 12)
    Q = Z @ Z.T
    lam, U = np.linalg.eigh(Q)
    U, lam = U[:, lam > 1e-9], lam[lam > 1e-9]
    full = qpfs.simplex_qp(U * np.sqrt(lam), F, 0.5)
    from conicml.contracts.qpfs import RestrictedQP
    data = dict(full.data, qp=RestrictedQP(U, lam, F, 0.5), form="restricted")
    restricted = cm.Program(QPFS_RESTRICTED, data, build=qpfs._build_restricted,
                            decode=qpfs._decode, certify=qpfs._certify)
    f_full = cm.solve(full, "clarabel").objective
    sols = [cm.solve(restricted, s) for s in ("clarabel", "ecos")]
    assert all(s.ok for s in sols)
    assert sols[0].status is cm.Status.OPTIMAL  # certified: KKT from the returned duals
    assert sols[0].objective == pytest.approx(sols[1].objective, rel=1e-6)
    assert sols[0].objective >= f_full - 1e-9
    w = restricted.decode(sols[0])["w"]
    assert w.sum() == pytest.approx(1.0, abs=1e-7) and w.min() >= 0


def test_restricted_form_through_the_formulation(arr):
    X, y = arr
    prog = qpfs.qpfs(X[:, :60], y, similarity="mi", form="restricted", delta=1e-3)
    assert prog.kind == QPFS_RESTRICTED
    assert "simplex-smo" not in cm.solvers.available(prog.kind)
    sol = cm.solve(prog, "clarabel")
    full = qpfs.qpfs(X[:, :60], y, similarity="mi", delta=1e-3)
    assert sol.ok
    assert sol.objective >= cm.solve(full, "clarabel").objective - 1e-8
    assert np.isfinite(sol.residuals.dual)


# ---- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    ({"alpha": 1.5}, "alpha"), ({"alpha": -0.1}, "alpha"), ({"nystrom": 0.0}, "nystrom"),
    ({"nystrom": 1.2}, "nystrom"), ({"similarity": "cosine"}, "similarity"),
    ({"form": "reduced"}, "form"), ({"bins": 4}, "bins"), ({"delta": -1.0}, "delta")])
def test_bad_parameters(kwargs, match):
    X = np.random.default_rng(0).normal(size=(20, 4))
    y = np.repeat([0, 1], 10)
    with pytest.raises(ProgramError, match=match):
        qpfs.qpfs(X, y, **kwargs)


def test_bad_data():
    X = np.random.default_rng(0).normal(size=(20, 4))
    y = np.repeat([0, 1], 10)
    with pytest.raises(ProgramError, match="single class"):
        qpfs.qpfs(X, np.zeros(20))
    with pytest.raises(ProgramError, match="shape mismatch"):
        qpfs.qpfs(X, y[:-1])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ProgramError, match="NaN"):
        qpfs.qpfs(Xn, y)
    with pytest.raises(ProgramError, match="constant"):
        qpfs.qpfs(np.ones((20, 3)), y)
