"""The SMO family before and after a change of the solver code, timed in one run.

Each row (the SVM rows of ``benchmarks/suite.py`` through ``cm.solve(prog, "smo")``, both
engines, plus its CBC and CBOR rows, ``smo-or`` on both SVOR variants and ``simplex-smo``
on a QPFS simplex QP) is solved in child processes whose ``PYTHONPATH`` points at one of
two source trees: ``--before`` (a checkout of the reference commit, e.g.
``git worktree add /tmp/before <commit>``) and this checkout. The two trees alternate,
one child process each, ``--repeats`` times; a child solves every row (up to ``--inner``
times, fewer once 2 s are spent) after one warm-up solve per solver and engine (the
compiled code's load, not timed). Reported: the best wall and CPU time per tree and row,
the ratio after / before (above ~1.05: a regression), and both runs' status, iterations
and objective (the iterates must be the same).

Run ``python benchmarks/driver_regression.py --before /tmp/before [--quick]``; writes
``benchmarks/results/driver_regression.md``.
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

HERE = Path(__file__).resolve().parent


# -- instances and one timed row (run in the child, against the tree on PYTHONPATH) -------
def _generate(cm, name: str, n: int, dim: int, seed: int):
    """``cm.datasets.<name>`` with the seed under its current name (``seed`` before 0.2)."""
    try:
        return getattr(cm.datasets, name)(n, dim=dim, random_state=seed)
    except TypeError:  # a tree from before the rename
        return getattr(cm.datasets, name)(n, dim=dim, seed=seed)


def _svm(cm, name: str, n: int, C: float):
    if name in ("twonorm", "ringnorm"):
        X, y = _generate(cm, name, n, 20, 0)
    else:
        X, y = cm.datasets.load(name)
    X = (X - X.mean(0)) / X.std(0)
    return cm.formulations.svm.soft_margin(X, y, C=C, kernel="rbf", form="dual")


def _svm_warm(cm):
    Xw, yw = _generate(cm, "twonorm", 50, 2, 0)
    return cm.formulations.svm.soft_margin(Xw, yw, C=1.0, kernel="rbf", form="dual")


def _cbc(cm, k: int):
    X, y = _generate(cm, "twonorm", 20 * k, 20, 1)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=k // 2,
                                           random_state=0)
    return cm.formulations.cbc.cbc(clusters, C=1.0, accuracy=0.7, form="dual")


def _cbor(cm, kernel: str, k: int):
    rng = np.random.default_rng(0)  # benchmarks/cbor_scale.py's clusters_for(k)
    X = rng.normal(size=(k, 10))
    u = rng.normal(size=10)
    u /= np.linalg.norm(u)
    z = X @ u + 0.3 * rng.normal(size=k)
    ranks = 1 + np.searchsorted(np.quantile(z, [0.2, 0.4, 0.6, 0.8]), z)
    clusters = cm.ClusterMoments(X, np.zeros(k), np.ones(k), ranks)
    return cm.formulations.ordinal.cbor(clusters, W=3.0, accuracy=0.5, kernel=kernel,
                                        gamma=0.1, form="dual")


def _svor(cm, variant: str, n: int):
    from conicml.formulations.svor_dual import svor_dual
    from conicml.formulations.svor_implicit import svorim_dual

    X, y = cm.datasets.load_ordinal("california_housing", n_ranks=10)
    idx = np.random.default_rng(0).permutation(y.size)[:n]
    X = (X[idx] - X[idx].mean(axis=0)) / X[idx].std(axis=0)
    build = svor_dual if variant == "explicit" else svorim_dual
    return build(X, y[idx], C=10.0, kernel="rbf", gamma=0.2)


def _simplex(cm, m: int, k: int):
    rng = np.random.default_rng(0)  # benchmarks/qpfs_speed.py's _instance(m, k)
    L, F = rng.normal(size=(m, k)) / np.sqrt(k), rng.uniform(0, 1, m)
    return cm.formulations.qpfs.simplex_qp(L, F, 0.5)


#: name -> (solver, options, instance builder and its arguments, warm-up instance)
ROWS = {
    "smo twonorm n=5000 C=1": ("smo", {"tol": 1e-3}, (_svm, "twonorm", 5000, 1.0)),
    "smo twonorm n=5000 C=100": ("smo", {"tol": 1e-3}, (_svm, "twonorm", 5000, 100.0)),
    "smo ringnorm n=5000 C=1": ("smo", {"tol": 1e-3}, (_svm, "ringnorm", 5000, 1.0)),
    "smo ringnorm n=5000 C=100": ("smo", {"tol": 1e-3}, (_svm, "ringnorm", 5000, 100.0)),
    "smo abalone7 C=100": ("smo", {"tol": 1e-3}, (_svm, "abalone7", 0, 100.0)),
    "smo mammography C=100": ("smo", {"tol": 1e-3}, (_svm, "mammography", 0, 100.0)),
    "smo twonorm n=5000 C=1 numpy": ("smo", {"tol": 1e-3, "engine": "numpy"},
                                     (_svm, "twonorm", 5000, 1.0)),
    "smo twonorm n=5000 C=100 numpy": ("smo", {"tol": 1e-3, "engine": "numpy"},
                                       (_svm, "twonorm", 5000, 100.0)),
    "cbc-smo linear k=400": ("cbc-smo", {}, (_cbc, 400)),
    "cbor-smo linear k=250": ("cbor-smo", {}, (_cbor, "linear", 250)),
    "cbor-smo rbf k=500": ("cbor-smo", {}, (_cbor, "rbf", 500)),
    "smo-or explicit n=1000": ("smo-or", {"tol": 1e-3}, (_svor, "explicit", 1000)),
    "smo-or implicit n=1000": ("smo-or", {"tol": 1e-3}, (_svor, "implicit", 1000)),
    "simplex-smo m=20000 k=100": ("simplex-smo", {}, (_simplex, 20000, 100)),
}
QUICK = ["smo twonorm n=5000 C=1", "cbc-smo linear k=400", "cbor-smo linear k=250"]
WARM = {"smo": (_svm_warm,), "cbc-smo": (_cbc, 20), "cbor-smo": (_cbor, "linear", 30),
        "smo-or": (_svor, "explicit", 60), "simplex-smo": (_simplex, 20, 3)}


def child(rows: list[str], inner: int) -> dict:
    """Solve ``rows`` with the conicml on PYTHONPATH: per solver one warm-up solve (the
    compiled code's load, not timed), then per row the best of ``inner`` solves."""
    import conicml as cm

    results, warmed = {}, set()
    for row in rows:
        solver, options, (build, *args) = ROWS[row]
        if (solver, options.get("engine")) not in warmed:
            warm_build, *warm_args = WARM[solver]
            cm.solve(warm_build(cm, *warm_args), solver, **options)
            warmed.add((solver, options.get("engine")))
        prog = build(cm, *args)
        walls, cpus = [], []
        while len(walls) < inner and (not walls or sum(walls) < 2.0):
            start, cpu = time.perf_counter(), time.process_time()
            sol = cm.solve(prog, solver, **options)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        results[row] = {"wall": min(walls), "cpu": min(cpus), "status": sol.status.value,
                        "iterations": sol.iterations, "objective": sol.objective}
    return {"rows": results, "conicml": str(Path(cm.__file__).parent.parent)}


def _spawn(tree: Path, rows: list[str], inner: int, limit: float) -> dict:
    """One child process on ``tree`` for all ``rows``; a timeout or an error marks them."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    failed = None
    try:
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child",
                              json.dumps(rows), "--inner", str(inner)], env=env,
                             capture_output=True, text=True, timeout=limit, check=True)
    except subprocess.TimeoutExpired:
        failed = "TIMEOUT"
    except subprocess.CalledProcessError as exc:
        failed = "ERROR " + exc.stderr.strip()[-200:]
    if failed is not None:
        return {row: {"wall": float("inf"), "cpu": float("inf"), "status": failed}
                for row in rows}
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(res["conicml"]).resolve() != tree.resolve():
        raise RuntimeError(f"child imported conicml from {res['conicml']}, not {tree}")
    return res["rows"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the reference source tree")
    parser.add_argument("--quick", action="store_true", help="three rows (smoke run)")
    parser.add_argument("--repeats", type=int, default=3, help="child runs per tree")
    parser.add_argument("--inner", type=int, default=3,
                        help="timed solves per child and row (fewer once 2 s are spent)")
    parser.add_argument("--limit", type=float, default=240.0, help="seconds per child")
    parser.add_argument("--only", help="only the rows whose name starts with this (a section "
                        "of the results file)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child), args.inner)))
        return
    sys.path.insert(0, str(HERE))
    from _harness import write_results

    before, after = args.before.resolve(), HERE.parent
    commit = subprocess.run(["git", "-C", str(before), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    rows = QUICK if args.quick else list(ROWS)
    if args.only:
        rows = [row for row in rows if row.startswith(args.only)]
    load0, t0 = os.getloadavg(), time.perf_counter()
    lines = [f"Before: {before} at {commit}; after: {after} (this commit). Best of "
             f"{args.repeats} child processes per tree, alternating before/after, each "
             f"solving every row (best of {args.inner} solves) after one warm-up solve per "
             "solver and engine (compiled-code load not timed); "
             "time = cm.solve wall time and CPU time of the process (certificate included; "
             "the CPU time is the steadier number on a loaded machine). Ratio = after / "
             "before (above ~1.05: a regression).", "",
             "| row | before wall [s] | after wall [s] | wall ratio | before CPU [s] | "
             "after CPU [s] | CPU ratio | status (before / after) | "
             "iterations (before / after) | objective (before / after) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    best: dict[str, dict] = {"before": {}, "after": {}}
    for _ in range(args.repeats):  # the trees alternate, one child per tree and repeat
        for label, tree in (("before", before), ("after", after)):
            for row, res in _spawn(tree, rows, args.inner, args.limit).items():
                old = best[label].setdefault(row, res)
                for field in ("wall", "cpu"):
                    old[field] = min(old[field], res[field])
    for row in rows:
        b, a = best["before"][row], best["after"][row]
        line = (f"| {row} | {b['wall']:.4f} | {a['wall']:.4f} | {a['wall'] / b['wall']:.3f} | "
                f"{b['cpu']:.4f} | {a['cpu']:.4f} | {a['cpu'] / b['cpu']:.3f} | "
                f"{b['status']} / {a['status']} | {b.get('iterations')} / "
                f"{a.get('iterations')} | {b.get('objective', float('nan')):.10g} / "
                f"{a.get('objective', float('nan')):.10g} |")
        print(line, flush=True)
        lines.append(line)
    lines += ["", f"Load average at the start {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}, "
              f"at the end {' / '.join(f'{v:.2f}' for v in os.getloadavg())} (1 / 5 / 15 min); "
              f"total {time.perf_counter() - t0:.0f} s."]
    section = f"rows {args.only!r}, {args.repeats} repeats" if args.only else None
    print(write_results("driver_regression", "\n".join(lines), quick=args.quick,
                        section=section))


if __name__ == "__main__":
    main()
