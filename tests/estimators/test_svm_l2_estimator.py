"""SVMClassifier(loss="squared_hinge"): the L2-loss linear SVM through the estimator.

Reference: the same program (formulations.svm_l2.squared_hinge) solved by clarabel.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import conicml as cm
from conicml.estimators import SVMClassifier
from conicml.exceptions import ProgramError
from conicml.formulations.svm_l2 import squared_hinge


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=200) > 0, "b", "a")
    return X, y


@pytest.mark.parametrize("form", ["dual", "primal"])
def test_matches_the_program_solved_by_clarabel(data, form):
    X, labels = data
    est = SVMClassifier(C=0.5, loss="squared_hinge", solver="dcd", form=form,
                        class_weight={"b": 2.0}, solver_options={"tol": 1e-9}).fit(X, labels)
    y = np.where(labels == "b", 1.0, -1.0)
    program = squared_hinge(X, y, C=0.5, class_weight={1: 2.0, -1: 1.0}, form=form)
    ref = program.decode(cm.solve(program, "clarabel"))
    # both at ~1e-8 of the objective: w and b to ~1e-4
    np.testing.assert_allclose(est.coef_[0], ref["w"], atol=1e-3)
    assert est.intercept_[0] == pytest.approx(ref["b"], abs=1e-3)
    assert est.solution_.status is cm.Status.OPTIMAL
    np.testing.assert_array_equal(est.predict(X), np.where(X @ ref["w"] + ref["b"] >= 0,
                                                           "b", "a"))


def test_sparse_input(data):
    X, labels = data
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    est = SVMClassifier(loss="squared_hinge", solver="dcd",
                        solver_options={"tol": 1e-9}).fit(Xs, labels)
    assert sp.issparse(est.program_.data["X"])
    dense = SVMClassifier(loss="squared_hinge", solver="clarabel").fit(Xs.toarray(), labels)
    # dcd at gap 1e-9, clarabel at ~1e-8: w to ~1e-4 of its size
    np.testing.assert_allclose(est.coef_, dense.coef_, atol=1e-3 * np.abs(dense.coef_).max())


@pytest.mark.parametrize("params", [{"kernel": "rbf"}, {"C": None}])
def test_needs_the_linear_soft_margin(data, params):
    X, labels = data
    with pytest.raises(ProgramError, match="squared_hinge"):
        SVMClassifier(loss="squared_hinge", **params).fit(X, labels)
