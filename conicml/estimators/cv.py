r"""Estimators that choose a hyper-parameter by cross-validation along a warm-started path.

scikit-learn's ``*CV`` convention (:class:`~sklearn.linear_model.LogisticRegressionCV`):

* :class:`SVMClassifierCV`: :class:`~conicml.estimators.SVMClassifier` over a grid of C;
* :class:`RankRCClassifierCV`: :class:`~conicml.estimators.RankRCClassifier` over a grid
  of :math:`\lambda`.

Each fold computes its kernel matrix once and solves the whole grid with
:func:`conicml.solve_path` (every solve warm started from its neighbour, each certified as
a cold solve), with the folds of :func:`sklearn.model_selection.check_cv` and the scorer of
:func:`sklearn.metrics.check_scoring`, as :class:`~sklearn.model_selection.GridSearchCV`
would use them; ``cv_results_``, ``best_params_``, ``best_score_`` and ``best_index_``
read as ``GridSearchCV``'s. With ``refit=True`` the best value is refitted on the whole
data by the base estimator (``best_estimator_``), which then predicts.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning, NotFittedError
from sklearn.metrics import check_scoring, roc_auc_score
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval, StrOptions

from ..formulations import ranking as ranking_formulation
from ..formulations import svm as svm_formulation
from ..kernels import KERNELS, make_kernel
from ..paths import solve_path
from ..solution import Status
from ._base import BinaryConicClassifier
from .ranking import RankRCClassifier
from .svm import SVMClassifier

__all__ = ["RankRCClassifierCV", "SVMClassifierCV"]


# ---- one fold's model at one value, for the scorer -----------------------------------------
class _FoldModel(ClassifierMixin, BaseEstimator):
    """A fitted fold model as the scorer sees it: ``decision_function``, ``predict``, ``score``.

    ``decision(X)`` is :math:`\\sum_j c_j k(x, v_j) + s`; on the fold's own test block (the
    array the scorer is given) it reads the kernel block computed once for the fold.
    """

    def __init__(self, classes: np.ndarray, kernel: Any, vectors: np.ndarray, coef: np.ndarray,
                 shift: float, X_test: np.ndarray, K_test: np.ndarray, auc: bool) -> None:
        self.classes = classes
        self.kernel = kernel
        self.vectors = vectors
        self.coef = coef
        self.shift = shift
        self.X_test = X_test
        self.K_test = K_test
        self.auc = auc
        self.classes_ = classes

    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values of the fold model."""
        if X is self.X_test:
            return self.K_test @ self.coef + self.shift
        X = np.asarray(X, dtype=float)
        if self.kernel.name == "precomputed":
            return X[:, self.vectors] @ self.coef + self.shift
        return self.kernel(X, self.vectors) @ self.coef + self.shift

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where the decision value is >= 0."""
        return self.classes_[(self.decision_function(X) >= 0).astype(int)]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """The base estimator's ``score``: accuracy, or ROC AUC for the rankers."""
        if not self.auc:
            return super().score(X, y, sample_weight=sample_weight)
        return float(roc_auc_score(np.asarray(y) == self.classes_[1], self.decision_function(X),
                                   sample_weight=sample_weight))


def _usable(solution: Any) -> bool:
    """What :func:`~conicml.estimators._base.solve_or_raise` keeps (with a warning or not)."""
    if solution.status in (Status.OPTIMAL, Status.OPTIMAL_INACCURATE):
        return True
    return solution.status is Status.USER_LIMIT and bool(solution.values)


def _kernel_blocks(kern: Any, X: np.ndarray, train: np.ndarray, test: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fold's inputs as its base estimator sees them and the fold's kernel blocks."""
    if kern.name == "precomputed":  # rows and columns of the training samples (_safe_split)
        X_train, X_test = X[np.ix_(train, train)], X[np.ix_(test, train)]
        return X_train, X_test, X_train, X_test
    X_train, X_test = X[train], X[test]
    return X_train, X_test, kern.gram(X_train), kern(X_test, X_train)


# ---- the shared machinery ------------------------------------------------------------------
class _PathCV(BinaryConicClassifier):
    """Cross-validation over one hyper-parameter's path (see the module docstring)."""

    _param: str = ""  # the hyper-parameter's name in the base estimator
    _order: str = "ascending"  # the most regularised end first
    _auc_score = False

    def _grid(self) -> np.ndarray:  # pragma: no cover - implemented by subclasses
        raise NotImplementedError

    def _base_estimator(self, value: float) -> BinaryConicClassifier:  # pragma: no cover
        raise NotImplementedError

    def _fold_path(self, X: np.ndarray, y_pm: np.ndarray, train: np.ndarray,
                   test: np.ndarray, grid: np.ndarray) -> tuple[list, list, np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _fit_signed(self, X: np.ndarray, y_pm: np.ndarray) -> None:
        y = self.classes_[(y_pm > 0).astype(int)]  # the original labels, for the scorer
        grid = self._grid()
        cv = check_cv(self.cv, y, classifier=True)
        folds = list(cv.split(X, y))
        scorer = check_scoring(self._base_estimator(float(grid[0])), scoring=self.scoring)
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_score_fold)(self, X, y, y_pm, train, test, grid, scorer)
            for train, test in folds)
        scores = np.array([o[0] for o in out])  # (n_folds, n_values)
        fit_times = np.array([o[1] for o in out])
        score_times = np.array([o[2] for o in out])
        failed = [f"fold {k}: {msg}" for k, o in enumerate(out) for msg in o[3]]
        if failed:  # GridSearchCV's error_score=np.nan, with the reasons
            warnings.warn(f"{len(failed)} fits failed and were scored nan: "
                          f"{'; '.join(failed[:3])}", FitFailedWarning, stacklevel=3)
        self._store_results(grid, scores, fit_times, score_times)
        if self.refit:
            best = self._base_estimator(float(grid[self.best_index_]))
            best.fit(X, y)
            self.best_estimator_ = best
            for name in ("coef_", "intercept_", "dual_coef_", "support_", "support_vectors_",
                         "basis_", "threshold_", "n_iter_", "solution_"):
                if hasattr(best, name):
                    setattr(self, name, getattr(best, name))

    def _store_results(self, grid: np.ndarray, scores: np.ndarray, fit_times: np.ndarray,
                       score_times: np.ndarray) -> None:
        n_folds, n_values = scores.shape
        results: dict[str, Any] = {
            "mean_fit_time": fit_times.mean(axis=0), "std_fit_time": fit_times.std(axis=0),
            "mean_score_time": score_times.mean(axis=0),
            "std_score_time": score_times.std(axis=0),
        }
        param = np.ma.MaskedArray(np.empty(n_values, dtype=object), mask=False)
        param[:] = [float(v) for v in grid]
        results[f"param_{self._param}"] = param
        results["params"] = [{self._param: float(v)} for v in grid]
        for k in range(n_folds):
            results[f"split{k}_test_score"] = scores[k]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a value failed on every fold
            mean = scores.mean(axis=0)
            std = scores.std(axis=0)
        results["mean_test_score"] = mean
        results["std_test_score"] = std
        # GridSearchCV's ranks: "min" ties, a nan mean ranked last
        finite = np.where(np.isnan(mean), np.nanmin(mean) - 1 if np.any(np.isfinite(mean))
                          else 0.0, mean)
        rank = rankdata(-finite, method="min").astype(np.int32)
        results["rank_test_score"] = rank
        self.cv_results_ = results
        self.best_index_ = int(rank.argmin())
        self.best_params_ = results["params"][self.best_index_]
        self.best_score_ = float(mean[self.best_index_])
        setattr(self, f"{self._param}_", float(grid[self.best_index_]))
        self.n_splits_ = n_folds

    def _decision(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "best_estimator_"):
            raise NotFittedError(f"{type(self).__name__} was fitted with refit=False: it "
                                 "chose best_params_ but fitted no model to predict with")
        return self.best_estimator_._decision(X)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """The refitted best estimator's ``score`` (accuracy; ROC AUC for rankers)."""
        if not hasattr(self, "best_estimator_"):
            raise NotFittedError(f"{type(self).__name__} was fitted with refit=False")
        return self.best_estimator_.score(X, y, sample_weight=sample_weight)


def _score_fold(est: _PathCV, X: np.ndarray, y: np.ndarray, y_pm: np.ndarray,
                train: np.ndarray, test: np.ndarray, grid: np.ndarray, scorer: Any
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """One fold: the path over the grid, each value's model scored on the test block."""
    n = len(grid)
    scores, fit_times, score_times = np.full(n, np.nan), np.zeros(n), np.zeros(n)
    try:
        models, times, X_test = est._fold_path(X, y_pm, train, test, grid)
    except Exception as exc:  # the base estimator's fit would raise: GridSearchCV's nan
        return scores, fit_times, score_times, [f"{type(exc).__name__}: {exc}"]
    fit_times[:] = times
    failures = []
    for j, model in enumerate(models):
        if isinstance(model, str):
            failures.append(model)
            continue
        t0 = time.perf_counter()
        scores[j] = scorer(model, X_test, y[test])
        score_times[j] = time.perf_counter() - t0
    return scores, fit_times, score_times, failures


def _path_solutions(build: Any, grid: np.ndarray, solver: str, options: dict | None,
                    order: str) -> tuple[list, list, list]:
    """``solve_path`` over the grid; the programs built and each value's fit time."""
    programs: dict[int, Any] = {}
    calls = iter(range(len(grid)))

    def record(value: float):
        program = build(value)
        programs[next(calls)] = (value, program)
        return program

    solutions = solve_path(record, list(grid), solver, order=order, **dict(options or {}))
    by_value = {float(v): p for v, p in programs.values()}
    progs = [by_value[float(v)] for v in grid]
    times = [s.total_time + s.extras["path"]["build_time"] for s in solutions]
    for s in solutions:
        if s.status is Status.OPTIMAL_INACCURATE:
            warnings.warn(f"solver {s.solver!r} returned an inaccurate solution "
                          f"({s.message})", ConvergenceWarning, stacklevel=2)
        elif s.status is Status.USER_LIMIT and s.values:
            warnings.warn(f"solver {s.solver!r} stopped before convergence ({s.message})",
                          ConvergenceWarning, stacklevel=2)
    return progs, solutions, times


# ---- SVM -------------------------------------------------------------------------------
class SVMClassifierCV(_PathCV):
    r""":class:`~conicml.estimators.SVMClassifier` with C chosen by cross-validation.

    On each fold the Gram matrix of the training block is computed once and the soft-margin
    dual is solved along the grid of C from the smallest value up
    (:func:`conicml.solve_path`; ``smo`` seeds each :math:`\alpha` from the previous one),
    then scored on the test block. The best C (highest mean score; ties: the first in
    ``Cs``) is refitted on all the data with :class:`SVMClassifier` (``form="dual"``).

    Parameters
    ----------
    Cs : int or array-like of float, default=10
        The grid of C; an int ``k`` means ``np.logspace(-3, 3, k)``.
    cv : int, cross-validation generator or iterable, default=None
        As in :class:`~sklearn.model_selection.GridSearchCV` (``None``: 5-fold stratified).
    scoring : str or callable, default=None
        A scikit-learn scorer; ``None`` is the base estimator's ``score`` (accuracy).
    refit : bool, default=True
        Refit the best C on the whole data (needed for ``predict``).
    n_jobs : int, default=None
        Folds run in parallel with joblib (``None``: one core).
    kernel, gamma, degree, coef0, class_weight
        As in :class:`SVMClassifier`.
    solver : str, default="smo"
        Solver of the dual (``smo`` warm starts; a generic backend solves each value cold).
    solver_options : dict, default=None
        Options for the solver (the path supplies ``x0`` itself).

    Attributes
    ----------
    C_ : float
        The chosen C.
    best_params_ : dict
        ``{"C": C_}``.
    best_score_ : float
        Mean cross-validated score of ``C_``.
    best_index_ : int
        Its index in ``cv_results_``.
    cv_results_ : dict of ndarray
        As ``GridSearchCV.cv_results_``: ``param_C``, ``params``, ``splitk_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``, fit and score times.
    best_estimator_ : SVMClassifier
        Fitted on all the data with ``C_`` (``refit=True``).
    n_splits_ : int
    classes_ : ndarray of shape (2,)
    intercept_, dual_coef_, support_, support_vectors_, coef_
        Those of ``best_estimator_`` (``coef_`` for the linear kernel).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=60, centers=[[-1, -1], [1, 1]], cluster_std=1.2,
    ...                   random_state=0)
    >>> clf = SVMClassifierCV(Cs=[0.01, 0.1, 1.0, 10.0], cv=3, kernel="rbf").fit(X, y)
    >>> clf.best_params_, round(clf.best_score_, 3)
    ({'C': 0.01}, 0.9)
    >>> clf.cv_results_["rank_test_score"]         # ties: the first C in Cs is chosen
    array([1, 1, 1, 4], dtype=int32)
    >>> clf.predict([[-1, -1], [1, 1]])
    array([0, 1])
    """

    _param = "C"
    _order = "ascending"
    _parameter_constraints: dict = {
        "Cs": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
        "refit": ["boolean"],
        "n_jobs": [Integral, None],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "solver": [str],
        "solver_options": [dict, None],
    }

    def __init__(self, Cs: int | Any = 10, *, cv: Any = None, scoring: Any = None,
                 refit: bool = True, n_jobs: int | None = None, kernel: str = "linear",
                 gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0,
                 class_weight: dict | str | None = None, solver: str = "smo",
                 solver_options: dict | None = None) -> None:
        self.Cs = Cs
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.class_weight = class_weight
        self.solver = solver
        self.solver_options = solver_options

    def _grid(self) -> np.ndarray:
        if isinstance(self.Cs, Integral):
            return np.logspace(-3, 3, int(self.Cs))
        grid = np.asarray(self.Cs, dtype=float).reshape(-1)
        if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
            raise ValueError(f"Cs must be positive finite numbers, got {self.Cs!r}")
        return grid

    def _base_estimator(self, value: float) -> SVMClassifier:
        return SVMClassifier(value, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                             coef0=self.coef0, class_weight=self.class_weight, form="dual",
                             solver=self.solver, solver_options=self.solver_options)

    def _class_weight(self, y_pm: np.ndarray) -> Any:
        """``class_weight`` keyed by +1/-1, as :class:`SVMClassifier` maps it."""
        cw = self.class_weight
        if isinstance(cw, dict):
            unknown = set(cw) - set(self.classes_.tolist())
            if unknown:
                raise ValueError(f"class_weight has labels not in the data: {sorted(unknown)}")
            return {(1.0 if label == self.classes_[1] else -1.0): w for label, w in cw.items()}
        return cw

    def _fold_path(self, X, y_pm, train, test, grid):
        t0 = time.perf_counter()
        kern = (make_kernel("precomputed", X[np.ix_(train, train)]) if self.kernel ==
                "precomputed" else make_kernel(self.kernel, X[train], gamma=self.gamma,
                                               degree=self.degree, coef0=self.coef0))
        X_train, X_test, K, K_test = _kernel_blocks(kern, X, train, test)
        y_train = y_pm[train]
        cw = self._class_weight(y_pm)
        gram_time = time.perf_counter() - t0

        first = svm_formulation.soft_margin(K, y_train, float(grid[0]), kernel="precomputed",
                                            class_weight=cw, form="dual")

        def build(C: float):  # the Gram block validated once, by the first program
            return svm_formulation.with_cost(first, C)

        programs, solutions, times = _path_solutions(build, grid, self.solver,
                                                     self.solver_options, self._order)
        models: list[Any] = []
        for C, program, solution in zip(grid, programs, solutions):
            if not _usable(solution):
                models.append(f"C={C:g}: status {solution.status.value} ({solution.message})")
                continue
            model = program.decode(solution)
            support = np.asarray(model["support"])
            coef = np.asarray(model["dual_coef"])[support]
            vectors = support if kern.name == "precomputed" else X_train[support]
            models.append(_FoldModel(self.classes_, kern, vectors, coef, float(model["b"]),
                                     X_test, K_test[:, support], self._auc_score))
        times = np.asarray(times) + gram_time / len(grid)
        return models, times, X_test


# ---- RankRC ----------------------------------------------------------------------------
class RankRCClassifierCV(_PathCV):
    r""":class:`~conicml.estimators.RankRCClassifier` with :math:`\lambda` chosen by CV.

    On each fold the kernel columns of the basis are computed once (one RankRC program)
    and the grid of :math:`\lambda` is solved from the largest value down, each solve
    starting from the previous :math:`\beta` (:func:`conicml.solve_path`), then scored on
    the test block (``scoring=None``: ROC AUC, the base estimator's ``score``). The best
    :math:`\lambda` is refitted on all the data with :class:`RankRCClassifier`.

    Parameters
    ----------
    lams : int or array-like of float, default=16
        The grid of :math:`\lambda`; an int ``k`` means ``2.0 ** np.linspace(-20, 10, k)``
        (the thesis's :math:`\log_2\lambda = -20:2:10` for ``k = 16``).
    cv, scoring, refit, n_jobs
        As in :class:`SVMClassifierCV`.
    kernel, gamma, degree, coef0, basis, loss, eps, random_state, solver, solver_options
        As in :class:`RankRCClassifier` (a random basis is drawn once per fold, as each
        fit of the base estimator on that fold would draw it).

    Attributes
    ----------
    lam_ : float
        The chosen :math:`\lambda`.
    best_params_, best_score_, best_index_, cv_results_, n_splits_, classes_
        As in :class:`SVMClassifierCV` (``param_lam``).
    best_estimator_ : RankRCClassifier
        Fitted on all the data with ``lam_`` (``refit=True``).
    dual_coef_, basis_, threshold_
        Those of ``best_estimator_``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(200) < 0.15).astype(int)        # a rare positive class
    >>> X = rng.normal(size=(200, 3)) + y[:, None]
    >>> clf = RankRCClassifierCV(lams=[1e-3, 1e-1, 10.0], cv=3).fit(X, y)
    >>> clf.best_params_, round(clf.best_score_, 3)
    ({'lam': 10.0}, 0.839)
    """

    _param = "lam"
    _order = "descending"
    _auc_score = True
    _parameter_constraints: dict = {
        "lams": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
        "refit": ["boolean"],
        "n_jobs": [Integral, None],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"mean-distance", "scale", "auto"}),
                  Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "basis": [StrOptions({"rare", "random", "all"})],
        "loss": [StrOptions({"smoothed", "hinge"})],
        "eps": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "solver": [str],
        "solver_options": [dict, None],
    }

    def __init__(self, lams: int | Any = 16, *, cv: Any = None, scoring: Any = None,
                 refit: bool = True, n_jobs: int | None = None, kernel: str = "rbf",
                 gamma: float | str = "mean-distance", degree: int = 3, coef0: float = 1.0,
                 basis: Any = "rare", loss: str = "smoothed", eps: float = 0.1,
                 random_state: Any = None, solver: str = "rank-tr",
                 solver_options: dict | None = None) -> None:
        self.lams = lams
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
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

    def _grid(self) -> np.ndarray:
        if isinstance(self.lams, Integral):
            return 2.0 ** np.linspace(-20, 10, int(self.lams))
        grid = np.asarray(self.lams, dtype=float).reshape(-1)
        if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
            raise ValueError(f"lams must be positive finite numbers, got {self.lams!r}")
        return grid

    def _base_estimator(self, value: float) -> RankRCClassifier:
        return RankRCClassifier(value, kernel=self.kernel, gamma=self.gamma,
                                degree=self.degree, coef0=self.coef0, basis=self.basis,
                                loss=self.loss, eps=self.eps, random_state=self.random_state,
                                solver=self.solver, solver_options=self.solver_options)

    def _fold_path(self, X, y_pm, train, test, grid):
        t0 = time.perf_counter()
        if self.kernel == "precomputed":
            X_train, X_test = X[np.ix_(train, train)], X[np.ix_(test, train)]
        else:
            X_train, X_test = X[train], X[test]
        y_train = y_pm[train]
        # one program: its kernel columns KR are shared by every lambda (with_lambda)
        first = ranking_formulation.rankrc(
            X_train, y_train, float(grid[0]), kernel=self.kernel, gamma=self.gamma,
            degree=self.degree, coef0=self.coef0, basis=self.basis, loss=self.loss,
            eps=self.eps, random_state=self.random_state)
        R = np.asarray(first.data["basis"])
        kern = first.data["kernel"]
        K_test = (X_test[:, R] if kern.name == "precomputed" else kern(X_test, X_train[R]))
        gram_time = time.perf_counter() - t0

        def build(lam: float):
            return ranking_formulation.with_lambda(first, lam)

        programs, solutions, times = _path_solutions(build, grid, self.solver,
                                                     self.solver_options, self._order)
        models: list[Any] = []
        k = int(np.sum(y_train > 0))
        for lam, program, solution in zip(grid, programs, solutions):
            if not _usable(solution):
                models.append(f"lam={lam:g}: status {solution.status.value} "
                              f"({solution.message})")
                continue
            model = program.decode(solution)
            # RankRCClassifier's threshold: the midpoint of the k-th and (k+1)-th largest
            # training scores (the training prior)
            s = np.sort(model["scores"])[::-1]
            threshold = float(0.5 * (s[k - 1] + s[k]))
            beta = np.asarray(model["beta"])
            vectors = R if kern.name == "precomputed" else X_train[R]
            models.append(_FoldModel(self.classes_, kern, vectors, beta, -threshold,
                                     X_test, K_test, self._auc_score))
        times = np.asarray(times) + gram_time / len(grid)
        return models, times, X_test
