r"""Certificate pieces of the L2-loss (squared hinge) linear SVM, in O(nnz(X)).

The program (Hsieh, Chang, Lin, Keerthi, Sundararajan, ICML 2008, the L2-loss SVM of
eq. 1 with an unregularised bias and per-sample costs :math:`c_i`):

.. math::

    P^* = \min_{w,b,\xi}\ \tfrac12\|w\|^2 + \sum_i c_i\xi_i^2
    \quad\text{s.t.}\quad y_i(w^\top x_i + b) \ge 1 - \xi_i,

whose Lagrangian dual (eq. 4 with :math:`D_{ii} = 1/(2c_i)`, :math:`U = \infty`, plus the
equality of the bias) is

.. math::

    D^* = \max_{\alpha \ge 0,\ y^\top\alpha = 0}\ \mathbf 1^\top\alpha
    - \tfrac12\|X^\top(\alpha\circ y)\|^2 - \sum_i \frac{\alpha_i^2}{4c_i},

with :math:`w = X^\top(\alpha\circ y)` and :math:`\alpha_i = 2c_i\xi_i` at the optimum.
Any :math:`\alpha \ge 0` with :math:`y^\top\alpha = 0` bounds :math:`P^*` from below
(weak duality), and any :math:`(w, b)` with :math:`\xi_i = [1 - y_i(w^\top x_i + b)]_+`
from above.
"""

from __future__ import annotations

import numpy as np

__all__ = ["balanced", "dual_value", "primal_value", "squared_hinge_bias"]


def balanced(alpha: np.ndarray, y: np.ndarray) -> np.ndarray:
    r"""``alpha`` clipped at 0 with the heavier class scaled down so that
    :math:`y^\top\alpha = 0` (the dual's feasible set, which has no upper bound)."""
    a = np.maximum(np.asarray(alpha, dtype=float), 0.0)
    s_pos, s_neg = float(a[y > 0].sum()), float(a[y < 0].sum())
    if s_pos > s_neg:
        a = np.where(y > 0, a * (s_neg / s_pos), a)
    elif s_neg > s_pos:
        a = np.where(y < 0, a * (s_pos / s_neg), a)
    return a


def dual_value(alpha: np.ndarray, w: np.ndarray, c: np.ndarray) -> float:
    r""":math:`\mathbf 1^\top\alpha - \tfrac12\|w\|^2 - \sum_i\alpha_i^2/(4c_i)` at
    :math:`w = X^\top(\alpha\circ y)`."""
    return float(alpha.sum()) - 0.5 * float(w @ w) - float((alpha * alpha) @ (0.25 / c))


def primal_value(w: np.ndarray, f: np.ndarray, b: float, y: np.ndarray,
                 c: np.ndarray) -> float:
    r""":math:`\tfrac12\|w\|^2 + \sum_i c_i[1 - y_i(f_i + b)]_+^2` with :math:`f = Xw`."""
    xi = np.maximum(0.0, 1.0 - y * (f + b))
    return 0.5 * float(w @ w) + float(c @ (xi * xi))


def squared_hinge_bias(f: np.ndarray, y: np.ndarray, c: np.ndarray) -> float:
    r""":math:`\arg\min_b \sum_i c_i[1 - y_i(f_i + b)]_+^2`, exactly, in :math:`O(n\log n)`.

    With the breakpoints :math:`s_i = y_i - f_i`, the half-derivative in :math:`b` is
    :math:`h(b) = \sum_{i \in A(b)} c_i(b - s_i)` over the active terms
    :math:`A(b) = \{y_i = +1,\ b < s_i\} \cup \{y_i = -1,\ b > s_i\}`: continuous,
    piecewise linear and non-decreasing. Between two consecutive breakpoints the active
    set is fixed and the root is :math:`\sum_A c_is_i / \sum_A c_i`; the interval is the
    one where :math:`h` changes sign at the sorted breakpoints (cumulative sums).
    """
    s = y - f
    order = np.argsort(s, kind="stable")
    ss, cs, pos = s[order], c[order], y[order] > 0
    neg_c = np.concatenate([[0.0], np.cumsum(np.where(pos, 0.0, cs))])
    neg_cs = np.concatenate([[0.0], np.cumsum(np.where(pos, 0.0, cs * ss))])
    pc, pcs = np.where(pos, cs, 0.0), np.where(pos, cs * ss, 0.0)
    pos_c = np.concatenate([np.cumsum(pc[::-1])[::-1], [0.0]])
    pos_cs = np.concatenate([np.cumsum(pcs[::-1])[::-1], [0.0]])
    A = neg_c + pos_c  # k = 0..n: the first k sorted breakpoints lie below b
    B = neg_cs + pos_cs
    # h at the sorted breakpoints t_j (j = 1..n), with the active set of k = j
    h = A[1:] * ss - B[1:]
    up = np.flatnonzero(h >= 0.0)  # the root lies below the first t_j with h(t_j) >= 0
    k = int(up[0]) if up.size else ss.size
    if A[k] <= 0.0:  # no active term on that interval (not with both classes present)
        return float(ss[min(k, ss.size - 1)])
    return float(B[k] / A[k])
