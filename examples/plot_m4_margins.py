r"""
The maxi-min margin machine: class-wise margins scaled by each class's spread
=============================================================================

M4 (seed 004, ch. 4) maximises the smallest margin :math:`\rho` measured in each class's own
standard deviation along :math:`w`: every point :math:`x` of the positive class satisfies
:math:`w^\top x + b \ge \rho\,\sigma_+(w)` and every negative point
:math:`w^\top x + b \le -\rho\,\sigma_-(w)`, :math:`\sigma_\pm(w) = \sqrt{w^\top\Sigma_\pm w}`
(eqs. 4.1–4.5). With one class spread along the hyperplane and the other across it, the
boundary tilts away from the SVM's, and the two margins (dashed) are of different widths:
the picture of the thesis's Fig. 4.1. Averaging the constraints gives MPM's, so
:math:`\rho^* \le \kappa^*_{\mathrm{MPM}}` (errata S004-D3), which the search over
:math:`\rho` uses as its upper end.
"""

import matplotlib.pyplot as plt
import numpy as np

from conicml import plot
from conicml.estimators import M4Classifier, MPMClassifier, SVMClassifier

rng = np.random.default_rng(3)
X = np.r_[rng.multivariate_normal([2.0, 0.0], [[0.2, 0.0], [0.0, 3.0]], 60),
          rng.multivariate_normal([-2.0, 0.0], [[2.0, 1.2], [1.2, 1.0]], 60)]
y = np.r_[np.ones(60), -np.ones(60)]

m4 = M4Classifier().fit(X, y)  # C="auto": the soft M4 (the classes overlap)
mpm = MPMClassifier().fit(X, y)
svm = SVMClassifier(C=10.0).fit(X, y)
print(f"M4: rho = {m4.rho_:.3f} <= kappa_MPM = {mpm.kappa_alpha_:.3f}; "
      f"training accuracy {m4.score(X, y):.3f}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.5), layout="constrained")
plot.plot_decision_boundary(m4, X, y, ax=ax1)
plot.plot_decision_boundary(svm, X, y, ax=ax2)
ax2.set_title("SVMClassifier (margins f(x) = ±1)")
plt.show()
