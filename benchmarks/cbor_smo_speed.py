"""``cbor-smo``'s compiled loops against its NumPy loops on the seed 003 Table 5.1 / 5.2 programs.

What it measures: per pair update and end to end, ``engine="numba"`` against
``engine="numpy"`` (the same algorithm, the same pairs: the iteration counts and objectives
are listed side by side), on the programs the reproductions build:

* **T5.1** (``conicml.reproductions.saketha_table_5_1``): California Housing, 10 ranks,
  the entry's split and CBOR setting (W, eta, zeta), k-means with 50 / 100 / 200 clusters
  per rank (the counts its selection chooses from), Gaussian kernel, ``form="dual"``;
* **T5.2** (``conicml.reproductions.saketha_table_5_2``): the entry's 25-component mixture,
  5 clusters per rank (25 clusters), W = 2, eta = 0.1, with the Gaussian kernel of its
  ablation (zeta = 1, the kernel path) and the linear kernel of its main table (the linear
  path).

Measurement: in one process, the engines alternate (numba, numpy; ``--repeats`` times, ten
times as many on the 25-cluster programs, best kept), each ``cm.solve`` on the same program
with cbor-smo's defaults (tol 1e-6) and a ``time_limit`` (a run that hits it is listed as
TIMEOUT). ``loop`` = the solver's own solve time, ``us/update`` = loop / pair updates,
``total`` = ``cm.solve`` (start, loop and conicml's certificate recomputed from the
program's data), ``cpu`` = process CPU time of ``cm.solve``. Ratios numpy / numba of the
best runs, wall and CPU. Once per T5.1 program up to 1,000 clusters, clarabel and ecos on
the same program for scale. Before the clock: one solve on each engine (numba loads its
compiled loops). The 1-minute load average is recorded beside every row. BLAS and OpenMP
run on one thread (unless the environment sets them), as in the reproductions.

Usage: ``python benchmarks/cbor_smo_speed.py [--quick] [--repeats R] [--limit S]``; writes
``benchmarks/results/cbor_smo_speed.md`` (``--quick``: ``cbor_smo_speed_quick.md``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# one BLAS/OpenMP thread, as the 003 entries run (a two-thread BLAS under load spins: the
# certificate's least squares took seconds instead of 0.04-0.26 s); set before NumPy loads
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, write_results  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.formulations import ordinal  # noqa: E402

ENGINES = ("numba", "numpy")
T51 = ((10320, 50), (10320, 100), (10320, 200))
QUICK_T51 = ((10320, 50),)
T52_POINTS = 100_000  # 25 clusters whatever the size: the solve does not grow with it
BACKENDS_UP_TO = 1000  # clusters: clarabel and ecos once per T5.1 program up to this size


def t51_program(n_train: int, per_rank: int):
    from conicml.reproductions.saketha_table_5_1 import CBOR, split

    Xtr, ytr, _, _ = split(n_train)
    clusters = cm.ClusterMoments.from_data(Xtr, ytr, clustering="kmeans",
                                           sigma="per-dimension", n_clusters=per_rank)
    return ordinal.cbor(clusters, W=CBOR["W"], accuracy=CBOR["eta"], kernel="rbf",
                        gamma=CBOR["gamma"], form="dual")


def t52_program(n: int, kernel: str):
    from conicml.reproductions.saketha_table_5_2 import mixture

    clusters = cm.ClusterMoments.from_data(*mixture(n, seed=1), clustering="kmeans",
                                           n_clusters=5, sigma="per-dimension")
    kw = {"gamma": 1.0} if kernel == "rbf" else {}
    return ordinal.cbor(clusters, W=2.0, accuracy=0.1, kernel=kernel, form="dual", **kw)


def run(prog, solver: str, options: dict) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    sol = cm.solve(prog, solver, **options)
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    loop = sol.solve_time if sol.solve_time is not None else float("nan")
    return {"status": sol.status.value, "total": total, "cpu": cpu, "loop": loop,
            "iterations": sol.iterations or 0, "objective": sol.objective,
            "columns": (sol.extras or {}).get("kernel_columns", "-"),
            "engine": (sol.extras or {}).get("engine", "-"),
            "method": (sol.extras or {}).get("method", "-")}


def compare_engines(prog, repeats: int, limit: float) -> dict:
    """Best of ``repeats`` per engine (alternating), by total wall time and by CPU time."""
    best: dict = {}
    for _ in range(repeats):
        for engine in ENGINES:
            res = run(prog, "cbor-smo", {"engine": engine, "time_limit": limit})
            res["load"] = os.getloadavg()[0]
            old = best.get(engine)
            if old is None:
                best[engine] = res
                continue
            res["cpu"] = min(res["cpu"], old["cpu"])  # CPU: best of its own
            if res["total"] < old["total"]:
                best[engine] = res
            else:
                old["cpu"] = res["cpu"]
    return best


def _status(res: dict) -> str:
    return "TIMEOUT (time_limit)" if res["status"] == "user_limit" else res["status"]


def _rows(label: str, k: int, best: dict) -> list[str]:
    fast, slow = best["numba"], best["numpy"]
    rows = []
    for engine, res in best.items():
        per = 1e6 * res["loop"] / max(res["iterations"], 1)
        rows.append(
            f"| {label} | {k:,} | {res['method']} | {engine} | {_status(res)} | "
            f"{res['iterations']:,} | {per:.1f} | {res['loop']:.3f} | {res['total']:.3f} | "
            f"{res['cpu']:.3f} | {res['columns']} | {res['objective']:.12g} | "
            f"{res['load']:.1f} |")
    same = "same" if fast["iterations"] == slow["iterations"] else "differ"
    rel = abs(fast["objective"] - slow["objective"]) / max(1.0, abs(slow["objective"]))
    loop = f"**{slow['loop'] / fast['loop']:.1f}x**"
    rows.append(
        f"| {label} | {k:,} | numpy / numba | | iterations {same}, objectives {rel:.1e} "
        f"apart | | {loop} | {loop} | {slow['total'] / fast['total']:.2f}x | "
        f"{slow['cpu'] / fast['cpu']:.2f}x | | | |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--limit", type=float, default=120.0,
                        help="time_limit of every cbor-smo run (seconds)")
    args = parser.parse_args()
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    warm = t52_program(2000, "rbf")
    for engine in ENGINES:  # compile or load the numba loops before the clock
        cm.solve(warm, "cbor-smo", engine=engine)
        cm.solve(t52_program(2000, "linear"), "cbor-smo", engine=engine)

    rows, backend_rows, summary = [], [], []
    settings = [(f"T5.1 CH {n:,}, k-means {p}/rank", lambda n=n, p=p: t51_program(n, p))
                for n, p in (QUICK_T51 if args.quick else T51)]
    settings += [(f"T5.2 mixture {T52_POINTS:,}, {kern}", lambda kern=kern: t52_program(
        T52_POINTS, kern)) for kern in ("rbf", "linear")]
    for label, build in settings:
        prog = build()
        k = int(prog.data["ranks"].size)
        # runs of a few milliseconds (25 clusters): ten times the repeats
        best = compare_engines(prog, args.repeats * (10 if k < 100 else 1), args.limit)
        rows += _rows(label, k, best)
        fast, slow = best["numba"], best["numpy"]
        summary.append(f"{label} ({k:,} clusters): loop {slow['loop'] / fast['loop']:.1f}x, "
                       f"total CPU {slow['cpu'] / fast['cpu']:.1f}x; outside the compiled "
                       f"loop {fast['total'] - fast['loop']:.3g} of {fast['total']:.3g} s")
        print(*rows[-3:], sep="\n", flush=True)
        if label.startswith("T5.1") and k <= BACKENDS_UP_TO and not args.quick:
            for solver in ("clarabel", "ecos"):
                res = run(prog, solver, {})
                backend_rows.append(
                    f"| {label} | {k:,} | {solver} | {res['status']} | {res['total']:.2f} | "
                    f"{res['cpu']:.2f} | {res['objective']:.12g} | "
                    f"{best['numba']['total'] / res['total']:.2f} | "
                    f"{os.getloadavg()[0]:.1f} |")
                print(backend_rows[-1], flush=True)

    elapsed = time.perf_counter() - t_start
    lines = [
        "# cbor-smo: compiled (numba) against NumPy loops on the 003 Table 5.1 / 5.2 programs",
        "",
        f"Generated by `python benchmarks/cbor_smo_speed.py{' --quick' if args.quick else ''}"
        f"` in {elapsed:.0f} s; {machine()}; load average at the start "
        f"{load_start[0]:.1f} / {load_start[1]:.1f} / {load_start[2]:.1f} (1 / 5 / 15 min). "
        f"Best of {args.repeats}, engines alternating; time_limit {args.limit:g} s per run.",
        "",
        "Columns: `us/update` = loop / pair updates; `loop` = cbor-smo's own solve time; "
        "`total` = `cm.solve` (start, loop, conicml's certificate); `cpu` = process CPU "
        "time of `cm.solve`; `columns` = kernel columns computed. The ratio rows divide "
        "the NumPy loop's times by the compiled loop's (loop, loop, total wall, total CPU).",
        "",
        "| program | clusters | path | engine | status | pair updates | us/update | loop s | "
        "total s | cpu s | columns | objective | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Summary (numpy / numba; the time outside the loop is the start and conicml's "
        "certificate, the same code on both engines): " + "; ".join(summary) + ".",
        "",
    ]
    if backend_rows:
        lines += [
            "Generic backends, once, on the same programs (`cm.solve`, certificate included; "
            "`numba / it` = cbor-smo's compiled total over the backend's):",
            "",
            "| program | clusters | solver | status | total s | cpu s | objective | "
            "numba / it | load |",
            "|---|---|---|---|---|---|---|---|---|",
            *backend_rows,
            "",
        ]
    path = write_results("cbor_smo_speed", "\n".join(lines), quick=args.quick)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
