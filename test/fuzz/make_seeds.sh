#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the seed inputs of the fuzz targets from real files into OUT_DIR (then
# review and copy what is wanted into test/fuzz/corpus/; keep each target under 200 KB):
#   graph_ir/        the whole graph IR of models/mlp.onnx and models/loop_rnn.onnx (its
#                    Loop and If carry subgraphs; compiled for portable alone), the
#                    small portable subgraphs of every bundled model, and single nodes
#                    whose parameters come at run time (from the ONNX backend tests)
#   portable_blob/   the portable blobs and fallbacks of programs compiled from models/,
#                    and the whole loop_rnn graph
#   <backend>_blob/  each backend's blobs from the same models (every plugin in
#                    BUILD_DIR/bin/plugins, each compiled alone with portable), compiled
#                    without fallbacks so that every blob holds its weights
#   onnx_importer/   models/mlp.onnx, models/varying_conv1d.onnx, single-node models from the ONNX backend tests
#                    and four of its sequence models
#                    (Debian's libonnx-testdata)
# Blobs over 2 KB are left out (one mid-sized one per backend stays), so the fuzzers
# mutate small inputs; with the fuzzers built in BUILD_DIR, only the seeds that add
# coverage are kept (libFuzzer's -merge=1). BUILD_DIR needs bin/plugrt, the backend
# plugins in bin/plugins and test/fuzz/plugrt_fuzz_extract_blobs:
#   cmake --build build-fuzz --target plugrt plugrt_fuzzers plugrt_fuzz_extract_blobs
# Usage: test/fuzz/make_seeds.sh BUILD_DIR OUT_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
build="$1"
out="$2"
source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
plugrt="$build/bin/plugrt"
extract="$build/test/fuzz/plugrt_fuzz_extract_blobs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Every model for each backend plugin of the build on its own (with portable for the rest).
for plugin in "$build"/bin/plugins/libplugrt_*.so; do
  backend="$(basename "$plugin" .so)"
  backend="${backend#libplugrt_}"
  for model in "$source_dir"/models/*.onnx; do
    name="$(basename "$model" .onnx)"
    "$plugrt" compile "$model" -o "$work/$name.$backend.prt" --backends "$backend" >/dev/null
    "$extract" "$work/$name.$backend.prt" "$work/blobs"
    # The blob fuzzers lend init no constants: their seeds are blobs that hold their
    # weights, as compiled without fallbacks (with them, a blob may name its weights).
    "$plugrt" compile "$model" -o "$work/$name.$backend.embedded.prt" --backends "$backend" --no-fallback >/dev/null
    "$extract" "$work/$name.$backend.embedded.prt" "$work/embedded"
  done
done
for name in mlp loop_rnn; do
  "$plugrt" compile "$source_dir/models/$name.onnx" -o "$work/${name}_portable.prt" --backends portable >/dev/null
  "$extract" "$work/${name}_portable.prt" "$work/whole"
done
# Nodes whose parameters come at run time (Reshape's shape, Slice's starts...), from the
# ONNX backend tests, whose models take them as inputs.
node_tests=/usr/share/libonnx-testdata/data/node
for test in reshape_reordered_all_dims slice reduce_sum_keepdims_example unsqueeze_axis_0 \
            resize_upsample_sizes_nearest expand_dim_changed tile top_k onehot_with_axis constant_pad \
            compress_0 split_variable_parts_1d; do
  "$plugrt" compile "$node_tests/test_$test/model.onnx" -o "$work/$test.prt" --backends portable >/dev/null
  "$extract" "$work/$test.prt" "$work/parameters"
done

# copy_small FROM_DIR TO_DIR [KEEP_FILE]: the distinct files of at most 2 KB, and KEEP_FILE.
copy_small() {
  mkdir -p "$2"
  local file digest seen=" "
  for file in "$1"/*; do
    [ "$(stat -c %s "$file")" -le 2048 ] || [ "$(basename "$file")" = "${3:-}" ] || continue
    digest="$(sha256sum "$file" | cut -c1-16)"
    case "$seen" in *" $digest "*) continue ;; esac
    seen="$seen$digest "
    cp "$file" "$2/"
  done
}
copy_small "$work/blobs/portable_blob" "$out/portable_blob" tiny_encoder.xnnpack.xnnpack_13.fallback.bin
for dir in "$work"/embedded/*_blob; do
  backend="$(basename "$dir" _blob)"
  [ "$backend" = portable ] || copy_small "$dir" "$out/${backend}_blob" "tiny_encoder.xnnpack.embedded.xnnpack_13.bin"
done
copy_small "$work/blobs/portable_blob" "$out/graph_ir"
cp "$work"/parameters/portable_blob/*.bin "$out/graph_ir/"
cp "$work/whole/portable_blob/mlp_portable.portable_0.bin" "$out/graph_ir/mlp.whole.bin"
cp "$work/whole/portable_blob/loop_rnn_portable.portable_0.bin" "$out/graph_ir/loop_rnn.whole.bin"
cp "$work/whole/portable_blob/loop_rnn_portable.portable_0.bin" "$out/portable_blob/loop_rnn.whole.bin"

mkdir -p "$out/onnx_importer"
cp "$source_dir/models/mlp.onnx" "$out/onnx_importer/"
cp "$source_dir/models/varying_conv1d.onnx" "$out/onnx_importer/"  # a dim_param the fuzzer bounds
for test in conv_with_strides_padding gemm_default_matrix_bias maxpool_2d_pads softmax_axis_1 \
            reshape_reordered_all_dims transpose_default reduce_mean_keepdims_example slice gather_0 \
            matmul_3d averagepool_2d_pads concat_2d_axis_0 expand_dim_changed constantofshape_int_zeros \
            resize_upsample_scales_nearest layer_normalization_2d_axis0 clip_default_min if loop11 scan9_sum; do
  cp "$node_tests/test_$test/model.onnx" "$out/onnx_importer/$test.onnx"
done
# Sequences lowered at import (tools/compiler/onnx_containers.h), from the "simple" suite.
for model in 3 5 7 8; do
  cp "/usr/share/libonnx-testdata/data/simple/test_sequence_model$model/model.onnx" \
    "$out/onnx_importer/sequence_model$model.onnx"
done
# Keep only the seeds that add coverage, when the fuzzers are built in BUILD_DIR.
for dir in "$out"/*/; do
  name="$(basename "$dir")"
  fuzzer="$build/test/fuzz/plugrt_${name}_fuzzer"
  [ -x "$fuzzer" ] || continue
  mv "$dir" "$work/all_$name"
  mkdir -p "$dir"
  "$fuzzer" -merge=1 "$dir" "$work/all_$name" >/dev/null 2>&1
done
echo "seeds written to $out"
