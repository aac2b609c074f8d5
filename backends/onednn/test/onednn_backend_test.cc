// The oneDNN plugin as a whole: the bundled models, blob compatibility and the
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

#include "onednn_test_support.h"
#include "plugrt/plugins/plugin_metadata.h"

namespace plugrt::onednn_test {
namespace {

using ::testing::AnyOf;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class OnednnBackendTest : public ::testing::Test {
 protected:
  OnednnEnvironment env_;
};

TEST_F(OnednnBackendTest, IsAvailableAndDescribesItself) {
  Result<Backend> backend = env_.registry().find_backend("onednn");
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  Availability availability = backend->is_available();
  EXPECT_TRUE(availability.available) << availability.reason;
  EXPECT_TRUE(backend->has_aot());
  // One arena per handle: calls on a handle are serialised by the host.
  EXPECT_FALSE(backend->can_execute_concurrently());
  EXPECT_THAT(backend->description(), HasSubstr("oneDNN"));
  EXPECT_THAT(backend->plugin().origin, HasSubstr("libplugrt_onednn.so"));
}

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

TEST_F(OnednnBackendTest, ABlobOfAnotherVersionFallsBackToPortable) {
  expect_blob_of_another_version_falls_back(env_, "onednn", "PRTONDNN");
}

TEST_F(OnednnBackendTest, InitRefusesForeignDamagedAndTruncatedBlobs) {
  Result<Backend> backend = env_.registry().find_backend("onednn");
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
  EXPECT_THAT(handle.status().message(), HasSubstr("PRTONDNN"));

  for (size_t stride : {7u, 13u, 61u}) {
    std::vector<uint8_t> damaged = *blob;
    for (size_t i = 16; i < damaged.size(); i += stride) damaged[i] ^= 0x5a;
    options.blob = damaged.data();
    options.blob_size = damaged.size();
    EXPECT_FALSE(backend->init(options).is_ok()) << "stride " << stride;
  }
  std::vector<uint8_t> truncated(blob->begin(), blob->begin() + static_cast<std::ptrdiff_t>(blob->size() / 2));
  options.blob = truncated.data();
  options.blob_size = truncated.size();
  EXPECT_FALSE(backend->init(options).is_ok());

  options.blob = blob->data();
  options.blob_size = blob->size();
  Result<DelegateHandle> good = backend->init(options);
  EXPECT_TRUE(good.is_ok()) << good.status().to_string();
}

// Inputs that crashed the fuzzers: blobs in test/fuzz/corpus/onednn_blob/crash-* are
// refused by init, and graphs with misaligned 8-byte vectors by preprocess.
TEST_F(OnednnBackendTest, TheFuzzersFindingsAreRefused) {
  Result<Backend> backend = env_.registry().find_backend("onednn");
  ASSERT_TRUE(backend.is_ok());
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  size_t blobs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLUGRT_FUZZ_CORPUS_DIR "/onednn_blob")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("crash-", 0) != 0) continue;
    SCOPED_TRACE(name);
    const std::vector<uint8_t> bytes = read(entry.path());
    std::vector<uint64_t> aligned(bytes.size() / 8 + 1);  // blobs lie 64-byte aligned in a program
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    InitOptions options;
    options.blob = aligned.data();
    options.blob_size = bytes.size();
    Result<DelegateHandle> handle = backend->init(options);
    EXPECT_EQ(handle.code(), Error::kInvalidProgram);
    EXPECT_THAT(handle.status().message(), ::testing::HasSubstr("misaligned"));
    ++blobs;
  }
  EXPECT_GE(blobs, 1u);
  const std::vector<uint8_t> graph = read(PLUGRT_FUZZ_CORPUS_DIR "/graph_ir/crash-xnnpack-misaligned-shape.bin");
  ASSERT_FALSE(graph.empty());
  Result<std::vector<uint8_t>> blob = backend->preprocess(graph);
  ASSERT_FALSE(blob.is_ok());
  EXPECT_THAT(blob.status().message(), ::testing::HasSubstr("misaligned"));
  // A shape whose element count overflows int64 (found by the ahead-of-time fuzzer).
  const std::vector<uint8_t> huge = read(PLUGRT_FUZZ_CORPUS_DIR "/graph_ir/crash-onednn-shape-overflow.bin");
  ASSERT_FALSE(huge.empty());
  Result<std::vector<uint8_t>> huge_blob = backend->preprocess(huge);
  ASSERT_FALSE(huge_blob.is_ok());
  EXPECT_THAT(huge_blob.status().message(), ::testing::HasSubstr("too large shape"));
  // An int64 constant whose shape claims far more elements than its data holds: once,
  // reading it allocated for the shape (13 GB) before checking the data.
  const std::vector<uint8_t> short_data =
      read(PLUGRT_FUZZ_CORPUS_DIR "/graph_ir/crash-onednn-int-constant-too-short.bin");
  ASSERT_FALSE(short_data.empty());
  Result<std::vector<uint8_t>> short_blob = backend->preprocess(short_data);
  ASSERT_FALSE(short_blob.is_ok());
  EXPECT_THAT(short_blob.status().message(), ::testing::HasSubstr("Slice"));
}

TEST_F(OnednnBackendTest, ExecuteChecksItsArguments) {
  Result<Backend> backend = env_.registry().find_backend("onednn");
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
  EXPECT_THAT(out, Each(::testing::Ge(0.0f)));  // the fused Relu ran

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

  wrong = input;
  wrong.data = nullptr;
  status = handle->execute(wrong_inputs, outputs);
  EXPECT_EQ(status.code(), Error::kInvalidArgument);

  status = handle->execute(Span<const DLTensor* const>(), outputs);
  EXPECT_EQ(status.code(), Error::kInvalidArgument);
}

TEST_F(OnednnBackendTest, ThreadCountsGiveTheSameResults) {
  compiler::CompiledModel compiled = env_.compile_model("tiny_encoder", {"onednn"});
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

TEST_F(OnednnBackendTest, ThreadsParkedAtTheEndOfATurnWakeForTheNextCall) {
  expect_parked_workers_wake_for_the_next_call(env_, "onednn");
}

TEST_F(OnednnBackendTest, SeparateHandlesRunConcurrently) {
  compiler::CompiledModel compiled = env_.compile_model("tiny_encoder", {"onednn"});
  Result<Method> reference = env_.load(compiled.program);
  ASSERT_TRUE(reference.is_ok());
  std::vector<std::vector<float>> expected;
  for (uint32_t seed = 0; seed < 4; ++seed) expected.push_back(run_with_seed(*reference, seed).at(0));

  std::vector<Method> methods;
  for (int t = 0; t < 4; ++t) {
    MethodOptions options;
    options.num_threads = t % 2 == 0 ? 1 : 2;
    Result<Method> method = env_.load(compiled.program, options);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    methods.push_back(std::move(method).value());
  }
  std::vector<double> worst(4, 0.0);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int iteration = 0; iteration < 20; ++iteration) {
        const std::vector<float> actual = run_with_seed(methods[t], t).at(0);
        worst[t] = std::max(worst[t], relative_difference(actual, expected[t]));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (double w : worst) EXPECT_LT(w, 1e-5);
}

TEST(OnednnPluginFile, ExportsOnlyTheEntryAndMetadataAndLinksNoRuntime) {
  Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(PLUGRT_ONEDNN_PLUGIN_FILE);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_THAT(info->exported_symbols,
              Each(AnyOf(StartsWith("plugrt_plugin_entry_v"), std::string(PLUGRT_METADATA_SYMBOL))));
  EXPECT_THAT(info->needed_libraries, Each(Not(StartsWith("libplugrt"))));
  EXPECT_THAT(info->needed_libraries, ::testing::Contains(StartsWith("libdnnl")));
}

}  // namespace
}  // namespace plugrt::onednn_test
