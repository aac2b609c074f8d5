// SPDX-License-Identifier: Apache-2.0
// ArgMax, ArgMin, TopK, GatherElements, GatherND, ScatterElements, ScatterND, OneHot and
// NonZero (indexing.cc) against ONNX's examples and hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

OutputSpec i64_out(std::vector<int64_t> shape) { return {DType::kInt64, std::move(shape)}; }

TEST(ArgKernels, TiesGoToTheFirstIndexUnlessSelectLastIndex) {
  const TestTensor x = TestTensor::f32({2, 3}, {2, 5, 5, 7, 1, 7});
  NodeRun first = run_node({"ArgMax", {Attribute::Int("axis", -1)}, {x}, {i64_out({2, 1})}});
  ASSERT_TRUE(first.ok()) << first.error;
  EXPECT_THAT(first.outputs[0].ints(), ElementsAre(1, 0));
  NodeRun last =
      run_node({"ArgMax", {Attribute::Int("axis", 1), Attribute::Int("select_last_index", 1)}, {x}, {i64_out({2, 1})}});
  ASSERT_TRUE(last.ok()) << last.error;
  EXPECT_THAT(last.outputs[0].ints(), ElementsAre(2, 2));
  NodeRun min = run_node({"ArgMin", {Attribute::Int("axis", 0), Attribute::Int("keepdims", 0)}, {x}, {i64_out({3})}});
  ASSERT_TRUE(min.ok()) << min.error;
  EXPECT_THAT(min.outputs[0].ints(), ElementsAre(0, 1, 0));
}

TEST(ArgKernels, RefuseAnAxisOutOfRange) {
  NodeRun run = run_node(
      {"ArgMin", {Attribute::Int("axis", 2)}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {i64_out({2, 3})}});
  EXPECT_THAT(run.error, HasSubstr("axis 2 is out of range for rank 2"));
}

TEST(TopKKernel, LargestAndSmallestWithTiesInIndexOrder) {
  const TestTensor x = TestTensor::f32({2, 4}, {1, 3, 3, 2, 0, -1, 4, 4});
  const TestTensor k = TestTensor::i64({1}, {2}).as_constant();
  NodeRun run = run_node({"TopK", {}, {x, k}, {f32_out({2, 2}), i64_out({2, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(3, 3, 4, 4));
  EXPECT_THAT(run.outputs[1].ints(), ElementsAre(1, 2, 2, 3));
  NodeRun small = run_node({"TopK",
                            {Attribute::Int("largest", 0), Attribute::Int("axis", 0)},
                            {x, TestTensor::i64({1}, {1}).as_constant()},
                            {f32_out({1, 4}), i64_out({1, 4})}});
  ASSERT_TRUE(small.ok()) << small.error;
  EXPECT_THAT(small.outputs[0].floats(), ElementsAre(0, -1, 3, 2));
  EXPECT_THAT(small.outputs[1].ints(), ElementsAre(1, 1, 0, 0));
}

TEST(TopKKernel, RefusesKBeyondTheAxisAndReadsKGivenAtRunTime) {
  const TestTensor x = TestTensor::f32({3}, {1, 2, 3});
  NodeRun big = run_node({"TopK", {}, {x, TestTensor::i64({1}, {4}).as_constant()}, {f32_out({4}), i64_out({4})}});
  EXPECT_THAT(big.error, HasSubstr("k = 4 is outside [0, 3]"));
  NodeRun fed = run_node({"TopK", {}, {x, TestTensor::i64({1}, {1})}, {f32_out({1}), i64_out({1})}});
  ASSERT_TRUE(fed.ok()) << fed.error;
  EXPECT_THAT(fed.outputs[0].floats(), ElementsAre(3));
  EXPECT_THAT(fed.outputs[1].ints(), ElementsAre(2));
}

TEST(GatherElementsKernel, OnnxExampleWithNegativeIndices) {
  // data [[1, 2, 3], [4, 5, 6], [7, 8, 9]], indices [[-1, -2, 0], [-2, 0, 0]], axis 0.
  NodeRun run =
      run_node({"GatherElements",
                {Attribute::Int("axis", 0)},
                {TestTensor::f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), TestTensor::i32({2, 3}, {-1, -2, 0, -2, 0, 0})},
                {f32_out({2, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(7, 5, 3, 4, 2, 3));
}

TEST(GatherElementsKernel, RefusesConstantIndicesOutOfRangeAndZeroesComputedOnes) {
  const TestTensor data = TestTensor::f32({2, 2}, {1, 2, 3, 4});
  const TestTensor bad = TestTensor::i64({2, 2}, {0, 1, 2, 0});
  NodeRun refused =
      run_node({"GatherElements", {Attribute::Int("axis", 1)}, {data, bad.as_constant()}, {f32_out({2, 2})}});
  EXPECT_THAT(refused.error, HasSubstr("index 2 (element 2 of the indices) is out of range for an axis of length 2"));
  NodeRun zeroed = run_node({"GatherElements", {Attribute::Int("axis", 1)}, {data, bad}, {f32_out({2, 2})}});
  ASSERT_TRUE(zeroed.ok()) << zeroed.error;
  EXPECT_THAT(zeroed.outputs[0].floats(), ElementsAre(1, 2, 0, 3));
}

TEST(ScatterElementsKernel, OnnxExampleAndAddReduction) {
  // data zeros(3, 3), indices [[1, 0, 2], [0, 2, 1]], updates [[1, 1.1, 1.2], [2, 2.1, 2.2]].
  const TestTensor data = TestTensor::f32({3, 3}, std::vector<float>(9, 0));
  const TestTensor indices = TestTensor::i64({2, 3}, {1, 0, 2, 0, 2, 1});
  const TestTensor updates = TestTensor::f32({2, 3}, {1, 1.1f, 1.2f, 2, 2.1f, 2.2f});
  NodeRun run = run_node({"ScatterElements", {}, {data, indices, updates}, {f32_out({3, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(2, 1.1f, 0, 1, 0, 2.2f, 0, 2.1f, 1.2f));
  // Duplicate indices accumulate with reduction "add": [[1, 2, 3, 4, 5]], [[1, 1]] += [[1.1, 2.1]].
  NodeRun add = run_node({"ScatterElements",
                          {Attribute::Int("axis", 1), Attribute::String("reduction", "add")},
                          {TestTensor::f32({1, 5}, {1, 2, 3, 4, 5}), TestTensor::i64({1, 2}, {1, 1}),
                           TestTensor::f32({1, 2}, {1.1f, 2.1f})},
                          {f32_out({1, 5})},
                          16});
  ASSERT_TRUE(add.ok()) << add.error;
  EXPECT_THAT(add.outputs[0].floats(), Pointwise(FloatNear(1e-5f), {1.0f, 5.2f, 3.0f, 4.0f, 5.0f}));
}

TEST(GatherNDKernel, OnnxExamplesWithAndWithoutBatchDims) {
  const TestTensor data = TestTensor::i32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  NodeRun slices = run_node({"GatherND", {}, {data, TestTensor::i64({2, 1}, {1, 0})}, {{DType::kInt32, {2, 2, 2}}}});
  ASSERT_TRUE(slices.ok()) << slices.error;
  EXPECT_THAT(slices.outputs[0].int32s(), ElementsAre(4, 5, 6, 7, 0, 1, 2, 3));
  NodeRun batched = run_node({"GatherND",
                              {Attribute::Int("batch_dims", 1)},
                              {data, TestTensor::i64({2, 1}, {1, 0})},
                              {{DType::kInt32, {2, 2}}}});
  ASSERT_TRUE(batched.ok()) << batched.error;
  EXPECT_THAT(batched.outputs[0].int32s(), ElementsAre(2, 3, 4, 5));
  NodeRun bad =
      run_node({"GatherND", {}, {data, TestTensor::i64({1, 1}, {-3}).as_constant()}, {{DType::kInt32, {1, 2, 2}}}});
  EXPECT_THAT(bad.error, HasSubstr("index -3 (element 0 of the indices) is out of range"));
}

TEST(ScatterNDKernel, OnnxExampleAndMulReduction) {
  NodeRun run = run_node({"ScatterND",
                          {},
                          {TestTensor::f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), TestTensor::i64({4, 1}, {4, 3, 1, 7}),
                           TestTensor::f32({4}, {9, 10, 11, 12})},
                          {f32_out({8})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 11, 3, 10, 9, 6, 7, 12));
  NodeRun mul =
      run_node({"ScatterND",
                {Attribute::String("reduction", "mul")},
                {TestTensor::f32({3}, {1, 2, 3}), TestTensor::i64({2, 1}, {1, 1}), TestTensor::f32({2}, {3, 4})},
                {f32_out({3})},
                16});
  ASSERT_TRUE(mul.ok()) << mul.error;
  EXPECT_THAT(mul.outputs[0].floats(), ElementsAre(1, 24, 3));
}

TEST(OneHotKernel, NegativeIndicesAndAnAxis) {
  // indices [0, -1, -8] with depth 4: -1 is 3, -8 is out of range (all off). values [off, on] = [1, 3].
  NodeRun run = run_node(
      {"OneHot",
       {Attribute::Int("axis", 0)},
       {TestTensor::i64({3}, {0, -1, -8}), TestTensor::f32({1}, {4}).as_constant(), TestTensor::f32({2}, {1, 3})},
       {f32_out({4, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1));
  NodeRun fed = run_node({"OneHot",
                          {},
                          {TestTensor::i64({1}, {0}), TestTensor::f32({1}, {4}), TestTensor::f32({2}, {0, 1})},
                          {f32_out({1, 4})}});
  ASSERT_TRUE(fed.ok()) << fed.error;
  EXPECT_THAT(fed.outputs[0].floats(), ElementsAre(1, 0, 0, 0));
}

TEST(NonZeroKernel, TakesAConstantOrAFedInputOfTheDeclaredCount) {
  const TestTensor x = TestTensor::f32({2, 2}, {1, 0, 1, 1});
  NodeRun run = run_node({"NonZero", {}, {x.as_constant()}, {i64_out({2, 3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, 1, 1, 0, 0, 1));
  NodeRun fed = run_node({"NonZero", {}, {x}, {i64_out({2, 3})}});
  ASSERT_TRUE(fed.ok()) << fed.error;
  EXPECT_THAT(fed.outputs[0].ints(), ElementsAre(0, 1, 1, 0, 0, 1));
  NodeRun other = run_node({"NonZero", {}, {x}, {i64_out({2, 2})}});
  EXPECT_THAT(other.error, HasSubstr("found 3 non-zero elements, but its output was compiled for 2"));
}

// ---- Unique ----------------------------------------------------------------------------

TEST(UniqueKernel, SortsOrKeepsTheFirstOccurrenceOrder) {
  // ONNX's example: [2, 1, 1, 3, 4, 3].
  const TestTensor x = TestTensor::f32({6}, {2, 1, 1, 3, 4, 3});
  const std::vector<OutputSpec> outs = {f32_out({4}), i64_out({4}), i64_out({6}), i64_out({4})};
  NodeRun sorted = run_node({"Unique", {}, {x}, outs});
  ASSERT_TRUE(sorted.ok()) << sorted.error;
  EXPECT_THAT(sorted.outputs[0].floats(), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(sorted.outputs[1].ints(), ElementsAre(1, 0, 3, 4));
  EXPECT_THAT(sorted.outputs[2].ints(), ElementsAre(1, 0, 0, 2, 3, 2));
  EXPECT_THAT(sorted.outputs[3].ints(), ElementsAre(2, 1, 2, 1));
  NodeRun unsorted = run_node({"Unique", {Attribute::Int("sorted", 0)}, {x}, outs});
  ASSERT_TRUE(unsorted.ok()) << unsorted.error;
  EXPECT_THAT(unsorted.outputs[0].floats(), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(unsorted.outputs[1].ints(), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(unsorted.outputs[2].ints(), ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(unsorted.outputs[3].ints(), ElementsAre(1, 2, 2, 1));
}

TEST(UniqueKernel, ComparesSlicesAlongAnAxisAndChecksTheDeclaredCount) {
  const TestTensor x = TestTensor::f32({3, 2}, {1, 0, 0, 1, 1, 0});
  NodeRun rows = run_node({"Unique", {Attribute::Int("axis", 0)}, {x}, {f32_out({2, 2}), i64_out({2})}});
  ASSERT_TRUE(rows.ok()) << rows.error;
  EXPECT_THAT(rows.outputs[0].floats(), ElementsAre(0, 1, 1, 0));
  EXPECT_THAT(rows.outputs[1].ints(), ElementsAre(1, 0));
  NodeRun other = run_node({"Unique", {}, {x}, {f32_out({3})}});
  EXPECT_THAT(other.error, HasSubstr("found 2 unique values, but its outputs were compiled for 3"));
}

TEST(CompressKernel, SelectsAlongAnAxisOrFromTheFlatInput) {
  const TestTensor x = TestTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const TestTensor condition = TestTensor::boolean({3}, {false, true, true}).as_constant();
  NodeRun rows = run_node({"Compress", {Attribute::Int("axis", 0)}, {x, condition}, {f32_out({2, 2})}});
  ASSERT_TRUE(rows.ok()) << rows.error;
  EXPECT_THAT(rows.outputs[0].floats(), ElementsAre(3, 4, 5, 6));
  NodeRun flat = run_node({"Compress", {}, {x, condition}, {f32_out({2})}});
  ASSERT_TRUE(flat.ok()) << flat.error;
  EXPECT_THAT(flat.outputs[0].floats(), ElementsAre(2, 3));
  NodeRun fed = run_node({"Compress", {}, {x, TestTensor::boolean({3}, {true, false, true})}, {f32_out({2})}});
  ASSERT_TRUE(fed.ok()) << fed.error;
  EXPECT_THAT(fed.outputs[0].floats(), ElementsAre(1, 3));
  EXPECT_THAT(run_node({"Compress", {}, {x, TestTensor::boolean({3}, {true, true, true})}, {f32_out({2})}}).error,
              HasSubstr("(with input 1 = [true, true, true], given at run time)"));
}

}  // namespace
}  // namespace plugrt::portable::testing
