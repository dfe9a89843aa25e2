"""``python -m conicml.reproductions NAME [options]``: run one thesis reproduction."""

import sys

from . import main

if __name__ == "__main__":  # spawned worker processes import this module too
    sys.exit(main())
