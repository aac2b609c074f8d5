// SPDX-License-Identifier: Apache-2.0
// QLinearConv and QLinearMatMul on XNNPACK's quantized operators (QS8, QC8, QU8) against
// the portable kernels (ONNX's reference arithmetic) on the same graph and the same
// inputs; and the forms XNNPACK does not compute to the specification, which stay on
// portable.
//
// uint8 activations run as int8 inside XNNPACK (the edges flip the top bit), so both
// types are checked with per-tensor and per-channel weight scales.
//
// Tolerance: XNNPACK multiplies the int32 accumulator by the float32 multiplier in
// float32, where the portable kernel (as ONNX's reference) does it in double, so a
// product within a float32 rounding of a half can round the other way: a result may
// differ by one quantum. Each case counts those and allows at most 1 in 1,000.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/program.h"
#include "xnnpack_test_support.h"

namespace plugrt::xnnpack_test {
namespace {

using ::testing::IsEmpty;

/// A QLinearConv or QLinearMatMul graph's settings; the defaults are a 3x3 uint8 conv.
struct Quantized {
  bool matmul = false;
  DType activation = DType::kUInt8;  // x's type
  DType output = DType::kUInt8;      // y's type
  DType weight = DType::kInt8;
  Ints x = {1, 8, 9, 9}, w = {16, 8, 3, 3}, y = {1, 16, 9, 9};
  std::vector<Attribute> attributes = {Attribute::Ints("pads", {1, 1, 1, 1})};
  bool per_channel = false;
  bool bias = true;
  int weight_zero_point = 0;
  int x_zero_point = 3, y_zero_point = 7;
  float x_scale = 0.05f, y_scale = 0.11f;
};

int64_t count(const Ints& shape) {
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
  const ValueId w = b.add_constant("w", q.weight, q.w, random_bytes(count(q.w), generator));
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

/// Runs `program` on one input of `q`'s type (the same bytes for the same seed) and
/// returns the output's bytes.
std::vector<uint8_t> run_bytes(XnnpackEnvironment& env, const std::vector<uint8_t>& program, const Quantized& q,
                               uint32_t seed, bool expect_xnnpack) {
  Result<Method> method = env.load(program);
  EXPECT_TRUE(method.is_ok()) << method.status().to_string();
  if (!method.is_ok()) return {};
  for (const DelegatePlacement& placement : method->report().delegates) {
    if (expect_xnnpack) {
      EXPECT_EQ(placement.backend, "xnnpack");
      EXPECT_FALSE(placement.fell_back) << placement.reason;
    }
  }
  std::mt19937 generator(seed);
  std::vector<uint8_t> input = random_bytes(count(q.x), generator);
  Ints shape = q.x;
  const DLDataType dtype = q.activation == DType::kUInt8 ? DLDataType{kDLUInt, 8, 1} : DLDataType{kDLInt, 8, 1};
  DLTensor tensor{input.data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), dtype, shape.data(), nullptr, 0};
  EXPECT_TRUE(method->set_input(0, tensor).is_ok());
  Status run = method->execute();
  EXPECT_TRUE(run.is_ok()) << run.to_string();
  if (!run.is_ok()) return {};
  const DLTensor& out = method->output(0);
  const auto* data = static_cast<const uint8_t*>(out.data);
  return std::vector<uint8_t>(data, data + count(q.y));
}

/// Taken whole by XNNPACK, and equal to portable within one quantum in at most 1 of
/// 1,000 elements. Returns the number of elements that differ.
int64_t expect_matches_portable(const Quantized& q) {
  XnnpackEnvironment env;
  const std::vector<uint8_t> graph = quantized_graph(q);
  compiler::CompiledModel taken = env.compile(graph, {"xnnpack"});
  EXPECT_THAT(taken.summary.untaken_ops, IsEmpty());
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  int64_t differing = 0, total = 0;
  for (uint32_t seed : {1u, 2u}) {
    const std::vector<uint8_t> actual = run_bytes(env, taken.program, q, seed, true);
    const std::vector<uint8_t> expected = run_bytes(env, portable.program, q, seed, false);
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

TEST(XnnpackQuantized, ConvUint8PerTensor) { expect_matches_portable({}); }

TEST(XnnpackQuantized, ConvUint8PerChannel) {
  Quantized q;
  q.per_channel = true;
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, ConvUint8ZeroPointsAtTheEnds) {
  Quantized q;
  q.x_zero_point = 255;
  q.y_zero_point = 0;
  q.per_channel = true;
  expect_matches_portable(q);
  q.x_zero_point = 0;
  q.y_zero_point = 255;
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, ConvUint8ToInt8AndBack) {
  Quantized q;
  q.output = DType::kInt8;
  q.y_zero_point = 0;
  expect_matches_portable(q);
  q.activation = DType::kInt8;
  q.output = DType::kUInt8;
  q.x_zero_point = static_cast<uint8_t>(-7);
  q.y_zero_point = 128;
  q.per_channel = true;
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, ConvUint8PerTensorNoBias) {
  Quantized q;
  q.bias = false;
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, ConvInt8PerTensor) {
  Quantized q;
  q.activation = q.output = DType::kInt8;
  q.x_zero_point = static_cast<uint8_t>(-5);
  q.y_zero_point = static_cast<uint8_t>(-2);
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, ConvInt8PerChannel) {
  Quantized q;
  q.activation = q.output = DType::kInt8;
  q.x_zero_point = static_cast<uint8_t>(-5);
  q.y_zero_point = static_cast<uint8_t>(-2);
  q.per_channel = true;
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, ConvInt8PerChannelNoBiasZeroZeroPoints) {
  Quantized q;
  q.activation = q.output = DType::kInt8;
  q.x_zero_point = 0;
  q.y_zero_point = 0;
  q.per_channel = true;
  q.bias = false;
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, ConvStridedAsymmetricPadsDilated) {
  for (DType dtype : {DType::kUInt8, DType::kInt8}) {
    Quantized q;
    q.activation = q.output = dtype;
    q.x = {2, 8, 10, 11};
    q.w = {12, 8, 3, 3};
    q.y = {2, 12, 4, 4};
    q.attributes = {Attribute::Ints("pads", {1, 0, 0, 1}), Attribute::Ints("strides", {2, 2}),
                    Attribute::Ints("dilations", {2, 2})};
    q.per_channel = dtype == DType::kUInt8;
    expect_matches_portable(q);
  }
}

TEST(XnnpackQuantized, ConvGrouped) {
  for (DType dtype : {DType::kUInt8, DType::kInt8}) {
    Quantized q;
    q.activation = q.output = dtype;
    q.x = {1, 8, 7, 7};
    q.w = {12, 2, 3, 3};
    q.y = {1, 12, 7, 7};
    q.attributes = {Attribute::Int("group", 4), Attribute::Ints("pads", {1, 1, 1, 1})};
    q.per_channel = dtype == DType::kInt8;
    expect_matches_portable(q);
  }
}

TEST(XnnpackQuantized, ConvDepthwise) {
  for (DType dtype : {DType::kUInt8, DType::kInt8}) {
    Quantized q;
    q.activation = q.output = dtype;
    q.x = {1, 32, 12, 12};
    q.w = {32, 1, 3, 3};
    q.y = {1, 32, 6, 6};
    q.attributes = {Attribute::Int("group", 32), Attribute::Ints("pads", {1, 1, 1, 1}),
                    Attribute::Ints("strides", {2, 2})};
    q.per_channel = dtype == DType::kInt8;
    expect_matches_portable(q);
  }
}

TEST(XnnpackQuantized, ConvDepthwiseMultiplier) {
  Quantized q;
  q.activation = q.output = DType::kInt8;
  q.x = {1, 8, 9, 9};
  q.w = {16, 1, 5, 5};
  q.y = {1, 16, 9, 9};
  q.attributes = {Attribute::Int("group", 8), Attribute::Ints("pads", {2, 2, 2, 2})};
  q.per_channel = true;
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, ConvPointwiseOneByOneSpatial) {
  Quantized q;
  q.x = {3, 24, 1, 1};
  q.w = {10, 24, 1, 1};
  q.y = {3, 10, 1, 1};
  q.attributes = {};
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, MatMulUint8PerTensor) {
  Quantized q;
  q.matmul = true;
  q.x = {6, 40};
  q.w = {40, 24};
  q.y = {6, 24};
  q.attributes = {};
  expect_matches_portable(q);
}

TEST(XnnpackQuantized, MatMulInt8PerTensorBatched) {
  Quantized q;
  q.matmul = true;
  q.activation = q.output = DType::kInt8;
  q.x_zero_point = static_cast<uint8_t>(-9);
  q.x = {2, 5, 32};
  q.w = {32, 20};
  q.y = {2, 5, 20};
  q.attributes = {};
  expect_matches_portable(q);
}

/// How often the float32 requantization differs from the double one, on many random
/// convolutions' outputs (logged; the bound is expect_matches_portable's).
TEST(XnnpackQuantized, OneQuantumDifferencesAreRare) {
  for (DType dtype : {DType::kUInt8, DType::kInt8}) {
    Quantized q;
    q.activation = q.output = dtype;
    q.x = {1, 32, 16, 16};
    q.w = {64, 32, 3, 3};
    q.y = {1, 64, 16, 16};
    q.per_channel = dtype == DType::kInt8;
    const int64_t differing = expect_matches_portable(q);
    std::printf("%s: one-quantum differences: %lld of %lld outputs\n", dtype == DType::kInt8 ? "int8" : "uint8",
                static_cast<long long>(differing), static_cast<long long>(2 * count(q.y)));
  }
}

// ---- Left to portable -----------------------------------------------------------------------

void expect_untaken(const Quantized& q, const char* op) {
  XnnpackEnvironment env;
  const std::vector<uint8_t> graph = quantized_graph(q);
  compiler::CompiledModel mixed = env.compile(graph, {"xnnpack"});
  ASSERT_FALSE(mixed.program.empty());
  EXPECT_EQ(mixed.summary.untaken_ops.count(op), 1u) << "xnnpack took " << op;
  compiler::CompiledModel portable = env.compile(graph, {"portable"});
  EXPECT_EQ(run_bytes(env, mixed.program, q, 1, false), run_bytes(env, portable.program, q, 1, false));
}

TEST(XnnpackQuantized, Uint8WeightsStayOnPortable) {
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

TEST(XnnpackQuantized, Int8WeightsWithANonZeroZeroPointStayOnPortable) {
  Quantized q;
  q.weight_zero_point = 3;
  expect_untaken(q, "QLinearConv");
}

TEST(XnnpackQuantized, MatMulPerColumnScalesStayOnPortable) {
  Quantized q;
  q.matmul = true;
  q.activation = q.output = DType::kInt8;
  q.x = {6, 40};
  q.w = {40, 24};
  q.y = {6, 24};
  q.attributes = {};
  q.per_channel = true;
  expect_untaken(q, "QLinearMatMul");
}

TEST(XnnpackQuantized, MultipliersOf256OrMoreStayOnPortable) {
  Quantized q;
  q.x_scale = 40.0f;  // 40 * w_scale (at least 0.002) / 0.0001: 800 or more
  q.y_scale = 0.0001f;
  expect_untaken(q, "QLinearConv");
}

TEST(XnnpackQuantized, OneDimensionalConvStaysOnPortable) {
  Quantized q;
  q.x = {1, 16, 20};
  q.w = {24, 16, 3};
  q.y = {1, 24, 18};
  q.attributes = {};
  expect_untaken(q, "QLinearConv");
}

TEST(XnnpackQuantized, BlobOfAQuantizedOpIsVersion3) {
  XnnpackEnvironment env;
  compiler::CompiledModel taken = env.compile(quantized_graph({}), {"xnnpack"});
  ASSERT_FALSE(taken.program.empty());
  // The blob's header: "PRTXNNPK", then the version, little-endian.
  const std::string magic = "PRTXNNPK";
  auto at = std::search(taken.program.begin(), taken.program.end(), magic.begin(), magic.end());
  ASSERT_NE(at, taken.program.end());
  uint32_t version = 0;
  std::memcpy(&version, &*(at + 8), 4);
  EXPECT_EQ(version, 3u);
}

}  // namespace
}  // namespace plugrt::xnnpack_test
