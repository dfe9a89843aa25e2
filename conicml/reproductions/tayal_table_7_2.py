"""Tayal 2014 Table 7.2: SVM, GMKL, FULL-FS and AO-II on 20-dimensional NDCC data with 100 probes.

Data (section 7.5.1): 200 training, 200 validation and 1 000 test points, 20 informative
features and 100 N(0, 1) probes, standardised with the training part's statistics. The
thesis uses Thompson's NDCC generator, which is not available offline; the data here
come from :func:`conicml.datasets.ndcc_like`, written from the thesis's description, and
differ from Thompson's in what the thesis leaves unsaid: the cluster centres are four
random sign-vertex pairs +-v of each of three concentric cubes (half-widths 1, 2, 3,
scaled by 2/sqrt(20)) rather than Thompson's vertex layout, each cluster's covariance is
A A^T with A of N(0, spread^2 / 20) entries, the cluster sizes Dirichlet(2) weights, and
each vertex pair's class is a coin flip. Its numbers are therefore compared with the
thesis's in pattern (which method finds the 20 informative features, which errs less),
and in value only loosely.

Methods: the RBF SVM on all features (scikit-learn ``SVC`` with exp(-||x - x'||^2 /
sigma^2), the thesis's full grid (log2 C, log2 sigma) in {-5..15} x {-10, -8, .., 10}),
and the feature-scaled SVM (7.7) with kernel (7.17) and penalty mu ||z||_1 solved by
``fs-gmkl`` (GMKL), ``fs-full`` (FULL-FS) and ``fs-ao2`` (Margin AO-II) from z^0 = 1, each
at a reduced (C, mu) grid (``GRID``, see ``PROTOCOL``); every model is chosen by its error on the
validation points, as the thesis. A feature counts as selected when z_l > 1 % of max z.
Objective: Omega (7.7) at the returned point, at the method's chosen (C, mu) and, to
compare the methods on one problem, at the (C, mu) chosen for AO-II. Every fit runs in
a child process with ``--limit`` seconds (TIMEOUT recorded).

Usage: ``conicml reproduce tayal_table_7_2 [--quick] [--jobs 2] [--limit 2400]``
"""

from __future__ import annotations

#: BLAS/OpenMP threads; the runner sets them before NumPy starts
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")

import argparse  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.datasets import ndcc_like  # noqa: E402
from conicml.exceptions import ProgramError  # noqa: E402
from conicml.formulations.feature_scaling import feature_scaled_svm, fs_kernel  # noqa: E402

from ._harness import machine, progress, run_with_limit, write_results  # noqa: E402

#: how the tables set the thesis's numbers beside ours (conicml.reproductions._tables)
THESIS_LAYOUT = "columns"
TABLES = ("000:T7.2",)
RATE_CELLS = "err"  # the test error column is a rate (%); objectives and counts are not
# an estimate of the default run on 2 cores: 3 methods x 16 (C, mu) points, two fits at
# a time; the SVM grid is seconds
EXPECTED_SECONDS = 1200
#: (log2 C, log2 mu) of the feature-scaling methods: a 4 x 4 block of the thesis's grid;
#: log2 C = 6 because FULL-FS and AO-II chose the largest C of the 3 x 4 block
GRID = tuple((lc, lm) for lc in (0, 2, 4, 6) for lm in (-6, -4, -2, 0))
PROTOCOL = ("reduced: an NDCC-like stand-in (Thompson's generator is not available; "
            "conicml.datasets.ndcc_like, differences in the entry's description), one draw "
            "(seed 0, cluster spread 0.8); GMKL, FULL-FS and AO-II at log2 C in {0, 2, 4, 6} x "
            "log2 mu in {-6, -4, -2, 0} chosen on the 200 validation points (thesis: the "
            "21 x 11 grid log2 C = -5..15 x log2 mu = -10:2:10, 231 non-convex fits per "
            "method), for time; the SVM baseline on the thesis's full grid")

#: Table 7.2: objective, test error %, correct, incorrect features
THESIS = {"SVM": (106.1, 44.3, 20, 100), "GMKL": (86.1, 32.0, 15, 6),
          "FULL-FS": (75.2, 16.5, 17, 1), "AO-II": (62.4, 10.5, 20, 0)}
METHODS = {"GMKL": "gmkl", "FULL-FS": "full", "AO-II": "ao2"}
N_INFORMATIVE, N_PROBES = 20, 100


def make_data(seed: int, spread: float):
    """(train, validation, test) parts, standardised with the training statistics."""
    X, y = ndcc_like(1400, n_informative=N_INFORMATIVE, n_probes=N_PROBES, random_state=seed,
                     spread=spread)
    m, s = X[:200].mean(axis=0), X[:200].std(axis=0)
    X = (X - m) / np.where(s > 0, s, 1.0)
    return (X[:200], y[:200]), (X[200:400], y[200:400]), (X[400:], y[400:])


def fs_fit(method: str, C: float, mu: float, seed: int, spread: float) -> dict:
    """One feature-scaling fit: validation and test error, selection, objective."""
    (Xtr, ytr), (Xva, yva), (Xte, yte) = make_data(seed, spread)
    program = feature_scaled_svm(Xtr, ytr, C, mu)
    try:
        solution = cm.solve(program, f"fs-{method}")
    except ProgramError as exc:  # e.g. every scale driven to 0 (mu too large)
        return {"failed": str(exc).split(";")[0]}
    r = program.decode(solution)

    def error(Xp, yp):
        f = fs_kernel(Xp, Xtr, r["z"]) @ r["dual_coef"] + r["b"]
        return float(np.mean(np.where(f >= 0, 1.0, -1.0) != yp))

    sel = np.asarray(r["support"], dtype=bool)
    return {"val": error(Xva, yva), "test": error(Xte, yte), "objective": float(r["objective"]),
            "correct": int(sel[:N_INFORMATIVE].sum()), "incorrect": int(sel[N_INFORMATIVE:].sum()),
            "label": r["label"], "status": solution.status.value}


def svm_baseline(seed: int, spread: float, quick: bool) -> dict:
    """RBF SVM on all features, (C, sigma) chosen on the validation points."""
    (Xtr, ytr), (Xva, yva), (Xte, yte) = make_data(seed, spread)
    log2_C = range(-5, 16, 5 if quick else 1)
    log2_sigma = range(-10, 11, 10 if quick else 2)
    best = None
    for lc in log2_C:
        for ls in log2_sigma:
            model = SVC(C=2.0**lc, gamma=2.0 ** (-2 * ls)).fit(Xtr, ytr)
            val = float(np.mean(model.predict(Xva) != yva))
            if best is None or val < best[0]:
                best = (val, lc, ls, model)
    val, lc, ls, model = best
    return {"val": val, "test": float(np.mean(model.predict(Xte) != yte)),
            "log2_C": lc, "log2_sigma": ls}


def main() -> int:
    parser = argparse.ArgumentParser(prog="conicml reproduce tayal_table_7_2",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="one (C, mu) point, a coarse SVM grid")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--spread", type=float, default=0.8)
    parser.add_argument("--jobs", type=int, default=2, help="fits at a time")
    parser.add_argument("--limit", type=float, default=2400.0, help="seconds per fit")
    args = parser.parse_args()
    began = time.perf_counter()
    points = ([(1.0, 0.25)] if args.quick
              else [(2.0**lc, 2.0**lm) for lc, lm in GRID])
    tasks = [(label, C, mu) for label in METHODS for C, mu in points]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_with_limit, fs_fit,
                               (METHODS[label], C, mu, args.seed, args.spread), args.limit)
                   for label, C, mu in tasks]
        runs = [f.result() for f in progress(futures, "feature-scaling fits")]
    svm = svm_baseline(args.seed, args.spread, args.quick)
    fits = {t: r for t, r in zip(tasks, runs)}

    def ok(label, C, mu):
        state, r, _ = fits[label, C, mu]
        return r if state == "ok" and "failed" not in r else None

    def chosen(label):
        cands = [(ok(label, C, mu)["val"], C, mu) for C, mu in points if ok(label, C, mu)]
        return min(cands) if cands else None

    ao2 = chosen("AO-II")
    lines = ["# Tayal 2014 Table 7.2: 20-dimensional NDCC, 100 probes", "",
             f"Machine: {machine()}. NDCC-like data (seed {args.seed}, spread "
             f"{args.spread:g}): 200 train / 200 validation / 1000 test, {N_INFORMATIVE} "
             f"informative features + {N_PROBES} probes. Feature-scaling methods at (C, mu) "
             f"in {points}, chosen on the validation points; SVM over the thesis's "
             f"(log2 C, log2 sigma) grid: chosen log2 C = {svm['log2_C']}, log2 sigma = "
             f"{svm['log2_sigma']} (validation error {100 * svm['val']:.1f} %).", "",
             "| method | chosen (C, mu) | objective | thesis objective | test error % | "
             "thesis test error % | correct | thesis correct | incorrect | thesis incorrect "
             "| objective at AO-II's (C, mu) | validation error % | end point |",
             "|" + "---|" * 13]
    th = THESIS["SVM"]
    lines.append(f"| SVM | log2 C = {svm['log2_C']}, log2 sigma = {svm['log2_sigma']} | - | "
                 f"{th[0]} | {100 * svm['test']:.1f} | {th[1]} | {N_INFORMATIVE} | {th[2]} | "
                 f"{N_PROBES} | {th[3]} | - | {100 * svm['val']:.1f} | - |")
    for label in METHODS:
        th = THESIS[label]
        pick = chosen(label)
        if pick is None:
            lines.append(f"| {label} | no fit finished | | {th[0]} | | {th[1]} | | {th[2]} "
                         f"| | {th[3]} | | | |")
            continue
        _, C, mu = pick
        r = ok(label, C, mu)
        at_ao2 = ok(label, ao2[1], ao2[2]) if ao2 else None
        at_text = "-" if at_ao2 is None else f"{at_ao2['objective']:.1f}"
        lines.append(
            f"| {label} | ({C:g}, {mu:g}) | {r['objective']:.1f} | {th[0]} | "
            f"{100 * r['test']:.1f} | {th[1]} | {r['correct']} | {th[2]} | {r['incorrect']} | "
            f"{th[3]} | {at_text} | {100 * r['val']:.1f} | {r['label']} ({r['status']}) |")
    errs = {"SVM": svm["test"]}
    errs.update({label: ok(label, *chosen(label)[1:])["test"] for label in METHODS
                 if chosen(label)})
    ours_order = " < ".join(sorted(errs, key=errs.get))
    lines += ["", "Outside the thesis's numbers, measured: the SVM on all 120 features errs "
              f"{100 * svm['test']:.1f} % here against the thesis's 44.3 % (chance: 50 %), so "
              "the stand-in's classes are much easier to separate without selection than "
              "Thompson's NDCC and every error is on another scale; the comparable pattern "
              f"is the order of the test errors: ours {ours_order}, the thesis's AO-II < "
              "FULL-FS < GMKL < SVM. The objectives depend on (C, mu), which the thesis "
              "does not give for its table, so they compare only within a column."]
    lines += ["", "Every feature-scaling fit (validation / test error %, correct + incorrect "
              "features, objective, seconds):", ""]
    for (label, C, mu), (state, r, wall) in fits.items():
        if state != "ok":
            text = f"{state.upper()} after {wall:.0f} s" + (f": {r}" if r else "")
        elif "failed" in r:
            text = f"no model: {r['failed']}"
        else:
            text = (f"{100 * r['val']:.1f} / {100 * r['test']:.1f}, {r['correct']} + "
                    f"{r['incorrect']}, {r['objective']:.2f}, {wall:.0f} s, {r['label']}")
        lines.append(f"- {label} at (C, mu) = ({C:g}, {mu:g}): {text}")
    lines += ["", "The SVM's objective is not given: the thesis does not say at which mu it "
              "evaluates Omega for the SVM (z fixed at 1/sigma).", "",
              f"Total wall time: {time.perf_counter() - began:.0f} s."]
    write_results("tayal_table_7_2", "\n".join(lines) + "\n", quick=args.quick)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
