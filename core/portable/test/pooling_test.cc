// SPDX-License-Identifier: Apache-2.0
// Pooling kernels against the ONNX operator examples and hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

const TestTensor kX5x5 = TestTensor::f32({1, 1, 5, 5}, iota_floats(25, 1));
const TestTensor kX4x4 = TestTensor::f32({1, 1, 4, 4}, iota_floats(16, 1));

NodeRun pool(const char* op, std::vector<Attribute> attrs, const TestTensor& x, std::vector<int64_t> out) {
  return run_node({op, std::move(attrs), {x}, {{DType::kFloat32, std::move(out)}}});
}

// ---- MaxPool ---------------------------------------------------------------------------

TEST(MaxPoolKernel, MatchesTheOnnxExampleWithPads) {
  NodeRun run = pool("MaxPool", {Attribute::Ints("kernel_shape", {5, 5}), Attribute::Ints("pads", {2, 2, 2, 2})}, kX5x5,
                     {1, 1, 5, 5});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray<float>({13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                                                                25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}));
}

TEST(MaxPoolKernel, MatchesTheOnnxExamplesWithStridesAndSameUpper) {
  NodeRun strided = pool("MaxPool", {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})},
                         kX5x5, {1, 1, 2, 2});
  ASSERT_TRUE(strided.ok()) << strided.error;
  EXPECT_THAT(strided.outputs[0].floats(), ElementsAre(7, 9, 17, 19));
  NodeRun same = pool("MaxPool",
                      {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("strides", {2, 2}),
                       Attribute::String("auto_pad", "SAME_UPPER")},
                      kX5x5, {1, 1, 3, 3});
  ASSERT_TRUE(same.ok()) << same.error;
  EXPECT_THAT(same.outputs[0].floats(), ElementsAre(7, 9, 10, 17, 19, 20, 22, 24, 25));
}

TEST(MaxPoolKernel, MatchesTheOnnxExamplesWithCeilModeAndDilations) {
  NodeRun ceil = pool(
      "MaxPool",
      {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("strides", {2, 2}), Attribute::Int("ceil_mode", 1)},
      kX4x4, {1, 1, 2, 2});
  ASSERT_TRUE(ceil.ok()) << ceil.error;
  EXPECT_THAT(ceil.outputs[0].floats(), ElementsAre(11, 12, 15, 16));
  NodeRun dilated = pool("MaxPool", {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("dilations", {2, 2})},
                         kX4x4, {1, 1, 2, 2});
  ASSERT_TRUE(dilated.ok()) << dilated.error;
  EXPECT_THAT(dilated.outputs[0].floats(), ElementsAre(11, 12, 15, 16));
}

TEST(MaxPoolKernel, Pools1DWithSameLowerAndCeilModePadding) {
  const TestTensor x = TestTensor::f32({1, 2, 4}, {1, 2, 3, 4, -1, -2, -3, -4});
  NodeRun lower = pool("MaxPool", {Attribute::Ints("kernel_shape", {2}), Attribute::String("auto_pad", "SAME_LOWER")},
                       x, {1, 2, 4});
  ASSERT_TRUE(lower.ok()) << lower.error;
  EXPECT_THAT(lower.outputs[0].floats(), ElementsAre(1, 2, 3, 4, -1, -1, -2, -3));
  // Windows start at -1, 1, 3, 5 of [1..6] padded by one on each side.
  NodeRun ceil = pool("MaxPool",
                      {Attribute::Ints("kernel_shape", {3}), Attribute::Ints("strides", {2}),
                       Attribute::Ints("pads", {1, 1}), Attribute::Int("ceil_mode", 1)},
                      TestTensor::f32({1, 1, 6}, iota_floats(6, 1)), {1, 1, 4});
  ASSERT_TRUE(ceil.ok()) << ceil.error;
  EXPECT_THAT(ceil.outputs[0].floats(), ElementsAre(2, 4, 6, 6));
}

TEST(MaxPoolKernel, RoundsAWindowLongerThanTheInputUpToOneOutputInCeilMode) {
  // PyTorch's MaxPool1d(2, ceil_mode=True) on a length of 1: one window, half past the end.
  NodeRun ceil =
      pool("MaxPool",
           {Attribute::Ints("kernel_shape", {2}), Attribute::Ints("strides", {2}), Attribute::Int("ceil_mode", 1)},
           TestTensor::f32({1, 2, 1}, {3, -5}), {1, 2, 1});
  ASSERT_TRUE(ceil.ok()) << ceil.error;
  EXPECT_THAT(ceil.outputs[0].floats(), ElementsAre(3, -5));
  // Without ceil_mode, no window fits.
  NodeRun floor = pool("MaxPool", {Attribute::Ints("kernel_shape", {2}), Attribute::Ints("strides", {2})},
                       TestTensor::f32({1, 2, 1}, {3, -5}), {1, 2, 1});
  EXPECT_THAT(floor.error, HasSubstr("is larger than the padded input"));
}

TEST(MaxPoolKernel, RefusesABadStorageOrder) {
  NodeRun run = run_node({"MaxPool",
                          {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Int("storage_order", 2)},
                          {kX4x4},
                          {{DType::kFloat32, {1, 1, 3, 3}}, {DType::kInt64, {1, 1, 3, 3}}}});
  EXPECT_THAT(run.error, HasSubstr("storage_order must be 0 or 1"));
}

TEST(MaxPoolKernel, RefusesBadAttributesAndAWrongOutput) {
  EXPECT_THAT(pool("MaxPool", {}, kX4x4, {1, 1, 4, 4}).error, HasSubstr("kernel_shape has 0 values, expected 2"));
  EXPECT_THAT(
      pool("MaxPool", {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Int("ceil_mode", 2)}, kX4x4, {1, 1, 3, 3})
          .error,
      HasSubstr("ceil_mode must be 0 or 1"));
  EXPECT_THAT(pool("MaxPool", {Attribute::Ints("kernel_shape", {5, 5})}, kX4x4, {1, 1, 1, 1}).error,
              HasSubstr("larger than the padded input"));
  EXPECT_THAT(pool("MaxPool", {Attribute::Ints("kernel_shape", {2, 2})}, kX4x4, {1, 1, 2, 2}).error,
              HasSubstr("but the inputs give [1, 1, 3, 3]"));
}

// ---- AveragePool -----------------------------------------------------------------------

TEST(AveragePoolKernel, MatchesTheOnnxExamplesWithPads) {
  const std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {5, 5}), Attribute::Ints("pads", {2, 2, 2, 2})};
  NodeRun exclude = pool("AveragePool", attrs, kX5x5, {1, 1, 5, 5});
  ASSERT_TRUE(exclude.ok()) << exclude.error;
  EXPECT_THAT(exclude.outputs[0].floats(),
              Pointwise(FloatNear(1e-5f),
                        std::vector<float>({7,    7.5, 8,    8.5, 9,    9.5, 10,   10.5, 11,   11.5, 12,   12.5, 13,
                                            13.5, 14,  14.5, 15,  15.5, 16,  16.5, 17,   17.5, 18,   18.5, 19})));
  std::vector<Attribute> include_attrs = attrs;
  include_attrs.push_back(Attribute::Int("count_include_pad", 1));
  NodeRun include = pool("AveragePool", include_attrs, kX5x5, {1, 1, 5, 5});
  ASSERT_TRUE(include.ok()) << include.error;
  EXPECT_THAT(
      include.outputs[0].floats(),
      Pointwise(FloatNear(1e-5f), std::vector<float>({2.52f,  3.6f,  4.8f,  4.08f, 3.24f, 4.56f, 6.4f,  8.4f, 7.04f,
                                                      5.52f,  7.2f,  10,    13,    10.8f, 8.4f,  6.96f, 9.6f, 12.4f,
                                                      10.24f, 7.92f, 6.12f, 8.4f,  10.8f, 8.88f, 6.84f})));
}

TEST(AveragePoolKernel, MatchesTheOnnxExamplesWithSameUpperAndCeilMode) {
  NodeRun same = pool("AveragePool",
                      {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("strides", {2, 2}),
                       Attribute::String("auto_pad", "SAME_UPPER")},
                      kX5x5, {1, 1, 3, 3});
  ASSERT_TRUE(same.ok()) << same.error;
  EXPECT_THAT(same.outputs[0].floats(), ElementsAre(4, 5.5, 7, 11.5, 13, 14.5, 19, 20.5, 22));
  NodeRun ceil = pool(
      "AveragePool",
      {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("strides", {2, 2}), Attribute::Int("ceil_mode", 1)},
      kX4x4, {1, 1, 2, 2});
  ASSERT_TRUE(ceil.ok()) << ceil.error;
  EXPECT_THAT(ceil.outputs[0].floats(), ElementsAre(6, 7.5, 12, 13.5));
}

TEST(AveragePoolKernel, DropsACeilModeWindowThatWouldStartInThePadding) {
  // [1, 2, 3, 4] padded at the end by one, windows of 2 every 2: a third window would
  // start in the padding, so there are two.
  NodeRun run = pool("AveragePool",
                     {Attribute::Ints("kernel_shape", {2}), Attribute::Ints("strides", {2}),
                      Attribute::Ints("pads", {0, 1}), Attribute::Int("ceil_mode", 1)},
                     TestTensor::f32({1, 1, 4}, {1, 2, 3, 4}), {1, 1, 2});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1.5, 3.5));
}

TEST(AveragePoolKernel, CountsPaddingOnlyInsideThePaddedInput) {
  // [1..5] padded by one at the end: the last window is [5, pad], which
  // count_include_pad divides by 2.
  const std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {2}), Attribute::Ints("strides", {2}),
                                        Attribute::Ints("pads", {0, 1})};
  NodeRun exclude = pool("AveragePool", attrs, TestTensor::f32({1, 1, 5}, iota_floats(5, 1)), {1, 1, 3});
  ASSERT_TRUE(exclude.ok()) << exclude.error;
  EXPECT_THAT(exclude.outputs[0].floats(), ElementsAre(1.5, 3.5, 5));
  std::vector<Attribute> include_attrs = attrs;
  include_attrs.push_back(Attribute::Int("count_include_pad", 1));
  NodeRun include = pool("AveragePool", include_attrs, TestTensor::f32({1, 1, 5}, iota_floats(5, 1)), {1, 1, 3});
  ASSERT_TRUE(include.ok()) << include.error;
  EXPECT_THAT(include.outputs[0].floats(), ElementsAre(1.5, 3.5, 2.5));
}

TEST(AveragePoolKernel, RefusesPadsWithAutoPad) {
  NodeRun run = pool("AveragePool",
                     {Attribute::Ints("kernel_shape", {2, 2}), Attribute::String("auto_pad", "SAME_UPPER"),
                      Attribute::Ints("pads", {1, 1, 1, 1})},
                     kX4x4, {1, 1, 4, 4});
  EXPECT_THAT(run.error, HasSubstr("pads cannot be given together with auto_pad"));
}

// ---- MaxPool's Indices, other dtypes; MaxUnpool ------------------------------------------

TEST(MaxPoolKernel, WritesIndicesRowOrColumnMajor) {
  // kX5x5 holds 1..25 row by row: each 2 x 2 window's maximum is its bottom right.
  const std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})};
  NodeRun rows = run_node({"MaxPool", attrs, {kX5x5}, {f32_out({1, 1, 2, 2}), {DType::kInt64, {1, 1, 2, 2}}}, 12});
  ASSERT_TRUE(rows.ok()) << rows.error;
  EXPECT_THAT(rows.outputs[0].floats(), ElementsAre(7, 9, 17, 19));
  EXPECT_THAT(rows.outputs[1].ints(), ElementsAre(6, 8, 16, 18));
  std::vector<Attribute> column_attrs = attrs;
  column_attrs.push_back(Attribute::Int("storage_order", 1));
  NodeRun columns =
      run_node({"MaxPool", column_attrs, {kX5x5}, {f32_out({1, 1, 2, 2}), {DType::kInt64, {1, 1, 2, 2}}}, 12});
  ASSERT_TRUE(columns.ok()) << columns.error;
  EXPECT_THAT(columns.outputs[1].ints(), ElementsAre(6, 16, 8, 18));
}

TEST(MaxPoolKernel, PoolsUint8) {
  const TestTensor x = typed_tensor<uint8_t>(DType::kUInt8, {1, 1, 2, 2}, {3, 250, 7, 1});
  NodeRun run = run_node({"MaxPool", {Attribute::Ints("kernel_shape", {2, 2})}, {x}, {{DType::kUInt8, {1, 1, 1, 1}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<uint8_t>(run.outputs[0]), ElementsAre(250));
}

TEST(MaxUnpoolKernel, ScattersIntoTheDefaultOrTheGivenShape) {
  const TestTensor x = TestTensor::f32({1, 1, 2, 2}, {5, 6, 7, 8});
  const TestTensor indices = TestTensor::i64({1, 1, 2, 2}, {5, 7, 13, 15});
  const std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})};
  NodeRun run = run_node({"MaxUnpool", attrs, {x, indices}, {f32_out({1, 1, 4, 4})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8));
  // A larger output_shape keeps each element's coordinates (ONNX's test data).
  NodeRun larger =
      run_node({"MaxUnpool", attrs, {x, indices, TestTensor::i64({4}, {1, 1, 5, 5})}, {f32_out({1, 1, 5, 5})}});
  ASSERT_TRUE(larger.ok()) << larger.error;
  const std::vector<float> y = larger.outputs[0].floats();
  EXPECT_EQ(y[6], 5);
  EXPECT_EQ(y[8], 6);
  EXPECT_EQ(y[16], 7);
  EXPECT_EQ(y[18], 8);
}

// ---- Global pooling --------------------------------------------------------------------

TEST(GlobalPoolKernels, ReduceEachPlane) {
  const TestTensor x = TestTensor::f32({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -4});
  NodeRun average = run_node({"GlobalAveragePool", {}, {x}, {{DType::kFloat32, {1, 2, 1, 1}}}});
  ASSERT_TRUE(average.ok()) << average.error;
  EXPECT_THAT(average.outputs[0].floats(), ElementsAre(3, -2.5));
  NodeRun max = run_node({"GlobalMaxPool", {}, {x}, {{DType::kFloat32, {1, 2, 1, 1}}}});
  ASSERT_TRUE(max.ok()) << max.error;
  EXPECT_THAT(max.outputs[0].floats(), ElementsAre(6, -1));
}

TEST(GlobalPoolKernels, RefuseAWrongOutputAndALowRank) {
  EXPECT_THAT(run_node({"GlobalAveragePool", {}, {kX4x4}, {{DType::kFloat32, {1, 1}}}}).error,
              HasSubstr("but the inputs give [1, 1, 1, 1]"));
  EXPECT_THAT(
      run_node({"GlobalAveragePool", {}, {TestTensor::f32({2, 2}, {1, 2, 3, 4})}, {{DType::kFloat32, {2, 2}}}}).error,
      HasSubstr("expected rank 3 or more"));
}

}  // namespace
}  // namespace plugrt::portable::testing
