#!/usr/bin/env bash
# Installs heatwave's build and test dependencies from Debian/Ubuntu packages,
# only those missing. Needs root (or sudo) when something is missing.
set -euo pipefail
packages=(
  cmake ninja-build g++ git pkg-config
  libyaml-cpp-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev libtrilinos-kokkos-dev
  python3-h5py python3-matplotlib python3-numpy python3-yaml
  slurm-wlm munge iproute2  # tests/jobs: a one-node Slurm, two network namespaces
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} packages present"
fi
