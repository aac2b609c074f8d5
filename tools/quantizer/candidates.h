// SPDX-License-Identifier: Apache-2.0
// Which nodes of a float ONNX graph the quantizer takes, and the rewrites that come first:
// each Gemm of constant weights as a MatMul and an Add, weights read through PyTorch's
// Identity nodes.
#ifndef PLUGRT_TOOLS_QUANTIZER_CANDIDATES_H_
#define PLUGRT_TOOLS_QUANTIZER_CANDIDATES_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace plugrt::quantizer {

/// A node the quantizer can quantize: a Conv of constant weights (and bias) or a MatMul
/// of a constant 2-D B (Gemm is rewritten into MatMul first: prepare_graph()).
struct Candidate {
  size_t node = 0;   ///< index in the graph's nodes
  std::string name;  ///< the node's name, or its output's when it has none
  std::string op_type;
  std::string input;        ///< the activation
  std::string output;       ///< the tensor quantized after it: its output, or a folded Relu's
  std::string node_output;  ///< the node's own output
  /// Index of a Relu, or a Clip from 0, that alone reads the node's output and is folded
  /// into its quantization (the output quantized over the Relu's range, from zero); -1: none.
  int64_t relu = -1;
};

/// Every node of `graph` the static and dynamic quantizers can take, in graph order.
std::vector<Candidate> find_candidates(const onnx::GraphProto& graph);

/// Rewrites each Gemm of a constant B (alpha 1, beta 1, A not transposed) into a MatMul
/// of B (transposed to [K, N] where transB says so), named as the Gemm, and an Add of C.
/// Gives unnamed nodes a name and reads through Identities of initializers. Returns the
/// names of the Gemms rewritten.
std::set<std::string> prepare_graph(onnx::GraphProto* graph);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_CANDIDATES_H_
