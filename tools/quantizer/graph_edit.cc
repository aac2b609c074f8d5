// SPDX-License-Identifier: Apache-2.0
#include "graph_edit.h"

#include <cstring>
#include <map>
#include <set>

#include "onnx_internal.h"

namespace plugrt::quantizer {

namespace {

const onnx::TensorProto* find_initializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

std::set<std::string> graph_outputs(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::ValueInfoProto& output : graph.output()) names.insert(output.name());
  return names;
}

/// Every name the nodes of `graph` and of its subgraphs read.
void read_names(const onnx::GraphProto& graph, std::set<std::string>* names) {
  for (const onnx::NodeProto& node : graph.node()) {
    names->insert(node.input().begin(), node.input().end());
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) read_names(a.g(), names);
      for (const onnx::GraphProto& subgraph : a.graphs()) read_names(subgraph, names);
    }
  }
}

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

/// The Relu that alone reads `node`'s output, when the output is no graph output.
int64_t folded_relu(const onnx::GraphProto& graph, size_t node, const std::set<std::string>& outputs) {
  const std::string& y = graph.node(static_cast<int>(node)).output(0);
  if (outputs.count(y) != 0) return -1;
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
  if (find_initializer(graph, node.input(0)) != nullptr) return false;
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

}  // namespace

bool float_initializer(const onnx::GraphProto& graph, const std::string& name, FloatConstant* out) {
  const onnx::TensorProto* proto = find_initializer(graph, name);
  if (proto == nullptr || proto->data_type() != onnx::TensorProto::FLOAT) return false;
  compiler::onnx_import::Tensor tensor;
  if (!compiler::onnx_import::tensor_from_proto(*proto, &tensor).is_ok()) return false;
  out->shape = tensor.shape;
  out->values.resize(tensor.bytes.size() / 4);
  std::memcpy(out->values.data(), tensor.bytes.data(), tensor.bytes.size());
  return true;
}

void add_initializer(onnx::GraphProto* graph, const std::string& name, int32_t dtype, const std::vector<int64_t>& shape,
                     const void* data, size_t bytes) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(dtype);
  for (int64_t d : shape) tensor->add_dims(d);
  tensor->set_raw_data(std::string(static_cast<const char*>(data), bytes));
}

void add_float_initializer(onnx::GraphProto* graph, const std::string& name, const std::vector<float>& values,
                           const std::vector<int64_t>& shape) {
  add_initializer(graph, name, onnx::TensorProto::FLOAT, shape, values.data(), values.size() * 4);
}

onnx::NodeProto make_node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name) {
  onnx::NodeProto node;
  node.set_op_type(op_type);
  node.set_name(name);
  for (const std::string& input : inputs) node.add_input(input);
  for (const std::string& output : outputs) node.add_output(output);
  return node;
}

void set_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

float float_attribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return a.f();
  }
  return fallback;
}

int64_t default_opset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return 0;
}

std::vector<Candidate> find_candidates(const onnx::GraphProto& graph) {
  const std::set<std::string> outputs = graph_outputs(graph);
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
    c.relu = folded_relu(graph, c.node, outputs);
    c.output = c.relu >= 0 ? graph.node(static_cast<int>(c.relu)).output(0) : c.node_output;
    candidates.push_back(c);
  }
  return candidates;
}

void drop_unread_initializers(onnx::GraphProto* graph) {
  std::set<std::string> read, dropped;
  read_names(*graph, &read);
  for (const onnx::ValueInfoProto& output : graph->output()) read.insert(output.name());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (onnx::TensorProto& tensor : *graph->mutable_initializer()) {
    if (read.count(tensor.name()) != 0) {
      *kept.Add() = std::move(tensor);
    } else {
      dropped.insert(tensor.name());
    }
  }
  graph->mutable_initializer()->Swap(&kept);
  // An older model also declares its initializers as inputs: those go with them.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  for (onnx::ValueInfoProto& input : *graph->mutable_input()) {
    if (dropped.count(input.name()) == 0) *inputs.Add() = std::move(input);
  }
  graph->mutable_input()->Swap(&inputs);
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
