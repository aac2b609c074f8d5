// SPDX-License-Identifier: Apache-2.0
#include "plugrt/graph_builder.h"

#include <cstring>

#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt {

Attribute Attribute::Float(std::string name, float value) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::kFloat;
  a.f = value;
  return a;
}
Attribute Attribute::Int(std::string name, int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::kInt;
  a.i = value;
  return a;
}
Attribute Attribute::String(std::string name, std::string value) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::kString;
  a.s = std::move(value);
  return a;
}
Attribute Attribute::Floats(std::string name, std::vector<float> values) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::kFloats;
  a.floats = std::move(values);
  return a;
}
Attribute Attribute::Ints(std::string name, std::vector<int64_t> values) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::kInts;
  a.ints = std::move(values);
  return a;
}
Attribute Attribute::Graph(std::string name, std::vector<uint8_t> graph) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::kGraph;
  a.graph = std::move(graph);
  return a;
}

ValueId GraphBuilder::add_value(std::string name, DType dtype, std::vector<int64_t> shape) {
  values_.push_back(Value{std::move(name), dtype, std::move(shape), false, {}, {}});
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId GraphBuilder::add_constant(std::string name, DType dtype, std::vector<int64_t> shape,
                                   std::vector<uint8_t> bytes) {
  values_.push_back(Value{std::move(name), dtype, std::move(shape), true, std::move(bytes), {}});
  return static_cast<ValueId>(values_.size() - 1);
}

size_t GraphBuilder::add_symbol(std::string name, int64_t min, int64_t max) {
  symbols_.push_back(Symbol{std::move(name), min, max});
  return symbols_.size() - 1;
}

ValueId GraphBuilder::add_dynamic_value(std::string name, DType dtype, std::vector<common::DimExpr> dims) {
  std::vector<common::DimRange> ranges;
  for (const Symbol& symbol : symbols_) ranges.push_back({symbol.min, symbol.max});
  bool varies = false;
  std::vector<int64_t> bounds = common::dim_upper_bounds(dims, ranges, &varies);
  values_.push_back(Value{std::move(name), dtype, std::move(bounds), false, {}, {}});
  if (varies) values_.back().dims = std::move(dims);
  return static_cast<ValueId>(values_.size() - 1);
}

std::vector<common::DimExpr> read_value_dims(const ir::Value& value) {
  std::vector<common::DimExpr> dims;
  if (value.dims() == nullptr) return dims;
  for (flatbuffers::uoffset_t axis = 0; axis < value.dims()->size(); ++axis) {
    const auto* words = value.dims()->Get(axis)->words();
    // A dimension without words is static: its shape entry.
    const int64_t fixed = value.shape() != nullptr && axis < value.shape()->size() ? value.shape()->Get(axis) : 0;
    dims.push_back(words != nullptr && words->size() > 0
                       ? common::DimExpr::from_words(std::vector<int64_t>(words->begin(), words->end()))
                       : common::DimExpr::constant(fixed));
  }
  return dims;
}

void GraphBuilder::copy_symbols(const ir::Graph& graph) {
  if (graph.symbols() == nullptr) return;
  for (const ir::Symbol* symbol : *graph.symbols()) {
    add_symbol(symbol->name() != nullptr ? symbol->name()->str() : std::string(), symbol->min(), symbol->max());
  }
}

ValueId GraphBuilder::copy_value(const ir::Value& value) {
  std::string name = value.name() != nullptr ? value.name()->str() : std::string();
  const auto dtype = static_cast<DType>(value.dtype());
  std::vector<int64_t> shape;
  if (value.shape() != nullptr) shape.assign(value.shape()->begin(), value.shape()->end());
  if (value.data() != nullptr) {
    return add_constant(std::move(name), dtype, std::move(shape),
                        std::vector<uint8_t>(value.data()->begin(), value.data()->end()));
  }
  if (value.dims() != nullptr) return add_dynamic_value(std::move(name), dtype, read_value_dims(value));
  return add_value(std::move(name), dtype, std::move(shape));
}

ValueId GraphBuilder::add_constant_f32(std::string name, std::vector<int64_t> shape, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return add_constant(std::move(name), DType::kFloat32, std::move(shape), std::move(bytes));
}

ValueId GraphBuilder::add_constant_i64(std::string name, std::vector<int64_t> shape,
                                       const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return add_constant(std::move(name), DType::kInt64, std::move(shape), std::move(bytes));
}

void GraphBuilder::add_node(std::string op_type, std::string name, std::vector<ValueId> inputs,
                            std::vector<ValueId> outputs, std::vector<Attribute> attributes) {
  nodes_.push_back(
      Node{std::move(op_type), std::move(name), std::move(inputs), std::move(outputs), std::move(attributes)});
}

namespace {

flatbuffers::Offset<ir::Attribute> write_attribute(flatbuffers::FlatBufferBuilder& fbb, const Attribute& a) {
  auto name = fbb.CreateString(a.name);
  flatbuffers::Offset<flatbuffers::String> s;
  flatbuffers::Offset<flatbuffers::Vector<float>> floats;
  flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints;
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> graph;
  ir::AttributeKind kind = ir::AttributeKind::Int;
  switch (a.kind) {
    case Attribute::Kind::kFloat: kind = ir::AttributeKind::Float; break;
    case Attribute::Kind::kInt: kind = ir::AttributeKind::Int; break;
    case Attribute::Kind::kString:
      kind = ir::AttributeKind::String;
      s = fbb.CreateString(a.s);
      break;
    case Attribute::Kind::kFloats:
      kind = ir::AttributeKind::Floats;
      floats = fbb.CreateVector(a.floats);
      break;
    case Attribute::Kind::kInts:
      kind = ir::AttributeKind::Ints;
      ints = fbb.CreateVector(a.ints);
      break;
    case Attribute::Kind::kGraph:
      kind = ir::AttributeKind::Graph;
      fbb.ForceVectorAlignment(a.graph.size(), 1, 64);  // keeps the subgraph's constants aligned
      graph = fbb.CreateVector(a.graph);
      break;
  }
  return ir::CreateAttribute(fbb, name, kind, a.f, a.i, s, floats, ints, graph);
}

}  // namespace

std::vector<uint8_t> GraphBuilder::finish() const {
  flatbuffers::FlatBufferBuilder fbb(1024);
  std::vector<flatbuffers::Offset<ir::Value>> values;
  for (const Value& value : values_) {
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> data;
    if (value.constant) {
      fbb.ForceVectorAlignment(value.data.size(), 1, 64);
      data = fbb.CreateVector(value.data);
    }
    auto name = fbb.CreateString(value.name);
    auto shape = fbb.CreateVector(value.shape);
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<ir::Dim>>> dims;
    if (!value.dims.empty()) {
      std::vector<flatbuffers::Offset<ir::Dim>> entries;
      for (const common::DimExpr& dim : value.dims) {
        entries.push_back(ir::CreateDim(fbb, dim.is_constant() ? 0 : fbb.CreateVector(dim.words())));
      }
      dims = fbb.CreateVector(entries);
    }
    values.push_back(ir::CreateValue(fbb, name, static_cast<ir::DType>(value.dtype), shape, data, dims));
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<ir::Symbol>>> symbols;
  if (!symbols_.empty()) {
    std::vector<flatbuffers::Offset<ir::Symbol>> entries;
    for (const Symbol& symbol : symbols_) {
      entries.push_back(ir::CreateSymbol(fbb, fbb.CreateString(symbol.name), symbol.min, symbol.max));
    }
    symbols = fbb.CreateVector(entries);
  }
  std::vector<flatbuffers::Offset<ir::Node>> nodes;
  for (const Node& node : nodes_) {
    std::vector<flatbuffers::Offset<ir::Attribute>> attributes;
    for (const Attribute& a : node.attributes) attributes.push_back(write_attribute(fbb, a));
    nodes.push_back(ir::CreateNode(fbb, fbb.CreateString(node.op_type), fbb.CreateString(node.name),
                                   fbb.CreateVector(node.inputs), fbb.CreateVector(node.outputs),
                                   fbb.CreateVector(attributes)));
  }
  auto graph = ir::CreateGraph(fbb, symbols_.empty() ? 1 : 2, opset_, fbb.CreateVector(values), fbb.CreateVector(nodes),
                               fbb.CreateVector(inputs_), fbb.CreateVector(outputs_), symbols);
  ir::FinishGraphBuffer(fbb, graph);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

}  // namespace plugrt
