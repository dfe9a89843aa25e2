"""Reproduce Table 4.3 of Huang (2004): M4 vs SVM vs MPM, linear and RBF kernels.

The protocol is in the Notes of :func:`main`. Run::

    conicml reproduce huang_table_4_3 [--quick] [--time-limit S] [--data NAME ...]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import time
import warnings
from collections import Counter

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import conicml as cm
from conicml.estimators import M4Classifier, MPMClassifier, SVMClassifier

from ._harness import progress, write_results  # noqa: E402
from ._huang import load_huang  # noqa: E402

#: how the tables set the thesis's numbers beside ours (conicml.reproductions._tables)
THESIS_LAYOUT = "parenthesised"
TABLES = ('004:T4.3',)
# an estimate of the default run (the record's header states the measured wall time)
EXPECTED_SECONDS = 1500
PROTOCOL = ("full: 10-fold outer CV as the thesis; C (SVM, M4) and the RBF width (SVM, M4, "
            "MPM, each its own) tuned by inner 3-fold CV on grids of ours (the thesis states "
            "neither its inner CV nor its grids); heart is Statlog 270 x 13; twonorm 400 "
            "points (the thesis gives no size); no time limit")
RATE_CELLS = '.'  # every compared cell is an accuracy, AUC or error rate

DATASETS = ["twonorm", "wisconsin", "ionosphere", "pima", "sonar", "vote", "heart"]
LABELS = {"twonorm": "Twonorm", "wisconsin": "Breast", "ionosphere": "Ionosphere",
          "pima": "Pima", "sonar": "Sonar", "vote": "Vote", "heart": "Heart-disease",
          "twonorm_small": "Twonorm, small", "cleveland": "Heart, Cleveland"}
CELLS = [("M4", "linear"), ("SVM", "linear"), ("MPM", "linear"),
         ("M4", "rbf"), ("SVM", "rbf"), ("MPM", "rbf")]

#: Table 4.3 of the thesis (% accuracy, mean, sd), copied from the seed-004 note §4.3.
THESIS: dict[str, list[tuple[float, float]]] = {
    # Lin M4, Lin SVM, Lin MPM, RBF M4, RBF SVM, RBF MPM
    "twonorm": [(96.5, 0.6), (95.1, 0.7), (97.6, 0.5), (96.5, 0.7), (96.1, 0.4), (97.6, 0.5)],
    "wisconsin": [(97.5, 0.7), (96.6, 0.5), (96.9, 0.8), (97.5, 0.6), (96.7, 0.4), (96.9, 0.8)],
    "ionosphere": [(87.7, 0.8), (86.9, 0.6), (84.8, 0.8), (94.5, 0.4), (94.2, 0.3), (92.3, 0.6)],
    "pima": [(77.7, 0.9), (77.9, 0.7), (76.1, 1.2), (77.6, 0.8), (78.0, 0.5), (76.2, 1.2)],
    "sonar": [(77.6, 1.2), (76.2, 1.1), (75.5, 1.1), (84.9, 1.2), (86.5, 1.1), (87.3, 0.8)],
    "vote": [(96.1, 0.5), (95.1, 0.4), (94.8, 0.4), (96.2, 0.5), (95.9, 0.6), (94.6, 0.4)],
    "heart": [(86.6, 0.8), (84.1, 0.7), (83.2, 0.8), (86.2, 0.8), (83.8, 0.5), (83.1, 1.0)],
}

RANK_RTOL = 1e-2  # empirical kernel map: eigenvalues above 1e-2 x the largest
KERNEL_REG = 1e-3  # rho*K regulariser of the kernel covariances (M4 reg, MPM rho)
M4_TOL = 1e-2  # line-search tolerance, relative to kappa_MPM
TWONORM_N = 400  # the thesis gives no size for twonorm in Ch. 4
TWONORM_SMALL = 100  # the ablation's smaller twonorm
SONAR_RIDGES = (0.1, 1.0)  # the ablation's linear covariance ridges (standardised features)
#: the ablation's M4 grid one decade below the table's (whose lowest value, C x N = 0.3, the
#: inner CV picks in most folds of the M4 cells outside 2 points) and the cells it reruns
M4_LOW_GRID = (0.03, 0.3, 3.0, 30.0)
M4_LOW_CELLS = (("heart", ("M4", "linear")), ("heart", ("M4", "rbf")),
                ("sonar", ("M4", "linear")))
#: the ablation's MPM covariance ridges (linear: x the feature variance; RBF: rho of rho*K,
#: the table's is KERNEL_REG) and the MPM cells outside 2 points it reruns
MPM_RIDGES = {"linear": (0.1, 1.0), "rbf": (1e-2, 1e-1)}
MPM_RIDGE_CELLS = (("vote", "linear"), ("ionosphere", "rbf"), ("sonar", "rbf"))
_PHI2 = 0.9772498680518208  # Phi(2): Bayes accuracy of twonorm (means 4 apart, unit variance)

class EmpiricalKernelMap(TransformerMixin, BaseEstimator):
    """RBF empirical kernel map on the leading eigenspace of the training Gram matrix."""

    def __init__(self, gamma: float = 1.0, rtol: float = RANK_RTOL) -> None:
        self.gamma = gamma
        self.rtol = rtol

    def fit(self, X, y=None):  # noqa: D102
        K = rbf_kernel(X, X, gamma=self.gamma)
        lam, U = np.linalg.eigh(0.5 * (K + K.T))
        keep = lam > self.rtol * lam[-1]
        self.X_fit_ = np.asarray(X, dtype=float)
        self.proj_ = U[:, keep] / np.sqrt(lam[keep])
        return self

    def transform(self, X):  # noqa: D102
        return rbf_kernel(X, self.X_fit_, gamma=self.gamma) @ self.proj_


def load(name: str, quick: bool) -> tuple[np.ndarray, np.ndarray]:
    if name == "twonorm":
        return cm.datasets.twonorm(200 if quick else TWONORM_N, dim=20, random_state=0)
    if name == "twonorm_small":
        return cm.datasets.twonorm(TWONORM_SMALL, dim=20, random_state=0)
    return load_huang(name)


def fit_cell(model: str, kernel: str, X: np.ndarray, y: np.ndarray, cfg: dict,
             ridge: float | None = None) -> tuple[object, dict]:
    """Fit one model on a training fold; returns (fitted estimator, chosen params).

    Every RBF model picks its own width by its inner CV (thesis Sec. 4.5.2: "the width of
    the Gaussian kernel for all three models tuned by cross validation"). ``ridge``
    replaces the covariance regulariser of M4 and MPM (an ablation; ``None``: the default).
    """
    d = X.shape[1]
    inner = StratifiedKFold(cfg["inner"], shuffle=True, random_state=1)
    n = int(len(y) * (cfg["inner"] - 1) / cfg["inner"])
    widths = [g / d for g in cfg["gammas"]]
    if model == "SVM":
        pipe = make_pipeline(StandardScaler(), SVMClassifier(kernel=kernel, solver="smo"))
        grid = {"svmclassifier__C": cfg["svm_C"]}
        if kernel == "rbf":
            grid["svmclassifier__gamma"] = widths
        search = GridSearchCV(pipe, grid, cv=inner).fit(X, y)
        params = {k.split("__")[1]: v for k, v in search.best_params_.items()}
        return search.best_estimator_, params
    steps = [StandardScaler()]
    grid = {}
    if kernel == "rbf":
        steps.append(EmpiricalKernelMap())
        grid["empiricalkernelmap__gamma"] = widths
    if ridge is None and kernel == "rbf":
        ridge = KERNEL_REG
    if model == "MPM":
        pipe = make_pipeline(*steps, MPMClassifier(ridge=ridge))
        if not grid:
            return pipe.fit(X, y), {}
        search = GridSearchCV(pipe, grid, cv=inner).fit(X, y)
        return search.best_estimator_, {"gamma": search.best_params_[
            "empiricalkernelmap__gamma"]}
    # M4: C = c / N (the units of C are fixed by w^T(x_mean - y_mean) = 1)
    pipe = make_pipeline(*steps, M4Classifier(C=1.0, ridge=ridge,
                                              solver_options={"tol": M4_TOL}))
    grid["m4classifier__C"] = [c / n for c in cfg["m4_c"]]
    search = GridSearchCV(pipe, grid, cv=inner).fit(X, y)
    params = {"C*N": round(search.best_params_["m4classifier__C"] * n, 3)}
    if kernel == "rbf":
        params["gamma"] = search.best_params_["empiricalkernelmap__gamma"]
    return search.best_estimator_, params


def run(datasets: list[str], cfg: dict, cells: list[tuple[str, str]] = CELLS,
        ridge: float | None = None, thesis_of: str | None = None) -> list[dict]:
    """Outer CV of every cell on every data set (``thesis_of``: the thesis row to compare
    with, when ``datasets`` holds a variant of one of the thesis's data sets)."""
    rows = []
    for name in progress(datasets, "data sets"):
        X, y = load(name, cfg["quick"])
        outer = StratifiedKFold(cfg["outer"], shuffle=True, random_state=0)
        acc = {cell: [] for cell in cells}
        spent = {cell: 0.0 for cell in cells}
        chosen = {cell: [] for cell in cells}
        uncertified = {cell: Counter() for cell in cells}
        for train, test in progress(outer.split(X, y), name, total=outer.get_n_splits()):
            for cell in cells:
                if spent[cell] > cfg["time_limit"]:
                    continue
                start = time.perf_counter()
                # every fit of the inner grid that a solver could not certify warns: keep
                # the warnings and report them per cell (the long table's last column)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    est, params = fit_cell(*cell, X[train], y[train], cfg, ridge)
                    score = est.score(X[test], y[test])
                spent[cell] += time.perf_counter() - start
                uncertified[cell] += _uncertified(caught)
                acc[cell].append(100.0 * score)
                chosen[cell].append(params)
        label = thesis_of or name
        for cell in cells:
            a = np.array(acc[cell])
            thesis = THESIS[label][CELLS.index(cell)]
            row = {
                "data": name, "model": cell[0], "kernel": cell[1], "folds": len(a),
                "mean": a.mean() if len(a) else math.nan,
                "std": a.std() if len(a) else math.nan,
                "thesis": thesis, "time": spent[cell],
                "timeout": len(a) < cfg["outer"], "params": chosen[cell], "n": len(y),
                "uncertified": uncertified[cell],
            }
            rows.append(row)
            print(f"{LABELS.get(name, name):<14} {cell[0]:<4} {cell[1]:<6} folds={len(a):>2} "
                  f"ours={row['mean']:6.2f} +- {row['std']:5.2f}  thesis={thesis[0]:5.1f} "
                  f"+- {thesis[1]:.1f}  time={spent[cell]:7.1f}s", flush=True)
    return rows


def _uncertified(caught: list[warnings.WarningMessage]) -> Counter:
    """Solver warnings (a fit not certified: iteration limit, inaccurate gap) by solver
    message, numbers stripped so that equal causes count together."""
    kinds = (cm.exceptions.ConicMLWarning, ConvergenceWarning, FitFailedWarning)
    return Counter(re.sub(r"[-+]?\d[\d.e+-]*", "#", str(w.message)).split(";")[0][:70]
                   .replace("|", "/")
                   for w in caught if issubclass(w.category, kinds))


def _warned(counts: Counter) -> str:
    if not counts:
        return "0"
    top, k = counts.most_common(1)[0]
    return f"{sum(counts.values())} (e.g. {k}x '{top}')"


def _common(params: list[dict]) -> str:
    if not params or not params[0]:
        return "-"
    keys = params[0].keys()
    out = []
    for k in keys:
        vals = [p[k] for p in params]
        uniq, counts = np.unique([f"{v:.3g}" for v in vals], return_counts=True)
        out.append(f"{k}={uniq[np.argmax(counts)]} ({counts.max()}/{len(vals)})")
    return ", ".join(out)


def tables(rows: list[dict], cfg: dict) -> str:
    by = {(r["data"], r["model"], r["kernel"]): r for r in rows}
    names = list(dict.fromkeys(r["data"] for r in rows))
    head = "| Data | " + " | ".join(f"{'Lin' if k == 'linear' else 'RBF'} {m}"
                                    for m, k in CELLS) + " |"
    wide = [head, "|---" * (len(CELLS) + 1) + "|"]
    for name in names:
        cells = []
        for m, k in CELLS:
            r = by[(name, m, k)]
            ours = "-" if r["folds"] == 0 else f"{r['mean']:.1f} ± {r['std']:.1f}"
            if r["timeout"]:
                ours += f" (TIMEOUT, {r['folds']} folds)"
            cells.append(f"{ours} ({r['thesis'][0]:.1f})")
        wide.append(f"| {LABELS.get(name, name)} | " + " | ".join(cells) + " |")
    long = ["| Data | model | kernel | folds | ours | thesis | diff | time (s) | "
            "chosen hyper-parameters (mode) | uncertified fits |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        diff = r["mean"] - r["thesis"][0]
        flag = " !" if abs(diff) > 2 else ""
        status = " TIMEOUT" if r["timeout"] else ""
        long.append(
            f"| {LABELS.get(r['data'], r['data'])} | {r['model']} | {r['kernel']} | "
            f"{r['folds']}{status} | "
            f"{r['mean']:.1f} ± {r['std']:.1f} | {r['thesis'][0]:.1f} ± {r['thesis'][1]:.1f} "
            f"| {diff:+.1f}{flag} | {r['time']:.1f} | {_common(r['params'])} | "
            f"{_warned(r['uncertified'])} |"
        )
    return ("Each cell: our accuracy (mean ± std over the outer folds) and, in parentheses, "
            "the thesis's Table 4.3 value.\n\n" + "\n".join(wide) + "\n\n"
            "Long form (`!`: more than 2 points from the thesis; uncertified fits: the "
            "solver warnings of the cell's inner grids and refits over the outer folds, "
            "i.e. fits that stopped at an iteration limit or an uncertified gap):\n\n"
            + "\n".join(long))


def _mean(rows: list[dict], data: str, model: str, kernel: str) -> float:
    return next(r["mean"] for r in rows
                if (r["data"], r["model"], r["kernel"]) == (data, model, kernel))


def _wins(means: dict[str, list[float]]) -> dict[str, list[str]]:
    """Per kernel, the data sets where M4 is at least as accurate as SVM and MPM."""
    out = {}
    for k, kernel in enumerate(("linear", "rbf")):
        m4, svm, mpm = (3 * k, 3 * k + 1, 3 * k + 2)
        out[kernel] = [LABELS[d] for d, v in means.items()
                       if v[m4] >= max(v[svm], v[mpm])]
    return out


def ablations(cfg: dict) -> list[tuple[str, str, list[dict]]]:
    """Variants that test the explanations of the cells outside 2 points: a smaller
    twonorm, Cleveland heart instead of Statlog, larger linear covariance ridges on sonar,
    M4's C grid a decade lower, larger MPM ridges. Returns (key, title, rows) triples."""
    out = [("twonorm", f"twonorm n = {TWONORM_SMALL}, all cells", run(
        ["twonorm_small"], cfg, thesis_of="twonorm")),
        ("heart", "heart: Cleveland 297 x 13 instead of Statlog 270 x 13, all cells",
         run(["cleveland"], cfg, thesis_of="heart"))]
    for ridge in SONAR_RIDGES:
        out.append((f"sonar {ridge:g}", f"sonar, linear M4 and MPM with covariance ridge "
                    f"{ridge:g} (standardised features: ridge x the feature variance)",
                    run(["sonar"], cfg, cells=[CELLS[0], CELLS[2]], ridge=ridge)))
    low = {**cfg, "m4_c": list(M4_LOW_GRID)}
    for name in dict.fromkeys(d for d, _ in M4_LOW_CELLS):
        cells = [c for d, c in M4_LOW_CELLS if d == name]
        out.append((f"m4 low {name}", f"{name}, M4 with C x N_train over {list(M4_LOW_GRID)}",
                    run([name], low, cells=cells)))
    for name, kernel in MPM_RIDGE_CELLS:
        for ridge in MPM_RIDGES[kernel]:
            out.append((f"mpm ridge {name} {kernel}", f"{name}, {kernel} MPM with covariance "
                        f"ridge {ridge:g}", run([name], cfg, cells=[("MPM", kernel)],
                                                ridge=ridge)))
    return out


def ablation_tables(results: list[tuple[str, str, list[dict]]]) -> str:
    lines = ["### Ablations", "",
             "Same outer and inner CV as the main table; `diff` is ours minus the thesis's "
             "cell of the data set named.", ""]
    for _, title, rows in results:
        lines += [f"**{title}**", "", "| model | kernel | ours | ± | thesis | diff | "
                  "chosen hyper-parameters, mode |", "|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['model']} | {r['kernel']} | {r['mean']:.1f} | {r['std']:.1f} "
                         f"| {r['thesis'][0]:.1f} | {r['mean'] - r['thesis'][0]:+.1f} | "
                         f"{_common(r['params'])} |")
        lines.append("")
    return "\n".join(lines)


def notes(rows: list[dict], results: list[tuple[str, str, list[dict]]], cfg: dict) -> str:
    """What the run shows, generated from its numbers."""
    outside = [r for r in rows if abs(r["mean"] - r["thesis"][0]) > 2.0]
    lines = [
        "**Notes on this run.** Our ± is the spread over the outer folds; the standard error "
        "of a 10-fold mean is about a third of it, so differences below 2-3 points are not "
        "significant. The thesis's ± (0.3-1.2) is far below any fold-to-fold spread: it is "
        "probably over repetitions of the whole CV.", "",
        f"{len(rows) - len(outside)} of {len(rows)} cells are within 2 points of the thesis. "
        f"Time-limited cells: {sum(r['timeout'] for r in rows)}.", ""]
    if outside:
        lines.append("Cells more than 2 points from the thesis:")
        lines.append("")
        for r in outside:
            lines.append(f"* {LABELS[r['data']]}, {r['kernel']} {r['model']}: "
                         f"{r['mean']:.1f} vs {r['thesis'][0]:.1f} "
                         f"({r['mean'] - r['thesis'][0]:+.1f}; fold spread {r['std']:.1f}; "
                         f"{_common(r['params'])}).")
        lines.append("")
    abl = {key: rs for key, _, rs in results}
    if "twonorm" in abl and any(r["data"] == "twonorm" for r in rows):
        small = abl["twonorm"]
        n_main = next(r["n"] for r in rows if r["data"] == "twonorm")
        lines.append(
            f"* Twonorm: the Bayes accuracy of Breiman's twonorm (means ±2/√20 per coordinate, "
            f"identity covariance) is Φ(2) = {100 * _PHI2:.1f} %. With {n_main} points "
            "our linear and RBF models give " + ", ".join(
                f"{r['kernel']} {r['model']} {r['mean']:.1f}" for r in rows
                if r["data"] == "twonorm") + f"; with {TWONORM_SMALL} points " + ", ".join(
                f"{r['kernel']} {r['model']} {r['mean']:.1f}" for r in small) + " (10-fold CV)" +
            ". The thesis gives no size; its numbers below Bayes fit a smaller training set.")
    if "heart" in abl and any(r["data"] == "heart" for r in rows):
        clev = abl["heart"]
        lines.append(
            "* Heart: Statlog (main table) against Cleveland (ablation): " + ", ".join(
                f"{r['kernel']} {r['model']} {_mean(rows, 'heart', r['model'], r['kernel']):.1f}"
                f" / {r['mean']:.1f} (thesis {r['thesis'][0]:.1f})" for r in clev) + ".")
    sonar = [rs for key, _, rs in results if key.startswith("sonar")]
    if sonar and any(r["data"] == "sonar" for r in rows):
        parts = [f"ridge default: M4 {_mean(rows, 'sonar', 'M4', 'linear'):.1f}, MPM "
                 f"{_mean(rows, 'sonar', 'MPM', 'linear'):.1f}"]
        for rs, ridge in zip(sonar, SONAR_RIDGES):
            parts.append(f"ridge {ridge:g}: M4 {rs[0]['mean']:.1f}, MPM {rs[1]['mean']:.1f}")
        lines.append("* Sonar, linear covariance models (208 points in 60 dimensions: each "
                     "class covariance from about 85 training points): " + "; ".join(parts) +
                     f" (thesis M4 {THESIS['sonar'][0][0]:.1f}, MPM {THESIS['sonar'][2][0]:.1f};"
                     " the thesis does not state its regulariser).")
    lines += _grid_and_ridge_notes(rows, results)
    names = list(dict.fromkeys(r["data"] for r in rows))
    ours = {d: [_mean(rows, d, m, k) for m, k in CELLS] for d in names}
    theirs = {d: [v[0] for v in THESIS[d]] for d in names}
    w_ours, w_thesis = _wins(ours), _wins(theirs)
    lines += ["", "M4 at least as accurate as both SVM and MPM — thesis: "
              f"{len(w_thesis['linear'])} (linear) and {len(w_thesis['rbf'])} (Gaussian) of "
              f"{len(names)}; ours: {len(w_ours['linear'])} (linear: "
              f"{', '.join(w_ours['linear']) or 'none'}) and {len(w_ours['rbf'])} (Gaussian: "
              f"{', '.join(w_ours['rbf']) or 'none'})."]
    return "\n".join(lines)


def _grid_and_ridge_notes(rows: list[dict],
                          results: list[tuple[str, str, list[dict]]]) -> list[str]:
    """One line each for the M4 lower-grid and the MPM ridge ablations."""
    lines = []
    low = [r for key, _, rs in results if key.startswith("m4 low") for r in rs]
    if low:
        lines.append(
            "* M4's C grid a decade lower (the table's lowest C x N = 0.3 is the inner CV's "
            "choice in most folds of these cells): " + ", ".join(
                f"{r['data']} {r['kernel']} M4 {_mean(rows, r['data'], 'M4', r['kernel']):.1f}"
                f" -> {r['mean']:.1f} (thesis {r['thesis'][0]:.1f}; chosen "
                f"{_common(r['params'])})" for r in low) + ".")
    ridged = [(key, r) for key, _, rs in results if key.startswith("mpm ridge") for r in rs]
    if ridged:
        parts = []
        for name, kernel in MPM_RIDGE_CELLS:
            these = [r for key, r in ridged if key == f"mpm ridge {name} {kernel}"]
            if these:
                parts.append(f"{name} {kernel} MPM {_mean(rows, name, 'MPM', kernel):.1f} -> "
                             + " / ".join(f"{r['mean']:.1f}" for r in these)
                             + f" at ridge {' / '.join(f'{v:g}' for v in MPM_RIDGES[kernel])}"
                             f" (thesis {these[0]['thesis'][0]:.1f})")
        lines.append("* MPM with a larger covariance ridge (the thesis states none; the "
                     f"table's: the estimator's default (linear), rho = {KERNEL_REG:g} (RBF)): "
                     + "; ".join(parts) + ".")
    return lines


def main() -> None:
    r"""Run the reproduction and write its tables.

    Notes
    -----
    Protocol (thesis Sec. 4.5.2: "C for M4 and SVM and the width of the Gaussian kernel for
    all three models tuned by cross validation; final results by 10-fold cross validation"):

    * outer: stratified 10-fold CV (shuffled, seed 0); accuracy in % as mean +- std over the
      folds;
    * every model sees standardised features (scaler fitted on the training fold);
    * inner: stratified 3-fold CV on the training fold (GridSearchCV; the thesis states
      neither its inner CV nor its grids) for SVM (C, and the width for RBF), M4 (C, and the
      width for RBF) and MPM (the width for RBF): each model chooses its own width;
    * SVM: ``cm.estimators.SVMClassifier`` (dual QP, ``smo`` solver); MPM:
      ``cm.estimators.MPMClassifier``; M4: ``cm.estimators.M4Classifier`` (soft margin,
      C = c / N_train, line search at tol 1e-2 relative to kappa_MPM);
    * RBF models for M4 and MPM run on the empirical kernel map (``EmpiricalKernelMap``
      above: :math:`\phi(z) = \Lambda_r^{-1/2}U_r^\top k(X, z)`, eigenvalues above
      ``RANK_RTOL`` x the largest), which is exactly Theorem 17 / Theorem 9 restricted to the
      leading kernel eigenspace, with the covariance regulariser 1e-3 (the rho*K of
      Corollary 16, mandatory for kernels); the SVM uses the exact Gram matrix (SMO);
    * data: heart is Statlog (270 x 13, bundled; the class balance the thesis's tables imply
      fits it better than Cleveland's, which the ablation runs); twonorm: the thesis gives no
      size: ``TWONORM_N`` points, 20 dimensions, seed 0, Breiman's distribution;
    * ``--time-limit`` (off by default): folds not started before a cell's time exceeds it
      are skipped and the cell is marked TIMEOUT with the number of folds done;
    * ablations (same CV): twonorm with ``TWONORM_SMALL`` points, Cleveland heart, larger
      linear covariance ridges on sonar, M4's C grid a decade lower (``M4_LOW_GRID``) on the
      M4 cells outside 2 points, larger MPM ridges (``MPM_RIDGES``) on the MPM cells
      outside 2 points.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 outer / 2 inner folds, 2-point grids, twonorm n=200")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per (data, model, kernel) cell (default: none)")
    parser.add_argument("--data", nargs="*", default=DATASETS, choices=DATASETS)
    parser.add_argument("--no-ablations", action="store_true",
                        help="only the thesis's table")
    args = parser.parse_args()
    if args.quick:
        cfg = {"outer": 3, "inner": 2, "svm_C": [0.1, 1.0], "gammas": [0.25, 1.0],
               "m4_c": [0.3, 30.0]}
    else:
        cfg = {"outer": 10, "inner": 3, "svm_C": [0.001, 0.01, 0.1, 1.0, 10.0, 100.0],
               "gammas": [1 / 16, 0.25, 1.0], "m4_c": [0.3, 3.0, 30.0]}
    cfg["time_limit"] = args.time_limit if args.time_limit is not None else math.inf
    cfg["quick"] = args.quick
    start = time.perf_counter()
    rows = run(args.data, cfg)
    results = [] if args.no_ablations else ablations(cfg)
    total = time.perf_counter() - start
    timed = math.isfinite(cfg["time_limit"])
    limit = f" --time-limit {cfg['time_limit']:g}" if timed else ""
    per_cell = f"{cfg['time_limit']:g} s per cell" if timed else "none"
    text = (
        "# Reproduction of Huang (2004), Table 4.3: M4 vs SVM vs MPM\n\n"
        f"Generated by `conicml reproduce huang_table_4_3"
        f"{' --quick' if args.quick else ''}{limit}` in {total:.0f} s on "
        f"{os.cpu_count()} shared logical CPUs, Python {platform.python_version()}. "
        f"{cfg['outer']}-fold outer CV, {cfg['inner']}-fold inner CV; grids: SVM C "
        f"{cfg['svm_C']}, width gamma {[round(g, 4) for g in cfg['gammas']]} / d for every "
        f"RBF model, M4 C x N_train {cfg['m4_c']}; time limit "
        f"{per_cell}. "
        "Protocol: see the script's docstring.\n\n" + tables(rows, cfg) + "\n\n"
        + notes(rows, results, cfg) + "\n\n" + (ablation_tables(results) if results else "")
    )
    write_results("huang_table_4_3", text, args.quick)
    print()
    print(text)

if __name__ == "__main__":
    main()
