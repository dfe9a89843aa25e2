"""One BLAS thread for the small dense factorisations of the specialized solvers.

OpenBLAS runs a Cholesky factorisation of order above ~120 and a large matrix-vector
product on all its threads. For the matrices of the ellipsoid-distance solvers
(order 100–2000, a handful of factorisations per solve) waking the thread pool costs
more than the arithmetic: on the 2-core machine the first multi-threaded call of a
process takes 20–300 ms against 0.4 ms on one thread (``benchmarks/results/
suite_ellipsoid.md``), and every call pays it again when other processes hold the
cores. :func:`single_blas_thread` limits BLAS to one thread for such a block, through
one :class:`threadpoolctl.ThreadpoolController` built on first use (its
library scan costs milliseconds; each later limit ~0.1 ms). Below ``min_order`` it
does nothing (OpenBLAS stays single-threaded there anyway).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["single_blas_thread"]

_CONTROLLER = None


def _controller():  # noqa: ANN202  (threadpoolctl's type, imported lazily)
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


@contextlib.contextmanager
def single_blas_thread(order: int, min_order: int = 100) -> Iterator[None]:
    """Limit BLAS to one thread inside the block when ``order >= min_order``."""
    if order < min_order:
        yield
        return
    with _controller().limit(limits=1, user_api="blas"):
        yield
