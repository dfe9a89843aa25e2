"""The one place the engine of a compiled inner loop is decided (``engine="auto"``).

numba is a dependency of conicml; it can still be missing or unusable here (a platform
without a numba wheel, a NumPy newer than the installed numba supports), and then every
compiled loop falls back to its NumPy twin. ``CONICML_ENGINE`` pins the choice.
"""

from __future__ import annotations

import os
from typing import Any

from ..exceptions import OptionError

__all__ = ["ENGINE_ENV", "numba_available", "numba_import_error", "resolve_engine"]

#: Environment variable that sets what ``engine="auto"`` means: ``numba``, ``numpy`` or
#: ``auto`` (the default: numba when it can be imported). It lets a test run or a user pin
#: the NumPy engine everywhere without passing ``engine=`` to every solver.
ENGINE_ENV = "CONICML_ENGINE"
_ENGINES = ("auto", "numba", "numpy")
_NUMBA_IMPORT_ERROR: list[str | None] = []  # cached outcome of the first import attempt


def numba_import_error() -> str | None:
    """``None`` when numba imports here, else the import error (tried once per process)."""
    if not _NUMBA_IMPORT_ERROR:
        try:
            import numba  # noqa: F401
        except Exception as exc:  # ImportError, or numba refusing the installed NumPy
            _NUMBA_IMPORT_ERROR.append(f"{type(exc).__name__}: {exc}")
        else:
            _NUMBA_IMPORT_ERROR.append(None)
    return _NUMBA_IMPORT_ERROR[0]


def numba_available() -> bool:
    """Whether the compiled (numba) engine can run here."""
    return numba_import_error() is None


def resolve_engine(solver: str, engine: Any) -> str:
    """``"numba"`` or ``"numpy"``: the engine ``engine`` means here (the one place it is decided).

    ``engine`` is ``"auto"``, ``"numba"`` or ``"numpy"``. ``"auto"`` follows the
    environment variable ``CONICML_ENGINE`` when it is set, else takes numba when it can
    be imported and NumPy otherwise. An explicit ``"numba"`` (argument or environment)
    without an importable numba is an :class:`OptionError`.
    """
    if engine not in _ENGINES:
        raise OptionError(f"{solver}: engine must be 'auto', 'numba' or 'numpy', got {engine!r}")
    source = f"engine={engine!r}"
    if engine == "auto":
        env = os.environ.get(ENGINE_ENV, "").strip().lower() or "auto"
        if env not in _ENGINES:
            raise OptionError(f"{solver}: the environment variable {ENGINE_ENV} must be "
                              f"'auto', 'numba' or 'numpy', got {env!r}")
        engine, source = env, f"{ENGINE_ENV}={env}"
    if engine == "numpy":
        return "numpy"
    error = numba_import_error()
    if error is None:
        return "numba"
    if engine == "numba":
        raise OptionError(
            f"{solver}: {source} needs numba, which cannot be imported here ({error}); "
            "reinstall it (pip install numba) or use engine='numpy'")
    return "numpy"
