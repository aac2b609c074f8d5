// SPDX-License-Identifier: Apache-2.0
// One model split between two plugins: xnnpack takes the convolution block and onednn
// the transpose / batched matmul / layer normalization part, with the compiler's default
// priority (xnnpack before onednn). The result must match the portable backend's.
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"

namespace plugrt::testing {
namespace {

std::vector<float> reproducible(size_t count, uint32_t seed, float scale) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  std::vector<float> values(count);
  for (float& value : values) value = uniform(generator);
  return values;
}

/// x [1, 8, 6, 6] -> Conv 3x3 -> Relu -> Reshape [1, 16, 36] -> Transpose [1, 36, 16]
/// -> MatMul with its own transpose [1, 36, 36] -> Softmax -> MatMul [1, 36, 16]
/// -> LayerNormalization.
std::vector<uint8_t> conv_then_attention_graph() {
  GraphBuilder g(17);
  ValueId x = g.add_value("x", DType::kFloat32, {1, 8, 6, 6});
  g.add_input(x);
  ValueId w = g.add_constant_f32("w", {16, 8, 3, 3}, reproducible(16 * 8 * 9, 1, 0.2f));
  ValueId b = g.add_constant_f32("b", {16}, reproducible(16, 2, 0.1f));
  ValueId conv = g.add_value("conv", DType::kFloat32, {1, 16, 6, 6});
  g.add_node("Conv", "conv", {x, w, b}, {conv}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  ValueId relu = g.add_value("relu", DType::kFloat32, {1, 16, 6, 6});
  g.add_node("Relu", "relu", {conv}, {relu});
  ValueId shape = g.add_constant_i64("shape", {3}, {1, 16, 36});
  ValueId flat = g.add_value("flat", DType::kFloat32, {1, 16, 36});
  g.add_node("Reshape", "reshape", {relu, shape}, {flat});
  ValueId tokens = g.add_value("tokens", DType::kFloat32, {1, 36, 16});
  g.add_node("Transpose", "to_tokens", {flat}, {tokens}, {Attribute::Ints("perm", {0, 2, 1})});
  ValueId scores = g.add_value("scores", DType::kFloat32, {1, 36, 36});
  g.add_node("MatMul", "scores", {tokens, flat}, {scores});
  ValueId weights = g.add_value("weights", DType::kFloat32, {1, 36, 36});
  g.add_node("Softmax", "softmax", {scores}, {weights}, {Attribute::Int("axis", -1)});
  ValueId context = g.add_value("context", DType::kFloat32, {1, 36, 16});
  g.add_node("MatMul", "context", {weights, tokens}, {context});
  ValueId gamma = g.add_constant_f32("gamma", {16}, reproducible(16, 3, 1.0f));
  ValueId beta = g.add_constant_f32("beta", {16}, reproducible(16, 4, 1.0f));
  ValueId y = g.add_value("y", DType::kFloat32, {1, 36, 16});
  g.add_node("LayerNormalization", "norm", {context, gamma, beta}, {y}, {Attribute::Int("axis", -1)});
  g.add_output(y);
  return g.finish();
}

std::vector<float> run(const std::vector<uint8_t>& bytes, Registry& registry, const std::vector<float>& input,
                       size_t threads = 0) {
  Result<Program> program = Program::from_bytes(bytes, "two_backends.prt");
  EXPECT_TRUE(program.is_ok()) << program.status().to_string();
  if (!program.is_ok()) return {};
  MethodOptions options;
  options.num_threads = threads;
  Result<Method> method = Method::load(*program, "forward", registry, options);
  EXPECT_TRUE(method.is_ok()) << method.status().to_string();
  if (!method.is_ok()) return {};
  for (const DelegatePlacement& placement : method->report().delegates) {
    EXPECT_FALSE(placement.fell_back) << placement.requested_backend << ": " << placement.reason;
  }
  std::vector<float> data = input;
  std::vector<int64_t> shape = method->input_spec(0).shape;
  DLTensor tensor{
      data.data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
  EXPECT_TRUE(method->set_input(0, tensor).is_ok());
  // Several runs: from the second on, each backend wakes workers the other's turn parked.
  for (int run = 0; run < 3; ++run) {
    Status status = method->execute();
    EXPECT_TRUE(status.is_ok()) << status.to_string();
  }
  const float* out = static_cast<const float*>(method->output(0).data);
  return std::vector<float>(out, out + method->output_spec(0).num_bytes() / sizeof(float));
}

TEST(TwoBackends, XnnpackAndOnednnEachTakeAPartAndMatchPortable) {
  const std::string xnnpack_file = PLUGRT_XNNPACK_PLUGIN_FILE, onednn_file = PLUGRT_ONEDNN_PLUGIN_FILE;
  if (xnnpack_file.empty()) GTEST_SKIP() << "the xnnpack plugin is not built (PLUGRT_BUILD_XNNPACK is off)";
  if (onednn_file.empty()) GTEST_SKIP() << "the onednn plugin is not built (PLUGRT_BUILD_ONEDNN is off)";

  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  plugins::PluginLoader loader(registry, plugins::SearchPathOptions::explicit_files_only());
  for (const std::string& file : {xnnpack_file, onednn_file}) {
    Result<PluginId> loaded = loader.load(file);
    ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  }

  const std::vector<uint8_t> graph = conv_then_attention_graph();
  // Each node to the first of xnnpack, onednn that takes it: the split this test needs (the
  // default, cost-based placement would put the whole graph on onednn).
  compiler::CompileOptions options;
  options.backends = {"xnnpack", "onednn"};
  options.placement = compiler::PlacementRule::kFirstTaker;
  Result<compiler::CompiledModel> both = compiler::compile_graph(graph, registry, options);
  ASSERT_TRUE(both.is_ok()) << both.status().to_string();
  std::set<std::string> used;
  for (const compiler::PartitionSummary& partition : both->summary.partitions) used.insert(partition.backend);
  EXPECT_EQ(used.count("xnnpack"), 1u) << "xnnpack took nothing";
  EXPECT_EQ(used.count("onednn"), 1u) << "onednn took nothing";
  EXPECT_TRUE(both->summary.untaken_ops.empty());
  EXPECT_EQ(both->summary.partitions.front().backend, "xnnpack");
  EXPECT_EQ(both->summary.partitions.back().backend, "onednn");

  options.backends = {"portable"};
  Result<compiler::CompiledModel> portable = compiler::compile_graph(graph, registry, options);
  ASSERT_TRUE(portable.is_ok()) << portable.status().to_string();

  const std::vector<float> input = reproducible(8 * 6 * 6, 9, 1.0f);
  const std::vector<float> actual = run(both->program, registry, input);
  const std::vector<float> expected = run(portable->program, registry, input);
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_FALSE(actual.empty());
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double want = expected[i];
    worst = std::max(worst, std::fabs(actual[i] - want) / std::max(1.0, std::fabs(want)));
  }
  EXPECT_LT(worst, 1e-4);

  // The same program within a budget of 1 and of 2 threads: the backends take turns on
  // the method's threads and the result does not depend on how many there are.
  const std::vector<float> one_thread = run(both->program, registry, input, 1);
  const std::vector<float> two_threads = run(both->program, registry, input, 2);
  ASSERT_EQ(one_thread.size(), actual.size());
  ASSERT_EQ(two_threads.size(), actual.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(two_threads[i], one_thread[i], 1e-5 * std::max(1.0f, std::fabs(one_thread[i]))) << "element " << i;
  }
}

}  // namespace
}  // namespace plugrt::testing
