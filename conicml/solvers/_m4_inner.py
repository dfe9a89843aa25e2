"""The fixed-ρ SOCPs of the M4 kinds, solved by a generic backend.

Shared by ``bisection``, ``dinkelbach-gfp`` and the line searches over ρ; it
reads the program's :class:`~conicml.contracts.m4.M4Data` (``data["m4"]``).
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from .. import kinds
from ..contracts.m4 import INNER_BACKENDS
from ..exceptions import OptionError
from ..program import ConicForm, Program
from ..solution import Residuals, Solution, Status

__all__ = ["INNER_BACKENDS", "InnerMemo", "InnerSolver", "point"]


class InnerMemo:
    r"""The fixed-ρ solutions of a soft-M4 program, for the searches at another C.

    The slack SOCP :math:`h(\rho)` (seed 004 eqs. 4.16-4.18 at fixed :math:`\rho`) and the
    MPM bound :math:`\kappa^*_{MPM}` (4.8) read the samples and the class covariance
    factors only, never C: a search over :math:`\rho` at another C on the same factors (the
    programs of :func:`conicml.formulations.m4.with_cost`) reads the values of
    :math:`\rho` already solved here instead of solving them again. A search returns the
    memo it filled in ``extras["inner_memo"]``; pass it as the option ``inner_memo`` (a
    path over C does, :func:`conicml.solvers._warm.m4_rho`).

    It holds weak references to the arrays it was filled from, so it keeps no data alive,
    and it is read only by a program with those very arrays, the same reduction and the
    same inner backend and options (:meth:`matches`). A pickled memo (e.g. in a fitted
    estimator's solution) is an empty one that matches no program.
    """

    def __init__(self, m4: Any, inner: str, options: Mapping[str, Any]) -> None:
        self._arrays = tuple(weakref.ref(a) for a in self._factors(m4))
        self._shape = (m4.reduction, m4.n_removed, inner, dict(options))
        self.solutions: dict[float, Solution] = {}  # rho -> the inner solution there
        self.kappa: tuple[float, np.ndarray] | None = None  # kappa*_MPM and its w

    def __getstate__(self) -> dict:  # weak references do not pickle
        return {"_arrays": (), "_shape": None, "solutions": {}, "kappa": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @staticmethod
    def _factors(m4: Any) -> tuple[np.ndarray, ...]:
        return m4.Z, m4.y, m4.kept, m4.R_pos, m4.R_neg, m4.d

    def matches(self, m4: Any, inner: str, options: Mapping[str, Any]) -> bool:
        """Whether ``m4`` has this memo's very arrays, reduction, backend and options."""
        if self._shape is None:  # unpickled: no arrays to compare with
            return False
        same = all(ref() is a for ref, a in zip(self._arrays, self._factors(m4), strict=True))
        try:
            return same and bool(
                self._shape == (m4.reduction, m4.n_removed, inner, dict(options)))
        except ValueError:  # options holding arrays: not compared, not read
            return False


class _InnerFailure(Exception):
    def __init__(self, solution: Solution) -> None:
        super().__init__(solution.message)
        self.solution = solution


def _no_decode(data: Mapping[str, Any], solution: Solution) -> dict:  # pragma: no cover
    return dict(solution.values)


@dataclass
class InnerSolver:
    """Solves the fixed-ρ SOCPs of an M4 program with a generic backend.

    Shared by ``bisection``, ``dinkelbach-gfp`` and the line searches over ρ. With
    ``rebuild=False`` one compiled DPP problem (the program's own ``form``) is
    re-solved after setting its parameters; with ``rebuild=True`` a fresh
    parameter-free problem is built and compiled for every call.
    """

    program: Program
    inner: str = "clarabel"
    inner_options: Mapping[str, Any] | None = None
    rebuild: bool = False
    memo: InnerMemo | None = None
    solves: int = 0
    time: float = 0.0
    times: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.inner not in INNER_BACKENDS:
            raise OptionError(
                f"inner must be one of {', '.join(INNER_BACKENDS)}, got {self.inner!r}"
            )
        hard = self.program.data["m4"].hard
        if self.inner == "auto":
            self.inner = "clarabel" if hard else "m4-ipm"
        if self.inner == "m4-ipm" and hard:
            raise OptionError("inner='m4-ipm' solves the soft-margin slack SOCP only; the "
                              "separable check needs clarabel, ecos or scs")
        self.inner_options = dict(self.inner_options or {})
        self._ipm = None  # SlackIPM, built at the first solve the memo does not hold
        self.fallbacks = 0  # m4-ipm solves redone by clarabel
        self.ipm_steps = 0  # interior-point steps of the m4-ipm solves
        self.reused = 0  # solutions read from the memo instead of solved
        if self.inner == "m4-ipm":
            unknown = set(self.inner_options) - {"tol", "max_iter", "warm_start"}
            if unknown:
                raise OptionError(f"inner_options of m4-ipm: tol, max_iter, warm_start; got "
                                  f"{', '.join(sorted(unknown))}")
        m4 = self.program.data["m4"]
        if hard:
            self.memo = None  # the separable check's scales change its problem: not kept
        elif self.memo is None or not self.memo.matches(m4, self.inner, self.inner_options):
            # a memo of other factors, backend or options is not read: a fresh one
            self.memo = InnerMemo(m4, self.inner, self.inner_options)

    def _solve(self, form: ConicForm, kind: str, backend: str | None = None) -> Solution:
        from ..solving import solve  # late import: solving imports the registry

        prog = Program(kind, self.program.data, build=lambda _data: form, decode=_no_decode)
        start = time.perf_counter()
        options = self.inner_options if backend is None else {}
        sol = solve(prog, backend or self.inner, **options)
        elapsed = time.perf_counter() - start
        self.time += elapsed
        self.times.append(elapsed)
        self.solves += 1
        if not sol.ok:
            raise _InnerFailure(sol)
        return sol

    def _solve_ipm(self, rho: float) -> Solution:
        start = time.perf_counter()
        if self._ipm is None:
            from ._m4_ipm import SlackIPM

            self._ipm = SlackIPM(self.program.data["m4"])
        res = self._ipm.solve(rho, **self.inner_options)
        elapsed = time.perf_counter() - start
        self.ipm_steps += res.iterations
        self.time += elapsed
        self.times.append(elapsed)
        self.solves += 1
        ok = np.all(np.isfinite(res.w)) and math.isfinite(res.b)
        # a stalled run still carries its best iterate; the program's recomputed
        # certificate judges the point the outer search returns
        status = Status.OPTIMAL if res.converged else \
            Status.OPTIMAL_INACCURATE if ok and res.residual <= 1e-5 else Status.SOLVER_ERROR
        sol = Solution(status=status, solver="m4-ipm", objective=res.objective,
                       values={"w": res.w, "b": np.array(res.b)}, duals=res.duals,
                       iterations=res.iterations, solve_time=elapsed,
                       residuals=Residuals(primal=res.residual, dual=res.residual,
                                           gap=res.residual, source="solver"),
                       message=res.message)
        if not sol.ok:
            # the structured IPM broke down at this rho: the generic route, counted
            self.fallbacks += 1
            form = self.program.form
            form.parameters["rho"].value = rho
            return self._solve(form, "socp.m4.slack", "clarabel")
        return sol

    def check(self, rho: float, scale_pos: float = 1.0, scale_neg: float = 1.0) -> Solution:
        """Solve the fixed-ρ SOCP (feasibility check or slack problem) at ``rho``; a soft
        program's solution is read from the memo where it holds ``rho``."""
        if self.memo is not None:  # soft: unit scales (the slack SOCP has none)
            if scale_pos != 1.0 or scale_neg != 1.0:
                raise OptionError("the soft-margin slack SOCP has unit scales only")
            rho = float(rho)
            if rho in self.memo.solutions:
                self.reused += 1
                return self.memo.solutions[rho]
            sol = self._check(rho, 1.0, 1.0)
            self.memo.solutions[rho] = sol
            return sol
        return self._check(rho, scale_pos, scale_neg)

    def _check(self, rho: float, scale_pos: float, scale_neg: float) -> Solution:
        data = self.program.data
        if self.inner == "m4-ipm":
            return self._solve_ipm(rho)
        if self.rebuild:
            if scale_pos != 1.0 or scale_neg != 1.0:
                raise OptionError("rebuild=True supports unit scales only")
            form = data["m4"].inner_problem(rho)
        else:
            form = self.program.form
            form.parameters["rho"].value = float(rho)
            if "scale_pos" in form.parameters:
                form.parameters["scale_pos"].value = float(scale_pos)
                form.parameters["scale_neg"].value = float(scale_neg)
        kind = "socp.m4.check" if data["hard"] else "socp.m4.slack"
        return self._solve(form, kind)

    def _mpm_by_ils_newton(self) -> np.ndarray | None:
        """:math:`w` of the MPM bound by ``ils-newton`` (kind ``socp.mpm``)."""
        from .. import registry  # through the registry: no solver module imports another

        m4 = self.program.data["m4"]
        Sx, Sy = _gram(m4.R_pos), _gram(m4.R_neg)
        mpm = SimpleNamespace(kind=kinds.MPM, data={
            "d": m4.d, "Sx": Sx, "Sy": Sy, "Rx": m4.R_pos, "Ry": m4.R_neg,
            "a": (0.0, 0.0), "b": (1.0, 1.0)})
        start = time.perf_counter()
        try:
            sol = registry.get("ils-newton", kind=kinds.MPM).function(mpm)
        except Exception:  # noqa: BLE001 - any failure: the generic route below
            return None
        finally:
            self.time += time.perf_counter() - start
        if sol.status is not Status.OPTIMAL or "v" not in sol.values:
            return None
        self.solves += 1
        return np.asarray(sol.values["v"], dtype=float)

    def kappa_mpm(self) -> tuple[float, np.ndarray]:
        r""":math:`\kappa^*_{MPM} = 1/\min(\sigma_x+\sigma_y)` and its :math:`w` (``inf`` if 0).

        With ``inner="m4-ipm"`` by ``ils-newton`` (one Cholesky factorisation per step;
        the MPM bound is Lanckriet's MPM, kind ``socp.mpm``), else (or if that fails) by
        the generic backend on :meth:`M4Data.mpm_bound_problem`.
        """
        if self.memo is not None and self.memo.kappa is not None:
            self.reused += 1
            return self.memo.kappa
        kappa = self._kappa_mpm()
        if self.memo is not None:
            self.memo.kappa = kappa
        return kappa

    def _kappa_mpm(self) -> tuple[float, np.ndarray]:
        w = self._mpm_by_ils_newton() if self.inner == "m4-ipm" else None
        if w is None:
            backend = "clarabel" if self.inner == "m4-ipm" else self.inner
            sol = self._solve(self.program.data["m4"].mpm_bound_problem(), "socp.m4.mpm",
                              backend)
            w = np.asarray(sol.values["w"], dtype=float)
        s_pos, s_neg = self.program.data["m4"].sigmas(w / float(self.program.data["d"] @ w))
        total = s_pos + s_neg
        scale = max(1.0, float(np.max(np.abs(w))))
        return (math.inf if total <= 1e-12 * scale else 1.0 / total), w


def _gram(R: np.ndarray) -> np.ndarray:
    r""":math:`R^\top R` by one symmetric rank-k update (half the flops of the product), on
    one BLAS thread."""
    from scipy.linalg.blas import dsyrk

    from .._utils.threads import one_blas_thread

    with one_blas_thread():
        S = dsyrk(1.0, np.asarray(R, dtype=float), trans=1, lower=1)
    S += np.tril(S, -1).T
    return S


def point(sol: Solution) -> tuple[np.ndarray, float]:
    """``(w, b)`` of an inner solution (``b = 0.0`` if no finite value fixes it)."""
    w = np.asarray(sol.values["w"], dtype=float)
    b = sol.values.get("b")
    b = float(b) if b is not None and np.ndim(b) == 0 and np.isfinite(b) else 0.0
    return w, b


