"""The SMO family before and after a change of the solver code, timed in one run.

Each row (the SVM rows of ``benchmarks/suite.py`` through ``cm.solve(prog, "smo")``, both
engines, plus its CBC and CBOR rows, ``smo-or`` on both SVOR variants and ``simplex-smo``
on a QPFS simplex QP) is solved in child processes whose ``PYTHONPATH`` points at one of
two source trees: ``--before`` (a checkout of the reference commit, e.g.
``git worktree add /tmp/before <commit>``) and this checkout. The two trees alternate,
``--repeats`` times each; every child loads the compiled code on a warm-up instance
(not timed) and times the best of ``--inner`` solves. Reported: best time per tree,
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
def _svm(cm, name: str, n: int, C: float):
    if name in ("twonorm", "ringnorm"):
        X, y = getattr(cm.datasets, name)(n, dim=20, seed=0)
    else:
        X, y = cm.datasets.load(name)
    X = (X - X.mean(0)) / X.std(0)
    return cm.formulations.svm.soft_margin(X, y, C=C, kernel="rbf", form="dual")


def _svm_warm(cm):
    Xw, yw = cm.datasets.twonorm(50, dim=2, seed=0)
    return cm.formulations.svm.soft_margin(Xw, yw, C=1.0, kernel="rbf", form="dual")


def _cbc(cm, k: int):
    X, y = cm.datasets.twonorm(20 * k, dim=20, seed=1)
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


def child(row: str, inner: int) -> dict:
    """Solve ``row`` with the conicml on PYTHONPATH: warm-up, then the best of ``inner``."""
    import conicml as cm

    solver, options, (build, *args) = ROWS[row]
    warm_build, *warm_args = WARM[solver]
    cm.solve(warm_build(cm, *warm_args), solver, **options)  # compiled-code load
    prog = build(cm, *args)
    best = None
    for _ in range(inner):
        start = time.perf_counter()
        sol = cm.solve(prog, solver, **options)
        wall = time.perf_counter() - start
        best = wall if best is None else min(best, wall)
    return {"wall": best, "status": sol.status.value, "iterations": sol.iterations,
            "objective": sol.objective, "certificate": sol.residuals.max(),
            "conicml": str(Path(cm.__file__).parent.parent)}


def _spawn(tree: Path, row: str, inner: int, limit: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    try:
        out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", row,
                              "--inner", str(inner)], env=env, capture_output=True,
                             text=True, timeout=limit, check=True)
    except subprocess.TimeoutExpired:
        return {"wall": float("inf"), "status": "TIMEOUT"}
    except subprocess.CalledProcessError as exc:
        return {"wall": float("inf"), "status": "ERROR " + exc.stderr.strip()[-200:]}
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(res["conicml"]).resolve() != tree.resolve():
        raise RuntimeError(f"child imported conicml from {res['conicml']}, not {tree}")
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the reference source tree")
    parser.add_argument("--quick", action="store_true", help="three rows (smoke run)")
    parser.add_argument("--repeats", type=int, default=3, help="child runs per tree and row")
    parser.add_argument("--inner", type=int, default=2, help="timed solves per child")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per child")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.inner)))
        return
    sys.path.insert(0, str(HERE))
    from _harness import write_results

    before, after = args.before.resolve(), HERE.parent
    commit = subprocess.run(["git", "-C", str(before), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    rows = QUICK if args.quick else list(ROWS)
    load0, t0 = os.getloadavg(), time.perf_counter()
    lines = [f"Before: {before} at {commit}; after: {after} (this commit). Best of "
             f"{args.repeats} child runs per tree, alternating before/after, each the best "
             f"of {args.inner} solves after a warm-up solve (compiled-code load not timed); "
             "time = cm.solve wall time (certificate included). Ratio = after / before "
             "(above ~1.05: a regression).", "",
             "| row | before [s] | after [s] | ratio | status (before / after) | "
             "iterations (before / after) | objective (before / after) |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        best = {"before": None, "after": None}
        for _ in range(args.repeats):
            for label, tree in (("before", before), ("after", after)):
                res = _spawn(tree, row, args.inner, args.limit)
                if best[label] is None or res["wall"] < best[label]["wall"]:
                    best[label] = res
        b, a = best["before"], best["after"]
        ratio = a["wall"] / b["wall"] if np.isfinite(b["wall"]) else float("nan")
        line = (f"| {row} | {b['wall']:.4f} | {a['wall']:.4f} | {ratio:.3f} | "
                f"{b['status']} / {a['status']} | {b.get('iterations')} / "
                f"{a.get('iterations')} | {b.get('objective', float('nan')):.10g} / "
                f"{a.get('objective', float('nan')):.10g} |")
        print(line, flush=True)
        lines.append(line)
    lines += ["", f"Load average at the start {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}, "
              f"at the end {' / '.join(f'{v:.2f}' for v in os.getloadavg())} (1 / 5 / 15 min); "
              f"total {time.perf_counter() - t0:.0f} s."]
    print(write_results("driver_regression", "\n".join(lines), quick=args.quick))


if __name__ == "__main__":
    main()
