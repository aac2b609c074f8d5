// Partition cutting: grouping by backend without cycles, boundaries, ordering.
#include "plugrt/placement/partitioner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/graph_builder.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {
namespace {

using ::testing::ElementsAre;

/// n0 -> n1 -> n2 and n0 -> n2 directly: n2 must not join n0's partition, or the two
/// partitions would depend on each other.
TEST(CutPartitions, NeverCreatesACycle) {
  GraphBuilder builder;
  ValueId x = builder.add_value("x", DType::kFloat32, {2});
  ValueId a = builder.add_value("a", DType::kFloat32, {2});
  ValueId b = builder.add_value("b", DType::kFloat32, {2});
  ValueId y = builder.add_value("y", DType::kFloat32, {2});
  builder.add_node("Relu", "n0", {x}, {a});
  builder.add_node("Relu", "n1", {a}, {b});
  builder.add_node("Add", "n2", {a, b}, {y});
  builder.add_input(x);
  builder.add_output(y);
  const std::vector<uint8_t> bytes = builder.finish();
  const ir::Graph& graph = *ir::GetGraph(bytes.data());
  std::vector<Partition> partitions = cut_partitions(graph, {0, 1, 0});
  ASSERT_EQ(partitions.size(), 3u);
  EXPECT_THAT(partitions[0].nodes, ElementsAre(0u));
  EXPECT_THAT(partitions[1].nodes, ElementsAre(1u));
  EXPECT_THAT(partitions[2].nodes, ElementsAre(2u));
  EXPECT_THAT(partitions[2].inputs, ElementsAre(a, b));

  // With one backend everything is one partition.
  std::vector<Partition> single = cut_partitions(graph, {0, 0, 0});
  ASSERT_EQ(single.size(), 1u);
  EXPECT_THAT(single[0].nodes, ElementsAre(0u, 1u, 2u));
  EXPECT_THAT(single[0].inputs, ElementsAre(x));
  EXPECT_THAT(single[0].outputs, ElementsAre(y));
}

TEST(GroupNodes, CountsWhatCutPartitionsCuts) {
  // Two parallel branches of backend 1 between nodes of backend 0 join one group each
  // side: 0 -> {1, 2} -> 3.
  NodeGraph graph;
  graph.num_nodes = 4;
  graph.edges = {{0, 1, 8}, {0, 2, 8}, {1, 3, 8}, {2, 3, 8}};
  size_t groups = 0;
  EXPECT_THAT(group_nodes(graph.producers(), {0, 1, 1, 0}, &groups), ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_EQ(groups, 4u);  // 1 and 2 share no edge, 3 cannot rejoin 0 through them
  EXPECT_THAT(group_nodes(graph.producers(), {0, 0, 1, 0}, &groups), ElementsAre(0u, 0u, 1u, 2u));
  EXPECT_EQ(groups, 3u);
}

}  // namespace
}  // namespace plugrt::placement
