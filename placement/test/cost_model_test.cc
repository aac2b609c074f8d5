// SPDX-License-Identifier: Apache-2.0
// The cost estimate: work from op signatures, the fallback factor, stable signatures.
#include "plugrt/placement/cost_model.h"

#include <gtest/gtest.h>

#include "plugrt/graph_builder.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {
namespace {

std::vector<uint8_t> conv_and_relu(int64_t channels) {
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, {1, 8, 10, 10});
  ValueId w = g.add_constant_f32("w", {channels, 8, 3, 3}, std::vector<float>(static_cast<size_t>(channels) * 72));
  ValueId a = g.add_value("a", DType::kFloat32, {1, channels, 8, 8});
  ValueId y = g.add_value("y", DType::kFloat32, {1, channels, 8, 8});
  g.add_node("Conv", "conv", {x, w}, {a}, {Attribute::Ints("kernel_shape", {3, 3})});
  g.add_node("Relu", "relu", {a}, {y});
  g.add_input(x);
  g.add_output(y);
  return g.finish();
}

TEST(CostModel, CountsMultiplyAddsOfAConvolution) {
  const std::vector<uint8_t> bytes = conv_and_relu(16);
  const ir::Graph& graph = *ir::GetGraph(bytes.data());
  const NodeWork conv = node_work(graph, 0), relu = node_work(graph, 1);
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 16 * 8 * 8 * 8 * 3 * 3);
  EXPECT_DOUBLE_EQ(conv.bytes, 4.0 * (800 + 16 * 72 + 16 * 64));
  EXPECT_DOUBLE_EQ(relu.flops, 16.0 * 64);
}

TEST(CostModel, TheFallbackIsSlowerAndWorkCosts) {
  const std::vector<uint8_t> bytes = conv_and_relu(16);
  const ir::Graph& graph = *ir::GetGraph(bytes.data());
  const EstimateParameters parameters;
  const NodeWork conv = node_work(graph, 0), relu = node_work(graph, 1);
  EXPECT_GT(estimated_node_us(conv, true, parameters), 4 * estimated_node_us(conv, false, parameters));
  EXPECT_GT(estimated_node_us(conv, false, parameters), estimated_node_us(relu, false, parameters));
}

TEST(CostModel, SignaturesDifferByShapeAndAttributesOnly) {
  const std::vector<uint8_t> a = conv_and_relu(16), b = conv_and_relu(16), c = conv_and_relu(32);
  const ir::Graph &ga = *ir::GetGraph(a.data()), &gb = *ir::GetGraph(b.data()), &gc = *ir::GetGraph(c.data());
  EXPECT_EQ(op_signature(ga, 0), op_signature(gb, 0));
  EXPECT_NE(op_signature(ga, 0), op_signature(gc, 0));
  EXPECT_NE(op_signature(ga, 0), op_signature(ga, 1));
  EXPECT_EQ(op_signature(ga, 0).rfind("Conv/17(1[1,8,10,10],1[16,8,3,3]c)->(1[1,16,8,8])#", 0), 0u)
      << op_signature(ga, 0);
}

}  // namespace
}  // namespace plugrt::placement
