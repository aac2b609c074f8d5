// SPDX-License-Identifier: Apache-2.0
// The cost-based placer: which backend runs each node, chosen to minimise the estimated
// latency of the whole graph. It knows backends only by index: what each can take and
// what each node costs there come from the caller (partition answers, a cost model).
#ifndef PLUGRT_PLACEMENT_PLACER_H_
#define PLUGRT_PLACEMENT_PLACER_H_

#include <cstddef>
#include <limits>
#include <vector>

#include "plugrt/placement/node_graph.h"

namespace plugrt::placement {

/// A node cost meaning "this backend does not take the node".
inline constexpr double kNotTaken = std::numeric_limits<double>::infinity();

struct PlacementProblem {
  NodeGraph graph;
  /// [node][backend]: estimated or measured microseconds, kNotTaken where the backend's
  /// `partition` refused the node. Every node needs at least one finite cost.
  std::vector<std::vector<double>> node_cost;
  /// Per backend: true for the reference fallback, which gets a node only when no other
  /// backend takes it (whatever the costs say).
  std::vector<bool> fallback;
  /// Microseconds per partition (a delegate call, its setup and synchronisation).
  double partition_us = 0;
  /// An edge whose ends run on different backends: a fixed cost (layout change, hand-off)
  /// plus a cost per byte that crosses (a copy).
  double crossing_us = 0;
  double crossing_us_per_byte = 0;
  /// When not 0: never more partitions than this (unless the starting points all have
  /// more, then the fewest). Measured single-node costs include each backend's boundary
  /// conversions and miss its fusions, so they are trusted to choose between backends
  /// but not to split the graph further than the estimate does.
  size_t max_partitions = 0;
};

struct Placement {
  std::vector<size_t> node_backend;  ///< one backend index per node
  double estimated_us = 0;           ///< placement_cost() of node_backend
};

/// The estimated latency of a placement: the nodes' costs on their backends, plus the
/// crossing cost of each edge between backends, plus partition_us per partition (counted
/// as group_nodes() cuts them).
double placement_cost(const PlacementProblem& problem, const std::vector<size_t>& node_backend);

/// Places every node. Starts from the best of: each backend taking every node it can (the
/// rest on their cheapest taker), and each node on its cheapest taker; then moves single
/// nodes and connected runs of nodes to another backend that takes them while that lowers
/// placement_cost(). Deterministic: ties keep the lower backend index. Requires each node to
/// have a finite cost somewhere (the caller reports nodes nobody takes).
Placement place(const PlacementProblem& problem);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_PLACER_H_
