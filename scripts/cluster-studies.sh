#!/usr/bin/env bash
# Issue 16's studies on a machine with 2 GPUs (nvidia-h200-x2), the same runs
# as configs/studies/cluster-*.yaml (jobs/study.py needs PyYAML and
# matplotlib, which GPU images may lack): heat fp32 on 1 and 2 GPUs, one rank
# a GPU, three repeats each, interleaved:
#   weak 2D 16384^2 a GPU, 4800 steps: cuda-cluster with nccl and with
#   mpi-host, and cuda with nccl (the backend it must not fall below);
#   weak 3D 512^3 a GPU, 480 steps, cuda-cluster, nccl;
#   strong 2D 32768^2, 2400 steps, cuda-cluster, nccl.
# Metrics JSON, logs and the medians (scripts/summarize-runs.py) to OUT_DIR.
#   scripts/cluster-studies.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=4
status=0
work=$(mktemp -d)
cd "$work"
run() {  # run TAG RANKS BACKEND TRANSPORT POINTS STEPS
  local tag=$1 ranks=$2 backend=$3 transport=$4 points=$5 steps=$6
  printf 'equation: heat\nprecision: float32\ngrid: {points: %s}\ntime: {dt: auto, steps: %s}\nboundary: {default: {type: dirichlet, value: 0.0}}\ninitial: {type: sine, modes: [1, 1%s], amplitude: 1.0}\nbackend: %s\nparallel: {halo_transport: %s}\ndiagnostics: {every: 0}\nprogress: {seconds: 0}\nmetrics: {file: %s/%s.json}\n' \
    "$points" "$steps" "$([[ $points == *,*,* ]] && echo ", 1")" "$backend" "$transport" "$out" "$tag" >"$tag.yaml"
  if ! timeout 300 mpirun --bind-to none -n "$ranks" "$build/heatwave" run "$tag.yaml" >"$out/$tag.log" 2>&1; then
    echo "FAIL: $tag (exit $?)"
    tail -5 "$out/$tag.log"
    status=1
  fi
}
for repeat in 1 2 3; do
  for ranks in 1 2; do
    run "weak2d-cluster-nccl_ranks-${ranks}_$repeat" $ranks cuda-cluster nccl "[$((16384 * ranks)), 16384]" 4800
    run "weak2d-cluster-mpihost_ranks-${ranks}_$repeat" $ranks cuda-cluster mpi-host "[$((16384 * ranks)), 16384]" 4800
    run "weak2d-cuda-nccl_ranks-${ranks}_$repeat" $ranks cuda nccl "[$((16384 * ranks)), 16384]" 4800
    run "weak3d-cluster-nccl_ranks-${ranks}_$repeat" $ranks cuda-cluster nccl "[$((512 * ranks)), 512, 512]" 480
    run "strong2d-cluster-nccl_ranks-${ranks}_$repeat" $ranks cuda-cluster nccl "[32768, 32768]" 2400
  done
done
grep -h "halos exchanged" "$out"/*ranks-2_1.log | sed 's/^.*info[^:]*: //' | sort -u
/usr/bin/python3 "$here/summarize-runs.py" "$out" || status=1
exit $status
