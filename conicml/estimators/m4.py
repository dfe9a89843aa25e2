"""scikit-learn estimator for the Maxi-Min Margin Machine (:mod:`conicml.formulations.m4`).

``classes_[1]`` (the larger label) is the positive class, the thesis's class
:math:`x`; ``predict`` returns ``classes_[1]`` where ``X @ coef_[0] +
intercept_[0] >= 0`` (kernel models: :math:`\\sum_i` ``dual_coef_[0, i]``
:math:`K(x, x_i) +` ``intercept_[0]``).

With ``kernel="linear"`` and the default ``ridge=None`` the model is invariant to feature
scaling: fitted on :math:`XD` (:math:`D` positive diagonal) it has ``coef_``
:math:`D^{-1}w` and the same decision values (see ``ridge``). Kernel models, and an
explicit absolute ``ridge``, depend on the units of the features and warn about badly
scaled input.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from .._utils.deprecation import DEPRECATED, renamed_param
from ..contracts.m4 import INNER_BACKENDS
from ..formulations import m4 as m4f
from ..kernels import KERNELS
from ..solution import Status
from ._base import BinaryConicClassifier, kernel_unit_dependence, ridge_keywords, solve_or_raise

__all__ = ["M4Classifier"]


class M4Classifier(BinaryConicClassifier):
    r"""Maxi-Min Margin Machine (Huang 2004, ch. 4).

    Maximises the smallest Mahalanobis margin of the training points, each
    measured in its own class's covariance metric:

    .. math::

        \max_{\rho, w \ne 0, b}\ \rho\quad\text{s.t.}\quad
        \frac{w^\top x_i + b}{\sqrt{w^\top\Sigma_x w}} \ge \rho,\quad
        \frac{-(w^\top y_j + b)}{\sqrt{w^\top\Sigma_y w}} \ge \rho

    (separable form, ``C=None``), or :math:`\rho - C\sum_k\xi_k` with slacks
    (soft margin, eqs. 4.16–4.18; the default, with a data-scaled ``C``). With
    equal identity covariances the separable M4 is the hard-margin SVM; it
    always satisfies :math:`\rho \le \kappa_{MPM}`.

    Parameters
    ----------
    C : float, "auto" or None, default="auto"
        ``"auto"`` (the default): a soft margin with the data-scaled
        :math:`C = 1/(\nu\,n\,\bar\sigma)`, :math:`\nu = 0.5`
        (:func:`conicml.formulations.m4.auto_C`, resolved in ``C_``): about half
        the training points end inside the margin, like a ν-SVM with ν = 0.5.
        It fits every data set with distinct class means, whereas the separable
        M4 is infeasible on any data set that is not linearly separable (most
        real ones: heart, pima, ionosphere, mammography, ...), which is why it
        is not the default.
        ``None``: the separable M4, by explicit choice; on data that are not
        separable (in the kernel's feature space) ``fit`` raises
        :class:`~conicml.NotFittedStatusError` saying so and asking for a
        soft margin.
        A positive float: soft margin; slacks are in the units fixed by
        :math:`w^\top(\bar x - \bar y) = 1` (a slack of 1 is the whole gap
        between the class means). About :math:`1/(C\sigma)` points end inside
        the margin (:math:`\sigma \approx 1/\kappa_{MPM}`), so write
        ``C = c / n_samples``: small ``c`` gives :math:`\rho = \kappa_{MPM}`
        (MPM-like), large ``c`` gives :math:`\rho = 0` (minimum total
        violation); useful ``c`` lie around :math:`\kappa_{MPM}` divided by
        the training error rate and below (see :mod:`conicml.formulations.m4`).
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        Non-linear kernels use Theorem 17 via the empirical kernel map.
    gamma : float or {"scale", "auto"}, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    ridge : float or None, default=None
        The covariance ridge (glossary). ``None`` (linear kernel): the relative ridge
        :math:`\Sigma_c + r\,\mathrm{diag}(v)` for both classes, :math:`r = 10^{-6}`,
        :math:`v_j` the variance of feature :math:`j` in ``X`` (``relative_ridge`` of
        :func:`conicml.formulations.m4.m4`); under :math:`x \mapsto Dx` (:math:`D`
        positive diagonal) it becomes :math:`D(\Sigma_c + r\,\mathrm{diag}(v))D`, so
        :math:`w \mapsto D^{-1}w` and the predictions and decision values do not depend
        on the units of the features. A float: the absolute
        :math:`\Sigma_c + \mathrm{ridge}\,I` (linear; in the units of the features, so
        the model is no longer scale-invariant) or the :math:`\mathrm{ridge}\cdot K` of
        Corollary 16 (kernels; mandatory, the kernel program is unbounded without it).
        ``None`` with a kernel: :math:`10^{-3}`. The defaults of
        :class:`~conicml.estimators.MPMClassifier`.
    reduction : float in [0, 1] or None, default=None
        Threshold :math:`\nu` of the reduction rule with the global MPM
        constraint (Sec. 4.3); ``1`` gives the MPM hyperplane.
    factor_rtol : float, default=1e-10
        Kernels: eigenvalues of the Gram matrix below ``factor_rtol`` times the
        largest are dropped from the empirical kernel map (larger values give
        a smaller, approximate and much faster program).
    solver : str or None, default=None
        ``None`` uses the program's documented default, recorded in
        ``solution_.solver``: ``"dinkelbach-gfp"`` for ``C=None`` (also:
        ``"bisection"``), ``"envelope-newton"`` for a soft margin (also:
        ``"quadratic-interpolation"``, ``"brent"``). A
        solver that does not accept the program's kind raises
        :class:`~conicml.SolverError` naming the solvers that do.
    inner : {"auto", "clarabel", "ecos", "scs", "m4-ipm"}, default="auto"
        Backend of the inner SOCPs. ``"auto"``: the structured interior-point method
        ``"m4-ipm"`` for the soft margin's fixed-ρ slack SOCPs
        (:mod:`conicml.solvers._m4_ipm`, with the MPM bound by ``ils-newton``)
        and ``"clarabel"`` for the separable check; or one generic backend for all.
    solver_options : dict, default=None
        Further options of the solver (``tol``, ``max_iter``, ``time_limit``,
        ``inner_options``, ...).
    reg : float or None
        Deprecated spelling of ``ridge`` (``FutureWarning``; removed in the next
        release).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    C_ : float or None
        The soft-margin weight used (``C="auto"`` resolved), ``None`` if separable.
    rho_ : float
        The margin :math:`\rho` of the fitted hyperplane.
    coef_ : ndarray of shape (1, n_features)
        Only for ``kernel="linear"``; normalised to
        :math:`w^\top(\bar x - \bar y) = 1`.
    intercept_ : ndarray of shape (1,)
    dual_coef_ : ndarray of shape (1, n_samples)
        Kernel models only: :math:`\eta`, the coefficients on the training points.
    X_fit_ : ndarray
        Kernel models only: the training inputs.
    support_ : ndarray
        Indices of the training points whose margin is at (or below) ``rho_``.
    model_ : dict
        The decoded model (``program_.decode(solution_)``).
    program_ : Program
    solution_ : Solution
    n_iter_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> clf = M4Classifier().fit(X, y)  # C="auto": the Lemma 3.3 bound
    >>> clf.predict([[-2, -2], [2, 2]])
    array([0, 1])
    >>> clf.score(X, y)
    1.0
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"}), None],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "ridge": [Interval(Real, 0, None, closed="left"), None],
        "reg": [Interval(Real, 0, None, closed="left"), None, Hidden(StrOptions({DEPRECATED}))],
        "reduction": [Interval(Real, 0, 1, closed="both"), None],
        "factor_rtol": [Interval(Real, 0, 1, closed="neither")],
        "solver": [str, None],
        "inner": [StrOptions(set(INNER_BACKENDS))],
        "solver_options": [dict, None],
    }

    def __init__(
        self,
        C: float | str | None = "auto",
        *,
        kernel: str = "linear",
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        ridge: float | None = None,
        reduction: float | None = None,
        factor_rtol: float = 1e-10,
        solver: str | None = None,
        inner: str = "auto",
        solver_options: dict | None = None,
        reg: float | None | str = DEPRECATED,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge
        self.reg = reg
        self.reduction = reduction
        self.factor_rtol = factor_rtol
        self.solver = solver
        self.inner = inner
        self.solver_options = solver_options

    def _unit_dependence(self) -> str | None:
        ridge = self.ridge if isinstance(self.reg, str) else self.reg  # reg: deprecated
        absolute = None if not ridge else (
            f"its absolute covariance ridge ridge={ridge:g} is in the units of X "
            "(ridge=None is scale-invariant)")
        return kernel_unit_dependence(self.kernel, absolute)

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        program = m4f.m4(X, y, self.C, kernel=self.kernel, gamma=self.gamma,
                         degree=self.degree, coef0=self.coef0,
                         **ridge_keywords(renamed_param(self, "reg", "ridge"), self.kernel),
                         reduction=self.reduction, factor_rtol=self.factor_rtol)
        solver = program.default_solver if self.solver is None else self.solver
        space = "linearly" if self.kernel == "linear" else "in the kernel's feature space"
        hints = {
            Status.INFEASIBLE: f"the training data are not separable {space}, which the "
            "separable M4 (C=None) requires: set C to a positive number (soft margin)",
            Status.UNBOUNDED: "the margin is unbounded because the class covariances are "
            "singular along the mean difference: increase ridge",
        }
        options = {"inner": self.inner, **dict(self.solver_options or {})}
        solution = solve_or_raise(program, solver, options, hints)
        self._store(X, program, solution)

    def _store(self, X: np.ndarray, program, solution) -> None:
        """Keep a solved program as the fitted model (shared with :class:`M4ClassifierCV`)."""
        model = program.decode(solution)
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = int(solution.iterations)
        self.C_ = program.data["C"]
        self.rho_ = float(model["rho"])
        self.support_ = np.asarray(model["support"])
        self._set_expansion(model, X)  # coef_ or dual_coef_ + X_fit_

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return m4f.decision_values(self.program_.data, self.model_, X)
