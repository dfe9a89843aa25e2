"""Smoothed RankRC: rank-tr and rank-newton against Clarabel and ECOS, time and peak memory.

Data: two Gaussian classes in d = 5 (rare class shifted by 0.8 in every
coordinate), 10 % rare, m in {500, 1000, 2000, 5000}; standardized; RankRC with the
Gaussian kernel of the experiments (gamma = "mean-distance"), lambda = 2^-6,
eps = 0.1. Every (solver, m) runs in a fresh child process with a time limit; a
run over it is recorded as TIMEOUT and larger sizes of that solver are skipped.
Times are wall seconds of formulation + solve (kernel columns, cvxpy compilation
for the backends). The generic route is refused above
``ranking.MAX_GENERIC_PAIRS`` (200 000 pairs); the benchmark lifts that limit in
its children to measure the backends. Peak memory is the growth of the child's
peak RSS over its RSS after imports (``resource.getrusage``). Objective gap:
relative difference of the recomputed objective F(beta) to the best in the row
group. Ratios: best generic wall time / specialized wall time, same run.

Second table: full Mammography (11 183 points, 260 rare, standardized, rbf with
the mean-distance width): one RankRC fit at lambda = 2^-8, and the 16-value path
log2 lambda = -20:2:10 solved high to low with warm starts
(``conicml.estimators.ranking.ranking_path``).

BLAS runs single-threaded (OMP_NUM_THREADS=1, set before numpy is imported):
the 2-core machine is shared and multi-threaded BLAS was measured 4-6x slower
under load.

Usage: ``python benchmarks/ranking_speed.py [--quick] [--limit SECONDS]
[--mammography-only]``
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

SOLVERS = ["rank-tr", "rank-newton", "clarabel", "ecos"]
GENERIC = ("clarabel", "ecos")


def _data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 5))
    y = -np.ones(m)
    y[: m // 10] = 1.0
    X[y > 0] += 0.8
    return (X - X.mean(0)) / X.std(0), y


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _run(m: int, solver: str, lam: float) -> dict:
    import conicml as cm
    from conicml.formulations import ranking

    ranking.MAX_GENERIC_PAIRS = 10**9  # measure the generic route itself
    X, y = _data(m)
    base = _rss_mb()
    start = time.perf_counter()
    prog = ranking.rankrc(X, y, lam)
    sol = cm.solve(prog, solver)
    wall = time.perf_counter() - start
    model = prog.decode(sol) if sol.values else {"objective": float("nan")}
    return {"status": sol.status.value, "wall": wall, "iters": sol.iterations,
            "objective": float(model["objective"]), "mem": _rss_mb() - base,
            "pairs": prog.data["rank"].n_pairs, "cert": sol.residuals.dual}


def _mammography(lam: float, path: bool, solver: str = "rank-tr") -> dict:
    import conicml as cm
    from conicml.estimators.ranking import ranking_path
    from conicml.formulations import ranking

    X, y = cm.datasets.load("mammography")
    X = (X - X.mean(0)) / X.std(0)
    base = _rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    prog = ranking.rankrc(X, y, lam)
    if path:
        lams = 2.0 ** np.arange(-20, 11, 2)
        sols = ranking_path(prog, lams, solver=solver)
        wall = time.perf_counter() - start
        statuses = [s.status.value for _, s in sols]
        iters = sum(s.iterations for _, s in sols)
        per_lam = ", ".join(f"2^{int(np.log2(v))}: {s.iterations} it / {s.solve_time:.1f} s"
                            for v, s in sols)
        return {"wall": wall, "cpu": time.process_time() - cpu, "iters": iters,
                "mem": _rss_mb() - base, "per_lam": per_lam,
                "status": f"{statuses.count('optimal')}/{len(statuses)} optimal",
                "pairs": prog.data["rank"].n_pairs}
    sol = cm.solve(prog, solver)
    wall = time.perf_counter() - start
    return {"wall": wall, "cpu": time.process_time() - cpu, "iters": sol.iterations,
            "mem": _rss_mb() - base, "status": sol.status.value,
            "pairs": prog.data["rank"].n_pairs}


def _mammography_table(limit: float) -> list[str]:
    lines = ["", "## Full Mammography (m = 11183, m+ = 260, N = 2 839 980 pairs)", "",
             "Wall and CPU seconds of the child process (kernel columns + solve); the CPU "
             "time is what the run consumed, the wall time also holds the waits of a "
             "shared machine. Load average (1 min) before each run in the last column.", "",
             "| task | solver | status | iterations | wall [s] | cpu [s] | peak mem [MB] "
             "| target | load |",
             "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for task, path, target in (("one fit, lambda = 2^-8", False, "< 5 s"),
                               ("16-value path, warm-started", True, "< 60 s")):
        for solver in ("rank-tr", "rank-newton"):
            load = os.getloadavg()[0]
            state, res, wall = run_with_limit(_mammography, (2.0 ** -8, path, solver), limit)
            print(task, solver, state, res, flush=True)
            if state == "ok":
                lines.append(f"| {task} | {solver} | {res['status']} | {res['iters']} "
                             f"| {res['wall']:.1f} | {res['cpu']:.1f} | {res['mem']:.0f} "
                             f"| {target} | {load:.1f} |")
                if path:
                    notes.append(f"- {solver} path, per lambda: {res['per_lam']}")
            else:
                lines.append(f"| {task} | {solver} | {state.upper()} | | >{wall:.0f} | | "
                             f"| {target} | {load:.1f} |")
    return lines + [""] + notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="m = 300, 600 only; no path")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--mammography-only", action="store_true",
                        help="only the Mammography table (its section of ranking_speed.md)")
    args = parser.parse_args()
    if args.mammography_only:
        lines = ["# Smoothed RankRC on the full Mammography data", "",
                 f"Machine: {machine()}; BLAS threads: {os.environ['OMP_NUM_THREADS']}; "
                 f"time limit {4 * args.limit:g} s per run."]
        lines += _mammography_table(4 * args.limit)
        out = write_results("ranking_speed", "\n".join(lines) + "\n", section="mammography")
        print(f"wrote {out}")
        return
    sizes = [300, 600] if args.quick else [500, 1000, 2000, 5000]
    lam = 2.0 ** -6
    lines = ["# Smoothed RankRC: specialized vs generic solvers", "",
             f"Machine: {machine()}; BLAS threads: {os.environ['OMP_NUM_THREADS']}; "
             f"time limit {args.limit:g} s per run; load average at start "
             f"{os.getloadavg()[0]:.1f} (the machine is shared).", "",
             "| m | pairs N | solver | status | iters | wall [s] | peak mem [MB] "
             "| rel. obj. gap | certificate | best generic / this |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    skip: set[str] = set()
    for m in sizes:
        rows = {}
        for solver in SOLVERS:
            if solver in skip:
                rows[solver] = None
                continue
            state, res, wall = run_with_limit(_run, (m, solver, lam), args.limit)
            if state != "ok":
                rows[solver] = {"state": state.upper(), "wall": wall, "msg": res}
                skip.add(solver)
            else:
                rows[solver] = res
            print(m, solver, state, rows[solver] if state == "ok" else res, flush=True)
        done = [r for r in rows.values() if r and "objective" in r]
        best = min(r["objective"] for r in done) if done else np.nan
        gens = [rows[s]["wall"] for s in GENERIC if rows[s] and "objective" in rows[s]]
        best_gen = min(gens) if gens else None
        # every generic backend timed out (or was skipped): the ratio is a lower bound
        bound = None if gens else float(args.limit)
        for solver in SOLVERS:
            r = rows[solver]
            pairs = m // 10 * (m - m // 10)
            if r is None:
                lines.append(f"| {m} | {pairs} | {solver} | skipped (timed out at a smaller m) "
                             "| | | | | | |")
            elif "objective" not in r:
                lines.append(f"| {m} | {pairs} | {solver} | {r['state']} | | "
                             f">{r['wall']:.0f} | | | | |")
            else:
                gap = abs(r["objective"] - best) / max(1.0, abs(best))
                if solver in GENERIC:
                    ratio = ""
                elif best_gen:
                    ratio = f"{best_gen / r['wall']:.0f}x"
                else:
                    ratio = f"> {bound / r['wall']:.0f}x (generic > {bound:.0f} s)"
                lines.append(f"| {m} | {r['pairs']} | {solver} | {r['status']} | {r['iters']} "
                             f"| {r['wall']:.2f} | {r['mem']:.0f} | {gap:.1e} | "
                             f"{r['cert']:.1e} | {ratio} |")
    if not args.quick:
        lines += _mammography_table(4 * args.limit)
    lines += ["", "Memory: the specialized solvers hold K_.R (m x |R|) and O(m) work "
              "vectors, never the N pairs; the generic route holds the sparse pair matrix "
              "(2N entries) and cvxpy's canonicalization of N huber terms."]
    out = write_results("ranking_speed", "\n".join(lines) + "\n", quick=args.quick)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
