"""What every reproduction shares: a time limit per run, where tables go, the machine line.

:func:`run_with_limit` is the benchmarks' harness (``benchmarks/_harness.py``) for the
package: a run past its limit is killed and recorded as ``timeout``. :func:`write_results`
writes a table to :func:`results_dir` and remembers the path, so that the runner
(:func:`conicml.reproductions.run`) can print the thesis's numbers beside ours and draw
the figure of what a reproduction wrote.
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

from .._utils.code_sampler import flush_if_sampled
from .._utils.progress import progress  # the bar of every reproduction's main loop

__all__ = ["WRITTEN", "machine", "progress", "results_dir", "run_with_limit",
           "set_results_dir", "write_results"]

#: Paths written by :func:`write_results` in this process, in order.
WRITTEN: list[Path] = []


def _child(queue: mp.Queue, fn: Callable[..., Any], args: tuple) -> None:
    try:
        result = ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001  (reported, not hidden)
        result = ("error", f"{type(exc).__name__}: {exc}")
    flush_if_sampled()  # the code this run spent its time in, for a record's header
    queue.put(result)


def run_with_limit(fn: Callable[..., Any], args: tuple, limit: float) -> tuple[str, Any, float]:
    """Run ``fn(*args)`` in a fresh *spawned* process; returns (state, result, wall seconds).

    ``state`` is ``"ok"``, ``"error"`` (result = message) or ``"timeout"`` (the child is
    killed at ``limit`` seconds). Spawned, not forked: a fork of a parent that already ran
    a multi-threaded solver can deadlock; ``fn`` must be a module-level function.
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


#: Where :func:`write_results` writes, when the runner has chosen (``--out``, ``--record``).
_OUT: Path | None = None


def set_results_dir(path: Path | None) -> None:
    """Make :func:`results_dir` return ``path`` (``None``: back to the default)."""
    global _OUT
    _OUT = None if path is None else Path(path)


def results_dir() -> Path:
    """Where tables go: the runner's choice (``--out DIR``, or the records under
    ``--record``), else ``$CONICML_RESULTS_DIR``, else ``./conicml-results/`` in the
    working directory (never the installed package or the checkout)."""
    if _OUT is not None:
        return _OUT
    env = os.environ.get("CONICML_RESULTS_DIR")
    if env:
        return Path(env)
    return Path.cwd() / "conicml-results"


def write_results(name: str, text: str, quick: bool = False) -> Path:
    """Write a table to ``<results_dir>/<name>.md`` (``<name>_quick.md`` for a smoke run,
    so it never overwrites the recorded full run)."""
    out = results_dir() / f"{name}{'_quick' if quick else ''}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    WRITTEN.append(out)
    return out


def machine() -> str:
    """One line describing the machine the reproduction ran on."""
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"numpy {np.__version__}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
