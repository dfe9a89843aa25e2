"""The one engine resolver (conicml._utils.engines): "auto", CONICML_ENGINE, the fallback."""

from __future__ import annotations

import numpy as np
import pytest

import conicml as cm
from conicml._utils import engines as _options
from conicml._utils.engines import ENGINE_ENV, resolve_engine
from conicml.exceptions import OptionError
from conicml.formulations import svm


@pytest.fixture
def no_numba(monkeypatch):
    """numba unimportable, as the resolver would find it on a platform without it."""
    monkeypatch.setattr(_options, "_NUMBA_IMPORT_ERROR", ["ImportError: simulated"])


def _program():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)
    return svm.soft_margin(X, y, C=1.0, form="dual")


def test_auto_is_numba_when_importable(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    assert resolve_engine("smo", "auto") == "numba"
    assert resolve_engine("smo", "numpy") == "numpy"


def test_auto_falls_back_to_numpy_without_numba(monkeypatch, no_numba):
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    assert resolve_engine("smo", "auto") == "numpy"
    with pytest.raises(OptionError, match="numba.*cannot be imported.*simulated"):
        resolve_engine("smo", "numba")


def test_environment_variable_overrides_auto_only(monkeypatch):
    monkeypatch.setenv(ENGINE_ENV, "numpy")
    assert resolve_engine("smo", "auto") == "numpy"
    sol = cm.solve(_program(), "smo")
    assert sol.ok and sol.extras["engine"] == "numpy"
    if _options.numba_available():  # an explicit argument wins over the environment
        assert resolve_engine("smo", "numba") == "numba"


def test_environment_numba_without_numba_is_an_error(monkeypatch, no_numba):
    monkeypatch.setenv(ENGINE_ENV, "numba")
    with pytest.raises(OptionError, match="CONICML_ENGINE=numba needs numba"):
        resolve_engine("pegasos", "auto")


@pytest.mark.parametrize("value", ["cuda", "1"])
def test_bad_environment_value_is_named(monkeypatch, value):
    monkeypatch.setenv(ENGINE_ENV, value)
    with pytest.raises(OptionError, match=f"{ENGINE_ENV} must be.*{value!r}"):
        resolve_engine("smo", "auto")


def test_bad_engine_argument_is_named():
    with pytest.raises(OptionError, match="engine must be 'auto', 'numba' or 'numpy'"):
        resolve_engine("smo", "gpu")


# ---- the Gaussian kernel's exponential (conicml._utils.gaussian_exp) ---------------------

def _exponents():
    rng = np.random.default_rng(0)
    x = -rng.exponential(3.0, size=(200, 300))
    x[0, :12] = [0.0, -0.0, 1e-300, 2.5, -1e-20, -708.4, -745.13, -745.14, -746.0, -1e300,
                 -np.inf, np.nan]  # clipped at 0, the subnormal range, underflow, NaN
    x[1] = -np.logspace(-12, np.log10(740.0), 300)
    return x


def test_gaussian_exp_is_within_one_ulp_of_the_c_library():
    # the reference: NumPy's exp of the clipped exponents (the C library's, correctly
    # rounded to within an ulp); the compiled loop's range reduction and degree-13
    # polynomial stay within 1 ulp of it, and equal it below the normal range (0 or the
    # one subnormal step), at 0 and on NaN
    pytest.importorskip("numba")
    from conicml._utils._gaussian_exp_numba import exp_nonpositive_rows

    x = _exponents()
    ours = x.copy()
    exp_nonpositive_rows(ours)
    ref = np.exp(np.minimum(x, 0.0))
    assert np.array_equal(np.isnan(ours), np.isnan(ref))
    ok = np.isfinite(ref)
    assert np.all(np.abs(ours[ok] - ref[ok]) <= np.spacing(ref[ok]))
    assert ours[0, 0] == ours[0, 2] == ours[0, 3] == 1.0 and ours[0, 8] == ours[0, 10] == 0.0


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_gaussian_exp_engines_agree(monkeypatch, engine):
    # both engines in place on a C-contiguous block, and a strided view (NumPy's route
    # whatever the engine), against the C library's exp of the clipped exponents
    if engine == "numba":
        pytest.importorskip("numba")
    from conicml._utils.gaussian_exp import exp_nonpositive

    monkeypatch.setenv(ENGINE_ENV, engine)
    x = _exponents()
    ref = np.exp(np.minimum(x, 0.0))
    a = x.copy()
    assert exp_nonpositive(a) is a
    np.testing.assert_allclose(a, ref, rtol=3e-16, atol=0)
    b = x.copy()
    view = b[:, ::2]
    exp_nonpositive(view)
    np.testing.assert_array_equal(view, ref[:, ::2])  # np.exp itself
    np.testing.assert_array_equal(b[:, 1::2], x[:, 1::2])  # untouched
