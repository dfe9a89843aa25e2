r"""
Chance-constrained learners: specified error rates, CBC spheres and ordinal clusters
=====================================================================================

Seed 003 (Saketha Nath 2007) asks each class, or each *cluster* of a class, to lie on its
side of the hyperplane with a specified probability, whatever its distribution beyond its
mean and covariance.

* Left: the **specified-rates** classifier (ch. 2) with error rates :math:`\eta_\pm`; the
  certificate is the pair of ellipsoids at :math:`\kappa_\pm = \sqrt{(1-\eta_\pm)/\eta_\pm}`
  (errata S003-P1) that the hyperplane separates.
* Middle: **CBC-SOCP** (ch. 3) clusters each class and asks every cluster's sphere
  :math:`B(\mu_j, \kappa\sigma_j)` to lie on its side (with slack), so the program's size
  is the number of clusters, not of points.
* Right: **CBOR** (ch. 4–5) does the same for ordinal labels: clusters of each rank between
  ordered parallel thresholds.
"""

import matplotlib.pyplot as plt
import numpy as np

from conicml import plot
from conicml.estimators import (
    ChanceConstrainedClassifier,
    ClusterSOCPClassifier,
    ClusterSOCPOrdinalRegressor,
)

rng = np.random.default_rng(1)
X = np.r_[rng.normal([1.5, 1.0], [1.0, 0.6], (200, 2)),
          rng.normal([-1.5, -1.0], [0.7, 1.0], (200, 2))]
y = np.r_[np.ones(200), -np.ones(200)]

rates = ChanceConstrainedClassifier(error_pos=0.2, error_neg=0.2).fit(X, y)
cbc = ClusterSOCPClassifier(n_clusters=4).fit(X, y)
print(f"specified rates: kappa+ = {rates.kappa_pos_:.3f}, kappa- = {rates.kappa_neg_:.3f}, "
      f"training accuracy {rates.score(X, y):.3f}")
print(f"CBC: {cbc.n_clusters_} clusters, training accuracy {cbc.score(X, y):.3f}")

# three ranks along a direction, 60 points each
centers = np.array([[-2.0, -1.0], [0.0, 0.0], [2.0, 1.0]])
Xo = np.vstack([rng.normal(c, 0.6, (60, 2)) for c in centers])
yo = np.repeat([1, 2, 3], 60)
cbor = ClusterSOCPOrdinalRegressor(n_clusters=6, kernel="linear").fit(Xo, yo)
print(f"CBOR: thresholds {np.round(cbor.thresholds_, 3)}, "
      f"training accuracy {np.mean(cbor.predict(Xo) == yo):.3f}")

fig, axes = plt.subplots(1, 3, figsize=(14, 4.5), layout="constrained")
plot.plot_decision_boundary(rates, X, y, ax=axes[0])
axes[0].set_title(r"specified rates $\eta_\pm = 0.2$")
plot.plot_decision_boundary(cbc, X, y, ax=axes[1])
axes[1].set_title("CBC-SOCP: one sphere per cluster")
ax = axes[2]
ax.scatter(Xo[:, 0], Xo[:, 1], c=yo, cmap="viridis", s=12)
ax.scatter(*cbor.cluster_centers_.T, marker="x", color="k", label="cluster means")
w = cbor.coef_
t = np.linspace(Xo[:, 0].min(), Xo[:, 0].max(), 2)
for theta in cbor.thresholds_:  # w^T x = theta
    ax.plot(t, (theta - w[0] * t) / w[1], "k--", lw=1)
ax.set_ylim(Xo[:, 1].min() - 0.5, Xo[:, 1].max() + 0.5)
ax.set_title("CBOR: ordered thresholds on the clusters")
ax.legend(loc="upper left", fontsize="small")
plt.show()
