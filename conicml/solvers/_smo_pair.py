r"""The clipped two-variable update of SMO, shared by the NumPy and the compiled loop of ``smo``.

Plain Python on floats, so that :mod:`conicml.solvers.smo` calls it as it is and
:mod:`conicml.solvers._smo_numba` compiles the same function (``numba.njit``): the two
engines cannot drift apart.
"""

from __future__ import annotations

__all__ = ["TAU", "clip_pair"]

TAU = 1e-12  # curvature used when the exact one is <= 0 (LIBSVM's TAU)


def clip_pair(ai: float, aj: float, yi: float, yj: float, Gi: float, Gj: float,
              quad_ij: float, Ci: float, Cj: float) -> tuple[float, float]:
    r"""The new :math:`(\alpha_i, \alpha_j)` of one SMO step (LIBSVM's ``Solver::Solve``).

    The unconstrained minimiser along :math:`y_i\alpha_i + y_j\alpha_j = \text{const}`
    (curvature ``quad_ij``, floored at :data:`TAU`), clipped to the boxes
    :math:`0 \le \alpha_i \le C_i`, :math:`0 \le \alpha_j \le C_j`; ``Gi``, ``Gj`` are the
    gradient entries of the minimised dual.
    """
    if quad_ij <= 0:
        quad_ij = TAU
    if yi != yj:
        delta = (-Gi - Gj) / quad_ij
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0:
            if aj < 0:
                aj = 0.0
                ai = diff
        elif ai < 0:
            ai = 0.0
            aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        elif aj > Cj:
            aj = Cj
            ai = Cj + diff
    else:
        delta = (Gi - Gj) / quad_ij
        total = ai + aj
        ai -= delta
        aj += delta
        if total > Ci:
            if ai > Ci:
                ai = Ci
                aj = total - Ci
        elif aj < 0:
            aj = 0.0
            ai = total
        if total > Cj:
            if aj > Cj:
                aj = Cj
                ai = total - Cj
        elif ai < 0:
            ai = 0.0
            aj = total
    return ai, aj
