// SPDX-License-Identifier: Apache-2.0
#include "qdq_writer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace plugrt::quantizer {

ActivationParams activation_params(Range range, bool int8) {
  const double qmin = int8 ? -128 : 0, qmax = int8 ? 127 : 255;
  const double rmin = std::min<double>(range.min, 0), rmax = std::max<double>(range.max, 0);
  ActivationParams params;
  params.scale = static_cast<float>((rmax - rmin) / (qmax - qmin));
  if (!(params.scale > 0) || !std::isfinite(params.scale)) params.scale = 1;
  params.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(qmin - rmin / params.scale), qmin, qmax));
  return params;
}

QuantizedWeights quantize_weights(const FloatConstant& weights, size_t axis) {
  const int64_t channels = weights.shape[axis];
  int64_t inner = 1;
  for (size_t d = axis + 1; d < weights.shape.size(); ++d) inner *= weights.shape[d];
  const size_t count = weights.values.size();
  QuantizedWeights out{std::vector<int8_t>(count), std::vector<float>(static_cast<size_t>(channels), 0.0f)};
  auto channel = [&](size_t index) { return static_cast<size_t>((static_cast<int64_t>(index) / inner) % channels); };
  for (size_t i = 0; i < count; ++i)
    out.scales[channel(i)] = std::max(out.scales[channel(i)], std::fabs(weights.values[i]));
  for (float& scale : out.scales) scale = scale > 0 ? scale / 127.0f : 1.0f;
  for (size_t i = 0; i < count; ++i) {
    const float q = std::nearbyint(weights.values[i] / out.scales[channel(i)]);
    out.values[i] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
  }
  return out;
}

namespace {

/// The rewrite of one graph: what is quantized and the nodes written so far.
class QdqWriter {
 public:
  QdqWriter(onnx::GraphProto* graph, const std::vector<Candidate>& chosen, const std::map<std::string, Range>& ranges,
            bool int8)
      : graph_(graph), int8_(int8) {
    for (const Candidate& c : chosen) {
      by_node_[c.node] = &c;
      if (c.relu >= 0) folded_.insert(static_cast<size_t>(c.relu));
      outputs_.insert(c.output);
      inputs_.insert(c.input);
      params_[c.input] = activation_params(ranges.at(c.input), int8);
      params_[c.output] = activation_params(ranges.at(c.output), int8);
    }
  }

  void write() {
    for (const onnx::ValueInfoProto& input : graph_->input()) requantize_input(input.name());
    for (int i = 0; i < graph_->node_size(); ++i) {
      const size_t index = static_cast<size_t>(i);
      if (folded_.count(index) != 0) continue;
      auto chosen = by_node_.find(index);
      if (chosen != by_node_.end()) {
        write_candidate(*chosen->second);
        continue;
      }
      nodes_.push_back(graph_->node(i));
      for (const std::string& output : graph_->node(i).output()) requantize_input(output);
    }
    graph_->clear_node();
    for (onnx::NodeProto& node : nodes_) *graph_->add_node() = std::move(node);
  }

 private:
  /// What a chosen node reads for `tensor`: the DequantizeLinear's output.
  std::string dequantized(const std::string& tensor) const {
    return outputs_.count(tensor) != 0 ? tensor : tensor + "_dequantized";
  }

  /// A Q/DQ pair after `tensor`, a chosen node's input that no chosen node writes.
  void requantize_input(const std::string& tensor) {
    if (inputs_.count(tensor) == 0 || outputs_.count(tensor) != 0) return;
    write_qdq(tensor, tensor, dequantized(tensor));
  }

  /// QuantizeLinear(source) -> DequantizeLinear -> `output`, at `tensor`'s parameters.
  void write_qdq(const std::string& tensor, const std::string& source, const std::string& output) {
    const ActivationParams& p = params_.at(tensor);
    const std::string scale = tensor + "_scale", zero = tensor + "_zero_point", q = tensor + "_quantized";
    add_float_initializer(graph_, scale, {p.scale}, {});
    const int8_t zero_8 = static_cast<int8_t>(p.zero_point);
    const uint8_t zero_u8 = static_cast<uint8_t>(p.zero_point);
    add_initializer(graph_, zero, int8_ ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8, {},
                    int8_ ? static_cast<const void*>(&zero_8) : static_cast<const void*>(&zero_u8), 1);
    nodes_.push_back(make_node("QuantizeLinear", {source, scale, zero}, {q}, tensor + "_QuantizeLinear"));
    nodes_.push_back(make_node("DequantizeLinear", {q, scale, zero}, {output}, tensor + "_DequantizeLinear"));
  }

  /// DequantizeLinear of the node's int8 weights, per channel of `axis`; returns its output.
  std::string write_weights(const Candidate& c, const FloatConstant& weights, size_t axis, std::vector<float>* scales) {
    const QuantizedWeights q = quantize_weights(weights, axis);
    const std::string prefix = c.node_output + "_weight";
    const std::vector<int64_t> channels{weights.shape[axis]};
    add_initializer(graph_, prefix + "_quantized", onnx::TensorProto::INT8, weights.shape, q.values.data(),
                    q.values.size());
    add_float_initializer(graph_, prefix + "_scale", q.scales, channels);
    const std::vector<int8_t> zeros(q.scales.size(), 0);
    add_initializer(graph_, prefix + "_zero_point", onnx::TensorProto::INT8, channels, zeros.data(), zeros.size());
    onnx::NodeProto dq =
        make_node("DequantizeLinear", {prefix + "_quantized", prefix + "_scale", prefix + "_zero_point"},
                  {prefix + "_dequantized"}, prefix + "_DequantizeLinear");
    set_int_attribute(&dq, "axis", static_cast<int64_t>(axis));
    nodes_.push_back(dq);
    *scales = q.scales;
    return prefix + "_dequantized";
  }

  /// DequantizeLinear of the int32 bias at x_scale * w_scale; returns its output.
  std::string write_bias(const Candidate& c, const FloatConstant& bias, float x_scale,
                         const std::vector<float>& w_scales) {
    const std::string prefix = c.node_output + "_bias";
    std::vector<int32_t> values(bias.values.size()), zeros(bias.values.size(), 0);
    std::vector<float> scales(bias.values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      scales[i] = x_scale * w_scales[i];
      const double q = std::nearbyint(static_cast<double>(bias.values[i]) / scales[i]);
      values[i] = static_cast<int32_t>(
          std::clamp<double>(q, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
    }
    add_initializer(graph_, prefix + "_quantized", onnx::TensorProto::INT32, bias.shape, values.data(),
                    values.size() * 4);
    add_float_initializer(graph_, prefix + "_scale", scales, bias.shape);
    add_initializer(graph_, prefix + "_zero_point", onnx::TensorProto::INT32, bias.shape, zeros.data(),
                    zeros.size() * 4);
    onnx::NodeProto dq =
        make_node("DequantizeLinear", {prefix + "_quantized", prefix + "_scale", prefix + "_zero_point"},
                  {prefix + "_dequantized"}, prefix + "_DequantizeLinear");
    set_int_attribute(&dq, "axis", 0);
    nodes_.push_back(dq);
    return prefix + "_dequantized";
  }

  void write_candidate(const Candidate& c) {
    onnx::NodeProto node = graph_->node(static_cast<int>(c.node));
    FloatConstant weights, bias;
    float_initializer(*graph_, node.input(1), &weights);
    const bool conv = c.op_type == "Conv";
    std::vector<float> w_scales;
    node.set_input(0, dequantized(c.input));
    node.set_input(1, write_weights(c, weights, conv ? 0 : 1, &w_scales));
    if (conv && node.input_size() == 3 && float_initializer(*graph_, node.input(2), &bias)) {
      node.set_input(2, write_bias(c, bias, params_.at(c.input).scale, w_scales));
    }
    node.set_output(0, c.output + "_prequant");
    nodes_.push_back(node);
    write_qdq(c.output, c.output + "_prequant", c.output);
  }

  onnx::GraphProto* graph_;
  bool int8_;
  std::map<size_t, const Candidate*> by_node_;
  std::set<size_t> folded_;
  std::set<std::string> inputs_, outputs_;
  std::map<std::string, ActivationParams> params_;
  std::vector<onnx::NodeProto> nodes_;
};

}  // namespace

void write_qdq(onnx::GraphProto* graph, const std::vector<Candidate>& chosen,
               const std::map<std::string, Range>& ranges, bool int8_activations) {
  QdqWriter(graph, chosen, ranges, int8_activations).write();
  drop_unread_initializers(graph);
}

}  // namespace plugrt::quantizer
