"""Long run of the standing agreement campaign for the chance-constrained families (issue 11 B).

``python benchmarks/campaign_B.py --size N [--families rates cbc cbc-w cbor]
[--smo-time-limit S] [--out FILE]`` draws the seeded instances of
``tests/campaign/campaign_instances.py`` (unchanged generators, same comparison rule:
``run``) and writes the table of ``tests/campaign/run_campaign.py``. The one addition:
``--smo-time-limit`` gives the specialized solvers of these families (``cbc-smo``,
``cbor-smo``; ``lin-han`` already has 10 s in the generator) a wall-clock limit, so that
a run on a badly scaled draw (one feature x 1e8, where ``cbc-smo``'s default budget of
1e6 pair updates takes minutes) ends in ``USER_LIMIT`` and is counted as such.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "campaign"))
sys.path.insert(0, str(ROOT))

import campaign_instances  # noqa: E402
import run_campaign  # noqa: E402

FAMILIES_B = ("rates", "cbc", "cbc-w", "cbor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--families", nargs="*", default=list(FAMILIES_B))
    parser.add_argument("--smo-time-limit", type=float, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="3 instances per family")
    args = parser.parse_args()
    if args.smo_time_limit is not None:
        original = campaign_instances.instance

        def limited(family: str, seed: int):
            prog, runs, info = original(family, seed)
            runs = [(label, name, {**opts, "time_limit": args.smo_time_limit})
                    if name in ("cbc-smo", "cbor-smo") else (label, name, opts)
                    for label, name, opts in runs]
            return prog, runs, info

        campaign_instances.instance = limited
    argv = ["run_campaign.py", "--size", str(3 if args.quick else args.size),
            "--families", *args.families]
    if args.out:
        argv += ["--out", str(args.out)]
    sys.argv = argv
    run_campaign.main()


if __name__ == "__main__":
    main()
