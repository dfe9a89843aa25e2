"""QPFS and RankRC on Dask: lazily generated rows, fitted on a LocalCluster, against in memory.

Each run is a child process with a wall-time limit (``--limit``, seconds; a run that
exceeds it is killed and recorded as a timeout). Inside it a fresh ``LocalCluster`` (2
worker processes x 1 thread, loopback only) fits the estimator on a ``dask.array``
generated block by block (``dask.array.random``, seeded: every pass regenerates the same
rows, nothing is held whole), and the same estimator is fitted in memory:

* **QPFS** (``QPFSSelector``, MI and correlation): N rows, d = 20, 3 classes, 5
  informative features and 5 noisy copies of them. In memory: the same N rows,
  computed. Compared: the selected features and the largest weight difference.
* **RankRC** (``RankRCClassifier``, Gaussian kernel, lam = 0.01, eps = 0.1): N rows,
  d = 5, 0.1 % rare (shifted and wider class). In memory: ``rank-tr`` on the first
  10^5 rows (the issue's reference). Compared: ROC AUC on 2 x 10^5 fresh test rows.
  The Dask fit uses ``hessian_fraction`` (the Hessian's O(n m+^2) term from that
  fraction of the quadratic-set negatives; gradient and certificate exact).

Recorded: wall time, worker CPU (sum / busiest), peak worker RSS, client RSS, passes
over the data, status, and ``uptime``'s load average. The client RSS is the child
process's peak: for RankRC it includes the in-memory reference fit and the test rows,
which run first in that process.

Usage: ``python benchmarks/scale_dask_ranking_qpfs.py [--quick] [--n N] [--limit S]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import cpu_seconds, machine, peak_rss_mb, write_results  # noqa: E402

BLOCK = 20_000
RARE = 0.001


def qpfs_data(n: int, seed: int = 0):
    import dask.array as da

    rng = da.random.default_rng(seed)
    y = (rng.random(n, chunks=BLOCK) * 3).astype(int)
    Z = rng.standard_normal((n, 20), chunks=(BLOCK, 20))
    signal = Z[:, :5] + 0.7 * y[:, None] * np.array([1.0, -1.0, 0.5, 0.8, -0.6])
    copies = signal + 0.5 * Z[:, 5:10]
    return da.concatenate([signal, copies, Z[:, 10:]], axis=1), y


def rank_data(n: int, seed: int = 0, block: int = BLOCK):
    import dask.array as da

    rng = da.random.default_rng(seed)
    y = (rng.random(n, chunks=block) < RARE).astype(int)
    Z = rng.standard_normal((n, 5), chunks=(block, 5))
    shift = np.array([1.5, -1.0, 0.5, 0.0, 0.0])
    X = Z * (1.0 + 0.5 * y[:, None]) + y[:, None] * shift
    return X, y


def _cluster():
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       memory_limit="4GiB")
    return cluster, distributed.Client(cluster)


def case_qpfs(n: int, similarity: str) -> dict:
    from conicml.estimators.feature_selection import QPFSSelector

    cluster, client = _cluster()
    X, y = qpfs_data(n)
    cpu0, c0 = client.run(cpu_seconds), cpu_seconds()
    t = time.perf_counter()
    sel = QPFSSelector(10, similarity=similarity).fit(X, y)
    t_dask = time.perf_counter() - t
    cpu = {w: c - cpu0[w] for w, c in client.run(cpu_seconds).items()}
    peaks = client.run(peak_rss_mb)
    client_mb = peak_rss_mb()
    client_cpu = cpu_seconds() - c0
    Xm, ym = X.compute(), y.compute()
    client.close()
    cluster.close()
    t = time.perf_counter()
    ref = QPFSSelector(10, similarity=similarity).fit(Xm, ym)
    t_mem = time.perf_counter() - t
    return {"dask_s": t_dask, "memory_s": t_mem, "worker_cpu": sum(cpu.values()),
            "busiest": max(cpu.values()), "client_cpu": client_cpu,
            "peak_mb": max(peaks.values()), "client_mb": client_mb,
            "same_support": bool(np.array_equal(sel.support_, ref.support_)),
            "same_ranking": bool(np.array_equal(sel.ranking_, ref.ranking_)),
            "max_dw": float(np.max(np.abs(sel.scores_ - ref.scores_))),
            "status": sel.solution_.status.value}


def case_rankrc(n: int, fraction: float, time_limit: float, basis_size: int = 0,
                block: int = BLOCK) -> dict:
    from sklearn.metrics import roc_auc_score

    from conicml.estimators.ranking import RankRCClassifier

    Xt, yt = (a.compute() for a in rank_data(200_000, seed=99))
    X, y = rank_data(n, block=block)
    Xs, ys = X[:100_000].compute(), y[:100_000].compute()
    t = time.perf_counter()
    ref = RankRCClassifier(lam=0.01).fit(Xs, ys)
    t_mem = time.perf_counter() - t
    auc_mem = roc_auc_score(yt, ref.decision_function(Xt))
    cluster, client = _cluster()
    cpu0, c0 = client.run(cpu_seconds), cpu_seconds()
    t = time.perf_counter()
    options = {"hessian_fraction": fraction, "time_limit": time_limit}
    if basis_size:  # a seeded sample of the rare class as the basis
        options["basis_size"] = basis_size
    clf = RankRCClassifier(lam=0.01, random_state=0, solver_options=options).fit(X, y)
    t_dask = time.perf_counter() - t
    sol = clf.solution_
    cpu = {w: c - cpu0[w] for w, c in client.run(cpu_seconds).items()}
    peaks = client.run(peak_rss_mb)
    client_mb = peak_rss_mb()
    client_cpu = cpu_seconds() - c0
    client.close()
    cluster.close()
    auc = roc_auc_score(yt, clf.decision_function(Xt))
    return {"dask_s": t_dask, "memory_s": t_mem, "worker_cpu": sum(cpu.values()),
            "busiest": max(cpu.values()), "client_cpu": client_cpu,
            "peak_mb": max(peaks.values()), "client_mb": client_mb,
            "m_pos": int(sol.extras["n_rare"]), "basis": int(clf.basis_.size),
            "m_pos_sample": int(ref.basis_.size), "auc": float(auc), "auc_mem": float(auc_mem),
            "status": sol.status.value, "relgrad": float(sol.residuals.dual),
            "iterations": int(sol.iterations), "passes": int(sol.extras["passes"])}


def _child(args: list[str], limit: float) -> dict:
    try:
        out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                             text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 10^5")
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--limit", type=float, default=280.0, help="seconds per run")
    parser.add_argument("--fraction", type=float, default=0.02)
    parser.add_argument("--only", choices=["qpfs", "rankrc"], default=None)
    parser.add_argument("--basis-size", type=int, default=0,
                        help="RankRC: a seeded sample of that many rare rows as the basis")
    parser.add_argument("--block", type=int, default=BLOCK, help="rows per block")
    parser.add_argument("--child", nargs="*", default=None)
    args = parser.parse_args()
    if args.child:
        kind, n = args.child[0], int(float(args.child[1]))
        if kind == "qpfs":
            res = case_qpfs(n, args.child[2])
        else:
            res = case_rankrc(n, float(args.child[2]), float(args.child[3]),
                              int(args.child[4]), int(args.child[5]))
        print(json.dumps(res))
        return
    n = 100_000 if args.quick else int(args.n)
    head = (f"Machine: {machine()}. 2 worker processes x 1 thread (LocalCluster, loopback), "
            f"blocks of {args.block:,} rows generated lazily; per-run limit {args.limit:.0f} s "
            "(child process killed beyond it). Worker CPU is the user + system time of the "
            "two workers during the Dask fit; peak RSS the largest worker's; load is "
            "`uptime`'s 1/5/15-minute average when the row finished.")
    if args.only in (None, "qpfs"):
        lines = ["# QPFS on Dask against QPFS in memory (the same rows)", "", head, "",
                 "| N | similarity | Dask fit (s) | in-memory fit (s) | worker CPU s (sum / "
                 "busiest) | client CPU s | peak worker RSS (MB) | client RSS (MB) | same "
                 "support / ranking | max weight diff | status | load |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for similarity in ("mi", "correlation"):
            r = _child(["qpfs", str(n), similarity], args.limit)
            if "dask_s" not in r:
                lines.append(f"| {n:,} | {similarity} | {r} | | | | | | | | | {_load()} |")
            else:
                lines.append(
                    f"| {n:,} | {similarity} | {r['dask_s']:.1f} | {r['memory_s']:.1f} | "
                    f"{r['worker_cpu']:.1f} / {r['busiest']:.1f} | {r['client_cpu']:.1f} | "
                    f"{r['peak_mb']:.0f} | {r['client_mb']:.0f} | {r['same_support']} / "
                    f"{r['same_ranking']} | {r['max_dw']:.1e} | {r['status']} | {_load()} |")
            print(lines[-1], flush=True)
        write_results("scale_dask_ranking_qpfs", "\n".join(lines) + "\n", args.quick,
                      section="QPFS")
    if args.only in (None, "rankrc"):
        lines = ["# RankRC on Dask (N rows, 0.1 % rare) against rank-tr in memory on the "
                 "first 10^5 rows", "", head, f" hessian_fraction = {args.fraction:g}; the "
                 f"fit's own time_limit is half the run limit (checked between iterations: a "
                 "fit stopped by it reports user_limit and the AUC of the point reached)."
                 + (f" The basis is a seeded sample of {args.basis_size} rare rows (the model "
                    "is RankRC with that basis, every pair in the loss; `basis / m+`)."
                    if args.basis_size else ""), "",
                 "| N | basis / m+ | Dask fit (s) | iterations / passes | rel. gradient | "
                 "status | "
                 "test AUC (Dask, N rows) | test AUC (in memory, 10^5 rows, m+) | "
                 "in-memory fit (s) | worker CPU s (sum / busiest) | client CPU s | "
                 "peak worker RSS (MB) | client RSS (MB) | load |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        r = _child(["rankrc", str(n), str(args.fraction), str(args.limit / 2),
                    str(args.basis_size), str(args.block)], args.limit)
        if "dask_s" not in r:
            lines.append(f"| {n:,} | | {r} | | | | | | | | | | | {_load()} |")
        else:
            lines.append(
                f"| {n:,} | {r['basis']} / {r['m_pos']} | {r['dask_s']:.1f} | "
                f"{r['iterations']} / "
                f"{r['passes']} | {r['relgrad']:.1e} | {r['status']} | {r['auc']:.4f} | "
                f"{r['auc_mem']:.4f} ({r['m_pos_sample']}) | {r['memory_s']:.1f} | "
                f"{r['worker_cpu']:.1f} / {r['busiest']:.1f} | {r['client_cpu']:.1f} | "
                f"{r['peak_mb']:.0f} | {r['client_mb']:.0f} | {_load()} |")
        print(lines[-1], flush=True)
        write_results("scale_dask_ranking_qpfs", "\n".join(lines) + "\n", args.quick,
                      section=f"RankRC N={n:,}" + (f", basis {args.basis_size} sampled rare"
                                                   if args.basis_size else ""))


if __name__ == "__main__":
    main()
