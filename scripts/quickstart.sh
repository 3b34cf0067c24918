#!/usr/bin/env bash
# The first README command: dependencies, build, and the quickstart case
# (configs/quickstart.yaml) on the best backend this machine has.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The CUDA backends only where a GPU can run them: without one the host
# backend runs the quickstart, and the GPU kernels would be most of the build
# (README: the build times).
cuda=()
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  cuda=(-DHEATWAVE_CUDA=OFF -DHEATWAVE_NCCL=OFF)
  echo "quickstart: no GPU (nvidia-smi -L), so build/ leaves the CUDA backends out;" \
       "cmake --preset default -DHEATWAVE_CUDA=ON brings them back (and -DHEATWAVE_NCCL=ON the nccl transport)"
fi
cmake --preset default "${cuda[@]}"
cmake --build --preset default --target heatwave   # what the quickstart runs; scripts/test.sh builds the rest
mkdir -p out/quickstart
cd out/quickstart
../../build/heatwave run ../../configs/quickstart.yaml
