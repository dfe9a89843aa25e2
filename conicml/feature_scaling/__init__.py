"""Deprecated: the feature-scaling optimisers now live in the layers of the data flow.

* the program: :func:`conicml.formulations.feature_scaling.feature_scaled_svm`;
* the optimisers: the registered solvers ``fs-simple-ao``, ``fs-ao1``, ``fs-ao2``,
  ``fs-full``, ``fs-gmkl`` (:mod:`conicml.solvers.feature_scaling`), so
  ``conicml.solve(program, "fs-full")`` and ``conicml.compare(program, [...])``;
* the estimator: :class:`conicml.estimators.FeatureScalingSVC`;
* the data generator: :func:`conicml.datasets.ndcc_like`.

The names below are kept for one release; each access emits a :class:`FutureWarning`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: the old names (each access warns); nothing new is exported from here
_NAMES = ("METHODS", "FSResult", "TRResult", "bound_trust_region", "fit_feature_scaling",
          "gmkl_objective", "ndcc_like", "projected_hessian_label", "support_mask",
          "svm_block")
__all__: list[str] = []


@dataclass
class _FSResult:
    """Outcome of :func:`fit_feature_scaling` (deprecated; read the Solution instead)."""

    method: str
    z: np.ndarray
    beta: np.ndarray
    b: float
    objective: float
    iterations: int
    inner_iterations: int
    converged: bool
    message: str
    vmin: float
    label: str
    stationarity: float
    time: float
    history: list = field(default_factory=list)


def _fit_feature_scaling(X: Any, y: Any, *, method: str = "ao2", C: float = 1.0,
                         mu: float = 1.0, z0: Any = None, **options: Any) -> _FSResult:
    """Build the program and solve it with ``fs-<method>`` (the old one-call API)."""
    from ..formulations.feature_scaling import feature_scaled_svm
    from ..solvers.feature_scaling import METHODS
    from ..solving import solve

    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    program = feature_scaled_svm(X, y, C, mu, z0=z0)
    sol = solve(program, f"fs-{method}", **options)
    model = program.decode(sol)
    return _FSResult(method=method, z=model["z"], beta=model["dual_coef"], b=model["b"],
                     objective=model["objective"], iterations=sol.iterations,
                     inner_iterations=sol.extras["inner_iterations"],
                     converged=sol.extras["converged"],
                     message=sol.message.split(": ", 1)[-1], vmin=model["vmin"],
                     label=model["label"], stationarity=model["stationarity"],
                     time=sol.solve_time, history=list(sol.extras["history"]))


def _gmkl_objective(obj: Any, z: np.ndarray, solver: str = "smo",
                    options: dict | None = None, alpha0: np.ndarray | None = None):
    """The old signature (a ``FeatureScalingObjective`` first) of ``gmkl_objective``."""
    from ..formulations.feature_scaling import feature_scaled_svm
    from ..solvers.feature_scaling import gmkl_objective

    fs = feature_scaled_svm(obj.X, obj.y, obj.C, obj.mu, smoothing=obj.eps).data["fs"]
    return gmkl_objective(fs, z, solver, options, alpha0)


def _svm_block(X: np.ndarray, y: np.ndarray, z: np.ndarray, C: float, *, eps: float = 0.5,
               solver: str = "smo", solver_options: dict | None = None,
               K: np.ndarray | None = None):
    """``(beta, b, solution)`` of the SVM block: ``svm_block_program`` and ``solve``."""
    from ..formulations.feature_scaling import svm_block_program
    from ..solving import solve

    program = svm_block_program(X, y, z, C, smoothing=eps, K=K)
    solution = solve(program, solver, **dict(solver_options or {}))
    model = program.decode(solution)
    return np.asarray(model["dual_coef"], float), float(model["b"]), solution


def _resolve(name: str) -> tuple[Any, str]:
    if name == "METHODS":
        from ..solvers.feature_scaling import METHODS
        return METHODS, "the registered solvers 'fs-<method>' (conicml.solvers.available" \
                        "('nonconvex.fs.svm'))"
    if name in ("TRResult", "bound_trust_region"):
        from ..solvers import _bound_tr
        return getattr(_bound_tr, name), "the fs-* solvers (conicml.solvers.feature_scaling)"
    if name in ("projected_hessian_label", "support_mask"):
        from ..contracts import feature_scaling as contract
        return getattr(contract, name), f"conicml.contracts.feature_scaling.{name}"
    if name == "ndcc_like":
        from ..datasets import ndcc_like
        return ndcc_like, "conicml.datasets.ndcc_like"
    local = {
        "FSResult": (_FSResult, "conicml.solve(program, 'fs-<method>'), a Solution"),
        "fit_feature_scaling": (_fit_feature_scaling,
                                "conicml.formulations.feature_scaling.feature_scaled_svm "
                                "and conicml.solve(program, 'fs-<method>')"),
        "gmkl_objective": (_gmkl_objective, "conicml.solvers.feature_scaling.gmkl_objective"),
        "svm_block": (_svm_block, "conicml.formulations.feature_scaling.svm_block_program "
                                  "and conicml.solve"),
    }
    if name in local:
        return local[name]
    raise AttributeError(f"module 'conicml.feature_scaling' has no attribute {name!r}")


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module 'conicml.feature_scaling' has no attribute {name!r}")
    value, instead = _resolve(name)
    warnings.warn(f"conicml.feature_scaling.{name} is deprecated and will be removed in 0.3; "
                  f"use {instead}", FutureWarning, stacklevel=2)
    return value
