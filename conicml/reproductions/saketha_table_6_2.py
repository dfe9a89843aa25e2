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

An ablation of G (not compared with the thesis) repeats the 20 000 runs under
10 seeds and tries other readings of "double gamma": theta a rate, unit variance,
a centred gamma, a difference of two gammas. Run ``conicml reproduce
saketha_table_6_2 [--quick] [--runs N]``; writes ``conicml-results/saketha_table_6_2.md``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from conicml.formulations.cbc import r2_radii  # noqa: E402

from ._harness import machine, progress, write_results  # noqa: E402
from ._records import within_spread  # noqa: E402
from ._tables import Pair  # noqa: E402

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


class DiffGamma:
    """The difference G1 - G2 of two independent gamma(2, scale s) variables.

    Symmetric, with density :math:`e^{-|x|/s}(1 + |x|/s) / (4s)` and variance
    :math:`4s^2`: "double gamma" read the way a Laplace variable is the difference of two
    exponentials. It is not the density of the thesis's footnote 4 (the reflected
    gamma, ``stats.dgamma``); the G ablation tries it as one reading of the name.

    Parameters
    ----------
    scale : float
        The gammas' scale theta.
    """

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def rvs(self, size: tuple[int, ...], random_state: np.random.Generator) -> np.ndarray:
        """Draw ``size`` samples with ``random_state``."""
        g = stats.gamma(2, scale=self.scale)
        return g.rvs(size=size, random_state=random_state) - g.rvs(size=size,
                                                                    random_state=random_state)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """The CDF: the tail below :math:`-|x|` is :math:`e^{-z}(2 + z)/4`,
        :math:`z = |x|/s`."""
        z = np.abs(x) / self.scale
        tail = np.exp(-z) * (2.0 + z) / 4.0
        return np.where(np.asarray(x) < 0, tail, 1.0 - tail)


class _Negated:
    """``-X`` for a scipy distribution ``X`` (rvs and cdf only)."""

    def __init__(self, dist: object) -> None:
        self.dist = dist

    def rvs(self, size: tuple[int, ...], random_state: np.random.Generator) -> np.ndarray:
        """Draw ``size`` samples with ``random_state``."""
        return -self.dist.rvs(size=size, random_state=random_state)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """P(-X <= x) = P(X >= -x)."""
        return self.dist.sf(-np.asarray(x))


#: readings of "double gamma, k = 2, theta = 2" for the G ablation: label -> noise (mean 0)
G_READINGS = {
    "footnote 4: dgamma k = 2, scale theta = 2, the main table": NOISE["G"],
    "theta a rate: dgamma k = 2, scale 1/2": stats.dgamma(2, scale=0.5),
    "unit variance: dgamma k = 2, scale 1/sqrt 6": stats.dgamma(2, scale=1 / np.sqrt(6.0)),
    "centred gamma: gamma k = 2, theta = 2, minus 4": stats.gamma(2, loc=-4.0, scale=2.0),
    "negated centred gamma: 4 minus gamma k = 2, theta = 2":
        _Negated(stats.gamma(2, loc=-4.0, scale=2.0)),
    "difference of two gammas k = 2, theta = 2": DiffGamma(2.0),
}
COLUMNS = ("e E-SOC", "e R2-SOC", "m E-SOC", "m R2-SOC", "p E-SOC", "p R2-SOC")


def simulate(dist: str, runs: int, *, eta: float = 0.9, m: int = 100, n: int = 2,
             n_test: int = 10_000, confidence: float = 0.9, seed: int = 0,
             noise: object | None = None) -> dict:
    """Test errors of E-SOC and R2-SOC over ``runs`` runs on noise ``dist``.

    Parameters
    ----------
    dist : str
        Key of :data:`NOISE` (used when ``noise`` is None).
    runs, eta, m, n, n_test, confidence, seed
        Runs, eta, training points, dimension, test points, R2's confidence, seed.
    noise : object, optional
        A noise of mean 0 with ``rvs(size=, random_state=)`` and ``cdf`` (the ablation).

    Returns
    -------
    dict
        ``{"E-SOC": errors, "R2-SOC": errors}``, one test error per run.
    """
    rng = np.random.default_rng(seed)
    noise = NOISE[dist] if noise is None else noise
    kappa = float(stats.norm.ppf(eta))
    X = noise.rvs(size=(runs, m, n), random_state=rng) + np.array([1.0, 0.0])
    mu_hat = X.mean(axis=1)
    sigma_hat = np.sqrt(((X - mu_hat[:, None, :]) ** 2).sum(axis=(1, 2)) / (n * m))
    # R2's radius is linear in sigma_hat (the cubic (6.20) is homogeneous): compute once
    unit_r2 = float(r2_radii(np.array([m]), np.array([1.0]), n, kappa, confidence)[0])
    b = {"E-SOC": mu_hat[:, 0] - kappa * sigma_hat, "R2-SOC": mu_hat[:, 0] - unit_r2 * sigma_hat}
    return {k: rng.binomial(n_test, noise.cdf(v - 1.0)) / n_test for k, v in b.items()}


def row_stats(errs: dict) -> list[float]:
    """e (mean), m (max) and p (share above 0.1) of E-SOC and R2-SOC, as :data:`COLUMNS`."""
    return [float(f(errs[name])) for f in (np.mean, np.max, lambda e: np.mean(e > 0.1))
            for name in ("E-SOC", "R2-SOC")]


def thesis_row(dist: str) -> list[float]:
    """The thesis's Table 6.2 row of ``dist`` as :data:`COLUMNS` (p as a fraction)."""
    return [t / 100 if k >= 4 else t for k, t in enumerate(THESIS[dist])]


def _within(col: str, ours: float, thesis: float) -> bool:
    """Whether a G cell lies within the summary's tolerance (RATE_CELLS rule)."""
    return within_spread(Pair(f"G / {col}", ours, thesis), RATE_CELLS)


def g_ablation(runs: int, seed: int, repeats: int = 10) -> list[str]:
    """Markdown of the G ablation: the seed spread of the row and other readings of G.

    Parameters
    ----------
    runs : int
        Runs of one experiment (20 000 as the thesis's).
    seed : int
        Seed of the main table's G row; repetition r uses ``seed + 1000 r`` (r = 0 is
        the main table's run) and each reading uses ``seed``.
    repeats : int
        Independent repetitions of the whole experiment.

    Returns
    -------
    list of str
        Lines of two tables (no thesis pairs: no ``ours (thesis)`` cells) and their text.
    """
    th = thesis_row("G")
    spread = {}
    keys = [list(G_READINGS)[0], list(G_READINGS)[-1]]
    jobs = [(key, r) for key in keys for r in range(repeats)]
    for key, r in progress(jobs, "G seed spread"):
        vals = row_stats(simulate("G", runs, seed=seed + 1000 * r, noise=G_READINGS[key]))
        spread.setdefault(key, []).append(vals)
    lines = [
        "## Ablation: distribution G (not compared cells)", "",
        f"The G row's m and p E-SOC lie outside the tolerance (m: 10 % of {th[2]:.4f}; "
        f"p: 0.02 of {th[4]:.4f}). (1) The whole experiment of {runs} runs repeated "
        f"under {repeats} seeds (the first is the main table's G row): the smallest, "
        "median and largest value of each cell, and how many repetitions lie within the "
        "tolerance, for footnote 4's double gamma and for a difference of two gammas.", "",
        "| reading | cell | min | median | max | thesis | within |",
        "|---|---|---|---|---|---|---|"]
    for key in keys:
        arr = np.array(spread[key])
        for k, col in enumerate(COLUMNS):
            v = arr[:, k]
            hits = sum(_within(col, x, th[k]) for x in v)
            lines.append(f"| {key.split(':')[0]} | {col} | {v.min():.4f} | "
                         f"{np.median(v):.4f} | {v.max():.4f} | {th[k]:.4f} | "
                         f"{hits} of {repeats} |")
    foot = np.array(spread[keys[0]])
    m_hits = sum(_within("m E-SOC", x, th[2]) for x in np.array(spread[keys[-1]])[:, 2])
    lines += ["", f"Under footnote 4's reading the seed moves m E-SOC over "
              f"{foot[:, 2].min():.4f} to {foot[:, 2].max():.4f} "
              f"({sum(_within('m E-SOC', x, th[2]) for x in foot[:, 2])} of {repeats} within) "
              f"but p E-SOC only over {foot[:, 4].min():.4f} to {foot[:, 4].max():.4f} "
              f"({sum(_within('p E-SOC', x, th[4]) for x in foot[:, 4])} within): a maximum "
              f"over the runs is noisy, a share of {runs} runs is not, and the noise of the "
              "seed does not explain p."]
    rows, hit_e, by_key = [], [], {}
    for key, noise in progress(G_READINGS.items(), "G readings"):
        by_key[key] = vals = row_stats(simulate("G", runs, seed=seed, noise=noise))
        within = [_within(col, v, t) for col, v, t in zip(COLUMNS, vals, th)]
        if within[2] and within[4]:
            hit_e.append((key, sum(within)))
        rows.append(f"| {key} | " + " | ".join(f"{v:.4f}" for v in vals)
                    + f" | {sum(within)} of 6 |")
    found = "; ".join(f"{k} ({n} of 6 cells within)" for k, n in hit_e) or "none"
    diff = ", ".join(f"{c} {v:.4f} ({t:.4f})".replace(" (", " against ").rstrip(")")
                     for c, v, t in zip(COLUMNS, by_key[keys[-1]], th))
    lines += [
        "", "(2) Readings of \"double gamma, k = 2, theta = 2\" (footnote 4 of the thesis "
        "gives the density |x|^(k-1) exp(-|x|/theta) / (2 theta^k Gamma(k)), theta a "
        f"scale), each with the whole G row, {runs} runs at the main table's seed; "
        "`within` counts the row's six cells within the tolerance.", "",
        "| reading | " + " | ".join(COLUMNS) + " | within |",
        "|---" * (len(COLUMNS) + 2) + "|",
        *rows,
        "| thesis Table 6.2, G | " + " | ".join(f"{t:.4f}" for t in th) + " | |",
        "",
        f"Readings that bring both m and p E-SOC within the tolerance: {found}. "
        "The first three rows are identical: b - 1 and sigma_hat scale with the noise, so "
        "the test error F(b - 1) does not depend on its scale (theta as a rate, or unit "
        "variance as for U and B, changes nothing). A centred gamma is skewed: its short "
        "left tail (the side the test error counts) drives p E-SOC towards 0, its "
        "negation's long one drives it far above the thesis's, and both move the e "
        "cells away. The difference of two gammas (as the double exponential is the "
        "difference of two exponentials; not footnote 4's density, which is the reflected "
        "gamma) has kurtosis 4.5 against the reflected gamma's 3.33; under it the whole "
        f"row moves to the thesis's ({diff}); its m E-SOC is within the tolerance in "
        f"{m_hits} of the {repeats} seeds above, and its e cells, which the seed barely "
        "moves, match the thesis's where footnote 4's miss e R2-SOC by far more than "
        "their seed spread. The thesis's G data were most likely drawn this way; the "
        "main table keeps footnote 4's density as printed.",
        "",
    ]
    return lines


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
        vals = row_stats(simulate(dist, runs, seed=args.seed + i))
        th = thesis_row(dist)
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
        *g_ablation(runs, args.seed + 3, repeats=10),
    ]
    text = "\n".join(lines)
    write_results("saketha_table_6_2", text, args.quick)
    print(text)


if __name__ == "__main__":
    main()
