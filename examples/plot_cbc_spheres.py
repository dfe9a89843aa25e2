"""
Cluster-based classification: one sphere per cluster
=====================================================

CBC-SOCP (seed 003, ch. 3) clusters each class and asks every cluster's sphere
:math:`B(\\mu_j, \\kappa\\sigma_j)` to lie on its side of the hyperplane (with slack), so the
program's size is the number of clusters, not of points.
"""

import numpy as np

from conicml import plot
from conicml.estimators import ClusterSOCPClassifier

rng = np.random.default_rng(1)
X = np.r_[rng.normal([1.5, 1.0], [1.0, 0.6], (200, 2)),
          rng.normal([-1.5, -1.0], [0.7, 1.0], (200, 2))]
y = np.r_[np.ones(200), -np.ones(200)]

cbc = ClusterSOCPClassifier(n_clusters=4).fit(X, y)
print(f"{cbc.n_clusters_} clusters, training accuracy {cbc.score(X, y):.3f}")
ax = plot.plot_decision_boundary(cbc, X, y)
