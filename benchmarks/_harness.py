"""Shared benchmark harness: run a callable in a child process under a time limit.

A run that exceeds its limit is killed and recorded as ``TIMEOUT`` (never
hangs the benchmark); the machine description goes into every results file.
The child-process runner, the results writer and the machine line are the
reproductions' (:mod:`conicml.reproductions._harness`), so benchmarks and
``conicml reproduce`` time and record runs the same way.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml._utils.provenance import provenance_header  # noqa: E402
from conicml.reproductions._harness import machine, run_with_limit  # noqa: E402

__all__ = ["cpu_seconds", "machine", "peak_rss_mb", "provenance_header", "rss_mb",
           "run_with_limit", "shifted_geometric_mean", "write_results"]


#: Where the recorded results live (one file per benchmark script).
RESULTS = Path(__file__).parent / "results"


def write_results(name: str, text: str, quick: bool = False, *,
                  section: str | None = None) -> Path:
    """Write a results table to ``benchmarks/results/<name>.md``, under a fixed header.

    One results file per benchmark script. The default run is the file's main part; a
    study of the same script with other options is a ``section`` of it (one
    ``## <section>`` each, replaced in place on a re-run, the rest of the file kept). Each
    part opens with :func:`provenance_header` (command, commit, CPU, cores, load average,
    date). A ``--quick`` smoke run writes ``<name>_quick.md`` beside it (not tracked), so
    it never overwrites the recorded run.
    """
    out = RESULTS / f"{name}{'_quick' if quick else ''}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    block = provenance_header() + "\n" + text.rstrip("\n") + "\n"
    main, sections = _read_parts(out)
    if section is None:
        main = block
    else:
        sections[section] = block
    parts = [main] if main else []
    parts += [f"{_MARK.format(key)}\n## {key}\n\n{body}" for key, body in sections.items()]
    out.write_text("\n".join(parts))
    return out


#: The line that opens each section of a results file (a heading alone would be
#: ambiguous: the tables' own text may hold headings).
_MARK = "<!-- section: {} -->"


def _read_parts(path: Path) -> tuple[str, dict[str, str]]:
    """The main part and the sections (in file order) of a results file."""
    if not path.exists():
        return "", {}
    head, tail = _MARK.split("{}")
    main, sections, key = "", {}, None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith(head) and line.rstrip().endswith(tail):
            key = line.strip()[len(head):-len(tail)]
            sections[key] = ""
        elif key is None:
            main += line
        else:
            sections[key] += line
    for key, body in sections.items():  # drop the "## <key>" written under each mark
        body = body.split("\n", 1)[1] if body.startswith(f"## {key}\n") else body
        sections[key] = body.strip("\n") + "\n"
    return main.strip("\n") + "\n" if main.strip() else "", sections


def shifted_geometric_mean(times: list[float], shift: float = 10.0) -> float:
    """Shifted geometric mean (qpbenchmark's summary statistic)."""
    t = np.asarray(times, dtype=float)
    return float(np.exp(np.mean(np.log(t + shift))) - shift)


def cpu_seconds() -> float:
    """This process's CPU time (user + system, all threads), s."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rss_mb() -> float:
    """This process's resident set (VmRSS), MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024.0
    return float("nan")


def peak_rss_mb() -> float:
    """This process's peak RSS, MB: VmHWM, reset at exec (unlike ``ru_maxrss``, which a
    Dask worker process may inherit from the process that started it); ``ru_maxrss``
    where /proc is absent."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
