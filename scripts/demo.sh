#!/usr/bin/env bash
# Installs what is needed, builds, and runs the main job.
#
# Today the main job is the plugin machinery: the program format, the executor and the
# first real backends are not in the tree yet (see README.md, "Status"). So the demo
# shows how plugrt finds plugins, reads their metadata without running them, loads the
# good ones, refuses the broken ones and says why, using the test plugins built here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
build="${PLUGRT_BUILD_DIR:-build}"
plugins="$build/test/plugins/files"
plugrt="$build/bin/plugrt"

echo "== plugrt doctor: every plugin file considered, and the verdict on each"
"$plugrt" doctor --plugin-dir "$plugins"
echo
echo "== plugrt backends: the backends the accepted plugins provide"
"$plugrt" backends --plugin-dir "$plugins"
echo
echo "== plugrt inspect: one plugin's metadata, read without loading it"
"$plugrt" inspect "$plugins/libplugrt_good.so"
