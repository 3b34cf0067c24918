#!/usr/bin/env bash
# The quickstart as a user runs it: the built-in default and the shipped file
# give the same case (same config hash), the run logs progress, diagnostics
# and a summary, and the metrics JSON holds the promised fields.
set -eu
heatwave=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python=/usr/bin/python3

"$heatwave" info | tee info.txt
grep -q "^heatwave " info.txt && grep -q "mpi:" info.txt && grep -q "backends: host" info.txt
# The commit is the one the sources are at now, read at build time (a build
# dir configured at an older commit must not report that one).
if commit=$(git -C "$source" rev-parse --short HEAD 2>/dev/null); then
  grep -qE "commit $commit(-dirty)?," info.txt || { echo "info reports a commit other than $commit"; exit 1; }
fi

"$heatwave" run --threads 2 --metrics builtin.json >builtin.txt 2>&1
"$heatwave" run "$source/configs/quickstart.yaml" --metrics file.json >file.txt 2>&1
cat file.txt | grep -v "^  "
for f in builtin.txt file.txt; do
  grep -q "resolved config:" $f
  grep -q "progress: step" $f
  grep -q "ETA" $f
  grep -q "step    10000" $f
  grep -q "done: 10000 steps" $f
  grep -q "Gcells/s" $f
done
$python - <<'PY'
import json
a, b = json.load(open("builtin.json")), json.load(open("file.json"))
for key in ["config_hash", "backend", "grid", "steps", "wall_seconds", "cells_per_second", "equation", "precision"]:
    assert key in a, key
assert a["config_hash"] == b["config_hash"], (a["config_hash"], b["config_hash"])
assert a["steps"] == 10000 and a["grid"] == [512, 512], a
assert a["cells_per_second"] > 1e7, a["cells_per_second"]
# The plate loses heat through its cold edges; nothing blows up.
assert 0 < a["final"]["max"] < a["initial"]["max"] and a["final"]["non_finite"] == 0
print("1 passed, 0 failed")
PY
