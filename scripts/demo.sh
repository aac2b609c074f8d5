#!/usr/bin/env bash
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
scripts/build.sh >"$build/demo-build.log" 2>&1 || { cat "$build/demo-build.log"; exit 1; }
plugrt="$build/bin/plugrt"
model="${1:-models/tiny_cnn.onnx}"
name="$(basename "$model" .onnx)"
out="$build/demo"
mkdir -p "$out"

echo "== plugrt backends: what this machine has"
"$plugrt" backends
echo
echo "== plugrt compile: every backend present, in the default priority, portable last"
"$plugrt" compile "$model" -o "$out/$name.prt"
echo
input=()
[ -f "models/$name.input.npy" ] && input=(--input "input=models/$name.input.npy")
echo "== plugrt run: where each part ran, and the agreement with the portable backend"
"$plugrt" run "$out/$name.prt" "${input[@]}" --output-dir "$out" --report --check
echo
echo "== plugrt bench: latency"
"$plugrt" bench "$out/$name.prt" "${input[@]}" --iterations 100
