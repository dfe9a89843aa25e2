"""Seeded linear SVM instances shared by the dcd and svm-ipm tests."""

import numpy as np


def overlapping(n=150, d=6, seed=0):
    """Two overlapping classes of a noisy linear rule with an offset."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.6 * rng.normal(size=n) + 0.4 > 0, 1.0, -1.0)
    return X, y


def structured(seed=1):
    """Two separated clusters plus a few mislabelled points, duplicated rows and a constant
    feature: bounded, free and zero multipliers all occur, and Q is singular."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(1.5, 1.0, size=(40, 3)), rng.normal(-1.5, 1.0, size=(40, 3))])
    y = np.r_[np.ones(40), -np.ones(40)]
    y[[0, 45, 7]] *= -1
    X = np.vstack([X, X[:5]])
    y = np.r_[y, y[:5]]
    return np.column_stack([X, np.ones(len(y))]), y
