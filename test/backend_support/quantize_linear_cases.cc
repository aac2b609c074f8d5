// SPDX-License-Identifier: Apache-2.0
#include "quantize_linear_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/graph_builder.h"
#include "quantized_cases.h"

namespace plugrt::backend_test {

namespace {

using ::testing::IsEmpty;

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

DLDataType dl_type(DType dtype) {
  return dtype == DType::kUInt8 ? DLDataType{kDLUInt, 8, 1} : DLDataType{kDLInt, 8, 1};
}

/// The inputs of expect_quantize_exact: ties, their neighbours, multiples of the scale,
/// and values that saturate or are not finite.
std::vector<float> quantize_inputs(float scale) {
  std::vector<float> x;
  for (int k = -300; k <= 300; ++k) {
    const float tie = (static_cast<float>(k) + 0.5f) * scale;
    x.push_back(tie);
    x.push_back(std::nextafter(tie, 1e9f));
    x.push_back(std::nextafter(tie, -1e9f));
    x.push_back(static_cast<float>(k) * scale);
  }
  for (float v : {1e9f, -1e9f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f}) {
    x.push_back(v);
  }
  return x;
}

}  // namespace

std::vector<uint8_t> quantize_graph(int64_t n, float scale, DType dtype, int zero_point) {
  GraphBuilder b;
  const ValueId x = b.add_value("x", DType::kFloat32, {1, n});
  b.add_input(x);
  const ValueId s = b.add_constant_f32("scale", {}, {scale});
  const ValueId z = b.add_constant("zero", dtype, {}, {static_cast<uint8_t>(zero_point)});
  const ValueId y = b.add_value("y", dtype, {1, n});
  b.add_node("QuantizeLinear", "q", {x, s, z}, {y});
  b.add_output(y);
  return b.finish();
}

std::vector<uint8_t> float_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

void expect_quantize_exact(PluginEnvironment& env, const std::string& backend, DType dtype, int zero_point,
                           float scale) {
  const std::vector<float> x = quantize_inputs(scale);
  const auto n = static_cast<int64_t>(x.size());
  const std::vector<uint8_t> graph = quantize_graph(n, scale, dtype, zero_point);
  compiler::CompiledModel taken = env.compile(graph, {backend});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  const std::vector<uint8_t> actual = run_bytes(env, taken.program, float_bytes(x), kFloat32, {1, n}, backend);
  const std::vector<uint8_t> expected = run_bytes(env, portable.program, float_bytes(x), kFloat32, {1, n});
  ASSERT_EQ(actual.size(), x.size());
  EXPECT_EQ(actual, expected);
  const bool s8 = dtype == DType::kInt8;
  const double lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
  const int zp = s8 ? static_cast<int8_t>(zero_point) : zero_point;
  for (size_t i = 0; i < x.size(); ++i) {
    // ONNX: saturate(round_half_to_even(x / scale) + zero_point); NaN saturates low here
    // as on portable.
    const double q =
        std::isnan(x[i]) ? lo : std::min(hi, std::max(lo, static_cast<double>(std::nearbyint(x[i] / scale)) + zp));
    const int got = s8 ? static_cast<int8_t>(actual[i]) : actual[i];
    EXPECT_EQ(got, static_cast<int>(q)) << "x = " << x[i];
  }
  // The ties by hand: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2 (in units of the
  // scale, before the zero point).
  auto at = [&](float v) {
    const size_t i = static_cast<size_t>(std::find(x.begin(), x.end(), v * scale) - x.begin());
    return s8 ? static_cast<int8_t>(actual.at(i)) : actual.at(i);
  };
  EXPECT_EQ(at(0.5f), 0 + zp);
  EXPECT_EQ(at(1.5f), 2 + zp);
  EXPECT_EQ(at(2.5f), 2 + zp);
  EXPECT_EQ(at(-0.5f), 0 + zp);
  EXPECT_EQ(at(-1.5f), -2 + zp);
  EXPECT_EQ(at(1e9f / scale), static_cast<int>(hi));
  EXPECT_EQ(at(-1e9f / scale), static_cast<int>(lo));
}

void expect_dequantize_exact(PluginEnvironment& env, const std::string& backend, DType dtype, int zero_point,
                             float scale) {
  GraphBuilder b;
  const ValueId x = b.add_value("x", dtype, {4, 256});
  b.add_input(x);
  const ValueId s = b.add_constant_f32("scale", {}, {scale});
  const ValueId z = b.add_constant("zero", dtype, {}, {static_cast<uint8_t>(zero_point)});
  const ValueId y = b.add_value("y", DType::kFloat32, {4, 256});
  b.add_node("DequantizeLinear", "dq", {x, s, z}, {y});
  b.add_output(y);
  const std::vector<uint8_t> graph = b.finish();
  compiler::CompiledModel taken = env.compile(graph, {backend});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  std::vector<uint8_t> input(4 * 256);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<uint8_t>(i * 7);
  const std::vector<uint8_t> actual = run_bytes(env, taken.program, input, dl_type(dtype), {4, 256}, backend);
  const std::vector<uint8_t> expected = run_bytes(env, portable.program, input, dl_type(dtype), {4, 256});
  ASSERT_EQ(actual.size(), input.size() * sizeof(float));
  EXPECT_EQ(actual, expected);
  const bool s8 = dtype == DType::kInt8;
  const int zp = s8 ? static_cast<int8_t>(zero_point) : zero_point;
  for (size_t i = 0; i < input.size(); ++i) {
    float got = 0;
    std::memcpy(&got, &actual[i * sizeof(float)], sizeof(float));
    const int q = s8 ? static_cast<int8_t>(input[i]) : input[i];
    EXPECT_EQ(got, static_cast<float>(q - zp) * scale) << "x = " << q;
  }
}

namespace {

/// The graph of expect_quantized_block_is_one_partition, on `shape` ([1, 16, 8, 8]).
std::vector<uint8_t> quantized_block_graph(const Ints& shape, const Ints& pooled_shape, std::mt19937& generator) {
  GraphBuilder b;
  const ValueId x = b.add_value("x", DType::kFloat32, shape);
  b.add_input(x);
  auto scale = [&](const char* name, float v) { return b.add_constant_f32(name, {}, {v}); };
  auto zero = [&](const char* name, int v) {
    return b.add_constant(name, DType::kUInt8, {}, {static_cast<uint8_t>(v)});
  };
  const ValueId s_in = scale("s_in", 0.02f), z_in = zero("z_in", 128);
  const ValueId s_a = scale("s_a", 0.05f), z_a = zero("z_a", 120);
  const ValueId s_out = scale("s_out", 0.07f), z_out = zero("z_out", 110);
  const ValueId xq = b.add_value("xq", DType::kUInt8, shape);
  b.add_node("QuantizeLinear", "q_in", {x, s_in, z_in}, {xq});
  const ValueId w = b.add_constant("w", DType::kInt8, {16, 16, 3, 3}, random_bytes(16 * 16 * 9, generator));
  std::vector<float> w_scales(16);
  std::uniform_real_distribution<float> dist(0.002f, 0.01f);
  for (float& v : w_scales) v = dist(generator);
  const ValueId w_scale = b.add_constant_f32("w_scale", {16}, w_scales);
  const ValueId w_zero = b.add_constant("w_zero", DType::kInt8, {16}, std::vector<uint8_t>(16, 0));
  const ValueId cq = b.add_value("cq", DType::kUInt8, shape);
  b.add_node("QLinearConv", "conv", {xq, s_in, z_in, w, w_scale, w_zero, s_a, z_a}, {cq},
             {Attribute::Ints("pads", {1, 1, 1, 1})});
  const ValueId c = b.add_value("c", DType::kFloat32, shape);
  b.add_node("DequantizeLinear", "dq_c", {cq, s_a, z_a}, {c});
  const ValueId xd = b.add_value("xd", DType::kFloat32, shape);
  b.add_node("DequantizeLinear", "dq_x", {xq, s_in, z_in}, {xd});
  const ValueId sum = b.add_value("sum", DType::kFloat32, shape);
  b.add_node("Add", "add", {c, xd}, {sum});
  const ValueId pooled = b.add_value("pooled", DType::kFloat32, pooled_shape);
  b.add_node("MaxPool", "pool", {sum}, {pooled},
             {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})});
  const ValueId pq = b.add_value("pq", DType::kUInt8, pooled_shape);
  b.add_node("QuantizeLinear", "q_out", {pooled, s_out, z_out}, {pq});
  const ValueId y = b.add_value("y", DType::kFloat32, pooled_shape);
  b.add_node("DequantizeLinear", "dq_out", {pq, s_out, z_out}, {y});
  b.add_output(y);
  return b.finish();
}

}  // namespace

void expect_quantized_block_is_one_partition(PluginEnvironment& env, const std::string& backend) {
  std::mt19937 generator(5);
  const Ints shape = {1, 16, 8, 8}, pooled_shape = {1, 16, 4, 4};
  const std::vector<uint8_t> graph = quantized_block_graph(shape, pooled_shape, generator);
  compiler::CompiledModel taken = env.compile(graph, {backend});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  ASSERT_EQ(taken.summary.partitions.size(), 1u);
  EXPECT_EQ(taken.summary.partitions[0].backend, backend);
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  std::vector<float> input(static_cast<size_t>(element_count(shape)));
  std::uniform_real_distribution<float> values(-2.5f, 2.5f);
  for (float& v : input) v = values(generator);
  const std::vector<uint8_t> actual = run_bytes(env, taken.program, float_bytes(input), kFloat32, shape, backend);
  const std::vector<uint8_t> expected = run_bytes(env, portable.program, float_bytes(input), kFloat32, shape);
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_EQ(actual.size(), static_cast<size_t>(element_count(pooled_shape)) * sizeof(float));
  int64_t differing = 0;
  for (size_t i = 0; i < actual.size() / sizeof(float); ++i) {
    float a = 0, e = 0;
    std::memcpy(&a, &actual[i * sizeof(float)], sizeof(float));
    std::memcpy(&e, &expected[i * sizeof(float)], sizeof(float));
    // Both are (q - 110) * 0.07 for a quantized q: equal, or one quantum apart where the
    // convolution's float32 requantization rounded the other way.
    EXPECT_LE(std::fabs(a - e), 0.07f * 1.001f) << "element " << i;
    differing += a != e;
  }
  EXPECT_LE(differing * 100, element_count(pooled_shape)) << differing << " outputs differ by one quantum";
}

namespace {

/// The graph of expect_varying_quantized_matches_portable.
std::vector<uint8_t> varying_quantized_graph() {
  GraphBuilder b;
  const common::DimExpr n = common::DimExpr::symbol(b.add_symbol("n", 1, 64));
  const ValueId x = b.add_dynamic_value("x", DType::kFloat32, {n, common::DimExpr::constant(8)});
  b.add_input(x);
  const ValueId xs = b.add_constant_f32("xs", {}, {0.05f});
  const ValueId xz = b.add_constant("xz", DType::kUInt8, {}, {128});
  const ValueId xq = b.add_dynamic_value("xq", DType::kUInt8, {n, common::DimExpr::constant(8)});
  b.add_node("QuantizeLinear", "q", {x, xs, xz}, {xq});
  std::mt19937 generator(11);
  const ValueId w = b.add_constant("w", DType::kInt8, {8, 4}, random_bytes(32, generator));
  const ValueId ws = b.add_constant_f32("ws", {4}, {0.01f, 0.02f, 0.015f, 0.03f});
  const ValueId wz = b.add_constant("wz", DType::kInt8, {4}, std::vector<uint8_t>(4, 0));
  const ValueId ys = b.add_constant_f32("ys", {}, {0.1f});
  const ValueId yz = b.add_constant("yz", DType::kUInt8, {}, {120});
  const ValueId yq = b.add_dynamic_value("yq", DType::kUInt8, {n, common::DimExpr::constant(4)});
  b.add_node("QLinearMatMul", "matmul", {xq, xs, xz, w, ws, wz, ys, yz}, {yq});
  const ValueId y = b.add_dynamic_value("y", DType::kFloat32, {n, common::DimExpr::constant(4)});
  b.add_node("DequantizeLinear", "dq", {yq, ys, yz}, {y});
  b.add_output(y);
  return b.finish();
}

}  // namespace

void expect_varying_quantized_matches_portable(PluginEnvironment& env, const std::string& backend) {
  const std::vector<uint8_t> graph = varying_quantized_graph();
  compiler::CompiledModel taken = env.compile(graph, {backend});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  std::mt19937 generator(3);
  std::uniform_real_distribution<float> values(-4.0f, 4.0f);
  for (int64_t n : {1, 3, 64, 3}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<float> input(static_cast<size_t>(n * 8));
    for (float& v : input) v = values(generator);
    const std::vector<uint8_t> actual = run_bytes(env, taken.program, float_bytes(input), kFloat32, {n, 8}, backend);
    const std::vector<uint8_t> expected = run_bytes(env, portable.program, float_bytes(input), kFloat32, {n, 8});
    ASSERT_EQ(actual.size(), static_cast<size_t>(n * 4) * sizeof(float));
    ASSERT_EQ(actual.size(), expected.size());
    int64_t differing = 0;
    for (size_t i = 0; i < actual.size() / sizeof(float); ++i) {
      float a = 0, e = 0;
      std::memcpy(&a, &actual[i * sizeof(float)], sizeof(float));
      std::memcpy(&e, &expected[i * sizeof(float)], sizeof(float));
      EXPECT_LE(std::fabs(a - e), 0.1f * 1.001f) << "element " << i;  // one quantum of y
      differing += a != e;
    }
    EXPECT_LE(differing * 20, std::max<int64_t>(n * 4, 20)) << differing << " outputs differ by one quantum";
  }
}

}  // namespace plugrt::backend_test
