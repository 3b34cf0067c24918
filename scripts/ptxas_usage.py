#!/usr/bin/python3
"""Registers and spills of the cluster kernels, from ptxas, without a GPU.

The columns kernels sit at the register cap of their launch bounds (128 a
thread at two blocks of 256 an SM): a change that needs one register more
spills, and a spill loaded inside the sweep costs the kernel 6-10% (H100,
docs/performance.md, "the receivers kernels' loss is a spill"). This
recompiles generated units of a configured build (BUILD/generated/cluster,
the units whose names match PATTERN) with `-Xptxas -v`, into a temporary
directory (the build is not touched), and prints each kernel's registers,
stack frame and spill bytes. `--json FILE` keeps the table;
`--against FILE` prints only the kernels whose numbers differ from a kept
table, and those a unit gained or lost (a change against the commit
before: run once on each). Where a spill lands (in a loop or not) is in
the SASS: scripts/sass_loop_top.py on a build with cuobjdump.

  /usr/bin/python3 scripts/ptxas_usage.py BUILD [PATTERN] [--spills] [--jobs N]
                                          [--json FILE] [--against FILE] [--overlay DIR]

`--overlay DIR` compiles with DIR's headers in place of the tree's (DIR
holds them at the tree's paths): a variant against the tree, each in one
run, while the tree stays as it is.

PATTERN is a regular expression on the unit's name, e.g.
'kernel_2d_float_columns_point_receivers_DampedWave' or '2d_.*columns'.
A unit takes 20-40 s on one core.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

UNIT = re.compile(r"^(\S*generated/cluster/(\S+)\.cu\.o):")
ENTRY = re.compile(r"Compiling entry function '(\S+)' for '(\w+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")


def parse(log):
    """The kernels of one unit's `ptxas -v` output: dicts of mangled name,
    arch, registers, stack, spill stores and spill loads, in order."""
    kernels, current = [], None
    for line in log.splitlines():
        m = ENTRY.search(line)
        if m:
            current = {"kernel": m.group(1), "arch": m.group(2)}
            kernels.append(current)
            continue
        if current is None:
            continue
        m = FRAME.search(line)
        if m:
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
        m = USED.search(line)
        if m:
            current["registers"] = int(m.group(1))
    for k in kernels:
        if "registers" not in k or "stack" not in k:
            raise ValueError(f"ptxas output without registers or stack frame for {k['kernel']}")
    return kernels


KEYS = ("registers", "stack", "spill_stores", "spill_loads")


def spills(row):
    return row["spill_stores"] + row["spill_loads"] > 0


def table(rows, before=None, spills_only=False):
    """The rows to print, each with what it was: all of them, or (`before`, a
    kept table by (unit, kernel)) those whose numbers changed, the kernels
    new to a unit (" (new)") and those no longer in it (" (gone)", with their
    old numbers). `spills_only`: the kernels that spill, now or before."""
    units_now = {r["unit"] for r in rows}
    now = {(r["unit"], r["kernel"]) for r in rows}
    shown = []
    for r in rows:
        old = before.get((r["unit"], r["kernel"])) if before is not None else None
        if spills_only and not spills(r) and not (old and spills(old)):
            continue
        if before is None:
            shown.append((r, ""))
        elif old is None:
            shown.append((r, " (new)"))
        elif any(old[k] != r[k] for k in KEYS):
            shown.append((r, " (was " + " ".join(str(old[k]) for k in KEYS) + ")"))
    for key, old in (before or {}).items():
        if key[0] in units_now and key not in now and (spills(old) or not spills_only):
            shown.append((old, " (gone)"))
    return shown


def readable(names):
    """Mangled names demangled by c++filt (where it is installed), without
    the parameter list and the namespaces."""
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    short = {}
    for name, pretty in zip(names, out.splitlines()):
        depth, end = 0, len(pretty)
        for i, ch in enumerate(pretty):  # cut at the parameter list: the first '(' outside <>
            depth += ch == "<"
            depth -= ch == ">"
            if ch == "(" and depth == 0:
                end = i
                break
        pretty = pretty[:end].removeprefix("void ")
        short[name] = re.sub(r"\bheatwave::(cuda::)?", "", pretty)
    return short


def units(build, pattern):
    """(object, name) of the generated cluster units of the build matching pattern."""
    out = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"], capture_output=True, text=True, check=True)
    found = {}
    for line in out.stdout.splitlines():
        m = UNIT.match(line)
        if m and re.search(pattern, m.group(2)):
            found[m.group(2)] = m.group(1)
    return sorted((obj, name) for name, obj in found.items())


def unit_command(command, out, overlay=None):
    """A unit's compile command line as arguments, writing `out`, without its
    dependency file, with -Xptxas -v; `overlay`: a directory searched for
    includes before the tree, so that its headers (at the tree's paths, e.g.
    OVERLAY/kernels/cluster/kernel_2d_columns.cuh) stand in for the tree's
    (the project includes by paths from the root, which a header's own
    directory does not resolve)."""
    args, skip = [], False
    for a in shlex.split(command):
        if skip:
            skip = False
        elif a in ("-MT", "-MF", "-o"):
            skip = True
            if a == "-o":
                args += ["-o", out]
        elif a != "-MD":
            args.append(a)
    if overlay:
        args[1:1] = ["-I", os.path.abspath(overlay)]
    return args + ["-Xptxas", "-v"]


def compile_unit(build, obj, name, scratch, overlay=None):
    """The unit's compile command (from ninja) with -Xptxas -v and its output
    in scratch (`overlay`: unit_command); ptxas's report."""
    command = subprocess.run(["ninja", "-C", build, "-t", "commands", obj], capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1]
    args = unit_command(command, os.path.join(scratch, name + ".o"), overlay)
    run = subprocess.run(args, cwd=build, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{name}: the compile failed (exit {run.returncode}):\n{run.stderr[-2000:]}")
    return name, parse(run.stdout + run.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", help="a configured build directory (ninja)")
    ap.add_argument("pattern", nargs="?", default=".", help="regular expression on the units' names")
    ap.add_argument("--spills", action="store_true", help="only the kernels that spill (now or, with --against, before)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", help="write the table here")
    ap.add_argument("--against", help="print only the kernels whose numbers differ from this earlier --json")
    ap.add_argument("--overlay", help="a directory of headers, at the tree's paths, that stand in for the tree's "
                    "(a variant measured without editing the tree)")
    a = ap.parse_args()
    if a.overlay and not os.path.isdir(a.overlay):
        sys.exit(f"ptxas_usage: --overlay {a.overlay}: no such directory")
    if not os.path.isfile(os.path.join(a.build, "build.ninja")):
        sys.exit(f"ptxas_usage: {a.build}: no build.ninja (configure with -G Ninja first)")
    todo = units(a.build, a.pattern)
    if not todo:
        sys.exit(f"ptxas_usage: no generated cluster unit in {a.build} matches '{a.pattern}'")
    before = {}
    if a.against:
        with open(a.against) as f:
            before = {(r["unit"], r["kernel"]): r for r in json.load(f)}
    print(f"{len(todo)} unit(s), {a.jobs} at a time", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as scratch, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for name, kernels in pool.map(lambda t: compile_unit(a.build, t[0], t[1], scratch, a.overlay), todo):
            rows += [dict(k, unit=name) for k in kernels]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    names = readable(sorted({r["kernel"] for r in rows} | {r["kernel"] for r in before.values()}))
    print("registers stack spill_stores spill_loads  unit  kernel")
    lines = table(rows, before if a.against else None, a.spills)
    for r, was in lines:
        print(f"{r['registers']:9} {r['stack']:5} {r['spill_stores']:12} {r['spill_loads']:11}  {r['unit']}  "
              f"{names[r['kernel']]}{was}")
    print(f"{len(rows)} kernels, {sum(map(spills, rows))} spilling, {len(lines)} shown", file=sys.stderr)

if __name__ == "__main__":
    main()
