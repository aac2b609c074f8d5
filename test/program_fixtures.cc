// SPDX-License-Identifier: Apache-2.0
#include "program_fixtures.h"

#include <cstring>

#include "plugrt/graph_builder.h"
#include "plugrt/program_builder.h"

namespace plugrt::testing {

std::vector<uint8_t> add_offset_graph(const std::vector<int64_t>& shape, float offset) {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, shape);
  ValueId c = graph.add_constant_f32("offset", {}, {offset});
  ValueId y = graph.add_value("y", DType::kFloat32, shape);
  graph.add_node("Add", "add", {x, c}, {y});
  graph.add_input(x);
  graph.add_output(y);
  return graph.finish();
}

std::vector<uint8_t> offset_program(const OffsetProgramOptions& options) {
  const std::vector<int64_t> shape = {2, 3};
  std::vector<uint8_t> blob = options.blob;
  if (blob.empty()) {
    blob.resize(sizeof(float));
    std::memcpy(blob.data(), &options.offset, sizeof(float));
  }
  const std::vector<uint8_t> fallback = add_offset_graph(shape, options.offset);

  ProgramBuilder program;
  MethodBuilder& method = program.add_method("forward");
  uint32_t current = method.add_value("x", DType::kFloat32, shape);
  method.add_input(current);
  const int count = options.backends.empty() ? options.num_delegates : static_cast<int>(options.backends.size());
  for (int d = 0; d < count; ++d) {
    const bool last = d + 1 == count;
    const std::string& backend = options.backends.empty() ? options.backend : options.backends[static_cast<size_t>(d)];
    uint32_t next = method.add_value(last ? "y" : "t" + std::to_string(d), DType::kFloat32, shape);
    uint32_t delegate = method.add_delegate(
        backend + ":" + std::to_string(d), backend, Span<const uint8_t>(blob), options.compile_specs,
        options.with_fallback ? Span<const uint8_t>(fallback) : Span<const uint8_t>());
    method.add_instruction(delegate, {current}, {next});
    current = next;
  }
  method.add_output(current);
  Result<std::vector<uint8_t>> file = program.finish();
  return file.is_ok() ? std::move(file).value() : std::vector<uint8_t>();
}

Status set_floats(Method& method, size_t input, std::vector<float> values) {
  const TensorSpec& spec = method.input_spec(input);
  std::vector<int64_t> shape = spec.shape;
  DLTensor tensor{
      values.data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
  return method.set_input(input, tensor);
}

std::vector<float> output_floats(const Method& method, size_t index) {
  const DLTensor& tensor = method.output(index);
  size_t count = 1;
  for (int32_t axis = 0; axis < tensor.ndim; ++axis) count *= static_cast<size_t>(tensor.shape[axis]);
  const float* data = static_cast<const float*>(tensor.data);
  return std::vector<float>(data, data + count);
}

std::vector<uint8_t> relu_flatten_graph(int64_t max_n) {
  GraphBuilder graph;
  const common::DimExpr n = common::DimExpr::symbol(graph.add_symbol("n", 1, max_n));
  const ValueId x = graph.add_dynamic_value("x", DType::kFloat32, {n, common::DimExpr::constant(4)});
  const ValueId relu = graph.add_dynamic_value("relu", DType::kFloat32, {n, common::DimExpr::constant(4)});
  const ValueId flat = graph.add_constant_i64("flat", {1}, {-1});
  const ValueId y = graph.add_dynamic_value("y", DType::kFloat32, {n * common::DimExpr::constant(4)});
  graph.add_node("Relu", "relu", {x}, {relu});
  graph.add_node("Reshape", "flatten", {relu, flat}, {y});
  graph.add_input(x);
  graph.add_output(y);
  return graph.finish();
}

std::vector<uint8_t> relu_flatten_program(int64_t max_n) {
  const std::vector<uint8_t> graph = relu_flatten_graph(max_n);
  ProgramBuilder builder;
  MethodBuilder& method = builder.add_method("forward");
  const common::DimExpr n = common::DimExpr::symbol(method.add_symbol("n", 1, max_n));
  const uint32_t x = method.add_dynamic_value("x", DType::kFloat32, {n, common::DimExpr::constant(4)});
  const uint32_t y = method.add_dynamic_value("y", DType::kFloat32, {n * common::DimExpr::constant(4)});
  method.add_input(x);
  method.add_output(y);
  method.add_instruction(method.add_delegate("portable:0", "portable", graph), {x}, {y});
  Result<std::vector<uint8_t>> bytes = builder.finish();
  return bytes.is_ok() ? std::move(bytes).value() : std::vector<uint8_t>();
}

}  // namespace plugrt::testing
