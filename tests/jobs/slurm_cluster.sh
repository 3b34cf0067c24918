# A one-node Slurm cluster on this machine for tests, in a private folder
# with its own munged socket and ports (nothing under /etc is touched).
#   source slurm_cluster.sh; slurm_start DIR || exit 77; ...; slurm_stop
# Needs root (slurmd launches jobs as their user) and Debian's slurm-wlm + munge.
# The node offers 2 fake GPUs (gres backed by /dev/null nodes) so the templates'
# --gpus directives schedule; the test cases run on the host backend.

slurm_pids=()

slurm_stop() {
  local pid
  # Our own daemons only, by pid; then whatever jobs they left.
  for pid in "${slurm_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${slurm_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  slurm_pids=()
}

# slurm_start DIR: 0 when the node is idle and takes jobs; otherwise prints
# why and returns 1 (the caller skips).
slurm_start() {
  local dir=$1 tool
  for tool in munged slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/install-deps.sh installs slurm-wlm, munge)"; return 1; }
  done
  [[ $(id -u) -eq 0 ]] || { echo "SKIP: a test Slurm cluster needs root (slurmd runs jobs as their user)"; return 1; }
  mkdir -p "$dir"/{state,spool,log}
  chmod 700 "$dir"
  # Ports away from the defaults (6817/6818) and from other concurrent tests.
  local base=$((20000 + ($$ % 2000) * 4)) host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge.key"
  munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge.seed" --foreground >"$dir/log/munged.stdout" 2>&1 &
  slurm_pids+=($!)
  cat >"$dir/slurm.conf" <<CONF
ClusterName=heatwavetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SrunPortRange=$((base + 2))-$((base + 3))
AuthType=auth/munge
CredType=cred/munge
# cred_expire also sets how long a requeued job waits before it may start again (default 120 s).
AuthInfo=socket=$dir/munge.sock,cred_expire=10
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
# A requeued job becomes eligible later (cred_expire) with no event to start it: look every 2 s.
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
KillWait=10
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  # Slurm drops GPUs without device files: two character devices that are /dev/null.
  mknod "$dir/fakegpu0" c 1 3 && mknod "$dir/fakegpu1" c 1 3
  echo "NodeName=$host Name=gpu File=$dir/fakegpu[0-1]" >"$dir/gres.conf"
  export SLURM_CONF=$dir/slurm.conf
  for _ in $(seq 50); do [[ -S $dir/munge.sock ]] && break; sleep 0.1; done
  [[ -S $dir/munge.sock ]] || { echo "SKIP: munged did not start"; cat "$dir/log/munged.log"; return 1; }
  slurmctld -D -c -f "$SLURM_CONF" >"$dir/log/slurmctld.stdout" 2>&1 &
  slurm_pids+=($!)
  slurmd -D -N "$host" -f "$SLURM_CONF" >"$dir/log/slurmd.stdout" 2>&1 &
  slurm_pids+=($!)
  local state=""
  for _ in $(seq 60); do
    state=$(timeout 5 sinfo -h -N -o %t 2>/dev/null)
    [[ $state == idle ]] && { echo "slurm: node $host idle ($cpus CPUs, ports $base-$((base + 3)))"; return 0; }
    sleep 0.5
  done
  echo "SKIP: the test Slurm node did not come up (state '${state:-no answer}')"
  tail -n 20 "$dir"/log/slurmctld.log "$dir"/log/slurmd.log "$dir"/log/*.stdout 2>/dev/null
  return 1
}

# job_state ID: the job's state (PENDING, RUNNING, COMPLETED, FAILED...).
job_state() { timeout 10 scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }

# wait_job ID SECONDS: waits for the job to end; prints its final state.
wait_job() {
  local state=""
  for _ in $(seq $(($2 * 2))); do
    state=$(job_state "$1")
    case $state in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) break ;; esac
    sleep 0.5
  done
  echo "$state"
}
