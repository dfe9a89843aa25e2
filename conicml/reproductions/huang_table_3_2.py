"""Reproduce seed 004 Table 3.2: Gaussian-kernel MEMPM vs kernel MPM.

The protocol of Table 3.1 (``conicml reproduce huang_table_3_1``: random 90/10 splits,
plug-in moments, theta = training proportion of x, Chebyshev bound; same class roles)
with the Gaussian kernel k(u, v) = exp(-gamma ||u - v||^2) (Theorem 9) on standardised
features and the regulariser rho_x = rho_y = ``--rho`` (mandatory for a kernel, errata
S004-§5.3; the thesis does not report its value). The width is chosen per data set by
cross-validation over ``--cv-partitions`` random 90/10 partitions of a training part (the
thesis: "via cross validations over 50 random partitions of the training set"). MEMPM by
``quadratic-interpolation`` with inner ``ils-newton`` (``dinkelbach`` as fall-back;
clarabel fails on kernel BMPM programs, errata S004-§5.3); MPM by ``ils-newton``.
Ablations (first ``--ablation-splits`` splits): fixed widths and rho; one common feature
scale; rho matched to the thesis's MPM alpha, and (width, rho) to its MPM alpha and
accuracy; kernel MPM over the width grid x rho with five width rules; the bounds
re-estimated on the test part; twonorm at 2000 points; Pima's MEMPM on its BMPM curve at
the thesis's beta; every cell outside the spread.

Run ``conicml reproduce huang_table_3_2 [--quick] [--splits N]``;
writes ``conicml-results/huang_table_3_2.md``.
"""

from __future__ import annotations

#: BLAS/OpenMP threads; the runner sets them before NumPy starts
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import norm  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.formulations import minimax as mm  # noqa: E402

from ._harness import machine, progress, write_results  # noqa: E402
from ._huang import load_huang  # noqa: E402

#: how the tables set the thesis's numbers beside ours (conicml.reproductions._tables)
THESIS_LAYOUT = "parenthesised"
TABLES = ('004:T3.2',)
EXPECTED_SECONDS = 600
PROTOCOL = ("full: 50 random 90/10 splits at the data's full size as the thesis; the "
            "Gaussian width chosen per data set by CV over 50 random 90/10 partitions of the "
            "first split's training part (the thesis: 'cross validations over 50 random "
            "partitions of the training set'), scored by kernel MPM; rho = 1e-3 (the "
            "thesis reports none); twonorm drawn with 500 points (the thesis gives no "
            "size); heart = Statlog")
RATE_CELLS = '.'  # every compared cell is an accuracy, AUC or error rate

THESIS = {  # (mean, +-) of MEMPM alpha, beta, objective, acc, MPM alpha, acc (%), Table 3.2
    "twonorm": ((91.7, 0.2), (91.7, 0.2), (91.7, 0.2), (97.9, 0.1), (91.7, 0.2), (97.9, 0.1)),
    "wisconsin": ((88.4, 0.6), (90.7, 0.4), (89.9, 0.4), (96.9, 0.2), (89.9, 0.4), (96.9, 0.3)),
    "ionosphere": ((94.2, 0.8), (80.9, 3.0), (89.4, 0.8), (93.8, 0.4), (89.0, 0.8),
                   (92.2, 0.4)),
    "pima": ((2.6, 0.1), (62.3, 1.6), (41.4, 1.1), (77.0, 0.7), (32.1, 1.0), (76.2, 0.6)),
    "heart": ((47.1, 2.2), (66.6, 1.4), (58.0, 1.5), (83.9, 0.9), (57.4, 1.6), (83.1, 1.0)),
    "vote": ((85.1, 1.3), (84.3, 0.7), (84.7, 0.8), (94.7, 0.5), (84.4, 0.8), (94.6, 0.4)),
}
#: the width grid: gamma = 2**k / (2 d) on standardised features, k below
GAMMA_STEPS = (-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4)
#: ablation variants: name -> (k of gamma = 2**k / (2 d), None: the CV width; rho)
ABLATION = {"k = -8": (-8, 1e-3), "k = -4": (-4, 1e-3), "k = 0": (0, 1e-3),
            "CV width, rho = 0.1": (None, 0.1)}
#: the selection study (kernel MPM over the width grid x these regularisers): CV partitions
STUDY_RHOS = (1e-3, 1e-4, 1e-5, 1e-6)
STUDY_PARTITIONS = 20
#: width rules compared by the study, on the CV accuracy curve of one regulariser
RULES = ("CV accuracy", "widest within 1 s.e.", "narrowest within 1 s.e.",
         "largest bound within 1 s.e.", "largest bound")
#: twonorm at a larger sample than the table's 500 points: (points, k, rho, splits), a
#: width and rho at which kernel MPM's bound reaches the thesis's at that size
TWONORM_LARGE = (2000, -1, 1e-5, 4)
#: the search of the rho at which kernel MPM's training bound equals the thesis's MPM
#: alpha at the table's width: log10 rho bracket, bisection steps, splits searched
RHO_SEARCH = (-10.0, 0.0, 9, 3)
#: the compared columns of the table, in THESIS's order
COLUMNS = ("MEMPM alpha", "MEMPM beta", "objective", "MEMPM acc", "MPM alpha", "MPM acc")


def load(name: str):
    """(X, y, data version) of a Table 3.2 data set."""
    if name == "twonorm":
        X, y = cm.datasets.twonorm(n=500, dim=20, random_state=2004)
        return X, y, "twonorm, 500 points"
    X, y = load_huang(name)
    if name == "heart":
        return X, y, "Statlog heart"
    if name == "vote":
        y = -y  # x = republican, as in the Table 3.1 entry
    return X, y, name


def standardise(Xtr, Xte):
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    return (Xtr - mu) / sd, (Xte - mu) / sd


def common_scale(Xtr, Xte):
    """Centred and divided by one scale, the root mean feature variance of the training
    part: the features keep their relative units (no per-feature standardisation) while
    the width grid 2**k / (2d) keeps its meaning."""
    mu = Xtr.mean(axis=0)
    s = float(np.sqrt(np.mean(Xtr.var(axis=0)))) or 1.0
    return (Xtr - mu) / s, (Xte - mu) / s


def fit_mpm(Xtr, ytr, gamma: float, rho: float):
    """(MPM program, model) at width ``gamma``."""
    mpm = mm.mpm(Xtr, ytr, kernel="rbf", gamma=gamma, ridge=rho)
    sol = cm.solve(mpm, "ils-newton")
    if not sol.ok:
        sol = cm.solve(mpm, "dinkelbach")
    return mpm, mpm.decode(sol)


def fit(Xtr, ytr, gamma: float, rho: float):
    """(MEMPM program, model, MPM program, model) at width ``gamma``."""
    kw = {"kernel": "rbf", "gamma": gamma, "ridge": rho}
    mpm, mpm_model = fit_mpm(Xtr, ytr, gamma, rho)
    prog = mm.mempm(Xtr, ytr, **kw)
    for inner in ("ils-newton", "dinkelbach"):
        msol = cm.solve(prog, "quadratic-interpolation", inner=inner, tol=1e-5)
        if msol.ok:
            break
    return prog, prog.decode(msol), mpm, mpm_model


def accuracy(prog, model, X, y) -> float:
    return float(np.mean(np.where(mm.decision_values(prog.data, model, X) >= 0, 1, -1) == y))


def split(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    perm = rng.permutation(n)
    n_test = int(round(0.1 * n))
    return perm[n_test:], perm[:n_test]


def cv_width(X, y, partitions: int, rho: float) -> tuple[float, np.ndarray]:
    """The gamma of the grid with the best mean kernel-MPM validation accuracy over
    ``partitions`` random 90/10 partitions of (X, y); ties go to the smaller gamma.

    Scored by MPM (one fractional program per fit; the thesis does not say which model's
    accuracy chose its one width) and used by both models."""
    grid = np.array([2.0 ** k / (2 * X.shape[1]) for k in GAMMA_STEPS])
    rng = np.random.default_rng(7)
    acc = np.zeros(grid.size)
    for _ in range(partitions):
        tr, va = split(y.size, rng)
        Xtr, Xva = standardise(X[tr], X[va])
        for j, g in enumerate(grid):
            prog, model = fit_mpm(Xtr, y[tr], g, rho)
            acc[j] += accuracy(prog, model, Xva, y[va]) / partitions
    return float(grid[int(np.argmax(acc))]), acc


def evaluate(X, y, parts, gamma: float, rho: float, label: str,
             scale=standardise) -> np.ndarray:
    """MEMPM alpha, beta, objective, accuracy, MPM alpha, accuracy (%) per split."""
    rows = []
    for train, test in progress(parts, label):
        Xtr, Xte = scale(X[train], X[test])
        prog, model, mpm, mpm_model = fit(Xtr, y[train], gamma, rho)
        rows.append((model["alpha"], model["beta"], model["objective"],
                     accuracy(prog, model, Xte, y[test]), mpm_model["alpha"],
                     accuracy(mpm, mpm_model, Xte, y[test])))
    return 100 * np.array(rows)


def test_part_bounds(prog, model, X, y) -> tuple[float, float]:
    """The Chebyshev bounds g(kappa) of a fitted hyperplane re-estimated from the plug-in
    moments of a held-out part: kappa_x = mean(f_x) / sd(f_x), kappa_y = -mean(f_y) / sd(f_y)
    of f = w^T phi(z) - b (eq. 3.15-3.17; the model's own bounds use the training moments)."""
    f = mm.decision_values(prog.data, model, X)
    fx, fy = f[y == 1], f[y == -1]
    kx = max(float(fx.mean()), 0.0) / max(float(fx.std()), 1e-300)
    ky = max(-float(fy.mean()), 0.0) / max(float(fy.std()), 1e-300)
    return kx ** 2 / (1 + kx ** 2), ky ** 2 / (1 + ky ** 2)


def matched_rho(X, y, parts, gamma: float, target: float) -> float:
    """The rho at which kernel MPM's mean training bound alpha over ``parts`` equals
    ``target`` (%) at width ``gamma``: bisection on log10 rho over ``RHO_SEARCH`` (the
    bound falls as rho grows: rho K is added to both covariances, Theorem 9)."""
    lo, hi, steps, _ = RHO_SEARCH
    for _ in progress(range(steps), "rho search"):
        mid = 0.5 * (lo + hi)
        alpha = 0.0
        for train, _test in parts:
            Xtr, _ = standardise(X[train], X[train][:1])
            model = fit_mpm(Xtr, y[train], gamma, 10.0 ** mid)[1]
            alpha += 100 * model["alpha"] / len(parts)
        lo, hi = (mid, hi) if alpha > target else (lo, mid)
    return 10.0 ** (0.5 * (lo + hi))


def width_study(X, y, parts, partitions: int) -> dict:
    """Kernel MPM over the width grid x ``STUDY_RHOS``: per (k, rho) the mean training bound
    alpha, test accuracy and test-part bounds (x, y) over ``parts``, then the CV accuracy
    (mean, s.e.) over ``partitions`` random 90/10 partitions of the first split's training
    part, all in %."""
    d = X.shape[1]
    Xa, ya = X[parts[0][0]], y[parts[0][0]]
    rng = np.random.default_rng(7)
    cv_parts = [split(ya.size, rng) for _ in range(partitions)]
    out = {}
    for rho, k in progress([(r, k) for r in STUDY_RHOS for k in GAMMA_STEPS], "width study"):
        g = 2.0 ** k / (2 * d)
        rows = []
        for train, test in parts:
            Xtr, Xte = standardise(X[train], X[test])
            prog, model = fit_mpm(Xtr, y[train], g, rho)
            rows.append((model["alpha"], accuracy(prog, model, Xte, y[test]),
                         *test_part_bounds(prog, model, Xte, y[test])))
        cv = []
        for a, b in cv_parts:
            Xtr, Xva = standardise(Xa[a], Xa[b])
            prog, model = fit_mpm(Xtr, ya[a], g, rho)
            cv.append(accuracy(prog, model, Xva, ya[b]))
        se = np.std(cv, ddof=1) / np.sqrt(len(cv)) if len(cv) > 1 else 0.0
        out[k, rho] = (*(100 * np.mean(rows, axis=0)), 100 * np.mean(cv), 100 * se)
    return out


def rule_picks(study: dict, rho: float) -> dict[str, int]:
    """The k each rule of ``RULES`` picks from the study's CV curve at ``rho``: ties of the
    CV accuracy go to the smaller gamma (the table's rule); "within 1 s.e." is the set of
    widths whose CV accuracy is within one standard error of the best; the bound is the
    mean training MPM alpha."""
    ks = np.array(GAMMA_STEPS)
    cv = np.array([study[k, rho][4] for k in ks])
    se = np.array([study[k, rho][5] for k in ks])
    bound = np.array([study[k, rho][0] for k in ks])
    best = int(np.argmax(cv))
    tied = np.flatnonzero(cv >= cv[best] - se[best])
    picks = (best, tied.min(), tied.max(), tied[np.argmax(bound[tied])], int(np.argmax(bound)))
    return dict(zip(RULES, (int(ks[i]) for i in picks)))


def study_lines(name: str, study: dict, k_table: float) -> tuple[list[str], list[str]]:
    """(rows of the rule table, the row of the test-part bound table) of one data set."""
    th_a, th_acc = THESIS[name][4][0], THESIS[name][5][0]
    rows = []
    for rho in STUDY_RHOS:
        picks = rule_picks(study, rho)
        near = [k for k in GAMMA_STEPS if abs(study[k, rho][0] - th_a) <= 2
                and abs(study[k, rho][1] - th_acc) <= 2]
        rows.append(f"| {name} | {rho:g} | " + " | ".join(
            f"k={k:+d}: {study[k, rho][0]:.1f} / {study[k, rho][1]:.1f}"
            for k in picks.values()) + " | "
            + (", ".join(f"{k:+d}" for k in near) or "none") + " |")
    k = int(round(np.log2(k_table)))
    a, acc, tx, ty = study[k, 1e-3][:4] if (k, 1e-3) in study else (np.nan,) * 4
    bound_row = (f"| {name} | k={k:+d} | {a:.1f} | {tx:.1f} | {ty:.1f} | {acc:.1f} | "
                 f"{th_a} | {th_acc} |")
    return rows, bound_row


def twonorm_large(splits_cap: int) -> np.ndarray:
    """The table's MEMPM/MPM columns on twonorm drawn with ``TWONORM_LARGE`` points at its
    fixed (k, rho), on the first splits of the same seed (%)."""
    n, k, rho, splits = TWONORM_LARGE
    X, y = cm.datasets.twonorm(n=n, dim=20, random_state=2004)
    rng = np.random.default_rng(2004)
    parts = [split(y.size, rng) for _ in range(min(splits, splits_cap))]
    return evaluate(X, y, parts, 2.0 ** k / (2 * X.shape[1]), rho, f"twonorm, {n} points")


def pima_curve(parts, k_table: float, rho: float) -> list[str]:
    """Pima's MEMPM at the table's width and at k = -4: BMPM at the thesis's beta (3.21),
    the largest feasible beta0m (3.44) and where MEMPM's optimum lies, rows of a table."""
    X, y, _ = load("pima")
    beta_t = THESIS["pima"][1][0] / 100
    lines = []
    for label, kk in progress([("table's width", k_table), ("k = -4", 2.0 ** -4)],
                              "pima curve"):
        g = kk / (2 * X.shape[1])
        rows = []
        for train, _ in parts:
            Xtr, _ = standardise(X[train], X[train][:1])
            ytr = y[train]
            theta = float(np.mean(ytr > 0))
            _, best, _, _ = fit(Xtr, ytr, g, rho)
            prog = mm.bmpm(Xtr, ytr, beta_t, kernel="rbf", gamma=g, ridge=rho)
            alpha = 0.0  # beta_t above beta0m: no hyperplane, alpha clipped at 0 (3.21)
            if beta_t < prog.data["beta0_max"]:
                sol = cm.solve(prog, "ils-newton")
                if not sol.ok:
                    sol = cm.solve(prog, "dinkelbach")
                alpha = prog.decode(sol)["alpha"]
            rows.append((alpha, theta * alpha + (1 - theta) * beta_t, best["alpha"],
                         best["beta"], best["objective"], prog.data["beta0_max"]))
        a = 100 * np.array(rows)
        m = a.mean(axis=0)
        at_end = int(np.sum(a[:, 3] >= a[:, 5] - 0.1))
        lines.append(f"| {label} | {100 * beta_t:.1f} | {m[0]:.1f} | {m[1]:.1f} | "
                     f"{m[3]:.1f} | {m[2]:.1f} | {m[4]:.1f} | {m[5]:.1f} | "
                     f"{at_end} of {len(a)} |")
    return lines


def matched_setting(name: str, study: dict) -> tuple[int, float]:
    """The (k, rho) of the width study whose kernel MPM matches the thesis's TWO MPM
    cells best: minimising the larger of the gaps of the training bound alpha and of the
    test accuracy (both %) to the thesis's; ties go to the larger rho, then the smaller
    gamma."""
    th_a, th_acc = THESIS[name][4][0], THESIS[name][5][0]
    keys = sorted(study, key=lambda kr: (-kr[1], kr[0]))
    return min(keys, key=lambda kr: max(abs(study[kr][0] - th_a), abs(study[kr][1] - th_acc)))


def run_dataset(name: str, splits: int, partitions: int, rho: float, ablation_splits: int,
                study_partitions: int):
    X, y, version = load(name)
    rng = np.random.default_rng(2004)
    parts = [split(y.size, rng) for _ in range(splits)]
    gamma, cv_acc = cv_width(X[parts[0][0]], y[parts[0][0]], partitions, rho)
    arr = evaluate(X, y, parts, gamma, rho, name)
    ablation = {}
    for variant, (k, r) in ABLATION.items():
        g = gamma if k is None else 2.0 ** k / (2 * X.shape[1])
        ablation[variant] = evaluate(X, y, parts[:ablation_splits], g, r,
                                     f"{name}, {variant}")
    ablation["one common scale"] = evaluate(X, y, parts[:ablation_splits], gamma, rho,
                                            f"{name}, common scale", scale=common_scale)
    rho_star = matched_rho(X, y, parts[:RHO_SEARCH[3]], gamma, THESIS[name][4][0])
    ablation["rho matched"] = evaluate(X, y, parts[:ablation_splits], gamma, rho_star,
                                       f"{name}, matched rho")
    study = width_study(X, y, parts[:ablation_splits], study_partitions)
    k2, rho2 = matched_setting(name, study)
    ablation["setting matched"] = evaluate(X, y, parts[:ablation_splits],
                                           2.0 ** k2 / (2 * X.shape[1]), rho2,
                                           f"{name}, matched width and rho")
    return (arr, gamma * 2 * X.shape[1], cv_acc, version, X.shape, ablation, study, parts,
            (rho_star, k2, rho2))


def outside_cells(name: str, arr: np.ndarray, matched: np.ndarray,
                  setting: np.ndarray) -> tuple[list[str], list[str]]:
    """(markdown rows, cells left unexplained) of the compared cells of ``name`` outside
    the thesis's spread. A row: ours (mean over the table's splits), the thesis's, the
    difference in combined standard errors z = (ours - thesis) / sqrt(se^2 + spread^2)
    (the thesis's spread read as the standard error of its 50-split mean), and the cell
    at the matched rho and at the matched (width, rho) (first ablation splits): within
    the spread, nearer the thesis than the table, or not. Unexplained: within the spread
    at neither, and not a twonorm accuracy (above the Bayes accuracy)."""
    mean = arr.mean(axis=0)
    se = arr.std(axis=0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0 * mean
    rows, unexplained = [], []
    for j, col in enumerate(COLUMNS):
        t, ts = THESIS[name][j]
        if abs(mean[j] - t) <= ts * (1 + 1e-9):
            continue
        z = (mean[j] - t) / max(np.hypot(se[j], ts), 1e-12)
        gap = abs(mean[j] - t)
        moved = ["within" if abs(v - t) <= ts * (1 + 1e-9) else
                 "nearer" if abs(v - t) < gap else "not nearer" for v in (matched[j], setting[j])]
        if "within" not in moved and not (name == "twonorm" and col.endswith("acc")):
            unexplained.append(f"{name} {col}")
        rows.append(f"| {name} | {col} | {mean[j]:.1f} | {t} +- {ts} | {z:+.1f} | "
                    f"{matched[j]:.1f} ({moved[0]}) | {setting[j]:.1f} ({moved[1]}) |")
    return rows, unexplained


def rule_summary(studies: dict[str, dict]) -> list[str]:
    """Per rho and rule of the study: the mean absolute difference ours - thesis of MPM
    alpha and of MPM accuracy over the data sets, and the data sets with both within 2
    points (markdown rows)."""
    rows = []
    for rho in STUDY_RHOS:
        for rule in RULES:
            da, dacc, both = [], [], []
            for name, study in studies.items():
                k = rule_picks(study, rho)[rule]
                a, acc = study[k, rho][:2]
                da.append(abs(a - THESIS[name][4][0]))
                dacc.append(abs(acc - THESIS[name][5][0]))
                if da[-1] <= 2 and dacc[-1] <= 2:
                    both.append(name)
            rows.append(f"| {rho:g} | {rule} | {np.mean(da):.1f} | {np.mean(dacc):.1f} | "
                        + (", ".join(both) or "none") + " |")
    return rows


def selection_section(ablation_splits: int, study_partitions: int, rule_rows: list[str],
                      bound_rows: list[str], extra: list[str],
                      summary: list[str]) -> list[str]:
    """The ablation sections of the width rule, the regulariser, the sample size and
    Pima's alpha (markdown lines)."""
    pima = [r for r in extra if not r.startswith("| twonorm")]
    large = [r for r in extra if r.startswith("| twonorm")]
    n, k, rho, _ = TWONORM_LARGE
    return [
        "", "## Ablation: which width rule and rho give the thesis's bounds with its "
        "accuracies (kernel MPM, not compared cells)", "",
        f"Kernel MPM on the first {ablation_splits} splits at every width of the grid and "
        f"every rho of {', '.join(f'{r:g}' for r in STUDY_RHOS)}; the CV accuracy curve "
        f"(mean and s.e. over {study_partitions} random 90/10 partitions of the first "
        "split's training part) picks one k per rule. Each rule's cell: `k=...: training "
        "bound alpha / test accuracy` (%). Last column: the widths whose alpha AND "
        "accuracy are both within 2 points of the thesis's MPM columns. The table's "
        "protocol is the first rule at rho = 1e-3 (with 50 partitions).", "",
        "| data | rho | " + " | ".join(RULES) + " | k within 2 points of the thesis |",
        "|---" * (len(RULES) + 3) + "|",
        *rule_rows, "",
        "Over the data sets: the mean distance of each rule's MPM alpha and accuracy from "
        "the thesis's (points), and the data sets where both are within 2 points.", "",
        "| rho | rule | mean alpha gap | mean accuracy gap | both within 2 points |",
        "|---|---|---|---|---|", *summary, "",
        "## Ablation: training-part against test-part bound (kernel MPM, not compared cells)",
        "",
        f"At the table's width and rho = 1e-3, first {ablation_splits} splits: the model's "
        "alpha (training moments, as the table) against the same hyperplane's bounds "
        "re-estimated from the test part's moments of each class (x, y).", "",
        "| data | width | alpha, training | bound x, test part | bound y, test part | "
        "accuracy | thesis MPM alpha | thesis MPM accuracy |",
        "|---|---|---|---|---|---|---|---|", *bound_rows, "",
        "## Ablation: twonorm's sample size (not compared cells)", "",
        f"Twonorm drawn with {n} points instead of the table's 500 (the thesis gives no size), "
        f"at the fixed k = {k:+d}, rho = {rho:g}: the MEMPM/MPM columns of the table, means "
        "over the first splits of the same seed.", "",
        "| data | MEMPM alpha | MEMPM beta | objective | MEMPM acc | MPM alpha | MPM acc | "
        "splits |", "|---|---|---|---|---|---|---|---|", *large, "",
        "## Ablation: Pima's MEMPM alpha on the BMPM curve (not compared cells)", "",
        f"First {ablation_splits} splits, rho = 1e-3. BMPM at the thesis's beta0 gives "
        "alpha and theta alpha + (1-theta) beta there; MEMPM's optimum of (3.21) against "
        "beta0m (3.44), the largest feasible beta0, and the splits whose optimum is at "
        "beta0m (alpha = 0 there).", "",
        "| width | thesis beta | BMPM alpha at it | objective at it | MEMPM beta | "
        "MEMPM alpha | MEMPM objective | beta0m | optimum at beta0m |",
        "|---|---|---|---|---|---|---|---|---|", *pima, "",
    ]


def cells_section(ablation_splits: int, matched: dict[str, tuple],
                  cell_rows: list[str], unexplained: list[str]) -> list[str]:
    """The section that sets every compared cell outside the thesis's spread beside its
    measurements (markdown lines)."""
    lo, hi, steps, searched = RHO_SEARCH
    rhos = [r[0] for r in matched.values()]
    # twonorm's classes: N(+-a 1, I) with a = 2 / sqrt(20), half the distance between the
    # means 2 (note T4), so no classifier's expected accuracy exceeds Phi(2)
    bayes = 100 * float(norm.cdf(2.0))
    return [
        "", "## Ablation: the regulariser matched to one cell, and every cell outside the "
        "thesis's spread (not compared cells)", "",
        "The kernel regulariser rho (not reported by the thesis) decides the bounds: "
        "rho K is added to both feature-space covariances (Theorem 9), so the training "
        "bound rises to 100 % as rho falls. Per data set, rho is matched to ONE cell, the "
        f"thesis's MPM alpha, at the table's width (bisection on log10 rho in [{lo:g}, "
        f"{hi:g}], {steps} steps, mean over the first {searched} splits); the other five "
        f"cells are then measured at it on the first {ablation_splits} splits (the row "
        "`rho = ..., matched` of the width/regulariser ablation above). Matched rho: "
        + ", ".join(f"{n} {r[0]:.2g}" for n, r in matched.items())
        + "; spread over the data sets: "
        f"{np.log10(max(rhos) / min(rhos)):.1f} decades, so no "
        "single rho (the table's 1e-3) gives the thesis's bounds on every data set. "
        "Matched to TWO cells, the thesis's MPM alpha and MPM accuracy: the (k, rho) of "
        "the width study (its grid) minimising the larger of the two gaps, "
        + ", ".join(f"{n} k = {r[1]:+d}, rho = {r[2]:g}" for n, r in matched.items())
        + "; the four MEMPM cells are then measured there (row `k = ..., rho = ..., "
        "matched` above).", "",
        "Every cell outside the thesis's spread: z = (ours - thesis) / sqrt(our s.e.^2 + "
        "the thesis's spread^2) (|z| <= 2: within the test-split noise of the two "
        "50-split means), and the cell at the matched rho and at the matched (width, rho) "
        "(`within` the spread, `nearer` the thesis than the table, or `not nearer`). "
        "Twonorm's Bayes accuracy is "
        f"Phi(2) = {bayes:.2f} % (its population): the thesis's 97.9 +- 0.1 lies above "
        "it; the thesis's +- 0.1 on a 90/10 split also needs a test part of some 400 "
        "points (sqrt(0.02 x 0.98 / n) / sqrt(50) = 0.1 at n = 400), against the "
        "table's 50 (see the twonorm sample-size ablation).", "",
        "| data | cell | ours | thesis | z | at the matched rho | at the matched (k, rho) |",
        "|---|---|---|---|---|---|---|", *cell_rows, "",
        f"Outside the spread: {len(cell_rows)} cells. Within it at neither matched setting "
        f"(twonorm's accuracies aside, above the Bayes accuracy): {len(unexplained)} cells, "
        "unexplained: " + (", ".join(unexplained) or "none") + ".", "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--splits", type=int, default=None)
    parser.add_argument("--cv-partitions", type=int, default=None)
    parser.add_argument("--rho", type=float, default=1e-3)
    parser.add_argument("--data", nargs="*", default=None, help="a subset of the data sets")
    parser.add_argument("--ablation-splits", type=int, default=None)
    args = parser.parse_args()
    splits = args.splits or (2 if args.quick else 50)
    partitions = args.cv_partitions or (2 if args.quick else 50)
    names = args.data or list(THESIS)
    ablation_splits = args.ablation_splits or (1 if args.quick else 10)
    study_partitions = 2 if args.quick else STUDY_PARTITIONS
    t0 = time.perf_counter()
    rows, notes, abl_rows, rule_rows, bound_rows, extra = [], [], [], [], [], []
    studies, matched, cell_rows, unexplained = {}, {}, [], []
    for name in progress(names, "data sets"):
        t1 = time.perf_counter()
        arr, k_gamma, cv_acc, version, shape, ablation, study, parts, rho_star = run_dataset(
            name, splits, partitions, args.rho, ablation_splits, study_partitions)
        studies[name] = study
        matched[name] = rho_star
        cells, missed = outside_cells(name, arr, ablation["rho matched"].mean(axis=0),
                                      ablation["setting matched"].mean(axis=0))
        cell_rows += cells
        unexplained += missed
        r, b = study_lines(name, study, k_gamma)
        rule_rows += r
        bound_rows.append(b)
        if name == "pima":
            extra += pima_curve(parts[:ablation_splits], k_gamma, args.rho)
        if name == "twonorm":
            big = twonorm_large(ablation_splits)
            extra.append("| twonorm, " + f"{TWONORM_LARGE[0]} points, k={TWONORM_LARGE[1]:+d}, "
                         f"rho={TWONORM_LARGE[2]:g} | " + " | ".join(
                             f"{m:.1f}" for m in big.mean(axis=0)) + f" | {len(big)} |")
        mean = arr.mean(axis=0)
        se = arr.std(axis=0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0 * mean
        rows.append(f"| {name} | " + " | ".join(
            f"{m:.1f} +- {s:.1f} ({t} +- {ts})"
            for m, s, (t, ts) in zip(mean, se, THESIS[name])) + " |")
        notes.append(f"- {name} ({version}, {shape[0]} x {shape[1]}): gamma = "
                     f"{k_gamma:g} / (2d); CV accuracy over the grid 2**k / (2d), k = "
                     f"{GAMMA_STEPS[0]}..{GAMMA_STEPS[-1]}: "
                     + " ".join(f"{100 * a:.1f}" for a in cv_acc)
                     + f"; {time.perf_counter() - t1:.0f} s")
        abl_rows.append(f"| {name} | Table 3.2 | "
                        + " | ".join(f"{t}" for t, _ in THESIS[name]) + " |")
        abl_rows.append(f"| {name} | table's protocol | "
                        + " | ".join(f"{m:.1f}" for m in arr[:ablation_splits].mean(axis=0))
                        + " |")
        for variant, a in ablation.items():
            if variant == "rho matched":
                variant = f"rho = {rho_star[0]:.2g}, matched"
            if variant == "setting matched":
                variant = f"k = {rho_star[1]:+d}, rho = {rho_star[2]:g}, matched"
            abl_rows.append(f"| {name} | {variant} | "
                            + " | ".join(f"{m:.1f}" for m in a.mean(axis=0)) + " |")
        print(rows[-1], notes[-1], *abl_rows[-len(ablation) - 2:], sep="\n", flush=True)
    lines = [
        "# Seed 004 Table 3.2: Gaussian-kernel MEMPM vs kernel MPM",
        "",
        f"Machine: {machine()}. Command: `conicml reproduce huang_table_3_2"
        f"{' --quick' if args.quick else ''} --splits {splits} --cv-partitions {partitions} "
        f"--rho {args.rho:g}`; {time.perf_counter() - t0:.0f} s.",
        "",
        f"{splits} random 90/10 splits at full size; the width chosen per data set by CV "
        f"over {partitions} random 90/10 partitions of the first split's training part "
        "(kernel MPM validation accuracy); regulariser rho = "
        f"{args.rho:g} (not reported by the thesis). Cells: ours mean +- s.e. "
        "(thesis mean +- its printed spread), %.",
        "",
        "| data | MEMPM alpha | MEMPM beta | theta a + (1-theta) b | MEMPM acc | MPM alpha | "
        "MPM acc |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Width selection per data set:",
        "",
        *notes,
        "",
        "## Ablation: the width and the regulariser (not compared cells)",
        "",
        f"Means over the first {ablation_splits} splits of the table (%); `table's protocol` "
        "is the table's setting on those splits; `k`: gamma = 2**k / (2d) fixed instead of "
        "CV-chosen; `rho = 0.1`: the CV width with rho_x = rho_y = 0.1; `one common scale`: "
        "the table's width and rho on features centred and divided by one scale (the root "
        "mean feature variance) instead of standardised one by one; `rho = ..., matched`: "
        "the table's width at the rho matched to the thesis's MPM alpha (last section); "
        "`k = ..., rho = ..., matched`: the study's (width, rho) matched to the thesis's "
        "MPM alpha and accuracy (last section). "
        "`Table 3.2` repeats the thesis's row for reading (it reports neither its width "
        "nor its rho).",
        "",
        "| data | variant | MEMPM alpha | MEMPM beta | objective | MEMPM acc | MPM alpha | "
        "MPM acc |",
        "|---|---|---|---|---|---|---|---|",
        *abl_rows,
        *selection_section(ablation_splits, study_partitions, rule_rows, bound_rows, extra,
                           rule_summary(studies)),
        *cells_section(ablation_splits, matched, cell_rows, unexplained),
    ]
    write_results("huang_table_3_2", "\n".join(lines), quick=args.quick)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
