// SPDX-License-Identifier: Apache-2.0
// The ahead-of-time form of a oneDNN blob: tensors and ops in oneDNN's vocabulary, as
// lowering builds them, fusion rewrites them and the blob writer stores them
// (schema/onednn_blob.fbs says what each field means).
#ifndef PLUGRT_BACKENDS_ONEDNN_AOT_OP_LIST_H_
#define PLUGRT_BACKENDS_ONEDNN_AOT_OP_LIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "onednn_blob_generated.h"

namespace plugrt::onednn {

struct PostOp {
  blob::PostOpKind kind = blob::PostOpKind::Eltwise;
  blob::Algorithm algorithm = blob::Algorithm::None;
  float alpha = 0;
  float beta = 0;
  int32_t operand = -1;
};

/// How a MatMul reads one of its tensors: its plain bytes under `dims`, matmul axis i
/// being axis perm[i] of those (schema/onednn_blob.fbs, OperandView).
struct OperandView {
  std::vector<int64_t> dims, perm;
};

struct Op {
  blob::OpKind kind = blob::OpKind::Eltwise;
  blob::Algorithm algorithm = blob::Algorithm::None;
  std::vector<int32_t> inputs, outputs;
  float alpha = 0;
  float beta = 0;
  std::vector<int64_t> strides, dilations, padding_begin, padding_end, kernel;
  int64_t groups = 1;
  int32_t axis = 0;
  float epsilon = 0;
  std::vector<int64_t> perm, starts, steps;
  std::vector<PostOp> post_ops;
  std::string name;
  /// QuantizedConvolution, QuantizedMatMul: the requantization; Quantize, Dequantize: the
  /// scale and zero point (schema/onednn_blob.fbs).
  std::vector<float> scales;
  int32_t src_zero_point = 0;
  int32_t dst_zero_point = 0;
  /// Quantize, Dequantize per axis: a zero point per scale, along `axis`.
  std::vector<int32_t> zero_points;
  /// MatMul: the views of src, weights and dst (empty: each tensor as it is), as Einsum
  /// lowers to.
  std::vector<OperandView> views;
};

struct Tensor {
  std::vector<int64_t> dims;
  std::vector<float> data;
  /// The element type; a constant of another type than F32 keeps its elements in
  /// `bytes` (little-endian, row-major in `dims`) instead of `data`.
  blob::DataType dtype = blob::DataType::F32;
  std::vector<uint8_t> bytes;
  bool constant = false;
  /// The graph constant `data` was read from (-1: none). It may have been changed since
  /// (scaled, transposed, folded): the blob writer names the constant only when `data`
  /// still equals its bytes.
  int32_t source = -1;
  /// Written as the name of a graph constant instead of `data` (set by Lowering::finish).
  std::string constant_name;
  int32_t external_input = -1;
  int32_t external_output = -1;
};

struct OpList {
  std::vector<Tensor> tensors;
  std::vector<Op> ops;  // in execution order
  std::vector<uint32_t> inputs, outputs;
};

/// Fuses what pays off (aot/fusion.cc): element-wise ops and binary ops into the
/// convolution, matmul or inner product before them as post-ops, a constant row added
/// after a matmul as its bias, a batch normalization into the (de)convolution before it, a
/// scaling into the copy before it. Drops the tensors nothing uses any more.
void fuse_post_ops(OpList* list);

/// The finished blob (header + flatbuffer). A constant with a `constant_name` is written
/// as that name, its data left out.
std::vector<uint8_t> write_blob(const OpList& list);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_AOT_OP_LIST_H_
