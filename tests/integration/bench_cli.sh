#!/usr/bin/env bash
# `heatwave bench` on the host: the roofline first, every case of the matrix
# timed, a table and a JSON whose numbers agree with each other; a bad suite is
# refused with the key named.
set -eu
heatwave=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat >suite.yaml <<'YAML'
repeats: 3
warmup_steps: 2
steps: 5
copy_bytes: 8388608
cases:
  - {backend: [host], equation: [heat, wave], precision: [float32, float64], radius: [1], grid: [[96, 80], [24, 20, 16]]}
YAML
"$heatwave" bench suite.yaml --json bench.json >out.txt 2>&1
grep -q "roofline: host parallel copy" out.txt
[[ $(grep -c "^| host |" out.txt) -eq 8 ]]
/usr/bin/python3 - <<'PY'
import json
b = json.load(open("bench.json"))
assert b["host_copy_bytes_per_second"] > 0 and len(b["cases"]) == 8, b
for c in b["cases"]:
    size = 4 if c["precision"] == "float32" else 8
    assert c["bytes_per_update"] == size * (2 if c["equation"] == "heat" else 3), c
    cells = 1
    for n in c["grid"]:
        cells *= n
    assert abs(c["cells_per_second"] * c["seconds_per_step"] - cells) <= 1e-6 * cells, c
    assert abs(c["bytes_per_second"] - c["cells_per_second"] * c["bytes_per_update"]) <= 1e-6 * c["bytes_per_second"]
    assert abs(c["fraction_of_roofline"] - c["bytes_per_second"] / c["roofline_bytes_per_second"]) <= 1e-9
PY
# The roofline is the faster of the plain and the streaming-store copy.
/usr/bin/python3 -c "
import json; b = json.load(open('bench.json'))
assert b['host_copy_bytes_per_second'] == max(b['host_copy_plain_bytes_per_second'], b['host_copy_streaming_bytes_per_second']) > 0, b"
# Every media kind runs as a case and is named so in the table and the JSON.
cat >media.yaml <<'YAML'
repeats: 1
warmup_steps: 1
steps: 2
copy_bytes: 8388608
cases:
  - {backend: [host], equation: [wave], precision: [float32], radius: [1], grid: [[96, 96]],
     media: [constant, layers, file, absorbing, source, receivers, shot]}
YAML
# (receivers: sampled as a run samples them, into a file of the temporary
# folder that each case removes)
mkdir tmp
TMPDIR=$work/tmp "$heatwave" bench media.yaml --json media.json >media.txt 2>&1
/usr/bin/python3 -c "
import json; b = json.load(open('media.json'))
names = [c['media'] for c in b['cases']]
assert names == ['constant', 'layers', 'file', 'absorbing', 'source', 'receivers', 'shot'], names"
[[ -z $(ls tmp | grep receivers) ]]
printf 'cases:\n  - {backend: [host], equation: [heat], precision: [float32], radius: [1], grid: [[64, 64]], media: [absorbing]}\n' >heat.yaml
set +e
"$heatwave" bench heat.yaml >heat.txt 2>&1
code=$?
set -e
[[ $code -eq 6 ]] && grep -q "'absorbing' is for the wave equations" heat.txt
printf 'cases:\n  - {backend: [host], equation: [heat], precision: [float32], radius: [1], grid: [[64, abc]]}\n' >bad.yaml
set +e
"$heatwave" bench bad.yaml >bad.txt 2>&1
code=$?
set -e
[[ $code -eq 6 ]] && grep -qF "'cases[0].grid'" bad.txt && grep -q "not a list of integers" bad.txt
# A GPU suite where no GPU can run it measures nothing: a named error, not an
# empty table, and an earlier JSON stays as it was.
if ! "$heatwave" info | grep -q "^  \[[0-9]*\] "; then
  echo '{"kept": true}' >gpu.json
  set +e
  "$heatwave" bench "$(dirname "$0")/../../bench/cluster.yaml" --json gpu.json >gpu.txt 2>&1
  code=$?
  set -e
  [[ $code -eq 15 ]] && grep -q "nothing was measured" gpu.txt && grep -qF '{"kept": true}' gpu.json ||
    { echo "FAIL: bench/cluster.yaml without a GPU exits $code"; cat gpu.txt; exit 1; }
  echo "6 passed, 0 failed"
else
  echo "5 passed, 0 failed (a GPU is visible: the no-GPU case is not run here)"
fi
