"""Which of the package's modules a run spends its time in: a sampling thread.

A record is fresh only if no code it ran changed after it (``conicml reproduce
--summary``). :class:`CodeSampler` finds that code without tracing every call: a daemon
thread reads the stacks of the other threads every ``interval`` seconds and keeps the
package's source files it sees. Compiled kernels (numba) run without Python frames, so the
``*_numba`` modules whose dispatchers were compiled in this process are added at the end.
Code that runs in total for much less than the interval may be missed: the list is of the
code the run spent its time in, not a coverage report.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from types import TracebackType

__all__ = ["CodeSampler"]

_PACKAGE = Path(__file__).resolve().parents[1]  # the conicml/ directory


def _relative(filename: str) -> str | None:
    """``conicml/...py`` for a source file of the package, else ``None``."""
    try:
        rel = Path(filename).resolve().relative_to(_PACKAGE)
    except (ValueError, OSError):  # not in the package; "<string>" and the like
        return None
    return f"{_PACKAGE.name}/{rel.as_posix()}" if rel.suffix == ".py" else None


def compiled_kernel_files() -> set[str]:
    """The package's ``*_numba`` modules loaded here with at least one compiled dispatcher
    (numba's ``Dispatcher.signatures``: the types it was called with in this process)."""
    out = set()
    for name, module in list(sys.modules.items()):
        if not (name.startswith("conicml.") and name.endswith("_numba")):
            continue
        for value in vars(module).values():
            if getattr(value, "signatures", None) and hasattr(value, "py_func"):
                rel = _relative(getattr(module, "__file__", "") or "")
                if rel is not None:
                    out.add(rel)
                break
    return out


class CodeSampler:
    """Sample the package's source files on every other thread's stack.

    Use as a context manager; :attr:`files` (sorted ``conicml/...`` paths) is complete
    after it exits.

    Parameters
    ----------
    interval : float, default=0.02
        Seconds between two samples.
    """

    def __init__(self, interval: float = 0.02) -> None:
        if not interval > 0:
            raise ValueError(f"interval must be positive, got {interval!r}")
        self.interval = float(interval)
        self._seen: dict[str, str | None] = {}  # co_filename -> package path (or None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.files: list[str] = []

    def _sample(self) -> None:
        me = threading.get_ident()
        seen = self._seen
        while not self._stop.wait(self.interval):
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                while frame is not None:
                    name = frame.f_code.co_filename
                    if name not in seen:
                        seen[name] = _relative(name)
                    frame = frame.f_back

    def __enter__(self) -> CodeSampler:
        self._thread = threading.Thread(target=self._sample, name="conicml-code-sampler",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        files = {rel for rel in self._seen.values() if rel is not None}
        files.discard(_relative(__file__))  # (its own exit, waiting for the thread)
        self.files = sorted(files | compiled_kernel_files())
