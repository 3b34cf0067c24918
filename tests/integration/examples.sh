#!/usr/bin/env bash
# Every shipped example case runs to completion without NaN and conserves what
# it should: the periodic heat example its mean, the wave example its energy.
set -eu
heatwave=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
passed=0
for f in "$source"/configs/examples/*.yaml; do
  name=$(basename "$f" .yaml)
  if [[ $name == seismic3d ]]; then  # at a quarter of the resolution here: the full run is for a GPU
    sed 's/points: \[401, 401, 201\]/points: [101, 101, 51]/; s/width: 24/width: 6/; s/output: {every: 700/output: {every: 175/' \
      "$f" >seismic3d.yaml
    f=seismic3d.yaml
  fi
  if [[ $name == seismic2d ]]; then  # a quarter of the resolution (20 m): 1001 x 501, 1179 steps, about 2 s
    sed 's/points: \[4001, 2001\]/points: [1001, 501]/; s/width: 24/width: 6/' "$f" >seismic2d.yaml
    f=seismic2d.yaml
  fi
  "$heatwave" run "$f" --metrics "$name.json" >"$name.txt" 2>&1 || { echo "FAIL: $name exited $?"; tail "$name.txt"; exit 1; }
  passed=$((passed + 1))
done
SCRIPTS="$source/scripts" /usr/bin/python3 - <<'PY'
import json
heat = json.load(open("heat_periodic.json"))
assert abs(heat["final"]["mean"] - heat["initial"]["mean"]) < 1e-14, heat["final"]
assert heat["final"]["max"] < 0.5 * heat["initial"]["max"]
# The wave's energy from its first diagnostic (step 10) to its last (step 53):
# conserved to rounding, while the field itself swings.
wave = json.load(open("wave3d.json"))
first, final = wave["first_energy"], wave["final"]
assert final["non_finite"] == 0 and final["step"] == wave["steps"], final
assert first["step"] <= 10 and final["step"] - first["step"] >= 40, (first["step"], final["step"])
change = abs(final["energy"] - first["energy"]) / first["energy"]
assert change < 1e-12, f"wave energy changed by {change:.3e}"
assert final["l2"] < 0.9 * wave["initial"]["l2"]  # it moved: the mode's amplitude swings
# Two materials over a hot chip: the mean rises by t times the source's
# integral over the area (half a Gaussian on the insulated bottom face:
# pi width^2 amplitude), less the little that has reached the cooled top by
# t = 2 s (0.06%), and the outputs are there.
import math, os
chip = json.load(open("heat_two_materials.json"))
rise = chip["final"]["mean"] - chip["initial"]["mean"]
expected = 2.0 * math.pi * 0.002**2 * 500.0 / (0.1 * 0.04)
assert 0.99 * expected < rise <= expected * (1 + 1e-9), (rise, expected)
assert chip["final"]["max"] > 400 and chip["final"]["min"] == 293.0, chip["final"]
assert os.path.exists("output/two_materials/fields.xmf")
# The shot: 91 traces every 2 steps, each setting off where the direct or
# head wave of the layer model arrives (the Ricker pulse's onset, ~0.05 s
# before its peak), and the gather plot draws.
import sys, numpy as np, subprocess
sys.path.insert(0, os.environ["SCRIPTS"])
from plot_traces import first_arrival
import heatwave_traces
def check_shot(path, samples, far):
    """91 traces of `samples` samples, each at 0.3 to `far` km of offset
    setting off where the layer model's first arrival says."""
    shot = heatwave_traces.read(path)
    traces, time, positions = shot.traces, shot.time, shot.positions
    assert traces.shape == (91, samples) and np.isfinite(traces).all(), (path, traces.shape)
    for i in range(91):
        x = positions[i, 0] - 1.0
        if not 0.3 <= abs(x) <= far:
            continue
        a = np.abs(traces[i])
        onset = time[np.argmax(a > 0.05 * a.max())]
        expected = first_arrival(abs(x), 0.95, 1.0, [0.5, 0.85], [3.0, 2.2, 1.5]) + 1 / 15
        assert -0.08 < onset - expected < 0.01, (path, x, onset, expected)
check_shot("seismic3d-receivers.h5", 174, 1.0)
# The same shot at eighth order (10 m, full size): the receivers past 0.85 km
# lie in the absorbing layers' 120 m, whose damping delays the onset.
check_shot("seismic3d-r4-receivers.h5", 443, 0.85)
drawn = subprocess.run(["/usr/bin/python3", os.environ["SCRIPTS"] + "/plot_traces.py", "seismic3d-receivers.h5",
                        "gather.png"], check=True, capture_output=True, text=True)
assert os.path.getsize("gather.png") > 10000
assert "no first arrival" not in drawn.stdout, drawn.stdout  # the model comes from the file's own config
assert os.path.exists("output/seismic3d/fields.xmf")
# The 2D line: 91 traces every 2 steps to t = 5 s. Where the direct wave
# arrives first (offsets under the crossover at 2.18 km) it sets off where
# the top layer's speed says; at every offset, nothing above 5% of the
# trace's peak arrives before the layer model allows (the head waves are
# weaker than that: beyond the crossover the pick is a later, stronger
# event, at the latest the direct wave, within 0.05 s: at 20 m spacing, 5
# points a wavelength at 15 Hz in the top layer, the grid spreads the pulse).
line = heatwave_traces.read("seismic2d-receivers.h5")
assert line.traces.shape == (91, 590) and np.isfinite(line.traces).all(), line.traces.shape
layers = ([7.5, 9.5], [3.0, 2.2, 1.5])
for i in range(91):
    x = abs(line.positions[i, 0] - 10.0)
    a = np.abs(line.traces[i])
    onset = line.time[np.argmax(a > 0.05 * a.max())]
    expected = first_arrival(x, 9.95, 10.0, *layers) + 1 / 15
    direct = math.hypot(x, 0.05) / 1.5 + 1 / 15
    assert onset - expected > -0.08, (x, onset, expected)
    assert onset <= direct + 0.05, (x, onset, direct)
    if x < 2.1:
        assert onset - expected < 0.01, (x, onset, expected)
PY
echo "$passed passed, 0 failed"
