"""Small linear-algebra helpers shared by the formulations and the solvers."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["inverse_quadratic"]


def inverse_quadratic(R: np.ndarray, d: np.ndarray) -> float:
    r""":math:`d^\top (R^\top R)^{+} d`, ``inf`` if :math:`d` leaves the range of :math:`R^\top R`.

    With :math:`\Sigma = R^\top R` this is the squared Mahalanobis length of
    :math:`d`, and :math:`\min_{w^\top d = 1} \|Rw\| = (d^\top\Sigma^{+}d)^{-1/2}`
    (Cauchy–Schwarz). Computed from the SVD of :math:`R` (singular values below
    :math:`10^{-12}\,s_{max}` count as zero), never by forming :math:`\Sigma`.
    """
    _, s, Vt = np.linalg.svd(R, full_matrices=False)
    keep = s > 1e-12 * max(float(s.max(initial=0.0)), np.finfo(float).tiny)
    proj = Vt[keep] @ d
    if float(d @ d - proj @ proj) > 1e-10 * float(d @ d):
        return math.inf
    return float(np.sum((proj / s[keep]) ** 2))
