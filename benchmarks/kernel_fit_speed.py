"""Fit time of the kernel minimax estimators (issue 14): default solver vs Clarabel.

``MPMClassifier``, ``BMPMClassifier`` and ``M4Classifier`` with ``kernel="rbf"`` (all
other parameters at their defaults: ``ridge=1e-3``, ``gamma="scale"``, BMPM
``beta0="auto"``, M4 ``C="auto"``) on twonorm / ringnorm (20 dimensions, seed 0): the
first n points train, the next n points test. Solvers:

* ``default`` -- the estimator's default (``solver="auto"``: ``ils-newton`` for a kernel
  MPM/BMPM; M4: ``quadratic-interpolation`` over Clarabel's fixed-rho SOCPs);
* ``clarabel`` -- the former MPM/BMPM default, on the same program (M4 has no single
  conic form, so no such row).

Every fit runs in a fresh spawned process under a time limit (a run that exceeds it is
recorded as TIMEOUT); the time is the wall-clock time of ``fit`` inside the child
(program construction, solve, certificate and decode; imports and the spawn excluded).
Each row states the load average (1 min) read just before it, the certificate
(conicml's recomputed residuals, max of primal/dual/gap), the status, the test accuracy,
the relative objective difference to the Clarabel row of the same case, and the peak
RSS of the child. The target (issue 14) is < 2 s per fit at n = 1000 at unchanged
accuracy.

    python benchmarks/kernel_fit_speed.py [--quick] [--families mpm,bmpm,m4]
                                          [--sizes 250,500,1000] [--time-limit 120]
                                          [--solvers default,clarabel]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

DISCUSSION = """\
**Reading.** See the notes under the table (written for the recorded run)."""


def _fit(family: str, dataset: str, n: int, solver: str) -> dict:
    """Child process: fit one estimator, return its measurements."""
    import numpy as np

    import conicml as cm
    from conicml.estimators import BMPMClassifier, M4Classifier, MPMClassifier

    X, y = getattr(cm.datasets, dataset)(2 * n, dim=20, seed=0)
    est_cls = {"mpm": MPMClassifier, "bmpm": BMPMClassifier, "m4": M4Classifier}[family]
    kwargs = {"kernel": "rbf"}
    if solver != "default":
        kwargs["solver"] = solver
    est = est_cls(**kwargs)
    start = time.perf_counter()
    est.fit(X[:n], y[:n])
    fit_time = time.perf_counter() - start
    sol = est.solution_
    return {"fit": fit_time, "route": sol.solver, "status": sol.status.value,
            "objective": float(sol.objective), "certificate": float(sol.residuals.max()),
            "accuracy": float(np.mean(est.predict(X[n:]) == y[n:])),
            "iterations": int(sol.iterations),
            "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}


def run(families: list[str], datasets: list[str], sizes: list[int],
        time_limit: float, solvers: tuple[str, ...] = ("default", "clarabel")) -> list[dict]:
    rows = []
    for family in families:
        for dataset in datasets:
            for n in sizes:
                chosen = [s for s in ("default", "clarabel") if s in solvers
                          and not (family == "m4" and s == "clarabel")]
                ref_obj = None
                for solver in chosen[::-1]:  # clarabel first: the reference objective
                    load = os.getloadavg()[0]
                    state, res, wall = run_with_limit(_fit, (family, dataset, n, solver),
                                                      time_limit)
                    row = {"family": family, "dataset": dataset, "n": n, "solver": solver,
                           "state": state, "load": load, "wall": wall}
                    if state == "ok":
                        row.update(res)
                        if solver == "clarabel":
                            ref_obj = res["objective"]
                        elif ref_obj is not None:
                            row["obj_diff"] = abs(res["objective"] - ref_obj) / abs(ref_obj)
                    else:
                        row["message"] = res if state == "error" else f"> {time_limit:g} s"
                    rows.append(row)
                    print(_line(row), flush=True)
    return rows


def _line(r: dict) -> str:
    if r["state"] != "ok":
        return (f"| {r['family'].upper()} | {r['dataset']} | {r['n']} | {r['solver']} | "
                f"{r['state'].upper()} ({r.get('message', '')}) | | | | | | | "
                f"{r['load']:.1f} |")
    diff = f"{r['obj_diff']:.1e}" if "obj_diff" in r else "ref" if r["solver"] == "clarabel" \
        else ""
    return (f"| {r['family'].upper()} | {r['dataset']} | {r['n']} | {r['solver']} "
            f"({r['route']}) | "
            f"{r['fit']:.2f} | {r['accuracy']:.3f} | {r['status']} | {r['certificate']:.1e} | "
            f"{diff} | {r['iterations']} | {r['mb']:.0f} | {r['load']:.1f} |")


def table(rows: list[dict], args: argparse.Namespace) -> str:
    head = ("| estimator | data | n | solver (route) | fit (s) | test acc. | status | "
            "certificate | rel. obj. diff to Clarabel | iterations | peak RSS (MB) | "
            "load (1 min) |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [_line(r) for r in rows]
    ratios = []
    for r in rows:
        if r["solver"] == "default" and r["state"] == "ok" and r["family"] != "m4":
            ref = next((q for q in rows if q["solver"] == "clarabel" and q["family"] ==
                        r["family"] and q["dataset"] == r["dataset"] and q["n"] == r["n"]),
                       None)
            if ref is not None and ref["state"] == "ok":
                ratios.append(f"| {r['family'].upper()} | {r['dataset']} | {r['n']} | "
                              f"{ref['fit'] / r['fit']:.1f}x | "
                              f"{r['accuracy'] - ref['accuracy']:+.3f} |")
    ratio_table = ("| estimator | data | n | Clarabel fit / default fit | test acc. "
                   "default - Clarabel |\n|---|---|---|---|---|\n" + "\n".join(ratios))
    return (f"# Kernel fit speed (issue 14)\n\n{machine()}\n\n"
            f"Command: `python benchmarks/kernel_fit_speed.py"
            f"{' --quick' if args.quick else ''} --families {','.join(args.families)} "
            f"--sizes {','.join(map(str, args.sizes))} --time-limit {args.time_limit:g} "
            f"--solvers {args.solvers}`\n\n"
            "Tolerances: every solver at its defaults (ils-newton: |g(c)| <= 1e-11; "
            "Clarabel: its defaults, 1e-8); certificate = conicml's recomputed residuals "
            "(certify_tol 1e-6).\n\n"
            f"{head}\n" + "\n".join(lines) + "\n\n" + ratio_table + "\n\n" + DISCUSSION
            + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (n = 100, 60)")
    parser.add_argument("--families", default="mpm,bmpm,m4")
    parser.add_argument("--datasets", default="twonorm,ringnorm")
    parser.add_argument("--sizes", default="250,500,1000")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--solvers", default="default,clarabel",
                        help="rows to run: default and/or clarabel")
    args = parser.parse_args()
    args.families = args.families.split(",")
    args.sizes = [100] if args.quick else [int(s) for s in args.sizes.split(",")]
    datasets = ["twonorm"] if args.quick else args.datasets.split(",")
    rows = run(args.families, datasets, args.sizes,
               30.0 if args.quick else args.time_limit, tuple(args.solvers.split(",")))
    out = write_results("kernel_fit_speed", table(rows, args), quick=args.quick)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
