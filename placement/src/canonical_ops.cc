// SPDX-License-Identifier: Apache-2.0
#include "canonical_ops.h"

#include <cmath>
#include <optional>
#include <vector>

namespace plugrt::placement {

namespace {

/// The single live node reading `value`, when it has op type `op` and nothing else
/// (graph outputs included) reads `value`.
std::optional<size_t> only_reader(const EditableGraph& graph, int32_t value, const char* op) {
  if (value < 0 || graph.is_graph_output(value)) return std::nullopt;
  const std::vector<size_t> readers = graph.consumers(value);
  if (readers.size() != 1 || graph.nodes[readers[0]].op_type != op) return std::nullopt;
  return readers[0];
}

/// Of a two-input node reading `value`, the other input; -1 when it does not read it once.
int32_t other_input(const EditableNode& node, int32_t value) {
  if (node.inputs.size() != 2 || node.inputs[0] == node.inputs[1]) return -1;
  if (node.inputs[0] == value) return node.inputs[1];
  if (node.inputs[1] == value) return node.inputs[0];
  return -1;
}

std::optional<float> float_scalar(const EditableGraph& graph, int32_t value) {
  const std::optional<std::vector<float>> data = graph.float_constant(value);
  if (!data || data->size() != 1) return std::nullopt;
  return (*data)[0];
}

bool near(float value, float target) { return std::fabs(value - target) <= 1e-4f * std::fabs(target); }

int32_t output(const EditableGraph& graph, size_t n) {
  const EditableNode& node = graph.nodes[n];
  return node.outputs.size() == 1 ? node.outputs[0] : -1;
}

const std::vector<int64_t>& shape(const EditableGraph& graph, int32_t value) {
  return graph.values[static_cast<size_t>(value)].shape;
}

bool is_float32(const EditableGraph& graph, int32_t value) {
  return value >= 0 && graph.values[static_cast<size_t>(value)].dtype == DType::kFloat32;
}

/// Removes `covered` and turns `last` (the node writing the pattern's result) into `op`.
void replace(EditableGraph& graph, const std::vector<size_t>& covered, size_t last, const std::string& op,
             std::vector<int32_t> inputs, std::vector<Attribute> attributes) {
  for (size_t n : covered) graph.nodes[n].removed = n != last;
  EditableNode& node = graph.nodes[last];
  node.op_type = op;
  node.inputs = std::move(inputs);
  node.attributes = std::move(attributes);
}

/// Whether a ReduceMean reduces exactly the last axis of a rank-`rank` input, keeping it.
bool reduces_last_axis(const EditableGraph& graph, const EditableNode& node, size_t rank) {
  const Attribute* keepdims = node.attribute("keepdims");
  if (keepdims != nullptr && keepdims->i != 1) return false;
  std::optional<std::vector<int64_t>> axes;
  if (graph.opset >= 18) {
    if (node.inputs.size() >= 2) axes = graph.int_constant(node.inputs[1]);
  } else if (const Attribute* a = node.attribute("axes"); a != nullptr) {
    axes = a->ints;
  }
  return axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == static_cast<int64_t>(rank) - 1);
}

/// A constant of one element or one per channel of the last axis, its leading dims 1:
/// its values, one per channel.
std::optional<std::vector<float>> per_channel(const EditableGraph& graph, int32_t value, int64_t channels) {
  const std::optional<std::vector<float>> data = graph.float_constant(value);
  if (!data) return std::nullopt;
  const std::vector<int64_t>& dims = shape(graph, value);
  for (size_t d = 0; d + 1 < dims.size(); ++d) {
    if (dims[d] != 1) return std::nullopt;
  }
  if (data->size() == 1) return std::vector<float>(static_cast<size_t>(channels), (*data)[0]);
  if (static_cast<int64_t>(data->size()) == channels && !dims.empty()) return data;
  return std::nullopt;
}

// mean = ReduceMean(x); d = x - mean; y = d / Sqrt(ReduceMean(d ^ 2) + eps), then
// optionally * gamma and + beta: LayerNormalization over the last axis (opset 17).
bool layer_norm_at(EditableGraph& graph, size_t first) {
  const EditableNode& reduce = graph.nodes[first];
  if (reduce.op_type != "ReduceMean" || reduce.inputs.empty()) return false;
  const int32_t x = reduce.inputs[0], mean = output(graph, first);
  if (!is_float32(graph, x) || mean < 0 || shape(graph, x).empty()) return false;
  const std::vector<int64_t> xs = shape(graph, x);
  if (!reduces_last_axis(graph, reduce, xs.size())) return false;
  const int64_t channels = xs.back();

  const std::optional<size_t> sub = only_reader(graph, mean, "Sub");
  if (!sub || graph.nodes[*sub].inputs != std::vector<int32_t>{x, mean}) return false;
  const int32_t centered = output(graph, *sub);
  if (centered < 0 || graph.is_graph_output(centered)) return false;
  // Its two readers: Pow(centered, 2) and Div(centered, deviation).
  std::optional<size_t> pow, div;
  for (size_t n : graph.consumers(centered)) {
    const EditableNode& node = graph.nodes[n];
    if (node.op_type == "Pow" && node.inputs.size() == 2 && node.inputs[0] == centered) pow = n;
    if (node.op_type == "Div" && node.inputs.size() == 2 && node.inputs[0] == centered) div = n;
  }
  if (!pow || !div || graph.consumers(centered).size() != 2) return false;
  if (float_scalar(graph, graph.nodes[*pow].inputs[1]) != 2.0f) return false;
  const std::optional<size_t> reduce2 = only_reader(graph, output(graph, *pow), "ReduceMean");
  if (!reduce2 || !reduces_last_axis(graph, graph.nodes[*reduce2], xs.size())) return false;
  const int32_t variance = output(graph, *reduce2);
  const std::optional<size_t> add = only_reader(graph, variance, "Add");
  if (!add) return false;
  const std::optional<float> epsilon = float_scalar(graph, other_input(graph.nodes[*add], variance));
  if (!epsilon || *epsilon < 0) return false;
  const std::optional<size_t> sqrt = only_reader(graph, output(graph, *add), "Sqrt");
  if (!sqrt || only_reader(graph, output(graph, *sqrt), "Div") != div ||
      graph.nodes[*div].inputs[1] != output(graph, *sqrt)) {
    return false;
  }
  std::vector<size_t> covered = {first, *sub, *pow, *reduce2, *add, *sqrt, *div};
  int32_t result = output(graph, *div);
  std::vector<float> scale(static_cast<size_t>(channels), 1.0f);
  std::optional<std::vector<float>> bias;
  if (const std::optional<size_t> mul = only_reader(graph, result, "Mul")) {
    if (const auto gamma = per_channel(graph, other_input(graph.nodes[*mul], result), channels)) {
      scale = *gamma;
      covered.push_back(*mul);
      result = output(graph, *mul);
      if (const std::optional<size_t> shift = only_reader(graph, result, "Add")) {
        bias = per_channel(graph, other_input(graph.nodes[*shift], result), channels);
        if (bias) {
          covered.push_back(*shift);
          result = output(graph, *shift);
        }
      }
    }
  }
  if (result < 0 || shape(graph, result) != xs) return false;
  const std::string& name = graph.nodes[covered.back()].name;
  std::vector<int32_t> inputs = {x, graph.add_constant_f32(name + "_scale", scale)};
  if (bias) inputs.push_back(graph.add_constant_f32(name + "_bias", *bias));
  replace(graph, covered, covered.back(), "LayerNormalization", std::move(inputs),
          {Attribute::Int("axis", -1), Attribute::Float("epsilon", *epsilon)});
  return true;
}

// y = x * (Erf(x / sqrt(2)) + 1) * 0.5, as PyTorch writes GELU: Gelu (opset 20).
bool gelu_at(EditableGraph& graph, size_t first) {
  const EditableNode& scale = graph.nodes[first];
  const bool divides = scale.op_type == "Div";
  if ((!divides && scale.op_type != "Mul") || scale.inputs.size() != 2) return false;
  const int32_t x = scale.inputs[0];
  const std::optional<float> factor = float_scalar(graph, scale.inputs[1]);
  if (!is_float32(graph, x) || !factor || !near(*factor, divides ? std::sqrt(2.0f) : std::sqrt(0.5f))) return false;
  const std::optional<size_t> erf = only_reader(graph, output(graph, first), "Erf");
  if (!erf) return false;
  const std::optional<size_t> add = only_reader(graph, output(graph, *erf), "Add");
  if (!add || float_scalar(graph, other_input(graph.nodes[*add], output(graph, *erf))) != 1.0f) return false;
  const std::optional<size_t> mul = only_reader(graph, output(graph, *add), "Mul");
  if (!mul || other_input(graph.nodes[*mul], output(graph, *add)) != x) return false;
  const std::optional<size_t> half = only_reader(graph, output(graph, *mul), "Mul");
  if (!half || float_scalar(graph, other_input(graph.nodes[*half], output(graph, *mul))) != 0.5f) return false;
  const int32_t y = output(graph, *half);
  if (y < 0 || shape(graph, y) != shape(graph, x)) return false;
  replace(graph, {first, *erf, *add, *mul, *half}, *half, "Gelu", {x}, {});
  return true;
}

// y = x * HardSigmoid(x) with alpha 1/6 and beta 1/2: HardSwish (opset 14).
bool hard_swish_at(EditableGraph& graph, size_t first) {
  const EditableNode& gate = graph.nodes[first];
  if (gate.op_type != "HardSigmoid" || gate.inputs.size() != 1) return false;
  const Attribute* alpha = gate.attribute("alpha");
  const Attribute* beta = gate.attribute("beta");
  if (alpha == nullptr || !near(alpha->f, 1.0f / 6.0f) || (beta != nullptr && beta->f != 0.5f)) return false;
  const int32_t x = gate.inputs[0];
  const std::optional<size_t> mul = only_reader(graph, output(graph, first), "Mul");
  if (!is_float32(graph, x) || !mul || other_input(graph.nodes[*mul], output(graph, first)) != x) return false;
  const int32_t y = output(graph, *mul);
  if (y < 0 || shape(graph, y) != shape(graph, x)) return false;
  replace(graph, {first, *mul}, *mul, "HardSwish", {x}, {});
  return true;
}

}  // namespace

size_t name_decomposed_ops(EditableGraph& graph) {
  size_t changed = 0;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (graph.nodes[n].removed) continue;
    if ((graph.opset >= 17 && layer_norm_at(graph, n)) || (graph.opset >= 20 && gelu_at(graph, n)) ||
        (graph.opset >= 14 && hard_swish_at(graph, n))) {
      ++changed;
    }
  }
  return changed;
}

}  // namespace plugrt::placement
