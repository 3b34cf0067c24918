#!/usr/bin/env bash
# Mutants the exact checks alone must catch: each mutant binary runs the
# standard suite and must exit 18 with FAIL rows of the `exact` check in the
# named cases (not only `reference` rows: a build without Kokkos has none).
# Usage: validate_mutants.sh SUITE MUTANT CASE_PREFIX [MUTANT CASE_PREFIX ...]
set -u
suite=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failures=0
while (($# >= 2)); do
  mutant=$1 prefix=$2
  shift 2
  name=$(basename "$mutant")
  "$mutant" validate "$suite" --output-dir "$work/$name" --no-plots >"$work/$name.txt" 2>&1
  code=$?
  if /usr/bin/python3 - "$work/$name/report.json" "$prefix" "$code" <<'PY'; then
import json, sys
path, prefix, code = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(path))
exact = [row for row in r["rows"] if row["check"] == "exact" and row["result"] == "FAIL"]
named = [row for row in exact if row["case"].startswith(prefix)]
print(f"{path.split('/')[-2]}: exit {code}, {r['summary']['fail']} FAIL rows, {len(exact)} of them exact "
      f"({len(named)} in '{prefix}*' cases)")
sys.exit(0 if code == 18 and named else 1)
PY
    passed=$((passed + 1))
  else
    failures=$((failures + 1))
    echo "FAIL: $name is not caught by the exact '$prefix' checks"
    tail -5 "$work/$name.txt"
  fi
done
echo "$passed passed, $failures failed"
exit $((failures > 0))
