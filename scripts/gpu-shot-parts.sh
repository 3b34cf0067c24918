#!/usr/bin/env bash
# The seismic shot's cost on cuda-cluster feature by feature, on one fixed
# plan: its grid (801 x 801 x 401, random start) plain, then with layered c,
# absorbing faces (z only, y and z, all five), the source and the receivers
# added in turn. Each case: the loop's Gcells/s over 200 steps, and one
# launch under ncu (duration, instructions, FP64 operations).
#   scripts/gpu-shot-parts.sh OUT_DIR [BUILD_DIR] [PLAN]
set -uo pipefail
out=$(realpath -m "$1"); build=$(realpath ${2:-build-gpu}); plan=${3:-1,1,56,24,64,4,1}
mkdir -p $out; work=/tmp/decomp; rm -rf $work; mkdir -p $work; cd $work
base() { cat <<Y
equation: wave
precision: float32
grid: {points: [801, 801, 401], length: [2.0, 2.0, 1.0]}
time: {dt: auto, steps: 200}
initial: {type: random, seed: 3}
diagnostics: {every: 200}
Y
}
layers='material: {c: {type: layers, axis: z, interfaces: [0.5, 0.85], values: [3.0, 2.2, 1.5]}}'
const='c: 3.0'
absorb='boundary: {default: {type: absorbing, width: 24}, z_high: {type: neumann, value: 0.0}}'
dir='boundary: {default: {type: dirichlet, value: 0.0}}'
src='sources: [{type: point, position: [1.0, 1.0, 0.95], amplitude: 1.0, time: {type: ricker, frequency: 15.0}}]'
rec='receivers: {every: 2, file: r.h5, lines: [{from: [0.1, 1.0, 1.0], to: [1.9, 1.0, 1.0], count: 91}]}'
zonly='boundary: {default: {type: dirichlet, value: 0.0}, z_low: {type: absorbing, width: 24}}'
yz='boundary: {default: {type: dirichlet, value: 0.0}, z_low: {type: absorbing, width: 24}, y_low: {type: absorbing, width: 24}, y_high: {type: absorbing, width: 24}}'
declare -A cases=(
 [1plain]="$const
$dir"
 [2layers]="$layers
$dir"
 [3absorb-z]="$const
$zonly"
 [4absorb-yz]="$const
$yz"
 [5absorb]="$const
$absorb"
 [6layers-absorb]="$layers
$absorb"
 [7+src]="$layers
$absorb
$src"
 [8+rec]="$layers
$absorb
$src
$rec")
for name in $(printf '%s\n' "${!cases[@]}" | sort); do
  { base; echo "${cases[$name]}"; } > $name.yaml
  HEATWAVE_CLUSTER_PLAN=$plan $build/heatwave run $name.yaml --backend cuda-cluster --overwrite --metrics $name.json > $name.log 2>&1 || { echo "$name FAILED"; tail -3 $name.log; continue; }
  sed -i 's/steps: 200/steps: 8/' $name.yaml
  HEATWAVE_CLUSTER_PLAN=$plan ncu --kernel-name regex:cluster_kernel --launch-skip 1 --launch-count 1 --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum $build/heatwave run $name.yaml --backend cuda-cluster --overwrite > $name.ncu 2>&1
  python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(f'{sys.argv[2]:16s} {m[\"cells_per_second\"]/1e9:6.1f} Gcells/s', end='  ')" $name.json $name
  grep -E "gpu__time|smsp__inst_exec|thread_inst_exec|op_d" $name.ncu | awk '{printf "%s=%s ", $1, $3}' | sed 's/smsp__sass_thread_inst_executed_op_//g; s/_pred_on.sum//g; s/gpu__time_duration.sum/ms/; s/smsp__inst_executed.sum/inst/; s/smsp__thread_inst_executed.sum/thread_inst/'; echo
done | tee $out/decompose.txt
