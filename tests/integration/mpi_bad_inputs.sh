#!/usr/bin/env bash
# Bad decompositions under mpirun: rank 0 alone says what is wrong, every rank
# exits with 14 (MPI / decomposition error), and nothing hangs (timeout).
set -u
heatwave=$1
mpirun=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0 passed=0
limit=30

# expect RANKS CONFIG_TEXT FRAGMENT: `mpirun -n RANKS heatwave run case.yaml`.
expect() {
  local ranks=$1 text=$2 fragment=$3
  printf '%s\n' "$text" >case.yaml
  local start=$SECONDS
  OMP_NUM_THREADS=1 timeout $limit "$mpirun" --allow-run-as-root --oversubscribe -n "$ranks" \
    "$heatwave" run case.yaml >out.txt 2>&1
  local got=$? ok=1
  [[ $got -ne 124 ]] || { echo "FAIL: still running after ${limit} s (a hang)"; ok=0; }
  [[ $got -eq 14 ]] || { echo "FAIL: exit $got, expected 14"; ok=0; }
  local said
  said=$(grep -cF -- "$fragment" out.txt)
  [[ $said -eq 1 ]] || { echo "FAIL: '$fragment' said $said times, expected once (rank 0)"; ok=0; }
  grep -q "MPI_ABORT\|Segmentation\|core dumped\|terminate called" out.txt && { echo "FAIL: aborted or crashed"; ok=0; }
  if ((ok)); then
    passed=$((passed + 1))
    echo "ok: $ranks ranks, exit 14 in $((SECONDS - start)) s: $fragment"
  else
    failures=$((failures + 1))
    echo "--- config:"; cat case.yaml; echo "--- output:"; tail -8 out.txt
  fi
}

case_with() {  # case_with POINTS PARALLEL [RADIUS]
  printf 'equation: heat\ngrid: {points: %s}\nstencil: {radius: %s}\ntime: {dt: auto, steps: 10}\nboundary: dirichlet\ninitial: {type: sine, modes: [1, 1]}\nbackend: host\nparallel: %s\nmetrics: {file: ""}\n' "$1" "${3:-2}" "$2"
}

# A decomposition that does not match the rank count, either way.
expect 2 "$(case_with '[32, 24]' '{decomposition: [3, 1]}')" "asks for 3 ranks but the job has 2"
expect 4 "$(case_with '[32, 24]' '{decomposition: [2, 1]}')" "asks for 2 ranks but the job has 4"
# A partial decomposition the rank count does not divide.
expect 3 "$(case_with '[32, 24]' '{decomposition: [2, 0]}')" "asks for 2 ranks but the job has 3"
# More ranks than grid points along an axis (3 points: the fewest radius 1 takes).
expect 4 "$(case_with '[32, 3]' '{decomposition: [1, 4]}' 1)" "4 ranks along axis y but the grid has only 3 points"
# Boxes thinner than the halo depth (exchange_every 4 x radius 2 = 8; 24 / 4 = 6).
expect 4 "$(case_with '[24, 32]' '{decomposition: [4, 1], exchange_every: 4}')" "6 points thin, less than the halo depth 8"
# A box at a face whose ghosts would mirror a neighbour's points (radius 4, 18 / 4 = 4 points).
expect 4 "$(case_with '[24, 18]' '{decomposition: [1, 4]}' 4)" "4 points thin, but a box at a face needs 5"

echo "$passed passed, $failures failed"
exit $((failures > 0))
