"""Table 4 of the RankRC paper (thesis Table 5.3): test AUC on real imbalanced data.

Thin caller: the reproduction lives in ``conicml/reproductions/tayal_table4.py`` and runs
as ``conicml reproduce tayal_table4 [options]``; this script passes its options through
(``--quick`` for the smoke run) and, like the command, prints the thesis's numbers beside
ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["tayal_table4", *sys.argv[1:]]))
