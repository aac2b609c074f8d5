// Cutting a graph into partitions: given which backend runs each node, group nodes of
// one backend into maximal connected partitions such that the partitions form no cycle,
// order them so each runs after those it reads, and extract each as a standalone graph.
#ifndef PLUGRT_TOOLS_COMPILER_PARTITIONER_H_
#define PLUGRT_TOOLS_COMPILER_PARTITIONER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace plugrt::ir {
struct Graph;
}

namespace plugrt::compiler {

struct Partition {
  size_t backend = 0;                ///< index into the caller's backend list
  std::vector<uint32_t> nodes;       ///< graph node indices, in topological order
  std::vector<int32_t> inputs;       ///< graph values it reads from outside (no constants), by index
  std::vector<int32_t> outputs;      ///< graph values it writes that others or the graph read, by index
};

/// Groups nodes by `node_backend` (one backend index per node) and returns the
/// partitions in an order where each partition follows every partition it reads from.
/// A node joins a partition of its backend that produces one of its inputs when no path
/// from that partition reaches the node through another partition; otherwise it starts
/// a new one. Deterministic.
std::vector<Partition> cut_partitions(const ir::Graph& graph, const std::vector<size_t>& node_backend);

/// The partition as a standalone graph IR buffer: its nodes, the constants they read
/// (inline), `inputs` as graph inputs and `outputs` as graph outputs.
std::vector<uint8_t> extract_subgraph(const ir::Graph& graph, const Partition& partition);

}  // namespace plugrt::compiler

#endif  // PLUGRT_TOOLS_COMPILER_PARTITIONER_H_
