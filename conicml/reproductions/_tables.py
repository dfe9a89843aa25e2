"""Read a reproduction's markdown tables back and pair our numbers with the thesis's.

A reproduction declares how its tables put the thesis's numbers beside ours
(``THESIS_LAYOUT`` in its module); :func:`thesis_pairs` reads every table of a results
file with that layout:

``"rows"``
    a ``source`` column saying ``ours`` / ``thesis``; a thesis row follows the row it
    belongs to (Huang Table 3.1).
``"columns"``
    a column whose header holds ``thesis`` (``thesis acc``, ``q-bar (thesis)``, or a
    bare ``thesis`` column) beside the column it belongs to: the column with the same
    header without ``thesis`` / ``(ours)``, else the first column whose header starts
    with it, else the column just left of it.
``"parenthesised"``
    cells ``ours (thesis)`` (the last parenthesised part of a cell); both parts must
    start with a number (``C=1 (10 folds)`` is no pair).
``"slash"``
    cells ``ours / thesis``, both parts starting with a number.
``None``
    the thesis printed no numbers to set beside ours (figures, timings, prose).

The first number of a cell is its value (``80.6 +- 0.2`` reads 80.6, ``.9953`` reads
0.9953); a cell without a number pairs with nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._utils.numbers import number

__all__ = ["Pair", "number", "parse_tables", "side_by_side", "thesis_pairs"]

LAYOUTS = ("rows", "columns", "parenthesised", "slash")
_LEADS = re.compile(r"\s*[-+−]?(?:\d|\.\d)")  # a cell part that starts with a number
_SPREAD = re.compile(r"(?:±|\+-|\+/-)\s*(\d*\.?\d+)")  # "80.6 ± 0.2", "80.6 +- 0.2"


def _spread(cell: str) -> float | None:
    m = _SPREAD.search(cell)
    return float(m.group(1)) if m else None


@dataclass(frozen=True)
class Pair:
    """One cell of a reproduction: where it is, our number and the thesis's (and the
    ``± spread`` the thesis printed with it, ``None`` when it printed none)."""

    label: str
    ours: float
    thesis: float
    spread: float | None = field(default=None, compare=False)


def parse_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The markdown tables of ``text`` as (header, rows) of stripped cell strings."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            block.append(line.strip())
            continue
        if len(block) >= 2 and set(block[1].replace("|", "").strip()) <= set("-: "):
            cells = [_cells(row) for row in block]
            header, body = cells[0], [r for r in cells[2:] if len(r) == len(cells[0])]
            tables.append((header, body))
        block = []
    return tables


def _cells(row: str) -> list[str]:
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [c.strip() for c in row.split("|")]


def _label(header: list[str], row: list[str], col: int) -> str:
    """The row's key (its leading non-numeric cells, at most three) and the column."""
    key = []
    for cell in row[:3]:
        if number(cell) is not None and key:
            break
        key.append(cell)
    return f"{', '.join(c for c in key if c) or row[0]} / {header[col]}"


def _base(header: str) -> str:
    h = re.sub(r"\(?\b(thesis|ours)\b\)?", "", header, flags=re.I)
    return " ".join(h.split()).lower()


def _partner(header: list[str], base: str) -> int | None:
    """The column of ours whose header is ``base`` (or starts with it)."""
    ours = [i for i, h in enumerate(header) if "thesis" not in h.lower()]
    for i in ours:
        if _base(header[i]) == base:
            return i
    for i in ours:
        if _base(header[i]).startswith(base):
            return i
    return None


def _partners(header: list[str], j: int) -> list[int | None]:
    """Ours' columns of thesis column ``j``: one per ``/``-separated part of its header
    (``thesis SOCP +ve / -ve``: ``SOCP +ve`` and ``SOCP -ve``); a bare ``thesis``
    column belongs to the column just left of it."""
    base = _base(header[j])
    if not base:
        left = j - 1
        return [left] if left >= 0 and "thesis" not in header[left].lower() else [None]
    parts = [p.strip() for p in base.split(" / ")]
    found = []
    for k, part in enumerate(parts):
        i = _partner(header, part)
        if i is None and k > 0 and " " in parts[0]:  # "-ve" after "socp +ve": "socp -ve"
            i = _partner(header, parts[0].rsplit(" ", 1)[0] + " " + part)
        found.append(i)
    return found


def thesis_pairs(text: str, layout: str | None) -> list[Pair]:
    """Every (ours, thesis) pair of numbers in the tables of ``text``, read with ``layout``."""
    if layout is None:
        return []
    if layout not in LAYOUTS:
        raise ValueError(f"THESIS_LAYOUT must be one of {LAYOUTS} or None, got {layout!r}")
    pairs: list[Pair] = []
    for header, body in parse_tables(text):
        if layout == "rows":
            src = next((i for i, h in enumerate(header) if h.lower() == "source"), None)
            if src is None:
                continue
            for prev, row in zip(body, body[1:]):
                if row[src].lower() != "thesis" or prev[src].lower() != "ours":
                    continue
                for c in range(src + 1, len(header)):
                    a, b = number(prev[c]), number(row[c])
                    if a is not None and b is not None:
                        pairs.append(Pair(f"{prev[0]} / {header[c]}", a, b,
                                          _spread(row[c])))
        elif layout == "columns":
            for j, h in enumerate(header):
                if "thesis" not in h.lower():
                    continue
                partners = _partners(header, j)
                for k, i in enumerate(partners):
                    if i is None:
                        continue
                    for row in body:
                        cell = row[j].split(" / ") if len(partners) > 1 else [row[j]]
                        a = number(row[i])
                        b = number(cell[k]) if k < len(cell) else None
                        if a is not None and b is not None:
                            pairs.append(Pair(_label(header, row, i), a, b,
                                              _spread(cell[k])))
        else:
            for row in body:
                for c in range(1, len(header)):
                    cell = row[c]
                    if layout == "parenthesised":
                        inner = re.findall(r"\(([^()]*)\)", cell)
                        thesis = number(inner[-1]) if inner else None
                        ours = number(cell.split("(")[0]) if inner else None
                        ours_text, thesis_text = cell.split("(")[0], inner[-1] if inner else ""
                    else:
                        parts = cell.split(" / ")
                        ours, thesis = ((number(parts[0]), number(parts[1]))
                                        if len(parts) == 2 else (None, None))
                        ours_text, thesis_text = (parts + ["", ""])[:2]
                    if not (_LEADS.match(ours_text) and _LEADS.match(thesis_text)):
                        continue  # "C=1 (10 folds)" is not a number beside a number
                    if ours is not None and thesis is not None:
                        pairs.append(Pair(_label(header, row, c), ours, thesis,
                                          _spread(thesis_text)))
    return pairs


def side_by_side(pairs: list[Pair], limit: int | None = None) -> str:
    """A text table: cell, ours, thesis, ours - thesis (the first ``limit`` rows)."""
    shown = pairs if limit is None else pairs[:limit]
    rows = [(p.label, f"{p.ours:.6g}", f"{p.thesis:.6g}", f"{p.ours - p.thesis:+.3g}")
            for p in shown]
    header = ("cell", "ours", "thesis", "ours - thesis")
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r).rstrip() for r in rows]
    if limit is not None and len(pairs) > limit:
        lines.append(f"... and {len(pairs) - limit} more (all in the figure and the table)")
    return "\n".join(lines)
