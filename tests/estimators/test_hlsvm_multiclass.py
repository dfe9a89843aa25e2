"""H-LSVM in one-vs-one multiclass use (seed 001 uses H-LSVM one-vs-one for its
multiclass sets): scikit-learn's OneVsOneClassifier wraps the binary estimator.

Reference: three well-separated Gaussian blobs (centres 6 apart, unit variance), whose
Bayes error is below 0.2 %; the multiclass labels are the blobs'.
"""

import numpy as np
from sklearn.base import clone
from sklearn.multiclass import OneVsOneClassifier

from conicml.estimators import HLSVMClassifier


def _blobs(n_per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [3.0, 5.2]])
    X = np.vstack([c + rng.standard_normal((n_per_class, 2)) for c in centres])
    y = np.repeat(np.array(["a", "b", "c"]), n_per_class)
    return X, y


def test_one_vs_one_hlsvm_fits_three_pairwise_trees_and_predicts_the_classes():
    X, y = _blobs(60, seed=0)
    X_test, y_test = _blobs(100, seed=1)
    base = HLSVMClassifier(max_iter=2_000, random_state=0)
    model = OneVsOneClassifier(base).fit(X, y)
    assert len(model.estimators_) == 3  # one tree per pair of classes
    for est in model.estimators_:  # each pairwise tree saw exactly two classes
        assert len(est.classes_) == 2
    assert list(model.classes_) == ["a", "b", "c"]
    pred = model.predict(X_test)
    assert set(pred) <= {"a", "b", "c"}
    assert np.mean(pred == y_test) > 0.97  # Bayes error < 0.2 %
    # the wrapped estimator is clonable with its parameters (the sklearn contract)
    assert clone(base).get_params()["max_iter"] == 2_000
    assert model.decision_function(X_test).shape == (300, 3)
