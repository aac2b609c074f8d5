// SPDX-License-Identifier: Apache-2.0
// Tile, DepthToSpace, SpaceToDepth, Trilu and CumSum (rearrange.cc).
#include <cstdint>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TileKernel, RepeatsEachAxis) {
  NodeRun run = run_node({"Tile",
                          {},
                          {TestTensor::f32({2, 2}, {0, 1, 2, 3}), TestTensor::i64({2}, {2, 1}).as_constant()},
                          {f32_out({4, 2})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(0, 1, 2, 3, 0, 1, 2, 3));
  NodeRun wrong = run_node(
      {"Tile", {}, {TestTensor::f32({2}, {0, 1}), TestTensor::i64({2}, {1, 1}).as_constant()}, {f32_out({2})}});
  EXPECT_THAT(wrong.error, HasSubstr("the repeats hold 2 counts for an input of rank 1"));
}

TEST(BlockKernels, DepthToSpaceModesAndSpaceToDepthInvertDcr) {
  // 8 channels to 2 with blocksize 2: DCR and CRD group the channels differently.
  std::vector<float> values(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const TestTensor x = TestTensor::f32({1, 8, 1, 2}, values);
  NodeRun dcr = run_node({"DepthToSpace", {Attribute::Int("blocksize", 2)}, {x}, {f32_out({1, 2, 2, 4})}});
  ASSERT_TRUE(dcr.ok()) << dcr.error;
  EXPECT_THAT(dcr.outputs[0].floats(), ElementsAre(0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15));
  NodeRun crd = run_node({"DepthToSpace",
                          {Attribute::Int("blocksize", 2), Attribute::String("mode", "CRD")},
                          {x},
                          {f32_out({1, 2, 2, 4})}});
  ASSERT_TRUE(crd.ok()) << crd.error;
  EXPECT_THAT(crd.outputs[0].floats(), ElementsAre(0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15));
  NodeRun back =
      run_node({"SpaceToDepth", {Attribute::Int("blocksize", 2)}, {dcr.outputs[0]}, {f32_out({1, 8, 1, 2})}});
  ASSERT_TRUE(back.ok()) << back.error;
  EXPECT_EQ(back.outputs[0].floats(), values);
}

TEST(RearrangeKernels, RefuseSizesThatWouldOverflow) {
  NodeRun tile = run_node({"Tile",
                           {},
                           {TestTensor::f32({2}, {0, 1}), TestTensor::i64({1}, {int64_t{1} << 62}).as_constant()},
                           {f32_out({2})}});
  EXPECT_THAT(tile.error, HasSubstr("overflows axis 0"));
  NodeRun block = run_node({"DepthToSpace",
                            {Attribute::Int("blocksize", int64_t{1} << 32)},
                            {TestTensor::f32({1, 1, 1, 1}, {0})},
                            {f32_out({1, 1, 1, 1})}});
  EXPECT_THAT(block.error, HasSubstr("blocksize must be in [1, 65536]"));
}

TEST(TriluKernel, UpperAndLowerWithAnOffset) {
  const TestTensor x = TestTensor::f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  NodeRun upper = run_node({"Trilu", {}, {x, TestTensor::i64({}, {1}).as_constant()}, {f32_out({3, 3})}});
  ASSERT_TRUE(upper.ok()) << upper.error;
  EXPECT_THAT(upper.outputs[0].floats(), ElementsAre(0, 2, 3, 0, 0, 6, 0, 0, 0));
  NodeRun lower = run_node(
      {"Trilu", {Attribute::Int("upper", 0)}, {x, TestTensor::i64({}, {-1}).as_constant()}, {f32_out({3, 3})}});
  ASSERT_TRUE(lower.ok()) << lower.error;
  EXPECT_THAT(lower.outputs[0].floats(), ElementsAre(0, 0, 0, 4, 0, 0, 7, 8, 0));
}

TEST(CumSumKernel, ExclusiveAndReverse) {
  const TestTensor x = TestTensor::f32({5}, {1, 2, 3, 4, 5});
  const TestTensor axis = TestTensor::i32({}, {0}).as_constant();
  NodeRun plain = run_node({"CumSum", {}, {x, axis}, {f32_out({5})}});
  ASSERT_TRUE(plain.ok()) << plain.error;
  EXPECT_THAT(plain.outputs[0].floats(), ElementsAre(1, 3, 6, 10, 15));
  NodeRun both =
      run_node({"CumSum", {Attribute::Int("exclusive", 1), Attribute::Int("reverse", 1)}, {x, axis}, {f32_out({5})}});
  ASSERT_TRUE(both.ok()) << both.error;
  EXPECT_THAT(both.outputs[0].floats(), ElementsAre(14, 12, 9, 5, 0));
  NodeRun rows = run_node({"CumSum",
                           {},
                           {TestTensor::i64({2, 3}, {1, 2, 3, 4, 5, 6}), TestTensor::i64({}, {-1}).as_constant()},
                           {{DType::kInt64, {2, 3}}}});
  ASSERT_TRUE(rows.ok()) << rows.error;
  EXPECT_THAT(rows.outputs[0].ints(), ElementsAre(1, 3, 6, 4, 9, 15));
}

TEST(TriluKernel, ReadsKGivenAtRunTime) {
  const TestTensor x = TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  NodeRun upper = run_node({"Trilu", {}, {x, TestTensor::i64({}, {1})}, {f32_out({2, 3})}});
  ASSERT_TRUE(upper.ok()) << upper.error;
  EXPECT_THAT(upper.outputs[0].floats(), ElementsAre(0, 2, 3, 0, 0, 6));
  // A k far beyond the matrix keeps everything (lower) without overflowing.
  NodeRun lower = run_node({"Trilu",
                            {Attribute::Int("upper", 0)},
                            {x, TestTensor::i64({}, {std::numeric_limits<int64_t>::max()})},
                            {f32_out({2, 3})}});
  ASSERT_TRUE(lower.ok()) << lower.error;
  EXPECT_THAT(lower.outputs[0].floats(), ElementsAre(1, 2, 3, 4, 5, 6));
  NodeRun wrong = run_node({"Trilu", {}, {x, TestTensor::f32({}, {1})}, {f32_out({2, 3})}});
  EXPECT_THAT(wrong.error, HasSubstr("k (input 1) must be an int64 scalar"));
}

TEST(CumSumKernel, ReadsTheAxisGivenAtRunTime) {
  const TestTensor x = TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6});
  NodeRun columns = run_node({"CumSum", {}, {x, TestTensor::i64({}, {0})}, {f32_out({2, 3})}});
  ASSERT_TRUE(columns.ok()) << columns.error;
  EXPECT_THAT(columns.outputs[0].floats(), ElementsAre(1, 2, 3, 5, 7, 9));
  NodeRun rows = run_node({"CumSum", {}, {x, TestTensor::i32({}, {-1})}, {f32_out({2, 3})}});
  ASSERT_TRUE(rows.ok()) << rows.error;
  EXPECT_THAT(rows.outputs[0].floats(), ElementsAre(1, 3, 6, 4, 9, 15));
}

TEST(CumSumKernel, AnAxisOutOfRangeAtRunTimeFailsTheRun) {
  NodeRun run = run_node(
      {"CumSum", {}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), TestTensor::i64({}, {2})}, {f32_out({2, 3})}});
  EXPECT_THAT(run.error, HasSubstr("CumSum: axis 2 (input 1) is out of range for rank 2"));
  NodeRun scalar = run_node({"CumSum", {}, {TestTensor::f32({}, {1}), TestTensor::i64({}, {0})}, {f32_out({})}});
  EXPECT_THAT(scalar.error, HasSubstr("the input must have rank 1 or more"));
}

TEST(EyeLikeKernel, OnesOnAnOffsetDiagonalInTheRequestedDtype) {
  NodeRun run = run_node({"EyeLike",
                          {Attribute::Int("k", 1), Attribute::Int("dtype", 7)},
                          {TestTensor::f32({2, 3}, {9, 9, 9, 9, 9, 9})},
                          {{DType::kInt64, {2, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(0, 1, 0, 0, 0, 1));
}

TEST(RangeKernel, CountsFromStartByDeltaBelowLimit) {
  auto scalar = [](int64_t v) { return TestTensor::i64({}, {v}); };
  NodeRun up = run_node({"Range", {}, {scalar(1), scalar(8), scalar(3)}, {{DType::kInt64, {3}}}});
  ASSERT_TRUE(up.ok()) << up.error;
  EXPECT_THAT(up.outputs[0].ints(), ElementsAre(1, 4, 7));
  NodeRun down = run_node({"Range",
                           {},
                           {TestTensor::f32({}, {1}), TestTensor::f32({}, {-1}), TestTensor::f32({}, {-0.5f})},
                           {{DType::kFloat32, {4}}}});
  ASSERT_TRUE(down.ok()) << down.error;
  EXPECT_THAT(down.outputs[0].floats(), ElementsAre(1, 0.5f, 0, -0.5f));
  // Given at run time, the values must give the compiled length.
  EXPECT_THAT(run_node({"Range", {}, {scalar(0), scalar(4), scalar(1)}, {{DType::kInt64, {3}}}}).error,
              HasSubstr("output 0 has shape [3], but the inputs give [4]"));
  EXPECT_THAT(run_node({"Range", {}, {scalar(0), scalar(4), scalar(0)}, {{DType::kInt64, {3}}}}).error,
              HasSubstr("delta is 0"));
  EXPECT_THAT(run_node({"Range", {}, {scalar(0), TestTensor::i32({}, {4}), scalar(1)}, {{DType::kInt64, {4}}}}).error,
              HasSubstr("scalars of one dtype"));
}

TEST(ReverseSequenceKernel, ReversesEachBatchEntrysPrefix) {
  // time_axis 1, batch_axis 0: rows are sequences, reversed over their first 1, 2, 3, 4 steps.
  std::vector<float> values(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  NodeRun run = run_node({"ReverseSequence",
                          {Attribute::Int("time_axis", 1), Attribute::Int("batch_axis", 0)},
                          {TestTensor::f32({4, 4}, values), TestTensor::i64({4}, {1, 2, 3, 4})},
                          {f32_out({4, 4})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12));
}

// ---- ConstantOfShape --------------------------------------------------------------------

TEST(ConstantOfShapeKernel, FillsTheShapeGivenAtRunTime) {
  // The importer carries ONNX's value tensor as value_dtype and value_bits (float32 1.0).
  NodeRun ones = run_node({"ConstantOfShape",
                           {Attribute::Int("value_dtype", 1), Attribute::Int("value_bits", 0x3f800000)},
                           {TestTensor::i64({2}, {2, 3})},
                           {f32_out({2, 3})}});
  ASSERT_TRUE(ones.ok()) << ones.error;
  EXPECT_THAT(ones.outputs[0].floats(), ElementsAre(1, 1, 1, 1, 1, 1));
  NodeRun zeros = run_node({"ConstantOfShape", {}, {TestTensor::i64({1}, {2})}, {f32_out({2})}});
  ASSERT_TRUE(zeros.ok()) << zeros.error;
  EXPECT_THAT(zeros.outputs[0].floats(), ElementsAre(0, 0));
  NodeRun wrong = run_node({"ConstantOfShape", {}, {TestTensor::i64({1}, {3})}, {f32_out({2})}});
  EXPECT_THAT(wrong.error, HasSubstr("[2]"));
}

}  // namespace
}  // namespace plugrt::portable::testing
