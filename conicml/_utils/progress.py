"""Progress bars for long runs (tqdm).

A bar is shown when progress is wanted: by default when the standard error is a
terminal, so logs, pipes, CI and test output stay clean, and only once a run has lasted
:data:`DELAY` seconds. ``enable=True`` / ``enable=False`` (a ``progress=`` argument of
the public API) overrides the default, and the environment variable
``CONICML_PROGRESS=0`` switches every default bar off. Without tqdm (a broken install)
every helper is a no-op.

* :func:`progress` wraps an iterable (a loop of known or unknown length);
* :func:`progress_bar` is a counter for loops that discover their work as they go
  (``bar.update()`` per step; a no-op object when off);
* :func:`dask_progress` follows a ``dask.compute`` on the local schedulers (a
  ``distributed`` client reports on its own dashboard instead).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["dask_progress", "progress", "progress_bar", "wanted"]

T = TypeVar("T")

#: Seconds before a bar appears: runs shorter than that draw nothing.
DELAY = 1.0


def wanted(enable: bool | None = None) -> bool:
    """Whether to draw a bar: ``enable`` if given, else a terminal on stderr and no
    ``CONICML_PROGRESS=0``."""
    if enable is not None:
        return bool(enable)
    if os.environ.get("CONICML_PROGRESS", "1").strip() == "0":
        return False
    return _stderr_is_terminal()


def _stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def _tqdm() -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm


def progress(iterable: Iterable[T], desc: str = "", *, total: int | None = None,
             enable: bool | None = None) -> Iterable[T] | Iterator[T]:
    """``iterable`` with a progress bar when one is wanted (:func:`wanted`), else unchanged."""
    tqdm = _tqdm() if wanted(enable) else None
    if tqdm is None:
        return iterable
    return tqdm(iterable, desc=desc, total=total, leave=False, delay=DELAY)


class _NoBar:
    """What :func:`progress_bar` returns when no bar is drawn."""

    def update(self, n: int = 1) -> None:
        """Nothing to advance."""

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def progress_bar(desc: str = "", *, total: int | None = None, unit: str = "it",
                 enable: bool | None = None) -> Any:
    """A tqdm counter (use as a context manager, ``update()`` per step) or a no-op."""
    tqdm = _tqdm() if wanted(enable) else None
    if tqdm is None:
        return _NoBar()
    return tqdm(desc=desc, total=total, unit=unit, leave=False, delay=DELAY)


def dask_progress(desc: str = "", *,
                  enable: bool | None = None) -> contextlib.AbstractContextManager:
    """A context in which ``dask.compute`` draws a bar of its tasks (local schedulers)."""
    tqdm = _tqdm() if wanted(enable) else None
    if tqdm is None:
        return contextlib.nullcontext()
    try:
        from tqdm.dask import TqdmCallback
    except ImportError:  # pragma: no cover - dask without tqdm's hook
        return contextlib.nullcontext()
    return TqdmCallback(desc=desc, leave=False, delay=DELAY, tqdm_class=tqdm)
