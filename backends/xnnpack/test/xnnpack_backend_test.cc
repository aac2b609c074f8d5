// SPDX-License-Identifier: Apache-2.0
// The XNNPACK plugin as a whole: the shared backend suite (test/backend_support/
// backend_suite.h) and the bundled models.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "xnnpack_test_support.h"

namespace plugrt::xnnpack_test {
namespace {

class XnnpackBackendTest : public ::testing::Test {
 protected:
  XnnpackEnvironment env_;
};

TEST_F(XnnpackBackendTest, TinyCnnRunsWhollyOnXnnpackAndMatchesPyTorch) {
  compiler::CompiledModel compiled = env_.compile_model("tiny_cnn", {"xnnpack"});
  ASSERT_FALSE(compiled.program.empty());
  EXPECT_TRUE(compiled.summary.untaken_ops.empty());
  ASSERT_EQ(compiled.summary.partitions.size(), 1u);
  EXPECT_EQ(compiled.summary.partitions[0].backend, "xnnpack");
  EXPECT_EQ(compiled.summary.partitions[0].num_nodes, compiled.summary.num_nodes);
  Result<Method> method = env_.load(compiled.program);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_FALSE(method->report().delegates.at(0).fell_back);
  EXPECT_LT(difference_from_pytorch(*method, "tiny_cnn"), 1e-4);
}

TEST_F(XnnpackBackendTest, MlpAndEncoderRunMixedWithPortableAndMatchPyTorch) {
  for (const std::string name : {"mlp", "tiny_encoder"}) {
    SCOPED_TRACE(name);
    compiler::CompiledModel compiled = env_.compile_model(name, {"xnnpack"});
    ASSERT_FALSE(compiled.program.empty());
    bool any_xnnpack = false;
    for (const auto& partition : compiled.summary.partitions) any_xnnpack |= partition.backend == "xnnpack";
    EXPECT_TRUE(any_xnnpack) << "xnnpack took nothing of " << name;
    Result<Method> method = env_.load(compiled.program);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    EXPECT_LT(difference_from_pytorch(*method, name), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Backend, BackendSuite,
                         ::testing::Values(BackendUnderTest{"xnnpack", PLUGRT_XNNPACK_PLUGIN_FILE, "PRTXNNPK",
                                                            "XNNPACK", "libXNNPACK", "tiny_cnn"}),
                         backend_suite_name);

}  // namespace
}  // namespace plugrt::xnnpack_test
