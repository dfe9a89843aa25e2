r"""
Write your own learner: a program, a specialized solver, and the proof they agree
=================================================================================

conicml's modelling layer promises that a learner is *data → program → any solver →
solution → model*, and that a specialized solver is held to the same certificate as the
generic ones. This tutorial adds a learner the package does not have, end to end.

**The learner.** The minimum enclosing ball (hard support vector data description; the
core of the Core Vector Machine, Tsang et al. 2005) describes one class by the smallest
ball that contains it; a point outside the ball is a novelty:

.. math::

    \min_{c,\ r} \ r \quad\text{s.t.}\quad \|x_i - c\|^2 \le r, \quad i = 1, \dots, m.

Its Lagrange dual is a QP over the simplex,

.. math::

    \max_{\alpha \ge 0,\ \mathbf 1^\top\alpha = 1}\
    \Phi(\alpha) = \sum_i \alpha_i\|x_i\|^2 - \Big\|\sum_i \alpha_i x_i\Big\|^2,
    \qquad c = \sum_i \alpha_i x_i,

and :math:`\Phi(\alpha) \le r` for every feasible pair: a certified gap.

Four steps: (1) a :class:`~conicml.Program` with a *kind*, a cvxpy ``build`` for the generic
backends, a ``decode``, a ``certify`` and the ``unique`` quantities; (2) a specialized
solver registered for the kind; (3) ``solve``, which recomputes the certificate of
whatever point a solver returns; (4) ``compare`` against Clarabel and ECOS.
"""

# %%
# 1. The program
# --------------
# ``data`` holds what every solver may read; ``build`` is called only when a generic
# backend asks for the cvxpy problem. The constraint is named ``"ball"``: the generic
# backends return its multipliers as ``solution.duals["ball"]``, which are the dual
# :math:`\alpha` above, and the certificate reads them from there.

import time

import cvxpy as cp
import matplotlib.pyplot as plt
import numpy as np

import conicml as cm
from conicml import plot
from conicml.program import ConicForm, Program
from conicml.registry import register
from conicml.solution import Residuals, Solution, Status

KIND = "socp.meb"  # a new kind; "socp.*" is what the generic backends accept


def build(data):
    X = data["X"]
    c = cp.Variable(X.shape[1], name="c")
    r2 = cp.Variable(name="r2")
    sq = np.sum(X * X, axis=1)
    ball = sq - 2 * X @ c + cp.sum_squares(c) <= r2  # ||x_i - c||^2 <= r, all i
    return ConicForm(cp.Problem(cp.Minimize(r2), [ball]),
                     variables={"c": c, "r2": r2}, constraints={"ball": ball})


def decode(data, solution):
    c = np.asarray(solution.values["c"], dtype=float)
    X = data["X"]
    radius = float(np.sqrt(np.max(np.sum((X - c) ** 2, axis=1))))
    alpha = np.asarray(solution.duals.get("ball", np.full(len(X), np.nan)), dtype=float)
    return {"center": c, "radius": radius, "alpha": alpha}


def certify(data, solution):
    """Relative residuals of the returned point, from the data alone."""
    X = data["X"]
    c = np.asarray(solution.values["c"], dtype=float)
    r2 = float(np.asarray(solution.values["r2"]))
    d2 = np.sum((X - c) ** 2, axis=1)
    scale = max(1.0, float(np.max(d2)))
    primal = max(0.0, float(np.max(d2)) - r2) / scale
    alpha = np.clip(np.asarray(solution.duals.get("ball", np.nan), dtype=float), 0.0, None)
    if alpha.shape != (len(X),) or not np.all(np.isfinite(alpha)) or alpha.sum() <= 0:
        return Residuals(primal=primal, source="recomputed")  # no dual point: not checked
    total = alpha.sum()
    a = alpha / total
    centre = X.T @ a
    # stationarity of the Lagrangian: sum(alpha) = 1 (in r) and c = X^T alpha (in c)
    dual = max(abs(1.0 - float(total)), float(np.linalg.norm(c - centre) / np.sqrt(scale)))
    phi = float(a @ np.sum(X * X, axis=1) - centre @ centre)  # the dual's value
    return Residuals(primal=primal, dual=dual, gap=max(0.0, r2 - phi) / scale,
                     source="recomputed")


def unique(data, model):
    # the minimum enclosing ball is unique; its multipliers need not be
    return {"center": model["center"], "radius": model["radius"]}


def meb(X):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2 or not np.all(np.isfinite(X)):
        raise cm.ProgramError(f"meb needs an (m, d) array of finite points, m >= 2; "
                              f"got shape {X.shape}")
    return Program(KIND, {"X": X}, build=build, decode=decode, certify=certify,
                   unique=unique, description="minimum enclosing ball")


# %%
# 2. A specialized solver
# -----------------------
# Frank–Wolfe with away steps on the dual simplex (Yildirim 2008, Algorithm 2): each
# step moves weight toward the farthest point or away from the nearest point of the
# support, with an exact line search. :math:`\delta = \max_i\|x_i - c\|^2/\Phi(\alpha) - 1`
# is its own duality gap; it converges linearly. The solver returns a
# :class:`~conicml.Solution` keyed like the generic backends' (values ``c``, ``r2``,
# duals ``ball``), so ``decode`` and ``certify`` read both the same way.


@register("meb-fw", kinds=[KIND], description="Frank-Wolfe with away steps (Yildirim 2008)",
          compare_options={"tol": 1e-10})
def solve_meb_fw(program, *, tol=1e-8, max_iter=100_000, callback=None):
    start = time.perf_counter()
    X = program.data["X"]
    sq = np.sum(X * X, axis=1)
    alpha = np.zeros(len(X))
    far = int(np.argmax(np.sum((X - X[0]) ** 2, axis=1)))
    other = int(np.argmax(np.sum((X - X[far]) ** 2, axis=1)))
    alpha[[far, other]] = 0.5
    status, it = Status.USER_LIMIT, 0
    for it in range(1, max_iter + 1):
        c = X.T @ alpha
        d2 = sq - 2.0 * X @ c + c @ c
        phi = alpha @ sq - c @ c
        j = int(np.argmax(d2))
        support = np.flatnonzero(alpha > 0)
        k = support[int(np.argmin(d2[support]))]
        delta_plus, delta_minus = d2[j] / phi - 1.0, 1.0 - d2[k] / phi
        if callback is not None:
            callback(cm.solvers.IntermediateResult(iteration=it, objective=phi,
                                                   residual=delta_plus,
                                                   elapsed=time.perf_counter() - start))
        if delta_plus <= tol:
            status = Status.OPTIMAL
            break
        if delta_plus >= delta_minus:  # toward the farthest point
            lam = delta_plus / (2.0 * (1.0 + delta_plus))
            alpha *= 1.0 - lam
            alpha[j] += lam
        else:  # away from the nearest support point (it may leave the support)
            lam = min(delta_minus / (2.0 * (1.0 - delta_minus)), alpha[k] / (1.0 - alpha[k]))
            alpha *= 1.0 + lam
            alpha[k] -= lam
            alpha[k] = max(alpha[k], 0.0)
    c = X.T @ alpha
    r2 = float(np.max(np.sum((X - c) ** 2, axis=1)))  # feasible by construction
    return Solution(status=status, solver="meb-fw", objective=r2,
                    values={"c": c, "r2": np.array(r2)}, duals={"ball": alpha},
                    iterations=it, solve_time=time.perf_counter() - start,
                    residuals=Residuals(primal=0.0, gap=delta_plus, source="solver"))


# %%
# 3. Solve with any solver, certified
# -----------------------------------
# ``cm.solve`` replaces the residuals a solver reports by ``certify``'s recomputation and
# keeps ``optimal`` only if they meet the solver's ``certify_tol``.

rng = np.random.default_rng(0)
X = np.vstack([rng.normal(m, 0.5, (70, 2)) for m in ([0.0, 2.0], [-1.8, -1.0], [1.8, -1.0])])
prog = meb(X)
rec = cm.solvers.Recorder()
sol = cm.solve(prog, "meb-fw", callback=rec)
model = prog.decode(sol)
print(sol.status.value, sol.residuals)
print("clarabel:", cm.solve(prog, "clarabel").residuals)
print(f"center {np.round(model['center'], 4)}, radius {model['radius']:.6f}, "
      f"{np.sum(model['alpha'] > 1e-12)} support points, {sol.iterations} iterations")

# %%
# 4. Hold it against the generic backends
# ---------------------------------------
# ``compare`` solves the same program with each solver and judges the objective and the
# unique quantities (centre and radius) against the reference, Clarabel.

comparison = cm.compare(prog, ["clarabel", "ecos", "meb-fw"])
print(comparison)
assert comparison.agree

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
t = np.linspace(0.0, 2.0 * np.pi, 200)
ax1.scatter(X[:, 0], X[:, 1], s=8, color="0.5")
on = model["alpha"] > 1e-12
ax1.scatter(X[on, 0], X[on, 1], s=60, facecolor="none", edgecolor="C3",
            label=r"support points ($\alpha_i > 0$)")
exact = prog.decode(cm.solve(prog, "clarabel"))
for m, style, label in [(exact, "C0-", "clarabel"), (model, "C2:", "meb-fw")]:
    ax1.plot(m["center"][0] + m["radius"] * np.cos(t), m["center"][1] + m["radius"] * np.sin(t),
             style, lw=2, label=f"{label}: r = {m['radius']:.5f}")
ax1.set_aspect("equal")
ax1.legend(loc="lower right", fontsize="small")
ax1.set_title("the minimum enclosing ball")
plot.plot_convergence(rec, ax=ax2)
ax2.set_title("meb-fw: the gap $\\delta$ falls linearly")
plt.show()
