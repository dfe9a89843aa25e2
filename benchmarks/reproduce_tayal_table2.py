"""Table 2 of the RankRC paper (thesis Table 5.1): test AUC on simulated rare-class data.

Thin caller: the reproduction lives in ``conicml/reproductions/tayal_table2.py`` and runs
as ``conicml reproduce tayal_table2 [options]``; this script passes its options through
(``--quick`` for the smoke run) and, like the command, prints the thesis's numbers beside
ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["tayal_table2", *sys.argv[1:]]))
