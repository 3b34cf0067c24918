#!/usr/bin/env bash
# Real runs on the cluster kernels (media, sources and receivers inside the
# k-step pipeline), in one device call. Parts, chosen by HEATWAVE_PIPELINE_STEPS:
#   tests     ctest -L gpu, and the golden hashes on cuda and cuda-cluster
#   traces    a 2D and a 3D shot (layers, absorbing faces, a point source,
#             receivers every 1 and 3) on host, cuda and cuda-cluster (built-in,
#             autotuned and fixed plans), on 1, 2 and 3 ranks (split chunks),
#             restarted from a checkpoint: every receivers file bitwise the host's
#   sanitize  compute-sanitizer (memcheck, racecheck, synccheck) on the traces cases
#   shot      scripts/gpu-shot.sh's shot on cuda and cuda-cluster, and the
#             hand-written kernel
#   bench     bench/media.yaml (SUITE overrides)
#   ab        the commit before (its sources in .carry/before.tar: git archive
#             REV -o .carry/before.tar), built beside this tree, and both
#             benched on bench/ab-cluster.yaml in turn on one plan cache
# HEATWAVE_TRACES_DIMS picks the traces' dimensions (default "2 3").
# Logs and JSON go under OUT_DIR; the last lines are a summary.
#   scripts/gpu-pipeline.sh OUT_DIR [SUITE]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/pipeline}")
suite=${2:-bench/media.yaml}
steps=${HEATWAVE_PIPELINE_STEPS:-tests traces sanitize shot bench}
mkdir -p "$out"
source scripts/gpu-env.sh
status=0

if [[ $steps == *ab* ]]; then  # the commit before, built meanwhile
  rm -rf /tmp/before && mkdir -p /tmp/before && tar -xf .carry/before.tar -C /tmp/before
  { cmake -S /tmp/before -B /tmp/before/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEATWAVE_TESTS=OFF &&
    cmake --build /tmp/before/build -j 8; } >"$out/build-before.log" 2>&1 &
  before_build=$!
fi
log "build"
start=$(date +%s)
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j "$(nproc)"; } \
  >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; log "BUILD FAILED"; exit 1; }
echo "built in $(($(date +%s) - start)) s" | tee -a "$out/summary.txt"
heatwave=$(realpath build-gpu/heatwave)

if [[ $steps == *tests* && -n ${HEATWAVE_GTEST_FILTER:-} ]]; then
  log "gpu tests $HEATWAVE_GTEST_FILTER"
  (cd build-gpu && HEATWAVE_CACHE_DIR=$(mktemp -d) tests/heatwave_gpu_tests --clusters --gtest_filter="$HEATWAVE_GTEST_FILTER") \
    >"$out/gtest.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED|  OK) |Failure|Expected|differ" "$out/gtest.log" | head -40 | tee -a "$out/summary.txt"
elif [[ $steps == *tests* ]]; then
  log "ctest -L gpu"
  (cd build-gpu && ctest --output-on-failure -L gpu) >"$out/ctest-gpu.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|\[  (PASSED|FAILED) |Failed|\*\*\*" "$out/ctest-gpu.log" | tee -a "$out/summary.txt"
  for backend in ${HEATWAVE_GOLDEN_BACKENDS:-cuda cuda-cluster}; do
    log "golden hashes: $backend"
    python3 tests/golden/golden.py check "$heatwave" --backend $backend --mpiexec mpirun 2>&1 | tail -2 |
      tee -a "$out/summary.txt" || status=1
  done
fi

# A shot in 2D or 3D: layers, absorbing faces and a free surface, a Ricker
# point source, receivers along a line, at corners and on a Dirichlet face.
shot_yaml() {  # shot_yaml DIMS EVERY NAME
  if [[ $1 == 2 ]]; then
    cat <<YAML
equation: wave
precision: float32
grid: {points: [181, 151], length: [1.2, 1.0]}
material: {c: {type: layers, axis: y, interfaces: [0.4, 0.7], values: [3.0, 2.2, 1.5]}}
boundary: {default: {type: absorbing, width: 12}, y_high: {type: neumann, value: 0.0}}
sources: [{type: point, position: [0.61, 0.83], amplitude: 1.0, time: {type: ricker, frequency: 9.0}}]
receivers: {every: $2, file: $3.h5, lines: [{from: [0.02, 0.93], to: [1.18, 0.93], count: 31}], points: [[0.0, 0.5], [1.2, 1.0], [0.33, 0.0]]}
YAML
  else
    cat <<YAML
equation: wave
precision: float32
grid: {points: [73, 61, 49], length: [1.2, 1.0, 0.8]}
material: {c: {type: layers, axis: z, interfaces: [0.4, 0.6], values: [3.0, 2.2, 1.5]}}
boundary: {default: {type: absorbing, width: 8}, z_high: {type: neumann, value: 0.0}}
sources: [{type: point, position: [0.61, 0.52, 0.7], amplitude: 1.0, time: {type: ricker, frequency: 9.0}}]
receivers: {every: $2, file: $3.h5, lines: [{from: [0.02, 0.5, 0.79], to: [1.18, 0.5, 0.79], count: 23}], points: [[0.0, 0.5, 0.4], [1.2, 1.0, 0.8], [0.33, 0.41, 0.0]]}
YAML
  fi
  cat <<YAML
time: {dt: auto, steps: 240}
initial: {type: constant, value: 0.0}
diagnostics: {every: 100}
checkpoint: {every: 80, keep: 5, dir: $3-checkpoints}
metrics: {file: ""}
YAML
}

if [[ $steps == *traces* ]]; then
  log "traces: host, cuda, cuda-cluster (plans, ranks, restart), bitwise"
  work=/tmp/traces && rm -rf $work && mkdir -p $work
  for dims in ${HEATWAVE_TRACES_DIMS:-2 3}; do
    plans="1,2,32,8,0,3,1 resident,24,12,2 1,1,64,32,0,8,8"
    [[ $dims == 3 ]] && plans="1,1,16,12,9,4,1 2,2,8,8,8,3,1 1,1,32,16,16,2,1"
    for every in 1 3; do
      base=d${dims}e${every}
      run() {  # run NAME [env and mpirun words...] -- [heatwave args]
        local name=$1; shift
        shot_yaml $dims $every $name >$work/$name.yaml
        (cd $work && "$@" --overwrite >$name.log 2>&1) || { echo "FAILED: $name (see traces-logs)"; status=1; }
      }
      run ${base}-host "$heatwave" run ${base}-host.yaml --backend host
      run ${base}-cuda "$heatwave" run ${base}-cuda.yaml --backend cuda
      run ${base}-cluster "$heatwave" run ${base}-cluster.yaml --backend cuda-cluster
      for plan in $plans; do
        run ${base}-plan-${plan//,/_} env HEATWAVE_CLUSTER_PLAN=$plan "$heatwave" run ${base}-plan-${plan//,/_}.yaml \
          --backend cuda-cluster
      done
      for ranks in 2 3; do
        shot_yaml $dims $every ${base}-ranks$ranks >$work/${base}-ranks$ranks.yaml
        echo "parallel: {halo_transport: mpi-host}" >>$work/${base}-ranks$ranks.yaml
        (cd $work && mpirun --oversubscribe -n $ranks "$heatwave" run ${base}-ranks$ranks.yaml --backend cuda-cluster \
          --overwrite >${base}-ranks$ranks.log 2>&1) || { echo "FAILED: ${base}-ranks$ranks"; status=1; }
      done
      # Restarted from step 80 (a finished run: the samples after it are written again).
      run ${base}-restart "$heatwave" run ${base}-restart.yaml --backend cuda-cluster
      (cd $work && "$heatwave" run ${base}-restart.yaml --backend cuda-cluster \
        --restart ${base}-restart-checkpoints/checkpoint_000000080.h5 >${base}-restarted.log 2>&1) ||
        { echo "FAILED: ${base} restart"; status=1; }
      grep -h "keeps its" $work/${base}-restarted.log | head -1 >>"$out/summary.txt"
      "$heatwave" traces $work/${base}-host.h5 --csv >$work/${base}-host.csv
      for f in $work/${base}-*.h5; do
        name=$(basename $f .h5)
        [[ $name == *-host ]] && continue
        "$heatwave" traces $f --csv >$work/$name.csv
        backend=$(grep -o "backend [a-z-]*" $work/$name.log 2>/dev/null | head -1)
        if cmp -s $work/${base}-host.csv $work/$name.csv; then
          echo "traces $name ($backend): bitwise the host's ($(($(wc -l <$work/$name.csv) - 1)) samples)"
        else
          echo "traces $name ($backend): DIFFER from the host's"
          status=1
        fi
      done | tee -a "$out/summary.txt"
      grep -h "halo_path\|falling back\|plan (" $work/${base}-ranks3.log | head -3 >>"$out/summary.txt"
    done
  done
  grep -l "falling back" $work/*.log | sed 's/^/fell back: /' | tee -a "$out/summary.txt"
  mkdir -p "$out/traces-logs" && cp $work/*.log "$out/traces-logs/" 2>/dev/null
  tar -czf "$out/traces-logs.tgz" -C "$out" traces-logs && rm -rf "$out/traces-logs"
fi

if [[ $steps == *sanitize* ]]; then
  log "compute-sanitizer on the shots (media, a source and receivers in the pipeline)"
  work=/tmp/sanitize && rm -rf $work && mkdir -p $work
  for dims in 2 3; do
    for tool in memcheck racecheck synccheck; do
      for plan in "" $([[ $dims == 2 ]] && echo "resident,24,12,2 1,2,32,8,0,3,1" || echo "2,2,8,8,8,3,1 1,1,16,12,9,4,1"); do
        name=d${dims}-$tool-${plan//,/_}
        # Small: 12 steps on a few tiles, no checkpoints.
        shot_yaml $dims 1 $name | sed -e 's/steps: 240/steps: 12/' -e '/^checkpoint:/d' -e 's/width: [0-9]*/width: 4/' \
          -e 's/points: \[181, 151\]/points: [61, 45]/' -e 's/points: \[73, 61, 49\]/points: [29, 23, 19]/' >$work/$name.yaml
        if (cd $work && env ${plan:+HEATWAVE_CLUSTER_PLAN=$plan} compute-sanitizer --tool $tool --error-exitcode 99 \
          "$heatwave" run $name.yaml --backend cuda-cluster --overwrite >$name.log 2>&1); then
          echo "$tool ${dims}D ${plan:-autotuned}: clean ($(grep -o 'plan ([^)]*): [^,]*' $work/$name.log | head -1))"
        else
          echo "$tool ${dims}D ${plan:-autotuned}: FAILED"; tail -15 $work/$name.log; status=1
        fi
      done
    done
  done | tee -a "$out/summary.txt"
fi

if [[ $steps == *shot* ]]; then
  log "the seismic shot, 801 x 801 x 401, 600 steps"
  HEATWAVE_SHOT_STEPS=shot HEATWAVE_SHOT_BACKENDS="cuda cuda-cluster" bash scripts/gpu-shot.sh "$out/shot" build-gpu \
    >"$out/shot.log" 2>&1 || status=1
  grep -vE "^==" "$out/shot/summary.txt" | tee -a "$out/summary.txt"
  grep -h "backend\|plan (" "$out"/shot/run-shot-cuda-cluster.log | head -3 | tee -a "$out/summary.txt"
fi

if [[ $steps == *bench* ]]; then
  log "bench $suite"
  "$heatwave" bench "$suite" --json "$out/bench.json" >"$out/bench.log" 2>&1 || status=1
  grep -E "^\||roofline:" "$out/bench.log" | tee -a "$out/summary.txt"
fi
if [[ $steps == *ab* ]]; then
  log "A/B: the commit before, then this tree, bench/ab-cluster.yaml (plans tuned by each build: the cache key names it)"
  if wait $before_build; then
    export HEATWAVE_CACHE_DIR=/tmp/heatwave-ab-plans
    for which in before after; do
      binary=$heatwave; [[ $which == before ]] && binary=/tmp/before/build/heatwave
      "$binary" bench bench/ab-cluster.yaml --json "$out/ab-$which.json" >"$out/ab-$which.log" 2>&1 || status=1
    done
    python3 - "$out/ab-before.json" "$out/ab-after.json" <<'PY' | tee -a "$out/summary.txt"
import json, sys
rows = [json.load(open(f))["cases"] for f in sys.argv[1:]]
for b, a in zip(*rows):
    name = f"{b['equation']} {b['dims']}D {'x'.join(map(str, b['grid']))}"
    gb, ga = b["cells_per_second"] / 1e9, a["cells_per_second"] / 1e9
    print(f"{name}: before {gb:.1f}, after {ga:.1f} Gcells/s ({100 * (ga / gb - 1):+.1f}%)")
PY
  else
    tail -20 "$out/build-before.log"; log "BEFORE BUILD FAILED"; status=1
  fi
fi
log "done (status $status)"
exit $status
