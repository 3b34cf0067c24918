#!/usr/bin/env bash
# Weak and strong scaling points on the GPUs of one machine (issue 8's cases):
# 2D heat fp32 16384^2 per GPU and 3D heat fp32 512^3 per GPU (weak), 2D heat
# fp32 32768^2 (strong), on 1..N GPUs (one rank per GPU). Each run's metrics
# JSON lands in OUT_DIR for jobs/study.py or docs/scaling.md.
#   scripts/scaling-gpu.sh BUILD_DIR OUT_DIR [MAX_GPUS]
# HEATWAVE_HALO_TRANSPORT picks parallel.halo_transport (default auto: nccl
# where the build has it); give each transport its own OUT_DIR.
set -uo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
max=${3:-$(nvidia-smi -L | wc -l)}
mkdir -p "$out"
transport=${HEATWAVE_HALO_TRANSPORT:-auto}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
work=$(mktemp -d)
cd "$work"
run() {  # run NAME RANKS POINTS STEPS [DECOMPOSITION]
  local name=$1 ranks=$2 points=$3 steps=$4 decomposition=${5:-}
  printf 'equation: heat\nprecision: float32\ngrid: {points: %s}\ntime: {dt: auto, steps: %s}\nboundary: dirichlet\ninitial: {type: random, seed: 1}\nbackend: cuda\nparallel: {overlap: true, halo_transport: %s%s}\ndiagnostics: {every: 0}\nprogress: {seconds: 0}\nmetrics: {file: %s/%s_n%s.json}\n' \
    "$points" "$steps" "$transport" "${decomposition:+, decomposition: $decomposition}" "$out" "$name" "$ranks" >"$name.yaml"
  timeout 300 mpirun -n "$ranks" "$build/heatwave" run "$name.yaml" >"$out/${name}_n$ranks.log" 2>&1 || echo "FAIL: $name on $ranks"
  grep -E "halo exchange|done:" "$out/${name}_n$ranks.log" | sed "s/^.*info[^:]*: /$name n=$ranks: /"
}
for ((n = 1; n <= max; n *= 2)); do
  run weak2d "$n" "[16384, $((16384 * n))]" 400 "[1, $n]"
  run weak3d "$n" "[512, 512, $((512 * n))]" 200 "[1, 1, $n]"
  run strong2d "$n" "[32768, 32768]" 200 "[1, $n]"
done
