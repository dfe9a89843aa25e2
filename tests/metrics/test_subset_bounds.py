"""Seed 000 ch. 4 bounds (conicml.metrics): closed forms and the bound holding on exact
solutions.

References: the values are the closed forms of (4.21), Theorem 9 and (4.36) evaluated by
hand (e.g. the rare-first curve 2 sqrt 2, 2, sqrt 2, 0 of the seed-000 note, §6.3 #10);
the Nystrom residual norm is checked against a dense pseudo-inverse computed
independently with numpy, and against a block kernel whose residual is known exactly;
the RankSVM solutions of the last test are cvxpy/Clarabel solves of (4.30) and (4.31)
written out here, independent of conicml.
"""

import numpy as np
import pytest

from conicml.exceptions import ProgramError
from conicml.metrics import (
    kernel_perturbation_bound,
    nystrom_residual_norm,
    nystrom_svm_bound,
    projected_map_bound,
    rare_first_bound_curve,
)


def test_projected_map_bound_closed_forms():
    # nothing in R: both sums are 1, bound 2 sqrt(2) kappa / lambda
    assert projected_map_bound(10, 90, 0, 0, lam=1.0) == pytest.approx(2 * np.sqrt(2))
    # RankRC (R = the rare class): the constant 2 kappa / lambda whatever the counts
    for m_pos, m_neg in [(10, 90), (559, 4913), (1, 1)]:
        assert projected_map_bound(m_pos, m_neg, m_pos, 0, lam=1.0) == pytest.approx(2.0)
    assert projected_map_bound(10, 90, 10, 90, lam=1.0) == 0.0  # R = everything
    # scaling: 2 kappa / lambda sqrt(S) with kappa = 3, lambda = 0.5, S = 1/2 + 1/2
    assert projected_map_bound(4, 8, 2, 4, lam=0.5, kappa=3.0) == pytest.approx(12.0)


def test_rare_first_curve_is_the_notes_closed_form_and_the_best_order():
    # Page0 counts (Table 4.1): 2 sqrt 2 at 0, 2 at m+, 0 at m
    curve = rare_first_bound_curve(559, 4913, [0, 559, 5472])
    assert curve == pytest.approx([2 * np.sqrt(2), 2.0, 0.0])
    # sqrt 2 half-way through the majority class (m- even so that half is exact)
    assert rare_first_bound_curve(10, 90, [55])[0] == pytest.approx(np.sqrt(2))
    # Corollary 7: for every |R| no split of R between the classes gives a lower bound
    m_pos, m_neg = 7, 30
    for size in range(m_pos + m_neg + 1):
        best = min(projected_map_bound(m_pos, m_neg, r, size - r, lam=1.0)
                   for r in range(max(0, size - m_neg), min(size, m_pos) + 1))
        assert rare_first_bound_curve(m_pos, m_neg, [size])[0] == pytest.approx(best)


def test_nystrom_svm_bound_uses_the_derived_constant():
    assert nystrom_svm_bound(100, 0, lam=1.0) == pytest.approx(np.sqrt(2))
    assert nystrom_svm_bound(100, 75, lam=2.0) == pytest.approx(np.sqrt(2) / 2 * 0.5)
    assert nystrom_svm_bound(100, 100, lam=1.0) == 0.0
    # kappa = 4: sqrt(2) kappa / lambda = 4 sqrt 2 (the printed sqrt(2 kappa) would be 2 sqrt 2)
    assert nystrom_svm_bound(10, 0, lam=1.0, kappa=4.0) == pytest.approx(4 * np.sqrt(2))


def test_kernel_perturbation_bound_closed_form():
    assert kernel_perturbation_bound(0.0, lam=1.0) == 0.0
    # ||K' - K|| = 4 kappa, kappa = 1: 2 sqrt2 * 2 * (1 + 1) = 8 sqrt 2
    assert kernel_perturbation_bound(4.0, lam=1.0) == pytest.approx(8 * np.sqrt(2))
    # kappa = 16, norm = 64: 2 sqrt2 * 8 * 8 * (1 + 1) / 2 (lambda = 2)
    assert kernel_perturbation_bound(64.0, lam=2.0, kappa=16.0) == pytest.approx(
        2 * np.sqrt(2) * 8 * 8 * 2 / 2)


def test_bad_arguments_raise_a_conicml_error_naming_them():
    with pytest.raises(ProgramError, match="both classes"):
        projected_map_bound(0, 5, 0, 0, lam=1.0)
    with pytest.raises(ProgramError, match="r_pos must be an integer >= 0 and at most 3"):
        projected_map_bound(3, 5, 4, 0, lam=1.0)
    with pytest.raises(ProgramError, match="lam must be a positive number"):
        nystrom_svm_bound(5, 1, lam=0.0)
    with pytest.raises(ProgramError, match="spectral norm >= 0"):
        kernel_perturbation_bound(-1.0, lam=1.0)
    with pytest.raises(ProgramError, match="square matrix"):
        nystrom_residual_norm(np.ones((3, 2)), [0])
    with pytest.raises(ProgramError, match="sizes must be integers"):
        rare_first_bound_curve(3, 5, [9])


def _gaussian_kernel(X):
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-D / D.mean())


@pytest.mark.parametrize("m", [120, 520])  # the dense eigenvalue path and Lanczos (> 400)
@pytest.mark.parametrize("size", [25, 100, 300])
def test_nystrom_residual_norm_matches_a_dense_pseudo_inverse(m, size):
    # d = 30: K_RR is well conditioned (its smallest eigenvalue ~1e-2 at |R| = 300), so
    # the eigenvalue pseudo-inverse is an independent reference to near machine precision
    rng = np.random.default_rng(0)
    K = _gaussian_kernel(rng.standard_normal((m, 30)))
    idx = rng.choice(m, min(size, m - 1), replace=False)
    C = K[:, idx]
    dense = np.linalg.eigvalsh(K - C @ np.linalg.pinv(K[np.ix_(idx, idx)], rcond=1e-10,
                                                       hermitian=True) @ C.T)[-1]
    assert nystrom_residual_norm(K, idx) == pytest.approx(dense, rel=1e-6)
    assert nystrom_residual_norm(K, []) == pytest.approx(np.linalg.eigvalsh(K)[-1], rel=1e-8)
    assert nystrom_residual_norm(K, np.arange(m)) == 0.0
    assert nystrom_residual_norm(K, np.r_[idx, idx]) == nystrom_residual_norm(K, idx)


def test_nystrom_residual_norm_decreases_as_the_basis_grows():
    # d = 3: K_RR is numerically rank-deficient. A larger R projects the feature map onto a
    # larger subspace, so the residual cannot grow (exact arithmetic); the pivoted Cholesky
    # keeps that order down to tiny residuals, where an eigenvalue pseudo-inverse at a small
    # cut-off does not (one draw of this kind, |R| = 300 of 520: the pseudo-inverse gave
    # 0.0035 at rcond 1e-10 but 0.08 at 1e-14; the pivoted Cholesky 0.0017 at rtol 1e-10
    # and 0.0006 at 1e-14)
    rng = np.random.default_rng(1)
    m = 520
    K = _gaussian_kernel(rng.standard_normal((m, 3)))
    order = rng.permutation(m)
    norms = [nystrom_residual_norm(K, order[:size]) for size in (0, 10, 50, 150, 300, 519)]
    assert all(b <= a * (1 + 1e-9) for a, b in zip(norms, norms[1:]))
    assert norms[-1] < 1e-6 * norms[0]


def test_nystrom_residual_of_a_block_kernel_is_the_block_left_out():
    # two clusters of identical points: K = blockdiag(ones(3), ones(5)); one column of the
    # first block reproduces it exactly, the residual is the second block, norm 5
    K = np.zeros((8, 8))
    K[:3, :3] = 1.0
    K[3:, 3:] = 1.0
    assert nystrom_residual_norm(K, [1]) == pytest.approx(5.0)
    assert nystrom_residual_norm(K, [1, 6]) == pytest.approx(0.0, abs=1e-12)


def _ranksvm_scores(K, pos, neg, basis, lam):
    """Scores K[:, basis] beta of the hinge RankSVM (4.31) on the basis, solved by cvxpy."""
    cp = pytest.importorskip("cvxpy")
    Kb = K[:, basis]
    vals, vecs = np.linalg.eigh(K[np.ix_(basis, basis)])
    keep = vals > 1e-10 * vals[-1]
    F = vecs[:, keep] * np.sqrt(vals[keep])  # K_RR = F F^T on its range
    beta = cp.Variable(len(basis))
    f = Kb @ beta
    diffs = cp.hstack([f[i] - f[j] for i in pos for j in neg])
    loss = cp.sum(cp.pos(1 - diffs)) / (len(pos) * len(neg))
    cp.Problem(cp.Minimize(loss + lam / 2 * cp.sum_squares(F.T @ beta))).solve(
        solver="CLARABEL")
    return Kb @ beta.value


def test_theorem_6_bound_holds_on_exact_ranksvm_solutions():
    rng = np.random.default_rng(3)
    m_pos, m_neg, lam = 6, 24, 0.5
    X = np.vstack([rng.normal(0.7, 1.0, (m_pos, 2)), rng.normal(0.0, 1.0, (m_neg, 2))])
    K = _gaussian_kernel(X)  # Gaussian: kappa = 1
    pos, neg = np.arange(m_pos), np.arange(m_pos, m_pos + m_neg)
    full = _ranksvm_scores(K, pos, neg, np.arange(m_pos + m_neg), lam)
    for basis in [pos, np.r_[pos, neg[:12]], rng.choice(m_pos + m_neg, 8, replace=False)]:
        sub = _ranksvm_scores(K, pos, neg, basis, lam)
        r_pos = int(np.isin(pos, basis).sum())
        r_neg = int(np.isin(neg, basis).sum())
        bound = projected_map_bound(m_pos, m_neg, r_pos, r_neg, lam=lam)
        assert np.max(np.abs(sub - full)) <= bound + 1e-5
