#!/usr/bin/env bash
# The first README command: dependencies, build, and the quickstart case
# (configs/quickstart.yaml) on the best backend this machine has.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default
cmake --build --preset default --target heatwave   # what the quickstart runs; scripts/test.sh builds the rest
mkdir -p out/quickstart
cd out/quickstart
../../build/heatwave run ../../configs/quickstart.yaml
