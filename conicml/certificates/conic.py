r"""conicml's own check of a returned point: the certificates behind ``OPTIMAL``.

Every :class:`~conicml.Program` carries a ``certify(data, solution)`` function
(see :meth:`conicml.Program.certify`); :func:`conicml.solve` calls it after
every solve and keeps ``OPTIMAL`` only when each recomputed number is at most
the solver's ``certify_tol``. The numbers are *relative* (scale-free), so that
they read the same whatever the units of the features. What ``primal``, ``dual`` and
``gap`` measure, and how missing multipliers are recovered, is in the Notes of
:func:`conic_certificate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.atoms.pnorm import Pnorm
from scipy.optimize import nnls

from ..solution import Residuals, Solution

__all__ = ["ACTIVE_RTOL", "PRIMAL_FLOOR", "certify_with", "conic_certificate", "rel", "residuals"]

#: A constraint row counts as (nearly) active, i.e. may carry a recovered
#: multiplier, when its value is within this fraction of its own scale of 0.
#: A loose choice costs nothing: the complementarity of every recovered
#: multiplier is measured and enters ``gap``.
ACTIVE_RTOL = 1e-4

#: Smallest scale a constraint is measured against, as a fraction of the largest
#: term of the whole program.
PRIMAL_FLOOR = 1e-3
USE_DUALS = False

_TINY = np.finfo(float).tiny


def rel(num: float, *scales: float) -> float:
    """``num / max(scales)`` with a floor at the smallest normal float (never 0/0)."""
    den = max([abs(float(s)) for s in scales if np.isfinite(s)] + [_TINY])
    return abs(float(num)) / den


def residuals(primal: float = math.nan, dual: float = math.nan,
              gap: float = math.nan) -> Residuals:
    """A :class:`Residuals` recomputed by conicml (``source="recomputed"``)."""
    return Residuals(primal=float(primal), dual=float(dual), gap=float(gap),
                     source="recomputed")


def _dense_value(expr: cp.Expression) -> np.ndarray:
    return np.atleast_1d(np.asarray(expr.value, dtype=float)).ravel(order="F")


def _grad_block(grad: Mapping, variables: list[cp.Variable], offsets: dict[int, int],
                n_total: int, n_rows: int) -> sp.csr_matrix | None:
    """Stack ``expr.grad`` (var.size x expr.size per variable) into (n_total x n_rows)."""
    blocks = []
    for var, g in grad.items():
        if g is None:
            return None
        g = sp.csr_matrix(g) if not sp.issparse(g) else g.tocsr()
        if g.shape != (var.size, n_rows):
            if g.shape[0] * g.shape[1] != var.size * n_rows:
                return None  # a gradient cvxpy shapes otherwise (broadcast): not used
            g = sp.csr_matrix(np.reshape(g.toarray(), (var.size, n_rows)))
        start = offsets[var.id]
        coo = g.tocoo()
        blocks.append((coo.row + start, coo.col, coo.data))
    if not blocks:
        return sp.csr_matrix((n_total, n_rows))
    rows = np.concatenate([b[0] for b in blocks])
    cols = np.concatenate([b[1] for b in blocks])
    vals = np.concatenate([b[2] for b in blocks])
    return sp.csr_matrix((vals, (rows, cols)), shape=(n_total, n_rows))


def _norm_atoms(expr: cp.Expression) -> list:
    """Every 2-norm atom in an expression tree."""
    out, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Pnorm) and node.p == 2:
            out.append(node)
        stack.extend(getattr(node, "args", []))
    return out


def conic_certificate(data: Mapping[str, Any], solution: Solution, *,
                      build: Callable[[Mapping[str, Any]], Any],
                      complete: Callable[[Mapping[str, Any], dict], dict] | None = None,
                      check_objective: bool = True) -> Residuals:
    r"""KKT certificate of ``solution`` for the cvxpy problem ``build(data)``.

    Parameters
    ----------
    data : Mapping
        The program's data.
    solution : Solution
        A solution carrying a point.
    build : callable
        The program's ``build`` (a fresh :class:`~conicml.program.ConicForm`
        is built, so the program's own cached problem is never touched).
    complete : callable, optional
        ``complete(data, values) -> values`` fills variables that a
        specialized solver does not return but that are determined by the
        others (epigraph variables, slacks).
    check_objective : bool, default=True
        Compare ``solution.objective`` with the objective recomputed at the
        point (off when the caller certifies an inner problem of a sequential
        kind, whose reported objective is the outer one).

    Returns
    -------
    Residuals
        ``primal``, ``dual``, ``gap`` as in the Notes below, with
        ``source="recomputed"``; a point that misses a variable gets
        ``primal = inf`` (it cannot be checked, so it is not certified).

    Notes
    -----
    ``primal``
        the largest constraint violation of the point, each constraint divided by
        the magnitude of its own two sides;
    ``dual``
        an optimality measure: the stationarity residual of the Lagrangian
        :math:`\|\nabla f + \sum_c J_c^\top\lambda_c\|_\infty` divided by the
        largest of its terms, plus the sign violation of the multipliers (kinds
        with a cvxpy problem), or a projected-gradient / KKT measure written for
        the kind (sequential and quasiconvex kinds);
    ``gap``
        the complementarity :math:`\sum|\lambda_i g_i(x)|` divided by the size of
        the Lagrangian's terms, and the disagreement between the objective the
        solver reported and the objective recomputed at its point.

    Multipliers come from the solution when the solver returned them (the generic
    backends do) and are otherwise **recovered** by conicml from the point: a
    bounded least-squares fit of the stationarity condition over the (nearly)
    active constraints (:func:`scipy.optimize.nnls`, equality multipliers split into two
    non-negative parts), with the
    inequality multipliers held non-negative. For a convex program a point with
    small primal, dual and gap numbers is optimal (the KKT conditions are
    sufficient), whichever solver produced it. Nothing is copied from the
    solver's report except the point itself and its objective (which is checked).

    Gradients are cvxpy's (``Expression.grad``); at a point where an atom is not
    differentiable (a norm at zero) cvxpy returns none and the optimality measure
    is reported as ``nan`` ("not checked") rather than guessed.
    """
    form = build(data)
    problem: cp.Problem = form.problem
    point = _set_point(problem, solution, data, complete)
    if point is None:
        return residuals(math.inf, math.nan, math.nan)
    x = point.x

    # objective, always minimised here
    sense = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    f = sense * float(problem.objective.expr.value)
    grad_f = point.grad(problem.objective.expr, 1)
    rows = _constraint_rows(problem, form, solution)
    if rows is None:
        return residuals(math.inf, math.nan, math.nan)

    # gradients of every row; a row's scale is the magnitude of its terms,
    # max(|lhs|, |rhs|, |J|^T |x|), so that cancellations (y^T alpha = 0) read right
    smooth = grad_f is not None
    for r in rows:
        r["J"] = point.grad(r["expr"], r["g"].size)
        if r["J"] is None:
            smooth = False
        else:
            r["scale"] = np.maximum(r["scale"], abs(r["J"]).T @ np.abs(x))
    # a constraint's violation is measured against the largest term of that
    # constraint, floored at PRIMAL_FLOOR of the largest term of the program (a
    # bound xi >= 0 whose entries are all ~0 has no scale of its own)
    global_scale = max([float(np.max(r["scale"], initial=0.0)) for r in rows] + [_TINY])
    floor = PRIMAL_FLOOR * global_scale
    primal = 0.0
    for r in rows:
        viol = np.abs(r["g"]) if r["eq"] else np.maximum(r["g"], 0.0)
        den = max(float(np.max(r["scale"], initial=0.0)), floor)
        primal = max(primal, float(np.max(viol, initial=0.0)) / den)
    smooth = _fit_cone_kinks(rows, point, global_scale, smooth, grad_f)
    if _unfitted_kink(problem, rows, point):
        smooth = False
    # the objective's own scale: the magnitude of its terms (|grad f|^T |x|), so that an
    # optimum at f ~ 0 (kappa* = inf) is judged against the terms that cancel there
    fterms = float(np.sum(abs(grad_f).T @ np.abs(x))) if grad_f is not None else 0.0
    if not smooth:
        return residuals(primal, math.nan, _objective_gap(solution, sense, f, fterms)
                         if check_objective else math.nan)

    resid, terms = _stationarity(rows, sense * np.asarray(grad_f.toarray()).ravel(), floor)
    # scale of the Lagrangian: its largest gradient term, or |f| / ||x|| for a flat f
    xnorm = float(np.max(np.abs(x), initial=0.0))
    den = max(max(terms), abs(f) / xnorm if xnorm > 0 else 0.0)
    dual = rel(float(np.max(np.abs(resid), initial=0.0)), den)
    comp, size = 0.0, abs(f)
    for r in rows:
        lam = r["lam"]
        if not r["eq"]:
            lam_scale = float(np.max(np.abs(lam), initial=0.0))
            dual = max(dual, rel(float(np.max(-lam, initial=0.0)), lam_scale))
            if "z" in r:  # the fitted subgradient must lie in the ball of radius lambda
                zn = float(np.linalg.norm(r["z"]))
                dual = max(dual, rel(max(0.0, zn - float(lam[0])), zn, float(lam[0])))
            comp += float(np.sum(np.abs(lam * r["g"])))
        size += float(np.sum(np.abs(lam) * np.maximum(r["scale"], floor)))
    gap = rel(comp, size)
    if check_objective:
        gap = max(gap, _objective_gap(solution, sense, f, max(size, fterms)))
    return residuals(primal, dual, gap)


@dataclass
class _Point:
    """The point under test, stacked: every variable's offset in ``x`` (column-major)."""

    variables: list
    offsets: dict[int, int]
    n_total: int
    x: np.ndarray

    def grad(self, expr: Any, n_rows: int) -> sp.csr_matrix | None:
        """The (n_total x n_rows) Jacobian transpose of ``expr`` at the point, or ``None``."""
        return _grad_block(expr.grad, self.variables, self.offsets, self.n_total, n_rows)


def _set_point(problem: cp.Problem, solution: Solution, data: Mapping[str, Any],
               complete: Callable | None) -> _Point | None:
    """Load the solution's values into the problem's variables; ``None`` if one is missing,
    misshapen or not finite (the point cannot be checked)."""
    values = {k: np.asarray(v, dtype=float) for k, v in solution.values.items()}
    if complete is not None:
        values = complete(data, values)
    variables = problem.variables()
    for var in variables:
        if var.name() not in values:
            return None
        val = np.asarray(values[var.name()], dtype=float)
        if val.size != var.size or not np.all(np.isfinite(val)):
            return None
        var.value = val.reshape(var.shape)
    offsets, n_total = {}, 0
    for var in variables:
        offsets[var.id] = n_total
        n_total += var.size
    x = np.concatenate([np.asarray(v.value, dtype=float).ravel(order="F") for v in variables])
    return _Point(variables, offsets, n_total, x)


def _constraint_rows(problem: cp.Problem, form: Any,
                     solution: Solution) -> list[dict[str, Any]] | None:
    """The constraints as rows g(x) <= 0 (ineq) or g(x) = 0 (eq), with their scales and the
    solver's multipliers where it returned usable ones; ``None`` for an explicit cone."""
    names = {id(c): name for name, c in form.constraints.items()}
    rows: list[dict[str, Any]] = []
    for con in problem.constraints:
        if isinstance(con, cp.constraints.Inequality):
            eq = False
        elif isinstance(con, cp.constraints.Equality):
            eq = True
        else:  # explicit cones: not handled by the gradient check
            return None
        lhs, rhs = con.args
        expr = lhs - rhs
        g = _dense_value(expr)
        scale = np.maximum(np.abs(np.broadcast_to(_dense_value(lhs), g.shape)),
                           np.abs(np.broadcast_to(_dense_value(rhs), g.shape)))
        dual = solution.duals.get(names.get(id(con), ""), None) if USE_DUALS else None
        lam = None
        if dual is not None:
            lam = np.atleast_1d(np.asarray(dual, dtype=float)).ravel(order="F")
            if lam.size != g.size or not np.all(np.isfinite(lam)):
                lam = None
        row = {"g": g, "scale": scale, "eq": eq, "lam": lam, "expr": expr}
        if (not eq and isinstance(lhs, Pnorm) and lhs.p == 2
                and lhs.args[0].is_affine()):  # ||a(x)||_2 <= rhs: a kink where a(x) = 0
            row["norm_arg"], row["rhs"] = lhs.args[0], rhs
        rows.append(row)
    for var in problem.variables():  # sign attributes: constraints without a multiplier
        if var.attributes.get("nonneg"):
            xv = np.asarray(var.value, dtype=float).ravel(order="F")
            rows.append({"g": -xv, "scale": np.abs(xv), "eq": False, "lam": None,
                         "expr": -var})
    return rows


def _fit_cone_kinks(rows: list[dict[str, Any]], point: _Point, global_scale: float,
                    smooth: bool, grad_f: Any) -> bool:
    r"""Mark the second-order cone rows whose argument vanishes at the point.

    Such a row has no gradient: its subdifferential :math:`\{A^\top z : \|z\| \le 1\}`
    is fitted instead (``row["kink"] = A``, :math:`z` free, then checked). Returns
    whether the Lagrangian is still smooth enough to check.
    """
    for r in rows:
        if "norm_arg" in r and r["lam"] is None:
            a = _dense_value(r["norm_arg"])
            if float(np.linalg.norm(a)) <= 1e-7 * global_scale:
                Ja = point.grad(r["norm_arg"], a.size)
                Jr = point.grad(-r["rhs"], 1) \
                    if not r["rhs"].is_constant() else sp.csr_matrix((point.n_total, 1))
                if Ja is not None and Jr is not None:
                    r["J"], r["kink"] = Jr, Ja
                    smooth = smooth and grad_f is not None and all(
                        q["J"] is not None for q in rows)
    return smooth


def _unfitted_kink(problem: cp.Problem, rows: list[dict[str, Any]], point: _Point) -> bool:
    """Whether another 2-norm (inside the objective or a larger constraint) is evaluated
    at a vanishing argument: a kink whose subgradient is not fitted, so not checked."""
    handled = {id(r["norm_arg"]) for r in rows if "kink" in r}
    for expr in [problem.objective.expr] + [c.args[0] for c in problem.constraints] \
            + [c.args[1] for c in problem.constraints]:
        for atom in _norm_atoms(expr):
            arg = atom.args[0]
            if id(arg) in handled or not arg.is_affine():
                continue
            a = _dense_value(arg)
            Ja = point.grad(arg, a.size)
            terms = float(np.max(abs(Ja).T @ np.abs(point.x), initial=0.0)) \
                if Ja is not None else 0.0
            if float(np.max(np.abs(a), initial=0.0)) <= 1e-6 * max(terms, _TINY):
                return True
    return False


def _stationarity(rows: list[dict[str, Any]], resid: np.ndarray,
                  floor: float) -> tuple[np.ndarray, list[float]]:
    r"""The Lagrangian's gradient :math:`\nabla f + \sum_c J_c^\top\lambda_c` and the sizes
    of its terms, with the multipliers the solver did not return fitted (see Notes of
    :func:`conic_certificate`); fills ``row["lam"]`` (and ``row["z"]`` at a kink)."""
    terms = [float(np.max(np.abs(resid), initial=0.0))]
    recover = []
    for r in rows:
        if r["lam"] is not None:
            contrib = r["J"] @ r["lam"]
            resid = resid + contrib
            terms.append(float(np.max(np.abs(contrib), initial=0.0)))
        else:
            recover.append(r)
    if not recover:
        return resid, terms
    cols, lower, slots = [], [], []  # fit the missing multipliers on the nearly active rows
    for r in recover:
        active = np.ones(r["g"].size, dtype=bool) if r["eq"] else (
            r["g"] >= -ACTIVE_RTOL * max(float(np.max(r["scale"], initial=0.0)), floor))
        idx = np.flatnonzero(active)
        r["lam"] = np.zeros(r["g"].size)
        if idx.size:
            cols.append(r["J"][:, idx])
            lower.append(np.full(idx.size, -np.inf if r["eq"] else 0.0))
            slots.append((r, idx))
        if "kink" in r:
            cols.append(r["kink"])
            lower.append(np.full(r["kink"].shape[1], -np.inf))
            slots.append((r, None))
    if not cols:
        return resid, terms
    A = sp.hstack(cols).tocsr()
    lb = np.concatenate(lower)
    # min ||A lam + resid|| with lam_ineq >= 0, lam_eq free: Lawson-Hanson NNLS on
    # [A_ineq, A_eq, -A_eq] (an exact active-set method, fast to a few thousand
    # columns; a first-order bounded solver stops too early and reads as a false
    # stationarity residual)
    Ad = A.toarray()
    free = np.isinf(lb)
    M = np.hstack([Ad, -Ad[:, free]])
    x_nn, _ = nnls(M, -resid, maxiter=max(50, 10 * M.shape[1]))
    lam_fit = x_nn[:Ad.shape[1]].copy()
    lam_fit[free] -= x_nn[Ad.shape[1]:]
    pos = 0
    for r, idx in slots:
        if idx is None:  # the subgradient part of a kinked cone row
            z = lam_fit[pos:pos + r["kink"].shape[1]]
            pos += z.size
            contrib = r["kink"] @ z
            r["z"] = z
        else:
            r["lam"][idx] = lam_fit[pos:pos + idx.size]
            pos += idx.size
            contrib = r["J"] @ r["lam"]
        resid = resid + contrib
        terms.append(float(np.max(np.abs(contrib), initial=0.0)))
    return resid, terms


def _objective_gap(solution: Solution, sense: float, f: float, size: float) -> float:
    """Relative disagreement between the reported objective and the recomputed one."""
    reported = float(solution.objective)
    if not math.isfinite(reported):
        return math.inf
    return rel(reported - sense * f, abs(f), size)


def certify_with(build: Callable[[Mapping[str, Any]], Any],
                 complete: Callable[[Mapping[str, Any], dict], dict] | None = None,
                 ) -> Callable[[Mapping[str, Any], Solution], Residuals]:
    """The ``certify`` of a program whose cvxpy problem is ``build(data)`` (picklable)."""
    return partial(conic_certificate, build=build, complete=complete)
