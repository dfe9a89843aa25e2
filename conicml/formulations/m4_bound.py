r"""Theorem 15 of seed 004: the worst-case error bound of an M4 classifier (eq. 4.35).

The smaller of the leave-one-out bound :math:`m/N` and the Marshall–Olkin worst-case
error of the hyperplane under the class moments; the bound and its terms are in the
Notes of :func:`m4_error_bound`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..exceptions import ProgramError

__all__ = ["m4_error_bound", "worst_case_error"]


def worst_case_error(dx: float, dy: float, theta: float) -> float:
    r"""Marshall–Olkin worst-case error :math:`\theta/(1+d_x^2) + (1-\theta)/(1+d_y^2)`.

    A negative distance (the class mean on the wrong side) counts as worst-case
    error 1 for that class (App. A: :math:`d = (\cdot)_+/\sigma`).
    """
    ex = 1.0 / (1.0 + dx * dx) if dx > 0 else 1.0
    ey = 1.0 / (1.0 + dy * dy) if dy > 0 else 1.0
    return float(theta * ex + (1.0 - theta) * ey)


def m4_error_bound(data: Mapping[str, Any], model: Mapping[str, Any], *,
                   moments: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
                   ) -> dict[str, float]:
    r"""Theorem 15's bound for one decoded M4 model (eq. 4.35).

    Parameters
    ----------
    data : Mapping
        ``program.data`` of an M4 program (:func:`conicml.formulations.m4.m4`).
    model : Mapping
        Its decoded model (``w`` or ``v``, ``b``, ``support``).
    moments : (mean_pos, cov_pos, mean_neg, cov_neg), optional
        Moments to evaluate :math:`d_x, d_y` with (e.g. the population moments
        of a synthetic problem, linear kernel only); default: the program's
        plug-in moments (the thesis's choice).

    Returns
    -------
    dict
        ``dx``, ``dy``, ``theta``, ``chebyshev`` (the second term), ``loo``
        (:math:`m/N`) and ``bound`` (their minimum: the quantity whose
        expectation bounds the expected error).

    Notes
    -----
    For an M4 hyperplane :math:`f(z) = w^\top z + b` (package and chapter-4
    convention: :math:`x` iff :math:`f \ge 0`) with :math:`m` support vectors among
    :math:`N` training points,

    .. math::

        E[P_{error}] \le E\Big[\min\Big(\frac{m}{N},\
            \frac{\theta}{1 + d_x^2} + \frac{1 - \theta}{1 + d_y^2}\Big)\Big],
        \qquad d_x = \frac{w^\top\bar x + b}{\sigma_x(w)},\
        d_y = -\frac{w^\top\bar y + b}{\sigma_y(w)},

    :math:`\theta = N_x/N`. The first term is the leave-one-out bound (Lemma 14:
    removing a non-support vector leaves the solution unchanged when the
    covariances do not change); the second is the Marshall–Olkin worst-case error
    of the hyperplane under the class moments (Thm 1, Lemma 2, App. A; :math:`d_x, d_y` are the
    Mahalanobis distances of the means to the hyperplane, clipped at 0 when a mean
    is on the wrong side, where the worst-case error of that class is 1).
    """
    w = np.asarray(model["w"] if "w" in model else model["v"], dtype=float)
    b = float(model["b"])
    y = np.asarray(data["y"])
    N = y.size
    theta = float(np.sum(y > 0)) / N
    if moments is None:
        Z = np.asarray(data["Z"])
        mx, my = Z[y > 0].mean(axis=0), Z[y < 0].mean(axis=0)
        sx = float(np.linalg.norm(data["R_pos"] @ w))
        sy = float(np.linalg.norm(data["R_neg"] @ w))
    else:
        if "w" not in model:
            raise ProgramError("explicit moments are only meaningful for a linear M4 model")
        mx, Sx, my, Sy = (np.asarray(a, dtype=float) for a in moments)
        sx = float(np.sqrt(max(w @ Sx @ w, 0.0)))
        sy = float(np.sqrt(max(w @ Sy @ w, 0.0)))
    fx, fy = float(w @ mx + b), float(w @ my + b)
    dx = fx / sx if sx > 0 else (np.inf if fx > 0 else -np.inf)
    dy = -fy / sy if sy > 0 else (np.inf if fy < 0 else -np.inf)
    cheb = worst_case_error(dx, dy, theta)
    loo = len(model["support"]) / N
    return {"dx": float(dx), "dy": float(dy), "theta": theta, "chebyshev": cheb,
            "loo": float(loo), "bound": min(cheb, loo)}
