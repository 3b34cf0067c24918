#!/usr/bin/env bash
# On one GPU: parallel.exchange_every: auto with cuda-cluster. The MPI
# agreement tests on cuda-cluster (a fixed 2D plan of k = 3, so auto means
# deep halos of 3 steps; N ranks bitwise equal to one rank, every case), then
# a 2D heat case on 2 ranks sharing the GPU (mpi-host) with exchange_every
# and overlap 1/on, auto/on and auto/auto: what auto chose, and the time.
# Logs to OUT_DIR.
#   scripts/gpu-exchange-check.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
status=0
for ranks in 2 3; do
  log="$out/agreement_cluster_$ranks.log"
  HEATWAVE_TEST_BACKEND=cuda-cluster HEATWAVE_TEST_TRANSPORT=mpi-host HEATWAVE_CLUSTER_PLAN=1,2,32,8,0,3,1 \
    timeout 600 mpirun --oversubscribe -n $ranks "$build/tests/heatwave_tests" --gtest_filter='*MpiAgreement.*' \
    >"$log" 2>&1 || status=1
  echo "cuda-cluster agreement (exchange_every 1, 2-3, auto) on $ranks ranks: $(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^\[  (PASSED|FAILED)' | sort -u | tr '\n' ' ')"
done
work=$(mktemp -d)
cd "$work"
# exchange_every / overlap: the old default (1, on), deep halos with the
# one-step overlap, and the new default (auto, auto: deep halos, no overlap).
for run in "1 true" "auto true" "auto auto"; do
  read -r every overlap <<<"$run"
  tag="heat2d_every-${every}_overlap-$overlap"
  printf 'equation: heat\nprecision: float32\ngrid: {points: [8192, 8192]}\ntime: {dt: auto, steps: 960}\ninitial: {type: random, seed: 3}\nbackend: cuda-cluster\nparallel: {exchange_every: %s, overlap: %s, halo_transport: mpi-host}\ndiagnostics: {every: 0}\nmetrics: {file: %s/%s.json}\n' \
    "$every" "$overlap" "$out" "$tag" >case.yaml
  timeout 300 mpirun -n 2 "$build/heatwave" run case.yaml >"$out/$tag.log" 2>&1 || { echo "FAIL: $tag"; status=1; }
  grep -E "halos exchanged|step +960|done:|phases" "$out/$tag.log" | sed "s/^.*info[^:]*: /$tag: /"
done
if [[ $(grep -h "step      960" "$out"/heat2d_every-*.log | sed 's/^.*step/step/' | sort -u | wc -l) -ne 1 ]]; then
  echo "FAIL: the runs end in different states"; status=1
fi
exit $status
