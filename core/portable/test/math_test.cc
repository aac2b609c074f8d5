// SPDX-License-Identifier: Apache-2.0
// The unary math kernels (math.cc) against known results.
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::vector<float> run_unary(const std::string& op, const std::vector<float>& values,
                             std::vector<Attribute> attributes = {}) {
  const int64_t n = static_cast<int64_t>(values.size());
  NodeRun run = run_node({op, std::move(attributes), {TestTensor::f32({n}, values)}, {f32_out({n})}});
  EXPECT_TRUE(run.ok()) << run.error;
  return run.ok() ? run.outputs[0].floats() : std::vector<float>{};
}

TEST(MathKernels, RoundingHalvesGoToEven) {
  EXPECT_THAT(run_unary("Round", {0.5f, 1.5f, 2.5f, -2.5f, 2.6f}), ElementsAre(0, 2, 2, -2, 3));
  EXPECT_THAT(run_unary("Floor", {-1.5f, 1.5f}), ElementsAre(-2, 1));
  EXPECT_THAT(run_unary("Ceil", {-1.5f, 1.5f}), ElementsAre(-1, 2));
}

TEST(MathKernels, SignOfFloatsAndIntegers) {
  const std::vector<float> sign = run_unary("Sign", {-3, 0, 2, std::numeric_limits<float>::quiet_NaN()});
  ASSERT_EQ(sign.size(), 4u);
  EXPECT_THAT(std::vector<float>(sign.begin(), sign.begin() + 3), ElementsAre(-1, 0, 1));
  EXPECT_TRUE(std::isnan(sign[3]));
  NodeRun run = run_node({"Sign", {}, {TestTensor::i64({3}, {-7, 0, 9})}, {{DType::kInt64, {3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(-1, 0, 1));
}

TEST(MathKernels, SmoothActivations) {
  // Softplus stays finite for large inputs instead of overflowing exp.
  EXPECT_THAT(run_unary("Softplus", {-1, 0, 1, 100}),
              Pointwise(FloatNear(1e-5f), {0.31326169f, 0.69314718f, 1.31326169f, 100.0f}));
  EXPECT_THAT(run_unary("Softsign", {-1, 0, 3}), Pointwise(FloatNear(1e-6f), {-0.5f, 0.0f, 0.75f}));
}

TEST(MathKernels, ExponentialLinearUnits) {
  EXPECT_THAT(run_unary("Elu", {-1, 0, 1}, {Attribute::Float("alpha", 2)}),
              Pointwise(FloatNear(1e-5f), {-1.26424112f, 0.0f, 1.0f}));
  // ONNX example: Selu with alpha 2, gamma 3.
  EXPECT_THAT(run_unary("Selu", {-1, 0, 1}, {Attribute::Float("alpha", 2), Attribute::Float("gamma", 3)}),
              Pointwise(FloatNear(1e-5f), {-3.79272318f, 0.0f, 3.0f}));
  EXPECT_THAT(run_unary("Celu", {-1, 2}, {Attribute::Float("alpha", 2)}),
              Pointwise(FloatNear(1e-5f), {-0.78693868f, 2.0f}));
  EXPECT_THAT(run_unary("ThresholdedRelu", {0.5f, 1.0f, 2.0f}), ElementsAre(0, 0, 2));
}

TEST(MathKernels, CeluRefusesAZeroAlpha) {
  NodeRun run = run_node({"Celu", {Attribute::Float("alpha", 0)}, {TestTensor::f32({1}, {1})}, {f32_out({1})}});
  EXPECT_THAT(run.error, HasSubstr("alpha must not be 0"));
}

TEST(MathKernels, Trigonometry) {
  EXPECT_THAT(run_unary("Sin", {0, 1}), Pointwise(FloatNear(1e-6f), {0.0f, 0.84147098f}));
  EXPECT_THAT(run_unary("Acos", {1, 0}), Pointwise(FloatNear(1e-6f), {0.0f, 1.57079633f}));
  EXPECT_THAT(run_unary("Atanh", {0.5f}), Pointwise(FloatNear(1e-6f), {0.54930614f}));
}

TEST(MathKernels, IsNaNAndIsInf) {
  const float inf = std::numeric_limits<float>::infinity();
  const TestTensor x = TestTensor::f32({4}, {1, std::numeric_limits<float>::quiet_NaN(), inf, -inf});
  NodeRun nan = run_node({"IsNaN", {}, {x}, {{DType::kBool, {4}}}});
  ASSERT_TRUE(nan.ok()) << nan.error;
  EXPECT_THAT(nan.outputs[0].bools(), ElementsAre(false, true, false, false));
  NodeRun negative = run_node({"IsInf", {Attribute::Int("detect_positive", 0)}, {x}, {{DType::kBool, {4}}}});
  ASSERT_TRUE(negative.ok()) << negative.error;
  EXPECT_THAT(negative.outputs[0].bools(), ElementsAre(false, false, false, true));
}

TEST(MathKernels, Shrink) {
  EXPECT_THAT(run_unary("Shrink", {-2, -0.5f, 0, 2}, {Attribute::Float("lambd", 1), Attribute::Float("bias", 0.5f)}),
              ElementsAre(-1.5f, 0, 0, 1.5f));
}

// ---- Det -------------------------------------------------------------------------------

TEST(DetKernel, DeterminantOfEachMatrix) {
  NodeRun run = run_node({"Det", {}, {TestTensor::f32({2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 3})}, {{DType::kFloat32, {2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(1e-5f), {-2.0f, 6.0f}));
  // A 3 x 3 that needs pivoting, and a singular one.
  NodeRun three = run_node({"Det",
                            {},
                            {TestTensor::f32({2, 3, 3}, {0, 2, 3, 4, 5, 6, 7, 8, 10, 1, 2, 3, 2, 4, 6, 0, 1, 1})},
                            {{DType::kFloat32, {2}}}});
  ASSERT_TRUE(three.ok()) << three.error;
  EXPECT_THAT(three.outputs[0].floats(), Pointwise(FloatNear(1e-4f), {-5.0f, 0.0f}));
  EXPECT_THAT(run_node({"Det", {}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {{DType::kFloat32, {}}}}).error,
              HasSubstr("expected [..., M, M]"));
}

}  // namespace
}  // namespace plugrt::portable::testing
