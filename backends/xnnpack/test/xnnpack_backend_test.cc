// The XNNPACK plugin as a whole: the bundled models, blob compatibility and the
// fallback, argument checks, threads, concurrent handles, and the plugin file itself.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/plugins/plugin_metadata.h"
#include "xnnpack_test_support.h"

namespace plugrt::xnnpack_test {
namespace {

using ::testing::AnyOf;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class XnnpackBackendTest : public ::testing::Test {
 protected:
  XnnpackEnvironment env_;
};

TEST_F(XnnpackBackendTest, IsAvailableAndDescribesItself) {
  Result<Backend> backend = env_.registry().find_backend("xnnpack");
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  Availability availability = backend->is_available();
  EXPECT_TRUE(availability.available) << availability.reason;
  EXPECT_TRUE(backend->has_aot());
  // One runtime per handle: calls on a handle are serialised by the host.
  EXPECT_FALSE(backend->can_execute_concurrently());
  EXPECT_THAT(backend->description(), HasSubstr("XNNPACK"));
  EXPECT_THAT(backend->plugin().origin, HasSubstr("libplugrt_xnnpack.so"));
}

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

TEST_F(XnnpackBackendTest, ABlobOfAnotherVersionFallsBackToPortable) {
  expect_blob_of_another_version_falls_back(env_, "xnnpack", "PRTXNNPK");
}

TEST_F(XnnpackBackendTest, InitRefusesForeignAndDamagedBlobs) {
  Result<Backend> backend = env_.registry().find_backend("xnnpack");
  ASSERT_TRUE(backend.is_ok());
  Result<std::vector<uint8_t>> blob = backend->preprocess(conv_relu_graph());
  ASSERT_TRUE(blob.is_ok()) << blob.status().to_string();

  const std::vector<uint8_t> not_ours = conv_relu_graph();  // a graph IR buffer
  InitOptions options;
  options.blob = not_ours.data();
  options.blob_size = not_ours.size();
  Result<DelegateHandle> handle = backend->init(options);
  ASSERT_FALSE(handle.is_ok());
  EXPECT_EQ(handle.code(), Error::kDelegateInvalidCompatibility);
  EXPECT_THAT(handle.status().message(), HasSubstr("PRTXNNPK"));

  std::vector<uint8_t> damaged = *blob;
  for (size_t i = 16; i < damaged.size(); i += 7) damaged[i] ^= 0x5a;
  options.blob = damaged.data();
  options.blob_size = damaged.size();
  EXPECT_FALSE(backend->init(options).is_ok());

  options.blob = blob->data();
  options.blob_size = blob->size();
  Result<DelegateHandle> good = backend->init(options);
  EXPECT_TRUE(good.is_ok()) << good.status().to_string();
}

// The blob fuzzer's corpus (test/fuzz/corpus/xnnpack_blob): the seeds are real blobs
// and initialise; each crash-* input, a crash found by the fuzzer, is refused.
TEST_F(XnnpackBackendTest, TheFuzzerSeedsInitAndItsFindingsAreRefused) {
  Result<Backend> backend = env_.registry().find_backend("xnnpack");
  ASSERT_TRUE(backend.is_ok());
  size_t seeds = 0, findings = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLUGRT_FUZZ_CORPUS_DIR "/xnnpack_blob")) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<uint64_t> aligned(bytes.size() / 8 + 1);  // blobs lie 64-byte aligned in a program
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    InitOptions options;
    options.blob = aligned.data();
    options.blob_size = bytes.size();
    Result<DelegateHandle> handle = backend->init(options);
    if (name.rfind("crash-", 0) == 0) {
      EXPECT_EQ(handle.code(), Error::kInvalidProgram);
      ++findings;
    } else {
      EXPECT_TRUE(handle.is_ok()) << handle.status().to_string();
      ++seeds;
    }
  }
  EXPECT_GE(seeds, 2u);
  EXPECT_GE(findings, 1u);

  // The ahead-of-time fuzzer's findings (corpus/graph_ir/crash-xnnpack-*): preprocess
  // refuses them.
  size_t graphs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLUGRT_FUZZ_CORPUS_DIR "/graph_ir")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("crash-xnnpack-", 0) != 0) continue;
    SCOPED_TRACE(name);
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> graph((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(backend->preprocess(graph).is_ok());
    ++graphs;
  }
  EXPECT_GE(graphs, 2u);
}

TEST_F(XnnpackBackendTest, ExecuteChecksItsArguments) {
  Result<Backend> backend = env_.registry().find_backend("xnnpack");
  ASSERT_TRUE(backend.is_ok());
  Result<std::vector<uint8_t>> blob = backend->preprocess(conv_relu_graph());
  ASSERT_TRUE(blob.is_ok());
  InitOptions options;
  options.blob = blob->data();
  options.blob_size = blob->size();
  Result<DelegateHandle> handle = backend->init(options);
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();

  std::vector<float> in(1 * 4 * 6 * 6, 1.0f), out(1 * 8 * 6 * 6, 0.0f);
  int64_t in_shape[] = {1, 4, 6, 6}, out_shape[] = {1, 8, 6, 6}, wrong_shape[] = {1, 6, 6, 4};
  DLTensor input{in.data(), {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, in_shape, nullptr, 0};
  DLTensor output{out.data(), {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
  const DLTensor* inputs[] = {&input};
  const DLTensor* outputs[] = {&output};
  EXPECT_TRUE(handle->execute(inputs, outputs).is_ok());

  DLTensor wrong = input;
  wrong.shape = wrong_shape;
  const DLTensor* wrong_inputs[] = {&wrong};
  Status status = handle->execute(wrong_inputs, outputs);
  EXPECT_EQ(status.code(), Error::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("shape"));

  wrong = input;
  wrong.dtype = {kDLFloat, 16, 1};
  status = handle->execute(wrong_inputs, outputs);
  EXPECT_EQ(status.code(), Error::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("float32"));

  status = handle->execute(Span<const DLTensor* const>(), outputs);
  EXPECT_EQ(status.code(), Error::kInvalidArgument);
}

TEST_F(XnnpackBackendTest, ThreadCountsGiveTheSameResults) {
  compiler::CompiledModel compiled = env_.compile_model("tiny_cnn", {"xnnpack"});
  std::vector<std::vector<float>> results;
  for (size_t threads : {1u, 2u, 4u, 0u}) {
    MethodOptions options;
    options.num_threads = threads;
    Result<Method> method = env_.load(compiled.program, options);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    results.push_back(run_with_seed(*method, 11).at(0));
  }
  for (size_t i = 1; i < results.size(); ++i) EXPECT_LT(relative_difference(results[i], results[0]), 1e-5);
}

TEST_F(XnnpackBackendTest, ThreadsParkedAtTheEndOfATurnWakeForTheNextCall) {
  expect_parked_workers_wake_for_the_next_call(env_, "xnnpack");
}

TEST_F(XnnpackBackendTest, SeparateHandlesRunConcurrently) {
  compiler::CompiledModel compiled = env_.compile_model("tiny_cnn", {"xnnpack"});
  Result<Method> reference = env_.load(compiled.program);
  ASSERT_TRUE(reference.is_ok());
  std::vector<std::vector<float>> expected;
  for (uint32_t seed = 0; seed < 4; ++seed) expected.push_back(run_with_seed(*reference, seed).at(0));

  std::vector<Method> methods;
  for (int t = 0; t < 4; ++t) {
    MethodOptions options;
    options.num_threads = t % 2 == 0 ? 1 : 2;  // some share the 2-thread pool
    Result<Method> method = env_.load(compiled.program, options);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    methods.push_back(std::move(method).value());
  }
  std::vector<double> worst(4, 0.0);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int iteration = 0; iteration < 25; ++iteration) {
        const std::vector<float> actual = run_with_seed(methods[t], t).at(0);
        worst[t] = std::max(worst[t], relative_difference(actual, expected[t]));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (double w : worst) EXPECT_LT(w, 1e-6);
}

TEST(XnnpackPluginFile, ExportsOnlyTheEntryAndMetadataAndLinksNoRuntime) {
  Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(PLUGRT_XNNPACK_PLUGIN_FILE);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_THAT(info->exported_symbols,
              Each(AnyOf(StartsWith("plugrt_plugin_entry_v"), std::string(PLUGRT_METADATA_SYMBOL))));
  EXPECT_THAT(info->needed_libraries, Each(Not(StartsWith("libplugrt"))));
  EXPECT_THAT(info->needed_libraries, ::testing::Contains(StartsWith("libXNNPACK")));
}

}  // namespace
}  // namespace plugrt::xnnpack_test
