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
    "fractional_w",
    "m4_rho",
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
    r"""Alpha seeding for a box :math:`[0, u]` with :math:`y^\top\alpha = 0`.

    The bounded and free sets are kept (DeCoste & Wagstaff's seeding, KDD 2000, applied to
    the bounded variables only): a variable at its old bound :math:`u^{old}_i` moves to
    the new bound :math:`u^{new}_i`, a free one keeps its value (clipped to the new box), a
    zero stays zero. Scaling every variable by :math:`u^{new}/u^{old}` instead throws the
    free variables away from an optimum that, once no variable is bounded, does not depend
    on the box at all (separable in feature space: the kept start is optimal). Moving the
    bounds breaks :math:`y^\top\alpha = 0` by :math:`\sum_{bounded} y_i (u^{new}_i -
    u^{old}_i)`; the class with the larger sum gives the excess back from its free
    variables (scaled down together), or from all its variables if they do not hold it.
    An infinite box (hard margin) keeps :math:`\alpha` as it is.
    """
    alpha = np.asarray(alpha, dtype=float)
    if alpha.shape != y.shape or not np.all(np.isfinite(alpha)):
        return None
    bounded = np.isfinite(u_old) & (alpha >= u_old * (1.0 - 1e-12)) & (alpha > 0)
    x0 = np.where(bounded & np.isfinite(u_new), u_new, np.minimum(alpha, u_new))
    pos = y > 0
    s_pos, s_neg = float(x0[pos].sum()), float(x0[~pos].sum())
    # a round-off imbalance is left alone: rescaling by 1 - 1e-16 would move every
    # bounded variable off its bound (free to SMO: hundreds of extra updates)
    scale = float(np.sum(np.where(np.isfinite(u_new), u_new, x0)))
    excess = abs(s_pos - s_neg)
    if excess > 1e-12 * max(1.0, scale):
        side = pos if s_pos > s_neg else ~pos
        free = side & ~bounded & (x0 > 0)
        held = float(x0[free].sum())
        if held > excess:
            x0[free] *= 1.0 - excess / held
        else:
            x0[side] *= min(s_pos, s_neg) / max(s_pos, s_neg)
    return np.clip(x0, 0.0, u_new)


def smo_alpha(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    """``smo`` (SVM dual): the previous alpha, bounded variables moved to the new costs."""
    alpha = previous.values.get("alpha")
    if alpha is None or not (_same(old.data["y"], new.data["y"])
                             and np.shape(old.data["X"]) == np.shape(new.data["X"])):
        return {}
    x0 = _balanced_box_start(alpha, np.asarray(new.data["y"], dtype=float),
                             np.asarray(old.data["c"], dtype=float),
                             np.asarray(new.data["c"], dtype=float))
    return {} if x0 is None else {"x0": x0}


def cbc_alpha(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    """``cbc-smo`` (CBC duals): the previous alpha, bounded variables moved to the new box."""
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



def fractional_w(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""``ils-newton`` / ``dinkelbach`` (MPM, BMPM): the previous point :math:`w` (the SOCP's
    ``v``, any scale) when :math:`w^\top d > 0` for the new program (same features).

    Along :math:`\beta_0` or the ridge only the rates and covariances move, so the previous
    hyperplane is a valid start whose ratio is near the new optimum.
    """
    v = previous.values.get("v")
    d = new.data.get("d")
    if v is None or d is None:
        return {}
    v, d = np.asarray(v, dtype=float).reshape(-1), np.asarray(d, dtype=float).reshape(-1)
    if v.shape != d.shape or not np.all(np.isfinite(v)) or not float(d @ v) > 0:
        return {}
    return {"x0": v}


def m4_rho(previous: Any, old: Any, new: Any) -> dict[str, Any]:
    r"""The soft-M4 searches over :math:`\rho` (``quadratic-interpolation``,
    ``envelope-newton``; ``brent`` ignores ``x0``): the previous :math:`\rho^*` as the
    first middle point.

    The search interval :math:`[0, \kappa^*_{MPM}]` does not depend on C, and a middle
    point outside it is ignored by the search, so any previous :math:`\rho^*` is valid.
    Other kinds (MEMPM's search over β) start cold.
    """
    rho = previous.values.get("rho")
    if rho is None or new.kind != old.kind or "m4" not in new.data:
        return {}
    rho = float(np.asarray(rho))
    return {"x0": rho} if np.isfinite(rho) and rho > 0 else {}
