"""Warm-started hyper-parameter paths against cold solves and GridSearchCV, ratios in one run.

Three targets (each row a fresh child process with a time limit; a run over it is recorded
as TIMEOUT):

1. **C path of the RBF SVM dual with smo**: ringnorm (n = 2 000, d = 20, standardized),
   ``kernel="rbf"`` (gamma "scale"), ten values of C log-spaced in [0.1, 100]:
   ``conicml.solve_path`` warm (``smo_alpha``: the active-set prediction), the same path
   cold (``warm_start=False``, ten independent smo solves), and both on the Gram
   matrix computed once (``kernel="precomputed"``, its computation included; the other
   values built by ``svm.with_cost``, as ``SVMClassifierCV`` does; smo reads it in
   place). Every objective is compared with the cold one (relative difference; smo's
   certificate tolerance is 1e-3). Each mode runs three times, the four alternating (the
   best wall and CPU time kept). Every row first loads smo's compiled code, untimed
   (its own column: a once-per-process cost that would be added to cold and warm alike).
   The first value is a cold solve on both sides: the ratios are given as well for the
   nine values after it (timed from the second value's build).
2. **SVMClassifierCV against GridSearchCV(SVC())**: ringnorm n = 5 000, ten values of C
   log-spaced in [0.01, 100], five stratified folds (the same ``StratifiedKFold`` object),
   accuracy; also ``GridSearchCV(SVMClassifier(solver="smo"))`` (conicml cold).
3. **RankRCClassifierCV against GridSearchCV(RankRCClassifier())**: Mammography (11 183
   points, 260 rare, standardized), the paper's 16 values log2 lambda = -20:2:10, five
   stratified folds, ROC AUC (the estimators' ``score``); each side three times, alternating
   (the best kept), with its units of work (``PairwiseLoss``'s evaluations by sorting,
   Hessian products and explicit Hessians) counted. Both refit the best lambda on all
   the data (``RankRCClassifierCV`` from the folds' mean coefficients, in exact Newton
   directions where every fold's solve took them).

Ratios: cold time / warm time in the same run of this script. BLAS single-threaded (the
machine is shared); the 1-minute load average is recorded beside every row.

Usage: ``python benchmarks/paths.py [--quick] [--limit SECONDS] [--rank SECTION]``;
``--quick`` uses n = 1 000 / 2 000 / a 4 000-point subsample of Mammography and writes
``results/paths_quick.md``; ``--rank SECTION`` runs section 3 alone and writes it as the
results file's section ``SECTION``.

``--generic`` runs instead the section "generic backends": the soft-margin SVM over ten
values of C in [0.1, 100] (ringnorm, standardized; the linear primal at n = 2 000 and
the RBF dual at n = 400) with ``clarabel`` and ``ecos``, every value compiled anew
(``warm_start=False``) against the path re-using the first value's compiled cvxpy
problem (the costs are a ``cp.Parameter``); both build each value by ``svm.with_cost``;
each row the best of three runs.

``--linear`` runs instead the section "linear kernel": ``SVMClassifierCV()`` with its
defaults (the linear kernel, ``Cs = logspace(-3, 3, 10)``, 5 stratified folds;
``solver="auto"``: ``svm-ipm``), the same with ``solver="smo"`` (its path) and
``GridSearchCV(SVC(kernel="linear"), {"C": Cs}, cv=5)`` (LIBSVM, tol 1e-3), on the data of
``estimator_fit_times.py`` (standardised twonorm 5 000 x 20, seed 0); per row the best C,
its score, the largest difference of the mean scores from LIBSVM's over the grid and the
ConvergenceWarnings raised.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _harness import run_with_limit, write_results  # noqa: E402

SVM_CS = np.logspace(-1, 2, 10)
PATH_REPEATS = 3  # section 1: runs of each mode, alternating (the best is recorded)
CV_CS = np.logspace(-2, 2, 10)
LAMS = 2.0 ** np.arange(-20, 11, 2)
NO_NUMBA = "absent (smo runs its NumPy loop)"


def _ringnorm(n: int) -> tuple[np.ndarray, np.ndarray]:
    import conicml as cm

    X, y = cm.datasets.ringnorm(n, random_state=0)
    return (X - X.mean(0)) / X.std(0), y


def _jit_load() -> float:
    """Load smo's compiled loop (numba's on-disk cache) before anything is timed.

    A once-per-process cost (about a second on a fresh process; more the very first time,
    while numba compiles), paid by the first smo solve whatever comes after it: timed
    inside a row it would be added to the cold and the warm path alike. Two small paths,
    on RBF columns (float32 store) and on a precomputed Gram matrix (read in place),
    load every compiled function a path uses. Returns its wall time (recorded apart).
    """
    import conicml as cm
    from conicml.formulations import svm
    from conicml.kernels import make_kernel

    start = time.perf_counter()
    X, y = _ringnorm(300)
    cm.solve_path(lambda C: svm.soft_margin(X, y, C, kernel="rbf", form="dual"),
                  [1.0, 10.0], "smo")
    first = svm.soft_margin(make_kernel("rbf", X).gram(X), y, 1.0, kernel="precomputed",
                            form="dual")
    cm.solve_path(lambda C: svm.with_cost(first, C), [1.0, 10.0], "smo")
    return time.perf_counter() - start


def _svm_path(n: int, mode: str) -> dict:
    import conicml as cm
    from conicml.formulations import svm
    from conicml.kernels import make_kernel

    jit = _jit_load()
    X, y = _ringnorm(n)
    marks: list[tuple[float, float]] = []  # (wall, CPU) as each value is built
    start, cpu = time.perf_counter(), time.process_time()
    if mode.endswith("Gram once"):
        K = make_kernel("rbf", X).gram(X)
        first = svm.soft_margin(K, y, SVM_CS[0], kernel="precomputed", form="dual")

        def make(C):  # the Gram matrix validated once (svm.with_cost)
            return svm.with_cost(first, C)
    else:
        def make(C):
            return svm.soft_margin(X, y, C, kernel="rbf", form="dual")

    def build(C):
        marks.append((time.perf_counter(), time.process_time()))
        return make(C)

    sols = cm.solve_path(build, SVM_CS, "smo", warm_start=not mode.startswith("cold"))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    # the path after its first value (solved cold on both sides, and certified): from
    # the second value's build on
    return {"wall": wall, "cpu": cpu, "rest_wall": time.perf_counter() - marks[1][0],
            "rest_cpu": time.process_time() - marks[1][1],
            "objectives": [s.objective for s in sols],
            "statuses": sorted({s.status.value for s in sols}),
            "iterations": sum(s.iterations for s in sols), "jit": jit}


GENERIC_REPEATS = 3
GENERIC_CASES = {"linear primal": (2000, "linear", "primal"), "RBF dual": (400, "rbf", "dual")}


def _generic_path(case: str, solver: str, mode: str, quick: bool) -> dict:
    import conicml as cm
    from conicml.formulations import svm

    n, kernel, form = GENERIC_CASES[case]
    X, y = _ringnorm(n // 2 if quick else n)
    best: dict = {}
    for _ in range(GENERIC_REPEATS):  # the best of a few runs: the machine is shared
        start, cpu = time.perf_counter(), time.process_time()
        first = svm.soft_margin(X, y, SVM_CS[0], kernel=kernel, form=form)
        sols = cm.solve_path(lambda C: svm.with_cost(first, C), SVM_CS, solver,
                             warm_start=mode == "re-used")
        run = {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
               "setup": sum(s.setup_time for s in sols),
               "solve": sum(s.solve_time for s in sols)}
        best = {k: min(v, best.get(k, math.inf)) for k, v in run.items()}
    return {**best, "objectives": [s.objective for s in sols],
            "statuses": sorted({s.status.value for s in sols}),
            "reused": sum(bool(s.extras.get("problem_reused")) for s in sols)}


def _generic_section(args: argparse.Namespace) -> None:
    lines = [f"BLAS threads {os.environ['OMP_NUM_THREADS']}. Soft-margin SVM, ringnorm "
             "(standardized), ten values of C in [0.1, 100], each value built by "
             f"`svm.with_cost`; each row the best of {GENERIC_REPEATS} runs in one child "
             "process (wall and CPU minimised apart); *cold*: every value's cvxpy problem "
             "built and compiled "
             "(`warm_start=False`), *re-used*: the path re-uses the first value's compiled "
             "problem, only the costs (a `cp.Parameter`) change. Compile and solve: the "
             "backends' setup (cvxpy's canonicalisation) and solve times summed over the "
             "path; building each value's cvxpy problem (for the RBF dual, the kernel "
             "factor), which the re-used path also skips, is in neither. Objective difference: "
             "relative to the cold solve of the same value (the certificate's tolerance is "
             "5e-4). The 1-minute load before each row is in its last column.", "",
             "| case | solver | run | wall [s] | CPU [s] | compile [s] | solve [s] | re-used "
             "| statuses | max rel. objective diff | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    for case, (n, _, _) in GENERIC_CASES.items():
        for solver in ("clarabel", "ecos"):
            runs = {}
            for mode in ("cold", "re-used"):
                load = os.getloadavg()[0]
                state, res, wall = run_with_limit(_generic_path,
                                                  (case, solver, mode, args.quick), args.limit)
                runs[mode] = (state, res)
                if state != "ok":
                    lines.append(f"| {case} (n = {n}) | {solver} | {mode} | "
                                 f"{_cell(state, res, wall)} |  |  |  |  |  |  | {load:.1f} |")
                    print(lines[-1], flush=True)
                    continue
                diff = ""
                if mode != "cold" and runs["cold"][0] == "ok":
                    a = np.asarray(res["objectives"])
                    b = np.asarray(runs["cold"][1]["objectives"])
                    diff = f"{float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))):.1e}"
                lines.append(
                    f"| {case} (n = {n // 2 if args.quick else n}) | {solver} | {mode} | "
                    f"{res['wall']:.2f} | {res['cpu']:.2f} | {res['setup']:.2f} | "
                    f"{res['solve']:.2f} | {res['reused']}/10 | {', '.join(res['statuses'])} "
                    f"| {diff} | {load:.1f} |")
                print(lines[-1], flush=True)
            if all(v[0] == "ok" for v in runs.values()):
                c, r = runs["cold"][1], runs["re-used"][1]
                ratios.append(f"{case}, {solver}: {c['wall'] / r['wall']:.2f} (wall), "
                              f"{c['cpu'] / r['cpu']:.2f} (CPU)")
    lines += ["", "Ratio cold / re-used: " + "; ".join(ratios) + ".", "",
              f"Load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}.", ""]
    out = write_results("paths", "\n".join(lines), quick=args.quick, section="generic backends")
    print(f"wrote {out}")


def _svm_cv(n: int, which: str) -> dict:
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    from conicml.estimators import SVMClassifier, SVMClassifierCV

    jit = _jit_load()
    X, y = _ringnorm(n)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    start, cpu = time.perf_counter(), time.process_time()
    if which == "SVMClassifierCV (smo path)":
        est = SVMClassifierCV(CV_CS, cv=cv, kernel="rbf").fit(X, y)
    elif which == "GridSearchCV(SVC())":
        est = GridSearchCV(SVC(), {"C": list(CV_CS)}, cv=cv).fit(X, y)
    else:
        est = GridSearchCV(SVMClassifier(kernel="rbf", form="dual", solver="smo"),
                           {"C": list(CV_CS)}, cv=cv).fit(X, y)
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
            "best": float(est.best_params_["C"]),
            "score": float(est.best_score_), "jit": jit}


def _linear_cv(n: int, which: str) -> dict:
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    import conicml as cm
    from conicml.estimators import SVMClassifierCV

    X, y = cm.datasets.twonorm(n, dim=20, random_state=0)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start, cpu = time.perf_counter(), time.process_time()
        if which == "GridSearchCV(SVC(kernel='linear'))":
            est = GridSearchCV(SVC(kernel="linear"), {"C": list(np.logspace(-3, 3, 10))},
                               cv=5).fit(X, y)
        else:
            est = SVMClassifierCV(solver="smo" if "smo" in which else "auto").fit(X, y)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    solver = getattr(getattr(est.best_estimator_, "solution_", None), "solver", "libsvm")
    return {"wall": wall, "cpu": cpu, "best": float(est.best_params_["C"]),
            "score": float(est.best_score_), "solver": solver,
            "scores": np.asarray(est.cv_results_["mean_test_score"]),
            "warnings": sum(issubclass(w.category, ConvergenceWarning) for w in caught)}


def _linear_section(args: argparse.Namespace) -> None:
    n = 2000 if args.quick else 5000
    lines = [f"# SVMClassifierCV, linear kernel, its default grid (twonorm n = {n} x 20, "
             "standardised; 10 values of C in [1e-3, 1e3], 5 folds, accuracy)", "",
             "BLAS threads 1. Each row a fresh child process under the time limit; the "
             "1-minute load before it in its last column.", "",
             "| run | refit solver | wall [s] | CPU [s] | best C | best score | max score "
             "diff vs LIBSVM | ConvergenceWarnings | load |",
             "|---|---|---|---|---|---|---|---|---|"]
    sides = ("SVMClassifierCV() (solver='auto')", "SVMClassifierCV(solver='smo')",
             "GridSearchCV(SVC(kernel='linear'))")
    runs = {}
    for which in sides:
        load = os.getloadavg()[0]
        runs[which] = (*run_with_limit(_linear_cv, (n, which), args.limit), load)
    ref = runs[sides[-1]]
    for which in sides:
        state, res, wall, load = runs[which]
        if state != "ok":
            lines.append(f"| {which} | | {_cell(state, res, wall)} | | | | | | {load:.1f} |")
            continue
        diff = (f"{float(np.max(np.abs(res['scores'] - ref[1]['scores']))):.1e}"
                if ref[0] == "ok" else "")
        lines.append(f"| {which} | {res['solver']} | {res['wall']:.2f} | {res['cpu']:.2f} | "
                     f"{res['best']:.4g} | {res['score']:.6f} | {diff} | {res['warnings']} | "
                     f"{load:.1f} |")
        print(lines[-1], flush=True)
    ours = runs[sides[0]]
    if ours[0] == "ok":
        ratios = [f"{k} / {sides[0]}: {v[1]['wall'] / ours[1]['wall']:.2f} (wall), "
                  f"{v[1]['cpu'] / ours[1]['cpu']:.2f} (CPU)"
                  for k, v in runs.items() if v[0] == "ok" and k != sides[0]]
        lines += ["", "Ratios: " + "; ".join(ratios) + "."]
    lines += ["", f"Load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}.",
              ""]
    out = write_results("paths", "\n".join(lines), quick=args.quick, section="linear kernel")
    print(f"wrote {out}")


def _mammography(n: int | None) -> tuple[np.ndarray, np.ndarray]:
    import conicml as cm

    X, y = cm.datasets.load("mammography")
    if n is not None and n < y.size:  # stratified subsample, seeded
        from sklearn.model_selection import train_test_split

        X, _, y, _ = train_test_split(X, y, train_size=n, stratify=y, random_state=0)
    return (X - X.mean(0)) / X.std(0), y


RANK_REPEATS = 3  # section 3: runs of each side, alternating (the best is recorded)
RANK_WORK = {"evaluate": "loss evaluations", "hess_vec": "Hessian products",
             "hessian_form": "explicit Hessians"}
#: PairwiseLoss's closed form at equal scores (beta = 0: no sort), not counted as work
RANK_CONSTANT = "_at_constant"


def _rank_cv(n: int | None, which: str) -> dict:
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from conicml.contracts.ranking_ops import PairwiseLoss
    from conicml.estimators import RankRCClassifier, RankRCClassifierCV

    X, y = _mammography(n)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    # the units of work of both sides: PairwiseLoss's evaluations (a sort of the scores;
    # those at equal scores, in closed form, taken off), Hessian products and explicit
    # Hessians, counted in this child process
    counts = dict.fromkeys([*RANK_WORK, RANK_CONSTANT], 0)

    def counted(name: str):
        method = getattr(PairwiseLoss, name)

        def wrapper(*args, **kwargs):
            counts[name] += 1
            return method(*args, **kwargs)
        return wrapper

    for name in counts:
        setattr(PairwiseLoss, name, counted(name))
    start, cpu = time.perf_counter(), time.process_time()
    if which == "RankRCClassifierCV (rank-tr path)":
        est = RankRCClassifierCV(LAMS, cv=cv).fit(X, y)
    else:
        est = GridSearchCV(RankRCClassifier(), {"lam": list(LAMS)}, cv=cv).fit(X, y)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    counts["evaluate"] -= counts.pop(RANK_CONSTANT)
    return {"wall": wall, "cpu": cpu, "best": float(est.best_params_["lam"]),
            "score": float(est.best_score_), "work": counts}


def _cell(state: str, res: object, wall: float, key: str = "wall") -> str:
    if state == "timeout":
        return f"TIMEOUT (> {wall:.0f} s)"
    if state == "error":
        return f"ERROR: {res}"
    return f"{res[key]:.2f}"  # type: ignore[index]


def _rank_section(limit: float, n_rank: int | None) -> list[str]:
    """Section 3: RankRCClassifierCV against GridSearchCV(RankRCClassifier()), its lines."""
    lines: list[str] = []
    label = "full Mammography" if n_rank is None else f"Mammography subsample n = {n_rank}"
    lines += ["", f"## 3. RankRCClassifierCV against GridSearchCV ({label}, 16 values of "
              "lambda, 5 folds, ROC AUC)", "",
              "| run | wall [s] | CPU [s] | best lambda | best score | "
              + " | ".join(RANK_WORK.values()) + " | load |",
              "|---|---|---|---|---|" + "---|" * len(RANK_WORK) + "---|"]
    rank_runs: dict = {}
    sides = ("RankRCClassifierCV (rank-tr path)", "GridSearchCV(RankRCClassifier())")
    rank_loads: dict = {w: [] for w in sides}
    for _ in range(RANK_REPEATS):  # alternating; each side's best wall and CPU apart
        for which in sides:
            rank_loads[which].append(os.getloadavg()[0])
            state, res, wall = run_with_limit(_rank_cv, (n_rank, which), limit)
            held = rank_runs.get(which)
            if held is None or held[0] != "ok":
                rank_runs[which] = (state, res, wall)
            elif state == "ok":
                rank_runs[which] = ("ok", {**held[1], "wall": min(held[1]["wall"], res["wall"]),
                                           "cpu": min(held[1]["cpu"], res["cpu"])}, wall)
    for which in sides:
        state, res, wall = rank_runs[which]
        extra = (f"2^{np.log2(res['best']):.0f} | {res['score']:.6f} | "
                 + " | ".join(str(res["work"][k]) for k in RANK_WORK) if state == "ok"
                 else " | " + " | " * len(RANK_WORK))
        load = f"{min(rank_loads[which]):.1f}-{max(rank_loads[which]):.1f}"
        lines.append(f"| {which} | {_cell(state, res, wall)} | "
                     f"{_cell(state, res, wall, 'cpu')} | {extra} | {load} |")
        print(lines[-1], flush=True)
    if all(v[0] == "ok" for v in rank_runs.values()):
        a, b = (rank_runs[w][1] for w in sides)
        work = "; ".join(f"{label} {b['work'][k] / max(a['work'][k], 1):.2f}"
                         for k, label in RANK_WORK.items())
        lines += ["", f"Ratio GridSearchCV / RankRCClassifierCV: {b['wall'] / a['wall']:.2f} "
                  f"(wall), {b['cpu'] / a['cpu']:.2f} (CPU) (target >= 3). Each row: the best "
                  f"wall and the best CPU time of {RANK_REPEATS} runs, the two sides "
                  "alternating (load: its range over them). Work, GridSearchCV / "
                  f"RankRCClassifierCV (the same in every run): {work}; both sides refit the "
                  "best lambda on all the data (in the counts; RankRCClassifierCV's refit "
                  "starts from the folds' mean coefficients at that lambda, in exact Newton "
                  "directions where every fold's solve took them; GridSearchCV's from zero, "
                  "with the estimator's defaults); both score each fold's 16 models by ROC AUC "
                  "(RankRCClassifierCV: one product with the stacked coefficients, mid-rank "
                  "AUC; GridSearchCV: roc_auc_score model by model)."]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--limit", type=float, default=240.0, help="seconds per run")
    parser.add_argument("--generic", action="store_true",
                        help="only the section 'generic backends' (cvxpy problem re-use)")
    parser.add_argument("--rank", default=None, metavar="SECTION",
                        help="only section 3 (RankRCClassifierCV against GridSearchCV), "
                             "written as the results file's section SECTION")
    parser.add_argument("--linear", action="store_true",
                        help="only the section 'linear kernel' (SVMClassifierCV's defaults)")
    args = parser.parse_args()
    if args.linear:
        _linear_section(args)
        return
    if args.generic:
        _generic_section(args)
        return
    if args.rank:
        lines = _rank_section(args.limit, 4000 if args.quick else None)
        lines += ["", "Load average at the end: "
                  f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}.", ""]
        out = write_results("paths", "\n".join(lines), quick=args.quick, section=args.rank)
        print(f"wrote {out}")
        return
    n_path, n_cv, n_rank = (1000, 2000, 4000) if args.quick else (2000, 5000, None)
    lines = [
        "# Warm-started paths (`benchmarks/paths.py`)", "",
        f"BLAS threads {os.environ['OMP_NUM_THREADS']}; Python {platform.python_version()}, "
        f"numpy {np.__version__}; numba "
        f"{'installed' if importlib.util.find_spec('numba') else NO_NUMBA}. A shared machine: "
        "other sessions ran beside this one; the 1-minute load before each row is in its last "
        "column, and CPU time (this process's) is given beside wall time.", "",
    ]

    # 1. the smo C path
    lines += [f"## 1. C path of the RBF SVM dual, smo (ringnorm n = {n_path}, 10 values of C "
              "in [0.1, 100])", "",
              "| run | wall [s] | CPU [s] | smo updates | statuses | max rel. objective diff "
              "vs cold | JIT load [s] | load |", "|---|---|---|---|---|---|---|---|"]
    runs: dict = {}
    modes = ("cold", "warm", "cold, Gram once", "warm, Gram once")
    loads: dict = {m: [] for m in modes}
    for _ in range(PATH_REPEATS):  # alternating; each mode's best wall and CPU apart
        for mode in modes:
            loads[mode].append(os.getloadavg()[0])
            state, res, wall = run_with_limit(_svm_path, (n_path, mode), args.limit)
            held = runs.get(mode)
            if state != "ok" or held is None or held[0] != "ok":
                runs[mode] = (state, res, wall) if held is None or held[0] != "ok" else held
                continue
            runs[mode] = ("ok", {**held[1], **{k: min(held[1][k], res[k]) for k in
                                               ("wall", "cpu", "rest_wall", "rest_cpu")}},
                          wall)
    for mode in modes:
        state, res, wall = runs[mode]
        load = f"{min(loads[mode]):.1f}-{max(loads[mode]):.1f}"
        diff = ""
        if state == "ok" and mode != "cold" and runs["cold"][0] == "ok":
            a = np.asarray(res["objectives"])
            b = np.asarray(runs["cold"][1]["objectives"])
            diff = f"{float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))):.1e}"
        its = str(res["iterations"]) if state == "ok" else ""
        sts = ", ".join(res["statuses"]) if state == "ok" else ""
        jit = f"{res['jit']:.2f}" if state == "ok" else ""
        lines.append(f"| {mode} | {_cell(state, res, wall)} | {_cell(state, res, wall, 'cpu')}"
                     f" | {its} | {sts} | {diff} | {jit} | {load} |")
        print(lines[-1], flush=True)
    if all(runs[m][0] == "ok" for m in runs):
        r = {m: (runs[m][1]["wall"], runs[m][1]["cpu"]) for m in runs}
        rest = {m: (runs[m][1]["rest_wall"], runs[m][1]["rest_cpu"]) for m in runs}

        def ratio(a: str, b: str, r: dict = r) -> str:
            return f"{r[a][0] / r[b][0]:.2f}, {r[a][1] / r[b][1]:.2f}"

        lines += ["", "Ratios (wall, CPU), the same kernel policy on both sides (target >= 3 "
                  f"for the first): cold / warm (columns on demand): {ratio('cold', 'warm')}; "
                  "cold / warm with the Gram matrix once: "
                  f"{ratio('cold, Gram once', 'warm, Gram once')}. Across policies, for "
                  f"reference: cold / warm, Gram once: {ratio('cold', 'warm, Gram once')}; "
                  f"cold / cold, Gram once: {ratio('cold', 'cold, Gram once')}. Each row "
                  "loads smo's compiled code first (`_jit_load`, its own column), untimed: "
                  "a once-per-process cost, not a cost of the path. Each row: the best wall "
                  f"and the best CPU time of {PATH_REPEATS} runs, the four modes alternating "
                  "(load: its range over them). Both sides certify each "
                  "value from the program's data; the certificate evaluates each kernel "
                  "column of the data set once per process (cold and warm alike).",
                  "", "The first value is a cold solve on both sides; without it (the nine "
                  "values after it, timed from the second value's build; the best of the "
                  "runs apart): cold / warm (columns on demand): "
                  f"{ratio('cold', 'warm', rest)}; cold / warm with the Gram matrix once: "
                  f"{ratio('cold, Gram once', 'warm, Gram once', rest)}. The target reads the "
                  "whole path (the ratio above)."]

    # 2. SVMClassifierCV against GridSearchCV(SVC())
    lines += ["", f"## 2. SVMClassifierCV against GridSearchCV (ringnorm n = {n_cv}, 10 values "
              "of C in [0.01, 100], 5 folds, accuracy)", "",
              "| run | wall [s] | CPU [s] | best C | best score | load |",
              "|---|---|---|---|---|---|"]
    cv_runs = {}
    for which in ("SVMClassifierCV (smo path)", "GridSearchCV(SVC())",
                  "GridSearchCV(SVMClassifier(solver='smo'))"):
        load = os.getloadavg()[0]
        state, res, wall = run_with_limit(_svm_cv, (n_cv, which), args.limit)
        cv_runs[which] = (state, res)
        extra = (f"{res['best']:.4g} | {res['score']:.6f}" if state == "ok" else " | ")
        lines.append(f"| {which} | {_cell(state, res, wall)} | "
                     f"{_cell(state, res, wall, 'cpu')} | {extra} | {load:.1f} |")
        print(lines[-1], flush=True)
    ours = cv_runs["SVMClassifierCV (smo path)"]
    if ours[0] == "ok":
        ratios = [f"{k} / SVMClassifierCV: {v[1]['wall'] / ours[1]['wall']:.2f} (wall), "
                  f"{v[1]['cpu'] / ours[1]['cpu']:.2f} (CPU)"
                  for k, v in cv_runs.items() if v[0] == "ok" and k != next(iter(cv_runs))]
        lines += ["", "Ratios (target: GridSearchCV(SVC()) / SVMClassifierCV >= 1): "
                  + "; ".join(ratios) + "."]

    lines += _rank_section(args.limit, n_rank)
    lines += ["", f"Load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}.",
              ""]
    out = write_results("paths", "\n".join(lines), quick=args.quick)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
