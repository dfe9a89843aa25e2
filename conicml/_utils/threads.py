"""One BLAS thread for the small dense factorisations of the specialized solvers.

OpenBLAS runs a Cholesky factorisation of order above ~120 and a large matrix-vector
product on all its threads. For the matrices of the ellipsoid-distance solvers
(order 100–2000, a handful of factorisations per solve) waking the thread pool costs
more than the arithmetic, and every call pays it again when other processes hold the
cores. :func:`single_blas_thread` limits BLAS to one thread for such a block (below
``min_order`` it does nothing: OpenBLAS stays single-threaded there anyway);
:func:`one_blas_thread` always does. Both use the process's one cached controller
(:func:`blas_controller`), shared by every single-thread block of the package (smo, the
SVM certificate, the kernel feature maps, ils-newton, the ellipsoid solvers).
:func:`for_row_blocks` spreads row blocks of large products over threads of its own (each
block one BLAS call on one thread: the same numbers as one call on the whole matrix).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

from threadpoolctl import ThreadpoolController

__all__ = ["blas_controller", "blas_thread_count", "for_row_blocks", "one_blas_thread",
           "one_thread", "single_blas_thread", "usable_cpus"]


@cache
def blas_controller() -> ThreadpoolController:
    """The process's one :class:`threadpoolctl.ThreadpoolController`.

    Built on first use and reused: ``threadpool_limits`` rescans the loaded libraries at
    every call, which costs milliseconds; a limit on the cached controller costs a
    hundredth of that.
    """
    return ThreadpoolController()


def one_blas_thread() -> Any:
    """Context manager: BLAS on one thread inside the block."""
    return blas_controller().limit(limits=1, user_api="blas")


def one_thread() -> Any:
    """Context manager: every thread pool (BLAS and OpenMP) on one thread inside the block."""
    return blas_controller().limit(limits=1)


@contextlib.contextmanager
def single_blas_thread(order: int, min_order: int = 100) -> Iterator[None]:
    """Limit BLAS to one thread inside the block when ``order >= min_order``."""
    if order < min_order:
        yield
        return
    with one_blas_thread():
        yield


def blas_thread_count() -> int:
    """The threads BLAS runs on now (1 when no BLAS library is found): what the user, a
    ``threadpoolctl`` limit or joblib's workers (``OPENBLAS_NUM_THREADS``) allow."""
    infos = blas_controller().select(user_api="blas").info()
    return max((int(info["num_threads"]) for info in infos), default=1)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


_EXECUTORS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_PREFIX = "conicml-rows"


def _executor(workers: int) -> ThreadPoolExecutor:
    # keyed by the process id: a forked child inherits the pool object but not its threads
    key = (os.getpid(), workers)
    if key not in _EXECUTORS:
        _EXECUTORS[key] = ThreadPoolExecutor(workers, thread_name_prefix=_PREFIX)
    return _EXECUTORS[key]


def for_row_blocks(fn: Callable[[int, int], None], n_rows: int, workers: int = 1,
                   block: int = 256) -> None:
    """Call ``fn(start, stop)`` on the row blocks ``[start, stop)`` of ``range(n_rows)``.

    With ``workers > 1`` that many threads, the calling thread one of them, take the
    blocks in turn from one queue (a thread slowed by another process on its core takes
    fewer). ``fn`` must write disjoint rows and spend its time where
    the GIL is released (a BLAS call, a compiled ``nogil`` loop, a large ufunc); run under
    :func:`one_blas_thread`, each block's product is the one call a single thread would
    make on those rows, so the result does not depend on ``workers``. An exception of a
    block is raised after every thread has stopped. Called from one of these threads (a
    nested call), it runs on that thread alone: its pool is busy with the outer call."""
    starts = range(0, n_rows, block)
    workers = max(1, min(int(workers), len(starts)))
    if threading.current_thread().name.startswith(_PREFIX):
        workers = 1
    queue = iter(starts)  # next() on it is atomic under the GIL
    failed = threading.Event()

    def lane() -> None:
        for start in queue:
            if failed.is_set():
                return
            try:
                fn(start, min(start + block, n_rows))
            except BaseException:
                failed.set()
                raise

    if workers == 1:
        lane()
        return
    futures = [_executor(workers - 1).submit(lane) for _ in range(1, workers)]
    try:
        lane()
    finally:
        for future in futures:
            future.exception()  # waits
    for future in futures:
        future.result()
