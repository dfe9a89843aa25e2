"""Rare-class ranking (RankSVM / RankRC): identities, sorting, solvers, equivalences, input."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import conicml as cm
from conicml.contracts.ranking_ops import (
    LinearizedRanking,
    PairwiseLoss,
    count_pairs,
    pair_matrix,
    ranking_objective,
    smoothed_hinge,
)
from conicml.estimators.ranking import ranking_path
from conicml.exceptions import OptionError, ProgramError, SolverError
from conicml.formulations import ranking
from conicml.metrics import auc, mauc

from tolerances import obj_rtol, sol_atol


def _data(m=120, d=4, rate=0.15, shift=0.8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = -np.ones(m)
    y[: max(2, int(rate * m))] = 1.0
    X[y > 0] += shift
    return X, y


def _levels(m=100, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    lev = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=m) + 1), 0, 3).astype(int)
    return X, lev


# ---- smoothed hinge identities (thesis §2.3) -------------------------------------------

@pytest.mark.parametrize("eps", [0.05, 0.1, 0.5, 0.9])
def test_smoothed_hinge_identities(eps):
    z = np.linspace(-3, 3, 2001)
    le, lh = smoothed_hinge(z, eps), smoothed_hinge(z, 0.0)
    # closed forms at the knots: l(1) = 0, l(1 - 2 eps) = eps
    assert smoothed_hinge(np.array([1.0]), eps)[0] == 0.0
    assert smoothed_hinge(np.array([1 - 2 * eps]), eps)[0] == pytest.approx(eps, abs=1e-15)
    # sandwich l_h - eps <= l_eps <= l_h
    assert np.all(le <= lh + 1e-15) and np.all(le >= lh - eps - 1e-15)
    # Huber form: l_eps = huber(pos(1 - z), 2 eps) / (4 eps) (cvxpy's huber, evaluated)
    hub = cp.huber(np.maximum(0.0, 1 - z), 2 * eps).value / (4 * eps)
    np.testing.assert_allclose(le, hub, atol=1e-14)
    # C^1: one-sided difference quotients agree at both knots
    for knot in (1 - 2 * eps, 1.0):
        h = 1e-7
        left = (smoothed_hinge(np.array([knot]), eps) - smoothed_hinge(np.array([knot - h]), eps))
        right = (smoothed_hinge(np.array([knot + h]), eps) - smoothed_hinge(np.array([knot]), eps))
        assert left[0] / h == pytest.approx(right[0] / h, abs=1e-5)


def test_smoothed_hinge_half():
    # closed form at eps = 0.5 (thesis ch. 7): l(0) = 0.5, l(-1) = 1.5
    np.testing.assert_allclose(smoothed_hinge(np.array([0.0, -1.0]), 0.5), [0.5, 1.5])


# ---- sorting trick vs brute force ---------------------------------------------------------

@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5])
@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("constant", [False, True])
def test_sorted_loss_gradient_hv_match_explicit_pair_matrix(eps, multi, constant):
    # constant: equal scores (beta = 0), evaluated in closed form when eps < 1/2
    rng = np.random.default_rng(3)
    levels = rng.integers(0, 4 if multi else 2, 80)
    p = 2.0 * rng.normal(size=80)
    p[:10] = p[10:20]  # ties between samples
    if constant:
        p = np.zeros(80)
    P = pair_matrix(levels)
    z = P @ p
    lf = PairwiseLoss(levels, eps)
    loss, grad, st = lf.evaluate(p)
    assert loss == pytest.approx(smoothed_hinge(z, eps).sum(), rel=1e-12)
    if eps > 0:
        dz = np.where(z < 1 - 2 * eps, -1.0, np.where(z < 1, -(1 - z) / (2 * eps), 0.0))
        quad = ((z >= 1 - 2 * eps) & (z < 1)).astype(float)
    else:
        dz, quad = np.where(z < 1, -1.0, 0.0), np.zeros_like(z)
    np.testing.assert_allclose(grad, P.T @ dz, atol=1e-11)
    u = rng.normal(size=80)
    expected = P.T @ (quad * (P @ u)) / (2 * eps) if eps > 0 else np.zeros(80)
    np.testing.assert_allclose(lf.hess_vec(st, u), expected, atol=1e-10)


@pytest.mark.parametrize("multi", [False, True])
def test_hessian_form_matches_the_explicit_pair_matrix(multi):
    # X^T H_p X against the explicit (1 / 2 eps) X^T P^T I_Q P X of the pair list, and
    # against the column-by-column products of hess_vec
    rng = np.random.default_rng(4)
    levels = rng.integers(0, 4 if multi else 2, 90)
    p = 1.5 * rng.normal(size=90)
    p[:10] = p[10:20]  # ties
    X = rng.normal(size=(90, 6))
    lf = PairwiseLoss(levels, 0.2)
    _, _, st = lf.evaluate(p)
    P = pair_matrix(levels)
    z = P @ p
    quad = ((z >= 1 - 0.4) & (z < 1)).astype(float)
    PX = P @ X
    expected = PX.T @ (quad[:, None] * PX) / 0.4
    H = lf.hessian_form(st, X)
    np.testing.assert_allclose(H, expected, atol=1e-10 * max(1.0, np.abs(expected).max()))
    columns = X.T @ np.stack([lf.hess_vec(st, X[:, k]) for k in range(6)], axis=1)
    np.testing.assert_allclose(H, columns, atol=1e-10 * max(1.0, np.abs(expected).max()))
    assert np.array_equal(H, H.T)


def test_multilevel_pair_count():
    # closed form: N = sum_{r<s} m_r m_s, and the explicit pair list has that many rows
    levels = np.array([0] * 7 + [1] * 4 + [2] * 3 + [3] * 2)
    counts = [7, 4, 3, 2]
    expected = sum(counts[r] * counts[s] for r in range(4) for s in range(r + 1, 4))
    assert count_pairs(levels) == expected == pair_matrix(levels).shape[0]
    X = np.random.default_rng(0).normal(size=(levels.size, 2))
    assert ranking.rankrc(X, levels, 0.1).data["rank"].n_pairs == expected


@pytest.mark.parametrize("basis", ["rare", "all"])
def test_gradient_and_hv_against_finite_differences(basis):
    X, y = _data(60)
    prog = ranking.rankrc(X, y, 0.05, basis=basis, smoothing=0.3)
    rank = prog.data["rank"]
    rng = np.random.default_rng(5)
    beta = rng.normal(size=rank.n_basis)
    _, g, _, _ = ranking_objective(rank, beta)
    h = 1e-6
    fd = np.array([(ranking_objective(rank, beta + h * e)[0]
                    - ranking_objective(rank, beta - h * e)[0]) / (2 * h)
                   for e in np.eye(rank.n_basis)[:12]])
    np.testing.assert_allclose(g[:12], fd, rtol=1e-5, atol=1e-8)
    # Hv: against the explicit generalized Hessian (1/(2 eps N)) A^T I_Q A + lam K_RR
    lf = PairwiseLoss(rank.levels, rank.eps)
    p = rank.KR @ beta
    _, _, st = lf.evaluate(p)
    s = rng.normal(size=rank.n_basis)
    hv = rank.KR.T @ lf.hess_vec(st, rank.KR @ s) / rank.n_pairs + rank.lam * rank.KRR @ s
    A = pair_matrix(rank.levels) @ rank.KR
    z = A @ beta
    q = ((z >= 1 - 2 * rank.eps) & (z < 1)).astype(float)
    H = A.T @ (q[:, None] * A) / (2 * rank.eps * rank.n_pairs) + rank.lam * rank.KRR
    np.testing.assert_allclose(hv, H @ s, rtol=1e-9, atol=1e-12)
    # and the gradient difference quotient of Hv away from the kinks
    fd_h = (ranking_objective(rank, beta + 1e-7 * s)[1]
            - ranking_objective(rank, beta - 1e-7 * s)[1]) / 2e-7
    np.testing.assert_allclose(hv, fd_h, rtol=1e-3, atol=1e-6)


# ---- every solver of the kinds agrees with the reference --------------------------------

def _reference(prog):
    # reference: clarabel at tightened tolerances (an independent interior-point solve)
    return cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10)


CASES = {
    "rankrc-rbf": lambda: ranking.rankrc(*_data(), 2 ** -4),
    "rankrc-linear": lambda: ranking.rankrc(*_data(), 2 ** -2, kernel="linear"),
    "ranksvm-rbf": lambda: ranking.ranksvm(*_data(80), 2 ** -4),
    "rank-rnd": lambda: ranking.rankrc(*_data(), 2 ** -4, basis="random", random_state=0),
    "multilevel": lambda: ranking.rankrc(*_levels(), 0.05),
    "eps-0.5": lambda: ranking.rankrc(*_data(), 2 ** -6, smoothing=0.5),
}


_SOLVED: dict = {}


def _case(case):
    # each program and its reference solve are built once per session
    if case not in _SOLVED:
        prog = CASES[case]()
        _SOLVED[case] = (prog, _reference(prog))
    return _SOLVED[case]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("solver", cm.solvers.available("socp.rank.smoothed"))
def test_every_solver_agrees_on_smoothed(solver, case):
    prog, ref = _case(case)
    sol = cm.solve(prog, solver, **({"max_iter": 200_000} if solver == "scs" else {}))
    assert sol.ok, sol.message
    ref_model, model = prog.decode(ref), prog.decode(sol)
    rtol = max(obj_rtol(solver), 1e-7) if solver != "scs" else 1e-3
    assert model["objective"] == pytest.approx(ref_model["objective"], rel=rtol)
    scale = max(1.0, np.max(np.abs(ref_model["scores"])))
    atol = sol_atol(solver) if solver != "scs" else 5e-2
    np.testing.assert_allclose(model["scores"], ref_model["scores"], atol=atol * scale)
    if solver in ("rank-tr", "rank-newton"):
        assert sol.status is cm.Status.OPTIMAL and sol.residuals.source == "recomputed"
        assert sol.residuals.gap <= 1e-5


@pytest.mark.parametrize("levels", [False, True])
def test_rank_tr_directions_reach_the_same_optimum(levels):
    # PCG, the exact Newton direction in the eigen-coordinates, and the switch between
    # them: the same certified optimum, that of rank-newton (an independent route) and
    # clarabel (a generic backend); a small lambda, where PCG needs many steps
    X, y = _levels(90) if levels else _data(90, rate=0.3)
    prog = ranking.rankrc(X, y, 2.0 ** -14, basis="all" if levels else "rare")
    ref = prog.decode(cm.solve(prog, "rank-newton", tol=1e-10))["objective"]
    generic = prog.decode(cm.solve(prog, "clarabel"))["objective"]
    assert generic == pytest.approx(ref, rel=1e-6)  # clarabel's own accuracy
    sols = {d: cm.solve(prog, "rank-tr", direction=d) for d in ("cg", "exact", "auto")}
    for d, sol in sols.items():
        assert sol.status is cm.Status.OPTIMAL, (d, sol.message)
        assert sol.residuals.gap <= 1e-5
        assert prog.decode(sol)["objective"] == pytest.approx(ref, rel=1e-9), d
    assert sols["cg"].extras["exact_directions"] == 0
    assert sols["exact"].extras["exact_directions"] > 0
    assert sols["exact"].extras["cg_iterations"] == 0
    # a linearization of the same kernel arrays at another lambda is accepted
    lin = LinearizedRanking(ranking.with_lambda(prog, 1.0).data["rank"])
    given = cm.solve(prog, "rank-tr", linearization=lin)
    assert given.extras["exact_directions"] > 0
    assert prog.decode(given)["objective"] == pytest.approx(ref, rel=1e-9)
    newton = cm.solve(prog, "rank-newton", linearization=lin)
    assert prog.decode(newton)["objective"] == pytest.approx(ref, rel=1e-9)


def test_rank_tr_truncated_newton_forms_one_hessian(monkeypatch):
    # a rare class of m = 2 000 at lambda = 2^-12 in the exact mode: the first Newton step
    # forms the O(m r^2) Hessian, most next ones solve by CG preconditioned by its factor;
    # the same certified optimum as every step on an explicit Hessian and as rank-newton
    # (an independent route); a second lambda given the same eigen-coordinates starts
    # with the first one's Hessian and forms fewer than with fresh ones
    from conicml.solvers import rank_tr

    rng = np.random.default_rng(0)
    y = np.where(rng.random(2000) < 0.04, 1.0, -1.0)
    X = rng.normal(size=(2000, 5)) + 1.2 * y[:, None] / np.sqrt(5)
    prog = ranking.rankrc(X, y, 2.0 ** -12)
    lin = LinearizedRanking(prog.data["rank"])
    truncated = cm.solve(prog, "rank-tr", direction="exact", linearization=lin)
    nxt = ranking.with_lambda(prog, 2.0 ** -14)
    x0 = prog.decode(truncated)["beta"]
    carried = cm.solve(nxt, "rank-tr", x0=x0, linearization=lin)
    fresh = cm.solve(nxt, "rank-tr", x0=x0, linearization=LinearizedRanking(nxt.data["rank"]))
    assert carried.extras["explicit_hessians"] < fresh.extras["explicit_hessians"]
    assert carried.objective == pytest.approx(fresh.objective, rel=1e-9)
    direction = rank_tr._LinPoint._direction
    monkeypatch.setattr(rank_tr._LinPoint, "_direction",
                        lambda self, forcing=None, explicit=False, level=None:
                        direction(self, forcing, True, level))
    explicit = cm.solve(prog, "rank-tr", direction="exact")
    assert 1 <= truncated.extras["explicit_hessians"] < truncated.extras["exact_directions"]
    assert truncated.extras["exact_cg_iterations"] > 0
    assert explicit.extras["explicit_hessians"] >= explicit.extras["exact_directions"] > 1
    ref = prog.decode(cm.solve(prog, "rank-newton", tol=1e-10))["objective"]
    for sol in (truncated, explicit):
        assert sol.status is cm.Status.OPTIMAL and sol.residuals.gap <= 1e-5
        assert prog.decode(sol)["objective"] == pytest.approx(ref, rel=1e-9)


def test_lambda_path_in_the_exact_mode_agrees_with_generic_backends():
    # a warm-started lambda path down to where rank-tr takes truncated Newton steps with
    # the Hessian carried from value to value: each value is the certified optimum of its
    # cold solve and agrees with clarabel and ecos (generic backends, to their accuracy)
    prog = ranking.rankrc(*_data(90, rate=0.3), 1.0)
    lams = [2.0 ** k for k in (-8, -10, -12, -14, -16)]
    path = ranking_path(prog, lams)
    exact = [sol.extras for _, sol in path if sol.extras["exact_directions"] > 0]
    assert len(exact) >= 3 and all(e["exact_cg_iterations"] > 0 for e in exact[1:])
    for lam, sol in path:
        one = ranking.with_lambda(prog, lam)
        assert sol.status is cm.Status.OPTIMAL and sol.residuals.gap <= 1e-5
        value = one.decode(sol)["objective"]
        cold = one.decode(cm.solve(one, "rank-tr"))["objective"]
        assert value == pytest.approx(cold, rel=1e-9)
        for backend in ("clarabel", "ecos"):
            generic = one.decode(cm.solve(one, backend))["objective"]
            assert value == pytest.approx(generic, rel=max(obj_rtol(backend), 1e-7))


def test_rank_solvers_refuse_a_foreign_linearization():
    prog = ranking.rankrc(*_data(60), 0.01)
    other = ranking.rankrc(*_data(60), 0.01)  # equal data, other kernel arrays
    lin = LinearizedRanking(other.data["rank"])
    with pytest.raises(OptionError, match="linearization must be"):
        cm.solve(prog, "rank-tr", linearization=lin)
    with pytest.raises(OptionError, match="linearization must be"):
        cm.solve(prog, "rank-newton", linearization=lin)
    with pytest.raises(OptionError, match="linearization must be"):
        cm.solve(prog, "rank-newton", eig_rtol=1e-10,
                 linearization=LinearizedRanking(prog.data["rank"]))
    with pytest.raises(OptionError, match="direction must be"):
        cm.solve(prog, "rank-tr", direction="newton")


@pytest.mark.parametrize("solver", cm.solvers.available("qp.rank.hinge"))
def test_every_solver_agrees_on_hinge(solver):
    prog = ranking.rankrc(*_data(), 2 ** -4, loss="hinge")
    ref = _reference(prog)
    sol = cm.solve(prog, solver, **({"max_iter": 200_000} if solver in ("scs", "osqp") else {}))
    assert sol.ok
    rtol = {"scs": 1e-3, "osqp": 1e-3}.get(solver, 1e-6)
    assert prog.decode(sol)["objective"] == pytest.approx(prog.decode(ref)["objective"], rel=rtol)


def test_specialized_solvers_refuse_the_hinge():
    prog = ranking.rankrc(*_data(), 0.1, loss="hinge")
    with pytest.raises(SolverError, match="does not accept"):
        cm.solve(prog, "rank-tr")


# ---- equivalences ------------------------------------------------------------------------

def test_proposition_8_subset_nystrom_linearised():
    # Prop. 8: RankRC on the rare subset = full RankSVM on the Nystrom kernel K~ =
    # K_.R K_RR^+ K_R. = linearised RankSVM on x~ = K_.R U L^{+1/2}: same objective and scores
    X, y = _data(100, rate=0.2)
    lam = 2 ** -5
    sub = ranking.rankrc(X, y, lam)
    rank = sub.data["rank"]
    s_sub = cm.solve(sub, "rank-tr")
    s_lin = cm.solve(sub, "rank-newton")
    Kt = rank.KR @ np.linalg.pinv(rank.KRR, rcond=1e-13, hermitian=True) @ rank.KR.T
    full = ranking.ranksvm(0.5 * (Kt + Kt.T), y, lam, kernel="precomputed")
    s_full = cm.solve(full, "rank-newton")
    values = [p.decode(s)["objective"] for p, s in ((sub, s_sub), (sub, s_lin), (full, s_full))]
    assert values[1] == pytest.approx(values[0], rel=1e-8)
    assert values[2] == pytest.approx(values[0], rel=1e-7)
    scores = [p.decode(s)["scores"] for p, s in ((sub, s_sub), (sub, s_lin), (full, s_full))]
    np.testing.assert_allclose(scores[1], scores[0], atol=1e-5 * np.abs(scores[0]).max())
    np.testing.assert_allclose(scores[2], scores[0], atol=1e-4 * np.abs(scores[0]).max())
    # the larger span of RankSVM can only do better: F*_RankSVM <= F*_RankRC
    svm = ranking.ranksvm(X, y, lam)
    assert svm.decode(cm.solve(svm, "rank-tr"))["objective"] <= values[0] + 1e-12


def test_ranksvm_is_no_bias_svm_on_pair_differences():
    # independent QP: min 1/2|w|^2 + C sum max(0, 1 - w.(x_i - x_j)), C = 1/(lam N);
    # its optimum is (lambda-form optimum) / lam and it has the same w
    X, y = _data(40, d=3, rate=0.25)
    lam = 0.05
    prog = ranking.ranksvm(X, y, lam, kernel="linear", loss="hinge")
    sol = cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10)
    model = prog.decode(sol)
    w_rank = X.T @ model["beta"]
    D = pair_matrix((y > 0).astype(int)) @ X
    C = 1.0 / (lam * D.shape[0])
    w = cp.Variable(X.shape[1])
    qp = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(cp.pos(1 - D @ w))))
    qp.solve(solver="CLARABEL")
    np.testing.assert_allclose(w_rank, w.value, atol=1e-6)
    assert model["objective"] / lam == pytest.approx(qp.value, rel=1e-7)


def test_smoothed_and_hinge_optima_are_eps_apart():
    # sandwich of the losses carries over to the optima: 0 <= F_h* - F_eps* <= eps
    X, y = _data()
    eps = 0.1
    h = ranking.rankrc(X, y, 0.05, loss="hinge")
    s = ranking.rankrc(X, y, 0.05, smoothing=eps)
    fh = h.decode(_reference(h))["objective"]
    fs = s.decode(cm.solve(s, "rank-tr"))["objective"]
    assert 0.0 <= fh - fs <= eps


def test_large_lambda_closed_form():
    # closed form (all margins in the linear piece): RankSVM beta = P^T e / (lam N), i.e.
    # 1/(lam m+) on positives and -1/(lam m-) on negatives
    X, y = _data(60)
    lam = 2.0 ** 8
    prog = ranking.ranksvm(X, y, lam)
    model = prog.decode(cm.solve(prog, "rank-tr"))
    mp, mn = np.sum(y > 0), np.sum(y < 0)
    expected = np.where(y > 0, 1.0 / (lam * mp), -1.0 / (lam * mn))
    z = pair_matrix((y > 0).astype(int)) @ model["scores"]
    assert z.max() < 1 - 2 * 0.1
    np.testing.assert_allclose(prog.data["rank"].KRR @ model["beta"],
                               prog.data["rank"].KRR @ expected, atol=1e-9)


def test_mean_distance_gamma_matches_definition():
    # sigma^2 = mean of all m^2 squared distances (O(m^2 d) definition); = 2d when standardized
    X = np.random.default_rng(2).normal(size=(50, 4))
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    assert ranking.mean_distance_gamma(X) == pytest.approx(1.0 / d2.mean(), rel=1e-12)
    Z = (X - X.mean(0)) / X.std(0)
    assert 1.0 / ranking.mean_distance_gamma(Z) == pytest.approx(8.0, rel=1e-12)


# ---- solver options ----------------------------------------------------------------------

@pytest.mark.parametrize("solver", ["rank-tr", "rank-newton"])
def test_limits_callback_and_warm_start(solver):
    prog = ranking.rankrc(*_data(), 2 ** -6)
    full = cm.solve(prog, solver)
    assert full.status is cm.Status.OPTIMAL
    one = cm.solve(prog, solver, max_iter=1)
    assert one.status is cm.Status.USER_LIMIT and "max_iter" in one.message

    def stop(result):
        raise StopIteration

    cb = cm.solve(prog, solver, callback=stop)
    assert cb.status is cm.Status.USER_LIMIT and "callback" in cb.message
    warm = cm.solve(prog, solver, x0=prog.decode(full)["beta"])
    assert warm.iterations <= 1 and warm.status is cm.Status.OPTIMAL
    with pytest.raises(OptionError, match="x0"):
        cm.solve(prog, solver, x0=np.zeros(3))
    with pytest.raises(OptionError, match="tol"):
        cm.solve(prog, solver, tol=-1.0)


def test_lambda_path_is_warm_started_high_to_low():
    prog = ranking.rankrc(*_data(), 1.0)
    lams = [2.0 ** k for k in (-8, -4, 0, 4)]
    path = ranking_path(prog, lams)
    assert [lam for lam, _ in path] == sorted(lams, reverse=True)
    for lam, sol in path:
        assert sol.status is cm.Status.OPTIMAL
        cold = ranking.with_lambda(prog, lam)
        ref = cold.decode(cm.solve(cold, "rank-newton"))["objective"]
        assert cold.decode(sol)["objective"] == pytest.approx(ref, rel=1e-8)


# ---- metrics -----------------------------------------------------------------------------

def test_auc_matches_roc_auc_score_without_ties_and_documents_ties():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(300) < 0.2, 1, -1)
    s = rng.normal(size=300) + y
    for ties in ("thesis", "half", "strict"):
        assert auc(y, s, ties=ties) == pytest.approx(roc_auc_score(y, s), abs=1e-15)
    q = np.round(s)  # quantised scores: many ties
    assert auc(y, q, ties="half") == pytest.approx(roc_auc_score(y, q), abs=1e-15)
    assert auc(y, q, ties="strict") < auc(y, q, ties="half") < auc(y, q, ties="thesis")
    # closed form: constant scores -> 1 (thesis >=), 1/2 (sklearn), 0 (strict)
    const = np.zeros(300)
    assert (auc(y, const), auc(y, const, ties="half"), auc(y, const, ties="strict")) == (
        1.0, 0.5, 0.0)


def test_mauc_strict_and_brute_force():
    rng = np.random.default_rng(1)
    lev = rng.integers(0, 4, 60)
    s = np.round(lev + rng.normal(size=60), 1)
    good = sum(s[i] > s[j] for i in range(60) for j in range(60) if lev[i] > lev[j])
    total = sum(lev[i] > lev[j] for i in range(60) for j in range(60))
    assert mauc(lev, s) == pytest.approx(good / total, abs=1e-15)
    assert mauc(lev, np.zeros(60)) == 0.0
    with pytest.raises(ValueError, match="two distinct levels"):
        mauc(np.zeros(5), np.arange(5.0))


# ---- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    ({"lam": 0.0}, "lam"),
    ({"lam": -1.0}, "lam"),
    ({"smoothing": 0.0}, "smoothing"),
    ({"smoothing": 1.0}, "smoothing"),
    ({"basis": np.array([], dtype=int)}, "basis"),
    ({"basis": np.array([0, 500])}, "basis"),
    ({"basis": "nearest"}, "basis"),
    ({"loss": "logistic"}, "loss"),
    ({"gamma": "median"}, "gamma"),
])
def test_bad_parameters_name_themselves(kwargs, match):
    X, y = _data(30)
    args = {"lam": 0.1, **kwargs}
    lam = args.pop("lam")
    with pytest.raises(ValueError, match=match):
        ranking.rankrc(X, y, lam, **args)


def test_bad_data():
    X, y = _data(30)
    with pytest.raises(ProgramError, match="m_- = 0"):
        ranking.rankrc(X, np.ones(30), 0.1)
    with pytest.raises(ProgramError, match="m_\\+ = 0"):
        ranking.rankrc(X, -np.ones(30), 0.1)
    with pytest.raises(ProgramError, match="single level"):
        ranking.rankrc(X, np.full(30, 2), 0.1)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ProgramError, match="NaN"):
        ranking.rankrc(Xn, y, 0.1)
    yn = y.copy()
    yn[0] = np.inf
    with pytest.raises(ProgramError, match="NaN or infinite"):
        ranking.rankrc(X, yn, 0.1)
    with pytest.raises(ProgramError, match="shape mismatch"):
        ranking.rankrc(X, y[:-1], 0.1)


def test_generic_route_refused_above_the_pair_limit():
    # 1000 points, 500 rare: N = 250000 pairs > MAX_GENERIC_PAIRS
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    y = np.where(np.arange(1000) < 500, 1.0, -1.0)
    prog = ranking.rankrc(X, y, 0.1, kernel="linear")
    assert prog.data["rank"].n_pairs == 250_000 > ranking.MAX_GENERIC_PAIRS
    with pytest.raises(ProgramError, match="250000 pairs.*rank-tr"):
        cm.solve(prog, "clarabel")
    assert cm.solve(prog, "rank-tr").status is cm.Status.OPTIMAL


def test_rank_tr_rounding_stop_ends_cg_once_the_decrement_bound_decides_it(monkeypatch):
    # the exact mode stops when the Newton decrement is below the rounding level m eps |F|;
    # CG bounds the exact decrement by its own plus |r|^2 / (2 lambda) (H >= lambda I), and
    # ends once that bound is below the level: the same stop at the same point (no step is
    # taken either way), in fewer CG steps than CG run to its forcing term
    from conicml.solvers import rank_tr

    rng = np.random.default_rng(0)
    y = np.where(rng.random(2000) < 0.04, 1.0, -1.0)
    X = rng.normal(size=(2000, 5)) + 1.2 * y[:, None] / np.sqrt(5)
    prog = ranking.rankrc(X, y, 2.0 ** -18)
    bounded = cm.solve(prog, "rank-tr", direction="exact")
    direction = rank_tr._LinPoint._direction
    monkeypatch.setattr(rank_tr._LinPoint, "_direction",
                        lambda self, forcing=None, explicit=False, level=None:
                        direction(self, forcing, explicit, None))
    full = cm.solve(prog, "rank-tr", direction="exact")
    assert "rounding" in bounded.message and bounded.message == full.message
    assert bounded.iterations == full.iterations
    np.testing.assert_allclose(bounded.values["beta"], full.values["beta"], rtol=1e-12)
    assert bounded.extras["exact_cg_iterations"] < full.extras["exact_cg_iterations"]
    assert bounded.status is cm.Status.OPTIMAL and bounded.residuals.gap <= 1e-5


def test_rank_tr_takes_the_newton_step_f_cannot_see_above_rounding_tol():
    # where the Newton decrement is below the rounding level of F but the relative
    # gradient is above ROUNDING_TOL, the exact mode takes the full Newton step when it
    # lowers the gradient's norm and leaves F within that level (no stall): the gradient
    # falls by Newton's rate, and the run from there ends at the cold solve's optimum
    from conicml.contracts.ranking_ops import ROUNDING_TOL
    from conicml.solvers import rank_tr

    prog = ranking.rankrc(*_data(90, rate=0.3), 2.0 ** -10)
    lin = LinearizedRanking(prog.data["rank"])
    cold = cm.solve(prog, "rank-tr", direction="exact", linearization=lin)
    beta = prog.decode(cold)["beta"]
    rng = np.random.default_rng(1)
    near = beta + 1e-4 * np.linalg.norm(beta) * rng.normal(size=beta.size) / np.sqrt(beta.size)
    point = rank_tr._LinPoint(lin, near, 1.0)
    point.g_scale = 0.0  # the relative gradient in units of the gradient parts
    point._set(lin.evaluate(point.w))
    assert point.rel > ROUNDING_TOL
    s, _ = point._direction(explicit=True)
    decrement = -0.5 * float(point.g @ s)
    f, g_norm = point.f, float(np.linalg.norm(point.g))
    rounding = 10.0 * decrement / abs(f)  # the step is below this rounding level of F
    assert point.newton_step(rounding) is None  # a step, not a stall
    assert float(np.linalg.norm(point.g)) < 0.1 * g_norm  # a Newton step near the optimum
    assert point.f <= f + rounding * abs(f)
    # a step that would raise the gradient is refused: the stall stays a stall
    flat = rank_tr._LinPoint(lin, near, 1.0)
    assert not flat._flat_step(-0.5 * flat.g / lin.lam * 1e3, rounding * abs(flat.f))
    end = cm.solve(prog, "rank-tr", direction="exact", x0=point.beta())
    assert end.status is cm.Status.OPTIMAL
    assert end.objective == pytest.approx(cold.objective, rel=1e-9)


def test_whitened_features_are_the_kernel_columns_in_the_factor_coordinates():
    # closed forms of X_L = K_R L^{-T} with K_RR = L L^T: X_L X_L^T = K_R K_RR^{-1} K_R^T,
    # L (L^{-1} v) = v and L^{-T} L^{-1} g = K_RR^{-1} g
    from conicml.contracts.ranking_ops import WhitenedFeatures

    rank = ranking.rankrc(*_data(80, rate=0.3), 0.01).data["rank"]
    white = WhitenedFeatures(rank)
    KR, KRR = rank.KR, rank.KRR
    assert white.X.shape == KR.shape and white.X.flags.c_contiguous
    np.testing.assert_allclose(white.X @ white.X.T, KR @ np.linalg.solve(KRR, KR.T),
                               atol=1e-8 * np.max(np.abs(KR)))
    v = np.random.default_rng(0).normal(size=rank.n_basis)
    np.testing.assert_allclose(white.lift(white.to_z(v)), v, atol=1e-10 * np.max(np.abs(v)))
    np.testing.assert_allclose(KRR @ white.to_beta(white.to_z(v)), v,
                               atol=1e-7 * np.max(np.abs(v)))
    assert white.fits(rank)
    assert not white.fits(ranking.rankrc(*_data(80, rate=0.3), 0.01).data["rank"])


def test_rank_tr_with_whitened_features_reaches_the_same_optimum():
    # plain CG on the whitened features is the kernel-preconditioned PCG in other
    # coordinates: the same certified optimum as without them, as rank-newton (an
    # independent route) and clarabel and ecos (generic backends, to their accuracy)
    from conicml.contracts.ranking_ops import WhitenedFeatures

    prog = ranking.rankrc(*_data(90, rate=0.3), 2.0 ** -12)
    white = WhitenedFeatures(ranking.with_lambda(prog, 1.0).data["rank"])  # any lambda
    sol = cm.solve(prog, "rank-tr", direction="cg", whitened=white)
    plain = cm.solve(prog, "rank-tr", direction="cg")
    assert sol.extras["whitened"] and not plain.extras["whitened"]
    # OPTIMAL only with conicml's recomputed gap from the program's own data
    assert sol.status is cm.Status.OPTIMAL and sol.residuals.source == "recomputed"
    assert sol.residuals.gap <= 1e-5
    value = prog.decode(sol)["objective"]
    assert value == pytest.approx(prog.decode(plain)["objective"], rel=1e-9)
    ref = prog.decode(cm.solve(prog, "rank-newton", tol=1e-10))["objective"]
    assert value == pytest.approx(ref, rel=1e-9)
    for backend in ("clarabel", "ecos"):
        generic = prog.decode(cm.solve(prog, backend))["objective"]
        assert value == pytest.approx(generic, rel=max(obj_rtol(backend), 1e-7))
    other = WhitenedFeatures(ranking.rankrc(*_data(90, rate=0.3), 0.01).data["rank"])
    with pytest.raises(OptionError, match="whitened must be"):
        cm.solve(prog, "rank-tr", whitened=other)


def test_a_lambda_path_whitens_once_its_values_need_many_products(monkeypatch):
    # above EXACT_MAX_BASIS (lowered here) a path forms the whitened features once its
    # values took n_basis / WHITEN_AFTER products together and passes them on; every
    # value stays the certified optimum of its cold solve
    from conicml.solvers import _warm

    monkeypatch.setattr(_warm, "EXACT_MAX_BASIS", 4)
    prog = ranking.rankrc(*_data(90, rate=0.3), 1.0)
    lams = [2.0 ** k for k in (-4, -8, -12, -16)]
    path = ranking_path(prog, lams)
    flags = [sol.extras["whitened"] for _, sol in path]
    assert not flags[0] and flags[-1], flags
    assert flags == sorted(flags)  # once formed, kept for the rest of the path
    for lam, sol in path:
        one = ranking.with_lambda(prog, lam)
        assert sol.status is cm.Status.OPTIMAL and sol.residuals.gap <= 1e-5
        cold = one.decode(cm.solve(one, "rank-tr", direction="cg"))["objective"]
        assert one.decode(sol)["objective"] == pytest.approx(cold, rel=1e-9)


@pytest.mark.parametrize("lam", [2.0 ** -12, 2.0 ** -4])
def test_whitened_cg_on_the_active_rows_is_the_cg_on_all_rows(monkeypatch, lam):
    # the rows with no pair in the loss's quadratic piece add nothing to a Hessian product
    # (closed form of P^T I^Q P): CG on the gathered rows takes the same steps as CG on all
    # of them, so the solve ends at the same point (rounding apart) with the same counts
    from conicml.contracts.ranking_ops import WhitenedFeatures
    from conicml.solvers import rank_tr

    prog = ranking.rankrc(*_data(120, rate=0.3), lam)
    white = WhitenedFeatures(prog.data["rank"])
    runs = {}
    for fraction in (0.0, 1.0):  # never / always gather (a row with a pair is always kept)
        monkeypatch.setattr(rank_tr, "ACTIVE_ROWS_FRACTION", fraction)
        runs[fraction] = cm.solve(prog, "rank-tr", whitened=white, direction="cg")
    none, all_ = runs[0.0], runs[1.0]
    assert all_.status is cm.Status.OPTIMAL and all_.extras["whitened"]
    assert all_.extras["cg_iterations"] == none.extras["cg_iterations"] > 0
    assert all_.iterations == none.iterations
    np.testing.assert_allclose(all_.values["beta"], none.values["beta"], rtol=1e-8,
                               atol=1e-10 * np.abs(none.values["beta"]).max())


def test_kernel_metric_solves_a_vector_as_a_matrix():
    # two triangular solves for one right-hand side, LAPACK's potrs for several: the same
    # K_RR^{-1} v (against numpy.linalg.solve, an independent LU solve)
    from conicml.contracts.ranking_ops import KernelMetric

    rng = np.random.default_rng(3)
    A = rng.standard_normal((40, 40))
    K = A @ A.T / 40 + np.eye(40)
    metric, v = KernelMetric(K), rng.standard_normal(40)
    np.testing.assert_allclose(metric.solve(v), np.linalg.solve(K, v), rtol=1e-10)
    np.testing.assert_allclose(metric.solve(np.column_stack([v, 2 * v])),
                               np.linalg.solve(K, np.column_stack([v, 2 * v])), rtol=1e-10)


def test_rank_tr_diagonal_preconditioner_reaches_the_same_optimum():
    # the thesis' diagonal preconditioner: the same certified optimum (OPTIMAL only with
    # conicml's recomputed gap) as the kernel one and as clarabel (a generic backend)
    prog = ranking.rankrc(*_data(90, rate=0.3), 2.0 ** -6)
    diag = cm.solve(prog, "rank-tr", preconditioner="diagonal", direction="cg")
    kern = cm.solve(prog, "rank-tr", direction="cg")
    assert diag.status is cm.Status.OPTIMAL and diag.residuals.source == "recomputed"
    assert diag.residuals.gap <= 1e-5 and not diag.extras["whitened"]
    value = prog.decode(diag)["objective"]
    assert value == pytest.approx(prog.decode(kern)["objective"], rel=1e-9)
    generic = prog.decode(cm.solve(prog, "clarabel"))["objective"]
    assert value == pytest.approx(generic, rel=max(obj_rtol("clarabel"), 1e-7))
