// SPDX-License-Identifier: Apache-2.0
// Small pieces for editing an ONNX graph in place: constants in and out, nodes and their
// attributes.
#ifndef PLUGRT_TOOLS_QUANTIZER_GRAPH_EDIT_H_
#define PLUGRT_TOOLS_QUANTIZER_GRAPH_EDIT_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "onnx_internal.h"

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

/// A node of `op_type` in the default domain, and an int attribute: the importer's.
using compiler::onnx_import::make_node;
using compiler::onnx_import::set_int_attribute;
/// The int attribute `name` of `node`, or `fallback`.
int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
/// The float attribute `name` of `node`, or `fallback`.
float float_attribute(const onnx::NodeProto& node, const std::string& name, float fallback);

/// The default domain's opset of `model` (0 when it has none).
int64_t default_opset(const onnx::ModelProto& model);

/// Drops the initializers no node (nor subgraph) reads any more (the float weights
/// replaced), with the graph inputs an older model declares for them.
void drop_unread_initializers(onnx::GraphProto* graph);

/// The names the subgraphs of `graph`'s nodes read (from the enclosing scope or their own).
std::set<std::string> subgraph_reads(const onnx::GraphProto& graph);

/// Whether `name` is an initializer of `graph`.
bool is_initializer(const onnx::GraphProto& graph, const std::string& name);
/// The names of `graph`'s outputs.
std::set<std::string> graph_outputs(const onnx::GraphProto& graph);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_GRAPH_EDIT_H_
