#!/usr/bin/env python3
"""Convergence ladders of a `heatwave validate` report as log-log PNG plots.

Usage: plot_convergence.py REPORT.json OUTPUT_DIR
One PNG per ladder (error against grid spacing, with the expected slope drawn
through the finest point); prints "wrote PATH" for each. Exits 3 when
matplotlib is missing, so that heatwave can say so in its report.
"""
import json
import os
import re
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
except ImportError as e:
    print(f"matplotlib is not available for {sys.executable}: {e}", file=sys.stderr)
    sys.exit(3)


def main(report_path, out_dir):
    with open(report_path) as f:
        report = json.load(f)
    for ladder in report["ladders"]:
        h, err, order = ladder["spacing"], ladder["error"], ladder["expected_order"]
        fig, ax = plt.subplots(figsize=(5, 4))
        ax.loglog(h, err, "o-", label="measured max error")
        # The expected slope through the finest level.
        ax.loglog(h, [err[-1] * (x / h[-1]) ** order for x in h], "k--", label=f"order {order:g}")
        for x, e, n in zip(h, err, ladder["points"]):
            ax.annotate(f"{n} pts", (x, e), textcoords="offset points", xytext=(4, -10), fontsize=8)
        ax.set_xlabel("grid spacing h (axis x)")
        ax.set_ylabel("max |u - u_exact|")
        ax.set_title(ladder["case"], fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        name = "convergence-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", ladder["case"]) + ".png"
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(f"wrote {path}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
