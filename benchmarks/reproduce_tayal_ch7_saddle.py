"""Tayal 2014 section 7.4 / Table 7.1: saddles of Simple AO; the AO variants as probes grow.

Thin caller: the reproduction lives in ``conicml/reproductions/tayal_ch7_saddle.py`` and
runs as ``conicml reproduce tayal_ch7_saddle [options]``; this script passes its options
through (``--quick`` for the smoke run) and, like the command, prints the thesis's numbers
beside ours and draws the figure.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conicml

from conicml.reproductions import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["tayal_ch7_saddle", *sys.argv[1:]]))
