r"""Dual coordinate descent for the linear soft-margin SVM (LIBLINEAR's method), exact bias.

Hsieh, Chang, Lin, Keerthi and Sundararajan, "A dual coordinate descent method for
large-scale linear SVM", ICML 2008 (Algorithm 1 with the shrinking of Algorithm 3),
with the bias left unregularised by the method of multipliers (so the program is the
SVM's of kinds ``qp.svm.dual`` / ``qp.svm.primal``, not LIBLINEAR's). It stops when the
certified relative duality gap :math:`(P - D)/\max(1, |P|) \le` ``tol``; the step, the
bias and the certificate are in the Notes of :func:`solve_dcd`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .. import kinds
from .._utils.threads import one_blas_thread
from ..certificates import squared_hinge
from ..certificates.kkt import bias_from_kkt
from ..certificates.margin import margin_qp_certificate
from ..exceptions import OptionError, SolverError
from ..kernels import psd_factor
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._options import check_common, load_engine
from ._svm_data import check_svm_arrays
from ._warm import dcd_alpha

__all__ = ["solve_dcd"]

#: Epochs between two returns to Python (time limit, max_iter) and between two gap checks
#: inside a subproblem (a check costs about three passes over X: balance, w, margins).
_CHECK_EVERY = 25
#: ``center="auto"`` centres the rows when :math:`\|\mu\|^2` exceeds this fraction of the
#: mean squared distance to the mean.
_CENTER_RATIO = 0.1
#: The first subproblem's projected-gradient tolerance, relative to max(1, max_i c_i)
#: (LIBLINEAR's default eps = 0.1 for the dual solvers); it shrinks after every
#: subproblem whose point is not yet certified.
_EPS0 = 0.1
_EPS_SHRINK = 0.3


_KINDS = (kinds.SVM_DUAL, kinds.SVM_PRIMAL, kinds.SVM_L2_DUAL, kinds.SVM_L2_PRIMAL)
_L2 = (kinds.SVM_L2_DUAL, kinds.SVM_L2_PRIMAL)
_PRIMAL = (kinds.SVM_PRIMAL, kinds.SVM_L2_PRIMAL)


def _data(program: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """(Z as a C-contiguous array or a CSR matrix, y, c) of a soft-margin SVM.

    ``Z`` is ``X`` for the linear kernel, else the kernel factor :math:`L`.
    """
    if program.kind not in _KINDS:
        raise SolverError(f"dcd: accepts programs of kind {', '.join(map(repr, _KINDS))}, "
                          f"got {program.kind!r}")
    data = program.data
    for key in ("X", "y", "c", "kernel"):
        if key not in data:
            raise SolverError(f"dcd: program data has no {key!r}")
    if data.get("hard", False) or np.any(np.isinf(np.asarray(data["c"], dtype=float))):
        raise SolverError("dcd: needs finite costs (soft margin); for the hard margin "
                          "use a generic solver such as 'clarabel'")
    X = data["X"]
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        sp = None
    if sp is not None and sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if not X.has_canonical_format:  # duplicates summed on a copy, never in place
            X = X.copy()
            X.sum_duplicates()
        values = X.data
    else:
        X = values = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(data["y"], dtype=np.float64)
    c = np.asarray(data["c"], dtype=np.float64)
    check_svm_arrays("dcd", X, y, c, values=values)
    kernel = data["kernel"]
    if getattr(kernel, "name", None) != "linear":
        # a kernel SVM is the linear one on the rows of a factor K = L L' (the
        # formulation's own factor, conicml.kernels.psd_factor): O(n^3) to form
        dense = X.toarray() if hasattr(X, "toarray") else X
        X = np.ascontiguousarray(psd_factor(kernel.gram(dense), data.get("factor", "auto")),
                                 dtype=np.float64)
    return X, y, c


def _epochs_numpy(sparse, X, data, indices, indptr, y, U, Dii, QD, xmu, mumu, alpha, w,
                  index, state, lin, rho, eps, max_epochs, rng):
    """The NumPy twin of :func:`conicml.solvers._dcd_numba.epochs` (same algorithm)."""
    n = y.shape[0]
    active = int(state[0])
    PGmax_old, PGmin_old, sy, wmu = state[1], state[2], state[3], state[4]
    spread, done, converged = math.inf, 0, False
    for _ in range(max_epochs):
        done += 1
        index[:active] = index[:active][rng.permutation(active)]
        PGmax, PGmin = -math.inf, math.inf
        s = 0
        while s < active:
            i = index[s]
            yi = y[i]
            if sparse:
                lo, hi = indptr[i], indptr[i + 1]
                cols, vals = indices[lo:hi], data[lo:hi]
                f = float(vals @ w[cols])
            else:
                f = float(X[i] @ w)
            a = alpha[i]
            f += sy * (mumu - xmu[i]) - wmu  # the row centred implicitly
            G = yi * (f + lin + rho * sy) - 1.0 + Dii[i] * a
            PG = 0.0
            if a == 0.0:
                if G > PGmax_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                PG = min(G, 0.0)
            elif a == U[i]:
                if G < PGmin_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                PG = max(G, 0.0)
            else:
                PG = G
            PGmax = max(PGmax, PG)
            PGmin = min(PGmin, PG)
            if abs(PG) > 1e-12:
                new = min(max(a - G / QD[i], 0.0), U[i])
                d = (new - a) * yi
                alpha[i] = new
                if sparse:
                    w[cols] += d * vals
                else:
                    w += d * X[i]
                wmu += d * xmu[i]
                sy += d
            s += 1
        spread = PGmax - PGmin
        if spread <= eps:
            if active == n:
                converged = True
                break
            active = n
            PGmax_old, PGmin_old = math.inf, -math.inf
            continue
        PGmax_old = PGmax if PGmax > 0.0 else math.inf
        PGmin_old = PGmin if PGmin < 0.0 else -math.inf
    state[0], state[1], state[2], state[3], state[4] = active, PGmax_old, PGmin_old, sy, wmu
    return done, spread, converged


def _balanced(alpha: np.ndarray, y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``alpha`` made to satisfy :math:`y^\\top\\alpha = 0` inside the box.

    The excess :math:`|y^\\top\\alpha|` is removed from the heavier class by scaling
    down its free multipliers (:math:`0 < \\alpha_i < c_i`), so that the multipliers at a
    bound stay there and the free set, from which the bias is read, does not change; only
    when the free ones hold too little of it is the whole class scaled.
    """
    out = alpha.copy()
    excess = float(y @ alpha)
    if excess == 0.0:
        return out
    heavy = y > 0 if excess > 0 else y < 0
    excess = abs(excess)
    free = heavy & (alpha > 0.0) & (alpha < c)
    mass = float(out[free].sum())
    if mass > excess:
        out[free] *= 1.0 - excess / mass
    else:
        total = float(out[heavy].sum())
        out[heavy] *= 1.0 - excess / total
    return out


def _certificate(X: Any, y: np.ndarray, c: np.ndarray, alpha: np.ndarray, exact: bool
                 ) -> tuple[np.ndarray, np.ndarray, float, float, float, float]:
    """(alpha balanced, w, b, P, D, relative gap) at ``alpha``, in O(nnz(X)).

    ``b`` is the bias the dual kind's certificate derives from the KKT conditions
    (the free multipliers, :func:`conicml.certificates.kkt.bias_from_kkt`) or, with ``exact``
    (the primal kind, which returns ``b`` itself), the better of it and the exact
    minimiser of the hinge sum over ``b``.
    """
    a = _balanced(alpha, y, c)
    w = np.asarray(X.T @ (a * y)).ravel()
    f = np.asarray(X @ w).ravel()
    ww = float(w @ w)
    D = float(a.sum()) - 0.5 * ww
    biases = (bias_from_kkt(a, y, c, y - f), _exact_bias(f, y, c)) if exact \
        else (bias_from_kkt(a, y, c, y - f),)
    P, b = min((0.5 * ww + float(c @ np.maximum(0.0, 1.0 - y * (f + b))), b) for b in biases)
    return a, w, b, P, D, max(P - D, 0.0) / max(1.0, abs(P))


def _certificate_l2(X: Any, y: np.ndarray, c: np.ndarray, alpha: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, float, float, float, float]:
    r"""(alpha balanced, w, b, P, D, relative gap) of the L2-loss SVM at ``alpha``.

    The dual point made feasible (:func:`conicml.certificates.squared_hinge.balanced`),
    :math:`w = X^\top(\alpha\circ y)`, the exact best bias for :math:`w`
    (:func:`~conicml.certificates.squared_hinge.squared_hinge_bias`), and the gap between
    the dual and primal values, in O(nnz(X)).
    """
    a = squared_hinge.balanced(alpha, y)
    w = np.asarray(X.T @ (a * y)).ravel()
    f = np.asarray(X @ w).ravel()
    b = squared_hinge.squared_hinge_bias(f, y, c)
    P = squared_hinge.primal_value(w, f, b, y, c)
    D = squared_hinge.dual_value(a, w, c)
    return a, w, b, P, D, max(P - D, 0.0) / max(1.0, abs(P))


def _primal_certified(X: Any, y: np.ndarray, c: np.ndarray, w: np.ndarray, b: float,
                      P: float, tol: float) -> bool:
    """Whether the primal kind's certificate passes at ``(w, b)`` with ``tol``.

    ``qp.svm.primal`` is certified from :math:`(w, b, \\xi)` alone, with the dual point
    the margins imply (:func:`conicml.certificates.margin.margin_qp_certificate`) and
    the gap relative to :math:`P`; that dual point can be worse than the solver's own
    :math:`\\alpha`, so the solver checks it before calling its point OPTIMAL.
    """
    if not isinstance(X, np.ndarray):
        # on CSR the program's certificate takes the returned multipliers (balanced, as
        # here) among its dual candidates: the bound of the gap checked above
        return True
    xi = np.maximum(0.0, 1.0 - y * (X @ w + b))
    res, _ = margin_qp_certificate(X, y, c, w, b, xi, P)
    return res.max() <= tol


def _exact_bias(f: np.ndarray, y: np.ndarray, c: np.ndarray) -> float:
    r""":math:`\arg\min_b \sum_i c_i[1 - y_i(f_i + b)]_+`, a weighted quantile.

    The slope in :math:`b` is :math:`-\sum_{y_i=+1} c_i + \sum_{s_i < b} c_i` with the
    breakpoints :math:`s_i = y_i - f_i`; the minimiser is the first breakpoint at which
    the cumulative cost reaches :math:`\sum_{y_i=+1} c_i`.
    """
    s = y - f
    order = np.argsort(s, kind="stable")
    cum = np.cumsum(c[order])
    k = int(np.searchsorted(cum, float(c[y > 0].sum()) * (1.0 - 1e-15)))
    return float(s[order[min(k, s.size - 1)]])


@register("dcd", kinds=list(_KINDS), specialized=True,
          requires=("numpy",), compare_options={"tol": 1e-8}, certify_tol=1e-3,
          warm_start=dcd_alpha)
def solve_dcd(
    program,
    *,
    tol: float = 1e-3,
    max_iter: int = 10_000,
    time_limit: float | None = None,
    verbose: bool = False,
    rho: float = 1.0,
    random_state: Any = 0,
    engine: str = "auto",
    center: bool | str = "auto",
    x0: Any = None,
    b0: float | None = None,
) -> Solution:
    r"""Dual coordinate descent with shrinking for the linear soft-margin SVM (exact bias).

    Parameters
    ----------
    program : Program
        A linear soft-margin SVM, kind ``"qp.svm.dual"`` or ``"qp.svm.primal"``
        (:func:`conicml.formulations.svm.soft_margin`; per-sample costs :math:`c_i`
        from ``C`` and ``class_weight``). With ``kernel="linear"`` ``X`` may be a dense
        array or a :mod:`scipy.sparse` matrix (used as CSR); another kernel is solved
        on the rows of its factor :math:`K = LL^\top` (formed in :math:`O(n^3)`: for
        kernels, ``smo`` is the solver of choice).
    tol : float, default=1e-3
        Stop when the relative duality gap :math:`(P - D)/\max(1, |P|)` of the
        balanced dual point is :math:`\le` ``tol``.
    max_iter : int, default=10000
        Largest number of epochs (passes over the active set), over all subproblems.
    time_limit : float, optional
        Wall-clock limit in seconds (checked between blocks of epochs).
    verbose : bool, default=False
        Print one line per subproblem (multiplier, spread, gap).
    rho : float, default=1.0
        Weight :math:`\rho` of the augmented Lagrangian, the squared augmented feature
        :math:`B^2` (1: LIBLINEAR's default :math:`B = 1`). A larger :math:`\rho` needs
        fewer multiplier updates but couples the coordinates more (more epochs each).
    random_state : int, Generator or None, default=0
        Seed of the coordinate permutations.
    engine : {"auto", "numba", "numpy"}, default="auto"
        The compiled loop (:mod:`conicml.solvers._dcd_numba`) or the NumPy one, the same
        algorithm; ``"auto"``: numba when it can be imported (the environment variable
        ``CONICML_ENGINE`` overrides ``"auto"``). Reported as ``extras["engine"]``.
    center : bool or "auto", default="auto"
        Run the coordinate descent on the centred rows :math:`x_i - \mu` (the same program:
        the bias is not regularised; done implicitly, a sparse ``X`` stays sparse).
        ``"auto"``: when :math:`\|\mu\|^2 > 0.1` times the mean squared distance of the
        rows to :math:`\mu` (data far from the origin, where the bias coupling slows the
        method down). Reported as ``extras["centered"]``.
    x0 : array of shape (n,), optional
        A warm start: the multipliers :math:`\alpha` (clipped to the box
        :math:`[0, c_i]` of the L1 loss; :math:`w` is recomputed from them), e.g. the
        previous solution along a path of costs (:func:`conicml.solve_path`).
    b0 : float, optional
        The bias to start the multiplier of :math:`y^\top\alpha = 0` from (with ``x0``):
        :math:`\lambda = b_0 - \rho\, y^\top\alpha`, so that the first subproblem sees
        the previous bias. Default: :math:`\lambda = 0`.

    Returns
    -------
    Solution
        ``values["alpha"]`` (dual kind) or ``values["w"], ["b"], ["xi"]`` with the
        multipliers ``duals["margin"]`` (primal kind); ``OPTIMAL`` when the gap is
        :math:`\le` ``tol``, ``USER_LIMIT`` at ``max_iter`` / ``time_limit``.

    Notes
    -----
    For the L1-loss SVM with per-sample costs :math:`c_i` (class weights) the dual of

    .. math::

        \min_{w,b,\xi}\ \tfrac12\|w\|^2 + \sum_i c_i\xi_i
        \quad\text{s.t.}\quad y_i(w^\top x_i + b) \ge 1 - \xi_i,\ \xi_i \ge 0

    is :math:`\min_\alpha \tfrac12\alpha^\top Q\alpha - \mathbf 1^\top\alpha` over
    :math:`0 \le \alpha_i \le c_i`, :math:`y^\top\alpha = 0`, with
    :math:`Q_{ij} = y_iy_jx_i^\top x_j`. One coordinate step minimises exactly in
    :math:`\alpha_i` (eq. 5 of the paper: :math:`\alpha_i \leftarrow \min(\max(\alpha_i -
    G_i/Q_{ii}, 0), c_i)`) and keeps :math:`w = \sum_i y_i\alpha_i x_i` up to date, so a
    step costs :math:`O(\mathrm{nnz}(x_i))`; shrinking drops the coordinates whose projected
    gradient says they will stay at a bound.

    **The bias.** LIBLINEAR appends a constant feature :math:`B` to every :math:`x_i`,
    which drops the equality :math:`y^\top\alpha = 0` from the dual and *regularises* the
    bias (it solves :math:`\tfrac12(\|w\|^2 + b^2/B^2) + \ldots`, a different program).
    Here the equality is kept by the method of multipliers: the augmented Lagrangian of the
    dual, :math:`\tfrac12\alpha^\top Q\alpha - \mathbf 1^\top\alpha + \lambda y^\top\alpha +
    \tfrac\rho2(y^\top\alpha)^2`, has :math:`Q + \rho yy^\top`, i.e. the augmented feature
    :math:`B = \sqrt\rho`, plus a linear term. Each subproblem is therefore LIBLINEAR's
    problem, solved by the same coordinate descent, and the multiplier update
    :math:`\lambda \leftarrow \lambda + \rho\,y^\top\alpha` is the current bias
    :math:`b = \lambda + \rho\,y^\top\alpha` (the first subproblem, :math:`\lambda = 0`,
    is LIBLINEAR's with :math:`B = \sqrt\rho`). On the primal side this is the proximal
    point method on :math:`b` with the weight :math:`1/(2\rho)`; the iterates converge to
    the SVM with an unregularised bias, the program of the kinds ``qp.svm.dual`` and
    ``qp.svm.primal``. The multiplier is updated at every gap check (every 25 epochs) and
    whenever a subproblem has converged to its projected-gradient tolerance, which then
    shrinks (LIBLINEAR's 0.1 first, times 0.3 after each).

    **Certificate.** At every check the point is made exactly dual feasible (the
    class with the larger :math:`\sum\alpha` is scaled down until :math:`y^\top\alpha = 0`,
    which keeps the box), :math:`w` is recomputed from it, and the relative duality gap
    :math:`(P - D)/\max(1, |P|)` of the dual value :math:`D = \mathbf 1^\top\alpha -
    \tfrac12\|w\|^2` and the primal value :math:`P` of :math:`(w, b)` is evaluated, in
    :math:`O(\mathrm{nnz}(X))`: the solver stops when it is :math:`\le` ``tol``.
    """
    # one BLAS thread, as LIBLINEAR runs: the certificate's products are thin (one or
    # two passes over X) and BLAS threads made them several times slower when the
    # cores are shared
    with one_blas_thread():
        return _solve(program, tol, max_iter, time_limit, verbose, rho, random_state, engine,
                      center, (x0, b0))


def _start(start: tuple, X: Any, y: np.ndarray, U: np.ndarray, xmu: np.ndarray, rho: float
           ) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """``(alpha, w, y'alpha, w'mu, lambda)`` of a warm start ``(x0, b0)``, or of zero."""
    x0, b0 = start
    n, d = X.shape
    if x0 is None:
        if b0 is not None:
            raise OptionError("dcd: b0 is a warm start of the bias with x0; got b0 alone")
        return np.zeros(n), np.zeros(d), 0.0, 0.0, 0.0
    try:
        alpha = np.array(x0, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"dcd: x0 must be an array of {n} multipliers") from exc
    if alpha.shape != (n,) or not np.all(np.isfinite(alpha)):
        raise OptionError(f"dcd: x0 must be {n} finite multipliers, got shape "
                          f"{np.shape(x0)}")
    alpha = np.clip(alpha, 0.0, U)  # the box of the L1 loss; [0, inf) for the L2 loss
    ya = y * alpha
    w = np.ascontiguousarray(np.asarray(X.T @ ya, dtype=np.float64).ravel())
    sy = float(ya.sum())
    lin = 0.0
    if b0 is not None:
        if not (isinstance(b0, (int, float, np.floating)) and math.isfinite(b0)):
            raise OptionError(f"dcd: b0 must be a finite number, got {b0!r}")
        lin = float(b0) - rho * sy  # the bias b = lambda + rho y'alpha starts at b0
    return alpha, w, sy, float(xmu @ ya), lin


def _solve(program: Any, tol: float, max_iter: int, time_limit: float | None, verbose: bool,
           rho: float, random_state: Any, engine: str, center: bool | str,
           start: tuple = (None, None)) -> Solution:
    """The body of :func:`solve_dcd`."""
    t0 = time.perf_counter()
    check_common("dcd", tol, max_iter, time_limit)
    if not (isinstance(verbose, (bool, np.bool_))):
        raise OptionError(f"dcd: verbose must be True or False, got {verbose!r}")
    if not (isinstance(center, (bool, np.bool_)) or (isinstance(center, str)
                                                      and center == "auto")):
        raise OptionError(f"dcd: center must be True, False or 'auto', got {center!r}")
    X, y, c = _data(program)
    nb = load_engine("dcd", engine, "_dcd_numba")
    n, d = X.shape
    sparse = not isinstance(X, np.ndarray)
    if sparse:
        sq = np.zeros(n)  # the rows' squared norms from the stored values
        filled = np.diff(X.indptr) > 0
        if X.nnz:
            sq[filled] = np.add.reduceat(X.data * X.data, X.indptr[:-1][filled])
        Xd = np.zeros((1, 1))
        # scipy's own index arrays (int32 unless nnz needs int64): no copy, and half the
        # memory traffic of int64 in the randomly ordered row accesses
        data, indices, indptr = X.data, X.indices, X.indptr
    else:
        sq = np.einsum("ij,ij->i", X, X)
        Xd = X
        data, indices, indptr = np.zeros(1), np.zeros(1, np.int32), np.zeros(1, np.int32)
    if not (isinstance(rho, (int, float)) and not isinstance(rho, bool)
            and math.isfinite(rho) and rho > 0):
        raise OptionError(f"dcd: rho must be a positive finite number, got {rho!r}")
    rho = float(rho)
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"dcd: random_state must be an int, a Generator or None, "
                          f"got {random_state!r}") from exc
    exact = program.kind in _PRIMAL
    l2 = program.kind in _L2
    # L2 loss (Hsieh et al. 2008, eq. 4 and Table 1): D_ii = 1/(2c_i), U = infinity;
    # L1 loss: D_ii = 0, U = c_i
    Dii = 0.5 / c if l2 else np.zeros(n)
    U = np.full(n, np.inf) if l2 else c
    # the bias is not regularised, so the program is the same on the rows x_i - mu: the
    # loop runs on them (implicitly, see _dcd_numba.epochs) when the mean is large against
    # the spread, where the augmented feature couples the coordinates through a dominant
    # direction of Q and the multiplier creeps (data far from the origin)
    mu = np.asarray(X.mean(axis=0)).ravel()
    mumu = float(mu @ mu)
    spread2 = max(float(sq.mean()) - mumu, 0.0)
    if center == "auto":
        center = mumu > _CENTER_RATIO * spread2
    if center:
        xmu = np.asarray(X @ mu).ravel()
        sq = sq - 2.0 * xmu + mumu
    else:
        xmu, mumu = np.zeros(n), 0.0
    QD = sq + rho + Dii
    # alpha, w = X'(y alpha) and the loop's running sums y'alpha, w'mu; lin the
    # multiplier lambda of y'alpha = 0
    alpha, w, sy0, wmu0, lin = _start(start, X, y, U, xmu, rho)
    index = np.arange(n, dtype=np.int64)
    state = np.array([n, math.inf, -math.inf, sy0, wmu0])
    eps = _EPS0 * (1.0 if l2 else max(1.0, float(c.max())))
    setup_time = time.perf_counter() - t0
    t_solve = time.perf_counter()
    epochs, subproblems, status, message = 0, 0, None, ""
    best = None
    stop_tol = tol
    while status is None:
        chunk = min(_CHECK_EVERY, max_iter - epochs)
        if nb is not None:
            done, spread, converged = nb.epochs(
                sparse, Xd, data, indices, indptr, y, U, Dii, QD, xmu, mumu, alpha, w, index,
                state, lin, rho, eps, chunk, int(rng.integers(2**31 - 1)))
        else:
            done, spread, converged = _epochs_numpy(
                sparse, Xd, data, indices, indptr, y, U, Dii, QD, xmu, mumu, alpha, w, index,
                state, lin, rho, eps, chunk, rng)
        epochs += int(done)
        # the gap is checked when a subproblem has converged and every _CHECK_EVERY
        # epochs inside one (the projected-gradient rule eps is only a proxy for it)
        if converged or done == _CHECK_EVERY:
            subproblems += int(converged)
            a, wb, b, P, D, gap = (_certificate_l2(X, y, c, alpha) if l2
                                   else _certificate(X, y, c, alpha, exact))
            if best is None or gap < best[-1]:
                best = (a, wb, b, P, D, gap)
            if verbose:
                print(f"dcd: {'subproblem' if converged else 'check     '} "
                      f"{subproblems + (not converged):3d}  epochs {epochs:6d}  "
                      f"lambda {lin: .6g}  y'alpha {state[3]: .3g}  eps {eps:.3g}  "
                      f"P {P:.8g}  D {D:.8g}  gap {gap:.3g}")
            if gap <= stop_tol and (not exact or l2
                                    or _primal_certified(X, y, c, wb, b, P, tol)):
                status = Status.OPTIMAL
                break
            if gap <= stop_tol:  # the primal kind's own certificate is stricter here
                stop_tol *= 0.1
        if converged or done == _CHECK_EVERY:
            # the multiplier update lambda += rho y'alpha (the current bias) after every
            # check, not only when a subproblem has converged (an inexact method of
            # multipliers: with a bias far from 0 the exact one needed a subproblem per
            # step of rho y'alpha); a converged subproblem also tightens eps
            step = rho * state[3]
            lin += step
            # the step moves every gradient G_i by y_i * step: shrinking decisions taken
            # before it are kept only while that is within the tolerance eps
            if converged or abs(step) > eps:
                state[0], state[1], state[2] = n, math.inf, -math.inf
            if converged:
                eps *= _EPS_SHRINK
        elapsed = time.perf_counter() - t_solve
        if status is None and epochs >= max_iter:
            status, message = Status.USER_LIMIT, f"max_iter = {max_iter} epochs reached"
        elif status is None and time_limit is not None and elapsed >= time_limit:
            status, message = Status.USER_LIMIT, f"time_limit = {time_limit:g} s reached"
    if status is Status.OPTIMAL:
        a, wb, b, P, D, gap = best
    else:
        cand = _certificate_l2(X, y, c, alpha) if l2 else _certificate(X, y, c, alpha, exact)
        a, wb, b, P, D, gap = cand if best is None or cand[-1] < best[-1] else best
        message += f"; relative gap {gap:.3g} > tol {tol:g}"
    solve_time = time.perf_counter() - t_solve
    extras = {"b": b, "primal_objective": P, "dual_objective": D, "epochs": epochs,
              "subproblems": subproblems, "rho": rho, "multiplier": lin,
              "engine": "numpy" if nb is None else "numba", "sparse": sparse,
              "loss": "squared_hinge" if l2 else "hinge", "centered": bool(center)}
    residuals = Residuals(primal=0.0, dual=gap, gap=gap, source="solver")
    if program.kind in (kinds.SVM_DUAL, kinds.SVM_L2_DUAL):
        return Solution(status=status, solver="dcd", objective=D, values={"alpha": a},
                        iterations=epochs, setup_time=setup_time, solve_time=solve_time,
                        residuals=residuals, message=message, extras=extras)
    f = np.asarray(X @ wb).ravel()
    xi = np.maximum(0.0, 1.0 - y * (f + b))
    P = 0.5 * float(wb @ wb) + float(c @ (xi * xi) if l2 else c @ xi)
    name = "w" if getattr(program.data["kernel"], "name", None) == "linear" else "v"
    duals = {"margin": a} if l2 else {"margin": a, "xi_nonneg": c - a}
    return Solution(status=status, solver="dcd", objective=P,
                    values={name: wb, "b": b, "xi": xi}, duals=duals,
                    iterations=epochs, setup_time=setup_time, solve_time=solve_time,
                    residuals=residuals, message=message, extras=extras)
