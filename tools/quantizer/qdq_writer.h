// SPDX-License-Identifier: Apache-2.0
// Static quantization written as QDQ: each chosen Conv or MatMul becomes
//   DequantizeLinear(x_q) -> Conv(., DequantizeLinear(w_q, axis), [DequantizeLinear(b_q)])
//     -> QuantizeLinear -> DequantizeLinear
// exactly the group tools/compiler/onnx_qdq.cc turns into QLinearConv or QLinearMatMul:
// weights int8, symmetric, one scale per output channel (Conv's axis 0, MatMul's axis 1);
// the bias int32 at x_scale * w_scale with zero point 0; activations per tensor,
// asymmetric uint8 or int8. A Relu (or a Clip from 0, ReLU6) that alone reads the node's
// output is folded: the output is quantized over the Relu's range, whose bottom is zero
// (and whose top is at most the Clip's), so quantizing clamps as the Relu did.
#ifndef PLUGRT_TOOLS_QUANTIZER_QDQ_WRITER_H_
#define PLUGRT_TOOLS_QUANTIZER_QDQ_WRITER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "candidates.h"
#include "graph_edit.h"
#include "observers.h"

namespace plugrt::quantizer {

/// An activation's quantization: real = (q - zero_point) * scale.
struct ActivationParams {
  float scale = 1;
  int32_t zero_point = 0;
};

/// The parameters over `range` (widened to hold zero) for uint8, or int8 when `int8`.
ActivationParams activation_params(Range range, bool int8);

/// Per output channel symmetric int8 weights: one scale per index of `axis`.
struct QuantizedWeights {
  std::vector<int8_t> values;
  std::vector<float> scales;
};
QuantizedWeights quantize_weights(const FloatConstant& weights, size_t axis);

/// Rewrites `graph` (prepared: prepare_graph()) with `chosen` quantized; `ranges` holds
/// the range of each chosen node's input and output tensor.
void write_qdq(onnx::GraphProto* graph, const std::vector<Candidate>& chosen,
               const std::map<std::string, Range>& ranges, bool int8_activations);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_QDQ_WRITER_H_
