#!/usr/bin/env bash
# On a machine with GPUs: the MPI agreement tests on the CUDA backend (N ranks
# bitwise equal to 1 rank, every case, overlap on and off, deep halos; ranks
# beyond the GPU count share GPUs), then 1 and 2 ranks of a larger case with
# overlap on and off, whose logs and metrics JSON (phase times) go to OUT_DIR.
#   scripts/mpi-gpu-check.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
status=0
for ranks in 1 2 3 4; do
  HEATWAVE_TEST_BACKEND=cuda timeout 300 mpirun --oversubscribe -n $ranks "$build/tests/heatwave_tests" \
    --gtest_filter='*MpiAgreement.*' >"$out/agreement_$ranks.log" 2>&1 || status=1
  echo "cuda agreement on $ranks ranks: $(grep -E 'PASSED|FAILED' "$out/agreement_$ranks.log" | head -3 | tr '\n' ' ')"
done
work=$(mktemp -d)
cd "$work"
for run in "1 true" "2 true" "2 false"; do
  read -r ranks overlap <<<"$run"
  tag="wave3d_n${ranks}_overlap-${overlap}"
  printf 'equation: wave\ngrid: {points: [512, 512, 513]}\nstencil: {radius: 2}\ntime: {dt: auto, steps: 200}\nboundary: {default: {type: neumann, value: 0.2}, z_low: periodic, z_high: periodic}\ninitial: {type: sine, modes: [1, 2, 1]}\nbackend: cuda\nparallel: {overlap: %s}\ndiagnostics: {every: 0}\nmetrics: {file: %s/%s.json}\n' \
    "$overlap" "$out" "$tag" >"$tag.yaml"
  timeout 300 mpirun -n "$ranks" "$build/heatwave" run "$tag.yaml" >"$out/$tag.log" 2>&1 || { echo "FAIL: $tag"; status=1; }
  grep -E "backend|halo exchange|step +200|done:|phases" "$out/$tag.log" | sed "s/^.*info[^:]*: /$tag: /"
done
exit $status
