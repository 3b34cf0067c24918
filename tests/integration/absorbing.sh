#!/usr/bin/env bash
# Absorbing faces as a user meets them: the reflection off a layer of the
# default width (24 points) is at most 5% of a Dirichlet wall's at normal
# incidence (scripts/absorbing_table.py), and the energy of a pulse in a box
# with absorbing faces never grows.
set -eu
heatwave=$(realpath "$1")
scripts=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
/usr/bin/python3 "$scripts/absorbing_table.py" "$heatwave" --widths 24 --check 0.05

cat >energy.yaml <<YAML
equation: wave
grid: {points: [161, 121], length: [1.0, 0.75]}
time: {dt: auto, steps: 600}
boundary: {default: absorbing, y_high: neumann}
initial: {type: gaussian, center: [0.5, 0.4], width: 0.05}
diagnostics: {every: 10}
progress: {seconds: 0}
metrics: {file: ""}
YAML
"$heatwave" run energy.yaml >energy.txt 2>&1
grep "info: step" energy.txt | grep -o "energy [-+0-9.e]*" | awk '{print $2}' >energies.txt
/usr/bin/python3 - <<'PY'
e = [float(x) for x in open("energies.txt")]
assert len(e) >= 60, len(e)
grows = [(i, a, b) for i, (a, b) in enumerate(zip(e, e[1:])) if b > a * (1 + 1e-12)]
assert not grows, f"the energy grows: {grows[:3]}"
assert e[-1] < 0.05 * e[0], f"the pulse did not leave the box: {e[0]} -> {e[-1]}"
print(f"energy with absorbing faces: never grows over {len(e)} diagnostics, {e[0]:.6g} -> {e[-1]:.3g}")
PY
