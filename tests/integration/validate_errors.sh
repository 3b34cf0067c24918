#!/usr/bin/env bash
# Bad suites through the command line: each must exit with its documented
# code and a message naming the file, the case and the key.
set -u
heatwave=$1
input=suite.yaml
command=("$heatwave" validate suite.yaml --no-plots)
source "$(dirname "${BASH_SOURCE[0]}")/expect_failure.sh"

case_head='cases:
  - name: c
    config: {equation: heat, grid: {points: [9, 9]}, time: {steps: 5}, boundary: dirichlet, initial: {type: sine}}'

expect 5 "$case_head
    checks: {exact: {tolerence: 1e-3}}" "suite.yaml:" "unknown key 'cases[0].checks.exact.tolerence' (did you mean 'tolerance'?)"
expect 5 "suit: x
$case_head
    checks: {exact: }" "unknown key 'suit' (did you mean 'suite'?)"
expect 6 "$case_head
    ranks: two
    checks: {exact: }" "'cases[0].ranks' expects an integer, got 'two'"
expect 7 "$case_head
    checks: {}" "'cases[0].checks'" "names no check"
expect 7 "$case_head
    checks: {conservation: }" "'cases[0].checks.conservation' cannot be checked on this case" "periodic or zero-flux neumann"
expect 7 "$case_head
    overrides: {initial: {type: gaussian}}
    checks: {exact: }" "'cases[0].checks.exact' cannot be checked" "not a sine/cosine mode"
expect 7 "$case_head
    steps: [0, 5]
    checks: {exact: }" "'cases[0].steps'" "must lie in [1, 5]"
expect 7 "$case_head
    backend: gpu
    checks: {exact: }" "'cases[0].backend' = 'gpu' is not one of"
expect 10 "$case_head
    overrides: {time: {dt: 1.0}}
    checks: {exact: }" "case 'c' (merged config)" "stability limit"
expect 3 "cases:
  - name: c
    config: missing.yaml
    checks: {exact: }" "missing.yaml: cannot open the case config"
expect 4 "cases: [ {name: x" "YAML syntax error"
# A case for more ranks than the job has is skipped, visibly, not passed; a
# suite in which nothing ran fails (exit 18).
expect 18 "$case_head
    ranks: 64
    checks: {exact: }" "SKIP" "needs 64 ranks, the job has 1" "FAILED" "no check ran"

"$heatwave" validate >out.txt 2>&1
got=$?
if [[ $got -eq 2 ]] && grep -q "suite is required" out.txt; then passed=$((passed + 1)); else failures=$((failures + 1)); echo "FAIL: 'validate' without a suite exits $got"; cat out.txt; fi

report
