// SPDX-License-Identifier: Apache-2.0
// Resize and Upsample against the ONNX operator examples.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

const TestTensor kX2x2 = TestTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4});
const TestTensor kX2x4 = TestTensor::f32({1, 1, 2, 4}, iota_floats(8, 1));
const TestTensor kX4x4 = TestTensor::f32({1, 1, 4, 4}, iota_floats(16, 1));

TestTensor scales(std::vector<float> values) {
  return TestTensor::f32({static_cast<int64_t>(values.size())}, values).as_constant();
}
TestTensor sizes(std::vector<int64_t> values) {
  return TestTensor::i64({static_cast<int64_t>(values.size())}, values).as_constant();
}

/// Resize (opset 13 layout: X, roi, scales, sizes) with these attributes.
NodeRun resize(std::vector<Attribute> attrs, const TestTensor& x, std::optional<TestTensor> scale_input,
               std::optional<TestTensor> size_input, std::vector<int64_t> out, std::optional<TestTensor> roi = {}) {
  return run_node({"Resize", std::move(attrs), {x, roi, scale_input, size_input}, {{DType::kFloat32, std::move(out)}}});
}

MATCHER_P(FloatsNear, expected, "") {
  return ::testing::ExplainMatchResult(Pointwise(FloatNear(1e-5f), expected), arg.floats(), result_listener);
}

// ---- nearest ---------------------------------------------------------------------------

TEST(ResizeKernel, MatchesTheOnnxNearestScaleExamples) {
  NodeRun up = resize({}, kX2x2, scales({1, 1, 2, 3}), {}, {1, 1, 4, 6});
  ASSERT_TRUE(up.ok()) << up.error;
  EXPECT_THAT(up.outputs[0].floats(),
              ElementsAreArray<float>({1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  NodeRun down = resize({}, kX2x4, scales({1, 1, 0.6f, 0.6f}), {}, {1, 1, 1, 2});
  ASSERT_TRUE(down.ok()) << down.error;
  EXPECT_THAT(down.outputs[0].floats(), ElementsAreArray<float>({1, 3}));
}

const std::vector<float> kCeilRows = {1, 2, 2, 3, 3, 4, 4, 4};  // 1..4 upsampled x2, then +4, +8, +12

std::vector<float> rows_of(const std::vector<float>& row, const std::vector<float>& offsets) {
  std::vector<float> out;
  for (float offset : offsets) {
    for (float value : row) out.push_back(value + offset);
  }
  return out;
}

TEST(ResizeKernel, MatchesTheOnnxNearestModeExamples) {
  NodeRun ceil = resize({Attribute::String("nearest_mode", "ceil")}, kX4x4, {}, sizes({1, 1, 8, 8}), {1, 1, 8, 8});
  ASSERT_TRUE(ceil.ok()) << ceil.error;
  EXPECT_THAT(ceil.outputs[0].floats(), ElementsAreArray(rows_of(kCeilRows, {0, 4, 4, 8, 8, 12, 12, 12})));
  NodeRun floor = resize({Attribute::String("nearest_mode", "floor"),
                          Attribute::String("coordinate_transformation_mode", "align_corners")},
                         kX4x4, {}, sizes({1, 1, 8, 8}), {1, 1, 8, 8});
  ASSERT_TRUE(floor.ok()) << floor.error;
  EXPECT_THAT(floor.outputs[0].floats(),
              ElementsAreArray(rows_of({1, 1, 1, 2, 2, 3, 3, 4}, {0, 0, 0, 4, 4, 8, 8, 12})));
  NodeRun prefer_ceil = resize({Attribute::String("nearest_mode", "round_prefer_ceil"),
                                Attribute::String("coordinate_transformation_mode", "asymmetric")},
                               kX4x4, {}, sizes({1, 1, 8, 8}), {1, 1, 8, 8});
  ASSERT_TRUE(prefer_ceil.ok()) << prefer_ceil.error;
  EXPECT_THAT(prefer_ceil.outputs[0].floats(), ElementsAreArray(rows_of(kCeilRows, {0, 4, 4, 8, 8, 12, 12, 12})));
  NodeRun tf = resize({Attribute::String("coordinate_transformation_mode", "tf_half_pixel_for_nn")}, kX4x4, {},
                      sizes({1, 1, 3, 2}), {1, 1, 3, 2});
  ASSERT_TRUE(tf.ok()) << tf.error;
  EXPECT_THAT(tf.outputs[0].floats(), ElementsAreArray<float>({6, 8, 10, 12, 14, 16}));
}

// ---- linear ----------------------------------------------------------------------------

TEST(ResizeKernel, MatchesTheOnnxLinearExamples) {
  const Attribute linear = Attribute::String("mode", "linear");
  NodeRun up = resize({linear}, kX2x2, scales({1, 1, 2, 2}), {}, {1, 1, 4, 4});
  ASSERT_TRUE(up.ok()) << up.error;
  EXPECT_THAT(up.outputs[0], FloatsNear(std::vector<float>({1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f,
                                                            3.25f, 3.5f, 3, 3.25f, 3.75f, 4})));
  NodeRun corners = resize({linear, Attribute::String("coordinate_transformation_mode", "align_corners")}, kX2x2,
                           scales({1, 1, 2, 2}), {}, {1, 1, 4, 4});
  ASSERT_TRUE(corners.ok()) << corners.error;
  const float third = 1.0f / 3.0f;
  EXPECT_THAT(corners.outputs[0],
              FloatsNear(std::vector<float>({1, 1 + third, 2 - third, 2, 2 - third, 2, 2 + third, 3 - third, 2 + third,
                                             3 - third, 3, 3 + third, 3, 3 + third, 4 - third, 4})));
  NodeRun down = resize({linear}, kX2x4, scales({1, 1, 0.6f, 0.6f}), {}, {1, 1, 1, 2});
  ASSERT_TRUE(down.ok()) << down.error;
  EXPECT_THAT(down.outputs[0], FloatsNear(std::vector<float>({2 + 2 * third, 4 + third})));
  NodeRun pytorch = resize({linear, Attribute::String("coordinate_transformation_mode", "pytorch_half_pixel")}, kX4x4,
                           {}, sizes({1, 1, 3, 1}), {1, 1, 3, 1});
  ASSERT_TRUE(pytorch.ok()) << pytorch.error;
  EXPECT_THAT(pytorch.outputs[0], FloatsNear(std::vector<float>({1 + 2 * third, 7, 12 + third})));
}

TEST(ResizeKernel, MatchesTheOnnxTfCropAndResizeExamples) {
  const std::vector<Attribute> attrs = {Attribute::String("mode", "linear"),
                                        Attribute::String("coordinate_transformation_mode", "tf_crop_and_resize")};
  NodeRun crop =
      resize(attrs, kX4x4, {}, sizes({1, 1, 3, 3}), {1, 1, 3, 3}, scales({0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}));
  ASSERT_TRUE(crop.ok()) << crop.error;
  EXPECT_THAT(crop.outputs[0], FloatsNear(std::vector<float>({7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f})));
  std::vector<Attribute> extrapolate = attrs;
  extrapolate.push_back(Attribute::Float("extrapolation_value", 10));
  NodeRun outside =
      resize(extrapolate, kX4x4, {}, sizes({1, 1, 3, 3}), {1, 1, 3, 3}, scales({0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}));
  ASSERT_TRUE(outside.ok()) << outside.error;
  EXPECT_THAT(outside.outputs[0], FloatsNear(std::vector<float>({7.6f, 10, 10, 12.4f, 10, 10, 10, 10, 10})));
}

TEST(ResizeKernel, ResizesManyPlanesInHeightAndWidthAsTheFormulaSays) {
  // Batch 2, 3 channels, 5x7 to 9x4 (up in height, down in width), half_pixel: every
  // element against ONNX's bilinear formula written out here.
  const int64_t n = 2, c = 3, h = 5, w = 7, oh = 9, ow = 4;
  std::vector<float> values(static_cast<size_t>(n * c * h * w));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 37) % 23) - 11.0f;
  NodeRun run = resize({Attribute::String("mode", "linear")}, TestTensor::f32({n, c, h, w}, values), {},
                       sizes({n, c, oh, ow}), {n, c, oh, ow});
  ASSERT_TRUE(run.ok()) << run.error;
  auto source = [](int64_t out, int64_t in, int64_t i, int64_t* lo, int64_t* hi, float* weight) {
    float position = (static_cast<float>(i) + 0.5f) * static_cast<float>(in) / static_cast<float>(out) - 0.5f;
    position = std::clamp(position, 0.0f, static_cast<float>(in - 1));
    *lo = static_cast<int64_t>(position);
    *hi = std::min(*lo + 1, in - 1);
    *weight = position - static_cast<float>(*lo);
  };
  std::vector<float> expected;
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const float* x = values.data() + plane * h * w;
    for (int64_t i = 0; i < oh; ++i) {
      int64_t y0, y1;
      float wy;
      source(oh, h, i, &y0, &y1, &wy);
      for (int64_t j = 0; j < ow; ++j) {
        int64_t x0, x1;
        float wx;
        source(ow, w, j, &x0, &x1, &wx);
        const float top = x[y0 * w + x0] * (1 - wx) + x[y0 * w + x1] * wx;
        const float bottom = x[y1 * w + x0] * (1 - wx) + x[y1 * w + x1] * wx;
        expected.push_back(top * (1 - wy) + bottom * wy);
      }
    }
  }
  EXPECT_THAT(run.outputs[0], FloatsNear(expected));
}

TEST(ResizeKernel, GivesOnnxRuntimesBitsForBilinearHalfPixel) {
  // 2x3 to 3x5, half_pixel: the expected values are ONNX Runtime 1.30's (CPU), to the
  // bit. Blending each row first, as a lerp, differs in the last bit at four of them
  // (1.70000005, -0.820000529, -2.50000024, -0.340001583).
  const TestTensor x = TestTensor::f32({1, 1, 2, 3}, {9.6f, -3.7f, 0.3f, 2.9f, 7.1f, -5.3f});
  NodeRun run = resize({Attribute::String("mode", "linear")}, x, {}, sizes({1, 1, 3, 5}), {1, 1, 3, 5});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              ElementsAreArray<float>({9.60000038f, 4.27999973f, -3.70000005f, -1.29999948f, 0.300000012f, 6.25f,
                                       4.42999983f, 1.69999993f, -0.820000648f, -2.5f, 2.9000001f, 4.57999992f,
                                       7.0999999f, -0.340001822f, -5.30000019f}));
}

TEST(ResizeKernel, InterpolatesTrilinearlyOnA3DVolume) {
  // A 2x2x2 volume doubled along every axis with align_corners: the centre of each
  // 3x3x3 block is the mean of the corners.
  NodeRun run = resize(
      {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "align_corners")},
      TestTensor::f32({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), {}, sizes({1, 1, 3, 3, 3}), {1, 1, 3, 3, 3});
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> y = run.outputs[0].floats();
  EXPECT_FLOAT_EQ(y[13], 3.5f);
  EXPECT_FLOAT_EQ(y[0], 0.0f);
  EXPECT_FLOAT_EQ(y[26], 7.0f);
  EXPECT_FLOAT_EQ(y[1], 0.5f);
}

// ---- older opsets ----------------------------------------------------------------------

TEST(ResizeKernel, UsesAsymmetricFloorInOpset10) {
  NodeRun run = run_node({"Resize", {}, {kX2x2, scales({1, 1, 2, 3})}, {{DType::kFloat32, {1, 1, 4, 6}}}, 10});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              ElementsAreArray<float>({1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
}

TEST(ResizeKernel, AcceptsAnEmptyScalesInputWithSizesInOpset11) {
  NodeRun run = run_node(
      {"Resize",
       {},
       {kX2x2, TestTensor::f32({0}, {}).as_constant(), TestTensor::f32({0}, {}).as_constant(), sizes({1, 1, 1, 1})},
       {{DType::kFloat32, {1, 1, 1, 1}}},
       11});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray<float>({1}));
}

TEST(UpsampleKernel, MatchesTheOnnxExamples) {
  NodeRun nearest = run_node(
      {"Upsample", {Attribute::Floats("scales", {1, 1, 2, 3})}, {kX2x2}, {{DType::kFloat32, {1, 1, 4, 6}}}, 7});
  ASSERT_TRUE(nearest.ok()) << nearest.error;
  EXPECT_THAT(nearest.outputs[0].floats(),
              ElementsAreArray<float>({1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  NodeRun linear = run_node({"Upsample",
                             {Attribute::String("mode", "linear")},
                             {kX2x2, scales({1, 1, 2, 2})},
                             {{DType::kFloat32, {1, 1, 4, 4}}},
                             9});
  ASSERT_TRUE(linear.ok()) << linear.error;
  EXPECT_THAT(linear.outputs[0],
              FloatsNear(std::vector<float>({1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 3, 3.5f, 4, 4, 3, 3.5f, 4, 4})));
}

// ---- refusals --------------------------------------------------------------------------

TEST(ResizeKernel, ReadsScalesGivenAtRunTime) {
  NodeRun run = resize({}, kX2x2, TestTensor::f32({4}, {1, 1, 2, 2}), {}, {1, 1, 4, 4});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(ResizeKernel, RefusesAmbiguousSizes) {
  EXPECT_THAT(resize({}, kX2x2, scales({1, 1, 2, 2}), sizes({1, 1, 4, 4}), {1, 1, 4, 4}).error,
              HasSubstr("exactly one of scales and sizes"));
  EXPECT_THAT(resize({}, kX2x2, scales({1, 2}), {}, {1, 1, 4, 4}).error, HasSubstr("one value per input dim"));
  EXPECT_THAT(resize({}, kX2x2, {}, sizes({1, 1, 4, 4}), {1, 1, 4, 5}).error,
              HasSubstr("but the inputs give [1, 1, 4, 4]"));
}

// ---- cubic -----------------------------------------------------------------------------

TEST(ResizeKernel, MatchesTheOnnxCubicUpsampleExample) {
  NodeRun run = resize({Attribute::String("mode", "cubic")}, kX4x4, scales({1, 1, 2, 2}), {}, {1, 1, 8, 8});
  ASSERT_TRUE(run.ok()) << run.error;
  const std::vector<float> y = run.outputs[0].floats();
  EXPECT_THAT(std::vector<float>(y.begin(), y.begin() + 16),
              Pointwise(FloatNear(1e-5f),
                        std::vector<float>{0.47265625f, 0.76953125f, 1.24609375f, 1.875f, 2.28125f, 2.91015625f,
                                           3.38671875f, 3.68359375f, 1.66015625f, 1.95703125f, 2.43359375f, 3.0625f,
                                           3.46875f, 4.09765625f, 4.57421875f, 4.87109375f}));
}

TEST(ResizeKernel, MatchesTheOnnxCubicExcludeOutsideExample) {
  NodeRun run = resize({Attribute::String("mode", "cubic"), Attribute::Float("cubic_coeff_a", -0.5f),
                        Attribute::Int("exclude_outside", 1)},
                       kX4x4, scales({1, 1, 0.8f, 0.8f}), {}, {1, 1, 3, 3});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(1e-5f), std::vector<float>{1.36812675f, 2.6695014f, 4.0133367f, 6.57362535f, 7.875f,
                                                             9.2188353f, 11.94896657f, 13.25034122f, 14.59417652f}));
}

TEST(ResizeKernel, CubicKeepsValuesOnInputIndices) {
  // Asymmetric with scale 1: every position is an input index, which takes that index alone.
  NodeRun run =
      resize({Attribute::String("mode", "cubic"), Attribute::String("coordinate_transformation_mode", "asymmetric")},
             kX2x4, scales({1, 1, 1, 1}), {}, {1, 1, 2, 4});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray(iota_floats(8, 1)));
}

TEST(ResizeKernel, RefusesUnsupportedModes) {
  EXPECT_THAT(resize({Attribute::String("mode", "lanczos")}, kX2x2, scales({1, 1, 2, 2}), {}, {1, 1, 4, 4}).error,
              HasSubstr("mode 'lanczos' is not supported"));
  EXPECT_THAT(resize({Attribute::String("coordinate_transformation_mode", "half_pixel_symmetric")}, kX2x2,
                     scales({1, 1, 2, 2}), {}, {1, 1, 4, 4})
                  .error,
              HasSubstr("coordinate_transformation_mode 'half_pixel_symmetric' is not supported"));
  EXPECT_THAT(resize({Attribute::String("coordinate_transformation_mode", "tf_crop_and_resize")}, kX2x2,
                     scales({1, 1, 2, 2}), {}, {1, 1, 4, 4})
                  .error,
              HasSubstr("needs a constant float32 roi"));
}

}  // namespace
}  // namespace plugrt::portable::testing
