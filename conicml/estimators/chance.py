"""scikit-learn estimators for the chance-constrained family (:mod:`conicml.formulations.chance`).

Sections: the specified-rates classifier (:class:`ChanceConstrainedClassifier`);
further estimators of the family follow in their own sections.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import NotFittedStatusError, ProgramError, SolverError
from ..formulations import chance as chance_formulation
from ..kernels import KERNELS
from ..moments import ClassMoments, ClusterMoments
from ..registry import available
from ..solution import Status
from ._base import BinaryConicClassifier, solve_or_raise

__all__ = ["ChanceConstrainedClassifier"]


# =====================================================================================
# Section 1: ChanceConstrainedClassifier (specified FN / FP rates, seed 003 ch. 2)
# =====================================================================================


class ChanceConstrainedClassifier(BinaryConicClassifier):
    r"""Maximum-margin classifier with specified false-negative / false-positive rates.

    Saketha Nath's chance-constrained classifier (thesis ch. 2, eqs.
    2.1–2.5): the hyperplane of largest margin such that, for every
    distribution with the classes' estimated means and covariances, a point
    of the positive class (``classes_[1]``) is misclassified with
    probability at most ``eta_pos`` and a point of the negative class with
    probability at most ``eta_neg``. The program is the SOCP of
    :func:`conicml.formulations.chance.specified_rates`; its dual is the
    distance between two ellipsoids, which the specialized ``lin-han``
    solver computes directly. The decision function is
    :math:`f(x) = w^\top x + b` (linear) or :math:`\sum_j s_j k(x_j, x) + b`
    (kernel), and ``predict`` returns ``classes_[1]`` where :math:`f(x) \ge 0`.

    Parameters
    ----------
    eta_pos : float, default=1.0
        Largest error rate on the positive class ``classes_[1]`` (false
        negatives), in :math:`(0, 1]`; :math:`\kappa_+ = \sqrt{(1-\eta)/\eta}`.
        The default 1.0 imposes no rate (:math:`\kappa = 0`): the program
        then only separates the two class means with the largest margin, and
        is feasible whenever the means differ. Set the rates you need (the
        thesis's experiments use 0.1–0.9).
    eta_neg : float, default=1.0
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
    epsilon : float, default=0.0
        Ridge added to the covariances (:math:`\Sigma + \epsilon I`); the
        ``lin-han`` solver needs ``epsilon > 0`` with kernels (e.g. ``1e-3``).
    form : {"primal", "dual"}, default="primal"
        Solve the SOCP (2.5) or the ellipsoid-distance dual (2.13).
    solver : str, default="clarabel"
        Any solver registered for the program kind (``"clarabel"``,
        ``"ecos"``, ``"scs"``, ``"lin-han"``).
    solver_options : dict, default=None
        Options for the solver (see :func:`conicml.solve`).

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
    rates: raise ``eta_pos`` / ``eta_neg`` or use a kernel. Sample weights
    are not supported (the moments are unweighted).
    """

    _parameter_constraints: dict = {
        "eta_pos": [Interval(Real, 0, 1, closed="right")],
        "eta_neg": [Interval(Real, 0, 1, closed="right")],
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "bound": [StrOptions({"chebyshev", "gaussian"})],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "form": [StrOptions({"primal", "dual"})],
        "solver": [str],
        "solver_options": [dict, None],
    }

    def __init__(
        self,
        eta_pos: float = 1.0,
        eta_neg: float = 1.0,
        *,
        kernel: str = "linear",
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        bound: str = "chebyshev",
        epsilon: float = 0.0,
        form: str = "primal",
        solver: str = "clarabel",
        solver_options: dict | None = None,
    ) -> None:
        self.eta_pos = eta_pos
        self.eta_neg = eta_neg
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.bound = bound
        self.epsilon = epsilon
        self.form = form
        self.solver = solver
        self.solver_options = solver_options

    def _program(self, data):
        program = chance_formulation.specified_rates(
            data, self.eta_pos, self.eta_neg, kernel=self.kernel, bound=self.bound,
            gamma=self.gamma, degree=self.degree, coef0=self.coef0, epsilon=self.epsilon,
            form=self.form,
        )
        if self.solver.lower() not in available(program.kind):
            raise ValueError(
                f"solver={self.solver!r} cannot solve {program.kind!r} programs; "
                f"use one of {available(program.kind)}"
            )
        return program

    def _solve(self, program) -> None:
        hint = (
            f"no hyperplane meets eta_pos={self.eta_pos:g} and eta_neg={self.eta_neg:g}: the "
            "class ellipsoids overlap; raise eta_pos or eta_neg (larger allowed error rates)"
            + (" or use a non-linear kernel" if self.kernel == "linear" else "")
        )
        hints = {Status.INFEASIBLE: hint, Status.INFEASIBLE_INACCURATE: hint,
                 Status.UNBOUNDED: hint, Status.UNBOUNDED_INACCURATE: hint}
        solution = solve_or_raise(program, self.solver, self.solver_options, hints)
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

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        program = self._program((X, y))
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
        self._solve(self._program(moments))
        return self

    def _decision(self, X: np.ndarray) -> np.ndarray:
        check_is_fitted(self, "intercept_")
        if self.kernel == "linear":
            return X @ self.coef_[0] + self.intercept_[0]
        return chance_formulation.rates_decision_values(self.program_.data, self.model_, X)


# ====================== end of section 1 (ChanceConstrainedClassifier) ======================


# =====================================================================================
# Section 2: ClusterSOCPClassifier (cluster-based CBC-SOCP, seed 003 ch. 3, ch. 6, App. B)
# Owner: the cbc helper.
# =====================================================================================

__all__ += ["ClusterSOCPClassifier"]

_CBC_HINT = {
    Status.UNBOUNDED: "the spheres cannot be separated; use a finite C",
}


def _chunked_variance(X: np.ndarray, chunk_size: int) -> float:
    """``X.var()`` over all entries without a temporary copy of ``X``."""
    n = X.shape[0]
    total = 0.0
    for s in range(0, n, chunk_size):
        total += float(X[s:s + chunk_size].sum())
    mean = total / X.size
    ss = 0.0
    for s in range(0, n, chunk_size):
        ss += float(((X[s:s + chunk_size] - mean) ** 2).sum())
    return ss / X.size


class ClusterSOCPClassifier(BinaryConicClassifier):
    r"""Scalable large-margin classifier on cluster moments (CBC-SOCP, seed 003 ch. 3).

    Each class is clustered on its own (:meth:`conicml.ClusterMoments.from_data`:
    BIRCH by default, streamed in row chunks so the data are never copied), every
    cluster :math:`j` becomes a sphere :math:`B(\mu_j, r_j)` with
    :math:`r_j = \kappa\sigma_j` (or a robust radius, ch. 6), and the spheres are
    separated with maximum margin by the SOCP (3.7) (``C``) or (B.1) (``W``),
    :func:`conicml.formulations.chance.cbc` / :func:`~conicml.formulations.chance.cbc_w`.
    The program's size depends on the number of clusters, not of points.

    Parameters
    ----------
    C : float, default=1.0
        Cost of a unit of slack in (3.7); ignored when ``W`` is given.
    W : float, optional
        If given, solve the W-form (B.1) with :math:`\|w\|_2 \le W` instead of
        (3.7) (no mapping between ``C`` and ``W`` exists; note P10).
    eta : float, default=0.5
        Lower bound on the probability that a cluster's points are classified
        correctly (eq. 3.2), in (0, 1). The default gives :math:`\kappa = 1`
        (Chebyshev): spheres of radius :math:`\sigma_j`; the thesis tunes
        :math:`\eta` (0.52 to 0.9 in Table 6.3).
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        :math:`\kappa = \sqrt{\eta/(1-\eta)}` (any distribution) or
        :math:`\Phi^{-1}(\eta)` (Gaussian clusters; needs ``eta >= 0.5``).
    clustering : {"birch", "kmeans", "none"}, default="birch"
        Per-class clustering; ``"none"`` makes every point a cluster
        (:math:`\sigma = 0`: the soft-margin SVM).
    n_clusters : int, optional
        Clusters per class (BIRCH's global step, or k-means' k; required for
        ``"kmeans"``).
    threshold : float, optional
        BIRCH radius threshold (default 0.5, scikit-learn's).
    sigma : {"trace", "per-dimension"}, default="trace"
        Cluster radius convention (note P7): ``"trace"`` is ch. 3's
        :math:`\sigma_j^2 = \frac1{m_j}\sum\|x - \mu_j\|^2` (the total
        variance, what BIRCH's features give); ``"per-dimension"`` divides it
        by the dimension (ch. 6; spheres :math:`\sqrt d` times smaller). The
        robust radii always use the per-dimension variance.
    kernel : {"linear", "rbf"}, default="linear"
        ``"rbf"`` maps the cluster means only, with the sphere radius
        :math:`\sqrt{2(1 - e^{-\gamma r_j^2})}` (App. B).
    gamma : float or {"scale", "auto"}, default="scale"
        Width of the rbf kernel, as in :class:`sklearn.svm.SVC` (``"scale"`` is
        resolved against the training data).
    robust : {None, "R1", "R2"}, default=None
        Robust radii of ch. 6 (RCBC1 (6.8) or RCBC2 (6.21)).
    confidence : float, default=0.9
        Confidence :math:`c = 1 - \delta` of the robust sets.
    form : {"auto", "primal", "dual"}, default="auto"
        Program form; ``"auto"`` is ``"dual"`` for ``solver="cbc-smo"`` and
        ``"primal"`` otherwise.
    solver : str, default="clarabel"
        Registry name; ``"cbc-smo"`` is the specialized CBC-Iter solver.
    solver_options : dict, optional
        Options of the solver (e.g. ``{"tol": 1e-8}`` for ``cbc-smo``).
    random_state : int, optional, default=0
        Seed of k-means.
    chunk_size : int, default=65536
        Rows read at once while clustering.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    clusters_ : ClusterMoments
        The cluster moments the model was fitted on (labels +1/-1, +1 =
        ``classes_[1]``).
    n_clusters_ : int
        Total number of clusters (both classes).
    cluster_centers_, cluster_sigmas_, cluster_counts_, cluster_labels_ : ndarray
        The same moments as arrays.
    radii_ : ndarray of shape (n_clusters_,)
        Input-space sphere radii :math:`r_j`.
    coef_ : ndarray of shape (1, n_features)
        :math:`w` (linear kernel only).
    dual_coef_ : ndarray of shape (1, n_clusters_)
        Coefficients of :math:`k(\mu_j, x)` in the decision function.
    intercept_ : ndarray of shape (1,)
        :math:`b` (package convention: :math:`f(x) = w^\top x + b`).
    program_, solution_, model_ : Program, Solution, dict
    n_iter_ : int
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "W": [Interval(Real, 0, None, closed="neither"), None],
        "eta": [Interval(Real, 0, 1, closed="neither")],
        "bound": [StrOptions({"chebyshev", "gaussian"})],
        "clustering": [StrOptions({"birch", "kmeans", "none"})],
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "threshold": [Interval(Real, 0, None, closed="neither"), None],
        "sigma": [StrOptions({"trace", "per-dimension"})],
        "kernel": [StrOptions({"linear", "rbf"})],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "robust": [StrOptions({"R1", "R2"}), None],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "form": [StrOptions({"auto", "primal", "dual"})],
        "solver": [str],
        "solver_options": [dict, None],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        W: float | None = None,
        eta: float = 0.5,
        bound: str = "chebyshev",
        clustering: str = "birch",
        n_clusters: int | None = None,
        threshold: float | None = None,
        sigma: str = "trace",
        kernel: str = "linear",
        gamma: float | str = "scale",
        robust: str | None = None,
        confidence: float = 0.9,
        form: str = "auto",
        solver: str = "clarabel",
        solver_options: dict | None = None,
        random_state: int | None = 0,
        chunk_size: int = 65536,
    ) -> None:
        self.C = C
        self.W = W
        self.eta = eta
        self.bound = bound
        self.clustering = clustering
        self.n_clusters = n_clusters
        self.threshold = threshold
        self.sigma = sigma
        self.kernel = kernel
        self.gamma = gamma
        self.robust = robust
        self.confidence = confidence
        self.form = form
        self.solver = solver
        self.solver_options = solver_options
        self.random_state = random_state
        self.chunk_size = chunk_size

    def _gamma_value(self, X: np.ndarray | None, dim: int) -> float | str:
        if self.kernel != "rbf" or not isinstance(self.gamma, str):
            return self.gamma
        if self.gamma == "auto":
            return 1.0 / dim
        if X is None:  # fitted from moments: resolve against the cluster means
            return "scale"
        var = _chunked_variance(X, self.chunk_size)
        return 1.0 / (dim * var) if var > 0 else 1.0

    def _fit_clusters(self, clusters: ClusterMoments, gamma: float | str) -> None:
        form = self.form
        if form == "auto":
            form = "dual" if self.solver.lower() == "cbc-smo" else "primal"
        common = {"bound": self.bound, "kernel": self.kernel, "gamma": gamma,
                  "robust": self.robust, "confidence": self.confidence, "form": form}
        if self.W is not None:
            program = chance_formulation.cbc_w(clusters, self.W, self.eta, **common)
        else:
            program = chance_formulation.cbc(clusters, self.C, self.eta, **common)
        if self.solver.lower() not in available(program.kind):
            raise ValueError(
                f"solver={self.solver!r} cannot solve {program.kind!r} programs; use one of "
                f"{available(program.kind)} (or change form=)"
            )
        solution = solve_or_raise(program, self.solver, self.solver_options, _CBC_HINT)
        model = program.decode(solution)
        self.clusters_ = clusters
        self.n_clusters_ = clusters.n_clusters
        self.cluster_centers_ = clusters.means
        self.cluster_sigmas_ = clusters.sigmas
        self.cluster_counts_ = clusters.counts
        self.cluster_labels_ = clusters.labels
        self.radii_ = program.data["input_radii"]
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = solution.iterations
        self.intercept_ = np.array([model["b"]])
        self.dual_coef_ = np.asarray(model["dual_coef"])[None, :]
        if "w" in model:
            self.coef_ = np.asarray(model["w"])[None, :]

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        clusters = ClusterMoments.from_data(
            X, y, clustering=self.clustering, n_clusters=self.n_clusters,
            threshold=self.threshold, sigma=self.sigma, random_state=self.random_state,
            chunk_size=self.chunk_size,
        )
        if np.unique(clusters.labels).size < 2:
            raise ProgramError("both classes must form at least one cluster")
        self._fit_clusters(clusters, self._gamma_value(X, X.shape[1]))

    def fit_clusters(self, clusters: ClusterMoments) -> ClusterSOCPClassifier:
        """Fit from cluster moments instead of data (e.g. a distributed reduction).

        Parameters
        ----------
        clusters : ClusterMoments
            Labels +1/-1; ``classes_`` becomes ``[-1, 1]``.

        Returns
        -------
        self
        """
        self._validate_params()
        if not isinstance(clusters, ClusterMoments):
            raise ProgramError(f"expected a ClusterMoments, got {type(clusters).__name__}")
        self.classes_ = np.array([-1, 1])
        self.n_features_in_ = clusters.dim
        self._fit_clusters(clusters, self._gamma_value(None, clusters.dim))
        return self

    def _decision(self, X: np.ndarray) -> np.ndarray:
        check_is_fitted(self, "intercept_")
        if self.kernel == "linear":
            return X @ self.coef_[0] + self.intercept_[0]
        out = np.empty(X.shape[0])
        for s in range(0, X.shape[0], self.chunk_size):
            out[s:s + self.chunk_size] = chance_formulation.cbc_decision_values(
                self.program_.data, self.model_, X[s:s + self.chunk_size])
        return out


# ===================== end of section 2 (ClusterSOCPClassifier) =====================
