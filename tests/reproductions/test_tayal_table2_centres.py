"""The fixed-per-overlap centres of the RankRC paper's Table 2 reproduction."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score

from conicml.reproductions import tayal_table2 as t2


def test_overlap_centres_are_fixed_and_near_the_papers_bayes_auc():
    # the same centres for every call (so for every ratio and trial of an overlap)
    mu, maj, auc = t2.overlap_centres(0.75)
    mu2, maj2, auc2 = t2.overlap_centres(0.75)
    np.testing.assert_array_equal(mu, mu2)
    np.testing.assert_array_equal(maj, maj2)
    assert auc == auc2
    assert mu.shape == (6, t2.DIM) and maj.shape == (15, t2.DIM)
    # the paper's True Bayes (69.5) varies by about +-3 points across draws in [-1, 1]^5
    # (seed-002 note); of 20 draws one lands within a point of it
    assert abs(auc - t2.PAPER_BAYES[0.75]) < 1.0


def test_bayes_auc_does_not_depend_on_the_ratio():
    # the AUC of the likelihood ratio p+/p- does not depend on the class prior: one True
    # Bayes per overlap at every rho, as the paper prints it
    mu, maj, _ = t2.overlap_centres(0.6)
    rng = np.random.default_rng(0)
    aucs = []
    for rho in (0.1, 0.4):
        X, y = t2.sample(20000, rho, mu, maj, rng)
        aucs.append(roc_auc_score(y, t2.bayes_scores(X, mu, maj)))
    # sampling s.e. of each AUC is below 0.006 at 2 000+ rare points
    assert abs(aucs[0] - aucs[1]) < 0.02
