"""The layout's rules, read from the source: one-way data flow and no import cycles.

data -> formulation -> program -> solver -> solution -> model: a solver reads a
program's kind and its contract objects (``conicml.contracts``), never a
formulation module; an estimator may use formulations and solvers; nothing in
the core imports an upper layer. Module-level imports only (a late import inside
a function is still an import and is counted too).
"""

import ast
from pathlib import Path

import pytest

import conicml

ROOT = Path(conicml.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every conicml module imported by ``path`` (absolute names)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("conicml"):
                continue
            for alias in node.names:  # "from . import kinds" imports conicml.kinds
                sub = f"{mod}.{alias.name}"
                out.add(sub if (ROOT.parent / (sub.replace(".", "/") + ".py")).exists()
                        or (ROOT.parent / sub.replace(".", "/")).is_dir() else mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("conicml"))
    out.discard(name)
    return out


GRAPH = {_module_name(p): _imports(p) for p in ROOT.rglob("*.py")}


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith("conicml.solvers.")))
def test_no_solver_imports_a_formulation(module):
    bad = sorted(m for m in GRAPH[module] if m.startswith("conicml.formulations"))
    assert not bad, f"{module} imports {bad}: read the program's contract (conicml.contracts)"


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith("conicml.contracts")))
def test_contracts_import_no_formulation_solver_or_estimator(module):
    upper = ("conicml.formulations", "conicml.solvers", "conicml.estimators")
    bad = sorted(m for m in GRAPH[module] if m.startswith(upper))
    assert not bad, f"{module} imports {bad}"


def test_no_solver_imports_another_registered_solver():
    # shared pieces live in private modules (solvers/_*.py), not in another solver's module
    solvers = {m for m in GRAPH if m.startswith("conicml.solvers.")
               and not m.rsplit(".", 1)[1].startswith("_")}
    for module in solvers:
        assert not (GRAPH[module] & solvers), f"{module} imports {GRAPH[module] & solvers}"


def test_import_graph_has_no_cycle():
    # package __init__ modules re-export their children by design; leave those edges out
    graph = {m: {d for d in deps if d in GRAPH
                 and not (m.startswith(d + ".") or d.startswith(m + "."))}
             for m, deps in GRAPH.items()}
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        for dep in graph[node]:
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep):] + [dep]
                raise AssertionError(" -> ".join(cycle))
            if dep not in state:
                visit(dep, stack + [dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


# ------------------------------------------------------------------ one rule per folder
@pytest.mark.parametrize("module",
                         sorted(m for m in GRAPH if m.startswith("conicml.formulations.")))
def test_no_formulation_imports_a_solver(module):
    # formulations and solvers are peers resting on contracts/, program, moments: what both
    # need lives in conicml.contracts
    bad = sorted(m for m in GRAPH[module] if m.startswith("conicml.solvers"))
    assert not bad, f"{module} imports {bad}: move what both need to conicml.contracts"


@pytest.mark.parametrize("module",
                         sorted(m for m in GRAPH if m.startswith("conicml.formulations.")))
def test_no_formulation_calls_solve(module):
    # a formulation builds programs; solving them (solve, solve_path, compare) is the
    # caller's: an estimator, a reproduction or the user
    solving = ("conicml.solving", "conicml.paths", "conicml.comparison")
    bad = sorted(m for m in GRAPH[module] if m.startswith(solving))
    assert not bad, f"{module} imports {bad}: return the Program and let the caller solve it"


@pytest.mark.parametrize("module",
                         sorted(m for m in GRAPH if m.startswith("conicml.estimators.")))
def test_no_estimator_imports_a_private_solver_module(module):
    bad = sorted(m for m in GRAPH[module] if m.startswith("conicml.solvers._"))
    assert not bad, f"{module} imports {bad}: a solver's internals are not the estimators'"


@pytest.mark.parametrize("module", ["conicml.plot"])
def test_plot_only_draws(module):
    # what a figure shows is computed by a formulation, an estimator or a reproduction
    upper = ("conicml.formulations", "conicml.solvers", "conicml.solving",
             "conicml.reproductions")
    bad = sorted(m for m in GRAPH[module] if m.startswith(upper))
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("package", ["conicml.certificates", "conicml.contracts",
                                     "conicml._utils"])
def test_lower_floors_import_no_upper_floor(package):
    upper = ("conicml.formulations", "conicml.solvers", "conicml.estimators",
             "conicml.reproductions", "conicml.plot", "conicml.cli")
    for module in (m for m in GRAPH if m == package or m.startswith(package + ".")):
        bad = sorted(m for m in GRAPH[module] if m.startswith(upper))
        assert not bad, f"{module} imports {bad}"


def test_the_top_shelf_is_short():
    modules = sorted(p.stem for p in ROOT.glob("*.py"))
    assert len(modules) <= 14, modules
    assert not [m for m in modules if m.startswith("_") and m != "__init__"], \
        "private helpers live in conicml/_utils, certificates in conicml/certificates"


def _non_docstring_strings(path: Path):
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            yield node


def test_every_kind_is_spelled_in_kinds_only():
    from conicml import kinds

    spelled = set(kinds.ALL_KINDS)
    for path in ROOT.rglob("*.py"):
        if path == ROOT / "kinds.py":
            continue
        found = sorted({n.value for n in _non_docstring_strings(path) if n.value in spelled})
        assert not found, f"{path.relative_to(ROOT.parent)} spells {found}: use conicml.kinds"


def test_every_kind_belongs_to_one_family():
    from conicml import kinds

    listed = [k for family in kinds.FAMILIES.values() for k in family]
    assert sorted(listed) == sorted(kinds.ALL_KINDS)
