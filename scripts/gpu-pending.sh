#!/usr/bin/env bash
# The deep 3D family's pending changes (bench/pending/README.md), measured in
# device calls: each variant is main with some of the patches applied, built
# side by side, tested, and timed in one A/B. Steps (HEATWAVE_PENDING_STEPS;
# default "build tests", about 7 minutes cold; a warm machine keeps
# build-gpu/, so a later call's build skips what is built: name it first in
# every call, bench/pending/README.md's four):
#   build      heatwave and heatwave_gpu_tests for each variant, into
#              build-gpu/heatwave-V and build-gpu/tests/heatwave_gpu_tests-V:
#              old (main), A (patch 1), B (1-2), P (1-3), W (1, 2, 4),
#              X (1, 2, 7), Y (1, 2, 8) (bench/pending/variants.sh)
#   tests      the deep family's GPU tests on B (bitwise the host's)
#   variants   the same on the other variants (A, P, W, X, Y)
#   mutants    each mutant patch on B must turn DeepFamily3D red
#   ab         bench/deep-ab.yaml, order old A B P W X Y Y X W P B A old
#   ebisu      EBISU's 3d7pt at issue 71's sizes (scripts/ebisu-3d.sh; .carry/ebisu)
#   sanitize   compute-sanitizer memcheck, racecheck, synccheck on B, P, W
#   mpi        the MPI agreement cases sized for the family, forced, on 2 and
#              3 ranks (scripts/mpi-gpu-check.sh's deep part; builds heatwave_tests)
#   onestep    issue 72's one-step rows and the hand-written kernels (H200 only)
#   timing     the diagnostic build T (1, 2, 6): each block's share of a launch
#              spent waiting for its neighbours' flags, heat and wave fp32 512^3
#   k6         the waves fp32 at k 6 (patch 5) in their own build, against B at k 5
# Results: OUT_DIR/summary.txt; logs in OUT_DIR.
#   scripts/gpu-pending.sh OUT_DIR
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=$(realpath -m "${1:-out/pending}")
steps=${HEATWAVE_PENDING_STEPS:-build tests}
mkdir -p "$out"
source scripts/gpu-env.sh
status=0
pending=bench/pending
source "$pending/variants.sh"
# main's files, kept across calls; the tree gets them back when the script
# ends (the steps leave it at a variant), so that a second run finds main.
[[ -d /tmp/pending-main ]] || for f in $pending_files; do mkdir -p "/tmp/pending-main/$(dirname "$f")" && cp "$f" "/tmp/pending-main/$f"; done
trap 'for f in $pending_files; do cp "/tmp/pending-main/$f" "$f"; done' EXIT
measured=${pending_variants/ T/}  # built and timed (T, the diagnostic, is built for its step only)
as_variant() {  # V [extra patch file]: the tree's pending files as variant V
  variant_files "$1" /tmp/pending-main "${2:-}" || { log "variant $1${2:+ with $2}: a patch does not apply"; return 1; }
}
build() {  # NAME TARGETS...
  local name=$1; shift
  cmake --build build-gpu -j "$(nproc)" --target "$@" >"$out/build-$name.log" 2>&1 ||
    { grep -B2 -A12 "error" "$out/build-$name.log" | head -40; log "$name BUILD FAILED"; status=1; return 1; }
}
deep_tests() {  # BINARY LOG [FILTER]
  (cd build-gpu && timeout 300 "./tests/$1" --clusters \
     --gtest_filter="${3:-GpuCluster.DeepFamily3D:GpuCluster.DeepMediaAndEvents3D:GpuCluster.FallsBackWithAReason}") \
    >"$out/$2.log" 2>&1
}

if [[ $steps == *build* ]]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEATWAVE_CLUSTER_3D_DEEP=ON >"$out/cmake.log" 2>&1 ||
    { log "cmake FAILED"; exit 1; }
  for v in $measured; do
    [[ -x build-gpu/heatwave-$v && -x build-gpu/tests/heatwave_gpu_tests-$v ]] && continue
    stamp "build $v (patches: $(patches_of $v))"
    as_variant $v && build $v heatwave heatwave_gpu_tests &&
      cp build-gpu/heatwave build-gpu/heatwave-$v && cp build-gpu/tests/heatwave_gpu_tests build-gpu/tests/heatwave_gpu_tests-$v
  done
  cp build-gpu/heatwave-B build-gpu/heatwave  # (the steps that build set their variant first)
fi
if [[ $steps == *tests* ]]; then
  stamp "deep GPU tests on B"
  deep_tests heatwave_gpu_tests-B tests-B || status=1
  grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$out/tests-B.log" | head -10 | sed 's/^/B: /' | tee -a "$out/summary.txt"
fi
if [[ $steps == *variants* ]]; then
  for v in $measured; do
    [[ $v == old || $v == B ]] && continue
    stamp "deep GPU tests on $v"
    deep_tests heatwave_gpu_tests-$v tests-$v || status=1
    grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$out/tests-$v.log" | head -10 | sed "s/^/$v: /" | tee -a "$out/summary.txt"
  done
fi
if [[ $steps == *mutants* ]]; then
  for m in "$pending"/mutant-*.patch; do
    name=$(basename "$m" .patch)
    stamp "$name"
    as_variant B "$m" && build "$name" heatwave_gpu_tests || continue
    if deep_tests heatwave_gpu_tests "$name" GpuCluster.DeepFamily3D; then
      log "$name: the tests PASSED: the mutant survived (they do not cover the change)"; status=1
    else
      log "$name: red, as it must be ($(grep -c "Failure" "$out/$name.log") failures)"
      grep -m2 -A3 "Failure" "$out/$name.log" | tee -a "$out/summary.txt"
    fi
  done
  as_variant B && build B heatwave heatwave_gpu_tests
fi
if [[ $steps == *ab* ]]; then
  n=0
  for v in $measured $(echo $measured | tr ' ' '\n' | tac); do
    n=$((n + 1))
    [[ -x build-gpu/heatwave-$v ]] || continue
    stamp "bench/deep-ab.yaml, $v ($n)"
    build-gpu/heatwave-$v bench bench/deep-ab.yaml --json "$out/ab-$n-$v.json" >"$out/ab-$n-$v.log" 2>&1 || status=1
  done
  python3 scripts/ab_table.py "$out" | tee -a "$out/summary.txt"
fi
if [[ $steps == *ebisu* ]]; then
  stamp "EBISU 3d7pt"
  EBISU_REPS=${EBISU_REPS:-2} EBISU_CHECK=${EBISU_CHECK:-0} scripts/ebisu-3d.sh "$out" >"$out/ebisu.log" 2>&1 || status=1
  tail -8 "$out/ebisu.log" | tee -a "$out/summary.txt"
fi
if [[ $steps == *sanitize* ]]; then
  for v in B P W; do
    [[ -x build-gpu/heatwave-$v ]] || continue
    cp build-gpu/heatwave-$v build-gpu/heatwave
    stamp "compute-sanitizer on $v"
    HEATWAVE_DEEP_STEPS=sanitize scripts/gpu-deep.sh "$out/sanitize-$v" >/dev/null 2>&1 || status=1
    grep -E "clean|FAILED" "$out/sanitize-$v/summary.txt" | sed "s/^/$v: /" | tee -a "$out/summary.txt"
  done
  cp build-gpu/heatwave-B build-gpu/heatwave
fi
if [[ $steps == *mpi* ]]; then
  stamp "MPI agreement, the deep family forced"
  as_variant B && build mpi heatwave heatwave_tests &&
    HEATWAVE_GPU_PARTS=deep timeout 500 scripts/mpi-gpu-check.sh build-gpu "$out/mpi" 2>&1 |
    grep -E "deep|^    " | tee -a "$out/summary.txt"
fi
if [[ $steps == *onestep* ]] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  HEATWAVE_ONESTEP_STEPS="bench handwritten" scripts/gpu-onestep.sh "$out/onestep" >/dev/null 2>&1 || status=1
  cat "$out/onestep/summary.txt" >>"$out/summary.txt"
fi
if [[ $steps == *timing* ]]; then
  # The diagnostic build (patch 6): each block's wait for its neighbours'
  # flags, in the third launch of k steps, heat fp32 (k 8) and wave fp32 (k 5) at 512^3.
  stamp "timing: the blocks' waits for their neighbours"
  [[ -x build-gpu/heatwave-T ]] || { as_variant T && build T heatwave && cp build-gpu/heatwave build-gpu/heatwave-T; }
  work=/tmp/pending-timing && mkdir -p $work
  for c in heat:alpha:8:32 wave:c:5:20; do
    IFS=: read -r eq coefficient k count <<<"$c"
    printf 'equation: %s\nprecision: float32\ngrid: {points: [512, 512, 512]}\n%s: 1.0\ntime: {dt: auto, steps: %s}\nboundary: dirichlet\ninitial: {type: random, seed: 3}\ndiagnostics: {every: 0}\n' \
      "$eq" "$coefficient" "$count" >$work/$eq.yaml
    (cd $work && HEATWAVE_DEEP_WAIT_TIMING=1 HEATWAVE_CLUSTER_PLAN=deep,64,32,$k "$OLDPWD/build-gpu/heatwave-T" run $eq.yaml \
       --backend cuda-cluster --overwrite) >"$out/timing-$eq.log" 2>&1 || status=1
    grep "^deep-wait" "$out/timing-$eq.log" | python3 -c "
import sys, statistics
rows = [list(map(int, l.split()[1:])) for l in sys.stdin]
if not rows: sys.exit('no deep-wait lines')
nbx, nby, k = rows[0][2], rows[0][3], rows[0][4]
def kind(bx, by):
    edge_x, edge_y = bx in (0, nbx - 1), by in (0, nby - 1)
    return 'corner' if edge_x and edge_y else 'x face' if edge_x else 'y face' if edge_y else 'interior'
share = {}
for bx, by, _, _, _, cycles, waited in rows:
    share.setdefault(kind(bx, by), []).append(waited / cycles)
print(f'$eq fp32 512^3 k {k}, {nbx} x {nby} blocks, launch {statistics.median(r[5] for r in rows) / 1e6:.2f} M cycles (median):',
      '; '.join(f'{n} {len(v)} blocks wait {100 * statistics.mean(v):.1f}% ({100 * min(v):.1f}-{100 * max(v):.1f})'
                for n, v in share.items()))
grid = {(r[0], r[1]): r[6] / r[5] for r in rows}
for by in range(nby):
    print('  ' + ' '.join(f'{100 * grid[bx, by]:4.1f}' for bx in range(nbx)))
" | tee -a "$out/summary.txt"
  done
  as_variant B && cp build-gpu/heatwave-B build-gpu/heatwave
fi
if [[ $steps == *k6* ]]; then
  # Its own build directory: the shape header is included everywhere.
  stamp "the waves fp32 at k 6 (patch 5)"
  cp kernels/cluster/kernel_shapes.hpp /tmp/pending-shapes.hpp
  apply_patch "$pending"/5-*.patch &&
    { cmake -S . -B build-k6 -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEATWAVE_CLUSTER_3D_DEEP=ON &&
        cmake --build build-k6 -j "$(nproc)" --target heatwave; } >"$out/build-k6.log" 2>&1 || log "k6 BUILD FAILED"
  cp /tmp/pending-shapes.hpp kernels/cluster/kernel_shapes.hpp
  n=0
  for k in 5 6 6 5; do
    binary=build-gpu/heatwave-B && [[ $k == 6 ]] && binary=build-k6/heatwave
    sed -e "s/deep,64,32,5/deep,64,32,$k/" bench/pending/waves-k5.yaml >"$out/waves-k$k.yaml"
    $binary bench "$out/waves-k$k.yaml" --json "$out/waves-k$k-$((++n)).json" >"$out/waves-k$k.log" 2>&1 || status=1
    python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['cases']:
    print('k $k:', c['equation'], c.get('cluster_plan'), round(c['cells_per_second'] / 1e9, 1))" "$out/waves-k$k-$n.json" |
      tee -a "$out/summary.txt"
  done
fi
exit $status
