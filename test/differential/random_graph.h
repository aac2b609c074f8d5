// SPDX-License-Identifier: Apache-2.0
// Small random ONNX graphs for the differential test: one or two "stages", each an op
// that fast backends fuse into (MatMul, Gemm, Conv, ConvTranspose, pooling, the
// normalisations, Softmax, a binary op of two run-time values) followed by a chain of
// 1 to 4 element-wise, activation and reshape ops with scalar, per-channel,
// broadcast and full-tensor constants, in either operand order; or, for about one seed
// in four, a quantized graph: a float value (a graph input, or a head and a chain)
// through QuantizeLinear, then QLinearConv, QLinearMatMul and requantizations through
// float ops, to an 8-bit output or through DequantizeLinear to a float one.
#ifndef PLUGRT_TEST_DIFFERENTIAL_RANDOM_GRAPH_H_
#define PLUGRT_TEST_DIFFERENTIAL_RANDOM_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

namespace plugrt::differential {

struct RandomGraph {
  uint64_t seed = 0;
  /// A serialised ONNX model (opset 17), every value of static shape; inputs float32,
  /// values and outputs float32, or uint8, int8 and int32 in quantized graphs.
  std::vector<uint8_t> onnx;
  /// What it computes, one op a step with its output shape: "Conv[1,8,5,5] Mul[1,8,5,5]".
  std::string description;
  /// The longest reduction any op of the graph makes (a dot product's length, a
  /// pooling window's size...), which scales the comparison's tolerance.
  int64_t reduction_length = 1;
};

/// The metadata_props key under which a graph with quantized ops says how each of its
/// outputs is compared, one word per graph output in order: "q<N>", a uint8 or int8
/// output whose elements may differ from portable's by N quanta; "a<X>", a float output
/// that may differ by X beyond the float tolerance (error carried from 8-bit values).
/// A graph without it: every output float, X = 0.
inline constexpr char kOutputBoundsKey[] = "plugrt_differential_output_bounds";

/// The graph of `seed`: the same seed gives the same graph on every machine.
RandomGraph generate_graph(uint64_t seed);

}  // namespace plugrt::differential

#endif  // PLUGRT_TEST_DIFFERENTIAL_RANDOM_GRAPH_H_
