"""The product of a few stored kernel columns with a vector, compiled (needs ``numba``).

The column store of :mod:`conicml.contracts.kernel_columns` holds each column once;
a product with some of its columns reads them where they are instead of gathering a
copy of them (which doubles the memory traffic of the product) or moving them into
one block.
"""

from __future__ import annotations

from numba import njit

__all__ = ["gather_matvec"]


@njit(cache=True, nogil=True)
def gather_matvec(rows, slots, coef, out):  # pragma: no cover - compiled
    """``out += rows[slots].T @ coef``: ``rows[s]`` is a stored column (a C-contiguous
    array whose rows are the columns), four columns per pass over ``out``."""
    n = out.shape[0]
    m = slots.shape[0]
    k = 0
    while k + 4 <= m:
        a0, a1, a2, a3 = coef[k], coef[k + 1], coef[k + 2], coef[k + 3]
        c0, c1 = rows[slots[k]], rows[slots[k + 1]]
        c2, c3 = rows[slots[k + 2]], rows[slots[k + 3]]
        for t in range(n):
            out[t] += a0 * c0[t] + a1 * c1[t] + a2 * c2[t] + a3 * c3[t]
        k += 4
    while k < m:
        a = coef[k]
        c = rows[slots[k]]
        for t in range(n):
            out[t] += a * c[t]
        k += 1
