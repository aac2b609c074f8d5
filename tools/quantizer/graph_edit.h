// SPDX-License-Identifier: Apache-2.0
// Small pieces for editing an ONNX graph in place: constants in and out, Q/DQ nodes, and
// which nodes the quantizer can quantize.
#ifndef PLUGRT_TOOLS_QUANTIZER_GRAPH_EDIT_H_
#define PLUGRT_TOOLS_QUANTIZER_GRAPH_EDIT_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace plugrt::quantizer {

/// A float32 initializer's values and shape.
struct FloatConstant {
  std::vector<float> values;
  std::vector<int64_t> shape;
};

/// The float32 initializer named `name`, or false.
bool float_initializer(const onnx::GraphProto& graph, const std::string& name, FloatConstant* out);

/// Adds an initializer of `dtype` (a TensorProto.DataType) from its raw little-endian bytes.
void add_initializer(onnx::GraphProto* graph, const std::string& name, int32_t dtype, const std::vector<int64_t>& shape,
                     const void* data, size_t bytes);
void add_float_initializer(onnx::GraphProto* graph, const std::string& name, const std::vector<float>& values,
                           const std::vector<int64_t>& shape);

/// A node of `op_type` in the default domain; `axis` >= -rank sets the axis attribute.
onnx::NodeProto make_node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name);
void set_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value);
/// The int attribute `name` of `node`, or `fallback`.
int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
/// The float attribute `name` of `node`, or `fallback`.
float float_attribute(const onnx::NodeProto& node, const std::string& name, float fallback);

/// The default domain's opset of `model` (0 when it has none).
int64_t default_opset(const onnx::ModelProto& model);

/// A node the quantizer can quantize: a Conv of constant weights (and bias) or a MatMul
/// of a constant 2-D B (Gemm is rewritten into MatMul first: prepare_graph()).
struct Candidate {
  size_t node = 0;   ///< index in the graph's nodes
  std::string name;  ///< the node's name, or its output's when it has none
  std::string op_type;
  std::string input;        ///< the activation
  std::string output;       ///< the tensor quantized after it: its output, or a folded Relu's
  std::string node_output;  ///< the node's own output
  int64_t relu = -1;        ///< index of a Relu folded into it (its output quantized with zero at the bottom)
};

/// Every node of `graph` the static and dynamic quantizers can take, in graph order.
std::vector<Candidate> find_candidates(const onnx::GraphProto& graph);

/// Drops the initializers no node reads any more (the float weights replaced).
void drop_unread_initializers(onnx::GraphProto* graph);

/// Rewrites each Gemm of a constant B (alpha 1, beta 1, A not transposed) into a MatMul
/// of B (transposed to [K, N] where transB says so), named as the Gemm, and an Add of C.
/// Gives unnamed nodes a name and reads through Identities of initializers. Returns the
/// names of the Gemms rewritten.
std::set<std::string> prepare_graph(onnx::GraphProto* graph);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_GRAPH_EDIT_H_
