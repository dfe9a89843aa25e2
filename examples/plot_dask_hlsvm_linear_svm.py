r"""
Beyond one machine: H-LSVM and the linear SVM on Dask arrays
=============================================================

``HLSVMClassifier`` and ``SVMClassifier(kernel="linear", solver="dcd")`` accept
``dask.array`` inputs in the same ``fit(X, y)``: the rows stay in their blocks on the
workers of the active Dask client, and only hyperplanes, counts and certificates travel
(see :doc:`/distributed`). Here the data, two interleaved half-moons ("banana-like"), are
generated lazily block by block; a local cluster of threads stands in for a real one
(``Client("tcp://scheduler:8786")`` would change nothing else).

The linear SVM is certified by its block-wise duality gap; H-LSVM grows its tree level
by level, its root's SVM trained by the same distributed rounds on the rows that reach
it, its small nodes gathered and grown on the client, and it is pruned on held-out rows
drawn on the workers. Both return ordinary fitted estimators (NumPy attributes) whose
``predict`` on a dask array is a dask array. Left: the linear SVM's boundary; right:
H-LSVM's piecewise-linear one, on a sample of the training rows.
"""

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from dask.distributed import Client, LocalCluster

from conicml.estimators import HLSVMClassifier, SVMClassifier

client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                             dashboard_address=None))


def moons(n, seed, block=10_000):
    """Two noisy half-moons, generated lazily in row blocks (nothing materialised)."""
    rng = da.random.default_rng(seed)
    t = rng.uniform(0.0, np.pi, n, chunks=block)
    label = rng.random(n, chunks=block) < 0.5
    x1 = da.where(label, da.cos(t), 1.0 - da.cos(t))
    x2 = da.where(label, da.sin(t), 0.5 - da.sin(t))
    noise = rng.normal(0.0, 0.15, (n, 2), chunks=(block, 2))
    X = da.stack([x1, x2], axis=1) + noise
    return X, da.where(label, 1, 0)


X, y = moons(40_000, seed=0)
X_test, y_test = moons(20_000, seed=1)

svm = SVMClassifier(C=1.0, solver="dcd", solver_options={"tol": 1e-2}).fit(X, y)
tree = HLSVMClassifier(pruning_fraction=0.1, delta=0.01, random_state=0).fit(X, y)

for name, model in (("linear SVM", svm), ("H-LSVM", tree)):
    pred = model.predict(X_test)  # a dask array, computed block by block
    accuracy = float((pred == y_test).mean().compute())
    print(f"{name}: test accuracy {accuracy:.3f} ({type(pred).__name__})")
print(f"linear SVM: {svm.solution_.status.value}, certified relative gap "
      f"{svm.solution_.residuals.gap:.1e} after {svm.solution_.iterations} rounds")
print(f"H-LSVM: {tree.n_hyperplanes_} hyperplanes, {tree.n_leaves_} leaves; node solvers "
      f"{tree.node_solvers_}")

# a sample of the training rows and the decision regions, computed on the client
Xs, ys = X[:2_000].compute(), y[:2_000].compute()
g1, g2 = np.meshgrid(np.linspace(-1.6, 2.6, 300), np.linspace(-1.2, 1.7, 300))
grid = np.column_stack([g1.ravel(), g2.ravel()])
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, (name, model) in zip(axes, (("linear SVM on Dask", svm), ("H-LSVM on Dask", tree))):
    regions = model.predict(grid).reshape(g1.shape)
    ax.contourf(g1, g2, regions, levels=[-0.5, 0.5, 1.5], colors=["#f4cccc", "#cfe2f3"])
    ax.contour(g1, g2, regions, levels=[0.5], colors="k", linewidths=1)
    ax.scatter(Xs[:, 0], Xs[:, 1], c=np.where(ys == 1, "tab:blue", "tab:red"), s=3)
    ax.set_title(name)
    ax.set_xlabel("$x_1$")
axes[0].set_ylabel("$x_2$")
fig.tight_layout()
plt.show()

client.close()
