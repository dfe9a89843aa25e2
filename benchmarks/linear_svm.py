"""Linear SVM: ``dcd`` against LIBLINEAR (scikit-learn ``LinearSVC``, hinge loss, dual).

Both solve the L1-loss soft-margin SVM by dual coordinate descent with shrinking; dcd
keeps the bias unregularised (the program of ``qp.svm.dual``), LIBLINEAR regularises it
(``intercept_scaling=1``). Each is judged in the same program: the primal value
:math:`P = \\tfrac12\\|w\\|^2 + C\\sum_i[1 - y_i(w^\\top x_i + b)]_+` of its returned
``(w, b)``. The target is :math:`P \\le (1 + 10^{-3})\\,D^*`, with :math:`D^*` the best
certified dual (lower) bound, from a tight dcd run (``tol=1e-5``): a run that reaches it
is within relative 1e-3 of the optimum whatever the reference's own error.

LinearSVC is run at ``tol`` = 1e-1, 1e-2, 1e-3, 1e-4 (``max_iter=10000``); its row is the
loosest tol that reaches the target (the fastest it gets there). dcd runs at its default
``tol=1e-3`` (the certified relative duality gap). Times are best of ``--repeats`` runs,
each in a child process under ``--limit`` seconds (TIMEOUT otherwise), measured inside the
child from the data to the model:

* ``fit``: ``LinearSVC.fit`` against ``SVMClassifier(kernel="linear", solver="dcd").fit``
  (validation, program, solve, conicml's recomputed certificate, decode) on dense data;
* ``solve``: the solver alone, ``cm.solve`` of the program (dcd) / the same fit (LIBLINEAR
  has no separate solve);
* sparse sets: the CSR matrix is kept sparse end to end (validation, program, dcd,
  conicml's recomputed certificate, decoding; ``SVMClassifier`` accepts CSR with the
  linear kernel); LinearSVC gets the same CSR.

No text corpus ships offline (scikit-learn's ``fetch_20newsgroups`` downloads), so two
generated sparse sets stand in for one (seeded, built inside each child):

* ``text`` — uniform: 5e4 x 2e4, ~30 nonzeros a row at uniformly drawn columns,
  exponential values, rows of unit L2 norm;
* ``tfidf`` — Zipfian, closer to a bag of words: 5e4 documents of Poisson(80) tokens drawn
  from a 3e4-term vocabulary with Zipf frequencies (p_k ~ 1/k^1.1, term ids shuffled),
  sublinear tf (1 + log count) times smoothed idf (log((1 + n)/(1 + df)) + 1, as
  scikit-learn's ``TfidfTransformer``), rows of unit L2 norm (~60 distinct terms a row,
  a few terms in most rows, most terms in few);

labels from a sparse linear rule over the terms (10 % of them with a normal weight),
thresholded at the median, 5 % flipped.

Section ``pegasos`` (``--pegasos``): CPU time to a relative duality gap of 1e-2 on twonorm
10^5 x 20 (C = 1): ``pegasos`` (its own certified gap, ``tol=1e-2``; the numba engine and
the NumPy one; default mini-batch and at k = 256) against LinearSVC (the loosest tol whose
``P <= (1 + 1e-2) D*``), CPU seconds of the child (all its threads) from the program to
the solution, and the gap each reached.

Usage: ``python benchmarks/linear_svm.py [--quick] [--limit SECONDS] [--repeats R]
[--pegasos]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import run_with_limit, write_results  # noqa: E402

TARGET = 1e-3
LIBLINEAR_TOLS = (1e-1, 1e-2, 1e-3, 1e-4)


# -- instances (module-level: built inside the child) ------------------------------------
def instance(name: str, quick: bool):
    import scipy.sparse as sp

    import conicml as cm

    if name == "twonorm":
        n = 20_000 if quick else 100_000
        X, y = cm.datasets.twonorm(n, dim=20, random_state=0)
        return X, np.where(y > 0, 1.0, -1.0)
    if name == "tfidf":
        return _tfidf(quick)
    # text (uniform): nonnegative rows, ~30 nonzeros of 20 000 columns, unit L2 norm,
    # labels from a sparse linear rule with 5 % flipped
    n, d = (10_000, 5_000) if quick else (50_000, 20_000)
    rng = np.random.default_rng(1)
    X = sp.random(n, d, density=30 / d, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.exponential(1.0, k))
    return _normalised_with_labels(X, rng)


def _tfidf(quick: bool):
    """The Zipfian bag-of-words set of the module docstring."""
    import scipy.sparse as sp

    n, d, length = (10_000, 10_000, 80) if quick else (50_000, 30_000, 80)
    rng = np.random.default_rng(2)
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    p /= p.sum()
    p = p[rng.permutation(d)]  # frequent terms anywhere in the vocabulary
    sizes = rng.poisson(length, n)
    rows = np.repeat(np.arange(n), sizes)
    cols = rng.choice(d, size=rows.size, p=p)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, d))
    X.sum_duplicates()  # term counts
    df = np.bincount(X.indices, minlength=d)
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    X.data = (1.0 + np.log(X.data)) * idf[X.indices]
    return _normalised_with_labels(X, rng)


def _normalised_with_labels(X, rng):
    import scipy.sparse as sp

    n, d = X.shape
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    X = sp.diags(1.0 / norms) @ X
    w = rng.normal(size=d) * (rng.random(d) < 0.1)
    score = np.asarray(X @ w).ravel()
    y = np.where(score > np.median(score), 1.0, -1.0)
    y[rng.random(n) < 0.05] *= -1
    return sp.csr_matrix(X), y


def primal(X, y, C, w, b) -> float:
    f = np.asarray(X @ w).ravel() + b
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - y * f).sum())


def _program(X, y, C):
    """The dual program (a CSR ``X`` stays CSR)."""
    from conicml.formulations import svm

    return svm.soft_margin(X, y, C=C, form="dual")


def _warm_up() -> float:
    """Load numba and dcd's compiled loop (not timed in the rows)."""
    import conicml as cm
    from conicml.formulations import svm

    t = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    cm.solve(svm.soft_margin(X, np.where(X[:, 0] > 0, 1.0, -1.0), form="dual"), "dcd")
    return time.perf_counter() - t


def run_dcd(name: str, quick: bool, C: float, tol: float, mode: str):
    import scipy.sparse as sp

    import conicml as cm
    from conicml.estimators import SVMClassifier

    X, y = instance(name, quick)
    warm = _warm_up()
    t = time.perf_counter()
    if mode == "fit":
        est = SVMClassifier(C=C, kernel="linear", solver="dcd",
                            solver_options={"tol": tol}).fit(X, y)
        sol, w, b = est.solution_, est.coef_.ravel(), float(est.intercept_[0])
        cert = sol.residuals.max()
    else:
        sol = cm.solve(_program(X, y, C), "dcd", tol=tol)
        w, b = np.asarray(X.T @ (sol.values["alpha"] * y)).ravel(), sol.extras["b"]
        cert = sol.residuals.max()
    elapsed = time.perf_counter() - t
    if sp.issparse(X) and mode == "fit":
        assert sp.issparse(est.program_.data["X"])  # kept sparse end to end
    return {"time": elapsed, "P": primal(X, y, C, w, b), "D": sol.extras["dual_objective"],
            "status": sol.status.value, "iterations": sol.iterations, "cert": cert,
            "engine": sol.extras["engine"], "warm": warm}


def run_liblinear(name: str, quick: bool, C: float, tol: float):
    import warnings

    from sklearn.svm import LinearSVC

    X, y = instance(name, quick)
    t, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter: recorded below
        m = LinearSVC(C=C, loss="hinge", dual=True, tol=tol, max_iter=10_000).fit(X, y)
    elapsed, cpu = time.perf_counter() - t, time.process_time() - cpu
    return {"time": elapsed, "cpu": cpu,
            "P": primal(X, y, C, m.coef_.ravel(), float(m.intercept_[0])),
            "iterations": int(m.n_iter_)}


def run_pegasos(quick: bool, C: float, opts: dict):
    import conicml as cm
    from conicml.formulations import svm

    X, y = instance("twonorm", quick)
    small = svm.soft_margin(X[:500], y[:500], C=C, form="primal")
    cm.solve(small, "pegasos", tol=1e-2, **opts)  # numba's loop from its cache
    t, cpu = time.perf_counter(), time.process_time()
    prog = svm.soft_margin(X, y, C=C, form="primal")
    sol = cm.solve(prog, "pegasos", tol=1e-2, max_iter=5_000_000, random_state=0, **opts)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - t
    w, b = sol.values["w"], float(sol.values["b"])
    return {"time": cpu, "wall": wall, "P": primal(X, y, C, w, b), "status": sol.status.value,
            "iterations": sol.iterations, "gap": sol.residuals.gap,
            "engine": sol.extras.get("engine", "-")}


def run_liblinear_cpu(quick: bool, C: float, tol: float):
    res = run_liblinear("twonorm", quick, C, tol)
    return dict(res, time=res["cpu"], wall=res["time"])


def pegasos_section(args) -> str:
    C, goal_rel = 1.0, 1e-2
    state, ref = run_with_limit(run_dcd, ("twonorm", args.quick, C, 1e-5, "solve"),
                                10 * args.limit)[:2]
    if state != "ok":
        return f"reference dcd run: {state}\n"
    d_star = ref["D"]
    rows = []
    for label, opts in (("pegasos (numba, default k = 32)", {"engine": "numba"}),
                        ("pegasos (numba, k = 256)", {"engine": "numba", "batch_size": 256}),
                        ("pegasos (NumPy, k = 256)", {"engine": "numpy", "batch_size": 256})):
        state, res = best_of(run_pegasos, (args.quick, C, opts), args.repeats, args.limit)
        rows.append((label, state, res))
    lib = None
    for tol in (1.0, 0.3, 1e-1, 1e-2):
        state, res = best_of(run_liblinear_cpu, (args.quick, C, tol), args.repeats, args.limit)
        rows.append((f"LinearSVC (fit, tol {tol:g})", state, res))
        if state == "ok" and res["P"] <= (1 + goal_rel) * d_star:
            lib = res
            break
    lines = []
    for label, state, res in rows:
        if state != "ok":
            lines.append(f"| {label} | {state.upper()} (> {args.limit:g} s) | | | | | | |")
            continue
        rel = (res["P"] - d_star) / abs(d_star)
        own = (f"{res['status']}, recomputed certified gap {res['gap']:.1e}" if "gap" in res
               else "")
        ratio = f"{res['time'] / lib['time']:.2f}" if lib else "-"
        lines.append(f"| {label} | {res['time']:.3f} | {res.get('wall', res['time']):.3f} | "
                     f"{res['iterations']} | {rel:.1e} | "
                     f"{'yes' if res['P'] <= (1 + goal_rel) * d_star else 'no'} | {ratio} | "
                     f"{own} | {_load()} |")
    return ("# Linear SVM: pegasos to a 1e-2 gap against LinearSVC\n\n"
            f"twonorm {'2e4' if args.quick else '1e5'} x 20, C = {C:g}. `CPU s`: the child's "
            "process time from the program to the solution (pegasos; LinearSVC's fit, whose "
            "CPU and wall times are the same single thread: its column shows the wall time "
            "too); `rel. to D*`: (P - D*) / D* of the returned (w, b), D* from a dcd run at "
            "tol 1e-5; `reached`: P <= (1 + 1e-2) D*; `ratio`: CPU time / the CPU time of the "
            f"LinearSVC row that reached it. Best of {args.repeats}, limit {args.limit:g} s.\n\n"
            "| run | CPU s | wall s | iterations | rel. to D* | reached | ratio | status | "
            "load |\n|---|---|---|---|---|---|---|---|---|\n" + "\n".join(lines) + "\n")


def _load() -> str:
    return " / ".join(f"{v:.1f}" for v in os.getloadavg())


def best_of(fn, args, repeats, limit):
    runs, state = [], "ok"
    for _ in range(repeats):
        state, res, _ = run_with_limit(fn, args, limit)
        if state != "ok":
            return state, res
        runs.append(res)
    return "ok", min(runs, key=lambda r: r["time"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--limit", type=float, default=120.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pegasos", action="store_true",
                        help="the pegasos section (CPU time to a 1e-2 gap) instead")
    args = parser.parse_args()
    if args.pegasos:
        text = pegasos_section(args)
        out = write_results("linear_svm", text, quick=args.quick, section="pegasos")
        print(text)
        print(f"written to {out}")
        return
    start, load0 = time.perf_counter(), _load()
    C = 1.0
    rows = []
    for name in ("twonorm", "text", "tfidf"):
        state, ref = run_with_limit(run_dcd, (name, args.quick, C, 1e-5, "solve"),
                                    10 * args.limit)[:2]
        if state != "ok":
            rows.append(f"| {name} | reference dcd tol 1e-5 | {state.upper()} | | | | | | |")
            continue
        d_star = ref["D"]
        goal = (1 + TARGET) * d_star
        results = []
        modes = ("fit", "solve")
        for mode in modes:
            state, res = best_of(run_dcd, (name, args.quick, C, 1e-3, mode), args.repeats,
                                 args.limit)
            results.append((f"dcd ({mode}, tol 1e-3)", state, res))
        lib = None
        for tol in LIBLINEAR_TOLS:
            state, res = best_of(run_liblinear, (name, args.quick, C, tol), args.repeats,
                                 args.limit)
            results.append((f"LinearSVC (fit, tol {tol:g})", state, res))
            if state == "ok" and res["P"] <= goal:
                lib = res
                break
        for label, state, res in results:
            if state != "ok":
                rows.append(f"| {name} | {label} | {state.upper()} | | | | | | {_load()} |")
                continue
            rel = (res["P"] - d_star) / abs(d_star)
            ratio = f"{res['time'] / lib['time']:.2f}" if lib else "-"
            extra = (f"{res['status']}, {res['engine']}, certificate {res['cert']:.1e}"
                     if "status" in res else "")
            rows.append(f"| {name} | {label} | {res['time']:.3f} | {res['iterations']} | "
                        f"{res['P']:.8g} | {rel:.1e} | {'yes' if res['P'] <= goal else 'no'}"
                        f" | {ratio} | {extra} | {_load()} |")
        rows.append(f"| {name} | reference: dcd tol 1e-5 | {ref['time']:.3f} | "
                    f"{ref['iterations']} | {ref['P']:.8g} | D* = {d_star:.8g} | | | "
                    f"{ref['status']}, warm-up {ref['warm']:.2f} s | |")
    text = (
        "# Linear SVM: dcd against LIBLINEAR (LinearSVC, hinge, dual)\n\n"
        f"Generated by `python benchmarks/linear_svm.py{' --quick' if args.quick else ''} "
        f"--limit {args.limit:g} --repeats {args.repeats}` in "
        f"{time.perf_counter() - start:.0f} s; "
        f"load average at the start {load0} (1 / 5 / 15 min), in the last column after "
        "each row.\n\n"
        f"C = {C:g}. twonorm: {'2e4' if args.quick else '1e5'} x 20 (dense); text: "
        f"{'1e4 x 5e3' if args.quick else '5e4 x 2e4'} CSR, ~30 uniformly placed nonzeros "
        f"a row; tfidf: {'1e4 x 1e4' if args.quick else '5e4 x 3e4'} CSR, Zipfian "
        "bag-of-words tf-idf (both generated, see the script's docstring); sparse rows "
        "kept CSR end to end (`fit`: SVMClassifier on the CSR matrix). `P`: the "
        "primal value of the returned (w, b) in the exact-bias program; `rel. to D*`: "
        "(P - D*) / D* with D* the certified dual bound of the reference run; `reached`: "
        f"P <= (1 + {TARGET:g}) D*; `ratio`: time / the time of the LinearSVC row that "
        "reached the target (below 1: dcd faster). Best of "
        f"{args.repeats} child-process runs, limit {args.limit:g} s each.\n\n"
        "| set | run | time s | iterations (epochs) | P | rel. to D* | reached | ratio | "
        "status | load |\n|---|---|---|---|---|---|---|---|---|---|\n"
        + "\n".join(rows) + "\n")
    out = write_results("linear_svm", text, quick=args.quick)
    print(text)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
