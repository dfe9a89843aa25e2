"""``smo-or``'s two loops (compiled pair steps, pure NumPy) and its Gram-matrix input.

References: the NumPy loop is the reference of the compiled one (the same iteration; the
tests hold the iterates equal); both, and a program built with its Gram matrix, are
checked against Clarabel on the same program. Tolerances: the ``"smo-or"`` rows of
``tests/tolerances.py``.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import conicml as cm
from conicml.exceptions import ProgramError
from conicml.formulations.svor_dual import svor_dual
from conicml.formulations.svor_implicit import svorim_dual
from conicml.kernels import make_kernel
from conicml.solution import Status

from tolerances import obj_rtol

SMO_TOL = 1e-7  # the KKT violation the tolerances.py row is stated at

BUILDERS = {"explicit": svor_dual, "implicit": svorim_dual}


def ordinal_data(seed, m, dim=4, r=4, noise=0.8):
    """Seeded latent-linear ordinal data with overlapping ranks (many bounded multipliers)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, dim))
    s = X @ rng.normal(size=dim) + noise * rng.normal(size=m)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, r + 1)[1:-1])) + 1
    return X, y


def gram_of(X, kernel="rbf", gamma=0.3):
    kern = make_kernel(kernel, X, gamma=gamma)
    return np.asfortranarray(kern.gram(X))


@pytest.mark.parametrize("variant", ["explicit", "implicit"])
@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_compiled_steps_match_the_numpy_loop_and_clarabel(variant, shrinking, C):
    pytest.importorskip("numba")
    X, y = ordinal_data(0, 150)
    prog = BUILDERS[variant](X, y, C=C, kernel="rbf", gamma=0.3)
    options = {"tol": SMO_TOL, "shrinking": shrinking}
    fast = cm.solve(prog, "smo-or", engine="numba", **options)
    ref = cm.solve(prog, "smo-or", engine="numpy", **options)
    assert fast.extras["engine"] == "numba" and ref.extras["engine"] == "numpy"
    assert fast.status is Status.OPTIMAL and ref.status is Status.OPTIMAL
    # the same iteration: the same number of pair steps and the same point (round-off)
    assert fast.iterations == ref.iterations
    assert_allclose(fast.objective, ref.objective, rtol=1e-12)
    assert_allclose(fast.values["alpha"], ref.values["alpha"], atol=1e-9 * C)
    clarabel = cm.solve(prog, "clarabel")
    assert_allclose(fast.objective, clarabel.objective, rtol=obj_rtol("smo-or"))


def test_compiled_steps_with_a_two_column_cache_and_a_callback():
    pytest.importorskip("numba")
    X, y = ordinal_data(1, 120)
    prog = svor_dual(X, y, C=10.0, kernel="rbf", gamma=0.3)
    ref = cm.solve(prog, "smo-or", engine="numpy", tol=SMO_TOL)
    # two slots: nearly every column is recomputed, the least recently used slot reused
    tiny = cm.solve(prog, "smo-or", engine="numba", tol=SMO_TOL, cache_size=1e-6)
    assert tiny.status is Status.OPTIMAL and tiny.extras["kernel_columns"] > 120
    assert_allclose(tiny.objective, ref.objective, rtol=1e-12)
    # a callback sees every step: the steps run in the NumPy loop
    seen = []
    watched = cm.solve(prog, "smo-or", engine="numba", tol=SMO_TOL,
                       callback=lambda info: seen.append(info.iteration))
    assert len(seen) == watched.iterations
    assert_allclose(watched.objective, ref.objective, rtol=1e-12)


@pytest.mark.parametrize("variant", ["explicit", "implicit"])
@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_a_program_with_its_gram_matrix_has_the_same_optimum(variant, engine):
    if engine == "numba":
        pytest.importorskip("numba")
    X, y = ordinal_data(2, 140)
    build = BUILDERS[variant]
    plain = build(X, y, C=5.0, kernel="rbf", gamma=0.3)
    held = build(X, y, C=5.0, kernel="rbf", gamma=0.3, gram=gram_of(X))
    with_gram = cm.solve(held, "smo-or", engine=engine, tol=SMO_TOL)
    assert with_gram.status is Status.OPTIMAL  # certified from the program's own data
    assert with_gram.extras["kernel_columns"] == 0  # every column read from the matrix
    reference = cm.solve(plain, "clarabel")
    assert_allclose(with_gram.objective, reference.objective, rtol=obj_rtol("smo-or"))
    # the decoded models agree: the same scores and thresholds as without the matrix
    a, b = held.decode(with_gram), plain.decode(cm.solve(plain, "smo-or", tol=SMO_TOL))
    assert_allclose(a["scores"], b["scores"], atol=1e-4 * np.max(np.abs(b["scores"])))


@pytest.mark.parametrize("gram, match", [
    (np.eye(5), "shape"),
    ("nan", "NaN"),
    ("other gamma", "not the Gram matrix"),
])
def test_a_wrong_gram_matrix_is_refused(gram, match):
    X, y = ordinal_data(3, 30)
    if isinstance(gram, str) and gram == "nan":
        gram = gram_of(X)
        gram[3, 4] = np.nan
    elif isinstance(gram, str):
        gram = gram_of(X, gamma=0.31)  # the program's kernel has gamma 0.3
    for build in BUILDERS.values():
        with pytest.raises(ProgramError, match=match):
            build(X, y, C=1.0, kernel="rbf", gamma=0.3, gram=gram)


@pytest.mark.parametrize("variant", ["explicit", "implicit"])
def test_with_cost_is_the_program_built_at_that_cost(variant):
    from conicml.formulations.svor_dual import with_cost

    X, y = ordinal_data(4, 90)
    build = BUILDERS[variant]
    first = build(X, y, C=1.0, kernel="rbf", gamma=0.3, gram=gram_of(X))
    moved = with_cost(first, 7.0)
    fresh = build(X, y, C=7.0, kernel="rbf", gamma=0.3)
    assert moved.kind == fresh.kind and moved.data["svor"].C == 7.0
    assert moved.data["svor"].gram is first.data["svor"].gram  # not copied, not re-checked
    # the same optimum as the program built at C = 7 (independent solver: clarabel)
    got = cm.solve(moved, "smo-or", tol=SMO_TOL)
    # OPTIMAL only with conicml's recomputed certificate of the moved program's own data
    assert got.status is Status.OPTIMAL and got.residuals.source == "recomputed"
    assert_allclose(got.objective, cm.solve(fresh, "clarabel").objective,
                    rtol=obj_rtol("smo-or"))
    assert first.data["C"] == 1.0  # the first program is left as it was
    with pytest.raises(ProgramError, match="C"):
        with_cost(first, 0.0)
    with pytest.raises(ProgramError, match="SVOR dual program"):
        with_cost(cm.formulations.svm.soft_margin(X, np.sign(y - 2.5), 1.0), 2.0)


def test_the_time_limit_is_read_at_every_column_fetch(monkeypatch):
    pytest.importorskip("numba")
    from conicml.solvers._driver import Driver

    X, y = ordinal_data(2, 300)
    prog = svor_dual(X, y, C=100.0, kernel="rbf", gamma=0.3)
    # two cache slots: the compiled steps return for a column nearly every step
    full = cm.solve(prog, "smo-or", engine="numba", tol=SMO_TOL, cache_size=1e-6)
    assert full.status is Status.OPTIMAL and full.iterations > 1000
    # a clock that runs out at its second reading (the first is before any step)
    readings = []

    def out_of_time(self):
        readings.append(self.elapsed)
        return len(readings) > 1

    monkeypatch.setattr(Driver, "out_of_time", out_of_time)
    timed = cm.solve(prog, "smo-or", engine="numba", tol=SMO_TOL, cache_size=1e-6,
                     time_limit=60.0)
    # stopped at the first column fetch, not at the next checkpoint (1 000 steps)
    assert timed.status is Status.USER_LIMIT and timed.iterations < 10
    assert "time limit" in timed.message
