r"""The dual of the C-form SVOR (seed 003 eq. 4.1): kind ``"qp.chance.svor.dual"``.

The baseline ordinal regressor of seed 003 (§4.1.1) is Chu & Keerthi's support
vector ordinal regression with *explicit* constraints on the thresholds
(ICML 2005, "SVOR-EXC"); the thesis trains it with their SMO ("SMO-OR").
This module gives its Wolfe dual as a program of its own, so that the
specialized ``smo-or`` and the generic backends solve the same program and
:func:`conicml.compare` can put them side by side. The primal kinds stay in
:mod:`conicml.formulations.ordinal` (:func:`~conicml.formulations.ordinal.svor`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np

from .._utils.validation import check_matrix, check_positive
from ..contracts.svor import SVORDualData, complementarity
from ..exceptions import ProgramError
from ..kernels import make_kernel
from ..kinds import SVOR_QP_DUAL
from ..program import ConicForm, Program
from ..solution import Residuals, Solution
from .ordinal import (
    _certify_svor_c_dual,
    _decode_svor_c_dual,
    _ordinal_dual_variables,
    _ordinal_factor,
    _ordinal_model,
    _ordinal_selectors,
)

__all__ = ["check_ranks", "svor_dual", "with_cost"]


def check_ranks(y: object, n: int, name: str = "y") -> tuple[np.ndarray, int]:
    """Integer ranks ``1..r`` (r >= 2, every rank present) or a ``ProgramError`` saying why.

    Parameters
    ----------
    y : array-like of shape (n,)
    n : int
        Number of samples the ranks must match.
    name : str, default="y"

    Returns
    -------
    ranks : ndarray of int64
    r : int

    Raises
    ------
    ProgramError
        (a ``ValueError``) for non-numeric, non-finite or non-integer ranks,
        ranks that do not start at 1, a rank between 1 and r with no points,
        fewer than two ranks, or a length mismatch.
    """
    try:
        arr = np.asarray(y, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ProgramError(
            f"{name} must hold ordered integer ranks 1..r; got values that are not numbers "
            f"({exc}); map your ordered classes to 1, 2, ..., r first") from exc
    if arr.shape != (n,):
        raise ProgramError(f"shape mismatch: {n} inputs but {arr.size} ranks in {name}")
    if not np.all(np.isfinite(arr)):
        raise ProgramError(f"{name} contains NaN or infinite ranks")
    frac = arr != np.round(arr)
    if np.any(frac):
        raise ProgramError(
            f"{name} must hold integer ranks 1..r, got non-integer values such as "
            f"{arr[frac][:3].tolist()}")
    ranks = arr.astype(np.int64)
    present = np.unique(ranks)
    if present.size < 2:
        raise ProgramError(f"ordinal regression needs at least two ranks in {name}, got "
                           f"{present.tolist()}")
    if present[0] != 1:
        raise ProgramError(
            f"{name} must hold ranks 1..r starting at 1, got smallest rank {int(present[0])}; "
            "map your ordered classes to 1, 2, ..., r first")
    r = int(present[-1])
    missing = np.setdiff1d(np.arange(1, r + 1), present)
    if missing.size:
        raise ProgramError(
            f"rank {int(missing[0])} has no points in {name} (ranks present: "
            f"{present[:12].tolist()}); every rank 1..r needs at least one point, "
            "or renumber the ranks")
    return ranks, r


def _build_svor_dual(data: Mapping[str, Any]) -> ConicForm:
    r"""(4.1)'s dual: max 1^T(a + a*) - 1/2 ||R^T(a* - a)||^2, box [0, C], partial sums."""
    R = _ordinal_factor(data)
    alpha, alpha_star, constraints = _ordinal_dual_variables(data, data["C"])
    objective = cp.sum(alpha + alpha_star) - 0.5 * cp.sum_squares(R.T @ (alpha_star - alpha))
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha, "alpha_star": alpha_star}, constraints)


def _bounds(data: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds of (alpha, alpha*): C, with alpha = 0 at rank r and alpha* = 0 at rank 1."""
    sel, C = data["selectors"], data["C"]
    return C * sel["alpha_upper"], C * sel["alpha_star_upper"]


def _decode_svor_dual(data: Mapping[str, Any], solution: Solution) -> dict:
    return _decode_svor_c_dual(data, solution, *_bounds(data), _ordinal_model)


def _certify_svor_dual(data: Mapping[str, Any], solution: Solution) -> Residuals:
    """Box/partial sums (/C), complementarity at the optimal thresholds, relative P - D."""
    sel = data["selectors"]

    def partial_sums(raw_a: np.ndarray, raw_s: np.ndarray) -> float:
        D = sel["S"] @ raw_a - sel["S_star"] @ raw_s  # s*_{r-1} = s_{r-1}, s*_i <= s_i
        return max(abs(float(D[-1])), float(np.max(-D[:-1], initial=0.0)), 0.0)

    def kkt_and_loss(alpha, alpha_star, v, Kv) -> tuple[float, float]:
        model = _ordinal_model(data, Kv, w=None, dual_coef=v, extra={})
        return (complementarity(data["svor"], alpha, alpha_star, Kv, model["thresholds"]),
                model["loss"])

    return _certify_svor_c_dual(data, solution, *_bounds(data), partial_sums, kkt_and_loss)


def check_gram(gram: Any, X: np.ndarray, kern: Any) -> np.ndarray | None:
    """``gram`` as a finite float64 ``(m, m)`` array that agrees with ``kern`` on ``X``
    (its diagonal and first column, to 1e-10 relative; ``None`` stays ``None``), or raise
    :class:`ProgramError`."""
    if gram is None:
        return None
    m = X.shape[0]
    gram = np.asarray(gram, dtype=np.float64)
    if gram.shape != (m, m):
        raise ProgramError(f"gram must be the ({m}, {m}) Gram matrix of X, got shape "
                           f"{gram.shape}")
    if not np.all(np.isfinite(gram)):
        raise ProgramError("gram contains NaN or infinite values")
    probe = np.concatenate([kern.diagonal(X), kern.columns(X, np.array([0]))[:, 0]])
    held = np.concatenate([np.diagonal(gram), gram[:, 0]])
    if not np.allclose(held, probe, rtol=1e-10, atol=1e-10 * float(np.max(np.abs(probe)))):
        raise ProgramError("gram is not the Gram matrix of X under this kernel (its "
                           "diagonal or first column differs from the kernel's)")
    return gram


def svor_dual(
    X: np.ndarray,
    y: np.ndarray,
    *,
    C: float = 1.0,
    kernel: str = "rbf",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    factor: str = "auto",
    gram: np.ndarray | None = None,
) -> Program:
    r"""Dual of the C-form SVOR (Chu & Keerthi 2005; seed 003 eq. 4.1): ``qp.chance.svor.dual``.

    The primal (4.1) is
    :math:`\min \tfrac12\|w\|^2 + C\sum_{i,j}(\xi_i^j + \xi_i^{*j})` s.t.
    :math:`w^\top\phi(x_i^j) - \theta_i \le -1 + \xi_i^j`,
    :math:`w^\top\phi(x_i^j) - \theta_{i-1} \ge 1 - \xi_i^{*j}`,
    :math:`\xi, \xi^* \ge 0`, :math:`\theta_{i-1} \le \theta_i`. With
    :math:`v = \alpha^* - \alpha` its dual is

    .. math::

        \max_{\alpha,\alpha^*}\ \sum_j(\alpha_j + \alpha^*_j) - \tfrac12 v^\top K v
        \ \text{s.t.}\ 0 \le \alpha, \alpha^* \le C,\ s^*_i \le s_i\ (i \le r-2),\
        s^*_{r-1} = s_{r-1},

    :math:`s_i = \sum_{\mathrm{rank}\le i}\alpha`,
    :math:`s^*_i = \sum_{2\le\mathrm{rank}\le i+1}\alpha^*`,
    :math:`\alpha \equiv 0` at rank :math:`r`, :math:`\alpha^* \equiv 0` at rank 1
    (the CBOR dual (4.5) with :math:`W\|\cdot\|` replaced by
    :math:`\tfrac12\|\cdot\|^2`, box :math:`[0, C]` and :math:`d = 1`;
    :math:`s_i - s^*_i = \mu_{i+1}` is the multiplier of the ordering
    :math:`\theta_i \le \theta_{i+1}`, App. C). The model is
    :math:`g(x) = \sum_j v_j k(x_j, x)`, rank :math:`1 + \#\{i : g(x) > \theta_i\}`.

    Parameters
    ----------
    X : ndarray of shape (m, n)
    y : ndarray of shape (m,)
        Integer ranks 1..r, every rank present (r >= 2).
    C : float, default=1.0
        Cost of slack, > 0.
    kernel : {"linear", "rbf", "poly"}, default="rbf"
    gamma, degree, coef0
        Kernel parameters, as in :func:`conicml.make_kernel` (the thesis's
        :math:`\zeta` is ``gamma``).
    factor : {"auto", "cholesky", "eigen"}, default="auto"
        Factor of the Gram matrix used by the generic backends (``smo-or``
        never forms one).
    gram : ndarray of shape (m, m), optional
        The kernel's Gram matrix of ``X`` when the caller already has it (a path over C
        on one data set computes it once): ``smo-or`` reads its columns instead of
        computing them, and the decoder and the certificate compute :math:`Kv` from it.
        Checked for its shape, finiteness and its diagonal and first column against the
        kernel on ``X``.

    Returns
    -------
    Program
        Objective: the dual maximum (= the optimum of (4.1)). ``data["svor"]``
        is the :class:`~conicml.contracts.svor.SVORDualData` contract.
        ``decode`` gives ``w`` (linear), ``dual_coef`` :math:`v` (inside
        ``dual``), ``scores`` :math:`g(x_j)`, ordered ``thresholds``
        :math:`\theta` (the unique midpoint rule of
        :mod:`conicml.formulations.ordinal`; thresholds are not unique at the
        optimum), ``b`` = :math:`-\theta`, the slacks, ``loss``,
        ``primal_objective`` and ``dual_objective``. The certificate is the
        box/partial-sum violation over :math:`C`, the largest complementarity
        residual at the optimal thresholds of the decoded scores
        (:func:`conicml.contracts.svor.complementarity`) and the relative gap
        :math:`(P - D)/|P|`.

    Raises
    ------
    ProgramError
        (a ``ValueError``) bad ranks (see :func:`check_ranks`), C <= 0, NaN in X,
        a precomputed kernel, an unknown factor.
    """
    X = check_matrix(X)
    ranks, r = check_ranks(y, X.shape[0])
    C = check_positive(C, "C")
    if kernel == "precomputed":
        raise ProgramError("svor_dual does not take a precomputed kernel; pass the inputs X")
    if factor not in ("auto", "cholesky", "eigen"):
        raise ProgramError(f"factor must be 'auto', 'cholesky' or 'eigen', got {factor!r}")
    kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
    data = {
        "kind": SVOR_QP_DUAL,
        "means": X,
        "ranks": ranks,
        "r": r,
        "C": float(C),
        "kernel": kern,
        "d": np.ones(X.shape[0]),
        "factor": factor,
        "selectors": _ordinal_selectors(ranks, r),
        "svor": SVORDualData(X=X, ranks=ranks, r=r, C=float(C), kernel=kern,
                             gram=check_gram(gram, X, kern)),
    }
    return _svor_program(data)


def _svor_program(data: dict) -> Program:
    return Program(SVOR_QP_DUAL, data, build=_build_svor_dual, decode=_decode_svor_dual,
                   certify=_certify_svor_dual, default_solver="smo-or",
                   description=f"SVOR dual ({data['kernel'].name} kernel, "
                   f"{data['ranks'].size} points, {data['r']} ranks, C={data['C']:g})")


def with_cost(program: Program, C: float) -> Program:
    """The same SVOR dual (inputs, ranks, kernel, Gram matrix) at another C.

    For a path over C (:func:`conicml.solve_path`): the inputs, the ranks and the Gram
    matrix are not checked again (an O(m^2) pass per value for ``gram``); the box
    :math:`[0, C]` is the only part of the program that depends on C. Takes the programs
    of :func:`svor_dual` and of :func:`~conicml.formulations.svor_implicit.svorim_dual`.

    Raises
    ------
    ProgramError
        ``program`` is not an SVOR dual program, or C <= 0.
    """
    data = dict(getattr(program, "data", {}))
    if data.get("kind") not in _PROGRAMS or "svor" not in data:
        raise ProgramError(f"with_cost needs an SVOR dual program from svor_dual() or "
                           f"svorim_dual(), got {program!r}")
    C = check_positive(C, "C")
    data.update(C=float(C), svor=dataclasses.replace(data["svor"], C=float(C)))
    return _PROGRAMS[data["kind"]](data)


#: The program builder of each SVOR dual kind (svor_implicit adds its own).
_PROGRAMS: dict[str, Any] = {SVOR_QP_DUAL: _svor_program}
