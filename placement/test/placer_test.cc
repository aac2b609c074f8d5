// SPDX-License-Identifier: Apache-2.0
// The cost-based placer on small node graphs with synthetic costs.
#include "plugrt/placement/placer.h"

#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/placement/partitioner.h"

namespace plugrt::placement {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;

/// A chain 0 -> 1 -> ... -> n-1, each edge carrying `bytes`.
NodeGraph chain(size_t n, uint64_t bytes = 1000) {
  NodeGraph graph;
  graph.num_nodes = n;
  for (uint32_t i = 1; i < n; ++i) graph.edges.push_back({i - 1, i, bytes});
  return graph;
}

PlacementProblem problem_for(NodeGraph graph, std::vector<std::vector<double>> costs, std::vector<bool> fallback) {
  PlacementProblem problem;
  problem.graph = std::move(graph);
  problem.node_cost = std::move(costs);
  problem.fallback = std::move(fallback);
  problem.partition_us = 5;
  problem.crossing_us = 2;
  problem.crossing_us_per_byte = 1e-4;
  return problem;
}

size_t count_partitions(const PlacementProblem& problem, const std::vector<size_t>& node_backend) {
  size_t groups = 0;
  group_nodes(problem.graph.producers(), node_backend, &groups);
  return groups;
}

TEST(Placer, MergesARunRatherThanSplittingIt) {
  // Backends 0 and 1 take every node; each is a little cheaper on every other node.
  std::vector<std::vector<double>> costs;
  for (size_t n = 0; n < 8; ++n) costs.push_back(n % 2 ? std::vector<double>{10, 10.5} : std::vector<double>{10.5, 10});
  costs.push_back({100, kNotTaken});  // and a fallback column below
  for (auto& row : costs) row.push_back(80);
  const PlacementProblem problem = problem_for(chain(9), costs, {false, false, true});
  const Placement placed = place(problem);
  EXPECT_THAT(placed.node_backend, Each(0u));
  EXPECT_EQ(count_partitions(problem, placed.node_backend), 1u);
  EXPECT_DOUBLE_EQ(placed.estimated_us, placement_cost(problem, placed.node_backend));
}

TEST(Placer, CrossesWhenTheGainOutweighsTheCrossingCost) {
  // RegisteredBackend 1 takes only node 2, where it is far faster; it is worth two crossings and a
  // partition. A small gain is not.
  std::vector<std::vector<double>> costs(5, {10, kNotTaken});
  costs[2] = {500, 20};
  Placement placed = place(problem_for(chain(5), costs, {false, false}));
  EXPECT_THAT(placed.node_backend, ElementsAre(0u, 0u, 1u, 0u, 0u));

  costs[2] = {21, 20};
  placed = place(problem_for(chain(5), costs, {false, false}));
  EXPECT_THAT(placed.node_backend, Each(0u));
}

TEST(Placer, KeepsWithinAPartitionBound) {
  // The gain on node 2 pays for a split, but with a bound of one partition the chain
  // stays whole on the backend that takes all of it.
  std::vector<std::vector<double>> costs(5, {10, kNotTaken});
  costs[2] = {500, 20};
  PlacementProblem problem = problem_for(chain(5), costs, {false, false});
  EXPECT_EQ(count_partitions(problem, place(problem).node_backend), 3u);
  problem.max_partitions = 1;
  EXPECT_THAT(place(problem).node_backend, Each(0u));
}

TEST(Placer, GivesARunToAFasterBackendButNotALoneNode) {
  // RegisteredBackend 1 is 3 us faster on nodes 1..6, which pays for two crossings and a partition;
  // on node 9 it is 0.5 us faster, which does not, so the local moves take node 9 back.
  std::vector<std::vector<double>> costs(12, {10, kNotTaken});
  for (size_t n = 1; n <= 6; ++n) costs[n] = {10, 7};
  costs[9] = {10, 9.5};
  const Placement placed = place(problem_for(chain(12), costs, {false, false}));
  EXPECT_THAT(placed.node_backend, ElementsAre(0u, 1u, 1u, 1u, 1u, 1u, 1u, 0u, 0u, 0u, 0u, 0u));
}

TEST(Placer, GivesTheFallbackOnlyWhatNothingElseTakes) {
  // The fallback (backend 1) is "cheaper" everywhere, but gets only node 1, which backend
  // 0 refuses.
  std::vector<std::vector<double>> costs(3, {10, 1});
  costs[1] = {kNotTaken, 1};
  const Placement placed = place(problem_for(chain(3), costs, {false, true}));
  EXPECT_THAT(placed.node_backend, ElementsAre(0u, 1u, 0u));
}

TEST(Placer, TakesTheBackendThatTakesEverythingAsOnePartition) {
  // RegisteredBackend 0 takes every other node of a chain, backend 1 all of them at the same cost:
  // one partition on 1, not a shredded chain.
  std::vector<std::vector<double>> costs;
  for (size_t n = 0; n < 10; ++n) costs.push_back({n % 2 ? kNotTaken : 9.0, 10, 100});
  const PlacementProblem problem = problem_for(chain(10), costs, {false, false, true});
  const Placement placed = place(problem);
  EXPECT_THAT(placed.node_backend, Each(1u));
}

/// A random DAG of `n` nodes: each reads one to three earlier nodes.
NodeGraph random_dag(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  NodeGraph graph;
  graph.num_nodes = n;
  for (uint32_t to = 1; to < n; ++to) {
    std::vector<uint32_t> from;
    const size_t reads = 1 + random() % 3;
    for (size_t r = 0; r < reads; ++r) {
      const uint32_t f = to - 1 - static_cast<uint32_t>(random() % std::min<uint32_t>(to, 6));
      if (std::find(from.begin(), from.end(), f) == from.end()) from.push_back(f);
    }
    std::sort(from.begin(), from.end());
    for (uint32_t f : from) graph.edges.push_back({f, to, 1000 + random() % 100000});
  }
  return graph;
}

PlacementProblem random_problem(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::vector<double>> costs(n, std::vector<double>(3));
  for (auto& row : costs) {
    row[0] = random() % 4 == 0 ? kNotTaken : 5.0 + random() % 50;
    row[1] = random() % 3 == 0 ? kNotTaken : 5.0 + random() % 50;
    row[2] = 400;
  }
  return problem_for(random_dag(n, seed), costs, {false, false, true});
}

TEST(Placer, IsDeterministicAndNeverWorseThanAnySingleBackend) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const PlacementProblem problem = random_problem(300, seed);
    const Placement a = place(problem), b = place(problem);
    EXPECT_EQ(a.node_backend, b.node_backend);
    for (size_t backend = 0; backend < 2; ++backend) {
      std::vector<size_t> single(problem.graph.num_nodes);
      for (size_t n = 0; n < single.size(); ++n) {
        const auto& row = problem.node_cost[n];
        single[n] = row[backend] != kNotTaken ? backend : (row[1 - backend] != kNotTaken ? 1 - backend : 2);
      }
      EXPECT_LE(a.estimated_us, placement_cost(problem, single) + 1e-6) << "seed " << seed;
    }
    // Only what neither accelerated backend takes is on the fallback.
    for (size_t n = 0; n < problem.graph.num_nodes; ++n) {
      const bool taken = problem.node_cost[n][0] != kNotTaken || problem.node_cost[n][1] != kNotTaken;
      EXPECT_EQ(a.node_backend[n] == 2, !taken) << "node " << n;
      EXPECT_NE(problem.node_cost[n][a.node_backend[n]], kNotTaken) << "node " << n;
    }
  }
}

TEST(Placer, NoSingleNodeMoveLowersTheCost) {
  // The search skips a move whose optimistic gain is none; a bound that was not optimistic
  // would leave a cheaper placement one move away. Seed 32 found one: a node moved out of
  // a group let the rest of that group merge with another.
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const PlacementProblem problem = random_problem(40, seed);
    const Placement placed = place(problem);
    for (size_t n = 0; n < problem.graph.num_nodes; ++n) {
      const auto& row = problem.node_cost[n];
      for (size_t b = 0; b < 2; ++b) {  // the fallback only where neither takes the node
        if (b == placed.node_backend[n] || row[b] == kNotTaken) continue;
        std::vector<size_t> moved = placed.node_backend;
        moved[n] = b;
        EXPECT_GE(placement_cost(problem, moved), placed.estimated_us - 1e-6) << "seed " << seed << ", node " << n;
      }
    }
  }
}

TEST(Placer, PlacesAChainCutIntoThousandsOfPartitions) {
  // Backends 0 and 1 take two of every three nodes alike, the fallback the rest: 2,001
  // partitions whichever accelerated backend runs each. Moving a run between 0 and 1
  // changes no count, so it must not cost a regrouping each (that took minutes).
  const size_t n = 3001;
  std::vector<std::vector<double>> costs;
  for (size_t i = 0; i < n; ++i) {
    costs.push_back(i % 3 == 1 ? std::vector<double>{kNotTaken, kNotTaken, 20} : std::vector<double>{10, 10, 80});
  }
  const PlacementProblem problem = problem_for(chain(n), costs, {false, false, true});
  const Placement placed = place(problem);
  EXPECT_EQ(count_partitions(problem, placed.node_backend), 2001u);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(placed.node_backend[i], i % 3 == 1 ? 2u : 0u) << "node " << i;
}

}  // namespace
}  // namespace plugrt::placement
