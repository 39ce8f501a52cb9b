#!/usr/bin/env bash
# Installs the Debian packages the build and tests need; a no-op when all are present.
set -euo pipefail

packages=(
  doxygen python3-markdown
  cmake ninja-build g++ make ccache pkg-config
  libgtest-dev libbenchmark-dev
  libopenblas-dev libdnnl-dev libxsmm-dev nlohmann-json3-dev libjpeg62-turbo-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  swig r-base-dev r-cran-testthat
  default-jdk-headless maven libopenblas0
  abigail-tools graphviz
  python3 python3-numpy python3-cffi python3-pytest python3-setuptools python3-wheel
  python3-venv python3-pip python3-dev python3-sklearn
)
# `setup.sh fuzz`: clang and libFuzzer for `make fuzz` (not needed by the build or the tests).
if [ "${1:-}" = fuzz ]; then
  packages=(clang-14 libclang-rt-14-dev libomp-14-dev)  # libomp: oneDNN runs on OpenMP
fi
# `setup.sh bench`: PyTorch (Debian's, large): the Python benchmark's eager peer and the peer
# benchmark's ONNX files (scripts/setup-bench.sh).
if [ "${1:-}" = bench ]; then
  packages=(python3-torch)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q -o DPkg::Lock::Timeout=600
$sudo apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}"
