// SPDX-License-Identifier: Apache-2.0
// Partition cutting: grouping by backend without cycles, boundaries, ordering.
#include "plugrt/placement/partitioner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

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
  // Two parallel branches of backend 1 between nodes of backend 0: 0 -> {1, 2} -> 3.
  NodeGraph graph;
  graph.num_nodes = 4;
  graph.edges = {{0, 1, 8}, {0, 2, 8}, {1, 3, 8}, {2, 3, 8}};
  size_t groups = 0;
  // 1 and 2 share no edge but no path joins them either, so they merge; 3 cannot rejoin
  // 0 through them.
  EXPECT_THAT(group_nodes(graph.producers(), {0, 1, 1, 0}, &groups), ElementsAre(0u, 1u, 1u, 2u));
  EXPECT_EQ(groups, 3u);
  EXPECT_THAT(group_nodes(graph.producers(), {0, 0, 1, 0}, &groups), ElementsAre(0u, 0u, 1u, 2u));
  EXPECT_EQ(groups, 3u);
}

TEST(GroupNodes, MergesIndependentInputChainsOfOneBackend) {
  // Two chains from two inputs, 0 -> 1 and 2 -> 3, meeting at 4: all on backend 0, one
  // group. With 1 on backend 1, 4 joins 2 -> 3, and 0 stays apart: the path 0 -> 1 -> 4
  // leaves it and comes back through backend 1's group.
  NodeGraph graph;
  graph.num_nodes = 5;
  graph.edges = {{0, 1, 8}, {2, 3, 8}, {1, 4, 8}, {3, 4, 8}};
  size_t groups = 0;
  EXPECT_THAT(group_nodes(graph.producers(), {0, 0, 0, 0, 0}, &groups), ElementsAre(0u, 0u, 0u, 0u, 0u));
  EXPECT_EQ(groups, 1u);
  EXPECT_THAT(group_nodes(graph.producers(), {0, 1, 0, 0, 0}, &groups), ElementsAre(0u, 1u, 2u, 2u, 2u));
  EXPECT_EQ(groups, 3u);
}

/// Fails unless every group of `group_of` is one backend and the groups form no cycle.
void expect_acyclic_single_backend(const NodeGraph& graph, const std::vector<size_t>& node_backend,
                                   const std::vector<size_t>& group_of, size_t groups, int trial) {
  std::vector<std::set<size_t>> successors(groups);
  std::vector<std::set<size_t>> backends(groups);
  for (uint32_t n = 0; n < graph.num_nodes; ++n) backends[group_of[n]].insert(node_backend[n]);
  for (const NodeGraph::Edge& edge : graph.edges) {
    if (group_of[edge.from] != group_of[edge.to]) successors[group_of[edge.from]].insert(group_of[edge.to]);
  }
  for (size_t g = 0; g < groups; ++g) ASSERT_EQ(backends[g].size(), 1u) << "trial " << trial;
  // Acyclic: Kahn's algorithm takes every group.
  std::vector<size_t> pending(groups, 0), ready;
  for (const auto& next : successors) {
    for (size_t g : next) ++pending[g];
  }
  for (size_t g = 0; g < groups; ++g) {
    if (pending[g] == 0) ready.push_back(g);
  }
  size_t taken = 0;
  while (!ready.empty()) {
    const size_t g = ready.back();
    ready.pop_back();
    ++taken;
    for (size_t next : successors[g]) {
      if (--pending[next] == 0) ready.push_back(next);
    }
  }
  ASSERT_EQ(taken, groups) << "trial " << trial << ": the groups form a cycle";
}

TEST(GroupNodes, RandomGraphsGiveAcyclicSingleBackendGroups) {
  std::mt19937 random(20261123);
  for (int trial = 0; trial < 200; ++trial) {
    NodeGraph graph;
    graph.num_nodes = 2 + random() % 40;
    for (uint32_t to = 1; to < graph.num_nodes; ++to) {
      for (uint32_t from = 0; from < to; ++from) {
        if (random() % 6 == 0) graph.edges.push_back({from, to, 8});
      }
    }
    std::vector<size_t> node_backend(graph.num_nodes);
    for (size_t& b : node_backend) b = random() % 3;
    size_t groups = 0;
    const std::vector<size_t> group_of = group_nodes(graph.producers(), node_backend, &groups);
    expect_acyclic_single_backend(graph, node_backend, group_of, groups, trial);
  }
}

TEST(GroupNodes, GraphsOfThousandsOfGroupsGiveAcyclicSingleBackendGroups) {
  // Beyond 1,024 groups only neighbours and groups sharing one are tried for a merge.
  std::mt19937 random(20261128);
  for (int trial = 0; trial < 4; ++trial) {
    NodeGraph graph;
    graph.num_nodes = 6000;
    for (uint32_t to = 1; to < graph.num_nodes; ++to) {
      const uint32_t reads = 1 + random() % 3;
      for (uint32_t r = 0; r < reads; ++r) {
        graph.edges.push_back({to - 1 - static_cast<uint32_t>(random() % std::min(to, 8u)), to, 8});
      }
    }
    std::vector<size_t> node_backend(graph.num_nodes);
    for (size_t& b : node_backend) b = random() % 3;
    size_t groups = 0;
    const std::vector<size_t> group_of = group_nodes(graph.producers(), node_backend, &groups);
    EXPECT_GT(groups, 1024u);
    expect_acyclic_single_backend(graph, node_backend, group_of, groups, trial);
  }
}

TEST(GroupNodes, LeavesNoTwoGroupsThatCouldStillMerge) {
  // Maximal: every two groups of one backend are joined by a path through a third.
  std::mt19937 random(20261127);
  for (int trial = 0; trial < 200; ++trial) {
    NodeGraph graph;
    graph.num_nodes = 2 + random() % 40;
    for (uint32_t to = 1; to < graph.num_nodes; ++to) {
      for (uint32_t from = 0; from < to; ++from) {
        if (random() % 5 == 0) graph.edges.push_back({from, to, 8});
      }
    }
    std::vector<size_t> node_backend(graph.num_nodes);
    for (size_t& b : node_backend) b = random() % 2;
    size_t groups = 0;
    const std::vector<size_t> group_of = group_nodes(graph.producers(), node_backend, &groups);
    // reach[a][b]: a path of group edges leads from a to b (Floyd-Warshall on a few dozen).
    std::vector<std::vector<bool>> reach(groups, std::vector<bool>(groups, false));
    std::vector<size_t> backend(groups);
    for (uint32_t n = 0; n < graph.num_nodes; ++n) backend[group_of[n]] = node_backend[n];
    for (const NodeGraph::Edge& edge : graph.edges) {
      if (group_of[edge.from] != group_of[edge.to]) reach[group_of[edge.from]][group_of[edge.to]] = true;
    }
    for (size_t k = 0; k < groups; ++k) {
      for (size_t a = 0; a < groups; ++a) {
        for (size_t b = 0; b < groups; ++b) reach[a][b] = reach[a][b] || (reach[a][k] && reach[k][b]);
      }
    }
    for (size_t a = 0; a < groups; ++a) {
      for (size_t b = a + 1; b < groups; ++b) {
        if (backend[a] != backend[b]) continue;
        bool through_third = false;
        for (size_t c = 0; c < groups; ++c) {
          through_third |= c != a && c != b && ((reach[a][c] && reach[c][b]) || (reach[b][c] && reach[c][a]));
        }
        EXPECT_TRUE(through_third) << "trial " << trial << ": groups " << a << " and " << b << " could merge";
      }
    }
  }
}

TEST(GroupNodes, DoesNotMergeGroupsAPathJoinsThroughAnother) {
  // 0 (backend 0) -> 1 (backend 1) -> 2 (backend 0): joining 0 and 2 would make a cycle.
  NodeGraph graph;
  graph.num_nodes = 3;
  graph.edges = {{0, 1, 8}, {1, 2, 8}};
  size_t groups = 0;
  EXPECT_THAT(group_nodes(graph.producers(), {0, 1, 0}, &groups), ElementsAre(0u, 1u, 2u));
  EXPECT_EQ(groups, 3u);
}

}  // namespace
}  // namespace plugrt::placement
