"""Fit time of the kernel minimax estimators (issue 14): default solver vs Clarabel.

``MPMClassifier``, ``BMPMClassifier`` and ``M4Classifier`` with ``kernel="rbf"`` (all
other parameters at their defaults: ``ridge=1e-3``, ``gamma="scale"``, BMPM
``beta0="auto"``, M4 ``C="auto"``) on twonorm / ringnorm (20 dimensions, seed 0): the
first n points train, the next n points test. Solvers:

* ``default`` -- the estimator's default (``solver="auto"``: ``ils-newton`` for a kernel
  MPM/BMPM; M4: ``envelope-newton`` over the structured fixed-rho IPM ``m4-ipm``);
* ``clarabel`` -- the former MPM/BMPM default, on the same program; for M4 (no single
  conic form) the former default route, ``quadratic-interpolation`` over Clarabel's
  fixed-rho SOCPs (``solver="quadratic-interpolation", inner="clarabel"``).

Every fit runs in a fresh spawned process under a time limit (a run that exceeds it is
recorded as TIMEOUT); the time is the wall-clock time of ``fit`` inside the child
(program construction, solve, certificate and decode; imports and the spawn excluded).
Each row states the load average (1 min) read just before it, the certificate
(conicml's recomputed residuals, max of primal/dual/gap), the status, the test accuracy,
the relative objective difference to the Clarabel row of the same case, and the peak
RSS of the child. The target (issue 14) is < 2 s per fit at n = 1000 at unchanged
accuracy.

    python benchmarks/kernel_fit_speed.py [--quick] [--families mpm,bmpm,m4]
                                          [--sizes 250,500,1000] [--time-limit 120]
                                          [--solvers default,clarabel]
                                          [--section m4]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import machine, run_with_limit, write_results  # noqa: E402

DISCUSSION = """\
**Reading (recorded run of 2026-11-26 13:03 UTC, full command above, on a machine shared
with four other jobs: 1-min load 10-13 throughout, so absolute seconds are inflated several
fold; the lead re-measures on a quiet machine).**

*MPM / BMPM.* The default route (``solver="auto"`` = ``ils-newton`` for kernels) returns
the same classifier as Clarabel, the former default: identical test accuracy in all 12
cases, objectives within 1e-8 (Clarabel's own accuracy), certificates 1e-16 against
Clarabel's 1e-9..1e-8. At n = 1000 it is 5-17x faster than Clarabel in the same run
(MPM 5.3 s / 6.1 s, BMPM 5.2 s / 4.8 s at load 12-13, against 27-102 s and 40-41 s). The
< 2 s target at n = 1000 is met in-process at lower load: ``MPMClassifier(kernel="rbf")``
on twonorm n = 1000 fitted in 1.52 s cold (first fit in the process) and 1.32-1.34 s warm
at load 8.7 (program 0.44-0.50 s: Gram matrix, its Cholesky factor, the two class
covariances and their Cholesky factors; ``ils-newton`` 0.34-0.38 s: 3-4 Cholesky
factorisations of c*Sx + (1-c)*Sy; certificate 0.31 s; decode 0.09 s). Before this change
(previous session, load ~35, one BLAS thread): program 2.0 s (eigendecomposition of K), fit
19.4 s with Clarabel, 4.4 s with dinkelbach. What changed, by measurement: (1) the feature
map is the Cholesky factor of K (n^3/3 flops; the eigendecomposition took 0.44 s alone on
one thread at load 2.5, Cholesky 0.04 s) -- the same program up to an orthogonal change of
coordinates; (2) ``ils-newton`` replaces Clarabel's dense interior point (and dinkelbach's
simultaneous diagonalisation: two eigendecompositions and four n^3 products); (3) the
certificate's Newton decrement solves its KKT system by LDL^T (0.07 s) instead of an SVD
least squares (4.6 s at n = 1000), when the system is well conditioned (else the old path);
(4) kappa_max of BMPM by a Cholesky solve instead of an SVD (2.4 s). Dense LAPACK
factorisations run on one BLAS thread: on this shared machine OpenBLAS's two threads made
them 2-10x slower (Cholesky 0.17 s vs 0.04 s, eigh 0.89 s vs 0.44 s, generalized eigh 2.4 s
vs 0.76 s at load 2.5).

*M4 (not met).* Kernel M4 with the default ``C="auto"`` is the soft-margin line search
over rho (``quadratic-interpolation``), one Clarabel SOCP per step (23-34 steps): at
n = 250 it took 48.7 s (ringnorm) and timed out at 120 s (twonorm; 59 s in-process at load
6, 144 s before this change), and every n >= 500 timed out. This change cut it ~2.4x at
n = 250 (the Cholesky feature map and triangular covariance factors halve the nonzeros of
the inner SOCPs: 5.2 s -> 1.6 s per Clarabel solve; the M4 certificate's bounded least
squares on one BLAS thread: 27 s -> 1.7 s at n = 150), but the route is bounded by the
interior-point solves: each is a dense problem of size ~4n whose factorisation grows as
n^3, times ~30 line-search steps, so n = 1000 in 2 s needs a specialized fixed-rho solver
(not written: left open)."""


DISCUSSION_M4 = """\
**Reading (recorded run of 2026-11-26 15:29-15:36 UTC, full command above, under
``nice -n 10`` on the 2-core machine shared with other helpers' jobs: 1-min load 3.4-4.1
throughout, so absolute seconds are inflated; the lead re-measures on a quiet machine).**

*Route.* ``M4Classifier(kernel="rbf")`` (``C="auto"``) now runs ``envelope-newton`` over
``m4-ipm``: a search over rho that uses the slope G'(rho) = 1 - C h'(rho) of every
evaluation (envelope theorem: h' = Lambda_x sigma_x + Lambda_y sigma_y from the inner
multipliers; secant on G' where G is smooth, the end tangents' meeting point at a kink,
bisection as the safeguard), each fixed-rho slack SOCP solved by a structured
primal-dual interior point (NT scaling, Mehrotra predictor-corrector) in the
coordinates f = L w, where the margin rows are diagonal, so one step is one Cholesky
factorisation of order n + 3 (no product Z^T D Z, no generic sparse KKT factorisation);
the MPM bound kappa by ``ils-newton``. The former route (``clarabel`` rows) is
``quadratic-interpolation`` over Clarabel's fixed-rho SOCPs.

*Same classifier.* Identical test accuracy in all four cases both routes finish,
G(rho*) within 1.1e-9 .. 3.3e-9 (relative), certificates (conicml's recomputed KKT
residuals of the fixed-rho SOCP at rho*) 1.9e-11 .. 1.6e-9 against Clarabel's
4.6e-11 .. 4.6e-10. rho* itself agrees where G is curved; where G is flat at its
maximum the value-only search stops at the inner solver's noise (twonorm n = 250:
rho* 3.3959008 vs 3.3959213, G equal to 1e-9) while the slope search brackets rho* by
the sign of G'.

*Speed.* 19-31x faster than the former route in the same run at n = 250 and 500
(0.9-2.3 s against 18-66 s); 8-10 fixed-rho SOCPs instead of 21-33. At n = 1000 the
former route timed out (> 120 s) and the default route took 2.75 s (twonorm) and 3.92 s
(ringnorm) in a fresh process at load 3.5-3.8; at n = 1000 both data sets have the
maximum of G at rho = kappa* (G'(kappa*) >= 0), so one SOCP is solved and rho = 0 is not
evaluated (G(0) = -C h(0) <= 0). In-process at load 2.2 (15:37 UTC): 3.27-3.46 s per fit
(program 0.45 s: Gram matrix, Cholesky factors; kappa* by ils-newton ~0.5 s; the IPM's
setup R L^-1 and its Gram ~0.3 s; the one IPM solve 1.2-1.4 s, 20-34 steps of one
Cholesky of order 1003 each; the certificate ~0.5 s).

*The < 2 s target at n = 1000 is not met on this loaded machine* (2.75-3.9 s cold,
fresh process; 3.3 s in-process). What remains is the IPM's step count (20-34 steps; a
warm start along rho and a cheaper end game would halve it), the duplicated set-up
(ils-newton and the IPM each form R^T R of both classes) and the certificate's band
fits. What changed, by measurement (in order of the commits): (1) ``envelope-newton``
(kernel twonorm n = 150: 23 -> 8 SOCPs, same G to 5e-10); (2) ``m4-ipm`` (n = 150:
0.33 s -> 0.14 s per SOCP against Clarabel, n = 500 1.6 s); (3) f = L w coordinates
and an upper-triangle assembly (n = 500: 1.57 s -> 0.45 s per SOCP); (4) the M4
certificate tries its bands likeliest first and stops below 1e-8 (n = 1000: 11.5 s ->
0.6 s; it had been the largest single cost of a fit); (5) kappa first, rho = 0 skipped
when kappa is a local maximum with G >= 0.
*Independent check at n = 1000* (where the former route timed out; 15:38-15:49 UTC, load
2-5, ``M4Classifier(kernel="rbf", inner="clarabel")``: the same search with Clarabel's
fixed-rho SOCPs and its MPM bound): twonorm G = 2.0285436574 vs 2.0285436561 (6e-10
relative), ringnorm 2.0591554909 vs 2.0591554776 (6e-9), rho* = kappa* identical to
10 digits, the same test accuracy (0.975, 0.977), certificates 3.5e-10 / 1.7e-11; those
fits took 377 s and 141 s.

*Quiet re-measure (lead, load 0.7-0.8):* n = 1000 in 1.57-2.11 s per fresh-process fit (5 of
6 under 2 s) and 1.50-1.78 s in-process (section ``m4`` of ``kernel_fit_speed.md``)."""


DISCUSSION_FLOOR = """\
**Reading (the rows above: the command above, the load in the last column; a loaded
machine inflates the floor, whose Cholesky factorisation uses two BLAS threads, more
than the fit: on a loaded machine judge by the CPU column and the work column).**

*Work per warm fit at n = 2000* (factorisations of order n or of one class /
Schur-complement factorisations / CG solves; CG matrix-vector column-steps; products
with K by columns, the coarse basis's included):

| case | work | CG steps | products with K | Newton evaluations |
|---|---|---|---|---|
| twonorm BMPM | 2/0/7 | 33 | 19 | 4 |
| twonorm MPM | 1/0/5 | 18 | 16 | 3 |
| ringnorm BMPM | 2/0/7 | 27 | 20 | 4 |
| ringnorm MPM | 1/0/6 | 20 | 18 | 3 |

*Where the work goes.* The block factor is one Cholesky factorisation of order n at both
shifts of its weight (LAPACK's blocked dpotrf; L_f, Z and the Schur complement's factor
are its blocks, and the triangular solves at that free shift read it whole): at n = 2000
75-79 ms CPU against 121-580 ms for L_f, a trsm, a syrk and L_S in turn (A/B, load
8-12; ~85 vs ~97 ms nearer quiet), so no Schur-complement factorisation is left in these
fits; S_0 is formed only when a second free shift asks for it. (The extra product with K
of twonorm MPM is a residual norm that Gershgorin's bound no longer settles: rounding.)
The certificate's Newton decrement makes two solves with M(c'):
alpha M(c')v = lambda d - e (the definitions of c', alpha and the Lagrangian's gradient
e) gives M(c')^-1 d = (alpha v + M(c')^-1 e)/lambda, and the products with K of the
solutions are combinations of those their acceptance checks formed. The coarse start's
Galerkin space spans e, J_x^2 K e, J_y^2 K e besides the coarse points (the first
Krylov vectors of M(c)w = d): its weight misses the optimum's free shift by 8.6 / 0.3 /
3.8 / 0.4 % (twonorm BMPM / MPM, ringnorm BMPM / MPM), and a Schur-complement factor
serves free shifts within 10 % of its own (a factorisation of order n_y costs about 12
CG steps; reusing it costs 4-7). Kept solutions without a tangent solve are carried to a
new weight by the secant through the next kept one; an RBF Gram matrix's Gershgorin
bound comes from its class sums (no negative entry); products with K of 2-4 columns go
by dgemv per column (a one-thread dgemm packs K first); the decode's norms are scaled
from those of the certified point.

*What BMPM pays beyond MPM.* Sigma_y's factorisation for beta0_max (eq. 3.44):
dT Sigma_y^-1 d needs (rho_y I + G_yy)^-1 and no factor of the search has that shift (a
block factor held at rho_y leaves a spread of 12.6 at the BMPM optimum: 41 CG steps per
solve). Its condition number is small (bound 131 on twonorm), so it is factored in single
precision and refined in double precision: three single-precision solves reach the
residual of a backward-stable double solve; 8.0 + 1.2 ms against 12.8 ms for the double
factor (CPU, load 16), d^T Sigma_y^-1 d identical to 17 digits. A first weight within
2 % of the optimum's shift is out of reach of cheap
restrictions (512 points without the Krylov vectors: 6.8 %; Krylov vectors beyond the
first level: no gain).

*Measured and not adopted:* the work split over two Python threads (slower on a quiet
machine: MPM 0.154 vs 0.143 s, BMPM 0.185 vs 0.163 s), the class centring as one
compiled pass (9.6 vs 11.1 ms of a 150 ms fit), a two-thread Cholesky in 2 x 2 blocks
(7.0 -> 9.0 ms CPU at order 1000)."""


def _fit(family: str, dataset: str, n: int, solver: str) -> dict:
    """Child process: fit one estimator, return its measurements."""
    import numpy as np

    import conicml as cm
    from conicml.estimators import BMPMClassifier, M4Classifier, MPMClassifier

    X, y = getattr(cm.datasets, dataset)(2 * n, dim=20, random_state=0)
    est_cls = {"mpm": MPMClassifier, "bmpm": BMPMClassifier, "m4": M4Classifier}[family]
    kwargs = {"kernel": "rbf"}
    if solver != "default":
        kwargs["solver"] = solver
    if family == "m4" and solver == "clarabel":  # the former default route of M4
        kwargs.update(solver="quadratic-interpolation", inner="clarabel")
    est = est_cls(**kwargs)
    start = time.perf_counter()
    est.fit(X[:n], y[:n])
    fit_time = time.perf_counter() - start
    sol = est.solution_
    route = sol.solver + (f"/{sol.extras['inner']}" if "inner" in sol.extras else "")
    return {"fit": fit_time, "route": route, "status": sol.status.value,
            "objective": float(sol.objective), "certificate": float(sol.residuals.max()),
            "accuracy": float(np.mean(est.predict(X[n:]) == y[n:])),
            "iterations": int(sol.iterations),
            "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}


def run(families: list[str], datasets: list[str], sizes: list[int],
        time_limit: float, solvers: tuple[str, ...] = ("default", "clarabel")) -> list[dict]:
    rows = []
    for family in families:
        for dataset in datasets:
            for n in sizes:
                chosen = [s for s in ("default", "clarabel") if s in solvers]
                ref_obj = None
                for solver in chosen[::-1]:  # clarabel first: the reference objective
                    load = os.getloadavg()[0]
                    state, res, wall = run_with_limit(_fit, (family, dataset, n, solver),
                                                      time_limit)
                    row = {"family": family, "dataset": dataset, "n": n, "solver": solver,
                           "state": state, "load": load, "wall": wall}
                    if state == "ok":
                        row.update(res)
                        if solver == "clarabel":
                            ref_obj = res["objective"]
                        elif ref_obj is not None:
                            row["obj_diff"] = abs(res["objective"] - ref_obj) / abs(ref_obj)
                    else:
                        row["message"] = res if state == "error" else f"> {time_limit:g} s"
                    rows.append(row)
                    print(_line(row), flush=True)
    return rows


def _line(r: dict) -> str:
    if r["state"] != "ok":
        return (f"| {r['family'].upper()} | {r['dataset']} | {r['n']} | {r['solver']} | "
                f"{r['state'].upper()} ({r.get('message', '')}) | | | | | | | "
                f"{r['load']:.1f} |")
    diff = f"{r['obj_diff']:.1e}" if "obj_diff" in r else "ref" if r["solver"] == "clarabel" \
        else ""
    return (f"| {r['family'].upper()} | {r['dataset']} | {r['n']} | {r['solver']} "
            f"({r['route']}) | "
            f"{r['fit']:.2f} | {r['accuracy']:.3f} | {r['status']} | {r['certificate']:.1e} | "
            f"{diff} | {r['iterations']} | {r['mb']:.0f} | {r['load']:.1f} |")


def table(rows: list[dict], args: argparse.Namespace) -> str:
    head = ("| estimator | data | n | solver (route) | fit (s) | test acc. | status | "
            "certificate | rel. obj. diff to Clarabel | iterations | peak RSS (MB) | "
            "load (1 min) |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [_line(r) for r in rows]
    ratios = []
    for r in rows:
        if r["solver"] == "default" and r["state"] == "ok":
            ref = next((q for q in rows if q["solver"] == "clarabel" and q["family"] ==
                        r["family"] and q["dataset"] == r["dataset"] and q["n"] == r["n"]),
                       None)
            if ref is not None and ref["state"] == "ok":
                ratios.append(f"| {r['family'].upper()} | {r['dataset']} | {r['n']} | "
                              f"{ref['fit'] / r['fit']:.1f}x | "
                              f"{r['accuracy'] - ref['accuracy']:+.3f} |")
    ratio_table = ("| estimator | data | n | Clarabel fit / default fit | test acc. "
                   "default - Clarabel |\n|---|---|---|---|---|\n" + "\n".join(ratios))
    return (f"# Kernel fit speed\n\n{machine()}\n\n"
            f"Command: `python benchmarks/kernel_fit_speed.py"
            f"{' --quick' if args.quick else ''} --families {','.join(args.families)} "
            f"--sizes {','.join(map(str, args.sizes))} --time-limit {args.time_limit:g} "
            f"--solvers {args.solvers}"
            f"{'' if args.section is None else ' --section ' + args.section}`\n\n"
            "Tolerances: every solver at its defaults (ils-newton: |g(c)| <= 1e-11; "
            "Clarabel: its defaults, 1e-8; M4 searches: rho bracket 1e-8 * max(1, kappa), "
            "m4-ipm: relative residuals 1e-8); certificate = conicml's recomputed residuals "
            "(certify_tol 1e-6; the M4 searches 1e-4).\n\n"
            f"{head}\n" + "\n".join(lines) + "\n\n" + ratio_table + "\n\n"
            + (DISCUSSION_M4 if args.families == ["m4"] else DISCUSSION) + "\n")


# --------------------------------------------------------------------------------------
# section "floor": the fit against its dense floor (Gram matrix + one Cholesky)
# --------------------------------------------------------------------------------------
_FLOOR_CHILD = r"""
import json, sys, time
import numpy as np
import conicml as cm
from conicml._utils.threads import one_blas_thread
from conicml.estimators import BMPMClassifier, MPMClassifier
from conicml.kernels import make_kernel
family, n, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
X, y = cm.datasets.twonorm(2 * n, dim=20, random_state=0)
Xt, yt, X, y = X[n:], y[n:], X[:n], y[:n]
def floor(threads_one):
    start, cpu = time.perf_counter(), time.process_time()
    K = make_kernel("rbf", X, gamma="scale").gram(X)
    if threads_one:
        with one_blas_thread():
            np.linalg.cholesky(K)
    else:
        np.linalg.cholesky(K)
    return time.perf_counter() - start, time.process_time() - cpu
est = {"mpm": MPMClassifier, "bmpm": BMPMClassifier}[family](kernel="rbf")
start = time.perf_counter()
est.fit(X, y)
cold = time.perf_counter() - start
floors, fits = [], []
for _ in range(repeats):  # interleaved: floor and fit see the same load
    floors.append(min(floor(True), floor(False)))
    start, cpu = time.perf_counter(), time.process_time()
    est.fit(X, y)
    fits.append((time.perf_counter() - start, time.process_time() - cpu))
sol = est.solution_
sc = est.program_.data.get("scatter")  # the last fit's work counts
work = "/".join(str(getattr(sc, k, "?")) for k in
                ("factorisations", "schur_factorisations", "cg_solves"))
print(json.dumps({"floor": min(f[0] for f in floors), "fit": min(f[0] for f in fits),
                  "floor_cpu": min(f[1] for f in floors), "fit_cpu": min(f[1] for f in fits),
                  "cold": cold,
                  "objective": float(sol.objective), "status": sol.status.value,
                  "certificate": float(sol.residuals.max()), "solver": sol.solver,
                  "iterations": int(sol.iterations), "work": work,
                  "accuracy": float(np.mean(est.predict(Xt) == yt))}))
"""


def run_floor(trees: list[tuple[str, str]], families: list[str], n: int, repeats: int,
              rounds: int, time_limit: float) -> list[dict]:
    """Each (label, source tree) in turn, ``rounds`` times, one fresh process per fit."""
    import json
    import subprocess

    rows = []
    for family in families:
        for rnd in range(rounds):
            for label, tree in trees:
                load = os.getloadavg()[0]
                env = {**os.environ, "PYTHONPATH": tree}
                row = {"family": family, "tree": label, "round": rnd + 1, "load": load}
                try:
                    out = subprocess.run(
                        [sys.executable, "-c", _FLOOR_CHILD, family, str(n), str(repeats)],
                        env=env, cwd=tree, capture_output=True, text=True,
                        timeout=time_limit, check=True)  # cwd: "python -c" puts it first
                    row.update(json.loads(out.stdout.strip().splitlines()[-1]))
                    row["state"] = "ok"
                except subprocess.TimeoutExpired:
                    row["state"] = "timeout"
                except subprocess.CalledProcessError as exc:
                    row["state"] = "error"
                    row["message"] = exc.stderr.strip().splitlines()[-1][:120]
                rows.append(row)
                print(_floor_line(row), flush=True)
    return rows


def _floor_line(r: dict) -> str:
    if r["state"] != "ok":
        return (f"| {r['family'].upper()} | {r['tree']} | {r['round']} | "
                f"{r['state'].upper()} {r.get('message', '')} | | | | | | | | | | | | "
                f"{r['load']:.1f} |")
    return (f"| {r['family'].upper()} | {r['tree']} | {r['round']} | {r['floor']:.3f} | "
            f"{r['fit']:.3f} | **{r['fit'] / r['floor']:.1f}** | {r['floor_cpu']:.3f} | "
            f"{r['fit_cpu']:.3f} | **{r['fit_cpu'] / r['floor_cpu']:.1f}** | {r['cold']:.3f} | "
            f"{r['objective']:.12f} | {r['status']} | {r['certificate']:.1e} | "
            f"{r['accuracy']:.3f} | {r.get('work', '')} | {r['load']:.1f} |")


def floor_table(rows: list[dict], args: argparse.Namespace, trees: list[tuple[str, str]],
                started: str, ended: str) -> str:
    head = ("| estimator | code | round | floor (s) | fit (s) | fit / floor | floor CPU (s) "
            "| fit CPU (s) | CPU fit / floor | first fit (s) | objective 1/kappa | status | "
            "certificate | test acc. | work | load (1 min) |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    trees_txt = "; ".join(f"`{label}` = {tree} at {_commit(tree)}" for label, tree in trees)
    return (f"# Kernel MPM / BMPM against the dense floor\n\n{machine()}\n\n"
            f"Command: `python benchmarks/kernel_fit_speed.py --section floor --floor-n "
            f"{args.floor_n} --repeats {args.repeats} --rounds {args.rounds} --trees "
            f"{args.trees}`; run {started} -- {ended} UTC. Code: {trees_txt}.\n\n"
            f"`MPMClassifier(kernel=\"rbf\")` / `BMPMClassifier(kernel=\"rbf\")` with "
            f"their defaults (solver \"auto\" = ils-newton) on twonorm n = {args.floor_n} "
            "(20 dimensions, seed 0; test on the next n points). Each row is one fresh "
            "process: one cold fit, then "
            f"{args.repeats} rounds of (floor, fit) interleaved in the same process; "
            "`floor` = the best of the rounds of the RBF Gram matrix "
            "(`make_kernel('rbf', X, gamma='scale').gram(X)`) plus one Cholesky "
            "factorisation of it (the faster of one BLAS thread and the default "
            "threads), `fit` = the best warm `fit` (validation, program, solve, "
            "certificate, decode); CPU = process CPU time (all threads) of the same "
            "best rounds, less sensitive to the other jobs on the machine; work = the "
            "last fit's factorisations of order n or of one class (the block factor, "
            "Sigma_y's) / Schur-complement factorisations / conjugate-gradient solves. "
            "The code "
            "versions alternate, so both see the same load.\n\n" + head + "\n"
            + "\n".join(_floor_line(r) for r in rows) + "\n\n" + DISCUSSION_FLOOR + "\n")


def _commit(tree: str) -> str:
    import subprocess

    try:
        return subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (n = 100, 60)")
    parser.add_argument("--families", default="mpm,bmpm,m4")
    parser.add_argument("--datasets", default="twonorm,ringnorm")
    parser.add_argument("--sizes", default="250,500,1000")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--solvers", default="default,clarabel",
                        help="rows to run: default and/or clarabel")
    parser.add_argument("--section", default=None,
                        help="record the run as this section of results/kernel_fit_speed.md")
    parser.add_argument("--floor-n", type=int, default=2000,
                        help="section floor: the training size")
    parser.add_argument("--repeats", type=int, default=3, help="section floor")
    parser.add_argument("--rounds", type=int, default=2, help="section floor")
    parser.add_argument("--trees", default=f"after={Path(__file__).parents[1]}",
                        help="section floor: label=source tree, comma-separated (e.g. "
                             "before=/path/to/main,after=.)")
    args = parser.parse_args()
    if args.section == "floor":
        trees = [tuple(t.split("=", 1)) for t in args.trees.split(",")]
        started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        rows = run_floor(trees, [f for f in args.families.split(",") if f != "m4"],
                         args.floor_n, args.repeats, args.rounds, args.time_limit)
        ended = time.strftime("%H:%M", time.gmtime())
        out = write_results("kernel_fit_speed",
                            floor_table(rows, args, trees, started, ended), section="floor")
        print(f"wrote {out}")
        return
    args.families = args.families.split(",")
    args.sizes = [100] if args.quick else [int(s) for s in args.sizes.split(",")]
    datasets = ["twonorm"] if args.quick else args.datasets.split(",")
    rows = run(args.families, datasets, args.sizes,
               30.0 if args.quick else args.time_limit, tuple(args.solvers.split(",")))
    out = write_results("kernel_fit_speed", table(rows, args), quick=args.quick,
                        section=args.section)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
