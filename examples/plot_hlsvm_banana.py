r"""
H-LSVM: the piecewise-linear partition of banana, and Pegasos on a node
=======================================================================

The Hierarchical Linear SVM (seed 001, ch. 5) is an oblique decision tree whose every
internal node is a class-balanced linear SVM, trained on the samples that reach it, and
whose leaves predict their majority class: prediction evaluates one hyperplane per level
(real time), and the partition of the input space is piecewise linear. Node problems are
solved by Weighted-Pegasos, the stochastic sub-gradient method of the thesis (Alg. 5,
inside the tree construction of Alg. 6),
or exactly by an interior-point backend on small nodes (``node_solver="auto"``); the tree is
then pruned on a held-out part of the training set.

Left: the partition of the banana data set into the leaves' cells (the colours) and the
resulting decision boundary (black). Right: the root's node problem, a class-balanced
linear SVM, solved by ``weighted-pegasos``: its objective approaches the optimum that
Clarabel certifies at the rate of a stochastic sub-gradient method; ``solve`` recomputes
the residuals of the point it returns and says ``optimal_inaccurate`` when they do not
reach the interior-point accuracy.
"""

import matplotlib.pyplot as plt
import numpy as np

import conicml as cm
from conicml.estimators import HLSVMClassifier

X, y = cm.datasets.load("banana")
rng = np.random.default_rng(0)
idx = rng.choice(len(y), 1000, replace=False)
X, y = X[idx], y[idx]

hlsvm = HLSVMClassifier(random_state=0).fit(X, y)
print(f"{hlsvm.n_hyperplanes_} hyperplanes, {hlsvm.n_leaves_} leaves, depth "
      f"{hlsvm.max_depth_}; {hlsvm.mean_hyperplanes_:.2f} hyperplanes evaluated per sample; "
      f"training accuracy {hlsvm.score(X, y):.3f}")
print("node solvers:", hlsvm.node_solvers_)

# the root's node problem, class-balanced as H-LSVM builds it
prog = cm.formulations.svm.soft_margin(X, y, C=1.0, class_weight="balanced", form="primal")
exact = cm.solve(prog, "clarabel")
rec = cm.solvers.Recorder()
stochastic = cm.solve(prog, "weighted-pegasos", max_iter=20_000, batch_size=8,
                      random_state=0, callback=rec)
print(f"clarabel: {exact.status.value}, objective {exact.objective:.4f}")
print(f"weighted-pegasos: {stochastic.status.value}, objective {stochastic.objective:.4f} "
      f"after {stochastic.iterations} iterations")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
gx, gy = np.meshgrid(np.linspace(X[:, 0].min(), X[:, 0].max(), 250),
                     np.linspace(X[:, 1].min(), X[:, 1].max(), 250))
grid = np.c_[gx.ravel(), gy.ravel()]
leaves = hlsvm.apply(grid)
_, cell = np.unique(leaves, return_inverse=True)
ax1.pcolormesh(gx, gy, cell.reshape(gx.shape) % 10, cmap="tab10", alpha=0.25,
               shading="auto")
ax1.contour(gx, gy, hlsvm.decision_function(grid).reshape(gx.shape), levels=[0.0],
            colors="k", linewidths=1.5)
ax1.scatter(X[:, 0], X[:, 1], c=np.where(y > 0, "C1", "C0"), s=4)
ax1.set_title(f"H-LSVM on banana: {hlsvm.n_leaves_} cells")
its = np.array([r.iteration for r in rec.results])
obj = np.array([r.objective for r in rec.results], dtype=float)
ax2.loglog(its, np.abs(obj - exact.objective) / exact.objective, color="C2")
ax2.set_xlabel("Weighted-Pegasos iteration")
ax2.set_ylabel("relative distance to Clarabel's optimum")
ax2.set_title("the root node's SVM, stochastic against exact")
plt.show()
