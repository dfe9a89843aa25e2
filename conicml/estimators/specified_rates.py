"""scikit-learn estimator of the classifier with specified error rates.

Built on :mod:`conicml.formulations.specified_rates` (seed 003 ch. 2).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.deprecation import DEPRECATED, renamed_param
from ..exceptions import NotFittedStatusError, ProgramError, SolverError
from ..formulations import specified_rates
from ..kernels import KERNELS
from ..moments import ClassMoments
from ..solution import Status
from ._base import L2_PENALTY, BinaryConicClassifier, kernel_unit_dependence, solve_or_raise

__all__ = ["ChanceConstrainedClassifier"]


class ChanceConstrainedClassifier(BinaryConicClassifier):
    r"""Maximum-margin classifier with specified false-negative / false-positive rates.

    Saketha Nath's chance-constrained classifier (thesis ch. 2, eqs.
    2.1–2.5): the hyperplane of largest margin such that, for every
    distribution with the classes' estimated means and covariances, a point
    of the positive class (``classes_[1]``) is misclassified with
    probability at most ``error_pos`` and a point of the negative class with
    probability at most ``error_neg``. The program is the SOCP of
    :func:`conicml.formulations.specified_rates.specified_rates`; its dual is the
    distance between two ellipsoids, which the specialized ``lin-han``
    solver computes directly. The decision function is
    :math:`f(x) = w^\top x + b` (linear) or :math:`\sum_j s_j k(x_j, x) + b`
    (kernel), and ``predict`` returns ``classes_[1]`` where :math:`f(x) \ge 0`.

    Parameters
    ----------
    error_pos : float, default=1.0
        Largest error rate on the positive class ``classes_[1]`` (false
        negatives), in :math:`(0, 1]`; :math:`\kappa_+ = \sqrt{(1-\eta)/\eta}`.
        The default 1.0 imposes no rate (:math:`\kappa = 0`): the program
        then only separates the two class means with the largest margin, and
        is feasible whenever the means differ. Set the rates you need (the
        thesis's experiments use 0.1–0.9).
    error_neg : float, default=1.0
        Largest error rate on the negative class ``classes_[0]`` (false
        positives), in :math:`(0, 1]`.
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
    gamma : float or {"scale", "auto"}, default="scale"
        Kernel width; the thesis's :math:`\zeta` for ``"rbf"``.
    degree : int, default=3
    coef0 : float, default=0.0
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        Distribution-free rates, or rates for Gaussian classes
        (:math:`\kappa = \Phi^{-1}(1 - \eta)`, needs :math:`\eta \le 1/2`).
    ridge : float, default=0.0
        The covariance ridge (glossary) added to the covariances
        (:math:`\Sigma + \epsilon I`). The generic solvers fit ``ridge=0`` in every
        case. The ``lin-han`` solver inverts both covariances, so it needs
        ``ridge > 0`` with kernels (e.g. ``1e-3``: :math:`H_\pm` is always singular)
        *and* with a linear kernel whenever a class covariance is singular: a class
        with at most ``n_features`` samples, a feature constant within a class, or
        collinear (e.g. duplicated) features. Then ``fit`` raises
        :class:`~conicml.NotFittedStatusError` naming the class and a ridge in the
        units of the data (lin-han's iterations grow like ``1/ridge``).
    form : {"primal", "dual"}, default="primal"
        Solve the SOCP (2.5) or the ellipsoid-distance dual (2.13).
    solver : str, default="clarabel"
        Any solver registered for the program kind (``"clarabel"``,
        ``"ecos"``, ``"scs"``, ``"lin-han"``).
    solver_options : dict, default=None
        Options for the solver (see :func:`conicml.solve`).
    eta_pos, eta_neg, epsilon
        Deprecated spellings of ``error_pos``, ``error_neg`` and ``ridge``
        (``FutureWarning``; removed in the next release).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
        :math:`w`; only for ``kernel="linear"``.
    intercept_ : ndarray of shape (1,)
        :math:`b` (the thesis's threshold is :math:`-b`).
    dual_coef_ : ndarray of shape (1, n_samples)
        :math:`s` of :math:`f(x) = \sum_j s_j k(x_j, x) + b`; kernels only.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training inputs (kernels only).
    kappa_pos_, kappa_neg_ : float
        The cone multipliers the rates map to.
    margin_ : float
        :math:`2/\|w\|`, the distance between the two class ellipsoids.
    model_ : dict
        The decoded model (``program_.decode(solution_)``).
    program_ : Program
    solution_ : Solution
    n_iter_ : int

    Notes
    -----
    If no hyperplane meets both rates (the ellipsoids overlap; Table 2.1's
    "×"), ``fit`` raises :class:`~conicml.NotFittedStatusError` naming the
    rates: raise ``error_pos`` / ``error_neg`` or use a kernel. Sample weights
    are not supported (the moments are unweighted).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> clf = ChanceConstrainedClassifier(error_pos=0.2, error_neg=0.2).fit(X, y)
    >>> clf.score(X, y)
    1.0

    The Chebyshev bound turns an error rate :math:`\eta` into
    :math:`\kappa = \sqrt{(1-\eta)/\eta}` (here :math:`\sqrt{4} = 2`):

    >>> print(round(clf.kappa_pos_, 6), round(clf.kappa_neg_, 6))
    2.0 2.0
    """

    _parameter_constraints: dict = {
        "error_pos": [Interval(Real, 0, 1, closed="right")],
        "error_neg": [Interval(Real, 0, 1, closed="right")],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "bound": [StrOptions({"chebyshev", "gaussian"})],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "eta_pos": [Interval(Real, 0, 1, closed="right"), Hidden(StrOptions({DEPRECATED}))],
        "eta_neg": [Interval(Real, 0, 1, closed="right"), Hidden(StrOptions({DEPRECATED}))],
        "epsilon": [Interval(Real, 0, None, closed="left"), Hidden(StrOptions({DEPRECATED}))],
        "form": [StrOptions({"primal", "dual"})],
        "solver": [str],
        "solver_options": [dict, None],
    }

    def __init__(
        self,
        error_pos: float = 1.0,
        error_neg: float = 1.0,
        *,
        kernel: str = "linear",
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        bound: str = "chebyshev",
        ridge: float = 0.0,
        form: str = "primal",
        solver: str = "clarabel",
        solver_options: dict | None = None,
        eta_pos: float | str = DEPRECATED,
        eta_neg: float | str = DEPRECATED,
        epsilon: float | str = DEPRECATED,
    ) -> None:
        self.error_pos = error_pos
        self.error_neg = error_neg
        self.eta_pos = eta_pos
        self.eta_neg = eta_neg
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.bound = bound
        self.ridge = ridge
        self.epsilon = epsilon
        self.form = form
        self.solver = solver
        self.solver_options = solver_options

    def _rates(self) -> tuple[float, float]:
        return (renamed_param(self, "eta_pos", "error_pos"),
                renamed_param(self, "eta_neg", "error_neg"))

    def _program(self, X, y=None):
        error_pos, error_neg = self._rates()
        program = specified_rates.specified_rates(
            X, y, error_pos, error_neg, kernel=self.kernel, bound=self.bound,
            gamma=self.gamma, degree=self.degree, coef0=self.coef0,
            ridge=renamed_param(self, "epsilon", "ridge"), form=self.form,
        )
        return program

    def _solve(self, program) -> None:
        error_pos, error_neg = program.data["eta_pos"], program.data["eta_neg"]
        hint = (
            f"no hyperplane meets error_pos={error_pos:g} and error_neg={error_neg:g}: the "
            "class ellipsoids overlap; raise error_pos or error_neg (larger allowed error "
            "rates)"
            + (" or use a non-linear kernel" if self.kernel == "linear" else "")
        )
        hints = {Status.INFEASIBLE: hint, Status.INFEASIBLE_INACCURATE: hint,
                 Status.UNBOUNDED: hint, Status.UNBOUNDED_INACCURATE: hint}
        try:
            solution = solve_or_raise(program, self.solver, self.solver_options, hints)
        except SolverError as exc:
            if self.solver.lower() != "lin-han":
                raise
            # lin-han inverts Sigma_pm: a singular class covariance (a flat ellipsoid)
            # has no inner ball to step into
            covs = [program.data.get(key) for key in ("cov_pos", "cov_neg")]
            variance = (float(np.mean([np.trace(c) / c.shape[0] for c in covs]))
                        if self.kernel == "linear" and covs[0] is not None else 0.0)
            # its step is lambda_min(Sigma)/2, so its iterations grow like 1/ridge
            unit = (f" (e.g. ridge={1e-2 * variance:.3g}, 1e-2 times the mean "
                    "within-class feature variance: lin-han's iterations grow like "
                    "1/ridge)" if variance > 0 else " (e.g. ridge=1e-3)")
            raise NotFittedStatusError(
                f"fit failed: {exc}. A class covariance is singular when the class has "
                "at most n_features samples, a feature constant within it, or collinear "
                f"features; pass ridge > 0{unit}, or a generic solver such as "
                "solver='clarabel', which fits ridge=0") from exc
        self._store(program, solution)

    def _store(self, program, solution) -> None:
        """Keep a solved program as the fitted model (shared with
        :class:`ChanceConstrainedClassifierCV`)."""
        try:
            model = program.decode(solution)
        except SolverError as exc:  # the dual form reports overlap as distance 0
            raise NotFittedStatusError(f"fit failed: {exc}") from exc
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = solution.iterations
        self.kappa_pos_ = model["kappa_pos"]
        self.kappa_neg_ = model["kappa_neg"]
        self.margin_ = model["margin"]
        self.intercept_ = np.array([model["b"]])
        if "w" in model:
            self.coef_ = np.asarray(model["w"])[None, :]
        else:
            self.dual_coef_ = np.asarray(model["dual_coef"])[None, :]

    def _unit_dependence(self) -> str | None:
        return kernel_unit_dependence(self.kernel, L2_PENALTY)

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        program = self._program(X, y)
        if self.kernel != "linear":
            self.X_fit_ = X
        self._solve(program)

    def fit_moments(self, moments: ClassMoments) -> ChanceConstrainedClassifier:
        """Fit from class moments instead of data (linear kernel only).

        Parameters
        ----------
        moments : ClassMoments
            Means and covariances of the positive (label ``1``) and negative
            (label ``-1``) class; ``classes_`` becomes ``[-1, 1]``.

        Returns
        -------
        self
        """
        self._validate_params()
        if not isinstance(moments, ClassMoments):
            raise ProgramError(f"expected a ClassMoments, got {type(moments).__name__}")
        if self.kernel != "linear":
            raise ProgramError(f"kernel={self.kernel!r} needs data: use fit(X, y)")
        self.classes_ = np.array([-1, 1])
        self.n_features_in_ = moments.dim
        self.__dict__.pop("feature_names_in_", None)  # moments carry no column names
        self._solve(self._program(moments))
        return self

    def _decision(self, X: np.ndarray) -> np.ndarray:
        check_is_fitted(self, "intercept_")
        if self.kernel == "linear":
            return X @ self.coef_[0] + self.intercept_[0]
        return specified_rates.rates_decision_values(self.program_.data, self.model_, X)
