// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/partitioner.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "editable_graph.h"
#include "group_graph.h"
#include "plugrt/graph_builder.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {

namespace {

using flatbuffers::uoffset_t;

template <typename T>
std::vector<T> to_vector(const flatbuffers::Vector<T>* vector) {
  return vector != nullptr ? std::vector<T>(vector->begin(), vector->end()) : std::vector<T>();
}

size_t num_values(const ir::Graph& graph) { return graph.values() != nullptr ? graph.values()->size() : 0; }
size_t num_nodes(const ir::Graph& graph) { return graph.nodes() != nullptr ? graph.nodes()->size() : 0; }

bool is_constant(const ir::Graph& graph, int32_t value) {
  return graph.values()->Get(static_cast<uoffset_t>(value))->data() != nullptr;
}

/// Orders partitions so that each follows the ones it reads from (Kahn's algorithm,
/// always taking the lowest-numbered ready partition, for determinism).
std::vector<size_t> topological_order(const std::vector<std::set<size_t>>& depends_on) {
  const size_t count = depends_on.size();
  std::vector<size_t> pending(count);
  std::vector<std::vector<size_t>> dependents(count);
  for (size_t p = 0; p < count; ++p) {
    pending[p] = depends_on[p].size();
    for (size_t d : depends_on[p]) dependents[d].push_back(p);
  }
  std::set<size_t> ready;
  for (size_t p = 0; p < count; ++p) {
    if (pending[p] == 0) ready.insert(p);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t p = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(p);
    for (size_t next : dependents[p]) {
      if (--pending[next] == 0) ready.insert(next);
    }
  }
  return order;  // complete: group_nodes never closes a cycle
}

/// Up to this many groups, every pair of one backend is tried for a merge; beyond, only
/// the pairs next to each other or sharing a neighbour, so that a graph cut into tens of
/// thousands of groups merges in near-linear time (placement/README.md).
constexpr size_t kAllPairsUpTo = 1024;
constexpr size_t kSiblingsPerNeighbour = 64;

/// The groups after `a` that merging could join to it when not every pair is tried: its
/// direct neighbours and the groups that share one (parallel branches), ascending.
std::vector<size_t> merge_candidates(const GroupGraph& groups, size_t a) {
  std::vector<size_t> found;
  auto take = [&](const std::vector<size_t>& list, size_t limit) {
    for (size_t i = 0; i < list.size() && i < limit; ++i) {
      if (list[i] > a) found.push_back(list[i]);
    }
  };
  for (const std::vector<size_t>* side : {&groups.successors(a), &groups.predecessors(a)}) {
    take(*side, SIZE_MAX);
    for (size_t neighbour : *side) {
      take(groups.successors(neighbour), kSiblingsPerNeighbour);
      take(groups.predecessors(neighbour), kSiblingsPerNeighbour);
    }
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

}  // namespace

std::vector<size_t> group_nodes(const std::vector<std::vector<uint32_t>>& producers,
                                const std::vector<size_t>& node_backend, size_t* num_groups) {
  const size_t nodes = producers.size();
  GroupGraph groups;
  std::vector<size_t> group_of(nodes, 0), direct;
  for (size_t n = 0; n < nodes; ++n) {
    direct.clear();
    for (uint32_t p : producers[n]) direct.push_back(group_of[p]);
    std::sort(direct.begin(), direct.end());
    direct.erase(std::unique(direct.begin(), direct.end()), direct.end());
    size_t chosen = groups.size();
    for (size_t g : direct) {
      if (groups.backend(g) == node_backend[n] && !groups.closes_cycle(g, direct)) {
        chosen = g;
        break;
      }
    }
    if (chosen == groups.size()) groups.add(node_backend[n]);
    group_of[n] = chosen;
    for (size_t p : direct) groups.add_edge(p, chosen);
  }

  // Groups of one backend that no path joins through a third merge: independent input
  // chains (a decoder's memory and target) and parallel branches. Each saves a call.
  std::vector<size_t> merged_into(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) merged_into[g] = g;
  const bool all_pairs = groups.size() <= kAllPairsUpTo;
  for (size_t a = 0; a < groups.size(); ++a) {
    if (merged_into[a] != a) continue;
    const std::vector<size_t> candidates = all_pairs ? std::vector<size_t>() : merge_candidates(groups, a);
    const size_t tries = all_pairs ? groups.size() - a - 1 : candidates.size();
    std::vector<char> refused = all_pairs ? groups.joined_through_third(a) : std::vector<char>();
    for (size_t i = 0; i < tries; ++i) {
      const size_t b = all_pairs ? a + 1 + i : candidates[i];
      if (merged_into[b] != b || groups.backend(b) != groups.backend(a)) continue;
      if (all_pairs ? refused[b] != 0 : !groups.can_merge(a, b)) continue;
      groups.merge(a, b);
      merged_into[b] = a;
      if (all_pairs) refused = groups.joined_through_third(a);
    }
  }
  // Numbered in order of their first node.
  std::vector<size_t> renumbered(groups.size(), groups.size());
  size_t count = 0;
  for (size_t& g : group_of) {
    const size_t kept = merged_into[g];
    if (renumbered[kept] == groups.size()) renumbered[kept] = count++;
    g = renumbered[kept];
  }
  if (num_groups != nullptr) *num_groups = count;
  return group_of;
}

std::vector<Partition> cut_partitions(const ir::Graph& graph, const std::vector<size_t>& node_backend) {
  const size_t nodes = num_nodes(graph);
  std::vector<int64_t> producer(num_values(graph), -1);  // node writing each value
  for (size_t n = 0; n < nodes; ++n) {
    for (int32_t v : to_vector(graph.nodes()->Get(static_cast<uoffset_t>(n))->outputs())) {
      if (v >= 0) producer[static_cast<size_t>(v)] = static_cast<int64_t>(n);
    }
  }
  size_t num_groups = 0;
  const std::vector<size_t> group_of = group_nodes(node_graph(graph).producers(), node_backend, &num_groups);
  std::vector<Partition> groups(num_groups);
  for (size_t n = 0; n < nodes; ++n) {
    groups[group_of[n]].backend = node_backend[n];
    groups[group_of[n]].nodes.push_back(static_cast<uint32_t>(n));
  }

  // Boundaries: what each group reads from outside and writes for others.
  std::vector<bool> graph_output(num_values(graph), false);
  for (int32_t v : to_vector(graph.outputs())) graph_output[static_cast<size_t>(v)] = true;
  std::vector<std::set<size_t>> group_depends(groups.size());
  std::vector<std::set<int32_t>> inputs(groups.size()), outputs(groups.size());
  for (size_t n = 0; n < nodes; ++n) {
    const size_t g = group_of[n];
    for (int32_t v : to_vector(graph.nodes()->Get(static_cast<uoffset_t>(n))->inputs())) {
      if (v < 0 || is_constant(graph, v)) continue;
      const int64_t p = producer[static_cast<size_t>(v)];
      if (p >= 0 && group_of[static_cast<size_t>(p)] == g) continue;
      inputs[g].insert(v);
      if (p >= 0) {
        outputs[group_of[static_cast<size_t>(p)]].insert(v);
        group_depends[g].insert(group_of[static_cast<size_t>(p)]);
      }
    }
    for (int32_t v : to_vector(graph.nodes()->Get(static_cast<uoffset_t>(n))->outputs())) {
      if (v >= 0 && graph_output[static_cast<size_t>(v)]) outputs[g].insert(v);
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    groups[g].inputs.assign(inputs[g].begin(), inputs[g].end());
    groups[g].outputs.assign(outputs[g].begin(), outputs[g].end());
  }
  std::vector<Partition> ordered;
  for (size_t g : topological_order(group_depends)) ordered.push_back(std::move(groups[g]));
  return ordered;
}

std::vector<uint8_t> extract_subgraph(const ir::Graph& graph, const Partition& partition) {
  GraphBuilder builder(graph.opset());
  builder.copy_symbols(graph);  // all of them, so that every expression keeps its meaning
  std::map<int32_t, ValueId> remap;
  auto value = [&](int32_t v) -> ValueId {
    if (v < 0) return kNoValue;
    auto it = remap.find(v);
    if (it != remap.end()) return it->second;
    const ValueId id = builder.copy_value(*graph.values()->Get(static_cast<uoffset_t>(v)));
    remap.emplace(v, id);
    return id;
  };
  for (int32_t v : partition.inputs) builder.add_input(value(v));
  for (uint32_t n : partition.nodes) {
    const ir::Node* node = graph.nodes()->Get(n);
    std::vector<ValueId> inputs, outputs;
    for (int32_t v : to_vector(node->inputs())) inputs.push_back(value(v));
    for (int32_t v : to_vector(node->outputs())) outputs.push_back(value(v));
    std::vector<Attribute> attributes;
    if (node->attributes() != nullptr) {
      for (const ir::Attribute* a : *node->attributes()) attributes.push_back(read_attribute(*a));
    }
    builder.add_node(node->op_type()->str(), node->name() != nullptr ? node->name()->str() : std::string(),
                     std::move(inputs), std::move(outputs), std::move(attributes));
  }
  for (int32_t v : partition.outputs) builder.add_output(value(v));
  return builder.finish();
}

}  // namespace plugrt::placement
