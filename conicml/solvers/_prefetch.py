"""A cache prefetch hint for the compiled loops (needs ``numba``).

The coordinate and stochastic solvers read the rows of ``X`` in random order, so on a
matrix larger than the cache every row is a miss; asking for the rows a few steps ahead
(``llvm.prefetch``: no load, no fault, no effect on the results) overlaps those misses
with the work on the current rows.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch", "prefetch_csr_row", "prefetch_dense_row"]


@intrinsic
def prefetch(typingctx, arr, idx):  # pragma: no cover - compiled
    """A read prefetch hint for ``arr[idx]`` (``idx`` an integer or a tuple of them)."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        if isinstance(idxty, types.BaseTuple):
            pairs = zip(cgutils.unpack_tuple(builder, args[1], len(idxty)), idxty, strict=True)
        else:
            pairs = [(args[1], idxty)]
        inds = [context.cast(builder, v, t, types.intp) for v, t in pairs]
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, inds, wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # read, high temporal locality, data cache
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def prefetch_csr_row(data, indices, indptr, i):  # pragma: no cover - compiled
    """Prefetch the cache lines of CSR row ``i`` (its values and column indices)."""
    lo, hi = indptr[i], indptr[i + 1]
    if hi > lo:
        for p in range(lo, hi, 8):  # 8 doubles a 64-byte line
            prefetch(data, p)
        for p in range(lo, hi, 16):  # 16 int32 a line
            prefetch(indices, p)
        prefetch(data, hi - 1)
        prefetch(indices, hi - 1)


@njit(cache=True, nogil=True, inline="always")
def prefetch_dense_row(X, i):  # pragma: no cover - compiled
    """Prefetch the cache lines of row ``i`` of a C-contiguous 2-D array."""
    d = X.shape[1]
    for j in range(0, d, 8):
        prefetch(X, (i, j))
    prefetch(X, (i, d - 1))
