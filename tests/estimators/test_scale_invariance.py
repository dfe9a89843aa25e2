"""The scale invariance the docs promise, on the estimators' defaults, and the warning of
the models that depend on the units of the features.

MPM, BMPM, MEMPM and the linear M4 are invariant to a rescaling x -> Dx of the features
(D positive diagonal): the programs see the data only through d and the covariances,
which become Dd and D Sigma D, and the default ridge Sigma + r diag(Var X) becomes
D(Sigma + r diag(Var X))D, so w -> D^-1 w with the normalisation w^T d = 1 unchanged and
every decision value f(x) = w^T x + b is the same number. Reference of every check: the
same estimator on the unscaled data (the invariance is exact in exact arithmetic).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from conicml import ClassMoments, ConicMLWarning, datasets
from conicml.estimators import (
    BMPMClassifier,
    ChanceConstrainedClassifier,
    ClusterSOCPClassifier,
    ClusterSOCPOrdinalRegressor,
    HLSVMClassifier,
    KFDAClassifier,
    LSVRRegressor,
    M4Classifier,
    MEMPMClassifier,
    MPMClassifier,
    RankRCClassifier,
    RankRCRanker,
    SVMClassifier,
    SVOrdinalRegressor,
)
from conicml.formulations import m4 as m4f
from conicml.formulations import minimax as mm

# one feature scaled by each factor (the first column by 1e-8 and 1e8, the last by 1e-4 and
# 1e4), and every feature by random factors 10^U(-8, 8)
FACTORS = [1e-8, 1e8, 1e-4, 1e4]

# The scaled fits solve a differently rounded program (the internal power-of-two
# equilibration differs per scaling), and Clarabel's points, certified to a gap of ~1e-8, are
# accurate to about its square root in flat directions (docs/trust.md): decision values,
# relative to their largest magnitude on the test set, agree to this (measured: at most
# 4e-5, BMPM under random per-feature scales; 1e-13..1e-9 for the separable M4). An
# absolute ridge moves them far beyond it (test_absolute_ridge_is_not_invariant).
DECISION_RTOL = 1e-3


@pytest.fixture(scope="module")
def heart():
    """The bundled heart data (297 x 13), standardised, split 200 / 97."""
    X, y = datasets.load("heart")
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rng = np.random.default_rng(0)
    idx = rng.permutation(y.size)
    return X[idx[:200]], y[idx[:200]], X[idx[200:]], y[idx[200:]]


@pytest.fixture(scope="module")
def separable(heart):
    """Training points of ``heart`` separable by construction (for the separable M4): those
    at least one unit of the LDA score on their own side of its threshold."""
    X, y, Xt, _ = heart
    mp, mn = X[y > 0].mean(axis=0), X[y < 0].mean(axis=0)
    S = np.cov(X[y > 0], rowvar=False) + np.cov(X[y < 0], rowvar=False)
    w = np.linalg.solve(S, mp - mn)
    f = X @ w - 0.5 * (mp + mn) @ w
    f = f / f.std()
    keep = y * f > 0.3
    return X[keep], y[keep], Xt


def _scalings(n_features: int) -> list[tuple[str, np.ndarray]]:
    out = []
    for j, factor in zip((0, 0, n_features - 1, n_features - 1), FACTORS):
        D = np.ones(n_features)
        D[j] = factor
        out.append((f"column {j} x {factor:g}", D))
    rng = np.random.default_rng(1)
    out.append(("every column x 10^U(-8, 8)", 10.0 ** rng.uniform(-8, 8, n_features)))
    return out


INVARIANT = {
    "MPM": MPMClassifier,
    "BMPM": BMPMClassifier,
    "MEMPM": MEMPMClassifier,
    "M4 (soft, C='auto')": M4Classifier,
    "M4 (soft, C=0.05)": lambda: M4Classifier(C=0.05),
}


def _check_invariant(make, X, y, Xt):
    ref = make().fit(X, y)
    f_ref = ref.decision_function(Xt)
    p_ref = ref.predict(Xt)
    tol = DECISION_RTOL * float(np.max(np.abs(f_ref)))
    with warnings.catch_warnings():
        # the point of the test: the scale-invariant models must not call this input bad
        warnings.filterwarnings("error", message="badly scaled", category=ConicMLWarning)
        for label, D in _scalings(X.shape[1]):
            est = make().fit(X * D, y)
            f = est.decision_function(Xt * D)
            err = float(np.max(np.abs(f - f_ref)))
            assert err <= tol, f"{label}: decision values moved by {err:.3g} > {tol:.3g}"
            clear = np.abs(f_ref) > tol  # a point on the boundary may fall either way
            assert np.array_equal(est.predict(Xt * D)[clear], p_ref[clear]), label
            if hasattr(ref, "coef_"):  # w -> D^-1 w
                np.testing.assert_allclose(est.coef_[0] * D, ref.coef_[0], rtol=1e-3,
                                           atol=1e-3 * np.abs(ref.coef_).max())


@pytest.mark.parametrize("name", list(INVARIANT))
def test_default_estimator_is_invariant_to_feature_scaling(heart, name):
    """Every scale-invariant estimator with its default parameters: the decision values on
    held-out points do not move when one feature (or every feature) is scaled by
    1e-8 ... 1e8 (an absolute ridge such as 1e-6 x the mean variance, in the units of the
    largest feature, changes a large share of the predictions here)."""
    X, y, Xt, _ = heart
    _check_invariant(INVARIANT[name], X, y, Xt)


def test_default_separable_m4_is_invariant_to_feature_scaling(separable):
    """The separable M4 (C=None), default ridge, on separable training data."""
    X, y, Xt = separable
    _check_invariant(lambda: M4Classifier(C=None), X, y, Xt)


def test_absolute_ridge_is_not_invariant(heart):
    """The explicit absolute ridge rho I keeps its documented meaning (units of X): the
    check above has power -- it fails for MPM with ridge = 1e-2 -- and the fit says so."""
    X, y, Xt, _ = heart
    ref = MPMClassifier(ridge=1e-2).fit(X, y)
    D = np.ones(X.shape[1])
    D[0] = 1e-4  # the ridge now swamps this column's variance (1e-8)
    with pytest.warns(ConicMLWarning, match="absolute covariance ridge"):
        est = MPMClassifier(ridge=1e-2).fit(X * D, y)
    moved = np.max(np.abs(est.decision_function(Xt * D) - ref.decision_function(Xt)))
    assert moved > 10 * DECISION_RTOL * np.max(np.abs(ref.decision_function(Xt)))


# -- the formulations: what the ridges add to the covariances ------------------------------
def test_relative_ridge_adds_r_times_the_feature_variances(heart):
    """``relative_ridge=r`` adds r diag(Var X) (closed form, np.var) to both class
    covariances; ``ridge=rho`` adds rho I; a constant feature takes the mean variance."""
    X, y, _, _ = heart
    X = np.column_stack([X * np.geomspace(1e-3, 1e3, X.shape[1]), np.full(y.size, 7.0)])
    r, rho = 1e-2, 0.5
    v = X.var(axis=0)
    v[-1] = v[:-1].mean()
    for prog in (mm.mpm(X, y, ridge=rho, relative_ridge=r),
                 mm.bmpm(X, y, 0.1, ridge=rho, relative_ridge=r),
                 mm.mempm(X, y, ridge=rho, relative_ridge=r)):
        s = prog.data["feature_scale"]
        Sx = prog.data["Sx"] * np.outer(s, s)  # internal coordinates -> the user's
        cov = np.cov(X[y > 0], rowvar=False, bias=True)
        np.testing.assert_allclose(Sx, cov + rho * np.eye(X.shape[1]) + r * np.diag(v),
                                   rtol=1e-10, atol=1e-12 * np.abs(Sx).max())
    prog = m4f.m4(X, y, "auto", ridge=rho, relative_ridge=r)
    s = prog.data["feature_scale"]
    R = prog.data["R_neg"] * s  # R^T R in the user's coordinates
    cov = np.cov(X[y < 0], rowvar=False, bias=True)
    np.testing.assert_allclose(R.T @ R, cov + rho * np.eye(X.shape[1]) + r * np.diag(v),
                               rtol=1e-8, atol=1e-10 * np.abs(cov).max())


def test_relative_ridge_from_moments_without_sample_sizes():
    """Moments without n_pos/n_neg weigh the classes equally:
    v = (diag Sx + diag Sy) / 2 + d^2 / 4 (closed form)."""
    Sx, Sy = np.diag([1.0, 4.0]), np.array([[9.0, 1.0], [1.0, 16.0]])
    mom = ClassMoments(np.array([1.0, 2.0]), Sx, np.array([-1.0, 0.0]), Sy)
    prog = mm.mpm(mom, relative_ridge=0.1)
    s = prog.data["feature_scale"]
    v = 0.5 * np.array([1.0 + 9.0, 4.0 + 16.0]) + 0.25 * np.array([2.0, 2.0]) ** 2
    np.testing.assert_allclose(prog.data["Sy"] * np.outer(s, s), Sy + 0.1 * np.diag(v),
                               rtol=1e-12)


def test_relative_ridge_is_refused_with_a_kernel(heart):
    X, y, _, _ = heart
    with pytest.raises(ValueError, match="relative_ridge applies to kernel='linear' only"):
        mm.mpm(X, y, ridge=1e-3, relative_ridge=1e-6, kernel="rbf")
    with pytest.raises(ValueError, match="relative_ridge applies to kernel='linear' only"):
        m4f.m4(X, y, "auto", ridge=1e-3, relative_ridge=1e-6, kernel="rbf")


# -- the models that depend on the units warn -------------------------------------------
UNIT_DEPENDENT = {
    "SVM (linear)": SVMClassifier,
    "SVM (rbf)": lambda: SVMClassifier(kernel="rbf"),
    "KFDA (rbf)": KFDAClassifier,
    "RankRC (rbf)": RankRCClassifier,
    "ClusterSOCP (linear)": ClusterSOCPClassifier,
    "ChanceConstrained (linear)": ChanceConstrainedClassifier,
    "MPM (rbf)": lambda: MPMClassifier(kernel="rbf"),
    "M4 (rbf)": lambda: M4Classifier(kernel="rbf"),
    "RankRCRanker (rbf)": RankRCRanker,
    "ClusterSOCPOrdinal (linear)": ClusterSOCPOrdinalRegressor,
    "SVOrdinal (rbf)": SVOrdinalRegressor,
    "HLSVM (standardize=False)": lambda: HLSVMClassifier(standardize=False, random_state=0),
    "LSVR (rbf)": lambda: LSVRRegressor(kernel="rbf"),
}


@pytest.fixture(scope="module")
def small(heart):
    X, y, _, _ = heart
    return X[:80], y[:80]


@pytest.mark.parametrize("name", list(UNIT_DEPENDENT))
def test_unit_dependent_model_warns_about_badly_scaled_input(small, name):
    """A model whose fit depends on the units (kernel distances, a penalty on ||w||) warns,
    naming the two extreme columns, when one column is x 1e6; on standardised data it does
    not."""
    X, y = small
    Xs = X.copy()
    Xs[:, 3] *= 1e6
    with pytest.warns(ConicMLWarning, match=r"badly scaled input .*column 3: std"):
        try:
            UNIT_DEPENDENT[name]().fit(Xs, y)
        except ValueError:  # a fit the bad scale breaks still warned first
            pass
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="badly scaled", category=ConicMLWarning)
        UNIT_DEPENDENT[name]().fit(X, y)


NOT_WARNING = {**INVARIANT,
               "M4 (separable)": lambda: M4Classifier(C=None),
               # the nodes are solved on standardised features
               "HLSVM (default)": lambda: HLSVMClassifier(random_state=0),
               "LSVR (linear)": LSVRRegressor}


@pytest.mark.parametrize("name", list(NOT_WARNING))
def test_invariant_model_does_not_warn(small, separable, name):
    X, y = separable[:2] if name == "M4 (separable)" else small
    X, y = X[:80], y[:80]
    Xs = X.copy()
    Xs[:, 3] *= 1e6
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="badly scaled", category=ConicMLWarning)
        NOT_WARNING[name]().fit(Xs, y)
