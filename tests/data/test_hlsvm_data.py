"""The bundled H-LSVM data (seed 001 ch. 5): Shuttle (class 1 vs rest) and banana."""

import numpy as np

from conicml.datasets import load


def test_shuttle_rows_and_classes():
    X, y = load("shuttle")
    # first line of the Statlog shuttle.trn file: 50,21,77,0,28,0,27,48,22,2 (class 2)
    np.testing.assert_array_equal(X[0], [50, 21, 77, 0, 28, 0, 27, 48, 22])
    assert y[0] == -1.0
    # README / Statlog: 34 108 of 43 500 rows are class 1 (78.4 %)
    assert X.shape == (43500, 9) and int((y > 0).sum()) == 34108


def test_banana_rows_and_classes():
    X, y = load("banana")
    # first data line of KEEL's banana.dat: 1.14,-0.114,-1.0
    np.testing.assert_allclose(X[0], [1.14, -0.114])
    assert y[0] == -1.0
    assert X.shape == (5300, 2) and int((y > 0).sum()) == 2376
