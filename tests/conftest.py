"""The test suite, by layer: core/, certificates/, data/, formulations/, solvers/,
estimators/, metrics/, reproductions/, campaign/. Shared tables (``tolerances``,
``solver_report``) live here, importable from every layer."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
