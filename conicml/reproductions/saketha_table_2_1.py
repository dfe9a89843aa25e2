"""Reproduce the pattern of Saketha Nath's Table 2.1 (thesis ch. 2, SDM'07).

The chance-constrained classifier with specified rates
(:func:`conicml.formulations.sr.specified_rates`) on breast_cancer (WDBC,
+ = malignant), heart (Cleveland), twonorm (500 points, d = 2) and ringnorm
(400 points, d = 2), with eta_2 = eta_neg held fixed per dataset and
eta_1 = eta_pos swept over 0.9, 0.7, 0.5, 0.3, 0.1 (the thesis's grid); what the
columns mean is in the Notes of :func:`main`. The unreported ridge eps is swept on
ringnorm and, with the Gaussian kernel's width, on the rows outside Table 2.1 that the
repetitions leave unexplained (:func:`eps_width_sweep`).

Every solve has a time limit (``--limit``, passed to both solvers) as a safety net;
a solve that hits it is flagged T and counted below the table. BLAS runs
single-threaded for both solvers (the machine is shared). Usage::

    conicml reproduce saketha_table_2_1 [--quick] [--runs R] [--limit S]

writes ``conicml-results/saketha_table_2_1.md`` (``--quick`` only prints).
"""

from __future__ import annotations

#: BLAS/OpenMP threads; the runner sets them before NumPy starts
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.formulations import specified_rates as sr  # noqa: E402

from ._harness import machine, progress, write_results  # noqa: E402
from ._records import within_spread  # noqa: E402
from ._tables import Pair  # noqa: E402

#: how the tables set the thesis's numbers beside ours (conicml.reproductions._tables)
THESIS_LAYOUT = "columns"
TABLES = ('003:T2.1',)
EXPECTED_SECONDS = 600  # an estimate: the table, the eps sweeps and study, the ablations
PROTOCOL = ("full: every cell at 3 x 3-fold CV and the thesis's eta grid, sizes and zeta; "
            "the thesis does not report its ridge epsilon (ours: 1e-2 linear, 1e-3 RBF; swept "
            "on ringnorm); twonorm / ringnorm drawn by Breiman's generators at d = 2 (the "
            "thesis's draw, class coding and d = 2 offset are unreported: both ablated); a "
            "per-solve limit of 300 s as a safety net (solves that hit it are counted in "
            "the record)")
RATE_CELLS = '.'  # every compared cell is an accuracy, AUC or error rate

ETA1 = [0.9, 0.7, 0.5, 0.3, 0.1]
EPS = {"linear": 1e-2, "rbf": 1e-3}
#: name -> (eta_2, zeta); thesis Sec. 2.5 / Table 2.1
DATASETS = {
    "breast_cancer": (0.3, 0.032),
    "ringnorm": (0.7, 3.0),
    "twonorm": (0.3, 20.0),
    "heart": (0.9, 0.16),
}
#: thesis Table 2.1 (errors in %): name -> eta_1 -> (NL-SOCP +, -, L-SOCP +, -); None = ×
THESIS = {
    "breast_cancer": {0.9: (12.74, 0.56, 16.98, 0.00), 0.7: (10.85, 1.12, 13.68, 0.00),
                      0.5: (4.72, 1.96, 5.19, 0.84), 0.3: (3.30, 2.24, 3.77, 2.80),
                      0.1: (2.36, 4.20, None, None)},
    "ringnorm": {0.9: (30.14, 31.94, None, None), 0.7: (20.57, 36.65, None, None),
                 0.5: (12.44, 41.89, None, None), 0.3: (10.05, 46.07, None, None),
                 0.1: (7.66, 47.12, None, None)},
    "twonorm": {0.9: (10.15, 1.28, 9.02, 0.43), 0.7: (6.39, 1.71, 6.77, 0.43),
                0.5: (5.26, 2.56, 4.51, 1.28), 0.3: (5.64, 4.27, 3.38, 1.71),
                0.1: (7.52, 5.98, None, None)},
    "heart": {0.9: (14.60, 22.50, 18.99, 14.38), 0.7: (13.14, 27.50, 17.52, 17.50),
              0.5: (11.68, 32.50, 13.14, 21.88), 0.3: (10.95, 30.00, 10.22, 36.25),
              0.1: (10.95, 30.00, None, None)},
}
SOLVERS = {"socp": "clarabel", "iter": "lin-han"}


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The thesis's datasets (twonorm / ringnorm in d = 2 as stated in Sec. 2.5)."""
    if name == "twonorm":
        return cm.datasets.twonorm(500, dim=2, random_state=0)
    if name == "ringnorm":
        return cm.datasets.ringnorm(400, dim=2, random_state=0)
    return cm.datasets.load(name)


def solve_fold(Xtr, ytr, Xte, yte, eta1, eta2, kernel, zeta, limit, eps=None) -> dict:
    """Both solvers on one fold; errors, times, iterations, objective agreement."""
    kw = {"kernel": kernel, "ridge": EPS[kernel] if eps is None else eps, "cone": "factor"}
    if kernel == "rbf":
        kw["gamma"] = zeta
    out: dict = {}
    t0 = time.perf_counter()
    sr.specified_rates(Xtr, ytr, eta1, eta2, **kw)  # the shared kernel preparation
    out["prep"] = time.perf_counter() - t0
    for key, solver in SOLVERS.items():
        prog = sr.specified_rates(Xtr, ytr, eta1, eta2, **kw)
        t0 = time.perf_counter()
        sol = cm.solve(prog, solver, time_limit=limit)
        wall = time.perf_counter() - t0
        rec = {"status": sol.status, "time": wall, "iters": sol.iterations,
               "objective": sol.objective}
        if sol.ok:
            f = sr.rates_decision_values(prog.data, prog.decode(sol), Xte)
            rec["fn"] = int(np.sum((f < 0) & (yte > 0)))
            rec["fp"] = int(np.sum((f >= 0) & (yte < 0)))
        out[key] = rec
    return out


def run_cell(X, y, name, kernel, eta1, runs, limit, eps=None) -> dict:
    eta2, zeta = DATASETS[name]
    folds = []
    for run in range(runs):
        skf = StratifiedKFold(3, shuffle=True, random_state=run)
        for tr, te in skf.split(X, y):
            mu, sd = X[tr].mean(0), X[tr].std(0)
            sd[sd == 0] = 1.0
            Xtr, Xte = (X[tr] - mu) / sd, (X[te] - mu) / sd
            rec = solve_fold(Xtr, y[tr], Xte, y[te], eta1, eta2, kernel, zeta, limit, eps)
            rec["npos"], rec["nneg"] = int(np.sum(y[te] > 0)), int(np.sum(y[te] < 0))
            folds.append(rec)
    return {"folds": folds}


def summarise(cell: dict, key: str) -> tuple[str, str, dict]:
    """('+ve %', '-ve %', counts of non-optimal folds by cause) for one solver."""
    folds = cell["folds"]
    ok = [f for f in folds if "fn" in f[key]]
    counts = {"inf": 0, "limit": 0, "fail": 0}
    for f in folds:
        status = f[key]["status"]
        if status in (cm.Status.INFEASIBLE, cm.Status.INFEASIBLE_INACCURATE):
            counts["inf"] += 1
        elif status is cm.Status.USER_LIMIT:
            counts["limit"] += 1
        elif not status.has_solution:
            counts["fail"] += 1
    if not ok:
        label = "×" if counts["inf"] == len(folds) else "TIMEOUT" if counts["limit"] else "FAIL"
        return label, "", counts
    fn = sum(f[key]["fn"] for f in ok) / sum(f["npos"] for f in ok)
    fp = sum(f[key]["fp"] for f in ok) / sum(f["nneg"] for f in ok)
    return f"{100 * fn:05.2f}", f"{100 * fp:05.2f}", counts


def feasible(cell: str) -> bool:
    """Whether an error cell of :func:`summarise` is a number (not × / TIMEOUT / FAIL / '')."""
    return cell not in ("×", "TIMEOUT", "FAIL", "")


def flags(cs: dict, ci: dict) -> str:
    """Non-optimal folds 'SOCP/ITER' by cause: × infeasible, F solver failure, T limit."""
    parts = [f"{sym}{cs[k]}/{ci[k]}" for k, sym in (("inf", "×"), ("fail", "F"), ("limit", "T"))
             if cs[k] or ci[k]]
    return " ".join(parts) or "-"


def thesis_cell(name: str, eta1: float, kernel: str) -> str:
    vals = THESIS[name][eta1]
    pos, neg = (vals[0], vals[1]) if kernel == "rbf" else (vals[2], vals[3])
    return "×" if pos is None else f"{pos:05.2f} / {neg:05.2f}"


def eps_study(limit: float) -> list[str]:
    """Ringnorm, Gaussian kernel, one 3-fold run: the ridge eps against feasibility and
    lin-han's work (its iterations grow like 1/eps: the inner balls have radius
    lambda_min(H + eps I)/2 * ||grad q||, and H is singular, note P5)."""
    X, y = load("ringnorm")
    lines = ["| ε | η1 | SOCP +ve / −ve | ITER +ve / −ve | non-optimal folds | SOCP s "
             "| lin-han s | lin-han iters (mean) |", "|" + "---|" * 8]
    for eps in (1e-3, 1e-4, 1e-5):
        for eta1 in (0.5, 0.3, 0.1):
            cell = run_cell(X, y, "ringnorm", "rbf", eta1, 1, limit, eps)
            sp, sn, cs = summarise(cell, "socp")
            ip, in_, ci = summarise(cell, "iter")
            folds = cell["folds"]
            iters = [f["iter"]["iters"] for f in folds if f["iter"]["status"] is not
                     cm.Status.INFEASIBLE]
            lines.append(
                f"| {eps:g} | {eta1} | {sp} / {sn} | {ip} / {in_} | {flags(cs, ci)} "
                f"| {sum(f['socp']['time'] for f in folds):.2f} "
                f"| {sum(f['iter']['time'] for f in folds):.2f} "
                f"| {np.mean(iters) if iters else float('nan'):.0f} |")
            print(lines[-1], flush=True)
    return lines


#: the ridge values of the sweep (the thesis does not report its eps)
SWEEP_EPS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)


def socp_cell(X, y, eta1, eta2, zeta, eps, limit, runs=1, kernel="rbf", first=0) -> dict:
    """The generic SOCP (clarabel) alone on ``runs`` 3-fold CV shuffles (seeds ``first``,
    ``first + 1``, ...), standardised as the table: {"folds": [...]} for :func:`summarise`."""
    folds = []
    for run in range(first, first + runs):
        skf = StratifiedKFold(3, shuffle=True, random_state=run)
        for tr, te in skf.split(X, y):
            mu, sd = X[tr].mean(0), X[tr].std(0)
            sd[sd == 0] = 1.0
            Xtr, Xte = (X[tr] - mu) / sd, (X[te] - mu) / sd
            kw = {"kernel": kernel, "ridge": eps, "cone": "factor"}
            if kernel == "rbf":
                kw["gamma"] = zeta
            prog = sr.specified_rates(Xtr, y[tr], eta1, eta2, **kw)
            sol = cm.solve(prog, "clarabel", time_limit=limit)
            rec = {"status": sol.status, "npos": int(np.sum(y[te] > 0)),
                   "nneg": int(np.sum(y[te] < 0))}
            if sol.ok:
                f = sr.rates_decision_values(prog.data, prog.decode(sol), Xte)
                rec["fn"] = int(np.sum((f < 0) & (y[te] > 0)))
                rec["fp"] = int(np.sum((f >= 0) & (y[te] < 0)))
            folds.append({"socp": rec, "npos": rec["npos"], "nneg": rec["nneg"]})
    return {"folds": folds}


def eps_sweep(limit: float) -> list[str]:
    """Ringnorm, Gaussian kernel, 1 x 3-fold CV, the generic SOCP (clarabel) only: every
    eta_1 of the thesis's grid at each ridge eps of SWEEP_EPS, beside the thesis's cells,
    and which eps comes closest (mean ``|ours - thesis|`` over the cells both have feasible,
    and the number of cells whose feasibility matches the thesis's)."""
    X, y = load("ringnorm")
    eta2, zeta = DATASETS["ringnorm"]
    # "Table 2.1" rather than "thesis" in the header: a sweep, not cells of the reproduction
    lines = ["| ε | η1 | SOCP +ve | SOCP −ve | Table 2.1 SOCP +ve / −ve | infeasible folds |",
             "|" + "---|" * 6]
    score, half = {}, []
    for eps in SWEEP_EPS:
        gaps, match = [], 0
        for eta1 in ETA1:
            folds = socp_cell(X, y, eta1, eta2, zeta, eps, limit)["folds"]
            sp, sn, cs = summarise({"folds": folds}, "socp")
            th = THESIS["ringnorm"][eta1][:2]
            ok = feasible(sp)
            match += ok == (th[0] is not None)
            if ok and th[0] is not None:
                gaps += [abs(float(sp) - th[0]), abs(float(sn) - th[1])]
            if ok and eta1 == 0.5:
                half.append((float(sp), float(sn)))
            lines.append(f"| {eps:g} | {eta1} | {sp} | {sn} | "
                         f"{thesis_cell('ringnorm', eta1, 'rbf')} | {cs['inf']}/3 |")
        score[eps] = (match, float(np.mean(gaps)) if gaps else float("nan"), len(gaps) // 2)
    lines += ["", "| ε | cells feasible as in the thesis (of 5) | mean abs. gap to the thesis "
              "(points) | over cells |", "|---|---|---|---|"]
    lines += [f"| {e:g} | {m} | {g:.2f} | {c} |" for e, (m, g, c) in score.items()]
    best = max(score, key=lambda e: (score[e][0], -np.nan_to_num(score[e][1], nan=1e9)))
    lines += ["", f"Closest to the thesis's ringnorm RBF column: ε = {best:g} "
              f"({score[best][0]}/5 cells feasible as in the thesis, mean gap "
              f"{score[best][1]:.2f} points over {score[best][2]} cells)."]
    if half:
        lines += [f"At η1 = 0.5 ours over the feasible ε: +ve {min(h[0] for h in half):.2f} .. "
                  f"{max(h[0] for h in half):.2f}, −ve {min(h[1] for h in half):.2f} .. "
                  f"{max(h[1] for h in half):.2f} (thesis "
                  f"{thesis_cell('ringnorm', 0.5, 'rbf')}): ε moves feasibility, not these "
                  "errors, when the ranges are narrow."]
    return lines


#: rows of the table with cells outside Table 2.1 that the repetitions (outside_cells)
#: leave unexplained: (data set, kernel, eta_1), swept over SWEEP_EPS and SWEEP_WIDTHS
SWEEP_ROWS = (("twonorm", "rbf", 0.1), ("heart", "rbf", 0.3), ("heart", "rbf", 0.1),
              ("heart", "linear", 0.3), ("ringnorm", "rbf", 0.9), ("ringnorm", "rbf", 0.5))
#: the Gaussian kernel's zeta of the sweep, as multiples of the thesis's (1 = the table's)
SWEEP_WIDTHS = (0.25, 1.0, 4.0)
SIDES = ("+ve", "−ve")


def within(cell: str, thesis: float) -> bool:
    """Whether an error cell is within the summary's tolerance of Table 2.1's number
    (:func:`within_spread` with RATE_CELLS: 2 points)."""
    return feasible(cell) and within_spread(Pair("SOCP % error", float(cell), thesis),
                                            RATE_CELLS)


def row_sweep(name: str, kernel: str, eta1: float, limit: float, runs: int) -> dict:
    """One row of the table at the table's protocol (``runs`` x 3-fold CV, the generic
    SOCP) for every ridge eps of SWEEP_EPS and, with the Gaussian kernel, every width of
    SWEEP_WIDTHS: {(eps, width multiple or None): (+ve, -ve, counts)} of :func:`summarise`."""
    X, y = load(name)
    eta2, zeta = DATASETS[name]
    widths = SWEEP_WIDTHS if kernel == "rbf" else (None,)
    return {(eps, w): summarise(socp_cell(X, y, eta1, eta2, zeta * (w or 1.0), eps, limit,
                                          runs, kernel), "socp")
            for eps in SWEEP_EPS for w in widths}


def setting_label(eps: float, w: float | None) -> str:
    """'ε = .., ζ × ..' of a sweep setting (no width for the linear kernel)."""
    return f"ε = {eps:g}" + ("" if w is None else f", ζ × {w:g}")


def eps_width_sweep(limit: float, runs: int) -> list[str]:
    """Every row of SWEEP_ROWS at every ridge eps (and kernel width), beside Table 2.1;
    then, per setting, the cells outside at the table's setting it brings within 2 points
    and what it does to the other cell of the same row."""
    lines = ["| data set | kernel | η1 | ε | ζ | SOCP +ve | SOCP −ve | Table 2.1 SOCP +ve / −ve "
             "| non-optimal folds (× / F / T) |", "|" + "---|" * 9]
    brought: dict = {}  # setting -> the cells it brings within, with the row's other cell
    missed, whole = [], []
    for name, kernel, eta1 in progress(SWEEP_ROWS, "ε / width sweep"):
        cells = row_sweep(name, kernel, eta1, limit, runs)
        zeta = DATASETS[name][1]
        col = 0 if kernel == "rbf" else 2
        th = THESIS[name][eta1][col:col + 2]
        base = (EPS[kernel], 1.0 if kernel == "rbf" else None)
        for (eps, w), (sp, sn, cs) in cells.items():
            width = "-" if w is None else f"{zeta * w:g}" + (" (table)" if w == 1.0 else "")
            lines.append(f"| {name} | {kernel} | {eta1} | {eps:g} | {width} | {sp} | {sn} | "
                         f"{thesis_cell(name, eta1, kernel)} | {cs['inf']} / {cs['fail']} / "
                         f"{cs['limit']} |")
            print(lines[-1], flush=True)
        both = [setting_label(*s) for s in cells if within(cells[s][0], th[0])
                and within(cells[s][1], th[1])]
        whole.append(f"{name} {kernel} η1 = {eta1}: {'; '.join(both) or 'none'}")
        for k in (0, 1):
            if within(cells[base][k], th[k]):
                continue
            what = f"{name} {kernel} {SIDES[k]} at η1 = {eta1}"
            hits = [s for s in cells if within(cells[s][k], th[k])]
            for s in hits:
                other, inf = cells[s][1 - k], cells[s][2]["inf"]
                brought.setdefault(s, []).append(
                    f"{what} ({cells[s][k]}{f', {inf}/{3 * runs} folds ×' if inf else ''}; "
                    f"Table 2.1 {th[k]:05.2f}; the row's {SIDES[1 - k]} "
                    f"{other or '×'} against {cells[base][1 - k] or '×'} at the table's "
                    f"setting, {'within' if within(other, th[1 - k]) else 'outside'})")
            if not hits:
                near = [s for s in cells if feasible(cells[s][k])]
                best = min(near, key=lambda s: abs(float(cells[s][k]) - th[k]), default=None)
                missed.append(f"{what} (table {cells[base][k] or '×'}, Table 2.1 "
                              f"{th[k]:05.2f}; closest "
                              + ("none feasible" if best is None else
                                 f"{cells[best][k]} at {setting_label(*best)}")
                              + (f", {cells[best][2]['inf']}/{3 * runs} folds ×"
                                 if best and cells[best][2]["inf"] else "") + ")")
    out = ["", "Which setting brings which cells (outside at the table's ε and ζ) within "
           "the summary's 2 points of Table 2.1, and the other cell of the same row there:", ""]
    out += [f"- {setting_label(*s)}: " + "; ".join(v) for s, v in
            sorted(brought.items(), key=lambda kv: (kv[0][1] is None, -kv[0][0], kv[0][1] or 0))]
    out += [f"- no swept setting: {'; '.join(missed)}" if missed else
            "- every cell is brought within by some setting"]
    return lines + out + ["", "Settings with both cells of the row within 2 points: "
                          + "; ".join(whole) + "."]


#: the ringnorm versions of the ablation: (class coding, offset a on the diagonal, ridge eps);
#: "narrow +" = the unit-covariance class N(a 1, I) positive (ours: the wide N(0, 4 I)),
#: a = 1/sqrt(20) = Breiman's 20-d offset kept at d = 2 (ours: 1/sqrt(d))
RING_VERSIONS = [(coding, a, eps) for coding in ("wide +", "narrow +")
                 for a in ("1/√2", "1/√20") for eps in (1e-3, 1e-6)]


def ringnorm_version(coding: str, a: str) -> tuple[np.ndarray, np.ndarray]:
    """The table's ringnorm draw (same normal matrix) with another class coding / offset."""
    X, y = load("ringnorm")
    if a == "1/√20":
        X = X - (y < 0)[:, None] * (1 / np.sqrt(2) - 1 / np.sqrt(20))
    return X, (y if coding == "wide +" else -y)


def ringnorm_versions(limit: float, runs: int) -> tuple[list[str], dict]:
    """Ringnorm, Gaussian kernel, the generic SOCP at the table's protocol (``runs`` x
    3-fold CV) for every version of RING_VERSIONS; returns the lines and, per eta_1, the
    (+ve, -ve) of every feasible version."""
    eta2, zeta = DATASETS["ringnorm"]
    lines = ["| class coding | a | ε | η1 | SOCP +ve | SOCP −ve | Table 2.1 SOCP +ve / −ve "
             "| infeasible folds |", "|" + "---|" * 8]
    summary, found = [], {e: [] for e in ETA1}
    for coding, a, eps in RING_VERSIONS:
        X, y = ringnorm_version(coding, a)
        gaps, feasible_cells, inside = [], 0, 0
        for eta1 in ETA1:
            sp, sn, cs = summarise(socp_cell(X, y, eta1, eta2, zeta, eps, limit, runs), "socp")
            th = THESIS["ringnorm"][eta1][:2]
            if feasible(sp):
                feasible_cells += 1
                found[eta1].append((float(sp), float(sn), f"{coding}, a = {a}, ε = {eps:g}"))
                d = [abs(float(sp) - th[0]), abs(float(sn) - th[1])]
                gaps += d
                inside += sum(x <= 2.0 for x in d)
            lines.append(f"| {coding} | {a} | {eps:g} | {eta1} | {sp} | {sn} | "
                         f"{thesis_cell('ringnorm', eta1, 'rbf')} | {cs['inf']}/{3 * runs} |")
            print(lines[-1], flush=True)
        summary.append(f"| {coding} | {a} | {eps:g} | {feasible_cells}/5 | "
                       f"{np.mean(gaps) if gaps else float('nan'):.2f} | {inside}/10 |")
    lines += ["", "| class coding | a | ε | cells feasible (thesis: 5/5) | mean abs. gap to "
              "Table 2.1 (points) | numbers within 2 points |", "|---|---|---|---|---|---|",
              *summary]
    return lines, found


#: draws of twonorm / ringnorm (seeds) and CV shuffle triples of the real data sets
REPEATS = 8


def repeat_cell(name: str, kernel: str, eta1: float, rep: int, limit: float,
                runs: int) -> tuple[float, float] | None:
    """(+ve, -ve) of one cell on repetition ``rep``: for twonorm / ringnorm another draw of
    the same size (seed ``rep``) at the table's protocol; for the real data sets the
    table's protocol on the CV shuffles ``runs * rep ..`` (repetition 0 = the table)."""
    eta2, zeta = DATASETS[name]
    eps = EPS[kernel]
    if name in ("twonorm", "ringnorm"):
        gen = cm.datasets.twonorm if name == "twonorm" else cm.datasets.ringnorm
        X, y = gen(500 if name == "twonorm" else 400, dim=2, random_state=rep)
        cell = socp_cell(X, y, eta1, eta2, zeta, eps, limit, runs, kernel)
    else:
        X, y = load(name)
        cell = socp_cell(X, y, eta1, eta2, zeta, eps, limit, runs, kernel, first=runs * rep)
    sp, sn, _ = summarise(cell, "socp")
    return (float(sp), float(sn)) if feasible(sp) else None


def outside_cells(results: dict, etas: list[float], limit: float, runs: int,
                  ring_found: dict) -> list[str]:
    """Every SOCP cell of the table more than 2 points from Table 2.1 (or × where the
    thesis has numbers), with the measurement beside it: the range of the cell over
    REPEATS draws (twonorm / ringnorm) or CV shuffle sets (real data), and for ringnorm the
    closest version of the class-coding / offset / eps ablation."""
    lines = ["| data set | kernel | η1 | ours +ve / −ve | Table 2.1 +ve / −ve | over "
             f"{REPEATS} repetitions +ve | −ve | Table 2.1 inside the range ± 2 | closest "
             "ringnorm version (+ve / −ve) |", "|" + "---|" * 9]
    rep_table: dict = {}
    for name in DATASETS:
        for kernel in ("rbf", "linear"):
            col = 0 if kernel == "rbf" else 2
            for eta1 in etas:
                th = THESIS[name][eta1][col:col + 2]
                if (name, kernel, eta1) not in results:
                    continue
                sp, sn = results[(name, kernel, eta1)][:2]
                ours_ok = feasible(sp)
                if th[0] is None:
                    continue
                if ours_ok and abs(float(sp) - th[0]) <= 2 and abs(float(sn) - th[1]) <= 2:
                    continue
                reps = [repeat_cell(name, kernel, eta1, r, limit, runs) for r in range(REPEATS)]
                rep_table[(name, kernel, eta1)] = reps
                ok = [r for r in reps if r is not None]
                if ok:
                    lo_p, hi_p = min(r[0] for r in ok), max(r[0] for r in ok)
                    lo_n, hi_n = min(r[1] for r in ok), max(r[1] for r in ok)
                    inside = (lo_p - 2 <= th[0] <= hi_p + 2) and (lo_n - 2 <= th[1] <= hi_n + 2)
                    rp, rn = f"{lo_p:.2f} .. {hi_p:.2f}", f"{lo_n:.2f} .. {hi_n:.2f}"
                else:
                    inside, rp, rn = False, "×", "×"
                infeasible = len(reps) - len(ok)
                closest = "-"
                if name == "ringnorm" and ring_found.get(eta1):
                    best = min(ring_found[eta1],
                               key=lambda v: abs(v[0] - th[0]) + abs(v[1] - th[1]))
                    closest = f"{best[0]:.2f} / {best[1]:.2f} ({best[2]})"
                lines.append(
                    f"| {name} | {kernel} | {eta1} | {sp} / {sn} | {th[0]:05.2f} / "
                    f"{th[1]:05.2f} | {rp} | {rn}"
                    f"{f' ({infeasible}× infeasible)' if infeasible else ''} | "
                    f"{'yes' if inside else 'no'} | {closest} |")
                print(lines[-1], flush=True)
    return lines + order_on_repetitions(rep_table)


def order_on_repetitions(rep_table: dict) -> list[str]:
    """For two outside cells of one data set and kernel, on the same repetitions: the
    change of FN and FP as eta_1 falls (a tighter bound on the positives (2.5) should not
    raise FN nor lower FP), beside Table 2.1's change between the same two cells."""
    out = ["", "Change across η1 on the same repetitions (pairs of cells above): a tighter "
           "η1 bounds the positives' error more tightly, so FN should not rise and FP not "
           "fall as η1 falls. A Table 2.1 change outside the range of ours (widened by the "
           "2 points of the comparison) is not one of our repetitions.", "",
           "| data set | kernel | η1 pair | ours ΔFN | ours ΔFP | in that order (ours) | "
           "Table 2.1 ΔFN / ΔFP | Table 2.1 inside the ranges ± 2 |", "|" + "---|" * 8]
    keys = sorted(rep_table, key=lambda k: (k[0], k[1], -k[2]))
    for a, b in zip(keys, keys[1:]):
        col = 0 if a[1] == "rbf" else 2
        ta, tb = THESIS[a[0]][a[2]][col:col + 2], THESIS[b[0]][b[2]][col:col + 2]
        if a[:2] != b[:2] or ta[0] is None or tb[0] is None:
            continue
        d = np.array([(rb[0] - ra[0], rb[1] - ra[1]) for ra, rb in
                      zip(rep_table[a], rep_table[b]) if ra is not None and rb is not None])
        if d.size == 0:
            continue
        held = int(np.sum((d[:, 0] <= 0) & (d[:, 1] >= 0)))
        dt = (tb[0] - ta[0], tb[1] - ta[1])
        inside = all(d[:, k].min() - 2 <= dt[k] <= d[:, k].max() + 2 for k in (0, 1))
        out.append(f"| {a[0]} | {a[1]} | {a[2]} → {b[2]} | {d[:, 0].min():+.2f} .. "
                   f"{d[:, 0].max():+.2f} | {d[:, 1].min():+.2f} .. {d[:, 1].max():+.2f} | "
                   f"{held}/{len(d)} | {dt[0]:+.2f} / {dt[1]:+.2f} | "
                   f"{'yes' if inside else 'no'} |")
    return out


def pattern_checks(results: dict, etas: list[float]) -> list[str]:
    """The thesis's claims, checked on the SOCP columns: rates met, FN down / FP up as eta_1
    falls, the same infeasible ("×") cells as Table 2.1, SOCP and ITER identical."""
    out = []
    for name in DATASETS:
        eta2 = DATASETS[name][0]
        for kernel in ("rbf", "linear"):
            rows = [(e, results[(name, kernel, e)]) for e in etas if (name, kernel, e) in results]
            feas = [(e, float(r[0]), float(r[1])) for e, r in rows
                    if feasible(r[0])]
            met = all(fn <= 100 * e and fp <= 100 * eta2 for e, fn, fp in feas)
            fn_down = all(b[1] <= a[1] for a, b in zip(feas, feas[1:]))
            fp_up = all(b[2] >= a[2] for a, b in zip(feas, feas[1:]))
            ours = {e for e, r in rows if r[0] == "×"}
            col = 0 if kernel == "rbf" else 2
            theirs = {e for e in etas if THESIS[name][e][col] is None}
            same = all(r[0] == r[2] and r[1] == r[3] for _, r in rows)
            th = [(THESIS[name][e][col], THESIS[name][e][col + 1]) for e in etas
                  if THESIS[name][e][col] is not None]
            th_down = all(b[0] <= a[0] for a, b in zip(th, th[1:]))
            th_up = all(b[1] >= a[1] for a, b in zip(th, th[1:]))
            out.append(
                f"- {name}, {kernel}: rates met in every feasible cell: {'yes' if met else 'NO'}; "
                f"FN non-increasing as η1 falls: {'yes' if fn_down else 'no'}; FP "
                f"non-decreasing: {'yes' if fp_up else 'no'}; infeasible η1 "
                f"{sorted(ours, reverse=True) or 'none'} (thesis: "
                f"{sorted(theirs, reverse=True) or 'none'}); SOCP = ITER errors: "
                f"{'yes' if same else 'NO'}; Table 2.1's column: FN non-increasing "
                f"{'yes' if th_down else 'no'}, FP non-decreasing {'yes' if th_up else 'no'}"
            )
    return out


def main() -> None:
    r"""Run the reproduction and write its tables.

    Notes
    -----
    * "+ve" = error on the positive test points (false negatives, bounded by eta_pos),
      "-ve" = error on the negative test points (false positives, bounded by eta_neg);
    * 3-fold stratified CV, repeated over ``--runs`` shuffles (thesis: 3);
      features standardised with the training fold's statistics;
    * linear and Gaussian kernels (k = exp(-zeta ||x - x'||^2), the thesis's zeta);
    * each fold solved by the generic SOCP backend (clarabel; the thesis's
      "SOCP" columns used SeDuMi) and by the specialized ``lin-han`` solver
      ("ITER"), each on its own freshly built program (so the SOCP time includes
      cvxpy's compilation); the kernel factorisation, common to both, is timed
      separately ("prep");
    * both solvers solve the SAME regularised program (Sigma + eps I, H + eps I with
      eps below; the thesis does not report its eps and applied it to ITER only,
      which is why its SOCP and ITER columns differ slightly); kernel cones are
      given as a factor of H + eps I (``cone="factor"``: Clarabel fails on some
      folds with the centred form at eps > 0);
    * "×" = infeasible (the class ellipsoids overlap) in every fold; "(k×)" = k
      infeasible folds, the errors are over the feasible ones.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="1 CV run, eta_1 in {0.9, 0.5, 0.1}")
    parser.add_argument("--runs", type=int, default=None, help="CV repetitions (default 3)")
    parser.add_argument("--limit", type=float, default=300.0,
                        help="seconds per solve (a safety net; hits are counted)")
    parser.add_argument("--study-limit", type=float, default=60.0,
                        help="seconds per solve in the eps study and the ablations")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    etas = [0.9, 0.5, 0.1] if args.quick else ETA1
    start = time.perf_counter()
    # "%" in the headers: the cells are error rates in percent (compared within 2 points)
    header = ("| dataset | kernel | η1 | η2 | SOCP % +ve | SOCP % −ve | ITER % +ve | ITER % −ve "
              "| thesis SOCP % +ve / −ve | non-optimal folds | SOCP s | lin-han s | prep s "
              "| lin-han iters (mean) | max rel. obj diff |")
    lines = [header, "|" + "---|" * 15]
    agree_max = 0.0
    total = {"socp": 0.0, "iter": 0.0}
    results: dict = {}
    limit_hits = 0
    for name in progress(DATASETS, "data sets"):
        X, y = load(name)
        eta2 = DATASETS[name][0]
        for kernel in ("rbf", "linear"):
            for eta1 in etas:
                cell = run_cell(X, y, name, kernel, eta1, runs, args.limit)
                sp, sn, cs = summarise(cell, "socp")
                ip, in_, ci = summarise(cell, "iter")
                folds = cell["folds"]
                t_s = sum(f["socp"]["time"] for f in folds)
                t_i = sum(f["iter"]["time"] for f in folds)
                t_p = sum(f["prep"] for f in folds)
                total["socp"] += t_s
                total["iter"] += t_i
                both = [f for f in folds if "fn" in f["socp"] and "fn" in f["iter"]]
                diff = max((abs(f["iter"]["objective"] - f["socp"]["objective"])
                            / max(1.0, abs(f["socp"]["objective"])) for f in both),
                           default=float("nan"))
                if both:
                    agree_max = max(agree_max, diff)
                iters = np.mean([f["iter"]["iters"] for f in folds if "fn" in f["iter"]]
                                or [np.nan])
                flag = flags(cs, ci)
                limit_hits += cs["limit"] + ci["limit"]
                lines.append(
                    f"| {name} | {kernel} | {eta1} | {eta2} | {sp} | {sn} | {ip} | {in_} "
                    f"| {thesis_cell(name, eta1, kernel)} | {flag} | {t_s:.2f} | {t_i:.2f} "
                    f"| {t_p:.2f} | {iters:.0f} | {diff:.1e} |"
                )
                print(lines[-1], flush=True)
                results[(name, kernel, eta1)] = (sp, sn, ip, in_)
    elapsed = time.perf_counter() - start
    notes = [
        "# Saketha Nath Table 2.1 pattern: specified FN / FP rates",
        "",
        f"Machine: {machine()}; BLAS single-threaded. Runs: {runs} x 3-fold CV "
        f"(stratified, seeds 0..{runs - 1}); eps = {EPS}; per-solve limit {args.limit:g} s; "
        f"total {elapsed:.0f} s.",
        "",
        "Errors in % on the test folds: +ve = positives misclassified (bounded by η1), "
        "−ve = negatives misclassified (bounded by η2). SOCP = clarabel on the SOCP (2.5), "
        "ITER = lin-han (Lin-Han ellipsoid distance) on the same program. 'non-optimal "
        "folds' counts SOCP/ITER folds that were infeasible (×), failed (F: solver error "
        "or inaccurate-and-unusable) or hit the time limit (T); errors are over each "
        "solver's optimal folds (all folds infeasible: ×). Times are summed over "
        "the folds (SOCP includes cvxpy compilation; 'prep' = kernel Gram + factor, "
        "shared by both). 'max rel. obj diff' = max over folds of |f_ITER - f_SOCP| / "
        "max(1, |f_SOCP|).",
        "",
        *lines,
        "",
        f"Totals: SOCP {total['socp']:.1f} s, lin-han {total['iter']:.1f} s; "
        f"largest objective disagreement {agree_max:.1e}; solves that hit the "
        f"{args.limit:g} s limit: {limit_hits}.",
    ]
    notes += ["", "Checks (computed from the table above):", "",
              *pattern_checks(results, etas)]
    if not args.quick:
        notes += ["", "## Which ε? ringnorm, Gaussian kernel, the generic SOCP at every η1 "
                  f"(1 x 3-fold CV, per-solve limit {args.study_limit:g} s)", "",
                  "The thesis does not report its ridge ε (Σ + εI, H + εI); the table's "
                  "ringnorm RBF cells (−ve 27 vs 42 at η1 = 0.5, × at 0.3 and 0.1 where "
                  "the thesis has numbers) depend on it.", "",
                  *eps_sweep(args.study_limit)]
    if not args.quick:
        notes += ["", "## The ridge ε on ringnorm (Gaussian kernel, 1 x 3-fold CV, "
                  f"per-solve limit {args.study_limit:g} s)", "",
                  "Both solvers solve the program with H + εI; a larger ε inflates both "
                  "kernel-space ellipsoids by about κ√ε in every direction, which here is "
                  "comparable to their distance (infeasible cells), while lin-han needs "
                  "~1/ε iterations (T = time limit).", "",
                  *eps_study(args.study_limit)]
        ring_lines, ring_found = ringnorm_versions(args.study_limit, runs)
        notes += ["", "## Ringnorm's data version (Gaussian kernel, the generic SOCP, "
                  f"{runs} x 3-fold CV as the table)", "",
                  "The thesis generated ringnorm at d = 2 with Delve's scripts and reports "
                  "m1 = 209 positives of 400 and \"μ1 ≈ μ2\", but neither which class is "
                  "positive nor the offset a of the unit-covariance class at d = 2. Ours: the "
                  "wide class N(0, 4I) positive, a = 1/√d = 1/√2. The same draw with the "
                  "unit-covariance class N(a1, I) positive (\"narrow +\") and Breiman's "
                  "20-d offset a = 1/√20 kept at d = 2 (means 0.32 apart instead of 1.0), "
                  "at the table's ε and at ε = 1e-6:", "", *ring_lines]
        notes += ["", f"## The cells outside: repetitions ({REPEATS} draws / CV shuffle sets, "
                  f"the generic SOCP, {runs} x 3-fold CV each)", "",
                  "Every SOCP cell of the table more than 2 points from Table 2.1, or × where "
                  "the thesis has numbers. The thesis ran one draw of twonorm / ringnorm "
                  "and one set of 3 CV shuffles: the range of the cell over "
                  f"{REPEATS} draws (seeds 0..{REPEATS - 1}; seed 0 = the table) or over "
                  f"{REPEATS} disjoint sets of {runs} CV shuffles (breast cancer, heart; set 0 "
                  "= the table) says whether Table 2.1's number is one such repetition "
                  "(inside the range widened by the 2 points of the comparison); for "
                  "ringnorm the closest version of the ablation above is beside it.", "",
                  *outside_cells(results, etas, args.study_limit, runs, ring_found)]
        notes += ["", "## The ridge ε and the kernel width on the rows outside (the generic "
                  f"SOCP, {runs} x 3-fold CV as the table, per-solve limit "
                  f"{args.study_limit:g} s)", "",
                  "The thesis reports neither its ε nor how it scaled the features its ζ "
                  "applies to. The rows above whose cells the repetitions leave outside (the "
                  "other rows of these data sets are not swept), at "
                  "every ε of the ringnorm sweep and (Gaussian kernel) at ζ × "
                  f"{', '.join(f'{w:g}' for w in SWEEP_WIDTHS)} of the thesis's ζ; the "
                  "table's setting reproduces the table's cells. Table 2.1's heart RBF "
                  "SOCP rows at η1 = 0.3 and 0.1 are identical (10.95 / 30.00) although its "
                  "ITER columns differ there (11.69 / 34.38 and 10.95 / 36.25).", "",
                  *eps_width_sweep(args.study_limit, runs)]
        notes.append(f"\nTotal with the ε study and the ablations: "
                     f"{time.perf_counter() - start:.0f} s.")
    text = "\n".join(notes) + "\n"
    write_results("saketha_table_2_1", text, args.quick)
    print(text)


if __name__ == "__main__":
    main()
