r"""Support vector machines as conic programs (seed 001, F9–F11; seed 000 ch. 2).

Convention: the decision function is :math:`f(x) = w^\top \phi(x) + b` and the
predicted class is :math:`\operatorname{sign} f(x)` (positive class ``+1``
iff :math:`f(x) \ge 0`). Labels must be exactly ``+1`` / ``-1``. The kernel enters through
a factor :math:`K = LL^\top`, never as a dense quadratic form. The primal, the dual, the
hard margin and the decoding are in the Notes of :func:`soft_margin`.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from .. import kinds
from .._utils.threads import one_blas_thread
from .._utils.validation import check_binary_labels, check_positive, check_X_y
from ..certificates.conic import certify_with
from ..certificates.kkt import bias_from_kkt, free_tolerance, solver_accuracy
from ..certificates.margin import margin_qp_certificate
from ..contracts.kernel_columns import columns_for
from ..exceptions import ConicMLWarning, ProgramError
from ..kernels import Kernel, make_kernel, psd_factor
from ..program import ConicForm, Program, require_solution
from ..solution import Residuals, Solution, Status

__all__ = [
    "bias_from_alpha",
    "decision_values",
    "hard_margin",
    "soft_margin",
    "with_cost",
]

FORMS = ("primal", "dual")


def _per_sample_costs(y: np.ndarray, C: float, class_weight: Any) -> tuple[np.ndarray, dict]:
    if class_weight is None:
        weights = {1.0: 1.0, -1.0: 1.0}
    elif isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ProgramError(
                f"class_weight must be None, 'balanced' or a dict {{+1: w, -1: w}}, "
                f"got {class_weight!r}"
            )
        n = y.size
        weights = {k: n / (2.0 * np.count_nonzero(y == k)) for k in (1.0, -1.0)}
    elif isinstance(class_weight, Mapping):
        extra = set(map(float, class_weight)) - {1.0, -1.0}
        if extra:
            raise ProgramError(f"class_weight keys must be +1 and -1, got {sorted(extra)}")
        weights = {1.0: 1.0, -1.0: 1.0}
        for k, v in class_weight.items():
            weights[float(k)] = check_positive(v, f"class_weight[{k}]")
    else:
        raise ProgramError(
            f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}"
        )
    c = np.where(y > 0, C * weights[1.0], C * weights[-1.0])
    return c, weights


def _is_sparse(X: Any) -> bool:
    return sp.issparse(X)


def _sparse_row_sq(X: Any) -> np.ndarray:
    r""":math:`\|x_i\|^2` of the rows of a CSR matrix from its stored values (no
    elementwise product matrix)."""
    sq = np.zeros(X.shape[0])
    filled = np.diff(X.indptr) > 0
    if X.nnz:
        sq[filled] = np.add.reduceat(X.data * X.data, X.indptr[:-1][filled])
    return sq


def _check_sparse_X_y(X: Any, y: Any, kernel: str) -> tuple[Any, np.ndarray]:
    """A :mod:`scipy.sparse` ``X`` as a canonical CSR matrix of finite float64 values.

    Only the linear kernel keeps ``X`` sparse (its program needs ``X`` and ``X^T`` products
    only); a kernel's Gram matrix is dense, so any other kernel asks for a dense ``X``.
    """
    if kernel != "linear":
        raise ProgramError(
            f"X is a sparse matrix ({type(X).__name__}); only kernel='linear' keeps it "
            f"sparse, got kernel={kernel!r}: pass X.toarray() for a kernel SVM")
    if len(X.shape) != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ProgramError(f"X must be 2-D with at least 1 row and 1 column, "
                           f"got shape {X.shape}")
    try:
        Xs = sp.csr_matrix(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"X must hold numeric values: {exc}") from exc
    if not Xs.has_canonical_format:  # duplicates summed on a copy, never in the caller's
        Xs = Xs.copy()
        Xs.sum_duplicates()
    if not np.all(np.isfinite(Xs.data)):
        bad = int(Xs.data.size - np.count_nonzero(np.isfinite(Xs.data)))
        raise ProgramError(f"X contains {bad} NaN or infinite value(s)")
    return Xs, check_binary_labels(y, Xs.shape[0])


def _sample_weight(sample_weight: Any, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    try:
        s = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"sample_weight must be numeric: {exc}") from exc
    if s.shape != (n,):
        raise ProgramError(f"sample_weight must have shape ({n},) to match X, got {s.shape}")
    if not np.all(np.isfinite(s)) or not np.all(s > 0):
        raise ProgramError("sample_weight must be positive and finite (a sample of weight 0 "
                           "does not enter the program: drop its row instead)")
    return s


def _common_data(X, y, C, kernel, gamma, degree, coef0, class_weight, form, factor,
                 sample_weight=None):
    sparse = _is_sparse(X)
    X, y = _check_sparse_X_y(X, y, kernel) if sparse else check_X_y(X, y)
    if form not in FORMS:
        raise ProgramError(f"form must be 'primal' or 'dual', got {form!r}")
    if factor not in ("auto", "cholesky", "eigen"):
        raise ProgramError(f"factor must be 'auto', 'cholesky' or 'eigen', got {factor!r}")
    # a sparse X has the linear kernel, to which gamma means nothing: "scale" is not
    # resolved (a pass over X for nothing)
    kern = make_kernel(kernel, X, gamma=1.0 if sparse and isinstance(gamma, str) else gamma,
                       degree=degree, coef0=coef0)
    if kern.name == "precomputed":
        # column-major: smo reads the Gram matrix a column at a time, in place
        # (contiguous columns), and the certificate's product gathers only the support
        # vectors' columns (_gram_matvec); one copy per program, shared by with_cost
        X = np.asfortranarray(X)
    hard = C is None
    if hard:
        c, weights = np.full(y.size, np.inf), {1.0: 1.0, -1.0: 1.0}
    else:
        C = check_positive(C, "C")
        c, weights = _per_sample_costs(y, C, class_weight)
        if sample_weight is not None:
            sample_weight = _sample_weight(sample_weight, y.size)
            c = c * sample_weight
    # the cost scale C max_i K(x_i, x_i): C-SVM on X is C = 1 on sqrt(C) X, so a large C is
    # a badly scaled problem like a feature at 1e8 (at C = 1e12 an interior-point solver
    # may call the primal INFEASIBLE and the dual UNBOUNDED with no hint)
    diag = (np.diag(X) if kern.name == "precomputed"
            else _sparse_row_sq(X) if sparse
            else kern.diagonal(X))
    cost_scale = math.inf if hard else float(np.max(c)) * max(float(np.max(diag)), 0.0)
    if not hard and cost_scale > COST_SCALE_LIMIT:
        feature = ""
        if kern.name != "precomputed":
            col_max = (np.asarray(abs(X).max(axis=0).todense()).ravel() if sparse
                       else np.max(np.abs(X), axis=0))
            j = int(np.argmax(col_max))
            feature = f", largest feature: column {j} with max |x| = {col_max[j]:.3g}"
        warnings.warn(
            f"badly scaled SVM: C * max_i K(x_i, x_i) = {cost_scale:.3g} > "
            f"{COST_SCALE_LIMIT:.0e} (C = {C:g}{feature}) is beyond what double precision "
            "supports: interior-point solvers may report false INFEASIBLE/UNBOUNDED "
            "statuses and SMO's gap is C-sized (a large C is the same problem as features "
            f"scaled by sqrt(C)); use C <= {_largest_C(C, cost_scale):.3g} or standardize "
            "the features, or hard_margin() if the data are separable",
            ConicMLWarning, stacklevel=3)
    return {"X": X, "y": y, "c": c, "C": C, "class_weight": weights,
            "sample_weight": sample_weight, "kernel": kern,
            "hard": hard, "form": form, "factor": factor, "cost_scale": cost_scale}


#: Largest C * max_i K(x_i, x_i) the soft-margin programs are trusted at (measured: at
#: 1e10 Clarabel calls the dual UNBOUNDED, at 1e13 the primal INFEASIBLE; 1e7 is solved).
COST_SCALE_LIMIT = 1e9


def _largest_C(C: float, cost_scale: float) -> float:
    return C * COST_SCALE_LIMIT / cost_scale


def _kernel_factor(data: Mapping[str, Any]) -> np.ndarray:
    kern: Kernel = data["kernel"]
    if kern.name == "linear":
        return data["X"]
    return psd_factor(kern.gram(data["X"]), data["factor"])


def _cost_parameter(c: np.ndarray) -> cp.Parameter:
    """The per-sample costs as a ``cp.Parameter``: a path over C re-uses the compiled problem."""
    return cp.Parameter(c.shape, nonneg=True, name="c", value=c)


def _build_primal(data: Mapping[str, Any]) -> ConicForm:
    X, y = data["X"], data["y"]
    parameters = {} if data["hard"] else {"c": _cost_parameter(data["c"])}
    b = cp.Variable(name="b")
    if data["kernel"].name == "linear":
        w = cp.Variable(X.shape[1], name="w")
        f = X @ w + b
        variables = {"w": w, "b": b}
    else:
        L = _kernel_factor(data)
        v = cp.Variable(L.shape[1], name="v")
        w = v
        f = L @ v + b
        variables = {"v": v, "b": b}
    if data["hard"]:
        margin = cp.multiply(y, f) >= 1
        objective = 0.5 * cp.sum_squares(w)
        constraints = {"margin": margin}
    else:
        xi = cp.Variable(y.size, name="xi")
        margin = cp.multiply(y, f) >= 1 - xi
        objective = 0.5 * cp.sum_squares(w) + parameters["c"] @ xi  # DPP: parameter-affine
        constraints = {"margin": margin, "xi_nonneg": xi >= 0}
        variables["xi"] = xi
    problem = cp.Problem(cp.Minimize(objective), list(constraints.values()))
    return ConicForm(problem, variables, constraints, parameters)


def _build_dual(data: Mapping[str, Any]) -> ConicForm:
    y = data["y"]
    L = _kernel_factor(data)
    alpha = cp.Variable(y.size, name="alpha")
    objective = cp.sum(alpha) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, alpha))
    constraints = {"alpha_nonneg": alpha >= 0, "balance": y @ alpha == 0}
    parameters = {}
    if not data["hard"]:
        parameters["c"] = _cost_parameter(data["c"])
        constraints["alpha_upper"] = alpha <= parameters["c"]
    problem = cp.Problem(cp.Maximize(objective), list(constraints.values()))
    return ConicForm(problem, {"alpha": alpha}, constraints, parameters)


#: The data ``_build_primal`` / ``_build_dual`` read besides the costs ``c`` (the
#: ``cp.Parameter`` "c"): programs equal in these differ only in the parameter's value.
_STRUCTURE_KEYS = ("X", "y", "kernel", "factor", "hard", "form")


def bias_from_alpha(alpha: np.ndarray, y: np.ndarray, c: np.ndarray,
                    grad: np.ndarray, accuracy: float = 0.0) -> float:
    r"""Bias :math:`b` from the KKT conditions of the dual, using free SVs only.

    With :math:`G = Q\alpha - \mathbf 1` (the gradient of the minimised dual,
    :math:`Q_{ij} = y_iy_jK_{ij}`), :math:`b` is the average of
    :math:`-y_iG_i` over the free support vectors :math:`0 < \alpha_i < c_i`
    (seed 001 eq. 2.29, corrected per pitfall P-S1), else the midpoint of the
    interval the KKT conditions allow (see :func:`conicml.certificates.kkt.bias_from_kkt`).
    """
    return bias_from_kkt(alpha, y, c, -y * grad, accuracy)


def _model_from_alpha(data: Mapping[str, Any], alpha: np.ndarray,
                      b: float | None = None, accuracy: float = 0.0) -> dict:
    X, y, c, kern = data["X"], data["y"], data["c"], data["kernel"]
    alpha = np.clip(alpha, 0.0, c)  # remove round-off outside the box
    dual_coef = alpha * y
    support = np.flatnonzero(alpha > free_tolerance(alpha))
    if kern.name == "linear":
        f_no_bias = X @ (X.T @ dual_coef)
    elif kern.name == "precomputed":
        f_no_bias = _gram_matvec(X, dual_coef)
    else:  # the certificate's product, with the entries below free_tolerance dropped
        coef = np.zeros_like(dual_coef)
        coef[support] = dual_coef[support]
        f_no_bias = _kernel_matvec(data, coef)
    if b is None:
        b = bias_from_alpha(alpha, y, c, y * f_no_bias - 1.0, accuracy)
    model = {"alpha": alpha, "dual_coef": dual_coef, "support": support, "b": float(b)}
    if kern.name == "linear":
        model["w"] = X.T @ dual_coef
    return model


def _decode_dual(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, kinds.SVM_DUAL)
    model = _model_from_alpha(data, np.asarray(solution.values["alpha"], dtype=float),
                              accuracy=solver_accuracy(solution))
    return _reconcile_with_multipliers(data, solution, model)


def _reconcile_with_multipliers(data: Mapping[str, Any], solution: Solution,
                                model: dict) -> dict:
    r"""Check the α-decoded model against the solver's multipliers; repair it if it fails.

    The multipliers of the dual's own constraints are the SVM primal: ``balance``
    (:math:`y^\top\alpha = 0`) is :math:`b`, and ``alpha_nonneg`` / ``alpha_upper``
    (:math:`\mu, \xi`) give the training decision values
    :math:`f_i = y_i(1 + \mu_i - \xi_i)` (stationarity :math:`Q\alpha - 1 - \mu + \xi
    + by = 0`). Decoding from :math:`\alpha` instead computes :math:`f = K(y\circ\alpha)`,
    which multiplies α's round-off by :math:`\|K\|`: with one feature at
    :math:`10^8` the α of an interior-point solver is right to 1e-10 and
    :math:`f` wrong by 4, the bias 3.85 instead of -0.19 and the training accuracy
    0.35 with status OPTIMAL. When the two disagree by more than 1e-2 (margins are
    scale-free, 1 at a free support vector), :math:`b` is taken from the
    multiplier and, for the linear kernel, :math:`w` is refitted to those decision
    values by a column-equilibrated least-squares solve (exact when :math:`X` has
    full column rank; the minimum-norm :math:`w = X^\top(y\circ\alpha)` otherwise).
    """
    duals = solution.duals
    if "balance" not in duals or "alpha_nonneg" not in duals:
        return model  # e.g. SMO: exact bounds, its own bias
    y = data["y"]
    mu = np.asarray(duals["alpha_nonneg"], dtype=float)
    xi = np.asarray(duals.get("alpha_upper", np.zeros(y.size)), dtype=float)
    b = float(np.asarray(duals["balance"], dtype=float))
    if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(xi)) and np.isfinite(b)):
        return model
    f_mult = y * (1.0 + mu - xi)
    f_alpha = decision_values(data, model, data["X"]) if data["kernel"].name != "precomputed" \
        else _gram_matvec(data["X"], model["dual_coef"]) + model["b"]
    tol = 1e-2 * max(1.0, float(np.max(np.abs(f_mult))))
    if float(np.max(np.abs(f_alpha - f_mult))) <= tol:
        return model
    model = dict(model)
    model["b"] = b
    model["decoded_from"] = "multipliers"
    if "w" in model and _is_sparse(data["X"]):
        model["w"] = _sparse_refit(data["X"], f_mult - b)
    elif "w" in model:
        X = data["X"]
        target = f_mult - b
        cs = np.linalg.norm(X, axis=0)
        cs[cs == 0] = 1.0
        if np.linalg.matrix_rank(X / cs) == X.shape[1]:
            w = np.linalg.lstsq(X / cs, target, rcond=None)[0] / cs
        else:
            w = np.linalg.lstsq(X, target, rcond=None)[0]
        model["w"] = w
    return model


def _sparse_refit(X: Any, target: np.ndarray) -> np.ndarray:
    r""":math:`w` fitted to the decision values ``target`` on a sparse ``X``: the
    column-equilibrated least-squares solution by LSQR (the minimum-norm one from
    :math:`w = 0` when :math:`X` has dependent columns), the sparse twin of the dense
    refit of :func:`_reconcile_with_multipliers`."""
    from scipy.sparse.linalg import lsqr

    cs = np.sqrt(np.bincount(X.indices, weights=X.data * X.data, minlength=X.shape[1]))
    cs[cs == 0] = 1.0
    scaled = X @ sp.diags(1.0 / cs)
    return lsqr(scaled, target, atol=1e-14, btol=1e-14, iter_lim=20 * X.shape[1])[0] / cs


def _decode_primal(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, kinds.SVM_PRIMAL)
    if "margin" not in solution.duals:
        raise ProgramError(
            f"solver {solution.solver!r} returned no multipliers for the margin constraints; "
            "the primal decode needs them for the dual coefficients"
        )
    alpha = np.maximum(np.asarray(solution.duals["margin"], dtype=float), 0.0)
    model = _model_from_alpha(data, alpha, b=float(solution.values["b"]))
    if "w" in solution.values:
        model["w"] = np.asarray(solution.values["w"], dtype=float)
    return model


def _explain(data: Mapping[str, Any], status: Status) -> str:
    if not data["hard"] and status in (Status.INFEASIBLE, Status.INFEASIBLE_INACCURATE,
                                       Status.UNBOUNDED, Status.UNBOUNDED_INACCURATE,
                                       Status.SOLVER_ERROR):
        # a soft-margin primal is always feasible and its dual bounded: a numerical failure
        scale = data.get("cost_scale", math.nan)
        advice = (f"C * max_i K(x_i, x_i) = {scale:.3g} exceeds {COST_SCALE_LIMIT:.0e}: "
                  f"use C <= {_largest_C(data['C'], scale):.3g} or hard_margin() if the "
                  "data are separable" if scale > COST_SCALE_LIMIT
                  else "rescale X (standardize the features) or try another solver")
        return ("a soft-margin SVM is always feasible and bounded, so this status is a "
                f"numerical failure; {advice}")
    if data["hard"] and status in (Status.INFEASIBLE, Status.INFEASIBLE_INACCURATE,
                                   Status.UNBOUNDED, Status.UNBOUNDED_INACCURATE):
        space = "" if data["kernel"].name == "linear" else " in the kernel's feature space"
        return f"the data are not separable{space}: use soft_margin with a finite C"
    return ""


def _unique(data: Mapping[str, Any], model: Mapping[str, Any]) -> dict:
    """What :func:`conicml.compare` judges: :math:`w^\\top\\phi(x_i)` on the training points.

    :math:`w` is unique (the objective is strictly convex in it), so these
    values are; ``alpha`` (ties) and ``b`` (no free support vector) need not be.
    """
    return {"f_train_no_bias": decision_values(data, model, data["X"]) - model["b"]}


def _gram_matvec(K: np.ndarray, v: np.ndarray) -> np.ndarray:
    r""":math:`K v` for a precomputed Gram matrix, reading only the columns of the nonzero
    entries of ``v`` when they are contiguous in memory (column-major ``K``) and few.

    A dual point :math:`v = \alpha\circ y` is sparse: gathering its :math:`n_{SV}`
    columns reads :math:`n\,n_{SV}` values instead of :math:`n^2`; in row-major order the
    gather is strided and the dense product is the faster one. Same product either way.
    """
    if K.flags.f_contiguous and not K.flags.c_contiguous:
        nz = np.flatnonzero(v)
        if 2 * nz.size < K.shape[1]:
            return K[:, nz] @ v[nz]
    return K @ v


PRODUCT_BLOCK = 2**16  # kernel values per block of rows in _cross_matvec (512 kB)


def _cross_matvec(kernel: Kernel, A: np.ndarray, B: np.ndarray, w: np.ndarray) -> np.ndarray:
    r""":math:`K(A, B)\,w`, a block of rows of ``A`` at a time (never the whole matrix).

    A block of :data:`PRODUCT_BLOCK` kernel values against every row of ``B`` is one
    matrix product (a long inner dimension: the rows of ``B``, the support vectors)
    and, for the RBF kernel, three in-place passes and one ``exp``:
    :math:`-\gamma\|a - b\|^2 = 2\gamma\,a^\top b - \gamma\|a\|^2 - \gamma\|b\|^2`,
    clipped at 0. The buffer is reused from block to block.
    """
    nA, m = A.shape[0], B.shape[0]
    out = np.zeros(nA)
    if m == 0 or nA == 0:
        return out
    rows = max(8, min(nA, PRODUCT_BLOCK // m))
    if kernel.name != "rbf":
        for s in range(0, nA, rows):
            out[s:s + rows] = np.asarray(kernel(A[s:s + rows], B), dtype=float) @ w
        return out
    gamma = float(kernel.gamma)
    BT = np.ascontiguousarray(B.T) * (2.0 * gamma)
    sqA = np.einsum("ij,ij->i", A, A) * gamma
    sqB = np.einsum("ij,ij->i", B, B) * gamma
    buf = np.empty((rows, m))
    for s in range(0, nA, rows):
        e = min(s + rows, nA)
        blk = buf[:e - s]
        np.matmul(A[s:e], BT, out=blk)
        blk -= sqA[s:e, None]
        blk -= sqB[None, :]
        np.minimum(blk, 0.0, out=blk)
        np.exp(blk, out=blk)
        np.matmul(blk, w, out=out[s:e])
    return out


# the last K v over a program's training points: (the column store's serial, v, K v)
_LAST_PRODUCT: tuple | None = None


def _kernel_matvec(data: Mapping[str, Any], v: np.ndarray, *,
                   limit_threads: bool = True) -> np.ndarray:
    r""":math:`K v` over the training points, from the program's data.

    Only the columns of the nonzero entries of ``v`` are evaluated: for a dual point
    :math:`v = \alpha\circ y` that is :math:`O(n\,n_{SV})` kernel values instead of
    :math:`O(n^2)`, each column once per data set: the columns are those of this thread's
    store of the program's kernel applied to the program's ``X``
    (:func:`conicml.contracts.kernel_columns.columns_for`, found again only for equal
    inputs and kernel; smo's warm start along a path fills the same store). The
    certificate, the decoder (the bias) and the training decision values all need this
    product for the same :math:`v` (or the same :math:`v` with its smallest entries
    dropped): the last product is kept, keyed by the store and ``v``, and a ``v``
    differing from it in at most an eighth of its nonzeros is corrected with those
    columns only. ``limit_threads=False``: the caller already runs BLAS on one thread.
    """
    global _LAST_PRODUCT
    X, kernel = data["X"], data["kernel"]
    if not _is_sparse(X):
        X = np.asarray(X)
    if getattr(kernel, "name", None) == "precomputed":
        return _gram_matvec(X, v)
    if getattr(kernel, "name", None) == "linear":
        return X @ (X.T @ v)  # K v = X (X'v): O(nd), no Gram column
    v = np.asarray(v, dtype=float)
    nz = np.flatnonzero(v)
    # single-threaded BLAS: the blocks are thin, waking a thread pool costs more
    with one_blas_thread() if limit_threads else contextlib.nullcontext():
        if _is_sparse(X):
            return _cross_matvec(kernel, X, X[nz], v[nz])
        store = columns_for(kernel, X)
        last = _LAST_PRODUCT
        if last is not None and last[0] == store.serial and last[1].shape == v.shape:
            diff = np.flatnonzero(v != last[1])
            if 8 * diff.size <= nz.size:
                dv = np.zeros(v.shape)
                dv[diff] = v[diff] - last[1][diff]
                g = last[2] + store.matvec(dv, diff)
                _LAST_PRODUCT = (store.serial, v.copy(), g.copy())
                return g
        g = store.matvec(v, nz)
    _LAST_PRODUCT = (store.serial, v.copy(), g.copy())
    return g


def _certify_dual(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the soft-margin dual from :math:`\alpha` alone, in :math:`O(n^2)`.

    With :math:`v = \alpha\circ y`, :math:`g = Kv` (kernel rows in blocks, never a
    compiled problem):

    * ``primal``: largest violation of :math:`0 \le \alpha \le c`,
      :math:`y^\top\alpha = 0`, relative to :math:`\max c`;
    * ``dual``: the same relative gap, the optimality measure (LIBSVM's pair measure
      :math:`m(\alpha) - M(\alpha)` misreads interior-point points, whose
      multipliers sit just inside their bounds);
    * ``gap``: :math:`(P - D)/\max(1, |P|)` with the dual value
      :math:`D = 1^\top\alpha - \tfrac12 v^\top g` and the primal value
      :math:`P = \tfrac12 v^\top g + \sum c_i\xi_i` of the hyperplane the point
      defines (bias from the KKT conditions): weak duality makes it an upper bound
      on the suboptimality of both; also the mismatch between the reported objective
      and :math:`D`.
    """
    # single-threaded BLAS throughout: waking a thread pool costs more than the O(n) dots
    with one_blas_thread():
        return _certify_dual_point(data, solution)


def _certify_dual_point(data: Mapping[str, Any], solution: Solution) -> Residuals:
    """The body of :func:`_certify_dual`."""
    y = np.asarray(data["y"], dtype=float)
    c = np.asarray(data["c"], dtype=float)
    alpha = np.asarray(solution.values["alpha"], dtype=float)
    scale = float(np.max(c)) if c.size else 1.0
    primal = max(abs(float(y @ alpha)), float(np.max(-alpha, initial=0.0)),
                 float(np.max(alpha - c, initial=0.0))) / scale
    a = np.clip(alpha, 0.0, c)
    v = a * y
    g = _kernel_matvec(data, v, limit_threads=False)  # inside _certify_dual's limit
    grad = y * g - 1.0  # gradient of 1/2 a'Qa - 1'a
    score = -y * grad  # LIBSVM's -y_t G_t
    b = bias_from_kkt(a, y, c, score, solver_accuracy(solution))
    xi = np.maximum(0.0, 1.0 - y * (g + b))
    quad = float(v @ g)
    P = 0.5 * quad + float(c @ xi)
    D = float(a.sum()) - 0.5 * quad
    gap = max(P - D, 0.0) / max(1.0, abs(P))
    claimed = float(solution.objective)  # the solver's reported value must be the point's
    gap = max(gap, abs(claimed - D) / max(1.0, abs(D)) if claimed == claimed else 0.0)
    return Residuals(primal=primal, dual=gap, gap=gap, source="recomputed")


def _certify_primal(data: Mapping[str, Any], solution: Solution) -> Residuals:
    r"""Certificate of the (soft- or hard-margin) primal from :math:`(w, b, \xi)`, in O(data).

    No cvxpy problem is built: with :math:`Z = X` (linear) or the kernel factor
    :math:`L` (the formulation's own :func:`conicml.kernels.psd_factor`), the dual
    point :math:`\alpha` implied by the margins :math:`m_i = y_i(z_i^\top w + b)`
    (:math:`\alpha_i = c_i` below the margin, 0 above, a bounded least-squares fit of
    :math:`w = Z^\top(\alpha\circ y)` on the band around it, clipped to
    :math:`[0, c_i]` and balanced to :math:`y^\top\alpha = 0` — as Pegasos builds it,
    seed 001 eqs. 2.27, 2.33–2.35) is dual feasible, so its dual value
    :math:`D(\alpha) = 1^\top\alpha - \tfrac12\|Z^\top(\alpha\circ y)\|^2`
    (eq. 2.27) bounds the optimum from below. ``primal``: the largest violation of
    :math:`y_if_i \ge 1 - \xi_i`, :math:`\xi \ge 0` (eqs. 2.20–2.21), relative;
    ``dual``: :math:`\tfrac12\|w - Z^\top(\alpha\circ y)\|^2 / P` (the stationarity
    part of the gap, eq. 2.28); ``gap``: the relative duality gap :math:`(P - D)/P`
    of the point's value :math:`P = \tfrac12\|w\|^2 + c^\top\xi` (eq. 2.19) and the
    mismatch of the reported objective (see
    :func:`conicml.certificates.margin.margin_qp_certificate`).
    """
    values = solution.values
    name = "w" if data["kernel"].name == "linear" else "v"
    try:
        w = np.asarray(values[name], dtype=float).ravel()
        b = float(np.asarray(values["b"], dtype=float))
        xi = None if data["hard"] else np.asarray(values["xi"], dtype=float).ravel()
    except (KeyError, TypeError, ValueError):
        return Residuals(primal=math.inf, dual=math.nan, gap=math.nan, source="recomputed")
    y, c = np.asarray(data["y"], dtype=float), np.asarray(data["c"], dtype=float)
    Z = _kernel_factor(data)
    if _is_sparse(Z):
        if w.shape != (Z.shape[1],) or xi is None or xi.shape != y.shape or not (
                np.all(np.isfinite(w)) and math.isfinite(b) and np.all(np.isfinite(xi))):
            return Residuals(primal=math.inf, dual=math.nan, gap=math.nan,
                             source="recomputed")
        return _light_margin_certificate(Z, y, c, w, b, xi, float(solution.objective),
                                         solution.duals.get("margin"))
    Z = np.asarray(Z, dtype=float)
    if (w.shape != (Z.shape[1],) or (xi is not None and xi.shape != y.shape)
            or not (np.all(np.isfinite(w)) and math.isfinite(b)
                    and (xi is None or np.all(np.isfinite(xi))))):
        return Residuals(primal=math.inf, dual=math.nan, gap=math.nan, source="recomputed")
    res, _ = margin_qp_certificate(Z, y, c, w, b, xi, float(solution.objective))
    multipliers = solution.duals.get("margin")
    if xi is None or multipliers is None or res.max() <= 0.0:
        return res
    # the solver's own multipliers are one more dual candidate (the band candidates skip
    # the wide bands of an inexact point of many samples, where this one may still prove
    # the gap): the better of the two certificates, both valid bounds
    light = _light_margin_certificate(Z, y, c, w, b, xi, float(solution.objective),
                                      multipliers)
    return light if light.max() < res.max() else res


def _light_margin_certificate(X: Any, y: np.ndarray, c: np.ndarray, w: np.ndarray,
                               b: float, xi: np.ndarray, claimed: float,
                               multipliers: Any) -> Residuals:
    r"""The soft-margin primal's certificate in :math:`O(\mathrm{nnz})` (a sparse ``X``;
    beside the band candidates on a dense one).

    The three numbers of :func:`conicml.certificates.margin.margin_qp_certificate`
    (``R=None``) from dual candidates that need no dense block of ``X``: :math:`\alpha = 0`,
    the bound pattern of the margins (:math:`\alpha_i = c_i` where
    :math:`m_i < 1`, else 0) and the solver's own margin multipliers if it returned any,
    each clipped to :math:`[0, c]` and balanced to :math:`y^\top\alpha = 0` (the heavier
    class scaled down): every candidate is dual feasible, so its value
    :math:`D(\alpha) = 1^\top\alpha - \tfrac12\|X^\top(\alpha\circ y)\|^2` (seed 001
    eq. 2.27) bounds the optimum from below whoever proposed it; the band least squares
    of the dense certificate (a dense block of rows) is left out.
    """
    margin = y * (np.asarray(X @ w).ravel() + b)
    viol = np.maximum(0.0, 1.0 - xi - margin) / np.maximum.reduce(
        [np.ones_like(margin), np.abs(margin), np.abs(xi)])
    primal = max(float(np.max(viol, initial=0.0)),
                 float(np.max(-xi, initial=0.0)) / max(1.0, float(np.max(xi, initial=0.0))))
    P = 0.5 * float(w @ w) + float(c @ np.maximum(xi, 0.0))
    scale = max(abs(P), np.finfo(float).tiny)
    candidates = [np.zeros_like(y), np.where(margin < 1.0, c, 0.0)]
    if multipliers is not None:
        m = np.asarray(multipliers, dtype=float).ravel()
        if m.shape == y.shape and np.all(np.isfinite(m)):
            candidates.append(np.clip(m, 0.0, c))
    best = (math.inf, math.inf)
    for alpha in candidates:
        s_pos, s_neg = float(alpha[y > 0].sum()), float(alpha[y < 0].sum())
        if s_pos > s_neg:
            alpha = np.where(y > 0, alpha * (s_neg / s_pos), alpha)
        elif s_neg > s_pos:
            alpha = np.where(y < 0, alpha * (s_pos / s_neg), alpha)
        u = np.asarray(X.T @ (alpha * y)).ravel()
        D = float(alpha.sum()) - 0.5 * float(u @ u)
        dw = w - u
        cand = (0.5 * float(dw @ dw) / scale, max(P - D, 0.0) / scale)
        if max(cand) < max(best):
            best = cand
    dual, gap = best
    gap = max(gap, abs(claimed - P) / scale) if math.isfinite(claimed) else math.inf
    return Residuals(primal=primal, dual=dual, gap=gap, source="recomputed")


def _program(data: dict, description: str) -> Program:
    form = data["form"]
    kind = {(False, "primal"): kinds.SVM_PRIMAL, (False, "dual"): kinds.SVM_DUAL,
            (True, "primal"): kinds.SVM_HARD_PRIMAL, (True, "dual"): kinds.SVM_HARD_DUAL}
    return Program(
        kind[data["hard"], form],
        data,
        build=_build_primal if form == "primal" else _build_dual,
        certify=(_certify_primal if form == "primal"
                 else _certify_dual if not data["hard"] else certify_with(_build_dual)),
        decode=_decode_primal if form == "primal" else _decode_dual,
        default_solver="clarabel",
        description=description,
        explain=_explain,
        unique=_unique,
        parameter_keys=None if data["hard"] else {"c": "c"},
        structure_keys=() if data["hard"] else _STRUCTURE_KEYS,
    )


def soft_margin(
    X: np.ndarray,
    y: np.ndarray,
    C: float = 1.0,
    *,
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    class_weight: Mapping[float, float] | str | None = None,
    form: str = "primal",
    factor: str = "auto",
    sample_weight: np.ndarray | None = None,
) -> Program:
    """Soft-margin SVM (C-SVC) as a conic program.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Training inputs; for ``kernel="precomputed"`` the (n, n) Gram matrix. With
        ``kernel="linear"`` a :mod:`scipy.sparse` matrix is kept sparse (stored as CSR)
        through the program, its certificate and its decoding.
    y : ndarray of shape (n_samples,)
        Labels, exactly +1 or -1, both present.
    C : float, default=1.0
        Cost of a unit of slack (> 0).
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
    gamma : float or {"scale", "auto"}, default="scale"
        As in :class:`sklearn.svm.SVC`.
    degree : int, default=3
    coef0 : float, default=0.0
    class_weight : dict {+1: w, -1: w} or "balanced", optional
        Per-class cost multipliers, :math:`C_\\pm = C\\,\\omega_\\pm`.
    form : {"primal", "dual"}, default="primal"
        Program kind ``"qp.svm.primal"`` or ``"qp.svm.dual"`` (the latter is
        accepted by the specialized ``smo`` solver).
    factor : {"auto", "cholesky", "eigen"}, default="auto"
        How the Gram matrix is factored for non-linear kernels
        (:func:`conicml.kernels.psd_factor`).
    sample_weight : ndarray of shape (n_samples,), optional
        Positive per-sample cost multipliers :math:`s_i`: :math:`c_i = C\\,\\omega_{y_i}s_i`.

    Returns
    -------
    Program
        ``decode`` gives ``{"alpha", "dual_coef", "support", "b"}`` plus ``"w"``
        for the linear kernel.

    Raises
    ------
    ProgramError
        Shape mismatch, NaN/inf, labels not in {-1, +1}, a single class,
        C <= 0, unknown kernel/form.

    Notes
    -----
    Soft margin, primal (seed 001 eqs. 2.19–2.21), with per-sample costs
    :math:`c_i = C\\,\\omega_{y_i}` (class weights; the "biased SVM" of seed 003 ch. 2
    has :math:`C_+ \\ne C_-`):

    .. math::

        \\min_{w,b,\\xi}\\ \\tfrac12\\|w\\|_2^2 + \\sum_i c_i \\xi_i
        \\quad\\text{s.t.}\\quad y_i(w^\\top x_i + b) \\ge 1 - \\xi_i,\\ \\xi_i \\ge 0.

    With a non-linear kernel the primal is written over the span of the data: with
    a factor :math:`K = L L^\\top` (:func:`conicml.kernels.psd_factor`) and
    :math:`v = L^\\top u`, :math:`f(x_i) = (Lv)_i + b` and :math:`\\|w\\|^2 = \\|v\\|^2`.

    Dual (eqs. 2.27 and 2.30):

    .. math::

        \\max_\\alpha\\ \\mathbf 1^\\top\\alpha - \\tfrac12\\|L^\\top (y\\circ\\alpha)\\|_2^2
        \\quad\\text{s.t.}\\quad 0 \\le \\alpha_i \\le c_i,\\ y^\\top\\alpha = 0,

    with :math:`L = X` for the linear kernel (no Gram matrix is formed). The kernel
    thus enters through a factor, never as a dense quadratic form: cvxpy gives the
    squared norm to ECOS as a second-order cone and to Clarabel, SCS and OSQP as a
    sum of squares. Both forms report the same optimal value (primal value = dual
    value), so their objectives can be compared directly.

    Hard margin (eqs. 2.17–2.18): the same without :math:`\\xi` (primal) or with
    :math:`c_i = +\\infty` (dual); on data that is not linearly separable (in
    feature space) the primal is INFEASIBLE and the dual UNBOUNDED.

    Decoding: :math:`w = \\sum_i \\alpha_i y_i x_i` (eq. 2.28, linear kernel only),
    ``dual_coef`` :math:`= \\alpha\\circ y`, ``support`` :math:`= \\{i : \\alpha_i > 0\\}`
    and the bias from the *free* support vectors :math:`0 < \\alpha_i < c_i` only
    (eq. 2.29 with the correction of errata S001-S1); see
    :func:`bias_from_alpha`.
    """
    if C is None:
        raise ProgramError("C must be a positive number; use hard_margin() for C = infinity")
    data = _common_data(X, y, C, kernel, gamma, degree, coef0, class_weight, form, factor,
                        sample_weight)
    return _program(data, f"soft-margin SVM ({kernel} kernel, C={data['C']:g}, {form})")


def with_cost(program: Program, C: float) -> Program:
    """The same soft-margin program (inputs, kernel, class weights, form) with another C.

    For a path over C (:func:`conicml.solve_path`): the inputs are not validated again and
    the kernel's diagonal is not recomputed (the cost scale is rescaled), which for a
    precomputed Gram matrix of ``n`` samples saves an :math:`O(n^2)` check per value.

    Raises
    ------
    ProgramError
        ``program`` is not a soft-margin SVM program of :func:`soft_margin`, or C <= 0.
    """
    data = dict(getattr(program, "data", {}))
    if data.get("hard", True) or "class_weight" not in data or "cost_scale" not in data:
        raise ProgramError("with_cost needs a soft-margin SVM program from soft_margin(), "
                           f"got {program!r}")
    C = check_positive(C, "C")
    weights, y = data["class_weight"], data["y"]
    c = np.where(y > 0, C * weights[1.0], C * weights[-1.0])
    if data.get("sample_weight") is not None:
        c = c * data["sample_weight"]
    cost_scale = data["cost_scale"] / float(np.max(data["c"])) * float(np.max(c))
    kern: Kernel = data["kernel"]
    if cost_scale > COST_SCALE_LIMIT:  # soft_margin words the warning
        return soft_margin(data["X"], y, C, kernel=kern.name, gamma=kern.gamma,
                           degree=kern.degree, coef0=kern.coef0, class_weight=dict(weights),
                           form=data["form"], factor=data["factor"],
                           sample_weight=data.get("sample_weight"))
    data.update(c=c, C=C, cost_scale=cost_scale)
    return _program(data, f"soft-margin SVM ({kern.name} kernel, C={C:g}, {data['form']})")


def hard_margin(
    X: np.ndarray,
    y: np.ndarray,
    *,
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    form: str = "primal",
    factor: str = "auto",
) -> Program:
    """Hard-margin SVM (seed 001 eqs. 2.17–2.18): kinds ``qp.svm.hard.primal|dual``.

    Infeasible (primal) or unbounded (dual) when the data are not separable
    in the kernel's feature space; the status says so, nothing is raised.
    Parameters as in :func:`soft_margin`.
    """
    if _is_sparse(X):
        raise ProgramError(
            f"X is a sparse matrix ({type(X).__name__}); the hard-margin SVM takes a dense "
            "X: pass X.toarray(), or soft_margin() with a finite C keeps it sparse")
    data = _common_data(X, y, None, kernel, gamma, degree, coef0, None, form, factor)
    return _program(data, f"hard-margin SVM ({kernel} kernel, {form})")


def decision_values(data: Mapping[str, Any], model: Mapping[str, Any],
                    X_new: np.ndarray) -> np.ndarray:
    """Decision values :math:`f(x) = \\sum_i \\alpha_i y_i k(x_i, x) + b` of a decoded model.

    ``data`` is ``program.data``; ``X_new`` are new inputs (for a precomputed
    kernel: kernel values against all training samples, shape (m, n)).
    """
    if "w" in model:
        return X_new @ model["w"] + model["b"]
    support = model["support"]
    kern: Kernel = data["kernel"]
    if kern.name == "precomputed":
        return X_new[:, support] @ model["dual_coef"][support] + model["b"]
    X = np.asarray(data["X"])
    coef = model["dual_coef"][support]
    if _is_sparse(X_new):
        return kern(X_new, X[support]) @ coef + model["b"]
    if X_new is X or (np.shape(X_new) == X.shape and np.array_equal(X_new, X)):
        v = np.zeros(X.shape[0])  # the training points: the decoder's product
        v[support] = coef
        return _kernel_matvec(data, v) + model["b"]
    return _cross_matvec(kern, np.asarray(X_new, dtype=float), X[support], coef) + model["b"]


