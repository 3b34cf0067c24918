#!/usr/bin/env bash
# On one GPU: cuda-cluster on more than one rank. The MPI agreement tests on
# cuda-cluster with three fixed plans (2D k = 3, clusters of 2 blocks along
# y; 2D and 3D k = 2, clusters of 2 blocks along y, then along x: the 3D
# ones end the small domains with tiles of one point), so that chunks split
# into inner tiles and rims, and chunks of several launches, are all compared
# bitwise with one rank; then heat fp32 in 2D (16384^2) and 3D (512^3) on 1 rank and
# on 2 ranks sharing the GPU (mpi-host), overlap off and on (auto), three
# times each, interleaved: GCells/s, phases, and whether all end in one state.
# Logs, metrics JSON and summary.json to OUT_DIR. HEATWAVE_CHECK_AGREEMENT=0
# runs the timings only (the "before" build of an A/B).
#   scripts/gpu-exchange-check.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
status=0
plans="1,2,32,8,0,3,1 1,2,16,8,4,2,1 2,1,16,8,4,2,1"
# (3D clusters of several blocks only where built: HEATWAVE_CLUSTER_3D_DSMEM; else one block a cluster.)
"$build/heatwave" info | grep -q "^cluster kernels:.*also built:.*3D DSMEM" || plans="1,2,32,8,0,3,1 1,1,16,8,4,2,1"
[[ ${HEATWAVE_CHECK_AGREEMENT:-1} == 0 ]] && plans=""
for plan in $plans; do
  for ranks in 2 3; do
    log="$out/agreement_cluster_${plan//,/-}_$ranks.log"
    HEATWAVE_TEST_BACKEND=cuda-cluster HEATWAVE_TEST_TRANSPORT=mpi-host HEATWAVE_CLUSTER_PLAN=$plan \
      timeout 600 mpirun --oversubscribe -n $ranks "$build/tests/heatwave_tests" --gtest_filter='*MpiAgreement.*' \
      >"$log" 2>&1 || status=1
    echo "cuda-cluster plan $plan agreement on $ranks ranks: $(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^\[  (PASSED|FAILED)' | sort -u | tr '\n' ' ')"
  done
done
work=$(mktemp -d)
cd "$work"
case_yaml() {  # dims points steps overlap tag
  printf 'equation: heat\nprecision: float32\ngrid: {points: %s}\ntime: {dt: auto, steps: %s}\ninitial: {type: random, seed: 3}\nbackend: cuda-cluster\nparallel: {overlap: %s, halo_transport: mpi-host}\ndiagnostics: {every: 0}\nmetrics: {file: %s/%s.json}\n' \
    "$2" "$3" "$4" "$out" "$5" >"$5.yaml"
}
for shape in "2 [16384,16384] 4800" "3 [512,512,512] 960"; do
  read -r dims points steps <<<"$shape"
  for repeat in 1 2 3; do
    for run in "1 false" "2 false" "2 auto"; do
      read -r ranks overlap <<<"$run"
      tag="heat${dims}d_ranks-${ranks}_overlap-${overlap}_$repeat"
      case_yaml "$dims" "$points" "$steps" "$overlap" "$tag"
      timeout 300 mpirun -n "$ranks" "$build/heatwave" run "$tag.yaml" >"$out/$tag.log" 2>&1 || {
        echo "FAIL: $tag"
        status=1
      }
    done
  done
  grep -h "halos exchanged" "$out"/heat${dims}d_ranks-2_overlap-*_1.log | sed 's/^.*info[^:]*: //'
  if [[ $(grep -h "step \+$steps" "$out"/heat${dims}d_*.log | sed 's/^.*step/step/' | sort -u | wc -l) -ne 1 ]]; then
    echo "FAIL: the ${dims}D runs end in different states"
    status=1
  fi
done
/usr/bin/python3 "$here/summarize-runs.py" "$out" || status=1
exit $status
