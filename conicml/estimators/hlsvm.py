r"""Hierarchical Linear SVM (H-LSVM), the real-time piecewise-linear classifier (seed 001 ch. 5).

An oblique binary decision tree whose every split is a class-balanced linear
SVM (Algorithm 6), grown top-down and pruned by cost complexity on a held-out
set (A17). Prediction routes a sample through at most ``depth`` hyperplanes,
so its cost is :math:`N_H^P(x)\,M` instead of :math:`n_{SV} M` for a kernel SVM.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import registry
from ..exceptions import ProgramError
from ..formulations import svm as svm_formulation
from ..kinds import SVM_PRIMAL
from ..solvers._options import resolve_engine
from ..solving import solve
from ._hlsvm_tree import Tree, _reachable, cost_complexity_sequence, entropy

__all__ = ["HLSVMClassifier", "export_text"]

#: Node solvers that take H-LSVM's T, batch_size, tau, eps and random_state.
_PEGASOS_FAMILY = ("pegasos", "weighted-pegasos")
#: ``node_solver="auto"``: every node is solved by ``dcd`` (dual coordinate descent with
#: the exact bias, certified by its duality gap) when its compiled loop runs; on the
#: NumPy engine nodes with at most this many samples are solved by ``clarabel``, larger
#: ones by ``weighted-pegasos``...
AUTO_EXACT_MAX = 2000
#: ... and either falls back to ``clarabel`` when it stops at its limit uncertified and
#: the node has at most this many entries |S_H| * M.
AUTO_FALLBACK_MAX_ENTRIES = 200_000


class HLSVMClassifier(ClassifierMixin, BaseEstimator):
    r"""Hierarchical Linear SVM: an oblique tree of class-balanced linear SVMs (seed 001, ch. 5).

    **Training** (§5.2, Algorithm 6). A random fraction ``rho`` of the data is
    held out as the pruning set :math:`P`; on the rest, :math:`S_0`
    (:math:`N = |S_0|`), each node :math:`H` with samples :math:`S_H`

    1. becomes a leaf if it is pure (:math:`I(H) = 0`, entropy (5.2) of the
       unweighted class proportions) or if :math:`|S_H|/N \le \delta`;
    2. otherwise solves the weighted linear SVM (C.1 with an unregularised bias)

       .. math::

           \min_{w,b}\ \frac{\lambda}{2}\|w\|^2 + \frac{1}{|S_H|}\sum_{i\in S_H}
           \nu_i\,[1 - y_i(w^\top x_i + b)]_+ ,\qquad
           \nu_i = \frac{1}{2N_H^{\pm}}\ \ (5.3),

       i.e. the SVM primal with costs :math:`c_i = \nu_i/(\lambda|S_H|)`
       (:func:`conicml.formulations.svm.soft_margin` with
       :math:`C = 1/(\lambda|S_H|)` and class weights :math:`\nu_\pm`), by
       ``node_solver`` — dual coordinate descent (``dcd``, certified) by
       default (``"auto"``), or any solver registered for the kind
       ``"qp.svm.primal"``;
    3. becomes a leaf if the split does not lower the impurity,
       :math:`P(l)I(l) + P(r)I(r) \ge I(H)`; else sends
       :math:`\{w^\top x + b \le 0\}` left and the rest right and recurses,
       recomputing the weights (5.3) in each child.

    Leaves are labelled by the unweighted majority (2.37). With ``rho > 0`` the
    tree is then pruned by cost complexity (A17) and the subtree with the
    fewest errors on :math:`P` is kept.

    **Defaults that converge** (issue 9). The thesis runs Weighted-Pegasos with
    :math:`T = 10^7` on every node. Its error after :math:`T` steps falls as
    :math:`R^2/(\lambda_{\mathrm{eff}} T)` with :math:`\lambda_{\mathrm{eff}} =
    \lambda|S_H|` (the :math:`\lambda` of the node problem in Pegasos form, see
    :mod:`conicml.solvers.pegasos`) and :math:`R = \max_i\|x_i\|`: on raw features
    of scale :math:`10^2`–:math:`10^3` and on small nodes (:math:`\lambda|S_H|
    \approx 10^{-3}`) a run of :math:`T = 2\cdot10^4` steps ends with a certified
    relative duality gap of 0.3–1 (measured on the bundled UCI sets). So by default
    (``standardize=True``) the nodes are solved on features centred and scaled to
    unit variance, and the hyperplanes are mapped back,
    :math:`w = \tilde w/\sigma`, :math:`b = \tilde b - w^\top\mu` (the model, its
    ``coef_`` and its prediction cost are on the raw features); and
    ``node_solver="auto"`` solves every node with ``dcd`` (LIBLINEAR's dual
    coordinate descent with the bias kept exact, stopped at a certified relative
    duality gap of 1e-3) when numba runs its loop, and on the NumPy engine nodes of at
    most ``AUTO_EXACT_MAX`` (2 000) samples with ``clarabel`` and larger ones with
    Weighted-Pegasos; a node left uncertified is re-solved by ``clarabel``
    if it has at most 200 000 entries :math:`|S_H| M` (``node_solvers_`` counts
    each case). ``standardize=False, node_solver="weighted-pegasos", T=10**7`` is
    the thesis's setting.

    Parameters
    ----------
    lam : float, default=1e-5
        :math:`\lambda > 0` of the node problems (the thesis's banana value).
    rho : float, default=0.1
        Fraction held out for pruning, in [0, 1); 0 disables pruning.
    delta : float or None, default=None
        Minimal node fraction :math:`\delta \in (0, 1]`; ``None`` means the
        thesis's :math:`10^{-\lfloor\log_{10}N\rfloor}`.
    T : int, default=20000
        Iterations :math:`T` of the Pegasos node solvers (the thesis: 10^7).
    batch_size : int or None, default=None
        Mini-batch size :math:`k` of the Pegasos node solvers, in [1, N]
        (not reported in the thesis); ``None`` means :math:`\min(32, N)`;
        nodes smaller than :math:`k` use :math:`|S_H|`.
    tau : float, default=1.0
        Bias step scale :math:`\tau` of Weighted-Pegasos (not reported).
    eps : float, default=1e-4
        :math:`\varepsilon_{PEG}`, the step-norm stop of Alg. 5.
    node_solver : str, default="auto"
        ``"auto"``: ``"dcd"`` on every node with the numba engine (else
        ``"clarabel"`` up to 2 000 samples, ``"weighted-pegasos"`` above),
        ``"clarabel"`` where a node is left uncertified (see *Defaults that
        converge*); or any
        solver registered for ``"qp.svm.primal"`` (``"weighted-pegasos"`` as the
        thesis, ``"pegasos"``, ``"clarabel"`` to verify a tree exactly, ...).
    node_solver_options : dict, optional
        Extra options of the node solver (override the ones above); with
        ``node_solver="auto"`` they go to the ``dcd`` or Weighted-Pegasos nodes only.
    standardize : bool, default=True
        Solve the node problems on standardised features (training mean and
        standard deviation; a constant column keeps scale 1) and map the
        hyperplanes back to the raw features.
    random_state : int, RandomState or None
        Seeds the pruning split and the node solvers.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    tree_ : FrozenTree
        Arrays ``weights``, ``bias``, ``left``, ``right`` (-1 at leaves),
        ``n_pos``, ``n_neg`` (training counts), ``depth``.
    coef_ : ndarray of shape (n_hyperplanes, n_features)
        The hyperplanes of the internal nodes, in node order.
    intercept_ : ndarray of shape (n_hyperplanes,)
    n_hyperplanes_ : int
    n_leaves_ : int
    max_depth_ : int
        Longest root-to-leaf path: the largest number of hyperplanes any
        prediction evaluates.
    mean_hyperplanes_ : float
        Mean number of hyperplanes evaluated per training sample ("Hyp").
    max_hyperplanes_ : int
        Largest number evaluated for a training sample.
    n_hyperplanes_unpruned_ : int
    pruning_path_ : list of (alpha, n_leaves, pruning-set errors)
    node_statuses_ : dict
        Count of node-solver statuses (non-optimal ones raise one warning).
    node_solvers_ : dict
        Count of the solvers that produced the node hyperplanes
        (``"weighted-pegasos->clarabel"``: the ``"auto"`` fallback).
    n_features_in_ : int
    """

    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0, None, closed="neither")],
        "rho": [Interval(Real, 0, 1, closed="left")],
        "delta": [Interval(Real, 0, 1, closed="right"), None],
        "T": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "tau": [Interval(Real, 0, None, closed="left")],
        "eps": [Interval(Real, 0, None, closed="left"), None],
        "node_solver": [str],
        "node_solver_options": [dict, None],
        "standardize": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, lam: float = 1e-5, rho: float = 0.1, delta: float | None = None,
                 T: int = 20_000, batch_size: int | None = None, tau: float = 1.0,
                 eps: float | None = 1e-4, node_solver: str = "auto",
                 node_solver_options: dict | None = None, standardize: bool = True,
                 random_state: Any = None) -> None:
        self.lam = lam
        self.rho = rho
        self.delta = delta
        self.T = T
        self.batch_size = batch_size
        self.tau = tau
        self.eps = eps
        self.node_solver = node_solver
        self.node_solver_options = node_solver_options
        self.standardize = standardize
        self.random_state = random_state

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> HLSVMClassifier:
        """Grow the tree on ``(1 - rho)`` of the data and prune it on the rest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes; ``classes_[1]`` is the positive class.

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ProgramError(
                f"HLSVMClassifier needs samples of two classes; got only one class "
                f"({classes[0]!r})"
            )
        if classes.size > 2:
            raise ProgramError(
                f"Only binary classification is supported by HLSVMClassifier; got "
                f"{classes.size} classes (wrap it in sklearn.multiclass.OneVsRestClassifier)"
            )
        self.classes_ = classes
        y_pm = np.where(y == classes[1], 1.0, -1.0)
        n = X.shape[0]
        if self.batch_size is not None and self.batch_size > n:
            raise ProgramError(f"batch_size must be <= the number of samples ({n}), "
                               f"got {self.batch_size}")
        for solver_name in self._node_solvers():  # SolverError names the kinds it accepts
            registry.get(solver_name, kind=SVM_PRIMAL)
        rng = check_random_state(self.random_state)

        n_prune = int(round(self.rho * n))
        perm = rng.permutation(n)
        prune_idx, grow_idx = perm[:n_prune], perm[n_prune:]
        if grow_idx.size == 0:
            raise ProgramError(f"rho={self.rho} leaves no sample to grow the tree on")
        Xg, yg = X[grow_idx], y_pm[grow_idx]
        N = Xg.shape[0]
        delta = self.delta if self.delta is not None else 10.0 ** (-math.floor(math.log10(N)))
        self.delta_ = float(delta)
        if self.standardize:
            mu = Xg.mean(axis=0)
            sigma = Xg.std(axis=0)
            sigma[~(sigma > 1e-12 * np.maximum(1.0, np.abs(mu)))] = 1.0  # constant column
            tree = self._grow((Xg - mu) / sigma, yg, N, rng)
            # back to the raw features: w~^T (x - mu)/sigma + b~ = (w~/sigma)^T x + b~ - ...
            for k in range(len(tree.left)):
                if tree.left[k] >= 0:
                    w_raw = tree.weights[k] / sigma
                    tree.weights[k], tree.bias[k] = w_raw, float(tree.bias[k] - w_raw @ mu)
        else:
            tree = self._grow(Xg, yg, N, rng)
        full = tree.freeze()
        self.n_hyperplanes_unpruned_ = int(np.count_nonzero(~full.is_leaf))
        self.pruning_path_ = []
        if n_prune > 0 and not full.is_leaf[0]:
            masks, alphas = cost_complexity_sequence(full)
            Xp, pos_p = X[prune_idx], y_pm[prune_idx] > 0
            best, best_err = 0, math.inf
            for i, (mask, alpha) in enumerate(zip(masks, alphas)):
                leaf, _ = full.route(Xp, mask)
                errors = int(np.count_nonzero(full.label[leaf].astype(bool) != pos_p))
                self.pruning_path_.append((alpha, int(np.count_nonzero(
                    mask & _reachable(full, mask))), errors))
                if errors <= best_err:  # ties: the later, smaller tree
                    best, best_err = i, errors
            full = full.prune_to(masks[best])
        self.tree_ = full
        internal = np.flatnonzero(~full.is_leaf)
        self.coef_ = full.weights[internal]
        self.intercept_ = full.bias[internal]
        self.n_hyperplanes_ = int(internal.size)
        self.n_leaves_ = int(full.node_count - internal.size)
        self.max_depth_ = int(full.depth[full.is_leaf].max() - full.depth[0])
        _, count = full.route(X)
        self.mean_hyperplanes_ = float(count.mean())
        self.max_hyperplanes_ = int(count.max())
        return self

    def _grow(self, X: np.ndarray, y: np.ndarray, N: int, rng: np.random.RandomState) -> Tree:
        tree = Tree(X.shape[1])
        statuses: dict[str, int] = {}
        self.node_solvers_ = {}
        messages: list[str] = []
        root = tree.add(int(np.count_nonzero(y > 0)), int(np.count_nonzero(y < 0)), 0)
        stack = [(root, np.arange(X.shape[0]))]
        while stack:
            node, idx = stack.pop()
            n_pos, n_neg = tree.n_pos[node], tree.n_neg[node]
            i0 = entropy(n_pos, n_neg)
            if i0 == 0.0 or idx.size / N <= self.delta_:
                continue  # pure, or too few patterns: leaf
            w, b = self._solve_node(X[idx], y[idx], n_pos, n_neg, rng, statuses, messages)
            if w is None:
                continue
            go_left = X[idx] @ w + b <= 0.0
            left, right = idx[go_left], idx[~go_left]
            lp, ln = int(np.count_nonzero(y[left] > 0)), int(np.count_nonzero(y[left] < 0))
            rp, rn = n_pos - lp, n_neg - ln
            split = (left.size * entropy(lp, ln) + right.size * entropy(rp, rn)) / idx.size
            if split >= i0 - 1e-12:
                continue  # no impurity improvement (also catches one-sided splits)
            tree.weights[node], tree.bias[node] = w, float(b)
            depth = tree.depth[node] + 1
            tree.left[node] = tree.add(lp, ln, depth)
            tree.right[node] = tree.add(rp, rn, depth)
            stack.append((tree.right[node], right))
            stack.append((tree.left[node], left))
        self.node_statuses_ = statuses
        # OPTIMAL_INACCURATE is the thesis's own epsilon_PEG stop (Alg. 5): counted, not warned
        bad = {k: v for k, v in statuses.items() if k not in ("optimal", "optimal_inaccurate")}
        if bad:
            warnings.warn(
                f"{sum(bad.values())} of {sum(statuses.values())} node problems were not "
                f"solved to the node solver's tolerance ({bad}); e.g. {messages[0]}. The tree "
                "uses the returned hyperplanes (a node without one is a leaf); raise T or pass "
                "node_solver_options",
                ConvergenceWarning, stacklevel=3)
        return tree

    def _solve_node(self, X: np.ndarray, y: np.ndarray, n_pos: int, n_neg: int,
                    rng: np.random.RandomState, statuses: dict, messages: list
                    ) -> tuple[np.ndarray | None, float]:
        n = y.size
        # (5.3): nu = 1/(2 N^+-), and c_i = nu_i / (lambda n) = C nu_i with C = 1/(lambda n)
        prog = svm_formulation.soft_margin(
            X, y, C=1.0 / (self.lam * n), form="primal",
            class_weight={1: 1.0 / (2 * n_pos), -1: 1.0 / (2 * n_neg)})
        node_solver = self.node_solver
        if node_solver.lower() == "auto":
            node_solver = ("dcd" if resolve_engine("hlsvm", "auto") == "numba"
                           else "clarabel" if n <= AUTO_EXACT_MAX else "weighted-pegasos")
        options: dict[str, Any] = {}
        if node_solver.lower() in _PEGASOS_FAMILY:
            k = 32 if self.batch_size is None else self.batch_size
            options = {"max_iter": int(self.T), "batch_size": int(min(k, n)),
                       "tau": float(self.tau), "eps": self.eps,
                       "random_state": int(rng.randint(0, 2**31 - 1))}
        if self.node_solver.lower() != "auto" or node_solver != "clarabel":
            options.update(self.node_solver_options or {})
        solution = solve(prog, node_solver, **options)
        if (self.node_solver.lower() == "auto" and solution.status.value == "user_limit"
                and n * X.shape[1] <= AUTO_FALLBACK_MAX_ENTRIES):
            solution = solve(prog, "clarabel")
            node_solver = f"{node_solver}->clarabel"
        self.node_solvers_[node_solver] = self.node_solvers_.get(node_solver, 0) + 1
        statuses[solution.status.value] = statuses.get(solution.status.value, 0) + 1
        if solution.status.value not in ("optimal", "optimal_inaccurate"):
            messages.append(solution.message)
        if not solution.values or "w" not in solution.values:
            return None, 0.0
        return (np.asarray(solution.values["w"], dtype=float),
                float(np.asarray(solution.values["b"])))

    def _node_solvers(self) -> tuple[str, ...]:
        if self.node_solver.lower() == "auto":
            return ("dcd", "clarabel", "weighted-pegasos")
        return (self.node_solver,)

    # -- prediction -------------------------------------------------------------------------
    def apply(self, X: Any) -> np.ndarray:
        """Index (in ``tree_``) of the leaf each sample reaches."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.tree_.route(X)[0]

    def hyperplanes_evaluated(self, X: Any) -> np.ndarray:
        """Number of hyperplanes evaluated to classify each sample (the cost :math:`N_H^P(x)`)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.tree_.route(X)[1]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Training class proportions of the leaf each sample reaches."""
        leaf = self.apply(X)
        pos = self.tree_.n_pos[leaf].astype(float)
        tot = pos + self.tree_.n_neg[leaf]
        p = np.divide(pos, tot, out=np.full_like(pos, 0.5), where=tot > 0)
        return np.column_stack([1 - p, p])

    def decision_function(self, X: Any) -> np.ndarray:
        """:math:`P(+|\\text{leaf}) - 1/2`; ``predict`` is ``classes_[1]`` where it is >= 0."""
        return self.predict_proba(X)[:, 1] - 0.5

    def predict(self, X: Any) -> np.ndarray:
        """The unweighted majority class of the leaf each sample reaches (2.37)."""
        leaf = self.apply(X)
        return self.classes_[self.tree_.label][leaf]  # one gather over the samples

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


def export_text(model: HLSVMClassifier, *, feature_names: list[str] | None = None,
                decimals: int = 3) -> str:
    """A readable dump of a fitted H-LSVM tree (like :func:`sklearn.tree.export_text`).

    Each internal node prints its hyperplane :math:`w^\\top x + b` and the two
    branches ``<= 0`` (left) and ``> 0`` (right); each leaf its class and the
    training counts of both classes.
    """
    check_is_fitted(model)
    tree = model.tree_
    d = tree.weights.shape[1]
    names = feature_names if feature_names is not None else [f"x{j}" for j in range(d)]
    if len(names) != d:
        raise ValueError(f"feature_names must have {d} entries, got {len(names)}")

    def plane(k: int) -> str:
        terms = [f"{tree.weights[k, j]:+.{decimals}f}*{names[j]}" for j in range(d)
                 if tree.weights[k, j] != 0.0]
        return " ".join(terms + [f"{tree.bias[k]:+.{decimals}f}"])

    neg, pos = model.classes_
    lines: list[str] = []

    def walk(k: int, indent: int) -> None:
        bar = "|   " * indent + "|--- "
        if tree.left[k] < 0:
            label = pos if tree.label[k] else neg
            lines.append(f"{bar}class: {label} (n={tree.n_pos[k] + tree.n_neg[k]}: "
                         f"{neg}={tree.n_neg[k]}, {pos}={tree.n_pos[k]})")
            return
        lines.append(f"{bar}{plane(k)} <= 0")
        walk(int(tree.left[k]), indent + 1)
        lines.append(f"{bar}{plane(k)} >  0")
        walk(int(tree.right[k]), indent + 1)

    walk(0, 0)
    return "\n".join(lines) + "\n"
