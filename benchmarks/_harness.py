"""Shared benchmark harness: run a callable in a child process under a time limit.

A run that exceeds its limit is killed and recorded as ``TIMEOUT`` (never
hangs the benchmark); the machine description goes into every results file.
The child-process runner, the results writer and the machine line are the
reproductions' (:mod:`conicml.reproductions._harness`), so benchmarks and
``conicml reproduce`` time and record runs the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions._harness import machine, run_with_limit  # noqa: E402

__all__ = ["machine", "run_with_limit", "shifted_geometric_mean", "write_results"]


def write_results(name: str, text: str, quick: bool = False) -> Path:
    """Write a results table to ``benchmarks/results/<name>.md``.

    A ``--quick`` smoke run writes ``<name>_quick.md`` beside it, so it never
    overwrites the recorded full run.
    """
    out = Path(__file__).parent / "results" / f"{name}{'_quick' if quick else ''}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return out


def shifted_geometric_mean(times: list[float], shift: float = 10.0) -> float:
    """Shifted geometric mean (qpbenchmark's summary statistic)."""
    t = np.asarray(times, dtype=float)
    return float(np.exp(np.mean(np.log(t + shift))) - shift)
