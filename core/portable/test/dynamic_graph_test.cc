// SPDX-License-Identifier: Apache-2.0
// Graphs whose dimensions vary (ir_version 2 symbols) through the portable backend: run
// at each call's input shapes, with shape arithmetic folded per shape, the shapes checked
// against the symbols' ranges, and the graph's expressions checked when it is loaded.
#include "dynamic_graph.h"

#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"
#include "plugrt/graph_builder.h"
#include "plugrt/sdk/graph.h"

namespace plugrt::portable::testing {
namespace {

using sdk::DimExpr;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr int64_t kMaxSeq = 8;

/// x[seq, 4] -> MatMul(w[4, 3]) -> y[seq, 3] -> Reshape to [3 * seq], the shape computed
/// as an exported model computes it: Shape -> Gather -> Unsqueeze -> Mul.
std::vector<uint8_t> flattening_graph(std::vector<float>* weights) {
  *weights = random_floats(12, 7);
  GraphBuilder graph(13);
  const DimExpr seq = DimExpr::symbol(graph.add_symbol("seq", 1, kMaxSeq));
  const ValueId x = graph.add_dynamic_value("x", DType::kFloat32, {seq, DimExpr::constant(4)});
  const ValueId w = graph.add_constant_f32("w", {4, 3}, *weights);
  const ValueId y = graph.add_dynamic_value("y", DType::kFloat32, {seq, DimExpr::constant(3)});
  const ValueId shape = graph.add_value("shape", DType::kInt64, {2});
  const ValueId zero = graph.add_constant_i64("zero", {}, {0});
  const ValueId rows = graph.add_value("rows", DType::kInt64, {});
  const ValueId axes = graph.add_constant_i64("axes", {1}, {0});
  const ValueId rows1 = graph.add_value("rows1", DType::kInt64, {1});
  const ValueId three = graph.add_constant_i64("three", {1}, {3});
  const ValueId length = graph.add_value("length", DType::kInt64, {1});
  const ValueId z = graph.add_dynamic_value("z", DType::kFloat32, {seq * DimExpr::constant(3)});
  graph.add_node("MatMul", "matmul", {x, w}, {y});
  graph.add_node("Shape", "shape", {y}, {shape});
  graph.add_node("Gather", "rows", {shape, zero}, {rows});
  graph.add_node("Unsqueeze", "rows1", {rows, axes}, {rows1});
  graph.add_node("Mul", "length", {rows1, three}, {length});
  graph.add_node("Reshape", "flatten", {y, length}, {z});
  graph.add_input(x);
  graph.add_output(z);
  return graph.finish();
}

DLTensor view(std::vector<float>& data, std::vector<int64_t>& shape) {
  DLTensor tensor{};
  tensor.data = data.data();
  tensor.device = DLDevice{kDLCPU, 0};
  tensor.ndim = static_cast<int32_t>(shape.size());
  tensor.dtype = DLDataType{kDLFloat, 32, 1};
  tensor.shape = shape.data();
  return tensor;
}

/// Runs the graph on x[seq, 4]; the output, or the error in `error`.
std::vector<float> run(DynamicGraph& graph, int64_t seq, std::string* error, std::vector<int64_t> x_shape = {}) {
  std::vector<float> x = random_floats(static_cast<size_t>(seq * 4), static_cast<uint32_t>(seq));
  if (x_shape.empty()) x_shape = {seq, 4};
  std::vector<int64_t> z_shape = {3 * seq};
  std::vector<float> z(static_cast<size_t>(3 * seq), -1.0f);
  DLTensor x_view = view(x, x_shape), z_view = view(z, z_shape);
  const DLTensor* inputs[] = {&x_view};
  const DLTensor* outputs[] = {&z_view};
  char message[512] = {};
  if (!graph.run(inputs, 1, outputs, 1, message, sizeof(message))) {
    *error = message;
    return {};
  }
  return z;
}

std::vector<float> expected(int64_t seq, const std::vector<float>& w) {
  const std::vector<float> x = random_floats(static_cast<size_t>(seq * 4), static_cast<uint32_t>(seq));
  std::vector<float> z(static_cast<size_t>(3 * seq), 0.0f);
  for (int64_t i = 0; i < seq; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) z[i * 3 + j] += x[i * 4 + k] * w[k * 3 + j];
    }
  }
  return z;
}

std::unique_ptr<DynamicGraph> create(const std::vector<uint8_t>& bytes, std::string* error) {
  CompileFailure failure = CompileFailure::kInvalid;
  return DynamicGraph::create(bytes.data(), bytes.size(), error, &failure);
}

TEST(DynamicGraph, RunsAtEveryLengthWithinTheBoundsFoldingTheShapeArithmetic) {
  std::vector<float> w;
  const std::vector<uint8_t> bytes = flattening_graph(&w);
  ASSERT_TRUE(sdk::has_symbols(bytes.data(), bytes.size()));
  std::string error;
  std::unique_ptr<DynamicGraph> graph = create(bytes, &error);
  ASSERT_NE(graph, nullptr) << error;
  for (int64_t seq : {int64_t{1}, int64_t{3}, kMaxSeq, int64_t{3}}) {
    SCOPED_TRACE(seq);
    const std::vector<float> z = run(*graph, seq, &error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_THAT(z, ::testing::Pointwise(::testing::FloatNear(1e-5f), expected(seq, w)));
  }
  EXPECT_EQ(graph->num_specializations(), 3u);  // 8 (compiled at load), 1, 3
}

TEST(DynamicGraph, KeepsAFewSpecializationsAndStaysRightAfterEvicting) {
  std::vector<float> w;
  const std::vector<uint8_t> bytes = flattening_graph(&w);
  std::string error;
  std::unique_ptr<DynamicGraph> graph = create(bytes, &error);
  ASSERT_NE(graph, nullptr) << error;
  for (int round = 0; round < 2; ++round) {
    for (int64_t seq = 1; seq <= kMaxSeq; ++seq) {
      const std::vector<float> z = run(*graph, seq, &error);
      ASSERT_TRUE(error.empty()) << error;
      EXPECT_THAT(z, ::testing::Pointwise(::testing::FloatNear(1e-5f), expected(seq, w)));
    }
  }
  EXPECT_LE(graph->num_specializations(), DynamicGraph::kMaxSpecializations);
}

TEST(DynamicGraph, RefusesShapesOutsideTheBoundsNamingInputDimensionAndBound) {
  std::vector<float> w;
  const std::vector<uint8_t> bytes = flattening_graph(&w);
  std::string error;
  std::unique_ptr<DynamicGraph> graph = create(bytes, &error);
  ASSERT_NE(graph, nullptr) << error;
  run(*graph, kMaxSeq + 1, &error);
  EXPECT_EQ(error, "input 0 ('x') dimension 0 is 9, above 8, the largest 'seq' may be");
  error.clear();
  run(*graph, 0, &error);
  EXPECT_EQ(error, "input 0 ('x') dimension 0 is 0, below 1, the smallest 'seq' may be");
  error.clear();
  run(*graph, 2, &error, {2, 5});
  EXPECT_EQ(error, "input 0 ('x') dimension 1 is 5; it takes 4");
  error.clear();
  run(*graph, 2, &error, {8});
  EXPECT_EQ(error, "input 0 ('x') has rank 1; it takes rank 2");
  // Still usable after the refusals.
  error.clear();
  EXPECT_THAT(run(*graph, 2, &error), ::testing::Pointwise(::testing::FloatNear(1e-5f), expected(2, w)));
}

TEST(DynamicGraph, ChecksTheExpressionsAndSymbolsWhenLoaded) {
  {
    // y's bound (4) is below what its expression reaches (seq + 1 = 9).
    GraphBuilder graph(13);
    const DimExpr seq = DimExpr::symbol(graph.add_symbol("seq", 1, kMaxSeq));
    const ValueId x = graph.add_dynamic_value("x", DType::kFloat32, {seq});
    const ValueId one = graph.add_constant_f32("one", {1}, {1.0f});
    const ValueId y = graph.add_dynamic_value("y", DType::kFloat32, {seq + DimExpr::constant(1)});
    graph.add_node("Concat", "grow", {x, one}, {y}, {Attribute::Int("axis", 0)});
    graph.add_input(x);
    graph.add_output(y);
    std::vector<uint8_t> bytes = graph.finish();
    // Rewrite y's stored bound from 9 to 4: find the shape vector [9] after x's [8].
    bool patched = false;
    for (size_t at = 0; at + 16 <= bytes.size() && !patched; at += 8) {
      int64_t length = 0, dim = 0;
      std::memcpy(&length, bytes.data() + at, 8);
      std::memcpy(&dim, bytes.data() + at + 8, 8);
      (void)length;
      if (dim == 9) {
        const int64_t smaller = 4;
        std::memcpy(bytes.data() + at + 8, &smaller, 8);
        patched = true;
      }
    }
    ASSERT_TRUE(patched);
    std::string error;
    EXPECT_EQ(create(bytes, &error), nullptr);
    EXPECT_THAT(error, HasSubstr("value 2 'y' dimension 0 may leave [0, 4] (its bound)"));
  }
}

TEST(DynamicGraph, RunsASymbolNoInputDimensionGivesAtTheValuesTheHostPasses) {
  // x[n + 1] -> Relu -> y[n + 1]: no input dimension is 'n' alone (ABI 1.6).
  GraphBuilder builder(13);
  const DimExpr n = DimExpr::symbol(builder.add_symbol("n", 1, 4));
  const ValueId x = builder.add_dynamic_value("x", DType::kFloat32, {n + DimExpr::constant(1)});
  const ValueId y = builder.add_dynamic_value("y", DType::kFloat32, {n + DimExpr::constant(1)});
  builder.add_node("Relu", "relu", {x}, {y});
  builder.add_input(x);
  builder.add_output(y);
  const std::vector<uint8_t> bytes = builder.finish();
  std::string error;
  std::unique_ptr<DynamicGraph> graph = create(bytes, &error);
  ASSERT_NE(graph, nullptr) << error;
  std::vector<float> in = {-1, 2, -3}, out(3, 9.0f);
  std::vector<int64_t> shape = {3};
  DLTensor in_view = view(in, shape), out_view = view(out, shape);
  const DLTensor* inputs[] = {&in_view};
  const DLTensor* outputs[] = {&out_view};
  char message[512] = {};
  const int64_t two[] = {2};
  ASSERT_TRUE(graph->run(inputs, 1, outputs, 1, two, 1, message, sizeof(message))) << message;
  EXPECT_THAT(out, ElementsAreArray({0.0f, 2.0f, 0.0f}));
  const int64_t three[] = {3};
  EXPECT_FALSE(graph->run(inputs, 1, outputs, 1, three, 1, message, sizeof(message)));
  EXPECT_THAT(message, HasSubstr("input 0 ('x') dimension 0 is 3; it takes 4 = n + 1"));
  EXPECT_FALSE(graph->run(inputs, 1, outputs, 1, message, sizeof(message)));
  EXPECT_THAT(message,
              HasSubstr("symbol 'n' is the size of no input dimension, and the call brought no symbol values"));
}

}  // namespace
}  // namespace plugrt::portable::testing
