r"""scikit-learn estimators for rare-class ranking (:mod:`conicml.formulations.ranking`).

* :class:`RankRCClassifier`: RankRC (thesis (3.15); paper (13)), the score
  :math:`f(x) = \sum_{r\in\mathcal R}\beta_rk(x_r, x)` over the rare-class basis;
* :class:`RankSVMClassifier`: kernel RankSVM (3.7), the same with every training
  sample in the basis;
* :class:`RankRCRanker`: multi-level RankRC (6.2) for ordinal labels, scored by MAUC.

The rare class is the positive label ``classes_[1]`` (the larger label, as in
the other estimators). ``decision_function`` returns the ranking score and
``score`` the ROC AUC (:func:`sklearn.metrics.roc_auc_score`, ties counted
1/2; :func:`conicml.metrics.auc` gives the thesis' tie convention).

**Prediction rule.** A ranking score has no bias, so ``predict`` thresholds it at
``threshold_``, chosen at fit time to match the training prior: the midpoint
of the :math:`m_+`-th and :math:`(m_+{+}1)`-th largest training scores (the top
:math:`m_+` training scores are predicted rare; a tie across the threshold is
predicted rare). To keep scikit-learn's contract
(``predict`` is ``classes_[1]`` iff ``decision_function >= 0``), the classifiers'
``decision_function`` is the ranking score shifted by that threshold,
:math:`f(x) - t`: the same ranking (AUC is shift invariant);
``ranking_score`` gives :math:`f(x)` itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics import roc_auc_score
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._utils.progress import progress_bar
from ..exceptions import ProgramError
from ..formulations import ranking as ranking_formulation
from ..kernels import KERNELS
from ..metrics import mauc
from ..paths import solve_path
from ..program import Program
from ..solution import Solution
from ._base import (
    BinaryConicClassifier,
    kernel_unit_dependence,
    solve_or_raise,
    warn_unit_dependent,
)

__all__ = ["RankRCClassifier", "RankRCRanker", "RankSVMClassifier", "ranking_path"]

_COMMON_CONSTRAINTS: dict = {
    "lam": [Interval(Real, 0, None, closed="neither")],
    "kernel": [StrOptions(set(KERNELS))],
    "gamma": [StrOptions({"mean-distance", "scale", "auto"}),
              Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [Real],
    "loss": [StrOptions({"smoothed", "hinge"})],
    "eps": [Interval(Real, 0, 1, closed="neither")],
    "solver": [str],
    "solver_options": [dict, None],
}


class _RankingMixin:
    """Fit a ranking program and keep its kernel expansion over the basis."""

    def _basis_param(self) -> Any:
        return self.basis

    def _unit_dependence(self) -> str | None:
        return kernel_unit_dependence(
            self.kernel, "its penalty lambda/2 beta^T K beta weighs each coefficient in the "
            "units of its feature")

    def _fit_program(self, X: np.ndarray, y: np.ndarray):
        program = ranking_formulation.rankrc(
            X, y, self.lam, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
            coef0=self.coef0, basis=self._basis_param(), loss=self.loss, eps=self.eps,
            random_state=getattr(self, "random_state", None))
        solution = solve_or_raise(program, self.solver, self.solver_options)
        model = program.decode(solution)
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = solution.iterations
        self.basis_ = np.asarray(model["basis"])
        self.dual_coef_ = np.asarray(model["beta"])[None, :]
        if self.kernel != "precomputed":
            self.basis_vectors_ = X[self.basis_]
        return model

    def _scores(self, X: np.ndarray) -> np.ndarray:
        if self.kernel == "precomputed":
            K = X[:, self.basis_]
        else:
            K = self.program_.data["kernel"](X, self.basis_vectors_)
        return K @ self.dual_coef_[0]


class RankRCClassifier(_RankingMixin, BinaryConicClassifier):
    r"""RankRC: AUC-optimising rare-class ranking with a rare-class kernel basis.

    Solves (thesis (3.15), paper (13))

    .. math::

        \min_\beta\ \frac1{m_+m_-}\sum_{i:+}\sum_{j:-}\ell_\epsilon\big(f(x_i)-f(x_j)\big)
        + \frac\lambda2\beta^\top K_{\mathcal R\mathcal R}\beta,\qquad
        f(x) = \sum_{r\in\mathcal R}\beta_r k(x_r, x).

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation :math:`\lambda > 0` (grid of the experiments:
        :math:`\log_2\lambda = -20:2:10`).
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma : float or {"mean-distance", "scale", "auto"}, default="mean-distance"
        ``"mean-distance"``: :math:`k = \exp(-\|u-v\|^2/\sigma^2)`, :math:`\sigma^2` the
        mean squared distance of the training data (ch. 5).
    degree : int, default=3
    coef0 : float, default=1.0
    basis : {"rare", "random", "all"}, default="rare"
        ``"random"`` is RANK-RND, ``"all"`` RankSVM.
    loss : {"smoothed", "hinge"}, default="smoothed"
    eps : float in (0, 1), default=0.1
    random_state : int, optional
        Seed of ``basis="random"``.
    solver : str, default="rank-tr"
        Any solver of the program kind (``rank-tr``, ``rank-newton``, ``clarabel``,
        ``ecos``, ``scs``; the hinge loss needs a generic backend).
    solver_options : dict, optional

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    basis_ : ndarray of int
        Training indices of the basis.
    basis_vectors_ : ndarray of shape (n_basis, n_features)
    dual_coef_ : ndarray of shape (1, n_basis)
        :math:`\beta`.
    threshold_ : float
        Score threshold of ``predict`` (see the module docstring);
        ``decision_function`` is :math:`f(x)` minus it.
    program_, solution_, n_iter_
    model_ : dict
        The decoded model (``program_.decode(solution_)``).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=80, n_features=4, weights=[0.85],
    ...                            random_state=0)  # 12 rare positives
    >>> clf = RankRCClassifier(lam=0.01).fit(X, y)
    >>> clf.basis_.size  # the rare class is the kernel basis
    12
    >>> print(round(clf.score(X, y), 2))  # ROC AUC
    0.98
    """

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "basis": [StrOptions({"rare", "random", "all"})],
        "random_state": ["random_state"],
    }

    def __init__(self, lam: float = 0.01, *, kernel: str = "rbf",
                 gamma: float | str = "mean-distance", degree: int = 3, coef0: float = 1.0,
                 basis: str = "rare", loss: str = "smoothed", eps: float = 0.1,
                 random_state: Any = None, solver: str = "rank-tr",
                 solver_options: dict | None = None) -> None:
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.basis = basis
        self.loss = loss
        self.eps = eps
        self.random_state = random_state
        self.solver = solver
        self.solver_options = solver_options

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        model = self._fit_program(X, y)
        scores = np.sort(model["scores"])[::-1]
        k = int(np.sum(y > 0))
        self.threshold_ = float(0.5 * (scores[k - 1] + scores[k]))

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self._scores(X) - self.threshold_

    def ranking_score(self, X: Any) -> np.ndarray:
        r"""The unshifted ranking score :math:`f(x) = \sum_r\beta_r k(x_r, x)`."""
        return self.decision_function(X) + self.threshold_

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """ROC AUC of the ranking scores (``roc_auc_score``, the rare class positive)."""
        return float(roc_auc_score(np.asarray(y) == self.classes_[1], self.decision_function(X),
                                   sample_weight=sample_weight))


class RankSVMClassifier(RankRCClassifier):
    r"""Kernel RankSVM (3.7): :class:`RankRCClassifier` with every training sample in the basis.

    .. math::

        \min_{\beta\in\mathbb R^m}\ \frac1{m_+m_-}\sum_{i:+}\sum_{j:-}
        \ell_\epsilon\big(K_{i\cdot}\beta-K_{j\cdot}\beta\big) + \frac\lambda2\beta^\top K\beta.

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation :math:`\lambda > 0`.
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma : float or {"mean-distance", "scale", "auto"}, default="mean-distance"
        ``"mean-distance"``: :math:`k = \exp(-\|u-v\|^2/\sigma^2)`, :math:`\sigma^2` the
        mean squared distance of the training data (ch. 5).
    degree : int, default=3
    coef0 : float, default=1.0
    loss : {"smoothed", "hinge"}, default="smoothed"
    eps : float in (0, 1), default=0.1
        Smoothing width :math:`\epsilon` of the smoothed hinge.
    solver : str, default="rank-tr"
        Any solver of the program kind (``rank-tr``, ``rank-newton``, ``clarabel``,
        ``ecos``, ``scs``; the hinge loss needs a generic backend).
    solver_options : dict, optional

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    basis_ : ndarray of int
        Every training index.
    basis_vectors_ : ndarray of shape (n_samples, n_features)
    dual_coef_ : ndarray of shape (1, n_samples)
        :math:`\beta`.
    threshold_ : float
        Score threshold of ``predict`` (see the module docstring).
    program_, solution_, n_iter_
    model_ : dict

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=80, n_features=4, weights=[0.85],
    ...                            random_state=0)  # 12 rare positives
    >>> clf = RankSVMClassifier(lam=0.01).fit(X, y)
    >>> clf.basis_.size  # every training sample is in the basis
    80
    >>> print(round(clf.score(X, y), 2))  # ROC AUC
    0.98
    """

    _parameter_constraints: dict = dict(_COMMON_CONSTRAINTS)

    def __init__(self, lam: float = 0.01, *, kernel: str = "rbf",
                 gamma: float | str = "mean-distance", degree: int = 3, coef0: float = 1.0,
                 loss: str = "smoothed", eps: float = 0.1, solver: str = "rank-tr",
                 solver_options: dict | None = None) -> None:
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.loss = loss
        self.eps = eps
        self.solver = solver
        self.solver_options = solver_options

    def _basis_param(self) -> Any:
        return "all"


class RankRCRanker(_RankingMixin, BaseEstimator):
    r"""Multi-level RankRC (thesis (6.2)) for ordinal labels; ``score`` is MAUC.

    Pairs are all :math:`(i, j)` with :math:`y_i > y_j`, the loss is normalised by
    :math:`\sum_{r<s}m_rm_s` and the basis (``"rare"``) is every sample above the
    lowest level. ``decision_function`` / ``predict`` return the ranking score
    (higher = higher level); ``score`` is :func:`conicml.metrics.mauc` (strict >).

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation :math:`\lambda > 0`.
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma : float or {"mean-distance", "scale", "auto"}, default="mean-distance"
        ``"mean-distance"``: :math:`k = \exp(-\|u-v\|^2/\sigma^2)`, :math:`\sigma^2` the
        mean squared distance of the training data (ch. 5).
    degree : int, default=3
    coef0 : float, default=1.0
    basis : {"rare", "random", "all"}, default="rare"
        ``"rare"``: every sample above the lowest level.
    loss : {"smoothed", "hinge"}, default="smoothed"
    eps : float in (0, 1), default=0.1
        Smoothing width :math:`\epsilon` of the smoothed hinge.
    random_state : int, optional
        Seed of ``basis="random"``.
    solver : str, default="rank-tr"
        Any solver of the program kind (``rank-tr``, ``rank-newton``, ``clarabel``,
        ``ecos``, ``scs``; the hinge loss needs a generic backend).
    solver_options : dict, optional

    Attributes
    ----------
    levels_ : ndarray
        The distinct levels of ``y``, sorted.
    basis_ : ndarray of int
        Training indices of the basis.
    basis_vectors_ : ndarray of shape (n_basis, n_features)
    dual_coef_ : ndarray of shape (1, n_basis)
        :math:`\beta`.
    program_, solution_, n_iter_
    model_ : dict

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(-3, 3, 40)
    >>> X = (t + np.random.default_rng(0).normal(0, 0.3, 40))[:, None]
    >>> y = np.digitize(t, [-1, 1])  # levels 0 < 1 < 2
    >>> ranker = RankRCRanker(lam=0.01).fit(X, y)
    >>> ranker.levels_
    array([0, 1, 2])
    >>> print(round(ranker.score(X, y), 2))  # MAUC
    0.99
    """

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "basis": [StrOptions({"rare", "random", "all"})],
        "random_state": ["random_state"],
    }

    def __init__(self, lam: float = 0.01, *, kernel: str = "rbf",
                 gamma: float | str = "mean-distance", degree: int = 3, coef0: float = 1.0,
                 basis: str = "rare", loss: str = "smoothed", eps: float = 0.1,
                 random_state: Any = None, solver: str = "rank-tr",
                 solver_options: dict | None = None) -> None:
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.basis = basis
        self.loss = loss
        self.eps = eps
        self.random_state = random_state
        self.solver = solver
        self.solver_options = solver_options

    def fit(self, X: Any, y: Any) -> RankRCRanker:
        """Fit on ordinal integer levels ``y`` (at least two distinct levels)."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        warn_unit_dependent(self, X, self._unit_dependence())
        if not np.all(y == np.round(y)):
            raise ProgramError("RankRCRanker needs integer ordinal levels in y")
        levels = np.unique(y)
        if levels.size < 2:
            # sklearn's check_fit2d_1sample expects "one class" (or "1 sample") here
            raise ProgramError(f"RankRCRanker needs at least two distinct levels in y; got one "
                               f"class (level {levels[0]:g}) in {y.shape[0]} sample(s)")
        self.levels_ = levels
        self._fit_program(X, y)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Ranking scores (higher = higher level)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._scores(X)

    predict = decision_function

    def score(self, X: Any, y: Any) -> float:
        """MAUC of the scores against the levels ``y`` (strict >)."""
        return mauc(np.asarray(y), self.decision_function(X))


def ranking_path(program: Program, lams: Iterable[float], *, solver: str = "rank-tr",
                 progress: bool | None = None, **options: Any) -> list[tuple[float, Solution]]:
    r"""Solve one ranking program along a λ path, from high λ to low, warm-started.

    :func:`conicml.solve_path` over
    :func:`conicml.formulations.ranking.with_lambda`: the kernel columns of ``program``
    are reused, every λ gets its own program and starts from the previous
    :math:`\beta` (the solver's registered warm start), as in the experiments (grid
    :math:`\log_2\lambda = -20:2:10`). Returns ``[(lam, solution), ...]`` in the order
    solved (decreasing λ). ``progress``: a bar over the λ values on standard error
    (default: when it is a terminal).

    Examples
    --------
    >>> import numpy as np
    >>> from conicml.formulations import ranking
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(40, 2)), np.r_[np.ones(8), -np.ones(32)]
    >>> program = ranking.rankrc(X, y, 1.0, kernel="linear")
    >>> path = ranking_path(program, [0.01, 1.0, 0.1])
    >>> [lam for lam, _ in path], [sol.status.value for _, sol in path]
    ([1.0, 0.1, 0.01], ['optimal', 'optimal', 'optimal'])
    """
    grid = sorted((ranking_formulation._check_lam(v) for v in lams), reverse=True)
    with progress_bar("lambda path", total=len(grid), enable=progress) as bar:
        def build(lam: float) -> Program:
            bar.update()
            return ranking_formulation.with_lambda(program, lam)

        solutions = solve_path(build, grid, solver, order="given", **options)
    return list(zip(grid, solutions))
