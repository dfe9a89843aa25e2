"""Ellipsoid distance (specified rates): ``ellipsoid-newton`` against Clarabel, in one process.

Issue 14's first target: a specialized route at least 5x faster than Clarabel's *total*
time at d in {50, 200, 500} on well- and ill-conditioned covariances (condition 1 and
1e6), and never slower than Clarabel on the campaign's small instances. This script
measures both side by side in one process, alternating the solvers so that both see the
same load (ratios survive a loaded machine better than seconds):

* **rows** — the instances of ``benchmarks/suite.py`` (``rates_instance``: n = max(2d, 400)
  points per class, primal kind, ridge 1e-9); each repeat builds a fresh program, so
  Clarabel's time includes cvxpy's compilation, as in the suite; ``--repeats`` alternated
  runs, the median time of each solver;
* **campaign** — the first ``--campaign`` seeds of the specified-rates family of
  ``tests/campaign`` (d <= 5, n <= 60, features scaled 1e-8 ... 1e8, both kinds), each
  solved ``--repeats`` times by both (alternating, fresh program each time); the ratio of
  the medians per instance, summarised (median, 90th percentile, max, count above 1).

``benchmarks/suite.py --groups ellipsoid`` measures the same rows in cold child processes
(first call of a fresh interpreter, the suite's convention). Each row states the status,
the objective and conicml's recomputed certificate (``Solution.residuals.max()``):
speed is never bought with a looser stop (``ellipsoid-newton`` tol 1e-10 on its certified
relative gap; Clarabel at its defaults).

Usage: ``python benchmarks/ellipsoid_speed.py [--quick] [--repeats R] [--campaign N]
[--seeds 24,26] [--no-rows] [--section NAME]`` (full: about 2 minutes on a quiet 2-core
machine; ``--quick``: d = 50 and 20 campaign instances, a few seconds). The issue-14
rider study: ``--no-rows --seeds 24,26,7,3,62,64 --campaign 400 --section rider``. The
per-step study: ``--seeds 24,26,7,3,62,64,109,113,289 --campaign 400 --section step``
(about 50 s on a quiet machine); both are sections of ``results/ellipsoid_speed.md``;
that the iterates did not change is checked by ``benchmarks/ellipsoid_trace.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "campaign"))
from _harness import machine, write_results  # noqa: E402
from suite import rates_instance  # noqa: E402

import conicml as cm  # noqa: E402

SOLVERS = ("clarabel", "ellipsoid-newton")


def timed(build, solver: str) -> tuple[float, cm.Solution]:
    """Build a fresh program and solve it; the time counts the solve only (as the suite)."""
    prog = build()
    start = time.perf_counter()
    sol = cm.solve(prog, solver)
    return time.perf_counter() - start, sol


def alternate_times(build, repeats: int
                    ) -> tuple[dict[str, list[float]], dict[str, cm.Solution]]:
    """Each solver's times over ``repeats`` alternated runs, and its last solution."""
    times: dict[str, list[float]] = {s: [] for s in SOLVERS}
    last: dict[str, cm.Solution] = {}
    for k in range(repeats):
        order = SOLVERS if k % 2 == 0 else SOLVERS[::-1]
        for s in order:
            t, sol = timed(build, s)
            times[s].append(t)
            last[s] = sol
    return times, last


def alternate(build, repeats: int) -> dict[str, tuple[float, cm.Solution]]:
    """Each solver's median time over alternated runs, and its last solution."""
    times, last = alternate_times(build, repeats)
    return {s: (statistics.median(times[s]), last[s]) for s in SOLVERS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--campaign", type=int, default=200,
                        help="campaign instances (seeds 0 .. N-1 of the rates family)")
    parser.add_argument("--seeds", default="",
                        help="comma-separated campaign seeds reported one by one (best and "
                        "median of --repeats alternated runs), e.g. 24,26")
    parser.add_argument("--no-rows", action="store_true",
                        help="skip the d = 50 / 200 / 500 rows")
    parser.add_argument("--section", default=None,
                        help="record the run as this section of results/ellipsoid_speed.md")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    dims = [] if args.no_rows else [50] if args.quick else [50, 200, 500]
    n_campaign = min(args.campaign, 20) if args.quick else args.campaign
    load0 = os.getloadavg()
    t_start = time.perf_counter()
    # warm-up (imports, cvxpy's and BLAS's first calls) outside every measurement
    alternate(lambda: rates_instance(20, 1.0), 1)
    lines = [
        "# Ellipsoid distance: ellipsoid-newton vs Clarabel, alternating in one process "
        "(issue 14)",
        "",
        f"Machine: {machine()}; load average at the start {load0[0]:.1f} / {load0[1]:.1f} / "
        f"{load0[2]:.1f} (1 / 5 / 15 min, 2 cores). Median of {args.repeats} alternated runs; "
        "time of `cm.solve` on a freshly built program (Clarabel: cvxpy compilation "
        "included); ratio = ellipsoid-newton / Clarabel (target <= 0.2). Certificate: "
        "conicml's recomputed `Solution.residuals.max()`; ellipsoid-newton at tol 1e-10 "
        "(certified relative gap), Clarabel at its defaults.",
    ]
    if dims:
        lines += [
            "",
            "| d | cond | Clarabel (s) | ellipsoid-newton (s) | ratio | statuses (Cl / EN) | "
            "objective Cl | objective EN | certificate Cl | certificate EN |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
    for d in dims:
        for cond in (1.0, 1e6):
            res = alternate(lambda d=d, cond=cond: rates_instance(d, cond), args.repeats)
            (tc, sc), (te, se) = res["clarabel"], res["ellipsoid-newton"]
            lines.append(f"| {d} | {cond:g} | {tc:.4f} | {te:.4f} | {te / tc:.3f} | "
                         f"{sc.status.value} / {se.status.value} | {sc.objective:.10g} | "
                         f"{se.objective:.10g} | {sc.residuals.max():.1e} | "
                         f"{se.residuals.max():.1e} |")
            print(lines[-1], flush=True)
    from campaign_instances import instance

    if args.seeds:
        lines += [
            "",
            f"## Single campaign instances (best and median of {args.repeats} alternated runs)",
            "",
            "| seed | Clarabel best (s) | EN best (s) | ratio of bests | ratio of medians | "
            "EN steps | EN form | statuses (Cl / EN) | certificate Cl | certificate EN |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for seed in (int(v) for v in args.seeds.split(",")):
            times, last = alternate_times(lambda seed=seed: instance("rates", seed)[0],
                                          args.repeats)
            tc, te = min(times["clarabel"]), min(times["ellipsoid-newton"])
            sc, se = last["clarabel"], last["ellipsoid-newton"]
            ratio_med = (statistics.median(times["ellipsoid-newton"])
                         / statistics.median(times["clarabel"]))
            lines.append(
                f"| {seed} | {tc:.4f} | {te:.4f} | {te / tc:.3f} | {ratio_med:.3f} | "
                f"{se.iterations} | {se.extras.get('space', '')} | {sc.status.value} / "
                f"{se.status.value} | {sc.residuals.max():.1e} | {se.residuals.max():.1e} |")
            print(lines[-1], flush=True)
    if n_campaign:
        ratios, slower, statuses, uncertified = [], [], {}, []
        for seed in range(n_campaign):
            res = alternate(lambda seed=seed: instance("rates", seed)[0], args.repeats)
            (tc, sc), (te, se) = res["clarabel"], res["ellipsoid-newton"]
            ratios.append(te / tc)
            key = f"{sc.status.value} / {se.status.value}"
            statuses[key] = statuses.get(key, 0) + 1
            if te > tc:
                slower.append(f"seed {seed}: {te:.4f} s vs {tc:.4f} s ({key}, "
                              f"{se.iterations} steps, {se.extras.get('space', '')} form)")
            if sc.status is cm.Status.OPTIMAL and se.status is not cm.Status.OPTIMAL:
                uncertified.append(
                    f"seed {seed}: ellipsoid-newton {se.status.value}, its certified gap "
                    f"{se.extras.get('relative_gap', float('nan')):.1e}, conicml's recomputed "
                    f"certificate {se.residuals.max():.1e} (Clarabel's "
                    f"{sc.residuals.max():.1e}), objectives differ by "
                    f"{abs(se.objective - sc.objective) / abs(sc.objective):.1e}")
        q = statistics.quantiles(ratios, n=10)
        lines += [
            "",
            f"## The campaign's small instances (rates family, seeds 0-{n_campaign - 1})",
            "",
            "| instances | median ratio | 90th percentile | max ratio | slower than Clarabel "
            "| statuses (Cl / EN): count |",
            "|---|---|---|---|---|---|",
            f"| {n_campaign} | {statistics.median(ratios):.3f} | {q[-1]:.3f} | "
            f"{max(ratios):.3f} | {len(slower)} | "
            + "; ".join(f"{k}: {v}" for k, v in sorted(statuses.items())) + " |",
        ]
        if slower:
            lines += ["", "Slower than Clarabel:", ""] + [f"- {s}" for s in slower]
        if uncertified:
            lines += ["", "Clarabel OPTIMAL, ellipsoid-newton not:", ""] + [
                f"- {s}" for s in uncertified]
        print("\n".join(lines[-12:]), flush=True)
    load1 = os.getloadavg()
    lines += ["", f"Run took {time.perf_counter() - t_start:.0f} s; load average at the end "
              f"{load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f}."]
    out = write_results("ellipsoid_speed", "\n".join(lines) + "\n", args.quick,
                        section=args.section)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
