r"""
Feature scaling: the path of the learned scales as the sparsity weight grows
============================================================================

Tayal (2014, ch. 7) learns, with the Gaussian-kernel SVM, one scale :math:`z_l \ge 0` per
feature, :math:`k_z(x, x') = \exp(-\sum_l z_l^2 (x_l - x'_l)^2)` (eq. 7.17), and an
:math:`\ell_1` penalty :math:`\mu\,\mathbf 1^\top z` drives the scales of useless features
to zero (eq. 7.7): the SVM is also a feature selector. The problem is non-convex; Margin
AO-II (the thesis's Algorithm 3) alternates an SVM solve with a trust-region step on
:math:`z`. Here two of six standardised features carry a non-linear signal (the label is
the sign of :math:`x_1 x_2`, which no single feature shows). Along the path the four noise
scales stay at zero (the margin alone drives them out on these data) while the two
informative ones shrink as :math:`\mu` grows, until, at the largest :math:`\mu`, the
kernel becomes too wide and the training accuracy drops (printed below).
"""

import matplotlib.pyplot as plt
import numpy as np

from conicml.estimators import FeatureScalingSVC

rng = np.random.default_rng(0)
n = 120
X = rng.normal(0.0, 1.0, (n, 6))
y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)

mus = np.logspace(-3, 1.5, 7)
path = []
for mu in mus:
    fs = FeatureScalingSVC(mu=mu, C=1.0).fit(X, y)
    path.append(fs.z_)
    print(f"mu = {mu:6.3f}: z = {np.round(fs.z_, 3)}, selected {np.flatnonzero(fs.support_)}, "
          f"training accuracy {fs.score(X, y):.3f} ({fs.label_})")
path = np.array(path)

fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
for j in range(X.shape[1]):
    ax.semilogx(mus, path[:, j], "o-" if j < 2 else ".--",
                color=f"C{j}" if j < 2 else "0.6",
                label=f"$z_{j + 1}$ (informative)" if j < 2 else
                ("noise features" if j == 2 else None))
ax.set_xlabel(r"$\ell_1$ weight $\mu$")
ax.set_ylabel(r"learned scale $z_l$")
ax.legend(loc="upper right")
plt.show()
