"""A C path of the linear SVM by ``dcd``: warm started against cold solves, in one run.

Ten values of C in [1e-3, 10] of the soft-margin linear SVM (exact bias) on twonorm
(n x 20, standardized), solved by :func:`conicml.solve_path` with ``dcd`` at tol 1e-4,
the warm path (the previous multipliers moved to the new box and the previous bias,
``conicml.solvers._warm.dcd_alpha``) against the same path solved cold, alternating,
each in a fresh child process with a time limit (a timeout is recorded as such). Every
value's objective is compared with the cold one (dcd's certificate: relative gap 1e-4).

Usage: ``python benchmarks/dcd_path.py [--n N] [--repeats R] [--limit S] [--quick]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

CS = np.logspace(-3, 1, 10)
TOL = 1e-4


def _path(n: int, form: str, warm: bool) -> dict:
    """One path (a module-level function: run in a spawned child)."""
    import conicml as cm
    from conicml.formulations import svm

    X, y = cm.datasets.twonorm(n, dim=20, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    base = svm.soft_margin(X, y, CS[0], form=form)
    start, cpu = time.perf_counter(), time.process_time()
    sols = cm.solve_path(lambda C: svm.with_cost(base, C), CS, "dcd", warm_start=warm,
                         tol=TOL)
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
            "objectives": [s.objective for s in sols],
            "statuses": sorted({s.status.value for s in sols}),
            "epochs": sum(s.iterations for s in sols)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per path")
    parser.add_argument("--quick", action="store_true", help="n = 5000, one run each")
    args = parser.parse_args()
    n, repeats = (5000, 1) if args.quick else (args.n, args.repeats)
    lines = ["# C path of the linear SVM by dcd: warm against cold", "",
             f"{machine()}. twonorm {n} x 20 (standardized), {len(CS)} values of C in "
             f"[{CS[0]:g}, {CS[-1]:g}], dcd tol {TOL:g}; each path in a fresh process "
             f"(limit {args.limit:g} s), warm and cold alternating, the best of {repeats} "
             "(wall and CPU apart); load = the 1-minute load average before the run.", "",
             "| form | run | wall [s] | CPU [s] | epochs | statuses | "
             "max rel. objective diff vs cold | load |", "|---|---|---|---|---|---|---|---|"]
    ratios = []
    for form in ("dual", "primal"):
        best: dict[str, dict] = {}
        loads: dict[str, list[float]] = {"cold": [], "warm": []}
        for _ in range(repeats):
            for mode in ("cold", "warm"):
                loads[mode].append(os.getloadavg()[0])
                state, res, wall = run_with_limit(_path, (n, form, mode == "warm"),
                                                  args.limit)
                if state != "ok":
                    best.setdefault(mode, {"state": state, "wall": wall})
                    continue
                kept = best.get(mode)
                if kept is None or "objectives" not in kept:
                    best[mode] = res
                else:
                    kept["wall"], kept["cpu"] = min(kept["wall"], res["wall"]), \
                        min(kept["cpu"], res["cpu"])
        for mode in ("cold", "warm"):
            r = best[mode]
            load = f"{min(loads[mode]):.1f}-{max(loads[mode]):.1f}"
            if "objectives" not in r:
                lines.append(f"| {form} | {mode} | {r['state'].upper()} ({r['wall']:.0f} s) "
                             f"| | | | | {load} |")
                continue
            diff = ""
            if mode == "warm" and "objectives" in best["cold"]:
                cold = np.array(best["cold"]["objectives"])
                rel = np.abs(np.array(r["objectives"]) - cold) / np.maximum(1, np.abs(cold))
                diff = f"{np.max(rel):.1e}"
            lines.append(f"| {form} | {mode} | {r['wall']:.2f} | {r['cpu']:.2f} | "
                         f"{r['epochs']} | {', '.join(r['statuses'])} | {diff} | {load} |")
        if all("cpu" in best[m] for m in ("cold", "warm")):
            ratios.append(f"{form}: {best['cold']['wall'] / best['warm']['wall']:.2f} (wall), "
                          f"{best['cold']['cpu'] / best['warm']['cpu']:.2f} (CPU)")
    lines += ["", "Ratios cold / warm: " + "; ".join(ratios) + "."]
    write_results("dcd_path", "\n".join(lines) + "\n", quick=args.quick)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
