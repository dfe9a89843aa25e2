"""Issue 12, "estimators that work with their defaults": every estimator's default fit
succeeds on the bundled real data sets, with finite predictions and better than a
trivial classifier.

"Better than trivial": a constant score has ROC AUC 0.5 and balanced accuracy 0.5
(predicting the majority class), so we require a held-out AUC of at least 0.6
(the weakest default on these sets reaches about 0.7; the closed-form reference is
the 0.5 of a constant). The default run trains on a stratified subsample (at most
300 rows, keeping up to 60 points of the minority class, so abalone19 (32 positives
out of 4 177) and mammography (260 of 11 183) keep their minority; their imbalance
ratio is then smaller than the full set's) split 50/50; the full-size check with
3-fold cross-validation is ``@pytest.mark.slow``.

Also: the docstring of every public estimator and formulation function is not empty
(``help()`` showed nothing for the minimax family, issue 12).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, train_test_split

import conicml as cm
import conicml.formulations as formulations
from conicml import ConicMLWarning, estimators
from conicml.estimators import ClusterSOCPOrdinalRegressor, LSVRRegressor

DATASETS = ["breast_cancer", "heart", "ionosphere", "pima", "sonar", "mammography",
            "abalone19"]
# the estimators of issue 12 (and FeatureScalingSVC); estimators merged later
# (HLSVM, ranking) are not in this list yet
CLASSIFIERS = ["ClusterSOCPClassifier", "M4Classifier", "BMPMClassifier", "MEMPMClassifier",
               "MPMClassifier", "ClusterSOCPOrdinalRegressor", "ChanceConstrainedClassifier",
               "SVMClassifier", "FeatureScalingSVC", "KFDAClassifier", "RankRCClassifier",
               "RankSVMClassifier", "HLSVMClassifier"]
MIN_AUC = 0.6

# On abalone19 (19 rings vs the rest) the thesis's unweighted CBC-SOCP (3.7) learns
# w = 0 for every C; ClusterSOCPClassifier's default class_weight="balanced" fits it
# (see test_cbc.py::test_default_estimator_is_not_constant_on_imbalanced_data).
# Known limitations, kept visible; strict=True: the test fails if one starts to pass.
# Not a false demotion (issue 11 part B checked it): at the default rates 1.0 (kappa = 0)
# the optimum of (2.5) is the closed form 2 / ||mu_+ - mu_-||^2 = 1.9513e-06, and Clarabel's
# point is 0.22 % above it (1.9556e-06; ECOS, SCS, lin-han and ellipsoid-newton reach it):
# the rates certificate's bracket reads that 0.0022 and rightly demotes it.
_TRUE_DEMOTION = ("Clarabel stops 0.22 % above the closed-form optimum 2/||mu+ - mu-||^2 "
                  "(features of scales 1e-3..1e3, objective ~2e-6): the rates certificate "
                  "demotes it, correctly; the fit warns")
# HLSVMClassifier's default fit no longer warns (issue 9: standardised features and the
# "auto" node solver, see test_hlsvm_default_fit_is_certified_on_real_data). Estimators with
# a random_state are fitted with random_state=0 here (a seed, not a hyper-parameter).
# (MEMPMClassifier-pima, formerly a false demotion of the generic certificate, passes since
# the BMPM certificate checks the norm's kink analytically: issue 11 part A)
# SVMClassifier() (C = 1, no class weight) on abalone19 (15 positives in 150 rows): w = 0
# is the exact optimum of the unweighted soft margin (decision values span 1e-7), so the
# fit warns "constant score" (and names class_weight='balanced'); its AUC was solver noise
_SVM_CONSTANT = ("SVMClassifier on abalone19: w = 0 is the exact optimum without class "
                 "weights; the fit warns that the score is constant")
KNOWN = {("ChanceConstrainedClassifier", "breast_cancer"): _TRUE_DEMOTION,
         ("SVMClassifier", "abalone19"): _SVM_CONSTANT}


def subsample(X: np.ndarray, y: np.ndarray, n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """At most ``n`` rows, with ``max(60, its share)`` of the minority class."""
    return cm.datasets.subsample(X, y, n, n_minority=60)


def scores(est, X: np.ndarray) -> np.ndarray:
    """Continuous scores for the AUC: the decision function, or the predicted rank."""
    if hasattr(est, "decision_function"):
        return est.decision_function(X)
    if isinstance(est, ClusterSOCPOrdinalRegressor):
        return est.latent_score(X)
    return est.predict(X)


def _cases(known: dict):
    """Every (classifier, data set), the ``known`` ones as strict xfails with their reason."""
    for ds in DATASETS:
        for name in CLASSIFIERS:
            marks = []
            if (name, ds) in known:
                marks.append(pytest.mark.xfail(reason=known[(name, ds)], strict=True))
            yield pytest.param(name, ds, id=f"{name}-{ds}", marks=marks)


def _default(name: str):
    """The estimator at its defaults, seeded if it has a ``random_state`` (a seed, not a
    hyper-parameter: the fit is reproducible)."""
    est = getattr(estimators, name)()
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def _check_fit(name: str, X_train, y_train, X_test, y_test) -> float:
    est = _default(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)  # incl. ConvergenceWarning
        # raw breast_cancer: feature stds 2e5 apart, which the models that depend on the
        # units rightly call badly scaled (tests/test_scale_invariance.py); this test is
        # about the fit converging and ranking
        warnings.filterwarnings("ignore", message="badly scaled input", category=ConicMLWarning)
        est.fit(X_train, y_train)
    pred = est.predict(X_test)
    assert set(np.unique(pred)) <= set(np.unique(y_train))
    if hasattr(est, "program_"):  # one vocabulary (issue 12): the decoded model is model_
        assert est.model_ is not None and hasattr(est, "solution_")
    s = scores(est, X_test)
    assert np.all(np.isfinite(s))
    return roc_auc_score(y_test, s)


@pytest.mark.parametrize(("name", "ds"), list(_cases(KNOWN)))
def test_default_fit_on_real_data(name, ds):
    X, y = subsample(*cm.datasets.load(ds))
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    auc = _check_fit(name, X_tr, y_tr, X_te, y_te)
    assert auc >= MIN_AUC, f"{name} default on {ds}: held-out AUC {auc:.3f} < {MIN_AUC}"


@pytest.mark.parametrize("ds", DATASETS)
def test_hlsvm_default_fit_is_certified_on_real_data(ds):
    # issue 9: the default HLSVMClassifier (seeded) fits the raw features without a warning,
    # every node hyperplane certified (the default node solver used to stop at T with a
    # relative duality gap of 0.3-1 on these unscaled sets); it beats a constant score,
    # also on abalone19 (15 positives in 150 rows), where the unweighted leaf vote of the
    # thesis pruned to the root (AUC 0.5) and the class-balanced default keeps a split
    X, y = subsample(*cm.datasets.load(ds))
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)  # incl. ConvergenceWarning
        est = estimators.HLSVMClassifier(random_state=0).fit(X_tr, y_tr)
    assert set(est.node_statuses_) <= {"optimal"}
    auc = roc_auc_score(y_te, est.decision_function(X_te))
    assert auc >= MIN_AUC


@pytest.mark.parametrize("ds", DATASETS)
def test_lsvr_default_fit_on_real_data(ds):
    # the regressor: fit the +-1 labels as targets; the fit succeeds and the
    # predictions are finite (its neighbourhood default assumes ordered samples, so
    # no accuracy is asked of it here)
    X, y = subsample(*cm.datasets.load(ds), n=150)
    pred = LSVRRegressor().fit(X, y).predict(X)
    assert pred.shape == y.shape and np.all(np.isfinite(pred))


# The full data sets (slow study): what the 300-row subsamples above do not show. Strict, with
# the reason measured on main (3-fold CV, random_state=0):
KNOWN_FULL = {
    # the exact Hessian of the feature-scaling program needs an n*n*d tensor: the estimator
    # refuses with a ProgramError that names the size and says "subsample the training set"
    ("FeatureScalingSVC", "mammography"): "refuses: the n*n*d derivative tensor is 2668 MB",
    ("FeatureScalingSVC", "abalone19"): "refuses: the n*n*d derivative tensor is 620 MB",
    # 32 positives in 4177 rows: the balanced cluster costs learn a ranking no better than
    # chance out of fold (3-fold AUC 0.42), where the 150-row subsample gets >= 0.6
    ("ClusterSOCPClassifier", "abalone19"): "3-fold AUC 0.42 on the full 1 %-minority set",
}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "ds"), list(_cases(KNOWN_FULL)))
def test_default_fit_on_full_data(name, ds):
    X, y = cm.datasets.load(ds)
    est = _default(name)
    s = np.empty(y.size)
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
        fitted = clone(est).fit(X[train], y[train])
        s[test] = scores(fitted, X[test])
        assert np.all(np.isfinite(s[test]))
    auc = roc_auc_score(y, s)
    assert auc >= MIN_AUC, f"{name} default on full {ds}: 3-fold AUC {auc:.3f} < {MIN_AUC}"


# ------------------------------------------------------------------ docstrings
def _public_functions():
    for info in pkgutil.iter_modules(formulations.__path__):
        if info.name.startswith("_") or info.name == "chance":  # chance: deprecated alias
            continue
        module = importlib.import_module(f"conicml.formulations.{info.name}")
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                yield pytest.param(obj, id=f"{info.name}.{name}")


@pytest.mark.parametrize("obj", [pytest.param(getattr(estimators, n), id=n)
                                 for n in estimators.__all__] + list(_public_functions()))
def test_public_docstrings_are_not_empty(obj):
    doc = inspect.getdoc(obj)
    assert doc and len(doc) > 40
    assert "<" + "KERNEL_DOC>" not in doc and "<" + "COMMON_DOC>" not in doc


def test_ordinal_random_state_is_honoured():
    # random_state=None / a RandomState used to be replaced by the seed 0
    X, y = cm.datasets.load("heart")
    fits = [ClusterSOCPOrdinalRegressor(n_clusters=5, random_state=rs).fit(X, y)
            for rs in (np.random.RandomState(1), np.random.RandomState(2), 0)]
    centres = [f.cluster_centers_ for f in fits]
    assert not np.allclose(centres[0], centres[1])  # different streams, different k-means
    np.testing.assert_array_equal(
        ClusterSOCPOrdinalRegressor(n_clusters=5, random_state=0).fit(X, y).cluster_centers_,
        centres[2])
