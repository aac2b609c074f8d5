// SPDX-License-Identifier: Apache-2.0
// The compiler over graph IR models: partitioning through backends' ahead-of-time
// entries, lowering, determinism, fallback blobs, and running what it writes.
#include "compiler.h"

#include <cstring>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/method.h"
#include "plugrt/placement/cost_model.h"
#include "plugrt/schema/graph_ir_generated.h"
#include "plugrt/sdk/plugin_export.h"

namespace plugrt::compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// ---- "picky": a backend that takes only the op types it is told, and runs them on the
// portable backend (so results can be compared). Its blob is the graph IR itself.

struct PickyHandle {
  DelegateHandle delegate;
};

std::set<std::string>& picky_ops() {
  static std::set<std::string> ops;
  return ops;
}

bool picky_is_available(void*, const plugrt_host_services*, plugrt_text_buffer*) { return true; }

plugrt_status picky_init(void*, const plugrt_host_services*, const plugrt_init_args* args,
                         plugrt_delegate_handle* handle) {
  InitOptions options;
  options.blob = args->blob;
  options.blob_size = args->blob_size;
  Result<DelegateHandle> delegate = builtin_portable_backend().init(options);
  if (!delegate.is_ok()) return PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY;
  *handle = reinterpret_cast<plugrt_delegate_handle>(new PickyHandle{std::move(delegate).value()});
  return PLUGRT_STATUS_OK;
}

plugrt_status picky_execute(plugrt_delegate_handle handle, const plugrt_execute_args* args) {
  auto* picky = reinterpret_cast<PickyHandle*>(handle);
  Status status = picky->delegate.execute(Span<const DLTensor* const>(args->inputs, args->num_inputs),
                                          Span<const DLTensor* const>(args->outputs, args->num_outputs));
  return status.is_ok() ? PLUGRT_STATUS_OK : PLUGRT_STATUS_INTERNAL;
}

void picky_destroy(plugrt_delegate_handle handle) { delete reinterpret_cast<PickyHandle*>(handle); }

plugrt_status picky_partition(void*, const plugrt_host_services*, plugrt_partition_args* args) {
  const ir::Graph* graph = ir::GetGraph(args->graph);
  for (size_t n = 0; n < args->num_nodes; ++n) {
    const std::string op = graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(n))->op_type()->str();
    args->node_taken[n] = picky_ops().count(op) ? 1 : 0;
  }
  return PLUGRT_STATUS_OK;
}

plugrt_status picky_preprocess(void*, const plugrt_host_services* host, plugrt_preprocess_args* args) {
  args->blob = host->allocate(host->context, args->graph_size, 64);
  std::memcpy(args->blob, args->graph, args->graph_size);
  args->blob_size = args->graph_size;
  return PLUGRT_STATUS_OK;
}

const plugrt_aot_backend kPickyAot = {PLUGRT_AOT_BACKEND_SIZE, picky_partition, picky_preprocess};
const plugrt_backend kPicky = {PLUGRT_BACKEND_SIZE,
                               PLUGRT_LITERAL("picky"),
                               0,
                               nullptr,
                               picky_is_available,
                               picky_init,
                               picky_execute,
                               picky_destroy,
                               &kPickyAot,
                               PLUGRT_LITERAL("takes the op types a test names")};
const plugrt_backend* const kPickyBackends[] = {&kPicky};
const plugrt_plugin_descriptor kPickyPlugin = {PLUGRT_PLUGIN_DESCRIPTOR_SIZE,
                                               PLUGRT_ABI_MAJOR,
                                               PLUGRT_ABI_MINOR,
                                               PLUGRT_LITERAL("picky"),
                                               PLUGRT_LITERAL("1.0.0"),
                                               kPickyBackends,
                                               1};
plugrt_status picky_entry(const plugrt_host_services*, const plugrt_plugin_descriptor** descriptor) {
  *descriptor = &kPickyPlugin;
  return PLUGRT_STATUS_OK;
}

// ---- "eager": the same, but it takes every node.

plugrt_status eager_partition(void*, const plugrt_host_services*, plugrt_partition_args* args) {
  for (size_t n = 0; n < args->num_nodes; ++n) args->node_taken[n] = 1;
  return PLUGRT_STATUS_OK;
}

const plugrt_aot_backend kEagerAot = {PLUGRT_AOT_BACKEND_SIZE, eager_partition, picky_preprocess};
const plugrt_backend kEager = {PLUGRT_BACKEND_SIZE,
                               PLUGRT_LITERAL("eager"),
                               0,
                               nullptr,
                               picky_is_available,
                               picky_init,
                               picky_execute,
                               picky_destroy,
                               &kEagerAot,
                               PLUGRT_LITERAL("takes every node")};
const plugrt_backend* const kEagerBackends[] = {&kEager};
const plugrt_plugin_descriptor kEagerPlugin = {PLUGRT_PLUGIN_DESCRIPTOR_SIZE,
                                               PLUGRT_ABI_MAJOR,
                                               PLUGRT_ABI_MINOR,
                                               PLUGRT_LITERAL("eager"),
                                               PLUGRT_LITERAL("1.0.0"),
                                               kEagerBackends,
                                               1};
plugrt_status eager_entry(const plugrt_host_services*, const plugrt_plugin_descriptor** descriptor) {
  *descriptor = &kEagerPlugin;
  return PLUGRT_STATUS_OK;
}

// ---- "reluctant": takes every node, then declines the partition in preprocess (as a
// plugin before ABI 1.6 declines one whose inputs do not give its symbols).

plugrt_status reluctant_preprocess(void*, const plugrt_host_services*, plugrt_preprocess_args*) {
  return PLUGRT_STATUS_NOT_SUPPORTED;
}

const plugrt_aot_backend kReluctantAot = {PLUGRT_AOT_BACKEND_SIZE, eager_partition, reluctant_preprocess};
const plugrt_backend kReluctant = {PLUGRT_BACKEND_SIZE,
                                   PLUGRT_LITERAL("reluctant"),
                                   0,
                                   nullptr,
                                   picky_is_available,
                                   picky_init,
                                   picky_execute,
                                   picky_destroy,
                                   &kReluctantAot,
                                   PLUGRT_LITERAL("takes every node, lowers none")};
const plugrt_backend* const kReluctantBackends[] = {&kReluctant};
const plugrt_plugin_descriptor kReluctantPlugin = {PLUGRT_PLUGIN_DESCRIPTOR_SIZE,
                                                   PLUGRT_ABI_MAJOR,
                                                   PLUGRT_ABI_MINOR,
                                                   PLUGRT_LITERAL("reluctant"),
                                                   PLUGRT_LITERAL("1.0.0"),
                                                   kReluctantBackends,
                                                   1};
plugrt_status reluctant_entry(const plugrt_host_services*, const plugrt_plugin_descriptor** descriptor) {
  *descriptor = &kReluctantPlugin;
  return PLUGRT_STATUS_OK;
}

// ---- Fixtures -------------------------------------------------------------------------

/// y = Add(Relu(Conv(x)), x): x [1, 2, 4, 4], a 1x1 convolution mixing the two channels.
std::vector<uint8_t> conv_relu_add_graph() {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, {1, 2, 4, 4});
  ValueId w = graph.add_constant_f32("w", {2, 2, 1, 1}, {1, -1, 0.5f, 0.5f});
  ValueId conv = graph.add_value("conv", DType::kFloat32, {1, 2, 4, 4});
  ValueId relu = graph.add_value("relu", DType::kFloat32, {1, 2, 4, 4});
  ValueId y = graph.add_value("y", DType::kFloat32, {1, 2, 4, 4});
  graph.add_node("Conv", "conv", {x, w}, {conv});
  graph.add_node("Relu", "relu", {conv}, {relu});
  graph.add_node("Add", "add", {relu, x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  return graph.finish();
}

class CompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    ASSERT_TRUE(registry_.register_plugin(picky_entry, PluginSource{}).is_ok());
    picky_ops() = {"Relu"};
  }
  void TearDown() override { picky_ops().clear(); }

  /// Runs "forward" of `program` on x = 0, 1, 2, ... and returns y.
  std::vector<float> run(const std::vector<uint8_t>& program_bytes, LoadReport* report = nullptr,
                         Registry* registry = nullptr) {
    Result<Program> program = Program::from_bytes(program_bytes);
    EXPECT_TRUE(program.is_ok()) << program.status().to_string();
    Result<Method> method = Method::load(*program, "forward", registry != nullptr ? *registry : registry_);
    EXPECT_TRUE(method.is_ok()) << method.status().to_string();
    if (report != nullptr) *report = method->report();
    std::vector<float> x(32);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 10.0f;
    std::vector<int64_t> shape = {1, 2, 4, 4};
    DLTensor input{x.data(), {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
    EXPECT_TRUE(method->set_input(0, input).is_ok());
    Status status = method->execute();
    EXPECT_TRUE(status.is_ok()) << status.to_string();
    const float* y = static_cast<const float*>(method->output(0).data);
    return std::vector<float>(y, y + 32);
  }

  Registry registry_;
};

TEST_F(CompilerTest, SplitsAGraphBetweenABackendAndPortable) {
  CompileOptions options;
  options.backends = {"picky"};
  Result<CompiledModel> compiled = compile_graph(conv_relu_add_graph(), registry_, options);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  const CompileSummary& summary = compiled->summary;
  EXPECT_THAT(summary.backends, ElementsAre("picky", "portable"));
  ASSERT_EQ(summary.partitions.size(), 3u);
  EXPECT_EQ(summary.partitions[0].name, "portable:0");
  EXPECT_THAT(summary.partitions[0].op_counts, ElementsAre(Pair("Conv", 1u)));
  EXPECT_EQ(summary.partitions[1].name, "picky:1");
  EXPECT_GT(summary.partitions[1].fallback_size, 0u);
  EXPECT_EQ(summary.partitions[2].backend, "portable");
  EXPECT_EQ(summary.partitions[2].fallback_size, 0u);
  EXPECT_THAT(summary.untaken_ops, ElementsAre(Pair("Add", 1u), Pair("Conv", 1u)));

  CompileOptions all_portable;
  all_portable.backends = {"portable"};
  Result<CompiledModel> reference = compile_graph(conv_relu_add_graph(), registry_, all_portable);
  ASSERT_TRUE(reference.is_ok());
  ASSERT_EQ(reference->summary.partitions.size(), 1u);
  LoadReport report;
  EXPECT_EQ(run(compiled->program, &report), run(reference->program));
  EXPECT_EQ(report.delegates[1].backend, "picky");
  EXPECT_FALSE(report.delegates[1].fell_back);
}

TEST_F(CompilerTest, ABackendThatTakesEverythingGetsOnePartitionWhateverTheOrder) {
  ASSERT_TRUE(registry_.register_plugin(eager_entry, PluginSource{}).is_ok());
  CompileOptions options;
  options.backends = {"picky", "eager"};
  Result<CompiledModel> compiled = compile_graph(conv_relu_add_graph(), registry_, options);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  EXPECT_EQ(compiled->summary.placement, "cost");
  ASSERT_EQ(compiled->summary.partitions.size(), 1u);
  EXPECT_EQ(compiled->summary.partitions[0].backend, "eager");
  EXPECT_TRUE(compiled->summary.untaken_ops.empty());
  EXPECT_GT(compiled->summary.partitions[0].estimated_us, 0);
  EXPECT_NEAR(compiled->summary.partitions[0].estimated_us, compiled->summary.estimated_us, 1e-9);

  // The first-taker rule shreds it: picky takes the Relu in the middle.
  options.placement = PlacementRule::kFirstTaker;
  Result<CompiledModel> first = compile_graph(conv_relu_add_graph(), registry_, options);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  ASSERT_EQ(first->summary.partitions.size(), 3u);
  EXPECT_EQ(first->summary.partitions[1].backend, "picky");
  EXPECT_GT(first->summary.estimated_us, compiled->summary.estimated_us);
  EXPECT_EQ(run(first->program), run(compiled->program));
}

TEST_F(CompilerTest, APartitionItsBackendDeclinesInPreprocessRunsOnPortable) {
  ASSERT_TRUE(registry_.register_plugin(reluctant_entry, PluginSource{}).is_ok());
  CompileOptions options;
  options.backends = {"reluctant"};
  Result<CompiledModel> compiled = compile_graph(conv_relu_add_graph(), registry_, options);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  ASSERT_EQ(compiled->summary.partitions.size(), 1u);
  EXPECT_EQ(compiled->summary.partitions[0].name, "portable:0");
  EXPECT_EQ(compiled->summary.partitions[0].fallback_size, 0u);
  CompileOptions all_portable;
  all_portable.backends = {"portable"};
  Result<CompiledModel> reference = compile_graph(conv_relu_add_graph(), registry_, all_portable);
  ASSERT_TRUE(reference.is_ok());
  EXPECT_EQ(run(compiled->program), run(reference->program));
}

TEST_F(CompilerTest, MeasuredCostsChooseTheBackendButDoNotSplit) {
  ASSERT_TRUE(registry_.register_plugin(eager_entry, PluginSource{}).is_ok());
  picky_ops() = {"Conv", "Relu", "Add"};  // both take everything: the estimate ties, eager is first
  const std::vector<uint8_t> graph = conv_relu_add_graph();
  const ir::Graph& ir_graph = *ir::GetGraph(graph.data());
  Result<RegisteredBackend> picky = registry_.find_backend("picky"), eager = registry_.find_backend("eager");
  ASSERT_TRUE(picky.is_ok() && eager.is_ok());
  CompileOptions options;
  options.backends = {"eager", "picky"};
  Result<CompiledModel> estimated = compile_graph(graph, registry_, options);
  ASSERT_TRUE(estimated.is_ok()) << estimated.status().to_string();
  ASSERT_EQ(estimated->summary.partitions.size(), 1u);
  EXPECT_EQ(estimated->summary.partitions[0].backend, "eager");

  // Measured: picky 1000 us faster on the Relu alone. That would pay for a split, but the
  // whole graph moves to picky instead, in one partition.
  placement::CostProfile profile("cpu");
  for (size_t n = 0; n < 3; ++n) {
    profile.set(placement::backend_build(*eager), placement::op_signature(ir_graph, n), n == 1 ? 1001 : 10);
    profile.set(placement::backend_build(*picky), placement::op_signature(ir_graph, n), n == 1 ? 1 : 10);
  }
  options.profile = &profile;
  Result<CompiledModel> measured = compile_graph(graph, registry_, options);
  ASSERT_TRUE(measured.is_ok()) << measured.status().to_string();
  ASSERT_EQ(measured->summary.partitions.size(), 1u);
  EXPECT_EQ(measured->summary.partitions[0].backend, "picky");
  EXPECT_DOUBLE_EQ(measured->summary.partitions[0].measured_us, 21);
  EXPECT_EQ(measured->summary.measured_nodes, 3u);
}

TEST_F(CompilerTest, GraphPassesRunFirst) {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, {1, 2, 4, 4});
  ValueId a = graph.add_value("a", DType::kFloat32, {1, 2, 4, 4});
  ValueId y = graph.add_value("y", DType::kFloat32, {1, 2, 4, 4});
  graph.add_node("Identity", "identity", {x}, {a});
  graph.add_node("Relu", "relu", {a}, {y});
  graph.add_input(x);
  graph.add_output(y);
  const std::vector<uint8_t> bytes = graph.finish();
  Result<CompiledModel> compiled = compile_graph(bytes, registry_, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  EXPECT_EQ(compiled->summary.num_nodes_imported, 2u);
  EXPECT_EQ(compiled->summary.num_nodes, 1u);
  EXPECT_THAT(compiled->summary.pass_changes, ElementsAre(Pair("no_op", 1u)));
  CompileOptions without;
  without.passes = false;
  Result<CompiledModel> unsimplified = compile_graph(bytes, registry_, without);
  ASSERT_TRUE(unsimplified.is_ok());
  EXPECT_EQ(unsimplified->summary.num_nodes, 2u);
}

TEST_F(CompilerTest, IsDeterministic) {
  CompileOptions options;
  options.backends = {"picky"};
  Result<CompiledModel> a = compile_graph(conv_relu_add_graph(), registry_, options);
  Result<CompiledModel> b = compile_graph(conv_relu_add_graph(), registry_, options);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->program, b->program);
}

TEST_F(CompilerTest, TheFallbackRunsWhenTheBackendIsGone) {
  CompileOptions options;
  options.backends = {"picky"};
  Result<CompiledModel> compiled = compile_graph(conv_relu_add_graph(), registry_, options);
  ASSERT_TRUE(compiled.is_ok());
  const std::vector<float> with_picky = run(compiled->program);
  Registry without;  // only the built-in portable backend
  LoadReport report;
  EXPECT_EQ(run(compiled->program, &report, &without), with_picky);
  EXPECT_TRUE(report.delegates[1].fell_back);
  EXPECT_THAT(report.delegates[1].reason, HasSubstr("backend 'picky' is not installed"));
}

TEST_F(CompilerTest, NoFallbackLeavesTheBlobsOut) {
  CompileOptions options;
  options.backends = {"picky"};
  options.fallback = false;
  Result<CompiledModel> compiled = compile_graph(conv_relu_add_graph(), registry_, options);
  ASSERT_TRUE(compiled.is_ok());
  for (const PartitionSummary& p : compiled->summary.partitions) EXPECT_EQ(p.fallback_size, 0u);
}

TEST_F(CompilerTest, ANodeNobodyTakesIsNamed) {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, {2});
  ValueId y = graph.add_value("y", DType::kFloat32, {2});
  graph.add_node("FancyOp", "fancy", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  Result<CompiledModel> compiled = compile_graph(graph.finish(), registry_, CompileOptions{});
  ASSERT_FALSE(compiled.is_ok());
  EXPECT_EQ(compiled.code(), Error::kNotSupported);
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("node 'fancy' (FancyOp, opset 17): no chosen backend takes it, and the portable backend "
                        "has no kernel for op type 'FancyOp'"));
}

TEST_F(CompilerTest, AnUnknownBackendIsAnError) {
  CompileOptions options;
  options.backends = {"warp_drive"};
  Result<CompiledModel> compiled = compile_graph(conv_relu_add_graph(), registry_, options);
  EXPECT_EQ(compiled.code(), Error::kNotFound);
}

TEST_F(CompilerTest, DefaultOrderListsEveryBackendWithAheadOfTimeEntriesThenPortable) {
  EXPECT_THAT(default_backend_order(registry_), ElementsAre("picky", "portable"));
}

TEST_F(CompilerTest, AConstantOutputIsWrittenByAnIdentity) {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, {2});
  ValueId y = graph.add_value("y", DType::kFloat32, {2});
  ValueId c = graph.add_constant_f32("c", {2}, {7, 8});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  graph.add_output(c);
  Result<CompiledModel> compiled = compile_graph(graph.finish(), registry_, CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  Result<Program> program = Program::from_bytes(compiled->program);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  Result<Method> method = Method::load(*program, "forward", registry_);
  ASSERT_TRUE(method.is_ok());
  ASSERT_TRUE(method->execute().is_ok());
  const float* out = static_cast<const float*>(method->output(1).data);
  EXPECT_THAT(std::vector<float>(out, out + 2), ElementsAre(7, 8));
}

}  // namespace
}  // namespace plugrt::compiler
