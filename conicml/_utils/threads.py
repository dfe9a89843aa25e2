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
from collections.abc import Iterator
from functools import cache
from typing import Any

from threadpoolctl import ThreadpoolController

__all__ = ["blas_controller", "one_blas_thread", "one_thread", "single_blas_thread"]


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
