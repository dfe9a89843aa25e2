r"""Contract of the trust-region subproblem kinds ``sdp.trs`` and ``socp.trs.convex``.

.. math::

    \min_s\; g^\top s + \tfrac12 s^\top H s
    \quad\text{s.t.}\quad \|D s\|_2 \le \Delta,\qquad D = \operatorname{diag}(d),\ d > 0

(Tayal 2014, eq. 7.9, with the affine scaling of Coleman & Li used by the
bound-constrained trust region of section 7.3.1). :class:`TRSData` is what the
specialized ``more-sorensen`` solver reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TRSData", "trs_objective"]


@dataclass(frozen=True)
class TRSData:
    """The data of one trust-region subproblem.

    Attributes
    ----------
    H : ndarray of shape (n, n)
        Symmetric, possibly indefinite.
    g : ndarray of shape (n,)
    d : ndarray of shape (n,)
        Positive diagonal of the scaling :math:`D` (ones: the plain ball).
    delta : float
        Radius :math:`\\Delta > 0`.
    """

    H: np.ndarray
    g: np.ndarray
    d: np.ndarray
    delta: float

    @property
    def n(self) -> int:
        """Number of variables."""
        return int(self.g.size)

    def scaled(self) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`(\hat H, \hat g) = (D^{-1} H D^{-1}, D^{-1} g)`: the subproblem in
        :math:`u = D s`, whose constraint is the plain ball :math:`\|u\| \le \Delta`."""
        inv = 1.0 / self.d
        return self.H * inv[:, None] * inv[None, :], self.g * inv


def trs_objective(H: np.ndarray, g: np.ndarray, s: np.ndarray) -> float:
    """The quadratic model :math:`g^\\top s + \\tfrac12 s^\\top H s`."""
    return float(g @ s + 0.5 * s @ (H @ s))
