"""Rodriguez Lujan (2012) Fig 4.4: KFDA (Algorithm 3) vs KQPFS (Algorithm 4) training time.

Thin caller: the reproduction lives in
``conicml/reproductions/rodriguez_lujan_fig_4_4.py`` and runs as ``conicml reproduce
rodriguez_lujan_fig_4_4 [options]``; this script passes its options through (``--quick``
for the smoke run) and, like the command, prints the thesis's numbers beside ours and
draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["rodriguez_lujan_fig_4_4", *sys.argv[1:]]))
