"""``conicml.datasets.load_ordinal``: California Housing cut into equal-frequency ranks."""

import numpy as np
import pytest

import conicml as cm


def test_california_housing_ranks():
    X, y = cm.datasets.load_ordinal("california_housing", n_ranks=10)
    assert X.shape == (20640, 8) and X.dtype == np.float64
    assert not np.isnan(X).any()
    assert y.dtype == np.int64 and set(np.unique(y)) == set(range(1, 11))
    counts = np.bincount(y)[1:]
    assert counts.min() >= 0.99 * 2064 and counts.max() <= 1.01 * 2064  # equal frequency
    # ranks are ordered by the target: median income (col 7) rises with the rank on average
    means = [X[y == r, 7].mean() for r in range(1, 11)]
    assert np.all(np.diff(means) > 0)


def test_california_housing_drop_missing_and_binary_contract_untouched():
    X, y = cm.datasets.load_ordinal("california_housing", n_ranks=3, missing="drop")
    assert X.shape == (20433, 8)
    assert "california_housing" not in cm.datasets.names()  # load() stays +-1 only


@pytest.mark.parametrize("kwargs, match", [({"name": "nope"}, "unknown"),
                                          ({"n_ranks": 1}, "n_ranks"),
                                          ({"missing": "zero"}, "missing")])
def test_load_ordinal_bad_input(kwargs, match):
    args = {"name": "california_housing", **kwargs}
    with pytest.raises(ValueError, match=match):
        cm.datasets.load_ordinal(**args)
