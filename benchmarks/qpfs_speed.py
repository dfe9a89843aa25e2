"""QPFS speed: the simplex solver vs the generic backends, and QPFS + Nystrom vs exact QPFS.

Part A (solver): the simplex QP (seed 001 eq. 3.4) from a random factor L (M x k) with
F ~ U(0, 1), alpha = 0.5, at M in {200, 1000, 5000}, low rank (k = 20) and full rank
(k = M). Every run (program built from the factor, cvxpy compilation included for the
backends) runs in a child process under a time limit; a TIMEOUT is recorded as such and
larger M of that solver are skipped. The objective gap is relative to the best objective
of the case. Ratio = wall time / simplex-smo wall time in the same run.

Part A times the program build and the solve (best of 3 when a run takes under 5 s,
after a warm-up solve of a tiny instance by the same solver).

Part B (Nystrom, Fig 3.13 spirit): synthetic data, N = 200 samples, M features driven by
30 latent factors, 20 informative features; |correlation| similarity (exact MI at
M = 5000 costs M^2 bins^2 N and is left out of this timing). Exact QPFS (M x M similarity
+ eigendecomposition + simplex-smo) vs QPFS + Nystrom (r = pM rows + (B.17) +
simplex-smo) for p in {0.01, 0.05, 0.1, 0.2, 0.5}; speed-up and overlap of the top-50
ranking with exact QPFS. Also the greedy mRMR (MID, MI) time as M grows.

Usage: ``python benchmarks/qpfs_speed.py [--quick] [--limit SECONDS] [--parts ABC]
[--nystrom-m M]`` (a run of a subset of the parts writes ``qpfs_speed_<parts>_m<M>.md``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.estimators import MRMRSelector  # noqa: E402
from conicml.formulations import qpfs  # noqa: E402

SOLVERS = ["simplex-smo", "clarabel", "ecos", "osqp"]


def _instance(m: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, k)) / np.sqrt(k), rng.uniform(0, 1, m)


def _run_solver(m: int, k: int, solver: str) -> dict:
    opts = {"osqp": {"max_iter": 100_000}}.get(solver, {})
    # warm-up on a tiny instance (imports, first-call costs), the same for every solver
    Lw, Fw = _instance(20, 3, seed=1)
    cm.solve(qpfs.simplex_qp(Lw, Fw, 0.5), solver, **opts)
    L, F = _instance(m, k)
    walls, cpus = [], []
    while True:  # best of 3 for runs under 5 s (2 shared cores: noisy), else one run
        start, cpu = time.perf_counter(), time.process_time()
        prog = qpfs.simplex_qp(L, F, 0.5)
        sol = cm.solve(prog, solver, **opts)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        if len(walls) == 3 or walls[-1] > 5.0:
            break
    wall = min(walls)
    w = np.asarray(sol.values.get("w", np.full(m, np.nan)), dtype=float)
    return {"status": sol.status.value, "wall": wall, "cpu": min(cpus), "iters": sol.iterations,
            # the point put back on the simplex (interior-point solvers return tiny
            # negatives), so that every objective is that of a feasible point
            "objective": prog.data["qp"].objective(np.maximum(w, 0)
                                                   / max(np.maximum(w, 0).sum(), 1e-300)),
            "gap": sol.residuals.gap}


def _synthetic(m: int, n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    latent = rng.normal(size=(n, 30))
    X = latent @ rng.normal(size=(30, m)) * 0.5 + rng.normal(size=(n, m))
    X[:, :20] += (2 * y[:, None] - 1) * rng.uniform(0.3, 1.0, 20)
    return X, y


def _run_qpfs(m: int, p: float | None) -> dict:
    X, y = _synthetic(m)
    start, cpu = time.perf_counter(), time.process_time()
    prog = qpfs.qpfs(X, y, similarity="correlation", nystrom=p, random_state=0)
    build = time.perf_counter() - start
    sol = cm.solve(prog, "simplex-smo")
    wall = time.perf_counter() - start
    return {"status": sol.status.value, "wall": wall, "build": build,
            "cpu": time.process_time() - cpu,
            "ranking": prog.decode(sol)["ranking"][:50], "alpha": prog.data["alpha"]}


def _run_mrmr(m: int) -> dict:
    X, y = _synthetic(m)
    start = time.perf_counter()
    MRMRSelector(50).fit(X, y)
    return {"status": "optimal", "wall": time.perf_counter() - start}


def _section(args: argparse.Namespace) -> str | None:
    """A run of some parts only is a section of results/qpfs_speed.md."""
    m_big = 1000 if args.quick else args.nystrom_m
    return None if args.parts == "ABC" else f"{args.parts}_m{m_big}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke run)")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per run")
    parser.add_argument("--parts", default="ABC", help="which parts to run (A, B, C)")
    parser.add_argument("--nystrom-m", type=int, default=5000, help="M of part B")
    parser.add_argument("--exact-limit", type=float, default=None,
                        help="seconds for exact QPFS in part B (default 4 x --limit)")
    args = parser.parse_args()
    sizes = [200, 500] if args.quick else [200, 1000, 5000]
    lines = [
        "# QPFS speed: simplex-smo vs generic backends; QPFS + Nystrom vs exact QPFS", "",
        f"Machine: {machine()}. Time limit per run: {args.limit:.0f} s (2 cores shared "
        "with other jobs: absolute times are noisy, ratios within a row group are measured "
        "in the same run).", "",
        "## A. Simplex QP (3.4), alpha = 0.5, random factor", "",
        "CPU s is the child's process time (single-threaded BLAS): under the load of a "
        "shared machine it is the robust measure; wall s also holds the waits.", "",
        "| M | rank k | solver | status | wall s | ratio to simplex-smo | cpu s "
        "| cpu ratio | iterations | objective gap |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    timed_out: set[tuple[str, str]] = set()
    for m in sizes if "A" in args.parts else []:
        for label, k in (("low", 20), ("full", m)):
            results = {}
            for solver in SOLVERS:
                if (solver, label) in timed_out:
                    results[solver] = ("skipped", None)
                    continue
                state, res, _ = run_with_limit(_run_solver, (m, k, solver), args.limit)
                if state == "timeout":
                    timed_out.add((solver, label))
                results[solver] = (state, res)
            objs = [r["objective"] for s, r in results.values()
                    if s == "ok" and r["status"].startswith("optimal")]
            best = min(objs) if objs else np.nan
            base = results["simplex-smo"]
            base_wall = base[1]["wall"] if base[0] == "ok" else np.nan
            base_cpu = base[1]["cpu"] if base[0] == "ok" else np.nan
            for solver, (state, res) in results.items():
                if state == "ok":
                    gap = (res["objective"] - best) / max(1.0, abs(best))
                    row = [res["status"], f"{res['wall']:.3f}",
                           f"{res['wall'] / base_wall:.1f}", f"{res['cpu']:.3f}",
                           f"{res['cpu'] / base_cpu:.1f}", str(res["iters"]), f"{gap:.1e}"]
                elif state == "timeout":
                    row = ["TIMEOUT", f">{args.limit:.0f}", f">{args.limit / base_wall:.0f}",
                           "-", "-", "-", "-"]
                elif state == "skipped":
                    row = ["skipped (timed out at a smaller M)", "-", "-", "-", "-", "-", "-"]
                else:
                    row = [f"error: {res}", "-", "-", "-", "-", "-", "-"]
                lines.append(f"| {m} | {k} | {solver} | " + " | ".join(row) + " |")
                print(lines[-1], flush=True)
            lines_so_far = lines + ["", f"(partial: written after M = {m}, {label} rank; "
                                    f"load average {os.getloadavg()[0]:.1f})"]
            write_results("qpfs_speed", "\n".join(lines_so_far) + "\n", args.quick,
                          section=_section(args))

    m_big = 1000 if args.quick else args.nystrom_m
    rates = [0.1, 0.5] if args.quick else [0.01, 0.05, 0.1, 0.2, 0.5]
    lines += ["", f"## B. QPFS + Nystrom vs exact QPFS (|correlation|, N = 200, M = {m_big})", "",
              "| method | status | wall s (similarity + factor) | wall s total | speed-up vs "
              "exact | cpu s total | cpu speed-up | alpha | top-50 overlap with exact |",
              "|---|---|---|---|---|---|---|---|---|"]
    exact_limit = args.exact_limit or 4 * args.limit
    state, exact, _ = (run_with_limit(_run_qpfs, (m_big, None), exact_limit)
                       if "B" in args.parts else ("skipped", None, 0))
    rows = [("exact", state, exact)] if "B" in args.parts else []
    for p in rates if "B" in args.parts else []:
        st, res, _ = run_with_limit(_run_qpfs, (m_big, p), args.limit)
        rows.append((f"Nystrom p={p:g}", st, res))
    for label, st, res in rows:
        if st != "ok":
            limit = exact_limit if label == "exact" else args.limit
            lines.append(f"| {label} | {st.upper()} (limit {limit:.0f} s) | - | - | - | - | - "
                         "| - | - |")
            continue
        speed = exact["wall"] / res["wall"] if state == "ok" else np.nan
        overlap = (len(set(res["ranking"]) & set(exact["ranking"])) / 50
                   if state == "ok" else np.nan)
        cpu_speed = exact["cpu"] / res["cpu"] if state == "ok" else np.nan
        lines.append(f"| {label} | {res['status']} | {res['build']:.2f} | {res['wall']:.2f} | "
                     f"{speed:.1f} | {res['cpu']:.2f} | {cpu_speed:.1f} | {res['alpha']:.3f} "
                     f"| {overlap:.0%} |")
        print(lines[-1], flush=True)

    grow = [200, 500] if args.quick else [500, 1000, 2000]
    lines += ["", "## C. Time as M grows (Fig 3.13 style; N = 200, |correlation| for QPFS, "
              "MI for mRMR)", "",
              "| M | exact QPFS s | QPFS + Nystrom p=0.1 s | mRMR (MID, full greedy) s |",
              "|---|---|---|---|"]
    for m in grow if "C" in args.parts else []:
        cells = []
        for fn, a in ((_run_qpfs, (m, None)), (_run_qpfs, (m, 0.1)), (_run_mrmr, (m,))):
            st, res, _ = run_with_limit(fn, a, args.limit)
            cells.append(f"{res['wall']:.2f}" if st == "ok" else st.upper())
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines += ["", f"Load average (1 min) at the end: {os.getloadavg()[0]:.1f}."]
    out = write_results("qpfs_speed", "\n".join(lines) + "\n", args.quick,
                        section=_section(args))
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
