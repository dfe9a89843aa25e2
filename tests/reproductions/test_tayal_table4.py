"""The paper's AUC (2) of the Table 4 entry: strict pairs, ties counting 0."""

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.metrics import roc_auc_score  # noqa: E402

from conicml.reproductions.tayal_table4 import strict_auc  # noqa: E402


def test_strict_auc_equals_the_tie_aware_auc_without_ties():
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(7), -np.ones(30)]
    s = rng.normal(size=y.size)  # continuous scores: no ties
    assert strict_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_strict_auc_counts_ties_zero():
    # constant scores: every pair tied; (2) gives 0, the trapezoid rule 1/2
    y = np.r_[np.ones(3), -np.ones(5)]
    assert strict_auc(y, np.zeros(8)) == 0.0
    # by hand: positives 1, 0; negatives 0, 0 -> pairs (1>0) twice, (0>0) never: 2/4
    assert strict_auc(np.array([1.0, 1, -1, -1]), np.array([1.0, 0, 0, 0])) == 0.5
