r"""Pegasos on the row blocks of a Dask array: local mini-batch steps, averaged models.

The program is the linear soft-margin SVM of :mod:`conicml.solvers.pegasos` in its
λ-form, :math:`F = \tfrac\lambda2\|w\|^2 + \lambda\sum_i c_i[1 - y_i(w^\top x_i + b)]_+`,
:math:`\lambda = 1/\sum_i c_i` (seed 001 eqs. 2.33–2.35, Alg. 2). The fit is OPTIMAL when
the certified relative duality gap is at most ``tol``; the rounds, the bias and the
certificate are in the Notes of :func:`fit_pegasos_dask`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..exceptions import OptionError
from ..solution import Residuals, Solution
from ..solvers import Driver
from ._dask_linear import (
    _BIAS_OFFSETS,
    _CHUNK,
    _MESSAGES,
    _block,
    _blocks,
    _tree,
    class_costs,
    feasible_dual,
    relative_gap,
)

__all__ = ["fit_pegasos_dask"]

#: Widths tau of the implied dual multipliers tried at every certificate.
_TAUS = np.array([0.0, 0.01, 0.03, 0.1, 0.3, 1.0])

_OPTIONS = ("tol", "max_iter", "time_limit", "batch_size", "local_steps", "step_offset",
            "random_state", "verbose", "callback")

def _certificate_terms(X: np.ndarray, y: np.ndarray, c: np.ndarray, W: np.ndarray,
                       biases: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Hinge sums over ``biases`` and the implied duals' class sums, per row of ``W``.

    Summed chunk by chunk (:data:`_CHUNK` rows): the temporaries stay small whatever the
    block's size.
    """
    n, d = X.shape
    hinge = np.zeros((W.shape[0], biases.size))
    mass = np.zeros((W.shape[0], _TAUS.size, 2))
    vec = np.zeros((W.shape[0], _TAUS.size, 2, d))
    for lo in range(0, n, _CHUNK):
        Xc, yc, cc = X[lo:lo + _CHUNK], y[lo:lo + _CHUNK], c[lo:lo + _CHUNK]
        F = Xc @ W.T  # (chunk, points)
        pos = yc > 0
        for p in range(W.shape[0]):
            for j, bias in enumerate(biases):
                hinge[p, j] += cc @ np.maximum(0.0, 1.0 - yc * (F[:, p] + bias))
            m = yc * (F[:, p] + b[p])
            for j, tau in enumerate(_TAUS):
                if tau == 0.0:
                    a = cc * np.where(m < 1.0, 1.0, np.where(m == 1.0, 0.5, 0.0))
                else:
                    a = cc * np.clip((1.0 - m) / tau + 0.5, 0.0, 1.0)
                a_pos = np.where(pos, a, 0.0)
                a_neg = a - a_pos
                mass[p, j] += a_pos.sum(), a_neg.sum()
                vec[p, j, 0] += a_pos @ Xc
                vec[p, j, 1] += a_neg @ Xc
    return {"hinge": hinge, "mass": mass, "vec": vec}


def _round_block(Xb: Any, yb: Any, positive: Any, c_pos: float, c_neg: float,
                 W: np.ndarray, biases: np.ndarray, b: np.ndarray, t0: int, lam: float,
                 steps: int, k: int, seed: int, offset: float = 0.0
                 ) -> dict[str, np.ndarray]:
    r"""The certificate terms of the points ``W``, then Pegasos steps from ``W[0]``.

    Step ``t`` (from ``t0 + 1``) is :math:`\eta_t = 1/(\lambda(t + t_0))` with ``offset``
    :math:`t_0` (0: Alg. 2 as printed).
    """
    X, y = _block(Xb, yb, positive)
    c = np.where(y > 0, c_pos, c_neg)
    out = _certificate_terms(X, y, c, W, biases, b)
    mass = float(c.sum())
    w = W[0].copy()
    if mass > 0.0 and steps > 0:
        rng = np.random.default_rng(seed)
        cdf = np.cumsum(c) / mass
        radius = 1.0 / math.sqrt(lam)
        for s in range(1, steps + 1):
            t = t0 + s + offset
            idx = np.minimum(np.searchsorted(cdf, rng.random(k)), y.size - 1)
            Xi, yi = X[idx], y[idx]
            viol = yi * (Xi @ w + b[0]) < 1.0
            w *= 1.0 - 1.0 / t
            if np.any(viol):
                w += (1.0 / (lam * t * k)) * (yi[viol] @ Xi[viol])
            norm = float(np.linalg.norm(w))
            if norm > radius:
                w *= radius / norm
    out["w_mass"] = mass * w
    out["block_mass"] = np.array(mass)
    return out


def _options(options: dict | None) -> dict[str, Any]:
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(_OPTIONS))
    if unknown:
        raise OptionError(f"pegasos on Dask: unknown solver_options {unknown}; "
                          f"accepted: {list(_OPTIONS)}")
    out = {"tol": 1e-3, "max_iter": 200, "time_limit": None, "batch_size": 64,
           "local_steps": 50, "step_offset": "auto", "random_state": 0, "verbose": False,
           "callback": None}
    out.update(opts)
    # tol, max_iter, time_limit and callback: the driver's own checks
    Driver("pegasos on Dask", tol=out["tol"], max_iter=out["max_iter"],
           time_limit=out["time_limit"], messages=_MESSAGES, callback=out["callback"])
    for key in ("batch_size", "local_steps"):
        v = out[key]
        if not (isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1):
            raise OptionError(f"pegasos on Dask: {key} must be a positive integer, "
                              f"got {v!r}")
    v = out["step_offset"]
    if not (isinstance(v, str) and v == "auto") and (
            isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0):
        raise OptionError(f"pegasos on Dask: step_offset must be 'auto' or an integer >= 0, "
                          f"got {v!r}")
    return out


def _block_sq_norms(Xb: Any, yb: Any, positive: Any) -> dict[str, np.ndarray]:
    X, _ = _block(Xb, yb, positive)
    return {"sq": np.array(float(np.einsum("ij,ij->", X, X))),
            "n": np.array(float(X.shape[0]))}


def _step_offset(option: int | str, Xd: list, yd: list, positive: Any, lam: float,
                 k: int) -> float:
    r""":math:`t_0` of the steps: ``option``, or for ``"auto"`` the in-memory rule
    :math:`\lfloor\overline{\|x\|^2}/(\lambda k)\rfloor` (one pass over the blocks)."""
    import dask

    if option != "auto":
        return float(option)
    sums = _tree(dask, [dask.delayed(_block_sq_norms)(xb, yb, positive)
                        for xb, yb in zip(Xd, yd)]).compute()
    mean_sq = float(sums["sq"]) / max(float(sums["n"]), 1.0)
    return float(math.floor(mean_sq / (lam * k)))


def fit_pegasos_dask(X: Any, y: Any, positive: Any, C: float,
                     class_weight: dict | str | None, classes: np.ndarray,
                     options: dict | None) -> Solution:
    r"""Fit the linear soft-margin SVM by distributed Pegasos on a Dask array.

    Same arguments and result as :func:`conicml.estimators._dask_linear.fit_linear_svm_dask`
    (``values["w"]``, ``values["b"]``, the block-wise certificate).

    Notes
    -----
    **Rounds.** The client sends :math:`(w, b)` and the step counter :math:`t`; every
    worker runs ``local_steps`` Pegasos steps on its block from :math:`w` (mini-batches of
    ``batch_size`` rows drawn with probability :math:`c_i/C_k`, :math:`C_k = \sum_{i\in k}
    c_i`; :math:`\eta_t = 1/(\lambda(t + t_0))`; the margin test with the bias; the
    projection on the ball of radius :math:`1/\sqrt\lambda`) and returns :math:`C_k w_k`.
    ``step_offset`` :math:`t_0` is Bottou's offset, as in the in-memory ``pegasos``: with
    :math:`t_0 = 0` (Alg. 2 as printed) and :math:`\lambda = 1/\sum_ic_i` small, the first
    steps of :math:`1/\lambda` throw :math:`w` to the ball's rim and the steps shrink only
    after about :math:`1/\lambda` steps, so no certified point beats :math:`w = 0` for
    many rounds; ``"auto"`` takes :math:`t_0 = \lfloor\overline{\|x\|^2}/(\lambda
    k)\rfloor`, where one row's share of the first step moves its margin by about 1. The client
    averages, :math:`w \leftarrow \sum_k C_k w_k / \sum_k C_k`: with one local step this is
    exactly a Pegasos step on a mini-batch stratified over the blocks (the block
    sub-gradients weighted by :math:`C_k/\sum c` are an unbiased sub-gradient of
    :math:`F`); with more it is parameter mixing (Zinkevich, Weimer, Smola & Li, NIPS
    2010). The client also keeps the polynomial-decay average of the round iterates
    (Shamir & Zhang, ICML 2013).

    **Bias and certificate** (in the same pass, for the incoming iterate and the average).
    The hinge sums for a grid of biases around the current one give :math:`P(w, b)` for
    each (the next rounds use the best bias); the dual lower bound is that of the implied
    multipliers :math:`\alpha_i = c_i\,\mathrm{clip}((1 - m_i)/\tau + \tfrac12, 0, 1)`
    (:math:`m_i` the margins; :math:`\tau = 0` is the sub-gradient's :math:`c_i[m_i < 1]`)
    for a few widths :math:`\tau`, each made feasible (the heavier class scaled down to
    :math:`y^\top\alpha = 0`) and scaled by the best :math:`s \in [0, 1]`:
    :math:`D(s\alpha) = s\mathbf 1^\top\alpha - \tfrac{s^2}2\|\sum_i\alpha_iy_ix_i\|^2`. The
    blocks return per class the sums :math:`\sum\alpha_i` and :math:`\sum\alpha_ix_i`, so
    one pass gives every candidate. The fit is OPTIMAL when the best :math:`P` against the
    best :math:`D` has a relative gap :math:`\le` ``tol``.

    **Why this dual bound is loose when** :math:`n \gg d`. The implied multipliers are a
    function of the margins alone. Every row whose margin the iterate misjudges by more
    than the band :math:`\tau` gets a multiplier off by up to :math:`c_i`, and the number
    of such rows grows with :math:`n` at a fixed accuracy of :math:`w`, so
    :math:`\|\sum_i\alpha_iy_ix_i\|` grows like :math:`n` while the optimal :math:`w` stays
    bounded; the best scaling :math:`s` then gives :math:`D \le S^2/(2q)` with
    :math:`S = \mathbf 1^\top\alpha \propto n` and :math:`q \propto n^2`, i.e. a bounded
    :math:`D` against a primal value :math:`\propto n`. A tight dual point needs the
    multipliers themselves (as ``dcd`` keeps them); the fit then stops at ``time_limit`` or
    ``max_iter`` with USER_LIMIT and the certified gap, and the returned point is the
    best certified primal one.
    """
    import dask

    t0 = time.perf_counter()
    opts = _options(options)
    driver = Driver("pegasos on Dask", tol=opts["tol"], max_iter=opts["max_iter"],
                    time_limit=opts["time_limit"], messages=_MESSAGES,
                    callback=opts["callback"])
    Xd, yd, _, d = _blocks(X, y)
    K = len(Xd)
    n_pos, n_neg, c_pos, c_neg = class_costs(Xd, yd, classes, positive, C, class_weight)
    lam = 1.0 / (c_pos * n_pos + c_neg * n_neg)  # the lambda-form's lambda = 1 / sum c
    steps, k = int(opts["local_steps"]), int(opts["batch_size"])
    offset = _step_offset(opts["step_offset"], Xd, yd, positive, lam, k)
    rng = np.random.default_rng(opts["random_state"])
    # the client's state: the iterate, its polynomial-decay average, their biases, the
    # step counter, the best certified primal point and the best dual value
    st = {"w": np.zeros(d), "w_avg": np.zeros(d), "b": 0.0, "b_avg": 0.0, "t": 0,
          "best": None, "D": 0.0}
    setup_time = time.perf_counter() - t0
    driver.start()

    def step(r: int) -> float:
        W = np.stack([st["w"], st["w_avg"]])
        b = np.array([st["b"], st["b_avg"]])
        scale = max(1.0, abs(st["b"]))
        biases = np.concatenate([st["b"] + scale * _BIAS_OFFSETS,
                                 st["b_avg"] + scale * _BIAS_OFFSETS])
        seeds = rng.integers(2**31 - 1, size=K)
        parts = [dask.delayed(_round_block)(xb, yb, positive, c_pos, c_neg, W, biases, b,
                                            st["t"], lam, steps, k, int(s), offset)
                 for xb, yb, s in zip(Xd, yd, seeds)]
        sums = _tree(dask, parts).compute()
        # the certificate of both points: their best biases and the best implied duals
        for p, point in enumerate(W):
            j = int(np.argmin(sums["hinge"][p]))
            P = 0.5 * float(point @ point) + float(sums["hinge"][p, j])
            if st["best"] is None or P < st["best"][2]:
                st["best"] = (point.copy(), float(biases[j]), P)
            st["b" if p == 0 else "b_avg"] = float(biases[j])
            st["D"] = max(st["D"], feasible_dual(sums["mass"][p], sums["vec"][p]))
        P = st["best"][2]
        gap = relative_gap(P, st["D"])
        if opts["verbose"]:
            print(f"pegasos on Dask: round {r:4d}  t {st['t']}  P {P:.8g}  D {st['D']:.8g}  "
                  f"gap {gap:.3g}  b {st['best'][1]:.6g}")
        # the next iterate: the blocks' models averaged by mass (used if the rounds go on)
        w = sums["w_mass"] / float(sums["block_mass"])
        st["t"] += steps
        # polynomial-decay average with eta = 3 (Shamir & Zhang), over the rounds
        rate = (3.0 + 1.0) / (r + 1 + 3.0)
        st["w_avg"] = (1.0 - rate) * st["w_avg"] + rate * w
        st["b_avg"] = (1.0 - rate) * st["b_avg"] + rate * st["b"]
        st["w"] = w
        return gap

    reason, rounds, gap = driver.run(
        step, math.inf, lambda: {"w": st["best"][0].copy(), "b": st["best"][1]})
    # the steps of the last round are not certified: the returned point is the best
    # certified one, so they are dropped
    status, message = driver.finish(reason, gap=gap, tol=driver.tol, rounds=rounds)
    w_best, b_best, P = st["best"]
    residuals = Residuals(primal=0.0, dual=gap, gap=gap, source="solver")
    extras = {"b": b_best, "primal_objective": P, "dual_objective": st["D"],
              "rounds": rounds, "steps": st["t"], "blocks": K, "local_steps": steps,
              "batch_size": k, "step_offset": offset, "lambda": lam, "n_pos": int(n_pos),
              "n_neg": int(n_neg), "distributed": True, "stop_reason": int(reason)}
    return Solution(status=status, solver="pegasos", objective=P,
                    values={"w": w_best, "b": b_best}, iterations=rounds,
                    setup_time=setup_time, solve_time=driver.elapsed,
                    residuals=residuals, message=message, extras=extras)
