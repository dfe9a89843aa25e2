"""``compare``: solve one program with several solvers and check they agree.

This is how a specialized solver is trusted: on the same :class:`Program`, its
objective and decoded model are put beside those of the generic backends.

**What is judged.** A row agrees with the reference when (1) its status is
certified (``OPTIMAL``: conicml's recomputed residuals passed, see
:mod:`conicml.certificates.conic`), (2) its objective matches within ``rtol``, and
(3) the quantities that are *unique at the optimum*
(:meth:`Program.unique_quantities`, e.g. decision values on the training
points) match within ``vtol``. Variables that can differ between optimal
points (multipliers with ties, an intercept fixed by no free support vector,
the direction at zero slack) are shown as information (``var_diffs``) but not
judged. ``compare`` never raises on an infeasible or failing program: a solve
or decode error becomes a row with its status and message.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import registry
from ._utils import progress as _progress
from .exceptions import ConicMLError, OptionError, ProgramError
from .program import Program
from .solution import Solution, Status
from .solving import solve

__all__ = ["Comparison", "ComparisonRow", "compare"]


@dataclass(frozen=True)
class ComparisonRow:
    """One solver's result in a :class:`Comparison`.

    ``obj_rel_diff`` is :math:`|f - f_{ref}| / \\max(1, |f_{ref}|)`;
    ``var_diffs[k]`` is :math:`\\|m_k - m_{k,ref}\\|_\\infty` for each
    floating-point entry ``k`` of the decoded model (information only);
    ``unique_diffs[k]`` the same for the quantities unique at the optimum
    (judged); ``certified`` whether the status is ``OPTIMAL`` after conicml's
    own check.
    """

    solver: str
    status: str
    objective: float
    obj_rel_diff: float
    var_diffs: Mapping[str, float]
    solve_time: float
    total_time: float
    iterations: int
    residual: float
    rtol: float
    agree: bool
    message: str = ""
    unique_diffs: Mapping[str, float] = field(default_factory=dict)
    certified: bool = False


@dataclass(frozen=True)
class Comparison:
    """Rows of a comparison, the reference solver and the overall verdict."""

    kind: str
    reference: str
    rows: tuple[ComparisonRow, ...]
    solutions: Mapping[str, Solution] = field(repr=False, default_factory=dict)

    @property
    def agree(self) -> bool:
        """Whether every solver agrees with the reference within its tolerance.

        When the reference reports infeasibility (or unboundedness), a row
        agrees iff it reports the same.
        """
        return all(row.agree for row in self.rows)

    @property
    def verdict(self) -> str:
        """``"all agree"``, ``"DISAGREEMENT"``, or for one solver ``"nothing to compare"``."""
        if not self.agree:
            return "DISAGREEMENT"
        return "all agree" if len(self.rows) > 1 else "one solver, nothing to compare"

    def row(self, solver: str) -> ComparisonRow:
        """The row of one solver."""
        for row in self.rows:
            if row.solver == solver:
                return row
        raise KeyError(solver)

    def _table(self) -> tuple[list[str], list[list[str]]]:
        keys = sorted({k for row in self.rows for k in row.var_diffs})
        ukeys = sorted({k for row in self.rows for k in row.unique_diffs})
        header = ["solver", "status", "objective", "rel. diff",
                  *[f"max|d {k}|*" for k in ukeys], *[f"max|d {k}|" for k in keys],
                  "residual", "iters", "solve s", "total s", "tol", "agree"]
        body = []
        for r in self.rows:
            body.append([
                r.solver + (" (ref)" if r.solver == self.reference else ""),
                r.status,
                f"{r.objective:.10g}",
                f"{r.obj_rel_diff:.2e}",
                *[f"{r.unique_diffs[k]:.2e}" if k in r.unique_diffs else "-" for k in ukeys],
                *[f"{r.var_diffs[k]:.2e}" if k in r.var_diffs else "-" for k in keys],
                f"{r.residual:.1e}",
                str(r.iterations),
                f"{r.solve_time:.4f}",
                f"{r.total_time:.4f}",
                f"{r.rtol:.0e}",
                "yes" if r.agree else "NO",
            ])
        return header, body

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain data (JSON-ready): kind, reference, verdict and rows."""
        def clean(value: Any) -> Any:
            if isinstance(value, float) and not math.isfinite(value):
                return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
            if isinstance(value, Mapping):
                return {k: clean(v) for k, v in value.items()}
            return value

        return {"kind": self.kind, "reference": self.reference, "agree": self.agree,
                "rows": [clean(dataclasses.asdict(row)) for row in self.rows]}

    def to_markdown(self) -> str:
        """The comparison as a GitHub-flavoured markdown table."""
        header, body = self._table()

        def cells(row: list[str]) -> str:  # a pipe inside a cell would end it
            return "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"

        lines = [cells(header), "|" + "---|" * len(header)]
        lines += [cells(row) for row in body]
        return "\n".join(lines)

    def __str__(self) -> str:  # noqa: D105
        header, body = self._table()
        widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [f"program kind {self.kind}; reference {self.reference}; {self.verdict}",
                 fmt.format(*header), fmt.format(*("-" * w for w in widths))]
        lines += [fmt.format(*row) for row in body]
        return "\n".join(lines)


def _family(status: Status) -> str:
    """Status family: a certificate of infeasibility or unboundedness, accurate or not."""
    if status in (Status.INFEASIBLE, Status.INFEASIBLE_INACCURATE):
        return "infeasible"
    if status in (Status.UNBOUNDED, Status.UNBOUNDED_INACCURATE):
        return "unbounded"
    return "other"


def _check_tol(value: Any, name: str) -> None:
    values = value.values() if isinstance(value, Mapping) else [value]
    for v in values:
        ok = isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool)
        if not ok or not math.isfinite(float(v)) or float(v) <= 0:
            shown = float(v) if ok else v  # 1.0, not np.float64(1.0)
            raise OptionError(f"compare: {name} must be a positive finite number "
                              f"(or a mapping solver -> such a number), got {shown!r}")


def _safe_solve(program: Program, label: str, name: str, opts: dict) -> Solution:
    """``solve``, with a solver failure turned into a SOLVER_ERROR solution (never raised)."""
    try:
        return solve(program, name, **opts)
    except OptionError:
        raise  # a bad option is the caller's error, not the program's
    except ConicMLError as exc:
        return Solution(status=Status.SOLVER_ERROR, solver=name,
                        message=f"{type(exc).__name__}: {exc}")


def _safe_decode(program: Program, sol: Solution) -> tuple[dict, str]:
    """``(model, "")``, or ``({}, reason)`` when the solution cannot be decoded."""
    if not sol.ok:
        return {}, ""
    try:
        return dict(program.decode(sol)), ""
    except ConicMLError as exc:
        return {}, f"decode failed: {exc}"


def _diffs(model: Mapping[str, np.ndarray], ref: Mapping[str, np.ndarray],
           tol: float) -> tuple[dict[str, float], bool]:
    diffs, ok = {}, True
    for key, ref_val in ref.items():
        if key in model and model[key].shape == ref_val.shape:
            diff = float(np.max(np.abs(model[key] - ref_val), initial=0.0))
            diffs[key] = diff
            scale = max(1.0, float(np.max(np.abs(ref_val), initial=0.0)))
            ok = ok and diff <= tol * scale
        else:
            ok = False
    return diffs, ok


def _float_entries(model: Mapping[str, Any]) -> dict[str, np.ndarray]:
    out = {}
    for key, value in model.items():
        arr = np.asarray(value) if isinstance(value, (np.ndarray, float, np.floating)) else None
        if arr is not None and arr.dtype.kind == "f":
            out[key] = arr
    return out


def compare(
    program: Program,
    solvers: Iterable[str | tuple[str, str, Mapping[str, Any]]] | None = None,
    *,
    reference: str | None = None,
    rtol: float | Mapping[str, float] = 1e-5,
    vtol: float | Mapping[str, float] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool | None = None,
) -> Comparison:
    """Solve ``program`` with several solvers and compare them with a reference.

    Parameters
    ----------
    program : Program
    solvers : iterable of str or (label, solver, options) tuples, optional
        Solver names; default: every installed solver accepting ``program.kind``.
        A tuple runs a labelled variant, e.g.
        ``("bisection/ecos", "bisection", {"inner": "ecos"})``.
    reference : str, optional
        Reference solver; default ``"clarabel"`` (the most accurate generic
        backend) when it accepts the kind, else the first solver.
    rtol : float or mapping solver -> float, default=1e-5
        Agreement tolerance on the objective (positive; else
        :class:`~conicml.exceptions.OptionError`),
        :math:`|f - f_{ref}| \\le \\texttt{rtol}\\,\\max(1, |f_{ref}|)`. A float
        is raised to a solver's registered ``compare_rtol`` (first-order
        methods such as SCS and OSQP); a mapping is used as given. Each row
        shows the tolerance it was held to.
    vtol : float or mapping, optional
        Agreement tolerance on each quantity unique at the optimum
        (:meth:`Program.unique_quantities`; the other decoded entries are
        reported in ``var_diffs`` but not judged),
        :math:`\\|m - m_{ref}\\|_\\infty \\le \\texttt{vtol}\\max(1, \\|m_{ref}\\|_\\infty)`.
        Default :math:`\\sqrt{\\texttt{rtol}}`: near a strongly convex optimum
        the error in the solution is of the order of the square root of the
        error in the objective.
    options : mapping solver -> dict, optional
        Options passed to :func:`conicml.solve` for each solver named by a string;
        a solver without an entry runs with its registered ``compare_options``
        (e.g. ``smo`` at ``tol=1e-8``), otherwise at its defaults.
    progress : bool, optional
        A progress bar over the solvers on standard error; default: when it is a
        terminal (and ``CONICML_PROGRESS`` is not ``0``).

    Returns
    -------
    Comparison
        ``str()`` prints a table; ``to_markdown()``; ``agree``. A solver that
        fails (or a point that cannot be decoded) is a row with its status
        and message, never an exception.

    Raises
    ------
    ProgramError
        ``program`` is not a :class:`~conicml.program.Program`.
    OptionError
        ``rtol`` or ``vtol`` not positive and finite, a solver option unknown, or
        ``options`` for a solver the comparison does not run.
    """
    if not isinstance(program, Program):
        raise ProgramError(f"compare expects a conicml Program (from a formulation in "
                        f"conicml.formulations), got {type(program).__name__}")
    _check_tol(rtol, "rtol")
    if vtol is not None:
        _check_tol(vtol, "vtol")
    options = {k.lower(): dict(v) for k, v in (options or {}).items()}
    # each run: label -> (solver name, options); a tuple item is a labelled variant
    runs: dict[str, tuple[str, dict]] = {}
    for item in (solvers if solvers is not None else registry.available(program.kind)):
        if isinstance(item, tuple):
            label, name, opts = item
            runs[label.lower()] = (name.lower(), dict(opts))
        else:
            key = item.lower()
            default = registry.get(key).compare_options
            runs[key] = (key, options.get(key, dict(default)))
    if not runs:
        raise ConicMLError(f"no solver accepts programs of kind {program.kind!r}")
    for name, _ in runs.values():
        registry.get(name, kind=program.kind)  # fail early with the registry's message
    if reference is None:
        clarabel_ok = "clarabel" in registry.available(program.kind)
        reference = "clarabel" if clarabel_ok else next(iter(runs))
    reference = reference.lower()
    if reference not in runs:
        default = registry.get(reference).compare_options
        runs = {reference: (reference, options.get(reference, dict(default))), **runs}
    names = list(runs)
    unused = sorted(set(options) - {name for name, _ in runs.values()})
    if unused:  # options for a solver that does not run would be silently dropped
        raise OptionError(f"compare: options given for {', '.join(map(repr, unused))}, which "
                          f"this comparison does not run (it runs {', '.join(names)}); add "
                          f"them to solvers or drop their options")

    def tol_for(tol: float | Mapping[str, float] | None, label: str, default: float) -> float:
        if tol is None:
            return default
        if isinstance(tol, Mapping):
            return float(tol.get(label, default))
        floor = registry.get(runs[label][0]).compare_rtol or 0.0
        return max(float(tol), floor)

    solutions: dict[str, Solution] = {}
    with _progress.progress_bar(f"compare {program.kind}", total=len(runs), unit="solver",
                                enable=progress) as bar:
        for label, (name, opts) in runs.items():
            bar.set_postfix_str(label)  # the solver now running
            solutions[label] = _safe_solve(program, label, name, opts)
            bar.update()
    ref = solutions[reference]
    ref_model, ref_error = _safe_decode(program, ref)
    ref_floats = _float_entries(ref_model)
    ref_unique = _float_entries(program.unique_quantities(ref_model)) if ref_model else {}
    ref_usable = ref.ok and not ref_error
    rows = []
    for name in names:
        sol = solutions[name]
        r_tol = tol_for(rtol, name, 1e-5)
        v_tol = tol_for(vtol, name, math.sqrt(r_tol))
        diffs: dict[str, float] = {}
        udiffs: dict[str, float] = {}
        certified = sol.status is Status.OPTIMAL
        message = sol.message
        obj_diff = math.nan
        if not ref_usable:  # e.g. all report infeasibility: agreement on the status family
            agree = _family(sol.status) == _family(ref.status) != "other"
            if ref_error and name == reference:
                message = f"{ref_error}; {message}" if message else ref_error
        elif sol.ok:
            obj_diff = abs(sol.objective - ref.objective) / max(1.0, abs(ref.objective))
            agree = certified and obj_diff <= r_tol
            model, error = (ref_model, "") if name == reference else _safe_decode(program, sol)
            if error:
                agree = False
                message = f"{error}; {message}" if message else error
            else:
                diffs, _ = _diffs(_float_entries(model), ref_floats, v_tol)
                if ref_unique:
                    unique = _float_entries(program.unique_quantities(model))
                    udiffs, unique_ok = _diffs(unique, ref_unique, v_tol)
                    agree = agree and unique_ok
        else:
            agree = False
        rows.append(ComparisonRow(
            solver=name, status=sol.status.value, objective=sol.objective,
            obj_rel_diff=obj_diff, var_diffs=diffs, solve_time=sol.solve_time,
            total_time=sol.total_time, iterations=sol.iterations,
            residual=sol.residuals.max(), rtol=r_tol, agree=bool(agree), message=message,
            unique_diffs=udiffs, certified=certified,
        ))
    return Comparison(kind=program.kind, reference=reference, rows=tuple(rows),
                      solutions=solutions)
