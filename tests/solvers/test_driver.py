"""Unit tests of the shared driver of the iterative solvers (:mod:`conicml.solvers._driver`).

The step under test is the halving iteration x <- x / 2 from x = 1 with residual |x|:
its residual after k steps is 2**-k exactly, so the iteration at which each stop rule
fires is known in closed form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conicml.exceptions import OptionError
from conicml.solution import Status
from conicml.solvers._callback import Recorder
from conicml.solvers._driver import Driver, Reason, Stall, Stop, message_table, status_table
from conicml.solvers._report import IterationReport

MESSAGES = message_table("converged: |x| <= tol",
                         {int(Reason.STALLED): "stalled after {window} iterations", 5: "own"})


def _driver(**options) -> Driver:
    options = {"tol": 1e-3, "max_iter": 100, "time_limit": None, "messages": MESSAGES,
               **options}
    return Driver("halving", **options).start()


def _halving(state: dict):
    def step(k: int) -> float:
        state["x"] /= 2.0
        return abs(state["x"])
    return step


def test_tables_share_the_limits_and_keep_a_solvers_own_entries():
    assert MESSAGES[Reason.MAX_ITER] == "maximum number of iterations reached (max_iter)"
    assert MESSAGES[Reason.TIME_LIMIT] == "time limit reached (time_limit)"
    assert MESSAGES[Reason.CALLBACK] == "stopped by the callback"
    assert MESSAGES[5] == "own"
    statuses = status_table({5: Status.UNBOUNDED})
    assert statuses[Reason.CONVERGED] is Status.OPTIMAL
    assert all(statuses[r] is Status.USER_LIMIT for r in (1, 2, 3, 4))
    assert statuses[5] is Status.UNBOUNDED


def test_run_converges_at_the_first_residual_below_tol():
    state = {"x": 1.0}
    reason, k, residual = _driver().run(_halving(state), residual=1.0)
    # 2**-10 = 9.8e-4 is the first power of two <= 1e-3
    assert (reason, k, residual) == (Reason.CONVERGED, 10, 2.0**-10)


def test_run_stops_at_max_iter_and_allows_zero_iterations():
    reason, k, _ = _driver(max_iter=4).run(_halving({"x": 1.0}), residual=1.0)
    assert (reason, k) == (Reason.MAX_ITER, 4)
    reason, k, _ = _driver(max_iter=0, allow_zero=True).run(_halving({"x": 1.0}), 1.0)
    assert (reason, k) == (Reason.MAX_ITER, 0)
    with pytest.raises(OptionError, match="max_iter must be an integer >= 1"):
        _driver(max_iter=0)


def test_time_limit_reads_the_clock_from_start():
    ticks = iter(range(100))
    driver = _driver(time_limit=2.5, clock=lambda: float(next(ticks)))
    # start() read 0 (after construction's read); each limit check reads one tick more
    reason, k, _ = driver.run(_halving({"x": 1.0}), residual=1.0)
    assert (reason, k) == (Reason.TIME_LIMIT, 2)
    with pytest.raises(OptionError, match="time_limit"):
        _driver(time_limit=0)


def test_callback_stopiteration_and_recorder():
    rec = Recorder(max_iter=3)
    state = {"x": 1.0}
    driver = _driver(callback=rec)
    assert driver.listening
    reason, k, _ = driver.run(_halving(state), 1.0, values=lambda: {"x": state["x"]})
    assert (reason, k) == (Reason.CALLBACK, 3)
    assert [r.iteration for r in rec.results] == [1, 2, 3]
    assert [r.values["x"] for r in rec.results] == [0.5, 0.25, 0.125]
    assert rec.results[-1].residual == 0.125


def test_legacy_callback_is_called_the_old_way_with_a_future_warning():
    seen = []

    def old(k, x):  # the signature of a solver before 0.2: returning True stops
        seen.append((k, x))
        return k >= 2

    state = {"x": 1.0}
    with pytest.warns(FutureWarning, match=r"callback\(intermediate_result\)"):
        driver = _driver(callback=old, legacy=lambda r: (r.iteration, r.values["x"]))
    reason, k, _ = driver.run(_halving(state), 1.0, values=lambda: {"x": state["x"]})
    assert (reason, k, seen) == (Reason.CALLBACK, 2, [(1, 0.5), (2, 0.25)])
    with pytest.raises(OptionError, match="callback must be callable"):
        _driver(callback=3)


def test_a_step_ends_the_run_with_its_own_reason():
    def step(k: int) -> float:
        if k == 2:
            raise Stop(5)
        return 1.0

    assert _driver().run(step, residual=1.0) == (5, 2, 1.0)


def test_stall_window_on_the_iterate_and_on_a_scalar():
    x = np.array([1.0, 2.0])
    stall = Stall(window=10, step=1e-6, x=x)
    assert not stall.due(9) and stall.due(10)
    assert not stall.stalled(10, x + 1e-3, residual=1.0, tol=1e-3)  # moved: new window
    assert stall.start == 10 and not stall.due(19)
    assert stall.stalled(20, x + 1e-3 + 1e-7, residual=1.0, tol=1e-3)
    assert not stall.stalled(20, x + 1e-3, residual=1e-4, tol=1e-3)  # converged: no stall
    rising = Stall(window=5, step=0.0, x=1.0, measure=lambda old, new: new - old)
    assert rising.stalled(5, 0.5, residual=1.0, tol=0.1)  # the objective fell


def test_finish_demotes_an_uncertified_optimal_and_fills_slots():
    driver = _driver()
    assert driver.finish(Reason.CONVERGED) == (Status.OPTIMAL, "converged: |x| <= tol")
    status, message = driver.finish(Reason.CONVERGED, certified=False, why="gap 0.1 > 0.01")
    assert status is Status.OPTIMAL_INACCURATE
    assert message == "not certified: gap 0.1 > 0.01; converged: |x| <= tol"
    # a limit is never OPTIMAL, certified or not
    assert driver.finish(Reason.MAX_ITER, certified=False)[0] is Status.USER_LIMIT
    assert driver.finish(Reason.STALLED, window=7) == (Status.USER_LIMIT,
                                                       "stalled after 7 iterations")


def test_report_prints_the_preamble_the_header_and_rows(capsys):
    class Table(IterationReport):
        COLUMN_NAMES = ["iter", "x"]
        COLUMN_WIDTHS = [6, 10]
        ITERATION_FORMATS = ["^6", "^10.2e"]

    driver = Driver("halving", tol=1e-3, max_iter=5, time_limit=None, messages=MESSAGES,
                    report=Table).start("halving: x0 = 1")
    driver.row(1, 0.5)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "halving: x0 = 1"
    assert lines[1] == "| iter |    x     |"
    assert lines[2] == "|------|----------|"
    assert lines[3] == "|  1   | 5.00e-01 |"
    quiet = _driver()
    quiet.row(1, 0.5)
    assert capsys.readouterr().out == ""


def test_nan_residual_never_converges():
    assert not _driver().converged(math.nan)
    assert _driver().converged(1e-3)


def test_out_of_time_alone_and_int_keys_in_the_tables():
    ticks = iter([0.0, 0.0, 1.0, 3.0])
    driver = _driver(time_limit=2.0, clock=lambda: next(ticks))
    assert not driver.out_of_time()  # 1 s after start
    assert driver.out_of_time()  # 3 s after start
    assert not _driver().out_of_time()  # no time limit
    # a solver's own reasons may be given as Reason members: the keys stay plain ints
    assert all(type(key) is int for key in MESSAGES)
    assert all(type(key) is int for key in status_table({Reason.STALLED: Status.UNBOUNDED}))
