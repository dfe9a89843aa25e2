r"""Figures of the theses: decision boundaries with what the model certifies, ROC curves with
worst-case bounds, solver convergence and comparisons (optional extra ``conicml[plot]``).

Every function draws on a Matplotlib ``Axes`` and returns it. Without ``ax`` a new
:class:`matplotlib.figure.Figure` is created directly (no ``pyplot``, no GUI
backend), so the module is headless-safe: ``ax.figure.savefig("out.png")``
renders with Agg anywhere.

* :func:`plot_decision_boundary` — 2-D data, the boundary :math:`f(x) = 0`, and the
  certificate of the model's family (its Notes).
* :func:`plot_roc` — the empirical ROC curve, and the worst-case bound.
* :func:`plot_convergence` — objective and stopping measure against iterations and
  time, from a :class:`~conicml.solvers.Recorder` passed as ``callback``.
* :func:`plot_comparison` — a :class:`~conicml.Comparison` as time against accuracy.
* :func:`plot_thesis_agreement` — a reproduction's numbers against the thesis's
  (``conicml reproduce``); :func:`plot_table` — a table's numeric columns, for
  reproductions of figures whose thesis printed no numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .comparison import Comparison

__all__ = [
    "bmpm_roc",
    "plot_comparison",
    "plot_convergence",
    "plot_decision_boundary",
    "plot_roc",
    "plot_table",
    "plot_thesis_agreement",
]


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "conicml.plot needs matplotlib: pip install 'conicml[plot]'"
        ) from exc
    return Figure(figsize=(5.5, 4.5)).subplots()


def _two_d(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(
            f"plot_decision_boundary draws 2-D data: X must have shape (n, 2), got {X.shape}"
        )
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    return X, y


def _ellipse(ax: Any, mean: np.ndarray, cov: np.ndarray, kappa: float, **style: Any) -> None:
    r"""Draw :math:`\{x : (x-m)^\top \Sigma^{-1}(x-m) \le \kappa^2\}` as a closed curve."""
    if not (math.isfinite(kappa) and kappa > 0):
        return
    vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    t = np.linspace(0.0, 2.0 * np.pi, 200)
    circle = np.vstack([np.cos(t), np.sin(t)])
    pts = mean[:, None] + kappa * vecs @ (np.sqrt(np.maximum(vals, 0.0))[:, None] * circle)
    ax.plot(pts[0], pts[1], **style)


def _check_fitted(estimator: Any) -> None:
    if not hasattr(estimator, "program_"):
        raise ValueError(
            f"expected a fitted conicml estimator, got {type(estimator).__name__} "
            "(call fit first)"
        )


def _certificate(ax: Any, estimator: Any, X: np.ndarray) -> str:
    """Draw the certified sets of the estimator's family; return what was drawn."""
    data = estimator.program_.data
    name = type(estimator).__name__
    linear = getattr(estimator, "kernel", "linear") == "linear"
    if name in ("MPMClassifier", "BMPMClassifier", "MEMPMClassifier"):
        if not linear:
            raise ValueError(f"{name} ellipsoids are drawn for kernel='linear' only")
        # the program works in x / feature_scale (docs/trust.md): back to the user's units
        s = data.get("feature_scale")
        s = np.ones(data["mx"].shape) if s is None else np.asarray(s, dtype=float)
        Sx = data["Rx"].T @ data["Rx"] * np.outer(s, s)
        Sy = data["Ry"].T @ data["Ry"] * np.outer(s, s)
        _ellipse(ax, data["mx"] * s, Sx, estimator.kappa_alpha_, color="C1", lw=1.5,
                 label=fr"worst case, $\kappa_\alpha$ = {estimator.kappa_alpha_:.3g}")
        _ellipse(ax, data["my"] * s, Sy, estimator.kappa_beta_, color="C0", lw=1.5,
                 label=fr"worst case, $\kappa_\beta$ = {estimator.kappa_beta_:.3g}")
        return "ellipsoids"
    if name == "ChanceConstrainedClassifier":
        if data["kernel"] is not None:
            raise ValueError(f"{name} ellipsoids are drawn for kernel='linear' only")
        _ellipse(ax, data["mean_pos"], data["cov_pos"], estimator.kappa_pos_, color="C1",
                 lw=1.5, label=fr"$\kappa_+$ = {estimator.kappa_pos_:.3g}")
        _ellipse(ax, data["mean_neg"], data["cov_neg"], estimator.kappa_neg_, color="C0",
                 lw=1.5, label=fr"$\kappa_-$ = {estimator.kappa_neg_:.3g}")
        return "ellipsoids"
    if name == "ClusterSOCPClassifier":
        t = np.linspace(0.0, 2.0 * np.pi, 100)
        for center, radius, label in zip(estimator.cluster_centers_, estimator.radii_,
                                          estimator.cluster_labels_):
            color = "C1" if label > 0 else "C0"
            ax.plot(center[0] + radius * np.cos(t), center[1] + radius * np.sin(t),
                    color=color, lw=1.0)
        return "spheres"
    if name == "M4Classifier":
        if not linear:
            raise ValueError(f"{name} margins are drawn for kernel='linear' only")
        m4 = data["m4"]
        w, b = estimator.coef_[0], estimator.intercept_[0]
        scale = data.get("feature_scale")  # internal coordinates: w * feature_scale
        s_pos, s_neg = m4.sigmas(w if scale is None else w * scale)
        _line(ax, X, w, b - estimator.rho_ * s_pos, color="C1", ls="--",
              label=fr"$w^\top x + b = \rho\sigma_+$, $\rho$ = {estimator.rho_:.3g}")
        _line(ax, X, w, b + estimator.rho_ * s_neg, color="C0", ls="--",
              label=r"$w^\top x + b = -\rho\sigma_-$")
        return "margins"
    if hasattr(estimator, "coef_") and name == "SVMClassifier":
        w, b = estimator.coef_[0], estimator.intercept_[0]
        _line(ax, X, w, b - 1.0, color="C1", ls="--", label=r"$f(x) = +1$")
        _line(ax, X, w, b + 1.0, color="C0", ls="--", label=r"$f(x) = -1$")
        return "margins"
    return "none"


def _line(ax: Any, X: np.ndarray, w: np.ndarray, b: float, **style: Any) -> None:
    r"""Draw :math:`w^\top x + b = 0` across the data's range."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.1 * (hi - lo + 1e-12)
    if abs(w[1]) >= abs(w[0]):
        xs = np.array([lo[0] - pad[0], hi[0] + pad[0]])
        ax.plot(xs, -(w[0] * xs + b) / w[1], **style)
    elif w[0] != 0:
        ys = np.array([lo[1] - pad[1], hi[1] + pad[1]])
        ax.plot(-(w[1] * ys + b) / w[0], ys, **style)


def plot_decision_boundary(estimator: Any, X: Any, y: Any, *, ax: Any = None,
                           certificate: bool = True, resolution: int = 200) -> Any:
    r"""Scatter 2-D data, the boundary :math:`f(x) = 0` and the model's certified sets.

    Parameters
    ----------
    estimator : fitted conicml classifier
        Any binary conicml estimator with ``decision_function``.
    X : array-like of shape (n, 2)
    y : array-like of shape (n,)
    ax : matplotlib Axes, optional
        Axes to draw on (a new headless figure by default).
    certificate : bool, default=True
        Draw what the model certifies (Notes); linear kernels only
        for the ellipsoids and margins.
    resolution : int, default=200
        Grid points per axis for the boundary.

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    The certificate of the model's family: the worst-case ellipsoids
    :math:`\{x : (x-\bar x)^\top\Sigma^{-1}(x-\bar x) \le \kappa^2\}` of MPM / BMPM / MEMPM
    (at :math:`\kappa_\alpha`, :math:`\kappa_\beta`, seed 004 Fig. 2.1) and of the
    specified-rates classifier (at :math:`\kappa_\pm`, seed 003 Fig. 2.1), the cluster
    spheres :math:`B(\mu_j, r_j)` of CBC (seed 003 Fig. 3.1), M4's class-wise margins
    :math:`w^\top x + b = \pm\rho\,\sigma_\pm(w)` (seed 004 Fig. 4.1), or the SVM's
    margins :math:`f(x) = \pm 1`.
    """
    X, y = _two_d(X, y)
    _check_fitted(estimator)
    if not hasattr(estimator, "decision_function"):
        raise ValueError(f"{type(estimator).__name__} has no decision_function")
    ax = _axes(ax)
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.15 * (hi - lo + 1e-12)
    gx = np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution)
    gy = np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution)
    GX, GY = np.meshgrid(gx, gy)
    F = estimator.decision_function(np.column_stack([GX.ravel(), GY.ravel()]))
    F = np.asarray(F, dtype=float).reshape(GX.shape)
    ax.contourf(GX, GY, F > 0, levels=[-0.5, 0.5, 1.5], colors=["#dde8f5", "#fbe3d0"])
    ax.contour(GX, GY, F, levels=[0.0], colors="k", linewidths=1.5)
    classes = getattr(estimator, "classes_", np.unique(y))
    for label, color in zip(classes, ("C0", "C1")):
        mask = y == label
        ax.scatter(X[mask, 0], X[mask, 1], s=12, color=color, edgecolor="k", lw=0.3,
                   label=str(label))
    drawn = _certificate(ax, estimator, X) if certificate else "none"
    ax.set_title(f"{type(estimator).__name__}" + ("" if drawn == "none" else f" ({drawn})"))
    ax.set_xlim(gx[0], gx[-1])
    ax.set_ylim(gy[0], gy[-1])
    ax.legend(loc="best", fontsize="small")
    return ax


def bmpm_roc(X: Any, y: Any, betas: Sequence[float] | None = None, **bmpm_options: Any
             ) -> dict[str, np.ndarray]:
    """Deprecated alias of :func:`conicml.estimators.bmpm_roc` (plot only draws)."""
    import warnings

    from .estimators.minimax import bmpm_roc as _bmpm_roc

    warnings.warn("conicml.plot.bmpm_roc moved to conicml.estimators.bmpm_roc; the alias "
                  "will be removed in the next release", FutureWarning, stacklevel=2)
    return _bmpm_roc(X, y, betas, **bmpm_options)


def plot_roc(estimator: Any, X: Any, y: Any, *, ax: Any = None,
             bmpm_sweep: dict[str, np.ndarray] | None = None) -> Any:
    r"""Empirical ROC curve of ``decision_function``, with the model's worst-case bound.

    MPM-family estimators add their certified point :math:`(1-\beta, \alpha)`
    (TPR at least :math:`\alpha` at FPR at most :math:`1-\beta`); ``bmpm_sweep``
    (from :func:`conicml.estimators.bmpm_roc`) adds BMPM's certified curve over :math:`\beta_0` and
    the empirical points of the same hyperplanes (seed 004 Sec. 5.4).
    """
    from sklearn.metrics import roc_auc_score, roc_curve

    _check_fitted(estimator)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes = getattr(estimator, "classes_", None)
    if classes is None or len(classes) != 2:
        raise ValueError("plot_roc needs a fitted binary classifier")
    scores = estimator.decision_function(X)
    positive = y == classes[1]
    fpr, tpr, _ = roc_curve(positive, scores)
    ax = _axes(ax)
    ax.plot(fpr, tpr, color="k", lw=1.5,
            label=f"{type(estimator).__name__} (AUC {roc_auc_score(positive, scores):.3f})")
    if hasattr(estimator, "alpha_") and hasattr(estimator, "beta_"):
        ax.plot([1.0 - estimator.beta_], [estimator.alpha_], "o", color="C3",
                label=fr"certified: TPR $\geq$ {estimator.alpha_:.3f} at FPR $\leq$ "
                      f"{1.0 - estimator.beta_:.3f}")
    if bmpm_sweep is not None:
        ax.plot(bmpm_sweep["fpr_bound"], bmpm_sweep["alpha"], "s--", color="C2", ms=4,
                label=r"BMPM worst case over $\beta_0$")
        ax.plot(bmpm_sweep["fpr"], bmpm_sweep["tpr"], "^", color="C2", ms=4,
                label=r"BMPM empirical over $\beta_0$")
    ax.plot([0, 1], [0, 1], color="0.7", lw=0.8)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.legend(loc="lower right", fontsize="small")
    return ax


def plot_convergence(records: Any, *, ax: Any = None, x: str = "iteration") -> Any:
    """Stopping measure (and objective, when tracked) of an iterative solver.

    Parameters
    ----------
    records : Recorder or sequence of IntermediateResult
        What a :class:`~conicml.solvers.Recorder` collected as the ``callback``.
    x : {"iteration", "time"}, default="iteration"
    """
    results = list(getattr(records, "results", records))
    if not results:
        raise ValueError("no iterations recorded: pass a Recorder as the solver's callback")
    if x not in ("iteration", "time"):
        raise ValueError(f"x must be 'iteration' or 'time', got {x!r}")
    ax = _axes(ax)
    xs = [r.iteration if x == "iteration" else r.elapsed for r in results]
    res = np.array([r.residual for r in results], dtype=float)
    obj = np.array([r.objective for r in results], dtype=float)
    if np.any(np.isfinite(res) & (res > 0)):
        ax.semilogy(xs, np.where(res > 0, res, np.nan), color="C0", label="stopping measure")
    if np.any(np.isfinite(obj)):
        finite = obj[np.isfinite(obj)]
        gap = np.abs(obj - finite[-1])
        ax.semilogy(xs, np.where(gap > 0, gap, np.nan), color="C1",
                    label="|objective - final objective|")
    ax.set_xlabel("iteration" if x == "iteration" else "seconds")
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_comparison(comparison: Comparison, *, ax: Any = None) -> Any:
    """A :class:`~conicml.Comparison` as total time against objective agreement per solver."""
    if not isinstance(comparison, Comparison):
        raise ValueError(f"expected a conicml Comparison, got {type(comparison).__name__}")
    ax = _axes(ax)
    floor = 1e-16
    for i, row in enumerate(comparison.rows):
        diff = row.obj_rel_diff if math.isfinite(row.obj_rel_diff) else 1.0
        marker = "o" if row.agree else "x"
        ax.loglog([max(row.total_time, 1e-6)], [max(diff, floor)], marker, color=f"C{i % 10}",
                  ms=8, label=f"{row.solver} ({row.status})")
    ax.axhline(floor, color="0.8", lw=0.8)
    ax.set_xlabel("total time (s)")
    ax.set_ylabel("objective relative difference to the reference")
    ax.set_title(f"{comparison.kind}: reference {comparison.reference}")
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_thesis_agreement(pairs: Sequence[Any], *, ax: Any = None, title: str = "") -> Any:
    """Our numbers against the thesis's, one point per table cell, with the diagonal.

    Parameters
    ----------
    pairs : sequence of :class:`conicml.reproductions.Pair`
        ``(label, ours, thesis)`` cells of a reproduction
        (:func:`conicml.reproductions.thesis_pairs`).
    title : str
        Axes title (the reproduction's name).

    Both axes are logarithmic when every value is positive and they span more than two
    decades (timings beside accuracies), linear otherwise.
    """
    pts = [(float(p.thesis), float(p.ours)) for p in pairs]
    if not pts:
        raise ValueError("no (ours, thesis) pairs to plot: the tables hold no thesis numbers")
    ax = _axes(ax)
    xy = np.array(pts)
    ax.plot(xy[:, 0], xy[:, 1], "o", ms=4, alpha=0.7, color="C0",
            label=f"{len(pts)} cells")
    lo, hi = float(xy.min()), float(xy.max())
    if lo > 0 and hi / lo > 100:
        ax.set_xscale("log")
        ax.set_yscale("log")
    pad = 0.05 * (hi - lo) if hi > lo else 1.0
    line = [lo - pad, hi + pad] if not (lo > 0 and hi / lo > 100) else [lo / 1.5, hi * 1.5]
    ax.plot(line, line, "-", color="0.5", lw=0.8, label="ours = thesis")
    ax.set_xlabel("thesis")
    ax.set_ylabel("ours")
    ax.set_title(title or "ours against the thesis")
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, ax: Any = None,
               title: str = "", max_columns: int = 6) -> Any:
    """The numeric columns of a markdown table against its rows (first column as ticks).

    For reproductions whose thesis printed no numbers (figures, timings): the first
    number of each cell, one line per numeric column (at most ``max_columns``).
    """
    from ._utils.numbers import number

    if len(header) < 2 or not rows:
        raise ValueError("a table needs a header, at least two columns and one row")
    ax = _axes(ax)
    drawn = 0
    for c in range(1, len(header)):
        values = [number(row[c]) for row in rows]
        if all(v is None for v in values):  # one row (a --quick run) still gives points
            continue
        ax.plot(range(len(rows)), [np.nan if v is None else v for v in values], "o-",
                ms=3, label=header[c])
        drawn += 1
        if drawn == max_columns:
            break
    if not drawn:
        raise ValueError("the table has no numeric column to plot")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([row[0][:18] for row in rows], rotation=45, ha="right",
                       fontsize="x-small")
    ax.set_xlabel(header[0])
    ax.set_title(title)
    ax.legend(loc="best", fontsize="x-small")
    return ax
