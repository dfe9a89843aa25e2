"""SVM dual with an RBF kernel: SMO vs the generic backends vs sklearn.svm.SVC.

Data: breast_cancer (569 x 30, standardized) and twonorm (Breiman, d=20) with
n in {500, 1000, 2000, 5000}; C = 1, gamma = "scale". Every solver runs at its
defaults (SMO and SVC at the LIBSVM tolerance 1e-3) in a child process with a
time limit; a run over the limit is recorded as TIMEOUT and larger sizes of
that solver are skipped. Times include everything the solver needs from the
data (kernel factor and cvxpy compilation for the backends; the kernel cache
for SMO and SVC). The objective gap is the relative difference of the dual
objective, recomputed from each solver's alpha, to the best one in the row
group. Ratios are wall time / SVC wall time measured in the same run.

Usage: ``python benchmarks/svm_solvers.py [--quick] [--limit SECONDS]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

import conicml as cm  # noqa: E402

SOLVERS = ["smo", "clarabel", "ecos", "scs", "osqp"]


def _data(name: str, n: int | None) -> tuple[np.ndarray, np.ndarray]:
    if name == "breast_cancer":
        X, y = cm.datasets.load("breast_cancer")
    else:
        X, y = cm.datasets.twonorm(n, dim=20, random_state=0)
    return (X - X.mean(0)) / X.std(0), y


def _dual_objective(X, y, kernel, alpha) -> float:
    v = alpha * y
    return float(alpha.sum() - 0.5 * v @ kernel.gram(X) @ v)


def _run_conicml(X, y, solver):
    start = time.perf_counter()
    prog = cm.formulations.svm.soft_margin(X, y, C=1.0, kernel="rbf", form="dual")
    sol = cm.solve(prog, solver)
    wall = time.perf_counter() - start
    alpha = np.asarray(sol.values.get("alpha", np.full(y.size, np.nan)))
    return {"status": sol.status.value, "wall": wall, "iters": sol.iterations,
            "alpha": alpha, "kernel": prog.data["kernel"]}


def _run_svc(X, y):
    start = time.perf_counter()
    svc = SVC(C=1.0, kernel="rbf", gamma="scale").fit(X, y)
    wall = time.perf_counter() - start
    alpha = np.zeros(y.size)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return {"status": "optimal", "wall": wall, "iters": int(svc.n_iter_[0]), "alpha": alpha,
            "kernel": cm.make_kernel("rbf", X)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n in {500, 1000} only")
    parser.add_argument("--limit", type=float, default=60.0,
                        help="seconds per run (60: the full run stays under ~12 minutes)")
    args = parser.parse_args()
    sizes = [500, 1000] if args.quick else [500, 1000, 2000, 5000]
    cases = [("breast_cancer", None)] + [("twonorm", n) for n in sizes]
    lines = [
        "# SVM dual (RBF, C=1): SMO vs generic backends vs sklearn SVC", "",
        f"Machine: {machine()}. Time limit per run: {args.limit:.0f} s. "
        "Ratio = wall time / SVC wall time in the same run; gap = relative dual-objective "
        "difference to the best solver of the case.", "",
        "| data | n | solver | status | wall s | ratio to SVC | iterations | objective gap |",
        "|---|---|---|---|---|---|---|---|",
    ]
    timed_out: set[str] = set()
    for name, n in cases:
        X, y = _data(name, n)
        results = {}
        state, res, _ = run_with_limit(_run_svc, (X, y), args.limit)
        results["sklearn-svc"] = (state, res)
        for solver in SOLVERS:
            if solver in timed_out:
                results[solver] = ("skipped", None)
                continue
            state, res, _ = run_with_limit(_run_conicml, (X, y, solver), args.limit)
            if state == "timeout":
                timed_out.add(solver)
            results[solver] = (state, res)
        objectives = {k: _dual_objective(X, y, r["kernel"], r["alpha"])
                      for k, (s, r) in results.items() if s == "ok" and r["status"] == "optimal"}
        best = max(objectives.values()) if objectives else np.nan
        svc_state, svc_res = results["sklearn-svc"]
        svc_wall = svc_res["wall"] if svc_state == "ok" else np.nan
        for key, (state, res) in results.items():
            if state == "ok":
                gap = np.nan
                if key in objectives:
                    gap = (best - objectives[key]) / max(1.0, abs(best))
                row = [res["status"], f"{res['wall']:.3f}", f"{res['wall'] / svc_wall:.1f}",
                       str(res["iters"]), f"{gap:.1e}"]
            elif state == "timeout":
                row = ["TIMEOUT", f">{args.limit:.0f}", f">{args.limit / svc_wall:.0f}", "-", "-"]
            elif state == "skipped":
                row = ["skipped (timed out at a smaller n)", "-", "-", "-", "-"]
            else:
                row = [f"error: {res}", "-", "-", "-", "-"]
            lines.append(f"| {name} | {X.shape[0]} | {key} | " + " | ".join(row) + " |")
            print(lines[-1], flush=True)
    out = write_results("svm_solvers", "\n".join(lines) + "\n", args.quick)
    print("\n".join(lines))
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
