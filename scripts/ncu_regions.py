#!/usr/bin/python3
"""Where a kernel's time goes, by the loops of its SASS, from ncu's source page.

Reads the CSV that `ncu -i REPORT --page source --csv --print-source sass`
writes (one row an instruction: its executed count, its warp-stall samples
and their reasons). Every backward branch that spans over MIN instructions
marks a loop; the loops and what lies outside them are the regions. For
each region it prints its static size, its share of the executed
instructions and of the stall samples (time), and its four largest stall
reasons as shares of all samples. Then the instructions with the most
samples of one reason (--top REASON), e.g. long_sb for the neighbour flags'
spin of the deep kernel (docs/performance.md, issue 71's "the sweep's ends").

  /usr/bin/python3 scripts/ncu_regions.py SASS.csv [--min 500] [--top long_sb]
"""
import argparse
import csv
import re
import sys

REASONS = ["no_inst", "long_sb", "short_sb", "wait", "barrier", "selected", "not_selected", "branch_resolving",
           "mio", "membar", "dispatch", "math", "lg", "misc"]


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = next((i for i, r in enumerate(rows) if "Address" in r and "Source" in r), None)
    if header is None:
        sys.exit(f"ncu_regions: {path}: no 'Address' and 'Source' columns (not an ncu source-page CSV)")
    col = {h: i for i, h in enumerate(rows[header])}
    number = lambda r, k: int(r[col[k]] or 0) if k in col else 0
    out = []
    for r in rows[header + 1:]:
        try:
            address = int(r[col["Address"]], 16)
        except (ValueError, IndexError):
            continue
        out.append({"address": address, "source": r[col["Source"]].strip(),
                    "executed": number(r, "Instructions Executed"),
                    "samples": number(r, "Warp Stall Sampling (All Samples)"),
                    "reasons": {k: number(r, "stall_" + k) for k in REASONS}})
    return out


def loops(ins, minimum):
    at = {x["address"]: i for i, x in enumerate(ins)}
    base = ins[0]["address"] if ins else 0
    found = set()
    for i, x in enumerate(ins):
        m = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", x["source"])
        if not m:
            continue
        target = int(m.group(1), 16)
        for t in (target, target + base):  # absolute, or from the function's start
            if t < x["address"] and t in at and i - at[t] > minimum:
                found.add((at[t], i))
    return sorted(found)


def summarise(ins, minimum):
    """[(name, static size, % of executed, % of samples, {reason: % of samples})], a row a region."""
    executed = max(sum(x["executed"] for x in ins), 1)
    samples = max(sum(x["samples"] for x in ins), 1)
    regions = [(f"loop {a}-{b}", list(range(a, b + 1))) for a, b in loops(ins, minimum)]
    inside = {i for _, r in regions for i in r}
    regions.append(("outside the loops", [i for i in range(len(ins)) if i not in inside]))
    out = []
    for name, members in regions:
        out.append((name, len(members), 100 * sum(ins[i]["executed"] for i in members) / executed,
                    100 * sum(ins[i]["samples"] for i in members) / samples,
                    {k: 100 * sum(ins[i]["reasons"][k] for i in members) / samples for k in REASONS}))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--min", type=int, default=500, help="a loop's least size in instructions")
    parser.add_argument("--top", default="", help="list the instructions with most samples of this reason")
    parser.add_argument("--count", type=int, default=12)
    args = parser.parse_args()
    if args.top and args.top not in REASONS:
        sys.exit(f"ncu_regions: --top {args.top}: not one of {', '.join(REASONS)}")
    ins = read(args.csv)
    if not ins:
        sys.exit(f"ncu_regions: {args.csv}: no instructions")
    print(f"{'region':24} {'static':>7} {'executed':>9} {'time':>7}  largest stall reasons (% of all samples)")
    for name, size, executed, time, by in summarise(ins, args.min):
        top = sorted(by.items(), key=lambda kv: -kv[1])[:4]
        print(f"{name:24} {size:7} {executed:8.1f}% {time:6.1f}%  " + " ".join(f"{k} {v:.1f}" for k, v in top))
    if args.top:
        print(f"\ninstructions with the most {args.top} samples (index, samples, executed, source):")
        ranked = sorted(range(len(ins)), key=lambda i: -ins[i]["reasons"][args.top])[:args.count]
        for i in sorted(ranked):
            x = ins[i]
            print(f"{i:7} {x['reasons'][args.top]:7} {x['executed']:10}  {x['source'][:90]}")


if __name__ == "__main__":
    main()
