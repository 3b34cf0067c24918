#!/usr/bin/python3
"""The DSMEM ablation of a bench run: for each cluster row of a `heatwave
bench --json` file (optionally only radius R), the same tile and k at cluster
sizes 1, 2, 4 and 8 (3D: 1x1, 2x1, 2x2, 4x2 over x-y; 2D: 1..8 along y),
written as a bench config for those plans.

    /usr/bin/python3 scripts/cluster_ablation.py run.json [--radius 3 4] > ablation.yaml
    heatwave bench ablation.yaml --json ablation.json
"""
import argparse
import json
import re
import sys

PLAN = re.compile(r"cluster (\d+)x(\d+), tile (\d+)x(\d+)(?:x(\d+))?, k (\d+)(?:, (\d+) thread rows)?")


def plans(text, dims):
    """Plan fields at each cluster size, or [] for a resident or baseline plan."""
    m = PLAN.match(text)
    if not m:
        return []
    _, _, tx, ty, tz, k, ty_threads = m.groups()
    if dims == 3:
        return [f"{cx},{cy},{tx},{ty},{tz},{k},1" for cx, cy in ((1, 1), (2, 1), (2, 2), (4, 2))]
    return [f"1,{c},{tx},{ty},0,{k},{ty_threads}" for c in (1, 2, 4, 8)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="a heatwave bench --json file with cuda-cluster rows")
    parser.add_argument("--radius", type=int, nargs="*", help="only these radii")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    run = json.load(open(args.run))
    cases = []
    for row in run["cases"]:
        if row["backend"] != "cuda-cluster" or (args.radius and row["radius"] not in args.radius):
            continue
        fields = plans(row.get("cluster_plan", ""), row["dims"])
        if not fields:
            print(f"# {row['equation']} {row['precision']} r{row['radius']} {row['grid']}: "
                  f"'{row.get('cluster_plan', '')}' has no cluster sizes to vary", file=sys.stderr)
            continue
        cases.append(
            f"  - backend: [cuda-cluster]\n    equation: [{row['equation']}]\n    precision: [{row['precision']}]\n"
            f"    radius: [{row['radius']}]\n    grid: [{json.dumps(row['grid'])}]\n"
            f"    cluster: [{', '.join(json.dumps(f) for f in fields)}]\n")
    if not cases:
        sys.exit("no cluster rows with a streaming plan in " + args.run)
    print(f"# The DSMEM ablation of {args.run} (scripts/cluster_ablation.py): each\n"
          "# autotuned plan's tile and k at cluster sizes 1, 2, 4, 8.\n"
          f"repeats: {args.repeats}\nwarmup_steps: 8\nsteps: 48\ncopy_bytes: 1073741824\ncases:")
    print("".join(cases), end="")


if __name__ == "__main__":
    main()
