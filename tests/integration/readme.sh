#!/usr/bin/env bash
# The README's YAML blocks run as written: each is copied out to a file of
# its own and run with `heatwave run` in an empty directory (exit 0, no
# warning), and run again it is refused as an earlier run's files would be
# replaced (exit 20), then replaced with --overwrite. What a newcomer copies first works.
#   readme.sh HEATWAVE SOURCE_DIR
set -eu
heatwave=$(realpath "$1")
readme=$(realpath "$2/README.md")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
awk '/^```yaml$/ {copy = 1; n++; next} /^```$/ {copy = 0} copy {print > ("readme-" n ".yaml")}' "$readme"
blocks=(readme-*.yaml)
[[ -e ${blocks[0]} ]] || { echo "FAIL: no YAML block in $readme"; exit 1; }
for block in "${blocks[@]}"; do
  mkdir "${block%.yaml}" && cd "${block%.yaml}"
  OMP_NUM_THREADS=2 "$heatwave" run "../$block" >out.txt 2>err.txt ||
    { echo "FAIL: $block exits $?"; cat err.txt; exit 1; }
  [[ ! -s err.txt ]] || { echo "FAIL: $block warns:"; cat err.txt; exit 1; }
  grep -q "info: done:" out.txt || { echo "FAIL: $block did not finish"; exit 1; }
  code=0
  "$heatwave" run "../$block" >again.txt 2>&1 || code=$?
  [[ $code -eq 20 ]] || { echo "FAIL: $block run again exits $code, expected 20 (an earlier run's files)"; exit 1; }
  "$heatwave" run "../$block" --overwrite >/dev/null 2>&1 || { echo "FAIL: $block --overwrite"; exit 1; }
  echo "ok    $block: $(grep -o "done: .*" out.txt)"
  cd ..
done
echo "PASS: ${#blocks[@]} README YAML block(s) run as written"
