"""
Support vector machines: watching SMO converge, and checking it against the generic solvers
============================================================================================

The soft-margin SVM dual (seed 001, F9–F11) is a QP of kind ``qp.svm.dual``. Any iterative
solver takes ``callback(intermediate_result)``; a :class:`~conicml.solvers.Recorder` keeps
them for a convergence plot (the maximal KKT violation :math:`m - M` of the working-set
selection falls below ``tol``). ``compare`` then puts the specialized solver beside the
interior-point backends on the same program: same objective, same decision values.
"""

import matplotlib.pyplot as plt

import conicml as cm
from conicml import plot

X, y = cm.datasets.twonorm(300, dim=5, random_state=0)
prog = cm.formulations.svm.soft_margin(X, y, C=1.0, kernel="rbf", form="dual")
rec = cm.solvers.Recorder()
sol = cm.solve(prog, "smo", tol=1e-8, callback=rec)
print(sol)

comparison = cm.compare(prog, ["clarabel", "ecos", "smo"])
print(comparison)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
plot.plot_convergence(rec, ax=ax1)
plot.plot_comparison(comparison, ax=ax2)
plt.show()
