"""Rules of the source's form, read from the files: no history in the code, short module
docstrings, short functions.

A comment or docstring says what the code does and why, with the thesis equation; how it
got there (an issue number, a campaign seed, a results file, a timing) is in the commit
message. A module docstring is a summary line with the method and its citation and a
short paragraph of what a user must know; the mathematics lives in the Notes of the
function or class it describes. No function body is longer than :data:`MAX_FUNCTION_LINES`.
"""

import ast
import functools
import re
from pathlib import Path

import pytest

import conicml

ROOT = Path(conicml.__file__).parent
SOURCES = sorted(ROOT.rglob("*.py"))

#: Longest module docstring, in lines (summary, blank line, a short paragraph or two).
MAX_MODULE_DOCSTRING_LINES = 25
#: Longest function or method, in lines from its first statement after the docstring to
#: its end (the signature and the docstring are not counted: a long Notes section is
#: documentation, not logic).
MAX_FUNCTION_LINES = 150

#: Modules whose docstrings may be longer than the limit: none; a new entry needs a reason.
LONG_DOCSTRING_ALLOWED: set[str] = set()
#: Functions still longer than the limit (``module:qualified name``): none left; a new
#: entry needs a reason and a plan to split it.
LONG_FUNCTION_ALLOWED: set[str] = set()

#: History that belongs in commit messages: issue numbers ("issue 21", "issue #21",
#: "(#21)"), campaign seeds, and citations of a particular results file (the directory
#: ``benchmarks/results/`` itself may be named: the records are written there).
HISTORY = {
    "an issue number": re.compile(r"\bissues?\s*#?\s*\d+|(?<![\w&/])#\d{1,4}\b(?![\w-])",
                                  re.IGNORECASE),
    "a campaign seed": re.compile(r"campaign\s+seeds?\b", re.IGNORECASE),
    "a results-file citation": re.compile(r"benchmarks/results/[A-Za-z0-9_]"),
}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


@functools.cache
def _comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment and every docstring of ``path``."""
    import io
    import tokenize

    source = path.read_text()
    out: list[tuple[int, str]] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string))
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                out.append((body[0].lineno, body[0].value.value))
    return out


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    if (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        if len(body) == 1:
            return 0
        body = body[1:]
    return node.end_lineno - body[0].lineno + 1


def _functions(tree: ast.AST, prefix: str = ""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, prefix + node.name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")
        else:
            yield from _functions(node, prefix)


def test_the_rules_see_the_package():
    assert len(SOURCES) > 100
    assert all((ROOT / name).is_file() for name in LONG_DOCSTRING_ALLOWED)


@pytest.mark.parametrize("what", sorted(HISTORY))
def test_no_history_in_comments_or_docstrings(what):
    pattern = HISTORY[what]
    found = [f"{_rel(path)}:{line}: {match.group(0)!r}"
             for path in SOURCES for line, text in _comments_and_docstrings(path)
             for match in [pattern.search(text)] if match]
    assert not found, f"{what} in the source (history goes in the commit message):\n" + (
        "\n".join(found))


@pytest.mark.parametrize("text, what", [
    ("# see issue 21", "an issue number"), ("# fixed in (#118)", "an issue number"),
    ("# Issues #3 and #4", "an issue number"), ("# campaign seed 851", "a campaign seed"),
    ("# benchmarks/results/suite.md", "a results-file citation"),
])
def test_the_history_patterns_catch_what_they_name(text, what):
    assert HISTORY[what].search(text)


@pytest.mark.parametrize("text", [
    "# colour #1f77b4", "# the records go to benchmarks/results/", "# seed 004 eq. 3.29",
    "# step 2 of Alg. 5", "# kind 'qp.svm.dual'",
])
def test_the_history_patterns_leave_ordinary_text_alone(text):
    assert not any(pattern.search(text) for pattern in HISTORY.values())


def test_no_docstring_holds_a_swallowed_backslash():
    # "\\top", "\\beta", "\\alpha" in a docstring that is not raw become a tab, a backspace,
    # a bell (and the rendered math loses its command): math docstrings are r-strings
    control = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]|\t")
    found = [f"{_rel(path)}:{line}" for path in SOURCES
             for line, text in _comments_and_docstrings(path) if control.search(text)]
    assert not found, f"control characters (a backslash escape in a non-raw string): {found}"
    # "\\rho" written through a non-raw string becomes a carriage return, which the parser
    # reads as a line break: a math role broken at its first character
    broken = [f"{_rel(path)}:{line}" for path in SOURCES
              for line, text in _comments_and_docstrings(path) if ":math:`\n" in text]
    assert not broken, f"a :math: role that starts with a line break (a lost \\r): {broken}"


def test_module_docstrings_are_short():
    long = {}
    for path in SOURCES:
        doc = ast.get_docstring(_tree(path), clean=False) or ""
        n = len(doc.splitlines())
        if n > MAX_MODULE_DOCSTRING_LINES and _rel(path) not in LONG_DOCSTRING_ALLOWED:
            long[_rel(path)] = n
    assert not long, (f"module docstrings over {MAX_MODULE_DOCSTRING_LINES} lines (move the "
                      f"mathematics to the Notes of the function it describes): {long}")


def test_no_function_is_longer_than_the_limit():
    long = {}
    for path in SOURCES:
        for name, node in _functions(_tree(path)):
            key = f"{_rel(path)}:{name}"
            n = _body_lines(node)
            if n > MAX_FUNCTION_LINES and key not in LONG_FUNCTION_ALLOWED:
                long[key] = n
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_allow_lists_hold_only_what_still_needs_them():
    """An entry that meets the rule is removed, so the lists only shrink."""
    short_docs = {
        name for name in LONG_DOCSTRING_ALLOWED
        if len((ast.get_docstring(_tree(ROOT / name), clean=False)
                or "").splitlines()) <= MAX_MODULE_DOCSTRING_LINES}
    lengths = {f"{_rel(path)}:{name}": _body_lines(node)
               for path in SOURCES for name, node in _functions(_tree(path))}
    short_functions = {key for key in LONG_FUNCTION_ALLOWED
                       if lengths.get(key, 0) <= MAX_FUNCTION_LINES}
    assert not short_docs, f"now short, remove from LONG_DOCSTRING_ALLOWED: {short_docs}"
    assert not short_functions, f"now short or gone, remove from LONG_FUNCTION_ALLOWED: " \
                                f"{short_functions}"
