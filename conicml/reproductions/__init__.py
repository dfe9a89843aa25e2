"""The thesis reproductions: one module per seed table or figure, one runner for all.

Every module here (``conicml/reproductions/<name>.py``) reproduces a table or figure of a
seed thesis and is run by name::

    conicml reproduce --list [--format json]
    conicml reproduce huang_table_3_1 --quick [--out DIR]  # or python -m conicml.reproductions
    conicml reproduce --summary [--format json|markdown]

What a module provides (``main``, ``THESIS_LAYOUT``, ``TABLES``, ``PROTOCOL``, ...) is in
the Notes of :class:`Reproduction`; what the runner does after ``main()`` in those of
:func:`run`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib
import importlib.util
import json
import os
import pkgutil
import shlex
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .._utils.code_sampler import CodeSampler
from . import _harness, _records
from ._tables import Pair, parse_tables, side_by_side, thesis_pairs

__all__ = ["Pair", "Reproduction", "get", "list_text", "main", "names", "reproductions",
           "run", "side_by_side", "thesis_pairs", "write_figure"]


@functools.lru_cache(maxsize=256)
def _literals(path: str, mtime_ns: int) -> dict[str, object]:
    """The module-level literal assignments of a source file (and its ``__doc__``)."""
    tree = ast.parse(Path(path).read_text())
    found: dict[str, object] = {"__doc__": ast.get_docstring(tree)}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:  # not a literal (a computed constant): not declared data
                continue
    return found


@dataclass(frozen=True)
class Reproduction:
    """A reproduction's name, title (its module docstring's first line) and module;
    what it declares (tables, expected seconds, protocol) is read from the module's
    source without importing it.

    Notes
    -----
    A module provides

    * ``main()`` — the table builder: parses its options from ``sys.argv`` and writes its
      markdown table(s) through :func:`._harness.write_results` (to ``--out DIR``, default
      ``./conicml-results/``; under ``--record`` to the records in the source checkout,
      :func:`._records.records_dir`);
    * ``THESIS_LAYOUT`` — how its tables set the thesis's numbers beside ours
      (:mod:`._tables`: ``"rows"``, ``"columns"``, ``"parenthesised"``, ``"slash"``, or
      ``None`` when the thesis printed no numbers);
    * ``TABLES`` — the seed tables it reproduces (``"004:T3.1"``, see
      :data:`._records.TABLE_IDS`; empty for a pattern study);
    * ``EXPECTED_SECONDS`` — the wall time of its default run on 2 cores (an estimate);
    * ``PROTOCOL`` — ``"full"`` (the thesis's splits, folds, grids, data sizes) or
      ``"reduced: ..."`` naming every reduction and why (``"full: ..."`` for notes that
      change no protocol, such as a data version);
    * ``RATE_CELLS`` (optional) — a regex of the labels of its cells that are accuracies,
      AUCs or error rates (default :data:`._records.RATE_CELLS`);
    * ``RECORDS`` (optional) — the stems of the records it writes (default: its name);
    * ``THREAD_VARIABLES`` (optional) — BLAS/OpenMP variables to set to 1 before NumPy
      starts (the runner re-launches itself with them).
    """

    name: str
    title: str
    module: str

    def load(self) -> ModuleType:
        """Import the module (its imports may need optional extras)."""
        return importlib.import_module(self.module)

    def _constant(self, name: str) -> object:
        """A module-level literal, read from the source without importing the module."""
        spec = importlib.util.find_spec(self.module)
        path = Path(spec.origin)
        return _literals(str(path), path.stat().st_mtime_ns).get(name)

    @property
    def thesis_layout(self) -> str | None:
        """How the tables set the thesis's numbers beside ours (see :mod:`._tables`)."""
        return self._constant("THESIS_LAYOUT")  # type: ignore[return-value]

    @property
    def tables(self) -> tuple[str, ...]:
        """The seed tables it reproduces (``"004:T3.1"``; empty for a pattern study)."""
        return tuple(self._constant("TABLES") or ())  # type: ignore[arg-type]

    @property
    def expected_seconds(self) -> float | None:
        """Wall time of the default run on 2 cores (an estimate)."""
        value = self._constant("EXPECTED_SECONDS")
        return None if value is None else float(value)  # type: ignore[arg-type]

    @property
    def protocol(self) -> str:
        """``"full"`` or the reductions of the default run and why."""
        return str(self._constant("PROTOCOL") or "undeclared")

    @property
    def rate_cells(self) -> str | None:
        """Regex of the cell labels that are accuracies, AUCs or error rates (compared
        within 2 points when the thesis printed no spread); ``None``: the default."""
        return self._constant("RATE_CELLS")  # type: ignore[return-value]

    @property
    def records(self) -> tuple[str, ...]:
        """The stems of the records it writes (``benchmarks/results/<stem>.md``)."""
        return tuple(self._constant("RECORDS") or (self.name,))  # type: ignore[arg-type]

    @property
    def description(self) -> str:
        """The first paragraph of its module docstring, on one line."""
        doc = str(self._constant("__doc__") or "")
        return " ".join(doc.strip().split("\n\n")[0].split())

    def as_dict(self) -> dict:
        """What ``conicml reproduce --list --format json`` shows of it."""
        return {"name": self.name, "tables": list(self.tables),
                "expected_seconds": self.expected_seconds, "description": self.description,
                "protocol": self.protocol}

    @property
    def thread_variables(self) -> tuple[str, ...]:
        """Environment variables the module wants set to 1 before NumPy starts."""
        return tuple(self._constant("THREAD_VARIABLES") or ())  # type: ignore[arg-type]


def reproductions() -> dict[str, Reproduction]:
    """Every reproduction, by name (sorted)."""
    out = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = f"{__name__}.{info.name}"
        source = Path(importlib.util.find_spec(module).origin).read_text()
        doc = (ast.get_docstring(ast.parse(source)) or "").strip().splitlines()
        out[info.name] = Reproduction(info.name, doc[0] if doc else "", module)
    return out


def names() -> list[str]:
    """The reproduction names, sorted."""
    return list(reproductions())


def get(name: str) -> Reproduction:
    """The reproduction called ``name``; ``KeyError`` naming the known ones otherwise."""
    found = reproductions()
    if name not in found:
        raise KeyError(f"unknown reproduction {name!r}; known: {', '.join(found)}")
    return found[name]


def write_figure(table: Path, layout: str | None, title: str = "") -> Path | None:
    """Draw ``<table>.png`` from a results table; ``None`` when matplotlib is absent."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    from .. import plot

    text = table.read_text()
    pairs = thesis_pairs(text, layout)
    fig = Figure(figsize=(6.5, 5.0))
    ax = fig.subplots()
    if pairs:
        plot.plot_thesis_agreement(pairs, ax=ax, title=title)
    else:
        tables = [t for t in parse_tables(text) if t[1]]
        if not tables:
            return None
        plot.plot_table(*tables[0], ax=ax, title=title)
    fig.tight_layout()
    out = table.with_suffix(".png")
    fig.savefig(out, dpi=100)
    return out


def run(name: str, argv: list[str] | None = None, *, figure: bool = True,
        out: Path | None = None, record: bool = False) -> int:
    """Run one reproduction in this process, then show and draw what it wrote.

    ``argv`` are the module's own options (e.g. ``["--quick"]``); ``out`` the folder of
    its tables (default :func:`._harness.results_dir`). ``record`` writes into the
    records (:func:`._records.records_dir`) with a header and draws no figure.
    Returns an exit code.

    Notes
    -----
    After ``main()`` the runner (:func:`run`) reads back every table the module wrote, prints
    the thesis's numbers beside ours (:func:`thesis_pairs`, :func:`side_by_side`) and draws
    the figure — ours against the thesis (:func:`conicml.plot.plot_thesis_agreement`), or
    the table's numeric columns (:func:`conicml.plot.plot_table`) when the thesis has no
    numbers — to ``<table>.png`` beside the table, when matplotlib (the ``plot`` extra) is
    installed; without it the figure is skipped with a one-line note. Under ``--record`` it
    puts the record header in front of each table (:func:`._records.add_header`) and draws
    no figure.
    """
    entry = get(name)
    argv = list(argv or [])
    if record:
        if "--quick" in argv:
            print("conicml: error: --record records the default run; drop --quick",
                  file=sys.stderr)
            return 2
        out = _records.records_dir()
        if out is None:
            print("conicml: error: --record needs a source checkout (records live in its "
                  "benchmarks/results/) or CONICML_RECORDS_DIR", file=sys.stderr)
            return 2
        figure = False
    module = entry.load()
    start = len(_harness.WRITTEN)
    saved = sys.argv
    sys.argv = [f"conicml reproduce {name}", *argv]
    command = shlex.join(["conicml", "reproduce", name, *(["--record"] if record else []),
                          *argv])
    fields = _records.start_fields(command) if record else {}
    began = time.perf_counter()
    if out is not None:
        _harness.set_results_dir(out)
    # a record lists the code its run spent its time in (the summary's freshness)
    sampler = CodeSampler() if record else contextlib.nullcontext()
    try:
        with sampler:
            code = module.main()
    finally:
        sys.argv = saved
        _harness.set_results_dir(None)
    wall = time.perf_counter() - began
    if record:
        fields["code"] = " ".join(sampler.files)
    if isinstance(code, int) and code:
        return code
    written = _harness.WRITTEN[start:]
    if not written:
        print(f"\n[{name}] wrote no table (this mode only prints; see above)")
        return 0
    layout = getattr(module, "THESIS_LAYOUT", None)
    for table in written:
        if record:
            protocol = entry.protocol + (f"; run with the options {' '.join(argv)}"
                                         if argv else "")
            _records.add_header(table, fields, protocol=protocol, wall=wall)
        pairs = thesis_pairs(_records.strip_header(table.read_text()), layout)
        print(f"\n[{name}] {'record' if record else 'table'}: {table}")
        if pairs:
            inside = sum(_records.within_spread(p, entry.rate_cells) for p in pairs)
            print(f"[{name}] the thesis's numbers beside ours ({len(pairs)} cells, "
                  f"{inside} within the thesis's spread):")
            print(side_by_side(pairs, limit=40))
        else:
            print(f"[{name}] the thesis printed no numbers to set beside these "
                  "(see the table's notes)")
        if not figure:
            continue
        path = write_figure(table, layout, title=f"{name}: {entry.title[:60]}")
        if path is None:
            print(f"[{name}] figure skipped: matplotlib is not installed "
                  "(pip install 'conicml[plot]')")
        else:
            print(f"[{name}] figure: {path}")
    return 0


def _duration(seconds: float | None) -> str:
    return _records._duration(seconds) + ("" if seconds is None else " (estimate)")


def list_text(entries: list[Reproduction] | None = None, width: int = 88) -> str:
    """The plain ``--list``: name, tables and expected runtime, then the description
    wrapped (never cut) below it; the tables that have no entry yet at the end."""
    entries = list(reproductions().values()) if entries is None else entries
    lines = []
    for entry in entries:
        tables = " ".join(entry.tables) or "pattern study (no thesis table)"
        lines.append(f"{entry.name}  [{tables}]  {_duration(entry.expected_seconds)}")
        lines += textwrap.wrap(entry.description, width, initial_indent="    ",
                               subsequent_indent="    ")
    covered = {t for e in entries for t in e.tables}
    missing = [t for t in _records.TABLE_IDS if t not in covered]
    if missing:
        lines.append("")
        lines += textwrap.wrap("no entry yet: " + " ".join(missing), width,
                               subsequent_indent="    ")
    return "\n".join(lines)


def _record_all(force: bool, figure_args: list[str]) -> int:
    """``--all --record``: every entry whose record is not fresh (all with ``force``)."""
    rows = {r["entry"]: r for r in _records.summarize() if r["entry"]}
    failed = []
    for name in names():
        if not force and rows.get(name, {}).get("fresh"):
            print(f"[{name}] record is fresh at {rows[name]['commit'][:10]}: skipped "
                  "(--force re-records it)")
            continue
        print(f"[{name}] recording (expected {_duration(get(name).expected_seconds)})")
        sys.stdout.flush()
        if main([name, "--record", *figure_args]) != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m conicml.reproductions NAME [options]`` (or ``--list``, ``--summary``,
    ``--all --record``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m conicml.reproductions", add_help=False,
                                     description="run a thesis reproduction")
    parser.add_argument("name", nargs="?", default=None)
    parser.add_argument("--list", action="store_true", help="list the reproductions")
    parser.add_argument("--summary", action="store_true",
                        help="per seed table: entry, cells, within spread, protocol, "
                        "commit, date and freshness of its record")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                        help="format of --list and --summary (markdown: --summary only, "
                        "the text of docs/reproductions.md)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="folder of the table and figure (default ./conicml-results/)")
    parser.add_argument("--record", action="store_true",
                        help="maintainers: rewrite the recorded copy in the checkout, with "
                        "its header")
    parser.add_argument("--all", action="store_true",
                        help="with --record: every entry whose record is not fresh")
    parser.add_argument("--force", action="store_true",
                        help="with --all --record: re-record fresh records too")
    parser.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    parser.add_argument("-h", "--help", action="store_true",
                        help="this help, or with a name the reproduction's own options")
    args, rest = parser.parse_known_args(argv)
    if args.help and args.name is None:
        parser.print_help()
        return 0
    if args.help:
        rest.append("--help")  # the module's own options
    if args.summary:
        if args.format == "markdown":
            print(_records.summary_markdown(), end="")
            return 0
        rows = _records.summarize()
        print(json.dumps(rows, indent=2) if args.format == "json"
              else _records.summary_text(rows))
        return 0
    if args.all:
        if not args.record or args.name is not None:
            print("conicml: error: --all goes with --record and no name "
                  "(conicml reproduce --all --record [--force])", file=sys.stderr)
            return 2
        return _record_all(args.force, ["--no-figure"] if args.no_figure else [])
    if args.list or args.name is None:
        entries = list(reproductions().values())
        if args.format == "json":
            print(json.dumps([e.as_dict() for e in entries], indent=2))
        else:
            print(list_text(entries))
        return 0
    try:
        entry = get(args.name)
    except KeyError as exc:
        print(f"conicml: error: {exc.args[0]}", file=sys.stderr)
        return 2
    missing = [v for v in entry.thread_variables if v not in os.environ]
    if missing and "numpy" in sys.modules:
        # the module wants single-threaded BLAS/OpenMP, which only works before NumPy
        # starts: run it in a fresh interpreter with the variables set
        env = {**dict.fromkeys(entry.thread_variables, "1"), **os.environ}
        root = str(Path(__file__).resolve().parents[2])  # this conicml, not another one
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        sys.stdout.flush()
        return subprocess.call([sys.executable, "-m", __name__, *argv], env=env)
    return run(args.name, rest, figure=not args.no_figure,
               out=None if args.out is None else Path(args.out), record=args.record)
