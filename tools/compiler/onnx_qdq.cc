// SPDX-License-Identifier: Apache-2.0
// QDQ groups to ONNX's quantized operators. A model quantized in QDQ form (what ONNX
// Runtime's static quantizer and PyTorch's exporter write) computes a convolution as
//   DequantizeLinear(x_q) -> Conv(., DequantizeLinear(w_q), [DequantizeLinear(b_q)]) ->
//   QuantizeLinear -> y_q
// which, read literally, dequantizes the weights at import (folding) and runs a float32
// convolution. This pass rewrites such a group into one QLinearConv (and MatMul into
// QLinearMatMul), as ONNX Runtime's QDQ transformer does, so the group reaches the
// int8 kernels. The result is the integer operator's: the accumulator requantized by
// x_scale * w_scale / y_scale, where the literal graph rounds a float32 sum; the two
// agree but on ties.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

namespace {

/// The one float32 element of a constant, or false.
bool scalar_float(const std::map<std::string, Tensor>& constants, const std::string& name, float* out) {
  auto found = constants.find(name);
  if (found == constants.end() || found->second.dtype != DType::kFloat32 || found->second.bytes.size() != 4) {
    return false;
  }
  std::memcpy(out, found->second.bytes.data(), 4);
  return true;
}

bool is_8bit(DType dtype) { return dtype == DType::kUInt8 || dtype == DType::kInt8; }

/// A DequantizeLinear's inputs and axis.
struct Dequantize {
  const onnx::NodeProto* node = nullptr;
  std::string value, scale, zero_point;
  int64_t axis = 1;
};

/// Whether `w` dequantizes weights as a QLinear op takes them: an 8-bit constant, a
/// float32 scale of one element or of one per output channel (axis 0 of Conv's weights,
/// axis 1 of MatMul's 2-D B, as many as the weights have there), and a zero point of the
/// weights' type with as many elements as the scale. `channels`: the scale's elements.
bool quantized_weights(const Dequantize& w, bool conv, const std::map<std::string, Tensor>& constants,
                       size_t* channels) {
  auto weights = constants.find(w.value), scale = constants.find(w.scale), zero = constants.find(w.zero_point);
  if (weights == constants.end() || scale == constants.end() || zero == constants.end()) return false;
  if (!is_8bit(weights->second.dtype) || zero->second.dtype != weights->second.dtype) return false;
  if (scale->second.dtype != DType::kFloat32 || scale->second.shape.size() > 1) return false;
  *channels = scale->second.bytes.size() / 4;
  if (*channels == 0 || zero->second.bytes.size() != *channels) return false;
  if (*channels == 1) return true;
  const std::vector<int64_t>& shape = weights->second.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t axis = w.axis < 0 ? w.axis + rank : w.axis;
  if (conv ? (rank < 1 || axis != 0) : (rank != 2 || axis != 1)) return false;
  return shape[static_cast<size_t>(axis)] == static_cast<int64_t>(*channels);
}

}  // namespace

size_t fuse_qdq_groups(onnx::GraphProto* graph, const std::map<std::string, Tensor>& constants,
                       const std::set<std::string>& graph_outputs) {
  std::map<std::string, const onnx::NodeProto*> producer;
  std::map<std::string, int> readers;
  for (const onnx::NodeProto& node : graph->node()) {
    for (const std::string& output : node.output()) producer[output] = &node;
    for (const std::string& input : node.input()) ++readers[input];
  }
  auto dequantize = [&](const std::string& value, Dequantize* dq) {
    auto found = producer.find(value);
    if (found == producer.end()) return false;
    const onnx::NodeProto& node = *found->second;
    if (node.op_type() != "DequantizeLinear" || !node.domain().empty() || node.input_size() < 2) return false;
    dq->node = &node;
    dq->value = node.input(0);
    dq->scale = node.input(1);
    dq->zero_point = node.input_size() > 2 ? node.input(2) : "";
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == "axis") dq->axis = a.i();
    }
    return true;
  };
  // The zero point carries the type (QLinearConv and QLinearMatMul need it given).
  auto element_type = [&](const Dequantize& dq, DType* out) {
    auto found = constants.find(dq.zero_point);
    if (found == constants.end()) return false;
    *out = found->second.dtype;
    return true;
  };
  size_t fused = 0;
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    const bool conv = node.op_type() == "Conv", matmul = node.op_type() == "MatMul";
    if ((!conv && !matmul) || !node.domain().empty() || node.output_size() != 1) continue;
    if (node.input_size() < 2 || (matmul && node.input_size() != 2) || node.input_size() > 3) continue;
    // The output: read by exactly one QuantizeLinear, per tensor, and by nothing else.
    const std::string& y = node.output(0);
    if (graph_outputs.count(y) != 0 || readers[y] != 1) continue;
    const onnx::NodeProto* quantize = nullptr;
    for (const onnx::NodeProto& other : graph->node()) {
      if (other.input_size() > 0 && other.input(0) == y) quantize = &other;
    }
    if (quantize == nullptr || quantize->op_type() != "QuantizeLinear" || !quantize->domain().empty() ||
        quantize->input_size() != 3 || quantize->output_size() != 1) {
      continue;
    }
    float y_scale = 0;
    auto y_zero = constants.find(quantize->input(2));
    if (!scalar_float(constants, quantize->input(1), &y_scale) || y_zero == constants.end() ||
        !is_8bit(y_zero->second.dtype) || y_zero->second.bytes.size() != 1) {
      continue;
    }
    // The activation: a per-tensor DequantizeLinear of an 8-bit value.
    Dequantize x, w;
    float x_scale = 0;
    DType x_type = DType::kUndefined;
    if (!dequantize(node.input(0), &x) || !scalar_float(constants, x.scale, &x_scale) || x.zero_point.empty() ||
        constants.count(x.zero_point) == 0 || constants.at(x.zero_point).bytes.size() != 1 ||
        !element_type(x, &x_type) || !is_8bit(x_type)) {
      continue;
    }
    // The weights: a DequantizeLinear of an 8-bit constant, per tensor or per output
    // channel (axis 0 of Conv's weights, axis 1 of MatMul's 2-D B).
    size_t channels = 0;
    if (!dequantize(node.input(1), &w) || w.zero_point.empty() || !quantized_weights(w, conv, constants, &channels)) {
      continue;
    }
    const Tensor& w_scale = constants.at(w.scale);
    // The bias: absent, or an int32 constant dequantized with zero point 0 by exactly
    // x_scale * w_scale (so that the integer bias is the group's).
    std::string bias;
    if (conv && node.input_size() == 3 && !node.input(2).empty()) {
      Dequantize b;
      if (!dequantize(node.input(2), &b) || constants.count(b.value) == 0 ||
          constants.at(b.value).dtype != DType::kInt32 || constants.count(b.scale) == 0) {
        continue;
      }
      if (!b.zero_point.empty()) {
        auto zero = constants.find(b.zero_point);
        if (zero == constants.end()) continue;
        bool zeros = true;
        for (uint8_t byte : zero->second.bytes) zeros &= byte == 0;
        if (!zeros) continue;
      }
      const Tensor& b_scale = constants.at(b.scale);
      if (b_scale.dtype != DType::kFloat32) continue;
      const size_t count = b_scale.bytes.size() / 4;
      if (count != 1 && count != channels) continue;
      bool same = true;
      for (size_t c = 0; c < std::max(count, channels); ++c) {
        float bs = 0, ws = 0;
        std::memcpy(&bs, b_scale.bytes.data() + (count == 1 ? 0 : c) * 4, 4);
        std::memcpy(&ws, w_scale.bytes.data() + (channels == 1 ? 0 : c) * 4, 4);
        same &= bs == x_scale * ws;
      }
      if (!same) continue;
      bias = b.value;
    }
    // One QLinear node in the Conv's place, writing the QuantizeLinear's output.
    const std::string y_q = quantize->output(0);
    const std::string y_scale_name = quantize->input(1), y_zero_name = quantize->input(2);
    node.set_op_type(conv ? "QLinearConv" : "QLinearMatMul");
    node.clear_input();
    for (const std::string& input :
         {x.value, x.scale, x.zero_point, w.value, w.scale, w.zero_point, y_scale_name, y_zero_name}) {
      node.add_input(input);
    }
    if (!bias.empty()) node.add_input(bias);
    node.set_output(0, y_q);
    // The QuantizeLinear now reads nothing and writes a name no one else does.
    auto* dead = const_cast<onnx::NodeProto*>(quantize);
    dead->set_input(0, "");
    dead->set_output(0, y_q + "/fused_into_" + node.op_type());
    readers[y] = 0;
    ++fused;
  }
  return fused;
}

}  // namespace plugrt::compiler::onnx_import
