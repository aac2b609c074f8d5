// SPDX-License-Identifier: Apache-2.0
// GridSample and RoiAlign (grid_sample.cc, roi_align.cc) against hand-computed results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr float kTolerance = 1e-5f;

const TestTensor kX2x2 = TestTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4});

NodeRun grid_sample(std::vector<Attribute> attrs, const std::vector<float>& points) {
  const auto count = static_cast<int64_t>(points.size() / 2);
  return run_node({"GridSample",
                   std::move(attrs),
                   {kX2x2, TestTensor::f32({1, 1, count, 2}, points)},
                   {f32_out({1, 1, 1, count})}});
}

TEST(GridSampleKernel, BilinearHitsPixelCentresAndBlendsBetween) {
  NodeRun run = grid_sample({}, {-0.5f, -0.5f, 0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f, 0.0f, 0.0f});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{1, 2, 3, 4, 2.5f}));
}

TEST(GridSampleKernel, NearestRoundsHalfToEven) {
  NodeRun run = grid_sample({Attribute::String("mode", "nearest")}, {0.0f, 0.0f});  // position (0.5, 0.5)
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1));
}

TEST(GridSampleKernel, PadsWithZerosOrTheBorder) {
  NodeRun zeros = grid_sample({}, {-1.0f, -1.0f});  // position (-0.5, -0.5): a quarter of pixel (0, 0)
  ASSERT_TRUE(zeros.ok()) << zeros.error;
  EXPECT_THAT(zeros.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{0.25f}));
  NodeRun border = grid_sample({Attribute::String("padding_mode", "border")}, {-1.0f, -1.0f});
  ASSERT_TRUE(border.ok()) << border.error;
  EXPECT_THAT(border.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{1.0f}));
  EXPECT_THAT(grid_sample({Attribute::String("mode", "area")}, {0.0f, 0.0f}).error, HasSubstr("mode 'area'"));
}

NodeRun roi_align(std::vector<Attribute> attrs) {
  return run_node({"RoiAlign",
                   std::move(attrs),
                   {TestTensor::f32({1, 1, 4, 4}, iota_floats(16, 1)), TestTensor::f32({1, 4}, {0, 0, 4, 4}),
                    TestTensor::i64({1}, {0})},
                   {f32_out({1, 1, 1, 1})}});
}

TEST(RoiAlignKernel, AveragesOrTakesTheMaximumOfItsSamples) {
  // Two samples a side: at 1 and 3 without the half-pixel shift, at 0.5 and 2.5 with it.
  NodeRun plain = roi_align(
      {Attribute::Int("sampling_ratio", 2), Attribute::String("coordinate_transformation_mode", "output_half_pixel")});
  ASSERT_TRUE(plain.ok()) << plain.error;
  EXPECT_THAT(plain.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{11.0f}));  // 6, 8, 14, 16
  NodeRun half = roi_align({Attribute::Int("sampling_ratio", 2)});
  ASSERT_TRUE(half.ok()) << half.error;
  EXPECT_THAT(half.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), std::vector<float>{8.5f}));  // 3.5, 5.5, 11.5, 13.5
  NodeRun max = roi_align({Attribute::Int("sampling_ratio", 2), Attribute::String("mode", "max"),
                           Attribute::String("coordinate_transformation_mode", "output_half_pixel")});
  ASSERT_TRUE(max.ok()) << max.error;
  EXPECT_THAT(max.outputs[0].floats(), Pointwise(FloatNear(kTolerance), std::vector<float>{16.0f}));
}

}  // namespace
}  // namespace plugrt::portable::testing
