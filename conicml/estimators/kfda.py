"""scikit-learn estimator for kernel Fisher discriminants (:mod:`conicml.formulations.kfda`)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..formulations import kfda as kfda_formulation
from ..kernels import KERNELS
from ._base import BinaryConicClassifier, kernel_unit_dependence, solve_or_raise

__all__ = ["KFDAClassifier"]

_DEFAULT_SOLVER = {"qp": "clarabel", "closed-form": "kfda-closed-form",
                   "kqpfs": "kqpfs-cholesky"}


class KFDAClassifier(BinaryConicClassifier):
    r"""Kernel Fisher discriminant, fitted as the QP (4.15)–(4.17), in closed form
    (Algorithm 3) or as KQPFS (4.7) — the same direction by Proposition 4.1.

    The projection of a point is :math:`z(x) = \sum_i \alpha_i k(x_i, x)`. The thesis
    assigns the class of the nearest projected class mean (§2.3.1); with two classes that
    is the threshold at the midpoint of the projected means
    :math:`\bar z_\pm = \tfrac1{N_\pm}\sum_{y_i = \pm1} z(x_i)`:

    .. math::

        f(x) = s\,\big(z(x) - \tfrac12(\bar z_+ + \bar z_-)\big),
        \qquad s = \operatorname{sign}(\bar z_+ - \bar z_-),

    and ``predict`` returns ``classes_[1]`` where :math:`f(x) \ge 0`. (For the QP the
    intercept :math:`b` of (4.15) equals :math:`-\tfrac12(\bar z_+ + \bar z_-)` with
    :math:`s = +1`, so the rule is the same for every method.)

    Parameters
    ----------
    mu : float, default=1e-3
        :math:`\mu_W = \mu_Q > 0`.
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
    method : {"closed-form", "qp", "kqpfs"}, default="closed-form"
        Program and default solver: ``qp.kfda`` with ``kfda-closed-form`` or
        ``clarabel``, or ``qp.kqpfs`` with ``kqpfs-cholesky``.
    solver : str, optional
        Any solver registered for the method's kind (overrides the default).
    solver_options : dict, optional

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    dual_coef_ : ndarray of shape (1, N)
        :math:`s\,\alpha`.
    intercept_ : ndarray of shape (1,)
    X_fit_ : ndarray of shape (N, M)
    coef_ : ndarray of shape (1, M)
        Only for ``kernel="linear"``: :math:`s X^\top\alpha`.
    program_, solution_ : Program, Solution
    model_ : dict
        The decoded model (``program_.decode(solution_)``).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> clf = KFDAClassifier(mu=1e-3).fit(X, y)
    >>> clf.dual_coef_.shape  # one coefficient per training sample
    (1, 40)
    >>> clf.score(X, y)
    1.0
    """

    _parameter_constraints: dict = {
        "mu": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "method": [StrOptions({"closed-form", "qp", "kqpfs"})],
        "solver": [str, None],
        "solver_options": [dict, None],
    }

    def __init__(self, mu: float = 1e-3, *, kernel: str = "rbf",
                 gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0,
                 method: str = "closed-form", solver: str | None = None,
                 solver_options: dict | None = None) -> None:
        self.mu = mu
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.solver = solver
        self.solver_options = solver_options

    def _unit_dependence(self) -> str | None:
        return kernel_unit_dependence(self.kernel, "its regulariser mu acts in the units of X")

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        build = kfda_formulation.kqpfs if self.method == "kqpfs" else kfda_formulation.kfda
        program = build(X, y, self.mu, kernel=self.kernel, gamma=self.gamma,
                        degree=self.degree, coef0=self.coef0)
        solver = self.solver or _DEFAULT_SOLVER[self.method]
        solution = solve_or_raise(program, solver, self.solver_options)
        model = program.decode(solution)
        alpha = model["alpha"]
        z = program.data["fisher"].gram @ alpha
        z_pos, z_neg = float(z[y > 0].mean()), float(z[y < 0].mean())
        sign = 1.0 if z_pos >= z_neg else -1.0
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = solution.iterations
        self.dual_coef_ = sign * alpha[None, :]
        self.intercept_ = np.array([-0.5 * sign * (z_pos + z_neg)])
        self.X_fit_ = X
        if self.kernel == "linear":
            self.coef_ = self.dual_coef_ @ X

    def _decision(self, X: np.ndarray) -> np.ndarray:
        if self.kernel == "linear":
            return X @ self.coef_[0] + self.intercept_[0]
        return super()._decision(X)
