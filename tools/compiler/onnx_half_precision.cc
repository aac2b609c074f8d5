// SPDX-License-Identifier: Apache-2.0
// float16 and bfloat16 models computed in float32 (ImportOptions::half_precision): the
// model is rewritten before import so that every half value inside the graph is float32.
// Constants are widened at import, Cast and the ops that make tensors of a given dtype
// make float32 instead, and at each half input and output of the graph a Cast keeps the
// program's interface as the model declares it. The heavy kernels (Conv, MatMul, Gemm,
// pooling, normalization) and the fast backends take float32 only; ONNX Runtime does the
// same on CPU, inserting casts around the ops it has no half kernel for.
#include <cstring>
#include <set>
#include <string>

#include "onnx_internal.h"
#include "plugrt/half_float.h"

namespace plugrt::compiler::onnx_import {

namespace {

using onnx::TensorProto;

bool is_half(int32_t elem_type) { return elem_type == TensorProto::FLOAT16 || elem_type == TensorProto::BFLOAT16; }

float half_to_float(uint16_t bits, bool bfloat) { return bfloat ? bfloat16_to_float(bits) : float16_to_float(bits); }

/// A half tensor's values as float32 raw data.
Status widen(TensorProto* tensor) {
  if (!is_half(tensor->data_type())) return Status::ok();
  if (tensor->data_location() == TensorProto::EXTERNAL) {
    return Status(Error::kNotSupported, "tensor '" + tensor->name() + "' keeps its data outside the model");
  }
  const bool bfloat = tensor->data_type() == TensorProto::BFLOAT16;
  std::string widened;
  if (tensor->has_raw_data()) {
    const std::string& raw = tensor->raw_data();
    if (raw.size() % 2 != 0) return Status(Error::kInvalidArgument, "tensor '" + tensor->name() + "' has odd raw data");
    widened.resize(raw.size() * 2);
    for (size_t i = 0; i < raw.size() / 2; ++i) {
      const uint16_t bits = static_cast<uint16_t>(static_cast<uint8_t>(raw[2 * i]) |
                                                  (static_cast<uint16_t>(static_cast<uint8_t>(raw[2 * i + 1])) << 8));
      const float value = half_to_float(bits, bfloat);
      std::memcpy(&widened[4 * i], &value, 4);
    }
  } else {
    widened.resize(static_cast<size_t>(tensor->int32_data_size()) * 4);
    for (int i = 0; i < tensor->int32_data_size(); ++i) {
      const float value = half_to_float(static_cast<uint16_t>(tensor->int32_data(i)), bfloat);
      std::memcpy(&widened[4 * static_cast<size_t>(i)], &value, 4);
    }
    tensor->clear_int32_data();
  }
  tensor->set_data_type(TensorProto::FLOAT);
  tensor->set_raw_data(std::move(widened));
  return Status::ok();
}

void widen(onnx::TypeProto* type) {
  if (type->has_tensor_type() && is_half(type->tensor_type().elem_type())) {
    type->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  }
  if (type->has_sequence_type()) widen(type->mutable_sequence_type()->mutable_elem_type());
  if (type->has_optional_type()) widen(type->mutable_optional_type()->mutable_elem_type());
}

Status widen_graph(onnx::GraphProto* graph, bool keep_interface);

/// A node's half dtypes (Cast's `to`, the generators' `dtype`), tensors and subgraphs.
Status widen_node(onnx::NodeProto* node) {
  for (onnx::AttributeProto& attribute : *node->mutable_attribute()) {
    if ((attribute.name() == "to" || attribute.name() == "dtype") && attribute.type() == onnx::AttributeProto::INT &&
        is_half(static_cast<int32_t>(attribute.i()))) {
      attribute.set_i(TensorProto::FLOAT);
    }
    if (attribute.has_t()) PLUGRT_RETURN_IF_ERROR(widen(attribute.mutable_t()));
    for (TensorProto& tensor : *attribute.mutable_tensors()) PLUGRT_RETURN_IF_ERROR(widen(&tensor));
    if (attribute.has_g()) PLUGRT_RETURN_IF_ERROR(widen_graph(attribute.mutable_g(), false));
    for (onnx::GraphProto& subgraph : *attribute.mutable_graphs()) {
      PLUGRT_RETURN_IF_ERROR(widen_graph(&subgraph, false));
    }
  }
  return Status::ok();
}

/// Every half value of `graph` as float32; with `keep_interface`, its own inputs and
/// outputs keep their types (the caller casts at them).
Status widen_graph(onnx::GraphProto* graph, bool keep_interface) {
  for (TensorProto& tensor : *graph->mutable_initializer()) PLUGRT_RETURN_IF_ERROR(widen(&tensor));
  for (onnx::NodeProto& node : *graph->mutable_node()) PLUGRT_RETURN_IF_ERROR(widen_node(&node));
  for (onnx::ValueInfoProto& info : *graph->mutable_value_info()) widen(info.mutable_type());
  if (!keep_interface) {
    for (onnx::ValueInfoProto& info : *graph->mutable_input()) widen(info.mutable_type());
    for (onnx::ValueInfoProto& info : *graph->mutable_output()) widen(info.mutable_type());
  }
  return Status::ok();
}

/// Renames value `from` to `to` wherever `graph` and its subgraphs read or write it.
void rename(onnx::GraphProto* graph, const std::string& from, const std::string& to) {
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    for (std::string& input : *node.mutable_input()) {
      if (input == from) input = to;
    }
    for (std::string& output : *node.mutable_output()) {
      if (output == from) output = to;
    }
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) rename(attribute.mutable_g(), from, to);
      for (onnx::GraphProto& subgraph : *attribute.mutable_graphs()) rename(&subgraph, from, to);
    }
  }
  for (TensorProto& tensor : *graph->mutable_initializer()) {
    if (tensor.name() == from) tensor.set_name(to);
  }
  for (onnx::ValueInfoProto& info : *graph->mutable_value_info()) {
    if (info.name() == from) info.set_name(to);
  }
}

/// Every value name of `graph` and its subgraphs, so that a new one is unique.
void collect_names(const onnx::GraphProto& graph, std::set<std::string>* names) {
  for (const onnx::ValueInfoProto& info : graph.input()) names->insert(info.name());
  for (const TensorProto& tensor : graph.initializer()) names->insert(tensor.name());
  for (const onnx::NodeProto& node : graph.node()) {
    names->insert(node.output().begin(), node.output().end());
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) collect_names(attribute.g(), names);
      for (const onnx::GraphProto& subgraph : attribute.graphs()) collect_names(subgraph, names);
    }
  }
}

std::string unique_name(const std::string& base, std::set<std::string>* names) {
  std::string name = base + "_float32";
  for (int n = 2; names->count(name) != 0; ++n) name = base + "_float32_" + std::to_string(n);
  names->insert(name);
  return name;
}

onnx::NodeProto cast_node(const std::string& from, const std::string& to, int32_t dtype) {
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(to + "_cast");
  cast.add_input(from);
  cast.add_output(to);
  onnx::AttributeProto* attribute = cast.add_attribute();
  attribute->set_name("to");
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(dtype);
  return cast;
}

bool has_half(const onnx::GraphProto& graph);

bool has_half(const onnx::ValueInfoProto& info) {
  return info.type().has_tensor_type() && is_half(info.type().tensor_type().elem_type());
}

bool has_half(const onnx::GraphProto& graph) {
  for (const TensorProto& tensor : graph.initializer()) {
    if (is_half(tensor.data_type())) return true;
  }
  for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const onnx::ValueInfoProto& info : *list) {
      if (has_half(info)) return true;
    }
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if ((attribute.name() == "to" || attribute.name() == "dtype") && is_half(static_cast<int32_t>(attribute.i()))) {
        return true;
      }
      if (attribute.has_t() && is_half(attribute.t().data_type())) return true;
      if (attribute.has_g() && has_half(attribute.g())) return true;
      for (const onnx::GraphProto& subgraph : attribute.graphs()) {
        if (has_half(subgraph)) return true;
      }
    }
  }
  return false;
}

}  // namespace

Result<bool> compute_half_in_float32(onnx::ModelProto* model) {
  onnx::GraphProto* graph = model->mutable_graph();
  if (!has_half(*graph)) return false;
  std::set<std::string> names;
  collect_names(*graph, &names);
  std::set<std::string> input_names, initializer_names;
  for (const onnx::ValueInfoProto& info : graph->input()) input_names.insert(info.name());
  for (const TensorProto& tensor : graph->initializer()) initializer_names.insert(tensor.name());
  std::vector<onnx::NodeProto> casts_in, casts_out;
  for (onnx::ValueInfoProto& input : *graph->mutable_input()) {
    if (!has_half(input)) continue;
    if (initializer_names.count(input.name()) != 0) {  // a constant listed as an input (IR 3)
      widen(input.mutable_type());
      continue;
    }
    const std::string widened = unique_name(input.name(), &names);
    rename(graph, input.name(), widened);
    casts_in.push_back(cast_node(input.name(), widened, TensorProto::FLOAT));
  }
  for (const onnx::ValueInfoProto& output : graph->output()) {
    if (!has_half(output) || input_names.count(output.name()) != 0) continue;  // an input given back keeps it
    const std::string widened = unique_name(output.name(), &names);
    rename(graph, output.name(), widened);
    casts_out.push_back(cast_node(widened, output.name(), output.type().tensor_type().elem_type()));
  }
  PLUGRT_RETURN_IF_ERROR(widen_graph(graph, true));
  // The casts in first and the casts out last, so the nodes stay in order.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (onnx::NodeProto& cast : casts_in) *nodes.Add() = std::move(cast);
  for (onnx::NodeProto& node : *graph->mutable_node()) *nodes.Add() = std::move(node);
  for (onnx::NodeProto& cast : casts_out) *nodes.Add() = std::move(cast);
  graph->mutable_node()->Swap(&nodes);
  return true;
}

}  // namespace plugrt::compiler::onnx_import
