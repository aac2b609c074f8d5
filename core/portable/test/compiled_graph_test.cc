// SPDX-License-Identifier: Apache-2.0
// Whole graphs through the portable backend's compiler: a small CNN checked against its
// nodes run one by one, the checks on graph structure, and the checks on arguments.
#include "compiled_graph.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"
#include "plugrt/graph_builder.h"

namespace plugrt::portable::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Pointwise;

TEST(CompiledGraph, ASmallCnnMatchesItsNodesRunOneByOne) {
  // x[1,2,8,8] -> Conv(4 filters 3x3, pad 1) -> Relu -> MaxPool(2x2) -> Flatten -> Gemm(64 -> 5) -> Softmax
  const std::vector<float> x = random_floats(128, 1), w = random_floats(72, 2), b = random_floats(4, 3);
  const std::vector<float> fc = random_floats(320, 4), fc_bias = random_floats(5, 5);
  GraphBuilder graph;
  ValueId vx = graph.add_value("x", DType::kFloat32, {1, 2, 8, 8});
  ValueId vw = graph.add_constant_f32("w", {4, 2, 3, 3}, w);
  ValueId vb = graph.add_constant_f32("b", {4}, b);
  ValueId conv = graph.add_value("conv", DType::kFloat32, {1, 4, 8, 8});
  ValueId relu = graph.add_value("relu", DType::kFloat32, {1, 4, 8, 8});
  ValueId pool = graph.add_value("pool", DType::kFloat32, {1, 4, 4, 4});
  ValueId flat = graph.add_value("flat", DType::kFloat32, {1, 64});
  ValueId vfc = graph.add_constant_f32("fc", {5, 64}, fc);
  ValueId vfb = graph.add_constant_f32("fc_bias", {5}, fc_bias);
  ValueId logits = graph.add_value("logits", DType::kFloat32, {1, 5});
  ValueId y = graph.add_value("y", DType::kFloat32, {1, 5});
  const std::vector<Attribute> conv_attrs = {Attribute::Ints("pads", {1, 1, 1, 1})};
  const std::vector<Attribute> pool_attrs = {Attribute::Ints("kernel_shape", {2, 2}),
                                             Attribute::Ints("strides", {2, 2})};
  const std::vector<Attribute> gemm_attrs = {Attribute::Int("transB", 1)};
  graph.add_node("Conv", "conv", {vx, vw, vb}, {conv}, conv_attrs);
  graph.add_node("Relu", "relu", {conv}, {relu});
  graph.add_node("MaxPool", "pool", {relu}, {pool}, pool_attrs);
  graph.add_node("Flatten", "flatten", {pool}, {flat});
  graph.add_node("Gemm", "fc", {flat, vfc, vfb}, {logits}, gemm_attrs);
  graph.add_node("Softmax", "softmax", {logits}, {y});
  graph.add_input(vx);
  graph.add_output(y);
  NodeRun whole = run_graph(graph.finish(), {TestTensor::f32({1, 2, 8, 8}, x)}, {{DType::kFloat32, {1, 5}}});
  ASSERT_TRUE(whole.ok()) << whole.error;

  auto step = [](NodeSpec spec) {
    NodeRun run = run_node(spec);
    EXPECT_TRUE(run.ok()) << spec.op_type << ": " << run.error;
    return run.outputs.at(0);
  };
  TestTensor t = step({"Conv",
                       conv_attrs,
                       {TestTensor::f32({1, 2, 8, 8}, x), TestTensor::f32({4, 2, 3, 3}, w).as_constant(),
                        TestTensor::f32({4}, b).as_constant()},
                       {{DType::kFloat32, {1, 4, 8, 8}}}});
  t = step({"Relu", {}, {t}, {{DType::kFloat32, {1, 4, 8, 8}}}});
  t = step({"MaxPool", pool_attrs, {t}, {{DType::kFloat32, {1, 4, 4, 4}}}});
  t = step({"Flatten", {}, {t}, {{DType::kFloat32, {1, 64}}}});
  t = step({"Gemm",
            gemm_attrs,
            {t, TestTensor::f32({5, 64}, fc).as_constant(), TestTensor::f32({5}, fc_bias).as_constant()},
            {{DType::kFloat32, {1, 5}}}});
  t = step({"Softmax", {}, {t}, {{DType::kFloat32, {1, 5}}}});
  EXPECT_THAT(whole.outputs[0].floats(), Pointwise(::testing::FloatNear(1e-6f), t.floats()));
  float sum = 0;
  for (float p : whole.outputs[0].floats()) sum += p;
  EXPECT_NEAR(sum, 1.0f, 1e-5f);
}

TEST(CompiledGraph, PassesAnInputThroughAndWritesAnOutputTwice) {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, {2});
  ValueId y = graph.add_value("y", DType::kFloat32, {2});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  graph.add_output(x);
  graph.add_output(y);
  NodeRun run = run_graph(graph.finish(), {TestTensor::f32({2}, {-1, 2})},
                          {{DType::kFloat32, {2}}, {DType::kFloat32, {2}}, {DType::kFloat32, {2}}});
  ASSERT_TRUE(run.ok()) << run.error;
  EXPECT_THAT(run.outputs[0].floats(), ::testing::ElementsAre(0, 2));
  EXPECT_THAT(run.outputs[1].floats(), ::testing::ElementsAre(-1, 2));
  EXPECT_THAT(run.outputs[2].floats(), ::testing::ElementsAre(0, 2));
}

/// Compiles `graph` and returns the error (empty when it compiled).
std::string compile_error(const std::vector<uint8_t>& graph) {
  std::string error;
  CompileFailure failure{};
  std::unique_ptr<CompiledGraph> compiled = CompiledGraph::compile(graph.data(), graph.size(), &error, &failure);
  return compiled != nullptr ? std::string() : error;
}

TEST(CompiledGraph, RefusesBrokenStructure) {
  {
    GraphBuilder graph;  // reads a value nothing defines
    ValueId x = graph.add_value("x", DType::kFloat32, {2});
    ValueId t = graph.add_value("t", DType::kFloat32, {2});
    ValueId y = graph.add_value("y", DType::kFloat32, {2});
    graph.add_node("Relu", "a", {t}, {y});
    graph.add_node("Relu", "b", {x}, {t});
    graph.add_input(x);
    graph.add_output(y);
    EXPECT_THAT(compile_error(graph.finish()), HasSubstr("value 1 't') is used before any node defines it"));
  }
  {
    GraphBuilder graph;  // defines a value twice
    ValueId x = graph.add_value("x", DType::kFloat32, {2});
    ValueId y = graph.add_value("y", DType::kFloat32, {2});
    graph.add_node("Relu", "a", {x}, {y});
    graph.add_node("Relu", "b", {x}, {y});
    graph.add_input(x);
    graph.add_output(y);
    EXPECT_THAT(compile_error(graph.finish()), HasSubstr("node 1 (Relu): output 0 (value 1 'y') is already defined"));
  }
  {
    GraphBuilder graph;  // an index out of range
    ValueId x = graph.add_value("x", DType::kFloat32, {2});
    graph.add_node("Relu", "a", {x}, {7});
    graph.add_input(x);
    graph.add_output(x);
    EXPECT_THAT(compile_error(graph.finish()), HasSubstr("node 0 (Relu): output 0 refers to value 7 of 1"));
  }
  {
    GraphBuilder graph;  // an op without a kernel
    ValueId x = graph.add_value("x", DType::kFloat32, {2});
    ValueId y = graph.add_value("y", DType::kFloat32, {2});
    graph.add_node("FancyOp", "f", {x}, {y});
    graph.add_input(x);
    graph.add_output(y);
    EXPECT_THAT(compile_error(graph.finish()), HasSubstr("no kernel for op type 'FancyOp'"));
  }
  {
    GraphBuilder graph;  // a constant whose bytes do not match its shape
    ValueId c = graph.add_constant("c", DType::kFloat32, {3}, std::vector<uint8_t>(8));
    graph.add_output(c);
    EXPECT_THAT(compile_error(graph.finish()), HasSubstr("holds 8 bytes of data; its dtype and shape need 12"));
  }
  EXPECT_THAT(compile_error({1, 2, 3, 4, 5, 6, 7, 8, 9}), HasSubstr("not a plugrt graph"));
}

TEST(CompiledGraph, RefusesShapesWhoseStridesOverflowBehindAZeroDimension) {
  GraphBuilder graph;  // holds nothing, but 2^40 * 2^40 * 4 bytes of strides
  ValueId x = graph.add_value("x", DType::kFloat32, {0, int64_t{1} << 40, int64_t{1} << 40});
  ValueId y = graph.add_value("y", DType::kFloat32, {0, int64_t{1} << 40, int64_t{1} << 40});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  EXPECT_THAT(compile_error(graph.finish()), HasSubstr("is larger than 2^40 bytes (zero dimensions aside)"));
}

// Found by the blob fuzzer: an arena larger than the machine's memory ended the process.
TEST(CompiledGraph, AnArenaBeyondMemoryIsRefusedWithItsSize) {
  const auto two_live_values = [](int64_t elements) {
    GraphBuilder graph;  // t and u (elements floats each) are alive at once
    ValueId x = graph.add_value("x", DType::kFloat32, {elements});
    ValueId t = graph.add_value("t", DType::kFloat32, {elements});
    ValueId u = graph.add_value("u", DType::kFloat32, {elements});
    ValueId y = graph.add_value("y", DType::kFloat32, {elements});
    graph.add_node("Relu", "a", {x}, {t});
    graph.add_node("Relu", "b", {x}, {u});
    graph.add_node("Add", "c", {t, u}, {y});
    graph.add_input(x);
    graph.add_output(y);
    return graph.finish();
  };
  // 2 x 2^40 bytes: past the arena's limit, on every machine.
  EXPECT_THAT(compile_error(two_live_values(int64_t{1} << 38)),
              HasSubstr("need 2199023255552 bytes of arena, more than 2^40"));
  // 2 x 2^38 bytes: within the limit, and more than this machine can map unless it
  // overcommits without limit; then the arena is address space, never touched here.
  const std::string error = compile_error(two_live_values(int64_t{1} << 36));
  if (!error.empty()) {
    EXPECT_THAT(error, HasSubstr("549755813888 bytes, more than this process can allocate"));
  }
}

// The fuzzers' corpora of graph IR (test/fuzz/corpus/graph_ir, portable_blob): the seeds
// are real subgraphs and compile; each crash-* input, a crash found by a fuzzer, now
// compiles or is refused with a reason.
TEST(CompiledGraph, TheFuzzerSeedsCompileAndItsFindingsDoNotCrash) {
  size_t seeds = 0, findings = 0;
  for (const char* corpus : {"graph_ir", "portable_blob"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::string(PLUGRT_FUZZ_CORPUS_DIR "/") + corpus)) {
      const std::string name = entry.path().filename().string();
      SCOPED_TRACE(name);
      std::ifstream in(entry.path(), std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::string error;
      CompileFailure failure{};
      std::unique_ptr<CompiledGraph> compiled = CompiledGraph::compile(bytes.data(), bytes.size(), &error, &failure);
      if (name.rfind("crash-", 0) == 0) {
        EXPECT_TRUE(compiled != nullptr || !error.empty());
        ++findings;
      } else {
        EXPECT_NE(compiled, nullptr) << error;
        ++seeds;
      }
    }
  }
  EXPECT_GE(seeds, 2u);
  EXPECT_GE(findings, 2u);
}

TEST(CompiledGraph, ChecksEveryArgumentAtRun) {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, {2, 2});
  ValueId y = graph.add_value("y", DType::kFloat32, {2, 2});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  const std::vector<uint8_t> bytes = graph.finish();
  NodeRun wrong_shape = run_graph(bytes, {TestTensor::f32({4}, {1, 2, 3, 4})}, {{DType::kFloat32, {2, 2}}});
  EXPECT_THAT(wrong_shape.error, HasSubstr("input 0 ('x') has the wrong rank: expected float32 [2, 2]"));
  NodeRun wrong_dtype = run_graph(bytes, {TestTensor::i64({2, 2}, {1, 2, 3, 4})}, {{DType::kFloat32, {2, 2}}});
  EXPECT_THAT(wrong_dtype.error, HasSubstr("input 0 ('x') has the wrong dtype"));
  NodeRun missing = run_graph(bytes, {}, {{DType::kFloat32, {2, 2}}});
  EXPECT_THAT(missing.error, HasSubstr("expected 1 inputs and 1 outputs, got 0 and 1"));
}

}  // namespace
}  // namespace plugrt::portable::testing
