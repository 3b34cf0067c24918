#!/usr/bin/env bash
# The multi-GPU studies of issues 16 and 20 on the GPUs of one machine, the
# same runs as configs/studies/cluster-*.yaml (jobs/study.py needs PyYAML and
# matplotlib, which GPU images may lack): heat fp32 on 1, 2, 4, ... up to
# MAX_GPUS (default: every GPU nvidia-smi lists), one rank a GPU, three
# repeats each, interleaved:
#   weak2d-cluster-nccl     16384^2 a GPU, 4800 steps, cuda-cluster, nccl;
#   weak2d-cluster-mpihost  the same through mpi-host;
#   weak2d-cuda-nccl        the same on cuda (the backend it must not fall below);
#   weak3d-cluster-nccl     512^3 a GPU, 480 steps, cuda-cluster, nccl;
#   strong2d-cluster-nccl   32768^2, 2400 steps, cuda-cluster, nccl.
# HEATWAVE_STUDIES (space-separated names from the list) runs a subset, so a
# machine with many GPUs can split the work over calls of limited time.
# Metrics JSON, logs and the medians (scripts/summarize-runs.py, with the
# slowest rank's phase times) go to OUT_DIR.
#   scripts/cluster-studies.sh BUILD_DIR OUT_DIR [MAX_GPUS]
set -uo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
max=${3:-$(nvidia-smi -L | wc -l)}
all="weak2d-cluster-nccl weak2d-cluster-mpihost weak2d-cuda-nccl weak3d-cluster-nccl strong2d-cluster-nccl"
studies=${HEATWAVE_STUDIES:-$all}
for name in $studies; do
  [[ " $all " == *" $name "* ]] || { echo "cluster-studies: unknown study '$name' in HEATWAVE_STUDIES (known: $all)" >&2; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# NVLink multicast (NVLS) stays off on the lent machines.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=4 NCCL_NVLS_ENABLE=0
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
weak_points() {  # weak_points RANKS N DIMS: the grid of an N^DIMS box a rank, laid out as
  # jobs/study.py's dims_create does for a power of two (x doubles first, then y, ...)
  local ranks=$1 n=$2 dims=$3 axis=0 points=()
  for ((a = 0; a < dims; a++)); do points[a]=$n; done
  for ((r = ranks; r > 1; r /= 2, axis = (axis + 1) % dims)); do points[axis]=$((points[axis] * 2)); done
  local IFS=,
  echo "[${points[*]}]"
}
study() {  # study NAME RANKS REPEAT: one run of a named study on RANKS GPUs
  local name=$1 ranks=$2 tag="${1}_ranks-${2}_$3"
  case $name in
    weak2d-cluster-nccl) run "$tag" "$ranks" cuda-cluster nccl "$(weak_points "$ranks" 16384 2)" 4800 ;;
    weak2d-cluster-mpihost) run "$tag" "$ranks" cuda-cluster mpi-host "$(weak_points "$ranks" 16384 2)" 4800 ;;
    weak2d-cuda-nccl) run "$tag" "$ranks" cuda nccl "$(weak_points "$ranks" 16384 2)" 4800 ;;
    weak3d-cluster-nccl) run "$tag" "$ranks" cuda-cluster nccl "$(weak_points "$ranks" 512 3)" 480 ;;
    strong2d-cluster-nccl) run "$tag" "$ranks" cuda-cluster nccl "[32768, 32768]" 2400 ;;
  esac
}
for repeat in 1 2 3; do
  for ((ranks = 1; ranks <= max; ranks *= 2)); do
    for name in $studies; do study "$name" "$ranks" "$repeat"; done
  done
done
grep -hs "halos exchanged" "$out"/*ranks-[2-9]_1.log | sed 's/^.*info[^:]*: //' | sort -u
/usr/bin/python3 "$here/summarize-runs.py" "$out" || status=1
exit $status
