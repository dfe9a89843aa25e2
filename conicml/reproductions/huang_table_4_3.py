"""Reproduce Table 4.3 of Huang (2004): M4 vs SVM vs MPM, linear and RBF kernels.

The protocol is in the Notes of :func:`main`. Run::

    conicml reproduce huang_table_4_3 [--quick] [--time-limit S] [--data NAME ...]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import conicml as cm
from conicml.estimators import M4Classifier, MPMClassifier, SVMClassifier

from ._harness import progress, write_results  # noqa: E402

#: how the tables set the thesis's numbers beside ours (conicml.reproductions._tables)
THESIS_LAYOUT = "parenthesised"
TABLES = ('004:T4.3',)
# an estimate of the default run (no time limit per cell; the record's header states
# the measured wall time of its run)
EXPECTED_SECONDS = 3600
PROTOCOL = ("reduced: inner 3-fold CV with small grids (the thesis's inner CV is not stated), the "
            'RBF width tuned by the SVM and reused by M4 and MPM (thesis: per model), twonorm 400 '
            'points (no size in the thesis); for time')
RATE_CELLS = '.'  # every compared cell is an accuracy, AUC or error rate

DATASETS = ["twonorm", "wisconsin", "ionosphere", "pima", "sonar", "vote", "heart"]
LABELS = {"twonorm": "Twonorm", "wisconsin": "Breast", "ionosphere": "Ionosphere",
          "pima": "Pima", "sonar": "Sonar", "vote": "Vote", "heart": "Heart-disease"}
CELLS = [("M4", "linear"), ("SVM", "linear"), ("MPM", "linear"),
         ("M4", "rbf"), ("SVM", "rbf"), ("MPM", "rbf")]
# the SVM's RBF cell runs first in each fold: its inner CV picks the width the others use
FIT_ORDER = [CELLS[1], CELLS[0], CELLS[2], CELLS[4], CELLS[3], CELLS[5]]

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

NOTES = """\
**Notes on the recorded run** (`--time-limit 90`, 14.4 min on a machine shared with
other jobs). Our +- is the spread over the 10 outer folds (3-10 points); the standard
error of a 10-fold mean is that divided by about 3, so differences below 2-3 points are
not significant. Rows more than 2 points from the thesis:

* *Twonorm, SVM linear (+3.7) and RBF (+2.2)*: above the thesis, not below. The thesis
  does not give its sample size (we use 400 points); the Bayes accuracy of Breiman's
  twonorm is Phi(2) = 97.7 %, which our SVM, MPM and M4 all reach within one fold
  spread. The thesis's 95.1 % for the linear SVM is 2.6 points below Bayes, which
  suggests a smaller training set or a different C grid there.
* *Sonar, M4 linear (-6.4), MPM linear (-2.8) and RBF (-4.0)*; RBF M4 is -1.6 on the
  6 folds done before the time limit: 208 points in 60 dimensions, so each class covariance
  is estimated from about 85 training points: nearly singular, and both
  covariance-shaped models (M4, MPM) lose against the SVM here (our SVM matches the
  thesis, -0.7/+0.6). We regularise linear covariances with only 1e-6 x the mean feature
  variance (the thesis does not report its regulariser); the fold spread is 6-10 points.
  Not reproduced.
* *Vote, MPM linear (+2.2)*: all three linear models give 97.0 % (identical
  predictions); the thesis's three linear numbers differ by 1.3 points. Within 2
  standard errors; no explanation beyond noise.
* *Vote, M4 RBF (-3.0)*: the inner CV chose C x N = 30 in 6 of 10 folds, the end of
  the grid where the soft-margin optimum sits at rho = 0 (the minimum-total-violation
  hyperplane in a ~100-dimensional kernel map), which generalises worse than the
  linear M4 (97.0 %).
* *Heart-disease, M4 linear (-2.8) and RBF (-2.4)*: our SVM and MPM match the thesis
  (+0.1 to +0.4), but our M4 does not show the thesis's advantage of about 3 points
  over them: the inner CV chose C x N = 0.3 in every fold, i.e. rho = kappa_MPM, an
  MPM-like hyperplane, and M4 scores as MPM does. Two causes we cannot separate: the
  data set (ours is Cleveland, 297 rows; the class balance the note infers from the
  thesis, theta = 0.44-0.45, fits Statlog's 270 rows better) and the soft-margin model
  itself (the thesis states neither the normalisation that makes (4.16) bounded nor its
  C grid; with w^T(x_mean - y_mean) = 1 the optimum is often at an end of
  [0, kappa_MPM], see conicml.formulations.m4).

Overall: the SVM and MPM columns reproduce within 2 points except the rows above; the
thesis's headline, "M4 wins 5 (linear) and 4 (Gaussian)" of 7, is **not** reproduced: in
our run M4 is within noise of SVM and MPM on 5 data sets and below the SVM on Sonar and
(RBF) Vote. The RBF M4 cells hit the time limit on Ionosphere (8 of 10 folds) and Sonar
(6 of 10): each fit solves 10-20 dense SOCPs over a kernel map of up to ~150 dimensions.
An earlier run on a more loaded machine (20.5 min, Brent's line search instead of
quadratic interpolation) gave the same numbers in every cell that completed all 10
folds in both runs."""


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
        return cm.datasets.twonorm(200 if quick else 400, dim=20, random_state=0)
    return cm.datasets.load(name)


def fit_cell(model: str, kernel: str, X: np.ndarray, y: np.ndarray, cfg: dict,
             gamma: float | None) -> tuple[object, dict]:
    """Fit one model on a training fold; returns (fitted estimator, chosen params)."""
    d = X.shape[1]
    inner = StratifiedKFold(cfg["inner"], shuffle=True, random_state=1)
    n = int(len(y) * (cfg["inner"] - 1) / cfg["inner"])
    if model == "SVM":
        pipe = make_pipeline(StandardScaler(), SVMClassifier(kernel=kernel, solver="smo"))
        grid = {"svmclassifier__C": cfg["svm_C"]}
        if kernel == "rbf":
            grid["svmclassifier__gamma"] = [g / d for g in cfg["gammas"]]
        search = GridSearchCV(pipe, grid, cv=inner).fit(X, y)
        params = {k.split("__")[1]: v for k, v in search.best_params_.items()}
        return search.best_estimator_, params
    steps = [StandardScaler()]
    if kernel == "rbf":
        steps.append(EmpiricalKernelMap(gamma=gamma))
    if model == "MPM":
        est = MPMClassifier(ridge=KERNEL_REG) if kernel == "rbf" else MPMClassifier()
        pipe = make_pipeline(*steps, est).fit(X, y)
        return pipe, ({"gamma": gamma} if kernel == "rbf" else {})
    # M4: C = c / N (the units of C are fixed by w^T(x_mean - y_mean) = 1)
    reg = KERNEL_REG if kernel == "rbf" else None
    pipe = make_pipeline(*steps, M4Classifier(C=1.0, ridge=reg,
                                              solver_options={"tol": M4_TOL}))
    grid = {"m4classifier__C": [c / n for c in cfg["m4_c"]]}
    search = GridSearchCV(pipe, grid, cv=inner).fit(X, y)
    params = {"C*N": round(search.best_params_["m4classifier__C"] * n, 3)}
    if kernel == "rbf":
        params["gamma"] = gamma
    return search.best_estimator_, params


def run(datasets: list[str], cfg: dict) -> list[dict]:
    rows = []
    for name in progress(datasets, "data sets"):
        X, y = load(name, cfg["quick"])
        outer = StratifiedKFold(cfg["outer"], shuffle=True, random_state=0)
        acc = {cell: [] for cell in CELLS}
        spent = {cell: 0.0 for cell in CELLS}
        chosen = {cell: [] for cell in CELLS}
        for train, test in progress(outer.split(X, y), name, total=outer.get_n_splits()):
            gamma = None
            for cell in FIT_ORDER:
                model, kernel = cell
                if spent[cell] > cfg["time_limit"]:
                    continue
                if kernel == "rbf" and model != "SVM" and gamma is None:
                    continue  # the SVM's RBF cell timed out: no tuned width
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est, params = fit_cell(model, kernel, X[train], y[train], cfg, gamma)
                    score = est.score(X[test], y[test])
                spent[cell] += time.perf_counter() - start
                acc[cell].append(100.0 * score)
                chosen[cell].append(params)
                if cell == ("SVM", "rbf"):
                    gamma = params["gamma"]
        for i, cell in enumerate(CELLS):
            a = np.array(acc[cell])
            thesis = THESIS[name][i]
            row = {
                "data": name, "model": cell[0], "kernel": cell[1], "folds": len(a),
                "mean": a.mean() if len(a) else math.nan,
                "std": a.std() if len(a) else math.nan,
                "thesis": thesis, "time": spent[cell],
                "timeout": len(a) < cfg["outer"], "params": chosen[cell],
            }
            rows.append(row)
            print(f"{LABELS[name]:<14} {cell[0]:<4} {cell[1]:<6} folds={len(a):>2} "
                  f"ours={row['mean']:6.2f} +- {row['std']:5.2f}  thesis={thesis[0]:5.1f} "
                  f"+- {thesis[1]:.1f}  time={spent[cell]:7.1f}s", flush=True)
    return rows


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
        wide.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    long = ["| Data | model | kernel | folds | ours | thesis | diff | time (s) | "
            "chosen hyper-parameters (mode) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        diff = r["mean"] - r["thesis"][0]
        flag = " !" if abs(diff) > 2 else ""
        status = " TIMEOUT" if r["timeout"] else ""
        long.append(
            f"| {LABELS[r['data']]} | {r['model']} | {r['kernel']} | {r['folds']}{status} | "
            f"{r['mean']:.1f} ± {r['std']:.1f} | {r['thesis'][0]:.1f} ± {r['thesis'][1]:.1f} "
            f"| {diff:+.1f}{flag} | {r['time']:.1f} | {_common(r['params'])} |"
        )
    return ("Each cell: our accuracy (mean ± std over the outer folds) and, in parentheses, "
            "the thesis's Table 4.3 value.\n\n" + "\n".join(wide) + "\n\n"
            "Long form (`!`: more than 2 points from the thesis):\n\n" + "\n".join(long))


def main() -> None:
    r"""Run the reproduction and write its tables.

    Notes
    -----
    Protocol (thesis Sec. 4.5.2: "C for M4 and SVM and the width of the Gaussian kernel for
    all three models tuned by cross validation; final results by 10-fold cross validation"):

    * outer: stratified 10-fold CV (shuffled, seed 0); accuracy in % as mean +- std over the
      folds (the thesis does not say what its +- is; its values, 0.3-1.2, are far below a
      fold-to-fold spread, so they are probably over repetitions of the whole CV);
    * every model sees standardised features (scaler fitted on the training fold);
    * inner: stratified 3-fold CV on the training fold (GridSearchCV) for
      SVM (C, and gamma for RBF) and M4 (C). The RBF width chosen by the SVM's inner CV is
      reused by M4 and MPM in the same fold (tuning it three times did not fit the time
      budget; the thesis tunes it per model);
    * SVM: ``cm.estimators.SVMClassifier`` (dual QP, ``smo`` solver); MPM:
      ``cm.estimators.MPMClassifier``; M4: ``cm.estimators.M4Classifier`` (soft margin,
      C = c / N_train, ``quadratic-interpolation`` at tol 1e-2 relative
      to kappa_MPM);
    * RBF models for M4 and MPM run on the empirical kernel map (``EmpiricalKernelMap``
      below: :math:`\phi(z) = \Lambda_r^{-1/2}U_r^\top k(X, z)`, eigenvalues above
      ``RANK_RTOL`` x the largest), which is exactly Theorem 17 / Theorem 9 restricted to the
      leading kernel eigenspace, with the covariance regulariser 1e-3 (the rho*K of
      Corollary 16, mandatory for kernels); the SVM uses the exact Gram matrix (SMO);
    * Twonorm: the thesis does not give its size; 400 points, 20 dimensions, seed 0
      (``cm.datasets.twonorm(400)``), Breiman's distribution;
    * each (data set, model, kernel) cell has a time limit: folds not started before it is
      exceeded are skipped and the cell is marked TIMEOUT with the number of folds done.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 outer / 2 inner folds, 2-point grids, twonorm n=200")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per (data, model, kernel) cell (default 60; quick 15)")
    parser.add_argument("--data", nargs="*", default=DATASETS, choices=DATASETS)
    args = parser.parse_args()
    if args.quick:
        cfg = {"outer": 3, "inner": 2, "svm_C": [0.1, 1.0], "gammas": [0.5, 2.0],
               "m4_c": [0.3, 30.0], "time_limit": args.time_limit or 15.0}
    else:
        cfg = {"outer": 10, "inner": 3, "svm_C": [0.01, 0.1, 1.0, 10.0],
               "gammas": [0.25, 1.0, 4.0], "m4_c": [0.3, 3.0, 30.0],
               "time_limit": args.time_limit or 60.0}
    cfg["quick"] = args.quick
    start = time.perf_counter()
    rows = run(args.data, cfg)
    total = time.perf_counter() - start
    text = (
        "# Reproduction of Huang (2004), Table 4.3: M4 vs SVM vs MPM\n\n"
        f"Generated by `conicml reproduce huang_table_4_3"
        f"{' --quick' if args.quick else ''} --time-limit {cfg['time_limit']:g}` in "
        f"{total:.0f} s on "
        f"{os.cpu_count()} shared logical CPUs, Python {platform.python_version()}. "
        f"{cfg['outer']}-fold outer CV, {cfg['inner']}-fold inner CV; grids: SVM C "
        f"{cfg['svm_C']}, gamma {cfg['gammas']} / d, M4 C x N_train {cfg['m4_c']}; time "
        f"limit {cfg['time_limit']:g} s per cell. Protocol and deviations: see the "
        "script's docstring.\n\n" + tables(rows, cfg) + "\n\n" + NOTES + "\n"
    )
    write_results("huang_table_4_3", text, args.quick)
    print()
    print(text)


if __name__ == "__main__":
    main()
