#!/usr/bin/env bash
# The deep 3D family on a GPU (issue 71), in one call: the build with its
# kernels (-DHEATWAVE_CLUSTER_3D_DEEP=ON), its GPU tests (bitwise the host's),
# bench/deep-3d.yaml (autotuned and at the family's fixed plans), EBISU's
# 3d7pt at the same sizes (scripts/ebisu-3d.sh; its sources in .carry/ebisu),
# compute-sanitizer on small deep cases, ncu's instructions an update and
# per-instruction pages (profile), the golden hashes on cuda-cluster
# (golden), ctest -L gpu, bench/deep-media-3d.yaml (media: issue 72's
# rows) and the seismic shot run as a user (shot: scripts/gpu-shot.sh).
# Steps by HEATWAVE_DEEP_STEPS (default: build tests bench ebisu sanitize
# profile golden ctest); HEATWAVE_DEEP_TARGETS and HEATWAVE_DEEP_BENCH
# replace the build's targets and the bench file. An A/B of two versions of
# the family's sources in one call: HEATWAVE_DEEP_OLD=DIR holds the
# baseline's files at the tree's paths (git show REV:PATH, e.g. in
# .carry/old); the build step first builds heatwave with them in place
# (build-gpu/heatwave-old: ninja rebuilds what they touch), then the tree's,
# and step `ab` benches HEATWAVE_DEEP_AB_BENCH (default bench/deep-ab.yaml)
# with old, new, new, old; HEATWAVE_DEEP_MID=DIR adds a third build between
# them (old, mid, new, new, mid, old).
# The golden step reads HDF5 with h5py: carry .whl (scripts/gpu-env.sh).
#   scripts/gpu-deep.sh OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/deep}")
steps=${HEATWAVE_DEEP_STEPS:-build tests bench ebisu sanitize profile golden ctest}
mkdir -p "$out"
source scripts/gpu-env.sh
status=0

# A baseline build (old) and, for a three-way A/B, a middle one (mid): the
# tree with DIR's files in place, heatwave only.
baseline_build() {  # NAME DIR
  stamp "build: heatwave with the $1 files of $2"
  local files f
  files=$(cd "$2" && find . -type f | sed 's|^\./||')
  rm -rf /tmp/deep-new && mkdir -p /tmp/deep-new
  for f in $files; do mkdir -p "/tmp/deep-new/$(dirname "$f")" && cp "$f" "/tmp/deep-new/$f" && cp "$2/$f" "$f"; done
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEATWAVE_CLUSTER_3D_DEEP=ON &&
      cmake --build build-gpu -j "$(nproc)" --target heatwave && cp build-gpu/heatwave "build-gpu/heatwave-$1"; } \
    >"$out/build-$1.log" 2>&1 || { tail -20 "$out/build-$1.log"; log "$1 BUILD FAILED"; status=1; }
  for f in $files; do cp "/tmp/deep-new/$f" "$f"; done
}
if [[ $steps == *build* && -n ${HEATWAVE_DEEP_OLD:-} ]]; then
  baseline_build old "$HEATWAVE_DEEP_OLD"
  [[ -n ${HEATWAVE_DEEP_MID:-} ]] && baseline_build mid "$HEATWAVE_DEEP_MID"
fi
if [[ $steps == *build* ]]; then
  stamp "build"
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEATWAVE_CLUSTER_3D_DEEP=ON &&
      cmake --build build-gpu -j "$(nproc)" --target ${HEATWAVE_DEEP_TARGETS:-heatwave heatwave_gpu_tests}; } >"$out/build.log" 2>&1 ||
    { grep -B2 -A12 "error" "$out/build.log" | head -60; log "BUILD FAILED"; exit 1; }
  build-gpu/heatwave info | grep -E "^heatwave|cluster kernels" | tee -a "$out/summary.txt"
fi
if [[ $steps == *tests* ]]; then
  stamp "gpu tests: the deep family"
  (cd build-gpu && ./tests/heatwave_gpu_tests --clusters \
     --gtest_filter="${HEATWAVE_DEEP_FILTER:-GpuCluster.DeepFamily3D:GpuCluster.DeepMediaAndEvents3D:GpuCluster.FallsBackWithAReason}") \
    >"$out/gpu-tests.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED  \]|differ|Failure" "$out/gpu-tests.log" | head -30 |
    tee -a "$out/summary.txt"
fi
if [[ $steps == *bench* ]]; then
  stamp "bench/deep-3d.yaml"
  export HEATWAVE_CACHE_DIR=/tmp/heatwave-deep-plans
  build-gpu/heatwave bench ${HEATWAVE_DEEP_BENCH:-bench/deep-3d.yaml} --json "$out/deep-3d.json" >"$out/bench.log" 2>&1 || status=1
  python3 - "$out/deep-3d.json" <<'PY' | tee -a "$out/summary.txt"
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    print(f"{c['backend']:13} {c['equation']:5} {c['precision']} r{c['radius']} {'x'.join(map(str, c['grid'])):13}"
          f" {c['cells_per_second'] / 1e9:7.1f} Gcells/s  {c.get('cluster_plan') or ''}")
PY
fi
if [[ $steps == *ab* && -x build-gpu/heatwave-old ]]; then
  file=${HEATWAVE_DEEP_AB_BENCH:-bench/deep-ab.yaml}
  n=0
  order="old new new old" && [[ -x build-gpu/heatwave-mid ]] && order="old mid new new mid old"
  for build in $order; do
    n=$((n + 1))
    binary=build-gpu/heatwave && [[ $build != new ]] && binary=build-gpu/heatwave-$build
    stamp "$file, $build ($n)"
    $binary bench "$file" --json "$out/ab-$n-$build.json" >"$out/ab-$n-$build.log" 2>&1 || status=1
  done
  python3 scripts/ab_table.py "$out" | tee -a "$out/summary.txt"
fi
if [[ $steps == *media* ]]; then
  stamp "bench/deep-media-3d.yaml"
  export HEATWAVE_CACHE_DIR=/tmp/heatwave-deep-plans
  build-gpu/heatwave bench bench/deep-media-3d.yaml --json "$out/deep-media-3d.json" >"$out/media.log" 2>&1 || status=1
  grep -E "^\| cuda" "$out/media.log" | tee -a "$out/summary.txt"
fi
if [[ $steps == *shot* ]]; then
  stamp "the seismic shot, as a user runs it"
  HEATWAVE_SHOT_STEPS=shot HEATWAVE_SHOT_BACKENDS=cuda-cluster scripts/gpu-shot.sh "$out/shot" build-gpu >/dev/null 2>&1 ||
    status=1
  grep -E "start-up|FAIL" "$out/shot/summary.txt" | tee -a "$out/summary.txt"
fi
if [[ $steps == *ebisu* ]]; then
  stamp "EBISU 3d7pt"
  EBISU_REPS=${EBISU_REPS:-2} EBISU_CHECK=${EBISU_CHECK:-0} scripts/ebisu-3d.sh "$out" >"$out/ebisu.log" 2>&1 || status=1
  tail -8 "$out/ebisu.log" | tee -a "$out/summary.txt"
fi
if [[ $steps == *sanitize* ]]; then
  # z long enough for steady iterations at the plans' k (8 and 6).
  work=/tmp/deep-sanitize && mkdir -p $work
  cat >$work/heat.yaml <<'YAML'
equation: heat
precision: float32
grid: {points: [70, 40, 40]}
alpha: 1.0
time: {dt: auto, steps: 9}
boundary: {default: dirichlet, x_low: neumann, z_high: neumann}
initial: {type: random, seed: 3}
YAML
  cat >$work/wave.yaml <<'YAML'
equation: wave
precision: float64
grid: {points: [40, 36, 24]}
c: 1.0
time: {dt: auto, steps: 7}
boundary: {default: periodic, y_low: dirichlet, y_high: neumann}
initial: {type: random, seed: 3}
YAML
  for tool in ${HEATWAVE_DEEP_SANITIZERS:-memcheck racecheck synccheck}; do
    for c in heat:deep,64,32,8 wave:deep,32,32,6; do
      name=${c%%:*} plan=${c#*:}
      stamp "compute-sanitizer $tool $name $plan"
      if (cd $work && HEATWAVE_CLUSTER_PLAN=$plan compute-sanitizer --tool $tool --error-exitcode 99 \
            "$OLDPWD/build-gpu/heatwave" run $name.yaml --backend cuda-cluster --overwrite --metrics m.json) \
           >"$out/sanitize-$tool-$name.log" 2>&1; then
        echo "$tool $name: clean ($(grep -o 'plan ([^)]*)' "$out/sanitize-$tool-$name.log" | head -1))" | tee -a "$out/summary.txt"
      else
        echo "$tool $name: FAILED" | tee -a "$out/summary.txt"; tail -15 "$out/sanitize-$tool-$name.log"; status=1
      fi
    done
  done
fi
if [[ $steps == *profile* ]]; then
  # Thread instructions an update (ncu, one launch after one skipped): the
  # deep kernel on heat and wave fp32 512^3 at their k, and EBISU's kernel
  # (8 steps a launch) at the same size where scripts/ebisu-3d.sh built it;
  # then their time by SASS region (scripts/ncu_regions.py).
  work=/tmp/deep-profile && mkdir -p $work
  heat_config $work 16  # two launches of k 8 (the second profiled)
  # Thread instructions an update (the summary line), then, for reading:
  # warp stall reasons, scheduler issue rates and per-SASS-instruction
  # execution and stall counts (source page), and the SASS itself.
  metrics=smsp__thread_inst_executed.sum,smsp__inst_executed.sum,gpu__time_duration.sum,sm__inst_executed_pipe_lsu.sum
  sections="--section SchedulerStats --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy"
  profile() {  # NAME KERNEL_REGEX COMMAND...
    local name=$1 kernel=$2; shift 2
    ncu --kernel-name regex:$kernel --launch-skip 1 --launch-count 1 --metrics $metrics $sections \
      --import-source no -f -o "$out/ncu-$name" "$@" >"$out/ncu-$name.log" 2>&1 || status=1
    ncu -i "$out/ncu-$name.ncu-rep" --page details --print-details all >"$out/ncu-$name.txt" 2>&1
    ncu -i "$out/ncu-$name.ncu-rep" --page raw --csv >"$out/ncu-$name-raw.csv" 2>&1
    ncu -i "$out/ncu-$name.ncu-rep" --page source --csv --print-source sass >"$out/ncu-$name-sass.csv" 2>&1 ||
      ncu -i "$out/ncu-$name.ncu-rep" --page source --csv >"$out/ncu-$name-sass.csv" 2>&1
  }
  stamp "ncu: deep kernel, heat fp32 512^3"
  (cd $work && HEATWAVE_CLUSTER_PLAN=deep,64,32,8 profile deep deep_kernel \
     "$OLDPWD/build-gpu/heatwave" run heat.yaml --backend cuda-cluster --overwrite)
  find build-gpu -name 'deep_3d_float_Heat_r1.cu.o' -exec cuobjdump -sass {} \; >"$out/deep-kernels.sass" 2>&1
  # The wave fp32 at its k 5 (10 steps: the second launch is k 5 too).
  sed -e 's/equation: heat/equation: wave/' -e 's/alpha: 1.0/c: 1.0/' -e 's/steps: 16/steps: 10/' $work/heat.yaml >$work/wave.yaml
  stamp "ncu: deep kernel, wave fp32 512^3"
  (cd $work && HEATWAVE_CLUSTER_PLAN=deep,64,32,5 profile deep-wave deep_kernel \
     "$OLDPWD/build-gpu/heatwave" run wave.yaml --backend cuda-cluster --overwrite)
  if [[ -x /tmp/ebisu-build/3d7pt_ebisu.exe ]]; then
    stamp "ncu: EBISU 3d7pt fp32 512^3"
    profile ebisu kernel3d_temporal /tmp/ebisu-build/3d7pt_ebisu.exe 512 512 512 --fp32 --iter=16
    cuobjdump -sass /tmp/ebisu-build/3d7pt_ebisu.exe >"$out/ebisu.sass" 2>&1
  fi
  python3 - "$out" <<'PY' | tee -a "$out/summary.txt"
import re, sys, os
for name, levels in (("deep", 8), ("deep-wave", 5), ("ebisu", 8)):
    path = os.path.join(sys.argv[1], f"ncu-{name}.txt")
    if not os.path.exists(path): continue
    text = open(path).read().replace(",", "")
    def metric(m):
        found = re.search(m + r"\s+\S+\s+([0-9.]+)", text)
        return float(found.group(1)) if found else float("nan")
    thread = metric("smsp__thread_inst_executed.sum")
    print(f"{name}: {thread / (512 ** 3 * levels):.1f} thread instructions an update "
          f"({metric('smsp__inst_executed.sum'):.0f} warp instructions, {metric('gpu__time_duration.sum'):.0f} time units)")
PY
  # Where each kernel's time goes, by the loops of its SASS.
  for name in deep deep-wave ebisu; do
    [[ -s $out/ncu-$name-sass.csv ]] && { echo "$name:"; python3 scripts/ncu_regions.py "$out/ncu-$name-sass.csv"; } |
      tee -a "$out/summary.txt"
  done
fi
if [[ $steps == *golden* ]]; then
  # The golden final-field hashes on cuda-cluster with the family built (the
  # autotune may take it): what a default build with it on must keep.
  stamp "golden hashes: cuda-cluster"
  python3 tests/golden/golden.py check build-gpu/heatwave --backend cuda-cluster --mpiexec mpirun 2>&1 | tail -3 |
    tee -a "$out/summary.txt" || status=1
fi
if [[ $steps == *ctest* ]]; then
  stamp "ctest -L gpu"
  (cd build-gpu && ctest --output-on-failure -L gpu) >"$out/ctest-gpu.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|Test time|\[  FAILED" "$out/ctest-gpu.log" | sort | uniq -c | head | tee -a "$out/summary.txt"
fi
stamp "done (status $status)"
exit $status
