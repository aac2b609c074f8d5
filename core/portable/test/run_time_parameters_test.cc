// SPDX-License-Identifier: Apache-2.0
// Parameters given at run time (run_time_parameters.h), through whole compiled graphs
// run many times: each call's values are read, kernels are kept per set of values, and
// values that contradict the compiled output shapes fail that call only.
#include "run_time_parameters.h"

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiled_graph.h"
#include "dynamic_graph.h"
#include "kernel_test_support.h"
#include "plugrt/graph_builder.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// y[3, 2] = Relu(Reshape(x[3, 2], shape)), the shape (2 int64) given at run time: as
/// [3, 2], [-1, 2], [0, 0]... (0 copies the input's dimension).
std::vector<uint8_t> reshape_relu_graph() {
  GraphBuilder graph;
  const ValueId x = graph.add_value("x", DType::kFloat32, {3, 2});
  const ValueId shape = graph.add_value("shape", DType::kInt64, {2});
  const ValueId reshaped = graph.add_value("reshaped", DType::kFloat32, {3, 2});
  const ValueId y = graph.add_value("y", DType::kFloat32, {3, 2});
  graph.add_node("Reshape", "reshape", {x, shape}, {reshaped});
  graph.add_node("Relu", "relu", {reshaped}, {y});
  graph.add_input(x);
  graph.add_input(shape);
  graph.add_output(y);
  return graph.finish();
}

/// What one run gave: the output, or the error.
struct ReshapeRun {
  bool ok = false;
  std::string error;
  std::vector<float> y;
};

/// Runs `graph` on x = [-1, 2, -3, 4, ...] of `x_shape` (two dimensions) and the
/// Reshape target `shape`, into an output of `y_shape`.
template <typename Graph>
ReshapeRun run_reshape(Graph& graph, std::vector<int64_t> shape, std::vector<int64_t> x_shape = {3, 2},
                       std::vector<int64_t> y_shape = {3, 2}) {
  std::vector<float> x(static_cast<size_t>(x_shape[0] * x_shape[1]));
  for (size_t k = 0; k < x.size(); ++k) x[k] = (k % 2 == 0 ? -1.0f : 1.0f) * static_cast<float>(k + 1);
  ReshapeRun run;
  run.y.resize(x.size());
  int64_t shape_shape[1] = {static_cast<int64_t>(shape.size())};
  DLTensor x_view{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, x_shape.data(), nullptr, 0};
  DLTensor shape_view{shape.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, shape_shape, nullptr, 0};
  DLTensor y_view{
      run.y.data(), {kDLCPU, 0}, static_cast<int32_t>(y_shape.size()), {kDLFloat, 32, 1}, y_shape.data(), nullptr, 0};
  const DLTensor* inputs[] = {&x_view, &shape_view};
  const DLTensor* outputs[] = {&y_view};
  char error[512] = "";
  run.ok = graph.run(inputs, 2, outputs, 1, error, sizeof(error));
  run.error = error;
  return run;
}

std::unique_ptr<CompiledGraph> compile(const std::vector<uint8_t>& bytes) {
  std::string error;
  CompileFailure failure{};
  std::unique_ptr<CompiledGraph> graph = CompiledGraph::compile(bytes.data(), bytes.size(), &error, &failure);
  EXPECT_NE(graph, nullptr) << error;
  return graph;
}

TEST(RunTimeParameters, ANodeNeedingThemCompilesAndReadsThemOnEveryCall) {
  const std::vector<uint8_t> bytes = reshape_relu_graph();
  std::string error;
  const std::vector<std::string> support = node_support(bytes.data(), bytes.size(), &error);
  EXPECT_THAT(support, ElementsAre("", "")) << error;
  std::unique_ptr<CompiledGraph> graph = compile(bytes);
  ASSERT_NE(graph, nullptr);
  // More sets of values than a node keeps kernels for, then the first again.
  const std::vector<std::vector<int64_t>> shapes = {{3, 2}, {-1, 2}, {3, -1}, {0, 0}, {0, -1}, {3, 2}, {0, 0}};
  static_assert(kMaxPreparedValues < 5);
  for (const std::vector<int64_t>& shape : shapes) {
    const ReshapeRun run = run_reshape(*graph, shape);
    ASSERT_TRUE(run.ok) << run.error;
    EXPECT_THAT(run.y, ElementsAre(0, 2, 0, 4, 0, 6));
  }
}

TEST(RunTimeParameters, ValuesThatContradictTheOutputShapeFailOnlyThatCall) {
  const std::vector<uint8_t> bytes = reshape_relu_graph();  // read while the graph runs
  std::unique_ptr<CompiledGraph> graph = compile(bytes);
  ASSERT_NE(graph, nullptr);
  const ReshapeRun wrong = run_reshape(*graph, {2, 3});
  EXPECT_FALSE(wrong.ok);
  EXPECT_THAT(wrong.error, HasSubstr("Reshape 'reshape': output 0 has shape [3, 2], but the inputs give [2, 3] (with "
                                     "input 1 = [2, 3], given at run time)"));
  const ReshapeRun bad = run_reshape(*graph, {-1, -1});
  EXPECT_THAT(bad.error, HasSubstr("more than one -1"));
  const ReshapeRun right = run_reshape(*graph, {3, 2});
  ASSERT_TRUE(right.ok) << right.error;
  EXPECT_THAT(right.y, ElementsAre(0, 2, 0, 4, 0, 6));
}

TEST(RunTimeParameters, AKernelThatRefusesForAnotherReasonIsNotDeferred) {
  // Resize's mode is checked before its sizes: an unknown mode is refused when compiling,
  // not at the first run.
  NodeRun run = run_node(
      {"Resize",
       {Attribute::String("mode", "lanczos")},
       {TestTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4}), std::nullopt, std::nullopt, TestTensor::i64({4}, {1, 1, 4, 4})},
       {f32_out({1, 1, 4, 4})}});
  EXPECT_THAT(run.error, HasSubstr("mode 'lanczos' is not supported"));
}

TEST(RunTimeParameters, WorkWithDimensionsThatVary) {
  // y[3n] = Reshape(x[n, 3], shape): n in 1..4, the target (1 int64) given at run time.
  GraphBuilder builder;
  const common::DimExpr n = common::DimExpr::symbol(builder.add_symbol("n", 1, 4));
  const common::DimExpr three = common::DimExpr::constant(3);
  const ValueId x = builder.add_dynamic_value("x", DType::kFloat32, {n, three});
  const ValueId shape = builder.add_value("shape", DType::kInt64, {1});
  const ValueId y = builder.add_dynamic_value("y", DType::kFloat32, {n * three});
  builder.add_node("Reshape", "reshape", {x, shape}, {y});
  builder.add_input(x);
  builder.add_input(shape);
  builder.add_output(y);
  const std::vector<uint8_t> bytes = builder.finish();
  std::string error;
  CompileFailure failure{};
  std::unique_ptr<DynamicGraph> graph = DynamicGraph::create(bytes.data(), bytes.size(), &error, &failure);
  ASSERT_NE(graph, nullptr) << error;
  const ReshapeRun small = run_reshape(*graph, {-1}, {2, 3}, {6});
  ASSERT_TRUE(small.ok) << small.error;
  EXPECT_THAT(small.y, ElementsAre(-1, 2, -3, 4, -5, 6));
  const ReshapeRun large = run_reshape(*graph, {12}, {4, 3}, {12});
  ASSERT_TRUE(large.ok) << large.error;
  EXPECT_FLOAT_EQ(large.y.at(11), 12.0f);
  EXPECT_THAT(run_reshape(*graph, {12}, {2, 3}, {6}).error, HasSubstr("shape gives 12 elements, the input has 6"));
}

}  // namespace
}  // namespace plugrt::portable::testing
