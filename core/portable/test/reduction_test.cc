// SPDX-License-Identifier: Apache-2.0
// Reduction kernels against known results (mostly the ONNX operator examples).
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

/// The ONNX ReduceSum example's data, shape [3, 2, 2].
TestTensor sum_data() { return TestTensor::f32({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); }
/// The ONNX ReduceMean / ReduceMax examples' data, shape [3, 2, 2].
TestTensor mean_data() { return TestTensor::f32({3, 2, 2}, {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2}); }

// ---- ReduceSum ------------------------------------------------------------------------

TEST(ReduceSumKernel, TakesConstantAxesFromOpset13) {
  NodeRun run =
      run_node({"ReduceSum", {}, {sum_data(), TestTensor::i64({1}, {1}).as_constant()}, {f32_out({3, 1, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(4, 6, 12, 14, 20, 22));
}

TEST(ReduceSumKernel, TakesAnAxesAttributeBeforeOpset13) {
  NodeRun run = run_node({"ReduceSum",
                          {Attribute::Ints("axes", {-2}), Attribute::Int("keepdims", 0)},
                          {sum_data()},
                          {f32_out({3, 2})},
                          11});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(4, 6, 12, 14, 20, 22));
}

TEST(ReduceSumKernel, ReducesEverythingWithoutAxes) {
  NodeRun keep = run_node({"ReduceSum", {}, {sum_data()}, {f32_out({1, 1, 1})}});
  ASSERT_TRUE(keep.ok()) << keep.error;
  EXPECT_THAT(keep.outputs[0].floats(), ElementsAre(78));
  NodeRun drop = run_node({"ReduceSum", {Attribute::Int("keepdims", 0)}, {sum_data()}, {f32_out({})}});
  ASSERT_TRUE(drop.ok()) << drop.error;
  EXPECT_THAT(drop.outputs[0].floats(), ElementsAre(78));
}

TEST(ReduceSumKernel, ReducesTwoAxesOfInt64) {
  NodeRun run =
      run_node({"ReduceSum",
                {Attribute::Int("keepdims", 0)},
                {TestTensor::i64({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), TestTensor::i64({2}, {0, 2}).as_constant()},
                {{DType::kInt64, {2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(1 + 2 + 5 + 6, 3 + 4 + 7 + 8));
}

TEST(ReduceSumKernel, NoopWithEmptyAxesCopiesTheInput) {
  NodeRun run = run_node({"ReduceSum",
                          {Attribute::Int("noop_with_empty_axes", 1)},
                          {sum_data(), TestTensor::i64({0}, {}).as_constant()},
                          {f32_out({3, 2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_EQ(run.outputs[0].floats(), sum_data().floats());
}

TEST(ReduceSumKernel, ReadsAxesGivenAtRunTime) {
  NodeRun run = run_node({"ReduceSum", {}, {sum_data(), TestTensor::i64({1}, {1})}, {f32_out({3, 1, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(4, 6, 12, 14, 20, 22));
  EXPECT_THAT(run_node({"ReduceSum", {}, {sum_data(), TestTensor::i64({1}, {0})}, {f32_out({3, 1, 2})}}).error,
              HasSubstr("(with input 1 = [0], given at run time)"));
}

TEST(ReduceSumKernel, RefusesAnAxesAttributeFromOpset13) {
  NodeRun run = run_node({"ReduceSum", {Attribute::Ints("axes", {1})}, {sum_data()}, {f32_out({3, 1, 2})}});
  EXPECT_THAT(run.error, HasSubstr("from opset 13 the axes are input 1, not an attribute"));
}

TEST(ReduceSumKernel, RefusesRepeatedAndOutOfRangeAxes) {
  NodeRun repeated =
      run_node({"ReduceSum", {}, {sum_data(), TestTensor::i64({2}, {1, -2}).as_constant()}, {f32_out({3, 1, 2})}});
  EXPECT_THAT(repeated.error, HasSubstr("axis -2 is given twice"));
  NodeRun out_of_range =
      run_node({"ReduceSum", {}, {sum_data(), TestTensor::i64({1}, {3}).as_constant()}, {f32_out({3, 1, 2})}});
  EXPECT_THAT(out_of_range.error, HasSubstr("axis 3 is out of range for rank 3"));
}

TEST(ReduceSumKernel, RefusesAWrongOutputShape) {
  NodeRun run = run_node({"ReduceSum", {}, {sum_data(), TestTensor::i64({1}, {1}).as_constant()}, {f32_out({3, 2})}});
  EXPECT_THAT(run.error, HasSubstr("output 0 has shape [3, 2], but the inputs give [3, 1, 2]"));
}

// ---- ReduceMean and ReduceMax ---------------------------------------------------------

TEST(ReduceMeanKernel, AveragesOverAnAxis) {
  NodeRun run = run_node({"ReduceMean", {Attribute::Ints("axes", {1})}, {mean_data()}, {f32_out({3, 1, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(12.5f, 1.5f, 35, 1.5f, 57.5f, 1.5f));
}

TEST(ReduceMeanKernel, AveragesEverythingWithoutAxes) {
  NodeRun run = run_node({"ReduceMean", {Attribute::Int("keepdims", 0)}, {mean_data()}, {f32_out({})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {18.25f}));
}

TEST(ReduceMeanKernel, RefusesAnAxesInputBeforeOpset18) {
  NodeRun run =
      run_node({"ReduceMean", {}, {mean_data(), TestTensor::i64({1}, {1}).as_constant()}, {f32_out({3, 1, 2})}});
  EXPECT_THAT(run.error, HasSubstr("takes 1 inputs, got 2"));
}

TEST(ReduceMaxKernel, TakesTheMaximumOverAnAxis) {
  NodeRun run = run_node(
      {"ReduceMax", {Attribute::Ints("axes", {1}), Attribute::Int("keepdims", 0)}, {mean_data()}, {f32_out({3, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(20, 2, 40, 2, 60, 2));
}

TEST(ReduceMaxKernel, TakesConstantAxesFromOpset18) {
  NodeRun run =
      run_node({"ReduceMax", {}, {mean_data(), TestTensor::i64({1}, {2}).as_constant()}, {f32_out({3, 2, 1})}, 18});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(5, 20, 30, 40, 55, 60));
}

TEST(ReduceMaxKernel, HandlesNegativeInt64) {
  NodeRun run = run_node(
      {"ReduceMax", {Attribute::Int("keepdims", 0)}, {TestTensor::i64({3}, {-7, -3, -9})}, {{DType::kInt64, {}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(-3));
}

// ---- ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSumExp -----

std::vector<float> reduce_last_axis(const std::string& op, const TestTensor& data) {
  NodeRun run =
      run_node({op, {Attribute::Ints("axes", {-1}), Attribute::Int("keepdims", 0)}, {data}, {f32_out({3, 2})}, 17});
  EXPECT_TRUE(run.ok()) << op << ": " << run.error;
  return run.ok() ? run.outputs[0].floats() : std::vector<float>{};
}

TEST(ReduceKernels, MinAndProdOverTheLastAxis) {
  EXPECT_THAT(reduce_last_axis("ReduceMin", mean_data()), ElementsAre(1, 2, 1, 2, 1, 2));
  EXPECT_THAT(reduce_last_axis("ReduceProd", mean_data()), ElementsAre(5, 40, 30, 80, 55, 120));
}

TEST(ReduceKernels, NormsAndSumOfSquares) {
  const TestTensor signed_data = TestTensor::f32({3, 2, 2}, {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12});
  EXPECT_THAT(reduce_last_axis("ReduceL1", signed_data), ElementsAre(3, 7, 11, 15, 19, 23));
  EXPECT_THAT(reduce_last_axis("ReduceSumSquare", signed_data), ElementsAre(5, 25, 61, 113, 181, 265));
  EXPECT_THAT(reduce_last_axis("ReduceL2", signed_data),
              Pointwise(FloatNear(kTolerance), {2.2360680f, 5.0f, 7.8102497f, 10.630146f, 13.453624f, 16.278820f}));
}

TEST(ReduceKernels, LogSumExp) {
  EXPECT_THAT(
      reduce_last_axis("ReduceLogSumExp", sum_data()),
      Pointwise(FloatNear(kTolerance), {2.3132617f, 4.3132617f, 6.3132617f, 8.3132617f, 10.313262f, 12.313262f}));
}

TEST(ReduceKernels, ProdOfInt64AndMinOfDoubles) {
  NodeRun prod = run_node(
      {"ReduceProd", {Attribute::Int("keepdims", 0)}, {TestTensor::i64({3}, {-2, 3, 4})}, {{DType::kInt64, {}}}, 17});
  ASSERT_TRUE(prod.ok()) << prod.error;
  EXPECT_THAT(prod.outputs[0].ints(), ElementsAre(-24));
  NodeRun min = run_node({"ReduceMin",
                          {Attribute::Ints("axes", {0})},
                          {typed_tensor<double>(DType::kDouble, {2, 2}, {1e-300, 4, -3, 8})},
                          {{DType::kDouble, {1, 2}}},
                          17});
  ASSERT_TRUE(min.ok()) << min.error;
  EXPECT_THAT(values_of<double>(min.outputs[0]), ElementsAre(-3, 4));
}

TEST(ReduceKernels, LogSum) {
  EXPECT_THAT(
      reduce_last_axis("ReduceLogSum", sum_data()),
      Pointwise(FloatNear(kTolerance), {1.0986123f, 1.9459101f, 2.3978953f, 2.7080502f, 2.9444390f, 3.1354942f}));
}

TEST(HardmaxKernel, MarksTheFirstMaximumOfEachRow) {
  NodeRun run = run_node({"Hardmax", {}, {TestTensor::f32({2, 3}, {3, 1, 3, 0, 5, 2})}, {f32_out({2, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 0, 0, 0, 1, 0));
  NodeRun columns = run_node(
      {"Hardmax", {Attribute::Int("axis", 0)}, {TestTensor::f32({2, 3}, {3, 1, 3, 0, 5, 2})}, {f32_out({2, 3})}});
  ASSERT_TRUE(columns.ok()) << columns.error;
  EXPECT_THAT(columns.outputs[0].floats(), ElementsAre(1, 0, 1, 0, 1, 0));
}

TEST(ReduceKernels, RefuseBool) {
  NodeRun run = run_node({"ReduceMax", {}, {TestTensor::boolean({2}, {true, false})}, {{DType::kBool, {1}}}});
  EXPECT_THAT(run.error, HasSubstr("int8 to int64, uint8 to uint64, not bool"));
}

// ---- Softmax and LogSoftmax -----------------------------------------------------------

TEST(SoftmaxKernel, NormalizesTheLastAxis) {
  // ONNX example: [[-1, 0, 1]].
  NodeRun run = run_node({"Softmax", {}, {TestTensor::f32({1, 3}, {-1, 0, 1})}, {f32_out({1, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {0.09003057f, 0.24472847f, 0.66524096f}));
}

TEST(SoftmaxKernel, IsStableForLargeInputs) {
  NodeRun run = run_node({"Softmax", {}, {TestTensor::f32({3}, {1000, 1001, 1002})}, {f32_out({3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {0.09003057f, 0.24472847f, 0.66524096f}));
}

TEST(SoftmaxKernel, NormalizesAnInnerAxisFromOpset13) {
  NodeRun run =
      run_node({"Softmax", {Attribute::Int("axis", 0)}, {TestTensor::f32({2, 2}, {0, 5, 1, 6})}, {f32_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {0.26894142f, 0.26894142f, 0.7310586f, 0.7310586f}));
}

TEST(SoftmaxKernel, CoercesTo2DBeforeOpset13) {
  // Default axis 1 of [1, 2, 2]: one row of four elements.
  NodeRun old = run_node({"Softmax", {}, {TestTensor::f32({1, 2, 2}, {0, 1, 2, 3})}, {f32_out({1, 2, 2})}, 11});
  ASSERT_TRUE(old.ok()) << old.error;
  EXPECT_THAT(old.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {0.0320586f, 0.08714432f, 0.23688282f, 0.6439142f}));
  // The same input from opset 13 (default axis -1): two rows of two.
  NodeRun now = run_node({"Softmax", {}, {TestTensor::f32({1, 2, 2}, {0, 1, 2, 3})}, {f32_out({1, 2, 2})}, 13});
  ASSERT_TRUE(now.ok()) << now.error;
  EXPECT_THAT(now.outputs[0].floats(),
              Pointwise(FloatNear(kTolerance), {0.26894142f, 0.7310586f, 0.26894142f, 0.7310586f}));
}

TEST(SoftmaxKernel, RefusesAnAxisOutOfRange) {
  NodeRun run =
      run_node({"Softmax", {Attribute::Int("axis", 2)}, {TestTensor::f32({1, 3}, {-1, 0, 1})}, {f32_out({1, 3})}});
  EXPECT_THAT(run.error, HasSubstr("axis 2 is out of range for rank 2"));
}

TEST(SoftmaxKernel, RefusesInt64) {
  NodeRun run = run_node({"Softmax", {}, {TestTensor::i64({2}, {1, 2})}, {{DType::kInt64, {2}}}});
  EXPECT_THAT(run.error, HasSubstr("input 0 is int64, expected float32"));
}

TEST(LogSoftmaxKernel, IsTheLogOfSoftmax) {
  // ONNX example: [[-1, 0, 1]]; shifted by 1000 it must not overflow.
  NodeRun run = run_node({"LogSoftmax", {}, {TestTensor::f32({2, 3}, {-1, 0, 1, 999, 1000, 1001})}, {f32_out({2, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(),
              Pointwise(FloatNear(1e-4f), {-2.407606f, -1.407606f, -0.407606f, -2.407606f, -1.407606f, -0.407606f}));
}

TEST(LogSoftmaxKernel, CoercesTo2DBeforeOpset13) {
  NodeRun run =
      run_node({"LogSoftmax", {Attribute::Int("axis", 0)}, {TestTensor::f32({2, 1}, {0, 0})}, {f32_out({2, 1})}, 12});
  ASSERT_TRUE(run.ok()) << run.error;
  // Axis 0: a single row of both elements.
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), {-0.6931472f, -0.6931472f}));
}

}  // namespace
}  // namespace plugrt::portable::testing
