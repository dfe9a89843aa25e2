"""
The minimax probability machine and its worst-case ellipsoids
==============================================================

MPM (seed 004, ch. 2) finds the hyperplane that maximises the worst-case accuracy
:math:`\\alpha` over every distribution with the classes' means and covariances. The
certificate is geometric: the two ellipsoids
:math:`\\{x : (x-\\bar x)^\\top\\Sigma^{-1}(x-\\bar x) \\le \\kappa^2\\}` at
:math:`\\kappa = \\kappa(\\alpha)` touch the hyperplane from either side.
"""

import numpy as np

from conicml import plot
from conicml.estimators import MPMClassifier

rng = np.random.default_rng(0)
X = np.r_[rng.normal([1.5, 1.0], [1.0, 0.6], (80, 2)),
          rng.normal([-1.5, -1.0], [0.7, 1.0], (80, 2))]
y = np.r_[np.ones(80), -np.ones(80)]

mpm = MPMClassifier().fit(X, y)
print(f"worst-case accuracy alpha = {mpm.alpha_:.3f}, training accuracy {mpm.score(X, y):.3f}")
ax = plot.plot_decision_boundary(mpm, X, y)
