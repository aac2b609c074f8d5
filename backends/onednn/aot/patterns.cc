// SPDX-License-Identifier: Apache-2.0
// Multi-node patterns that one oneDNN primitive computes, found within one partition.
#include <algorithm>
#include <cmath>

#include "aot/lowering.h"

namespace plugrt::onednn {

namespace {

bool is_op(const ir::Node& node, const char* type) { return node.op_type()->str() == type; }

bool near(float value, float target) { return std::fabs(value - target) <= 1e-4f * std::fabs(target); }

/// Whether a ReduceMean reduces exactly the last axis of `rank`, keeping dims.
bool reduces_last_axis(const GraphView& graph, const ir::Node& node, size_t rank) {
  if (GraphView::int_attribute(node, "keepdims", 1) == 0) return false;
  std::vector<int64_t> axes;
  if (graph.opset() >= 18) {
    const int32_t a = GraphView::input(node, 1);
    std::optional<std::vector<int64_t>> read = graph.is_constant(a) ? graph.ints(a) : std::nullopt;
    if (!read) return false;
    axes = *read;
  } else {
    axes = GraphView::ints_attribute(node, "axes");
  }
  if (axes.size() == 1 && (axes[0] == -1 || axes[0] == static_cast<int64_t>(rank) - 1)) return true;
  return rank == 1 && axes.empty();
}

/// For a binary node reading `value` and a constant: the constant's value index, or -1.
int32_t other_constant(const GraphView& graph, const ir::Node& node, int32_t value) {
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 1);
  if (a == value && graph.is_constant(b)) return b;
  if (b == value && graph.is_constant(a)) return a;
  return -1;
}

}  // namespace

int64_t Lowering::sole_reader(int32_t value) const {
  if (!graph_.valid(value) || graph_.is_graph_output(value) || graph_.num_readers(value) != 1) return -1;
  if (first_reader_.empty()) {  // indexed once: a scan per call made a long graph quadratic
    first_reader_.assign(sdk::num_values(graph_.graph()), -1);
    for (size_t n = graph_.num_nodes(); n-- > 0;) {
      const ir::Node& node = graph_.node(n);
      for (size_t i = 0; i < GraphView::num_inputs(node); ++i) {
        const int32_t v = GraphView::input(node, i);
        if (graph_.valid(v)) first_reader_[static_cast<size_t>(v)] = static_cast<int64_t>(n);
      }
    }
  }
  return first_reader_[static_cast<size_t>(value)];
}
// mean = ReduceMean(x); d = x - mean; var = ReduceMean(d ^ 2); y = d / Sqrt(var + eps),
// optionally then * gamma and + beta (constants over the last axis).
std::vector<size_t> Lowering::match_layer_norm(size_t first) {
  const ir::Node& reduce = graph_.node(first);
  if (!is_op(reduce, "ReduceMean") || GraphView::num_outputs(reduce) != 1) return {};
  const int32_t x = GraphView::input(reduce, 0), mean = GraphView::output(reduce, 0);
  if (!check_activation(x, "input").empty()) return {};
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.empty() || !reduces_last_axis(graph_, reduce, xs.size())) return {};
  const int64_t channels = xs.back();

  auto next = [&](int32_t value, const char* type) -> int64_t {
    const int64_t n = sole_reader(value);
    return n >= 0 && is_op(graph_.node(static_cast<size_t>(n)), type) ? n : -1;
  };
  const int64_t sub = next(mean, "Sub");
  if (sub < 0) return {};
  const ir::Node& sub_node = graph_.node(static_cast<size_t>(sub));
  if (GraphView::input(sub_node, 0) != x || GraphView::input(sub_node, 1) != mean) return {};
  const int32_t centered = GraphView::output(sub_node, 0);
  if (graph_.shape(centered) != xs || graph_.num_readers(centered) != 2 || graph_.is_graph_output(centered)) return {};
  // The two readers of the centered value: Pow (first) and Div (last).
  int64_t pow = -1, div = -1;
  for (size_t n = 0; n < graph_.num_nodes(); ++n) {
    const ir::Node& node = graph_.node(n);
    if (is_op(node, "Pow") && GraphView::input(node, 0) == centered) pow = static_cast<int64_t>(n);
    if (is_op(node, "Div") && GraphView::input(node, 0) == centered) div = static_cast<int64_t>(n);
  }
  if (pow < 0 || div < 0) return {};
  const ir::Node& pow_node = graph_.node(static_cast<size_t>(pow));
  const std::optional<float> exponent = graph_.scalar(GraphView::input(pow_node, 1));
  if (!exponent || *exponent != 2.0f) return {};
  const int64_t reduce2 = next(GraphView::output(pow_node, 0), "ReduceMean");
  if (reduce2 < 0 || !reduces_last_axis(graph_, graph_.node(static_cast<size_t>(reduce2)), xs.size())) return {};
  const int32_t variance = GraphView::output(graph_.node(static_cast<size_t>(reduce2)), 0);
  const int64_t add_eps = next(variance, "Add");
  if (add_eps < 0) return {};
  const ir::Node& add_node = graph_.node(static_cast<size_t>(add_eps));
  const std::optional<float> epsilon = graph_.scalar(other_constant(graph_, add_node, variance));
  if (!epsilon || *epsilon < 0) return {};
  const int64_t sqrt = next(GraphView::output(add_node, 0), "Sqrt");
  if (sqrt < 0) return {};
  const int32_t deviation = GraphView::output(graph_.node(static_cast<size_t>(sqrt)), 0);
  const ir::Node& div_node = graph_.node(static_cast<size_t>(div));
  if (GraphView::input(div_node, 1) != deviation || sole_reader(deviation) != div) return {};
  std::vector<size_t> covered = {first,
                                 static_cast<size_t>(sub),
                                 static_cast<size_t>(pow),
                                 static_cast<size_t>(reduce2),
                                 static_cast<size_t>(add_eps),
                                 static_cast<size_t>(sqrt),
                                 static_cast<size_t>(div)};
  int32_t result = GraphView::output(div_node, 0);

  // gamma and beta: constants of C elements (or one, broadcast).
  auto per_channel = [&](const ir::Node& node, int32_t value, std::vector<float>* out) {
    const int32_t c = other_constant(graph_, node, value);
    if (c < 0 || !graph_.is_float(c)) return false;
    const std::vector<float> data = graph_.floats(c);
    const std::vector<int64_t> cs = graph_.shape(c);
    if (data.empty() || !broadcasts_to(cs, {channels}) || num_elements(cs) > channels) return false;
    out->assign(static_cast<size_t>(channels), data[0]);
    if (static_cast<int64_t>(data.size()) == channels) *out = data;
    return true;
  };
  std::vector<float> scale(static_cast<size_t>(channels), 1.0f), shift;
  if (const int64_t mul = next(result, "Mul");
      mul >= 0 && per_channel(graph_.node(static_cast<size_t>(mul)), result, &scale)) {
    covered.push_back(static_cast<size_t>(mul));
    result = GraphView::output(graph_.node(static_cast<size_t>(mul)), 0);
    if (const int64_t add = next(result, "Add");
        add >= 0 && per_channel(graph_.node(static_cast<size_t>(add)), result, &shift)) {
      covered.push_back(static_cast<size_t>(add));
      result = GraphView::output(graph_.node(static_cast<size_t>(add)), 0);
    } else {
      shift.clear();
    }
  }
  if (!check_activation(result, "output").empty() || graph_.shape(result) != xs) return {};
  const ir::Node& last = graph_.node(covered.back());
  std::vector<int32_t> inputs = {activation(x), add_constant({channels}, std::move(scale)),
                                 shift.empty() ? -1 : add_constant({channels}, std::move(shift))};
  Op& op = add(blob::OpKind::LayerNorm, last, std::move(inputs), {activation(result)});
  op.epsilon = *epsilon;
  op.name = "layer normalization ending at " + op.name;
  return covered;
}

// y = x * (Erf(x / sqrt(2)) + 1) * 0.5, as PyTorch exports GELU.
std::vector<size_t> Lowering::match_gelu(size_t first) {
  const ir::Node& scale = graph_.node(first);
  const bool divides = is_op(scale, "Div");
  if (!divides && !is_op(scale, "Mul")) return {};
  const int32_t x = GraphView::input(scale, 0);
  const std::optional<float> factor = graph_.scalar(GraphView::input(scale, 1));
  if (!factor || !near(*factor, divides ? std::sqrt(2.0f) : std::sqrt(0.5f))) return {};
  if (!check_activation(x, "input").empty()) return {};
  auto next = [&](int32_t value, const char* type) -> int64_t {
    const int64_t n = sole_reader(value);
    return n >= 0 && is_op(graph_.node(static_cast<size_t>(n)), type) ? n : -1;
  };
  const int64_t erf = next(GraphView::output(scale, 0), "Erf");
  if (erf < 0) return {};
  const int32_t erf_out = GraphView::output(graph_.node(static_cast<size_t>(erf)), 0);
  const int64_t add_one = next(erf_out, "Add");
  if (add_one < 0) return {};
  const ir::Node& add_node = graph_.node(static_cast<size_t>(add_one));
  const std::optional<float> one = graph_.scalar(other_constant(graph_, add_node, erf_out));
  if (!one || *one != 1.0f) return {};
  const int32_t sum = GraphView::output(add_node, 0);
  const int64_t mul = next(sum, "Mul");
  if (mul < 0) return {};
  const ir::Node& mul_node = graph_.node(static_cast<size_t>(mul));
  const int32_t m0 = GraphView::input(mul_node, 0), m1 = GraphView::input(mul_node, 1);
  if (!((m0 == x && m1 == sum) || (m0 == sum && m1 == x))) return {};
  const int32_t product = GraphView::output(mul_node, 0);
  const int64_t half = next(product, "Mul");
  if (half < 0) return {};
  const ir::Node& half_node = graph_.node(static_cast<size_t>(half));
  const std::optional<float> half_value = graph_.scalar(other_constant(graph_, half_node, product));
  if (!half_value || *half_value != 0.5f) return {};
  const int32_t y = GraphView::output(half_node, 0);
  if (!check_activation(y, "output").empty() || graph_.shape(y) != graph_.shape(x)) return {};
  Op& op = add(blob::OpKind::Eltwise, half_node, {activation(x)}, {activation(y)});
  op.algorithm = blob::Algorithm::GeluErf;
  op.name = "GELU ending at " + op.name;
  return {first, static_cast<size_t>(erf), static_cast<size_t>(add_one), static_cast<size_t>(mul),
          static_cast<size_t>(half)};
}

// y = x * gate(x), `first` being the gate (its op checked by the caller), x also read by
// the Mul: one eltwise op of `algorithm`, which then fuses into the convolution before it.
std::vector<size_t> Lowering::match_self_gated(size_t first, blob::Algorithm algorithm, float alpha, const char* what) {
  const ir::Node& gate = graph_.node(first);
  const int32_t x = GraphView::input(gate, 0), g = GraphView::output(gate, 0);
  if (!check_activation(x, "input").empty()) return {};
  const int64_t mul = sole_reader(g);
  if (mul < 0 || !is_op(graph_.node(static_cast<size_t>(mul)), "Mul")) return {};
  const ir::Node& mul_node = graph_.node(static_cast<size_t>(mul));
  const int32_t m0 = GraphView::input(mul_node, 0), m1 = GraphView::input(mul_node, 1);
  if (!((m0 == x && m1 == g) || (m0 == g && m1 == x))) return {};
  const int32_t y = GraphView::output(mul_node, 0);
  if (!check_activation(y, "output").empty() || graph_.shape(y) != graph_.shape(x)) return {};
  Op& op = add(blob::OpKind::Eltwise, mul_node, {activation(x)}, {activation(y)});
  op.algorithm = algorithm;
  op.alpha = alpha;
  op.name = std::string(what) + " ending at " + op.name;
  return {first, static_cast<size_t>(mul)};
}

// y = x * Sigmoid(x): SiLU, as PyTorch exports it (EfficientNet, MobileNetV3's heads).
std::vector<size_t> Lowering::match_swish(size_t first) {
  if (!is_op(graph_.node(first), "Sigmoid")) return {};
  return match_self_gated(first, blob::Algorithm::Swish, 1.0f, "SiLU");
}

// y = x * HardSigmoid(x) with alpha 1/6 and beta 1/2: HardSwish, as PyTorch exports it
// before opset 14 (MobileNetV3), instead of two eltwise steps and a binary one over the
// whole tensor.
std::vector<size_t> Lowering::match_hard_swish(size_t first) {
  const ir::Node& gate = graph_.node(first);
  if (!is_op(gate, "HardSigmoid") || GraphView::num_inputs(gate) != 1 ||
      !near(GraphView::float_attribute(gate, "alpha", 0.2f), 1.0f / 6.0f) ||
      GraphView::float_attribute(gate, "beta", 0.5f) != 0.5f) {
    return {};
  }
  return match_self_gated(first, blob::Algorithm::HardSwish, 0.0f, "HardSwish");
}

// Reshape [.., C, ..] to [.., g, C / g, ..], Transpose swapping those two axes, Reshape
// back: ShuffleNet's channel shuffle, one oneDNN shuffle instead of two copies.
std::vector<size_t> Lowering::match_channel_shuffle(size_t first) {
  const ir::Node& split = graph_.node(first);
  if (!is_op(split, "Reshape") || GraphView::num_outputs(split) != 1) return {};
  const int32_t x = GraphView::input(split, 0), grouped = GraphView::output(split, 0);
  if (!check_activation(x, "input").empty() || !graph_.is_constant(GraphView::input(split, 1))) return {};
  const std::vector<int64_t> xs = graph_.shape(x), gs = graph_.shape(grouped);
  if (gs.size() != xs.size() + 1) return {};
  size_t axis = 0;
  while (axis < xs.size() && xs[axis] == gs[axis]) ++axis;
  if (axis == xs.size() || gs[axis] < 2 || gs[axis + 1] < 2 || gs[axis] * gs[axis + 1] != xs[axis] ||
      !std::equal(xs.begin() + static_cast<std::ptrdiff_t>(axis) + 1, xs.end(),
                  gs.begin() + static_cast<std::ptrdiff_t>(axis) + 2)) {
    return {};
  }
  const int64_t transpose = sole_reader(grouped);
  if (transpose < 0 || !is_op(graph_.node(static_cast<size_t>(transpose)), "Transpose")) return {};
  const ir::Node& transpose_node = graph_.node(static_cast<size_t>(transpose));
  std::vector<int64_t> swap;
  for (size_t d = 0; d < gs.size(); ++d) swap.push_back(static_cast<int64_t>(d));
  std::swap(swap[axis], swap[axis + 1]);
  if (GraphView::ints_attribute(transpose_node, "perm", {}) != swap) return {};
  const int64_t merge = sole_reader(GraphView::output(transpose_node, 0));
  if (merge < 0 || !is_op(graph_.node(static_cast<size_t>(merge)), "Reshape")) return {};
  const ir::Node& merge_node = graph_.node(static_cast<size_t>(merge));
  if (!graph_.is_constant(GraphView::input(merge_node, 1)) || GraphView::num_outputs(merge_node) != 1) return {};
  const int32_t y = GraphView::output(merge_node, 0);
  if (!check_activation(y, "output").empty() || graph_.shape(y) != xs) return {};
  Op& op = add(blob::OpKind::Shuffle, merge_node, {activation(x)}, {activation(y)});
  op.axis = static_cast<int32_t>(axis);
  op.groups = gs[axis];
  op.name = "channel shuffle ending at " + op.name;
  return {first, static_cast<size_t>(transpose), static_cast<size_t>(merge)};
}

std::string Lowering::add_all_nodes() {
  std::vector<bool> done(graph_.num_nodes(), false);
  for (size_t n = 0; n < graph_.num_nodes(); ++n) {
    if (done[n]) continue;
    std::vector<size_t> covered = match_layer_norm(n);
    if (covered.empty()) covered = match_gelu(n);
    if (covered.empty()) covered = match_swish(n);
    if (covered.empty()) covered = match_hard_swish(n);
    if (covered.empty()) covered = match_channel_shuffle(n);
    bool clash = false;
    for (size_t c : covered) clash |= done[c] || c < n;
    if (!covered.empty() && !clash) {
      for (size_t c : covered) done[c] = true;
      continue;
    }
    if (!covered.empty()) return "internal error: a pattern overlaps lowered nodes";
    const std::string why = add_node(n);
    if (!why.empty()) {
      const ir::Node& node = graph_.node(n);
      return "onednn cannot lower " + node.op_type()->str() + " '" +
             (node.name() ? node.name()->str() : std::string()) + "': " + why;
    }
    done[n] = true;
  }
  return "";
}

}  // namespace plugrt::onednn
