r"""
Minimax probability machines: worst-case ellipsoids and the certified ROC point
===============================================================================

MPM (seed 004, ch. 2) finds the hyperplane that maximises the worst-case accuracy
:math:`\alpha` over every distribution with the classes' means and covariances. The
certificate is geometric: the two ellipsoids
:math:`\{x : (x-\bar x)^\top\Sigma^{-1}(x-\bar x) \le \kappa^2\}` at
:math:`\kappa = \kappa(\alpha)` touch the hyperplane from either side (left).

BMPM (seed 004, ch. 3) fixes the worst-case accuracy :math:`\beta_0` of one class and
maximises the other's: swept over :math:`\beta_0` it traces a *certified* ROC curve, which
every empirical ROC point of the same hyperplanes lies above (right, seed 004 Sec. 5.4).
MEMPM picks the point of that curve with the smallest worst-case error.
"""

import matplotlib.pyplot as plt
import numpy as np

from conicml import plot
from conicml.estimators import MEMPMClassifier, MPMClassifier, bmpm_roc

rng = np.random.default_rng(0)
X = np.r_[rng.normal([1.5, 1.0], [1.0, 0.6], (80, 2)),
          rng.normal([-1.5, -1.0], [0.7, 1.0], (80, 2))]
y = np.r_[np.ones(80), -np.ones(80)]

mpm = MPMClassifier().fit(X, y)
mempm = MEMPMClassifier().fit(X, y)
print(f"MPM:   worst-case accuracy alpha = {mpm.alpha_:.3f}, "
      f"training accuracy {mpm.score(X, y):.3f}")
print(f"MEMPM: alpha = {mempm.alpha_:.3f}, beta = {mempm.beta_:.3f}")

sweep = bmpm_roc(X, y, betas=np.linspace(0.05, 0.95, 10))
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.5), layout="constrained")
plot.plot_decision_boundary(mpm, X, y, ax=ax1)
ax1.set_title("MPM and its worst-case ellipsoids")
plot.plot_roc(mempm, X, y, ax=ax2, bmpm_sweep=sweep)
ax2.set_title("ROC: empirical against certified")
plt.show()
