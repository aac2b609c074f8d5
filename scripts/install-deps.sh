#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages plugrt builds with (see setup.md for what each is for).
# Skips apt entirely when everything is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev
  libdlpack-dev flatbuffers-compiler libflatbuffers-dev libssl-dev libxxhash-dev
  libonnx-dev libprotobuf-dev libonnx-testdata
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libdnnl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # the Python package (python/), built for /usr/bin/python3
  pybind11-dev python3-pybind11 python3-dev
  # the tests' Python side: the zoo subset exported from PyTorch, the real-model corpus
  python3-torch python3-torchvision python3-onnx python3-numpy
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "plugrt: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
