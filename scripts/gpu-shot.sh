#!/usr/bin/env bash
# The seismic shot on a GPU, as a user runs it, in one device call: the
# example at 801 x 801 x 401 for 600 steps (outputs off) with `heatwave run`
# on the cuda backend, its start-up (process start to step 0) and loop, the
# same grid plain (constant c, no source or receivers, Dirichlet faces), the
# hand-written one-step kernel (bench/handwritten_shot.cu) on both, and the
# media bench suite. With HEATWAVE_SHOT_STEPS="tests", the gpu tests and the
# golden hashes on both GPU backends first.
#   scripts/gpu-shot.sh OUT_DIR [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/shot}")
build=${2:-build-gpu}
steps=${HEATWAVE_SHOT_STEPS:-tests shot bench}
mkdir -p "$out"
source scripts/gpu-env.sh
status=0
if [[ ! -x $build/heatwave ]]; then
  log "build"
  { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$(nproc)"; } \
    >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; log "BUILD FAILED"; exit 1; }
fi
heatwave=$(realpath "$build/heatwave")

if [[ $steps == *tests* ]]; then
  log "ctest -L gpu"
  (cd "$build" && ctest --output-on-failure -L gpu) >"$out/ctest-gpu.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|\[  (PASSED|FAILED) |Failed|\*\*\*" "$out/ctest-gpu.log" | tee -a "$out/summary.txt"
  for backend in cuda cuda-cluster; do
    log "golden hashes: $backend"
    python3 tests/golden/golden.py check "$heatwave" --backend $backend --mpiexec mpirun 2>&1 | tail -3 |
      tee -a "$out/summary.txt" || status=1
  done
fi

if [[ $steps == *shot* ]]; then
  work=/tmp/shot && rm -rf $work && mkdir -p $work
  shot_configs $work 600
  for name in shot plain; do
    for backend in ${HEATWAVE_SHOT_BACKENDS:-cuda}; do
      log "heatwave run $name.yaml --backend $backend"
      start=$(date +%s.%N)
      (cd $work && "$heatwave" run $name.yaml --backend $backend --overwrite --metrics $name-$backend.json) \
        >"$out/run-$name-$backend.log" 2>&1 || status=1
      end=$(date +%s.%N)
      python3 - "$out/run-$name-$backend.log" "$work/$name-$backend.json" "$start" "$end" <<'PY' | tee -a "$out/summary.txt"
import json, re, sys, datetime
log, metrics, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
m = json.load(open(metrics))
def stamp(line):
    t = re.match(r"\[(\d+):(\d+):([\d.]+)\]", line)
    return int(t[1]) * 3600 + int(t[2]) * 60 + float(t[3])
lines = open(log).read().splitlines()
day = datetime.datetime.fromtimestamp(start)
start_s = day.hour * 3600 + day.minute * 60 + day.second + day.microsecond / 1e6
step0 = next(stamp(l) for l in lines if re.search(r"info: step +0 ", l))
loop = m["wall_seconds"]
print(f"{m['backend']}: start-up {step0 - start_s:.2f} s, loop {loop:.3f} s "
      f"({m['cells_per_second'] / 1e9:.1f} Gcells/s), process {end - start:.2f} s")
PY
    done
  done
  if [[ -x $build/heatwave_handwritten_shot ]]; then
    log "hand-written one-step kernel (bench/handwritten_shot.cu), 801 x 801 x 401, 600 steps"
    "$build/heatwave_handwritten_shot" 801 801 401 600 3 | tee "$out/handwritten.json" | tee -a "$out/summary.txt"
  fi
fi

if [[ $steps == *bench* ]]; then
  log "bench/media.yaml"
  "$heatwave" bench bench/media.yaml --json "$out/media.json" >"$out/bench.log" 2>&1 || status=1
  grep -E "^\||roofline:" "$out/bench.log" | tee -a "$out/summary.txt"
fi
log "done (status $status)"
exit $status
