// SPDX-License-Identifier: Apache-2.0
#include "op_samples.h"

#include <random>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"

namespace plugrt::sdk::testing::kit {

std::vector<float> seeded_values(size_t count, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = uniform(random);
  return values;
}

std::vector<OpSample> op_samples() {
  std::vector<OpSample> samples;
  uint32_t seed = 20260901;
  auto count = [](const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return static_cast<size_t>(n);
  };
  // One node: its graph inputs (shapes), its constants (shapes), its output, attributes.
  auto add = [&](const std::string& description, const std::string& op, std::vector<std::vector<int64_t>> inputs,
                 std::vector<std::vector<int64_t>> constants, std::vector<int64_t> output,
                 std::vector<Attribute> attributes = {}) {
    GraphBuilder g;
    std::vector<ValueId> node_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      node_inputs.push_back(g.add_value("x" + std::to_string(i), DType::kFloat32, inputs[i]));
      g.add_input(node_inputs.back());
    }
    for (size_t c = 0; c < constants.size(); ++c) {
      node_inputs.push_back(
          g.add_constant_f32("w" + std::to_string(c), constants[c], seeded_values(count(constants[c]), ++seed)));
    }
    ValueId y = g.add_value("y", DType::kFloat32, output);
    g.add_node(op, op + "_0", node_inputs, {y}, std::move(attributes));
    g.add_output(y);
    samples.push_back({description, g.finish(), std::move(inputs), std::move(output)});
  };
  add("Gemm with bias: float32[3,5] x [5,4] + [4]", "Gemm", {{3, 5}}, {{5, 4}, {4}}, {3, 4});
  add("Gemm, B transposed, with bias: float32[3,6] x [4,6]^T + [4]", "Gemm", {{3, 6}}, {{4, 6}, {4}}, {3, 4},
      {Attribute::Int("transB", 1)});
  add("MatMul: float32[3,8] x [8,5]", "MatMul", {{3, 8}}, {{8, 5}}, {3, 5});
  add("MatMul of two inputs: float32[3,8] x [8,5]", "MatMul", {{3, 8}, {8, 5}}, {}, {3, 5});
  add("Conv 3x3, pads 1, with bias: float32[1,2,5,5] -> [1,3,5,5]", "Conv", {{1, 2, 5, 5}}, {{3, 2, 3, 3}, {3}},
      {1, 3, 5, 5}, {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("pads", {1, 1, 1, 1})});
  add("Conv 1x1, stride 2: float32[1,4,6,6] -> [1,2,3,3]", "Conv", {{1, 4, 6, 6}}, {{2, 4, 1, 1}}, {1, 2, 3, 3},
      {Attribute::Ints("kernel_shape", {1, 1}), Attribute::Ints("strides", {2, 2})});
  add("MaxPool 2x2, stride 2: float32[1,3,4,4] -> [1,3,2,2]", "MaxPool", {{1, 3, 4, 4}}, {}, {1, 3, 2, 2},
      {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})});
  add("AveragePool 2x2, stride 2: float32[1,3,4,4] -> [1,3,2,2]", "AveragePool", {{1, 3, 4, 4}}, {}, {1, 3, 2, 2},
      {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})});
  add("GlobalAveragePool: float32[1,3,4,4] -> [1,3,1,1]", "GlobalAveragePool", {{1, 3, 4, 4}}, {}, {1, 3, 1, 1});
  add("Softmax on the last axis: float32[2,7]", "Softmax", {{2, 7}}, {}, {2, 7}, {Attribute::Int("axis", -1)});
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Exp"}) {
    add(std::string(op) + " on float32[2,3,4]", op, {{2, 3, 4}}, {}, {2, 3, 4});
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    add(std::string(op) + " of two float32[2,3,4]", op, {{2, 3, 4}, {2, 3, 4}}, {}, {2, 3, 4});
  }
  add("Add with a broadcast constant: float32[2,3,4] + [4]", "Add", {{2, 3, 4}}, {{4}}, {2, 3, 4});
  return samples;
}

Result<std::vector<float>> portable_result(const OpSample& sample, const std::vector<OwnedTensor*>& inputs) {
  const RegisteredBackend& portable = builtin_portable_backend();
  Result<std::vector<uint8_t>> blob =
      portable.preprocess(Span<const uint8_t>(sample.graph.data(), sample.graph.size()));
  if (!blob.is_ok()) return blob.status();
  InitOptions options;
  options.blob = blob->data();
  options.blob_size = blob->size();
  Result<DelegateHandle> handle = portable.init(options);
  if (!handle.is_ok()) return handle.status();
  OwnedTensor output(kF32, sample.output_shape);
  std::vector<const DLTensor*> in_views, out_views = {&output.tensor};
  for (OwnedTensor* t : inputs) in_views.push_back(&t->tensor);
  Status status = handle->execute(Span<const DLTensor* const>(in_views.data(), in_views.size()),
                                  Span<const DLTensor* const>(out_views.data(), out_views.size()));
  if (!status.is_ok()) return status;
  return std::vector<float>(output.f32(), output.f32() + output.count());
}

}  // namespace plugrt::sdk::testing::kit
