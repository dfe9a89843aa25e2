"""Progress bars for long runs (optional extra ``progress``: tqdm).

:func:`progress` wraps an iterable in a ``tqdm`` bar when tqdm is installed, the
standard error is a terminal and progress is not switched off (``enable=False`` or
the environment variable ``CONICML_PROGRESS=0``); otherwise it returns the iterable
unchanged, so logs and CI output stay clean.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["progress"]

T = TypeVar("T")


def progress(iterable: Iterable[T], desc: str = "", *, total: int | None = None,
             enable: bool | None = None) -> Iterable[T] | Iterator[T]:
    """``iterable`` with a progress bar when one is wanted and possible (module docstring)."""
    if enable is None:
        enable = os.environ.get("CONICML_PROGRESS", "1") != "0" and sys.stderr.isatty()
    if not enable:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, desc=desc, total=total, leave=False)
