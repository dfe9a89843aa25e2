"""Reproduce seed 004 Tables 5.9-5.11: BMPM under the MS criterion and its ROC/AUC on the

Thin caller: the reproduction lives in ``conicml/reproductions/huang_tables_5_9_5_11.py``
and runs as ``conicml reproduce huang_tables_5_9_5_11 [options]``; this script passes its
options through (``--quick`` for the smoke run) and, like the command, prints the thesis's
numbers beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["huang_tables_5_9_5_11", *sys.argv[1:]]))
