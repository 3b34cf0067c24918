#!/usr/bin/env python3
"""Reflection off an absorbing face, measured (docs/design.md, "Absorbing faces").

A Ricker pulse (10 Hz, c = 1, h = 1/200: 20 points a wavelength) from
(1.0, 0.8) meets the x_high face of a 2 x 3 box; three receivers at x = 1.6
see its reflection at 0, 30 and 45 degrees of incidence. The reflected wave
is the trace less that of the same box 2 units longer in x (free space for
the time of the window); its peak over the Dirichlet wall's is the
reflection coefficient. The other faces are absorbing (32 points) in all
three runs.

  /usr/bin/python3 scripts/absorbing_table.py HEATWAVE [--widths 8 16 24 32 48] [--check 0.05]

--check R: exit 1 unless the reflection at normal incidence is <= R for
every width given (the ctest runs the default width, 24)."""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heatwave_traces  # noqa: E402

ANGLES = [0, 30, 45]
SOURCE = (1.0, 0.8)
XR = 1.6


def config(name, x_high, length_x):
    points_x = int(round(length_x * 200)) + 1
    # The specular point's angle from the image source (x = 2 * 2.0 - 1.0) to the receiver.
    ys = [SOURCE[1] + (2 * 2.0 - SOURCE[0] - XR) * math.tan(math.radians(a)) for a in ANGLES]
    receivers = ", ".join(f"[{XR}, {y:.6f}]" for y in ys)
    return f"""equation: wave
grid: {{points: [{points_x}, 601], length: [{length_x}, 3.0]}}
time: {{dt: auto, steps: 760}}
boundary: {{default: {{type: absorbing, width: 32}}, x_high: {x_high}}}
initial: {{type: constant, value: 0}}
sources: [{{type: point, position: [{SOURCE[0]}, {SOURCE[1]}], amplitude: 1.0, time: {{type: ricker, frequency: 10}}}}]
receivers: {{every: 1, file: {name}.h5, points: [{receivers}]}}
progress: {{seconds: 0}}
diagnostics: {{every: 0}}
metrics: {{file: ""}}
"""


def traces(heatwave, work, name, x_high, length_x=2.0):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(config(name, x_high, length_x))
    subprocess.run([heatwave, "run", path], cwd=work, check=True, stdout=subprocess.DEVNULL)
    t = heatwave_traces.read(os.path.join(work, name + ".h5"))
    return t.traces, t.time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("heatwave")
    ap.add_argument("--widths", type=int, nargs="+", default=[8, 16, 24, 32, 48])
    ap.add_argument("--check", type=float)
    args = ap.parse_args()
    args.heatwave = os.path.abspath(args.heatwave)
    with tempfile.TemporaryDirectory() as work:
        free, t = traces(args.heatwave, work, "free", "{type: absorbing, width: 32}", 4.0)
        wall, _ = traces(args.heatwave, work, "wall", "{type: dirichlet}")
        windows = []
        for a in ANGLES:  # the reflection's arrival: the image source's distance, plus the Ricker delay 1/f
            arrival = math.hypot(2 * 2.0 - SOURCE[0] - XR, (2 * 2.0 - SOURCE[0] - XR) * math.tan(math.radians(a))) + 0.1
            windows.append((t > arrival - 0.15) & (t < arrival + 0.25))
        reference = [np.abs(wall[i] - free[i])[w].max() for i, w in enumerate(windows)]
        print("| layer width (points) | " + " | ".join(f"{a} deg" for a in ANGLES) + " |")
        print("| --- |" + " --- |" * len(ANGLES))
        failed = False
        for width in args.widths:
            absorbed, _ = traces(args.heatwave, work, f"w{width}", f"{{type: absorbing, width: {width}}}")
            ratios = [np.abs(absorbed[i] - free[i])[w].max() / reference[i] for i, w in enumerate(windows)]
            print(f"| {width} | " + " | ".join(f"{100 * r:.1f}%" for r in ratios) + " |")
            if args.check is not None and ratios[0] > args.check:
                failed = True
                print(f"FAIL: width {width}: reflection {100 * ratios[0]:.1f}% at normal incidence > {100 * args.check:.1f}%")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
