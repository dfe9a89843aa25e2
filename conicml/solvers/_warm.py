r"""Warm starts along a hyper-parameter path (:func:`conicml.solve_path`).

Each function is registered with its solver (``register(..., warm_start=...)``) and maps
``(previous, old, new)`` — the solution of program ``old`` and the next program ``new``
of the same learner on the same data — to the solver's warm-start options, or to ``{}``
(a cold start) when ``previous`` does not fit ``new`` (other data, labels or basis).
Every returned start is feasible for ``new``: the solver's own feasibility check of
``x0`` never fails on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "cbc_alpha",
    "cbor_pair",
    "ellipsoid_multipliers",
    "pegasos_wb",
    "rank_beta",
    "simplex_w",
    "smo_alpha",
    "svor_pair",
]


def _same(a: Any, b: Any) -> bool:
    """Whether two data arrays are the same (the same object, or equal values)."""
    if a is b:
        return True
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _balanced_box_start(alpha: np.ndarray, y: np.ndarray, u_old: np.ndarray,
                        u_new: np.ndarray) -> np.ndarray | None:
    r"""DeCoste & Wagstaff's alpha seeding for a box :math:`[0, u]` with :math:`y^\top\alpha = 0`.

    :math:`\alpha` scaled by :math:`u^{new}_i / u^{old}_i` (a bounded variable stays at its
    bound, a zero at zero; one common factor, a C path, keeps :math:`y^\top\alpha = 0`
    exactly). An infinite box (hard margin) keeps :math:`\alpha` as it is. When the ratios
    differ (class weights changed) the class with the larger sum is scaled down to restore
    the equality, inside the box.
    """
    alpha = np.asarray(alpha, dtype=float)
    if alpha.shape != y.shape or not np.all(np.isfinite(alpha)):
        return None
    finite = np.isfinite(u_old) & np.isfinite(u_new)
    ratio = np.ones_like(alpha)
    ratio[finite] = u_new[finite] / u_old[finite]
    x0 = np.clip(alpha * ratio, 0.0, u_new)
    pos = y > 0
    s_pos, s_neg = float(x0[pos].sum()), float(x0[~pos].sum())
    # a round-off imbalance is left alone: rescaling by 1 - 1e-16 would move every
    # bounded variable off its bound (free to SMO: hundreds of extra updates)
    scale = float(np.sum(np.where(np.isfinite(u_new), u_new, x0)))
    if abs(s_pos - s_neg) > 1e-12 * max(1.0, scale):
        side = pos if s_pos > s_neg else ~pos
        x0[side] *= min(s_pos, s_neg) / max(s_pos, s_neg)
    return x0


def smo_alpha(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    """``smo`` (SVM dual): ``x0`` is the previous alpha scaled by the ratio of the costs."""
    alpha = previous.values.get("alpha")
    if alpha is None or not (_same(old.data["y"], new.data["y"])
                             and np.shape(old.data["X"]) == np.shape(new.data["X"])):
        return {}
    x0 = _balanced_box_start(alpha, np.asarray(new.data["y"], dtype=float),
                             np.asarray(old.data["c"], dtype=float),
                             np.asarray(new.data["c"], dtype=float))
    return {} if x0 is None else {"x0": x0}


def cbc_alpha(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    """``cbc-smo`` (CBC duals): the previous alpha scaled by the ratio of the dual boxes."""
    alpha = previous.values.get("alpha")
    if alpha is None or not (_same(old.data["y"], new.data["y"])
                             and _same(old.data["radii"], new.data["radii"])):
        return {}
    y = np.asarray(new.data["y"], dtype=float)
    u_old = np.broadcast_to(np.asarray(old.data["cbc"].upper, dtype=float), y.shape)
    u_new = np.broadcast_to(np.asarray(new.data["cbc"].upper, dtype=float), y.shape)
    x0 = _balanced_box_start(alpha, y, u_old, u_new)
    return {} if x0 is None else {"x0": x0}


def svor_pair(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``smo-or`` (SVOR duals): :math:`(\alpha, \alpha^*)` scaled by :math:`C_{new}/C_{old}`.

    The box is :math:`[0, C]` and every other constraint is homogeneous (partial sums or
    per-threshold balances), so the scaled pair is feasible.
    """
    a, s = previous.values.get("alpha"), previous.values.get("alpha_star")
    con_old, con_new = old.data.get("svor"), new.data.get("svor")
    if (a is None or s is None or con_old is None or con_new is None
            or type(con_old) is not type(con_new)
            or not (_same(con_old.ranks, con_new.ranks)
                    and np.shape(con_old.X) == np.shape(con_new.X))):
        return {}
    ratio = float(con_new.C) / float(con_old.C)
    return {"x0": (np.clip(np.asarray(a, dtype=float) * ratio, 0.0, con_new.C),
                   np.clip(np.asarray(s, dtype=float) * ratio, 0.0, con_new.C))}


def cbor_pair(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``cbor-smo``: the previous :math:`(\alpha, \alpha^*)` (its box :math:`[0, 1]` and
    partial sums do not depend on the hyper-parameters)."""
    a, s = previous.values.get("alpha"), previous.values.get("alpha_star")
    if a is None or s is None or not (_same(old.data["ranks"], new.data["ranks"])
                                      and int(old.data["r"]) == int(new.data["r"])):
        return {}
    return {"x0": (np.asarray(a, dtype=float), np.asarray(s, dtype=float))}


def rank_beta(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``rank-tr`` / ``rank-newton``: the previous :math:`\beta` (same basis), any λ."""
    beta = previous.values.get("beta")
    rank_old, rank_new = old.data.get("rank"), new.data.get("rank")
    if (beta is None or rank_old is None or rank_new is None
            or not _same(old.data.get("basis"), new.data.get("basis"))
            or np.shape(rank_old.KR) != np.shape(rank_new.KR)
            or np.shape(beta) != (rank_new.n_basis,)):
        return {}
    return {"x0": np.asarray(beta, dtype=float)}


def pegasos_wb(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    """``pegasos`` / ``weighted-pegasos``: the previous ``(w, b)`` (or ``(v, b)``).

    The solver projects ``w`` onto its ball of radius :math:`1/\\sqrt\\lambda` of the
    new costs, so any ``w`` is a valid start.
    """
    w = previous.values.get("w", previous.values.get("v"))
    b = previous.values.get("b")
    if (w is None or b is None or not _same(old.data["y"], new.data["y"])
            or np.shape(old.data["X"]) != np.shape(new.data["X"])
            or old.data.get("kernel") != new.data.get("kernel")):
        return {}
    return {"x0": np.concatenate([np.asarray(w, dtype=float).reshape(-1),
                                  [float(np.asarray(b))]])}


def simplex_w(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``simplex-smo`` (QPFS): the previous point of the simplex, feasible at every α."""
    w = previous.values.get("w")
    qp_old, qp_new = old.data.get("qp"), new.data.get("qp")
    if w is None or qp_old is None or qp_new is None \
            or qp_old.n_features != qp_new.n_features:
        return {}
    w = np.clip(np.asarray(w, dtype=float).ravel(), 0.0, None)
    total = float(w.sum())
    return {"x0": w / total} if total > 0 else {}


def ellipsoid_multipliers(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``ellipsoid-newton``: the previous multipliers :math:`(\lambda_+, \lambda_-)`.

    Any non-negative pair is a valid start; the rates move the ellipsoids' sizes, not
    their shapes, so the previous optimum is near the next.
    """
    lam = previous.extras.get("multipliers")
    if lam is None:
        return {}
    lam = np.asarray(lam, dtype=float).reshape(-1)
    if lam.shape != (2,) or not np.all(np.isfinite(lam)) or np.any(lam < 0):
        return {}
    return {"x0": (float(lam[0]), float(lam[1]))}

