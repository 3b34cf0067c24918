#!/usr/bin/env bash
# The standard suite on the host backend: every check passes, and the report
# holds every row in the table, the JSON and the Markdown, with the plots.
set -u
heatwave=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$heatwave" validate "$source/configs/validation/standard.yaml" --output-dir "$work/report" >"$work/out.txt" 2>&1
code=$?
grep -v "info: case" "$work/out.txt"
[[ $code -eq 0 ]] || { echo "FAIL: heatwave validate exits $code"; exit 1; }
/usr/bin/python3 - "$work/report" <<'PY'
import json, os, sys
d = sys.argv[1]
r = json.load(open(os.path.join(d, "report.json")))
assert r["passed"] and r["summary"] == {"pass": 274, "fail": 0, "skip": 0}, r["summary"]
checks = {row["check"] for row in r["rows"]}
assert checks == {"exact", "convergence", "reference", "conservation"}, checks
# Every equation (heat, wave, damped wave) x dims x precision x radius x boundary has an exact row.
exact = {row["case"] for row in r["rows"] if row["check"] == "exact"}
assert len(exact) == 72, len(exact)
orders = [row["measured"] for row in r["rows"] if row["check"] == "convergence"]
assert len(orders) == 10 and all(1.9 < o < 2.1 or 3.9 < o < 4.1 for o in orders), orders
md = open(os.path.join(d, "report.md")).read()
passed_lines = sum(1 for line in md.splitlines() if line.startswith("| ") and "| PASS" in line)
assert passed_lines == 274, passed_lines
try:
    import matplotlib  # noqa: F401
    assert len(r["plots"]["files"]) == 5 and all(os.path.getsize(f) > 1000 for f in r["plots"]["files"]), r["plots"]
except ImportError:
    assert r["plots"]["note"], "no plots and no note saying why"
print("1 passed, 0 failed")
PY
