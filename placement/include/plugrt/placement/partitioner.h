// SPDX-License-Identifier: Apache-2.0
// Cutting a graph into partitions: given which backend runs each node, group nodes of
// one backend into maximal connected partitions such that the partitions form no cycle,
// order them so each runs after those it reads, and extract each as a standalone graph.
#ifndef PLUGRT_PLACEMENT_PARTITIONER_H_
#define PLUGRT_PLACEMENT_PARTITIONER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plugrt/placement/node_graph.h"

namespace plugrt::ir {
struct Graph;
}

namespace plugrt::placement {

struct Partition {
  size_t backend = 0;            ///< index into the caller's backend list
  std::vector<uint32_t> nodes;   ///< graph node indices, in topological order
  std::vector<int32_t> inputs;   ///< graph values it reads from outside (no constants), by index
  std::vector<int32_t> outputs;  ///< graph values it writes that others or the graph read, by index
};

/// The grouping rule of cut_partitions, on the node graph alone (`producers`: the nodes
/// each node reads from, NodeGraph::producers()): a node joins the first group of its
/// backend that produces one of its inputs unless a path leads from that group to the
/// node's other producers' groups (joining would close a cycle between groups); otherwise
/// it starts a new one. Then groups of one backend that no path joins through a third
/// merge (independent input chains, parallel branches). Returns the group of each node
/// (groups numbered in order of their first node); `num_groups` gets their count. The
/// groups form no cycle. The placer counts partitions with it, so its estimate matches
/// what is cut.
std::vector<size_t> group_nodes(const std::vector<std::vector<uint32_t>>& producers,
                                const std::vector<size_t>& node_backend, size_t* num_groups);

/// Groups nodes by `node_backend` (one backend index per node) with group_nodes() and
/// returns the partitions in an order where each partition follows every partition it
/// reads from. Deterministic.
std::vector<Partition> cut_partitions(const ir::Graph& graph, const std::vector<size_t>& node_backend);

/// The partition as a standalone graph IR buffer: its nodes, the constants they read
/// (inline), `inputs` as graph inputs and `outputs` as graph outputs.
std::vector<uint8_t> extract_subgraph(const ir::Graph& graph, const Partition& partition);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_PARTITIONER_H_
