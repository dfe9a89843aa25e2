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
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import registry
from .._utils import progress as _progress
from .._utils.deprecation import DEPRECATED, renamed_param
from .._utils.engines import resolve_engine
from ..exceptions import ConicMLWarning, OptionError, ProgramError
from ..formulations import svm as svm_formulation
from ..kinds import SVM_PRIMAL
from ..moments.distributed import as_dask_arrays, is_dask_array, is_dask_input
from ..solving import solve
from ._base import L2_PENALTY, warn_if_constant_score, warn_unit_dependent
from ._hlsvm_tree import Tree, _reachable, cost_complexity_sequence, entropy

__all__ = ["HLSVMClassifier", "export_text"]

#: Node solvers that take H-LSVM's max_iter, batch_size, tau, tol and random_state.
_PEGASOS_FAMILY = ("pegasos", "weighted-pegasos")
#: ``node_solver="auto"``: every node is solved by ``dcd`` (dual coordinate descent with
#: the exact bias, certified by its duality gap) when its compiled loop runs; on the
#: NumPy engine nodes with at most this many samples are solved by ``clarabel``, larger
#: ones by ``weighted-pegasos``...
AUTO_EXACT_MAX = 2000
#: ... and either falls back to ``clarabel`` when it stops at its limit uncertified and
#: the node has at most this many entries |S_H| * M.
AUTO_FALLBACK_MAX_ENTRIES = 200_000


def _to_raw_features(tree: Tree, mu: np.ndarray, sigma: np.ndarray) -> Tree:
    """Map a tree grown on standardised features back to the raw ones, in place:
    :math:`\\tilde w^\\top(x - \\mu)/\\sigma + \\tilde b = (\\tilde w/\\sigma)^\\top x + \\tilde b
    - (\\tilde w/\\sigma)^\\top\\mu`."""
    for k in range(len(tree.left)):
        if tree.left[k] >= 0:
            w_raw = tree.weights[k] / sigma
            tree.weights[k], tree.bias[k] = w_raw, float(tree.bias[k] - w_raw @ mu)
    return tree


def _prune(full: Any, Xp: np.ndarray, pos_p: np.ndarray) -> tuple[Any, list]:
    """Cost-complexity pruning on the held-out samples (Xp, positive mask ``pos_p``): the
    subtree of the sequence with the fewest weighted errors (ties: the smaller tree), and
    the path ``(alpha, hyperplanes, errors)`` of the whole sequence."""
    masks, alphas = cost_complexity_sequence(full)
    cost_p = full.class_weight[pos_p.astype(np.intp)]  # c_- or c_+ per sample
    best, best_err, path = 0, math.inf, []
    for i, (mask, alpha) in enumerate(zip(masks, alphas)):
        leaf, _ = full.route(Xp, mask)
        errors = float(cost_p[full.label[leaf].astype(bool) != pos_p].sum())
        path.append((alpha, int(np.count_nonzero(mask & _reachable(full, mask))), errors))
        if errors <= best_err * (1 + 1e-12) + 1e-12:  # ties: the smaller tree
            best, best_err = i, errors
    return full.prune_to(masks[best]), path


class HLSVMClassifier(ClassifierMixin, BaseEstimator):
    r"""Hierarchical Linear SVM: an oblique tree of class-balanced linear SVMs (seed 001, ch. 5).

    **Training** (§5.2, Algorithm 6). A random fraction ``pruning_fraction`` of the data is
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

    Leaves are labelled by the majority (2.37) weighted by ``class_weight``. With
    ``pruning_fraction > 0`` the tree is then pruned by cost complexity (A17), with the same
    class weights in the cost :math:`R(t)`, and the subtree with the fewest
    weighted errors on :math:`P` is kept.

    **Imbalanced classes** (a deviation from the thesis). The node problems are
    class-balanced (5.3), but the thesis's leaf labels (2.37) and pruning cost
    count samples: on data with a few percent of positives the leaves vote for
    the majority and pruning keeps the root, a constant model. The default
    ``class_weight="balanced"`` weighs both in the units the nodes were trained
    in (:math:`c_\pm = N/(2N^\pm)` on the growing set); ``class_weight=None`` is
    the thesis's unweighted vote.

    **Score.** ``decision_function`` ranks the samples: first by the weighted
    positive fraction :math:`q_L = c_+n_+^L/(c_+n_+^L + c_-n_-^L)` of the leaf
    :math:`L` reached, then, within a leaf, by the margin of the last hyperplane
    on the path, :math:`f_P(x) = w_P^\top x + b_P` (trained with the positive class
    on its positive side):

    .. math::

        s(x) = q_L - \tfrac12 + \eta \tanh f_P(x),

    with :math:`\eta` a quarter of the smallest gap between the distinct values
    of :math:`q_L - \frac12` and 0, so the margin term never reorders leaves nor
    changes a sign: ``predict`` is ``classes_[1]`` exactly where :math:`s \ge 0`
    (a leaf with :math:`q_L = \frac12` uses :math:`\eta(1 + \tanh f_P)/2 \ge 0`).
    A single-leaf tree has a constant score: ``fit`` warns
    (:class:`~sklearn.exceptions.ConvergenceWarning`, "constant score").

    **The node bias is not unique** when every sample of a node lies inside the
    margin (:math:`y_i(w^\top x_i + b) < 1` for all :math:`i`): there the loss is
    linear in :math:`b` with slope :math:`-\sum_i \nu_i y_i / |S_H| = 0` under the
    balancing weights (5.3), so every :math:`b` that keeps all samples inside the
    margin is optimal, and solvers return different ones (an interior-point solver
    the middle of the interval, Weighted-Pegasos wherever its bias steps stop). The
    split, hence the tree, then depends on the node solver. A larger ``lam`` does
    not remove it; it arises on nodes whose classes overlap almost completely.

    **Defaults that converge.** The thesis runs Weighted-Pegasos with
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
    each case). ``standardize=False, node_solver="weighted-pegasos", max_iter=10**7`` is
    the thesis's setting.

    Parameters
    ----------
    lam : float, default=1e-5
        :math:`\lambda > 0` of the node problems (the thesis's banana value).
    pruning_fraction : float, default=0.1
        Fraction held out for pruning, in [0, 1); 0 disables pruning (the thesis's
        :math:`\rho`).
    delta : float or None, default=None
        Minimal node fraction :math:`\delta \in (0, 1]`; ``None`` means the
        thesis's :math:`10^{-\lfloor\log_{10}N\rfloor}`.
    max_iter : int, default=20000
        Iterations :math:`T` of the Pegasos node solvers (the thesis: 10^7).
    batch_size : int or None, default=None
        Mini-batch size :math:`k` of the Pegasos node solvers, in [1, N]
        (not reported in the thesis); ``None`` means :math:`\min(32, N)`;
        nodes smaller than :math:`k` use :math:`|S_H|`.
    tau : float, default=1.0
        Bias step scale :math:`\tau` of Weighted-Pegasos (not reported).
    tol : float or None, default=1e-4
        :math:`\varepsilon_{PEG}`, the step-norm stop of Alg. 5 (the Pegasos node
        solvers' ``step_tol``); ``None`` disables it.
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
    class_weight : "balanced", dict or None, default="balanced"
        Class weights :math:`c_\pm` of the leaf labels and of the pruning cost
        (see *Imbalanced classes*): ``"balanced"`` is :math:`N/(2N^\pm)` on the
        growing set; a dict maps labels of ``y`` to relative costs :math:`r_\pm`
        (default 1) applied on top of the balancing, to the leaves and pruning
        (:math:`c_\pm = r_\pm N/(2N^\pm)`) and to the node problems
        (:math:`\nu_i = r_\pm/(2N_H^\pm)` in (5.3)); ``None`` is the thesis's
        unweighted majority (2.37).
    random_state : int, RandomState or None
        Seeds the pruning split and the node solvers.
    rho, T, eps : deprecated
        The spellings of ``pruning_fraction``, ``max_iter`` and ``tol`` before this
        release; still accepted with a ``FutureWarning``.

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
    n_iter_ : int
        The largest number of iterations a node solver ran (0 if no node problem
        was solved).
    node_solvers_ : dict
        Count of the solvers that produced the node hyperplanes
        (``"dcd->clarabel"``, ``"weighted-pegasos->clarabel"``: the ``"auto"``
        fallback).
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, c = make_blobs(n_samples=80, centers=[[-2, -2], [2, 2], [-2, 2], [2, -2]],
    ...                   cluster_std=0.5, random_state=0)
    >>> y = (c >= 2).astype(int)  # XOR: no single hyperplane separates it
    >>> clf = HLSVMClassifier(random_state=0).fit(X, y)
    >>> clf.score(X, y)
    1.0
    >>> clf.n_hyperplanes_ >= 2
    True
    """

    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0, None, closed="neither")],
        "pruning_fraction": [Interval(Real, 0, 1, closed="left")],
        "delta": [Interval(Real, 0, 1, closed="right"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "tau": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "node_solver": [str],
        "node_solver_options": [dict, None],
        "standardize": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "random_state": ["random_state"],
        "rho": [Interval(Real, 0, 1, closed="left"), Hidden(StrOptions({DEPRECATED}))],
        "T": [Interval(Integral, 1, None, closed="left"), Hidden(StrOptions({DEPRECATED}))],
        "eps": [Interval(Real, 0, None, closed="left"), None,
                Hidden(StrOptions({DEPRECATED}))],
    }

    def __init__(self, lam: float = 1e-5, pruning_fraction: float = 0.1,
                 delta: float | None = None, max_iter: int = 20_000,
                 batch_size: int | None = None, tau: float = 1.0, tol: float | None = 1e-4,
                 node_solver: str = "auto", node_solver_options: dict | None = None,
                 standardize: bool = True, class_weight: str | dict | None = "balanced",
                 random_state: Any = None, rho: float | str = DEPRECATED,
                 T: int | str = DEPRECATED, eps: float | None | str = DEPRECATED) -> None:
        self.lam = lam
        self.pruning_fraction = pruning_fraction
        self.delta = delta
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.tau = tau
        self.tol = tol
        self.rho = rho
        self.T = T
        self.eps = eps
        self.node_solver = node_solver
        self.node_solver_options = node_solver_options
        self.standardize = standardize
        self.class_weight = class_weight
        self.random_state = random_state

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> HLSVMClassifier:
        """Grow the tree on ``(1 - pruning_fraction)`` of the data and prune it on the rest.

        Parameters
        ----------
        X : array-like or dask.array of shape (n_samples, n_features)
            A Dask array is grown on the workers of the active Dask client
            (:mod:`conicml.estimators._dask_hlsvm`; see *Notes*).
        y : array-like or dask.array of shape (n_samples,)
            Two classes; ``classes_[1]`` is the positive class.

        Returns
        -------
        self
        """
        self._validate_params()
        if is_dask_input(X):
            from ._dask_hlsvm import fit_hlsvm_dask

            fit_hlsvm_dask(self, *as_dask_arrays(X, y, self))
            return self
        X, y = validate_data(self, X, y, dtype=np.float64)
        # every node is a linear SVM; standardised nodes make the tree invariant to the units
        warn_unit_dependent(self, X, None if self.standardize else L2_PENALTY)
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
        self._check_node_options(n)
        self._node_costs = self._relative_costs()
        rng = check_random_state(self.random_state)

        fraction = renamed_param(self, "rho", "pruning_fraction")
        self._max_iter = renamed_param(self, "T", "max_iter")
        self._tol = renamed_param(self, "eps", "tol")
        n_prune = int(round(fraction * n))
        perm = rng.permutation(n)
        prune_idx, grow_idx = perm[:n_prune], perm[n_prune:]
        if grow_idx.size == 0:
            raise ProgramError(f"pruning_fraction={fraction} leaves no sample to grow the tree "
                               "on (give a value below 1)")
        Xg, yg = X[grow_idx], y_pm[grow_idx]
        N = Xg.shape[0]
        delta = self.delta if self.delta is not None else 10.0 ** (-math.floor(math.log10(N)))
        self.delta_ = float(delta)
        if self.standardize:
            mu = Xg.mean(axis=0)
            sigma = Xg.std(axis=0)
            sigma[~(sigma > 1e-12 * np.maximum(1.0, np.abs(mu)))] = 1.0  # constant column
            tree = _to_raw_features(self._grow((Xg - mu) / sigma, yg, N, rng), mu, sigma)
        else:
            tree = self._grow(Xg, yg, N, rng)
        full = tree.freeze()
        full.class_weight = self._class_weights(yg)
        self.n_hyperplanes_unpruned_ = int(np.count_nonzero(~full.is_leaf))
        self.pruning_path_ = []
        if n_prune > 0 and not full.is_leaf[0]:
            full, self.pruning_path_ = _prune(full, X[prune_idx], y_pm[prune_idx] > 0)
        if (self.node_solver_options and self.node_solver.lower() == "auto"
                and "clarabel" in self.node_solvers_ and len(self.node_solvers_) == 1):
            warnings.warn(
                f"node_solver_options were not used: node_solver='auto' solved every node "
                f"with clarabel (all had at most {AUTO_EXACT_MAX} samples) and passes them "
                f"to weighted-pegasos nodes only; set node_solver='weighted-pegasos' to use "
                f"them", ConicMLWarning, stacklevel=2)
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
        if self.n_hyperplanes_ == 0:
            why = ("pruning kept the root" if self.n_hyperplanes_unpruned_ > 0 else
                   "no split of the root lowered the impurity, or the root was pure or "
                   "smaller than delta")
            weights = "use class_weight='balanced', " if self.class_weight is None else ""
            warn_if_constant_score(
                "HLSVMClassifier", self._score(X), 0.0,
                f"the tree is a single leaf ({why}); {weights}a smaller delta, or a "
                "smaller pruning_fraction (or 0: the pruning set may hold too few samples of the "
                "minority class)", stacklevel=3)
        return self

    def _check_node_options(self, n: int) -> None:
        """Fail before growing: a batch larger than the data, a node solver that does not
        accept the SVM primal, an option the node solver does not take."""
        if self.batch_size is not None and self.batch_size > n:
            raise ProgramError(f"batch_size must be <= the number of samples ({n}), "
                               f"got {self.batch_size}")
        for solver_name in self._node_solvers():  # SolverError names the kinds it accepts
            registry.get(solver_name, kind=SVM_PRIMAL)
        if self.node_solver_options:  # an unknown option fails now, not at the first big node
            target = ("weighted-pegasos" if self.node_solver.lower() == "auto"
                      else self.node_solver)
            unknown = sorted(set(self.node_solver_options) - set(registry.get(target).options))
            if unknown:
                raise OptionError(
                    f"node_solver_options: {target!r} does not accept {', '.join(unknown)}"
                    + (" (with node_solver='auto' they go to the weighted-pegasos nodes)"
                       if self.node_solver.lower() == "auto" else ""))

    def _relative_costs(self) -> np.ndarray:
        """(r_-, r_+): the dict ``class_weight`` on top of the balancing, else (1, 1)."""
        if not isinstance(self.class_weight, dict):
            return np.ones(2)
        unknown = set(self.class_weight) - set(self.classes_.tolist())
        if unknown:
            raise ValueError(f"class_weight has labels not in the data: {sorted(unknown)}")
        weights = np.array([float(self.class_weight.get(c, 1.0)) for c in self.classes_])
        if not (np.all(np.isfinite(weights)) and np.all(weights > 0)):
            raise ValueError(f"class_weight values must be positive and finite, got "
                             f"{self.class_weight}")
        return weights

    def _class_weights(self, y: np.ndarray) -> np.ndarray:
        """(c_-, c_+) of the leaf labels and the pruning cost, from the growing labels."""
        n_pos = int(np.count_nonzero(y > 0))
        return self._class_weights_from_counts(n_pos, y.size - n_pos)

    def _class_weights_from_counts(self, n_pos: int, n_neg: int) -> np.ndarray:
        """(c_-, c_+) from the class counts of the growing set."""
        if self.class_weight is None:
            return np.ones(2)
        n = float(n_pos + n_neg)
        # r_-+ N / (2 N^-+): the scale of (5.3)'s nu at the root times the relative costs;
        # a class absent from the growing set gets weight r (it reaches no leaf)
        balance = np.array([n / (2 * n_neg) if n_neg else 1.0,
                            n / (2 * n_pos) if n_pos else 1.0])
        return self._node_costs * balance

    def _grow(self, X: np.ndarray, y: np.ndarray, N: int, rng: np.random.RandomState) -> Tree:
        tree = Tree(X.shape[1])
        statuses: dict[str, int] = {}
        self.node_solvers_ = {}
        self.n_iter_ = 0
        messages: list[str] = []
        root = tree.add(int(np.count_nonzero(y > 0)), int(np.count_nonzero(y < 0)), 0)
        stack = [(root, np.arange(X.shape[0]))]
        bar = _progress.progress_bar("H-LSVM growth", unit="node")  # nodes visited
        while stack:
            node, idx = stack.pop()
            bar.update()
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
        bar.close()
        self.node_statuses_ = statuses
        # OPTIMAL_INACCURATE is the thesis's own epsilon_PEG stop (Alg. 5): counted, not warned
        bad = {k: v for k, v in statuses.items() if k not in ("optimal", "optimal_inaccurate")}
        if bad:
            warnings.warn(
                f"{sum(bad.values())} of {sum(statuses.values())} node problems were not "
                f"solved to the node solver's tolerance ({bad}); e.g. {messages[0]}. The tree "
                "uses the returned hyperplanes (a node without one is a leaf); raise max_iter "
                "or pass node_solver_options",
                ConvergenceWarning, stacklevel=3)
        return tree

    def _solve_node(self, X: np.ndarray, y: np.ndarray, n_pos: int, n_neg: int,
                    rng: np.random.RandomState, statuses: dict, messages: list,
                    node_options: dict | None = None) -> tuple[np.ndarray | None, float]:
        """One node's hyperplane; ``node_options`` replace ``node_solver_options``."""
        n = y.size
        # (5.3): nu = 1/(2 N^+-), and c_i = nu_i / (lambda n) = C nu_i with C = 1/(lambda n);
        # a dict class_weight multiplies nu by its relative costs r_+-
        r_neg, r_pos = self._node_costs
        prog = svm_formulation.soft_margin(
            X, y, C=1.0 / (self.lam * n), form="primal",
            class_weight={1: r_pos / (2 * n_pos), -1: r_neg / (2 * n_neg)})
        node_solver = self.node_solver
        if node_solver.lower() == "auto":
            node_solver = ("dcd" if resolve_engine("hlsvm", "auto") == "numba"
                           else "clarabel" if n <= AUTO_EXACT_MAX else "weighted-pegasos")
        options: dict[str, Any] = {}
        if node_solver.lower() in _PEGASOS_FAMILY:
            k = 32 if self.batch_size is None else self.batch_size
            options = {"max_iter": int(self._max_iter), "batch_size": int(min(k, n)),
                       "tau": float(self.tau), "step_tol": self._tol,
                       "random_state": int(rng.randint(0, 2**31 - 1))}
        if self.node_solver.lower() != "auto" or node_solver != "clarabel":
            options.update((self.node_solver_options if node_options is None
                            else node_options) or {})
        solution = solve(prog, node_solver, **options)
        if (self.node_solver.lower() == "auto" and solution.status.value == "user_limit"
                and n * X.shape[1] <= AUTO_FALLBACK_MAX_ENTRIES):
            solution = solve(prog, "clarabel")
            node_solver = f"{node_solver}->clarabel"
        self.node_solvers_[node_solver] = self.node_solvers_.get(node_solver, 0) + 1
        statuses[solution.status.value] = statuses.get(solution.status.value, 0) + 1
        self.n_iter_ = max(self.n_iter_, int(solution.iterations or 0))
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
        if is_dask_array(X):
            return self._on_dask(X, "apply", np.intp)
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.tree_.route(X)[0]

    def hyperplanes_evaluated(self, X: Any) -> np.ndarray:
        """Number of hyperplanes evaluated to classify each sample (the cost :math:`N_H^P(x)`)."""
        if is_dask_array(X):
            return self._on_dask(X, "hyperplanes_evaluated", np.intp)
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.tree_.route(X)[1]

    def predict_proba(self, X: Any) -> np.ndarray:
        """The score mapped to [0, 1]: :math:`(s + 1/2 + \\eta)/(1 + 2\\eta)`.

        The leaf's class-weighted positive fraction :math:`q_L` refined by the last
        margin (see *Score*); in the order of ``decision_function`` and on the side of
        1/2 that ``predict`` gives. With ``class_weight="balanced"`` it is the
        posterior of balanced classes, not calibrated to the class frequencies of
        ``y`` (calibrate it, e.g. :class:`sklearn.calibration.CalibratedClassifierCV`).
        """
        if is_dask_array(X):
            return self._on_dask(X, "predict_proba", np.float64, columns=2)
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        score, eta = self._score(X, with_eta=True)
        p = np.clip((score + 0.5 + eta) / (1.0 + 2.0 * eta), 0.0, 1.0)
        return np.column_stack([1 - p, p])

    def decision_function(self, X: Any) -> np.ndarray:
        """:math:`q_L - 1/2 + \\eta\\tanh f_P(x)` (see *Score*): the leaf's weighted
        positive fraction, ties within a leaf broken by the last hyperplane's margin;
        ``predict`` is ``classes_[1]`` exactly where it is >= 0."""
        if is_dask_array(X):
            return self._on_dask(X, "decision_function", np.float64)
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._score(X)

    def _on_dask(self, X: Any, method: str, dtype: Any, columns: int | None = None) -> Any:
        """``method`` applied block by block to the rows of a Dask array (a Dask array)."""
        check_is_fitted(self)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has shape {X.shape}, but HLSVMClassifier is expecting "
                             f"{self.n_features_in_} features as input")
        X = X.rechunk({1: -1})
        fn = getattr(self, method)
        if columns is None:
            return X.map_blocks(fn, drop_axis=1, dtype=dtype)
        return X.map_blocks(fn, chunks=(X.chunks[0], (columns,)), dtype=dtype)

    def _score(self, X: np.ndarray, with_eta: bool = False):
        tree = self.tree_
        pos, neg = tree.weighted_counts
        total = pos + neg
        base = np.divide(pos, total, out=np.full(pos.shape, 0.5), where=total > 0) - 0.5
        leaves = np.flatnonzero(tree.is_leaf)
        levels = np.unique(np.r_[base[leaves], 0.0])
        eta = 0.25 * float(np.diff(levels).min()) if levels.size > 1 else 0.25
        parent = np.full(tree.node_count, -1, dtype=np.intp)
        internal = np.flatnonzero(~tree.is_leaf)
        parent[tree.left[internal]] = internal
        parent[tree.right[internal]] = internal
        leaf, _ = tree.route(X)
        p = parent[leaf]
        margin = np.zeros(X.shape[0])
        has = p >= 0
        margin[has] = np.tanh(np.einsum("ij,ij->i", X[has], tree.weights[p[has]])
                              + tree.bias[p[has]])
        b = base[leaf]
        score = np.where(b == 0.0, 0.5 * eta * (1.0 + margin), b + eta * margin)
        return (score, eta) if with_eta else score

    def predict(self, X: Any) -> np.ndarray:
        """The class-weighted majority of the leaf each sample reaches (2.37)."""
        if is_dask_array(X):
            return self._on_dask(X, "predict", self.classes_.dtype)
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

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from conicml.estimators import HLSVMClassifier, export_text
    >>> X, c = make_blobs(n_samples=80, centers=[[-2, -2], [2, 2], [-2, 2], [2, -2]],
    ...                   cluster_std=0.5, random_state=0)
    >>> clf = HLSVMClassifier(random_state=0).fit(X, (c >= 2).astype(int))
    >>> print(export_text(clf, feature_names=["u", "v"], decimals=1))  # doctest: +ELLIPSIS
    |--- ...*u ...*v ... <= 0
    ...
    |   |--- class: 1 (n=...: 0=0, 1=...)
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
