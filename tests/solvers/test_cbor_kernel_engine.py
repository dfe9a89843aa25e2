"""The compiled kernel path of ``cbor-smo`` (Gaussian kernel over the cluster means).

``engine="numba"`` runs the NumPy kernel loop's pair updates compiled
(:func:`conicml.solvers._cbor_numba.run_kernel`), with its kernel columns computed by the
same NumPy code. Checked on random and structured Gaussian instances: against the NumPy
loop (same pairs, same answer: objective to 1e-10 relative), against the generic backends
that accept the CBOR dual (objective at the tolerance of ``tolerances.py``) and against
clarabel on the primal (4.3)/(4.4) (decoded scores and thresholds).
"""

import numpy as np
import ordinal_clusters
import pytest
from numpy.testing import assert_allclose
from ordinal_clusters import random_clusters
from solver_report import own

import conicml as cm
from conicml.formulations import ordinal

from tolerances import obj_rtol

pytest.importorskip("numba")

DUAL = "socp.chance.cbor.dual"
SMO_TOL = 1e-7  # KKT violation the tests run cbor-smo at (tolerances.py row "cbor-smo")
GENERIC = [s for s in cm.solvers.available(DUAL) if s in ("clarabel", "ecos")]


def duplicated_clusters(seed=12):
    """40 clusters plus 8 exact copies and 4 copies of a mean under the next rank: equal
    kernel columns, pairs with curvature a = 0."""
    return ordinal_clusters.duplicated_clusters(seed, 40, 3, 8)


# name -> (clusters, W, gamma)
INSTANCES = {
    "k100-d5-r4": (lambda: random_clusters(4, 100, 5, 4), 4.0, 0.1),
    "k300-d10-r3": (lambda: random_clusters(5, 300, 10, 3), 4.0, 0.1),
    # ranks overlapping (sep 0.5): many tied thresholds, D_i > 0
    "k150-d4-r6 overlapping": (lambda: random_clusters(30, 150, 4, 6, sep=0.5), 3.0, 0.2),
    # wide kernel: K close to the all-ones matrix (nearly rank one), the smoothing's case
    "k120-d3-r4 gamma 1e-3": (lambda: random_clusters(31, 120, 3, 4), 8.0, 1e-3),
    # narrow kernel: K close to the identity
    "k120-d3-r4 gamma 5": (lambda: random_clusters(32, 120, 3, 4), 4.0, 5.0),
    "duplicates": (duplicated_clusters, 3.0, 0.3),
    "one cluster per rank": (lambda: random_clusters(33, 5, 3, 5, sep=1.0), 2.0, 0.5),
}

_CACHE: dict = {}


def program(name, form="dual"):
    make, W, gamma = INSTANCES[name]
    return ordinal.cbor(make(), W=W, accuracy=0.6, kernel="rbf", gamma=gamma, form=form)


def cached(key, compute):
    if key not in _CACHE:
        _CACHE[key] = compute()
    return _CACHE[key]


def smo(name, engine):
    return cached((name, engine), lambda: cm.solve(program(name), "cbor-smo", tol=SMO_TOL,
                                                   engine=engine))


@pytest.mark.parametrize("name", list(INSTANCES))
def test_compiled_and_numpy_kernel_loops_reach_the_same_point(name):
    fast, slow = smo(name, "numba"), smo(name, "numpy")
    assert fast.extras["engine"] == "numba" and slow.extras["engine"] == "numpy"
    assert fast.extras["method"] == slow.extras["method"] == "kernel"
    assert fast.status is slow.status is cm.Status.OPTIMAL, (fast.message, slow.message)
    # the same algorithm on the same columns (computed by the same NumPy code), with the
    # loop's sums in the same order and no BLAS inside the loop: the same pairs
    assert fast.iterations == slow.iterations
    assert_allclose(fast.objective, slow.objective, rtol=1e-10)
    for key in ("alpha", "alpha_star"):
        assert_allclose(fast.values[key], slow.values[key], rtol=0, atol=1e-8)
    assert fast.extras["kernel_columns"] == slow.extras["kernel_columns"]
    # conicml's certificate, recomputed from the program's data
    assert fast.residuals.source == "recomputed"
    assert own(fast).dual <= SMO_TOL and own(fast).primal <= 1e-9
    assert own(fast).gap <= 1e-6 * max(1.0, fast.objective)


@pytest.mark.parametrize("solver", GENERIC)
@pytest.mark.parametrize("name", list(INSTANCES))
def test_compiled_kernel_loop_agrees_with_generic_backends(name, solver):
    prog, sol = program(name), smo(name, "numba")
    other = cached((name, solver), lambda: cm.solve(prog, solver))
    assert other.ok
    assert_allclose(sol.objective, other.objective, rtol=obj_rtol(solver))
    # decoded models: against the backend's dual decoded the same way (1e-4), and against
    # clarabel's primal (4.3)/(4.4) at 1e-3, that primal's own accuracy (on the narrow
    # kernel, K close to I, all three dual solvers sit 1.5e-4 from it, 2e-5 from each other)
    model = prog.decode(sol)
    ref = cached((name, "primal"), lambda: program(name, "primal").decode(
        cm.solve(program(name, "primal"), "clarabel")))
    scale = max(1.0, np.abs(ref["scores"]).max())
    for other_model, atol in ((prog.decode(other), 1e-4), (ref, 1e-3)):
        assert_allclose(model["scores"], other_model["scores"], atol=atol * scale)
        assert_allclose(model["thresholds"], other_model["thresholds"], atol=atol * scale)


@pytest.mark.parametrize("selection", ["second-order", "max-violating"])
def test_the_first_pairs_are_the_numpy_loops_pairs(selection):
    """Each iteration picks the same pair and step: the points after 1..60 updates agree."""
    prog = program("k150-d4-r6 overlapping")
    for m in (1, 7, 60):
        a, b = (cm.solve(prog, "cbor-smo", engine=e, max_iter=m, selection=selection)
                for e in ("numba", "numpy"))
        assert a.iterations == b.iterations == m
        for key in ("alpha", "alpha_star"):
            assert_allclose(a.values[key], b.values[key], rtol=0, atol=1e-12)


def test_a_small_column_cache_evicts_and_gives_the_same_answer():
    """cache_size 0.05 MB holds 21 of the 300 columns: least recently used out first, in
    both loops the same columns kept and recomputed."""
    prog = program("k300-d10-r3")
    a, b = (cm.solve(prog, "cbor-smo", tol=SMO_TOL, engine=e, cache_size=0.05)
            for e in ("numba", "numpy"))
    assert a.status is b.status is cm.Status.OPTIMAL
    assert_allclose(a.objective, b.objective, rtol=1e-10)
    assert a.extras["kernel_columns"] == b.extras["kernel_columns"]
    assert a.extras["kernel_columns"] > smo("k300-d10-r3", "numba").extras["kernel_columns"]
    assert_allclose(a.objective, smo("k300-d10-r3", "numba").objective, rtol=1e-9)


def test_compiled_kernel_loop_limits_callback_and_warm_start():
    prog = program("k100-d5-r4")
    capped = cm.solve(prog, "cbor-smo", engine="numba", max_iter=3)
    assert capped.status is cm.Status.USER_LIMIT and capped.iterations == 3
    assert capped.extras["stop_reason"] == 1 and own(capped).primal <= 1e-12
    timed = cm.solve(prog, "cbor-smo", engine="numba", time_limit=1e-12)
    assert timed.status is cm.Status.USER_LIMIT and timed.iterations == 0
    seen = []

    def record(result):
        seen.append(result.iteration)
        if result.iteration >= 25:
            raise StopIteration

    stopped = cm.solve(prog, "cbor-smo", engine="numba", callback=record)
    assert stopped.status is cm.Status.USER_LIMIT and stopped.iterations == 25
    assert seen == list(range(1, 26))  # called after every pair update
    done = smo("k100-d5-r4", "numba")
    again = cm.solve(prog, "cbor-smo", engine="numba", tol=SMO_TOL, smoothing=False,
                     x0=(done.values["alpha"], done.values["alpha_star"]))
    assert again.status is cm.Status.OPTIMAL and again.iterations == 0
    assert_allclose(again.objective, done.objective, rtol=1e-12)
