#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is needed, builds, and runs the main job on the bundled default model
# (models/tiny_cnn.onnx, a small image classifier exported from PyTorch): compile it for
# every backend present, run it, say where each part ran, its latency, and how far its
# result is from the portable backend's. Another ONNX model may be given instead:
#   scripts/demo.sh path/to/model.onnx
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build="${PLUGRT_BUILD_DIR:-build}"
mkdir -p "$build"
log="$build/demo-build.log"
# Ninja's "[done/total]" lines as progress: one line updated in place on a terminal, a
# line per tenth of the steps otherwise; the full output goes to the log.
progress() {
  awk -v tty="$([ -t 1 ] && echo 1 || echo 0)" '
    match($0, /^\[[0-9]+\/[0-9]+\]/) {
      split(substr($0, 2, RLENGTH - 2), n, "/")
      if (tty) { printf "\r   step %d of %d", n[1], n[2]; shown = 1 }
      else if (int(10 * n[1] / n[2]) > last) { last = int(10 * n[1] / n[2]); printf "   step %d of %d\n", n[1], n[2] }
      fflush()
    }
    END { if (shown) print "" }'
}
echo "== building plugrt in $build (minutes the first time; log: $log)"
if ! scripts/build.sh 2>&1 | tee "$log" | progress; then
  echo "the build failed; its last lines ($log):" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
echo
plugrt="$build/bin/plugrt"
model="${1:-models/tiny_cnn.onnx}"
name="$(basename "$model" .onnx)"
out="$build/demo"
mkdir -p "$out"

echo "== plugrt backends: what this machine has"
"$plugrt" backends
echo
echo "== plugrt compile: every backend present, placed by estimated cost (portable takes only what no other backend does)"
"$plugrt" compile "$model" -o "$out/$name.prt"
echo
input=()
[ -f "models/$name.input.npy" ] && input=(--input "input=models/$name.input.npy")
echo "== plugrt run: where each part ran, and the agreement with the portable backend"
"$plugrt" run "$out/$name.prt" "${input[@]}" --output-dir "$out" --report --check
echo
echo "== drop-in acceleration: the model compiled for the portable backend alone, placed again at load"
echo "   over the backends present (--placement auto, the default); the second load takes it from the blob cache"
"$plugrt" compile "$model" -o "$out/$name.portable.prt" --backends portable >/dev/null
for load in first second; do
  "$plugrt" run "$out/$name.portable.prt" "${input[@]}" --report --cache-dir "$out/cache"
done
echo
echo "== plugrt bench: latency"
"$plugrt" bench "$out/$name.prt" "${input[@]}" --iterations 100
