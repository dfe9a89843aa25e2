r"""1-D maximisation on an interval with slopes: a safeguarded secant (Newton) on :math:`f'`.

Used by the ``envelope-newton`` solver of the soft-margin M4, where every
evaluation of :math:`G(\rho) = \rho - C\,h(\rho)` also returns its slope
:math:`G'(\rho) = 1 - C\,h'(\rho)` by the envelope theorem (the inner SOCP's multipliers,
:mod:`conicml.solvers._m4_search`), so one evaluation tells on which side of a local
maximum a point lies. It stops when the bracket width is at most ``tol`` (absolute); the
models and safeguards are in the Notes of :func:`maximize_with_slope`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from ..exceptions import OptionError

__all__ = ["NoSlope", "SlopeSearchResult", "maximize_with_slope"]


class SlopeSearchResult(NamedTuple):
    """Result of :func:`maximize_with_slope`."""

    x: float
    fun: float
    n_evals: int
    bracket: tuple[float, float]
    converged: bool


class _Budget(Exception):
    pass


class NoSlope(Exception):
    """Raised when an evaluation returns no finite slope (``args[0]`` is the point)."""


def maximize_with_slope(
    f: Callable[[float], tuple[float, float]],
    lo: float,
    hi: float,
    *,
    tol: float = 1e-8,
    max_iter: int = 60,
    x0: float | None = None,
    lo_bound: float | None = None,
    value_tol: float = 0.0,
    lo_known: tuple[float, float] | None = None,
    first: str = "tangent",
    lo_piece: bool = False,
) -> SlopeSearchResult:
    r"""Maximise ``f`` on :math:`[lo, hi]` given values and slopes.

    Parameters
    ----------
    f : callable
        ``f(x) -> (value, slope)``; a ``nan`` value counts as :math:`-\infty`; a slope
        that is not finite raises :class:`NoSlope`. Exceptions raised by ``f`` propagate.
    lo, hi : float
        Domain, ``lo < hi``.
    tol : float, default=1e-8
        Absolute tolerance on the final bracket width.
    max_iter : int, default=60
        Largest number of evaluations of ``f`` (ends included), at least 3.
    x0 : float, optional
        First interior point (default: the secant root between the ends).
    lo_bound : float, optional
        A known upper bound on ``f(lo)``. ``hi`` is evaluated first; if its slope is
        :math:`\ge 0` (a local maximum) and ``f(hi) >= lo_bound``, it is returned without
        evaluating ``lo`` (the soft M4: :math:`G(0) = -C\,h(0) \le 0`).
    lo_known : (float, float), optional
        ``(f(lo), f'(lo))`` when known exactly without an evaluation (the soft M4 whose
        slack vanishes next to 0: ``(0, 1)``); ``lo`` is then never evaluated (nor
        returned: with a positive slope it is no local maximum).
    first : {"tangent", "hermite"}, default="tangent"
        The first interior point (without ``x0``): where the end tangents meet, or the
        maximiser of the cubic Hermite interpolant of both ends' values and slopes (when
        it has one inside the bracket; else the tangents).
    lo_piece : bool, default=False
        With ``lo_known``: a point whose slope equals ``lo_known``'s exactly lies on the
        linear piece of ``f`` through ``lo`` (the soft M4: a certified zero slack, where
        :math:`G(\rho) = \rho`). A bracket end on it is modelled by that piece (Notes).
    value_tol : float, default=0.0
        Accuracy of the values: a slope is overruled by the values (below) only when they
        contradict it by more than this. Near a flat maximum the values of nearby points
        differ by less than the evaluations' noise, and a rule without it moves a bracket
        end by tol/2 per evaluation until the budget runs out.

    Returns
    -------
    SlopeSearchResult
        ``(x, fun, n_evals, bracket, converged)``: the best evaluated point.

    Notes
    -----
    **Algorithm.** Both domain ends are evaluated first (``hi`` first: with a known bound
    on ``f(lo)`` below ``f(hi)`` and an outward slope at ``hi``, ``lo`` is skipped). An end
    whose slope points out of the domain (:math:`f'(hi) \ge 0`, :math:`f'(lo) \le 0`) is
    a local maximum; if both are, the better one is returned. Otherwise the bracket
    :math:`[a, c]` with :math:`f'(a) > 0 > f'(c)` holds a local maximum and is kept as an
    invariant. The next point comes from one of two models of :math:`f'`: **smooth** -- the
    secant root of :math:`f'` through the two most recent points (Newton's method on
    :math:`f'` with a finite-difference second derivative; exact when :math:`f` is
    quadratic); **kink** -- where the tangents of :math:`f` at the bracket ends meet (exact
    when :math:`f` is piecewise linear, as at a maximum where :math:`h` leaves 0). The first
    step uses the tangents; afterwards the model is the one the last slope supports: a
    slope much smaller than the previous one on the same side says :math:`f'` varies
    continuously (smooth), a nearly equal one says :math:`f` is linear on that side (kink).
    A model estimate outside the bracket is replaced by the regula-falsi root; when the
    bracket has not halved over two steps in a row (unless the last slope fell tenfold:
    fast one-sided convergence), or a probe failed to collapse it, a **bisection** step
    follows (so the search converges at least linearly whatever :math:`f'` does); an end
    that moved at most half as far as its previous move counts as progress (one-sided
    convergence: the other end stays while this one closes in). With ``lo_piece``, while
    the left end lies on the known linear piece the model is the tangent one (the piece is
    the left tangent; where it meets the right end's tangent is Newton's step on the kink
    from the right, and a secant of :math:`f'` across the kink would land on the piece
    again) unless the secant of :math:`f'` through the two newest points reaches 0 before
    the piece, moving left (a smooth maximum right of the piece), and the first point is
    the tangents' (a cubic through a kink is no model of it). Once an estimate lies within
    ``tol``/2 of an evaluated point, the point ``tol``/2 beyond it, into the bracket, is
    probed, which collapses the bracket.
    A slope that is not finite (no multipliers) raises :class:`NoSlope` (the caller falls
    back to a search on values).

    **Stopping:** bracket width :math:`\le` ``tol`` (absolute), a zero slope, or
    ``max_iter`` evaluations (then ``converged`` is false). The result is a *local*
    maximum, as for the quadratic-interpolation search (:mod:`conicml.solvers._line_search`).
    """
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise OptionError(f"maximize_with_slope needs finite lo < hi, got [{lo}, {hi}]")
    if not tol > 0:
        raise OptionError(f"tol must be positive, got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 3:
        raise OptionError(f"max_iter must be an integer >= 3, got {max_iter!r}")
    if not value_tol >= 0:
        raise OptionError(f"value_tol must be >= 0, got {value_tol!r}")
    cache: dict[float, tuple[float, float]] = {}
    order: list[float] = []

    def ev(x: float) -> tuple[float, float]:
        if x in cache:
            return cache[x]
        if len(cache) >= max_iter:
            raise _Budget
        val, slope = f(x)
        if not math.isfinite(slope):
            raise NoSlope(x)
        val = -math.inf if math.isnan(val) else float(val)
        cache[x] = (val, float(slope))
        order.append(x)
        return cache[x]

    bracket = [lo, hi]
    converged = False

    def result() -> SlopeSearchResult:
        if not cache:
            return SlopeSearchResult(math.nan, math.nan, 0, (lo, hi), False)
        best = max(cache, key=lambda x: cache[x][0])
        return SlopeSearchResult(best, cache[best][0], len(cache), (bracket[0], bracket[1]),
                                 converged)

    try:
        fc, gc = ev(hi)
        if lo_bound is not None and gc >= 0 and fc >= lo_bound:
            converged = True
            bracket[:] = [hi, hi]
            return result()
        if lo_known is not None and lo_known[1] > 0:
            fa, ga = float(lo_known[0]), float(lo_known[1])
        else:
            fa, ga = ev(lo)
        a, c = lo, hi
        lo_max, hi_max = ga <= 0, gc >= 0  # an end with an outward slope: a local maximum
        if lo_max or hi_max:
            converged = True
            if lo_max and (not hi_max or fa >= fc):
                bracket[:] = [lo, lo]
            else:
                bracket[:] = [hi, hi]
            return result()
        widths = [2.0 * (c - a), 2.0 * (c - a)]
        prev: tuple[float, float] | None = None  # the point evaluated before the last one
        last = (c, gc)
        x = float(x0) if x0 is not None and a < x0 < c else math.nan

        def on_piece(slope: float) -> bool:
            return lo_piece and lo_known is not None and slope == float(lo_known[1])

        if not math.isfinite(x) and first == "hermite" and not on_piece(ga):
            x = _hermite_max(a, fa, ga, c, fc, gc)
        state: dict = {}
        while c - a > tol:
            if not math.isfinite(x):
                x = _next_point(a, fa, ga, c, fc, gc, last, prev, widths, c - a, tol, state)
            fx, gx = ev(x)
            # which model of f' fits: where the slope changed a lot against the bracket
            # end on the same side, f' varies continuously (smooth: the secant next);
            # where it stayed (a piece of f with a constant slope), the end tangents meet
            # at the kink (the tangent step next)
            same = ga if gx > 0 else gc
            state["mode"] = "secant" if abs(gx) <= 0.6 * abs(same) else "tangent"
            # a slope a tenth of the last one: converging fast (from one side), no bisection
            state["fast"] = abs(gx) <= 0.1 * abs(last[1])
            # the end this point replaces moved at most half as far as its last move did
            side = "a" if gx > 0 else "c"
            move = abs(x - (a if side == "a" else c))
            if move <= 0.5 * state.get(f"move_{side}", math.inf):
                state["fast"] = True
            state[f"move_{side}"] = move
            if on_piece(gx):
                state["mode"] = "tangent"
            elif gx < 0 and on_piece(ga):
                state["mode"] = _first_from_the_right(a, fa, ga, x, fx, gx, last)
            probe = state.get("kind") == "probe"
            widths = [widths[1], c - a]
            prev, last = last, (x, gx)
            # slopes and values disagree (noisy multipliers near a kink of f): a point
            # with a positive slope but a lower value than the left end cannot be the new
            # left end of a bracket of a concave piece; trust the values
            if gx > 0 and fx < fa - value_tol:
                gx = -abs(gx)
            elif gx < 0 and fx < fc - value_tol:
                gx = abs(gx)
            if gx > 0:
                a, fa, ga = x, fx, gx
            elif gx < 0:
                c, fc, gc = x, fx, gx
            else:  # a stationary point of f: a local maximum inside the bracket
                a = c = x
            bracket[:] = [a, c]
            if probe and c - a > tol:
                # the probe did not collapse the bracket (noisy slopes, or a slope the
                # values overruled): a probe tol/2 further would move an end by tol/2
                # only, so bisect next
                state["failed_probe"] = True
            x = math.nan
        converged = True
    except _Budget:
        pass
    return result()


def _first_from_the_right(a: float, fa: float, ga: float, c: float, fc: float, gc: float,
                          last: tuple[float, float]) -> str:
    """The model of the next step while the left end ``a`` lies on the known linear piece
    and ``c`` (slope ``gc`` < 0) is the newest point: moving left from ``c``, the maximum
    is the first of two events, f' reaching 0 (a smooth maximum: the secant of f' through
    ``c`` and the point before it, ``last``) or f meeting the piece (a kink: where the
    piece and the tangent at ``c`` meet, which lies at or right of the kink, f being
    concave). ``"secant"`` when the secant's zero comes first (right of the meeting
    point, inside the bracket), else ``"tangent"`` (no second slope to extrapolate, or the
    piece comes first)."""
    meet = _tangents(a, fa, ga, c, fc, gc)
    if not (math.isfinite(last[1]) and last[1] != gc and last[0] != c):
        return "tangent"
    zero = c - gc * (c - last[0]) / (gc - last[1])
    return "secant" if math.isfinite(meet) and meet < zero < c else "tangent"


def _hermite_max(a: float, fa: float, ga: float, c: float, fc: float, gc: float) -> float:
    """The local maximiser inside ``(a, c)`` of the cubic with the ends' values and slopes
    (``nan`` if it has none there)."""
    h = c - a
    # p(t) = fa + h ga t + A t^2 + B t^3 on [0, 1], p(1) = fc, p'(1) = h gc
    A = 3.0 * (fc - fa) - h * (2.0 * ga + gc)
    B = h * (ga + gc) - 2.0 * (fc - fa)
    # p'(t) = h ga + 2 A t + 3 B t^2; a maximum where p'' = 2 A + 6 B t < 0
    roots = []
    if abs(B) > 1e-14 * (abs(A) + abs(h * ga)):
        disc = A * A - 3.0 * B * h * ga
        if disc >= 0:
            sq = math.sqrt(disc)
            roots = [(-A - sq) / (3.0 * B), (-A + sq) / (3.0 * B)]
    elif A != 0:
        roots = [-h * ga / (2.0 * A)]
    best = [t for t in roots if 0.0 < t < 1.0 and 2.0 * A + 6.0 * B * t < 0]
    return a + h * best[0] if best else math.nan


def _tangents(a: float, fa: float, ga: float, c: float, fc: float, gc: float) -> float:
    """Where the tangents of ``f`` at the bracket ends meet (``nan`` if parallel)."""
    if not ga > gc:
        return math.nan
    return (fc - fa + ga * a - gc * c) / (ga - gc)


def _next_point(a: float, fa: float, ga: float, c: float, fc: float, gc: float,
                last: tuple[float, float], prev: tuple[float, float] | None,
                widths: list[float], width: float, tol: float, state: dict) -> float:
    """The safeguarded tangent / secant step (Notes of :func:`maximize_with_slope`)."""
    kind = state.get("kind")
    if state.pop("failed_probe", False) or (kind in ("tangent", "secant") and width > 0.5
                                            * widths[0] and state.get("stalled")
                                            and not state.get("fast")):
        # a probe that did not collapse the bracket (noisy slopes), or the bracket not
        # halved over two steps in a row: bisect
        state["kind"], state["stalled"] = "bisection", False
        return 0.5 * (a + c)
    state["stalled"] = width > 0.5 * widths[0]
    model = state.get("mode", "tangent")
    x = math.nan
    state["kind"] = model
    if model == "tangent":
        x = _tangents(a, fa, ga, c, fc, gc)
    elif prev is not None and math.isfinite(prev[1]) and math.isfinite(last[1]) \
            and last[1] != prev[1]:
        x = last[0] - last[1] * (last[0] - prev[0]) / (last[1] - prev[1])
    if math.isfinite(x):  # a model estimate at (or beyond) an end counts as that end
        x = min(max(x, a), c)
    if not (a <= x <= c):  # regula falsi between the bracket ends
        x = a - ga * (c - a) / (gc - ga)
    near = min(abs(x - last[0]), x - a, c - x)
    if near < 0.5 * tol:
        # the estimate is within tol/2 of an evaluated point: probe tol/2 past it, into the
        # bracket, which collapses the bracket around the estimate
        ref = last[0] if abs(x - last[0]) == near else (a if x - a == near else c)
        x = x + 0.5 * tol if (x > ref or (x == ref and ref == a)) else x - 0.5 * tol
        state["kind"] = "probe"
    if not (a < x < c):
        x = 0.5 * (a + c)
    return x
