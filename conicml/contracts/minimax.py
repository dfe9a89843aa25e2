r"""The contract of the MEMPM kind (``sequential.mempm``): :class:`MEMPMData`.

Built by :func:`conicml.formulations.minimax.mempm` into ``program.data["mempm"]``
and read by the line search over β (``quadratic-interpolation``). MEMPM (seed
004 eqs. 3.2–3.4) maximises :math:`F(\beta) = \theta\,\alpha^*(\beta) +
(1-\theta)\beta` over :math:`[\beta_{lo}, \beta_{0m}]`, one BMPM program per
evaluation; the contract builds those programs and evaluates :math:`F`, so the
solver needs nothing of the formulation module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..program import Program

__all__ = ["MEMPMData"]


@dataclass(frozen=True, eq=False)
class MEMPMData:
    r"""What a solver of the MEMPM kind needs.

    Attributes
    ----------
    theta : float
        Weight of the positive class's accuracy in :math:`F`.
    beta_lo, beta_end : float
        The search interval: 0 (½ for the Gaussian bound) and the largest
        attainable :math:`\beta_{0m}` (eq. 3.44).
    alpha_floor : float
        :math:`\alpha` where the inner BMPM is infeasible (eq. 3.40: 0, or ½
        for the Gaussian bound).
    endpoint_w : ndarray
        :math:`w \propto \Sigma_y^{-1}d`, normalised to :math:`w^\top d = 1`:
        the only hyperplane at :math:`\beta = \beta_{0m}`.
    make_inner : callable
        ``make_inner(beta, previous) -> Program``: the BMPM program at
        :math:`\beta_0 = \beta` (kind ``"socp.bmpm"``); given the previous inner
        program, it re-uses its compiled cvxpy problem (DPP: only the
        parameter :math:`a_y` changes).
    make_model : callable
        ``make_model(beta, w) -> dict``: the MEMPM model at :math:`(\beta, w)`
        (:math:`\kappa_\alpha` by eq. 3.21, clipped by 3.40).
    bound : {"chebyshev", "gaussian"}
        The map between :math:`\kappa` and an accuracy (the global certificate
        over β of ``quadratic-interpolation`` works in :math:`\kappa`).
    beta_stop : float, optional
        From this β on the solver uses the analytic end point
        (``alpha_floor``, ``endpoint_w``) instead of a BMPM solve: next to
        :math:`\beta_{0m}` the BMPM program degenerates (interior-point
        solvers fail) while :math:`\alpha^*(\beta)` is negligible. ``None``:
        ``beta_end``.
    The vectors ``w`` (``endpoint_w``, ``make_model``'s argument, the inner
    programs' solutions) are in the program's coordinates: for kernels, the
    feature-map coordinates, the ``"v"`` entry of a decoded model.
    """

    theta: float
    beta_lo: float
    beta_end: float
    alpha_floor: float
    endpoint_w: np.ndarray
    make_inner: Callable[[float, Program | None], Program]
    make_model: Callable[[float, np.ndarray], dict]
    bound: str = "chebyshev"
    beta_stop: float | None = None

    def value(self, beta: float, alpha: float) -> float:
        r""":math:`F = \theta\alpha + (1-\theta)\beta`."""
        return self.theta * alpha + (1.0 - self.theta) * beta

    def inner_bmpm(self, beta: float, previous: Program | None = None) -> Program:
        """The inner BMPM program at ``beta0 = beta`` (see ``make_inner``)."""
        return self.make_inner(float(beta), previous)

    def model(self, beta: float, w: np.ndarray) -> dict:
        """The MEMPM model at ``(beta, w)`` (see ``make_model``)."""
        return self.make_model(float(beta), np.asarray(w, dtype=float))
