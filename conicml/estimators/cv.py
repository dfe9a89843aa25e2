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
from numbers import Integral
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning, NotFittedError
from sklearn.metrics import check_scoring, roc_auc_score
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval
from sklearn.utils.metaestimators import _safe_split
from sklearn.utils.validation import check_is_fitted, validate_data

from .._utils.deprecation import DEPRECATED, renamed_param
from .._utils.progress import progress_bar
from ..contracts.ranking_ops import EXACT_MAX_BASIS
from ..exceptions import ProgramError
from ..formulations import m4 as m4f
from ..formulations import minimax as mm
from ..formulations import qpfs as qpfs_formulation
from ..formulations import ranking as ranking_formulation
from ..formulations import svm as svm_formulation
from ..formulations.svor_dual import svor_dual
from ..formulations.svor_dual import with_cost as svor_with_cost
from ..formulations.svor_implicit import svorim_dual
from ..kernels import make_kernel
from ..paths import path_order, solve_path
from ..solution import Status
from ._base import BinaryConicClassifier, ridge_keywords
from .m4 import M4Classifier
from .minimax import BMPMClassifier
from .ordinal import SVOrdinalRegressor, _fit_ranks
from .ranking import RankRCClassifier
from .specified_rates import ChanceConstrainedClassifier
from .svm import SVMClassifier

__all__ = [
    "BMPMClassifierCV",
    "ChanceConstrainedClassifierCV",
    "M4ClassifierCV",
    "RankRCClassifierCV",
    "SVMClassifierCV",
    "SVOrdinalRegressorCV",
]


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


class _RankFoldModel(_FoldModel):
    """A RankRC fold model: ``shift`` is minus :class:`RankRCClassifier`'s threshold, the
    midpoint of the k-th and (k+1)-th largest training scores (the training prior),
    computed when first asked for (``predict``; the ROC AUC does not need it)."""

    def __init__(self, classes: np.ndarray, kernel: Any, vectors: np.ndarray,
                 coef: np.ndarray, KR: np.ndarray, k: int, X_test: np.ndarray,
                 K_test: np.ndarray, basis: np.ndarray, exact: bool = False) -> None:
        self.classes = self.classes_ = classes
        self.exact = exact  # the fold's solve took exact Newton directions
        self.kernel = kernel
        self.vectors = vectors
        self.coef = coef
        self.KR = KR
        self.k = k
        self.X_test = X_test
        self.K_test = K_test
        self.basis = basis
        self.auc = True
        self._shift: float | None = None

    @property
    def shift(self) -> float:  # noqa: D102
        if self._shift is None:
            s = np.sort(self.KR @ self.coef)[::-1]
            self._shift = -float(0.5 * (s[self.k - 1] + s[self.k]))
        return self._shift


def _usable(solution: Any) -> bool:
    """What :func:`~conicml.estimators._base.solve_or_raise` keeps (with a warning or not)."""
    if solution.status in (Status.OPTIMAL, Status.OPTIMAL_INACCURATE):
        return True
    return solution.status is Status.USER_LIMIT and bool(solution.values)


def _column_major_gram(kern: Any, X_train: np.ndarray) -> np.ndarray:
    r"""The Gram matrix of ``X_train`` in column-major order.

    The solvers read it a column at a time (``smo``'s kernel columns, the certificate's
    and the decoder's products over the support vectors): in column-major order a column
    is contiguous, in row-major order it is a strided gather ~10x slower. The RBF
    matrix is computed in place, :math:`\exp(-\gamma(\|x_i\|^2 + \|x_j\|^2 - 2x_i^\top
    x_j))` with the distances clipped at 0 and a zero diagonal (as
    :func:`sklearn.metrics.pairwise.rbf_kernel`), without its temporaries.
    """
    if kern.name != "rbf":
        return np.asfortranarray(kern.gram(X_train))
    sq = np.einsum("ij,ij->i", X_train, X_train)
    G = X_train @ X_train.T
    G *= -2.0
    G += sq[:, None]
    G += sq[None, :]
    np.maximum(G, 0.0, out=G)
    np.fill_diagonal(G, 0.0)
    G *= -float(kern.gamma)
    np.exp(G, out=G)
    return G.T  # a column-major view (of the transpose: the same kernel values)


def _kernel_blocks(kern: Any, X_train: np.ndarray, X_test: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The fold's kernel blocks: the training block's Gram matrix column-major (see
    :func:`_column_major_gram`) and the test block's kernel values against it."""
    if kern.name == "precomputed":  # rows and columns of the training samples (_safe_split)
        return np.asfortranarray(X_train), X_test
    return _column_major_gram(kern, X_train), kern(X_test, X_train)


def _split(est: Any, X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fold's training inputs and labels and its test inputs, as ``est`` sees them
    (rows and columns of the training samples for a pairwise ``est``)."""
    X_train, y_train = _safe_split(est, X, y, train)
    X_test, _ = _safe_split(est, X, y, test, train)
    return X_train, y_train, X_test


# ---- the shared machinery ------------------------------------------------------------------
#: The search's own parameters (GridSearchCV's); each *CV estimator adds its grid and
#: the base estimator's constraints less the searched one.
_SEARCH_CONSTRAINTS: dict = {
    "cv": ["cv_object"],
    "scoring": [str, callable, None],
    "refit": ["boolean"],
    "n_jobs": [Integral, None],
}

#: A grid given by its size (the default grid of that many values) or by its values.
_GRID_CONSTRAINT: list = [Interval(Integral, 1, None, closed="left"), "array-like"]


def _search_constraints(grid: str, grid_constraint: list, base: type,
                        searched: tuple[str, ...]) -> dict:
    """A *CV estimator's parameter constraints: its grid's, the search's own and the base
    estimator's less the ``searched`` parameters."""
    return {grid: grid_constraint, **_SEARCH_CONSTRAINTS,
            **{k: v for k, v in base._parameter_constraints.items() if k not in searched}}


class _GridCV:
    """Cross-validation over one hyper-parameter's path (see the module docstring).

    Subclasses give the grid (``_grid``), the base estimator at one value
    (``_base_estimator``) and one fold's path, from the base estimator's own program and
    fitted state: ``_fold_state(X_train, y_train, X_test)`` (what every value shares:
    kernel blocks, moments, the first program, ...), ``_fold_program(state, value)`` (a
    ``Program``, or a string saying why the value is infeasible on that fold, which is then
    not solved and scored nan with a warning) and ``_fold_model(state, value, X_train,
    program, solution)`` (the fold's model at that value, as the base estimator's ``fit``
    would leave it). ``_split`` (the fold's inputs), ``_path_solver`` (the solver name
    and options) and ``_order`` (:func:`~conicml.paths.path_order`'s order of the grid)
    have defaults.
    """

    _param: str = ""  # the hyper-parameter's name in the base estimator
    _order: Any = "ascending"  # the most regularised end first (or a key of the value)
    _auc_score = False

    def _grid(self) -> Any:  # pragma: no cover - implemented by subclasses
        raise NotImplementedError

    def _base_estimator(self, value: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _fold_state(self, X_train: np.ndarray, y_train: np.ndarray,
                    X_test: np.ndarray) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _fold_program(self, state: Any, value: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _fold_model(self, state: Any, value: Any, X_train: np.ndarray, program: Any,
                    solution: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _value_params(self, value: Any) -> dict[str, Any]:
        """The base estimator's parameters at one value of the grid."""
        return {self._param: float(value)}

    def _best_attribute(self, value: Any) -> tuple[str, Any]:
        """The attribute naming the chosen value (``C_``, ``lam_``, ...)."""
        return f"{self._param}_", float(value)

    def _split(self, X: np.ndarray, y_enc: np.ndarray, train: np.ndarray, test: np.ndarray,
               grid: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The fold's inputs as the base estimator sees them."""
        return _split(self._base_estimator(grid[0]), X, y_enc, train, test)

    def _path_solver(self) -> tuple[str | None, dict]:
        return self.solver, dict(self.solver_options or {})

    def _fold_path(self, X: np.ndarray, y_enc: np.ndarray, train: np.ndarray,
                   test: np.ndarray, grid: Any) -> tuple[list, np.ndarray, np.ndarray]:
        """Each value's fitted model (or a string saying why it has none), its fit time,
        and the fold's test inputs."""
        t0 = time.perf_counter()
        X_train, y_train, X_test = self._split(X, y_enc, train, test, grid)
        state = self._fold_state(X_train, y_train, X_test)
        programs: list[Any] = [self._fold_program(state, v) for v in grid]
        setup_time = time.perf_counter() - t0
        sequence = [j for j in path_order(list(grid), self._order)
                    if not isinstance(programs[j], str)]
        solutions: list[Any] = [None] * len(grid)
        times = np.zeros(len(grid))
        if sequence:
            solver, options = self._path_solver()
            sols, sub_times = _path_solutions([programs[j] for j in sequence], solver, options)
            for j, sol, t in zip(sequence, sols, sub_times):
                solutions[j], times[j] = sol, t
        models: list[Any] = []
        for value, program, solution in zip(grid, programs, solutions):
            label = _format_params(self._value_params(value))
            if isinstance(program, str):
                models.append(f"{label}: {program}")
            elif not _usable(solution):
                models.append(f"{label}: status {solution.status.value} ({solution.message})")
            else:
                try:
                    models.append(self._fold_model(state, value, X_train, program, solution))
                except Exception as exc:  # the base fit would raise here: nan
                    models.append(f"{label}: {type(exc).__name__}: {exc}")
        return models, times + setup_time / len(grid), X_test

    def _search(self, X: np.ndarray, y: np.ndarray, y_enc: np.ndarray) -> None:
        """Score the grid on every fold, store the results, refit the best value."""
        grid = self._grid()
        cv = check_cv(self.cv, y, classifier=True)
        folds = list(cv.split(X, y))
        scorer = check_scoring(self._base_estimator(grid[0]), scoring=self.scoring)
        n_values = len(grid)
        out = []
        with progress_bar(f"{type(self).__name__} (fold x value)",
                          total=len(folds) * n_values, unit="fit") as bar:
            # a generator: the bar moves as each fold's path is scored
            for result in Parallel(n_jobs=self.n_jobs, return_as="generator")(
                    delayed(_score_fold)(self, X, y, y_enc, train, test, grid, scorer)
                    for train, test in folds):
                out.append(result)
                bar.update(n_values)
        scores = np.array([o[0] for o in out])  # (n_folds, n_values)
        fit_times = np.array([o[1] for o in out])
        score_times = np.array([o[2] for o in out])
        failed = [f"fold {k}: {msg}" for k, o in enumerate(out) for msg in o[3]]
        if failed:  # GridSearchCV's error_score=np.nan, with the reasons
            warnings.warn(f"{len(failed)} fits failed and were scored nan: "
                          f"{'; '.join(failed[:3])}", FitFailedWarning, stacklevel=4)
        self._store_results(grid, scores, fit_times, score_times)
        if self.refit:
            best = self._refit_best(X, y, grid[self.best_index_],
                                    [o[4] for o in out if o[4] is not None])
            self.best_estimator_ = best
            for name in ("coef_", "intercept_", "dual_coef_", "support_", "support_vectors_",
                         "basis_", "threshold_", "thresholds_", "n_iter_", "solution_"):
                if hasattr(best, name):
                    setattr(self, name, getattr(best, name))

    def _store_results(self, grid: Any, scores: np.ndarray, fit_times: np.ndarray,
                       score_times: np.ndarray) -> None:
        n_folds, n_values = scores.shape
        results: dict[str, Any] = {
            "mean_fit_time": fit_times.mean(axis=0), "std_fit_time": fit_times.std(axis=0),
            "mean_score_time": score_times.mean(axis=0),
            "std_score_time": score_times.std(axis=0),
        }
        params = [self._value_params(v) for v in grid]
        for name in params[0]:
            column = np.ma.MaskedArray(np.empty(n_values, dtype=object), mask=False)
            column[:] = [p[name] for p in params]
            results[f"param_{name}"] = column
        results["params"] = params
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
        name, value = self._best_attribute(grid[self.best_index_])
        setattr(self, name, value)
        self.n_splits_ = n_folds

    def _score_models(self, models: list, X_test: np.ndarray, y_test: np.ndarray,
                      scorer: Any, scores: np.ndarray, score_times: np.ndarray) -> None:
        """Score each fitted model of a fold (a string is a failed value, left nan) into
        ``scores`` and ``score_times``."""
        for j, model in enumerate(models):
            if isinstance(model, str):
                continue
            t0 = time.perf_counter()
            scores[j] = scorer(model, X_test, y_test)
            score_times[j] = time.perf_counter() - t0

    def _fold_summary(self, models: list, train: np.ndarray) -> Any:
        """What the refit keeps of a fold's models (``None``: nothing)."""
        return None

    def _refit_best(self, X: np.ndarray, y: np.ndarray, value: Any, folds: list) -> Any:
        """The base estimator at the best value fitted on all the data; ``folds`` holds
        each fold's :meth:`_fold_summary`."""
        return self._base_estimator(value).fit(X, y)

    def _refitted(self) -> Any:
        """``best_estimator_``, which predicts and scores (fitted with ``refit=True``)."""
        if not hasattr(self, "best_estimator_"):
            raise NotFittedError(f"{type(self).__name__} was fitted with refit=False: it "
                                 "chose best_params_ but fitted no model to predict with")
        return self.best_estimator_

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """The refitted best estimator's ``score`` (accuracy; ROC AUC for rankers)."""
        return self._refitted().score(X, y, sample_weight=sample_weight)


class _PathCV(_GridCV, BinaryConicClassifier):
    """A binary classifier chosen on a grid by cross-validation."""

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = getattr(self, "kernel", None) == "precomputed"
        return tags

    def _fit_signed(self, X: np.ndarray, y_pm: np.ndarray) -> None:
        y = self.classes_[(y_pm > 0).astype(int)]  # the original labels, for the scorer
        self._search(X, y, y_pm)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self._refitted()._decision(X)


def _positive_grid(values: Any, name: str, default: Any) -> np.ndarray:
    """A grid of positive numbers; an int ``k`` means ``default(k)``."""
    if isinstance(values, Integral):
        return np.asarray(default(int(values)), dtype=float)
    grid = np.asarray(values, dtype=float).reshape(-1)
    if grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0)):
        raise ValueError(f"{name} must be positive finite numbers, got {values!r}")
    return grid


def _format_params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v!r}"
                     for k, v in params.items())


def _fitted(est: Any, classes: np.ndarray, X_train: np.ndarray) -> Any:
    """``est`` with the attributes its ``fit`` sets from the data (not the model)."""
    est.classes_ = classes
    est.n_features_in_ = X_train.shape[1]
    return est


def _score_fold(est: _GridCV, X: np.ndarray, y: np.ndarray, y_enc: np.ndarray,
                train: np.ndarray, test: np.ndarray, grid: Any, scorer: Any
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """One fold: the path over the grid, each value's model scored on the test block."""
    n = len(grid)
    scores, fit_times, score_times = np.full(n, np.nan), np.zeros(n), np.zeros(n)
    try:
        models, times, X_test = est._fold_path(X, y_enc, train, test, grid)
    except Exception as exc:  # the base estimator's fit would raise: GridSearchCV's nan
        return scores, fit_times, score_times, [f"{type(exc).__name__}: {exc}"], None
    fit_times[:] = times
    failures = [model for model in models if isinstance(model, str)]
    est._score_models(models, X_test, y[test], scorer, scores, score_times)
    return scores, fit_times, score_times, failures, est._fold_summary(models, train)


def _path_solutions(programs: list, solver: str | None, options: dict | None
                    ) -> tuple[list, list]:
    """``solve_path`` over ``programs`` in their order; each solution and its fit time."""
    solutions = solve_path(programs.__getitem__, range(len(programs)), solver, order="given",
                           **dict(options or {}))
    times = [s.total_time + s.extras["path"]["build_time"] for s in solutions]
    for s in solutions:
        if s.status is Status.OPTIMAL_INACCURATE:
            warnings.warn(f"solver {s.solver!r} returned an inaccurate solution "
                          f"({s.message})", ConvergenceWarning, stacklevel=2)
        elif s.status is Status.USER_LIMIT and s.values:
            warnings.warn(f"solver {s.solver!r} stopped before convergence ({s.message})",
                          ConvergenceWarning, stacklevel=2)
    return solutions, times


# ---- SVM -------------------------------------------------------------------------------
#: Most features for which ``SVMClassifierCV(solver="auto")`` solves the linear kernel with
#: ``svm-ipm`` (its iterations cost :math:`O(nd^2)`; beyond, ``smo`` on the Gram matrix).
_IPM_MAX_FEATURES = 1000


class SVMClassifierCV(_PathCV):
    r""":class:`~conicml.estimators.SVMClassifier` with C chosen by cross-validation.

    On each fold the soft-margin dual is solved along the grid of C from the smallest value
    up (:func:`conicml.solve_path`), then scored on the test block. With the default
    ``solver="auto"`` the linear kernel (at most ``1000`` features) is solved by
    ``svm-ipm``, an interior-point method in :math:`O(nd^2)` per iteration whose work
    barely grows with C, every other kernel by ``smo`` on the fold's Gram matrix, computed
    once (each :math:`\alpha` seeded from the previous one). The best C (highest mean
    score; ties: the first in ``Cs``) is refitted on all the data with
    :class:`SVMClassifier` (``form="dual"``, the same solver).

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
    solver : str, default="auto"
        Solver of the dual: ``"auto"`` (``svm-ipm`` for the linear kernel on at most 1000
        features, else ``smo``), ``"smo"`` (warm starts), ``"svm-ipm"``, or a generic
        backend (each value cold).
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
    _parameter_constraints: dict = _search_constraints(
        "Cs", _GRID_CONSTRAINT, SVMClassifier, ("C", "form"))

    def __init__(self, Cs: int | Any = 10, *, cv: Any = None, scoring: Any = None,
                 refit: bool = True, n_jobs: int | None = None, kernel: str = "linear",
                 gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0,
                 class_weight: dict | str | None = None, solver: str = "auto",
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
        return _positive_grid(self.Cs, "Cs", lambda k: np.logspace(-3, 3, k))

    def _base_estimator(self, value: float) -> SVMClassifier:
        return SVMClassifier(value, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                             coef0=self.coef0, class_weight=self.class_weight, form="dual",
                             solver=self._solver(), solver_options=self._solver_options())

    def _solver(self) -> str:
        r"""The solver ``"auto"`` stands for (class docstring), else ``solver``.

        The linear kernel's dual has the rank-d matrix :math:`Q = ZZ^\top`: SMO's updates
        grow with C on overlapping classes (twonorm, 4 000 rows, 20 features, C = 1000:
        over 1e7 updates, LIBSVM 1.1e7-2.0e7), ``svm-ipm``'s 16-51 iterations do not.
        """
        if self.solver != "auto":
            return self.solver
        d = getattr(self, "n_features_in_", 0)
        return "svm-ipm" if self.kernel == "linear" and d <= _IPM_MAX_FEATURES else "smo"

    def _solver_options(self) -> dict | None:
        """``solver_options``, with ``smo``'s iteration cap raised to LIBSVM's (10^7).

        The grid reaches C = 1000, where overlapping classes under a low-rank kernel
        (the linear one) need more than ``smo``'s default cap of 1000 n updates (twonorm,
        800 training rows, C = 1000: 1.03e6 updates, LIBSVM 2.4e6).
        """
        if self._solver() != "smo" or "max_iter" in (self.solver_options or {}):
            return self.solver_options
        return {**(self.solver_options or {}), "max_iter": 10**7}

    def _path_solver(self) -> tuple[str | None, dict]:
        return self._solver(), dict(self._solver_options() or {})

    def _class_weight(self) -> Any:
        """``class_weight`` keyed by +1/-1, as :class:`SVMClassifier` maps it."""
        cw = self.class_weight
        if isinstance(cw, dict):
            unknown = set(cw) - set(self.classes_.tolist())
            if unknown:
                raise ValueError(f"class_weight has labels not in the data: {sorted(unknown)}")
            return {(1.0 if label == self.classes_[1] else -1.0): w for label, w in cw.items()}
        return cw

    def _split(self, X, y_pm, train, test, grid):
        return _split(self, X, y_pm, train, test)  # a precomputed Gram matrix: pairwise

    def _fold_state(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray
                    ) -> Any:
        kern = (make_kernel("precomputed", X_train) if self.kernel == "precomputed" else
                make_kernel(self.kernel, X_train, gamma=self.gamma, degree=self.degree,
                            coef0=self.coef0))
        C0 = float(self._grid()[0])
        if self._solver() == "svm-ipm" and kern.name == "linear":
            # the inputs themselves: svm-ipm works on Z = diag(y) X, never on the Gram matrix
            first = svm_formulation.soft_margin(X_train, y_train, C0, kernel="linear",
                                                class_weight=self._class_weight(),
                                                form="dual")
            return kern, X_test, kern(X_test, X_train), first
        K, K_test = _kernel_blocks(kern, X_train, X_test)
        # the Gram block validated once, by the first program (with_cost at every C)
        first = svm_formulation.soft_margin(K, y_train, C0, kernel="precomputed",
                                            class_weight=self._class_weight(), form="dual")
        return kern, X_test, K_test, first

    def _fold_program(self, state: Any, value: float) -> Any:
        return svm_formulation.with_cost(state[3], value)

    def _fold_model(self, state, value, X_train, program, solution) -> _FoldModel:
        kern, X_test, K_test, _ = state
        model = program.decode(solution)
        support = np.asarray(model["support"])
        coef = np.asarray(model["dual_coef"])[support]
        vectors = support if kern.name == "precomputed" else X_train[support]
        return _FoldModel(self.classes_, kern, vectors, coef, float(model["b"]), X_test,
                          K_test[:, support], self._auc_score)


# ---- RankRC ----------------------------------------------------------------------------
class RankRCClassifierCV(_PathCV):
    r""":class:`~conicml.estimators.RankRCClassifier` with :math:`\lambda` chosen by CV.

    On each fold the kernel columns of the basis are computed once (one RankRC program)
    and the grid of :math:`\lambda` is solved from the largest value down, each solve
    starting from the previous :math:`\beta` or its extrapolation in :math:`\log\lambda`,
    with the eigendecomposition of :math:`K_{\mathcal R\mathcal R}` computed once for the
    fold (:func:`conicml.solve_path`; ``rank_beta`` in ``docs/paths.md``), then scored on
    the test block (``scoring=None``: ROC AUC, the base estimator's ``score``). The best
    :math:`\lambda` is refitted on all the data with :class:`RankRCClassifier`.

    Parameters
    ----------
    lams : int or array-like of float, default=16
        The grid of :math:`\lambda`; an int ``k`` means ``2.0 ** np.linspace(-20, 10, k)``
        (the thesis's :math:`\log_2\lambda = -20:2:10` for ``k = 16``).
    cv, scoring, refit, n_jobs
        As in :class:`SVMClassifierCV`.
    kernel, gamma, degree, coef0, basis, loss, smoothing, random_state, solver, solver_options
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
    _parameter_constraints: dict = _search_constraints(
        "lams", _GRID_CONSTRAINT, RankRCClassifier, ("lam",))

    def __init__(self, lams: int | Any = 16, *, cv: Any = None, scoring: Any = None,
                 refit: bool = True, n_jobs: int | None = None, kernel: str = "rbf",
                 gamma: float | str = "mean-distance", degree: int = 3, coef0: float = 1.0,
                 basis: Any = "rare", loss: str = "smoothed", smoothing: float = 0.1,
                 random_state: Any = None, solver: str = "rank-tr",
                 solver_options: dict | None = None, eps: float | str = DEPRECATED) -> None:
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
        self.smoothing = smoothing
        self.eps = eps
        self.random_state = random_state
        self.solver = solver
        self.solver_options = solver_options

    def _grid(self) -> np.ndarray:
        return _positive_grid(self.lams, "lams", lambda k: 2.0 ** np.linspace(-20, 10, k))

    def _base_estimator(self, value: float) -> RankRCClassifier:
        return RankRCClassifier(value, kernel=self.kernel, gamma=self.gamma,
                                degree=self.degree, coef0=self.coef0, basis=self.basis,
                                loss=self.loss, smoothing=renamed_param(self, "eps", "smoothing"),
                                random_state=self.random_state,
                                solver=self.solver, solver_options=self.solver_options)

    def _split(self, X, y_pm, train, test, grid):
        return _split(self, X, y_pm, train, test)  # a precomputed Gram matrix: pairwise

    def _fold_state(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray
                    ) -> Any:
        # one program: its kernel columns KR are shared by every lambda (with_lambda)
        first = ranking_formulation.rankrc(
            X_train, y_train, float(self._grid()[0]), kernel=self.kernel, gamma=self.gamma,
            degree=self.degree, coef0=self.coef0, basis=self.basis, loss=self.loss,
            smoothing=renamed_param(self, "eps", "smoothing"), random_state=self.random_state)
        R = np.asarray(first.data["basis"])
        kern = first.data["kernel"]
        K_test = (X_test[:, R] if kern.name == "precomputed" else kern(X_test, X_train[R]))
        return first, R, kern, X_test, K_test, int(np.sum(y_train > 0))

    def _fold_program(self, state: Any, value: float) -> Any:
        return ranking_formulation.with_lambda(state[0], value)

    def _fold_model(self, state, value, X_train, program, solution) -> _RankFoldModel:
        _, R, kern, X_test, K_test, k = state
        if "beta" in solution.values:  # the coefficients alone: decode would evaluate F
            beta = np.asarray(solution.values["beta"], dtype=float)
        else:
            beta = np.asarray(program.decode(solution)["beta"])
        vectors = R if kern.name == "precomputed" else X_train[R]
        return _RankFoldModel(self.classes_, kern, vectors, beta, program.data["rank"].KR, k,
                              X_test, K_test, R,
                              exact=solution.extras.get("exact_directions", 0) > 0)

    def _score_models(self, models, X_test, y_test, scorer, scores, score_times) -> None:
        """With ``scoring=None`` (ROC AUC, the base estimator's ``score``), the fold's
        models are scored together: their decision values on the test block are one
        product with the stacked coefficients, and each column's ROC AUC is the
        Mann-Whitney statistic of its mid-ranks (ties count one half, as in
        ``roc_auc_score``). Any other scoring, or a test block of one class (on which
        ``roc_auc_score`` raises), goes through the scorer, model by model."""
        fitted = [j for j, model in enumerate(models) if isinstance(model, _RankFoldModel)]
        positive = np.asarray(y_test) == self.classes_[1]
        n_pos = int(np.sum(positive))
        n_neg = positive.size - n_pos
        if self.scoring is not None or not fitted or n_pos == 0 or n_neg == 0:
            return super()._score_models(models, X_test, y_test, scorer, scores, score_times)
        t0 = time.perf_counter()
        coef = np.stack([models[j].coef for j in fitted], axis=1)
        ranks = rankdata(models[fitted[0]].K_test @ coef, axis=0)
        scores[fitted] = ((ranks[positive].sum(axis=0) - 0.5 * n_pos * (n_pos + 1))
                          / (n_pos * n_neg))
        score_times[fitted] = (time.perf_counter() - t0) / len(fitted)

    def _fold_summary(self, models: list, train: np.ndarray) -> dict:
        """Each value's coefficients with their basis samples' indices in the whole data,
        and whether its solve took exact Newton directions."""
        return {j: (train[model.basis], model.coef, model.exact)
                for j, model in enumerate(models) if isinstance(model, _RankFoldModel)}

    def _refit_best(self, X: np.ndarray, y: np.ndarray, value: float, folds: list
                    ) -> RankRCClassifier:
        r""":class:`RankRCClassifier` at ``value`` on all the data, its solve started
        from the folds' coefficients at that value: each basis sample's mean coefficient
        over the folds whose basis holds it (zero where none does). The rare basis of
        the whole data is the union of the folds' rare bases, each sample in all the
        folds but the one testing it, and the mean of the fold models is a nearby point
        of the same objective; the solve is certified as a cold one. When every fold's
        ``rank-tr`` solve at that value took exact Newton directions, the refit takes
        them from its start (``direction="exact"``, unless ``solver_options`` sets a
        direction or its basis is above ``EXACT_MAX_BASIS``): the whole data at the same
        value is as ill-conditioned, and the trust-region iterations would only switch
        to them on the way. Other bases (a
        random draw, an index array) and solvers without ``x0`` are refitted cold."""
        best = self._base_estimator(value)
        if self.basis not in ("rare", "all") or self.solver not in ("rank-tr", "rank-newton"):
            return best.fit(X, y)
        j = int(np.flatnonzero(self._grid() == value)[0])
        positive = np.asarray(y) == self.classes_[1]
        basis = np.flatnonzero(positive) if self.basis == "rare" else np.arange(len(y))
        total, count = np.zeros(len(y)), np.zeros(len(y))
        exact = []
        for fold in folds:
            if j in fold:
                index, coef, took = fold[j]
                total[index] += coef
                count[index] += 1
                exact.append(took)
        x0 = (total / np.maximum(count, 1))[basis]
        # the size rule of direction="auto" (EXACT_MAX_BASIS) holds for the refit's basis
        hints = ({"direction": "exact"} if self.solver == "rank-tr" and exact and all(exact)
                 and basis.size <= EXACT_MAX_BASIS else None)
        return best._fit_from(X, y, x0 if np.any(x0) else None, hints)


# ---- BMPM ------------------------------------------------------------------------------
class BMPMClassifierCV(_PathCV):
    r""":class:`~conicml.estimators.BMPMClassifier` with :math:`\beta_0` chosen by CV.

    On each fold the class moments (and kernel map) are computed once, by one BMPM
    program, and every :math:`\beta_0` of the grid is the same program at another
    :math:`\beta_0` (:func:`conicml.formulations.minimax.inner_bmpm`), solved from the
    smallest value up with :func:`conicml.solve_path` (``ils-newton`` and ``dinkelbach``
    start from the previous hyperplane). A :math:`\beta_0` at or above the fold's
    ``beta0_max`` (eq. 3.44) is not attainable there: it is scored nan for that fold with a
    :class:`~sklearn.exceptions.FitFailedWarning` naming it, as ``GridSearchCV`` scores a
    failed fit, and the search goes on. The best :math:`\beta_0` is refitted on all the
    data with :class:`BMPMClassifier`.

    Parameters
    ----------
    beta0s : int or array-like of float in [0, 1), default=9
        The grid of :math:`\beta_0`; an int ``k`` means ``k`` values evenly spaced in
        (0, 1), ``np.linspace(0, 1, k + 2)[1:-1]``.
    cv, scoring, refit, n_jobs
        As in :class:`SVMClassifierCV` (``scoring=None``: accuracy).
    bound, kernel, gamma, degree, coef0, ridge, solver, solver_options
        As in :class:`BMPMClassifier` (``solver="auto"``: ``clarabel`` for the linear
        kernel, ``ils-newton`` otherwise; ``ils-newton`` and ``dinkelbach`` warm start).

    Attributes
    ----------
    beta0_ : float
        The chosen :math:`\beta_0`.
    best_params_, best_score_, best_index_, cv_results_, n_splits_, classes_
        As in :class:`SVMClassifierCV` (``param_beta0``).
    best_estimator_ : BMPMClassifier
        Fitted on all the data with ``beta0_`` (``refit=True``).
    coef_, intercept_, dual_coef_
        Those of ``best_estimator_``.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=80, centers=[[-1, -1], [1, 1]], cluster_std=1.5,
    ...                   random_state=0)
    >>> import warnings
    >>> from sklearn.exceptions import FitFailedWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", FitFailedWarning)
    ...     clf = BMPMClassifierCV(beta0s=[0.1, 0.3, 0.5, 0.7, 0.9], cv=3).fit(X, y)
    >>> print(str(caught[0].message).split(" (")[0])
    3 fits failed and were scored nan: fold 0: beta0=0.9: beta0=0.9 is not attainable on this fold
    >>> clf.cv_results_["mean_test_score"].round(3)   # 0.9 > beta0_max on every fold
    array([0.863, 0.9  , 0.888, 0.851,   nan])
    >>> clf.best_params_, round(clf.best_score_, 3)
    ({'beta0': 0.3}, 0.9)
    >>> print(round(clf.best_estimator_.beta_, 3))   # the guarantee on class 0
    0.3
    """

    _param = "beta0"
    _order = "ascending"
    _parameter_constraints: dict = _search_constraints(
        "beta0s", _GRID_CONSTRAINT, BMPMClassifier, ("beta0", "rho"))

    def __init__(self, beta0s: int | Any = 9, *, cv: Any = None, scoring: Any = None,
                 refit: bool = True, n_jobs: int | None = None, bound: str = "chebyshev",
                 kernel: str = "linear", gamma: float | str = "scale", degree: int = 3,
                 coef0: float = 0.0, ridge: float | None = None, solver: str = "auto",
                 solver_options: dict | None = None) -> None:
        self.beta0s = beta0s
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.bound = bound
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge
        self.solver = solver
        self.solver_options = solver_options

    def _grid(self) -> np.ndarray:
        if isinstance(self.beta0s, Integral):
            return np.linspace(0.0, 1.0, int(self.beta0s) + 2)[1:-1]
        grid = np.asarray(self.beta0s, dtype=float).reshape(-1)
        if grid.size == 0 or not np.all((grid >= 0) & (grid < 1)):
            raise ValueError(f"beta0s must lie in [0, 1), got {self.beta0s!r}")
        return grid

    def _base_estimator(self, value: float) -> BMPMClassifier:
        return BMPMClassifier(float(value), bound=self.bound, kernel=self.kernel,
                              gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                              ridge=self.ridge, solver=self.solver,
                              solver_options=self.solver_options)

    def _path_solver(self) -> tuple[str | None, dict]:
        return self._base_estimator(0.5)._solver_name(), dict(self.solver_options or {})

    def _fold_state(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray
                    ) -> Any:
        base = self._base_estimator(0.5)
        lo = 0.5 if self.bound == "gaussian" else 0.0
        first = mm.bmpm(X_train, y_train, lo, bound=self.bound,
                        **base._kernel_kwargs(X_train))
        return first

    def _fold_program(self, first: Any, value: float) -> Any:
        beta0_max = float(first.data["beta0_max"])
        if self.bound == "gaussian" and value < 0.5:
            return "the gaussian bound needs beta0 >= 0.5"
        if value >= beta0_max:  # eq. 3.44: BMPMClassifier.fit raises before any solve
            return (f"beta0={value:g} is not attainable on this fold (beta0_max="
                    f"{beta0_max:.6g}, eq. 3.44)")
        return mm.inner_bmpm(first.data, float(value))  # the same moments, another beta0

    def _fold_model(self, first, value, X_train, program, solution) -> BMPMClassifier:
        est = _fitted(self._base_estimator(value), self.classes_, X_train)
        est.beta0_max_ = float(first.data["beta0_max"])
        est.beta0_ = float(value)
        est._set_model(X_train, program, solution, program.decode(solution))
        return est


# ---- M4 --------------------------------------------------------------------------------
class M4ClassifierCV(_PathCV):
    r""":class:`~conicml.estimators.M4Classifier` (soft margin) with C chosen by CV.

    On each fold the class covariance factors (or the empirical kernel map) are computed
    once and the soft-M4 program (:func:`conicml.formulations.m4.with_cost`) is solved
    along the grid of C from the smallest value up with :func:`conicml.solve_path`: the
    searches over :math:`\rho` (``envelope-newton``, ``quadratic-interpolation``) take the
    previous :math:`\rho^*` as their first middle point and read the fixed-ρ SOCPs already
    solved on the fold (they do not depend on C; the domain ends are solved once a fold,
    not once a value). Each value is scored on the fold's test block and the best C is
    refitted on all the data with :class:`M4Classifier`.

    Parameters
    ----------
    Cs : int or array-like of float, default=10
        The grid of C; an int ``k`` means ``np.logspace(-3, 3, k)``. Useful values scale
        like ``c / n_samples`` (see :class:`M4Classifier`).
    cv, scoring, refit, n_jobs
        As in :class:`SVMClassifierCV` (``scoring=None``: accuracy).
    kernel, gamma, degree, coef0, ridge, reduction, factor_rtol, solver, inner, solver_options
        As in :class:`M4Classifier`.

    Attributes
    ----------
    C_ : float
        The chosen C.
    best_params_, best_score_, best_index_, cv_results_, n_splits_, classes_
        As in :class:`SVMClassifierCV` (``param_C``).
    best_estimator_ : M4Classifier
        Fitted on all the data with ``C_`` (``refit=True``).
    coef_, intercept_, dual_coef_, support_
        Those of ``best_estimator_``.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=60, centers=[[-1, -1], [1, 1]], cluster_std=2.0,
    ...                   random_state=0)
    >>> clf = M4ClassifierCV(Cs=[0.001, 0.01, 0.1, 1.0, 10.0], cv=3).fit(X, y)
    >>> clf.cv_results_["mean_test_score"].round(3)
    array([0.767, 0.767, 0.783, 0.833, 0.833])
    >>> clf.best_params_, round(clf.best_score_, 3)    # ties: the first C in Cs
    ({'C': 1.0}, 0.833)
    >>> clf.predict([[-1, -1], [1, 1]])
    array([0, 1])
    """

    _param = "C"
    _order = "ascending"
    _parameter_constraints: dict = _search_constraints(
        "Cs", _GRID_CONSTRAINT, M4Classifier, ("C", "reg"))

    def __init__(self, Cs: int | Any = 10, *, cv: Any = None, scoring: Any = None,
                 refit: bool = True, n_jobs: int | None = None, kernel: str = "linear",
                 gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0,
                 ridge: float | None = None, reduction: float | None = None,
                 factor_rtol: float = 1e-10, solver: str | None = None, inner: str = "auto",
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
        self.ridge = ridge
        self.reduction = reduction
        self.factor_rtol = factor_rtol
        self.solver = solver
        self.inner = inner
        self.solver_options = solver_options

    def _grid(self) -> np.ndarray:
        return _positive_grid(self.Cs, "Cs", lambda k: np.logspace(-3, 3, k))

    def _base_estimator(self, value: float) -> M4Classifier:
        return M4Classifier(float(value), kernel=self.kernel, gamma=self.gamma,
                            degree=self.degree, coef0=self.coef0, ridge=self.ridge,
                            reduction=self.reduction, factor_rtol=self.factor_rtol,
                            solver=self.solver, inner=self.inner,
                            solver_options=self.solver_options)

    def _path_solver(self) -> tuple[str | None, dict]:
        return self.solver, {"inner": self.inner, **dict(self.solver_options or {})}

    def _fold_state(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray
                    ) -> Any:
        # M4Classifier's program: m4 validates and factors the covariances once per fold
        return m4f.m4(X_train, y_train, float(self._grid()[0]), kernel=self.kernel,
                      gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                      **ridge_keywords(self.ridge, self.kernel), reduction=self.reduction,
                      factor_rtol=self.factor_rtol)

    def _fold_program(self, first: Any, value: float) -> Any:
        return m4f.with_cost(first, float(value))  # the same factors at another C

    def _fold_model(self, data, value, X_train, program, solution) -> M4Classifier:
        est = _fitted(self._base_estimator(value), self.classes_, X_train)
        est._store(X_train, program, solution)
        return est


# ---- chance-constrained (specified rates) ----------------------------------------------
class ChanceConstrainedClassifierCV(_PathCV):
    r""":class:`~conicml.estimators.ChanceConstrainedClassifier` with its pair of error
    rates chosen by CV.

    On each fold the grid of pairs ``(error_pos, error_neg)`` is solved with
    :func:`conicml.solve_path` from the loosest pair (largest sum of rates) to the
    tightest (``ellipsoid-newton`` starts from the previous multipliers; the default
    ``clarabel``, as in the base estimator, solves each pair cold). A pair no hyperplane
    meets on a fold (the class ellipsoids overlap: Table 2.1's "×") is scored nan for that
    fold with a :class:`~sklearn.exceptions.FitFailedWarning` naming it, as
    ``GridSearchCV`` scores a failed fit. The best pair is refitted on all the data with
    :class:`ChanceConstrainedClassifier`.

    Parameters
    ----------
    rates : array-like of shape (n_pairs, 2), default=None
        The pairs ``(error_pos, error_neg)``, each in (0, 1]; ``None``: every pair of
        ``(0.1, 0.3, 0.5, 0.7, 0.9)`` (the thesis's experiments use 0.1–0.9).
    cv, scoring, refit, n_jobs
        As in :class:`SVMClassifierCV` (``scoring=None``: accuracy).
    kernel, gamma, degree, coef0, bound, ridge, form, solver, solver_options
        As in :class:`ChanceConstrainedClassifier`.

    Attributes
    ----------
    rates_ : tuple of float
        The chosen ``(error_pos, error_neg)``.
    best_params_ : dict
        ``{"error_pos": ..., "error_neg": ...}`` (``best_estimator_``'s parameters).
    best_score_, best_index_, cv_results_, n_splits_, classes_
        As in :class:`SVMClassifierCV` (``param_error_pos``, ``param_error_neg``).
    best_estimator_ : ChanceConstrainedClassifier
        Fitted on all the data with ``rates_`` (``refit=True``).
    coef_, intercept_, dual_coef_
        Those of ``best_estimator_``.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=80, centers=[[-1, -1], [1, 1]], cluster_std=1.0,
    ...                   random_state=0)
    >>> import warnings
    >>> from sklearn.exceptions import FitFailedWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FitFailedWarning)  # names the nan pairs
    ...     clf = ChanceConstrainedClassifierCV(
    ...         [(0.9, 0.9), (0.5, 0.5), (0.05, 0.05)], cv=3).fit(X, y)
    >>> clf.cv_results_["mean_test_score"].round(3)   # (0.05, 0.05): ellipsoids overlap
    array([0.963, 0.963,   nan])
    >>> clf.rates_, clf.best_params_
    ((0.9, 0.9), {'error_pos': 0.9, 'error_neg': 0.9})
    """

    _param = "rates"
    _order = staticmethod(lambda value: -(value[0] + value[1]))  # the loosest pair first
    _parameter_constraints: dict = _search_constraints(
        "rates", ["array-like", None], ChanceConstrainedClassifier,
        ("error_pos", "error_neg", "eta_pos", "eta_neg", "epsilon"))

    def __init__(self, rates: Any = None, *, cv: Any = None, scoring: Any = None,
                 refit: bool = True, n_jobs: int | None = None, kernel: str = "linear",
                 gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0,
                 bound: str = "chebyshev", ridge: float = 0.0, form: str = "primal",
                 solver: str = "clarabel", solver_options: dict | None = None) -> None:
        self.rates = rates
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.bound = bound
        self.ridge = ridge
        self.form = form
        self.solver = solver
        self.solver_options = solver_options

    def _grid(self) -> list[tuple[float, float]]:
        if self.rates is None:
            levels = (0.1, 0.3, 0.5, 0.7, 0.9)
            return [(a, b) for a in levels for b in levels]
        grid = np.asarray(self.rates, dtype=float)
        if grid.ndim != 2 or grid.shape[1] != 2 or grid.shape[0] == 0 or not np.all(
                (grid > 0) & (grid <= 1)):
            raise ValueError("rates must be pairs (error_pos, error_neg) in (0, 1], e.g. "
                             f"[(0.1, 0.2), (0.3, 0.3)]; got {self.rates!r}")
        return [(float(a), float(b)) for a, b in grid]

    def _value_params(self, value: tuple[float, float]) -> dict[str, Any]:
        return {"error_pos": float(value[0]), "error_neg": float(value[1])}

    def _best_attribute(self, value: tuple[float, float]) -> tuple[str, Any]:
        return "rates_", (float(value[0]), float(value[1]))

    def _base_estimator(self, value: tuple[float, float]) -> ChanceConstrainedClassifier:
        return ChanceConstrainedClassifier(
            float(value[0]), float(value[1]), kernel=self.kernel, gamma=self.gamma,
            degree=self.degree, coef0=self.coef0, bound=self.bound, ridge=self.ridge,
            form=self.form, solver=self.solver, solver_options=self.solver_options)

    def _fold_state(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray
                    ) -> Any:
        return X_train, y_train

    def _fold_program(self, data: Any, value: tuple[float, float]) -> Any:
        try:
            return self._base_estimator(value)._program(*data)
        except ProgramError as exc:  # e.g. a gaussian rate above 1/2
            return str(exc)

    def _fold_model(self, data, value, X_train, program, solution
                    ) -> ChanceConstrainedClassifier:
        est = _fitted(self._base_estimator(value), self.classes_, X_train)
        if self.kernel != "linear":
            est.X_fit_ = X_train
        est._store(program, solution)
        return est


# ---- SVOR ------------------------------------------------------------------------------
#: Largest fold Gram matrix (bytes) that ``SVOrdinalRegressorCV`` computes once for its
#: path over C (8 m^2 bytes: m = 8 192 training rows); a larger fold's solves compute
#: their kernel columns as they go.
_SVOR_GRAM_BYTES = 2**29

class SVOrdinalRegressorCV(_GridCV, ClassifierMixin, BaseEstimator):
    r""":class:`~conicml.estimators.SVOrdinalRegressor` with C chosen by CV.

    On each fold the Gram matrix of the training block is computed once (up to 8 192
    training rows; ``gram`` of :func:`~conicml.formulations.svor_dual.svor_dual`) and the
    SVOR dual is solved along the grid of C from the smallest value up
    with :func:`conicml.solve_path` (``smo-or`` starts from the previous
    :math:`(\alpha, \alpha^*)` at its best scaling, see ``svor_pair`` in
    ``docs/paths.md``), each value scored on the
    fold's test block (``scoring=None``: accuracy, the base estimator's ``score``); the
    best C is refitted on all the data with :class:`SVOrdinalRegressor`. The folds are
    stratified by label, as ``GridSearchCV`` makes them for a classifier.

    Parameters
    ----------
    Cs : int or array-like of float, default=10
        The grid of C; an int ``k`` means ``np.logspace(-3, 3, k)``.
    cv, scoring, refit, n_jobs
        As in :class:`SVMClassifierCV`.
    kernel, gamma, degree, coef0, variant, solver, solver_options
        As in :class:`SVOrdinalRegressor`.

    Attributes
    ----------
    C_ : float
        The chosen C.
    best_params_, best_score_, best_index_, cv_results_, n_splits_
        As in :class:`SVMClassifierCV` (``param_C``).
    classes_ : ndarray
        The ordered labels.
    best_estimator_ : SVOrdinalRegressor
        Fitted on all the data with ``C_`` (``refit=True``).
    thresholds_, intercept_, coef_, dual_coef_, support_, support_vectors_
        Those of ``best_estimator_``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(90, 1))
    >>> y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=90), [-1, 1])  # 3 noisy levels
    >>> reg = SVOrdinalRegressorCV(Cs=[0.01, 0.1, 1.0, 10.0], cv=3, kernel="linear")
    >>> reg.fit(X, y).best_params_, round(reg.best_score_, 3)
    ({'C': 1.0}, 0.878)
    >>> reg.predict([[-2], [0], [2]])
    array([0, 1, 2])
    """

    _param = "C"
    _order = "ascending"
    _parameter_constraints: dict = _search_constraints(
        "Cs", _GRID_CONSTRAINT, SVOrdinalRegressor, ("C",))

    def __init__(self, Cs: int | Any = 10, *, cv: Any = None, scoring: Any = None,
                 refit: bool = True, n_jobs: int | None = None, kernel: str = "rbf",
                 gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0,
                 variant: str = "explicit", solver: str = "smo-or",
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
        self.variant = variant
        self.solver = solver
        self.solver_options = solver_options

    def fit(self, X: Any, y: Any) -> SVOrdinalRegressorCV:
        """Choose C by cross-validation (and refit it, ``refit=True``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Ordered labels (at least two distinct values).

        Returns
        -------
        self
        """
        X, ranks = _fit_ranks(self, X, y)
        y = self.classes_[ranks - 1]
        self._search(X, y, y)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The refitted best estimator's labels."""
        check_is_fitted(self, "cv_results_")
        best = self._refitted()
        validate_data(self, X, dtype=np.float64, reset=False)
        return best.predict(X)

    def _grid(self) -> np.ndarray:
        return _positive_grid(self.Cs, "Cs", lambda k: np.logspace(-3, 3, k))

    def _base_estimator(self, value: float) -> SVOrdinalRegressor:
        return SVOrdinalRegressor(float(value), kernel=self.kernel, gamma=self.gamma,
                                  degree=self.degree, coef0=self.coef0, variant=self.variant,
                                  solver=self.solver, solver_options=self.solver_options)

    def _path_solver(self) -> tuple[str | None, dict]:
        return self.solver.lower(), dict(self.solver_options or {})

    def _fold_state(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray
                    ) -> Any:
        classes, ranks = np.unique(y_train, return_inverse=True)
        if classes.size < 2:
            raise ProgramError("SVOrdinalRegressor needs at least two ordered classes; got "
                               f"only one class ({classes[0]!r}) on this fold")
        gram = None
        if self.kernel != "precomputed" and 8 * X_train.shape[0] ** 2 <= _SVOR_GRAM_BYTES:
            # the fold's Gram matrix once for the whole path (smo-or reads its columns)
            kern = make_kernel(self.kernel, X_train, gamma=self.gamma, degree=self.degree,
                               coef0=self.coef0)
            gram = _column_major_gram(kern, X_train)
        build = svor_dual if self.variant == "explicit" else svorim_dual
        # the inputs, ranks and Gram matrix checked once, by this program (with_cost at
        # every C)
        first = build(X_train, ranks + 1, kernel=self.kernel, gamma=self.gamma,
                      degree=self.degree, coef0=self.coef0, gram=gram)
        return classes, first

    def _fold_program(self, data: Any, value: float) -> Any:
        return svor_with_cost(data[1], float(value))

    def _fold_model(self, data, value, X_train, program, solution) -> SVOrdinalRegressor:
        est = _fitted(self._base_estimator(value), data[0], X_train)
        return est._store(X_train, program, solution)


# ---- QPFS's alpha ------------------------------------------------------------------------
class _QPFSAlphaSearch(_GridCV):
    r""":class:`~conicml.estimators.QPFSSelector`'s ``alpha="cv"``.

    The base estimator at :math:`\alpha` is ``Pipeline([("qpfs", QPFSSelector(alpha=a)),
    ("estimator", estimator)])``. On each fold the similarities and the factor of
    :math:`\tilde Q` are computed once (one QPFS program), the grid of :math:`\alpha` is
    solved along a path (:func:`~conicml.formulations.qpfs.with_alpha`; ``simplex-smo``
    starts from the previous point of the simplex), and the estimator is fitted on each
    value's selected features and scored on the fold's test block.
    """

    _param = "alpha"
    _order = "ascending"

    def __init__(self, selector: Any) -> None:
        self.selector = selector
        self.cv = selector.cv
        self.scoring = selector.scoring
        self.n_jobs = selector.n_jobs
        self.refit = False  # QPFSSelector.fit refits the chosen alpha itself
        self.solver = selector.solver
        self.solver_options = selector.solver_options

    def run(self, X: np.ndarray, y: np.ndarray) -> _QPFSAlphaSearch:
        """Score every alpha on every fold; ``alpha_`` is the best."""
        self.classes_ = np.unique(y)
        self._search(X, y, y)
        return self

    def _grid(self) -> np.ndarray:
        alphas = self.selector.alphas
        if alphas is None:
            return np.linspace(0.0, 1.0, 11)
        grid = np.asarray(alphas, dtype=float).reshape(-1)
        if grid.size == 0 or not np.all((grid >= 0) & (grid <= 1)):
            raise ValueError(f"alphas must lie in [0, 1], got {alphas!r}")
        return grid

    def _estimator(self) -> Any:
        from sklearn.base import clone
        from sklearn.svm import SVC

        est = self.selector.estimator
        return SVC(kernel="linear") if est is None else clone(est)

    def _selector(self, value: float) -> Any:
        from sklearn.base import clone

        return clone(self.selector).set_params(alpha=float(value), alphas=None, cv=None,
                                               estimator=None, scoring=None, n_jobs=None)

    def _base_estimator(self, value: float) -> Any:
        from sklearn.pipeline import Pipeline

        return Pipeline([("qpfs", self._selector(value)), ("estimator", self._estimator())])

    def _fold_state(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray
                    ) -> Any:
        selector = self._selector(0.5)
        # the similarities and the factor, once per fold (alpha only weighs them)
        return selector._program(X_train, y_train, 0.5), y_train

    def _fold_program(self, state: Any, value: float) -> Any:
        return qpfs_formulation.with_alpha(state[0], float(value))

    def _fold_model(self, state, value, X_train, program, solution) -> Any:
        from sklearn.pipeline import Pipeline

        selector = self._selector(value)
        selector.n_features_in_ = X_train.shape[1]
        w, ranking = selector._store(program, solution)
        selector._keep(X_train, w, ranking, selector._n_keep(X_train.shape[1]))
        estimator = self._estimator().fit(selector.transform(X_train), state[1])
        return Pipeline([("qpfs", selector), ("estimator", estimator)])
