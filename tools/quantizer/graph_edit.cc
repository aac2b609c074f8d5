// SPDX-License-Identifier: Apache-2.0
#include "graph_edit.h"

#include <cstring>
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

std::set<std::string> subgraph_reads(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) read_names(a.g(), &names);
      for (const onnx::GraphProto& subgraph : a.graphs()) read_names(subgraph, &names);
    }
  }
  return names;
}

bool is_initializer(const onnx::GraphProto& graph, const std::string& name) {
  return find_initializer(graph, name) != nullptr;
}

std::set<std::string> graph_outputs(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::ValueInfoProto& output : graph.output()) names.insert(output.name());
  return names;
}

}  // namespace plugrt::quantizer
