"""Reproduce seed 003 Tables 4.1 / 5.1 on California Housing: CBOR-Iter vs SMO-OR vs CBOR-
SOCP.

Thin caller: the reproduction lives in ``conicml/reproductions/saketha_table_5_1.py`` and
runs as ``conicml reproduce saketha_table_5_1 [options]``; this script passes its options
through (``--quick`` for the smoke run) and, like the command, prints the thesis's numbers
beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["saketha_table_5_1", *sys.argv[1:]]))
