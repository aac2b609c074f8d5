// SPDX-License-Identifier: Apache-2.0
// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv and the com.microsoft QLinear
// ops (quantized.cc): ONNX's operator examples, naive loops written here for per-row,
// per-column and per-channel zero points, groups, strides and padding, hand-derived
// rounding and saturation cases, and values ONNX Runtime computes for the contrib ops.
// The fast paths (1x1 filters, groups, padding, strides, long filters of extreme values)
// are checked against a reference loop kept here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

TestTensor u8(std::vector<int64_t> shape, const std::vector<uint8_t>& values) {
  return typed_tensor<uint8_t>(DType::kUInt8, std::move(shape), values);
}
TestTensor i8(std::vector<int64_t> shape, const std::vector<int8_t>& values) {
  return typed_tensor<int8_t>(DType::kInt8, std::move(shape), values);
}

/// `count` values of T in [lo, hi], the same for the same seed.
template <typename T>
std::vector<T> random_ints(size_t count, int lo, int hi, uint32_t seed) {
  std::vector<T> values;
  for (float f : random_floats(count, seed)) {
    values.push_back(static_cast<T>(lo + static_cast<int>((f + 1.0f) / 2.0f * static_cast<float>(hi - lo) + 0.5f)));
  }
  return values;
}

// ---- MatMulInteger ----------------------------------------------------------------------

TEST(MatMulIntegerKernel, OnnxExample) {
  NodeRun run = run_node(
      {"MatMulInteger",
       {},
       {u8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}), u8({3, 2}, {1, 4, 2, 5, 3, 6}), u8({}, {12}), u8({}, {0})},
       {{DType::kInt32, {4, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAre(-38, -83, -44, -98, -50, -113, -56, -128));
}

TEST(MatMulIntegerKernel, PerRowAndPerColumnZeroPointsWithBroadcastBatches) {
  // A int8 [2, 3, 4] with one zero point per row ([3]); B uint8 [4, 5] shared by both
  // batches, one zero point per column ([5]). Expected: the definition, looped here.
  const std::vector<int8_t> a = random_ints<int8_t>(24, -128, 127, 1);
  const std::vector<uint8_t> b = random_ints<uint8_t>(20, 0, 255, 2);
  const std::vector<int8_t> a_zero{-3, 0, 100};
  const std::vector<uint8_t> b_zero{0, 255, 128, 7, 1};
  std::vector<int32_t> expected;
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 5; ++j) {
        int32_t sum = 0;
        for (int k = 0; k < 4; ++k) sum += (a[(t * 3 + i) * 4 + k] - a_zero[i]) * (b[k * 5 + j] - b_zero[j]);
        expected.push_back(sum);
      }
    }
  }
  NodeRun run = run_node({"MatMulInteger",
                          {},
                          {i8({2, 3, 4}, a), u8({4, 5}, b), i8({3}, a_zero), u8({5}, b_zero)},
                          {{DType::kInt32, {2, 3, 5}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAreArray(expected));
}

TEST(MatMulIntegerKernel, RefusesFloatInputsAndMismatchedZeroPoints) {
  NodeRun floats = run_node(
      {"MatMulInteger", {}, {TestTensor::f32({1, 1}, {1}), TestTensor::f32({1, 1}, {1})}, {{DType::kInt32, {1, 1}}}});
  EXPECT_THAT(floats.error, HasSubstr("must be uint8 or int8"));
  NodeRun zero = run_node({"MatMulInteger",
                           {},
                           {u8({2, 2}, {1, 2, 3, 4}), u8({2, 2}, {1, 2, 3, 4}), i8({}, {1})},
                           {{DType::kInt32, {2, 2}}}});
  EXPECT_THAT(zero.error, HasSubstr("a_zero_point (input 2) must be uint8"));
}

// ---- ConvInteger ------------------------------------------------------------------------

TEST(ConvIntegerKernel, OnnxPaddingExample) {
  NodeRun run = run_node({"ConvInteger",
                          {Attribute::Ints("pads", {1, 1, 1, 1})},
                          {u8({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10}), u8({1, 1, 2, 2}, {1, 1, 1, 1}), u8({}, {1})},
                          {{DType::kInt32, {1, 1, 4, 4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAre(1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9));
}

TEST(ConvIntegerKernel, GroupsStridesPaddingAndPerChannelZeroPoints) {
  // X uint8 [2, 4, 5, 6], W int8 [6, 2, 3, 3] in 2 groups, one zero point per output
  // channel, strides 2 x 1, pads (1, 0, 2, 1), dilation 1 x 2. Padding holds x_zero_point,
  // so it adds nothing. Expected: the definition, looped here.
  const int64_t n = 2, c = 4, h = 5, w = 6, m = 6, kh = 3, kw = 3, groups = 2;
  const int64_t stride_h = 2, stride_w = 1, dil_w = 2, pad_top = 1, pad_left = 0, pad_bottom = 2, pad_right = 1;
  const int64_t oh = (h + pad_top + pad_bottom - kh) / stride_h + 1;
  const int64_t ow = (w + pad_left + pad_right - ((kw - 1) * dil_w + 1)) / stride_w + 1;
  const std::vector<uint8_t> x = random_ints<uint8_t>(static_cast<size_t>(n * c * h * w), 0, 255, 3);
  const std::vector<int8_t> weights = random_ints<int8_t>(static_cast<size_t>(m * 2 * kh * kw), -128, 127, 4);
  const std::vector<int8_t> w_zero{0, -128, 127, 5, -5, 1};
  const int32_t x_zero = 131;
  std::vector<int32_t> expected;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t o = 0; o < m; ++o) {
      const int64_t group = o / (m / groups);
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xo = 0; xo < ow; ++xo) {
          int32_t sum = 0;
          for (int64_t ci = 0; ci < 2; ++ci) {
            for (int64_t i = 0; i < kh; ++i) {
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iy = y * stride_h - pad_top + i, ix = xo * stride_w - pad_left + j * dil_w;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const int32_t xv = x[static_cast<size_t>(((b * c + group * 2 + ci) * h + iy) * w + ix)] - x_zero;
                const int32_t wv = weights[static_cast<size_t>(((o * 2 + ci) * kh + i) * kw + j)] - w_zero[o];
                sum += xv * wv;
              }
            }
          }
          expected.push_back(sum);
        }
      }
    }
  }
  NodeRun run = run_node(
      {"ConvInteger",
       {Attribute::Int("group", groups), Attribute::Ints("strides", {stride_h, stride_w}),
        Attribute::Ints("dilations", {1, dil_w}), Attribute::Ints("pads", {pad_top, pad_left, pad_bottom, pad_right})},
       {u8({n, c, h, w}, x), i8({m, 2, kh, kw}, weights), u8({}, {static_cast<uint8_t>(x_zero)}), i8({m}, w_zero)},
       {{DType::kInt32, {n, m, oh, ow}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAreArray(expected));
}

TEST(ConvIntegerKernel, SamePaddingWithoutZeroPoints) {
  // auto_pad SAME_UPPER on a 1 x 3 input, kernel 1 x 2: the padding (0) goes at the end.
  NodeRun run = run_node({"ConvInteger",
                          {Attribute::String("auto_pad", "SAME_UPPER")},
                          {i8({1, 1, 1, 3}, {-1, 2, -3}), i8({1, 1, 1, 2}, {10, 1})},
                          {{DType::kInt32, {1, 1, 1, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAre(-8, 17, -30));
}

// ---- The fast paths against a reference loop ------------------------------------------------

/// An 8-bit tensor (int8 when `is_signed`, else uint8) holding `values`.
TestTensor q8(bool is_signed, std::vector<int64_t> shape, const std::vector<int32_t>& values) {
  if (is_signed) return i8(std::move(shape), std::vector<int8_t>(values.begin(), values.end()));
  return u8(std::move(shape), std::vector<uint8_t>(values.begin(), values.end()));
}

/// `count` values of an 8-bit type: random, or all the type's largest (`extreme` > 0) or
/// smallest (`extreme` < 0) value.
std::vector<int32_t> q8_values(bool is_signed, size_t count, uint32_t seed, int extreme = 0) {
  const int lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  if (extreme != 0) return std::vector<int32_t>(count, extreme > 0 ? hi : lo);
  return random_ints<int32_t>(count, lo, hi, seed);
}

/// One ConvInteger: 1 to 3 spatial dims, the last `rank` of each array (the others must
/// be 1, and no padding).
struct ConvCase {
  int rank = 2;
  int64_t batch = 1, channels = 1, out_channels = 1, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  std::array<int64_t, 3> pad_begin{0, 0, 0}, pad_end{0, 0, 0};
  bool x_signed = false, w_signed = false, per_channel = true;
  int x_extreme = 0, w_extreme = 0;  // see q8_values
  int32_t x_zero = 0;
  uint32_t seed = 1;
};

/// ConvInteger as ONNX defines it, one output at a time; the sums wrap as int32.
std::vector<int32_t> reference_conv(const ConvCase& k, const std::array<int64_t, 3>& out, const std::vector<int32_t>& x,
                                    const std::vector<int32_t>& w, const std::vector<int32_t>& w_zero) {
  const int64_t in_per_group = k.channels / k.groups, out_per_group = k.out_channels / k.groups;
  const int64_t in_size = k.in[0] * k.in[1] * k.in[2], taps = k.kernel[0] * k.kernel[1] * k.kernel[2];
  std::vector<int32_t> result;
  for (int64_t b = 0; b < k.batch; ++b) {
    for (int64_t o = 0; o < k.out_channels; ++o) {
      const int64_t group = o / out_per_group;
      const int32_t wz = w_zero[static_cast<size_t>(k.per_channel ? o : 0)];
      for (int64_t p = 0; p < out[0] * out[1] * out[2]; ++p) {
        const std::array<int64_t, 3> at{p / (out[1] * out[2]), p / out[2] % out[1], p % out[2]};
        uint32_t sum = 0;
        for (int64_t ci = 0; ci < in_per_group; ++ci) {
          for (int64_t t = 0; t < taps; ++t) {
            const std::array<int64_t, 3> tap{t / (k.kernel[1] * k.kernel[2]), t / k.kernel[2] % k.kernel[1],
                                             t % k.kernel[2]};
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < 3; ++d) {
              const int64_t i = at[d] * k.stride[d] - k.pad_begin[d] + tap[d] * k.dilation[d];
              inside = inside && i >= 0 && i < k.in[d];
              offset = offset * k.in[d] + i;
            }
            if (!inside) continue;
            const int32_t xv = x[static_cast<size_t>((b * k.channels + group * in_per_group + ci) * in_size + offset)];
            const int32_t wv = w[static_cast<size_t>((o * in_per_group + ci) * taps + t)];
            sum += static_cast<uint32_t>((xv - k.x_zero) * (wv - wz));
          }
        }
        result.push_back(static_cast<int32_t>(sum));
      }
    }
  }
  return result;
}

void expect_conv_matches_reference(const ConvCase& k) {
  std::array<int64_t, 3> out{};
  for (size_t d = 0; d < 3; ++d) {
    out[d] = (k.in[d] + k.pad_begin[d] + k.pad_end[d] - ((k.kernel[d] - 1) * k.dilation[d] + 1)) / k.stride[d] + 1;
  }
  const int64_t in_per_group = k.channels / k.groups;
  const int64_t taps = k.kernel[0] * k.kernel[1] * k.kernel[2];
  const std::vector<int32_t> x = q8_values(
      k.x_signed, static_cast<size_t>(k.batch * k.channels * k.in[0] * k.in[1] * k.in[2]), k.seed, k.x_extreme);
  const std::vector<int32_t> w =
      q8_values(k.w_signed, static_cast<size_t>(k.out_channels * in_per_group * taps), k.seed + 1, k.w_extreme);
  std::vector<int32_t> w_zero = q8_values(k.w_signed, static_cast<size_t>(k.per_channel ? k.out_channels : 1),
                                          k.seed + 2, k.w_extreme != 0 ? -k.w_extreme : 0);
  std::vector<int64_t> x_shape{k.batch, k.channels}, w_shape{k.out_channels, in_per_group},
      y_shape{k.batch, k.out_channels};
  std::vector<int64_t> kernel_shape, strides, dilations, pads_begin, pads_end;
  for (size_t d = static_cast<size_t>(3 - k.rank); d < 3; ++d) {
    x_shape.push_back(k.in[d]);
    w_shape.push_back(k.kernel[d]);
    y_shape.push_back(out[d]);
    strides.push_back(k.stride[d]);
    dilations.push_back(k.dilation[d]);
    pads_begin.push_back(k.pad_begin[d]);
    pads_end.push_back(k.pad_end[d]);
  }
  std::vector<int64_t> pads = pads_begin;
  pads.insert(pads.end(), pads_end.begin(), pads_end.end());
  const std::vector<int64_t> w_zero_shape =
      k.per_channel ? std::vector<int64_t>{k.out_channels} : std::vector<int64_t>{};
  NodeRun run = run_node({"ConvInteger",
                          {Attribute::Int("group", k.groups), Attribute::Ints("strides", strides),
                           Attribute::Ints("dilations", dilations), Attribute::Ints("pads", pads)},
                          {q8(k.x_signed, x_shape, x), q8(k.w_signed, w_shape, w), q8(k.x_signed, {}, {k.x_zero}),
                           q8(k.w_signed, w_zero_shape, w_zero)},
                          {{DType::kInt32, y_shape}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAreArray(reference_conv(k, out, x, w, w_zero)));
}

TEST(ConvIntegerKernel, OneByOneMatchesTheReference) {
  ConvCase k;  // 64 channels to 20 at every position, uint8 as onnx.quantize writes it
  k.channels = 64;
  k.out_channels = 20;
  k.in = {1, 9, 11};
  k.x_zero = 117;
  expect_conv_matches_reference(k);
  k.per_channel = false;  // 13 channels: not a multiple of the GEMM's step
  k.channels = 13;
  k.x_signed = k.w_signed = true;
  k.x_zero = -3;
  expect_conv_matches_reference(k);
}

TEST(ConvIntegerKernel, OneByOneStridedAndPaddedMatchesTheReference) {
  ConvCase k;
  k.channels = 5;
  k.out_channels = 3;
  k.in = {1, 7, 8};
  k.stride = {1, 2, 3};
  k.pad_begin = {0, 1, 2};
  k.pad_end = {0, 1, 0};
  k.x_zero = 200;
  expect_conv_matches_reference(k);
}

TEST(ConvIntegerKernel, GroupedPaddedAndDepthwiseMatchTheReference) {
  ConvCase k;
  k.channels = 12;
  k.out_channels = 9;
  k.groups = 3;
  k.in = {1, 6, 7};
  k.kernel = {1, 3, 3};
  k.pad_begin = k.pad_end = {0, 1, 1};
  k.x_signed = true;
  k.x_zero = 5;
  expect_conv_matches_reference(k);
  k.channels = k.out_channels = k.groups = 8;  // depthwise
  k.w_signed = true;
  k.seed = 7;
  expect_conv_matches_reference(k);
}

TEST(ConvIntegerKernel, StridedDilatedAndAsymmetricPaddingMatchTheReference) {
  ConvCase k;
  k.channels = 6;
  k.out_channels = 7;
  k.in = {1, 11, 13};
  k.kernel = {1, 3, 2};
  k.stride = {1, 2, 3};
  k.dilation = {1, 2, 1};
  k.pad_begin = {0, 2, 0};
  k.pad_end = {0, 1, 3};
  k.x_signed = k.w_signed = true;
  k.x_zero = -128;
  expect_conv_matches_reference(k);
  k.rank = 1;  // and along one dim, and three
  k.in = {1, 1, 29};
  k.kernel = {1, 1, 2};
  k.stride = {1, 1, 3};
  k.dilation = {1, 1, 2};
  k.pad_begin = {0, 0, 1};
  k.pad_end = {0, 0, 3};
  expect_conv_matches_reference(k);
  k.rank = 3;
  k.in = {5, 6, 7};
  k.kernel = {2, 2, 3};
  k.stride = {2, 1, 1};
  k.dilation = {1, 2, 1};
  k.pad_begin = {1, 0, 1};
  k.pad_end = {0, 1, 1};
  expect_conv_matches_reference(k);
}

TEST(ConvIntegerKernel, LongFiltersOfExtremeValuesMatchTheReference) {
  // 301 channels x 3 x 3 = 2709 products per output (beyond a GEMM block, not a multiple
  // of its step, many positions per chunk), each 255 x -255, far outside int16.
  ConvCase k;
  k.channels = 301;
  k.out_channels = 3;
  k.in = {1, 16, 20};
  k.kernel = {1, 3, 3};
  k.pad_begin = k.pad_end = {0, 1, 1};
  k.x_extreme = 1;  // x 255, x_zero 0
  k.w_extreme = 1;  // w 255, w_zero 0; then w 0, w_zero 255 below
  expect_conv_matches_reference(k);
  k.w_extreme = -1;
  expect_conv_matches_reference(k);
  k.x_extreme = k.w_extreme = 0;  // and random
  k.x_zero = 9;
  expect_conv_matches_reference(k);
}

/// MatMulInteger of A [m, k] int8 (a zero point per row) by B [k, n] uint8 (one per
/// column) against the definition; the sums wrap as int32.
void expect_matmul_matches_reference(int64_t m, int64_t n, int64_t k, int extreme) {
  const std::vector<int32_t> a = q8_values(true, static_cast<size_t>(m * k), 11, extreme);
  const std::vector<int32_t> b = q8_values(false, static_cast<size_t>(k * n), 12, -extreme);
  const std::vector<int32_t> a_zero = q8_values(true, static_cast<size_t>(m), 13, -extreme);
  const std::vector<int32_t> b_zero = q8_values(false, static_cast<size_t>(n), 14, extreme);
  std::vector<int32_t> expected;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      uint32_t sum = 0;
      for (int64_t q = 0; q < k; ++q) {
        sum += static_cast<uint32_t>((a[static_cast<size_t>(i * k + q)] - a_zero[static_cast<size_t>(i)]) *
                                     (b[static_cast<size_t>(q * n + j)] - b_zero[static_cast<size_t>(j)]));
      }
      expected.push_back(static_cast<int32_t>(sum));
    }
  }
  NodeRun run = run_node({"MatMulInteger",
                          {},
                          {q8(true, {m, k}, a), q8(false, {k, n}, b), q8(true, {m}, a_zero), q8(false, {n}, b_zero)},
                          {{DType::kInt32, {m, n}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAreArray(expected));
}

TEST(MatMulIntegerKernel, OddShapesAndLongRowsMatchTheReference) {
  expect_matmul_matches_reference(5, 7, 2100, 0);
  expect_matmul_matches_reference(9, 3, 17, 0);
  expect_matmul_matches_reference(3, 5, 2100, 1);  // (127 - -128) x (0 - 255) each
}

TEST(MatMulIntegerKernel, SumsBeyondInt32WrapAsInt32) {
  // 34000 products of 255 x -255: -2210850000, which int32 arithmetic wraps.
  expect_matmul_matches_reference(1, 2, 34000, 1);
}

// ---- QLinearConv, QLinearMatMul -----------------------------------------------------------

/// QLinearConv of X [1, 1, 1, 6] by two 1 x 1 filters of weight 1 (so the accumulator is
/// x, plus the bias), x_scale 1, w_scale per channel, y_scale 1, y_zero_point 0.
NodeRun qlinear_conv_identity(const std::vector<float>& w_scale, std::optional<TestTensor> bias) {
  return run_node(
      {"QLinearConv",
       {},
       {u8({1, 1, 1, 6}, {1, 3, 5, 7, 200, 255}), TestTensor::f32({}, {1}), u8({}, {0}), u8({2, 1, 1, 1}, {1, 1}),
        TestTensor::f32({2}, w_scale), u8({2}, {0, 0}), TestTensor::f32({}, {1}), u8({}, {0}), std::move(bias)},
       {{DType::kUInt8, {1, 2, 1, 6}}}});
}

TEST(QLinearConvKernel, RoundsHalvesToEvenAndSaturatesPerChannel) {
  // Channel 0: x * 0.5 = 0.5, 1.5, 2.5, 3.5, 100, 127.5 -> 0, 2, 2, 4, 100, 128.
  // Channel 1: x * 4 = 4, 12, 20, 28, 800, 1020 -> saturated to 255 past 255.
  NodeRun run = qlinear_conv_identity({0.5f, 4.0f}, std::nullopt);
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bytes, ElementsAre(0, 2, 2, 4, 100, 128, 4, 12, 20, 28, 255, 255));
}

TEST(QLinearConvKernel, AddsTheInt32BiasBeforeRequantizing) {
  // Channel 0: (x + 1) * 0.5 = 1, 2, 3, 4, 100.5, 128 -> 1, 2, 3, 4, 100, 128.
  // Channel 1: (x - 10) * 4 = -36, -28, -20, -12, 760, 980 -> 0, 0, 0, 0, 255, 255.
  NodeRun run = qlinear_conv_identity({0.5f, 4.0f}, TestTensor::i32({2}, {1, -10}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bytes, ElementsAre(1, 2, 3, 4, 100, 128, 0, 0, 0, 0, 255, 255));
}

TEST(QLinearConvKernel, Int8OutputSaturatesBothWays) {
  // acc = x - 0 over a 1 x 1 int8 filter of -1 (zero point 0): -x; y = -x * 2 + 10.
  NodeRun run =
      run_node({"QLinearConv",
                {},
                {i8({1, 1, 1, 4}, {-128, -3, 4, 127}), TestTensor::f32({}, {1}), i8({}, {0}), i8({1, 1, 1, 1}, {-1}),
                 TestTensor::f32({}, {2}), i8({}, {0}), TestTensor::f32({}, {1}), i8({}, {10})},
                {{DType::kInt8, {1, 1, 1, 4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<int8_t>(run.outputs[0]), ElementsAre(127, 16, 2, -128));
}

TEST(QLinearMatMulKernel, OnnxExample) {
  NodeRun run =
      run_node({"QLinearMatMul",
                {},
                {u8({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}), TestTensor::f32({1}, {0.0066f}), u8({1}, {113}),
                 u8({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}), TestTensor::f32({1}, {0.00705f}),
                 u8({1}, {114}), TestTensor::f32({1}, {0.0107f}), u8({1}, {118})},
                {{DType::kUInt8, {2, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bytes, ElementsAre(168, 115, 255, 1, 66, 151));
}

TEST(QLinearMatMulKernel, PerColumnScalesAndZeroPoints) {
  // A [1, 2] = (3, 5), B [2, 2] = identity + zero points (2, 0): the accumulator is (3, 5);
  // column scales 0.5 and 0.25 (a_scale 1, y_scale 1), zero point 1: 1.5 + 1 = 2.5 -> 2
  // (the zero point is added before rounding, half to even), 1.25 + 1 -> 2.
  NodeRun run = run_node({"QLinearMatMul",
                          {},
                          {i8({1, 2}, {3, 5}), TestTensor::f32({}, {1}), i8({}, {0}), i8({2, 2}, {3, 0, 2, 1}),
                           TestTensor::f32({2}, {0.5f, 0.25f}), i8({2}, {2, 0}), TestTensor::f32({}, {1}), i8({}, {1})},
                          {{DType::kInt8, {1, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<int8_t>(run.outputs[0]), ElementsAre(2, 2));
}

// ---- com.microsoft QLinearAdd, QLinearMul, QLinearGlobalAveragePool ----------------------
//
// Expected values: ONNX Runtime 1.30 (onnxruntime-node, CPU, one thread) on one-node
// models of these inputs, the generator NumPy's default_rng(7) (a: integers(0, 256,
// (2, 3, 4)), b: integers(0, 256, (3, 1)), and so on in the order below).

TEST(QLinearAddKernel, MatchesOnnxRuntimeWithBroadcasting) {
  NodeRun run = run_node({"com.microsoft.QLinearAdd",
                          {},
                          {u8({2, 3, 4}, {139, 74,  229, 241, 169, 65,  6,  160, 149, 106, 38,  175,
                                          188, 205, 175, 229, 98,  249, 10, 148, 95,  86,  147, 198}),
                           TestTensor::f32({}, {0.05f}), u8({}, {120}), u8({3, 1}, {66, 39, 106}),
                           TestTensor::f32({}, {0.02f}), u8({}, {130}), TestTensor::f32({}, {0.07f}), u8({}, {125})},
                          {{DType::kUInt8, {2, 3, 4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bytes, ElementsAre(120, 74, 185, 193, 134, 60, 18, 128, 139, 108, 60, 157, 155, 167, 146,
                                                185, 83, 191, 20, 119, 100, 94, 137, 174));
}

TEST(QLinearMulKernel, MatchesOnnxRuntimeInt8) {
  NodeRun run = run_node({"com.microsoft.QLinearMul",
                          {},
                          {i8({2, 3, 4}, {43,  -83, 39,  -71, -59, -47, -73, -114, 25,  50, 87, -52,
                                          -76, -89, 122, -56, 87,  -78, 33,  95,   -16, 44, 33, 105}),
                           TestTensor::f32({}, {0.05f}), i8({}, {-3}), i8({4}, {-90, -111, -39, -127}),
                           TestTensor::f32({}, {0.04f}), i8({}, {5}), TestTensor::f32({}, {0.09f}), i8({}, {2})},
                          {{DType::kInt8, {2, 3, 4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<int8_t>(run.outputs[0]),
              ElementsAre(-95, 127, -39, 127, 120, 115, 70, 127, -57, -128, -86, 127, 127, 127, -120, 127, -128, 127,
                          -33, -128, 29, -119, -33, -128));
}

TEST(QLinearGlobalAveragePoolKernel, MatchesOnnxRuntimeNchw) {
  NodeRun run = run_node(
      {"com.microsoft.QLinearGlobalAveragePool",
       {},
       {u8({1, 3, 5, 5}, {221, 6,   242, 127, 143, 6,   60,  210, 94,  25,  166, 33,  249, 189, 12,  204, 33,  57,  124,
                          30,  199, 149, 202, 119, 72,  220, 3,   209, 122, 136, 147, 77,  133, 82,  115, 87,  162, 230,
                          70,  71,  240, 62,  47,  184, 31,  34,  63,  65,  146, 197, 142, 253, 81,  133, 240, 113, 30,
                          247, 103, 122, 31,  19,  42,  129, 141, 136, 33,  149, 161, 0,   178, 141, 107, 35,  107}),
        TestTensor::f32({}, {0.03f}), u8({}, {100}), TestTensor::f32({}, {0.011f}), u8({}, {90})},
       {{DType::kUInt8, {1, 3, 1, 1}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bytes, ElementsAre(141, 137, 131));
}

TEST(QLinearGlobalAveragePoolKernel, MatchesOnnxRuntimeChannelsLast) {
  NodeRun run =
      run_node({"com.microsoft.QLinearGlobalAveragePool",
                {Attribute::Int("channels_last", 1)},
                {i8({2, 3, 3, 4},
                    {-56, -101, 89,  126, -29, -115, 67,   78,  -69, 100, 107, 74,  55,  -81,  -59, 51,  -46,  -93,
                     -57, 31,   -18, -7,  -51, -41,  -125, -2,  -84, 125, 105, 97,  -38, -9,   9,   -8,  -98,  -73,
                     -95, 37,   -41, 88,  101, 39,   -125, -87, -19, 75,  1,   91,  -65, -27,  79,  28,  -101, 92,
                     -35, -99,  15,  72,  -65, -117, -117, 52,  91,  -15, 62,  -41, -94, -119, 5,   -99, -67,  -92}),
                 TestTensor::f32({}, {0.03f}), i8({}, {-7}), TestTensor::f32({}, {0.02f}), i8({}, {3})},
                {{DType::kInt8, {2, 1, 1, 4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<int8_t>(run.outputs[0]), ElementsAre(-15, -21, -7, 74, -22, 47, -29, -40));
}

}  // namespace
}  // namespace plugrt::portable::testing
