// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/partitioner.h"

#include <algorithm>
#include <map>
#include <set>

#include "editable_graph.h"
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

/// The groups of nodes being formed and the transitive closure of the graph between
/// them, both ways, as bit sets: `descendants[g]` the groups a path leads to from g,
/// `ancestors[g]` those a path leads from to g. Sized for the groups there are (doubling
/// as they come), not for the nodes: a long chain is one group, not a nodes² matrix.
class GroupGraph {
 public:
  size_t size() const { return backend_.size(); }
  size_t backend(size_t g) const { return backend_[g]; }
  size_t add(size_t backend) {
    if (backend_.size() == capacity_) grow(std::max<size_t>(64, capacity_ * 2));
    backend_.push_back(backend);
    return backend_.size() - 1;
  }

  /// Whether a node of `g` reading from `producers` (groups) closes a cycle: a path leads
  /// from g to one of the others.
  bool closes_cycle(size_t g, const std::vector<size_t>& producers) const {
    for (size_t p : producers) {
      if (p != g && has(descendants_, g, p)) return true;
    }
    return false;
  }

  void add_edge(size_t from, size_t to) {
    if (from == to || has(descendants_, from, to)) return;
    // Everything up to `from` now reaches everything from `to` on.
    std::vector<size_t> up = members(ancestors_, from), down = members(descendants_, to);
    up.push_back(from);
    down.push_back(to);
    for (size_t x : up) {
      for (size_t y : down) set(descendants_, x, y);
    }
    for (size_t y : down) {
      for (size_t x : up) set(ancestors_, y, x);
    }
  }

  /// Whether `a` and `b` may become one group: no path joins them through a third.
  bool can_merge(size_t a, size_t b) const {
    for (size_t w = 0; w < words_; ++w) {
      if ((row(descendants_, a)[w] & row(ancestors_, b)[w]) != 0 ||
          (row(descendants_, b)[w] & row(ancestors_, a)[w]) != 0) {
        return false;
      }
    }
    return true;
  }

  /// Folds `b` into `a` (can_merge(a, b) must hold): a takes b's paths.
  void merge(size_t a, size_t b) {
    for (size_t w = 0; w < words_; ++w) {
      row(descendants_, a)[w] |= row(descendants_, b)[w];
      row(ancestors_, a)[w] |= row(ancestors_, b)[w];
    }
    clear(descendants_, a, a);
    clear(descendants_, a, b);
    clear(ancestors_, a, a);
    clear(ancestors_, a, b);
    for (size_t x : members(ancestors_, a)) {
      for (size_t w = 0; w < words_; ++w) row(descendants_, x)[w] |= row(descendants_, a)[w];
      set(descendants_, x, a);
      clear(descendants_, x, b);
    }
    for (size_t y : members(descendants_, a)) {
      for (size_t w = 0; w < words_; ++w) row(ancestors_, y)[w] |= row(ancestors_, a)[w];
      set(ancestors_, y, a);
      clear(ancestors_, y, b);
    }
  }

 private:
  void grow(size_t capacity) {
    const size_t words = capacity / 64;
    for (std::vector<uint64_t>* sets : {&descendants_, &ancestors_}) {
      std::vector<uint64_t> wider(capacity * words, 0);
      for (size_t g = 0; g < backend_.size(); ++g) std::copy_n(row(*sets, g), words_, wider.data() + g * words);
      *sets = std::move(wider);
    }
    capacity_ = capacity;
    words_ = words;
  }
  const uint64_t* row(const std::vector<uint64_t>& sets, size_t g) const { return sets.data() + g * words_; }
  uint64_t* row(std::vector<uint64_t>& sets, size_t g) { return sets.data() + g * words_; }
  bool has(const std::vector<uint64_t>& sets, size_t g, size_t bit) const {
    return ((row(sets, g)[bit / 64] >> (bit % 64)) & 1u) != 0;
  }
  void set(std::vector<uint64_t>& sets, size_t g, size_t bit) { row(sets, g)[bit / 64] |= uint64_t{1} << (bit % 64); }
  void clear(std::vector<uint64_t>& sets, size_t g, size_t bit) {
    row(sets, g)[bit / 64] &= ~(uint64_t{1} << (bit % 64));
  }
  std::vector<size_t> members(const std::vector<uint64_t>& sets, size_t g) const {
    std::vector<size_t> found;
    for (size_t w = 0; w < words_; ++w) {
      for (uint64_t bits = row(sets, g)[w]; bits != 0; bits &= bits - 1) {
        found.push_back(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
      }
    }
    return found;
  }

  size_t capacity_ = 0, words_ = 0;
  std::vector<uint64_t> descendants_, ancestors_;
  std::vector<size_t> backend_;
};

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
  for (size_t a = 0; a < groups.size(); ++a) {
    if (merged_into[a] != a) continue;
    for (size_t b = a + 1; b < groups.size(); ++b) {
      if (merged_into[b] != b || groups.backend(b) != groups.backend(a) || !groups.can_merge(a, b)) continue;
      groups.merge(a, b);
      merged_into[b] = a;
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
