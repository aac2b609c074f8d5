#include "plugrt/placement/partitioner.h"

#include <algorithm>
#include <map>
#include <set>

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
  return order;  // complete: the grouping rule never creates a cycle
}

}  // namespace

std::vector<size_t> group_nodes(const std::vector<std::vector<uint32_t>>& producers,
                                const std::vector<size_t>& node_backend, size_t* num_groups) {
  const size_t nodes = producers.size();
  // Per node, as bit sets over groups (at most one group per node): the groups it depends
  // on at all, and those it reaches only through a node outside them (joining such a group
  // would create a cycle).
  const size_t words = (nodes + 63) / 64;
  std::vector<uint64_t> depends(nodes * words, 0), through_others(nodes * words, 0);
  auto has = [&](const std::vector<uint64_t>& sets, size_t n, size_t g) {
    return ((sets[n * words + g / 64] >> (g % 64)) & 1u) != 0;
  };
  auto set_bit = [&](std::vector<uint64_t>& sets, size_t n, size_t g, bool on) {
    const uint64_t bit = uint64_t{1} << (g % 64);
    sets[n * words + g / 64] = on ? (sets[n * words + g / 64] | bit) : (sets[n * words + g / 64] & ~bit);
  };
  std::vector<size_t> group_of(nodes, 0), group_backend;
  std::vector<size_t> direct;
  for (size_t n = 0; n < nodes; ++n) {
    direct.clear();
    for (uint32_t p : producers[n]) {
      const size_t g = group_of[p];
      direct.push_back(g);
      for (size_t w = 0; w < words; ++w) {
        depends[n * words + w] |= depends[p * words + w];
        through_others[n * words + w] |= depends[p * words + w] | through_others[p * words + w];
      }
    }
    // depends[p] never holds p's own group, so what came from it above is reached only
    // through others; the producers' own groups are direct dependencies.
    for (size_t g : direct) set_bit(depends, n, g, true);
    std::sort(direct.begin(), direct.end());
    size_t chosen = group_backend.size();
    for (size_t g : direct) {
      if (group_backend[g] == node_backend[n] && !has(through_others, n, g)) {
        chosen = g;
        break;
      }
    }
    if (chosen == group_backend.size()) group_backend.push_back(node_backend[n]);
    group_of[n] = chosen;
    set_bit(depends, n, chosen, false);
    set_bit(through_others, n, chosen, false);
  }
  if (num_groups != nullptr) *num_groups = group_backend.size();
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
  std::map<int32_t, ValueId> remap;
  auto value = [&](int32_t v) -> ValueId {
    if (v < 0) return kNoValue;
    auto it = remap.find(v);
    if (it != remap.end()) return it->second;
    const ir::Value* source = graph.values()->Get(static_cast<uoffset_t>(v));
    const std::string name = source->name() != nullptr ? source->name()->str() : std::string();
    const auto dtype = static_cast<DType>(source->dtype());
    std::vector<int64_t> shape = to_vector(source->shape());
    ValueId id = source->data() != nullptr
                     ? builder.add_constant(name, dtype, std::move(shape), to_vector(source->data()))
                     : builder.add_value(name, dtype, std::move(shape));
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
      for (const ir::Attribute* a : *node->attributes()) {
        Attribute copy;
        copy.name = a->name()->str();
        switch (a->kind()) {
          case ir::AttributeKind::Float: copy = Attribute::Float(copy.name, a->f()); break;
          case ir::AttributeKind::Int: copy = Attribute::Int(copy.name, a->i()); break;
          case ir::AttributeKind::String:
            copy = Attribute::String(copy.name, a->s() != nullptr ? a->s()->str() : std::string());
            break;
          case ir::AttributeKind::Floats: copy = Attribute::Floats(copy.name, to_vector(a->floats())); break;
          case ir::AttributeKind::Ints: copy = Attribute::Ints(copy.name, to_vector(a->ints())); break;
        }
        attributes.push_back(std::move(copy));
      }
    }
    builder.add_node(node->op_type()->str(), node->name() != nullptr ? node->name()->str() : std::string(),
                     std::move(inputs), std::move(outputs), std::move(attributes));
  }
  for (int32_t v : partition.outputs) builder.add_output(value(v));
  return builder.finish();
}

}  // namespace plugrt::placement
