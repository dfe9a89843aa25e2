"""Standing agreement campaign (issue 11): specialized solvers vs Clarabel and ECOS.

For every family with a specialized solver, seeded random instances
(``campaign_instances.instance``) are solved by the reference (Clarabel, or the
specialized solver with a Clarabel inner solver for the sequential kinds) and
by the others. Asserted: among results that conicml certified ``OPTIMAL``, no
objective disagrees with a certified reference beyond 1e-5 relative (the
tolerance of ``compare``), hence none is worse than it. Reference values come
from the independent generic solvers, not from the solver under test.

Disagreements on instances with a rescaled feature (1e-8 ... 1e8) in the
minimax/M4 families are the known defect of issue 11 item 2 (``psd_factor``'s
eigenvalue cut-offs), fixed on the part-B branch: they are reported as xfail
with the list, not hidden; any other disagreement fails.
"""

from __future__ import annotations

import re
import warnings

import pytest
from campaign_instances import FAMILIES, run

KNOWN_SCALE_DEFECT = {"mpm", "bmpm", "mempm", "m4", "m4-soft"}  # issue 11 item 2 (part B)


def scaled(info: str) -> bool:
    """Whether the instance has a feature rescaled away from 1."""
    match = re.search(r"scale\[x\d+\]=(\S+)", info)
    return bool(match) and float(match.group(1)) != 1.0


@pytest.fixture(scope="module")
def size(request):
    return int(request.config.getoption("--campaign-size"))


@pytest.mark.parametrize("family", FAMILIES)
def test_campaign(family, size):
    records = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(size):
            records.append(run(family, seed))
    bad = [r for r in records if r.get("disagree")]
    known = [r for r in bad if family in KNOWN_SCALE_DEFECT and scaled(r["info"])]
    unknown = [r for r in bad if r not in known]
    detail = "\n".join(f"seed {r['seed']}: {r['info']}: {r['disagree']} "
                       f"{r['objective']} {r['status']}" for r in bad)
    assert not unknown, f"certified-OPTIMAL disagreements:\n{detail}"
    worse = [r for r in unknown if r["worse"]]
    assert not worse
    if known:
        pytest.xfail(f"issue 11 item 2 (fixed by part B), scaled features:\n{detail}")
