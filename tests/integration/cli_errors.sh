#!/usr/bin/env bash
# Bad input through the command line, as a user meets it: each case must exit
# with its documented code and a message naming the file, key and value.
set -u
heatwave=$1
input=case.yaml
command=("$heatwave" run case.yaml)
source "$(dirname "${BASH_SOURCE[0]}")/expect_failure.sh"

good='equation: heat
grid: {points: [32, 24]}
time: {dt: auto, steps: 20}
boundary: dirichlet
initial: {type: sine, modes: [1, 1]}'

# 3: missing file
timeout 60 "$heatwave" run nowhere.yaml >out.txt 2>&1
code=$?
if [[ $code -eq 3 ]] && grep -qF "nowhere.yaml: cannot open" out.txt; then passed=$((passed + 1)); else
  echo "FAIL: missing file gave exit $code"; cat out.txt; failures=$((failures + 1)); fi
# 4: YAML syntax, with line and column
expect 4 'equation: heat
grid: {points: [32, 24}' "case.yaml:2:" "YAML syntax error"
# 5: unknown key, with the nearest valid one
expect 5 "${good/equation/equaton}" "case.yaml:1:1" "unknown key 'equaton'" "did you mean 'equation'"
# 6: wrong type
expect 6 "${good/\[32, 24\]/[32, many]}" "case.yaml:2:" "'grid.points[1]' expects an integer, got 'many'"
# 7: negative / zero sizes
expect 7 "${good/\[32, 24\]/[32, -8]}" "'grid.points'" "-8 points on axis y" "must be > 0"
expect 7 "${good/\[32, 24\]/[0, 24]}" "0 points on axis x"
# 8: grid too small for the stencil
expect 8 "${good/\[32, 24\]/[32, 2]}" "2 points on axis y, too few for stencil radius 1"
# 9: periodic on one face only
expect 9 "${good/boundary: dirichlet/boundary: {y_high: periodic\}}" "'boundary.y_high' is periodic" "'boundary.y_low' is dirichlet"
# 10: dt past the stability limit, with the limit
expect 10 "${good/dt: auto/dt: 0.01}" "'time.dt' = 0.01 is past the stability limit" "requires dt <= 0.000"
# 11: t_end not reached by whole explicit steps: refused, with the fixes
expect 11 "${good/dt: auto, steps: 20/dt: 3e-5, t_end: 1e-4}" "'time.t_end' = 0.0001 is not a whole number of steps" "steps: 4"
# 12: NaN/Inf mid-run: float32 overflow of a field near FLT_MAX (a blow-up a user can cause)
expect 12 'equation: wave
precision: float32
grid: {points: [32, 32]}
time: {dt: auto, steps: 100}
initial: {type: gaussian, amplitude: 3.0e38, width: 0.1}
diagnostics: {every: 10}' "non-finite values (NaN/Inf) in u at step 10" "the last finite state was at step 0"
# Media and sources: a missing file (resolved beside the config), layers out
# of order, a point outside the domain, an unknown time function; none of
# them writes anything (the output folder is never made).
media="$good
output: {every: 5, dir: media-out}"
expect 3 "$media
material: {alpha: {type: file, path: alpha.h5}}" "'material.alpha.path' = alpha.h5: no such file"
expect 7 "$media
material: {alpha: {type: layers, axis: y, interfaces: [0.6, 0.2], values: [1, 2, 3]}}" \
  "'material.alpha.interfaces'" "must increase: 0.2 at position 1 follows 0.6"
expect 7 "$media
sources: [{type: point, position: [0.5, 1.5]}]" "'sources[0].position'" "outside the domain: y = 1.5"
expect 7 "$media
sources: [{type: gaussian, time: {type: chirp}}]" "'sources[0].time.type' = 'chirp' is not one of" "ricker"
if [[ -e media-out ]]; then echo "FAIL: a refused media config wrote media-out/"; failures=$((failures + 1)); else
  passed=$((passed + 1)); fi
# Receivers: every 0, a point outside the domain, a line without a count, an unknown key; nothing written.
expect 7 "$good
receivers: {every: 0, file: bad-receivers.h5, points: [[0.5, 0.5]]}" "'receivers.every'" "must be >= 1 step"
expect 7 "$good
receivers: {file: bad-receivers.h5, points: [[0.5, 0.5], [0.2, 1.4]]}" "'receivers.points[1]'" \
  "outside the domain: y = 1.4 is not in [0, 1]"
expect 7 "$good
receivers: {file: bad-receivers.h5, lines: [{from: [0, 0.5], to: [1, 0.5]}]}" "'receivers.lines[0].count' is required"
expect 5 "$good
receivers: {file: bad-receivers.h5, point: [[0.5, 0.5]]}" "unknown key 'receivers.point'" "did you mean 'points'"
expect 7 "$good
receivers: {file: bad-receivers.h5, field: v, points: [[0.5, 0.5]]}" "'receivers.field'" "not a field of the heat equation"
# Absorbing faces: on a heat run, wider than a third of the axis, opposite a periodic face, with a value.
expect 7 "${good/boundary: dirichlet/boundary: {default: dirichlet, x_high: absorbing\}}" "'boundary.x_high' is absorbing" \
  "the heat equation has no waves to absorb"
wave="${good/equation: heat/equation: wave}"
expect 7 "${wave/boundary: dirichlet/boundary: {default: dirichlet, y_low: {type: absorbing, width: 9\}\}}" \
  "'boundary.y_low' has an absorbing layer 9 points wide, more than a third of the 24 points along y; write {type: absorbing, width: N} with N at most 8"
expect 7 "${wave/boundary: dirichlet/boundary: {default: dirichlet, x_high: absorbing\}}" \
  "'boundary.x_high' has an absorbing layer 24 points wide (the default width), more than a third of the 32 points along x; write {type: absorbing, width: N} with N at most 10"
expect 9 "${wave/boundary: dirichlet/boundary: {x_low: periodic, x_high: absorbing\}}" \
  "'boundary.x_low' is periodic but 'boundary.x_high' is absorbing"
expect 7 "${wave/boundary: dirichlet/boundary: {x_low: {type: absorbing, value: 1\}\}}" \
  "'boundary.x_low.value' = 1 has no meaning on an absorbing face"
if [[ -e bad-receivers.h5 ]]; then echo "FAIL: a refused receivers config wrote its file"; failures=$((failures + 1)); else
  passed=$((passed + 1)); fi
# 7: a cluster plan of a 3D family the build leaves out (heatwave info lists those built)
three_d='equation: heat
grid: {points: [32, 24, 16]}
time: {dt: auto, steps: 4}
initial: {type: random}'
built=$(timeout 60 "$heatwave" info 2>/dev/null | grep "^cluster kernels:")
if [[ $built != *"3D deep"* ]]; then
  expect 7 "$three_d
cluster: {mode: deep, tile: [64, 32], k: 5}" "'cluster.mode' = deep needs the deep family's kernels, which this build leaves out" \
    "configure with -DHEATWAVE_CLUSTER_3D_DEEP=ON"
fi
if [[ $built != *"3D DSMEM clusters"* ]]; then
  expect 7 "$three_d
cluster: {shape: [2, 2]}" "'cluster.shape'" "configure with -DHEATWAVE_CLUSTER_3D_DSMEM=ON"
fi
# 2: usage
timeout 60 "$heatwave" run case.yaml --threads -3 >out.txt 2>&1
code=$?
if [[ $code -eq 2 ]]; then passed=$((passed + 1)); else echo "FAIL: bad option gave exit $code"; failures=$((failures + 1)); fi

report
