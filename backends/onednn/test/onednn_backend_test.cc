// SPDX-License-Identifier: Apache-2.0
// The oneDNN plugin as a whole: the shared backend suite (test/backend_support/
// backend_suite.h), the bundled models, and the reasons it gives for its fuzzers'
// findings.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onednn_test_support.h"

namespace plugrt::onednn_test {
namespace {

using ::testing::HasSubstr;

class OnednnBackendTest : public ::testing::Test {
 protected:
  OnednnEnvironment env_;
};

TEST_F(OnednnBackendTest, MlpAndEncoderRunWhollyOnOnednnAndMatchPyTorch) {
  for (const std::string name : {"mlp", "tiny_encoder"}) {
    SCOPED_TRACE(name);
    compiler::CompiledModel compiled = env_.compile_model(name, {"onednn"});
    ASSERT_FALSE(compiled.program.empty());
    EXPECT_TRUE(compiled.summary.untaken_ops.empty());
    ASSERT_EQ(compiled.summary.partitions.size(), 1u);
    EXPECT_EQ(compiled.summary.partitions[0].backend, "onednn");
    Result<Method> method = env_.load(compiled.program);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    EXPECT_FALSE(method->report().delegates.at(0).fell_back);
    EXPECT_LT(difference_from_pytorch(*method, name), 1e-4);
  }
}

TEST_F(OnednnBackendTest, TinyCnnRunsMixedWithPortableAndMatchesPyTorch) {
  compiler::CompiledModel compiled = env_.compile_model("tiny_cnn", {"onednn"});
  ASSERT_FALSE(compiled.program.empty());
  size_t onednn_nodes = 0;
  for (const auto& partition : compiled.summary.partitions) {
    if (partition.backend == "onednn") onednn_nodes += partition.num_nodes;
  }
  EXPECT_GE(onednn_nodes + 1, compiled.summary.num_nodes) << "only the Pad stays on portable";
  Result<Method> method = env_.load(compiled.program);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_LT(difference_from_pytorch(*method, "tiny_cnn"), 1e-4);
}

// The reasons given for the fuzzers' findings (the shared suite checks that each is
// refused): misaligned 8-byte vectors in a blob or a graph, a shape whose element count
// overflows int64, and an int64 constant whose shape claims far more elements than its
// data holds (once, reading it allocated 13 GB for the shape before checking the data).
TEST_F(OnednnBackendTest, TheFuzzersFindingsAreRefusedWithTheirReasons) {
  Result<RegisteredBackend> backend = env_.registry().find_backend("onednn");
  ASSERT_TRUE(backend.is_ok());
  const std::filesystem::path corpus = PLUGRT_FUZZ_CORPUS_DIR;
  for (const auto& entry : std::filesystem::directory_iterator(corpus / "onednn_blob")) {
    if (entry.path().filename().string().rfind("crash-misaligned-", 0) != 0) continue;
    SCOPED_TRACE(entry.path().filename().string());
    EXPECT_THAT(init_status(*backend, read_file_bytes(entry.path())).message(), HasSubstr("misaligned"));
  }
  for (const auto& [file, reason] : {std::pair{"crash-xnnpack-misaligned-shape.bin", "misaligned"},
                                     std::pair{"crash-onednn-shape-overflow.bin", "too large shape"},
                                     std::pair{"crash-onednn-int-constant-too-short.bin", "Slice"}}) {
    const std::vector<uint8_t> graph = read_file_bytes(corpus / "graph_ir" / file);
    ASSERT_FALSE(graph.empty()) << file;
    EXPECT_THAT(backend->preprocess(graph).status().message(), HasSubstr(reason)) << file;
  }
}

INSTANTIATE_TEST_SUITE_P(Backend, BackendSuite,
                         ::testing::Values(BackendUnderTest{"onednn", PLUGRT_ONEDNN_PLUGIN_FILE, "PRTONDNN", "oneDNN",
                                                            "libdnnl", "tiny_encoder"}),
                         backend_suite_name);

}  // namespace
}  // namespace plugrt::onednn_test
