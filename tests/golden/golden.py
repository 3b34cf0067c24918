#!/usr/bin/python3
"""The golden test: SHA-256 of the final fields of a fixed set of cases.

A refactor changes no answer. Each case (2D/3D x heat/wave x float32/float64 x
radius 1 to 4, mixed boundary faces, seeded random fields, which every backend
computes bit for bit alike) runs as a user runs it, `heatwave run` (under
mpirun for 3 ranks), and checkpoints its last step; the hash covers every
level the checkpoint holds (u, and u_previous for the wave), in the global
x-fastest order, so it does not depend on the decomposition or the backend.

  golden.py check  HEATWAVE [--backend B] [--mpiexec MPIEXEC] [--cases PATTERN]
  golden.py record HEATWAVE          # rewrites final_fields.json (host backend)

With --backend cuda-cluster every case runs a fixed cluster plan (--plan-2d,
--plan-3d: clusters of 2 blocks, temporal blocking of 3 and 2 steps), so that
the cluster kernels compute the hashes: on grids this small the autotune would
pick the baseline kernel.

check exits 0 when every hash matches the recorded one, 1 otherwise.
"""
import argparse
import fnmatch
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "final_fields.json")

# Two mixed face sets per dimension: non-zero Dirichlet and Neumann values,
# and a periodic axis.
BOUNDARIES = {
    2: [
        "{default: {type: dirichlet, value: 0.25}, x_low: {type: neumann, value: -0.5}, y_high: {type: neumann, value: 1.0}}",
        "{default: periodic, y_low: {type: dirichlet, value: 1.0}, y_high: {type: neumann, value: 0.0}}",
    ],
    3: [
        "{default: {type: dirichlet, value: -0.5}, y_low: {type: neumann, value: 0.75}, z_high: {type: neumann, value: 0.0}}",
        "{default: {type: neumann, value: 0.5}, x_low: periodic, x_high: periodic, z_low: {type: dirichlet, value: 1.0}}",
    ],
}
GRIDS = {2: "[45, 38]", 3: "[21, 17, 19]"}
STEPS = 37  # odd: chunks and temporal-blocking launches leave remainders
# Three ranks split the slowest axis or the first, with deep halos on some.
DECOMPOSITIONS = {2: ["[3, 1]", "[1, 3]"], 3: ["[3, 1, 1]", "[1, 1, 3]"]}


def cases():
    """(name, yaml, ranks) for every case, 1 and 3 ranks."""
    out = []
    # Radius 1 and 2 (the cases recorded first, numbered as they always
    # were), then radius 3 and 4 numbered on from there. At radius 3 and 4 a
    # rank's 7 (3D) or 12 (2D) owned points hold halos of 1 and 2 steps.
    index = 0
    for radii in ((1, 2), (3, 4)):
        for dims in (2, 3):
            for equation in ("heat", "wave"):
                for precision in ("float32", "float64"):
                    for radius in radii:
                        out += case_pair(dims, equation, precision, radius, index)
                        index += 1
    return out


def case_pair(dims, equation, precision, radius, index):
    """The case on 1 rank and on 3."""
    out = []
    boundary = BOUNDARIES[dims][index % 2]
    base = f"{equation}-{dims}d-{precision}-r{radius}"
    velocity = "velocity: {type: random, seed: %d, amplitude: 0.5}\n" % (100 + index) if equation == "wave" else ""
    deepest = 3 if radius <= 2 else (1 if dims == 3 else 2)  # halo steps
    for ranks in (1, 3):
        decomposition = DECOMPOSITIONS[dims][index % 2] if ranks == 3 else ("[1, 1]" if dims == 2 else "[1, 1, 1]")
        exchange_every = 1 + index % deepest if ranks == 3 else 1
        yaml = (
            f"equation: {equation}\nprecision: {precision}\n"
            f"grid: {{points: {GRIDS[dims]}, length: {'[1.0, 0.8]' if dims == 2 else '[1.0, 0.8, 0.7]'}}}\n"
            f"stencil: {{radius: {radius}}}\n"
            f"time: {{dt: auto, safety: 0.8, steps: {STEPS}}}\n"
            f"boundary: {boundary}\n"
            f"initial: {{type: random, seed: {index + 1}, amplitude: 1.0}}\n"
            f"{velocity}"
            f"parallel: {{decomposition: {decomposition}, exchange_every: {exchange_every}}}\n"
            f"diagnostics: {{every: 0}}\nprogress: {{seconds: 0}}\n"
        )
        out.append((f"{base}-{ranks}rank", yaml, ranks))
    return out


def field_hash(path):
    """SHA-256 over u (and u_previous) in the file's global order."""
    h = hashlib.sha256()
    with h5py.File(path, "r") as f:
        for name in ("u", "u_previous"):
            if name in f:
                data = f[name][...]
                h.update(name.encode())
                h.update(data.dtype.str.encode())
                h.update(data.tobytes(order="C"))
    return h.hexdigest()


def run_case(heatwave, name, yaml, ranks, backend, mpiexec, work, plans):
    case_dir = os.path.join(work, name)
    os.makedirs(case_dir)
    config = os.path.join(case_dir, "case.yaml")
    with open(config, "w") as f:
        f.write(yaml)
        f.write(f"checkpoint: {{every: {STEPS}, keep: 1, dir: {case_dir}/checkpoints}}\n")
        f.write(f"metrics: {{file: {case_dir}/metrics.json}}\n")
    command = [heatwave, "run", config, "--backend", backend]
    if ranks > 1:
        command = [mpiexec, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks)] + command
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if backend == "cuda-cluster":
        env["HEATWAVE_CLUSTER_PLAN"] = plans[2 if "-2d-" in name else 3]
    result = subprocess.run(command, cwd=case_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-3000:])
        raise RuntimeError(f"{name}: heatwave exited {result.returncode}")
    return field_hash(os.path.join(case_dir, "checkpoints", f"checkpoint_{STEPS:09d}.h5"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["check", "record"])
    parser.add_argument("heatwave")
    parser.add_argument("--backend", default="host")
    parser.add_argument("--mpiexec", default="mpirun")
    parser.add_argument("--cases", default="*", help="only cases whose name matches this glob")
    parser.add_argument("--plan-2d", default="1,2,16,8,0,3,2", help="cuda-cluster plan of the 2D cases")
    parser.add_argument("--plan-3d", default="2,1,8,8,8,2,1", help="cuda-cluster plan of the 3D cases")
    args = parser.parse_args()
    args.heatwave = os.path.abspath(args.heatwave)

    golden = {} if args.mode == "record" else json.load(open(GOLDEN))["hashes"]
    chosen = [c for c in cases() if fnmatch.fnmatch(c[0], args.cases)]
    if not chosen:
        print(f"no case matches '{args.cases}'")
        return 1
    passed = failed = 0
    hashes = {}
    with tempfile.TemporaryDirectory() as work:
        for name, yaml, ranks in chosen:
            digest = run_case(args.heatwave, name, yaml, ranks, args.backend, args.mpiexec, work,
                              {2: args.plan_2d, 3: args.plan_3d})
            hashes[name] = digest
            if args.mode == "check":
                if golden.get(name) == digest:
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL {name} ({args.backend}): {digest} != recorded {golden.get(name)}")
    if args.mode == "record":
        # One answer per case, whatever the rank count: say so before recording it.
        for name, digest in hashes.items():
            if name.endswith("-3rank") and hashes[name.replace("-3rank", "-1rank")] != digest:
                print(f"{name}: 3 ranks differ from 1 rank; not recording")
                return 1
        with open(GOLDEN, "w") as f:
            json.dump({"about": "SHA-256 of the final fields of tests/golden/golden.py's cases "
                                "(u, and u_previous for the wave, after %d steps)" % STEPS,
                       "hashes": hashes}, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"recorded {len(hashes)} hashes in {GOLDEN}")
        return 0
    print(f"{passed} passed, {failed} failed ({args.backend} backend)")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
