"""Shared benchmark harness: run a callable in a child process under a time limit.

A run that exceeds its limit is killed and recorded as ``TIMEOUT`` (never
hangs the benchmark); the machine description goes into every results file.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def _child(queue: mp.Queue, fn: Callable[..., Any], args: tuple) -> None:
    try:
        queue.put(("ok", fn(*args)))
    except Exception as exc:  # noqa: BLE001  (reported, not hidden)
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def run_with_limit(fn: Callable[..., Any], args: tuple, limit: float) -> tuple[str, Any, float]:
    """Run ``fn(*args)`` in a fresh process; returns (state, result, wall seconds).

    ``state`` is ``"ok"``, ``"error"`` (result = message) or ``"timeout"``.
    The child is *spawned*, not forked: a fork of a parent that already ran a
    multi-threaded solver (Clarabel, BLAS) can deadlock. ``fn`` must therefore
    be a module-level function and ``args`` picklable; time the work inside
    ``fn`` (the wall time returned here includes the child's start-up).
    """
    ctx = mp.get_context("spawn")
    queue: mp.Queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, fn, args))
    start = time.perf_counter()
    proc.start()
    deadline = start + limit
    result = None
    while time.perf_counter() < deadline:
        try:
            result = queue.get(timeout=0.05)
            break
        except Exception:  # noqa: BLE001  (queue.Empty)
            if not proc.is_alive() and queue.empty():
                break
    wall = time.perf_counter() - start
    if result is None:
        proc.kill()
        proc.join()
        return "timeout", None, wall
    proc.join()
    return result[0], result[1], wall


def write_results(name: str, text: str, quick: bool = False) -> Path:
    """Write a results table to ``benchmarks/results/<name>.md``.

    A ``--quick`` smoke run writes ``<name>_quick.md`` beside it, so it never
    overwrites the recorded full run.
    """
    out = Path(__file__).parent / "results" / f"{name}{'_quick' if quick else ''}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return out


def machine() -> str:
    """One line describing the machine the benchmark ran on."""
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"numpy {np.__version__}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def shifted_geometric_mean(times: list[float], shift: float = 10.0) -> float:
    """Shifted geometric mean (qpbenchmark's summary statistic)."""
    t = np.asarray(times, dtype=float)
    return float(np.exp(np.mean(np.log(t + shift))) - shift)
