r"""``cbc-hull-smo``: the hull-of-spheres program solved by ``cbc-smo`` on the hard dual (3.11).

The kind ``"socp.chance.cbc.hard.hull"`` (seed 003 (3.13) as the distance between
two convex hulls of spheres) has variables :math:`(\alpha, V)` that ``cbc-smo``
does not know; its contract carries the hard dual (3.11) of the same spheres.
This solver runs ``cbc-smo`` there and maps the optimal :math:`\alpha` onto the
hull (:meth:`conicml.contracts.cbc_hull.CBCHullData.hull_point_from_hard_alpha`):
at the optimum the nearest points of every sphere lie along the same direction
:math:`u = w/\|w\|`, so :math:`V_j = \alpha_j u` with :math:`\alpha` normalised
to sum 1 per class. The status, iterations and certificate are ``cbc-smo``'s on
the (3.11) program; :func:`conicml.solve` recomputes the hull certificate
(gap :math:`(\delta - s(u))/\delta`). Options are passed to ``cbc-smo``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import SolverError
from ..kinds import CBC_HULL_DUAL
from ..registry import register
from ..solution import Solution, Status

__all__ = ["solve_cbc_hull_smo"]


@register("cbc-hull-smo", kinds=[CBC_HULL_DUAL], specialized=True, requires=("numpy",),
          compare_options={"tol": 1e-9})
def solve_cbc_hull_smo(
    program,
    *,
    tol: float = 1e-6,
    max_iter: int | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Any = None,
) -> Solution:
    r"""``cbc-smo`` on the hard dual (3.11), mapped onto the hull of spheres.

    Parameters
    ----------
    program : Program
        Kind ``"socp.chance.cbc.hard.hull"``
        (:func:`conicml.formulations.cbc_hull.cbc_hull`).
    tol, max_iter, time_limit, verbose, callback
        Passed to ``cbc-smo`` (see :mod:`conicml.solvers.cbc_smo`).

    Returns
    -------
    Solution
        ``objective``: the hull distance :math:`\delta` at the mapped point;
        ``values``: ``alpha``, ``V``; ``extras["hard_dual"]``: ``cbc-smo``'s
        own solution of (3.11).
    """
    from ..solving import solve

    if getattr(program, "kind", None) != CBC_HULL_DUAL or "cbc_hull" not in program.data:
        raise SolverError(f"solver 'cbc-hull-smo' accepts programs of kind {CBC_HULL_DUAL!r}")
    con = program.data["cbc_hull"]
    inner = solve(con.hard_dual, "cbc-smo", tol=tol, max_iter=max_iter, time_limit=time_limit,
                  verbose=verbose, callback=callback)
    if not inner.values:
        return Solution(status=inner.status, solver="cbc-hull-smo", message=inner.message,
                        extras={"hard_dual": inner})
    if not float(np.maximum(inner.values["alpha"], 0.0)[con.y > 0].sum()) > 0:
        # cbc-smo stopped at alpha = 0 (a stall before the first step, e.g. a feature
        # scaled by 1e8): (3.11)'s alpha does not determine a hull point
        return Solution(status=Status.SOLVER_ERROR, solver="cbc-hull-smo",
                        iterations=inner.iterations, solve_time=inner.solve_time,
                        message=("cbc-hull-smo: cbc-smo ended with alpha = 0 on the positive "
                                 f"class, which maps onto no hull point ({inner.message}); "
                                 "use clarabel or ecos"),
                        extras={"hard_dual": inner})
    alpha, V = con.hull_point_from_hard_alpha(inner.values["alpha"])
    z = con.coords.T @ (con.y * alpha) - V.T @ con.radii
    return Solution(
        status=inner.status,
        solver="cbc-hull-smo",
        objective=float(np.linalg.norm(z)),
        values={"alpha": alpha, "V": V},
        iterations=inner.iterations,
        setup_time=inner.setup_time,
        solve_time=inner.solve_time,
        residuals=inner.residuals,
        message=f"cbc-hull-smo via cbc-smo on (3.11): {inner.message}",
        extras={"hard_dual": inner},
    )
