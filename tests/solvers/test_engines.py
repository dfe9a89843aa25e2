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
