"""conicml's own certificates: the recomputed residuals and gap behind every ``OPTIMAL``.

A :class:`~conicml.Program` carries ``certify(data, solution)``; after every solve
:func:`conicml.solve` calls it and keeps ``OPTIMAL`` only when the recomputed numbers pass
the solver's ``certify_tol`` (rules: ``docs/trust.md``). The pieces those functions use:

* :mod:`~conicml.certificates.conic` -- the generic certificate of a compiled cvxpy problem
  (feasibility, stationarity by a refitted KKT system, objective gap) and ``certify_with``;
* :mod:`~conicml.certificates.margin` -- O(data) certificates of the margin QPs (SVM,
  M4 at fixed rho) and of the fractional MPM / BMPM ratio;
* :mod:`~conicml.certificates.chance` -- shared pieces of the chance-constrained kinds'
  certificates (specified rates, CBC, CBOR, SVOR);
* :mod:`~conicml.certificates.kkt` -- the bias of the single-equality box-constrained duals
  (SVM, CBC) from their KKT conditions.

Which kind uses which is listed in ``docs/architecture.md``.
"""
