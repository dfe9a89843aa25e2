"""Where a recorded number came from: the command, the commit, the machine and its load.

Every results file of ``benchmarks/`` (and every reproduction record) opens with these
fields, so that a number can be traced to the code and the conditions that produced it.
The load average does not see the other tenants of a shared host, so the header also
carries a short probe of the host's speed at record time (:func:`host_speed`).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["RECORDS_PATH", "host_speed", "provenance", "provenance_header"]

#: Where a checkout keeps its recorded results (benchmarks' and reproductions'), relative
#: to its root.
RECORDS_PATH = "benchmarks/results"


def _git(*args: str, cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                             timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _cpuinfo(key: str) -> str | None:
    """The value of the first ``key`` line of ``/proc/cpuinfo``; ``None`` where there is none
    (not Linux, or no such line)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    return _cpuinfo("model name") or platform.processor() or platform.machine()


def host_speed(loop: int = 1_000_000, size: int = 1000, repeat: int = 3) -> str:
    """A ~0.3 s probe of the host's speed: interpreted and BLAS throughput, best of ``repeat``.

    Two numbers that a load average cannot give on a virtual machine whose physical host is
    shared: the rate of a pure-Python ``for`` loop with one integer addition (millions of
    iterations per second, one core) and the float64 matrix product of two ``size`` x
    ``size`` matrices (``2 size^3`` flops, GFLOP/s on the default BLAS threads); on x86
    Linux, whether the CPU has AVX-512 (:func:`_vector_units`). Runs of the
    same code on hosts whose probes differ are not comparable in seconds, only in ratios
    measured in the same run.
    """
    rate = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        total = 0
        for i in range(loop):
            total += i
        rate = max(rate, loop / (time.perf_counter() - start))
    a = np.random.default_rng(0).standard_normal((size, size))
    gemm = np.inf
    for _ in range(repeat + 1):  # the first product also warms the BLAS threads up
        start = time.perf_counter()
        a @ a
        gemm = min(gemm, time.perf_counter() - start)
    return (f"Python loop {rate / 1e6:.1f} M iterations/s, float64 matrix product "
            f"(n = {size}) {2.0 * size**3 / gemm / 1e9:.0f} GFLOP/s{_vector_units()}")


def _vector_units() -> str:
    """``", AVX-512 yes|no"`` on x86 Linux, else ``""``: without AVX-512 NumPy's float64
    ``exp`` and ``log`` run one element at a time (several times slower on kernel matrices)."""
    flags = _cpuinfo("flags")
    return "" if flags is None else f", AVX-512 {'yes' if 'avx512f' in flags.split() else 'no'}"


def provenance(command: str | None = None, *, root: Path | None = None) -> dict[str, str]:
    """The fields of a record's header.

    ``command`` defaults to this process's command line; ``root`` is the checkout whose
    commit is recorded (default: the one holding this package). A checkout with
    uncommitted changes is recorded as ``<sha>-dirty``, changes to the records themselves
    (``benchmarks/results/``) aside: a run that re-records several entries one after
    another has the previous ones' new records in its tree, and they change no code. Outside
    a checkout the commit is ``"unknown"``.
    """
    root = root or Path(__file__).resolve().parents[2]
    sha = _git("rev-parse", "--short=12", "HEAD", cwd=root)
    if sha is None:
        commit = "unknown"
    else:
        dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ".",
                     f":(exclude){RECORDS_PATH}", cwd=root)
        commit = sha + ("-dirty" if dirty else "")
    if command is None:
        argv = sys.argv if sys.argv and sys.argv[0] else ["-"]
        command = " ".join(["python", *argv])
    try:
        load = " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:  # not on this platform
        load = "unknown"
    return {
        "command": command,
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "load average (1/5/15 min)": load,
        "python": platform.python_version(),
        "host speed (probe)": host_speed(),
    }


def provenance_header(fields: dict[str, str] | None = None) -> str:
    """The fixed header of a record: one ``key: value`` line per field, as a quote block."""
    fields = provenance() if fields is None else fields
    return "\n".join(f"> {key}: {value}  " for key, value in fields.items()) + "\n"
