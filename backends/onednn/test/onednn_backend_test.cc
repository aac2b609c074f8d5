// SPDX-License-Identifier: Apache-2.0
// The oneDNN plugin as a whole: the shared backend suite (test/backend_support/
// backend_suite.h), the bundled models, and the reasons it gives for its fuzzers'
// findings.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onednn_test_support.h"
#include "plugrt/backend_options.h"
#include "plugrt/graph_builder.h"
#include "plugrt/graph_constants.h"
#include "plugrt/method.h"
#include "plugrt/program.h"

namespace plugrt::onednn_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

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

/// x [256, 256] through `count` MatMuls by one constant (1/256 each): one oneDNN partition
/// of `count` steps, about 34 MFLOP each.
std::vector<uint8_t> matmul_chain(size_t count) {
  GraphBuilder graph;
  ValueId value = graph.add_value("x", DType::kFloat32, {256, 256});
  graph.add_input(value);
  const ValueId weight = graph.add_constant_f32("w", {256, 256}, std::vector<float>(256 * 256, 1.0f / 256));
  for (size_t i = 0; i < count; ++i) {
    const ValueId next = graph.add_value("y" + std::to_string(i), DType::kFloat32, {256, 256});
    graph.add_node("MatMul", "matmul" + std::to_string(i), {value, weight}, {next});
    value = next;
  }
  graph.add_output(value);
  return graph.finish();
}

TEST_F(OnednnBackendTest, ALongPartitionStopsBetweenItsStepsWhenTheHostAsks) {
  compiler::CompiledModel compiled = env_.compile(matmul_chain(300), {"onednn"});
  ASSERT_EQ(compiled.summary.partitions.size(), 1u);
  MethodOptions options;
  options.num_threads = 1;
  Result<Method> method = env_.load(compiled.program, options);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  ASSERT_EQ(method->report().delegates.at(0).backend, "onednn");
  std::vector<float> x(256 * 256, 1.0f);
  int64_t shape[2] = {256, 256};
  DLTensor input{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  ASSERT_TRUE(method->set_input(0, input).is_ok());

  // 300 steps of 34 MFLOP take far longer than 5 ms; without the check between steps the
  // call would end only after the last one (the host stops only before a delegate).
  ExecuteOptions limited;
  limited.timeout = std::chrono::milliseconds(5);
  const Status stopped = method->execute(limited);
  EXPECT_EQ(stopped.code(), Error::kCancelled) << stopped.to_string();
  EXPECT_THAT(stopped.message(), HasSubstr("of 300 oneDNN steps: the host asked the call to stop"));

  ASSERT_TRUE(method->execute().is_ok());  // usable afterwards, and right
  EXPECT_NEAR(static_cast<const float*>(method->output(0).data)[0], 1.0f, 1e-4);
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

TEST_F(OnednnBackendTest, ARuntimeOptionAddressedToItReachesItsInit) {
  // As `plugrt run --backend-option onednn.KEY=VALUE` passes it: the key without the
  // backend's name. A value below 0 is refused, so the delegate falls back and says why.
  compiler::CompiledModel compiled = env_.compile_model("tiny_cnn", {"onednn"});
  BackendOptions options;
  ASSERT_TRUE(options.add("onednn.one_thread_plan_max_bytes=-1").is_ok());
  MethodOptions method_options;
  method_options.backend_options = &options;
  Result<Method> method = env_.load(compiled.program, method_options);
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  bool refused = false;
  for (const DelegatePlacement& delegate : method->report().delegates) {
    refused |= delegate.fell_back && delegate.reason.find("one_thread_plan_max_bytes") != std::string::npos;
  }
  EXPECT_TRUE(refused) << "the oneDNN delegate did not see its runtime option";
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

const BackendUnderTest kOnednn{"onednn", PLUGRT_ONEDNN_PLUGIN_FILE, "PRTONDNN", "oneDNN", "libdnnl", "tiny_encoder"};
INSTANTIATE_TEST_SUITE_P(Backend, BackendSuite, ::testing::Values(kOnednn), backend_suite_name);
INSTANTIATE_TEST_SUITE_P(Backend, QuantizedSuite, ::testing::Values(kOnednn), backend_suite_name);

// With its portable fallback kept, a partition's weights are stored once: in the fallback
// graph, which the oneDNN blob names them from (ABI 1.4). Without the fallback, the blob
// holds them. Either program runs on oneDNN and matches PyTorch.
TEST_F(OnednnBackendTest, WeightsAreStoredOnceInTheFallbackGraph) {
  for (const std::string name : {"mlp", "tiny_encoder"}) {
    SCOPED_TRACE(name);
    compiler::CompiledModel named = env_.compile_model(name, {"onednn"});
    compiler::CompiledModel embedded = env_.compile_model(name, {"onednn"}, /*fallback=*/false);
    ASSERT_EQ(named.summary.partitions.size(), 1u);
    ASSERT_EQ(embedded.summary.partitions.size(), 1u);
    const compiler::PartitionSummary& with = named.summary.partitions[0];
    const compiler::PartitionSummary& without = embedded.summary.partitions[0];
    EXPECT_TRUE(with.blob_names_constants);
    EXPECT_FALSE(without.blob_names_constants);
    EXPECT_EQ(without.fallback_size, 0u);
    // The fallback costs the graph's structure, not a second copy of the weights.
    EXPECT_LT(with.blob_size * 4, without.blob_size);
    EXPECT_LT(named.program.size(), embedded.program.size() + embedded.program.size() / 10);

    Result<Program> program = Program::from_bytes(named.program, name + ".prt");
    ASSERT_TRUE(program.is_ok());
    EXPECT_EQ(program->format_minor(), 1u);
    EXPECT_TRUE(program->describe("forward")->delegates.at(0).blob_names_constants);
    for (const std::vector<uint8_t>* bytes : {&named.program, &embedded.program}) {
      Result<Method> method = env_.load(*bytes);
      ASSERT_TRUE(method.is_ok()) << method.status().to_string();
      EXPECT_FALSE(method->report().delegates.at(0).fell_back) << method->report().delegates.at(0).reason;
      EXPECT_LT(difference_from_pytorch(*method, name), 1e-4);
    }
  }
}

// A blob that names constants is read only with them: without any (a host older than
// ABI 1.4) it is incompatible, so the host falls back; with constants that do not fit
// (a damaged program), the blob is refused, naming the constant.
TEST_F(OnednnBackendTest, ABlobThatNamesConstantsIsRefusedWithoutThem) {
  Result<Program> program = Program::from_bytes(env_.compile_model("mlp", {"onednn"}).program, "mlp.prt");
  ASSERT_TRUE(program.is_ok());
  Result<MethodContents> contents = program->contents("forward");
  ASSERT_TRUE(contents.is_ok());
  const DelegateContents& delegate = contents->delegates.at(0);
  ASSERT_TRUE(delegate.blob_names_constants);
  Result<std::vector<plugrt_named_constant>> constants = graph_constants(delegate.portable_graph);
  ASSERT_TRUE(constants.is_ok()) << constants.status().to_string();
  ASSERT_FALSE(constants->empty());
  Result<RegisteredBackend> backend = env_.registry().find_backend("onednn");
  ASSERT_TRUE(backend.is_ok());
  auto init = [&](const std::vector<plugrt_named_constant>& lent) {
    InitOptions options;
    options.blob = delegate.blob.data();
    options.blob_size = delegate.blob.size();
    options.constants = Span<const plugrt_named_constant>(lent.data(), lent.size());
    Result<DelegateHandle> handle = backend->init(options);
    return handle.is_ok() ? Status::ok() : handle.status();
  };
  EXPECT_TRUE(init(*constants).is_ok());

  const Status none = init({});
  EXPECT_EQ(none.code(), Error::kDelegateInvalidCompatibility);
  EXPECT_THAT(none.message(), HasSubstr("a host older than ABI 1.4"));

  std::vector<plugrt_named_constant> short_one = *constants;
  short_one[0].size -= sizeof(float);
  const std::string name(short_one[0].name.data, short_one[0].name.size);
  const Status wrong_size = init(short_one);
  EXPECT_EQ(wrong_size.code(), Error::kInvalidProgram);
  EXPECT_THAT(wrong_size.message(), HasSubstr("constant \"" + name + "\" has "));

  std::vector<plugrt_named_constant> missing = *constants;
  missing.erase(missing.begin());
  const Status not_lent = init(missing);
  EXPECT_EQ(not_lent.code(), Error::kInvalidProgram);
  EXPECT_THAT(not_lent.message(), HasSubstr("names constant \"" + name + "\", which the host did not lend"));
}

}  // namespace
}  // namespace plugrt::onednn_test
