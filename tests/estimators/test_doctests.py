"""The Examples sections of the public estimators run as doctests in the default test run.

Every public name of :mod:`conicml.estimators` must have an ``Examples`` section (so the
rule cannot rot when an estimator is added), and every example in the estimator modules
runs, each as its own test.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import numpy as np
import pytest

from conicml import estimators

MODULES = [importlib.import_module(f"{estimators.__name__}.{info.name}")
           for info in pkgutil.iter_modules(estimators.__path__)
           if not info.name.startswith("_")]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _tests():
    finder = doctest.DocTestFinder()
    found = [t for module in MODULES for t in finder.find(module) if t.examples]
    return sorted(found, key=lambda t: t.name)


TESTS = _tests()


@pytest.mark.parametrize("name", estimators.__all__)
def test_every_public_estimator_has_examples(name):
    doc = getattr(estimators, name).__doc__ or ""
    assert "\n    Examples\n    --------\n" in doc, f"{name}: no Examples section"
    assert any(t.name.endswith(f".{name}") for t in TESTS), f"{name}: no doctest found"


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failures: list[str] = []
    with warnings.catch_warnings(), np.printoptions(legacy=False):
        warnings.simplefilter("error")  # an example that warns is a bad example
        runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)
