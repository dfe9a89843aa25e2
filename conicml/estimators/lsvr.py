"""scikit-learn regressor for Local Support Vector Regression (formulations.lsvr)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..formulations import lsvr as lsvr_formulation
from ..kernels import KERNELS
from ._base import kernel_unit_dependence, solve_or_raise, warn_unit_dependent

__all__ = ["LSVRRegressor"]


class LSVRRegressor(RegressorMixin, BaseEstimator):
    r"""Local Support Vector Regression (seed 004, ch. 6) solved as one SOCP.

    Fits :math:`f(x) = w^\top x + b` (or :math:`\sum_j\mu_j k(x_j, x) + b`)
    with a tube of local half-width :math:`\epsilon t_i`, where :math:`t_i`
    bounds the local volatility :math:`\sqrt{w^\top\Sigma_i w}` of :math:`f`
    over a window of :math:`2k+1` training points — the relaxed program of
    eqs. (6.13)–(6.15) (kernel: Theorem 19). See
    :func:`conicml.formulations.lsvr.lsvr`.

    With ``neighborhood="index"`` (default) the windows follow the **order of
    the training rows** (time order for a series, as in the thesis): fitting a
    shuffled copy of the data gives a different model. Use
    ``neighborhood="nearest"`` for unordered data.

    Parameters
    ----------
    epsilon : float, default=0.1
        Tube factor (>= 0). When ``n_samples * C * epsilon > 1`` the relaxed
        model does not depend on ``C`` (formulation docstring).
    C : float, default=1.0
        Cost of slack (> 0).
    k : int, default=2
        Window half-width; needs ``n_samples >= 2k + 1``.
    neighborhood : {"index", "nearest"}, default="index"
        Windows by row order (clamped at both ends) or by nearest neighbours.
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
    gamma : float or {"scale", "auto"}, default="scale"
        RBF / poly scale as in :class:`sklearn.svm.SVR` (thesis's RBF
        :math:`e^{-\beta\|u-v\|^2}` is ``gamma=beta``).
    degree : int, default=3
    coef0 : float, default=0.0
    factor_rtol : float, default=1e-12
        Eigenvalue threshold of the Gram factor (non-linear kernels). The
        default fits the model as written, whose predictions *away from the
        training points* can be wild for an RBF kernel (the model never
        penalises the RKHS norm). Larger values (``1e-4`` .. ``1e-2``) add a
        spectral regulariser, not in the thesis, that keeps the training fit
        and tames off-sample predictions (formulation Notes;
        ``benchmarks/lsvr_study.py``).
    solver : str, default="clarabel"
        Any solver registered for ``"socp.lsvr"`` / ``"socp.lsvr.kernel"``
        (``"clarabel"``, ``"ecos"``, ``"scs"``).
    solver_options : dict, default=None
        Options for the solver (see :func:`conicml.solve`).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        :math:`w`; only for ``kernel="linear"``.
    intercept_ : ndarray of shape (1,)
        :math:`b`.
    dual_coef_ : ndarray of shape (n_samples,)
        Kernel coefficients :math:`\mu` (non-linear kernels only).
    support_ : ndarray of shape (n_SV,)
        Training points on or outside their local tube.
    tube_ : ndarray of shape (n_samples,)
        Local tube half-widths :math:`\epsilon t_i` at the training points.
    local_std_ : ndarray of shape (n_samples,)
        Local volatilities :math:`\sqrt{w^\top\Sigma_i w}`.
    n_features_in_ : int
    model_ : dict
        The decoded model (``program_.decode(solution_)``).
    program_ : Program
    solution_ : Solution
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(0, 4, 30)[:, None]
    >>> y = 2 * X[:, 0] + 1
    >>> reg = LSVRRegressor(epsilon=0.1, C=10.0).fit(X, y)
    >>> print(round(reg.coef_[0], 1), round(reg.intercept_[0], 1))
    2.0 1.0
    >>> reg.tube_.shape  # the locally adaptive tube half-widths
    (30,)
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "neighborhood": [StrOptions(set(lsvr_formulation.NEIGHBORHOODS))],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "factor_rtol": [Interval(Real, 0, 1, closed="neither")],
        "solver": [str],
        "solver_options": [dict, None],
    }

    def __init__(
        self,
        epsilon: float = 0.1,
        C: float = 1.0,
        k: int = 2,
        *,
        neighborhood: str = "index",
        kernel: str = "linear",
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        factor_rtol: float = 1e-12,
        solver: str = "clarabel",
        solver_options: dict | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.C = C
        self.k = k
        self.neighborhood = neighborhood
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.factor_rtol = factor_rtol
        self.solver = solver
        self.solver_options = solver_options

    def fit(self, X: Any, y: Any) -> LSVRRegressor:
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs, in window order for ``neighborhood="index"``.
        y : array-like of shape (n_samples,)
            Real-valued targets.

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        warn_unit_dependent(self, X, kernel_unit_dependence(self.kernel))  # linear: invariant
        n = X.shape[0]
        if 2 * self.k + 1 > n:
            raise ValueError(
                f"k={self.k} needs windows of 2k+1={2 * self.k + 1} samples but got "
                f"n_samples={n}; lower k or add samples"
            )
        program = lsvr_formulation.lsvr(
            X, y, self.epsilon, self.C, self.k, neighborhood=self.neighborhood,
            kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
            factor_rtol=self.factor_rtol,
        )
        solution = solve_or_raise(program, self.solver, self.solver_options)
        model = program.decode(solution)
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = solution.iterations
        self.intercept_ = np.array([model["b"]])
        self.support_ = model["support"]
        self.tube_ = model["tube"]
        self.local_std_ = model["local_std"]
        if self.kernel == "linear":
            self.coef_ = model["w"]
        else:
            self.dual_coef_ = model["dual_coef"]
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predicted targets :math:`f(x)`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            (for ``kernel="precomputed"``: kernel values against the training
            samples, shape (n_samples, n_train)).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return lsvr_formulation.predict(self.program_.data, self.model_, X)

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
