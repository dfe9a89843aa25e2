r"""``envelope-newton``: soft-margin M4 by a safeguarded secant on :math:`G'(\rho)`.

Kind ``"sequential.m4"`` (seed 004 Sec. 4.1.3, errata S004-A6): the fixed-ρ slack SOCPs of
``quadratic-interpolation``, each also giving the slope :math:`G'(\rho)` by the envelope
theorem. The result is a local maximum; it stops when the ρ bracket is below
:math:`\texttt{tol}\cdot\max(1, \kappa^*_{MPM})`. The slope, the search and the
certificate are in the Notes of :func:`solve_envelope_newton`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import kinds
from ..program import Program
from ..registry import register
from ..solution import Solution
from ._callback import Callback
from ._m4_inner import InnerMemo
from ._m4_search import solve_soft_m4
from ._warm import m4_rho

__all__ = ["solve_envelope_newton"]


@register("envelope-newton", kinds=[kinds.M4_SOFT],
          description="soft-margin M4: safeguarded secant on G'(rho) = 1 - C h'(rho), "
                      "h' from the inner SOCP's multipliers (envelope theorem)",
          warm_start=m4_rho,
          certify_tol=1e-4)  # point from an interior-point inner solve
def solve_envelope_newton(
    program: Program,
    *,
    tol: float = 1e-8,
    max_iter: int = 60,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: float | None = None,
    inner: str = "auto",
    inner_options: Mapping[str, Any] | None = None,
    inner_memo: InnerMemo | None = None,
) -> Solution:
    r"""Soft-margin M4 by the safeguarded secant on :math:`G'(\rho)`.

    Parameters are those of :func:`conicml.solvers._m4_search.solve_soft_m4`:
    ``tol`` (relative ρ bracket), ``max_iter`` (slack SOCPs), ``time_limit``,
    ``verbose``, ``callback(intermediate_result)``, ``x0``, ``inner``, ``inner_options``
    and ``inner_memo``. ``inner="auto"`` (the default) solves the fixed-ρ SOCPs by the
    structured interior-point method ``m4-ipm`` (:mod:`conicml.solvers._m4_ipm`) and
    the MPM bound by ``ils-newton``; ``"clarabel"``, ``"ecos"``, ``"scs"`` use that
    generic backend.

    Notes
    -----
    Kind ``"sequential.m4"``. The same fixed-ρ slack SOCPs as ``quadratic-interpolation``
    (see :mod:`conicml.solvers._m4_search`), but each evaluation also yields the slope

    .. math::

        G'(\rho) = 1 - C\,h'(\rho),\qquad
        h'(\rho) = \Lambda_x\sigma_x(w^*) + \Lambda_y\sigma_y(w^*)
                    \ (+\lambda_m(\sigma_x+\sigma_y)),

    by the envelope theorem from the inner SOCP's multipliers (:math:`\Lambda` a class's sum
    of the margin rows' multipliers, :math:`\lambda_m` the global row's of the reduced M4,
    eq. 4.36; :func:`conicml.solvers._m4_search.envelope_slope`). The sign of :math:`G'`
    tells on which side of a local maximum a point lies, so the search keeps a bracket
    :math:`G'(a) > 0 > G'(c)` and steps by the secant root of :math:`G'` (Newton's method on
    :math:`G'`) where :math:`G` is smooth, or where the end tangents of :math:`G` meet at a
    kink, safeguarded by bisection (:mod:`conicml.solvers._slope_search`): a few times fewer
    SOCPs than the quadratic-interpolation search, and one when the maximum lies at
    :math:`\kappa^*_{MPM}` (then :math:`\rho = 0` is not evaluated:
    :math:`G(0) = -C\,h(0) \le 0`). :math:`G` need not be concave (errata S004-A6): the
    result is a local maximum, as for the other searches.

    **Stopping criterion:** final ρ bracket below :math:`\texttt{tol}\cdot\max(1,
    \kappa^*_{MPM})` (absolute, in ρ), as ``quadratic-interpolation``; or ``max_iter`` SOCPs.

    **Certificate:** as ``quadratic-interpolation`` (the normalisation residual, the inner
    solve's residual at :math:`\rho^*`, the final bracket width); OPTIMAL means certified by
    the program's recomputed certificate of the inner SOCP at :math:`\rho^*`.

    **Warm-start:** ``x0`` is the first interior point (default: the secant root between the
    domain ends); ``inner_memo`` (``extras["inner_memo"]`` of a search at another C on the
    same factors) holds the fixed-ρ solutions already computed, which do not depend on C.
    """
    return solve_soft_m4(program, solver="envelope-newton", method="envelope-newton",
                         tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose,
                         callback=callback, x0=x0, inner=inner, inner_options=inner_options,
                         inner_memo=inner_memo)
