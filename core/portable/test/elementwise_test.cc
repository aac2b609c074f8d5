// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels against known results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr float kTolerance = 1e-5f;

OutputSpec i64_out(std::vector<int64_t> shape) { return {DType::kInt64, std::move(shape)}; }
OutputSpec bool_out(std::vector<int64_t> shape) { return {DType::kBool, std::move(shape)}; }

/// Runs a one-input float32 op on `values` (shape [n]) and returns its output.
std::vector<float> run_unary(const std::string& op, const std::vector<float>& values,
                             std::vector<Attribute> attributes = {}) {
  const int64_t n = static_cast<int64_t>(values.size());
  NodeRun run = run_node({op, std::move(attributes), {TestTensor::f32({n}, values)}, {f32_out({n})}});
  EXPECT_TRUE(run.ok()) << run.error;
  return run.ok() ? run.outputs[0].floats() : std::vector<float>{};
}

TEST(AddKernel, BroadcastsARowOverAMatrix) {
  NodeRun run = run_node({"Add",
                          {},
                          {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), TestTensor::f32({3}, {10, 20, 30})},
                          {{DType::kFloat32, {2, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST(AddKernel, BroadcastsAColumnAgainstARow) {
  NodeRun run = run_node(
      {"Add", {}, {TestTensor::i64({2, 1}, {10, 20}), TestTensor::i64({1, 3}, {1, 2, 3})}, {{DType::kInt64, {2, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(11, 12, 13, 21, 22, 23));
}

TEST(AddKernel, RefusesShapesThatDoNotBroadcast) {
  NodeRun run =
      run_node({"Add", {}, {TestTensor::f32({2}, {1, 2}), TestTensor::f32({3}, {1, 2, 3})}, {{DType::kFloat32, {3}}}});
  EXPECT_THAT(run.error, HasSubstr("shapes [2] and [3] do not broadcast"));
}

TEST(ReluKernel, ClampsNegativesToZero) {
  NodeRun run = run_node({"Relu", {}, {TestTensor::f32({4}, {-1.5f, 0, 2, -0.0f})}, {{DType::kFloat32, {4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(FloatEq(0), FloatEq(0), FloatEq(2), FloatEq(0)));
}

// ---- Binary arithmetic ----------------------------------------------------------------

TEST(SubKernel, BroadcastsAScalar) {
  NodeRun run = run_node({"Sub", {}, {TestTensor::i64({3}, {5, 6, 7}), TestTensor::i64({}, {10})}, {i64_out({3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(-5, -4, -3));
}

TEST(MulKernel, MultipliesAColumnByARow) {
  NodeRun run =
      run_node({"Mul", {}, {TestTensor::f32({2, 1}, {2, -3}), TestTensor::f32({3}, {1, 2, 0.5f})}, {f32_out({2, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(2, 4, 1, -3, -6, -1.5f));
}

TEST(MulKernel, Int32Works) {
  NodeRun run =
      run_node({"Mul", {}, {TestTensor::i32({2}, {3, -4}), TestTensor::i32({2}, {5, 6})}, {{DType::kInt32, {2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAre(15, -24));
}

TEST(DivKernel, DividesFloats) {
  // ONNX example: [3, 4] / [1, 2].
  NodeRun run = run_node({"Div", {}, {TestTensor::f32({2}, {3, 4}), TestTensor::f32({2}, {1, 2})}, {f32_out({2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(3, 2));
}

TEST(DivKernel, Int64DivisionTruncatesTowardZero) {
  NodeRun run = run_node(
      {"Div", {}, {TestTensor::i64({4}, {7, -7, 7, -7}), TestTensor::i64({4}, {2, 2, -2, -2})}, {i64_out({4})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(3, -3, -3, 3));
}

TEST(DivKernel, Int64DivisionByZeroGivesZeroInsteadOfCrashing) {
  NodeRun run = run_node({"Div", {}, {TestTensor::i64({1}, {7}), TestTensor::i64({1}, {0})}, {i64_out({1})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0));
}

TEST(ArithmeticKernels, RefuseMixedDtypes) {
  NodeRun run = run_node({"Sub", {}, {TestTensor::f32({2}, {1, 2}), TestTensor::i64({2}, {1, 2})}, {f32_out({2})}});
  EXPECT_THAT(run.error, HasSubstr("are float32 and int64; they must match"));
}

TEST(ArithmeticKernels, RefuseAWrongOutputShape) {
  NodeRun run =
      run_node({"Mul", {}, {TestTensor::f32({2, 1}, {1, 2}), TestTensor::f32({3}, {1, 2, 3})}, {f32_out({2, 1})}});
  EXPECT_THAT(run.error, HasSubstr("output 0 has shape [2, 1], but the inputs give [2, 3]"));
}

TEST(ArithmeticKernels, RefuseBool) {
  NodeRun run =
      run_node({"Add", {}, {TestTensor::boolean({1}, {true}), TestTensor::boolean({1}, {true})}, {bool_out({1})}});
  EXPECT_THAT(run.error, AllOf(HasSubstr("supports float32, double"), HasSubstr("not bool")));
}

TEST(PowKernel, RaisesFloatsToFloatsWithBroadcasting) {
  // ONNX example: [[1, 2, 3], [4, 5, 6]] ^ [1, 2, 3].
  NodeRun run = run_node(
      {"Pow", {}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), TestTensor::f32({3}, {1, 2, 3})}, {f32_out({2, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 4, 27, 4, 25, 216));
}

TEST(PowKernel, TakesInt64ExponentsFromOpset12) {
  NodeRun run =
      run_node({"Pow", {}, {TestTensor::f32({3}, {1, 2, 3}), TestTensor::i64({3}, {4, 5, 6})}, {f32_out({3})}, 15});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 32, 729));
}

TEST(PowKernel, RefusesInt64ExponentsBeforeOpset12) {
  NodeRun run = run_node({"Pow", {}, {TestTensor::f32({1}, {2}), TestTensor::i64({1}, {2})}, {f32_out({1})}, 11});
  EXPECT_THAT(run.error, HasSubstr("the exponent is int64 and the base float32; before opset 12 they must match"));
}

// ---- Comparisons and Where ------------------------------------------------------------

TEST(EqualKernel, ComparesInt64WithBroadcasting) {
  NodeRun run =
      run_node({"Equal", {}, {TestTensor::i64({2, 2}, {1, 2, 3, 2}), TestTensor::i64({1}, {2})}, {bool_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bools(), ElementsAre(false, true, false, true));
}

TEST(EqualKernel, ComparesBools) {
  NodeRun run = run_node(
      {"Equal", {}, {TestTensor::boolean({2}, {true, false}), TestTensor::boolean({}, {false})}, {bool_out({2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bools(), ElementsAre(false, true));
}

TEST(LessKernel, ComparesFloats) {
  NodeRun run =
      run_node({"Less", {}, {TestTensor::f32({3}, {1, 2, 3}), TestTensor::f32({3}, {2, 2, 2})}, {bool_out({3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bools(), ElementsAre(true, false, false));
}

TEST(GreaterKernel, ComparesAColumnWithARow) {
  NodeRun run =
      run_node({"Greater", {}, {TestTensor::f32({2, 1}, {1, 3}), TestTensor::f32({2}, {2, 0})}, {bool_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bools(), ElementsAre(false, true, true, true));
}

TEST(ComparisonKernels, RefuseANonBoolOutput) {
  NodeRun run = run_node({"Greater", {}, {TestTensor::f32({2}, {1, 3}), TestTensor::f32({2}, {2, 0})}, {f32_out({2})}});
  EXPECT_THAT(run.error, HasSubstr("output 0 is float32, expected bool"));
}

TEST(WhereKernel, PicksFromXOrY) {
  // ONNX example.
  NodeRun run = run_node({"Where",
                          {},
                          {TestTensor::boolean({2, 2}, {true, false, true, true}),
                           TestTensor::f32({2, 2}, {1, 2, 3, 4}), TestTensor::f32({2, 2}, {9, 8, 7, 6})},
                          {f32_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 8, 3, 4));
}

TEST(WhereKernel, BroadcastsAllThreeOperands) {
  NodeRun run = run_node(
      {"Where",
       {},
       {TestTensor::boolean({2, 1}, {true, false}), TestTensor::i64({}, {-1}), TestTensor::i64({3}, {10, 20, 30})},
       {i64_out({2, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(-1, -1, -1, 10, 20, 30));
}

TEST(WhereKernel, RefusesANonBoolCondition) {
  NodeRun run = run_node(
      {"Where", {}, {TestTensor::f32({1}, {1}), TestTensor::f32({1}, {1}), TestTensor::f32({1}, {2})}, {f32_out({1})}});
  EXPECT_THAT(run.error, HasSubstr("input 0 is float32, expected bool"));
}

// ---- Unary ops ------------------------------------------------------------------------

TEST(UnaryKernels, LeakyRelu) {
  EXPECT_THAT(run_unary("LeakyRelu", {-1, 0, 1}, {Attribute::Float("alpha", 0.1f)}),
              ElementsAre(FloatEq(-0.1f), FloatEq(0), FloatEq(1)));
  EXPECT_THAT(run_unary("LeakyRelu", {-2, 3}), ElementsAre(FloatEq(-0.02f), FloatEq(3)));  // alpha 0.01
}

TEST(UnaryKernels, SigmoidIsStableForLargeInputs) {
  EXPECT_THAT(run_unary("Sigmoid", {-1, 0, 1, -200, 200}),
              Pointwise(FloatNear(kTolerance), {0.26894142f, 0.5f, 0.7310586f, 0.0f, 1.0f}));
}

TEST(UnaryKernels, HardSigmoid) {
  EXPECT_THAT(run_unary("HardSigmoid", {-1, 0, 1}, {Attribute::Float("alpha", 0.5f), Attribute::Float("beta", 0.6f)}),
              Pointwise(FloatNear(kTolerance), {0.1f, 0.6f, 1.0f}));
  EXPECT_THAT(run_unary("HardSigmoid", {-3, 0, 3}), Pointwise(FloatNear(kTolerance), {0.0f, 0.5f, 1.0f}));
}

TEST(UnaryKernels, HardSwish) {
  EXPECT_THAT(run_unary("HardSwish", {-4, -1, 0, 1, 4}),
              Pointwise(FloatNear(kTolerance), {0.0f, -1.0f / 3, 0.0f, 2.0f / 3, 4.0f}));
}

TEST(UnaryKernels, TranscendentalFunctions) {
  EXPECT_THAT(run_unary("Tanh", {-1, 0, 1}), Pointwise(FloatNear(kTolerance), {-0.7615942f, 0.0f, 0.7615942f}));
  EXPECT_THAT(run_unary("Erf", {-1, 0, 1}), Pointwise(FloatNear(kTolerance), {-0.8427008f, 0.0f, 0.8427008f}));
  EXPECT_THAT(run_unary("Exp", {-1, 0, 1}), Pointwise(FloatNear(kTolerance), {0.36787944f, 1.0f, 2.7182817f}));
  EXPECT_THAT(run_unary("Log", {1, 10}), Pointwise(FloatNear(kTolerance), {0.0f, 2.3025851f}));
  EXPECT_THAT(run_unary("Sqrt", {1, 4, 9}), Pointwise(FloatNear(kTolerance), {1.0f, 2.0f, 3.0f}));
}

TEST(UnaryKernels, Reciprocal) {
  EXPECT_THAT(run_unary("Reciprocal", {-4, 2}), ElementsAre(FloatEq(-0.25f), FloatEq(0.5f)));
}

TEST(UnaryKernels, NegAndAbsOnFloats) {
  EXPECT_THAT(run_unary("Neg", {-4, 2}), ElementsAre(FloatEq(4), FloatEq(-2)));
  EXPECT_THAT(run_unary("Abs", {-4, 2}), ElementsAre(FloatEq(4), FloatEq(2)));
}

TEST(UnaryKernels, NegAndAbsOnInt64) {
  NodeRun neg = run_node({"Neg", {}, {TestTensor::i64({2}, {-4, 2})}, {i64_out({2})}});
  ASSERT_TRUE(neg.ok()) << neg.error;
  EXPECT_THAT(neg.outputs[0].ints(), ElementsAre(4, -2));
  NodeRun abs = run_node({"Abs", {}, {TestTensor::i64({2}, {-4, 2})}, {i64_out({2})}});
  ASSERT_TRUE(abs.ok()) << abs.error;
  EXPECT_THAT(abs.outputs[0].ints(), ElementsAre(4, 2));
}

TEST(UnaryKernels, RefuseInt64WhereOnlyFloatIsSupported) {
  NodeRun run = run_node({"Sigmoid", {}, {TestTensor::i64({1}, {1})}, {i64_out({1})}});
  EXPECT_THAT(run.error, HasSubstr("supports float32, double, float16, bfloat16, not int64"));
}

// ---- Clip -----------------------------------------------------------------------------

TEST(ClipKernel, TakesConstantBoundsFromOpset11) {
  // ONNX example: clip [-2, 0, 2] to [-1, 1].
  NodeRun run = run_node({"Clip",
                          {},
                          {TestTensor::f32({3}, {-2, 0, 2}), TestTensor::f32({}, {-1}).as_constant(),
                           TestTensor::f32({}, {1}).as_constant()},
                          {f32_out({3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(-1, 0, 1));
}

TEST(ClipKernel, AnAbsentBoundDoesNotClip) {
  NodeRun run = run_node({"Clip",
                          {},
                          {TestTensor::f32({3}, {-2, 0, 2}), std::nullopt, TestTensor::f32({}, {1}).as_constant()},
                          {f32_out({3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(-2, 0, 1));
}

TEST(ClipKernel, TakesAttributesBeforeOpset11) {
  NodeRun run = run_node({"Clip",
                          {Attribute::Float("min", -1), Attribute::Float("max", 1)},
                          {TestTensor::f32({3}, {-2, 0.5f, 2})},
                          {f32_out({3})},
                          10});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(-1, 0.5f, 1));
}

TEST(ClipKernel, ReadsBoundsGivenAtRunTime) {
  NodeRun both = run_node(
      {"Clip",
       {},
       {TestTensor::f32({4}, {-2, 0, 2, 3}), TestTensor::f32({}, {-1}), TestTensor::f32({}, {2.5f}).as_constant()},
       {f32_out({4})}});
  ASSERT_TRUE(both.ok()) << both.error;
  EXPECT_THAT(both.outputs[0].floats(), ElementsAre(-1, 0, 2, 2.5f));
  NodeRun max_only = run_node(
      {"Clip", {}, {TestTensor::i64({3}, {-5, 7, 9}), std::nullopt, TestTensor::i64({}, {8})}, {i64_out({3})}});
  ASSERT_TRUE(max_only.ok()) << max_only.error;
  EXPECT_THAT(max_only.outputs[0].ints(), ElementsAre(-5, 7, 8));
}

TEST(ClipKernel, RefusesABoundThatIsNotAScalarOfTheInputsDtype) {
  NodeRun dtype = run_node({"Clip", {}, {TestTensor::f32({3}, {-2, 0, 2}), TestTensor::i64({}, {-1})}, {f32_out({3})}});
  EXPECT_THAT(dtype.error, HasSubstr("min (input 1) must be a scalar of the input's dtype"));
  NodeRun size = run_node(
      {"Clip", {}, {TestTensor::f32({3}, {-2, 0, 2}), std::nullopt, TestTensor::f32({2}, {1, 2})}, {f32_out({3})}});
  EXPECT_THAT(size.error, HasSubstr("max (input 2) must be a scalar of the input's dtype"));
}

TEST(ClipKernel, ClipsInt8WithOneBound) {
  NodeRun run = run_node({"Clip",
                          {},
                          {typed_tensor<int8_t>(DType::kInt8, {3}, {-128, 0, 127}), std::nullopt,
                           typed_tensor<int8_t>(DType::kInt8, {}, {5}).as_constant()},
                          {{DType::kInt8, {3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<int8_t>(run.outputs[0]), ElementsAre(-128, 0, 5));
}

TEST(ClipKernel, RefusesBoundInputsBeforeOpset11) {
  NodeRun run =
      run_node({"Clip", {}, {TestTensor::f32({1}, {0}), TestTensor::f32({}, {-1}).as_constant()}, {f32_out({1})}, 10});
  EXPECT_THAT(run.error, HasSubstr("takes 1 inputs, got 2"));
}

// ---- Cast, CastLike, Dropout ----------------------------------------------------------

TEST(CastLikeKernel, CastsToTheSecondInputsDtype) {
  NodeRun run = run_node(
      {"CastLike", {}, {TestTensor::f32({2}, {1.5f, -2.5f}), TestTensor::i32({1}, {0})}, {{DType::kInt32, {2}}}, 15});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAre(1, -2));
}

TEST(DropoutKernel, PassesTheInputAndATrueMask) {
  NodeRun run = run_node({"Dropout", {}, {TestTensor::f32({2}, {1, 2})}, {f32_out({2}), {DType::kBool, {2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 2));
  EXPECT_THAT(run.outputs[1].bools(), ElementsAre(true, true));
}

TEST(DropoutKernel, RefusesRandomTrainingMode) {
  NodeRun run = run_node({"Dropout",
                          {},
                          {TestTensor::f32({2}, {1, 2}), TestTensor::f32({}, {0.5f}).as_constant(),
                           TestTensor::boolean({}, {true}).as_constant()},
                          {f32_out({2})}});
  EXPECT_THAT(run.error, HasSubstr("training mode with a non-zero ratio is random"));
}

NodeRun run_cast(TestTensor input, DType to) {
  std::vector<int64_t> shape = input.shape;
  return run_node({"Cast", {Attribute::Int("to", static_cast<int64_t>(to))}, {std::move(input)}, {{to, shape}}});
}

TEST(CastKernel, FloatToInt64TruncatesTowardZero) {
  NodeRun run = run_cast(TestTensor::f32({4}, {1.9f, -1.9f, 0.5f, 3}), DType::kInt64);
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(1, -1, 0, 3));
}

TEST(CastKernel, AnythingToBoolIsNonZero) {
  NodeRun from_float = run_cast(TestTensor::f32({3}, {0, 0.5f, -2}), DType::kBool);
  ASSERT_TRUE(from_float.ok()) << from_float.error;
  EXPECT_THAT(from_float.outputs[0].bools(), ElementsAre(false, true, true));
  NodeRun from_int = run_cast(TestTensor::i64({3}, {0, 256, -1}), DType::kBool);
  ASSERT_TRUE(from_int.ok()) << from_int.error;
  EXPECT_THAT(from_int.outputs[0].bools(), ElementsAre(false, true, true));
}

TEST(CastKernel, BoolAndIntegersToFloat) {
  NodeRun from_bool = run_cast(TestTensor::boolean({2}, {true, false}), DType::kFloat32);
  ASSERT_TRUE(from_bool.ok()) << from_bool.error;
  EXPECT_THAT(from_bool.outputs[0].floats(), ElementsAre(1, 0));
  NodeRun from_int = run_cast(TestTensor::i32({2}, {-7, 1 << 20}), DType::kFloat32);
  ASSERT_TRUE(from_int.ok()) << from_int.error;
  EXPECT_THAT(from_int.outputs[0].floats(), ElementsAre(-7, 1 << 20));
}

TEST(CastKernel, NarrowingIntegersWrap) {
  NodeRun to_int8 = run_cast(TestTensor::i64({3}, {300, -1, 127}), DType::kInt8);
  ASSERT_TRUE(to_int8.ok()) << to_int8.error;
  EXPECT_THAT(to_int8.outputs[0].bytes, ElementsAre(44, 0xff, 127));
  NodeRun to_int32 = run_cast(TestTensor::i64({2}, {-5, 1}), DType::kInt32);
  ASSERT_TRUE(to_int32.ok()) << to_int32.error;
  EXPECT_THAT(to_int32.outputs[0].int32s(), ElementsAre(-5, 1));
}

TEST(CastKernel, FloatToUint8Saturates) {
  NodeRun run = run_cast(TestTensor::f32({3}, {-3, 7.7f, 1000}), DType::kUInt8);
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bytes, ElementsAre(0, 7, 255));
}

TEST(CastKernel, RefusesAnUnsupportedTarget) {
  NodeRun run = run_node({"Cast", {Attribute::Int("to", 8)}, {TestTensor::f32({1}, {1})}, {f32_out({1})}});
  EXPECT_THAT(run.error, HasSubstr("cannot cast to ONNX dtype 8"));
}

TEST(CastKernel, RefusesAnOutputOfAnotherDtype) {
  NodeRun run = run_node({"Cast", {Attribute::Int("to", 7)}, {TestTensor::f32({1}, {1})}, {f32_out({1})}});
  EXPECT_THAT(run.error, HasSubstr("output 0 is float32, expected int64"));
}

}  // namespace
}  // namespace plugrt::portable::testing
