r"""The linear soft-margin SVM on the row blocks of a Dask array (dual coordinate ascent).

The program is :func:`conicml.solvers.dcd`'s, with an unregularised bias:

.. math::

    \min_{w,b}\ \tfrac12\|w\|^2 + \sum_i c_i[1 - y_i(w^\top x_i + b)]_+ ,
    \qquad \max_{0\le\alpha\le c,\ y^\top\alpha=0}\ \mathbf 1^\top\alpha
    - \tfrac12\|X^\top(\alpha\circ y)\|^2 ,

solved by CoCoA+ rounds (Ma, Smith, Jaggi et al., ICML 2015, Alg. 1); the fit is OPTIMAL
only when the certified relative duality gap is at most ``tol``. Only vectors of length
:math:`d` and scalars travel between the client and the workers. The rounds, the bias
and the certificate are in the Notes of :func:`fit_linear_svm_dask`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .._utils.engines import resolve_engine
from ..exceptions import OptionError, ProgramError
from ..solution import Residuals, Solution
from ..solvers import Driver, Reason, message_table

__all__ = ["fit_blocks", "fit_linear_svm_dask", "labels_of"]

#: Offsets of the candidate biases around the current one (the hinge sum is convex and
#: piecewise linear in b: the client keeps the best candidate).
_BIAS_OFFSETS = np.array([0.0, -1.0, -0.3, -0.1, -0.03, -0.01, -0.003, -0.001,
                          0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0])

#: Widths of the margin band outside which the certificate's second dual point puts the
#: multipliers at their bounds.
_DELTAS = np.array([0.02, 0.1, 0.3])

#: Rows per chunk of the certificate's block-wise sums: its temporaries stay
#: O(chunk x candidates) whatever the block's size.
_CHUNK = 1 << 15

_OPTIONS = ("tol", "max_iter", "time_limit", "rho", "local_epochs", "local_tol", "sigma",
            "random_state", "verbose", "engine", "callback", "stream", "blocks",
            "working_rows")

#: Stop reason -> message (the driver's table; the gap is the block-wise certificate's).
_MESSAGES = message_table(
    "converged: relative duality gap {gap:.3g} <= tol {tol:g} after {rounds} rounds", {
        Reason.MAX_ITER: "max_iter = {rounds} rounds reached; relative gap {gap:.3g} > "
                         "tol {tol:g}",
        Reason.TIME_LIMIT: "time_limit reached after {rounds} rounds; relative gap "
                           "{gap:.3g} > tol {tol:g}",
        Reason.CALLBACK: "stopped by the callback after {rounds} rounds; relative gap "
                         "{gap:.3g} > tol {tol:g}",
    })


# -- block functions (run on the workers) ----------------------------------------------
def _block(Xb: Any, yb: Any, positive: Any, dtype: Any = np.float64
           ) -> tuple[np.ndarray, np.ndarray]:
    """The block as float64 rows (NaN / infinity refused) and labels +-1 of ``dtype``."""
    X = np.ascontiguousarray(Xb, dtype=np.float64)
    # the sum is finite when every entry is (it overflows only for entries near the
    # float64 limit, then counted exactly): no n x d temporary on the common path
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(X.sum())
    if not math.isfinite(total):
        bad = sum(int(X[lo:lo + _CHUNK].size - np.count_nonzero(np.isfinite(X[lo:lo + _CHUNK])))
                  for lo in range(0, X.shape[0], _CHUNK))
        if bad:
            raise ProgramError(f"X contains {bad} NaN or infinite value(s) (in one Dask "
                               "block)")
    y = np.where(np.asarray(yb) == positive, dtype(1), dtype(-1))
    return X, y


def _selected(Xb: Any, yb: Any, positive: Any, rows: tuple | None,
              dtype: Any = np.float64) -> tuple[np.ndarray, np.ndarray]:
    """The block's rows of one subset, optionally standardised.

    ``rows`` is ``None`` (every row) or ``(ids, node, shift, scale)``: the rows whose entry
    of the block's integer array ``ids`` is ``node`` (``node=None``: every row), mapped to
    ``(x - shift) / scale`` when ``shift`` is not ``None``.
    """
    X, y = _block(Xb, yb, positive, dtype)
    if rows is None:
        return X, y
    ids, node, shift, scale = rows
    if node is not None:
        keep = np.asarray(ids) == node
        X, y = X[keep], y[keep]
    if shift is not None:
        X = (X - shift) / scale
    return X, y


def _block_labels(yb: Any) -> np.ndarray:
    return np.unique(np.asarray(yb))


def _block_counts(Xb: Any, yb: Any, positive: Any, rows: tuple | None = None
                  ) -> dict[str, np.ndarray]:
    _, y = _selected(Xb, yb, positive, rows)
    return {"n_pos": np.array(float(np.count_nonzero(y > 0))),
            "n_neg": np.array(float(np.count_nonzero(y < 0)))}


_MASK = (1 << 64) - 1
#: Local passes between two looks at the round's time budget.
_CHECK_EVERY = 25

#: The shrinking thresholds' cap, in root mean squares of a pass's nonzero projected
#: gradients (:func:`_local_numpy`).
_SPREAD = 1.0


def _draw(state: int, m: int) -> tuple[int, int]:
    """SplitMix64 (Steele, Lea & Flood 2014): the next state and a draw in ``[0, m)``."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, (z ^ (z >> 31)) % m


def _local_numpy(X, y, c_pos, c_neg, frac, u, dw, index, fstate, istate, rstate, passes,
                 eps, lin, rho, sy, sigma, spread):
    r"""CoCoA+ local coordinate ascent with shrinking (after Hsieh et al. 2008, Alg. 3).

    Up to ``passes`` passes over the block's active rows (the prefix ``istate[0]`` of
    ``index``), each in a fresh random order: a Fisher-Yates shuffle driven by SplitMix64
    from ``rstate[0]``, so both engines visit the same rows (a uniformly random order over
    the whole block: visiting the rows segment by segment, though kinder to the caches,
    makes the ascent markedly slower per pass). ``y`` holds +-1 (int8), the costs are
    ``c_pos`` / ``c_neg`` by class and ``frac`` the multipliers as fractions of their cost
    (float32: :math:`\alpha_i = c_i\,\mathrm{frac}_i`, exact at both bounds); every step
    is taken to the stored value, so ``dw`` and ``u`` are those of the stored multipliers.
    ``u`` is :math:`w + \sigma'\Delta w`, ``fstate`` holds :math:`y^\top\Delta\alpha`,
    the shrinking thresholds, the steps' sums per class and the row visits; all the
    state is updated in place, so a later call resumes. Sets ``istate[1] = 1`` when the
    projected gradients' spread over every row is at most ``eps``. Returns the passes
    made. :func:`_local_numba_fn` compiles the same loop.

    Shrinking: a multiplier at 0 whose gradient exceeds the threshold :math:`\bar M`
    (at :math:`c_i`: is below :math:`-\bar m`) is skipped until the active rows
    converge. LIBLINEAR takes :math:`\bar M` as the previous pass's largest projected
    gradient; an extreme over the rows grows with their number, so more rows stay
    active on a larger block. Here it is capped by :math:`s\,r`, ``spread`` times the
    root mean square :math:`r` of the pass's nonzero projected gradients (an average
    over the rows): :math:`\bar M = \min(\max_i PG_i, s\,r)` and :math:`\bar m =
    \min(-\min_i PG_i, s\,r)`, so the share of rows kept active does not depend on
    the block's size (``spread = inf`` is LIBLINEAR's rule).
    """
    n = y.shape[0]
    dsy, pg_max_old, pg_min_old = float(fstate[0]), float(fstate[1]), float(fstate[2])
    dpos, dneg, visits = float(fstate[3]), float(fstate[4]), float(fstate[5])
    active, state = int(istate[0]), int(rstate[0])
    done = 0
    while done < passes:
        done += 1
        for s in range(active - 1, 0, -1):
            state, k = _draw(state, s + 1)
            index[s], index[k] = index[k], index[s]
        pg_max, pg_min = -math.inf, math.inf
        ssq, cnt = 0.0, 0
        visits += active
        s = 0
        while s < active:
            i = index[s]
            yi = 1.0 if y[i] > 0 else -1.0
            ci = c_pos if y[i] > 0 else c_neg
            G = yi * (float(X[i] @ u) + lin + rho * (sy + sigma * dsy)) - 1.0
            a = float(frac[i]) * ci
            if a == 0.0:
                if G > pg_max_old:  # shrunk: stays at 0 while the others move
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                pg = min(G, 0.0)
            elif a == ci:
                if G < pg_min_old:  # shrunk: stays at c_i
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                pg = max(G, 0.0)
            else:
                pg = G
            pg_max, pg_min = max(pg_max, pg), min(pg_min, pg)
            if pg != 0.0:
                ssq += pg * pg
                cnt += 1
                sq = float(X[i] @ X[i])
                new = min(max(a - G / (sigma * (sq + rho)), 0.0), ci)
                stored = np.float32(new / ci)
                frac[i] = stored
                step = float(stored) * ci - a
                if yi > 0.0:
                    dpos += step
                else:
                    dneg += step
                d = step * yi
                dw += d * X[i]
                u += (sigma * d) * X[i]
                dsy += d
            s += 1
        if pg_max - pg_min <= eps:
            if active == n:
                istate[1] = 1
                break
            active = n  # converged on the active rows: look at every row once more
            pg_max_old, pg_min_old = math.inf, -math.inf
            continue
        # the next pass's shrinking thresholds: the extremes capped by the spread
        # (root mean square) of the pass's nonzero projected gradients
        r = spread * math.sqrt(ssq / cnt) if cnt > 0 else math.inf
        pg_max_old = min(pg_max, r) if pg_max > 0.0 else math.inf
        pg_min_old = max(pg_min, -r) if pg_min < 0.0 else -math.inf
    fstate[:] = dsy, pg_max_old, pg_min_old, dpos, dneg, visits
    istate[0], rstate[0] = active, np.uint64(state)
    return done


def _local_numba_fn() -> Any:
    from ._dask_local_numba import local

    return local


def local_ascent(X: np.ndarray, y: np.ndarray, c_pos: float, c_neg: float,
                 frac: np.ndarray, u: np.ndarray, lin: float, rho: float, sy: float,
                 sigma: float, epochs: int, eps: float, seed: int, engine: str,
                 budget: float = math.inf) -> dict[str, Any]:
    r"""The block's CoCoA+ local solve from ``frac`` (float32, updated in place).

    ``u`` starts at :math:`w` and is updated in place to :math:`w + \sigma'\Delta w`.
    At most ``epochs`` passes, fewer when the subproblem is solved to the
    projected-gradient spread ``eps`` or when ``budget`` seconds are spent (looked at
    every :data:`_CHECK_EVERY` passes). Returns the block's :math:`\Delta w_k`, its
    :math:`y^\top\Delta\alpha` (``dsy``), the steps' sums per class ``dpos``, ``dneg``,
    the ``passes`` and the row ``visits`` they made.
    """
    n, d = X.shape
    index = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    dw = np.zeros(d)
    fstate = np.array([0.0, math.inf, -math.inf, 0.0, 0.0, 0.0])
    istate = np.array([n, 0], dtype=np.int64)
    rstate = np.array([seed], dtype=np.uint64)
    kernel = _local_numba_fn() if engine == "numba" else _local_numpy
    start, passes = time.perf_counter(), 0
    while passes < epochs and not istate[1]:
        passes += kernel(X, y, float(c_pos), float(c_neg), frac, u, dw, index, fstate,
                         istate, rstate, min(_CHECK_EVERY, epochs - passes),
                         float(eps), float(lin), float(rho), float(sy), float(sigma),
                         _SPREAD)
        if time.perf_counter() - start > budget:
            break
    return {"dw": dw, "dsy": float(fstate[0]), "dpos": float(fstate[3]),
            "dneg": float(fstate[4]), "passes": passes, "visits": float(fstate[5])}


def _point(f0: np.ndarray, f1: np.ndarray, gamma: float) -> np.ndarray:
    r"""The stored (float32) fractions of :math:`\alpha_0 + \gamma(\alpha_1 - \alpha_0)`."""
    if gamma == 0.0:
        return f0.copy()
    if gamma == 1.0:
        return f1.copy()
    out = (f0 + np.float32(gamma) * (f1 - f0)).astype(np.float32, copy=False)
    return np.clip(out, 0.0, 1.0, out=out)  # rounding only: both ends are in [0, 1]


def _certificate_terms(X: np.ndarray, y: np.ndarray, c_pos: float, c_neg: float,
                       frac: np.ndarray, w: np.ndarray, biases: np.ndarray
                       ) -> dict[str, np.ndarray]:
    r"""The block's sums for the certificate of the point ``(w, alpha)``, chunk by chunk.

    :math:`\alpha_i = c_i\,\mathrm{frac}_i` (in float64). Per candidate bias the hinge sum
    :math:`\sum_i c_i[1 - y_i(f_i + b)]_+`; the KKT bias terms of the free multipliers;
    per candidate dual point and class the mass :math:`\sum_i a_i` and :math:`\sum_i a_ix_i`:
    candidate 0 is :math:`\alpha` itself, candidates 1.. put the multipliers of the rows off
    the margin band of each width in :data:`_DELTAS` at their bounds. The client makes
    each candidate feasible from these class sums (:func:`feasible_dual`).
    """
    n, d = X.shape
    hinge, kkt = np.zeros(biases.size), np.zeros(2)
    mass, vec = np.zeros((_DELTAS.size + 1, 2)), np.zeros((_DELTAS.size + 1, 2, d))
    for lo in range(0, n, _CHUNK):
        Xc, pos = X[lo:lo + _CHUNK], y[lo:lo + _CHUNK] > 0
        yc = np.where(pos, 1.0, -1.0)
        cc = np.where(pos, c_pos, c_neg)
        ac = frac[lo:lo + _CHUNK] * cc
        f = Xc @ w
        # primal: sum_i c_i [1 - y_i (f_i + b)]_+ for every candidate b
        for j, b in enumerate(biases):
            hinge[j] += cc @ np.maximum(0.0, 1.0 - yc * (f + b))
        # the KKT bias of the incoming point: the mean of y_i - f_i over its free multipliers
        free = (ac > 0.0) & (ac < cc)
        kkt += float(np.sum(yc[free] - f[free])), float(np.count_nonzero(free))
        # the multipliers of the rows clearly off the margin set to their bound (c_i
        # inside, 0 outside), the others kept: per width delta and class, the mass and
        # the sum of a_i x_i
        margin = yc * (f + biases[0])
        for j in range(_DELTAS.size + 1):
            a = ac if j == 0 else np.where(
                margin < 1.0 - _DELTAS[j - 1], cc,
                np.where(margin > 1.0 + _DELTAS[j - 1], 0.0, ac))
            a_pos = np.where(pos, a, 0.0)
            a_neg = a - a_pos
            mass[j] += a_pos.sum(), a_neg.sum()
            vec[j, 0] += a_pos @ Xc
            vec[j, 1] += a_neg @ Xc
    return {"hinge": hinge, "kkt": kkt, "mass": mass, "vec": vec}


def _block_round(Xb: Any, yb: Any, state: tuple, gamma: float, positive: Any,
                 c_pos: float, c_neg: float, w: np.ndarray, biases: np.ndarray,
                 lin: float, rho: float, sy: float, sigma: float, epochs: int,
                 local_tol: float, seed: int, engine: str, rows: tuple | None = None,
                 budget: float = math.inf) -> tuple[tuple, dict[str, np.ndarray]]:
    r"""Certificate terms of the incoming point, then the local CoCoA+ updates.

    ``state`` is the block's (multipliers, trial multipliers) of the previous round, as
    float32 fractions of their costs, and ``gamma`` the step the client chose between
    them; ``None`` is the zero start (4 bytes per row and point: the state kept between
    rounds). Returns the new state (kept on the worker) and the small sums that travel to
    the client. ``rows`` selects the block's rows of a subset (see :func:`_selected`).
    """
    X, y = _selected(Xb, yb, positive, rows, np.int8)
    f0, f1 = ((np.zeros(y.shape[0], np.float32),) * 2 if state is None else state)
    alpha = _point(f0, f1, gamma)
    out = _certificate_terms(X, y, c_pos, c_neg, alpha, w, biases)
    # local dual coordinate ascent on the block's subproblem, from alpha
    trial = alpha.copy()
    local = local_ascent(X, y, c_pos, c_neg, trial, np.array(w, dtype=np.float64), lin,
                         rho, sy, sigma, epochs, local_tol, seed, engine, budget)
    out["dw"] = local["dw"]
    out["passes"] = np.array(float(local["passes"]))
    out["visits"] = np.array(float(local["visits"]))
    # the direction's linear terms (for the client's line search and the balancing)
    dpos, dneg = local["dpos"], local["dneg"]
    out["delta"] = np.array([dpos + dneg, dpos - dneg, dpos, dneg])
    return (alpha, trial), out


def _sum(*parts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = {k: np.array(v, dtype=float, copy=True) for k, v in parts[0].items()}
    for part in parts[1:]:
        for k, v in part.items():
            out[k] += v
    return out


def _tree(dask: Any, parts: list) -> Any:
    while len(parts) > 1:  # each task sums at most 8 partials
        parts = [dask.delayed(_sum)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    return parts[0]


def _blocks(X: Any, y: Any) -> tuple[list, list, tuple[int, ...], int]:
    from ..moments.distributed import row_blocks

    Xd, yd, d = row_blocks(X, y)
    return Xd, yd, tuple(int(c) for c in X.chunks[0]), d


def labels_of(y: Any) -> np.ndarray:
    """The sorted distinct labels of a Dask array (a map-reduce of per-block sets)."""
    import dask

    from ..moments.distributed import is_dask_array

    blocks = y.to_delayed().ravel() if is_dask_array(y) else [np.asarray(y)]
    parts = dask.compute(*[dask.delayed(_block_labels)(b) for b in blocks])
    return np.unique(np.concatenate(parts))


# -- the client's loop -------------------------------------------------------------------
def _options(options: dict | None) -> dict[str, Any]:
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(_OPTIONS))
    if unknown:
        raise OptionError(f"dcd on Dask: unknown solver_options {unknown}; "
                          f"accepted: {list(_OPTIONS)}")
    out = {"tol": 1e-3, "max_iter": 500, "time_limit": None, "rho": 1.0,
           "local_epochs": 300, "local_tol": 0.01, "sigma": None, "random_state": 0,
           "verbose": False, "engine": "auto", "callback": None, "stream": "auto",
           "blocks": None, "working_rows": None}
    out.update(opts)
    # tol, max_iter, time_limit and callback: the driver's own checks
    Driver("dcd on Dask", tol=out["tol"], max_iter=out["max_iter"],
           time_limit=out["time_limit"], messages=_MESSAGES, callback=out["callback"])
    for key in ("rho", "local_tol"):
        v = out[key]
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
                and math.isfinite(v)):
            raise OptionError(f"dcd on Dask: {key} must be a positive number, got {v!r}")
    v = out["local_epochs"]
    if not (isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1):
        raise OptionError(f"dcd on Dask: local_epochs must be a positive integer, got {v!r}")
    out["engine"] = resolve_engine("dcd", out["engine"])
    # stream, blocks, working_rows: checked by the streamed fit (:mod:`._dask_stream`)
    return out


def relative_gap(P: float, D: float) -> float:
    """The certified :math:`(P - D)/|P|` (0 when :math:`D \\ge P` by round-off)."""
    return max(P - D, 0.0) / max(abs(P), np.finfo(float).tiny)


def feasible_dual(mass: np.ndarray, vec: np.ndarray) -> float:
    r"""The best dual value of candidate multipliers given by their class sums.

    ``mass[j]`` holds candidate ``j``'s :math:`(\sum_{y_i=1}\alpha_i, \sum_{y_i=-1}\alpha_i)`
    and ``vec[j]`` the matching :math:`\sum\alpha_ix_i`; each is made feasible (the heavier
    class scaled down to :math:`y^\top\alpha = 0`, in the box) and scaled by the best
    :math:`s \in [0, 1]`: :math:`D(s\alpha) = s\mathbf 1^\top\alpha -
    \tfrac{s^2}2\|\sum_i\alpha_iy_ix_i\|^2`. Returns 0 (the value of :math:`\alpha = 0`)
    when no candidate does better.
    """
    best = 0.0
    for (m_pos, m_neg), (v_pos, v_neg) in zip(mass, vec):
        if m_pos <= 0.0 or m_neg <= 0.0:
            continue
        f_pos, f_neg = min(1.0, m_neg / m_pos), min(1.0, m_pos / m_neg)
        S = f_pos * m_pos + f_neg * m_neg
        wh = f_pos * v_pos - f_neg * v_neg
        q = float(wh @ wh)
        s = 1.0 if q <= S else S / q  # argmax over [0, 1] of s S - s^2 q / 2
        best = max(best, s * S - 0.5 * s * s * q)
    return best


def fit_linear_svm_dask(X: Any, y: Any, positive: Any, C: float,
                        class_weight: dict | str | None, classes: np.ndarray,
                        options: dict | None) -> Solution:
    """Fit the linear soft-margin SVM with an unregularised bias on a Dask array.

    ``positive`` is the label that maps to :math:`+1`; ``class_weight`` is keyed by the
    original labels (or ``"balanced"``). Returns a :class:`Solution` with ``values["w"]``
    and ``values["b"]`` and the block-wise certificate in ``residuals`` / ``extras``.

    Notes
    -----
    **Rounds (CoCoA+, Ma, Smith, Jaggi et al., ICML 2015, Algorithm 1 with adding,**
    :math:`\\gamma = 1`, :math:`\\sigma' = K`). The multipliers :math:`\\alpha_{[k]}` of block
    :math:`k` live on the worker holding the block. Each round the client sends :math:`w`;
    every worker runs up to ``local_epochs`` passes of exact coordinate ascent on its local
    subproblem (eq. (9) of the paper), with shrinking (Hsieh et al. 2008, Alg. 3: a
    multiplier at a bound whose gradient points out of the box by more than a threshold
    is skipped until the active rows converge; the threshold is capped by the root mean
    square of the pass's projected gradients, so that it does not grow with the block's
    rows, see :func:`_local_numpy`), stopping early when the projected gradients' spread is at
    most ``local_tol`` (any ascent of the local subproblem keeps CoCoA+'s guarantee)

    .. math::

        \\max_{\\Delta\\alpha_{[k]}}\\ \\mathbf 1^\\top\\Delta\\alpha_{[k]}
        - w^\\top A_k\\Delta\\alpha_{[k]} - \\tfrac{\\sigma'}2\\|A_k\\Delta\\alpha_{[k]}\\|^2,
        \\qquad A_k\\Delta\\alpha = \\textstyle\\sum_{i\\in k}\\Delta\\alpha_i y_ix_i ,

    so a coordinate step is :math:`\\alpha_i \\leftarrow \\min(\\max(\\alpha_i -
    G_i/(\\sigma' Q_{ii}), 0), c_i)` with :math:`G_i` evaluated at :math:`w + \\sigma'
    A_k\\Delta\\alpha_{[k]}`, and returns :math:`\\Delta w_k = A_k\\Delta\\alpha_{[k]}`; the client
    adds them, :math:`w \\leftarrow w + \\gamma\\sum_k \\Delta w_k`. With :math:`\\sigma' = K`
    the sum of the local objectives bounds the global dual from below, so :math:`\\gamma = 1`
    (CoCoA+'s adding) increases it every round (Lemma 4 of the paper) for any number of
    blocks; the client takes the exact maximiser of the (quadratic) augmented dual along the
    summed direction over :math:`\\gamma \\in [0, 1]`, never worse than adding (option
    ``sigma``: a smaller :math:`\\sigma'` makes bolder local steps that the line search
    then shortens).

    **The bias** is handled as in ``dcd``: the equality :math:`y^\\top\\alpha = 0` by the method
    of multipliers, i.e. the augmented feature :math:`\\sqrt\\rho` (one more coordinate of
    :math:`w`, :math:`\\sqrt\\rho\\,y^\\top\\alpha`) and the linear term :math:`\\lambda
    y^\\top\\alpha`; the multiplier :math:`\\lambda \\leftarrow \\lambda + \\rho y^\\top\\alpha`
    after every round makes :math:`b = \\lambda + \\rho y^\\top\\alpha` the current bias.

    **Certificate** (at the start of every round, in the same pass over the blocks). The
    primal value :math:`P(w, b)` of the current :math:`w` is the map-reduce of per-block
    hinge sums, evaluated for a few candidate biases at once (the current one, the KKT
    bias of the free multipliers and a grid around them); the dual value is that of
    :math:`\\alpha` made exactly feasible (the heavier class's free multipliers scaled down
    until :math:`y^\\top\\alpha = 0`, as ``dcd`` does), :math:`D = \\mathbf 1^\\top\\hat\\alpha -
    \\tfrac12\\|\\hat w\\|^2` with :math:`\\hat w = \\sum_k A_k\\hat\\alpha_{[k]}`, summed from the
    blocks. By weak duality :math:`P(w, b) - D` bounds the suboptimality of :math:`(w, b)`;
    every :math:`P` bounds the optimum from above and every :math:`D` from below, so the
    certificate is the best primal point against the best dual value seen, and the fit is
    OPTIMAL only when :math:`(P - D)/|P| \\le` ``tol`` (relative to :math:`|P|` itself,
    not to :math:`\\max(1, |P|)`: the nodes of H-LSVM have objectives far below 1, where
    an absolute gap would certify :math:`w = 0`).

    Only vectors of length :math:`d` and scalars travel between the client and the workers.
    """

    t0 = time.perf_counter()
    opts = _options(options)
    Xd, yd, _, d = _blocks(X, y)
    n_pos, n_neg, c_pos, c_neg = class_costs(Xd, yd, classes, positive, C, class_weight)
    return fit_blocks(Xd, yd, d, positive, c_pos, c_neg, opts, n_pos=n_pos, n_neg=n_neg,
                      t0=t0)


def class_costs(Xd: list, yd: list, classes: Any, positive: Any, C: float,
                class_weight: Any, parts: list | None = None
                ) -> tuple[float, float, float, float]:
    """Class counts from one pass over the blocks and the per-class slack costs.

    Returns ``(n_pos, n_neg, c_pos, c_neg)``: ``C`` times scikit-learn's class weight
    (``"balanced"``: ``n / (2 n_class)``); one class only is a :class:`ProgramError`.
    ``parts`` replaces the blocks' delayed counts (the streamed groups').
    """
    import dask

    if parts is None:
        parts = [dask.delayed(_block_counts)(xb, yb, positive) for xb, yb in zip(Xd, yd)]
    counts = _tree(dask, parts).compute()
    n_pos, n_neg = float(counts["n_pos"]), float(counts["n_neg"])
    if n_pos == 0 or n_neg == 0:
        raise ProgramError("y contains a single class; the SVM needs two")
    negative = classes[0] if classes[1] == positive else classes[1]
    if class_weight == "balanced":
        n = n_pos + n_neg
        weight = {positive: n / (2 * n_pos), negative: n / (2 * n_neg)}
    else:
        weight = dict(class_weight or {})
    c_pos = float(C) * float(weight.get(positive, 1.0))
    c_neg = float(C) * float(weight.get(negative, 1.0))
    return n_pos, n_neg, c_pos, c_neg


def fit_blocks(Xd: list, yd: list, d: int, positive: Any, c_pos: float, c_neg: float,
               opts: dict[str, Any], *, n_pos: float, n_neg: float,
               rows: list | None = None, t0: float | None = None,
               task: Any = None) -> Solution:
    """The CoCoA+ rounds on delayed row blocks (costs ``c_pos``, ``c_neg`` per class).

    ``opts`` are checked options (:func:`_options`); ``rows`` ``None`` trains on every
    row, else one ``(ids, node, shift, scale)`` per block selects and standardises a
    subset on the workers (:func:`_selected`); ``n_pos``, ``n_neg`` count its classes.
    ``task``: a block's round task in place of :func:`_block_round`, called with its
    arguments (the streamed groups' :func:`~._dask_stream.group_round`).
    The rounds run on the shared iterative driver (:mod:`conicml.solvers._driver`).
    """
    t0 = time.perf_counter() if t0 is None else t0
    driver = Driver("dcd on Dask", tol=opts["tol"], max_iter=opts["max_iter"],
                    time_limit=opts["time_limit"], messages=_MESSAGES,
                    callback=opts["callback"])
    rounds = _Rounds(Xd, yd, d, positive, c_pos, c_neg, opts, rows, task)
    stream = task is not None
    setup_time = time.perf_counter() - t0
    driver.start()

    def step(k: int) -> float:
        remaining = (math.inf if opts["time_limit"] is None
                     else max(0.0, opts["time_limit"] - driver.elapsed))
        return rounds.run(k, budget=remaining)

    reason, done, gap = driver.run(step, math.inf, rounds.values)
    if reason != Reason.CONVERGED and rounds.pending:
        # the last round's local steps are not certified yet: one pass without local steps
        gap = rounds.run(done, budget=0.0, local=False)
        if driver.converged(gap):
            reason = Reason.CONVERGED
    status, message = driver.finish(reason, gap=gap, tol=driver.tol, rounds=done)
    w_best, b, P = rounds.best
    residuals = Residuals(primal=0.0, dual=gap, gap=gap, source="solver")
    extras = {"b": b, "primal_objective": P, "dual_objective": rounds.D_best,
              "rounds": done, "blocks": len(Xd), "local_epochs": int(opts["local_epochs"]),
              "local_passes": rounds.passes,
              "visits_per_row": rounds.visits / max(n_pos + n_neg, 1.0), "rho": rounds.rho,
              "sigma": rounds.sigma,
              "multiplier": rounds.lin, "engine": opts["engine"], "n_pos": int(n_pos),
              "n_neg": int(n_neg), "distributed": True, "stop_reason": int(reason),
              "stream": stream}
    if stream:  # the largest working set of a round, summed over the groups, and the
        # solves of a full working set during the rounds' streamed passes
        extras["working_rows"] = rounds.working
        extras["working_set_solves"] = rounds.solves
    return Solution(status=status, solver="dcd", objective=P,
                    values={"w": w_best, "b": b}, iterations=done,
                    setup_time=setup_time, solve_time=driver.elapsed,
                    residuals=residuals, message=message, extras=extras)


class _Rounds:
    """The client's state of the CoCoA+ rounds; :meth:`run` makes one round."""

    def __init__(self, Xd: list, yd: list, d: int, positive: Any, c_pos: float,
                 c_neg: float, opts: dict[str, Any], rows: list | None,
                 task: Any = None) -> None:
        self.Xd, self.yd, self.positive = Xd, yd, positive
        self.c_pos, self.c_neg, self.opts = c_pos, c_neg, opts
        K = len(Xd)
        self.rows = [None] * K if rows is None else rows
        self.rho = float(opts["rho"])
        self.sigma = float(K) if opts["sigma"] is None else float(opts["sigma"])
        self.rng = np.random.default_rng(opts["random_state"])
        self.states: list = [None] * K
        self.w = np.zeros(d)
        self.lin = self.sy = self.gamma = 0.0
        self.b_kkt = 0.0
        self.best: tuple | None = None
        self.D_best = -math.inf
        self.passes, self.visits, self.pending = 0.0, 0.0, False
        self.task, self.working, self.solves = task or _block_round, 0, 0

    def values(self) -> dict[str, Any]:
        """The best certified point so far (for the callback)."""
        return {"w": self.best[0].copy(), "b": self.best[1]}

    def run(self, k: int, budget: float, local: bool = True) -> float:
        """Round ``k``: certify the incoming point and (``local``) make the CoCoA+ step.

        Returns the certified relative gap of the best primal point against the best dual
        value seen. ``budget`` caps the seconds of each block's local steps.
        """
        import dask

        opts, K = self.opts, len(self.Xd)
        b_cur = self.lin + self.rho * self.sy
        biases = np.concatenate([b_cur + _BIAS_OFFSETS, [self.b_kkt]])
        seeds = self.rng.integers(2**31 - 1, size=K)
        epochs = int(opts["local_epochs"]) if local else 0
        parts = [dask.delayed(self.task, nout=2)(
            xb, yb, st, self.gamma, self.positive, self.c_pos, self.c_neg, self.w, biases,
            self.lin, self.rho, self.sy, self.sigma, epochs, float(opts["local_tol"]),
            int(s), opts["engine"], sel, budget)
            for xb, yb, st, s, sel in zip(self.Xd, self.yd, self.states, seeds, self.rows)]
        # one graph per round: the new multipliers stay on the workers (persisted), the
        # sums are reduced in a tree and only their total is fetched
        *new_states, total = dask.persist(*[p[0] for p in parts],
                                          _tree(dask, [p[1] for p in parts]))
        sums = total.compute()
        gap = self._certify(sums, biases)
        if opts["verbose"]:
            print(f"dcd on Dask: round {k:4d}  P {self.best[2]:.8g}  D {self.D_best:.8g}  "
                  f"gap {gap:.3g}  b {self.best[1]:.6g}  step {self.gamma:.3g}  "
                  f"local passes {float(sums['passes']) / K:.0f}"
                  + (f"  working set {float(sums['working_rows']):.0f} rows of "
                     f"{float(sums['candidates']):.0f} offered, solved "
                     f"{float(sums['solves']):.0f}x mid-round "
                     f"({float(sums['solve_passes']):.0f} passes)"
                     if "candidates" in sums else ""), flush=True)
        self.pending = local
        if local:
            self.passes += float(sums["passes"]) / K
            self.visits += float(sums["visits"])
            self.working = max(self.working, int(sums.get("working_rows", 0)))
            self.solves += int(sums.get("solves", 0))
            self.states = new_states
            self._step(sums, b_cur)
        return gap

    def _certify(self, sums: dict[str, np.ndarray], biases: np.ndarray) -> float:
        # every P is an upper and every D a lower bound of the same optimum: the
        # certificate is the best primal point against the best dual value seen; the
        # dual candidates are made feasible from their class sums (candidate 0: alpha)
        hinge = sums["hinge"]
        j = int(np.argmin(hinge))
        P = 0.5 * float(self.w @ self.w) + float(hinge[j])
        D = feasible_dual(sums["mass"], sums["vec"])
        if self.best is None or P < self.best[2]:
            self.best = (self.w.copy(), float(biases[j]), P)
        self.D_best = max(self.D_best, D)
        P = self.best[2]
        return relative_gap(P, self.D_best)

    def _step(self, sums: dict[str, np.ndarray], b_cur: float) -> None:
        # the step gamma along the sum of the blocks' directions (CoCoA+ adding is
        # gamma = 1): the exact minimiser in [0, 1] of the augmented dual
        # F = 1/2 |w|^2 - 1'alpha + lambda y'alpha + rho/2 (y'alpha)^2, a quadratic in gamma
        rho, dw = self.rho, sums["dw"]
        s1, sy_d, _, _ = (float(v) for v in sums["delta"])
        slope = float(self.w @ dw) - s1 + (self.lin + rho * self.sy) * sy_d
        curv = float(dw @ dw) + rho * sy_d * sy_d
        self.gamma = (0.0 if slope >= 0.0 else 1.0 if curv <= 0.0
                      else min(1.0, -slope / curv))
        self.w = self.w + self.gamma * dw
        # y'alpha of the incoming point as the workers summed it (no drift), plus the step
        (m_pos, m_neg) = sums["mass"][0]
        self.sy = float(m_pos - m_neg) + self.gamma * sy_d
        self.lin += rho * self.sy  # the multiplier step: lambda + rho y'alpha is the bias
        kkt_sum, kkt_count = sums["kkt"]
        self.b_kkt = float(kkt_sum / kkt_count) if kkt_count > 0 else b_cur
