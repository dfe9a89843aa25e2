r"""``lin-han``: distance between two ellipsoids for the specified-rates classifier.

Lin & Han 2002 (SIAM J. Optim. 13:298–308; seed 003 Sec. 2.3.1, errata S003-A1) on the
programs of :func:`conicml.formulations.specified_rates.specified_rates`, whose
covariances must be positive definite (``ridge > 0`` otherwise). It stops when the
segment between the two points is normal to both boundaries within ``tol`` radians;
the algorithm, the certificate and the returned point are in the Notes of
:func:`solve_lin_han`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.linalg

from ..exceptions import OptionError, SolverError
from ..registry import register
from ..solution import Residuals, Solution, Status
from ._callback import Callback
from ._driver import Driver, Reason, message_table, status_table
from ._ellipsoid_distance import (
    RATES_KINDS,
    check_rates_program,
    program_covariances,
    rates_solution,
)
from ._report import IterationReport

__all__ = ["TERMINATION_MESSAGES", "solve_lin_han"]


#: Stop reason -> message.
TERMINATION_MESSAGES: dict[int, str] = message_table(
    "converged: max(theta_pos, theta_neg) <= tol (segment normal to both ellipsoids)",
    {4: "the ellipsoids intersect (t_pos >= t_neg): the specified rates are infeasible"})

#: Stop reason -> Status; a non-converged result is returned, never raised.
STATUS_MAP: dict[int, Status] = status_table({4: Status.INFEASIBLE})


class _Ellipsoid:
    """:math:`\\{z : (z-\\mu)^T S (z-\\mu) \\le \\kappa^2\\}` with :math:`S = \\Sigma^{-1}`."""

    def __init__(self, mu: np.ndarray, cov: np.ndarray, kappa: float, name: str) -> None:
        self.mu = mu
        self.cov = cov
        self.kappa = float(kappa)
        self.point = self.kappa == 0.0
        cov = 0.5 * (cov + cov.T)
        n = cov.shape[0]
        # lambda_min alone (LAPACK syevr with an index range) and a Cholesky inverse: both
        # cheaper than a full eigendecomposition
        lam_min = float(scipy.linalg.eigh(cov, eigvals_only=True, subset_by_index=[0, 0])[0])
        scale = max(float(np.trace(cov)) / n, 1e-300)
        if not lam_min > 1e-13 * scale:
            raise SolverError(
                f"lin-han needs a positive definite covariance for the {name} class "
                f"(smallest eigenvalue {lam_min:.3g}); build the program with ridge > 0"
            )
        factor = scipy.linalg.cho_factor(cov, lower=True)
        S = scipy.linalg.cho_solve(factor, np.eye(n))
        self.S = 0.5 * (S + S.T)
        self.lam_min = lam_min  # delta = 1/||A|| = lam_min/2, step = delta * grad
        self.name = name

    def q(self, z: np.ndarray) -> float:
        r = z - self.mu
        return float(r @ self.S @ r) - self.kappa**2


def _roots(E: _Ellipsoid, Sr: np.ndarray, r: np.ndarray, Sd: np.ndarray,
           d: np.ndarray) -> tuple[float, float]:
    """Both roots of :math:`q(c + t d) = 0` (``r = c - mu``, ``Sr = S r``, ``Sd = S d``)."""
    a = float(d @ Sd)
    bb = float(r @ Sd)
    c = float(r @ Sr) - E.kappa**2
    disc = bb * bb - a * c
    if disc < 0:
        return math.nan, math.nan  # the line misses the ellipsoid
    sq = math.sqrt(disc)
    qq = -(bb + math.copysign(sq, bb))  # stable quadratic formula
    if qq == 0.0:
        return 0.0, 0.0
    t_a, t_b = qq / a, c / qq
    return (t_a, t_b) if t_a <= t_b else (t_b, t_a)


def _angle(u: np.ndarray, v: np.ndarray) -> float:
    nu, nv = math.sqrt(float(u @ u)), math.sqrt(float(v @ v))
    if nu == 0.0 or nv == 0.0:
        return math.pi
    cos = float(u @ v) / (nu * nv)
    if cos > 0.9:  # arccos loses precision near 0: 2 sin(theta/2) = theta + O(theta^3)
        diff = u / nu - v / nv
        return math.sqrt(float(diff @ diff))
    return math.acos(max(-1.0, min(1.0, cos)))


class _Report(IterationReport):
    """Fixed-width iteration table (the layout of scipy's trust-constr report)."""

    COLUMN_NAMES = ["iter", "distance", "theta_pos", "theta_neg", "gap", "time [s]"]
    COLUMN_WIDTHS = [8, 16, 11, 11, 11, 10]
    ITERATION_FORMATS = ["^8", "^16.10g", "^11.3e", "^11.3e", "^11.3e", "^10.3f"]


def _start(E: _Ellipsoid, x: Any, name: str) -> np.ndarray:
    c = np.array(x, dtype=float, copy=True).reshape(-1)
    if c.shape != E.mu.shape or not np.all(np.isfinite(c)):
        raise OptionError(f"lin-han: x0[{name}] must be a finite vector of shape {E.mu.shape}")
    if E.point:
        return E.mu.copy()
    qv = E.q(c)
    slack = 1e-9 * max(1.0, E.kappa**2)
    if qv > slack:
        raise OptionError(
            f"lin-han: x0[{name}] lies outside its ellipsoid (q = {qv:.3g} > 0); a warm start "
            "must be a point of each closed ellipsoid"
        )
    if qv > -slack:  # on the boundary: take the centre of the inner ball touching there
        c = c - E.lam_min * (E.S @ (c - E.mu))
    return c


@register("lin-han", kinds=list(RATES_KINDS),
          description="Lin-Han ellipsoid distance for the specified-rates classifier (seed 003)",
          certify_tol=1e-4)  # default angle tol 1e-10; ~1e-6 ill-conditioned
def solve_lin_han(
    program,
    *,
    tol: float = 1e-10,
    max_iter: int = 200_000,
    time_limit: float | None = None,
    verbose: bool = False,
    x0: tuple[np.ndarray, np.ndarray] | None = None,
    callback: Callback | None = None,
) -> Solution:
    r"""Lin–Han ellipsoid distance for the specified-rates classifier.

    Parameters
    ----------
    program : Program
        From :func:`conicml.formulations.specified_rates.specified_rates` (either form,
        linear or kernel); its covariances must be positive definite.
    tol : float, default=1e-10
        Stop when :math:`\max(\theta_+, \theta_-) \le \texttt{tol}` (radians).
    max_iter : int, default=200000
        Iteration cap (each iteration costs :math:`O(n^2)`).
    time_limit : float, optional
        Wall-clock limit in seconds for the iterations.
    verbose : bool, default=False
        Print a table (every 1000 iterations and at the end).
    x0 : tuple (c_pos, c_neg), optional
        Warm start: a point of each closed ellipsoid (see Notes).
    callback : callable, optional
        ``callback(intermediate_result)`` after every iteration with an
        :class:`~conicml.solvers._callback.IntermediateResult` (``values`` holds ``z_pos``
        and ``z_neg``, ``residual`` is :math:`\theta = \max(\theta_+, \theta_-)`);
        raising :class:`StopIteration` stops the solver (``USER_LIMIT``).

    Returns
    -------
    Solution
        See Notes for ``objective`` and ``values``; ``extras``
        holds ``z_pos``, ``z_neg``, ``distance``, ``theta_pos``,
        ``theta_neg``, ``lower_bound`` (:math:`D_k`), ``upper_bound``
        (:math:`P_k`), ``t_pos``, ``t_neg`` and ``stop_reason``. Overlapping
        ellipsoids give :attr:`Status.INFEASIBLE` with a message naming the
        rates; a non-converged run gives :attr:`Status.USER_LIMIT`.

    Notes
    -----
    Accepts the programs of :func:`conicml.formulations.specified_rates.specified_rates`
    (kinds ``"socp.chance.rates.primal"`` and ``"socp.chance.rates.dual"``, linear
    and kernel), whose dual (thesis eq. 2.13 / 2.20) is the distance between the
    ellipsoids

    .. math::

        B_i = \{z : q_i(z) \le 0\},\qquad
        q_i(z) = (z - \mu_i)^\top \Sigma_i^{-1} (z - \mu_i) - \kappa_i^2,\qquad i \in \{+, -\},

    i.e. :math:`q_i(z) = \tfrac12 z^\top A_i z + b_i^\top z + \rho_i` with
    :math:`A_i = 2\Sigma_i^{-1}` (errata S003-A1). :math:`\Sigma_i` are the program's
    (regularised) covariances :math:`C_\pm C_\pm^\top` (the factors ``C_pos``, ``C_neg`` that
    define the program); they must be positive
    definite (use ``ridge > 0`` in the formulation otherwise).

    **Algorithm** (Lin & Han 2002, "On the distance between two ellipsoids",
    SIAM J. Optim. 13:298–308; thesis Sec. 2.3.1 with the corrections of the
    errata S003-A1). Start from interior points :math:`c_i = \mu_i`.
    Repeat:

    1. On the segment :math:`c_+ + t(c_- - c_+)`, :math:`t \in [0, 1]`, find the
       root :math:`t_+` where it **leaves** :math:`B_+` (the larger root of
       :math:`q_+ = 0`) and the root :math:`t_-` where it **enters** :math:`B_-`
       (the smaller root of :math:`q_- = 0`); :math:`z_\pm` are the two points.
       If :math:`t_+ \ge t_-` the ellipsoids intersect: the rates are infeasible
       (status ``INFEASIBLE``).
    2. Angles between the connecting segment and the outward normals,
       :math:`\theta_+ = \angle(z_- - z_+, \nabla q_+(z_+))`,
       :math:`\theta_- = \angle(z_+ - z_-, \nabla q_-(z_-))`.
    3. Move each centre to the centre of a ball inside :math:`B_i` that touches
       :math:`\partial B_i` at :math:`z_i`:
       :math:`c_i \leftarrow z_i - \delta_i \nabla q_i(z_i)`, radius
       :math:`\delta_i\|\nabla q_i(z_i)\|` (the thesis prints the radius as
       :math:`\delta_i`: erratum), with the largest admissible
       :math:`\delta_i = 1/\|A_i\|_2 = \lambda_{\min}(\Sigma_i)/2`.

    A class with :math:`\kappa_i = 0` is the single point :math:`\mu_i`
    (:math:`z_i = c_i = \mu_i`, no angle condition). Each iteration costs a few
    matrix–vector products with :math:`\Sigma_i^{-1}`, :math:`O(n^2)` (:math:`n`
    the dimension, or the rank of the Gram factor in the kernel case); the setup
    is two symmetric eigendecompositions, :math:`O(n^3)`.

    **Stopping criterion.** The KKT conditions (2.15) of (2.13) say that the
    segment :math:`z_+ z_-` is normal to both boundaries, so the loop stops when

    .. math::

        \max(\theta_+, \theta_-) \le \texttt{tol} \quad\text{(radians)}.

    **Certificate.** Every iterate :math:`z_\pm` is dual feasible, so with
    :math:`d_k = \|z_+ - z_-\|` and the unit direction :math:`e = (z_+ - z_-)/d_k`,

    .. math::

        D_k = \frac{2}{d_k^2} \;\le\; \tfrac12\|w^*\|^2 \;\le\;
        P_k = \frac{2}{s(e)^2},\qquad
        s(e) = e^\top(\mu_+ - \mu_-) - \kappa_+\sqrt{e^\top\Sigma_+e}
               - \kappa_-\sqrt{e^\top\Sigma_-e},

    where :math:`P_k` is the objective of the *primal feasible* hyperplane
    :math:`w = 2e/s(e)` (the direction (2.14) scaled so both cone constraints
    hold; equal to (2.14) at the optimum). ``Residuals(primal=`` largest cone
    violation of the returned point ``, dual=`` :math:`\max(\theta_+, \theta_-)`
    ``, gap=`` :math:`P_k - D_k` ``)``.

    **Returned point.** Kind ``...primal``: ``objective`` :math:`= P_k`,
    ``values = {"w" | "v", "b"}`` (the feasible hyperplane above, package
    convention :math:`f(x) = w^\top x + b`, i.e. :math:`b = -b_{thesis}` with
    (2.16)). Kind ``...dual``: ``objective`` :math:`= d_k^2`,
    ``values = {"u_pos", "u_neg"}`` with :math:`z_\pm = \mu_\pm \mp \kappa_\pm
    C_\pm u_\pm` (minimum-norm :math:`u`). Either way the program's ``decode``
    gives the same :math:`(w, b)` as the generic SOCP backends.

    **Warm-start:** supported: ``x0 = (c_pos, c_neg)``, one point of each closed
    ellipsoid (e.g. ``extras["z_pos"], extras["z_neg"]`` of a previous run on a
    nearby program); a boundary point is replaced by its inner-ball centre.
    """
    driver = Driver("lin-han", tol=tol, max_iter=max_iter, time_limit=time_limit,
                    messages=TERMINATION_MESSAGES, statuses=STATUS_MAP, callback=callback,
                    legacy=lambda r: (r.iteration, r.values["z_pos"], r.values["z_neg"],
                                      r.residual),
                    report=_Report if verbose else None, allow_zero=True)
    data = check_rates_program(program, "lin-han")
    cov_pos, cov_neg = program_covariances(data)  # C C^T: the program's own ellipsoids
    Ep = _Ellipsoid(np.asarray(data["mean_pos"], float), cov_pos, data["kappa_pos"], "positive")
    En = _Ellipsoid(np.asarray(data["mean_neg"], float), cov_neg, data["kappa_neg"], "negative")
    if x0 is None:
        cp_, cn_ = Ep.mu.copy(), En.mu.copy()
    else:
        if not (isinstance(x0, (tuple, list)) and len(x0) == 2):
            raise OptionError("lin-han: x0 must be a pair (c_pos, c_neg)")
        cp_, cn_ = _start(Ep, x0[0], "pos"), _start(En, x0[1], "neg")
    setup_time = driver.elapsed
    driver.start(f"lin-han: n = {Ep.mu.size}, kappa = ({Ep.kappa:.6g}, {En.kappa:.6g}), "
                 f"tol = {tol:g}")
    k, code = 0, int(Reason.MAX_ITER)
    theta_p = theta_n = math.pi
    t_pos = t_neg = math.nan
    zp, zn = cp_.copy(), cn_.copy()
    while True:
        d = cn_ - cp_
        if not np.any(d):
            code = 4  # the interior points coincide: the ellipsoids intersect
            t_pos, t_neg = 0.0, 0.0
            break
        # -- step 1: exit root of B+ (larger), entry root of B- (smaller) ----------------
        if Ep.point:
            t_pos = 0.0
            gp = np.zeros_like(d)
        else:
            rp = cp_ - Ep.mu
            Srp, Sdp = Ep.S @ rp, Ep.S @ d
            t_pos = _roots(Ep, Srp, rp, Sdp, d)[1]
            gp = 2.0 * (Srp + t_pos * Sdp)  # grad q+(z+) = 2 S+ (z+ - mu+)
        if En.point:
            t_neg = 1.0
            gn = np.zeros_like(d)
        else:
            rn = cp_ - En.mu
            Srn, Sdn = En.S @ rn, En.S @ d
            t_neg = _roots(En, Srn, rn, Sdn, d)[0]
            gn = 2.0 * (Srn + t_neg * Sdn)
        if not (t_pos < t_neg):  # also catches nan (numerical breakdown)
            code = 4
            break
        zp, zn = cp_ + t_pos * d, cp_ + t_neg * d
        # -- step 2: angles with the outward normals -----------------------------------
        seg = zn - zp
        theta_p = 0.0 if Ep.point else _angle(seg, gp)
        theta_n = 0.0 if En.point else _angle(-seg, gn)
        theta = max(theta_p, theta_n)
        if verbose and (k % 1000 == 0):
            driver.row(k, float(np.linalg.norm(seg)), theta_p, theta_n, math.nan,
                       driver.elapsed)
        if driver.listening and driver.notify(
                k, theta, values={"z_pos": zp.copy(), "z_neg": zn.copy()}):
            code = int(Reason.CALLBACK)
            break
        if driver.converged(theta):
            code = int(Reason.CONVERGED)
            break
        limit = driver.limit(k)
        if limit is not None:
            code = int(limit)
            break
        # -- step 3: centres of the inner balls touching at z (delta = lam_min / 2) -----
        if not Ep.point:
            cp_ = zp - 0.5 * Ep.lam_min * gp
        if not En.point:
            cn_ = zn - 0.5 * En.lam_min * gn
        k += 1
    solve_time = driver.elapsed
    return _result(program, data, Ep, En, zp, zn, code, k, theta_p, theta_n, t_pos, t_neg,
                   setup_time, solve_time, verbose)


def _result(program: Any, data: Mapping[str, Any], Ep: _Ellipsoid, En: _Ellipsoid,
            zp: np.ndarray, zn: np.ndarray, code: int, k: int, theta_p: float,
            theta_n: float, t_pos: float, t_neg: float, setup_time: float,
            solve_time: float, verbose: bool) -> Solution:
    status = STATUS_MAP[code]
    message = TERMINATION_MESSAGES[code]
    extras: dict[str, Any] = {"stop_reason": code, "t_pos": t_pos, "t_neg": t_neg,
                              "theta_pos": theta_p, "theta_neg": theta_n}
    if code == 4:
        message += (f" (error_pos={data.get('eta_pos', math.nan):g}, "
                    f"error_neg={data.get('eta_neg', math.nan):g}, kappa_pos={Ep.kappa:.6g}, "
                    f"kappa_neg={En.kappa:.6g}; t_pos={t_pos:.6g} >= t_neg={t_neg:.6g}); "
                    "raise error_pos or error_neg")
        if verbose:
            print(f"lin-han: {message}")
        return Solution(status=status, solver="lin-han", iterations=k, setup_time=setup_time,
                        solve_time=solve_time, residuals=Residuals(source="solver"),
                        message=message, extras=extras)
    u = {}
    for key, z, E, sign in (("u_pos", zp, Ep, 1.0), ("u_neg", zn, En, -1.0)):
        C = np.asarray(data[f"C_{key[2:]}"], dtype=float)
        if E.point:
            u[key] = np.zeros(C.shape[1])
        else:  # min-norm u with mu -/+ kappa C u = z: u = C^T Sigma^{-1} (mu - z) / kappa
            u[key] = sign * (C.T @ (E.S @ (E.mu - z))) / E.kappa
    solution = rates_solution(
        program, data, solver="lin-han", status=status, message=message, z_pos=zp, z_neg=zn,
        u_pos=u["u_pos"], u_neg=u["u_neg"], dual_residual=max(theta_p, theta_n),
        iterations=k, setup_time=setup_time, solve_time=solve_time, extras=extras)
    if verbose:
        _Report.print_iteration(k, solution.extras["distance"], theta_p, theta_n,
                                solution.residuals.gap, solve_time)
        print(f"lin-han: {message}")
        print(f"lin-han: 1/2||w||^2 in [{solution.extras['lower_bound']:.12g}, "
              f"{solution.extras['upper_bound']:.12g}]")
    return solution

