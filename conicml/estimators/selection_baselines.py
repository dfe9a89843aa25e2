r"""The baseline feature selectors of seed 001 ch. 3: CFS, streamwise (alpha-investing), RFE-SVM.

They share the fitted attributes of :mod:`conicml.estimators.feature_selection`
(``scores_``, ``ranking_``, ``order_``, ``support_``, ``n_features_to_select_``); CFS and
alpha-investing choose a subset themselves, which ``n_features_to_select=None`` keeps.
"""

from __future__ import annotations

import heapq
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy import stats
from sklearn.base import clone
from sklearn.feature_selection import RFE
from sklearn.multiclass import OneVsRestClassifier
from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt

from .._utils import similarity as sim
from .._utils.validation import check_classes
from .feature_selection import _RankingSelector
from .svm import SVMClassifier

__all__ = ["AlphaInvestingSelector", "CFSSelector", "RFESVMSelector"]


def cfs_merit(relevance: np.ndarray, redundancy: np.ndarray, subset: Any) -> float:
    r"""Hall's CFS merit (seed 001 eq. 2.9) of a feature subset.

    .. math::

        \text{Merit}_S = \frac{k\,\bar\rho_{cf}}{\sqrt{k + k(k-1)\,\bar\rho_{ff}}}

    with :math:`k = |S|`, :math:`\bar\rho_{cf}` the mean feature-class correlation
    (``relevance``) and :math:`\bar\rho_{ff}` the mean correlation over the
    :math:`k(k-1)` ordered pairs of distinct features of S (``redundancy``, symmetric).
    The empty set has merit 0.
    """
    s = np.asarray(subset, dtype=int)
    k = s.size
    if k == 0:
        return 0.0
    r_cf = relevance[s].mean()
    block = redundancy[np.ix_(s, s)]
    r_ff = (block.sum() - np.trace(block)) / (k * (k - 1)) if k > 1 else 0.0
    return float(k * r_cf / np.sqrt(k + k * (k - 1) * r_ff))


class CFSSelector(_RankingSelector):
    r"""Correlation-based feature selection (Hall 1999; seed 001 eq. 2.9, §2.2.1).

    Relevance is Hall's prior-weighted one-vs-rest absolute correlation
    :math:`\sum_k \hat P_k |\hat\rho(X_j, 1[Y=k])|` and redundancy the absolute Pearson
    correlation between features, as for the correlation form of
    :class:`~conicml.estimators.QPFSSelector`. The subset maximising the merit
    (:func:`cfs_merit`) is searched best-first from the empty set, forward: the open
    subset of highest merit is expanded by every single-feature addition, and the search
    stops after ``max_backtracks`` consecutive expansions that do not improve the best
    merit (Hall's and Weka's default: 5).

    Ranking: the best subset first (in the order its features were added along the
    search), then the other features by continuing greedy forward additions of highest
    merit; ``scores_`` is the merit after each feature's addition.
    ``n_features_to_select=None`` keeps the best subset.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        ``None``: the subset found by the search.
    max_backtracks : int, default=5

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 100)
    >>> X = rng.normal(size=(200, 5))
    >>> X[:, 1] += 2 * y  # only feature 1 carries the class
    >>> CFSSelector().fit(X, y).get_support(indices=True)
    array([1])
    """

    _chooses_subset = True
    _parameter_constraints: dict = {
        **_RankingSelector._parameter_constraints,
        "max_backtracks": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_features_to_select: int | float | None = None, *,
                 max_backtracks: int = 5) -> None:
        self.n_features_to_select = n_features_to_select
        self.max_backtracks = max_backtracks

    def _rank(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = X.shape[1]
        constant = sim.constant_features(X)
        rel = np.where(constant, 0.0, sim.correlation_relevance(X, y))
        red = sim.correlation_rows(X)
        best_set: tuple[int, ...] = ()
        best = 0.0
        heap: list[tuple[float, tuple[int, ...]]] = [(-0.0, ())]
        seen: set[frozenset] = {frozenset()}
        stale = 0
        while heap and stale < self.max_backtracks:
            _, subset = heapq.heappop(heap)
            improved = False
            for j in range(m):
                if j in subset or constant[j]:
                    continue
                child = (*subset, j)
                key = frozenset(child)
                if key in seen:
                    continue
                seen.add(key)
                merit = cfs_merit(rel, red, child)
                heapq.heappush(heap, (-merit, child))
                if merit > best + 1e-12:
                    best, best_set, improved = merit, child, True
            stale = 0 if improved else stale + 1
        order = list(best_set)
        scores = np.zeros(m)
        for step, j in enumerate(order):
            scores[j] = cfs_merit(rel, red, order[:step + 1])
        rest = [j for j in range(m) if j not in best_set]
        while rest:  # greedy forward continuation ranks the features left out
            merits = [cfs_merit(rel, red, [*order, j]) for j in rest]
            j = rest.pop(int(np.argmax(merits)))
            scores[j] = max(merits)
            order.append(j)
        self._subset_size = max(1, len(best_set))
        return scores, np.array(order)


class AlphaInvestingSelector(_RankingSelector):
    r"""Streamwise feature selection with alpha-investing (Zhou, Foster, Stine & Ungar,
    JMLR 7, 2006; the thesis's "SFS", seed 001 §2.2.1 and Table 3.7). Binary problems.

    The features arrive in column order. With wealth :math:`w_1 = w_0` and the current
    model the least-squares regression of :math:`y \in \{-1, +1\}` on the intercept and
    the features accepted so far, feature i is tested at level
    :math:`\alpha_i = w_i / (2i)`: its p-value is the two-sided t-test of its
    coefficient when added to the current model. If :math:`p_i < \alpha_i` it is
    accepted and :math:`w_{i+1} = w_i + \alpha_\Delta - \alpha_i`, else
    :math:`w_{i+1} = w_i - \alpha_i / (1 - \alpha_i)`; this controls the marginal false
    discovery rate. The thesis ran Zhou et al.'s code without its feature-generation
    step, as here.

    Ranking: the accepted features in the order accepted, then the rejected ones by
    increasing p-value (at the time each was tested); ``scores_`` is
    :math:`-\log_{10} p`. ``n_features_to_select=None`` keeps the accepted features
    (at least one: the feature of smallest p-value when none is accepted).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    w0 : float, default=0.5
        Initial wealth (Zhou et al.'s default).
    alpha_delta : float, default=0.5
        Wealth earned per accepted feature (Zhou et al.'s default).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([-1, 1], 100)
    >>> X = rng.normal(size=(200, 6))
    >>> X[:, 3] += y  # only feature 3 carries the class
    >>> selector = AlphaInvestingSelector().fit(X, y)
    >>> int(selector.ranking_[3]) <= selector.n_features_to_select_, 3 in selector.accepted_
    (True, True)
    """

    _chooses_subset = True
    _parameter_constraints: dict = {
        **_RankingSelector._parameter_constraints,
        "w0": [Interval(Real, 0, 1, closed="neither")],
        "alpha_delta": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, n_features_to_select: int | float | None = None, *,
                 w0: float = 0.5, alpha_delta: float = 0.5) -> None:
        self.n_features_to_select = n_features_to_select
        self.w0 = w0
        self.alpha_delta = alpha_delta

    def _rank(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        classes = check_classes(y, type(self).__name__, binary=True,
                                why="the streamwise t-test regresses a +-1 label")
        n, m = X.shape
        t = np.where(y == classes[1], 1.0, -1.0)
        constant = sim.constant_features(X)
        Q = np.ones((n, 1)) / np.sqrt(n)  # orthonormal basis of the current model
        resid = t - Q @ (Q.T @ t)
        wealth = float(self.w0)
        pvalues = np.ones(m)
        accepted: list[int] = []
        for i in range(m):
            if constant[i]:
                continue
            alpha = wealth / (2.0 * (i + 1))
            x = X[:, i] - Q @ (Q.T @ X[:, i])  # the part of x_i the model does not span
            norm = np.linalg.norm(x)
            dof = n - Q.shape[1] - 1
            if norm <= 1e-10 * max(1.0, np.linalg.norm(X[:, i])) or dof < 1:
                p = 1.0  # collinear with the model: adds nothing
            else:
                q = x / norm
                coef = q @ resid
                rss = resid @ resid - coef**2
                se = np.sqrt(max(rss, 0.0) / dof)
                tstat = np.inf if se == 0 else coef / se
                p = float(2.0 * stats.t.sf(abs(tstat), dof))
            pvalues[i] = p
            if p < alpha:  # (p = 1 for a collinear feature: alpha < 1 always)
                accepted.append(i)
                Q = np.column_stack([Q, q])
                resid = resid - q * (q @ resid)
                wealth += self.alpha_delta - alpha
            else:
                wealth -= alpha / (1.0 - alpha)
        rejected = [j for j in np.argsort(pvalues, kind="stable") if j not in set(accepted)]
        order = np.array(accepted + rejected, dtype=int)
        self._subset_size = max(1, len(accepted))
        self.pvalues_ = pvalues
        self.accepted_ = np.array(accepted, dtype=int)
        return -np.log10(np.maximum(pvalues, 1e-300)), order


class RFESVMSelector(_RankingSelector):
    r"""Recursive feature elimination with a linear SVM (Guyon et al. 2002; seed 001
    Alg. 1, §2.2.3), scikit-learn's :class:`~sklearn.feature_selection.RFE`.

    Repeatedly trains the SVM on the remaining features and removes the ``step``
    feature(s) of smallest :math:`w_j^2` (the ones whose removal changes the margin
    least), down to one feature: ``ranking_`` is the reverse elimination order (1 =
    eliminated last), as ``RFE(n_features_to_select=1)`` gives it. ``step`` = 1 removes
    one feature at a time (Guyon), a fraction in (0, 1) that share of the remaining
    features (0.5: the halving of Table 3.1).

    The default SVM is :class:`~conicml.estimators.SVMClassifier` (linear, C = 1, the
    thesis's classifier in ch. 3); with more than two classes it is wrapped one-vs-rest
    and a feature's weight is :math:`\sum_k w_{kj}^2` over the binary SVMs.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    estimator : estimator with ``coef_``, optional
        The linear classifier (default ``SVMClassifier(C=1.0)``).
    step : int or float, default=1

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = rng.normal(size=(100, 4))
    >>> X[:, 2] += 2 * y  # only feature 2 carries the class
    >>> RFESVMSelector(n_features_to_select=1).fit(X, y).get_support(indices=True)
    array([2])
    """

    _parameter_constraints: dict = {
        **_RankingSelector._parameter_constraints,
        "estimator": [HasMethods(["fit"]), None],
        "step": [Interval(Integral, 1, None, closed="left"),
                 Interval(RealNotInt, 0, 1, closed="neither")],
    }

    def __init__(self, n_features_to_select: int | float | None = None, *,
                 estimator: Any = None, step: int | float = 1) -> None:
        self.n_features_to_select = n_features_to_select
        self.estimator = estimator
        self.step = step

    def _rank(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        base = SVMClassifier(C=1.0) if self.estimator is None else clone(self.estimator)
        getter: Any = "auto"
        if self.estimator is None and np.unique(y).size > 2:
            base = OneVsRestClassifier(base)

            def getter(est):  # sum of w_kj^2 over the one-vs-rest SVMs
                return np.sum([e.coef_.ravel() ** 2 for e in est.estimators_], axis=0)
        rfe = RFE(base, n_features_to_select=1, step=self.step,
                  importance_getter=getter).fit(X, y)
        self.rfe_ = rfe
        ranking = rfe.ranking_
        order = np.argsort(ranking, kind="stable")
        return -ranking.astype(float), order
