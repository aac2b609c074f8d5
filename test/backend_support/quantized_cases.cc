// SPDX-License-Identifier: Apache-2.0
#include "quantized_cases.h"

#include <cstdlib>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/graph_builder.h"
#include "plugrt/program.h"

namespace plugrt::backend_test {

using ::testing::IsEmpty;

Quantized matmul_case() {
  Quantized q;
  q.matmul = true;
  q.x = {6, 40};
  q.w = {40, 24};
  q.y = {6, 24};
  q.attributes = {};
  return q;
}

int64_t element_count(const Ints& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<uint8_t> random_bytes(int64_t n, std::mt19937& generator) {
  std::uniform_int_distribution<int> dist(0, 255);
  std::vector<uint8_t> out(static_cast<size_t>(n));
  for (uint8_t& v : out) v = static_cast<uint8_t>(dist(generator));
  return out;
}

std::vector<uint8_t> quantized_graph(const Quantized& q) {
  GraphBuilder b;
  std::mt19937 generator(11);
  auto zero = [&](const char* name, DType dtype, int value) {
    return b.add_constant(name, dtype, {}, {static_cast<uint8_t>(value)});
  };
  const ValueId x = b.add_value("x", q.activation, q.x);
  b.add_input(x);
  const int64_t channels = q.matmul ? q.w[1] : q.w[0];
  std::vector<float> w_scales(q.per_channel ? static_cast<size_t>(channels) : 1);
  std::uniform_real_distribution<float> scale(0.002f, 0.02f);
  for (float& s : w_scales) s = scale(generator);
  const ValueId x_scale = b.add_constant_f32("x_scale", {}, {q.x_scale});
  const ValueId x_zero = zero("x_zero", q.activation, q.x_zero_point);
  const ValueId w = b.add_constant("w", q.weight, q.w, random_bytes(element_count(q.w), generator));
  const ValueId w_scale = b.add_constant_f32("w_scale", q.per_channel ? Ints{channels} : Ints{}, w_scales);
  const ValueId w_zero = zero("w_zero", q.weight, q.weight_zero_point);
  const ValueId y_scale = b.add_constant_f32("y_scale", {}, {q.y_scale});
  const ValueId y_zero = zero("y_zero", q.output, q.y_zero_point);
  std::vector<ValueId> inputs = {x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero};
  if (!q.matmul && q.bias) {
    std::vector<int32_t> bias(static_cast<size_t>(channels));
    std::uniform_int_distribution<int32_t> dist(-20000, 20000);
    for (int32_t& v : bias) v = dist(generator);
    std::vector<uint8_t> bytes(bias.size() * 4);
    std::memcpy(bytes.data(), bias.data(), bytes.size());
    inputs.push_back(b.add_constant("bias", DType::kInt32, {channels}, bytes));
  }
  const ValueId y = b.add_value("y", q.output, q.y);
  b.add_node(q.matmul ? "QLinearMatMul" : "QLinearConv", "q", inputs, {y}, q.attributes);
  b.add_output(y);
  return b.finish();
}

std::vector<uint8_t> run_bytes(PluginEnvironment& env, const std::vector<uint8_t>& program, std::vector<uint8_t> input,
                               DLDataType dtype, Ints shape, const std::string& backend) {
  Result<Method> method = env.load(program);
  EXPECT_TRUE(method.is_ok()) << method.status().to_string();
  if (!method.is_ok()) return {};
  for (const DelegatePlacement& placement : method->report().delegates) {
    if (!backend.empty()) {
      EXPECT_EQ(placement.backend, backend);
      EXPECT_FALSE(placement.fell_back) << placement.reason;
    }
  }
  DLTensor tensor{input.data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), dtype, shape.data(), nullptr, 0};
  EXPECT_TRUE(method->set_input(0, tensor).is_ok());
  Status run = method->execute();
  EXPECT_TRUE(run.is_ok()) << run.to_string();
  if (!run.is_ok()) return {};
  const DLTensor& out = method->output(0);
  size_t bytes = (out.dtype.bits + 7u) / 8u;
  for (int32_t d = 0; d < out.ndim; ++d) bytes *= static_cast<size_t>(out.shape[d]);
  const auto* data = static_cast<const uint8_t*>(out.data);
  return std::vector<uint8_t>(data, data + bytes);
}

std::vector<uint8_t> run_quantized(PluginEnvironment& env, const std::vector<uint8_t>& program, const Quantized& q,
                                   uint32_t seed, const std::string& backend) {
  std::mt19937 generator(seed);
  const DLDataType dtype = q.activation == DType::kUInt8 ? DLDataType{kDLUInt, 8, 1} : DLDataType{kDLInt, 8, 1};
  return run_bytes(env, program, random_bytes(element_count(q.x), generator), dtype, q.x, backend);
}

int64_t expect_quantized_matches_portable(PluginEnvironment& env, const std::string& backend, const Quantized& q) {
  const std::vector<uint8_t> graph = quantized_graph(q);
  compiler::CompiledModel taken = env.compile(graph, {backend});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  int64_t differing = 0, total = 0;
  for (uint32_t seed : {1u, 2u}) {
    const std::vector<uint8_t> actual = run_quantized(env, taken.program, q, seed, backend);
    const std::vector<uint8_t> expected = run_quantized(env, portable.program, q, seed);
    EXPECT_EQ(actual.size(), expected.size());
    if (actual.size() != expected.size()) return -1;
    for (size_t i = 0; i < actual.size(); ++i) {
      const int a = q.output == DType::kInt8 ? static_cast<int8_t>(actual[i]) : actual[i];
      const int e = q.output == DType::kInt8 ? static_cast<int8_t>(expected[i]) : expected[i];
      EXPECT_LE(std::abs(a - e), 1) << "element " << i << ", seed " << seed;
      differing += a != e;
    }
    total += static_cast<int64_t>(actual.size());
  }
  EXPECT_LE(differing * 1000, total) << differing << " of " << total << " differ by one quantum";
  return differing;
}

void expect_quantized_left_to_portable(PluginEnvironment& env, const std::string& backend, const Quantized& q,
                                       const std::string& op) {
  const std::vector<uint8_t> graph = quantized_graph(q);
  compiler::CompiledModel mixed = env.compile(graph, {backend});
  ASSERT_FALSE(mixed.program.empty());
  EXPECT_EQ(mixed.summary.untaken_ops.count(op), 1u) << backend << " took " << op;
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  EXPECT_EQ(run_quantized(env, mixed.program, q, 1), run_quantized(env, portable.program, q, 1));
}

}  // namespace plugrt::backend_test
