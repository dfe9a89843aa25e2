r"""H-LSVM grown on the row blocks of a Dask array, level by level (seed 001 ch. 5).

Every block keeps, on its worker, one integer per row: the tree node the row has reached
(``-1`` for a row of the held-out pruning set, drawn per block with probability
``pruning_fraction``). A level of the tree costs, over all its nodes at once:

* the node SVMs (5.3), each trained by the CoCoA+ rounds of
  :mod:`conicml.estimators._dask_linear` on the rows whose id is the node (the mask is
  taken on the worker; standardisation too);
* one pass for the class counts of the candidate splits (the impurity test);
* one pass that moves the rows of the accepted splits to their children's ids.

A node with at most :data:`GATHER_MAX_ROWS` growing rows is gathered to the client
once (standardised) and its subtree grown there by the in-memory node solvers. Pruning
(A17) routes the held-out rows through every subtree of the cost-complexity sequence on
the workers and returns one weighted error per subtree. Only hyperplanes, counts and
the gathered small nodes travel.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .._utils.deprecation import renamed_param
from ..exceptions import OptionError, ProgramError
from ._base import warn_if_constant_score
from ._dask_linear import _block, _blocks, _options, fit_blocks, labels_of
from ._hlsvm_tree import FrozenTree, Tree, _reachable, cost_complexity_sequence, entropy

__all__ = ["GATHER_MAX_ROWS", "fit_hlsvm_dask"]

#: A node with at most this many growing rows is gathered and grown on the client.
GATHER_MAX_ROWS = 20_000


# -- block functions (run on the workers) ----------------------------------------------
def _init_ids(yb: Any, seed: int, fraction: float) -> np.ndarray:
    """0 (the root) for a growing row, -1 for a held-out one (probability ``fraction``)."""
    n = np.asarray(yb).shape[0]
    held = np.random.default_rng(seed).random(n) < fraction
    return np.where(held, -1, 0).astype(np.int64)


def _root_stats(Xb: Any, yb: Any, ids: np.ndarray, positive: Any) -> dict[str, Any]:
    """Class counts of the growing and held-out rows; column moments of the growing rows."""
    X, y = _block(Xb, yb, positive)
    grow = ids == 0
    Xg = X[grow]
    n = Xg.shape[0]
    mean = Xg.mean(axis=0) if n else np.zeros(X.shape[1])
    m2 = ((Xg - mean) ** 2).sum(axis=0)
    yg, yh = y[grow], y[ids < 0]
    counts = np.array([np.count_nonzero(yg > 0), np.count_nonzero(yg < 0),
                       np.count_nonzero(yh > 0), np.count_nonzero(yh < 0)], dtype=float)
    return {"counts": counts, "moments": (float(n), mean, m2)}


def _merge_root(*parts: dict[str, Any]) -> dict[str, Any]:
    # column means and centred sums of squares merged pairwise (Chan, Golub & LeVeque)
    counts = sum(p["counts"] for p in parts)
    n, mean, m2 = parts[0]["moments"]
    for p in parts[1:]:
        nb, mb, m2b = p["moments"]
        if nb == 0:
            continue
        total = n + nb
        delta = mb - mean
        mean = mean + delta * (nb / total)
        m2 = m2 + m2b + delta ** 2 * (n * nb / total)
        n = total
    return {"counts": counts, "moments": (n, mean, m2)}


def _standardised(X: np.ndarray, shift: np.ndarray | None, scale: np.ndarray | None
                  ) -> np.ndarray:
    return X if shift is None else (X - shift) / scale


def _split_counts(Xb: Any, yb: Any, ids: np.ndarray, positive: Any, planes: list,
                  shift: np.ndarray | None, scale: np.ndarray | None) -> np.ndarray:
    """Per candidate ``(node, w, b)``: (left +, left -, right +, right -) and the two
    sides' column sums of the raw rows (``(planes, 4 + 2d)``)."""
    X, y = _block(Xb, yb, positive)
    d = X.shape[1]
    out = np.zeros((len(planes), 4 + 2 * d))
    for j, (node, w, b) in enumerate(planes):
        rows = ids == node
        if not np.any(rows):
            continue
        Xn, yn = X[rows], y[rows]
        left = _standardised(Xn, shift, scale) @ w + b <= 0.0
        out[j, :4] = (np.count_nonzero(yn[left] > 0), np.count_nonzero(yn[left] < 0),
                      np.count_nonzero(yn[~left] > 0), np.count_nonzero(yn[~left] < 0))
        out[j, 4:4 + d] = Xn[left].sum(axis=0)
        out[j, 4 + d:] = Xn[~left].sum(axis=0)
    return out


def _route_ids(Xb: Any, ids: np.ndarray, splits: list, shift: np.ndarray | None,
               scale: np.ndarray | None) -> np.ndarray:
    """The rows of each accepted split ``(node, w, b, left, right)`` moved to a child."""
    X = np.asarray(Xb, dtype=np.float64)
    new = ids.copy()
    for node, w, b, left, right in splits:
        rows = np.flatnonzero(ids == node)
        if rows.size == 0:
            continue
        go_left = _standardised(X[rows], shift, scale) @ w + b <= 0.0
        new[rows] = np.where(go_left, left, right)
    return new


def _gather(Xb: Any, yb: Any, ids: np.ndarray, positive: Any, nodes: list,
            shift: np.ndarray | None, scale: np.ndarray | None) -> dict[int, tuple]:
    """The (standardised) rows and +-1 labels of each node of ``nodes`` in the block."""
    X, y = _block(Xb, yb, positive)
    out = {}
    for node in nodes:
        rows = ids == node
        out[node] = (_standardised(X[rows], shift, scale), y[rows])
    return out


def _prune_errors(Xb: Any, yb: Any, ids: np.ndarray, positive: Any, tree: FrozenTree,
                  masks: list) -> np.ndarray:
    """Weighted errors of the held-out rows under every subtree of the pruning sequence."""
    X, y = _block(Xb, yb, positive)
    held = ids < 0
    out = np.zeros(len(masks))
    if not np.any(held):
        return out
    Xp, pos = X[held], y[held] > 0
    cost = tree.class_weight[pos.astype(np.intp)]  # c_- or c_+ per row
    for j, mask in enumerate(masks):
        leaf, _ = tree.route(Xp, mask)
        out[j] = float(cost[tree.label[leaf].astype(bool) != pos].sum())
    return out


def _path_lengths(Xb: Any, tree: FrozenTree) -> np.ndarray:
    """(sum, max, rows) of the hyperplanes evaluated per row of the block."""
    X = np.asarray(Xb, dtype=np.float64)
    if X.shape[0] == 0:
        return np.zeros(3)
    _, count = tree.route(X)
    return np.array([float(count.sum()), float(count.max()), float(X.shape[0])])


def _add(*parts: Any) -> Any:
    out = np.array(parts[0], dtype=float, copy=True)
    for p in parts[1:]:
        out += p
    return out


def _max_sum(*parts: np.ndarray) -> np.ndarray:
    stack = np.stack(parts)
    return np.array([stack[:, 0].sum(), stack[:, 1].max(), stack[:, 2].sum()])


def _reduce(dask: Any, parts: list, fn: Any) -> Any:
    while len(parts) > 1:  # each task merges at most 8 partials
        parts = [dask.delayed(fn)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    return parts[0]


# -- the client's loop -------------------------------------------------------------------
def fit_hlsvm_dask(est: Any, X: Any, y: Any) -> None:
    """Fit ``est`` (an :class:`~conicml.estimators.HLSVMClassifier`) on Dask arrays.

    Sets the same fitted attributes as the in-memory fit (NumPy arrays): the options are
    checked, the tree grown level by level (:class:`_Grower`), pruned on the held-out rows
    (:func:`_prune`) and described (:func:`_describe`).
    """
    opts, local_options = _node_options(est)
    Xd, yd, _, d = _blocks(X, y)
    classes = labels_of(y)
    if classes.size < 2:
        raise ProgramError(f"HLSVMClassifier needs samples of two classes; got only one "
                           f"class ({classes[0]!r})" if classes.size else
                           "HLSVMClassifier needs samples of two classes; y is empty")
    if classes.size > 2:
        raise ProgramError(
            f"Only binary classification is supported by HLSVMClassifier; got "
            f"{classes.size} classes (wrap it in sklearn.multiclass.OneVsRestClassifier)")
    est.classes_ = classes
    est.n_features_in_ = d
    est._node_costs = est._relative_costs()
    fraction = renamed_param(est, "rho", "pruning_fraction")
    est._max_iter = renamed_param(est, "T", "max_iter")
    est._tol = renamed_param(est, "eps", "tol")
    grower = _Grower(est, Xd, yd, d, classes[1], float(fraction), opts, local_options)
    grower.grow()
    est.node_statuses_ = grower.statuses
    bad = {k: v for k, v in grower.statuses.items()
           if k not in ("optimal", "optimal_inaccurate")}
    if bad:
        warnings.warn(
            f"{sum(bad.values())} of {sum(grower.statuses.values())} node problems were not "
            f"solved to the node solver's tolerance ({bad}); e.g. {grower.messages[0]}. The "
            "tree uses the returned hyperplanes; raise max_iter / time_limit in "
            "node_solver_options", ConvergenceWarning, stacklevel=4)
    full = grower.frozen()
    est.n_hyperplanes_unpruned_ = int(np.count_nonzero(~full.is_leaf))
    est.tree_ = _prune(est, grower, full)
    _describe(est, Xd)


def _node_options(est: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The distributed dcd's checked options, and those the gathered nodes' solver reads."""
    if est.node_solver.lower() not in ("auto", "dcd"):
        raise ProgramError(
            f"HLSVMClassifier on Dask arrays trains every node with the distributed dcd "
            f"(node_solver='auto' or 'dcd'); got node_solver={est.node_solver!r} (pass "
            "NumPy arrays for another node solver)")
    try:
        opts = _options(est.node_solver_options)
    except OptionError as exc:
        raise OptionError(f"node_solver_options on Dask arrays go to the distributed dcd: "
                          f"{exc}") from None
    streamed = sorted(k for k in ("stream", "blocks", "working_rows")
                      if (est.node_solver_options or {}).get(k) not in (None, "auto"))
    if streamed:  # a node's rounds select its rows on the blocks read in place
        raise OptionError(f"node_solver_options {streamed}: H-LSVM on Dask reads its row "
                          "blocks in place (a node's rows are selected by each block's ids); "
                          "the streamed mode is the linear SVM's only: drop these options")
    # the gathered nodes are solved in memory: the options both solvers read
    local_options = {k: v for k, v in (est.node_solver_options or {}).items()
                     if k in ("tol", "time_limit", "verbose", "engine")}
    return opts, local_options


class _Grower:
    """The tree grown level by level on the blocks (the state of one fit).

    Every block keeps its row ids on its worker (:func:`_init_ids`); the root's class
    counts and column moments come from one pass, then :meth:`grow` trains and splits the
    nodes of each level. A frontier entry is ``(node, None)`` for rows on the workers or
    ``(node, (Xs, ys))`` for rows gathered to the client (standardised, labels +-1).
    """

    def __init__(self, est: Any, Xd: list, yd: list, d: int, positive: Any,
                 fraction: float, opts: dict[str, Any], local_options: dict[str, Any]
                 ) -> None:
        import dask

        self.dask, self.est, self.Xd, self.yd, self.d = dask, est, Xd, yd, d
        self.positive, self.opts, self.local_options = positive, opts, local_options
        self.rng = check_random_state(est.random_state)
        seeds = self.rng.randint(0, 2**31 - 1, size=len(Xd))
        self.ids = list(dask.persist(*[dask.delayed(_init_ids)(yb, int(s), fraction)
                                       for yb, s in zip(yd, seeds)]))
        root = _reduce(dask, [dask.delayed(_root_stats)(xb, yb, ib, positive)
                              for xb, yb, ib in zip(Xd, yd, self.ids)], _merge_root).compute()
        n_pos, n_neg, held_pos, held_neg = (int(v) for v in root["counts"])
        self.n_pos, self.n_neg, self.held = n_pos, n_neg, held_pos + held_neg
        self.N = N = n_pos + n_neg
        if N == 0:
            raise ProgramError(f"pruning_fraction={fraction} leaves no sample to grow the "
                               "tree on (give a value below 1)")
        delta = est.delta if est.delta is not None else 10.0 ** (-math.floor(math.log10(N)))
        est.delta_ = self.delta = float(delta)
        self.shift = self.scale = None
        if est.standardize:
            _, mu, m2 = root["moments"]
            sigma = np.sqrt(m2 / N)
            sigma[~(sigma > 1e-12 * np.maximum(1.0, np.abs(mu)))] = 1.0  # constant column
            self.shift, self.scale = mu, sigma
        self.tree = Tree(d)
        self.statuses: dict[str, int] = {}
        self.messages: list[str] = []
        est.node_solvers_ = {}
        est.n_iter_ = 0
        self.top = self.tree.add(n_pos, n_neg, 0)
        self.means = {self.top: root["moments"][1]}  # raw column means of remote nodes
        self.unit = np.ones(d) if self.scale is None else self.scale

    def splittable(self, node: int) -> bool:
        tree = self.tree
        size = tree.n_pos[node] + tree.n_neg[node]
        return (entropy(tree.n_pos[node], tree.n_neg[node]) > 0.0
                and size / self.N > self.delta)

    def gather(self, nodes: list) -> dict[int, tuple]:
        """The standardised rows and +-1 labels of ``nodes``, brought to the client."""
        dask, d = self.dask, self.d
        parts = dask.compute(*[dask.delayed(_gather)(xb, yb, ib, self.positive, nodes,
                                                     self.shift, self.scale)
                               for xb, yb, ib in zip(self.Xd, self.yd, self.ids)])
        return {k: (np.concatenate([p[k][0] for p in parts]).reshape(-1, d),
                    np.concatenate([p[k][1] for p in parts])) for k in nodes}

    def solve_remote(self, node: int) -> tuple[np.ndarray | None, float]:
        """The node's SVM (5.3) by the CoCoA+ rounds on its rows on the workers."""
        est, tree = self.est, self.tree
        n_p, n_n = tree.n_pos[node], tree.n_neg[node]
        # (5.3): c_i = nu_i / (lambda |S_H|), nu = r / (2 N_H^+-) (as the in-memory nodes)
        C = 1.0 / (est.lam * (n_p + n_n))
        r_neg, r_pos = est._node_costs
        # solved on the node's own centred rows (x - m) / sigma: the bias-free part of the
        # SVM does not change under a shift, and a centred node needs a small bias (few
        # multiplier rounds); b is moved back to the tree's features below
        sol = fit_blocks(self.Xd, self.yd, self.d, self.positive, C * r_pos / (2 * n_p),
                         C * r_neg / (2 * n_n), self.opts, n_pos=n_p, n_neg=n_n,
                         rows=[(ib, node, self.means[node], self.unit) for ib in self.ids])
        est.node_solvers_["dcd-dask"] = est.node_solvers_.get("dcd-dask", 0) + 1
        est.n_iter_ = max(est.n_iter_, int(sol.iterations or 0))
        self.statuses[sol.status.value] = self.statuses.get(sol.status.value, 0) + 1
        if sol.status.value != "optimal":
            self.messages.append(sol.message)
        w = np.asarray(sol.values["w"], dtype=float)
        # w'(x - m)/s + b_c = w'(x - mu)/s + b_c - w'(m - mu)/s
        m = self.means[node]
        offset = m if self.shift is None else (m - self.shift) / self.scale
        return w, float(sol.values["b"]) - float(w @ offset)

    def grow(self) -> None:
        """Every level: train its nodes, count the candidate splits, route the rows."""
        top = self.top
        frontier: list[tuple[int, Any]] = []
        if self.splittable(top):
            frontier = [(top, self.gather([top])[top] if self.N <= GATHER_MAX_ROWS
                         else None)]
        while frontier:
            frontier = self._level(frontier)

    def _level(self, frontier: list) -> list:
        dask, tree = self.dask, self.tree
        candidates = []
        for node, local in frontier:
            if local is None:
                w, b = self.solve_remote(node)
            else:
                w, b = self.est._solve_node(local[0], local[1], tree.n_pos[node],
                                            tree.n_neg[node], self.rng, self.statuses,
                                            self.messages, node_options=self.local_options)
            if w is not None:
                candidates.append((node, w, b, local))
        planes = [(node, w, b) for node, w, b, local in candidates if local is None]
        remote_counts = {}
        if planes:
            total = _reduce(dask, [dask.delayed(_split_counts)(
                xb, yb, ib, self.positive, planes, self.shift, self.scale)
                for xb, yb, ib in zip(self.Xd, self.yd, self.ids)], _add).compute()
            remote_counts = {p[0]: total[j] for j, p in enumerate(planes)}
        frontier, splits, to_gather = [], [], []
        for node, w, b, local in candidates:
            self._accept(node, w, b, local, remote_counts.get(node), frontier, splits,
                         to_gather)
        if splits:
            self.ids = list(dask.persist(*[dask.delayed(_route_ids)(
                xb, ib, splits, self.shift, self.scale) for xb, ib in zip(self.Xd, self.ids)]))
        if to_gather:
            rows = self.gather(to_gather)
            frontier = [(k, rows[k] if local == "gather" else local) for k, local in frontier]
        return frontier

    def _accept(self, node: int, w: np.ndarray, b: float, local: Any, counts: Any,
                frontier: list, splits: list, to_gather: list) -> None:
        """Split ``node`` if its hyperplane lowers the impurity; queue its children."""
        tree, d = self.tree, self.d
        if local is None:
            lp, ln, rp, rn = (int(v) for v in counts[:4])
        else:
            Xs, ys = local
            go_left = Xs @ w + b <= 0.0
            lp, ln = int(np.count_nonzero(ys[go_left] > 0)), int(
                np.count_nonzero(ys[go_left] < 0))
            rp, rn = tree.n_pos[node] - lp, tree.n_neg[node] - ln
        size = tree.n_pos[node] + tree.n_neg[node]
        i0 = entropy(tree.n_pos[node], tree.n_neg[node])
        split = ((lp + ln) * entropy(lp, ln) + (rp + rn) * entropy(rp, rn)) / size
        if split >= i0 - 1e-12:
            return  # no impurity improvement (also catches one-sided splits)
        tree.weights[node], tree.bias[node] = w, float(b)
        depth = tree.depth[node] + 1
        left, right = tree.add(lp, ln, depth), tree.add(rp, rn, depth)
        tree.left[node], tree.right[node] = left, right
        if local is not None:
            frontier += [(k, (Xs[m], ys[m])) for k, m in ((left, go_left),
                                                           (right, ~go_left))
                         if self.splittable(k)]
            return
        splits.append((node, w, b, left, right))
        sums = counts[4:]
        self.means[left] = sums[:d] / max(lp + ln, 1)
        self.means[right] = sums[d:] / max(rp + rn, 1)
        for k in (left, right):
            if self.splittable(k):
                small = tree.n_pos[k] + tree.n_neg[k] <= GATHER_MAX_ROWS
                frontier.append((k, "gather" if small else None))
                if small:
                    to_gather.append(k)

    def frozen(self) -> FrozenTree:
        """The grown tree on the raw features (as the in-memory fit), with class weights."""
        tree, shift, scale = self.tree, self.shift, self.scale
        if shift is not None:
            for k in range(len(tree.left)):
                if tree.left[k] >= 0:
                    w_raw = tree.weights[k] / scale
                    tree.weights[k], tree.bias[k] = w_raw, float(tree.bias[k] - w_raw @ shift)
        full = tree.freeze()
        full.class_weight = self.est._class_weights_from_counts(self.n_pos, self.n_neg)
        return full


def _prune(est: Any, grower: _Grower, full: FrozenTree) -> FrozenTree:
    """Cost-complexity pruning (A17) on the held-out rows, routed on the workers."""
    import dask

    est.pruning_path_ = []
    if grower.held == 0 or full.is_leaf[0]:
        return full
    masks, alphas = cost_complexity_sequence(full)
    errors = _reduce(dask, [dask.delayed(_prune_errors)(xb, yb, ib, grower.positive, full,
                                                        masks)
                            for xb, yb, ib in zip(grower.Xd, grower.yd, grower.ids)],
                     _add).compute()
    best, best_err = 0, math.inf
    for i, (mask, alpha) in enumerate(zip(masks, alphas)):
        est.pruning_path_.append((alpha, int(np.count_nonzero(
            mask & _reachable(full, mask))), float(errors[i])))
        if errors[i] <= best_err * (1 + 1e-12) + 1e-12:  # ties: the smaller tree
            best, best_err = i, float(errors[i])
    return full.prune_to(masks[best])


def _describe(est: Any, Xd: list) -> None:
    """The fitted tree's hyperplanes, sizes and path lengths (one pass over the blocks)."""
    import dask

    full = est.tree_
    internal = np.flatnonzero(~full.is_leaf)
    est.coef_ = full.weights[internal]
    est.intercept_ = full.bias[internal]
    est.n_hyperplanes_ = int(internal.size)
    est.n_leaves_ = int(full.node_count - internal.size)
    est.max_depth_ = int(full.depth[full.is_leaf].max() - full.depth[0])
    paths = _reduce(dask, [dask.delayed(_path_lengths)(xb, full) for xb in Xd],
                    _max_sum).compute()
    est.mean_hyperplanes_ = float(paths[0] / paths[2])
    est.max_hyperplanes_ = int(paths[1])
    if est.n_hyperplanes_ == 0:
        why = ("pruning kept the root" if est.n_hyperplanes_unpruned_ > 0 else
               "no split of the root lowered the impurity, or the root was pure or "
               "smaller than delta")
        weights = "use class_weight='balanced', " if est.class_weight is None else ""
        # a single leaf: every score is the leaf's
        warn_if_constant_score(
            "HLSVMClassifier", np.zeros(1), 0.0,
            f"the tree is a single leaf ({why}); {weights}a smaller delta, or a "
            "smaller pruning_fraction (or 0: the pruning set may hold too few samples of the "
            "minority class)", stacklevel=5)
