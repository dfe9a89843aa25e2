r"""
QPFS weights and the kernel Fisher discriminant
===============================================

**QPFS** (seed 001, ch. 3) weighs features by one quadratic program over the simplex,

.. math::

    \min_{w \ge 0,\ \mathbf 1^\top w = 1}\ \tfrac12(1-\alpha)\,w^\top Q w - \alpha\,F^\top w
    \qquad \text{(eq. 3.4)},

:math:`Q` the redundancy (mutual information between features), :math:`F` the relevance
(mutual information with the label), :math:`\alpha` their trade-off (by default the
heuristic of eq. 3.5). Left: the weights on data with three informative features, a
noisy copy of the first, and four noise features: the noise gets far less weight than
the informative features; the redundancy term is what keeps the copy and its original
from both taking the relevance of one feature in full.

**KFDA** (ch. 4) finds the direction that separates the class means in a kernel feature
space relative to the within-class scatter, as the QP (4.15)–(4.17) or in closed form;
right: its decision function with an RBF kernel on a ring.
"""

import matplotlib.pyplot as plt
import numpy as np

from conicml import plot
from conicml.estimators import KFDAClassifier, QPFSSelector

rng = np.random.default_rng(0)
n = 300
y = rng.integers(0, 2, n) * 2 - 1
informative = y[:, None] * np.array([1.0, 0.7, 0.5]) + rng.normal(0.0, 1.0, (n, 3))
copy = informative[:, :1] + rng.normal(0.0, 0.2, (n, 1))
noise = rng.normal(0.0, 1.0, (n, 4))
X = np.c_[informative, copy, noise]
names = ["x1", "x2", "x3", "copy of x1", "noise 1", "noise 2", "noise 3", "noise 4"]

qpfs = QPFSSelector(n_features_to_select=3).fit(X, y)
print(f"alpha = {qpfs.alpha_:.3f}; weights {np.round(qpfs.scores_, 3)}")
print("selected:", [names[j] for j in np.flatnonzero(qpfs.support_)])

# a ring around a blob: no linear discriminant separates them
r = np.r_[rng.normal(0.0, 0.4, 100), rng.normal(2.0, 0.25, 100)]
phi = rng.uniform(0.0, 2.0 * np.pi, 200)
Xk = np.c_[np.abs(r) * np.cos(phi), np.abs(r) * np.sin(phi)]
yk = np.r_[np.ones(100), -np.ones(100)]
kfda = KFDAClassifier(mu=1e-3, kernel="rbf", gamma=1.0).fit(Xk, yk)
print(f"KFDA training accuracy {kfda.score(Xk, yk):.3f}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
colors = ["C1" if s else "0.6" for s in qpfs.support_]
ax1.barh(names[::-1], qpfs.scores_[::-1], color=colors[::-1])
ax1.set_xlabel("QPFS weight $w_j$ (orange: the 3 selected)")
ax1.set_title(rf"QPFS weights, $\alpha$ = {qpfs.alpha_:.2f}")
plot.plot_decision_boundary(kfda, Xk, yk, ax=ax2)
ax2.set_title("KFDA, RBF kernel")
plt.show()
