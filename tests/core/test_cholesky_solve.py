"""``conicml._utils.linalg.cholesky_solve``: a drop-in for ``scipy.linalg.cho_solve``."""

import numpy as np
import pytest
from scipy.linalg import cho_factor

from conicml._utils.linalg import cholesky_solve


@pytest.mark.parametrize("n", [1, 7, 60])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("order", ["F", "C"])
def test_a_vector_is_solved_as_numpy_solves_it(n, lower, order):
    # against numpy.linalg.solve (an LU solve, independent of the factor), for either
    # triangle and a factor in either memory order; the factor's other triangle holds
    # garbage, which must not be read
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n))
    K = A @ A.T + n * np.eye(n)
    c, low = cho_factor(K, lower=lower)
    other = np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)
    c[other] = np.nan
    c = np.array(c, order=order)
    b = rng.standard_normal(n)
    np.testing.assert_allclose(cholesky_solve((c, low), b), np.linalg.solve(K, b),
                               rtol=1e-10, atol=1e-12)


def test_several_right_hand_sides_and_other_dtypes_go_to_cho_solve():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((9, 9))
    K = A @ A.T + 9 * np.eye(9)
    factor = cho_factor(K, lower=True)
    B = rng.standard_normal((9, 3))
    np.testing.assert_allclose(cholesky_solve(factor, B), np.linalg.solve(K, B), rtol=1e-10)
    ints = np.arange(9)
    np.testing.assert_allclose(cholesky_solve(factor, ints), np.linalg.solve(K, ints),
                               rtol=1e-10)
