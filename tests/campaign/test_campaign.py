"""Standing agreement campaign: specialized solvers vs Clarabel and ECOS, every kind.

For every family with a specialized solver, seeded random instances
(``campaign_instances.instance``) are solved by the reference (Clarabel, or the
specialized solver with a Clarabel inner solver for the sequential kinds) and
by the others. Reference values come from the independent generic solvers, not
from the solver under test. Asserted, among results that conicml certified
``OPTIMAL``:

* no objective differs from the reference by more than the two certificates
  allow (``rtol`` 1e-5 plus both recomputed gaps, each in its certificate's unit):
  such a difference would mean a certificate is wrong;
* in particular, no certified result is worse than the reference beyond that;
* no solve runs past the per-solve time limit (1.5 x ``TIME_LIMIT`` + 1 s) and none
  raises anything but a conicml exception.

The default run draws ``--campaign-size`` (default 1) instance per family; the slow
``test_campaign_large`` draws 1000 (``docs/trust.md``, the rule).

Differences above 1e-5 that the certificates cover (the reference stopped short,
at the accuracy its recomputed gap states; e.g. Clarabel at gap 2.3e-4 on a
feature scaled by 1e8 while ``cbc-smo`` reaches the optimum) are listed in the
test's output and in ``benchmarks/results/campaign.md``, not hidden.
"""

from __future__ import annotations

import warnings

import pytest
from campaign_instances import FAMILIES, run

LARGE = 1000


@pytest.fixture(scope="module")
def size(request):
    return int(request.config.getoption("--campaign-size"))


def _check(family, seeds):
    records = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            records.append(run(family, seed))
    bad = [r for r in records if r.get("disagree")]
    detail = "\n".join(f"seed {r['seed']}: {r['info']}: {r['disagree']} "
                       f"(beyond certificates: {r['beyond_certificates']}, worse: {r['worse']}) "
                       f"{r['objective']} {r['status']}" for r in bad)
    if bad:
        print(f"differences above 1e-5 in {family}:\n{detail}")
    assert not [r for r in bad if r["beyond_certificates"]], detail
    assert not [r for r in bad if r["worse"]], detail
    hangs = {r["seed"]: r["hangs"] for r in records if r.get("hangs")}
    assert not hangs, hangs
    raw = {r["seed"]: r["errors"] for r in records
           if any(e.startswith("raw ") for e in r.get("errors", {}).values())}
    assert not raw, raw


@pytest.mark.parametrize("family", FAMILIES)
def test_campaign(family, size):
    _check(family, range(size))


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_campaign_large(family):
    _check(family, range(LARGE))


def test_counting_rule_on_a_reference_that_stops_short():
    # cbc seed 402 (a feature scaled by 1e8): Clarabel is certified OPTIMAL at a recomputed
    # relative gap of 2.3e-4 (under its certify_tol 5e-4) and cbc-smo reaches the optimum,
    # 2.3e-4 higher in the maximised dual. The difference exceeds 1e-5 but is what
    # Clarabel's own certificate states: listed, not a certificate failure.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = run("cbc", 402)
    assert record["status"]["clarabel"] == "optimal"
    assert record["disagree"] == ["cbc-smo"]
    assert record["beyond_certificates"] == [] and record["worse"] == []


def test_cbc_smo_bounds_hopeless_runs_and_certifies_stalls():
    # cbc instance 29 (a feature scaled 1e4) zig-zags with a KKT violation that never falls;
    # without a stall rule cbc-smo would run its 1e6 default iterations. It stops after 20
    # windows without progress, USER_LIMIT, naming the violation. cbc-w seed 1 (a feature
    # scaled 1e8) stalls at round-off: the objective stops
    # moving; its point is then judged by conicml's certificate (OPTIMAL, matching Clarabel's
    # objective to 1e-8 relative, an independent interior-point solve).
    from campaign_instances import instance

    import conicml as cm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog, _, _ = instance("cbc", 29)
        sol = cm.solve(prog, "cbc-smo")
        assert sol.status is cm.Status.USER_LIMIT
        assert sol.iterations <= 21 * 1000 and "no progress" in sol.message
        assert "KKT violation" in sol.message
        prog, _, _ = instance("cbc-w", 1)
        sol = cm.solve(prog, "cbc-smo")
        ref = cm.solve(prog, "clarabel")
    assert sol.extras["stop_reason"] == 6 and sol.status is cm.Status.OPTIMAL
    # OPTIMAL only because conicml's recomputed certificate passes cbc-smo's certify_tol
    assert "certified" in sol.message
    assert sol.residuals.source == "recomputed" and sol.residuals.max() <= 1e-4
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
