#!/usr/bin/env bash
# The second README command (and CI's): dependencies, build, the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
ctest --preset default -j "$(nproc)"
