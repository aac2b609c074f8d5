// SPDX-License-Identifier: Apache-2.0
// What each node costs on each backend that takes it, for the placer: measured figures
// from the profile, else the estimate, and the policy for backends nobody measured
// (placement/README.md, "Backends nobody measured"). Cost matrices are [node][backend] and
// `taken` (the backends' partition answers) is [backend][node], the fallback (portable)
// last; -1 in `measured` where there is no figure.
#ifndef PLUGRT_PLACEMENT_NODE_COSTS_H_
#define PLUGRT_PLACEMENT_NODE_COSTS_H_

#include <string>
#include <vector>

#include "plugrt/placement/cost_profile.h"
#include "plugrt/placement/placer.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {

/// An unmeasured backend that competes for a node with measured ones is charged this much
/// over the dearer of its estimate and their dearest figure: a measured backend wins the node.
inline constexpr double kUnmeasuredPenalty = 1.5;

/// Fills problem.node_cost with each node's cost on each backend that takes it (the
/// profile's figure for `builds[b]`, else the estimate), *measured with the figures and
/// *estimated with the estimates. Returns how many nodes have a figure on a backend other
/// than the fallback.
size_t read_costs(const ir::Graph& graph, const std::vector<std::vector<bool>>& taken, size_t portable,
                  const std::vector<std::string>& builds, const CostProfile* profile, PlacementProblem& problem,
                  std::vector<std::vector<double>>* measured, std::vector<std::vector<double>>* estimated);

/// Per backend: how much slower than the fastest taker it measured, on the nodes where two
/// or more backends besides the fallback have figures (the geometric mean of the ratios;
/// 1 where it has no such node).
std::vector<double> slowness(const std::vector<std::vector<double>>& measured, size_t portable);

/// Where a backend other than the fallback has no figure for a node it takes: next to a
/// measured backend it is charged kUnmeasuredPenalty over the dearer of its estimate and
/// their dearest figure; where no backend has a figure, its estimate times its slowness().
void charge_unmeasured(const std::vector<std::vector<bool>>& taken, size_t portable,
                       const std::vector<std::vector<double>>& measured,
                       const std::vector<std::vector<double>>& estimated, PlacementProblem& problem);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_NODE_COSTS_H_
