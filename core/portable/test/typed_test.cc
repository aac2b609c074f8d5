// SPDX-License-Identifier: Apache-2.0
// The dtype helpers (float16 and bfloat16 conversion, dispatch) and Cast across dtypes.
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"
#include "kernels/typed.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Float16, RoundTripsExactValues) {
  for (float value : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604644775390625e-08f}) {
    EXPECT_EQ(to_float(to_float16(value)), value) << value;
  }
  EXPECT_EQ(to_float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(to_float16(-2.0f).bits, 0xc000);
}

TEST(Float16, RoundsTiesToEvenAndOverflowsToInfinity) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: it rounds to the even 1.
  EXPECT_EQ(to_float16(1.0f + 0.00048828125f).bits, 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9: it rounds to the even upper one.
  EXPECT_EQ(to_float16(1.0f + 3 * 0.00048828125f).bits, 0x3c02);
  EXPECT_EQ(to_float16(65519.0f).bits, 0x7bff);
  EXPECT_EQ(to_float16(65520.0f).bits, 0x7c00);
  EXPECT_EQ(to_float16(-1e10f).bits, 0xfc00);
  EXPECT_TRUE(std::isnan(to_float(to_float16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(to_float16(1e-9f).bits, 0x0000);  // below half the smallest subnormal
}

TEST(BFloat16, KeepsTheUpperHalfRoundedToNearestEven) {
  EXPECT_EQ(to_bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(to_float(to_bfloat16(3.140625f)), 3.140625f);
  EXPECT_EQ(to_bfloat16(bits_float(0x3f808000u)).bits, 0x3f80);  // a tie goes to the even 0x3f80
  EXPECT_EQ(to_bfloat16(bits_float(0x3f818000u)).bits, 0x3f82);  // and to the even 0x3f82
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(CastKernel, Float32ToFloat16AndBack) {
  NodeRun run = run_node(
      {"Cast", {Attribute::Int("to", 10)}, {TestTensor::f32({3}, {1.0f, -0.5f, 70000.0f})}, {{DType::kFloat16, {3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<uint16_t>(run.outputs[0]), ElementsAre(0x3c00, 0xb800, 0x7c00));
  TestTensor half = run.outputs[0];
  NodeRun back = run_node({"Cast", {Attribute::Int("to", 1)}, {half}, {f32_out({3})}});
  ASSERT_TRUE(back.ok()) << back.error;
  EXPECT_THAT(back.outputs[0].floats(), ElementsAre(1.0f, -0.5f, std::numeric_limits<float>::infinity()));
}

TEST(CastKernel, DoubleToInt32TruncatesAndBFloat16ToDouble) {
  NodeRun run = run_node({"Cast",
                          {Attribute::Int("to", 6)},
                          {typed_tensor<double>(DType::kDouble, {3}, {2.9, -2.9, 1e300})},
                          {{DType::kInt32, {3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].int32s(), ElementsAre(2, -2, std::numeric_limits<int32_t>::max()));
  NodeRun wide = run_node({"Cast",
                           {Attribute::Int("to", 11)},
                           {typed_tensor<uint16_t>(DType::kBFloat16, {2}, {0x3fc0, 0xc000})},
                           {{DType::kDouble, {2}}}});
  ASSERT_TRUE(wide.ok()) << wide.error;
  EXPECT_THAT(values_of<double>(wide.outputs[0]), ElementsAre(DoubleEq(1.5), DoubleEq(-2.0)));
}

TEST(CastKernel, Uint64AndInt16) {
  NodeRun run = run_node({"Cast",
                          {Attribute::Int("to", 5)},
                          {typed_tensor<uint64_t>(DType::kUInt64, {2}, {65537, 7})},
                          {{DType::kInt16, {2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<int16_t>(run.outputs[0]), ElementsAre(1, 7));  // narrowing wraps
}

TEST(ElementwiseTypes, AddsDoublesAndFloat16s) {
  NodeRun run =
      run_node({"Add",
                {},
                {typed_tensor<double>(DType::kDouble, {2}, {1e-12, 2}), typed_tensor<double>(DType::kDouble, {1}, {1})},
                {{DType::kDouble, {2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<double>(run.outputs[0]), ElementsAre(DoubleEq(1 + 1e-12), DoubleEq(3)));
  const TestTensor one_half = typed_tensor<uint16_t>(DType::kFloat16, {1}, {0x3e00});  // 1.5
  NodeRun half = run_node({"Mul", {}, {one_half, one_half}, {{DType::kFloat16, {1}}}});
  ASSERT_TRUE(half.ok()) << half.error;
  EXPECT_THAT(values_of<uint16_t>(half.outputs[0]), ElementsAre(0x4080));  // 2.25
}

TEST(ElementwiseTypes, ComparesUnsignedAndInt8) {
  NodeRun run = run_node({"Less",
                          {},
                          {typed_tensor<uint32_t>(DType::kUInt32, {2}, {1, 4000000000u}),
                           typed_tensor<uint32_t>(DType::kUInt32, {2}, {2, 3})},
                          {{DType::kBool, {2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bools(), ElementsAre(true, false));
  NodeRun narrow =
      run_node({"GreaterOrEqual",
                {},
                {typed_tensor<int8_t>(DType::kInt8, {2}, {-3, 5}), typed_tensor<int8_t>(DType::kInt8, {1}, {5})},
                {{DType::kBool, {2}}}});
  ASSERT_TRUE(narrow.ok()) << narrow.error;
  EXPECT_THAT(narrow.outputs[0].bools(), ElementsAre(false, true));
}

TEST(ElementwiseTypes, DispatchNamesTheDtypesItTakes) {
  NodeRun run = run_node({"Tanh", {}, {TestTensor::i64({1}, {1})}, {{DType::kInt64, {1}}}});
  EXPECT_THAT(run.error, HasSubstr("Tanh 'node': supports float32, double, float16, bfloat16, not int64"));
  NodeRun sub = run_node(
      {"Sub", {}, {TestTensor::boolean({1}, {true}), TestTensor::boolean({1}, {true})}, {{DType::kBool, {1}}}});
  EXPECT_THAT(sub.error,
              HasSubstr("supports float32, double, float16, bfloat16, int8 to int64, uint8 to uint64, not bool"));
}

}  // namespace
}  // namespace plugrt::portable::testing
