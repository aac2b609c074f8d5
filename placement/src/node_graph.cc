// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/node_graph.h"

#include <algorithm>
#include <map>
#include <utility>

#include "plugrt/dtype.h"
#include "plugrt/schema/graph_ir_generated.h"
#include "value_size.h"

namespace plugrt::placement {

std::vector<std::vector<uint32_t>> NodeGraph::producers() const {
  std::vector<std::vector<uint32_t>> result(num_nodes);
  for (const Edge& edge : edges) result[edge.to].push_back(edge.from);
  for (std::vector<uint32_t>& list : result) std::sort(list.begin(), list.end());
  return result;
}

NodeGraph node_graph(const ir::Graph& graph) {
  NodeGraph result;
  result.num_nodes = graph.nodes() != nullptr ? graph.nodes()->size() : 0;
  const size_t num_values = graph.values() != nullptr ? graph.values()->size() : 0;
  std::vector<int64_t> producer(num_values, -1);
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> bytes;  // (to, from) -> bytes
  for (uint32_t n = 0; n < result.num_nodes; ++n) {
    const ir::Node& node = *graph.nodes()->Get(n);
    if (node.inputs() != nullptr) {
      std::vector<int32_t> seen;
      for (int32_t v : *node.inputs()) {
        if (v < 0 || static_cast<size_t>(v) >= num_values || producer[static_cast<size_t>(v)] < 0) continue;
        if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;  // read twice, copied once
        seen.push_back(v);
        const auto from = static_cast<uint32_t>(producer[static_cast<size_t>(v)]);
        bytes[{n, from}] += value_bytes(*graph.values()->Get(static_cast<flatbuffers::uoffset_t>(v)));
      }
    }
    if (node.outputs() != nullptr) {
      for (int32_t v : *node.outputs()) {
        if (v >= 0 && static_cast<size_t>(v) < num_values) producer[static_cast<size_t>(v)] = n;
      }
    }
  }
  for (const auto& [key, size] : bytes) result.edges.push_back({key.second, key.first, size});
  return result;
}

}  // namespace plugrt::placement
