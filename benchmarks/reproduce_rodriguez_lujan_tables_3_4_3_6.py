"""Rodriguez Lujan (2012) Tables 3.4, 3.5 and 3.6, ARR rows (and a digits stand-in for
MNIST).

Thin caller: the reproduction lives in
``conicml/reproductions/rodriguez_lujan_tables_3_4_3_6.py`` and runs as ``conicml
reproduce rodriguez_lujan_tables_3_4_3_6 [options]``; this script passes its options
through (``--quick`` for the smoke run) and, like the command, prints the thesis's numbers
beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["rodriguez_lujan_tables_3_4_3_6", *sys.argv[1:]]))
