#!/usr/bin/env python3
"""A shot gather from a receivers file: every trace against time, side by
side by receiver offset, with the expected first arrival over it where the
file records a model to compute it from.

  /usr/bin/python3 scripts/plot_traces.py receivers.h5 gather.png [--no-model]
      [--source X Y Z] [--interfaces Z1 Z2 ...] [--velocities V0 V1 ...] [--surface Z] [--delay T]

heatwave records the run's resolved config in the file. Where it is a shot
over layers (a wave equation, c constant or in layers along the vertical
axis, one point source with a Ricker pulse, receivers on one level), the
first arrival is drawn: at offset x, the least of the direct wave in the
source's layer and the head waves along each deeper interface,
t = x / v_n + sum over the layers crossed of (down + up thickness)
cos(asin(v_i / v_n)) / v_i, plus the pulse's delay. The options give or
override that model (velocities from the bottom layer up); --no-model
draws the traces alone. Errors are one line, and exit 1."""
import argparse
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heatwave_traces  # noqa: E402


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


def recorded_model(t):
    """The shot's model from the run's config: (source, interfaces, velocities, surface, delay), or a reason why not."""
    c = t.config
    if not c:
        return "the file records no config"
    if c.get("equation") not in ("wave", "damped_wave"):
        return f"a {c.get('equation')} run, not a wave"
    dims = t.positions.shape[1]
    vertical = "xyz"[dims - 1]
    medium = (c.get("material") or {}).get("c", c.get("c"))
    if isinstance(medium, (int, float)):
        interfaces, velocities = [], [float(medium)]
    elif isinstance(medium, dict) and medium.get("type") == "layers" and medium.get("axis") == vertical:
        interfaces, velocities = medium["interfaces"], medium["values"]
    else:
        return f"c is not constant or in layers along {vertical}"
    points = [s for s in c.get("sources") or [] if s.get("type") == "point"]
    if len(points) != 1 or (points[0].get("time") or {}).get("type") != "ricker":
        return "not one point source with a Ricker pulse"
    levels = np.unique(t.positions[:, -1])
    if len(levels) != 1:
        return "the receivers are not on one level"
    return points[0]["position"], interfaces, velocities, float(levels[0]), points[0]["time"]["delay"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces")
    ap.add_argument("png")
    ap.add_argument("--no-model", action="store_true", help="draw the traces alone")
    ap.add_argument("--source", type=float, nargs="+")
    ap.add_argument("--interfaces", type=float, nargs="*")
    ap.add_argument("--velocities", type=float, nargs="+")
    ap.add_argument("--surface", type=float)
    ap.add_argument("--delay", type=float)
    args = ap.parse_args()
    try:
        t = heatwave_traces.read(args.traces)
    except heatwave_traces.TracesError as e:
        sys.exit(f"plot_traces.py: {e}")
    if t.traces.shape[1] == 0:
        sys.exit(f"plot_traces.py: {args.traces}: no samples yet")
    model = None
    if not args.no_model:
        recorded = recorded_model(t)
        given = [args.source, args.interfaces, args.velocities, args.surface, args.delay]
        if isinstance(recorded, str) and not (args.source and args.velocities):
            print(f"{args.traces}: no first arrival drawn ({recorded}; --source and --velocities give a model)")
        else:
            base = recorded if not isinstance(recorded, str) else [None, [], None, t.positions[0, -1], 0.0]
            model = [g if g is not None else b for g, b in zip(given, base)]
    source_x = model[0][0] if model else t.positions[:, 0].mean()
    offsets = t.positions[:, 0] - source_x
    traces = t.traces
    # Clip each trace to a share of the gather's peak: the direct wave would otherwise hide the rest.
    scale = np.percentile(np.abs(traces), 99.5) or 1.0
    fig, ax = plt.subplots(figsize=(8, 6), dpi=120)
    ax.imshow(np.clip(traces.T / scale, -1, 1), cmap="gray_r", aspect="auto", vmin=-1, vmax=1,
              extent=[offsets[0], offsets[-1], t.time[-1], t.time[0]])
    if model:
        source, interfaces, velocities, surface, delay = model
        horizontal = np.linalg.norm(t.positions[:, :-1] - np.asarray(source[:-1]), axis=1)
        curve = [first_arrival(x, source[-1], surface, interfaces, velocities) + delay for x in horizontal]
        ax.plot(offsets, curve, color="tab:red", lw=1.2, label="expected first arrival (direct and head waves)")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel("offset from the source along x")
    ax.set_ylabel("time")
    ax.set_title(f"gather: {traces.shape[0]} receivers, {traces.shape[1]} samples ({args.traces})", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.png)
    print(f"{args.png}: {traces.shape[0]} traces x {traces.shape[1]} samples")


if __name__ == "__main__":
    main()
