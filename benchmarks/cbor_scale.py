"""Scale benchmark: ``cbor-smo`` against clarabel / ecos on the CBOR dual (4.5)/(5.1).

Data (seeded, as in seed 003 Fig. 5.1: "5 classes, each data point a
cluster"): ``k`` points :math:`x \\sim N(0, I_{10})`, latent
:math:`z = u^\\top x + 0.3\\,\\epsilon` for a fixed random unit :math:`u`, ranks
1..5 by the quintiles of :math:`z` (equal-frequency bins); every point is its
own cluster (:math:`\\sigma = 0`, ``ClusterMoments(X, 0, 1, ranks)``), so the
program is the SVOR dual at ``W = 3``. Kernels: rbf (:math:`\\zeta = 0.1`, the
thesis's Gaussian kernel) and linear.

Every run gets a fresh program (``form="dual"``, kind
``"socp.chance.cbor.dual"``) and is timed end to end — building the program
(the Gram factor of the rbf kernel for the generic backends), compiling and
solving — in a child process killed after ``--time-limit`` seconds (recorded
as TIMEOUT; larger sizes of a solver that timed out are not attempted). The
solvers run at their defaults (cbor-smo: ``tol=1e-6`` on the KKT violation;
clarabel, ecos: their default gaps). ``ratio`` is the backend's total time over
cbor-smo's total time at the same size, measured in the same run.

Run ``python benchmarks/cbor_scale.py [--quick]``; writes
``benchmarks/results/cbor_scale.md``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import write_results  # noqa: E402

SOLVERS = ("cbor-smo", "clarabel", "ecos")
SIZES = (25, 100, 250, 500, 1000, 2000, 5000)
QUICK_SIZES = (25, 100, 250, 500)


def clusters_for(k: int, seed: int = 0):
    import conicml as cm

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(k, 10))
    u = rng.normal(size=10)
    u /= np.linalg.norm(u)
    z = X @ u + 0.3 * rng.normal(size=k)
    ranks = 1 + np.searchsorted(np.quantile(z, [0.2, 0.4, 0.6, 0.8]), z)
    return cm.ClusterMoments(X, np.zeros(k), np.ones(k), ranks)


def _run(kernel: str, k: int, solver: str, queue) -> None:
    import conicml as cm

    clusters = clusters_for(k)
    start = time.perf_counter()
    program = cm.formulations.ordinal.cbor(clusters, W=3.0, accuracy=0.5, kernel=kernel,
                                          gamma=0.1, form="dual")
    sol = cm.solve(program, solver)
    total = time.perf_counter() - start
    queue.put({"status": sol.status.value, "objective": sol.objective, "total": total,
               "solve": sol.solve_time, "iterations": sol.iterations,
               "residual": sol.residuals.max()})


def run_one(kernel: str, k: int, solver: str, time_limit: float) -> dict:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_run, args=(kernel, k, solver, queue))
    proc.start()
    proc.join(time_limit)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return {"status": "TIMEOUT"}
    if queue.empty():
        return {"status": f"FAILED (exit code {proc.exitcode})"}
    return queue.get()


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 500 only")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per run (default 60, quick 20)")
    args = parser.parse_args(argv)
    import conicml  # noqa: F401  (imported once here; the forked runs inherit it)

    sizes = QUICK_SIZES if args.quick else SIZES
    limit = args.time_limit or (20.0 if args.quick else 60.0)
    rows = []
    started = time.perf_counter()
    for kernel in ("rbf", "linear"):
        timed_out: set[str] = set()
        for k in sizes:
            results = {}
            for solver in SOLVERS:
                if solver in timed_out:
                    results[solver] = {"status": "TIMEOUT (not run: timed out at a smaller k)"}
                    continue
                results[solver] = res = run_one(kernel, k, solver, limit)
                if res["status"] == "TIMEOUT":
                    timed_out.add(solver)
                print(f"{kernel:6s} k={k:5d} {solver:9s} {res['status']:10s} "
                      f"{res.get('total', float('nan')):8.2f}s", flush=True)
            smo, ref = results["cbor-smo"], results["clarabel"]
            for solver in SOLVERS:
                res = results[solver]
                ok = "total" in res
                rel = ratio = "-"
                if ok and "objective" in ref:
                    diff = abs(res["objective"] - ref["objective"])
                    rel = f"{diff / max(1.0, abs(ref['objective'])):.1e}"
                if ok and "total" in smo:
                    ratio = f"{res['total'] / smo['total']:.2f}"
                rows.append([
                    kernel, str(k), solver, res["status"],
                    f"{res['total']:.3f}" if ok else "-",
                    f"{res['solve']:.3f}" if ok else "-",
                    str(res["iterations"]) if ok else "-",
                    f"{res['objective']:.10g}" if ok else "-",
                    rel, f"{res['residual']:.1e}" if ok else "-", ratio,
                ])
    elapsed = time.perf_counter() - started
    header = ["kernel", "clusters k", "solver", "status", "total s", "solve s", "iterations",
              "objective", "rel. diff vs clarabel", "residual", "ratio total / cbor-smo"]
    lines = [
        "# cbor-smo scale benchmark (CBOR dual 4.5/5.1)",
        "",
        f"Generated by `python benchmarks/cbor_scale.py{' --quick' if args.quick else ''}` "
        f"in {elapsed:.0f} s; per-run limit {limit:.0f} s (TIMEOUT = killed).",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs (shared with other jobs), "
        f"Python {sys.version.split()[0]}, numpy {np.__version__}.",
        "",
        "Data: k points x ~ N(0, I_10), latent z = u.x + 0.3 noise, 5 ranks by the quintiles "
        "of z, every point its own cluster (sigma = 0), W = 3; rbf zeta = 0.1. `total` = "
        "build the program (rbf: Gram factor for the generic backends) + compile + solve, "
        "end to end; `solve` = the solver's own time. Solvers at their defaults "
        "(cbor-smo tol = 1e-6 on the KKT violation).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", "Summary (computed from the table above):", ""]
    for kernel in ("rbf", "linear"):
        mine = [r for r in rows if r[0] == kernel]
        for solver in SOLVERS:
            solved = [int(r[1]) for r in mine if r[2] == solver and r[3] == "optimal"]
            ratios = [(int(r[1]), r[10]) for r in mine
                      if r[2] == solver and r[10] != "-" and solver != "cbor-smo"]
            text_ratio = (f"; total-time ratio to cbor-smo at k = {ratios[-1][0]}: "
                          f"{ratios[-1][1]}" if ratios else "")
            lines.append(f"- {kernel}, {solver}: largest k solved within the limit "
                         f"{max(solved) if solved else '-'}{text_ratio}")
    text = "\n".join(lines) + "\n"
    write_results("cbor_scale", text, args.quick)
    print(text)
    return text


if __name__ == "__main__":
    main()
