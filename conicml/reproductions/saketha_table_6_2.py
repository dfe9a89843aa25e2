"""Reproduce seed 003 Table 6.2: E-SOC vs R2-SOC on non-normal data (eta = 0.9, c = 0.9).

The protocol of Table 6.1 (:mod:`conicml.reproductions.saketha_table_6_1`; thesis §6.2.1) with the
normal noise replaced, independently per dimension, by

* U: uniform on :math:`[-\\sqrt3, \\sqrt3]` (unit variance),
* B: :math:`\\sqrt{20}\\,(\\mathrm{beta}(2, 2) - \\tfrac12)` (unit variance),
* E: double exponential (Laplace) with :math:`\\lambda = 1` (the thesis's),
* G: double gamma with :math:`k = 2`, :math:`\\theta = 2` (the thesis's),

shifted to mean (1, 0). The thesis omits the scales of U and B; unit variance
is our choice (it reproduces the thesis's E-SOC e_eta to about 0.002, so it is
probably theirs). Each run: m = 100 training points, mean and per-dimension
MLE variance, w = (1, 0), the threshold on the boundary of E-SOC (6.23) and
R2-SOC (6.25) with :math:`\\kappa = \\Phi^{-1}(0.9)` and confidence 0.9 (R2's
radius from :func:`conicml.formulations.cbc.r2_radii`, Theorem 6.2); test
error = Binomial(10 000, F(b - 1)) / 10 000, F the noise's CDF.

Run ``conicml reproduce saketha_table_6_2 [--quick] [--runs N]``
(full: 20 000 runs as in the thesis); writes
``conicml-results/saketha_table_6_2.md``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from conicml.formulations.cbc import r2_radii  # noqa: E402

from ._harness import machine, progress, write_results  # noqa: E402

#: how the tables set the thesis's numbers beside ours (conicml.reproductions._tables)
THESIS_LAYOUT = "parenthesised"
TABLES = ('003:T6.2',)
EXPECTED_SECONDS = 120  # an estimate: 20 000 closed-form runs, seconds each thousand
PROTOCOL = ('full: 20 000 runs per distribution as the thesis; the scales of U and B are ours '
            '(unit variance)')
RATE_CELLS = '/ (e|p) '  # the e columns are error rates, p a fraction of the runs

#: distribution -> (e_eta E, e_eta R2, m_eta E, m_eta R2, p_eta% E, p_eta% R2), Table 6.2
THESIS = {
    "U": (0.13215, 0.04855, 0.26090, 0.18150, 84.64, 5.48),
    "B": (0.11998, 0.06193, 0.26080, 0.18910, 77.77, 4.24),
    "E": (0.08441, 0.05615, 0.16890, 0.12300, 17.36, 0.17),
    "G": (0.09108, 0.05766, 0.17560, 0.12270, 29.93, 0.44),
}
NOISE = {
    "U": stats.uniform(loc=-np.sqrt(3.0), scale=2.0 * np.sqrt(3.0)),
    "B": stats.beta(2, 2, loc=-0.5 * np.sqrt(20.0), scale=np.sqrt(20.0)),
    "E": stats.laplace(scale=1.0),
    "G": stats.dgamma(2, scale=2.0),
}


def simulate(dist: str, runs: int, *, eta: float = 0.9, m: int = 100, n: int = 2,
             n_test: int = 10_000, confidence: float = 0.9, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    noise = NOISE[dist]
    kappa = float(stats.norm.ppf(eta))
    X = noise.rvs(size=(runs, m, n), random_state=rng) + np.array([1.0, 0.0])
    mu_hat = X.mean(axis=1)
    sigma_hat = np.sqrt(((X - mu_hat[:, None, :]) ** 2).sum(axis=(1, 2)) / (n * m))
    # R2's radius is linear in sigma_hat (the cubic (6.20) is homogeneous): compute once
    unit_r2 = float(r2_radii(np.array([m]), np.array([1.0]), n, kappa, confidence)[0])
    b = {"E-SOC": mu_hat[:, 0] - kappa * sigma_hat, "R2-SOC": mu_hat[:, 0] - unit_r2 * sigma_hat}
    return {k: rng.binomial(n_test, noise.cdf(v - 1.0)) / n_test for k, v in b.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 000 runs")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    runs = args.runs or (2000 if args.quick else 20_000)
    t0 = time.perf_counter()
    rows = []
    for i, dist in enumerate(progress(("U", "B", "E", "G"), "distributions")):
        errs = simulate(dist, runs, seed=args.seed + i)
        vals = []
        for stat in ("mean", "max", "p"):
            for name in ("E-SOC", "R2-SOC"):
                e = errs[name]
                vals.append(e.mean() if stat == "mean" else e.max() if stat == "max"
                            else np.mean(e > 0.1))
        th = [t / 100 if k >= 4 else t for k, t in enumerate(THESIS[dist])]  # % -> fraction
        rows.append(f"| {dist} | " + " | ".join(
            f"{v:.{4 if k >= 4 else 5}f} ({t:.{4 if k >= 4 else 5}f})"
            for k, (v, t) in enumerate(zip(vals, th))) + " |")
    lines = [
        "# Seed 003 Table 6.2: E-SOC vs R2-SOC on non-normal data (eta = 0.9, c = 0.9)",
        "",
        f"Machine: {machine()}. {runs} runs per distribution (thesis: 20 000); command "
        f"`conicml reproduce saketha_table_6_2{' --quick' if args.quick else ''}`"
        f"; {time.perf_counter() - t0:.1f} s.",
        "",
        "Each cell: ours (thesis). e = mean test error, m = max, p = the share of runs with "
        "error > 1 - eta = 0.1, as a fraction (the thesis prints percentages: divided by "
        "100 here).",
        "",
        "| data | e E-SOC | e R2-SOC | m E-SOC | m R2-SOC | p E-SOC | p R2-SOC |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Scales: U uniform on [-sqrt 3, sqrt 3] and B = sqrt(20) (beta(2,2) - 1/2), both unit "
        "variance (the thesis omits them; this choice reproduces its E-SOC means); E Laplace "
        "lambda = 1; G double gamma k = 2, theta = 2 (the thesis's). kappa = Phi^-1(0.9), "
        "per-dimension MLE variance, w = (1, 0). The maxima m are extreme values of one "
        "sample and vary with the seed.",
        "",
    ]
    text = "\n".join(lines)
    write_results("saketha_table_6_2", text, args.quick)
    print(text)


if __name__ == "__main__":
    main()
