"""Cost of the certificate per kind: the O(data) kind-specific ones vs the generic NNLS refit.

Issue 11 part A: the generic certificate (``conicml.certificates.conic.certify_with``) builds
the cvxpy problem and refits multipliers by NNLS after every solve, which costs more
than the fast specialized solvers. For each kind and size this times, side by side in
one child process under a time limit, ``program.certify(solution)`` (the kind's own
certificate, on a fresh Program: nothing compiled) and the generic certificate on the
same point (a fresh build each time, as a first solve pays it), and the solve of the
fastest specialized solver of the kind where it has one. Ratios are of medians of
``--repeat`` runs measured in the same process, so they survive machine load better than
the seconds (the load average is recorded beside each row).

``python benchmarks/certificate_cost.py [--quick] [--repeat 3] [--limit 120]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import machine, run_with_limit, write_results  # noqa: E402


def _data(n: int, d: int, seed: int = 0):
    import numpy as np
    r = np.random.default_rng(seed)
    X = np.r_[r.normal(0.7, 1, (n // 2, d)), r.normal(-0.7, 1, (n - n // 2, d))]
    y = np.r_[np.ones(n // 2), -np.ones(n - n // 2)]
    return X, y


def _make(kind: str, n: int, d: int):

    from conicml.formulations import m4, minimax, svm
    X, y = _data(n, d)
    if kind == "svm-primal":
        return svm.soft_margin(X, y, C=1.0), svm._build_primal, "pegasos"
    if kind == "mpm":
        return minimax.mpm(X, y), minimax._build_fractional, "dinkelbach"
    if kind == "bmpm":
        return minimax.bmpm(X, y, 0.3), minimax._build_fractional, "dinkelbach"
    if kind == "m4-shared":
        Xs = X + 2.5 * y[:, None]
        return m4.m4_shared_covariance(Xs, y), m4._build_shared, None
    raise ValueError(kind)


def measure(kind: str, n: int, d: int, repeat: int) -> dict:
    """Median seconds of the kind's certificate, the generic one, and a specialized solve."""
    warnings.simplefilter("ignore")
    import conicml as cm
    from conicml.certificates.conic import certify_with
    prog, build, special = _make(kind, n, d)
    sol = cm.solve(prog, "clarabel")
    own, generic, solve = [], [], []
    for _ in range(repeat):
        fresh, _, _ = _make(kind, n, d)
        t0 = time.perf_counter()
        res = fresh.certify(sol)
        own.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        gen = certify_with(build)(fresh.data, sol)
        generic.append(time.perf_counter() - t0)
        if special is not None:
            opts = {"random_state": 0} if special == "pegasos" else {}
            t0 = time.perf_counter()
            cm.solve(fresh, special, **opts)
            solve.append(time.perf_counter() - t0)
    return {"own": statistics.median(own), "generic": statistics.median(generic),
            "solve": statistics.median(solve) if solve else float("nan"),
            "special": special or "-", "res": res, "gen": gen,
            "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=120.0)
    args = parser.parse_args()
    kinds = ["svm-primal", "mpm", "bmpm", "m4-shared"]
    sizes = [(60, 3)] if args.quick else [(60, 3), (400, 10)]
    lines = [f"Machine: {machine()}", "",
             "| kind | n | d | kind certificate s | generic certificate s | generic / kind | "
             "specialized solve s | kind certificate (primal, dual, gap) | generic "
             "(primal, dual, gap) | load avg |", "|---|---|---|---|---|---|---|---|---|---|"]
    for kind in kinds:
        for n, d in sizes:
            state, out, wall = run_with_limit(measure, (kind, n, d, args.repeat), args.limit)
            if state != "ok":
                lines.append(f"| {kind} | {n} | {d} | {state.upper()} ({wall:.0f} s) "
                             f"| | | | | {out if state == 'error' else ''} | |")
                print(lines[-1], flush=True)
                continue
            r, g = out["res"], out["gen"]
            lines.append(
                f"| {kind} | {n} | {d} | {out['own']:.4f} | {out['generic']:.4f} | "
                f"{out['generic'] / out['own']:.0f}x | {out['solve']:.4f} ({out['special']}) | "
                f"{r.primal:.1e}, {r.dual:.1e}, {r.gap:.1e} | {g.primal:.1e}, {g.dual:.1e}, "
                f"{g.gap:.1e} | {out['load']:.1f} |")
            print(lines[-1], flush=True)
    path = write_results("certificate_cost", "\n".join(lines) + "\n", quick=args.quick)
    print(path)


if __name__ == "__main__":
    main()
