"""Formulations: one module per family of learners.

A formulation turns data and hyper-parameters into a :class:`~conicml.Program`.
Every public module of this package is imported here, so that
``conicml.formulations.<family>`` works after ``import conicml``.
"""

import importlib
import pkgutil

__all__ = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))

for _module in __all__:
    importlib.import_module(f"{__name__}.{_module}")
