#!/usr/bin/env bash
# A refactor on a GPU, in one device call: the working tree ("after") against
# a commit ("before", its sources in .carry/before.tar: git archive REV -o
# .carry/before.tar). Each part is chosen by HEATWAVE_AB_STEPS:
#   golden  tests/golden/golden.py with cuda and cuda-cluster (after)
#   tests   ctest -L gpu (after)
#   bench   heatwave bench SUITE with both builds, before / after / after /
#           before (HEATWAVE_AB_ORDER), each build tuning its own plans (rows
#           of fixed plans: a pure code A/B); bench-before-N.json, bench-after-N.json and the
#           A/B table (in summary.txt) under OUT_DIR
#   scripts/gpu-ab.sh OUT_DIR [SUITE]
# h5py for the golden hashes may travel as a wheel in .whl (device README).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/ab}")
suite=${2:-bench/cluster.yaml}
steps=${HEATWAVE_AB_STEPS:-golden tests bench}
mkdir -p "$out"
log() { echo "== $*" | tee -a "$out/summary.txt"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$out/summary.txt"
status=0

jobs=16; [[ $steps == *bench* ]] && jobs=8  # two builds side by side share the cores
build() {  # build SOURCE_DIR BUILD_DIR TESTS(ON|OFF)
  { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEATWAVE_TESTS=$3 && cmake --build "$2" -j $jobs; } \
    >"$out/build-$4.log" 2>&1
}
log "build after$([[ $steps == *bench* ]] && echo " and before, side by side")"
tests=OFF; [[ $steps == *tests* ]] && tests=ON
build . build-gpu $tests after & after=$!
if [[ $steps == *bench* ]]; then
  rm -rf /tmp/before && mkdir -p /tmp/before && tar -xf .carry/before.tar -C /tmp/before
  build /tmp/before /tmp/before/build OFF before & before=$!
  wait $before || { tail -30 "$out/build-before.log"; log "BEFORE BUILD FAILED"; status=1; }
fi
wait $after || { tail -30 "$out/build-after.log"; log "AFTER BUILD FAILED"; exit 1; }
build-gpu/heatwave info | tee "$out/info.txt" | grep -E "^heatwave|devices|\[0\]"

if [[ $steps == *golden* ]]; then
  for backend in cuda cuda-cluster; do
    log "golden hashes: $backend"
    python3 tests/golden/golden.py check build-gpu/heatwave --backend $backend --mpiexec mpirun 2>&1 | tail -5 | tee -a "$out/summary.txt" || status=1
  done
fi
if [[ $steps == *tests* ]]; then
  log "ctest -L gpu"
  (cd build-gpu && ctest --output-on-failure -L gpu) >"$out/ctest-gpu.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|\[  (PASSED|FAILED) |Failed|\*\*\*" "$out/ctest-gpu.log" | tee -a "$out/summary.txt"
fi
if [[ $steps == *bench* ]]; then
  round=0
  for which in ${HEATWAVE_AB_ORDER:-before after after before}; do
    round=$((round + 1))
    binary=build-gpu/heatwave; [[ $which == before ]] && binary=/tmp/before/build/heatwave
    # Each build tunes its own plans, as a user's run would (the cache's key
    # names the commit, and an archive's build and a dirty tree's may share one).
    export HEATWAVE_CACHE_DIR=/tmp/heatwave-ab-plans-$which
    log "bench $round: $which"
    $binary bench "$suite" --json "$out/bench-$which-$round.json" >"/tmp/bench-$which-$round.log" 2>&1 || status=1
    grep -E "roofline:" "/tmp/bench-$which-$round.log" | sed 's/^.*info: //' | tee -a "$out/summary.txt"
  done
  python3 - "$out" <<'PY' | tee -a "$out/summary.txt"
import json, glob, os, sys, statistics
out = sys.argv[1]
def rows(which):
    runs = [json.load(open(f))["cases"] for f in sorted(glob.glob(f"{out}/bench-{which}-*.json"))]
    table = {}
    for run in runs:  # the suite's cases in its order: a fallen-back cuda-cluster row keeps its place
        for i, c in enumerate(run):
            key = (i, c["backend"], c["equation"], c["dims"], c["precision"], c["radius"], "x".join(map(str, c["grid"])))
            table.setdefault(key, []).append(c["cells_per_second"] / 1e9)
    return table
before, after = rows("before"), rows("after")
print("| backend | equation | dims | precision | r | grid | before GCells/s | after GCells/s | change |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
worst = 0
for key in sorted(before):
    if key not in after: continue
    b, a = statistics.median(before[key]), statistics.median(after[key])
    change = (a - b) / b
    worst = min(worst, change)
    print(f"| {' | '.join(map(str, key[1:]))} | {b:.1f} | {a:.1f} | {100 * change:+.1f}% |")
print(f"\nworst change: {100 * worst:+.1f}% (median of 2 runs each, before/after/after/before)")
PY
fi
log "done (status $status)"
exit $status
