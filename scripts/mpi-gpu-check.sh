#!/usr/bin/env bash
# On a machine with GPUs: the MPI agreement tests on the CUDA backend (N ranks
# bitwise equal to 1 rank, every case, overlap on and off, deep halos) through
# each halo transport, the deep 3D family's agreement cases on cuda-cluster
# with its plan forced, then a larger case on 1 and 2 ranks per transport with
# overlap on and off, whose logs and metrics JSON (phase times) go to OUT_DIR.
#   scripts/mpi-gpu-check.sh BUILD_DIR OUT_DIR
# HEATWAVE_GPU_TRANSPORTS: the transports (default: nccl and mpi-host where the
# build has NCCL, plus mpi-cuda-aware where the MPI is CUDA-aware);
# HEATWAVE_GPU_RANKS: the rank counts of the agreement runs (default 1 2 3 4);
# HEATWAVE_GPU_PARTS: which parts run (default "agreement deep runs").
# nccl needs a GPU per rank: with more ranks than GPUs it is skipped.
set -uo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
info=$("$build/heatwave" info)
transports=${HEATWAVE_GPU_TRANSPORTS:-$(echo "$info" | sed -n 's/^halo transports: \([^(]*\).*/\1/p' | tr -d ',')}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "transports: $transports; $gpus GPU(s)"
status=0
parts=${HEATWAVE_GPU_PARTS:-agreement deep runs}
agreement_transports=$transports
[[ $parts == *agreement* ]] || agreement_transports=""
for transport in $agreement_transports; do
  for ranks in ${HEATWAVE_GPU_RANKS:-1 2 3 4}; do
    if [[ $transport == nccl && $ranks -gt $gpus ]]; then echo "$transport on $ranks ranks: skipped (more ranks than GPUs)"; continue; fi
    log="$out/agreement_${transport}_$ranks.log"
    HEATWAVE_TEST_BACKEND=cuda HEATWAVE_TEST_TRANSPORT=$transport timeout 600 mpirun --oversubscribe -n $ranks \
      "$build/tests/heatwave_tests" --gtest_filter='*MpiAgreement.*' >"$log" 2>&1 || status=1
    echo "cuda agreement through $transport on $ranks ranks: $(grep -E 'PASSED|FAILED' "$log" | head -3 | tr '\n' ' ')"
  done
done
# cuda-cluster's deep 3D family forced (HEATWAVE_CLUSTER_PLAN at each case's
# compiled k; it runs ranks along z, and a decomposition it cannot take
# falls back, which the log's backend lines say): the cases sized for its
# tiles, on 2 and 3 ranks, where the build has it.
if [[ $parts == *deep* ]] && echo "$info" | grep -q "3D deep"; then
  for c in heat3D_dirichlet_radius1_deep_tiles:deep,64,32,8 wave3D_mixed_radius1_media_sources_deep_tiles:deep,64,32,5; do
    name=${c%%:*} plan=${c#*:}
    for ranks in ${HEATWAVE_GPU_DEEP_RANKS:-2 3}; do
      log="$out/agreement_deep_${name}_$ranks.log"
      HEATWAVE_TEST_BACKEND=cuda-cluster HEATWAVE_CLUSTER_PLAN=$plan timeout 600 mpirun --oversubscribe -n $ranks \
        "$build/tests/heatwave_tests" --gtest_filter="*MpiAgreement.*/$name" >"$log" 2>&1 || status=1
      echo "deep family ($plan) agreement, $name on $ranks ranks: $(grep -E 'PASSED|FAILED' "$log" | head -3 | tr '\n' ' ')"
      grep -E "^  .* on $ranks ranks along" "$log" | sed 's/^ */    /' | sort | uniq -c | head -12
    done
  done
fi
if [[ $parts == *runs* ]]; then
  work=$(mktemp -d)
  cd "$work"
  runs=("1 true auto")
  for transport in $transports; do runs+=("2 true $transport" "2 false $transport"); done
  for run in "${runs[@]}"; do
    read -r ranks overlap transport <<<"$run"
    tag="wave3d_n${ranks}_overlap-${overlap}_${transport}"
    printf 'equation: wave\ngrid: {points: [512, 512, 513]}\nstencil: {radius: 2}\ntime: {dt: auto, steps: 200}\nboundary: {default: {type: neumann, value: 0.2}, z_low: periodic, z_high: periodic}\ninitial: {type: sine, modes: [1, 2, 1]}\nbackend: cuda\nparallel: {overlap: %s, halo_transport: %s}\ndiagnostics: {every: 0}\nmetrics: {file: %s/%s.json}\n' \
      "$overlap" "$transport" "$out" "$tag" >"$tag.yaml"
    timeout 300 mpirun -n "$ranks" "$build/heatwave" run "$tag.yaml" >"$out/$tag.log" 2>&1 || { echo "FAIL: $tag"; status=1; }
    grep -E "backend|halo exchange|step +200|done:|phases" "$out/$tag.log" | sed "s/^.*info[^:]*: /$tag: /"
  done
  # The final states must agree bitwise whatever the transport: the step-200 lines (min, max, mean, L2, energy) alike.
  if [[ $(grep -h "step      200" "$out"/wave3d_n2_*.log | sed 's/^.*step/step/' | sort -u | wc -l) -gt 1 ]]; then
    echo "FAIL: the 2-rank runs' final diagnostics differ between transports"; status=1
  fi
fi
exit $status
