"""Tayal 2014 Table 7.4 (reduced): SVM vs GMKL vs FULL-FS vs AO-II on Sonar, Ionosphere,
WDBC.

Thin caller: the reproduction lives in ``conicml/reproductions/tayal_ch7_table74.py`` and
runs as ``conicml reproduce tayal_ch7_table74 [options]``; this script passes its options
through (``--quick`` for the smoke run) and, like the command, prints the thesis's numbers
beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["tayal_ch7_table74", *sys.argv[1:]]))
