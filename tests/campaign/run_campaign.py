"""Record a campaign run: ``python tests/campaign/run_campaign.py --size N [--out FILE]``.

Runs ``N`` seeded instances (seeds ``--start`` .. ``--start + N - 1``, default from 0)
of every family (``campaign_instances.run``) and
writes the counts (instances, statuses per solver, certified-OPTIMAL
comparisons, differences above 1e-5, differences beyond the two
certificates, worse-than-reference, errors, hangs past the per-solve limit,
the slowest solve, wall time) as a markdown table under a header (command,
commit, CPU, cores, load, date), with every disagreement listed.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from campaign_instances import FAMILIES, KINDS, TIME_LIMIT, run  # noqa: E402


def _header() -> list[str]:
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                                capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        commit = "?"
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [f"- command: `python tests/campaign/{Path(sys.argv[0]).name} "
            f"{' '.join(sys.argv[1:])}`",
            f"- commit: {commit}", f"- CPU: {cpu}, {os.cpu_count()} cores",
            f"- load average at start (1, 5, 15 min): {load}", f"- date: {now}",
            f"- per-solve time limit: {TIME_LIMIT:g} s (a solve past 1.5 x + 1 s is a hang)",
            ""]

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
    head = _header()
    print("\n".join(head), flush=True)
    lines = ["| family | kind | instances | skipped | certified-OPTIMAL comparisons | "
             "differences > 1e-5 | beyond the certificates | worse than reference | "
             "solve errors | hangs | slowest solve (s) | statuses | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
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
        hangs = [r for r in done if r.get("hangs")]
        slowest = max((t for r in done for t in r.get("seconds", {}).values()), default=0.0)
        status_txt = "; ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        lines.append(f"| {family} | `{KINDS[family]}` | {len(done)} | {len(records) - len(done)}"
                     f" | {compared} | {len(dis)} | {len(beyond)} | {len(worse)} | {errors}"
                     f" | {len(hangs)} | {slowest:.1f} | {status_txt} | {secs:.0f} |")
        for r in dis:
            listed.append(f"- {family} seed {r['seed']} ({r['info']}): {r['disagree']} "
                          f"(beyond the certificates: {r['beyond_certificates']}; "
                          f"worse: {r['worse']}); objectives "
                          + ", ".join(f"{k}={v:.8g}" for k, v in r["objective"].items())
                          + "; statuses " + ", ".join(f"{k}={v}" for k, v in r["status"].items()))
        for r in hangs:
            listed.append(f"- {family} seed {r['seed']} ({r['info']}): past the limit: "
                          + ", ".join(f"{k} {r['seconds'][k]:.1f} s" for k in r["hangs"]))
        for r in done:
            for label, err in r["errors"].items():
                listed.append(f"- {family} seed {r['seed']}: {label} raised {err[:200]}")
        print(lines[-1], flush=True)
    text = ("\n".join(head) + "\n" + "\n".join(lines) + "\n\n"
            + ("\n".join(listed) if listed else "(none)") + "\n")
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
