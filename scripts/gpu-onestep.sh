#!/usr/bin/env bash
# The cuda backend's one-step 3D kernel against the hand-written yardsticks
# (issue 72), in one device call: bench/onestep-3d.yaml at the built-in
# launch shape and at each setting of HEATWAVE_ONESTEP_SHAPES (each
# "launch=bx,by,chunk,prefetch", HEATWAVE_CUDA_LAUNCH's form, or
# "planes=chunk" or "planes=off", HEATWAVE_CUDA_PLANES'), then
# bench/handwritten_shot.cu (built here with nvcc) on the same rows. With
# HEATWAVE_ONESTEP_BASELINE=BUILD (another commit's build), its heatwave runs
# the rows first ("baseline"): the A/B of two commits in one call.
#   scripts/gpu-onestep.sh OUT_DIR [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/onestep}")
build=${2:-build-gpu}
mkdir -p "$out"
source scripts/gpu-env.sh
status=0
rows() {  # JSON -> one line a case
  python3 - "$1" "$2" <<'PY' | tee -a "$out/summary.txt"
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    print(f"{sys.argv[2]:14} {c['equation']:5} r{c['radius']} {'x'.join(map(str, c['grid'])):11} "
          f"{c.get('media', 'constant'):9} {c['cells_per_second'] / 1e9:7.1f} Gcells/s")
PY
}
if [[ -n ${HEATWAVE_ONESTEP_BASELINE:-} ]]; then
  log "bench/onestep-3d.yaml, baseline $HEATWAVE_ONESTEP_BASELINE"
  "$HEATWAVE_ONESTEP_BASELINE/heatwave" bench bench/onestep-3d.yaml --json "$out/onestep-baseline.json" \
    >"$out/bench-baseline.log" 2>&1 && rows "$out/onestep-baseline.json" baseline || { status=1; tail -5 "$out/bench-baseline.log"; }
fi
for shape in default ${HEATWAVE_ONESTEP_SHAPES:-}; do
  log "bench/onestep-3d.yaml, launch shape $shape"
  unset HEATWAVE_CUDA_LAUNCH HEATWAVE_CUDA_PLANES
  case $shape in
    launch=*) export HEATWAVE_CUDA_LAUNCH=${shape#launch=} ;;
    planes=*) export HEATWAVE_CUDA_PLANES=${shape#planes=} ;;
  esac
  "$build/heatwave" bench bench/onestep-3d.yaml --json "$out/onestep-$shape.json" >"$out/bench-$shape.log" 2>&1 &&
    rows "$out/onestep-$shape.json" "$shape" || { status=1; tail -5 "$out/bench-$shape.log"; }
done
unset HEATWAVE_CUDA_LAUNCH HEATWAVE_CUDA_PLANES
log "hand-written one-step kernels (bench/handwritten_shot.cu)"
"$CUDACXX" -std=c++20 -O3 -arch=sm_90a -Ibench bench/handwritten_shot.cu -o "$out/handwritten" >"$out/handwritten-build.log" 2>&1 ||
  { status=1; tail -5 "$out/handwritten-build.log"; }
for radius in 1 4; do
  "$out/handwritten" 512 512 512 40 5 $radius heat,plain | tee -a "$out/handwritten.json" "$out/summary.txt" || status=1
  "$out/handwritten" 801 801 401 40 5 $radius shot | tee -a "$out/handwritten.json" "$out/summary.txt" || status=1
done
rm -f "$out/handwritten"
log "done (status $status)"
exit $status
