r"""Rare-class ranking: RankSVM and RankRC as conic programs (seed 000 ch. 3 and 6; seed 002).

The score has no bias (ranking is shift invariant) and is a kernel expansion
over a *basis* :math:`\mathcal R` of training samples,
:math:`f(x) = \sum_{r\in\mathcal R}\beta_r k(x_r, x)`. With the pairs
:math:`\{(i,j): \ell_i > \ell_j\}` of the ordinal levels and
:math:`N = \sum_{r<s} m_r m_s` of them, every learner of the family is

.. math::

    \min_{\beta\in\mathbb R^{|\mathcal R|}}\ \frac1N\sum_{(i,j):\,\ell_i>\ell_j}
    \ell\big(K_{i\mathcal R}\beta - K_{j\mathcal R}\beta\big)
    + \frac\lambda2\beta^\top K_{\mathcal R\mathcal R}\beta

* biclass RankSVM, :math:`\mathcal R` = all samples: (3.7) (linear form (3.4));
* RankRC, :math:`\mathcal R` = the rare (positive) samples: (3.14) hinge, (3.15) smoothed;
* RANK-RND, :math:`\mathcal R` = :math:`m_+` random samples: the subset problem (4.31);
* multi-level RankSVM / RankRC for more than two integer levels: (6.1)/(6.2),
  with the rare basis = every sample above the lowest level.

The losses, the generic route, the jitter, the certificate and the Gaussian width are
set out in the Notes of :func:`rankrc`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils.deprecation import renamed_keywords
from .._utils.validation import check_matrix
from ..contracts.ranking import RankingData
from ..contracts.ranking_ops import (
    count_pairs,
    gap_bound,
    linearize,
    pair_matrix,
    ranking_objective,
)
from ..exceptions import ProgramError
from ..kernels import Kernel, make_kernel
from ..kinds import RANK_HINGE, RANK_SMOOTHED
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution

__all__ = [
    "MAX_GENERIC_PAIRS",
    "linearize",
    "mean_distance_gamma",
    "rankrc",
    "ranksvm",
    "scores",
]

#: Relative jitter added to K_RR (times its mean diagonal), part of the program's data.
KRR_JITTER = 1e-10
#: Largest pair count N for which the generic (cvxpy) route is built.
MAX_GENERIC_PAIRS = 200_000
LOSSES = ("hinge", "smoothed")
BASES = ("rare", "random", "all")


def mean_distance_gamma(X: np.ndarray) -> float:
    r"""``1/σ²`` with :math:`\sigma^2 = \frac1{m^2}\sum_{i,j}\|x_i-x_j\|^2` (ch. 5 rule).

    Returns 1.0 when all rows are equal (σ² = 0).
    """
    sigma2 = 2.0 * float(np.sum(np.var(X, axis=0)))
    return 1.0 / sigma2 if sigma2 > 0 else 1.0


def _levels(y: Any, n: int) -> np.ndarray:
    try:
        arr = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"y must hold numeric labels or levels: {exc}") from exc
    if arr.ndim != 1:
        raise ProgramError(f"y must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ProgramError(f"shape mismatch: X has {n} rows but y has {arr.shape[0]} labels")
    if not np.all(np.isfinite(arr)):
        raise ProgramError("y contains NaN or infinite values")
    values = np.unique(arr)
    if values.size == 2 and set(values.tolist()) == {-1.0, 1.0}:
        return (arr > 0).astype(np.int64)
    if values.size < 2:
        if set(values.tolist()) <= {-1.0, 1.0}:
            which = "m_- = 0 (no negative samples)" if values[0] > 0 else \
                "m_+ = 0 (no positive, rare samples)"
            raise ProgramError(f"y has a single class: {which}; both +1 and -1 are needed")
        raise ProgramError(f"y has a single level ({values[0]:g}); ranking needs >= 2 levels")
    if not np.all(values == np.round(values)):
        raise ProgramError(
            "y must be +1/-1 labels or integer ordinal levels, got non-integer values "
            f"{values[values != np.round(values)][:5].tolist()}"
        )
    return np.searchsorted(values, arr).astype(np.int64)


def _basis(basis: Any, levels: np.ndarray, random_state: Any) -> tuple[np.ndarray, str]:
    m = levels.size
    rare = np.flatnonzero(levels > 0)
    if isinstance(basis, str):
        if basis == "rare":
            return rare, "rare"
        if basis == "all":
            return np.arange(m), "all"
        if basis == "random":
            rng = np.random.default_rng(random_state)
            return np.sort(rng.choice(m, size=rare.size, replace=False)), "random"
        raise ProgramError(
            f"basis must be 'rare', 'random', 'all' or an index array, got {basis!r}")
    try:
        idx = np.asarray(basis)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"basis must be an index array: {exc}") from exc
    if idx.ndim != 1 or idx.size == 0:
        raise ProgramError(f"basis must be a non-empty 1-D index array, got shape {idx.shape}")
    if not np.issubdtype(idx.dtype, np.integer):
        raise ProgramError(f"basis must hold integer indices, got dtype {idx.dtype}")
    if idx.min() < 0 or idx.max() >= m:
        raise ProgramError(f"basis indices must lie in [0, {m - 1}], got range "
                           f"[{idx.min()}, {idx.max()}]")
    idx = np.unique(idx)
    return idx, "custom"


def _check_lam(lam: Any) -> float:
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)):
        raise ProgramError(f"lam must be a positive real number, got {lam!r}")
    lam = float(lam)
    if not (math.isfinite(lam) and lam > 0):
        raise ProgramError(f"lam must be positive and finite, got {lam!r}")
    return lam


def _check_loss_eps(loss: Any, eps: Any) -> float:
    if loss not in LOSSES:
        raise ProgramError(f"loss must be 'hinge' or 'smoothed', got {loss!r}")
    if loss == "hinge":
        return 0.0
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise ProgramError(f"smoothing must be a real number in (0, 1), got {eps!r}")
    eps = float(eps)
    if not (0.0 < eps < 1.0):
        raise ProgramError(f"smoothing must lie in the open interval (0, 1), got {eps!r}")
    return eps


def _make_kernel(kernel: str, X: np.ndarray, gamma: Any, degree: int, coef0: float) -> Kernel:
    if isinstance(gamma, str) and gamma == "mean-distance":
        gamma = mean_distance_gamma(X) if kernel != "precomputed" else 1.0
    return make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)


def _prepare(X, y, lam, *, kernel, gamma, degree, coef0, basis, loss, eps,
             random_state, method) -> dict:
    X = check_matrix(X)
    levels = _levels(y, X.shape[0])
    lam = _check_lam(lam)
    eps = _check_loss_eps(loss, eps)
    kern = _make_kernel(kernel, X, gamma, degree, coef0)
    R, basis_name = _basis(basis, levels, random_state)
    if kern.name == "precomputed":
        KR = np.asarray(X[:, R], dtype=float)
    else:
        KR = np.asarray(kern.columns(X, R), dtype=float)
    KRR = KR[R]
    # jitter: round-off leaves Gaussian Gram blocks of near-duplicate points with
    # eigenvalues near -1e-12, which would make the objective unbounded below
    jitter = KRR_JITTER * max(float(np.mean(np.diag(KRR))), 0.0)
    KRR = 0.5 * (KRR + KRR.T) + jitter * np.eye(R.size)
    n_levels = int(levels.max()) + 1
    rank = RankingData(KR=KR, KRR=KRR, levels=levels, lam=lam, eps=eps,
                       n_pairs=count_pairs(levels))
    return {"rank": rank, "X": X, "kernel": kern, "basis": R, "basis_name": basis_name,
            "loss": loss, "method": method, "n_levels": n_levels}


def _build(data: Mapping[str, Any]) -> ConicForm:
    rank: RankingData = data["rank"]
    if rank.n_pairs > MAX_GENERIC_PAIRS:
        raise ProgramError(
            f"this ranking program has {rank.n_pairs} pairs, above the generic-backend limit "
            f"MAX_GENERIC_PAIRS = {MAX_GENERIC_PAIRS}: the cvxpy form would hold every pair; "
            "solve it with the specialized solver 'rank-tr' (or 'rank-newton'), which never "
            "forms the pairs (smoothed loss)"
        )
    _, Xt = linearize(rank.KR, rank.KRR)
    P = pair_matrix(rank.levels)
    w = cp.Variable(Xt.shape[1], name="w")
    p = cp.Variable(rank.n_samples, name="p")
    scores_c = p == Xt @ w
    z = P @ p
    n = rank.n_pairs
    if rank.eps == 0.0:
        loss = cp.sum(cp.pos(1 - z)) / n
    else:
        loss = cp.sum(cp.huber(cp.pos(1 - z), 2 * rank.eps)) / (4 * rank.eps * n)
    objective = loss + 0.5 * rank.lam * cp.sum_squares(w)
    problem = cp.Problem(cp.Minimize(objective), [scores_c])
    return ConicForm(problem, {"w": w, "p": p}, {"scores": scores_c})


def _beta(data: Mapping[str, Any], solution: Solution) -> np.ndarray:
    if "beta" in solution.values:
        return np.asarray(solution.values["beta"], dtype=float)
    rank: RankingData = data["rank"]
    T, _ = linearize(rank.KR, rank.KRR)
    return T @ np.asarray(solution.values["w"], dtype=float)


def _decode(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, data["kind"])
    rank: RankingData = data["rank"]
    beta = _beta(data, solution)
    value, _, _, _ = ranking_objective(rank, beta)
    return {"beta": beta, "basis": data["basis"], "scores": rank.KR @ beta,
            "objective": value}


def _certify(data: Mapping[str, Any], solution: Solution) -> Residuals:
    rank: RankingData = data["rank"]
    beta = _beta(data, solution)
    if rank.eps == 0.0:
        return Residuals(primal=0.0, dual=math.nan, gap=math.nan, source="recomputed")
    # The smoothed problem is unconstrained and strongly convex: the certificate is a
    # rigorous bound on (F(beta) - F*) / F(beta) (gap_bound). Stationarity is not checked
    # (dual = nan): in the K^-1 metric it is at the mercy of round-off when K_RR is badly
    # conditioned, both ways (a point 0.2 % above the optimum at relative gradient 3e-7,
    # optimal points at 1e-3); each solver's own measure stays in
    # extras["solver_residuals"].
    return Residuals(primal=0.0, dual=math.nan, gap=gap_bound(rank, beta),
                     source="recomputed")


def _program(data: dict) -> Program:
    rank: RankingData = data["rank"]
    kind = RANK_HINGE if rank.eps == 0.0 else RANK_SMOOTHED
    data["kind"] = kind
    levels = "biclass" if data["n_levels"] == 2 else f"{data['n_levels']}-level"
    desc = (f"{data['method']} ({levels}, {data['kernel'].name} kernel, basis "
            f"{data['basis_name']} |R|={rank.n_basis}, {data['loss']} loss, "
            f"lam={rank.lam:g}, N={rank.n_pairs} pairs)")
    return Program(kind, data, build=_build, decode=_decode,
                   default_solver="rank-tr" if rank.eps > 0 else "clarabel",
                   description=desc, certify=_certify)


@renamed_keywords(eps="smoothing")
def rankrc(
    X: np.ndarray,
    y: np.ndarray,
    lam: float = 1.0,
    *,
    kernel: str = "rbf",
    gamma: float | str = "mean-distance",
    degree: int = 3,
    coef0: float = 1.0,
    basis: str | Sequence[int] | np.ndarray = "rare",
    loss: str = "smoothed",
    smoothing: float = 0.1,
    random_state: Any = None,
) -> Program:
    r"""RankRC (3.14)/(3.15): the AUC surrogate over a rare-class kernel basis.

    .. math::

        \min_{\beta}\ \frac1{m_+m_-}\sum_{i:y_i=+1}\sum_{j:y_j=-1}
        \ell\big(K_{i\mathcal R}\beta - K_{j\mathcal R}\beta\big)
        + \frac\lambda2\beta^\top K_{\mathcal R\mathcal R}\beta,
        \qquad f(x) = \sum_{r\in\mathcal R}\beta_r k(x_r, x).

    Parameters
    ----------
    X : ndarray of shape (m, d)
        Training inputs (for ``kernel="precomputed"`` the (m, m) Gram matrix).
    y : ndarray of shape (m,)
        ``+1`` (rare, ranked high) / ``-1`` labels, or integer ordinal levels
        (more than two levels: the multi-level problem (6.2), normalised by
        :math:`\sum_{r<s}m_rm_s`).
    lam : float, default=1.0
        :math:`\lambda > 0` (the loss is a mean over pairs; a sum-form RankSVM
        with cost C corresponds to :math:`C = 1/(\lambda N)`).
    kernel : {"rbf", "linear", "poly", "precomputed"}, default="rbf"
    gamma : float or {"mean-distance", "scale", "auto"}, default="mean-distance"
        ``"mean-distance"``: :math:`1/\sigma^2` of the experiments (see Notes).
    degree, coef0 : kernel parameters of ``poly``.
    basis : {"rare", "random", "all"} or index array, default="rare"
        ``"rare"``: samples above the lowest level (the paper's method);
        ``"random"``: as many random indices (RANK-RND); ``"all"``: RankSVM.
    loss : {"smoothed", "hinge"}, default="smoothed"
    smoothing : float in (0, 1), default=0.1
        Smoothing width :math:`\epsilon` of :math:`\ell_\epsilon` (not stated in the
        thesis; ``eps`` before this release, still accepted with a ``FutureWarning``).
    random_state : seed for ``basis="random"``.

    Returns
    -------
    Program
        Kind ``socp.rank.smoothed`` (default solver ``rank-tr``) or
        ``qp.rank.hinge`` (default ``clarabel``); ``decode`` gives ``{"beta",
        "basis", "scores", "objective"}``.

    Raises
    ------
    ProgramError
        (a ``ValueError``) naming the parameter: shape mismatch, NaN/inf, a
        single class or level, ``lam <= 0``, ``smoothing`` outside (0, 1), an empty or
        out-of-range ``basis``, unknown ``loss`` / ``kernel``.

    Notes
    -----
    ``loss="hinge"`` uses :math:`\ell_h(z) = \max(0, 1-z)` (kind ``qp.rank.hinge``)
    and ``loss="smoothed"`` the smoothed hinge of §2.3,

    .. math::

        \ell_\epsilon(z) = \tfrac1{4\epsilon}\operatorname{huber}\big(\operatorname{pos}(1-z),
        2\epsilon\big) \quad(\text{kind } \texttt{socp.rank.smoothed}),

    which lies between :math:`\ell_h - \epsilon` and :math:`\ell_h`.

    **Generic route.** The cvxpy problem is the linearised form (3.16)–(3.17):
    :math:`K_{\mathcal R\mathcal R} = U\Lambda U^\top` with the eigenvalues below
    ``1e-13`` :math:`\lambda_{\max}` dropped, features
    :math:`\tilde X = K_{\bullet\mathcal R}U\Lambda^{\dagger 1/2}` (erratum: the
    text after (3.17) drops the dagger), :math:`\beta = U\Lambda^{\dagger1/2}w`,
    and an auxiliary score vector :math:`p = \tilde Xw` on which a sparse pair
    matrix acts (never a dense pairs x features matrix). It is refused above
    :data:`MAX_GENERIC_PAIRS` pairs with a :class:`ProgramError` naming the pair
    count and the specialized solvers ``rank-tr`` / ``rank-newton``, which never
    form the pairs.

    **Jitter.** The program's :math:`K_{\mathcal R\mathcal R}` is the kernel block plus
    ``KRR_JITTER`` (1e-10) times its mean diagonal times :math:`I`: round-off makes the
    Gaussian Gram block of near-duplicate points indefinite (eigenvalues near
    :math:`-10^{-12}` measured), which would make :math:`F` unbounded below. Every
    solver sees the same jittered program; it differs slightly from the printed one
    (on ill-conditioned blocks the optimum by up to ~4e-5 relative, the scores by up to
    ~2e-3: errata S000-J1).

    **Certificate.** Recomputed from :math:`\beta` by sorting: ``primal = 0`` (the
    problem is unconstrained in :math:`\beta`); for the smoothed loss ``gap`` is a rigorous
    bound on :math:`(F(\beta) - F^*)/\max(F(\beta), 10^{-3}F(0))` from the
    :math:`\lambda`-strong convexity of :math:`F` in the :math:`K_{\mathcal R\mathcal R}` norm
    (:func:`~conicml.contracts.ranking_ops.gap_bound`) and ``dual`` is ``nan`` (stationarity
    in the :math:`K^{-1}` metric is at the mercy of round-off when the Gram block is badly
    conditioned); for the non-smooth hinge the certificate is the recomputed objective only
    (``dual`` and ``gap`` ``nan``).

    Gaussian width: ``gamma="mean-distance"`` is the rule of the experiments (ch. 5):
    :math:`k(u,v) = \exp(-\|u-v\|^2/\sigma^2)` with :math:`\sigma^2` the mean of all
    :math:`m^2` squared distances, i.e. ``gamma`` :math:`= 1/\sigma^2`, computed in
    O(md) as :math:`\sigma^2 = 2\sum_k \operatorname{Var}(X_{\cdot k})`.
    """
    data = _prepare(X, y, lam, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                    basis=basis, loss=loss, eps=smoothing, random_state=random_state,
                    method="RankSVM" if isinstance(basis, str) and basis == "all" else "RankRC")
    return _program(data)


@renamed_keywords(eps="smoothing")
def ranksvm(
    X: np.ndarray,
    y: np.ndarray,
    lam: float = 1.0,
    *,
    kernel: str = "rbf",
    gamma: float | str = "mean-distance",
    degree: int = 3,
    coef0: float = 1.0,
    loss: str = "smoothed",
    smoothing: float = 0.1,
) -> Program:
    r"""Biclass (or multi-level) kernel RankSVM (3.7) / (6.1): :func:`rankrc` with ``basis="all"``.

    .. math::

        \min_{\beta\in\mathbb R^m}\ \frac1{m_+m_-}\sum_{i:+}\sum_{j:-}
        \ell(K_{i\cdot}\beta - K_{j\cdot}\beta) + \frac\lambda2\beta^\top K\beta.

    No bias. Parameters as in :func:`rankrc`.
    """
    return rankrc(X, y, lam, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                  basis="all", loss=loss, smoothing=smoothing)


def with_lambda(program: Program, lam: float) -> Program:
    """The same ranking program (same kernel columns) with another λ."""
    data = dict(program.data)
    data["rank"] = dataclasses.replace(data["rank"], lam=_check_lam(lam))
    return _program(data)


def scores(data: Mapping[str, Any], model: Mapping[str, Any], X_new: np.ndarray) -> np.ndarray:
    r"""Ranking scores :math:`f(x) = \sum_{r\in\mathcal R}\beta_r k(x_r, x)` of new inputs.

    ``data`` is ``program.data``; for a precomputed kernel ``X_new`` holds kernel
    values against all training samples, shape (n, m).
    """
    kern: Kernel = data["kernel"]
    R = data["basis"]
    if kern.name == "precomputed":
        return np.asarray(X_new, dtype=float)[:, R] @ model["beta"]
    return kern(np.asarray(X_new, dtype=float), data["X"][R]) @ model["beta"]


def __getattr__(name: str) -> Any:
    # a formulation builds programs and never solves them, nor imports the solving side
    if name == "ranking_path":
        raise AttributeError(
            "conicml.formulations.ranking.ranking_path was removed: a formulation does not "
            "solve; use conicml.estimators.ranking.ranking_path(program, lams) (the same "
            "signature) or conicml.solve_path(lambda lam: with_lambda(program, lam), lams, "
            "'rank-tr', order='descending')")
    raise AttributeError(f"module 'conicml.formulations.ranking' has no attribute {name!r}")
