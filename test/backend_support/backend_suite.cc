// SPDX-License-Identifier: Apache-2.0
#include "backend_suite.h"

#include <algorithm>
#include <filesystem>
#include <thread>
#include <vector>

#include <gmock/gmock.h>

#include "backend_test_support.h"
#include "plugrt/graph_builder.h"
#include "plugrt/plugins/plugin_metadata.h"

namespace plugrt::backend_test {

namespace {

using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

/// The backend's blob of conv_relu_graph() (empty, with a test failure, when preprocess fails).
std::vector<uint8_t> conv_relu_blob(const RegisteredBackend& backend) {
  Result<std::vector<uint8_t>> blob = backend.preprocess(conv_relu_graph());
  EXPECT_TRUE(blob.is_ok()) << blob.status().to_string();
  return blob.is_ok() ? std::move(blob).value() : std::vector<uint8_t>();
}

Result<DelegateHandle> init_blob(const RegisteredBackend& backend, const std::vector<uint8_t>& blob) {
  InitOptions options;
  options.blob = blob.data();
  options.blob_size = blob.size();
  return backend.init(options);
}

}  // namespace

std::string backend_suite_name(const ::testing::TestParamInfo<BackendUnderTest>& info) { return info.param.name; }

TEST_P(BackendSuite, IsAvailableAndDescribesItself) {
  PluginEnvironment env(GetParam().plugin_file);
  Result<RegisteredBackend> backend = env.registry().find_backend(GetParam().name);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  Availability availability = backend->is_available();
  EXPECT_TRUE(availability.available) << availability.reason;
  EXPECT_TRUE(backend->has_aot());
  // One runtime or arena per handle: calls on a handle are serialised by the host.
  EXPECT_FALSE(backend->can_execute_concurrently());
  EXPECT_THAT(backend->description(), HasSubstr(GetParam().description));
  EXPECT_THAT(backend->plugin().origin, HasSubstr("libplugrt_" + GetParam().name + ".so"));
}

TEST_P(BackendSuite, ABlobOfAnotherVersionFallsBackToPortable) {
  PluginEnvironment env(GetParam().plugin_file);
  expect_blob_of_another_version_falls_back(env, GetParam().name, GetParam().blob_magic);
}

TEST_P(BackendSuite, InitRefusesForeignDamagedAndTruncatedBlobs) {
  PluginEnvironment env(GetParam().plugin_file);
  Result<RegisteredBackend> backend = env.registry().find_backend(GetParam().name);
  ASSERT_TRUE(backend.is_ok());
  const std::vector<uint8_t> blob = conv_relu_blob(*backend);
  Result<DelegateHandle> good = init_blob(*backend, blob);
  ASSERT_TRUE(good.is_ok()) << good.status().to_string();

  const std::vector<uint8_t> not_ours = conv_relu_graph();  // a graph IR buffer
  InitOptions options;
  options.blob = not_ours.data();
  options.blob_size = not_ours.size();
  Result<DelegateHandle> foreign = backend->init(options);
  EXPECT_EQ(foreign.code(), Error::kDelegateInvalidCompatibility);
  EXPECT_THAT(foreign.status().message(), HasSubstr(GetParam().blob_magic));

  for (size_t stride : {7u, 13u, 61u}) {
    std::vector<uint8_t> damaged = blob;
    for (size_t i = 16; i < damaged.size(); i += stride) damaged[i] ^= 0x5a;
    options.blob = damaged.data();
    options.blob_size = damaged.size();
    EXPECT_FALSE(backend->init(options).is_ok()) << "stride " << stride;
  }
  std::vector<uint8_t> truncated(blob.begin(), blob.begin() + static_cast<std::ptrdiff_t>(blob.size() / 2));
  options.blob = truncated.data();
  options.blob_size = truncated.size();
  EXPECT_FALSE(backend->init(options).is_ok());
}

TEST_P(BackendSuite, ExecuteChecksItsArguments) {
  PluginEnvironment env(GetParam().plugin_file);
  Result<RegisteredBackend> backend = env.registry().find_backend(GetParam().name);
  ASSERT_TRUE(backend.is_ok());
  Result<DelegateHandle> handle = init_blob(*backend, conv_relu_blob(*backend));
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();

  std::vector<float> in(1 * 4 * 6 * 6, 1.0f), out(1 * 8 * 6 * 6, -1.0f);
  int64_t in_shape[] = {1, 4, 6, 6}, out_shape[] = {1, 8, 6, 6}, wrong_shape[] = {1, 6, 6, 4};
  DLTensor input{in.data(), {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, in_shape, nullptr, 0};
  DLTensor output{out.data(), {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
  const DLTensor* inputs[] = {&input};
  const DLTensor* outputs[] = {&output};
  EXPECT_TRUE(handle->execute(inputs, outputs).is_ok());
  EXPECT_THAT(out, Each(::testing::Ge(0.0f)));  // the Relu ran

  DLTensor wrong = input;
  const DLTensor* wrong_inputs[] = {&wrong};
  wrong.shape = wrong_shape;
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
  EXPECT_EQ(handle->execute(wrong_inputs, outputs).code(), Error::kInvalidArgument);

  EXPECT_EQ(handle->execute(Span<const DLTensor* const>(), outputs).code(), Error::kInvalidArgument);
}

TEST_P(BackendSuite, ThreadCountsGiveTheSameResults) {
  PluginEnvironment env(GetParam().plugin_file);
  compiler::CompiledModel compiled = env.compile_model(GetParam().threaded_model, {GetParam().name});
  std::vector<std::vector<float>> results;
  for (size_t threads : {1u, 2u, 4u, 0u}) {
    MethodOptions options;
    options.num_threads = threads;
    Result<Method> method = env.load(compiled.program, options);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    results.push_back(run_with_seed(*method, 11).at(0));
  }
  for (size_t i = 1; i < results.size(); ++i) EXPECT_LT(relative_difference(results[i], results[0]), 1e-5);
}

TEST_P(BackendSuite, ThreadsParkedAtTheEndOfATurnWakeForTheNextCall) {
  PluginEnvironment env(GetParam().plugin_file);
  expect_parked_workers_wake_for_the_next_call(env, GetParam().name);
}

TEST_P(BackendSuite, SeparateHandlesRunConcurrently) {
  PluginEnvironment env(GetParam().plugin_file);
  compiler::CompiledModel compiled = env.compile_model(GetParam().threaded_model, {GetParam().name});
  Result<Method> reference = env.load(compiled.program);
  ASSERT_TRUE(reference.is_ok());
  std::vector<std::vector<float>> expected;
  for (uint32_t seed = 0; seed < 4; ++seed) expected.push_back(run_with_seed(*reference, seed).at(0));

  std::vector<Method> methods;
  for (int t = 0; t < 4; ++t) {
    MethodOptions options;
    options.num_threads = t % 2 == 0 ? 1 : 2;  // some share a 2-thread pool
    Result<Method> method = env.load(compiled.program, options);
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

// A graph whose dimensions vary (graph IR version 2) reaches a backend's partition and
// preprocess only when it declares PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS (ABI 1.5); the
// others take none of its nodes, without an error.
TEST_P(BackendSuite, AGraphWithSymbolsReachesItOnlyWhenItTakesVaryingDimensions) {
  PluginEnvironment env(GetParam().plugin_file);
  Result<RegisteredBackend> backend = env.registry().find_backend(GetParam().name);
  ASSERT_TRUE(backend.is_ok());
  GraphBuilder graph;
  const common::DimExpr n = common::DimExpr::symbol(graph.add_symbol("n", 1, 64));
  const ValueId x = graph.add_dynamic_value("x", DType::kFloat32, {common::DimExpr::constant(1), n});
  const ValueId y = graph.add_dynamic_value("y", DType::kFloat32, {common::DimExpr::constant(1), n});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  const std::vector<uint8_t> bytes = graph.finish();
  Result<std::vector<bool>> taken = backend->partition(bytes, 1, {});
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  const bool takes = backend->takes_varying_dimensions();
  EXPECT_TRUE(takes) << "every first-party backend takes dimensions that vary";
  EXPECT_EQ(taken->at(0), takes);
  Result<std::vector<uint8_t>> blob = backend->preprocess(bytes);
  EXPECT_EQ(blob.is_ok(), takes) << blob.status().to_string();
}

// The blob fuzzer's corpus (test/fuzz/corpus/<backend>_blob): the seeds are real blobs
// and initialise; each crash-* input, a crash found by the fuzzer, is refused as damaged
// (or, a varying-shape blob whose graph does not lower here, as incompatible: the host
// then runs the fallback). The
// ahead-of-time fuzzer's findings (corpus/graph_ir/crash-<backend>-*): preprocess refuses them.
TEST_P(BackendSuite, TheFuzzerSeedsInitAndItsFindingsAreRefused) {
  PluginEnvironment env(GetParam().plugin_file);
  Result<RegisteredBackend> backend = env.registry().find_backend(GetParam().name);
  ASSERT_TRUE(backend.is_ok());
  const std::filesystem::path corpus = PLUGRT_FUZZ_CORPUS_DIR;
  size_t seeds = 0, findings = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus / (GetParam().name + "_blob"))) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const Status status = init_status(*backend, read_file_bytes(entry.path()));
    if (name.rfind("crash-varying-", 0) == 0) {
      EXPECT_TRUE(status.code() == Error::kInvalidProgram || status.code() == Error::kDelegateInvalidCompatibility)
          << status.to_string();
      ++findings;
    } else if (name.rfind("crash-", 0) == 0) {
      EXPECT_EQ(status.code(), Error::kInvalidProgram);
      ++findings;
    } else {
      EXPECT_TRUE(status.is_ok()) << status.to_string();
      ++seeds;
    }
  }
  EXPECT_GE(seeds, 2u);
  EXPECT_GE(findings, 1u);
  size_t graphs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus / "graph_ir")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("crash-" + GetParam().name + "-", 0) != 0) continue;
    SCOPED_TRACE(name);
    EXPECT_FALSE(backend->preprocess(read_file_bytes(entry.path())).is_ok());
    ++graphs;
  }
  EXPECT_GE(graphs, 2u);
}

TEST_P(BackendSuite, PluginFileExportsOnlyTheEntryAndMetadataAndLinksNoRuntime) {
  Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(GetParam().plugin_file);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_THAT(info->exported_symbols,
              Each(AnyOf(StartsWith("plugrt_plugin_entry_v"), std::string(PLUGRT_METADATA_SYMBOL))));
  EXPECT_THAT(info->needed_libraries, Each(Not(StartsWith("libplugrt"))));
  EXPECT_THAT(info->needed_libraries, Contains(StartsWith(GetParam().runtime_library)));
}

}  // namespace plugrt::backend_test
