"""The standing agreement campaign: ``--campaign-size N`` instances per family.

The default run draws one instance per family (fast); ``--campaign-size 200``
is the long run (see ``benchmarks/results/campaign.md`` for recorded counts and
``tests/campaign/run_campaign.py`` to record them).
"""

from __future__ import annotations


def pytest_addoption(parser):
    parser.addoption("--campaign-size", type=int, default=1,
                     help="instances per program family in tests/campaign (default 1)")
