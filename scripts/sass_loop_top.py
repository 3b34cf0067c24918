#!/usr/bin/python3
"""What the 3D pipeline's kernels run in every iteration, from their SASS.

For each kernel of a cubin or executable whose name matches PATTERN, it finds
the main loop (the one backward branch that spans most of the kernel). Then,
over the loop's control-flow graph, it finds the branch into the steady path:
the first conditional branch in the loop's first 60% whose target lies in the
loop's last 30%. It prints these counts:
  loop-top  the instructions in the blocks that dominate that branch (run in
            every iteration, steady or not);
  steady    the instructions from the steady path's start to the loop's end;
  local     LDL/STL in the loop (spills the loop pays).
A kernel built without sources' and receivers' code (Events false) is
labelled "plain".
Two builds compared kernel by kernel show where a change moved work into the
loop (docs/performance.md, "the 3D pipeline's loop top"). It needs cuobjdump
(CUDA's bin/). The counts are static: they cannot rank two schedules of the
same instructions.

  /usr/bin/python3 scripts/sass_loop_top.py FILE [PATTERN] [--cuobjdump PATH]
"""
import argparse
import re
import shutil
import subprocess
import sys

FORMS = ["uniform", "flux", "flux_tiles", "point"]  # kernels/cluster/common.cuh's Form, in order
INSTRUCTION = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
TARGET = re.compile(r"\bBRA\b.*?(0x[0-9a-f]+)")


def kernel_names(cuobjdump, path):
    run = subprocess.run([cuobjdump, "-elf", path], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{path}: cuobjdump could not read it: {run.stderr.strip()}")
    return sorted(set(re.findall(r"\.text\.(_Z\S+)", run.stdout)))


def instructions(cuobjdump, path, kernel):
    out = subprocess.run([cuobjdump, "-sass", "-fun", kernel, path], capture_output=True, text=True, check=True).stdout
    return [(int(m.group(1), 16), m.group(2)) for m in map(INSTRUCTION.match, out.splitlines()) if m]


def target(text):
    m = TARGET.search(text)
    return int(m.group(1), 16) if m else None


def unconditional(text):
    return text.startswith(("BRA", "EXIT", "RET"))


def blocks(code):
    """Basic blocks: split at branch targets and after branches, exits and barriers."""
    starts = {t for _, text in code if (t := target(text)) is not None}
    result, current = [], []
    for address, text in code:
        if address in starts and current:
            result.append(current)
            current = []
        current.append((address, text))
        if "BRA" in text or "EXIT" in text or "BAR" in text:
            result.append(current)
            current = []
    if current:
        result.append(current)
    return result


def dominators(graph_blocks):
    index = {b[0][0]: i for i, b in enumerate(graph_blocks)}
    successors = []
    for i, b in enumerate(graph_blocks):
        text = b[-1][1]
        s = []
        if (t := target(text)) is not None and t in index:
            s.append(index[t])
        if not unconditional(text) and i + 1 < len(graph_blocks):
            s.append(i + 1)
        successors.append(s)
    predecessors = [[] for _ in graph_blocks]
    for i, s in enumerate(successors):
        for j in s:
            predecessors[j].append(i)
    every = set(range(len(graph_blocks)))
    dom = [{0}] + [set(every) for _ in graph_blocks[1:]]
    changed = True
    while changed:
        changed = False
        for i in range(1, len(graph_blocks)):
            incoming = [dom[p] for p in predecessors[i] if p != i]
            new = {i} | (set.intersection(*incoming) if incoming else set())
            if new != dom[i]:
                dom[i], changed = new, True
    return dom


def loop_top(code):
    """(loop-top, steady, local) counts, or None where no loop is found."""
    loops = [(t, a) for a, text in code if (t := target(text)) is not None and t < a]
    if not loops:
        return None
    head, end = max(loops, key=lambda loop: loop[1] - loop[0])
    body = blocks([(a, text) for a, text in code if head <= a <= end])
    span = end - head
    entry = [(i, t) for i, b in enumerate(body)
             if (t := target(b[-1][1])) is not None and b[-1][1].startswith("@")
             and head + 0.7 * span < t < end and b[-1][0] < head + 0.6 * span]
    if not entry:
        return None
    branch, steady_start = entry[0]
    dom = dominators(body)
    top = sum(len(body[j]) for j in dom[branch])
    steady = sum(1 for a, _ in code if steady_start <= a <= end)
    local = sum(1 for a, text in code if head <= a <= end and re.search(r"\b(LDL|STL)\b", text))
    return top, steady, local


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", help="a cubin or an executable with sm_90a code")
    parser.add_argument("pattern", nargs="?", default="cluster_kernel_3d", help="regex on the mangled kernel name")
    parser.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump")
    args = parser.parse_args()
    if not shutil.which(args.cuobjdump):
        sys.exit(f"cuobjdump not found at '{args.cuobjdump}': give --cuobjdump (CUDA's bin/)")
    shape = re.compile(r"_3dILi([0-9])E([fd])NS_[0-9]+([A-Za-z]+)ELi([0-9]+)ELb([01])ELNS0_4FormE([0-9])(?:ELb([01]))?")
    names = [k for k in kernel_names(args.cuobjdump, args.file) if re.search(args.pattern, k)]
    if not names:
        sys.exit(f"{args.file}: no kernel matches '{args.pattern}'")
    print(f"{'kernel':60} {'loop-top':>8} {'steady':>7} {'local':>6}")
    for name in names:
        m = shape.search(name)
        base = re.match(r"_ZN8heatwave4cuda[0-9]+([A-Za-z0-9_]+?)I", name)
        label = (f"{base[1] if base else ''} r{m[1]} {'fp32' if m[2] == 'f' else 'fp64'} {m[3]} k{m[4]} "
                 f"{FORMS[int(m[6])]}{' clustered' if m[5] == '1' else ''}{' plain' if m[7] == '0' else ''}") if m else name[:42]
        counts = loop_top(instructions(args.cuobjdump, args.file, name))
        print(f"{label:60} " + ("no loop found" if counts is None else "%8d %7d %6d" % counts))


if __name__ == "__main__":
    main()
