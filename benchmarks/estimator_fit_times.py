"""Fit time of every public estimator with its defaults at n = 1 000, 5 000, 20 000 rows.

Every class in ``conicml.estimators.__all__`` is constructed with no arguments and
fitted once on a standardised 20-dimensional data set (zero mean, unit variance per
column, from ``StandardScaler``):

* classifiers and feature selectors: ``conicml.datasets.twonorm(n, dim=20, random_state=0)``;
* ordinal regressors and rankers (``ClusterSOCPOrdinalRegressor``, ``SVOrdinalRegressorCV``,
  ``SVOrdinalRegressor``, ``RankRCRanker``): the twonorm inputs with 5 ordinal levels,
  the quintiles of a noisy linear score ``X @ beta + 0.5 e`` (``beta``, ``e`` standard
  normal, seed 1);
* ``LSVRRegressor``: the same inputs, target ``X @ beta + 0.5 e``.

Each fit runs in a fresh spawned process under a time limit (``--limit`` seconds; beyond
it the row reads TIMEOUT); the time is the wall-clock time of ``fit`` inside the child
(imports, data generation and the spawn excluded), beside its process CPU time (all
threads; on a shared machine the wall time grows with the other jobs, the CPU time much
less). A size is not run for an estimator
whose previous size timed out or failed (the row says so). Each row states the 1-min load
average read just before it. The target is <= 10 s at 5 000 rows with the defaults.

    python benchmarks/estimator_fit_times.py [--sizes 1000,5000,20000] [--limit 30]
                                             [--cpu-limit 20] [--only NAME,NAME]
                                             [--section NAME] [--references]
                                             [--positives FRACTION]

With ``--cpu-limit`` a fit is also stopped after that many CPU seconds (the row reads
TIMEOUT (> ... s CPU)): on a machine shared with other jobs the wall limit alone stops
fits that use a fraction of the target's CPU time. ``--references`` adds, for the CV
estimators run, LIBSVM's time on the same task (``GridSearchCV(SVC)``, :data:`REFERENCES`).
``--positives`` sets the positive class's share of the two-class tasks (RankRC's basis is
the rare class: twonorm's even classes are its largest basis).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

READING = """\
**Reading (recorded run of 2026-11-29 04:42-04:54 UTC, the command above, at commit
0e9f1b5, the benchmark alone on the machine: 1-min load 1.0-1.4; probe: Python loop 26.0 M
iterations/s, float64 matrix product 42 GFLOP/s, no AVX-512 -- half the 82 GFLOP/s the
probe read 20 minutes earlier).** The sections below are earlier runs, each under its own
header, kept as they were recorded.

* Within the target at 5 000 rows: 26 of 29. Over it: `FeatureScalingSVC` (11.3 s, 16.6 s
  CPU), `RankRCClassifierCV` and `SVOrdinalRegressorCV` (TIMEOUT > 30 s CPU; 57-60 s CPU in
  section `s14-after`, where LIBSVM's `GridSearchCV(SVC)` on the same task, data, folds and
  as many grid values took 53-70 s CPU, section `s14-references`).
* Section `s20-rank-svor` (2026-11-29 07:22-07:26 UTC, commit c728654, load 0.6-1.0, probe
  68 GFLOP/s), the two searches with LIBSVM's `GridSearchCV(SVC)` in the same run:
  `RankRCClassifierCV` 29.1 s (37.0 s CPU) against 48.8 s, after its whitened CG products
  read only the rows with a pair in the loss's quadratic piece (59 s -> 31-34 s in one
  process); `SVOrdinalRegressorCV` 50.8 s (64.6 s CPU) against 62.7 s (its compiled
  partner scan reads one run of variables: cold fits at C >= 10 a quarter faster, the
  search 2-5 %: its large-C path solves run shrunk, and 15 of its 69 runs are the gap's
  polish rounds). Both still over the 10 s target.
* `FeatureScalingSVC` 15.6 -> 11.3 s against the previous recorded run (2026-11-29 02:14
  UTC, commit cd49a31): its kernel blocks (product and exponential, block by block) and the
  derivatives' large products now run by row blocks on as many threads as BLAS may use
  (two here), each block one single-thread BLAS call (the fit's z, beta and b bitwise equal
  to the one-thread fit at 2 000 and 5 000 rows). In one process, three fits each,
  interleaved (04:38 UTC, load 1.0-1.1): one thread 11.6-12.3 s, two 7.9-8.1 s, the same
  CPU time. Its fits in the benchmark's own child process took 9.1 s twice at 04:40 UTC
  (13.5 s CPU) and 11.6 s at 04:55 (17.1 s CPU, section `s19-fs-row-blocks`, load 0.3): the
  same fit's CPU time varies by a quarter between runs minutes apart, which the load
  average does not see (other tenants of the host). Its first outer iteration (z = 1, every
  row a support vector, the z-block's 23 trust-region steps on all 5 000 kernel columns) is
  about half of the fit.
* Rows whose code did not change moved by -35 % .. +13 % against the previous run
  (ClusterSOCPClassifier 1.10 -> 0.76 s, RankRCClassifier 2.92 -> 2.64, SVOrdinalRegressor
  3.08 -> 3.47, KFDAClassifier 5.92 -> 5.70, SVMClassifier 0.29 -> 0.25): the host. The
  earlier run of this session (04:25 UTC, commit 28ac0fd, the row blocks dealt to the
  threads round-robin, not from one queue) had `FeatureScalingSVC` at 12.8 s (18.1 s CPU)
  and SVOrdinalRegressor at 1.99 s; not kept.
* `M4ClassifierCV` 7.7 s at 5 000 rows (7.2 s in the previous run), 18.4 s at 20 000.
* The host matters as much: section `quiet-5000` (2026-11-28 02:38 UTC, load 0.5-1.4,
  commit 9c6b8df) fitted `M4ClassifierCV` in 5.5 s and `FeatureScalingSVC` in 8.6 s, where
  the code of that commit took 19.2-19.3 s for `M4ClassifierCV` on the host of the run of
  6910c79, and the rows common to both runs took 1.3-3.1x as long there. The headers carry
  a host-speed probe since (`host speed (probe)`: a pure-Python loop rate, a float64 matrix
  product rate and whether the CPU has AVX-512, without which NumPy's float64 `exp` runs
  one element at a time).
* Sections `s17-probe` and `s17-positives` (2026-11-28 22:46-22:49 UTC, load 0.9-1.3, with
  the probe): `M4ClassifierCV` 20.3 s, `FeatureScalingSVC` 28.6 s, `KFDAClassifier` 4.6 s at
  5 000 rows. RankRC's basis is the rare class, so twonorm's even classes are its largest
  basis (~2 000 rows a fold); with 10 % positives (`--positives 0.1`, its intended regime)
  `RankRCClassifierCV` fits 5 000 rows in 6.6 s (9.0 s CPU) against 11.9 s for LIBSVM's
  `GridSearchCV(SVC)` on the same task, data, folds and grid (0.55x), `RankRCClassifier` in
  0.45 s and `RankSVMClassifier` in 8.3 s.
* Section `s18-m4-memo-fs-exp` (2026-11-29 00:53-00:55 UTC, load 1.0-1.1, probe 30.3 M
  loop iterations/s, 78 GFLOP/s, no AVX-512), after two changes: `M4ClassifierCV` 7.63 s at
  5 000 rows and 5.3 s at 1 000, as each fold's soft-M4 searches read the fixed-rho slack
  SOCPs already solved at a smaller C (~236 -> ~146 `m4-ipm` runs) and an `m4-ipm` step
  takes all its margin sums in one product (5.5 -> 3.5 ms a step at 4 000 x 20);
  `FeatureScalingSVC` 17.2 s, as the feature-scaled kernel's exponential became a
  vectorised compiled loop (0.24 -> 0.055 s for 5 000 x 5 000 without AVX-512).
* `KFDAClassifier` 5.7 s at 5 000 rows, TIMEOUT at 20 000 (an N^3 product and Cholesky:
  ~64x the 5 000-row solve).
* At 20 000 rows over 30 s CPU (or not run after a timeout at 5 000): the two CV
  searches above, FeatureScalingSVC, KFDAClassifier, SVOrdinalRegressor, RankRCClassifier,
  RankRCRanker, RankSVMClassifier (kernel learners on a 20 000-row Gram matrix or its
  factors); the others take 0.03-18.4 s (M4ClassifierCV 18.4, SVMClassifierCV 14.3,
  RFESVMSelector 11.7, ClusterSOCPClassifier 11.2, LSVRRegressor 8.3, ReliefFSelector 6.7).
* The first size of an estimator pays numba's one-time compilation in a fresh checkout:
  FeatureScalingSVC takes 2.2 s at 1 000 rows here (a worktree made for the run); in a
  checkout whose numba cache is warm a first fit of HLSVMClassifier at 1 000 rows takes
  0.6 s, a second fit in the same process 0.06 s.

**Sections `cpu-limit` and `cpu-limit-fss` (2026-11-27 14:12-14:29 UTC, load 9-16).** At
load 16-17 a re-run of the command above with its 20 s wall limit timed out fits of
0.01-2 s CPU (QPFSSelector, ReliefFSelector at n = 1 000: spawning the child and its
imports alone took ~19 s wall), so it was stopped and not recorded; the sections stop a fit
after 20 s of *CPU* instead (`--cpu-limit 20`, wall limit 150-240 s), for the 23 non-CV
estimators at 1 000 and 5 000 rows. By CPU every one is within 10 s at 5 000 rows:
FeatureScalingSVC took 11.19 s in `cpu-limit` (an earlier commit of this round) and 9.22 s
(13.8 s wall) in `cpu-limit-fss` at the final commit (load 8.2; it was > 200 s, and 14.6 s
CPU at 2 000 rows, before: the z-blocks now read only the support vectors' kernel columns, the SVM
block is solved by working sets above 2 000 rows, and the certificate skips the
O((n + d)^3) eigenvalues where the first-order number already fails). The first outer
iteration is more than half of it: at the starting scales z = 1 every row is a support vector, so
its SVM block and z-block work on all n columns. At 20 000 rows FeatureScalingSVC runs
(no n x n x d tensor) in 187 s CPU at the final commit (134 s user + 54 s system, 5 min
wall at load 6-8; 61 % in the first outer iteration), peak RSS 9.6 GB (the first
iteration's n x n blocks), hence the TIMEOUT (> 20 s CPU) row; the CV estimators and
the other estimators at 20 000 rows are in the next section.

**Section `cpu-limit-20000` (2026-11-27 14:41-14:45 UTC, load 5.9-6.7):** the 22 other
non-CV estimators at 20 000 rows, `--cpu-limit 20`. Over 10 s CPU: KFDAClassifier,
ClusterSOCPOrdinalRegressor, RankRCClassifier, RankRCRanker, RankSVMClassifier (each > 20 s
CPU) and SVOrdinalRegressor (11.3 s); the others take 0.01-8.2 s CPU (ClusterSOCPClassifier
7.0, RFESVMSelector 8.2, ReliefFSelector 4.0, LSVRRegressor 3.9). None of these was changed
in this round.
"""

ORDINAL = {"ClusterSOCPOrdinalRegressor", "SVOrdinalRegressor", "SVOrdinalRegressorCV",
           "RankRCRanker"}
REGRESSION = {"LSVRRegressor"}
TARGET = 10.0


#: LIBSVM on the task of a CV estimator (``--references``): scikit-learn's
#: ``GridSearchCV`` over ``SVC`` with the same number of folds (5) and grid values on the
#: same data; a 10 s target below these is below what LIBSVM itself needs.
REFERENCES = {
    # 5 ordinal levels as 5 classes (one-vs-one SVC), C over logspace(-3, 3, 10)
    "SVOrdinalRegressorCV": ("rbf", "accuracy", "logspace(-3, 3, 10)"),
    # RankRC's mean-loss lambda over 2^(-20:2:10) as C = 1 / (lambda m) (m training rows
    # of a fold), scored by ROC AUC as RankRCClassifierCV is
    "RankRCClassifierCV": ("rbf", "roc_auc", "1 / (2^linspace(-20, 10, 16) m)"),
    # the linear kernel, C over logspace(-3, 3, 10)
    "SVMClassifierCV": ("linear", "accuracy", "logspace(-3, 3, 10)"),
}


def reference_label(name: str) -> str:
    kernel, scoring, grid = REFERENCES[name]
    return f"GridSearchCV(SVC({kernel})), C = {grid}, {scoring} [{name}'s task]"


def estimator_names() -> list[str]:
    import inspect

    from conicml import estimators

    return [name for name in estimators.__all__
            if inspect.isclass(getattr(estimators, name))]


def make_data(name: str, n: int, positives: float | None = None):
    """The standardised data set of ``name``'s kind (module docstring).

    ``positives``: for the two-class tasks, the fraction of rows of the positive class (the
    first rows of each class of a larger twonorm draw); ``None`` keeps twonorm's ~1/2."""
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    import conicml as cm

    if positives is not None and name not in ORDINAL and name not in REGRESSION:
        if not 0.0 < positives < 1.0:
            raise ValueError(f"positives must lie in (0, 1), got {positives!r}")
        n_pos = int(round(positives * n))
        X, y = cm.datasets.twonorm(2 * max(n_pos, n - n_pos) + 200, dim=20, random_state=0)
        pos, neg = np.flatnonzero(y == y.max()), np.flatnonzero(y != y.max())
        if pos.size < n_pos or neg.size < n - n_pos:  # a draw short of one class
            raise ValueError(f"the twonorm draw has {pos.size} positive and {neg.size} "
                             f"negative rows, fewer than the {n_pos} + {n - n_pos} asked")
        keep = np.sort(np.concatenate([pos[:n_pos], neg[:n - n_pos]]))
        return StandardScaler().fit_transform(X[keep]), y[keep]
    X, y = cm.datasets.twonorm(n, dim=20, random_state=0)
    X = StandardScaler().fit_transform(X)
    if name in ORDINAL or name in REGRESSION:
        rng = np.random.default_rng(1)
        score = X @ rng.standard_normal(X.shape[1]) + 0.5 * rng.standard_normal(n)
        if name in REGRESSION:
            return X, score
        edges = np.quantile(score, [0.2, 0.4, 0.6, 0.8])
        return X, np.searchsorted(edges, score).astype(int) + 1
    return X, y


def _reference(name: str, n: int):
    """The ``GridSearchCV`` of :data:`REFERENCES` for ``name`` on ``n`` rows."""
    import numpy as np
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    kernel, scoring, _ = REFERENCES[name]
    if name == "RankRCClassifierCV":
        Cs = 1.0 / (2.0 ** np.linspace(-20, 10, 16) * (n - n // 5))
    else:
        Cs = np.logspace(-3, 3, 10)
    return GridSearchCV(SVC(kernel=kernel), {"C": Cs}, cv=5, scoring=scoring)


def _fit(name: str, n: int, cpu_limit: float | None = None, reference: bool = False,
         positives: float | None = None) -> dict:
    """Child process: fit ``name()`` (``reference``: its LIBSVM reference of
    :data:`REFERENCES`) once on its data set, return the fit time.

    ``cpu_limit``: the child is killed (``SIGXCPU``) once ``fit`` has used that many CPU
    seconds (``RLIMIT_CPU``, set above what the imports and the data already used)."""
    from conicml import estimators

    X, y = make_data(name, n, positives)
    if cpu_limit is not None:
        import math
        import resource

        used = time.process_time()
        soft = math.ceil(used + cpu_limit)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    est = getattr(estimators, name)() if not reference else _reference(name, X.shape[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start, cpu = time.perf_counter(), time.process_time()
        est.fit(X, y)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"fit": seconds, "cpu": cpu, "warnings": len(caught),
            "warning": str(caught[0].message).splitlines()[0][:80] if caught else ""}


def run(names: list[str], sizes: list[int], limit: float,
        cpu_limit: float | None = None, references: bool = False,
        positives: float | None = None) -> list[dict]:
    rows = []
    tasks = [(name, False) for name in names]
    if references:
        tasks += [(name, True) for name in names if name in REFERENCES]
    for name, reference in tasks:
        stopped = None
        for n in sizes:
            load = os.getloadavg()[0]
            if stopped is not None:
                row = {"name": name, "n": n, "state": "not run", "load": load,
                       "message": stopped}
            else:
                state, res, wall = run_with_limit(
                    _fit, (name, n, cpu_limit, reference, positives), limit)
                row = {"name": reference_label(name) if reference else name, "n": n,
                       "state": state, "load": load, "wall": wall, "reference": reference}
                if state == "ok":
                    row.update(res)
                elif state == "error":
                    row["message"] = str(res).splitlines()[0][:160]
                else:
                    # a child that died before the wall limit hit its CPU limit
                    row["message"] = (f"> {cpu_limit:g} s CPU" if cpu_limit is not None
                                      and wall < limit - 1.0 else f"> {limit:g} s")
                    stopped = f"n = {n} {state}"
            rows.append(row)
            print(_line(row), flush=True)
    return rows


def _line(r: dict) -> str:
    if r["state"] == "ok":
        flag = "" if r["fit"] <= TARGET or r["n"] != 5000 else " (over target)"
        warn = f"{r['warnings']}: {r['warning']}" if r["warnings"] else ""
        return (f"| {r['name']} | {r['n']} | {r['fit']:.2f}{flag} | {r['cpu']:.2f} | {warn} | "
                f"{r['load']:.1f} |")
    return (f"| {r['name']} | {r['n']} | {r['state'].upper()} ({r.get('message', '')}) | | "
            f"| {r['load']:.1f} |")


def table(rows: list[dict], args: argparse.Namespace, started: str, ended: str) -> str:
    head = ("| estimator | n | fit (s) | fit CPU (s) | warnings (count: first) | "
            "load (1 min) |\n|---|---|---|---|---|---|")
    at5000 = [r for r in rows if r["n"] == 5000 and not r.get("reference")]
    over = [r["name"] for r in at5000 if r["state"] != "ok" or r["fit"] > TARGET]
    over_cpu = [r["name"] for r in at5000 if r["state"] != "ok" or r["cpu"] > TARGET]
    summary = (f"At 5 000 rows: {len(at5000) - len(over)} of {len(at5000)} estimators fit "
               f"within {TARGET:g} s; over the target or failed: "
               f"{', '.join(over) if over else 'none'}. By CPU time: "
               f"{len(at5000) - len(over_cpu)} of {len(at5000)} within {TARGET:g} s; over "
               f"or failed: {', '.join(over_cpu) if over_cpu else 'none'}."
               if at5000 else "No row at 5 000 rows (the target's size) in this run.")
    return (f"# Every estimator's fit time with its defaults\n\n{machine()}\n\n"
            f"Command: `python benchmarks/estimator_fit_times.py --sizes "
            f"{','.join(map(str, args.sizes))} --limit {args.limit:g}"
            f"{f' --cpu-limit {args.cpu_limit:g}' if args.cpu_limit is not None else ''}"
            f"{' --only ' + ','.join(args.only) if args.only else ''}"
            f"{' --references' if args.references else ''}"
            f"{f' --positives {args.positives:g}' if args.positives is not None else ''}`; "
            f"run {started} -- "
            f"{ended} UTC.\n\n"
            "Data: standardised twonorm (20 dimensions, seed 0"
            + (f"; two-class tasks: {args.positives:g} of the rows positive, the first rows "
               "of each class of a larger draw" if args.positives is not None else "")
            + "); ordinal regressors and "
            "rankers: 5 quintile levels of a noisy linear score; LSVRRegressor: the score "
            "itself. Time: wall-clock `fit` in a fresh process (imports excluded), one "
            "fit per cell; CPU: the process CPU time of the same `fit` (all threads), "
            "less sensitive to the other jobs on a shared machine."
            + (" Rows `GridSearchCV(SVC(...))`: LIBSVM (scikit-learn) on the task of the CV "
               "estimator named in brackets, the same data, 5 folds and as many grid values "
               "(not counted in the summary)." if args.references else "") + "\n\n"
            f"{head}\n" + "\n".join(_line(r) for r in rows) + f"\n\n{summary}\n"
            + ("" if args.section else f"\n{READING}\n"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--limit", type=float, default=30.0)
    parser.add_argument("--only", default="", help="comma-separated estimator names")
    parser.add_argument("--section", default=None)
    parser.add_argument("--cpu-limit", type=float, default=None,
                        help="also stop a fit after this many CPU seconds (its row reads "
                             "TIMEOUT (> s CPU)); on a loaded machine --limit, a wall "
                             "time, then only bounds the run")
    parser.add_argument("--references", action="store_true",
                        help="also time GridSearchCV(SVC) on the task of each CV estimator "
                             "run that has one (REFERENCES)")
    parser.add_argument("--positives", type=float, default=None,
                        help="fraction of positive rows of the two-class tasks (default: "
                             "twonorm's ~1/2)")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.only = [s for s in args.only.split(",") if s]
    names = args.only or estimator_names()
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    rows = run(names, args.sizes, args.limit, args.cpu_limit, args.references,
               args.positives)
    ended = time.strftime("%H:%M", time.gmtime())
    out = write_results("estimator_fit_times", table(rows, args, started, ended),
                        section=args.section)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
