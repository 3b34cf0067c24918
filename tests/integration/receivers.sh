#!/usr/bin/env bash
# Receivers as a user runs them: traces in the HDF5 file with one sample
# every `every` steps from step 0, the CSV export, the same traces bitwise on
# 1 and 3 ranks, and a run stopped by SIGTERM and restarted (on 1 rank, and
# on 2 ranks) leaving the uninterrupted run's file bit for bit: no sample
# lost or repeated.
set -eu
heatwave=$1
source_dir=$(realpath "$(dirname "$0")/../..")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python=/usr/bin/python3  # the system Python has h5py and numpy
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun --oversubscribe -n)

# A layered medium, a Ricker point source, receivers off the grid points
# (points and a line); ~2 s on one thread, so a signal lands mid-run.
case_yaml() {  # case_yaml NAME
  cat <<YAML
equation: wave
grid: {points: [241, 193], length: [1.25, 1.0]}
time: {dt: auto, steps: 3000}
boundary: neumann
initial: {type: constant, value: 0}
material: {c: {type: layers, axis: y, interfaces: [0.6], values: [1.0, 0.6]}}
sources: [{type: point, position: [0.61, 0.33], amplitude: 1.0, time: {type: ricker, frequency: 12}}]
receivers:
  every: 3
  file: $1.h5
  points: [[0.3, 0.31], [1.1, 0.77]]
  lines: [{from: [0.05, 0.95], to: [1.2, 0.95], count: 12}]
backend: host
threads: 1
progress: {seconds: 0.1}
metrics: {file: ""}
checkpoint: {every: 3000, keep: 2, dir: $1-checkpoints}
YAML
}
for name in straight ranks3 stopped stopped2 rerun; do case_yaml $name >$name.yaml; done
sed -i 's/checkpoint: {every: 3000/checkpoint: {every: 900/' rerun.yaml

"$heatwave" run straight.yaml >straight.txt 2>&1
"$heatwave" traces straight.h5 | tee summary.txt
grep -q "straight.h5: 14 receivers (field u), 1001 samples, steps 0 to 3000" summary.txt
"$heatwave" traces straight.h5 --csv >straight.csv
[[ $(wc -l <straight.csv) -eq 1002 ]] || { echo "FAIL: CSV rows"; exit 1; }
head -1 straight.csv | grep -q "^step,time,r0(0.3 0.31),r1(1.1 0.77),r2(0.05 0.95)"
"$heatwave" traces straight.h5 -o straight2.csv && cmp straight.csv straight2.csv

"${mpirun[@]}" 3 "$heatwave" run ranks3.yaml >ranks3.txt 2>&1

# Stopped mid-run, restarted on 1 rank (stopped) and on 2 ranks (stopped2).
for name in stopped stopped2; do
  "$heatwave" run $name.yaml >$name.txt 2>&1 &
  pid=$!
  for _ in $(seq 200); do grep -q "progress:" $name.txt && break; sleep 0.05; done
  kill -TERM $pid
  code=0
  wait $pid || code=$?
  [[ $code -eq 75 ]] || { echo "FAIL: SIGTERM gave exit $code"; cat $name.txt; exit 1; }
  grep -o "stopped at step [0-9]*" $name.txt
done
"$heatwave" run stopped.yaml --restart latest >restarted.txt 2>&1
grep -q "receivers: stopped.h5 keeps its [0-9]* samples up to step" restarted.txt
"${mpirun[@]}" 2 "$heatwave" run stopped2.yaml --restart latest >restarted2.txt 2>&1

# A finished run restarted from an older checkpoint (step 2700): the samples
# after it are dropped from the file and written again, once.
"$heatwave" run rerun.yaml >rerun.txt 2>&1
"$heatwave" run rerun.yaml --restart rerun-checkpoints/checkpoint_000002700.h5 >rerun2.txt 2>&1
grep -q "receivers: rerun.h5 keeps its 901 samples up to step 2700" rerun2.txt

SCRIPTS="$source_dir/scripts" $python - <<'PY'
import os, sys, numpy as np
sys.path.insert(0, os.environ["SCRIPTS"])
import heatwave_traces
def load(name):
    t = heatwave_traces.read(name + ".h5")
    return {"traces": t.traces, "time": t.time, "step": t.step, "positions": t.positions}
a = load("straight")
assert a["traces"].shape == (14, 1001), a["traces"].shape
assert (a["step"] == np.arange(0, 3001, 3)).all()
assert np.abs(a["traces"]).max() > 0, "the pulse never reached a receiver"
for other in ("ranks3", "stopped", "stopped2", "rerun"):
    b = load(other)
    for k in a:
        assert a[k].shape == b[k].shape and (a[k] == b[k]).all(), f"{other}: {k} differs from the uninterrupted run"
print("receivers: 14 traces x 1001 samples, bitwise equal on 3 ranks, after SIGTERM + restart on 1 and 2 ranks,")
print("and after a restart from an older checkpoint")
PY
