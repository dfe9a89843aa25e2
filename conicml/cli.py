"""The ``conicml`` command: the solver registry and cross-solver comparisons.

.. code-block:: text

    conicml solvers                      # every solver, the kinds it accepts
    conicml compare                      # every model on a bundled data set
    conicml compare --model svm --dataset breast_cancer --kernel rbf -C 1 \\
                    --solvers ecos,scs,clarabel,smo
    conicml compare --model mpm,bmpm --model m4 --n 200   # several models, 200 rows each
    conicml reproduce --list             # the thesis tables that can be reproduced
    conicml reproduce huang_table_3_1 --quick   # table + figure, thesis numbers beside ours
    conicml reproduce --summary          # per thesis table: the record, cells within spread

``compare`` exits with status 1 when some solver disagrees with the reference
beyond its tolerance (or fails), so it can guard a pipeline. A misuse (an unknown
model, solver or data set, a solver that cannot take the model, a figure path that
cannot be written, a bad value) is one line on standard error and status 2,
reported before anything runs.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import sys
import textwrap
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import datasets, registry
from .comparison import Comparison, compare
from .exceptions import ConicMLError
from .program import Program

__all__ = ["MODELS", "compact_table", "main"]


@dataclass(frozen=True)
class DemoModel:
    """How the CLI formulates one model from standardized ``(X, y)`` and options."""

    description: str
    build: Callable[[np.ndarray, np.ndarray, argparse.Namespace], Program]
    dataset: str


def _svm(form: str) -> Callable[[np.ndarray, np.ndarray, argparse.Namespace], Program]:
    def build(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
        from .formulations import svm

        return svm.soft_margin(X, y, C=args.C, kernel=args.kernel, gamma=args.gamma,
                               form=form)

    return build


def _mpm(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import minimax

    return minimax.mpm(X, y, ridge=1e-6)


def _bmpm(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import minimax

    return minimax.bmpm(X, y, beta0=0.5, ridge=1e-6)


def _mempm(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import minimax

    return minimax.mempm(X, y, ridge=1e-6)


def _m4(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import m4

    # the soft-margin C is per point (errata S004-A6): C = c / N with c = 0.3 gives an
    # interior rho; c * N >> 1 drives rho to 0, c << 1 to kappa_MPM
    return m4.m4(X, y, C=0.3 * args.C / X.shape[0])


def _specified_rates(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import specified_rates

    return specified_rates.specified_rates(X, y, error_pos=0.6, error_neg=0.6,
                                           kernel=args.kernel)


def _cbc(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import cbc
    from .moments import ClusterMoments

    clusters = ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=20)
    return cbc.cbc(clusters, C=args.C, accuracy=0.5, form="dual")


def _cbor(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import ordinal
    from .moments import ClusterMoments

    clusters = ClusterMoments.from_data(X, y, clustering="kmeans", n_clusters=8)
    return ordinal.cbor(clusters, W=3.0, accuracy=0.5, kernel=args.kernel, form="dual")


def _svor(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import svor_dual

    return svor_dual.svor_dual(X, y, C=args.C, kernel=args.kernel)


def _svor_implicit(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import svor_implicit

    # the first 120 points only: m(r-1) dual variables, and osqp needs ~2e4 iterations at 300
    return svor_implicit.svorim_dual(X[:120], y[:120], C=args.C, kernel=args.kernel)


def _lsvr(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import lsvr

    return lsvr.lsvr(X, y, epsilon=0.1, C=args.C, k=2)


def _rankrc(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import ranking

    # a rare class of 10 against 80 (800 pairs), so that every backend runs in < 2 s
    keep = np.r_[np.flatnonzero(y > 0)[:10], np.flatnonzero(y < 0)[:80]]
    return ranking.rankrc(X[keep], y[keep], lam=2.0**-6)


def _qpfs(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import qpfs

    return qpfs.qpfs(X, y, similarity="correlation")


def _ordinal_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded ordinal data: 5 ranks by quintiles of a noisy linear score in 5-D."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 5))
    score = X @ np.array([1.0, -0.5, 0.25, 0.0, 0.8]) + 0.3 * rng.standard_normal(n)
    ranks = 1.0 + np.searchsorted(np.quantile(score, [0.2, 0.4, 0.6, 0.8]), score)
    return X, ranks


def _series_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded heteroscedastic regression series: y = sinc(x) + noise growing with x."""
    rng = np.random.default_rng(0)
    x = np.linspace(-3.0, 3.0, n)
    y = np.sinc(x) + (0.05 + 0.1 * (x + 3.0) / 6.0) * rng.standard_normal(n)
    return x[:, None], y


def _trs(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import trust_region

    X = X[:, :10]  # a small SDP keeps the demo fast
    n = X.shape[0]
    # an indefinite model: H = X'X/n - I (eigenvalues below 1 turn negative)
    return trust_region.trust_region_subproblem(X.T @ X / n - np.eye(X.shape[1]),
                                                -X.T @ y / n, 1.0, form="sdp")


def _hlsvm_node(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> Program:
    from .formulations import svm

    # one H-LSVM node problem (seed 001, C.1): weights (5.3), lambda = 1e-2, c_i = nu_i/(lambda n)
    n, n_pos = y.size, int(np.count_nonzero(y > 0))
    return svm.soft_margin(X, y, C=1.0 / (1e-2 * n), form="primal",
                           class_weight={1: 1.0 / (2 * n_pos), -1: 1.0 / (2 * (n - n_pos))})


#: Models ``conicml compare`` knows, in the order it runs them.
MODELS: dict[str, DemoModel] = {
    "svm": DemoModel("soft-margin SVM, dual (C-SVC)", _svm("dual"), "breast_cancer"),
    "svm-primal": DemoModel("soft-margin SVM, primal", _svm("primal"), "breast_cancer"),
    "mpm": DemoModel("minimax probability machine", _mpm, "wisconsin"),
    "bmpm": DemoModel("biased MPM, beta0 = 0.5", _bmpm, "wisconsin"),
    "mempm": DemoModel("minimum error MPM (sequential BMPM)", _mempm, "wisconsin"),
    "m4": DemoModel("maxi-min margin machine (soft margin, C = 0.3/N)", _m4, "wisconsin"),
    "specified-rates": DemoModel("chance-constrained classifier, eta = (0.6, 0.6)",
                                 _specified_rates, "heart"),
    "cbc": DemoModel("cluster-based SOCP classifier (20 k-means clusters per class), dual",
                     _cbc, "breast_cancer"),
    "cbor": DemoModel("cluster-based ordinal regression (8 clusters per rank), dual", _cbor,
                      "ordinal-synthetic"),
    "lsvr": DemoModel("local support vector regression (k = 2)", _lsvr, "series-synthetic"),
    "svor": DemoModel("support vector ordinal regression (4.1), dual (SMO-OR)", _svor,
                      "ordinal-synthetic"),
    "svor-implicit": DemoModel("SVOR, implicit constraints (Chu & Keerthi), dual, 120 points",
                               _svor_implicit, "ordinal-synthetic"),
    "trs": DemoModel("trust-region subproblem on 10 features, H = X'X/n - I, Delta = 1",
                     _trs, "breast_cancer"),
    "hlsvm-node": DemoModel("H-LSVM node: class-balanced linear SVM primal (5.3), lambda = 1e-2",
                            _hlsvm_node, "twonorm"),
    "rankrc": DemoModel("RankRC, smoothed hinge, rare-class rbf basis (10 rare vs 80)",
                        _rankrc, "twonorm"),
    "qpfs": DemoModel("QPFS feature ranking (|correlation|, alpha-hat), simplex QP", _qpfs,
                      "sonar"),
}


#: Generated data sets (``--n`` rows, default 300) beside the bundled ones of datasets.names().
GENERATED = ("ordinal-synthetic", "series-synthetic", "twonorm", "ringnorm")
_DEFAULT_N = 300


class UsageError(ValueError):
    """A misuse of the command line: printed as one line, exit status 2."""


def _did_you_mean(name: str, valid: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, valid, n=3)
    return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""


def _unknown(what: str, name: str, valid: Sequence[str]) -> UsageError:
    return UsageError(f"unknown {what} {name!r}{_did_you_mean(name, valid)} "
                      f"(valid: {', '.join(valid)})")


def _dataset_names() -> list[str]:
    return [*datasets.names(), *GENERATED]


def _load(name: str, n: int | None) -> tuple[np.ndarray, np.ndarray]:
    if name not in _dataset_names():
        raise _unknown("data set", name, _dataset_names())
    if name in GENERATED:
        n = _DEFAULT_N if n is None else n
    if name == "ordinal-synthetic":
        return _ordinal_data(n)
    if name == "series-synthetic":
        return _series_data(n)
    if name == "twonorm":
        X, y = datasets.twonorm(n, random_state=0)
    elif name == "ringnorm":
        X, y = datasets.ringnorm(n, random_state=0)
    else:
        X, y = datasets.load(name)
        if n is not None:  # a seeded subsample that keeps the minority class
            if n > X.shape[0]:
                raise UsageError(f"--n {n}: the data set {name!r} has only {X.shape[0]} rows")
            X, y = datasets.subsample(X, y, n, random_state=0)
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0), y


def _split(values: Sequence[str] | None) -> list[str] | None:
    """Names given repeated or comma-separated (``--model svm --model mpm,m4``)."""
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",")]


def _check_plot_path(path: str) -> None:
    """Fail before the run, not after it, when the figure cannot be written."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--plot needs matplotlib (pip install 'conicml[plot]')")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"--plot {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"--plot {path}: cannot write there (permission denied)")


def _cmd_solvers(args: argparse.Namespace) -> int:
    rows = [(e.name, "specialized" if e.specialized else "generic",
             "yes" if e.is_installed() else "no", ", ".join(e.kinds), e.description)
            for e in registry.entries()]
    header = ("solver", "type", "installed", "kinds", "description")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    # the kinds and description columns wrap to what the terminal leaves them
    total = max(shutil.get_terminal_size().columns, 60)
    fixed = sum(widths[:3]) + 2 * 4
    widths[3] = max(min(widths[3], (total - fixed) // 3), 12)
    widths[4] = max(total - fixed - widths[3], 20)
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*header).rstrip())
    print(fmt.format(*("-" * w for w in widths)).rstrip())
    for row in rows:
        kinds = textwrap.wrap(row[3], widths[3], break_on_hyphens=False) or [""]
        desc = textwrap.wrap(row[4], widths[4]) or [""]
        for i in range(max(len(kinds), len(desc))):
            cells = (*(row[:3] if i == 0 else ("", "", "")),
                     kinds[i] if i < len(kinds) else "", desc[i] if i < len(desc) else "")
            print(fmt.format(*cells).rstrip())
    return 0


def _check_solvers(solvers: list[str]) -> list[str]:
    """Every name known (the names ``conicml solvers`` lists), else a usage error."""
    if not solvers or not all(solvers):
        raise UsageError("--solvers needs at least one solver name (comma-separated, "
                         "e.g. --solvers clarabel,smo; see `conicml solvers`)")
    out = []
    for name in solvers:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            # unknown or not installed: the registry's message (with a did-you-mean)
            entry = registry.get(name)
        if entry.deprecated:  # not listed by `conicml solvers`: say what replaces it
            raise UsageError(f"solver {name!r} is deprecated: {entry.deprecated}")
        if entry.name not in out:
            out.append(entry.name)
    return out


def _cmd_compare(args: argparse.Namespace) -> int:
    names = _split(args.model) or list(MODELS)
    for name in names:
        if name not in MODELS:
            raise _unknown("model", name, list(MODELS))
    names = list(dict.fromkeys(names))
    solvers = _split(args.solvers)
    if solvers is not None:
        solvers = _check_solvers(solvers)
    if args.dataset is not None and args.dataset not in _dataset_names():
        raise _unknown("data set", args.dataset, _dataset_names())
    for flag, value in (("-C", args.C), ("--rtol", args.rtol)):
        if not (np.isfinite(value) and value > 0):
            raise UsageError(f"{flag} must be a positive finite number, got {value:g}")
    if args.n is not None and args.n < 2:
        raise UsageError(f"--n must be at least 2, got {args.n}")
    if args.plot:
        _check_plot_path(args.plot)
    info = sys.stderr if args.format == "json" else sys.stdout
    ok = True
    compared = False
    reports: list[dict] = []
    figures: list = []
    for name in names:
        model = MODELS[name]
        dataset = args.dataset or model.dataset
        X, y = _load(dataset, args.n)
        start = time.perf_counter()
        program = model.build(X, y, args)
        chosen = solvers
        if chosen is None:
            left_out = [e for e in (registry.get(n) for n in registry.available(program.kind))
                        if e.compare_by_default is not None]
            chosen = [n for n in registry.available(program.kind)
                      if n not in {e.name for e in left_out}]
            for e in left_out:
                print(f"[{name}] leaving out {e.name} (name it with --solvers to include it): "
                      f"{e.compare_by_default}", file=info)
        else:
            usable = registry.available(program.kind)
            chosen = [s for s in solvers if s in usable]
            if not chosen:
                raise UsageError(
                    f"--model {name}: none of {', '.join(solvers)} solves its programs "
                    f"(kind {program.kind}); solvers that do: {', '.join(usable) or 'none'}")
            for s in solvers:
                if s not in chosen:
                    kinds = ", ".join(registry.get(s).kinds)
                    print(f"[{name}] skipping {s}: it solves {kinds}, not {program.kind}",
                          file=info)
        result = compare(program, chosen, rtol=args.rtol)
        compared = compared or len(result.rows) > 1
        elapsed = time.perf_counter() - start
        fmt = "markdown" if args.markdown else args.format
        if fmt == "json":
            reports.append({"model": name, "description": model.description,
                            "dataset": dataset, "n": int(X.shape[0]), "d": int(X.shape[1]),
                            "seconds": elapsed, **result.to_dict()})
        else:
            print(f"\n## {name}: {model.description} on {dataset} "
                  f"(n={X.shape[0]}, d={X.shape[1]}; {elapsed:.1f} s)\n")
            if fmt == "markdown":
                print(result.to_markdown())
            else:
                print(result if args.verbose else compact_table(result))
        if args.plot:
            figures.append((name, result))
        ok = ok and result.agree
    if args.plot:
        _save_comparison_figures(figures, args.plot)
    if args.format == "json" and not args.markdown:
        print(json.dumps({"agree": ok, "models": reports}, indent=2))
        return 0 if ok else 1
    if not ok:
        print("\nSOME SOLVERS DISAGREE (see the tables above)")
    elif compared:
        print("\nall solvers agree")
    else:
        print("\nnothing to compare: one solver ran (name two or more with --solvers)")
    return 0 if ok else 1


def compact_table(result: Comparison) -> str:
    """The default text table of ``conicml compare``: one short row per solver.

    Columns: status, objective, relative objective difference to the reference,
    certificate (conicml's recomputed residual; ``ok`` when the status is
    certified OPTIMAL), total time, agree. The per-variable differences are in
    ``--verbose`` (the full :class:`~conicml.comparison.Comparison` table) and in
    the markdown and JSON formats; a disagreeing row is explained below the table.
    """
    header = ["solver", "status", "objective", "rel. diff", "certificate", "time s", "agree"]
    body = [[r.solver + (" (ref)" if r.solver == result.reference else ""), r.status,
             f"{r.objective:.10g}", f"{r.obj_rel_diff:.1e}",
             f"{'ok' if r.certified else 'no'} {r.residual:.1e}", f"{r.total_time:.3f}",
             "yes" if r.agree else "NO"] for r in result.rows]
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [f"kind {result.kind}; reference {result.reference}; {result.verdict}",
             fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*row).rstrip() for row in body]
    for r in result.rows:
        if r.agree:
            continue
        why = [f"objective differs by {r.obj_rel_diff:.1e} (tol {r.rtol:.0e})"
               if r.obj_rel_diff > r.rtol else "",
               "" if r.certified else f"status {r.status} is not certified",
               *[f"max|d {k}| = {v:.1e}" for k, v in r.unique_diffs.items()],
               r.message]
        lines.append(f"  {r.solver}: " + "; ".join(w for w in why if w))
    return "\n".join(lines)


def _save_comparison_figures(figures: list, path: str) -> None:
    """One panel per model (conicml.plot.plot_comparison), saved to ``path``."""
    from matplotlib.figure import Figure

    from .plot import plot_comparison

    fig = Figure(figsize=(6.0, 4.0 * len(figures)))
    axes = fig.subplots(len(figures), 1, squeeze=False)[:, 0]
    for ax, (name, result) in zip(axes, figures):
        plot_comparison(result, ax=ax)
        ax.set_title(f"{name}: {ax.get_title()}")
    fig.tight_layout()
    fig.savefig(path)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from . import reproductions

    common = [*(["--format", args.format] if args.format else [])]
    if args.summary:
        return reproductions.main(["--summary", *common])
    if args.all:
        return reproductions.main(["--all", *(["--record"] if args.record else []),
                                   *(["--force"] if args.force else []),
                                   *(["--no-figure"] if args.no_figure else []),
                                   *([args.name] if args.name else [])])
    if args.list or args.name is None:
        return reproductions.main(["--list", *common])
    return reproductions.main([args.name, *(["--no-figure"] if args.no_figure else []),
                               *(["--quick"] if args.quick else []),
                               *(["--out", args.out] if args.out else []),
                               *(["--record"] if args.record else []), *args.extra])


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="conicml", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("solvers", help="list the solver registry").set_defaults(func=_cmd_solvers)
    cmp = sub.add_parser("compare", help="solve one program with several solvers")
    cmp.add_argument("--model", action="append", default=None, metavar="MODEL",
                     help=f"model(s) to formulate, repeated or comma-separated: "
                     f"{', '.join(MODELS)} (default: every model)")
    cmp.add_argument("--dataset", default=None,
                     help=f"data set: {', '.join(_dataset_names())} "
                     "(each model has its own default)")
    cmp.add_argument("--n", type=int, default=None,
                     help=f"rows: of the generated data sets (default {_DEFAULT_N}), or a seeded "
                     "subsample of a bundled one (default: all its rows)")
    cmp.add_argument("--solvers", action="append", default=None,
                     help="solver names, repeated or comma-separated (default: all that "
                     "accept the model)")
    cmp.add_argument("--kernel", default="linear", help="kernel of kernel models")
    cmp.add_argument("--gamma", type=float, default=None, help="RBF gamma (default: 'scale')")
    cmp.add_argument("-C", dest="C", type=float, default=1.0, help="cost C")
    cmp.add_argument("--rtol", type=float, default=1e-5, help="objective tolerance")
    cmp.add_argument("--markdown", action="store_true",
                     help="print markdown tables (same as --format markdown)")
    cmp.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                     help="output format (json: one document for every model)")
    cmp.add_argument("-v", "--verbose", action="store_true",
                     help="text format: the full table (per-variable differences, residual, "
                     "iterations, solve and total time, tolerance)")
    cmp.add_argument("--plot", default=None, metavar="FILE",
                     help="also save the comparisons as a figure (needs matplotlib)")
    cmp.set_defaults(func=_cmd_compare)
    rep = sub.add_parser("reproduce", help="re-run a thesis table: the markdown table, a figure, "
                         "and the thesis's numbers beside ours (conicml.reproductions)")
    rep.add_argument("name", nargs="?", default=None, help="reproduction name (see --list)")
    rep.add_argument("--list", action="store_true",
                     help="list the reproductions: tables, expected runtime, description")
    rep.add_argument("--summary", action="store_true",
                     help="per seed table: entry, cells, within the thesis's spread, "
                     "protocol, commit, date and freshness of its record")
    rep.add_argument("--format", choices=("text", "json", "markdown"), default=None,
                     help="format of --list / --summary (markdown: the summary as "
                     "docs/reproductions.md)")
    rep.add_argument("--quick", action="store_true",
                     help="smoke run: writes <table>_quick.md")
    rep.add_argument("--out", default=None, metavar="DIR",
                     help="folder of the table and figure (default ./conicml-results/)")
    rep.add_argument("--record", action="store_true",
                     help="maintainers: rewrite the recorded copy in the checkout "
                     "(benchmarks/results/) with its header")
    rep.add_argument("--all", action="store_true",
                     help="with --record: re-record every entry whose record is not fresh "
                     "(resumable)")
    rep.add_argument("--force", action="store_true",
                     help="with --all --record: re-record fresh records too")
    rep.add_argument("--no-figure", action="store_true",
                     help="do not draw <table>.png (drawn when matplotlib is installed)")
    rep.add_argument("extra", nargs=argparse.REMAINDER,
                     help="further options passed to the script (e.g. --splits 10)")
    rep.set_defaults(func=_cmd_reproduce)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``conicml`` command."""
    args = _parser().parse_args(argv)
    if getattr(args, "gamma", 0) is None:
        args.gamma = "scale"
    try:
        return args.func(args)
    except (ConicMLError, ValueError) as exc:  # a user error: one line, no traceback
        print(f"conicml: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
