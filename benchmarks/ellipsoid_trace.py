"""Iterate sequences of ``ellipsoid-newton`` on the campaign's rates instances (issue 14).

A speed change of the solver's implementation must not change what it computes: the
same steps, the same multipliers, the same answers and certificates. This script
records, for the first ``--campaign`` seeds of the rates family of ``tests/campaign``,
every step's ``(g(lambda), certified relative gap, multipliers)`` (through the solver's
callback) and the final solution (status, iterations, objective, values, conicml's
recomputed residuals), and compares such a record with the current code:

``python benchmarks/ellipsoid_trace.py --dump /tmp/before.pkl`` (before the change),
``python benchmarks/ellipsoid_trace.py --compare /tmp/before.pkl`` (after): prints the
instances whose step count, status or any number differs, and the largest relative
difference of every number (0 where the sequences are bitwise equal). Run time: about
5 s on a quiet 2-core machine for 400 seeds.
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "campaign"))
from campaign_instances import instance  # noqa: E402

import conicml as cm  # noqa: E402


def trace(seed: int) -> dict:
    """One instance's record: the steps (callback) and the final solution."""
    prog = instance("rates", seed)[0]
    steps: list[tuple] = []

    def record(res) -> None:
        steps.append((res.iteration, float(res.objective), float(res.residual),
                      tuple(float(v) for v in res.values["multipliers"])))

    sol = cm.solve(prog, "ellipsoid-newton", callback=record)
    return {
        "steps": steps,
        "status": sol.status.value,
        "iterations": sol.iterations,
        "objective": sol.objective,
        "values": {k: np.asarray(v, dtype=float).copy() for k, v in sol.values.items()},
        "residuals": (sol.residuals.primal, sol.residuals.dual, sol.residuals.gap),
        "relative_gap": sol.extras.get("relative_gap"),
        "multipliers": np.asarray(sol.extras.get("multipliers"), dtype=float).copy(),
        "space": sol.extras.get("space"),
    }


def _rel(a: float, b: float) -> float:
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if math.isinf(a) or math.isinf(b):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def _flat(rec: dict) -> list[float]:
    out: list[float] = []
    for _, obj, res, lam in rec["steps"]:
        out += [obj, res, *lam]
    out += [rec["objective"], *rec["residuals"], rec["relative_gap"], *rec["multipliers"]]
    for k in sorted(rec["values"]):
        out += [float(v) for v in np.ravel(rec["values"][k])]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaign", type=int, default=400)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--dump", help="write the records to this pickle")
    group.add_argument("--compare", help="compare the current code with this pickle")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    records = [trace(seed) for seed in range(args.campaign)]
    if args.dump:
        Path(args.dump).write_bytes(pickle.dumps(records))
        print(f"wrote {len(records)} records, {sum(r['iterations'] for r in records)} steps, "
              f"to {args.dump}")
        return
    before = pickle.loads(Path(args.compare).read_bytes())
    differ, worst, bitwise = [], 0.0, 0
    for seed, (old, new) in enumerate(zip(before, records)):
        same_shape = (old["iterations"] == new["iterations"] and old["status"] == new["status"]
                      and len(old["steps"]) == len(new["steps"])
                      and old["space"] == new["space"]
                      and sorted(old["values"]) == sorted(new["values"]))
        if not same_shape:
            differ.append(f"seed {seed}: {old['status']} in {old['iterations']} steps -> "
                          f"{new['status']} in {new['iterations']} steps")
            continue
        diff = max((_rel(a, b) for a, b in zip(_flat(old), _flat(new))), default=0.0)
        bitwise += diff == 0.0
        worst = max(worst, diff)
        if diff > 1e-12:
            differ.append(f"seed {seed}: largest relative difference {diff:.1e}")
    print(f"{len(records)} instances: steps {sum(r['iterations'] for r in before)} -> "
          f"{sum(r['iterations'] for r in records)}; bitwise equal {bitwise}; largest "
          f"relative difference {worst:.1e}; differing: {len(differ)}")
    for line in differ:
        print("  " + line)


if __name__ == "__main__":
    main()
