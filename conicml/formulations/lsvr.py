r"""Local Support Vector Regression (LSVR) as a single SOCP (seed 004, ch. 6).

Regression, not classification: data :math:`(x_i, y_i) \in \mathbb R^d \times
\mathbb R`, :math:`i = 1..N`, prediction :math:`f(x) = w^\top x + b` (eq. 6.1;
kernel version :math:`f(x) = \sum_j \mu_j k(x_j, x) + b`).

**Model (eqs. 6.2–6.3).** With a local covariance :math:`\Sigma_i` per point
and :math:`\sigma_i(w) = \sqrt{w^\top\Sigma_i w}` (the local volatility of
:math:`f` around :math:`x_i`),

.. math::

    \min_{w,b,\xi,\xi^*}\ \frac1N\sum_i \sigma_i(w) + C\sum_i(\xi_i + \xi_i^*)
    \quad\text{s.t.}\quad |y_i - f(x_i)| \le \epsilon\,\sigma_i(w) + \text{slack},

a tube whose half-width :math:`\epsilon\sigma_i(w)` varies from point to point.
The constraints are reverse-convex, so the thesis solves the **relaxation**
of eqs. (6.13)–(6.15), in which :math:`\sigma_i(w)` is replaced by an upper
bound :math:`t_i` (section 6.4; this is what this module builds, kind
``"socp.lsvr"``):

.. math::

    \min_{w,b,t,\xi,\xi^*}\ \frac1N\sum_i t_i + C\sum_i(\xi_i + \xi_i^*)
    \quad\text{s.t.}\quad
    \begin{aligned}[t]
      & y_i - (w^\top x_i + b) \le \epsilon t_i + \xi_i, \\
      & (w^\top x_i + b) - y_i \le \epsilon t_i + \xi_i^*, \\
      & \|R_i w\|_2 \le t_i, \qquad \xi_i,\ \xi_i^* \ge 0,
    \end{aligned}

with :math:`R_i^\top R_i = \Sigma_i` (``t_i >= 0`` is implied by the cone).
The program's objective — the same for every solver — is this relaxed value.

**Local covariances (section 6.1.2).** :math:`\Sigma_i` is the 1/m-normalised
covariance of the :math:`m = 2k+1` points of a window :math:`W_i` around
:math:`x_i` (the point and "the 2k data points closest to it"), so
:math:`R_i = m^{-1/2}(X_{W_i} - \mathbf 1\bar x_i^\top)`. Windows
(``neighborhood``):

* ``"index"`` (default; the thesis's time series): :math:`W_i = \{i-k..i+k\}`.
  *Boundary rule* (the thesis leaves it open, note §6.12): the window is
  **clamped** to :math:`\{s..s+2k\}` with :math:`s = \min(\max(i-k, 0), N-2k-1)`,
  i.e. the :math:`2k` points closest to :math:`i` in index distance (ties to the
  inner side). Every window therefore has exactly :math:`2k+1` points, the
  normalisation :math:`1/(2k+1)` of Theorem 19 holds for every :math:`i`, and
  :math:`N \ge 2k+1` is required.
* ``"nearest"``: the point and its :math:`2k` nearest neighbours in Euclidean
  distance of the inputs (kernel-induced distance for ``kernel="precomputed"``),
  ties broken by index — for unordered data such as the thesis's sinc set.

**Facts the tests check** (derived for conicml, [D]):

* Fixing :math:`(w, b)` and minimising over :math:`t_i \ge \sigma_i`, the
  per-point cost :math:`t_i/N + C(|r_i| - \epsilon t_i)_+` has slope
  :math:`1/N - C\epsilon` below :math:`|r_i|/\epsilon`. Hence the relaxation
  is **exact** (:math:`t_i = \sigma_i(w)` and the relaxed optimum equals the
  original eq.-6.2 optimum, which is then convex) iff :math:`NC\epsilon \le 1`;
  for :math:`NC\epsilon > 1` all slacks vanish, :math:`t_i =
  \max(\sigma_i, |r_i|/\epsilon)` and the solution **does not depend on C**
  (note §6.11; the thesis's sinc runs, N = 50, C = 100, ε ≥ 0.2, are there).
  ``decode`` reports both objectives and ``"relaxation_exact"``.
* :math:`\Sigma_i = 0` for all :math:`i`: least-absolute-deviation regression,
  value :math:`\min(C, 1/(N\epsilon))\sum_i|r_i|`.
* :math:`\Sigma_i = I` (eqs. 6.5–6.6): the "ℓ1-norm SVR" of Lemma 18 with the
  tube :math:`\epsilon\|w\|`. If :math:`(w_2, b_2)` is the standard ε-SVR
  solution (:math:`\tfrac12\|w\|^2 + C_2\sum(|r_i| - \epsilon_1)_+`, e.g.
  :class:`sklearn.svm.SVR`) with dual coefficients :math:`\beta_i`, then by the
  KKT conditions it solves the relaxed LSVR with :math:`\Sigma_i = I`,
  :math:`\epsilon = \epsilon_1/\|w_2\|` and
  :math:`C = 1/(\|w_2\|/C_2 + \epsilon_1 S/\|w_2\|)`,
  :math:`S = \sum_i|\beta_i|/C_2`, provided :math:`NC\epsilon \le 1`.
  With :math:`\epsilon_1 = 0` this is note T4: :math:`\min\|w\| + C\sum|r_i|`.
  (Vanishing covariances do *not* give the ε-SVR; the identity covariance does.)

**Kernel LSVR (eqs. 6.16–6.18, Theorem 19).** The optimal feature-space
weight lies in the span of the mapped data, :math:`w = \sum_j\mu_j\varphi(x_j)`,
so :math:`w^\top\varphi(x_i) = (K\mu)_i` and :math:`w^\top\Sigma_i^\varphi w =
\|L_i\mu\|^2` with :math:`L_i = m^{-1/2}(K_{W_i,:} - \mathbf 1 l_i^\top)`,
:math:`l_i = ` the mean of the rows :math:`K_{W_i,:}` (the thesis's printed
:math:`l_i` is garbled; note §2.11). Everything depends on :math:`\mu` only
through :math:`K\mu`; with a factor :math:`K = FF^\top`
(:func:`conicml.kernels.psd_factor`) and :math:`K\mu = Fv` the kernel program
is the linear program above on the empirical features :math:`F` (kind
``"socp.lsvr.kernel"``, variable ``v`` instead of ``w``). This removes the
rank degeneracy of the coefficient space that makes interior-point solvers
fail (note §5.3); ``decode`` returns the minimum-norm :math:`\mu` with
:math:`F^\top\mu = v` as ``"dual_coef"``.

Hyperplane convention: :math:`f(x) = w^\top x + b` as in the thesis (ch. 6
already writes ``+ b``; no sign conversion needed).
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral
from typing import Any

import cvxpy as cp
import numpy as np

from .._validation import check_matrix, check_positive
from ..exceptions import ProgramError
from ..kernels import Kernel, make_kernel, psd_factor
from ..program import ConicForm, Program, require_solution
from ..solution import Solution

__all__ = [
    "local_factors",
    "local_windows",
    "lsvr",
    "lsvr_from_covariances",
    "predict",
]

NEIGHBORHOODS = ("index", "nearest")
KIND = "socp.lsvr"
KERNEL_KIND = "socp.lsvr.kernel"


# -- validation ----------------------------------------------------------------------
def _check_targets(y: object, n_samples: int) -> np.ndarray:
    try:
        arr = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"y must hold real-valued regression targets: {exc}") from exc
    if arr.ndim != 1:
        raise ProgramError(
            f"y must be 1-D (one real target per sample), got shape {arr.shape}"
        )
    if arr.shape[0] != n_samples:
        raise ProgramError(
            f"shape mismatch: X has {n_samples} rows but y has {arr.shape[0]} targets"
        )
    if not np.all(np.isfinite(arr)):
        raise ProgramError("y contains NaN or infinite values")
    return arr


def _check_window(k: object, n_samples: int) -> int:
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise ProgramError(f"k (window half-width) must be a positive integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise ProgramError(f"k (window half-width) must be >= 1, got {k}")
    if 2 * k + 1 > n_samples:
        raise ProgramError(
            f"k={k} needs windows of 2k+1={2 * k + 1} points but there are only "
            f"{n_samples} samples; use k <= {(n_samples - 1) // 2}"
        )
    return k


def _check_eps_C(epsilon: object, C: object) -> tuple[float, float]:
    eps = check_positive(epsilon, "epsilon", allow_zero=True)
    return eps, check_positive(C, "C")


# -- local neighbourhoods ------------------------------------------------------------
def local_windows(n_samples: int, k: int, *, neighborhood: str = "index",
                  X: np.ndarray | None = None, kernel: Kernel | None = None) -> np.ndarray:
    r"""Indices of the :math:`2k+1` points of every local window.

    Parameters
    ----------
    n_samples : int
        Number of points :math:`N` (must be at least :math:`2k+1`).
    k : int
        Window half-width (thesis: :math:`k`; 2k neighbours per point).
    neighborhood : {"index", "nearest"}, default="index"
        ``"index"``: :math:`\{i-k..i+k\}` clamped into :math:`\{0..N-1\}` (see
        the module docstring for the boundary rule). ``"nearest"``: the point
        and its 2k nearest neighbours (needs ``X``).
    X : ndarray of shape (n_samples, n_features), optional
        Inputs for ``"nearest"`` (the Gram matrix if ``kernel`` is precomputed).
    kernel : Kernel, optional
        For ``kernel.name == "precomputed"``, distances are the kernel-induced
        :math:`K_{ii} + K_{jj} - 2K_{ij}`.

    Returns
    -------
    ndarray of shape (n_samples, 2k+1), dtype int
        Row ``i`` lists the window of point ``i`` in increasing order.
    """
    m = 2 * k + 1
    if neighborhood == "index":
        start = np.clip(np.arange(n_samples) - k, 0, n_samples - m)
        return start[:, None] + np.arange(m)[None, :]
    if neighborhood != "nearest":
        raise ProgramError(
            f"neighborhood must be one of {', '.join(NEIGHBORHOODS)}, got {neighborhood!r}"
        )
    if X is None:
        raise ProgramError("neighborhood='nearest' needs the inputs X")
    if kernel is not None and kernel.name == "precomputed":
        diag = np.diag(X)
        dist = diag[:, None] + diag[None, :] - 2.0 * X
    else:
        sq = np.einsum("ij,ij->i", X, X)
        dist = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    dist = np.maximum(dist, 0.0)
    np.fill_diagonal(dist, -1.0)  # the point itself always belongs to its window
    order = np.argsort(dist, axis=1, kind="stable")[:, :m]
    return np.sort(order, axis=1)


def local_factors(Z: np.ndarray, windows: np.ndarray) -> np.ndarray:
    r"""Stacked factors :math:`R_i` with :math:`R_i^\top R_i = \Sigma_i`.

    :math:`R_i = m^{-1/2}(Z_{W_i} - \mathbf 1\bar z_i^\top)` (the 1/m-normalised
    local covariance of section 6.1.2). When the feature dimension ``q`` is
    below the window size ``m``, :math:`R_i` is replaced by the triangular
    factor of its QR decomposition (same :math:`\|R_i w\|`, smaller cones).

    Returns
    -------
    ndarray of shape (n_samples, min(m, q), q)
    """
    m = windows.shape[1]
    blocks = Z[windows]  # (N, m, q)
    R = (blocks - blocks.mean(axis=1, keepdims=True)) / np.sqrt(m)
    if Z.shape[1] < m:
        R = np.linalg.qr(R, mode="r")
    return np.ascontiguousarray(R)


def _factors_from_covariances(covariances: object, n_samples: int,
                              n_features: int) -> np.ndarray:
    try:
        S = np.asarray(covariances, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"covariances must be a numeric array: {exc}") from exc
    if S.shape == (n_features, n_features):
        S = np.broadcast_to(S, (n_samples, n_features, n_features))
    if S.shape != (n_samples, n_features, n_features):
        raise ProgramError(
            f"covariances must have shape ({n_features}, {n_features}) (one shared matrix, "
            f"eq. 6.4) or ({n_samples}, {n_features}, {n_features}) (one per sample), "
            f"got {S.shape}"
        )
    if not np.all(np.isfinite(S)):
        raise ProgramError("covariances contain NaN or infinite values")
    factors = np.zeros((n_samples, n_features, n_features))
    for i in range(n_samples):
        L = psd_factor(S[i], "eigen")  # L L^T = S_i, so ||L^T w|| = sqrt(w^T S_i w)
        factors[i, : L.shape[1], :] = L.T
    return factors


# -- the conic program ---------------------------------------------------------------
def _build(data: Mapping[str, Any]) -> ConicForm:
    Z, y, R = data["features"], data["y"], data["factors"]
    eps, C = data["epsilon"], data["C"]
    n, p, q = R.shape
    name = "w" if data["kind"] == KIND else "v"
    w = cp.Variable(q, name=name)
    b = cp.Variable(name="b")
    t = cp.Variable(n, name="t")
    xi = cp.Variable(n, name="xi")
    xi_star = cp.Variable(n, name="xi_star")
    f = Z @ w + b
    # column i of `local` is R_i w (row i*p + j of the stacked matrix is R_i[j]).
    local = cp.reshape(R.reshape(n * p, q) @ w, (p, n), order="F")
    constraints = {
        "upper": y - f <= eps * t + xi,  # (6.14), relaxed: sigma_i(w) -> t_i
        "lower": f - y <= eps * t + xi_star,
        "local": cp.norm(local, 2, axis=0) <= t,  # (6.15): ||R_i w|| <= t_i
        "xi_nonneg": xi >= 0,
        "xi_star_nonneg": xi_star >= 0,
    }
    objective = cp.sum(t) / n + C * cp.sum(xi + xi_star)  # (6.13)
    problem = cp.Problem(cp.Minimize(objective), list(constraints.values()))
    variables = {name: w, "b": b, "t": t, "xi": xi, "xi_star": xi_star}
    return ConicForm(problem, variables, constraints)


def _support_tolerance(y: np.ndarray) -> float:
    # interior-point points sit ~1e-8 inside their constraints; 1e-6 of the target
    # scale separates "on the tube" from "strictly inside" robustly.
    return 1e-6 * max(1.0, float(np.max(np.abs(y), initial=0.0)))


def _decode(data: Mapping[str, Any], solution: Solution) -> dict:
    kind = data["kind"]
    require_solution(solution, kind)
    Z, y, R = data["features"], data["y"], data["factors"]
    eps, C = data["epsilon"], data["C"]
    n = y.size
    coef = np.asarray(solution.values["w" if kind == KIND else "v"], dtype=float)
    b = float(solution.values["b"])
    t = np.asarray(solution.values["t"], dtype=float)
    fitted = Z @ coef + b
    residual = y - fitted
    local_std = np.linalg.norm(R @ coef, axis=1)  # sigma_i(w) = sqrt(w^T Sigma_i w)
    original = float(np.sum(local_std) / n
                     + C * np.sum(np.maximum(np.abs(residual) - eps * local_std, 0.0)))
    tube = eps * t
    model: dict[str, Any] = {
        "b": b,
        "t": t,
        "xi": np.asarray(solution.values["xi"], dtype=float),
        "xi_star": np.asarray(solution.values["xi_star"], dtype=float),
        "fitted": fitted,
        "residual": residual,
        "local_std": local_std,
        "tube": tube,
        "support": np.flatnonzero(np.abs(residual) >= tube - _support_tolerance(y)),
        "objective_relaxed": float(np.sum(t) / n + C * np.sum(
            np.asarray(solution.values["xi"]) + np.asarray(solution.values["xi_star"]))),
        "objective_original": original,
        "relaxation_exact": bool(n * C * eps <= 1.0),
    }
    if kind == KIND:
        model["w"] = coef
    else:
        F = data["features"]
        # minimum-norm mu with F^T mu = v, so that K mu = F F^T mu = F v
        mu = np.linalg.lstsq(F.T, coef, rcond=None)[0]
        model["v"] = coef
        model["dual_coef"] = mu
        if data["kernel"].name == "linear":
            model["w"] = data["X"].T @ mu
    return model


def _program(data: dict, description: str) -> Program:
    return Program(data["kind"], data, build=_build, decode=_decode,
                   default_solver="clarabel", description=description)


def lsvr(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float = 0.0,
    C: float = 1.0,
    k: int = 2,
    *,
    neighborhood: str = "index",
    kernel: str = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    form: str | None = None,
    factor: str = "auto",
) -> Program:
    r"""Relaxed Local Support Vector Regression, eqs. (6.13)–(6.15) / Theorem 19.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training inputs, in the order that defines ``neighborhood="index"``
        windows (time order for a series); for ``kernel="precomputed"`` the
        (n, n) Gram matrix.
    y : ndarray of shape (n_samples,)
        Real-valued targets.
    epsilon : float, default=0.0
        Tube factor :math:`\epsilon \ge 0` (local tube half-width
        :math:`\epsilon t_i`).
    C : float, default=1.0
        Cost of a unit of slack (> 0). Irrelevant when :math:`NC\epsilon > 1`.
    k : int, default=2
        Window half-width: local covariances over :math:`2k+1` points
        (:math:`1 \le k \le (N-1)/2`; the thesis uses :math:`k = 2`).
    neighborhood : {"index", "nearest"}, default="index"
        How windows are formed (module docstring; boundary windows are clamped).
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        Kernel of the kernel LSVR (Theorem 19); parameters as in
        :class:`sklearn.svm.SVR` (the thesis's RBF :math:`e^{-\beta\|u-v\|^2}`
        is ``gamma=beta``).
    gamma, degree, coef0
        Kernel hyper-parameters.
    form : {"primal", "kernel"}, optional
        ``"primal"`` (kind ``"socp.lsvr"``, variable ``w``; linear kernel
        only) or ``"kernel"`` (kind ``"socp.lsvr.kernel"``). Default:
        ``"primal"`` for the linear kernel, ``"kernel"`` otherwise.
    factor : {"auto", "cholesky", "eigen"}, default="auto"
        Factor of the Gram matrix for the kernel form
        (:func:`conicml.kernels.psd_factor`).

    Returns
    -------
    Program
        Objective: the relaxed value :math:`\frac1N\sum t_i + C\sum(\xi_i+\xi_i^*)`.
        ``decode`` gives ``"w"`` (primal form, and kernel form with the linear
        kernel), ``"b"`` (:math:`f(x) = w^\top x + b`), or for the kernel form
        ``"dual_coef"`` :math:`\mu` (:math:`f(x) = \sum_j\mu_j k(x_j, x) + b`)
        and ``"v"``; plus ``"t"``, ``"xi"``, ``"xi_star"``, ``"fitted"``,
        ``"residual"``, ``"local_std"`` :math:`\sigma_i(w)`, ``"tube"``
        :math:`\epsilon t_i`, ``"support"`` (points on or outside their local
        tube), ``"objective_relaxed"``, ``"objective_original"`` (eq. 6.2 at the
        returned :math:`(w, b)`) and ``"relaxation_exact"``
        (:math:`NC\epsilon \le 1`). Use :func:`predict` for new inputs.

    Raises
    ------
    ProgramError
        Non-finite or mis-shaped X / y, epsilon < 0, C <= 0, k not a positive
        integer or 2k+1 > n_samples, unknown neighborhood / kernel / form.
    """
    X = check_matrix(X, min_rows=3)
    y = _check_targets(y, X.shape[0])
    eps, C = _check_eps_C(epsilon, C)
    k = _check_window(k, X.shape[0])
    kern = make_kernel(kernel, X, gamma=gamma, degree=degree, coef0=coef0)
    if form is None:
        form = "primal" if kern.name == "linear" else "kernel"
    if form not in ("primal", "kernel"):
        raise ProgramError(f"form must be 'primal' or 'kernel', got {form!r}")
    if form == "primal" and kern.name != "linear":
        raise ProgramError(
            f"form='primal' needs the linear kernel (got kernel={kern.name!r}); "
            "use form='kernel'"
        )
    if factor not in ("auto", "cholesky", "eigen"):
        raise ProgramError(f"factor must be 'auto', 'cholesky' or 'eigen', got {factor!r}")
    windows = local_windows(X.shape[0], k, neighborhood=neighborhood, X=X, kernel=kern)
    if form == "primal":
        features = X
    else:
        features = psd_factor(kern.gram(X), factor)
    data = {
        "kind": KIND if form == "primal" else KERNEL_KIND,
        "X": X, "y": y, "epsilon": eps, "C": C, "k": k, "neighborhood": neighborhood,
        "kernel": kern, "form": form, "windows": windows, "features": features,
        "factors": local_factors(features, windows),
    }
    desc = f"LSVR ({kern.name} kernel, epsilon={eps:g}, C={C:g}, k={k}, {neighborhood})"
    return _program(data, desc)


def lsvr_from_covariances(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    C: float,
    covariances: np.ndarray,
) -> Program:
    r"""Relaxed linear LSVR with user-given covariances :math:`\Sigma_i` (kind ``"socp.lsvr"``).

    The special cases of section 6.2: one shared matrix (eq. 6.4), the identity
    (eqs. 6.5–6.6, Lemma 18) or per-sample matrices from any estimator.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    epsilon : float
        Tube factor (>= 0).
    C : float
        Slack cost (> 0).
    covariances : ndarray of shape (n_features, n_features) or (n_samples, n_features, n_features)
        Symmetric positive semi-definite matrices (factored by
        :func:`conicml.kernels.psd_factor`).

    Returns
    -------
    Program
        As :func:`lsvr` with ``form="primal"``.
    """
    X = check_matrix(X)
    y = _check_targets(y, X.shape[0])
    eps, C = _check_eps_C(epsilon, C)
    data = {
        "kind": KIND, "X": X, "y": y, "epsilon": eps, "C": C, "k": None,
        "neighborhood": None, "kernel": Kernel("linear"), "form": "primal",
        "windows": None, "features": X,
        "factors": _factors_from_covariances(covariances, X.shape[0], X.shape[1]),
    }
    return _program(data, f"LSVR (given covariances, epsilon={eps:g}, C={C:g})")


def predict(data: Mapping[str, Any], model: Mapping[str, Any], X_new: np.ndarray) -> np.ndarray:
    r"""Predictions :math:`f(x)` of a decoded LSVR model at new inputs.

    ``data`` is ``program.data``; ``X_new`` has shape (m, n_features) (for a
    precomputed kernel: kernel values against all training samples, (m, n)).
    """
    X_new = np.asarray(X_new, dtype=float)
    if "w" in model:
        return X_new @ model["w"] + model["b"]
    kern: Kernel = data["kernel"]
    return kern(X_new, data["X"]) @ model["dual_coef"] + model["b"]
