r"""The pairwise ranking loss by sorting: value, gradient and Hessian products in O(m log m).

For scores :math:`p \in \mathbb R^m` and ordinal levels :math:`\ell`, the loss is

.. math::

    L(p) = \sum_{(i,j):\,\ell_i > \ell_j} \ell_\epsilon(p_i - p_j),\qquad
    \ell_\epsilon(z) = \begin{cases} 1-\epsilon-z & z < 1-2\epsilon\\
    \frac{(1-z)^2}{4\epsilon} & 1-2\epsilon \le z < 1\\ 0 & z \ge 1\end{cases}

(thesis §2.3 / §3.5; :math:`\epsilon = 0` is the hinge). The pair matrix
:math:`P` (one row :math:`e_i - e_j` per pair; the thesis prints it with
:math:`m_+` columns, erratum: it has :math:`m`) is never formed. Per level
:math:`r`, the *upper* set is level :math:`r`, the *lower* set every level
below; sorting the lower scores once gives, for each upper :math:`i`, the pair
counts and score sums of its linear set :math:`\{j: p_j > p_i - 1 + 2\epsilon\}`
and quadratic set :math:`\{j: p_i - 1 < p_j \le p_i - 1 + 2\epsilon\}` by two
binary searches and prefix sums; symmetrically for each lower :math:`j`
against the sorted upper scores. The quadratic set is half-open,
:math:`1-2\epsilon \le z < 1`, as in (3.20); the searches use matching sides.
"""

from __future__ import annotations

import copy
import functools
import math
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas, cho_factor, solve_triangular

from .._utils.linalg import cholesky_solve
from .._utils.threads import one_blas_thread
from ..exceptions import OptionError, SolverError
from .ranking import RankingData

__all__ = ["EIG_RTOL", "EXACT_MAX_BASIS", "KernelMetric", "LinearizedRanking", "PairwiseLoss",
           "WhitenedFeatures", "count_pairs",
           "gap_bound", "gradient_parts", "linearize", "natural_relative_gradient", "objective",
           "pair_matrix", "point_parts", "ranking_objective", "relative_gradient", "shared_parts",
           "smoothed_hinge", "zero_gradient"]

#: Relative eigenvalue cut-off of the linearisation (3.16).
EIG_RTOL = 1e-13

#: Largest basis for which ``rank-tr``'s ``direction="auto"`` turns to the exact Newton
#: direction: its explicit Hessian costs :math:`O(m|\mathcal R|^2)`, about as much as the
#: :math:`2\,\text{cg\_max\_iter}\cdot m|\mathcal R|` of a PCG run to its cap up to there.
EXACT_MAX_BASIS = 512


def smoothed_hinge(z: np.ndarray, eps: float) -> np.ndarray:
    r"""Elementwise :math:`\ell_\epsilon(z)` (``eps=0``: the hinge :math:`\max(0, 1-z)`)."""
    z = np.asarray(z, dtype=float)
    if eps == 0.0:
        return np.maximum(0.0, 1.0 - z)
    return np.where(z < 1 - 2 * eps, 1 - eps - z,
                    np.where(z < 1, (1 - z) ** 2 / (4 * eps), 0.0))


def count_pairs(levels: np.ndarray) -> int:
    r"""Number of pairs :math:`N = \sum_{r<s} m_r m_s` with different levels."""
    counts = np.bincount(np.asarray(levels, dtype=np.int64))
    below = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return int(np.sum(counts.astype(np.int64) * below))


def pair_matrix(levels: np.ndarray) -> sp.csr_matrix:
    """The explicit sparse pair matrix P (N x m): row ``(i, j)`` is ``e_i - e_j``, levels i > j.

    Only for small problems (the generic backends and the tests).
    """
    levels = np.asarray(levels, dtype=np.int64)
    m = levels.size
    rows_i, rows_j = [], []
    for r in np.unique(levels):
        up = np.flatnonzero(levels == r)
        lo = np.flatnonzero(levels < r)
        if up.size and lo.size:
            ii, jj = np.meshgrid(up, lo, indexing="ij")
            rows_i.append(ii.ravel())
            rows_j.append(jj.ravel())
    if not rows_i:
        return sp.csr_matrix((0, m))
    i = np.concatenate(rows_i)
    j = np.concatenate(rows_j)
    n = i.size
    data = np.concatenate([np.ones(n), -np.ones(n)])
    rr = np.concatenate([np.arange(n), np.arange(n)])
    cc = np.concatenate([i, j])
    return sp.csr_matrix((data, (rr, cc)), shape=(n, m))


@dataclass
class _Block:
    up: np.ndarray  # indices of the upper level
    lo: np.ndarray  # indices of every lower level


@dataclass
class _BlockState:
    order_lo: np.ndarray
    k0: np.ndarray  # per upper i: lower (sorted) positions [k0, k1) are quadratic
    k1: np.ndarray
    order_up: np.ndarray
    kl: np.ndarray  # per lower j: upper (sorted) positions [kl, kq) are quadratic
    kq: np.ndarray


class PairwiseLoss:
    r"""The summed pairwise loss of levelled samples, evaluated by sorting.

    Parameters
    ----------
    levels : ndarray of int, shape (m,)
        Ordinal level of each sample; pairs are all ``levels[i] > levels[j]``.
    eps : float
        Smoothing (``0`` = hinge; then ``hess_vec`` is zero).

    Notes
    -----
    With :math:`g_p = \nabla L(p)` and the generalized Hessian
    :math:`H_p = \frac1{2\epsilon}P^\top I^{\mathcal Q} P` (transposes restored,
    erratum to (3.22)), the RankRC gradient and Hessian products are
    :math:`\frac1N K_{\bullet\mathcal R}^\top g_p + \lambda K_{\mathcal R\mathcal R}\beta`
    and :math:`\frac1N K_{\bullet\mathcal R}^\top H_p K_{\bullet\mathcal R}s + \lambda
    K_{\mathcal R\mathcal R}s`, never forming :math:`A = PK_{\bullet\mathcal R}`.
    """

    def __init__(self, levels: np.ndarray, eps: float) -> None:
        self.levels = np.asarray(levels, dtype=np.int64)
        self.eps = float(eps)
        self.m = self.levels.size
        self.blocks: list[_Block] = []
        for r in np.unique(self.levels):
            up = np.flatnonzero(self.levels == r)
            lo = np.flatnonzero(self.levels < r)
            if up.size and lo.size:
                self.blocks.append(_Block(up, lo))
        self.n_pairs = count_pairs(self.levels)

    def evaluate(self, p: np.ndarray) -> tuple[float, np.ndarray, list[_BlockState]]:
        """Return ``(L(p), grad L(p), state)``; ``state`` feeds :meth:`hess_vec`."""
        p = np.asarray(p, dtype=float)
        p = p - p.mean() if p.size else p  # the loss is shift invariant; centring helps round-off
        eps = self.eps
        knot = 1.0 - 2.0 * eps  # z < knot: linear piece; knot <= z < 1: quadratic piece
        if knot > 0.0 and not np.any(p):
            return self._at_constant()
        loss = 0.0
        grad = np.zeros(self.m)
        states: list[_BlockState] = []
        for blk in self.blocks:
            a, b = p[blk.up], p[blk.lo]
            nb = b.size
            ob = np.argsort(b, kind="stable")
            bs = b[ob]
            c1 = np.concatenate([[0.0], np.cumsum(bs)])
            k0 = np.searchsorted(bs, a - 1.0, side="right")
            k1 = np.searchsorted(bs, a - knot, side="right") if eps > 0 else k0
            cl = nb - k1
            sum_l = c1[nb] - c1[k1]
            loss += float(np.sum(cl * (1.0 - eps - a)) + np.sum(sum_l))
            grad_a = -cl.astype(float)
            if eps > 0:
                c2 = np.concatenate([[0.0], np.cumsum(bs * bs)])
                cq = k1 - k0
                sq = c1[k1] - c1[k0]
                sq2 = c2[k1] - c2[k0]
                t = 1.0 - a
                quad = cq * t * t + 2.0 * t * sq + sq2
                loss += float(np.sum(np.maximum(quad, 0.0))) / (4.0 * eps)
                grad_a -= (cq * t + sq) / (2.0 * eps)
            oa = np.argsort(a, kind="stable")
            as_ = a[oa]
            d1 = np.concatenate([[0.0], np.cumsum(as_)])
            kl = np.searchsorted(as_, b + knot, side="left")
            kq = np.searchsorted(as_, b + 1.0, side="left") if eps > 0 else kl
            grad_b = kl.astype(float)
            if eps > 0:
                cqb = kq - kl
                grad_b += (cqb * (1.0 + b) - (d1[kq] - d1[kl])) / (2.0 * eps)
            grad[blk.up] += grad_a
            grad[blk.lo] += grad_b
            states.append(_BlockState(ob, k0, k1, oa, kl, kq))
        return loss, grad, states

    def _at_constant(self) -> tuple[float, np.ndarray, list[_BlockState]]:
        r""":meth:`evaluate` at equal scores (:math:`\beta = 0`), in closed form: every
        pair has :math:`z = 0 < 1 - 2\epsilon`, in the linear piece, so
        :math:`L = N(1-\epsilon)`, each upper sample's gradient is minus its number of
        lower ones and each lower sample's its number of upper ones; no pair is quadratic
        (the sort orders are the identity, as a stable sort of equal scores leaves them)."""
        grad = np.zeros(self.m)
        states: list[_BlockState] = []
        for blk in self.blocks:
            na, nb = blk.up.size, blk.lo.size
            grad[blk.up] -= nb
            grad[blk.lo] += na
            states.append(_BlockState(np.arange(nb), np.zeros(na, dtype=np.intp),
                                      np.zeros(na, dtype=np.intp), np.arange(na),
                                      np.full(nb, na, dtype=np.intp),
                                      np.full(nb, na, dtype=np.intp)))
        return self.n_pairs * (1.0 - self.eps), grad, states

    def hess_vec(self, states: list[_BlockState], u: np.ndarray) -> np.ndarray:
        r"""Generalized Hessian product :math:`\frac1{2\epsilon}P^\top I^{\mathcal Q}Pu`."""
        out = np.zeros(self.m)
        if self.eps == 0.0:
            return out
        u = np.asarray(u, dtype=float)
        for blk, st in zip(self.blocks, states):
            ua, ub = u[blk.up], u[blk.lo]
            cu = np.concatenate([[0.0], np.cumsum(ub[st.order_lo])])
            va = (st.k1 - st.k0) * ua - (cu[st.k1] - cu[st.k0])
            cv = np.concatenate([[0.0], np.cumsum(ua[st.order_up])])
            vb = (st.kq - st.kl) * ub - (cv[st.kq] - cv[st.kl])
            out[blk.up] += va
            out[blk.lo] += vb
        return out / (2.0 * self.eps)

    def hessian_form(self, states: list[_BlockState], X: np.ndarray) -> np.ndarray:
        r""":math:`X^\top H_pX` for a matrix :math:`X` of shape ``(m, r)``, without the
        :math:`r` products.

        :math:`2\epsilon H_p = D - A` is the Laplacian of the graph of the pairs in the
        quadratic piece (:math:`D` their counts per sample, :math:`A` their adjacency), so
        :math:`2\epsilon X^\top H_pX = X^\top DX - (X_{up}^\top W + W^\top X_{up})`
        per level block, with :math:`W_i = \sum_j x_j` over the quadratic window of the
        upper sample :math:`i` (prefix sums of the sorted lower rows).
        """
        X = np.asarray(X, dtype=float)
        r = X.shape[1]
        if self.eps == 0.0:
            return np.zeros((r, r))
        counts = self.quadratic_counts(states)
        active = counts > 0
        B = X[active] * np.sqrt(counts[active])[:, None]
        out = np.triu(blas.dsyrk(1.0, B.T, trans=0))  # B^T B: its upper triangle
        out += np.triu(out, 1).T
        for blk, st in zip(self.blocks, states):
            rows = st.k1 > st.k0
            if not np.any(rows):
                continue
            k0, k1 = st.k0[rows], st.k1[rows]
            start, end = int(k0.min()), int(k1.max())
            # prefix sums of the sorted lower rows at the windows' ends only: the rows
            # between consecutive ends summed (reduceat), then those few sums accumulated
            ends = np.unique(np.concatenate([k0, k1]))
            segments = np.add.reduceat(X[blk.lo[st.order_lo[start:end]]],
                                       ends[:-1] - start, axis=0)
            cu = np.zeros((ends.size, r))
            np.cumsum(segments, axis=0, out=cu[1:])
            W = cu[np.searchsorted(ends, k1)] - cu[np.searchsorted(ends, k0)]
            cross = X[blk.up[rows]].T @ W
            out -= cross + cross.T
        return out / (2.0 * self.eps)

    def quadratic_counts(self, states: list[_BlockState]) -> np.ndarray:
        """Per sample, the number of its pairs in the quadratic piece (for a preconditioner)."""
        out = np.zeros(self.m)
        for blk, st in zip(self.blocks, states):
            out[blk.up] += st.k1 - st.k0
            out[blk.lo] += st.kq - st.kl
        return out


class KernelMetric:
    r"""The norm :math:`\|v\|_{K^{-1}} = \sqrt{v^\top K_{\mathcal R\mathcal R}^{-1}v}`.

    One Cholesky factor of the program's Gram block.

    Gradients in :math:`\beta` live in the dual of the RKHS metric: with
    :math:`K_{\bullet\mathcal R} = \tilde X\Lambda^{1/2}U^\top`,
    :math:`\|g_\beta\|_{K^{-1}} = \|g_w\|` is the gradient of the linearised
    problem (3.17), free of the ill-conditioning of :math:`K_{\mathcal R\mathcal R}`.
    The program's :math:`K_{\mathcal R\mathcal R}` carries a jitter and is positive
    definite; if Cholesky still fails, a further :math:`10^{-8}` relative jitter is added.
    """

    def __init__(self, KRR: np.ndarray) -> None:
        # one BLAS thread: OpenBLAS's threaded Cholesky is many times slower than the
        # serial one when the cores are shared
        self.exact = True  # the factor is that of K_RR itself (no jitter added here)
        with one_blas_thread():
            try:
                self.factor = cho_factor(KRR, lower=True, check_finite=False)
            except np.linalg.LinAlgError:
                self.exact = False
                d = max(float(np.mean(np.diag(KRR))), np.finfo(float).tiny)
                self.factor = cho_factor(KRR + 1e-8 * d * np.eye(KRR.shape[0]), lower=True,
                                         check_finite=False)

    def solve(self, v: np.ndarray) -> np.ndarray:
        r""":math:`K_{\mathcal R\mathcal R}^{-1}v`."""
        return cholesky_solve(self.factor, np.asarray(v, dtype=float))

    def norm(self, v: np.ndarray) -> float:
        r""":math:`\|v\|_{K^{-1}}`."""
        return math.sqrt(max(float(v @ self.solve(v)), 0.0))


class WhitenedFeatures:
    r"""The basis features in the coordinates :math:`z = L^\top\beta` of the Cholesky
    factor :math:`K_{\mathcal R\mathcal R} = LL^\top` of :class:`KernelMetric`:
    :math:`X_L = K_{\bullet\mathcal R}L^{-\top}` (:math:`m \times |\mathcal R|`).

    CG on :math:`Hs = -g` preconditioned by :math:`K_{\mathcal R\mathcal R}` is plain CG
    on :math:`L^{-1}HL^{-\top} = X_L^\top H_pX_L/N + \lambda I` in :math:`z`: the same
    iterates in exact arithmetic, with two passes over :math:`X_L` per product instead of
    three (:math:`K_{\bullet\mathcal R}`, its transpose, :math:`K_{\mathcal R\mathcal
    R}`) and two triangular ones (the preconditioner). Forming :math:`X_L` costs
    :math:`m|\mathcal R|^2` flops (one triangular solve with :math:`m` right-hand sides),
    so a λ path forms it once and passes it to its solves (``rank-tr``'s ``whitened``).
    Only for a factor of :math:`K_{\mathcal R\mathcal R}` itself (``metric.exact``):
    with the metric's fallback jitter :math:`L^{-1}K_{\mathcal R\mathcal R}L^{-\top}
    \ne I`.
    """

    def __init__(self, data: RankingData) -> None:
        self.metric = shared_parts(data).metric()
        if not self.metric.exact:
            raise SolverError("WhitenedFeatures: the Cholesky factor of K_RR needed a jitter "
                              "of its own; the whitened products would not be this program's")
        self.KR, self.KRR = data.KR, data.KRR
        with one_blas_thread():  # (r, m) in Fortran order: X_L in C order, rows contiguous
            self.X = solve_triangular(self.metric.factor[0], data.KR.T, lower=True,
                                      check_finite=False).T

    def fits(self, data: RankingData) -> bool:
        """Whether these are the features of ``data``'s kernel arrays (the same objects)."""
        return self.KR is data.KR and self.KRR is data.KRR

    def to_z(self, v: np.ndarray) -> np.ndarray:
        r""":math:`L^{-1}v` (a gradient in :math:`\beta` to :math:`z`)."""
        return solve_triangular(self.metric.factor[0], v, lower=True, check_finite=False)

    def to_beta(self, z: np.ndarray) -> np.ndarray:
        r""":math:`L^{-\top}z` (a step in :math:`z` to :math:`\beta`)."""
        return solve_triangular(self.metric.factor[0], z, lower=True, trans="T",
                                check_finite=False)

    def lift(self, h: np.ndarray) -> np.ndarray:
        r""":math:`Lh` (a Hessian product in :math:`z` to :math:`\beta`: :math:`Hs =
        L(L^{-1}HL^{-\top})L^\top s`)."""
        return blas.dtrmv(self.metric.factor[0], h, lower=1)

    def lift_t(self, v: np.ndarray) -> np.ndarray:
        r""":math:`L^\top v` (a step in :math:`\beta` to :math:`z`)."""
        return blas.dtrmv(self.metric.factor[0], v, lower=1, trans=1)


#: Largest linearised feature matrix :math:`\tilde X` (bytes) that :class:`SharedParts`
#: keeps for the next solve of the same kernel arrays (a larger one is shared only while
#: in use).
SHARED_BYTES = 64 * 2**20


class SharedParts:
    r"""What every :math:`\lambda` of one program's kernel arrays shares: the pair
    structure (:class:`PairwiseLoss`), the Cholesky factor of
    :math:`K_{\mathcal R\mathcal R}` (:class:`KernelMetric`), :math:`F(0)` and the
    loss gradient at :math:`\beta = 0` (:func:`zero_gradient`), and the linearisation
    (3.16) (:meth:`linearized`), each computed when first asked for. Found again by
    :func:`shared_parts`."""

    def __init__(self, data: RankingData) -> None:
        self._KR, self._KRR = weakref.ref(data.KR), weakref.ref(data.KRR)
        # private copies: a block or levels changed in place is a different program
        self._KRR_values, self._levels = data.KRR.copy(), np.array(data.levels, copy=True)
        self._eps = float(data.eps)
        self.loss = PairwiseLoss(data.levels, data.eps)
        self._metric: KernelMetric | None = None
        self._zero: tuple[float, np.ndarray] | None = None
        self._linearized: dict[float, tuple] = {}  # eig_rtol -> T, X~ (or weak references)

    def fits(self, data: RankingData) -> bool:
        r"""Whether ``data`` has these kernel arrays (the same objects, :math:`K_{\mathcal
        R\mathcal R}` equal in value), levels and smoothing, at any λ."""
        return (self._KR() is data.KR and self._KRR() is data.KRR
                and self._eps == float(data.eps)
                and np.array_equal(self._KRR_values, data.KRR)
                and np.array_equal(self._levels, data.levels))

    def metric(self) -> KernelMetric:
        r"""The :class:`KernelMetric` of :math:`K_{\mathcal R\mathcal R}`, factored once."""
        if self._metric is None:
            self._metric = KernelMetric(self._KRR_values)
        return self._metric

    def linearized(self, data: RankingData, eig_rtol: float) -> tuple[np.ndarray, np.ndarray]:
        r"""``(T, X~)`` of :func:`linearize` at ``eig_rtol`` for ``data`` (which
        :meth:`fits`), computed once. :math:`\tilde X` is as large as
        :math:`K_{\bullet\mathcal R}`: up to :data:`SHARED_BYTES` it is kept here, a
        larger one only as long as a :class:`LinearizedRanking` holds it."""
        held = self._linearized.get(eig_rtol)
        if held is not None:
            T, Xt = (held[0](), held[1]()) if isinstance(held[0], weakref.ref) else held
            if T is not None and Xt is not None:
                return T, Xt
        T, Xt = linearize(data.KR, data.KRR, eig_rtol)
        self._linearized[eig_rtol] = ((T, Xt) if Xt.nbytes <= SHARED_BYTES
                                      else (weakref.ref(T), weakref.ref(Xt)))
        return T, Xt

    def zero(self, data: RankingData) -> tuple[float, np.ndarray]:
        """:func:`zero_gradient` of ``data`` (which :meth:`fits`), computed once."""
        if self._zero is None:
            self._zero = zero_gradient(data, self.loss)
        return self._zero


_SHARED = threading.local()


def shared_parts(data: RankingData) -> SharedParts:
    r"""The :class:`SharedParts` of ``data``'s kernel arrays: the last one of this thread
    if it :meth:`~SharedParts.fits` ``data`` (along a λ path, whose programs share their
    arrays: :func:`~conicml.formulations.ranking.with_lambda`), else a new one. A solve
    and its certificate, and the values of a path, factor
    :math:`K_{\mathcal R\mathcal R}` and build the pair structure once."""
    parts = getattr(_SHARED, "parts", None)
    if parts is None or not parts.fits(data):
        parts = _SHARED.parts = SharedParts(data)
    return parts


def relative_gradient(g_norm: float, g_loss: float, g_reg: float, scale: float) -> float:
    """``|g| / max(|g_loss|, |g_reg|, 1e-3 scale)``; 0 when the problem has no gradient at all."""
    denom = max(g_loss, g_reg, 1e-3 * scale)
    if denom <= 0.0:
        return 0.0
    return g_norm / denom


def objective(data, beta: np.ndarray) -> float:
    r""":math:`F(\beta)` alone for a RankingData contract (no gradient: one product with
    :math:`K_{\bullet\mathcal R}`; none at :math:`\beta = 0`)."""
    beta = np.asarray(beta, dtype=float)
    loss_fn = shared_parts(data).loss
    if not np.any(beta):
        return loss_fn.evaluate(np.zeros(loss_fn.m))[0] / loss_fn.n_pairs
    loss = loss_fn.evaluate(data.KR @ beta)[0]
    return loss / loss_fn.n_pairs + 0.5 * data.lam * float(beta @ (data.KRR @ beta))


_LAST_POINT = threading.local()


def point_parts(data: RankingData, beta: np.ndarray,
                loss_fn: PairwiseLoss | None = None) -> tuple:
    r"""Everything at ``beta`` evaluated from the data: ``(F, loss gradient, regulariser
    gradient, loss gradient in the scores, sort state, p, K_RR beta)`` with the scores
    :math:`p = K_{\bullet\mathcal R}\beta` computed afresh.

    The first three are kept (one point per thread, for this ``data`` object and a copy
    of ``beta``): :func:`gradient_parts` at an equal ``beta`` returns them instead of
    evaluating again (a solver's last point and the certificate of its answer).
    ``loss_fn``: ``shared_parts(data).loss``, when the caller holds it (looking it up
    compares :math:`K_{\mathcal R\mathcal R}` with the shared copy)."""
    beta = np.asarray(beta, dtype=float)
    if loss_fn is None:
        loss_fn = shared_parts(data).loss
    p = data.KR @ beta
    loss, gp, state = loss_fn.evaluate(p)
    kb = data.KRR @ beta
    n = loss_fn.n_pairs
    value, gl, gr = loss / n + 0.5 * data.lam * float(beta @ kb), data.KR.T @ gp / n, data.lam * kb
    _LAST_POINT.held = (weakref.ref(data), beta.copy(), value, gl.copy(), gr.copy())
    return value, gl, gr, gp, state, p, kb


def gradient_parts(data, beta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """``(F(beta), loss gradient, regulariser gradient)`` for a RankingData contract
    (:func:`point_parts`: the last point evaluated in this thread is not evaluated again)."""
    beta = np.asarray(beta, dtype=float)
    held = getattr(_LAST_POINT, "held", None)
    if held is not None and held[0]() is data and np.array_equal(held[1], beta):
        return held[2], held[3].copy(), held[4].copy()
    return point_parts(data, beta)[:3]


def zero_gradient(data, loss: PairwiseLoss | None = None) -> tuple[float, np.ndarray]:
    r""":math:`F(0)` and the loss gradient at :math:`\beta = 0` (the gradient there, the
    regulariser's being zero), without a product with :math:`K_{\bullet\mathcal R}`
    for the scores (all zero): ``(F(0), g_loss(0))``. Independent of :math:`\lambda`."""
    loss = loss or PairwiseLoss(data.levels, data.eps)
    value, gp, _ = loss.evaluate(np.zeros(loss.m))
    return value / loss.n_pairs, data.KR.T @ gp / loss.n_pairs


def natural_relative_gradient(data, beta: np.ndarray, metric: KernelMetric | None = None
                              ) -> float:
    r"""The certificate of the smoothed kinds: the relative gradient in the :math:`K^{-1}` metric,

    .. math::

        \frac{\|g\|_{K^{-1}}}{\max(\|g_{\rm loss}\|_{K^{-1}}, \|g_{\rm reg}\|_{K^{-1}},
        10^{-3}\|g_{\rm loss}(0)\|_{K^{-1}})}.
    """
    metric = metric or KernelMetric(data.KRR)
    _, gl, gr = gradient_parts(data, beta)
    _, gl0, _ = gradient_parts(data, np.zeros(data.n_basis))
    return relative_gradient(metric.norm(gl + gr), metric.norm(gl), metric.norm(gr),
                             metric.norm(gl0))


def ranking_objective(data, beta: np.ndarray) -> tuple[float, np.ndarray, float, float]:
    r"""Objective, gradient and the sizes of its two parts at ``beta`` for a
    :class:`~conicml.contracts.ranking.RankingData`.

    Returns ``(F, g, |loss gradient|, |regulariser gradient|)``.
    """
    value, gl, gr = gradient_parts(data, beta)
    return value, gl + gr, float(np.linalg.norm(gl)), float(np.linalg.norm(gr))


def linearize(KR: np.ndarray, KRR: np.ndarray, rtol: float = EIG_RTOL
              ) -> tuple[np.ndarray, np.ndarray]:
    r"""The linearisation (3.16): ``T = U Λ^{†1/2}`` and features ``X̃ = K_{•R} T``.

    Eigenvalues below ``rtol * λ_max`` are dropped (erratum: Λ^{†1/2}, not Λ^{1/2}).
    """
    lam, U = np.linalg.eigh(KRR)
    lam_max = max(float(lam[-1]), np.finfo(float).tiny)
    keep = lam > rtol * lam_max
    if not np.any(keep):
        raise ValueError("the kernel block of the basis is numerically zero")
    T = U[:, keep] / np.sqrt(lam[keep])
    return T, KR @ T


#: Relative gradient accepted when the objective can no longer decrease in floating point.
ROUNDING_TOL = 1e-5


class LinearizedRanking:
    r"""The linearised problem (3.17) in :math:`w`, with the pieces of a truncated Newton step.

    :math:`F(w) = \frac1N\sum\ell_\epsilon((\tilde x_i-\tilde x_j)^\top w) + \frac\lambda2\|w\|^2`
    with :math:`\tilde X = K_{\bullet\mathcal R}T` and :math:`T = U\Lambda^{\dagger1/2}`
    (:func:`linearize`); :math:`\beta = Tw` and :math:`w = \Lambda^{1/2}U^\top\beta`.
    Its Hessian is bounded below by :math:`\lambda I`, so Newton-CG with an Armijo
    search needs no trust region (thesis §3.5.2, Chapelle & Keerthi 2010).
    """

    def __init__(self, data: RankingData, eig_rtol: float = EIG_RTOL) -> None:
        parts = shared_parts(data)
        # T and X~ of these kernel arrays are computed once per thread (SharedParts): a λ
        # path, its solves and their certificates eigendecompose K_RR once
        self.T, self.Xt = parts.linearized(data, float(eig_rtol))
        self.KR, self.KRR = data.KR, data.KRR
        self.eig_rtol = float(eig_rtol)
        self.lam = float(data.lam)
        self.loss = parts.loss
        self.n = self.loss.n_pairs
        # the loss part of the last explicit Hessian formed in these coordinates (at any
        # point, any λ), shared with the copies of at_lambda: along a λ path it
        # preconditions the next Newton systems (see reference_curvature)
        self._reference: dict[str, np.ndarray] = {}

    def fits(self, data: RankingData, eig_rtol: float | None = None) -> bool:
        """Whether this linearisation is that of ``data`` at any λ: the same kernel arrays
        (the same objects), levels and smoothing (and ``eig_rtol`` when given)."""
        return (self.KR is data.KR and self.KRR is data.KRR
                and self.loss.eps == float(data.eps)
                and np.array_equal(self.loss.levels, data.levels)
                and (eig_rtol is None or self.eig_rtol == float(eig_rtol)))

    def at_lambda(self, lam: float) -> LinearizedRanking:
        r"""The same linearisation at another :math:`\lambda` (:math:`T`, :math:`\tilde X` and
        the pair structure shared, not copied): the eigendecomposition of
        :math:`K_{\mathcal R\mathcal R}` does not depend on :math:`\lambda`, so a
        :math:`\lambda` path computes it once."""
        other = copy.copy(self)
        other.lam = float(lam)
        return other

    def hessian(self, state: list) -> np.ndarray:
        r"""The explicit Hessian :math:`\lambda I + \tilde X^\top H_p\tilde X/N` at a sort
        state of :meth:`evaluate` (or of :meth:`PairwiseLoss.evaluate` on the same levels).

        :meth:`PairwiseLoss.hessian_form`: :math:`O(m r^2)` for :math:`r` features.
        """
        H = self.loss_hessian(state)
        H[np.diag_indices_from(H)] += self.lam
        return H

    def loss_hessian(self, state: list) -> np.ndarray:
        r"""The loss part :math:`\tilde X^\top H_p\tilde X/N` of :meth:`hessian` (no
        :math:`\lambda`), :math:`O(m r^2)`."""
        return self.loss.hessian_form(state, self.Xt) / self.n

    def hess_vec(self, state: list, d: np.ndarray) -> np.ndarray:
        r"""The Hessian product :math:`(\lambda I + \tilde X^\top H_p\tilde X/N)d`,
        :math:`O(m r)` (two products with :math:`\tilde X`)."""
        return self.Xt.T @ self.loss.hess_vec(state, self.Xt @ d) / self.n + self.lam * d

    def reference_lambda(self) -> float | None:
        r"""The :math:`\lambda` of the copy that kept :meth:`reference_curvature`, or ``None``."""
        return self._reference.get("lam")

    def reference_curvature(self) -> np.ndarray | None:
        r"""The loss Hessian :math:`A` last kept by :meth:`keep_curvature` with this
        linearisation or any of its :meth:`at_lambda` copies, or ``None``.

        :math:`\lambda I + A` is the Hessian at another point (another λ of a path): a
        preconditioner for conjugate gradients on the Newton systems here, factored in
        :math:`O(r^3)` against the :math:`O(m r^2)` of forming the Hessian anew."""
        return self._reference.get("loss_hessian")

    def keep_curvature(self, A: np.ndarray) -> None:
        """Keep the loss Hessian ``A`` (:meth:`loss_hessian`) for :meth:`reference_curvature`."""
        self._reference["loss_hessian"] = A
        self._reference["lam"] = self.lam

    def to_w(self, beta: np.ndarray) -> np.ndarray:
        r""":math:`w = T^\top K_{\mathcal R\mathcal R}\beta = \Lambda^{1/2}U^\top\beta`."""
        return self.T.T @ (self.KRR @ beta)

    def to_beta(self, w: np.ndarray) -> np.ndarray:
        r""":math:`\beta = Tw`."""
        return self.T @ w

    def evaluate(self, w: np.ndarray) -> tuple[float, np.ndarray, list, float, float]:
        """``(F(w), gradient, sort state, |loss gradient|, |regulariser gradient|)``."""
        value, gp, state = self.loss.evaluate(self.Xt @ w)
        gl = self.Xt.T @ gp / self.n
        gr = self.lam * w
        return (value / self.n + 0.5 * self.lam * float(w @ w), gl + gr, state,
                float(np.linalg.norm(gl)), float(np.linalg.norm(gr)))

    def newton_direction(self, g: np.ndarray, state: list, forcing: float,
                         cg_max_iter: int, precond: Any = None) -> tuple[np.ndarray, int]:
        r"""CG on :math:`(\lambda I + \tilde X^\top H_p\tilde X/N)s = -g` to ``|r| <= forcing``,
        preconditioned by ``precond(v)`` (:math:`M^{-1}v`) if given.

        Returns ``(s, CG steps)``.
        """
        s = np.zeros_like(g)
        r = -g.copy()
        z = r if precond is None else precond(r)
        d = z.copy()
        rz = float(r @ z)
        its = 0
        for _ in range(cg_max_iter):
            Hd = self.hess_vec(state, d)
            curvature = float(d @ Hd)
            if not curvature > 0.0:  # d = 0 or round-off: no further progress
                break
            alpha = rz / curvature
            s += alpha * d
            r -= alpha * Hd
            its += 1
            if float(np.linalg.norm(r)) <= forcing:
                break
            z = r if precond is None else precond(r)
            rz_new = float(r @ z)
            d = z + (rz_new / rz) * d
            rz = rz_new
        return s, its

    def line_search(self, w: np.ndarray, f: float, g: np.ndarray, s: np.ndarray
                    ) -> tuple[float, tuple | None]:
        """Armijo backtracking from ``w`` along ``s``: ``(t, evaluate(w + t s))``, or
        ``(t, None)`` if 60 halvings found no sufficient decrease."""
        slope = float(g @ s)
        t = 1.0
        for _ in range(60):
            trial = self.evaluate(w + t * s)
            if trial[0] <= f + 1e-4 * t * slope:
                return t, trial
            t *= 0.5
        return t, None

    def polish(self, w: np.ndarray, steps: int = 8, cg_max_iter: int = 100,
               done: Any = None) -> tuple[np.ndarray, float, np.ndarray]:
        """Up to ``steps`` Newton steps from ``w``: ``(w', F(w'), gradient at w')``.

        Every accepted step decreases :math:`F` (Armijo), so ``F(w') <= F(w)``.
        ``done(F, gradient)``, if given, is asked before each step and ends the steps
        when true.
        """
        f, g, state, _, _ = self.evaluate(w)
        precond = None
        for _ in range(steps):
            gnorm = float(np.linalg.norm(g))
            if gnorm == 0.0 or (done is not None and done(f, g)):
                break
            if precond is None:
                # the Hessian at the first point, formed once: its factor preconditions
                # CG at every step (the first direction is then exact)
                try:
                    factor = cho_factor(self.hessian(state), lower=True, check_finite=False)
                    precond = functools.partial(cholesky_solve, factor)
                except np.linalg.LinAlgError:
                    precond = _identity
            s, _ = self.newton_direction(g, state, 1e-12 * gnorm, cg_max_iter, precond)
            if not float(g @ s) < 0.0:
                break
            t, trial = self.line_search(w, f, g, s)
            if trial is None:
                break
            w = w + t * s
            f, g, state = trial[0], trial[1], trial[2]
        return w, f, g


def _identity(v: np.ndarray) -> np.ndarray:
    return v


def gap_bound(data: RankingData, beta: np.ndarray, metric: KernelMetric | None = None,
              polish_above: float = 1e-10) -> float:
    r"""A rigorous bound on the relative suboptimality of ``beta`` (smoothed loss).

    :math:`F` is :math:`\lambda`-strongly convex in the norm of the program's
    positive-definite :math:`K_{\mathcal R\mathcal R}` (the loss is convex), so for
    any point :math:`\hat\beta`

    .. math::

        F(\beta) - F^\star \le \big[F(\beta) - F(\hat\beta)\big]_+
        + \frac{\|\nabla F(\hat\beta)\|^2_{K^{-1}}}{2\lambda}.

    With :math:`\hat\beta = \beta` this is the Fenchel gap of the dual point
    :math:`s = -\ell_\epsilon'(P K_{\bullet\mathcal R}\beta)`, computed in
    :math:`\beta` with one Cholesky factor. It is loose where the loss is much more
    curved than :math:`\lambda K` (a nearly exact point can have a large gradient there),
    and round-off in :math:`\nabla F(\beta)` is amplified by :math:`K^{-1}`. When it
    exceeds ``polish_above`` the bound is recomputed in the eigen-coordinates
    :math:`w = \Lambda^{1/2}U^\top\beta` of every positive eigenvalue (where
    :math:`\|\nabla_\beta F\|_{K^{-1}} = \|\nabla_w F\|` and :math:`F` is
    :math:`\lambda`-strongly convex in the Euclidean norm), with :math:`\hat w` a few
    Newton steps from :math:`w` (:class:`LinearizedRanking`), which stop once the bound
    is below ``polish_above`` (any :math:`\hat w` gives a valid bound: the steps only
    tighten it); the smallest bound is kept.
    The result is divided by :math:`\max(F(\beta), 10^{-3}F(0))`; ``inf`` if ``beta`` is
    not finite.
    """
    beta = np.asarray(beta, dtype=float)
    if not np.all(np.isfinite(beta)):
        return math.inf
    parts = shared_parts(data)
    metric = metric or parts.metric()
    lam = float(data.lam)
    f0 = parts.loss.evaluate(np.zeros(data.n_samples))[0] / parts.loss.n_pairs  # F(0)
    value, gl, gr = gradient_parts(data, beta)
    bound = metric.norm(gl + gr) ** 2 / (2.0 * lam)
    scale = max(value, 1e-3 * f0, np.finfo(float).tiny)
    if bound / scale > polish_above:
        # every eigenvalue of the jittered block (its jitter is far above eps lam_max)
        lin = LinearizedRanking(data, eig_rtol=float(np.finfo(float).eps))
        w = lin.to_w(beta)
        f_w = lin.evaluate(w)[0]

        def tightened(f_hat: float, g_hat: np.ndarray) -> bool:
            nonlocal bound
            bound = min(bound, f_w - f_hat + float(g_hat @ g_hat) / (2.0 * lam))
            return bound / scale <= polish_above

        _, f_hat, g_hat = lin.polish(w, done=tightened)
        tightened(f_hat, g_hat)
    return bound / scale


def _contract(program: Any) -> RankingData:
    rank = program.data.get("rank") if hasattr(program, "data") else None
    if not isinstance(rank, RankingData):
        raise SolverError("the program carries no RankingData contract under data['rank']")
    if rank.eps <= 0:
        raise SolverError("the ranking solvers need the smoothed loss (eps > 0)")
    return rank


def _start(rank: RankingData, x0: Any, name: str) -> np.ndarray:
    if x0 is None:
        return np.zeros(rank.n_basis)
    beta = np.asarray(x0, dtype=float)
    if beta.shape != (rank.n_basis,) or not np.all(np.isfinite(beta)):
        raise OptionError(f"{name}: x0 must be a finite vector of shape ({rank.n_basis},) "
                          f"(one coefficient per basis sample), got shape {beta.shape}")
    return beta.copy()


def _fallback(rank: RankingData, x0_fallback: Any, name: str
              ) -> tuple[np.ndarray, float] | None:
    """``x0_fallback`` as ``(beta, objective)``; ``OptionError`` if it is not one."""
    if x0_fallback is None:
        return None
    try:
        beta, value = x0_fallback
        value = float(value)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise OptionError(f"{name}: x0_fallback must be a pair (beta, its finite objective "
                          f"at this lambda), got {type(x0_fallback).__name__}")
    return _start(rank, beta, f"{name} (x0_fallback)"), value
