r"""The feature-scaling solvers of Tayal 2014, chapter 7 (``fs-simple-ao``, ``fs-ao1``, ...).

Programs of kind ``nonconvex.fs.svm``
(:func:`conicml.formulations.feature_scaling.feature_scaled_svm`): the embedded
feature-selection problem (7.4) in its smooth form :math:`\Omega` (7.7) or its
functional-margin forms (7.14)/(7.15), from the program's :math:`z^0` (default
:math:`\mathbf 1`, F37). Each method's stopping rule is in the Notes of its solve
function.

The SVM block is the program's ``svm_dual`` (kind ``qp.svm.dual``), solved by the
registered solver named by ``inner``; the non-convex blocks use the Coleman–Li
trust region of :mod:`conicml.solvers._bound_tr`, whose subproblem is the
``more-sorensen`` secular-equation core (:mod:`conicml.solvers._secular`). The status and the
minimum/saddle labels are described on the family page (``docs/families/feature_scaling.rst``).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._utils.deprecation import renamed_keywords
from ..contracts.feature_scaling import (
    FeatureScaledSVM,
    fs_kernel,
    small_blas,
    support_mask,
)
from ..exceptions import OptionError, ProgramError, SolverError
from ..kinds import FS_SVM
from ..registry import get as get_solver
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._bound_tr import bound_trust_region
from ._callback import IntermediateResult, notify
from ._options import check_common

__all__ = ["DEFAULT_MAX_ITER", "METHODS", "gmkl_objective"]

#: The methods, by registry name without the ``fs-`` prefix.
METHODS = ("ao2", "ao1", "simple-ao", "full", "gmkl")

#: Default iteration caps: outer AO iterations, GMKL gradient steps, FULL-FS TR steps. The
#: two-block AO methods converge linearly, at rates close to 1 once the support settles
#: (on ndcc_like, 10 informative features, 5-20 probes, C = 1, mu = 4: 37-83 iterations
#: to ||z^(k+1) - z^k||_inf < 1e-4); AO-II takes 13-17 with ao2_stop="change".
DEFAULT_MAX_ITER = {"ao2": 100, "ao1": 500, "simple-ao": 500, "gmkl": 100, "full": 300}

#: Rows up to which the SVM block (with ``smo``) is solved on the whole Gram matrix; above,
#: by working sets (``_Run._svm_working_set``), and its first working set has this size.
SVM_BLOCK_FULL_MAX = 2000

#: Rows up to which the first SVM block is solved on the whole Gram matrix all the same:
#: at the starting scales most rows are support vectors.
_WS_FIRST_FULL_MAX = 8000

#: Rows of the margin band :math:`y_if_i < 1 + 0.25` (at the last block's (beta, b) and
#: the new z) that start the next working set beside the last support vectors.
_WS_MARGIN = 0.25


@dataclass
class _Run:
    """What every method shares: the problem, the SVM-block solver, the clock."""

    fs: FeatureScaledSVM
    svm_solver: str
    svm_options: dict
    time_limit: float | None
    callback: Any
    start: float
    _gram: np.ndarray | None = None
    _last_svm: tuple[np.ndarray, float] | None = None

    @property
    def obj(self):
        return self.fs.objective

    def remaining(self) -> float | None:
        if self.time_limit is None:
            return None
        return max(self.time_limit - (time.perf_counter() - self.start), 1e-3)

    def out_of_time(self) -> bool:
        return self.time_limit is not None and \
            time.perf_counter() - self.start > self.time_limit

    def svm(self, z: np.ndarray) -> tuple[np.ndarray, float]:
        """The exact SVM block at ``z`` (the program's ``svm_dual``): its :math:`(\\beta, b)`.

        Above :data:`SVM_BLOCK_FULL_MAX` rows, with ``smo``, by working sets
        (:meth:`_svm_working_set`); otherwise on the whole Gram matrix."""
        obj = self.obj
        if self.svm_solver == "smo" and obj.n > SVM_BLOCK_FULL_MAX and (
                self._last_svm is not None or obj.n > _WS_FIRST_FULL_MAX):
            out = self._svm_working_set(z)
            if out is not None:
                self._last_svm = out
                return out
        K = obj.kernel(z)
        # G = K_z + (2 eps / C) I in column-major order (K_z is symmetric: its transpose),
        # which the precomputed-kernel program keeps without another copy; written into
        # the previous block's G when nothing else holds it (a fresh n x n array costs
        # its page faults again)
        G = self._gram
        self._gram = None
        if G is None or sys.getrefcount(G) > 2:
            G = np.empty((obj.n, obj.n), order="F")
        np.copyto(G, K.T)
        diag = np.arange(obj.n)
        G[diag, diag] += 2 * obj.eps / obj.C
        program = self.fs.svm_dual(G)
        self._gram = G
        del G
        beta, b, _ = self._solve_block(program)
        self._last_svm = (beta, b)
        return beta, b

    def _solve_block(self, program: Any) -> tuple[np.ndarray, float, Solution]:
        from ..solving import solve  # late import: solving imports the registry

        sol = solve(program, self.svm_solver, **self.svm_options)
        if not sol.status.has_solution and sol.status is not Status.USER_LIMIT:
            raise SolverError(f"the SVM block failed with status {sol.status.value!r} "
                              f"({sol.message})")
        model = program.decode(sol)
        return np.asarray(model["dual_coef"], float), float(model["b"]), sol

    def _svm_working_set(self, z: np.ndarray) -> tuple[np.ndarray, float] | None:
        r"""The SVM block by working sets: the dual on a subset T, checked on all rows.

        :math:`\alpha_i = 0` off T; the subproblem's :math:`(\alpha_T, b)` solves the
        whole dual when the whole index set meets smo's stopping rule,
        :math:`m(\alpha) - M(\alpha) \le \texttt{tol}` with
        :math:`-y_i\nabla_i = y_i - (K_z\beta)_i - y_i c\alpha_i`, :math:`c = 2\epsilon/C`
        (:math:`K_z\beta` from the columns of the support vectors: no n x n matrix);
        else the rows that break it join T. T starts from the last block's support
        vectors and the rows inside its margin at this ``z`` (the first block, above
        8 000 rows: a random sample of :data:`SVM_BLOCK_FULL_MAX` rows). ``None`` (the
        caller solves the whole dual) when one class is missing from T or after 20 rounds.
        The rule is checked at ``tol`` plus 0.1 % (smo stops just below ``tol``, and the
        recomputed gradient differs from its updated one by rounding).
        """
        obj = self.obj
        n, y, X = obj.n, obj.y, obj._Xc
        c = 2 * obj.eps / obj.C
        tol = float(self.svm_options.get("tol", 1e-3))
        if self._last_svm is None:
            T = np.sort(np.random.default_rng(0).permutation(n)[:SVM_BLOCK_FULL_MAX])
        else:
            beta0, b0 = self._last_svm
            sv = np.flatnonzero(beta0)
            f0 = obj.kernel_columns(z, sv) @ beta0[sv] + b0
            T = np.union1d(sv, np.flatnonzero(y * f0 < 1.0 + _WS_MARGIN))
        alpha = np.zeros(n)
        for _ in range(20):
            if np.unique(y[T]).size < 2:
                return None
            G = fs_block_gram(X[T], z, c, obj.workers)
            beta_T, b, sol = self._solve_block(self.fs.svm_dual(G, y=y[T]))
            if sol.status is not Status.OPTIMAL:
                return None
            alpha[:] = 0.0
            alpha[T] = y[T] * beta_T
            beta = y * alpha
            sv = np.flatnonzero(beta)
            # -y_i grad_i of the whole dual, and smo's I_up / I_low
            score = y - obj.kernel_columns(z, sv) @ beta[sv] - y * c * alpha
            up = ((alpha < obj.C) & (y > 0)) | ((alpha > 0) & (y < 0))
            low = ((alpha < obj.C) & (y < 0)) | ((alpha > 0) & (y > 0))
            m_up, m_low = float(np.max(score[up])), float(np.min(score[low]))
            if m_up - m_low <= 1.001 * tol:
                return beta, b
            inT = np.zeros(n, bool)
            inT[T] = True
            # the rows off T that break the rule against T's own extremes
            mT_up = float(np.max(score[up & inT], initial=-np.inf))
            mT_low = float(np.min(score[low & inT], initial=np.inf))
            viol = np.maximum(np.where(up & ~inT, score - mT_low, -np.inf),
                              np.where(low & ~inT, mT_up - score, -np.inf))
            add = np.flatnonzero(viol > 1.001 * tol)
            if add.size == 0:
                return None
            keep = max(SVM_BLOCK_FULL_MAX, T.size)
            if add.size > keep:
                add = add[np.argsort(-viol[add], kind="stable")[:keep]]
            T = np.union1d(T, add)
        return None


def fs_block_gram(XT: np.ndarray, z: np.ndarray, c: float, workers: int = 1) -> np.ndarray:
    """:math:`K_z + cI` on the rows ``XT``, column-major (what smo reads in place)."""
    # symmetric: the transpose is the column-major copy
    G = fs_kernel(XT, XT, z, workers=workers).T
    diag = np.arange(XT.shape[0])
    G[diag, diag] += c
    return G


def gmkl_objective(fs: FeatureScaledSVM, z: np.ndarray, solver: str = "smo",
                   options: dict | None = None, alpha0: np.ndarray | None = None):
    r"""GMKL's :math:`F(z) + \mu\mathbf 1^\top z` (7.5)–(7.6) and its Danskin gradient.

    Returns ``(value, grad, alpha, K)``: the hinge SVM dual at :math:`K_z` (the
    program's ``svm_dual`` at :math:`G = K_z`), solved by ``solver`` (warm-started
    from ``alpha0`` when the solver takes ``x0``).
    """
    from ..solving import solve  # late import: solving imports the registry

    obj = fs.objective
    y, C, mu = obj.y, obj.C, obj.mu
    K = obj.kernel(z)
    opts = dict(options or {})
    if alpha0 is not None and "x0" in get_solver(solver).options:
        opts["x0"] = alpha0
    sol = solve(fs.svm_dual(K), solver, **opts)
    alpha = np.clip(np.asarray(sol.values["alpha"], float), 0, C)
    c = alpha * y
    value = float(alpha.sum() - 0.5 * c @ K @ c) + mu * float(np.sum(z))
    grad = -0.5 * (c @ obj._kz(K, np.asarray(z, float), c)) + mu
    return value, grad, alpha, K


def _gmkl(run: _Run, z0, *, tol, max_iter):
    """Projected gradient with Armijo on F(z) + mu 1'z (Danskin gradient)."""
    def F(z, alpha0=None):
        value, grad, alpha, _ = gmkl_objective(run.fs, z, run.svm_solver, run.svm_options,
                                               alpha0)
        return value, alpha, grad

    z = np.array(z0, float)
    val, alpha, grad = F(z)
    step = 1.0
    history, it, converged, inner = [], 0, False, 0
    message = f"max_iter={max_iter} outer iterations reached"
    while it < max_iter:
        pg = float(np.max(np.abs(z - np.maximum(0.0, z - grad))))
        if pg <= tol:
            converged, message = True, f"projected gradient {pg:.2g} <= tol"
            break
        if run.out_of_time():
            message = f"time_limit={run.time_limit:g}s reached"
            break
        it += 1
        t = min(step * 2.0, 1e6)
        while True:
            zn = np.maximum(0.0, z - t * grad)
            vn, an, gn = F(zn, alpha)
            inner += 1
            if vn <= val + 1e-4 * float(grad @ (zn - z)) or t < 1e-12:
                break
            t *= 0.5
        if t < 1e-12:
            message = "Armijo step collapsed (stall)"
            break
        change = val - vn
        z, val, alpha, grad, step = zn, vn, an, gn, t
        history.append({"objective": val, "step": t, "pg": pg})
        if notify(run.callback, IntermediateResult(
                iteration=it, objective=val, residual=pg,
                elapsed=time.perf_counter() - run.start, values={"z": z})):
            message = "stopped by the callback"
            break
        if change <= 1e-10 * max(1.0, abs(val)):
            converged, message = True, "objective no longer decreases"
            break
    beta, b = run.svm(z)
    return beta, b, z, it, inner, converged, message, history


def _full(run: _Run, z0, *, tol, max_iter):
    """FULL-FS: the bound-constrained trust region on Omega over (beta, b, z)."""
    obj = run.obj
    n, d = obj.n, obj.d
    beta, b = run.svm(z0)
    x0 = np.concatenate([beta, [b], z0])
    bounded = np.concatenate([np.zeros(n + 1, bool), np.ones(d, bool)])

    def fun(x, order):
        return obj.omega(x[:n], x[n], x[n + 1:], order=order)

    res = bound_trust_region(fun, x0, bounded, tol=tol, max_iter=max_iter,
                             time_limit=run.time_limit, callback=run.callback)
    return (res.x[:n], float(res.x[n]), res.x[n + 1:], res.iterations, res.iterations,
            res.converged, res.message, res.history)


def _fs_block(run: _Run, method: str, z, beta, b, *, normalize: bool, it: int):
    """The FS block's function and start: (fun, x0) for bound_trust_region."""
    obj = run.obj
    d = obj.d
    if method == "simple-ao":
        def fun(x, order):
            return obj.evaluate(beta, b, x, 1.0, margin="kernel", wrt=("z",), order=order,
                                lazy_hessian=True)
        return fun, z
    margin = "kernel" if method == "ao1" else "unit"
    lam0 = 1.0
    if method == "ao2":
        # Algorithm 3: lam0 = 1/sqrt(beta' K beta) "to match the initial objective". With
        # (beta, b) scaled to ||f||_H = 1, as (7.16) has it, the whole of Psi(z^k, lam0)
        # equals Omega-bar(beta, b, z^k, 1), not only its margin term (7.13 is invariant
        # under this scaling).
        sv = np.flatnonzero(beta)
        margin_term = float(beta[sv] @ (obj.kernel_columns(z, sv) @ beta[sv])[sv])
        if not margin_term > 0:
            # lam0 = 1/sqrt(0): Psi has no scale to start from
            raise ProgramError(
                f"feature scaling (AO-II): the SVM at the current scales learns a constant "
                f"decision function (beta' K_z beta = {margin_term:.3g}, "
                f"{int(support_mask(z).sum())} of {d} features selected, outer iteration "
                f"{it}); X has no varying feature left to scale: drop constant features, "
                f"standardise X, or lower mu")
        norm = math.sqrt(margin_term)
        lam0 = 1.0 / norm
        if normalize:
            beta, b = beta / norm, b / norm

    def fun(x, order):
        # the Hessian only when the trust region takes a step from x
        return obj.evaluate(beta, b, x[:d], x[d], margin=margin, wrt=("z", "lam"),
                            order=order, lazy_hessian=True)
    return fun, np.concatenate([z, [lam0]])


def _alternate(run: _Run, method: str, z0, *, tol, max_iter, inner_max_iter, normalize,
               ao2_stop):
    """Simple AO, Margin AO-I, Margin AO-II: the SVM block, then the FS block."""
    obj = run.obj
    z = np.array(z0, float)
    beta, b = run.svm(z)
    history: list = []
    inner, it, converged = 0, 0, False
    message = f"max_iter={max_iter} outer iterations reached"
    while it < max_iter:
        if run.out_of_time():
            message = f"time_limit={run.time_limit:g}s reached"
            break
        it += 1
        fun, x0 = _fs_block(run, method, z, beta, b, normalize=normalize, it=it)
        res = bound_trust_region(fun, x0, np.ones(x0.size, bool), tol=tol * 1e-2,
                                 max_iter=inner_max_iter, time_limit=run.remaining(),
                                 stop_at_rounding=True)
        inner += res.iterations
        z_new = res.x[:obj.d]
        crit = float(np.max(np.abs(z_new - z)))
        if method == "ao2":
            same = bool(np.array_equal(support_mask(z_new), support_mask(z)))
            done = same and (ao2_stop == "support" or crit < tol)
        else:
            done = crit < tol
        z = z_new
        beta, b = run.svm(z)
        history.append({"iteration": it, "criterion": crit, "fs_block": res.message,
                        "n_selected": int(support_mask(z).sum()),
                        "omega": obj.omega(beta, b, z, order=0)[0]})
        if notify(run.callback, IntermediateResult(
                iteration=it, residual=crit, elapsed=time.perf_counter() - run.start,
                values={"z": z})):
            message = "stopped by the callback"
            break
        if done:
            converged = True
            if method == "ao2" and ao2_stop == "support":
                message = "the selected support did not change"
            else:
                message = f"||z^(k+1) - z^k||_inf = {crit:.2g} < tol" + (
                    " and the selected support did not change" if method == "ao2" else "")
            break
    return beta, b, z, it, inner, converged, message, history


def _solve(program: Any, method: str, *, tol, max_iter, inner_max_iter, svm_solver,
           svm_options, time_limit, callback, normalize=True, ao2_stop="change") -> Solution:
    name = f"fs-{method}"
    if getattr(program, "kind", None) != FS_SVM or "fs" not in program.data:
        raise SolverError(f"solver {name!r} accepts programs of kind {FS_SVM!r} "
                          "(conicml.formulations.feature_scaling.feature_scaled_svm)")
    check_common(name, tol, max_iter, time_limit)
    if isinstance(inner_max_iter, bool) or not isinstance(inner_max_iter, (int, np.integer)) \
            or inner_max_iter < 1:
        raise OptionError(f"{name}: inner_max_iter must be an integer >= 1, "
                          f"got {inner_max_iter!r}")
    if not isinstance(svm_solver, str):
        raise OptionError(f"{name}: inner must be a solver name (kind qp.svm.dual), "
                          f"got {svm_solver!r}")
    if ao2_stop not in ("change", "support"):
        raise OptionError(f"{name}: ao2_stop must be 'change' or 'support', got {ao2_stop!r}")
    fs: FeatureScaledSVM = program.data["fs"]
    if max_iter is None:
        max_iter = DEFAULT_MAX_ITER[method]
    options = dict(svm_options or {})
    if svm_solver == "smo":
        options.setdefault("tol", 1e-6)
    start = time.perf_counter()
    run = _Run(fs, svm_solver, options, time_limit, callback, start)
    with small_blas(fs.objective):
        if method == "gmkl":
            out = _gmkl(run, fs.z0, tol=tol, max_iter=max_iter)
        elif method == "full":
            out = _full(run, fs.z0, tol=tol, max_iter=max_iter)
        else:
            out = _alternate(run, method, fs.z0, tol=tol, max_iter=max_iter,
                             inner_max_iter=inner_max_iter, normalize=normalize,
                             ao2_stop=ao2_stop)
    beta, b, z, it, inner, converged, message, history = out
    value = fs.objective.omega(beta, b, z, order=0)[0]
    elapsed = time.perf_counter() - start
    return Solution(
        status=Status.OPTIMAL if converged else Status.USER_LIMIT,
        solver=name, objective=float(value),
        values={"beta": np.asarray(beta, float), "b": np.array(float(b)),
                "z": np.asarray(z, float)},
        iterations=it, solve_time=elapsed, residuals=Residuals(source="solver"),
        message=f"{name}: {message}",
        extras={"converged": converged, "inner_iterations": inner, "history": history,
                "method": method,
                # 100 tol in the units of the gradient's terms (C l'(.) and mu): the AO
                # methods stop on ||z^(k+1) - z^k|| < tol, which at a linear rate close to
                # 1 leaves a gradient some 10-100 times larger
                "stationarity_tol": 100.0 * tol * max(1.0, fs.objective.C,
                                                      fs.objective.mu)})


_COMMON = dict(specialized=True, requires=("numpy",))


@register("fs-simple-ao", kinds=[FS_SVM], certify_tol=1e-2, **_COMMON,
          description="Simple AO (Tayal 2014, Alg. 1): SVM block / z block; can stop at saddles")
@renamed_keywords(svm_solver="inner", svm_options="inner_options")
def solve_fs_simple_ao(program: Any, *, tol: float = 1e-4, max_iter: int | None = None,
                       inner_max_iter: int = 100, inner: str = "smo",
                       inner_options: dict | None = None, time_limit: float | None = None,
                       callback: Any = None) -> Solution:
    """Simple AO (Algorithm 1).

    Notes
    -----
    Algorithm 1 (two-block Gauss–Seidel): the SVM block, then
    :math:`z \\leftarrow \\arg\\min_{z\\ge0}\\Omega(\\beta^k, b^k, z)`; stop when
    :math:`\\|z^{k+1} - z^k\\|_\\infty < \\texttt{tol}`. Can stop at saddle points
    (Table 7.1).
    """
    return _solve(program, "simple-ao", tol=tol, max_iter=max_iter,
                  inner_max_iter=inner_max_iter, svm_solver=inner,
                  svm_options=inner_options, time_limit=time_limit, callback=callback)


@register("fs-ao1", kinds=[FS_SVM], certify_tol=1e-2, **_COMMON,
          description="Margin AO-I (Tayal 2014, Alg. 2): SVM block / (z, margin) block")
@renamed_keywords(svm_solver="inner", svm_options="inner_options")
def solve_fs_ao1(program: Any, *, tol: float = 1e-4, max_iter: int | None = None,
                 inner_max_iter: int = 100, inner: str = "smo",
                 inner_options: dict | None = None, time_limit: float | None = None,
                 callback: Any = None) -> Solution:
    """Margin AO-I (Algorithm 2).

    Notes
    -----
    Margin AO-I, Algorithm 2: the SVM block (:math:`\\lambda = 1`), then
    :math:`(z, \\lambda) \\leftarrow
    \\arg\\min_{z, \\lambda\\ge0}\\bar\\Omega(\\bar\\beta^k, \\bar b^k, z, \\lambda)`
    from :math:`(z^k, 1)`; same stopping rule.
    """
    return _solve(program, "ao1", tol=tol, max_iter=max_iter,
                  inner_max_iter=inner_max_iter, svm_solver=inner,
                  svm_options=inner_options, time_limit=time_limit, callback=callback)


@register("fs-ao2", kinds=[FS_SVM], certify_tol=1e-2, **_COMMON,
          description="Margin AO-II (Tayal 2014, Alg. 3): SVM block / Psi block; "
                      "fixed points not stationary for Omega")
@renamed_keywords(svm_solver="inner", svm_options="inner_options")
def solve_fs_ao2(program: Any, *, tol: float = 1e-4, max_iter: int | None = None,
                 inner_max_iter: int = 100, inner: str = "smo",
                 inner_options: dict | None = None, time_limit: float | None = None,
                 callback: Any = None, normalize: bool = True,
                 ao2_stop: str = "change") -> Solution:
    r"""Margin AO-II (Algorithm 3).

    ``normalize``: scale the SVM block's :math:`(\bar\beta, \bar b)` to
    :math:`\|f\|_{\mathcal H} = 1` before the FS-II block (``False``: the thesis's literal
    initialisation, which matches only the margin term of the objective). ``ao2_stop``:
    ``"change"`` (default) stops when the support is unchanged and
    :math:`\|z^{k+1}-z^k\|_\infty < \texttt{tol}`, ``"support"`` on the unchanged support
    alone (the thesis's rule).

    Notes
    -----
    Margin AO-II, Algorithm 3: the SVM block, then
    :math:`(z, \lambda) \leftarrow \arg\min\Psi(z, \lambda)` (7.15) from
    :math:`(z^k, 1/\sqrt{\bar\beta^\top K_{z^k}\bar\beta})` (the thesis's
    initialisation, which matches only the margin term; a heuristic); stop when the
    selected support :math:`\{l : z_l > 0.01\max_k z_k\}` no longer changes (the
    thesis's ":math:`\|z^{k+1} - z^k\|_0 = 0`" with its 1 % zero threshold) *and*
    :math:`\|z^{k+1} - z^k\|_\infty < \texttt{tol}` (``ao2_stop="change"``, the
    default: the support alone can repeat after one step while :math:`z` still moves);
    ``ao2_stop="support"`` is the thesis's rule alone.
    """
    return _solve(program, "ao2", tol=tol, max_iter=max_iter,
                  inner_max_iter=inner_max_iter, svm_solver=inner,
                  svm_options=inner_options, time_limit=time_limit, callback=callback,
                  normalize=normalize, ao2_stop=ao2_stop)


@register("fs-full", kinds=[FS_SVM], certify_tol=1e-3, **_COMMON,
          description="FULL-FS: Coleman-Li reflective trust region on Omega over (beta, b, z)")
@renamed_keywords(svm_solver="inner", svm_options="inner_options")
def solve_fs_full(program: Any, *, tol: float = 1e-4, max_iter: int | None = None,
                  inner_max_iter: int = 100, inner: str = "smo",
                  inner_options: dict | None = None, time_limit: float | None = None,
                  callback: Any = None) -> Solution:
    """FULL-FS; ``tol`` on the scaled gradient, ``max_iter`` trust-region iterations.

    ``inner_max_iter`` is accepted for a uniform signature and unused.

    Notes
    -----
    FULL-FS: the Coleman–Li reflective trust region on :math:`\\Omega` over
    all of :math:`(\\beta, b, z)` (:math:`O((n+d)^3)` per iteration).
    """
    return _solve(program, "full", tol=tol, max_iter=max_iter,
                  inner_max_iter=inner_max_iter, svm_solver=inner,
                  svm_options=inner_options, time_limit=time_limit, callback=callback)


@register("fs-gmkl", kinds=[FS_SVM], certify_tol=1e-2, **_COMMON,
          description="GMKL (Varma & Babu 2009): projected gradient on the hinge SVM value")
@renamed_keywords(svm_solver="inner", svm_options="inner_options")
def solve_fs_gmkl(program: Any, *, tol: float = 1e-4, max_iter: int | None = None,
                  inner_max_iter: int = 100, inner: str = "smo",
                  inner_options: dict | None = None, time_limit: float | None = None,
                  callback: Any = None) -> Solution:
    r"""GMKL; ``tol`` on the projected gradient, ``max_iter`` gradient steps.

    ``inner_max_iter`` is accepted for a uniform signature and unused.

    Notes
    -----
    GMKL (Varma & Babu 2009; F31, A10): projected gradient with Armijo
    backtracking on :math:`F(z) + \mu\mathbf 1^\top z`, :math:`F(z)` the (hinge) SVM
    dual value with kernel :math:`K_z`, gradient by Danskin's theorem

    .. math::

        \partial F/\partial z_l = -\tfrac12(\alpha\circ y)^\top(\partial_{z_l}K)(\alpha\circ y).
    """
    return _solve(program, "gmkl", tol=tol, max_iter=max_iter,
                  inner_max_iter=inner_max_iter, svm_solver=inner,
                  svm_options=inner_options, time_limit=time_limit, callback=callback)
