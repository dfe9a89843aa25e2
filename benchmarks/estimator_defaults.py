"""Every estimator with its defaults on the bundled real data sets (issue 12).

5-fold stratified cross-validation (shuffled, seed 0) of each conicml classifier
constructed with no arguments, on breast_cancer, heart, ionosphere, pima, sonar,
mammography and abalone19 (``conicml.datasets.load``; raw features, no scaling, as a
new user would try them). Reported per cell: accuracy / ROC AUC of the out-of-fold
decision values (``latent_score`` for the ordinal model), and the accuracy of the
trivial majority-class predictor per data set for comparison. A cell that raised
reads ``error``; each data set's cross-validations run in a fresh process with a
time limit of ``--limit`` seconds per estimator, and read ``timeout`` beyond it.
No thesis reports these numbers (they are defaults, not tuned models); the baseline
column is the trivial classifier.

Sizes: data sets above ``--max-rows`` rows (default 1 000; mammography, abalone19)
are subsampled, stratified but keeping up to a quarter of the rows from the minority
class (all 32 positives of abalone19, 250 of mammography's 260), which makes those
two sets less imbalanced than in full; the table header records what was run.
``--quick``: at most 200 rows per set, 2 folds, written to
``results/estimator_defaults_quick.md``.

    python benchmarks/estimator_defaults.py [--quick] [--max-rows N] [--limit SECONDS]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

DATASETS = ["breast_cancer", "heart", "ionosphere", "pima", "sonar", "mammography",
            "abalone19"]


def cv_scores(names: list[str], dataset: str, max_rows: int, folds: int) -> dict:
    """Out-of-fold accuracy and AUC of each ``name()`` on ``dataset`` (runs in a child)."""
    from sklearn.base import clone
    from sklearn.metrics import accuracy_score, roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    import conicml as cm
    from conicml import estimators

    X, y = cm.datasets.subsample(*cm.datasets.load(dataset), max_rows)
    out = {}
    for name in names:
        est = getattr(estimators, name)()
        score = np.empty(y.size)
        pred = np.empty(y.size)
        n_warn = 0
        start = time.perf_counter()
        try:
            for train, test in StratifiedKFold(folds, shuffle=True,
                                               random_state=0).split(X, y):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    fitted = clone(est).fit(X[train], y[train])
                n_warn += len(caught)
                pred[test] = fitted.predict(X[test])
                score[test] = (fitted.latent_score(X[test]) if hasattr(fitted, "latent_score")
                               else fitted.decision_function(X[test]))
        except Exception as exc:  # noqa: BLE001  (reported in the table)
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        out[name] = {"acc": accuracy_score(y, pred), "auc": roc_auc_score(y, score),
                     "finite": bool(np.all(np.isfinite(score))), "warnings": n_warn,
                     "seconds": time.perf_counter() - start}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--max-rows", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=300.0)
    args = parser.parse_args()
    max_rows, folds = (200, 2) if args.quick else (args.max_rows, 5)

    import conicml as cm
    from conicml import estimators

    names = [n for n in estimators.__all__ if n != "LSVRRegressor"]
    rows = []
    sizes = {}
    seconds: dict[str, float] = {}
    for ds in DATASETS:
        X, y = cm.datasets.subsample(*cm.datasets.load(ds), max_rows)
        _, counts = np.unique(y, return_counts=True)
        sizes[ds] = (int(y.size), int(counts.min()), float(counts.max() / y.size))
        cells = []
        state, res, wall = run_with_limit(cv_scores, (names, ds, max_rows, folds),
                                          args.limit * len(names))
        for name in names:
            if state == "timeout":
                cell = f"timeout (data set > {args.limit * len(names):.0f} s)"
            elif state == "error":
                cell = f"error: {str(res)[:60]}"
            elif "error" in res[name]:
                cell = f"error: {res[name]['error'][:60]}"
            else:
                r = res[name]
                cell = f"{r['acc']:.3f} / {r['auc']:.3f}"
                if r["warnings"]:
                    cell += f" ({r['warnings']}w)"
                if not r["finite"]:
                    cell += " non-finite"
                seconds[name] = seconds.get(name, 0.0) + r["seconds"]
            print(f"{ds:13s} {name:28s} {cell}", flush=True)
            cells.append(cell)
        print(f"  ({ds}: {wall:.1f} s wall)", flush=True)
        rows.append((ds, cells))

    short = {n: n.replace("Classifier", "").replace("Regressor", "") for n in names}
    lines = [
        "# Estimator defaults on real data (issue 12)",
        "",
        f"{folds}-fold stratified CV (shuffled, seed 0) of every classifier's default "
        "constructor on raw features; cells are **accuracy / ROC AUC** of the out-of-fold "
        "predictions and decision values (`(kw)`: k warnings over the folds). The "
        "baseline is the trivial majority-class predictor (AUC 0.5). Generated by "
        f"`benchmarks/estimator_defaults.py{' --quick' if args.quick else ''}`; "
        f"{machine()}.",
        "",
        "Rows used (n, minority count, majority share): "
        + "; ".join(f"{ds} {n}/{m}/{share:.2f}" for ds, (n, m, share) in sizes.items())
        + f". Sets above {max_rows} rows were subsampled, stratified, keeping up to a "
        "quarter of the rows from the minority class (less imbalanced than the full set).",
        "",
        "| data set | majority acc | " + " | ".join(short[n] for n in names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for ds, cells in rows:
        lines.append(f"| {ds} | {sizes[ds][2]:.3f} | " + " | ".join(cells) + " |")
    lines.append("| CV seconds (all sets) | | "
                 + " | ".join(f"{seconds.get(n, float('nan')):.1f}" for n in names) + " |")
    lines.append("")
    out = write_results("estimator_defaults", "\n".join(lines), quick=args.quick)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
