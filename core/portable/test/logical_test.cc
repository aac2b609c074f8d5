// SPDX-License-Identifier: Apache-2.0
// The logical and bitwise kernels (logical.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

OutputSpec bool_out(std::vector<int64_t> shape) { return {DType::kBool, std::move(shape)}; }

TEST(LogicalKernels, AndOrXorBroadcast) {
  const TestTensor a = TestTensor::boolean({2, 2}, {true, true, false, false});
  const TestTensor b = TestTensor::boolean({2}, {true, false});
  for (const auto& [op, expected] :
       std::vector<std::pair<std::string, std::vector<bool>>>{{"And", {true, false, false, false}},
                                                              {"Or", {true, true, true, false}},
                                                              {"Xor", {false, true, true, false}}}) {
    NodeRun run = run_node({op, {}, {a, b}, {bool_out({2, 2})}});
    ASSERT_TRUE(run.ok()) << op << ": " << run.error;
    EXPECT_EQ(run.outputs[0].bools(), expected) << op;
  }
}

TEST(LogicalKernels, NotInverts) {
  NodeRun run = run_node({"Not", {}, {TestTensor::boolean({3}, {true, false, true})}, {bool_out({3})}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].bools(), ElementsAre(false, true, false));
}

TEST(LogicalKernels, RefuseNonBoolInputs) {
  NodeRun run = run_node({"And", {}, {TestTensor::i64({1}, {1}), TestTensor::i64({1}, {1})}, {{DType::kInt64, {1}}}});
  EXPECT_THAT(run.error, HasSubstr("supports bool, not int64"));
}

TEST(BitShiftKernel, ShiftsBothWaysAndAWideShiftGivesZero) {
  const TestTensor x = typed_tensor<uint8_t>(DType::kUInt8, {3}, {16, 4, 1});
  const TestTensor by = typed_tensor<uint8_t>(DType::kUInt8, {3}, {1, 2, 9});
  NodeRun left = run_node({"BitShift", {Attribute::String("direction", "LEFT")}, {x, by}, {{DType::kUInt8, {3}}}});
  ASSERT_TRUE(left.ok()) << left.error;
  EXPECT_THAT(left.outputs[0].bytes, ElementsAre(32, 16, 0));
  NodeRun right = run_node({"BitShift", {Attribute::String("direction", "RIGHT")}, {x, by}, {{DType::kUInt8, {3}}}});
  ASSERT_TRUE(right.ok()) << right.error;
  EXPECT_THAT(right.outputs[0].bytes, ElementsAre(8, 1, 0));
  NodeRun bad = run_node({"BitShift", {Attribute::String("direction", "UP")}, {x, by}, {{DType::kUInt8, {3}}}});
  EXPECT_THAT(bad.error, HasSubstr("direction must be"));
}

}  // namespace
}  // namespace plugrt::portable::testing
