// SPDX-License-Identifier: Apache-2.0
#include "editable_graph.h"

#include <algorithm>
#include <cstring>

#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {

namespace {

template <typename T>
std::vector<T> to_vector(const flatbuffers::Vector<T>* vector) {
  return vector != nullptr ? std::vector<T>(vector->begin(), vector->end()) : std::vector<T>();
}

}  // namespace

Attribute read_attribute(const ir::Attribute& a) {
  const std::string name = a.name()->str();
  switch (a.kind()) {
    case ir::AttributeKind::Float: return Attribute::Float(name, a.f());
    case ir::AttributeKind::String: return Attribute::String(name, a.s() != nullptr ? a.s()->str() : std::string());
    case ir::AttributeKind::Floats: return Attribute::Floats(name, to_vector(a.floats()));
    case ir::AttributeKind::Ints: return Attribute::Ints(name, to_vector(a.ints()));
    case ir::AttributeKind::Graph: return Attribute::Graph(name, to_vector(a.graph()));
    case ir::AttributeKind::Int: break;
  }
  return Attribute::Int(name, a.i());
}

const Attribute* EditableNode::attribute(const std::string& attribute_name) const {
  for (const Attribute& a : attributes) {
    if (a.name == attribute_name) return &a;
  }
  return nullptr;
}

void EditableNode::set_attribute(Attribute attribute) {
  for (Attribute& a : attributes) {
    if (a.name == attribute.name) {
      a = std::move(attribute);
      return;
    }
  }
  attributes.push_back(std::move(attribute));
}

EditableGraph EditableGraph::read(const ir::Graph& graph) {
  EditableGraph result;
  result.opset = graph.opset();
  if (graph.symbols() != nullptr) {
    for (const ir::Symbol* symbol : *graph.symbols()) {
      result.symbols.push_back(
          {symbol->name() != nullptr ? symbol->name()->str() : std::string(), symbol->min(), symbol->max()});
    }
  }
  if (graph.values() != nullptr) {
    for (const ir::Value* v : *graph.values()) {
      EditableValue value;
      value.name = v->name() != nullptr ? v->name()->str() : std::string();
      value.dtype = static_cast<DType>(v->dtype());
      value.shape = to_vector(v->shape());
      value.dims = read_value_dims(*v);
      value.constant = v->data() != nullptr;
      value.data = to_vector(v->data());
      result.values.push_back(std::move(value));
    }
  }
  if (graph.nodes() != nullptr) {
    for (const ir::Node* n : *graph.nodes()) {
      EditableNode node;
      node.op_type = n->op_type()->str();
      node.name = n->name() != nullptr ? n->name()->str() : std::string();
      node.inputs = to_vector(n->inputs());
      node.outputs = to_vector(n->outputs());
      if (n->attributes() != nullptr) {
        for (const ir::Attribute* a : *n->attributes()) node.attributes.push_back(read_attribute(*a));
      }
      result.nodes.push_back(std::move(node));
    }
  }
  result.inputs = to_vector(graph.inputs());
  result.outputs = to_vector(graph.outputs());
  return result;
}

std::vector<uint8_t> EditableGraph::write() const {
  GraphBuilder builder(opset);
  for (const EditableSymbol& symbol : symbols) builder.add_symbol(symbol.name, symbol.min, symbol.max);
  std::vector<ValueId> remap(values.size(), kNoValue);
  auto value = [&](int32_t v) -> ValueId {
    if (v < 0) return kNoValue;
    ValueId& id = remap[static_cast<size_t>(v)];
    if (id == kNoValue) {
      const EditableValue& source = values[static_cast<size_t>(v)];
      id = source.constant       ? builder.add_constant(source.name, source.dtype, source.shape, source.data)
           : source.dims.empty() ? builder.add_value(source.name, source.dtype, source.shape)
                                 : builder.add_dynamic_value(source.name, source.dtype, source.dims);
    }
    return id;
  };
  for (int32_t v : inputs) builder.add_input(value(v));
  for (const EditableNode& node : nodes) {
    if (node.removed) continue;
    std::vector<ValueId> node_inputs, node_outputs;
    for (int32_t v : node.inputs) node_inputs.push_back(value(v));
    for (int32_t v : node.outputs) node_outputs.push_back(value(v));
    builder.add_node(node.op_type, node.name, std::move(node_inputs), std::move(node_outputs), node.attributes);
  }
  for (int32_t v : outputs) builder.add_output(value(v));
  return builder.finish();
}

bool EditableGraph::is_graph_input(int32_t value) const {
  return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
}

bool EditableGraph::is_graph_output(int32_t value) const {
  return std::find(outputs.begin(), outputs.end(), value) != outputs.end();
}

std::optional<size_t> EditableGraph::producer(int32_t value) const {
  if (value < 0) return std::nullopt;  // an absent optional value has no producer
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].removed) continue;
    if (std::find(nodes[n].outputs.begin(), nodes[n].outputs.end(), value) != nodes[n].outputs.end()) return n;
  }
  return std::nullopt;
}

std::vector<size_t> EditableGraph::consumers(int32_t value) const {
  std::vector<size_t> result;
  if (value < 0) return result;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].removed) continue;
    if (std::find(nodes[n].inputs.begin(), nodes[n].inputs.end(), value) != nodes[n].inputs.end()) {
      result.push_back(n);
    }
  }
  return result;
}

void EditableGraph::replace_uses(int32_t from, int32_t to) {
  for (EditableNode& node : nodes) {
    if (node.removed) continue;
    std::replace(node.inputs.begin(), node.inputs.end(), from, to);
  }
}

std::optional<std::vector<int64_t>> EditableGraph::int_constant(int32_t value) const {
  if (!is_constant(value)) return std::nullopt;
  const EditableValue& v = values[static_cast<size_t>(value)];
  std::vector<int64_t> result;
  if (v.dtype == DType::kInt64) {
    result.resize(v.data.size() / 8);
    std::memcpy(result.data(), v.data.data(), result.size() * 8);
  } else if (v.dtype == DType::kInt32) {
    std::vector<int32_t> narrow(v.data.size() / 4);
    std::memcpy(narrow.data(), v.data.data(), narrow.size() * 4);
    result.assign(narrow.begin(), narrow.end());
  } else {
    return std::nullopt;
  }
  return result;
}

std::optional<std::vector<float>> EditableGraph::float_constant(int32_t value) const {
  if (!is_constant(value) || values[static_cast<size_t>(value)].dtype != DType::kFloat32) return std::nullopt;
  const EditableValue& v = values[static_cast<size_t>(value)];
  std::vector<float> result(v.data.size() / 4);
  std::memcpy(result.data(), v.data.data(), result.size() * 4);
  return result;
}

namespace {

/// Appends a constant 1-D value of `elements` to `graph`; returns its index.
template <typename T>
int32_t append_constant(EditableGraph& graph, std::string name, DType dtype, const std::vector<T>& elements) {
  EditableValue value;
  value.name = std::move(name);
  value.dtype = dtype;
  value.shape = {static_cast<int64_t>(elements.size())};
  value.constant = true;
  value.data.resize(elements.size() * sizeof(T));
  if (!elements.empty())
    std::memcpy(value.data.data(), elements.data(), value.data.size());  // none for a scalar's shape
  graph.values.push_back(std::move(value));
  return static_cast<int32_t>(graph.values.size() - 1);
}

}  // namespace

int32_t EditableGraph::add_constant_i64(std::string name, const std::vector<int64_t>& elements) {
  return append_constant(*this, std::move(name), DType::kInt64, elements);
}

int32_t EditableGraph::add_constant_f32(std::string name, const std::vector<float>& elements) {
  return append_constant(*this, std::move(name), DType::kFloat32, elements);
}

}  // namespace plugrt::placement
