"""The linear path of ``cbor-smo`` (issue 14): z = sum_j v_j mu_j kept explicitly.

Every path (``method="linear"`` with the compiled and the NumPy loop, ``method="kernel"``)
is checked against the generic backends that accept the CBOR dual (registry-parametrized)
on random and structured instances: several cluster counts, d > k and d < k, duplicate
clusters, one cluster per rank. References: the interior-point backends on the same dual
program (objective) and clarabel on the primal (4.3) (decoded w, thresholds, scores).
"""

import importlib.util
import sys

import numpy as np
import ordinal_clusters
import pytest
from numpy.testing import assert_allclose
from ordinal_clusters import random_clusters
from solver_report import own

import conicml as cm
from conicml._utils.engines import resolve_engine
from conicml.exceptions import OptionError
from conicml.formulations import ordinal
from conicml.solvers import cbor_smo

from tolerances import obj_rtol

DUAL = "socp.chance.cbor.dual"
SMO_TOL = 1e-7  # KKT violation the tests run cbor-smo at (tolerances.py row "cbor-smo")
HAS_NUMBA = importlib.util.find_spec("numba") is not None
ENGINES = ["numba", "numpy"] if HAS_NUMBA else ["numpy"]
GENERIC = [s for s in cm.solvers.available(DUAL) if s not in ("cbor-smo", "scs")]


def duplicated_clusters(seed=11):
    """30 clusters plus 10 exact copies (same mean, sigma, rank) and 4 copies of a mean
    under the next rank: pairs with a = ||mu_l - mu_u||^2 = 0."""
    return ordinal_clusters.duplicated_clusters(seed, 30, 4, 10)


# name -> (clusters, W)
INSTANCES = {
    "k40-d3-r3": (lambda: random_clusters(20, 40, 3, 3), 4.0),
    "k150-d8-r5": (lambda: random_clusters(21, 150, 8, 5), 4.0),
    "k400-d5-r4 (d << k)": (lambda: random_clusters(22, 400, 5, 4), 3.0),
    "k12-d40-r3 (d > k)": (lambda: random_clusters(23, 12, 40, 3, sep=1.0), 2.0),
    "duplicates": (duplicated_clusters, 3.0),
    "one cluster per rank": (lambda: random_clusters(24, 4, 3, 4, sep=1.0), 2.0),
}

_CACHE: dict = {}


def program(name, form="dual"):
    make, W = INSTANCES[name]
    return ordinal.cbor(make(), W=W, accuracy=0.6, kernel="linear", form=form)


def reference(name, solver):
    key = (name, solver)
    if key not in _CACHE:
        _CACHE[key] = cm.solve(program(name), solver)
    return _CACHE[key]


def primal_model(name):
    key = (name, "primal")
    if key not in _CACHE:
        prog = program(name, "primal")
        _CACHE[key] = prog.decode(cm.solve(prog, "clarabel"))
    return _CACHE[key]


@pytest.mark.parametrize("solver", GENERIC)
@pytest.mark.parametrize("path", [(m, e) for m in ("linear", "kernel") for e in ENGINES],
                         ids=lambda p: "-".join(p))
@pytest.mark.parametrize("name", list(INSTANCES))
def test_linear_path_agrees_with_generic_backends(name, path, solver):
    method, engine = path
    prog = program(name)
    sol = cm.solve(prog, "cbor-smo", tol=SMO_TOL, method=method, engine=engine)
    assert sol.status is cm.Status.OPTIMAL, sol.message
    assert sol.extras["method"] == method and sol.extras["engine"] == engine
    assert (sol.extras["kernel_columns"] == 0) == (method == "linear")
    # the solver's certificate and conicml's recomputed one
    assert own(sol).dual <= SMO_TOL and own(sol).primal <= 1e-9
    assert own(sol).gap <= 1e-6 * max(1.0, sol.objective)
    assert sol.residuals.source == "recomputed"
    other = reference(name, solver)
    assert other.ok
    assert_allclose(sol.objective, other.objective, rtol=obj_rtol(solver))
    # the decoded model against clarabel's primal (4.3): w = (W / rho) z, (4.6)/(5.2)
    ref = primal_model(name)
    model = prog.decode(sol)
    scale = max(1.0, np.abs(ref["scores"]).max())
    assert_allclose(model["scores"], ref["scores"], atol=1e-4 * scale)
    assert_allclose(model["thresholds"], ref["thresholds"], atol=1e-4 * scale)
    assert_allclose(model["w"], ref["w"], atol=1e-4 * max(1.0, np.abs(ref["w"]).max()))


def test_auto_takes_the_linear_path_for_the_linear_kernel_only():
    lin = cm.solve(program("k40-d3-r3"), "cbor-smo")
    assert lin.extras["method"] == "linear" and lin.extras["kernel_columns"] == 0
    assert lin.extras["engine"] == resolve_engine("cbor-smo", "auto")  # numba unless forced
    rbf_prog = ordinal.cbor(random_clusters(20, 40, 3, 3), W=4.0, accuracy=0.6, kernel="rbf",
                            gamma=0.1)
    rbf = cm.solve(rbf_prog, "cbor-smo")
    assert rbf.extras["method"] == "kernel"
    assert rbf.extras["engine"] == resolve_engine("cbor-smo", "auto")  # both paths compiled
    assert rbf.extras["kernel_columns"] > 0


def test_kernel_path_is_unchanged_on_rbf():
    """method="auto" and method="kernel" are the same iterates on an rbf program."""
    prog = ordinal.cbor(random_clusters(5, 120, 6, 4), W=4.0, accuracy=0.6, kernel="rbf",
                        gamma=0.1)
    auto = cm.solve(prog, "cbor-smo", tol=SMO_TOL)
    kern = cm.solve(prog, "cbor-smo", tol=SMO_TOL, method="kernel")
    assert auto.iterations == kern.iterations
    assert auto.objective == kern.objective
    assert_allclose(auto.values["alpha"], kern.values["alpha"], rtol=0, atol=0)


def test_numpy_and_compiled_linear_loops_reach_the_same_point():
    pytest.importorskip("numba")
    prog = program("k150-d8-r5")
    a = cm.solve(prog, "cbor-smo", tol=1e-9, engine="numba")
    b = cm.solve(prog, "cbor-smo", tol=1e-9, engine="numpy")
    assert a.extras["engine"] == "numba" and b.extras["engine"] == "numpy"
    assert_allclose(a.objective, b.objective, rtol=1e-10)
    assert_allclose(prog.decode(a)["w"], prog.decode(b)["w"], atol=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_linear_path_limits_callback_and_warm_start(engine):
    prog = program("k150-d8-r5")
    capped = cm.solve(prog, "cbor-smo", engine=engine, max_iter=3)
    assert capped.status is cm.Status.USER_LIMIT and capped.iterations == 3
    assert capped.extras["stop_reason"] == 1 and own(capped).primal <= 1e-12
    timed = cm.solve(prog, "cbor-smo", engine=engine, time_limit=1e-12)
    assert timed.status is cm.Status.USER_LIMIT and timed.extras["stop_reason"] == 2
    assert timed.iterations == 0
    ranks, r = prog.data["ranks"], prog.data["r"]
    seen = []

    def record(result):
        alpha, alpha_star = result.values["alpha"], result.values["alpha_star"]
        seen.append(result.iteration)
        assert np.all(alpha >= 0) and np.all(alpha <= 1) and np.all(alpha[ranks == r] == 0)
        assert np.all(alpha_star >= 0) and np.all(alpha_star <= 1)
        assert np.all(alpha_star[ranks == 1] == 0)
        D = [alpha[ranks <= i].sum() - alpha_star[ranks <= i + 1].sum() for i in range(1, r)]
        assert min(D[:-1]) >= -1e-12 and abs(D[-1]) <= 1e-12
        if result.iteration >= 40:
            raise StopIteration

    stopped = cm.solve(prog, "cbor-smo", engine=engine, callback=record)
    assert stopped.status is cm.Status.USER_LIMIT and stopped.iterations == 40
    assert seen == list(range(1, 41))  # called after every pair update
    done = cm.solve(prog, "cbor-smo", engine=engine, tol=SMO_TOL)
    again = cm.solve(prog, "cbor-smo", engine=engine, tol=SMO_TOL, smoothing=False,
                     x0=(done.values["alpha"], done.values["alpha_star"]))
    assert again.status is cm.Status.OPTIMAL and again.iterations == 0
    assert_allclose(again.objective, done.objective, rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_rho_zero_on_the_linear_path_is_reported_not_hidden(engine):
    """W so large that ||w|| <= W is inactive: the dual optimum has rho = 0 (note A2)."""
    prog = ordinal.cbor(random_clusters(7, 40, 2, 3, sep=6.0), W=50.0, accuracy=0.6)
    sol = cm.solve(prog, "cbor-smo", tol=SMO_TOL, max_iter=50000, engine=engine)
    ref = cm.solve(prog, "clarabel")
    if sol.ok:
        assert_allclose(sol.objective, ref.objective, rtol=1e-6, atol=1e-8)
    else:
        assert sol.status is cm.Status.USER_LIMIT and "rho -> 0" in sol.message


def test_bad_method_and_engine_are_option_errors():
    lin = program("k40-d3-r3")
    rbf = ordinal.cbor(random_clusters(20, 40, 3, 3), W=4.0, accuracy=0.6, kernel="rbf")
    with pytest.raises(OptionError, match="method must be"):
        cm.solve(lin, "cbor-smo", method="primal")
    with pytest.raises(OptionError, match="needs the linear kernel"):
        cm.solve(rbf, "cbor-smo", method="linear")
    with pytest.raises(OptionError, match="engine must be"):
        cm.solve(lin, "cbor-smo", engine="cuda")
    with pytest.raises(OptionError, match="engine must be"):
        cm.solve(rbf, "cbor-smo", engine="cuda")


def test_engine_numba_without_numba_is_a_clear_error(monkeypatch):
    monkeypatch.delattr(cm.solvers, "_cbor_numba", raising=False)
    monkeypatch.setitem(sys.modules, "conicml.solvers._cbor_numba", None)  # import fails
    prog = program("k40-d3-r3")
    with pytest.raises(OptionError, match="numba"):
        cm.solve(prog, "cbor-smo", engine="numba")
    sol = cm.solve(prog, "cbor-smo")  # auto falls back to the NumPy loop
    assert sol.extras["engine"] == "numpy" and sol.extras["method"] == "linear"


def test_registry_lists_the_new_options():
    entry = cm.solvers.get("cbor-smo")
    assert {"method", "engine"} <= set(entry.options)
    assert cbor_smo.TERMINATION_MESSAGES.keys() == cbor_smo.STATUS_MAP.keys()
