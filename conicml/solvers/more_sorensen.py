r"""``more-sorensen``: exact trust-region subproblem by the secular equation.

Kinds ``sdp.trs`` and ``socp.trs.convex`` (:mod:`conicml.formulations.trust_region`):

.. math::

    \min_s\; g^\top s + \tfrac12 s^\top H s \quad\text{s.t.}\quad \|Ds\|_2 \le \Delta .

Moré & Sorensen 1983 on one eigendecomposition, hard case included. It stops when
:math:`|\,\|Ds\| - \Delta| \le \texttt{tol}\,\Delta`; the algorithm is in the Notes of
:func:`solve_more_sorensen`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..contracts.trust_region import TRSData
from ..exceptions import ProgramError
from ..kinds import TRS, TRS_CONVEX
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import check_callback
from ._options import check_common
from ._secular import secular_trs

__all__ = ["secular_trs", "solve_more_sorensen"]  # secular_trs: the shared core



@register("more-sorensen", kinds=[TRS, TRS_CONVEX], specialized=True, requires=("numpy",),
          description="Moré–Sorensen secular-equation TRS solver (eigendecomposition, hard case)")
def solve_more_sorensen(
    program: Any,
    *,
    tol: float = 1e-12,
    max_iter: int = 100,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Any = None,
) -> Solution:
    """Exact trust-region subproblem by the secular equation.

    Parameters
    ----------
    program : Program
        Of kind ``sdp.trs`` or ``socp.trs.convex``; reads ``data["trs"]``
        (:class:`~conicml.contracts.trust_region.TRSData`).
    tol : float, default=1e-12
        Relative accuracy of :math:`\\|Ds\\| = \\Delta` on the boundary.
    max_iter : int, default=100
        Safeguarded Newton steps on the secular equation.
    time_limit : float, optional
    verbose : bool, default=False
    callback : callable, optional
        ``callback(IntermediateResult)`` after each Newton step.

    Notes
    -----
    **Algorithm** (Moré & Sorensen 1983, "Computing a trust region step", SIAM J.
    Sci. Stat. Comput. 4:553–572; Nocedal & Wright 2006, section 4.3, on an
    eigendecomposition as in Tayal 2014, section 7.3.1). In :math:`u = Ds` the
    problem has :math:`\\hat H = D^{-1}HD^{-1} = Q\\Lambda Q^\\top` and :math:`\\hat g =
    D^{-1}g`, :math:`c = Q^\\top\\hat g`. A point :math:`u^*` is a global minimiser iff
    for some :math:`\\nu \\ge 0`: :math:`(\\hat H + \\nu I)u^* = -\\hat g`,
    :math:`\\hat H + \\nu I \\succeq 0`, :math:`\\nu(\\Delta - \\|u^*\\|) = 0`. With
    :math:`u(\\nu) = -\\sum_i c_i q_i/(\\lambda_i + \\nu)`:

    1. *interior*: if :math:`\\lambda_1 > 0` and :math:`\\|u(0)\\| \\le \\Delta`, then
       :math:`\\nu = 0` (the Newton step);
    2. *hard case*: if :math:`c_i = 0` on the eigenspace of :math:`\\lambda_1` and
       :math:`\\|p\\| \\le \\Delta` for :math:`p = -\\sum_{\\lambda_i > \\lambda_1} c_i q_i /
       (\\lambda_i - \\lambda_1)`, then :math:`\\nu = -\\lambda_1` and :math:`u^* = p +
       \\tau q_1`, :math:`\\tau = (\\Delta^2 - \\|p\\|^2)^{1/2}` (when :math:`\\lambda_1 \\ge 0`
       the interior point :math:`p` is already optimal);
    3. otherwise the root :math:`\\nu > \\max(0, -\\lambda_1)` of the secular equation
       :math:`\\phi(\\nu) = 1/\\|u(\\nu)\\| - 1/\\Delta = 0` (concave and increasing),
       by Newton's method safeguarded by bisection on the bracket
       :math:`[\\max(0,-\\lambda_1),\\ \\|\\hat g\\|/\\Delta - \\lambda_1]`.

    Each evaluation of :math:`\\phi` costs :math:`O(n)` after the
    :math:`O(n^3)` eigendecomposition. The eigenspace of :math:`\\lambda_1` is
    :math:`\\{i : \\lambda_i - \\lambda_1 \\le 10^{-12}\\max(1, \\|\\hat H\\|)\\}` and a
    component counts as zero when :math:`|c_i| \\le 10^{-12}\\max(1, \\|\\hat g\\|)`.

    **Stopping:** :math:`|\\,\\|u\\| - \\Delta| \\le \\texttt{tol}\\,\\Delta` (default
    :math:`10^{-12}`); a bracket that no longer shrinks (stall) or ``max_iter``
    Newton steps end with ``USER_LIMIT`` and the best point unless the point
    already meets :math:`10^3\\,\\texttt{tol}`.
    """
    check_common("more-sorensen", tol, max_iter, time_limit)
    check_callback("more-sorensen", callback)
    trs = program.data.get("trs")
    if not isinstance(trs, TRSData):
        raise ProgramError("more-sorensen needs program.data['trs'] (a TRSData)")
    start = time.perf_counter()
    Hs, gs = trs.scaled()
    u, info = secular_trs(Hs, gs, trs.delta, tol=tol, max_iter=max_iter,
                          time_limit=time_limit, callback=callback)
    s = u / trs.d
    objective = float(gs @ u + 0.5 * u @ (Hs @ u))
    status = Status.OPTIMAL if info["converged"] else Status.USER_LIMIT
    if verbose:
        print(f"more-sorensen: {info['case']} case, nu={info['nu']:.6g}, "
              f"{info['iterations']} Newton steps, q={objective:.10g}")
    return Solution(
        status=status,
        solver="more-sorensen",
        objective=objective,
        values={"s": s},
        iterations=int(info["iterations"]),
        solve_time=time.perf_counter() - start,
        residuals=Residuals(primal=max(0.0, float(np.linalg.norm(u)) - trs.delta) / trs.delta,
                            dual=math.nan, gap=math.nan, source="solver"),
        message=f"more-sorensen: {info['message']}",
        extras={"nu": info["nu"], "case": info["case"], "lambda_min": info["lambda_min"]},
    )
