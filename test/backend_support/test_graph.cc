// SPDX-License-Identifier: Apache-2.0
#include "test_graph.h"

#include <utility>

namespace plugrt::backend_test {

ValueId TestGraph::input(Ints shape) {
  ValueId id = builder_.add_value("x" + std::to_string(counter_++), DType::kFloat32, std::move(shape));
  builder_.add_input(id);
  return id;
}

ValueId TestGraph::index_input(Ints shape) {
  ValueId id = builder_.add_value("x" + std::to_string(counter_++), DType::kInt64, std::move(shape));
  builder_.add_input(id);
  return id;
}

ValueId TestGraph::constant(Ints shape, float lo, float hi) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = uniform(generator_);
  return builder_.add_constant_f32("c" + std::to_string(counter_++), std::move(shape), values);
}

ValueId TestGraph::scalar(float value) {
  return builder_.add_constant_f32("s" + std::to_string(counter_++), {}, {value});
}

ValueId TestGraph::ints(Ints values) {
  const int64_t size = static_cast<int64_t>(values.size());
  return builder_.add_constant_i64("i" + std::to_string(counter_++), {size}, values);
}

ValueId TestGraph::floats(std::vector<float> values) {
  const int64_t size = static_cast<int64_t>(values.size());
  return builder_.add_constant_f32("f" + std::to_string(counter_++), {size}, values);
}

ValueId TestGraph::node(const std::string& op, std::vector<ValueId> inputs, Ints output_shape,
                        std::vector<Attribute> attributes) {
  ValueId out = builder_.add_value("v" + std::to_string(counter_++), DType::kFloat32, std::move(output_shape));
  builder_.add_node(op, op + std::to_string(counter_++), std::move(inputs), {out}, std::move(attributes));
  return out;
}

std::vector<ValueId> TestGraph::node_outputs(const std::string& op, std::vector<ValueId> inputs,
                                             std::vector<Ints> output_shapes, std::vector<Attribute> attributes) {
  std::vector<ValueId> outs;
  for (Ints& shape : output_shapes) {
    outs.push_back(shape.empty()
                       ? kNoValue
                       : builder_.add_value("v" + std::to_string(counter_++), DType::kFloat32, std::move(shape)));
  }
  builder_.add_node(op, op + std::to_string(counter_++), std::move(inputs), outs, std::move(attributes));
  return outs;
}

std::vector<uint8_t> TestGraph::finish(std::vector<ValueId> outputs) {
  for (ValueId output : outputs) builder_.add_output(output);
  return builder_.finish();
}

std::vector<uint8_t> unary(const std::string& op, Ints shape, std::vector<Attribute> attributes) {
  TestGraph g;
  ValueId x = g.input(shape);
  return g.finish({g.node(op, {x}, shape, std::move(attributes))});
}

}  // namespace plugrt::backend_test
