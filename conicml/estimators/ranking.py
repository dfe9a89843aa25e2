r"""scikit-learn estimators for rare-class ranking (:mod:`conicml.formulations.ranking`).

* :class:`RankRCClassifier`: RankRC (thesis (3.15); paper (13)), the score
  :math:`f(x) = \sum_{r\in\mathcal R}\beta_rk(x_r, x)` over the rare-class basis;
* :class:`RankSVMClassifier`: kernel RankSVM (3.7), the same with every training
  sample in the basis;
* :class:`RankRCRanker`: multi-level RankRC (6.2) for ordinal labels, scored by MAUC.

The rare class is the positive label ``classes_[1]`` (the larger label, as in
the other estimators). ``decision_function`` returns the ranking score and
``score`` the ROC AUC (:func:`sklearn.metrics.roc_auc_score`, ties counted
1/2; :func:`conicml.metrics.auc` gives the thesis' tie convention).

**Prediction rule.** A ranking score has no bias, so ``predict`` thresholds it at
``threshold_``, chosen at fit time to match the training prior: the midpoint
of the :math:`m_+`-th and :math:`(m_+{+}1)`-th largest training scores (the top
:math:`m_+` training scores are predicted rare; a tie across the threshold is
predicted rare). To keep scikit-learn's contract
(``predict`` is ``classes_[1]`` iff ``decision_function >= 0``), the classifiers'
``decision_function`` is the ranking score shifted by that threshold,
:math:`f(x) - t`: the same ranking (AUC is shift invariant);
``ranking_score`` gives :math:`f(x)` itself.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._utils.deprecation import DEPRECATED, renamed_param
from .._utils.progress import progress_bar
from ..contracts.ranking_ops import relative_gradient
from ..exceptions import ProgramError
from ..formulations import ranking as ranking_formulation
from ..kernels import KERNELS, make_kernel
from ..metrics import mauc
from ..moments.distributed import as_dask_arrays, is_dask_array, is_dask_input
from ..paths import solve_path
from ..program import Program
from ..solution import Residuals, Solution, Status
from ._base import (
    BinaryConicClassifier,
    kernel_unit_dependence,
    solve_or_raise,
    warn_unit_dependent,
)

__all__ = ["RankRCClassifier", "RankRCRanker", "RankSVMClassifier", "ranking_path"]

_COMMON_CONSTRAINTS: dict = {
    "lam": [Interval(Real, 0, None, closed="neither")],
    "kernel": [StrOptions(set(KERNELS))],
    "gamma": [StrOptions({"mean-distance", "scale", "auto"}),
              Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [Real],
    "loss": [StrOptions({"smoothed", "hinge"})],
    "smoothing": [Interval(Real, 0, 1, closed="neither")],
    "eps": [Interval(Real, 0, 1, closed="neither"), Hidden(StrOptions({DEPRECATED}))],
    "solver": [str],
    "solver_options": [dict, None],
}


class _RankingMixin:
    """Fit a ranking program and keep its kernel expansion over the basis."""

    def _basis_param(self) -> Any:
        return self.basis

    def _smoothing(self) -> float:
        return renamed_param(self, "eps", "smoothing")

    def _unit_dependence(self) -> str | None:
        return kernel_unit_dependence(
            self.kernel, "its penalty lambda/2 beta^T K beta weighs each coefficient in the "
            "units of its feature")

    def _fit_program(self, X: np.ndarray, y: np.ndarray):
        program = ranking_formulation.rankrc(
            X, y, self.lam, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
            coef0=self.coef0, basis=self._basis_param(), loss=self.loss,
            smoothing=self._smoothing(),
            random_state=getattr(self, "random_state", None))
        # _fit_from's hints and x0, for this fit only
        options = {**self.__dict__.pop("_hints", {}), **(self.solver_options or {})}
        x0 = self.__dict__.pop("_x0", None)
        if x0 is not None and x0.shape == (program.data["rank"].n_basis,):
            options["x0"] = x0
        solution = solve_or_raise(program, self.solver, options)
        model = program.decode(solution)
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = solution.iterations
        self.basis_ = np.asarray(model["basis"])
        self.dual_coef_ = np.asarray(model["beta"])[None, :]
        self.kernel_ = program.data["kernel"]
        if self.kernel != "precomputed":
            self.basis_vectors_ = X[self.basis_]
        return model

    def _scores(self, X: np.ndarray) -> np.ndarray:
        if self.kernel == "precomputed":
            K = X[:, self.basis_]
        else:
            K = self.kernel_(X, self.basis_vectors_)
        return K @ self.dual_coef_[0]


class RankRCClassifier(_RankingMixin, BinaryConicClassifier):
    r"""RankRC: AUC-optimising rare-class ranking with a rare-class kernel basis.

    Solves (thesis (3.15), paper (13))

    .. math::

        \min_\beta\ \frac1{m_+m_-}\sum_{i:+}\sum_{j:-}\ell_\epsilon\big(f(x_i)-f(x_j)\big)
        + \frac\lambda2\beta^\top K_{\mathcal R\mathcal R}\beta,\qquad
        f(x) = \sum_{r\in\mathcal R}\beta_r k(x_r, x).

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation :math:`\lambda > 0` (grid of the experiments:
        :math:`\log_2\lambda = -20:2:10`).
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma : float or {"mean-distance", "scale", "auto"}, default="mean-distance"
        ``"mean-distance"``: :math:`k = \exp(-\|u-v\|^2/\sigma^2)`, :math:`\sigma^2` the
        mean squared distance of the training data (ch. 5).
    degree : int, default=3
    coef0 : float, default=1.0
    basis : {"rare", "random", "all"}, default="rare"
        ``"random"`` is RANK-RND, ``"all"`` RankSVM.
    loss : {"smoothed", "hinge"}, default="smoothed"
    smoothing : float in (0, 1), default=0.1
        Smoothing width :math:`\epsilon` of the smoothed hinge (``eps`` before this
        release, still accepted with a ``FutureWarning``).
    random_state : int, optional
        Seed of ``basis="random"``.
    solver : str, default="rank-tr"
        Any solver of the program kind (``rank-tr``, ``rank-newton``, ``clarabel``,
        ``ecos``, ``scs``; the hinge loss needs a generic backend).
    solver_options : dict, optional

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    basis_ : ndarray of int
        Training indices of the basis.
    basis_vectors_ : ndarray of shape (n_basis, n_features)
    dual_coef_ : ndarray of shape (1, n_basis)
        :math:`\beta`.
    threshold_ : float
        Score threshold of ``predict`` (see the module docstring);
        ``decision_function`` is :math:`f(x)` minus it.
    program_, solution_, n_iter_
    model_ : dict
        The decoded model (``program_.decode(solution_)``).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=80, n_features=4, weights=[0.85],
    ...                            random_state=0)  # 12 rare positives
    >>> clf = RankRCClassifier(lam=0.01).fit(X, y)
    >>> clf.basis_.size  # the rare class is the kernel basis
    12
    >>> print(round(clf.score(X, y), 2))  # ROC AUC
    0.98
    """

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "basis": [StrOptions({"rare", "random", "all"})],
        "random_state": ["random_state"],
    }

    def __init__(self, lam: float = 0.01, *, kernel: str = "rbf",
                 gamma: float | str = "mean-distance", degree: int = 3, coef0: float = 1.0,
                 basis: str = "rare", loss: str = "smoothed", smoothing: float = 0.1,
                 random_state: Any = None, solver: str = "rank-tr",
                 solver_options: dict | None = None,
                 eps: float | str = DEPRECATED) -> None:
        self.lam = lam
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

    def fit(self, X: Any, y: Any) -> RankRCClassifier:
        """Fit the ranker.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            A ``dask.array`` is fitted on the workers of the active client
            (:meth:`_fit_dask`): the rare class is gathered on the client, the loss
            and its derivatives are map-reduced over blocks of negatives.
        y : array-like or dask array of shape (n_samples,)
            Two classes; the larger label ``classes_[1]`` is the rare (positive) class.

        Returns
        -------
        self
        """
        if is_dask_input(X):
            return self._fit_dask(*as_dask_arrays(X, y, self))
        return super().fit(X, y)

    def _fit_from(self, X: np.ndarray, y: np.ndarray, x0: np.ndarray | None,
                  hints: dict | None = None) -> RankRCClassifier:
        r""":meth:`fit` with the solve started from ``x0``, a :math:`\beta` over the basis
        this fit draws (:class:`~conicml.estimators.RankRCClassifierCV`'s refit starts it
        from the folds' models); the solver must take ``x0``. ``hints``: solver options
        for this fit, below ``solver_options`` (which win). The fitted model is
        certified as a cold fit's, and the estimator's parameters are unchanged."""
        self._x0 = None if x0 is None else np.asarray(x0, dtype=float)
        self._hints = dict(hints or {})
        try:
            return self.fit(X, y)
        finally:
            self.__dict__.pop("_x0", None)
            self.__dict__.pop("_hints", None)

    def _fit_dask(self, X: Any, y: Any) -> RankRCClassifier:
        r"""RankRC on a Dask array: a trust-region Newton method on the client over
        map-reduced derivatives (:mod:`conicml.contracts.ranking_distributed`).

        One pass over the data returns the objective, the gradient and the generalized
        Hessian (3.22) in :math:`\beta` (:math:`m_+\times m_+`, from per-block sorted
        prefix sums). The step is a trust-region Newton step (the trust-region subproblem
        solved exactly, Moré-Sorensen), not the in-memory ``rank-tr`` (whose subspace
        steps need one Hessian product, i.e. one pass, per CG iteration). It works in the
        whitened coefficients of the linearisation (3.16),
        :math:`\beta = U\Lambda^{\dagger1/2}w`, where the regulariser is
        :math:`\frac\lambda2\|w\|^2` and the Euclidean gradient is the
        :math:`K^{-1}`-metric gradient of the certificate. ``solver_options``: ``tol``
        (relative gradient, default 1e-6), ``max_iter`` (default 100), ``time_limit``
        (seconds), ``hessian_fraction`` (default 1: the Hessian's
        :math:`O(n\,m_+^2)` term from that fraction of the negatives, a sub-sampled
        Newton method; the gradient and the certificate stay exact), ``basis_size``
        (default: every rare sample): a basis of that many rare samples drawn without
        replacement (seeded by ``random_state``) instead of the whole rare class; the
        loss still runs over every pair, the model is RankRC (3.14) with that basis
        (``basis_`` says which) and the certificate is that program's. The status is
        OPTIMAL only when the recomputed relative gradient is at most ``tol``; otherwise
        USER_LIMIT and a ``ConvergenceWarning``.
        """
        from ..contracts import ranking_distributed as rd
        from ..contracts.ranking_ops import linearize

        self._validate_params()
        options = dict(self.solver_options or {})
        tol = float(options.pop("tol", 1e-6))
        max_iter = int(options.pop("max_iter", 100))
        fraction = float(options.pop("hessian_fraction", 1.0))
        if not 0.0 < fraction <= 1.0:
            raise ProgramError(f"solver_options hessian_fraction must be in (0, 1], "
                               f"got {fraction!r}")
        time_limit = options.pop("time_limit", None)
        basis_size = options.pop("basis_size", None)
        if basis_size is not None and not (isinstance(basis_size, (int, np.integer))
                                           and not isinstance(basis_size, bool)
                                           and basis_size >= 1):
            raise ProgramError(f"solver_options basis_size must be a positive integer (rare "
                               f"samples in the basis), got {basis_size!r}")
        if options:
            raise ProgramError(f"RankRC on Dask accepts solver_options tol, max_iter, "
                               f"time_limit, hessian_fraction and basis_size; got also "
                               f"{sorted(options)}")
        basis_param = self._basis_param()
        if self.kernel == "precomputed" or self.loss != "smoothed" or basis_param != "rare":
            raise ProgramError(
                "RankRC on a Dask array needs kernel != 'precomputed', loss='smoothed' and "
                f"basis='rare' (got kernel={self.kernel!r}, loss={self.loss!r}, "
                f"basis={basis_param!r}); compute the array for the other settings")
        t0 = time.perf_counter()
        info = rd.scan(X, y)
        classes = np.array(sorted(info["labels"]))
        if classes.size != 2:
            raise ProgramError(
                f"{type(self).__name__} needs samples of exactly two classes; got "
                f"{classes.size} ({classes[:5].tolist()})")
        self.classes_ = classes
        d = int(X.shape[1])
        self.n_features_in_ = d
        XP, basis = rd.gather_rows(info["X_blocks"], info["y_blocks"], info["offsets"],
                                   classes[1])
        m_pos, m_neg = XP.shape[0], info["n"] - XP.shape[0]
        XR = XP
        if basis_size is not None and basis_size < m_pos:
            # a seeded sample of the rare class as the basis, kept in data order
            keep = np.sort(check_random_state(self.random_state).choice(
                m_pos, int(basis_size), replace=False))
            XR, basis = XP[keep], basis[keep]
        gamma = self.gamma
        if isinstance(gamma, str):  # the rules of make_kernel / mean_distance_gamma
            var = info["var"]
            if gamma == "mean-distance":
                sigma2 = 2.0 * float(var.sum())
                gamma = 1.0 / sigma2 if sigma2 > 0 else 1.0
            elif gamma == "scale":
                total = float((var + (info["mean"] - info["mean"].mean()) ** 2).mean())
                gamma = 1.0 / (d * total) if total > 0 else 1.0
            else:
                gamma = 1.0 / d
        kern = make_kernel(self.kernel, XR[:1], gamma=float(gamma), degree=self.degree,
                           coef0=self.coef0)
        loss = rd.DaskRankingLoss(info["X_blocks"], info["y_blocks"], classes[1], XR, kern,
                                  self._smoothing(), m_pos * m_neg,
                                  XP=None if XR is XP else XP)
        Kpp = loss.Kpp  # m_+ x r: every positive's kernel row over the basis
        Krr = Kpp if XR is XP else kern(XR, XR)
        jitter = ranking_formulation.KRR_JITTER * max(float(np.mean(np.diag(Krr))), 0.0)
        KRR = 0.5 * (Krr + Krr.T) + jitter * np.eye(XR.shape[0])  # as the in-memory program
        T, _ = linearize(Kpp, KRR)
        lam = float(self.lam)
        cache: dict = {}

        def parts(w: np.ndarray):
            key = w.tobytes()
            if key not in cache:  # value, both gradient parts and Hessian: one pass
                beta = T @ w
                val, gl, H = loss.gradient_hessian(beta, fraction)
                kb = KRR @ beta
                cache.clear()
                cache[key] = (val + 0.5 * lam * float(beta @ kb), T.T @ gl, T.T @ (lam * kb),
                              T.T @ (H + lam * KRR) @ T)
            return cache[key]

        w0 = np.zeros(T.shape[1])
        g_scale = float(np.linalg.norm(parts(w0)[1]))

        def relgrad(w) -> float:
            _, gl, gr, _ = parts(w)
            return relative_gradient(float(np.linalg.norm(gl + gr)), float(np.linalg.norm(gl)),
                                     float(np.linalg.norm(gr)), g_scale)

        t_solve = time.perf_counter()
        w, n_iter, reason = _trust_region_newton(parts, relgrad, w0, tol, max_iter,
                                                 time_limit)
        rel = relgrad(w)
        beta = T @ w
        ok = rel <= tol
        solution = Solution(
            status=Status.OPTIMAL if ok else Status.USER_LIMIT, solver="dask-trust-newton",
            objective=parts(w)[0], values={"beta": beta}, iterations=n_iter,
            setup_time=t_solve - t0, solve_time=time.perf_counter() - t_solve,
            residuals=Residuals(primal=0.0, dual=rel, source="recomputed"),
            message=("converged: relative gradient <= tol" if ok else
                     f"stopped before tol: relative gradient {rel:.3g} > {tol:g} ({reason})"),
            extras={"passes": loss.passes, "n_pairs": m_pos * m_neg,
                    "basis_size": int(XR.shape[0]), "n_rare": int(m_pos)})
        if not ok:
            warnings.warn(f"RankRC on Dask: {solution.message}", ConvergenceWarning,
                          stacklevel=3)
        self.program_ = None
        self.solution_ = solution
        self.n_iter_ = solution.iterations
        self.basis_ = np.asarray(basis)
        self.basis_vectors_ = XR
        self.dual_coef_ = beta[None, :]
        self.kernel_ = kern
        self.model_ = {"beta": beta, "basis": self.basis_}
        top = loss.top_negative_scores(beta, m_pos + 1)
        scores = np.sort(np.concatenate([Kpp @ beta, top]))[::-1]
        self.threshold_ = float(0.5 * (scores[m_pos - 1] + scores[m_pos]))
        return self

    def decision_function(self, X: Any) -> Any:
        """Ranking score minus ``threshold_``; a dask array gives a dask array (lazy)."""
        if not is_dask_array(X):
            return super().decision_function(X)
        check_is_fitted(self)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has shape {X.shape}; {type(self).__name__} was fitted on "
                             f"{self.n_features_in_} features")
        return X.rechunk({1: -1}).map_blocks(
            lambda b: self._decision(np.asarray(b, dtype=float)), drop_axis=1, dtype=float)

    def predict(self, X: Any) -> Any:
        """Class labels: ``classes_[1]`` where the decision value is >= 0 (dask in, dask out)."""
        if not is_dask_array(X):
            return super().predict(X)
        classes = self.classes_
        return self.decision_function(X).map_blocks(
            lambda d: classes[(d >= 0).astype(int)], dtype=classes.dtype)

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        model = self._fit_program(X, y)
        scores = np.sort(model["scores"])[::-1]
        k = int(np.sum(y > 0))
        self.threshold_ = float(0.5 * (scores[k - 1] + scores[k]))

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self._scores(X) - self.threshold_

    def ranking_score(self, X: Any) -> np.ndarray:
        r"""The unshifted ranking score :math:`f(x) = \sum_r\beta_r k(x_r, x)`."""
        return self.decision_function(X) + self.threshold_

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """ROC AUC of the ranking scores (``roc_auc_score``, the rare class positive)."""
        return float(roc_auc_score(np.asarray(y) == self.classes_[1], self.decision_function(X),
                                   sample_weight=sample_weight))


def _trust_region_newton(parts: Any, relgrad: Any, w: np.ndarray, tol: float, max_iter: int,
                         time_limit: float | None) -> tuple[np.ndarray, int, str]:
    r"""Trust-region Newton with the exact subproblem (Moré & Sorensen) on a small Hessian.

    ``parts(w)`` returns ``(f, g_loss, g_reg, H)`` (one pass over the data), ``relgrad(w)``
    the certificate. The step minimises :math:`g^\top s + \frac12 s^\top Hs` over
    :math:`\|s\| \le \Delta` from one eigendecomposition of H (H is positive definite:
    :math:`\lambda I` plus a PSD part); the radius follows the usual ratio test (shrink
    below 1/4, double above 3/4 on the boundary). Returns ``(w, iterations, reason)``.
    """
    t0 = time.perf_counter()
    f, gl, gr, H = parts(w)
    g = gl + gr
    radius = math.inf
    for k in range(max_iter):
        if relgrad(w) <= tol:
            return w, k, "converged"
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            return w, k, "time limit reached (time_limit)"
        lam, V = np.linalg.eigh(0.5 * (H + H.T))
        gv = V.T @ g
        lam_min = float(lam[0])

        def step(mu: float) -> np.ndarray:
            return -gv / (lam + mu)

        s_v = step(max(0.0, -lam_min) + 1e-300) if lam_min <= 0 else step(0.0)
        if not math.isfinite(radius):
            radius = float(np.linalg.norm(s_v))
        if float(np.linalg.norm(s_v)) > radius:  # boundary: |s(mu)| = radius, mu by bisection
            lo, hi = max(0.0, -lam_min), max(0.0, -lam_min) + float(np.linalg.norm(g)) / radius
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if float(np.linalg.norm(step(mid))) > radius:
                    lo = mid
                else:
                    hi = mid
                if hi - lo <= 1e-12 * max(hi, 1e-300):
                    break
            s_v = step(hi)
        s = V @ s_v
        pred = float(gv @ s_v + 0.5 * s_v @ (lam * s_v))
        if pred >= 0:
            return w, k, "no predicted decrease (rounding)"
        f_new, gl_new, gr_new, H_new = parts(w + s)
        actual = f_new - f
        if abs(actual) <= 1e-10 * abs(f):
            # the difference of two sums over every pair is at its rounding floor: the
            # trapezoid rule on the exact gradients measures the change instead
            actual = 0.5 * float((g + gl_new + gr_new) @ s)
        ratio = actual / pred
        snorm = float(np.linalg.norm(s))
        if ratio < 0.25:
            radius = snorm / 4.0
        elif ratio > 0.75 and snorm >= 0.99 * radius:
            radius = 2.0 * radius
        if ratio > 1e-4:
            w, f, g, H = w + s, f_new, gl_new + gr_new, H_new
        if radius <= 1e-15 * (1.0 + float(np.linalg.norm(w))):
            return w, k + 1, "trust-region radius collapsed"
    return w, max_iter, "maximum number of iterations reached (max_iter)"


class RankSVMClassifier(RankRCClassifier):
    r"""Kernel RankSVM (3.7): :class:`RankRCClassifier` with every training sample in the basis.

    .. math::

        \min_{\beta\in\mathbb R^m}\ \frac1{m_+m_-}\sum_{i:+}\sum_{j:-}
        \ell_\epsilon\big(K_{i\cdot}\beta-K_{j\cdot}\beta\big) + \frac\lambda2\beta^\top K\beta.

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation :math:`\lambda > 0`.
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma : float or {"mean-distance", "scale", "auto"}, default="mean-distance"
        ``"mean-distance"``: :math:`k = \exp(-\|u-v\|^2/\sigma^2)`, :math:`\sigma^2` the
        mean squared distance of the training data (ch. 5).
    degree : int, default=3
    coef0 : float, default=1.0
    loss : {"smoothed", "hinge"}, default="smoothed"
    smoothing : float in (0, 1), default=0.1
        Smoothing width :math:`\epsilon` of the smoothed hinge (``eps`` before this
        release, still accepted with a ``FutureWarning``).
    solver : str, default="rank-tr"
        Any solver of the program kind (``rank-tr``, ``rank-newton``, ``clarabel``,
        ``ecos``, ``scs``; the hinge loss needs a generic backend).
    solver_options : dict, optional

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    basis_ : ndarray of int
        Every training index.
    basis_vectors_ : ndarray of shape (n_samples, n_features)
    dual_coef_ : ndarray of shape (1, n_samples)
        :math:`\beta`.
    threshold_ : float
        Score threshold of ``predict`` (see the module docstring).
    program_, solution_, n_iter_
    model_ : dict

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_samples=80, n_features=4, weights=[0.85],
    ...                            random_state=0)  # 12 rare positives
    >>> clf = RankSVMClassifier(lam=0.01).fit(X, y)
    >>> clf.basis_.size  # every training sample is in the basis
    80
    >>> print(round(clf.score(X, y), 2))  # ROC AUC
    0.98
    """

    _parameter_constraints: dict = dict(_COMMON_CONSTRAINTS)

    def __init__(self, lam: float = 0.01, *, kernel: str = "rbf",
                 gamma: float | str = "mean-distance", degree: int = 3, coef0: float = 1.0,
                 loss: str = "smoothed", smoothing: float = 0.1, solver: str = "rank-tr",
                 solver_options: dict | None = None,
                 eps: float | str = DEPRECATED) -> None:
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.loss = loss
        self.smoothing = smoothing
        self.eps = eps
        self.solver = solver
        self.solver_options = solver_options

    def _basis_param(self) -> Any:
        return "all"


class RankRCRanker(_RankingMixin, BaseEstimator):
    r"""Multi-level RankRC (thesis (6.2)) for ordinal labels; ``score`` is MAUC.

    Pairs are all :math:`(i, j)` with :math:`y_i > y_j`, the loss is normalised by
    :math:`\sum_{r<s}m_rm_s` and the basis (``"rare"``) is every sample above the
    lowest level. ``decision_function`` / ``predict`` return the ranking score
    (higher = higher level); ``score`` is :func:`conicml.metrics.mauc` (strict >).

    Parameters
    ----------
    lam : float, default=0.01
        Regularisation :math:`\lambda > 0`.
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma : float or {"mean-distance", "scale", "auto"}, default="mean-distance"
        ``"mean-distance"``: :math:`k = \exp(-\|u-v\|^2/\sigma^2)`, :math:`\sigma^2` the
        mean squared distance of the training data (ch. 5).
    degree : int, default=3
    coef0 : float, default=1.0
    basis : {"rare", "random", "all"}, default="rare"
        ``"rare"``: every sample above the lowest level.
    loss : {"smoothed", "hinge"}, default="smoothed"
    smoothing : float in (0, 1), default=0.1
        Smoothing width :math:`\epsilon` of the smoothed hinge (``eps`` before this
        release, still accepted with a ``FutureWarning``).
    random_state : int, optional
        Seed of ``basis="random"``.
    solver : str, default="rank-tr"
        Any solver of the program kind (``rank-tr``, ``rank-newton``, ``clarabel``,
        ``ecos``, ``scs``; the hinge loss needs a generic backend).
    solver_options : dict, optional

    Attributes
    ----------
    levels_ : ndarray
        The distinct levels of ``y``, sorted.
    basis_ : ndarray of int
        Training indices of the basis.
    basis_vectors_ : ndarray of shape (n_basis, n_features)
    dual_coef_ : ndarray of shape (1, n_basis)
        :math:`\beta`.
    program_, solution_, n_iter_
    model_ : dict

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(-3, 3, 40)
    >>> X = (t + np.random.default_rng(0).normal(0, 0.3, 40))[:, None]
    >>> y = np.digitize(t, [-1, 1])  # levels 0 < 1 < 2
    >>> ranker = RankRCRanker(lam=0.01).fit(X, y)
    >>> ranker.levels_
    array([0, 1, 2])
    >>> print(round(ranker.score(X, y), 2))  # MAUC
    0.99
    """

    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "basis": [StrOptions({"rare", "random", "all"})],
        "random_state": ["random_state"],
    }

    def __init__(self, lam: float = 0.01, *, kernel: str = "rbf",
                 gamma: float | str = "mean-distance", degree: int = 3, coef0: float = 1.0,
                 basis: str = "rare", loss: str = "smoothed", smoothing: float = 0.1,
                 random_state: Any = None, solver: str = "rank-tr",
                 solver_options: dict | None = None,
                 eps: float | str = DEPRECATED) -> None:
        self.lam = lam
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

    def fit(self, X: Any, y: Any) -> RankRCRanker:
        """Fit on ordinal integer levels ``y`` (at least two distinct levels)."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        warn_unit_dependent(self, X, self._unit_dependence())
        if not np.all(y == np.round(y)):
            raise ProgramError("RankRCRanker needs integer ordinal levels in y")
        levels = np.unique(y)
        if levels.size < 2:
            # sklearn's check_fit2d_1sample expects "one class" (or "1 sample") here
            raise ProgramError(f"RankRCRanker needs at least two distinct levels in y; got one "
                               f"class (level {levels[0]:g}) in {y.shape[0]} sample(s)")
        self.levels_ = levels
        self._fit_program(X, y)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Ranking scores (higher = higher level)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._scores(X)

    predict = decision_function

    def score(self, X: Any, y: Any) -> float:
        """MAUC of the scores against the levels ``y`` (strict >)."""
        return mauc(np.asarray(y), self.decision_function(X))


def ranking_path(program: Program, lams: Iterable[float], *, solver: str = "rank-tr",
                 progress: bool | None = None, **options: Any) -> list[tuple[float, Solution]]:
    r"""Solve one ranking program along a λ path, from high λ to low, warm-started.

    :func:`conicml.solve_path` over
    :func:`conicml.formulations.ranking.with_lambda`: the kernel columns of ``program``
    are reused, every λ gets its own program and starts from the previous
    :math:`\beta` (the solver's registered warm start), as in the experiments (grid
    :math:`\log_2\lambda = -20:2:10`). Returns ``[(lam, solution), ...]`` in the order
    solved (decreasing λ). ``progress``: a bar over the λ values on standard error
    (default: when it is a terminal).

    Examples
    --------
    >>> import numpy as np
    >>> from conicml.formulations import ranking
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(40, 2)), np.r_[np.ones(8), -np.ones(32)]
    >>> program = ranking.rankrc(X, y, 1.0, kernel="linear")
    >>> path = ranking_path(program, [0.01, 1.0, 0.1])
    >>> [lam for lam, _ in path], [sol.status.value for _, sol in path]
    ([1.0, 0.1, 0.01], ['optimal', 'optimal', 'optimal'])
    """
    grid = sorted((ranking_formulation._check_lam(v) for v in lams), reverse=True)
    with progress_bar("lambda path", total=len(grid), enable=progress) as bar:
        def build(lam: float) -> Program:
            bar.update()
            return ranking_formulation.with_lambda(program, lam)

        solutions = solve_path(build, grid, solver, order="given", **options)
    return list(zip(grid, solutions))
