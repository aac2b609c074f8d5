// SPDX-License-Identifier: Apache-2.0
// A terse graph IR builder for the one-op (or few-op) graphs of the backends' op tests.
#ifndef PLUGRT_TEST_BACKEND_SUPPORT_TEST_GRAPH_H_
#define PLUGRT_TEST_BACKEND_SUPPORT_TEST_GRAPH_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "plugrt/graph_builder.h"

namespace plugrt::backend_test {

using Ints = std::vector<int64_t>;

/// Every value is float32 unless made by ints(); names are generated.
class TestGraph {
 public:
  explicit TestGraph(int opset = 17) : builder_(opset) {}

  /// A new graph input.
  ValueId input(Ints shape);
  /// A new int64 graph input (the op tests feed it indices in [-4, 4)).
  ValueId index_input(Ints shape);
  /// A float32 constant of reproducible values in [lo, hi).
  ValueId constant(Ints shape, float lo = -1.0f, float hi = 1.0f);
  ValueId scalar(float value);
  /// A 1-D int64 constant.
  ValueId ints(Ints values);
  /// A 1-D float32 constant of these values.
  ValueId floats(std::vector<float> values);
  /// One node with one float32 output of `output_shape`; returns the output.
  ValueId node(const std::string& op, std::vector<ValueId> inputs, Ints output_shape,
               std::vector<Attribute> attributes = {});
  /// One node with several float32 outputs; an empty shape leaves that output absent
  /// (kNoValue). Returns the outputs.
  std::vector<ValueId> node_outputs(const std::string& op, std::vector<ValueId> inputs, std::vector<Ints> output_shapes,
                                    std::vector<Attribute> attributes = {});
  /// Marks `outputs` as the graph's outputs and returns the serialised graph.
  std::vector<uint8_t> finish(std::vector<ValueId> outputs);

 private:
  GraphBuilder builder_;
  std::mt19937 generator_{7};
  int counter_ = 0;
};

inline Attribute I(const char* name, int64_t value) { return Attribute::Int(name, value); }
inline Attribute Is(const char* name, Ints values) { return Attribute::Ints(name, std::move(values)); }
inline Attribute F(const char* name, float value) { return Attribute::Float(name, value); }
inline Attribute S(const char* name, const char* value) { return Attribute::String(name, value); }

/// One `op` node on one input of `shape`, its output of the same shape.
std::vector<uint8_t> unary(const std::string& op, Ints shape, std::vector<Attribute> attributes = {});

}  // namespace plugrt::backend_test

#endif  // PLUGRT_TEST_BACKEND_SUPPORT_TEST_GRAPH_H_
