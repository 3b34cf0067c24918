#!/usr/bin/env bash
# A refactor on a GPU: the working tree ("after") against a commit
# ("before", its sources in .carry/before.tar: git archive REV -o
# .carry/before.tar). Each part is chosen by HEATWAVE_AB_STEPS, in this order:
#   build    the after build in build-gpu (the heatwave target timed on its
#            own, then the rest), the before build's heatwave target in
#            /tmp/before (when bench or shot runs); a build already there is kept (ninja rebuilds
#            what changed), so that a warm machine's next call reuses both
#   tests    ctest -L gpu (after)
#   golden   tests/golden/golden.py with cuda and cuda-cluster (after)
#   validate heatwave validate configs/validation/gpu.yaml on cuda-cluster (after)
#   bench    heatwave bench SUITE with both builds for each suite of
#            HEATWAVE_AB_SUITES, in the order HEATWAVE_AB_ORDER (default
#            before after after before), each build tuning its own plans
#            (rows of fixed plans: a pure code A/B); bench-SUITE-BUILD-N.json
#            and the A/B table (in summary.txt) under OUT_DIR
#   shot     the seismic shot (801 x 801 x 401, 600 steps, outputs off:
#            gpu-env.sh's shot_configs) with `heatwave run` on cuda-cluster,
#            both builds in that order, each tuning its own plan
#   options  the after build reconfigured with HEATWAVE_AB_OPTIONS (default:
#            the left-out 3D families, -DHEATWAVE_CLUSTER_3D_*=ON; ninja
#            builds what they add and change), its GPU tests
#            (HEATWAVE_AB_OPTIONS_FILTER: a gtest filter, default GpuCluster.*)
#   scripts/gpu-ab.sh OUT_DIR
# h5py for the golden hashes may travel as a wheel in .whl (device README).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/ab}")
steps=${HEATWAVE_AB_STEPS:-build tests golden bench}
suites=${HEATWAVE_AB_SUITES:-bench/cluster.yaml}
order=${HEATWAVE_AB_ORDER:-before after after before}
mkdir -p "$out"
source scripts/gpu-env.sh
status=0
after_binary=$PWD/build-gpu/heatwave
binary() { [[ $1 == before ]] && echo /tmp/before/build/heatwave || echo "$after_binary"; }

if [[ $steps == *build* ]]; then
  stamp "build after"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$out/build-after.log" 2>&1
  start=$SECONDS
  if cmake --build build-gpu -j "$(nproc)" --target heatwave >>"$out/build-after.log" 2>&1; then
    log "after: the heatwave target in $((SECONDS - start)) s on $(nproc) cores"
    cmake --build build-gpu -j "$(nproc)" --target heatwave_gpu_tests >>"$out/build-after.log" 2>&1 ||
      { tail -30 "$out/build-after.log"; log "AFTER BUILD FAILED"; exit 1; }
  else
    tail -30 "$out/build-after.log"; log "AFTER BUILD FAILED"; exit 1
  fi
  # The before build only for the steps that run it.
  if [[ ! -x /tmp/before/build/heatwave && ( $steps == *bench* || $steps == *shot* ) ]]; then
    stamp "build before"
    rm -rf /tmp/before && mkdir -p /tmp/before && tar -xf .carry/before.tar -C /tmp/before
    start=$SECONDS
    { cmake -S /tmp/before -B /tmp/before/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEATWAVE_TESTS=OFF &&
        cmake --build /tmp/before/build -j "$(nproc)" --target heatwave; } >"$out/build-before.log" 2>&1 ||
      { tail -30 "$out/build-before.log"; log "BEFORE BUILD FAILED"; status=1; }
    log "before: the heatwave target in $((SECONDS - start)) s on $(nproc) cores"
  fi
  build-gpu/heatwave info | tee "$out/info.txt" | grep -E "^heatwave|cluster kernels|\[0\]"
fi

if [[ $steps == *tests* ]]; then
  stamp "ctest -L gpu"
  (cd build-gpu && ctest --output-on-failure -L gpu) >"$out/ctest-gpu.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|\[  (PASSED|FAILED) |SKIPPED  \]|Failed|\*\*\*|Test time" "$out/ctest-gpu.log" |
    sort | uniq -c | sort -rn | head -20 | tee -a "$out/summary.txt"
fi
if [[ $steps == *golden* ]]; then
  for backend in cuda cuda-cluster; do
    stamp "golden hashes: $backend"
    python3 tests/golden/golden.py check build-gpu/heatwave --backend $backend --mpiexec mpirun 2>&1 | tail -5 |
      tee -a "$out/summary.txt" || status=1
  done
fi
if [[ $steps == *validate* ]]; then
  stamp "heatwave validate configs/validation/gpu.yaml --backend cuda-cluster"
  build-gpu/heatwave validate configs/validation/gpu.yaml --backend cuda-cluster --no-plots \
    --output-dir "$out/validate" >"$out/validate.log" 2>&1 || status=1
  grep -E "^(PASSED|FAILED)|PASS, " "$out/validate.log" | tail -3 | tee -a "$out/summary.txt"
fi

if [[ $steps == *bench* ]]; then
  for suite in $suites; do
    name=$(basename "$suite" .yaml)
    round=0
    for which in $order; do
      round=$((round + 1))
      # Each build tunes its own plans, as a user's run would (the cache's key
      # names the commit, and an archive's build and a dirty tree's may share one).
      export HEATWAVE_CACHE_DIR=/tmp/heatwave-ab-plans-$which
      stamp "bench $name $round: $which"
      $(binary $which) bench "$suite" --json "$out/bench-$name-$which-$round.json" >"/tmp/bench-$name-$which-$round.log" 2>&1 || status=1
    done
    python3 - "$out" "$name" <<'PY' | tee -a "$out/summary.txt"
import json, glob, sys, statistics
out, name = sys.argv[1], sys.argv[2]
def rows(which):
    table = {}
    for f in sorted(glob.glob(f"{out}/bench-{name}-{which}-*.json")):
        for i, c in enumerate(json.load(open(f))["cases"]):  # the suite's order: a fallen-back row keeps its place
            plan = c.get("cluster_plan") or ""
            key = (i, c["backend"], c["equation"], c["dims"], c["precision"], c["radius"], "x".join(map(str, c["grid"])),
                   c.get("media", ""))
            table.setdefault(key, []).append((c["cells_per_second"] / 1e9, plan))
    return table
before, after = rows("before"), rows("after")
print(f"| {name} | backend | equation | dims | precision | r | grid | media | before GCells/s | after GCells/s | change | after's plan |")
print("| --- " * 12 + "|")
worst = 0
for key in sorted(before):
    if key not in after: continue
    b = statistics.median(v for v, _ in before[key])
    a = statistics.median(v for v, _ in after[key])
    change = (a - b) / b
    worst = min(worst, change)
    print(f"| {key[0]} | {' | '.join(map(str, key[1:]))} | {b:.1f} | {a:.1f} | {100 * change:+.1f}% | {after[key][-1][1]} |")
print(f"\n{name}: worst change {100 * worst:+.1f}% (medians over the rounds of each build)")
PY
  done
fi

if [[ $steps == *shot* ]]; then
  work=/tmp/ab-shot && rm -rf $work && mkdir -p $work
  shot_configs $work 600
  for which in $order; do
    export HEATWAVE_CACHE_DIR=/tmp/heatwave-ab-plans-$which
    stamp "the shot: $which"
    (cd $work && $(binary $which) run shot.yaml --backend cuda-cluster --overwrite --metrics shot-$which.json) \
      >"$out/shot-$which.log" 2>&1 || status=1
    python3 -c "import json,sys; m=json.load(open('$work/shot-$which.json')); print(f\"shot $which: {m['cells_per_second']/1e9:.1f} Gcells/s, loop {m['wall_seconds']:.3f} s\")" |
      tee -a "$out/summary.txt"
    grep -o "plan ([^)]*): [^,]*" "$out/shot-$which.log" | head -1 | tee -a "$out/summary.txt"
  done
fi

if [[ $steps == *options* ]]; then
  options=${HEATWAVE_AB_OPTIONS:--DHEATWAVE_CLUSTER_3D_DSMEM=ON -DHEATWAVE_CLUSTER_3D_HIGH_RADIUS=ON -DHEATWAVE_CLUSTER_3D_DEEP=ON}
  stamp "build with $options"
  start=$SECONDS
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release $options &&
      cmake --build build-gpu -j "$(nproc)" --target heatwave heatwave_gpu_tests; } >"$out/build-options.log" 2>&1 ||
    { tail -30 "$out/build-options.log"; log "OPTIONS BUILD FAILED"; exit 1; }
  log "options: heatwave and its gpu tests in $((SECONDS - start)) s"
  build-gpu/heatwave info | grep "^cluster kernels" | tee -a "$out/summary.txt"
  stamp "gpu tests with the options"
  filter=${HEATWAVE_AB_OPTIONS_FILTER:-GpuCluster.*}
  (cd build-gpu && ./tests/heatwave_gpu_tests --clusters --gtest_filter="$filter") \
    >"$out/gpu-tests-options.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|tests? ran|FAILED  \]" "$out/gpu-tests-options.log" | head -20 |
    tee -a "$out/summary.txt"
fi
stamp "done (status $status)"
exit $status
