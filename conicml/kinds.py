"""Every program kind, in one place.

A *kind* is a dotted string naming the structure of a program (not the
learner): its first component tells a generic backend whether it can take the
program (``qp.*`` and ``socp.*`` go to the cvxpy backends, OSQP takes ``qp.*``
only); ``quasiconvex.*``, ``sequential.*`` and other first components have no
single conic form and are accepted only by the specialized solvers written for
them. Formulations build programs of these kinds and solvers register for them
by importing the constants from here (never from a formulation module), so a
kind is spelled once.

Families add their kinds to this module, in a block of their own.
"""

from __future__ import annotations

__all__ = [
    "ALL_KINDS",
    "CBC_DUAL",
    "CBC_HARD_DUAL",
    "CBC_HARD_PRIMAL",
    "CBC_PRIMAL",
    "CBC_W_DUAL",
    "CBC_W_PRIMAL",
    "CBOR_DUAL",
    "CBOR_PRIMAL",
    "KFDA",
    "KQPFS",
    "LSVR",
    "LSVR_KERNEL",
    "M4_SEPARABLE",
    "M4_SHARED",
    "M4_SOFT",
    "QPFS",
    "QPFS_RESTRICTED",
    "MEMPM",
    "BMPM",
    "MPM",
    "RANK_HINGE",
    "RANK_SMOOTHED",
    "RATES_DUAL",
    "RATES_PRIMAL",
    "SVM_DUAL",
    "SVM_HARD_DUAL",
    "SVM_HARD_PRIMAL",
    "SVM_PRIMAL",
    "SVOR_QP",
    "SVOR_SOCP",
    "SVOR_QP_DUAL",
    "SVORIM_QP",
    "SVORIM_QP_DUAL",
    "CBC_HULL_DUAL",
    "BMPM_GEOMETRIC_DUAL",
    "TRS",
    "TRS_CONVEX",
]

# -- SVM (formulations/svm.py) ---------------------------------------------------------
SVM_PRIMAL = "qp.svm.primal"
SVM_DUAL = "qp.svm.dual"
SVM_HARD_PRIMAL = "qp.svm.hard.primal"
SVM_HARD_DUAL = "qp.svm.hard.dual"

# -- minimax probability machines (formulations/minimax.py) -----------------------------
MPM = "socp.mpm"
BMPM = "socp.bmpm"
MEMPM = "sequential.mempm"

# -- maxi-min margin machine (formulations/m4.py) -------------------------------------
M4_SEPARABLE = "quasiconvex.m4"
M4_SOFT = "sequential.m4"
M4_SHARED = "qp.m4.shared"

# -- LSVR (formulations/lsvr.py) ------------------------------------------------------
LSVR = "socp.lsvr"
LSVR_KERNEL = "socp.lsvr.kernel"

# -- chance-constrained classifiers with specified rates -------------------------------
RATES_PRIMAL = "socp.chance.rates.primal"
RATES_DUAL = "socp.chance.rates.dual"

# -- cluster-based chance-constrained classifier (CBC) ---------------------------------
CBC_PRIMAL = "socp.chance.cbc.primal"
CBC_DUAL = "socp.chance.cbc.dual"
CBC_HARD_PRIMAL = "socp.chance.cbc.hard.primal"
CBC_HARD_DUAL = "socp.chance.cbc.hard.dual"
CBC_W_PRIMAL = "socp.chance.cbc_w.primal"
CBC_W_DUAL = "socp.chance.cbc_w.dual"

# -- ordinal regression (CBOR, SVOR) ---------------------------------------------------
CBOR_PRIMAL = "socp.chance.cbor.primal"
CBOR_DUAL = "socp.chance.cbor.dual"
SVOR_SOCP = "socp.chance.svor"
SVOR_QP = "qp.chance.svor"

# -- seeds 003/004 completion (issue 15) -------------------------------------------------
#: Dual of the C-form SVOR (4.1) (Chu & Keerthi's explicit thresholds), solved by smo-or.
SVOR_QP_DUAL = "qp.chance.svor.dual"
#: Chu & Keerthi's SVOR with *implicit* threshold constraints ("SVORIM"): every threshold
#: constrained by every point; primal (generic backends) and its dual (smo-or as well).
SVORIM_QP = "qp.chance.svor.implicit"
SVORIM_QP_DUAL = "qp.chance.svor.implicit.dual"
#: Convex hull of spheres: the geometric dual of the hard-margin CBC (3.13).
CBC_HULL_DUAL = "socp.chance.cbc.hard.hull"
#: BMPM / MPM geometric dual P(lambda) (3.30)-(3.31), the ellipsoid-touching SOCP.
BMPM_GEOMETRIC_DUAL = "socp.bmpm.geometric_dual"

# -- trust-region subproblem and feature scaling (seed 000 ch. 7) -----------------------
#: min g's + s'Hs/2 s.t. ||Ds|| <= Delta, H indefinite: exact SDP relaxation (S-lemma);
#: generic route Clarabel and SCS only (ECOS has no PSD cone).
TRS = "sdp.trs"
#: the same with H PSD: an SOCP, which ECOS takes as well.
TRS_CONVEX = "socp.trs.convex"

# -- rare-class ranking: RankSVM / RankRC (formulations/ranking.py) ---------------------
RANK_HINGE = "qp.rank.hinge"
RANK_SMOOTHED = "socp.rank.smoothed"

# -- feature selection by QP and kernel Fisher discriminants (seed 001 ch. 3-4) ----------
QPFS = "qp.qpfs.simplex"
QPFS_RESTRICTED = "qp.qpfs.restricted"
KFDA = "qp.kfda"
KQPFS = "qp.kqpfs"

#: Every kind defined above.
ALL_KINDS: tuple[str, ...] = tuple(
    value for name, value in sorted(globals().items())
    if name.isupper() and isinstance(value, str)
)
