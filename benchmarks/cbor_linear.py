"""``cbor-smo``'s linear path against Clarabel and ECOS on linear CBOR duals (issue 14).

Target (issue 14): "cbc-smo/cbor-smo: on linear duals either within 2x of the best backend
or dispatching to a linear-specific path". cbor-smo now dispatches (``method="auto"``)
to its linear path (the primal direction :math:`z = \\sum_j v_j\\mu_j` kept explicitly,
compiled loop when numba is installed); this measures how far that goes.

Instances: those of ``benchmarks/cbor_scale.py`` and of the ``cbor`` group of
``benchmarks/suite.py`` (k points :math:`x \\sim N(0, I_{10})`, 5 ranks by the quintiles of a
noisy projection, every point its own cluster, W = 3, accuracy 0.5, ``form="dual"``, kind
``"socp.chance.cbor.dual"``; the suite's rows are k = 100 (quick) and k = 250).

Measurement: in one process, the solvers alternate (cbor-smo, clarabel, ecos, repeated
``--repeats`` times, best kept), each run on a freshly built program and timed from the
program to the solution as in ``suite.py`` (``total`` = ``cm.solve``: cvxpy compilation
included for the backends, conicml's certificate for all) with the solver's own time
beside it (``solve``: cbor-smo's loop; the backend's reported solve time). Before the
clock: one warm-up solve of every solver on a 30-cluster program (imports; numba loads
its on-disk compiled loop: its time is reported, not counted). The 1-minute load
average is recorded beside every row. Solvers at their defaults
(cbor-smo ``tol=1e-6`` on the KKT violation, certified; the backends' default gaps);
certificate = ``Solution.residuals.max()``, conicml's recomputed residuals for all.
The second table runs cbor-smo's other paths once (``method="kernel"``: the previous
default; ``engine="numpy"``: the linear path's NumPy loop) with a ``time_limit``.

Usage: ``python benchmarks/cbor_linear.py [--quick] [--repeats R]``; writes
``benchmarks/results/cbor_linear.md`` (``--quick``: ``cbor_linear_quick.md``).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, write_results  # noqa: E402
from cbor_scale import clusters_for  # noqa: E402

import conicml as cm  # noqa: E402

SIZES = (25, 100, 250, 500, 1000, 2000, 5000)
QUICK_SIZES = (100, 250)
SOLVERS = ("cbor-smo", "clarabel", "ecos")
OTHER_PATHS = (("cbor-smo kernel path", {"method": "kernel"}),
               ("cbor-smo linear, NumPy loop", {"engine": "numpy"}))


def program(k: int):
    return cm.formulations.ordinal.cbor(clusters_for(k), W=3.0, accuracy=0.5,
                                        kernel="linear", form="dual")


@functools.cache
def cbc_clusters(k: int):
    """The clusters of the suite's ``cbc`` group (twonorm, k/2 k-means clusters per class),
    clustered once per k (not timed)."""
    X, y = cm.datasets.twonorm(20 * k, dim=20, random_state=1)
    return cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=k // 2,
                                       random_state=0)


def cbc_program(k: int):
    """The CBC linear dual of the suite's ``cbc`` group (C = 1, accuracy 0.7), a fresh
    program on the cached clusters."""
    return cm.formulations.cbc.cbc(cbc_clusters(k), C=1.0, accuracy=0.7, form="dual")


def run(k: int, solver: str, options: dict, build=program) -> dict:
    prog = build(k)  # the data and the program object (cvxpy compiles lazily, in solve)
    start = time.perf_counter()
    sol = cm.solve(prog, solver, **options)
    total = time.perf_counter() - start
    return {"total": total, "solve": sol.solve_time, "status": sol.status.value,
            "objective": sol.objective, "certificate": sol.residuals.max(),
            "iterations": sol.iterations, "path": "/".join(
                str(sol.extras[key]) for key in ("method", "engine") if key in sol.extras)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"k in {QUICK_SIZES} only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=float, default=30.0,
                        help="time_limit of the second table's runs (seconds)")
    args = parser.parse_args()
    sizes = QUICK_SIZES if args.quick else SIZES
    t_start = time.perf_counter()
    load_start = os.getloadavg()
    warm = {}
    for solver in SOLVERS:
        start = time.perf_counter()
        run(30, solver, {})
        warm[solver] = time.perf_counter() - start

    rows, ratios = [], []
    for k in sizes:
        best: dict[str, dict] = {}
        for _ in range(args.repeats):
            for solver in SOLVERS:  # alternating, so that load changes hit all alike
                res = run(k, solver, {})
                if solver not in best or res["total"] < best[solver]["total"]:
                    best[solver] = res
        load = os.getloadavg()[0]
        ref = best["clarabel"]["objective"]
        backend_total = min(best["clarabel"]["total"], best["ecos"]["total"])
        backend_solve = min(best["clarabel"]["solve"], best["ecos"]["solve"])
        for solver in SOLVERS:
            res = best[solver]
            diff = abs(res["objective"] - ref) / max(1, abs(ref))
            rows.append(
                f"| {k} | {solver} | {res['path'] or '-'} | {res['status']} | "
                f"{res['total']:.4f} | {res['solve']:.4f} | {res['iterations']} | "
                f"{res['objective']:.10g} | {diff:.1e} | "
                f"{res['certificate']:.1e} | {res['total'] / backend_total:.2f} | "
                f"{res['solve'] / backend_solve:.2f} | {load:.1f} |")
        ratios.append((k, best["cbor-smo"]["total"] / backend_total,
                       best["cbor-smo"]["solve"] / backend_solve))
        print(rows[-3], rows[-2], rows[-1], sep="\n", flush=True)

    others = []
    for k in sizes:
        if k > 1000:
            continue
        for label, options in OTHER_PATHS:
            res = run(k, "cbor-smo", {**options, "time_limit": args.limit})
            status = ("TIMEOUT (time_limit)" if res["status"] == "user_limit"
                      else res["status"])
            others.append(f"| {k} | {label} | {res['path']} | {status} | {res['total']:.4f} | "
                          f"{res['iterations']} | {res['objective']:.10g} | "
                          f"{res['certificate']:.1e} | {os.getloadavg()[0]:.1f} |")
            print(others[-1], flush=True)

    cbc_rows, cbc_ratios = [], []
    for k in (100,) if args.quick else (100, 400):
        best = {}
        for _ in range(args.repeats):
            for solver in ("cbc-smo", "clarabel", "ecos"):
                res = run(k, solver, {}, build=cbc_program)
                if solver not in best or res["total"] < best[solver]["total"]:
                    best[solver] = res
        load = os.getloadavg()[0]
        backend_total = min(best["clarabel"]["total"], best["ecos"]["total"])
        cbc_ratios.append((k, best["cbc-smo"]["total"] / backend_total))
        for solver, res in best.items():
            cbc_rows.append(f"| {k} | {solver} | {res['status']} | {res['total']:.4f} | "
                            f"{res['iterations']} | {res['objective']:.10g} | "
                            f"{res['certificate']:.1e} | {res['total'] / backend_total:.2f} | "
                            f"{load:.1f} |")
            print(cbc_rows[-1], flush=True)

    elapsed = time.perf_counter() - t_start
    lines = [
        "# cbor-smo linear path against the backends (issue 14)",
        "",
        f"Generated by `python benchmarks/cbor_linear.py{' --quick' if args.quick else ''}` "
        f"in {elapsed:.0f} s; {machine()}; load average at the start "
        f"{load_start[0]:.1f} / {load_start[1]:.1f} / {load_start[2]:.1f} (1 / 5 / 15 min).",
        "",
        "Instances of `benchmarks/cbor_scale.py` (linear kernel, d = 10, 5 ranks, every point "
        "a cluster, W = 3), `form=\"dual\"`. In one process, solvers alternating, best of "
        f"{args.repeats}; `total` = from the program to the solution, `cm.solve` (cvxpy "
        "compilation included for the backends, conicml's certificate for all), `solve` = "
        "the solver's own time. Warm-up before the "
        "clock (not counted): " + ", ".join(f"{s} {t:.2f} s" for s, t in warm.items())
        + " (cbor-smo's includes loading numba and its compiled loop). Ratios are against "
        "the best backend of the row (the smaller of clarabel's and ecos's time), so "
        "below 1 = faster than both. Certificate: `Solution.residuals.max()` (conicml's "
        "recomputed residuals). Load: 1-minute load average after the row (2 cores).",
        "",
        "| k | solver | path | status | total s | solve s | iterations | objective | "
        "rel. diff vs clarabel | certificate | total / best backend | solve / best backend "
        "| load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Summary: cbor-smo (default: linear path) total time / best backend's total time: "
        + ", ".join(f"k = {k}: {r:.2f}" for k, r, _ in ratios)
        + "; own solve time / best backend's solve time: "
        + ", ".join(f"k = {k}: {r:.2f}" for k, _, r in ratios) + ".",
        "",
        "Reading. The linear path makes a pair update O(d), but choosing the pair (the "
        "threshold KKT test (5.3)-(5.5) and the second-order partner scan) is O((k + n_var) d) "
        "per update, and from the one-pair start a run needs about one to three updates per "
        "variable (n_var ~ 1.6 k here): cbor-smo's time grows like k^2 d, an interior-point "
        "iteration on this dual like k d^2 with 13-20 iterations, so the backends overtake it "
        "as k grows at d = 10. Tried during development and dropped (not measured by this "
        "script): LIBSVM-style shrinking (in the bulk phase over 90% of the variables still "
        "violate, so the active set hardly shrinks; no consistent gain at k = 1000-5000, "
        "within the load's noise) and several "
        "pairs per KKT pass with fresh O(d) scores (the stale pairs fought each other: "
        "6 404 -> 38 158 updates at k = 2000, 3x slower).",
        "",
        "## cbor-smo's other paths (one run each, time_limit "
        f"{args.limit:g} s, k <= 1000)",
        "",
        "| k | run | path | status | total s | iterations | objective | certificate | load |",
        "|---|---|---|---|---|---|---|---|---|",
        *others,
        "",
        "## cbc-smo on the suite's CBC linear dual (same protocol, best of "
        f"{args.repeats})",
        "",
        "cbc-smo has no linear path (it keeps kernel columns). Its total time / the best "
        "backend's: " + ", ".join(f"k = {k}: {r:.2f}" for k, r in cbc_ratios)
        + " (the issue's target: within 2x).",
        "",
        "| clusters k | solver | status | total s | iterations | objective | certificate "
        "| total / best backend | load |",
        "|---|---|---|---|---|---|---|---|---|",
        *cbc_rows,
        "",
    ]
    path = write_results("cbor_linear", "\n".join(lines), quick=args.quick)
    print(f"wrote {path}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
