// Layout and shape kernels against known results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;

TEST(IdentityKernel, CopiesTheInput) {
  NodeRun run = run_node({"Identity", {}, {TestTensor::i64({3}, {1, -2, 3})}, {{DType::kInt64, {3}}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].ints(), ElementsAre(1, -2, 3));
}

TEST(IdentityKernel, RefusesAnOutputOfAnotherShape) {
  NodeRun run = run_node({"Identity", {}, {TestTensor::f32({2}, {1, 2})}, {{DType::kFloat32, {3}}}});
  EXPECT_THAT(run.error, ::testing::HasSubstr("output 0 has shape [3], but the inputs give [2]"));
}

}  // namespace
}  // namespace plugrt::portable::testing
