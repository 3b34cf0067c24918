#!/usr/bin/env bash
# Checkpoints and outputs as a batch job meets them: SIGTERM mid-run makes
# heatwave checkpoint and exit 75, `--restart latest` then reproduces the
# uninterrupted run bit for bit; damaged and incompatible checkpoints are
# refused with their exit codes; the XDMF series points at datasets that
# exist with the right shape; inspect lists a checkpoint.
set -eu
heatwave=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python=/usr/bin/python3  # the system Python has h5py and numpy

# ~2 s of work on one thread, so the signal lands mid-run.
case_yaml() {  # case_yaml CHECKPOINT_DIR
  cat <<YAML
equation: heat
grid: {points: [256, 256]}
time: {dt: auto, steps: 16000}
boundary: {default: {type: dirichlet, value: 0.5}, x_low: neumann}
initial: {type: random, seed: 3}
backend: host
threads: 1
progress: {seconds: 0.1}
metrics: {file: ""}
checkpoint: {every: 16000, keep: 2, dir: $1}
YAML
}
case_yaml straight >straight.yaml
case_yaml stopped >stopped.yaml

"$heatwave" run straight.yaml >straight.txt 2>&1

"$heatwave" run stopped.yaml >stopped.txt 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "progress:" stopped.txt && break; sleep 0.05; done
kill -TERM $pid
code=0
wait $pid || code=$?
cat stopped.txt | grep -v "^  "
[[ $code -eq 75 ]] || { echo "FAIL: SIGTERM gave exit $code, expected 75"; exit 1; }
grep -q "stop requested" stopped.txt
stopped_at=$(ls stopped | sed -n 's/checkpoint_0*\([0-9][0-9]*\)\.h5/\1/p')
echo "stopped at step $stopped_at"
[[ $(ls stopped/checkpoint_* | wc -l) -eq 1 && $stopped_at -gt 0 && $stopped_at -lt 16000 ]] || { echo "FAIL: no mid-run checkpoint"; ls stopped; exit 1; }
# The stop marker a batch script tests (a launcher may hide exit 75), naming the checkpoint.
grep -q "stopped by a signal after writing stopped/checkpoint_0*$stopped_at.h5" stopped/stopped ||
  { echo "FAIL: no stop marker naming the checkpoint"; ls stopped; exit 1; }

"$heatwave" run stopped.yaml --restart latest >restarted.txt 2>&1
grep -q "restarted from stopped/checkpoint_0*$stopped_at.h5 at step $stopped_at" restarted.txt
$python - <<'PY'
import h5py, numpy as np
a = h5py.File("straight/checkpoint_000016000.h5", "r")
b = h5py.File("stopped/checkpoint_000016000.h5", "r")
ua, ub = a["u"][...], b["u"][...]
assert ua.shape == (256, 256) and ua.dtype == np.float64, (ua.shape, ua.dtype)
assert a.attrs["step"] == b.attrs["step"] == 16000
assert a.attrs["config_hash"] == b.attrs["config_hash"]
differing = int(np.count_nonzero(ua.view(np.uint64) != ub.view(np.uint64)))
assert differing == 0, f"{differing} values differ from the uninterrupted run"
print("restart after SIGTERM: bitwise identical,", ua.size, "values")
PY

# Damaged and incompatible checkpoints: exit 17 and 16, with the file and the reason.
expect() {  # expect CODE FRAGMENT COMMAND...
  local want=$1 fragment=$2 got=0
  shift 2
  "$@" >out.txt 2>&1 || got=$?
  [[ $got -eq $want ]] && grep -qF -- "$fragment" out.txt || { echo "FAIL: '$*' gave exit $got, expected $want and '$fragment'"; cat out.txt; exit 1; }
}
cp straight/checkpoint_000016000.h5 truncated.h5
truncate -s 20000 truncated.h5
expect 17 "H5Fopen failed on truncated.h5" "$heatwave" run straight.yaml --restart truncated.h5
sed 's/\[256, 256\]/[256, 255]/' straight.yaml >other.yaml
expect 16 "'grid.points' is [256, 256] in the checkpoint but [256, 255] in the config" \
  "$heatwave" run other.yaml --restart straight/checkpoint_000016000.h5
case_yaml empty >empty.yaml
expect 3 "no complete checkpoint (checkpoint_<step>.h5) in 'empty'" "$heatwave" run empty.yaml --restart latest

"$heatwave" inspect straight/checkpoint_000016000.h5 >inspect.txt
for line in "kind = checkpoint" "step = 16000" "equation = heat" "global_shape = [256, 256]" "config_hash = " \
  "u: float64 [256, 256], chunks [" "fletcher32" "    equation: heat"; do
  grep -qF -- "$line" inspect.txt || { echo "FAIL: '$line' not in the inspect listing"; cat inspect.txt; exit 1; }
done

# Outputs: 2D heat and 3D wave, each an XDMF time series ParaView reads.
cat >heat2d.yaml <<'YAML'
equation: heat
grid: {points: [24, 16], length: [1.5, 1.0]}
time: {dt: auto, steps: 30}
initial: {type: gaussian}
output: {every: 10, dir: out2d}
metrics: {file: ""}
YAML
cat >wave3d.yaml <<'YAML'
equation: wave
precision: float32
grid: {points: [12, 10, 8]}
time: {dt: auto, steps: 20}
initial: {type: sine, modes: [1, 1, 1]}
output: {every: 5, fields: [u, u_previous], dir: out3d}
metrics: {file: ""}
YAML
"$heatwave" run heat2d.yaml >heat2d.txt 2>&1
"$heatwave" run wave3d.yaml >wave3d.txt 2>&1
$python - <<'PY'
import os, xml.etree.ElementTree as ET
import h5py, numpy as np

def check(directory, shape, spacing, fields, steps, precision):
    root = ET.parse(os.path.join(directory, "fields.xmf")).getroot()
    series = root.find("Domain/Grid")
    assert series.get("GridType") == "Collection" and series.get("CollectionType") == "Temporal"
    grids = series.findall("Grid")
    assert len(grids) == len(steps), (len(grids), steps)
    for grid, step in zip(grids, steps):
        topology = grid.find("Topology")
        assert topology.get("TopologyType") == f"{len(shape)}DCoRectMesh"
        assert [int(n) for n in topology.get("Dimensions").split()] == list(shape)
        items = grid.findall("Geometry/DataItem")
        assert [float(v) for v in items[0].text.split()] == [0.0] * len(shape)
        assert np.allclose([float(v) for v in items[1].text.split()], spacing)
        names = []
        for attribute in grid.findall("Attribute"):
            item = attribute.find("DataItem")
            file, dataset = item.text.strip().split(":")
            f = h5py.File(os.path.join(directory, file), "r")
            assert f[dataset].shape == tuple(shape), (file, dataset, f[dataset].shape)
            assert [int(n) for n in item.get("Dimensions").split()] == list(shape)
            assert int(item.get("Precision")) == precision == f[dataset].dtype.itemsize
            assert f.attrs["step"] == step
            assert abs(float(grid.find("Time").get("Value")) - f.attrs["time"]) <= 1e-12 * max(1.0, f.attrs["time"])
            names.append(attribute.get("Name"))
        assert names == fields, names
    return len(grids)

n = check("out2d", (16, 24), (1 / 15, 1.5 / 23), ["u"], [0, 10, 20, 30], 8)
n += check("out3d", (8, 10, 12), (1 / 7, 1 / 9, 1 / 11), ["u", "u_previous"], [0, 5, 10, 15, 20], 4)
print(f"XDMF: {n} time steps checked against their HDF5 datasets")
PY
echo "all checkpoint and output checks passed"
