"""Reproduce seed 004's synthetic experiments: the robust toy (Sec. 3.5.2), Table 4.2

Thin caller: the reproduction lives in ``conicml/reproductions/huang_toys.py`` and runs as
``conicml reproduce huang_toys [options]``; this script passes its options through
(``--quick`` for the smoke run) and, like the command, prints the thesis's numbers beside
ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["huang_toys", *sys.argv[1:]]))
