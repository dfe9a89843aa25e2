"""``envelope-newton`` (issue 14): the secant on G'(rho) with envelope slopes.

Checked against (1) closed forms for the 1-D search itself, (2) central finite
differences of G computed by a generic backend (the envelope slope), and (3) the
value-only searches ``quadratic-interpolation`` and ``brent`` over clarabel and ecos
inner SOCPs on random and structured instances: linear and kernel, separable and not,
with and without the reduction (4.36) -- the same local maximum (G(rho*), rho*, the
decoded (w, b), the recomputed certificate) with fewer SOCP solves.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import conicml as cm
from conicml.exceptions import OptionError
from conicml.formulations import m4
from conicml.solvers._m4_inner import InnerSolver, point
from conicml.solvers._m4_search import envelope_slope
from conicml.solvers._slope_search import NoSlope, maximize_with_slope

from tolerances import obj_rtol, sol_atol

T2_X = np.array([(1, 0), (3, 0.5), (5, -0.5), (2, 1), (4, -1), (6, 0),
                 (-1, 0), (-1.3, 0.4), (-1.2, -0.4), (-1.6, 0.1), (-1.4, -0.2), (-1.1, 0.3)],
                dtype=float)
T2_Y = np.r_[np.ones(6), -np.ones(6)]


# ---- the 1-D search on closed forms --------------------------------------------------------

def _counted(fun):
    calls = []

    def f(x):
        calls.append(x)
        return fun(x)
    return f, calls


@pytest.mark.parametrize("xstar", [0.37, 1.3, 3.999])
def test_slope_search_smooth_maximum(xstar):
    # f = -(x - x*)^4 - (x - x*)^2: smooth, the maximum at x* (closed form)
    f, calls = _counted(lambda x: (-(x - xstar) ** 4 - (x - xstar) ** 2,
                                   -4 * (x - xstar) ** 3 - 2 * (x - xstar)))
    res = maximize_with_slope(f, 0.0, 4.0, tol=1e-9)
    assert res.converged
    assert res.x == pytest.approx(xstar, abs=1e-9)
    assert res.bracket[0] <= xstar <= res.bracket[1]
    assert res.bracket[1] - res.bracket[0] <= 1e-9
    assert len(calls) <= 16  # bisection alone would need ~32


def test_slope_search_kink_maximum():
    # f = min(2x, 3 - x) has a kink at x = 1, where f' jumps from 2 to -1 (closed form)
    res = maximize_with_slope(lambda x: (min(2 * x, 3 - x), 2.0 if 2 * x < 3 - x else -1.0),
                              0.0, 5.0, tol=1e-10, max_iter=80)
    assert res.converged
    assert res.x == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_slope_search_domain_ends(sign):
    # a monotone function: the maximum at the end its slope points to, in two evaluations
    f, calls = _counted(lambda x: (sign * x, sign))
    res = maximize_with_slope(f, 0.0, 2.0)
    assert res.converged and len(calls) == 2
    assert res.x == (2.0 if sign > 0 else 0.0)


def test_slope_search_budget_and_errors():
    res = maximize_with_slope(lambda x: (-(x - 1.0) ** 4, -4 * (x - 1.0) ** 3), 0.0, 3.0,
                              tol=1e-14, max_iter=3)
    assert not res.converged and res.n_evals == 3
    with pytest.raises(NoSlope):
        maximize_with_slope(lambda x: (x, math.nan), 0.0, 1.0)
    with pytest.raises(OptionError):
        maximize_with_slope(lambda x: (x, 1.0), 1.0, 0.0)
    with pytest.raises(OptionError):
        maximize_with_slope(lambda x: (x, 1.0), 0.0, 1.0, max_iter=2)


def test_slope_search_flat_top_with_value_noise():
    # f = -k((x-1)^2 + |x-1|^3 + (x-1)^4), k = 1e-6: a flat top at x = 1 (closed form), with
    # exact slopes but values carrying a downward drift of 1e-11 x (the noise of values
    # computed by an inner solver), so that near the top a point right of the left end looks
    # lower than it. Trusting those values over the slopes brackets a point the noise
    # prefers, off the top (a probe the values overrule no longer crawls: the next step
    # bisects); with value_tol the slopes decide there and the bracket holds the top.
    k, drift = 1e-6, 1e-11
    exact = lambda x: -k * ((x - 1) ** 2 + abs(x - 1) ** 3 + (x - 1) ** 4)  # noqa: E731
    fun = lambda x: (exact(x) - drift * x,  # noqa: E731
                     -k * (2 * (x - 1) + 3 * (x - 1) * abs(x - 1) + 4 * (x - 1) ** 3))
    misled = maximize_with_slope(fun, 0.0, 1.7, tol=1e-8, max_iter=60)
    assert misled.converged and misled.n_evals < 60
    assert not misled.bracket[0] - 1e-8 <= 1.0 <= misled.bracket[1] + 1e-8
    res = maximize_with_slope(fun, 0.0, 1.7, tol=1e-8, max_iter=60, value_tol=1e-8)
    assert res.converged and res.n_evals <= 20
    assert res.bracket[0] - 1e-8 <= 1.0 <= res.bracket[1] + 1e-8
    assert res.bracket[1] - res.bracket[0] <= 1e-8
    assert exact(res.x) >= -1e-10  # the returned point is as good as the noise allows
    with pytest.raises(OptionError):
        maximize_with_slope(fun, 0.0, 1.7, value_tol=-1.0)


def test_slope_search_bisects_after_a_probe_the_values_overrule():
    # f = -k (x - 0.6)^2 (k = 0.01, maximum at 0.6), its slope biased by -1e-12, and the
    # values left of 0.6 - 1e-4 raised by 1e-8 (an inner solver's noise, > value_tol): from
    # x0 = 0.5998 the secant lands on the top, the next estimate is within tol/2 of it, and
    # the probe tol/2 to its left has a positive slope but a value below the left end's, so
    # the values overrule it and the bracket shrinks by tol/2 only. Counted as a probe that
    # collapsed the bracket, that repeated until the budget ran out (a kernel M4 fold on
    # twonorm, 60 SOCPs); counted as failed, the next step bisects.
    k = 0.01

    def fun(x):
        t = x - 0.6
        return -k * t * t + (1e-8 if t < -1e-4 else 0.0), -2 * k * t - 1e-12

    res = maximize_with_slope(fun, 0.0, 1.0, tol=1e-8, max_iter=60, value_tol=1e-9,
                              x0=0.5998)
    assert res.converged and res.n_evals <= 20
    assert res.bracket[1] - res.bracket[0] <= 1e-8
    # the best value is the noise's (a point left of 0.6 - 1e-4), within 1e-8 of the top
    assert res.fun >= -k * 1e-8 and res.x <= 0.6


def test_default_m4_converges_on_a_flat_maximum():
    # the sonar fold where the default route (envelope-newton over m4-ipm) used to end at
    # max_iter: it must converge, certified, to the G(rho*) of the clarabel inner route
    # (an independent interior-point solver) within the searches' objective tolerance
    from sklearn.model_selection import StratifiedKFold

    from conicml.estimators import M4Classifier

    X, y = cm.datasets.load("sonar")
    train = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))[1][0]
    fits = {inner: M4Classifier(inner=inner).fit(X[train], y[train]).solution_
            for inner in ("auto", "clarabel")}
    auto, ref = fits["auto"], fits["clarabel"]
    assert auto.status is cm.Status.OPTIMAL and ref.status is cm.Status.OPTIMAL
    # OPTIMAL means certified: conicml's recomputed certificate of the inner SOCP at rho*
    # passes the searches' certify_tol
    assert auto.residuals.source == "recomputed" and auto.residuals.max() <= 1e-4
    assert auto.iterations <= 20
    assert auto.objective == pytest.approx(ref.objective, rel=1e-7)


# ---- the envelope slope against finite differences of G ------------------------------------

@pytest.mark.parametrize("inner", ["clarabel", "ecos"])
@pytest.mark.parametrize("case", ["linear", "kernel", "reduced"])
def test_envelope_slope_matches_finite_differences(case, inner):
    X, y = cm.datasets.twonorm(60, dim=3, random_state=3)
    if case == "linear":
        prog = m4.m4(X, y, C=0.5)
    elif case == "kernel":
        prog = m4.m4(X, y, C="auto", kernel="rbf", gamma=0.5, ridge=1e-2)
    else:
        prog = m4.m4(X, y, C=0.5, reduction=0.3)
    data, C = prog.data, prog.data["C"]
    checker = InnerSolver(prog, inner)
    kappa, _ = checker.kappa_mpm()

    def G(rho):
        sol = checker.check(rho)
        w, b = point(sol)
        scale = float(data["d"] @ w)
        w, b = w / scale, b / scale
        return rho - C * data["m4"].slack_total(w, b, rho), \
            1.0 - C * envelope_slope(data["m4"], sol, w)

    for frac in (0.3, 0.7):
        rho, delta = frac * kappa, 1e-4 * kappa
        value, slope = G(rho)
        fd = (G(rho + delta)[0] - G(rho - delta)[0]) / (2 * delta)
        # central difference: O(delta^2) where G is smooth, plus the inner accuracy / delta
        assert slope == pytest.approx(fd, abs=1e-3 * max(1.0, abs(fd)))


# ---- the same local maximum as the value-only searches --------------------------------------

def _overlapping(seed):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(25, 2)) @ np.array([[1.5, 0.3], [0.0, 0.6]]) + 0.8,
                   rng.normal(size=(30, 2)) * 0.9 - 0.5])
    return X, np.r_[np.ones(25), -np.ones(30)]


CASES = {
    "T2 C=100": lambda: m4.m4(T2_X, T2_Y, 100.0),
    "T2 C=1": lambda: m4.m4(T2_X, T2_Y, 1.0),
    "T2 reduction=1": lambda: m4.m4(T2_X, T2_Y, 1.0, reduction=1.0),
    "overlapping C=0.05": lambda: m4.m4(*_overlapping(0), 0.05),
    "overlapping C=auto": lambda: m4.m4(*_overlapping(1), "auto"),
    "overlapping reduction=0.4": lambda: m4.m4(*_overlapping(2), 0.05, reduction=0.4),
    "twonorm rbf C=auto": lambda: m4.m4(*cm.datasets.twonorm(60, dim=4, random_state=7), "auto",
                                        kernel="rbf", ridge=1e-3),
    "ringnorm rbf C=auto": lambda: m4.m4(*cm.datasets.ringnorm(60, dim=4, random_state=8), "auto",
                                         kernel="rbf", ridge=1e-3),
    "twonorm rbf reduction=0.5": lambda: m4.m4(*cm.datasets.twonorm(50, dim=4, random_state=9),
                                               0.02, kernel="rbf", ridge=1e-2, reduction=0.5),
}


@pytest.mark.parametrize("inner", ["clarabel", "ecos"])
@pytest.mark.parametrize("name", list(CASES))
def test_envelope_newton_agrees_with_value_searches(name, inner):
    prog = CASES[name]()
    ref = cm.solve(prog, "quadratic-interpolation", inner=inner)
    brent = cm.solve(prog, "brent", inner=inner)
    sol = cm.solve(prog, "envelope-newton", inner=inner)
    assert sol.status is ref.status is cm.Status.OPTIMAL, sol.message
    assert sol.residuals.source == "recomputed"
    assert sol.residuals.max() <= 1e-4  # the registry's certify_tol of the soft M4 searches
    tol_G = max(obj_rtol("envelope-newton"), obj_rtol("brent") if inner == "ecos" else 0.0)
    assert sol.objective == pytest.approx(ref.objective, rel=tol_G, abs=tol_G)
    assert sol.objective >= brent.objective - obj_rtol("brent") * max(1.0, abs(brent.objective))
    a, b_ = prog.decode(sol), prog.decode(ref)
    assert a["rho"] == pytest.approx(b_["rho"], rel=1e-4, abs=1e-6)
    key = "w" if "w" in a else "v"
    np.testing.assert_allclose(a[key], b_[key], atol=sol_atol("envelope-newton"))
    assert a["b"] == pytest.approx(b_["b"], abs=sol_atol("envelope-newton"))
    assert sol.iterations <= ref.iterations


def test_envelope_newton_options_and_limits():
    prog = CASES["overlapping C=auto"]()
    seen = []

    def callback(result):
        seen.append(result.iteration)
        if result.iteration >= 3:
            raise StopIteration
    sol = cm.solve(prog, "envelope-newton", callback=callback)
    assert sol.status is cm.Status.USER_LIMIT and seen == [1, 2, 3]
    sol = cm.solve(prog, "envelope-newton", max_iter=3)
    assert sol.status is cm.Status.USER_LIMIT and sol.iterations == 3
    with pytest.raises(OptionError):
        cm.solve(prog, "envelope-newton", tol=-1.0)
    with pytest.raises(OptionError):
        cm.solve(prog, "envelope-newton", inner="osqp")


# ---- rho = 0 known in closed form (kernel programs) -----------------------------------------

def test_slope_search_uses_a_known_low_end():
    # f = -(x - 1)^2 on [0, 3]: f(0) = -1, f'(0) = 2 given, never evaluated
    seen = []

    def f(x):
        seen.append(x)
        return -(x - 1.0) ** 2, -2.0 * (x - 1.0)

    res = maximize_with_slope(f, 0.0, 3.0, tol=1e-9, lo_known=(-1.0, 2.0))
    assert res.converged and res.x == pytest.approx(1.0, abs=1e-8)
    assert 0.0 not in seen
    # a known end without a positive slope is evaluated as before
    seen.clear()
    maximize_with_slope(f, 0.0, 3.0, tol=1e-6, lo_known=(-1.0, 0.0))
    assert 0.0 in seen


def test_slope_search_first_step_from_the_ends_cubic():
    # f = -(x - 1)^2: the cubic Hermite interpolant of the ends is f itself, so the first
    # interior point is the maximiser; the tangents meet elsewhere (at 1.5 here)
    seen = []

    def f(x):
        seen.append(x)
        return -(x - 1.0) ** 2, -2.0 * (x - 1.0)

    res = maximize_with_slope(f, 0.0, 3.0, tol=1e-9, first="hermite")
    assert seen[2] == pytest.approx(1.0, abs=1e-12)
    assert res.converged and res.x == pytest.approx(1.0, abs=1e-8)
    seen.clear()
    maximize_with_slope(f, 0.0, 3.0, tol=1e-9)
    assert seen[2] == pytest.approx(1.5)  # where the tangents -1 + 2x and 8 - 4x meet


def test_kernel_m4_skips_rho_zero_with_the_same_maximum(monkeypatch):
    from conicml.contracts.m4 import M4Data

    X, y = cm.datasets.twonorm(80, dim=5, random_state=2)
    base = m4.m4(X, y, "auto", kernel="rbf", ridge=1e-3)
    # 5 x auto C: a maximum inside (0, kappa*), so the search brackets it from rho = 0
    prog = m4.m4(X, y, 5.0 * float(base.data["C"]), kernel="rbf", ridge=1e-3)
    assert prog.data["m4"].strictly_separable()
    assert not m4.m4(X, y, 0.5).data["m4"].strictly_separable()  # linear: not shown
    # the claim h = 0 next to 0, by an independent solver (Clarabel's slack SOCP)
    checker = InnerSolver(prog, "clarabel")
    kappa, _ = checker.kappa_mpm()
    for rho in (0.0, 1e-4 * kappa):
        w, b = point(checker.check(rho))
        scale = float(prog.data["d"] @ w)
        assert prog.data["m4"].slack_total(w / scale, b / scale, rho) <= 1e-8
    sol = cm.solve(prog, "envelope-newton")
    monkeypatch.setattr(M4Data, "strictly_separable", lambda self: False)
    ref = cm.solve(prog, "envelope-newton")  # the former search, which evaluates rho = 0
    for s in (sol, ref):
        assert s.status is cm.Status.OPTIMAL, s.message
    assert 0.0 < float(sol.values["rho"]) < kappa
    assert 0.0 in [r for r, _ in ref.history] and 0.0 not in [r for r, _ in sol.history]
    assert sol.iterations <= ref.iterations  # (and its first step from the ends' cubic)
    # the same maximum: G to the searches' objective tolerance, rho* to the slopes' noise
    # at a flat maximum (as test_envelope_newton_agrees_with_value_searches)
    assert float(sol.values["rho"]) == pytest.approx(float(ref.values["rho"]), rel=1e-6)
    assert sol.objective == pytest.approx(ref.objective, rel=obj_rtol("envelope-newton"))
    # and the generic route (quadratic interpolation over Clarabel) finds the same maximum
    gen = cm.solve(prog, "quadratic-interpolation", inner="clarabel")
    assert sol.objective == pytest.approx(gen.objective, rel=obj_rtol("envelope-newton"))


@pytest.mark.parametrize("curvature", [0.0, 3.0, 40.0])
def test_slope_search_kink_after_a_known_linear_piece(curvature):
    # the soft M4's shape where h leaves 0: f(x) = x up to the kink x* = 1.3 (zero slack,
    # slope exactly 1, as lo_known says), then x - 5 (x - x*) - k (x - x*)^2, concave and
    # decreasing: the maximum is the kink (closed form). With lo_piece the left end on the
    # piece is modelled by the piece itself, so the steps are Newton's on the kink from the
    # right (no secant of f' across the kink, no cubic through it) and the right end's
    # shrinking moves count as progress (no bisections while it closes in).
    xstar = 1.3

    def fun(x):
        if x <= xstar:
            return x, 1.0
        t = x - xstar
        return x - 5.0 * t - curvature * t * t, -4.0 - 2.0 * curvature * t

    runs = _evaluations_with_and_without_the_piece(fun, xstar)
    assert runs[True] <= 11  # bisection alone would need ~32
    assert runs[True] < runs[False]


@pytest.mark.parametrize("curvature", [2.0, 8.0, 40.0])
def test_slope_search_smooth_maximum_after_a_known_linear_piece(curvature):
    # f(x) = x up to x0 = 1 (the zero-slack piece), then x - k (x - x0)^2: concave, f'
    # continuous, a smooth maximum at x0 + 1 / (2k) (closed form), away from the piece.
    # With the left end on the piece, the step from the right is the secant of f' when
    # its zero comes before the piece (moving left), as here, else Newton's on the kink:
    # no more evaluations than without lo_piece, and the maximum is found to tol.
    x0 = 1.0
    xmax = x0 + 0.5 / curvature

    def fun(x):
        if x <= x0:
            return x, 1.0
        t = x - x0
        return x - curvature * t * t, 1.0 - 2.0 * curvature * t

    runs = _evaluations_with_and_without_the_piece(fun, xmax)
    # 5 / 7 / 10 evaluations against 5 / 11 / 21 without the piece (6 / 8 / 11 when every
    # step from the right was Newton's on the kink)
    assert runs[True] <= runs[False], runs


def _evaluations_with_and_without_the_piece(fun, xmax: float) -> dict[bool, int]:
    """``maximize_with_slope`` of ``fun`` on [0, 4] from the known piece (0, slope 1), with
    and without ``lo_piece``: each converges to ``xmax`` (bracketed); its evaluations."""
    runs = {}
    for piece in (False, True):
        f, calls = _counted(fun)
        res = maximize_with_slope(f, 0.0, 4.0, tol=1e-9, lo_bound=0.0, lo_known=(0.0, 1.0),
                                  first="hermite", lo_piece=piece)
        assert res.converged
        assert res.x == pytest.approx(xmax, abs=1e-9)
        assert res.bracket[0] - 1e-9 <= xmax <= res.bracket[1] + 1e-9
        runs[piece] = len(calls)
    return runs
