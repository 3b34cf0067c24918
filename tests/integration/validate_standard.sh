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
# Without Kokkos (HEATWAVE_KOKKOS=OFF) the reference rows are SKIP (one per
# case and step, counted and shown) and every other check runs: the exact ones
# cover every face type alone.
kokkos = r["reference"].startswith("Kokkos")
reference = [row for row in r["rows"] if row["check"] == "reference"]
assert len(reference) == (380 if kokkos else 116), len(reference)
assert all((row["result"] == "PASS") == kokkos and (row["result"] == "SKIP") != kokkos for row in reference)
passes = 618 + 163 + (380 if kokkos else 0)
assert r["passed"] and r["summary"] == {"pass": passes, "fail": 0, "skip": 0 if kokkos else 116}, r["summary"]
# The receivers' traces against the reference: 8 absorbing cases and 2 seismic-3d cases, two rows each.
traces = [row for row in reference if row["quantity"].startswith("traces")]
assert len(traces) == (20 if kokkos else 10), len(traces)
checks = {row["check"] for row in r["rows"]}
assert checks == {"exact", "convergence", "reference", "conservation", "manufactured"}, checks
# Every equation (heat, wave, damped wave) x dims x precision x radius x boundary
# has an exact row, radius 1 to 4: modes in u0 (144) and in v0 (96), linear
# steady states with non-zero Dirichlet values and Neumann slopes (144).
exact = {row["case"] for row in r["rows"] if row["check"] == "exact"}
assert len(exact) == 384, len(exact)
orders = [row["measured"] for row in r["rows"] if row["check"] == "convergence"]
assert len(orders) == 10 and all(1.9 < o < 2.1 or 3.9 < o < 4.1 for o in orders), orders
manufactured = [row for row in r["rows"] if row["check"] == "manufactured"]
assert len({row["case"] for row in manufactured}) == 61 and len(manufactured) == 163, len(manufactured)
md = open(os.path.join(d, "report.md")).read()
passed_lines = sum(1 for line in md.splitlines() if line.startswith("| ") and "| PASS" in line)
assert passed_lines == passes, passed_lines
try:
    import matplotlib  # noqa: F401
    assert len(r["plots"]["files"]) == 66 and all(os.path.getsize(f) > 1000 for f in r["plots"]["files"]), r["plots"]
except ImportError:
    assert r["plots"]["note"], "no plots and no note saying why"
print("1 passed, 0 failed")
PY
