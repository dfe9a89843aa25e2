"""CBC on data beyond one machine's memory: cluster moments on Dask, then one small SOCP.

The data (two Gaussian classes, d = 10, balanced) are generated lazily in blocks of
500,000 rows and never held whole anywhere: every k-means pass regenerates the blocks on the
workers (``dask.array.random``, seeded, so every pass sees the same rows), and only
per-cluster counts and sums reach the client. The streamed k-means
(:mod:`conicml.moments.distributed`) spends one sampling pass and at most ``MAX_PASSES`` Lloyd
passes; the table records how many it used and why it stopped. The CBC dual (3.11) on the
2 x 20 clusters is then solved by ``cbc-smo``. A fresh ``LocalCluster`` (2 worker
processes, 1 thread each, loopback only) per size, so the recorded peak RSS of each worker
is that run's.

Targets (issue 13): linear time in N, peak memory flat in N, 10^7 points in under 2
minutes on this 2-core machine.

Usage: ``python benchmarks/cbc_dask.py [--quick] [--max-n N]``
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import cpu_seconds, machine, peak_rss_mb, write_results  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.reproductions.saketha_table_3_1 import _Passes  # noqa: E402

D, K, BLOCK = 10, 20, 500_000


def lazy_data(n: int, seed: int = 0):
    """Two Gaussian classes in 10-D, generated block by block (nothing materialised)."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    y = da.where(rng.random(n, chunks=BLOCK) < 0.5, 1.0, -1.0)
    X = rng.standard_normal((n, D), chunks=(BLOCK, D)) + 0.8 * y[:, None]
    return X, y


def run(n: int) -> dict:
    import distributed

    passes = _Passes()
    log = logging.getLogger("conicml.moments.distributed")
    log.setLevel(logging.INFO)
    log.addHandler(passes)

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       memory_limit="6GiB")
    with distributed.Client(cluster) as client:
        X, y = lazy_data(n)
        cpu0 = client.run(cpu_seconds)
        client_cpu0 = cpu_seconds()
        start = time.perf_counter()
        clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=K,
                                               random_state=0)
        t_moments = time.perf_counter() - start
        prog = cm.formulations.cbc.cbc(clusters, C=1.0, accuracy=0.7, form="dual")
        sol = cm.solve(prog, "cbc-smo")
        t_total = time.perf_counter() - start
        client_cpu = cpu_seconds() - client_cpu0
        cpu = {w: c - cpu0[w] for w, c in client.run(cpu_seconds).items()}
        peaks = client.run(peak_rss_mb)
    cluster.close()
    log.removeHandler(passes)
    model = prog.decode(sol)
    return {"n": n, "moments_s": t_moments, "total_s": t_total, "status": sol.status.value,
            "objective": sol.objective, "clusters": clusters.n_clusters,
            "points": int(clusters.counts.sum()), "w_norm": float(np.linalg.norm(model["w"])),
            "peak_mb": max(peaks.values()), "client_mb": peak_rss_mb(),
            "worker_cpu_s": sum(cpu.values()), "max_worker_cpu_s": max(cpu.values()),
            "client_cpu_s": client_cpu, "passes": passes.passes, "stopped": passes.stopped,
            "load": "/".join(f"{x:.1f}" for x in os.getloadavg())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N in {10^5, 10^6} only")
    parser.add_argument("--max-n", type=float, default=1e7)
    parser.add_argument("--sizes", nargs="*", default=None,
                        help="explicit sizes, e.g. --sizes 1e7 (overrides --max-n)")
    args = parser.parse_args()
    sizes = [100_000, 1_000_000] if args.quick else [
        int(n) for n in (1e6, 3e6, 1e7, 3e7, 1e8) if n <= args.max_n]
    if args.sizes:
        sizes = [int(float(n)) for n in args.sizes]
    rows = []
    for n in sizes:
        r = run(n)
        rows.append(r)
        print(f"N={n:>11,}: moments {r['moments_s']:.1f} s, total {r['total_s']:.1f} s, "
              f"peak worker RSS {r['peak_mb']:.0f} MB, {r['passes']} passes "
              f"({r['stopped']}), worker CPU {r['worker_cpu_s']:.1f} s (busiest "
              f"{r['max_worker_cpu_s']:.1f}), client CPU {r['client_cpu_s']:.1f} s, "
              f"{r['status']}, load {r['load']}", flush=True)
    lines = [
        "# CBC on Dask: cluster moments of lazily generated data, then cbc-smo",
        "",
        f"Machine: {machine()}. 2 worker processes x 1 thread (LocalCluster, loopback), "
        f"blocks of {BLOCK:,} rows, d = {D}, k-means with {K} clusters per class, CBC dual "
        "(C = 1, accuracy eta = 0.7) by cbc-smo. `moments` is the distributed part (every k-means "
        "pass regenerates the blocks); `passes` counts the sampling pass and the Lloyd "
        "passes; worker CPU is the user + system time the two worker processes spent during "
        "the run (less sensitive to the machine's load than wall time: on an idle 2-core "
        "machine the wall time is about the busiest worker's CPU plus the client's); peak "
        "RSS is the largest worker's over the run (a fresh LocalCluster per N); load is "
        "`uptime`'s 1/5/15-minute load average when the row finished.",
        "",
        "| N | moments (s) | total (s) | s per 10^6 points | worker CPU s (sum / busiest) | "
        "worker CPU s per 10^6 | client CPU s | peak worker RSS (MB) | client RSS (MB) | "
        "passes | stopped by | clusters | status | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['n']:,} | {r['moments_s']:.1f} | {r['total_s']:.1f} | "
                     f"{r['total_s'] / r['n'] * 1e6:.2f} | {r['worker_cpu_s']:.1f} / "
                     f"{r['max_worker_cpu_s']:.1f} | {r['worker_cpu_s'] / r['n'] * 1e6:.2f} | "
                     f"{r['client_cpu_s']:.1f} | {r['peak_mb']:.0f} | "
                     f"{r['client_mb']:.0f} | {r['passes']} | {r['stopped']} | "
                     f"{r['clusters']} | {r['status']} | {r['load']} |")
    out = write_results("cbc_dask", "\n".join(lines) + "\n", args.quick)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
