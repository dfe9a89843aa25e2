"""One table of speed ratios: every specialized solver against its anchor, side by side.

Each row is one program solved by the specialized solver and by its anchor in the same
run (child processes with a time limit; a run over the limit is recorded as TIMEOUT).
Times are totals (everything from the program to the solution: cvxpy compilation
included for the backends) and the best of ``--repeats`` runs; every row states the
solver's tolerance and the certificate it reached, so speed never comes from a looser
stop. Peak RSS of the child process (MB) is reported per run.

Rows:

* ellipsoid distance (specified rates, primal kind), d in {50, 200, 500}, covariance
  condition numbers 1 and 1e6: ``ellipsoid-newton`` and ``lin-han`` vs Clarabel;
* RBF SVM on twonorm / ringnorm (n = 5000, 20000), mammography (11 183), abalone7
  (4 177) and breast cancer, C in {1, 100}: ``SVMClassifier(solver="smo").fit`` end to end
  (validation, program, solve, recomputed certificate, decoding) vs scikit-learn
  ``SVC.fit`` (LIBSVM), both at tol 1e-3; ``smo`` is run twice: at its defaults (compiled
  loop when numba is installed, polishing only when the certificate's gap, estimated
  from the gradient, exceeds ``gap_tol`` 9e-4) and with ``gap_tol=None``
  (LIBSVM's own stop, no polishing; at C = 100 its point can fail the certificate). The
  first compiled solve in a process loads numba and its on-disk compiled code; the
  child does that on a 2000-point fit at C = 100 (one that shrinks and gathers columns:
  each compiled function loads at its first call) before the clock starts and the row
  records it. The
  note gives the loop's time and the certificate's (recomputed once more after the fit);
  the "svm" group with `--quick` is breast cancer only.
* MPM and BMPM (d = 200): ``rosen`` and ``dinkelbach`` vs Clarabel;
* CBC linear dual (k = 400 clusters): ``cbc-smo`` vs Clarabel;
* CBOR dual (ordinal regression; linear k = 250, rbf k = 500 clusters, the instances of
  ``benchmarks/cbor_scale.py``): ``cbor-smo`` vs Clarabel and ECOS (linear: its linear
  path, compiled when numba is installed; the child loads numba on a 30-cluster program
  before the clock starts and the row records it; ``benchmarks/cbor_linear.py`` has the
  in-process table at k = 25..5000).

Usage: ``python benchmarks/suite.py [--quick] [--limit SECONDS] [--repeats R] [--groups G]
[--svm-rows NAME[:N],...] [--section NAME]``
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

import conicml as cm  # noqa: E402


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# -- instances (module-level builders: they run inside the child) ------------------------
def rates_instance(d: int, condition: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = max(2 * d, 400)
    scales = np.geomspace(1.0, condition ** -0.5, d)
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    Xp = (rng.normal(size=(n, d)) * scales) @ Q.T + 2.0
    Xn = (rng.normal(size=(n, d)) * scales[::-1]) @ Q.T - 2.0
    X, y = np.r_[Xp, Xn], np.r_[np.ones(n), -np.ones(n)]
    return cm.formulations.specified_rates.specified_rates(X, y, 0.3, 0.3, ridge=1e-9)


def svm_data(name: str, n: int):
    if name in ("twonorm", "ringnorm"):
        X, y = getattr(cm.datasets, name)(n, dim=20, random_state=0)
    else:
        X, y = cm.datasets.load(name)
    return (X - X.mean(0)) / X.std(0), y


def minimax_instance(family: str, d: int):
    rng = np.random.default_rng(d)
    n = 3 * d
    A = rng.normal(size=(d, d)) / np.sqrt(d)
    X = np.r_[rng.normal(size=(n, d)) @ A + 0.3, rng.normal(size=(n, d)) @ A.T - 0.3]
    y = np.r_[np.ones(n), -np.ones(n)]
    if family == "mpm":
        return cm.formulations.minimax.mpm(X, y)
    return cm.formulations.minimax.bmpm(X, y, 0.5)


def cbc_instance(k: int):
    X, y = cm.datasets.twonorm(20 * k, dim=20, random_state=1)
    clusters = cm.ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=k // 2,
                                           random_state=0)
    return cm.formulations.cbc.cbc(clusters, C=1.0, accuracy=0.7, form="dual")


# -- runs --------------------------------------------------------------------------------
def run_program(builder: str, args: tuple, solver: str, options: dict) -> dict:
    prog = globals()[builder](*args)
    start = time.perf_counter()
    sol = cm.solve(prog, solver, **options)
    wall = time.perf_counter() - start
    return {"wall": wall, "status": sol.status.value, "objective": sol.objective,
            "certificate": sol.residuals.max(), "mb": _peak_mb()}


def run_smo(name: str, n: int, C: float, options: dict | None = None) -> dict:
    """``SVMClassifier(solver="smo").fit`` end to end (validation, program, solve,
    certificate, decoding), after a warm-up; the note records the loop's time and the
    certificate's, recomputed once more after the fit with no product kept."""
    from conicml.estimators import SVMClassifier
    from conicml.formulations import svm as svm_formulation

    X, y = svm_data(name, n)
    options = dict(options or {})
    # warm-up: numba's import and compiled-code load, on a fit long enough to shrink and
    # gather columns (each compiled function is loaded at its first call)
    start = time.perf_counter()
    Xw, yw = cm.datasets.twonorm(2000, dim=20, random_state=1)
    SVMClassifier(kernel="rbf", C=100.0, solver="smo", solver_options=options).fit(Xw, yw)
    warm = time.perf_counter() - start
    start = time.perf_counter()
    clf = SVMClassifier(kernel="rbf", C=C, gamma="scale", solver="smo",
                        solver_options={"tol": 1e-3, **options}).fit(X, y)
    wall = time.perf_counter() - start
    sol = clf.solution_
    svm_formulation._LAST_PRODUCT = None  # the certificate alone, from the program's data
    start = time.perf_counter()
    clf.program_.certify(sol)
    cert = time.perf_counter() - start
    note = (f"SVMClassifier.fit; {sol.extras['engine']} loop (load {warm:.2f} s, not "
            f"counted), {sol.iterations} iterations, final tol {sol.extras['polish_tol']:.0e}"
            f", loop {sol.solve_time:.3f} s, certificate {cert:.3f} s, "
            f"{clf.support_.size} support vectors")
    return {"wall": wall, "status": sol.status.value, "objective": sol.objective,
            "certificate": sol.residuals.max(), "mb": _peak_mb(), "note": note}


def run_svc(name: str, n: int, C: float) -> dict:
    from sklearn.svm import SVC

    X, y = svm_data(name, n)
    start = time.perf_counter()
    svc = SVC(C=C, kernel="rbf", gamma="scale", tol=1e-3).fit(X, y)
    wall = time.perf_counter() - start
    return {"wall": wall, "status": "fitted", "objective": float("nan"),
            "certificate": float("nan"), "mb": _peak_mb(),
            "note": f"{int(svc.n_iter_[0])} iterations, {svc.support_.size} support vectors"}


def cbor_instance(kernel: str, k: int):
    from cbor_scale import clusters_for

    return cm.formulations.ordinal.cbor(clusters_for(k), W=3.0, accuracy=0.5, kernel=kernel,
                                        gamma=0.1, form="dual")


def run_cbor_smo(kernel: str, k: int) -> dict:
    """cbor-smo after a warm-up (numba's import and compiled-code load, not counted)."""
    start = time.perf_counter()
    cm.solve(cbor_instance("linear", 30), "cbor-smo")
    warm = time.perf_counter() - start
    prog = cbor_instance(kernel, k)
    start = time.perf_counter()
    sol = cm.solve(prog, "cbor-smo")
    wall = time.perf_counter() - start
    note = (f"{sol.extras['method']} path, {sol.extras['engine']} loop (load {warm:.2f} s, "
            f"not counted), {sol.iterations} iterations")
    return {"wall": wall, "status": sol.status.value, "objective": sol.objective,
            "certificate": sol.residuals.max(), "mb": _peak_mb(), "note": note}


def best_of(fn, args: tuple, limit: float, repeats: int) -> tuple[str, dict | None]:
    best = None
    for _ in range(repeats):
        state, res, _ = run_with_limit(fn, args, limit)
        if state != "ok":
            return state, res if state == "error" else None
        if best is None or res["wall"] < best["wall"]:
            best = res
    return "ok", best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smallest row of each group")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--groups", default="ellipsoid,svm,svm-large,minimax,cbc,cbor",
                        help="comma-separated subset of ellipsoid, svm, svm-large (n = 20000), "
                        "minimax, cbc, cbor")
    parser.add_argument("--svm-rows", default=None,
                        help="comma-separated subset of the svm rows, as name or name:n "
                             "(e.g. abalone7,twonorm:20000), so that a loaded machine can "
                             "re-measure them in sections of a few minutes each")
    parser.add_argument("--section", default=None,
                        help="write the run as this section of the results file (a subset "
                             "of the groups re-measured), keeping the main run")
    args = parser.parse_args()
    chosen = set(args.groups.split(","))
    groups = []
    dims = [] if "ellipsoid" not in chosen else [50] if args.quick else [50, 200, 500]
    for d in dims:
        for cond in (1.0, 1e6):
            groups.append((f"ellipsoid distance d={d}, cond={cond:g}", "clarabel",
                           [(s, run_program, ("rates_instance", (d, cond), s, o))
                            for s, o in (("clarabel", {}), ("ellipsoid-newton", {}),
                                         ("lin-han", {}))],
                           "ellipsoid-newton tol 1e-10 (relative certified gap); lin-han "
                           "tol 1e-10 (angle)"))
    svm_rows = ([] if "svm" not in chosen else [("breast_cancer", 569)] + ([] if args.quick else [
        ("twonorm", 5000), ("ringnorm", 5000), ("abalone7", 4177), ("mammography", 11183)]))
    if "svm-large" in chosen and not args.quick:
        svm_rows += [("twonorm", 20000), ("ringnorm", 20000)]
    if args.svm_rows:
        wanted = set(args.svm_rows.split(","))
        svm_rows = [(name, n) for name, n in svm_rows
                    if name in wanted or f"{name}:{n}" in wanted]
    for name, n in svm_rows:
        for C in (1.0, 100.0):
            runs = [("sklearn SVC", run_svc, (name, n, C)),
                    ("smo", run_smo, (name, n, C)),
                    ("smo gap_tol=None", run_smo, (name, n, C, {"gap_tol": None}))]
            if (name, n) == ("twonorm", 5000):
                runs.append(("smo engine=numpy", run_smo, (name, n, C, {"engine": "numpy"})))
            groups.append((f"RBF SVM {name} n={n} C={C:g}", "sklearn SVC", runs,
                           "both at the LIBSVM tolerance 1e-3 on m(alpha) - M(alpha); smo "
                           "polishes only while the certificate's relative gap > 9e-4 "
                           "unless gap_tol=None"))
    for family in ("mpm", "bmpm") if "minimax" in chosen else ():
        d = 50 if args.quick else 200
        groups.append((f"{family.upper()} d={d}", "clarabel",
                       [(s, run_program, ("minimax_instance", (family, d), s, {}))
                        for s in ("clarabel", "rosen", "dinkelbach")],
                       "rosen tol 1e-12 (relative change), dinkelbach tol 1e-10 on F"))
    for k in [] if "cbc" not in chosen else [100] if args.quick else [400]:
        groups.append((f"CBC linear dual k={k}", "clarabel",
                       [(s, run_program, ("cbc_instance", (k,), s, {}))
                        for s in ("clarabel", "ecos", "cbc-smo")],
                       "cbc-smo tol 1e-6 on the KKT violation"))
    cbor_rows = [("linear", 100)] if args.quick else [("linear", 250), ("rbf", 500)]
    for kernel, k in cbor_rows if "cbor" in chosen else ():
        groups.append((f"CBOR {kernel} dual k={k}", "clarabel",
                       [(s, run_program, ("cbor_instance", (kernel, k), s, {}))
                        for s in ("clarabel", "ecos")]
                       + [("cbor-smo", run_cbor_smo, (kernel, k))],
                       "cbor-smo tol 1e-6 on the KKT violation"))
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    lines = [
        "# Specialized solvers against their anchors",
        "",
        f"Machine: {machine()}; load average at the start {load_start[0]:.1f} / "
        f"{load_start[1]:.1f} / {load_start[2]:.1f} (1 / 5 / 15 min, 2 cores). Groups: "
        f"{args.groups}. Best of {args.repeats} runs, {args.limit:g} s limit per run; "
        "total time from the program to the solution (compilation included); ratio = time / "
        "the anchor's time in the same run (below 1: faster than the anchor). Certificate: "
        "the largest residual of the solution (`Solution.residuals.max()`: conicml's "
        "recomputed certificate for every conicml solver, smo included; `nan` for sklearn, "
        "which reports none).",
        "",
        "| program | solver | status | time (s) | ratio to anchor | objective | certificate "
        "| peak RSS (MB) | tolerance |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for title, anchor, runs, tolerance in groups:
        results = {name: best_of(fn, fargs, args.limit, args.repeats)
                   for name, fn, fargs in runs}
        base = results[anchor][1]["wall"] if results[anchor][0] == "ok" else None
        for name, (state, res) in results.items():
            if state != "ok":
                lines.append(f"| {title} | {name} | {state.upper()} | - | - | - | - | - | "
                             f"{tolerance} |")
                continue
            ratio = f"{res['wall'] / base:.3g}" if base else "-"
            note = f"{tolerance}; {res['note']}" if res.get("note") else tolerance
            lines.append(f"| {title} | {name} | {res['status']} | {res['wall']:.4f} | {ratio} "
                         f"| {res['objective']:.10g} | {res['certificate']:.1e} | "
                         f"{res['mb']:.0f} | {note} |")
        print("\n".join(lines[-len(runs):]), flush=True)
    load_end = os.getloadavg()
    lines += ["", f"Run took {time.perf_counter() - t_start:.0f} s; load average at the end "
              f"{load_end[0]:.1f} / {load_end[1]:.1f} / {load_end[2]:.1f}."]
    out = write_results("suite", "\n".join(lines) + "\n", args.quick, section=args.section)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
