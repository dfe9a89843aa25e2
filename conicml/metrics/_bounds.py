"""Stability bounds of a kernel ranker restricted to a subset of basis functions (seed 000
ch. 4): how far the optimal score of RankSVM / SVM can move when the hypothesis uses only
the kernel functions of a subset R of the training points (equivalently, a Nystrom kernel).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import ProgramError

__all__ = ["kernel_perturbation_bound", "nystrom_residual_norm", "nystrom_svm_bound",
           "projected_map_bound", "rare_first_bound_curve"]


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ProgramError(f"{name} must be a positive number, got {value!r}")
    return value


def _count(name: str, value: int, upper: int | None = None) -> int:
    if int(value) != value or value < 0 or (upper is not None and value > upper):
        limit = "" if upper is None else f" and at most {upper}"
        raise ProgramError(f"{name} must be an integer >= 0{limit}, got {value!r}")
    return int(value)


def projected_map_bound(m_pos: int, m_neg: int, r_pos: int, r_neg: int, *, lam: float,
                        kappa: float = 1.0) -> float:
    """Theorem 6 / Corollary 7 (eq. 4.21): the projected-map bound of RankSVM.

    For every x, the optimal RankSVM score with the full kernel, :math:`f^*_\\phi`, and the
    score restricted to the kernel functions of a subset R (Corollary 7:
    :math:`\\bar f^*_\\phi`, equal to the score under the projected map
    :math:`\\phi_R = \\mathrm{Proj}_{S_R}\\phi`, Theorem 5) differ by at most

    .. math::
        \\frac{2\\kappa}{\\lambda}\\Big(\\frac{m_+ - r_+}{m_+}
        + \\frac{m_- - r_-}{m_-}\\Big)^{1/2}

    with :math:`r_\\pm` the points of each class in R.

    Assumptions (thesis ch. 4): the biclass RankSVM objective (3.5) in the lambda-form,
    mean pairwise loss over the :math:`m_+ m_-` pairs plus :math:`\\tfrac\\lambda2\\|w\\|^2`,
    no bias; a convex 1-Lipschitz loss (the hinge; the proof holds as well for the
    smoothed hinge :math:`\\ell_\\epsilon`); a kernel bounded on the diagonal,
    :math:`k(x, x) \\le \\kappa` for every x (kappa = 1 for a Gaussian kernel).

    Parameters
    ----------
    m_pos, m_neg : int
        Positive (rare) and negative training points.
    r_pos, r_neg : int
        Of them, those whose kernel functions are in the subset R.
    lam : float
        The regularisation parameter lambda > 0.
    kappa : float, default 1
        The bound on k(x, x).

    Returns
    -------
    float
        The bound; ``2 kappa / lam`` for RankRC (R = the rare class) whatever the data,
        ``0`` for R = all points.
    """
    m_pos, m_neg = _count("m_pos", m_pos), _count("m_neg", m_neg)
    if m_pos == 0 or m_neg == 0:
        raise ProgramError(f"a ranking bound needs both classes: got m_pos={m_pos}, "
                              f"m_neg={m_neg}")
    r_pos, r_neg = _count("r_pos", r_pos, m_pos), _count("r_neg", r_neg, m_neg)
    lam, kappa = _positive("lam", lam), _positive("kappa", kappa)
    left_out = (m_pos - r_pos) / m_pos + (m_neg - r_neg) / m_neg
    return 2.0 * kappa / lam * float(np.sqrt(left_out))


def rare_first_bound_curve(m_pos: int, m_neg: int, sizes: ArrayLike, *, lam: float = 1.0,
                           kappa: float = 1.0) -> np.ndarray:
    """The bound (4.21) along :math:`|R|` when the rare points enter R first (Fig 4.1).

    Corollary 7: adding a positive point lowers the sum of (4.21) by :math:`1/m_+`, a
    negative one by :math:`1/m_-`; with :math:`m_+ < m_-` the rare points first give the
    lowest bound for every :math:`|R|`, a deterministic curve:
    :math:`2\\sqrt2\\,\\kappa/\\lambda` at :math:`|R| = 0`, :math:`2\\kappa/\\lambda` at
    :math:`|R| = m_+`, 0 at :math:`|R| = m_+ + m_-`.
    Assumptions as :func:`projected_map_bound`.
    """
    sizes = np.asarray(sizes)
    m = _count("m_pos", m_pos) + _count("m_neg", m_neg)
    if sizes.ndim != 1 or np.any(sizes < 0) or np.any(sizes > m) or np.any(sizes % 1):
        raise ProgramError(f"sizes must be integers in [0, {m}], got {sizes!r}")
    return np.array([projected_map_bound(m_pos, m_neg, min(int(s), m_pos),
                                         max(int(s) - m_pos, 0), lam=lam, kappa=kappa)
                     for s in sizes])


def nystrom_svm_bound(m: int, r: int, *, lam: float, kappa: float = 1.0) -> float:
    """Theorem 9: the SVM's optimal score under a Nystrom kernel on r of m columns.

    .. math::
        |f^*_{K'}(x) - f^*_K(x)| \\le \\frac{\\sqrt2\\,\\kappa}{\\lambda}
        \\sqrt{1 - \\frac{r}{m}}

    The thesis states the constant as :math:`\\sqrt{2\\kappa}/\\lambda`; its proof
    (4.27) with :math:`\\|w^*\\|, \\|w^*_R\\| \\le \\sqrt\\kappa/\\lambda` and
    :math:`\\|\\phi(x) - \\phi_R(x)\\| \\le \\sqrt\\kappa` gives
    :math:`\\sqrt2\\,\\kappa/\\lambda` (seed-000 note, pitfall 18); the two agree for
    kappa = 1. This is the derived constant.

    Assumptions: the SVM (4.34) in the lambda-form, mean hinge loss over the m points,
    no bias; :math:`k(x, x) \\le \\kappa`; K' the Nystrom approximation
    :math:`K_{\\cdot R} K_{RR}^\\dagger K_{\\cdot R}^T` on the columns R, :math:`|R| = r`.
    """
    m = _count("m", m)
    if m == 0:
        raise ProgramError("m must be at least 1")
    r = _count("r", r, m)
    lam, kappa = _positive("lam", lam), _positive("kappa", kappa)
    return float(np.sqrt(2.0) * kappa / lam * np.sqrt(1.0 - r / m))


def kernel_perturbation_bound(perturbation: float, *, lam: float, kappa: float = 1.0) -> float:
    """Theorem 10 (eq. 4.36): RankSVM's optimal score under a perturbed kernel matrix.

    .. math::
        |f^*_{K'}(x) - f^*_K(x)| \\le \\frac{2\\sqrt2\\,\\kappa^{3/4}}{\\lambda}
        \\|K' - K\\|_2^{1/2}\\Big[1 + \\Big(\\frac{\\|K' - K\\|_2}{4\\kappa}\\Big)^{1/4}\\Big]

    twice Cortes et al.'s SVM bound (the double sum of the pairwise loss).

    Assumptions: the biclass RankSVM (lambda-form, no bias, a convex 1-Lipschitz loss);
    both K and K' are positive semi-definite kernel matrices with diagonal at most kappa;
    ``perturbation`` is the spectral norm :math:`\\|K' - K\\|_2` (for a Nystrom K',
    :func:`nystrom_residual_norm`).
    """
    perturbation = float(perturbation)
    if not np.isfinite(perturbation) or perturbation < 0:
        raise ProgramError(f"perturbation must be a spectral norm >= 0, got {perturbation!r}")
    lam, kappa = _positive("lam", lam), _positive("kappa", kappa)
    return float(2.0 * np.sqrt(2.0) * kappa**0.75 / lam * np.sqrt(perturbation)
                 * (1.0 + (perturbation / (4.0 * kappa)) ** 0.25))


def nystrom_residual_norm(K: ArrayLike, index: ArrayLike, *, rtol: float = 1e-10) -> float:
    """:math:`\\|K - K_{\\cdot R} K_{RR}^\\dagger K_{\\cdot R}^T\\|_2` for the columns R.

    For a positive semi-definite K the range of :math:`K_{RS}` lies in that of
    :math:`K_{RR}`, so the Nystrom residual vanishes on the rows and columns of R and is
    the Schur complement :math:`K_{SS} - K_{SR} K_{RR}^\\dagger K_{RS}` on the others, S.
    Its spectral norm is the largest eigenvalue of that complement. The pseudo-inverse is
    taken on the numerical range of :math:`K_{RR}`: a pivoted Cholesky factorisation
    (LAPACK ``pstrf``) stops when the largest remaining diagonal falls below ``rtol`` times
    the largest diagonal of :math:`K_{RR}` (a Gaussian K_RR is often numerically
    rank-deficient; seed-000 note, pitfall 5), and its r pivots P give
    :math:`K_{SP} K_{PP}^{-1} K_{PS}`. The cost is :math:`O(|R|^2 r + r^2 |S|)` and one
    eigenvalue of an :math:`|S| \\times |S|` matrix, so all m rows of a data set are
    affordable (an eigendecomposition of :math:`K_{RR}` is :math:`O(|R|^3)`).

    Parameters
    ----------
    K : (m, m) array
        A symmetric positive semi-definite kernel matrix.
    index : sequence of int
        The columns R (empty: K' = 0 and the result is ``||K||_2``; repeated indices count
        once).
    rtol : float
        Relative cut-off of the pivoted Cholesky factorisation of :math:`K_{RR}`.
    """
    from scipy.linalg import solve_triangular
    from scipy.linalg.lapack import dpstrf

    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ProgramError(f"K must be a square matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ProgramError("K has NaN or infinite entries")
    m = K.shape[0]
    index = np.unique(np.asarray(index, dtype=int).ravel())
    if index.size and (index.min() < 0 or index.max() >= m):
        raise ProgramError(f"index must lie in [0, {m}), got {index.min()}..{index.max()}")
    rest = np.setdiff1d(np.arange(m), index, assume_unique=True)
    if rest.size == 0:
        return 0.0
    if index.size:
        A = K[np.ix_(index, index)]
        # A is symmetric, so its transpose is the Fortran-ordered copy pstrf works in
        factor, piv, rank, info = dpstrf(A.T, lower=1, overwrite_a=1,
                                         tol=rtol * max(float(A.diagonal().max()), 0.0))
        if info < 0:  # pragma: no cover - an illegal argument to LAPACK
            raise ProgramError(f"pstrf failed with info = {info}")
        pivots = index[piv[:rank] - 1]
        G = solve_triangular(np.tril(factor[:rank, :rank]), K[np.ix_(pivots, rest)],
                             lower=True, check_finite=False)
        S = K[np.ix_(rest, rest)] - G.T @ G  # the Schur complement on S
    else:
        S = K
    return _largest_eigenvalue(S)


def _largest_eigenvalue(S: np.ndarray) -> float:
    """Largest eigenvalue of a symmetric positive semi-definite matrix (>= 0)."""
    from scipy.sparse.linalg import eigsh

    if S.shape[0] <= 400:  # small: the dense eigenvalue problem is cheap and exact
        return float(max(np.linalg.eigvalsh(S)[-1], 0.0))
    top = eigsh(S, k=1, which="LA", return_eigenvectors=False, tol=1e-8,
                v0=np.ones(S.shape[0]) / np.sqrt(S.shape[0]))
    return float(max(top[0], 0.0))
