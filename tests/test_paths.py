"""``solve_path``: warm-started hyper-parameter paths give the cold solves' certified answers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import conicml as cm
from conicml import registry
from conicml.exceptions import OptionError
from conicml.formulations import svm
from conicml.paths import path_order
from conicml.solution import Solution, Status


def _svm_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.5, 1.0, -1.0)
    return X, y


CS = [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]


def test_path_order():
    values = [1.0, 0.1, 10.0, 0.1]
    assert path_order(values, "ascending") == [1, 3, 0, 2]
    assert path_order(values, "descending") == [2, 0, 3, 1]
    assert path_order(values, "given") == [0, 1, 2, 3]
    assert path_order(values, lambda v: -v) == [2, 0, 1, 3]
    with pytest.raises(OptionError, match="order must be one of"):
        path_order(values, "largest-first")


def test_smo_path_matches_cold_solves_and_saves_iterations():
    X, y = _svm_data(300)

    def build(C):
        return svm.soft_margin(X, y, C, kernel="rbf", form="dual")

    values = CS[::-1]  # returned in the order given, solved ascending
    warm = cm.solve_path(build, values, "smo")
    cold = cm.solve_path(build, values, "smo", warm_start=False)
    tol = registry.get("smo").certify_tol
    for C, w, c in zip(values, warm, cold):
        assert w.status is Status.OPTIMAL and c.status is Status.OPTIMAL
        assert w.residuals.source == "recomputed"  # certified as conicml.solve certifies
        assert w.objective == pytest.approx(c.objective, rel=tol)
        assert w.extras["path"]["warm_start"] == (() if C == min(CS) else ("x0",))
        assert c.extras["path"]["warm_start"] == ()
    # the seeded alpha saves updates along the path (DeCoste-Wagstaff's point)
    assert sum(w.iterations for w in warm) < sum(c.iterations for c in cold)


@pytest.mark.parametrize("backend", ["clarabel", "ecos"])
def test_smo_path_objectives_equal_a_generic_backend(backend):
    # an independent solver: each value of the warm smo path against a cold interior point
    X, y = _svm_data(60, seed=1)

    def build(C):
        return svm.soft_margin(X, y, C, kernel="rbf", form="dual")

    warm = cm.solve_path(build, CS, "smo", tol=1e-6)
    ref = cm.solve_path(build, CS, backend)
    for w, r in zip(warm, ref):
        assert w.status is Status.OPTIMAL and r.status is Status.OPTIMAL
        assert w.objective == pytest.approx(r.objective, rel=1e-5)


def test_smo_warm_start_with_changed_class_weights_is_feasible():
    from conicml.solvers.smo import warm_start_alpha

    X, y = _svm_data(80, seed=2)
    old = svm.soft_margin(X, y, 1.0, kernel="rbf", form="dual")
    new = svm.soft_margin(X, y, 1.0, kernel="rbf", form="dual", class_weight={1: 3.0, -1: 0.5})
    x0 = warm_start_alpha(cm.solve(old, "smo"), old, new)["x0"]
    c = np.asarray(new.data["c"])
    assert np.all(x0 >= 0) and np.all(x0 <= c)
    assert abs(float(y @ x0)) <= 1e-9 * c.sum()
    assert cm.solve(new, "smo", x0=x0).status is Status.OPTIMAL
    # other labels: nothing to start from
    other = svm.soft_margin(X, -y, 1.0, kernel="rbf", form="dual")
    assert warm_start_alpha(cm.solve(old, "smo"), old, other) == {}


def test_path_reports_a_failed_value_and_goes_on_cold(monkeypatch):
    # a solver that fails on one value: the path keeps that status, the next value is cold
    smo = registry.get("smo")

    def flaky(program, *, x0=None):
        if program.data["C"] == 1.0:
            return Solution(status=Status.INFEASIBLE, solver="flaky", message="test value")
        return smo.function(program, x0=x0)

    monkeypatch.setitem(registry._REGISTRY, "flaky",
                        dataclasses.replace(smo, name="flaky", function=flaky))
    X, y = _svm_data(100, seed=3)
    sols = cm.solve_path(lambda C: svm.soft_margin(X, y, C, kernel="rbf", form="dual"),
                         [0.1, 1.0, 3.0, 10.0], "flaky")
    assert [s.status for s in sols] == [Status.OPTIMAL, Status.INFEASIBLE, Status.OPTIMAL,
                                        Status.OPTIMAL]
    assert [s.extras["path"]["warm_start"] for s in sols] == [(), ("x0",), (), ("x0",)]


def test_path_refuses_a_warm_start_option_of_its_own():
    X, y = _svm_data(40)
    with pytest.raises(OptionError, match="supplies x0"):
        cm.solve_path(lambda C: svm.soft_margin(X, y, C, form="dual"), [0.1, 1.0], "smo",
                      x0=np.zeros(40))
    with pytest.raises(TypeError, match="not a conicml Program"):
        cm.solve_path(lambda C: None, [1.0], "smo")
