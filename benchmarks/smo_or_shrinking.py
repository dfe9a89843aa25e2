"""What shrinking buys ``smo-or``, on both SVOR variants (California Housing, Gaussian kernel).

For each training size and each variant (explicit thresholds, seed 003 eq. 4.1;
implicit constraints, Chu & Keerthi 2005, 2007) the same program is solved by
``smo-or`` with ``shrinking=True`` and ``shrinking=False`` one after the other
in the same run (the ratio survives the shared machine's load better than the
seconds), each in a child process under a time limit (TIMEOUT recorded as
such). Recorded: time, pair updates, kernel columns computed, the smallest
active set, the objective (the two must agree) and the off/on time ratio.
Data: :func:`conicml.datasets.load_ordinal` ("california_housing", 10
equal-frequency ranks), a seeded random training subset, features
standardised; C = 10, zeta = 0.2 (the settings of
``conicml reproduce saketha_table_5_1``), tol 1e-3.

Run ``python benchmarks/smo_or_shrinking.py [--quick] [--sizes ...]``; writes
``benchmarks/results/smo_or_shrinking.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml
from _harness import machine, run_with_limit, write_results  # noqa: E402

C, GAMMA = 10.0, 0.2


def run(n: int, variant: str, shrinking: bool, limit: float) -> dict:
    import conicml as cm
    from conicml.formulations.svor_dual import svor_dual
    from conicml.formulations.svor_implicit import svorim_dual

    X, y = cm.datasets.load_ordinal("california_housing", n_ranks=10)
    idx = np.random.default_rng(0).permutation(y.size)[:n]
    X = (X[idx] - X[idx].mean(axis=0)) / X[idx].std(axis=0)
    build = svor_dual if variant == "explicit" else svorim_dual
    prog = build(X, y[idx], C=C, kernel="rbf", gamma=GAMMA)
    start = time.perf_counter()
    sol = cm.solve(prog, "smo-or", tol=1e-3, shrinking=shrinking, time_limit=limit)
    return {"time": time.perf_counter() - start, "status": sol.status.value,
            "iterations": sol.iterations, "kernel_columns": sol.extras["kernel_columns"],
            "min_active": sol.extras["min_active"],
            "variables": int(prog.data["svor"].layout()[0].size),
            "objective": sol.objective, "gap": sol.residuals.gap}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small size (smoke run)")
    parser.add_argument("--sizes", type=int, nargs="*", default=None)
    parser.add_argument("--time-limit", type=float, default=600.0)
    args = parser.parse_args()
    sizes = tuple(args.sizes) if args.sizes else ((400,) if args.quick else (1000, 2000, 4000))
    limit = 60.0 if args.quick else args.time_limit
    rows, details = [], []
    for n in sizes:
        for variant in ("explicit", "implicit"):
            cells = {}
            for shrinking in (True, False):
                load = os.getloadavg()[0]
                state, res, wall = run_with_limit(run, (n, variant, shrinking, limit),
                                                  limit + 120.0)
                cells[shrinking] = (state, res)
                details.append((n, variant, shrinking, state, res, load))
                print(n, variant, shrinking, state, res, f"load {load:.1f}", flush=True)

            def fmt(state: str, res, limit=limit) -> str:
                if state == "timeout":
                    return f"TIMEOUT (> {limit:g} s)"
                if state != "ok":
                    return f"error: {res}"
                tag = "" if res["status"] == "optimal" else f" [{res['status']}]"
                return (f"{res['time']:.1f} s, {res['iterations']} it, "
                        f"{res['kernel_columns']} cols{tag}")

            on, off = cells[True], cells[False]
            ratio = agree = "-"
            if on[0] == off[0] == "ok":
                ratio = f"{off[1]['time'] / on[1]['time']:.2f}"
                diff = abs(on[1]["objective"] - off[1]["objective"])
                agree = f"{diff / abs(off[1]['objective']):.1e}"
            rows.append([f"{n:,}", variant,
                         str(on[1]["variables"]) if on[0] == "ok" else "-",
                         fmt(*on), str(on[1]["min_active"]) if on[0] == "ok" else "-",
                         fmt(*off), ratio, agree])
    lines = [
        "# smo-or: what shrinking buys (California Housing, Gaussian kernel)",
        "",
        f"Machine: {machine()}. Command: `python benchmarks/smo_or_shrinking.py"
        f"{' --quick' if args.quick else ''}"
        f"{' --sizes ' + ' '.join(map(str, args.sizes)) if args.sizes else ''}` "
        f"(time limit {limit:g} s per run). C = {C:g}, zeta = {GAMMA:g}, tol 1e-3, "
        "10 ranks; 1-min load average at the start of each run in the details.",
        "",
        "| m | variant | dual variables | shrinking on | smallest active set | "
        "shrinking off | time off / on | objective rel. diff |",
        "|---|---|---|---|---|---|---|---|",
        *["| " + " | ".join(r) + " |" for r in rows],
        "",
        "Details:",
        "",
        *[f"- m = {n:,}, {v}, shrinking={s}: {st}, load {ld:.1f}, " + (
            ", ".join(f"{k}={x:.4g}" if isinstance(x, float) else f"{k}={x}"
                      for k, x in r.items()) if isinstance(r, dict) else f"{r}")
          for n, v, s, st, r, ld in details],
        "",
    ]
    out = write_results("smo_or_shrinking", "\n".join(lines), quick=args.quick)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
