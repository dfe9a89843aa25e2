"""Reproduce seed 003 Table 5.2: CBOR-Iter vs SMO-OR training time on synthetic ordinal data.

Thin caller: the reproduction lives in ``conicml/reproductions/saketha_table_5_2.py`` and
runs as ``conicml reproduce saketha_table_5_2 [options]``; this script passes its options
through (``--quick`` for the smoke run) and, like the command, prints the thesis's numbers
beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["saketha_table_5_2", *sys.argv[1:]]))
