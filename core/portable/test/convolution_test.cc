// SPDX-License-Identifier: Apache-2.0
// Conv and ConvTranspose against the ONNX operator examples, hand-computed cases and a
// naive direct loop on random data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-4 * (1.0 + std::fabs(expected[i]))) << "at element " << i;
  }
}

/// A convolution's parameters; spatial vectors have one value per spatial dim (1 to 3).
struct ConvCase {
  int64_t batch = 1, channels = 1, filters = 1, group = 1;
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, output_padding;
  bool bias = true;

  size_t rank() const { return in.size(); }
  /// Dim d of a 3-D view, the missing leading dims being 1 (0 for pads).
  static int64_t at(const std::vector<int64_t>& v, int d, size_t rank, int64_t fallback) {
    const int index = d - (3 - static_cast<int>(rank));
    return index < 0 ? fallback : v[static_cast<size_t>(index)];
  }
  std::array<int64_t, 3> view(const std::vector<int64_t>& v, int64_t fallback) const {
    return {at(v, 0, rank(), fallback), at(v, 1, rank(), fallback), at(v, 2, rank(), fallback)};
  }
  std::vector<int64_t> conv_out() const {
    std::vector<int64_t> out;
    for (size_t d = 0; d < rank(); ++d) {
      out.push_back((in[d] + pad_begin[d] + pad_end[d] - ((kernel[d] - 1) * dilation[d] + 1)) / stride[d] + 1);
    }
    return out;
  }
  std::vector<int64_t> transpose_out() const {
    std::vector<int64_t> out;
    for (size_t d = 0; d < rank(); ++d) {
      out.push_back(stride[d] * (in[d] - 1) + output_padding[d] + (kernel[d] - 1) * dilation[d] + 1 - pad_begin[d] -
                    pad_end[d]);
    }
    return out;
  }
  std::vector<Attribute> attributes() const {
    std::vector<int64_t> pads = pad_begin;
    pads.insert(pads.end(), pad_end.begin(), pad_end.end());
    std::vector<Attribute> attrs = {Attribute::Int("group", group), Attribute::Ints("strides", stride),
                                    Attribute::Ints("dilations", dilation), Attribute::Ints("pads", pads),
                                    Attribute::Ints("kernel_shape", kernel)};
    if (!output_padding.empty()) attrs.push_back(Attribute::Ints("output_padding", output_padding));
    return attrs;
  }
};

std::vector<int64_t> concat(std::vector<int64_t> head, const std::vector<int64_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

int64_t product(const std::array<int64_t, 3>& dims) { return dims[0] * dims[1] * dims[2]; }

/// Conv by its definition: every output sums input x weight over channels and taps.
std::vector<float> naive_conv(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& b) {
  const auto in = c.view(c.in, 1), k = c.view(c.kernel, 1), s = c.view(c.stride, 1), d = c.view(c.dilation, 1);
  const auto p = c.view(c.pad_begin, 0), out = c.view(c.conv_out(), 1);
  const int64_t cg = c.channels / c.group, mg = c.filters / c.group;
  std::vector<float> y;
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t m = 0; m < c.filters; ++m) {
      for (int64_t oz = 0; oz < out[0]; ++oz) {
        for (int64_t oy = 0; oy < out[1]; ++oy) {
          for (int64_t ox = 0; ox < out[2]; ++ox) {
            double sum = c.bias ? b[static_cast<size_t>(m)] : 0.0;
            for (int64_t ci = 0; ci < cg; ++ci) {
              const int64_t channel = m / mg * cg + ci;
              for (int64_t kz = 0; kz < k[0]; ++kz) {
                for (int64_t ky = 0; ky < k[1]; ++ky) {
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    const int64_t iz = oz * s[0] - p[0] + kz * d[0], iy = oy * s[1] - p[1] + ky * d[1],
                                  ix = ox * s[2] - p[2] + kx * d[2];
                    if (iz < 0 || iy < 0 || ix < 0 || iz >= in[0] || iy >= in[1] || ix >= in[2]) continue;
                    sum +=
                        x[static_cast<size_t>((((n * c.channels + channel) * in[0] + iz) * in[1] + iy) * in[2] + ix)] *
                        w[static_cast<size_t>((((m * cg + ci) * k[0] + kz) * k[1] + ky) * k[2] + kx)];
                  }
                }
              }
            }
            y.push_back(static_cast<float>(sum));
          }
        }
      }
    }
  }
  return y;
}

/// ConvTranspose by its definition: every input scatters input x weight to the outputs
/// position * stride + tap * dilation - pad_begin.
std::vector<float> naive_conv_transpose(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                                        const std::vector<float>& b) {
  const auto in = c.view(c.in, 1), k = c.view(c.kernel, 1), s = c.view(c.stride, 1), d = c.view(c.dilation, 1);
  const auto p = c.view(c.pad_begin, 0), out = c.view(c.transpose_out(), 1);
  const int64_t cg = c.channels / c.group, mg = c.filters / c.group;
  std::vector<double> y(static_cast<size_t>(c.batch * c.filters * product(out)));
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t m = 0; m < c.filters; ++m) {
      const size_t plane = static_cast<size_t>((n * c.filters + m) * product(out));
      for (size_t i = 0; i < static_cast<size_t>(product(out)); ++i)
        y[plane + i] = c.bias ? b[static_cast<size_t>(m)] : 0.0;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const int64_t channel = m / mg * cg + ci;
        for (int64_t iz = 0; iz < in[0]; ++iz)
          for (int64_t iy = 0; iy < in[1]; ++iy)
            for (int64_t ix = 0; ix < in[2]; ++ix)
              for (int64_t kz = 0; kz < k[0]; ++kz)
                for (int64_t ky = 0; ky < k[1]; ++ky)
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    const int64_t oz = iz * s[0] - p[0] + kz * d[0], oy = iy * s[1] - p[1] + ky * d[1],
                                  ox = ix * s[2] - p[2] + kx * d[2];
                    if (oz < 0 || oy < 0 || ox < 0 || oz >= out[0] || oy >= out[1] || ox >= out[2]) continue;
                    y[plane + static_cast<size_t>((oz * out[1] + oy) * out[2] + ox)] +=
                        x[static_cast<size_t>((((n * c.channels + channel) * in[0] + iz) * in[1] + iy) * in[2] + ix)] *
                        w[static_cast<size_t>((((channel * mg + m % mg) * k[0] + kz) * k[1] + ky) * k[2] + kx)];
                  }
      }
    }
  }
  return std::vector<float>(y.begin(), y.end());
}

/// Runs `c` as Conv (or ConvTranspose) on random data and compares with the naive loop.
void check_random(const ConvCase& c, bool transposed, uint32_t seed) {
  int64_t in_size = 1, k_size = 1;
  for (size_t d = 0; d < c.rank(); ++d) in_size *= c.in[d], k_size *= c.kernel[d];
  const std::vector<float> x = random_floats(static_cast<size_t>(c.batch * c.channels * in_size), seed);
  const std::vector<float> w = random_floats(static_cast<size_t>(c.filters * c.channels / c.group * k_size), seed + 1);
  const std::vector<float> b = random_floats(static_cast<size_t>(c.filters), seed + 2);
  const std::vector<int64_t> w_shape = transposed ? concat({c.channels, c.filters / c.group}, c.kernel)
                                                  : concat({c.filters, c.channels / c.group}, c.kernel);
  const std::vector<int64_t> out = concat({c.batch, c.filters}, transposed ? c.transpose_out() : c.conv_out());
  NodeSpec spec{transposed ? "ConvTranspose" : "Conv",
                c.attributes(),
                {TestTensor::f32(concat({c.batch, c.channels}, c.in), x), TestTensor::f32(w_shape, w).as_constant()},
                {{DType::kFloat32, out}}};
  if (c.bias) spec.inputs.push_back(TestTensor::f32({c.filters}, b).as_constant());
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  expect_close(run.outputs[0].floats(), transposed ? naive_conv_transpose(c, x, w, b) : naive_conv(c, x, w, b));
}

// ---- Conv ------------------------------------------------------------------------------

TEST(ConvKernel, MatchesTheOnnxExampleWithPadding) {
  NodeRun run = run_node(
      {"Conv",
       {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("pads", {1, 1, 1, 1})},
       {TestTensor::f32({1, 1, 5, 5}, iota_floats(25)), TestTensor::f32({1, 1, 3, 3}, std::vector<float>(9, 1))},
       {{DType::kFloat32, {1, 1, 5, 5}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              ElementsAreArray<float>({12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                       117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
}

TEST(ConvKernel, MatchesTheOnnxExampleWithoutPadding) {
  NodeRun run = run_node(
      {"Conv",
       {},
       {TestTensor::f32({1, 1, 5, 5}, iota_floats(25)), TestTensor::f32({1, 1, 3, 3}, std::vector<float>(9, 1))},
       {{DType::kFloat32, {1, 1, 3, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray<float>({54, 63, 72, 99, 108, 117, 144, 153, 162}));
}

TEST(ConvKernel, MatchesTheOnnxExampleWithStrides) {
  NodeRun run = run_node(
      {"Conv",
       {Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Ints("strides", {2, 2})},
       {TestTensor::f32({1, 1, 7, 5}, iota_floats(35)), TestTensor::f32({1, 1, 3, 3}, std::vector<float>(9, 1))},
       {{DType::kFloat32, {1, 1, 4, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              ElementsAreArray<float>({12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124}));
}

TEST(ConvKernel, MatchesTheOnnxExampleWithAutoPadSameLower) {
  NodeRun run = run_node(
      {"Conv",
       {Attribute::String("auto_pad", "SAME_LOWER"), Attribute::Ints("strides", {2, 2})},
       {TestTensor::f32({1, 1, 5, 5}, iota_floats(25)), TestTensor::f32({1, 1, 3, 3}, std::vector<float>(9, 1))},
       {{DType::kFloat32, {1, 1, 3, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray<float>({12, 27, 24, 63, 108, 81, 72, 117, 84}));
}

TEST(ConvKernel, Convolves1DWithBiasAndSameUpper) {
  // x = [1, 2, 3, 4], w = [1, 0, -1], SAME_UPPER pads 1 each side: y[i] = x[i-1] - x[i+1] + 10.
  NodeRun run = run_node(
      {"Conv",
       {Attribute::String("auto_pad", "SAME_UPPER")},
       {TestTensor::f32({1, 1, 4}, {1, 2, 3, 4}), TestTensor::f32({1, 1, 3}, {1, 0, -1}), TestTensor::f32({1}, {10})},
       {{DType::kFloat32, {1, 1, 4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray<float>({8, 8, 8, 13}));
}

TEST(ConvKernel, MatchesANaiveLoopOnAGroupedDilatedStridedCase) {
  ConvCase c;
  c.channels = 8, c.filters = 16, c.group = 2;
  c.in = {13, 11}, c.kernel = {3, 3}, c.stride = {2, 2}, c.dilation = {2, 2}, c.pad_begin = {1, 1}, c.pad_end = {1, 1};
  check_random(c, false, 1);
}

TEST(ConvKernel, MatchesANaiveLoopAcrossSeveralIm2colChunks) {
  ConvCase c;
  c.batch = 2, c.channels = 64, c.filters = 10;
  c.in = {30, 31}, c.kernel = {3, 3}, c.stride = {1, 1}, c.dilation = {1, 1}, c.pad_begin = {1, 0}, c.pad_end = {2, 1};
  check_random(c, false, 2);
}

TEST(ConvKernel, MatchesANaiveLoopDepthwiseWithAMultiplier) {
  ConvCase c;
  c.batch = 2, c.channels = 3, c.filters = 6, c.group = 3;
  c.in = {9, 10}, c.kernel = {3, 2}, c.stride = {2, 1}, c.dilation = {1, 2}, c.pad_begin = {2, 0}, c.pad_end = {0, 3};
  check_random(c, false, 3);
}

TEST(ConvKernel, MatchesANaiveLoopPointwise) {
  ConvCase c;
  c.channels = 6, c.filters = 5, c.group = 1, c.bias = false;
  c.in = {7, 9}, c.kernel = {1, 1}, c.stride = {1, 1}, c.dilation = {1, 1}, c.pad_begin = {0, 0}, c.pad_end = {0, 0};
  check_random(c, false, 4);
}

TEST(ConvKernel, MatchesANaiveLoopIn1DAnd3D) {
  ConvCase one;
  one.channels = 4, one.filters = 6, one.group = 2;
  one.in = {17}, one.kernel = {4}, one.stride = {3}, one.dilation = {1}, one.pad_begin = {2}, one.pad_end = {1};
  check_random(one, false, 5);
  ConvCase three;
  three.channels = 3, three.filters = 4;
  three.in = {5, 6, 7}, three.kernel = {2, 3, 3}, three.stride = {1, 2, 1}, three.dilation = {2, 1, 1};
  three.pad_begin = {1, 1, 0}, three.pad_end = {0, 1, 2};
  check_random(three, false, 6);
}

TEST(ConvKernel, RefusesAKernelShapeThatDisagreesWithW) {
  NodeRun run =
      run_node({"Conv",
                {Attribute::Ints("kernel_shape", {2, 2})},
                {TestTensor::f32({1, 1, 5, 5}, iota_floats(25)), TestTensor::f32({1, 1, 3, 3}, iota_floats(9))},
                {{DType::kFloat32, {1, 1, 3, 3}}}});
  EXPECT_THAT(run.error, HasSubstr("kernel_shape does not match"));
}

TEST(ConvKernel, RefusesAWrongOutputShape) {
  NodeRun run =
      run_node({"Conv",
                {},
                {TestTensor::f32({1, 1, 5, 5}, iota_floats(25)), TestTensor::f32({1, 1, 3, 3}, iota_floats(9))},
                {{DType::kFloat32, {1, 1, 5, 5}}}});
  EXPECT_THAT(run.error, HasSubstr("output 0 has shape [1, 1, 5, 5], but the inputs give [1, 1, 3, 3]"));
}

TEST(ConvKernel, RefusesBadAttributes) {
  auto run_with = [](std::vector<Attribute> attrs) {
    return run_node({"Conv",
                     std::move(attrs),
                     {TestTensor::f32({1, 4, 5, 5}, iota_floats(100)), TestTensor::f32({2, 4, 3, 3}, iota_floats(72))},
                     {{DType::kFloat32, {1, 2, 3, 3}}}})
        .error;
  };
  EXPECT_THAT(run_with({Attribute::String("auto_pad", "SAME")}), HasSubstr("auto_pad 'SAME' is not"));
  EXPECT_THAT(run_with({Attribute::Int("group", 3)}), HasSubstr("group 3 does not divide"));
  EXPECT_THAT(run_with({Attribute::Ints("strides", {0, 1})}), HasSubstr("strides has value 0"));
  EXPECT_THAT(run_with({Attribute::Ints("pads", {1, 1})}), HasSubstr("pads has 2 values, expected 4"));
  EXPECT_THAT(run_with({Attribute::String("auto_pad", "VALID"), Attribute::Ints("pads", {1, 1, 1, 1})}),
              HasSubstr("pads cannot be given together with auto_pad"));
}

// ---- ConvTranspose ---------------------------------------------------------------------

const std::vector<float> kX3x3 = {0, 1, 2, 3, 4, 5, 6, 7, 8};

TEST(ConvTransposeKernel, MatchesTheOnnxExample) {
  NodeRun run =
      run_node({"ConvTranspose",
                {},
                {TestTensor::f32({1, 1, 3, 3}, kX3x3), TestTensor::f32({1, 2, 3, 3}, std::vector<float>(18, 1))},
                {{DType::kFloat32, {1, 2, 5, 5}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> plane = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                    27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<float> expected = plane;
  expected.insert(expected.end(), plane.begin(), plane.end());
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray(expected));
}

TEST(ConvTransposeKernel, MatchesTheOnnxExampleIn1D) {
  NodeRun run = run_node({"ConvTranspose",
                          {},
                          {TestTensor::f32({1, 1, 3}, {0, 1, 2}), TestTensor::f32({1, 2, 3}, std::vector<float>(6, 1))},
                          {{DType::kFloat32, {1, 2, 5}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray<float>({0, 1, 3, 3, 2, 0, 1, 3, 3, 2}));
}

TEST(ConvTransposeKernel, MatchesTheOnnxExampleWithPads) {
  NodeRun run =
      run_node({"ConvTranspose",
                {Attribute::Ints("strides", {3, 2}), Attribute::Ints("pads", {1, 2, 1, 2})},
                {TestTensor::f32({1, 1, 3, 3}, kX3x3), TestTensor::f32({1, 2, 3, 3}, std::vector<float>(18, 1))},
                {{DType::kFloat32, {1, 2, 7, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> plane = {1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
  std::vector<float> expected = plane;
  expected.insert(expected.end(), plane.begin(), plane.end());
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray(expected));
}

// The ONNX output_shape and output_padding examples give the same 10 x 8 output.
const std::vector<float> kStrided10x8 = {0,  0, 1, 1, 3, 2, 2,  0, 0,  0, 1,  1, 3,  2, 2, 0, 0, 0, 1,  1,
                                         3,  2, 2, 0, 3, 3, 7,  4, 9,  5, 5,  0, 3,  3, 7, 4, 9, 5, 5,  0,
                                         3,  3, 7, 4, 9, 5, 5,  0, 6,  6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7,
                                         15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8,  0, 0,  0, 0, 0, 0, 0, 0,  0};

TEST(ConvTransposeKernel, MatchesTheOnnxExamplesWithOutputShapeAndOutputPadding) {
  for (const Attribute& size : {Attribute::Ints("output_shape", {10, 8}), Attribute::Ints("output_padding", {1, 1})}) {
    NodeRun run =
        run_node({"ConvTranspose",
                  {Attribute::Ints("strides", {3, 2}), size},
                  {TestTensor::f32({1, 1, 3, 3}, kX3x3), TestTensor::f32({1, 2, 3, 3}, std::vector<float>(18, 1))},
                  {{DType::kFloat32, {1, 2, 10, 8}}}});
    ASSERT_TRUE(run.ok()) << run.error;
    std::vector<float> expected = kStrided10x8;
    expected.insert(expected.end(), kStrided10x8.begin(), kStrided10x8.end());
    EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray(expected)) << size.name;
  }
}

TEST(ConvTransposeKernel, MatchesTheOnnxExampleWithAutoPadSameUpper) {
  NodeRun run =
      run_node({"ConvTranspose",
                {Attribute::String("auto_pad", "SAME_UPPER"), Attribute::Ints("strides", {2, 2})},
                {TestTensor::f32({1, 1, 3, 3}, kX3x3), TestTensor::f32({1, 2, 3, 3}, std::vector<float>(18, 1))},
                {{DType::kFloat32, {1, 2, 6, 6}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> plane = {0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
                                    3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8};
  const std::vector<float> y = run.outputs[0].floats();
  EXPECT_THAT(std::vector<float>(y.begin(), y.begin() + 36), ElementsAreArray(plane));
  EXPECT_THAT(std::vector<float>(y.begin() + 36, y.end()), ElementsAreArray(plane));
}

TEST(ConvTransposeKernel, MatchesANaiveLoopOnAGroupedDilatedStridedCase) {
  ConvCase c;
  c.batch = 2, c.channels = 6, c.filters = 4, c.group = 2;
  c.in = {5, 7}, c.kernel = {3, 2}, c.stride = {2, 3}, c.dilation = {2, 1}, c.pad_begin = {1, 0}, c.pad_end = {2, 1};
  c.output_padding = {1, 2};
  check_random(c, true, 7);
}

TEST(ConvTransposeKernel, MatchesANaiveLoopAcrossSeveralChunks) {
  ConvCase c;
  c.channels = 5, c.filters = 48;
  c.in = {40, 41}, c.kernel = {3, 3}, c.stride = {1, 2}, c.dilation = {1, 1}, c.pad_begin = {1, 1}, c.pad_end = {1, 0};
  c.output_padding = {0, 1};
  check_random(c, true, 8);
}

TEST(ConvTransposeKernel, RefusesWeightsOfTheWrongChannelCount) {
  NodeRun run =
      run_node({"ConvTranspose",
                {},
                {TestTensor::f32({1, 2, 3, 3}, iota_floats(18)), TestTensor::f32({1, 2, 3, 3}, iota_floats(18))},
                {{DType::kFloat32, {1, 2, 5, 5}}}});
  EXPECT_THAT(run.error, HasSubstr("its first dim must be the 2 input channels"));
}

TEST(ConvTransposeKernel, RefusesAWrongOutputShape) {
  NodeRun run = run_node({"ConvTranspose",
                          {Attribute::Ints("strides", {2, 2})},
                          {TestTensor::f32({1, 1, 3, 3}, kX3x3), TestTensor::f32({1, 1, 3, 3}, kX3x3)},
                          {{DType::kFloat32, {1, 1, 6, 6}}}});
  EXPECT_THAT(run.error, HasSubstr("but the inputs give [1, 1, 7, 7]"));
}

}  // namespace
}  // namespace plugrt::portable::testing
