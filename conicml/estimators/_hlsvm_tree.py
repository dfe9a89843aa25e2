r"""The oblique binary tree of H-LSVM (seed 001 ch. 5): storage, routing, cost-complexity pruning.

A node :math:`k` holds a hyperplane :math:`(w_k, b_k)`; a sample goes left if
:math:`w_k^\top x + b_k \le 0` and right otherwise (F24). Leaves are labelled by
the majority of their training samples weighted by the tree's class weights
:math:`(c_-, c_+)` (eq. 2.37 with :math:`c_\pm = 1`, the thesis's unweighted vote; a
tie goes to the positive class). Pruning follows §2.3.3.1 (A17): :math:`R(t)` is the
weighted number of training samples misclassified if :math:`t` were a leaf (divided
by the same total everywhere, so counts are used), :math:`T_0` collapses the
splits that do not reduce :math:`R`, then the weakest links
:math:`g(t) = (R(t) - R(T_t))/(|\tilde T_t| - 1)` are collapsed — *all*
minimisers at once (pitfall P-H5) — until only the root remains; the subtree
with the fewest errors on the held-out pruning set is kept, ties going to the
smallest tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._utils.engines import numba_available, resolve_engine

__all__ = ["Tree", "cost_complexity_sequence", "entropy"]


def entropy(n_pos: int, n_neg: int) -> float:
    r"""Binary entropy :math:`I(H) = -p_+\log_2 p_+ - p_-\log_2 p_-` of unweighted counts (5.2)."""
    n = n_pos + n_neg
    if n == 0 or n_pos == 0 or n_neg == 0:
        return 0.0
    p = n_pos / n
    return float(-p * np.log2(p) - (1 - p) * np.log2(1 - p))


@dataclass
class Tree:
    """Growable array storage of an oblique binary tree (node 0 is the root).

    Attributes
    ----------
    weights : list of ndarray
        :math:`w_k` of each node (zeros at leaves).
    bias : list of float
    left, right : list of int
        Children (-1 at leaves).
    n_pos, n_neg : list of int
        Training samples of each class that reached the node.
    depth : list of int
    """

    n_features: int
    weights: list = field(default_factory=list)
    bias: list = field(default_factory=list)
    left: list = field(default_factory=list)
    right: list = field(default_factory=list)
    n_pos: list = field(default_factory=list)
    n_neg: list = field(default_factory=list)
    depth: list = field(default_factory=list)

    def add(self, n_pos: int, n_neg: int, depth: int) -> int:
        """Append a leaf and return its id."""
        self.weights.append(np.zeros(self.n_features))
        self.bias.append(0.0)
        self.left.append(-1)
        self.right.append(-1)
        self.n_pos.append(int(n_pos))
        self.n_neg.append(int(n_neg))
        self.depth.append(int(depth))
        return len(self.left) - 1

    def freeze(self) -> FrozenTree:
        """Arrays of the tree (the form used for prediction and pruning)."""
        return FrozenTree(
            weights=np.array(self.weights, dtype=float).reshape(-1, self.n_features),
            bias=np.array(self.bias, dtype=float),
            left=np.array(self.left, dtype=np.intp),
            right=np.array(self.right, dtype=np.intp),
            n_pos=np.array(self.n_pos, dtype=np.intp),
            n_neg=np.array(self.n_neg, dtype=np.intp),
            depth=np.array(self.depth, dtype=np.intp),
        )


@dataclass
class FrozenTree:
    """An oblique tree as arrays; ``left[k] == -1`` marks a leaf."""

    weights: np.ndarray
    bias: np.ndarray
    left: np.ndarray
    right: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    depth: np.ndarray
    #: (c_-, c_+): class weights of the leaf labels and of R(t); (1, 1) is (2.37)
    class_weight: np.ndarray = field(default_factory=lambda: np.ones(2))

    @property
    def node_count(self) -> int:
        return int(self.left.size)

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left < 0

    @property
    def weighted_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """:math:`(c_+ n_+, c_- n_-)` of every node."""
        c_neg, c_pos = np.asarray(self.class_weight, dtype=float)
        return c_pos * self.n_pos, c_neg * self.n_neg

    @property
    def label(self) -> np.ndarray:
        """Leaf label of every node: 1 (positive) if c+ n_pos >= c- n_neg, else 0 (2.37)."""
        pos, neg = self.weighted_counts
        return (pos >= neg).astype(np.intp)

    def route(self, X: np.ndarray, leaf_mask: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """Leaf reached by each row of ``X`` and the number of hyperplanes evaluated.

        Each sample costs exactly the hyperplanes on its path, :math:`N_H^P(x)` dot
        products of length :math:`M`. With the numba engine (numba importable and
        ``CONICML_ENGINE`` not ``numpy``) the batch is routed by a compiled loop
        (``_route_compiled``: four rows descend together, each with its own
        dot-product chain, so the CPU overlaps their latencies; leaves loop to
        themselves and the child is picked by indexing, so the descent has no
        data-dependent branch; no temporary arrays); otherwise by a NumPy loop over
        the nodes
        (:func:`_route_by_node`: the rows that reach an internal node are evaluated
        against its one hyperplane in a single matrix-vector product and split in
        two). Both give the same leaves (the test ``w^T x + b <= 0`` goes left).
        """
        is_leaf = self.is_leaf if leaf_mask is None else np.asarray(leaf_mask, dtype=bool)
        X = np.ascontiguousarray(X, dtype=np.float64)
        kernel = _route_kernel() if resolve_engine("hlsvm", "auto") == "numba" else None
        if kernel is None or X.shape[0] < _COMPILED_MIN_ROWS:
            return _route_by_node(self, X, is_leaf)
        node = np.empty(X.shape[0], dtype=np.intp)
        count = np.empty(X.shape[0], dtype=np.intp)
        # child[k] = (left, right) of a split, (k, k) of a leaf: a leaf is a fixed point
        ids = np.arange(is_leaf.size, dtype=np.intp)
        child = np.column_stack([np.where(is_leaf, ids, self.left),
                                 np.where(is_leaf, ids, self.right)])
        kernel(X, np.ascontiguousarray(self.weights, dtype=np.float64),
               np.ascontiguousarray(self.bias, dtype=np.float64), child,
               (~is_leaf).astype(np.intp), node, count)
        return node, count

    def prune_to(self, leaf_mask: np.ndarray) -> FrozenTree:
        """The subtree in which the nodes of ``leaf_mask`` are leaves, renumbered depth-first."""
        order, stack = [], [0]
        while stack:
            k = stack.pop()
            order.append(k)
            if not leaf_mask[k]:
                stack.append(int(self.right[k]))
                stack.append(int(self.left[k]))
        new_id = {old: i for i, old in enumerate(order)}
        idx = np.array(order, dtype=np.intp)
        keep_split = ~leaf_mask[idx]
        left = np.where(keep_split, [new_id.get(int(v), -1) for v in self.left[idx]], -1)
        right = np.where(keep_split, [new_id.get(int(v), -1) for v in self.right[idx]], -1)
        weights = np.where(keep_split[:, None], self.weights[idx], 0.0)
        bias = np.where(keep_split, self.bias[idx], 0.0)
        return FrozenTree(weights=weights, bias=bias, left=left.astype(np.intp),
                          right=right.astype(np.intp), n_pos=self.n_pos[idx].copy(),
                          n_neg=self.n_neg[idx].copy(), depth=self.depth[idx].copy(),
                          class_weight=np.array(self.class_weight, dtype=float))


#: Batches below this size are routed by the NumPy loop (a compiled call costs ~1 us).
_COMPILED_MIN_ROWS = 16
_ROUTE_KERNEL: Callable | None = None
_ROUTE_KERNEL_TRIED = False


def _route_by_node(tree: FrozenTree, X: np.ndarray, is_leaf: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """NumPy routing, vectorised by node (see :meth:`FrozenTree.route`)."""
    n = X.shape[0]
    node = np.zeros(n, dtype=np.intp)
    count = np.zeros(n, dtype=np.intp)
    stack = [(0, np.arange(n))]
    while stack:
        k, rows = stack.pop()
        if is_leaf[k] or rows.size == 0:
            node[rows] = k
            continue
        count[rows] += 1
        go_left = X[rows] @ tree.weights[k] + tree.bias[k] <= 0.0
        stack.append((int(tree.right[k]), rows[~go_left]))
        stack.append((int(tree.left[k]), rows[go_left]))
    return node, count


def _route_kernel() -> Callable | None:
    """The compiled routing loop, or None without numba (built once, on first use)."""
    global _ROUTE_KERNEL, _ROUTE_KERNEL_TRIED
    if _ROUTE_KERNEL_TRIED:
        return _ROUTE_KERNEL
    _ROUTE_KERNEL_TRIED = True
    if not numba_available():
        return None
    import numba

    @numba.njit(cache=True, nogil=True, fastmath=True)
    def _route_compiled(X, W, b, child, internal, node, count):  # pragma: no cover
        # Four rows descend together: one row alone waits on each node's length-M
        # dot-product chain (latency-bound); four independent chains overlap. A leaf k
        # has child[k] = (k, k) and internal[k] = 0, so a row that has arrived stays
        # put and stops counting while the others go on, and the next node is an index
        # (child[k, f > 0]) rather than a branch on the data. fastmath lets the sums be
        # reassociated.
        n, d = X.shape
        i = 0
        while i + 4 <= n:
            k0 = k1 = k2 = k3 = 0
            c0 = c1 = c2 = c3 = 0
            while internal[k0] | internal[k1] | internal[k2] | internal[k3]:
                f0, f1, f2, f3 = b[k0], b[k1], b[k2], b[k3]
                for j in range(d):
                    f0 += W[k0, j] * X[i, j]
                    f1 += W[k1, j] * X[i + 1, j]
                    f2 += W[k2, j] * X[i + 2, j]
                    f3 += W[k3, j] * X[i + 3, j]
                c0 += internal[k0]
                c1 += internal[k1]
                c2 += internal[k2]
                c3 += internal[k3]
                k0 = child[k0, int(f0 > 0.0)]
                k1 = child[k1, int(f1 > 0.0)]
                k2 = child[k2, int(f2 > 0.0)]
                k3 = child[k3, int(f3 > 0.0)]
            node[i], node[i + 1], node[i + 2], node[i + 3] = k0, k1, k2, k3
            count[i], count[i + 1], count[i + 2], count[i + 3] = c0, c1, c2, c3
            i += 4
        for r in range(i, n):  # the last n mod 4 rows, one at a time
            k = 0
            c = 0
            while internal[k]:
                f = b[k]
                for j in range(d):
                    f += W[k, j] * X[r, j]
                c += 1
                k = child[k, int(f > 0.0)]
            node[r] = k
            count[r] = c

    _ROUTE_KERNEL = _route_compiled
    return _ROUTE_KERNEL


def _leaf_errors(tree: FrozenTree) -> np.ndarray:
    """R(t) as a weighted count: training samples misclassified if t were a leaf."""
    pos, neg = tree.weighted_counts
    return np.where(pos >= neg, neg, pos)


def _subtree_stats(tree: FrozenTree, leaf_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R(T_t) and the number of leaves |T~_t| of every node's subtree (post-order)."""
    r_leaf = _leaf_errors(tree)
    err = np.zeros(tree.node_count)
    leaves = np.zeros(tree.node_count, dtype=np.intp)
    order, stack = [], [0]
    while stack:
        k = stack.pop()
        order.append(k)
        if not leaf_mask[k]:
            stack.extend((int(tree.left[k]), int(tree.right[k])))
    for k in reversed(order):
        if leaf_mask[k]:
            err[k], leaves[k] = r_leaf[k], 1
        else:
            lk, rk = int(tree.left[k]), int(tree.right[k])
            err[k], leaves[k] = err[lk] + err[rk], leaves[lk] + leaves[rk]
    return err, leaves


def _reachable(tree: FrozenTree, leaf_mask: np.ndarray) -> np.ndarray:
    seen = np.zeros(tree.node_count, dtype=bool)
    stack = [0]
    while stack:
        k = stack.pop()
        seen[k] = True
        if not leaf_mask[k]:
            stack.extend((int(tree.left[k]), int(tree.right[k])))
    return seen


def cost_complexity_sequence(tree: FrozenTree) -> tuple[list[np.ndarray], list[float]]:
    """The nested subtrees :math:`T_0 \\supset T_1 \\supset \\dots \\supset \\{root\\}` of A17.

    Returns the leaf masks of the subtrees and the :math:`\\alpha_k` at which each
    one appears (:math:`\\alpha_0 = 0`).
    """
    r_leaf = _leaf_errors(tree)
    mask = tree.is_leaf.copy()
    # T_0: collapse (bottom-up, hence repeatedly) every split that does not reduce R
    order, stack = [], [0]
    while stack:
        k = stack.pop()
        order.append(k)
        if not mask[k]:
            stack.extend((int(tree.left[k]), int(tree.right[k])))
    tol = 1e-12 * max(1.0, float(r_leaf[0]))  # weighted counts are not integers
    for k in reversed(order):
        if not mask[k]:
            err, _ = _subtree_stats(tree, mask)
            if r_leaf[k] <= err[k] + tol:
                mask[k] = True
    masks, alphas = [mask.copy()], [0.0]
    while not mask[0]:
        err, leaves = _subtree_stats(tree, mask)
        internal = np.flatnonzero(~mask & _reachable(tree, mask))
        g = (r_leaf[internal] - err[internal]) / (leaves[internal] - 1)
        alpha = float(g.min())
        weakest = internal[g <= alpha + 1e-12 * max(1.0, abs(alpha))]
        mask[weakest] = True  # collapse all minimisers at once (P-H5)
        masks.append(mask.copy())
        alphas.append(alpha)
    return masks, alphas
