"""The linear soft-margin SVM on scipy.sparse input: kept CSR end to end.

The optima are checked against the same program on the dense copy of ``X`` solved by
the generic backends (clarabel, ecos): the dense program is the reference, never a
hard-coded number.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import conicml as cm
from conicml.estimators import SVMClassifier
from conicml.exceptions import ProgramError
from conicml.formulations import svm
from conicml.solution import Status


def _text_like(n: int = 240, d: int = 60, seed: int = 0):
    """Nonnegative sparse rows (~10 % dense), labels from a sparse rule, 5 % flipped."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.exponential(1.0, k))
    score = X @ (rng.normal(size=d) * (rng.random(d) < 0.3))
    y = np.where(score > np.median(score), 1.0, -1.0)
    y[rng.random(n) < 0.05] *= -1
    return X, y


@contextlib.contextmanager
def no_densify():
    """Fail on any densification of a scipy.sparse matrix (``toarray``, ``todense``, or
    ``np.asarray``, which would make a 0-d object array of it)."""
    def boom(*args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    with pytest.MonkeyPatch.context() as mp:
        for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array,
                    sp.csc_array):
            mp.setattr(cls, "toarray", boom)
            mp.setattr(cls, "todense", boom)
            mp.setattr(cls, "__array__", boom, raising=False)
        yield


@pytest.mark.parametrize("form", ["dual", "primal"])
@pytest.mark.parametrize("solver", ["clarabel", "ecos"])
def test_sparse_program_has_the_dense_optimum(form, solver):
    X, y = _text_like()
    class_weight = {1: 2.0, -1: 0.5}
    program = svm.soft_margin(X, y, C=1.0, form=form, class_weight=class_weight)
    assert sp.isspmatrix_csr(program.data["X"])
    dense = svm.soft_margin(X.toarray(), y, C=1.0, form=form, class_weight=class_weight)
    sol = cm.solve(program, solver)
    ref = cm.solve(dense, "clarabel")
    assert sol.status is Status.OPTIMAL and sol.residuals.source == "recomputed"
    # both solvers' own accuracy is ~1e-8 relative: 1e-6 is loose
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    w = program.decode(sol)["w"]
    np.testing.assert_allclose(w, dense.decode(ref)["w"], atol=1e-4 * np.abs(w).max())


@pytest.mark.parametrize("form", ["dual", "primal"])
def test_dcd_on_the_sparse_program_is_certified(form):
    X, y = _text_like()
    with no_densify():  # validation, program, solver, certificate, decoding
        program = svm.soft_margin(X, y, C=1.0, form=form)
        sol = cm.solve(program, "dcd", tol=1e-6)
        program.decode(sol)
    assert sol.status is Status.OPTIMAL and sol.extras["sparse"]
    assert sol.residuals.source == "recomputed" and sol.residuals.max() <= 1e-6
    ref = cm.solve(program, "ecos")  # an independent solver on the same sparse program
    # both within relative 1e-6 of the optimum (dcd's certified gap, ecos's accuracy)
    assert sol.objective == pytest.approx(ref.objective, rel=3e-6)


def test_estimator_never_densifies():
    X, y = _text_like()
    with no_densify():
        est = SVMClassifier(C=1.0, solver="dcd", solver_options={"tol": 1e-6}).fit(X, y)
        f = est.decision_function(X)
        score = est.score(X, y)
    assert sp.issparse(est.program_.data["X"]) and sp.issparse(est.support_vectors_)
    assert est.solution_.status is Status.OPTIMAL
    assert isinstance(f, np.ndarray) and f.shape == (X.shape[0],)
    assert score > 0.8


def test_badly_scaled_sparse_columns_warn():
    X, y = _text_like()
    X = X @ sp.diags(np.r_[1e5, np.ones(X.shape[1] - 1)])
    est = SVMClassifier(C=1e-6, solver="dcd", solver_options={"max_iter": 50})
    with no_densify(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 50 epochs: not the subject
        with pytest.warns(cm.ConicMLWarning, match="badly scaled input"):
            est.fit(X, y)


def test_estimator_sparse_and_dense_fits_agree():
    X, y = _text_like()
    sparse = SVMClassifier(C=1.0, solver="dcd", solver_options={"tol": 1e-8}).fit(X, y)
    dense = SVMClassifier(C=1.0, solver="clarabel").fit(X.toarray(), y)
    # w is unique (strictly convex in w): dcd at gap 1e-8 against clarabel
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-3 * np.abs(dense.coef_).max())
    # the labels agree wherever the decision value is not within the solvers' tolerance
    # of zero (a point on the boundary may fall either side)
    clear = np.abs(dense.decision_function(X.toarray())) > 1e-3
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(sparse.predict(X)[clear], dense.predict(X.toarray())[clear])


def test_sparse_input_errors():
    X, y = _text_like()
    with pytest.raises(ProgramError, match="kernel='linear'"):
        svm.soft_margin(X, y, kernel="rbf")
    with pytest.raises(ProgramError, match="hard-margin"):
        svm.hard_margin(X, y)
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(ProgramError, match="NaN"):
        svm.soft_margin(bad, y)
    with pytest.raises(ProgramError, match="shape mismatch"):
        svm.soft_margin(X, y[:-1])


def test_duplicates_are_summed_on_a_copy():
    X, y = _text_like(n=40, d=10)
    coo = X.tocoo()
    # every entry split in two halves: the same matrix with duplicate entries
    dup = sp.csr_matrix((np.r_[coo.data / 2, coo.data / 2], (np.r_[coo.row, coo.row],
                                                              np.r_[coo.col, coo.col])),
                        shape=X.shape)
    dup.has_canonical_format = False
    before = dup.data.copy()
    program = svm.soft_margin(dup, y)
    np.testing.assert_array_equal(dup.data, before)  # the caller's matrix is untouched
    assert abs(program.data["X"] - X).max() < 1e-12


@pytest.mark.parametrize("solver", ["dcd", "clarabel"])
def test_integer_sample_weight_is_a_duplicated_row(solver):
    # the L1-loss program with sample weight 2 on ten rows is the program with those rows
    # twice (c_i = C s_i); the reference is clarabel on the duplicated rows
    X, y = _text_like(n=80, d=12, seed=3)
    sw = np.ones(y.size)
    sw[:10] = 2.0
    opts = {"tol": 1e-9} if solver == "dcd" else {}
    weighted = cm.solve(svm.soft_margin(X, y, C=1.0, sample_weight=sw, form="dual"), solver,
                        **opts)
    dup = svm.soft_margin(sp.vstack([X, X[:10]]), np.r_[y, y[:10]], C=1.0, form="dual")
    ref = cm.solve(dup, "clarabel")
    assert weighted.status is Status.OPTIMAL
    assert weighted.objective == pytest.approx(ref.objective, rel=1e-6)
    # a path over C keeps the sample weights
    program = svm.with_cost(svm.soft_margin(X, y, C=1.0, sample_weight=sw), 3.0)
    np.testing.assert_allclose(program.data["c"], 3.0 * sw)
    with pytest.raises(ProgramError, match="sample_weight"):
        svm.soft_margin(X, y, sample_weight=-sw)
