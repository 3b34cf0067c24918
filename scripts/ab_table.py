#!/usr/bin/python3
"""An A/B of builds in one device call, a line a bench case: each build's runs
(Gcells/s) and its mean over old's. Reads DIR/ab-N-BUILD.json (heatwave
bench --json; N the run's place in the call), builds in the order they first
ran (scripts/gpu-deep.sh's ab step, scripts/gpu-pending.sh's).

  /usr/bin/python3 scripts/ab_table.py DIR
"""
import json
import pathlib
import re
import statistics
import sys


def table(directory):
    """{case: {build: [Gcells/s, a run each]}}, builds in the order they first ran."""
    runs = []
    for path in pathlib.Path(directory).glob("ab-*.json"):
        m = re.fullmatch(r"ab-(\d+)-(\w+)\.json", path.name)
        if m:
            runs.append((int(m.group(1)), m.group(2), path))
    rows = {}
    for _, build, path in sorted(runs):
        for c in json.loads(path.read_text())["cases"]:
            key = (f"{c['equation']:5} {c['precision']} r{c['radius']} {'x'.join(map(str, c['grid'])):13} "
                   f"{c.get('cluster_plan') or ''}")
            rows.setdefault(key, {}).setdefault(build, []).append(c["cells_per_second"] / 1e9)
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    for key, r in table(sys.argv[1]).items():
        line = key + "".join(f"  {build} {' '.join(f'{v:6.1f}' for v in runs)}" for build, runs in r.items())
        if "old" in r:
            line += "".join(f"  {build}/old {statistics.mean(runs) / statistics.mean(r['old']):.3f}"
                            for build, runs in r.items() if build != "old")
        print(line)


if __name__ == "__main__":
    main()
