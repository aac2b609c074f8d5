// SPDX-License-Identifier: Apache-2.0
// Normalization kernels against known results.
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

// ---- LRN ------------------------------------------------------------------------------

TEST(LrnKernel, NormalizesOverNeighbouringChannels) {
  // size 3: each channel sums the squares of itself and the channels on either side.
  NodeRun run = run_node(
      {"LRN", {Attribute::Int("size", 3)}, {TestTensor::f32({1, 4, 1, 1}, {1, 2, 3, 4})}, {f32_out({1, 4, 1, 1})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {0.99987502f, 1.99930029f, 2.99782684f, 3.99750182f}));
  EXPECT_THAT(run_node({"LRN", {}, {TestTensor::f32({1, 4, 1, 1}, {1, 2, 3, 4})}, {f32_out({1, 4, 1, 1})}}).error,
              HasSubstr("'size' attribute is required"));
}

// ---- BatchNormalization ---------------------------------------------------------------

/// The ONNX example: X [1, 2, 1, 3], two channels.
NodeSpec batch_norm_example() {
  return {"BatchNormalization",
          {},
          {TestTensor::f32({1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4}), TestTensor::f32({2}, {1.0f, 1.5f}),
           TestTensor::f32({2}, {0, 1}), TestTensor::f32({2}, {0, 3}), TestTensor::f32({2}, {1, 1.5f})},
          {f32_out({1, 2, 1, 3})}};
}

TEST(BatchNormalizationKernel, NormalizesEachChannel) {
  NodeRun run = run_node(batch_norm_example());
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {-0.999995f, 0.0f, 0.999995f, -0.22474079f, 1.0f, 2.2247408f}));
}

TEST(BatchNormalizationKernel, UsesEpsilon) {
  NodeSpec spec = batch_norm_example();
  spec.attributes = {Attribute::Float("epsilon", 3.0f)};  // var + 3: 4 and 4.5
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  const float c1 = 1.5f / 2.1213203f;  // scale / sqrt(4.5)
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {-0.5f, 0.0f, 0.5f, 1 - c1, 1.0f, 1 + c1}));
}

TEST(BatchNormalizationKernel, AcceptsConstantParametersAndA1DInput) {
  NodeRun run = run_node({"BatchNormalization",
                          {},
                          {TestTensor::f32({3}, {1, 2, 3}), TestTensor::f32({1}, {2}).as_constant(),
                           TestTensor::f32({1}, {1}).as_constant(), TestTensor::f32({1}, {2}).as_constant(),
                           TestTensor::f32({1}, {1}).as_constant()},
                          {f32_out({3})},
                          15});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(1e-4f), {-1.0f, 1.0f, 3.0f}));
}

TEST(BatchNormalizationKernel, NonSpatialInOpset7HasParametersPerElement) {
  NodeRun run = run_node({"BatchNormalization",
                          {Attribute::Int("spatial", 0), Attribute::Float("epsilon", 0)},
                          {TestTensor::f32({2, 2}, {1, 2, 3, 4}), TestTensor::f32({2}, {1, 2}),
                           TestTensor::f32({2}, {0, 10}), TestTensor::f32({2}, {1, 1}), TestTensor::f32({2}, {4, 1})},
                          {f32_out({2, 2})},
                          7});
  ASSERT_TRUE(run.ok()) << run.error;
  // Element (n, c): (x - 1) * scale[c] / sqrt(var[c]) + B[c].
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {0.0f, 12.0f, 1.0f, 16.0f}));
}

TEST(BatchNormalizationKernel, TrainingModeUsesTheBatchStatistics) {
  // Channel 0 holds -1, 0, 1 and channel 1 holds 2, 3, 4: means 0 and 3, variances 2/3.
  NodeSpec spec = batch_norm_example();
  spec.attributes = {Attribute::Int("training_mode", 1)};
  spec.outputs.push_back(f32_out({2}));
  spec.outputs.push_back(f32_out({2}));
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {-1.2247357f, 0.0f, 1.2247357f, -0.8371035f, 1.0f, 2.8371035f}));
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {0.0f, 3.0f}));  // 0.9 input + 0.1 batch
  EXPECT_THAT(run.outputs[2].floats(), Pointwise(FloatNear(kTolerance), {0.9666667f, 1.4166667f}));
}

TEST(BatchNormalizationKernel, RefusesTrainingModeBeforeOpset14) {
  NodeSpec spec = batch_norm_example();
  spec.attributes = {Attribute::Int("training_mode", 1)};
  spec.opset = 9;
  EXPECT_THAT(run_node(spec).error, HasSubstr("training_mode=1 needs opset 14 or later"));
}

TEST(BatchNormalizationKernel, RefusesTrainingOutputs) {
  NodeSpec spec = batch_norm_example();
  spec.outputs.push_back(f32_out({2}));
  spec.outputs.push_back(f32_out({2}));
  EXPECT_THAT(run_node(spec).error, HasSubstr("output 1 (a training statistic) must be absent"));
}

TEST(BatchNormalizationKernel, RefusesAMismatchedParameterShape) {
  NodeSpec spec = batch_norm_example();
  spec.inputs[4] = TestTensor::f32({3}, {1, 1, 1});
  EXPECT_THAT(run_node(spec).error, HasSubstr("input_var has shape [3]; X [1, 2, 1, 3] needs [2]"));
}

TEST(BatchNormalizationKernel, RefusesInt64) {
  NodeSpec spec = batch_norm_example();
  spec.inputs[1] = TestTensor::i64({2}, {1, 1});
  EXPECT_THAT(run_node(spec).error, HasSubstr("input 1 is int64, expected float32"));
}

// ---- LayerNormalization ---------------------------------------------------------------

/// X [2, 3] normalized over the last axis, with scale and bias.
NodeSpec layer_norm_example() {
  return {"LayerNormalization",
          {},
          {TestTensor::f32({2, 3}, {1, 2, 3, 4, 6, 8}), TestTensor::f32({3}, {1, 2, 0.5f}),
           TestTensor::f32({3}, {0, 1, -1})},
          {f32_out({2, 3})}};
}

TEST(LayerNormalizationKernel, NormalizesTheLastAxis) {
  NodeRun run = run_node(layer_norm_example());
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {-1.2247357f, 1.0f, -0.38763216f, -1.2247426f, 1.0f, -0.38762871f}));
}

TEST(LayerNormalizationKernel, WritesMeanAndInvStdDev) {
  NodeSpec spec = layer_norm_example();
  spec.outputs = {f32_out({2, 3}), f32_out({2, 1}), f32_out({2, 1})};
  NodeRun run = run_node(spec);
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[1].floats(), Pointwise(FloatNear(kTolerance), {2.0f, 6.0f}));
  EXPECT_THAT(run.outputs[2].floats(), Pointwise(FloatNear(kTolerance), {1.2247357f, 0.61237129f}));
}

TEST(LayerNormalizationKernel, NormalizesSeveralAxesWithoutBias) {
  // axis 1 of [1, 2, 2]: all four elements form one row; scale [2, 2] (bias absent).
  NodeRun run = run_node({"LayerNormalization",
                          {Attribute::Int("axis", 1), Attribute::Float("epsilon", 0)},
                          {TestTensor::f32({1, 2, 2}, {1, 3, 1, 3}), TestTensor::f32({2, 2}, {1, 2, 3, 4})},
                          {f32_out({1, 2, 2}), f32_out({1, 1, 1})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {-1.0f, 2.0f, -3.0f, 4.0f}));
  EXPECT_THAT(run.outputs[1].floats(), ElementsAre(2));
}

TEST(LayerNormalizationKernel, BroadcastsAScalarScale) {
  NodeRun run = run_node({"LayerNormalization",
                          {Attribute::Float("epsilon", 0)},
                          {TestTensor::f32({2, 2}, {0, 2, 5, 7}), TestTensor::f32({1}, {3})},
                          {f32_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {-3.0f, 3.0f, -3.0f, 3.0f}));
}

TEST(LayerNormalizationKernel, RefusesAScaleThatDoesNotMatch) {
  NodeSpec spec = layer_norm_example();
  spec.inputs[1] = TestTensor::f32({2}, {1, 1});
  EXPECT_THAT(run_node(spec).error,
              HasSubstr("Scale has shape [2], which does not broadcast to the normalized dimensions [3]"));
}

TEST(LayerNormalizationKernel, RefusesAWrongMeanShape) {
  NodeSpec spec = layer_norm_example();
  spec.outputs = {f32_out({2, 3}), f32_out({2})};
  EXPECT_THAT(run_node(spec).error, HasSubstr("output 1 has shape [2], but the inputs give [2, 1]"));
}

TEST(LayerNormalizationKernel, RefusesAnAxisOutOfRange) {
  NodeSpec spec = layer_norm_example();
  spec.attributes = {Attribute::Int("axis", -3)};
  EXPECT_THAT(run_node(spec).error, HasSubstr("axis -3 is out of range for rank 2"));
}

}  // namespace
}  // namespace plugrt::portable::testing
