#!/usr/bin/env bash
# The cuda backend's one-step kernel (issue 72), in one device call, by
# steps (HEATWAVE_ONESTEP_STEPS, default: build tests bench handwritten):
#   build        build-gpu (heatwave, heatwave_gpu_tests) and, with
#                HEATWAVE_ONESTEP_OLD=DIR (another commit's sources, e.g.
#                `git archive` into .carry/old), build-old (heatwave only)
#   tests        GpuBitwise.* (the cuda backend bitwise the host's) and the
#                golden final-field hashes on cuda and cuda-cluster
#   pdl          the same with HEATWAVE_CUDA_PDL=on (the hashes on cuda-cluster too)
#   bench        each file of HEATWAVE_ONESTEP_BENCHES (default
#                bench/onestep-3d.yaml; a file named twice runs twice),
#                build-old's rows first where it was built (the A/B of two
#                commits in one call), then this build's at the built-in
#                launch shape
#   shapes       HEATWAVE_ONESTEP_SHAPES_BENCH (default the first bench file)
#                at each setting of HEATWAVE_ONESTEP_SHAPES: "launch=bx,by,
#                chunk,prefetch" (HEATWAVE_CUDA_LAUNCH), "planes=chunk" or
#                "planes=off" (HEATWAVE_CUDA_PLANES), "pdl=on" or "pdl=off"
#                (HEATWAVE_CUDA_PDL: programmatic dependent launches),
#                "fill=all" or "fill=step-reads" (HEATWAVE_CUDA_FILL)
#   handwritten  bench/handwritten_shot.cu (built here with nvcc) at r 1, 4
#   profile      ncu (one launch after a skipped one): the heat fp32 r 1
#                512^3 and the seismic shot on --backend cuda, and the
#                other kernels of their steps (ghost fill, sources, gather)
# The golden step reads HDF5 with h5py: carry .whl (scripts/gpu-env.sh).
#   scripts/gpu-onestep.sh OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/onestep}")
steps=${HEATWAVE_ONESTEP_STEPS:-build tests bench handwritten}
benches=${HEATWAVE_ONESTEP_BENCHES:-bench/onestep-3d.yaml}
mkdir -p "$out"
source scripts/gpu-env.sh
status=0
rows() {  # JSON LABEL -> one line a case
  python3 - "$1" "$2" <<'PY' | tee -a "$out/summary.txt"
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    print(f"{sys.argv[2]:14} {c['equation']:5} {c['precision']} r{c['radius']} {'x'.join(map(str, c['grid'])):11} "
          f"{c.get('media', 'constant'):9} {c['cells_per_second'] / 1e9:7.1f} Gcells/s")
PY
}
bench_run() {  # BUILD YAML LABEL
  local json="$out/$(basename "$2" .yaml)-$3.json"
  "$1/heatwave" bench "$2" --json "$json" >"$out/bench-$(basename "$2" .yaml)-$3.log" 2>&1 && rows "$json" "$3" ||
    { status=1; tail -5 "$out/bench-$(basename "$2" .yaml)-$3.log"; }
}

if [[ $steps == *build* ]]; then
  stamp "build"
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
      cmake --build build-gpu -j "$(nproc)" --target heatwave heatwave_gpu_tests; } >"$out/build.log" 2>&1 ||
    { grep -B2 -A12 "error" "$out/build.log" | head -60; log "BUILD FAILED"; exit 1; }
  if [[ -n ${HEATWAVE_ONESTEP_OLD:-} ]]; then
    stamp "build-old from $HEATWAVE_ONESTEP_OLD"
    { cmake -S "$HEATWAVE_ONESTEP_OLD" -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEATWAVE_TESTS=OFF &&
        cmake --build build-old -j "$(nproc)" --target heatwave; } >"$out/build-old.log" 2>&1 ||
      { tail -20 "$out/build-old.log"; log "BASELINE BUILD FAILED"; status=1; }
  fi
fi
# GpuBitwise.* and the golden hashes on cuda and cuda-cluster, logs named
# with SUFFIX (run with an experiment's variable set: the same checks).
correctness() {  # SUFFIX
  stamp "GpuBitwise.*${1:+ ($1)}"
  build-gpu/tests/heatwave_gpu_tests --gtest_filter='GpuBitwise.*' >"$out/gpu-tests$1.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED  \]|OK \]|differ" "$out/gpu-tests$1.log" | head -30 |
    tee -a "$out/summary.txt"
  for backend in cuda cuda-cluster; do
    stamp "golden hashes, $backend${1:+ ($1)}"
    python3 tests/golden/golden.py check build-gpu/heatwave --backend $backend --mpiexec mpirun \
      >"$out/golden-$backend$1.log" 2>&1 || status=1
    tail -3 "$out/golden-$backend$1.log" | tee -a "$out/summary.txt"
  done
}
if [[ $steps == *tests* ]]; then
  correctness ""
fi
if [[ $steps == *pdl* ]]; then
  export HEATWAVE_CUDA_PDL=on
  correctness -pdl
  unset HEATWAVE_CUDA_PDL
fi
if [[ $steps == *bench* ]]; then
  round=0  # a file named twice runs twice: rounds 1, 2, ... in the file names
  for file in $benches; do
    round=$((round + 1))
    if [[ -x build-old/heatwave ]]; then
      stamp "$file, build-old"
      bench_run build-old "$file" baseline-$round
    fi
    stamp "$file"
    bench_run build-gpu "$file" default-$round
  done
fi
if [[ $steps == *shapes* ]]; then
  file=${HEATWAVE_ONESTEP_SHAPES_BENCH:-${benches%% *}}
  round=0  # a setting named twice runs twice: rounds in the file names
  for shape in ${HEATWAVE_ONESTEP_SHAPES:-}; do
    round=$((round + 1))
    stamp "$file, $shape"
    (
      case $shape in
        launch=*) export HEATWAVE_CUDA_LAUNCH=${shape#launch=} ;;
        planes=*) export HEATWAVE_CUDA_PLANES=${shape#planes=} ;;
        pdl=*) export HEATWAVE_CUDA_PDL=${shape#pdl=} ;;
        fill=*) export HEATWAVE_CUDA_FILL=${shape#fill=} ;;
      esac
      bench_run build-gpu "$file" "${shape//[=,]/-}-$round"
    ) || status=1
  done
fi
if [[ $steps == *handwritten* ]]; then
  stamp "hand-written one-step kernels (bench/handwritten_shot.cu)"
  "$CUDACXX" -std=c++20 -O3 -arch=sm_90a -Ibench bench/handwritten_shot.cu -o "$out/handwritten" >"$out/handwritten-build.log" 2>&1 ||
    { status=1; tail -5 "$out/handwritten-build.log"; }
  for radius in 1 4; do
    "$out/handwritten" 512 512 512 40 5 $radius heat,plain | tee -a "$out/handwritten.json" "$out/summary.txt" || status=1
    "$out/handwritten" 801 801 401 40 5 $radius shot | tee -a "$out/handwritten.json" "$out/summary.txt" || status=1
  done
  rm -f "$out/handwritten"
fi
if [[ $steps == *profile* ]]; then
  work=/tmp/onestep-profile && mkdir -p $work
  heat_config $work 4
  shot_configs $work 4
  metrics=smsp__thread_inst_executed.sum,smsp__inst_executed.sum,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
  sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section LaunchStats --section Occupancy"
  for name in heat shot; do
    stamp "ncu: the one-step kernel, $name"
    (cd $work && ncu --clock-control none --kernel-name regex:step_kernel --launch-skip 1 --launch-count 1 \
       --metrics $metrics $sections -f -o "$out/ncu-onestep-$name" "$OLDPWD/build-gpu/heatwave" run $name.yaml \
       --backend cuda --overwrite >"$out/ncu-onestep-$name.log" 2>&1) || status=1
    ncu -i "$out/ncu-onestep-$name.ncu-rep" --page details >"$out/ncu-onestep-$name.txt" 2>&1
    grep -E "DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Registers Per|Issue Slots Busy|dram__bytes|thread_inst" \
      "$out/ncu-onestep-$name.txt" | head -12 | tee -a "$out/summary.txt"
    # What else a step launches (the ghost fill, the sources, the receivers' gather), timed alone.
    (cd $work && ncu --clock-control none --kernel-name regex:'ghost_kernel|source_kernel|gather_kernel' --launch-skip 2 \
       --launch-count 6 --metrics gpu__time_duration.sum "$OLDPWD/build-gpu/heatwave" run $name.yaml --backend cuda \
       --overwrite >"$out/ncu-onestep-$name-others.log" 2>&1) || status=1
    grep -E "^  [a-z_]+.*\(|gpu__time_duration" "$out/ncu-onestep-$name-others.log" | head -12 | tee -a "$out/summary.txt"
  done
fi
stamp "done (status $status)"
exit $status
