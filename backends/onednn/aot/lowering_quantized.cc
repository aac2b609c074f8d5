// SPDX-License-Identifier: Apache-2.0
// ONNX's QLinearConv and QLinearMatMul lowered to oneDNN's int8 convolution and matmul,
// and QuantizeLinear and DequantizeLinear (per tensor or per axis) to exact steps of the
// plan.
// oneDNN computes them to ONNX's definition only in one form, so that is all this takes:
// uint8 or int8 activations with one zero point each (oneDNN's src and dst zero points),
// int8 constant weights whose zero point is 0 (oneDNN's int8 convolution has no weight
// zero point), float32 scales (the weights' per tensor or per output channel, which
// become the requantization multipliers: oneDNN's output scales) and an int32 bias.
// The rest (uint8 weights, weights with a zero point, scales or zero points computed at
// run time) stays on portable.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "aot/lowering.h"

namespace plugrt::onednn {

namespace {

using blob::OpKind;

bool is_8bit(ir::DType dtype) { return dtype == ir::DType::UInt8 || dtype == ir::DType::Int8; }

const char* dtype_name(ir::DType dtype) {
  return dtype == ir::DType::UInt8 ? "uint8" : dtype == ir::DType::Int8 ? "int8" : "another type";
}

/// The bytes of a constant of `element_size`-byte elements and `elements` elements (empty
/// when it is not one).
std::vector<uint8_t> constant_bytes(const GraphView& graph, int32_t value, size_t element_size) {
  if (!graph.is_constant(value)) return {};
  const auto* data = graph.value(value).data();
  const int64_t count = num_elements(graph.shape(value));
  if (data == nullptr || count < 1 || data->size() != static_cast<size_t>(count) * element_size) return {};
  return std::vector<uint8_t>(data->begin(), data->end());
}

/// The one element of an 8-bit constant of type `dtype`, as int32; absent value: 0.
std::string zero_point(const GraphView& graph, int32_t value, ir::DType dtype, const char* what, int32_t* out) {
  *out = 0;
  if (value == -1) return "";
  if (!graph.is_constant(value)) return std::string(what) + " is not a constant";
  if (graph.value(value).dtype() != dtype) return std::string(what) + " is not " + dtype_name(dtype);
  const std::vector<uint8_t> bytes = constant_bytes(graph, value, 1);
  if (bytes.size() != 1 || graph.shape(value).size() > 1) return std::string(what) + " is not one element";
  *out = dtype == ir::DType::Int8 ? static_cast<int32_t>(static_cast<int8_t>(bytes[0])) : bytes[0];
  return "";
}

}  // namespace

std::string Lowering::check_quantized_activation(int32_t value, const char* role) const {
  if (!graph_.valid(value)) return std::string("the ") + role + " is missing";
  if (graph_.is_constant(value)) return std::string("the ") + role + " is a constant";
  if (!is_8bit(graph_.value(value).dtype())) return std::string("the ") + role + " is not uint8 or int8";
  const std::vector<int64_t> shape = graph_.shape(value);
  if (shape.empty() || shape.size() > 12) return std::string("the ") + role + " has an unsupported rank";
  for (int64_t dim : shape) {
    if (dim < 1 || dim > (std::numeric_limits<int32_t>::max)())
      return std::string("the ") + role + " has an empty dimension";
  }
  if (num_elements(shape) > (int64_t{1} << 40)) return std::string("the ") + role + " is too large";
  return "";
}

int32_t Lowering::add_typed_constant(std::vector<int64_t> dims, blob::DataType dtype, std::vector<uint8_t> bytes,
                                     int32_t source) {
  Tensor tensor;
  tensor.dims = dnnl_dims(dims);
  tensor.dtype = dtype;
  tensor.bytes = std::move(bytes);
  tensor.constant = true;
  tensor.source = source;
  list_.tensors.push_back(std::move(tensor));
  return static_cast<int32_t>(list_.tensors.size() - 1);
}

std::string Lowering::read_requantization(const ir::Node& node, int a_scale, int a_zero_point, int b_scale,
                                          int b_zero_point, int y_scale, int y_zero_point, int64_t channels,
                                          Op* op) const {
  const int32_t a = GraphView::input(node, 0), y = GraphView::output(node, 0);
  const int32_t b = GraphView::input(node, 3);
  auto scalar = [&](int index, const char* what, float* out) -> std::string {
    const std::optional<float> value = graph_.scalar(GraphView::input(node, static_cast<size_t>(index)));
    if (!value) return std::string(what) + " is not a float32 constant of one element";
    *out = *value;
    return "";
  };
  float as = 0, ys = 0;
  if (std::string why = scalar(a_scale, "the input's scale", &as); !why.empty()) return why;
  if (std::string why = scalar(y_scale, "y_scale", &ys); !why.empty()) return why;
  const int32_t bs = GraphView::input(node, static_cast<size_t>(b_scale));
  const std::vector<float> weight_scales = graph_.is_constant(bs) ? graph_.floats(bs) : std::vector<float>{};
  const std::vector<int64_t> bs_shape = graph_.shape(bs);
  const bool per_channel = bs_shape.size() == 1 && bs_shape[0] == channels && channels > 1;
  if (weight_scales.empty() || !(weight_scales.size() == 1 || per_channel) || bs_shape.size() > 1) {
    return "the weights' scale is not a float32 constant of one or " + std::to_string(channels) + " elements";
  }
  // The weights' zero point: absent, or zeros (one, or one per channel) of their type.
  const int32_t bz = GraphView::input(node, static_cast<size_t>(b_zero_point));
  if (bz != -1) {
    if (!graph_.is_constant(bz) || graph_.value(bz).dtype() != graph_.value(b).dtype())
      return "the weights' zero point is not a constant of the weights' type";
    const std::vector<uint8_t> bytes = constant_bytes(graph_, bz, 1);
    if (bytes.empty()) return "the weights' zero point has no data";
    for (uint8_t v : bytes) {
      if (v != 0) return "the weights' zero point is not 0 (oneDNN takes symmetric int8 weights only)";
    }
  }
  if (GraphView::input(node, static_cast<size_t>(y_zero_point)) == -1) return "y_zero_point is missing";
  const ir::DType a_type = graph_.value(a).dtype(), y_type = graph_.value(y).dtype();
  if (std::string why = zero_point(graph_, GraphView::input(node, static_cast<size_t>(a_zero_point)), a_type,
                                   "the input's zero point", &op->src_zero_point);
      !why.empty()) {
    return why;
  }
  if (std::string why = zero_point(graph_, GraphView::input(node, static_cast<size_t>(y_zero_point)), y_type,
                                   "y_zero_point", &op->dst_zero_point);
      !why.empty()) {
    return why;
  }
  // As ONNX's reference (and the portable kernel): x_scale * w_scale / y_scale in float32.
  op->scales.clear();
  for (float w : weight_scales) {
    const float ab = as * w;
    const float m = ab / ys;
    if (!std::isfinite(m)) return "a requantization multiplier is not finite";
    op->scales.push_back(m);
  }
  return "";
}

// ---- QLinearConv ------------------------------------------------------------------------

std::string Lowering::lower_qlinear_conv(const ir::Node& node) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  const int32_t x = GraphView::input(node, 0), w = GraphView::input(node, 3), b = GraphView::input(node, 8);
  const int32_t y = GraphView::output(node, 0);
  if (std::string why = check_quantized_activation(x, "input"); !why.empty()) return why;
  if (std::string why = check_quantized_activation(y, "output"); !why.empty()) return why;
  const std::vector<int64_t> xs = graph_.shape(x);
  if (xs.size() < 3 || xs.size() > 5) return "only 1-D, 2-D and 3-D convolutions are taken";
  if (!graph_.is_constant(w) || graph_.value(w).dtype() != ir::DType::Int8) {
    return "the weights are not an int8 constant (oneDNN's int8 convolution takes int8 weights only)";
  }
  ConvGeometry geometry;
  if (std::string why = read_conv_geometry(node, xs, w, y, &geometry); !why.empty()) return why;
  const std::vector<int64_t> ws = graph_.shape(w);
  const int64_t out_channels = geometry.out_channels;
  Op quantization;
  if (std::string why = read_requantization(node, 1, 2, 4, 5, 6, 7, out_channels, &quantization); !why.empty()) {
    return why;
  }
  std::vector<uint8_t> weights = constant_bytes(graph_, w, 1);
  if (weights.empty()) return "the weights' data does not match their shape";
  std::vector<int32_t> inputs = {activation(x), add_typed_constant(ws, blob::DataType::S8, std::move(weights), w)};
  if (b != -1) {
    std::vector<uint8_t> bias = constant_bytes(graph_, b, 4);
    if (graph_.value(b).dtype() != ir::DType::Int32 || graph_.shape(b) != std::vector<int64_t>{out_channels} ||
        bias.empty()) {
      return "the bias is not an int32 constant of " + std::to_string(out_channels) + " elements";
    }
    inputs.push_back(add_typed_constant({out_channels}, blob::DataType::S32, std::move(bias), b));
  }
  const int32_t out = activation(y);  // typed as the graph's value
  Op& op = add(OpKind::QuantizedConvolution, node, std::move(inputs), {out});
  set_conv_geometry(geometry, &op);
  op.scales = std::move(quantization.scales);
  op.src_zero_point = quantization.src_zero_point;
  op.dst_zero_point = quantization.dst_zero_point;
  return "";
}

// ---- QLinearMatMul ------------------------------------------------------------------------

std::string Lowering::lower_qlinear_matmul(const ir::Node& node) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 3), y = GraphView::output(node, 0);
  if (std::string why = check_quantized_activation(a, "input A"); !why.empty()) return why;
  if (std::string why = check_quantized_activation(y, "output"); !why.empty()) return why;
  if (!graph_.is_constant(b) || graph_.value(b).dtype() != ir::DType::Int8) {
    return "B is not an int8 constant (oneDNN's int8 matmul is taken with int8 constant weights only)";
  }
  const std::vector<int64_t> as = graph_.shape(a), bs = graph_.shape(b);
  if (as.size() < 2 || as.size() > 6 || bs.size() != 2) return "only A of rank 2 to 6 and a 2-D B are taken";
  if (as.back() != bs[0]) return "A and B do not agree on K";
  std::vector<int64_t> expected = as;
  expected.back() = bs[1];
  if (graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);
  Op quantization;
  if (std::string why = read_requantization(node, 1, 2, 4, 5, 6, 7, bs[1], &quantization); !why.empty()) return why;
  std::vector<uint8_t> weights = constant_bytes(graph_, b, 1);
  if (weights.empty()) return "B's data does not match its shape";
  std::vector<int64_t> b_dims(as.size() - 2, 1);
  b_dims.insert(b_dims.end(), bs.begin(), bs.end());
  const int32_t tb = add_typed_constant(b_dims, blob::DataType::S8, std::move(weights), b);
  const int32_t out = activation(y);  // typed as the graph's value
  Op& op = add(OpKind::QuantizedMatMul, node, {activation(a), tb}, {out});
  op.scales = std::move(quantization.scales);
  op.src_zero_point = quantization.src_zero_point;
  op.dst_zero_point = quantization.dst_zero_point;
  return "";
}

// ---- QuantizeLinear, DequantizeLinear -------------------------------------------------------

std::string Lowering::lower_quantize_linear(const ir::Node& node, bool quantize) {
  // x, x_scale / y_scale, optional zero point
  const int32_t x = GraphView::input(node, 0), zero = GraphView::input(node, 2), y = GraphView::output(node, 0);
  if (std::string why = quantize ? check_activation(x, "input") : check_quantized_activation(x, "input");
      !why.empty()) {
    return why;
  }
  if (std::string why = quantize ? check_quantized_activation(y, "output") : check_activation(y, "output");
      !why.empty()) {
    return why;
  }
  if (graph_.shape(x) != graph_.shape(y)) return "the output's shape is not the input's";
  if (GraphView::int_attribute(node, "block_size", 0) != 0) return "blocked quantization is not taken";
  const ir::DType quantized = graph_.value(quantize ? y : x).dtype();
  // Without a zero point QuantizeLinear's output is uint8.
  if (quantize && zero == -1 && quantized != ir::DType::UInt8) return "the output is not uint8 without a zero point";
  Op parameters;
  if (std::string why = read_linear_quantization(node, quantized, quantize, &parameters); !why.empty()) return why;
  const int32_t in = activation(x), out = activation(y);  // typed as the graph's values
  Op& op = add(quantize ? OpKind::Quantize : OpKind::Dequantize, node, {in}, {out});
  op.scales = std::move(parameters.scales);
  op.zero_points = std::move(parameters.zero_points);
  op.axis = parameters.axis;
  op.src_zero_point = parameters.src_zero_point;
  op.dst_zero_point = parameters.dst_zero_point;
  return "";
}

std::string Lowering::read_linear_quantization(const ir::Node& node, ir::DType quantized, bool quantize, Op* op) const {
  const std::optional<float> s = graph_.scalar(GraphView::input(node, 1));
  if (!s) return read_per_axis_quantization(node, quantized, op);
  if (!std::isfinite(*s) || *s == 0.0f) return "the scale is zero or not finite";
  int32_t zero_value = 0;
  if (std::string why = zero_point(graph_, GraphView::input(node, 2), quantized, "the zero point", &zero_value);
      !why.empty()) {
    return why;
  }
  op->scales = {*s};
  (quantize ? op->dst_zero_point : op->src_zero_point) = zero_value;
  return "";
}

/// Per axis: a 1-D float32 constant scale of one element per index of the axis, and a
/// zero point of the same shape (or none: zeros).
std::string Lowering::read_per_axis_quantization(const ir::Node& node, ir::DType quantized, Op* op) const {
  const int32_t x = GraphView::input(node, 0), scale = GraphView::input(node, 1), zero = GraphView::input(node, 2);
  const std::vector<int64_t> xs = graph_.shape(x), scale_shape = graph_.shape(scale);
  if (!graph_.is_constant(scale) || graph_.value(scale).dtype() != ir::DType::Float32 || scale_shape.size() != 1) {
    return "the scale is not a float32 constant of one element or one dimension";
  }
  const std::optional<size_t> axis = normalize_axis(GraphView::int_attribute(node, "axis", 1), xs.size());
  if (!axis) return "the axis is out of range";
  const std::vector<float> scales = graph_.floats(scale);
  if (scale_shape[0] != xs[*axis] || scales.size() != static_cast<size_t>(xs[*axis])) {
    return "the scale has not one element per index of axis " + std::to_string(*axis);
  }
  for (float s : scales) {
    if (!std::isfinite(s) || s == 0.0f) return "a scale is zero or not finite";
  }
  std::vector<int32_t> zero_points(scales.size(), 0);
  if (zero != -1) {
    if (!graph_.is_constant(zero) || graph_.value(zero).dtype() != quantized || graph_.shape(zero) != scale_shape) {
      return std::string("the zero point is not a ") + dtype_name(quantized) + " constant of the scale's shape";
    }
    const std::vector<uint8_t> bytes = constant_bytes(graph_, zero, 1);
    if (bytes.size() != scales.size()) return "the zero point has no data";
    for (size_t i = 0; i < bytes.size(); ++i) {
      zero_points[i] = quantized == ir::DType::Int8 ? static_cast<int8_t>(bytes[i]) : bytes[i];
    }
  }
  op->scales = scales;
  op->zero_points = std::move(zero_points);
  op->axis = static_cast<int32_t>(*axis);
  return "";
}

}  // namespace plugrt::onednn
