# Sourced by the scripts that run on a GPU machine (gpu-shot.sh,
# gpu-pipeline.sh, gpu-profile.sh): `log` into $out/summary.txt, mpirun as root, nvcc, the
# Python wheels carried in .whl (h5py for the golden hashes), the card's name.
log() { echo "== $*" | tee -a "$out/summary.txt"; }
# `log` with the time and how far into the call it is.
stamp() { log "$* ($(date +%T), $((SECONDS / 60)) min $((SECONDS % 60)) s into this call)"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl &&
    export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$out/summary.txt"

# The seismic shot (configs/examples/seismic3d.yaml at 801 x 801 x 401, outputs
# off) and its grid plain (constant c, no source or receivers, Dirichlet
# faces, a random start) for STEPS steps: DIR/shot.yaml and DIR/plain.yaml.
#   shot_configs DIR STEPS
shot_configs() {
  sed -e 's/points: \[401, 401, 201\]/points: [801, 801, 401]/' -e "s/time: {dt: auto, t_end: 1.2}/time: {dt: auto, steps: $2}/" \
    -e 's/^output: .*$//' configs/examples/seismic3d.yaml >"$1/shot.yaml"
  cat >"$1/plain.yaml" <<YAML
equation: wave
precision: float32
grid: {points: [801, 801, 401], length: [2.0, 2.0, 1.0]}
c: 3.0
time: {dt: auto, steps: $2}
boundary: {default: {type: dirichlet, value: 0.0}}
initial: {type: random, seed: 3}
diagnostics: {every: 200}
YAML
}

# Heat fp32 512^3 (Dirichlet faces, a random start) for STEPS steps: DIR/heat.yaml.
#   heat_config DIR STEPS
heat_config() {
  cat >"$1/heat.yaml" <<YAML
equation: heat
precision: float32
grid: {points: [512, 512, 512]}
alpha: 1.0
time: {dt: auto, steps: $2}
boundary: {default: dirichlet}
initial: {type: random, seed: 3}
YAML
}
