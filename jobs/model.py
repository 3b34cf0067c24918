#!/usr/bin/python3
"""A performance model for heatwave's weak and strong scaling (docs/scaling.md).

Per chunk of k steps between halo exchanges (parallel.exchange_every), on P ranks:
  compute  = k x cells per rank / R        R: one GPU's (or rank's) measured rate
  exchange = sum over split axes of 2 messages (one per face), each costing
             t(m) from a measured ping-pong (interpolated per message size),
             m = k x radius x face of the local box (with the halos of the
             axes exchanged before it) x bytes per value.
Without overlap a chunk takes compute + exchange. With overlap the chunk's
inner part (cells whose dependency cone over the k steps reads no halo)
computes while the messages move, and the rims follow: a chunk takes
max(inner, exchange) + rims, the rims `rim` cells deep along each split
axis (at least k*r: the cluster backend's rims are whole tiles, computed as
on one GPU; the one-step overlap of the cuda backend: r). The deep-halo
trade-off: k divides the message count (latency) by k and leaves the bytes
per step alone, and its halo cone makes the rims at least k*r deep; the
cluster kernel's own cost of k is in its measured rate.
Past gpus_per_node ranks, messages cost the inter-node ping-pong.

    # model against a host study measured with jobs/study.py
    /usr/bin/python3 jobs/model.py compare out/studies/host-weak --pingpong docs/scaling/pingpong-host.json --cores 2
    # the GPU projection to 1,024 GPUs (rates in cells/s per GPU, ping-pongs measured on the machine)
    /usr/bin/python3 jobs/model.py project --rate-2d 4.2e11 --rate-3d 3.2e11 --cluster-rate-2d 9.9e11 \\
        --cluster-rate-3d 3.3e11 --intra pp-nvlink.json --inter pp-ib.json --gpus-per-node 4 --out docs/scaling
"""
import argparse
import bisect
import csv
import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from study import dims_create  # noqa: E402  (the decomposition the study runs)


class Link:
    """One-way message time by size: the measured table, interpolated; latency + size/bandwidth beyond it."""

    def __init__(self, latency, bandwidth, table=(), name=""):
        self.latency, self.bandwidth, self.name = latency, bandwidth, name
        self.sizes = [b for b, _ in table]
        self.times = [t for _, t in table]

    @classmethod
    def from_pingpong(cls, path):
        p = json.loads(Path(path).read_text())
        table = [(m["bytes"], m["one_way_seconds"]) for m in p["messages"]]
        return cls(p["latency_seconds"], p["bandwidth_bytes_per_second"], table, f"{path}")

    @classmethod
    def from_text(cls, text):  # "latency_s,bandwidth_B_per_s"
        latency, bandwidth = (float(x) for x in text.split(","))
        return cls(latency, bandwidth, name=f"assumed {latency * 1e6:.1f} us, {bandwidth / 1e9:.0f} GB/s")

    def seconds(self, nbytes):
        if not self.sizes or nbytes > self.sizes[-1]:
            return self.latency + nbytes / self.bandwidth
        if nbytes <= self.sizes[0]:
            return self.times[0]
        i = bisect.bisect_left(self.sizes, nbytes)
        x0, x1 = math.log(self.sizes[i - 1]), math.log(self.sizes[i])
        w = (math.log(nbytes) - x0) / (x1 - x0)
        return self.times[i - 1] * (1 - w) + self.times[i] * w


class Plan:
    """How a backend steps: k steps between exchanges, overlapped or not, the rims' depth (cells) when overlapped."""

    def __init__(self, name, k=1, overlap=False, rim=0):
        self.name, self.k, self.overlap, self.rim = name, k, overlap, rim


NO_OVERLAP = Plan("k 1, no overlap")


def step_time(points, ranks, rate, radius, value_bytes, link, plan=NO_OVERLAP):
    """(compute, exposed exchange) seconds per step for a global grid on `ranks` ranks."""
    dims = dims_create(ranks, len(points))
    box = [math.ceil(n / d) for n, d in zip(points, dims)]
    k, depth = plan.k, plan.k * radius
    cells = math.prod(box)
    exchange = rims = 0.0
    for axis, d in enumerate(dims):
        if d == 1:
            continue
        # Axes before this one were exchanged already: their halos travel too (corners).
        face = math.prod(n + 2 * depth if a < axis else n for a, n in enumerate(box) if a != axis)
        exchange += 2 * link.seconds(depth * face * value_bytes)
        rims += 2 * max(plan.rim, depth) * face
    if not plan.overlap or exchange == 0:
        return cells / rate, exchange / k
    inner, outer = k * (cells - rims) / rate, k * rims / rate
    return (inner + outer) / k, max(0.0, exchange - inner) / k


def predict(kind, points, ranks_list, rate, radius, value_bytes, intra, inter=None, gpus_per_node=None,
            plan=NO_OVERLAP):
    """Per rank count: predicted rate (cells/s), efficiency against the first, phase times per step."""
    rows = []
    for ranks in ranks_list:
        grid = [n * d for n, d in zip(points, dims_create(ranks, len(points)))] if kind == "weak" else points
        link = inter if inter and gpus_per_node and ranks > gpus_per_node else intra
        compute, exchange = step_time(grid, ranks, rate(ranks) if callable(rate) else rate, radius, value_bytes, link,
                                      plan)
        rows.append({"ranks": ranks, "grid": "x".join(map(str, grid)), "compute_per_step": compute,
                     "exchange_per_step": exchange, "rate": math.prod(grid) / (compute + exchange)})
    for r in rows:
        r["efficiency"] = (r["rate"] / r["ranks"]) / (rows[0]["rate"] / rows[0]["ranks"])
    return rows


def compare(study_dir, link, cores):
    """Model against a measured host study: the 1-rank rate in, the other rank counts out.
    Ranks beyond `cores` share them (a rank's rate scales by cores/ranks)."""
    study_dir = Path(study_dir)
    runs = list(csv.DictReader(open(study_dir / "runs.csv")))
    summary = list(csv.DictReader(open(study_dir / "summary.csv")))
    kind, precision, radius = runs[0]["kind"], runs[0]["precision"], int(runs[0]["radius"])
    base = summary[0]
    grid0 = [int(n) for n in base["grid"].split("x")]
    points = ([n // d for n, d in zip(grid0, dims_create(int(base["ranks"]), len(grid0)))]
              if kind == "weak" else grid0)
    # Compute rate of one rank from its measured compute phase, so the exchange is modelled, not fitted.
    rate = math.prod(points) / float(base["compute_per_step"])
    ranks = [int(s["ranks"]) for s in summary]
    model = predict(kind, points, ranks, lambda p: rate * min(1.0, cores / p), radius,
                    8 if precision == "float64" else 4, link)
    lines = [f"| ranks | grid | GCells/s measured | model | efficiency measured | model | "
             f"exchange ms/step measured | model |", "|" + " --- |" * 8]
    for s, m in zip(summary, model):
        lines.append(f"| {s['ranks']} | {s['grid']} | {float(s['gcells_per_second']):.3g} | {m['rate'] / 1e9:.3g} | "
                     f"{100 * float(s['efficiency']):.0f}% | {100 * m['efficiency']:.0f}% | "
                     f"{1e3 * float(s['exchange_per_step']):.3g} | {1e3 * m['exchange_per_step']:.3g} |")
    return "\n".join(lines)


# The GPU cases: (name, kind, points (per GPU for weak), radius, bytes per value, dims)
GPU_CASES = (("weak 2D heat fp32, 16384^2 per GPU", "weak", [16384, 16384], 1, 4, 2),
             ("weak 3D heat fp32, 512^3 per GPU", "weak", [512, 512, 512], 1, 4, 3),
             ("strong 2D heat fp32, 32768^2", "strong", [32768, 32768], 1, 4, 2))


def backend_plans(args):
    """(backend, {dims: (rate, Plan)}) for the backends whose rates were given: cuda exchanges every k
    steps (its auto depth: 2D 8, 3D 4) and overlaps the chunk as a trapezoid, step j's rims H + (j-1)r
    inside the box and (k-j)r into the halo, (2k-1)r in all; cuda-cluster blocks k steps (2D 8, 3D 4:
    the default plans) and overlaps its inner tiles, its rims a tile deep (2D 128 columns, 3D 32)."""
    plans = [("cuda", {2: (args.rate_2d, Plan("k 8, trapezoid overlap", 8, True, 15)),
                       3: (args.rate_3d, Plan("k 4, trapezoid overlap", 4, True, 7))})]
    if args.cluster_rate_2d and args.cluster_rate_3d:
        plans.append(("cuda-cluster", {2: (args.cluster_rate_2d, Plan("k 8, inner tiles overlap", 8, True, 128)),
                                       3: (args.cluster_rate_3d, Plan("k 4, inner tiles overlap", 4, True, 32))}))
    return plans


def project(args):
    intra = Link.from_pingpong(args.intra) if Path(args.intra).exists() else Link.from_text(args.intra)
    inter = Link.from_pingpong(args.inter) if Path(args.inter).exists() else Link.from_text(args.inter)
    ranks = [2 ** k for k in range(int(math.log2(args.max_ranks)) + 1)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"Inputs: intra-node link: {intra.name}; inter-node link: {inter.name}; {args.gpus_per_node} GPUs "
             "per node.", ""]
    curves = []
    for backend, plans in backend_plans(args):
        results = [predict(kind, pts, ranks, plans[d][0], r, b, intra, inter, args.gpus_per_node, plans[d][1])
                   for _, kind, pts, r, b, d in GPU_CASES]
        lines += [f"{backend} (rates per GPU: 2D {plans[2][0]:.3g}, 3D {plans[3][0]:.3g} cells/s; "
                  f"2D {plans[2][1].name}, 3D {plans[3][1].name}):", "",
                  "| ranks | " + " | ".join(f"{c[0]} eff. (GCells/s)" for c in GPU_CASES) + " |",
                  "|" + " --- |" * (1 + len(GPU_CASES))]
        for i, p in enumerate(ranks):
            lines.append(f"| {p} | " + " | ".join(f"{100 * res[i]['efficiency']:.1f}% ({res[i]['rate'] / 1e9:.0f})"
                                                   for res in results) + " |")
        lines.append("")
        curves += [(f"{backend}: {name}", res) for (name, *_), res in zip(GPU_CASES, results)]
    # The deep-halo trade-off on 2 GPUs, weak 2D, by k (cuda-cluster's rate where given).
    rate2d = args.cluster_rate_2d or args.rate_2d
    lines += [f"Deep halos, weak 2D 16384^2 per GPU on 2 GPUs, rate {rate2d:.3g} cells/s, inner tiles overlap "
              "(rims of a 128-column tile) against none:", "", "| k | efficiency, overlap | no overlap |",
              "| --- | --- | --- |"]
    for k in (1, 2, 4, 8, 16):
        eff = [predict("weak", [16384, 16384], [1, 2], rate2d, 1, 4, intra, plan=Plan("", k, ov, 128))[1]
               ["efficiency"] for ov in (True, False)]
        lines.append(f"| {k} | {100 * eff[0]:.1f}% | {100 * eff[1]:.1f}% |")
    text = "\n".join(lines) + "\n"
    (out / "projection.md").write_text(text)
    print(text)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, res in curves:
        ax.plot(ranks, [100 * r["efficiency"] for r in res], marker="o", label=name,
                linestyle="-" if name.startswith("cuda-cluster") else "--")
    ax.axvline(args.gpus_per_node, color="gray", linestyle=":", label="one node")
    ax.set(xscale="log", xlabel="GPUs", ylabel="parallel efficiency (%)", ylim=(0, 105),
           title="heatwave scaling model (projection)")
    ax.set_xticks(ranks[::2], [str(r) for r in ranks[::2]])
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "projection.png", dpi=120)
    print(f"model: {out}/projection.md, {out}/projection.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="model against a host study measured with jobs/study.py")
    c.add_argument("study_dir")
    c.add_argument("--pingpong", required=True, help="heatwave_pingpong JSON measured on the same machine")
    c.add_argument("--cores", type=int, default=os.cpu_count(), help="cores the ranks share (default: this machine's)")
    p = sub.add_parser("project", help="the GPU cases to --max-ranks GPUs")
    p.add_argument("--rate-2d", type=float, required=True, help="2D heat fp32 cells/s on one GPU (measured)")
    p.add_argument("--rate-3d", type=float, required=True, help="3D heat fp32 cells/s on one GPU (measured)")
    p.add_argument("--cluster-rate-2d", type=float, help="the same with cuda-cluster (measured); with "
                   "--cluster-rate-3d, the projection adds cuda-cluster")
    p.add_argument("--cluster-rate-3d", type=float)
    p.add_argument("--intra", required=True, help="ping-pong JSON within a node, or 'latency_s,bandwidth_B/s'")
    p.add_argument("--inter", required=True, help="ping-pong JSON between nodes, or 'latency_s,bandwidth_B/s'")
    p.add_argument("--gpus-per-node", type=int, default=4)
    p.add_argument("--max-ranks", type=int, default=1024)
    p.add_argument("--out", default="out/model")
    args = parser.parse_args()
    try:
        if args.command == "compare":
            print(compare(args.study_dir, Link.from_pingpong(args.pingpong), args.cores))
        else:
            project(args)
    except (OSError, KeyError, ValueError) as e:
        print(f"model: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
