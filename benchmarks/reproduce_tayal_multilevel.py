"""Multi-level RankRC (thesis ch. 6) on a public ordinal set, scored by MAUC.

Thin caller: the reproduction lives in ``conicml/reproductions/tayal_multilevel.py`` and
runs as ``conicml reproduce tayal_multilevel [options]``; this script passes its options
through (``--quick`` for the smoke run) and, like the command, prints the thesis's numbers
beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["tayal_multilevel", *sys.argv[1:]]))
