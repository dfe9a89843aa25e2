"""scikit-learn estimator of the cluster-based classifier CBC-SOCP.

Built on :mod:`conicml.formulations.cbc` (seed 003 ch. 3, 6, App. B).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.deprecation import DEPRECATED, renamed_param
from ..exceptions import ProgramError
from ..formulations import cbc
from ..moments import ClusterMoments
from ..solution import Status
from ._base import (
    L2_PENALTY,
    BinaryConicClassifier,
    kernel_unit_dependence,
    solve_or_raise,
    warn_if_constant_score,
)

__all__ = ["ClusterSOCPClassifier"]

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


def _total_variance(X: np.ndarray, chunk_size: int) -> float:
    r""":math:`\sum_k \operatorname{var}(X_{:,k})` (mean squared distance to the mean), chunked."""
    n = X.shape[0]
    mean = np.zeros(X.shape[1])
    for s in range(0, n, chunk_size):
        mean += X[s:s + chunk_size].sum(axis=0)
    mean /= n
    ss = 0.0
    for s in range(0, n, chunk_size):
        ss += float(((X[s:s + chunk_size] - mean) ** 2).sum())
    return ss / n


#: Defaults of the clustering (see ``ClusterSOCPClassifier``'s ``n_clusters``
#: and ``threshold``): points per cluster, fewest / most clusters per class, and
#: the BIRCH threshold relative to the data's spread.
AUTO_POINTS_PER_CLUSTER = 10
AUTO_MIN_CLUSTERS = 100
AUTO_MAX_CLUSTERS = 1000
AUTO_THRESHOLD = 0.1


def auto_n_clusters(n_class: int) -> int:
    """Clusters of a class of ``n_class`` points under the defaults (see the estimator)."""
    prop = min(int(np.ceil(n_class / AUTO_POINTS_PER_CLUSTER)), AUTO_MAX_CLUSTERS)
    return int(max(min(n_class, AUTO_MIN_CLUSTERS), prop))


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
    C : float, optional
        Cost of a unit of slack in (3.7). ``None`` (default): 1.0, unless ``W`` is
        given. ``C`` and ``W`` are exclusive (glossary): giving both is an error.
    W : float, optional
        If given, solve the W-form (B.1) with :math:`\|w\|_2 \le W` instead of
        (3.7) (no mapping between ``C`` and ``W`` exists; errata S003-P10).
    class_weight : dict {label: weight}, "balanced" or None, default="balanced"
        Per-class multipliers of the slack cost of every cluster
        (:func:`conicml.formulations.cbc.cbc`). ``"balanced"`` gives both classes the
        same total cost, counted in clusters. The default departs from the thesis's
        (3.7) (``None``) on purpose: on imbalanced data (e.g. abalone19, 1 % positives)
        (3.7) is solved by :math:`w = 0` for every ``C`` — all minority clusters on the
        wrong side cost less than any hyperplane — and the model is a constant.
    accuracy : float, default=0.5
        The thesis's :math:`\eta`: a lower bound on the probability that a
        cluster's points are classified correctly (eq. 3.2), in (0, 1). The
        default gives :math:`\kappa = 1` (Chebyshev): spheres of radius
        :math:`\sigma_j`; the thesis tunes :math:`\eta` (0.52 to 0.9 in Table 6.3).
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
        :math:`\kappa = \sqrt{\eta/(1-\eta)}` (any distribution) or
        :math:`\Phi^{-1}(\eta)` (Gaussian clusters; needs ``accuracy >= 0.5``).
    clustering : {"birch", "kmeans", "none"}, default="birch"
        Per-class clustering; ``"none"`` makes every point a cluster
        (:math:`\sigma = 0`: the soft-margin SVM).
    n_clusters : int, optional
        Clusters per class (BIRCH's global step, or k-means' k). ``None``:
        per class, proportional to its size with a minimum,
        :math:`k_c = \max(\min(n_c, 100), \min(\lceil n_c/10\rceil, 1000))`
        (a class of at most 100 points keeps every point as its own cluster).
        One number for both classes, or a threshold-only BIRCH, erases the
        minority class of an imbalanced set: its few clusters get radii as
        wide as the class, the spheres of the two classes overlap and the
        optimum of (3.7) is :math:`w = 0` (a constant score). This default
        keeps the minority's points apart; the program has at most about
        2 000 clusters.
    threshold : float, optional
        BIRCH radius threshold. ``None``: :math:`\min(0.5, 0.1\sqrt{\sum_k
        \operatorname{var}(X_{:,k})})`, scikit-learn's 0.5 or a tenth of the
        data's spread if smaller (0.5 alone is in the units of ``X``: on
        features of small spread it gives a handful of class-wide clusters
        whose spheres overlap).
    sigma : {"per-dimension", "trace"}, default="per-dimension"
        Cluster radius convention (errata S003-P7): ``"per-dimension"`` (ch. 6) is
        :math:`\sigma_j^2 = \frac1{m_j d}\sum\|x - \mu_j\|^2`, the variance of every
        projection :math:`w^\top x/\|w\|` under the spherical model
        :math:`\Sigma_j = \sigma_j^2 I` of the bound (3.2); ``"trace"`` is ch. 3's total
        variance (:math:`d` times larger, spheres :math:`\sqrt d` times wider: the
        bound for any covariance of that trace). The default departs from ch. 3 on
        purpose: in :math:`d = 20` dimensions the trace spheres of clusters of ~10
        points are about as wide as the distance between the classes, they overlap,
        and the optimum of (3.7) is :math:`w = 0` (a constant score) even on nearly
        separable data. The robust radii always use the per-dimension variance.
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
    eta : float
        Deprecated spelling of ``accuracy`` (``FutureWarning``; removed in the next
        release).

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
    radii_ : ndarray of shape (k,), k = ``n_clusters_``
        Input-space sphere radii :math:`r_j`.
    coef_ : ndarray of shape (1, n_features)
        :math:`w` (linear kernel only).
    dual_coef_ : ndarray of shape (1, k), k = ``n_clusters_``
        Coefficients of :math:`k(\mu_j, x)` in the decision function.
    intercept_ : ndarray of shape (1,)
        :math:`b` (package convention: :math:`f(x) = w^\top x + b`).
    program_, solution_, model_ : Program, Solution, dict
    n_iter_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> clf = ClusterSOCPClassifier(n_clusters=4).fit(X, y)  # 4 spheres per class
    >>> clf.n_clusters_, clf.cluster_centers_.shape
    (8, (8, 2))
    >>> clf.score(X, y)
    1.0
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "W": [Interval(Real, 0, None, closed="neither"), None],
        "accuracy": [Interval(Real, 0, 1, closed="neither")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "eta": [Interval(Real, 0, 1, closed="neither"), Hidden(StrOptions({DEPRECATED}))],
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
        C: float | None = None,
        *,
        W: float | None = None,
        class_weight: dict | str | None = "balanced",
        accuracy: float = 0.5,
        bound: str = "chebyshev",
        clustering: str = "birch",
        n_clusters: int | None = None,
        threshold: float | None = None,
        sigma: str = "per-dimension",
        kernel: str = "linear",
        gamma: float | str = "scale",
        robust: str | None = None,
        confidence: float = 0.9,
        form: str = "auto",
        solver: str = "clarabel",
        solver_options: dict | None = None,
        random_state: int | None = 0,
        chunk_size: int = 65536,
        eta: float | str = DEPRECATED,
    ) -> None:
        self.C = C
        self.W = W
        self.class_weight = class_weight
        self.accuracy = accuracy
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
        class_weight = self.class_weight
        if isinstance(class_weight, dict):  # user labels -> the program's +1 / -1
            class_weight = {(1.0 if label == self.classes_[1] else -1.0): value
                            for label, value in class_weight.items()}
        common = {"bound": self.bound, "kernel": self.kernel, "gamma": gamma,
                  "class_weight": class_weight,
                  "robust": self.robust, "confidence": self.confidence, "form": form}
        accuracy = renamed_param(self, "eta", "accuracy")
        if self.W is not None and self.C is not None:
            raise ValueError(
                f"give C or W, not both (got C={self.C!r}, W={self.W!r}): they are two "
                "parametrisations of the same learner with no map between them "
                "(errata S003-P10)")
        if self.W is not None:
            program = cbc.cbc_w(clusters, self.W, accuracy, **common)
        else:
            program = cbc.cbc(clusters, 1.0 if self.C is None else self.C, accuracy, **common)
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
        self._warn_if_constant()

    def _warn_if_constant(self) -> None:
        """Warn when the learnt score is constant on the clusters (w = 0)."""
        warn_if_constant_score(
            "ClusterSOCPClassifier", self._decision(self.cluster_centers_),
            float(self.intercept_[0]),
            "the cluster spheres of the two classes overlap so much that no hyperplane "
            "beats putting every cluster on one side (w = 0); use more, smaller clusters "
            "(n_clusters, threshold), a smaller accuracy, or clustering='none'",
            stacklevel=5)

    def _unit_dependence(self) -> str | None:
        return kernel_unit_dependence(self.kernel, L2_PENALTY)

    def _fit_signed(self, X: np.ndarray, y: np.ndarray) -> None:
        n_clusters = self.n_clusters
        if n_clusters is None and self.clustering != "none":
            n_clusters = {label: auto_n_clusters(int(np.sum(y == label)))
                          for label in (-1.0, 1.0)}
        threshold = self.threshold
        if threshold is None and self.clustering == "birch":
            spread = float(np.sqrt(_total_variance(X, self.chunk_size)))
            threshold = min(0.5, AUTO_THRESHOLD * spread) if spread > 0 else None
        clusters = ClusterMoments.from_data(
            X, y, clustering=self.clustering, n_clusters=n_clusters,
            threshold=threshold, sigma=self.sigma, random_state=self.random_state,
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
        self.__dict__.pop("feature_names_in_", None)  # moments carry no column names
        self._fit_clusters(clusters, self._gamma_value(None, clusters.dim))
        return self

    def _decision(self, X: np.ndarray) -> np.ndarray:
        check_is_fitted(self, "intercept_")
        if self.kernel == "linear":
            return X @ self.coef_[0] + self.intercept_[0]
        out = np.empty(X.shape[0])
        for s in range(0, X.shape[0], self.chunk_size):
            out[s:s + self.chunk_size] = cbc.cbc_decision_values(
                self.program_.data, self.model_, X[s:s + self.chunk_size])
        return out
