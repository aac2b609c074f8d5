// SPDX-License-Identifier: Apache-2.0
// GraphBuilder: writes graph IR flatbuffers (the format of core/schema/graph_ir.fbs).
// Used by the ONNX importer, the partitioner and tests. It checks nothing a reader
// would not: the graph it writes is validated where it is read.
#ifndef PLUGRT_GRAPH_BUILDER_H_
#define PLUGRT_GRAPH_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plugrt/common/dim_expr.h"
#include "plugrt/dtype.h"
#include "plugrt/span.h"

namespace plugrt {

namespace ir {
struct Graph;
struct Value;
}  // namespace ir

/// The dimension expressions of a verified graph IR value; empty when its shape is static.
std::vector<common::DimExpr> read_value_dims(const ir::Value& value);

/// One operator attribute, by value.
struct Attribute {
  enum class Kind { kFloat, kInt, kString, kFloats, kInts, kGraph };
  std::string name;
  Kind kind = Kind::kInt;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  /// kGraph: a finished graph IR buffer (a subgraph).
  std::vector<uint8_t> graph;

  static Attribute Float(std::string name, float value);
  static Attribute Int(std::string name, int64_t value);
  static Attribute String(std::string name, std::string value);
  static Attribute Floats(std::string name, std::vector<float> values);
  static Attribute Ints(std::string name, std::vector<int64_t> values);
  static Attribute Graph(std::string name, std::vector<uint8_t> graph);
};

/// Index of a value in the graph being built; -1 is an absent optional input.
using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

class GraphBuilder {
 public:
  explicit GraphBuilder(int opset = 17) : opset_(opset) {}

  /// A tensor without data: a graph input, an intermediate or an output.
  ValueId add_value(std::string name, DType dtype, std::vector<int64_t> shape);
  /// A symbolic dimension (an ONNX dim_param) taking values in [min, max]; the index
  /// that common::DimExpr::symbol() names it by. A graph with symbols is written as
  /// ir_version 2.
  size_t add_symbol(std::string name, int64_t min, int64_t max);
  /// A tensor without data whose dimensions may vary: each an expression over the
  /// symbols added before. Its shape holds each dimension's upper bound (-1 when the
  /// expression has none, which readers refuse).
  ValueId add_dynamic_value(std::string name, DType dtype, std::vector<common::DimExpr> dims);
  /// Adds the symbols of a verified graph, in order (so that its expressions keep
  /// their meaning here).
  void copy_symbols(const ir::Graph& graph);
  /// A copy of a verified graph's value: a constant with its bytes, a value with its
  /// shape, or one whose dimensions vary (copy_symbols first).
  ValueId copy_value(const ir::Value& value);
  /// A constant tensor with its little-endian bytes (which must match dtype x shape).
  ValueId add_constant(std::string name, DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes);
  /// Typed shorthands for constants.
  ValueId add_constant_f32(std::string name, std::vector<int64_t> shape, const std::vector<float>& values);
  ValueId add_constant_i64(std::string name, std::vector<int64_t> shape, const std::vector<int64_t>& values);

  void add_node(std::string op_type, std::string name, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                std::vector<Attribute> attributes = {});
  void add_input(ValueId value) { inputs_.push_back(value); }
  void add_output(ValueId value) { outputs_.push_back(value); }

  size_t num_values() const { return values_.size(); }
  size_t num_nodes() const { return nodes_.size(); }

  /// The finished graph IR buffer. Constant data is 64-byte aligned relative to the
  /// buffer's start (which callers keep 64-byte aligned).
  std::vector<uint8_t> finish() const;

 private:
  struct Value {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    bool constant = false;
    std::vector<uint8_t> data;
    std::vector<common::DimExpr> dims;  // empty for a static value
  };
  struct Symbol {
    std::string name;
    int64_t min, max;
  };
  struct Node {
    std::string op_type, name;
    std::vector<ValueId> inputs, outputs;
    std::vector<Attribute> attributes;
  };
  int opset_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_, outputs_;
  std::vector<Symbol> symbols_;
};

}  // namespace plugrt

#endif  // PLUGRT_GRAPH_BUILDER_H_
