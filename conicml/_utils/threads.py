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
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

from threadpoolctl import ThreadpoolController

__all__ = ["blas_controller", "idle_cores", "in_two_threads", "one_blas_thread", "one_thread",
           "single_blas_thread", "usable_cores"]


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


def usable_cores() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on this platform)
        return os.cpu_count() or 1


def idle_cores() -> int:
    """The cores of :func:`usable_cores` that no other task is running on now: less the
    tasks running or runnable at this instant other than this process's threads (the
    fourth field of Linux's ``/proc/loadavg``, less this process's running threads, such
    as BLAS workers still spinning after a call; elsewhere the 1-minute load average). A
    block of work split over two threads pays off only with a second core idle: on a
    loaded machine the two halves wait for each other's time slices. A reading is reused
    for :data:`_IDLE_TTL` seconds (the callers ask before every large product)."""
    now = time.monotonic()
    if now - _IDLE[0] < _IDLE_TTL:
        return _IDLE[1]
    idle = _idle_cores()
    _IDLE[:] = [now, idle]
    return idle


#: Seconds for which :func:`idle_cores` reuses a reading, and the last one (time, value).
_IDLE_TTL = 0.01
_IDLE: list = [-math.inf, 0]


def _idle_cores() -> int:
    """:func:`idle_cores` read now."""
    cores = usable_cores()
    try:
        with open("/proc/loadavg") as fh:
            others = int(fh.read().split()[3].split("/")[0]) - 1
    except (OSError, ValueError, IndexError):
        try:
            others = round(os.getloadavg()[0])
        except (AttributeError, OSError):  # (no load average on this platform)
            return cores
    else:
        if 0 < others < cores:  # (only then can this process's own threads decide)
            others -= _own_running_threads() - 1
    return max(cores - max(others, 0), 0)


def _own_running_threads() -> int:
    """This process's threads in the running state (at least the caller)."""
    running = 0
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/stat") as fh:
                # the state follows the command name, which is in parentheses
                running += fh.read().rpartition(")")[2].split()[0] == "R"
    except (OSError, IndexError):
        return 1
    return max(running, 1)


def in_two_threads(first: Callable[[], None], second: Callable[[], None]) -> None:
    """Run ``first`` here and ``second`` on a second Python thread, and wait for both.

    For two halves of a large dense operation whose calls release the GIL (NumPy's
    ufuncs and products, BLAS/LAPACK through SciPy), each on one BLAS thread: no BLAS
    thread pool, whose workers spin-wait at every synchronisation, which costs many
    times the arithmetic when other processes hold the cores. An exception of either is
    raised here.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(second)
        try:
            first()
        finally:
            other.result()
