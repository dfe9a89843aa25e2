r"""Filter feature selectors of seed 001 ch. 3: QPFS (a conic program), mRMR, MaxRel, ReliefF.

Every selector is a scikit-learn ``SelectorMixin`` (usable in ``Pipeline`` and
``GridSearchCV``) that ranks all M features on ``fit`` and keeps the best
``n_features_to_select``. Fitted attributes shared by all:

* ``scores_`` (M,): the score the method ranks by (QPFS weights :math:`w`, mRMR's
  criterion at the step a feature was picked, MI relevance, ReliefF weights);
* ``ranking_`` (M,): the rank of each feature, 1 = best (as in scikit-learn's ``RFE``);
* ``order_`` (M,): feature indices best first (``np.argsort(ranking_)``);
* ``support_`` (M,) boolean, ``n_features_to_select_``.

Constant (zero-variance) features carry no information: every selector ranks them last.

The mutual-information estimate (mRMR discretisation, :mod:`conicml._utils.similarity`)
is shared by QPFS, mRMR and MaxRel.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._utils import similarity as sim
from .._utils.validation import check_bins, check_classes
from ..formulations import qpfs as qpfs_formulation
from ..moments.distributed import as_dask_arrays, is_dask_array, is_dask_input
from ._base import solve_or_raise

__all__ = ["MRMRSelector", "MaxRelSelector", "QPFSSelector", "ReliefFSelector"]


class _RankingSelector(SelectorMixin, BaseEstimator):
    """Base: validate, rank every feature (``_rank``), keep the best ``n_features_to_select``."""

    _parameter_constraints: dict = {
        "n_features_to_select": [Interval(Integral, 1, None, closed="left"),
                                 Interval(RealNotInt, 0, 1, closed="right"), None],
    }
    #: The method chooses a subset itself (its size in ``_subset_size``, set by ``_rank``),
    #: which ``n_features_to_select=None`` keeps; otherwise ``None`` keeps half.
    _chooses_subset = False

    def fit(self, X: Any, y: Any) -> _RankingSelector:
        """Rank the features of ``X`` against the class labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite values (NaN/inf raise ``ValueError``).
        y : array-like of shape (n_samples,)
            Class labels, at least two classes.

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        check_classes(y, type(self).__name__)
        k = self._n_keep(X.shape[1])
        scores, order = self._rank(X, y)
        return self._keep(X, scores, order, k)

    def _n_keep(self, m: int) -> int:
        """``n_features_to_select`` resolved for ``m`` features."""
        k = self.n_features_to_select
        if k is None and self._chooses_subset:
            return -1  # resolved in _keep: the subset _rank chose
        if k is None:
            k = max(1, m // 2)
        elif isinstance(k, Real) and not isinstance(k, Integral):
            k = max(1, int(round(k * m)))
        if k > m:
            raise ValueError(f"n_features_to_select={k} is larger than the number of "
                             f"features ({m})")
        return int(k)

    def _keep(self, X: Any, scores: np.ndarray, order: np.ndarray, k: int,
              constant: np.ndarray | None = None) -> _RankingSelector:
        """Store a ranking of the features of ``X`` and keep its first ``k``.

        ``constant`` (the constant-feature mask) is computed from ``X`` unless given
        (a Dask fit has it from its statistics).
        """
        m = X.shape[1]
        if k < 0:
            k = self._subset_size
        if constant is None:
            constant = sim.constant_features(X)
        if constant.any():  # documented handling: no information, ranked last
            order = np.concatenate([order[~constant[order]], np.flatnonzero(constant)])
        ranking = np.empty(m, dtype=int)
        ranking[order] = np.arange(1, m + 1)
        self.scores_ = np.asarray(scores, dtype=float)
        self.order_ = np.asarray(order)
        self.ranking_ = ranking
        self.n_features_to_select_ = int(k)
        self.support_ = ranking <= k
        return self

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self)
        return self.support_

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _rank(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError  # pragma: no cover


def _mi_parameters() -> dict:
    return {"bins": [Interval(Integral, 3, None, closed="left")],
            "width": [Interval(Real, 0, None, closed="neither")]}


def _codes(X: np.ndarray, bins: int, width: float) -> np.ndarray:
    return sim.discretize(X, check_bins(bins), width)


class QPFSSelector(_RankingSelector):
    r"""Quadratic Programming Feature Selection (seed 001 eq. 3.4), solved by any registered
    solver of the kind ``qp.qpfs.simplex``.

    .. math::

        \min_{w \ge 0,\ \mathbf 1^\top w = 1}\ \tfrac12(1-\alpha)\,w^\top \tilde Q w
        - \alpha F^\top w

    (:func:`conicml.formulations.qpfs.qpfs`); features are ranked by :math:`w`, ties by
    relevance (step 8 of §3.2.1); constant features are ranked last.

    Parameters
    ----------
    n_features_to_select : int, float in (0, 1] or None, default=None
        Number (or fraction) of features kept; ``None`` keeps half.
    alpha : float in [0, 1], "auto" or "cv", default="auto"
        ``"auto"`` is :math:`\hat\alpha = \bar q/(\bar q + \bar f)` (eq. 3.7, or 3.11).
        ``"cv"``: the value of ``alphas`` whose selected features give ``estimator`` the
        best mean cross-validated score, as ``GridSearchCV`` over
        ``Pipeline([("qpfs", QPFSSelector(alpha=a)), ("estimator", estimator)])`` would
        choose it, each fold's path over ``alphas`` warm started
        (:func:`conicml.solve_path`) on similarities computed once per fold.
    alphas : array-like of float in [0, 1], default=None
        The grid of ``alpha="cv"``; ``None``: ``np.linspace(0, 1, 11)``.
    cv : int, cross-validation generator or iterable, default=None
        Folds of ``alpha="cv"``, as in :class:`~sklearn.model_selection.GridSearchCV`.
    estimator : classifier, default=None
        Scores the selected features for ``alpha="cv"``; ``None``:
        ``sklearn.svm.SVC(kernel="linear")``.
    scoring : str or callable, default=None
        Scorer of ``alpha="cv"`` (``None``: ``estimator``'s ``score``).
    n_jobs : int, default=None
        Folds of ``alpha="cv"`` in parallel (``None``: one core).
    similarity : {"mi", "correlation"}, default="mi"
    nystrom : float in (0, 1] or None, default=None
        Nyström sampling rate p (QPFS + Nyström, §3.2.1).
    delta : float, default=1e-8
        Relative eigenvalue threshold of the clipped factor.
    bins, width : int, float, default=3, 3.0
        MI discretisation (odd number of segments over mean ± width·sd).
    solver : str, default="simplex-smo"
    solver_options : dict, optional
    random_state : int or None, default=None
        Seed of the Nyström sample.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        The QPFS weights :math:`w`.
    ranking_, order_, support_, n_features_to_select_
        See the module docstring.
    alpha_ : float
        The trade-off used (with ``alpha="cv"``: the chosen one).
    cv_results_, best_params_, best_score_, best_index_
        ``alpha="cv"`` only: as ``GridSearchCV``'s (``param_alpha``).
    program_ : Program
    solution_ : Solution
    model_ : dict
        The decoded model (``program_.decode(solution_)``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = rng.normal(size=(100, 4))
    >>> X[:, 2] += y  # only feature 2 carries the class
    >>> selector = QPFSSelector(n_features_to_select=1).fit(X, y)
    >>> selector.get_support(indices=True)
    array([2])
    >>> int(selector.ranking_[2]), selector.transform(X).shape
    (1, (100, 1))

    ``alpha="cv"`` chooses the trade-off by the cross-validated score of a classifier
    (here the default linear SVC) on the selected features:

    >>> selector = QPFSSelector(1, alpha="cv", alphas=[0.0, 0.5, 1.0], cv=3).fit(X, y)
    >>> selector.cv_results_["mean_test_score"].round(3)
    array([0.55 , 0.651, 0.651])
    >>> selector.alpha_, selector.get_support(indices=True)
    (0.5, array([2]))
    """

    _parameter_constraints: dict = {
        **_RankingSelector._parameter_constraints,
        "alpha": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto", "cv"})],
        "alphas": ["array-like", None],
        "cv": ["cv_object"],
        "estimator": [HasMethods(["fit", "predict"]), None],
        "scoring": [str, callable, None],
        "n_jobs": [Integral, None],
        "similarity": [StrOptions({"mi", "correlation"})],
        "nystrom": [Interval(Real, 0, 1, closed="right"), None],
        "delta": [Interval(Real, 0, 1, closed="left")],
        **_mi_parameters(),
        "solver": [str],
        "solver_options": [dict, None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select: int | float | None = None, *,
                 alpha: float | str = "auto", similarity: str = "mi",
                 nystrom: float | None = None, delta: float = 1e-8, bins: int = 3,
                 width: float = 3.0, solver: str = "simplex-smo",
                 solver_options: dict | None = None, random_state: int | None = None,
                 alphas: Any = None, cv: Any = None, estimator: Any = None,
                 scoring: Any = None, n_jobs: int | None = None) -> None:
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha
        self.alphas = alphas
        self.cv = cv
        self.estimator = estimator
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.similarity = similarity
        self.nystrom = nystrom
        self.delta = delta
        self.bins = bins
        self.width = width
        self.solver = solver
        self.solver_options = solver_options
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> QPFSSelector:
        """Rank the features of ``X`` against the class labels ``y``.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            Finite values. A ``dask.array`` is reduced on the workers of the active
            client to the similarity and relevance (per-block statistics,
            :mod:`conicml._utils.similarity_distributed`); the QP is solved on the client.
        y : array-like or dask array of shape (n_samples,)
            Class labels, at least two classes.

        Returns
        -------
        self
        """
        if not is_dask_input(X):
            return super().fit(X, y)
        return self._fit_dask(*as_dask_arrays(X, y, self))

    def _fit_dask(self, X: Any, y: Any) -> QPFSSelector:
        from .._utils.similarity_distributed import qpfs_statistics

        self._validate_params()
        m = int(X.shape[1])
        k = self._n_keep(m)
        check_bins(self.bins)  # before the passes over the data
        stats = qpfs_statistics(X, y, self.similarity, self.bins, self.width)
        seed = self._seed()
        program = qpfs_formulation.qpfs_from_statistics(
            stats["constant"], stats["Q"], stats["relevance"], self.alpha,
            similarity=self.similarity, nystrom=self.nystrom, delta=self.delta,
            bins=self.bins, width=self.width, random_state=seed)
        solution = solve_or_raise(program, self.solver, self.solver_options)
        model = program.decode(solution)
        self.program_, self.solution_, self.model_ = program, solution, model
        self.alpha_ = float(model["alpha"])
        self.n_features_in_ = m
        return self._keep(X, model["w"], model["ranking"], k, stats["constant"])

    def transform(self, X: Any) -> Any:
        """Keep the selected columns; a dask array stays a dask array (not computed)."""
        if not is_dask_array(X):
            return super().transform(X)
        check_is_fitted(self)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has shape {X.shape}; {type(self).__name__} was fitted on "
                             f"{self.n_features_in_} features")
        return X[:, np.flatnonzero(self.support_)]

    def _rank(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if np.all(sim.constant_features(X)):
            # nothing to select: every feature carries no information (documented handling)
            self.alpha_ = float("nan")
            return np.zeros(X.shape[1]), np.arange(X.shape[1])
        alpha = self.alpha
        if alpha == "cv":
            from .cv import _QPFSAlphaSearch  # cv imports the estimators

            search = _QPFSAlphaSearch(self).run(X, y)
            for name in ("cv_results_", "best_params_", "best_score_", "best_index_",
                         "n_splits_"):
                setattr(self, name, getattr(search, name))
            alpha = search.alpha_
        program = self._program(X, y, alpha)
        solution = solve_or_raise(program, self.solver, self.solver_options)
        return self._store(program, solution)

    def _seed(self) -> int | np.random.Generator | None:
        """``random_state`` as the formulation takes it (a ``RandomState`` draws a seed)."""
        seed = self.random_state
        if seed is not None and not isinstance(seed, (int, np.integer)):
            seed = np.random.default_rng(seed.randint(2**31 - 1))
        return seed

    def _program(self, X: np.ndarray, y: np.ndarray, alpha: float | str):
        """The QPFS program of ``fit`` at ``alpha``."""
        seed = self._seed()
        return qpfs_formulation.qpfs(
            X, y, alpha, similarity=self.similarity, nystrom=self.nystrom,
            delta=self.delta, bins=self.bins, width=self.width, random_state=seed)

    def _store(self, program, solution) -> tuple[np.ndarray, np.ndarray]:
        """Keep a solved program; the weights and the ranking of the features."""
        model = program.decode(solution)
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.alpha_ = float(model["alpha"])
        return model["w"], model["ranking"]


class MRMRSelector(_RankingSelector):
    r"""Minimum-redundancy maximum-relevance, greedy (Peng et al. 2005; seed 001 eq. 2.10).

    The first feature maximises :math:`I(X_j;Y)`; step m adds the
    :math:`j \notin S` maximising

    .. math::

        \text{MID: } I(X_j;Y) - \frac1{|S|}\sum_{i\in S} I(X_i;X_j), \qquad
        \text{MIQ: } I(X_j;Y) \Big/ \frac1{|S|}\sum_{i\in S} I(X_i;X_j),

    with the MI estimate shared with :class:`QPFSSelector`. Every feature is ranked (the
    greedy runs to the end); ``scores_`` is the criterion at the step a feature was added.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    criterion : {"MID", "MIQ"}, default="MID"
    bins, width : int, float, default=3, 3.0

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = rng.normal(size=(100, 4))
    >>> X[:, 2] += y  # only feature 2 carries the class
    >>> selector = MRMRSelector(n_features_to_select=1).fit(X, y)
    >>> selector.get_support(indices=True)
    array([2])
    >>> int(selector.ranking_[2]), selector.transform(X).shape
    (1, (100, 1))
    """

    _parameter_constraints: dict = {
        **_RankingSelector._parameter_constraints,
        "criterion": [StrOptions({"MID", "MIQ"})],
        **_mi_parameters(),
    }

    def __init__(self, n_features_to_select: int | float | None = None, *,
                 criterion: str = "MID", bins: int = 3, width: float = 3.0) -> None:
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.bins = bins
        self.width = width

    def _rank(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        codes = _codes(X, self.bins, self.width)
        relevance = sim.mutual_info_relevance(codes, y)
        m = X.shape[1]
        chosen = np.zeros(m, dtype=bool)
        redundancy = np.zeros(m)
        order, scores = [], np.zeros(m)
        current = int(np.argmax(relevance))
        scores[current] = relevance[current]
        for step in range(1, m + 1):
            order.append(current)
            chosen[current] = True
            if step == m:
                break
            redundancy += sim.mutual_info_rows(codes, self.bins, np.array([current]))[0]
            mean_red = redundancy / step
            if self.criterion == "MID":
                crit = relevance - mean_red
            else:
                crit = relevance / np.maximum(mean_red, 1e-12)
            crit = np.where(chosen, -np.inf, crit)
            current = int(np.argmax(crit))
            scores[current] = crit[current]
        return scores, np.array(order)


class MaxRelSelector(_RankingSelector):
    r"""Maximum relevance: rank by :math:`I(X_j; Y)` (seed 001 §2.2.1, univariate).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    bins, width : int, float, default=3, 3.0

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = rng.normal(size=(100, 4))
    >>> X[:, 2] += y  # only feature 2 carries the class
    >>> selector = MaxRelSelector(n_features_to_select=1).fit(X, y)
    >>> selector.get_support(indices=True)
    array([2])
    >>> int(selector.ranking_[2]), selector.transform(X).shape
    (1, (100, 1))
    """

    _parameter_constraints: dict = {**_RankingSelector._parameter_constraints,
                                    **_mi_parameters()}

    def __init__(self, n_features_to_select: int | float | None = None, *, bins: int = 3,
                 width: float = 3.0) -> None:
        self.n_features_to_select = n_features_to_select
        self.bins = bins
        self.width = width

    def _rank(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        relevance = sim.mutual_info_relevance(_codes(X, self.bins, self.width), y)
        return relevance, np.argsort(-relevance, kind="stable")


class ReliefFSelector(_RankingSelector):
    r"""ReliefF (Kononenko 1994; Robnik-Šikonja & Kononenko 2003), all instances as targets.

    With features scaled to [0, 1] by their range, :math:`\operatorname{diff}_j(a, b) =
    |a_j - b_j|` and neighbours by the Manhattan distance on the scaled features, the
    weight of feature j is

    .. math::

        W_j = \frac1N\sum_i\Big[-\frac1K\sum_{k}\operatorname{diff}_j(x_i, H_k(i))
        + \sum_{C \ne y_i}\frac{P(C)}{1-P(y_i)}\frac1K\sum_k
        \operatorname{diff}_j(x_i, M_k^C(i))\Big],

    with :math:`H_k` the K nearest hits and :math:`M_k^C` the K nearest misses of class C
    (``criterion="difference"``, the canonical form, the default).

    ``criterion="ratio"`` is the thesis's definition (Rodríguez Luján 2012, §2.2.1, unnumbered
    equation):

    .. math::

        C(X_j) = \frac{\sum_{i=1}^N\sum_{k=1}^K |x_i^j - x_{M_k(i)}^j|}
                      {\sum_{i=1}^N\sum_{k=1}^K |x_i^j - x_{H_k(i)}^j|},

    with :math:`M_k(i)` the k-th nearest miss among *all* samples of the other classes
    and :math:`H_k(i)` the k-th nearest hit (same neighbours, scaling and distance as
    above; the ratio itself does not depend on the scale of feature j). A constant
    feature (0 / 0) scores 0; a feature whose hit differences all vanish while a miss
    difference does not scores ``+inf`` (ranked first).

    The default is the papers' setting: K = 10 neighbours and every instance as a target
    (Kononenko 1994; Robnik-Šikonja & Kononenko 2003, who found K = 10 a safe choice: a
    smaller K lets the noise of a few neighbours decide). The thesis used K = 3
    (Table 3.6; ``n_neighbors=3`` reproduces it). Constant features score 0. Cost
    :math:`O(N^2 M)` time, :math:`O(N)` memory beyond the data (the neighbours are found
    in chunks of targets, never from an N x N distance matrix).

    Two known biases of the weight, which no K removes: with imbalanced classes the
    misses of a majority-class target are farther than its hits, so *every* feature,
    relevant or not, gains weight in proportion to its spread on the [0, 1] scale; and a
    heavy-tailed feature (most values near its minimum, e.g. haberman's positive axillary
    nodes) has small range-scaled differences, so its weight is small even when it
    carries the signal. On such data compare with a selector that does not use
    distances (:class:`MaxRelSelector`).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    n_neighbors : int, default=10
    criterion : {"difference", "ratio"}, default="difference"
        The canonical ReliefF weight or the thesis's ratio.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = rng.normal(size=(100, 4))
    >>> X[:, 2] += y  # only feature 2 carries the class
    >>> selector = ReliefFSelector(n_features_to_select=1).fit(X, y)
    >>> selector.get_support(indices=True)
    array([2])
    >>> int(selector.ranking_[2]), selector.transform(X).shape
    (1, (100, 1))
    """

    _parameter_constraints: dict = {**_RankingSelector._parameter_constraints,
                                    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
                                    "criterion": [StrOptions({"difference", "ratio"})]}

    def __init__(self, n_features_to_select: int | float | None = None, *,
                 n_neighbors: int = 10, criterion: str = "difference") -> None:
        self.n_features_to_select = n_features_to_select
        self.n_neighbors = n_neighbors
        self.criterion = criterion

    def _rank(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, m = X.shape
        span = X.max(axis=0) - X.min(axis=0)
        Xn = (X - X.min(axis=0)) / np.where(span > 0, span, 1.0)
        classes, yc, counts = np.unique(y, return_inverse=True, return_counts=True)
        prior = counts / n
        members = [np.flatnonzero(yc == c) for c in range(classes.size)]
        k = self.n_neighbors
        if self.criterion == "ratio":
            return self._ratio(Xn, yc, members, k)
        W = np.zeros(m)
        for ci, targets in enumerate(members):
            for c, idx in enumerate(members):
                # own class: the k nearest hits (the target itself excluded); else misses
                weight = -1.0 if c == ci else prior[c] / (1.0 - prior[ci])
                W += weight * _neighbour_diffs(Xn, targets, idx, k).sum(axis=0)
        W /= n
        return W, np.argsort(-W, kind="stable")

    @staticmethod
    def _ratio(Xn: np.ndarray, yc: np.ndarray, members: list[np.ndarray],
               k: int) -> tuple[np.ndarray, np.ndarray]:
        """The thesis's ratio score (class docstring): summed miss / summed hit diffs."""
        n, m = Xn.shape
        miss_sum, hit_sum = np.zeros(m), np.zeros(m)
        for ci, targets in enumerate(members):
            others = np.flatnonzero(yc != ci)
            hit_sum += _summed(_neighbour_diffs(Xn, targets, targets, k),
                                     min(k, targets.size - 1))
            miss_sum += _summed(_neighbour_diffs(Xn, targets, others, k),
                                      min(k, others.size))
        with np.errstate(divide="ignore", invalid="ignore"):
            W = np.where(hit_sum > 0, miss_sum / np.where(hit_sum > 0, hit_sum, 1.0),
                         np.where(miss_sum > 0, np.inf, 0.0))
        return W, np.argsort(-W, kind="stable")


#: Targets x candidates distances held at once by the ReliefF neighbour search.
_CHUNK_ENTRIES = 1 << 22


def _neighbour_diffs(Xn: np.ndarray, targets: np.ndarray, candidates: np.ndarray,
                     k: int) -> np.ndarray:
    r"""Per target, the mean of :math:`|x_i - x_{nb}|` over its ``k`` nearest candidates.

    Manhattan distance; a target that is itself a candidate is excluded; ties in the
    distance go to the smaller row index (the order of a stable sort of the distances).
    ``candidates`` is sorted. Targets are processed in chunks (``_CHUNK_ENTRIES``
    distances at once), never an N x N matrix. Returns shape (len(targets), m); rows
    with no candidate are zero.
    """
    out = np.zeros((targets.size, Xn.shape[1]))
    if targets.size == 0 or candidates.size == 0:
        return out
    block = max(1, _CHUNK_ENTRIES // candidates.size)
    C = Xn[candidates]
    for s in range(0, targets.size, block):
        rows = targets[s:s + block]
        D = cdist(Xn[rows], C, metric="cityblock")
        pos = np.searchsorted(candidates, rows)
        own = (pos < candidates.size) & (candidates[np.minimum(pos, candidates.size - 1)]
                                         == rows)
        D[np.flatnonzero(own), pos[own]] = np.inf
        avail = candidates.size - own.astype(int)  # candidates per row
        kmin = np.minimum(k, avail)
        for kk in np.unique(kmin):
            if kk == 0:
                continue
            sel = np.flatnonzero(kmin == kk)
            Ds = D if sel.size == rows.size else D[sel]
            # the kk smallest, ties at the kk-th value to the smallest indices
            kth = np.partition(Ds, kk - 1, axis=1)[:, kk - 1:kk]
            chosen = Ds <= kth
            extra = np.flatnonzero(chosen.sum(axis=1) > kk)  # tied beyond the kk-th
            if extra.size:
                sub, cut = Ds[extra], kth[extra]
                tie = sub == cut
                need = kk - (sub < cut).sum(axis=1, keepdims=True)
                chosen[extra] = (sub < cut) | (tie & (np.cumsum(tie, axis=1) <= need))
            nb = np.nonzero(chosen)[1].reshape(sel.size, kk)
            out[s + sel] = np.abs(C[nb] - Xn[rows[sel]][:, None, :]).mean(axis=1)
    return out


def _summed(diffs: np.ndarray, k: int) -> np.ndarray:
    """Column sums of per-target mean differences times ``k`` (the summed differences)."""
    return k * diffs.sum(axis=0)
