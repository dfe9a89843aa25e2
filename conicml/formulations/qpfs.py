r"""Quadratic Programming Feature Selection (seed 001, ch. 3: Rodríguez Luján et al. 2010).

QPFS ranks M features by the solution of the simplex QP (eq. 3.4)

.. math::

    \min_{w}\ \tfrac12(1-\alpha)\,w^\top Q w - \alpha F^\top w
    \quad\text{s.t.}\quad w \ge 0,\ \mathbf 1^\top w = 1,

with :math:`Q` the feature–feature similarity (redundancy) and :math:`F` the
feature–class relevance (:mod:`conicml._utils.similarity`: absolute correlation with Hall's
prior-weighted relevance, or mutual information after the mRMR discretisation).
:math:`Q` is clipped to its eigenvalues above :math:`\delta\lambda_{\max}` (it is often
indefinite); the forms, the ``alpha`` heuristic, Nyström and the ranking rule are in the
Notes of :func:`qpfs`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from numbers import Real
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils import similarity as sim
from .._utils.validation import check_bins, check_matrix, plain
from ..contracts.qpfs import RestrictedQP, SimplexQP
from ..exceptions import ProgramError
from ..kinds import QPFS, QPFS_RESTRICTED
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution, Status

__all__ = ["alpha_heuristic", "qpfs", "qpfs_from_statistics", "rank_features", "simplex_qp",
           "with_alpha"]

SIMILARITIES = ("mi", "correlation")
FORMS = ("full", "restricted")


def alpha_heuristic(q_bar: float, f_bar: float) -> float:
    r"""Trade-off (3.7): :math:`\hat\alpha = \bar q / (\bar q + \bar f)` (0.5 if both are 0)."""
    total = q_bar + f_bar
    return 0.5 if total <= 0 else float(q_bar / total)


def rank_features(w: np.ndarray, relevance: np.ndarray, tie_tol: float = 1e-6,
                  last: np.ndarray | None = None) -> np.ndarray:
    """Feature indices best first: ``w`` descending, ties by ``relevance`` descending.

    Weights at or below ``tie_tol`` count as 0 (interior-point solvers return ~1e-9
    for zero weights); features flagged in ``last`` go to the end (by relevance).
    """
    w_eff = np.where(w > tie_tol, w, 0.0)
    flag = np.zeros(w.size, dtype=bool) if last is None else last
    return np.lexsort((-relevance, -w_eff, flag))


def _check_tie_tol(tie_tol: Any) -> float:
    """``tie_tol`` as a float; :class:`ProgramError` unless it is a finite number >= 0."""
    if isinstance(tie_tol, bool) or not isinstance(tie_tol, Real) or not (
            np.isfinite(tie_tol) and tie_tol >= 0):
        raise ProgramError(f"tie_tol (weights at or below it count as 0 in the ranking) must "
                           f"be a finite number >= 0, got {tie_tol!r}")
    return float(tie_tol)


def _check_labels(y: Any, n: int) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ProgramError(f"y must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ProgramError(f"shape mismatch: X has {n} rows but y has {arr.shape[0]} labels")
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        raise ProgramError("y contains NaN or infinite values")
    if np.unique(arr).size < 2:
        raise ProgramError("y contains a single class; feature relevance needs two or more")
    return arr


def _clipped_factor(Q: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray,
                                                          np.ndarray, dict]:
    lam, U = np.linalg.eigh(0.5 * (Q + Q.T))
    lam, U = lam[::-1], U[:, ::-1]
    top = max(float(lam[0]), 0.0)
    keep = lam > delta * top if top > 0 else np.zeros(lam.size, dtype=bool)
    info = {"rank": int(keep.sum()), "n_negative": int(np.count_nonzero(lam < 0)),
            "min_eigenvalue": float(lam[-1]), "max_eigenvalue": float(lam[0]),
            "dropped_mass": float(np.abs(lam[~keep]).sum()),
            "rule": f"eigenvalues <= delta*lambda_max = {delta * top:.3g} dropped"}
    return U[:, keep], lam[keep], U[:, keep] * np.sqrt(lam[keep]), info


def _nystrom_factor(C: np.ndarray, idx: np.ndarray, delta: float) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, dict]:
    """(B.17) from the sampled columns C = Q[:, I] (M x r) only."""
    A = 0.5 * (C[idx] + C[idx].T)
    la, Ua = np.linalg.eigh(A)
    top_a = max(float(la.max()), 0.0)
    keep_a = la > delta * top_a if top_a > 0 else np.zeros(la.size, dtype=bool)
    if not keep_a.any():
        raise ProgramError("the sampled block A = Q[I, I] has no eigenvalue above "
                           "delta*lambda_max: raise the Nystrom rate p")
    A_isqrt = Ua[:, keep_a] / np.sqrt(la[keep_a])  # A^{-1/2} on its kept range (r x a)
    CA = C @ A_isqrt  # M x a
    S = CA.T @ CA
    sig, R = np.linalg.eigh(0.5 * (S + S.T))
    sig, R = sig[::-1], R[:, ::-1]
    keep = sig > delta * max(float(sig[0]), 0.0)
    sig, R = sig[keep], R[:, keep]
    V = CA @ R / np.sqrt(sig)  # (B.17): orthonormal columns
    info = {"rank": int(keep.sum()), "n_negative": int(np.count_nonzero(la < 0)),
            "min_eigenvalue": float(la[0]), "max_eigenvalue": float(sig[0]),
            "dropped_mass": float(np.abs(la[~keep_a]).sum()),
            "rule": "eigenvalues of A and of S <= delta*max dropped (B.17)"}
    return V, sig, V * np.sqrt(sig), info


def _build_full(data: Mapping[str, Any]) -> ConicForm:
    qp: SimplexQP = data["qp"]
    w = cp.Variable(qp.n_features, name="w")
    objective = (0.5 * (1.0 - qp.alpha) * cp.sum_squares(qp.factor.T @ w)
                 - qp.alpha * (qp.relevance @ w))
    constraints = {"nonneg": w >= 0, "simplex": cp.sum(w) == 1}
    return ConicForm(cp.Problem(cp.Minimize(objective), list(constraints.values())),
                     {"w": w}, constraints)


def _build_restricted(data: Mapping[str, Any]) -> ConicForm:
    qp: RestrictedQP = data["qp"]
    z = cp.Variable(qp.eigenvalues.size, name="z")
    objective = (0.5 * (1.0 - qp.alpha) * cp.sum_squares(cp.multiply(np.sqrt(qp.eigenvalues), z))
                 - qp.alpha * ((qp.basis.T @ qp.relevance) @ z))
    constraints = {"nonneg": qp.basis @ z >= 0, "simplex": qp.basis.sum(axis=0) @ z == 1}
    return ConicForm(cp.Problem(cp.Minimize(objective), list(constraints.values())),
                     {"z": z}, constraints)


def _weights(data: Mapping[str, Any], solution: Solution) -> np.ndarray:
    if data["form"] == "full":
        return np.asarray(solution.values["w"], dtype=float)
    return data["qp"].basis @ np.asarray(solution.values["z"], dtype=float)


def _decode(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, QPFS if data["form"] == "full" else QPFS_RESTRICTED)
    w_active = np.maximum(_weights(data, solution), 0.0)
    m = data["n_features"]
    w = np.zeros(m)
    w[data["active"]] = w_active
    relevance = data["relevance"]
    constant = np.ones(m, dtype=bool)
    constant[data["active"]] = False
    ranking = rank_features(w, relevance, data["tie_tol"], constant)
    return {"w": w, "ranking": ranking, "alpha": data["alpha"], "relevance": relevance,
            "support": np.flatnonzero(w > data["tie_tol"])}


def _certify(data: Mapping[str, Any], solution: Solution) -> Residuals:
    if data["form"] == "full":
        primal, dual, gap = data["qp"].certificate(np.asarray(solution.values["w"], float))
        return Residuals(primal=primal, dual=dual, gap=gap, source="recomputed")
    qp: RestrictedQP = data["qp"]
    z = np.asarray(solution.values["z"], dtype=float)
    w = qp.basis @ z
    primal = max(abs(float(w.sum()) - 1.0), float(np.maximum(-w, 0.0).max(initial=0.0)))
    dual = gap = math.nan
    lam, nu = solution.duals.get("nonneg"), solution.duals.get("simplex")
    if lam is not None and nu is not None:
        # stationarity of the Lagrangian f(z) - lam^T Uz + nu (1^T Uz - 1), lam >= 0
        lam = np.asarray(lam, dtype=float).ravel()
        nu = float(np.asarray(nu, dtype=float).ravel()[0])
        grad = (1.0 - qp.alpha) * qp.eigenvalues * z - qp.alpha * (qp.basis.T @ qp.relevance)
        res = grad - qp.basis.T @ lam + nu * qp.basis.sum(axis=0)
        scale = max(float(np.abs(grad).max(initial=0.0)),
                    (1.0 - qp.alpha) * float(qp.eigenvalues.max(initial=0.0))
                    + qp.alpha * float(np.abs(qp.relevance).max(initial=0.0)), 1e-300)
        dual = max(float(np.abs(res).max()) / scale,
                   float(np.maximum(-lam, 0.0).max(initial=0.0)) / scale)
        gap = abs(float(lam @ w)) / scale  # complementary slackness
    return Residuals(primal=primal, dual=dual, gap=gap, source="recomputed")


def _explain(data: Mapping[str, Any], status: Status) -> str:
    if data["form"] == "restricted" and status in (Status.INFEASIBLE,
                                                   Status.INFEASIBLE_INACCURATE):
        return ("the restricted QPFS (3.9) is infeasible: range(U) meets no point of the "
                "simplex; lower delta, raise the Nystrom rate p, or use form='full'")
    return ""


def qpfs(
    X: Any,
    y: Any,
    alpha: float | str = "auto",
    *,
    similarity: str = "mi",
    nystrom: float | None = None,
    delta: float = 1e-8,
    form: str = "full",
    bins: int = 3,
    width: float = 3.0,
    mi_diagonal: str = "entropy",
    tie_tol: float = 1e-6,
    random_state: int | np.random.Generator | None = None,
) -> Program:
    r"""QPFS (seed 001 eq. 3.4, or 3.9 with ``form="restricted"``) as a conic program.

    .. math::

        \min_{w \in \Delta}\ \tfrac12(1-\alpha)\,\|L^\top w\|_2^2 - \alpha F^\top w,
        \qquad \tilde Q = L L^\top .

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (two or more classes, any values).
    alpha : float in [0, 1] or "auto", default="auto"
        Weight of relevance; ``"auto"`` is :math:`\hat\alpha` of eq. (3.7) (or 3.11).
    similarity : {"mi", "correlation"}, default="mi"
    nystrom : float in (0, 1], optional
        Nyström sampling rate p (r = ⌈pM⌉ sampled features); ``None`` is exact QPFS.
    delta : float, default=1e-8
        Relative eigenvalue threshold: eigenvalues at or below
        ``delta * lambda_max`` (negative ones included) are dropped.
    form : {"full", "restricted"}, default="full"
        Kind ``qp.qpfs.simplex`` or the thesis's restricted (3.9), ``qp.qpfs.restricted``.
    bins : odd int, default=3
        Number of equal segments of the MI discretisation (mRMR: 3).
    width : float, default=3.0
        The segments cover mean ± ``width`` standard deviations; with ``bins=3`` the
        cut points are mean ± 1 sd, as in mRMR (Peng et al. 2005).
    mi_diagonal : {"entropy", "zero"}, default="entropy"
        :math:`q_{ii} = H(X_i)` or 0 for MI (the thesis does not say; ``"zero"``
        reproduces ARR's :math:`\hat\alpha = 0.411` of Table 3.4).
    tie_tol : float, default=1e-6
        Weights at or below it count as 0 in the ranking (ties broken by relevance).
    random_state : int or Generator, optional
        Seed of the Nyström sample.

    Returns
    -------
    Program
        ``decode`` gives ``{"w", "ranking", "alpha", "relevance", "support"}``;
        ``data`` holds the contract (``"qp"``), ``alpha_hat``, ``q_bar``, ``f_bar``,
        ``eigen`` (what the clipping did) and ``sampled`` (Nyström indices).

    Raises
    ------
    ProgramError
        Shape mismatch, NaN/inf, a single class, alpha outside [0, 1], p outside
        (0, 1], bad bins/width/delta/form/similarity, every feature constant.

    Notes
    -----
    **Not PSD.** Absolute-correlation and MI matrices are often indefinite (a zero-diagonal MI
    matrix always is). The program uses the eigenvalue-clipped matrix
    :math:`\tilde Q = \sum_{\lambda_j > \delta\lambda_{\max}} \lambda_j u_j u_j^\top`:
    every eigenvalue at or below :math:`\delta\lambda_{\max}` (negative ones included)
    is dropped. This is the thresholding of eq. 3.9 with a relative :math:`\delta`
    (the thesis gives no value). ``Program.data["eigen"]`` records the rank kept, the
    number of negative eigenvalues and the spectral mass dropped.

    **Conic form.** :math:`\tilde Q` enters through its factor
    :math:`L = U_k\Lambda_k^{1/2}` (:math:`M\times k`) as
    :math:`\tfrac12(1-\alpha)\|L^\top w\|^2` — one second-order cone of dimension
    :math:`k+2` for ECOS, a sum of squares for Clarabel/OSQP — never as a dense
    quadratic form.

    ``form="full"`` (default, kind ``qp.qpfs.simplex``): the problem above over all of
    :math:`w \in \Delta` — the unrestricted low-rank problem that Theorem 3.1 bounds.
    ``form="restricted"`` (kind ``qp.qpfs.restricted``): the thesis's reduced problem
    (3.9), :math:`w = Uz` with :math:`z\in\mathbb R^k`, :math:`Uz \ge 0`,
    :math:`\mathbf 1^\top Uz = 1`. It is a *restriction* of (3.4) (erratum: the thesis
    calls it equivalent; its optimum can be strictly worse even when nothing is
    truncated, and it can be infeasible).

    **Trade-off.** ``alpha="auto"`` is the heuristic (3.5)–(3.7)
    :math:`\hat\alpha = \bar q/(\bar q + \bar f)` with :math:`\bar q` the mean of all
    :math:`M^2` entries of Q (diagonal included) and :math:`\bar f` the mean of F; with
    Nyström, :math:`\bar q` is the mean of the sampled :math:`r\times M` rows (3.11).

    **Nyström** (``nystrom=p``, §3.2.1 and App. B): r = ⌈pM⌉ features sampled uniformly
    without replacement; only :math:`C = Q[:, I]` is computed. With the eigenpairs of
    :math:`A = Q[I, I]` above :math:`\delta\lambda_{\max}(A)`,
    :math:`S = A^{-1/2}C^\top C A^{-1/2} = R\Sigma R^\top` and the orthonormal factor
    (B.17) :math:`\hat V = C A^{-1/2} R \Sigma^{-1/2}` (not the non-orthonormal B.16),
    :math:`\hat Q = \hat V\Sigma\hat V^\top = C A^{-1} C^\top`; eigenvalues
    :math:`\sigma_j \le \delta\sigma_{\max}` are dropped. The M × M matrix is never formed.

    **Constant features** (zero variance) carry no information and make correlation
    undefined: they get relevance 0 and similarity 0 with every other feature (diagonal
    1 for correlation, :math:`H = 0` for MI) in the :math:`\hat\alpha` means, are left
    out of the QP (weight 0) and are ranked last.

    **Ranking** (step 8 of §3.2.1): by :math:`w` descending, ties — in particular every
    :math:`w_i \le` ``tie_tol`` — broken by relevance :math:`F_i` descending.
    """
    X = check_matrix(X, min_rows=2)
    y = _check_labels(y, X.shape[0])
    tie_tol = _check_tie_tol(tie_tol)
    _check_settings(alpha, similarity, nystrom, delta, form, bins, width, mi_diagonal)
    constant = sim.constant_features(X)
    active = np.flatnonzero(~constant)
    if active.size == 0:
        raise ProgramError("every feature of X is constant: nothing to select")
    Xa = X[:, active]
    codes = sim.discretize(Xa, bins, width) if similarity == "mi" else None
    F_active = (sim.mutual_info_relevance(codes, y) if similarity == "mi"
                else sim.correlation_relevance(Xa, y))

    def raw_rows(idx: np.ndarray | None) -> np.ndarray:
        return sim.similarity_rows(Xa, similarity, idx, codes, bins)

    return _assemble(constant, F_active, raw_rows, alpha, similarity=similarity,
                     nystrom=nystrom, delta=delta, form=form, bins=bins, width=width,
                     mi_diagonal=mi_diagonal, tie_tol=tie_tol, random_state=random_state)


def qpfs_from_statistics(
    constant: Any,
    similarity_matrix: Any,
    relevance: Any,
    alpha: float | str = "auto",
    *,
    similarity: str = "mi",
    nystrom: float | None = None,
    delta: float = 1e-8,
    form: str = "full",
    bins: int = 3,
    width: float = 3.0,
    mi_diagonal: str = "entropy",
    tie_tol: float = 1e-6,
    random_state: int | np.random.Generator | None = None,
) -> Program:
    r"""QPFS (:func:`qpfs`) from the similarity and relevance already computed.

    For data that never reach the client (:mod:`conicml._utils.similarity_distributed`
    computes both from per-block statistics of a Dask array).

    Parameters
    ----------
    constant : bool array of shape (M,)
        The constant features (left out of the program, ranked last).
    similarity_matrix : array of shape (a, a)
        The similarity of the a active features, diagonal as computed (1 for
        correlation, :math:`H(X_i)` for MI).
    relevance : array of shape (a,)
        The relevance of the active features.
    alpha, similarity, nystrom, delta, form, bins, width, mi_diagonal, tie_tol, random_state
        As in :func:`qpfs`.

    Returns
    -------
    Program
        As :func:`qpfs`.
    """
    tie_tol = _check_tie_tol(tie_tol)
    _check_settings(alpha, similarity, nystrom, delta, form, bins, width, mi_diagonal)
    constant = np.asarray(constant, dtype=bool)
    a = int(np.count_nonzero(~constant))
    Q = check_matrix(similarity_matrix, "similarity_matrix")
    F = np.asarray(relevance, dtype=float)
    if a == 0 or Q.shape != (a, a) or F.shape != (a,):
        raise ProgramError(f"shape mismatch: {a} active features, similarity matrix of shape "
                           f"{Q.shape}, relevance of shape {F.shape}")

    def raw_rows(idx: np.ndarray | None) -> np.ndarray:
        return Q.copy() if idx is None else Q[idx].copy()

    return _assemble(constant, F, raw_rows, alpha, similarity=similarity, nystrom=nystrom,
                     delta=delta, form=form, bins=bins, width=width,
                     mi_diagonal=mi_diagonal, tie_tol=tie_tol, random_state=random_state)


def _check_settings(alpha, similarity, nystrom, delta, form, bins, width, mi_diagonal) -> None:
    if similarity not in SIMILARITIES:
        raise ProgramError(f"similarity must be 'mi' or 'correlation', got {similarity!r}")
    if form not in FORMS:
        raise ProgramError(f"form must be 'full' or 'restricted', got {form!r}")
    if not (isinstance(alpha, str) and alpha == "auto"):
        if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0 <= alpha <= 1:
            raise ProgramError(f"alpha must be 'auto' or a number in [0, 1], got {plain(alpha)!r}")
    if nystrom is not None and (isinstance(nystrom, bool) or not isinstance(nystrom, Real)
                                or not 0 < nystrom <= 1):
        raise ProgramError(f"nystrom (the sampling rate p) must be in (0, 1], got {nystrom!r}")
    check_bins(bins)
    if not isinstance(width, Real) or not 0 < width < math.inf:
        raise ProgramError(f"width must be a positive number, got {plain(width)!r}")
    if not isinstance(delta, Real) or not 0 <= delta < 1:
        raise ProgramError(f"delta must be in [0, 1), got {delta!r}")
    if mi_diagonal not in ("entropy", "zero"):
        raise ProgramError(f"mi_diagonal must be 'entropy' or 'zero', got {mi_diagonal!r}")


def _assemble(constant: np.ndarray, F_active: np.ndarray, raw_rows: Any, alpha: Any, *,
              similarity: str, nystrom: float | None, delta: float, form: str, bins: int,
              width: float, mi_diagonal: str, tie_tol: float, random_state: Any) -> Program:
    """The program from the constant mask, the active relevance and the similarity rows."""
    m = constant.size
    active = np.flatnonzero(~constant)
    relevance = np.zeros(m)
    relevance[active] = F_active
    const_diag = 1.0 if similarity == "correlation" else 0.0  # |rho_ii| = 1; H(const) = 0

    def rows(idx: np.ndarray | None) -> np.ndarray:
        R = raw_rows(idx)
        if similarity == "mi" and mi_diagonal == "zero":
            sel = np.arange(active.size) if idx is None else idx
            R[np.arange(sel.size), sel] = 0.0
        elif similarity == "correlation":
            sel = np.arange(active.size) if idx is None else idx
            R[np.arange(sel.size), sel] = 1.0
        return R

    sampled = None
    if nystrom is None:
        Q = rows(None)
        q_bar = (Q.sum() + constant.sum() * const_diag) / m ** 2  # (3.5), all M^2 entries
        basis, eigenvalues, factor, info = _clipped_factor(Q, float(delta))
    else:
        rng = np.random.default_rng(random_state)
        r = max(1, math.ceil(nystrom * m))
        drawn = np.sort(rng.choice(m, size=r, replace=False))  # uniform, no replacement
        position = np.full(m, -1)
        position[active] = np.arange(active.size)
        sampled = position[drawn[~constant[drawn]]]  # sampled active features
        if sampled.size == 0:
            raise ProgramError("the Nystrom sample holds only constant features: raise p")
        block = rows(sampled)  # Q[I, :] over the active features
        n_const = int(constant[drawn].sum())  # a constant feature's row: only its diagonal
        q_bar = (block.sum() + n_const * const_diag) / (r * m)  # (3.11): r x M block mean
        basis, eigenvalues, factor, info = _nystrom_factor(block.T, sampled, float(delta))
    f_bar = relevance.sum() / m  # (3.6)
    alpha_hat = alpha_heuristic(float(q_bar), float(f_bar))
    alpha_value = alpha_hat if isinstance(alpha, str) else float(alpha)

    if form == "full":
        contract: SimplexQP | RestrictedQP = SimplexQP(factor, F_active, alpha_value)
    else:
        contract = RestrictedQP(basis, eigenvalues, F_active, alpha_value)
    data = {"qp": contract, "form": form, "n_features": m, "active": active,
            "relevance": relevance, "alpha": alpha_value, "alpha_hat": alpha_hat,
            "q_bar": float(q_bar), "f_bar": float(f_bar), "similarity": similarity,
            "nystrom": nystrom, "sampled": None if sampled is None else active[sampled],
            "delta": float(delta), "eigen": info, "bins": bins, "width": float(width),
            "tie_tol": float(tie_tol), "constant": np.flatnonzero(constant)}
    return _qpfs_program(data)


def _qpfs_program(data: dict) -> Program:
    form, nystrom = data["form"], data["nystrom"]
    approx = "exact" if nystrom is None else f"Nystrom p={nystrom:g}"
    return Program(
        QPFS if form == "full" else QPFS_RESTRICTED,
        data,
        build=_build_full if form == "full" else _build_restricted,
        decode=_decode,
        default_solver="simplex-smo" if form == "full" else "clarabel",
        description=f"QPFS ({data['similarity']}, {approx}, alpha={data['alpha']:.3g}, "
                    f"{form})",
        explain=_explain,
        certify=_certify,
    )


def with_alpha(program: Program, alpha: float) -> Program:
    r"""The same QPFS program (similarities, relevance, factor) at another :math:`\alpha`.

    For a path over :math:`\alpha` (:func:`conicml.solve_path`): the mutual information or
    correlations and the factor of :math:`\tilde Q` do not depend on :math:`\alpha` and
    are not computed again.

    Raises
    ------
    ProgramError
        ``program`` is not a program of :func:`qpfs`, or ``alpha`` outside [0, 1].
    """
    data = dict(getattr(program, "data", {}))
    if not isinstance(data.get("qp"), (SimplexQP, RestrictedQP)) or "alpha_hat" not in data:
        raise ProgramError(f"with_alpha needs a QPFS program from qpfs(), got {program!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0 <= alpha <= 1:
        raise ProgramError(f"alpha must be a number in [0, 1], got {plain(alpha)!r}")
    data["qp"] = dataclasses.replace(data["qp"], alpha=float(alpha))
    data["alpha"] = float(alpha)
    return _qpfs_program(data)


def simplex_qp(factor: Any, relevance: Any, alpha: float, *, tie_tol: float = 1e-6) -> Program:
    r"""The QPFS simplex QP (3.4) from an explicit factor :math:`Q = LL^\top` and relevance F.

    For a user-supplied similarity (and for the closed-form tests of the kind):

    .. math::

        \min_{w\in\Delta}\ \tfrac12(1-\alpha)\|L^\top w\|^2 - \alpha F^\top w .

    Parameters
    ----------
    factor : array-like of shape (M, k)
    relevance : array-like of shape (M,)
    alpha : float in [0, 1]
    tie_tol : float, default=1e-6

    Returns
    -------
    Program
        Kind ``qp.qpfs.simplex``; ``decode`` as :func:`qpfs`.
    """
    L = check_matrix(factor, "factor")
    tie_tol = _check_tie_tol(tie_tol)
    F = np.asarray(relevance, dtype=float)
    if F.ndim != 1 or F.shape[0] != L.shape[0]:
        raise ProgramError(f"shape mismatch: factor has {L.shape[0]} rows but relevance has "
                           f"shape {F.shape}")
    if not np.all(np.isfinite(F)):
        raise ProgramError("relevance contains NaN or infinite values")
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0 <= alpha <= 1:
        raise ProgramError(f"alpha must be a number in [0, 1], got {plain(alpha)!r}")
    m = L.shape[0]
    data = {"qp": SimplexQP(L, F, float(alpha)), "form": "full", "n_features": m,
            "active": np.arange(m), "relevance": F, "alpha": float(alpha),
            "tie_tol": float(tie_tol), "constant": np.array([], dtype=int)}
    return Program(QPFS, data, build=_build_full, decode=_decode,
                   default_solver="simplex-smo", certify=_certify,
                   description=f"simplex QP (M={m}, rank {L.shape[1]}, alpha={alpha:.3g})")
