#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir "${PLUGRT_BUILD_DIR:-build}" --output-on-failure --parallel "${PLUGRT_JOBS:-2}"
