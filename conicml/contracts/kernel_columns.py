r"""Kernel columns :math:`K(X, x_j)` of one data set, each evaluated once and kept.

One store per thread (:func:`columns_for`) is shared by the SVM dual's certificate
(:mod:`conicml.formulations.svm`) and smo's warm start along a path
(:mod:`conicml.solvers._warm`): a column the warm start evaluated is not evaluated again
by the certificate. A store is the program's kernel applied to the program's inputs: it
is found again only for an equal kernel and inputs equal in value to those it was built
from (a private copy of them, compared; a digest when they are too large to copy), so a
store is never read for other data or other kernel parameters.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
import weakref
from typing import Any

import numpy as np

from .._utils.engines import ENGINE_ENV, resolve_engine

__all__ = ["KEEP_BYTES", "RESERVE_BYTES", "KernelColumns", "columns_for", "rbf_cross"]

#: Largest store (bytes) a thread keeps between uses; the certificate adds columns up to
#: it (columns beyond are evaluated without being kept). A larger store, grown by a warm
#: start that needs every column of its free set, lives as long as its path holds it.
KEEP_BYTES = 32 * 2**20

#: Columns reserved at once (bytes): memory never written is never mapped, and the
#: store is then never copied to grow.
RESERVE_BYTES = 256 * 2**20

#: Largest inputs (bytes) a store copies to recognise them (beyond: a digest of them).
COPY_BYTES = 32 * 2**20

BLOCK_VALUES = 2**16  # kernel values per block of columns evaluated without being kept

_SERIAL = itertools.count()


def rbf_cross(A: np.ndarray, B: np.ndarray, gamma: float, *,
              sq_a: np.ndarray | None = None, sq_b: np.ndarray | None = None,
              out: np.ndarray | None = None) -> np.ndarray:
    r"""The RBF kernel :math:`K(A, B)` computed in one array (``out`` when given):
    :math:`\exp(\min(2\gamma a^\top b - \gamma\|a\|^2 - \gamma\|b\|^2, 0))`, without the
    temporaries of the general kernel function. ``sq_a``, ``sq_b``: :math:`\gamma\|a\|^2`
    and :math:`\gamma\|b\|^2` when the caller keeps them."""
    if sq_a is None:
        sq_a = gamma * np.einsum("ij,ij->i", A, A)
    if sq_b is None:
        sq_b = gamma * np.einsum("ij,ij->i", B, B)
    out = np.matmul(A, B.T * (2.0 * gamma), out=out)
    out -= sq_a[:, None]
    out -= sq_b[None, :]
    np.minimum(out, 0.0, out=out)
    return np.exp(out, out=out)


def _digest(X: np.ndarray) -> bytes:
    """A digest of the values of ``X`` (O(nd), no copy when C-contiguous)."""
    return hashlib.sha1(np.ascontiguousarray(X), usedforsecurity=False).digest()


class KernelColumns:
    """The kernel columns ``K[:, j]`` of inputs ``X``, in one column-major store.

    ``slot[j]`` is the store's column holding ``K[:, j]`` (-1: not evaluated), ``col``
    the inverse map. :meth:`product` and :meth:`matvec` are products with stored
    columns, read where they are stored (compiled; NumPy's twin gathers a copy),
    :meth:`block` a block ``K[rows][:, idx]``; :meth:`front` arranges given columns at
    the front of the store (one contiguous block, a swap per column moved). ``serial``
    names the store (a new store, a new serial).
    """

    def __init__(self, kernel: Any, X: np.ndarray) -> None:
        X = np.asarray(X)
        self.kernel = kernel
        self.shape, self.dtype = X.shape, X.dtype.str
        if X.nbytes <= COPY_BYTES:  # a private copy: the columns are always of its values
            self.X, self._key = np.array(X, order="C"), None
        else:
            self.X, self._key = X, _digest(X)
        self.n = X.shape[0]
        self.serial = next(_SERIAL)
        self.slot = np.full(self.n, -1, dtype=np.int64)
        self.col = np.empty(0, dtype=np.int64)
        self.store = np.empty((self.n, 0), order="F")
        self.used = 0
        self._sq: np.ndarray | None = None  # gamma * squared row norms (RBF)

    def matches(self, kernel: Any, X: np.ndarray) -> bool:
        """Whether ``X`` and ``kernel`` are the data this store holds columns of."""
        if not (X.shape == self.shape and X.dtype.str == self.dtype and kernel == self.kernel):
            return False
        if self._key is None:
            return bool(np.array_equal(X, self.X))
        if _digest(X) != self._key:
            return False
        self.X = X  # too large to copy: inputs equal in value to the store's, read them
        return True

    @property
    def nbytes(self) -> int:
        """Bytes of the columns evaluated (the reserved, untouched rest is not counted)."""
        return int(self.used * self.n * 8)

    def _evaluate(self, idx: np.ndarray, out: np.ndarray) -> None:
        r"""Columns ``idx`` into ``out`` (``n`` by ``len(idx)``); RBF as
        :math:`\exp(\min(0, 2\gamma x^\top x_j - \gamma\|x\|^2 - \gamma\|x_j\|^2))`, the row
        norms computed once."""
        if getattr(self.kernel, "name", None) != "rbf":
            out[:] = np.asarray(self.kernel.columns(self.X, idx), dtype=float)
            return
        gamma = float(self.kernel.gamma)
        if self._sq is None:
            self._sq = np.einsum("ij,ij->i", self.X, self.X) * gamma
        rbf_cross(self.X, self.X[idx], gamma, sq_a=self._sq, sq_b=self._sq[idx], out=out)

    def ensure(self, idx: np.ndarray) -> None:
        """Evaluate and keep the columns ``idx`` not yet in the store."""
        missing = idx[self.slot[idx] < 0]
        if not missing.size:
            return
        missing = np.unique(missing)
        if self.used + missing.size > self.store.shape[1]:
            cap = max(2 * self.store.shape[1], self.used + missing.size,
                      min(self.n, RESERVE_BYTES // (8 * self.n)))
            grown = np.empty((self.n, cap), order="F")
            grown[:, :self.used] = self.store[:, :self.used]
            self.store = grown
            col = np.full(cap, -1, dtype=np.int64)
            col[:self.used] = self.col[:self.used]
            self.col = col
        new = slice(self.used, self.used + missing.size)
        self._evaluate(missing, self.store[:, new])
        self.slot[missing] = np.arange(new.start, new.stop)
        self.col[new] = missing
        self.used = new.stop
        if self.nbytes > KEEP_BYTES:
            _hold(self)

    def front(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The columns ``idx`` as the store's first ``len(idx)`` columns: ``(K_F, order)``.

        ``K_F`` is a view (no copy) whose column ``j`` is ``K[:, order[j]]``; ``order`` is
        ``idx`` permuted. Only the columns not yet at the front move (a swap each).
        """
        self.ensure(idx)
        m = idx.size
        late = idx[self.slot[idx] >= m]  # wanted, behind the front
        if late.size:
            wanted = np.zeros(self.n, dtype=bool)
            wanted[idx] = True
            head = self.col[:m]
            spare = np.flatnonzero(~wanted[head])[:late.size]  # front slots to give up
            a, b = spare, self.slot[late]
            self.store[:, np.concatenate([a, b])] = self.store[:, np.concatenate([b, a])]
            ca, cb = self.col[a].copy(), self.col[b].copy()
            self.col[a], self.col[b] = cb, ca
            self.slot[cb], self.slot[ca] = a, b
        return self.store[:, :m], self.col[:m].copy()

    def product(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``K[:, idx] @ coef``, every column kept."""
        if idx.size == 0:
            return np.zeros(self.n)
        self.ensure(idx)
        return self._stored_product(idx, coef)

    def prepare(self, idx: np.ndarray) -> None:
        """Make the columns ``idx`` ready for products: evaluated and kept; under the NumPy
        engine moved to the front too (:meth:`front`), so that a product over them reads
        one contiguous block instead of a gathered copy."""
        if _gather_engine() is None:
            self.front(idx)
        else:
            self.ensure(idx)

    def block(self, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """``K[rows][:, idx]`` (a copy), every column ``idx`` kept."""
        self.ensure(idx)
        # one flat gather (the store's transpose is C-contiguous: row s is column s)
        flat = self.store.T.reshape(-1)
        return flat.take(self.slot[idx][None, :] * self.n + np.asarray(rows)[:, None])

    def _stored_product(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        slots = self.slot[idx]
        gather = _gather_engine()
        if gather is not None:  # the columns read where they are stored
            out = np.zeros(self.n)
            gather(self.store.T, np.ascontiguousarray(slots),
                   np.ascontiguousarray(coef, dtype=float), out)
            return out
        span = int(slots.max()) + 1
        if 2 * idx.size > span:  # most of the store's first columns: one product over them
            full = np.zeros(span)
            full[slots] = coef
            return self.store[:, :span] @ full
        return self.store[:, slots] @ coef  # a gathered copy of the columns

    def matvec(self, v: np.ndarray, nz: np.ndarray) -> np.ndarray:
        """``K v`` for ``v`` nonzero on ``nz`` only: the missing columns kept while the
        store is under :data:`KEEP_BYTES`, those beyond evaluated a block at a time."""
        missing = nz[self.slot[nz] < 0]
        room = max(KEEP_BYTES // (8 * max(self.n, 1)) - self.used, 0)
        if missing.size and room:
            self.ensure(missing[:room])
        held = nz[self.slot[nz] >= 0]
        g = self._stored_product(held, v[held]) if held.size else np.zeros(self.n)
        beyond = nz[self.slot[nz] < 0]
        if beyond.size:
            step = max(1, BLOCK_VALUES // self.n)
            buf = np.empty((self.n, min(step, beyond.size)), order="F")
            for s in range(0, beyond.size, step):
                part = beyond[s:s + step]
                blk = buf[:, :part.size]
                self._evaluate(part, blk)
                g += blk @ v[part]
        return g


def _gather_engine() -> Any:
    """The compiled product with stored columns
    (:func:`conicml._utils.column_gather.gather_matvec`), or ``None`` for NumPy's (a
    gathered copy of the columns, or one product over the store's first columns)."""
    env = os.environ.get(ENGINE_ENV)
    if env not in _GATHER:  # decided once per value of the environment variable
        if resolve_engine("kernel columns", "auto") != "numba":
            _GATHER[env] = None
        else:
            from .._utils.column_gather import gather_matvec

            _GATHER[env] = gather_matvec
    return _GATHER[env]


_GATHER: dict[str | None, Any] = {}


_LOCAL = threading.local()  # one store per thread: folds fitted in threads never share one


def _current() -> KernelColumns | None:
    ref = getattr(_LOCAL, "ref", None)
    return ref() if isinstance(ref, weakref.ref) else ref


def _hold(store: KernelColumns) -> None:
    """A store past :data:`KEEP_BYTES` is held by its thread weakly (its path holds it)."""
    if _current() is store:
        _LOCAL.ref = weakref.ref(store)


def columns_for(kernel: Any, X: np.ndarray) -> KernelColumns:
    """This thread's store of the kernel columns of ``X``: the held one if it is of these
    data (:meth:`KernelColumns.matches`), else a new one, which replaces it."""
    X = np.asarray(X)
    store = _current()
    if store is None or not store.matches(kernel, X):
        store = KernelColumns(kernel, X)
        _LOCAL.ref = store
    return store
