// SPDX-License-Identifier: Apache-2.0
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (loss.cc), checked against
// values computed by hand from ONNX's reference definitions.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// log-probabilities of 2 samples over 3 classes.
const TestTensor kScores = TestTensor::f32({2, 3}, {-1.0f, -2.0f, -3.0f, -0.5f, -1.5f, -2.5f});

TEST(NllLossKernel, ReductionsAndWeights) {
  const TestTensor target = TestTensor::i64({2}, {2, 0});
  NodeRun none = run_node(
      {"NegativeLogLikelihoodLoss", {Attribute::String("reduction", "none")}, {kScores, target}, {f32_out({2})}});
  ASSERT_TRUE(none.ok()) << none.error;
  EXPECT_THAT(none.outputs[0].floats(), ElementsAre(3.0f, 0.5f));
  NodeRun mean = run_node({"NegativeLogLikelihoodLoss", {}, {kScores, target}, {f32_out({})}});
  ASSERT_TRUE(mean.ok()) << mean.error;
  EXPECT_THAT(mean.outputs[0].floats(), ElementsAre(1.75f));
  // Weighted mean: (3 * 0.5 + 0.5 * 2) / (0.5 + 2).
  NodeRun weighted =
      run_node({"NegativeLogLikelihoodLoss", {}, {kScores, target, TestTensor::f32({3}, {2, 1, 0.5f})}, {f32_out({})}});
  ASSERT_TRUE(weighted.ok()) << weighted.error;
  EXPECT_THAT(weighted.outputs[0].floats(), Pointwise(FloatNear(1e-6f), {1.0f}));
}

TEST(NllLossKernel, IgnoreIndexDropsItsSamplesFromTheMean) {
  NodeRun run = run_node({"NegativeLogLikelihoodLoss",
                          {Attribute::Int("ignore_index", 0)},
                          {kScores, TestTensor::i64({2}, {2, 0})},
                          {f32_out({})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(3.0f));
}

TEST(NllLossKernel, RefusesTargetsOfTheWrongShape) {
  NodeRun run = run_node({"NegativeLogLikelihoodLoss", {}, {kScores, TestTensor::i64({3}, {0, 0, 0})}, {f32_out({})}});
  EXPECT_THAT(run.error, HasSubstr("the targets have shape [3]; the input [2, 3] needs [2]"));
}

TEST(SoftmaxCrossEntropyKernel, LossAndLogProbOverSpatialDims) {
  // Scores [1, 2, 2]: at d = 0 the classes score (0, 0), at d = 1 (ln 3, 0).
  const float ln3 = std::log(3.0f);
  NodeRun run = run_node({"SoftmaxCrossEntropyLoss",
                          {Attribute::String("reduction", "sum")},
                          {TestTensor::f32({1, 2, 2}, {0, ln3, 0, 0}), TestTensor::i64({1, 2}, {1, 0})},
                          {f32_out({}), f32_out({1, 2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  // -log(1/2) - log(3/4).
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(1e-6f), {std::log(2.0f) - std::log(0.75f)}));
  EXPECT_THAT(run.outputs[1].floats(),
              Pointwise(FloatNear(1e-6f), {std::log(0.5f), std::log(0.75f), std::log(0.5f), std::log(0.25f)}));
}

}  // namespace
}  // namespace plugrt::portable::testing
