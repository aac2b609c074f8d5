#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The applications' front door, as a user meets it: installs the build into a temporary
# prefix, moves the prefix, builds examples/app_c and examples/app_cpp against it with
# only find_package(plugrt COMPONENTS runtime), runs them (and examples/app_python with
# PYTHON set) on a model, as ONNX and as a compiled .prt, and checks their outputs
# against `plugrt run` from the same prefix.
# Usage: app_examples_test.sh BUILD_DIR SOURCE_DIR MODEL_NAME [PYTHON]
set -euo pipefail
build="$1" source="$2" model="$3" python="${4:-}"
numpy_python=/usr/bin/python3  # Debian's, with NumPy, compares the outputs
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PLUGRT_CACHE_DIR="$work/cache"  # no blob cache of the user's is read or written
unset PLUGRT_PLUGIN_PATH

cmake --install "$build" --prefix "$work/installed" --strip > "$work/install.log"
mv "$work/installed" "$work/moved"
prefix="$work/moved"

onnx="$source/models/$model.onnx"
input="$source/models/$model.input.npy"
"$prefix/bin/plugrt" compile "$onnx" -o "$work/$model.prt" > /dev/null
name="$("$prefix/bin/plugrt" inspect "$work/$model.prt" --json |
        "$numpy_python" -c 'import json, sys; print(json.load(sys.stdin)["methods"][0]["inputs"][0]["name"])')"
"$prefix/bin/plugrt" run "$work/$model.prt" --input "$name=$input" --output-dir "$work/expected" > /dev/null

for app in app_c app_cpp; do
  cmake -S "$source/examples/$app" -B "$work/$app" -DCMAKE_PREFIX_PATH="$prefix" > "$work/$app.log"
  cmake --build "$work/$app" >> "$work/$app.log"
done

compare() {  # compare DIR: every expected output, in DIR, within 1e-4
  "$numpy_python" - "$work/expected" "$1" <<'PY'
import os, sys, numpy
expected, actual = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(expected))
assert names, "no expected outputs"
for name in names:
    a, b = numpy.load(os.path.join(expected, name)), numpy.load(os.path.join(actual, name))
    assert a.shape == b.shape and a.dtype == b.dtype, (name, a.shape, b.shape, a.dtype, b.dtype)
    assert numpy.allclose(a, b, atol=1e-4, rtol=1e-4), (name, float(numpy.abs(a - b).max()))
print(actual, ":", len(names), "outputs as plugrt run's")
PY
}

for model_file in "$onnx" "$work/$model.prt"; do
  kind="${model_file##*.}"
  "$work/app_c/app_c" "$model_file" "$work/out_c_$kind" "$name=$input"
  compare "$work/out_c_$kind"
  "$work/app_cpp/app_cpp" "$model_file" "$work/out_cpp_$kind" "$name=$input"
  compare "$work/out_cpp_$kind"
  if [ -n "$python" ]; then
    PYTHONPATH="$prefix/lib/python3/dist-packages" "$python" "$source/examples/app_python/run.py" \
      "$model_file" "$work/out_python_$kind" "$name=$input"
    compare "$work/out_python_$kind"
  fi
done
if [ -n "$python" ]; then
  # The installed library finds the installed plugins, next to it in the moved prefix.
  PYTHONPATH="$prefix/lib/python3/dist-packages" "$python" - "$work/$model.prt" <<'PY'
import sys, plugrt
session = plugrt.load(sys.argv[1])
origins = [d["origin"] for d in session.report["delegates"]]
assert any("/lib/plugrt/plugins/" in o for o in origins), origins
PY
fi
echo "app_examples_test: ok"
