r"""Embedded feature selection for the Gaussian-kernel SVM (Tayal 2014, chapter 7).

A non-negative scale :math:`z_l` per feature enters the Gaussian kernel (7.17) and is
learned with the SVM under :math:`\mu\mathbf 1^\top z`. The problem is non-convex: its
solvers are local and the certificate reports a *second-order stationary point*, never
a global minimum. The objectives (7.7), (7.14), (7.15), their derivatives and the SVM
block are in the Notes of :func:`feature_scaled_svm`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._utils.deprecation import renamed_keywords
from ..contracts.feature_scaling import (
    MAX_TENSOR_BYTES,
    FeatureScaledSVM,
    FeatureScalingObjective,
    fs_kernel,
    projected_hessian_label,
    second_order,
    smoothed_hinge,
    support_mask,
)
from ..exceptions import ProgramError
from ..kinds import FS_SVM
from ..program import Program, require_solution
from ..solution import Residuals, Solution
from . import svm

__all__ = [
    "MAX_TENSOR_BYTES",
    "FeatureScalingObjective",
    "feature_scaled_svm",
    "fs_kernel",
    "smoothed_hinge",
    "support_mask",
    "svm_block_program",
]


def _svm_dual(G: np.ndarray, y: np.ndarray, C: float) -> Program:
    return svm.soft_margin(G, y, C, kernel="precomputed", form="dual")


@renamed_keywords(eps="smoothing")
def svm_block_program(X: np.ndarray, y: np.ndarray, z: np.ndarray, C: float, *,
                      smoothing: float = 0.5, K: np.ndarray | None = None) -> Program:
    r"""The SVM block: the program whose optimum minimises :math:`\Omega(\cdot, \cdot, z)`.

    The SVM dual (kind ``qp.svm.dual``) with the precomputed Gram matrix
    :math:`K_z + (2\epsilon/C) I`, :math:`\epsilon` = ``smoothing`` (Notes of
    :func:`feature_scaled_svm`); ``program.decode(solution)`` gives ``dual_coef``
    (:math:`\beta`) and ``b``. Solve it with any solver of that kind, e.g.
    ``program.decode(conicml.solve(program, "smo"))``.

    This replaces ``svm_block(X, y, z, C, solver=...)``, which solved the block inside
    the formulation (a formulation builds programs and never solves them); the old
    name is kept for one release as :func:`conicml.feature_scaling.svm_block`.
    """
    if K is None:
        K = fs_kernel(X, X, np.asarray(z, float))
    return _svm_dual(K + (2 * smoothing / C) * np.eye(K.shape[0]), y, C)


@renamed_keywords(eps="smoothing")
def feature_scaled_svm(X: Any, y: Any, C: float = 1.0, mu: float = 1.0, *,
                       smoothing: float = 0.5, z0: Any = None) -> Program:
    r"""The feature-scaled Gaussian-kernel SVM, :math:`\min_{z\ge0}\Omega(\beta, b, z)` (7.7).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels exactly +1 / -1, both present.
    C : float, default=1.0
        Loss weight (> 0).
    mu : float, default=1.0
        :math:`\ell_1` weight on :math:`z` (>= 0).
    smoothing : float, default=0.5
        Smoothing width :math:`\epsilon` of the hinge (7.8) (``eps`` before this
        release, still accepted with a ``FutureWarning``).
    z0 : array-like of shape (d,), optional
        Starting scales, >= 0 (default :math:`\mathbf 1`, F37).

    Returns
    -------
    Program
        Kind ``nonconvex.fs.svm`` (default solver ``fs-ao2``); no cvxpy problem (the
        problem is non-convex). ``decode`` gives ``z``, ``dual_coef`` (:math:`\beta`),
        ``b``, ``support`` (:math:`z_l > 0.01\max_k z_k`), ``objective``
        (:math:`\Omega`), ``vmin``, ``stationarity`` and ``label`` (Table 7.1: see
        :func:`conicml.contracts.feature_scaling.projected_hessian_label`).

    Notes
    -----
    **Certificate** (recomputed from the returned :math:`(\beta, b, z)`): ``primal`` is
    the violation of :math:`z \ge 0` relative to :math:`\max(1, \|z\|_\infty)`;
    ``dual`` the projected gradient of :math:`\Omega` (the first-order condition over
    :math:`z \ge 0`, on the free variables and the active :math:`z_l`) divided by
    :math:`\max(1, C, \mu)`, the size of the gradient's terms :math:`C\ell'` and
    :math:`\mu`; ``gap`` is *not* a duality gap (a non-convex program has no bound to
    close): it holds the second-order number, the most negative eigenvalue of the
    projected Hessian relative to :math:`\max(1, \|H_p\|)` (0 when the projected
    Hessian is PSD; ``inf``, not computed, when the Hessian's order :math:`n + 1 + d`
    exceeds :data:`~conicml.contracts.feature_scaling.DENSE_HESSIAN_MAX` and ``dual``
    exceeds 1e-2, so that the first-order number alone fails). ``OPTIMAL`` thus means
    a certified second-order stationary point, a local-minimum candidate; a saddle
    (Table 7.1) or AO-II's fixed point, which is in general not stationary for
    :math:`\Omega`, is ``OPTIMAL_INACCURATE`` with the failing number. Different
    methods reach different such points: in :func:`conicml.compare` disagreement is
    information, not an error.

    A non-negative feature-scaling vector :math:`z \in \mathbb R^d_{\ge 0}` enters the
    feature-scaled Gaussian kernel (7.17)

    .. math::

        k(Zx, Zx') = \exp\Big(-\sum_{l=1}^d z_l^2 (x_l - x'_l)^2\Big),\qquad
        Z = \operatorname{diag}(z),

    and is learned jointly with the SVM under the penalty :math:`\mu\|z\|_1 = \mu\mathbf 1^\top z`
    (linear because :math:`z \ge 0`; no non-smooth absolute value is added, so the
    trust-region methods see a smooth function).
    With :math:`f = K_z\beta + b\mathbf 1` and the smoothed hinge :math:`\ell = \ell_\epsilon`,
    :math:`\epsilon = 1/2` (7.8):

    * :math:`\Omega(\beta, b, z) = \tfrac12\beta^\top K_z\beta + C\sum_i\ell(y_if_i)
      + \mu\mathbf 1^\top z` (7.7), over :math:`(\beta, b, z)`, :math:`z \ge 0`;
    * :math:`\bar\Omega(\bar\beta, \bar b, z, \lambda) = \frac{1}{2\lambda^2}\bar\beta^\top
      K_z\bar\beta + C\sum_i\ell(y_if_i/\lambda) + \mu\mathbf 1^\top z` (7.14),
      :math:`\lambda` being the
      *functional margin* (not a regulariser); invariant under
      :math:`(\bar\beta, \bar b, \lambda) \to t(\bar\beta, \bar b, \lambda)`;
    * :math:`\Psi(z, \lambda) = \frac{1}{2\lambda^2} + C\sum_i\ell(y_if_i/\lambda)
      + \mu\mathbf 1^\top z` (7.15), :math:`(\bar\beta, \bar b)` fixed.

    :class:`FeatureScalingObjective` evaluates the three with exact gradients and
    Hessians. With :math:`D^{(l)}_{ij} = (x_{il} - x_{jl})^2`, :math:`t_i = y_if_i/\lambda`,
    :math:`a = Cy\circ\ell'(t)/\lambda`, :math:`w = C\ell''(t)/\lambda^2`,
    :math:`e = -Cy\circ(\ell''(t)t + \ell'(t))/\lambda^2` and

    .. math::

        \partial_{z_l} K = -2z_l D^{(l)}\circ K,\qquad
        \partial^2_{z_lz_m} K = 4z_lz_m D^{(l)}\circ D^{(m)}\circ K - 2\delta_{lm}D^{(l)}\circ K,

    the derivatives follow by the chain rule through :math:`f` (written out in
    :meth:`FeatureScalingObjective.evaluate`; the tests check them against finite
    differences). The full Hessian of :math:`\Omega` has size :math:`n + 1 + d`
    (section 7.4: the projected Hessian decides minimum vs saddle).

    **The SVM block.** At fixed :math:`z` the minimiser of :math:`\Omega` over
    :math:`(\beta, b)` is a standard SVM [derived]: the conjugate of
    :math:`C\ell_\epsilon` is the hinge's plus :math:`\epsilon\alpha^2/C`, so the dual is
    the SVM dual (F4) with the Gram matrix :math:`K_z + (2\epsilon/C)I`, and
    :math:`\beta = y\circ\alpha`, :math:`b` its KKT bias. :func:`svm_block_program` builds
    it (:func:`conicml.formulations.svm.soft_margin`, ``kernel="precomputed"``), so any
    registered SVM solver serves it.

    **The program.** :func:`feature_scaled_svm` builds the non-convex program (kind
    ``nonconvex.fs.svm``) that the ``fs-simple-ao``, ``fs-ao1``, ``fs-ao2``, ``fs-full``
    and ``fs-gmkl`` solvers (:mod:`conicml.solvers.feature_scaling`) minimise. They are
    local methods: its certificate reports a *second-order stationary point* of
    :math:`\Omega` over :math:`z \ge 0`, never a global minimum.
    """
    obj = FeatureScalingObjective(X, y, C, mu, smoothing)
    if z0 is None:
        z_start = np.ones(obj.d)
    else:
        z_start = np.array(z0, dtype=float).reshape(-1)
        if z_start.shape != (obj.d,) or not np.all(np.isfinite(z_start)) \
                or np.any(z_start < 0):
            raise ProgramError(f"z0 must hold {obj.d} finite scales >= 0 (one per feature of "
                               f"X), got shape {np.shape(z0)}")
    con = FeatureScaledSVM(objective=obj, z0=z_start,
                           svm_dual=functools.partial(_svm_dual, y=obj.y, C=obj.C))
    return Program(FS_SVM, {"fs": con, "n": obj.n, "d": obj.d}, build=None,
                   decode=_decode, default_solver="fs-ao2",
                   description=f"feature-scaled Gaussian-kernel SVM (C={obj.C:g}, "
                               f"mu={obj.mu:g}; Tayal 2014 (7.7))",
                   certify=_certify)


def _point(data: Mapping[str, Any], solution: Solution):
    n = data["n"]
    beta = np.asarray(solution.values["beta"], float).reshape(n)
    return beta, float(np.asarray(solution.values["b"], float)), \
        np.asarray(solution.values["z"], float).reshape(data["d"])


def _decode(data: Mapping[str, Any], solution: Solution) -> dict:
    require_solution(solution, FS_SVM)
    con: FeatureScaledSVM = data["fs"]
    obj = con.objective
    beta, b, z = _point(data, solution)
    stat_tol = float(solution.extras.get("stationarity_tol", 1e-2 * max(1.0, obj.C, obj.mu)))
    vmin, label, value, stat = projected_hessian_label(obj, beta, b, z,
                                                       stationarity_tol=stat_tol)
    return {"z": z, "dual_coef": beta, "b": b, "support": support_mask(z),
            "objective": value, "vmin": vmin, "stationarity": stat, "label": label}


#: The relative first-order number above which a large problem's certificate does not
#: compute the Hessian's eigenvalues: the largest certify_tol of the fs-* solvers.
_SECOND_ORDER_SKIP = 1e-2


def _certify(data: Mapping[str, Any], solution: Solution) -> Residuals:
    if not all(k in solution.values for k in ("beta", "b", "z")):
        return Residuals(source="recomputed")
    obj: FeatureScalingObjective = data["fs"].objective
    beta, b, z = _point(data, solution)
    if not (np.all(np.isfinite(beta)) and math.isfinite(b) and np.all(np.isfinite(z))):
        return Residuals(primal=math.inf, dual=math.inf, gap=math.inf, source="recomputed")
    primal = max(0.0, -float(np.min(z, initial=0.0))) / max(1.0, float(np.max(np.abs(z))))
    scale = max(1.0, obj.C, obj.mu)
    # the eigenvalues are skipped (large n only) where the first-order number alone
    # already fails every fs-* solver's certify_tol (1e-2 at most)
    value, g, eig, free = second_order(obj, beta, b, np.maximum(z, 0.0),
                                       skip_above=_SECOND_ORDER_SKIP * scale)
    stat = max(float(np.max(np.abs(g[free]), initial=0.0)),
               float(np.max(-g[~free], initial=0.0)))
    # the reported objective is checked against the recomputed Omega
    mismatch = abs(solution.objective - value) / max(1.0, abs(value)) \
        if math.isfinite(solution.objective) else 0.0
    if eig is None:
        # not computed: counted as failing, so that no certify_tol certifies the point
        # on its first-order number alone
        gap = math.inf
    else:
        curvature = max(0.0, -float(eig[0])) / max(1.0, float(np.max(np.abs(eig))))
        gap = max(curvature, mismatch)
    return Residuals(primal=primal, dual=stat / scale, gap=gap, source="recomputed")


_REMOVED = {
    "svm_block": "svm_block solved the SVM block inside the formulation; a formulation "
                 "only builds programs: use svm_block_program(X, y, z, C) and "
                 "conicml.solve (or the deprecated conicml.feature_scaling.svm_block, "
                 "kept one release)",
}


def __getattr__(name: str) -> Any:
    # no lazy import of the solving side: a formulation never imports it
    if name in _REMOVED:
        raise AttributeError(f"conicml.formulations.feature_scaling.{name} was removed: "
                             f"{_REMOVED[name]}")
    raise AttributeError(f"module 'conicml.formulations.feature_scaling' has no attribute "
                         f"{name!r}")
