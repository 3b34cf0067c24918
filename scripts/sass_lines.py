#!/usr/bin/python3
"""A kernel's loops and their static instructions by source line, from its SASS.

Reads `nvdisasm -g` (SASS with the source line of each instruction; the
build compiles with -lineinfo) of a cubin, or a listing saved from it, and
for the kernel whose name matches KERNEL: finds its loops (a backward branch
spanning over MIN instructions, as scripts/ncu_regions.py does), prints
each loop's size, then for each loop (or the one --loop names) the source
lines with the most instructions and their opcodes. Without a GPU it shows
where a change moved code: the deep kernel's general iterations against its
steady loop, an index computation left in a loop (issue 71's fifth session).
The counts are static: code a branch skips is counted, so a loop's count
is an upper bound on what an iteration runs.

A unit of a configured build (--unit PATTERN: the generated cluster unit
whose name matches, e.g. deep_3d_float_Heat_r1) is compiled to a cubin with
the build's own command, as scripts/ptxas_usage.py compiles it (--overlay
DIR: headers at the tree's paths that stand in for the tree's, e.g. a
pending variant's). nvdisasm is in CUDA's bin/ (Debian's nvcc package
leaves it out: `pip download nvidia-cuda-nvdisasm` has it).

  /usr/bin/python3 scripts/sass_lines.py (CUBIN | --unit PATTERN [--build DIR] [--overlay DIR] | --listing FILE)
      [--kernel REGEX] [--nvdisasm PATH] [--min 500] [--loop A-B] [--lines 20]
"""
import argparse
import collections
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ncu_regions = _script("ncu_regions")  # the loops
ptxas_usage = _script("ptxas_usage")  # a unit's compile command

SECTION = re.compile(r"^\s*\.section\s+\.text\.(\S+?),")
LABEL = re.compile(r"^(\.L_x_\d+):")
LINE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
OPCODE = re.compile(r"^(?:@!?U?P\w+\s+)?([A-Z0-9_]+)")


def parse(listing):
    """{kernel: [instruction]}: each {address, source (label targets as addresses), line ('file:n')}."""
    kernels, labels, name, pending, where = {}, {}, None, [], "?"
    for text in listing.splitlines():
        if (m := SECTION.match(text)):
            name, pending = m.group(1), []
            kernels[name], labels[name] = [], {}
        elif name is None:
            continue
        elif (m := LABEL.match(text)):
            pending.append(m.group(1))  # at the next instruction's address
        elif (m := LINE.match(text)):
            where = f"{pathlib.Path(m.group(1)).name}:{m.group(2)}"
        elif (m := INSTRUCTION.match(text)):
            address = int(m.group(1), 16)
            labels[name].update((label, address) for label in pending)
            pending = []
            kernels[name].append({"address": address, "source": m.group(2), "line": where})
    for name, ins in kernels.items():  # branch targets: labels to addresses
        for x in ins:
            x["source"] = re.sub(r"`\((\.L_x_\d+)\)", lambda m: hex(labels[name].get(m.group(1), 0)), x["source"])
    return kernels


def by_line(ins):
    """[(line, count, Counter of opcodes)], most instructions first."""
    lines = collections.defaultdict(collections.Counter)
    for x in ins:
        m = OPCODE.match(x["source"])
        lines[x["line"]][m.group(1) if m else "?"] += 1
    return sorted(((k, sum(c.values()), c) for k, c in lines.items()), key=lambda t: -t[1])


def unit_cubin(build, pattern, overlay, scratch):
    """The first generated cluster unit matching pattern, compiled to a cubin
    by its build command (-c made -cubin)."""
    found = ptxas_usage.units(build, pattern)
    if not found:
        sys.exit(f"sass_lines: no cluster unit of {build} matches '{pattern}'")
    obj, name = found[0]
    command = subprocess.run(["ninja", "-C", build, "-t", "commands", obj], capture_output=True, text=True,
                             check=True).stdout.strip().splitlines()[-1]
    cubin = pathlib.Path(scratch) / f"{name}.cubin"
    args = ["-cubin" if a == "-c" else a for a in ptxas_usage.unit_command(command, str(cubin), overlay)]
    run = subprocess.run(args, cwd=build, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"sass_lines: {name} did not compile:\n{run.stderr[-2000:]}")
    return cubin


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cubin", nargs="?")
    parser.add_argument("--unit", help="a generated cluster unit of --build, by a pattern of its name")
    parser.add_argument("--build", default=str(ROOT / "build"), help="the configured build of --unit")
    parser.add_argument("--overlay", help="headers at the tree's paths that stand in for the tree's (--unit)")
    parser.add_argument("--listing", help="nvdisasm -g output saved in a file")
    parser.add_argument("--kernel", default="", help="a regular expression the kernel's name matches")
    parser.add_argument("--nvdisasm", default=shutil.which("nvdisasm") or "/usr/local/cuda/bin/nvdisasm")
    parser.add_argument("--min", type=int, default=500, help="a loop's least size in instructions")
    parser.add_argument("--loop", default="", help="only the loop A-B (instruction indices, as printed)")
    parser.add_argument("--lines", type=int, default=20, help="source lines shown a loop")
    args = parser.parse_args()
    if sum(x is not None for x in (args.cubin, args.unit, args.listing)) != 1:
        sys.exit("sass_lines: give one of CUBIN, --unit PATTERN, --listing FILE")
    if args.listing:
        listing = pathlib.Path(args.listing).read_text()
    else:
        with tempfile.TemporaryDirectory() as work:
            cubin = unit_cubin(args.build, args.unit, args.overlay, work) if args.unit else args.cubin
            if not pathlib.Path(args.nvdisasm).exists():
                sys.exit(f"sass_lines: no nvdisasm at {args.nvdisasm} (--nvdisasm PATH)")
            run = subprocess.run([args.nvdisasm, "-g", str(cubin)], capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"sass_lines: nvdisasm could not read {cubin}: {run.stderr.strip()}")
            listing = run.stdout
    kernels = {k: v for k, v in parse(listing).items() if re.search(args.kernel, k)}
    if not kernels:
        sys.exit(f"sass_lines: no kernel matches '{args.kernel}'")
    for name, ins in kernels.items():
        found = ncu_regions.loops(ins, args.min)
        print(f"{name}\n  {len(ins)} instructions; loops (index range, size): "
              + (", ".join(f"{a}-{b} {b - a + 1}" for a, b in found) or "none"))
        for a, b in found:
            if args.loop and args.loop != f"{a}-{b}":
                continue
            print(f"  loop {a}-{b} ({b - a + 1} instructions), by source line:")
            for line, count, ops in by_line(ins[a:b + 1])[:args.lines]:
                print(f"    {count:6} {line:32} " + " ".join(f"{k} {v}" for k, v in ops.most_common(6)))


if __name__ == "__main__":
    main()
