"""Record a campaign run: ``python tests/campaign/run_campaign.py --size N [--out FILE]``.

Runs ``N`` seeded instances (seeds ``--start`` .. ``--start + N - 1``, default from 0)
of every family (``campaign_instances.run``) and
writes the counts (instances, statuses per solver, certified-OPTIMAL
comparisons, differences above 1e-5, differences beyond the two
certificates, worse-than-reference, errors, wall time) as a
markdown table, with every disagreement listed.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from campaign_instances import FAMILIES, KINDS, run  # noqa: E402

from conicml._utils.progress import progress  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--start", type=int, default=0,
                        help="first seed (seeds start .. start + size - 1; to split a run)")
    parser.add_argument("--families", nargs="*", default=list(FAMILIES))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    lines = ["| family | kind | instances | skipped | certified-OPTIMAL comparisons | "
             "differences > 1e-5 | beyond the certificates | worse than reference | "
             "solve errors | statuses | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    listed = []
    for family in args.families:
        t0 = time.perf_counter()
        seeds = range(args.start, args.start + args.size)
        records = [run(family, seed) for seed in progress(seeds, family)]
        secs = time.perf_counter() - t0
        done = [r for r in records if "skipped" not in r]
        statuses = collections.Counter(f"{k}:{v}" for r in done for k, v in r["status"].items())
        compared = sum(r["compared"] for r in done)
        dis = [r for r in done if r["disagree"]]
        worse = [r for r in done if r["worse"]]
        beyond = [r for r in done if r.get("beyond_certificates")]
        errors = sum(len(r["errors"]) for r in done)
        status_txt = "; ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        lines.append(f"| {family} | `{KINDS[family]}` | {len(done)} | {len(records) - len(done)}"
                     f" | {compared} | {len(dis)} | {len(beyond)} | {len(worse)} | {errors}"
                     f" | {status_txt} | {secs:.0f} |")
        for r in dis:
            listed.append(f"- {family} seed {r['seed']} ({r['info']}): {r['disagree']} "
                          f"(beyond the certificates: {r['beyond_certificates']}; "
                          f"worse: {r['worse']}); objectives "
                          + ", ".join(f"{k}={v:.8g}" for k, v in r["objective"].items())
                          + "; statuses " + ", ".join(f"{k}={v}" for k, v in r["status"].items()))
        for r in done:
            for label, err in r["errors"].items():
                listed.append(f"- {family} seed {r['seed']}: {label} raised {err[:200]}")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n\n" + ("\n".join(listed) if listed else "(none)") + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
