#!/usr/bin/python3
"""Medians of repeated runs: the metrics JSON files in a directory named
TAG_N.json (N the repeat) grouped by TAG, with GCells/s, the slowest rank's
phases, exchange depth and overlap. Prints a table and writes summary.json.

    /usr/bin/python3 scripts/summarize-runs.py DIR
"""
import json
import pathlib
import statistics
import sys


def main(directory):
    groups = {}
    for path in sorted(pathlib.Path(directory).glob("*_[0-9].json")):
        tag = path.stem.rsplit("_", 1)[0]
        groups.setdefault(tag, []).append(json.loads(path.read_text()))
    if not groups:
        print(f"summarize-runs: no TAG_N.json metrics in {directory}", file=sys.stderr)
        return 1
    summary = {}
    print(f"{'run':40} {'n':>2} {'GCells/s':>9} {'min..max':>15}  k  overlap  phases (s, slowest rank)")
    for tag, runs in groups.items():
        rates = [r["cells_per_second"] / 1e9 for r in runs]
        phases = {p: statistics.median(r["phases_seconds"][p] for r in runs) for p in runs[0]["phases_seconds"]}
        summary[tag] = {
            "runs": len(runs),
            "gcells_per_second_median": statistics.median(rates),
            "gcells_per_second": rates,
            "ranks": runs[0]["ranks"],
            "exchange_every": runs[0]["exchange_every"]["steps"],
            "overlap": runs[0]["overlap"],
            "phases_seconds_median": phases,
            "backend_reason": runs[0]["backend_reason"],
        }
        shown = ", ".join(f"{p} {v:.3f}" for p, v in phases.items() if v > 0)
        print(f"{tag:40} {len(runs):>2} {statistics.median(rates):9.1f} {min(rates):7.1f}..{max(rates):<7.1f} "
              f"{runs[0]['exchange_every']['steps']:2}  {str(runs[0]['overlap']):7}  {shown}")
    (pathlib.Path(directory) / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
