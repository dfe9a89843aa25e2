r"""The distributed ``dcd`` on data regenerated (or re-read) chunk by chunk every round.

When ``X`` is not persisted, each of its row chunks is a small recipe (a task graph that
generates or reads the chunk). The CoCoA+ blocks are then groups of consecutive chunks,
one group per worker thread, and a round of a group materialises one chunk at a time:
the certificate's sums and one coordinate pass over its rows, after which the rows whose
multiplier can still move (a nonzero projected gradient) enter a bounded working set.
Whenever the working set is full, its local passes run and its settled rows (multipliers
at a bound that the gradient points out of) leave it, so the set is refilled many times a
round when many rows move; the round ends with local passes on what it holds. This is
selective block minimization (Chang & Roth, KDD 2011: a cache of the informative rows,
solved with each new block of data that do not fit in memory) applied to CoCoA+'s local
subproblem: every step is an exact coordinate step of that subproblem, so the round keeps
CoCoA+'s ascent. Between rounds a group keeps only its multipliers (two float32 fractions
per row).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..exceptions import OptionError
from ..solution import Solution
from ._dask_linear import (
    _SPREAD,
    _block_counts,
    _blocks,
    _certificate_terms,
    _local_numba_fn,
    _local_numpy,
    _options,
    _point,
    _selected,
    _sum,
    class_costs,
    fit_blocks,
)
from ._dask_linear import fit_linear_svm_dask as fit_in_place

__all__ = ["ChunkRecipe", "fit_linear_svm_dask", "group_counts", "group_round",
           "lazy_groups"]

#: A solve of the working set must free more than ``1/SETTLED_ROOM`` of it, or the rest of
#: a chunk's candidates compete by score.
SETTLED_ROOM = 2

#: Rows moved at a time when the working set is compacted.
_SLICE = 1 << 14

#: Default working set of a group, in bytes of its float64 rows.
WORKING_BYTES = 16 * 2**20

#: A chunk whose graph serializes to more bytes than this (or than a quarter of the chunk)
#: holds data, not a recipe: an in-memory array wrapped by ``da.from_array`` (or a pandas
#: frame by ``from_pandas``) would travel with every round's task. Fitted in place.
_MAX_RECIPE_BYTES = 1 << 20


class ChunkRecipe:
    """A row chunk of ``X`` and ``y`` as a small task graph, computed where it is loaded.

    Not a dataclass: ``dask.delayed`` traverses dataclasses and collections, and this
    must travel to the worker as an opaque argument (its graph computed there).
    """

    __slots__ = ("graph", "keys", "rows")

    def __init__(self, graph: dict, keys: tuple, rows: int) -> None:
        self.graph, self.keys, self.rows = graph, keys, rows

    def __dask_tokenize__(self) -> tuple:
        return ("ChunkRecipe", self.keys)

    def load(self) -> tuple[np.ndarray, np.ndarray]:
        """The chunk's ``(X, y)``, computed in this process by the synchronous scheduler."""
        from dask.local import get_sync

        Xc, yc = get_sync(self.graph, list(self.keys))
        return Xc, yc


def _recipe_bytes(graph: dict) -> int | None:
    """Bytes of ``graph`` serialized (``None`` when a value is a Future: persisted data)."""
    import cloudpickle

    if any(type(value).__name__ == "Future" for value in graph.values()):
        return None
    return len(cloudpickle.dumps(graph))


def lazy_groups(X: Any, y: Any, n_groups: int) -> list[list[ChunkRecipe]] | None:
    """``X``'s row chunks as recipes in ``n_groups`` groups of consecutive chunks.

    ``X`` (one column chunk) and ``y`` (matching row chunks) are dask arrays. Returns
    ``None`` when some chunk is persisted (a Future in its graph: the data are already in
    the workers' memory) or its graph carries data (:data:`_MAX_RECIPE_BYTES`).
    """
    from dask.highlevelgraph import HighLevelGraph

    graph = HighLevelGraph.merge(X.__dask_graph__(), y.__dask_graph__())
    xkeys = [k[0] for k in X.__dask_keys__()]
    ykeys = list(y.__dask_keys__())
    recipes = []
    for xk, yk, rows in zip(xkeys, ykeys, X.chunks[0]):
        sub = dict(graph.cull({xk, yk}))
        nbytes = _recipe_bytes(sub)
        chunk_bytes = int(rows) * X.shape[1] * X.dtype.itemsize
        if nbytes is None or nbytes > min(_MAX_RECIPE_BYTES, chunk_bytes // 4):
            return None
        recipes.append(ChunkRecipe(sub, (xk, yk), int(rows)))
    n_groups = max(1, min(int(n_groups), len(recipes)))
    # consecutive chunks, the groups' rows as equal as the chunks allow
    total, bounds, acc = float(X.shape[0]), [0], 0
    for i, rec in enumerate(recipes):
        acc += rec.rows
        if len(bounds) < n_groups and acc >= total * len(bounds) / n_groups \
                and len(recipes) - (i + 1) >= n_groups - len(bounds):
            bounds.append(i + 1)
    bounds.append(len(recipes))
    return [recipes[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def working_rows(option: Any, d: int) -> int:
    """Rows of a group's working set: the option, or :data:`WORKING_BYTES` of rows."""
    if option is None:
        return max(1024, WORKING_BYTES // (8 * (d + 1)))
    if not (isinstance(option, (int, np.integer)) and not isinstance(option, bool)
            and option >= 1):
        raise OptionError(f"dcd on Dask: working_rows must be a positive integer or None, "
                          f"got {option!r}")
    return int(option)


def group_counts(recipes: list[ChunkRecipe], positive: Any) -> dict[str, np.ndarray]:
    """Class counts of a group (and the NaN / infinity check), one chunk at a time."""
    out = {"n_pos": np.array(0.0), "n_neg": np.array(0.0)}
    for rec in recipes:
        part = _block_counts(*rec.load(), positive)
        out["n_pos"] += part["n_pos"]
        out["n_neg"] += part["n_neg"]
    return out


class _WorkingSet:
    """The rows kept for the local passes: at most ``cap``, the largest scores first.

    Preallocated (``cap`` rows of ``d`` features): a chunk's candidates replace the
    lowest-scored rows kept, so the memory is the buffer plus one chunk's candidates,
    whatever the number of rows streamed through it.
    """

    def __init__(self, cap: int, d: int) -> None:
        self.X = np.empty((cap, d))
        self.y = np.empty(cap, dtype=np.int8)
        self.ids = np.empty(cap, dtype=np.int64)
        self.score = np.empty(cap)
        self.size = 0

    def add(self, X: np.ndarray, y: np.ndarray, ids: np.ndarray, score: np.ndarray) -> None:
        cap, size = self.score.size, self.size
        if ids.size <= cap - size:  # room for every candidate
            slots, take = np.arange(size, size + ids.size), slice(None)
        else:  # the cap best of the kept rows and the candidates
            both = np.concatenate([self.score[:size], score])
            keep = np.argpartition(-both, cap - 1)[:cap]
            kept = np.zeros(size, dtype=bool)
            kept[keep[keep < size]] = True
            take = keep[keep >= size] - size
            slots = np.concatenate([np.flatnonzero(~kept), np.arange(size, cap)])
            slots = slots[:take.size]
        self.X[slots] = X[take]
        self.y[slots] = y[take]
        self.ids[slots] = ids[take]
        self.score[slots] = score[take]
        self.size = max(size, int(slots.max()) + 1) if slots.size else size

    def settle(self, f1: np.ndarray, u: np.ndarray, shift: float) -> int:
        """Drop the kept rows whose multiplier cannot move at ``u``; returns the rows left.

        The rows left are moved to the front in place, a slice at a time (``keep`` is
        increasing, so a slice reads only rows at or after those it writes): no copy of
        the buffer.
        """
        Xw, yw, ids = self.arrays()
        keep, score = _candidates(Xw, yw, f1[ids], u, shift)
        for lo in range(0, keep.size, _SLICE):
            k = keep[lo:lo + _SLICE]
            hi = lo + k.size
            self.X[lo:hi], self.y[lo:hi], self.ids[lo:hi] = self.X[k], self.y[k], self.ids[k]
        self.score[:keep.size] = score
        self.size = keep.size
        return keep.size

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.size
        return self.X[:n], self.y[:n], self.ids[:n]


def _candidates(X: np.ndarray, y: np.ndarray, frac: np.ndarray, u: np.ndarray,
                shift: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Rows whose multiplier can still move, and their scores.

    The projected gradient at :math:`u` (:math:`G_i = y_i(x_i^\top u + \text{shift}) - 1`,
    zero at a bound the gradient points out of); the free multipliers score infinity,
    the others :math:`|PG_i|`.
    """
    G = np.where(y > 0, 1.0, -1.0) * (X @ u + shift) - 1.0
    pg = np.where(frac <= 0.0, np.minimum(G, 0.0), np.where(frac >= 1.0, np.maximum(G, 0.0),
                                                            G))
    free = (frac > 0.0) & (frac < 1.0)
    score = np.where(free, np.inf, np.abs(pg))
    keep = np.flatnonzero(score > 0.0)
    return keep, score[keep]


def _working_passes(work: _WorkingSet, f1: np.ndarray, kernel: Any, args: tuple,
                    fstate: np.ndarray, rstate: np.ndarray, max_passes: int,
                    local_tol: float, start: float, budget: float) -> int:
    """Up to ``max_passes`` local passes, with shrinking, over the working set's rows.

    ``args`` are the kernel's ``(c_pos, c_neg, u, dw, lin, rho, sy, sigma)``; the
    multipliers of the rows are read from and written back to ``f1``. Returns the passes.
    """
    c_pos, c_neg, u, dw, lin, rho, sy, sigma = args
    Xw, yw, ids = work.arrays()
    fw = f1[ids]
    index = np.arange(ids.size, dtype=np.int32)
    fstate[1], fstate[2] = math.inf, -math.inf
    istate = np.array([ids.size, 0], dtype=np.int64)
    passes = 0
    while passes < max_passes and not istate[1] and time.perf_counter() - start <= budget:
        passes += kernel(Xw, yw, c_pos, c_neg, fw, u, dw, index, fstate, istate, rstate,
                         min(25, max_passes - passes), float(local_tol), lin, rho, sy,
                         sigma, _SPREAD)
    f1[ids] = fw
    return passes


def _offer(work: _WorkingSet, X: np.ndarray, y: np.ndarray, ids: np.ndarray,
           score: np.ndarray, solve: Any) -> tuple[int, int]:
    """Offer a chunk's candidate rows to the working set, solving it whenever it is full.

    The candidates fill the free room in order; when the set is full, ``solve`` (``None``:
    never) runs the local passes on it and drops its settled rows, and the filling goes
    on. When solving leaves the set more than half full (its rows do not settle), the
    remaining candidates compete by score instead (:meth:`_WorkingSet.add`). Returns the
    number of solves and their passes.
    """
    cap, at, solves, passes = work.score.size, 0, 0, 0
    while solve is not None and ids.size - at > cap - work.size:
        room = cap - work.size
        work.add(X[at:at + room], y[at:at + room], ids[at:at + room], score[at:at + room])
        at += room
        passes += solve()
        solves += 1
        if work.size > cap // SETTLED_ROOM:
            break
    work.add(X[at:], y[at:], ids[at:], score[at:])
    return solves, passes


def group_round(recipes: list[ChunkRecipe], _labels: None, state: tuple | None,
                gamma: float, positive: Any, c_pos: float, c_neg: float, w: np.ndarray,
                biases: np.ndarray, lin: float, rho: float, sy: float, sigma: float,
                epochs: int, local_tol: float, seed: int, engine: str, _rows: None = None,
                budget: float = math.inf, *, cap: int = 1 << 18
                ) -> tuple[tuple, dict[str, np.ndarray]]:
    """One CoCoA+ round of a group of chunks: certificate terms, then the local steps.

    ``state`` is the group's (multipliers, trial multipliers) of the previous round as
    float32 fractions of their costs (``None``: the zero start) and ``gamma`` the client's
    step between them; with local steps (``epochs >= 1``) the new point is written into
    these arrays chunk by chunk (no second copy of the group's state), without them the
    state is left as it is. The arguments are ``_block_round``'s (the group's recipes in
    place of the block, no labels or row subset) and ``cap``, the working set's rows.
    Returns the state and the sums of ``_block_round``, with the working set's rows at the
    end of the round, the candidate rows offered to it, and how often (with how many
    passes) it was solved when full (:func:`_offer`).
    """
    start = time.perf_counter()
    n = sum(rec.rows for rec in recipes)
    f0, f1 = ((np.zeros(n, np.float32), np.zeros(n, np.float32)) if state is None
              else state)
    kernel = _local_numba_fn() if engine == "numba" else _local_numpy
    u, dw = np.array(w, dtype=np.float64), np.zeros(w.size)
    fstate = np.array([0.0, math.inf, -math.inf, 0.0, 0.0, 0.0])
    rstate = np.array([seed], dtype=np.uint64)
    work, terms, lo, passes, offered = _WorkingSet(min(cap, n), w.size), None, 0, 0, 0
    solves = solve_passes = 0
    args = (float(c_pos), float(c_neg), u, dw, float(lin), float(rho), float(sy),
            float(sigma))
    for rec in recipes:
        X, y = _selected(*rec.load(), positive, None, np.int8)
        hi = lo + y.shape[0]
        alpha = _point(f0[lo:hi], f1[lo:hi], gamma)
        part = _certificate_terms(X, y, c_pos, c_neg, alpha, w, biases)
        terms = part if terms is None else _sum(terms, part)
        if epochs >= 1 and time.perf_counter() - start <= budget:
            f0[lo:hi] = alpha
            f1[lo:hi] = alpha
            # one pass over the chunk's rows (no shrinking: every row is visited)
            fstate[1], fstate[2] = math.inf, -math.inf
            index = np.arange(y.shape[0], dtype=np.int32)
            istate = np.array([y.shape[0], 0], dtype=np.int64)
            kernel(X, y, float(c_pos), float(c_neg), f1[lo:hi], u, dw, index, fstate,
                   istate, rstate, 1, 0.0, float(lin), float(rho), float(sy),
                   float(sigma), _SPREAD)
            passes = 1
            keep, score = _candidates(X, y, f1[lo:hi], u,
                                      lin + rho * (sy + sigma * float(fstate[0])))
            offered += keep.size

            def solve() -> int:  # the working set's passes, then its settled rows out
                done = _working_passes(work, f1, kernel, args, fstate, rstate, epochs - 1,
                                       local_tol, start, budget)
                work.settle(f1, u, lin + rho * (sy + sigma * float(fstate[0])))
                return done

            made = _offer(work, X[keep], y[keep], (lo + keep).astype(np.int64), score,
                          solve if epochs > 1 else None)
            solves, solve_passes = solves + made[0], solve_passes + made[1]
        elif epochs >= 1:  # out of time: the rest of the group keeps its multipliers
            f0[lo:hi] = alpha
            f1[lo:hi] = alpha
        lo = hi
        del X, y, alpha
    if epochs > 1 and work.size:
        passes += _working_passes(work, f1, kernel, args, fstate, rstate, epochs - passes,
                                  local_tol, start, budget)
    terms["working_rows"] = np.array(float(work.size))
    terms["candidates"] = np.array(float(offered))
    terms["solves"] = np.array(float(solves))
    terms["solve_passes"] = np.array(float(solve_passes))
    terms["dw"] = dw
    terms["passes"] = np.array(float(passes))
    terms["visits"] = np.array(float(fstate[5]))
    dpos, dneg = float(fstate[3]), float(fstate[4])
    terms["delta"] = np.array([dpos + dneg, dpos - dneg, dpos, dneg])
    return (f0, f1), terms


def fit_linear_svm_dask(X: Any, y: Any, positive: Any, C: float,
                        class_weight: dict | str | None, classes: np.ndarray,
                        options: dict | None) -> Solution:
    """The linear SVM on Dask arrays: streamed when ``X`` is not persisted, else in place.

    Same arguments and result as :func:`conicml.estimators._dask_linear.fit_linear_svm_dask`
    (the in-place fit); ``options`` adds ``stream``, ``blocks`` and ``working_rows``
    (:func:`stream_groups`, :func:`working_rows`).
    """
    import functools

    import dask

    t0 = time.perf_counter()
    opts = _options(options)  # every option checked, the in-place fit's too
    _, _, _, d = _blocks(X, y)  # the shapes checked
    cap = working_rows(opts["working_rows"], d)
    groups = stream_groups(X, y, opts)
    if groups is None:
        return fit_in_place(X, y, positive, C, class_weight, classes, options)
    none = [None] * len(groups)
    parts = [dask.delayed(group_counts)(g, positive) for g in groups]
    n_pos, n_neg, c_pos, c_neg = class_costs(groups, none, classes, positive, C,
                                             class_weight, parts)
    return fit_blocks(groups, none, d, positive, c_pos, c_neg, opts, n_pos=n_pos,
                      n_neg=n_neg, t0=t0, task=functools.partial(group_round, cap=cap))


def stream_groups(X: Any, y: Any, opts: dict[str, Any]) -> list | None:
    """The chunk recipes in groups when the fit streams (option ``stream``), else None.

    ``"auto"`` streams when no chunk of ``X`` or ``y`` is persisted (see
    :func:`lazy_groups`); the groups are ``blocks`` (default: the active client's worker
    threads).
    """
    from ..moments.distributed import as_dask_arrays, is_dask_array

    stream, blocks = opts["stream"], opts["blocks"]
    if stream not in ("auto", True, False):
        raise OptionError(f"dcd on Dask: stream must be 'auto', True or False, got "
                          f"{stream!r}")
    if blocks is not None and not (isinstance(blocks, (int, np.integer))
                                   and not isinstance(blocks, bool) and blocks >= 1):
        raise OptionError(f"dcd on Dask: blocks must be a positive integer or None, got "
                          f"{blocks!r}")
    if stream is False:
        return None
    X, y = as_dask_arrays(X, y)
    groups = None
    if is_dask_array(y):
        X = X.rechunk({1: -1})
        groups = lazy_groups(X, y.rechunk((X.chunks[0],)), blocks or _threads())
    if groups is None and stream is True:
        raise OptionError("dcd on Dask: stream=True needs X and y as dask arrays that are "
                          "not persisted (every chunk computed from a small task graph); "
                          "pass stream='auto' to fit persisted data in place")
    return groups


def _threads() -> int:
    """Worker threads of the active distributed client (this machine's cores without)."""
    import os

    try:
        from distributed import get_client

        return max(1, sum(get_client().nthreads().values()))
    except (ImportError, ValueError):
        return os.cpu_count() or 1
