"""Reproduce seed 004's synthetic experiments: the robust toy (Sec. 3.5.2), Table 4.2
(the three M4 toys: M4 vs SVM vs MPM) and Table 5.1 (the BMPM toy).

The thesis shows one random draw of each toy; we average over ``--draws`` seeded
draws (mean +- sd) and, for the Gaussian toys, also give the exact accuracy of the
learned hyperplane under the true distributions (no test-sampling noise).

Run ``conicml reproduce huang_toys [--quick] [--draws N]``; writes
``conicml-results/huang_toys.md``.

The toys' distributions, parameters and models are in the Notes of :func:`main`.
"""

from __future__ import annotations

#: BLAS/OpenMP threads; the runner sets them before NumPy starts
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import norm, skew  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.estimators.svm import SVMClassifier  # noqa: E402
from conicml.formulations import m4, minimax  # noqa: E402

from ._harness import machine, progress, write_results  # noqa: E402

#: how the tables set the thesis's numbers beside ours (conicml.reproductions._tables)
THESIS_LAYOUT = "columns"
TABLES = ('004:robust-toy', '004:T4.2', '004:T5.1')
EXPECTED_SECONDS = 70
PROTOCOL = ("full: the thesis's sample sizes, averaged over 20 seeded draws where the thesis "
            "shows one; Table 5.1 with the Gaussian worst-case map (what its TN rates need); "
            "its kernel ridge 1e-5 is our choice (the thesis gives none), ablated")
RATE_CELLS = '.'  # every compared cell is an accuracy, AUC or error rate

ROBUST_THESIS = {"MPM": (99.1, 93.0), "MEMPM": (99.7, 97.0), "robust MPM": (87.3, 98.0),
                 "robust MEMPM": (93.2, 100.0), "robust MEMPM (nu_x = nu_y = max)": (91.0, 98.0)}
T42_THESIS = {"I": (98.8, 96.8, 98.8), "II": (98.8, 97.2, 98.8), "III": (98.3, 97.5, 95.8)}
T51_THESIS = {0.1: (13.85, 100.00, 100.00), 0.6: (63.08, 100.00, 100.00),
              0.95: (95.38, 99.16, 93.33), 0.99: (100.00, 81.94, 86.67)}


def gaussian_acc(w, b, truth):
    """Exact accuracy of f = w.z + b (x iff f >= 0) under N(mx, Sx), N(my, Sy), theta = 1/2."""
    mx, Sx, my, Sy = truth
    ax = norm.cdf((w @ mx + b) / np.sqrt(w @ Sx @ w))
    ay = norm.cdf(-(w @ my + b) / np.sqrt(w @ Sy @ w))
    return 0.5 * (ax + ay)


# -- robust toy --------------------------------------------------------------------------
def robust_toy(draws: int) -> list[str]:
    mx, Sx = np.array([3.0, 0.0]), np.diag([1.0, 3.0])
    my, Sy = np.array([-3.0, 0.0]), np.diag([3.0, 1.0])
    truth = (mx, Sx, my, Sy)
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in ROBUST_THESIS}
    params = []
    for seed in progress(range(draws), "robust toy"):
        rng = np.random.default_rng(seed)
        X = rng.multivariate_normal(mx, Sx, 10)
        Y = rng.multivariate_normal(my, Sy, 10)
        Z, y = np.vstack([X, Y]), np.r_[np.ones(10), -np.ones(10)]
        mom = cm.ClassMoments.from_data(Z, y)
        dxm, dym = mx - mom.mean_pos, my - mom.mean_neg
        nu_x = float(np.sqrt(dxm @ np.linalg.solve(Sx, dxm)))
        nu_y = float(np.sqrt(dym @ np.linalg.solve(Sy, dym)))
        rho_x = float(np.linalg.norm(Sx - mom.cov_pos))
        rho_y = float(np.linalg.norm(Sy - mom.cov_neg))
        nu = max(nu_x, nu_y)
        params.append((nu_x, nu_y, rho_x, rho_y))
        specs = {
            "MPM": ("mpm", {}),
            "MEMPM": ("mempm", {}),
            "robust MPM": ("mpm", {"nu_x": nu, "nu_y": nu, "ridge": (rho_x, rho_y)}),
            "robust MEMPM": ("mempm", {"nu_x": nu_x, "nu_y": nu_y, "ridge": (rho_x, rho_y)}),
            "robust MEMPM (nu_x = nu_y = max)": ("mempm", {"nu_x": nu, "nu_y": nu,
                                                           "ridge": (rho_x, rho_y)}),
        }
        trng = np.random.default_rng(1000 + seed)  # a test sample of 50 + 50 per draw
        Zt = np.vstack([trng.multivariate_normal(mx, Sx, 50),
                        trng.multivariate_normal(my, Sy, 50)])
        yt = np.r_[np.ones(50), -np.ones(50)]
        for name, (family, kw) in specs.items():
            if family == "mpm":
                prog = minimax.mpm(mom, bound="gaussian", **kw)
                model = prog.decode(cm.solve(prog, "clarabel"))
                bound = model["alpha"]
            else:
                prog = minimax.mempm(mom, theta=0.5, bound="gaussian", **kw)
                model = prog.decode(cm.solve(prog, "quadratic-interpolation"))
                bound = 0.5 * model["alpha"] + 0.5 * model["beta"]
            # minimax models classify x iff w.z + b >= 0 (package convention)
            test = np.mean(np.where(Zt @ model["w"] + model["b"] >= 0, 1.0, -1.0) == yt)
            results[name].append((100 * bound, 100 * gaussian_acc(model["w"], model["b"],
                                                                 truth), 100 * test))
    rows = []
    for name, vals in results.items():
        arr = np.array(vals)
        th = ROBUST_THESIS[name]
        rows.append(f"| {name} | {arr[:, 0].mean():.1f} +- {arr[:, 0].std():.1f} | "
                    f"{arr[:, 1].mean():.1f} +- {arr[:, 1].std():.1f} | "
                    f"{arr[0, 0]:.1f} / {arr[0, 1]:.1f} | {th[0]} | {th[1]} |")
    p = np.array(params)
    spread = []
    for name, vals in results.items():
        arr = np.array(vals)
        for j, (what, col) in enumerate((("bound %", 0), ("test acc % (50 + 50 points)", 2))):
            spread.append(percentile_row(name, what, ROBUST_THESIS[name][j], arr[:, col]))
    return [
        "## Robust toy (Sec. 3.5.2)",
        "",
        f"{draws} draws of 10 + 10 training points; mean +- sd over draws, and the first "
        "draw alone; acc = exact accuracy under the true Gaussians (the thesis: one draw, "
        "a test sample).",
        "",
        "| model | bound % | acc % | first draw bound / acc | thesis bound | thesis acc |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"Robust parameters from the truth, mean over draws: nu_x = {p[:, 0].mean():.3f}, "
        f"nu_y = {p[:, 1].mean():.3f}, rho_x = {p[:, 2].mean():.3f}, rho_y = "
        f"{p[:, 3].mean():.3f} (thesis's draw: 0.046, 0.496, 1.561, 0.972).",
        "",
        "### Robust toy: the published single draw among ours",
        "",
        f"The thesis shows one draw and a test sample (its accuracies are whole percents: "
        f"100 test points is our reading); its numbers against the spread of our {draws} "
        "draws, each with a test sample of 50 + 50 points from the truth: our 5th / 50th / "
        "95th percentiles, and the share of our draws below / at or below the published "
        "number.",
        "",
        *PERCENTILE_HEAD,
        *spread,
        "",
    ]


PERCENTILE_HEAD = ("| model | quantity | published (one draw) | ours p5 / p50 / p95 | "
                   "draws below / at or below % |", "|---|---|---|---|---|")


def percentile_row(name: str, what: str, published: float, values: np.ndarray) -> str:
    """One row of a 'published single draw among ours' table."""
    q = np.percentile(values, [5, 50, 95])
    return (f"| {name} | {what} | {published:.1f} | "
            f"{q[0]:.1f} / {q[1]:.1f} / {q[2]:.1f} | "
            f"{100 * np.mean(values < published - 1e-9):.0f} / "
            f"{100 * np.mean(values <= published + 1e-9):.0f} |")


# -- Table 4.2 ----------------------------------------------------------------------------
def rotation(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


TOYS = {
    "I": ((np.array([-3.5, 0.0]), np.diag([3.0, 4.5])),
          (np.array([3.5, 0.0]), np.diag([1.0, 1.5])), 120, 250),
    "II": ((np.array([-4.0, 0.0]), np.diag([1.0, 5.0])),
           (np.array([4.0, 0.0]), rotation(-7 * np.pi / 8) @ np.diag([1.0, 5.0])
            @ rotation(-7 * np.pi / 8).T), 120, 250),
    "III": ((np.array([-3.0, 0.0]), np.diag([0.5, 8.0])),
            (np.array([4.0, 0.0]), np.diag([6.0, 1.0])), 20, 60),
}


_ROT = rotation(-7 * np.pi / 8)
#: other readings of the toys' generators (Table 4.2 ablation): toy III with 20 training
#: points in all (the text's "only 20 training points"; the caption's 20 per class is the
#: table's), toy II with the y mean (lost in the garbled text) nearer to x's, and toy II
#: with y drawn as x and the points rotated about the origin (the literal "the y data are
#: rotated")
TOY_READINGS = {
    "III, 10 + 10 training points": ("III", (TOYS["III"][0], TOYS["III"][1], 10, 60)),
    "II, y mean (2, 0)": ("II", (TOYS["II"][0], (np.array([2.0, 0.0]), TOYS["II"][1][1]),
                                 120, 250)),
    "II, y mean (1, 0)": ("II", (TOYS["II"][0], (np.array([1.0, 0.0]), TOYS["II"][1][1]),
                                 120, 250)),
    "II, y = x rotated about the origin": ("II", (TOYS["II"][0], (
        _ROT @ np.array([-4.0, 0.0]), TOYS["II"][1][1]), 120, 250)),
}


def cv_pick(make, grid, X, y):
    best, best_acc = grid[0], -1.0
    for value in grid:
        accs = []
        for tr, te in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
            try:
                accs.append(np.mean(make(value, X[tr], y[tr])(X[te]) == y[te]))
            except Exception:  # noqa: BLE001  (an infeasible fold scores 0)
                accs.append(0.0)
        if np.mean(accs) > best_acc:
            best, best_acc = value, float(np.mean(accs))
    return best


def m4_predictor(C, X, y):
    prog = m4.m4(X, y, C)
    sol = cm.solve(prog)
    if not sol.ok:
        raise RuntimeError(sol.message)
    model = prog.decode(sol)
    return lambda Z: np.where(m4.decision_values(prog.data, model, Z) >= 0, 1.0, -1.0)


def svm_predictor(C, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SVMClassifier(C=C, solver="smo").fit(X, y)
    return clf.predict


def mpm_predictor(X, y):
    prog = minimax.mpm(X, y)
    model = prog.decode(cm.solve(prog, "clarabel"))
    return lambda Z: np.where(Z @ model["w"] + model["b"] >= 0, 1.0, -1.0)


#: fixed SVM C of the Table 4.2 ablation
SVM_FIXED_C = (0.001, 0.01, 0.1, 1.0, 100.0)


def toy_draw(toy, seed: int) -> tuple[np.ndarray, ...]:
    """Training and test sample of one draw of a Table 4.2 toy ``((mx, Sx), (my, Sy),
    n_train, n_test)`` (per class)."""
    (mx, Sx), (my, Sy), n_tr, n_te = toy
    rng = np.random.default_rng(100 + seed)
    X = np.vstack([rng.multivariate_normal(mx, Sx, n_tr),
                   rng.multivariate_normal(my, Sy, n_tr)])
    Xt = np.vstack([rng.multivariate_normal(mx, Sx, n_te),
                    rng.multivariate_normal(my, Sy, n_te)])
    return X, np.r_[np.ones(n_tr), -np.ones(n_tr)], Xt, np.r_[np.ones(n_te), -np.ones(n_te)]


def toy_accuracies(X, y, Xt, yt) -> list[float]:
    """Test accuracy % of M4 (separable when the data allow it, else soft with C by 3-fold
    CV), the SVM (C by 3-fold CV) and MPM."""
    try:
        pm4 = m4_predictor(None, X, y)  # separable M4 when the data allow it
    except RuntimeError:
        C = cv_pick(m4_predictor, (0.1, 1.0, 10.0), X, y)
        pm4 = m4_predictor(C, X, y)
    Csvm = cv_pick(svm_predictor, (0.1, 1.0, 10.0, 100.0), X, y)
    psvm = svm_predictor(Csvm, X, y)
    pmpm = mpm_predictor(X, y)
    return [100 * np.mean(p(Xt) == yt) for p in (pm4, psvm, pmpm)]


def table_4_2(draws: int) -> list[str]:
    rows, spread, fixed, readings = [], [], [], []
    for toy, spec in TOYS.items():
        accs, svm_c = [], []
        for seed in progress(range(draws), toy):
            X, y, Xt, yt = toy_draw(spec, seed)
            accs.append(toy_accuracies(X, y, Xt, yt))
            svm_c.append([100 * np.mean(svm_predictor(C, X, y)(Xt) == yt)
                          for C in SVM_FIXED_C])
        a = np.array(accs)
        th = T42_THESIS[toy]
        for j, model in enumerate(("M4", "SVM", "MPM")):
            spread.append(percentile_row(f"{toy}", f"{model} acc %", th[j], a[:, j]))
        fixed.append(f"| {toy} | " + " | ".join(f"{v:.1f}" for v in np.mean(svm_c, axis=0))
                     + f" | {a[:, 1].mean():.1f} | {th[1]} |")
        rows.append(f"| {toy} | " + " | ".join(
            f"{a[:, j].mean():.1f} +- {a[:, j].std():.1f}" for j in range(3)) +
            f" | {th[0]} | {th[1]} | {th[2]} |")
    for label, (toy, spec) in progress(TOY_READINGS.items(), "toy readings"):
        a = np.array([toy_accuracies(*toy_draw(spec, seed)) for seed in range(draws)])
        readings.append(f"| {label} | " + " | ".join(f"{v:.1f}" for v in a.mean(axis=0))
                        + " | " + " / ".join(f"{v}" for v in T42_THESIS[toy]) + " |")
    return [
        "## Table 4.2: M4 vs SVM vs MPM on the three toys (test accuracy %)",
        "",
        f"{draws} seeded draws per toy, mean +- sd.",
        "",
        "| toy | M4 | SVM | MPM | thesis M4 | thesis SVM | thesis MPM |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "### Table 4.2: the published single draw among ours",
        "",
        f"The thesis shows one draw per toy; its numbers against the spread of our {draws} "
        "draws (5th / 50th / 95th percentiles, share of draws below / at or below).",
        "",
        *PERCENTILE_HEAD,
        *spread,
        "",
        "### Table 4.2: the SVM at a fixed C (ablation, same draws)",
        "",
        "Mean test accuracy % of the linear SVM with C fixed instead of chosen by 3-fold CV; "
        "`CV` is the table's column, `Table 4.2` the thesis's SVM for reading.",
        "",
        "| toy | " + " | ".join(f"C = {c:g}" for c in SVM_FIXED_C) + " | CV | Table 4.2 |",
        "|---|" + "---|" * (len(SVM_FIXED_C) + 2),
        *fixed,
        "",
        "### Table 4.2: other readings of the generators (ablation, same seeds)",
        "",
        "Mean test accuracy % of M4 / SVM / MPM as in the table with one reading of a "
        "toy's generator changed: toy III with 20 training points in all (the text's "
        "\"only 20 training points\"; the table uses the caption's 20 per class), toy II "
        "with the y mean (lost in the garbled text; the table's reading is (4, 0)) nearer "
        "to x's, and toy II with y drawn as x and its points rotated by -7 pi / 8 about "
        "the origin. `Table 4.2` repeats the thesis's M4 / SVM / MPM of that toy for "
        "reading; these rows are measurements, not the protocol.",
        "",
        "| reading | M4 | SVM | MPM | Table 4.2 M4 / SVM / MPM |",
        "|---|---|---|---|---|",
        *readings,
        "",
    ]


def solve_first(prog, solvers):
    """The first solver's solution that carries a point (clarabel fails on some kernel
    programs, errata S004-§5.3)."""
    sol = None
    for name in solvers:
        sol = cm.solve(prog, name)
        if sol.ok:
            return sol
    return sol


# -- Table 5.1 ----------------------------------------------------------------------------
#: (label, bound, ridge, gamma, covariance estimate, generator variance) of the thesis's
#: setting (first) and the ablations
T51_SETTINGS = (
    ("Gaussian kappa, rho = 1e-5, gamma = 0.2 (default)", "gaussian", 1e-5, 0.2, "plug-in",
     0.5),
    ("Chebyshev kappa (the previous setting)", "chebyshev", 1e-5, 0.2, "plug-in", 0.5),
    ("Chebyshev, rho = 1e-9", "chebyshev", 1e-9, 0.2, "plug-in", 0.5),
    ("Gaussian, rho = 1e-7", "gaussian", 1e-7, 0.2, "plug-in", 0.5),
    ("Gaussian, rho = 1e-3", "gaussian", 1e-3, 0.2, "plug-in", 0.5),
    ("Gaussian, rho = 1e-2", "gaussian", 1e-2, 0.2, "plug-in", 0.5),
    ("Gaussian, gamma = 0.02 (the exp(-d^2 / (2 sigma^2)) reading)", "gaussian", 1e-5, 0.02,
     "plug-in", 0.5),
    ("Gaussian, gamma = 1", "gaussian", 1e-5, 1.0, "plug-in", 0.5),
    ("Gaussian, gamma = 5 (the exp(-sigma d^2) reading)", "gaussian", 1e-5, 5.0, "plug-in",
     0.5),
    ("Gaussian, unbiased 1/(N-1) covariances", "gaussian", 1e-5, 0.2, "unbiased", 0.5),
    ("Gaussian, toy drawn with covariance 0.25 I (the 'sd 0.5' reading)", "gaussian", 1e-5,
     0.2, "plug-in", 0.25),
)
#: draws of the default setting whose spread is set beside the thesis's one draw
T51_SINGLE_DRAWS = 100


def bmpm_toy(seed: int, variance: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """One draw of the Table 5.1 toy: 15 x ~ N((0, 1.5), v I), 65 y ~ N((0, 0), v I)."""
    rng = np.random.default_rng(500 + seed)
    X = rng.multivariate_normal([0.0, 1.5], variance * np.eye(2), 15)
    Y = rng.multivariate_normal([0.0, 0.0], variance * np.eye(2), 65)
    return np.vstack([X, Y]), np.r_[np.ones(15), -np.ones(65)]


def _unbiased(data: dict) -> dict:
    """The kernel BMPM data with the within-class scatter scaled by N/(N-1) (the ridge
    rho I left as is): the unbiased covariance instead of Theorem 9's plug-in 1/N."""
    data = dict(data)
    for c, n in (("x", data["n_pos"]), ("y", data["n_neg"])):
        S, rho = data["S" + c], data["rho_" + c]
        eye = np.eye(S.shape[0])
        S = n / (n - 1) * (S - rho * eye) + rho * eye
        data["S" + c], data["R" + c] = S, np.linalg.cholesky(S).T
    return data


def bmpm_toy_fit(Z, y, beta0, bound, ridge, gamma, cov="plug-in", diagnostics=False):
    """Kernel BMPM (Theorem 9) on the toy; returns (TN %, alpha %, TP %) on the training
    points, None when beta0 >= beta0m (eq. 3.44), or "unsolved" when the solver stops
    without a certified point (rosen at its iteration limit). With ``diagnostics``, two
    more numbers of the y scores u = f(y_i): the TN rate the Gaussian model claims,
    Phi(-mean(u) / sd(u)) in % (plug-in sd, no ridge), and the skewness of u.

    Under the Gaussian map a beta0 below 1/2 has kappa(beta0) = Phi^-1(beta0) < 0: the
    numerator 1 - kappa(beta0) sigma_y of (3.14) is then convex, the ratio is no longer
    pseudo-concave and the perspective SOCP does not apply (errata S004-P3), so the
    formulation refuses it. The thesis's own method, Rosen's gradient projection (Sec.
    3.2.5, algorithm A1 of the note), still climbs to a stationary point of the ratio;
    that local maximum is what this row reports for beta0 = 0.1.
    """
    b_build = max(beta0, 0.5) if bound == "gaussian" else beta0
    prog = minimax.bmpm(Z, y, b_build, kernel="rbf", gamma=gamma, ridge=ridge, bound=bound)
    data = _unbiased(prog.data) if cov == "unbiased" else prog.data
    if b_build != beta0 or data is not prog.data:
        prog = minimax._bmpm_program(data, beta0, bound)
    solvers = ("rosen",) if beta0 < 0.5 and bound == "gaussian" else ("dinkelbach", "ecos",
                                                                          "scs")
    sol = solve_first(prog, solvers)
    if sol.status.value == "user_limit":
        return "unsolved"
    model = prog.decode(sol)
    if not model.get("feasible", True):
        return None
    f = minimax.decision_values(prog.data, model, Z)
    rates = (100 * np.mean(f[y < 0] < 0), 100 * model["alpha"], 100 * np.mean(f[y > 0] >= 0))
    if not diagnostics:
        return rates
    u = f[y < 0]
    return (*rates, 100 * norm.cdf(-u.mean() / u.std()), float(skew(u)))


def t51_single_draws(n: int, draws: int) -> list[str]:
    """The thesis's one draw against ``n`` single draws of the default setting: where each
    published number falls among ours, and the two diagnostics of :func:`bmpm_toy_fit`."""
    label, bound, ridge, gamma, cov, variance = T51_SETTINGS[0]
    vals = {b0: [] for b0 in T51_THESIS}
    above = 0  # draws whose training TN rate is >= beta0 at every beta0, as the thesis's
    for seed in progress(range(n), "Table 5.1 single draws"):
        Z, y = bmpm_toy(seed, variance)
        tn_ok = True
        for b0 in T51_THESIS:
            res = bmpm_toy_fit(Z, y, b0, bound, ridge, gamma, cov, diagnostics=True)
            if isinstance(res, tuple):
                vals[b0].append(res)
            tn_ok = tn_ok and isinstance(res, tuple) and res[0] >= 100 * b0 - 1e-9
        above += tn_ok
    rows, diag, outside = [], [], []
    for b0, v in vals.items():
        a = np.array(v)
        for j, name in enumerate(("TN rate %", "alpha %", "TP rate %")):
            pub, col = T51_THESIS[b0][j], a[:, j]
            lo, mid, hi = np.percentile(col, [5, 50, 95])
            below, at_or_below = 100 * np.mean(col < pub - 1e-9), 100 * np.mean(col <= pub + 1e-9)
            rows.append(f"| {100 * b0:.0f} | {name} | {pub:.2f} | {lo:.2f} / {mid:.2f} / "
                        f"{hi:.2f} | {below:.0f} / {at_or_below:.0f} |")
            if not lo - 1e-9 <= pub <= hi + 1e-9:
                outside.append(f"{name} at beta0 = {100 * b0:.0f} % ({pub:.2f}; ours "
                               f"{lo:.2f} to {hi:.2f})")
        diag.append(f"| {100 * b0:.0f} | {np.mean(a[:, 0]):.2f} | {np.mean(a[:, 3]):.2f} | "
                    f"{np.mean(a[:, 4]):+.2f} |")
    return [
        f"### Table 5.1: the published single draw among {n} of ours (default setting)",
        "",
        f"The thesis shows one draw; its numbers set against the spread of {n} seeded single "
        f"draws of the default setting (the table above averages the first {draws} of "
        "them): our 5th / 50th / 95th percentiles, and the share of our draws below / "
        "at or below the published number.",
        "",
        "| beta0 % | quantity | published (one draw) | ours p5 / p50 / p95 | "
        "draws below / at or below % |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "Published numbers outside our central 90 %: "
        + ("; ".join(outside) if outside else "none") + ".",
        "",
        f"Jointly: the thesis's draw has a training TN rate at or above beta0 in all four "
        f"rows; {above} of our {n} draws do. Its TN = 100 % with alpha = 81.94 % at beta0 = "
        f"99 %: TN = 100 % in {sum(r[0] >= 100 - 1e-9 for r in vals[0.99])} of our draws "
        "(the Chebyshev rows of the ablation reach TN = 100 % only with alpha far below).",
        "",
        "Why the training TN rate differs from beta0: the fit makes the Gaussian model's TN "
        "rate, Phi(-mean(u) / sd(u)) of the y scores u = f(y_i), equal beta0 (the beta "
        "constraint is tight), but the scores the RBF map produces are skewed, so the "
        "empirical rate differs from the model's (mean over the draws):",
        "",
        "| beta0 % | training TN rate % | TN rate the Gaussian model claims % | "
        "skewness of the y scores |",
        "|---|---|---|---|",
        *diag,
        "",
    ]


def table_5_1(draws: int, single_draws: int = 0) -> list[str]:
    out = {s[0]: {b0: [] for b0 in T51_THESIS} for s in T51_SETTINGS}
    unsolved = {s[0]: {b0: 0 for b0 in T51_THESIS} for s in T51_SETTINGS}
    for seed in progress(range(draws), "Table 5.1"):
        for label, bound, ridge, gamma, cov, variance in T51_SETTINGS:
            Z, y = bmpm_toy(seed, variance)
            for b0 in T51_THESIS:
                res = bmpm_toy_fit(Z, y, b0, bound, ridge, gamma, cov)
                if res == "unsolved":
                    unsolved[label][b0] += 1
                    continue
                out[label][b0].append((np.nan, 0.0, np.nan) if res is None else res)
    default = T51_SETTINGS[0][0]
    rows = []
    for b0, vals in out[default].items():
        a = np.array(vals)
        th = T51_THESIS[b0]
        rows.append(f"| {100 * b0:.2f} | " + " | ".join(
            f"{np.nanmean(a[:, j]):.2f} +- {np.nanstd(a[:, j]):.2f}" for j in range(3)) +
            f" | {th[0]:.2f} | {th[1]:.2f} | {th[2]:.2f} |")
    ablation = []
    for label, vals in out.items():
        cells = []
        for b0 in T51_THESIS:
            a = np.array(vals[b0])
            miss = unsolved[label][b0]
            cells.append(" / ".join(f"{np.nanmean(a[:, j]):.1f}" for j in range(3)) +
                         (f" ({miss} draw{'s' * (miss > 1)} unsolved)" if miss else ""))
        ablation.append(f"| {label} | " + " | ".join(cells) + " |")
    miss = sum(unsolved[default].values())
    if miss:
        rows.append(f"| ({miss} fits unsolved: rosen at its iteration limit, left out) |"
                    + " |" * 6)
    ablation.append("| the thesis (one draw) | " + " | ".join(
        " / ".join(f"{v:.1f}" for v in T51_THESIS[b0]) for b0 in T51_THESIS) + " |")
    return [
        "## Table 5.1: kernel BMPM toy (training TN rate tracks beta0)",
        "",
        f"{draws} seeded draws of 15 + 65 points, mean +- sd over draws (the thesis: one "
        "draw). Gaussian worst-case map kappa = Phi^-1 (eq. 3.24), rho = 1e-5, gamma = 0.2; "
        "beta0 = 0.1 (kappa(beta0) < 0, a non-convex ratio) by rosen, a stationary point; "
        "the others by dinkelbach (certified optimum).",
        "",
        "| beta0 % | TN rate % | alpha % | TP rate % | thesis TN | thesis alpha | thesis TP |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "### Table 5.1 ablation (mean TN / alpha / TP %, same draws)",
        "",
        "Why the Gaussian map: the thesis's TN 13.85 % at beta0 = 10 % puts the threshold "
        "well below the projected mean of y, which needs kappa(beta0) < 0 "
        "(Phi^-1(0.1) = -1.28); the Chebyshev kappa = sqrt(beta0 / (1 - beta0)) >= 0 keeps "
        "it at or above that mean (at the mean itself, kappa = 0, TN is already about a "
        "third), and its kappa(0.95) = 4.36, kappa(0.99) = 9.95 (against Phi^-1: 1.64, "
        "2.33) leave little of alpha, at any rho (the rho = 1e-9 row: TN still far above "
        "the thesis's at beta0 = 10 and 60 %, alpha far below at 95 and 99 %). The "
        "remaining gap, TN at beta0 = 60 % (ours below "
        "beta0, the thesis's above it), shrinks only with a larger rho or gamma, which move "
        "alpha at beta0 = 99 % away from 81.94 % (down with rho, up toward 100 % with "
        "gamma): no setting below fits all four rows of the thesis's single draw.",
        "",
        "| setting | beta0 10 % | beta0 60 % | beta0 95 % | beta0 99 % |",
        "|---|---|---|---|---|",
        *ablation,
        "",
        *(t51_single_draws(single_draws, draws) if single_draws else []),
    ]


def main() -> None:
    r"""Run the reproduction and write its tables.

    Notes
    -----
    **Robust toy (Sec. 3.5.2).** x ~ N((3, 0), diag(1, 3)), y ~ N((-3, 0), diag(3, 1)),
    10 training points per class, theta = 1/2, Gaussian bound (Phi^-1; the thesis's
    bounds are Gaussian ones). Robust parameters set from the truth as the thesis does:
    nu_x = sqrt((xbar - xbar0)^T Sigma_x^-1 (xbar - xbar0)), rho_x = ||Sigma_x - Sigma_x0||_F
    (likewise y). Models: MPM, MEMPM, robust MPM (nu = max(nu_x, nu_y), rho as above),
    robust MEMPM (nu_x, nu_y, rho_x, rho_y), robust MEMPM with nu_x = nu_y = max. "bound" =
    the worst-case accuracy theta alpha + (1 - theta) beta (MPM: alpha); "acc" = exact
    accuracy (1/2 Phi(.) + 1/2 Phi(.)) under the true Gaussians.

    **Table 4.2.** Toy I: x ~ N((-3.5, 0), diag(3, 4.5)), y ~ N((3.5, 0), diag(1, 1.5)),
    120 train / 250 test per class; toy II: x ~ N((-4, 0), diag(1, 5)), y ~ N((4, 0), R
    diag(1, 5) R^T) with R the rotation by -7 pi / 8 (the thesis's description is garbled;
    the y mean (4, 0) is our reading); toy III: x ~ N((-3, 0), diag(0.5, 8)),
    y ~ N((4, 0), diag(6, 1)), 20 train / 60 test per class. Linear models: M4 (separable
    M4 by ``dinkelbach-gfp`` when the training set is separable, else the soft M4 with C chosen
    by 3-fold CV from {0.1, 1, 10}), SVM (C by 3-fold CV from {0.1, 1, 10, 100}, ``smo``),
    MPM (``clarabel``). Test accuracy on the test sample. Ablations: the SVM at fixed C,
    and other readings of the generators (``TOY_READINGS``: toy III with 10 + 10 training
    points, toy II with the y mean nearer to x's or y rotated about the origin).

    **Table 5.1.** 15 x ~ N((0, 1.5), 0.5 I), 65 y ~ N((0, 0), 0.5 I); kernel BMPM with
    k(u, v) = exp(-||u - v||^2 / 5) (gamma = 0.2), regulariser rho_x = rho_y = 1e-5 (the
    thesis does not give its value; without it the kernel problem is unbounded, errata
    S004-§5.3), and the Gaussian worst-case map kappa = Phi^-1 (eq. 3.24): the thesis's
    TN 13.85 % at beta0 = 10 % needs kappa(beta0) < 0, which only Phi^-1 gives. beta0 in
    {0.1, 0.6, 0.95, 0.99}; beta0 = 0.1 (a non-convex ratio) by ``rosen``, the others by
    ``dinkelbach`` (ecos, scs as fall-backs; clarabel fails on these kernel programs,
    errata S004-§5.3); TN / TP rates on the training points (the thesis's 13.85 = 9/65,
    93.33 = 14/15 are training-set fractions), alpha = the worst-case bound. An ablation
    table gives the Chebyshev map, other rho and gamma, unbiased covariances and the toy
    drawn with covariance 0.25 I (the thesis's "0.5" read as a standard deviation). Since
    the thesis shows one draw, its numbers are also set among ``--single-draws`` (100)
    single draws of the default setting (percentiles), beside two measurements of the
    y scores u = f(y_i): the TN rate the Gaussian model claims, Phi(-mean(u) / sd(u)), and
    the skewness of u (why the training TN rate can fall below beta0).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--draws", type=int, default=None)
    parser.add_argument("--single-draws", type=int, default=None,
                        help="draws of Table 5.1's default setting set beside the thesis's "
                        f"one draw (default {T51_SINGLE_DRAWS}; --quick: 4)")
    args = parser.parse_args()
    draws = args.draws or (2 if args.quick else 20)
    t0 = time.perf_counter()
    lines = ["# Seed 004 synthetic experiments: robust toy, Table 4.2, Table 5.1", "",
             f"Machine: {machine()}. Command: `conicml reproduce huang_toys"
             f"{' --quick' if args.quick else f' --draws {draws}'}`.", ""]
    lines += robust_toy(draws)
    single = args.single_draws if args.single_draws is not None else (
        4 if args.quick else T51_SINGLE_DRAWS)
    lines += table_5_1(draws, single)
    lines += table_4_2(draws)
    lines.append(f"Total time {time.perf_counter() - t0:.0f} s.")
    text = "\n".join(lines) + "\n"
    write_results("huang_toys", text, args.quick)
    print(text)


if __name__ == "__main__":
    main()
