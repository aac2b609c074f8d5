// SPDX-License-Identifier: Apache-2.0
// If, Loop and Scan on graph IR built here: the subgraph conventions of core/FORMAT.md,
// results, and the refusals of malformed nodes (the ONNX importer's own tests cover
// models from ONNX).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"
#include "plugrt/graph_builder.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// A branch (captured x [2]) -> op(x).
std::vector<uint8_t> unary_branch(const std::string& op) {
  GraphBuilder branch;
  const ValueId x = branch.add_value("x", DType::kFloat32, {2});
  const ValueId y = branch.add_value("y", DType::kFloat32, {2});
  branch.add_input(x);
  branch.add_node(op, op, {x}, {y});
  branch.add_output(y);
  return branch.finish();
}

/// y = If(c) then Relu(x) else Neg(x), with x captured.
std::vector<uint8_t> if_graph(std::vector<uint8_t> then_branch, std::vector<uint8_t> else_branch,
                              int64_t captured = 1) {
  GraphBuilder graph;
  const ValueId c = graph.add_value("c", DType::kBool, {});
  const ValueId x = graph.add_value("x", DType::kFloat32, {2});
  const ValueId y = graph.add_value("y", DType::kFloat32, {2});
  graph.add_input(c);
  graph.add_input(x);
  graph.add_node("If", "choose", {c, x}, {y},
                 {Attribute::Graph("then_branch", std::move(then_branch)),
                  Attribute::Graph("else_branch", std::move(else_branch)), Attribute::Int("captured", captured)});
  graph.add_output(y);
  return graph.finish();
}

TEST(ControlFlowKernel, IfRunsTheBranchItsConditionPicks) {
  const std::vector<uint8_t> graph = if_graph(unary_branch("Relu"), unary_branch("Neg"));
  const TestTensor x = TestTensor::f32({2}, {-1, 2});
  NodeRun taken = run_graph(graph, {TestTensor::boolean({}, {true}), x}, {f32_out({2})});
  ASSERT_TRUE(taken.ok()) << taken.error;
  EXPECT_THAT(taken.outputs[0].floats(), ElementsAre(0, 2));
  NodeRun other = run_graph(graph, {TestTensor::boolean({}, {false}), x}, {f32_out({2})});
  ASSERT_TRUE(other.ok()) << other.error;
  EXPECT_THAT(other.outputs[0].floats(), ElementsAre(1, -2));
  // A bool byte other than 0 or 1 (a caller's buffer) is true, and reading it is defined.
  const TestTensor two = typed_tensor<uint8_t>(DType::kBool, {}, {2});
  NodeRun odd = run_graph(graph, {two, x}, {f32_out({2})});
  ASSERT_TRUE(odd.ok()) << odd.error;
  EXPECT_THAT(odd.outputs[0].floats(), ElementsAre(0, 2));
}

TEST(ControlFlowKernel, RefusesMalformedIfs) {
  // A branch whose output shape differs from the node's.
  GraphBuilder wide;
  const ValueId x = wide.add_value("x", DType::kFloat32, {2});
  const ValueId y = wide.add_value("y", DType::kFloat32, {4});
  wide.add_input(x);
  wide.add_node("Concat", "twice", {x, x}, {y}, {Attribute::Int("axis", 0)});
  wide.add_output(y);
  const TestTensor c = TestTensor::boolean({}, {true}), data = TestTensor::f32({2}, {1, 2});
  NodeRun shape = run_graph(if_graph(unary_branch("Relu"), wide.finish()), {c, data}, {f32_out({2})});
  EXPECT_THAT(shape.error, HasSubstr("else_branch's output 0 is [4] float32, but the node's output is [2] float32"));
  // A missing branch, a captured count beyond the inputs, a branch that is no graph.
  NodeRun missing = run_graph(if_graph(unary_branch("Relu"), {}), {c, data}, {f32_out({2})});
  EXPECT_THAT(missing.error, HasSubstr("subgraph 'else_branch'"));
  NodeRun garbage =
      run_graph(if_graph(unary_branch("Relu"), std::vector<uint8_t>(64, 0x5a)), {c, data}, {f32_out({2})});
  EXPECT_THAT(garbage.error, HasSubstr("subgraph 'else_branch': the blob is not a plugrt graph"));
}

/// A graph nesting If nodes `depth` deep, each passing x down to the next.
std::vector<uint8_t> nested_ifs(int depth) {
  std::vector<uint8_t> inner = unary_branch("Relu");
  for (int level = 0; level < depth; ++level) {
    GraphBuilder branch;
    const ValueId x = branch.add_value("x", DType::kFloat32, {2});
    const ValueId c = branch.add_constant("c", DType::kBool, {}, {1});
    const ValueId y = branch.add_value("y", DType::kFloat32, {2});
    branch.add_input(x);
    branch.add_node("If", "level", {c, x}, {y},
                    {Attribute::Graph("then_branch", inner), Attribute::Graph("else_branch", inner),
                     Attribute::Int("captured", 1)});
    branch.add_output(y);
    inner = branch.finish();
  }
  return if_graph(inner, inner);
}

TEST(ControlFlowKernel, SubgraphsNestAtMostSixteenDeep) {
  const TestTensor c = TestTensor::boolean({}, {true}), x = TestTensor::f32({2}, {-1, 2});
  NodeRun deep = run_graph(nested_ifs(14), {c, x}, {f32_out({2})});
  ASSERT_TRUE(deep.ok()) << deep.error;
  EXPECT_THAT(deep.outputs[0].floats(), ElementsAre(0, 2));
  NodeRun too_deep = run_graph(nested_ifs(16), {c, x}, {f32_out({2})});
  EXPECT_THAT(too_deep.error, HasSubstr("subgraphs nest deeper than 16"));
}

/// v, s = Loop(n, cond, v0) with body v_out = v_in + w (w captured), cond_out = v_out[0] < limit,
/// s = v_out; `scan_length` is the compiled length of s.
std::vector<uint8_t> loop_graph(float limit, int64_t scan_length) {
  GraphBuilder body;
  const ValueId i = body.add_value("i", DType::kInt64, {});
  const ValueId cond_in = body.add_value("cond_in", DType::kBool, {});
  const ValueId v_in = body.add_value("v_in", DType::kFloat32, {1});
  const ValueId w = body.add_value("w", DType::kFloat32, {1});
  const ValueId v_out = body.add_value("v_out", DType::kFloat32, {1});
  const ValueId below = body.add_value("below", DType::kBool, {1});
  const ValueId cond_out = body.add_value("cond_out", DType::kBool, {});
  const ValueId s_out = body.add_value("s_out", DType::kFloat32, {1});
  const ValueId bound = body.add_constant_f32("limit", {1}, {limit});
  const ValueId scalar = body.add_constant_i64("scalar", {0}, {});
  for (ValueId input : {i, cond_in, v_in, w}) body.add_input(input);
  body.add_node("Add", "step", {v_in, w}, {v_out});
  body.add_node("Less", "test", {v_out, bound}, {below});
  body.add_node("Reshape", "to_scalar", {below, scalar}, {cond_out});
  body.add_node("Identity", "collect", {v_out}, {s_out});
  for (ValueId output : {cond_out, v_out, s_out}) body.add_output(output);

  GraphBuilder graph;
  const ValueId n = graph.add_value("n", DType::kInt64, {});
  const ValueId v0 = graph.add_value("v0", DType::kFloat32, {1});
  const ValueId step = graph.add_value("w", DType::kFloat32, {1});
  const ValueId v = graph.add_value("v", DType::kFloat32, {1});
  const ValueId s = graph.add_value("s", DType::kFloat32, {scan_length, 1});
  const ValueId go = graph.add_constant("go", DType::kBool, {}, {1});
  for (ValueId input : {n, v0, step}) graph.add_input(input);
  graph.add_node("Loop", "count", {n, go, v0, step}, {v, s},
                 {Attribute::Graph("body", body.finish()), Attribute::Int("captured", 1)});
  graph.add_output(v);
  graph.add_output(s);
  return graph.finish();
}

TEST(ControlFlowKernel, LoopStopsAtItsTripCountOrItsCondition) {
  const TestTensor v0 = TestTensor::f32({1}, {0}), w = TestTensor::f32({1}, {1});
  // Three trips, the condition stays true: v = 3, s = 1, 2, 3.
  NodeRun trips = run_graph(loop_graph(100, 3), {TestTensor::i64({}, {3}), v0, w}, {f32_out({1}), f32_out({3, 1})});
  ASSERT_TRUE(trips.ok()) << trips.error;
  EXPECT_THAT(trips.outputs[0].floats(), ElementsAre(3));
  EXPECT_THAT(trips.outputs[1].floats(), ElementsAre(1, 2, 3));
  // A trip count of 10 but the condition turns false once v reaches 2: two iterations.
  NodeRun condition = run_graph(loop_graph(2, 2), {TestTensor::i64({}, {10}), v0, w}, {f32_out({1}), f32_out({2, 1})});
  ASSERT_TRUE(condition.ok()) << condition.error;
  EXPECT_THAT(condition.outputs[1].floats(), ElementsAre(1, 2));
  // More iterations than the scan output holds, and fewer: the call fails, naming the node.
  NodeRun longer = run_graph(loop_graph(100, 2), {TestTensor::i64({}, {3}), v0, w}, {f32_out({1}), f32_out({2, 1})});
  EXPECT_THAT(longer.error, HasSubstr("Loop 'count': runs more than 2 iterations, the length of its scan outputs"));
  NodeRun shorter = run_graph(loop_graph(100, 3), {TestTensor::i64({}, {1}), v0, w}, {f32_out({1}), f32_out({3, 1})});
  EXPECT_THAT(shorter.error, HasSubstr("Loop 'count': ran 1 iterations, but its scan outputs have length 3"));
  NodeRun none = run_graph(loop_graph(100, 1), {TestTensor::i64({}, {0}), v0, w}, {f32_out({1}), f32_out({1, 1})});
  EXPECT_THAT(none.error, HasSubstr("ran 0 iterations"));
}

TEST(ControlFlowKernel, ScanReadsAndWritesInEitherDirection) {
  GraphBuilder body;
  const ValueId sum_in = body.add_value("sum_in", DType::kFloat32, {2});
  const ValueId row = body.add_value("row", DType::kFloat32, {2});
  const ValueId sum_out = body.add_value("sum_out", DType::kFloat32, {2});
  const ValueId scan_out = body.add_value("scan_out", DType::kFloat32, {2});
  body.add_input(sum_in);
  body.add_input(row);
  body.add_node("Add", "add", {sum_in, row}, {sum_out});
  body.add_node("Identity", "copy", {sum_out}, {scan_out});
  body.add_output(sum_out);
  body.add_output(scan_out);
  GraphBuilder graph;
  const ValueId initial = graph.add_value("initial", DType::kFloat32, {2});
  const ValueId x = graph.add_value("x", DType::kFloat32, {3, 2});
  const ValueId y = graph.add_value("y", DType::kFloat32, {2});
  const ValueId z = graph.add_value("z", DType::kFloat32, {3, 2});
  graph.add_input(initial);
  graph.add_input(x);
  graph.add_node("Scan", "running_sum", {initial, x}, {y, z},
                 {Attribute::Graph("body", body.finish()), Attribute::Int("num_scan_inputs", 1),
                  Attribute::Ints("scan_input_directions", {1}), Attribute::Ints("scan_output_directions", {0})});
  graph.add_output(y);
  graph.add_output(z);
  // The rows read last to first, the running sums written first to last.
  NodeRun run = run_graph(graph.finish(), {TestTensor::f32({2}, {0, 0}), TestTensor::f32({3, 2}, {1, 2, 3, 4, 5, 6})},
                          {f32_out({2}), f32_out({3, 2})});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ElementsAre(9, 12));
  EXPECT_THAT(run.outputs[1].floats(), ElementsAre(5, 6, 8, 10, 9, 12));
}

TEST(ControlFlowKernel, RefusesACapturedCountBeyondTheInputs) {
  NodeRun run = run_graph(if_graph(unary_branch("Relu"), unary_branch("Neg"), 5),
                          {TestTensor::boolean({}, {true}), TestTensor::f32({2}, {1, 2})}, {f32_out({2})});
  EXPECT_THAT(run.error, HasSubstr("does not fit"));
}

}  // namespace
}  // namespace plugrt::portable::testing
