"""Tayal 2014 section 7.4 / Table 7.1: saddles of Simple AO; the AO variants as probes grow.

Part 1 — the toy of section 7.4.1 (F34): f = (x1 + x2 - 2)^2 - 3 (x1 + x2 - 2)(x3 - 1)
+ (x3 - 1)^2. Simple AO over the blocks {x1, x2} and {x3} (each block minimised by the
same Coleman–Li trust region the feature-scaling methods use) started at (1, 1, 1)
does not move; the Hessian there is indefinite (a saddle); in the perspective
x_i = xbar_i / y the (x3, y) Hessian at (1, 1) is indefinite, so the perspective
block sees the descent direction. Thesis values: eigenvalues {-1.3589, 0, 7.3589}
and {-1.7082, 11.7082}.

Part 2 — the pattern of Table 7.1 on a synthetic stand-in for NDCC (Thompson's
generator is not available; ``conicml.datasets.ndcc_like`` builds data
of the same structure: Gaussian clusters at the vertices of three concentric cubes in
the informative subspace, opposite vertices of opposite classes, plus N(0, 1) probes).
Reduced: ``--informative`` informative features (thesis: 20), 200 training and 1000
test points (as the thesis), the thesis's probe counts {0, 2, 5, 10, 20, 50, 100}, one
draw per row, C and mu fixed (thesis: validated). For each of Simple AO, Margin AO-I and
Margin AO-II: the smallest eigenvalue of the projected Hessian of Omega at the end,
(M) minimum, (S) saddle or (N) not stationary (projected gradient above 100 tol), test
error, and whether exactly the informative set was selected (z_l > 1 % of max z).

Usage: ``conicml reproduce tayal_ch7_saddle [--quick] [--limit SECONDS]``
"""

from __future__ import annotations

#: BLAS/OpenMP threads; the runner sets them before NumPy starts
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS",)

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import conicml as cm  # noqa: E402
from conicml.datasets import ndcc_like  # noqa: E402
from conicml.formulations.feature_scaling import feature_scaled_svm, fs_kernel  # noqa: E402
from conicml.solvers._bound_tr import bound_trust_region  # noqa: E402

from ._harness import machine, progress, run_with_limit, write_results  # noqa: E402

#: how the tables set the thesis's numbers beside ours (conicml.reproductions._tables)
THESIS_LAYOUT = "columns"
TABLES = ('000:T7.1',)
# an estimate of the default run on 2 cores: 7 probe counts x 3 methods, 600 s limit
# per fit
EXPECTED_SECONDS = 1200
PROTOCOL = ("reduced: a synthetic stand-in for NDCC (Thompson's generator is not available), 10 "
            "informative features (thesis 20; with 20 the stand-in's fits keep 3-5 of them at "
            "C = 1, mu <= 1), the thesis's probes {0, 2, 5, 10, 20, 50, 100}, one draw per "
            "row, C and mu fixed (thesis: validated); for time")
RATE_CELLS = '(?!)'  # no compared cell is a rate (times, eigenvalues, counts)

# Table 7.1 (NDCC, 20 informative features): vmin / test error % / label
THESIS_71 = {
    0: ("0.0242 / 8.3 (M)", "0.0889 / 9.4 (M)", "0.0288 / 8.9 (M)"),
    2: ("-0.9567 / 8.9 (S)", "0.0201 / 10.7 (M)", "0.0307 / 9.8 (M)"),
    5: ("-0.4114 / 19.1 (S)", "0.0232 / 17.5 (M)", "0.0463 / 8.4 (M)"),
    10: ("-20.1816 / 44.9 (S)", "0.0209 / 11.2 (M)", "0.0254 / 9.9 (M)"),
    20: ("-4.5354 / 52.0 (S)", "0.0221 / 10.4 (M)", "0.0256 / 9.9 (M)"),
    50: ("-3.0313 / 50.0 (S)", "0.0000 / 48.0 (M)", "0.0199 / 9.8 (M)"),
    100: ("-2.3565 / 47.5 (S)", "0.0000 / 45.9 (M)", "0.0194 / 10.5 (M)"),
}


def toy(x):
    a, b = x[0] + x[1] - 2, x[2] - 1
    return a**2 - 3 * a * b + b**2


def toy_grad(x):
    a, b = x[0] + x[1] - 2, x[2] - 1
    ga, gb = 2 * a - 3 * b, -3 * a + 2 * b
    return np.array([ga, ga, gb])


def _fit(X, y, method, C, mu):
    """The decoded model of ``fs-<method>`` on the feature-scaled SVM program."""
    program = feature_scaled_svm(X, y, C, mu)
    return program.decode(cm.solve(program, f"fs-{method}"))


TOY_HESS = np.array([[2.0, 2, -3], [2, 2, -3], [-3, -3, 2]])


def part1() -> list[str]:
    x = np.ones(3)
    moves = []
    for _ in range(5):  # Simple AO sweeps
        for idx in ([0, 1], [2]):
            def fun(v, order, idx=idx, x=x):
                w = x.copy()
                w[idx] = v
                return toy(w), toy_grad(w)[idx], TOY_HESS[np.ix_(idx, idx)]
            res = bound_trust_region(fun, x[idx], np.zeros(len(idx), bool), tol=1e-10)
            moves.append(float(np.max(np.abs(res.x - x[idx]))))
            x[idx] = res.x
    eig = np.linalg.eigvalsh(TOY_HESS)

    def fbar(v):  # perspective at (xbar1, xbar2) = (1, 1): x1 = x2 = 1 / y
        return toy(np.array([1 / v[1], 1 / v[1], v[0]]))

    h = 1e-4
    Hp = np.empty((2, 2))
    for i in range(2):
        for j in range(2):
            ei, ej = h * np.eye(2)[i], h * np.eye(2)[j]
            c = np.ones(2)
            Hp[i, j] = (fbar(c + ei + ej) - fbar(c + ei - ej) - fbar(c - ei + ej)
                        + fbar(c - ei - ej)) / (4 * h * h)
    eigp = np.linalg.eigvalsh(Hp)
    return [
        "## Part 1: the saddle toy (section 7.4.1)", "",
        "| quantity | ours | thesis |", "|---|---|---|",
        f"| Simple AO from (1,1,1): largest move over 5 sweeps | {max(moves):.1e} | 0 (does "
        "not move) |",
        f"| final point | ({x[0]:.6f}, {x[1]:.6f}, {x[2]:.6f}) | (1, 1, 1) |",
        f"| eigenvalues of the Hessian at (1,1,1) | {eig[0]:.4f}, {eig[1]:.4f}, {eig[2]:.4f} "
        "| -1.3589, 0, 7.3589 |",
        f"| perspective (x3, y) Hessian at (1,1) | [[{Hp[0, 0]:.4f}, {Hp[0, 1]:.4f}], "
        f"[{Hp[1, 0]:.4f}, {Hp[1, 1]:.4f}]] | [[2, 6], [6, 8]] |",
        f"| its eigenvalues | {eigp[0]:.4f}, {eigp[1]:.4f} | -1.7082, 11.7082 |", "",
    ]


def fit_row(probes, method, informative, C, mu, seed, spread):
    X, y = ndcc_like(1200, n_informative=informative, n_probes=probes, random_state=seed,
                     spread=spread)
    Xtr, ytr, Xte, yte = X[:200], y[:200], X[200:], y[200:]
    m, s = Xtr.mean(0), Xtr.std(0)
    Xtr, Xte = (Xtr - m) / s, (Xte - m) / s
    start = time.perf_counter()
    r = _fit(Xtr, ytr, method, C, mu)  # the decoded model: a dict
    seconds = time.perf_counter() - start
    f = fs_kernel(Xte, Xtr, r["z"]) @ r["dual_coef"] + r["b"]
    err = float(np.mean(np.where(f >= 0, 1.0, -1.0) != yte))
    sel = r["support"]
    correct = int(sel[:informative].sum())
    return {"vmin": r["vmin"], "label": r["label"], "error": err, "correct": correct,
            "incorrect": int(sel[informative:].sum()),
            "exact": bool(correct == informative and sel[informative:].sum() == 0),
            "time": seconds, "stationarity": r["stationarity"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="part 1, probes {0, 5}")
    parser.add_argument("--informative", type=int, default=10)
    parser.add_argument("--spread", type=float, default=0.8)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--mu", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--limit", type=float, default=600.0)
    args = parser.parse_args()
    lines = ["# Tayal 2014 section 7.4 / Table 7.1 (reduced)", "", f"Machine: {machine()}", ""]
    lines += part1()
    print("\n".join(lines), flush=True)
    probes_list = [0, 5] if args.quick else list(THESIS_71)
    lines += ["## Part 2: Table 7.1 pattern on NDCC-like data", "",
              f"{args.informative} informative features (thesis: 20), 200 train / 1000 test, "
              f"cluster spread {args.spread:g}, C = {args.C:g}, mu = {args.mu:g} fixed, "
              f"seed {args.seed}. Cells: vmin / test "
              "error % / (M|S); 'ok' when exactly the informative set is selected, else "
              "correct+incorrect counts. Thesis cells from Table 7.1 (its own NDCC data).", "",
              "| probes | Simple AO | Margin AO-I | Margin AO-II | thesis Simple AO | thesis "
              "AO-I | thesis AO-II |", "|---|---|---|---|---|---|---|"]
    for probes in progress(probes_list, "probes"):
        cells = []
        for method in ("simple-ao", "ao1", "ao2"):
            state, r, wall = run_with_limit(
                fit_row, (probes, method, args.informative, args.C, args.mu, args.seed,
                 args.spread),
                args.limit)
            if state != "ok":
                cells.append(f"{state.upper()} ({wall:.0f} s)" if state == "timeout" else r)
                continue
            sel = "ok" if r["exact"] else f"{r['correct']}+{r['incorrect']}"
            cells.append(f"{r['vmin']:.4f} / {100 * r['error']:.1f} / "
                         f"({r['label'][0].upper()}) {sel}")
        th = THESIS_71[probes]
        lines.append(f"| {probes} | {cells[0]} | {cells[1]} | {cells[2]} | {th[0]} | {th[1]} "
                     f"| {th[2]} |")
        print(lines[-1], flush=True)
    out = write_results("tayal_ch7_saddle", "\n".join(lines) + "\n", args.quick)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
