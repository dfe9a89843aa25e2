"""Seeded random instances of every program kind that has a specialized solver.

``instance(family, seed)`` returns ``(program, runs, info)``: the program,
the solver runs to put side by side (``(label, solver, options)``; the first
is the reference) and a one-line description of what was drawn. Every draw
varies the size (n, d), the conditioning of the class covariances (up to
1e6), the scale of one feature (1e-8 ... 1e8), the class imbalance, the
separation of the classes, the kernel and the learner's hyper-parameter
(C, eta, W, beta0). Kinds the generic backends accept are compared with
``clarabel`` (reference) and ``ecos``; the sequential and quasiconvex kinds
(no single conic form) run their specialized solvers with a Clarabel and an
ECOS inner solver.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

import conicml as cm
from conicml.formulations import cbc, m4, minimax, ordinal, svm
from conicml.formulations import specified_rates as sr
from conicml.moments import ClusterMoments

FAMILIES = ("svm", "mpm", "bmpm", "mempm", "m4", "m4-soft", "rates", "cbc", "cbc-w", "cbor")

#: the kinds each family's programs have (for the record)
KINDS = {
    "svm": "qp.svm.dual", "mpm": "socp.mpm", "bmpm": "socp.bmpm",
    "mempm": "sequential.mempm", "m4": "quasiconvex.m4", "m4-soft": "sequential.m4",
    "rates": "socp.chance.rates.*", "cbc": "socp.chance.cbc[.hard].dual",
    "cbc-w": "socp.chance.cbc_w.dual", "cbor": "socp.chance.cbor.dual",
}


def _two_classes(rng: np.random.Generator, *, n_max: int = 60, d_max: int = 5,
                 separable: bool | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Two Gaussian classes with random size, conditioning, imbalance and one scaled feature."""
    d = int(rng.integers(1, d_max + 1))
    n = int(rng.integers(max(8, 2 * d + 4), n_max + 1))
    frac = float(rng.uniform(0.2, 0.8))  # imbalance
    n_pos = min(max(3, int(round(frac * n))), n - 3)
    cond = 10.0 ** rng.uniform(0, 6)  # covariance conditioning up to 1e6
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    scales = np.sqrt(np.geomspace(1.0, 1.0 / cond, d)) if d > 1 else np.ones(1)
    A = Q * scales
    if separable is None:
        separable = bool(rng.integers(2))
    gap = float(rng.uniform(4, 8) if separable else rng.uniform(0.3, 2.0))
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)
    Xp = rng.normal(size=(n_pos, d)) @ A.T + 0.5 * gap * direction
    Xn = rng.normal(size=(n - n_pos, d)) @ A.T - 0.5 * gap * direction
    X = np.vstack([Xp, Xn])
    y = np.r_[np.ones(n_pos), -np.ones(n - n_pos)]
    if separable:  # make it truly separable along `direction` (drop a margin band)
        f = X @ direction
        keep = (y * f) > 0.2 * gap
        if keep.sum() >= 6 and (y[keep] > 0).sum() >= 3 and (y[keep] < 0).sum() >= 3:
            X, y = X[keep], y[keep]
    feature = int(rng.integers(d))
    scale = 10.0 ** float(rng.choice([-8, -4, 0, 0, 0, 4, 8]))
    X = X.copy()
    X[:, feature] *= scale
    perm = rng.permutation(y.size)
    info = (f"n={y.size} d={d} pos={int((y > 0).sum())} cond={cond:.1e} "
            f"scale[x{feature}]={scale:.0e} {'sep' if separable else 'overlap'}")
    return X[perm], y[perm], info


def _generic(extra: list) -> list:
    return [("clarabel", "clarabel", {}), ("ecos", "ecos", {}), *extra]


def instance(family: str, seed: int):
    """One random instance of ``family``: ``(program, runs, info)``."""
    rng = np.random.default_rng([zlib.crc32(family.encode()), seed])
    if family == "svm":
        X, y, info = _two_classes(rng)
        C = 10.0 ** rng.uniform(-2, 2)
        kernel = str(rng.choice(["linear", "linear", "rbf"]))
        prog = svm.soft_margin(X, y, C, kernel=kernel, form="dual")
        return prog, _generic([("smo", "smo", {"tol": 1e-8})]), f"{info} C={C:.2g} {kernel}"
    if family in ("mpm", "bmpm", "mempm"):
        X, y, info = _two_classes(rng, d_max=4)
        if family == "mpm":
            prog = minimax.mpm(X, y)
            return prog, _generic([("rosen", "rosen", {}), ("dinkelbach", "dinkelbach", {})]), info
        if family == "bmpm":
            base = minimax.bmpm(X, y, 0.0)
            beta0 = float(rng.uniform(0.0, 0.9)) * base.data["beta0_max"]
            prog = minimax.bmpm(X, y, beta0)
            return (prog, _generic([("rosen", "rosen", {}), ("dinkelbach", "dinkelbach", {})]),
                    f"{info} beta0={beta0:.3g}")
        theta = float(rng.uniform(0.2, 0.8))
        prog = minimax.mempm(X, y, theta)
        return prog, [("qi/clarabel", "quadratic-interpolation", {"inner": "clarabel"}),
                      ("qi/ecos", "quadratic-interpolation", {"inner": "ecos"})], \
            f"{info} theta={theta:.2f}"
    if family == "m4":
        X, y, info = _two_classes(rng, n_max=40, d_max=4, separable=True)
        prog = m4.m4(X, y)
        return prog, [("bisection/clarabel", "bisection", {"inner": "clarabel"}),
                      ("bisection/ecos", "bisection", {"inner": "ecos"}),
                      ("dinkelbach-gfp", "dinkelbach-gfp", {})], info
    if family == "m4-soft":
        X, y, info = _two_classes(rng, n_max=40, d_max=4)
        C = 10.0 ** rng.uniform(-3, 0)
        prog = m4.m4(X, y, C=C)
        return prog, [("qi/clarabel", "quadratic-interpolation", {"inner": "clarabel"}),
                      ("qi/ecos", "quadratic-interpolation", {"inner": "ecos"}),
                      ("brent", "brent", {})], \
            f"{info} C={C:.2g}"
    if family == "rates":
        X, y, info = _two_classes(rng, d_max=4)
        eta_pos, eta_neg = (float(v) for v in rng.uniform(0.05, 0.6, 2))
        form = str(rng.choice(["primal", "dual"]))
        prog = sr.specified_rates(X, y, eta_pos, eta_neg, form=form)
        return prog, _generic([("lin-han", "lin-han", {"time_limit": 10.0}),
                               ("ellipsoid-newton", "ellipsoid-newton", {})]), \
            f"{info} eta=({eta_pos:.2f},{eta_neg:.2f}) {form}"
    if family in ("cbc", "cbc-w"):
        X, y, info = _two_classes(rng, n_max=80)
        k = int(rng.integers(2, 5))
        clusters = ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=k,
                                            random_state=int(rng.integers(1000)))
        eta = float(rng.uniform(0.1, 0.9))
        if family == "cbc":
            C = 10.0 ** rng.uniform(-2, 2)
            prog = cbc.cbc(clusters, C, eta, form="dual")
            hp = f"C={C:.2g}"
        else:
            W = 10.0 ** rng.uniform(-1, 1)
            prog = cbc.cbc_w(clusters, W, eta, form="dual")
            hp = f"W={W:.2g}"
        return prog, _generic([("cbc-smo", "cbc-smo", {})]), f"{info} k={k} eta={eta:.2f} {hp}"
    if family == "cbor":
        r = int(rng.integers(3, 5))
        d = int(rng.integers(1, 4))
        n = int(rng.integers(6 * r, 60))
        yo = np.sort(rng.integers(1, r + 1, n)).astype(float)
        yo[:r] = np.arange(1, r + 1)
        spread = float(rng.uniform(0.3, 2.0))
        X = rng.normal(0, spread, (n, d)) + yo[:, None] * rng.uniform(0.5, 2.0, d)
        feature = int(rng.integers(d))
        scale = 10.0 ** float(rng.choice([-4, 0, 0, 4]))
        X[:, feature] *= scale
        clusters = ClusterMoments.from_data(X, yo, clustering="kmeans",
                                            n_clusters=int(rng.integers(1, 3)),
                                            random_state=int(rng.integers(1000)))
        W = 10.0 ** rng.uniform(-1, 1)
        eta = float(rng.uniform(0.1, 0.9))
        prog = ordinal.cbor(clusters, W=W, accuracy=eta)
        return prog, _generic([("cbor-smo", "cbor-smo", {"tol": 1e-7})]), \
            f"n={n} d={d} ranks={r} scale[x{feature}]={scale:.0e} W={W:.2g} eta={eta:.2f}"
    raise ValueError(f"unknown family {family!r}")


def sense(program: cm.Program) -> float:
    """+1 if the program's objective is minimised, -1 if maximised."""
    if program.has_problem and not program.kind.startswith(("quasiconvex", "sequential")):
        import cvxpy as cp
        return -1.0 if isinstance(program.problem.objective, cp.Maximize) else 1.0
    return -1.0  # separable M4 (rho), soft M4 (G), MEMPM (F): maximised


def run(family: str, seed: int, rtol: float = 1e-5) -> dict:
    """Solve one instance with every run; return the record of the campaign.

    ``disagree``: labels whose certified-OPTIMAL objective differs from the
    certified-OPTIMAL reference by more than ``rtol * max(1, |ref|)``;
    ``worse``: the subset on the wrong side of the reference (its objective
    is worse than the reference's in the program's sense);
    ``beyond_certificates``: the subset whose difference exceeds what the two
    certificates allow, ``(rtol + gap_ref + gap_run) * max(1, |ref|)`` with the
    relative gaps conicml recomputed. Each certified gap bounds that point's
    distance to the optimum, so a difference beyond their sum means one of the
    two certificates is wrong; a difference within it is a solver stopping
    short, at the accuracy its certificate states.
    """
    try:
        program, runs, info = instance(family, seed)
    except cm.ConicMLError as exc:  # the draw is rejected by the formulation
        return {"family": family, "seed": seed, "skipped": str(exc)}
    results, errors = {}, {}
    for label, name, opts in runs:
        try:
            results[label] = cm.solve(program, name, **opts)
        except cm.ConicMLError as exc:
            errors[label] = f"{type(exc).__name__}: {exc}"
    ref_label = runs[0][0]
    ref = results.get(ref_label)
    record = {"family": family, "seed": seed, "kind": program.kind, "info": info,
              "status": {k: v.status.value for k, v in results.items()},
              "objective": {k: v.objective for k, v in results.items()},
              "errors": errors, "disagree": [], "worse": [], "beyond_certificates": [],
              "compared": 0}
    if ref is None or ref.status is not cm.Status.OPTIMAL:
        return record
    s = sense(program)
    for label, sol in results.items():
        if label == ref_label or sol.status is not cm.Status.OPTIMAL:
            continue
        record["compared"] += 1
        diff = sol.objective - ref.objective
        size = max(1.0, abs(ref.objective))
        if not math.isfinite(diff) or abs(diff) > rtol * size:
            record["disagree"].append(label)
            if not math.isfinite(diff) or s * diff > 0:
                record["worse"].append(label)
            allowed = rtol + _gap(ref) + _gap(sol)
            if not math.isfinite(diff) or abs(diff) > allowed * size:
                record["beyond_certificates"].append(label)
    return record


def _gap(sol: cm.Solution) -> float:
    """The recomputed relative gap of a certified solution (0 if it has none)."""
    gap = sol.residuals.gap if sol.residuals is not None else None
    return float(gap) if gap is not None and math.isfinite(gap) else 0.0
