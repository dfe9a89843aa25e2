"""
Watching a specialized solver converge, and checking it against the generic ones
==================================================================================

Any iterative solver takes ``callback(intermediate_result)``; a
:class:`~conicml.solvers.Recorder` keeps them for a convergence plot. ``compare`` then puts
the specialized solver beside the interior-point backends on the same program.
"""

import conicml as cm
from conicml import plot

X, y = cm.datasets.twonorm(300, dim=5, seed=0)
prog = cm.formulations.svm.soft_margin(X, y, C=1.0, kernel="rbf", form="dual")
rec = cm.solvers.Recorder()
sol = cm.solve(prog, "smo", tol=1e-8, callback=rec)
print(sol)
ax = plot.plot_convergence(rec)

comparison = cm.compare(prog, ["clarabel", "ecos", "smo"])
print(comparison)
ax2 = plot.plot_comparison(comparison)
