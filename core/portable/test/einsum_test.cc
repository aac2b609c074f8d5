// SPDX-License-Identifier: Apache-2.0
// Einsum against hand-computed results and a plain triple loop.
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

NodeSpec einsum(const std::string& equation, std::vector<std::optional<TestTensor>> inputs,
                std::vector<int64_t> out_shape) {
  return {"Einsum", {Attribute::String("equation", equation)}, std::move(inputs), {f32_out(std::move(out_shape))}, 12};
}

/// c[b][i][k] = sum_j a[b][i][j] * b[b][j][k], all row-major.
std::vector<float> batched_matmul(const std::vector<float>& a, const std::vector<float>& b, int batch, int m, int k,
                                  int n) {
  std::vector<float> c(static_cast<size_t>(batch * m * n), 0.0f);
  for (int p = 0; p < batch; ++p) {
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        for (int q = 0; q < k; ++q) c[(p * m + i) * n + j] += a[(p * m + i) * k + q] * b[(p * k + q) * n + j];
      }
    }
  }
  return c;
}

TEST(EinsumKernel, MultipliesMatrices) {
  NodeRun run = run_node(einsum(
      "ij,jk->ik", {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), TestTensor::f32({3, 2}, {1, 0, 0, 1, 1, 1})}, {2, 2}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(4, 5, 10, 11));
}

TEST(EinsumKernel, OtherNumericTypesRunTheLoop) {
  NodeRun doubles = run_node(
      {"Einsum",
       {Attribute::String("equation", "ij,jk->ik")},
       {typed_tensor<double>(DType::kDouble, {1, 2}, {1e-12, 2}), typed_tensor<double>(DType::kDouble, {2, 1}, {1, 3})},
       {{DType::kDouble, {1, 1}}},
       12});
  ASSERT_TRUE(doubles.ok()) << doubles.error;
  EXPECT_THAT(values_of<double>(doubles.outputs[0]), ElementsAre(6.000000000001));
  // int8 wraps around like ONNX integer arithmetic: 100 * 2 + 100 * 1 = 300 = 44 (mod 256).
  NodeRun bytes =
      run_node({"Einsum",
                {Attribute::String("equation", "i,i->")},
                {typed_tensor<int8_t>(DType::kInt8, {2}, {100, 100}), typed_tensor<int8_t>(DType::kInt8, {2}, {2, 1})},
                {{DType::kInt8, {}}},
                12});
  ASSERT_TRUE(bytes.ok()) << bytes.error;
  EXPECT_THAT(values_of<int8_t>(bytes.outputs[0]), ElementsAre(44));
  // float16 sums in float: 2048 + 1 + 1 is 2050 (2048 + 1 alone rounds back to 2048 in float16).
  NodeRun halves = run_node({"Einsum",
                             {Attribute::String("equation", "i->")},
                             {typed_tensor<uint16_t>(DType::kFloat16, {3}, {0x6800, 0x3c00, 0x3c00})},
                             {{DType::kFloat16, {}}},
                             12});
  ASSERT_TRUE(halves.ok()) << halves.error;
  EXPECT_THAT(values_of<uint16_t>(halves.outputs[0]), ElementsAre(0x6801));
  NodeRun mixed = run_node({"Einsum",
                            {Attribute::String("equation", "i,i->")},
                            {typed_tensor<double>(DType::kDouble, {1}, {1}), TestTensor::f32({1}, {1})},
                            {{DType::kDouble, {}}},
                            12});
  EXPECT_THAT(mixed.error, HasSubstr("input 1 is float32, expected double"));
}

TEST(EinsumKernel, BatchedMatmulMatchesALoop) {
  const std::vector<float> a = random_floats(2 * 3 * 4, 1), b = random_floats(2 * 4 * 5, 2);
  NodeRun run =
      run_node(einsum("bij,bjk->bik", {TestTensor::f32({2, 3, 4}, a), TestTensor::f32({2, 4, 5}, b)}, {2, 3, 5}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), batched_matmul(a, b, 2, 3, 4, 5)));
}

TEST(EinsumKernel, AttentionScoresReadTheKeysTransposed) {
  // q [1, 2, 3, 4] and k [1, 2, 5, 4]: scores[b, h, i, j] = sum_d q[b, h, i, d] * k[b, h, j, d].
  const std::vector<float> q = random_floats(2 * 3 * 4, 3), k = random_floats(2 * 5 * 4, 4);
  std::vector<float> k_t(k.size());
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < 5; ++j) {
      for (int d = 0; d < 4; ++d) k_t[(h * 4 + d) * 5 + j] = k[(h * 5 + j) * 4 + d];
    }
  }
  NodeRun run = run_node(
      einsum("bhid,bhjd->bhij", {TestTensor::f32({1, 2, 3, 4}, q), TestTensor::f32({1, 2, 5, 4}, k)}, {1, 2, 3, 5}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), batched_matmul(q, k_t, 2, 3, 4, 5)));
}

TEST(EinsumKernel, WritesAPermutedOutput) {
  // out[k, i] = sum_j a[i, j] * b[j, k]: the product, transposed.
  NodeRun run = run_node(einsum(
      "ij,jk->ki", {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), TestTensor::f32({3, 2}, {1, 0, 0, 1, 1, 1})}, {2, 2}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(4, 10, 5, 11));
}

TEST(EinsumKernel, Transposes) {
  NodeRun run = run_node(einsum("ij->ji", {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {3, 2}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(EinsumKernel, TakesADiagonalAndAnImplicitTrace) {
  const TestTensor square = TestTensor::f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  NodeRun diagonal = run_node(einsum("ii->i", {square}, {3}));
  ASSERT_TRUE(diagonal.ok()) << diagonal.error;
  EXPECT_THAT(diagonal.outputs[0].floats(), ElementsAre(1, 5, 9));
  NodeRun trace = run_node(einsum("ii", {square}, {}));
  ASSERT_TRUE(trace.ok()) << trace.error;
  EXPECT_THAT(trace.outputs[0].floats(), ElementsAre(15));
}

TEST(EinsumKernel, SumsAnAxisOfOneInput) {
  NodeRun run = run_node(einsum("ij->i", {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {2}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(6, 15));
}

TEST(EinsumKernel, InnerAndOuterProducts) {
  const TestTensor a = TestTensor::f32({3}, {1, 2, 3});
  const TestTensor b = TestTensor::f32({3}, {4, 5, 6});
  NodeRun inner = run_node(einsum("i,i", {a, b}, {}));
  ASSERT_TRUE(inner.ok()) << inner.error;
  EXPECT_THAT(inner.outputs[0].floats(), ElementsAre(32));
  NodeRun outer = run_node(einsum("i,j->ij", {a, TestTensor::f32({2}, {1, -1})}, {3, 2}));
  ASSERT_TRUE(outer.ok()) << outer.error;
  EXPECT_THAT(outer.outputs[0].floats(), ElementsAre(1, -1, 2, -2, 3, -3));
}

TEST(EinsumKernel, BroadcastsTheEllipsisAndOrdersAnImplicitOutput) {
  // "...ij,...jk": a [2, 2, 3] against one b [3, 2]; the implicit output is "...ik".
  const std::vector<float> a = random_floats(12, 5), b = random_floats(6, 6);
  std::vector<float> b_twice(b);
  b_twice.insert(b_twice.end(), b.begin(), b.end());
  NodeRun run = run_node(einsum("...ij,...jk", {TestTensor::f32({2, 2, 3}, a), TestTensor::f32({3, 2}, b)}, {2, 2, 2}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), Pointwise(FloatNear(kTolerance), batched_matmul(a, b_twice, 2, 2, 3, 2)));
  // Implicit letters come in alphabetical order: "ba" is "ba->ab", a transpose.
  NodeRun transposed = run_node(einsum("ba", {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {3, 2}));
  ASSERT_TRUE(transposed.ok()) << transposed.error;
  EXPECT_THAT(transposed.outputs[0].floats(), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(EinsumKernel, BroadcastsASizeOneEllipsisDimension) {
  // a [2, 1, 2] and b [3, 2]: "...i,...i->..." broadcasts to [2, 3].
  NodeRun run =
      run_node(einsum("...i,...i->...",
                      {TestTensor::f32({2, 1, 2}, {1, 2, 3, 4}), TestTensor::f32({3, 2}, {1, 0, 0, 1, 1, 1})}, {2, 3}));
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 2, 3, 3, 4, 7));
}

TEST(EinsumKernel, RefusesMismatchedSizes) {
  EXPECT_THAT(
      run_node(einsum("ij,jk->ik",
                      {TestTensor::f32({2, 3}, std::vector<float>(6)), TestTensor::f32({2, 2}, std::vector<float>(4))},
                      {2, 2}))
          .error,
      HasSubstr("index 'j' has size 3 in one place and 2 in input 1 [2, 2]"));
}

TEST(EinsumKernel, RefusesATermCountThatDoesNotMatchTheInputs) {
  EXPECT_THAT(run_node(einsum("ij,jk->ik", {TestTensor::f32({2, 2}, std::vector<float>(4))}, {2, 2})).error,
              HasSubstr("the equation has 2 input terms but the node has 1 inputs"));
}

TEST(EinsumKernel, RefusesAnOutputIndexNoInputHas) {
  EXPECT_THAT(run_node(einsum("ij->iz", {TestTensor::f32({2, 2}, std::vector<float>(4))}, {2, 2})).error,
              HasSubstr("output index 'z' appears in no input"));
}

TEST(EinsumKernel, RefusesAWrongRank) {
  EXPECT_THAT(run_node(einsum("ijk->i", {TestTensor::f32({2, 2}, std::vector<float>(4))}, {2})).error,
              HasSubstr("term 0 has 3 indices but input 0 has shape [2, 2]"));
}

TEST(EinsumKernel, RefusesAnEquationOfMoreThan2To40Steps) {
  // Five independent indices of 512: 2^45 products in one loop.
  const TestTensor v = TestTensor::f32({512}, std::vector<float>(512, 1.0f));
  EXPECT_THAT(run_node(einsum("a,b,c,d,e->", {v, v, v, v, v}, {})).error,
              HasSubstr("the equation takes more than 2^40 multiply-adds"));
}

TEST(EinsumKernel, RefusesABadCharacter) {
  EXPECT_THAT(run_node(einsum("i1->i", {TestTensor::f32({2, 2}, std::vector<float>(4))}, {2})).error,
              HasSubstr("holds '1', which is neither a letter nor part of '...'"));
}

}  // namespace
}  // namespace plugrt::portable::testing
