"""The :class:`Program`: a learner written as a declarative conic program.

A formulation (``conicml.formulations.*``) turns data and hyper-parameters
into a :class:`Program`, which carries

* ``kind``: a dotted string naming the program's structure (``"qp.svm.dual"``);
  the registry uses it to decide which solvers can take the program;
* ``problem``, ``variables``, ``constraints``, ``parameters``: a cvxpy problem
  with named parts, built lazily on first access and then cached, so that a
  specialized solver that never needs it never pays for it;
* ``data``: the structured data specialized solvers consume (labels, kernel,
  moments, cluster statistics, ...);
* ``decode(solution)``: how a :class:`~conicml.Solution` becomes the learner's
  parameters (``w``, ``b``, dual coefficients, certified quantities ...);
* ``certify(solution)``: conicml's own check of a returned point, recomputed
  from ``data`` (never taken from the solver's report): scale-free primal
  residual, optimality measure and gap. :func:`conicml.solve` calls it and
  reports ``OPTIMAL`` only when it passes.

Data flows one way: data -> formulation -> program -> solver -> solution -> model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from .exceptions import SolverError
from .solution import Residuals, Solution, Status

__all__ = ["ConicForm", "Program"]


@dataclass
class ConicForm:
    """A cvxpy problem with its named variables, constraints and parameters."""

    problem: cp.Problem
    variables: dict[str, cp.Variable]
    constraints: dict[str, cp.Constraint] = field(default_factory=dict)
    parameters: dict[str, cp.Parameter] = field(default_factory=dict)


class Program:
    """A learner as a conic program, solvable by any solver that accepts its kind.

    Parameters
    ----------
    kind : str
        Dotted name of the program's structure, e.g. ``"qp.svm.dual"``.
    data : Mapping[str, Any]
        Structured data for specialized solvers and for decoding.
    build : callable, optional
        ``build(data) -> ConicForm``; called once, on first access to
        :attr:`problem` (or :attr:`variables`, ...). Programs that have no
        single cvxpy problem (e.g. sequential programs) leave it ``None``.
        Must be picklable (a module-level function or a
        :func:`functools.partial` of one).
    decode : callable
        ``decode(data, solution) -> dict`` returning the learner's parameters.
    default_solver : str, default="clarabel"
        The solver :func:`conicml.solve` uses when ``solver=None``.
    description : str, default=""
        One line naming the learner, shown by ``repr`` and the CLI.
    certify : callable, optional
        ``certify(data, solution) -> Residuals``: the residuals of the returned
        point recomputed from ``data``, each *relative* (divided by the scale of
        the data it measures, so that it reads the same at every feature
        scale), with ``source="recomputed"``. ``primal`` is the constraint
        violation, ``dual`` an optimality measure (a KKT violation, a projected
        gradient norm, or a dual residual) and ``gap`` the relative gap to a
        bound the kind knows (a dual value, a certified bracket). ``nan`` means
        "not checked". Must be picklable.
    explain : callable, optional
        ``explain(data, status) -> str``: what a non-optimal status means for
        this learner and which hyper-parameter to change (e.g. "the rates
        eta_pos=0.1, eta_neg=0.1 are infeasible: raise one of them").
        :func:`conicml.solve` appends it to the message of the generic
        backends, which know nothing of the learner (specialized solvers word
        their own). Must be picklable.
    unique : callable, optional
        ``unique(data, model) -> dict`` of the quantities of a decoded model
        that are *unique at the optimum* (e.g. the decision values on the
        training points when the weight vector is unique), which
        :func:`conicml.compare` judges; variables that may legitimately
        differ between optimal solutions (multipliers with ties, an
        intercept without free support vectors) are left out. ``None``:
        ``compare`` judges the objective and the certificate only. Must be
        picklable.
    parameter_keys : Mapping[str, str], optional
        ``{parameter name: data key}``: the ``cp.Parameter`` of :attr:`parameters`
        whose value ``build`` takes from ``data[key]`` (e.g. the SVM's costs).
        With ``structure_keys``, it lets a program of the same learner at another
        hyper-parameter re-use this one's compiled problem
        (:meth:`adopt_problem`).
    structure_keys : tuple of str, default=()
        The other data keys ``build`` reads: two programs whose ``build``, kind and
        these entries are equal have the same cvxpy problem up to the values of
        the parameters of ``parameter_keys``.
    """

    def __init__(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        build: Callable[[Mapping[str, Any]], ConicForm] | None,
        decode: Callable[[Mapping[str, Any], Solution], dict],
        default_solver: str = "clarabel",
        description: str = "",
        explain: Callable[[Mapping[str, Any], Status], str] | None = None,
        certify: Callable[[Mapping[str, Any], Solution], Residuals] | None = None,
        unique: Callable[[Mapping[str, Any], Mapping[str, Any]], Mapping[str, Any]]
        | None = None,
        parameter_keys: Mapping[str, str] | None = None,
        structure_keys: tuple[str, ...] = (),
    ) -> None:
        self.kind = kind
        self.data = MappingProxyType(dict(data))
        self._build = build
        self._decode = decode
        self.default_solver = default_solver
        self.description = description
        self.explain = explain
        self._certify = certify
        self._unique = unique
        self.parameter_keys = dict(parameter_keys or {})
        self.structure_keys = tuple(structure_keys)
        self._form: ConicForm | None = None

    # -- the cvxpy side, built lazily ------------------------------------------------
    @property
    def has_problem(self) -> bool:
        """Whether the program has a single cvxpy problem (generic backends need one)."""
        return self._build is not None

    @property
    def form(self) -> ConicForm:
        """The built :class:`ConicForm` (built on first access, then cached)."""
        if self._form is None:
            if self._build is None:
                raise SolverError(
                    f"programs of kind {self.kind!r} have no single cvxpy problem; "
                    "use a solver registered for this kind"
                )
            self._form = self._build(self.data)
        return self._form

    @property
    def is_built(self) -> bool:
        """Whether the cvxpy problem has been built (and may hold a compiled map)."""
        return self._form is not None

    @property
    def problem(self) -> cp.Problem:
        """The cvxpy problem (built once and cached)."""
        return self.form.problem

    @property
    def variables(self) -> dict[str, cp.Variable]:
        """Named cvxpy variables of :attr:`problem`."""
        return self.form.variables

    @property
    def constraints(self) -> dict[str, cp.Constraint]:
        """Named cvxpy constraints of :attr:`problem` (their duals are decoded)."""
        return self.form.constraints

    @property
    def parameters(self) -> dict[str, cp.Parameter]:
        """Named cvxpy parameters of :attr:`problem`."""
        return self.form.parameters

    def adopt_problem(self, other: Program) -> str | None:
        """Take over ``other``'s built cvxpy problem, set to this program's parameter values.

        cvxpy keeps a problem's canonicalisation when only the values of its
        ``cp.Parameter`` change (DPP), so the next solve of the adopted problem skips
        the compilation. The problem is taken only when both programs declare the
        same ``parameter_keys`` and ``structure_keys``, have the same kind and
        ``build``, and equal structure entries; ``other`` gives its problem up (it
        rebuilds its own from its data if asked again), so neither program ever
        holds a problem at the other's values.

        Returns
        -------
        str or None
            ``None`` once adopted; otherwise why not (nothing changes then).
        """
        if other is self:
            return "the same program"
        if self._form is not None:
            return "this program's problem is already built"
        if not self.parameter_keys:
            return "the program declares no parameters"
        if other._form is None:
            return "the other program's problem is not built"
        if (other.kind != self.kind or other._build is not self._build
                or getattr(other, "parameter_keys", None) != self.parameter_keys
                or getattr(other, "structure_keys", None) != self.structure_keys):
            return "another learner or another parametrisation"
        for key in self.structure_keys:
            if not _equal(self.data.get(key), other.data.get(key)):
                return f"its data {key!r} differs"
        params = other._form.parameters
        values = {}
        for name, key in self.parameter_keys.items():
            param = params.get(name)
            value = np.asarray(self.data.get(key), dtype=float)
            if param is None or value.shape != param.shape:
                return f"parameter {name!r} has another shape"
            values[name] = value
        old = {name: params[name].value for name in values}
        try:
            for name, value in values.items():
                params[name].value = value  # cvxpy checks the sign attributes
        except ValueError as exc:
            for name, value in old.items():
                params[name].value = value
            return f"a parameter value is not allowed: {exc}"
        self._form, other._form = other._form, None
        return None

    # -- solution -> model ------------------------------------------------------------
    def decode(self, solution: Solution) -> dict:
        """Turn a solution into the learner's parameters.

        Raises
        ------
        SolverError
            If the solution has no primal point and the kind cannot decode that
            status (most kinds; the MPM/BMPM kinds decode infeasibility as
            ``alpha = 0``).
        """
        return self._decode(self.data, solution)

    @property
    def can_certify(self) -> bool:
        """Whether the program recomputes the residuals of a returned point itself."""
        return self._certify is not None

    def certify(self, solution: Solution) -> Residuals | None:
        """Residuals of ``solution``'s point recomputed from the program's data.

        Returns ``None`` when the program has no certificate of its own or the
        solution carries no point.
        """
        if self._certify is None or not solution.ok:
            return None
        return self._certify(self.data, solution)

    def unique_quantities(self, model: Mapping[str, Any]) -> dict[str, Any]:
        """The decoded model's quantities that are unique at the optimum (may be empty)."""
        unique = getattr(self, "_unique", None)  # programs pickled before the hook
        return {} if unique is None else dict(unique(self.data, model))

    # -- pickling: the cvxpy problem is derived state and is rebuilt on demand ---------
    def __getstate__(self) -> dict:  # noqa: D105
        state = self.__dict__.copy()
        state["_form"] = None
        state["data"] = dict(self.data)
        return state

    def __setstate__(self, state: dict) -> None:  # noqa: D105
        state["data"] = MappingProxyType(state["data"])
        state.setdefault("parameter_keys", {})  # programs pickled before the hook
        state.setdefault("structure_keys", ())
        self.__dict__.update(state)

    def __repr__(self) -> str:  # noqa: D105
        desc = f", {self.description!r}" if self.description else ""
        return f"Program(kind={self.kind!r}{desc})"


def _equal(a: Any, b: Any) -> bool:
    """Whether two data entries are equal (the same object, equal arrays, or ``==``)."""
    if a is b:
        return True
    if sp.issparse(a) or sp.issparse(b):
        return (sp.issparse(a) and sp.issparse(b) and a.shape == b.shape
                and (a != b).nnz == 0)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def require_solution(solution: Solution, kind: str) -> None:
    """Raise :class:`SolverError` unless ``solution`` carries a primal point.

    A point is carried by the optimal statuses and by ``USER_LIMIT`` when the
    solver returned its last iterate (an iterative solver stopped by
    ``max_iter``, ``time_limit`` or the callback), which decodes to a usable,
    uncertified model.
    """
    if not (solution.ok or (solution.status is Status.USER_LIMIT and solution.values)):
        raise SolverError(
            f"cannot decode a solution with status {solution.status.value!r} "
            f"from solver {solution.solver!r} for a program of kind {kind!r}: "
            f"{solution.message}"
        )
