r"""1-D maximisation on an interval: the quadratic-interpolation search and Brent.

:func:`line_search` is the line search of seed 004 Sec. 3.2.4 (Fig. 3.2) with safeguards
the thesis leaves out; :func:`maximize` runs it or Brent's bounded method. Both converge to
a *local* maximum; the pattern update and the safeguards are in the Notes of
:func:`line_search`.

Used by the ``quadratic-interpolation`` and ``brent`` solvers (MEMPM over β,
soft-margin M4 over ρ).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from scipy.optimize import minimize_scalar

from ..exceptions import OptionError

__all__ = ["GOLDEN", "METHODS", "LineSearchResult", "StopSearch", "line_search", "maximize"]

METHODS = ("quadratic-interpolation", "brent")

GOLDEN = (3.0 - math.sqrt(5.0)) / 2.0  # 0.381966...

class LineSearchResult(NamedTuple):
    """Result of :func:`line_search`; unpacks as ``x, fun, n_evals, history``.

    ``history`` holds one ``(x, f(x), x1, x3)`` record per evaluation, with the
    bracket :math:`[x_1, x_3]` known after it.
    """

    x: float
    fun: float
    n_evals: int
    history: tuple[tuple[float, float, float, float], ...]

    @property
    def bracket(self) -> tuple[float, float]:
        """Final bracket :math:`(x_1, x_3)`."""
        return (self.history[-1][2], self.history[-1][3]) if self.history else (math.nan,) * 2


class StopSearch(Exception):
    """Raised by an objective to end the search early (reason code in ``args[0]``)."""


def line_search(
    f: Callable[[float], float],
    lo: float,
    hi: float,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
    maximize: bool = True,
    x0: float | None = None,
) -> LineSearchResult:
    r"""Maximise (or minimise) a 1-D function on :math:`[lo, hi]` by quadratic interpolation.

    See Notes for the pattern update and the safeguards.

    Parameters
    ----------
    f : callable
        ``f(x) -> float``, defined on the closed interval (both ends are
        evaluated). ``nan`` is treated as :math:`-\infty` (maximisation).
        ``f`` may raise any exception to abort; it propagates.
    lo, hi : float
        Domain, ``lo < hi``.
    tol : float, default=1e-8
        Absolute tolerance on the final bracket width.
    max_iter : int, default=100
        Largest number of evaluations of ``f`` (ends included), at least 3.
    maximize : bool, default=True
        Maximise ``f``; ``False`` minimises it.
    x0 : float, optional
        Initial middle point of the pattern (default: the midpoint).

    Returns
    -------
    LineSearchResult
        ``(x, fun, n_evals, history)``: the best evaluated point and value
        (in ``f``'s own sign), the number of evaluations, and the records.

    Notes
    -----
    :func:`line_search` is the line search of seed 004 Sec. 3.2.4 (Fig. 3.2;
    Bertsekas, *Nonlinear Programming*, §1.8). A three-point pattern
    :math:`x_1 < x_2 < x_3` with :math:`f_2 \ge \max(f_1, f_3)` (maximisation) is
    updated with the vertex of the interpolating parabola

    .. math::

        x_{new} = x_2 - \frac12\,
        \frac{(x_2-x_1)^2(f_2-f_3) - (x_2-x_3)^2(f_2-f_1)}
             {(x_2-x_1)(f_2-f_3) - (x_2-x_3)(f_2-f_1)},

    and the new pattern is :math:`x_{new}` plus two old points. Safeguards the
    thesis leaves out: the function is first evaluated at **both domain ends**; if
    the pattern condition fails, the search shrinks toward the better end (so a
    maximum *at* an end is found); a **golden-section step** into the larger
    sub-interval replaces the parabola step when the denominator vanishes, the
    vertex falls outside :math:`(x_1, x_3)`, or the bracket has not shrunk below
    0.7 of its width two steps earlier; once the vertex falls within ``tol``/2 of
    :math:`x_2` the points :math:`x_2 \pm` ``tol``/2 are probed, which collapses
    the bracket. It converges to a *local* maximum.
    """
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise OptionError(f"line_search needs finite lo < hi, got [{lo}, {hi}]")
    if not tol > 0:
        raise OptionError(f"tol must be positive, got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 3:
        raise OptionError(f"max_iter must be an integer >= 3, got {max_iter!r}")
    sign = 1.0 if maximize else -1.0
    history: list[tuple[float, float, float, float]] = []
    cache: dict[float, float] = {}
    bracket = [lo, hi]

    def g(x: float) -> float:
        if x in cache:
            return cache[x]
        if len(history) >= max_iter:
            raise StopSearch(1)
        val = float(f(x))
        cache[x] = -math.inf if math.isnan(val) else sign * val
        history.append((x, val, bracket[0], bracket[1]))
        return cache[x]

    def result() -> LineSearchResult:
        if history:  # record the final bracket on the last entry
            x, val, _, _ = history[-1]
            history[-1] = (x, val, bracket[0], bracket[1])
        if not cache:
            return LineSearchResult(math.nan, math.nan, 0, ())
        best = max(cache, key=lambda x: cache[x])
        return LineSearchResult(best, sign * cache[best], len(history), tuple(history))

    try:
        x1, x3 = lo, hi
        g1, g3 = g(x1), g(x3)
        x2 = 0.5 * (lo + hi) if x0 is None or not lo < x0 < hi else float(x0)
        g2 = g(x2)
        # establish the pattern g2 >= max(g1, g3), shrinking toward the better end
        while g2 < max(g1, g3) and x3 - x1 > tol:
            if g1 > g3:
                x3, g3 = x2, g2
                x2 = x1 + 0.2 * (x3 - x1)
            else:
                x1, g1 = x2, g2
                x2 = x3 - 0.2 * (x3 - x1)
            bracket[:] = [x1, x3]
            g2 = g(x2)
        widths = [2.0 * (x3 - x1), 2.0 * (x3 - x1)]  # the first step may use the parabola
        while x3 - x1 > tol:
            bracket[:] = [x1, x3]
            num = (x2 - x1) ** 2 * (g2 - g3) - (x2 - x3) ** 2 * (g2 - g1)
            den = (x2 - x1) * (g2 - g3) - (x2 - x3) * (g2 - g1)
            xn = x2 - 0.5 * num / den if den != 0 else math.nan
            if math.isfinite(xn) and x1 < xn < x3 and abs(xn - x2) < 0.5 * tol:
                # the parabola has converged onto x2: probe x2 +- tol/2 on the wider side
                # (the next step probes the other one), which collapses the bracket
                xn = x2 + 0.5 * tol if x3 - x2 >= x2 - x1 else x2 - 0.5 * tol
            elif not (math.isfinite(xn) and x1 < xn < x3) or widths[-2] * 0.7 < x3 - x1:
                # no usable vertex, or the bracket shrinks too slowly: golden-section step
                xn = x2 + GOLDEN * (x3 - x2) if x3 - x2 >= x2 - x1 else x2 - GOLDEN * (x2 - x1)
            if xn in cache or not x1 < xn < x3:  # no new information: golden step
                xn = x2 + GOLDEN * (x3 - x2) if x3 - x2 >= x2 - x1 else x2 - GOLDEN * (x2 - x1)
                if xn in cache or not x1 < xn < x3:
                    break  # the bracket cannot be split further in floating point
            gn = g(xn)
            if xn > x2:
                if gn >= g2:
                    x1, g1, x2, g2 = x2, g2, xn, gn
                else:
                    x3, g3 = xn, gn
            else:
                if gn >= g2:
                    x3, g3, x2, g2 = x2, g2, xn, gn
                else:
                    x1, g1 = xn, gn
            widths.append(x3 - x1)
            widths.pop(0)
        bracket[:] = [x1, x3]
    except StopSearch:
        pass
    return result()




def maximize(f: Callable[[float], float], lo: float, hi: float, *, tol: float,
                 max_iter: int, x0: float | None, method: str = "quadratic-interpolation"
                 ) -> tuple[float, float, int, tuple[float, float], bool]:
    """Maximise ``f`` on ``[lo, hi]``: ``(x, f(x), evaluations, bracket, converged)``.

    ``"quadratic-interpolation"``: the shared line search of
    :func:`line_search` (both ends
    evaluated, parabola steps with golden-section safeguards). ``"brent"``:
    both ends, then Brent's bounded method on the interior
    (:func:`scipy.optimize.minimize_scalar`).

    Notes
    -----
    Runs either the quadratic-interpolation search (:func:`line_search`) or, with
    ``method="brent"``, both ends and then Brent's bounded method (parabolic interpolation
    safeguarded by golden-section steps; Brent 1973, *Algorithms for Minimization without
    Derivatives*, ch. 5) through :func:`scipy.optimize.minimize_scalar`.
    """
    if method == "quadratic-interpolation":
        res = line_search(f, lo, hi, tol=tol, max_iter=max_iter, maximize=True, x0=x0)
        bracket = res.bracket
        converged = bracket[1] - bracket[0] <= tol * (1 + 1e-9)
        return res.x, res.fun, res.n_evals, bracket, converged
    values: dict[float, float] = {}

    def g(x: float) -> float:
        x = float(x)
        if x not in values:
            if len(values) >= max_iter:
                raise _Budget
            values[x] = float(f(x))
        return -values[x] if math.isfinite(values[x]) else math.inf

    g(lo)
    g(hi)
    converged = False
    try:
        res = minimize_scalar(g, bounds=(lo, hi), method="bounded",
                              options={"xatol": tol, "maxiter": max(1, max_iter - 2)})
        converged = bool(res.success)
    except _Budget:
        pass
    best = max(values, key=lambda x: values[x])
    width = tol if converged else hi - lo
    return best, values[best], len(values), (best - width / 2, best + width / 2), converged


class _Budget(Exception):
    pass
