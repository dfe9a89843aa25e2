"""The ARR data versions of the Tables 3.4-3.6 entry."""

import numpy as np
import pytest

import conicml as cm
from conicml.reproductions import rodriguez_lujan_tables_3_4_3_6 as entry


# rows x features and arrhythmia rows, counted from the UCI file (data README: 452 rows,
# class 1 = 245 normal, 22 rows of class 16, 32 rows with a "?" outside column J, 4 of them
# class 16, 30 of them missing T or P; 5 columns hold a "?")
@pytest.mark.parametrize("version, shape, positives", [
    ("402", (402, 278), 165), ("420", (420, 278), 183), ("422", (422, 278), 184),
    ("430", (430, 278), 185), ("452", (452, 278), 207), ("452 x 274", (452, 274), 207)])
def test_arr_versions(version, shape, positives):
    X, y = entry.load_arr(version)
    assert X.shape == shape
    assert int(np.sum(y == 1)) == positives
    assert set(np.unique(y)) == {-1.0, 1.0}


def test_the_previous_version_is_the_bundled_loader():
    X, y = entry.load_arr("420")
    X0, y0 = cm.datasets.load("arrhythmia")
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_imputed_cells_are_nan_and_imputed_on_the_training_fold():
    X, y = entry.load_arr("430")
    assert np.isnan(X).any(axis=1).sum() == 28  # 32 incomplete rows, 4 of class 16
    tr, te = np.arange(0, 430, 2), np.arange(1, 430, 2)
    err = entry._svm_error(X, y, tr, te, "minmax", 1.0)
    assert 0.0 <= err <= 100.0


def test_digits_variants_mimic_mnist_sparsity_and_layout():
    variants = entry.digits_variants()
    names = list(variants)
    assert names[0] == "8x8 (the entry)" and variants[names[0]].shape == (1797, 64)
    sparse = variants[names[1]]
    # the fewest sparsest pixels whose mean sparsity reaches MNIST's 0.8078
    assert np.mean(sparse == 0) <= entry.MNIST_SPARSITY
    assert sparse.shape[1] < 64
    for name in names[2:]:
        assert variants[name].shape == (1797, 784)
        assert variants[name].min() >= 0.0
    bordered = variants[names[2]].reshape(-1, 28, 28)
    assert not bordered[:, :4].any() and not bordered[:, :, -4:].any()
