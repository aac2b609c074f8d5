// SPDX-License-Identifier: Apache-2.0
// EditableGraph: a graph IR held in plain vectors so that passes can rewrite it, then
// written back with GraphBuilder (dropping removed nodes and the values left unused).
#ifndef PLUGRT_PLACEMENT_EDITABLE_GRAPH_H_
#define PLUGRT_PLACEMENT_EDITABLE_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugrt/dtype.h"
#include "plugrt/graph_builder.h"

namespace plugrt::ir {
struct Attribute;
struct Graph;
}  // namespace plugrt::ir

namespace plugrt::placement {

/// A copy of a graph IR attribute (a subgraph's bytes included).
Attribute read_attribute(const ir::Attribute& a);

struct EditableValue {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;         ///< the upper bounds, where dims vary
  std::vector<common::DimExpr> dims;  ///< expressions over the graph's symbols; empty when static
  bool constant = false;
  std::vector<uint8_t> data;
};

struct EditableNode {
  std::string op_type, name;
  std::vector<int32_t> inputs, outputs;  ///< value indices, -1 for an absent optional input
  std::vector<Attribute> attributes;
  bool removed = false;

  const Attribute* attribute(const std::string& attribute_name) const;
  /// Sets (or adds) an attribute.
  void set_attribute(Attribute attribute);
};

/// A symbolic dimension of the graph (graph IR version 2).
struct EditableSymbol {
  std::string name;
  int64_t min = 0, max = 0;
};

struct EditableGraph {
  int opset = 17;
  std::vector<EditableSymbol> symbols;
  std::vector<EditableValue> values;
  std::vector<EditableNode> nodes;
  std::vector<int32_t> inputs, outputs;

  static EditableGraph read(const ir::Graph& graph);
  std::vector<uint8_t> write() const;

  bool is_graph_input(int32_t value) const;
  bool is_graph_output(int32_t value) const;
  bool is_constant(int32_t value) const { return value >= 0 && values[static_cast<size_t>(value)].constant; }
  /// Whether `value`'s dimensions are expressions that vary.
  bool varies(int32_t value) const { return value >= 0 && !values[static_cast<size_t>(value)].dims.empty(); }
  /// The live node writing `value`, if any.
  std::optional<size_t> producer(int32_t value) const;
  /// The live nodes reading `value` (a node reading it twice is listed once).
  std::vector<size_t> consumers(int32_t value) const;
  /// Live nodes read `from` as `to` instead (graph outputs are left alone).
  void replace_uses(int32_t from, int32_t to);
  /// A constant's elements as int64 (Int64 or Int32 data); nullopt for anything else.
  std::optional<std::vector<int64_t>> int_constant(int32_t value) const;
  /// A Float32 constant's elements; nullopt for anything else.
  std::optional<std::vector<float>> float_constant(int32_t value) const;
  int32_t add_constant_i64(std::string name, const std::vector<int64_t>& elements);
  int32_t add_constant_f32(std::string name, const std::vector<float>& elements);
};

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_EDITABLE_GRAPH_H_
