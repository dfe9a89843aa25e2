"""Progress bars: on by default in a terminal, silent otherwise, and a ``progress=`` override.

A fake terminal (a ``StringIO`` whose ``isatty`` is true) stands in for standard error;
the bars' text (tqdm's description) is read back from it.
"""

from __future__ import annotations

import ast
import io
import sys
from pathlib import Path

import numpy as np
import pytest

import conicml as cm
from conicml._utils import progress as _progress
from conicml.estimators import HLSVMClassifier

pytest.importorskip("tqdm")


@pytest.fixture
def terminal(monkeypatch):
    """Standard error is a terminal; bars appear at once (no delay)."""
    monkeypatch.delenv("CONICML_PROGRESS", raising=False)
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: True)


@pytest.fixture
def pipe(monkeypatch):
    """Standard error is not a terminal (a log file, a pipe, CI)."""
    monkeypatch.delenv("CONICML_PROGRESS", raising=False)
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: False)


def _svm_program():
    X, y = cm.datasets.twonorm(n=40, dim=3, random_state=0)
    return cm.formulations.svm.soft_margin(X, y, C=1.0, kernel="linear", form="dual")


def test_wanted_follows_the_terminal_the_environment_and_the_override(monkeypatch):
    monkeypatch.delenv("CONICML_PROGRESS", raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal
    assert not _progress.wanted() and _progress.wanted(True)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    assert _progress.wanted() and not _progress.wanted(False)
    monkeypatch.setenv("CONICML_PROGRESS", "0")
    assert not _progress.wanted() and _progress.wanted(True)


def test_helpers_are_no_ops_when_off(pipe, capsys):
    items = [1, 2]
    assert _progress.progress(items, "x") is items
    with _progress.progress_bar("x") as bar:
        bar.update()
        bar.set_postfix_str("y")
    with _progress.dask_progress("x"):
        pass
    assert capsys.readouterr().err == ""


def test_compare_shows_its_solvers_in_a_terminal(terminal, capsys):
    cm.compare(_svm_program(), ["clarabel", "ecos"])
    assert "compare qp.svm.dual" in capsys.readouterr().err
    cm.compare(_svm_program(), ["clarabel", "ecos"], progress=False)
    assert capsys.readouterr().err == ""


def test_compare_is_silent_in_a_pipe_unless_asked(pipe, capsys):
    cm.compare(_svm_program(), ["clarabel", "ecos"])
    assert capsys.readouterr().err == ""
    cm.compare(_svm_program(), ["clarabel", "ecos"], progress=True)
    assert "compare qp.svm.dual" in capsys.readouterr().err


def test_hlsvm_growth_bar(terminal, capsys, monkeypatch):
    X, y = cm.datasets.twonorm(n=60, dim=2, random_state=1)
    HLSVMClassifier(random_state=0).fit(X, y)
    assert "H-LSVM growth" in capsys.readouterr().err
    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: False)
    HLSVMClassifier(random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


def test_ranking_path_bar(pipe, capsys):
    from conicml.estimators.ranking import ranking_path
    from conicml.formulations import ranking

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), np.r_[np.ones(6), -np.ones(24)]
    prog = ranking.rankrc(X, y, 1.0, kernel="linear")
    ranking_path(prog, [1.0, 0.1])
    assert capsys.readouterr().err == ""
    ranking_path(prog, [1.0, 0.1], progress=True)
    assert "lambda path" in capsys.readouterr().err


def test_dask_moments_bar(terminal, capsys):
    da = pytest.importorskip("dask.array")
    from conicml.moments import distributed as _distributed

    rng = np.random.default_rng(0)
    X = da.from_array(rng.normal(size=(200, 2)), chunks=50)
    y = da.from_array(np.where(np.arange(200) % 2 == 0, 1.0, -1.0), chunks=50)
    _distributed.class_moments(X, y)
    assert "class moments" in capsys.readouterr().err


REPRODUCTIONS = sorted(p for p in (Path(cm.__file__).parent / "reproductions").glob("*.py")
                       if not p.name.startswith("_"))


@pytest.mark.parametrize("path", REPRODUCTIONS, ids=[p.stem for p in REPRODUCTIONS])
def test_every_reproduction_loops_under_a_bar(path):
    # each reproduction wraps a loop of its run in the shared helper (_harness.progress)
    tree = ast.parse(path.read_text())
    loops = [node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.comprehension))]
    wrapped = [loop for loop in loops
               if any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "progress"
                      for n in ast.walk(loop.iter))]
    assert wrapped, f"{path.name}: no loop under progress()"
    from conicml.reproductions import _harness

    assert _harness.progress is _progress.progress
