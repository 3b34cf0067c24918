#!/usr/bin/python3
"""heatwave scaling studies: one YAML -> runs -> CSV, PNG plots, Markdown.

    /usr/bin/python3 jobs/study.py run configs/studies/host-weak.yaml [--heatwave build/heatwave]
    /usr/bin/python3 jobs/study.py report configs/studies/host-weak.yaml   # collect again (after Slurm jobs)

A study YAML:

    name: host-weak                 # output folder name (out/studies/<name> unless `output:` says)
    case: cases/heat2d-host.yaml    # base case, relative to the study file
    kind: weak                      # weak: the case's grid is per rank; strong: the global grid
    ranks: [1, 2, 4]
    repeats: 2                      # runs per rank count (the median counts)
    points: [384, 384]              # optional: overrides the case's grid.points
    steps: 200                      # overrides the case's time (steps, not t_end: same work per point)
    threads: 1                      # OpenMP threads per rank (host backend)
    backend: host                   # optional override of the case's backend
    launcher: mpirun                # mpirun (runs now) | slurm (one sbatch per point, `report` later)
    mpirun_args: [--oversubscribe]  # extra mpirun arguments
    timeout_s: 600                  # per run
    slurm: {template: jobs/heatwave-multinode.sbatch, gpus_per_node: 4, time: "00:20:00", args: []}

Every run writes heatwave's metrics JSON; `report` reads all of them. The
parallel efficiency of P ranks against the smallest rank count P0 is
(rate(P)/P) / (rate(P0)/P0) with rate = cell updates per second (median of the
repeats): for weak scaling that is the per-rank throughput kept, for strong
scaling it equals speedup/(P/P0), since the work is the same at every P.
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import yaml

KINDS = ("weak", "strong")
LAUNCHERS = ("mpirun", "slurm")
STUDY_KEYS = {"name", "case", "kind", "ranks", "repeats", "steps", "threads", "backend", "launcher", "mpirun_args",
              "timeout_s", "slurm", "output", "description", "points"}


class StudyError(Exception):
    pass


def load_study(path):
    path = Path(path)
    try:
        study = yaml.safe_load(path.read_text())
    except OSError as e:
        raise StudyError(f"{path}: cannot read the study: {e.strerror}")
    except yaml.YAMLError as e:
        raise StudyError(f"{path}: YAML error: {e}")
    if not isinstance(study, dict):
        raise StudyError(f"{path}: a study is a mapping (name, case, kind, ranks, ...)")
    unknown = sorted(set(study) - STUDY_KEYS)
    if unknown:
        raise StudyError(f"{path}: unknown key(s) {unknown}; valid: {sorted(STUDY_KEYS)}")
    for key in ("name", "case", "kind", "ranks"):
        if key not in study:
            raise StudyError(f"{path}: '{key}' is required")
    if study["kind"] not in KINDS:
        raise StudyError(f"{path}: 'kind' is '{study['kind']}', expected one of {KINDS}")
    ranks = study["ranks"]
    if not (isinstance(ranks, list) and ranks and all(isinstance(r, int) and r > 0 for r in ranks)):
        raise StudyError(f"{path}: 'ranks' must be a list of positive integers, got {ranks!r}")
    study.setdefault("repeats", 1)
    study.setdefault("launcher", "mpirun")
    study.setdefault("mpirun_args", [])
    study.setdefault("timeout_s", 600)
    if study["launcher"] not in LAUNCHERS:
        raise StudyError(f"{path}: 'launcher' is '{study['launcher']}', expected one of {LAUNCHERS}")
    study["case"] = (path.parent / study["case"]).resolve()
    study["output"] = Path(study.get("output", Path("out/studies") / study["name"])).resolve()
    study["ranks"] = sorted(set(ranks))
    return study


def dims_create(ranks, ndims):
    """Balanced ranks per axis, largest first (as MPI_Dims_create)."""
    dims = [1] * ndims
    factors, n, f = [], ranks, 2
    while n > 1:
        while n % f == 0:
            factors.append(f)
            n //= f
        f += 1
    for factor in sorted(factors, reverse=True):
        dims[dims.index(min(dims))] *= factor
    return sorted(dims, reverse=True)


def point_case(study, base, ranks):
    """The base case at one rank count: grid, decomposition and run settings."""
    case = json.loads(json.dumps(base))  # deep copy
    points = study.get("points", case["grid"]["points"])
    dims = dims_create(ranks, len(points))
    case["grid"]["points"] = points
    if study["kind"] == "weak":
        # The base grid is one rank's share: the global grid grows with the rank grid.
        case["grid"]["points"] = [p * d for p, d in zip(points, dims)]
    elif any(p < d * 8 for p, d in zip(points, dims)):
        raise StudyError(f"strong scaling: grid {points} is too small for {ranks} ranks as {dims}")
    case.setdefault("parallel", {})["decomposition"] = dims
    if "steps" in study:
        case["time"] = {k: v for k, v in case.get("time", {}).items() if k not in ("steps", "t_end")}
        case["time"]["steps"] = study["steps"]
    for key in ("threads", "backend"):
        if key in study:
            case[key] = study[key]
    case["metrics"] = {"file": "metrics.json"}
    case["checkpoint"] = {"every": 0}
    case["output"] = {"every": 0}
    case["progress"] = {"seconds": 60}
    return case


def run(study, heatwave):
    base = yaml.safe_load(study["case"].read_text())
    out = study["output"]
    jobs = []
    for ranks in study["ranks"]:
        case = point_case(study, base, ranks)
        for repeat in range(study["repeats"]):
            point = out / "runs" / f"ranks{ranks:05d}-rep{repeat}"
            point.mkdir(parents=True, exist_ok=True)
            (point / "metrics.json").unlink(missing_ok=True)
            (point / "case.yaml").write_text(yaml.safe_dump(case, sort_keys=False))
            if study["launcher"] == "mpirun":
                run_mpirun(study, heatwave, point, ranks)
            else:
                jobs.append(submit_slurm(study, heatwave, point, ranks))
    if jobs:
        print(f"study: submitted {len(jobs)} Slurm job(s): {' '.join(jobs)}; when they have finished:")
        print(f"  /usr/bin/python3 {sys.argv[0]} report {sys.argv[2]}")


def run_mpirun(study, heatwave, point, ranks):
    cmd = ["mpirun", "-n", str(ranks), *study["mpirun_args"]]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    cmd += [str(heatwave), "run", "case.yaml"]
    print(f"study: {point.name}: {' '.join(cmd)}", flush=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(study.get("threads", 1) or 1))
    with open(point / "heatwave.log", "w") as log:
        try:
            code = subprocess.run(cmd, cwd=point, stdout=log, stderr=subprocess.STDOUT, env=env,
                                  timeout=study["timeout_s"]).returncode
        except subprocess.TimeoutExpired:
            raise StudyError(f"{point}: the run took longer than timeout_s = {study['timeout_s']} s")
    if code != 0:
        tail = (point / "heatwave.log").read_text().splitlines()[-15:]
        raise StudyError(f"{point}: heatwave exited {code}:\n" + "\n".join(tail))


def submit_slurm(study, heatwave, point, ranks):
    slurm = study.get("slurm", {})
    per_node = min(ranks, slurm.get("gpus_per_node", 4))
    nodes = math.ceil(ranks / per_node)
    template = Path(slurm.get("template", Path(__file__).parent / "heatwave-multinode.sbatch")).resolve()
    cmd = ["sbatch", "--parsable", f"--chdir={point}", f"--nodes={nodes}", f"--ntasks={ranks}",
           f"--ntasks-per-node={per_node}", f"--gpus-per-node={per_node}", f"--time={slurm.get('time', '00:30:00')}",
           f"--job-name={study['name']}-{ranks}", f"--export=ALL,CASE=case.yaml,HEATWAVE={heatwave}",
           *slurm.get("args", []), str(template)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise StudyError(f"sbatch failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout.strip().split(";")[0]


def collect(study):
    """One row per metrics JSON found under the study's runs/."""
    rows = []
    for metrics_path in sorted((study["output"] / "runs").glob("ranks*-rep*/metrics.json")):
        m = json.loads(metrics_path.read_text())
        cells = math.prod(m["grid"])
        row = {"study": study["name"], "kind": study["kind"], "ranks": m["ranks"],
               "repeat": int(metrics_path.parent.name.split("-rep")[1]),
               "grid": "x".join(map(str, m["grid"])), "decomposition": "x".join(map(str, m["decomposition"])),
               "cells": cells, "cells_per_rank": cells / m["ranks"], "steps": m["steps"],
               "wall_seconds": m["wall_seconds"], "gcells_per_second": m["cells_per_second"] / 1e9,
               "backend": m["backend"], "threads": m["threads"], "equation": m["equation"],
               "precision": m["precision"], "radius": m["radius"], "host": m["host"], "config_hash": m["config_hash"]}
        for phase, seconds in m["phases_seconds"].items():
            row[f"{phase}_seconds"] = seconds
        rows.append(row)
    if not rows:
        raise StudyError(f"{study['output']}/runs: no metrics.json found (run the study first)")
    return rows


def summarize(rows):
    """Per rank count: median rate over the repeats, efficiency against the smallest rank count."""
    phases = [k[:-len("_seconds")] for k in rows[0] if k.endswith("_seconds") and k != "wall_seconds"]
    points = []
    for ranks in sorted({r["ranks"] for r in rows}):
        runs = [r for r in rows if r["ranks"] == ranks]
        rates = [r["gcells_per_second"] for r in runs]
        point = {"ranks": ranks, "grid": runs[0]["grid"], "decomposition": runs[0]["decomposition"],
                 "runs": len(runs), "gcells_per_second": statistics.median(rates),
                 "gcells_min": min(rates), "gcells_max": max(rates)}
        for phase in phases:  # seconds per step, median over the repeats
            point[f"{phase}_per_step"] = statistics.median(r[f"{phase}_seconds"] / r["steps"] for r in runs)
        # The whole halo exchange (what the model predicts): pack + communicate + unpack.
        point["exchange_per_step"] = sum(point.get(f"{phase}_per_step", 0.0) for phase in ("pack", "communicate", "unpack"))
        points.append(point)
    base = points[0]
    for p in points:
        p["efficiency"] = (p["gcells_per_second"] / p["ranks"]) / (base["gcells_per_second"] / base["ranks"])
    return phases, points


def write_csv(path, rows):
    fields = list(rows[0])
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def plot(study, phases, points, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranks = [p["ranks"] for p in points]
    title = f"{study['name']} ({study['kind']} scaling)"
    base = points[0]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(ranks, [p["gcells_per_second"] for p in points],
                yerr=[[p["gcells_per_second"] - p["gcells_min"] for p in points],
                      [p["gcells_max"] - p["gcells_per_second"] for p in points]], marker="o", label="measured (median, min-max)")
    ax.plot(ranks, [base["gcells_per_second"] * r / base["ranks"] for r in ranks], "k--", label="ideal")
    ax.set(xscale="log", yscale="log", xlabel="ranks", ylabel="GCells/s", title=title)
    ax.set_xticks(ranks, [str(r) for r in ranks])
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "gcells.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ranks, [100 * p["efficiency"] for p in points], marker="o")
    ax.axhline(100, color="k", linestyle="--")
    ax.set(xscale="log", xlabel="ranks", ylabel="parallel efficiency (%)", title=title, ylim=(0, 110))
    ax.set_xticks(ranks, [str(r) for r in ranks])
    fig.tight_layout()
    fig.savefig(out / "efficiency.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    bottom = [0.0] * len(points)
    x = range(len(points))
    for phase in phases:  # stacked: where each step's time goes
        values = [1e3 * p[f"{phase}_per_step"] for p in points]
        ax.bar(x, values, bottom=bottom, label=phase)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(list(x), [str(r) for r in ranks])
    ax.set(xlabel="ranks", ylabel="ms per step (max over ranks)", title=title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "phases.png", dpi=120)
    plt.close(fig)


def markdown(study, rows, phases, points):
    first = rows[0]
    lines = [f"# {study['name']}: {study['kind']} scaling", "",
             f"{first['equation']} {first['precision']}, backend {first['backend']}, {first['threads']} thread(s) "
             f"per rank, {first['steps']} steps, {study['repeats']} repeat(s) per point (median), host {first['host']}.",
             "Efficiency: (rate/ranks) against the smallest rank count.", "",
             "| ranks | grid | ranks per axis | GCells/s (median) | min-max | efficiency | "
             + " | ".join(f"{p} ms/step" for p in phases) + " |",
             "|" + " --- |" * (6 + len(phases))]
    for p in points:
        lines.append(f"| {p['ranks']} | {p['grid']} | {p['decomposition']} | {p['gcells_per_second']:.4g} | "
                     f"{p['gcells_min']:.4g}-{p['gcells_max']:.4g} | {100 * p['efficiency']:.1f}% | "
                     + " | ".join(f"{1e3 * p[f'{ph}_per_step']:.4g}" for ph in phases) + " |")
    lines += ["", "![GCells/s](gcells.png) ![efficiency](efficiency.png) ![phases](phases.png)", ""]
    return "\n".join(lines)


def report(study):
    out = study["output"]
    rows = collect(study)
    phases, points = summarize(rows)
    write_csv(out / "runs.csv", rows)
    write_csv(out / "summary.csv", points)
    plot(study, phases, points, out)
    (out / "summary.md").write_text(markdown(study, rows, phases, points))
    print(markdown(study, rows, phases, points))
    print(f"study: {len(rows)} runs -> {out}/runs.csv, summary.csv, summary.md, gcells.png, efficiency.png, phases.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["run", "report"])
    parser.add_argument("study", help="study YAML (configs/studies/*.yaml)")
    parser.add_argument("--heatwave", default=os.environ.get("HEATWAVE", "build/heatwave"), help="heatwave binary")
    parser.add_argument("--output", help="output folder (overrides the study's)")
    args = parser.parse_args()
    try:
        study = load_study(args.study)
        if args.output:
            study["output"] = Path(args.output).resolve()
        if args.command == "run":
            heatwave = Path(args.heatwave).resolve()
            if not os.access(heatwave, os.X_OK):
                raise StudyError(f"{heatwave}: no heatwave binary there (--heatwave PATH or HEATWAVE=PATH)")
            run(study, heatwave)
            if study["launcher"] == "slurm":
                return 0
        report(study)
    except StudyError as e:
        print(f"study: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
