"""Sphinx configuration of the conicml documentation (``pip install -e ".[docs]"``).

Build: ``sphinx-build -W -b html docs docs/_build/html`` (warnings are errors).
The solvers page is generated from the live registry at build time
(``_generate_solvers_page``), so it cannot drift from the code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

import sphinx.ext.autosummary as _autosummary  # noqa: E402

import conicml  # noqa: E402

project = "conicml"
author = "the conicml developers"
copyright = "2026, the conicml developers"  # noqa: A001
release = version = conicml.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax's files shipped with the docs (no CDN): math renders without network
    "sphinx-mathjax-offline",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json",
                    "sg_execution_times.rst", "auto_examples/sg_execution_times.rst"]
autosummary_generate = True
templates_path = ["_templates"]  # autosummary: one page per public class, no private names
# members are listed explicitly (an explicit :members: list would be overridden by a default)
autodoc_default_options: dict[str, object] = {}
autodoc_typehints = "none"  # numpydoc renders the types from the docstrings
numpydoc_show_class_members = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False
suppress_warnings = ["autosectionlabel.*", "myst.header"]
myst_heading_anchors = 3
intersphinx_mapping = {}  # no network on the build machines
html_theme = "pydata_sphinx_theme"
html_title = "conicml"
html_theme_options = {"navigation_with_keys": False}
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    # the execution-times page loads jQuery and DataTables from CDNs: the site stays
    # offline (each example's page still states its running time)
    "write_computation_times": False,
}
os.environ.setdefault("MPLBACKEND", "Agg")

# autosummary's one-line summaries end at the first ". "; citations in the first sentence
# ("Huang 2004, eqs. 3.5-3.14", "seed 003 ch. 3") are abbreviations, not sentence ends.
# tests/test_docs.py checks that no summary of the built site ends at one.
THESIS_ABBREVIATIONS = tuple(
    f"{before}{word}." for word in ("eq", "eqs", "Eq", "Eqs", "ch", "Ch", "Sec", "Fig", "Figs",
                                    "Alg", "App", "Thm", "Tab", "cf", "resp")
    for before in (" ", "("))
_autosummary.WELL_KNOWN_ABBREVIATIONS = tuple(
    dict.fromkeys(_autosummary.WELL_KNOWN_ABBREVIATIONS + THESIS_ABBREVIATIONS))


def _generate_solvers_page(app) -> None:  # noqa: ANN001
    """Write ``solvers.rst``: kinds x solvers from the live registry, with options."""
    from conicml import kinds, registry

    lines = [
        "Solvers",
        "=======",
        "",
        "Generated from the registry at build time (``conicml solvers`` prints the same).",
        "A *generic* solver is a cvxpy backend; a *specialized* one reads the program's",
        "contract (:doc:`architecture`). ``certify_tol`` is the largest recomputed residual",
        "with which its ``OPTIMAL`` stands.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - solver",
        "     - type",
        "     - kinds",
        "     - options",
        "     - certify_tol",
    ]
    for entry in registry.entries():
        lines += [
            f"   * - ``{entry.name}``",
            f"     - {'specialized' if entry.specialized else 'generic'}",
            "     - " + ", ".join(f"``{k}``" for k in entry.kinds),
            "     - " + (", ".join(f"``{o}``" for o in entry.options) or "--"),
            f"     - {entry.certify_tol:g}",
        ]
    lines += ["", "Program kinds and the solvers that accept them", "-" * 46, "",
              ".. list-table::", "   :header-rows: 1", "", "   * - kind", "     - solvers"]
    for kind in sorted(kinds.ALL_KINDS):
        names = registry.available(kind)
        lines += [f"   * - ``{kind}``", "     - " + (", ".join(f"``{n}``" for n in names)
                                                   or "--")]
    (HERE / "solvers.rst").write_text("\n".join(lines) + "\n")


def _skip_sklearn_plumbing(app, what, name, obj, skip, options):  # noqa: ANN001
    """Leave out scikit-learn's metadata-routing methods (documented by scikit-learn)."""
    if name.startswith("set_") and name.endswith("_request") or name == "get_metadata_routing":
        return True
    return skip


def setup(app):  # noqa: ANN001, D103
    # before sphinx-gallery runs the examples (priority 500): the tutorial registers a
    # solver of its own, which the page of the package's solvers must not list
    app.connect("builder-inited", _generate_solvers_page, priority=100)
    app.connect("autodoc-skip-member", _skip_sklearn_plumbing)
