#!/usr/bin/env bash
# The batch templates on a real (one-node, localhost) Slurm:
#  A. jobs/heatwave-1gpu.sbatch runs a case to the end (1 rank);
#  B. jobs/heatwave-multinode.sbatch runs it on 2 ranks; mid-run the batch
#     script gets USR1 (what --signal=B:USR1@120 sends before the time limit),
#     heatwave checkpoints and exits 75, the job requeues itself, restarts
#     from the latest checkpoint and finishes bitwise equal to A;
#  C. the same, but SIGTERM reaches every process of the job (scancel
#     --signal=TERM --full: a time limit or a preemption without the USR1
#     warning): Open MPI's mpirun exits 1, not 75, and the job requeues on
#     the stop marker heatwave leaves in checkpoint.dir, bitwise equal to A.
# Skips (exit 77) with the reason where Slurm cannot start.
#   slurm_test.sh HEATWAVE SOURCE_DIR
set -u
heatwave=$(realpath "$1")
src=$(realpath "$2")
source "$src/tests/jobs/slurm_cluster.sh"
work=$(mktemp -d /tmp/heatwave-slurm.XXXXXX)
cleanup() { slurm_stop; rm -rf "$work"; }
trap cleanup EXIT
slurm_start "$work/cluster" || exit 77
fail() {
  echo "FAIL: $*"
  timeout 10 scontrol show job 2>/dev/null | grep -E "JobId|JobState|Reason"
  for f in "$work"/*/heatwave-*.out; do echo "--- $f"; grep -v "^  " "$f"; done
  exit 1
}
# mpirun inside the job runs as root here.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

# ~15 s on one core (~5 s on two ranks), so the signals land mid-run.
mkdir -p "$work/a" "$work/b" "$work/c"
for d in a b c; do cat >"$work/$d/case.yaml" <<YAML
equation: heat
grid: {points: [256, 256]}
time: {dt: auto, steps: 72000}
boundary: {default: {type: dirichlet, value: 0.5}, x_low: neumann}
initial: {type: random, seed: 3}
backend: host
threads: 1
progress: {seconds: 0.2}
metrics: {file: metrics.json}
checkpoint: {every: 72000, keep: 2, dir: checkpoints}
YAML
done
submit() {  # submit DIR TEMPLATE [sbatch options]: prints the job id
  local dir=$1 template=$2
  shift 2
  timeout 20 sbatch --parsable --chdir="$dir" --export="ALL,CASE=case.yaml,HEATWAVE=$heatwave" "$@" "$src/jobs/$template"
}

start=$SECONDS
a=$(submit "$work/a" heatwave-1gpu.sbatch --time=5 --cpus-per-task=1) || fail "sbatch refused job A"
state=$(wait_job "$a" 60)
[[ $state == COMPLETED ]] || fail "job A ended $state, expected COMPLETED"
grep -q "heatwave-job: heatwave exited 0" "$work/a/heatwave-$a.out" || fail "job A: no clean exit in its log"
[[ -f $work/a/checkpoints/checkpoint_000072000.h5 && -f $work/a/metrics.json ]] || fail "job A left no final checkpoint/metrics"
echo "job A ($a, 1 rank, heatwave-1gpu.sbatch): COMPLETED in $((SECONDS - start)) s"

start=$SECONDS
b=$(submit "$work/b" heatwave-multinode.sbatch --time=5 --nodes=1 --ntasks-per-node=2 --gpus-per-node=2 \
      --cpus-per-task=1) || fail "sbatch refused job B"
for _ in $(seq 240); do grep -q "info: progress:" "$work/b/heatwave-$b.out" 2>/dev/null && break; sleep 0.25; done
grep -q "info: progress:" "$work/b/heatwave-$b.out" || fail "job B never reported progress"
timeout 10 scancel --signal=USR1 --batch "$b" || fail "scancel --signal=USR1 --batch failed"
state=""
for _ in $(seq 240); do
  state=$(wait_job "$b" 90)
  restarts=$(timeout 10 scontrol show job "$b" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
  [[ $state == COMPLETED && ${restarts:-0} -ge 1 ]] && break
  [[ $state == COMPLETED ]] || break
  sleep 0.5  # COMPLETED before the requeue: look again
done
log=$work/b/heatwave-$b.out
[[ $state == COMPLETED ]] || fail "job B ended $state, expected COMPLETED"
[[ ${restarts:-0} -eq 1 ]] || fail "job B restarted ${restarts:-0} times, expected 1"
grep -q "checkpointed (exit 75, checkpoints/stopped): requeueing job $b" "$log" || fail "job B did not requeue on exit 75"
grep -q "run 2, 2 ranks" "$log" && grep -q -- "--restart latest" "$log" || fail "job B's second run did not restart"
grep -q "restarted from checkpoints/checkpoint_" "$log" || fail "heatwave did not restart from a checkpoint"
grep -q "heatwave-job: heatwave exited 0" "$log" || fail "job B's second run did not finish cleanly"
echo "job B ($b, 2 ranks, heatwave-multinode.sbatch): USR1, exit 75, requeued, restarted, COMPLETED in $((SECONDS - start)) s"
grep -E "stop requested|restarted from" "$log"

start=$SECONDS
# mpirun waits odls_base_sigkill_timeout seconds (the template's default 12) after its own SIGTERM: 2 keeps the test short.
c=$(submit "$work/c" heatwave-multinode.sbatch --time=5 --nodes=1 --ntasks-per-node=2 --gpus-per-node=2 \
      --cpus-per-task=1 --export="ALL,CASE=case.yaml,HEATWAVE=$heatwave,OMPI_MCA_odls_base_sigkill_timeout=2") ||
  fail "sbatch refused job C"
for _ in $(seq 240); do grep -q "info: progress:" "$work/c/heatwave-$c.out" 2>/dev/null && break; sleep 0.25; done
grep -q "info: progress:" "$work/c/heatwave-$c.out" || fail "job C never reported progress"
timeout 10 scancel --signal=TERM --full "$c" || fail "scancel --signal=TERM --full failed"
state=""
for _ in $(seq 240); do
  state=$(wait_job "$c" 90)
  restarts=$(timeout 10 scontrol show job "$c" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
  [[ $state == COMPLETED && ${restarts:-0} -ge 1 ]] && break
  [[ $state == COMPLETED ]] || break
  sleep 0.5
done
log=$work/c/heatwave-$c.out
[[ $state == COMPLETED && ${restarts:-0} -eq 1 ]] || fail "job C ended $state after ${restarts:-0} restarts, expected COMPLETED after 1"
# (heatwave's own "stop requested" line is not there: mpirun stops passing output on once signalled.)
grep -q "restarted from checkpoints/checkpoint_" "$log" || fail "job C: heatwave did not restart from its SIGTERM checkpoint"
grep -q "checkpointed (exit [0-9]*, checkpoints/stopped): requeueing job $c" "$log" || fail "job C did not requeue"
grep -q "heatwave-job: heatwave exited 0" "$log" || fail "job C's second run did not finish cleanly"
echo "job C ($c, 2 ranks, SIGTERM to every process): $(grep -o "checkpointed (exit [0-9]*" "$log"), requeued on the marker, COMPLETED in $((SECONDS - start)) s"

/usr/bin/python3 - "$work/a/checkpoints/checkpoint_000072000.h5" "$work/b/checkpoints/checkpoint_000072000.h5" \
  "$work/c/checkpoints/checkpoint_000072000.h5" <<'PY' || fail "results differ"
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")
ua = a["u"][...]
for path in sys.argv[2:]:
    b = h5py.File(path, "r")
    ub = b["u"][...]
    assert ua.shape == ub.shape == (256, 256) and ua.dtype == np.float64, (ua.shape, ub.shape, ua.dtype)
    assert a.attrs["step"] == b.attrs["step"] == 72000
    assert b.attrs["ranks"] == 2, b.attrs["ranks"]
    differing = int(np.count_nonzero(ua.view(np.uint64) != ub.view(np.uint64)))
    assert differing == 0, f"{path}: {differing} of {ua.size} values differ from the uninterrupted run"
print("requeued 2-rank jobs (USR1; SIGTERM to every process) == uninterrupted 1-rank job, bitwise:", ua.size, "values")
PY
echo "PASS"
