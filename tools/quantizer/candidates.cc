// SPDX-License-Identifier: Apache-2.0
#include "candidates.h"

#include <cstring>
#include <map>

#include "graph_edit.h"
#include "onnx_internal.h"

namespace plugrt::quantizer {

namespace {

/// The one float32 value of constant `name` (an initializer or a Constant node's output).
bool constant_scalar(const onnx::GraphProto& graph, const std::string& name, float* value) {
  FloatConstant constant;
  if (float_initializer(graph, name, &constant) && constant.values.size() == 1) {
    *value = constant.values[0];
    return true;
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1 || node.output(0) != name) continue;
    for (const onnx::AttributeProto& a : node.attribute()) {
      compiler::onnx_import::Tensor tensor;
      if (a.name() != "value" || !compiler::onnx_import::tensor_from_proto(a.t(), &tensor).is_ok()) continue;
      if (tensor.dtype != DType::kFloat32 || tensor.bytes.size() != 4) return false;
      std::memcpy(value, tensor.bytes.data(), 4);
      return true;
    }
  }
  return false;
}

/// A Relu, or a Clip from 0 (ReLU6): quantizing over its output's range, which starts at
/// zero and ends at most at its top, clamps as it does.
bool is_relu(const onnx::GraphProto& graph, const onnx::NodeProto& node) {
  if (!node.domain().empty()) return false;
  if (node.op_type() == "Relu") return true;
  float low = 1;
  return node.op_type() == "Clip" && node.input_size() >= 2 && constant_scalar(graph, node.input(1), &low) && low == 0;
}

/// The Relu that alone reads `node`'s output, when the output is no graph output and no
/// subgraph reads it (`kept`: both).
int64_t folded_relu(const onnx::GraphProto& graph, size_t node, const std::set<std::string>& kept) {
  const std::string& y = graph.node(static_cast<int>(node)).output(0);
  if (kept.count(y) != 0) return -1;
  int64_t relu = -1;
  size_t readers = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& input : graph.node(i).input()) {
      if (input != y) continue;
      ++readers;
      if (is_relu(graph, graph.node(i))) relu = i;
    }
  }
  return readers == 1 ? relu : -1;
}

/// Conv with constant weights (rank >= 3) and bias, or MatMul with a constant 2-D B.
bool quantizable(const onnx::GraphProto& graph, const onnx::NodeProto& node) {
  if (!node.domain().empty() || node.output_size() != 1 || node.input_size() < 2) return false;
  FloatConstant weights;
  if (is_initializer(graph, node.input(0))) return false;
  if (!float_initializer(graph, node.input(1), &weights)) return false;
  if (node.op_type() == "MatMul") return node.input_size() == 2 && weights.shape.size() == 2;
  if (node.op_type() != "Conv" || weights.shape.size() < 3 || node.input_size() > 3) return false;
  FloatConstant bias;
  return node.input_size() < 3 || node.input(2).empty() ||
         (float_initializer(graph, node.input(2), &bias) && bias.shape.size() == 1);
}

/// B of a Gemm as [K, N].
FloatConstant as_k_by_n(const FloatConstant& b, bool transposed) {
  if (!transposed) return b;
  const int64_t n = b.shape[0], k = b.shape[1];
  FloatConstant out{std::vector<float>(b.values.size()), {k, n}};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) out.values[j * n + i] = b.values[i * k + j];
  }
  return out;
}

bool rewritable_gemm(const onnx::GraphProto& graph, const onnx::NodeProto& node, FloatConstant* b) {
  return node.op_type() == "Gemm" && node.domain().empty() && node.output_size() == 1 &&
         int_attribute(node, "transA", 0) == 0 && float_attribute(node, "alpha", 1) == 1 &&
         float_attribute(node, "beta", 1) == 1 && float_initializer(graph, node.input(1), b) && b->shape.size() == 2;
}

/// Reads through each Identity of an initializer (PyTorch's exporter writes one per
/// shared weight), so that the weights are constants of the nodes that read them.
/// Left alone in a graph with subgraphs, which may read the Identities' outputs.
void bypass_constant_identities(onnx::GraphProto* graph) {
  for (const onnx::NodeProto& node : graph->node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) return;
    }
  }
  std::set<std::string> constants, outputs = graph_outputs(*graph);
  for (const onnx::TensorProto& tensor : graph->initializer()) constants.insert(tensor.name());
  std::map<std::string, std::string> source;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    if (node.op_type() == "Identity" && node.domain().empty() && node.input_size() == 1 &&
        constants.count(node.input(0)) != 0 && outputs.count(node.output(0)) == 0) {
      source[node.output(0)] = node.input(0);
      continue;
    }
    for (std::string& input : *node.mutable_input()) {
      auto found = source.find(input);
      if (found != source.end()) input = found->second;
    }
    *kept.Add() = std::move(node);
  }
  graph->mutable_node()->Swap(&kept);
}

}  // namespace

std::vector<Candidate> find_candidates(const onnx::GraphProto& graph) {
  std::set<std::string> kept = graph_outputs(graph);
  const std::set<std::string> read_inside = subgraph_reads(graph);
  kept.insert(read_inside.begin(), read_inside.end());
  std::vector<Candidate> candidates;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!quantizable(graph, node)) continue;
    Candidate c;
    c.node = static_cast<size_t>(i);
    c.name = node.name().empty() ? node.output(0) : node.name();
    c.op_type = node.op_type();
    c.input = node.input(0);
    c.node_output = node.output(0);
    c.relu = folded_relu(graph, c.node, kept);
    c.output = c.relu >= 0 ? graph.node(static_cast<int>(c.relu)).output(0) : c.node_output;
    candidates.push_back(c);
  }
  return candidates;
}

std::set<std::string> prepare_graph(onnx::GraphProto* graph) {
  bypass_constant_identities(graph);
  std::set<std::string> rewritten;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto node = graph->node(i);
    if (node.name().empty()) node.set_name(node.op_type() + "_" + std::to_string(i));
    FloatConstant b;
    if (!rewritable_gemm(*graph, node, &b)) {
      *nodes.Add() = node;
      continue;
    }
    const bool bias = node.input_size() > 2 && !node.input(2).empty();
    const std::string weights = node.input(1) + "_k_by_n", y = node.output(0);
    const FloatConstant kn = as_k_by_n(b, int_attribute(node, "transB", 0) != 0);
    add_float_initializer(graph, weights, kn.values, kn.shape);
    *nodes.Add() = make_node("MatMul", {node.input(0), weights}, {bias ? y + "_matmul" : y}, node.name());
    if (bias) *nodes.Add() = make_node("Add", {y + "_matmul", node.input(2)}, {y}, node.name() + "_bias");
    rewritten.insert(node.name());
  }
  graph->mutable_node()->Swap(&nodes);
  return rewritten;
}

}  // namespace plugrt::quantizer
