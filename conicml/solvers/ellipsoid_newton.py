r"""``ellipsoid-newton``: the ellipsoid distance by Newton's method on its two multipliers.

Accepts the specified-rates programs (kinds ``"socp.chance.rates.primal"`` and
``"...dual"``, linear and kernel; seed 003 ch. 2), whose dual (2.13) is the distance
between :math:`B_\pm = \{z : (z-\mu_\pm)^\top\Sigma_\pm^{-1}(z-\mu_\pm) \le \kappa_\pm^2\}`.
Beside ``lin-han`` (the thesis's method, one matrix–vector product per step but many
steps when :math:`\Sigma` is ill-conditioned) it solves the same program with a
handful of factorisations. It stops when the certified bracket on
:math:`\tfrac12\|w^*\|^2` closes to ``upper - lower <= tol * upper``; the algorithm and
the certificate are in the Notes of :func:`solve_ellipsoid_newton`.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
from scipy.linalg.lapack import dpotrf as _potrf
from scipy.linalg.lapack import dpotrs as _potrs

from .. import kinds
from .._utils.threads import single_blas_thread
from ..exceptions import OptionError, SolverError
from ..registry import register
from ..solution import Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._ellipsoid_distance import (
    RATES_KINDS,
    check_rates_program,
    program_covariances,
    rates_solution,
)
from ._warm import ellipsoid_multipliers

__all__ = ["TERMINATION_MESSAGES", "solve_ellipsoid_newton"]

TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: certified relative gap (upper - lower) / upper <= tol", {
        4: "the ellipsoids intersect: the specified rates are infeasible",
        5: "stalled: the certified gap stopped decreasing (rounding floor of the bracket)",
    })

_EPS = float(np.finfo(float).eps)


def _norm(v: np.ndarray) -> float:
    """Euclidean norm of a vector (``np.linalg.norm`` without its call overhead)."""
    return math.sqrt(float(v @ v))


_SFMIN = float(np.finfo(float).tiny)


def _solve2(a00: float, a01: float, a10: float, a11: float, b0: float, b1: float
            ) -> tuple[float, float]:
    """``np.linalg.solve([[a00, a01], [a10, a11]], [b0, b1])`` in scalar arithmetic.

    Gaussian elimination with partial pivoting at order 2 (the multiplier by the pivot's
    reciprocal, then the two triangular solves), so it has the backward error of LAPACK's
    ``dgesv`` (Higham, Thm 9.4) at a tenth of the call's cost; the Newton steps are on
    two multipliers. :class:`numpy.linalg.LinAlgError` for an exactly singular matrix.
    """
    if abs(a10) > abs(a00):  # partial pivoting (the first of equal moduli is kept)
        a00, a01, a10, a11, b0, b1 = a10, a11, a00, a01, b1, b0
    if a00 == 0.0:
        raise np.linalg.LinAlgError("Singular matrix")
    l10 = a10 * (1.0 / a00) if abs(a00) >= _SFMIN else a10 / a00
    u11 = a11 - l10 * a01
    if u11 == 0.0:
        raise np.linalg.LinAlgError("Singular matrix")
    x1 = (b1 - l10 * b0) / u11
    return (b0 - a01 * x1) / a00, x1
#: Armijo's test is replaced by the gradient test once the predicted increase of g is
#: below this multiple of its rounding (``_Dual.value_scale``).
_FLAT = 1e3 * _EPS
#: Steps without a 0.1 % decrease of the best certified gap before stopping (stall).
_STALL = 8
#: Halvings tried on a secular step before Newton's step on g is taken instead.
_SECULAR_TRIES = 4
#: Largest condition number of A = [kappa_pos C_pos, kappa_neg C_neg] for the factor form
#: (its system holds A^T A: cond(A)^2 must stay well inside 1/eps).
_FACTOR_COND = 1e8
#: Below this certified gap the fitted pairs are tried at every step (else at idle ones).
_REFIT = 1e-6
#: ... or this many where the gap is within ``_AT_FLOOR`` times its rounding floor.
_STALL_AT_FLOOR = 2
_AT_FLOOR = 10.0

STATUS_MAP: dict[int, Status] = status_table({4: Status.INFEASIBLE,
                                              5: Status.OPTIMAL_INACCURATE})


def _solve_small(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.linalg.solve(A, b)`` with orders 1 and 2 in scalars (:func:`_solve2`)."""
    if A.shape == (2, 2):
        return np.array(_solve2(*A.ravel().tolist(), *b.tolist()))
    if A.shape == (1, 1):
        a, = A.ravel().tolist()
        if a == 0.0:
            raise np.linalg.LinAlgError("Singular matrix")
        return np.array([b.tolist()[0] / a])
    return np.linalg.solve(A, b)


class _Evaluation(dict):
    """An evaluation's quantities; ``"hess"`` is computed on first access (``hessian``)."""

    hessian: Any = None

    def __missing__(self, key: str) -> Any:
        if key == "hess" and self.hessian is not None:
            self["hess"] = value = self.hessian()
            return value
        raise KeyError(key)


def _columns(blocks: list[np.ndarray]) -> np.ndarray:
    """``np.column_stack(blocks)`` for vectors and matrices of ``n`` rows (same array)."""
    return np.concatenate([b[:, None] if b.ndim == 1 else b for b in blocks], axis=1)


class _Bracket:
    r"""The certified bracket on :math:`\tfrac12\|w^*\|^2` at a dual point (Notes of
    :func:`solve_ellipsoid_newton`): the feasible pairs (Lagrangian, tangent, least-squares
    fitted), the normals off the flat factors' spans and the bracket's rounding floor.

    A mixin of :class:`_Dual`: it reads the dual's data (``mu``, ``C``, ``kappa``,
    ``active``, ``d``, the caches formed in ``_Dual.__init__``) and its ``evaluate``.
    """

    def _support(self, norms: list[np.ndarray]) -> Any:
        r""":math:`\sum_\pm \kappa_\pm\|C_\pm^\top e\|` over the active classes.

        (A plain loop: at small sizes ``sum`` over a generator costs more in calls.)
        """
        out: Any = 0
        if self.active[0]:
            out = out + self.kappa[0] * norms[0]
        if self.active[1]:
            out = out + self.kappa[1] * norms[1]
        return out

    def points(self, lam: np.ndarray, ev: dict[str, Any]) -> list[tuple[np.ndarray, ...]]:
        """The pulled pair ``(z_pos, z_neg, u_pos, u_neg)``: feasible, onto the ellipsoids."""
        z, u = [], []
        for i, sign in ((0, -1.0), (1, 1.0)):
            if not self.active[i]:
                z.append(self.mu[i].copy())
                u.append(np.zeros(self.C[i].shape[1]))
                continue
            offset = ev["Sr"][i] / lam[i]  # Sigma r / lambda
            q = ev["q"][i]
            shrink = min(1.0, self.kappa[i] / math.sqrt(q)) if q > 0 else 1.0
            z.append(self.mu[i] + sign * shrink * offset)
            # u = C^T r * shrink / (kappa lambda): z = mu -+ kappa C u
            u.append((self.C[i].T @ ev["r"]) * (shrink / (self.kappa[i] * lam[i])))
        return [(z[0], z[1], u[0], u[1])]

    def tangent(self, e: np.ndarray, Ce: list[np.ndarray], fit: bool
                ) -> list[tuple[np.ndarray, ...]]:
        r"""Feasible pairs along the direction ``e`` (``Ce`` holds :math:`C_\pm^\top e`).

        The tangent points :math:`z_\pm = \mu_\pm \mp \kappa_\pm C_\pm
        C_\pm^\top e/\|C_\pm^\top e\|` (the optimal pair once ``e`` is the optimal
        direction). The pulled pair of :meth:`points` divides :math:`\Sigma r` by
        :math:`\lambda`, which is round-off when a multiplier tends to 0 (a flat
        ellipsoid whose nearest point is inside its relative interior, e.g. a factor of
        low rank); these pairs do not. With ``fit``, also the pairs where one side is
        instead fitted, by least squares in its ball, to :math:`z_+ - z_- = \delta e`
        with :math:`\delta = s(e)` (a kink :math:`C^\top e = 0` leaves the tangent
        point undetermined).
        """
        z, u = [], []
        for i, sign in ((0, -1.0), (1, 1.0)):
            norm = _norm(Ce[i])
            if not self.active[i] or not norm > 0:
                z.append(self.mu[i].copy())
                u.append(np.zeros(self.C[i].shape[1]))
                continue
            u.append(Ce[i] / norm)
            z.append(self.mu[i] + sign * self.kappa[i] * (self.C[i] @ u[i]))
        pairs = [(z[0], z[1], u[0], u[1])]
        if fit:
            sep = float(e @ self.d) - sum(self.kappa[i] * _norm(Ce[i])
                                          for i in (0, 1))
            step = max(sep, 0.0) * e
            for i, sign in ((0, -1.0), (1, 1.0)):
                if not self.active[i]:
                    continue
                # z_i = mu_i + sign kappa C u_i  with  z_pos - z_neg = step
                target = (z[1] + step if i == 0 else z[0] - step) - self.mu[i]
                ui = self._solve_ls((i,), target) * sign
                ui = ui / max(1.0, _norm(ui))
                zi = self.mu[i] + sign * self.kappa[i] * (self.C[i] @ ui)
                pairs.append((zi, z[1], ui, u[1]) if i == 0 else (z[0], zi, u[0], ui))
            if all(self.active):  # both sides at once (both flat along e: two kinks)
                uu = self._solve_ls((0, 1), self.d - step)
                up, un = uu[:self.C[0].shape[1]], uu[self.C[0].shape[1]:]
                up = up / max(1.0, _norm(up))
                un = un / max(1.0, _norm(un))
                pairs.append((self.mu[0] - self.kappa[0] * (self.C[0] @ up),
                              self.mu[1] + self.kappa[1] * (self.C[1] @ un), up, un))
        return pairs

    def _range(self, classes: tuple[int, ...]) -> np.ndarray | None:
        """Orthonormal basis of the span of the factors of ``classes`` (``None``: all of R^n)."""
        if classes not in self._ranges:
            F = np.hstack([self.C[i] for i in classes])
            Q = None
            if F.shape[1] < self.n:
                Q, R = np.linalg.qr(F)
                keep = np.abs(np.diag(R)) > 1e-12 * max(float(np.abs(R).max()), 1e-300)
                Q = Q[:, keep]
            self._ranges[classes] = Q
        return self._ranges[classes]

    def kink_directions(self, lam: np.ndarray, e: np.ndarray) -> list[np.ndarray]:
        r"""``e`` projected off the span of the flat factors (one, the other, both).

        A flat ellipsoid (factor :math:`C_\pm` with fewer than :math:`n` columns) whose
        nearest point lies inside its relative interior has multiplier 0 and an optimal
        normal with :math:`C_\pm^\top e = 0`: a kink of :math:`s(e)`
        (:math:`\kappa\|C^\top e\|`), where an error of ``e`` enters :math:`s` at first
        order (1e-9 in ``e`` is 1e-9 / s in the bracket, and the multiplier only tends
        to 0). The projections remove that component exactly; they are candidates
        only (the bracket keeps the best bound, every bound stays valid).
        """
        K = self._kinks(e)
        return [] if K is None else list(K)

    def _kinks(self, e: np.ndarray) -> np.ndarray | None:
        """:meth:`kink_directions` as the rows of one array (``None``: there are none)."""
        if not self.flat_sets:
            return None
        if self._projectors is False:  # I - Q Q^T per flat set, stacked, once
            Qs = [self._range(c) for c in self.flat_sets]
            self._projectors = np.stack([np.eye(self.n) - Q @ Q.T for Q in Qs
                                         if Q is not None]) if any(
                Q is not None for Q in Qs) else None
        if self._projectors is None:
            return None
        P = self._projectors @ e  # one row per flat set
        pn = np.sqrt(np.einsum("ij,ij->i", P, P))
        if not pn.min() > 0:  # (a nan fails both tests alike)
            keep = pn > 0
            if not keep.any():
                return None
            P, pn = P[keep], pn[keep]
        return P / pn[:, None]

    def _solve_ls(self, classes: tuple[int, ...], rhs: np.ndarray) -> np.ndarray:
        r"""Least-squares ``u`` of :math:`[\kappa_i C_i]_{i \in \text{classes}}\,u = \text{rhs}`.

        Through the pseudo-inverse, computed once, at small sizes (a LAPACK least-squares
        call costs ~50 us there, a product ~1 us); ``lstsq`` otherwise.
        """
        pinv = self._pinv.get(classes)
        if pinv is None:
            A = np.hstack([self.kappa[i] * self.C[i] for i in classes])
            if self.n * A.shape[1] > 4096:
                return np.linalg.lstsq(A, rhs, rcond=None)[0]
            pinv = self._pinv[classes] = np.linalg.pinv(A)
        return pinv @ rhs

    def _plain_candidates(self, lam: np.ndarray, ev: dict[str, Any]) -> tuple:
        """The bracket's candidates at ``lam`` before the fitted pairs (:meth:`bracket`)."""
        r = ev["r"]
        rn = _norm(r)
        (zp0, zn0, up0, un0), = self.points(lam, ev)
        n = self.n
        E = np.zeros((n, 0))
        CE: list[np.ndarray] = []
        norms = [np.zeros(0), np.zeros(0)]
        blocks: list[list[np.ndarray]] = [[zp0], [zn0], [up0], [un0]]
        if rn > 0:
            e0 = r / rn
            K = self._kinks(e0)
            if K is None:
                E = e0[:, None].copy()
            else:
                E = np.empty((n, 1 + K.shape[0]))
                E[:, 0] = e0
                E[:, 1:] = K.T
            CE = [self.C[0].T @ E, self.C[1].T @ E]
            norms = [np.sqrt(np.einsum("ij,ij->j", CE[i], CE[i])) for i in (0, 1)]
            for i, sign in ((0, -1.0), (1, 1.0)):
                if self.active[i]:
                    U = CE[i] / np.where(norms[i] > 0, norms[i], 1.0)  # C^T e = 0: u = 0
                    Z = self.mu[i][:, None] + (sign * self.kappa[i]) * (self.C[i] @ U)
                else:
                    U = np.zeros_like(CE[i])
                    Z = np.repeat(self.mu[i][:, None], E.shape[1], axis=1)
                blocks[i].append(Z)
                blocks[2 + i].append(U)
        return E, CE, norms, blocks, rn

    def bracket(self, lam: np.ndarray, ev: dict[str, Any], fit: bool = False
                ) -> dict[str, Any]:
        r"""Bounds on :math:`\tfrac12\|w^*\|^2` at ``lam`` and the pair and direction giving them.

        Lower: :math:`2/\|z_+ - z_-\|^2` over feasible pairs (:meth:`points`,
        :meth:`tangent`). Upper: :math:`2/s(e)^2` over the directions :math:`r/\|r\|`
        (:math:`r = z_+ - z_-` at the Lagrangian minimiser) and that of the best pair,
        and :math:`1/g(\lambda)` (Notes of :func:`solve_ellipsoid_newton`).
        """
        # vectorised over the candidates (columns): at small sizes (n <= 5) the cost is
        # the number of numpy calls, not the arithmetic
        n = self.n
        cached = self._candidates
        if cached is not None and cached[0] is ev and cached[1] is lam:
            # the same point's plain bracket was just formed (an idle step tries the
            # fitted pairs after it): its candidates are reused, not recomputed
            E, CE, norms, plain = cached[2:]
            blocks = [list(b) for b in plain]
            rn = 1.0 if E.shape[1] else 0.0
        else:
            E, CE, norms, blocks, rn = self._plain_candidates(lam, ev)
            self._candidates = (ev, lam, E, CE, norms, [list(b) for b in blocks])
        if rn > 0:
            if fit:  # along the best separating candidate (three small solves)
                sepE = E.T @ self.d - self._support(norms)
                j = int(sepE.argmax())
                for pair in self.tangent(E[:, j], [CE[0][:, j], CE[1][:, j]], True)[1:]:
                    for c, v in zip(blocks, pair):
                        c.append(v)
        # the candidates as columns (np.column_stack without its per-call overhead)
        ZP, ZN, UP, UN = (_columns(b) for b in blocks)
        if self.pair_kind:
            # the dual kind returns u: judge the points its certificate rebuilds from u
            # (the pulled pair's z = mu -+ Sigma r / lambda differs from mu -+ kappa C u
            # in the last bits, and features scaled by 1e8 make that 1e-9 of a normal)
            if self.active[0]:
                ZP = self.mu[0][:, None] - self.kappa[0] * (self.C[0] @ UP)
            if self.active[1]:
                ZN = self.mu[1][:, None] + self.kappa[1] * (self.C[1] @ UN)
        D = ZP - ZN
        dists = np.sqrt(np.einsum("ij,ij->j", D, D))

        def seps(directions: np.ndarray) -> np.ndarray:
            out = directions.T @ self.d
            for i in (0, 1):
                if self.active[i]:
                    Ci = self.C[i].T @ directions
                    out = out - self.kappa[i] * np.sqrt(np.einsum("ij,ij->j", Ci, Ci))
            return out

        def pick(b: int) -> tuple[np.ndarray, ...]:
            return ZP[:, b], ZN[:, b], UP[:, b], UN[:, b]

        if self.pair_kind:
            # the dual kind returns the pair: it is judged by its own direction's
            # separation (the certificate's bracket (D - s(e)^2)/D), so pick by that
            pos = dists > 0
            own = np.full(dists.size, math.inf)
            if np.any(pos):
                sep = seps(D[:, pos] / dists[pos])
                own[pos] = 1.0 - np.maximum(sep, 0.0) ** 2 / dists[pos] ** 2
            best = int(np.argmin(own))
            dist = float(dists[best])
            lower = 2.0 / dist**2 if dist > 0 else math.inf
            normal = None  # the best separating candidate normal (for the multipliers)
            if E.shape[1]:
                sepE = E.T @ self.d - self._support(norms)
                j = int(np.argmax(sepE))
                normal = E[:, j] if sepE[j] > 0 else None
            return {"dist": dist, "pair": pick(best), "lower": lower, "direction": None,
                    "upper": lower / (1.0 - own[best]) if own[best] < 1.0 else math.inf,
                    "normal": normal}
        best = int(dists.argmin())
        dist = float(dists[best])
        out = {"dist": dist, "pair": pick(best), "lower": 2.0 / dist**2 if dist > 0 else math.inf}
        # the primal kind returns w = 2e/s(e): its value 2/s(e)^2 is the upper end (the
        # dual value's 1/g(lambda) bounds the optimum, not the returned point)
        sep = E.T @ self.d - self._support(norms)
        if dist > 0:
            m = E.shape[1]
            E2 = np.empty((n, m + 1))
            E2[:, :m] = E
            E2[:, m] = D[:, best] / dist
            E = E2
            sep2 = np.empty(m + 1)
            sep2[:m] = sep
            sep2[m:] = seps(E[:, -1:])
            sep = sep2
        upper, direction = math.inf, None
        if sep.size and float(sep.max()) > 0:
            j = sep.size - 1 - int(sep[::-1].argmax())  # the last of equal ones
            upper, direction = 2.0 / float(sep[j]) ** 2, E[:, j]
        out["upper"], out["direction"], out["normal"] = upper, direction, direction
        return out

    def bracket_floor(self, br: dict[str, Any]) -> float:
        """:meth:`floor` at a bracket's pair and direction (that of the pair if none)."""
        zp, zn = br["pair"][0], br["pair"][1]
        e = br["direction"]
        if e is None:
            e = (zp - zn) / br["dist"] if br["dist"] > 0 else None
        return math.inf if e is None else self.floor(zp, zn, e)

    def floor(self, z_pos: np.ndarray, z_neg: np.ndarray, e: np.ndarray) -> float:
        r"""The rounding floor of the relative bracket at the pair and the direction ``e``.

        The lower end :math:`2/\|z_+ - z_-\|^2` carries the rounding of the points'
        coordinates, :math:`\epsilon(\|z_+\| + \|z_-\|)/\|z_+ - z_-\|`, and the upper
        end :math:`2/s(e)^2` that of the terms of :math:`s(e)`,
        :math:`\epsilon(|e|^\top(|\mu_+| + |\mu_-|) + \sum\kappa_\pm\||C_\pm|^\top|e|\|)
        / s(e)`, each twice (squares); for the dual kind, whose direction is the pair's
        own, also the points' rounding through :math:`\kappa_\pm\|C_\pm\|/s(e)`.
        Features scaled by 1e4 .. 1e8 put it near 1e-9 .. 1e-8: no double-precision
        bracket closes below it (the stall test stops there).
        """
        dist = _norm(z_pos - z_neg)
        ae = np.abs(e)
        if self._abs is None:  # |mu_+| + |mu_-| and |C_pm|^T, formed once
            self._abs = (np.abs(self.mu[0]) + np.abs(self.mu[1]),
                         np.abs(self.C[0]).T, np.abs(self.C[1]).T)
        terms = float(ae @ self._abs[0]) + sum(
            self.kappa[i] * _norm(self._abs[1 + i] @ ae) for i in (0, 1) if self.active[i])
        sep = float(e @ self.d) - sum(self.kappa[i] * _norm(self.C[i].T @ e)
                                      for i in (0, 1) if self.active[i])
        if not dist > 0:
            return math.inf
        points = (_norm(z_pos) + _norm(z_neg)) / dist
        if self.pair_kind:
            # the dual kind's direction is the pair's own: its rounding (points) enters
            # s(e) through kappa ||C^T e|| at first order; where that direction does not
            # separate at all, against the distance itself (s(e) <= ||z_+ - z_-||)
            if self._spectral is None:  # ||C_pm||_2, constant: one SVD each, once
                self._spectral = tuple(float(np.linalg.norm(self.C[i], 2)) if self.active[i]
                                       else 0.0 for i in (0, 1))
            spread = points * sum(self.kappa[i] * self._spectral[i]
                                  for i in (0, 1) if self.active[i])
            if not sep > 0:
                return 2.0 * _EPS * (points + spread / dist)
            return 2.0 * _EPS * (points + terms / sep + spread / sep)
        if not sep > 0:
            return math.inf
        return 2.0 * _EPS * (points + terms / sep)


class _Dual(_Bracket):
    """Evaluates :math:`g`, its gradient and Hessian at the multipliers.

    See the Notes of :func:`solve_ellipsoid_newton`.
    """

    def __init__(self, data: Any, pair_kind: bool = False) -> None:
        self.mu = (np.asarray(data["mean_pos"], float), np.asarray(data["mean_neg"], float))
        if type(self) is _Dual:  # the factor form (_FactorDual) never forms C C^T
            self.S = program_covariances(data)  # C C^T: the program's own ellipsoids
        self.C = (np.asarray(data["C_pos"], float), np.asarray(data["C_neg"], float))
        self.pair_kind = pair_kind  # the dual kind: the returned pair is the answer
        self.kappa = (float(data["kappa_pos"]), float(data["kappa_neg"]))
        self.active = tuple(k > 0 for k in self.kappa)  # kappa = 0: the class is a point
        self.d = self.mu[0] - self.mu[1]
        self.n = self.d.size
        flat = [i for i in (0, 1) if self.active[i] and self.C[i].shape[1] < self.n]
        self.flat_sets = [(i,) for i in flat] + ([tuple(flat)] if len(flat) == 2 else [])
        self._ranges: dict[tuple[int, ...], np.ndarray | None] = {}
        self._pinv: dict[tuple[int, ...], np.ndarray] = {}
        # constants of the iteration, formed once (at small sizes a step's cost is its
        # number of numpy calls)
        self._eye = np.eye(self.n)
        self._k2 = tuple(k ** 2 for k in self.kappa)  # kappa_pm^2 (as value_scale had it)
        self._dd = float(self.d @ self.d)
        self._projectors: np.ndarray | None | bool = False  # kink_directions, on first use
        self._stack: np.ndarray | None = None  # evaluate, on first use
        self._candidates: tuple | None = None  # bracket's last plain candidates
        self._abs: tuple | None = None  # floor, on first use
        self._spectral: tuple | None = None  # floor (dual kind), on first use

    def evaluate(self, lam: np.ndarray, derivatives: bool = False) -> dict[str, Any]:
        # ``ev["hess"]`` is formed on first use (derivatives=True: at once): most line
        # search trials are rejected and never need it
        # stacked over the two classes (an inactive class has a zero Sigma): a handful of
        # numpy calls, which is the cost at small sizes (n <= 5)
        if self._stack is None:
            self._stack = np.stack([self.S[i] if self.active[i] else np.zeros((self.n,
                                                                                  self.n))
                                    for i in (0, 1)])
            self._act = np.array(self.active, dtype=float)
            self._kap2 = np.array([k * k for k in self.kappa]) * self._act
        lam = np.asarray(lam, dtype=float)
        inv = self._act / lam
        M = self._eye + inv[0] * self._stack[0] + inv[1] * self._stack[1]
        # LAPACK potrf/potrs directly (scipy's cho_factor/cho_solve wrappers cost more
        # than the factorisation itself at small sizes, d <= 5)
        L, info = _potrf(M, lower=1, clean=0, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"M(lambda) is not positive definite (potrf {info})")
        r = _potrs(L, self.d, lower=1)[0]
        Sr = self._stack @ r  # rows Sigma_pm r
        rSr = Sr @ r
        q = rSr * inv * inv
        value = 0.5 * float(self.d @ r) - 0.5 * float(lam @ self._kap2)
        out = _Evaluation(r=r, Sr=Sr, q=q, value=value, grad=0.5 * (q - self._kap2), L=L)

        def hessian() -> np.ndarray:
            P = Sr.T * (inv * inv)  # columns s_pm = Sigma_pm r / lambda_pm^2
            H = P.T @ _potrs(L, P, lower=1)[0]
            H[0, 0] -= rSr[0] * inv[0] ** 3
            H[1, 1] -= rSr[1] * inv[1] ** 3
            for i in (0, 1):
                if not self.active[i]:  # a fixed coordinate: no step along it
                    H[i, :] = H[:, i] = 0.0
                    H[i, i] = -1.0
            return 0.5 * (H + H.T)

        out.hessian = hessian
        if derivatives:
            out["hess"] = hessian()
        return out

    def start(self) -> np.ndarray:
        r"""The first multipliers: :math:`\lambda_\pm = \sqrt{d^\top\Sigma_\pm d}/\kappa_\pm`.

        (:math:`r \approx d` when the ellipsoids are small.)
        """
        return np.array([math.sqrt(max(float(self.d @ self.S[i] @ self.d), 1e-300))
                         / self.kappa[i] if self.active[i] else 1.0 for i in (0, 1)])

    def step(self, lam: np.ndarray, ev: dict[str, Any]
             ) -> tuple[bool, np.ndarray, dict[str, Any]]:
        r"""One damped Newton ascent step on :math:`g` inside :math:`\lambda > 0`.

        Returns ``(improved, trial, evaluation at trial)``.
        """
        # scalar arithmetic on the two multipliers, the operations of the array form
        # (np.trace, np.eye(2), np.linalg.solve: _solve2)
        h00, h01, h10, h11 = ev["hess"].ravel().tolist()
        g0, g1 = ev["grad"].tolist()
        l0, l1 = lam.tolist()
        shift = 1e-14 * abs(h00 + h11)
        off = shift * 0.0
        Hr = (h00 - shift, h01 - off, h10 - off, h11 - shift)
        secular = self._secular_step(lam, ev, Hr)
        if secular is not None:
            return secular
        try:
            x0, x1 = _solve2(*Hr, g0, g1)
            s0, s1 = -x0, -x1
        except np.linalg.LinAlgError:
            s0, s1 = g0, g1
        slope = s0 * g0 + s1 * g1
        if slope <= 0:  # not an ascent direction (rounding): gradient step
            scale = 1.0 / max(abs(h00 + h11), 1e-300)
            s0, s1 = g0 * scale, g1 * scale
            slope = s0 * g0 + s1 * g1
        t = 1.0
        bounds = [-li / si for li, si in ((l0, s0), (l1, s1)) if si < 0]
        if bounds:
            t = min(1.0, 0.9 * min(bounds))
        trial, ev_trial = lam, ev
        value = ev["value"]
        flat = None
        for _ in range(60):
            trial = np.array([l0 + t * s0, l1 + t * s1])
            try:
                ev_trial = self.evaluate(trial)
            except np.linalg.LinAlgError:  # M(lambda) at rounding (lambda ~ 1e-300)
                t *= 0.5
                continue
            if ev_trial["value"] >= value + 1e-4 * t * slope:
                return True, trial, ev_trial
            # near the maximum g is flat to rounding (its change is quadratic in the
            # multipliers' error, below eps * |g| once that error is ~sqrt(eps)), so
            # Armijo's test on g reads noise: there, a step that shrinks the gradient
            # (the stationarity q_pm = kappa_pm^2 it is solving) is accepted instead
            if flat is None:  # constants over the line search, formed on first use
                flat = _FLAT * self.value_scale(lam)
                stationarity = self.stationarity(ev)
            if t * slope <= flat and self.stationarity(ev_trial) < stationarity:
                return True, trial, ev_trial
            t *= 0.5
        return False, trial, ev_trial

    def _secular(self, ev: dict[str, Any]) -> float:
        r"""Largest :math:`|1 - \kappa_\pm/\sqrt{q_\pm}|` (the secular residuals)."""
        q = ev["q"]
        return max((abs(1.0 - self.kappa[i] / math.sqrt(q[i])) if q[i] > 0 else math.inf
                    for i in (0, 1) if self.active[i]), default=0.0)

    def _secular_step(self, lam: np.ndarray, ev: dict[str, Any], Hr: np.ndarray
                      ) -> tuple[bool, np.ndarray, dict[str, Any]] | None:
        r"""A Newton step on the secular equations :math:`1 - \kappa_\pm/\sqrt{q_\pm} = 0`.

        :math:`q_\pm = \kappa_\pm^2\|u_\pm\|^2` (the balls' form): these are nearly
        linear in :math:`\lambda` (Moré and Sorensen's trust-region iteration), where
        Newton's step on :math:`g` itself gains a factor 2 per step from far above (a
        start :math:`10^{14}` times too large takes ~14 steps that way). Kept
        only where it raises :math:`g` (Armijo) *and* lowers the secular residuals
        (a jump that overshoots one multiplier towards 0 can leave the clipped Newton
        steps on :math:`g` stalled at the boundary) and whose full step keeps
        :math:`\lambda > 0`; ``None`` where no such step is found (then Newton's step
        on :math:`g`).
        """
        active = self.active
        q0, q1 = ev["q"].tolist()
        if (active[0] and not q0 > 0) or (active[1] and not q1 > 0):
            return None
        k0, k1 = self.kappa
        v0 = q0 * (math.sqrt(q0) / k0 - 1.0) if active[0] else 0.0
        v1 = q1 * (math.sqrt(q1) / k1 - 1.0) if active[1] else 0.0
        try:
            x0, x1 = _solve2(*Hr, v0, v1)
        except np.linalg.LinAlgError:
            return None
        s0, s1 = -x0, -x1
        g0, g1 = ev["grad"].tolist()
        slope = s0 * g0 + s1 * g1
        if not slope > 0:
            return None
        l0, l1 = lam.tolist()
        if (active[0] and l0 + s0 <= 0) or (active[1] and l1 + s1 <= 0):
            # a step through lambda = 0 is no root of the secular equations nearby (an
            # interior nearest point, or intersecting ellipsoids): Newton on g decides
            return None
        t = 1.0
        res0 = self._secular(ev)
        for _ in range(_SECULAR_TRIES):
            trial = np.array([l0 + t * s0, l1 + t * s1])
            try:
                ev_trial = self.evaluate(trial)
            except np.linalg.LinAlgError:
                t *= 0.5
                continue
            if (ev_trial["value"] >= ev["value"] + 1e-4 * t * slope
                    and self._secular(ev_trial) < res0):
                return True, trial, ev_trial
            t *= 0.5
        return None

    def multipliers(self, lam: np.ndarray) -> np.ndarray:
        r"""The multipliers :math:`\lambda_\pm` of the ellipsoid constraints (reported)."""
        return lam.copy()

    def implied(self, e: np.ndarray, lam: np.ndarray, value: float
                ) -> tuple[np.ndarray, dict[str, Any]] | None:
        r"""The multipliers implied by the normal ``e``, if :math:`g` there exceeds ``value``.

        At the optimum :math:`r = \delta^* e` and the tangent points give
        :math:`\lambda_\pm = s(e)\|C_\pm^\top e\|/\kappa_\pm` (floored at 1e-12 of
        the current ones: a flat ellipsoid's kink has :math:`C^\top e = 0`).
        ``None`` where :math:`g` does not rise.
        """
        norms = [_norm(self.C[i].T @ e) if self.active[i] else 0.0 for i in (0, 1)]
        sep = float(e @ self.d) - sum(self.kappa[i] * norms[i] for i in (0, 1)
                                      if self.active[i])
        if not sep > 0:
            return None
        new = np.array([max(sep * norms[i] / self.kappa[i], 1e-12 * lam[i])
                        if self.active[i] else lam[i] for i in (0, 1)])
        try:
            ev = self.evaluate(new)
        except np.linalg.LinAlgError:
            return None
        return (new, ev) if ev["value"] > value else None

    def from_multipliers(self, lam: np.ndarray) -> np.ndarray:
        r"""The iterate from given :math:`\lambda_\pm` (a zero is replaced by the start's)."""
        return np.where(lam > 0, lam, self.start())


    def value_scale(self, lam: np.ndarray) -> float:
        """The magnitude of the terms of :math:`g` (its rounding is ``eps`` times this)."""
        l0, l1 = lam.tolist()
        terms = 0.0
        if self.active[0]:
            terms += l0 * self._k2[0]
        if self.active[1]:
            terms += l1 * self._k2[1]
        return self._dd + terms

    def value_rounding(self, ev: dict[str, Any]) -> float:
        r"""A bound on the rounding error of the computed :math:`g` at an evaluation.

        The Cholesky solve of :math:`Mr = d` returns the exact solution of some
        :math:`(M + \delta M)\hat r = d` with :math:`|\delta M| \le
        \gamma_{3n+1}|L||L^\top|` (Higham, *Accuracy and Stability of Numerical
        Algorithms*, Thm 10.4; :math:`\gamma_k \approx ku`, :math:`u = \epsilon/2`),
        so :math:`\tfrac12 d^\top\hat r` is off by up to :math:`\tfrac12\gamma_{3n+1}
        \|\,|L|^\top|\hat r|\,\|^2`, plus the dot product's own
        :math:`\tfrac12\gamma_n|d|^\top|\hat r|`. Formed on first use (rarely needed:
        only where :math:`g` rose without the gap closing).
        """
        if "rounding" not in ev:
            u = 0.5 * _EPS
            ar = np.abs(ev["r"])
            a = np.abs(np.tril(ev["L"])).T @ ar
            ev["rounding"] = 0.5 * u * ((3 * self.n + 1) * float(a @ a)
                                        + self.n * float(np.abs(self.d) @ ar))
        return ev["rounding"]

    def stationarity(self, ev: dict[str, Any]) -> float:
        r"""Largest :math:`|q_\pm - \kappa_\pm^2| / \kappa_\pm^2` (0 at the optimum)."""
        q = ev["q"].tolist()
        return max((abs(q[i] - self._k2[i]) / self._k2[i]
                    for i in (0, 1) if self.active[i]), default=0.0)


class _FactorDual(_Dual):
    r"""The same dual in the factors' coordinates: multipliers :math:`\nu_\pm` of the balls.

    With :math:`A = [\kappa_+C_+,\ \kappa_-C_-]` (:math:`n\times k`, :math:`k = k_+ +
    k_-` columns) the distance is :math:`\min \tfrac12\|d - Au\|^2` over
    :math:`\|u_\pm\| \le 1` (:math:`z_+ - z_- = d - Au`), and its dual function

    .. math::

        h(\nu) = \min_u \tfrac12\|d - Au\|^2 + \tfrac12\sum_\pm\nu_\pm(\|u_\pm\|^2 - 1),
        \qquad (A^\top A + N)\,u = A^\top d,\quad N = \operatorname{diag}(\nu_+I,
        \nu_-I),

    with :math:`\partial h/\partial\nu_\pm = \tfrac12(\|u_\pm\|^2 - 1)` and Hessian
    :math:`-P^\top(A^\top A + N)^{-1}P`, :math:`P = [u_+ \oplus 0,\ 0 \oplus u_-]`. The
    two forms are the same dual (:math:`\nu_\pm = \kappa_\pm^2\lambda_\pm`, Woodbury:
    :math:`M(\lambda)^{-1}d = d - Au`), but here :math:`\nu_\pm = 0` is a point of the
    domain: a flat ellipsoid (a factor of rank :math:`k_\pm < n`) whose nearest point lies
    inside its relative interior has its optimum *at* :math:`\nu = 0`, which the
    feature form only approaches geometrically (:math:`\lambda \to 0`, where
    :math:`M(\lambda)` blows up, in tens of steps). Steps: Newton on the
    secular equations :math:`\phi_\pm(\nu) = 1 - 1/\|u_\pm(\nu)\|` of the free
    multipliers (nearly linear in :math:`\nu`, as in Moré and Sorensen's trust-region
    iteration; Newton on :math:`h` itself gains only a factor 1.5 per step from below
    where :math:`\|u\| \gg 1`), projected onto :math:`\nu \ge 0` (a multiplier at 0
    whose ball is inactive, :math:`\|u_\pm\| \le 1`, stays there), globalised by the
    same line search on :math:`h`. One Cholesky factorisation of order :math:`k` per
    evaluation: the form of choice when :math:`k \le n` (low-rank factors) or the
    problem is small (:math:`k \le 64`, where the calls' overhead dominates).
    """

    def __init__(self, data: Any, pair_kind: bool = False) -> None:
        super().__init__(data, pair_kind)
        cols, self.blocks, start = [], [], 0
        for i in (0, 1):
            if self.active[i]:
                cols.append(self.kappa[i] * self.C[i])
                self.blocks.append(slice(start, start + self.C[i].shape[1]))
                start += self.C[i].shape[1]
            else:
                self.blocks.append(slice(start, start))
        self.k = start
        self.A = np.hstack(cols) if cols else np.zeros((self.n, 0))
        self.G = self.A.T @ self.A
        self.G = 0.5 * (self.G + self.G.T)
        self.Ad = self.A.T @ self.d
        self.owner = np.concatenate([np.full(self.blocks[i].stop - self.blocks[i].start, i)
                                     for i in (0, 1)]).astype(int)
        self.diag = np.diag_indices(self.k)
        # a multiplier may reach 0 only where its block of A^T A is positive definite
        # (A_pm of full column rank: a flat ellipsoid); else it stays above 0
        self.zero_ok = []
        for i in (0, 1):
            b = self.blocks[i]
            ok = self.active[i] and b.stop - b.start < self.n  # flat: rank < n
            if ok:
                ok = _potrf(self.G[b, b].copy(), lower=1, clean=0)[1] == 0
            self.zero_ok.append(bool(ok))
        self.d_norm = _norm(self.d)

    def start(self) -> np.ndarray:
        r""":math:`\nu_\pm = \|A_\pm^\top d\|`: an upper bound on the ball's multiplier alone."""
        return np.array([_norm(self.Ad[self.blocks[i]]) if self.active[i] else 0.0
                         for i in (0, 1)])

    def from_multipliers(self, lam: np.ndarray) -> np.ndarray:
        r""":math:`\nu_\pm = \kappa_\pm^2\lambda_\pm` (a warm start given as :math:`\lambda`)."""
        return np.array([lam[i] * self.kappa[i] ** 2 if self.active[i] else 0.0
                         for i in (0, 1)])

    def implied(self, e: np.ndarray, nu: np.ndarray, value: float
                ) -> tuple[np.ndarray, dict[str, Any]] | None:
        """Not used in the factor form (its steps reach nu = 0 directly)."""
        return None

    def multipliers(self, nu: np.ndarray) -> np.ndarray:
        return np.array([nu[i] / self.kappa[i] ** 2 if self.active[i] else 1.0
                         for i in (0, 1)])

    def evaluate(self, nu: np.ndarray, derivatives: bool = False) -> dict[str, Any]:
        K = self.G.copy()
        K[self.diag] += nu[self.owner]
        L, info = _potrf(K, lower=1, clean=0, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"A^T A + N is not positive definite (potrf {info})")
        u = _potrs(L, self.Ad, lower=1)[0]
        r = self.d - self.A @ u
        # scalars on the two balls: the same operations as the arrays had (norms**2 is
        # numpy's square, x * x; a sum of two products), without their call overhead
        n0, n1 = _norm(u[self.blocks[0]]), _norm(u[self.blocks[1]])
        g0 = 0.5 * (n0 * n0 - 1.0) if self.active[0] else 0.0
        g1 = 0.5 * (n1 * n1 - 1.0) if self.active[1] else 0.0
        nu0, nu1 = np.asarray(nu, dtype=float).tolist()
        norms, grad = np.array([n0, n1]), np.array([g0, g1])
        value = 0.5 * float(r @ r) + (nu0 * g0 + nu1 * g1)
        out = _Evaluation(r=r, u=u, norms=norms, value=value, grad=grad)

        def hessian() -> np.ndarray:
            P = np.zeros((self.k, 2))
            for i in (0, 1):
                P[self.blocks[i], i] = u[self.blocks[i]]
            H = -(P.T @ _potrs(L, P, lower=1)[0])
            for i in (0, 1):
                if not self.active[i]:
                    H[i, :] = H[:, i] = 0.0
                    H[i, i] = -1.0  # a fixed coordinate: no step along it
            return 0.5 * (H + H.T)

        out.hessian = hessian  # formed on first use, as in the feature form
        if derivatives:
            out["hess"] = hessian()
        return out

    def value_scale(self, nu: np.ndarray) -> float:
        return float(self.d @ self.d) + float(np.sum(nu))

    def value_rounding(self, ev: dict[str, Any]) -> float:
        """0: the factor form keeps its test on :meth:`value_scale` alone."""
        return 0.0

    def stationarity(self, ev: dict[str, Any]) -> float:
        r"""Largest :math:`|\|u_\pm\| - 1|` over the balls (0 at the optimum ...).

        ... or its excess :math:`(\|u_\pm\| - 1)_+` where :math:`\nu_\pm = 0`.
        """
        nu = ev.get("nu")
        out = 0.0
        for i in (0, 1):
            if self.active[i]:
                gap = ev["norms"][i] - 1.0
                out = max(out, max(gap, 0.0) if nu is not None and nu[i] == 0 else abs(gap))
        return out

    def points(self, nu: np.ndarray, ev: dict[str, Any]) -> list[tuple[np.ndarray, ...]]:
        """The Lagrangian minimiser's pair, each ``u`` scaled into its ball (feasible)."""
        z, u = [], []
        for i, sign in ((0, -1.0), (1, 1.0)):
            if not self.active[i]:
                z.append(self.mu[i].copy())
                u.append(np.zeros(self.C[i].shape[1]))
                continue
            ui = ev["u"][self.blocks[i]] / max(1.0, float(ev["norms"][i]))
            u.append(ui)
            z.append(self.mu[i] + sign * self.kappa[i] * (self.C[i] @ ui))
        return [(z[0], z[1], u[0], u[1])]

    def _try(self, nu: np.ndarray) -> dict[str, Any] | None:
        try:
            ev = self.evaluate(nu)
        except np.linalg.LinAlgError:
            return None
        ev["nu"] = nu
        return ev

    def step(self, nu: np.ndarray, ev: dict[str, Any]
             ) -> tuple[bool, np.ndarray, dict[str, Any]]:
        """One projected, safeguarded secular Newton step (class docstring)."""
        ev.setdefault("nu", nu)
        H, grad, norms = ev["hess"], ev["grad"], ev["norms"]
        # free multipliers: positive, or at 0 with their ball violated (h rises along them)
        free = np.array([self.active[i] and (nu[i] > 0 or grad[i] > 0) for i in (0, 1)])
        step = np.zeros(2)
        if not np.any(free):
            return False, nu, ev
        Hf = H[np.ix_(free, free)]
        gf = grad[free]
        direction = None
        if np.all(norms[free] > 0):
            # secular Newton: J = diag(1/||u||^3) H,  J step = -(1 - 1/||u||)
            nf = norms[free]
            try:
                cand = -_solve_small(Hf, nf**2 * (nf - 1.0))
                if float(cand @ gf) > 0:
                    direction = cand
            except np.linalg.LinAlgError:
                pass
        if direction is None:  # Newton on h (an ascent direction: H is negative definite)
            try:
                direction = -_solve_small(Hf - 1e-14 * abs(np.trace(Hf)) * np.eye(len(gf)),
                                          gf)
            except np.linalg.LinAlgError:
                direction = gf
            if float(direction @ gf) <= 0:
                direction = gf * (1.0 / max(abs(np.trace(Hf)), 1e-300))
        step[free] = direction
        floor = np.array([0.0 if self.zero_ok[i] else 0.1 * nu[i] for i in (0, 1)])
        t = 1.0
        trial, ev_trial = nu, ev
        flat = _FLAT * self.value_scale(nu)  # constant over the line search
        stationarity = None
        for _ in range(60):
            trial = np.maximum(nu + t * step, floor)
            moved = trial - nu
            ev_try = self._try(trial)
            if ev_try is not None:
                ev_trial = ev_try
                ascent = float(moved @ grad)
                if ev_trial["value"] >= ev["value"] + 1e-4 * ascent:
                    return True, trial, ev_trial
                # h flat to rounding near its maximum: accept a step that shrinks the
                # secular residuals instead (as the feature form does)
                if abs(ascent) <= flat:
                    if stationarity is None:
                        stationarity = self.stationarity(ev)
                    if self.stationarity(ev_trial) < stationarity:
                        return True, trial, ev_trial
            t *= 0.5
        return False, nu, ev


@register("ellipsoid-newton", kinds=list(RATES_KINDS),
          description="ellipsoid distance by Newton on its two multipliers (specified rates)",
          warm_start=ellipsoid_multipliers)
def solve_ellipsoid_newton(
    program,
    *,
    tol: float = 1e-10,
    max_iter: int = 200,
    time_limit: float | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    x0: tuple[float, float] | None = None,
    space: str = "auto",
) -> Solution:
    r"""Specified-rates classifier by Newton's method on the ellipsoid distance's dual.

    Parameters
    ----------
    program : Program
        Kind ``"socp.chance.rates.primal"`` or ``"socp.chance.rates.dual"``
        (:func:`conicml.formulations.specified_rates.specified_rates`).
    tol : float, default=1e-10
        Relative certified gap at which to stop (Notes).
    max_iter : int, default=200
        Newton steps.
    time_limit : float, optional
        Seconds; the last point is returned with ``USER_LIMIT``.
    verbose : bool, default=False
        Print one line per step.
    callback : callable, optional
        ``callback(intermediate_result)`` after every step (``objective`` is the
        dual value :math:`g(\lambda)`, ``residual`` the relative gap, ``values``
        holds ``multipliers``); raising :class:`StopIteration` stops the solver.
    x0 : (float, float), optional
        Initial multipliers :math:`(\lambda_+, \lambda_-)` (non-negative; a zero is
        a multiplier at its bound, e.g. a flat ellipsoid's, in the factor form).
    space : {"auto", "factor", "feature"}, default="auto"
        The coordinates of the Newton iteration: ``"feature"`` the multipliers
        :math:`\lambda_\pm` with one factorisation of order :math:`n` per evaluation,
        ``"factor"`` the balls' multipliers :math:`\nu_\pm = \kappa_\pm^2\lambda_\pm`
        with one of order :math:`k = k_+ + k_-` (the factors' columns; exact at a flat
        ellipsoid's :math:`\nu = 0`, :class:`_FactorDual`); ``"auto"`` takes the factor
        form when :math:`k \le \max(n, 64)`.

    Returns
    -------
    Solution
        As ``lin-han``: ``objective`` :math:`\tfrac12\|w\|^2` (primal kind) or the
        squared distance (dual kind); ``extras`` holds ``multipliers``, ``z_pos``,
        ``z_neg``, ``distance``, ``lower_bound``, ``upper_bound``, ``stop_reason``.

    Notes
    -----
    **Algorithm.** The Lagrangian of :math:`\min \tfrac12\|z_+ - z_-\|^2` over the two
    ellipsoids, minimised over :math:`z_\pm` for multipliers :math:`\lambda_\pm > 0`, gives
    :math:`r = z_+ - z_-` from one linear system and the concave dual function

    .. math::

        M(\lambda) = I + \Sigma_+/\lambda_+ + \Sigma_-/\lambda_-,\qquad M r = d = \mu_+ - \mu_-,
        \qquad z_+ = \mu_+ - \Sigma_+ r/\lambda_+,\quad z_- = \mu_- + \Sigma_- r/\lambda_-,

    .. math::

        g(\lambda) = \tfrac12 d^\top M^{-1} d
                      - \tfrac12(\lambda_+\kappa_+^2 + \lambda_-\kappa_-^2),
        \qquad \partial g/\partial\lambda_\pm = \tfrac12(r^\top\Sigma_\pm r/\lambda_\pm^2
        - \kappa_\pm^2),

    whose Hessian, with :math:`s_\pm = \Sigma_\pm r/\lambda_\pm^2`, is
    :math:`H_{\pm\pm} = s_\pm^\top M^{-1}s_\pm - r^\top\Sigma_\pm r/\lambda_\pm^3`,
    :math:`H_{+-} = s_+^\top M^{-1}s_-`. Damped Newton ascent on the two multipliers
    (backtracking on :math:`g`, steps kept inside :math:`\lambda > 0`), one Cholesky
    factorisation of :math:`M` per evaluation: :math:`O(n^3/3)` per step, no inverse of
    :math:`\Sigma_\pm` (singular covariances are fine). :math:`\Sigma_\pm = C_\pm C_\pm^\top`
    from the program's factors (the ellipsoids its cones and its certificate use; they
    differ from ``cov_*`` where the factorisation dropped a spectrum). A class with
    :math:`\kappa = 0` is its mean (its term leaves :math:`M`). Near the maximum :math:`g`
    is flat to rounding (its change is quadratic in the multipliers' error), so where
    Armijo's predicted increase is below :math:`g`'s rounding a step is accepted when it
    shrinks the stationarity :math:`|r^\top\Sigma_\pm r/\lambda_\pm^2 - \kappa_\pm^2|`
    instead. BLAS runs on one thread (:mod:`conicml._utils.threads`).

    **Steps that cross decades.** Three devices keep the step count small where the
    multipliers must travel many orders of magnitude:

    * *secular steps* — Newton on :math:`1 - \kappa_\pm/\sqrt{q_\pm} = 0`
      (:math:`q_\pm = r^\top\Sigma_\pm r/\lambda_\pm^2`), nearly linear in
      :math:`\lambda` as in Moré and Sorensen's trust-region iteration, taken where they
      raise :math:`g`, lower the secular residuals and keep :math:`\lambda > 0`
      (:meth:`_Dual._secular_step`);
    * *implied multipliers* — at the start and at idle steps, a jump to
      :math:`\lambda_\pm = s(e)\|C_\pm^\top e\|/\kappa_\pm` (the tangent condition,
      exact at the optimal normal :math:`e`) for the bracket's best normal, where :math:`g`
      rises there: a start :math:`10^{15}` times too large (features scaled by 1e8) is
      left in one step (:meth:`_Dual.implied`);
    * *the factor form* — for a flat ellipsoid (a factor of fewer than :math:`n` columns)
      whose nearest point lies in its relative interior, the multiplier's optimum is 0,
      which :math:`M(\lambda)` only approaches (a factor 10 per step). The same dual in the
      balls' multipliers :math:`\nu_\pm = \kappa_\pm^2\lambda_\pm` has :math:`\nu = 0`
      in its domain (:class:`_FactorDual`); ``space="auto"`` uses it where an ellipsoid is
      flat and :math:`\operatorname{cond}([\kappa_+C_+, \kappa_-C_-]) \le 10^8` (its system
      holds :math:`A^\top A`), and continues a run that stalls above its rounding floor in
      the feature form.

    **Certificate and stopping criterion.** Feasible pairs :math:`z_\pm \in B_\pm` give
    :math:`2/\|z_+ - z_-\|^2 \le \tfrac12\|w^*\|^2`: the Lagrangian points
    :math:`z_\pm = \mu_\pm \mp \Sigma_\pm r/\lambda_\pm` pulled onto their ellipsoids, the
    tangent points along :math:`e = r/\|r\|` (:math:`r = z_+ - z_-`), and, when the solver
    would stop uncertified, the pairs fitted by least squares in the balls (one side or both:
    a flat ellipsoid whose nearest point is interior has :math:`\lambda \to 0`, where
    :math:`\Sigma r/\lambda` is round-off and the tangent point undetermined; with a flat
    ellipsoid they are tried at every idle step). Beside :math:`r/\|r\|` the candidate
    normals include its projections off the flat factors' spans (:meth:`_Bracket.kink_directions`:
    at an interior nearest point :math:`C^\top e = 0`, a kink of :math:`s(e)` where the
    error of :math:`e` counts at first order). The returned
    hyperplane :math:`w = 2e/s(e)` along the best direction is primal feasible, and its
    value :math:`2/s(e)^2` is the upper end. The solver stops when

    .. math::

        \text{upper} - \text{lower} \le \texttt{tol}\cdot\text{upper}

    (``Residuals.gap`` is that difference, ``dual`` the relative gap itself: the bracket
    certifies the point even before the multipliers have converged). For the dual kind the
    returned pair is judged by its own direction's bracket, as its certificate judges it.
    No decrease of the gap by 0.1 % and no rise of :math:`g` above its rounding for 8 steps
    (its rounding: :math:`10^3\epsilon` times its terms, and in the feature form at least the
    bound :meth:`_Dual.value_rounding` from the Cholesky solve's backward error, which
    an :math:`M(\lambda)` of condition :math:`10^{30}` raises to :math:`\pm 10^3`; 2 steps
    where the gap is within 10 times the bracket's rounding floor, :meth:`_Bracket.floor`)
    stops the solver as stalled (``OPTIMAL_INACCURATE`` with the gap reached: badly scaled
    features raise the bracket's rounding floor above a small ``tol``; ``tol`` is never
    relaxed to it). Intersecting
    ellipsoids (infeasible rates) drive :math:`\lambda \to 0` and the feasible pair together:
    reported ``INFEASIBLE`` once their distance falls below :math:`10^{-10}\|d\|`.

    **Per-step cost.** At small sizes (:math:`n \le 5`) a step costs its number of numpy
    calls, not its arithmetic: the Newton systems on the two multipliers are solved in scalar
    arithmetic by Gaussian elimination with partial pivoting (:func:`_solve2`), the
    constants of the iteration are formed once per solve, a trial point's Hessian only when
    the step is accepted, and an idle step's fitted bracket reuses the plain bracket's
    candidates at the same point.

    **Warm-start:** ``x0 = (lambda_pos, lambda_neg)``, e.g. ``extras["multipliers"]`` of a
    previous run on a nearby program (a zero, a flat ellipsoid's multiplier, is allowed).
    """
    t0 = time.perf_counter()
    driver = _driver(tol, max_iter, time_limit, callback)
    if space not in ("auto", "factor", "feature"):
        raise OptionError("ellipsoid-newton: space must be 'auto', 'factor' or 'feature', "
                          f"got {space!r}")
    data = check_rates_program(program, "ellipsoid-newton")
    for cls in ("pos", "neg"):
        if float(data[f"kappa_{cls}"]) > 0 and not np.any(np.asarray(data[f"C_{cls}"])):
            # a point, not an ellipsoid: the dual's A'A + N is singular at the start and
            # the Newton steps on its multiplier are undefined (as for lin-han)
            name = "positive" if cls == "pos" else "negative"
            raise SolverError(
                f"ellipsoid-newton needs a covariance that is not zero for the {name} class "
                f"(its ellipsoid is a single point: one sample, or identical samples); "
                f"solve with clarabel or ecos, or build the program with ridge > 0")
    if x0 is not None:
        lam0 = np.asarray(x0, dtype=float).reshape(-1)
        if lam0.shape != (2,) or not np.all(np.isfinite(lam0)) or np.any(lam0 < 0):
            raise OptionError("ellipsoid-newton: x0 must be two non-negative finite "
                              f"multipliers (lambda_pos, lambda_neg), got {x0!r}")
    fallback = False
    if space == "auto":
        # the factor form where it suits (_factor_form_suits); a factor-form run that
        # stalls uncertified is continued in the feature form
        fallback = _factor_form_suits(data)
        space = "factor" if fallback else "feature"
    with single_blas_thread(np.asarray(data["mean_pos"]).size):
        sol = _newton(program, data, t0=t0, driver=driver, verbose=verbose, x0=x0,
                      space=space)
        if not (fallback and sol.extras.get("stop_reason") == 5
                and not sol.extras.get("at_rounding_floor")):
            return sol
        used = time.perf_counter() - t0
        lam = np.asarray(sol.extras["multipliers"], dtype=float)
        # a multiplier at 0 (a flat ellipsoid's interior point) starts small, not at 0
        lam = np.where(lam > 0, lam, 1e-6 * _Dual(data).start())
        second = _newton(program, data, t0=time.perf_counter(), driver=_driver(
                             tol, max(1, max_iter - sol.iterations),
                             None if time_limit is None else max(time_limit - used, 1e-3),
                             callback), verbose=verbose, x0=lam, space="feature")
    best = second if second.extras["relative_gap"] < sol.extras["relative_gap"] or \
        second.status is Status.INFEASIBLE else sol
    return replace(best, extras={**best.extras, "space": "factor, then feature"},
                   iterations=sol.iterations + second.iterations,
                   setup_time=sol.setup_time + second.setup_time,
                   solve_time=sol.solve_time + second.solve_time)


def _factor_form_suits(data: Any) -> bool:
    r"""Whether ``space="auto"`` takes the factor form (:class:`_FactorDual`).

    Where an ellipsoid is flat (its factor has fewer columns than :math:`n`): there its
    multiplier may be 0 at the optimum, which the feature form only approaches
    geometrically. But the factor form's system holds :math:`A^\top A`, whose
    condition number is :math:`\operatorname{cond}(A)^2`: beyond
    :math:`\operatorname{cond}(A) = 10^8` (features scaled by 1e8 next to unit ones)
    it has no correct digit left and the feature form (order :math:`n`,
    :math:`M = I + \ldots` never singular) is used.
    """
    n = np.asarray(data["mean_pos"]).size
    cols = [np.asarray(data[c], dtype=float) * float(data[kap])
            for c, kap in (("C_pos", "kappa_pos"), ("C_neg", "kappa_neg"))
            if float(data[kap]) > 0]
    if not any(c.shape[1] < n for c in cols):
        return False
    sv = np.linalg.svd(np.hstack(cols), compute_uv=False)
    return bool(sv[-1] > 0 and sv[0] <= _FACTOR_COND * sv[-1])


def _driver(tol: float, max_iter: int, time_limit: float | None, callback: Any) -> Driver:
    """The stop rule of one Newton run (options and callback checked here)."""
    return Driver("ellipsoid-newton", tol=tol, max_iter=max_iter, time_limit=time_limit,
                  messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback)


def _newton(program: Any, data: Any, *, t0: float, driver: Driver, verbose: bool, x0: Any,
            space: str) -> Solution:
    """The Newton iteration of :func:`solve_ellipsoid_newton` (options checked)."""
    tol = driver.tol
    pair_kind = program.kind == kinds.RATES_DUAL
    dual = _FactorDual(data, pair_kind) if space == "factor" else _Dual(data, pair_kind)
    if x0 is None:
        lam = dual.start()
    else:
        lam = dual.from_multipliers(np.asarray(x0, dtype=float).reshape(-1))
    d_norm = _norm(dual.d)
    setup_time = time.perf_counter() - t0
    driver.start()
    try:
        ev = dual.evaluate(lam)
    except np.linalg.LinAlgError:  # a warm start at nu = 0 where A^T A is singular
        lam = np.maximum(lam, dual.start())
        ev = dual.evaluate(lam)
    code, k, rel_gap = 1, 0, math.inf
    best_gap, best_value, since_best = math.inf, -math.inf, 0
    best_ev = ev
    extras_floor = False
    if verbose:
        print(f"{'iter':>5} {'g(lambda)':>16} {'lower':>16} {'upper':>16} {'rel. gap':>10}")
    while True:
        br = dual.bracket(lam, ev)
        if br["dist"] <= 1e-10 * d_norm:
            code = 4
            break
        lower, upper = br["lower"], br["upper"]
        rel_gap = (upper - lower) / upper if math.isfinite(upper) else math.inf
        if dual.flat_sets and tol < rel_gap < math.inf and (since_best > 0
                                                            or rel_gap <= _REFIT):
            # a flat ellipsoid, and the cheap pairs stopped closing the bracket or it is
            # nearly closed: the pairs fitted by least squares (a flat ellipsoid's
            # interior nearest point is round-off in the Lagrangian and the tangent
            # pairs) may close it
            fitted = dual.bracket(lam, ev, fit=True)
            if math.isfinite(fitted["upper"]) and fitted["dist"] > 1e-10 * d_norm:
                gap_fit = (fitted["upper"] - fitted["lower"]) / fitted["upper"]
                if gap_fit < rel_gap:
                    br, rel_gap = fitted, gap_fit
                    lower, upper = br["lower"], br["upper"]
        if verbose:
            print(f"{k:>5} {ev['value']:>16.10g} {lower:>16.10g} {upper:>16.10g} "
                  f"{rel_gap:>10.2e}")
        if driver.listening and driver.notify(
                k, rel_gap, objective=ev["value"],
                values={"multipliers": dual.multipliers(lam)}):
            code = int(Reason.CALLBACK)
            break
        if driver.converged(rel_gap):
            code = int(Reason.CONVERGED)
            break
        # progress: the certified gap shrinks, or g still rises above its rounding
        # (infeasible rates: lambda -> 0, the gap stays infinite while g climbs to 0)
        # (a rise within the rounding of the two values of g, which the Cholesky solve's
        # backward error bounds, is no progress: Cholesky of an M(lambda) of
        # condition 1e30 reads g to +-1e3)
        if rel_gap < best_gap * (1.0 - 1e-3) or (
                ev["value"] > best_value + _FLAT * dual.value_scale(lam)
                and ev["value"] > best_value + dual.value_rounding(ev)
                + dual.value_rounding(best_ev)):
            best_gap, best_value, since_best = min(rel_gap, best_gap), ev["value"], 0
            best_ev = ev
        else:
            since_best += 1
            # at the bracket's rounding floor two idle steps suffice (no step can close it)
            floor = dual.bracket_floor(br)
            # at the floor; or (the dual kind) no separating own normal while the
            # rounding of the pair's coordinates is of the order of the distance itself
            at_floor = rel_gap <= _AT_FLOOR * floor if math.isfinite(rel_gap) else \
                dual.pair_kind and 0.1 <= floor < math.inf
            if since_best >= (_STALL_AT_FLOOR if at_floor else _STALL):
                code = 5
                extras_floor = at_floor
                break
        limit = driver.limit(k)
        if limit is not None:
            code = int(limit)
            break
        improved, trial, ev_trial = dual.step(lam, ev)
        if br.get("normal") is not None and (k == 0 or since_best >= 2):
            # the multipliers the bracket's normal implies (the tangent condition
            # lambda_pm = s(e) ||C_pm^T e|| / kappa_pm, exact at the optimal normal): a
            # start 1e15 times too large (features scaled by 1e8) is left in one step
            jump = dual.implied(br["normal"], lam, ev["value"])
            if jump is not None and (not improved or jump[1]["value"] > ev_trial["value"]):
                improved, (trial, ev_trial) = True, jump
        k += 1
        if not improved or all(abs(t - v) <= 4 * _EPS * abs(v)
                               for t, v in zip(trial.tolist(), lam.tolist())):
            code = 5  # no step moves the multipliers: the bracket is at its rounding floor
            extras_floor = math.isfinite(rel_gap) and \
                rel_gap <= _AT_FLOOR * dual.bracket_floor(br)
            lam, ev = trial, ev_trial
            break
        lam, ev = trial, ev_trial
    solve_time = driver.elapsed
    extras = {"stop_reason": code, "multipliers": dual.multipliers(lam), "relative_gap": rel_gap,
              "space": space, "at_rounding_floor": extras_floor}
    if code == 4:
        message = (f"{TERMINATION_MESSAGES[4]} (error_pos={data.get('eta_pos', math.nan):g}, "
                   f"error_neg={data.get('eta_neg', math.nan):g}); raise error_pos or error_neg")
        return Solution(status=Status.INFEASIBLE, solver="ellipsoid-newton", iterations=k,
                        setup_time=setup_time, solve_time=solve_time, message=message,
                        extras=extras)
    if code not in (0, 3):
        # the last multipliers (a stalled line search moved them) with the fitted pairs
        # too (a least-squares solve per side); kept where they do better
        last = dual.bracket(lam, ev, fit=True)
        if last["dist"] > 1e-10 * d_norm and math.isfinite(last["upper"]):
            gap_last = (last["upper"] - last["lower"]) / last["upper"]
            if gap_last < rel_gap or not math.isfinite(br["upper"]):
                br, rel_gap = last, gap_last
                if rel_gap <= tol:
                    code = 0
        extras["relative_gap"] = rel_gap
    zp, zn, u_pos, u_neg = br["pair"]
    residual = rel_gap  # the optimality measure: the certified relative gap
    message = TERMINATION_MESSAGES[code]
    if code in (1, 2, 5):
        message += (f"; certified relative gap {rel_gap:.2g} > tol {tol:.2g} (badly scaled "
                    "features or flat ellipsoids raise the bracket's rounding floor)")
    if verbose:
        print(f"ellipsoid-newton: {message}")
    return rates_solution(
        program, data, solver="ellipsoid-newton", status=STATUS_MAP[code],
        message=message, z_pos=zp, z_neg=zn, u_pos=u_pos, u_neg=u_neg,
        dual_residual=residual, direction=br["direction"],
        iterations=k, setup_time=setup_time,
        solve_time=solve_time, extras=extras)
