// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/passes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "canonical_ops.h"
#include "editable_graph.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {

namespace {

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

/// A Transpose's permutation (by default the dimensions reversed); empty when invalid.
std::vector<int64_t> permutation(const EditableGraph& graph, const EditableNode& node) {
  if (node.inputs.empty() || node.inputs[0] < 0) return {};
  const size_t rank = graph.values[static_cast<size_t>(node.inputs[0])].shape.size();
  std::vector<int64_t> perm(rank);
  if (const Attribute* a = node.attribute("perm"); a != nullptr) {
    perm = a->ints;
  } else {
    std::iota(perm.rbegin(), perm.rend(), int64_t{0});
  }
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank) return {};
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[static_cast<size_t>(p)]) return {};
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

bool is_reshape_like(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
}

/// The single live node reading `value`, when nothing else (graph outputs included) does.
std::optional<size_t> sole_consumer(const EditableGraph& graph, int32_t value) {
  if (graph.is_graph_output(value)) return std::nullopt;
  const std::vector<size_t> consumers = graph.consumers(value);
  if (consumers.size() != 1) return std::nullopt;
  return consumers[0];
}

/// Removes node `n`, which writes `out` equal to its input `in`: readers of `out` read
/// `in`. A graph output keeps its value: then `in`'s producer writes `out` instead.
bool bypass(EditableGraph& graph, size_t n, int32_t in, int32_t out) {
  if (!graph.is_graph_output(out)) {
    graph.nodes[n].removed = true;
    graph.replace_uses(out, in);
    return true;
  }
  const std::optional<size_t> producer = graph.producer(in);
  if (!producer || graph.is_graph_output(in) || graph.is_graph_input(in)) return false;
  graph.nodes[n].removed = true;
  for (int32_t& v : graph.nodes[*producer].outputs) {
    if (v == in) v = out;
  }
  graph.replace_uses(in, out);
  return true;
}

/// Whether `value` is a constant whose bytes are all zero (false, 0, 0.0).
bool is_zero_constant(const EditableGraph& graph, int32_t value) {
  if (!graph.is_constant(value)) return false;
  const std::vector<uint8_t>& data = graph.values[static_cast<size_t>(value)].data;
  return !data.empty() && std::all_of(data.begin(), data.end(), [](uint8_t byte) { return byte == 0; });
}

/// True when node `n` passes its first input through unchanged.
bool is_no_op(const EditableGraph& graph, const EditableNode& node) {
  if (node.inputs.empty() || node.inputs[0] < 0 || node.outputs.empty() || node.outputs[0] < 0) return false;
  const EditableValue& in = graph.values[static_cast<size_t>(node.inputs[0])];
  const EditableValue& out = graph.values[static_cast<size_t>(node.outputs[0])];
  if (in.dtype != out.dtype || in.shape != out.shape || in.dims != out.dims) return false;
  // Further outputs (Dropout's mask) must be unread.
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    const int32_t v = node.outputs[i];
    if (v >= 0 && (graph.is_graph_output(v) || !graph.consumers(v).empty())) return false;
  }
  const std::string& op = node.op_type;
  if (op == "Identity" || op == "Cast" || is_reshape_like(op)) return true;
  if (op == "Dropout") {
    // An inference Dropout (training_mode absent or a false constant), or one whose
    // ratio is a constant 0: PyTorch exports F.dropout(p=0.0) in training mode.
    auto zero = [&](size_t i) { return node.inputs.size() > i && is_zero_constant(graph, node.inputs[i]); };
    const bool inference = node.inputs.size() < 3 || node.inputs[2] < 0 || zero(2);
    return inference || zero(1);
  }
  if (op == "Transpose") {
    const std::vector<int64_t> perm = permutation(graph, node);
    return !perm.empty() && is_identity(perm);
  }
  if (op == "Pad") {
    const Attribute* pads_attribute = node.attribute("pads");
    const std::optional<std::vector<int64_t>> pads =
        pads_attribute != nullptr ? std::optional<std::vector<int64_t>>(pads_attribute->ints)
                                  : (node.inputs.size() > 1 ? graph.int_constant(node.inputs[1]) : std::nullopt);
    if (!pads) return false;
    for (int64_t p : *pads) {
      if (p != 0) return false;
    }
    return true;
  }
  return false;
}

size_t remove_no_ops(EditableGraph& graph) {
  size_t changed = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const EditableNode& node = graph.nodes[n];
    if (node.removed || !is_no_op(graph, node)) continue;
    if (bypass(graph, n, node.inputs[0], node.outputs[0])) ++changed;
  }
  return changed;
}

size_t remove_dead_nodes(EditableGraph& graph) {
  std::vector<bool> used(graph.values.size(), false);
  for (int32_t v : graph.outputs) used[static_cast<size_t>(v)] = true;
  size_t changed = 0;
  for (size_t n = graph.nodes.size(); n-- > 0;) {
    EditableNode& node = graph.nodes[n];
    if (node.removed) continue;
    bool live = false;
    for (int32_t v : node.outputs) live = live || (v >= 0 && used[static_cast<size_t>(v)]);
    if (!live) {
      node.removed = true;
      ++changed;
      continue;
    }
    for (int32_t v : node.inputs) {
      if (v >= 0) used[static_cast<size_t>(v)] = true;
    }
  }
  return changed;
}

/// Transpose(Transpose(x, p1), p2) -> Transpose(x, q) with q[i] = p1[p2[i]].
size_t collapse_transposes(EditableGraph& graph) {
  size_t changed = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    EditableNode& second = graph.nodes[n];
    if (second.removed || second.op_type != "Transpose" || second.inputs.empty() || second.inputs[0] < 0) continue;
    const std::optional<size_t> p = graph.producer(second.inputs[0]);
    if (!p || graph.nodes[*p].op_type != "Transpose" || sole_consumer(graph, second.inputs[0]) != n) continue;
    EditableNode& first = graph.nodes[*p];
    const std::vector<int64_t> p1 = permutation(graph, first), p2 = permutation(graph, second);
    if (p1.empty() || p1.size() != p2.size()) continue;
    std::vector<int64_t> combined(p2.size());
    for (size_t i = 0; i < p2.size(); ++i) combined[i] = p1[static_cast<size_t>(p2[i])];
    second.inputs[0] = first.inputs[0];
    second.set_attribute(Attribute::Ints("perm", combined));
    first.removed = true;
    ++changed;
  }
  return changed;
}

/// Two shape-only ops in a row (Reshape, Flatten, Squeeze, Unsqueeze) -> one Reshape to
/// the second's static output shape.
size_t collapse_reshapes(EditableGraph& graph) {
  size_t changed = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    EditableNode& second = graph.nodes[n];
    if (second.removed || !is_reshape_like(second.op_type) || second.inputs.empty() || second.outputs.empty() ||
        second.outputs[0] < 0) {
      continue;
    }
    const std::optional<size_t> p = graph.producer(second.inputs[0]);
    if (!p || !is_reshape_like(graph.nodes[*p].op_type) || sole_consumer(graph, second.inputs[0]) != n) continue;
    if (graph.varies(second.outputs[0])) continue;  // its shape is not one list of numbers
    const std::vector<int64_t> shape = graph.values[static_cast<size_t>(second.outputs[0])].shape;
    bool positive = true;  // a 0 in a Reshape shape means "copy this dimension"
    for (int64_t d : shape) positive = positive && d > 0;
    if (!positive) continue;
    EditableNode& first = graph.nodes[*p];
    if (first.inputs.empty() || first.inputs[0] < 0) continue;
    const int32_t target = graph.add_constant_i64(second.name + "_shape", shape);
    second.op_type = "Reshape";
    second.inputs = {first.inputs[0], target};
    second.attributes.clear();
    first.removed = true;
    ++changed;
  }
  return changed;
}

int64_t int_attribute(const EditableNode& node, const std::string& name, int64_t otherwise) {
  const Attribute* a = node.attribute(name);
  return a != nullptr ? a->i : otherwise;
}

/// Pad(x) -> Conv / AveragePool / MaxPool, when padding there gives the same result: a
/// constant pad on spatial dimensions only, by zeros (Conv; AveragePool counting the
/// padding) or by -inf (MaxPool).
size_t fold_pads(EditableGraph& graph) {
  size_t changed = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    EditableNode& pad = graph.nodes[n];
    if (pad.removed || pad.op_type != "Pad" || pad.inputs.empty() || pad.inputs[0] < 0 || pad.outputs.size() != 1 ||
        pad.outputs[0] < 0) {
      continue;
    }
    if (const Attribute* mode = pad.attribute("mode"); mode != nullptr && mode->s != "constant") continue;
    if (pad.inputs.size() > 3 && pad.inputs[3] >= 0) continue;  // axes (opset 18)
    std::optional<std::vector<int64_t>> pads;
    float value = 0;
    if (const Attribute* a = pad.attribute("pads"); a != nullptr) {  // before opset 11
      pads = a->ints;
      if (const Attribute* v = pad.attribute("value"); v != nullptr) value = v->f;
    } else if (pad.inputs.size() > 1) {
      pads = graph.int_constant(pad.inputs[1]);
      if (pad.inputs.size() > 2 && pad.inputs[2] >= 0) {
        const std::optional<std::vector<float>> constant = graph.float_constant(pad.inputs[2]);
        if (!constant || constant->size() != 1) continue;
        value = (*constant)[0];
      }
    }
    const int32_t x = pad.inputs[0];
    const size_t rank = graph.values[static_cast<size_t>(x)].shape.size();
    if (!pads || rank < 3 || pads->size() != 2 * rank) continue;
    bool foldable = (*pads)[0] == 0 && (*pads)[1] == 0 && (*pads)[rank] == 0 && (*pads)[rank + 1] == 0;
    for (int64_t p : *pads) foldable = foldable && p >= 0;
    const std::optional<size_t> c = sole_consumer(graph, pad.outputs[0]);
    if (!foldable || !c) continue;
    EditableNode& consumer = graph.nodes[*c];
    if (consumer.inputs.empty() || consumer.inputs[0] != pad.outputs[0]) continue;
    if (const Attribute* a = consumer.attribute("auto_pad"); a != nullptr && a->s != "NOTSET") continue;
    const size_t spatial = rank - 2;
    std::vector<int64_t> existing(2 * spatial, 0);
    if (const Attribute* a = consumer.attribute("pads"); a != nullptr) existing = a->ints;
    if (existing.size() != 2 * spatial) continue;
    const bool existing_zero = std::all_of(existing.begin(), existing.end(), [](int64_t p) { return p == 0; });
    if (consumer.op_type == "Conv") {
      if (value != 0) continue;
    } else if (consumer.op_type == "AveragePool") {
      if (value != 0 || int_attribute(consumer, "ceil_mode", 0) != 0) continue;
      if (int_attribute(consumer, "count_include_pad", 0) == 0 && !existing_zero) continue;
      consumer.set_attribute(Attribute::Int("count_include_pad", 1));
    } else if (consumer.op_type == "MaxPool") {
      if (!(std::isinf(value) && value < 0) || int_attribute(consumer, "ceil_mode", 0) != 0) continue;
      if (consumer.outputs.size() > 1 && consumer.outputs[1] >= 0) continue;  // Indices would change
    } else {
      continue;
    }
    for (size_t i = 0; i < spatial; ++i) {
      existing[i] += (*pads)[2 + i];
      existing[spatial + i] += (*pads)[rank + 2 + i];
    }
    consumer.set_attribute(Attribute::Ints("pads", existing));
    consumer.inputs[0] = x;
    pad.removed = true;
    ++changed;
  }
  return changed;
}

/// Gather(x, i) with a constant scalar index on a computed x -> Slice(x, i, i + 1) on
/// that axis, then a Reshape that drops it: the same bytes, in ops the fast backends
/// take. A fused QKV projection split with q, k, v = qkv[0], qkv[1], qkv[2] (Swin, ViT)
/// exports this way.
size_t gathers_to_slices(EditableGraph& graph) {
  if (graph.opset < 10) return 0;  // Slice takes its bounds as inputs from opset 10
  size_t changed = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const EditableNode& gather = graph.nodes[n];
    if (gather.removed || gather.op_type != "Gather" || gather.inputs.size() != 2 || gather.outputs.size() != 1 ||
        gather.inputs[0] < 0 || gather.outputs[0] < 0 || graph.is_constant(gather.inputs[0])) {
      continue;
    }
    const int32_t x = gather.inputs[0], index = gather.inputs[1], y = gather.outputs[0];
    if (graph.varies(x)) continue;  // the Reshape below needs a static shape
    const std::optional<std::vector<int64_t>> i = graph.int_constant(index);
    if (!i || i->size() != 1 || !graph.values[static_cast<size_t>(index)].shape.empty()) continue;
    std::vector<int64_t> sliced_shape = graph.values[static_cast<size_t>(x)].shape;
    const int64_t rank = static_cast<int64_t>(sliced_shape.size());
    int64_t axis = int_attribute(gather, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) continue;
    const int64_t extent = sliced_shape[static_cast<size_t>(axis)];
    const int64_t start = (*i)[0] < 0 ? (*i)[0] + extent : (*i)[0];
    const std::vector<int64_t> out_shape = graph.values[static_cast<size_t>(y)].shape;
    if (start < 0 || start >= extent || static_cast<int64_t>(out_shape.size()) != rank - 1) continue;
    if (std::any_of(out_shape.begin(), out_shape.end(), [](int64_t d) { return d <= 0; })) continue;
    sliced_shape[static_cast<size_t>(axis)] = 1;

    const std::string name = gather.name;
    EditableValue sliced;
    sliced.name = graph.values[static_cast<size_t>(y)].name + "_slice";
    sliced.dtype = graph.values[static_cast<size_t>(x)].dtype;
    sliced.shape = sliced_shape;
    graph.values.push_back(std::move(sliced));
    const int32_t sliced_value = static_cast<int32_t>(graph.values.size() - 1);
    EditableNode slice;
    slice.op_type = "Slice";
    slice.name = name;
    slice.inputs = {x, graph.add_constant_i64(name + "_starts", {start}),
                    graph.add_constant_i64(name + "_ends", {start + 1}),
                    graph.add_constant_i64(name + "_axes", {axis})};
    slice.outputs = {sliced_value};
    EditableNode reshape;
    reshape.op_type = "Reshape";
    reshape.name = name + "_squeeze";
    reshape.inputs = {sliced_value, graph.add_constant_i64(name + "_shape", out_shape)};
    reshape.outputs = {y};
    graph.nodes[n] = std::move(slice);
    graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(n) + 1, std::move(reshape));
    ++n;
    ++changed;
  }
  return changed;
}

}  // namespace

Result<PassResult> run_graph_passes(Span<const uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!ir::VerifyGraphBuffer(verifier)) {
    return Status(Error::kInvalidArgument, "graph passes: the graph IR buffer does not verify");
  }
  EditableGraph graph = EditableGraph::read(*ir::GetGraph(bytes.data()));
  PassResult result;
  struct Pass {
    const char* name;
    size_t (*run)(EditableGraph&);
  };
  constexpr Pass kPasses[] = {
      {"no_op", remove_no_ops},        {"transpose_chain", collapse_transposes}, {"reshape_chain", collapse_reshapes},
      {"pad_fold", fold_pads},         {"gather_to_slice", gathers_to_slices},   {"canonical_op", name_decomposed_ops},
      {"dead_node", remove_dead_nodes}};
  // Each pass can open work for another (a collapsed chain may become a no-op); every
  // change removes a node or a Gather, and none adds a Gather, so this ends.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Pass& pass : kPasses) {
      const size_t count = pass.run(graph);
      if (count > 0) {
        result.changes[pass.name] += count;
        changed = true;
      }
    }
  }
  result.graph = graph.write();
  return result;
}

}  // namespace plugrt::placement
