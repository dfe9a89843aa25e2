"""Shared machinery of the binary conic classifiers (label mapping, solving, status)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._utils.scaling import warn_if_badly_scaled
from ..exceptions import NotFittedStatusError, ProgramError
from ..program import Program
from ..solution import Solution, Status
from ..solving import solve

__all__ = ["BinaryConicClassifier", "L2_PENALTY", "kernel_unit_dependence",
           "ridge_keywords", "solve_or_raise", "warn_if_constant_score", "warn_unit_dependent"]

#: Why a linear model with a penalty on :math:`\|w\|` depends on the units of X.
L2_PENALTY = "its penalty on ||w|| weighs each coefficient in the units of its feature"


def kernel_unit_dependence(kernel: str, linear: str | None = None) -> str | None:
    """Why a model with this kernel depends on the units of the features (``None``: it
    does not, or ``X`` is a precomputed Gram matrix); ``linear``: the reason of the
    linear model, if it has one."""
    if kernel == "precomputed":
        return None
    if kernel == "linear":
        return linear
    return f"the {kernel} kernel compares points in the units of X"


def warn_unit_dependent(estimator: Any, X: np.ndarray, why: str | None) -> None:
    """The badly-scaled-input warning of :func:`conicml._utils.scaling.warn_if_badly_scaled` for
    an estimator whose fit depends on the units of ``X`` (``why``; ``None``: no warning)."""
    if why is not None:
        warn_if_badly_scaled(X, type(estimator).__name__, why, stacklevel=4)


#: The relative covariance ridge :math:`r` of the linear moment-based estimators when
#: ``ridge=None`` (:func:`ridge_keywords`).
DEFAULT_RELATIVE_RIDGE = 1e-6

#: The :math:`\rho K` regulariser of the kernel moment-based estimators when ``ridge=None``.
DEFAULT_KERNEL_RIDGE = 1e-3


def ridge_keywords(ridge: float | None, kernel: str) -> dict[str, float]:
    r"""The covariance-ridge keywords of the moment-based formulations (MPM family, M4).

    ``None`` (the estimators' default) means, for a linear kernel, the relative ridge
    :math:`\Sigma_c + r\,\mathrm{diag}(v)`, :math:`r` = :data:`DEFAULT_RELATIVE_RIDGE`,
    :math:`v_j` the variance of feature :math:`j` (the thesis's "add a small positive
    amount to the diagonal", in each feature's own units, so that the model stays
    invariant to feature scaling), and for a kernel the mandatory :math:`\rho K` of
    Theorem 9 / Corollary 16 with :math:`\rho` = :data:`DEFAULT_KERNEL_RIDGE` (on a Gram
    matrix of unit scale). A number is the absolute :math:`\rho I` (linear) or
    :math:`\rho K` (kernel), as given.
    """
    if ridge is not None:
        return {"ridge": float(ridge)}
    if kernel != "linear":
        return {"ridge": DEFAULT_KERNEL_RIDGE}
    return {"ridge": 0.0, "relative_ridge": DEFAULT_RELATIVE_RIDGE}


#: Scores whose spread is at most this fraction of max(1, |reference|) count as constant.
CONSTANT_SCORE_RTOL = 1e-6


def warn_if_constant_score(
    estimator: str,
    scores: np.ndarray,
    reference: float,
    cause_and_remedy: str,
    stacklevel: int = 3,
) -> bool:
    r"""Warn when a fitted model's scores are one constant; return whether they are.

    ``scores`` are the decision values the model gives on points it was fitted on;
    they count as constant when :math:`\max - \min \le 10^{-6}\max(1,
    |\text{reference}|)` (``reference``: the intercept, the natural unit of a
    decision value). The :class:`ConvergenceWarning` names the estimator, says that
    its ranking is then a tie everywhere (an AUC of 0.5, or solver noise), and ends
    with ``cause_and_remedy``.
    """
    scores = np.asarray(scores, dtype=float)
    spread = float(np.ptp(scores)) if scores.size else 0.0
    if spread > CONSTANT_SCORE_RTOL * max(1.0, abs(float(reference))):
        return False
    warnings.warn(
        f"{estimator} learnt a constant score (its decision values on the points it was "
        f"fitted on span {spread:.1e}; every prediction is one class and any ranking of "
        f"them is noise): {cause_and_remedy}",
        ConvergenceWarning, stacklevel=stacklevel)
    return True


def solve_or_raise(
    program: Program,
    solver: str,
    solver_options: Mapping[str, Any] | None,
    hints: Mapping[Status, str] | None = None,
) -> Solution:
    """Solve ``program``; turn a status without a model into a clear exception.

    The policy of every estimator, as scikit-learn's: ``OPTIMAL_INACCURATE``, and
    ``USER_LIMIT`` when the solver returned a point (an iterative solver that hit
    ``max_iter`` or ``time_limit``), keep that point with a
    :class:`ConvergenceWarning`; every other non-optimal status raises
    :class:`NotFittedStatusError` whose message quotes the solver, the status
    and ``hints[status]`` (which should name the hyper-parameter to change).
    """
    solution = solve(program, solver, **dict(solver_options or {}))
    if solution.status is Status.OPTIMAL:
        return solution
    if solution.status is Status.OPTIMAL_INACCURATE:
        warnings.warn(
            f"solver {solution.solver!r} returned an inaccurate solution "
            f"({solution.message}); tighten its tolerances in solver_options or try "
            "another solver",
            ConvergenceWarning,
            stacklevel=3,
        )
        return solution
    if solution.status is Status.USER_LIMIT and solution.values:
        warnings.warn(
            f"solver {solution.solver!r} stopped before convergence ({solution.message}); "
            "the model keeps its last point: raise max_iter / time_limit in "
            "solver_options",
            ConvergenceWarning,
            stacklevel=3,
        )
        return solution
    hint = (hints or {}).get(solution.status, "")
    default = {
        Status.USER_LIMIT: "the solver hit its iteration or time limit: raise max_iter / "
        "time_limit in solver_options",
        Status.SOLVER_ERROR: "the solver failed numerically: try another solver= or rescale X",
    }
    hint = hint or default.get(solution.status, "")
    raise NotFittedStatusError(
        f"fit failed: solver {solution.solver!r} ended with status "
        f"{solution.status.value!r} ({solution.message}). {hint}"
    )


class BinaryConicClassifier(ClassifierMixin, BaseEstimator):
    """Base of binary classifiers whose decision is ``sign(f(x))``.

    Subclasses implement ``_fit_signed(X, y_pm)`` (labels exactly +1/-1, with
    ``classes_[1]`` as +1) and ``_decision(X)``. The base validates data,
    encodes labels and maps decisions back: ``predict`` returns
    ``classes_[1]`` where ``decision_function(X) >= 0``.
    """

    #: ``accept_sparse`` of scikit-learn's ``validate_data`` (``False``: dense input only).
    _accept_sparse: bool | str = False

    def _validate_binary(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        X, y = validate_data(self, X, y, dtype=np.float64, accept_sparse=self._accept_sparse)
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ProgramError(
                f"{type(self).__name__} needs samples of two classes; got only one class "
                f"({classes[0]!r})"
            )
        if classes.size > 2:
            raise ProgramError(
                f"Only binary classification is supported by {type(self).__name__}; got "
                f"{classes.size} classes (wrap it in sklearn.multiclass.OneVsRestClassifier)"
            )
        self.classes_ = classes
        return X, np.where(y == classes[1], 1.0, -1.0)

    def fit(self, X: Any, y: Any) -> BinaryConicClassifier:
        """Fit the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes; the larger label ``classes_[1]`` is the positive class.

        Returns
        -------
        self
        """
        self._validate_params()
        X, y_pm = self._validate_binary(X, y)
        warn_unit_dependent(self, X, self._unit_dependence())
        self._fit_signed(X, y_pm)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed decision values :math:`f(x)`; positive means ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False,
                          accept_sparse=self._accept_sparse)
        return self._decision(X)

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: ``classes_[1]`` where the decision value is >= 0."""
        decision = self.decision_function(X)
        return self.classes_[(decision >= 0).astype(int)]

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # -- the hyperplane or its kernel expansion -----------------------------------------
    def _set_expansion(self, model: Mapping[str, Any], X: np.ndarray) -> None:
        """Store a decoded model: ``coef_`` (linear) or ``dual_coef_`` over ``X_fit_``."""
        self.intercept_ = np.array([float(model["b"])])
        if "w" in model:
            self.coef_ = np.asarray(model["w"], dtype=float)[None, :]
        else:
            self.dual_coef_ = np.asarray(model["dual_coef"], dtype=float)[None, :]
            self.X_fit_ = X

    def _decision(self, X: np.ndarray) -> np.ndarray:
        r"""Default decision function for models stored by :meth:`_set_expansion`:
        :math:`Xw + b`, or :math:`\sum_i c_i k(x, x_i) + b` over ``X_fit_`` (for a
        precomputed kernel ``X`` already holds :math:`k(x, x_i)`)."""
        if hasattr(self, "coef_"):
            return X @ self.coef_[0] + self.intercept_[0]
        if self.kernel == "precomputed":
            return X @ self.dual_coef_[0] + self.intercept_[0]
        kernel = self.program_.data["kernel"]
        return kernel(X, self.X_fit_) @ self.dual_coef_[0] + self.intercept_[0]

    def _unit_dependence(self) -> str | None:
        """Why the fitted model depends on the units of the features, or ``None`` when it
        is invariant to feature scaling; ``fit`` then warns about badly scaled input
        (:func:`conicml._utils.scaling.warn_if_badly_scaled`). Default: a non-linear kernel."""
        return kernel_unit_dependence(getattr(self, "kernel", "linear"))

    # -- to implement ------------------------------------------------------------------
    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError
