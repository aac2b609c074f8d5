// SPDX-License-Identifier: Apache-2.0
// The policy for backends nobody measured, on cost matrices: [node][backend] (taken:
// [backend][node]), portable last.
#include "node_costs.h"

#include <gtest/gtest.h>

namespace plugrt::placement {
namespace {

constexpr double kNone = -1;  // no figure

TEST(NodeCosts, SlownessIsTheGeometricMeanOfMeasuredRatios) {
  // Backends 0 and 1 compete; 2 is portable. Backend 0 is 4x and 16x slower: 8x.
  const std::vector<std::vector<double>> measured = {{40, 10, kNone}, {160, 10, kNone}, {5, kNone, kNone}};
  const std::vector<double> factor = slowness(measured, 2);
  EXPECT_DOUBLE_EQ(factor[0], 8.0);
  EXPECT_DOUBLE_EQ(factor[1], 1.0);
  EXPECT_DOUBLE_EQ(factor[2], 1.0);
}

TEST(NodeCosts, AnUnmeasuredBackendLosesToAMeasuredOneAndTheSlowerIsChargedWhereNobodyMeasured) {
  // Node 0: both measured, backend 0 slower. Node 1: only backend 1 measured. Node 2:
  // nobody measured, equal estimates.
  const std::vector<std::vector<bool>> taken = {{true, true, true}, {true, true, true}, {true, true, true}};
  const std::vector<std::vector<double>> measured = {{30, 10, kNone}, {kNone, 50, kNone}, {kNone, kNone, kNone}};
  const std::vector<std::vector<double>> estimated = {{20, 20, 160}, {20, 20, 160}, {20, 20, 160}};
  PlacementProblem problem;
  problem.node_cost = {{30, 10, 160}, {20, 50, 160}, {20, 20, 160}};
  charge_unmeasured(taken, 2, measured, estimated, problem);
  EXPECT_DOUBLE_EQ(problem.node_cost[0][0], 30);  // figures stay
  EXPECT_DOUBLE_EQ(problem.node_cost[1][0], kUnmeasuredPenalty * 50);
  EXPECT_GT(problem.node_cost[1][0], problem.node_cost[1][1]);
  EXPECT_DOUBLE_EQ(problem.node_cost[2][0], 20 * 3.0);  // 3x slower where measured
  EXPECT_DOUBLE_EQ(problem.node_cost[2][1], 20);
  EXPECT_DOUBLE_EQ(problem.node_cost[2][2], 160);  // the fallback is left alone
}

TEST(NodeCosts, NodesABackendDoesNotTakeStayNotTaken) {
  const std::vector<std::vector<bool>> taken = {{false}, {true}, {true}};  // [backend][node]
  const std::vector<std::vector<double>> measured = {{kNone, kNone, kNone}};
  const std::vector<std::vector<double>> estimated = {{kNotTaken, 20, 160}};
  PlacementProblem problem;
  problem.node_cost = {{kNotTaken, 20, 160}};
  charge_unmeasured(taken, 2, measured, estimated, problem);
  EXPECT_EQ(problem.node_cost[0][0], kNotTaken);
}

}  // namespace
}  // namespace plugrt::placement
