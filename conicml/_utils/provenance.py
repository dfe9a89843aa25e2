"""Where a recorded number came from: the command, the commit, the machine and its load.

Every results file of ``benchmarks/`` (and every reproduction record) opens with these
fields, so that a number can be traced to the code and the conditions that produced it.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["provenance", "provenance_header"]


def _git(*args: str, cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                             timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance(command: str | None = None, *, root: Path | None = None) -> dict[str, str]:
    """The fields of a record's header.

    ``command`` defaults to this process's command line; ``root`` is the checkout whose
    commit is recorded (default: the one holding this package). A checkout with
    uncommitted changes is recorded as ``<sha>-dirty``; outside a checkout the commit is
    ``"unknown"``.
    """
    root = root or Path(__file__).resolve().parents[2]
    sha = _git("rev-parse", "--short=12", "HEAD", cwd=root)
    if sha is None:
        commit = "unknown"
    else:
        dirty = _git("status", "--porcelain", "--untracked-files=no", cwd=root)
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
    }


def provenance_header(fields: dict[str, str] | None = None) -> str:
    """The fixed header of a record: one ``key: value`` line per field, as a quote block."""
    fields = provenance() if fields is None else fields
    return "\n".join(f"> {key}: {value}  " for key, value in fields.items()) + "\n"
