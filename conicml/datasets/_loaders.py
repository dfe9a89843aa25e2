"""Loaders for the bundled UCI-derived binary classification data sets.

Every loader parses a plain-text file shipped in ``conicml/datasets/data`` (read through
:mod:`importlib.resources`, so the files are found in an installed wheel as well) exactly as it
is distributed, and returns freshly built arrays: nothing is cached, so callers may modify the
result freely.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Callable
from importlib.resources import files

import numpy as np

__all__ = ["load", "names"]

_PACKAGE = "conicml.datasets"

Dataset = tuple[np.ndarray, np.ndarray]


# --------------------------------------------------------------------------- file helpers


def _read_text(filename: str) -> str:
    """Return the text of the bundled data file ``data/<filename>``."""
    return (files(_PACKAGE) / "data" / filename).read_text(encoding="utf-8")


def _read_rows(filename: str, n_fields: int, quotechar: str = '"') -> list[list[str]]:
    """Parse a header-less comma-separated file into rows of stripped strings.

    Blank lines (e.g. a trailing newline) are skipped. Every other row must have exactly
    ``n_fields`` fields; anything else means the bundled file is not the expected one.
    """
    reader = csv.reader(io.StringIO(_read_text(filename), newline=""), quotechar=quotechar)
    rows = []
    for lineno, row in enumerate(reader, start=1):
        if not row or all(not field.strip() for field in row):
            continue
        if len(row) != n_fields:
            raise ValueError(
                f"{filename}, line {lineno}: expected {n_fields} fields, got {len(row)}"
            )
        rows.append([field.strip() for field in row])
    return rows


def _labels(values: list[str], positive: str, negative: str | None, filename: str) -> np.ndarray:
    """Map string labels to +1.0 (``positive``) / -1.0 (anything else, or ``negative``).

    If ``negative`` is given, a label that is neither ``positive`` nor ``negative`` raises.
    """
    if negative is not None:
        unexpected = sorted(set(values) - {positive, negative})
        if unexpected:
            raise ValueError(f"{filename}: unexpected class labels {unexpected}")
    return np.where(np.asarray(values) == positive, 1.0, -1.0)


def _floats(rows: list[list[str]]) -> np.ndarray:
    """Convert a list of rows of numeric strings into a float64 2-D array."""
    return np.array(rows, dtype=np.float64).reshape(len(rows), -1)


# --------------------------------------------------------------------------- loaders


def _load_breast_cancer() -> Dataset:
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer()
    malignant = list(bunch.target_names).index("malignant")
    X = np.array(bunch.data, dtype=np.float64)
    y = np.where(bunch.target == malignant, 1.0, -1.0)
    return X, y


def _load_wisconsin() -> Dataset:
    filename = "breast-cancer-wisconsin.data"
    rows = [row for row in _read_rows(filename, 11) if "?" not in row]
    X = _floats([row[1:10] for row in rows])  # column 0 is the sample id
    y = _labels([row[10] for row in rows], "4", "2", filename)
    return X, y


def _load_ionosphere() -> Dataset:
    filename = "ionosphere.csv"
    rows = _read_rows(filename, 35)
    return _floats([row[:34] for row in rows]), _labels([r[34] for r in rows], "g", "b", filename)


def _load_pima() -> Dataset:
    filename = "pima-indians-diabetes.csv"
    rows = _read_rows(filename, 9)
    return _floats([row[:8] for row in rows]), _labels([r[8] for r in rows], "1", "0", filename)


def _load_sonar() -> Dataset:
    filename = "sonar.csv"
    rows = _read_rows(filename, 61)
    return _floats([row[:60] for row in rows]), _labels([r[60] for r in rows], "M", "R", filename)


def _load_vote() -> Dataset:
    filename = "vote.arff"
    attributes: list[str] = []
    data: list[list[str]] = []
    in_data = False
    for lineno, raw in enumerate(_read_text(filename).splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if not in_data:
            keyword = line.split(None, 1)[0].lower()
            if keyword == "@attribute":
                attributes.append(line)
            elif keyword == "@data":
                in_data = True
            continue
        fields = [field.strip().strip("'\"") for field in next(csv.reader([line]))]
        if len(fields) != len(attributes):
            raise ValueError(
                f"{filename}, line {lineno}: expected {len(attributes)} fields, got {len(fields)}"
            )
        data.append(fields)
    if len(attributes) != 17 or "class" not in attributes[-1].lower():
        raise ValueError(f"{filename}: expected 16 vote attributes followed by the class")
    rows = [row for row in data if "?" not in row]
    votes = [row[:16] for row in rows]
    unexpected = sorted({v for row in votes for v in row} - {"y", "n"})
    if unexpected:
        raise ValueError(f"{filename}: unexpected attribute values {unexpected}")
    X = np.where(np.array(votes, dtype=object).reshape(len(votes), 16) == "y", 1.0, -1.0)
    y = _labels([row[16] for row in rows], "democrat", "republican", filename)
    return X, y


def _load_heart() -> Dataset:
    rows = [row for row in _read_rows("processed.cleveland.data", 14) if "?" not in row]
    values = _floats(rows)
    return values[:, :13].copy(), np.where(values[:, 13] > 0, 1.0, -1.0)


def _load_mammography() -> Dataset:
    filename = "mammography.csv"
    rows = _read_rows(filename, 7, quotechar="'")  # the label is written '1' / '-1'
    return _floats([row[:6] for row in rows]), _labels([r[6] for r in rows], "1", "-1", filename)


_SEXES = ("M", "F", "I")


def _abalone(rings: int) -> Dataset:
    filename = "abalone.csv"
    rows = _read_rows(filename, 9)
    sex = [row[0] for row in rows]
    unexpected = sorted(set(sex) - set(_SEXES))
    if unexpected:
        raise ValueError(f"{filename}: unexpected sex values {unexpected}")
    one_hot = np.array([[float(s == level) for level in _SEXES] for s in sex], dtype=np.float64)
    numeric = _floats([row[1:9] for row in rows])
    X = np.hstack([one_hot, numeric[:, :7]])
    y = np.where(numeric[:, 7] == rings, 1.0, -1.0)
    return X, y


def _load_abalone19() -> Dataset:
    return _abalone(19)


def _load_abalone7() -> Dataset:
    return _abalone(7)


def _load_shuttle() -> Dataset:
    # Statlog Shuttle training file (shuttle.trn, comma-separated, no header), stored gzipped;
    # the binary task of seed 001 (Tables 5.2-5.5) is class 1 vs the other six classes
    filename = "shuttle.trn.gz"
    raw = gzip.decompress((files(_PACKAGE) / "data" / filename).read_bytes()).decode("ascii")
    rows = [line.split(",") for line in raw.splitlines() if line.strip()]
    if any(len(row) != 10 for row in rows):
        raise ValueError(f"{filename}: expected 10 comma-separated fields per line")
    values = _floats(rows)
    return values[:, :9].copy(), np.where(values[:, 9] == 1.0, 1.0, -1.0)


def _load_banana() -> Dataset:
    # KEEL's banana.dat: header lines start with '@', then "x1,x2,label" with label -1.0 / 1.0
    filename = "banana.dat"
    rows = [line.split(",") for line in _read_text(filename).splitlines()
            if line.strip() and not line.lstrip().startswith("@")]
    if any(len(row) != 3 for row in rows):
        raise ValueError(f"{filename}: expected 3 comma-separated fields per data line")
    labels = [row[2].strip() for row in rows]
    return _floats([row[:2] for row in rows]), _labels(labels, "1.0", "-1.0", filename)


_LOADERS: dict[str, Callable[[], Dataset]] = {
    "abalone19": _load_abalone19,
    "abalone7": _load_abalone7,
    "banana": _load_banana,
    "breast_cancer": _load_breast_cancer,
    "heart": _load_heart,
    "ionosphere": _load_ionosphere,
    "mammography": _load_mammography,
    "pima": _load_pima,
    "shuttle": _load_shuttle,
    "sonar": _load_sonar,
    "vote": _load_vote,
    "wisconsin": _load_wisconsin,
}


# --------------------------------------------------------------------------- public API


def names() -> list[str]:
    """Return the names accepted by :func:`load`, sorted alphabetically.

    Returns
    -------
    list of str
        A new list on every call.
    """
    return sorted(_LOADERS)


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Load a bundled binary classification data set.

    Labels are mapped to ``+1.0`` for the positive class and ``-1.0`` for every other class.
    Features are returned as parsed, without scaling or imputation.

    ============= ========== ================================= ============================
    name          shape of X positive class (+1)               source file
    ============= ========== ================================= ============================
    abalone19     4177 x 10  rings == 19 (32 rows)             abalone.csv
    abalone7      4177 x 10  rings == 7 (391 rows)             abalone.csv
    banana        5300 x 2   ``1.0`` (2376 rows)               banana.dat (KEEL)
    breast_cancer 569 x 30   malignant (212 rows)              scikit-learn (WDBC)
    heart         297 x 13   disease, ``num > 0`` (137 rows)   processed.cleveland.data
    ionosphere    351 x 34   ``g``, good return (225 rows)     ionosphere.csv
    mammography   11183 x 6  ``'1'``, calcification (260 rows) mammography.csv
    pima          768 x 8    ``1``, diabetic (268 rows)        pima-indians-diabetes.csv
    shuttle       43500 x 9  class 1 (34108 rows)              shuttle.trn.gz (Statlog)
    sonar         208 x 60   ``M``, mine (111 rows)            sonar.csv
    vote          232 x 16   democrat (124 rows)               vote.arff
    wisconsin     683 x 9    malignant, class 4 (239 rows)     breast-cancer-wisconsin.data
    ============= ========== ================================= ============================

    Notes per data set:

    * ``abalone19`` / ``abalone7``: columns 0-2 one-hot encode the sex in the order M, F, I;
      columns 3-9 are length, diameter, height, whole, shucked, viscera and shell weight.
      The rings count (the label source) is not a feature.
    * ``heart``: the 6 rows containing ``?`` are dropped (303 -> 297).
    * ``pima``: zeros stand for missing values in several columns (as distributed); they are
      kept.
    * ``vote``: each vote is ``y`` -> ``+1.0``, ``n`` -> ``-1.0``; the 203 rows containing ``?``
      are dropped (435 -> 232).
    * ``wisconsin``: the sample-id column is dropped, as are the 16 rows containing ``?``
      (699 -> 683).
    * ``ionosphere``: feature 1 is constant (all zeros) in the distributed file.
    * ``shuttle``: the Statlog training file only (its test file is not bundled: use
      cross-validation); class 1 vs the rest, as in seed 001 Table 5.2.
    * ``banana``: the 2-D Ratsch benchmark as distributed by KEEL (seed 001 Fig 5.5).

    Parameters
    ----------
    name : str
        One of :func:`names`.

    Returns
    -------
    X : numpy.ndarray of shape (n_samples, n_features), dtype float64
        Feature matrix, freshly allocated on every call.
    y : numpy.ndarray of shape (n_samples,), dtype float64
        Labels, exactly ``+1.0`` or ``-1.0``.

    Raises
    ------
    ValueError
        If ``name`` is not a known data set.
    """
    loader = _LOADERS.get(name) if isinstance(name, str) else None
    if loader is None:
        raise ValueError(f"unknown data set {name!r}; valid names are: {', '.join(names())}")
    X, y = loader()
    return np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
