// SPDX-License-Identifier: Apache-2.0
// Layout and shape kernels against known results (several from the ONNX operator
// examples), across dtypes and opsets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <tuple>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

TestTensor constant_i64(std::vector<int64_t> values) {
  return TestTensor::i64({static_cast<int64_t>(values.size())}, values).as_constant();
}

// ---- Identity, Flatten, Reshape, Squeeze, Unsqueeze ------------------------------------

TEST(IdentityKernel, CopiesTheInput) {
  NodeRun run = run_node({"Identity", {}, {TestTensor::i64({3}, {1, -2, 3})}, {{DType::kInt64, {3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(1, -2, 3));
}

TEST(IdentityKernel, RefusesAnOutputOfAnotherShape) {
  NodeRun run = run_node({"Identity", {}, {TestTensor::f32({2}, {1, 2})}, {{DType::kFloat32, {3}}}});
  EXPECT_THAT(run.error, ::testing::HasSubstr("output 0 has shape [3], but the inputs give [2]"));
}

TEST(FlattenKernel, SplitsTheShapeAtTheAxis) {
  const TestTensor x = TestTensor::f32({2, 3, 4}, iota_floats(24));
  for (auto [axis, rows, columns] :
       {std::tuple{2, 6, 4}, std::tuple{0, 1, 24}, std::tuple{-1, 6, 4}, std::tuple{3, 24, 1}}) {
    NodeRun run = run_node({"Flatten", {Attribute::Int("axis", axis)}, {x}, {{DType::kFloat32, {rows, columns}}}});
    ASSERT_TRUE(run.ok()) << run.error;
    EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray(iota_floats(24)));
  }
  EXPECT_THAT(run_node({"Flatten", {Attribute::Int("axis", 4)}, {x}, {{DType::kFloat32, {24, 1}}}}).error,
              HasSubstr("axis 4 is out of range for rank 3"));
}

TEST(ReshapeKernel, CopiesZerosAndInfersMinusOne) {
  NodeRun run = run_node({"Reshape",
                          {},
                          {TestTensor::i64({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}), constant_i64({0, -1})},
                          {{DType::kInt64, {2, 6}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
}

TEST(ReshapeKernel, ReadsTheShapeAttributeBeforeOpset5) {
  NodeRun run = run_node({"Reshape",
                          {Attribute::Ints("shape", {3, -1})},
                          {TestTensor::f32({6}, iota_floats(6))},
                          {{DType::kFloat32, {3, 2}}},
                          4});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray(iota_floats(6)));
}

TEST(ReshapeKernel, KeepsZeroWithAllowZero) {
  const TestTensor x = TestTensor::f32({2, 3}, iota_floats(6));
  EXPECT_TRUE(run_node({"Reshape", {}, {x, constant_i64({0, 3})}, {{DType::kFloat32, {2, 3}}}}).ok());
  EXPECT_THAT(
      run_node({"Reshape", {Attribute::Int("allowzero", 1)}, {x, constant_i64({0, 3})}, {{DType::kFloat32, {0, 3}}}})
          .error,
      HasSubstr("shape gives 0 elements, the input has 6"));
}

TEST(ReshapeKernel, ReadsAShapeGivenAtRunTime) {
  const TestTensor x = TestTensor::f32({2, 3}, iota_floats(6));
  NodeRun run = run_node({"Reshape", {}, {x, TestTensor::i64({2}, {-1, 2})}, {{DType::kFloat32, {3, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAreArray(iota_floats(6)));
  EXPECT_THAT(run_node({"Reshape", {}, {x, TestTensor::i64({2}, {2, 3})}, {{DType::kFloat32, {3, 2}}}}).error,
              HasSubstr("output 0 has shape [3, 2], but the inputs give [2, 3] (with input 1 = [2, 3], given at run "
                        "time)"));
}

TEST(ReshapeKernel, RefusesBadShapes) {
  const TestTensor x = TestTensor::f32({2, 3}, iota_floats(6));
  EXPECT_THAT(run_node({"Reshape", {}, {x, constant_i64({-1, -1})}, {{DType::kFloat32, {3, 2}}}}).error,
              HasSubstr("more than one -1"));
  EXPECT_THAT(run_node({"Reshape", {}, {x, constant_i64({4, 2})}, {{DType::kFloat32, {4, 2}}}}).error,
              HasSubstr("shape gives 8 elements, the input has 6"));
  EXPECT_THAT(run_node({"Reshape", {}, {x, constant_i64({3, 2})}, {{DType::kFloat32, {2, 3}}}}).error,
              HasSubstr("output 0 has shape [2, 3], but the inputs give [3, 2]"));
}

TEST(SqueezeKernel, RemovesOnesFromAttributeInputOrAll) {
  const TestTensor x = TestTensor::f32({1, 3, 1, 2}, iota_floats(6));
  NodeRun attribute = run_node({"Squeeze", {Attribute::Ints("axes", {0, 2})}, {x}, {{DType::kFloat32, {3, 2}}}, 11});
  ASSERT_TRUE(attribute.ok()) << attribute.error;
  EXPECT_THAT(attribute.outputs[0].floats(), ElementsAreArray(iota_floats(6)));
  EXPECT_TRUE(run_node({"Squeeze", {}, {x, constant_i64({-2})}, {{DType::kFloat32, {1, 3, 2}}}}).ok());
  EXPECT_TRUE(run_node({"Squeeze", {}, {x}, {{DType::kFloat32, {3, 2}}}}).ok());
  EXPECT_THAT(run_node({"Squeeze", {}, {x, constant_i64({1})}, {{DType::kFloat32, {1, 1, 2}}}}).error,
              HasSubstr("axis 1 of [1, 3, 1, 2] is not 1"));
  NodeRun fed = run_node({"Squeeze", {}, {x, TestTensor::i64({1}, {0})}, {{DType::kFloat32, {3, 1, 2}}}});
  ASSERT_TRUE(fed.ok()) << fed.error;
  EXPECT_THAT(fed.outputs[0].floats(), ElementsAreArray(iota_floats(6)));
}

TEST(UnsqueezeKernel, InsertsOnesFromAttributeOrInput) {
  const TestTensor x = TestTensor::i64({3}, {7, 8, 9});
  NodeRun attribute = run_node({"Unsqueeze", {Attribute::Ints("axes", {0, 2})}, {x}, {{DType::kInt64, {1, 3, 1}}}, 11});
  ASSERT_TRUE(attribute.ok()) << attribute.error;
  EXPECT_THAT(attribute.outputs[0].ints(), ElementsAre(7, 8, 9));
  EXPECT_TRUE(run_node({"Unsqueeze", {}, {x, constant_i64({-1})}, {{DType::kInt64, {3, 1}}}}).ok());
  EXPECT_THAT(run_node({"Unsqueeze", {}, {x, constant_i64({0, -3})}, {{DType::kInt64, {1, 1, 3}}}}).error,
              HasSubstr("is repeated"));
  EXPECT_THAT(run_node({"Unsqueeze", {}, {x}, {{DType::kInt64, {1, 3}}}}).error, HasSubstr("axes are required"));
}

// ---- Shape -----------------------------------------------------------------------------

TEST(ShapeKernel, GivesTheDimsWithOptionalStartAndEnd) {
  const TestTensor x = TestTensor::f32({2, 3, 4}, iota_floats(24));
  NodeRun all = run_node({"Shape", {}, {x}, {{DType::kInt64, {3}}}});
  ASSERT_TRUE(all.ok()) << all.error;
  EXPECT_THAT(all.outputs[0].ints(), ElementsAre(2, 3, 4));
  NodeRun tail = run_node({"Shape", {Attribute::Int("start", -2)}, {x}, {{DType::kInt64, {2}}}});
  ASSERT_TRUE(tail.ok()) << tail.error;
  EXPECT_THAT(tail.outputs[0].ints(), ElementsAre(3, 4));
  NodeRun head = run_node({"Shape", {Attribute::Int("end", -1)}, {x}, {{DType::kInt64, {2}}}});
  ASSERT_TRUE(head.ok()) << head.error;
  EXPECT_THAT(head.outputs[0].ints(), ElementsAre(2, 3));
  EXPECT_THAT(run_node({"Shape", {}, {x}, {{DType::kInt64, {2}}}}).error, HasSubstr("but the inputs give [3]"));
}

// ---- Transpose -------------------------------------------------------------------------

TEST(TransposeKernel, ReversesTheAxesByDefault) {
  NodeRun run = run_node({"Transpose", {}, {TestTensor::f32({2, 3}, iota_floats(6, 1))}, {{DType::kFloat32, {3, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(TransposeKernel, PermutesAnyDtype) {
  NodeRun ints = run_node({"Transpose",
                           {Attribute::Ints("perm", {1, 0, 2})},
                           {TestTensor::i64({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})},
                           {{DType::kInt64, {3, 2, 2}}}});
  ASSERT_TRUE(ints.ok()) << ints.error;
  EXPECT_THAT(ints.outputs[0].ints(), ElementsAre(0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11));
  // NCHW to NHWC on one-byte elements.
  NodeRun bools = run_node({"Transpose",
                            {Attribute::Ints("perm", {0, 2, 3, 1})},
                            {TestTensor::boolean({1, 2, 2, 2}, {true, true, false, false, false, true, true, false})},
                            {{DType::kBool, {1, 2, 2, 2}}}});
  ASSERT_TRUE(bools.ok()) << bools.error;
  EXPECT_THAT(bools.outputs[0].bools(), ElementsAre(true, false, true, true, false, true, false, false));
}

TEST(TransposeKernel, RefusesABadPerm) {
  const TestTensor x = TestTensor::f32({2, 3}, iota_floats(6));
  EXPECT_THAT(run_node({"Transpose", {Attribute::Ints("perm", {0, 0})}, {x}, {{DType::kFloat32, {2, 2}}}}).error,
              HasSubstr("perm is not a permutation"));
  EXPECT_THAT(run_node({"Transpose", {Attribute::Ints("perm", {1})}, {x}, {{DType::kFloat32, {3}}}}).error,
              HasSubstr("perm is not a permutation"));
}

// ---- Concat and Split ------------------------------------------------------------------

TEST(ConcatKernel, JoinsAlongTheAxis) {
  NodeRun ints = run_node({"Concat",
                           {Attribute::Int("axis", 1)},
                           {TestTensor::i64({2, 1}, {1, 2}), TestTensor::i64({2, 2}, {3, 4, 5, 6})},
                           {{DType::kInt64, {2, 3}}}});
  ASSERT_TRUE(ints.ok()) << ints.error;
  EXPECT_THAT(ints.outputs[0].ints(), ElementsAre(1, 3, 4, 2, 5, 6));
  NodeRun floats = run_node({"Concat",
                             {Attribute::Int("axis", -2)},
                             {TestTensor::f32({1, 2}, {1, 2}), TestTensor::f32({2, 2}, {3, 4, 5, 6}).as_constant(),
                              TestTensor::f32({1, 2}, {7, 8})},
                             {{DType::kFloat32, {4, 2}}}});
  ASSERT_TRUE(floats.ok()) << floats.error;
  EXPECT_THAT(floats.outputs[0].floats(), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
}

TEST(ConcatKernel, RefusesMismatchedInputs) {
  EXPECT_THAT(run_node({"Concat",
                        {Attribute::Int("axis", 1)},
                        {TestTensor::f32({2, 1}, {1, 2}), TestTensor::f32({3, 1}, {3, 4, 5})},
                        {{DType::kFloat32, {2, 2}}}})
                  .error,
              HasSubstr("input 1 is float32 [3, 1]; it must match input 0 except along axis 1"));
  EXPECT_THAT(run_node({"Concat", {}, {TestTensor::f32({1}, {1})}, {{DType::kFloat32, {1}}}}).error,
              HasSubstr("the axis attribute is required"));
}

TEST(SplitKernel, SplitsIntoEqualParts) {
  NodeRun run = run_node({"Split",
                          {},
                          {TestTensor::f32({6}, iota_floats(6, 1))},
                          {{DType::kFloat32, {2}}, {DType::kFloat32, {2}}, {DType::kFloat32, {2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(1, 2));
  EXPECT_THAT(run.outputs[1].floats(), ElementsAre(3, 4));
  EXPECT_THAT(run.outputs[2].floats(), ElementsAre(5, 6));
}

TEST(SplitKernel, ReadsSizesFromTheAttributeOrTheInput) {
  NodeRun attribute = run_node({"Split",
                                {Attribute::Ints("split", {2, 4})},
                                {TestTensor::f32({6}, iota_floats(6, 1))},
                                {{DType::kFloat32, {2}}, {DType::kFloat32, {4}}},
                                11});
  ASSERT_TRUE(attribute.ok()) << attribute.error;
  EXPECT_THAT(attribute.outputs[1].floats(), ElementsAre(3, 4, 5, 6));
  NodeRun input = run_node({"Split",
                            {Attribute::Int("axis", 1)},
                            {TestTensor::i64({2, 3}, {1, 2, 3, 4, 5, 6}), constant_i64({1, 2})},
                            {{DType::kInt64, {2, 1}}, {DType::kInt64, {2, 2}}}});
  ASSERT_TRUE(input.ok()) << input.error;
  EXPECT_THAT(input.outputs[0].ints(), ElementsAre(1, 4));
  EXPECT_THAT(input.outputs[1].ints(), ElementsAre(2, 3, 5, 6));
}

TEST(SplitKernel, MakesTheLastPartSmallerWithNumOutputs) {
  NodeRun run = run_node({"Split",
                          {Attribute::Int("num_outputs", 3)},
                          {TestTensor::f32({7}, iota_floats(7))},
                          {{DType::kFloat32, {3}}, {DType::kFloat32, {3}}, {DType::kFloat32, {1}}},
                          18});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[2].floats(), ElementsAre(6));
}

TEST(SplitKernel, RefusesBadSizes) {
  const TestTensor x = TestTensor::f32({6}, iota_floats(6));
  EXPECT_THAT(
      run_node({"Split", {}, {x, constant_i64({2, 3})}, {{DType::kFloat32, {2}}, {DType::kFloat32, {3}}}}).error,
      HasSubstr("split sizes do not give 2 parts summing to 6"));
  NodeRun fed =
      run_node({"Split", {}, {x, TestTensor::i64({2}, {2, 4})}, {{DType::kFloat32, {2}}, {DType::kFloat32, {4}}}});
  ASSERT_TRUE(fed.ok()) << fed.error;
  EXPECT_THAT(fed.outputs[1].floats(), ElementsAre(2, 3, 4, 5));
  EXPECT_THAT(
      run_node({"Split", {}, {x, TestTensor::i64({2}, {4, 2})}, {{DType::kFloat32, {2}}, {DType::kFloat32, {4}}}})
          .error,
      HasSubstr("input 1 = [4, 2], given at run time"));
  EXPECT_THAT(
      run_node({"Split",
                {},
                {x},
                {{DType::kFloat32, {2}}, {DType::kFloat32, {2}}, {DType::kFloat32, {1}}, {DType::kFloat32, {1}}}})
          .error,
      HasSubstr("does not split into 4 equal parts"));
}

// ---- Slice -----------------------------------------------------------------------------

const TestTensor k2x4 = TestTensor::f32({2, 4}, iota_floats(8, 1));  // [[1, 2, 3, 4], [5, 6, 7, 8]]

TEST(SliceKernel, MatchesTheOnnxExamples) {
  NodeRun stepped =
      run_node({"Slice",
                {},
                {k2x4, constant_i64({1, 0}), constant_i64({2, 3}), constant_i64({0, 1}), constant_i64({1, 2})},
                {{DType::kFloat32, {1, 2}}}});
  ASSERT_TRUE(stepped.ok()) << stepped.error;
  EXPECT_THAT(stepped.outputs[0].floats(), ElementsAre(5, 7));
  NodeRun clamped =
      run_node({"Slice", {}, {k2x4, constant_i64({0, 1}), constant_i64({-1, 1000})}, {{DType::kFloat32, {1, 3}}}});
  ASSERT_TRUE(clamped.ok()) << clamped.error;
  EXPECT_THAT(clamped.outputs[0].floats(), ElementsAre(2, 3, 4));
}

TEST(SliceKernel, ReadsAttributesBeforeOpset10) {
  NodeRun run = run_node({"Slice",
                          {Attribute::Ints("starts", {0, 1}), Attribute::Ints("ends", {-1, 1000})},
                          {k2x4},
                          {{DType::kFloat32, {1, 3}}},
                          9});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(2, 3, 4));
}

TEST(SliceKernel, StepsBackwards) {
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  NodeRun reversed =
      run_node({"Slice",
                {},
                {k2x4, constant_i64({-1}), constant_i64({lowest}), constant_i64({-1}), constant_i64({-1})},
                {{DType::kFloat32, {2, 4}}}});
  ASSERT_TRUE(reversed.ok()) << reversed.error;
  EXPECT_THAT(reversed.outputs[0].floats(), ElementsAre(4, 3, 2, 1, 8, 7, 6, 5));
  NodeRun stepped = run_node({"Slice",
                              {},
                              {k2x4, constant_i64({10, 3}), constant_i64({-10, 0}), {}, constant_i64({-1, -2})},
                              {{DType::kFloat32, {2, 2}}}});
  ASSERT_TRUE(stepped.ok()) << stepped.error;
  EXPECT_THAT(stepped.outputs[0].floats(), ElementsAre(8, 6, 4, 2));
}

TEST(SliceKernel, ReadsStartsEndsAndAxesGivenAtRunTime) {
  NodeRun fed = run_node({"Slice",
                          {},
                          {k2x4, TestTensor::i64({1}, {1}), TestTensor::i64({1}, {3}), TestTensor::i64({1}, {-1})},
                          {{DType::kFloat32, {2, 2}}}});
  ASSERT_TRUE(fed.ok()) << fed.error;
  EXPECT_THAT(fed.outputs[0].floats(), ElementsAre(2, 3, 6, 7));
}

TEST(SliceKernel, RefusesAZeroStep) {
  EXPECT_THAT(run_node({"Slice",
                        {},
                        {k2x4, constant_i64({0}), constant_i64({1}), {}, constant_i64({0})},
                        {{DType::kFloat32, {1, 4}}}})
                  .error,
              HasSubstr("steps cannot be 0"));
}

// ---- Gather ----------------------------------------------------------------------------

TEST(GatherKernel, GathersAlongAnAxisWithNegativeIndices) {
  const TestTensor data = TestTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6});
  NodeRun rows =
      run_node({"Gather", {}, {data, TestTensor::i64({2, 2}, {0, 1, 1, -1})}, {{DType::kFloat32, {2, 2, 2}}}});
  ASSERT_TRUE(rows.ok()) << rows.error;
  EXPECT_THAT(rows.outputs[0].floats(), ElementsAre(1, 2, 3, 4, 3, 4, 5, 6));
  NodeRun columns =
      run_node({"Gather", {Attribute::Int("axis", 1)}, {data, TestTensor::i32({1}, {1})}, {{DType::kFloat32, {3, 1}}}});
  ASSERT_TRUE(columns.ok()) << columns.error;
  EXPECT_THAT(columns.outputs[0].floats(), ElementsAre(2, 4, 6));
  NodeRun scalar = run_node({"Gather",
                             {},
                             {TestTensor::i64({3}, {7, 8, 9}), TestTensor::i64({}, {-3}).as_constant()},
                             {{DType::kInt64, {}}}});
  ASSERT_TRUE(scalar.ok()) << scalar.error;
  EXPECT_THAT(scalar.outputs[0].ints(), ElementsAre(7));
}

TEST(GatherKernel, WritesZerosForOutOfRangeIndices) {
  NodeRun run = run_node({"Gather",
                          {},
                          {TestTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6}), TestTensor::i64({3}, {3, -4, 2})},
                          {{DType::kFloat32, {3, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(0, 0, 0, 0, 5, 6));
}

TEST(GatherKernel, RefusesFloatIndicesAndAWrongOutput) {
  const TestTensor data = TestTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(run_node({"Gather", {}, {data, TestTensor::f32({1}, {0})}, {{DType::kFloat32, {1, 2}}}}).error,
              HasSubstr("expected int64 or int32"));
  EXPECT_THAT(run_node({"Gather", {}, {data, TestTensor::i64({1}, {0})}, {{DType::kFloat32, {2}}}}).error,
              HasSubstr("but the inputs give [1, 2]"));
}

// ---- Pad and Expand --------------------------------------------------------------------

const TestTensor k3x2 = TestTensor::f32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});

TEST(PadKernel, MatchesTheOnnxExamplesForEachMode) {
  auto pad = [](const char* mode) {
    return run_node(
        {"Pad", {Attribute::String("mode", mode)}, {k3x2, constant_i64({0, 2, 0, 0})}, {{DType::kFloat32, {3, 4}}}});
  };
  NodeRun constant = pad("constant");
  ASSERT_TRUE(constant.ok()) << constant.error;
  EXPECT_THAT(constant.outputs[0].floats(), ElementsAre(0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f));
  NodeRun reflect = pad("reflect");
  ASSERT_TRUE(reflect.ok()) << reflect.error;
  EXPECT_THAT(reflect.outputs[0].floats(),
              ElementsAre(1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f));
  NodeRun edge = pad("edge");
  ASSERT_TRUE(edge.ok()) << edge.error;
  EXPECT_THAT(edge.outputs[0].floats(),
              ElementsAre(1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f));
}

TEST(PadKernel, ReflectsAndCropsAlongRows) {
  // Reflect [1, 2, 3] by two before and one after; a negative pad crops.
  NodeRun reflect = run_node({"Pad",
                              {Attribute::String("mode", "reflect")},
                              {TestTensor::i64({1, 3}, {1, 2, 3}), constant_i64({0, 2, 0, 1})},
                              {{DType::kInt64, {1, 6}}}});
  ASSERT_TRUE(reflect.ok()) << reflect.error;
  EXPECT_THAT(reflect.outputs[0].ints(), ElementsAre(3, 2, 1, 2, 3, 2));
  NodeRun crop =
      run_node({"Pad", {}, {TestTensor::f32({4}, {1, 2, 3, 4}), constant_i64({-1, 1})}, {{DType::kFloat32, {4}}}});
  ASSERT_TRUE(crop.ok()) << crop.error;
  EXPECT_THAT(crop.outputs[0].floats(), ElementsAre(2, 3, 4, 0));
}

TEST(PadKernel, TakesAConstantValueAndAxes) {
  NodeRun value =
      run_node({"Pad",
                {},
                {TestTensor::i64({1, 2}, {1, 2}), constant_i64({1, 0, 0, 1}), TestTensor::i64({}, {7}).as_constant()},
                {{DType::kInt64, {2, 3}}}});
  ASSERT_TRUE(value.ok()) << value.error;
  EXPECT_THAT(value.outputs[0].ints(), ElementsAre(7, 7, 7, 1, 2, 7));
  NodeRun axes = run_node({"Pad",
                           {},
                           {TestTensor::f32({2, 2}, {1, 2, 3, 4}), constant_i64({1, 0}), {}, constant_i64({-1})},
                           {{DType::kFloat32, {2, 3}}},
                           18});
  ASSERT_TRUE(axes.ok()) << axes.error;
  EXPECT_THAT(axes.outputs[0].floats(), ElementsAre(0, 1, 2, 0, 3, 4));
}

TEST(PadKernel, ReadsAttributesBeforeOpset11) {
  NodeRun run = run_node({"Pad",
                          {Attribute::Ints("pads", {1, 1}), Attribute::Float("value", 9.5f)},
                          {TestTensor::f32({2}, {1, 2})},
                          {{DType::kFloat32, {4}}},
                          10});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(9.5f, 1, 2, 9.5f));
}

TEST(PadKernel, ReadsPadsAndValueGivenAtRunTime) {
  NodeRun run = run_node(
      {"Pad", {}, {k3x2, TestTensor::i64({4}, {0, 1, 0, 0}), TestTensor::f32({}, {9})}, {{DType::kFloat32, {3, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(9, 1.0f, 1.2f, 9, 2.3f, 3.4f, 9, 4.5f, 5.7f));
}

TEST(PadKernel, RefusesBadParameters) {
  EXPECT_THAT(
      run_node(
          {"Pad", {Attribute::String("mode", "wrap")}, {k3x2, constant_i64({0, 1, 0, 0})}, {{DType::kFloat32, {3, 3}}}})
          .error,
      HasSubstr("mode 'wrap' is not supported"));
  EXPECT_THAT(run_node({"Pad", {}, {k3x2, constant_i64({0, 1})}, {{DType::kFloat32, {3, 3}}}}).error,
              HasSubstr("pads has 2 values, expected 4"));
}

TEST(ExpandKernel, BroadcastsToTheShape) {
  NodeRun run = run_node(
      {"Expand", {}, {TestTensor::i64({3, 1}, {1, 2, 3}), constant_i64({2, 1, 2})}, {{DType::kInt64, {2, 3, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
  EXPECT_THAT(
      run_node({"Expand", {}, {TestTensor::i64({3, 1}, {1, 2, 3}), constant_i64({2, 2})}, {{DType::kInt64, {3, 2}}}})
          .error,
      HasSubstr("does not broadcast to [2, 2]"));
  NodeRun fed = run_node(
      {"Expand", {}, {TestTensor::i64({3, 1}, {1, 2, 3}), TestTensor::i64({1}, {2})}, {{DType::kInt64, {3, 2}}}});
  ASSERT_TRUE(fed.ok()) << fed.error;
  EXPECT_THAT(fed.outputs[0].ints(), ElementsAre(1, 1, 2, 2, 3, 3));
}

}  // namespace
}  // namespace plugrt::portable::testing
