"""scikit-learn estimators built on the formulations.

Each public module of this package defines estimators listed in its
``__all__``; they are all re-exported here.
"""

import importlib
import pkgutil

__all__: list[str] = []

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _info.name.startswith("_"):
        _mod = importlib.import_module(f"{__name__}.{_info.name}")
        for _name in _mod.__all__:
            globals()[_name] = getattr(_mod, _name)
            __all__.append(_name)
