"""Long run of the standing agreement campaign for the chance-constrained families (issue 11 B).

``python benchmarks/campaign_B.py run --families rates cbc --size N [--deadline HH:MM]
--jsonl FILE [--smo-time-limit S]`` draws the seeded instances of
``tests/campaign/campaign_instances.py`` (unchanged generators and comparison rule:
``campaign_instances.run``), seeds 0, 1, 2, ... interleaved over the families, appending
one JSON record per instance to ``FILE`` as it goes, until ``N`` seeds per family or the
wall-clock ``--deadline`` (UTC), whichever comes first (so that a run on a loaded
machine ends on time with its honest count). ``python benchmarks/campaign_B.py report
FILE... [--out MD]`` writes the table of ``tests/campaign/run_campaign.py`` from the
records, with every disagreement and error listed. ``--quick``: 2 seeds per family.

The one addition to the generators: ``--smo-time-limit`` gives ``cbc-smo`` and
``cbor-smo`` a wall-clock limit (``lin-han`` already has 10 s in the generator), so that
a run on a badly scaled draw (one feature x 1e8, where ``cbc-smo``'s default budget of
1e6 pair updates takes minutes) ends in ``USER_LIMIT`` and is counted as such.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "campaign"))
sys.path.insert(0, str(ROOT))

import campaign_instances  # noqa: E402

FAMILIES_B = ("rates", "cbc", "cbc-w", "cbor")


def _limit(seconds: float) -> None:
    original = campaign_instances.instance

    def limited(family: str, seed: int):
        prog, runs, info = original(family, seed)
        runs = [(label, name, {**opts, "time_limit": seconds})
                if name in ("cbc-smo", "cbor-smo") else (label, name, opts)
                for label, name, opts in runs]
        return prog, runs, info

    campaign_instances.instance = limited


def _clean(value):
    if isinstance(value, float) and value != value:
        return None
    return value


def run(args: argparse.Namespace) -> None:
    warnings.simplefilter("ignore")
    if args.smo_time_limit is not None:
        _limit(args.smo_time_limit)
    deadline = None
    if args.deadline:
        hh, mm = (int(v) for v in args.deadline.split(":"))
        now = dt.datetime.now(dt.timezone.utc)
        deadline = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    size = 2 if args.quick else args.size
    with open(args.jsonl, "a") as out:
        for seed in range(args.start, size):
            for family in args.families:
                if deadline and dt.datetime.now(dt.timezone.utc) >= deadline:
                    return
                t0 = time.perf_counter()
                record = campaign_instances.run(family, seed)
                record["seconds"] = time.perf_counter() - t0
                record["objective"] = {k: _clean(v) for k, v in
                                       record.get("objective", {}).items()}
                out.write(json.dumps(record) + "\n")
                out.flush()


def report(args: argparse.Namespace) -> None:
    records = [json.loads(line) for f in args.files for line in open(f) if line.strip()]
    by_family = collections.defaultdict(list)
    for r in records:
        by_family[r["family"]].append(r)
    lines = ["| family | kind | instances | skipped | certified-OPTIMAL comparisons | "
             "disagreements | worse than reference | solve errors | statuses | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    listed = []
    for family in FAMILIES_B:
        recs = sorted(by_family.get(family, []), key=lambda r: r["seed"])
        if not recs:
            continue
        done = [r for r in recs if "skipped" not in r]
        statuses = collections.Counter(f"{k}:{v}" for r in done for k, v in r["status"].items())
        dis = [r for r in done if r["disagree"]]
        worse = [r for r in done if r["worse"]]
        errors = sum(len(r["errors"]) for r in done)
        secs = sum(r.get("seconds", 0.0) for r in recs)
        lines.append(
            f"| {family} | `{campaign_instances.KINDS[family]}` | {len(done)} | "
            f"{len(recs) - len(done)} | {sum(r['compared'] for r in done)} | {len(dis)} | "
            f"{len(worse)} | {errors} | "
            + "; ".join(f"{k} {v}" for k, v in sorted(statuses.items())) + f" | {secs:.0f} |")
        for r in dis:
            listed.append(f"- {family} seed {r['seed']} ({r['info']}): {r['disagree']} "
                          f"(worse: {r['worse']}); objectives "
                          + ", ".join(f"{k}={v}" for k, v in r["objective"].items())
                          + "; statuses " + ", ".join(f"{k}={v}" for k, v in r["status"].items()))
        for r in done:
            for label, err in r["errors"].items():
                listed.append(f"- {family} seed {r['seed']}: {label} raised {err[:200]}")
    text = "\n".join(lines) + "\n\n" + ("\n".join(listed) if listed else "(none)") + "\n"
    text += "\n" + demotions(by_family)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


def demotions(by_family: dict) -> str:
    """Every demoted run (solver said optimal, certificate said no) against the certified ones.

    ``agrees``: its objective is within 1e-5 * max(1, |ref|) of a certified-OPTIMAL run of
    the same instance (the point's value is right, its implied primal / bracket is not);
    ``off``: it is not (the demotion caught a wrong objective); ``alone``: no certified run.
    """
    lines = ["| family | solver | demoted | agrees with a certified run | off (wrong value) | "
             "no certified run | largest relative error among `off` |",
             "|---|---|---|---|---|---|---|"]
    for family in FAMILIES_B:
        counts: dict = collections.defaultdict(lambda: [0, 0, 0, 0, 0.0])
        for r in by_family.get(family, []):
            if "skipped" in r:
                continue
            certified = [r["objective"][k] for k, v in r["status"].items()
                         if v == "optimal" and r["objective"].get(k) is not None]
            for label, status in r["status"].items():
                if status != "optimal_inaccurate":
                    continue
                c = counts[label]
                c[0] += 1
                value = r["objective"].get(label)
                if not certified or value is None:
                    c[3] += 1
                    continue
                err = min(abs(value - ref) / max(1.0, abs(ref)) for ref in certified)
                if err <= 1e-5:
                    c[1] += 1
                else:
                    c[2] += 1
                    c[4] = max(c[4], min(abs(value - ref) / max(abs(ref), 1e-300)
                                         for ref in certified))
        for label, (n, agree, off, alone, worst) in sorted(counts.items()):
            lines.append(f"| {family} | {label} | {n} | {agree} | {off} | {alone} | "
                         f"{worst:.3g} |")
    return "Demoted runs (`optimal_inaccurate`):\n\n" + "\n".join(lines) + "\n"


def explain(args: argparse.Namespace) -> None:
    """Re-solve the generic runs that ended ``optimal_inaccurate`` and say why.

    For each: whether the certificate demoted it (message ``not certified``) or the solver
    itself said inaccurate; its value against the best certified-OPTIMAL run of the instance
    (for the rates family also ``ellipsoid-newton``, exact on these programs when it
    converges), relative to ``|ref|``; and its recomputed residuals.
    """
    import conicml as cm

    warnings.simplefilter("ignore")
    records = [json.loads(line) for f in args.files for line in open(f) if line.strip()]
    records = [r for r in records if "skipped" not in r and r["seed"] < args.max_seed]
    rows = collections.Counter()
    worst = collections.defaultdict(list)
    for r in records:
        for label in ("clarabel", "ecos"):
            if r["status"].get(label) != "optimal_inaccurate":
                continue
            prog, runs, info = campaign_instances.instance(r["family"], r["seed"])
            sol = cm.solve(prog, label)
            certified = [r["objective"][k] for k, v in r["status"].items()
                         if v == "optimal" and r["objective"].get(k) is not None]
            if r["family"] == "rates":
                try:
                    ref = cm.solve(prog, "ellipsoid-newton")
                    if ref.status is cm.Status.OPTIMAL:
                        certified.append(ref.objective)
                except cm.ConicMLError:
                    pass
            by = "certificate" if "not certified" in sol.message else "solver"
            if not certified:
                kind = "no certified run"
            else:
                err = min(abs(sol.objective - c) / max(abs(c), 1e-300) for c in certified)
                kind = "value off > 1e-6" if err > 1e-6 else "value within 1e-6"
                if err > 1e-6:
                    worst[r["family"], label].append(err)
            rows[r["family"], label, by, kind] += 1
    print(f"| family | solver | demoted by | value vs certified runs | count |  (seeds < "
          f"{args.max_seed})")
    print("|---|---|---|---|---|")
    for (fam, label, by, kind), n in sorted(rows.items()):
        extra = ""
        if kind == "value off > 1e-6":
            errs = worst[fam, label]
            extra = f" (median {statistics.median(errs):.2g}, max {max(errs):.2g})"
        print(f"| {fam} | {label} | {by} | {kind}{extra} | {n} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run")
    p_run.add_argument("--families", nargs="*", default=list(FAMILIES_B))
    p_run.add_argument("--size", type=int, default=20)
    p_run.add_argument("--start", type=int, default=0)
    p_run.add_argument("--deadline", default=None, help="HH:MM UTC")
    p_run.add_argument("--smo-time-limit", type=float, default=None)
    p_run.add_argument("--jsonl", required=True)
    p_run.add_argument("--quick", action="store_true")
    p_rep = sub.add_parser("report")
    p_rep.add_argument("files", nargs="+")
    p_rep.add_argument("--out", default=None)
    p_exp = sub.add_parser("explain")
    p_exp.add_argument("files", nargs="+")
    p_exp.add_argument("--max-seed", type=int, default=100)
    args = parser.parse_args()
    {"run": run, "report": report, "explain": explain}[args.command](args)


if __name__ == "__main__":
    main()
