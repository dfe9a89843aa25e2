"""The thesis reproductions: one module per seed table or figure, one runner for all.

Every module here (``conicml/reproductions/<name>.py``) reproduces a table or figure of a
seed thesis and is run by name::

    conicml reproduce --list
    conicml reproduce huang_table_3_1 --quick      # or: python -m conicml.reproductions ...

A module provides

* ``main()`` — the table builder: parses its options from ``sys.argv`` and writes its
  markdown table(s) through :func:`._harness.write_results` (to
  ``benchmarks/results/`` in a source checkout, ``$CONICML_RESULTS_DIR`` if set);
* ``THESIS_LAYOUT`` — how its tables set the thesis's numbers beside ours
  (:mod:`._tables`: ``"rows"``, ``"columns"``, ``"parenthesised"``, ``"slash"``, or
  ``None`` when the thesis printed no numbers);
* ``THREAD_VARIABLES`` (optional) — BLAS/OpenMP variables to set to 1 before NumPy
  starts (the runner re-launches itself with them).

After ``main()`` the runner (:func:`run`) reads back every table the module wrote, prints
the thesis's numbers beside ours (:func:`thesis_pairs`, :func:`side_by_side`) and draws
the figure — ours against the thesis (:func:`conicml.plot.plot_thesis_agreement`), or
the table's numeric columns (:func:`conicml.plot.plot_table`) when the thesis has no
numbers — to ``<table>.png`` beside the table, when matplotlib (the ``plot`` extra) is
installed; without it the figure is skipped with a one-line note.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import pkgutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import _harness
from ._tables import Pair, parse_tables, side_by_side, thesis_pairs

__all__ = ["Pair", "Reproduction", "get", "main", "names", "reproductions", "run",
           "side_by_side", "thesis_pairs", "write_figure"]


@dataclass(frozen=True)
class Reproduction:
    """A reproduction's name, title (its module docstring's first line) and module."""

    name: str
    title: str
    module: str

    def load(self) -> ModuleType:
        """Import the module (its imports may need optional extras)."""
        return importlib.import_module(self.module)

    def _constant(self, name: str) -> object:
        """A module-level literal, read from the source without importing the module."""
        spec = importlib.util.find_spec(self.module)
        tree = ast.parse(Path(spec.origin).read_text())
        for node in tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and getattr(node.targets[0], "id", None) == name):
                return ast.literal_eval(node.value)
        return None

    @property
    def thesis_layout(self) -> str | None:
        """How the tables set the thesis's numbers beside ours (see :mod:`._tables`)."""
        return self._constant("THESIS_LAYOUT")  # type: ignore[return-value]

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


def run(name: str, argv: list[str] | None = None, *, figure: bool = True) -> int:
    """Run one reproduction in this process, then show and draw what it wrote.

    ``argv`` are the module's own options (e.g. ``["--quick"]``). Returns an exit code.
    """
    entry = get(name)
    module = entry.load()
    start = len(_harness.WRITTEN)
    saved = sys.argv
    sys.argv = [f"conicml reproduce {name}", *(argv or [])]
    try:
        code = module.main()
    finally:
        sys.argv = saved
    if isinstance(code, int) and code:
        return code
    written = _harness.WRITTEN[start:]
    if not written:
        print(f"\n[{name}] wrote no table (this mode only prints; see above)")
        return 0
    layout = getattr(module, "THESIS_LAYOUT", None)
    for table in written:
        pairs = thesis_pairs(table.read_text(), layout)
        print(f"\n[{name}] table: {table}")
        if pairs:
            print(f"[{name}] the thesis's numbers beside ours ({len(pairs)} cells):")
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


def main(argv: list[str] | None = None) -> int:
    """``python -m conicml.reproductions NAME [options]`` (or ``--list``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m conicml.reproductions", add_help=False,
                                     description="run a thesis reproduction")
    parser.add_argument("name", nargs="?", default=None)
    parser.add_argument("--list", action="store_true", help="list the reproductions")
    parser.add_argument("--no-figure", action="store_true", help="do not draw the figure")
    parser.add_argument("-h", "--help", action="store_true",
                        help="this help, or with a name the reproduction's own options")
    args, rest = parser.parse_known_args(argv)
    if args.help and args.name is None:
        parser.print_help()
        return 0
    if args.help:
        rest.append("--help")  # the module's own options
    if args.list or args.name is None:
        for entry in reproductions().values():
            print(f"{entry.name:<32} {entry.title}")
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
    return run(args.name, rest, figure=not args.no_figure)
