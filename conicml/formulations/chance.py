"""Deprecated alias of the chance-constrained formulations (removed in 0.3).

The family now has one module per learner:

* :mod:`conicml.formulations.specified_rates` — :func:`specified_rates` (ch. 2);
* :mod:`conicml.formulations.cbc` — :func:`cbc`, :func:`cbc_w`, :func:`cbc_radii` (ch. 3, 6);
* :mod:`conicml.formulations.ordinal` — :func:`cbor`, :func:`svor` (ch. 4–5).

``conicml.formulations.chance.<name>`` still works for one release and emits a
:class:`FutureWarning` naming the new module.
"""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any

from . import cbc as _cbc
from . import ordinal as _ordinal
from . import specified_rates as _specified_rates

__all__: list[str] = []  # nothing new is exported from here

_MODULES: tuple[ModuleType, ...] = (_specified_rates, _cbc, _ordinal)


def __getattr__(name: str) -> Any:
    for module in _MODULES:
        if name in vars(module) and not name.startswith("__"):
            warnings.warn(
                f"conicml.formulations.chance.{name} is deprecated and will be removed in "
                f"0.3; use {module.__name__}.{name}",
                FutureWarning,
                stacklevel=2,
            )
            return vars(module)[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
