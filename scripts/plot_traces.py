#!/usr/bin/env python3
"""A shot gather from a receivers file: every trace against time, side by
side by receiver offset, with the expected first arrival over it.

  /usr/bin/python3 scripts/plot_traces.py receivers.h5 gather.png \\
      [--source X Y Z] [--interfaces Z1 Z2 ...] [--velocities V0 V1 ...] [--surface Z] [--delay T]

The defaults are configs/examples/seismic3d.yaml's: a source at (1.0, 1.0,
0.95), layers along z with interfaces at 0.5 and 0.85 and velocities 3.0,
2.2, 1.5 (from the bottom), receivers on the surface z = 1.0, a Ricker
pulse peaking at 1/f = 1/15 s. The first arrival at offset x is the least
of the direct wave in the source's layer and the head waves along each
deeper interface, t = x / v_n + sum over the layers crossed of
(down + up thickness) cos(asin(v_i / v_n)) / v_i, plus the pulse's delay."""
import argparse
import math

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def first_arrival(offset, source_z, surface, interfaces, velocities):
    """Travel time from a source at depth to a receiver on the surface, `offset` away."""
    bounds = [-math.inf] + list(interfaces) + [math.inf]
    layer_of = lambda z: next(i for i in range(len(velocities)) if bounds[i] <= z < bounds[i + 1])  # noqa: E731
    top = layer_of(surface - 1e-9)  # the layer under the surface
    src = layer_of(source_z)
    # Direct: straight through the layers between (the source and receiver share the top layer here).
    best = math.hypot(offset, surface - source_z) / velocities[src] if src == top else math.inf
    for n in range(src - 1, -1, -1):  # head waves along the top of each deeper layer n
        vn = velocities[n]
        if any(velocities[i] >= vn for i in range(n + 1, top + 1)):
            continue
        t = offset / vn
        for i in range(n + 1, top + 1):
            lo, hi = bounds[i], min(bounds[i + 1], surface)
            down = max(0.0, min(hi, source_z) - lo)  # thickness of layer i between the source and the interface
            up = hi - lo  # the whole layer, back up to the surface
            t += (down + up) * math.cos(math.asin(velocities[i] / vn)) / velocities[i]
        best = min(best, t)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces")
    ap.add_argument("png")
    ap.add_argument("--source", type=float, nargs=3, default=[1.0, 1.0, 0.95])
    ap.add_argument("--interfaces", type=float, nargs="*", default=[0.5, 0.85])
    ap.add_argument("--velocities", type=float, nargs="+", default=[3.0, 2.2, 1.5])
    ap.add_argument("--surface", type=float, default=1.0)
    ap.add_argument("--delay", type=float, default=1 / 15)
    args = ap.parse_args()
    with h5py.File(args.traces, "r") as f:
        traces, time, positions = f["traces"][()], f["time"][()], f["positions"][()]
    offsets = positions[:, 0] - args.source[0]
    # Clip each trace to a share of the gather's peak: the direct wave would otherwise hide the rest.
    scale = np.percentile(np.abs(traces), 99.5) or 1.0
    fig, ax = plt.subplots(figsize=(8, 6), dpi=120)
    ax.imshow(np.clip(traces.T / scale, -1, 1), cmap="gray_r", aspect="auto", vmin=-1, vmax=1,
              extent=[offsets[0], offsets[-1], time[-1], time[0]])
    curve = [first_arrival(abs(x), args.source[2], args.surface, args.interfaces, args.velocities) + args.delay
             for x in offsets]
    ax.plot(offsets, curve, color="tab:red", lw=1.2, label="expected first arrival (direct and head waves)")
    ax.set_xlabel("offset from the source along x")
    ax.set_ylabel("time")
    ax.set_title(f"shot gather: {traces.shape[0]} receivers, {traces.shape[1]} samples ({args.traces})", fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.png)
    print(f"{args.png}: {traces.shape[0]} traces x {traces.shape[1]} samples")


if __name__ == "__main__":
    main()
