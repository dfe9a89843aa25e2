"""The test suite, by layer: core/, certificates/, data/, formulations/, solvers/,
estimators/, metrics/, reproductions/, campaign/. Shared tables (``tolerances``,
``solver_report``) live here, importable from every layer."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="module")
def inproc_client():
    """A Dask client on in-process workers (the inproc:// transport: no network at all);
    skipped without the ``distributed`` extra."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()
