"""Feature-scaling SVM: time per fit of AO-II vs FULL-FS vs GMKL (and AO-I, Simple AO) on WDBC.

Data: WDBC (``breast_cancer``, 569 x 30), standardised, all samples. C = 1, mu = 1,
z^0 = 1, every method at its defaults (SVM block by ``smo`` at tol 1e-6). Each fit
runs in a child process with a time limit (TIMEOUT recorded). Reported: wall time of
the fit (inside the child), outer / inner iterations, selected features, final Omega
and the minimum/saddle label.
A plain ``sklearn.svm.SVC`` (RBF, gamma = 1, the kernel at z = 1) fit is timed as the
reference ratio. BLAS single-threaded (OPENBLAS_NUM_THREADS=1).

Usage: ``python benchmarks/feature_scaling_speed.py [--quick] [--limit SECONDS]``
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.formulations.feature_scaling import feature_scaled_svm  # noqa: E402


def _data(n: int | None):
    X, y = cm.datasets.load("breast_cancer")
    if n is not None:
        idx = np.random.default_rng(0).permutation(y.size)[:n]
        X, y = X[idx], y[idx]
    return (X - X.mean(0)) / X.std(0), y


def fit(method: str, n: int | None):
    X, y = _data(n)
    start = time.perf_counter()
    if method == "svc":
        SVC(C=1.0, gamma=1.0).fit(X, y)
        return {"time": time.perf_counter() - start}
    program = feature_scaled_svm(X, y, 1.0, 1.0)
    sol = cm.solve(program, f"fs-{method}")
    r = program.decode(sol)
    return {"time": time.perf_counter() - start, "iterations": sol.iterations,
            "inner": sol.extras["inner_iterations"], "features": int(r["support"].sum()),
            "objective": r["objective"], "label": r["label"],
            "converged": sol.extras["converged"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 samples, AO-II and GMKL")
    parser.add_argument("--limit", type=float, default=600.0)
    args = parser.parse_args()
    n = 200 if args.quick else None
    methods = ["svc", "ao2", "gmkl"] if args.quick else ["svc", "ao2", "full", "gmkl", "ao1",
                                                          "simple-ao"]
    lines = ["# Feature-scaling SVM: time per fit on WDBC", "", f"Machine: {machine()}", "",
             f"n = {n or 569}, d = 30, C = 1, mu = 1.", "",
             "| method | time (s) | ratio to SVC | outer it. | inner it. | #features | Omega "
             "| label | converged |", "|---|---|---|---|---|---|---|---|---|"]
    ref = None
    for method in methods:
        state, res, wall = run_with_limit(fit, (method, n), args.limit)
        if state != "ok":
            lines.append(f"| {method} | {state.upper()} ({wall:.0f} s) | | | | | | | |")
            continue
        if method == "svc":
            ref = res["time"]
            lines.append(f"| sklearn SVC (z = 1) | {ref:.3f} | 1 | | | 30 | | | |")
        else:
            lines.append(f"| {method} | {res['time']:.2f} | {res['time'] / ref:.0f}x "
                         f"| {res['iterations']} | {res['inner']} | {res['features']} "
                         f"| {res['objective']:.3f} | {res['label']} | {res['converged']} |")
        print(lines[-1], flush=True)
    lines += ["", "inner it.: trust-region iterations of the FS blocks (AO methods), TR "
              "iterations (FULL-FS), SVM solves (GMKL, line search included)."]
    out = write_results("feature_scaling_speed", "\n".join(lines) + "\n", args.quick)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
