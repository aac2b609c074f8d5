// SPDX-License-Identifier: Apache-2.0
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (quantize.cc), on ONNX's
// operator examples.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

TEST(QuantizeLinearKernel, RoundsHalvesToEvenAndSaturates) {
  NodeRun run = run_node({"QuantizeLinear",
                          {},
                          {TestTensor::f32({6}, {0, 2, 3, 1000, -254, -1000}), TestTensor::f32({}, {2}),
                           typed_tensor<uint8_t>(DType::kUInt8, {}, {128})},
                          {{DType::kUInt8, {6}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bytes, ElementsAre(128, 129, 130, 255, 1, 0));
}

TEST(QuantizeLinearKernel, PerAxisScales) {
  NodeRun run = run_node({"QuantizeLinear",
                          {Attribute::Int("axis", 1)},
                          {TestTensor::f32({1, 2, 2}, {-162, 10, -100, 232}), TestTensor::f32({2}, {2, 4}),
                           typed_tensor<int8_t>(DType::kInt8, {2}, {1, -1})},
                          {{DType::kInt8, {1, 2, 2}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(values_of<int8_t>(run.outputs[0]), ElementsAre(-80, 6, -26, 57));
}

TEST(DequantizeLinearKernel, SubtractsTheZeroPointAndScales) {
  NodeRun run = run_node({"DequantizeLinear",
                          {},
                          {typed_tensor<uint8_t>(DType::kUInt8, {4}, {0, 3, 128, 255}), TestTensor::f32({}, {2}),
                           typed_tensor<uint8_t>(DType::kUInt8, {}, {128})},
                          {f32_out({4})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(-256, -250, 0, 254));
  NodeRun mismatch = run_node({"DequantizeLinear",
                               {},
                               {typed_tensor<uint8_t>(DType::kUInt8, {1}, {0}), TestTensor::f32({}, {2}),
                                typed_tensor<int8_t>(DType::kInt8, {}, {1})},
                               {f32_out({1})}});
  EXPECT_THAT(mismatch.error, HasSubstr("the zero point (input 2) must be uint8"));
}

TEST(DynamicQuantizeLinearKernel, MapsTheRangeWithZeroOntoUint8) {
  NodeRun run = run_node({"DynamicQuantizeLinear",
                          {},
                          {TestTensor::f32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})},
                          {{DType::kUInt8, {6}}, f32_out({}), {DType::kUInt8, {}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bytes, ElementsAre(153, 255, 0, 26, 221, 179));
  EXPECT_THAT(run.outputs[1].floats(), ElementsAre(FloatNear(0.0196078f, 1e-6f)));
  EXPECT_THAT(run.outputs[2].bytes, ElementsAre(153));
}

}  // namespace
}  // namespace plugrt::portable::testing
