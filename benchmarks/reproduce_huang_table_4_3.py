"""Reproduce Table 4.3 of Huang (2004): M4 vs SVM vs MPM, linear and RBF kernels.

Thin caller: the reproduction lives in ``conicml/reproductions/huang_table_4_3.py`` and
runs as ``conicml reproduce huang_table_4_3 [options]``; this script passes its options
through (``--quick`` for the smoke run) and, like the command, prints the thesis's numbers
beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["huang_table_4_3", *sys.argv[1:]]))
