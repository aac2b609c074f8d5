// SPDX-License-Identifier: Apache-2.0
// NodeGraph: the dataflow between the nodes of a graph, which is all the placer and the
// partition grouping need of it. Built from a graph IR buffer, or by hand in tests.
#ifndef PLUGRT_PLACEMENT_NODE_GRAPH_H_
#define PLUGRT_PLACEMENT_NODE_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace plugrt::ir {
struct Graph;
}

namespace plugrt::placement {

struct NodeGraph {
  /// `to` reads what `from` writes (`from` < `to`: nodes are in topological order);
  /// `bytes` is the size of the values that flow, summed when there are several.
  struct Edge {
    uint32_t from = 0;
    uint32_t to = 0;
    uint64_t bytes = 0;
  };
  size_t num_nodes = 0;
  std::vector<Edge> edges;  ///< sorted by (to, from), one per pair

  /// The nodes each node reads from, in increasing order.
  std::vector<std::vector<uint32_t>> producers() const;
};

/// The node graph of a graph IR (which the caller has verified).
NodeGraph node_graph(const ir::Graph& graph);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_NODE_GRAPH_H_
