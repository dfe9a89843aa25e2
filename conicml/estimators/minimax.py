"""scikit-learn estimators for the minimax probability machines (MPM, BMPM, MEMPM).

The programs are those of :mod:`conicml.formulations.minimax`.

``classes_[1]`` (the larger label) is the positive class, i.e. the thesis's class
:math:`x` whose worst-case accuracy is :math:`\\alpha`; the other class has worst-case
accuracy :math:`\\beta`. ``predict`` returns ``classes_[1]`` where
``X @ coef_[0] + intercept_[0] >= 0`` (kernel models:
:math:`\\sum_i` ``dual_coef_[0, i]`` :math:`K(x, x_i) +` ``intercept_[0]``).

With ``kernel="linear"`` and the default ``ridge=None`` the models are invariant to
feature scaling: fitted on :math:`XD` (:math:`D` positive diagonal) they have
``coef_`` :math:`D^{-1}w` and the same decision values (see ``ridge``). Kernel models, and
an explicit absolute ``ridge``, depend on the units of the features and warn about badly
scaled input.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from .._utils.deprecation import DEPRECATED, renamed_param
from ..exceptions import NotFittedStatusError
from ..formulations import minimax as mm
from ..formulations.minimax import _fill_doc
from ..kernels import KERNELS
from ..program import Program
from ..solution import Status
from ..solving import solve
from ._base import BinaryConicClassifier, kernel_unit_dependence, ridge_keywords, solve_or_raise

__all__ = ["BMPMClassifier", "MEMPMClassifier", "MPMClassifier", "bmpm_roc"]

#: ``solver="auto"`` of MPMClassifier / BMPMClassifier. Kernel programs are dense n x n
#: SOCPs; ``ils-newton`` solves them with a few Cholesky factorisations instead of an
#: interior-point method (``benchmarks/kernel_fit_speed.py`` compares the two). Linear
#: programs keep Clarabel: their covariances may be singular (``ils-newton`` would hand
#: those to ``dinkelbach``) and they are small.
AUTO_SOLVERS = {"linear": "clarabel", "kernel": "ils-newton"}

_COMMON_DOC = """
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        Non-linear kernels use Theorem 9 of the thesis (coefficients on the
        training points) with the regulariser ``ridge``.
    gamma : float or {"scale", "auto"}, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    ridge : float or None, default=None
        The covariance ridge (glossary; the thesis's "add a small positive amount to
        the diagonal", which also keeps singular plug-in covariances solvable).
        ``None`` (linear kernel): the relative ridge
        :math:`\\Sigma_c + r\\,\\mathrm{diag}(v)` for both classes, :math:`r = 10^{-6}`,
        :math:`v_j` the variance of feature :math:`j` in ``X`` (``relative_ridge`` of
        the formulations). It moves with the covariances under a rescaling
        :math:`x \\mapsto Dx` (:math:`D` positive diagonal):
        :math:`D\\Sigma D + r\\,\\mathrm{diag}(D\\Sigma D) = D(\\Sigma + r\\,
        \\mathrm{diag}\\,\\Sigma)D`, so :math:`w \\mapsto D^{-1}w` and the predictions and
        decision values do not depend on the units of the features. A float
        :math:`\\rho`: the absolute :math:`\\Sigma_c + \\rho I` (linear; in the units of
        the features, so the model is no longer scale-invariant), or the
        :math:`\\rho K` regulariser of Theorem 9 (kernels; mandatory, the kernel program
        is unbounded without it). ``None`` with a kernel: :math:`\\rho = 10^{-3}`.
    rho : float or None
        Deprecated spelling of ``ridge`` (``FutureWarning``; removed in the next
        release)."""

_ATTR_DOC = """
    classes_ : ndarray of shape (2,)
    alpha_ : float
        Worst-case accuracy bound of ``classes_[1]`` (the thesis's class x).
    beta_ : float
        Worst-case accuracy bound of ``classes_[0]``.
    coef_ : ndarray of shape (1, n_features)
        Only for ``kernel="linear"``.
    intercept_ : ndarray of shape (1,)
    dual_coef_ : ndarray of shape (1, n_samples)
        Kernel models only: coefficients on the training points.
    X_fit_ : ndarray
        Kernel models only: the training inputs.
    model_ : dict
        The decoded model (``program_.decode(solution_)``).
    program_ : Program
    solution_ : Solution
    n_iter_ : int"""


class _MinimaxClassifier(BinaryConicClassifier):
    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "ridge": [Interval(Real, 0, None, closed="left"), None],
        "rho": [Interval(Real, 0, None, closed="left"), None, Hidden(StrOptions({DEPRECATED}))],
        "solver": [str],
        "solver_options": [dict, None],
    }

    def _solver_name(self) -> str:
        """``self.solver`` with ``"auto"`` resolved by :data:`AUTO_SOLVERS`."""
        if self.solver != "auto":
            return self.solver
        return AUTO_SOLVERS["linear" if self.kernel == "linear" else "kernel"]

    def _coordinates(self) -> str:
        """The program's coordinates (:func:`conicml.formulations.minimax.mpm`): the dual
        coefficients for ``ils-newton`` on a kernel positive semi-definite by
        construction (it needs no factorisation of the Gram matrix there), else the
        feature-map coordinates."""
        psd = self.kernel == "rbf" or (self.kernel == "poly" and self.coef0 >= 0)
        return "coefficients" if psd and self._solver_name() == "ils-newton" else "features"

    def _unit_dependence(self) -> str | None:
        ridge = self.ridge if isinstance(self.rho, str) else self.rho  # rho: deprecated
        absolute = None if not ridge else (
            f"its absolute covariance ridge ridge={ridge:g} is in the units of X "
            "(ridge=None is scale-invariant)")
        return kernel_unit_dependence(self.kernel, absolute)

    def _kernel_kwargs(self, X: np.ndarray) -> dict[str, Any]:
        return dict(kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                    coef0=self.coef0,
                    **ridge_keywords(renamed_param(self, "rho", "ridge"), self.kernel))

    def _set_model(self, X: np.ndarray, program: Program, solution: Any, model: dict) -> None:
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = int(solution.iterations)
        self.alpha_ = float(model["alpha"])
        self.beta_ = float(model["beta"])
        self.kappa_alpha_ = float(model["kappa_alpha"])
        self.kappa_beta_ = float(model["kappa_beta"])
        self._set_expansion(model, X)

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return mm.decision_values(self.program_.data, self.model_, X)


@_fill_doc(COMMON_DOC=_COMMON_DOC, ATTR_DOC=_ATTR_DOC)
class MPMClassifier(_MinimaxClassifier):
    r"""Minimax probability machine (Lanckriet et al. 2002; Huang 2004 eq. 4.8).

    Maximises the common worst-case accuracy :math:`\alpha = \beta` over all class
    distributions with the (plug-in) means and covariances; the hyperplane is
    the MPM of :func:`conicml.formulations.minimax.mpm` (one SOCP, or the
    ``dinkelbach`` / ``rosen`` fractional solvers).

    Parameters
    ----------<COMMON_DOC>
    solver : str, default="auto"
        Any solver for ``"socp.mpm"``: ``"clarabel"``, ``"ecos"``, ``"scs"``,
        ``"dinkelbach"``, ``"rosen"``, ``"ils-newton"``. ``"auto"``: ``"ils-newton"``
        for a non-linear kernel, ``"clarabel"`` for ``kernel="linear"`` (see
        :data:`AUTO_SOLVERS`).
    solver_options : dict, default=None

    Attributes
    ----------<ATTR_DOC>

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> clf = MPMClassifier().fit(X, y)
    >>> clf.score(X, y)
    1.0

    ``alpha_`` is the certified worst-case accuracy over every distribution with the
    fitted class means and covariances:

    >>> print(round(clf.alpha_, 2))
    0.89
    """

    def __init__(self, *, kernel: str = "linear", gamma: float | str = "scale",
                 degree: int = 3, coef0: float = 0.0, ridge: float | None = None,
                 solver: str = "auto", solver_options: dict | None = None,
                 rho: float | None | str = DEPRECATED) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge
        self.rho = rho
        self.solver = solver
        self.solver_options = solver_options

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        program = mm.mpm(X, y, coordinates=self._coordinates(), **self._kernel_kwargs(X))
        hint = "the kernel program is unbounded: increase ridge"
        solution = solve_or_raise(program, self._solver_name(), self.solver_options,
                                  {Status.UNBOUNDED: hint, Status.INFEASIBLE: hint})
        self._set_model(X, program, solution, program.decode(solution))


@_fill_doc(COMMON_DOC=_COMMON_DOC, ATTR_DOC=_ATTR_DOC)
class BMPMClassifier(_MinimaxClassifier):
    r"""Biased minimax probability machine (Huang 2004, eqs. 3.5–3.14 and ch. 5).

    Maximises the worst-case accuracy :math:`\alpha` of ``classes_[1]`` (the
    important class) while guaranteeing the worst-case accuracy
    :math:`\beta \ge \beta_0` of ``classes_[0]``.

    Parameters
    ----------
    beta0 : float or "auto", default="auto"
        Required worst-case accuracy of ``classes_[0]``. ``"auto"`` (the
        default): half the largest attainable value,
        :math:`\beta_0 = \beta_{0,\max}/2` (``beta0_max_``, eq. 3.44; Gaussian
        bound: halfway between ½ and it), which every data set with distinct
        class means admits. A fixed number is not a safe default: the
        attainable range depends on the data (the former default 0.5 is
        infeasible on overlapping classes such as haberman or oil spill,
        where :math:`\beta_{0,\max} < 0.5`). A float in [0, 1) is used as
        given and must lie below ``beta0_max_``; otherwise ``fit`` raises
        :class:`~conicml.NotFittedStatusError` naming both before any solve.
        The thesis sets no default: :math:`\beta_0` is the user's acceptable
        accuracy on ``classes_[0]``, and its imbalanced experiments (ch. 5) either
        sweep it (the ROC curve) or choose it by the MS criterion
        :math:`\max\alpha + \beta` (``MEMPMClassifier(theta=0.5)``). The ranking
        (the direction :math:`w`) moves with :math:`\beta_0`: near 0 it ignores
        the covariance of ``classes_[0]``, near ``beta0_max_`` that of
        ``classes_[1]``. On mammography, abalone19 and a 4 %-positive
        ``make_classification`` set (standardised, 3-fold) the default's AUC is
        within 0.01 of :class:`MPMClassifier`'s; tune ``beta0`` by cross-validation
        where it matters.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        Distribution-free bound, or Gaussian classes (:math:`\kappa = \Phi^{-1}`;
        needs ``beta0 >= 0.5``).<COMMON_DOC>
    solver : str, default="auto"
        Any solver for ``"socp.bmpm"``: ``"clarabel"``, ``"ecos"``, ``"scs"``,
        ``"rosen"``, ``"dinkelbach"``, ``"ils-newton"``. ``"auto"``: ``"ils-newton"``
        for a non-linear kernel, ``"clarabel"`` for ``kernel="linear"`` (see
        :data:`AUTO_SOLVERS`).
    solver_options : dict, default=None

    Attributes
    ----------<ATTR_DOC>
    beta0_ : float
        The :math:`\beta_0` used (``beta0="auto"`` resolved).
    beta0_max_ : float
        Largest attainable :math:`\beta_0` on the training moments.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> clf = BMPMClassifier(beta0=0.6).fit(X, y)
    >>> print(round(clf.beta_, 2))  # the worst-case accuracy required of class 0
    0.6
    >>> clf.alpha_ > clf.beta_      # the rest goes to class 1
    True
    """

    _parameter_constraints: dict = {
        **_MinimaxClassifier._parameter_constraints,
        "beta0": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "bound": [StrOptions(set(mm.BOUNDS))],
    }

    def __init__(self, beta0: float | str = "auto", *, bound: str = "chebyshev",
                 kernel: str = "linear", gamma: float | str = "scale", degree: int = 3,
                 coef0: float = 0.0, ridge: float | None = None, solver: str = "auto",
                 solver_options: dict | None = None, rho: float | None | str = DEPRECATED) -> None:
        self.beta0 = beta0
        self.bound = bound
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge
        self.rho = rho
        self.solver = solver
        self.solver_options = solver_options

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        lo = 0.5 if self.bound == "gaussian" else 0.0
        beta0 = lo if self.beta0 == "auto" else self.beta0
        program = mm.bmpm(X, y, beta0, bound=self.bound, coordinates=self._coordinates(),
                          **self._kernel_kwargs(X))
        self.beta0_max_ = float(program.data["beta0_max"])
        if self.beta0 == "auto":
            if not self.beta0_max_ > lo:
                raise NotFittedStatusError(
                    f"fit failed: the largest attainable beta0 is beta0_max_="
                    f"{self.beta0_max_:.6g} <= {lo:g}, the least the {self.bound} bound "
                    "allows: use bound='chebyshev'")
            beta0 = lo + 0.5 * (self.beta0_max_ - lo)
            program = mm.inner_bmpm(program.data, beta0)  # same moments, new beta0
        self.beta0_ = float(beta0)
        hint = (f"beta0={beta0:g} is not attainable on these data: the largest "
                f"feasible beta0 is beta0_max_={self.beta0_max_:.6g} (eq. 3.44); lower beta0 "
                "or use beta0='auto'")
        if beta0 >= self.beta0_max_:
            raise NotFittedStatusError(f"fit failed: {hint}")
        solution = solve_or_raise(
            program, self._solver_name(), self.solver_options,
            {Status.INFEASIBLE: hint, Status.INFEASIBLE_INACCURATE: hint,
             Status.UNBOUNDED: "the kernel program is unbounded: increase ridge"})
        self._set_model(X, program, solution, program.decode(solution))


@_fill_doc(COMMON_DOC=_COMMON_DOC, ATTR_DOC=_ATTR_DOC)
class MEMPMClassifier(_MinimaxClassifier):
    r"""Minimum-error minimax probability machine (Huang 2004, eqs. 3.2–3.4, 3.21–3.26).

    Maximises :math:`\theta\alpha + (1-\theta)\beta` (the worst-case Bayes
    accuracy) by a line search over :math:`\beta` with one BMPM solve per step
    (``solver="quadratic-interpolation"``, errata S004-A4). Nonconvex in general: the
    result is a local optimum.

    Parameters
    ----------
    theta : float in [0, 1] or None, default=None
        Weight of ``classes_[1]``; ``None`` uses its training proportion (the
        prior, as in the thesis's experiments); ``0.5`` is the MS criterion.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        Distribution-free bound or Gaussian classes (restricted to
        :math:`\alpha, \beta \ge \tfrac12`).<COMMON_DOC>
    solver : str, default="quadratic-interpolation"
        Solver of the sequential program.
    inner : str, default="auto"
        Solver of the inner BMPM programs (``"clarabel"``, ``"ecos"``,
        ``"scs"``, ``"rosen"``, ``"dinkelbach"``, ``"ils-newton"``). ``"auto"``:
        ``"ils-newton"`` for a non-linear kernel, ``"clarabel"`` for
        ``kernel="linear"`` (:data:`AUTO_SOLVERS`: the same :math:`F` as with Clarabel
        inside, in less time).
    solver_options : dict, default=None
        Options of the outer solver (``tol``, ``max_iter``, ...).

    Attributes
    ----------<ATTR_DOC>
    theta_ : float
        The weight used.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> clf = MEMPMClassifier().fit(X, y)  # theta=None: the class proportion (here 0.5)
    >>> print(clf.score(X, y), clf.theta_)
    1.0 0.5
    >>> print(round(clf.alpha_, 2), round(clf.beta_, 2))
    0.91 0.87
    """

    _parameter_constraints: dict = {
        **_MinimaxClassifier._parameter_constraints,
        "theta": [Interval(Real, 0, 1, closed="both"), None],
        "bound": [StrOptions(set(mm.BOUNDS))],
        "inner": [str],
    }

    def __init__(self, theta: float | None = None, bound: str = "chebyshev", *,
                 kernel: str = "linear", gamma: float | str = "scale", degree: int = 3,
                 coef0: float = 0.0, ridge: float | None = None,
                 solver: str = "quadratic-interpolation", inner: str = "auto",
                 solver_options: dict | None = None, rho: float | None | str = DEPRECATED) -> None:
        self.theta = theta
        self.bound = bound
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge
        self.rho = rho
        self.solver = solver
        self.inner = inner
        self.solver_options = solver_options

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        program = mm.mempm(X, y, theta=self.theta, bound=self.bound,
                           **self._kernel_kwargs(X))
        inner = self.inner
        if inner == "auto":
            inner = AUTO_SOLVERS["linear" if self.kernel == "linear" else "kernel"]
        options = {"inner": inner, **dict(self.solver_options or {})}
        solution = solve_or_raise(program, self.solver, options)
        model = program.decode(solution)
        self._set_model(X, program, solution, model)
        self.theta_ = float(model["theta"])


def bmpm_roc(X: Any, y: Any, betas: Sequence[float] | None = None, **bmpm_options: Any
             ) -> dict[str, np.ndarray]:
    r"""BMPM swept over :math:`\beta_0`: certified and empirical ROC points (seed 004 Sec. 5.4).

    For each :math:`\beta_0` the BMPM worst-case accuracies certify
    :math:`\text{TPR} \ge \alpha(\beta_0)` at :math:`\text{FPR} \le 1 - \beta_0`;
    the empirical rates of the same hyperplanes on ``(X, y)`` are returned beside them.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels +1 (the positive class, worst-case accuracy :math:`\alpha`) and -1.
    betas : sequence of float, optional
        The :math:`\beta_0` values, each in :math:`[0, \beta_{0,\max})`; default: 11
        evenly spaced values below :math:`\beta_{0,\max}`.
    **bmpm_options
        Passed to :func:`conicml.formulations.minimax.bmpm` (``kernel``, ``bound``, ...).

    Returns
    -------
    dict
        ``beta0``, ``alpha`` (worst-case TPR), ``fpr_bound`` (:math:`1-\beta_0`),
        ``tpr`` and ``fpr`` (empirical).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> roc = bmpm_roc(X, np.where(y == 1, 1, -1), betas=[0.5, 0.7, 0.9])
    >>> roc["fpr_bound"]
    array([0.5, 0.3, 0.1])
    >>> roc["alpha"].round(2)  # the certified TPR falls as the FPR bound tightens
    array([0.97, 0.96, 0.86])
    >>> bool(np.all(roc["fpr"] <= roc["fpr_bound"]))
    True
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    base = mm.bmpm(X, y, 0.5, **bmpm_options)
    beta_max = float(base.data["beta0_max"])
    if betas is None:
        betas = np.linspace(0.0, beta_max, 12, endpoint=False)[1:]
    out: dict[str, list[float]] = {k: [] for k in ("beta0", "alpha", "fpr_bound", "tpr", "fpr")}
    for beta in betas:
        if not 0.0 <= beta < beta_max:
            raise ValueError(f"beta0 must lie in [0, beta0_max = {beta_max:.4g}), got {beta!r}")
        prog = mm.bmpm(X, y, float(beta), **bmpm_options)
        model = prog.decode(solve(prog, "clarabel"))
        f = mm.decision_values(prog.data, model, X)
        out["beta0"].append(float(beta))
        out["alpha"].append(float(model["alpha"]))
        out["fpr_bound"].append(1.0 - float(beta))
        out["tpr"].append(float(np.mean(f[y > 0] >= 0)))
        out["fpr"].append(float(np.mean(f[y < 0] >= 0)))
    return {k: np.asarray(v) for k, v in out.items()}
