// SPDX-License-Identifier: Apache-2.0
// Gemm and MatMul against hand-computed results and a naive triple loop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-4 * (1.0 + std::fabs(expected[i]))) << "at element " << i;
  }
}

/// out[b] = a[b] x b[b] for `batches` row-major m x k and k x n matrices, where
/// a_index / b_index give each batch's matrix.
template <typename AIndex, typename BIndex>
std::vector<float> naive_batched(const std::vector<float>& a, const std::vector<float>& b, int64_t batches, int64_t m,
                                 int64_t n, int64_t k, AIndex a_index, BIndex b_index) {
  std::vector<float> out;
  for (int64_t batch = 0; batch < batches; ++batch) {
    const float* am = a.data() + a_index(batch) * m * k;
    const float* bm = b.data() + b_index(batch) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(am[i * k + p]) * bm[p * n + j];
        out.push_back(static_cast<float>(sum));
      }
    }
  }
  return out;
}

// ---- MatMul ----------------------------------------------------------------------------

TEST(MatMulKernel, MultipliesTwoMatrices) {
  NodeRun run = run_node({"MatMul",
                          {},
                          {TestTensor::f32({2, 2}, {1, 2, 3, 4}), TestTensor::f32({2, 2}, {5, 6, 7, 8})},
                          {{DType::kFloat32, {2, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(19, 22, 43, 50));
}

TEST(MatMulKernel, PromotesOneDimensionalOperands) {
  const TestTensor row = TestTensor::f32({2}, {1, 2});
  const TestTensor matrix = TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  NodeRun vector_matrix = run_node({"MatMul", {}, {row, matrix}, {{DType::kFloat32, {3}}}});
  ASSERT_TRUE(vector_matrix.ok()) << vector_matrix.error;
  EXPECT_THAT(vector_matrix.outputs[0].floats(), ElementsAre(9, 12, 15));

  NodeRun matrix_vector =
      run_node({"MatMul", {}, {TestTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6}), row}, {{DType::kFloat32, {3}}}});
  ASSERT_TRUE(matrix_vector.ok()) << matrix_vector.error;
  EXPECT_THAT(matrix_vector.outputs[0].floats(), ElementsAre(5, 11, 17));

  NodeRun dot = run_node({"MatMul", {}, {row, TestTensor::f32({2}, {3, 4})}, {{DType::kFloat32, {}}}});
  ASSERT_TRUE(dot.ok()) << dot.error;
  EXPECT_THAT(dot.outputs[0].floats(), ElementsAre(11));

  NodeRun batched_vector = run_node({"MatMul",
                                     {},
                                     {TestTensor::f32({2, 1, 2}, {1, 2, 3, 4}), TestTensor::f32({2}, {1, 1})},
                                     {{DType::kFloat32, {2, 1}}}});
  ASSERT_TRUE(batched_vector.ok()) << batched_vector.error;
  EXPECT_THAT(batched_vector.outputs[0].floats(), ElementsAre(3, 7));
}

TEST(MatMulKernel, MatchesANaiveLoopOnALargerMatrix) {
  const int64_t m = 67, k = 45, n = 71;
  const std::vector<float> a = random_floats(static_cast<size_t>(m * k), 1),
                           b = random_floats(static_cast<size_t>(k * n), 2);
  NodeRun run =
      run_node({"MatMul", {}, {TestTensor::f32({m, k}, a), TestTensor::f32({k, n}, b)}, {{DType::kFloat32, {m, n}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  auto zero = [](int64_t) { return int64_t{0}; };
  expect_close(run.outputs[0].floats(), naive_batched(a, b, 1, m, n, k, zero, zero));
}

TEST(MatMulKernel, MatchesANaiveLoopForOneToThreeRows) {
  // A single row (a batch of 1) streams B once; 2 and 3 rows take narrower register
  // tiles. 300 columns cross a column block (256) and end in a partial tile.
  const int64_t k = 45, n = 300;
  for (int64_t m : {1, 2, 3, 5}) {
    const std::vector<float> a = random_floats(static_cast<size_t>(m * k), 3),
                             b = random_floats(static_cast<size_t>(k * n), 4);
    NodeRun run =
        run_node({"MatMul", {}, {TestTensor::f32({m, k}, a), TestTensor::f32({k, n}, b)}, {{DType::kFloat32, {m, n}}}});
    ASSERT_TRUE(run.ok()) << run.error;
    auto zero = [](int64_t) { return int64_t{0}; };
    SCOPED_TRACE(m);
    expect_close(run.outputs[0].floats(), naive_batched(a, b, 1, m, n, k, zero, zero));
  }
}

TEST(MatMulKernel, BroadcastsBatchDims) {
  // A [2, 1, 5, 3] x B [3, 3, 4] -> [2, 3, 5, 4]: A's batch repeats over B's 3, B's over A's 2.
  const std::vector<float> a = random_floats(2 * 5 * 3, 3), b = random_floats(3 * 3 * 4, 4);
  NodeRun run = run_node({"MatMul",
                          {},
                          {TestTensor::f32({2, 1, 5, 3}, a), TestTensor::f32({3, 3, 4}, b)},
                          {{DType::kFloat32, {2, 3, 5, 4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  expect_close(run.outputs[0].floats(),
               naive_batched(
                   a, b, 6, 5, 4, 3, [](int64_t i) { return i / 3; }, [](int64_t i) { return i % 3; }));
}

TEST(MatMulKernel, SharesAOneMatrixBAcrossTheBatch) {
  const std::vector<float> a = random_floats(2 * 3 * 9 * 10, 5), b = random_floats(10 * 6, 6);
  NodeRun run = run_node({"MatMul",
                          {},
                          {TestTensor::f32({2, 3, 9, 10}, a), TestTensor::f32({1, 10, 6}, b)},
                          {{DType::kFloat32, {2, 3, 9, 6}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  expect_close(run.outputs[0].floats(),
               naive_batched(
                   a, b, 6, 9, 6, 10, [](int64_t i) { return i; }, [](int64_t) { return int64_t{0}; }));
}

TEST(MatMulKernel, HandlesAnEmptyInnerDimension) {
  NodeRun run = run_node({"MatMul",
                          {},
                          {TestTensor::f32({2, 0}, {}).as_constant(), TestTensor::f32({0, 3}, {}).as_constant()},
                          {{DType::kFloat32, {2, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(MatMulKernel, RefusesMismatchedInnerDims) {
  NodeRun run =
      run_node({"MatMul",
                {},
                {TestTensor::f32({2, 3}, std::vector<float>(6)), TestTensor::f32({2, 2}, std::vector<float>(4))},
                {{DType::kFloat32, {2, 2}}}});
  EXPECT_THAT(run.error, HasSubstr("shapes [2, 3] and [2, 2] do not multiply"));
}

TEST(MatMulKernel, RefusesBatchDimsThatDoNotBroadcastAndAWrongOutput) {
  NodeRun batch = run_node({"MatMul",
                            {},
                            {TestTensor::f32({2, 1, 1}, {1, 2}), TestTensor::f32({3, 1, 1}, {1, 2, 3})},
                            {{DType::kFloat32, {3, 1, 1}}}});
  EXPECT_THAT(batch.error, HasSubstr("do not broadcast"));
  NodeRun output =
      run_node({"MatMul", {}, {TestTensor::f32({2}, {1, 2}), TestTensor::f32({2}, {1, 2})}, {{DType::kFloat32, {1}}}});
  EXPECT_THAT(output.error, HasSubstr("output 0 has shape [1], but the inputs give []"));
}

// ---- Gemm ------------------------------------------------------------------------------

TEST(GemmKernel, AppliesAlphaBetaTransposesAndBroadcastsC) {
  // A' = [[1, 2], [3, 4]] (A given transposed), B' = [[1, 0], [1, 1]] (B given transposed).
  // A' x B' = [[3, 2], [7, 4]]; Y = 2 * that + 0.5 * [10, 20].
  NodeRun run = run_node(
      {"Gemm",
       {Attribute::Float("alpha", 2.0f), Attribute::Float("beta", 0.5f), Attribute::Int("transA", 1),
        Attribute::Int("transB", 1)},
       {TestTensor::f32({2, 2}, {1, 3, 2, 4}), TestTensor::f32({2, 2}, {1, 1, 0, 1}), TestTensor::f32({2}, {10, 20})},
       {{DType::kFloat32, {2, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(11, 14, 19, 18));
}

TEST(GemmKernel, BroadcastsAColumnOrAScalarCAndAllowsNoC) {
  const TestTensor a = TestTensor::f32({2, 1}, {1, 2});
  const TestTensor b = TestTensor::f32({1, 3}, {1, 2, 3});
  NodeRun column = run_node({"Gemm", {}, {a, b, TestTensor::f32({2, 1}, {100, 200})}, {{DType::kFloat32, {2, 3}}}});
  ASSERT_TRUE(column.ok()) << column.error;
  EXPECT_THAT(column.outputs[0].floats(), ElementsAre(101, 102, 103, 202, 204, 206));
  NodeRun scalar = run_node({"Gemm", {}, {a, b, TestTensor::f32({}, {-1})}, {{DType::kFloat32, {2, 3}}}});
  ASSERT_TRUE(scalar.ok()) << scalar.error;
  EXPECT_THAT(scalar.outputs[0].floats(), ElementsAre(0, 1, 2, 1, 3, 5));
  NodeRun none = run_node({"Gemm", {}, {a, b}, {{DType::kFloat32, {2, 3}}}});
  ASSERT_TRUE(none.ok()) << none.error;
  EXPECT_THAT(none.outputs[0].floats(), ElementsAre(1, 2, 3, 2, 4, 6));
}

TEST(GemmKernel, MatchesANaiveLoopWithTransposedB) {
  // A fully connected layer as exported from PyTorch: Y = X W^T + b.
  const int64_t m = 13, k = 50, n = 37;
  const std::vector<float> x = random_floats(static_cast<size_t>(m * k), 7),
                           w = random_floats(static_cast<size_t>(n * k), 8);
  const std::vector<float> bias = random_floats(static_cast<size_t>(n), 9);
  NodeRun run = run_node(
      {"Gemm",
       {Attribute::Int("transB", 1)},
       {TestTensor::f32({m, k}, x), TestTensor::f32({n, k}, w).as_constant(), TestTensor::f32({n}, bias).as_constant()},
       {{DType::kFloat32, {m, n}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  std::vector<float> wt(static_cast<size_t>(k * n));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) wt[static_cast<size_t>(p * n + j)] = w[static_cast<size_t>(j * k + p)];
  }
  auto zero = [](int64_t) { return int64_t{0}; };
  std::vector<float> expected = naive_batched(x, wt, 1, m, n, k, zero, zero);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] += bias[i % static_cast<size_t>(n)];
  expect_close(run.outputs[0].floats(), expected);
}

TEST(GemmKernel, MatchesANaiveLoopForOneRowWithTransposedOperands) {
  // One row of A given transposed ([k, 1]) times B transposed: dot products along B's rows.
  const int64_t k = 50, n = 37;
  const std::vector<float> a = random_floats(static_cast<size_t>(k), 10),
                           w = random_floats(static_cast<size_t>(n * k), 11);
  NodeRun run = run_node({"Gemm",
                          {Attribute::Int("transA", 1), Attribute::Int("transB", 1), Attribute::Float("alpha", 0.5f)},
                          {TestTensor::f32({k, 1}, a), TestTensor::f32({n, k}, w)},
                          {{DType::kFloat32, {1, n}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  std::vector<float> expected(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double sum = 0;
    for (int64_t p = 0; p < k; ++p)
      sum += static_cast<double>(a[static_cast<size_t>(p)]) * w[static_cast<size_t>(j * k + p)];
    expected[static_cast<size_t>(j)] = static_cast<float>(0.5 * sum);
  }
  expect_close(run.outputs[0].floats(), expected);
}

TEST(GemmKernel, RefusesACThatDoesNotBroadcast) {
  NodeRun run = run_node(
      {"Gemm",
       {},
       {TestTensor::f32({2, 2}, {1, 2, 3, 4}), TestTensor::f32({2, 2}, {1, 2, 3, 4}), TestTensor::f32({3}, {1, 2, 3})},
       {{DType::kFloat32, {2, 2}}}});
  EXPECT_THAT(run.error, HasSubstr("C has shape [3], which does not broadcast to [2, 2]"));
}

TEST(GemmKernel, RefusesMismatchedOperandsAndAWrongOutput) {
  NodeRun operands =
      run_node({"Gemm",
                {Attribute::Int("transA", 1)},
                {TestTensor::f32({2, 3}, std::vector<float>(6)), TestTensor::f32({3, 2}, std::vector<float>(6))},
                {{DType::kFloat32, {3, 2}}}});
  EXPECT_THAT(operands.error, HasSubstr("do not multiply"));
  NodeRun output =
      run_node({"Gemm",
                {},
                {TestTensor::f32({2, 3}, std::vector<float>(6)), TestTensor::f32({3, 2}, std::vector<float>(6))},
                {{DType::kFloat32, {3, 3}}}});
  EXPECT_THAT(output.error, HasSubstr("but the inputs give [2, 2]"));
  NodeRun old = run_node(
      {"Gemm", {}, {TestTensor::f32({1, 1}, {1}), TestTensor::f32({1, 1}, {1})}, {{DType::kFloat32, {1, 1}}}, 9});
  EXPECT_THAT(old.error, HasSubstr("C) is required before opset 11"));
  EXPECT_THAT(
      run_node({"Gemm", {}, {TestTensor::f32({1, 1}, {1}), TestTensor::f32({1, 1}, {1})}, {{DType::kFloat32, {1, 1}}}})
          .error,
      IsEmpty());
}

}  // namespace
}  // namespace plugrt::portable::testing
