# Sourced by the bad-input tests (cli_errors.sh, validate_errors.sh): a work
# folder, pass/fail counts, and `expect CODE TEXT FRAGMENT...`, which writes
# TEXT to $input, runs the command in the array `command`, and checks the exit
# code, each FRAGMENT in the output, and that nothing crashed.
# The caller sets `input` and `command`, and ends with `report`.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0 passed=0

expect() {
  local code=$1 text=$2
  shift 2
  printf '%s\n' "$text" >"$input"
  timeout 60 "${command[@]}" >out.txt 2>&1
  local got=$? ok=1
  [[ $got -eq $code ]] || { echo "FAIL: exit $got, expected $code"; ok=0; }
  for fragment in "$@"; do
    grep -qF -- "$fragment" out.txt || { echo "FAIL: '$fragment' not in the output"; ok=0; }
  done
  grep -q "Segmentation\|core dumped\|terminate called" out.txt && { echo "FAIL: crashed"; ok=0; }
  if ((ok)); then passed=$((passed + 1)); else failures=$((failures + 1)); echo "--- $input:"; cat "$input"; echo "--- output:"; tail -5 out.txt; fi
}

report() {
  echo "$passed passed, $failures failed"
  exit $((failures > 0))
}
