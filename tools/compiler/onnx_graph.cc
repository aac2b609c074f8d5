// SPDX-License-Identifier: Apache-2.0
// Graph-level helpers of the ONNX importer: node order, dead nodes, Constant and
// Dropout nodes, attribute checks that must run before ONNX's own code does.
#include <algorithm>
#include <functional>
#include <map>
#include <queue>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

namespace {

/// Attributes that every ONNX op using them requires to be at least 1.
const std::set<std::string>& positive_attributes() {
  static const std::set<std::string> names = {"strides", "dilations", "kernel_shape", "blocksize", "group"};
  return names;
}

}  // namespace

Status check_node_attributes(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    // If's branches and Loop's and Scan's bodies are imported (onnx_control_flow.cc).
    const bool control_flow = node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan";
    if ((!control_flow && attribute.type() == onnx::AttributeProto::GRAPH) ||
        attribute.type() == onnx::AttributeProto::GRAPHS) {
      return Status(Error::kNotSupported, "attribute '" + attribute.name() +
                                              "' is a graph (subgraphs are supported in If, Loop and Scan only)");
    }
    // ONNX's shape inference divides by these without checking them (a stride of 0
    // is a division by zero there), so refuse bad values before it runs.
    if (positive_attributes().count(attribute.name()) != 0) {
      const bool is_list = attribute.type() == onnx::AttributeProto::INTS;
      bool positive = is_list || attribute.type() == onnx::AttributeProto::INT;
      if (is_list) {
        for (int64_t v : attribute.ints()) positive = positive && v >= 1;
      } else {
        positive = positive && attribute.i() >= 1;
      }
      if (!positive) {
        return Status(Error::kInvalidArgument, "attribute '" + attribute.name() + "' must hold integers of at least 1");
      }
    }
    if (node.op_type() != "Constant") continue;
    if (attribute.name() == "sparse_value" || attribute.name() == "value_string" ||
        attribute.name() == "value_strings") {
      return Status(Error::kNotSupported,
                    "attribute '" + attribute.name() + "' is not supported (sparse or string constants)");
    }
  }
  return Status::ok();
}

void sort_nodes(onnx::GraphProto* graph) {
  const auto count = static_cast<size_t>(graph->node_size());
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < count; ++i) {
    for (const std::string& output : graph->node(static_cast<int>(i)).output()) {
      if (!output.empty()) producer[output] = i;
    }
  }
  std::vector<size_t> pending(count, 0);
  std::vector<std::vector<size_t>> consumers(count);
  for (size_t i = 0; i < count; ++i) {
    for (const std::string& input : graph->node(static_cast<int>(i)).input()) {
      auto it = input.empty() ? producer.end() : producer.find(input);
      if (it == producer.end() || it->second == i) continue;
      consumers[it->second].push_back(i);
      ++pending[i];
    }
  }
  // Kahn's algorithm, always taking the earliest ready node: a sorted model keeps its order.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < count; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t c : consumers[i]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (order.size() != count) return;
  bool sorted = true;
  for (size_t i = 0; i < count; ++i) sorted = sorted && order[i] == i;
  if (sorted) return;
  std::vector<onnx::NodeProto> nodes(count);
  for (size_t i = 0; i < count; ++i) nodes[i].Swap(graph->mutable_node(static_cast<int>(order[i])));
  graph->clear_node();
  for (onnx::NodeProto& node : nodes) graph->add_node()->Swap(&node);
}

void remove_dead_nodes(onnx::GraphProto* graph, const std::set<std::string>& outputs) {
  std::set<std::string> live(outputs.begin(), outputs.end());
  std::vector<bool> keep(static_cast<size_t>(graph->node_size()), false);
  for (int i = graph->node_size() - 1; i >= 0; --i) {
    const onnx::NodeProto& node = graph->node(i);
    for (const std::string& output : node.output()) {
      if (!output.empty() && live.count(output) != 0) keep[static_cast<size_t>(i)] = true;
    }
    if (!keep[static_cast<size_t>(i)]) continue;
    for (const std::string& input : node.input()) live.insert(input);
    for (const std::string& input : implicit_inputs(node)) live.insert(input);  // read by its subgraphs
  }
  if (std::find(keep.begin(), keep.end(), false) == keep.end()) return;
  std::vector<onnx::NodeProto> nodes;
  for (int i = 0; i < graph->node_size(); ++i) {
    if (keep[static_cast<size_t>(i)]) nodes.emplace_back().Swap(graph->mutable_node(i));
  }
  graph->clear_node();
  for (onnx::NodeProto& node : nodes) graph->add_node()->Swap(&node);
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
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

Status constant_node_value(const onnx::NodeProto& node, Tensor* tensor) {
  if (node.attribute_size() != 1) return Status(Error::kInvalidArgument, "a Constant needs exactly one attribute");
  const onnx::AttributeProto& a = node.attribute(0);
  auto store = [tensor](DType dtype, std::vector<int64_t> shape, const void* data, size_t bytes) {
    tensor->dtype = dtype;
    tensor->shape = std::move(shape);
    tensor->bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
  };
  if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
    Status status = tensor_from_proto(a.t(), tensor);
    if (!status.is_ok()) return Status(status.code(), "its value " + status.message());
  } else if (a.name() == "value_float" && a.type() == onnx::AttributeProto::FLOAT) {
    const float value = a.f();
    store(DType::kFloat32, {}, &value, sizeof(value));
  } else if (a.name() == "value_floats" && a.type() == onnx::AttributeProto::FLOATS) {
    const std::vector<float> values(a.floats().begin(), a.floats().end());
    store(DType::kFloat32, {static_cast<int64_t>(values.size())}, values.data(), values.size() * sizeof(float));
  } else if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) {
    const int64_t value = a.i();
    store(DType::kInt64, {}, &value, sizeof(value));
  } else if (a.name() == "value_ints" && a.type() == onnx::AttributeProto::INTS) {
    const std::vector<int64_t> values(a.ints().begin(), a.ints().end());
    store(DType::kInt64, {static_cast<int64_t>(values.size())}, values.data(), values.size() * sizeof(int64_t));
  } else {
    return Status(Error::kNotSupported, "attribute '" + a.name() + "' is not supported");
  }
  return Status::ok();
}

bool is_inference_dropout(const onnx::NodeProto& node, const std::set<std::string>& consumed,
                          const std::map<std::string, Tensor>& constants) {
  if (node.input_size() < 1 || node.input(0).empty() || node.output_size() < 1 || node.output(0).empty()) {
    return false;
  }
  if (node.output_size() > 1 && !node.output(1).empty() && consumed.count(node.output(1)) != 0) return false;
  if (node.input_size() < 3 || node.input(2).empty()) return true;
  auto training = constants.find(node.input(2));
  if (training == constants.end()) return false;
  for (uint8_t byte : training->second.bytes) {
    if (byte != 0) return false;
  }
  return true;
}

}  // namespace plugrt::compiler::onnx_import
