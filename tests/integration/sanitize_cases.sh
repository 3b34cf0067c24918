#!/usr/bin/env bash
# The compute-sanitizer cases (bench/sanitize/*.yaml, run on a GPU by
# scripts/gpu-check.sh) stay valid configs: each runs to the end on the host
# backend, so that a new input check cannot turn a sanitizer run into an
# early exit that reports nothing.
set -eu
heatwave=$(realpath "$1") source=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
n=0
for f in "$source"/bench/sanitize/*.yaml; do
  name=$(basename "$f" .yaml)
  rc=0 && "$heatwave" run "$f" --backend host --metrics "$name.json" >"$name.txt" 2>&1 || rc=$?
  ((rc == 0)) || { echo "FAIL: bench/sanitize/$name.yaml exited $rc"; tail -3 "$name.txt"; exit 1; }
  grep -q '"non_finite": 0' "$name.json" || { echo "FAIL: bench/sanitize/$name.yaml: no finite final state"; exit 1; }
  n=$((n + 1))
done
((n >= 10)) || { echo "FAIL: only $n sanitizer cases found"; exit 1; }
echo "all $n sanitizer cases run on the host"
