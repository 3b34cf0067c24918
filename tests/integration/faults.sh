#!/usr/bin/env bash
# The fault battery: full disks, read-only directories, two runs in one
# directory, grids larger than memory, restarts with another dt, damaged
# checkpoints, hostile inputs and typos. Each case must end as documented
# (docs/io.md, README "Troubleshooting"): its exit code, a message on stderr
# naming the file, key or limit, nothing crashed, no colour codes in logs,
# and good data left as it was. Prints "N passed, N failed" (and the cases
# this machine cannot stage, as skipped, with the reason).
# Usage: faults.sh HEATWAVE [SOURCE_DIR]
set -u
heatwave=$(realpath "$1")
source_dir=${2:-$(dirname "$0")/../..}
source_dir=$(realpath "$source_dir")
work=$(mktemp -d)
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
python=/usr/bin/python3
passed=0 failed=0 skipped=0

pass() { passed=$((passed + 1)); echo "ok    $1"; }
fail() {
  failed=$((failed + 1))
  echo "FAIL  $1: $2"
  for f in out.txt err.txt; do [[ -s $f ]] && { echo "  --- $f:"; tail -4 "$f" | sed 's/^/  /'; }; done
}
skip() { skipped=$((skipped + 1)); echo "skip  $1 ($2)"; }

# check NAME CODE [FRAGMENT...] -- COMMAND...: runs COMMAND (60 s at most),
# stdout to out.txt, stderr to err.txt; the exit code must be CODE, every
# FRAGMENT must be on stderr, and nothing may crash or print colour codes.
# Returns 0 when the case held (the caller may check more, then pass/fail).
check() {
  local name=$1 code=$2
  shift 2
  local fragments=()
  while [[ $1 != -- ]]; do fragments+=("$1"); shift; done
  shift
  timeout 60 "$@" >out.txt 2>err.txt
  local got=$?
  why=""
  [[ $got -eq $code ]] || why="exit $got, expected $code"
  for f in "${fragments[@]}"; do grep -qF -- "$f" err.txt || why="${why:+$why; }'$f' not on stderr"; done
  grep -qE "Segmentation|core dumped|terminate called|internal error|H5F__close_cb" out.txt err.txt &&
    why="${why:+$why; }crashed"
  grep -q $'\x1b\\[' out.txt err.txt && why="${why:+$why; }colour codes in a log that is not a terminal"
  [[ -z $why ]]
}
# check_case: check, then pass or fail on its own.
check_case() {
  local name=$1
  if check "$@"; then pass "$name"; else fail "$name" "$why"; fi
}
# Prefixes that run a command as `mpirun -n N` with a file-size limit of 300
# KiB on the ranks only (the launcher's shared-memory files stay unlimited;
# TCP between ranks, so no shared-memory segment of theirs meets it either).
limited_1=(mpirun --oversubscribe --mca btl self,tcp -n 1 bash -c 'ulimit -f 300; exec "$@"' bash)
limited_2=(mpirun --oversubscribe --mca btl self,tcp -n 2 bash -c 'ulimit -f 300; exec "$@"' bash)
# A tmpfs at DIR (root only): size and options.
mount_tmpfs() {
  mkdir -p "$1" && mount -t tmpfs -o "$2" tmpfs "$1" 2>/dev/null && mounts+=("$work/$1")
}

case_yaml() {  # case_yaml STEPS CHECKPOINT_DIR [EXTRA]
  cat <<YAML
equation: heat
grid: {points: [256, 256]}
time: {dt: 1.0e-6, steps: $1}
initial: {type: random, seed: 3}
backend: host
threads: 1
metrics: {file: ""}
checkpoint: {every: 20, keep: 5, dir: $2}
${3:-}
YAML
}

echo "== full disks, quotas, read-only directories"
case_yaml 20 ck >first.yaml
case_yaml 40 ck >second.yaml
"$heatwave" run first.yaml >/dev/null 2>&1
cp ck/checkpoint_000000020.h5 good20.h5
if check "disk full (file-size limit, 1 rank): exit 13" 13 "ck/checkpoint_000000040.h5.tmp" "File too large" -- \
  "${limited_1[@]}" "$heatwave" run second.yaml --restart latest; then
  if ls ck | grep -q "\.tmp\|checkpoint_000000040"; then
    fail "disk full (1 rank)" "left $(ls ck | tr '\n' ' ')"
  elif ! cmp -s ck/checkpoint_000000020.h5 good20.h5; then
    fail "disk full (1 rank)" "the good checkpoint changed"
  else
    pass "disk full (file-size limit, 1 rank): exit 13, no .tmp left, the newest good checkpoint untouched"
  fi
else
  fail "disk full (file-size limit, 1 rank)" "$why"
fi
check_case "restart after the failed write: --restart latest, exit 0" 0 -- "$heatwave" run second.yaml --restart latest
rm -rf ck
case_yaml 20 ck2 >two.yaml
check_case "disk full (file-size limit, 2 ranks): exit 13 on every rank" 13 "checkpoint_000000020.h5.tmp" \
  "File too large" -- "${limited_2[@]}" "$heatwave" run two.yaml
case_yaml 20 out "output: {every: 20, dir: out}" | sed 's/checkpoint: {every: 20/checkpoint: {every: 0/' >out.yaml
check_case "output write past the limit: exit 13 naming the output" 13 "out/fields_000000000.h5.tmp" \
  "File too large" -- "${limited_1[@]}" "$heatwave" run out.yaml

if [[ $(id -u) -eq 0 ]] && mount_tmpfs full size=256k; then
  case_yaml 20 full/ck >full.yaml
  if check "no space left (a full 256 KiB tmpfs): exit 13" 13 "full/ck/checkpoint_000000020.h5.tmp" \
    "No space left on device" -- "$heatwave" run full.yaml; then
    if ls full/ck | grep -q "\.h5"; then fail "no space left" "left $(ls full/ck)"; else
      pass "no space left (a full 256 KiB tmpfs): exit 13, nothing left behind"
    fi
  else
    fail "no space left" "$why"
  fi
else
  skip "no space left (tmpfs)" "needs root to mount a small tmpfs; the file-size limit cases above stand in"
fi
if [[ $(id -u) -eq 0 ]] && mount_tmpfs ro ro,size=64k; then
  case_yaml 20 ro >ro.yaml
  check_case "read-only directory: exit 13" 13 "ro/.heatwave.lock" "Read-only file system" -- "$heatwave" run ro.yaml
elif [[ $(id -u) -ne 0 ]]; then
  mkdir ro && chmod a-w ro
  case_yaml 20 ro >ro.yaml
  check_case "read-only directory: exit 13" 13 "ro/.heatwave.lock" "Permission denied" -- "$heatwave" run ro.yaml
else
  skip "read-only directory" "root cannot mount a read-only tmpfs here"
fi

echo "== one run per directory"
case_yaml 2000000 shared "progress: {seconds: 0.1}" >long.yaml
"$heatwave" run long.yaml >holder.txt 2>&1 &
holder=$!
for _ in $(seq 200); do grep -q "info: progress:" holder.txt && break; sleep 0.05; done
check_case "a second run in a held directory: exit 19 naming the holder" 19 \
  "shared (checkpoint.dir) is in use by another heatwave run" \
  "pid $holder" "config hash" -- "$heatwave" run long.yaml
kill -9 $holder
wait $holder 2>/dev/null
case_yaml 20 shared >short.yaml
check_case "a dead holder's lock is taken over, with a warning" 0 "taking over a stale lock" "pid $holder" -- \
  "$heatwave" run short.yaml --overwrite

echo "== memory"
printf 'equation: heat\ngrid: {points: [1000000, 1000000]}\ntime: {steps: 10}\ninitial: {type: constant, value: 1}\nbackend: host\n' >huge.yaml
check_case "a grid of 10^12 points: exit 7, no bad_alloc" 7 "huge.yaml" "needs" "GiB available (host)" -- \
  "$heatwave" run huge.yaml
available_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
n=$($python -c "import math; print(int(math.sqrt(1.2 * $available_kib * 1024 / 16)))")
printf 'equation: heat\ngrid: {points: [%s, %s]}\ntime: {steps: 10}\ninitial: {type: constant, value: 1}\nbackend: host\n' "$n" "$n" >over.yaml
start=$SECONDS
if check "a grid just over the available memory ($n^2 float64): exit 7" 7 "needs" "available (host)" -- \
  "$heatwave" run over.yaml && ((SECONDS - start < 20)); then
  pass "a grid just over the available memory ($n^2 float64): exit 7 in $((SECONDS - start)) s"
else
  fail "a grid just over the available memory" "${why:-took $((SECONDS - start)) s}"
fi

echo "== restarts keep the checkpoint's clock"
restart_yaml() {  # restart_yaml DT STEPS
  printf 'equation: heat\ngrid: {points: [64, 48]}\ntime: {dt: %s, steps: %s}\ninitial: {type: random, seed: 3}\n' "$1" "$2"
  printf 'backend: host\nmetrics: {file: ""}\ncheckpoint: {every: 20, keep: 5, dir: rs}\n'
}
restart_yaml 1e-5 40 >r1.yaml
restart_yaml 2e-5 60 >r2.yaml
restart_yaml 1e-5 10 >r3.yaml
"$heatwave" run r1.yaml >/dev/null 2>&1
check_case "restart with another dt: exit 16, --new-dt named" 16 "dt = 1e-05 (step 40, t = 0.0004)" "--new-dt" -- \
  "$heatwave" run r2.yaml --restart rs/checkpoint_000000040.h5
if check "restart with --new-dt" 0 -- "$heatwave" run r2.yaml --restart rs/checkpoint_000000040.h5 --new-dt \
  --metrics newdt.json && $python - <<'PY'; then
import json
m = json.load(open("newdt.json"))
assert m["restart"]["clock"] == {"step": 40, "time": 0.0004, "dt": 2e-05}, m["restart"]
assert abs(m["final"]["time"] - (0.0004 + 20 * 2e-05)) < 1e-15, m["final"]["time"]
PY
  pass "restart with --new-dt: time goes on from t = 0.0004 with dt 2e-5 (metrics restart.clock)"
else
  fail "restart with --new-dt" "${why:-the clock or the final time in the metrics is wrong}"
fi
rm -rf rs && "$heatwave" run r1.yaml >/dev/null 2>&1
check_case "steps before the checkpoint's step: exit 7" 7 "'time.steps' = 10 is before the checkpoint's step 40" -- \
  "$heatwave" run r3.yaml --restart rs/checkpoint_000000040.h5
flip_a_data_bit() {
  $python - "$1" <<'PY'
import sys, h5py
path = sys.argv[1]
with h5py.File(path, "r") as f:
    chunk = f["u"].id.get_chunk_info(0)
with open(path, "r+b") as g:
    g.seek(chunk.byte_offset + 100)
    b = g.read(1)
    g.seek(chunk.byte_offset + 100)
    g.write(bytes([b[0] ^ 1]))
PY
}
check_case "inspect a good checkpoint verifies its checksums" 0 -- "$heatwave" inspect rs/checkpoint_000000020.h5
grep -q "checksums: verified" out.txt || fail "inspect a good checkpoint" "no 'checksums: verified' line"
if ! $python -c "import h5py" 2>/dev/null; then
  skip "a flipped data bit (inspect, --restart latest)" "$python has no h5py to find the chunk to damage"
else
  flip_a_data_bit rs/checkpoint_000000040.h5
  check_case "inspect a checkpoint with a flipped data bit: exit 17" 17 "rs/checkpoint_000000040.h5" "Fletcher32" -- \
    "$heatwave" inspect rs/checkpoint_000000040.h5
  if check "--restart latest skips a checkpoint that does not verify" 0 "skipping rs/checkpoint_000000040.h5" -- \
    "$heatwave" run r1.yaml --restart latest && grep -q "restarted from rs/checkpoint_000000020.h5" out.txt; then
    pass "--restart latest skips the damaged newest checkpoint and restarts from step 20, saying why"
  else
    fail "--restart latest with a damaged newest checkpoint" "${why:-not restarted from step 20}"
  fi
fi

echo "== inputs"
good='equation: heat
grid: {points: [32, 24]}
time: {dt: auto, steps: 20}
initial: {type: sine, modes: [1, 1]}
metrics: {file: ""}'
printf '%s\nequation: wave\n' "$good" >dup.yaml
check_case "a key given twice: exit 4, both places" 4 "dup.yaml:6:1: key 'equation' is given twice" \
  "(first at dup.yaml:1:1)" -- "$heatwave" run dup.yaml
printf 'equation: heat\ngrid: {points: [32, 24], points: [8, 8]}\ntime: {steps: 2}\n' >dupnested.yaml
check_case "a nested key given twice: exit 4" 4 "key 'grid.points' is given twice" -- "$heatwave" run dupnested.yaml
printf '%s\n---\nequation: wave\n' "$good" >docs.yaml
check_case "a second YAML document: exit 4" 4 "docs.yaml:7:1: a second YAML document" -- "$heatwave" run docs.yaml
check_case "/dev/zero as the config: exit 3" 3 "/dev/zero: is not a regular file" -- "$heatwave" run /dev/zero
mkfifo fifo
check_case "a FIFO as the config: exit 3, no hang" 3 "fifo: is not a regular file (a FIFO)" -- "$heatwave" run fifo
mkdir adir
check_case "a directory as the config: exit 3" 3 "adir: is a directory, not a config file" -- "$heatwave" run adir
printf '%s\n' "$good" >good.yaml
check_case "a directory as the checkpoint: exit 3" 3 "adir: is a directory, not an HDF5 file" -- \
  "$heatwave" run good.yaml --restart adir
head -c 2000000 /dev/zero | tr '\0' '#' >big.yaml
check_case "a 2 MB config: exit 3 naming the limit" 3 "more than the config file may be (1048576 bytes)" -- \
  "$heatwave" run big.yaml

echo "== receivers' traces, and an earlier run's files"
wave_yaml() {  # wave_yaml STEPS RECEIVERS [EXTRA]: a 2D wave with a Ricker point source and receivers
  cat <<YAML
equation: wave
grid: {points: [128, 128]}
time: {dt: auto, steps: $1}
initial: {type: constant, value: 0.0}
sources: [{type: point, position: [0.5, 0.5], amplitude: 1.0, time: {type: ricker, frequency: 8.0}}]
backend: host
threads: 1
metrics: {file: ""}
progress: {seconds: 0.1}
receivers: $2
${3:-}
YAML
}
# A 20,000-receiver line every step: 31 MiB of traces against a 20 MB file-size limit.
wave_yaml 200 "{every: 1, file: big.h5, lines: [{from: [0.0, 0.2], to: [1.0, 0.2], count: 20000}]}" >bigtraces.yaml
if check "a traces file past the file-size limit: exit 13 before step 0" 13 "big.h5" "File too large" -- \
  bash -c 'ulimit -f 20000; exec "$@"' bash "$heatwave" run bigtraces.yaml; then
  if ls | grep -q "^big.h5"; then fail "a traces file past the file-size limit" "left $(ls | grep big.h5)"; else
    pass "a traces file past the file-size limit: exit 13 before step 0, nothing left, no crash"
  fi
else
  fail "a traces file past the file-size limit" "$why"
fi
wave_yaml 300 "{every: 1, file: kept.h5, points: [[0.2, 0.5], [0.7, 0.3]]}" \
  "checkpoint: {every: 100, keep: 5, dir: kept-ck}" >kept.yaml
sed 's/steps: 300}/steps: 3000000}/' kept.yaml >kept-longer.yaml
"$heatwave" run kept.yaml >/dev/null 2>&1
"$heatwave" traces kept.h5 >before.txt 2>&1
# Made 10,000x longer on restart: the file with room for every sample (48 MB) cannot be made under the limit.
if check "a restart whose longer traces file cannot be made: exit 13" 13 "kept.h5" "File too large" -- \
  bash -c 'ulimit -f 20000; exec "$@"' bash "$heatwave" run kept-longer.yaml --restart latest &&
  "$heatwave" traces kept.h5 >after.txt 2>&1 && cmp -s before.txt after.txt; then
  pass "a restart whose longer traces file cannot be made: exit 13, the 301 samples there kept as they were"
else
  fail "a restart whose longer traces file cannot be made" "${why:-the traces file changed: $(cat after.txt)}"
fi
wave_yaml 2000000 "{every: 1, file: killed.h5, points: [[0.2, 0.5], [0.7, 0.3]]}" >killed.yaml
"$heatwave" run killed.yaml >killed.txt 2>&1 &
runner=$!
for _ in $(seq 200); do grep -q "info: progress:" killed.txt && break; sleep 0.05; done
sleep 0.5
kill -KILL $runner
wait $runner 2>/dev/null
if check "traces of a run killed with SIGKILL" 0 -- "$heatwave" traces killed.h5 &&
  samples=$(sed -n 's/.* \([0-9]*\) samples.*/\1/p' out.txt) && ((samples >= 256 && samples % 256 == 0)); then
  pass "a run killed with SIGKILL leaves its traces readable: $samples samples, every flush"
else
  fail "traces of a run killed with SIGKILL" "${why:-$(cat out.txt)}"
fi

wave_yaml 1000000 "{every: 1, file: shared.h5, points: [[0.2, 0.5]]}" "checkpoint: {every: 0, dir: one-ck}" >holder.yaml
wave_yaml 100 "{every: 1, file: shared.h5, points: [[0.2, 0.5]]}" "checkpoint: {every: 0, dir: two-ck}" >second.yaml
"$heatwave" run holder.yaml >holder.txt 2>&1 &
holder=$!
for _ in $(seq 200); do grep -q "info: progress:" holder.txt && break; sleep 0.05; done
check_case "a second run on a receivers file in use: exit 19 naming the holder" 19 \
  "shared.h5 (receivers.file) is in use by another heatwave run" "pid $holder" -- "$heatwave" run second.yaml
kill -9 $holder
wait $holder 2>/dev/null
wave_yaml 100 "{every: 1, file: r.h5, points: [[0.2, 0.5]]}" "metrics: {file: r.h5}" | grep -v 'file: ""' >collide.yaml
check_case "metrics.file and receivers.file the same: exit 7 before anything runs" 7 \
  "'receivers.file' and 'metrics.file' both name r.h5" -- "$heatwave" run collide.yaml
wave_yaml 100 "{every: 1, file: ck3/checkpoint_000000100.h5, points: [[0.2, 0.5]]}" \
  "checkpoint: {every: 50, dir: ck3}" >in-ck.yaml
check_case "a receivers file named like a checkpoint in checkpoint.dir: exit 7" 7 \
  "is named like the files heatwave writes and removes in 'checkpoint.dir' = ck3" -- "$heatwave" run in-ck.yaml

wave_yaml 300 "{every: 1, file: moved.h5, points: [[0.2, 0.5], [0.7, 0.3]]}" \
  "checkpoint: {every: 100, keep: 5, dir: moved-ck}" >moved.yaml
"$heatwave" run moved.yaml >/dev/null 2>&1
sed 's/\[0.2, 0.5\], \[0.7/[0.3, 0.3], [0.7/' moved.yaml >moved2.yaml
check_case "a restart with a receiver moved: exit 16 naming it and both places" 16 \
  "receiver 0 is at (0.3, 0.3) in the config, at (0.2, 0.5) in moved.h5" -- \
  "$heatwave" run moved2.yaml --restart moved-ck/checkpoint_000000200.h5
sed 's/every: 1, file/every: 2, file/' moved.yaml >every2.yaml
check_case "a restart with another receivers.every: exit 16" 16 "receivers.every is 2 in the config but was 1" -- \
  "$heatwave" run every2.yaml --restart moved-ck/checkpoint_000000200.h5
sed 's/\[0.7, 0.3\]\]/[0.7, 0.3], [0.9, 0.9]]/' moved.yaml >three.yaml
check_case "a restart with another receiver count: exit 16 (not 17)" 16 \
  "the config has 3 receivers, the checkpoint's run had 2" -- \
  "$heatwave" run three.yaml --restart moved-ck/checkpoint_000000200.h5
"$heatwave" traces moved.h5 >moved-traces.txt 2>&1
grep -q "2 receivers (field u), 301 samples, steps 0 to 300" moved-traces.txt ||
  fail "refused restarts leave the traces as they were" "$(cat moved-traces.txt)"

wave_yaml 10 "{every: 1, file: many.h5, lines: [{from: [0.0, 0.5], to: [1.0, 0.5], count: 100000000}]}" >many.yaml
start=$SECONDS
if check "100,000,000 receivers: exit 7 naming them and the memory" 7 "many.yaml" "100000000 receivers" "needs" \
  "available (host)" "fewer receivers" -- \
  "$heatwave" run many.yaml && ((SECONDS - start < 20)); then
  pass "100,000,000 receivers: exit 7 naming the memory they need, in $((SECONDS - start)) s"
else
  fail "100,000,000 receivers" "${why:-took $((SECONDS - start)) s}"
fi
wave_yaml 40 "{every: 1, file: million.h5, lines: [{from: [0.0, 0.5], to: [1.0, 0.5], count: 1000000}]}" >million.yaml
if check "1,000,000 receivers x 41 samples" 0 -- "$heatwave" run million.yaml; then
  size=$(stat -c %s million.h5)
  data=$((1000000 * 41 * 8 + 1000000 * 2 * 8))  # the traces and the positions
  if ((size < data + data / 20)); then
    pass "1,000,000 receivers x 41 samples: the file is the data ($size bytes for $data)"
  else
    fail "1,000,000 receivers x 41 samples" "$size bytes for $data of data"
  fi
else
  fail "1,000,000 receivers x 41 samples" "$why"
fi
rm -f million.h5

case_yaml 45 ext "output: {every: 20, dir: ext-out}" >ext.yaml
"$heatwave" run ext.yaml >/dev/null 2>&1
if [[ -f ext/checkpoint_000000045.h5 ]]; then
  pass "steps (45) not a multiple of checkpoint.every (20): the final state is checkpointed"
else
  fail "steps not a multiple of checkpoint.every" "no checkpoint of step 45: $(ls ext | tr '\n' ' ')"
fi
check_case "a fresh run over an earlier run's files: exit 20 naming them and both ways" 20 \
  "ext holds 3 checkpoint(s) (step 20 to 45)" "ext-out holds 3 output(s) (step 0 to 40)" "--restart latest" \
  "--overwrite" -- "$heatwave" run ext.yaml
[[ -f ext/checkpoint_000000045.h5 && -f ext-out/fields_000000040.h5 ]] ||
  fail "a refused fresh run keeps the earlier files" "$(ls ext ext-out | tr '\n' ' ')"
check_case "--overwrite replaces an earlier run's files, saying which" 0 "--overwrite: removed what an earlier run left" -- \
  "$heatwave" run ext.yaml --overwrite

# SIGTERM to mpirun itself: it passes the signal on late and kills the ranks soon after (1 s by default).
case_yaml 4000000 term-ck "progress: {seconds: 0.1}" | sed 's/checkpoint: {every: 20,/checkpoint: {every: 0,/' >term.yaml
OMPI_MCA_odls_base_sigkill_timeout=2 mpirun --oversubscribe -n 2 "$heatwave" run term.yaml >term.txt 2>&1 &
runner=$!
for _ in $(seq 200); do grep -q "info: progress:" term.txt && break; sleep 0.05; done
kill -TERM $runner
wait $runner
code=$?
if [[ -f term-ck/stopped ]] && checkpoint=$(sed -n 's/.*after writing \([^;]*\);.*/\1/p' term-ck/stopped) &&
  [[ -f $checkpoint ]]; then
  pass "SIGTERM to mpirun (exit $code): the ranks checkpoint and leave the stop marker a job script requeues on"
else
  fail "SIGTERM to mpirun" "exit $code, no stop marker naming a checkpoint: $(ls term-ck | tr '\n' ' ')"
fi

echo "== sources, lengths, plots"
wave_yaml 10 "{every: 1, file: f.h5, points: [[0.2, 0.5]]}" | sed 's/frequency: 8.0/frequency: 1.0e6/' >nyquist.yaml
check_case "a Ricker past the grid's Nyquist limit: exit 7 naming it" 7 "'sources[0].time.frequency' = 1e+06" \
  "Nyquist limit" -- "$heatwave" run nyquist.yaml
wave_yaml 10 "{every: 1, file: f.h5, points: [[0.2, 0.5]]}" | sed 's/frequency: 8.0/frequency: 40.0/' >coarse.yaml
check_case "a Ricker the grid resolves coarsely: a warning naming points a wavelength" 0 \
  "grid points a wavelength" "Nyquist limit is 63.5" -- "$heatwave" run coarse.yaml
sed 's/grid: {points: \[32, 24\]}/grid: {points: [32, 24], length: 1.0e-300}/' good.yaml >tiny_length.yaml
check_case "length: 1e-300: exit 7 naming the spacing" 7 "'grid.length' gives a grid spacing of" -- \
  "$heatwave" run tiny_length.yaml
check_case "plot_traces.py on a checkpoint: one line, exit 1" 1 "not a receivers file" -- \
  $python "$source_dir/scripts/plot_traces.py" ext/checkpoint_000000045.h5 x.png
grep -q Traceback err.txt && fail "plot_traces.py on a checkpoint" "a traceback"
check_case "plot_traces.py on a missing file: one line, exit 1" 1 "nothing.h5: cannot open it" -- \
  $python "$source_dir/scripts/plot_traces.py" nothing.h5 x.png
grep -q Traceback err.txt && fail "plot_traces.py on a missing file" "a traceback"
sed 's/equation: heat/equation: heat\nreceivers: {every: 1, file: heat-r.h5, points: [[0.5, 0.5]]}/' good.yaml >heat-r.yaml
"$heatwave" run heat-r.yaml >/dev/null 2>&1
if check "plot_traces.py on a heat run's traces" 0 -- $python "$source_dir/scripts/plot_traces.py" heat-r.h5 heat.png &&
  grep -q "no first arrival drawn (a heat run, not a wave" out.txt; then
  pass "plot_traces.py on a heat run's traces: no travel-time model drawn, and it says why"
else
  fail "plot_traces.py on a heat run's traces" "${why:-it drew a model: $(cat out.txt)}"
fi

echo "== counts"
printf '%s\n' "${good/dt: auto, steps: 20/dt: 1e-300, t_end: 1.0}" >tiny_dt.yaml
check_case "dt: 1e-300: exit 7" 7 "more than heatwave can count (at most 2^53" -- "$heatwave" run tiny_dt.yaml
printf '%s\n' "${good/steps: 20/t_end: 1e300}" >far.yaml
check_case "t_end: 1e300: exit 7" 7 "'time.t_end' / dt = " -- "$heatwave" run far.yaml
printf '%s\n' "${good/steps: 20/steps: 10000000000000000}" >many.yaml
check_case "steps: 1e16: exit 7" 7 "'time.steps' = 1e+16 steps" -- "$heatwave" run many.yaml
printf '%s\nprogress: {seconds: 0.2}\ncheckpoint: {dir: eta}\n' "${good/steps: 20/steps: 4000000000000000}" >eta.yaml
"$heatwave" run eta.yaml >out.txt 2>err.txt &
runner=$!
for _ in $(seq 200); do grep -q "info: progress:" out.txt && break; sleep 0.05; done
kill -TERM $runner
wait $runner
code=$?
if [[ $code -eq 75 ]] && grep -qE "ETA ([0-9]+ days|more than 1000 years)" out.txt && ! grep -q "ETA -" out.txt; then
  pass "4e15 steps: the ETA in days (or 'more than 1000 years'), SIGTERM checkpoints and exits 75"
else
  fail "4e15 steps" "exit $code, $(grep -m1 "info: progress:" out.txt)"
fi

echo "== messages"
check_case "'heatwave runn': exit 2, did you mean 'run'" 2 "did you mean 'run'?" -- "$heatwave" runn good.yaml
check_case "--threads -3: exit 2, a plain message" 2 "--threads: must be 0 or more" -- \
  "$heatwave" run good.yaml --threads -3
if check "errors on stderr, results on stdout" 4 "given twice" -- "$heatwave" run dup.yaml &&
  ! grep -q "error" out.txt && check "" 0 -- "$heatwave" run good.yaml && grep -q "info: done:" out.txt &&
  ! [[ -s err.txt ]]; then
  pass "errors and warnings on stderr, results on stdout"
else
  fail "errors on stderr, results on stdout" "${why:-an error on stdout or info on stderr}"
fi
check_case "no colour under mpirun (its ranks see a pseudo-terminal)" 0 -- mpirun -n 1 "$heatwave" run good.yaml
if check "--log-level debug" 0 -- "$heatwave" --log-level debug run good.yaml &&
  check "--log-level debug after the command" 0 -- "$heatwave" run good.yaml --log-level debug &&
  grep -q "debug: decomposition:" out.txt && grep -q "debug: halo transport:" out.txt &&
  grep -q "debug: chunk of" out.txt; then
  pass "--log-level debug shows the decomposition, transport and chunk times"
else
  fail "--log-level debug" "${why:-a debug line is missing}"
fi

echo "== inputs that would do nothing, and messages that name the cause"
# base EQUATION [LINE...]: a 64x48 case with u = 0, Dirichlet faces, 40 steps, float64.
base() {
  printf 'equation: %s\ngrid: {points: [64, 48]}\ntime: {dt: auto, steps: 40}\n' "$1"
  printf 'initial: {type: constant, value: 0.0}\nboundary: dirichlet\nbackend: host\nthreads: 1\nmetrics: {file: ""}\n'
  shift
  for line in "$@"; do printf '%s\n' "$line"; done
}
base wave "sources: [{type: gaussian, center: [5.0, 5.0], width: 0.05}]" >g-out.yaml
check_case "a Gaussian source centred outside the grid: exit 7 naming it" 7 "'sources[0].center' = [5.0, 5.0]" \
  "is outside the domain: x = 5 is not in [0, 1]" -- "$heatwave" run g-out.yaml
base wave "sources: [{type: gaussian, center: [0.5, 0.5], width: 1.0e-6}]" >g-narrow.yaml
check_case "a Gaussian source narrower than the grid spacing: exit 7" 7 "'sources[0].width' = 1e-06" \
  "narrower than the grid spacing" -- "$heatwave" run g-narrow.yaml
base wave "sources: [{type: point, position: [0.5, 0.5], time: {type: gaussian, width: 1.0e-9, delay: 0.1}}]" >t-narrow.yaml
check_case "a Gaussian pulse narrower than dt: exit 7" 7 "'sources[0].time.width' = 1e-09" "narrower than the time step" -- \
  "$heatwave" run t-narrow.yaml
base wave "sources: [{type: point, position: [0.5, 0.5], time: {type: ricker, frequency: 4.0, delay: -0.1}}]" >t-early.yaml
check_case "a Ricker with a negative delay: exit 7" 7 "'sources[0].time.delay' = -0.1" "before t = 0" -- \
  "$heatwave" run t-early.yaml

for n in 4611686018427387904 9223372036854775807; do
  base heat | sed "s/points: \[64, 48\]/points: [$n, 3]/" >huge-points.yaml
  check_case "grid.points [$n, 3]: exit 7, no internal error" 7 "'grid.points' = [$n, 3]" "points in all" -- \
    "$heatwave" run huge-points.yaml
done
base heat "alpha: 1.0e-320" >tiny-alpha.yaml
check_case "alpha: 1e-320: exit 7 naming alpha, not the grid" 7 "'alpha' = 1.0e-320" "within 1e-150 to 1e+150" -- \
  "$heatwave" run tiny-alpha.yaml
$python - <<'PY'
import h5py, numpy as np
c = np.ones((48, 64)); c[10, 20] = 1e200
with h5py.File("c-big.h5", "w") as f: f["c"] = c
u = np.zeros((48, 64)); u[7, 3] = np.nan
with h5py.File("u-nan.h5", "w") as f: f["u"] = u
with h5py.File("c-complex.h5", "w") as f: f["c"] = np.ones((48, 64), dtype=np.complex128)
with h5py.File("q-complex.h5", "w") as f: f["q"] = np.ones((48, 64), dtype=np.complex128)
PY
base wave "material: {c: {type: file, path: c-big.h5, dataset: c}}" >c-big.yaml
check_case "a material file with c = 1e200 at one point: exit 7 naming the index" 7 \
  "dataset 'c' of c-big.h5 holds 1e+200 at [20, 10] (x, y, z)" -- "$heatwave" run c-big.yaml
base wave | sed 's/initial: {type: constant, value: 0.0}/initial: {type: file, path: u-nan.h5, dataset: u}/' >u-nan.yaml
check_case "an initial-condition file with one NaN: exit 7 naming the index" 7 \
  "dataset 'u' of u-nan.h5 holds nan at [3, 7] (x, y, z)" -- "$heatwave" run u-nan.yaml
base wave "material: {c: {type: file, path: c-complex.h5, dataset: c}}" >c-complex.yaml
check_case "a complex128 material dataset: exit 7 naming its type" 7 "dataset 'c' of c-complex.h5 holds compound" \
  "integers or floating-point numbers" -- "$heatwave" run c-complex.yaml
base heat "sources: [{type: field, path: q-complex.h5, dataset: q}]" >q-complex.yaml
check_case "a complex128 field source: exit 7 naming its type" 7 "dataset 'q' of q-complex.h5 holds compound" -- \
  "$heatwave" run q-complex.yaml

echo 'not hdf5' >r.h5
base wave "receivers: {every: 1, file: r.h5, points: [[0.5, 0.5]]}" >not-traces.yaml
if check "a file that is not traces where receivers.file points: exit 20 saying so" 20 \
  "r.h5 (receivers.file) is there and is not a receivers file" -- "$heatwave" run not-traces.yaml &&
  [[ $(cat r.h5) == "not hdf5" ]]; then
  pass "a file that is not traces where receivers.file points: exit 20 saying what it is, the file kept"
else
  fail "a file that is not traces where receivers.file points" "${why:-r.h5 changed}"
fi

# A traces file older than the checkpoint (fewer samples than its step): refused, not spliced.
base wave "sources: [{type: point, position: [0.5, 0.5], time: {type: ricker, frequency: 4.0}}]" \
  "receivers: {every: 1, file: splice.h5, points: [[0.2, 0.5]]}" "checkpoint: {every: 50, keep: 5, dir: splice-ck}" |
  sed 's/steps: 40/steps: 100/' >splice.yaml
"$heatwave" run splice.yaml >/dev/null 2>&1
$python -c "
import h5py
with h5py.File('splice.h5', 'r+') as f: f['samples'][0] = 5"
"$heatwave" traces splice.h5 >splice-before.txt 2>&1
if check "a restart from step 50 with a traces file of 5 samples: exit 16 naming both" 16 \
  "splice.h5: holds 5 sample(s) (steps 0 to 4)" "the restart from step 50 needs the 51 up to it" -- \
  "$heatwave" run splice.yaml --restart splice-ck/checkpoint_000000050.h5 &&
  "$heatwave" traces splice.h5 >splice-after.txt 2>&1 && cmp -s splice-before.txt splice-after.txt; then
  pass "a restart from step 50 with a traces file of 5 samples: exit 16, the file as it was"
else
  fail "a restart with a traces file of fewer samples" "${why:-the traces file changed: $(cat splice-after.txt)}"
fi
# The same through a format-1 file ([receivers, samples], no /samples) of 30 samples, restarting at step 50.
"$heatwave" run splice.yaml --overwrite >/dev/null 2>&1
$python - <<'PY'
import h5py
with h5py.File("splice.h5", "r") as f:
    attrs = dict(f.attrs); n = 30
    traces, time, step, positions = f["traces"][:n].T, f["time"][:n], f["step"][:n], f["positions"][:]
with h5py.File("splice.h5", "w") as f:
    for k, v in attrs.items():
        if k != "format": f.attrs[k] = v
    f.attrs["format"] = "heatwave receivers 1"
    f["traces"], f["time"], f["step"], f["positions"] = traces, time, step, positions
PY
check_case "a restart from step 50 with a format-1 traces file of 30 samples: exit 16" 16 \
  "splice.h5: holds 30 sample(s) (steps 0 to 29)" -- "$heatwave" run splice.yaml --restart splice-ck/checkpoint_000000050.h5

base heat | sed 's/points: \[64, 48\]/points: [256, 256]/' >fsize.yaml
check_case "a file-size limit below what MPI_Init needs (ulimit -f 3000, no mpirun): exit 13 naming it" 13 \
  "the file-size limit (ulimit -f) is 3000 KiB" -- bash -c 'ulimit -f 3000; exec "$@"' bash "$heatwave" run fsize.yaml

echo "== small things"
cat >bench2.yaml <<'YAML'
repeats: 3
warmup_steps: 2
steps: 600
copy_bytes: 8388608
cases:
  - {backend: [host], equation: [heat], precision: [float64], radius: [1], grid: [[1024, 1024], [32, 32]]}
YAML
if check "bench: the start-up lines time each case's own set-up" 0 -- "$heatwave" bench bench2.yaml &&
  ! grep -q "start-up:" out.txt; then
  pass "bench: no case's start-up is timed from the process's start"
else
  fail "bench: the start-up lines time each case's own set-up" "${why:-$(grep -m1 start-up: out.txt)}"
fi
base heat | sed 's/backend: host/backend: cuda/' >cuda.yaml
if "$heatwave" info | grep -q "cuda: *no"; then
  check_case "backend: cuda in a build without CUDA: exit 15" 15 "'backend' = 'cuda'" "without CUDA" -- \
    "$heatwave" run cuda.yaml
else
  skip "backend: cuda in a build without CUDA" "this build has CUDA"
fi
base wave | sed 's/boundary: dirichlet/boundary: {type: absorbing, width: 4}/' >absorbing-type.yaml
check_case "boundary: {type: absorbing, width: 4}: exit 5, put it under default:" 5 "unknown key 'boundary.type'" \
  "put it under 'default:'" -- "$heatwave" run absorbing-type.yaml
base heat "checkpoint: {every: 10, dir: ''}" >empty-dir.yaml
if check "checkpoint.dir empty: exit 7, one space" 7 "'checkpoint.dir' = \"\" must name a directory" -- \
  "$heatwave" run empty-dir.yaml && ! grep -q "=  must" err.txt; then
  pass "checkpoint.dir empty: exit 7, the empty value shown as \"\""
else
  fail "checkpoint.dir empty" "${why:-a double space}"
fi
base heat "checkpoint: {every: 20, dir: lock-ck}" "output: {every: 20, dir: lock-out}" \
  "receivers: {every: 1, file: lock-r.h5, points: [[0.5, 0.5]]}" "metrics: {file: lock-m.json}" | grep -v 'file: ""' >locks.yaml
if check "a clean run's lock files" 0 -- "$heatwave" run locks.yaml &&
  check "a refused run's lock files" 20 "an earlier run's files" -- "$heatwave" run locks.yaml &&
  locks=$(find lock-ck lock-out . -maxdepth 1 -name ".heatwave.lock" -o -name ".lock-*.heatwave.lock") &&
  [[ -z $locks ]]; then
  pass "lock files are gone after a clean run and after one refused before step 0"
else
  fail "lock files after a run" "${why:-left $locks}"
fi
printf 'cases:\n  - name: mode\n    config: %s/good.yaml\n    checks: {exact: }\n' "$work" >timed.yaml
if check "validate: the summary times the checks and the plots apart" 0 -- \
  "$heatwave" validate timed.yaml --no-plots --output-dir timed && grep -qE "in [0-9.]+ s of checks, no plots" out.txt; then
  pass "validate: the summary times the checks and the plots apart"
else
  fail "validate: the summary times the checks and the plots apart" "${why:-$(grep -m1 rows: out.txt)}"
fi

echo "== suites"
if "$heatwave" info | grep -q "^  \[[0-9]*\] "; then
  skip "bench of a GPU suite without a GPU" "a GPU is visible here"
else
  check_case "bench/cluster.yaml without a GPU: exit 15, nothing measured" 15 "nothing was measured" -- \
    "$heatwave" bench "$source_dir/bench/cluster.yaml" --json bench.json
fi
cat >refs.yaml <<YAML
cases:
  - name: mode
    config: $work/good.yaml
    checks: {exact: , reference: }
YAML
if "$heatwave" info | grep -q "kokkos: *Kokkos"; then
  skip "validate without Kokkos" "this build has Kokkos (the no-Kokkos build runs validation.standard_suite with SKIP rows)"
elif check "validate without Kokkos" 0 -- "$heatwave" validate refs.yaml --no-plots --output-dir refs &&
  grep -q "reference .*SKIP .*no Kokkos reference" out.txt && grep -q "exact .*PASS" out.txt; then
  pass "validate without Kokkos: the exact rows run, the reference rows SKIP (counted)"
else
  fail "validate without Kokkos" "${why:-no SKIP row or no PASS row}"
fi
cat >ranks.yaml <<YAML
cases:
  - name: wide
    config: $work/good.yaml
    ranks: 64
    checks: {exact: }
YAML
check_case "a suite in which nothing ran: exit 18" 18 -- "$heatwave" validate ranks.yaml --no-plots --output-dir ranks
grep -q "no check ran" out.txt || fail "a suite in which nothing ran" "no 'no check ran' line"

echo
echo "$passed passed, $failed failed, $skipped skipped"
exit $((failed > 0))
