"""Reproduce Huang (2004) Table 3.1: linear MEMPM vs linear MPM (seed 004, Sec. 3.5.3).

Thin caller: the reproduction lives in ``conicml/reproductions/huang_table_3_1.py`` and
runs as ``conicml reproduce huang_table_3_1 [options]``; this script passes its options
through (``--quick`` for the smoke run) and, like the command, prints the thesis's numbers
beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["huang_table_3_1", *sys.argv[1:]]))
