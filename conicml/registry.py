"""The solver registry: lowercase names, the program kinds each accepts.

Modelled on cvxpy's ``reductions/solvers/defines.py``: insertion order is the
order of preference, availability is checked lazily with
:func:`importlib.util.find_spec`, and capabilities live on the entry. Generic
backends and specialized solvers register the same way::

    @register("smo", kinds=["qp.svm.dual"])
    def solve_smo(program, *, tol=1e-3, max_iter=None, ...) -> Solution: ...

A *kind* is a dotted string naming the structure of a program (``"qp.svm.dual"``,
``"socp.mpm"``, ``"sequential.mempm"``; every kind is a constant of
:mod:`conicml.kinds`); an entry's ``kinds`` are shell-style
patterns matched with :func:`fnmatch.fnmatchcase` (``"qp.*"`` accepts every QP).
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import inspect
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from .exceptions import SolverError, SolverNotFoundError

__all__ = ["SolverEntry", "available", "entries", "get", "register"]


@dataclass(frozen=True)
class SolverEntry:
    """One registered solver.

    Attributes
    ----------
    name : str
        Lowercase registry key, e.g. ``"clarabel"`` or ``"smo"``.
    kinds : tuple of str
        Patterns of the program kinds the solver accepts.
    function : callable
        ``function(program, **options) -> Solution``; its keyword-only
        parameters are the options the solver accepts.
    specialized : bool
        ``False`` for the generic cvxpy backends, ``True`` for solvers that
        consume a program's structured data directly.
    requires : tuple of str
        Modules that must be importable for the solver to be available.
    description : str
        One line for ``conicml solvers``.
    compare_options : Mapping
        Options :func:`conicml.compare` uses for this solver unless told
        otherwise (e.g. a tight ``tol`` for an iterative solver, so that its
        row is comparable with an interior-point solve).
    compare_rtol : float or None
        Loosest objective tolerance the solver is expected to meet with
        ``compare_options`` (first-order methods); :func:`conicml.compare`
        never holds it to a tighter one unless given a per-solver mapping.
    certify_tol : float
        Largest recomputed relative residual (:meth:`Program.certify`) with
        which an ``OPTIMAL`` status from this solver stands; above it
        :func:`conicml.solve` reports ``OPTIMAL_INACCURATE`` and names the
        failing number. It states the accuracy the solver's defaults promise
        (interior-point: 1e-6; first-order methods looser).
    compare_by_default : str or None
        ``None``: ``conicml compare`` runs the solver on every program it accepts.
        A text: the reason the command leaves it out unless named with
        ``--solvers`` (it still prints the reason).
    warm_start : callable or None
        ``warm_start(previous, old_program, new_program) -> dict``: the options
        (e.g. ``{"x0": ...}``) that start this solver on ``new_program`` from
        ``previous``, the solution of ``old_program`` (the same learner at a
        neighbouring hyper-parameter), or ``{}`` when ``previous`` does not fit
        (another data set, another basis). Used by :func:`conicml.solve_path`;
        ``None``: the solver cannot be warm started (every solve is cold). A function
        with a keyword ``workspace`` is given a dict that lives for one path (for what
        it computes once per path, e.g. kernel columns).
    deprecated : str or None
        For an old name kept for one release: what to use instead. Deprecated
        entries are left out of :func:`available` and :func:`entries` (so
        ``compare`` and the CLI do not list them twice) and :func:`get` emits a
        :class:`FutureWarning` naming the replacement.
    """

    name: str
    kinds: tuple[str, ...]
    function: Callable
    specialized: bool
    requires: tuple[str, ...]
    description: str
    compare_options: Mapping[str, Any] = field(default_factory=dict)
    compare_rtol: float | None = None
    certify_tol: float = 1e-6
    deprecated: str | None = None
    compare_by_default: str | None = None
    warm_start: Callable[[Any, Any, Any], Mapping[str, Any]] | None = None

    def accepts(self, kind: str) -> bool:
        """Whether a program of this kind can be given to the solver."""
        return any(fnmatchcase(kind, pattern) for pattern in self.kinds)

    def is_installed(self) -> bool:
        """Whether every required module can be imported."""
        return all(importlib.util.find_spec(mod) is not None for mod in self.requires)

    @property
    def options(self) -> tuple[str, ...]:
        """Names of the keyword options the solver accepts."""
        return _keyword_options(self.function)


@functools.lru_cache(maxsize=256)
def _keyword_options(function: Callable) -> tuple[str, ...]:
    """Names of the keyword-only parameters of ``function``, inspected once per function
    (every solve checks its options against them)."""
    params = inspect.signature(function).parameters.values()
    return tuple(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)


_REGISTRY: dict[str, SolverEntry] = {}


def register(
    name: str,
    kinds: Iterable[str],
    *,
    specialized: bool = True,
    requires: Iterable[str] = (),
    description: str | None = None,
    compare_options: Mapping[str, Any] | None = None,
    compare_rtol: float | None = None,
    certify_tol: float = 1e-6,
    deprecated: str | None = None,
    compare_by_default: str | None = None,
    warm_start: Callable[[Any, Any, Any], Mapping[str, Any]] | None = None,
) -> Callable[[Callable], Callable]:
    """Register a solver function under ``name`` for the given program kinds.

    Parameters
    ----------
    name : str
        Registry key; must be lowercase.
    kinds : iterable of str
        Kind patterns the solver accepts (see module docstring).
    specialized : bool, default=True
        Whether this is a specialized (structure-exploiting) solver.
    requires : iterable of str, default=()
        Importable module names the solver needs.
    description : str, optional
        One-line description; defaults to the first line of the docstring.
    compare_options : mapping, optional
        Default options of this solver inside :func:`conicml.compare`.
    compare_rtol : float, optional
        Loosest objective tolerance expected of this solver in a comparison.
    certify_tol : float, default=1e-6
        Largest recomputed relative residual with which this solver's
        ``OPTIMAL`` stands (see :class:`SolverEntry`).
    deprecated : str, optional
        Marks an old name kept for one release; the text says what to use.
    warm_start : callable, optional
        ``warm_start(previous, old_program, new_program) -> dict`` of options
        that warm start the solver (see :class:`SolverEntry`).

    Returns
    -------
    callable
        A decorator that registers and returns the function unchanged.
    """
    if name != name.lower() or not name:
        raise ValueError(f"solver names are lowercase and non-empty, got {name!r}")
    kinds = tuple(kinds)
    if not kinds:
        raise ValueError(f"solver {name!r} must accept at least one program kind")
    if not (isinstance(certify_tol, (int, float)) and not isinstance(certify_tol, bool)
            and math.isfinite(certify_tol) and certify_tol > 0):
        raise ValueError(f"solver {name!r}: certify_tol must be a positive finite number, "
                         f"got {certify_tol!r}")

    def decorator(function: Callable) -> Callable:
        if name in _REGISTRY and _REGISTRY[name].function is not function:
            raise ValueError(f"a solver named {name!r} is already registered")
        doc = (inspect.getdoc(function) or "").strip().splitlines()
        _REGISTRY[name] = SolverEntry(
            name=name,
            kinds=kinds,
            function=function,
            specialized=specialized,
            requires=tuple(requires),
            description=description or (doc[0] if doc else ""),
            compare_options=dict(compare_options or {}),
            compare_rtol=compare_rtol,
            certify_tol=float(certify_tol),
            deprecated=deprecated,
            compare_by_default=compare_by_default,
            warm_start=warm_start,
        )
        return function

    return decorator


def entries() -> list[SolverEntry]:
    """Every registered solver (deprecated names left out), in order of preference."""
    return [e for e in _REGISTRY.values() if e.deprecated is None]


def available(kind: str | None = None) -> list[str]:
    """Names of the installed solvers, optionally only those accepting ``kind``.

    Parameters
    ----------
    kind : str, optional
        A program kind such as ``"qp.svm.dual"``.

    Returns
    -------
    list of str
        Solver names in order of preference.

    Raises
    ------
    ValueError
        If ``kind`` contains a shell wildcard: it names one program's kind
        (the patterns are on the solver side), so ``"qp.svm.*"`` would silently
        match only the solvers registered for ``"qp.*"``.
    """
    if kind is not None and any(ch in kind for ch in "*?["):
        raise ValueError(
            f"available() takes a program kind such as 'qp.svm.dual', not a pattern "
            f"({kind!r}); list the kinds you mean (conicml.kinds)"
        )
    return [
        e.name
        for e in _REGISTRY.values()
        if (kind is None or e.accepts(kind)) and e.is_installed() and e.deprecated is None
    ]


def get(name: str, kind: str | None = None) -> SolverEntry:
    """Look up a solver by (case-insensitive) name.

    Parameters
    ----------
    name : str
        Solver name.
    kind : str, optional
        If given, also check that the solver accepts this program kind.

    Raises
    ------
    SolverNotFoundError
        If no solver has that name, or it is not installed.
    SolverError
        If the solver does not accept ``kind``.
    """
    if not isinstance(name, str):
        raise SolverNotFoundError(f"solver name must be a string, got {type(name).__name__}")
    key = name.lower()
    if key not in _REGISTRY:
        listed = [e.name for e in entries()]  # deprecated names are not advertised
        close = difflib.get_close_matches(key, listed, n=3)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise SolverNotFoundError(
            f"unknown solver {name!r}{hint} (registered solvers: {', '.join(listed) or 'none'})"
        )
    entry = _REGISTRY[key]
    if entry.deprecated is not None:
        warnings.warn(f"solver {key!r} is deprecated and will be removed in 0.3; "
                      f"{entry.deprecated}", FutureWarning, stacklevel=3)
    if not entry.is_installed():
        raise SolverNotFoundError(
            f"solver {key!r} is registered but not installed (needs "
            f"{', '.join(entry.requires)}); install it with `pip install conicml[{key}]`; "
            f"installed solvers: {', '.join(available())}"
        )
    if kind is not None and not entry.accepts(kind):
        raise SolverError(
            f"solver {key!r} does not accept programs of kind {kind!r} (it accepts "
            f"{', '.join(entry.kinds)}); solvers for this kind: "
            f"{', '.join(available(kind)) or 'none'}"
        )
    return entry
