"""Reproduce seed 004 Fig. 4.8: the reduced M4 (4.36) on heart disease, accuracy and time vs
nu.

Thin caller: the reproduction lives in ``conicml/reproductions/huang_fig_4_8.py`` and runs
as ``conicml reproduce huang_fig_4_8 [options]``; this script passes its options through
(``--quick`` for the smoke run) and, like the command, prints the thesis's numbers beside
ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["huang_fig_4_8", *sys.argv[1:]]))
