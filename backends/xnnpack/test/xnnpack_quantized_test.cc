// SPDX-License-Identifier: Apache-2.0
// QLinearConv and QLinearMatMul on XNNPACK's quantized operators (QS8, QC8, QU8), and
// QuantizeLinear and DequantizeLinear on its converts, against the portable kernels
// (ONNX's reference arithmetic) on the same graph and the same inputs; and the forms
// XNNPACK does not compute to the specification, which stay on portable.
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
#include "quantized_cases.h"
#include "xnnpack_test_support.h"

namespace plugrt::xnnpack_test {
namespace {

using ::testing::IsEmpty;

/// Taken whole by XNNPACK, and equal to portable within one quantum in at most 1 of
/// 1,000 elements (quantized_cases.h). Returns the number of elements that differ.
int64_t expect_matches_portable(const Quantized& q) {
  XnnpackEnvironment env;
  return expect_quantized_matches_portable(env, "xnnpack", q);
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
  Quantized q = matmul_case();
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

/// Per-column weight scales, on a 1x1 per-channel convolution over A's rows.
TEST(XnnpackQuantized, MatMulPerColumnScales) {
  Quantized q = matmul_case();
  q.per_channel = true;
  expect_matches_portable(q);
  q.activation = q.output = DType::kInt8;
  q.x_zero_point = static_cast<uint8_t>(-9);
  q.x = {2, 5, 40};
  q.y = {2, 5, 24};
  expect_matches_portable(q);
}

// QuantizeLinear and DequantizeLinear: test/backend_support/quantized_suite.cc.

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
                static_cast<long long>(differing), static_cast<long long>(2 * element_count(q.y)));
  }
}

// ---- Left to portable -----------------------------------------------------------------------

void expect_untaken(const Quantized& q, const char* op) {
  XnnpackEnvironment env;
  expect_quantized_left_to_portable(env, "xnnpack", q, op);
}

TEST(XnnpackQuantized, Uint8WeightsStayOnPortable) {
  Quantized q;
  q.weight = DType::kUInt8;
  q.weight_zero_point = 128;
  expect_untaken(q, "QLinearConv");
  Quantized m = matmul_case();
  m.weight = DType::kUInt8;
  m.weight_zero_point = 128;
  expect_untaken(m, "QLinearMatMul");
}

TEST(XnnpackQuantized, Int8WeightsWithANonZeroZeroPointStayOnPortable) {
  Quantized q;
  q.weight_zero_point = 3;
  expect_untaken(q, "QLinearConv");
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

TEST(XnnpackQuantized, BlobOfAQuantizedOpIsVersion4) {
  XnnpackEnvironment env;
  compiler::CompiledModel taken = env.compile(quantized_graph({}), {"xnnpack"});
  ASSERT_FALSE(taken.program.empty());
  // The blob's header: "PRTXNNPK", then the version, little-endian.
  const std::string magic = "PRTXNNPK";
  auto at = std::search(taken.program.begin(), taken.program.end(), magic.begin(), magic.end());
  ASSERT_NE(at, taken.program.end());
  uint32_t version = 0;
  std::memcpy(&version, &*(at + 8), 4);
  EXPECT_EQ(version, 4u);
}

}  // namespace
}  // namespace plugrt::xnnpack_test
