r"""``FeatureScalingSVC``: embedded feature selection for the Gaussian-kernel SVM.

Tayal 2014, chapter 7 (the program: :mod:`conicml.formulations.feature_scaling`; the
methods: the ``fs-*`` solvers of :mod:`conicml.solvers.feature_scaling`).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.deprecation import DEPRECATED, renamed_param
from ..formulations.feature_scaling import feature_scaled_svm, fs_kernel
from ..solution import Status
from ..solvers.feature_scaling import METHODS
from ..solving import solve
from ._base import BinaryConicClassifier

__all__ = ["FeatureScalingSVC"]


class FeatureScalingSVC(SelectorMixin, BinaryConicClassifier):
    r"""SVM with a learned feature-scaling vector in the Gaussian kernel (Tayal 2014, ch. 7).

    Minimises, over :math:`\beta \in \mathbb R^n`, :math:`b` and :math:`z \ge 0`,

    .. math::

        \Omega(\beta, b, z) = \tfrac12\beta^\top K_z\beta + C\sum_i \ell(y_if_i)
        + \mu\,\mathbf 1^\top z,\qquad
        (K_z)_{ij} = \exp\Big(-\sum_l z_l^2(x_{il} - x_{jl})^2\Big)

    (eqs. 7.7, 7.17; :math:`\ell` the smoothed hinge, :math:`\epsilon = 1/2`), with
    :math:`f(x) = \sum_j \beta_j k(Zx, Zx_j) + b`. The problem is non-convex; the
    methods differ in the stationary point they reach (Table 7.1). Features whose
    :math:`z_l` falls below 1 % of :math:`\max_k z_k` are dropped: the estimator is
    also a feature selector (``transform``, ``get_support``) for a
    :class:`~sklearn.pipeline.Pipeline`. Standardise ``X`` first (the thesis does;
    put a :class:`~sklearn.preprocessing.StandardScaler` before it).

    Parameters
    ----------
    method : {"ao2", "ao1", "simple-ao", "full", "gmkl"}, deprecated
        The spelling of ``solver`` before this release (``method="ao2"`` is
        ``solver="fs-ao2"``); still accepted, also as the first positional
        argument, with a ``FutureWarning``.
    solver : {"fs-ao2", "fs-ao1", "fs-simple-ao", "fs-full", "fs-gmkl"}, default="fs-ao2"
        Margin AO-II (Algorithm 3, the thesis's best), Margin AO-I (Algorithm 2),
        Simple AO (Algorithm 1), FULL-FS (Coleman–Li trust region on all
        variables) or GMKL (projected gradient, Varma & Babu).
    C : float, default=1.0
        Loss weight (> 0).
    mu : float, default=1.0
        :math:`\ell_1` weight on :math:`z` (>= 0); larger selects fewer features.
    kernel : {"rbf"}, default="rbf"
        The method is defined for the feature-scaled Gaussian kernel (7.17) only.
    inner : str, default="smo"
        Solver of the convex SVM block (any solver of kind ``qp.svm.dual``;
        ``svm_solver`` before this release, still accepted with a ``FutureWarning``).
    tol : float, default=1e-4
        Outer stopping tolerance (see :mod:`conicml.solvers.feature_scaling`).
    max_iter : int, optional
        Outer iterations (``full``: trust-region iterations); ``None``: the
        method's default (500 for Simple AO and AO-I, which converge linearly and
        slowly once the support settles; 100 for AO-II and GMKL; 300 for FULL-FS).
        AO-II stops when the support and :math:`z` (to ``tol``) no longer change.
    time_limit : float, optional
        Seconds.

    Attributes
    ----------
    z_ : ndarray of shape (n_features,)
        The learned feature scaling.
    support_ : ndarray of bool, shape (n_features,)
        Selected features, :math:`z_l > 0.01\max_k z_k`.
    ranking_ : ndarray of int, shape (n_features,)
        1 for the largest :math:`z_l`, 2 for the next, ...
    dual_coef_ : ndarray of shape (1, n_samples)
        :math:`\beta` of the expansion over ``X_fit_``.
    intercept_ : ndarray of shape (1,)
    X_fit_ : ndarray of shape (n_samples, n_features)
    n_iter_ : int
        Outer iterations.
    label_ : {"minimum", "saddle", "not stationary"}
        ``"not stationary"`` when the projected gradient of :math:`\Omega`
        (``stationarity`` of ``program_.decode(result_)``) exceeds
        :math:`100\,\texttt{tol}\max(1, C, \mu)`
        (AO-II's fixed points usually are not stationary for :math:`\Omega`, see
        :mod:`conicml.solvers.feature_scaling`); otherwise ``"minimum"`` or ``"saddle"`` by the
        sign of the smallest eigenvalue ``vmin_`` of the projected Hessian (Table 7.1).
    vmin_ : float
        NaN (not computed: :math:`O((n + d)^3)`) at a ``"not stationary"`` point when
        :math:`n + 1 + d` exceeds 3 000.
    objective_ : float
        :math:`\Omega` at the end.
    converged_ : bool
    solution_ : conicml.Solution
        The solve of the ``nonconvex.fs.svm`` program by ``solver`` (status,
        certificate, ``extras["history"]``); ``result_`` is the same object.
    program_ : conicml.Program
        The program (:func:`conicml.formulations.feature_scaling.feature_scaled_svm`).
    model_ : dict
        ``program_.decode(solution_)``.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> import numpy as np
    >>> noise = np.random.default_rng(0).normal(size=(40, 2))
    >>> X4 = np.hstack([X, noise])  # two informative features, two of noise
    >>> clf = FeatureScalingSVC(mu=0.5).fit(X4, y)
    >>> clf.get_support()
    array([ True,  True, False, False])
    >>> clf.transform(X4).shape, clf.score(X4, y)
    ((40, 2), 1.0)
    """

    _parameter_constraints: dict = {
        "method": [StrOptions(set(METHODS)), Hidden(StrOptions({DEPRECATED}))],
        "solver": [StrOptions({f"fs-{m}" for m in METHODS})],
        "C": [Interval(Real, 0, None, closed="neither")],
        "mu": [Interval(Real, 0, None, closed="left")],
        "kernel": [StrOptions({"rbf"})],
        "inner": [str],
        "svm_solver": [str],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        method: str = DEPRECATED,
        *,
        solver: str = "fs-ao2",
        C: float = 1.0,
        mu: float = 1.0,
        kernel: str = "rbf",
        inner: str = "smo",
        tol: float = 1e-4,
        max_iter: int | None = None,
        time_limit: float | None = None,
        svm_solver: str = DEPRECATED,
    ) -> None:
        self.method = method
        self.solver = solver
        self.C = C
        self.mu = mu
        self.kernel = kernel
        self.inner = inner
        self.svm_solver = svm_solver
        self.tol = tol
        self.max_iter = max_iter
        self.time_limit = time_limit

    def fit(self, X: Any, y: Any) -> FeatureScalingSVC:
        """Fit the feature scaling and the SVM.

        Raises
        ------
        ValueError
            ``mu < 0``, ``C <= 0``, a kernel other than ``"rbf"`` (the method is
            defined for the feature-scaled Gaussian kernel), NaN/inf in ``X``,
            a single class.
        """
        if self.kernel != "rbf":
            raise ValueError(
                f"kernel={self.kernel!r}: FeatureScalingSVC is defined for the "
                "feature-scaled Gaussian kernel exp(-sum_l z_l^2 (x_l - x'_l)^2) only; "
                "use kernel='rbf'"
            )
        return super().fit(X, y)

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        import warnings

        solver = renamed_param(self, "method", "solver")
        if solver in METHODS:  # the old values: method="ao2" is solver="fs-ao2"
            solver = f"fs-{solver}"
        program = feature_scaled_svm(X, y, self.C, self.mu)
        sol = solve(program, solver, tol=self.tol, max_iter=self.max_iter,
                    inner=renamed_param(self, "svm_solver", "inner"),
                    time_limit=self.time_limit)
        if sol.status is not Status.USER_LIMIT and not sol.status.has_solution:
            raise RuntimeError(f"FeatureScalingSVC(solver={solver!r}) failed: {sol.message}")
        model = program.decode(sol)
        if not sol.extras["converged"]:
            warnings.warn(f"FeatureScalingSVC(solver={solver!r}) stopped before convergence: "
                          f"{sol.message}; raise max_iter / time_limit",
                          ConvergenceWarning, stacklevel=3)
        z = model["z"]
        self.program_, self.solution_, self.model_ = program, sol, model
        self.result_ = sol
        self.z_ = z
        self.support_ = model["support"]
        order = np.argsort(-z, kind="stable")
        ranking = np.empty(z.size, dtype=int)
        ranking[order] = np.arange(1, z.size + 1)
        self.ranking_ = ranking
        self.dual_coef_ = model["dual_coef"][None, :]
        self.intercept_ = np.array([model["b"]])
        self.X_fit_ = X
        self.n_iter_ = sol.iterations
        self.label_ = model["label"]
        self.vmin_ = model["vmin"]
        self.objective_ = model["objective"]
        self.converged_ = bool(sol.extras["converged"])

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return fs_kernel(X, self.X_fit_, self.z_) @ self.dual_coef_[0] + self.intercept_[0]

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self)
        return self.support_

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
