"""Regression tests of issue 11 ("no silent wrong answers"), part B.

Each test reproduces an instance of the issue verbatim, then a family around it.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import conicml as cm
from conicml.exceptions import ProgramError
from conicml.formulations import ordinal


def issue_data():
    """The issue's two-class instance (20 points, 3 features)."""
    r = np.random.default_rng(0)
    X = np.r_[r.normal(1, 1, (10, 3)), r.normal(-1, 1, (10, 3))]
    y = np.r_[np.ones(10), -np.ones(10)]
    return X, y


# -- item 9: ClusterMoments.from_sums with SS < ||LS||^2 / N -----------------------------

def test_from_sums_refuses_inconsistent_square_sums():
    with pytest.raises(ProgramError, match=r"square_sums\[0\].*smaller"):
        cm.ClusterMoments.from_sums([2], [[1.0, 1.0]], [0.5], [1])
    # the second cluster is the bad one: the message names it
    with pytest.raises(ProgramError, match=r"square_sums\[1\]"):
        cm.ClusterMoments.from_sums([2, 2], [[1.0, 1.0], [2.0, 0.0]], [5.0, 1.0], [1, 2])


@pytest.mark.parametrize("scale", [1e-8, 1.0, 1e8])
def test_from_sums_tolerates_round_off(scale):
    """A zero- or tiny-radius cluster far from the origin: SS/N - ||mu||^2 is round-off."""
    rng = np.random.default_rng(1)
    X = (1e3 + 1e-9 * rng.normal(size=(7, 3))) * scale
    mom = cm.ClusterMoments.from_sums([7], X.sum(0)[None], [np.sum(X * X)], [1])
    # sigma^2 = mean ||x - mu||^2, computed centred (exact to round-off of the spread)
    ref = np.sqrt(np.mean(np.sum((X - X.mean(0)) ** 2, axis=1)))
    assert mom.sigmas[0] <= max(ref, 1e-5 * 1e3 * scale)
    # and exact sums of real clusters give the centred radius
    Y = rng.normal(size=(9, 3)) * scale
    mom = cm.ClusterMoments.from_sums([9], Y.sum(0)[None], [np.sum(Y * Y)], [1])
    assert_allclose(mom.sigmas[0], np.sqrt(np.mean(np.sum((Y - Y.mean(0)) ** 2, axis=1))),
                    rtol=1e-10)


# -- item 4: cbor-smo at a dual optimum with rho = 0 -------------------------------------

def cbor_issue_program():
    r = np.random.default_rng(0)
    y = np.repeat([1.0, 2, 3], 10)
    X = np.round((r.normal(0, 0.7, (30, 2)) + 2 * y[:, None]) * 10)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=2,
                                           random_state=0)
    return ordinal.cbor(clusters)


def test_cbor_smo_never_optimal_when_its_certificate_fails():
    prog = cbor_issue_program()
    sol = cm.solve(prog, "cbor-smo")
    ref = cm.solve(prog, "clarabel")
    assert ref.status is cm.Status.OPTIMAL  # independent solver: optimum 0 (separable)
    if sol.status is cm.Status.OPTIMAL:
        # then it must be right and its own (solver-side) certificate must hold
        assert_allclose(sol.objective, ref.objective, atol=1e-6)
        assert sol.extras["kkt_violation"] <= 1e-6
    else:
        assert sol.status is cm.Status.USER_LIMIT
        assert "rho -> 0" in sol.message and "form='primal'" in sol.message


@pytest.mark.parametrize("seed", range(4))
def test_cbor_smo_optimal_implies_own_certificate(seed):
    """Separable ordinal clusters with W = 1 (the issue's regime): OPTIMAL -> certified."""
    r = np.random.default_rng(seed)
    y = np.repeat([1.0, 2, 3], 10)
    X = np.round((r.normal(0, 0.7, (30, 2)) + 2 * y[:, None]) * 10)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=2,
                                           random_state=seed)
    prog = ordinal.cbor(clusters)
    sol = cm.solve(prog, "cbor-smo")
    if sol.status is cm.Status.OPTIMAL:
        assert sol.extras["kkt_violation"] <= 1e-6
        ref = cm.solve(prog, "clarabel")
        assert_allclose(sol.objective, ref.objective, rtol=1e-5, atol=1e-6)
    else:
        assert sol.message
