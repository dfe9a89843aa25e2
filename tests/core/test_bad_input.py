"""Bad input at every public entry point: a conicml exception (or scikit-learn's
ValueError) whose message names the problem, never a raw NumPy/LinAlg error or a
silently accepted value."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import conicml as cm
from conicml.formulations import (
    kfda,
    minimax,
    ordinal,
    qpfs,
    ranking,
    specified_rates,
    svm,
    trust_region,
)
from conicml.formulations import m4 as m4_formulation

RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 3))
Y = np.where(X[:, 0] + 0.3 * RNG.standard_normal(40) > 0, 1.0, -1.0)
Y_SEPARABLE = np.where(X[:, 0] > 0, 1.0, -1.0)
RANKS = np.digitize(X[:, 0], [-0.5, 0.5]) + 1.0


def _dual():
    return svm.soft_margin(X, Y, C=1.0, form="dual")


def _primal():
    return svm.soft_margin(X, Y, C=1.0, form="primal")


def _rank():
    return ranking.rankrc(X, Y, lam=0.1)


def _simplex():
    return qpfs.simplex_qp(np.abs(RNG.standard_normal((5, 3))), np.ones(5), 0.5)


def _rates():
    return specified_rates.specified_rates(X, Y, error_pos=0.6, error_neg=0.6)


def _mpm():
    return minimax.mpm(X, Y, ridge=1e-6)


def _m4_separable():
    return m4_formulation.m4(X, Y_SEPARABLE)


def _cbor():
    clusters = cm.ClusterMoments.from_data(X, RANKS, clustering="none")
    return ordinal.cbor(clusters, W=3.0, accuracy=0.5, form="dual")


# (program builder, solver, options, exception type, words the message must contain)
SOLVE_CASES = {
    **{f"x0-string-{name}": (build, name, {"x0": "x"}, cm.OptionError, ["x0", "'x'"])
       for name, build in [("smo", _dual), ("pegasos", _primal), ("weighted-pegasos", _primal),
                           ("ellipsoid-newton", _rates), ("rank-tr", _rank),
                           ("rank-newton", _rank), ("simplex-smo", _simplex)]},
    "x0-nan-smo": (_dual, "smo", {"x0": np.full(40, np.nan)}, cm.OptionError, ["x0", "NaN"]),
    "random_state-string": (_primal, "pegasos", {"random_state": "x"}, cm.OptionError,
                            ["random_state", "'x'"]),
    "shrinking-string": (_dual, "smo", {"shrinking": "x"}, cm.OptionError,
                         ["shrinking", "True or False"]),
    "inner_tol-negative": (_mpm, "dinkelbach", {"inner_tol": -1}, cm.OptionError,
                           ["inner_tol", "-1"]),
    "inner_max_iter-zero": (_mpm, "dinkelbach", {"inner_max_iter": 0}, cm.OptionError,
                            ["inner_max_iter", ">= 1"]),
    "rebuild-string": (_m4_separable, "bisection", {"rebuild": "x"}, cm.OptionError,
                       ["rebuild", "True or False"]),
    "scaled-string": (_m4_separable, "dinkelbach-gfp", {"scaled": "x"}, cm.OptionError,
                      ["scaled", "True or False"]),
    "smoothing-negative": (_cbor, "cbor-smo", {"smoothing": -1}, cm.OptionError,
                           ["smoothing", "True or False"]),
    "certify_tol-zero": (_dual, "smo", {"certify_tol": 0}, cm.OptionError, ["certify_tol"]),
    "certify_tol-nan": (_dual, "smo", {"certify_tol": float("nan")}, cm.OptionError,
                        ["certify_tol"]),
    # one rule for every solver: time_limit > 0 or None (six solvers used to take 0)
    **{f"time_limit-zero-{name}": (build, name, {"time_limit": 0}, cm.OptionError,
                                   ["time_limit", "positive"])
       for name, build in [("smo", _dual), ("clarabel", _dual), ("lin-han", _rates),
                           ("simplex-smo", _simplex), ("cbor-smo", _cbor),
                           ("ellipsoid-newton", _rates)]},
    "time_limit-nan": (_dual, "smo", {"time_limit": float("nan")}, cm.OptionError,
                       ["time_limit"]),
}


@pytest.mark.parametrize("case", sorted(SOLVE_CASES))
def test_solve_refuses_bad_options(case):
    build, solver, options, error, words = SOLVE_CASES[case]
    program = build()
    with pytest.raises(error) as info:
        cm.solve(program, solver, **options)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_valid_options_still_pass():
    # the checks refuse only bad values: a numpy bool, a Generator, an array start
    program = _dual()
    sol = cm.solve(program, "smo", shrinking=np.bool_(False), x0=np.zeros(40), time_limit=60)
    assert sol.status is cm.Status.OPTIMAL
    primal = _primal()
    sol = cm.solve(primal, "pegasos", random_state=np.random.default_rng(1), max_iter=50)
    assert sol.iterations <= 50


def _one_positive():
    y = -np.ones(40)
    y[0] = 1.0
    return specified_rates.specified_rates(X, y, error_pos=0.6, error_neg=0.6)


CALL_CASES = {
    "tie_tol-negative-simplex_qp": (lambda: qpfs.simplex_qp(np.eye(3), np.ones(3), 0.5,
                                                            tie_tol=-1),
                                    cm.ProgramError, ["tie_tol", "-1"]),
    "tie_tol-nan-simplex_qp": (lambda: qpfs.simplex_qp(np.eye(3), np.ones(3), 0.5,
                                                       tie_tol=float("nan")),
                               cm.ProgramError, ["tie_tol", "nan"]),
    "tie_tol-negative-qpfs": (lambda: qpfs.qpfs(X, Y, tie_tol=-1), cm.ProgramError,
                              ["tie_tol"]),
    "compare-string": (lambda: cm.compare("x"), cm.ProgramError, ["Program", "str"]),
    "compare-options-not-run": (lambda: cm.compare(_dual(), ["clarabel", "smo"],
                                                   options={"ecos": {"max_iter": 5}}),
                                cm.OptionError, ["'ecos'", "does not run"]),
    "solve-string": (lambda: cm.solve("x"), cm.ProgramError, ["Program", "str"]),
    "trs-sparse-H": (lambda: trust_region.trust_region_subproblem(sp.eye(3), np.ones(3), 1.0),
                     cm.ProgramError, ["H", "sparse", "toarray"]),
    "trs-string-H": (lambda: trust_region.trust_region_subproblem("x", np.ones(3), 1.0),
                     cm.ProgramError, ["H", "'x'"]),
    "trs-string-g": (lambda: trust_region.trust_region_subproblem(np.eye(3), "x", 1.0),
                     cm.ProgramError, ["g"]),
    "kfda-constant-X": (lambda: kfda.kfda(np.ones((40, 3)), Y), cm.ProgramError,
                        ["same mean", "constant"]),
    # clarabel answers INFEASIBLE on this program; ellipsoid-newton names why it cannot
    "ellipsoid-newton-one-positive": (lambda: cm.solve(_one_positive(), "ellipsoid-newton"),
                                      cm.SolverError, ["positive class", "single point",
                                                       "clarabel"]),
}


@pytest.mark.parametrize("case", sorted(CALL_CASES))
def test_calls_refuse_bad_input(case):
    call, error, words = CALL_CASES[case]
    with pytest.raises(error) as info:
        call()
    assert all(w in str(info.value) for w in words), str(info.value)


def test_one_positive_sample_is_infeasible_for_clarabel():
    # the program itself is fine (a point against an ellipsoid): only the Newton method refuses
    assert cm.solve(_one_positive(), "clarabel").status is cm.Status.INFEASIBLE


@pytest.mark.parametrize("X_bad", ["wide", "constant"])
def test_feature_scaling_constant_decision_is_a_clear_error(X_bad):
    from conicml.estimators import FeatureScalingSVC

    if X_bad == "wide":  # more features than rows (seed 0: AO-II ends with one feature)
        Xb = np.random.default_rng(0).standard_normal((10, 30))
        yb = np.r_[np.ones(5), -np.ones(5)]
    else:
        Xb, yb = np.ones((40, 3)), Y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(cm.ProgramError, match="constant decision function"):
            FeatureScalingSVC(max_iter=30).fit(Xb, yb)


def test_kfda_estimator_constant_X():
    from conicml.estimators import KFDAClassifier

    with pytest.raises(cm.ProgramError, match="same mean"):
        KFDAClassifier().fit(np.ones((40, 3)), Y)


def test_cluster_moments_take_string_labels_as_the_estimators_map_them():
    labels = np.where(Y > 0, "yes", "no")  # sorted: "no" < "yes", so "yes" is +1
    named = cm.ClusterMoments.from_data(X, labels, clustering="none")
    numeric = cm.ClusterMoments.from_data(X, Y, clustering="none")
    np.testing.assert_array_equal(named.labels, numeric.labels)
    np.testing.assert_array_equal(named.means, numeric.means)
    grades = np.array(["a", "b", "c"])[RANKS.astype(int) - 1]  # three classes -> ranks 1..3
    ranked = cm.ClusterMoments.from_data(X, grades, clustering="none")
    np.testing.assert_array_equal(ranked.labels,
                                  cm.ClusterMoments.from_data(X, RANKS, clustering="none").labels)


def test_hlsvm_node_solver_options_are_checked_and_unused_ones_reported(monkeypatch):
    from conicml.estimators import HLSVMClassifier

    Xt, yt = cm.datasets.twonorm(120, random_state=0)
    with pytest.raises(cm.OptionError, match="does not accept foo"):
        HLSVMClassifier(node_solver_options={"foo": 1}).fit(Xt, yt)
    # on the NumPy engine every node of <= 2000 samples goes to clarabel under 'auto'
    # (with numba, 'auto' is dcd, which takes max_iter), so the options are never used
    monkeypatch.setenv("CONICML_ENGINE", "numpy")
    with pytest.warns(cm.ConicMLWarning, match="node_solver_options were not used"):
        HLSVMClassifier(node_solver_options={"max_iter": 5}).fit(Xt, yt)


def test_unknown_solver_name_suggests_and_lists_only_advertised_names():
    with pytest.raises(cm.SolverNotFoundError) as info:
        cm.solve(_dual(), "clarabl")
    message = str(info.value)
    assert "did you mean 'clarabel'" in message
    assert "m4-line-search" not in message  # deprecated: `conicml solvers` does not list it


def test_register_refuses_a_bad_certify_tol():
    from conicml.registry import register

    with pytest.raises(ValueError, match="certify_tol must be a positive finite"):
        register("never-registered", kinds=["qp.*"], certify_tol=float("nan"))


@pytest.mark.parametrize("call", [
    lambda b: svm.soft_margin(X, Y, C=b),
    lambda b: svm.soft_margin(X, Y, C=1.0, kernel="rbf", gamma=b),
    lambda b: qpfs.qpfs(X, Y, alpha=b),
    lambda b: cm.solve(_dual(), "clarabel", eps_abs=b),
    lambda b: cm.solve(_dual(), "smo", tol=b),
    lambda b: cm.solve(_dual(), "smo", time_limit=b),
    lambda b: cm.compare(_dual(), ["clarabel"], rtol=b),
], ids=["C", "gamma", "alpha", "eps_abs", "tol", "time_limit", "rtol"])
def test_messages_show_plain_numbers(call):
    with pytest.raises(cm.ConicMLError) as info:
        call(np.float64(-1.0))
    assert "-1.0" in str(info.value) and "np.float64" not in str(info.value)
