#!/usr/bin/env bash
# One call on a GPU machine: build with ninja, run the gpu tests (and the rest
# of the suite), compute-sanitizer on a small case of each kernel, and the
# benchmark suite. Logs and JSON go under the folder given (default out/gpu).
#   scripts/gpu-check.sh OUT_DIR [bench suite]
# Libraries the GPU image may lack can be carried as Debian .debs in
# .carry/debs (unpacked into a private prefix, never into /).
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/gpu}")
suite=${2:-bench/standard.yaml}
steps=${HEATWAVE_GPU_CHECK_STEPS:-tests faults sanitize bench}  # which parts to run
mkdir -p "$out"
log() { echo "== $*" | tee -a "$out/summary.txt"; }
status=0

if compgen -G ".carry/debs/*.deb" >/dev/null; then
  prefix=/tmp/heatwave-deps
  for f in .carry/debs/*.deb; do dpkg -x "$f" "$prefix"; done
  export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  log "carried packages unpacked into $prefix"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"

log "configure and build"
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if ! { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release ${HEATWAVE_GPU_CHECK_CMAKE:-} &&
       cmake --build build-gpu -j "$(nproc)"; } >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  log "BUILD FAILED"
  exit 1
fi
build-gpu/heatwave info | tee "$out/info.txt"
# The optional 3D families (HEATWAVE_GPU_CHECK_CMAKE adds -DHEATWAVE_CLUSTER_3D_*=ON): their plans are checked where built.
dsmem_3d=false; grep -q "^cluster kernels:.*also built:.*3D DSMEM" "$out/info.txt" && dsmem_3d=true

if [[ $steps == *tests* ]]; then
log "tests: ctest -L ${HEATWAVE_CTEST_LABEL:-gpu}"
# Few OpenMP threads per test: parallel tests must not oversubscribe the cores.
(cd build-gpu && OMP_NUM_THREADS=2 ctest --output-on-failure -j 4 -L "${HEATWAVE_CTEST_LABEL:-gpu}") >"$out/ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed|Skipped|Failed|\*\*\*" "$out/ctest.log" | tee -a "$out/summary.txt"
fi

if [[ $steps == *sanitize* ]]; then
log "compute-sanitizer on small cases of each kernel"
for tool in memcheck racecheck synccheck; do
  for case in bench/sanitize/*.yaml; do
    name=$(basename "$case" .yaml)
    # cuda-cluster: the autotuned plan; in 2D also a resident plan (cooperative
    # launch, grid barriers), a columns plan (the media cases fall back) and a
    # wide one (a strip past the small grids by more than a flux table's pad:
    # it read past the table's end until the kernel clamped the column), in
    # 3D clusters of 2x2 blocks (DSMEM plane edges, where built) and of one
    # block (the autotune may keep the baseline for so small a case).
    for variant in cuda cuda-cluster cuda-cluster-resident cuda-cluster-columns cuda-cluster-wide cuda-cluster-peers cuda-cluster-single; do
      backend=cuda-cluster plan=
      [[ $variant == cuda ]] && backend=cuda
      if [[ $variant == *-resident ]]; then [[ $name == *2d* ]] || continue; plan=resident,24,12,2; fi
      if [[ $variant == *-columns ]]; then [[ $name == *2d* ]] || continue; plan=columns,64,0,3; fi
      if [[ $variant == *-wide ]]; then [[ $name == *2d* ]] || continue; plan=columns,256,0,3; fi
      if [[ $variant == *-peers ]]; then [[ $name == *3d* && $dsmem_3d == true ]] || continue; plan=2,2,8,8,8,2,1; fi
      if [[ $variant == *-single ]]; then [[ $name == *3d* ]] || continue; plan=1,1,8,8,16,2,1; fi
      log_file="$out/sanitize-$tool-$name-$variant.log"
      if env ${plan:+HEATWAVE_CLUSTER_PLAN=$plan} compute-sanitizer --tool "$tool" --error-exitcode 99 build-gpu/heatwave run "$case" \
           --backend $backend --metrics /tmp/sanitize.json >"$log_file" 2>&1; then
        echo "$tool $name $variant: clean ($(grep -o 'backend [a-z-]*' "$log_file" | head -1)$(grep -o 'plan ([^)]*): [a-z]*' "$log_file" | head -1 | sed 's/^/, /'))" | tee -a "$out/summary.txt"
      else
        echo "$tool $name $variant: FAILED (see $(basename "$log_file"))" | tee -a "$out/summary.txt"
        tail -20 "$log_file"
        status=1
      fi
    done
  done
done
# Two ranks sharing the GPU (mpi-host), cuda-cluster with a small plan: the
# split chunk (inner tiles on their own stream while the halos move, the
# rims after) and chunks of several launches, under memcheck and racecheck.
for tool in memcheck racecheck; do
  for name in heat2d wave3d; do
    { cat "bench/sanitize/$name.yaml"; echo "parallel: {halo_transport: mpi-host}"; } >"/tmp/sanitize-mpi-$name.yaml"
    log_file="$out/sanitize-$tool-$name-2ranks.log"
    plan=1,2,16,8,4,2,1; [[ $name == *3d* && $dsmem_3d != true ]] && plan=1,1,16,8,4,2,1  # (3D: one block a cluster)
    if mpirun --oversubscribe -n 2 env HEATWAVE_CLUSTER_PLAN=$plan compute-sanitizer --tool "$tool" \
         --error-exitcode 99 build-gpu/heatwave run "/tmp/sanitize-mpi-$name.yaml" --backend cuda-cluster \
         >"$log_file" 2>&1 && grep -q "overlapped with the k steps" "$log_file"; then
      echo "$tool $name cuda-cluster on 2 ranks, split chunks: clean" | tee -a "$out/summary.txt"
    else
      echo "$tool $name cuda-cluster on 2 ranks: FAILED (see $(basename "$log_file"))" | tee -a "$out/summary.txt"
      tail -20 "$log_file"
      status=1
    fi
  done
done
mkdir -p "$out/logs" && mv "$out"/sanitize-*.log "$out/logs/" 2>/dev/null
fi

if [[ $steps == *faults* ]]; then
  log "faults on a GPU: the memory check, the fault battery, the exact suites on the GPU backends"
  # 80000^2 float64: two 51 GB fields, more than an H100 or H200 has free.
  printf 'equation: heat\ngrid: {points: [80000, 80000]}\ntime: {steps: 10}\ninitial: {type: constant, value: 1}\n' >/tmp/gpu-huge.yaml
  for backend in cuda cuda-cluster; do
    build-gpu/heatwave run /tmp/gpu-huge.yaml --backend $backend >"$out/memory-$backend.log" 2>&1
    code=$?
    echo "memory check, $backend: exit $code: $(grep -o 'error: .*' "$out/memory-$backend.log")" | tee -a "$out/summary.txt"
    [[ $code -eq 7 ]] && grep -q "available (GPU 0)" "$out/memory-$backend.log" || status=1
  done
  bash tests/integration/faults.sh build-gpu/heatwave . >"$out/faults.log" 2>&1 || status=1
  grep -E "^FAIL|passed," "$out/faults.log" | tee -a "$out/summary.txt"
  for backend in cuda cuda-cluster; do
    build-gpu/heatwave validate configs/validation/standard.yaml --backend $backend --no-plots \
      --output-dir "$out/validate-$backend" >"$out/validate-$backend.log" 2>&1 || status=1
    echo "standard.yaml on $backend: $(grep -E '^(PASSED|FAILED)' "$out/validate-$backend.log")" | tee -a "$out/summary.txt"
  done
fi

if [[ $steps == *bench* ]]; then
  log "benchmarks: $suite"
  build-gpu/heatwave bench "$suite" --json "$out/bench.json" 2>&1 | tee "$out/bench.log" | grep -E "^\||roofline:" || status=1
fi
log "done (status $status)"
exit $status
