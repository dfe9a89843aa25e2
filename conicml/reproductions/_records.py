"""Recorded reproductions: the header of a record, where records live, the summary.

A *record* is the markdown a reproduction wrote under ``conicml reproduce NAME --record``,
kept in the source checkout's ``benchmarks/results/`` (:func:`records_dir`). Its first
lines are a header (:func:`header_block`) saying how it was obtained: the command, the
commit, the date, the CPU, the cores, the load average, the wall time and the protocol
(``full`` or the reductions the entry declares). :func:`summarize` reads every record
back and counts, per seed table, the cells set beside the thesis and those within the
thesis's spread (:func:`within_spread`); :func:`summary_markdown` is
``docs/reproductions.md``.
"""

from __future__ import annotations

import os
import re
import subprocess
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._utils.provenance import RECORDS_PATH, provenance, provenance_header
from ._tables import Pair, thesis_pairs

if TYPE_CHECKING:
    from . import Reproduction

__all__ = ["HEADER_END", "HEADER_START", "TABLE_IDS", "add_header", "checkout_root",
           "header_block", "read_header", "records_dir", "start_fields", "strip_header",
           "summarize", "summary_markdown", "summary_text", "tolerance", "within_spread"]

#: Every seed table or figure the reproductions answer for (seed:table).
TABLE_IDS = (
    "000:Fig4.1", "000:T7.1", "000:T7.2", "000:T7.4",
    "001:T3.4", "001:T3.5", "001:T3.6", "001:Fig4.4", "001:T5.4", "001:Fig5.5",
    "002:T2", "002:T4",
    "003:T2.1", "003:T2.2", "003:T2.3", "003:T3.1", "003:T4.1", "003:T5.1", "003:T5.2",
    "003:T6.1", "003:T6.2",
    "004:T3.1", "004:T3.2", "004:robust-toy", "004:T4.2", "004:T4.3", "004:Fig4.8",
    "004:T5.1", "004:T5.9", "004:T5.10", "004:T5.11", "004:T6.1",
)

HEADER_START = "<!-- conicml record header: written by `conicml reproduce --record` -->"
HEADER_END = "<!-- end of the record header -->"


# --------------------------------------------------------------------------- where


def checkout_root() -> Path | None:
    """The source checkout this conicml runs from (``None`` for an installed package)."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "benchmarks").is_dir():
        return root
    return None


def records_dir() -> Path | None:
    """Where records live: ``$CONICML_RECORDS_DIR``, else the checkout's
    ``benchmarks/results/``; ``None`` outside a checkout (nothing to record into)."""
    env = os.environ.get("CONICML_RECORDS_DIR")
    if env:
        return Path(env)
    root = checkout_root()
    return None if root is None else root / RECORDS_PATH


def _git(*args: str) -> subprocess.CompletedProcess | None:
    root = checkout_root()
    if root is None:
        return None
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None


def _module_path(module: str) -> str:
    """``conicml/reproductions/x.py`` for the module ``conicml.reproductions.x``."""
    return Path(*module.split(".")).with_suffix(".py").as_posix()


def last_change(module: str) -> str | None:
    """The last commit that touched the module ``conicml.reproductions.x`` (its file)."""
    out = _git("log", "-1", "--format=%H", "--", _module_path(module))
    return out.stdout.strip() or None if out is not None and not out.returncode else None


def changed_since(commit: str, paths: Iterable[str]) -> list[str] | None:
    """Which of ``paths`` (relative to the checkout) a commit after ``commit`` changed, up to
    ``HEAD``; ``None`` when git cannot tell (no checkout, an unknown commit)."""
    out = _git("diff", "--name-only", f"{commit}..HEAD", "--", *sorted(set(paths)))
    if out is None or out.returncode:
        return None
    return sorted(out.stdout.split())


def _is_ancestor(older: str, newer: str) -> bool:
    out = _git("merge-base", "--is-ancestor", older, newer)
    return out is not None and out.returncode == 0


# --------------------------------------------------------------------------- header


def start_fields(command: str) -> dict[str, str]:
    """The header fields known when a run starts (:func:`conicml._utils.provenance.provenance`:
    the command, the commit with ``-dirty`` when the checkout has uncommitted changes, the
    date, CPU model, cores, load average, Python)."""
    return provenance(command)


def header_block(fields: dict[str, Any]) -> str:
    """The header of a record: the provenance quote block (``> key: value``) between two
    markers, so that it can be read back and replaced."""
    return f"{HEADER_START}\n\n{provenance_header(fields)}\n{HEADER_END}\n\n"


def add_header(path: Path, fields: dict[str, str], *, protocol: str,
               wall: float) -> dict[str, str]:
    """Put the header in front of the record at ``path`` (replacing an older one):
    ``fields`` from :func:`start_fields`, then the load average at the end, the wall
    time, the protocol and, when ``fields`` has it, ``code`` (the package's source files
    the run spent its time in, space-separated)."""
    try:
        end = " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:  # not on this platform
        end = "unknown"
    fields = dict(fields)
    code = fields.pop("code", None)  # the longest field, last
    fields.update({"load average at the end": end, "wall seconds": f"{wall:.1f}",
                   "protocol": protocol})
    if code:  # (none sampled: the summary judges the record by its entry module)
        fields["code"] = code
    body = strip_header(path.read_text())
    path.write_text(header_block(fields) + body)
    return fields


def read_header(text: str) -> dict[str, str] | None:
    """The header fields of a record; ``None`` for a record without one (legacy)."""
    if HEADER_START not in text or HEADER_END not in text:
        return None
    block = text.split(HEADER_START, 1)[1].split(HEADER_END, 1)[0]
    fields = {}
    for line in block.splitlines():
        m = re.match(r">\s*([^:]+): (.*)$", line.strip())
        if m:
            fields[m.group(1).strip()] = m.group(2).strip()
    return fields


def strip_header(text: str) -> str:
    """The record without its header."""
    if HEADER_START in text and HEADER_END in text:
        return text.split(HEADER_END, 1)[1].lstrip("\n")
    return text


def _legacy_facts(text: str) -> dict[str, str | None]:
    """What a record without a header says about itself: its date and command, if any."""
    date = re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", text)
    command = re.search(r"[Cc]ommand:?\s*`([^`]+)`", text)
    return {"recorded": date.group() if date else None,
            "command": command.group(1) if command else None}


# --------------------------------------------------------------------------- spread

#: labels of cells that are accuracies, AUCs, error or other rates (in % or fractions),
#: unless the entry says which of its cells are (``RATE_CELLS``)
RATE_CELLS = r"acc|auc|err|%|rate|sens|spec|alpha|beta|bound"


def tolerance(pair: Pair, rate_cells: str | None = None) -> tuple[float, str]:
    """How far ours may be from the thesis's number and why: the thesis's ``±`` where
    printed; else 2 points for an accuracy / AUC / error rate (0.02 when it is a
    fraction) — a cell whose label matches ``rate_cells`` (default :data:`RATE_CELLS`);
    else 10 % of the thesis's number."""
    if pair.spread is not None:
        return pair.spread, "thesis ±"
    if re.search(rate_cells or RATE_CELLS, pair.label, re.IGNORECASE):
        # a label in percent is in points even when the numbers are below 1 (0.03 %)
        fraction = "%" not in pair.label and max(abs(pair.ours), abs(pair.thesis)) <= 1.0
        return (0.02, "2 points") if fraction else (2.0, "2 points")
    return 0.1 * abs(pair.thesis), "10 % relative"


def within_spread(pair: Pair, rate_cells: str | None = None) -> bool:
    """Whether our number lies within :func:`tolerance` of the thesis's."""
    tol, _ = tolerance(pair, rate_cells)
    return abs(pair.ours - pair.thesis) <= tol * (1 + 1e-9) + 1e-12


# --------------------------------------------------------------------------- summary


def _entry_record(entry: Reproduction, where: Path) -> dict[str, Any]:
    """Cells, within-spread count, protocol, commit, date, freshness of an entry's records."""
    paths = [where / f"{stem}.md" for stem in entry.records]
    paths = [p for p in paths if p.is_file()]
    if not paths:
        return {"record": None, "cells": 0, "within_spread": 0, "protocol": "not recorded",
                "commit": None, "recorded": None, "fresh": False,
                "stale_reason": "no record"}
    pairs: list[Pair] = []
    headers = []
    for path in paths:
        text = path.read_text()
        headers.append(read_header(text))
        pairs += thesis_pairs(strip_header(text), entry.thesis_layout)
    row: dict[str, Any] = {
        "record": ", ".join(p.name for p in paths), "cells": len(pairs),
        "within_spread": sum(within_spread(p, entry.rate_cells) for p in pairs)}
    if any(h is None for h in headers):
        facts = _legacy_facts(paths[headers.index(None)].read_text())
        row.update(protocol="legacy (no header)", commit=None, recorded=facts["recorded"],
                   command=facts["command"], fresh=False,
                   stale_reason="legacy record: no commit to compare with")
        return row
    header = headers[0]
    commit = header.get("commit", "")
    found = re.fullmatch(r"([0-9a-f]{7,40})(-dirty)?", commit)
    sha = found.group(1) if found else None
    code = [f for f in header.get("code", "").split() if f not in RUNNER_FILES]
    if sha is None:
        fresh, why = False, "the record's commit is unknown"
    elif found.group(2):
        fresh, why = False, "recorded with uncommitted changes"
    else:
        fresh, why = _freshness(entry, sha, code)
    row.update(protocol=header.get("protocol"), commit=commit or None,
               recorded=header.get("date"), command=header.get("command"),
               wall_seconds=float(header["wall seconds"]) if "wall seconds" in header
               else None, fresh=fresh, stale_reason=why, code_checked=bool(code))
    return row


#: The runner's own files, on the stack of every record (the CLI, the runner that calls the
#: entry's ``main()`` and writes the header): a change to them changes no record's numbers,
#: so freshness does not read them from a record's ``code`` field.
RUNNER_FILES = frozenset({"conicml/cli.py", "conicml/reproductions/__init__.py",
                          "conicml/reproductions/__main__.py",
                          "conicml/reproductions/_records.py"})


def _freshness(entry: Reproduction, sha: str, code: list[str]) -> tuple[bool, str | None]:
    """Whether a record made at commit ``sha`` is fresh, and why not.

    With ``code`` (the record's ``code`` field: the files the run spent its time in,
    sampled by :mod:`conicml._utils.code_sampler`), fresh while no later commit changed
    any of them nor the entry module; without it, fresh when made at or after the last
    commit that changed the entry module."""
    changed = last_change(entry.module)
    if changed is None:
        return False, "the entry's module has no git history here"
    if not code:
        if _is_ancestor(changed, sha):
            return True, None
        return False, f"the entry changed after the record (commit {changed[:10]})"
    changed_files = changed_since(sha, [*code, _module_path(entry.module)])
    if changed_files is None:
        return False, "git cannot compare the record's commit with HEAD here"
    if changed_files:
        more = f" and {len(changed_files) - 3} more" if len(changed_files) > 3 else ""
        return False, f"code it ran changed after the record: {', '.join(changed_files[:3])}{more}"
    return True, None


def summarize(entries: Iterable[Reproduction] | None = None,
              where: Path | None = None) -> list[dict[str, Any]]:
    """One row per table id (:data:`TABLE_IDS`, then any other id an entry declares):
    ``table``, ``entry`` (``None``: no entry yet), ``cells``, ``within_spread``,
    ``protocol``, ``commit``, ``recorded``, ``fresh`` (and ``record``, ``stale_reason``,
    ``code_checked``: whether freshness looked at the code the run spent its time in, the
    record's ``code`` field, or only at its entry module).

    An entry covering several tables writes one record: each of its tables shows the
    cells of that whole record.
    """
    from . import reproductions

    entries = list(reproductions().values() if entries is None else entries)
    where = records_dir() if where is None else where
    by_table: dict[str, Reproduction] = {}
    for entry in entries:
        for table in entry.tables:
            by_table.setdefault(table, entry)
    ids = [*TABLE_IDS, *sorted(set(by_table) - set(TABLE_IDS))]
    cache: dict[str, dict[str, Any]] = {}
    rows = []
    for table in ids:
        entry = by_table.get(table)
        if entry is None:
            rows.append({"table": table, "entry": None, "cells": 0, "within_spread": 0,
                         "protocol": "no entry", "commit": None, "recorded": None,
                         "fresh": False, "record": None, "stale_reason": "no entry"})
            continue
        if entry.name not in cache:
            cache[entry.name] = (_entry_record(entry, where) if where is not None else
                                 {"cells": 0, "within_spread": 0, "protocol": "not recorded",
                                  "commit": None, "recorded": None, "fresh": False,
                                  "record": None, "stale_reason": "no records directory"})
        rows.append({"table": table, "entry": entry.name, **cache[entry.name]})
    return rows


def _short_protocol(protocol: str | None) -> str:
    return (protocol or "-").split(":", 1)[0]


def summary_text(rows: list[dict[str, Any]]) -> str:
    """The plain ``--summary`` table (the protocol's first word; details in JSON)."""
    header = ("table", "entry", "cells", "within", "protocol", "commit", "recorded", "fresh")
    body = [(r["table"], r["entry"] or "no entry", str(r["cells"]),
             f"{r['within_spread']}/{r['cells']}" if r["cells"] else "-",
             _short_protocol(r["protocol"]), (r["commit"] or "-")[:10],
             r["recorded"] or "-", _fresh_text(r)) for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*b).rstrip() for b in body]
    cells = {r["entry"]: (r["cells"], r["within_spread"]) for r in rows if r["entry"]}
    n, k = sum(c for c, _ in cells.values()), sum(w for _, w in cells.values())
    lines.append("")
    lines.append(f"{sum(1 for r in rows if r['entry'])}/{len(rows)} tables have an entry; "
                 f"{sum(1 for r in rows if r['fresh'])} fresh records "
                 f"({sum(1 for r in rows if r['fresh'] and not r.get('code_checked'))} "
                 f"judged by the entry module only); {k}/{n} cells within the thesis's "
                 "spread")
    return "\n".join(lines)


def _fresh_text(row: dict[str, Any]) -> str:
    if not row["fresh"]:
        return "no"
    return "yes" if row.get("code_checked") else "yes (entry only)"


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary_markdown(rows: list[dict[str, Any]] | None = None,
                     entries: Iterable[Reproduction] | None = None) -> str:
    """``docs/reproductions.md``: the summary (without freshness, which depends on the
    checkout's git history: see ``conicml reproduce --summary``) and every entry."""
    from . import reproductions

    entries = list(reproductions().values() if entries is None else entries)
    rows = summarize(entries) if rows is None else rows
    out = [
        "# Reproductions",
        "",
        "<!-- generated by `conicml reproduce --summary --format markdown`; do not edit: "
        "tests/reproductions/test_records.py checks this file against it -->",
        "",
        "Every seed table or figure the project answers for, the `conicml reproduce` entry "
        "that reproduces it and what its record holds.",
        "",
        "`conicml reproduce --list [--format json]` lists the entries: the tables each "
        "reproduces, its expected runtime on 2 cores (an estimate) and its description. "
        "`conicml reproduce NAME [--quick] [--out DIR]` runs one: it writes its markdown "
        "table (the thesis's numbers beside ours, with the thesis's spread where printed) "
        "and a figure `<table>.png` (matplotlib: ours against the thesis's with the "
        "diagonal, or the table's numeric columns where the thesis printed no numbers) "
        "into DIR, by default `./conicml-results/` in the working directory, never into "
        "the installed package or the checkout; `--quick` is a smoke run that writes "
        "`<table>_quick.md`.",
        "",
        "Records live in one place, `benchmarks/results/` of the source checkout. "
        "`conicml reproduce NAME --record` (maintainers) rewrites an entry's record with a "
        "header: the command, the commit it ran at, the date, CPU model, cores, load "
        "average, wall time and the protocol (`full` or the entry's declared reductions "
        "and why). `conicml reproduce --all --record` re-records every entry whose record "
        "is not fresh, so an interrupted run resumes where it stopped; `--force` "
        "re-records all. A record is fresh when no commit after it changed the code it "
        "ran: its entry module and the package modules the run spent its time in, "
        "sampled while it ran, in its child processes too (the header's `code` field; a "
        "record without that field is judged by its entry module only).",
        "",
        "Each entry is one module, `conicml/reproductions/<name>.py`: its `main()` builds "
        "the table; it declares `TABLES`, `EXPECTED_SECONDS`, `PROTOCOL`, `THESIS_LAYOUT` "
        "(how its tables set the thesis's numbers beside ours: rows `ours`/`thesis`, "
        "`thesis ...` columns, `ours (thesis)` or `ours / thesis` cells) and optionally "
        "`RATE_CELLS` and `RECORDS`; the runner in `conicml/reproductions/__init__.py` "
        "does the rest. A new reproduction is a new module there.",
        "",
        "**cells**: the numbers of the record set beside the thesis's; **within**: those "
        "inside the thesis's ± where it printed one, else within 2 points for an "
        "accuracy, AUC or error rate (0.02 for a fraction), else within 10 % of the "
        "thesis's number (each entry says which of its cells are rates). An entry "
        "covering several tables counts the cells of its whole record for each. "
        "**legacy (no header)**: a record written before headers existed; the date is "
        "what the file states. Whether a record is fresh (no change after it to the "
        "code it ran) depends on the checkout's git history: "
        "`conicml reproduce --summary` shows it.",
        "",
        "| table | entry | cells | within | protocol | commit | recorded |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(f"| {r['table']} | {r['entry'] or 'no entry'} | {r['cells']} | "
                   f"{r['within_spread'] if r['cells'] else '-'} | "
                   f"{_md(_short_protocol(r['protocol']))} | {(r['commit'] or '-')[:10]} | "
                   f"{r['recorded'] or '-'} |")
    out += ["", "## Entries", ""]
    for entry in entries:
        tables = ", ".join(entry.tables) or "none (a pattern study)"
        records = ", ".join(f"`benchmarks/results/{r}.md`" for r in entry.records)
        out += [f"### `{entry.name}`", "",
                f"- tables: {tables}",
                f"- record: {records}",
                f"- expected: {_duration(entry.expected_seconds)} for the default run on 2 "
                "cores (an estimate)",
                f"- protocol: {entry.protocol}",
                "", textwrap.fill(entry.description, 88), ""]
    return "\n".join(out).rstrip() + "\n"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 90:
        return f"~{seconds:.0f} s"
    if seconds < 5400:
        return f"~{seconds / 60:.0f} min"
    return f"~{seconds / 3600:.1f} h"
