r"""``brent``: soft-margin M4 by Brent's bounded search over ρ.

Kind ``"sequential.m4"``. The same sequence of fixed-ρ slack SOCPs as
``quadratic-interpolation`` (see :mod:`conicml.solvers._m4_search`), with the
1-D search of Brent 1973 (*Algorithms for Minimization without Derivatives*,
ch. 5: parabolic interpolation safeguarded by golden-section steps) through
:func:`scipy.optimize.minimize_scalar`, after evaluating both domain ends.

**Stopping criterion:** interval of uncertainty
:math:`\le \texttt{tol}\cdot\max(1, \kappa^*_{MPM})`, or ``max_iter`` SOCPs.

**Certificate:** as ``quadratic-interpolation`` (the normalisation residual,
the inner solve's residual at :math:`\rho^*`, the final bracket width).

**Warm-start:** none (``x0`` is accepted for a common signature and ignored by
Brent's method, which starts from its own golden-section point).
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

__all__ = ["solve_brent"]


@register("brent", kinds=[kinds.M4_SOFT],
          description="soft-margin M4: Brent's bounded search over rho of slack SOCPs",
          certify_tol=1e-4)  # point from an interior-point inner solve
def solve_brent(
    program: Program,
    *,
    tol: float = 1e-8,
    max_iter: int = 60,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: float | None = None,
    inner: str = "clarabel",
    inner_options: Mapping[str, Any] | None = None,
    inner_memo: InnerMemo | None = None,
) -> Solution:
    r"""Soft-margin M4 by Brent's method over ρ.

    Parameters are those of :func:`conicml.solvers._m4_search.solve_soft_m4`:
    ``tol`` (relative ρ bracket), ``max_iter`` (slack SOCPs), ``time_limit``,
    ``verbose``, ``callback(intermediate_result)``, ``x0``, ``inner`` (the
    generic backend of the SOCPs), ``inner_options`` and ``inner_memo``.
    """
    return solve_soft_m4(program, solver="brent", method="brent", tol=tol, max_iter=max_iter,
                         time_limit=time_limit, verbose=verbose, callback=callback, x0=x0,
                         inner=inner, inner_options=inner_options,
                         inner_memo=inner_memo)
