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
import time
import zlib

import numpy as np

import conicml as cm
from conicml.formulations import cbc, m4, minimax, ordinal, svm
from conicml.formulations import specified_rates as sr
from conicml.moments import ClusterMoments

#: the base families of the campaign: SVM, minimax, specified rates, M4, CBC, CBOR
BASE_FAMILIES = ("svm", "mpm", "bmpm", "mempm", "m4", "m4-soft", "rates", "cbc", "cbc-w",
                 "cbor")
#: the other kinds with a specialized solver
MORE_FAMILIES = ("svm-primal", "qpfs", "svor", "svorim", "trs", "trs-sdp", "kfda", "kqpfs",
                 "cbc-hull", "ranking")
FAMILIES = BASE_FAMILIES + MORE_FAMILIES

#: per-solve wall-clock limit (s), passed as ``time_limit`` to the solvers that take one;
#: a solve that runs past 1.5 x this + 1 s is recorded as a hang
TIME_LIMIT = 20.0

#: the kinds each family's programs have (for the record)
KINDS = {
    "svm": "qp.svm.dual", "mpm": "socp.mpm", "bmpm": "socp.bmpm",
    "mempm": "sequential.mempm", "m4": "quasiconvex.m4", "m4-soft": "sequential.m4",
    "rates": "socp.chance.rates.*", "cbc": "socp.chance.cbc[.hard].dual",
    "cbc-w": "socp.chance.cbc_w.dual", "cbor": "socp.chance.cbor.dual",
    "svm-primal": "qp.svm.primal", "qpfs": "qp.qpfs.simplex", "svor": "qp.chance.svor.dual",
    "svorim": "qp.chance.svor.implicit.dual", "trs": "socp.trs.convex", "trs-sdp": "sdp.trs",
    "kfda": "qp.kfda", "kqpfs": "qp.kqpfs", "cbc-hull": "socp.chance.cbc.hard.hull",
    "ranking": "socp.rank.smoothed",
}

#: families whose objective has no natural unit (it scales with the data): differences
#: are relative to the reference certificate's unit (:func:`_unit`), the others to
#: max(1, |reference|)
RELATIVE = frozenset({"qpfs", "trs", "trs-sdp", "kqpfs"})

_SCALES = (-8, -6, -3, 0, 0, 0, 0, 3, 6, 8)  # one feature x 10^s


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


def _ordinal(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, str]:
    """Latent-linear ordinal data: 3-5 ranks, one feature scaled."""
    r = int(rng.integers(3, 6))
    d = int(rng.integers(1, 4))
    n = int(rng.integers(4 * r, 50))
    X = rng.normal(size=(n, d))
    s = X @ rng.normal(size=d) + float(rng.uniform(0.1, 1.0)) * rng.normal(size=n)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, r + 1)[1:-1])) + 1
    feature = int(rng.integers(d))
    scale = 10.0 ** float(rng.choice(_SCALES))
    X[:, feature] *= scale
    return X, y, f"n={n} d={d} ranks={r} scale[x{feature}]={scale:.0e}"


def _more(family: str, rng: np.random.Generator):
    """One instance of a kind beyond the base families.

    The QPFS simplex, TRS, KFDA/KQPFS, the primal SVM, ranking, the CBC hull and the SVOR
    duals.
    """
    lim = {"time_limit": TIME_LIMIT}
    if family == "svm-primal":
        X, y, info = _two_classes(rng, n_max=50, d_max=4)
        C = 10.0 ** rng.uniform(-2, 1)
        prog = svm.soft_margin(X, y, C, kernel="linear", form="primal")
        opts = {"tol": 1e-4, "batch_size": 8, "max_iter": 400_000, **lim}
        return prog, _generic([("pegasos", "pegasos", opts),
                               ("weighted-pegasos", "weighted-pegasos",
                                {**opts, "bias": "exact"})]), f"{info} C={C:.2g}"
    if family == "qpfs":
        from conicml.formulations.qpfs import simplex_qp
        m = int(rng.integers(3, 41))
        k = int(rng.integers(1, m + 1))
        size = 10.0 ** float(rng.choice([0, 0, 2, 4]))
        L = rng.normal(size=(m, k)) * size
        row = int(rng.integers(m))
        scale = 10.0 ** float(rng.choice(_SCALES))
        L[row] *= scale
        F = np.abs(rng.normal(size=m))
        alpha = float(rng.uniform(0.05, 0.95))
        prog = simplex_qp(L, F, alpha)
        return prog, _generic([("simplex-smo", "simplex-smo", {"tol": 1e-10, **lim})]), \
            f"M={m} k={k} |L|~{size:.0e} scale[row {row}]={scale:.0e} alpha={alpha:.2f}"
    if family in ("svor", "svorim"):
        from conicml.formulations.svor_dual import svor_dual
        from conicml.formulations.svor_implicit import svorim_dual
        X, y, info = _ordinal(rng)
        C = 10.0 ** rng.uniform(-1, 2)
        kernel = str(rng.choice(["linear", "rbf"]))
        build = svor_dual if family == "svor" else svorim_dual
        prog = build(X, y, C=C, kernel=kernel)
        return prog, _generic([("smo-or", "smo-or", {"tol": 1e-7, **lim})]), \
            f"{info} C={C:.2g} {kernel}"
    if family in ("trs", "trs-sdp"):
        from conicml.formulations.trust_region import trust_region_subproblem
        n = int(rng.integers(2, 7))
        A = rng.normal(size=(max(n + 2, 10), n))
        if n > 2 and rng.integers(2):
            A[:, -1] = A[:, 0] + A[:, 1]  # a null direction
        feature = int(rng.integers(n))
        scale = 10.0 ** float(rng.choice(_SCALES))
        A[:, feature] *= scale
        H = A.T @ A / A.shape[0]
        if family == "trs-sdp":  # indefinite: shift by a fraction of the spectrum
            lam = np.linalg.eigvalsh(H)
            H = H - float(rng.uniform(0.1, 1.0)) * float(lam[min(1, n - 1)]) * np.eye(n) \
                - float(rng.uniform(0, 1)) * float(lam[0]) * np.eye(n)
        g = rng.normal(size=n) * 10.0 ** rng.uniform(-4, 1)
        delta = 10.0 ** rng.uniform(-2, 1)
        prog = trust_region_subproblem(H, g, delta,
                                       form="socp" if family == "trs" else "sdp")
        runs = _generic([("more-sorensen", "more-sorensen", lim)]) if family == "trs" else [
            ("clarabel", "clarabel", {}), ("scs", "scs", {}),
            ("more-sorensen", "more-sorensen", lim)]
        return prog, runs, f"n={n} scale[x{feature}]={scale:.0e} Delta={delta:.2g}"
    if family in ("kfda", "kqpfs"):
        from conicml.formulations.kfda import kfda, kqpfs
        X, y, info = _two_classes(rng, n_max=50, d_max=4)
        mu = 10.0 ** rng.uniform(-6, 0)
        kernel = str(rng.choice(["linear", "rbf", "poly"]))
        build = kfda if family == "kfda" else kqpfs
        name = "kfda-closed-form" if family == "kfda" else "kqpfs-cholesky"
        prog = build(X, y, mu, kernel=kernel)
        return prog, _generic([(name, name, {})]), f"{info} mu={mu:.2g} {kernel}"
    if family == "cbc-hull":
        from conicml.formulations.cbc_hull import cbc_hull
        X, y, info = _two_classes(rng, n_max=80, separable=True)
        k = int(rng.integers(2, 5))
        clusters = ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=k,
                                            random_state=int(rng.integers(1000)))
        eta = float(rng.uniform(0.1, 0.9))
        prog = cbc_hull(clusters, accuracy=eta)
        return prog, _generic([("cbc-hull-smo", "cbc-hull-smo", {"tol": 1e-9, **lim})]), \
            f"{info} k={k} eta={eta:.2f}"
    if family == "ranking":
        from conicml.formulations import ranking
        X, y, info = _two_classes(rng, n_max=36, d_max=3)
        lam = 10.0 ** rng.uniform(-3, 1)
        kernel = str(rng.choice(["linear", "rbf"]))
        prog = ranking.rankrc(X, y, lam, kernel=kernel, random_state=0)
        return prog, _generic([("rank-tr", "rank-tr", {"tol": 1e-9, **lim}),
                               ("rank-newton", "rank-newton", {"tol": 1e-9, **lim})]), \
            f"{info} lam={lam:.2g} {kernel}"
    raise ValueError(f"unknown family {family!r}")


def instance(family: str, seed: int):
    """One random instance of ``family``: ``(program, runs, info)``."""
    rng = np.random.default_rng([zlib.crc32(family.encode()), seed])
    if family in MORE_FAMILIES:
        return _more(family, rng)
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
    certified-OPTIMAL reference by more than ``rtol * size``, ``size = max(1, |ref|)``
    (``max(|ref|, unit_ref)`` for the families in :data:`RELATIVE`);
    ``beyond_certificates``: the subset whose difference exceeds what the two
    certificates allow, ``rtol * size + gap_ref * unit_ref + gap_run * unit_run`` with the
    relative gaps conicml recomputed and their units (:func:`_unit`);
    ``worse``: the part of it on the wrong side of the reference (worse in the
    program's sense). A reported objective may itself be off by its certificate's gap
    (the TRS backends report the factor form's value, up to 5e-4 below their point's
    q when ||H|| ~ 1e12), so "worse" is judged against both certificates.
    Each certified gap bounds that point's
    distance to the optimum, so a difference beyond their sum means one of the
    two certificates is wrong; a difference within it is a solver stopping
    short, at the accuracy its certificate states. ``hangs``: labels whose solve took
    longer than ``1.5 * TIME_LIMIT + 1`` seconds (``seconds``: every solve's wall time).
    """
    try:
        program, runs, info = instance(family, seed)
    except cm.ConicMLError as exc:  # the draw is rejected by the formulation
        return {"family": family, "seed": seed, "skipped": str(exc)}
    results, errors, seconds = {}, {}, {}
    for label, name, opts in runs:
        t0 = time.perf_counter()
        try:
            results[label] = cm.solve(program, name, **opts)
        except cm.ConicMLError as exc:
            errors[label] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - a raw traceback is a finding, recorded
            errors[label] = f"raw {type(exc).__name__}: {exc}"
        seconds[label] = time.perf_counter() - t0
    hangs = [label for label, t in seconds.items() if t > 1.5 * TIME_LIMIT + 1.0]
    ref_label = runs[0][0]
    ref = results.get(ref_label)
    record = {"family": family, "seed": seed, "kind": program.kind, "info": info,
              "status": {k: v.status.value for k, v in results.items()},
              "objective": {k: v.objective for k, v in results.items()},
              "errors": errors, "disagree": [], "worse": [], "beyond_certificates": [],
              "compared": 0, "seconds": seconds, "hangs": hangs}
    if ref is None or ref.status is not cm.Status.OPTIMAL:
        return record
    s = sense(program)
    for label, sol in results.items():
        if label == ref_label or sol.status is not cm.Status.OPTIMAL:
            continue
        record["compared"] += 1
        diff = sol.objective - ref.objective
        size = (max(abs(ref.objective), _unit(family, program, ref, 0.0), 1e-300)
                if family in RELATIVE else max(1.0, abs(ref.objective)))
        if not math.isfinite(diff) or abs(diff) > rtol * size:
            record["disagree"].append(label)
            allowed = (rtol * size + _gap(sol) * _unit(family, program, sol, size)
                       + _gap(ref) * _unit(family, program, ref, size))
            if not math.isfinite(diff) or abs(diff) > allowed:
                record["beyond_certificates"].append(label)
                if not math.isfinite(diff) or s * diff > 0:
                    record["worse"].append(label)
    return record


def _unit(family: str, program: cm.Program, sol: cm.Solution, size: float) -> float:
    """The objective-unit of ``sol``'s recomputed relative gap (its certificate's scale).

    The base families' certificates are relative to about ``max(1, |objective|)``;
    the QPFS simplex, TRS and KQPFS certificates state theirs (``SimplexQP.resolution``,
    the size of the terms of q, |Cy|^2 / 2).
    """
    try:
        if family == "qpfs":
            return program.data["qp"].resolution(np.asarray(sol.values["w"], float))
        if family in ("trs", "trs-sdp"):
            from conicml.formulations.trust_region import trs_point
            trs = program.data["trs"]
            u = trs.d * trs_point(program.data, sol)
            Hs, gs = trs.scaled()
            lin, quad = float(gs @ u), 0.5 * float(u @ (Hs @ u))
            return abs(lin + quad) + abs(lin) + abs(quad)
        if family == "kqpfs":
            y = program.data["fisher"].y
            return 0.5 * float(np.sum((y - y.mean()) ** 2))
    except (KeyError, ValueError, TypeError):
        return size
    return size


def _gap(sol: cm.Solution) -> float:
    """The recomputed relative gap of a certified solution (0 if it has none)."""
    gap = sol.residuals.gap if sol.residuals is not None else None
    return float(gap) if gap is not None and math.isfinite(gap) else 0.0
