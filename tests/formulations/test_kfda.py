"""KFDA (4.15)-(4.17) and KQPFS (4.7): closed forms, every solver of each kind agrees,
Proposition 4.1 (directions with cosine 1), KFDAClassifier, bad input."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import conicml as cm
from conicml.estimators import KFDAClassifier
from conicml.exceptions import ProgramError
from conicml.formulations import kfda
from conicml.kinds import KFDA, KQPFS

from tolerances import obj_rtol, sol_atol


def _standardize(X):
    return (X - X.mean(0)) / X.std(0)


def _data(name, n=160, seed=0):
    if name == "random":
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, 4))
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0.3, 1.0, -1.0)
        return X, y
    if name == "twonorm":
        return cm.datasets.twonorm(n, dim=6, random_state=seed)
    if name == "ringnorm":
        return cm.datasets.ringnorm(n, dim=6, random_state=seed)
    X, y = cm.datasets.load(name)
    idx = np.random.default_rng(seed).permutation(len(y))[:n]
    return _standardize(X)[idx], y[idx]


def _cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---- Proposition 4.1 ---------------------------------------------------------------------

def test_scatter_identities_behind_proposition_4_1():
    # Q_K = W + (N+ N- / N) d d^T and F_K = (2 N+ N- / N) d (total = within + between)
    X, y = _data("random", 60)
    f = kfda.kfda(X, y, 0.5).data["fisher"]
    n, npos = len(y), int((y > 0).sum())
    m_pos, m_neg = f.class_means()
    d = m_pos - m_neg
    A, F = f.kqpfs_system()
    W = f.within_scatter()
    np.testing.assert_allclose(A, W + npos * (n - npos) / n * np.outer(d, d), atol=1e-10)
    np.testing.assert_allclose(F, 2 * npos * (n - npos) / n * d, atol=1e-12)


@pytest.mark.parametrize("name", ["random", "twonorm", "ringnorm", "heart", "breast_cancer"])
@pytest.mark.parametrize("mu", [1e-2, 1.0])
def test_proposition_4_1_directions_agree(name, mu):
    X, y = _data(name)
    a = kfda.kfda(X, y, mu)
    b = kfda.kqpfs(X, y, mu)
    alpha_kfda = a.decode(cm.solve(a, "kfda-closed-form"))["alpha"]
    alpha_kqpfs = b.decode(cm.solve(b, "kqpfs-cholesky"))["alpha"]
    # the thesis's check: cosine 1 (here to 1e-10), same sign with Algorithm 3's sign
    assert _cosine(alpha_kfda, alpha_kqpfs) == pytest.approx(1.0, abs=1e-10)


def test_kfda_qp_closed_form_fixes_scale_and_bias():
    # closed form of the note (F21): alpha = 2 W^-1 d / (d^T W^-1 d), b = -(m+ + m-)^T a / 2
    X, y = _data("twonorm", 80)
    prog = kfda.kfda(X, y, 0.1)
    f = prog.data["fisher"]
    model = prog.decode(cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10))
    m_pos, m_neg = f.class_means()
    d = m_pos - m_neg
    a = np.linalg.solve(f.within_scatter(), d)
    np.testing.assert_allclose(model["alpha"], 2 * a / (d @ a), rtol=1e-6, atol=1e-8)
    assert d @ model["alpha"] == pytest.approx(2.0, rel=1e-8)
    assert model["b"] == pytest.approx(-0.5 * (m_pos + m_neg) @ model["alpha"], abs=1e-7)


# ---- every registered solver of each kind agrees with the reference ---------------------

def _options(solver):
    return {"ecos": {"eps_abs": 1e-10, "eps_rel": 1e-10}}.get(solver, {})


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("kind,build", [(KFDA, kfda.kfda), (KQPFS, kfda.kqpfs)])
@pytest.mark.parametrize("solver", sorted(set(cm.solvers.available(KFDA))
                                          | set(cm.solvers.available(KQPFS))))
def test_every_solver_agrees(solver, kind, build, kernel):
    if solver not in cm.solvers.available(kind):
        pytest.skip(f"{solver} does not accept {kind}")
    X, y = _data("twonorm", 70, seed=3)
    prog = build(X, y, 0.1, kernel=kernel)
    # reference: clarabel at tight tolerances (an independent interior-point solve)
    ref = cm.solve(prog, "clarabel", eps_abs=1e-10, eps_rel=1e-10)
    sol = cm.solve(prog, solver, **_options(solver))
    assert sol.ok, sol.message
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol(solver))
    a, r = prog.decode(sol)["alpha"], prog.decode(ref)["alpha"]
    np.testing.assert_allclose(a, r, atol=sol_atol(solver) * max(1.0, np.abs(r).max()))
    assert sol.residuals.source == "recomputed" and np.isfinite(sol.residuals.dual)


def test_specialized_solvers_are_registered():
    assert "kfda-closed-form" in cm.solvers.available(KFDA)
    assert "kqpfs-cholesky" in cm.solvers.available(KQPFS)
    assert {"clarabel", "ecos", "osqp"} <= set(cm.solvers.available(KFDA))
    assert {"clarabel", "ecos", "osqp"} <= set(cm.solvers.available(KQPFS))


# ---- the classifier ------------------------------------------------------------------------

@parametrize_with_checks([KFDAClassifier(), KFDAClassifier(method="qp")])
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_methods_predict_the_same():
    X, y = _data("heart", 200)
    preds = [KFDAClassifier(mu=0.1, method=m).fit(X, y).decision_function(X)
             for m in ("closed-form", "qp", "kqpfs")]
    np.testing.assert_array_equal(np.sign(preds[0]), np.sign(preds[2]))
    np.testing.assert_allclose(preds[0], preds[1], atol=1e-5)
    clf = KFDAClassifier(mu=0.1).fit(X, y)
    assert clf.score(X, y) > 0.85
    Xt, yt = cm.datasets.twonorm(400, dim=6, random_state=9)
    Xs, ys = cm.datasets.twonorm(200, dim=6, random_state=8)
    assert KFDAClassifier(mu=1.0).fit(Xs, ys).score(Xt, yt) > 0.9


def test_threshold_is_the_midpoint_of_projected_means():
    X, y = _data("twonorm", 100)
    clf = KFDAClassifier(mu=0.1, method="kqpfs").fit(X, y)
    z = clf.decision_function(X)
    assert z[y > 0].mean() == pytest.approx(-z[y < 0].mean(), abs=1e-9)
    assert z[y > 0].mean() > 0


def test_bad_input():
    X, y = _data("random", 30)
    with pytest.raises(ProgramError, match="mu"):
        kfda.kfda(X, y, 0.0)
    with pytest.raises(ProgramError, match="single class"):
        kfda.kqpfs(X, np.ones(30), 1.0)
    Xn = X.copy()
    Xn[1, 1] = np.inf
    with pytest.raises(ProgramError, match="infinite"):
        kfda.kfda(Xn, y)
    with pytest.raises(ProgramError, match="shape mismatch"):
        kfda.kfda(X, y[:-1])
    with pytest.raises(ValueError, match="mu"):
        KFDAClassifier(mu=-1.0).fit(X, y)


@pytest.mark.parametrize("p_pos", [0.1, 0.5])
def test_kernel_fisher_scatter_matches_the_centring_matrix_formula(p_pos):
    # reference: eq. (4.3) / Algorithm 3 written with explicit centring matrices,
    # W_mu = sum_pm K_pm (I - 1 1^T / N_pm) K_pm^T + mu I, and m_pm = K 1_pm / N_pm
    from conicml.contracts.kfda import KernelFisher

    rng = np.random.default_rng(5)
    X = rng.standard_normal((90, 4))
    y = np.where(rng.random(90) < p_pos, 1.0, -1.0)
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 4.0)
    f = KernelFisher(K, y, 1e-2)
    W = 1e-2 * np.eye(90)
    for mask in (y > 0, y < 0):
        n = int(mask.sum())
        W += K[:, mask] @ (np.eye(n) - np.ones((n, n)) / n) @ K[:, mask].T
    m_pos, m_neg = f.class_means()
    np.testing.assert_allclose(m_pos, K[:, y > 0].mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(m_neg, K[:, y < 0].mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(f.within_scatter(), W, rtol=1e-10, atol=1e-12)
    alpha = rng.standard_normal(90)
    np.testing.assert_allclose(f.within_apply(alpha), W @ alpha, rtol=1e-10, atol=1e-12)
