"""The benchmarks' results files: one per script, each part under a provenance header."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def harness(monkeypatch, tmp_path):
    if not (BENCHMARKS / "_harness.py").exists():
        pytest.skip("not a source checkout: benchmarks/ is absent")
    spec = importlib.util.spec_from_file_location("_bench_harness", BENCHMARKS / "_harness.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "_bench_harness", module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    return module


def test_a_section_is_replaced_in_place_and_the_rest_kept(harness, tmp_path):
    harness.write_results("study", "# main\n\n| a |\n|---|\n| 1 |\n")
    harness.write_results("study", "first large run\n## a heading of the table's own\n",
                          section="large")
    harness.write_results("study", "shuttle run\n", section="shuttle")
    harness.write_results("study", "second large run\n", section="large")
    harness.write_results("study", "# main again\n")
    main, sections = harness._read_parts(tmp_path / "study.md")
    assert "# main again" in main and "# main\n" not in main
    assert list(sections) == ["large", "shuttle"]
    assert "second large run" in sections["large"] and "first" not in sections["large"]
    assert "shuttle run" in sections["shuttle"]


def test_every_part_opens_with_the_provenance_header(harness, tmp_path):
    harness.write_results("study", "body\n")
    harness.write_results("study", "other\n", section="s")
    text = (tmp_path / "study.md").read_text()
    for field in ("command", "commit", "date", "cpu", "cores", "load average",
                  "host speed (probe)"):
        assert text.count(f"> {field}") == 2, field


def test_the_host_speed_probe_reads_two_positive_rates():
    import re

    from conicml._utils.provenance import host_speed

    # a small probe: the format and that both rates are measured, not their size (hosts differ)
    text = host_speed(loop=10_000, size=64, repeat=1)
    match = re.fullmatch(r"Python loop ([0-9.]+) M iterations/s, float64 matrix product "
                         r"\(n = 64\) ([0-9]+) GFLOP/s(, AVX-512 (yes|no))?", text)
    assert match, text
    assert float(match.group(1)) > 0.0


def test_a_checkout_is_dirty_for_changed_code_not_for_changed_records(tmp_path):
    import shutil
    import subprocess

    from conicml._utils.provenance import RECORDS_PATH, provenance

    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / RECORDS_PATH).mkdir(parents=True)
    (tmp_path / RECORDS_PATH / "entry.md").write_text("old record\n")
    (tmp_path / "module.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "first")
    assert not provenance("cmd", root=tmp_path)["commit"].endswith("-dirty")
    # a record re-written by an earlier entry's run in this checkout: the code is the commit's
    (tmp_path / RECORDS_PATH / "entry.md").write_text("new record\n")
    commit = provenance("cmd", root=tmp_path)["commit"]
    assert commit != "unknown" and not commit.endswith("-dirty")
    (tmp_path / "module.py").write_text("x = 2\n")
    assert provenance("cmd", root=tmp_path)["commit"].endswith("-dirty")


def test_no_variant_results_files_beside_the_current_one():
    results = BENCHMARKS / "results"
    if not results.is_dir():
        pytest.skip("not a source checkout: benchmarks/ is absent")
    variants = sorted(p.name for p in results.glob("*.md")
                      if any(tag in p.stem for tag in ("_quiet", "_lowload", "_before", "_m16")))
    assert not variants, f"earlier runs live in git history, not beside the file: {variants}"
