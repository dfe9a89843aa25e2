"""dcd on the L2-loss (squared hinge) linear SVM, against clarabel and ecos.

References: the same program solved by the generic backends (clarabel, ecos), a closed
form on two points, the duplicated-row identity of integer sample weights, and a 1-D
minimiser for the bias.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

import conicml as cm
from conicml.certificates.squared_hinge import squared_hinge_bias
from conicml.exceptions import ProgramError
from conicml.formulations.svm_l2 import squared_hinge
from conicml.solution import Solution, Status

TOL = 1e-8  # dcd's certified relative gap; the comparisons below allow ~1e-6
ENGINES = ["numba", "numpy"]


def _engine(engine):
    if engine == "numba":
        pytest.importorskip("numba")
    return engine


def _random(n=150, d=6, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + shift
    y = np.where(X[:, 0] - shift + 0.7 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    return X, y


def _structured():
    """Instances with structure a coordinate method can trip on."""
    rng = np.random.default_rng(3)
    out = {}
    # separable with a wide margin: most multipliers exactly 0
    X = np.r_[rng.normal(size=(40, 3)) + 4.0, rng.normal(size=(40, 3)) - 4.0]
    out["separable"] = (X, np.r_[np.ones(40), -np.ones(40)])
    # the same points twice with opposite labels (ties), plus a clean part
    Xd = rng.normal(size=(30, 2))
    Xc = rng.normal(size=(60, 2))
    yc = np.where(Xc[:, 1] > 0, 1.0, -1.0)
    out["duplicates"] = (np.r_[Xd, Xd, Xc], np.r_[np.ones(30), -np.ones(30), yc])
    # imbalanced and far from the origin (a large bias)
    X, _ = _random(n=120, d=4, seed=5, shift=25.0)
    y = -np.ones(120)
    y[:12] = 1.0
    X[:12] += 0.8
    out["imbalanced_shifted"] = (X, y)
    # one informative feature among constant and zero columns
    X = np.c_[rng.normal(size=100), np.ones(100), np.zeros(100)]
    out["degenerate_columns"] = (X, np.where(X[:, 0] + 0.3 * rng.normal(size=100) > 0,
                                              1.0, -1.0))
    return out


def _check_against_generic(program, engine):
    sol = cm.solve(program, "dcd", tol=TOL, engine=_engine(engine))
    assert sol.status is Status.OPTIMAL and sol.residuals.source == "recomputed"
    assert sol.extras["loss"] == "squared_hinge"
    model = program.decode(sol)
    for name in ("clarabel", "ecos"):
        ref = cm.solve(program, name)
        assert ref.status is Status.OPTIMAL
        # dcd's gap 1e-8 and the interior-point solvers' ~1e-8: 1e-6 relative is loose
        assert sol.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-9)
        ref_model = program.decode(ref)
        scale = max(1.0, float(np.abs(ref_model["w"]).max()))
        # w and b are unique (strictly convex): sqrt of the objective accuracy
        np.testing.assert_allclose(model["w"], ref_model["w"], atol=3e-3 * scale)
        assert model["b"] == pytest.approx(ref_model["b"], abs=3e-3 * max(1, abs(model["b"])))
    return sol


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_random_instances_match_clarabel_and_ecos(form, engine):
    X, y = _random(seed=1)
    sw = np.random.default_rng(2).uniform(0.2, 3.0, y.size)
    program = squared_hinge(X, y, C=0.5, class_weight={1: 2.0, -1: 1.0}, sample_weight=sw,
                            form=form)
    _check_against_generic(program, engine)


@pytest.mark.parametrize("name", list(_structured()))
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_structured_instances_match_clarabel_and_ecos(name, form):
    X, y = _structured()[name]
    program = squared_hinge(X, y, C=2.0, class_weight="balanced", form=form)
    _check_against_generic(program, "numba" if _has_numba() else "numpy")


def _has_numba() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_two_points_closed_form(C):
    # x = +1 (y = +1), x = -1 (y = -1): b = 0 by symmetry and w minimises
    # w^2/2 + 2C(1 - w)^2, so w = 4C / (1 + 4C)
    program = squared_hinge(np.array([[1.0], [-1.0]]), np.array([1.0, -1.0]), C=C)
    sol = cm.solve(program, "dcd", tol=1e-12)
    model = program.decode(sol)
    assert model["w"][0] == pytest.approx(4 * C / (1 + 4 * C), rel=1e-6)
    assert model["b"] == pytest.approx(0.0, abs=1e-6)


def test_integer_sample_weight_is_a_duplicated_row():
    X, y = _random(n=60, d=3, seed=7)
    sw = np.ones(y.size)
    sw[:10] = 2.0
    weighted = cm.solve(squared_hinge(X, y, C=1.0, sample_weight=sw), "dcd", tol=1e-10)
    dup = squared_hinge(np.r_[X, X[:10]], np.r_[y, y[:10]], C=1.0)
    ref = cm.solve(dup, "clarabel")
    assert weighted.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(weighted.values["w"], ref.values["w"], atol=1e-3)


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_sparse_input(form):
    X, y = _random(n=120, d=40, seed=4)
    X[np.abs(X) < 1.0] = 0.0
    program = squared_hinge(sp.csr_matrix(X), y, C=1.0, form=form)
    assert sp.issparse(program.data["X"])
    sol = cm.solve(program, "dcd", tol=TOL)
    assert sol.status is Status.OPTIMAL and sol.extras["sparse"]
    ref = cm.solve(squared_hinge(X, y, C=1.0, form=form), "ecos")
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)


def test_certificate_rejects_a_perturbed_point():
    X, y = _random(seed=8)
    program = squared_hinge(X, y, C=1.0)
    sol = cm.solve(program, "clarabel")
    values = dict(sol.values, w=sol.values["w"] * 1.05)
    xi = np.maximum(0.0, 1.0 - y * (X @ values["w"] + values["b"]))
    values["xi"] = xi
    bad = Solution(status=Status.OPTIMAL, solver="test", objective=0.5 * values["w"] @ values["w"]
                   + program.data["c"] @ xi**2, values=values)
    assert program.certify(bad).max() > 1e-4  # a 5 % change of w is far from optimal
    good = program.certify(sol)
    assert good.max() < 1e-6


def test_bias_is_the_exact_minimiser():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 40))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        y[:2] = [1.0, -1.0]
        f, c = rng.normal(size=n) * rng.choice([0.1, 1.0, 5.0]), rng.exponential(size=n)

        def g(b, f=f, y=y, c=c):
            return float(c @ np.maximum(0.0, 1.0 - y * (f + b)) ** 2)

        b = squared_hinge_bias(f, y, c)
        ref = minimize_scalar(g, bracket=(-30.0, 30.0), tol=1e-12)
        assert g(b) <= g(ref.x) + 1e-9 * (1.0 + g(ref.x))


def test_bad_input():
    X, y = _random(n=20, d=2)
    with pytest.raises(ProgramError, match="sample_weight"):
        squared_hinge(X, y, sample_weight=np.r_[0.0, np.ones(19)])
    with pytest.raises(ProgramError, match="shape"):
        squared_hinge(X, y, sample_weight=np.ones(3))
    with pytest.raises(ProgramError, match="C"):
        squared_hinge(X, y, C=None)
    with pytest.raises(ProgramError, match="form"):
        squared_hinge(X, y, form="both")
    with pytest.raises(ProgramError, match="single class|both"):
        squared_hinge(X, np.ones(20))
