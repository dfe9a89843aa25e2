"""Every program kind, in one place.

A *kind* is a dotted string naming the structure of a program (not the
learner): its first component tells a generic backend whether it can take the
program (``qp.*`` and ``socp.*`` go to the cvxpy backends, OSQP takes ``qp.*``
only); ``quasiconvex.*``, ``sequential.*`` and other first components have no
single conic form and are accepted only by the specialized solvers written for
them. Formulations build programs of these kinds and solvers register for them
by importing the constants from here (never from a formulation module), so a
kind is spelled once.

Families add their kinds to this module, in a block of their own, and to :data:`FAMILIES`.
"""

from __future__ import annotations

__all__ = [
    "ALL_KINDS",
    "FAMILIES",
    "FS_SVM",
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
    "SVM_L2_DUAL",
    "SVM_L2_PRIMAL",
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
#: the L2-loss (squared hinge) linear SVM, min 1/2||w||^2 + sum_i c_i xi_i^2
SVM_L2_PRIMAL = "qp.svm.l2.primal"
SVM_L2_DUAL = "qp.svm.l2.dual"

# -- minimax probability machines (formulations/minimax.py, minimax_dual.py) ------------
MPM = "socp.mpm"
BMPM = "socp.bmpm"
MEMPM = "sequential.mempm"
#: BMPM / MPM geometric dual P(lambda) (3.30)-(3.31), the ellipsoid-touching SOCP.
BMPM_GEOMETRIC_DUAL = "socp.bmpm.geometric_dual"

# -- maxi-min margin machine (formulations/m4.py) -------------------------------------
M4_SEPARABLE = "quasiconvex.m4"
M4_SOFT = "sequential.m4"
M4_SHARED = "qp.m4.shared"

# -- LSVR (formulations/lsvr.py) ------------------------------------------------------
LSVR = "socp.lsvr"
LSVR_KERNEL = "socp.lsvr.kernel"

# -- chance-constrained classifiers with specified rates (formulations/specified_rates.py)
RATES_PRIMAL = "socp.chance.rates.primal"
RATES_DUAL = "socp.chance.rates.dual"

# -- cluster-based chance-constrained classifier (formulations/cbc.py, cbc_hull.py) ------
CBC_PRIMAL = "socp.chance.cbc.primal"
CBC_DUAL = "socp.chance.cbc.dual"
CBC_HARD_PRIMAL = "socp.chance.cbc.hard.primal"
CBC_HARD_DUAL = "socp.chance.cbc.hard.dual"
CBC_W_PRIMAL = "socp.chance.cbc_w.primal"
CBC_W_DUAL = "socp.chance.cbc_w.dual"
#: Convex hull of spheres: the geometric dual of the hard-margin CBC (3.13).
CBC_HULL_DUAL = "socp.chance.cbc.hard.hull"

# -- ordinal regression (formulations/ordinal.py, svor_dual.py, svor_implicit.py) -------
CBOR_PRIMAL = "socp.chance.cbor.primal"
CBOR_DUAL = "socp.chance.cbor.dual"
SVOR_SOCP = "socp.chance.svor"
SVOR_QP = "qp.chance.svor"
#: Dual of the C-form SVOR (4.1) (Chu & Keerthi's explicit thresholds), solved by smo-or.
SVOR_QP_DUAL = "qp.chance.svor.dual"
#: Chu & Keerthi's SVOR with *implicit* threshold constraints ("SVORIM"): every threshold
#: constrained by every point; primal (generic backends) and its dual (smo-or as well).
SVORIM_QP = "qp.chance.svor.implicit"
SVORIM_QP_DUAL = "qp.chance.svor.implicit.dual"

# -- rare-class ranking: RankSVM / RankRC (formulations/ranking.py) ---------------------
RANK_HINGE = "qp.rank.hinge"
RANK_SMOOTHED = "socp.rank.smoothed"

# -- feature selection by QP and kernel Fisher discriminants (formulations/qpfs.py, kfda.py)
QPFS = "qp.qpfs.simplex"
QPFS_RESTRICTED = "qp.qpfs.restricted"
KFDA = "qp.kfda"
KQPFS = "qp.kqpfs"

# -- feature-scaled Gaussian-kernel SVM (formulations/feature_scaling.py) ---------------
#: min Omega(beta, b, z) over z >= 0 (Tayal 2014, 7.7): non-convex, solved by the local
#: fs-* methods only.
FS_SVM = "nonconvex.fs.svm"

# -- trust-region subproblem of the feature-scaled SVM (formulations/trust_region.py) ----
#: min g's + s'Hs/2 s.t. ||Ds|| <= Delta, H indefinite: exact SDP relaxation (S-lemma);
#: generic route Clarabel and SCS only (ECOS has no PSD cone).
TRS = "sdp.trs"
#: the same with H PSD: an SOCP, which ECOS takes as well.
TRS_CONVEX = "socp.trs.convex"

#: The kinds of each family (the family's formulation modules build them).
FAMILIES: dict[str, tuple[str, ...]] = {
    "svm": (SVM_PRIMAL, SVM_DUAL, SVM_HARD_PRIMAL, SVM_HARD_DUAL, SVM_L2_PRIMAL,
            SVM_L2_DUAL),
    "minimax": (MPM, BMPM, MEMPM, BMPM_GEOMETRIC_DUAL),
    "m4": (M4_SEPARABLE, M4_SOFT, M4_SHARED),
    "lsvr": (LSVR, LSVR_KERNEL),
    "specified_rates": (RATES_PRIMAL, RATES_DUAL),
    "cbc": (CBC_PRIMAL, CBC_DUAL, CBC_HARD_PRIMAL, CBC_HARD_DUAL, CBC_W_PRIMAL, CBC_W_DUAL,
            CBC_HULL_DUAL),
    "ordinal": (CBOR_PRIMAL, CBOR_DUAL, SVOR_SOCP, SVOR_QP, SVOR_QP_DUAL, SVORIM_QP,
                SVORIM_QP_DUAL),
    "ranking": (RANK_HINGE, RANK_SMOOTHED),
    "feature_selection": (QPFS, QPFS_RESTRICTED, KFDA, KQPFS),
    "feature_scaling": (FS_SVM,),
    "trust_region": (TRS, TRS_CONVEX),
}

#: Every kind defined above.
ALL_KINDS: tuple[str, ...] = tuple(
    value for name, value in sorted(globals().items())
    if name.isupper() and isinstance(value, str)
)
