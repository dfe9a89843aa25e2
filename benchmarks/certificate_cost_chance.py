"""Cost of the kind-specific certificates of the chance-constrained kinds vs the generic one.

``python benchmarks/certificate_cost_chance.py [--quick]``: for each kind, one instance solved by
its fastest solver; the kind's own certificate (``program.certify``) and the generic KKT
certificate (``conicml.certificates.conic.conic_certificate`` on the program's cvxpy problem,
what these kinds used before issue 11 part B) are timed side by side in the same run
(median of ``--repeat`` calls), with the solve time for scale. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np

import conicml as cm
from conicml.certificates.conic import conic_certificate
from conicml.formulations import cbc, ordinal
from conicml.formulations import specified_rates as sr
from conicml.moments import ClusterMoments


def cases(n: int) -> list[tuple[str, cm.Program, str]]:
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(1, 1, (n, 5)), rng.normal(-1, 1, (n, 5))]
    y = np.r_[np.ones(n), -np.ones(n)]
    cl = ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=10, random_state=0)
    yo = np.repeat([1.0, 2, 3, 4], n // 2)
    Xo = rng.normal(0, 0.7, (yo.size, 3)) + yo[:, None]
    clo = ClusterMoments.from_data(Xo, yo, clustering="kmeans", n_clusters=5, random_state=0)
    return [
        ("rates primal", sr.specified_rates(X, y, 0.3, 0.3), "ellipsoid-newton"),
        ("rates dual", sr.specified_rates(X, y, 0.3, 0.3, form="dual"), "ellipsoid-newton"),
        ("cbc dual", cbc.cbc(cl, 1.0, 0.6, form="dual"), "cbc-smo"),
        ("cbc_w dual", cbc.cbc_w(cl, 1.0, 0.6, form="dual"), "cbc-smo"),
        ("cbc primal", cbc.cbc(cl, 1.0, 0.6), "clarabel"),
        ("cbor dual", ordinal.cbor(clo, W=0.3), "cbor-smo"),
        ("cbor primal", ordinal.cbor(clo, W=0.3, form="primal"), "clarabel"),
        ("svor (4.1)", ordinal.svor(Xo, yo, C=1.0), "clarabel"),
    ]


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, repeat = (40, 2) if args.quick else (args.n, args.repeat)
    warnings.simplefilter("ignore")
    print(f"load average {os.getloadavg()[0]:.1f}; n = {n} points per class, median of {repeat}")
    print("| kind | solver | solve s | own certificate s | generic certificate s | "
          "generic / own | own (primal, dual, gap) |")
    print("|---|---|---|---|---|---|---|")
    for label, prog, solver in cases(n):
        t = time.perf_counter()
        sol = cm.solve(prog, solver)
        t_solve = time.perf_counter() - t
        own = median_time(lambda: prog.certify(sol), repeat)
        generic = median_time(lambda: conic_certificate(prog.data, sol, build=prog._build),
                              repeat)
        r = prog.certify(sol)
        print(f"| {label} | {solver} | {t_solve:.4f} | {own:.4f} | {generic:.4f} | "
              f"{generic / own:.0f} | {r.primal:.1e}, {r.dual:.1e}, {r.gap:.1e} |", flush=True)


if __name__ == "__main__":
    main()
