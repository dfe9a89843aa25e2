"""Learners on data beyond one machine's memory: the linear SVM on Dask row blocks.

The data (d = 20, a noisy linear rule with a bias) are generated lazily in row blocks and
never held whole anywhere: every round of the distributed fit regenerates its blocks on the
workers (``dask.array.random``, seeded, so every round sees the same rows) and only
d-vectors and scalars reach the client. ``SVMClassifier(kernel="linear", solver="dcd")``
fits the Dask arrays (CoCoA+ rounds of dual coordinate ascent, certified by the block-wise
duality gap, :mod:`conicml.estimators._dask_linear`); the reference is the same learner
fitted in memory on a 10^5-row sample. Both are scored on the same 10^5 held-out rows. A
fresh ``LocalCluster`` (2 worker processes x 1 thread, loopback only) per size, so the
recorded peak RSS of each worker is that run's; each fit has a time limit (the solver's
``time_limit``: when it is reached the model keeps its best certified point and the row
says ``user_limit`` with its gap).

Usage: ``python benchmarks/scale_dask.py [--quick] [--sizes 1e6 1e7] [--time-limit S]``
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, write_results  # noqa: E402

from conicml.estimators.svm import SVMClassifier  # noqa: E402

D = 20
W_TRUE = np.linspace(-1.0, 1.0, D)
BIAS, NOISE, C = 0.5, 1.0, 1.0


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def lazy_data(n: int, block: int, seed: int):
    """A noisy linear rule in 20-D, generated block by block (nothing materialised)."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((n, D), chunks=(block, D))
    noise = rng.standard_normal(n, chunks=block)
    y = da.where(X @ W_TRUE + BIAS + NOISE * noise > 0, 1, 0)
    return X, y


def in_memory(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = lazy_data(n, n, seed)
    return X.compute(scheduler="sync"), y.compute(scheduler="sync")


def run(n: int, block: int, time_limit: float, X_test, y_test, persist: bool,
        tol: float) -> dict:
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       memory_limit="6GiB")
    with distributed.Client(cluster) as client:
        X, y = lazy_data(n, block, seed=1)
        cpu0 = client.run(_cpu_s)
        start = time.perf_counter()
        if persist:  # generated once, kept in the workers' memory: the rounds read it
            X, y = X.persist(), y.persist()
            distributed.wait([X, y])
        t_persist = time.perf_counter() - start
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a time-limited fit warns; the row says so
            model = SVMClassifier(C=C, solver="dcd", solver_options={
                "tol": tol, "time_limit": time_limit, "max_iter": 10_000}).fit(X, y)
        t_fit = time.perf_counter() - start
        cpu = {w: c - cpu0[w] for w, c in client.run(_cpu_s).items()}
        peaks = client.run(_peak_rss_mb)
        # predict on a dask array of held-out rows returns a dask array
        import dask.array as da

        pred = model.predict(da.from_array(X_test, chunks=(25_000, D)))
        dask_pred_ok = bool(isinstance(pred, da.Array)
                            and np.array_equal(pred.compute(), model.predict(X_test)))
    cluster.close()
    sol = model.solution_
    t_rounds = t_fit - (t_persist if persist else 0.0)
    return {"n": n, "block": block, "fit_s": t_fit, "persist_s": t_persist if persist else None,
            "round_s": t_rounds / max(1, sol.iterations + 1), "status": sol.status.value,
            "gap": sol.residuals.gap, "rounds": sol.iterations, "blocks": sol.extras["blocks"],
            "acc": model.score(X_test, y_test), "peak_mb": max(peaks.values()),
            "worker_cpu_s": sum(cpu.values()), "client_mb": _peak_rss_mb(),
            "dask_predict": dask_pred_ok,
            "load": "/".join(f"{x:.1f}" for x in os.getloadavg())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 2 x 10^5 only")
    parser.add_argument("--sizes", nargs="*", default=None, help="e.g. --sizes 1e6 1e7")
    parser.add_argument("--blocks", type=int, default=2,
                        help="row blocks per fit (CoCoA+ divides each local step by it)")
    parser.add_argument("--lazy", action="store_true",
                        help="regenerate the blocks every round instead of persisting them")
    parser.add_argument("--tol", type=float, default=1e-3, help="relative duality gap")
    parser.add_argument("--section", default=None,
                        help="record as a section of the results file (a variant)")
    parser.add_argument("--time-limit", type=float, default=120.0, help="per fit, seconds")
    args = parser.parse_args()
    sizes = [200_000] if args.quick else [int(float(n)) for n in (args.sizes or ["1e6"])]
    X_test, y_test = in_memory(100_000, seed=2)
    # the reference: the same learner in memory on a 10^5-row sample
    X_s, y_s = in_memory(100_000, seed=3)
    start = time.perf_counter()
    ref = SVMClassifier(C=C, solver="dcd", solver_options={"tol": 1e-3}).fit(X_s, y_s)
    t_ref = time.perf_counter() - start
    acc_ref = ref.score(X_test, y_test)
    print(f"in memory, 10^5 sample: {t_ref:.1f} s, accuracy {acc_ref:.4f}, "
          f"{ref.solution_.status.value}", flush=True)
    rows = []
    for n in sizes:
        r = run(n, -(-n // args.blocks), args.time_limit, X_test, y_test, not args.lazy,
                args.tol)
        rows.append(r)
        print(f"N={n:>11,}: fit {r['fit_s']:.1f} s, {r['status']} gap {r['gap']:.2g} after "
              f"{r['rounds']} rounds, accuracy {r['acc']:.4f}, peak worker RSS "
              f"{r['peak_mb']:.0f} MB, worker CPU {r['worker_cpu_s']:.1f} s, "
              f"load {r['load']}", flush=True)
    lines = [
        "# Linear SVM on Dask: lazily generated row blocks, dcd (CoCoA+ rounds)",
        "",
        f"Machine: {machine()}. 2 worker processes x 1 thread (LocalCluster, loopback), "
        f"d = {D}, labels sign(x.w + {BIAS} + {NOISE} noise), C = {C}, tol {args.tol:g} on "
        f"the relative duality gap, time limit {args.time_limit:g} s per fit (the solver's "
        "time_limit, checked between rounds). "
        + ("Every round regenerates the blocks on the workers. " if args.lazy else
           "The lazily generated blocks are persisted once on the workers (generation "
           "included in fit time, `persist` column) and every round reads them. ")
        + "Reference: the same learner "
        f"(`dcd`, in memory) on a 10^5-row sample: {t_ref:.1f} s, accuracy "
        f"{acc_ref:.4f} ({ref.solution_.status.value}). Accuracy on the same 10^5 held-out "
        "rows; `dask predict` checks that predict on a dask array returns the in-memory "
        "labels; peak RSS is the largest worker's (a fresh cluster per N); worker CPU is "
        "the two workers' user + system time; load is the 1/5/15-minute load average when "
        "the row finished.",
        "",
        "| N | blocks | fit (s) | persist (s) | s / round | status | gap | rounds | accuracy "
        "| vs sample fit (points) | worker CPU s | peak worker RSS (MB) | client RSS (MB) "
        "| dask predict | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        persist_s = "-" if r["persist_s"] is None else f"{r['persist_s']:.1f}"
        lines.append(f"| {r['n']:,} | {r['blocks']} | {r['fit_s']:.1f} | {persist_s} | "
                     f"{r['round_s']:.2f} | {r['status']} | "
                     f"{r['gap']:.2g} | {r['rounds']} | {r['acc']:.4f} | "
                     f"{100 * (r['acc'] - acc_ref):+.2f} | {r['worker_cpu_s']:.1f} | "
                     f"{r['peak_mb']:.0f} | {r['client_mb']:.0f} | {r['dask_predict']} | "
                     f"{r['load']} |")
    out = write_results("scale_dask", "\n".join(lines) + "\n", args.quick,
                        section=args.section)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
