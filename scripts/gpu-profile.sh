#!/usr/bin/env bash
# Nsight Compute on the step kernel of a few benchmark-sized cases: what bounds
# it (DRAM, L1/L2, occupancy, stalls). Needs build-gpu/ from gpu-check.sh.
#   scripts/gpu-profile.sh OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/gpu}")
mkdir -p "$out"
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,l1tex__t_bytes.sum,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread
for spec in "heat float32 [16384, 16384]" "heat float32 [512, 512, 512]" "wave float32 [16384, 16384]" "heat float64 [512, 512, 512]"; do
  read -r eq prec grid <<<"$spec"
  name="$eq-$prec-$(echo "$grid" | tr -d '[], ' )"
  cat >/tmp/profile.yaml <<YAML
equation: $eq
precision: $prec
grid: {points: $grid}
time: {dt: auto, steps: 8}
boundary: dirichlet
initial: {type: random, seed: 9}
backend: cuda
diagnostics: {every: 0}
progress: {seconds: 0}
YAML
  echo "== $name"
  ncu --kernel-name regex:step_kernel --launch-skip 4 --launch-count 1 --metrics "$metrics" \
      build-gpu/heatwave run /tmp/profile.yaml --metrics /tmp/profile.json >"$out/ncu-$name.txt" 2>&1
  grep -E "^\s+(gpu__|dram__|lts__|l1tex__|sm__|smsp__|launch__)" "$out/ncu-$name.txt"
done
