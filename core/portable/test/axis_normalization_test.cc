// SPDX-License-Identifier: Apache-2.0
// InstanceNormalization, MeanVarianceNormalization and LpNormalization against
// hand-computed results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr float kTolerance = 1e-5f;

// ---- InstanceNormalization ------------------------------------------------------------

/// The ONNX example: x [1, 2, 1, 3], scale [1, 1.5], B [0, 1].
NodeSpec instance_norm_example() {
  return {"InstanceNormalization",
          {},
          {TestTensor::f32({1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4}), TestTensor::f32({2}, {1.0f, 1.5f}),
           TestTensor::f32({2}, {0, 1})},
          {f32_out({1, 2, 1, 3})}};
}

TEST(InstanceNormalizationKernel, NormalizesEachChannelOfEachSample) {
  NodeRun run = run_node(instance_norm_example());
  ASSERT_TRUE(run.ok()) << run.error;
  // Both channels have variance 2/3: (x - mean) / sqrt(2/3 + 1e-5) * scale + B.
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {-1.2247357f, 0.0f, 1.2247357f, -0.8371035f, 1.0f, 2.8371035f}));
}

TEST(InstanceNormalizationKernel, NormalizesGroupsAsGroupNormExportsThem) {
  // nn.GroupNorm exports as Reshape to [N, groups, -1], then this with unit scale.
  NodeRun run = run_node({"InstanceNormalization",
                          {Attribute::Float("epsilon", 0)},
                          {TestTensor::f32({2, 2, 2}, {1, 3, 10, 14, 0, 4, -2, 2}), TestTensor::f32({2}, {1, 1}),
                           TestTensor::f32({2}, {0, 0})},
                          {f32_out({2, 2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {-1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f}));
}

TEST(InstanceNormalizationKernel, UsesEpsilon) {
  NodeSpec spec = instance_norm_example();
  spec.attributes = {Attribute::Float("epsilon", 1.0f / 3.0f)};  // variance 2/3 + 1/3 = 1
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {-1.0f, 0.0f, 1.0f, -0.5f, 1.0f, 2.5f}));
}

TEST(InstanceNormalizationKernel, RefusesAScaleOfTheWrongLength) {
  NodeSpec spec = instance_norm_example();
  spec.inputs[1] = TestTensor::f32({3}, {1, 1, 1});
  EXPECT_THAT(run_node(spec).error, HasSubstr("scale has shape [3]; input [1, 2, 1, 3] needs [2]"));
}

TEST(InstanceNormalizationKernel, RefusesRankOne) {
  EXPECT_THAT(run_node({"InstanceNormalization",
                        {},
                        {TestTensor::f32({3}, {1, 2, 3}), TestTensor::f32({1}, {1}), TestTensor::f32({1}, {0})},
                        {f32_out({3})}})
                  .error,
              HasSubstr("input must have rank 2 or more"));
}

// ---- MeanVarianceNormalization --------------------------------------------------------

TEST(MeanVarianceNormalizationKernel, DefaultAxesNormalizeEachChannel) {
  // x [2, 2, 1, 1]: channel 0 holds 1 and 3, channel 1 holds 10 and 20.
  NodeRun run = run_node(
      {"MeanVarianceNormalization", {}, {TestTensor::f32({2, 2, 1, 1}, {1, 10, 3, 20})}, {f32_out({2, 2, 1, 1})}, 13});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {-1.0f, -1.0f, 1.0f, 1.0f}));
}

TEST(MeanVarianceNormalizationKernel, NormalizesTheGivenAxesAndMapsAConstantRowToZero) {
  NodeRun run = run_node({"MeanVarianceNormalization",
                          {Attribute::Ints("axes", {1})},
                          {TestTensor::f32({2, 3}, {1, 2, 3, 5, 5, 5})},
                          {f32_out({2, 3})},
                          13});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {-1.2247449f, 0.0f, 1.2247449f, 0.0f, 0.0f, 0.0f}));
}

TEST(MeanVarianceNormalizationKernel, RefusesAnAxisOutOfRange) {
  EXPECT_THAT(run_node({"MeanVarianceNormalization",
                        {Attribute::Ints("axes", {2})},
                        {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})},
                        {f32_out({2, 3})},
                        13})
                  .error,
              HasSubstr("axis 2 is out of range for input [2, 3]"));
}

// ---- LpNormalization ------------------------------------------------------------------

TEST(LpNormalizationKernel, L2AlongTheLastAxis) {
  NodeRun run = run_node({"LpNormalization", {}, {TestTensor::f32({2, 2}, {3, 4, 1, -1})}, {f32_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {0.6f, 0.8f, 0.70710677f, -0.70710677f}));
}

TEST(LpNormalizationKernel, L1AlongTheFirstAxis) {
  NodeRun run = run_node({"LpNormalization",
                          {Attribute::Int("axis", 0), Attribute::Int("p", 1)},
                          {TestTensor::f32({2, 2}, {3, 4, 1, -1})},
                          {f32_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {0.75f, 0.8f, 0.25f, -0.2f}));
}

TEST(LpNormalizationKernel, LeavesAZeroVectorZero) {
  NodeRun run = run_node({"LpNormalization", {}, {TestTensor::f32({1, 2}, {0, 0})}, {f32_out({1, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(0.0f), {0.0f, 0.0f}));
}

TEST(LpNormalizationKernel, RefusesP3) {
  EXPECT_THAT(
      run_node({"LpNormalization", {Attribute::Int("p", 3)}, {TestTensor::f32({2}, {1, 2})}, {f32_out({2})}}).error,
      HasSubstr("p must be 1 or 2; got 3"));
}

}  // namespace
}  // namespace plugrt::portable::testing
