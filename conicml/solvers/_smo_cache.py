"""The Gram-column caches of ``smo``: an LRU dict of full columns (NumPy loop) and one
array of working-set columns (compiled loop, LIBSVM's ``Cache``); see :mod:`.smo`."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from ..exceptions import SolverError

__all__ = ["BLOCK_BYTES", "ColumnCache", "StoreCache"]

BLOCK_BYTES = 32 * 2**20  # largest block of Gram columns computed at once


class ColumnCache:
    """LRU cache of full Gram columns ``K[:, i]`` (original sample order)."""

    def __init__(self, kernel: Any, X: np.ndarray, n: int, cache_size: float) -> None:
        self.kernel = kernel
        self.X = X
        self.n = n
        self.capacity = max(2, min(n, int(cache_size * 2**20 // (8 * n))))
        self.block = max(1, min(self.capacity, BLOCK_BYTES // (8 * n)))
        self._cols: OrderedDict[int, np.ndarray] = OrderedDict()
        self.computed = 0  # Gram columns computed (of the working set's length)
        self.values = 0  # kernel values computed
        self.hits = 0
        # squared norms of the rows, computed once: an RBF column is then one
        # matrix-vector product and one exp (kernel.columns recomputes them per call)
        self._sq = (np.einsum("ij,ij->i", X, X)
                    if getattr(kernel, "name", None) == "rbf" and X.ndim == 2 else None)

    def _compute(self, idx: np.ndarray) -> np.ndarray:
        if self._sq is not None and len(idx) == 1:
            i = int(idx[0])
            dist = self._sq + (self._sq[i] - 2.0 * (self.X @ self.X[i]))
            np.maximum(dist, 0.0, out=dist)
            dist *= -float(self.kernel.gamma)
            self.computed += 1
            self.values += self.n
            return np.exp(dist, out=dist)[:, None]
        if self._sq is not None:  # a block of RBF columns in place from the row norms
            block = self._rbf_block(self.X, self._sq, idx)
            self.computed += len(idx)
            self.values += block.size
            return block
        block = np.asarray(self.kernel.columns(self.X, idx), dtype=float)
        if block.shape != (self.n, len(idx)):
            raise SolverError(
                f"kernel.columns returned shape {block.shape}, expected {(self.n, len(idx))}"
            )
        self.computed += len(idx)
        self.values += block.size
        return block

    def _rbf_block(self, Xr: np.ndarray, sqr: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """RBF values between the rows ``Xr`` (squared norms ``sqr``) and the columns
        ``cols`` (original indices), in place (kernel.columns recomputes the norms and
        allocates four temporaries per block, which the gradient reconstruction's
        columns would pay each time)."""
        block = Xr @ self.X[cols].T
        block *= -2.0
        block += sqr[:, None]
        block += self._sq[cols][None, :]
        np.maximum(block, 0.0, out=block)
        block *= -float(self.kernel.gamma)
        return np.exp(block, out=block)

    def _store(self, i: int, col: np.ndarray) -> None:
        self._cols[i] = col
        if len(self._cols) > self.capacity:
            self._cols.popitem(last=False)

    def _compute_and_store(self, i: int) -> np.ndarray:
        """Compute the full column ``i``, store it and return it (a cache miss)."""
        col = np.ascontiguousarray(self._compute(np.array([i]))[:, 0])
        self._store(i, col)
        return col

    def _add_computed(self, out: np.ndarray, idx: np.ndarray, pos: np.ndarray,
                      coef: np.ndarray) -> None:
        """``out += K[:, idx[pos]] @ coef[pos]`` for missed columns, computed a block at a
        time and stored."""
        for start in range(0, len(pos), self.block):
            part = pos[start:start + self.block]
            block = self._compute(idx[part])
            out += block @ coef[part]
            for k, p in enumerate(part):
                self._store(int(idx[p]), np.ascontiguousarray(block[:, k]))

    def get(self, i: int) -> np.ndarray:
        """Column ``i`` (a cached array: do not modify it)."""
        col = self._cols.get(i)
        if col is not None:
            self.hits += 1
            self._cols.move_to_end(i)
            return col
        return self._compute_and_store(i)

    def matvec(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``K[:, idx] @ coef`` for ``coef`` of shape (len(idx),) or (len(idx), k)."""
        out = np.zeros((self.n,) + coef.shape[1:])
        if len(idx) == 0:
            return out
        cached = np.array([int(i) in self._cols for i in idx], dtype=bool)
        hit_pos = np.flatnonzero(cached)
        for start in range(0, len(hit_pos), self.block):
            pos = hit_pos[start:start + self.block]
            cols = [self._cols[int(idx[p])] for p in pos]
            for p in pos:
                self._cols.move_to_end(int(idx[p]))
            out += np.stack(cols, axis=1) @ coef[pos]
            self.hits += len(pos)
        self._add_computed(out, idx, np.flatnonzero(~cached), coef)
        return out


class StoreCache(ColumnCache):
    """The column cache of the compiled loop: Gram columns of the working set, in one array.

    The working set is ``basis`` (original indices, increasing; ``None``: all ``n``
    variables), of size ``m``. ``store[slot_of[p]]`` is the Gram column of working
    position ``p`` restricted to the working set, ``m`` floats (``slot_of[p] = -1``:
    not stored). The store is a view of one flat buffer of the cache's memory, so a
    shrunk working set holds ``n / m`` times more columns (LIBSVM's cache of columns
    of the active length, ``Cache::swap_index``): :meth:`rebasis` gathers the stored
    columns in place when the working set shrinks and completes the recently used ones
    when variables return.
    The compiled loop stamps a slot with a clock each time it uses it and the least
    recently used slot is the one replaced (LRU, as :class:`ColumnCache`).
    """

    def __init__(self, kernel: Any, X: np.ndarray, n: int, cache_size: float,
                 dtype: Any = np.float64) -> None:
        super().__init__(kernel, X, n, cache_size)
        self.dtype = np.dtype(dtype)
        # the memory bound, in stored values (float32: twice as many columns, LIBSVM's Qfloat)
        self.capacity = max(2, min(n, int(cache_size * 2**20 // (self.dtype.itemsize * n))))
        self.floats = self.capacity * n
        self.buf = np.empty(self.floats, dtype=self.dtype)  # pages are touched only when used
        self.clock = np.zeros(1, dtype=np.int64)  # column uses inside the compiled loop
        self.gather: Any = None  # compiled out += store[slots].T @ coef (set by the caller)
        self.compact: Any = None  # compiled in-place gather of stored rows (set by the caller)
        self.min_length = n  # shortest stored columns so far
        self.borrowed = False  # the store is the program's own Gram matrix (borrow)
        self.reset_full()

    def borrow(self) -> None:
        """Make a precomputed float64 Gram matrix in column-major order the store itself:
        its transpose's rows are its columns, so every column is present and none is
        computed or copied (a path over C solves on one Gram matrix). The working set's
        columns are then never gathered (``rebasis`` keeps the full basis)."""
        self.store = self.X.T
        self.cap = self.used = self.n
        self.slot_of = np.arange(self.n, dtype=np.int64)
        self.col_of = np.arange(self.n, dtype=np.int64)
        self.stamp = np.zeros(self.n, dtype=np.int64)
        self.borrowed = True

    def _layout(self, m: int) -> None:
        self.m = m
        self.cap = max(2, min(m, self.floats // m))
        self.store = self.buf[:self.cap * m].reshape(self.cap, m)
        self.slot_of = np.full(m, -1, dtype=np.int64)
        self.col_of = np.full(self.cap, -1, dtype=np.int64)
        self.stamp = np.zeros(self.cap, dtype=np.int64)

    def reset_full(self) -> None:
        """Every variable in the working set; the stored columns are dropped."""
        self.basis: np.ndarray | None = None
        self.Xb = self.sqb = None
        self.used = 0
        self._layout(self.n)

    def cross(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Kernel values ``K[rows][:, cols]`` (original indices), counted."""
        if self.kernel.name == "precomputed":
            block = np.asarray(self.X[np.ix_(rows, cols)], dtype=float)
        elif self._sq is not None:  # RBF in place from the cached row norms
            block = self._rbf_block(self.X[rows], self._sq[rows], cols)
        else:
            block = np.asarray(self.kernel(self.X[rows], self.X[cols]), dtype=float)
        self.values += block.size
        return block

    def rebasis(self, new: np.ndarray | None, recent: int) -> None:
        """Make ``new`` (original indices, increasing; ``None``: all) the working set.

        A smaller working set inside the old one (shrinking) gathers every stored column
        in place. Otherwise (variables return, after the gradient reconstruction) the
        columns used in the last ``recent`` clock ticks whose variable stays in the
        working set are kept, at most as many as fit, and completed with their rows for
        the returning variables (LIBSVM completes a cached column when it is next asked
        for, ``Cache::get_data``); the others are dropped. A borrowed store keeps every
        variable.
        """
        if self.borrowed:
            return
        old = np.arange(self.n) if self.basis is None else self.basis
        new_idx = np.arange(self.n) if new is None else new
        where = np.full(self.n, -1, dtype=np.int64)
        where[old] = np.arange(old.size)
        pos_old = where[new_idx]  # each new member's position in the old working set
        if new_idx.size == old.size and np.all(pos_old >= 0):
            return  # the same set
        if new_idx.size < old.size and np.all(pos_old >= 0):
            self._shrink_in_place(pos_old)
            return
        slot_new = np.full(self.n, -1, dtype=np.int64)
        slot_new[new_idx] = np.arange(new_idx.size)
        live = np.flatnonzero(self.stamp[:self.used] > self.clock[0] - recent)
        orig = old[self.col_of[live]]
        stays = slot_new[orig] >= 0
        live, orig = live[stays], orig[stays]
        cap_new = max(2, min(new_idx.size, self.floats // new_idx.size))
        order = np.argsort(-self.stamp[live], kind="stable")[:cap_new]
        live, orig = live[order], orig[order]
        kept = self.store[live].copy()
        stamps = self.stamp[live].copy()
        have = np.flatnonzero(pos_old >= 0)
        back = np.flatnonzero(pos_old < 0)
        if new is None:
            self.reset_full()
        else:
            self._set_basis(new)
        L = live.size
        if L:
            self.store[np.ix_(np.arange(L), have)] = kept[:, pos_old[have]]
            step = max(1, BLOCK_BYTES // (8 * max(1, back.size)))
            for start in range(0, L, step):
                ks = np.arange(start, min(start + step, L))
                self.store[np.ix_(ks, back)] = self.cross(new_idx[back], orig[ks]).T
        self.used = L
        cols = slot_new[orig]
        self.col_of[:L] = cols
        self.stamp[:L] = stamps
        self.slot_of[cols] = np.arange(L)

    def _set_basis(self, basis: np.ndarray) -> None:
        self.basis = basis
        self.min_length = min(self.min_length, basis.size)
        self.used = 0
        self._layout(basis.size)
        if self.kernel.name == "precomputed":
            self.Xb = None
        else:
            self.Xb = np.ascontiguousarray(self.X[basis])
            self.sqb = None if self._sq is None else self._sq[basis]

    def _shrink_in_place(self, keep: np.ndarray) -> None:
        """Restrict the working set to its positions ``keep`` (increasing)."""
        m_old = self.m
        newpos = np.full(m_old, -1, dtype=np.int64)
        newpos[keep] = np.arange(keep.size)
        old_cols = self.col_of[:self.used]
        rows = np.flatnonzero(newpos[old_cols] >= 0)
        stamps = self.stamp[rows].copy()
        cols = newpos[old_cols[rows]]
        self.compact(self.buf, rows, m_old, keep.size, np.ascontiguousarray(keep, np.int64),
                     np.empty(keep.size, dtype=self.dtype))
        self._set_basis(keep if self.basis is None else self.basis[keep])
        self.used = rows.size  # the new capacity is at least the old one: every row fits
        self.col_of[:self.used] = cols
        self.stamp[:self.used] = stamps
        self.slot_of[cols] = np.arange(self.used)

    def _column(self, p: int) -> np.ndarray:
        """Gram column of working position ``p`` on the working set."""
        if self.basis is None:
            return self._compute(np.array([p]))[:, 0]
        self.computed += 1
        self.values += self.m
        i = int(self.basis[p])
        if self.kernel.name == "precomputed":
            return np.asarray(self.X[self.basis, i], dtype=float)
        if self.sqb is not None:
            dist = self.sqb + (self.sqb[p] - 2.0 * (self.Xb @ self.Xb[p]))
            np.maximum(dist, 0.0, out=dist)
            dist *= -float(self.kernel.gamma)
            return np.exp(dist, out=dist)
        return np.asarray(self.kernel.columns(self.Xb, np.array([p])), dtype=float)[:, 0]

    def _store(self, p: int, col: np.ndarray) -> None:
        if self.used < self.cap:
            slot = self.used
            self.used += 1
        else:
            slot = int(np.argmin(self.stamp))
            self.slot_of[self.col_of[slot]] = -1
        self.store[slot] = col
        self.col_of[slot] = p
        self.slot_of[p] = slot
        self.stamp[slot] = self.clock[0]

    def fetch(self, p: int) -> None:
        """Compute the column of working position ``p`` and store it."""
        self._store(p, self._column(p))

    def get(self, i: int) -> np.ndarray:
        if self.basis is not None:
            raise SolverError("smo: full Gram columns asked while the working set is shrunk")
        slot = int(self.slot_of[i])
        if slot >= 0:
            self.hits += 1
            return self.store[slot]
        return self._compute_and_store(i)

    def matvec(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        out = np.zeros((self.n,) + coef.shape[1:])
        if len(idx) == 0:
            return out
        if self.basis is not None:  # the stored columns are partial: compute all
            for start in range(0, len(idx), self.block):
                pos = np.arange(start, min(start + self.block, len(idx)))
                out += self._compute(idx[pos]) @ coef[pos]
            return out
        slots = self.slot_of[idx]
        hit = np.flatnonzero(slots >= 0)
        if hit.size:
            if self.gather is not None and coef.ndim == 1:
                self.gather(self.store, np.ascontiguousarray(slots[hit]),
                            np.ascontiguousarray(coef[hit], dtype=float), out)
            else:
                out += self.store[slots[hit]].T @ coef[hit]
            self.hits += hit.size
        self._add_computed(out, idx, np.flatnonzero(slots < 0), coef)
        return out
