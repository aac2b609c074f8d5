// SPDX-License-Identifier: Apache-2.0
// Mod, PRelu and the variadic Min, Max, Mean, Sum (arithmetic.cc).
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ModKernel, IntegerRemainderTakesTheDivisorsSign) {
  // ONNX example (fmod = 0): the sign follows the divisor, as Python's %.
  NodeRun run = run_node({"Mod",
                          {},
                          {TestTensor::i64({6}, {-4, 7, 5, 4, -7, 8}), TestTensor::i64({6}, {2, -3, 8, -2, 3, 5})},
                          {{DType::kInt64, {6}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, -2, 5, 0, 2, 3));
}

TEST(ModKernel, FmodTakesTheDividendsSignAndZeroDivisorsGiveZero) {
  NodeRun run = run_node({"Mod",
                          {Attribute::Int("fmod", 1)},
                          {TestTensor::i32({3}, {-7, 7, 5}), TestTensor::i32({3}, {3, -3, 0})},
                          {{DType::kInt32, {3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAre(-1, 1, 0));
  NodeRun floats = run_node({"Mod",
                             {Attribute::Int("fmod", 1)},
                             {TestTensor::f32({2}, {-4.3f, 7.2f}), TestTensor::f32({1}, {2.1f})},
                             {f32_out({2})}});
  ASSERT_TRUE(floats.ok()) << floats.error;
  EXPECT_NEAR(floats.outputs[0].floats()[0], -0.1f, 1e-5f);
  EXPECT_NEAR(floats.outputs[0].floats()[1], 0.9f, 1e-5f);
}

TEST(ModKernel, RefusesFloatsWithoutFmod) {
  NodeRun run = run_node({"Mod", {}, {TestTensor::f32({1}, {1}), TestTensor::f32({1}, {1})}, {f32_out({1})}});
  EXPECT_THAT(run.error, HasSubstr("fmod must be 1 for float32 inputs"));
}

TEST(PReluKernel, BroadcastsTheSlope) {
  NodeRun run = run_node(
      {"PRelu", {}, {TestTensor::f32({2, 2}, {-1, 2, -3, 4}), TestTensor::f32({2}, {0.5f, 0.25f})}, {f32_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(-0.5f, 2, -1.5f, 4));
  NodeRun wider = run_node(
      {"PRelu", {}, {TestTensor::f32({2}, {-1, 2}), TestTensor::f32({2, 2}, {1, 1, 1, 1})}, {f32_out({2, 2})}});
  EXPECT_THAT(wider.error, HasSubstr("the slope's shape [2, 2] must broadcast to the input's [2]"));
}

TEST(VariadicKernels, BroadcastThreeInputs) {
  const TestTensor a = TestTensor::f32({3}, {3, 2, 1});
  const TestTensor b = TestTensor::f32({1}, {2});
  const TestTensor c = TestTensor::f32({2, 1}, {0, 10});
  NodeRun max = run_node({"Max", {}, {a, b, c}, {f32_out({2, 3})}});
  ASSERT_TRUE(max.ok()) << max.error;
  EXPECT_THAT(max.outputs[0].floats(), ElementsAre(3, 2, 2, 10, 10, 10));
  NodeRun min = run_node({"Min", {}, {a, b, c}, {f32_out({2, 3})}});
  ASSERT_TRUE(min.ok()) << min.error;
  EXPECT_THAT(min.outputs[0].floats(), ElementsAre(0, 0, 0, 2, 2, 1));
  NodeRun sum = run_node({"Sum", {}, {a, b, c}, {f32_out({2, 3})}});
  ASSERT_TRUE(sum.ok()) << sum.error;
  EXPECT_THAT(sum.outputs[0].floats(), ElementsAre(5, 4, 3, 15, 14, 13));
  NodeRun mean = run_node({"Mean", {}, {a, b, c}, {f32_out({2, 3})}});
  ASSERT_TRUE(mean.ok()) << mean.error;
  EXPECT_THAT(mean.outputs[0].floats(), ElementsAre(5.0f / 3, 4.0f / 3, 1, 5, 14.0f / 3, 13.0f / 3));
}

TEST(VariadicKernels, OneInputIsCopiedAndNaNWinsMax) {
  NodeRun one = run_node({"Sum", {}, {TestTensor::f32({2}, {1, 2})}, {f32_out({2})}});
  ASSERT_TRUE(one.ok()) << one.error;
  EXPECT_THAT(one.outputs[0].floats(), ElementsAre(1, 2));
  NodeRun nan = run_node({"Max",
                          {},
                          {TestTensor::f32({2}, {1, std::numeric_limits<float>::quiet_NaN()}),
                           TestTensor::f32({2}, {std::numeric_limits<float>::quiet_NaN(), 2})},
                          {f32_out({2})}});
  ASSERT_TRUE(nan.ok()) << nan.error;
  EXPECT_TRUE(std::isnan(nan.outputs[0].floats()[0]));
  EXPECT_TRUE(std::isnan(nan.outputs[0].floats()[1]));
}

TEST(VariadicKernels, MaxOfUnsignedIntegersAndSumRefusesThem) {
  const TestTensor a = typed_tensor<uint32_t>(DType::kUInt32, {2}, {1, 4000000000u});
  const TestTensor b = typed_tensor<uint32_t>(DType::kUInt32, {2}, {2, 3});
  NodeRun max = run_node({"Max", {}, {a, b}, {{DType::kUInt32, {2}}}});
  ASSERT_TRUE(max.ok()) << max.error;
  EXPECT_THAT(values_of<uint32_t>(max.outputs[0]), ElementsAre(2u, 4000000000u));
  NodeRun sum = run_node({"Sum", {}, {a, b}, {{DType::kUInt32, {2}}}});
  EXPECT_THAT(sum.error, HasSubstr("not uint32"));
}

}  // namespace
}  // namespace plugrt::portable::testing
