"""The ``conicml`` command: solvers, compare (a fast model) and reproduce."""

import pytest

from conicml.cli import main
from conicml.reproductions import names


def test_solvers_lists_the_registry(capsys):
    assert main(["solvers"]) == 0
    out = capsys.readouterr().out
    assert "clarabel" in out and "smo" in out and "specialized" in out
    assert "m4-line-search" not in out  # deprecated names are not listed


def test_compare_one_model_agrees(capsys):
    assert main(["compare", "--model", "svm", "--solvers", "clarabel,ecos,smo"]) == 0
    assert "all solvers agree" in capsys.readouterr().out


def test_reproduce_lists_and_rejects_unknown_names(capsys):
    known = names()
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in known)
    assert main(["reproduce", "no-such-table"]) == 2
    err = capsys.readouterr().err
    assert "unknown reproduction 'no-such-table'" in err and known[0] in err


def test_compare_json_and_plot(capsys, tmp_path):
    import json

    pytest.importorskip("matplotlib")
    figure = tmp_path / "compare.png"
    code = main(["compare", "--model", "svm", "--solvers", "clarabel,smo", "--format", "json",
                 "--plot", str(figure)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["agree"] is True
    (model,) = doc["models"]
    assert model["model"] == "svm" and {r["solver"] for r in model["rows"]} == {"clarabel",
                                                                              "smo"}
    assert figure.stat().st_size > 2_000


def test_compare_leaves_out_the_stochastic_solvers_and_says_why(capsys):
    # pegasos is not certifiable by the generic certificate yet (issue 11): the main job
    # leaves it out by default, names it and the reason, and runs it when asked
    assert main(["compare", "--model", "svm-primal", "--solvers", "clarabel,ecos"]) == 0
    capsys.readouterr()
    assert main(["compare", "--model", "hlsvm-node"]) == 0
    out = capsys.readouterr().out
    assert "leaving out pegasos" in out and "stochastic first-order" in out


def test_compare_default_table_is_compact_and_verbose_has_the_variables(capsys):
    # default text: status, objective, rel. diff, certificate, time, agree; no per-variable
    # columns (those are behind --verbose and always in markdown/json)
    assert main(["compare", "--model", "svm", "--solvers", "clarabel,smo"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("solver"))
    assert header.split() == ["solver", "status", "objective", "rel.", "diff", "certificate",
                              "time", "s", "agree"]
    assert "max|d" not in out and "ok " in out
    assert main(["compare", "--model", "svm", "--solvers", "clarabel,smo", "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert "max|d alpha|" in verbose and "iters" in verbose
    assert main(["compare", "--model", "svm", "--solvers", "clarabel,smo",
                 "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "| max|d alpha| |" in markdown and "| residual |" in markdown


def test_compare_compact_table_explains_a_disagreement(capsys):
    # ecos and clarabel differ by ~1e-8 relative on this objective (measured: 8e-9), far
    # above an absurd rtol of 1e-13: the row says NO and the line below it says why
    assert main(["compare", "--model", "svm", "--solvers", "clarabel,ecos",
                 "--rtol", "1e-13"]) == 1
    out = capsys.readouterr().out
    assert "DISAGREEMENT" in out and "NO" in out
    assert "ecos: objective differs by" in out and "(tol 1e-13)" in out
