// SPDX-License-Identifier: Apache-2.0
// Dynamic quantization, as ONNX Runtime's quantize_dynamic writes it: each chosen MatMul
// of constant weights becomes
//   DynamicQuantizeLinear(x) -> MatMulInteger(x_q, w_q, x_zero, w_zero) -> Cast(float)
//     -> Mul(x_scale * w_scale)
// with the weights int8, symmetric, one scale per output column. Activations are
// quantized (uint8) at run time, so no calibration is needed.
#ifndef PLUGRT_TOOLS_QUANTIZER_DYNAMIC_WRITER_H_
#define PLUGRT_TOOLS_QUANTIZER_DYNAMIC_WRITER_H_

#include <vector>

#include <onnx/onnx_pb.h>

#include "candidates.h"
#include "graph_edit.h"

namespace plugrt::quantizer {

/// Rewrites each MatMul of `chosen` in `graph` (prepared: prepare_graph()); returns how
/// many it rewrote (Convs are left float).
size_t write_dynamic(onnx::GraphProto* graph, const std::vector<Candidate>& chosen);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_DYNAMIC_WRITER_H_
