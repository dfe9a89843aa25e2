"""The certificate of the smoothed ranking kind: a rigorous bound on the objective gap.

``gap_bound`` must never be below the true relative excess ``(F(beta) - F*) / scale``.
F* is not known in closed form; every test compares with a lower value that an
independent solver (Clarabel) reaches, which can only make the true excess larger than
the one tested: a bound that fails here is wrong.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import conicml as cm
from conicml.contracts.ranking_ops import LinearizedRanking, gap_bound, gradient_parts
from conicml.formulations import ranking

sys.path.insert(0, str(Path(__file__).parents[1] / "campaign"))


def _data(seed, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    y = -np.ones(60)
    y[:12] = 1.0
    X[y > 0] += 0.7
    X[:, 1] *= scale
    return X, y


def _program(kernel, scale, seed):
    X, y = _data(seed, scale)
    return ranking.rankrc(X, y, 2.0 ** -6, kernel=kernel, gamma=1.0 / (3 * scale ** 2))


def _accurate_value(rank, beta):
    # F in the eigen-coordinates of K_RR: K_R U U^T beta keeps a feature on a far larger
    # scale apart, where K_R beta loses digits to cancellation
    lin = LinearizedRanking(rank, eig_rtol=float(np.finfo(float).eps))
    return lin.evaluate(lin.to_w(beta))[0]


def _scale(rank, beta):
    f0 = gradient_parts(rank, np.zeros(rank.n_basis))[0]
    return max(gradient_parts(rank, beta)[0], 1e-3 * f0)


@pytest.mark.parametrize("kernel,scale", [("rbf", 1.0), ("linear", 1.0), ("linear", 1e6)])
def test_gap_bound_is_never_below_the_excess_over_an_independent_optimum(kernel, scale):
    prog = _program(kernel, scale, seed=3)
    rank = prog.data["rank"]
    ref = cm.solve(prog, "clarabel")
    beta_ref = prog.decode(ref)["beta"]
    f_ref = _accurate_value(rank, beta_ref)
    rng = np.random.default_rng(0)
    for size in (1e-8, 1e-5, 1e-3, 1e-1, 1.0):
        for _ in range(4):
            beta = beta_ref + size * np.abs(beta_ref).max() * rng.normal(size=beta_ref.size)
            excess = (_accurate_value(rank, beta) - f_ref) / _scale(rank, beta)
            # round-off of the two objective values: a few eps of F
            assert gap_bound(rank, beta) >= excess - 1e-13, (size, excess)


@pytest.mark.parametrize("kernel,scale", [("rbf", 1.0), ("linear", 1e6)])
def test_gap_bound_certifies_an_interior_point_answer(kernel, scale):
    # Clarabel's point is optimal to its own tolerance; the bound must see it (a pure
    # strong-convexity bound at the point itself reads 1e5 here when one feature is large)
    prog = _program(kernel, scale, seed=4)
    ref = cm.solve(prog, "clarabel")
    assert gap_bound(prog.data["rank"], prog.decode(ref)["beta"]) <= 1e-7


def test_gap_bound_is_infinite_at_a_non_finite_point():
    prog = _program("rbf", 1.0, seed=5)
    beta = np.full(prog.data["rank"].n_basis, np.nan)
    assert gap_bound(prog.data["rank"], beta) == np.inf


def test_the_stall_of_rank_tr_on_a_feature_scaled_by_1e8_is_not_certified():
    # campaign instance: a linear kernel with one feature x1e8 (K_RR singular to working
    # precision); rank-tr's trust region stalls there 0.18 % above the optimum with a
    # relative gradient of 3e-7, which the former stationarity certificate accepted
    import campaign_instances

    prog, _, _ = campaign_instances.instance("ranking", 851)
    iterates = []
    sol = cm.solve(prog, "rank-tr", tol=1e-9,
                   callback=lambda r: iterates.append(np.array(r.values["beta"])))
    stall = iterates[-1]  # the trust region's last point, before the end game
    ref = cm.solve(prog, "clarabel")
    rank = prog.data["rank"]
    assert _accurate_value(rank, stall) > ref.objective * (1 + 1e-3)
    claimed = cm.Solution(status=cm.Status.OPTIMAL, solver="test",
                          objective=_accurate_value(rank, stall), values={"beta": stall})
    assert prog.certify(claimed).gap > 1e-3
    assert cm.solving._certified(prog, claimed, 1e-5).status is cm.Status.OPTIMAL_INACCURATE
    # rank-tr's answer itself is the optimum (Newton steps from the stalled point)
    assert sol.status is cm.Status.OPTIMAL
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)


def test_the_parts_a_lambda_path_shares_are_those_of_its_kernel_arrays():
    # shared_parts: the pair structure, the K_RR factor, the zero gradient and the
    # eigen-coordinates are found again for every lambda of one program's kernel arrays
    # (with_lambda) and never for other arrays or a block changed in place; the
    # certificate along a path equals the one of the same program built anew
    from conicml.contracts.ranking_ops import shared_parts, zero_gradient

    prog = _program("rbf", 1.0, 3)
    other = ranking.with_lambda(prog, 2.0 ** -10)
    rank, rank_other = prog.data["rank"], other.data["rank"]
    parts = shared_parts(rank)
    assert shared_parts(rank_other) is parts
    lin = LinearizedRanking(rank_other)
    assert LinearizedRanking(rank).Xt is lin.Xt and lin.reference_curvature() is None
    value, g0 = parts.zero(rank)
    fresh_value, fresh_g0 = zero_gradient(rank)
    assert value == fresh_value
    np.testing.assert_allclose(g0, fresh_g0, rtol=1e-12)
    anew = _program("rbf", 1.0, 3)  # equal arrays, other objects: not shared
    assert shared_parts(anew.data["rank"]) is not parts
    beta = cm.solve(other, "rank-tr").values["beta"]
    along = gap_bound(rank_other, beta)
    assert along == pytest.approx(gap_bound(ranking.with_lambda(anew, 2.0 ** -10).data["rank"],
                                            beta), rel=1e-9, abs=1e-18)
    parts = shared_parts(rank)
    rank.KRR[0, 1] += 1e-3  # changed in place: a different program
    assert not parts.fits(rank) and shared_parts(rank) is not parts


def test_the_certificate_reuses_only_an_evaluation_from_the_data_at_the_returned_point(
        monkeypatch):
    # rank-tr's trust-region points are evaluated by point_parts from (data, beta) alone;
    # gradient_parts (the certificate) at the same data object and an equal beta returns
    # that evaluation, anything else is evaluated afresh; the certificate equals the one
    # evaluated afresh on the same program built anew
    from conicml.contracts import ranking_ops

    prog = _program("rbf", 1.0, 5)
    rank = prog.data["rank"]
    sol = cm.solve(prog, "rank-tr", direction="cg")
    beta = sol.values["beta"]
    calls = []
    evaluate = ranking_ops.PairwiseLoss.evaluate
    monkeypatch.setattr(ranking_ops.PairwiseLoss, "evaluate",
                        lambda self, p: calls.append(1) or evaluate(self, p))
    value, gl, gr = gradient_parts(rank, beta.copy())
    assert not calls
    anew = ranking.rankrc(*_data(5), 2.0 ** -6, kernel="rbf", gamma=1.0 / 3)
    fresh = gradient_parts(anew.data["rank"], beta)
    assert len(calls) == 1
    assert value == pytest.approx(fresh[0], rel=1e-12)
    np.testing.assert_allclose(gl + gr, fresh[1] + fresh[2], rtol=1e-8, atol=1e-14)
    gradient_parts(ranking.with_lambda(prog, 1.0).data["rank"], beta)  # another program
    gradient_parts(rank, beta * (1 + 1e-15))  # another point
    assert len(calls) == 3
    assert sol.residuals.gap == pytest.approx(gap_bound(anew.data["rank"], beta),
                                              rel=1e-6, abs=1e-16)
