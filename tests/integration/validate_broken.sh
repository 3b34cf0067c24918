#!/usr/bin/env bash
# A validation that cannot fail validates nothing: heatwave_broken is heatwave
# built with a wrong nearest-neighbour stencil weight (HEATWAVE_TEST_BROKEN_STENCIL).
# The same small suite must pass with heatwave and fail with heatwave_broken,
# with the failing checks named on FAIL lines.
set -u
heatwave=$1 broken=$2 suite=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

"$heatwave" validate "$suite" --output-dir "$work/good" --no-plots >"$work/good.txt" 2>&1
code=$?
[[ $code -eq 0 ]] || { echo "FAIL: the correct build exits $code on the small suite"; cat "$work/good.txt"; failures=$((failures + 1)); }

"$broken" validate "$suite" --output-dir "$work/broken" --no-plots >"$work/broken.txt" 2>&1
code=$?
cat "$work/broken.txt" | sed -n '/^failed checks:/,$p'
[[ $code -eq 18 ]] || { echo "FAIL: the broken build exits $code, expected 18 (validation_failed)"; failures=$((failures + 1)); }
checks="exact convergence"
"$heatwave" info | grep -q "kokkos: *Kokkos" && checks="$checks reference"
for check in $checks; do
  grep -E "^mode-|^order" "$work/broken.txt" | grep -E " $check .*FAIL" >/dev/null ||
    { echo "FAIL: no FAIL line for the '$check' check"; failures=$((failures + 1)); }
done
grep -q "^FAILED: .* FAIL" "$work/broken.txt" || { echo "FAIL: no FAILED summary line"; failures=$((failures + 1)); }
/usr/bin/python3 -c "import json, sys; r = json.load(open('$work/broken/report.json')); sys.exit(0 if not r['passed'] and r['summary']['fail'] >= 6 else 1)" ||
  { echo "FAIL: report.json does not record the failures"; failures=$((failures + 1)); }
echo "$((failures == 0 ? 1 : 0)) passed, $failures failed"
exit $((failures > 0))
