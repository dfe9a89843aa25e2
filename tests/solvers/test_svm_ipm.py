"""svm-ipm: the interior-point method for the SVM dual with Q = ZZ' (Sherman-Morrison-Woodbury).

Reference values come from the generic backends clarabel and ecos on the same program
(tolerances: tolerances.py's defaults for a specialized solver, svm-ipm run at tol = 1e-9
on its relative duality gap), and from LIBSVM (scikit-learn's SVC) for the iteration counts
that grow with C.
"""

from __future__ import annotations

import numpy as np
import pytest
from svm_instances import overlapping as _overlapping
from svm_instances import structured as _structured

import conicml as cm
from conicml.exceptions import OptionError, ProgramError, SolverError
from conicml.formulations import svm
from conicml.solution import Status

from tolerances import obj_rtol, sol_atol

TOL = 1e-9
GENERIC = ("clarabel", "ecos")


def _check_against_generic(prog, sol, bias=True):
    assert sol.status is Status.OPTIMAL, sol.message
    assert sol.residuals.source == "recomputed" and sol.residuals.gap <= 1e-6
    model = prog.decode(sol)
    for name in GENERIC:
        ref = cm.solve(prog, name)
        assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol("svm-ipm"))
        if not bias:
            continue
        ref_model = prog.decode(ref)
        scale = max(1.0, abs(ref_model["b"]))
        assert model["b"] == pytest.approx(ref_model["b"], abs=sol_atol("svm-ipm") * scale)


@pytest.mark.parametrize("C", [1e-3, 1.0, 1e3])
@pytest.mark.parametrize("make", [_overlapping, _structured])
def test_agrees_with_clarabel_and_ecos(make, C):
    X, y = make()
    prog = svm.soft_margin(X, y, C=C, form="dual")
    # at C = 1e-3 every multiplier may sit at a bound: b is then any point of an interval
    _check_against_generic(prog, cm.solve(prog, "svm-ipm", tol=TOL), bias=C >= 1.0)


def test_class_weights_and_a_kernel_factor():
    X, y = _overlapping(n=80, d=3, seed=2)
    weighted = svm.soft_margin(X, y, C=2.0, class_weight={1: 3.0, -1: 0.5}, form="dual")
    _check_against_generic(weighted, cm.solve(weighted, "svm-ipm", tol=TOL))
    rbf = svm.soft_margin(X, y, C=2.0, kernel="rbf", gamma=0.5, form="dual")
    _check_against_generic(rbf, cm.solve(rbf, "svm-ipm", tol=TOL))


def test_iterations_barely_grow_with_C_where_smo_updates_do():
    # a rank-5 Q on overlapping classes: LIBSVM's updates grow with C (measured: ~100x from
    # C = 1 to 1e3 here); the interior-point iterations stay within a small factor
    sklearn_svm = pytest.importorskip("sklearn.svm")
    X, y = cm.datasets.twonorm(400, dim=5, random_state=0)
    y = np.where(y == y.max(), 1.0, -1.0)
    iters, updates = [], []
    for C in (1.0, 1e3):
        sol = cm.solve(svm.soft_margin(X, y, C, form="dual"), "svm-ipm")
        assert sol.status is Status.OPTIMAL and sol.residuals.gap <= 1e-3
        iters.append(sol.iterations)
        updates.append(int(sklearn_svm.SVC(kernel="linear", C=C).fit(X, y).n_iter_[0]))
    assert updates[1] > 10 * updates[0]
    assert iters[1] < 3 * iters[0]


def test_limits_and_bad_input():
    X, y = _overlapping()
    prog = svm.soft_margin(X, y, C=1.0, form="dual")
    sol = cm.solve(prog, "svm-ipm", max_iter=2)
    assert sol.status is Status.USER_LIMIT and "max_iter" in sol.message
    assert sol.values["alpha"].shape == (len(y),)
    with pytest.raises(OptionError):
        cm.solve(prog, "svm-ipm", tol=-1.0)
    with pytest.raises(OptionError):
        cm.solve(prog, "svm-ipm", verbose="yes")
    with pytest.raises(SolverError, match="does not accept"):
        cm.solve(svm.hard_margin(X[:20] + 3 * y[:20, None], y[:20], form="dual"), "svm-ipm")
    with pytest.raises(SolverError, match="does not accept"):
        cm.solve(svm.soft_margin(X, y, C=1.0, form="primal"), "svm-ipm")
    with pytest.raises((ProgramError, ValueError)):
        bad = X.copy()
        bad[0, 0] = np.nan
        cm.solve(svm.soft_margin(bad, y, C=1.0, form="dual"), "svm-ipm")
