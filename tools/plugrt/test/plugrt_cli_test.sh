#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the real `plugrt` binary on real plugin files and checks what it prints.
# Usage: plugrt_cli_test.sh PLUGRT_BINARY TEST_PLUGIN_DIR
set -uo pipefail
plugrt="$1"
plugins="$2"
# Small valid and invalid program files, kept with the program loader's fuzz corpus.
programs="$(cd "$(dirname "$0")/../../../test/fuzz/corpus/program_loader" && pwd)"
models="$(cd "$(dirname "$0")/../../../models" && pwd)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cp "$plugins/libplugrt_good.so" "$plugins/libplugrt_unavailable.so" \
   "$plugins/libplugrt_abi_major_2.so" "$dir/"
unset PLUGRT_PLUGIN_PATH PLUGRT_PLACEMENT
export PLUGRT_CACHE_DIR="$dir/cache"  # cost profiles and the blob cache: never the user's

passed=0
failed=0
check() {  # check NAME EXPECTED_EXIT PATTERN -- COMMAND...
  local name="$1" expected_exit="$2" pattern="$3"
  shift 4
  local output exit_code
  output="$("$@" 2>&1)"
  exit_code=$?
  if [ "$exit_code" -eq "$expected_exit" ] && grep -qE -- "$pattern" <<<"$output"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $exit_code (wanted $expected_exit), pattern '$pattern' in:"
    echo "$output" | sed 's/^/    /'
  fi
}

check help 0 "backends.*doctor.*inspect|doctor" -- "$plugrt" --help
check no-subcommand 106 "A subcommand is required" -- "$plugrt"
check backends-table 0 "^offset +good +1\.0\.0 +1\.[0-9]+ +yes" -- "$plugrt" backends --plugin-dir "$dir"
check backends-unavailable 0 "offline .*no: no test accelerator is attached" -- \
  "$plugrt" backends --plugin-dir "$dir"
check backends-json 0 '"name": "offset"' -- "$plugrt" backends --plugin-dir "$dir" --json
check doctor-refusal 0 "why: built for plugin ABI 2\.[0-9]+, this host implements ABI 1\.[0-9]+" -- \
  "$plugrt" doctor --plugin-dir "$dir"
check doctor-search-path 0 "$dir  \(application\)" -- "$plugrt" doctor --plugin-dir "$dir"
check doctor-json 0 '"verdict": "refused"' -- "$plugrt" doctor --plugin-dir "$dir" --json
check inspect-plugin 0 "backends +offset" -- "$plugrt" inspect "$dir/libplugrt_good.so"
check inspect-incompatible 0 "INCOMPATIBLE with this host" -- \
  "$plugrt" inspect "$dir/libplugrt_abi_major_2.so"
check inspect-json 0 '"exported_symbols": \[' -- "$plugrt" inspect --json "$dir/libplugrt_good.so"
echo "not a plugin" >"$dir/notes.txt"
check inspect-not-elf 1 "^plugrt inspect: .*notes\.txt: not an ELF file" -- \
  "$plugrt" inspect "$dir/notes.txt"
check inspect-missing 1 "^plugrt inspect: .*nowhere\.so" -- "$plugrt" inspect "$dir/nowhere.so"

check inspect-program 0 "delegate portable:0 -> portable: blob [0-9]+ bytes" -- \
  "$plugrt" inspect "$programs/portable_add_relu.prt"
check inspect-program-io 0 "input  x: float32 \[2, 2\]" -- "$plugrt" inspect "$programs/portable_add_relu.prt"
check inspect-program-json 0 '"kind": "program"' -- "$plugrt" inspect --json "$programs/two_methods.prt"
check inspect-bad-program 1 "^plugrt inspect: .*crash-misaligned-segment-table\.prt: the segment table is misaligned" -- \
  "$plugrt" inspect "$programs/crash-misaligned-segment-table.prt"

# Plugin trust: an allow-list of SHA-256 digests, ownership and permission checks.
(cd "$dir" && sha256sum libplugrt_good.so >"$dir/pins.txt")
echo "# nothing pinned" >"$dir/empty-pins.txt"
check allow-list-accepts 0 "^offset +good +1\.0\.0 +1\.[0-9]+ +yes" -- \
  "$plugrt" backends --plugin-dir "$dir" --plugin-allow-list "$dir/pins.txt"
check allow-list-doctor-names-it 0 "Allow-list: $dir/pins.txt" -- \
  "$plugrt" doctor --plugin-dir "$dir" --plugin-allow-list "$dir/pins.txt"
# doctor's verdict line on a file, and the reason under it.
verdict() {  # verdict FILE_NAME ARGS...
  local file="$1"
  shift
  "$plugrt" doctor "$@" | grep -A2 "  $dir/$file\$"
}
check allow-list-refuses-others 0 "why: not trusted: its SHA-256 [0-9a-f]{64} is not in the plugin allow-list" -- \
  verdict libplugrt_unavailable.so --plugin-dir "$dir" --plugin-allow-list "$dir/pins.txt"
check allow-list-refuses-unlisted 0 "why: not trusted: its SHA-256 [0-9a-f]{64} is not in the plugin allow-list .*empty-pins\.txt" -- \
  verdict libplugrt_good.so --plugin-dir "$dir" --plugin-allow-list "$dir/empty-pins.txt"
check allow-list-unlisted-not-loaded 0 "" -- sh -c \
  "! \"$plugrt\" backends --plugin-dir \"$dir\" --plugin-allow-list \"$dir/empty-pins.txt\" | grep -q '^offset '"
check allow-list-from-environment 0 '"verdict": "refused"' -- \
  env PLUGRT_PLUGIN_ALLOW_LIST="$dir/empty-pins.txt" "$plugrt" doctor --plugin-dir "$dir" --json
check allow-list-missing 1 "^plugrt doctor: the plugin allow-list: .*nowhere\.txt: cannot open" -- \
  "$plugrt" doctor --plugin-dir "$dir" --plugin-allow-list "$dir/nowhere.txt"
check allow-list-missing-run 1 "^plugrt run: the plugin allow-list: .*nowhere\.txt: cannot open" -- \
  "$plugrt" run "$programs/portable_add_relu.prt" --plugin-allow-list "$dir/nowhere.txt"
check allow-list-malformed 1 "^plugrt backends: the plugin allow-list: .*notes\.txt:1: " -- \
  "$plugrt" backends --plugin-dir "$dir" --plugin-allow-list "$dir/notes.txt"
check allow-list-in-help 0 "--plugin-allow-list FILE.*PLUGRT_PLUGIN_ALLOW_LIST" -- "$plugrt" run --help
# The real backend next to the command, when it is built: pinned, it loads and runs.
xnnpack="$(dirname "$plugrt")/plugins/libplugrt_xnnpack.so"
if [ -f "$xnnpack" ]; then
  sha256sum "$xnnpack" >"$dir/xnnpack-pins.txt"
  check allow-list-real-plugin 0 "^xnnpack +xnnpack .* yes" -- \
    "$plugrt" backends --plugin-allow-list "$dir/xnnpack-pins.txt"
else
  echo "note: $xnnpack is not built; the allow-list check on it is skipped"
fi
writable="$dir/writable"
mkdir "$writable" && cp "$plugins/libplugrt_good.so" "$writable/" && chmod 0666 "$writable/libplugrt_good.so"
check untrusted-refused 0 "why: not trusted: the file is writable by every user" -- \
  "$plugrt" doctor --plugin-dir "$writable"
check untrusted-allowed 0 "^offset +good .* yes" -- "$plugrt" backends --plugin-dir "$writable" --allow-untrusted-plugins

# quantize: the bundled CNN calibrated on its one sample, then compiled (the QDQ groups
# become QLinearConv); errors name the file and the reason
mkdir -p "$dir/calibration" "$dir/wrong-shape" "$dir/wrong-name/sample0"
cp "$models/tiny_cnn.input.npy" "$dir/calibration/"
cp "$models/mlp.input.npy" "$dir/wrong-shape/"
cp "$models/tiny_cnn.input.npy" "$dir/wrong-name/sample0/image.npy"
check quantize 0 "^/features/features.0/Conv	Conv	yes	" -- \
  "$plugrt" quantize "$models/tiny_cnn.onnx" -o "$dir/cnn.int8.onnx" --calibrate "$dir/calibration"
check quantize-output-error 0 "^model output 'output': relative_l2 0\.[0-9]+, cosine 0\.99" -- \
  "$plugrt" quantize "$models/tiny_cnn.onnx" -o "$dir/cnn.int8.onnx" --calibrate "$dir/calibration"
check quantize-compiles 0 "QLinearConv x5" -- \
  "$plugrt" compile "$dir/cnn.int8.onnx" -o "$dir/cnn.int8.prt" --backends portable
check quantize-runs 0 "ran " -- "$plugrt" run "$dir/cnn.int8.prt" --input "input=$models/tiny_cnn.input.npy"
check quantize-report-file 0 "quantized .* \(5 of 6 nodes, static, 1 calibration samples\)" -- \
  "$plugrt" quantize "$models/tiny_cnn.onnx" -o "$dir/cnn.int8.onnx" --calibrate "$dir/calibration" \
  --observer entropy --exclude /features/features.0/Conv --report "$dir/report.tsv"
check quantize-percentile 0 "^/classifier/Gemm	Gemm	yes	" -- "$plugrt" quantize "$models/tiny_cnn.onnx" \
  -o "$dir/x.onnx" --calibrate "$dir/calibration" --observer percentile --percentile 99.9 --activations int8
check quantize-bad-percentile 105 "percentile" -- "$plugrt" quantize "$models/tiny_cnn.onnx" -o "$dir/x.onnx" \
  --calibrate "$dir/calibration" --observer percentile --percentile 20
check quantize-report-excluded 0 "Conv	no	-	-	excluded" -- cat "$dir/report.tsv"
check quantize-dynamic 0 "quantized .* \(2 of 2 nodes, dynamic, 0 calibration samples\)" -- \
  "$plugrt" quantize "$models/mlp.onnx" -o "$dir/mlp.dynamic.onnx" --dynamic
check quantize-dynamic-runs 0 "ran " -- sh -c "'$plugrt' compile '$dir/mlp.dynamic.onnx' -o '$dir/mlp.dynamic.prt' \
  --backends portable >/dev/null && '$plugrt' run '$dir/mlp.dynamic.prt'"
check quantize-no-calibration 2 "tiny_cnn\.onnx: static quantization needs --calibrate DIR" -- \
  "$plugrt" quantize "$models/tiny_cnn.onnx" -o "$dir/x.onnx"
mkdir -p "$dir/calibration-candidates"
cp "$models/control_flow_head.input.npy" "$dir/calibration-candidates/"
check quantize-dynamic-dimension 0 "quantized .* \(1 of 1 nodes, static, 1 calibration samples\)" -- \
  "$plugrt" quantize "$models/control_flow_head.onnx" -o "$dir/x.onnx" --calibrate "$dir/calibration-candidates"
check quantize-wrong-rank 1 "tiny_cnn\.input\.npy: does not fit the model: input 'input' has rank 3" -- \
  "$plugrt" quantize "$models/control_flow_head.onnx" -o "$dir/x.onnx" --calibrate "$dir/calibration"
check quantize-help 0 "--observer .*minmax,percentile,entropy" -- "$plugrt" quantize --help
mkdir -p "$dir/calibration-mlp"
cp "$models/mlp.input.npy" "$dir/calibration-mlp/"
check quantize-dynamic-calibrate 0 "^/net/net.0/Gemm	Gemm	yes	0\.[0-9]+	0\.99" -- \
  "$plugrt" quantize "$models/mlp.onnx" -o "$dir/x.onnx" --dynamic --calibrate "$dir/calibration-mlp"
check quantize-missing-dir 1 "nowhere: not a calibration directory" -- \
  "$plugrt" quantize "$models/tiny_cnn.onnx" -o "$dir/x.onnx" --calibrate "$dir/nowhere"
check quantize-wrong-shape 1 "mlp\.input\.npy: float32 \[4,64\] does not fit input 'input'" -- \
  "$plugrt" quantize "$models/tiny_cnn.onnx" -o "$dir/x.onnx" --calibrate "$dir/wrong-shape"
check quantize-wrong-name 1 "image\.npy: names no input of the model \(its inputs: 'input'\)" -- \
  "$plugrt" quantize "$models/tiny_cnn.onnx" -o "$dir/x.onnx" --calibrate "$dir/wrong-name"
check quantize-missing-model 1 "nowhere\.onnx: cannot read the model" -- \
  "$plugrt" quantize "$dir/nowhere.onnx" --calibrate "$dir/calibration"

# compile, run, bench on the bundled model
check compile 0 "portable:0: 17 nodes" -- \
  "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/cnn.prt" --backends portable
check compile-json 0 '"untaken_ops"' -- \
  "$plugrt" compile --json "$models/tiny_cnn.onnx" -o "$dir/cnn2.prt" --backends portable
check compile-same-bytes 0 "" -- cmp "$dir/cnn.prt" "$dir/cnn2.prt"
check compile-missing 1 "^plugrt compile: .*nowhere\.onnx" -- "$plugrt" compile "$dir/nowhere.onnx" -o "$dir/x.prt"
check compile-unknown-backend 1 "^plugrt compile: .*warp_drive" -- \
  "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --backends warp_drive
check compile-placement 0 "placement \(cost\): 1 partition, estimated [0-9.]+ us" -- \
  "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --backends portable
check compile-json-estimate 0 '"estimated_us"' -- \
  "$plugrt" compile --json "$models/tiny_cnn.onnx" -o "$dir/x.prt" --backends portable
check compile-bad-placement 105 "placement" -- \
  "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --placement fastest

# --backend-option NAME.KEY=VALUE: compile specs reach the named backend's partition,
# preprocess and (stored in the program) init; run's and bench's reach its init. The echo
# test backend takes the op its compile spec `take` names and logs what reached it.
echo_dir="$plugins/echo"
check backend-option-compile 0 "echo:[0-9]+: 1 node" -- "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/echo.prt" \
  --plugin-dir "$echo_dir" --backends echo --placement first --backend-option echo.take=Relu \
  --backend-option echo.greeting=hello
check backend-option-compile-none 0 "portable:0: 17 nodes" -- "$plugrt" compile "$models/tiny_cnn.onnx" \
  -o "$dir/x.prt" --plugin-dir "$echo_dir" --backends echo
check backend-option-run 0 "echo: preprocess saw greeting=hello; init saw greeting=hello and mood=calm" -- \
  env PLUGRT_LOG=1 "$plugrt" run "$dir/echo.prt" --plugin-dir "$echo_dir" --placement as-compiled \
  --backend-option echo.mood=calm
check backend-option-run-refused 0 "echo refuses: as asked" -- "$plugrt" run "$dir/echo.prt" \
  --plugin-dir "$echo_dir" --placement as-compiled --report --backend-option "echo.refuse=as asked"
check backend-option-bench 0 "init saw greeting=hello and mood=quiet" -- env PLUGRT_LOG=1 "$plugrt" bench \
  "$dir/echo.prt" --plugin-dir "$echo_dir" --placement as-compiled --iterations 1 --warmup 0 \
  --backend-option echo.mood=quiet
check backend-option-portable-gets-none 0 "init saw greeting=hello and mood=$" -- env PLUGRT_LOG=1 "$plugrt" run \
  "$dir/echo.prt" --plugin-dir "$echo_dir" --placement as-compiled --backend-option portable.mood=calm
check backend-option-compile-unknown 1 "^plugrt compile: .*backend option 'npu.take=Relu' names backend 'npu', which is not among the backends found \(echo, portable\)" -- \
  "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --plugin-dir "$echo_dir" --backends echo \
  --backend-option npu.take=Relu
check backend-option-compile-malformed 2 "^plugrt compile: backend option 'echo' is not NAME.KEY=VALUE" -- \
  "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --plugin-dir "$echo_dir" --backend-option echo
check backend-option-run-unknown 1 "backend option 'npu.mood=calm' names backend 'npu', which is not among the backends found" -- \
  "$plugrt" run "$dir/echo.prt" --plugin-dir "$echo_dir" --backend-option npu.mood=calm
check backend-option-run-malformed 1 "backend option 'echo.=x' is not NAME.KEY=VALUE: the key is empty" -- \
  "$plugrt" run "$dir/echo.prt" --plugin-dir "$echo_dir" --backend-option echo.=x
# --tune writes this machine's cost profile (portable, the fallback, is never measured);
# a damaged profile is ignored with a warning naming it.
check compile-tune 0 "tune: 0 measured in [0-9.]+ s, .* profile .*/cache/costs-[0-9a-f]{16}\.tsv" -- \
  env PLUGRT_CACHE_DIR="$dir/cache" "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --backends portable --tune
for profile in "$dir"/cache/costs-*.tsv; do printf 'not a profile\n' >"$profile"; done
# A slow plugin that sorts first by name, dropped next to oneDNN: the first load measures
# where they compete and says what it measured; the program runs on a fast backend.
mkdir -p "$dir/slow" && cp "$plugins/libplugrt_naive_blas.so" "$dir/slow/"
"$plugrt" compile "$models/tiny_cnn.onnx" --backends portable -o "$dir/cnn_portable.prt" >/dev/null 2>&1
check measure-at-load 0 "placement auto measured [0-9]+ figures in .*Conv on blas [0-9.]+ us.*kept in the cost profile" -- \
  "$plugrt" run "$dir/cnn_portable.prt" --plugin-dir "$dir/slow" --placement auto --report --cache-dir "$dir/measure"
check measured-placement 0 "(onednn|xnnpack):0 ran on (onednn|xnnpack) .*its nodes measured" -- \
  "$plugrt" run "$dir/cnn_portable.prt" --plugin-dir "$dir/slow" --placement auto --report --cache-dir "$dir/measure"
check compile-measure-off 0 "estimated, not measured: [0-9]+ nodes other backends also take" -- \
  env PLUGRT_CACHE_DIR="$dir/unmeasured" "$plugrt" compile "$models/mlp.onnx" -o "$dir/mlp_unmeasured.prt" \
  --plugin-dir "$dir/slow" --measure-seconds 0 \
  --no-graph-passes
check compile-damaged-profile 0 "warning: .*costs-[0-9a-f]{16}\.tsv:1: not a plugrt cost profile.*ignored" -- \
  env PLUGRT_CACHE_DIR="$dir/cache" "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --backends portable
check run-report 0 "portable:0 ran on portable \(built-in\), blob from program" -- \
  "$plugrt" run "$dir/cnn.prt" --input "input=$models/tiny_cnn.input.npy" --report --output-dir "$dir" \
    --placement as-compiled
check run-placement-env 0 "portable:0 ran on portable \(built-in\)" -- \
  env PLUGRT_PLACEMENT=as-compiled "$plugrt" run "$dir/cnn.prt" --report
check run-placement-bad 105 "--placement: fastest not in \{auto,as-compiled\}" -- \
  "$plugrt" run "$dir/cnn.prt" --placement fastest
check run-placement-json 0 '"load_ms": [0-9.e+-]+,' -- "$plugrt" run "$dir/cnn.prt" --json --placement as-compiled
check run-output-file 0 "" -- test -s "$dir/output.npy"
check run-output-dir-made 0 "" -- sh -c \
  "\"$plugrt\" run \"$dir/cnn.prt\" --output-dir \"$dir/made/for/it\" >/dev/null && test -s \"$dir/made/for/it/output.npy\""
check run-output-dir-impossible 1 "^plugrt run: --output-dir '.*notes\.txt/sub': cannot create it" -- \
  "$plugrt" run "$dir/cnn.prt" --output-dir "$dir/notes.txt/sub"
check compile-shape-unknown-input 1 "^plugrt compile: .*tiny_cnn\.onnx: --input-shape: 'nope' is not an input of the model" -- \
  "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --input-shape nope=1
check compile-shape-wrong-rank 1 "--input-shape: input 'input' has rank 4, the shape given has rank 2$" -- \
  "$plugrt" compile "$models/tiny_cnn.onnx" -o "$dir/x.prt" --input-shape input=1,3
check compile-dim-needed 1 "dynamic dimension 2 \('len'\) in \[1,8,len\]; give its shape: --input-shape input=D0,D1,D2 \(or bounds for the dimensions that vary: --dim len=MIN\.\.MAX\)$" -- \
  "$plugrt" compile "$models/varying_conv1d.onnx" -o "$dir/x.prt"
check compile-dim-malformed 2 "^plugrt compile: --dim 'len=8' is not NAME=MIN\.\.MAX$" -- \
  "$plugrt" compile "$models/varying_conv1d.onnx" -o "$dir/x.prt" --dim len=8
check compile-dim-unknown 1 "--dim: no input of the model has a dimension named 'length'$" -- \
  "$plugrt" compile "$models/varying_conv1d.onnx" -o "$dir/x.prt" --dim length=1..8
check compile-dim 0 "^compiled .*varying_conv1d\.onnx" -- \
  "$plugrt" compile "$models/varying_conv1d.onnx" -o "$dir/conv1d.prt" --dim len=1..64
check inspect-dim 0 "input  input: float32 \[1, 8, len\] \(up to \[1, 8, 64\]\)" -- "$plugrt" inspect "$dir/conv1d.prt"
check run-dim 0 "matches the expected values" -- "$plugrt" run "$dir/conv1d.prt" \
  --input "input=$models/varying_conv1d.1x8x7.input.npy" --expect "output=$models/varying_conv1d.1x8x7.output.npy"
# NonMaxSuppression: the model declares the number of boxes its inputs select.
check compile-nms 0 "NonMaxSuppression x1" -- \
  "$plugrt" compile "$models/non_max_suppression.onnx" -o "$dir/nms.prt"
nms_inputs=()
for name in boxes scores max_output_boxes_per_class score_threshold; do
  nms_inputs+=(--input "$name=$models/non_max_suppression.$name.npy")
done
check run-nms 0 "selected_indices matches the expected values \(max abs difference 0," -- "$plugrt" run "$dir/nms.prt" \
  "${nms_inputs[@]}" --input "iou_threshold=$models/non_max_suppression.iou_threshold.npy" \
  --expect "selected_indices=$models/non_max_suppression.selected_indices.npy"
# Another IoU threshold (0.2, the score threshold's file) selects another number of boxes.
check run-nms-other-count 1 "NonMaxSuppression: selected 28 boxes, but its output \(selected_indices\) was compiled for 33" -- \
  "$plugrt" run "$dir/nms.prt" "${nms_inputs[@]}" --input "iou_threshold=$models/non_max_suppression.score_threshold.npy"
# A [1, 8, 65] float32 .npy of zeros: one past the bound of --dim len=1..64.
npy_header="{'descr': '<f4', 'fortran_order': False, 'shape': (1, 8, 65), }"
while [ $(((10 + ${#npy_header} + 1) % 64)) -ne 0 ]; do npy_header="$npy_header "; done
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((${#npy_header} + 1)))\\x00"; printf '%s\n' "$npy_header"
  head -c $((8 * 65 * 4)) /dev/zero; } >"$dir/long.npy"
check run-dim-out-of-bounds 1 "input 0 'input': dimension 2 is 65; its bound is 64" -- "$plugrt" run "$dir/conv1d.prt" \
  --input "input=$dir/long.npy"
check run-check 0 "agreement with portable: max abs difference 0" -- \
  "$plugrt" run "$dir/cnn.prt" --check --placement as-compiled
check doctor-program 0 "^    portable:0 -> portable \(built-in\)" -- \
  "$plugrt" doctor --plugin-dir "$dir" --program "$dir/cnn.prt"
check doctor-program-json 0 '"fell_back": false' -- "$plugrt" doctor --plugin-dir "$dir" --program "$dir/cnn.prt" --json
check doctor-program-bad 0 "cannot load: .*notes\.txt" -- "$plugrt" doctor --plugin-dir "$dir" --program "$dir/notes.txt"
check run-wrong-input 1 "^plugrt run: .*input 'input' needs float32 \[1, 3, 32, 32\]" -- \
  "$plugrt" run "$dir/cnn.prt" --input "input=$models/mlp.input.npy"
check run-unknown-input 1 "no input 'nope'" -- "$plugrt" run "$dir/cnn.prt" --input "nope=$models/mlp.input.npy"
check run-not-a-program 1 "^plugrt run: .*notes\.txt: .*not a plugrt program" -- "$plugrt" run "$dir/notes.txt"
# Every bundled model, on the default backends, against what PyTorch computed.
for model in tiny_cnn mlp tiny_encoder; do
  check "model-$model" 0 "output output matches the expected values" -- sh -c \
    "\"$plugrt\" compile \"$models/$model.onnx\" -o \"$dir/$model.prt\" >/dev/null &&
     \"$plugrt\" run \"$dir/$model.prt\" --input input=\"$models/$model.input.npy\" \
       --expect output=\"$models/$model.output.npy\""
done
# Isolated backends: in plugrt-backend-host processes, same answers.
check doctor-isolated 0 "isolated: its backends run in plugrt-backend-host processes" -- \
  "$plugrt" doctor --plugin-dir "$dir" --isolate offset
check isolate-in-help 0 "default: PLUGRT_ISOLATE" -- "$plugrt" bench --help
check environment-refused 2 "^plugrt: PLUGRT_PLACEMENT=.fastest.: expected auto or as-compiled" -- env PLUGRT_PLACEMENT=fastest "$plugrt" backends
if [ -f "$xnnpack" ]; then
  check run-isolated 0 "ran on [a-z]+ \(.*\), isolated" -- \
    "$plugrt" run "$dir/mlp.prt" --input input="$models/mlp.input.npy" --expect output="$models/mlp.output.npy" \
      --isolate all --execute-timeout-ms 5000 --report
  check run-isolate-env 0 ", isolated" -- env PLUGRT_ISOLATE=all "$plugrt" run "$dir/mlp.prt" --report
  check run-isolated-init-timeout 0 "ran on portable .*within the 1 ms time limit \(--init-timeout-ms\)" -- \
    "$plugrt" run "$dir/mlp.prt" --isolate all --init-timeout-ms 1 --report --placement as-compiled
  check run-isolated-init-timeout-auto 0 "portable:0 ran on portable .*the only backend present; not considered: .*within the 1 ms time limit \(--init-timeout-ms\)" -- \
    "$plugrt" run "$dir/mlp.prt" --isolate all --init-timeout-ms 1 --report
fi
# Placement auto: the portable-only program runs on a plugin found now; its blob is
# lowered once, then comes from the cache (--cache-dir, PLUGRT_CACHE_DIR).
if [ -f "$xnnpack" ]; then
  check run-auto-lowers 0 "ran on [a-z]+ \(.*/libplugrt_[a-z]+\.so\), blob from lowered" -- \
    "$plugrt" run "$dir/cnn.prt" --report --cache-dir "$dir/blobs" --expect "output=$models/tiny_cnn.output.npy" \
      --input "input=$models/tiny_cnn.input.npy"
  check run-auto-cached 0 "ran on [a-z]+ \(.*/libplugrt_[a-z]+\.so\), blob from cache" -- \
    env PLUGRT_CACHE_DIR="$dir/blobs" "$plugrt" run "$dir/cnn.prt" --report
  check run-auto-json 0 '"placement_policy": "auto"' -- "$plugrt" run "$dir/cnn.prt" --json --cache-dir "$dir/blobs"
  check run-auto-no-cache 0 "blob from lowered" -- "$plugrt" run "$dir/cnn.prt" --report --no-cache
  check doctor-cache 0 "Blob cache: .*/blobs/blobs: [0-9]+ entr(y|ies), [0-9]+ bytes .*; [1-9][0-9]* hits, [0-9]+ misses" -- \
    "$plugrt" doctor --cache-dir "$dir/blobs"
  # Two processes placing the same program at once into one fresh cache: both right.
  check run-auto-two-processes 0 "^0 0$" -- sh -c \
    "for i in 1 2; do \"$plugrt\" run \"$dir/cnn.prt\" --cache-dir \"$dir/shared\" --input input=\"$models/tiny_cnn.input.npy\" \
       --expect output=\"$models/tiny_cnn.output.npy\" >/dev/null & done; wait %1; a=\$?; wait %2; echo \"\$a \$?\""
  check run-auto-after-two 0 "blob from cache" -- "$plugrt" run "$dir/cnn.prt" --cache-dir "$dir/shared" --report
  check bench-auto 0 "loaded in [0-9.e+-]+ ms, placement auto" -- \
    "$plugrt" bench "$dir/cnn.prt" --iterations 2 --warmup 1 --cache-dir "$dir/blobs"
fi
check init-timeout-in-help 0 "--init-timeout-ms MS" -- "$plugrt" run --help
# An isolated backend's call has a time limit unless told otherwise: a minute.
check execute-timeout-default 0 "--execute-timeout-ms MS.*=60000" -- "$plugrt" run --help
check init-timeout-negative 105 "--init-timeout-ms" -- "$plugrt" run "$dir/mlp.prt" --init-timeout-ms -5
check run-expect-differs 1 "DIFFERS FROM the expected values" -- \
  "$plugrt" run "$dir/tiny_cnn.prt" --expect "output=$models/tiny_cnn.output.npy" --tolerance 1e-9
check bench-json 0 '"median_ms".*|"p90_ms"' -- "$plugrt" bench "$dir/cnn.prt" --iterations 3 --warmup 1 --json
check bench-text 0 "median .* ms, p90 .* ms over 3 iterations" -- "$plugrt" bench "$dir/cnn.prt" --iterations 3
# A second method of the program runs in the same process while the first is timed.
check bench-instances 0 '"instances": 2' -- "$plugrt" bench "$dir/cnn.prt" --iterations 20 --instances 2 --json
check bench-instances-zero 1 "--instances must be at least 1" -- "$plugrt" bench "$dir/cnn.prt" --instances 0
# A fixed budget: no call on fewer threads.
check bench-fixed-threads 0 '"one_thread_calls": 0' -- \
  "$plugrt" bench "$dir/cnn.prt" --iterations 20 --threads 2 --fixed-threads --json

# .npy files of every dtype a program computes, in and out: an Identity per dtype.
if /usr/bin/python3 -c "import numpy, onnx" 2>/dev/null; then
  /usr/bin/python3 - "$dir" <<'PYTHON'
import sys, numpy as np, onnx
from onnx import helper, TensorProto
d = sys.argv[1]
types = {"f8": TensorProto.DOUBLE, "i2": TensorProto.INT16, "u2": TensorProto.UINT16, "u4": TensorProto.UINT32,
         "u8": TensorProto.UINT64, "i1": TensorProto.INT8, "b1": TensorProto.BOOL}
graph = helper.make_graph([helper.make_node("Identity", [f"x_{t}"], [f"y_{t}"]) for t in types], "dtypes",
                          [helper.make_tensor_value_info(f"x_{t}", code, [2, 3]) for t, code in types.items()],
                          [helper.make_tensor_value_info(f"y_{t}", code, [2, 3]) for t, code in types.items()])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{d}/dtypes.onnx")
for t in types:
    values = np.array([[1, 0, 3], [250, 7, 1]]).astype("?" if t == "b1" else t)
    np.save(f"{d}/x_{t}.npy", values)
PYTHON
  /usr/bin/python3 - "$dir" <<'PYTHON'
import sys, onnx
from onnx import helper, TensorProto
graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "two_dynamic",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 3]) for n in ("a", "b")],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{sys.argv[1]}/two_dynamic.onnx")
PYTHON
  check compile-names-every-input-needing-a-shape 1 \
    "input 'a' .*; input 'b' .*give their shapes: --input-shape a=D0,D1 --input-shape b=D0,D1 \(or bounds for the dimensions that vary: --dim N=MIN..MAX\)$" -- \
    "$plugrt" compile "$dir/two_dynamic.onnx" -o "$dir/two_dynamic.prt"
  # Opset 20, read natively: ReduceMax with axes as an input (18), Mish (18), Gelu (20),
  # Split with num_outputs (18); the outputs checked against NumPy's.
  /usr/bin/python3 - "$dir" <<'PYTHON'
import sys, numpy as np, onnx
from math import erf
from onnx import helper, TensorProto, numpy_helper
d = sys.argv[1]
nodes = [helper.make_node("ReduceMax", ["x", "axes"], ["m"], keepdims=1), helper.make_node("Mish", ["m"], ["mish"]),
         helper.make_node("Gelu", ["mish"], ["y"]),
         helper.make_node("Split", ["x"], ["s0", "s1"], axis=2, num_outputs=2)]
graph = helper.make_graph(nodes, "opset20", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1, 4]),
                           helper.make_tensor_value_info("s1", TensorProto.FLOAT, [2, 3, 2])],
                          [numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
model.ir_version = 9
onnx.save(model, f"{d}/opset20.onnx")
x = np.random.default_rng(3).uniform(-3, 3, (2, 3, 4)).astype(np.float32)
m = x.max(axis=1, keepdims=True)
mish = m * np.tanh(np.log1p(np.exp(m)))
np.save(f"{d}/x20.npy", x)
np.save(f"{d}/y20.npy", (0.5 * mish * (1 + np.vectorize(erf)(mish / np.sqrt(2)))).astype(np.float32))
np.save(f"{d}/s1_20.npy", x[:, :, 2:])
model.opset_import[0].version = 22
onnx.save(model, f"{d}/opset22.onnx")
PYTHON
  # A name with an escape sequence in it is printed escaped, never as it is.
  /usr/bin/python3 - "$dir" <<'PYTHON'
import sys, onnx
from onnx import helper, TensorProto
graph = helper.make_graph([helper.make_node("Relu\x1b[31mred", ["x"], ["y"], name="n\rame")], "escapes",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{sys.argv[1]}/escapes.onnx")
PYTHON
  check compile-escapes-names 1 "node 'n[\\]x0dame' \(Relu[\\]x1b\[31mred, opset 17\)" -- \
    "$plugrt" compile "$dir/escapes.onnx" -o "$dir/escapes.prt"
  check compile-escapes-names-raw 1 "^no-escape-byte$" -- sh -c \
    "\"$plugrt\" compile \"$dir/escapes.onnx\" -o \"$dir/escapes.prt\" 2>&1 | grep -q \"\$(printf '\\033')\" && echo raw || { echo no-escape-byte; exit 1; }"
  check compile-opset-20 0 "compiled .*opset20.prt" -- "$plugrt" compile "$dir/opset20.onnx" -o "$dir/opset20.prt"
  check run-opset-20 0 "output y matches.*" -- "$plugrt" run "$dir/opset20.prt" --input "x=$dir/x20.npy" \
    --expect "y=$dir/y20.npy" --expect "s1=$dir/s1_20.npy"
  check compile-opset-22-refused 1 "opset 22 of the default ONNX domain is not supported \(plugrt imports opsets 7 to 21\)" -- \
    "$plugrt" compile "$dir/opset22.onnx" -o "$dir/opset22.prt"
  check compile-dtypes 0 "compiled .*dtypes.prt" -- "$plugrt" compile "$dir/dtypes.onnx" -o "$dir/dtypes.prt"
  inputs=() expects=()
  for t in f8 i2 u2 u4 u8 i1 b1; do inputs+=(--input "x_$t=$dir/x_$t.npy"); expects+=(--expect "y_$t=$dir/x_$t.npy"); done
  check run-npy-every-dtype 0 "output y_f8: double \\[2, 3\\]" -- \
    "$plugrt" run "$dir/dtypes.prt" "${inputs[@]}" "${expects[@]}" --output-dir "$dir/dtypes-out"
  check run-npy-written-back 0 "^same$" -- /usr/bin/python3 -c "
import numpy as np
same = all((np.load('$dir/dtypes-out/y_%s.npy' % t) == np.load('$dir/x_%s.npy' % t)).all() and
           np.load('$dir/dtypes-out/y_%s.npy' % t).dtype == np.load('$dir/x_%s.npy' % t).dtype
           for t in ['f8', 'i2', 'u2', 'u4', 'u8', 'i1', 'b1'])
print('same' if same else 'differ')"
else
  echo "plugrt_cli_test: /usr/bin/python3 has no numpy and onnx (scripts/install-deps.sh installs them): the .npy dtype checks did not run"
  failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
