"""``m4.with_cost`` and ``qpfs.with_alpha``: the same program at another value, sharing
what does not depend on it (the reference is the program built from scratch)."""

from __future__ import annotations

import numpy as np
import pytest

import conicml as cm
from conicml.exceptions import ProgramError
from conicml.formulations import m4, qpfs


def _data(seed=0, n=80):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None]
    return X, y


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_m4_with_cost_is_m4_at_that_cost(kernel):
    X, y = _data()
    ridge = {} if kernel == "linear" else {"ridge": 1e-3}
    first = m4.m4(X, y, 0.01, kernel=kernel, gamma=0.5, **ridge)
    shared = m4.with_cost(first, 0.1)
    cold = m4.m4(X, y, 0.1, kernel=kernel, gamma=0.5, **ridge)
    assert shared.data["C"] == shared.data["m4"].C == 0.1 and not shared.data["C_auto"]
    assert shared.data["Z"] is first.data["Z"]  # the factors are shared, not recomputed
    a, b = cm.solve(shared), cm.solve(cold)
    assert a.status is b.status is cm.Status.OPTIMAL
    # same program: the same certified objective within the search's tolerance
    assert a.objective == pytest.approx(b.objective, rel=1e-5, abs=1e-7)
    with pytest.raises(ProgramError, match="soft-margin M4"):
        m4.with_cost(m4.m4(X, y, None), 0.1)
    with pytest.raises(ProgramError):
        m4.with_cost(first, 0.0)


def test_qpfs_with_alpha_is_qpfs_at_that_alpha():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 40)
    X = rng.normal(size=(80, 6))
    X[:, 2] += y
    first = qpfs.qpfs(X, y, 0.5)
    shared = qpfs.with_alpha(first, 0.8)
    cold = qpfs.qpfs(X, y, 0.8)
    assert shared.data["alpha"] == shared.data["qp"].alpha == 0.8
    assert shared.data["alpha_hat"] == cold.data["alpha_hat"]
    a, b = cm.solve(shared, "simplex-smo"), cm.solve(cold, "clarabel")
    np.testing.assert_allclose(shared.decode(a)["w"], cold.decode(b)["w"], atol=1e-5)
    with pytest.raises(ProgramError, match="alpha must be"):
        qpfs.with_alpha(first, 1.5)
    with pytest.raises(ProgramError, match="QPFS program"):
        qpfs.with_alpha(m4.m4(*_data(), 0.1), 0.5)
