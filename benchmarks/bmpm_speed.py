"""BMPM: the specialized fractional solvers vs the perspective SOCP on the generic backends.

One BMPM program (kind ``socp.bmpm``) per instance, solved by ``rosen`` (gradient
projection, note A1), ``dinkelbach`` (parametric method + iterative least squares, A2)
and the single SOCP on ``clarabel``, ``ecos`` and ``scs``. Instances: random moments in
n in {10, 50, 200} features, cond(Sigma_x) = 1e3, cond(Sigma_y) ~ 32, random means,
beta0 = beta0_max / 2; 3 instances per n.

Equal accuracy: every solver must reach a relative error in kappa(alpha) of at most
1e-6 against a reference computed by ``dinkelbach`` at tol 1e-14 (itself checked
against clarabel). Settings: rosen tol 1e-10, dinkelbach tol 1e-8, clarabel and ecos at
their defaults, scs at eps_abs = eps_rel = 1e-7; a run that misses the target is marked
``inaccurate`` (and its time still shown). Wall time = the best of 5 repeats of
(build the cvxpy problem + compile + solve) for the backends and (moment products +
eigendecomposition + iterations + certificate) for the specialized solvers; the
program's moment data are prepared once and excluded. BLAS runs single-threaded
(OPENBLAS_NUM_THREADS=1) because the 2-core machine is shared. Each solver runs in a child
process with a time limit (TIMEOUT recorded). Ratios are to clarabel in the same run.

Usage: ``python benchmarks/bmpm_speed.py [--quick] [--limit SECONDS]``
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread: fair on a shared box
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _harness import (  # noqa: E402
    machine,
    run_with_limit,
    shifted_geometric_mean,
    write_results,
)

import conicml as cm  # noqa: E402
from conicml.formulations import minimax as mm  # noqa: E402

SOLVERS = {
    "rosen": {"tol": 1e-10},
    "dinkelbach": {"tol": 1e-8},
    "clarabel": {},
    "ecos": {},
    "scs": {"eps_abs": 1e-7, "eps_rel": 1e-7},
}
TARGET = 1e-6
REPEATS = 5


def instance(n: int, seed: int) -> cm.Program:
    rng = np.random.default_rng(seed)

    def cov(cond: float) -> np.ndarray:
        Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        return (Q * np.logspace(0, math.log10(cond), n)) @ Q.T

    mom = cm.ClassMoments(rng.standard_normal(n), cov(1e3), rng.standard_normal(n),
                          cov(10 ** 1.5))
    beta0 = 0.5 * mm.bmpm(mom, 0.0).data["beta0_max"]
    return mm.bmpm(mom, beta0)


def reference(prog: cm.Program) -> float:
    """kappa(alpha) by dinkelbach at tol 1e-14, checked against clarabel to 1e-6."""
    ref = prog.decode(cm.solve(prog, "dinkelbach", tol=1e-14, inner_tol=1e-15))["kappa_alpha"]
    check = prog.decode(cm.solve(prog, "clarabel"))["kappa_alpha"]
    if abs(check - ref) > 1e-6 * ref:
        raise RuntimeError(f"dinkelbach {ref} and clarabel {check} disagree")
    return ref


def run(prog: cm.Program, solver: str, options: dict) -> dict:
    best = math.inf
    sol = None
    for _ in range(REPEATS):
        fresh = cm.Program(prog.kind, prog.data, build=prog._build, decode=prog._decode)
        start = time.perf_counter()
        sol = cm.solve(fresh, solver, **options)
        best = min(best, time.perf_counter() - start)
        model = fresh.decode(sol) if sol.ok else {}
    return {"status": sol.status.value, "wall": best, "iters": sol.iterations,
            "inner": sol.extras.get("inner_solves", "-"),
            "kappa": model.get("kappa_alpha", math.nan)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one instance per size")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per solver run")
    args = parser.parse_args()
    sizes = [10, 50, 200]
    seeds = [0] if args.quick else [0, 1, 2]
    lines = [
        "# BMPM: rosen and dinkelbach vs the perspective SOCP on the generic backends",
        "",
        f"Machine: {machine()} (shared by other jobs: timings are the best of {REPEATS} "
        f"repeats). Time limit per run: {args.limit:g} s. Accuracy target: relative "
        f"error of kappa(alpha) <= {TARGET:g} against dinkelbach at tol 1e-14. "
        "Ratio = wall time / clarabel wall time on the same instance.",
        "",
        "| n | seed | solver | status | wall s | ratio to clarabel | iterations | "
        "inner solves | kappa rel. error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    walls: dict[tuple[int, str], list[float]] = {}
    for n in sizes:
        for seed in seeds:
            prog = instance(n, 1000 * n + seed)
            # the reference runs in a child too: a parent that has started the
            # backends' thread pools must not fork (the children would deadlock)
            state, ref, _ = run_with_limit(reference, (prog,), 10 * args.limit)
            if state != "ok":
                raise RuntimeError(f"reference failed on n={n}, seed={seed}: {state} {ref}")
            results = {}
            for name, opts in SOLVERS.items():
                state, res, _ = run_with_limit(run, (prog, name, opts), args.limit)
                results[name] = (state, res)
            base = results["clarabel"][1]["wall"] if results["clarabel"][0] == "ok" else None
            for name, (state, res) in results.items():
                if state != "ok":
                    lines.append(f"| {n} | {seed} | {name} | {state.upper()} | - | - | - | - "
                                 "| - |")
                    walls.setdefault((n, name), []).append(args.limit)
                    continue
                err = abs(res["kappa"] - ref) / ref
                status = res["status"] if err <= TARGET else f"{res['status']}, inaccurate"
                ratio = f"{res['wall'] / base:.3g}" if base else "-"
                lines.append(f"| {n} | {seed} | {name} | {status} | {res['wall']:.4f} | "
                             f"{ratio} | {res['iters']} | {res['inner']} | {err:.1e} |")
                walls.setdefault((n, name), []).append(
                    res["wall"] if err <= TARGET else args.limit)
            print("\n".join(lines[-len(SOLVERS):]), flush=True)
    lines += ["", "Summary: shifted geometric mean (shift 10 ms) of wall time per size, "
              "failures charged the time limit; ratio to clarabel.", "",
              "| n | " + " | ".join(SOLVERS) + " |", "|---|" + "---|" * len(SOLVERS)]
    for n in sizes:
        means = {s: 1e-2 * shifted_geometric_mean([1e2 * t for t in walls[(n, s)]], 1.0)
                 for s in SOLVERS}
        lines.append(f"| {n} | " + " | ".join(
            f"{means[s]:.4f} s ({means[s] / means['clarabel']:.2g}x)" for s in SOLVERS) + " |")
    out = "\n".join(lines) + "\n"
    write_results("bmpm_speed", out, args.quick)
    print(out)


if __name__ == "__main__":
    main()
