"""scikit-learn estimator for the SVM family (:mod:`conicml.formulations.svm`)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import ProgramError
from ..formulations import svm as svm_formulation
from ..formulations import svm_l2
from ..kernels import KERNELS
from ..moments.distributed import as_dask_arrays, is_dask_array, is_dask_input
from ..solution import Status
from ._base import (
    L2_PENALTY,
    BinaryConicClassifier,
    kernel_unit_dependence,
    solve_or_raise,
    warn_if_constant_score,
)

__all__ = ["SVMClassifier"]


class SVMClassifier(BinaryConicClassifier):
    r"""Support vector classifier solved as a conic program by any registered solver.

    Soft margin (C-SVC) by default; ``C=None`` fits the hard-margin SVM. The
    decision function is :math:`f(x) = \sum_i \alpha_i y_i k(x_i, x) + b`
    and ``predict`` returns ``classes_[1]`` where :math:`f(x) \ge 0` (as
    :class:`sklearn.svm.SVC`).

    On imbalanced data whose minority class lies inside the majority's spread the
    exact optimum of the unweighted soft margin can be :math:`w = 0` for every
    ``C`` (all predictions the majority class); ``fit`` then warns
    (:class:`~sklearn.exceptions.ConvergenceWarning`, "constant score") and
    ``class_weight="balanced"`` is the remedy.

    Parameters
    ----------
    C : float or None, default=1.0
        Cost of slack; ``None`` means hard margin (errors if the data are not
        separable in feature space).
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
    gamma : float or {"scale", "auto"}, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    class_weight : dict or "balanced", default=None
        Per-class cost multipliers keyed by the original class labels.
    form : {"primal", "dual"}, default="dual"
        Which program to solve (``smo`` needs ``"dual"``).
    solver : str, default="clarabel"
        Any solver registered for the program kind (``"clarabel"``, ``"ecos"``,
        ``"scs"``, ``"osqp"``, ``"smo"``, ...); for ``kernel="linear"`` on many
        samples, ``"dcd"`` (LIBLINEAR's dual coordinate descent, exact bias).
    solver_options : dict, default=None
        Options for the solver (see :func:`conicml.solve`).
    loss : {"hinge", "squared_hinge"}, default="hinge"
        ``"squared_hinge"``: the L2-loss linear SVM
        (:func:`conicml.formulations.svm_l2.squared_hinge`, kinds ``qp.svm.l2.*``;
        ``kernel="linear"`` and a finite ``C``; solvers ``"dcd"`` or a generic one).

    Notes
    -----
    With ``kernel="linear"`` and a finite ``C``, ``X`` may be a :mod:`scipy.sparse`
    matrix: it is kept sparse (CSR) in the validation, the program, the solver
    (``solver="dcd"`` reads its rows in place), the certificate and the decoding, and
    ``predict`` takes sparse input too.

    ``X`` and ``y`` may be ``dask.array`` arrays or a ``dask.dataframe`` (with
    ``kernel="linear"``, ``solver="dcd"`` or ``"pegasos"`` and a finite ``C``): the model
    is then trained from the row blocks on the workers of the active Dask client,
    certified by a block-wise duality gap, and the fitted attributes are NumPy arrays.
    ``"dcd"`` (:mod:`conicml.estimators._dask_linear`): CoCoA+ rounds of dual coordinate
    ascent; ``solver_options`` ``tol``, ``max_iter`` (rounds), ``time_limit``,
    ``callback``, ``rho``, ``local_epochs``, ``local_tol``, ``sigma``, ``random_state``,
    ``verbose``, ``engine``, and ``stream`` (``"auto"``: data that are not persisted are
    generated or read one chunk at a time every round, the worker memory flat in the
    number of rows; ``True`` / ``False``), ``blocks`` (the streamed groups, default one
    per worker thread) and ``working_rows`` (a streamed group's rows kept for the local
    passes, solved whenever they fill it; default 16 MiB of them); see
    ``docs/distributed.md``. ``"pegasos"``
    (:mod:`conicml.estimators._dask_pegasos`): Pegasos mini-batch steps on every block,
    averaged each round; ``solver_options`` ``tol``, ``max_iter`` (rounds),
    ``time_limit``, ``callback``, ``batch_size``, ``local_steps``, ``random_state``,
    ``verbose``.
    ``decision_function`` and ``predict`` on a Dask array return a Dask array (block by
    block).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
        Only for ``kernel="linear"``.
    intercept_ : ndarray of shape (1,)
    dual_coef_ : ndarray of shape (1, n_SV)
        :math:`\alpha_i y_i` of the support vectors.
    support_ : ndarray of shape (n_SV,)
    support_vectors_ : ndarray of shape (n_SV, n_features)
    model_ : dict
        The decoded model (``program_.decode(solution_)``).
    program_ : Program
    solution_ : Solution
    n_iter_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> clf = SVMClassifier(C=1.0).fit(X, y)
    >>> clf.predict([[-2, -2], [2, 2]])
    array([0, 1])
    >>> clf.coef_.shape, clf.score(X, y)
    ((1, 2), 1.0)

    The same model from the specialized SMO solver, with a Gaussian kernel:

    >>> clf = SVMClassifier(kernel="rbf", solver="smo").fit(X, y)
    >>> clf.score(X, y)
    1.0
    """

    #: a scipy.sparse X stays sparse (CSR) with kernel="linear" (the formulation refuses it
    #: for a kernel, whose Gram matrix is dense)
    _accept_sparse = "csr"

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "form": [StrOptions({"primal", "dual"})],
        "solver": [str],
        "solver_options": [dict, None],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
    }

    def __init__(
        self,
        C: float | None = 1.0,
        *,
        kernel: str = "linear",
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        class_weight: dict | str | None = None,
        form: str = "dual",
        solver: str = "clarabel",
        solver_options: dict | None = None,
        loss: str = "hinge",
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.class_weight = class_weight
        self.form = form
        self.solver = solver
        self.solver_options = solver_options
        self.loss = loss

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel == "linear" and self.C is not None
        return tags

    def _unit_dependence(self) -> str | None:
        return kernel_unit_dependence(self.kernel, L2_PENALTY)

    def fit(self, X: Any, y: Any) -> SVMClassifier:
        """Fit the classifier (on NumPy input, or on Dask arrays on the workers).

        Parameters
        ----------
        X : array-like, dask.array or dask.dataframe of shape (n_samples, n_features)
            A dask DataFrame is converted on the workers; its string column names become
            ``feature_names_in_``.
        y : array-like, dask.array or dask Series of shape (n_samples,)
            Two classes; the larger label ``classes_[1]`` is the positive class.

        Returns
        -------
        self
        """
        if not is_dask_input(X):
            return super().fit(X, y)
        self._validate_params()
        X, y = as_dask_arrays(X, y, self)
        self._fit_dask(X, y)
        return self

    def _fit_dask(self, X: Any, y: Any) -> None:
        from ._dask_linear import labels_of
        from ._dask_pegasos import fit_pegasos_dask
        from ._dask_stream import fit_linear_svm_dask

        if self.loss != "hinge":
            raise ProgramError("SVMClassifier on Dask arrays trains the hinge-loss SVM; "
                               f"got loss={self.loss!r} (pass NumPy or scipy.sparse arrays)")
        if self.kernel != "linear" or self.solver not in ("dcd", "pegasos") or self.C is None:
            raise ProgramError(
                f"SVMClassifier on Dask arrays trains the linear soft-margin SVM with "
                f"solver='dcd' or 'pegasos'; got kernel={self.kernel!r}, "
                f"solver={self.solver!r}, C={self.C!r} (use kernel='linear', solver='dcd' "
                "or 'pegasos' and a finite C, or pass NumPy arrays)")
        classes = labels_of(y)
        if classes.size != 2:
            raise ProgramError(
                f"SVMClassifier needs samples of exactly two classes; the Dask array y has "
                f"{classes.size} distinct label(s) {classes[:10].tolist()}")
        if isinstance(self.class_weight, dict):
            unknown = set(self.class_weight) - set(classes.tolist())
            if unknown:
                raise ValueError(f"class_weight has labels not in the data: {sorted(unknown)}")
        self.classes_ = classes
        self.n_features_in_ = int(X.shape[1])
        fit = fit_linear_svm_dask if self.solver == "dcd" else fit_pegasos_dask
        solution = fit(X, y, classes[1], float(self.C), self.class_weight, classes,
                       self.solver_options)
        if solution.status is not Status.OPTIMAL:
            warnings.warn(
                f"solver {self.solver!r} on Dask stopped before convergence "
                f"({solution.message}); the model keeps its best primal point: raise "
                "max_iter / time_limit in "
                "solver_options", ConvergenceWarning, stacklevel=3)
        w, b = solution.values["w"], float(solution.values["b"])
        if not np.any(w):
            warnings.warn(
                "SVMClassifier learnt a constant score (w = 0 on the Dask data; every "
                "prediction is one class): if the minority class lies inside the majority's "
                "spread, pass class_weight='balanced'", ConvergenceWarning, stacklevel=3)
        # a model from an earlier in-memory fit must not answer for this one
        for name in ("program_", "support_", "support_vectors_", "dual_coef_",
                     "n_support_"):
            self.__dict__.pop(name, None)
        self.solution_ = solution
        self.model_ = {"w": w, "b": b}
        self.n_iter_ = solution.iterations
        self.coef_ = w[None, :]
        self.intercept_ = np.array([b])

    def decision_function(self, X: Any) -> Any:
        """Signed decision values :math:`f(x)`; positive means ``classes_[1]``.

        On a Dask array, a Dask array computed block by block on the workers.
        """
        if not is_dask_array(X):
            return super().decision_function(X)
        check_is_fitted(self)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has shape {X.shape}, but SVMClassifier is expecting "
                             f"{self.n_features_in_} features as input")
        X = X.rechunk({1: -1})
        return X.map_blocks(self._decision_block, drop_axis=1, dtype=np.float64)

    def predict(self, X: Any) -> Any:
        """Class labels: ``classes_[1]`` where the decision value is >= 0."""
        decision = self.decision_function(X)
        if not is_dask_array(decision):
            return self.classes_[(decision >= 0).astype(int)]
        classes = self.classes_
        return decision.map_blocks(lambda f: classes[(f >= 0).astype(int)],
                                   dtype=classes.dtype)

    def _decision_block(self, Xb: np.ndarray) -> np.ndarray:
        return self._decision(np.asarray(Xb, dtype=np.float64))

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        class_weight = self.class_weight
        if isinstance(class_weight, dict):
            unknown = set(class_weight) - set(self.classes_.tolist())
            if unknown:
                raise ValueError(f"class_weight has labels not in the data: {sorted(unknown)}")
            class_weight = {
                (1.0 if label == self.classes_[1] else -1.0): w
                for label, w in class_weight.items()
            }
        common = dict(kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                      coef0=self.coef0, form=self.form)
        if self.loss == "squared_hinge":
            if self.kernel != "linear" or self.C is None:
                raise ProgramError(
                    f"loss='squared_hinge' is the L2-loss linear SVM: it needs "
                    f"kernel='linear' and a finite C, got kernel={self.kernel!r}, "
                    f"C={self.C!r}")
            program = svm_l2.squared_hinge(X, y, C=self.C, class_weight=class_weight,
                                           form=self.form)
        elif self.C is None:
            if class_weight is not None:
                raise ValueError("class_weight has no effect with C=None (hard margin)")
            program = svm_formulation.hard_margin(X, y, **common)
        else:
            program = svm_formulation.soft_margin(X, y, C=self.C, class_weight=class_weight,
                                                  **common)
        separable_hint = (
            "the data are not linearly separable: use soft margin (set C to a positive "
            "number)" if self.kernel == "linear" else "the data are not separable in the "
            "kernel's feature space: use soft margin (set C to a positive number)"
        )
        hints = {Status.INFEASIBLE: separable_hint, Status.UNBOUNDED: separable_hint,
                 Status.INFEASIBLE_INACCURATE: separable_hint,
                 Status.UNBOUNDED_INACCURATE: separable_hint}
        solution = solve_or_raise(program, self.solver, self.solver_options, hints)
        model = program.decode(solution)
        support = model["support"]
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = solution.iterations
        self.support_ = support
        self.support_vectors_ = X[support]
        self.dual_coef_ = model["dual_coef"][support][None, :]
        self.intercept_ = np.array([model["b"]])
        self.n_support_ = np.array([np.count_nonzero(y[support] < 0),
                                    np.count_nonzero(y[support] > 0)])
        if "w" in model:
            self.coef_ = model["w"][None, :]
        # w = 0, b = -1 (say) is optimal when the KKT system w = sum_i alpha_i y_i phi(x_i)
        # = 0 has a solution with alpha = C on every minority point and alpha in [0, C] on
        # the majority: the minority sum lies in the majority's reduced hull. Dividing by
        # C shows that the condition does not depend on C; class weights change it.
        warn_if_constant_score(
            "SVMClassifier", self._decision(X), float(model["b"]),
            "the minority class lies inside the majority's spread, where w = 0 is the "
            "exact optimum of the unweighted soft margin (not a solver failure) for every "
            "C; pass class_weight='balanced' (or weights favouring the minority class)",
            stacklevel=4)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "program_"):  # fitted on Dask arrays: the hyperplane only
            return X @ self.coef_[0] + self.intercept_[0]
        return svm_formulation.decision_values(self.program_.data, self.model_, X)
