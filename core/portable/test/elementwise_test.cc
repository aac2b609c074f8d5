// Elementwise kernels against known results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;

TEST(AddKernel, BroadcastsARowOverAMatrix) {
  NodeRun run = run_node({"Add", {}, {TestTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), TestTensor::f32({3}, {10, 20, 30})},
                          {{DType::kFloat32, {2, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST(AddKernel, BroadcastsAColumnAgainstARow) {
  NodeRun run = run_node({"Add", {}, {TestTensor::i64({2, 1}, {10, 20}), TestTensor::i64({1, 3}, {1, 2, 3})},
                          {{DType::kInt64, {2, 3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(11, 12, 13, 21, 22, 23));
}

TEST(AddKernel, RefusesShapesThatDoNotBroadcast) {
  NodeRun run = run_node({"Add", {}, {TestTensor::f32({2}, {1, 2}), TestTensor::f32({3}, {1, 2, 3})},
                          {{DType::kFloat32, {3}}}});
  EXPECT_THAT(run.error, HasSubstr("shapes [2] and [3] do not broadcast"));
}

TEST(ReluKernel, ClampsNegativesToZero) {
  NodeRun run = run_node({"Relu", {}, {TestTensor::f32({4}, {-1.5f, 0, 2, -0.0f})}, {{DType::kFloat32, {4}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(FloatEq(0), FloatEq(0), FloatEq(2), FloatEq(0)));
}

}  // namespace
}  // namespace plugrt::portable::testing
