// SPDX-License-Identifier: Apache-2.0
// sdk::GraphView and the ONNX rules every backend shares (onnx_semantics.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "plugrt/sdk/graph_view.h"
#include "plugrt/sdk/onnx_semantics.h"
#include "plugrt/sdk/testing/matchers.h"
#include "plugrt/sdk/testing/mock_host.h"

namespace plugrt::sdk {
namespace {

using ::plugrt::sdk::testing::ErrorIs;
using ::plugrt::sdk::testing::IsOk;
using ::testing::ElementsAre;

/// x [1, 1, 5, 5] -> Conv (attributes as given, weight w [1, 1, 3, 3]) -> y [1, 1, 3, 3]
/// -> Relu -> z, as a graph IR buffer. `output_index` lets a test name a missing value.
std::vector<uint8_t> conv_graph(const std::string& auto_pad, const std::vector<int64_t>& strides,
                                int32_t output_index = 2) {
  flatbuffers::FlatBufferBuilder builder;
  const std::vector<int64_t> xs = {1, 1, 5, 5}, ws = {1, 1, 3, 3}, ys = {1, 1, 3, 3};
  std::vector<uint8_t> weights(9 * sizeof(float), 0);
  std::vector<flatbuffers::Offset<ir::Value>> values = {
      ir::CreateValueDirect(builder, "x", ir::DType::Float32, &xs),
      ir::CreateValueDirect(builder, "w", ir::DType::Float32, &ws, &weights),
      ir::CreateValueDirect(builder, "y", ir::DType::Float32, &ys),
      ir::CreateValueDirect(builder, "z", ir::DType::Float32, &ys)};
  std::vector<flatbuffers::Offset<ir::Attribute>> attributes = {
      ir::CreateAttributeDirect(builder, "auto_pad", ir::AttributeKind::String, 0, 0, auto_pad.c_str()),
      ir::CreateAttributeDirect(builder, "strides", ir::AttributeKind::Ints, 0, 0, nullptr, nullptr, &strides)};
  const std::vector<int32_t> conv_in = {0, 1}, conv_out = {output_index}, relu_in = {2}, relu_out = {3};
  std::vector<flatbuffers::Offset<ir::Node>> nodes = {
      ir::CreateNodeDirect(builder, "Conv", "conv", &conv_in, &conv_out, &attributes),
      ir::CreateNodeDirect(builder, "Relu", "relu", &relu_in, &relu_out)};
  const std::vector<int32_t> inputs = {0}, outputs = {3};
  ir::FinishGraphBuffer(builder, ir::CreateGraphDirect(builder, 1, 17, &values, &nodes, &inputs, &outputs));
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

TEST(GraphView, IndexesReadersProducersAndConstants) {
  const std::vector<uint8_t> bytes = conv_graph("NOTSET", {1, 1});
  Expected<GraphView> graph = GraphView::open(bytes.data(), bytes.size());
  ASSERT_THAT(graph, IsOk());
  EXPECT_EQ(graph->num_nodes(), 2u);
  EXPECT_TRUE(graph->is_constant(1));
  EXPECT_EQ(graph->floats(1).size(), 9u);
  EXPECT_EQ(graph->producer(2), 0);
  EXPECT_EQ(graph->num_readers(2), 1u);
  EXPECT_EQ(graph->num_readers(3), 1u);  // a graph output counts as a reader
  EXPECT_TRUE(graph->is_graph_output(3));
  EXPECT_EQ(GraphView::int_attribute(graph->node(0), "group", 1), 1);  // absent: ONNX's default
  EXPECT_THAT(GraphView::ints_attribute(graph->node(0), "strides"), ElementsAre(1, 1));
}

TEST(GraphView, RefusesAValueIndexThatDoesNotExist) {
  const std::vector<uint8_t> bytes = conv_graph("NOTSET", {1, 1}, /*output_index=*/9);
  Expected<GraphView> graph = GraphView::open(bytes.data(), bytes.size());
  ASSERT_THAT(graph, ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
  EXPECT_EQ(graph.status().message(), "node 0 names value 9, which does not exist");
}

TEST(GraphView, AnAbsentValueHasNoShape) {
  // A node output of -1 is absent (an optional output not produced): it has no shape, and
  // asking for one must not read outside the values (the oneDNN layer-norm matcher did).
  const std::vector<uint8_t> bytes = conv_graph("NOTSET", {1, 1}, /*output_index=*/-1);
  Expected<GraphView> graph = GraphView::open(bytes.data(), bytes.size());
  ASSERT_THAT(graph, IsOk());
  EXPECT_FALSE(graph->valid(GraphView::output(graph->node(0), 0)));
  EXPECT_TRUE(graph->shape(GraphView::output(graph->node(0), 0)).empty());
  EXPECT_TRUE(graph->shape(4).empty());
}

TEST(OnnxSemantics, ResolvesAutoPadLikeOnnx) {
  const std::vector<uint8_t> bytes = conv_graph("SAME_UPPER", {2, 2});
  Expected<GraphView> graph = GraphView::open(bytes.data(), bytes.size());
  ASSERT_THAT(graph, IsOk());
  Window window;
  // 5 wide, stride 2, kernel 3: 3 outputs need 2 pads; SAME_UPPER puts the odd one last.
  ASSERT_EQ(resolve_window(graph->node(0), {1, 1, 5, 5}, {3, 3}, &window), "");
  EXPECT_THAT(window.begin, ElementsAre(1, 1));
  EXPECT_THAT(window.end, ElementsAre(1, 1));
  EXPECT_THAT(window_output({1, 1, 5, 5}, window), ElementsAre(3, 3));
  // 6 wide: 3 outputs need 1 pad, after (UPPER).
  ASSERT_EQ(resolve_window(graph->node(0), {1, 1, 6, 6}, {3, 3}, &window), "");
  EXPECT_THAT(window.begin, ElementsAre(0, 0));
  EXPECT_THAT(window.end, ElementsAre(1, 1));

  const std::vector<uint8_t> lower = conv_graph("SAME_LOWER", {2, 2});
  ASSERT_EQ(resolve_window(GraphView::open(lower.data(), lower.size())->node(0), {1, 1, 6, 6}, {3, 3}, &window), "");
  EXPECT_THAT(window.begin, ElementsAre(1, 1));
  EXPECT_THAT(window.end, ElementsAre(0, 0));

  const std::vector<uint8_t> unknown = conv_graph("SIDEWAYS", {1, 1});
  EXPECT_EQ(resolve_window(GraphView::open(unknown.data(), unknown.size())->node(0), {1, 1, 5, 5}, {3, 3}, &window),
            "auto_pad 'SIDEWAYS' is unknown");
}

TEST(OnnxSemantics, WindowOutputRoundsDownOrUpAndDropsAWindowInThePadding) {
  const Window w{{2}, {2}, {1}, {0}, {0}};  // kernel 2, stride 2, no pads
  EXPECT_THAT(window_output({1, 1, 5}, w), ElementsAre(2));
  EXPECT_THAT(window_output({1, 1, 5}, w, /*ceil=*/true), ElementsAre(3));
  const Window padded{{2}, {2}, {1}, {0}, {1}};  // one pad at the end
  // Ceil would give 3, but the third window would start in the end padding.
  EXPECT_THAT(window_output({1, 1, 4}, padded, /*ceil=*/true), ElementsAre(2));
  const Window too_big{{7}, {1}, {1}, {0}, {0}};
  EXPECT_THAT(window_output({1, 1, 5}, too_big), ElementsAre(-1));
}

TEST(OnnxSemantics, BroadcastingAndAxes) {
  EXPECT_THAT(*broadcast_shapes({2, 1, 4}, {3, 1}), ElementsAre(2, 3, 4));
  EXPECT_FALSE(broadcast_shapes({2, 3}, {4}).has_value());
  EXPECT_TRUE(broadcasts_to({3, 1}, {2, 3, 4}));
  EXPECT_FALSE(broadcasts_to({2, 3, 4}, {3, 4}));
  EXPECT_EQ(normalize_axis(-1, 4), 3u);
  EXPECT_EQ(normalize_axis(3, 4), 3u);
  EXPECT_FALSE(normalize_axis(4, 4).has_value());
  EXPECT_FALSE(normalize_axis(-5, 4).has_value());
}

/// y [2, 4] = Gemm(a [2, 3], b) with b a constant of `b_shape` holding 1, 2, 3...
std::vector<uint8_t> gemm_graph(const std::vector<int64_t>& b_shape, int64_t trans_a, int64_t trans_b) {
  flatbuffers::FlatBufferBuilder builder;
  const std::vector<int64_t> as = {2, 3}, ys = {2, 4};
  std::vector<float> b_values(static_cast<size_t>(b_shape[0] * b_shape[1]));
  for (size_t i = 0; i < b_values.size(); ++i) b_values[i] = static_cast<float>(i + 1);
  std::vector<uint8_t> b_bytes(b_values.size() * sizeof(float));
  std::memcpy(b_bytes.data(), b_values.data(), b_bytes.size());
  std::vector<flatbuffers::Offset<ir::Value>> values = {
      ir::CreateValueDirect(builder, "a", ir::DType::Float32, &as),
      ir::CreateValueDirect(builder, "b", ir::DType::Float32, &b_shape, &b_bytes),
      ir::CreateValueDirect(builder, "y", ir::DType::Float32, &ys)};
  std::vector<flatbuffers::Offset<ir::Attribute>> attributes = {
      ir::CreateAttributeDirect(builder, "transA", ir::AttributeKind::Int, 0, trans_a),
      ir::CreateAttributeDirect(builder, "transB", ir::AttributeKind::Int, 0, trans_b),
      ir::CreateAttributeDirect(builder, "alpha", ir::AttributeKind::Float, 2.0f)};
  const std::vector<int32_t> gemm_in = {0, 1}, gemm_out = {2}, inputs = {0}, outputs = {2};
  std::vector<flatbuffers::Offset<ir::Node>> nodes = {
      ir::CreateNodeDirect(builder, "Gemm", "gemm", &gemm_in, &gemm_out, &attributes)};
  ir::FinishGraphBuffer(builder, ir::CreateGraphDirect(builder, 1, 17, &values, &nodes, &inputs, &outputs));
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

TEST(OnnxSemantics, AGemmWithConstantWeightsIsADenseLayer) {
  // What resolve_dense_gemm says of a Gemm with these B shape and transposes.
  auto resolve = [](const std::vector<int64_t>& b_shape, int64_t trans_a, int64_t trans_b, DenseGemm* gemm) {
    const std::vector<uint8_t> bytes = gemm_graph(b_shape, trans_a, trans_b);
    Expected<GraphView> graph = GraphView::open(bytes.data(), bytes.size());
    return graph.is_ok() ? resolve_dense_gemm(*graph, graph->node(0), gemm) : graph.status().message();
  };
  DenseGemm gemm;
  // B [3, 4] (K, N): the weights come out as [N, K], scaled by alpha.
  ASSERT_EQ(resolve({3, 4}, 0, 0, &gemm), "");
  EXPECT_EQ(gemm.m, 2);
  EXPECT_EQ(gemm.n, 4);
  EXPECT_EQ(gemm.k, 3);
  EXPECT_THAT(gemm.weights, ElementsAre(2, 10, 18, 4, 12, 20, 6, 14, 22, 8, 16, 24));
  // B [4, 3] with transB: already [N, K].
  ASSERT_EQ(resolve({4, 3}, 0, 1, &gemm), "");
  EXPECT_THAT(gemm.weights, ElementsAre(2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24));
  EXPECT_EQ(resolve({3, 4}, 1, 0, &gemm), "transA is not supported");
  EXPECT_EQ(resolve({5, 4}, 0, 0, &gemm), "A and B do not agree on K");
}

TEST(TakeNodes, MarksWhatTheBackendTakesAndLogsWhyNot) {
  const std::vector<uint8_t> bytes = conv_graph("NOTSET", {1, 1});
  Expected<GraphView> graph = GraphView::open(bytes.data(), bytes.size());
  ASSERT_THAT(graph, IsOk());
  ::testing::NiceMock<testing::MockHostServices> host;
  EXPECT_CALL(host, log(PLUGRT_LOG_DEBUG, "mine leaves Conv 'conv': no convolutions here"));
  uint8_t taken[2] = {0, 0};
  PartitionRequest request{Host(host.plugrt_table()), bytes.data(), bytes.size(), Options(nullptr, 0, ""), taken, 2};
  auto relu_only = [&](size_t n) -> std::string {
    return graph->node(n).op_type()->str() == "Relu" ? "" : "no convolutions here";
  };
  EXPECT_THAT(take_nodes(request, *graph, "mine", relu_only), IsOk());
  EXPECT_EQ(taken[0], 0);
  EXPECT_EQ(taken[1], 1);
  request.num_nodes = 3;
  EXPECT_THAT(take_nodes(request, *graph, "mine", relu_only), ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
}

}  // namespace
}  // namespace plugrt::sdk
