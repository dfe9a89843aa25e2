r"""scikit-learn estimators for ordinal regression: CBOR-SOCP (seed 003 ch. 4–5) and SVOR.

:class:`ClusterSOCPOrdinalRegressor` is the clustering-based CBOR-SOCP;
:class:`SVOrdinalRegressor` is its baseline, Chu & Keerthi's support vector
ordinal regression with explicit (seed 003 eq. 4.1) or implicit threshold
constraints, trained by ``smo-or`` (the thesis's "SMO-OR") or any backend.

Why a *classifier* mixin although the name says "regressor": ordinal regression
predicts one of finitely many ordered labels, and every scikit-learn tool
should treat its targets as classes — stratified cross-validation,
:func:`~sklearn.utils.multiclass.check_classification_targets`, and the
default ``score``, the accuracy, which is :math:`1 - \mathrm{MZE}` (the mean
zero-one error the thesis reports, Tables 4.1, 5.1). This is also what the
``mord`` package does. The order of the ranks is the sorted order of
``classes_`` (``np.unique(y)``): ``classes_[i]`` is rank :math:`i + 1`.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import registry
from .._utils.deprecation import DEPRECATED, renamed_param
from .._utils.threads import one_blas_thread
from ..exceptions import ProgramError
from ..formulations import ordinal
from ..formulations.svor_dual import svor_dual
from ..formulations.svor_implicit import svorim_dual
from ..kernels import make_kernel
from ..kinds import CBOR_DUAL, CBOR_PRIMAL
from ..moments import ClusterMoments
from ..solution import Status
from ._base import L2_PENALTY, kernel_unit_dependence, solve_or_raise, warn_unit_dependent

__all__ = ["ClusterSOCPOrdinalRegressor", "SVOrdinalRegressor"]

#: ``n_clusters=None``: each rank gets ceil(its sample count / s) clusters, with
#: s = max(SAMPLES_PER_CLUSTER, ceil(n / MAX_AUTO_CLUSTERS)): about this many samples per
#: cluster, and no more than about MAX_AUTO_CLUSTERS clusters (plus one per rank) in all,
#: which bounds the program (and the rbf Gram matrix of the centres) on large data.
SAMPLES_PER_CLUSTER = 5
MAX_AUTO_CLUSTERS = 1000



def _fit_ranks(est: Any, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``fit``'s input of an ordinal estimator: ``X`` as float64, ``classes_`` set,
    and the ranks 1..r of ``y`` in the sorted order of its (at least two) labels."""
    est._validate_params()
    X, y = validate_data(est, X, y, dtype=np.float64)
    check_classification_targets(y)
    classes, ranks = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ProgramError(
            f"{type(est).__name__} needs at least two ordered classes; got only one "
            f"class ({classes[0]!r})")
    est.classes_ = classes
    return X, ranks + 1

class ClusterSOCPOrdinalRegressor(ClassifierMixin, BaseEstimator):
    r"""Clustering-based ordinal regression (CBOR-SOCP) solved by any registered solver.

    Each rank's samples are clustered separately
    (:meth:`conicml.ClusterMoments.from_data`); every cluster becomes a sphere
    of radius :math:`\kappa\sigma_j` that must lie between the two thresholds of
    its rank with margin 1 under :math:`\|w\| \le W` (seed 003 eq. 4.3; rbf
    kernel: eq. 4.4). The latent score is :math:`g(x) = w^\top\phi(x)` and the
    prediction is rank :math:`1 + \#\{i : g(x) > \theta_i\}`, i.e. ``classes_[#{...}]``.

    Parameters
    ----------
    W : float, default=1.0
        Bound on :math:`\|w\|_2`; :math:`2/W` lower-bounds the margin.
    accuracy : float, default=0.5
        Probability level :math:`\eta` of the chance constraints (a lower bound on
        the probability of the right side), in (0, 1)
        (:math:`\kappa = \sqrt{\eta/(1-\eta)}`, 1 at the default).
    clustering : {"kmeans", "birch", "none"}, default="kmeans"
        How each rank is clustered; ``"none"`` makes every sample a cluster
        (:math:`\sigma = 0`), i.e. the baseline SVOR (4.2).
    n_clusters : int or None, default=None
        Clusters per rank (at most the rank's sample count). ``None``: a number
        proportional to the rank's size, :math:`\lceil m_i/s\rceil` for a rank of
        :math:`m_i` samples, :math:`s = \max(5, \lceil n/1000\rceil)` (about 5 samples
        per cluster, at most about 1000 clusters; see *Imbalanced ranks*).
    sigma : {"trace", "per-dimension"}, default="trace"
        Radius convention (errata S003-P7): ch. 3–4 use the total variance.
    kernel : {"linear", "rbf"}, default="linear"
    gamma : float or {"scale", "auto"}, default="scale"
        :math:`\zeta` of the rbf kernel, resolved on the training inputs.
    bound : {"chebyshev", "gaussian"}, default="chebyshev"
    solver : str, default="clarabel"
        Any solver registered for the program: the generic backends solve the
        primal (4.3)/(4.4); ``"cbor-smo"`` solves the dual (5.1).
    solver_options : dict, default=None
        Options for the solver (see :func:`conicml.solve`).
    random_state : int, RandomState instance or None, default=0
        Seed of the k-means clustering: an int is used as the seed; ``None``
        or a :class:`numpy.random.RandomState` draws the seed from
        :func:`sklearn.utils.check_random_state` (fresh randomness for
        ``None``).
    eta : float
        Deprecated spelling of ``accuracy`` (``FutureWarning``; removed in the next
        release).

    Notes
    -----
    **Imbalanced ranks.** The loss of (4.3) counts every cluster once, whatever
    its size. With the same number of clusters in every rank (an int
    ``n_clusters``, the thesis's setting on equal-frequency ranks) a rank of 5
    samples weighs as much as one of 500: the thresholds serve the small ranks,
    and the band of a large middle rank can close (:math:`\theta_{i-1} =
    \theta_i`, the rank is never predicted). The radii make this cheap: a
    cluster sphere wider than its band violates both of its constraints, and
    then :math:`\xi_j + \xi^*_j = 2d_j` whatever the band's width. On a
    latent-variable set with ranks of 0.5–44 % this gave a mean absolute error
    worse than always predicting the mode, for every ``W`` from 1 to 100. The
    default ``n_clusters=None`` gives each rank clusters in proportion to its
    size (about 5 samples each), so that each sample weighs about the same; a
    larger ``W`` than the default 1 often fits better (tune it).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The ordered labels; ``classes_[i]`` is rank ``i + 1``.
    clusters_ : ClusterMoments
        The cluster moments (labels are ranks 1..r).
    n_clusters_ : int
        Total number of clusters.
    cluster_centers_ : ndarray of shape (k, n_features), k = ``n_clusters_``
    thresholds_ : ndarray of shape (n_classes - 1,)
        Ordered thresholds :math:`\theta` on the latent score.
    intercept_ : ndarray of shape (n_classes - 1,)
        :math:`-\theta` (package convention: hyperplane :math:`i` is
        :math:`w^\top x + b_i = 0`).
    coef_ : ndarray of shape (n_features,)
        :math:`w` (linear kernel only).
    dual_coef_ : ndarray of shape (k,), k = ``n_clusters_``
        Expansion :math:`g(x) = \sum_j` ``dual_coef_[j]`` :math:`k(\mu_j, x)`
        (rbf kernel only).
    program_ : Program
    model_ : dict
        The decoded model (``program_.decode(solution_)``).
    solution_ : Solution
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(-3, 3, 30)[:, None]
    >>> y = np.digitize(X[:, 0], [-1, 1])  # three ordered levels 0 < 1 < 2
    >>> reg = ClusterSOCPOrdinalRegressor(n_clusters=3).fit(X, y)
    >>> reg.predict([[-2], [0], [2]])
    array([0, 1, 2])
    >>> reg.thresholds_.shape, reg.score(X, y)
    ((2,), 1.0)
    """

    _parameter_constraints: dict = {
        "W": [Interval(Real, 0, None, closed="neither")],
        "accuracy": [Interval(Real, 0, 1, closed="neither")],
        "eta": [Interval(Real, 0, 1, closed="neither"), Hidden(StrOptions({DEPRECATED}))],
        "clustering": [StrOptions({"kmeans", "birch", "none"})],
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "sigma": [StrOptions({"trace", "per-dimension"})],
        "kernel": [StrOptions({"linear", "rbf"})],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "bound": [StrOptions({"chebyshev", "gaussian"})],
        "solver": [str],
        "solver_options": [dict, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        W: float = 1.0,
        accuracy: float = 0.5,
        *,
        clustering: str = "kmeans",
        n_clusters: int | None = None,
        sigma: str = "trace",
        kernel: str = "linear",
        gamma: float | str = "scale",
        bound: str = "chebyshev",
        solver: str = "clarabel",
        solver_options: dict | None = None,
        random_state: int | None = 0,
        eta: float | str = DEPRECATED,
    ) -> None:
        self.W = W
        self.accuracy = accuracy
        self.eta = eta
        self.clustering = clustering
        self.n_clusters = n_clusters
        self.sigma = sigma
        self.kernel = kernel
        self.gamma = gamma
        self.bound = bound
        self.solver = solver
        self.solver_options = solver_options
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> ClusterSOCPOrdinalRegressor:
        """Cluster each rank, then solve CBOR-SOCP.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Ordered labels (at least two distinct values); their sorted order
            defines the ranks.

        Returns
        -------
        self
        """
        X, ranks = _fit_ranks(self, X, y)
        warn_unit_dependent(self, X, kernel_unit_dependence(self.kernel, L2_PENALTY))
        if isinstance(self.random_state, (int, np.integer)):
            seed = int(self.random_state)
        else:  # None or a RandomState: draw the k-means seed from it
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        n_clusters = self.n_clusters
        if n_clusters is None and self.clustering != "none":
            # (4.3) weighs clusters, not samples: clusters of about SAMPLES_PER_CLUSTER
            # samples in every rank make each sample weigh about the same
            size = max(SAMPLES_PER_CLUSTER, -(-ranks.size // MAX_AUTO_CLUSTERS))
            n_clusters = {rank: -(-int(np.count_nonzero(ranks == rank)) // size)
                          for rank in range(1, self.classes_.size + 1)}
        clusters = ClusterMoments.from_data(
            X, ranks, clustering=self.clustering, n_clusters=n_clusters,
            sigma=self.sigma, random_state=seed)
        gamma = self.gamma
        if self.kernel == "rbf":  # resolve "scale"/"auto" on the samples, not the centres
            gamma = make_kernel("rbf", X, gamma=self.gamma).gamma
        solver = self.solver.lower()
        # the form follows the solver (a dual-only solver such as cbor-smo gets the
        # dual); an unknown or unsuitable solver is reported by solve()
        entry = registry.get(solver)
        dual_only = entry.accepts(CBOR_DUAL) and not entry.accepts(CBOR_PRIMAL)
        form = "dual" if dual_only else "primal"
        program = ordinal.cbor(
            clusters, W=self.W, accuracy=renamed_param(self, "eta", "accuracy"),
            kernel=self.kernel, gamma=gamma,
            bound=self.bound, form=form)
        hints = {Status.USER_LIMIT: "raise max_iter / time_limit in solver_options; with "
                 "solver='cbor-smo' a stall means the dual optimum has rho = 0 (the ranks "
                 "are separated with margin 2/W, or W is too small): use solver='clarabel'"}
        solution = solve_or_raise(program, solver, self.solver_options, hints)
        model = program.decode(solution)
        self.model_ = model
        self.clusters_ = clusters
        self.n_clusters_ = clusters.n_clusters
        self.cluster_centers_ = clusters.means
        self.thresholds_ = model["thresholds"]
        self.intercept_ = model["b"]
        self.program_ = program
        self.solution_ = solution
        self.n_iter_ = solution.iterations
        if self.kernel == "linear":
            self.coef_ = model["w"]
        else:
            self.dual_coef_ = model["dual"]["dual_coef"]
        return self

    def latent_score(self, X: Any) -> np.ndarray:
        r"""The latent score :math:`g(x) = w^\top\phi(x)` that the thresholds cut.

        Not named ``decision_function``: scikit-learn expects that to be
        per-class scores whose argmax is the prediction.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "linear":
            return X @ self.coef_
        kern = self.program_.data["kernel"]
        return kern(X, self.cluster_centers_) @ self.dual_coef_

    def predict(self, X: Any) -> np.ndarray:
        r"""Labels ``classes_[#{i : g(x) > theta_i}]`` (rank :math:`1 + \#\{\cdot\}`; S003-P13)."""
        g = self.latent_score(X)
        count = (g[:, None] > self.thresholds_[None, :]).sum(axis=1)
        return self.classes_[count]


class SVOrdinalRegressor(ClassifierMixin, BaseEstimator):
    r"""Support vector ordinal regression (Chu & Keerthi 2005, 2007), solved by ``smo-or``.

    A latent score :math:`g(x) = w^\top\phi(x)` and ordered thresholds
    :math:`\theta_1 \le \dots \le \theta_{r-1}`; the prediction is rank
    :math:`1 + \#\{j : g(x) > \theta_j\}`, i.e. ``classes_[#{...}]``.

    * ``variant="explicit"`` (seed 003 eq. 4.1, the thesis's SMO-OR baseline):
      a point of rank :math:`i` must lie between :math:`\theta_{i-1} + 1` and
      :math:`\theta_i - 1`,

      .. math::

          \min \tfrac12\|w\|^2 + C\sum_{i,j}(\xi^j_i + \xi^{*j}_i)\ \text{s.t.}\
          w^\top\phi(x^j_i) - \theta_i \le -1 + \xi^j_i,\
          w^\top\phi(x^j_i) - \theta_{i-1} \ge 1 - \xi^{*j}_i,\
          \theta_{i-1} \le \theta_i;

    * ``variant="implicit"`` (Chu & Keerthi 2005, 2007): every threshold is
      constrained by every point (slack at each threshold on the wrong side),
      the order of the thresholds holds at the optimum without being imposed.

    Both are trained in the dual
    (:func:`conicml.formulations.svor_dual.svor_dual`,
    :func:`conicml.formulations.svor_implicit.svorim_dual`).

    Parameters
    ----------
    C : float, default=1.0
        Cost of a unit of slack, > 0.
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
        Width :math:`\zeta` of the rbf kernel (scale of poly), resolved on the
        training inputs as in scikit-learn's SVC.
    degree : int, default=3
    coef0 : float, default=0.0
    variant : {"explicit", "implicit"}, default="explicit"
    solver : str, default="smo-or"
        Any solver registered for the dual kind (``"smo-or"``, ``"clarabel"``,
        ``"ecos"``, ...).
    solver_options : dict, default=None
        Options for the solver (for ``smo-or``: ``tol``, ``max_iter``,
        ``time_limit``, ``shrinking``, ``cache_size``, ...).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The ordered labels; ``classes_[i]`` is rank ``i + 1``.
    thresholds_ : ndarray of shape (n_classes - 1,)
        Ordered thresholds :math:`\theta` (the program's midpoint rule).
    intercept_ : ndarray of shape (n_classes - 1,)
        :math:`-\theta` (hyperplane :math:`j` is :math:`w^\top x + b_j = 0`).
    coef_ : ndarray of shape (n_features,)
        :math:`w` (linear kernel only).
    support_ : ndarray of shape (n_SV,)
        Indices of the training points with a non-zero expansion coefficient.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (n_SV,)
        :math:`g(x) = \sum` ``dual_coef_[k]`` :math:`k(` ``support_vectors_[k]``
        :math:`, x)`.
    program_ : Program
    solution_ : Solution
    model_ : dict
        The decoded model, ``program_.decode(solution_)``.
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(-3, 3, 30)[:, None]
    >>> y = np.digitize(X[:, 0], [-1, 1])  # three ordered levels 0 < 1 < 2
    >>> reg = SVOrdinalRegressor(kernel="linear").fit(X, y)
    >>> reg.predict([[-2], [0], [2]])
    array([0, 1, 2])
    >>> reg.thresholds_.shape, reg.score(X, y)
    ((2,), 1.0)
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"linear", "rbf", "poly"})],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "variant": [StrOptions({"explicit", "implicit"})],
        "solver": [str],
        "solver_options": [dict, None],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        kernel: str = "rbf",
        gamma: float | str = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        variant: str = "explicit",
        solver: str = "smo-or",
        solver_options: dict | None = None,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.variant = variant
        self.solver = solver
        self.solver_options = solver_options

    def fit(self, X: Any, y: Any) -> SVOrdinalRegressor:
        """Solve the SVOR dual of the chosen variant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Ordered labels (at least two distinct values); their sorted order
            defines the ranks.

        Returns
        -------
        self
        """
        X, ranks = _fit_ranks(self, X, y)
        warn_unit_dependent(self, X, kernel_unit_dependence(self.kernel, L2_PENALTY))
        build = svor_dual if self.variant == "explicit" else svorim_dual
        program = build(X, ranks, C=self.C, kernel=self.kernel, gamma=self.gamma,
                        degree=self.degree, coef0=self.coef0)
        hints = {Status.USER_LIMIT: "raise max_iter / time_limit in solver_options, or "
                 "lower C"}
        # one BLAS thread: the solver's kernel columns, the certificate's and decode's
        # kernel products are memory-bound blocks that a thread pool only slows down
        # when other processes hold the cores
        with one_blas_thread():
            solution = solve_or_raise(program, self.solver.lower(), self.solver_options,
                                      hints)
            return self._store(X, program, solution)

    def _store(self, X: np.ndarray, program: Any, solution: Any) -> SVOrdinalRegressor:
        """Keep a solved program as the fitted model (shared with
        :class:`SVOrdinalRegressorCV`)."""
        model = program.decode(solution)
        coef = np.asarray(model["dual"]["dual_coef"], dtype=float)
        self.support_ = np.flatnonzero(coef)
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = coef[self.support_]
        self.thresholds_ = np.asarray(model["thresholds"], dtype=float)
        self.intercept_ = -self.thresholds_
        if self.kernel == "linear":
            self.coef_ = np.asarray(model["w"], dtype=float).reshape(-1)
        self.program_ = program
        self.solution_ = solution
        self.model_ = model
        self.n_iter_ = solution.iterations
        return self

    def latent_score(self, X: Any) -> np.ndarray:
        r"""The latent score :math:`g(x) = w^\top\phi(x)` that the thresholds cut."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "linear":
            return X @ self.coef_
        if self.support_.size == 0:
            return np.zeros(X.shape[0])
        return self.program_.data["kernel"](X, self.support_vectors_) @ self.dual_coef_

    def predict(self, X: Any) -> np.ndarray:
        r"""Labels ``classes_[#{j : g(x) > theta_j}]`` (rank :math:`1 + \#\{\cdot\}`)."""
        g = self.latent_score(X)
        count = (g[:, None] > self.thresholds_[None, :]).sum(axis=1)
        return self.classes_[count]
