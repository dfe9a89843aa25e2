"""Why ``HLSVMClassifier()``'s old default fit warned on real data (issue 9), by experiment.

On the bundled UCI sets of ``tests/estimators/test_estimator_defaults.py`` (the same stratified
300-row subsamples, split 50/50, seed 0), each configuration fits the training half and
reports the node-solver statuses (``user_limit``: Weighted-Pegasos stopped at T with a
certified relative duality gap above its tol 1e-3), the largest such gap, the number of
warnings and the held-out ROC AUC. The configurations separate the suspects: feature
scale (raw vs standardised), T, lambda (the node problem's Pegasos lambda is
lambda |S_H|, small on small nodes) and the node solver.

Usage: ``python benchmarks/hlsvm_defaults.py [--quick]``
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, write_results  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.estimators import HLSVMClassifier  # noqa: E402

DATASETS = ["breast_cancer", "heart", "ionosphere", "pima", "sonar", "mammography",
            "abalone19"]
PEG = {"node_solver": "weighted-pegasos"}
CONFIGS = {
    "old default: raw, weighted-pegasos, T = 2e4": {**PEG, "standardize": False},
    "raw, weighted-pegasos, T = 2e5": {**PEG, "standardize": False, "max_iter": 200_000},
    "standardised, weighted-pegasos, T = 2e4": PEG,
    "standardised, weighted-pegasos, T = 2e5": {**PEG, "max_iter": 200_000},
    "standardised, weighted-pegasos, lam = 1e-3": {**PEG, "lam": 1e-3},
    "raw, clarabel": {"node_solver": "clarabel", "standardize": False},
    "new default: standardised, auto": {},
}


def main(argv=None):
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two data sets, three configs")
    args = parser.parse_args(argv)
    datasets = DATASETS[:2] if args.quick else DATASETS
    configs = dict(list(CONFIGS.items())[::3]) if args.quick else CONFIGS
    lines = ["# H-LSVM default fit on real data: the cause of the warnings (issue 9)", "",
             f"Machine: {machine()}; load average (1 min) at the start "
             f"{os.getloadavg()[0]:.1f}", "", __doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0],
             "", "Cells: node statuses (`opt` optimal, `inacc` optimal_inaccurate = the "
             "eps_PEG stop, `limit` user_limit), largest uncertified gap, warnings, AUC, "
             "fit seconds.", "",
             "| configuration | " + " | ".join(datasets) + " |",
             "|---|" + "---|" * len(datasets)]
    for label, params in configs.items():
        cells = []
        for ds in datasets:
            X, y = cm.datasets.subsample(*cm.datasets.load(ds), 300, n_minority=60)
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, stratify=y,
                                                      random_state=0)
            t = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est = HLSVMClassifier(random_state=0, **params).fit(X_tr, y_tr)
            fit_s = time.perf_counter() - t
            auc = roc_auc_score(y_te, est.decision_function(X_te))
            st = est.node_statuses_
            gaps = [float(g) for w in caught
                    for g in re.findall(r"relative duality gap ([0-9.e+-]+)", str(w.message))]
            cells.append(f"{st.get('optimal', 0)} opt / {st.get('optimal_inaccurate', 0)} "
                         f"inacc / {st.get('user_limit', 0)} limit"
                         + (f" (gap e.g. {max(gaps):.1e})" if gaps else "")
                         + f"; {len(caught)} w; AUC {auc:.2f}; {fit_s:.1f} s")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Reading (of the recorded run; the fits are seeded): on the raw features "
              "the Pegasos nodes stop at T with certified gaps up to ~1 (breast_cancer, "
              "heart, pima); with T = 2e5 most stop at the eps_PEG step test instead "
              "(optimal_inaccurate, not warned) but the trees stay useless on breast_cancer "
              "and heart (AUC 0.50) and the small node problems are badly scaled (the "
              "formulation warns). Standardising fixes the scale (AUC 0.94 / 0.73 there) but "
              "nodes still stop at T with gaps 3e-3-9e-2, also with T = 2e5 or lam = 1e-3: "
              "a node's Pegasos lambda is lambda |S_H| (~1e-3 on these 150-row sets), and "
              "the 1/(lambda t) steps need far more than T steps to certify 1e-3. An exact "
              "solver certifies every node. The new default (standardised features, "
              "clarabel on nodes of <= 2 000 samples) certifies every node without a "
              "warning. abalone19 has AUC 0.50 in every configuration: pruning keeps the "
              "root.", ""]
    out = write_results("hlsvm_defaults", "\n".join(lines), quick=args.quick)
    print("\n".join(lines))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
