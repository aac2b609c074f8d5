#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds plugrt into build/ (or $PLUGRT_BUILD_DIR). Extra arguments go to
# the CMake configure step. Warnings are errors when CI is set.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${PLUGRT_BUILD_DIR:-build}"
werror=OFF
[ -n "${CI:-}" ] && werror=ON
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPLUGRT_WERROR="$werror" "$@"
cmake --build "$build_dir" --parallel "${PLUGRT_JOBS:-2}"
