"""conicml.reproductions: the registry, the thin benchmark callers, reading the thesis's
numbers back from the tables, the figure, and the runner end to end on a tiny module.

References: the numbers of the pairs are those written in the markdown under test (the
recorded Huang Table 3.1 row is copied from benchmarks/results/huang_table_3_1.md, whose
thesis row is Huang's Table 3.1).
"""

import sys
import textwrap
from pathlib import Path

import pytest

from conicml import reproductions
from conicml.cli import main as cli_main
from conicml.reproductions import Pair, Reproduction, side_by_side, thesis_pairs
from conicml.reproductions._tables import LAYOUTS, parse_tables

ROOT = Path(__file__).resolve().parents[2]

#: every name `conicml reproduce` knew when the scripts lived in benchmarks/ (issue 13
#: keeps them all working)
NAMES = [
    "huang_fig_4_8", "huang_table_3_1", "huang_table_3_2", "huang_table_4_3",
    "huang_tables_5_9_5_11", "huang_toys", "rodriguez_lujan_ch5", "rodriguez_lujan_fig_4_4",
    "rodriguez_lujan_table_5_4", "rodriguez_lujan_tables_3_4_3_6", "saketha_table_2_1",
    "saketha_table_2_2",
    "saketha_table_5_1", "saketha_table_5_2", "saketha_table_6_2", "tayal_ch7_saddle",
    "tayal_ch7_table74", "tayal_fig_4_1", "tayal_multilevel", "tayal_table2", "tayal_table4",
    "tayal_table_7_2",
]


def test_every_reproduction_name_is_kept_and_declares_its_layout():
    found = reproductions.reproductions()
    assert set(NAMES) <= set(found)
    for entry in found.values():
        assert entry.title, entry.name
        assert entry.thesis_layout is None or entry.thesis_layout in LAYOUTS, entry.name
        source = Path(reproductions.__file__).parent / f"{entry.name}.py"
        assert "\ndef main(" in source.read_text(), entry.name


def test_conicml_reproduce_is_the_one_way_in():
    # no benchmarks/reproduce_*.py shims: every reproduction runs as `conicml reproduce NAME`
    if not (ROOT / "benchmarks").is_dir():
        pytest.skip("not a source checkout: benchmarks/ is absent")
    assert not sorted((ROOT / "benchmarks").glob("reproduce_*.py"))


def test_unknown_name_exits_2_with_the_list(capsys):
    assert reproductions.main(["no_such_table"]) == 2
    err = capsys.readouterr().err
    assert "unknown reproduction 'no_such_table'" in err and "huang_table_3_1" in err
    with pytest.raises(KeyError, match="known: huang_fig_4_8"):
        reproductions.get("no_such_table")


ROWS = """
| data | source | theta | acc | bound |
|---|---|---|---|---|
| A | ours | 0.5 | 97.5 +- 0.1 | 80.2 +- 0.0 |
| | thesis | | 97.9 +- 0.1 | 80.1 +- 0.1 |
"""
COLUMNS = """
| model | bound % | acc % | thesis bound | thesis acc |
|---|---|---|---|---|
| MPM | 99.1 +- 1.1 | 96.9 | 99.7 | 93.0 |
"""
SPLIT_COLUMN = """
| data | SOCP +ve | SOCP −ve | thesis SOCP +ve / −ve |
|---|---|---|---|
| heart | 15.57 | 2.5 | 14.6 / 3.1 |
"""
BARE = """
| quantity | ours | thesis |
|---|---|---|
| eigenvalue | -1.3589 | -1.3589 |
| moves | 0.0e+00 | 0 (does not move) |
"""
PARENS = """
| data | e E-SOC | m E-SOC |
|---|---|---|
| U | 0.13233 (0.13215) | 92.9 ± 5.0 (TIMEOUT, 8 folds) (94.5) |
"""
SLASH = """
| data | KNN | SVM |
|---|---|---|
| abalone | 71.1±4.7 / 55.7±2.2 | 84.2 / .9953 |
"""


@pytest.mark.parametrize("text, layout, expected", [
    (ROWS, "rows", [("A / acc", 97.5, 97.9), ("A / bound", 80.2, 80.1)]),
    (COLUMNS, "columns", [("MPM / bound %", 99.1, 99.7), ("MPM / acc %", 96.9, 93.0)]),
    (SPLIT_COLUMN, "columns", [("heart / SOCP +ve", 15.57, 14.6),
                               ("heart / SOCP −ve", 2.5, 3.1)]),
    (BARE, "columns", [("eigenvalue / ours", -1.3589, -1.3589), ("moves / ours", 0.0, 0.0)]),
    (PARENS, "parenthesised", [("U / e E-SOC", 0.13233, 0.13215),
                               ("U / m E-SOC", 92.9, 94.5)]),
    (SLASH, "slash", [("abalone / KNN", 71.1, 55.7), ("abalone / SVM", 84.2, 0.9953)]),
    (COLUMNS, None, []),
])
def test_thesis_pairs_of_each_layout(text, layout, expected):
    got = [(p.label, p.ours, p.thesis) for p in thesis_pairs(text, layout)]
    assert got == expected


def test_thesis_pairs_reject_an_unknown_layout():
    with pytest.raises(ValueError, match="THESIS_LAYOUT"):
        thesis_pairs(COLUMNS, "diagonal")


def test_recorded_huang_table_3_1_reads_back_with_the_thesis_beside_ours():
    path = ROOT / "benchmarks" / "results" / "huang_table_3_1.md"
    if not path.exists():
        pytest.skip("not a source checkout")
    pairs = thesis_pairs(path.read_text(), reproductions.get("huang_table_3_1").thesis_layout)
    assert len(pairs) == 6 * 6  # six data sets x six columns
    assert pairs[0] == Pair("Twonorm / MEMPM alpha", 80.6, 80.3)
    text = side_by_side(pairs, limit=3)
    assert "ours - thesis" in text and "+0.3" in text and "and 33 more" in text


def test_parse_tables_skips_prose_and_ragged_rows():
    text = "intro\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 |\n\nprose | not a table\n"
    assert parse_tables(text) == [(["a", "b"], [["1", "2"]])]


def test_figure_of_pairs_and_of_a_table(tmp_path):
    pytest.importorskip("matplotlib")
    with_thesis = tmp_path / "cols.md"
    with_thesis.write_text(COLUMNS + SPLIT_COLUMN)
    png = reproductions.write_figure(with_thesis, "columns", title="pairs")
    assert png == tmp_path / "cols.png" and png.stat().st_size > 5_000
    timings = tmp_path / "times.md"
    timings.write_text("| N | KFDA s | KQPFS s |\n|---|---|---|\n| 500 | 0.1 | 0.2 |\n"
                       "| 1000 | 0.4 | 0.3 |\n| 2000 | 1.6 | 0.9 |\n")
    png = reproductions.write_figure(timings, None, title="table")
    assert png.stat().st_size > 5_000


def test_plot_functions_refuse_empty_input():
    pytest.importorskip("matplotlib")
    from conicml import plot

    with pytest.raises(ValueError, match="no \\(ours, thesis\\) pairs"):
        plot.plot_thesis_agreement([])
    with pytest.raises(ValueError, match="no numeric column"):
        plot.plot_table(["a", "b"], [["x", "y"], ["z", "w"]])
    ax = plot.plot_thesis_agreement([Pair("a", 1.0, 1.1), Pair("b", 500.0, 450.0)])
    assert ax.get_xscale() == "log" and len(ax.lines) == 2  # cells + the diagonal


@pytest.fixture()
def tiny(tmp_path, monkeypatch):
    """A reproduction module outside the package, run through the real runner."""
    module = tmp_path / "tiny_reproduction.py"
    module.write_text(textwrap.dedent('''
        """Tiny reproduction: two cells beside the thesis."""
        import sys

        from conicml.reproductions._harness import write_results

        THESIS_LAYOUT = "columns"

        def main():
            quick = "--quick" in sys.argv[1:]
            write_results("tiny", "| case | acc | thesis acc |\\n|---|---|---|\\n"
                          "| a | 91.0 | 90.0 |\\n| b | 80.5 | 82.0 |\\n", quick)
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CONICML_RESULTS_DIR", str(tmp_path / "results"))
    entry = Reproduction("tiny", "Tiny reproduction", "tiny_reproduction")
    real_get = reproductions.get
    monkeypatch.setattr(reproductions, "get",
                        lambda name: entry if name == "tiny" else real_get(name))
    return tmp_path / "results"


def test_runner_writes_the_table_prints_the_thesis_and_draws_the_figure(tiny, capsys):
    pytest.importorskip("matplotlib")
    assert reproductions.main(["tiny", "--quick"]) == 0
    out = capsys.readouterr().out
    assert (tiny / "tiny_quick.md").exists()
    assert "the thesis's numbers beside ours (2 cells, 2 within the thesis's spread)" in out
    assert "a / acc" in out and "-1.5" in out  # 80.5 - 82.0
    assert (tiny / "tiny_quick.png").stat().st_size > 5_000


def test_runner_without_matplotlib_skips_the_figure_with_a_note(tiny, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert reproductions.main(["tiny"]) == 0
    out = capsys.readouterr().out
    assert "figure skipped: matplotlib is not installed" in out
    assert (tiny / "tiny.md").exists() and not (tiny / "tiny.png").exists()


def test_cli_reproduce_passes_quick_and_no_figure(tiny, capsys):
    assert cli_main(["reproduce", "tiny", "--quick", "--no-figure"]) == 0
    assert "beside ours (2 cells, " in capsys.readouterr().out
    assert (tiny / "tiny_quick.md").exists() and not (tiny / "tiny_quick.png").exists()


@pytest.mark.parametrize("name", NAMES)
def test_every_reproduction_module_imports_with_a_main(name):
    module = reproductions.get(name).load()
    assert callable(module.main)
    assert getattr(module, "THESIS_LAYOUT", "missing") != "missing"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_quick_mode_of_every_reproduction(name, tmp_path, monkeypatch, capfd):
    # the smoke run of each moved module, through the runner (minutes each on 2 cores)
    monkeypatch.setenv("CONICML_RESULTS_DIR", str(tmp_path))
    assert reproductions.main([name, "--quick"]) == 0
    out = capfd.readouterr().out  # a module wanting one BLAS thread runs in a child
    assert f"[{name}]" in out


def test_parenthesised_cells_that_are_not_numbers_beside_numbers_are_skipped():
    text = "| data | acc | chosen |\n|---|---|---|\n| A | 97.1 (97.5) | C=0.3 (10) |\n"
    assert thesis_pairs(text, "parenthesised") == [Pair("A / acc", 97.1, 97.5)]


def test_help_with_a_name_shows_the_reproductions_own_options(tiny, capsys):
    with pytest.raises(SystemExit) as stop:  # argparse's --help exits 0
        reproductions.main(["rodriguez_lujan_fig_4_4", "--help"])
    assert stop.value.code == 0
    assert "--sizes" in capsys.readouterr().out  # an option of that module's parser
    assert reproductions.main(["--help"]) == 0
    assert "--no-figure" in capsys.readouterr().out
