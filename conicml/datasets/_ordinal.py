"""Ordinal regression data: a regression target cut into ordered ranks 1..r.

Kept apart from :func:`conicml.datasets.load`, whose contract is binary ``+1/-1`` labels.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from ._loaders import _read_text

__all__ = ["load_ordinal", "ordinal_names"]

_CALIFORNIA_COLUMNS = ("longitude", "latitude", "housing_median_age", "total_rooms",
                       "total_bedrooms", "population", "households", "median_income")


def _california(missing: str) -> tuple[np.ndarray, np.ndarray]:
    reader = csv.reader(io.StringIO(_read_text("california-housing.csv")))
    header = next(reader)
    rows = [row for row in reader if row]
    cols = [header.index(c) for c in _CALIFORNIA_COLUMNS]
    target = header.index("median_house_value")
    X = np.array([[float(row[c]) if row[c].strip() else np.nan for c in cols] for row in rows])
    t = np.array([float(row[target]) for row in rows])
    bad = np.isnan(X).any(axis=1)
    if missing == "drop":
        X, t = X[~bad], t[~bad]
    else:
        med = np.nanmedian(X, axis=0)
        X = np.where(np.isnan(X), med[None, :], X)
    return X, t


def ordinal_names() -> list[str]:
    """Names accepted by :func:`load_ordinal`."""
    return ["california_housing"]


def load_ordinal(name: str, n_ranks: int = 10, *,
                 missing: str = "median") -> tuple[np.ndarray, np.ndarray]:
    """Load a bundled regression data set with its target cut into ``n_ranks`` ordered ranks.

    ==================== ========== =========================== ===========================
    name                 shape of X target                      source file
    ==================== ========== =========================== ===========================
    california_housing   20640 x 8  ``median_house_value``      california-housing.csv
    ==================== ========== =========================== ===========================

    ``california_housing`` is the common teaching copy of the StatLib California Housing data
    (seed 003, Tables 4.1 and 5.1): the 8 StatLib columns (longitude, latitude, housing
    median age, total rooms, total bedrooms, population, households, median income) are the
    features; the copy's extra nominal ``ocean_proximity`` is dropped. In this copy 207
    ``total_bedrooms`` cells are blank (StatLib and LIBSVM's ``cadata`` have none):
    ``missing="median"`` (default) fills them with the column median, keeping the thesis's
    20640 points; ``missing="drop"`` drops those rows (20433 points). The target is capped
    at 500001 in 965 rows (as distributed).

    Ranks: equal-frequency binning of the target into ``n_ranks`` bins at its quantiles
    (Chu & Keerthi 2005's convention; the thesis does not state its discretisation); tied
    targets share a bin, so the bins are equal-sized up to ties.

    Parameters
    ----------
    name : str
        One of :func:`ordinal_names`.
    n_ranks : int, default=10
        Number of ranks, >= 2.
    missing : {"median", "drop"}, default="median"

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        Ranks 1..n_ranks, every rank present.

    Raises
    ------
    ValueError
        Unknown name, ``n_ranks`` < 2 or not an integer, unknown ``missing``.
    """
    if name not in ordinal_names():
        raise ValueError(f"unknown ordinal data set {name!r}; valid names are: "
                         f"{', '.join(ordinal_names())}")
    if not (isinstance(n_ranks, (int, np.integer)) and not isinstance(n_ranks, bool)
            and n_ranks >= 2):
        raise ValueError(f"n_ranks must be an integer >= 2, got {n_ranks!r}")
    if missing not in ("median", "drop"):
        raise ValueError(f"missing must be 'median' or 'drop', got {missing!r}")
    X, t = _california(missing)
    edges = np.quantile(t, np.linspace(0.0, 1.0, int(n_ranks) + 1)[1:-1])
    y = np.searchsorted(edges, t, side="right") + 1
    if np.unique(y).size != n_ranks:
        raise ValueError(f"{name}: the target's ties leave fewer than {n_ranks} distinct "
                         "ranks; choose fewer ranks")
    return np.ascontiguousarray(X), y.astype(np.int64)
