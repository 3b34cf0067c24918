#!/usr/bin/env bash
# Nsight Compute on the step kernels of a few benchmark-sized cases: what bounds
# them (DRAM, shared memory, issue, stalls). Needs build-gpu/ from gpu-check.sh.
#   scripts/gpu-profile.sh OUT_DIR [cuda|cuda-cluster|shot]  (shot: HEATWAVE_BUILD picks the build, build-gpu by default)
# cuda: the baseline step kernel, a few metrics; cuda-cluster: the cluster
# kernel with ncu's speed-of-light, warp-state, scheduler and memory sections
# (HEATWAVE_PROFILE_CASES="heat float32 [16384, 16384];..." picks the cases);
# shot: the seismic shot (gpu-shot.sh's, 801 x 801 x 401) and its plain grid
# on the cluster plans of HEATWAVE_PROFILE_PLANS, timed over 200 steps, and
# one launch of each on the first plan under ncu, with source counters.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/gpu}")
backend=${2:-cuda}
mkdir -p "$out"
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,l1tex__t_bytes.sum,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread
if [[ $backend == shot ]]; then
  source scripts/gpu-env.sh
  work=/tmp/profile-shot && rm -rf $work && mkdir -p $work
  shot_configs $work 200
  plans=(${HEATWAVE_PROFILE_PLANS:-1,1,56,24,64,4,1})
  for plan in "${plans[@]}"; do
    for name in shot plain; do
      (cd $work && HEATWAVE_CLUSTER_PLAN=$plan "$OLDPWD/${HEATWAVE_BUILD:-build-gpu}/heatwave" run $name.yaml --backend cuda-cluster \
        --overwrite --metrics $name.json >$name.log 2>&1) || { tail -5 $work/$name.log; continue; }
      python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(f'{sys.argv[2]} {sys.argv[3]}: {m[\"backend\"]} {m[\"cells_per_second\"]/1e9:.1f} Gcells/s')" \
        $work/$name.json $name $plan | tee -a "$out/summary.txt"
    done
  done
  for name in shot plain; do
    (cd $work && sed -i 's/steps: 200/steps: 12/' $name.yaml &&
      HEATWAVE_CLUSTER_PLAN=${plans[0]} ncu --kernel-name regex:cluster_kernel --launch-skip 1 --launch-count 1 \
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
        --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section InstructionStats \
        --section SourceCounters --import-source no "$OLDPWD/${HEATWAVE_BUILD:-build-gpu}/heatwave" run $name.yaml --backend cuda-cluster \
        --overwrite) >"$out/ncu-$name.txt" 2>&1
    echo "== ncu $name ${plans[0]}" >>"$out/summary.txt"
    grep -E "Duration|Registers|Throughput|Issue Slots|Eligible|No Eligible|Active Warps|Stall|Local|Executed Ipc|Warp Cycles" \
      "$out/ncu-$name.txt" | head -40 >>"$out/summary.txt"
  done
  exit 0
fi
if [[ $backend == cuda ]]; then
  select=(--kernel-name regex:step_kernel --metrics "$metrics")
  cases=("heat float32 [16384, 16384]" "heat float32 [512, 512, 512]" "wave float32 [16384, 16384]" "heat float64 [512, 512, 512]")
else
  select=(--kernel-name regex:cluster_kernel --section SpeedOfLight --section WarpStateStats --section SchedulerStats
          --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis)
  IFS=';' read -ra cases <<<"${HEATWAVE_PROFILE_CASES:-heat float32 [16384, 16384];wave float32 [16384, 16384]}"
fi
for spec in "${cases[@]}"; do
  read -r eq prec grid <<<"$spec"
  name="$backend-$eq-$prec-$(echo "$grid" | tr -d '[], ' )"
  cat >/tmp/profile.yaml <<YAML
equation: $eq
precision: $prec
grid: {points: $grid}
time: {dt: auto, steps: 32}
boundary: dirichlet
initial: {type: random, seed: 9}
backend: $backend
diagnostics: {every: 0}
progress: {seconds: 0}
YAML
  echo "== $name"
  ncu "${select[@]}" --launch-skip 2 --launch-count 1 build-gpu/heatwave run /tmp/profile.yaml --metrics /tmp/profile.json \
      >"$out/ncu-$name.txt" 2>&1
  grep -E "^\s+(gpu__|dram__|lts__|l1tex__|sm__|smsp__|launch__)|Throughput|Duration|Issue|Stall|Warp Cycles|Eligible|Active Warps|Bank|Executed Ipc|Registers|Shared Memory|Achieved|Theoretical Occ|Block Limit" "$out/ncu-$name.txt" | head -60
done
