// SPDX-License-Identifier: Apache-2.0
// QLinearConv and QLinearMatMul on oneDNN's int8 primitives, and QuantizeLinear and
// DequantizeLinear as steps of the plan, against the portable kernels (ONNX's reference
// arithmetic) on the same graph and the same inputs; and the forms oneDNN does not
// compute to the specification, which stay on portable.
//
// Tolerance: oneDNN multiplies the int32 accumulator by the float32 multiplier in
// float32, where the portable kernel (as ONNX's reference) does it in double, so a
// product within a float32 rounding of a half can round the other way: a result may
// differ by one quantum. Each case counts those and allows at most 1 in 1,000.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onednn_test_support.h"
#include "plugrt/program.h"
#include "quantize_linear_cases.h"
#include "quantized_cases.h"

namespace plugrt::onednn_test {
namespace {

using ::testing::IsEmpty;

/// Taken whole by oneDNN, and equal to portable within one quantum in at most 1 of
/// 1,000 elements (quantized_cases.h). Returns the number of elements that differ.
int64_t expect_matches_portable(const Quantized& q) {
  OnednnEnvironment env;
  return expect_quantized_matches_portable(env, "onednn", q);
}

TEST(OnednnQuantized, ConvUint8PerTensor) { expect_matches_portable({}); }

TEST(OnednnQuantized, ConvUint8PerChannelNoBias) {
  Quantized q;
  q.per_channel = true;
  q.bias = false;
  expect_matches_portable(q);
}

TEST(OnednnQuantized, ConvInt8ActivationsToInt8PerChannel) {
  Quantized q;
  q.activation = q.output = DType::kInt8;
  q.x_zero_point = static_cast<uint8_t>(-5);
  q.y_zero_point = static_cast<uint8_t>(-2);
  q.per_channel = true;
  expect_matches_portable(q);
}

TEST(OnednnQuantized, ConvZeroZeroPointsUint8ToInt8) {
  Quantized q;
  q.x_zero_point = 0;
  q.y_zero_point = 0;
  q.output = DType::kInt8;
  expect_matches_portable(q);
}

TEST(OnednnQuantized, ConvStridedAsymmetricPads) {
  Quantized q;
  q.x = {2, 8, 10, 11};
  q.w = {12, 8, 3, 3};
  q.y = {2, 12, 5, 5};
  q.attributes = {Attribute::Ints("pads", {1, 0, 0, 1}), Attribute::Ints("strides", {2, 2})};
  q.per_channel = true;
  expect_matches_portable(q);
}

TEST(OnednnQuantized, ConvGrouped) {
  Quantized q;
  q.x = {1, 8, 7, 7};
  q.w = {12, 2, 3, 3};
  q.y = {1, 12, 7, 7};
  q.attributes = {Attribute::Int("group", 4), Attribute::Ints("pads", {1, 1, 1, 1})};
  q.per_channel = true;
  expect_matches_portable(q);
}

TEST(OnednnQuantized, ConvDepthwise) {
  Quantized q;
  q.x = {1, 32, 12, 12};
  q.w = {32, 1, 3, 3};
  q.y = {1, 32, 6, 6};
  q.attributes = {Attribute::Int("group", 32), Attribute::Ints("pads", {1, 1, 1, 1}),
                  Attribute::Ints("strides", {2, 2})};
  q.per_channel = true;
  expect_matches_portable(q);
}

TEST(OnednnQuantized, ConvPointwiseDilated1d) {
  Quantized q;
  q.x = {1, 16, 20};
  q.w = {24, 16, 3};
  q.y = {1, 24, 16};
  q.attributes = {Attribute::Ints("dilations", {2})};
  expect_matches_portable(q);
}

/// Unpadded convolutions run with the src zero point folded into the bias (1x1 and
/// valid windows), where the float32 sums stay exact; a large one keeps the run-time zero
/// point. All three match portable as the others do.
TEST(OnednnQuantized, ConvPointwiseSrcZeroPointFoldedIntoBias) {
  Quantized q;
  q.x = {1, 48, 6, 7};
  q.w = {40, 48, 1, 1};
  q.y = {1, 40, 6, 7};
  q.attributes = {};
  q.x_zero_point = 131;
  q.per_channel = true;
  expect_matches_portable(q);
  q.bias = false;
  q.activation = DType::kInt8;
  q.x_zero_point = static_cast<uint8_t>(-77);
  expect_matches_portable(q);
}

TEST(OnednnQuantized, ConvValidWindowSrcZeroPointFoldedIntoBias) {
  Quantized q;
  q.x = {1, 8, 9, 9};
  q.w = {16, 8, 3, 3};
  q.y = {1, 16, 4, 4};
  q.attributes = {Attribute::Ints("strides", {2, 2})};
  q.x_zero_point = 250;
  expect_matches_portable(q);
}

TEST(OnednnQuantized, ConvPointwiseTooLargeToFoldKeepsTheZeroPoint) {
  Quantized q;
  q.x = {1, 1536, 2, 2};  // 255 * sum(|w|) passes 2^24
  q.w = {8, 1536, 1, 1};
  q.y = {1, 8, 2, 2};
  q.attributes = {};
  q.x_zero_point = 200;
  q.x_scale = 0.002f;
  q.y_scale = 2.5f;
  expect_matches_portable(q);
}

TEST(OnednnQuantized, MatMulUint8PerTensor) {
  Quantized q = matmul_case();
  expect_matches_portable(q);
}

TEST(OnednnQuantized, MatMulInt8PerColumnBatched) {
  Quantized q;
  q.matmul = true;
  q.activation = q.output = DType::kInt8;
  q.x_zero_point = static_cast<uint8_t>(-9);
  q.x = {2, 5, 32};
  q.w = {32, 20};
  q.y = {2, 5, 20};
  q.attributes = {};
  q.per_channel = true;
  expect_matches_portable(q);
}

/// How often the float32 requantization differs from the double one, on many random
/// convolutions' outputs (logged; the bound is expect_matches_portable's).
TEST(OnednnQuantized, OneQuantumDifferencesAreRare) {
  Quantized q;
  q.x = {1, 32, 16, 16};
  q.w = {64, 32, 3, 3};
  q.y = {1, 64, 16, 16};
  q.per_channel = true;
  const int64_t differing = expect_matches_portable(q);
  std::printf("one-quantum differences: %lld of %lld outputs\n", static_cast<long long>(differing),
              static_cast<long long>(2 * element_count(q.y)));
}

// ---- Left to portable -----------------------------------------------------------------------

void expect_untaken(const Quantized& q, const char* op) {
  OnednnEnvironment env;
  expect_quantized_left_to_portable(env, "onednn", q, op);
}

TEST(OnednnQuantized, Uint8WeightsWithAZeroPointStayOnPortable) {
  Quantized q;
  q.weight = DType::kUInt8;
  q.weight_zero_point = 128;
  expect_untaken(q, "QLinearConv");
  q.matmul = true;
  q.x = {6, 40};
  q.w = {40, 24};
  q.y = {6, 24};
  q.attributes = {};
  expect_untaken(q, "QLinearMatMul");
}

TEST(OnednnQuantized, Int8WeightsWithANonZeroZeroPointStayOnPortable) {
  Quantized q;
  q.weight_zero_point = 3;
  expect_untaken(q, "QLinearConv");
}

TEST(OnednnQuantized, BlobOfAQuantizedOpIsVersion6) {
  OnednnEnvironment env;
  compiler::CompiledModel taken = env.compile(quantized_graph({}), {"onednn"});
  ASSERT_FALSE(taken.program.empty());
  // The blob's header: "PRTONDNN", then the version, little-endian.
  const std::string magic = "PRTONDNN";
  auto at = std::search(taken.program.begin(), taken.program.end(), magic.begin(), magic.end());
  ASSERT_NE(at, taken.program.end());
  uint32_t version = 0;
  std::memcpy(&version, &*(at + 8), 4);
  EXPECT_EQ(version, 6u);
}

// ---- QuantizeLinear and DequantizeLinear ------------------------------------------------------
// (per tensor: test/backend_support/quantized_suite.cc; per axis, below)

/// run_bytes, expecting every partition on oneDNN when `expect_onednn`.
std::vector<uint8_t> run_raw(OnednnEnvironment& env, const std::vector<uint8_t>& program, std::vector<uint8_t> input,
                             DLDataType dtype, Ints shape, bool expect_onednn) {
  return run_bytes(env, program, std::move(input), dtype, std::move(shape), expect_onednn ? "onednn" : "");
}

/// One input of a graph: its bytes, type and shape.
struct RawInput {
  std::vector<uint8_t> bytes;
  DLDataType dtype;
  Ints shape;
};

/// Runs `program` on `inputs` and returns every output's bytes; checks that everything
/// ran on oneDNN when `expect_onednn`.
std::vector<std::vector<uint8_t>> run_all(OnednnEnvironment& env, const std::vector<uint8_t>& program,
                                          std::vector<RawInput> inputs, bool expect_onednn) {
  Result<Method> method = env.load(program);
  EXPECT_TRUE(method.is_ok()) << method.status().to_string();
  if (!method.is_ok()) return {};
  for (const DelegatePlacement& placement : method->report().delegates) {
    if (expect_onednn) {
      EXPECT_EQ(placement.backend, "onednn");
      EXPECT_FALSE(placement.fell_back) << placement.reason;
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    RawInput& in = inputs[i];
    DLTensor tensor{
        in.bytes.data(), {kDLCPU, 0}, static_cast<int32_t>(in.shape.size()), in.dtype, in.shape.data(), nullptr, 0};
    EXPECT_TRUE(method->set_input(i, tensor).is_ok());
  }
  Status run = method->execute();
  EXPECT_TRUE(run.is_ok()) << run.to_string();
  if (!run.is_ok()) return {};
  std::vector<std::vector<uint8_t>> outputs;
  for (size_t o = 0; o < method->num_outputs(); ++o) {
    const DLTensor& out = method->output(o);
    size_t bytes = (out.dtype.bits + 7u) / 8u;
    for (int32_t d = 0; d < out.ndim; ++d) bytes *= static_cast<size_t>(out.shape[d]);
    const auto* data = static_cast<const uint8_t*>(out.data);
    outputs.emplace_back(data, data + bytes);
  }
  return outputs;
}

/// Residual adds of dequantized values, as quantized mobilenet_v2 and resnet50 have them:
/// uint8 plus int8, float32 plus uint8, and uint8 plus int8 then Relu, each
/// DequantizeLinear read by the Add alone, one sum quantized again. oneDNN runs each Add
/// as one pass over the 8-bit bytes; the sums and the quantized one are portable's to
/// the bit.
TEST(OnednnQuantized, ResidualAddOfDequantizedValuesIsExact) {
  GraphBuilder b;
  const Ints shape = {1, 24, 7, 9};
  const ValueId a = b.add_value("a", DType::kUInt8, shape), c = b.add_value("c", DType::kInt8, shape);
  const ValueId f = b.add_value("f", DType::kFloat32, shape), d = b.add_value("d", DType::kUInt8, shape);
  const ValueId e = b.add_value("e", DType::kUInt8, shape), g = b.add_value("g", DType::kInt8, shape);
  for (ValueId v : {a, c, f, d, e, g}) b.add_input(v);
  auto dequantized = [&](const char* name, ValueId q, DType dtype, float scale, int zero) {
    const ValueId s = b.add_constant_f32(std::string(name) + "_s", {}, {scale});
    const ValueId z = b.add_constant(std::string(name) + "_z", dtype, {}, {static_cast<uint8_t>(zero)});
    const ValueId y = b.add_value(name, DType::kFloat32, shape);
    b.add_node("DequantizeLinear", std::string("dq_") + name, {q, s, z}, {y});
    return y;
  };
  const ValueId sum = b.add_value("sum", DType::kFloat32, shape), sum2 = b.add_value("sum2", DType::kFloat32, shape);
  b.add_node("Add", "add",
             {dequantized("da", a, DType::kUInt8, 0.037f, 131), dequantized("dc", c, DType::kInt8, 0.0213f, -7)},
             {sum});
  b.add_node("Add", "add2", {f, dequantized("dd", d, DType::kUInt8, 0.0071f, 3)}, {sum2});
  const ValueId sq = b.add_value("sq", DType::kUInt8, shape);
  b.add_node("QuantizeLinear", "q",
             {sum, b.add_constant_f32("q_s", {}, {0.043f}), b.add_constant("q_z", DType::kUInt8, {}, {100})}, {sq});
  // A residual block of resnet: the Add, then Relu (a post-op of the Add on oneDNN).
  const ValueId sum3 = b.add_value("sum3", DType::kFloat32, shape), r = b.add_value("r", DType::kFloat32, shape);
  b.add_node("Add", "add3",
             {dequantized("de", e, DType::kUInt8, 0.019f, 77), dequantized("dg", g, DType::kInt8, 0.033f, 12)}, {sum3});
  b.add_node("Relu", "relu", {sum3}, {r});
  for (ValueId v : {sum, sum2, sq, r}) b.add_output(v);
  const std::vector<uint8_t> graph = b.finish();

  OnednnEnvironment env;
  compiler::CompiledModel taken = env.compile(graph, {"onednn"});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  std::mt19937 generator(11);
  const int64_t n = element_count(shape);
  std::vector<float> floats(static_cast<size_t>(n));
  std::uniform_real_distribution<float> values(-3.0f, 3.0f);
  for (float& v : floats) v = values(generator);
  const std::vector<RawInput> inputs = {
      {random_bytes(n, generator), {kDLUInt, 8, 1}, shape}, {random_bytes(n, generator), {kDLInt, 8, 1}, shape},
      {float_bytes(floats), {kDLFloat, 32, 1}, shape},      {random_bytes(n, generator), {kDLUInt, 8, 1}, shape},
      {random_bytes(n, generator), {kDLUInt, 8, 1}, shape}, {random_bytes(n, generator), {kDLInt, 8, 1}, shape}};
  const auto actual = run_all(env, taken.program, inputs, true);
  const auto expected = run_all(env, portable.program, inputs, false);
  ASSERT_EQ(actual.size(), 4u);
  EXPECT_EQ(actual, expected);
}

/// x (float32, `shape`) -> QuantizeLinear along `axis`, a scale and zero point (of
/// `dtype`) per index -> y.
std::vector<uint8_t> per_axis_quantize_graph(const Ints& shape, int64_t axis, const std::vector<float>& scales,
                                             DType dtype, const std::vector<uint8_t>& zero_points) {
  GraphBuilder b;
  const ValueId x = b.add_value("x", DType::kFloat32, shape);
  b.add_input(x);
  const auto n = static_cast<int64_t>(scales.size());
  const ValueId s = b.add_constant_f32("scale", {n}, scales);
  const ValueId z = b.add_constant("zero", dtype, {n}, zero_points);
  const ValueId y = b.add_value("y", dtype, shape);
  b.add_node("QuantizeLinear", "q", {x, s, z}, {y}, {Attribute::Int("axis", axis)});
  b.add_output(y);
  return b.finish();
}

/// Per axis: values on a grid of 1/8 (ties for the scales 0.25, 0.5 and 1, exact
/// quotients for all), their neighbours, saturation, infinities and NaN, each index of
/// the axis with its own scale and zero point, against portable and ONNX's formula.
void expect_per_axis_quantize_exact(DType dtype, const std::vector<uint8_t>& zero_points, int64_t axis) {
  const Ints shape = {2, 4, 101};
  const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
  const std::vector<float> all_scales = {0.5f, 0.25f, 1.0f, 2.0f};
  const std::vector<float> scales(all_scales.begin(), all_scales.begin() + shape[a]);  // axis 0 or 1
  std::vector<float> x(static_cast<size_t>(element_count(shape)));
  for (size_t i = 0; i < x.size(); ++i) {
    const float grid = static_cast<float>(static_cast<int64_t>(i % 801) - 400) * 0.125f;
    x[i] = i % 3 == 0 ? grid : std::nextafter(grid, i % 3 == 1 ? 1e9f : -1e9f);
  }
  x[5] = std::numeric_limits<float>::infinity(), x[6] = -x[5], x[7] = std::numeric_limits<float>::quiet_NaN();
  OnednnEnvironment env;
  const std::vector<uint8_t> graph = per_axis_quantize_graph(shape, axis, scales, dtype, zero_points);
  compiler::CompiledModel taken = env.compile(graph, {"onednn"});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  const DLDataType f32{kDLFloat, 32, 1};
  const std::vector<uint8_t> actual = run_raw(env, taken.program, float_bytes(x), f32, shape, true);
  const std::vector<uint8_t> expected = run_raw(env, portable.program, float_bytes(x), f32, shape, false);
  ASSERT_EQ(actual.size(), x.size());
  EXPECT_EQ(actual, expected);
  const bool s8 = dtype == DType::kInt8;
  const double lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
  int64_t inner = 1;
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % shape[a]);
    const int zp = s8 ? static_cast<int8_t>(zero_points[c]) : zero_points[c];
    const double q =
        std::isnan(x[i]) ? lo : std::min(hi, std::max(lo, static_cast<double>(std::nearbyint(x[i] / scales[c])) + zp));
    const int got = s8 ? static_cast<int8_t>(actual[i]) : actual[i];
    EXPECT_EQ(got, static_cast<int>(q)) << "x = " << x[i] << " at index " << c;
  }
}

TEST(OnednnQuantized, PerAxisQuantizeLinearUint8) {
  expect_per_axis_quantize_exact(DType::kUInt8, {3, 0, 255, 128}, 1);
}

TEST(OnednnQuantized, PerAxisQuantizeLinearInt8FirstAxis) {
  expect_per_axis_quantize_exact(DType::kInt8, {static_cast<uint8_t>(-5), 127}, 0);
}

TEST(OnednnQuantized, PerAxisQuantizeLinearNegativeAxis) {
  expect_per_axis_quantize_exact(DType::kInt8, {0, static_cast<uint8_t>(-128), 7, 1}, -2);
}

/// Every uint8 or int8 value -> DequantizeLinear along axis 0 (4 scales and zero points)
/// -> float32, bit for bit as portable and as ONNX's formula.
void expect_per_axis_dequantize_exact(DType dtype, const std::vector<uint8_t>& zero_points) {
  const std::vector<float> scales = {0.0173f, 0.5f, 3.1f, 0.0291f};
  GraphBuilder b;
  const ValueId x = b.add_value("x", dtype, {4, 256});
  b.add_input(x);
  const ValueId s = b.add_constant_f32("scale", {4}, scales);
  const ValueId z = b.add_constant("zero", dtype, {4}, zero_points);
  const ValueId y = b.add_value("y", DType::kFloat32, {4, 256});
  b.add_node("DequantizeLinear", "dq", {x, s, z}, {y}, {Attribute::Int("axis", 0)});
  b.add_output(y);
  const std::vector<uint8_t> graph = b.finish();
  OnednnEnvironment env;
  compiler::CompiledModel taken = env.compile(graph, {"onednn"});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  std::vector<uint8_t> input(4 * 256);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<uint8_t>(i * 7);
  const DLDataType type = dtype == DType::kUInt8 ? DLDataType{kDLUInt, 8, 1} : DLDataType{kDLInt, 8, 1};
  const std::vector<uint8_t> actual = run_raw(env, taken.program, input, type, {4, 256}, true);
  const std::vector<uint8_t> expected = run_raw(env, portable.program, input, type, {4, 256}, false);
  ASSERT_EQ(actual.size(), input.size() * sizeof(float));
  EXPECT_EQ(actual, expected);
  const bool s8 = dtype == DType::kInt8;
  for (size_t i = 0; i < input.size(); ++i) {
    float got = 0;
    std::memcpy(&got, &actual[i * sizeof(float)], sizeof(float));
    const int q = s8 ? static_cast<int8_t>(input[i]) : input[i];
    const int zp = s8 ? static_cast<int8_t>(zero_points[i / 256]) : zero_points[i / 256];
    EXPECT_EQ(got, static_cast<float>(q - zp) * scales[i / 256]) << "x = " << q;
  }
}

TEST(OnednnQuantized, PerAxisDequantizeLinearUint8) {
  expect_per_axis_dequantize_exact(DType::kUInt8, {131, 0, 255, 7});
}

TEST(OnednnQuantized, PerAxisDequantizeLinearInt8) {
  expect_per_axis_dequantize_exact(DType::kInt8, {static_cast<uint8_t>(-7), 0, 127, static_cast<uint8_t>(-128)});
}

TEST(OnednnQuantized, BlobWithAPerAxisQuantizeLinearIsVersion8) {
  OnednnEnvironment env;
  compiler::CompiledModel taken =
      env.compile(per_axis_quantize_graph({1, 2, 3}, 1, {0.5f, 0.25f}, DType::kUInt8, {1, 2}), {"onednn"});
  ASSERT_FALSE(taken.program.empty());
  const std::string magic = "PRTONDNN";
  auto at = std::search(taken.program.begin(), taken.program.end(), magic.begin(), magic.end());
  ASSERT_NE(at, taken.program.end());
  uint32_t version = 0;
  std::memcpy(&version, &*(at + 8), 4);
  EXPECT_EQ(version, 8u);
}

TEST(OnednnQuantized, BlobWithAQuantizeLinearIsVersion7) {
  OnednnEnvironment env;
  compiler::CompiledModel taken = env.compile(quantize_graph(8, 0.5f, DType::kUInt8, 3), {"onednn"});
  ASSERT_FALSE(taken.program.empty());
  const std::string magic = "PRTONDNN";
  auto at = std::search(taken.program.begin(), taken.program.end(), magic.begin(), magic.end());
  ASSERT_NE(at, taken.program.end());
  uint32_t version = 0;
  std::memcpy(&version, &*(at + 8), 4);
  EXPECT_EQ(version, 7u);
}

}  // namespace
}  // namespace plugrt::onednn_test
