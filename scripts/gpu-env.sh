# Sourced by the scripts that run on a GPU machine (gpu-shot.sh,
# gpu-pipeline.sh): `log` into $out/summary.txt, mpirun as root, nvcc, the
# Python wheels carried in .whl (h5py for the golden hashes), the card's name.
log() { echo "== $*" | tee -a "$out/summary.txt"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl &&
    export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$out/summary.txt"
