"""Which of the package's modules a run spends its time in: a sampling thread.

A record is fresh only if no code it ran changed after it (``conicml reproduce
--summary``). :class:`CodeSampler` finds that code without tracing every call: a daemon
thread reads the stacks of the other threads every ``interval`` seconds and keeps the
package's source files it sees. Compiled kernels (numba) run without Python frames, so the
``*_numba`` modules whose dispatchers were compiled in the process are added at the end.
Child processes (spawned runs, joblib or dask workers) sample themselves when the
environment names a directory (:data:`SAMPLE_DIR_ENV`, set by :meth:`CodeSampler.__enter__`
and read when a process imports conicml or forks): each writes what it saw there about once
a second, and the parent reads it back on exit. Code that runs in total for much less than
the interval may be missed: the list is of the code a run spent its time in, not coverage.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

__all__ = ["SAMPLE_DIR_ENV", "CodeSampler", "compiled_kernel_files", "flush_if_sampled",
           "sample_if_asked"]

_PACKAGE = Path(__file__).resolve().parents[1]  # the conicml/ directory

#: Environment variable naming the directory where child processes of a sampled run write
#: the files they saw (one ``<pid>.txt`` each).
SAMPLE_DIR_ENV = "CONICML_CODE_SAMPLE_DIR"


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
    """Sample the package's source files on every other thread's stack (and, through
    :data:`SAMPLE_DIR_ENV`, in the child processes started meanwhile).

    Use as a context manager; :attr:`files` (sorted ``conicml/...`` paths) is complete
    after it exits.

    Parameters
    ----------
    interval : float, default=0.02
        Seconds between two samples.
    """

    def __init__(self, interval: float = 0.02, *, _flush_to: Path | None = None) -> None:
        if not interval > 0:
            raise ValueError(f"interval must be positive, got {interval!r}")
        self.interval = float(interval)
        self._seen: dict[str, str | None] = {}  # co_filename -> package path (or None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._flush_to = _flush_to  # a child's file in the parent's directory
        self._children: tempfile.TemporaryDirectory | None = None
        self._saved_env: str | None = None
        self.files: list[str] = []

    def _found(self) -> set[str]:
        files = {rel for rel in list(self._seen.values()) if rel is not None}
        files.discard(_relative(__file__))  # (its own exit, waiting for the thread)
        return files | compiled_kernel_files()

    def _flush(self) -> None:
        if self._flush_to is not None:
            self._flush_to.write_text("\n".join(sorted(self._found())))

    def _sample(self) -> None:
        me = threading.get_ident()
        seen = self._seen
        flushed = time.monotonic()
        while not self._stop.wait(self.interval):
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                while frame is not None:
                    name = frame.f_code.co_filename
                    if name not in seen:
                        seen[name] = _relative(name)
                    frame = frame.f_back
            if self._flush_to is not None and time.monotonic() - flushed > 1.0:
                self._flush()  # a child may end by os._exit (multiprocessing) or a kill
                flushed = time.monotonic()

    def start(self) -> CodeSampler:
        """Start the sampling thread (what :meth:`__enter__` does, without the children)."""
        self._thread = threading.Thread(target=self._sample, name="conicml-code-sampler",
                                        daemon=True)
        self._thread.start()
        return self

    def __enter__(self) -> CodeSampler:
        self._children = tempfile.TemporaryDirectory(prefix="conicml-code-")
        self._saved_env = os.environ.get(SAMPLE_DIR_ENV)
        os.environ[SAMPLE_DIR_ENV] = self._children.name
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        files = self._found()
        if self._children is not None:
            if self._saved_env is None:
                os.environ.pop(SAMPLE_DIR_ENV, None)
            else:
                os.environ[SAMPLE_DIR_ENV] = self._saved_env
            for path in Path(self._children.name).glob("*.txt"):
                files.update(line for line in path.read_text().split() if line)
            self._children.cleanup()
        self.files = sorted(files)


_CHILD: list[CodeSampler] = []  # this process's own sampler, when it is a sampled child


def sample_if_asked() -> None:
    """Start sampling this process when :data:`SAMPLE_DIR_ENV` names a directory (a child
    of a sampled run); called when conicml is imported and in a forked child."""
    where = os.environ.get(SAMPLE_DIR_ENV)
    if not where or _CHILD or not Path(where).is_dir():
        return
    sampler = CodeSampler(_flush_to=Path(where) / f"{os.getpid()}.txt")
    _CHILD.append(sampler.start())


def flush_if_sampled() -> None:
    """Write what this process's sampler saw so far (a child about to end by ``os._exit``,
    as multiprocessing's children do, before its next periodic write)."""
    if _CHILD:
        _CHILD[0]._flush()


def _after_fork() -> None:
    _CHILD.clear()  # the parent's sampler thread does not run in the child
    sample_if_asked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
